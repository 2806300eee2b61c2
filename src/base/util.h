/*
 * Small building blocks shared by every module: fatal allocation wrappers,
 * a growable byte buffer with an explicit ceiling, container_of, and the
 * attribute macros the rest of the code uses.  Nothing here knows about DIS.
 */
#ifndef DISAGENT_UTIL_H
#define DISAGENT_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define container_of(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define WARN_UNUSED	__attribute__((warn_unused_result))
#define PRINTFLIKE(f, a) __attribute__((format(printf, f, a)))
#ifndef MIN
#define MIN(a, b)	((a) < (b) ? (a) : (b))
#endif
#ifndef MAX
#define MAX(a, b)	((a) > (b) ? (a) : (b))
#endif

/* Allocation failure ends the process (tmux xmalloc). */
void	*xmalloc(size_t);
void	*xcalloc(size_t, size_t);
void	*xrealloc(void *, size_t);
char	*xstrdup(const char *);
char	*xstrndup(const char *, size_t);
/* The directory part of path: new; "." without a slash, "/" for "/x". */
char	*xdirname(const char *path);
char	*xasprintf(const char *, ...) PRINTFLIKE(1, 2);

/*
 * Shared text: one copy that several owners hold (a tracked file's path,
 * held by its tailer and by its registry entry).  A plain char * whose
 * count of holders sits just before it; rstr_free lets go of one hold and
 * frees the text with the last.  Never free() one, nor rstr_free a text
 * that xstrdup made.
 */
char	*rstr_new(const char *);
char	*rstr_hold(char *);
void	 rstr_free(char *);

/*
 * A growable byte buffer.  data is always NUL-terminated (not counted in
 * len) so a buffer holding text can be used as a C string.
 */
struct buf {
	char	*data;
	size_t	 len;
	size_t	 cap;
};

void	 buf_init(struct buf *);
void	 buf_cleanup(struct buf *);
/*
 * Secrets: zeroed before their memory is freed.  A buffer that holds one
 * must not grow (xrealloc frees the old block unzeroed): allocate it at
 * its maximum first (buf_alloc_exact) and add no more than that.
 */
void	 buf_wipe(struct buf *);	/* zero all of it, then buf_cleanup */
void	 secret_free(char *);		/* zero the string, free it; NULL ok */
void	 buf_reset(struct buf *);		/* len = 0, keeps memory */
void	 buf_reserve(struct buf *, size_t);	/* room for n more bytes */
/*
 * Room for n more bytes, growing to exactly that (plus the NUL) instead of
 * the next power of two: for a buffer whose largest size is known, so that
 * 1 MiB of data does not take 2 MiB.
 */
void	 buf_reserve_exact(struct buf *, size_t);
/* n bytes were written in place after len, within reserved room. */
void	 buf_added(struct buf *, size_t n);
/* The first n bytes are the content (n within what is reserved: a
 * shorter one, or what was written in place); the NUL after them. */
void	 buf_setlen(struct buf *, size_t n);
/* An empty buffer with capacity exactly n (+1 for the NUL). */
void	 buf_alloc_exact(struct buf *, size_t);
void	 buf_add(struct buf *, const void *, size_t);
void	 buf_addstr(struct buf *, const char *);
void	 buf_addc(struct buf *, char);
void	 buf_printf(struct buf *, const char *, ...) PRINTFLIKE(2, 3);

/*
 * A memory budget shared by every flow: bytes of records held in batches
 * and request bodies.  Reading stops while used >= limit.
 */
struct mem_budget {
	size_t	 used;
	size_t	 limit;
	size_t	 peak;
};

/* The budget is limit bytes from now on. */
static inline void
mem_set_limit(struct mem_budget *m, size_t limit)
{
	m->limit = limit;
}

static inline void
mem_charge(struct mem_budget *m, size_t n)
{
	if (m == NULL)
		return;
	m->used += n;
	if (m->used > m->peak)
		m->peak = m->used;
}

static inline void
mem_release(struct mem_budget *m, size_t n)
{
	if (m != NULL)
		m->used -= n <= m->used ? n : m->used;
}

/* write(2) all n bytes, retrying short writes and EINTR; 0 or -errno. */
int	 write_all(int fd, const void *, size_t) WARN_UNUSED;

/*
 * The next item of the comma-separated *list, blanks around it trimmed,
 * into tok (items of toklen bytes or more are skipped).  Advances *list;
 * false at the end.
 */
bool	 list_next(const char **list, char *tok, size_t toklen);

/*
 * A map from non-zero 64-bit keys to borrowed values that carry their own
 * key (a tracked file's tailer id or inode): open addressing, linear
 * probing, deletion by backward shift (no tombstones).  Only the values
 * are stored, and key() reads a value's key, so a probe reads the values
 * it passes.  A value's
 * key must not change while it is in the map, and a value must stay valid
 * until it is deleted.  Zero keys are never stored.
 */
struct keymap {
	void		**vals;		/* NULL: empty slot */
	size_t		 cap;		/* a power of two, or 0 */
	size_t		 n;
	uint64_t	(*key)(const void *);
};

void	 keymap_init(struct keymap *, uint64_t (*key)(const void *));
void	 keymap_cleanup(struct keymap *);
/* The value whose key is key, or NULL. */
void	*keymap_get(const struct keymap *, uint64_t key);
/* Insert val, replacing the value with the same key. */
void	 keymap_put(struct keymap *, void *val);
/* Remove the value whose key is key, if present. */
void	 keymap_del(struct keymap *, uint64_t key);

/* Monotonic milliseconds, and wall-clock seconds and milliseconds. */
uint64_t mono_ms(void);
int64_t	 wall_s(void);
int64_t	 wall_ms(void);

/* Random numbers for jitter and partition keys (seeded once at start). */
void	 rand_seed(uint64_t);
uint64_t rand_u64(void);
/* Uniform double in [0, 1). */
double	 rand_unit(void);

#endif
