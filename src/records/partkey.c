/*
 * Partition keys (partkey.h).  The default, RANDOM_INT alone, runs for every
 * record: no printf, no tokenising.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "records/keyid.h"
#include "records/partkey.h"

enum part {
	PART_RANDOM_INT,
	PART_RANDOM_DOUBLE,
	PART_FILE_NAME,
	PART_DETERMINISTIC,
	PART_LITERAL,
};

struct part_tok {
	enum part	 kind;
	char		*text;		/* PART_LITERAL */
};

struct partkey {
	struct part_tok	*toks;
	size_t		 n;
	size_t		 id_tok;	/* the first RANDOM_INT, or n: none */
};

static enum part
part_kind(const char *tok)
{
	if (strcmp(tok, "RANDOM_INT") == 0)
		return PART_RANDOM_INT;
	if (strcmp(tok, "RANDOM_DOUBLE") == 0)
		return PART_RANDOM_DOUBLE;
	if (strcmp(tok, "FILE_NAME") == 0)
		return PART_FILE_NAME;
	if (strcmp(tok, "DETERMINISTIC") == 0)
		return PART_DETERMINISTIC;
	return PART_LITERAL;
}

struct partkey *
partkey_new(const char *option)
{
	struct partkey	*pk;
	const char	*list = option;
	char		 tok[64];

	pk = xcalloc(1, sizeof(*pk));
	while (list_next(&list, tok, sizeof(tok))) {
		pk->toks = xrealloc(pk->toks, (pk->n + 1) * sizeof(*pk->toks));
		pk->toks[pk->n].kind = part_kind(tok);
		pk->toks[pk->n].text = pk->toks[pk->n].kind == PART_LITERAL ?
		    xstrdup(tok) : NULL;
		pk->n++;
	}
	for (pk->id_tok = 0; pk->id_tok < pk->n; pk->id_tok++)
		if (pk->toks[pk->id_tok].kind == PART_RANDOM_INT)
			break;
	return pk;
}

void
partkey_free(struct partkey *pk)
{
	size_t	 i;

	if (pk == NULL)
		return;
	for (i = 0; i < pk->n; i++)
		free(pk->toks[i].text);
	free(pk->toks);
	free(pk);
}

static void
md5_hex(const void *data, size_t len, struct buf *out)
{
	static const char	 hex[] = "0123456789abcdef";
	unsigned char		 md[16];
	unsigned int		 n = 0;
	int			 i;

	EVP_Digest(data, len, md, &n, EVP_md5(), NULL);
	for (i = 0; i < 16; i++) {
		buf_addc(out, hex[md[i] >> 4]);
		buf_addc(out, hex[md[i] & 0x0f]);
	}
}

/* Decimal digits of v, without printf: this runs for every record. */
static void
add_uint(struct buf *b, unsigned v)
{
	char	 d[12];
	size_t	 i = sizeof(d);

	do
		d[--i] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	buf_add(b, d + i, sizeof(d) - i);
}

/* Token i of the key; id: the record id, or NULL. */
static void
add_tok(const struct partkey *pk, size_t i, const char *path,
    const void *data, size_t len, const char *id, struct buf *out)
{
	const char	*base;

	switch (pk->toks[i].kind) {
	case PART_RANDOM_INT:
		if (id != NULL && i == pk->id_tok)
			buf_add(out, id, KEYID_LEN);
		else
			add_uint(out, (unsigned)(rand_u64() % 1000000));
		break;
	case PART_RANDOM_DOUBLE:
		buf_printf(out, "%.6f", rand_unit() * 1e6);
		break;
	case PART_FILE_NAME:
		base = strrchr(path, '/');
		buf_addstr(out, base ? base + 1 : path);
		break;
	case PART_DETERMINISTIC:
		md5_hex(data, len, out);
		break;
	case PART_LITERAL:
		buf_addstr(out, pk->toks[i].text);
		break;
	}
}

static void
make(const struct partkey *pk, const char *path, const void *data,
    size_t len, const char *id, struct buf *out)
{
	size_t		 i;

	buf_reset(out);
	for (i = 0; i < pk->n; i++) {
		if (i > 0)
			buf_addc(out, ',');
		add_tok(pk, i, path, data, len, id, out);
	}
}

void
partkey_make(const struct partkey *pk, const char *path, const void *data,
    size_t len, struct buf *out)
{
	make(pk, path, data, len, NULL, out);
}

bool
partkey_carries_id(const struct partkey *pk)
{
	return pk->id_tok < pk->n;
}

void
partkey_make_id(const struct partkey *pk, const char *path,
    const void *data, size_t len, uint64_t file, uint64_t off,
    struct buf *out)
{
	char	 id[KEYID_LEN];

	keyid_encode(file, off, id);
	if (pk->n == 1 && pk->id_tok == 0) {
		/* The default, for every record: no token walk. */
		buf_reset(out);
		buf_add(out, id, KEYID_LEN);
		return;
	}
	make(pk, path, data, len, id, out);
}
