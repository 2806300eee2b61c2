/*
 * Whole-file flows (wholefile.h): the table of the flow's files, their
 * readiness, reading them in order and noticing when they are delivered;
 * the states are drawn in wholefile_int.h, the cleanup is wfclean.c's.
 * Lookups by (dev, ino) use a map keyed by inode whose values chain the
 * files of that inode.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/metrics.h"
#include "conf/cleanconf.h"
#include "conf/conf.h"
#include "files/cleanup.h"
#include "tail/resume.h"
#include "files/wholefile_int.h"
#include "state/registry.h"

static const char *const state_names[WF_NSTATES] = {
	"pending", "empty", "ready", "reading", "sent", "delivered",
	"durable", "kept",
};

static void	on_timer(uv_timer_t *);
static void	wholefile_freed(struct closer *);

/* --- pure --------------------------------------------------------------- */

enum wholefile_look
wholefile_look(uint64_t was_size, int64_t was_mtime, uint64_t size,
    int64_t mtime, uint64_t since_ms, uint64_t now_ms, uint64_t quiet_ms,
    bool ignore_empty)
{
	if (size != was_size || mtime != was_mtime)
		return WHOLEFILE_CHANGED;
	if (now_ms < since_ms || now_ms - since_ms < quiet_ms)
		return WHOLEFILE_WAIT;
	return size == 0 && ignore_empty ? WHOLEFILE_EMPTY : WHOLEFILE_READY;
}

int
wholefile_order(int64_t mtime_a, const char *path_a, int64_t mtime_b,
    const char *path_b)
{
	if (mtime_a != mtime_b)
		return mtime_a < mtime_b ? -1 : 1;
	return strcmp(path_a, path_b);
}

/* --- the table ---------------------------------------------------------- */

static void
list_del(struct wf_list *l, struct wf_file *f)
{
	if (f->prev != NULL)
		f->prev->next = f->next;
	else
		l->head = f->next;
	if (f->next != NULL)
		f->next->prev = f->prev;
	else
		l->tail = f->prev;
	f->prev = f->next = NULL;
	l->n--;
}

static void
list_add(struct wf_list *l, struct wf_file *f)
{
	f->prev = l->tail;
	f->next = NULL;
	if (l->tail != NULL)
		l->tail->next = f;
	else
		l->head = f;
	l->tail = f;
	l->n++;
}

void
wholefile_move(struct wholefile *wf, struct wf_file *f, enum wf_state st)
{
	log_debug("[%s] %s: %s -> %s", wf->fc->name, f->path,
	    state_names[f->state], state_names[st]);
	list_del(&wf->lists[f->state], f);
	f->state = st;
	list_add(&wf->lists[st], f);
	if (st == WF_READY)
		wf->ready_sorted = false;
}

/* The map's key of an inode (the map cannot hold 0, which no file has). */
static uint64_t
ino_key(uint64_t ino)
{
	return ino != 0 ? ino : UINT64_MAX;
}

/* The keys of the two maps (keymap: the values carry them). */
static uint64_t
file_ino_key(const void *f)
{
	return ino_key(((const struct wf_file *)f)->id.ino);
}

static uint64_t
file_tid_key(const void *f)
{
	return ((const struct wf_file *)f)->tid;
}

static struct wf_file *
lookup(struct wholefile *wf, uint64_t dev, uint64_t ino)
{
	struct wf_file	*f;

	for (f = keymap_get(&wf->byino, ino_key(ino)); f != NULL;
	    f = f->same_ino)
		if (f->id.dev == dev)
			return f;
	return NULL;
}

static struct wf_file *
add_file(struct wholefile *wf, const char *path, uint64_t dev, uint64_t ino,
    enum wf_state st)
{
	struct wf_file	*f;

	f = xcalloc(1, sizeof(*f));
	f->path = xstrdup(path);
	f->id.dev = dev;
	f->id.ino = ino;
	f->state = st;
	f->same_ino = keymap_get(&wf->byino, ino_key(ino));
	keymap_put(&wf->byino, f);
	list_add(&wf->lists[st], f);
	return f;
}

void
wholefile_forget(struct wholefile *wf, struct wf_file *f)
{
	struct wf_file	**pp, *head;
	uint64_t	  key = ino_key(f->id.ino);

	head = keymap_get(&wf->byino, key);
	for (pp = &head; *pp != NULL; pp = &(*pp)->same_ino)
		if (*pp == f) {
			*pp = f->same_ino;
			break;
		}
	if (head != NULL)
		keymap_put(&wf->byino, head);
	else
		keymap_del(&wf->byino, key);
	if (f->tid != 0)
		keymap_del(&wf->bytid, f->tid);
	list_del(&wf->lists[f->state], f);
	free(f->path);
	free(f);
}

static void
set_path(struct wf_file *f, const char *path)
{
	if (strcmp(f->path, path) == 0)
		return;
	free(f->path);
	f->path = xstrdup(path);
}

void
wholefile_restart(struct wholefile *wf, struct wf_file *f, uint64_t size,
    int64_t mtime)
{
	f->id.size = size;
	f->id.mtime_ns = mtime;
	f->since_ms = mono_ms();
	if (f->state != WF_PENDING)
		wholefile_move(wf, f, WF_PENDING);
}

/* --- readiness ---------------------------------------------------------- */

/* A pending file whose wait is over: stat it again and decide. */
static void
look(struct wholefile *wf, struct wf_file *f, uint64_t now)
{
	struct cleanup_id id;
	struct stat	 st;

	if (stat(f->path, &st) != 0 || (uint64_t)st.st_dev != f->id.dev ||
	    (uint64_t)st.st_ino != f->id.ino) {
		/* Gone: a scan finds what replaced it. */
		wholefile_forget(wf, f);
		return;
	}
	switch (wholefile_look(f->id.size, f->id.mtime_ns,
	    (uint64_t)st.st_size, wholefile_mtime(&st), f->since_ms, now,
	    wf->quiet_ms, wf->fc->ignore_empty)) {
	case WHOLEFILE_WAIT:
		return;
	case WHOLEFILE_CHANGED:
		wholefile_restart(wf, f, (uint64_t)st.st_size,
		    wholefile_mtime(&st));
		return;
	case WHOLEFILE_EMPTY:
		log_info("[%s] %s is empty: not sent (isIgnoreEmptyData)",
		    wf->fc->name, f->path);
		wholefile_move(wf, f, WF_EMPTY);
		return;
	case WHOLEFILE_READY:
		break;
	}
	/* What is sent is what is measured now: a file that changes from
	 * here on is caught before its cleanup. */
	if (cleanup_identify(f->path, wf->fp, &id) != 0 ||
	    id.dev != f->id.dev || id.ino != f->id.ino ||
	    id.size != f->id.size || id.mtime_ns != f->id.mtime_ns) {
		wholefile_restart(wf, f, id.size, id.mtime_ns);
		return;
	}
	f->id = id;
	log_info("[%s] %s (inode %ju, %ju bytes) stayed unchanged for %ju ms: "
	    "sending it", wf->fc->name, f->path, (uintmax_t)id.ino,
	    (uintmax_t)id.size, (uintmax_t)wf->quiet_ms);
	wholefile_move(wf, f, WF_READY);
}

static void
look_pending(struct wholefile *wf, uint64_t now)
{
	struct wf_file	*f, *next;

	for (f = wf->lists[WF_PENDING].head; f != NULL; f = next) {
		next = f->next;
		if (now - f->since_ms >= wf->quiet_ms)
			look(wf, f, now);
	}
}

static int
ready_cmp(const void *a, const void *b)
{
	const struct wf_file *x = *(struct wf_file *const *)a;
	const struct wf_file *y = *(struct wf_file *const *)b;

	return wholefile_order(x->id.mtime_ns, x->path, y->id.mtime_ns,
	    y->path);
}

static void
sort_ready(struct wholefile *wf)
{
	struct wf_list	*l = &wf->lists[WF_READY];
	struct wf_file	**v, *f;
	size_t		  i, n = l->n;

	if (wf->ready_sorted || n < 2)
		return;
	v = xcalloc(n, sizeof(*v));
	for (i = 0, f = l->head; f != NULL; f = f->next)
		v[i++] = f;
	qsort(v, n, sizeof(*v), ready_cmp);
	memset(l, 0, sizeof(*l));
	for (i = 0; i < n; i++)
		list_add(l, v[i]);
	free(v);
	wf->ready_sorted = true;
}

/*
 * Whether the oldest ready file f can be read now (it is as it was when it
 * became ready): *st is what it is.  Otherwise it is forgotten or pending
 * again.
 */
static bool
still_ready(struct wholefile *wf, struct wf_file *f, struct stat *st)
{
	if (stat(f->path, st) != 0 || (uint64_t)st->st_ino != f->id.ino ||
	    (uint64_t)st->st_dev != f->id.dev) {
		wholefile_forget(wf, f);
		return false;
	}
	if ((uint64_t)st->st_size != f->id.size ||
	    wholefile_mtime(st) != f->id.mtime_ns) {
		wholefile_restart(wf, f, (uint64_t)st->st_size,
		    wholefile_mtime(st));
		return false;
	}
	return true;
}

bool
wholefile_next(struct wholefile *wf, struct wholefile_next *nx)
{
	struct wf_file	*f;

	if (wf == NULL || wf->stopped)
		return false;
	sort_ready(wf);
	while (wf->lists[WF_READING].n < WHOLEFILE_READING &&
	    wf->lists[WF_READY].head != NULL) {
		f = wf->lists[WF_READY].head;
		if (!still_ready(wf, f, &nx->st))
			continue;
		nx->path = f->path;
		nx->offset = resume_offset(wf->fc, wf->reg, wf->m, f->path,
		    &nx->st, false);
		wf->picked = f;
		wf->picked_off = nx->offset;
		return true;
	}
	return false;
}

void
wholefile_tracked(struct wholefile *wf, uint64_t id, int err)
{
	struct wf_file	*f = wf->picked;

	wf->picked = NULL;
	if (id == 0) {
		if (err != f->err)
			log_warn("[%s] %s: cannot open: %s; will retry once it "
			    "stayed unchanged again", wf->fc->name, f->path,
			    strerror(err));
		wf->m->open_errors += err != f->err;
		f->err = err;
		wholefile_restart(wf, f, f->id.size, f->id.mtime_ns);
		return;
	}
	if (wf->picked_off > 0)
		log_info("[%s] %s: resuming at offset %ju", wf->fc->name,
		    f->path, (uintmax_t)wf->picked_off);
	f->tid = id;
	f->err = 0;
	keymap_put(&wf->bytid, f);
	wholefile_move(wf, f, WF_READING);
}

/* --- delivery ----------------------------------------------------------- */

struct reg_entry *
wholefile_entry(struct wholefile *wf, const struct wf_file *f)
{
	return registry_find(wf->reg, wf->fc->name, f->id.dev, f->id.ino);
}

void
wholefile_mark(struct wholefile *wf, struct wf_file *f)
{
	struct reg_entry *e;

	e = registry_set(wf->reg, wf->fc->name, f->id.dev, f->id.ino,
	    f->id.head_crc, f->id.head_len, f->path, f->id.size);
	registry_set_complete(wf->reg, e, true, f->id.mtime_ns,
	    f->id.tail_crc, f->id.tail_len);
	wholefile_move(wf, f, WF_DELIVERED);
}

/* Every record of f is acknowledged (files.c drops its tailer). */
static void
deliver(struct wholefile *wf, struct wf_file *f)
{
	keymap_del(&wf->bytid, f->tid);
	f->tid = 0;
	wf->m->files_done++;
	log_info("[%s] delivered %s (inode %ju, %ju bytes); cleanup once the "
	    "state file has it", wf->fc->name, f->path, (uintmax_t)f->id.ino,
	    (uintmax_t)f->id.size);
	wholefile_mark(wf, f);
}

bool
wholefile_progress(struct wholefile *wf, uint64_t id,
    const struct wholefile_progress *p)
{
	struct wf_file	*f = wf != NULL ? keymap_get(&wf->bytid, id) : NULL;

	if (f == NULL)
		return false;
	/* Read to its size, and nothing waits at its end. */
	if (p->read_off < f->id.size || p->waits)
		return false;
	if (f->state == WF_READING)
		wholefile_move(wf, f, WF_SENT);	/* its slot is free */
	if (p->pending > 0)
		return false;
	deliver(wf, f);
	return true;
}

void
wholefile_untracked(struct wholefile *wf, uint64_t id)
{
	struct wf_file	*f = wf != NULL ? keymap_get(&wf->bytid, id) : NULL;

	if (f == NULL)
		return;
	/* Not tracked any more: start over from its offset. */
	keymap_del(&wf->bytid, id);
	f->tid = 0;
	wholefile_restart(wf, f, f->id.size, f->id.mtime_ns);
	wholefile_soon(wf);
}

/* --- the timer ---------------------------------------------------------- */

/* The next readiness deadline, unless something is due sooner. */
static void
arm(struct wholefile *wf, uint64_t now)
{
	struct wf_file	*f;
	uint64_t	 due = UINT64_MAX;

	if (wf->stopped || uv_is_active((uv_handle_t *)&wf->timer))
		return;
	for (f = wf->lists[WF_PENDING].head; f != NULL; f = f->next)
		due = MIN(due, f->since_ms + wf->quiet_ms);
	if (due != UINT64_MAX)
		uv_timer_start(&wf->timer, on_timer, due > now ? due - now : 0,
		    0);
}

static void
on_timer(uv_timer_t *h)
{
	struct wholefile *wf = container_of(h, struct wholefile, timer);
	uint64_t	 now = mono_ms();

	if (wf->stopped)
		return;
	look_pending(wf, now);
	/* files.c reports its tailers, then takes what is ready. */
	wf->turn(wf->arg);
	wfclean_due(wf);
	arm(wf, now);
}

void
wholefile_soon(struct wholefile *wf)
{
	if (!wf->stopped)
		uv_timer_start(&wf->timer, on_timer, 0, 0);
}

/* --- what files.c reports ----------------------------------------------- */

void
wholefile_found(struct wholefile *wf, const char *path, const struct stat *st)
{
	struct wf_file	*f;
	uint64_t	 size = (uint64_t)st->st_size;
	int64_t		 mtime = wholefile_mtime(st);
	bool		 changed;

	if (wf == NULL)
		return;
	f = lookup(wf, (uint64_t)st->st_dev, (uint64_t)st->st_ino);
	if (f == NULL) {
		f = add_file(wf, path, (uint64_t)st->st_dev,
		    (uint64_t)st->st_ino, WF_PENDING);
		f->seen = f->seen_last = true;
		wholefile_restart(wf, f, size, mtime);
		wholefile_soon(wf);
		return;
	}
	f->seen = true;
	set_path(f, path);
	changed = size != f->id.size || mtime != f->id.mtime_ns;
	switch (f->state) {
	case WF_PENDING:
	case WF_EMPTY:
	case WF_READY:
		if (changed)
			wholefile_restart(wf, f, size, mtime);
		break;
	case WF_KEPT:
		if (changed)
			wfclean_changed(wf, f);
		break;
	default:
		/* In progress or waiting for its cleanup: checked then. */
		break;
	}
}

/* What a scan that walked and did not see f means for it. */
static void
unseen(struct wholefile *wf, struct wf_file *f)
{
	int	 err;

	switch (f->state) {
	case WF_PENDING:
	case WF_EMPTY:
	case WF_READY:
		wholefile_forget(wf, f);	/* gone before it was sent */
		break;
	case WF_KEPT:
		if (cleanup_check(f->path, &f->id, &err) != CLEANUP_SAME &&
		    err != EACCES)
			wfclean_gone(wf, f);
		break;
	default:
		break;		/* in progress, or its cleanup decides */
	}
}

void
wholefile_scanned(struct wholefile *wf, bool walked)
{
	struct wf_file	*f, *next;
	enum wf_state	 st;

	if (wf == NULL)
		return;
	for (st = 0; st < WF_NSTATES; st++)
		for (f = wf->lists[st].head; f != NULL; f = next) {
			next = f->next;
			f->retry = st == WF_DURABLE;
			if (walked)
				f->seen_last = f->seen;
			f->seen = false;
			if (walked && !f->seen_last)
				unseen(wf, f);
		}
	wholefile_soon(wf);
}

void
wholefile_poke(struct wholefile *wf)
{
	if (wf != NULL)
		wholefile_soon(wf);
}

void
wholefile_saved(struct wholefile *wf)
{
	struct wf_file	*f, *next;
	struct reg_entry *e;

	if (wf == NULL || wf->stopped)
		return;
	for (f = wf->lists[WF_DELIVERED].head; f != NULL; f = next) {
		next = f->next;
		e = wholefile_entry(wf, f);
		if (e == NULL || !registry_durable(wf->reg, e))
			continue;
		f->retry = true;
		wholefile_move(wf, f, WF_DURABLE);
		wholefile_soon(wf);
	}
}

void
wholefile_touch(struct wholefile *wf)
{
	static const enum wf_state done[] = { WF_DELIVERED, WF_DURABLE,
	    WF_KEPT };
	struct wf_file	*f;
	size_t		 i;

	for (i = 0; wf != NULL && i < ARRAY_SIZE(done); i++)
		for (f = wf->lists[done[i]].head; f != NULL; f = f->next)
			if (wholefile_entry(wf, f) != NULL)
				(void)registry_set(wf->reg, wf->fc->name,
				    f->id.dev, f->id.ino, f->id.head_crc,
				    f->id.head_len, f->path, f->id.size);
}

bool
wholefile_settled(const struct wholefile *wf)
{
	const struct wf_file *f;
	enum wf_state	 st;

	for (st = WF_PENDING; st <= WF_DELIVERED; st++)
		if (st != WF_EMPTY && wf->lists[st].n > 0)
			return false;
	for (f = wf->lists[WF_DURABLE].head; f != NULL; f = f->next)
		if (f->retry)
			return false;
	return true;
}

void
wholefile_gauges(const struct wholefile *wf, struct metrics_flow *m)
{
	const struct wf_file *f;

	if (wf == NULL)
		return;
	m->whole_pending = wf->lists[WF_PENDING].n + wf->lists[WF_READY].n;
	m->whole_in_progress = wf->lists[WF_READING].n +
	    wf->lists[WF_SENT].n + wf->lists[WF_DELIVERED].n;
	m->whole_cleanup_pending = wf->lists[WF_DURABLE].n;
	m->whole_cleanup_failing = 0;
	for (f = wf->lists[WF_DURABLE].head; f != NULL; f = f->next)
		m->whole_cleanup_failing += f->err != 0;
}

/* --- lifecycle ---------------------------------------------------------- */

/* registry_each: the flow's complete entries, waiting for their cleanup. */
static void
take_entry(const struct reg_entry *e, void *arg)
{
	struct wholefile *wf = arg;
	struct wf_file	*f;

	if (reg_done(e) == NULL || strcmp(e->flow, wf->fc->name) != 0 ||
	    lookup(wf, e->dev, e->ino) != NULL)
		return;
	f = add_file(wf, e->path, e->dev, e->ino,
	    registry_durable(wf->reg, e) ? WF_DURABLE : WF_DELIVERED);
	f->id.size = e->offset;
	f->id.mtime_ns = reg_done(e)->mtime_ns;
	f->id.head_crc = e->fp_crc;
	f->id.head_len = e->fp_len;
	f->id.tail_crc = reg_done(e)->tail_crc;
	f->id.tail_len = reg_done(e)->tail_len;
}

struct wholefile *
wholefile_new(uv_loop_t *loop, const struct conf_flow *fc,
    struct registry *reg, struct metrics_flow *m, bool once,
    void (*turn)(void *), void *arg)
{
	struct wholefile *wf;
	const char	*key, *bad;
	char		 why[512];
	size_t		 n;

	if (fc->file_appendable)
		return NULL;
	wf = xcalloc(1, sizeof(*wf));
	wf->fc = fc;
	wf->reg = reg;
	wf->m = m;
	wf->turn = turn;
	wf->arg = arg;
	wf->once = once;
	wf->policy = cleanconf_policy(fc);
	wf->quiet_ms = (uint64_t)fc->max_file_checking_ms;
	wf->fp = (uint32_t)fc->header_bytes;
	keymap_init(&wf->byino, file_ino_key);
	keymap_init(&wf->bytid, file_tid_key);
	uv_timer_init(loop, &wf->timer);
	closer_init(&wf->closer, wholefile_freed);
	bad = wf->policy == CLEANUP_MOVE ? cleanconf_check(fc, true, &key,
	    why, sizeof(why)) : NULL;
	if (bad != NULL)
		log_warn("[%s] %s; delivered files stay until they can be "
		    "moved (tried at every rescan)", fc->name, bad);
	registry_each(reg, take_entry, wf);
	n = wf->lists[WF_DURABLE].n + wf->lists[WF_DELIVERED].n;
	if (n > 0)
		log_info("[%s] %zu delivered file%s to clean up", fc->name, n,
		    n == 1 ? "" : "s");
	return wf;
}

void
wholefile_stop(struct wholefile *wf)
{
	if (wf == NULL)
		return;
	wf->stopped = true;
	uv_timer_stop(&wf->timer);
}

/* The timer closed: the memory goes. */
static void
wholefile_freed(struct closer *c)
{
	free(container_of(c, struct wholefile, closer));
}

void
wholefile_free(struct wholefile *wf)
{
	enum wf_state	 st;

	if (wf == NULL)
		return;
	wholefile_stop(wf);
	for (st = 0; st < WF_NSTATES; st++)
		while (wf->lists[st].head != NULL)
			wholefile_forget(wf, wf->lists[st].head);
	keymap_cleanup(&wf->byino);
	keymap_cleanup(&wf->bytid);
	closer_close(&wf->closer, (uv_handle_t *)&wf->timer);
	closer_release(&wf->closer);
}
