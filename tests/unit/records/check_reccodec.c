/*
 * Unit tests for the per-record codecs (records/reccodec.c) and the
 * password encryption under them (wire/pwcrypt.c), against the vectors
 * the DIS Java SDK's own SnappyUtils and EncryptUtils made
 * (tests/data/sdk-record-codecs.txt, whose header says how): every key,
 * every wire text byte for byte from a fixed salt and IV, every text of the
 * SDK's random gen() read back, the snappy blocks, snappy then encryption,
 * the GCM scheme of the SDK's 1.3.15 tag, wrong passwords and malformed
 * texts; then the record caps and random round trips.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "records/reccodec.h"
#include "testutil.h"
#include "wire/pwcrypt.h"

#define NFIELDS	7
#define LIMIT	(64u * 1024 * 1024)

/* One line of the vectors file, its fields decoded from hex. */
struct row {
	char		 kind[40];
	struct buf	 pw, salt, iv, in, out;
	char		*get;		/* sdk-get, as written */
	int		 line;
};

struct rows {
	struct row	*v;
	size_t		 n;
};

static struct rows	 R;

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* A hex field into b ("-": empty); false if it is not hex. */
static bool
unhex(const char *s, size_t n, struct buf *b)
{
	size_t	 i;
	int	 hi, lo;

	buf_init(b);
	buf_reserve(b, n / 2 + 1);
	if (n == 1 && s[0] == '-')
		return true;
	if (n % 2 != 0)
		return false;
	for (i = 0; i < n; i += 2) {
		hi = hexval((unsigned char)s[i]);
		lo = hexval((unsigned char)s[i + 1]);
		if (hi < 0 || lo < 0)
			return false;
		buf_addc(b, (char)(hi << 4 | lo));
	}
	return true;
}

/* The output field: hex bytes for snappy and key, the ASCII wire text
 * otherwise (given verbatim, so that malformed texts stay malformed). */
static void
out_field(struct row *r, const char *s, size_t n)
{
	const char	*k = r->kind;

	if (strncmp(k, "gcm1315-", 8) == 0)
		k += 8;
	if (strcmp(k, "snappy") == 0 || strcmp(k, "key") == 0) {
		ck_assert_msg(unhex(s, n, &r->out), "line %d: output", r->line);
		return;
	}
	buf_init(&r->out);
	if (!(n == 1 && s[0] == '-'))
		buf_add(&r->out, s, n);
}

static void
parse_row(char *line, int lineno)
{
	struct row	*r;
	char		*f[NFIELDS], *p = line, *t;
	size_t		 i;

	for (i = 0; i < NFIELDS; i++) {
		f[i] = p;
		t = strchr(p, '\t');
		ck_assert_msg(i + 1 == NFIELDS || t != NULL,
		    "line %d: %zu fields", lineno, i + 1);
		if (t != NULL) {
			*t = '\0';
			p = t + 1;
		}
	}
	R.v = xrealloc(R.v, (R.n + 1) * sizeof(*R.v));
	r = &R.v[R.n++];
	memset(r, 0, sizeof(*r));
	r->line = lineno;
	snprintf(r->kind, sizeof(r->kind), "%s", f[0]);
	ck_assert(unhex(f[1], strlen(f[1]), &r->pw));
	ck_assert(unhex(f[2], strlen(f[2]), &r->salt));
	ck_assert(unhex(f[3], strlen(f[3]), &r->iv));
	ck_assert(unhex(f[4], strlen(f[4]), &r->in));
	out_field(r, f[5], strlen(f[5]));
	r->get = xstrdup(f[6]);
}

static void
load_rows(void)
{
	char	*text, *line, *nl;
	int	 lineno = 0;

	text = tu_data("sdk-record-codecs.txt", NULL);
	for (line = text; *line != '\0'; line = nl + 1) {
		lineno++;
		nl = strchr(line, '\n');
		if (nl == NULL)
			nl = line + strlen(line) - 1;
		else
			*nl = '\0';
		if (line[0] != '#' && line[0] != '\0')
			parse_row(line, lineno);
		if (nl[1] == '\0')
			break;
	}
	free(text);
	ck_assert_uint_gt(R.n, 100);
}

static void
free_rows(void)
{
	size_t	 i;

	for (i = 0; i < R.n; i++) {
		buf_cleanup(&R.v[i].pw);
		buf_cleanup(&R.v[i].salt);
		buf_cleanup(&R.v[i].iv);
		buf_cleanup(&R.v[i].in);
		buf_cleanup(&R.v[i].out);
		free(R.v[i].get);
	}
	free(R.v);
	memset(&R, 0, sizeof(R));
}

static bool
is(const struct row *r, const char *kind)
{
	return strcmp(r->kind, kind) == 0;
}

/* A codec with the row's password (NUL-terminated by its buf). */
static struct reccodec *
codec(const struct row *r, bool compress, bool encrypt)
{
	struct reccodec_opts o = { compress, encrypt, r->pw.data };

	return reccodec_new(&o);
}

static void
assert_bytes(const struct buf *got, const struct buf *want, int line)
{
	ck_assert_msg(got->len == want->len && memcmp(got->data, want->data,
	    got->len) == 0, "line %d: %zu bytes, want %zu", line, got->len,
	    want->len);
}

/* The "snappy" row of input in, or NULL. */
static const struct row *
snappy_row(const struct buf *in, const char *kind)
{
	size_t	 i;

	for (i = 0; i < R.n; i++)
		if (is(&R.v[i], kind) && R.v[i].in.len == in->len &&
		    memcmp(R.v[i].in.data, in->data, in->len) == 0)
			return &R.v[i];
	return NULL;
}

/* How many rows of kind; fails when there is none. */
static size_t
count(const char *kind)
{
	size_t	 i, n = 0;

	for (i = 0; i < R.n; i++)
		n += is(&R.v[i], kind);
	ck_assert_msg(n > 0, "no %s rows", kind);
	return n;
}

/* --- pwcrypt --------------------------------------------------------------- */

START_TEST(keys_are_the_sdks)
{
	uint8_t	 key[PWCRYPT_KEY_LEN];
	size_t	 i;

	count("key");
	for (i = 0; i < R.n; i++) {
		if (!is(&R.v[i], "key"))
			continue;
		ck_assert_int_eq(pwcrypt_derive(R.v[i].pw.data, R.v[i].pw.len,
		    (uint8_t *)R.v[i].salt.data, R.v[i].salt.len, key), 0);
		ck_assert_uint_eq(R.v[i].out.len, sizeof(key));
		ck_assert_msg(memcmp(key, R.v[i].out.data, sizeof(key)) == 0,
		    "line %d", R.v[i].line);
	}
}
END_TEST

/* gen() with a fixed salt and IV: the SDK's wire text byte for byte. */
START_TEST(sealed_texts_are_the_sdks)
{
	struct pwcrypt	*c;
	struct buf	 b;
	size_t		 i;

	count("encrypt");
	buf_init(&b);
	for (i = 0; i < R.n; i++) {
		if (!is(&R.v[i], "encrypt"))
			continue;
		c = pwcrypt_new(R.v[i].pw.data, R.v[i].pw.len);
		buf_reset(&b);
		ck_assert_int_eq(pwcrypt_seal_with(c, R.v[i].in.data,
		    R.v[i].in.len, (uint8_t *)R.v[i].salt.data,
		    (uint8_t *)R.v[i].iv.data, &b), 0);
		assert_bytes(&b, &R.v[i].out, R.v[i].line);
		ck_assert_uint_eq(b.len, pwcrypt_sealed_len(R.v[i].in.len));
		pwcrypt_free(c);
	}
	buf_cleanup(&b);
}
END_TEST

/* --- reading what the SDK wrote -------------------------------------------- */

/* Rows whose output decodes to their input with (compress, encrypt). */
static void
decodes_to_input(const char *kind, bool compress, bool encrypt)
{
	struct reccodec	*c;
	struct buf	 b;
	size_t		 i;

	count(kind);
	buf_init(&b);
	for (i = 0; i < R.n; i++) {
		if (!is(&R.v[i], kind))
			continue;
		c = codec(&R.v[i], compress, encrypt);
		ck_assert_msg(reccodec_decode(c, R.v[i].out.data,
		    R.v[i].out.len, LIMIT, &b) == 0, "line %d", R.v[i].line);
		assert_bytes(&b, &R.v[i].in, R.v[i].line);
		reccodec_free(c);
	}
	buf_cleanup(&b);
}

/* Also the ones the SDK's own reader mangles (sdk-get bytes:...). */
START_TEST(encrypted_records_read_back_as_bytes)
{
	size_t	 i, lossy = 0;

	decodes_to_input("encrypt", false, true);
	decodes_to_input("gen", false, true);
	for (i = 0; i < R.n; i++)
		lossy += is(&R.v[i], "encrypt") &&
		    strncmp(R.v[i].get, "bytes:", 6) == 0;
	ck_assert_uint_gt(lossy, 0);
}
END_TEST

START_TEST(snappy_blocks_read_back)
{
	decodes_to_input("snappy", true, false);
}
END_TEST

/* Snappy then encryption, including the ones the SDK cannot read. */
START_TEST(snappy_then_encryption_reads_back)
{
	size_t	 i, lost = 0;

	decodes_to_input("snappy+encrypt", true, true);
	decodes_to_input("snappy+gen", true, true);
	for (i = 0; i < R.n; i++)
		lost += strncmp(R.v[i].kind, "snappy+", 7) == 0 &&
		    strncmp(R.v[i].get, "error:", 6) == 0;
	ck_assert_uint_gt(lost, 0);
}
END_TEST

START_TEST(gcm_scheme_of_sdk_1_3_15_reads_back)
{
	decodes_to_input("gcm1315-encrypt", false, true);
	decodes_to_input("gcm1315-gen", false, true);
	decodes_to_input("gcm1315-snappy+encrypt", true, true);
	decodes_to_input("gcm1315-snappy+gen", true, true);
}
END_TEST

/*
 * A wrong password: refused as not decrypting (-EBADMSG), except where
 * CBC's padding happens to hold (the row the file marks bytes:), which
 * gives garbage, as it does to the SDK, never the plaintext.
 */
START_TEST(wrong_password_is_refused)
{
	struct reccodec	*c;
	struct buf	 b;
	size_t		 i, passed = 0;
	int		 rc;

	count("wrongpw");
	count("gcm1315-wrongpw");
	buf_init(&b);
	for (i = 0; i < R.n; i++) {
		if (!is(&R.v[i], "wrongpw") && !is(&R.v[i], "gcm1315-wrongpw"))
			continue;
		c = codec(&R.v[i], false, true);
		rc = reccodec_decode(c, R.v[i].out.data, R.v[i].out.len, LIMIT,
		    &b);
		if (strncmp(R.v[i].get, "bytes:", 6) == 0) {
			ck_assert_int_eq(rc, 0);
			ck_assert(b.len != R.v[i].in.len ||
			    memcmp(b.data, R.v[i].in.data, b.len) != 0);
			passed++;
		} else {
			ck_assert_msg(rc == -EBADMSG, "line %d: %d",
			    R.v[i].line, rc);
			ck_assert_uint_eq(b.len, 0);
		}
		reccodec_free(c);
	}
	ck_assert_uint_eq(passed, 1);
	buf_cleanup(&b);
}
END_TEST

/* Hand-made texts: read where the SDK reads them, refused elsewhere. */
START_TEST(malformed_texts)
{
	struct reccodec	*c;
	struct buf	 b;
	size_t		 i, n = 0;
	int		 rc;

	buf_init(&b);
	for (i = 0; i < R.n; i++) {
		if (strncmp(R.v[i].kind, "malformed:", 10) != 0)
			continue;
		n++;
		c = codec(&R.v[i], false, true);
		rc = reccodec_decode(c, R.v[i].out.data, R.v[i].out.len, LIMIT,
		    &b);
		if (strcmp(R.v[i].get, "ok") == 0) {
			ck_assert_msg(rc == 0, "line %d: %d", R.v[i].line, rc);
			assert_bytes(&b, &R.v[i].in, R.v[i].line);
		} else
			ck_assert_msg(rc == -EINVAL || rc == -EBADMSG,
			    "line %d (%s): %d", R.v[i].line, R.v[i].kind, rc);
		reccodec_free(c);
	}
	ck_assert_uint_ge(n, 8);
	buf_cleanup(&b);
}
END_TEST

/* --- writing what the SDK writes ------------------------------------------- */

/*
 * Our snappy blocks read back; and under the encryption, the SDK's own
 * block for the same input (its "snappy" row) sealed with the row's salt
 * and IV is the SDK's wire text byte for byte.
 */
START_TEST(snappy_then_encryption_writes_the_sdks_bytes)
{
	struct reccodec	*c;
	struct pwcrypt	*p;
	const struct row *z;
	struct buf	 b, back;
	size_t		 i;

	buf_init(&b);
	buf_init(&back);
	for (i = 0; i < R.n; i++) {
		if (is(&R.v[i], "snappy")) {
			c = codec(&R.v[i], true, false);
			ck_assert_int_eq(reccodec_encode(c, R.v[i].in.data,
			    R.v[i].in.len, &b), 0);
			ck_assert_int_eq(reccodec_decode(c, b.data, b.len, LIMIT,
			    &back), 0);
			assert_bytes(&back, &R.v[i].in, R.v[i].line);
			reccodec_free(c);
		}
		if (!is(&R.v[i], "snappy+encrypt"))
			continue;
		z = snappy_row(&R.v[i].in, "snappy");
		ck_assert_msg(z != NULL, "line %d: no snappy row",
		    R.v[i].line);
		p = pwcrypt_new(R.v[i].pw.data, R.v[i].pw.len);
		buf_reset(&b);
		ck_assert_int_eq(pwcrypt_seal_with(p, z->out.data, z->out.len,
		    (uint8_t *)R.v[i].salt.data, (uint8_t *)R.v[i].iv.data,
		    &b), 0);
		assert_bytes(&b, &R.v[i].out, R.v[i].line);
		pwcrypt_free(p);
	}
	buf_cleanup(&b);
	buf_cleanup(&back);
}
END_TEST

/* Random salts and IVs: every record decodes, by a fresh codec too. */
START_TEST(round_trips_with_both)
{
	struct reccodec_opts o = { true, true, "pässwörd-密码" };
	struct reccodec	*w, *r;
	struct buf	 rec, wire, back, first;
	size_t		 i, j, n;

	w = reccodec_new(&o);
	r = reccodec_new(&o);
	buf_init(&rec);
	buf_init(&wire);
	buf_init(&back);
	buf_init(&first);
	srand(7);
	for (i = 0; i < 300; i++) {
		buf_reset(&rec);
		n = (size_t)rand() % (i < 290 ? 400 : 200000);
		for (j = 0; j < n; j++)
			buf_addc(&rec, (char)(j % 7 == 0 ? (size_t)rand() :
			    'a' + j % 3));
		ck_assert_int_eq(reccodec_encode(w, rec.data, rec.len, &wire),
		    0);
		if (i == 0)
			buf_add(&first, wire.data, wire.len);
		else if (i == 1)
			/* Another IV: two records never share a text. */
			ck_assert(wire.len != first.len ||
			    memcmp(wire.data, first.data, wire.len) != 0);
		ck_assert_int_eq(reccodec_decode(r, wire.data, wire.len, LIMIT,
		    &back), 0);
		assert_bytes(&back, &rec, (int)i);
	}
	/* Damage: one hex digit changed no longer decodes to the record. */
	wire.data[wire.len - 3] = wire.data[wire.len - 3] == '0' ? '1' : '0';
	ck_assert_int_ne(reccodec_decode(r, wire.data, wire.len, LIMIT, &back),
	    0);
	ck_assert_uint_eq(back.len, 0);
	reccodec_free(w);
	reccodec_free(r);
	buf_cleanup(&rec);
	buf_cleanup(&wire);
	buf_cleanup(&back);
	buf_cleanup(&first);
}
END_TEST

/* The cap: a record of plain_cap bytes that does not compress at all
 * encodes within the cap, for each codec and both stream caps. */
START_TEST(plain_cap_keeps_the_wire_under_the_record_cap)
{
	static const size_t caps[] = { 300, 4096, 1048576, 5242880 };
	static const bool modes[][2] = {
		{ true, false }, { false, true }, { true, true },
	};
	struct reccodec_opts o = { false, false, "pw" };
	struct reccodec	*c;
	struct buf	 rec, wire;
	size_t		 i, m, j, plain;

	ck_assert_uint_eq(reccodec_plain_cap(NULL, 1000), 1000);
	buf_init(&rec);
	buf_init(&wire);
	for (m = 0; m < ARRAY_SIZE(modes); m++)
		for (i = 0; i < ARRAY_SIZE(caps); i++) {
			o.compress = modes[m][0];
			o.encrypt = modes[m][1];
			c = reccodec_new(&o);
			plain = reccodec_plain_cap(c, caps[i]);
			ck_assert_uint_gt(plain, (caps[i] < 1000 ? 0 :
			    caps[i] / 6));
			buf_reset(&rec);
			for (j = 0; j < plain; j++)
				buf_addc(&rec, (char)(rand() & 0xff));
			ck_assert_int_eq(reccodec_encode(c, rec.data, rec.len,
			    &wire), 0);
			ck_assert_uint_le(wire.len, caps[i]);
			if (o.encrypt && !o.compress)
				ck_assert_uint_gt(pwcrypt_sealed_len(plain + 1),
				    caps[i]);
			reccodec_free(c);
		}
	ck_assert_uint_eq(pwcrypt_plain_max(pwcrypt_sealed_len(0) - 1), 0);
	ck_assert_uint_eq(pwcrypt_plain_max(pwcrypt_sealed_len(0)), 15);
	buf_cleanup(&rec);
	buf_cleanup(&wire);
}
END_TEST

/* What does not decode says so, and decoding stops at max bytes. */
START_TEST(errors_and_the_size_limit)
{
	struct reccodec_opts z = { true, false, NULL };
	struct reccodec_opts e = { false, true, "pw" };
	struct reccodec	*c;
	struct buf	 wire, back;
	char		 big[10000];

	buf_init(&wire);
	buf_init(&back);
	c = reccodec_new(&z);
	memset(big, 'x', sizeof(big));
	ck_assert_int_eq(reccodec_encode(c, big, sizeof(big), &wire), 0);
	ck_assert_uint_lt(wire.len, 1000);
	ck_assert_int_eq(reccodec_decode(c, wire.data, wire.len, 9999,
	    &back), -EFBIG);
	ck_assert_int_eq(reccodec_decode(c, wire.data, wire.len, 10000,
	    &back), 0);
	/* 'p' reads as a length of 112. */
	ck_assert_int_eq(reccodec_decode(c, "plain text\xff", 11, 1000,
	    &back), -EILSEQ);
	reccodec_free(c);
	c = reccodec_new(&e);
	ck_assert_int_eq(reccodec_decode(c, "plain text", 10, 100, &back),
	    -EINVAL);
	/* hex("0001020304050607::000102030405060708090a0b0c0d0e0f::zz"),
	 * into a buffer that never held anything (found by fuzz_reccodec). */
	buf_cleanup(&back);
	ck_assert_int_eq(reccodec_decode(c,
	    "303030313032303330343035303630373a3a303030313032303330343035"
	    "30363037303830393061306230633064306530663a3a7a7a", 108, 100,
	    &back), -EINVAL);
	ck_assert_uint_eq(back.len, 0);
	ck_assert_str_eq(reccodec_strerror(-EBADMSG),
	    "does not decrypt (another data.password, or damaged)");
	reccodec_free(c);
	ck_assert_ptr_null(reccodec_new(&(struct reccodec_opts){ false,
	    false, NULL }));
	ck_assert_int_eq(reccodec_decode(NULL, "abc", 3, 3, &back), 0);
	ck_assert_str_eq(back.data, "abc");
	buf_cleanup(&wire);
	buf_cleanup(&back);
}
END_TEST

static Suite *
reccodec_suite(void)
{
	Suite	*s = suite_create("reccodec");
	TCase	*tc;

	tc = tcase_create("sdk_vectors");
	tcase_add_unchecked_fixture(tc, load_rows, free_rows);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, keys_are_the_sdks);
	tcase_add_test(tc, sealed_texts_are_the_sdks);
	tcase_add_test(tc, encrypted_records_read_back_as_bytes);
	tcase_add_test(tc, snappy_blocks_read_back);
	tcase_add_test(tc, snappy_then_encryption_reads_back);
	tcase_add_test(tc, gcm_scheme_of_sdk_1_3_15_reads_back);
	tcase_add_test(tc, wrong_password_is_refused);
	tcase_add_test(tc, malformed_texts);
	tcase_add_test(tc, snappy_then_encryption_writes_the_sdks_bytes);
	suite_add_tcase(s, tc);

	tc = tcase_create("codec");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, round_trips_with_both);
	tcase_add_test(tc, plain_cap_keeps_the_wire_under_the_record_cap);
	tcase_add_test(tc, errors_and_the_size_limit);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(reccodec_suite());
}
