/*
 * Fatal allocation wrappers, the growable buffer, clocks and a small PRNG
 * (splitmix64: fast, seedable for tests; not for secrets).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "base/pool.h"
#include "base/util.h"

void *
xmalloc(size_t n)
{
	void	*p;

	p = malloc(n ? n : 1);
	if (p == NULL)
		fatalx("xmalloc: allocating %zu bytes", n);
	return p;
}

void *
xcalloc(size_t nmemb, size_t size)
{
	void	*p;

	p = calloc(nmemb ? nmemb : 1, size ? size : 1);
	if (p == NULL)
		fatalx("xcalloc: allocating %zu * %zu bytes", nmemb, size);
	return p;
}

void *
xrealloc(void *ptr, size_t n)
{
	void	*p;

	p = realloc(ptr, n ? n : 1);
	if (p == NULL)
		fatalx("xrealloc: allocating %zu bytes", n);
	return p;
}

char *
xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *
xstrndup(const char *s, size_t n)
{
	char	*p;

	p = xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *
xdirname(const char *path)
{
	const char	*slash = strrchr(path, '/');

	if (slash == NULL)
		return xstrdup(".");
	if (slash == path)
		return xstrdup("/");
	return xstrndup(path, (size_t)(slash - path));
}

/* A shared text's count of holders, in the word before the text. */
static uint32_t *
rstr_count(char *s)
{
	return (uint32_t *)(void *)(s - sizeof(uint32_t));
}

/*
 * Shared texts are paths, one or two per tracked file: up to RSTR_POOLED
 * bytes (count and NUL included) they come from pools in steps of 8 bytes,
 * without malloc's header and 16-byte rounding (16 bytes of 64 for a
 * 40-character path); longer ones from malloc.  Its length tells which.
 */
#define RSTR_STEP	8
#define RSTR_POOLED	256
static struct pool rstr_pools[RSTR_POOLED / RSTR_STEP];

static struct pool *
rstr_pool(size_t len)
{
	size_t	 sz = sizeof(uint32_t) + len + 1;
	struct pool *p;

	if (sz > RSTR_POOLED)
		return NULL;
	p = &rstr_pools[(sz - 1) / RSTR_STEP];
	if (p->size == 0)
		p->size = ((sz - 1) / RSTR_STEP + 1) * RSTR_STEP;
	return p;
}

char *
rstr_new(const char *s)
{
	size_t	 n = strlen(s);
	struct pool *pl = rstr_pool(n);
	char	*p;

	p = pl != NULL ? pool_alloc(pl) : xmalloc(sizeof(uint32_t) + n + 1);
	memcpy(p + sizeof(uint32_t), s, n + 1);
	*rstr_count(p + sizeof(uint32_t)) = 1;
	return p + sizeof(uint32_t);
}

char *
rstr_hold(char *s)
{
	if (*rstr_count(s) == UINT32_MAX)
		fatalx("rstr_hold: too many holders");
	(*rstr_count(s))++;
	return s;
}

void
rstr_free(char *s)
{
	struct pool *pl;

	if (s == NULL || --*rstr_count(s) > 0)
		return;
	if ((pl = rstr_pool(strlen(s))) != NULL)
		pool_free(pl, s - sizeof(uint32_t));
	else
		free(s - sizeof(uint32_t));
}

char *
xasprintf(const char *fmt, ...)
{
	va_list	 ap;
	char	*p;

	va_start(ap, fmt);
	if (vasprintf(&p, fmt, ap) < 0)
		fatalx("xasprintf: out of memory");
	va_end(ap);
	return p;
}

void
buf_init(struct buf *b)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
}

void
buf_cleanup(struct buf *b)
{
	free(b->data);
	buf_init(b);
}

void
buf_wipe(struct buf *b)
{
	if (b->data != NULL)
		explicit_bzero(b->data, b->cap);
	buf_cleanup(b);
}

void
secret_free(char *s)
{
	if (s == NULL)
		return;
	explicit_bzero(s, strlen(s));
	free(s);
}

void
buf_added(struct buf *b, size_t n)
{
	b->len += n;
	b->data[b->len] = '\0';
}

void
buf_setlen(struct buf *b, size_t n)
{
	b->len = n;
	b->data[n] = '\0';
}

void
buf_reset(struct buf *b)
{
	b->len = 0;
	if (b->data != NULL)
		b->data[0] = '\0';
}

void
buf_reserve(struct buf *b, size_t n)
{
	size_t	 need, cap;

	need = b->len + n + 1;
	if (need <= b->cap)
		return;
	cap = b->cap ? b->cap : 256;
	while (cap < need)
		cap *= 2;
	b->data = xrealloc(b->data, cap);
	b->cap = cap;
	b->data[b->len] = '\0';
}

void
buf_reserve_exact(struct buf *b, size_t n)
{
	size_t	 need = b->len + n + 1;

	if (need <= b->cap)
		return;
	b->data = xrealloc(b->data, need);
	b->cap = need;
	b->data[b->len] = '\0';
}

void
buf_alloc_exact(struct buf *b, size_t n)
{
	b->len = 0;
	if (b->cap != n + 1) {
		b->data = xrealloc(b->data, n + 1);
		b->cap = n + 1;
	}
	b->data[0] = '\0';
}

void
buf_add(struct buf *b, const void *p, size_t n)
{
	buf_reserve(b, n);
	if (n > 0)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void
buf_addstr(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

void
buf_addc(struct buf *b, char c)
{
	buf_add(b, &c, 1);
}

void
buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list	 ap;
	int	 n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		fatalx("buf_printf: bad format");
	buf_reserve(b, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

int
write_all(int fd, const void *buf, size_t n)
{
	const char	*p = buf;
	ssize_t		 w;

	while (n > 0) {
		w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

bool
list_next(const char **list, char *tok, size_t toklen)
{
	const char	*p = *list, *end;
	size_t		 n;

	while (*p != '\0') {
		end = strchr(p, ',');
		if (end == NULL)
			end = p + strlen(p);
		*list = *end != '\0' ? end + 1 : end;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		n = (size_t)(end - p);
		while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
			n--;
		if (n > 0 && n < toklen) {
			memcpy(tok, p, n);
			tok[n] = '\0';
			return true;
		}
		p = *list;
	}
	return false;
}

/* The home slot of id in a table of cap slots: a 64-bit mix (splitmix64's
 * finaliser), as ids are sequential. */
static size_t
home_slot(uint64_t id, size_t cap)
{
	id ^= id >> 30;
	id *= 0xbf58476d1ce4e5b9ULL;
	id ^= id >> 27;
	id *= 0x94d049bb133111ebULL;
	id ^= id >> 31;
	return (size_t)id & (cap - 1);
}

void
keymap_init(struct keymap *m, uint64_t (*key)(const void *))
{
	memset(m, 0, sizeof(*m));
	m->key = key;
}

void
keymap_cleanup(struct keymap *m)
{
	free(m->vals);
	keymap_init(m, m->key);
}

static size_t
keymap_slot(const struct keymap *m, uint64_t id)
{
	return home_slot(id, m->cap);
}

void *
keymap_get(const struct keymap *m, uint64_t key)
{
	size_t	 i;

	if (m->cap == 0 || key == 0)
		return NULL;
	for (i = keymap_slot(m, key); m->vals[i] != NULL;
	    i = (i + 1) & (m->cap - 1))
		if (m->key(m->vals[i]) == key)
			return m->vals[i];
	return NULL;
}

static void
keymap_grow(struct keymap *m)
{
	void	**old = m->vals;
	size_t	 i, ocap = m->cap;

	m->cap = ocap ? ocap * 2 : 16;
	m->vals = xcalloc(m->cap, sizeof(*m->vals));
	m->n = 0;
	for (i = 0; i < ocap; i++)
		if (old[i] != NULL)
			keymap_put(m, old[i]);
	free(old);
}

void
keymap_put(struct keymap *m, void *val)
{
	uint64_t key = m->key(val);
	size_t	 i;

	if (key == 0)
		fatalx("keymap_put: a zero key");
	if ((m->n + 1) * 4 > m->cap * 3)
		keymap_grow(m);
	for (i = keymap_slot(m, key); m->vals[i] != NULL;
	    i = (i + 1) & (m->cap - 1))
		if (m->key(m->vals[i]) == key) {
			m->vals[i] = val;
			return;
		}
	m->vals[i] = val;
	m->n++;
}

void
keymap_del(struct keymap *m, uint64_t key)
{
	size_t	 i, j, home, mask = m->cap - 1;

	if (m->cap == 0 || key == 0)
		return;
	for (i = keymap_slot(m, key);; i = (i + 1) & mask) {
		if (m->vals[i] == NULL)
			return;
		if (m->key(m->vals[i]) == key)
			break;
	}
	/* Backward shift: move later entries of the run into the hole
	 * unless their home slot lies cyclically in (i, j]. */
	for (j = (i + 1) & mask; m->vals[j] != NULL; j = (j + 1) & mask) {
		home = keymap_slot(m, m->key(m->vals[j]));
		if (((j - home) & mask) < ((j - i) & mask))
			continue;
		m->vals[i] = m->vals[j];
		i = j;
	}
	m->vals[i] = NULL;
	m->n--;
}

uint64_t
mono_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int64_t
wall_s(void)
{
	return (int64_t)time(NULL);
}

int64_t
wall_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint64_t	rand_state = 0x9e3779b97f4a7c15ULL;

void
rand_seed(uint64_t seed)
{
	rand_state = seed;
}

uint64_t
rand_u64(void)
{
	uint64_t	 z;

	z = (rand_state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

double
rand_unit(void)
{
	return (double)(rand_u64() >> 11) * (1.0 / 9007199254740992.0);
}
