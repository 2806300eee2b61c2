/*
 * Container log lines (ctrlog.h): the CRI and Docker json-file line
 * decoders and the JSON the container records are written in.  Docker's
 * lines are parsed with jansson, which unescapes the text and checks the
 * JSON; CRI's are split at their first three spaces.
 */
#include "config.h"

#include <errno.h>
#include <jansson.h>
#include <string.h>

#include "base/escape.h"
#include "records/ctrlog.h"

const char *
ctrlog_stream_name(int stream)
{
	return stream == CTRLOG_STDERR ? "stderr" : "stdout";
}

static int
stream_of(const char *s, size_t n)
{
	if (n == 6 && memcmp(s, "stdout", 6) == 0)
		return CTRLOG_STDOUT;
	if (n == 6 && memcmp(s, "stderr", 6) == 0)
		return CTRLOG_STDERR;
	return -1;
}

/* Copy a time of n bytes; false when it is empty or too long. */
static bool
time_copy(struct ctrlog_line *out, const char *s, size_t n)
{
	if (n == 0 || n >= sizeof(out->time))
		return false;
	memcpy(out->time, s, n);
	out->time[n] = '\0';
	return true;
}

/* TIME STREAM TAG TEXT; the tag is F or P, maybe followed by ":...". */
static int
decode_cri(const char *line, size_t n, struct ctrlog_line *out)
{
	const char	*end = line + n, *sp1, *sp2, *sp3;

	sp1 = memchr(line, ' ', n);
	if (sp1 == NULL || !time_copy(out, line, (size_t)(sp1 - line)))
		return -EINVAL;
	sp2 = memchr(sp1 + 1, ' ', (size_t)(end - sp1 - 1));
	if (sp2 == NULL)
		return -EINVAL;
	out->stream = stream_of(sp1 + 1, (size_t)(sp2 - sp1 - 1));
	if (out->stream < 0)
		return -EINVAL;
	sp3 = memchr(sp2 + 1, ' ', (size_t)(end - sp2 - 1));
	if (sp3 == NULL) {
		/* "TIME stdout F" is an empty line (CRI-O writes them). */
		sp3 = end;
	}
	if (sp3 == sp2 + 1 || (sp2[1] != 'F' && sp2[1] != 'P') ||
	    (sp3 > sp2 + 2 && sp2[2] != ':'))
		return -EINVAL;
	out->partial = sp2[1] == 'P';
	out->text = sp3 < end ? sp3 + 1 : end;
	out->len = (size_t)(end - out->text);
	return 0;
}

/* {"log":"...","stream":"...","time":"..."} */
static int
decode_docker(const char *line, size_t n, struct buf *scratch,
    struct ctrlog_line *out)
{
	json_t		*o, *log, *st, *tm;
	const char	*s;
	size_t		 len;
	int		 rc = -EINVAL;

	o = json_loadb(line, n, JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES, NULL);
	if (o == NULL)
		return -EINVAL;
	log = json_object_get(o, "log");
	st = json_object_get(o, "stream");
	tm = json_object_get(o, "time");
	if (!json_is_string(log) || !json_is_string(st) || !json_is_string(tm))
		goto out;
	out->stream = stream_of(json_string_value(st), json_string_length(st));
	if (out->stream < 0 || !time_copy(out, json_string_value(tm),
	    json_string_length(tm)))
		goto out;
	s = json_string_value(log);
	len = json_string_length(log);
	out->partial = len == 0 || s[len - 1] != '\n';
	if (!out->partial)
		len--;
	buf_reset(scratch);
	buf_add(scratch, s, len);
	out->text = scratch->data;
	out->len = len;
	rc = 0;
out:
	json_decref(o);
	return rc;
}

int
ctrlog_decode(int fmt, const char *line, size_t n, struct buf *scratch,
    struct ctrlog_line *out)
{
	if (fmt == CTRLOG_AUTO)
		fmt = n > 0 && line[0] == '{' ? CTRLOG_DOCKER : CTRLOG_CRI;
	if (fmt == CTRLOG_DOCKER)
		return decode_docker(line, n, scratch, out);
	return decode_cri(line, n, out);
}

void
ctrlog_json_string(struct buf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	size_t		 i = 0, run, u;

	buf_reserve(b, n + 2);
	buf_addc(b, '"');
	while (i < n) {
		/* The bytes that pass as they are, at once. */
		for (run = i; run < n && p[run] >= 0x20 && p[run] < 0x80 &&
		    p[run] != '"' && p[run] != '\\'; run++)
			;
		buf_add(b, p + i, run - i);
		if ((i = run) == n)
			break;
		if (p[i] >= 0x80) {
			u = esc_utf8_len(p + i, n - i);
			if (u == 0) {
				buf_addstr(b, "\\ufffd");
				u = 1;
			} else
				buf_add(b, p + i, u);
			i += u;
			continue;
		}
		buf_addc(b, '\\');
		switch (p[i]) {
		case '"': case '\\':	buf_addc(b, (char)p[i]); break;
		case '\n':		buf_addc(b, 'n'); break;
		case '\r':		buf_addc(b, 'r'); break;
		case '\t':		buf_addc(b, 't'); break;
		default:
			buf_addstr(b, "u00");
			buf_addc(b, hex[p[i] >> 4]);
			buf_addc(b, hex[p[i] & 15]);
		}
		i++;
	}
	buf_addc(b, '"');
}

void
ctrlog_json_record(struct buf *b, const char *time, int stream,
    const char *text, size_t len)
{
	buf_addstr(b, "{\"time\":");
	ctrlog_json_string(b, time, strlen(time));
	buf_addstr(b, ",\"stream\":\"");
	buf_addstr(b, ctrlog_stream_name(stream));
	buf_addstr(b, "\",\"log\":");
	ctrlog_json_string(b, text, len);
	buf_addc(b, '}');
}
