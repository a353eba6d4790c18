/* sampler.c — perf events on the target, and the sampler thread that drains their kernel rings.
 *
 * Events (per CPU, per thread, attaching): sampler_events.c. The sampler's definition is in
 * sampler_internal.h.
 *
 * -a opens one event per CPU for every task (pid -1), which inherits nothing; proftop's own
 * samples and switches are dropped as they are read, unless --include-self.
 *
 * Attach mode opens an event on every thread of the processes: a thread created while proftop
 * opens them gets the event inherited from its creator and one of its own, and would be sampled
 * twice. Every record carries the id of the event proftop opened (an inherited event reports
 * its ancestor's id), so a thread with events of its own is counted from those only, and a
 * thread created later from the events of its creating thread's "authority" (the FORK record
 * says who created it).
 *
 * Attach mode in the modes that sample switches: the threads waiting when the events are enabled
 * switched out before they existed. Those found waiting all along (blocked.h) each get a
 * SAMPLE_RECORD_BLOCKED record in the ring before the kernel's first, and their switch records
 * are forwarded up to their first switch in, where their waits end.
 *
 * Records the ring has no room for wait in the backlog (backlog.h), in order: samples and switch
 * records up to BACKLOG_LIMIT bytes of them, then they are counted as overflow; address-space
 * records always, as losing one would misname every later sample.
 *
 * Threads: the sampler thread owns the event fds, the kernel rings, the backlog and the
 * dedup and switch-event maps (filled before it starts). Other threads touch only the atomic
 * counters, the requested frequency and the stop flag. */
#include "proftop/sampler_internal.h"

#include "proftop/allocrec.h"
#include "proftop/backlog.h"
#include "proftop/blocked.h"
#include "proftop/shmring.h"

#include "proftop/diag.h"
#include "proftop/idmap.h"
#include "proftop/ring.h"
#include "proftop/util.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#define POLL_MS 20
/* The allocation ring (allocrun.h) is read every ALLOC_POLL_MS. */
#define ALLOC_POLL_MS 5
/* At the end, how long the allocations left in the shared ring and the records left in the
 * backlog wait for the collector. */
#define FINAL_WAIT_NS 5000000000ull
#define CONSUMER_WAKE_NS 10000000ull
/* While records wait in the backlog, how often the sampler looks for room in the ring. */
#define BACKLOG_POLL_MS 2

/* A lower frequency than the events sample at keeps requested/config.freq of the samples,
 * evenly. The kernel cannot change the period of the events it inherited into new threads
 * (PERF_EVENT_IOC_PERIOD reaches only the event it is called on), so the rate is changed here,
 * the same for every thread. */
static bool thin_out(struct sampler *s)
{
	unsigned want = atomic_load_explicit(&s->requested_freq, memory_order_relaxed);

	if (want >= s->config.freq)
		return false;
	s->thin_credit += want;
	if (s->thin_credit >= s->config.freq) {
		s->thin_credit -= s->config.freq;
		return false;
	}
	return true;
}

/* A dwarf sample holds a stack copy of the full --stack-size of which only dyn_size bytes were
 * filled (a few hundred for most stacks): the length of the record without the unfilled part, or
 * h->size when there is nothing to leave out. *stack_at is where the stack's size field is. */
static size_t trimmed_size(const struct sampler *s, const struct perf_event_header *h,
			   size_t *stack_at, uint64_t *keep)
{
	struct sample_record r;
	size_t at, size;

	if (h->type != PERF_RECORD_SAMPLE || !(s->sample_type & PERF_SAMPLE_STACK_USER) ||
	    sample_parse(h, h->size, s->sample_type, sample_regs_mask(), &r) || !r.sample.stack)
		return h->size;
	at = (size_t)(r.sample.stack - (const unsigned char *)h) - 8;
	memcpy(&size, (const char *)h + at, sizeof(size));
	*keep = (r.sample.stack_size + 7) & ~(uint64_t)7;
	/* Only when the stack is the record's last field (then dyn_size follows it and ends it). */
	if (at + 8 + size + 8 != h->size || *keep >= size)
		return h->size;
	*stack_at = at;
	return at + 8 + *keep + 8;
}

/* Copy h to dst, leaving out the unfilled stack (see above) when len is shorter than h. */
static void copy_record(void *dst, const struct perf_event_header *h, size_t len, size_t stack_at,
			uint64_t keep)
{
	char *d = dst;
	uint64_t dyn;

	if (len == h->size) {
		memcpy(dst, h, len);
		return;
	}
	memcpy(d, h, stack_at);
	((struct perf_event_header *)dst)->size = (uint16_t)len;
	memcpy(d + stack_at, &keep, 8);
	memcpy(d + stack_at + 8, (const char *)h + stack_at + 8, keep);
	memcpy(&dyn, (const char *)h + h->size - 8, 8);
	memcpy(d + stack_at + 8 + keep, &dyn, 8);
}

/* Whether a sample is the context-switch event's (its id is one of theirs). */
static bool is_switch_sample(const struct sampler *s, const struct perf_event_header *h)
{
	struct sample_layout at;
	uint64_t id;

	if (!s->switch_ids.count || sample_layout(s->sample_type, h, &at) || at.id < 0)
		return false;
	memcpy(&id, (const char *)h + at.id, sizeof(id));
	return idmap_get(&s->switch_ids, id) != IDMAP_MISSING;
}

/* A record is in the ring: the samples and switches that reached the collector are counted. */
static void count_forwarded(struct sampler *s, const struct perf_event_header *h)
{
	if (h->type != PERF_RECORD_SAMPLE)
		return;
	atomic_fetch_add_explicit(&s->samples, 1, memory_order_relaxed);
	if (h->misc & SAMPLE_MISC_SWITCH_EVENT)
		atomic_fetch_add_explicit(&s->switches, 1, memory_order_relaxed);
}

/* Samples and switch records may be lost (counted as overflow); the others may not. */
static bool lossy(const struct perf_event_header *h)
{
	return h->type == PERF_RECORD_SAMPLE || h->type == PERF_RECORD_SWITCH ||
	       h->type == PERF_RECORD_SWITCH_CPU_WIDE;
}

/* Copy a kernel record into the proftop ring, or into the backlog behind the records waiting
 * there (the file's header says what it takes). A sample's copy carries mark in its misc
 * (SAMPLE_MISC_SWITCH_EVENT or 0). */
static void forward(struct sampler *s, const struct perf_event_header *h, uint16_t mark)
{
	size_t stack_at = 0;
	uint64_t keep = 0;
	size_t len = trimmed_size(s, h, &stack_at, &keep);
	void *dst = backlog_empty(&s->backlog) ? ring_reserve(s->ring, len) : NULL;
	bool in_ring = dst != NULL;

	if (!dst)
		dst = backlog_reserve(&s->backlog, len, lossy(h));
	if (!dst) {
		if (!lossy(h))
			fatal("out of memory (%u bytes)", BACKLOG_CHUNK);
		atomic_fetch_add_explicit(&s->overflow, 1, memory_order_relaxed);
		return;
	}
	copy_record(dst, h, len, stack_at, keep);
	if (h->type == PERF_RECORD_SAMPLE) { /* the mark is ours alone */
		struct perf_event_header *copy = dst;

		copy->misc = (uint16_t)((copy->misc & ~SAMPLE_MISC_SWITCH_EVENT) | mark);
	}
	if (in_ring) {
		ring_commit(s->ring);
		count_forwarded(s, dst);
	}
}

/* Move what waits in the backlog into the ring, as far as it has room. */
static bool flush_backlog(struct sampler *s)
{
	const void *rec;
	bool pushed = false;
	size_t len;

	while ((rec = backlog_peek(&s->backlog, &len))) {
		void *dst = ring_reserve(s->ring, len);

		if (!dst)
			break;
		memcpy(dst, rec, len);
		ring_commit(s->ring);
		count_forwarded(s, dst);
		backlog_pop(&s->backlog);
		pushed = true;
	}
	return pushed;
}

/* The end: what the backlog still holds is lost; its samples and switch records are counted. */
static void drop_backlog(struct sampler *s)
{
	const struct perf_event_header *h;
	size_t len;

	while ((h = backlog_peek(&s->backlog, &len))) {
		if (lossy(h))
			atomic_fetch_add_explicit(&s->overflow, 1, memory_order_relaxed);
		backlog_pop(&s->backlog);
	}
}

/* Whether a sample's event is the one that counts for its thread (see the file's header). */
static bool counts(struct sampler *s, const struct perf_event_header *h)
{
	struct sample_layout at;
	uint32_t pid_tid[2];
	uint64_t id;
	uint32_t authority;

	if (!s->dedupe || sample_layout(s->sample_type, h, &at) || at.id < 0 || at.pid_tid < 0)
		return true;
	memcpy(&id, (const char *)h + at.id, sizeof(id));
	memcpy(pid_tid, (const char *)h + at.pid_tid, sizeof(pid_tid));
	authority = idmap_get(&s->authority, pid_tid[1]);
	return authority == IDMAP_MISSING || idmap_get(&s->event_owner, id) == authority;
}

/* A new thread or process is counted from the events that count for its creator. */
static void inherit_authority(struct sampler *s, const struct perf_event_header *h)
{
	struct sample_record r;
	uint32_t authority;

	if (!s->dedupe || sample_parse(h, h->size, s->sample_type, 0, &r) ||
	    idmap_get(&s->authority, r.tid) != IDMAP_MISSING)
		return;
	authority = idmap_get(&s->authority, r.task.ptid);
	if (authority != IDMAP_MISSING)
		idmap_put(&s->authority, r.tid, authority);
}

static void count_lost(struct sampler *s, const struct perf_event_header *h)
{
	struct sample_record r;

	if (sample_parse(h, h->size, s->sample_type, 0, &r) == 0)
		atomic_fetch_add_explicit(&s->dropped, r.lost.lost, memory_order_relaxed);
}

/* The process and thread a record is about (where sample_layout() says its pid/tid are);
 * false: none. */
static bool record_ids(const struct sampler *s, const struct perf_event_header *h, uint32_t *pid,
		       uint32_t *tid)
{
	struct sample_layout at;
	uint32_t pid_tid[2];

	if (sample_layout(s->sample_type, h, &at) || at.pid_tid < 0)
		return false;
	memcpy(pid_tid, (const char *)h + at.pid_tid, sizeof(pid_tid));
	*pid = pid_tid[0];
	*tid = pid_tid[1];
	return true;
}

static bool record_tid(const struct sampler *s, const struct perf_event_header *h, uint32_t *tid)
{
	uint32_t pid;

	return record_ids(s, h, &pid, tid);
}

/* The switch records the collector needs are the ones after a sampled switch out,
 * up to the thread's switch back in; with --switch-period N the others (N-1 in N) stay here. */
static void mark_switched(struct sampler *s, const struct perf_event_header *h)
{
	uint32_t tid;

	if (record_tid(s, h, &tid))
		idmap_put(&s->switched, tid, 1);
}

static bool switch_wanted(struct sampler *s, const struct perf_event_header *h)
{
	uint32_t tid, state;

	if (!record_tid(s, h, &tid))
		return false;
	state = idmap_get(&s->switched, tid);
	if (state == IDMAP_MISSING || !state)
		return false;
	if (!(h->misc & PERF_RECORD_MISC_SWITCH_OUT))
		idmap_put(&s->switched, tid, 0); /* back in: done with this one */
	return true;
}

/* -a in the modes that sample kernel time (for its weight against switches) without --kernel:
 * a sample of a CPU's idle task (pid 0) has no stack to show. Other runs see no idle task. */
static bool idle(const struct sampler *s, const struct perf_event_header *h)
{
	uint32_t tid;

	return s->drop_idle && record_tid(s, h, &tid) && tid == 0;
}

/* -a without --include-self: a sample or switch of proftop itself (its sampler, its collectors
 * unwinding) is not the machine's work. Dropped here, before it costs the ring and the
 * collector anything. */
static bool own(const struct sampler *s, const struct perf_event_header *h)
{
	uint32_t pid, tid;

	return s->drop_pid && record_ids(s, h, &pid, &tid) && pid == (uint32_t)s->drop_pid;
}

static void handle_record(struct sampler *s, const struct perf_event_header *h)
{
	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		/* The modes with switches weigh CPU samples as time against the switches' times:
		 * none is thinned out (the +/- keys are refused there). */
		if (counts(s, h) && !idle(s, h) && !own(s, h) &&
		    (sample_mode_switches(s->config.mode) || !thin_out(s))) {
			bool switched = is_switch_sample(s, h);

			forward(s, h, switched ? SAMPLE_MISC_SWITCH_EVENT : 0);
			if (switched)
				mark_switched(s, h);
		}
		break;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		if (counts(s, h) && !own(s, h) && switch_wanted(s, h))
			forward(s, h, 0);
		break;
	case PERF_RECORD_FORK:
		inherit_authority(s, h);
		forward(s, h, 0);
		break;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_COMM:
	case PERF_RECORD_EXIT:
		forward(s, h, 0);
		break;
	case PERF_RECORD_LOST:
		count_lost(s, h);
		break;
	case PERF_RECORD_THROTTLE:
		atomic_fetch_add_explicit(&s->throttled, 1, memory_order_relaxed);
		break;
	default:
		break;
	}
}

/* Copy len bytes at ring position pos, across the end of the buffer if need be. */
static void cursor_copy(const struct ring_cursor *c, uint64_t pos, void *dst, size_t len)
{
	size_t off = (size_t)(pos & (c->kr->data_size - 1)), first = c->kr->data_size - off;

	if (first >= len) {
		memcpy(dst, c->kr->data + off, len);
	} else {
		memcpy(dst, c->kr->data + off, first);
		memcpy((char *)dst + first, c->kr->data, len - first);
	}
}

/* The next record's header and time (where sample_layout() says it is). */
static void cursor_peek(struct ring_cursor *c, uint64_t sample_type)
{
	struct sample_layout at;

	c->has_next = false;
	if (c->head - c->tail < sizeof(c->next))
		return;
	cursor_copy(c, c->tail, &c->next, sizeof(c->next));
	if (c->next.size < sizeof(c->next) || c->next.size > c->head - c->tail)
		return; /* cannot happen with a sane kernel; never loop on it */
	c->next_time = 0;
	if (sample_layout(sample_type, &c->next, &at) == 0 && at.time >= 0)
		cursor_copy(c, c->tail + (uint64_t)at.time, &c->next_time, sizeof(c->next_time));
	c->has_next = true;
}

/* The record at the cursor, in place or (when it wraps) in the bounce buffer. */
static const struct perf_event_header *cursor_record(struct sampler *s, const struct ring_cursor *c)
{
	size_t off = (size_t)(c->tail & (c->kr->data_size - 1));

	if (c->kr->data_size - off >= c->next.size)
		return (const struct perf_event_header *)(c->kr->data + off);
	cursor_copy(c, c->tail, s->bounce, c->next.size);
	return (const struct perf_event_header *)s->bounce;
}

/* Drain every CPU's ring, merging their records by time: a process that exec'd on one CPU and
 * was sampled on another must have its new maps before its samples. (Records a CPU writes
 * after this pass began wait for the next one.) */
static bool drain_rings(struct sampler *s)
{
	struct ring_cursor *cursors = s->cursors;
	bool any = false;

	for (size_t i = 0; i < s->nrings; i++) {
		struct perf_event_mmap_page *meta = s->rings[i].base;

		cursors[i] = (struct ring_cursor){
			.kr = &s->rings[i],
			.head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE),
			.tail = meta->data_tail,
		};
		cursor_peek(&cursors[i], s->sample_type);
	}
	for (;;) {
		struct ring_cursor *oldest = NULL;

		for (size_t i = 0; i < s->nrings; i++)
			if (cursors[i].has_next && (!oldest || cursors[i].next_time < oldest->next_time))
				oldest = &cursors[i];
		if (!oldest)
			break;
		handle_record(s, cursor_record(s, oldest));
		oldest->tail += oldest->next.size;
		cursor_peek(oldest, s->sample_type);
		any = true;
	}
	for (size_t i = 0; i < s->nrings; i++) {
		struct perf_event_mmap_page *meta = s->rings[i].base;

		__atomic_store_n(&meta->data_tail, cursors[i].tail, __ATOMIC_RELEASE);
	}
	return any;
}

/* Whether to wake the consumer now: a wakeup per pass (each kernel watermark) would be hundreds
 * a second; records wait at most CONSUMER_WAKE_NS, or until the ring is a quarter full. */
static bool consumer_due(const struct sampler *s)
{
	return util_now_ns() - s->signalled_ns >= CONSUMER_WAKE_NS ||
	       ring_used(s->ring) >= ring_capacity(s->ring) / 4;
}

/* The allocation library's records reserved before this pass read the kernel's (up to), after
 * those: an allocation made after an exec or an mmap then always follows its records, which the
 * kernel wrote before the allocation was made; one reserved while the kernel rings were read
 * waits for the next pass. As SAMPLE_RECORD_ALLOC records: the target writes the shared slots,
 * so a record's length is taken once, bounded by what the ring says the record holds, and what
 * is copied says that length (the collector validates the rest). A record the ring has no room
 * for stays in the shared ring for the next pass (allocs_waiting): the two rings together
 * buffer a collector that is busy, say reading the program's debug information at its start;
 * the library's drops what that cannot hold (overflow). */
static bool drain_allocs(struct sampler *s, uint64_t up_to)
{
	const unsigned char *slot;
	bool pushed = false;
	uint64_t now = util_now_ns();
	size_t bytes;

	s->allocs_waiting = false;
	/* Records still waiting for room (in the backlog) go first: the allocations wait in the
	 * shared ring meanwhile. */
	while (s->allocs && backlog_empty(&s->backlog) && shmring_read(&s->alloc_reader) < up_to &&
	       (slot = shmring_peek(&s->alloc_reader, now, &bytes))) {
		uint32_t stack;
		size_t len;
		struct perf_event_header *h;

		/* Past a dead producer's slot, peek may have gone beyond the bound. */
		if (shmring_read(&s->alloc_reader) >= up_to)
			break;
		if (bytes < sizeof(struct allocrec)) {
			shmring_release(&s->alloc_reader);
			continue;
		}
		memcpy(&stack, slot + offsetof(struct allocrec, stack_size), sizeof(stack));
		if (stack > ALLOCREC_STACK_MAX || stack > bytes - sizeof(struct allocrec))
			stack = 0;
		len = sizeof(*h) + sizeof(struct allocrec) + stack;
		h = ring_reserve(s->ring, len);
		if (!h) {
			s->allocs_waiting = true;
			break;
		}
		*h = (struct perf_event_header){ SAMPLE_RECORD_ALLOC, 0, (uint16_t)len };
		memcpy(h + 1, slot, len - sizeof(*h));
		memcpy((unsigned char *)(h + 1) + offsetof(struct allocrec, stack_size), &stack,
		       sizeof(stack));
		shmring_release(&s->alloc_reader);
		ring_commit(s->ring);
		pushed = true;
	}
	return pushed;
}

/* How far a pass may read the allocation ring: to what producers had reserved, as the target
 * says, but never more than one lap (a target that keeps writing, or forges the head, cannot
 * keep the sampler reading). */
static uint64_t allocs_bound(const struct sampler *s)
{
	uint64_t reserved = shmring_reserved(&s->alloc_reader), read = shmring_read(&s->alloc_reader);

	return (int64_t)(reserved - read) > (int64_t)s->alloc_reader.nslots
		       ? read + s->alloc_reader.nslots : reserved;
}

/* The allocation records left in the shared ring once the sampler thread ended, dropped and
 * counted: the collector did not make room for them in time. */
static void drop_allocs(struct sampler *s)
{
	uint64_t up_to = s->allocs ? allocs_bound(s) : 0;
	size_t bytes;

	while (s->allocs && shmring_read(&s->alloc_reader) < up_to &&
	       shmring_peek(&s->alloc_reader, util_now_ns(), &bytes)) {
		shmring_release(&s->alloc_reader);
		atomic_fetch_add_explicit(&s->overflow, 1, memory_order_relaxed);
	}
}

static void wake_consumer(struct sampler *s)
{
	if (s->wake_fd < 0)
		return;
	util_wake(s->wake_fd);
	s->unsignalled = false;
	s->signalled_ns = util_now_ns();
}

static bool drain_all(struct sampler *s)
{
	bool pushed = flush_backlog(s);
	uint64_t allocs_up_to = s->allocs ? allocs_bound(s) : 0;

	pushed |= drain_rings(s);
	pushed |= drain_allocs(s, allocs_up_to);
	s->unsignalled |= pushed;
	if (s->unsignalled && consumer_due(s))
		wake_consumer(s);
	return pushed;
}

static void *sampler_main(void *arg)
{
	struct sampler *s = arg;
	struct pollfd *pfds = xcalloc(s->nrings + 1, sizeof(*pfds));

	for (size_t i = 0; i < s->nrings; i++)
		pfds[i] = (struct pollfd){ .fd = s->rings[i].fd, .events = POLLIN };
	pfds[s->nrings] = (struct pollfd){ .fd = s->stop_fd, .events = POLLIN };
	while (!atomic_load_explicit(&s->stop, memory_order_acquire)) {
		/* The allocation library wakes nobody: its ring is looked at every ALLOC_POLL_MS;
		 * nor does the collector as it makes room for the backlog. */
		poll(pfds, s->nrings + 1, s->allocs ? ALLOC_POLL_MS
					: backlog_empty(&s->backlog) ? POLL_MS : BACKLOG_POLL_MS);
		/* The task that owns a ring's event exited: its fd reports POLLHUP forever. Stop
		 * polling it; its ring is still drained every pass. */
		for (size_t i = 0; i < s->nrings; i++)
			if (pfds[i].revents & (POLLHUP | POLLERR | POLLNVAL))
				pfds[i].fd = -1;
		drain_all(s);
	}
	free(pfds);
	return NULL;
}

/* The waits found in the ring, each thread's switch records forwarded up to its switch in. Before
 * the thread starts: this thread is the ring's producer until then. */
static void push_waits(struct sampler *s, struct blocked *waits)
{
	for (size_t i = 0; i < blocked_count(waits); i++) {
		pid_t tid;
		size_t len;
		const void *rec = blocked_record(waits, i, &tid, &len);
		void *dst = ring_reserve(s->ring, len);

		if (dst) {
			memcpy(dst, rec, len);
			ring_commit(s->ring);
		} else if ((dst = backlog_reserve(&s->backlog, len, true))) {
			memcpy(dst, rec, len);
		} else {
			atomic_fetch_add_explicit(&s->overflow, 1, memory_order_relaxed);
			continue;
		}
		idmap_put(&s->switched, (uint32_t)tid, 1);
	}
}

int sampler_start(struct sampler *s, int wake_fd)
{
	struct blocked *waits = NULL;
	int err;

	s->wake_fd = wake_fd;
	if (s->nattached)
		waits = blocked_scan(s->attached, s->nattached,
				     s->config.callgraph == CALLGRAPH_DWARF ? s->config.stack_size : 0);
	/* A launched command's events arm themselves at its exec (enable_on_exec): enabling them
	 * now would sample proftop's own child searching PATH. */
	for (size_t i = 0; !s->launched && i < s->nfds; i++)
		if (ioctl(s->fds[i], PERF_EVENT_IOC_ENABLE, 0) < 0 && errno != ESRCH)
			diag_report(s->diag, DIAG_WARNING, "could not enable a perf event: %s; a thread "
				    "may go unsampled", strerror(errno));
	if (waits) {
		blocked_confirm(waits, util_now_ns());
		push_waits(s, waits);
		blocked_free(waits);
	}
	err = pthread_create(&s->thread, NULL, sampler_main, s);
	if (err)
		return -err;
	s->running = true;
	return 0;
}

void sampler_stop(struct sampler *s)
{
	if (!s->running)
		return;
	for (size_t i = 0; i < s->nfds; i++)
		ioctl(s->fds[i], PERF_EVENT_IOC_DISABLE, 0);
	atomic_store_explicit(&s->stop, true, memory_order_release);
	util_wake(s->stop_fd);
	util_join(s->thread);
	s->running = false;
	/* The thread is gone: what the kernel still holds is ours to drain here; twice, for the
	 * allocations reserved while the first pass read the kernel's rings, and again while the
	 * allocations and the backlog wait for the collector (running still) to make room, for a
	 * while. */
	drain_all(s);
	drain_all(s);
	for (uint64_t until = util_now_ns() + FINAL_WAIT_NS;
	     (s->allocs_waiting || !backlog_empty(&s->backlog)) && util_now_ns() < until;) {
		wake_consumer(s);
		usleep(1000);
		drain_all(s);
	}
	drop_allocs(s);
	drop_backlog(s);
}

void sampler_free(struct sampler *s)
{
	if (!s)
		return;
	sampler_stop(s);
	for (size_t i = 0; i < s->nrings; i++)
		munmap(s->rings[i].base, s->rings[i].data_size + (size_t)sysconf(_SC_PAGESIZE));
	for (size_t i = 0; i < s->nfds; i++)
		close(s->fds[i]);
	backlog_free(&s->backlog);
	if (s->stop_fd >= 0)
		close(s->stop_fd);
	idmap_free(&s->event_owner);
	idmap_free(&s->authority);
	idmap_free(&s->switched);
	idmap_free(&s->switch_ids);
	free(s->attached);
	free(s->fds);
	free(s->rings);
	free(s->cursors);
	free(s->bounce);
	free(s);
}

void sampler_set_alloc_ring(struct sampler *s, void *ring, uint32_t nslots, uint32_t slot_size)
{
	shmring_reader_init(&s->alloc_reader, ring, nslots, slot_size);
	s->allocs = true;
}

void sampler_counters(const struct sampler *s, struct counters *out)
{
	memset(out, 0, sizeof(*out));
	out->samples = atomic_load_explicit(&s->samples, memory_order_relaxed);
	out->switches = atomic_load_explicit(&s->switches, memory_order_relaxed);
	out->overflow = atomic_load_explicit(&s->overflow, memory_order_relaxed) +
			(s->allocs ? shmring_overflow(&s->alloc_reader) : 0);
	out->dropped = atomic_load_explicit(&s->dropped, memory_order_relaxed);
	out->throttled = atomic_load_explicit(&s->throttled, memory_order_relaxed);
}

bool sampler_freq_fixed(const struct sampler *s)
{
	return sample_mode_switches(s->config.mode) || sample_mode_unsampled(s->config.mode);
}

unsigned sampler_set_freq(struct sampler *s, unsigned freq)
{
	if (freq > s->config.freq)
		freq = s->config.freq;
	if (freq < 1)
		freq = 1;
	atomic_store_explicit(&s->requested_freq, freq, memory_order_relaxed);
	return freq;
}

unsigned sampler_freq(const struct sampler *s)
{
	return atomic_load_explicit(&((struct sampler *)s)->requested_freq, memory_order_relaxed);
}
