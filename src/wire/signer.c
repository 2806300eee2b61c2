/*
 * Request signing for DIS (spec/dis-api.md section 6): the canonical request
 * of 6.1 and the three Authorization dialects, SDK-HMAC-SHA256 with the
 * DIS-scoped key chain (6.2), the plain APIG form (6.3) and the derived-key
 * V11-HMAC-SHA256 form (6.3b).  Everything here is a pure function of its
 * arguments, time included, so the published vectors are reproducible.
 * HMAC and SHA-256 come from libcrypto (one-shot HMAC() and EVP_Digest(),
 * neither deprecated in OpenSSL 3).  Key material is wiped after use.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
#include <openssl/core_names.h>
#include <openssl/params.h>
#endif

#include "base/util.h"
#include "wire/signer.h"

#define SHA256_LEN	32
#define ALG_SDK		"SDK-HMAC-SHA256"
#define ALG_V11		"V11-HMAC-SHA256"
#define TERMINATOR	"sdk_request"

/* One header prepared for signing: lowercased name, trimmed value. */
struct shdr {
	char		*name;
	const char	*value;
	size_t		 vlen;
};

/* One query parameter, name and value percent-encoded. */
struct sparam {
	char	*name;
	char	*value;
};

static const char hexdig[] = "0123456789abcdef";

static void
hex_encode(const unsigned char *in, size_t n, char *out)
{
	size_t	 i;

	for (i = 0; i < n; i++) {
		out[2 * i] = hexdig[in[i] >> 4];
		out[2 * i + 1] = hexdig[in[i] & 0x0f];
	}
	out[2 * n] = '\0';
}

/*
 * OpenSSL 3 looks an algorithm up in its provider store (locks, name
 * compares) each time a digest or HMAC starts from EVP_sha256() or HMAC():
 * three look-ups a request, about 3% of the agent's CPU at a paced
 * endpoint.  SHA-256 and HMAC are fetched once, for the process; HMAC() and
 * EVP_sha256() remain the fallback (OpenSSL 1.1, or a failed fetch).
 */
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
static EVP_MD	*fetched_sha256;
static EVP_MAC_CTX *hmac_sha256_ctx;	/* digest set, no key: copied */
static pthread_once_t fetch_once = PTHREAD_ONCE_INIT;

static void
fetch_algorithms(void)
{
	OSSL_PARAM	 params[2];
	EVP_MAC		*mac;

	fetched_sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
	mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	if (mac == NULL)
		return;
	params[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST,
	    (char *)"SHA256", 0);
	params[1] = OSSL_PARAM_construct_end();
	hmac_sha256_ctx = EVP_MAC_CTX_new(mac);
	EVP_MAC_free(mac);	/* the context holds its own reference */
	if (hmac_sha256_ctx != NULL &&
	    EVP_MAC_CTX_set_params(hmac_sha256_ctx, params) != 1) {
		EVP_MAC_CTX_free(hmac_sha256_ctx);
		hmac_sha256_ctx = NULL;
	}
}

static const EVP_MD *
sha256_md(void)
{
	(void)pthread_once(&fetch_once, fetch_algorithms);
	return fetched_sha256 != NULL ? fetched_sha256 : EVP_sha256();
}

/* HMAC-SHA256 through the fetched HMAC; false if it has none. */
static bool
hmac_fetched(const void *key, size_t keylen, const void *msg, size_t msglen,
    unsigned char out[SHA256_LEN])
{
	EVP_MAC_CTX	*ctx;
	size_t		 outlen = 0;
	bool		 ok;

	(void)pthread_once(&fetch_once, fetch_algorithms);
	if (hmac_sha256_ctx == NULL)
		return false;
	ctx = EVP_MAC_CTX_dup(hmac_sha256_ctx);
	ok = ctx != NULL && EVP_MAC_init(ctx, key, keylen, NULL) == 1 &&
	    EVP_MAC_update(ctx, msg, msglen) == 1 &&
	    EVP_MAC_final(ctx, out, &outlen, SHA256_LEN) == 1 &&
	    outlen == SHA256_LEN;
	EVP_MAC_CTX_free(ctx);
	if (!ok)
		abort();	/* libcrypto cannot do SHA-256: nothing works */
	return true;
}
#else
static const EVP_MD *
sha256_md(void)
{
	return EVP_sha256();
}

static bool
hmac_fetched(const void *key, size_t keylen, const void *msg, size_t msglen,
    unsigned char out[SHA256_LEN])
{
	(void)key;
	(void)keylen;
	(void)msg;
	(void)msglen;
	(void)out;
	return false;
}
#endif

static void
hmac_sha256(const void *key, size_t keylen, const void *msg, size_t msglen,
    unsigned char out[SHA256_LEN])
{
	unsigned int	 outlen = SHA256_LEN;

	if (hmac_fetched(key, keylen, msg, msglen, out))
		return;
	if (HMAC(EVP_sha256(), key, (int)keylen, msg, msglen, out,
	    &outlen) == NULL || outlen != SHA256_LEN)
		abort();	/* libcrypto cannot do SHA-256: nothing works */
}

void
signer_sha256_hex(const void *buf, size_t len, char out[65])
{
	unsigned char	 md[EVP_MAX_MD_SIZE];
	unsigned int	 mdlen = 0;

	/* EVP_Digest wants a non-NULL pointer even for zero bytes. */
	if (EVP_Digest(len ? buf : "", len, md, &mdlen, sha256_md(),
	    NULL) != 1 || mdlen != SHA256_LEN)
		abort();
	hex_encode(md, SHA256_LEN, out);
}

static int
unreserved(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	    (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' ||
	    c == '~';
}

/* Percent-encode n bytes of s (RFC 3986 unreserved kept, %XX upper). */
static void
pct_encode(struct buf *out, const char *s, size_t n)
{
	static const char	 up[] = "0123456789ABCDEF";
	unsigned char		 c;
	size_t			 i;

	buf_reserve(out, 3 * n);
	for (i = 0; i < n; i++) {
		c = (unsigned char)s[i];
		if (unreserved(c)) {
			buf_addc(out, (char)c);
			continue;
		}
		buf_addc(out, '%');
		buf_addc(out, up[c >> 4]);
		buf_addc(out, up[c & 0x0f]);
	}
}

static char *
pct_dup(const char *s, size_t n)
{
	struct buf	 b;

	buf_init(&b);
	buf_add(&b, "", 0);	/* allocated and terminated even when n == 0 */
	pct_encode(&b, s, n);
	return b.data;	/* the buffer's memory becomes the string */
}

/*
 * Canonical URI: each segment between slashes encoded, slashes kept (empty
 * segments too, as GOV3 does), a leading "/" supplied when missing and a
 * trailing "/" always present.
 */
static void
canon_uri(struct buf *out, const char *path)
{
	const char	*p, *slash;

	p = path;
	if (*p != '/')
		buf_addc(out, '/');
	for (;;) {
		slash = strchr(p, '/');
		if (slash == NULL)
			break;
		pct_encode(out, p, (size_t)(slash - p));
		buf_addc(out, '/');
		p = slash + 1;
	}
	if (*p != '\0') {
		pct_encode(out, p, strlen(p));
		buf_addc(out, '/');
	}
}

static int
param_cmp(const void *a, const void *b)
{
	const struct sparam	*x = a, *y = b;
	int			 r;

	r = strcmp(x->name, y->name);
	if (r != 0)
		return r;
	return strcmp(x->value, y->value);
}

/* Split "a=1&b" into encoded pairs; "b" alone becomes "b=" (GOV3). */
static size_t
parse_query(const char *q, struct sparam **out)
{
	struct sparam	*v;
	const char	*p, *end, *eq;
	size_t		 n, max;

	max = 1;
	for (p = q; *p != '\0'; p++)
		if (*p == '&')
			max++;
	v = xcalloc(max, sizeof(*v));
	n = 0;
	for (p = q; *p != '\0'; p = *end ? end + 1 : end) {
		end = strchr(p, '&');
		if (end == NULL)
			end = p + strlen(p);
		if (end == p)
			continue;	/* "a=1&&b=2": empty item */
		eq = memchr(p, '=', (size_t)(end - p));
		if (eq == NULL)
			eq = end;
		v[n].name = pct_dup(p, (size_t)(eq - p));
		v[n].value = pct_dup(eq == end ? end : eq + 1,
		    eq == end ? 0 : (size_t)(end - eq - 1));
		n++;
	}
	*out = v;
	return n;
}

void
signer_query(const char *query, struct buf *out)
{
	struct sparam	*v;
	size_t		 i, n;

	if (query == NULL || *query == '\0')
		return;
	n = parse_query(query, &v);
	qsort(v, n, sizeof(*v), param_cmp);
	for (i = 0; i < n; i++) {
		if (i > 0)
			buf_addc(out, '&');
		buf_addstr(out, v[i].name);
		buf_addc(out, '=');
		buf_addstr(out, v[i].value);
		free(v[i].name);
		free(v[i].value);
	}
	free(v);
}

static int
is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' ||
	    c == '\v' || c == '\f';
}

static int
shdr_cmp(const void *a, const void *b)
{
	const struct shdr	*x = a, *y = b;
	size_t			 n;
	int			 r;

	r = strcmp(x->name, y->name);
	if (r != 0)
		return r;
	n = MIN(x->vlen, y->vlen);
	r = memcmp(x->value, y->value, n);
	if (r != 0)
		return r;
	return (x->vlen > y->vlen) - (x->vlen < y->vlen);
}

/* Lowercase, trim and sort the request's headers; free with shdr_free. */
static struct shdr *
shdr_prepare(const struct sign_request *req)
{
	struct shdr	*h;
	const char	*v, *e;
	char		*c;
	size_t		 i;

	h = xcalloc(req->nheaders ? req->nheaders : 1, sizeof(*h));
	for (i = 0; i < req->nheaders; i++) {
		h[i].name = xstrdup(req->headers[i].name);
		for (c = h[i].name; *c != '\0'; c++)
			if (*c >= 'A' && *c <= 'Z')
				*c = (char)(*c - 'A' + 'a');
		v = req->headers[i].value ? req->headers[i].value : "";
		while (is_ws(*v))
			v++;
		e = v + strlen(v);
		while (e > v && is_ws(e[-1]))
			e--;
		h[i].value = v;
		h[i].vlen = (size_t)(e - v);
	}
	qsort(h, req->nheaders, sizeof(*h), shdr_cmp);
	return h;
}

static void
shdr_free(struct shdr *h, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		free(h[i].name);
	free(h);
}

static void
signed_names(struct buf *out, const struct shdr *h, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++) {
		if (i > 0)
			buf_addc(out, ';');
		buf_addstr(out, h[i].name);
	}
}

/* The canonical request with the headers h (shdr_prepare'd from req). */
static void
canonical(const struct sign_request *req, const struct shdr *h,
    struct buf *out)
{
	char		 hash[65];
	size_t		 i;

	buf_addstr(out, req->method);
	buf_addc(out, '\n');
	canon_uri(out, req->path);
	buf_addc(out, '\n');
	signer_query(req->query, out);
	buf_addc(out, '\n');
	for (i = 0; i < req->nheaders; i++) {
		buf_addstr(out, h[i].name);
		buf_addc(out, ':');
		buf_add(out, h[i].value, h[i].vlen);
		buf_addc(out, '\n');
	}
	/* Each header line ends in "\n", so this leaves a blank line. */
	buf_addc(out, '\n');
	signed_names(out, h, req->nheaders);
	buf_addc(out, '\n');
	if (req->body_sha256 != NULL)
		buf_addstr(out, req->body_sha256);
	else {
		signer_sha256_hex(req->body, req->bodylen, hash);
		buf_addstr(out, hash);
	}
}

void
signer_canonical(const struct sign_request *req, struct buf *out)
{
	struct shdr	*h;

	h = shdr_prepare(req);
	canonical(req, h, out);
	shdr_free(h, req->nheaders);
}

static int
digits(const char *s, size_t n, int lo, int hi)
{
	size_t	 i;
	int	 v = 0;

	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return 0;
		v = v * 10 + (s[i] - '0');
	}
	return v >= lo && v <= hi;
}

/* True for "yyyyMMddTHHmmssZ" with plausible field ranges. */
static int
valid_date(const char *d)
{
	if (strlen(d) != 16 || d[8] != 'T' || d[15] != 'Z')
		return 0;
	return digits(d, 4, 0, 9999) && digits(d + 4, 2, 1, 12) &&
	    digits(d + 6, 2, 1, 31) && digits(d + 9, 2, 0, 23) &&
	    digits(d + 11, 2, 0, 59) && digits(d + 13, 2, 0, 60);
}

static int
valid_args(enum sign_dialect d, const struct sign_key *k,
    const char *date, const struct sign_request *r)
{
	if (k == NULL || r == NULL || date == NULL || k->ak == NULL ||
	    k->sk == NULL || r->method == NULL || r->path == NULL)
		return 0;
	if (r->nheaders > 0 && r->headers == NULL)
		return 0;
	if (r->body == NULL && r->bodylen > 0 && r->body_sha256 == NULL)
		return 0;
	if (d != SIGN_APIG && (k->region == NULL || k->service == NULL))
		return 0;
	if (d != SIGN_DIS && d != SIGN_APIG && d != SIGN_V11)
		return 0;
	return valid_date(date);
}

/* hex(SHA256(canonical request)). */
static void
canonical_hash(const struct sign_request *req, const struct shdr *h,
    char out[65])
{
	struct buf	 c;

	buf_init(&c);
	canonical(req, h, &c);
	signer_sha256_hex(c.data, c.len, out);
	buf_cleanup(&c);
}

/*
 * The 6.2 key chain: kSigning = HMAC(HMAC(HMAC(HMAC("SDK" + secret, day),
 * region), service), "sdk_request").
 */
static void
scoped_key_derive(const char *secret, const char *day,
    const struct sign_key *k, unsigned char out[SHA256_LEN])
{
	unsigned char	 tmp[SHA256_LEN];
	struct buf	 seed;

	buf_init(&seed);
	buf_addstr(&seed, "SDK");
	buf_addstr(&seed, secret);
	hmac_sha256(seed.data, seed.len, day, strlen(day), out);
	OPENSSL_cleanse(seed.data, seed.len);
	buf_cleanup(&seed);
	/* Never let HMAC() read its key from the buffer it writes. */
	hmac_sha256(out, SHA256_LEN, k->region, strlen(k->region), tmp);
	hmac_sha256(tmp, SHA256_LEN, k->service, strlen(k->service), out);
	hmac_sha256(out, SHA256_LEN, TERMINATOR, strlen(TERMINATOR), tmp);
	memcpy(out, tmp, SHA256_LEN);
	OPENSSL_cleanse(tmp, sizeof(tmp));
}

/*
 * The signing key changes once a day: derived once and kept, with the
 * SHA-256 of what it was derived from (never the secret itself) to know
 * when to derive it again.  Four of a request's five HMACs, each an
 * algorithm fetch in OpenSSL 3, were ~3% of the agent's CPU on a backlog.
 */
static struct {
	bool		 valid;
	unsigned char	 id[SHA256_LEN];
	unsigned char	 key[SHA256_LEN];
} scoped_cache;

static void
scoped_key(const char *secret, const char *day, const struct sign_key *k,
    unsigned char out[SHA256_LEN])
{
	unsigned char	 id[EVP_MAX_MD_SIZE];
	unsigned int	 idlen = 0;
	EVP_MD_CTX	*ctx;

	/* id = SHA-256(secret NUL day NUL region NUL service) */
	if ((ctx = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestInit_ex(ctx, sha256_md(), NULL) != 1 ||
	    EVP_DigestUpdate(ctx, secret, strlen(secret) + 1) != 1 ||
	    EVP_DigestUpdate(ctx, day, strlen(day) + 1) != 1 ||
	    EVP_DigestUpdate(ctx, k->region, strlen(k->region) + 1) != 1 ||
	    EVP_DigestUpdate(ctx, k->service, strlen(k->service) + 1) != 1 ||
	    EVP_DigestFinal_ex(ctx, id, &idlen) != 1 || idlen != SHA256_LEN)
		abort();
	EVP_MD_CTX_free(ctx);
	if (!scoped_cache.valid ||
	    CRYPTO_memcmp(id, scoped_cache.id, SHA256_LEN) != 0) {
		scoped_key_derive(secret, day, k, scoped_cache.key);
		memcpy(scoped_cache.id, id, SHA256_LEN);
		scoped_cache.valid = true;
	}
	memcpy(out, scoped_cache.key, SHA256_LEN);
}

/*
 * 6.3b: secret = hex(HMAC(key = HMAC(key = AK, msg = SK),
 * msg = "yyyyMMdd/region/service" 0x01)), HKDF-SHA256 with salt AK and one
 * expand block (SDKPY utils/hkdf.py getDerKey).
 */
static void
v11_secret(const struct sign_key *k, const char *day, char out[65])
{
	unsigned char	 prk[SHA256_LEN], okm[SHA256_LEN];
	struct buf	 info;

	hmac_sha256(k->ak, strlen(k->ak), k->sk, strlen(k->sk), prk);
	buf_init(&info);
	buf_printf(&info, "%s/%s/%s", day, k->region, k->service);
	buf_addc(&info, '\x01');
	hmac_sha256(prk, sizeof(prk), info.data, info.len, okm);
	buf_cleanup(&info);
	hex_encode(okm, sizeof(okm), out);
	OPENSSL_cleanse(prk, sizeof(prk));
	OPENSSL_cleanse(okm, sizeof(okm));
}

/* Append the NULL-terminated list of strings v to out. */
static void
join(struct buf *out, const char *const *v)
{
	for (; *v != NULL; v++)
		buf_addstr(out, *v);
}

/*
 * The DIS-scoped signature (6.2) with secret in place of SK.  For V11 the
 * secret is the hex derived key and the chain still starts with "SDK":
 * spec 6.3b says "exactly the DIS-scoped steps of 6.2 with secret in place
 * of SK", and SDKPY disauth.py SignWithDerivationKey() does exactly that
 * (GenerateSigningKey(derivation_key, ...) prepends PreSKString "SDK").
 * Only the algorithm name in the string to sign and the header changes.
 */
static void
sign_scoped(const char *alg, const char *secret, const struct sign_key *k,
    const char *date, const char *chash, const char *signed_hdrs,
    struct buf *out)
{
	unsigned char	 key[SHA256_LEN], sig[SHA256_LEN];
	char		 day[9], sighex[65];
	struct buf	 scope, sts;

	memcpy(day, date, 8);
	day[8] = '\0';
	/* Strings joined, not printf'ed: this runs for every request. */
	buf_init(&scope);
	join(&scope, (const char *[]){ day, "/", k->region, "/", k->service,
	    "/", TERMINATOR, NULL });
	buf_init(&sts);
	join(&sts, (const char *[]){ alg, "\n", date, "\n", scope.data, "\n",
	    chash, NULL });
	scoped_key(secret, day, k, key);
	hmac_sha256(key, sizeof(key), sts.data, sts.len, sig);
	hex_encode(sig, sizeof(sig), sighex);
	join(out, (const char *[]){ alg, " Credential=", k->ak, "/",
	    scope.data, ", SignedHeaders=", signed_hdrs, ", Signature=",
	    sighex, NULL });
	OPENSSL_cleanse(key, sizeof(key));
	buf_cleanup(&sts);
	buf_cleanup(&scope);
}

/* 6.3: Signature = hex(HMAC(SK, "SDK-HMAC-SHA256\n" date "\n" chash)). */
static void
sign_apig(const struct sign_key *k, const char *date, const char *chash,
    const char *signed_hdrs, struct buf *out)
{
	unsigned char	 sig[SHA256_LEN];
	char		 sighex[65];
	struct buf	 sts;

	buf_init(&sts);
	buf_printf(&sts, "%s\n%s\n%s", ALG_SDK, date, chash);
	hmac_sha256(k->sk, strlen(k->sk), sts.data, sts.len, sig);
	hex_encode(sig, sizeof(sig), sighex);
	buf_printf(out, "%s Access=%s, SignedHeaders=%s, Signature=%s",
	    ALG_SDK, k->ak, signed_hdrs, sighex);
	buf_cleanup(&sts);
}

int
signer_authorization(enum sign_dialect dialect, const struct sign_key *k,
    const char *sdk_date, const struct sign_request *req, struct buf *out)
{
	struct shdr	*h;
	struct buf	 names;
	char		 chash[65], secret[65], day[9];

	if (!valid_args(dialect, k, sdk_date, req))
		return -EINVAL;
	/* The headers lowercased and sorted once, for both uses. */
	h = shdr_prepare(req);
	canonical_hash(req, h, chash);
	buf_init(&names);
	buf_addstr(&names, "");	/* names.data is a string even when empty */
	signed_names(&names, h, req->nheaders);
	shdr_free(h, req->nheaders);
	switch (dialect) {
	case SIGN_DIS:
		sign_scoped(ALG_SDK, k->sk, k, sdk_date, chash, names.data,
		    out);
		break;
	case SIGN_APIG:
		sign_apig(k, sdk_date, chash, names.data, out);
		break;
	case SIGN_V11:
		memcpy(day, sdk_date, 8);
		day[8] = '\0';
		v11_secret(k, day, secret);
		sign_scoped(ALG_V11, secret, k, sdk_date, chash, names.data,
		    out);
		OPENSSL_cleanse(secret, sizeof(secret));
		break;
	}
	buf_cleanup(&names);
	return 0;
}

/* Days since 1970-01-01 to civil date (H. Hinnant's civil_from_days). */
static void
civil_from_days(long long z, int *y, int *m, int *d)
{
	long long	 era, doe, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = (int)(yoe + era * 400 + (*m <= 2));
}

static void
put2(char *p, int v)
{
	p[0] = (char)('0' + v / 10);
	p[1] = (char)('0' + v % 10);
}

void
signer_date(long long t, char out[17])
{
	long long	 days, secs;
	int		 y, m, d;

	/* Clamp to what four year digits can say: 1970 .. 9999-12-31. */
	if (t < 0)
		t = 0;
	if (t > 253402300799LL)
		t = 253402300799LL;
	days = t / 86400;
	secs = t % 86400;
	civil_from_days(days, &y, &m, &d);
	put2(out, y / 100);
	put2(out + 2, y % 100);
	put2(out + 4, m);
	put2(out + 6, d);
	out[8] = 'T';
	put2(out + 9, (int)(secs / 3600));
	put2(out + 11, (int)(secs / 60 % 60));
	put2(out + 13, (int)(secs % 60));
	out[15] = 'Z';
	out[16] = '\0';
}
