/*
 * Unit tests for the credential modules: the DIS Agent's encryption (the
 * test vector of spec/dis-api.md, round trips with random salt and IV, and
 * values made by the Java algorithm), which keys are decryptable,
 * cred_resolve (credential files, precedence, decryption, messages that
 * name where a value came from and never the value), the proxy translation
 * of NON_PROXY_HOSTS, and the parsing and renewal policy of the ECS
 * metadata client.
 */
#include "config.h"

#include <sys/stat.h>

#include <check.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "conf/conf.h"
#include "conf/cred.h"
#include "conf/proxyconf.h"
#include "dis/ecsmeta.h"
#include "testutil.h"

static const uint8_t	 vsalt[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
static const uint8_t	 viv[16] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
	12, 13, 14, 15 };

/* hex("0001020304050607::000102...0f::654f31ac42acca7178dc65a3d9aa41dc") */
#define VECTOR_CT \
	"303030313032303330343035303630373a3a3030303130323033303430353036" \
	"3037303830393061306230633064306530663a3a363534663331616334326163" \
	"6361373137386463363561336439616134316463"

/*
 * Made by the Java algorithm (javax.crypto: PBKDF2WithHmacSHA1 with a
 * PBEKeySpec of 1000 iterations and 128 bits, AES/CBC/PKCS5Padding,
 * SecureRandom salt and IV, as EncryptUtils.gen does) on OpenJDK 17.
 */
#define JAVA_ABC_MYAK \
	"323831366165336665376335333832303a3a3165623562353038303665326434" \
	"3463313033306135356239653562636239323a3a373531353536656232646366" \
	"6530396132303963383134343830383731313937"

/* Key "clé-Ωmega" (UTF-8), 39-character value. */
#define JAVA_UTF8_KEY \
	"353135316432373035333261363864373a3a3533663932636233393032303739" \
	"6662363230636636633334333230666339663a3a353130393863316637616464" \
	"6539636161383831316133373762373563326239613763383765343966333232" \
	"3031383162373130663337383134376138663631396665303933663032323436" \
	"3434333937636463313530393365353661666363"

/* The DIS Agent's built-in key (no encrypt.key). */
#define JAVA_DEFAULT_KEY \
	"633135613230323561363739393834303a3a6632383837646438663637336663" \
	"3262343037656461366435623961643731623a3a666564623062383639646535" \
	"6138653232623435373437626533313266616435663430626461643635383439" \
	"3332666635306430356335643833306631363736303333343534666130623230" \
	"3930376234343063343462316238636439623530"


static void
hexstr(const uint8_t *p, size_t n, char *out)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
}

START_TEST(derive_key_test_vector)
{
	uint8_t	 key[CRED_KEY_LEN];
	char	 hex[2 * CRED_KEY_LEN + 1];

	ck_assert_int_eq(cred_derive("abc", vsalt, sizeof(vsalt), key), 0);
	hexstr(key, sizeof(key), hex);
	ck_assert_str_eq(hex, "dc48ba29d0131df50ed4847328fd7421");
}
END_TEST

START_TEST(encrypt_test_vector)
{
	char	*ct;

	ct = cred_encrypt_with("MYAK", 4, "abc", vsalt, viv);
	ck_assert_ptr_nonnull(ct);
	ck_assert_str_eq(ct, VECTOR_CT);
	ck_assert_uint_eq(strlen(ct), CRED_CIPHER_MIN);
	free(ct);
}
END_TEST

/*
 * "MYAK" under the key "abc" as DIS Agent 1.2.4 encrypts it when built
 * against the SDK it pins, 1.3.15 (AES-256-GCM; a random gen() of that
 * SDK's own code: tests/data/sdk-record-codecs.txt, row gcm1315-gen).
 */
#define JAVA_1315_ABC_MYAK \
	"3635666332323730613239306331383462303630666164363766303461626533" \
	"3a3a393064323066386532346463623866633731323236323766333735663436" \
	"37393a3a35356463356238646461363636653330613337633830396262646363" \
	"373536313033623135333862"

START_TEST(decrypt_test_vector)
{
	char	*pt;

	ck_assert_int_eq(cred_decrypt(VECTOR_CT, "abc", &pt), 0);
	ck_assert_str_eq(pt, "MYAK");
	secret_free(pt);
}
END_TEST

/* Random salt and IV: two encryptions differ, both decrypt; the length
 * grows by 64 characters per 16 bytes of value. */
START_TEST(round_trip_random_salt_and_iv)
{
	static const struct { const char *v; size_t len; } cases[] = {
		{ "fifteen-chars!!", 168 },
		{ "sixteen-chars!!!", 232 },
		{ "a-secret-key-of-forty-characters-012345", 296 },
	};
	char	*a, *b, *pt;
	size_t	 i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		a = cred_encrypt(cases[i].v, strlen(cases[i].v), "k3y");
		b = cred_encrypt(cases[i].v, strlen(cases[i].v), "k3y");
		ck_assert_ptr_nonnull(a);
		ck_assert_ptr_nonnull(b);
		ck_assert_str_ne(a, b);
		ck_assert_uint_eq(strlen(a), cases[i].len);
		ck_assert(cred_looks_encrypted(a));
		ck_assert_int_eq(cred_decrypt(a, "k3y", &pt), 0);
		ck_assert_str_eq(pt, cases[i].v);
		secret_free(pt);
		ck_assert_int_eq(cred_decrypt(b, "k3y", &pt), 0);
		ck_assert_str_eq(pt, cases[i].v);
		secret_free(pt);
		free(a);
		free(b);
	}
}
END_TEST

START_TEST(decrypts_values_made_by_java)
{
	char	*pt;

	ck_assert_int_eq(cred_decrypt(JAVA_ABC_MYAK, "abc", &pt), 0);
	ck_assert_str_eq(pt, "MYAK");
	secret_free(pt);
	ck_assert_int_eq(cred_decrypt(JAVA_UTF8_KEY, "cl\xc3\xa9-\xce\xa9mega",
	    &pt), 0);
	ck_assert_str_eq(pt, "Zq9SecretValue7x-with-40-characters-xyz");
	secret_free(pt);
	ck_assert_int_eq(cred_decrypt(JAVA_DEFAULT_KEY, CRED_DEFAULT_KEY, &pt),
	    0);
	ck_assert_str_eq(pt, "e2e-Secret-Key-0123456789abcdefXYZ");
	secret_free(pt);
}
END_TEST

START_TEST(decrypts_values_of_dis_agent_built_on_sdk_1_3_15)
{
	char	 ct[] = JAVA_1315_ABC_MYAK, *pt = (char *)"x";

	ck_assert(cred_looks_encrypted(ct));
	ck_assert_int_eq(cred_decrypt(ct, "abc", &pt), 0);
	ck_assert_str_eq(pt, "MYAK");
	secret_free(pt);
	/* GCM's tag refuses a wrong key every time. */
	ck_assert_int_eq(cred_decrypt(ct, "abd", &pt), -EBADMSG);
	ck_assert_ptr_null(pt);
}
END_TEST

START_TEST(wrong_key_or_damage_is_refused)
{
	char	 ct[] = JAVA_ABC_MYAK, *pt = (char *)"x";
	size_t	 n = strlen(ct);

	ck_assert_int_eq(cred_decrypt(ct, "abd", &pt), -EBADMSG);
	ck_assert_ptr_null(pt);
	/* Upper case hex is hex too (Java's Character.digit). */
	for (size_t i = 0; i < n; i++)
		ct[i] = (char)toupper((unsigned char)ct[i]);
	ck_assert_int_eq(cred_decrypt(ct, "abc", &pt), 0);
	secret_free(pt);
	/* Not hex, odd length, no "::" fields, a short IV. */
	ck_assert_int_eq(cred_decrypt("zz", "abc", &pt), -EINVAL);
	ck_assert_int_eq(cred_decrypt("abc", "abc", &pt), -EINVAL);
	ck_assert_int_eq(cred_decrypt("6162", "abc", &pt), -EINVAL);
	ck_assert_int_eq(cred_decrypt("30303a3a30303a3a3030", "abc", &pt),
	    -EINVAL);
	ck_assert(!cred_looks_encrypted("abc"));
}
END_TEST

START_TEST(decryptable_keys_are_the_dis_agents)
{
	ck_assert(cred_decryptable("ak"));
	ck_assert(cred_decryptable("sk"));
	ck_assert(cred_decryptable("dataPassword"));
	ck_assert(cred_decryptable("PROXY_PASSWORD"));
	ck_assert(cred_decryptable("db.Pwd"));
	ck_assert(cred_decryptable("bypass"));
	ck_assert(!cred_decryptable("projectId"));
	ck_assert(!cred_decryptable("region"));
	ck_assert(!cred_decryptable("security.token"));
	ck_assert(!cred_decryptable("encrypt.key"));
	ck_assert(!cred_decryptable("PROXY_USERNAME"));
}
END_TEST

/* --- cred_resolve -------------------------------------------------------- */

static char	 dir[256];
static char	 credir[PATH_MAX];
static char	 ini[PATH_MAX];
static char	*ak, *sk, *tok, *ekey, *pw;
static struct cred_item items[5];

static const char *
no_blanks(const char *s)
{
	return strchr(s, ' ') != NULL ? "has a blank" : NULL;
}

static void
item(struct cred_item *it, const char *key, char **v, const char *init,
    bool from_dir, bool secret)
{
	*v = xstrdup(init);
	memset(it, 0, sizeof(*it));
	it->key = key;
	it->value = v;
	it->from_dir = from_dir;
	it->secret = secret;
	it->decrypt = cred_decryptable(key);
	it->check = no_blanks;
}

static void
resolve_setup(void)
{
	tu_tmpdir(dir, sizeof(dir), "check_cred");
	tu_path(credir, sizeof(credir), dir, "creds");
	tu_path(ini, sizeof(ini), dir, "agent.ini");
	ck_assert_int_eq(mkdir(credir, 0700), 0);
	tu_write_str(ini, "[agent]\n");
	ck_assert_int_eq(chmod(ini, 0600), 0);
	setenv("CREDENTIALS_DIRECTORY", credir, 1);
	item(&items[0], "ak", &ak, "", true, false);
	item(&items[1], "sk", &sk, "", true, true);
	item(&items[2], "security.token", &tok, "", true, true);
	item(&items[3], "encrypt.key", &ekey, "", true, true);
	item(&items[4], "PROXY_PASSWORD", &pw, "", false, true);
}

static void
resolve_teardown(void)
{
	unsetenv("CREDENTIALS_DIRECTORY");
	secret_free(ak);
	secret_free(sk);
	secret_free(tok);
	secret_free(ekey);
	secret_free(pw);
	tu_rmtree(dir);
}

static void
cred_file(const char *name, const char *text, mode_t mode)
{
	char	 p[PATH_MAX];

	tu_path(p, sizeof(p), credir, name);
	tu_write_str(p, text);
	ck_assert_int_eq(chmod(p, mode), 0);
}

static void
set(char **v, const char *s)
{
	secret_free(*v);
	*v = xstrdup(s);
}

static int
resolve(char *err, size_t len)
{
	err[0] = '\0';
	return cred_resolve(items, ARRAY_SIZE(items), ini, err, len);
}

START_TEST(directory_supplies_what_nobody_set)
{
	char	 err[1024];

	cred_file("ak", "DIRAK\n", 0400);
	cred_file("sk", "dir-sk\r\n", 0400);
	cred_file("security.token", "TOKEN", 0400);
	cred_file("PROXY_PASSWORD", "never-read", 0400);
	set(&ak, "FILEAK");
	items[0].line = 3;
	ck_assert_int_eq(resolve(err, sizeof(err)), 0);
	ck_assert_str_eq(ak, "FILEAK");		/* agent.ini wins */
	ck_assert(!items[0].dir_used);
	ck_assert_str_eq(sk, "dir-sk");		/* one newline dropped */
	ck_assert(items[1].dir_used);
	ck_assert_str_eq(tok, "TOKEN");
	ck_assert_str_eq(pw, "");		/* not a credential file */
}
END_TEST

START_TEST(environment_beats_directory)
{
	char	 err[1024];

	cred_file("sk", "dir-sk", 0400);
	set(&sk, "env-sk");
	items[1].env = "DIS_SK";
	ck_assert_int_eq(resolve(err, sizeof(err)), 0);
	ck_assert_str_eq(sk, "env-sk");
}
END_TEST

START_TEST(directory_values_are_checked)
{
	char	 err[1024];
	char	 want[PATH_MAX + 64];

	cred_file("sk", "has a blank", 0400);
	ck_assert_int_eq(resolve(err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s/sk: the value has a blank", credir);
	ck_assert_str_eq(err, want);
	ck_assert_ptr_null(strstr(err, "has a blank has"));
}
END_TEST

START_TEST(decrypts_with_encrypt_key_from_directory)
{
	char	 err[1024], *c1, *c2;

	c1 = cred_encrypt("PLAINAK", 7, "the-key");
	c2 = cred_encrypt("proxy-pw", 8, "the-key");
	set(&ak, c1);
	items[0].line = 2;
	set(&pw, c2);
	items[4].line = 5;
	cred_file("encrypt.key", "the-key\n", 0400);
	ck_assert_int_eq(resolve(err, sizeof(err)), 0);
	ck_assert_str_eq(ak, "PLAINAK");
	ck_assert_str_eq(pw, "proxy-pw");
	ck_assert(items[0].decrypted);
	ck_assert_str_eq(ekey, "");		/* wiped once used */
	free(c1);
	free(c2);
}
END_TEST

START_TEST(decrypt_failure_names_key_and_line_only)
{
	char	 err[1024], want[PATH_MAX + 128], *c;

	c = cred_encrypt("Secret-Plain-Value", 18, "right");
	set(&sk, c);
	items[1].line = 4;
	set(&ekey, "wrong");
	items[3].line = 6;
	ck_assert_int_eq(resolve(err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s:4: sk: cannot decrypt the value with "
	    "encrypt.key (a wrong key, or a damaged value)", ini);
	ck_assert_str_eq(err, want);
	ck_assert_ptr_null(strstr(err, c));
	ck_assert_ptr_null(strstr(err, "wrong,"));
	free(c);
}
END_TEST

START_TEST(decrypt_failure_from_environment)
{
	char	 err[1024], want[PATH_MAX + 160], *c;

	c = cred_encrypt("Secret-Plain-Value", 18, "right");
	set(&sk, c);
	items[1].env = "DIS_SK";
	ck_assert_int_eq(resolve(err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s: sk (from DIS_SK): cannot decrypt "
	    "the value with the DIS Agent's built-in key; set encrypt.key (or "
	    "DIS_ENCRYPT_KEY, or the credential encrypt.key)", ini);
	ck_assert_str_eq(err, want);
	free(c);
}
END_TEST

START_TEST(built_in_key_without_encrypt_key)
{
	char	 err[1024];

	set(&sk, JAVA_DEFAULT_KEY);
	items[1].line = 3;
	ck_assert_int_eq(resolve(err, sizeof(err)), 0);
	ck_assert_str_eq(sk, "e2e-Secret-Key-0123456789abcdefXYZ");
}
END_TEST

START_TEST(long_value_that_is_not_hex_is_an_error)
{
	char	 err[1024], v[200];

	memset(v, 'Q', sizeof(v) - 1);
	v[sizeof(v) - 1] = '\0';
	cred_file("sk", v, 0400);
	ck_assert_int_eq(resolve(err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "/sk: the value is 168 characters "
	    "or more, so it must be encrypted, but it is not hexadecimal"));
	ck_assert_ptr_null(strstr(err, "QQQ"));
}
END_TEST

START_TEST(unreadable_credential_file_is_an_error)
{
	char	 err[1024], p[PATH_MAX];

	tu_path(p, sizeof(p), credir, "sk");
	ck_assert_int_eq(mkdir(p, 0700), 0);	/* not a regular file */
	ck_assert_int_eq(resolve(err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "/creds/sk: cannot read the "
	    "credential"));
}
END_TEST

/* --- proxies ------------------------------------------------------------- */

static const char *
noproxy(const char *in, int *rc)
{
	static struct buf b;
	static char	 why[160];

	buf_cleanup(&b);
	buf_init(&b);
	*rc = proxy_noproxy(in, &b, why, sizeof(why));
	return *rc == 0 ? (b.data != NULL ? b.data : "") : why;
}

START_TEST(non_proxy_hosts_translate_to_curl)
{
	int	 rc;

	ck_assert_str_eq(noproxy("localhost|127.0.0.1", &rc),
	    "localhost,127.0.0.1");
	ck_assert_str_eq(noproxy(" *.Example.COM | intranet ,10.1.* ", &rc),
	    ".example.com,intranet,10.1.0.0/16");
	ck_assert_str_eq(noproxy("10.*|192.168.1.*", &rc),
	    "10.0.0.0/8,192.168.1.0/24");
	ck_assert_str_eq(noproxy("*", &rc), "*");
	ck_assert_str_eq(noproxy("||", &rc), "");
	ck_assert_str_eq(noproxy("::1", &rc), "::1");
	ck_assert_str_eq(noproxy("a|dis-*.com", &rc), "has the pattern "
	    "'dis-*.com', which cannot be used: write a host name, *.domain, "
	    "an IP address, a.b.* or *");
	ck_assert_int_eq(rc, -EINVAL);
	noproxy("*example.com", &rc);
	ck_assert_int_eq(rc, -EINVAL);
	noproxy("1.2.3.4.*", &rc);
	ck_assert_int_eq(rc, -EINVAL);
	noproxy("300.*", &rc);
	ck_assert_int_eq(rc, -EINVAL);
	noproxy("", &rc);
}
END_TEST

START_TEST(proxy_host_is_a_host)
{
	ck_assert_ptr_null(proxy_check_host("proxy.example.com"));
	ck_assert_ptr_null(proxy_check_host("10.0.0.1"));
	ck_assert_ptr_null(proxy_check_host("fd00::1"));
	ck_assert_ptr_null(proxy_check_host("[fd00::1]"));
	ck_assert_ptr_nonnull(proxy_check_host("http://proxy:3128"));
	ck_assert_ptr_nonnull(proxy_check_host("user@proxy"));
	ck_assert_ptr_nonnull(proxy_check_host("proxy/x"));
}
END_TEST

/* --- ECS metadata -------------------------------------------------------- */

START_TEST(securitykey_reply_parses)
{
	static const char body[] = "{\"credential\":{\"access\":\"TMPAK\","
	    "\"secret\":\"tmp/sk+\",\"securitytoken\":\"gQpjbi1ub3J0aC0x\","
	    "\"expires_at\":\"2030-01-02T03:04:05.000000Z\"}}";
	struct ecsmeta_keys k;

	ck_assert_int_eq(ecsmeta_parse(body, strlen(body), &k), 0);
	ck_assert_str_eq(k.ak, "TMPAK");
	ck_assert_str_eq(k.sk, "tmp/sk+");
	ck_assert_str_eq(k.token, "gQpjbi1ub3J0aC0x");
	ck_assert_int_eq(k.expires_at, 1893553445);
	ecsmeta_keys_clear(&k);
	ck_assert_ptr_null(k.ak);
}
END_TEST

START_TEST(securitykey_reply_refused)
{
	static const char *const bad[] = {
		"{}", "[1]", "not json",
		"{\"credential\":{\"access\":\"A\",\"secret\":\"S\","
		"\"expires_at\":\"2030-01-02T03:04:05Z\"}}",
		"{\"credential\":{\"access\":\"A\",\"secret\":\"S\","
		"\"securitytoken\":\"T\",\"expires_at\":\"tomorrow\"}}",
		"{\"credential\":{\"access\":\"A\",\"secret\":\"S\\r\\nX: y\","
		"\"securitytoken\":\"T\",\"expires_at\":\"2030-01-02T03:04:05Z\"}}",
		"{\"credential\":{\"access\":\"\",\"secret\":\"S\","
		"\"securitytoken\":\"T\",\"expires_at\":\"2030-01-02T03:04:05Z\"}}",
	};
	struct ecsmeta_keys k;
	size_t		 i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		ck_assert_int_eq(ecsmeta_parse(bad[i], strlen(bad[i]), &k),
		    -EINVAL);
		ck_assert_ptr_null(k.ak);
	}
}
END_TEST

START_TEST(expiry_times_and_renewal)
{
	int64_t	 t;

	ck_assert_int_eq(ecsmeta_parse_time("1970-01-01T00:00:10Z", &t), 0);
	ck_assert_int_eq(t, 10);
	ck_assert_int_eq(ecsmeta_parse_time("2024-02-29T23:59:59.123Z", &t), 0);
	ck_assert_int_eq(t, 1709251199);
	ck_assert_int_eq(ecsmeta_parse_time("2024-02-29 23:59:59Z", &t),
	    -EINVAL);
	ck_assert_int_eq(ecsmeta_parse_time("2024-13-01T00:00:00Z", &t),
	    -EINVAL);
	ck_assert_int_eq(ecsmeta_parse_time("2024-01-01T00:00:00", &t),
	    -EINVAL);
	/* Halfway, at least 1 s, at most 6 h; past expiry: a minute. */
	ck_assert_uint_eq(ecsmeta_refresh_ms(3600), 1800000);
	ck_assert_uint_eq(ecsmeta_refresh_ms(1), 1000);
	ck_assert_uint_eq(ecsmeta_refresh_ms(86400), 6 * 3600 * 1000);
	ck_assert_uint_eq(ecsmeta_refresh_ms(0), 60000);
	ck_assert_uint_eq(ecsmeta_refresh_ms(-5), 60000);
}
END_TEST


/* --- conf_load with credentials ------------------------------------------ */

#define FLOW "[flow:app]\nDISStream = s1\nfilePattern = /var/log/a.log\n"

static void
conf_env_clear(void)
{
	unsetenv("DIS_AK");
	unsetenv("DIS_SK");
	unsetenv("DIS_SECURITY_TOKEN");
	unsetenv("DIS_ENCRYPT_KEY");
	unsetenv("DIS_DATA_PASSWORD");
	unsetenv("CREDENTIALS_DIRECTORY");
}

static void
conf_setup(void)
{
	conf_env_clear();
	tu_tmpdir(dir, sizeof(dir), "check_cred_conf");
	tu_path(ini, sizeof(ini), dir, "agent.ini");
	tu_path(credir, sizeof(credir), dir, "creds");
}

static void
conf_teardown(void)
{
	conf_env_clear();
	tu_rmtree(dir);
}

/* Load text from dir/agent.ini (mode 0600); err without the path. */
static int
load(const char *text, unsigned opts, struct conf **c, char *err, size_t len)
{
	char	 full[1024];
	int	 rc;

	tu_write_str(ini, text);
	ck_assert_int_eq(chmod(ini, 0600), 0);
	*c = NULL;
	rc = conf_load_opts(ini, opts, c, full, sizeof(full));
	if (rc != 0 && strncmp(full, ini, strlen(ini)) == 0)
		snprintf(err, len, "FILE%.900s", full + strlen(ini));
	else if (rc != 0)
		snprintf(err, len, "%.1000s", full);
	return rc;
}

/* Encrypted ak, sk and PROXY_PASSWORD on lines longer than inih's 199
 * characters; encrypt.key with an inline comment. */
START_TEST(conf_decrypts_long_encrypted_values)
{
	struct buf	 t;
	struct conf	*c;
	char		 err[1024];
	char		*eak, *esk, *epw;

	eak = cred_encrypt("AKIDEXAMPLE000000001", 20, "Ke y");
	esk = cred_encrypt("Secret-Access-Key-Of-Forty-Characters-01", 40,
	    "Ke y");
	epw = cred_encrypt("proxy pass", 10, "Ke y");
	buf_init(&t);
	buf_printf(&t, "[agent]\nregion = cn-north-4\nprojectId = p\n"
	    "ak = %s\nsk   :   %s   ; the secret key\nencrypt.key = Ke y ; k\n"
	    "PROXY_HOST = proxy.example.com\nPROXY_USERNAME = me\n"
	    "PROXY_PASSWORD = %s\n" FLOW, eak, esk, epw);
	ck_assert_int_gt(strlen(eak) + 5, 199);
	ck_assert_int_eq(load(t.data, 0, &c, err, sizeof(err)), 0);
	ck_assert_str_eq(c->ak, "AKIDEXAMPLE000000001");
	ck_assert_str_eq(c->sk, "Secret-Access-Key-Of-Forty-Characters-01");
	ck_assert_str_eq(c->proxy_password, "proxy pass");
	ck_assert_str_eq(c->encrypt_key, "");
	ck_assert_int_eq(c->proxy_port, 80);
	ck_assert_str_eq(c->proxy_protocol, "http");
	conf_free(c);
	/* Without the credentials (disagent status): nothing decrypted. */
	ck_assert_int_eq(load(t.data, CONF_NO_CREDENTIALS, &c, err,
	    sizeof(err)), 0);
	ck_assert_str_eq(c->sk, esk);
	conf_free(c);
	buf_cleanup(&t);
	free(eak);
	free(esk);
	free(epw);
}
END_TEST

/*
 * data.password is a secret like sk: encrypted with encrypt.key, from
 * DIS_DATA_PASSWORD or the systemd credential data.password, required by
 * data.encrypt.enabled, and never in a message.
 */
START_TEST(conf_data_password_is_a_secret)
{
	struct buf	 t;
	struct conf	*c;
	char		 err[1024], p[PATH_MAX], *epw;

	epw = cred_encrypt("pässwörd data", strlen("pässwörd data"), "K");
	buf_init(&t);
	buf_printf(&t, "[agent]\nregion = r\nprojectId = p\nak = a\nsk = s\n"
	    "data.encrypt.enabled = true\ndata.compress.enabled = true\n"
	    "data.password = %s\n" FLOW, epw);
	setenv("DIS_ENCRYPT_KEY", "K", 1);
	ck_assert_int_eq(load(t.data, 0, &c, err, sizeof(err)), 0);
	ck_assert_str_eq(c->data_password, "pässwörd data");
	ck_assert(c->data_encrypt && c->data_compress);
	conf_free(c);
	/* The wrong key: the line, never the value. */
	setenv("DIS_ENCRYPT_KEY", "not K", 1);
	ck_assert_int_eq(load(t.data, 0, &c, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "FILE:8: data.password: cannot decrypt the value "
	    "with encrypt.key (a wrong key, or a damaged value)");
	unsetenv("DIS_ENCRYPT_KEY");
	/* Required with data.encrypt.enabled. */
	ck_assert_int_eq(load("[agent]\nregion = r\nprojectId = p\nak = a\n"
	    "sk = s\ndata.encrypt.enabled = true\n" FLOW, 0, &c, err,
	    sizeof(err)), -1);
	ck_assert_str_eq(err, "FILE:6: data.encrypt.enabled needs "
	    "data.password (or set DIS_DATA_PASSWORD, or give the systemd "
	    "credential data.password)");
	/* The environment, then the systemd credential. */
	setenv("DIS_DATA_PASSWORD", "from-env", 1);
	ck_assert_int_eq(load("[agent]\nregion = r\nprojectId = p\nak = a\n"
	    "sk = s\ndata.encrypt.enabled = true\n" FLOW, 0, &c, err,
	    sizeof(err)), 0);
	ck_assert_str_eq(c->data_password, "from-env");
	conf_free(c);
	unsetenv("DIS_DATA_PASSWORD");
	ck_assert_int_eq(mkdir(credir, 0700), 0);
	tu_path(p, sizeof(p), credir, "data.password");
	tu_write_str(p, "from-dir\n");
	ck_assert_int_eq(chmod(p, 0600), 0);
	setenv("CREDENTIALS_DIRECTORY", credir, 1);
	ck_assert_int_eq(load("[agent]\nregion = r\nprojectId = p\nak = a\n"
	    "sk = s\ndata.encrypt.enabled = true\n" FLOW, 0, &c, err,
	    sizeof(err)), 0);
	ck_assert_str_eq(c->data_password, "from-dir");
	conf_free(c);
	/* A control character is not a password, and is not shown. */
	ck_assert_int_eq(load("[agent]\nregion = r\nprojectId = p\nak = a\n"
	    "sk = s\ndata.password = a\x01secret\n" FLOW, 0, &c, err,
	    sizeof(err)), -1);
	ck_assert_ptr_null(strstr(err, "secret"));
	buf_cleanup(&t);
	free(epw);
}
END_TEST

/* inih's value rules hold for stashed values too. */
START_TEST(conf_stashed_values_follow_inih)
{
	struct conf	*c;
	char		 err[1024];

	ck_assert_int_eq(load("[agent]\nregion = r\nprojectId = p\nak = a\n"
	    "sk = s;t\nsecurity.token =  TOK  ; c\n" FLOW, 0, &c, err,
	    sizeof(err)), 0);
	ck_assert_str_eq(c->sk, "s;t");
	ck_assert_str_eq(c->security_token, "TOK");
	conf_free(c);
	ck_assert_int_eq(load("[agent]\nregion = r\nprojectId = p\nak = a\n"
	    "sk = ;x\n" FLOW, 0, &c, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "FILE:5: sk: must not be empty");
	ck_assert_int_eq(load("[agent]\nregion = r\nprojectId = p\nak = a\n"
	    "sk = s\nsk = t\n" FLOW, 0, &c, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "FILE:6: duplicate key 'sk' in [agent] (first at "
	    "line 5)");
}
END_TEST

START_TEST(conf_long_line_limit_for_stashed_keys)
{
	struct buf	 t;
	struct conf	*c;
	char		 err[1024];
	size_t		 i;

	buf_init(&t);
	buf_addstr(&t, "[agent]\nsecurity.token = ");
	for (i = 0; i < 8200; i++)
		buf_addc(&t, 'T');
	buf_addstr(&t, "\n");
	ck_assert_int_eq(load(t.data, 0, &c, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "FILE:2: line longer than 8191 characters");
	buf_reset(&t);
	buf_addstr(&t, "[agent]\nregion = ");
	for (i = 0; i < 300; i++)
		buf_addc(&t, 'r');
	buf_addstr(&t, "\n");
	ck_assert_int_eq(load(t.data, 0, &c, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "FILE:2: line longer than 199 characters");
	buf_cleanup(&t);
}
END_TEST

START_TEST(conf_credentials_directory_and_environment)
{
	struct conf	*c;
	char		 err[1024], p[PATH_MAX];

	ck_assert_int_eq(mkdir(credir, 0700), 0);
	tu_path(p, sizeof(p), credir, "ak");
	tu_write_str(p, "DIRAK\n");
	tu_path(p, sizeof(p), credir, "sk");
	tu_write_str(p, "DIRSK");
	tu_path(p, sizeof(p), credir, "security.token");
	tu_write_str(p, "DIRTOKEN");
	setenv("CREDENTIALS_DIRECTORY", credir, 1);
	setenv("DIS_SECURITY_TOKEN", "ENVTOKEN", 1);
	ck_assert_int_eq(load("[agent]\nregion = r\nprojectId = p\nsk = INI\n"
	    FLOW, 0, &c, err, sizeof(err)), 0);
	ck_assert_str_eq(c->ak, "DIRAK");
	ck_assert_str_eq(c->sk, "INI");
	ck_assert_str_eq(c->security_token, "ENVTOKEN");
	conf_free(c);
	unsetenv("CREDENTIALS_DIRECTORY");
	ck_assert_int_eq(load("[agent]\nregion = r\nprojectId = p\nsk = INI\n"
	    FLOW, 0, &c, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "FILE:1: [agent] is missing required key 'ak' "
	    "(or set DIS_AK, or give the systemd credential ak)");
}
END_TEST

START_TEST(conf_ecs_metadata_takes_no_keys)
{
	struct conf	*c;
	char		 err[1024];

	ck_assert_int_eq(load("[agent]\nregion = r\nprojectId = p\n"
	    "credentialSource = ECS-Metadata\n" FLOW, 0, &c, err, sizeof(err)),
	    0);
	ck_assert_str_eq(c->credential_source, "ecs-metadata");
	ck_assert_str_eq(c->ecs_endpoint, "http://169.254.169.254");
	ck_assert_str_eq(c->ak, "");
	conf_free(c);
	ck_assert_int_eq(load("[agent]\nregion = r\nprojectId = p\nsk = s\n"
	    "credentialSource = ecs-metadata\n" FLOW, 0, &c, err, sizeof(err)),
	    -1);
	ck_assert_str_eq(err, "FILE:4: sk is not used with credentialSource = "
	    "ecs-metadata: remove it");
	setenv("DIS_SECURITY_TOKEN", "T", 1);
	ck_assert_int_eq(load("[agent]\nregion = r\nprojectId = p\n"
	    "credentialSource = ecs-metadata\n" FLOW, 0, &c, err, sizeof(err)),
	    -1);
	ck_assert_str_eq(err, "FILE: DIS_SECURITY_TOKEN is set, but "
	    "credentialSource = ecs-metadata takes the keys from the metadata "
	    "service: unset it");
}
END_TEST

START_TEST(conf_proxy_keys_are_checked)
{
	struct conf	*c;
	char		 err[1024];

	ck_assert_int_eq(load("[agent]\nregion = r\nprojectId = p\nak = a\n"
	    "sk = s\nPROXY_HOST = http://p:3128\n" FLOW, 0, &c, err,
	    sizeof(err)), -1);
	ck_assert_str_eq(err, "FILE:6: PROXY_HOST = http://p:3128 is a URL: "
	    "give the host name only (PROXY_PROTOCOL and PROXY_PORT say the "
	    "rest)");
	ck_assert_int_eq(load("[agent]\nregion = r\nprojectId = p\nak = a\n"
	    "sk = s\nPROXY_PASSWORD = hunter2\n" FLOW, 0, &c, err,
	    sizeof(err)), -1);
	ck_assert_str_eq(err, "FILE:6: PROXY_PASSWORD needs PROXY_USERNAME");
	ck_assert_int_eq(load("[agent]\nregion = r\nprojectId = p\nak = a\n"
	    "sk = s\nNON_PROXY_HOSTS = a|*b*\n" FLOW, 0, &c, err,
	    sizeof(err)), -1);
	ck_assert_str_eq(err, "FILE:6: NON_PROXY_HOSTS = a|*b* has the pattern "
	    "'*b*', which cannot be used: write a host name, *.domain, an IP "
	    "address, a.b.* or *");
	ck_assert_int_eq(load("[agent]\nregion = r\nprojectId = p\nak = a\n"
	    "sk = s\nPROXY_PROTOCOL = HTTPS\nPROXY_PORT = 3128\n" FLOW, 0, &c,
	    err, sizeof(err)), 0);
	ck_assert_str_eq(c->proxy_protocol, "https");
	ck_assert_int_eq(c->proxy_port, 3128);
	conf_free(c);
}
END_TEST

/* disagent -t under ExecReload= (systemd 252): the directory is hidden. */
START_TEST(conf_check_only_without_readable_credentials)
{
	struct conf	*c;
	char		 err[1024], hidden[PATH_MAX];
	const char	*text = "[agent]\nregion = r\nprojectId = p\n" FLOW;

	tu_path(hidden, sizeof(hidden), dir, "not-there");
	setenv("CREDENTIALS_DIRECTORY", hidden, 1);
	ck_assert_int_eq(load(text, CONF_CHECK_ONLY, &c, err, sizeof(err)), 0);
	ck_assert_str_eq(c->ak, "");
	conf_free(c);
	ck_assert_int_eq(load(text, 0, &c, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "FILE:1: [agent] is missing required key 'ak' "
	    "(or set DIS_AK, or give the systemd credential ak)");
	/* A readable directory is read, -t or not. */
	ck_assert_int_eq(mkdir(credir, 0700), 0);
	setenv("CREDENTIALS_DIRECTORY", credir, 1);
	ck_assert_int_eq(load(text, CONF_CHECK_ONLY, &c, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "FILE:1: [agent] is missing required key 'ak' "
	    "(or set DIS_AK, or give the systemd credential ak)");
}
END_TEST

/* A wrong key is an error naming the line; the value never shows. */
START_TEST(conf_decrypt_error_names_line_not_value)
{
	struct buf	 t;
	struct conf	*c;
	char		 err[1024], *esk;

	esk = cred_encrypt("Secret-Access-Key-Of-Forty-Characters-01", 40,
	    "right");
	buf_init(&t);
	buf_printf(&t, "[agent]\nregion = r\nprojectId = p\nak = a\n"
	    "sk = %s\n" FLOW, esk);
	setenv("DIS_ENCRYPT_KEY", "wrong", 1);
	ck_assert_int_eq(load(t.data, 0, &c, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "FILE:5: sk: cannot decrypt the value with "
	    "encrypt.key (a wrong key, or a damaged value)");
	setenv("DIS_ENCRYPT_KEY", "right", 1);
	ck_assert_int_eq(load(t.data, 0, &c, err, sizeof(err)), 0);
	ck_assert_str_eq(c->sk, "Secret-Access-Key-Of-Forty-Characters-01");
	conf_free(c);
	buf_cleanup(&t);
	free(esk);
}
END_TEST

static Suite *
cred_suite(void)
{
	Suite	*s = suite_create("cred");
	TCase	*tc;

	tc = tcase_create("crypto");
	tcase_add_test(tc, derive_key_test_vector);
	tcase_add_test(tc, encrypt_test_vector);
	tcase_add_test(tc, decrypt_test_vector);
	tcase_add_test(tc, round_trip_random_salt_and_iv);
	tcase_add_test(tc, decrypts_values_made_by_java);
	tcase_add_test(tc, decrypts_values_of_dis_agent_built_on_sdk_1_3_15);
	tcase_add_test(tc, wrong_key_or_damage_is_refused);
	tcase_add_test(tc, decryptable_keys_are_the_dis_agents);
	suite_add_tcase(s, tc);

	tc = tcase_create("resolve");
	tcase_add_checked_fixture(tc, resolve_setup, resolve_teardown);
	tcase_add_test(tc, directory_supplies_what_nobody_set);
	tcase_add_test(tc, environment_beats_directory);
	tcase_add_test(tc, directory_values_are_checked);
	tcase_add_test(tc, decrypts_with_encrypt_key_from_directory);
	tcase_add_test(tc, decrypt_failure_names_key_and_line_only);
	tcase_add_test(tc, decrypt_failure_from_environment);
	tcase_add_test(tc, built_in_key_without_encrypt_key);
	tcase_add_test(tc, long_value_that_is_not_hex_is_an_error);
	tcase_add_test(tc, unreadable_credential_file_is_an_error);
	suite_add_tcase(s, tc);

	tc = tcase_create("conf");
	tcase_add_checked_fixture(tc, conf_setup, conf_teardown);
	tcase_add_test(tc, conf_decrypts_long_encrypted_values);
	tcase_add_test(tc, conf_data_password_is_a_secret);
	tcase_add_test(tc, conf_stashed_values_follow_inih);
	tcase_add_test(tc, conf_long_line_limit_for_stashed_keys);
	tcase_add_test(tc, conf_credentials_directory_and_environment);
	tcase_add_test(tc, conf_ecs_metadata_takes_no_keys);
	tcase_add_test(tc, conf_proxy_keys_are_checked);
	tcase_add_test(tc, conf_decrypt_error_names_line_not_value);
	tcase_add_test(tc, conf_check_only_without_readable_credentials);
	suite_add_tcase(s, tc);

	tc = tcase_create("proxy");
	tcase_add_test(tc, non_proxy_hosts_translate_to_curl);
	tcase_add_test(tc, proxy_host_is_a_host);
	suite_add_tcase(s, tc);

	tc = tcase_create("ecsmeta");
	tcase_add_test(tc, securitykey_reply_parses);
	tcase_add_test(tc, securitykey_reply_refused);
	tcase_add_test(tc, expiry_times_and_renewal);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(cred_suite());
}
