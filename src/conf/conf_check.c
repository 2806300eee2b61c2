/*
 * The checks of single values (conf_int.h): names, URLs, paths, regular
 * expressions, encodings; each returns NULL or why the value is not valid.
 * And one across flows: two flows that would send one file to one stream
 * twice, when the patterns alone tell (conf_check_overlap).
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <iconv.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/listenaddr.h"
#include "base/re.h"
#include "conf/conf.h"
#include "conf/conf_int.h"
#include "conf/cred.h"
#include "conf/proxyconf.h"
#include "records/mlpreset.h"

/* Whether s is 1..max bytes, all from set (ASCII, whatever the locale). */
bool
conf_charset_ok(const char *s, const char *set, size_t max)
{
	size_t	 n;

	n = strspn(s, set);
	return n > 0 && n <= max && s[n] == '\0';
}

const char *
conf_check_region(const char *s)
{
	if (!conf_charset_ok(s, "abcdefghijklmnopqrstuvwxyz0123456789-", 64))
		return "is not a valid region (1-64 lower-case letters, digits "
		    "or '-')";
	return NULL;
}

const char *
conf_check_id(const char *s)
{
	if (!conf_charset_ok(s, ALNUM "_-", 64))
		return "is not a valid ID (1-64 letters, digits, '_' or '-')";
	return NULL;
}

const char *
conf_check_stream(const char *s)
{
	if (!conf_charset_ok(s, ALNUM "_-", 64))
		return "is not a valid stream name (1-64 letters, digits, "
		    "'_' or '-')";
	return NULL;
}

const char *
conf_check_url(const char *s)
{
	const char	*host;

	if (strncmp(s, "https://", 8) == 0)
		host = s + 8;
	else if (strncmp(s, "http://", 7) == 0)
		host = s + 7;
	else
		host = NULL;
	if (host == NULL || *host == '\0' || *host == '/')
		return "is not an http:// or https:// URL";
	return NULL;
}

/* Printable ASCII without blanks: keys and tokens pasted with a blank or
 * a control character inside fail to sign. */
static bool
graph_only(const char *s)
{
	for (; *s != '\0'; s++)
		if (!isgraph((unsigned char)*s))
			return false;
	return true;
}

/*
 * A value of 168 characters or more is encrypted (decrypted once the file
 * is read, and then checked again).
 */
const char *
conf_check_credential(const char *s)
{
	if (strlen(s) >= CRED_CIPHER_MIN && !cred_looks_encrypted(s))
		return "is 168 characters or more, so it must be a DIS Agent "
		    "encrypted value, but it is not hexadecimal";
	if (strlen(s) >= CRED_CIPHER_MIN || graph_only(s))
		return NULL;
	return "is not a valid key (printable ASCII without blanks)";
}

/* data.password: text, or (168 characters or more) an encrypted value. */
const char *
conf_check_password(const char *s)
{
	if (strlen(s) >= CRED_CIPHER_MIN && !cred_looks_encrypted(s))
		return "is 168 characters or more, so it must be a DIS Agent "
		    "encrypted value, but it is not hexadecimal";
	return cred_text_ok(s) ? NULL : "is not text (UTF-8 without control "
	    "characters)";
}

const char *
conf_check_token(const char *s)
{
	return graph_only(s) ? NULL : "is not a valid token (printable ASCII "
	    "without blanks)";
}

const char *
conf_check_non_proxy(const char *s)
{
	static char	 why[160];
	struct buf	 b;
	int		 rc;

	buf_init(&b);
	rc = proxy_noproxy(s, &b, why, sizeof(why));
	buf_cleanup(&b);
	return rc == 0 ? NULL : why;
}

const char *
conf_check_listen(const char *s)
{
	struct sockaddr_storage	 ss;
	socklen_t		 len;

	return listenaddr_parse(s, &ss, &len);
}

const char *
conf_check_abs_path(const char *s)
{
	size_t	 n = strlen(s);

	if (s[0] != '/')
		return "is not an absolute path";
	if (strstr(s, "//") != NULL || s[n - 1] == '/')
		return "must name files: no empty directory name, no '/' at "
		    "the end";
	return NULL;
}

/* recordDelimiter: one byte, or \n \r \t \0 \\ (the DIS Agent uses the
 * first byte only, so a longer value is a mistake worth reporting). */
const char *
conf_check_delimiter(const char *s)
{
	if (conf_delimiter(s) < 0)
		return "is not one character (or \\n, \\r, \\t, \\0, "
		    "\\\\)";
	return NULL;
}

const char *
conf_check_regex(const char *s)
{
	static char	 why[200];
	struct re_error	 e;

	if (s[0] == '\0' || re_check(s, 0, &e) == 0)
		return NULL;
	snprintf(why, sizeof(why), "is not a valid regular expression (%.99s "
	    "at offset %zu)", e.msg, e.offset);
	return why;
}

/* multiLinePreset: empty, or a preset records/mlpreset.c knows. */
const char *
conf_check_mlpreset(const char *s)
{
	static char	 why[200];
	struct mlpreset	*mp;

	if (s[0] == '\0')
		return NULL;
	if (mlpreset_new(s, &mp, why, sizeof(why)) != 0)
		return "is not a multi-line preset (known: " MLPRESET_NAMES ")";
	mlpreset_free(mp);
	return NULL;
}

/*
 * caFile: a readable file holding at least one PEM certificate (the agent
 * would otherwise retry for ever with "error setting certificate file").
 */
const char *
conf_check_ca_file(const char *s)
{
	static char	 why[200];
	char		 buf[64 * 1024];
	FILE		*fp;
	size_t		 n;
	bool		 pem;

	fp = fopen(s, "r");
	if (fp == NULL) {
		snprintf(why, sizeof(why), "cannot be read: %s",
		    strerror(errno));
		return why;
	}
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	pem = strstr(buf, "-----BEGIN CERTIFICATE-----") != NULL;
	return pem ? NULL : "holds no PEM certificate (-----BEGIN "
	    "CERTIFICATE-----) in its first 64 KiB";
}

/* fileEncoding: something iconv converts to UTF-8 in which '\n' is the
 * single byte 0x0a (lines are split before conversion). */
const char *
conf_check_encoding(const char *s)
{
	iconv_t		 cd;
	char		 in[] = "\n", out[8], *ip = in, *op = out;
	size_t		 il = 1, ol = sizeof(out);

	cd = iconv_open(s, "UTF-8");
	if (cd == (iconv_t)-1)
		return "is not an encoding this system can convert";
	if (iconv(cd, &ip, &il, &op, &ol) == (size_t)-1 ||
	    sizeof(out) - ol != 1 || out[0] != '\n') {
		iconv_close(cd);
		return "is not an ASCII-compatible encoding (lines end in "
		    "a one-byte newline)";
	}
	iconv_close(cd);
	return NULL;
}

int
conf_delimiter(const char *s)
{
	if (s[0] != '\0' && s[1] == '\0')
		return (unsigned char)s[0];
	if (s[0] != '\\' || s[1] == '\0' || s[2] != '\0')
		return -1;
	switch (s[1]) {
	case 'n':
		return '\n';
	case 'r':
		return '\r';
	case 't':
		return '\t';
	case '0':
		return '\0';
	case '\\':
		return '\\';
	default:
		return -1;
	}
}

/* --- flows that send a file twice -------------------------------------- */

/* Whether fc's pattern names one file, no wildcard nor recursion. */
static bool
literal(const struct conf_flow *fc)
{
	return !fc->recursive && strpbrk(fc->file_pattern, "*?[") == NULL;
}

/*
 * Flows a (before) and b: an error at b's filePattern when the patterns
 * alone show a file both would send to their stream (a literal path the
 * other matches, or the same pattern).  Other overlaps are found at run
 * time, where the first flow ships the file (files.c).
 */
static int
check_pair(struct parse *p, size_t ia, size_t ib)
{
	const struct conf_flow *a = &p->conf->flows[ia], *b = &p->conf->flows[ib];
	const char	*file = NULL;
	int		 line;

	if (!conf_flows_may_overlap(a, b))
		return 0;
	if (literal(b) && conf_flow_matches(a, b->file_pattern))
		file = b->file_pattern;
	else if (literal(a) && conf_flow_matches(b, a->file_pattern))
		file = a->file_pattern;
	else if (strcmp(a->file_pattern, b->file_pattern) != 0 ||
	    a->recursive != b->recursive)
		return 0;
	p->path = p->flows[ib].path;
	line = conf_key_line(&p->flows[ib], "filePattern");
	if (file != NULL)
		return conf_fail(p, line, "[flow:%s] and [flow:%s] both send "
		    "%s to stream %s: each line would be sent twice (remove "
		    "one, or leave the file out of one with excludePattern)",
		    b->name, a->name, file, b->stream);
	return conf_fail(p, line, "[flow:%s] and [flow:%s] both send every "
	    "file of %s to stream %s: each line would be sent twice",
	    b->name, a->name, b->file_pattern, b->stream);
}

int
conf_check_overlap(struct parse *p)
{
	const char	*main_path = p->path;
	size_t		 i, j;

	for (j = 1; j < p->conf->nflows; j++)
		for (i = 0; i < j; i++)
			if (check_pair(p, i, j) != 0)
				return -1;
	p->path = main_path;
	return 0;
}
