/*
 * Our side of tests/golden/run: the chain of convert.h over records read
 * from standard input, printed as DisAgentChain.java prints the DIS
 * Agent's, so that the two outputs can be compared line by line.
 *
 * chain DELIM REMAIN KEY=VALUE... < records
 *   DELIM: the delimiter as a decimal byte; REMAIN: true or false;
 *   KEY: an agent.ini key (dataProcessingOptions, CSVTOJSON.delimiter...).
 * Output per record: "SEND <hex>", or "SKIP" for a line LOGTOJSON could not
 * parse (what the DIS Agent drops).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "records/convert.h"
#include "convert_keys.h"
#include "base/util.h"

static void
record(struct convert *c, const char *p, size_t n, struct buf *out)
{
	char	 why[200];
	bool	 cut;
	size_t	 i;

	if (convert_apply(c, p, n, "/var/log/app.log", 0, 1u << 20, out, &cut,
	    why, sizeof(why)) != CONVERT_SEND) {
		printf("SKIP\n");
		return;
	}
	printf("SEND ");
	for (i = 0; i < out->len; i++)
		printf("%02x", (unsigned char)out->data[i]);
	printf("\n");
}

int
main(int argc, char **argv)
{
	struct convert_opts	 o;
	struct convert		*c;
	struct buf		 in, out;
	const char		*key;
	char			 err[300], rd[65536];
	size_t			 i, n, start;
	int			 delim;

	if (argc < 3) {
		fprintf(stderr, "usage: chain DELIM REMAIN KEY=VALUE...\n");
		return 2;
	}
	delim = atoi(argv[1]);
	if (convert_opts_from(&o, (const char *const *)argv + 3) != 0) {
		fprintf(stderr, "chain: bad KEY=VALUE argument\n");
		return 2;
	}
	if (convert_new(&o, delim, strcmp(argv[2], "true") == 0, NULL, "golden",
	    &c, &key, err, sizeof(err)) != 0) {
		fprintf(stderr, "chain: %s\n", err);
		return 1;
	}
	buf_init(&in);
	buf_init(&out);
	while ((n = fread(rd, 1, sizeof(rd), stdin)) > 0)
		buf_add(&in, rd, n);
	for (i = start = 0; i < in.len; i++)
		if ((unsigned char)in.data[i] == delim) {
			if (c != NULL)
				record(c, in.data + start, i + 1 - start, &out);
			start = i + 1;
		}
	if (start < in.len && c != NULL)
		record(c, in.data + start, in.len - start, &out);
	buf_cleanup(&in);
	buf_cleanup(&out);
	convert_free(c);
	return 0;
}
