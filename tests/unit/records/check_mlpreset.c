/*
 * Unit tests for the multi-line presets (records/mlpreset.c) and for the
 * framer driven by them: Fluent Bit's own test vectors for its java,
 * python and go multiline parsers (tests/internal/multiline.c in
 * fluent/fluent-bit: java_input, python_input, go_input and their
 * outputs, copied as they are) must come out record for record, byte for
 * byte, whatever the windows the bytes come in and whichever record is
 * refused; then the rules one at a time.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "base/util.h"
#include "records/framer.h"
#include "records/mlpreset.h"
#include "testutil.h"

#define MAXREC	64

static const char *const java_in[] = {
	"Exception in thread \"main\" java.lang.IllegalStateException: ..null property\n",
	"     at com.example.myproject.Author.getBookIds(xx.java:38)\n",
	"     at com.example.myproject.Bootstrap.main(Bootstrap.java:14)\n",
	"Caused by: java.lang.NullPointerException\n",
	"     at com.example.myproject.Book.getId(Book.java:22)\n",
	"     at com.example.myproject.Author.getBookIds(Author.java:35)\n",
	"     ... 1 more\n",
	"single line\n",
	NULL
};

static const char *const java_out[] = {
	"Exception in thread \"main\" java.lang.IllegalStateException: ..null property\n"
	    "     at com.example.myproject.Author.getBookIds(xx.java:38)\n"
	    "     at com.example.myproject.Bootstrap.main(Bootstrap.java:14)\n"
	    "Caused by: java.lang.NullPointerException\n"
	    "     at com.example.myproject.Book.getId(Book.java:22)\n"
	    "     at com.example.myproject.Author.getBookIds(Author.java:35)\n"
	    "     ... 1 more\n",
	"single line\n",
	NULL
};

static const char *const python_in[] = {
	"Traceback (most recent call last):\n",
	"  File \"/base/data/home/runtimes/python27/python27_lib/versions/third_party/webapp2-2.5.2/webapp2.py\", line 1535, in __call__\n",
	"    rv = self.handle_exception(request, response, e)\n",
	"  File \"/base/data/home/apps/s~nearfieldspy/1.378705245900539993/nearfieldspy.py\", line 17, in start\n",
	"    return get()\n",
	"  File \"/base/data/home/apps/s~nearfieldspy/1.378705245900539993/nearfieldspy.py\", line 5, in get\n",
	"    raise Exception('spam', 'eggs')\n",
	"Exception: ('spam', 'eggs')\n",
	"hello world, not multiline\n",
	NULL
};

static const char *const python_out[] = {
	"Traceback (most recent call last):\n"
	    "  File \"/base/data/home/runtimes/python27/python27_lib/versions/third_party/webapp2-2.5.2/webapp2.py\", line 1535, in __call__\n"
	    "    rv = self.handle_exception(request, response, e)\n"
	    "  File \"/base/data/home/apps/s~nearfieldspy/1.378705245900539993/nearfieldspy.py\", line 17, in start\n"
	    "    return get()\n"
	    "  File \"/base/data/home/apps/s~nearfieldspy/1.378705245900539993/nearfieldspy.py\", line 5, in get\n"
	    "    raise Exception('spam', 'eggs')\n"
	    "Exception: ('spam', 'eggs')\n",
	"hello world, not multiline\n",
	NULL
};

static const char *const go_in[] = {
	"panic: my panic\n",
	"\n",
	"goroutine 4 [running]:\n",
	"panic(0x45cb40, 0x47ad70)\n",
	"\t/usr/local/go/src/runtime/panic.go:542 +0x46c fp=0xc42003f7b8 sp=0xc42003f710 pc=0x422f7c\n",
	"main.main.func1(0xc420024120)\n",
	"\tfoo.go:6 +0x39 fp=0xc42003f7d8 sp=0xc42003f7b8 pc=0x451339\n",
	"runtime.goexit()\n",
	"\t/usr/local/go/src/runtime/asm_amd64.s:2337 +0x1 fp=0xc42003f7e0 sp=0xc42003f7d8 pc=0x44b4d1\n",
	"created by main.main\n",
	"\tfoo.go:5 +0x58\n",
	"\n",
	"goroutine 1 [chan receive]:\n",
	"runtime.gopark(0x4739b8, 0xc420024178, 0x46fcd7, 0xc, 0xc420028e17, 0x3)\n",
	"\t/usr/local/go/src/runtime/proc.go:280 +0x12c fp=0xc420053e30 sp=0xc420053e00 pc=0x42503c\n",
	"runtime.goparkunlock(0xc420024178, 0x46fcd7, 0xc, 0x1000f010040c217, 0x3)\n",
	"\t/usr/local/go/src/runtime/proc.go:286 +0x5e fp=0xc420053e70 sp=0xc420053e30 pc=0x42512e\n",
	"runtime.chanrecv(0xc420024120, 0x0, 0xc420053f01, 0x4512d8)\n",
	"\t/usr/local/go/src/runtime/chan.go:506 +0x304 fp=0xc420053f20 sp=0xc420053e70 pc=0x4046b4\n",
	"runtime.chanrecv1(0xc420024120, 0x0)\n",
	"\t/usr/local/go/src/runtime/chan.go:388 +0x2b fp=0xc420053f50 sp=0xc420053f20 pc=0x40439b\n",
	"main.main()\n",
	"\tfoo.go:9 +0x6f fp=0xc420053f80 sp=0xc420053f50 pc=0x4512ef\n",
	"runtime.main()\n",
	"\t/usr/local/go/src/runtime/proc.go:185 +0x20d fp=0xc420053fe0 sp=0xc420053f80 pc=0x424bad\n",
	"runtime.goexit()\n",
	"\t/usr/local/go/src/runtime/asm_amd64.s:2337 +0x1 fp=0xc420053fe8 sp=0xc420053fe0 pc=0x44b4d1\n",
	"\n",
	"goroutine 2 [force gc (idle)]:\n",
	"runtime.gopark(0x4739b8, 0x4ad720, 0x47001e, 0xf, 0x14, 0x1)\n",
	"\t/usr/local/go/src/runtime/proc.go:280 +0x12c fp=0xc42003e768 sp=0xc42003e738 pc=0x42503c\n",
	"runtime.goparkunlock(0x4ad720, 0x47001e, 0xf, 0xc420000114, 0x1)\n",
	"\t/usr/local/go/src/runtime/proc.go:286 +0x5e fp=0xc42003e7a8 sp=0xc42003e768 pc=0x42512e\n",
	"runtime.forcegchelper()\n",
	"\t/usr/local/go/src/runtime/proc.go:238 +0xcc fp=0xc42003e7e0 sp=0xc42003e7a8 pc=0x424e5c\n",
	"runtime.goexit()\n",
	"\t/usr/local/go/src/runtime/asm_amd64.s:2337 +0x1 fp=0xc42003e7e8 sp=0xc42003e7e0 pc=0x44b4d1\n",
	"created by runtime.init.4\n",
	"\t/usr/local/go/src/runtime/proc.go:227 +0x35\n",
	"\n",
	"goroutine 3 [GC sweep wait]:\n",
	"runtime.gopark(0x4739b8, 0x4ad7e0, 0x46fdd2, 0xd, 0x419914, 0x1)\n",
	"\t/usr/local/go/src/runtime/proc.go:280 +0x12c fp=0xc42003ef60 sp=0xc42003ef30 pc=0x42503c\n",
	"runtime.goparkunlock(0x4ad7e0, 0x46fdd2, 0xd, 0x14, 0x1)\n",
	"\t/usr/local/go/src/runtime/proc.go:286 +0x5e fp=0xc42003efa0 sp=0xc42003ef60 pc=0x42512e\n",
	"runtime.bgsweep(0xc42001e150)\n",
	"\t/usr/local/go/src/runtime/mgcsweep.go:52 +0xa3 fp=0xc42003efd8 sp=0xc42003efa0 pc=0x419973\n",
	"runtime.goexit()\n",
	"\t/usr/local/go/src/runtime/asm_amd64.s:2337 +0x1 fp=0xc42003efe0 sp=0xc42003efd8 pc=0x44b4d1\n",
	"created by runtime.gcenable\n",
	"\t/usr/local/go/src/runtime/mgc.go:216 +0x58\n",
	/* Without "\n" in Fluent Bit's vector, whose flush adds one. */
	"one more line, no multiline\n",
	NULL
};

static const char *const go_out[] = {
	"panic: my panic\n"
	    "\n"
	    "goroutine 4 [running]:\n"
	    "panic(0x45cb40, 0x47ad70)\n"
	    "\t/usr/local/go/src/runtime/panic.go:542 +0x46c fp=0xc42003f7b8 sp=0xc42003f710 pc=0x422f7c\n"
	    "main.main.func1(0xc420024120)\n"
	    "\tfoo.go:6 +0x39 fp=0xc42003f7d8 sp=0xc42003f7b8 pc=0x451339\n"
	    "runtime.goexit()\n"
	    "\t/usr/local/go/src/runtime/asm_amd64.s:2337 +0x1 fp=0xc42003f7e0 sp=0xc42003f7d8 pc=0x44b4d1\n"
	    "created by main.main\n"
	    "\tfoo.go:5 +0x58\n"
	    "\n"
	    "goroutine 1 [chan receive]:\n"
	    "runtime.gopark(0x4739b8, 0xc420024178, 0x46fcd7, 0xc, 0xc420028e17, 0x3)\n"
	    "\t/usr/local/go/src/runtime/proc.go:280 +0x12c fp=0xc420053e30 sp=0xc420053e00 pc=0x42503c\n"
	    "runtime.goparkunlock(0xc420024178, 0x46fcd7, 0xc, 0x1000f010040c217, 0x3)\n"
	    "\t/usr/local/go/src/runtime/proc.go:286 +0x5e fp=0xc420053e70 sp=0xc420053e30 pc=0x42512e\n"
	    "runtime.chanrecv(0xc420024120, 0x0, 0xc420053f01, 0x4512d8)\n"
	    "\t/usr/local/go/src/runtime/chan.go:506 +0x304 fp=0xc420053f20 sp=0xc420053e70 pc=0x4046b4\n"
	    "runtime.chanrecv1(0xc420024120, 0x0)\n"
	    "\t/usr/local/go/src/runtime/chan.go:388 +0x2b fp=0xc420053f50 sp=0xc420053f20 pc=0x40439b\n"
	    "main.main()\n"
	    "\tfoo.go:9 +0x6f fp=0xc420053f80 sp=0xc420053f50 pc=0x4512ef\n"
	    "runtime.main()\n"
	    "\t/usr/local/go/src/runtime/proc.go:185 +0x20d fp=0xc420053fe0 sp=0xc420053f80 pc=0x424bad\n"
	    "runtime.goexit()\n"
	    "\t/usr/local/go/src/runtime/asm_amd64.s:2337 +0x1 fp=0xc420053fe8 sp=0xc420053fe0 pc=0x44b4d1\n"
	    "\n"
	    "goroutine 2 [force gc (idle)]:\n"
	    "runtime.gopark(0x4739b8, 0x4ad720, 0x47001e, 0xf, 0x14, 0x1)\n"
	    "\t/usr/local/go/src/runtime/proc.go:280 +0x12c fp=0xc42003e768 sp=0xc42003e738 pc=0x42503c\n"
	    "runtime.goparkunlock(0x4ad720, 0x47001e, 0xf, 0xc420000114, 0x1)\n"
	    "\t/usr/local/go/src/runtime/proc.go:286 +0x5e fp=0xc42003e7a8 sp=0xc42003e768 pc=0x42512e\n"
	    "runtime.forcegchelper()\n"
	    "\t/usr/local/go/src/runtime/proc.go:238 +0xcc fp=0xc42003e7e0 sp=0xc42003e7a8 pc=0x424e5c\n"
	    "runtime.goexit()\n"
	    "\t/usr/local/go/src/runtime/asm_amd64.s:2337 +0x1 fp=0xc42003e7e8 sp=0xc42003e7e0 pc=0x44b4d1\n"
	    "created by runtime.init.4\n"
	    "\t/usr/local/go/src/runtime/proc.go:227 +0x35\n"
	    "\n"
	    "goroutine 3 [GC sweep wait]:\n"
	    "runtime.gopark(0x4739b8, 0x4ad7e0, 0x46fdd2, 0xd, 0x419914, 0x1)\n"
	    "\t/usr/local/go/src/runtime/proc.go:280 +0x12c fp=0xc42003ef60 sp=0xc42003ef30 pc=0x42503c\n"
	    "runtime.goparkunlock(0x4ad7e0, 0x46fdd2, 0xd, 0x14, 0x1)\n"
	    "\t/usr/local/go/src/runtime/proc.go:286 +0x5e fp=0xc42003efa0 sp=0xc42003ef60 pc=0x42512e\n"
	    "runtime.bgsweep(0xc42001e150)\n"
	    "\t/usr/local/go/src/runtime/mgcsweep.go:52 +0xa3 fp=0xc42003efd8 sp=0xc42003efa0 pc=0x419973\n"
	    "runtime.goexit()\n"
	    "\t/usr/local/go/src/runtime/asm_amd64.s:2337 +0x1 fp=0xc42003efe0 sp=0xc42003efd8 pc=0x44b4d1\n"
	    "created by runtime.gcenable\n"
	    "\t/usr/local/go/src/runtime/mgc.go:216 +0x58\n",
	"one more line, no multiline\n",
	NULL
};

struct rec {
	char		*data;
	size_t		 len;
	uint64_t	 start;
	uint64_t	 end;
};

/* Collects records; refuses the call numbered refuse_at (-1: none). */
struct col {
	struct rec	 r[MAXREC];
	size_t		 n;
	long		 calls;
	long		 refuse_at;
};

static int
collect(void *arg, const char *data, size_t len, uint64_t start,
    uint64_t end)
{
	struct col	*c = arg;
	struct rec	*r;

	if (c->calls++ == c->refuse_at)
		return 1;
	ck_assert_uint_lt(c->n, MAXREC);
	r = &c->r[c->n++];
	r->data = xmalloc(len + 1);
	memcpy(r->data, data, len);
	r->data[len] = '\0';
	r->len = len;
	r->start = start;
	r->end = end;
	return 0;
}

static void
col_free(struct col *c)
{
	size_t	 i;

	for (i = 0; i < c->n; i++)
		free(c->r[i].data);
	c->n = 0;
}

static char *
join(const char *const *lines, size_t *len)
{
	struct buf	 b;

	buf_init(&b);
	for (; *lines != NULL; lines++)
		buf_add(&b, *lines, strlen(*lines));
	*len = b.len;
	return b.data;
}

static struct framer *
mk(const char *preset, bool keep)
{
	struct framer_opts	 o = { .delim = '\n', .keep_delim = keep,
	    .preset = preset };
	struct framer		*fr;
	char			 err[256] = "";

	ck_assert_msg(framer_new(&o, &fr, err, sizeof(err)) == 0,
	    "framer_new: %s", err);
	return fr;
}

/*
 * Frame in[] with preset the way the tailer does: windows of at most win
 * bytes from the read offset, what is not consumed offered again, a
 * refused record offered again, and a flush at the end (the flush timer).
 */
static void
drive(const char *preset, const char *p, size_t n, size_t win,
    long refuse_at, struct col *c)
{
	struct framer		*fr = mk(preset, true);
	struct framer_state	 st;
	size_t			 pos = 0, used, w;
	long			 calls;
	int			 guard = 0;

	memset(c, 0, sizeof(*c));
	c->refuse_at = refuse_at;
	framer_state_init(&st, fr, true);
	while (pos < n) {
		ck_assert_int_lt(guard++, 100000);
		w = MIN(win, n - pos);
		calls = c->calls;
		used = framer_feed(fr, &st, p + pos, w, pos, 1 << 16, collect,
		    c);
		pos += used;
		if (used == 0 && c->calls == calls) {
			/* Nothing refused: a partial line fills the window. */
			ck_assert_msg(w < n - pos, "stuck at %zu", pos);
			win *= 2;
		}
	}
	while (framer_flush(fr, &st, collect, c) != 0)
		ck_assert_int_lt(guard++, 100000);
	ck_assert(!framer_pending(&st));
	framer_state_cleanup(&st);
	framer_free(fr);
}

/* The records are exactly want[], and cover the input without a gap. */
static void
check_records(const struct col *c, const char *const *want, size_t n)
{
	uint64_t	 off = 0;
	size_t		 i;

	for (i = 0; want[i] != NULL; i++) {
		ck_assert_msg(i < c->n, "record %zu missing (have %zu)", i,
		    c->n);
		ck_assert_msg(c->r[i].len == strlen(want[i]) &&
		    memcmp(c->r[i].data, want[i], c->r[i].len) == 0,
		    "record %zu is\n%s\nwant\n%s", i, c->r[i].data, want[i]);
		ck_assert_uint_eq(c->r[i].start, off);
		off += c->r[i].len;
		ck_assert_uint_eq(c->r[i].end, off);
	}
	ck_assert_uint_eq(c->n, i);
	ck_assert_uint_eq(off, n);
}

/* s with every "\n" made "\r\n" (new). */
static char *
crlf(const char *s)
{
	struct buf	 b;

	buf_init(&b);
	for (; *s != '\0'; s++) {
		if (*s == '\n')
			buf_addc(&b, '\r');
		buf_addc(&b, *s);
	}
	if (b.data == NULL)
		buf_addstr(&b, "");
	return b.data;
}

/* The same vectors with CR LF line ends, the CRs kept in the records. */
static void
vectors_crlf(const char *preset, const char *const *in,
    const char *const *out)
{
	char		*cin[MAXREC], *cout[MAXREC], *p;
	struct col	 c;
	size_t		 i, n;

	for (i = 0; in[i] != NULL; i++)
		cin[i] = crlf(in[i]);
	cin[i] = NULL;
	for (i = 0; out[i] != NULL; i++)
		cout[i] = crlf(out[i]);
	cout[i] = NULL;
	p = join((const char *const *)cin, &n);
	drive(preset, p, n, 4096, -1, &c);
	check_records(&c, (const char *const *)cout, n);
	col_free(&c);
	free(p);
	for (i = 0; cin[i] != NULL; i++)
		free(cin[i]);
	for (i = 0; cout[i] != NULL; i++)
		free(cout[i]);
}

static void
vectors(const char *preset, const char *const *in, const char *const *out)
{
	struct col	 c;
	size_t		 n, win;
	long		 refuse;
	char		*p = join(in, &n);

	vectors_crlf(preset, in, out);

	for (win = 1; win <= n; win = win < 64 ? win + 1 : win * 2) {
		for (refuse = -1; refuse < 4; refuse++) {
			drive(preset, p, n, win, refuse, &c);
			check_records(&c, out, n);
			col_free(&c);
		}
	}
	drive(preset, p, n, n, -1, &c);
	check_records(&c, out, n);
	col_free(&c);
	free(p);
}

START_TEST(fluent_bit_java_vectors)
{
	vectors("java", java_in, java_out);
}
END_TEST

START_TEST(fluent_bit_python_vectors)
{
	vectors("python", python_in, python_out);
}
END_TEST

START_TEST(fluent_bit_go_vectors)
{
	vectors("go", go_in, go_out);
}
END_TEST

/* The verdicts on lines[] in turn, from an idle state, as a string. */
static void
verdicts(const char *preset, const char *const *lines, const char *want)
{
	static const char	 code[] = { 'A', 'S', 'J', 'L' };
	struct mlpreset		*mp;
	struct mlpreset_state	 st;
	char			 got[64] = "", err[200];
	size_t			 i;

	ck_assert_msg(mlpreset_new(preset, &mp, err, sizeof(err)) == 0, "%s",
	    err);
	ck_assert_str_eq(mlpreset_name(mp), preset);
	mlpreset_state_init(&st);
	for (i = 0; lines[i] != NULL && i + 1 < sizeof(got); i++) {
		got[i] = code[mlpreset_line(mp, &st, lines[i],
		    strlen(lines[i]), &st)];
		/* Open exactly while a record is being built. */
		ck_assert(mlpreset_state_open(&st) == (got[i] == 'S' ||
		    got[i] == 'J'));
	}
	ck_assert_str_eq(got, want);
	mlpreset_free(mp);
}

START_TEST(unknown_preset_is_refused_naming_the_known_ones)
{
	struct mlpreset		*mp = (void *)1;
	struct framer_opts	 o = { .delim = '\n', .preset = "ruby" };
	struct framer		*fr;
	char			 err[200];

	ck_assert_int_eq(mlpreset_new("Java", &mp, err, sizeof(err)),
	    -EINVAL);
	ck_assert_ptr_null(mp);
	ck_assert_str_eq(err, "unknown multi-line preset \"Java\" (known: "
	    "java, python, go)");
	ck_assert_int_eq(framer_new(&o, &fr, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_null(fr);
	ck_assert_str_eq(err, "unknown multi-line preset \"ruby\" (known: "
	    "java, python, go)");
	mlpreset_free(NULL);
}
END_TEST

START_TEST(preset_and_start_pattern_together_are_refused)
{
	struct framer_opts	 o = { .delim = '\n', .preset = "java",
	    .multiline = "^\\d" };
	struct framer		*fr;
	char			 err[200];

	ck_assert_int_eq(framer_new(&o, &fr, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_null(fr);
	ck_assert_str_eq(err, "multiLinePreset and multiLineStartPattern are "
	    "both set");
}
END_TEST

START_TEST(java_rules)
{
	static const char *const trace[] = {
		"2026-12-07 10:00:00 INFO started",
		"java.lang.RuntimeException: boom",
		"",
		"\tat com.example.A.run(A.java:10)",
		"\tSuppressed: java.io.IOException: close",
		"\t\tat com.example.B.close(B.java:5)",
		"\t\t... 2 more",
		"Caused by: java.lang.NullPointerException",
		"\tat com.example.C.get(C.java:7)",
		"\t... 12 common frames omitted",
		"",	/* blank after frames: the trace is over */
		"org.springframework.BeanCreationException: Error creating",
		"nested exception is:",	/* ends it, right after its line */
		"java.lang.IllegalStateException: bad state",
		"\tat com.example.D.x(D.java:3)",
		"java.lang.Error",	/* a new trace at once */
		"   at eval at <anonymous> (x.js:1:1)",
		"\tat com.example.E.y(E.java:4)",
		"done",
		"\tat com.example.F.z(F.java:5)",	/* after a trace: alone */
		NULL
	};

	verdicts("java", trace, "ASJJJJJJJJASLSJSJJAA");
}
END_TEST

START_TEST(python_rules)
{
	static const char *const trace[] = {
		"Traceback (most recent call last):",
		"  File \"a.py\", line 3, in <module>",
		"    main()",
		"  File \"a.py\", line 2, in main",
		"    raise KeyError('k')",
		"KeyError: 'k'",	/* ends the record: sent at once */
		"  File \"b.py\", line 1",	/* nothing to continue */
		"Traceback (most recent call last):",
		"  File \"c.py\", line 9, in f",
		"    g()",
		"json.decoder.JSONDecodeError: Expecting value",
		"Traceback (most recent call last):",
		"unexpected",	/* neither a frame nor the exception */
		NULL
	};

	verdicts("python", trace, "SJJJJLASJJLSA");
}
END_TEST

START_TEST(go_rules)
{
	static const char *const trace[] = {
		"panic: runtime error: invalid memory address",
		"[signal SIGSEGV: segmentation violation code=0x1 addr=0x0]",
		"",
		"goroutine 1 [running]:",
		"main.main()",
		"\t/app/main.go:9 +0x1d",
		"exit status 2",	/* not a frame: ends the trace */
		"2026/12/07 http: panic serving 10.0.0.1:5000: oops",
		"goroutine 7 [running]:",
		"net/http.(*conn).serve.func1(0xc0000a8000)",
		"\t/usr/lib/go/src/net/http/server.go:1801 +0x147",
		"created by net/http.(*Server).Serve",
		"\t/usr/lib/go/src/net/http/server.go:2928 +0x3b4",
		"panic: again",	/* a new panic starts a new record */
		"goroutine 1 [running]:",	/* needs the blank line first */
		NULL
	};

	verdicts("go", trace, "SJJJJJASJJJJJSA");
}
END_TEST

/* A python trace is sent by its exception line, without the flush. */
START_TEST(ending_line_sends_the_record_without_waiting)
{
	static const char in[] = "Traceback (most recent call last):\n"
	    "  File \"a.py\", line 1, in <module>\n"
	    "    f()\n"
	    "ValueError: v\n"
	    "Traceback (most recent call last):\n";
	struct framer		*fr = mk("python", false);
	struct framer_state	 st;
	struct col		 c;

	memset(&c, 0, sizeof(c));
	c.refuse_at = -1;
	framer_state_init(&st, fr, true);
	ck_assert_uint_eq(framer_feed(fr, &st, in, sizeof(in) - 1, 100, 4096,
	    collect, &c), sizeof(in) - 1);
	ck_assert_uint_eq(c.n, 1);
	ck_assert_str_eq(c.r[0].data, "Traceback (most recent call last):\n"
	    "  File \"a.py\", line 1, in <module>\n"
	    "    f()\n"
	    "ValueError: v");
	ck_assert_uint_eq(c.r[0].start, 100);
	ck_assert_uint_eq(c.r[0].end, 100 + sizeof(in) - 1 - 35);
	/* The next traceback is pending, from its first byte. */
	ck_assert(framer_pending(&st));
	ck_assert_uint_eq(framer_pending_start(&st), 100 + sizeof(in) - 1 -
	    35);
	col_free(&c);
	framer_state_cleanup(&st);
	framer_free(fr);
}
END_TEST

/* After a flush by time, the lines that follow are records of their own. */
START_TEST(flush_ends_the_trace)
{
	static const char a[] = "panic: p\n\n";
	static const char b[] = "goroutine 1 [running]:\nmain.main()\n";
	struct framer		*fr = mk("go", false);
	struct framer_state	 st;
	struct col		 c;

	memset(&c, 0, sizeof(c));
	c.refuse_at = -1;
	framer_state_init(&st, fr, true);
	ck_assert_uint_eq(framer_feed(fr, &st, a, sizeof(a) - 1, 0, 4096,
	    collect, &c), sizeof(a) - 1);
	ck_assert_uint_eq(c.n, 0);
	ck_assert_int_eq(framer_flush(fr, &st, collect, &c), 0);
	ck_assert_uint_eq(c.n, 1);
	ck_assert_str_eq(c.r[0].data, "panic: p\n");
	ck_assert(!mlpreset_state_open(&st.mlp));
	ck_assert_uint_eq(framer_feed(fr, &st, b, sizeof(b) - 1, 10, 4096,
	    collect, &c), sizeof(b) - 1);
	ck_assert_uint_eq(c.n, 3);
	ck_assert_str_eq(c.r[1].data, "goroutine 1 [running]:");
	ck_assert_str_eq(c.r[2].data, "main.main()");
	ck_assert(!framer_pending(&st));
	col_free(&c);
	framer_state_cleanup(&st);
	framer_free(fr);
}
END_TEST

static Suite *
mlpreset_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("mlpreset");
	tc = tcase_create("fluent-bit");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, fluent_bit_java_vectors);
	tcase_add_test(tc, fluent_bit_python_vectors);
	tcase_add_test(tc, fluent_bit_go_vectors);
	suite_add_tcase(s, tc);
	tc = tcase_create("rules");
	tcase_add_test(tc, unknown_preset_is_refused_naming_the_known_ones);
	tcase_add_test(tc, preset_and_start_pattern_together_are_refused);
	tcase_add_test(tc, java_rules);
	tcase_add_test(tc, python_rules);
	tcase_add_test(tc, go_rules);
	tcase_add_test(tc, ending_line_sends_the_record_without_waiting);
	tcase_add_test(tc, flush_ends_the_trace);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(mlpreset_suite());
}
