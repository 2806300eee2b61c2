/*
 * libFuzzer target for the record processing chain (convert.h).  The first
 * byte picks the mode:
 * - below 0xf0: a record, run through one of the chains below (byte % N)
 *   with a record cap from the second byte.  Checks: the output never
 *   passes the cap; it is valid UTF-8 (malformed input becomes U+FFFD);
 *   when the last step writes JSON and nothing was cut, it is one JSON
 *   value (jackson_valid), so a consumer can always parse it.
 * - 0xf0 and above: "PATTERN\nLINE": a Java matchPattern translated and
 *   compiled, then matched against LINE; and PATTERN as ADDMETADATA's
 *   metadata JSON.  Nothing may crash or leak, whatever the pattern.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/jackson.h"
#include "base/util.h"
#include "records/convert.h"
#include "records/convert_int.h"
#include "records/logparse.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

struct setup {
	struct convert_opts	 o;
	int			 delim;
	bool			 keep;
	bool			 json;	/* the last step writes JSON */
};

static const struct setup setups[] = {
	{ { .options = "CSVTOJSON", .csv_fields = "a, b, a, c" }, '\n', false,
	  true },
	{ { .options = "CSVTOJSON", .csv_fields = "[\"x\", \"y\"]",
	    .csv_delimiter = "\\;\\s\xc3\xa9", .csv_json = "PRETTYPRINT" },
	  '|', true, false },
	{ { .options = "LOGTOJSON", .log_format = "COMBINEDAPACHELOG" }, '\n',
	  false, true },
	{ { .options = "LOGTOJSON", .log_format = "APACHEERRORLOG",
	    .log_json = "PRETTYPRINT" }, '\n', false, true },
	{ { .options = "LOGTOJSON", .log_format = "SYSLOG" }, '\n', false,
	  true },
	{ { .options = "LOGTOJSON", .log_format = "RFC3339SYSLOG",
	    .log_pattern = "(\\S+) (?<b>.*?)\\b(\\w*)$",
	    .log_fields = "a, b, c" }, '\n', false, true },
	{ { .options = "ADDMETADATA",
	    .meta_metadata = "{\"k\": [1, 2.5e3, {\"z\": null}]}",
	    .meta_fields = "hostname, path, filename, offset, timestamp",
	    .meta_json = "PRETTYPRINT" }, '\n', false, true },
	{ { .options = "ADDBRACKETS, CSVTOJSON, ADDMETADATA",
	    .csv_fields = "q" }, '\n', true, false },
	{ { .options = "LOGTOJSON, ADDMETADATA, ADDBRACKETS",
	    .log_format = "COMMONAPACHELOG" }, '\n', false, false },
};

static struct convert	*chains[ARRAY_SIZE(setups)];

static void
build_all(void)
{
	char	 err[300];
	size_t	 i;

	for (i = 0; i < ARRAY_SIZE(setups); i++)
		if (convert_new(&setups[i].o, setups[i].delim, setups[i].keep,
		    NULL, "fuzz", &chains[i], NULL, err, sizeof(err)) != 0 ||
		    chains[i] == NULL)
			abort();
}

static void
one_record(const uint8_t *data, size_t size)
{
	const struct setup	*s;
	struct convert		*c;
	struct buf		 out;
	char			 why[200];
	size_t			 max;
	bool			 cut;

	s = &setups[data[0] % ARRAY_SIZE(setups)];
	c = chains[data[0] % ARRAY_SIZE(setups)];
	max = size > 1 ? 16 + (size_t)data[1] * 64 : 1u << 20;
	data += MIN(size, 2);
	size -= MIN(size, 2);
	buf_init(&out);
	if (convert_apply(c, (const char *)data, size, "/var/log/f.log", 7, max,
	    &out, &cut, why, sizeof(why)) == CONVERT_SEND) {
		if (out.len > max)
			abort();
		if (convert_utf8_valid(out.data, out.len) != out.len)
			abort();
		/* The delimiter dropped from JSON is '\n' or '|': still a
		 * value, one '\n' kept is a blank after it. */
		if (s->json && !cut && !jackson_valid(out.data, why,
		    sizeof(why)))
			abort();
	}
	buf_cleanup(&out);
}

static void
one_pattern(const uint8_t *data, size_t size)
{
	struct logparse	*lp;
	const size_t	*sp;
	const char	*nl;
	char		*pat, err[300];

	data++;
	size--;
	nl = memchr(data, '\n', size);
	pat = xstrndup((const char *)data, nl != NULL ?
	    (size_t)(nl - (const char *)data) : size);
	if (strlen(pat) == (nl != NULL ? (size_t)(nl - (const char *)data) :
	    size) && logparse_new(LP_SYSLOG, pat, &lp, err, sizeof(err)) == 0) {
		if (nl != NULL && convert_utf8_valid(nl + 1, size - (size_t)(nl +
		    1 - (const char *)data)) == size - (size_t)(nl + 1 -
		    (const char *)data))
			(void)logparse_match(lp, nl + 1, size - (size_t)(nl +
			    1 - (const char *)data), &sp);
		logparse_free(lp);
	}
	(void)jackson_valid(pat, err, sizeof(err));
	free(pat);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (chains[0] == NULL)
		build_all();
	if (size == 0)
		return 0;
	if (data[0] >= 0xf0)
		one_pattern(data, size);
	else
		one_record(data, size);
	return 0;
}
