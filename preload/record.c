// SPDX-License-Identifier: MIT
/*
 * Recording and replay: every value a wrapper hands a thread (clock
 * readings, entropy bytes, wait outcomes) goes to, or comes from, that
 * thread's stream (lib/jstream.h bytes), one file per (image, thread index):
 * "<dir>/<lineage>.<thread>.<image>.hjs", the image id in 16 hex digits.
 *
 * Per thread, one anonymous mapping (struct hm_jr_thread, plus the 64 KiB
 * encoder buffer when recording), made the first time the thread records or
 * replays a value: nothing is allocated in the hot path, nothing with malloc,
 * and threads that never ask for a value cost nothing. Every thread's mapping
 * is on hm.jr_list (under hm.jr_lock), because streams end from other threads:
 *
 *   process exit  destructor or _exit: every stream gets END(exit) and is flushed
 *   exec          END(exec) and flushed before the new image; if the exec fails,
 *                 the END is cut off again (ftruncate) and the streams go on
 *   thread exit   the thread's own END(thread exit), from pthread_create's trampoline
 *   fork          the child drops what it inherited (buffered bytes, fds, replay
 *                 positions) unwritten and starts new streams under its own key
 *   scope         entering or leaving one (scope.c): each thread's stream gets
 *                 END(scope) at its next value, which opens its stream of the
 *                 new scope, in the scope's own directory
 *
 * A recording thread appends with no atomic read-modify-write at all: it marks
 * itself busy (a plain store), then checks that no closer is at work (a plain
 * load). A closer (exit, exec) announces itself first and then makes every
 * thread of the process execute a memory barrier (membarrier(2)), so each
 * thread either shows it is busy - and the closer waits for it - or sees the
 * closer and stays out. A signal handler that interrupts its own thread's
 * append drops its value rather than deadlock. Replay positions are only ever
 * touched by their owner.
 *
 * Replay opens the thread's stream when it first asks for a value and answers
 * in order, with two cursors over the stream:
 *
 *   data    wall-clock readings (CLOCK_REALTIME & co, gettimeofday, time, ...)
 *           and entropy: what programs print, hash and turn into keys. Replayed
 *           exactly: a value of another kind (record type, call, clock id,
 *           entropy length), a stream that ended, or no stream at all is a
 *           mismatch. Strict, the process prints one line, appends one to
 *           HERMETIC_REPLAY_REPORT and ends with HM_EXIT_REPLAY; not strict,
 *           it is answered live and counted, and the record stays for the next
 *           question (an extra call resynchronises).
 *   timing  monotonic and CPU-time readings, sleeps and timed waits. Replayed
 *           in their own order, best effort: runtimes read these inside their
 *           locks and schedulers (CPython reads CLOCK_MONOTONIC on every lock
 *           acquisition and waits on a condition variable whenever two threads
 *           want the GIL; JVMs and libuv do alike), so how many a thread makes
 *           depends on scheduling, not on the program. One the recording cannot
 *           answer is answered live (with a frozen clock off: the last replayed
 *           reading, so time never runs backwards) and counted, even in strict
 *           mode, and never ends the process.
 */
#include <fcntl.h>
#include <string.h>
#include <linux/membarrier.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include "shim.h"
#include "config.h"
#include "record_int.h"


static bool warned_rec;
/* A closer is at work: CLOSING_EXEC (appends wait for it), CLOSING_EXIT
 * (streams are over: appends are dropped). */
enum { CLOSING_EXEC = 1, CLOSING_EXIT };
static int closing;

static pid_t gettid_raw(void)
{
	return hm_sys(SYS_gettid, 0, 0, 0);
}


/* "<dir>/[<scope dir>/]<lineage>.<thread>.<image>.hjs", the stream's
 * identity within its scope (scope.c); false if it does not fit. */
static bool stream_path(char *buf, const char *dir, uint32_t index, bool replay,
			struct hm_stream_ident *id)
{
	struct sbuf b = { buf, 0, PATH_BUF };

	hm_stream_ident(index, replay, id);
	sb_str(&b, dir);
	sb_str(&b, "/");
	if (id->dir[0]) {
		sb_str(&b, id->dir);
		sb_str(&b, "/");
	}
	sb_str(&b, id->lineage);
	sb_str(&b, ".");
	sb_u64(&b, id->thread);
	sb_str(&b, ".");
	sb_hex(&b, id->image);
	sb_str(&b, ".hjs");
	return b.n + 1 < PATH_BUF;
}

/* ---- set-up ---- */

void hm_jr_init(void)
{
	if (hm.rec_dir && hm.rec_dir[0] == '/')
		hm.jr |= HM_JR_RECORD;
	else if (hm.rec_dir && hm.rec_dir[0])
		hm_warn("HERMETIC_RECORD is not an absolute path, not recording: ", hm.rec_dir, NULL);
	if (hm.rep_dir && hm.rep_dir[0] == '/')
		hm.jr |= HM_JR_REPLAY;
	else if (hm.rep_dir && hm.rep_dir[0])
		hm_warn("HERMETIC_REPLAY is not an absolute path, not replaying: ", hm.rep_dir, NULL);
	if (hm.rep_report && hm.rep_report[0] != '/')
		hm.rep_report = NULL;
	hm.clock_hook = hm.clock || hm.jr;
	hm.rng_hook = hm.rng || hm.jr;
}

/* The calling thread's state, made on first use. NULL in a vfork child
 * (its memory is its parent's: it may create nothing) and once the thread or
 * the process is ending. */
static struct hm_jr_thread *self(void)
{
	struct hm_jr_thread *t = hm_t.jr;
	size_t size;
	long p;

	if (likely(t))
		return t;
	if (hm_t.jr_done || __atomic_load_n(&hm.jr_closed, __ATOMIC_ACQUIRE) ||
	    hm_sys(SYS_getpid, 0, 0, 0) != hm.pid)
		return NULL;
	size = sizeof(*t) + (hm.jr & HM_JR_RECORD ? REC_BUF : 0);
	size = (size + 4095) & ~(size_t)4095;
	p = hm_sys6(SYS_mmap, 0, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p < 0 && p > -4096)
		return NULL;
	t = (struct hm_jr_thread *)p;
	t->size = size;
	t->index = hm_t.index;
	t->tid = gettid_raw();
	t->fd = -1;
	t->epoch = __atomic_load_n(&hm.sc_epoch, __ATOMIC_ACQUIRE);
	pthread_mutex_lock(&hm.jr_lock);
	if (hm.jr_closed) {
		pthread_mutex_unlock(&hm.jr_lock);
		hm_sys(SYS_munmap, t, size, 0);
		return NULL;
	}
	t->next = hm.jr_list;
	hm.jr_list = t;
	pthread_mutex_unlock(&hm.jr_lock);
	hm_t.jr = t;
	return t;
}

static void free_thread(struct hm_jr_thread *t)
{
	if (t->fd >= 0)
		hm_sys(SYS_close, t->fd, 0, 0);
	if (t->map)
		hm_sys(SYS_munmap, t->map, t->map_len, 0);
	hm_sys(SYS_munmap, t, t->size, 0);
}

/* ---- recording ---- */

static void warn_errno(const char *what, const char *path, long err)
{
	char num[24];

	hm_fmt_u64(num, sizeof(num), (uint64_t)-err);
	hm_warn(what, path, NULL);
	hm_warn("  (errno ", num, "); values of this thread are not journalled");
}

static bool rec_open(struct hm_jr_thread *t)
{
	struct hm_jstream_header h = { .pid = hm.pid, .exe_count = hm.exe_count };
	struct hm_stream_ident id;
	char path[PATH_BUF];
	long fd;

	t->rec = ST_OFF;
	if (!stream_path(path, hm.rec_dir, t->index, false, &id)) {
		if (!__atomic_exchange_n(&warned_rec, true, __ATOMIC_RELAXED))
			hm_warn("HERMETIC_RECORD path too long, not recording: ", hm.rec_dir, NULL);
		return false;
	}
	fd = hm_sys6(SYS_openat, AT_FDCWD, (long)path,
		     O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600, 0, 0);
	if (fd < 0) {
		if (!__atomic_exchange_n(&warned_rec, true, __ATOMIC_RELAXED))
			warn_errno("cannot create the stream file ", path, fd);
		return false;
	}
	hm_sys(SYS_fchmod, fd, 0600, 0); /* whatever the umask */
	memcpy(h.lineage, id.lineage, strlen(id.lineage) + 1);
	memcpy(h.exe, hm.exe, strlen(hm.exe) + 1);
	h.thread = id.thread;
	h.gen = id.gen;
	h.proc = id.proc;
	h.parent = id.parent;
	h.tid = (uint32_t)t->tid;
	if (hm_jstream_enc_init(&t->enc, t->buf, REC_BUF, (int)fd, &h) < 0) {
		hm_sys(SYS_close, fd, 0, 0);
		return false;
	}
	t->fd = (int)fd;
	t->rec = ST_OPEN;
	return true;
}

static inline bool rec_lock(struct hm_jr_thread *t);
static inline void rec_unlock(struct hm_jr_thread *t);
static void end_stream(struct hm_jr_thread *t, enum hm_jend_reason why);

/* The process entered or left a scope (scope.c) since this thread's streams
 * began: they end, and the next value opens the thread's streams of the
 * new scope. Only the owner rotates; the busy flag keeps closers out. */
static void rotate(struct hm_jr_thread *t)
{
	t->epoch = __atomic_load_n(&hm.sc_epoch, __ATOMIC_ACQUIRE);
	if (t->rec == ST_OPEN && rec_lock(t)) {
		end_stream(t, HM_JEND_SCOPE);
		hm_sys(SYS_close, t->fd, 0, 0);
		t->fd = -1;
		t->rec = ST_NONE;
		rec_unlock(t);
	} else if (t->rec == ST_OFF) {
		t->rec = ST_NONE;
	}
	if (t->rep != RP_NONE) {
		hm_jr_report_live(t);
		if (t->map)
			hm_sys(SYS_munmap, t->map, t->map_len, 0);
		t->map = NULL;
		t->rep = RP_NONE;
		t->diverged = false;
		t->bad_why = NULL;
		t->asked = 0;
		memset(t->cur, 0, sizeof(t->cur));
	}
}

static inline bool stale(const struct hm_jr_thread *t)
{
	return unlikely(t->epoch != __atomic_load_n(&hm.sc_epoch, __ATOMIC_RELAXED));
}

/* The calling thread's state with an open recording stream, or NULL. */
static struct hm_jr_thread *rec_self(void)
{
	struct hm_jr_thread *t = self();

	if (!t)
		return NULL;
	if (stale(t))
		rotate(t);
	if (t->rec == ST_NONE)
		rec_open(t);
	return t->rec == ST_OPEN ? t : NULL;
}

__attribute__((noinline)) static bool rec_lock_slow(struct hm_jr_thread *t)
{
	for (;;) {
		__atomic_store_n(&t->busy, 0, __ATOMIC_RELEASE);
		/* Exiting, or this very thread is the closer (a signal handler
		 * between exec and its failure): the value is dropped. */
		if (__atomic_load_n(&closing, __ATOMIC_ACQUIRE) == CLOSING_EXIT ||
		    __atomic_load_n(&hm.jr_closer, __ATOMIC_RELAXED) == gettid_raw())
			return false;
		hm_sys(SYS_sched_yield, 0, 0, 0);
		__atomic_store_n(&t->busy, 1, __ATOMIC_RELAXED);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		if (!__atomic_load_n(&closing, __ATOMIC_ACQUIRE))
			return true;
	}
}

static inline bool rec_lock(struct hm_jr_thread *t)
{
	if (unlikely(t->busy))
		return false; /* a signal handler interrupted our own append */
	__atomic_store_n(&t->busy, 1, __ATOMIC_RELAXED);
	/* The store before the load, as far as the compiler goes; the CPU's
	 * store buffer is the closer's membarrier's business. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (likely(!__atomic_load_n(&closing, __ATOMIC_RELAXED)))
		return true;
	return rec_lock_slow(t);
}

static inline void rec_unlock(struct hm_jr_thread *t)
{
	__atomic_store_n(&t->busy, 0, __ATOMIC_RELEASE);
}

void hm_jr_put_clock(enum hm_jclock_call call, clockid_t id, int64_t ns)
{
	struct hm_jr_thread *t = hm_t.jr;

	if (unlikely(!t || t->rec != ST_OPEN || stale(t)) && !(t = rec_self()))
		return;
	if (unlikely(!rec_lock(t)))
		return;
	if (id == CLOCK_MONOTONIC) {
		/* what hm_jr_unput_clock restores: a put that flushed first
		 * (append) wrote the record at the buffer's start */
		uint64_t flushed = t->enc.flushed;
		size_t len = t->enc.len;

		t->undo_last = t->enc.pred.last[CLOCK_MONOTONIC];
		t->undo_delta = t->enc.pred.delta[CLOCK_MONOTONIC];
		t->undo_n = t->enc.n_records;
		hm_jstream_put_clock_fast(&t->enc, call, id, ns);
		t->undo_start = t->enc.flushed == flushed ? len : 0;
		t->undo_end = t->enc.len;
		t->undo_armed = t->enc.n_records == t->undo_n + 1;
	} else {
		hm_jstream_put_clock_fast(&t->enc, call, id, ns);
		t->undo_armed = false;
	}
	rec_unlock(t);
}

void hm_jr_unput_clock(void)
{
	struct hm_jr_thread *t = hm_t.jr;

	/* only the record put last, still in the buffer, by this stream */
	if (!t || t->rec != ST_OPEN || stale(t) || !t->undo_armed || t->enc.err || t->enc.ended ||
	    t->enc.len != t->undo_end || t->enc.n_records != t->undo_n + 1)
		return;
	if (unlikely(!rec_lock(t)))
		return;
	t->enc.len = t->undo_start;
	t->enc.pred.last[CLOCK_MONOTONIC] = t->undo_last;
	t->enc.pred.delta[CLOCK_MONOTONIC] = t->undo_delta;
	t->enc.n_records = t->undo_n;
	t->undo_armed = false;
	rec_unlock(t);
}

void hm_jr_put_entropy(enum hm_jentropy_src src, const void *buf, size_t len)
{
	struct hm_jr_thread *t = hm_t.jr;

	if (unlikely(!t || t->rec != ST_OPEN || stale(t)) && !(t = rec_self()))
		return;
	if (unlikely(!rec_lock(t)))
		return;
	hm_jstream_put_entropy(&t->enc, src, buf, len);
	t->undo_armed = false;
	rec_unlock(t);
}

static void put_wait(enum hm_jwait_call call, unsigned flags, int64_t result, uint64_t vtime)
{
	struct hm_jr_thread *t = hm_t.jr;

	if (unlikely(!t || t->rec != ST_OPEN || stale(t)) && !(t = rec_self()))
		return;
	if (unlikely(!rec_lock(t)))
		return;
	hm_jstream_put_wait(&t->enc, call, flags, result, vtime);
	t->undo_armed = false;
	rec_unlock(t);
}

/* A closer (exit, exec) announces itself, then every thread of the process
 * executes a full barrier: from here on, an append either shows in its
 * thread's busy flag or has not started and will see the closer. Called
 * under jr_lock. */
static void closing_begin(int how)
{
	bool others = false;

	__atomic_store_n(&closing, how, __ATOMIC_SEQ_CST);
	__atomic_store_n(&hm.jr_closer, gettid_raw(), __ATOMIC_RELAXED);
	for (struct hm_jr_thread *t = hm.jr_list; t && !others; t = t->next)
		others = t != hm_t.jr && t->rec == ST_OPEN;
	if (!others)
		return;
	if (hm_sys(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0)
		return;
	if (hm_sys(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0 &&
	    hm_sys(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0)
		return;
	if (hm_sys(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) == 0)
		return;
	/* No membarrier (seccomp, an old kernel): give appends in flight 10 ms
	 * to show. */
	{
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		hm_sys(SYS_nanosleep, &ts, NULL, 0);
	}
}

/* Wait until a thread is not appending. False if it cannot stop: the
 * closer interrupted its own append, or the owner is stuck. */
static bool close_wait(struct hm_jr_thread *t)
{
	int64_t t0 = 0;

	for (;;) {
		if (!__atomic_load_n(&t->busy, __ATOMIC_ACQUIRE))
			return true;
		if (t->tid == gettid_raw())
			return false;
		if (hm_sys(SYS_tgkill, hm.pid, t->tid, 0) == -ESRCH)
			return true; /* the owner is gone */
		if (!t0)
			t0 = hm_real_ns(CLOCK_MONOTONIC);
		else if (hm_real_ns(CLOCK_MONOTONIC) - t0 > 200 * 1000 * 1000LL)
			return false;
		hm_sys(SYS_sched_yield, 0, 0, 0);
	}
}

/* ---- replay: reading ---- */

static void rep_open(struct hm_jr_thread *t)
{
	struct hm_stream_ident id;
	char path[PATH_BUF];
	struct stat st;
	long fd, p;

	t->rep = RP_BAD;
	t->bad_why = "unreadable stream file";
	if (!stream_path(path, hm.rep_dir, t->index, true, &id))
		return;
	fd = hm_sys6(SYS_openat, AT_FDCWD, (long)path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW, 0, 0, 0);
	if (fd == -ENOENT) {
		t->rep = RP_MISSING;
		return;
	}
	if (fd < 0)
		return;
	if (hm_sys(SYS_fstat, fd, &st, 0) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
		hm_sys(SYS_close, fd, 0, 0);
		return;
	}
	p = hm_sys6(SYS_mmap, 0, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	hm_sys(SYS_close, fd, 0, 0);
	if (p < 0 && p > -4096)
		return;
	t->map = (void *)p;
	t->map_len = st.st_size;
	if (hm_jstream_dec_init(&t->cur[DATA].dec, t->map, t->map_len) < 0) {
		t->bad_why = t->cur[DATA].dec.why;
		return;
	}
	if (t->cur[DATA].dec.hdr.image != id.image || t->cur[DATA].dec.hdr.thread != id.thread) {
		t->bad_why = "the stream file names another stream";
		return;
	}
	t->cur[TIMING].dec = t->cur[DATA].dec;
	t->rep = RP_OPEN;
}

struct ask {
	enum hm_jrec_type type;
	uint8_t call;
	int32_t id; /* clock */
	size_t len; /* entropy */
};

static bool answers(const struct hm_jrec *r, const struct ask *a)
{
	if (r->type != a->type || r->call != a->call)
		return false;
	if (a->type == HM_JREC_CLOCK)
		return r->clock.id == a->id;
	if (a->type == HM_JREC_ENTROPY)
		return r->entropy.len == a->len;
	return true;
}

static bool wall_id(int32_t id)
{
	return id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE || id == CLOCK_REALTIME_ALARM ||
	       id == CLOCK_TAI;
}

/* Which cursor replays a record (END: both). */
static int rec_class(enum hm_jrec_type type, int32_t id)
{
	if (type == HM_JREC_ENTROPY || (type == HM_JREC_CLOCK && wall_id(id)))
		return DATA;
	return TIMING;
}

/* The cursor's next record of its class (or END) into c->held. */
static void cursor_fill(struct hm_jr_thread *t, struct cursor *c, int cls)
{
	int k;

	for (;;) {
		k = hm_jstream_next(&c->dec, &c->held);
		if (k != 1)
			break;
		if (c->held.type == HM_JREC_END ||
		    (c->held.type != HM_JREC_EXT &&
		     rec_class(c->held.type, c->held.type == HM_JREC_CLOCK ? c->held.clock.id : 0) ==
			     cls)) {
			c->have_held = true;
			return;
		}
	}
	if (k == 0) {
		c->eof = true;
	} else {
		t->rep = RP_BAD;
		t->bad_why = c->dec.why;
	}
}

/*
 * The next record if it answers a (consumed, true). Otherwise false: answer
 * live. A data question is then a mismatch (which returns only when not
 * strict); a timing question is counted. Quietly false once the thread or
 * the image is ending: what destructors read then is past what the recording
 * could hold.
 */
static bool rep_next(const struct ask *a, struct hm_jrec *ret)
{
	char asked[DESC_MAX], recorded[DESC_MAX];
	struct sbuf sa = { asked, 0, sizeof(asked) }, sr = { recorded, 0, sizeof(recorded) };
	int cls = rec_class(a->type, a->id);
	struct hm_jr_thread *t;
	struct cursor *c;
	uint64_t callno;

	if (hm_t.jr_done || __atomic_load_n(&hm.jr_closed, __ATOMIC_RELAXED) || !(t = self()))
		return false;
	if (stale(t))
		rotate(t);
	if (t->rep == RP_NONE)
		rep_open(t);
	t->asked++;
	t->unget = UNGET_NONE;
	c = &t->cur[cls];
	if (t->rep == RP_OPEN && !c->have_held && !c->eof)
		cursor_fill(t, c, cls);
	if (t->rep == RP_OPEN && c->have_held && answers(&c->held, a)) {
		*ret = c->held;
		c->have_held = false;
		if (a->type == HM_JREC_CLOCK && a->id == CLOCK_MONOTONIC)
			t->unget = UNGET_RECORDED;
		return true;
	}
	if (cls == TIMING) {
		t->live++;
		if (a->type == HM_JREC_CLOCK && a->id == CLOCK_MONOTONIC)
			t->unget = UNGET_LIVE;
		return false;
	}
	asked[0] = recorded[0] = 0;
	hm_jr_describe(&sa, a->type, a->call, a->id, a->len, -1);
	if (t->rep == RP_OPEN && c->have_held) {
		callno = c->held.index;
		hm_jr_describe(&sr, c->held.type, c->held.call, c->held.clock.id,
			 c->held.type == HM_JREC_ENTROPY ? c->held.entropy.len : 0, -1);
	} else if (t->rep == RP_OPEN) {
		callno = c->dec.n_records + 1;
		sb_str(&sr, "end");
	} else {
		callno = t->rep == RP_BAD ? c->dec.n_records + 1 : t->asked;
		sb_str(&sr, t->rep == RP_MISSING ? "nothing" : "malformed");
	}
	hm_jr_mismatch(t, callno, asked, recorded);
	return false;
}

/* The last question, a CLOCK_MONOTONIC reading, was the interpreter's
 * (clock.c's hm_clock_unread): a recorded answer goes back to the timing
 * cursor, for the program's next reading; a live one is not counted. */
bool hm_jr_unget_clock(void)
{
	struct hm_jr_thread *t = hm_t.jr;
	int was;

	if (!t || t->rep != RP_OPEN || stale(t) || t->unget == UNGET_NONE)
		return false;
	was = t->unget;
	t->unget = UNGET_NONE;
	t->asked--;
	if (was == UNGET_LIVE) {
		t->live--;
		return false;
	}
	t->cur[TIMING].have_held = true; /* (held is still the record) */
	return true;
}

bool hm_jr_get_clock(enum hm_jclock_call call, clockid_t id, int64_t *ret_ns)
{
	struct ask a = { .type = HM_JREC_CLOCK, .call = call, .id = id };
	struct hm_jrec r;

	if (!rep_next(&a, &r))
		return false;
	*ret_ns = r.clock.ns;
	hm_clock_follow(id, r.clock.ns);
	return true;
}

bool hm_jr_get_entropy(enum hm_jentropy_src src, void *buf, size_t len)
{
	struct ask a = { .type = HM_JREC_ENTROPY, .call = src, .len = len };
	struct hm_jrec r;

	if (!rep_next(&a, &r))
		return false;
	memcpy(buf, r.entropy.bytes, len);
	/* Keep the seeded stream where the recording left it: what draws from it
	 * unjournalled (temporary file names) then draws the same. */
	if (hm.rng) {
		uint8_t skip[256];

		for (size_t n = len; n;) {
			size_t k = n < sizeof(skip) ? n : sizeof(skip);

			hm_random_bytes(skip, k);
			n -= k;
		}
	}
	return true;
}

/* ---- waits ---- */

static uint64_t vtime_now(void)
{
	/* (the reading's time: within a scope, the scope's) */
	if (hm.clock || (hm.jr & HM_JR_REPLAY))
		return (uint64_t)(hm_clock_now(CLOCK_MONOTONIC) + hm.sc_mono);
	return (uint64_t)hm_real_ns(CLOCK_MONOTONIC);
}

bool hm_jw_begin(struct hm_jw *w, enum hm_jwait_call call, bool sleep)
{
	struct ask a = { .type = HM_JREC_WAIT, .call = call };
	struct hm_jrec r;
	int saved = errno;

	w->call = call;
	w->replayed = false;
	hm_t.lagged = false;
	/* A recording thread about to wait puts what it has on disk: a run
	 * killed while it hangs keeps the values it saw up to the hang. */
	if ((hm.jr & HM_JR_RECORD) && hm_t.jr && hm_t.jr->rec == ST_OPEN && hm_t.jr->enc.len > 64 &&
	    rec_lock(hm_t.jr)) {
		hm_jstream_flush(&hm_t.jr->enc);
		rec_unlock(hm_t.jr);
	}
	if (!(hm.jr & HM_JR_REPLAY) || !rep_next(&a, &r)) {
		errno = saved;
		return false;
	}
	w->replayed = true;
	w->rec_timed_out = r.wait.timed_out;
	w->result = r.wait.result;
	w->vtime = r.wait.vtime_ns;
	w->index = r.index;
	errno = saved;
	if (sleep || r.wait.timed_out) {
		/* no real wait: the clock jumps where the recording's did */
		w->rec_timed_out = true; /* (a sleep: whatever it returned) */
		/* The lag bound moved the recording thread's own clock, not the
		 * run's: so here too. */
		if (r.wait.lag) {
			hm_clock_lag_to((int64_t)w->vtime - hm.sc_mono);
		} else {
			/* --sched serial: a blocking point still (shim.h). */
			if (hm.sched_serial)
				hm_serial_replay_wait((int64_t)w->vtime - hm.sc_mono);
			hm_clock_jump((int64_t)w->vtime);
		}
		return true;
	}
	hm_t.jw_event = true; /* the recording saw an event: wait for it, for real */
	return false;
}

void hm_jw_end(struct hm_jw *w, bool timed_out, int64_t result)
{
	int saved = errno;

	hm_t.jw_event = false;
	if (w->replayed && !w->rec_timed_out) {
		/* The event came (or, timing being best effort, did not: counted). */
		if (timed_out && hm_t.jr)
			hm_t.jr->live++;
		else
			hm_clock_jump((int64_t)w->vtime);
	}
	/* A wait the lag bound ended is a timeout like any other, and says so
	 * (journal 2.2): replay returns at once and moves the clock there. */
	if (hm.jr & HM_JR_RECORD)
		put_wait(w->call,
			 (timed_out ? HM_JWAIT_TIMED_OUT : 0u) |
				 (timed_out && hm_t.lagged ? HM_JWAIT_LAG : 0u),
			 result, vtime_now());
	hm_t.lagged = false;
	errno = saved;
}

/* ---- ends: exit, exec, thread exit, fork ---- */

static void end_stream(struct hm_jr_thread *t, enum hm_jend_reason why)
{
	if (t->rec != ST_OPEN || t->enc.ended)
		return;
	hm_jstream_put_end(&t->enc, why);
	hm_jstream_flush(&t->enc);
}

/* jr_lock at exit, which may come from a signal handler (abort, _exit)
 * that interrupted this very thread holding it: then give up after 200 ms. */
static bool lock_for_exit(void)
{
	for (int i = 0; i < 200; i++) {
		struct timespec ts = { 0, 1000 * 1000 };

		if (!pthread_mutex_trylock(&hm.jr_lock))
			return true;
		hm_sys(SYS_nanosleep, &ts, NULL, 0);
	}
	return false;
}

void hm_jr_exit(void)
{
	int saved = errno;

	if (!hm.jr || __atomic_load_n(&hm.jr_closed, __ATOMIC_ACQUIRE) || !lock_for_exit())
		return;
	if (hm.jr_closed) {
		pthread_mutex_unlock(&hm.jr_lock);
		return;
	}
	__atomic_store_n(&hm.jr_closed, true, __ATOMIC_RELEASE);
	closing_begin(CLOSING_EXIT);
	for (struct hm_jr_thread *t = hm.jr_list; t; t = t->next) {
		if (t->rec == ST_OPEN && close_wait(t))
			end_stream(t, HM_JEND_EXIT);
		hm_jr_report_live(t);
	}
	pthread_mutex_unlock(&hm.jr_lock);
	errno = saved;
}

void hm_jr_thread_exit(void)
{
	struct hm_jr_thread *t = hm_t.jr, **pp;
	int saved = errno;
	bool closed;

	hm_t.jr_done = true;
	if (!t)
		return;
	pthread_mutex_lock(&hm.jr_lock);
	for (pp = &hm.jr_list; *pp && *pp != t; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = t->next;
	closed = hm.jr_closed; /* then hm_jr_exit ended it already */
	pthread_mutex_unlock(&hm.jr_lock);
	if (!closed) {
		if (t->rec == ST_OPEN && rec_lock(t)) {
			end_stream(t, HM_JEND_THREAD_EXIT);
			rec_unlock(t);
		}
		hm_jr_report_live(t);
	}
	hm_t.jr = NULL;
	free_thread(t);
	errno = saved;
}

/* Before exec (not in a vfork child: its streams are its parent's). Every
 * stream gets END(exec), flushed; jr_lock is kept and appends wait until the
 * exec fails (or the image is gone). */
void hm_jr_exec_begin(void)
{
	int saved = errno;

	if (!hm.jr)
		return;
	pthread_mutex_lock(&hm.jr_lock);
	closing_begin(CLOSING_EXEC);
	for (struct hm_jr_thread *t = hm.jr_list; t; t = t->next) {
		hm_jr_report_live(t);
		if (t->rec != ST_OPEN || t->enc.ended || !close_wait(t))
			continue;
		if (hm_jstream_flush(&t->enc) < 0)
			continue;
		t->end_off = t->enc.flushed;
		end_stream(t, HM_JEND_EXEC);
		t->exec_ended = true;
	}
	errno = saved;
}

void hm_jr_exec_failed(void)
{
	int saved = errno;

	if (!hm.jr)
		return;
	for (struct hm_jr_thread *t = hm.jr_list; t; t = t->next) {
		if (!t->exec_ended)
			continue;
		/* The image goes on: cut the END off again and append after it. */
		t->exec_ended = false;
		if (hm_sys(SYS_ftruncate, t->fd, t->end_off, 0) == 0 &&
		    hm_sys(SYS_lseek, t->fd, t->end_off, SEEK_SET) == (long)t->end_off) {
			t->enc.ended = false;
			t->enc.err = 0;
			t->enc.len = 0;
			t->enc.flushed = t->end_off;
			t->enc.n_records--;
		}
	}
	__atomic_store_n(&hm.jr_closer, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&closing, 0, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&hm.jr_lock);
	errno = saved;
}

void hm_jr_fork_prepare(void)
{
	if (hm.jr)
		pthread_mutex_lock(&hm.jr_lock);
}

void hm_jr_fork_parent(void)
{
	if (hm.jr)
		pthread_mutex_unlock(&hm.jr_lock);
}

/* The child: a new process with a new key. What it inherited (the parent's
 * buffered bytes, stream fds, replay positions, other threads' state) is
 * dropped unwritten; the forking thread starts afresh as thread 0. */
void hm_jr_fork_child(void)
{
	static const pthread_mutex_t init = PTHREAD_MUTEX_INITIALIZER;
	struct hm_jr_thread *me = hm_t.jr, *t, *next;

	if (!hm.jr)
		return;
	for (t = hm.jr_list; t; t = next) {
		next = t->next;
		if (t != me)
			free_thread(t);
	}
	hm.jr_list = NULL;
	hm.jr_closed = false;
	hm.jr_closer = 0;
	closing = 0;
	hm.jr_lock = init;
	hm_t.jr_done = false;
	hm_t.jw_event = false;
	if (me) {
		size_t size = me->size;

		if (me->fd >= 0)
			hm_sys(SYS_close, me->fd, 0, 0);
		if (me->map)
			hm_sys(SYS_munmap, me->map, me->map_len, 0);
		memset(me, 0, sizeof(*me));
		me->size = size;
		me->fd = -1;
		me->index = hm_t.index;
		me->tid = gettid_raw();
		hm.jr_list = me;
	}
}
