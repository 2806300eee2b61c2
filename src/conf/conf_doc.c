/*
 * The commented sample agent.ini (disagent --print-sample-config) and the
 * key entries of disagent.ini(5), written from the key table.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/conf_int.h"

/* Help text plus what the table says about k, as one paragraph. */
static void
key_describe(const struct key *k, bool with_default, struct buf *b)
{
	buf_addstr(b, k->help);
	if (k->flags & KF_REQUIRED)
		buf_addstr(b, " Required.");
	switch (k->type) {
	case KT_INT:
		buf_printf(b, " Range %lld..%lld.", k->min, k->max);
		break;
	case KT_BOOL:
		buf_addstr(b, " Either true or false.");
		break;
	case KT_ENUM:
	case KT_WORD:
		buf_addstr(b, " One of ");
		conf_words_join(k->words, ", ", b);
		buf_addstr(b, ".");
		break;
	case KT_STRING:
		break;
	}
	if (k->env != NULL)
		buf_printf(b, " The environment variable %s overrides it.",
		    k->env);
	if (with_default && k->def != NULL && k->def[0] != '\0')
		buf_printf(b, " Default: %s.", k->def);
}

/* Words of text on lines of at most width columns, each after prefix. */
static void
print_wrapped(FILE *fp, const char *prefix, const char *text, size_t width)
{
	size_t	 col = 0, n;

	for (;;) {
		text += strspn(text, " ");
		if (*text == '\0')
			break;
		n = strcspn(text, " ");
		if (col > 0 && col + 1 + n > width) {
			fputc('\n', fp);
			col = 0;
		}
		if (col == 0) {
			fputs(prefix, fp);
			col = strlen(prefix);
		} else {
			fputc(' ', fp);
			col++;
		}
		fwrite(text, 1, n, fp);
		col += n;
		text += n;
	}
	if (col > 0)
		fputc('\n', fp);
}

static const char sample_head[] =
    "agent.ini: configuration of disagent, which sends lines of log files "
    "to Huawei Cloud DIS. This file is generated from the key table in "
    "src/conf/conf_keys.c and lists every key.\n"
    "Lines are \"[section]\" headers and \"key = value\" pairs of at most "
    "199 characters. Key names are case-sensitive; the words of a key with "
    "a fixed set of values are not. A line starting with ';' or '#' is a "
    "comment, and so is the rest of a line from a ';' that follows a blank, "
    "so a value cannot contain \" ;\".\n"
    "Keys written \";key = value\" are optional and show their default; "
    "delete the ';' to change one.";

static const char sample_flow_head[] =
    "One [flow:NAME] section per group of files; add sections for more. "
    "NAME is 1-64 letters, digits, '_', '.' or '-', and must be unique.";

static void
print_paragraphs(FILE *fp, const char *text)
{
	char	*copy, *para, *save;
	bool	 first = true;

	copy = xstrdup(text);
	for (para = strtok_r(copy, "\n", &save); para != NULL;
	    para = strtok_r(NULL, "\n", &save)) {
		if (!first)
			fputs(";\n", fp);
		first = false;
		print_wrapped(fp, "; ", para, 76);
	}
	free(copy);
}

static void
sample_key(FILE *fp, const struct key *k)
{
	struct buf	 b;

	buf_init(&b);
	key_describe(k, false, &b);
	fputc('\n', fp);
	print_wrapped(fp, "; ", b.data, 76);
	buf_cleanup(&b);
	if (k->example != NULL)
		fprintf(fp, "%s = %s\n", k->name, k->example);
	else if (k->def != NULL && k->def[0] != '\0')
		fprintf(fp, ";%s = %s\n", k->name, k->def);
	else
		fprintf(fp, ";%s =\n", k->name);
}

void
conf_print_sample(FILE *fp)
{
	const struct key	*k;

	print_paragraphs(fp, sample_head);
	fputs("\n[agent]\n", fp);
	for (k = conf_keys; k < conf_keys + conf_nkeys; k++)
		if (k->sect == KS_AGENT)
			sample_key(fp, k);
	fputc('\n', fp);
	print_paragraphs(fp, sample_flow_head);
	fputs("[flow:app]\n", fp);
	for (k = conf_keys; k < conf_keys + conf_nkeys; k++)
		if (k->sect == KS_FLOW)
			sample_key(fp, k);
}

/*
 * Text for groff: backslashes escaped, one sentence per line (the roff
 * convention, which also keeps the sentence spacing right) and lines
 * wrapped near 72 columns, none starting with a control character.
 */
static void
man_text(FILE *fp, const char *s)
{
	const char	*w, *end;
	size_t		 col = 0, n;

	for (w = s; *w != '\0'; w = end) {
		while (*w == ' ')
			w++;
		if (*w == '\0')
			break;
		end = strchr(w, ' ');
		if (end == NULL)
			end = w + strlen(w);
		n = (size_t)(end - w);
		if (col > 0 && col + 1 + n > 72) {
			fputc('\n', fp);
			col = 0;
		} else if (col > 0) {
			fputc(' ', fp);
			col++;
		}
		if (col == 0 && (*w == '.' || *w == '\''))
			fputs("\\&", fp);
		for (; w < end; w++, col++) {
			if (*w == '\\')
				fputs("\\e", fp);
			else
				fputc(*w, fp);
		}
		/* A sentence ends: start the next one on its own line. */
		if (n > 1 && end[-1] == '.' && *end == ' ' && col > 0) {
			fputc('\n', fp);
			col = 0;
		}
	}
	if (col > 0 || s[0] == '\0')
		fputc('\n', fp);
}

void
conf_print_man(FILE *fp)
{
	const struct key	*k;
	struct buf		 b;
	enum ksect		 sect;

	buf_init(&b);
	for (sect = KS_AGENT; sect <= KS_FLOW; sect++) {
		fputs(sect == KS_AGENT ? ".SS [agent]\n" :
		    ".SS [flow:NAME]\n", fp);
		for (k = conf_keys; k < conf_keys + conf_nkeys; k++) {
			if (k->sect != sect)
				continue;
			buf_reset(&b);
			key_describe(k, true, &b);
			fputs(".TP\n.B ", fp);
			man_text(fp, k->name);
			man_text(fp, b.data);
		}
	}
	buf_cleanup(&b);
}
