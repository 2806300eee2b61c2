/*
 * The registry: committed offsets keyed by (flow, dev, ino), kept in a
 * chained hash table, and the JSON state file that carries them across
 * restarts.  The file is versioned and carries a crc32 of the compact
 * serialisation of its "files" array, so a flipped digit or a torn write is
 * caught at load.  Saving writes path.tmp, fsyncs it, keeps the previous
 * generation as path.bak (a hard link, or a copy where links are not
 * supported), renames the new file over path and fsyncs the directory, so a
 * complete state file exists at every instant.  A file that fails to load is
 * set aside as path.corrupt-<time> and the .bak is used; the agent never
 * starts silently from zero.  jansson is used only here.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <zlib.h>

#include "log.h"
#include "registry.h"
#include "util.h"

#define STATE_VERSION	1
#define STATE_MAX_BYTES	(64u * 1024 * 1024)	/* cap on what load reads */
#define TABLE_MIN	64

struct reg_node {
	struct reg_entry	 e;
	uint64_t		 hash;
	struct reg_node		*next;
};

/* Chained hash table; nb is a power of two, grown at 3/4 load.  The flow
 * names of its entries are kept once each, in flows. */
struct reg_table {
	struct reg_node	**b;
	size_t		  nb;
	size_t		  n;
	char		**flows;
	size_t		  nflows;
};

struct registry {
	char		*path;
	char		*tmp;		/* path.tmp: the generation being written */
	char		*bak;		/* path.bak: the previous generation */
	char		*baktmp;	/* path.bak.tmp: link staged for .bak */
	char		*dir;		/* directory to fsync after rename */
	struct reg_table tab;
	bool		 dirty;
	void		(*on_dirty)(void *);
	void		*on_dirty_arg;
};

/* What failed during a save, for the one log line per failed save. */
struct save_err {
	const char	*op;
	const char	*file;
};

/* --- hash table -------------------------------------------------------- */

static uint64_t
mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t
key_hash(const char *flow, uint64_t dev, uint64_t ino)
{
	uint64_t	 h = 0xcbf29ce484222325ULL;	/* FNV-1a */

	for (; *flow != '\0'; flow++) {
		h ^= (unsigned char)*flow;
		h *= 0x100000001b3ULL;
	}
	return mix64(mix64(h ^ dev) ^ ino);
}

static void
table_init(struct reg_table *t)
{
	t->nb = TABLE_MIN;
	t->n = 0;
	t->b = xcalloc(t->nb, sizeof(*t->b));
	t->flows = NULL;
	t->nflows = 0;
}

/* The table's copy of flow name, shared by all its entries of that flow:
 * a name per entry would cost more than the entry's numbers. */
static char *
table_flow(struct reg_table *t, const char *flow)
{
	size_t	 i;

	for (i = 0; i < t->nflows; i++)
		if (strcmp(t->flows[i], flow) == 0)
			return t->flows[i];
	t->flows = xrealloc(t->flows, (t->nflows + 1) * sizeof(*t->flows));
	t->flows[t->nflows] = xstrdup(flow);
	return t->flows[t->nflows++];
}

static void
node_free(struct reg_node *nd)
{
	free(nd->e.path);
	free(nd);
}

static void
table_cleanup(struct reg_table *t)
{
	struct reg_node	*nd, *next;
	size_t		 i;

	for (i = 0; t->b != NULL && i < t->nb; i++) {
		for (nd = t->b[i]; nd != NULL; nd = next) {
			next = nd->next;
			node_free(nd);
		}
	}
	free(t->b);
	t->b = NULL;
	t->nb = t->n = 0;
	for (i = 0; i < t->nflows; i++)
		free(t->flows[i]);
	free(t->flows);
	t->flows = NULL;
	t->nflows = 0;
}

/* Address of the link that points at the node for the key (or at NULL). */
static struct reg_node **
table_slot(struct reg_table *t, const char *flow, uint64_t dev,
    uint64_t ino)
{
	struct reg_node	**pp, *nd;
	uint64_t	  h;

	h = key_hash(flow, dev, ino);
	for (pp = &t->b[h & (t->nb - 1)]; *pp != NULL; pp = &nd->next) {
		nd = *pp;
		if (nd->hash == h && nd->e.dev == dev && nd->e.ino == ino &&
		    strcmp(nd->e.flow, flow) == 0)
			break;
	}
	return pp;
}

static void
table_grow(struct reg_table *t)
{
	struct reg_node	**nb, *nd, *next;
	size_t		  i, n;

	n = t->nb * 2;
	nb = xcalloc(n, sizeof(*nb));
	for (i = 0; i < t->nb; i++) {
		for (nd = t->b[i]; nd != NULL; nd = next) {
			next = nd->next;
			nd->next = nb[nd->hash & (n - 1)];
			nb[nd->hash & (n - 1)] = nd;
		}
	}
	free(t->b);
	t->b = nb;
	t->nb = n;
}

/* Link a new node (steals it); the key must not be present yet. */
static void
table_insert(struct reg_table *t, struct reg_node *nd)
{
	struct reg_node	**head;

	if (t->n + 1 > t->nb / 4 * 3)
		table_grow(t);
	nd->hash = key_hash(nd->e.flow, nd->e.dev, nd->e.ino);
	head = &t->b[nd->hash & (t->nb - 1)];
	nd->next = *head;
	*head = nd;
	t->n++;
}

static void
table_unlink(struct reg_table *t, struct reg_node **pp)
{
	struct reg_node	*nd = *pp;

	*pp = nd->next;
	node_free(nd);
	t->n--;
}

/* --- lifetime and lookup ----------------------------------------------- */

static char *
dir_of(const char *path)
{
	const char	*slash;

	slash = strrchr(path, '/');
	if (slash == NULL)
		return xstrdup(".");
	if (slash == path)
		return xstrdup("/");
	return xstrndup(path, (size_t)(slash - path));
}

struct registry *
registry_new(const char *path)
{
	struct registry	*reg;

	reg = xcalloc(1, sizeof(*reg));
	reg->path = xstrdup(path);
	reg->tmp = xasprintf("%s.tmp", path);
	reg->bak = xasprintf("%s.bak", path);
	reg->baktmp = xasprintf("%s.bak.tmp", path);
	reg->dir = dir_of(path);
	table_init(&reg->tab);
	return reg;
}

void
registry_free(struct registry *reg)
{
	if (reg == NULL)
		return;
	table_cleanup(&reg->tab);
	free(reg->path);
	free(reg->tmp);
	free(reg->bak);
	free(reg->baktmp);
	free(reg->dir);
	free(reg);
}

struct reg_entry *
registry_find(struct registry *reg, const char *flow, uint64_t dev,
    uint64_t ino)
{
	struct reg_node	*nd;

	nd = *table_slot(&reg->tab, flow, dev, ino);
	return nd != NULL ? &nd->e : NULL;
}

/* Replace *dst with a copy of src; true when the text changed. */
static bool
replace_str(char **dst, const char *src)
{
	if (*dst != NULL && strcmp(*dst, src) == 0)
		return false;
	free(*dst);
	*dst = xstrdup(src);
	return true;
}

/* Clean -> dirty: tell the owner once, so it can save soon. */
static void
mark_dirty(struct registry *reg)
{
	if (reg->dirty)
		return;
	reg->dirty = true;
	if (reg->on_dirty != NULL)
		reg->on_dirty(reg->on_dirty_arg);
}

void
registry_on_dirty(struct registry *reg, void (*cb)(void *), void *arg)
{
	reg->on_dirty = cb;
	reg->on_dirty_arg = arg;
}

struct reg_entry *
registry_set(struct registry *reg, const char *flow, uint64_t dev,
    uint64_t ino, uint32_t fp_crc, uint32_t fp_len, const char *path,
    uint64_t offset)
{
	struct reg_node	*nd;
	struct reg_entry *e;
	int64_t		 now = wall_s();
	bool		 changed;

	nd = *table_slot(&reg->tab, flow, dev, ino);
	if (nd == NULL) {
		nd = xcalloc(1, sizeof(*nd));
		nd->e.flow = table_flow(&reg->tab, flow);
		nd->e.dev = dev;
		nd->e.ino = ino;
		table_insert(&reg->tab, nd);
		mark_dirty(reg);
	}
	e = &nd->e;
	changed = replace_str(&e->path, path);
	changed |= e->fp_crc != fp_crc || e->fp_len != fp_len ||
	    e->offset != offset || e->updated != now;
	e->fp_crc = fp_crc;
	e->fp_len = fp_len;
	e->offset = offset;
	e->updated = now;
	if (changed)
		mark_dirty(reg);
	return e;
}

void
registry_remove(struct registry *reg, const char *flow, uint64_t dev,
    uint64_t ino)
{
	struct reg_node	**pp;

	pp = table_slot(&reg->tab, flow, dev, ino);
	if (*pp == NULL)
		return;
	table_unlink(&reg->tab, pp);
	mark_dirty(reg);
}

/* A ttl_s <= 0 disables expiry (nothing is dropped). */
void
registry_expire(struct registry *reg, int64_t now_s, int64_t ttl_s)
{
	struct reg_node	**pp;
	size_t		  i, dropped = 0;

	if (ttl_s <= 0)
		return;
	for (i = 0; i < reg->tab.nb; i++) {
		pp = &reg->tab.b[i];
		while (*pp != NULL) {
			if ((*pp)->e.updated < now_s - ttl_s) {
				table_unlink(&reg->tab, pp);
				dropped++;
			} else
				pp = &(*pp)->next;
		}
	}
	if (dropped > 0) {
		mark_dirty(reg);
		log_info("%s: expired %zu entries older than %" PRId64 " s",
		    reg->path, dropped, ttl_s);
	}
}

size_t
registry_count(const struct registry *reg)
{
	return reg->tab.n;
}

bool
registry_dirty(const struct registry *reg)
{
	return reg->dirty;
}

/* --- serialisation ----------------------------------------------------- */

static int
crc_cb(const char *p, size_t n, void *arg)
{
	uLong	*crc = arg;

	*crc = crc32(*crc, (const Bytef *)p, (uInt)n);
	return 0;
}

/*
 * Where the state file's text goes while it is written: a bounded buffer
 * flushed to fd, so saving many entries does not hold the whole file in
 * memory.  The first write error is kept in err and ends the writes.
 */
struct writer {
	int		 fd;
	int		 err;
	struct buf	 b;
};

#define SAVE_CHUNK	(64u * 1024)

static void
out_flush(struct writer *o)
{
	if (o->err == 0 && o->b.len > 0)
		o->err = write_all(o->fd, o->b.data, o->b.len);
	buf_reset(&o->b);
}

static void
out_add(struct writer *o, const char *p, size_t n)
{
	if (o->b.len + n > SAVE_CHUNK)
		out_flush(o);
	buf_add(&o->b, p, n);
}

/* json_dump_callback: the entry's text, and its crc. */
struct dump {
	struct writer	*o;
	uLong		 crc;
};

static int
dump_cb(const char *p, size_t n, void *arg)
{
	struct dump	*d = arg;

	out_add(d->o, p, n);
	d->crc = crc32(d->crc, (const Bytef *)p, (uInt)n);
	return 0;
}

/*
 * jansson refuses strings that are not UTF-8.  Paths are arbitrary bytes,
 * so such a string is stored with its non-ASCII bytes replaced by '?':
 * lossy, but the path is informational and the file stays loadable.
 */
static json_t *
json_text(const char *s)
{
	json_t	*j;
	char	*copy, *p;

	j = json_string(s);
	if (j != NULL)
		return j;
	copy = xstrdup(s);
	for (p = copy; *p != '\0'; p++)
		if ((unsigned char)*p >= 0x80)
			*p = '?';
	j = json_string(copy);
	free(copy);
	if (j == NULL)
		fatalx("json_text: cannot encode string");
	return j;
}

/*
 * Unsigned 64-bit fields are stored as their two's complement int64 so a
 * value above INT64_MAX (possible for an inode number) survives.
 */
static json_t *
entry_json(const struct reg_entry *e)
{
	json_t	*o;
	char	 fp[32];

	snprintf(fp, sizeof(fp), "crc32:%08" PRIx32 ":%" PRIu32, e->fp_crc,
	    e->fp_len);
	o = json_object();
	json_object_set_new(o, "flow", json_text(e->flow));
	json_object_set_new(o, "dev", json_integer((json_int_t)e->dev));
	json_object_set_new(o, "ino", json_integer((json_int_t)e->ino));
	json_object_set_new(o, "fingerprint", json_string(fp));
	json_object_set_new(o, "path", json_text(e->path));
	json_object_set_new(o, "offset", json_integer((json_int_t)e->offset));
	json_object_set_new(o, "updated", json_integer(e->updated));
	return o;
}

static int
node_cmp(const void *a, const void *b)
{
	const struct reg_entry	*x = &(*(struct reg_node *const *)a)->e;
	const struct reg_entry	*y = &(*(struct reg_node *const *)b)->e;
	int			 c;

	c = strcmp(x->flow, y->flow);
	if (c != 0)
		return c;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return 0;
}

/* Entries in a stable order (flow, dev, ino) so saved files diff well. */
static struct reg_node **
sorted_nodes(const struct reg_table *t)
{
	struct reg_node	**v, *nd;
	size_t		  i, k = 0;

	v = xcalloc(t->n, sizeof(*v));
	for (i = 0; i < t->nb; i++)
		for (nd = t->b[i]; nd != NULL; nd = nd->next)
			v[k++] = nd;
	qsort(v, t->n, sizeof(*v), node_cmp);
	return v;
}

#define HEAD_CRC	"{\"version\": 1, \"crc32\": \""
#define HEAD_FILES	"00000000\", \"files\": ["

/*
 * The whole file, one entry per line, written to o.  The crc covers exactly
 * what json_dumps(files, JSON_COMPACT) would print: "[" e1 "," e2 ... "]";
 * it is returned, to be written over the zeros at offset
 * strlen(HEAD_CRC) once the entries are out.
 */
static uint32_t
serialise(const struct reg_table *t, struct writer *o)
{
	struct reg_node	**v;
	struct dump	  d = { o, 0 };
	json_t		 *e;
	size_t		  i;

	v = sorted_nodes(t);
	out_add(o, HEAD_CRC HEAD_FILES, strlen(HEAD_CRC HEAD_FILES));
	d.crc = crc32(crc32(0L, Z_NULL, 0), (const Bytef *)"[", 1);
	for (i = 0; i < t->n; i++) {
		if (i > 0)
			d.crc = crc32(d.crc, (const Bytef *)",", 1);
		out_add(o, i > 0 ? ",\n" : "\n", i > 0 ? 2 : 1);
		e = entry_json(&v[i]->e);
		json_dump_callback(e, dump_cb, &d, JSON_COMPACT);
		json_decref(e);
	}
	d.crc = crc32(d.crc, (const Bytef *)"]", 1);
	if (t->n > 0)
		out_add(o, "\n]}\n", 4);
	else
		out_add(o, "]}\n", 3);
	out_flush(o);
	free(v);
	return (uint32_t)d.crc;
}

/* --- parsing ----------------------------------------------------------- */

static bool
parse_hex32(const char *s, size_t n, uint32_t *out)
{
	uint32_t	 v = 0;
	size_t		 i;
	int		 d;

	for (i = 0; i < n; i++) {
		if (s[i] >= '0' && s[i] <= '9')
			d = s[i] - '0';
		else if (s[i] >= 'a' && s[i] <= 'f')
			d = s[i] - 'a' + 10;
		else
			return false;
		v = v << 4 | (uint32_t)d;
	}
	*out = v;
	return true;
}

/* "crc32:<8 lowercase hex>:<decimal length>" */
static bool
parse_fingerprint(const char *s, uint32_t *crc, uint32_t *len)
{
	uint64_t	 v = 0;
	const char	*p;

	if (strncmp(s, "crc32:", 6) != 0 || strlen(s) < 16 || s[14] != ':')
		return false;
	if (!parse_hex32(s + 6, 8, crc))
		return false;
	for (p = s + 15; *p != '\0'; p++) {
		if (*p < '0' || *p > '9' || p - (s + 15) >= 10)
			return false;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (p == s + 15 || v > UINT32_MAX)
		return false;
	*len = (uint32_t)v;
	return true;
}

static const char *
get_str(json_t *o, const char *key)
{
	json_t	*j = json_object_get(o, key);

	return json_is_string(j) ? json_string_value(j) : NULL;
}

static bool
get_int(json_t *o, const char *key, json_int_t *out)
{
	json_t	*j = json_object_get(o, key);

	if (!json_is_integer(j))
		return false;
	*out = json_integer_value(j);
	return true;
}

/* One element of "files" into t; 0 or -EBADMSG with why filled in. */
static int
parse_entry(json_t *o, size_t idx, struct reg_table *t, char *why,
    size_t whylen)
{
	struct reg_node	*nd;
	const char	*flow, *path, *fp;
	json_int_t	 dev, ino, off, upd;
	uint32_t	 fcrc, flen;

	flow = get_str(o, "flow");
	path = get_str(o, "path");
	fp = get_str(o, "fingerprint");
	if (!json_is_object(o) || flow == NULL || *flow == '\0' ||
	    path == NULL || fp == NULL || !get_int(o, "dev", &dev) ||
	    !get_int(o, "ino", &ino) || !get_int(o, "offset", &off) ||
	    !get_int(o, "updated", &upd)) {
		snprintf(why, whylen, "files[%zu]: missing field or wrong type",
		    idx);
		return -EBADMSG;
	}
	if (!parse_fingerprint(fp, &fcrc, &flen)) {
		snprintf(why, whylen, "files[%zu]: bad fingerprint", idx);
		return -EBADMSG;
	}
	if (*table_slot(t, flow, (uint64_t)dev, (uint64_t)ino) != NULL) {
		snprintf(why, whylen, "files[%zu]: duplicate entry", idx);
		return -EBADMSG;
	}
	nd = xcalloc(1, sizeof(*nd));
	nd->e.flow = table_flow(t, flow);
	nd->e.path = xstrdup(path);
	nd->e.dev = (uint64_t)dev;
	nd->e.ino = (uint64_t)ino;
	nd->e.fp_crc = fcrc;
	nd->e.fp_len = flen;
	nd->e.offset = (uint64_t)off;
	nd->e.updated = upd;
	table_insert(t, nd);
	return 0;
}

/*
 * The state file is read one value at a time: the top-level object key by
 * key, and "files" entry by entry, each entry's JSON tree freed once its
 * node is made.  A whole-file tree of many entries would cost several times
 * the file's size, at start, when everything else is being set up too.
 */
struct cursor {
	const char	*p;
	size_t		 n;
	size_t		 at;
	char		*why;
	size_t		 whylen;
};

static void
skip_blanks(struct cursor *c)
{
	while (c->at < c->n && (c->p[c->at] == ' ' || c->p[c->at] == '\t' ||
	    c->p[c->at] == '\n' || c->p[c->at] == '\r'))
		c->at++;
}

/* Past blanks and ch, if ch is next. */
static bool
at_char(struct cursor *c, char ch)
{
	skip_blanks(c);
	if (c->at < c->n && c->p[c->at] == ch) {
		c->at++;
		return true;
	}
	return false;
}

/* The JSON value at the cursor (new), or NULL with why filled in. */
static json_t *
next_value(struct cursor *c)
{
	json_error_t	 jerr;
	json_t		*v;

	skip_blanks(c);
	v = json_loadb(c->p + c->at, c->n - c->at, JSON_DECODE_ANY |
	    JSON_DISABLE_EOF_CHECK | JSON_REJECT_DUPLICATES, &jerr);
	if (v == NULL) {
		snprintf(c->why, c->whylen, "at byte %zu: %s",
		    c->at + (size_t)MAX(jerr.position, 0), jerr.text);
		return NULL;
	}
	c->at += (size_t)jerr.position;
	return v;
}

static int
bad(struct cursor *c, const char *what)
{
	snprintf(c->why, c->whylen, "%s", what);
	return -EBADMSG;
}

/* The elements of "files" into t, their compact text into *crc. */
static int
parse_files(struct cursor *c, struct reg_table *t, uLong *crc)
{
	json_t		*e;
	size_t		 i;
	int		 r;

	*crc = crc32(crc32(0L, Z_NULL, 0), (const Bytef *)"[", 1);
	if (!at_char(c, '['))
		return bad(c, "missing or malformed crc32 or files");
	for (i = 0; !at_char(c, ']'); i++) {
		if (i > 0 && !at_char(c, ','))
			return bad(c, "malformed files array");
		if ((e = next_value(c)) == NULL)
			return -EBADMSG;
		if (i > 0)
			*crc = crc32(*crc, (const Bytef *)",", 1);
		json_dump_callback(e, crc_cb, crc, JSON_COMPACT);
		r = parse_entry(e, i, t, c->why, c->whylen);
		json_decref(e);
		if (r != 0)
			return r;
	}
	*crc = crc32(*crc, (const Bytef *)"]", 1);
	return 0;
}

/* Version, crc and shape of the top-level object, read so far. */
struct header {
	unsigned	 seen;		/* HAS_* */
	json_int_t	 version;	/* when an integer */
	uint32_t	 want;		/* the crc32, when 8 lowercase hex */
	uLong		 crc;		/* computed over "files" */
};

#define HAS_VERSION	0x1
#define HAS_CRC		0x2
#define HAS_FILES	0x4
#define BAD_VERSION	0x8
#define BAD_CRC		0x10

/* The flag of a known key, 0 for others (ignored, as they always were). */
static unsigned
key_flag(const char *key)
{
	if (strcmp(key, "version") == 0)
		return HAS_VERSION;
	if (strcmp(key, "crc32") == 0)
		return HAS_CRC;
	if (strcmp(key, "files") == 0)
		return HAS_FILES;
	return 0;
}

/* The value of "version" or "crc32" (or of an unknown key) into h. */
static void
take_value(struct header *h, unsigned flag, json_t *v)
{
	const char	*hex = json_string_value(v);

	if (flag == HAS_VERSION && json_is_integer(v))
		h->version = json_integer_value(v);
	else if (flag == HAS_VERSION)
		h->seen |= BAD_VERSION;
	if (flag == HAS_CRC && (hex == NULL || strlen(hex) != 8 ||
	    !parse_hex32(hex, 8, &h->want)))
		h->seen |= BAD_CRC;
}

/* One "key": value of the top-level object. */
static int
parse_member(struct cursor *c, struct reg_table *t, struct header *h)
{
	json_t		*k, *v;
	unsigned	 flag;
	int		 r = 0;

	if ((k = next_value(c)) == NULL)
		return -EBADMSG;
	if (!json_is_string(k) || !at_char(c, ':')) {
		json_decref(k);
		return bad(c, "malformed object");
	}
	flag = key_flag(json_string_value(k));
	json_decref(k);
	if (h->seen & flag)
		return bad(c, "duplicate key in the top-level object");
	h->seen |= flag;
	if (flag == HAS_FILES)
		r = parse_files(c, t, &h->crc);
	else if ((v = next_value(c)) == NULL)
		r = -EBADMSG;
	else {
		take_value(h, flag, v);
		json_decref(v);
	}
	return r;
}

/* What the header says once the whole object is read. */
static int
check_header(struct cursor *c, const struct header *h)
{
	if (!(h->seen & HAS_VERSION) || (h->seen & BAD_VERSION))
		return bad(c, "no version");
	if (h->version != STATE_VERSION) {
		snprintf(c->why, c->whylen, "unsupported version %"
		    JSON_INTEGER_FORMAT, h->version);
		return -EBADMSG;
	}
	if ((h->seen & (HAS_CRC | HAS_FILES | BAD_CRC)) !=
	    (HAS_CRC | HAS_FILES))
		return bad(c, "missing or malformed crc32 or files");
	if ((uint32_t)h->crc != h->want) {
		snprintf(c->why, c->whylen, "crc32 mismatch (stored %08" PRIx32
		    ", computed %08lx)", h->want, (unsigned long)h->crc);
		return -EBADMSG;
	}
	return 0;
}

static int
parse_state(const char *text, size_t len, struct reg_table *t, char *why,
    size_t whylen)
{
	struct cursor	 c = { text, len, 0, why, whylen };
	struct header	 h;
	int		 r;

	memset(&h, 0, sizeof(h));
	if (len == 0)
		return bad(&c, "empty file");
	if (!at_char(&c, '{'))
		return bad(&c, "not a JSON object");
	if (!at_char(&c, '}')) {
		do
			r = parse_member(&c, t, &h);
		while (r == 0 && at_char(&c, ','));
		if (r != 0)
			return r;
		if (!at_char(&c, '}'))
			return bad(&c, "malformed object");
	}
	skip_blanks(&c);
	if (c.at != c.n)
		return bad(&c, "data after the object");
	return check_header(&c, &h);
}

/* Whole file into out; 0 or a negative errno (-EFBIG past the cap). */
static int
read_file(const char *path, struct buf *out)
{
	struct stat	 st;
	char		 chunk[65536];
	ssize_t		 n;
	int		 fd, r = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd == -1)
		return -errno;
	/* Room for the file as it is now, not the next power of two. */
	if (fstat(fd, &st) == 0 && st.st_size > 0 &&
	    (uint64_t)st.st_size <= STATE_MAX_BYTES)
		buf_reserve_exact(out, (size_t)st.st_size);
	for (;;) {
		n = read(fd, chunk, sizeof(chunk));
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = n == 0 ? 0 : -errno;
			break;
		}
		if (out->len + (size_t)n > STATE_MAX_BYTES) {
			r = -EFBIG;
			break;
		}
		buf_add(out, chunk, (size_t)n);
	}
	close(fd);
	return r;
}

/*
 * Load one file into t (emptied first).  0; -ENOENT when missing;
 * -EBADMSG when it does not parse or validate (logged with the reason);
 * another negative errno when it cannot be read (logged).
 */
static int
load_one(const char *path, struct reg_table *t)
{
	struct buf	 b;
	char		 why[256];
	int		 r;

	table_cleanup(t);
	table_init(t);
	buf_init(&b);
	r = read_file(path, &b);
	if (r == -EFBIG) {
		snprintf(why, sizeof(why), "larger than %u bytes",
		    STATE_MAX_BYTES);
		r = -EBADMSG;
	} else if (r == 0)
		r = parse_state(b.data, b.len, t, why, sizeof(why));
	else if (r != -ENOENT)
		log_error("cannot read state file %s: %s", path, strerror(-r));
	if (r == -EBADMSG) {
		log_error("state file %s is corrupt: %s", path, why);
		table_cleanup(t);
		table_init(t);
	}
	buf_cleanup(&b);
	return r;
}

/*
 * Keep a corrupt file as path.corrupt-<time>: moved away when keep is
 * false, hard-linked (left in place) when true.
 */
static void
set_aside(const char *path, bool keep)
{
	struct stat	 st;
	char		*name = NULL;
	int64_t		 now = wall_s();
	int		 i, r;

	for (i = 0; i < 100; i++) {
		free(name);
		name = i == 0 ? xasprintf("%s.corrupt-%" PRId64, path, now) :
		    xasprintf("%s.corrupt-%" PRId64 ".%d", path, now, i);
		if (lstat(name, &st) == -1 && errno == ENOENT)
			break;
	}
	r = keep ? link(path, name) : rename(path, name);
	if (r == -1)
		log_error("cannot set aside %s as %s: %s", path, name,
		    strerror(errno));
	else
		log_warn("corrupt state file %s %s %s", path,
		    keep ? "copied to" : "moved to", name);
	free(name);
}

static void
table_swap(struct reg_table *a, struct reg_table *b)
{
	struct reg_table	 tmp = *a;

	*a = *b;
	*b = tmp;
}

int
registry_load(struct registry *reg)
{
	struct reg_table t = { NULL, 0, 0, NULL, 0 };
	int		 r, rb;

	table_cleanup(&reg->tab);
	table_init(&reg->tab);
	reg->dirty = false;
	r = load_one(reg->path, &t);
	if (r == 0) {
		log_info("loaded %zu entries from %s", t.n, reg->path);
		goto done;
	}
	if (r != -ENOENT && r != -EBADMSG)
		goto done;
	rb = load_one(reg->bak, &t);
	if (rb == 0) {
		if (r == -EBADMSG)
			set_aside(reg->path, false);
		log_warn("%s %s; loaded %zu entries from the backup %s",
		    reg->path, r == -ENOENT ? "is missing" : "was corrupt",
		    t.n, reg->bak);
		/* Rewrite path soon so two good generations exist again. */
		reg->dirty = true;
		r = 0;
		goto done;
	}
	if (r == -ENOENT && rb == -ENOENT) {
		log_info("no state file %s; starting with no offsets",
		    reg->path);
		r = 0;
		goto done;
	}
	/* Leave the bad files in place: every later start fails alike. */
	if (r == -EBADMSG)
		set_aside(reg->path, true);
	if (rb == -EBADMSG)
		set_aside(reg->bak, true);
	log_error("no usable state in %s or %s", reg->path, reg->bak);
	r = (r == -EBADMSG || rb == -EBADMSG) ? -EBADMSG : rb;
done:
	if (r == 0)
		table_swap(&reg->tab, &t);
	table_cleanup(&t);
	return r;
}

int
registry_peek(struct registry *reg, bool *from_bak)
{
	struct reg_table t = { NULL, 0, 0, NULL, 0 };
	int		 r, rb;

	*from_bak = false;
	table_cleanup(&reg->tab);
	table_init(&reg->tab);
	reg->dirty = false;
	r = load_one(reg->path, &t);
	if (r == -ENOENT || r == -EBADMSG) {
		rb = load_one(reg->bak, &t);
		if (rb == 0)
			*from_bak = true;
		/* A missing path and a bad .bak: report the .bak's problem. */
		if (rb == 0 || r == -ENOENT)
			r = rb;
	}
	if (r == 0)
		table_swap(&reg->tab, &t);
	table_cleanup(&t);
	return r;
}

size_t
registry_each(const struct registry *reg,
    void (*cb)(const struct reg_entry *, void *), void *arg)
{
	struct reg_node	**v;
	size_t		  i, n = reg->tab.n;

	v = sorted_nodes(&reg->tab);
	for (i = 0; i < n; i++)
		cb(&v[i]->e, arg);
	free(v);
	return n;
}

/* --- saving ------------------------------------------------------------ */


/* Create path (mode 0600), write data, fsync, close. */
static int
write_file(const char *path, const char *data, size_t len,
    struct save_err *err)
{
	int	 fd, r;

	err->file = path;
	err->op = "create";
	fd = open(path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0600);
	if (fd == -1)
		return -errno;
	err->op = "write";
	r = write_all(fd, data, len);
	if (r == 0) {
		err->op = "fsync";
		r = fsync(fd) == -1 ? -errno : 0;
	}
	if (close(fd) == -1 && r == 0) {
		err->op = "close";
		r = -errno;
	}
	if (r < 0)
		unlink(path);
	return r;
}

/* Copy src to dst for filesystems without hard links. */
static int
copy_file(const char *src, const char *dst)
{
	struct buf	 b;
	struct save_err	 err;
	int		 r;

	buf_init(&b);
	r = read_file(src, &b);
	if (r == 0)
		r = write_file(dst, b.data, b.len, &err);
	buf_cleanup(&b);
	return r;
}

/*
 * Make path.bak the current path (if any) without path ever missing: stage
 * a link (or copy) as path.bak.tmp and rename it over path.bak.  Failure is
 * only a warning: the new state matters more than the old one.
 */
static void
keep_backup(struct registry *reg)
{
	int	 r = 0;

	if (unlink(reg->baktmp) == -1 && errno != ENOENT)
		r = -errno;
	if (r == 0 && link(reg->path, reg->baktmp) == -1) {
		r = -errno;
		if (r == -ENOENT)
			return;		/* no previous generation */
		if (r == -EPERM || r == -ENOTSUP || r == -EOPNOTSUPP ||
		    r == -EMLINK || r == -EXDEV)
			r = copy_file(reg->path, reg->baktmp);
	}
	if (r == 0 && rename(reg->baktmp, reg->bak) == -1)
		r = -errno;
	/* rename() of two links to one file does nothing: drop the stage. */
	unlink(reg->baktmp);
	if (r < 0)
		log_warn("cannot keep %s as %s: %s", reg->path, reg->bak,
		    strerror(-r));
}

static int
fsync_dir(const char *dir)
{
	int	 fd, r = 0;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd == -1)
		return -errno;
	if (fsync(fd) == -1)
		r = -errno;
	close(fd);
	return r;
}

/* Create path (mode 0600), write the state of t, fsync, close. */
static int
save_file(const char *path, const struct reg_table *t, struct save_err *err)
{
	struct writer	 o;
	uint32_t	 crc;
	char		 hex[9];
	ssize_t		 n;
	int		 r;

	err->file = path;
	err->op = "create";
	o.fd = open(path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0600);
	if (o.fd == -1)
		return -errno;
	o.err = 0;
	buf_init(&o.b);
	buf_reserve_exact(&o.b, SAVE_CHUNK);
	err->op = "write";
	crc = serialise(t, &o);
	buf_cleanup(&o.b);
	r = o.err;
	if (r == 0) {
		snprintf(hex, sizeof(hex), "%08" PRIx32, crc);
		n = pwrite(o.fd, hex, 8, (off_t)strlen(HEAD_CRC));
		r = n == 8 ? 0 : n < 0 ? -errno : -EIO;
	}
	if (r == 0) {
		err->op = "fsync";
		r = fsync(o.fd) == -1 ? -errno : 0;
	}
	if (close(o.fd) == -1 && r == 0) {
		err->op = "close";
		r = -errno;
	}
	if (r < 0)
		unlink(path);
	return r;
}

int
registry_save(struct registry *reg, bool force)
{
	struct save_err	 err;
	int		 r;

	if (!reg->dirty && !force)
		return 0;
	r = save_file(reg->tmp, &reg->tab, &err);
	if (r < 0)
		goto fail;
	keep_backup(reg);
	err.op = "rename to";
	err.file = reg->path;
	if (rename(reg->tmp, reg->path) == -1) {
		r = -errno;
		unlink(reg->tmp);
		goto fail;
	}
	err.op = "fsync directory";
	err.file = reg->dir;
	r = fsync_dir(reg->dir);
	if (r < 0)
		goto fail;
	reg->dirty = false;
	log_debug("saved %zu entries to %s", reg->tab.n, reg->path);
	return 0;
fail:
	log_error("cannot save state: %s %s: %s", err.op, err.file,
	    strerror(-r));
	return r;
}
