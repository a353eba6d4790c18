/* The collector's thread handoffs, end to end and without perf events: a producer thread writes
 * PERF_RECORD_* records into the ring as the sampler would, the collector thread turns them into
 * a profile and publishes snapshots, and reader threads take those snapshots, read every name in
 * them (interned by the collector meanwhile) and drop them, sometimes last; in a run that keeps
 * every mode's profile they also change the mode shown. make tsan runs this under
 * ThreadSanitizer. And the modes' accounting, record by record: CPU samples, blocked and
 * preempted switches, in their profiles and in the wall clock's; the waits of threads found
 * blocked at an attach (SAMPLE_RECORD_BLOCKED); and an allocation run's records, from the shared
 * ring the preloaded library writes, in its four profiles. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "proftop/allocrec.h"
#include "proftop/blocked.h"
#include "proftop/collector.h"
#include "proftop/kinds.h"
#include "proftop/ring.h"
#include "proftop/util.h"
#include "unit_records.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SAMPLES 20000
#define READERS 2

static const struct sample_config config = { 999, false, CALLGRAPH_NONE, 0 };
static const struct sample_config wall_config = { 999, false, CALLGRAPH_NONE, 0, SAMPLE_MODE_WALL,
						  1 };

struct handoff {
	struct ring *ring;
	struct collector *collector;
	atomic_bool done;
	bool flip_modes;           /* readers show each mode in turn */
	uint64_t produced;
	uint64_t snapshots_read;
};

/* Functions of this binary for samples to land in: the symbolizer names them from
 * /proc/self/maps, as it would a target's. */
__attribute__((noinline)) static void leaf_one(void) { __asm__ volatile(""); }
__attribute__((noinline)) static void leaf_two(void) { __asm__ volatile(""); }


static void *producer(void *arg)
{
	struct handoff *h = arg;
	uint64_t ips[2] = { (uint64_t)(uintptr_t)leaf_one, (uint64_t)(uintptr_t)leaf_two };

	for (uint64_t i = 0; i < SAMPLES; i++) {
		/* Every 64th sample lands at an address no mapping holds: a new function each time,
		 * so the collector keeps interning names while readers read older ones. */
		uint64_t ip = i % 64 ? ips[i % 2] : 0x10000000000ull + i;
		uint32_t tid = (uint32_t)getpid() + 1 + (uint32_t)(i % 3);

		if (i % 1000 == 0) {
			char name[16];

			snprintf(name, sizeof(name), "worker-%llu", (unsigned long long)i);
			push_comm(h->ring, tid, name, i);
		}
		push_sample(h->ring, ip, tid, i);
		h->produced++;
		if (i % 2000 == 0)
			usleep(100000); /* spread over several publications */
	}
	atomic_store(&h->done, true);
	return NULL;
}

/* Read everything a snapshot shows: names, modules, comms, the walk. */
static uint64_t read_all(const struct snapshot *s)
{
	struct snapshot_walk w = { .nodes = s->nodes };
	struct snapshot_walk_step step;
	uint64_t sum = 0;

	for (size_t f = 0; f < s->nfuncs; f++)
		sum += strlen(s->funcs[f].name) + strlen(s->funcs[f].module);
	for (size_t t = 0; t < s->nthreads; t++)
		sum += s->threads[t].comm ? strlen(s->threads[t].comm) : 0;
	snapshot_walk_begin(&w, s->merged_root, false);
	while (snapshot_walk_next(&w, &step))
		sum += s->nodes[step.node].self;
	snapshot_walk_end(&w);
	return sum;
}

static void *reader(void *arg)
{
	struct handoff *h = arg;
	struct snapshot *keep = NULL;
	uint64_t n = 0;

	while (!atomic_load(&h->done)) {
		struct snapshot *s;

		if (h->flip_modes)
			assert_true(collector_show(h->collector,
						 (enum sample_mode)(n % (SAMPLE_MODE_WALL + 1))));
		s = collector_snapshot(h->collector);
		read_all(s);
		/* Hold one a while so the collector's later publications drop theirs first and
		 * this thread drops the last reference. */
		if (n % 8 == 0) {
			snapshot_unref(keep);
			keep = s;
		} else {
			snapshot_unref(s);
		}
		n++;
		usleep(1000);
	}
	snapshot_unref(keep);
	__atomic_fetch_add(&h->snapshots_read, n, __ATOMIC_RELAXED);
	return NULL;
}

/* The HTTP endpoint's reader: stretches of the run, asked for from another thread while the
 * collector runs, and on past its end (the caller then makes them, while the test's thread may
 * be finishing the collector). */
static void *stretch_reader(void *arg)
{
	struct handoff *h = arg;
	uint64_t made = 0;

	for (int after = 0; after < 20; after += atomic_load(&h->done)) {
		struct snapshot *s = collector_stretch(h->collector, SAMPLE_MODE_CPU, 0, UINT64_MAX);

		assert_non_null(s);
		assert_true(s->ranged);
		assert_true(s->samples <= SAMPLES);
		read_all(s);
		snapshot_unref(s);
		made++;
		usleep(2000);
	}
	__atomic_fetch_add(&h->snapshots_read, made, __ATOMIC_RELAXED);
	return NULL;
}

static void handoff(const struct sample_config *cfg)
{
	struct handoff h = { .ring = ring_create_readers(1 << 20, cfg->collectors ? cfg->collectors : 1),
			     .flip_modes = cfg->mode != SAMPLE_MODE_CPU };
	pthread_t prod, readers[READERS], stretches;
	struct snapshot *last, *whole;

	assert_non_null(h.ring);
	assert_int_equal(collector_new(&h.collector, h.ring, NULL, cfg, NULL), 0);
	collector_set_history(h.collector, 600);
	collector_select(h.collector, &(struct snapshot_range){ .last_ns = 10ull * 1000000000ull });
	assert_int_equal(collector_start(h.collector, NULL, 0), 0);
	for (int i = 0; i < READERS; i++)
		assert_int_equal(pthread_create(&readers[i], NULL, reader, &h), 0);
	assert_int_equal(pthread_create(&stretches, NULL, stretch_reader, &h), 0);
	assert_int_equal(pthread_create(&prod, NULL, producer, &h), 0);
	pthread_join(prod, NULL);
	for (int i = 0; i < READERS; i++)
		pthread_join(readers[i], NULL);
	collector_finish(h.collector);
	pthread_join(stretches, NULL);
	/* The whole run as a stretch holds every sample. */
	whole = collector_stretch(h.collector, SAMPLE_MODE_CPU, 0, UINT64_MAX);
	assert_int_equal(whole->samples, SAMPLES);
	snapshot_unref(whole);
	/* What is in use has no stretches, and a mode the run keeps not none. */
	assert_null(collector_stretch(h.collector, SAMPLE_MODE_INUSE, 0, UINT64_MAX));
	/* The same by kind name (kinds.h, for code that names no mode): a name that is no kind is
	 * one the run does not keep. */
	assert_true(kinds_keeps_stretches(h.collector, "cpu"));
	assert_false(kinds_keeps_stretches(h.collector, "inuse"));
	assert_false(kinds_keeps_stretches(h.collector, "CPU"));
	assert_null(kinds_stretch(h.collector, "inuse", 0, UINT64_MAX));
	assert_null(kinds_stretch(h.collector, "nonsense", 0, UINT64_MAX));
	whole = kinds_stretch(h.collector, "cpu", 0, UINT64_MAX);
	assert_int_equal(whole->samples, SAMPLES);
	assert_string_equal(snapshot_kind(whole), "cpu");
	snapshot_unref(whole);
	assert_true(collector_show(h.collector, SAMPLE_MODE_CPU));
	assert_string_equal(kinds_shown(h.collector), "cpu");
	last = collector_snapshot(h.collector);
	assert_int_equal(last->mode, SAMPLE_MODE_CPU);
	assert_int_equal(last->samples, SAMPLES);
	assert_int_equal(read_all(last) > SAMPLES, true);
	assert_true(h.snapshots_read > 0);
	snapshot_unref(last);
	collector_free(h.collector);
	ring_destroy(h.ring);
}

static void ring_to_readers(void **state)
{
	(void)state;
	handoff(&config);
}

static void ring_to_readers_changing_modes(void **state)
{
	(void)state;
	handoff(&wall_config);
}

/* The same with three unwinding threads: each reads every record and takes every third sample,
 * interning new functions into the shared profiles while readers read them. */
static void ring_to_three_workers(void **state)
{
	struct sample_config three = wall_config;

	(void)state;
	three.collectors = 3;
	handoff(&three);
}

/* A stream of every kind of record the workers route: CPU samples of several threads, the
 * switches of threads waiting (blocked and preempted), threads' names, a thread's exit (and its
 * tid reused after it), every thread's exit at the end. */
static void push_mixed(struct ring *ring, uint32_t base_tid)
{
	uint64_t one = (uint64_t)(uintptr_t)leaf_one, two = (uint64_t)(uintptr_t)leaf_two;
	uint64_t t = 1000000000ull;

	for (uint32_t i = 0; i < 3000; i++) {
		uint32_t tid = base_tid + i % 7;

		t += 1000000;
		if (i % 500 == 0) {
			char name[16];

			snprintf(name, sizeof(name), "t%u", i);
			push_comm(ring, tid, name, t);
		}
		push_sample(ring, i % 3 ? one : i % 64 ? two : 0x10000000000ull + i, tid, t);
		if (i % 5 == 0) { /* tid waits (i/5 % 3 + 1) ms, preempted one time in four */
			push_sample_marked(ring, SAMPLE_MISC_SWITCH_EVENT, i % 2 ? one : two, tid, t);
			push_switch(ring, tid, true, i % 4 == 0, t);
			push_switch(ring, tid, false, false, t + (i / 5 % 3 + 1) * 1000000);
		}
		if (i == 1500)
			push_exit(ring, base_tid + 3, t);
	}
	for (uint32_t k = 0; k < 7; k++)
		push_exit(ring, base_tid + k, t + 10000000);
}

static struct snapshot *shown(struct collector *c, enum sample_mode mode);

/* The self count of the function named exactly name (its total when it has several ids). */
static uint64_t self_named(const struct snapshot *s, const char *name)
{
	uint64_t n = 0;

	for (size_t f = 0; f < s->nfuncs; f++)
		if (!strcmp(s->funcs[f].name, name))
			n += s->func_self[f];
	return n;
}

static void expect_same_modes(struct collector *a, struct collector *b)
{
	for (enum sample_mode m = SAMPLE_MODE_CPU; m <= SAMPLE_MODE_WALL; m++) {
		struct snapshot *sa = shown(a, m), *sb = shown(b, m);

		assert_int_equal(sa->samples, sb->samples);
		assert_int_equal(sa->nthreads, sb->nthreads);
		for (size_t t = 0; t < sa->nthreads; t++) { /* the same names, on the same threads */
			size_t u = 0;

			while (u < sb->nthreads && sb->threads[u].tid != sa->threads[t].tid)
				u++;
			assert_true(u < sb->nthreads);
			assert_int_equal(sa->threads[t].samples, sb->threads[u].samples);
			assert_string_equal(sa->threads[t].comm ? sa->threads[t].comm : "",
					    sb->threads[u].comm ? sb->threads[u].comm : "");
		}
		assert_int_equal(sa->nfuncs, sb->nfuncs);
		for (size_t f = 0; f < sa->nfuncs; f++)
			assert_int_equal(self_named(sa, sa->funcs[f].name),
					 self_named(sb, sa->funcs[f].name));
		snapshot_unref(sa);
		snapshot_unref(sb);
	}
}

/* Three workers make the profiles one makes: every sample counted once, every wait on the
 * thread that waited, whichever worker read them. */
static void workers_agree_with_one(void **state)
{
	struct sample_config three = wall_config;
	struct ring *ring = ring_create(1 << 22), *shared = ring_create_readers(1 << 16, 3);
	struct ring *unread = ring_create_readers(4096, 3);
	uint32_t tid = (uint32_t)getpid() + 10;
	struct collector *one, *many, *replayed;
	const void *rec;
	size_t len;

	(void)state;
	three.collectors = 3;
	assert_int_equal(collector_new(&many, ring, NULL, &three, NULL), -EINVAL); /* 1 reader */
	assert_int_equal(collector_new(&one, ring, NULL, &wall_config, NULL), 0);
	/* (three workers replaying on this thread, as a benchmark would) */
	assert_int_equal(collector_new(&replayed, unread, NULL, &three, NULL), 0);
	push_mixed(ring, tid);
	while ((rec = ring_peek(ring, &len))) {
		collector_process(one, rec, len);
		collector_process(replayed, rec, len);
		ring_release(ring);
	}
	collector_finish(one);
	collector_finish(replayed);
	expect_same_modes(one, replayed);
	assert_int_equal(collector_new(&many, shared, NULL, &three, NULL), 0);
	assert_int_equal(collector_start(many, NULL, 0), 0);
	push_mixed(shared, tid); /* (a ring smaller than the stream: the workers keep up) */
	collector_finish(many);
	expect_same_modes(one, many);
	collector_free(one);
	collector_free(many);
	collector_free(replayed);
	ring_destroy(ring);
	ring_destroy(shared);
	ring_destroy(unread);
}

/* The snapshot of mode, after the end (made on this thread). */
static struct snapshot *shown(struct collector *c, enum sample_mode mode)
{
	struct snapshot *s;

	assert_true(collector_show(c, mode));
	s = collector_snapshot(c);
	assert_int_equal(s->mode, mode);
	return s;
}

static uint64_t self_of(const struct snapshot *s, const char *name)
{
	for (size_t f = 0; f < s->nfuncs; f++)
		if (strstr(s->funcs[f].name, name))
			return s->func_self[f];
	return 0;
}

static uint64_t total_of_func(const struct snapshot *s, const char *name)
{
	for (size_t f = 0; f < s->nfuncs; f++)
		if (strstr(s->funcs[f].name, name))
			return s->func_total[f];
	return 0;
}

/* 10 CPU samples in leaf_one (each 1001 us at 999 Hz); leaf_two blocked 5 ms and preempted 3 ms;
 * leaf_one switched out blocked 7 ms before the end and not back: counted until the end. */
static void modes_add_up(void **state)
{
	struct ring *ring = ring_create(1 << 20);
	struct collector *c;
	struct snapshot *cpu, *off, *run, *wall;
	uint32_t tid = (uint32_t)getpid();
	uint64_t one = (uint64_t)(uintptr_t)leaf_one, two = (uint64_t)(uintptr_t)leaf_two;
	uint64_t t = 1000000000ull, end_out;
	const void *rec;
	size_t len;

	(void)state;
	assert_int_equal(collector_new(&c, ring, NULL, &wall_config, NULL), 0);
	for (int i = 0; i < 10; i++)
		push_sample(ring, one, tid, t + (uint64_t)i);
	push_sample_marked(ring, SAMPLE_MISC_SWITCH_EVENT, two, tid, t);
	push_switch(ring, tid, true, false, t);
	push_switch(ring, tid, false, false, t + 5000000);
	push_sample_marked(ring, SAMPLE_MISC_SWITCH_EVENT, two, tid, 2 * t);
	push_switch(ring, tid, true, true, 2 * t);
	push_switch(ring, tid, false, false, 2 * t + 3000000);
	/* A switch out the collector never sees the stack of: nothing waits for it. */
	push_switch(ring, tid + 1, true, false, 2 * t);
	push_switch(ring, tid + 1, false, false, 3 * t);
	end_out = util_now_ns() - 7000000;
	push_sample_marked(ring, SAMPLE_MISC_SWITCH_EVENT, one, tid, end_out);
	push_switch(ring, tid, true, false, end_out);
	while ((rec = ring_peek(ring, &len))) {
		collector_process(c, rec, len);
		ring_release(ring);
	}
	collector_finish(c);
	cpu = shown(c, SAMPLE_MODE_CPU);
	off = shown(c, SAMPLE_MODE_OFFCPU);
	run = shown(c, SAMPLE_MODE_RUNNABLE);
	wall = shown(c, SAMPLE_MODE_WALL);
	assert_int_equal(cpu->samples, 10);
	assert_int_equal(self_of(cpu, "leaf_one"), 10);
	assert_int_equal(self_of(off, "leaf_two"), 5000);
	assert_true(self_of(off, "leaf_one") >= 7000);
	assert_int_equal(run->samples, 3000);
	assert_int_equal(self_of(run, "leaf_two"), 3000);
	assert_int_equal(wall->samples, 10 * 1001 + off->samples + run->samples);
	assert_int_equal(self_of(wall, "leaf_two"), 8000);
	assert_int_equal(self_of(wall, "leaf_one"), 10 * 1001 + self_of(off, "leaf_one"));
	assert_true(snapshot_timed(wall) && !snapshot_timed(cpu));
	assert_int_equal(wall->freq, SNAPSHOT_OFFCPU_FREQ);
	/* One id names one function in every mode's profile. */
	for (size_t f = 0; f < cpu->nfuncs; f++) {
		assert_true(f < wall->nfuncs && f < off->nfuncs);
		assert_string_equal(cpu->funcs[f].name, wall->funcs[f].name);
		assert_string_equal(cpu->funcs[f].name, off->funcs[f].name);
	}
	snapshot_unref(cpu);
	snapshot_unref(off);
	snapshot_unref(run);
	snapshot_unref(wall);
	collector_free(c);
	ring_destroy(ring);
}

/* A SAMPLE_RECORD_BLOCKED record of tid, waiting since since_ns at ip (0: unknown), with the
 * kernel frames kframes (kframes_len bytes of names and modules, innermost first). */
static void push_blocked(struct ring *ring, uint32_t tid, uint64_t since_ns, uint64_t ip,
			 const char *kframes, size_t kframes_len)
{
	unsigned char rec[512] = { 0 };
	struct blockedrec b = { (uint32_t)getpid(), tid, since_ns, ip, 0, 0, (uint32_t)kframes_len };
	struct perf_event_header h = { SAMPLE_RECORD_BLOCKED, 0, 0 };
	size_t len = (sizeof(h) + sizeof(b) + kframes_len + 7) & ~(size_t)7;

	h.size = (uint16_t)len;
	memcpy(rec, &h, sizeof(h));
	memcpy(rec + sizeof(h), &b, sizeof(b));
	memcpy(rec + sizeof(h) + sizeof(b), kframes, kframes_len);
	push(ring, rec, len);
}

/* Threads found blocked at the attach, with one switch in 11 sampled: one back in 4 ms later
 * counts 4 ms (its wait is whole: not 11 times), in offcpu and wall, on its stack; one never back
 * counts to the end on its kernel frames (its user stack unknown), innermost the leaf, in the
 * kernel's module; one whose first record is a switch out had run meanwhile: nothing. */
static void attached_waits_count_once(void **state)
{
	static const struct sample_config thinned = { 999, false, CALLGRAPH_NONE, 0,
						      SAMPLE_MODE_WALL, 11 };
	static const char kframes[] = "proftop_test_wait\0\0proftop_test_entry\0\0";
	struct ring *ring = ring_create(1 << 20);
	struct collector *c;
	struct snapshot *off, *wall;
	uint32_t tid = (uint32_t)getpid();
	uint64_t since = util_now_ns() - 50000000, end;
	const void *rec;
	size_t len;

	(void)state;
	assert_int_equal(collector_new(&c, ring, NULL, &thinned, NULL), 0);
	push_blocked(ring, tid, since, (uint64_t)(uintptr_t)leaf_one, "", 0);
	push_blocked(ring, tid + 1, since, 0, kframes, sizeof(kframes) - 1);
	push_blocked(ring, tid + 2, since, (uint64_t)(uintptr_t)leaf_two, "", 0);
	push_switch(ring, tid, false, false, since + 4000000);
	push_switch(ring, tid + 2, true, false, since + 1000000);
	push_switch(ring, tid + 2, false, false, since + 2000000);
	while ((rec = ring_peek(ring, &len))) {
		collector_process(c, rec, len);
		ring_release(ring);
	}
	collector_finish(c);
	end = util_now_ns();
	off = shown(c, SAMPLE_MODE_OFFCPU);
	wall = shown(c, SAMPLE_MODE_WALL);
	assert_int_equal(self_of(off, "leaf_one"), 4000);
	assert_int_equal(self_of(wall, "leaf_one"), 4000);
	assert_int_equal(self_of(off, "leaf_two"), 0);
	assert_in_range(self_of(off, "proftop_test_wait"), 50000, (end - since) / 1000 + 1);
	assert_int_equal(self_of(off, "proftop_test_entry"), 0);
	assert_int_equal(total_of_func(off, "proftop_test_entry"), self_of(off, "proftop_test_wait"));
	for (size_t f = 0; f < off->nfuncs; f++)
		if (strstr(off->funcs[f].name, "proftop_test_"))
			assert_string_equal(off->funcs[f].module, "[kernel.kallsyms]");
	assert_int_equal(off->samples, 4000 + self_of(off, "proftop_test_wait"));
	snapshot_unref(off);
	snapshot_unref(wall);
	collector_free(c);
	ring_destroy(ring);
}

/* A thread blocked for seconds shows while it waits (up to the collector's lag), and once back
 * in its wait counts exactly once: what was shown early is not counted again. */
static void long_wait_shows_while_it_lasts(void **state)
{
	struct ring *ring = ring_create(1 << 20);
	struct collector *c;
	struct snapshot *s;
	uint32_t tid = (uint32_t)getpid();
	uint64_t out = util_now_ns() - 2000000000ull, in, deadline = util_now_ns() + 10000000000ull;
	uint64_t seen = 0;

	(void)state;
	assert_int_equal(collector_new(&c, ring, NULL, &wall_config, NULL), 0);
	assert_true(collector_show(c, SAMPLE_MODE_OFFCPU));
	assert_int_equal(collector_start(c, NULL, 0), 0);
	push_sample_marked(ring, SAMPLE_MISC_SWITCH_EVENT, (uint64_t)(uintptr_t)leaf_two, tid, out);
	push_switch(ring, tid, true, false, out);
	while (seen < 1700000 && util_now_ns() < deadline) { /* 2 s out, less the lag */
		s = collector_snapshot(c);
		seen = s->samples;
		snapshot_unref(s);
		usleep(20000);
	}
	assert_true(seen >= 1700000);
	in = util_now_ns();
	push_switch(ring, tid, false, false, in);
	collector_finish(c);
	s = collector_snapshot(c);
	assert_int_equal(s->samples, (in - out + 500) / 1000);
	snapshot_unref(s);
	collector_free(c);
	ring_destroy(ring);
}

/* A cpu run keeps the CPU's profile only. */
static void cpu_run_has_no_other_modes(void **state)
{
	struct ring *ring = ring_create(1 << 16);
	struct collector *c;

	(void)state;
	assert_int_equal(collector_new(&c, ring, NULL, &config, NULL), 0);
	collector_finish(c);
	assert_false(collector_show(c, SAMPLE_MODE_WALL));
	assert_false(collector_show(c, SAMPLE_MODE_OFFCPU));
	assert_true(collector_show(c, SAMPLE_MODE_CPU));
	assert_int_equal(collector_shown(c), SAMPLE_MODE_CPU);
	collector_free(c);
	ring_destroy(ring);
}

static const struct sample_config alloc_config = { 999, false, CALLGRAPH_NONE, 0, SAMPLE_MODE_ALLOC,
						   1, 65536 };

/* A record of the allocation library as the sampler forwards it: a header, the allocrec, and
 * the stack. */
struct alloc_record {
	struct perf_event_header h;
	struct allocrec a;
	unsigned char stack[4096];
};

extern void *__libc_stack_end;

/* n bytes of this thread's stack from sp: byte by byte and unseen by AddressSanitizer, which
 * poisons the parts of the stack no variable holds now. */
__attribute__((no_sanitize("address"))) static void copy_stack(unsigned char *to, uintptr_t sp,
							       size_t n)
{
	const volatile unsigned char *from = (const volatile unsigned char *)sp;

	for (size_t i = 0; i < n; i++)
		to[i] = from[i];
}

/* The registers and up to sizeof(r->stack) bytes of stack of the function this is inlined into,
 * as the library takes them. */
__attribute__((always_inline)) static inline void capture_here(struct alloc_record *r)
{
	uintptr_t sp;

	allocrec_take_registers(r->a.regs);
	sp = (uintptr_t)r->a.regs[ALLOCREC_REG_SP];
	r->a.stack_size = (uintptr_t)__libc_stack_end - sp < sizeof(r->stack)
				  ? (uint32_t)((uintptr_t)__libc_stack_end - sp)
				  : (uint32_t)sizeof(r->stack);
	copy_stack(r->stack, sp, r->a.stack_size);
}

/* Functions of this binary that allocate: their records' stacks are unwound from here. */
__attribute__((noinline)) static void alloc_one(struct alloc_record *r) { capture_here(r); }
__attribute__((noinline)) static void alloc_two(struct alloc_record *r) { capture_here(r); }

/* Push a record of kind for the block addr of size bytes, made in at (alloc_one or alloc_two;
 * NULL: a free, no stack); stack_size, when not 0, is what the record claims to hold. */
static void push_alloc(struct ring *ring, uint32_t kind, uint64_t addr, uint64_t size,
		       void (*at)(struct alloc_record *), uint32_t stack_size)
{
	static struct alloc_record r; /* (not on the stack it copies) */

	memset(&r, 0, sizeof(r));
	r.a = (struct allocrec){ kind, 0, (uint32_t)getpid(), (uint32_t)getpid(), addr, size,
				 util_now_ns(), 0, 0, { 0 } };
	if (at)
		at(&r);
	r.h = (struct perf_event_header){ SAMPLE_RECORD_ALLOC, 0,
					  (uint16_t)(sizeof(r.h) + sizeof(r.a) + r.a.stack_size) };
	if (stack_size)
		r.a.stack_size = stack_size;
	push(ring, &r, r.h.size);
}

static uint64_t total_of(const struct snapshot *s)
{
	return s->nodes[s->merged_root].total;
}

/* Sampled allocations in two functions, some freed, one whose free cannot be told, and records
 * a target could forge: the four profiles count what they should, the in-use ones only the
 * blocks not freed, and every function has one id in all four. */
static void allocations_add_up(void **state)
{
	struct ring *ring = ring_create(1 << 16);
	struct snapshot *alloc, *inuse, *objects;
	double per_big = 1048576 * allocrec_scale(1048576, 65536);
	struct collector *c;
	const void *rec;
	size_t len;

	(void)state;
	assert_int_equal(collector_new(&c, ring, NULL, &alloc_config, NULL), 0);
	for (int i = 0; i < 10; i++) /* 10 MiB from alloc_one, 3 of them freed */
		push_alloc(ring, ALLOCREC_ALLOC, 0x10000 + (uint64_t)i * 16, 1048576, alloc_one, 0);
	for (int i = 0; i < 3; i++)
		push_alloc(ring, ALLOCREC_FREE, 0x10000 + (uint64_t)i * 16, 0, NULL, 0);
	/* allocated, never in use */
	push_alloc(ring, ALLOCREC_UNTRACKED, 0x20000, 1048576, alloc_two, 0);
	push_alloc(ring, ALLOCREC_FREE, 0x999990, 0, NULL, 0);   /* a block never sampled */
	push_alloc(ring, 77, 0x30000, 1048576, alloc_two, 0);    /* no such kind */
	/* more stack than the record holds, or than the library sends */
	push_alloc(ring, ALLOCREC_ALLOC, 0x30000, 1048576, alloc_two, 4097);
	push_alloc(ring, ALLOCREC_ALLOC, 0x30000, 1048576, alloc_two, ALLOCREC_STACK_MAX + 8);
	push_alloc(ring, ALLOCREC_ALLOC, 0, 1048576, alloc_two, 0); /* no address */
	while ((rec = ring_peek(ring, &len))) {
		collector_process(c, rec, len);
		ring_release(ring);
	}
	collector_finish(c);

	assert_true(collector_show(c, SAMPLE_MODE_INUSE));
	inuse = collector_snapshot(c);
	assert_true(collector_show(c, SAMPLE_MODE_ALLOC_OBJECTS));
	objects = collector_snapshot(c);
	assert_string_equal(kinds_shown(c), "alloc-objects");
	assert_true(collector_show(c, SAMPLE_MODE_ALLOC));
	alloc = collector_snapshot(c);
	assert_false(collector_show(c, SAMPLE_MODE_CPU));
	assert_int_equal(alloc->mode, SAMPLE_MODE_ALLOC);
	assert_true(snapshot_bytes(alloc) && !snapshot_timed(alloc));
	assert_string_equal(snapshot_unit(objects), "OBJECTS");
	/* (Their records' stacks start in capture_here(), inlined into them.) */
	assert_true(fabs((double)total_of_func(alloc, "alloc_one") - 10 * per_big) < 10);
	assert_true(fabs((double)total_of_func(alloc, "alloc_two") - per_big) < 2);
	assert_true(fabs((double)total_of_func(inuse, "alloc_one") - 7 * per_big) < 10);
	assert_int_equal(total_of_func(inuse, "alloc_two"), 0);
	/* Unwound from the registers and the stack: their caller is push_alloc(), whose caller is
	 * this test. */
	assert_int_equal(total_of_func(alloc, "push_alloc"), total_of(alloc));
	assert_int_equal(total_of_func(alloc, "allocations_add_up"), total_of(alloc));
	assert_int_equal(total_of(inuse), inuse->counters.in_use);
	assert_int_equal(total_of(alloc), alloc->counters.allocated);
	assert_int_equal(total_of_func(objects, "alloc_one") + total_of_func(objects, "alloc_two"), 11);
	/* Companions: the other three, with the same function ids. */
	for (enum sample_mode m = SAMPLE_MODE_ALLOC; m <= SAMPLE_MODE_INUSE_OBJECTS; m++) {
		const struct snapshot *other = snapshot_companion(alloc, m);

		assert_non_null(other);
		assert_int_equal(other->mode, m);
		for (size_t f = 0; f < alloc->nfuncs && f < other->nfuncs; f++)
			assert_string_equal(alloc->funcs[f].name, other->funcs[f].name);
	}
	/* What frontends ask instead of a mode: the kind by name, its siblings by name, what it
	 * counts, whether its timeline is a level. */
	assert_string_equal(snapshot_kind(inuse), "inuse");
	assert_string_equal(snapshot_unit(inuse), "BYTES");
	assert_true(snapshot_level(inuse) && !snapshot_level(alloc) && !snapshot_level(objects));
	assert_string_equal(snapshot_alloc_measures(alloc), "bytes allocated");
	assert_null(snapshot_time_measured(alloc));
	assert_ptr_equal(snapshot_sibling(alloc, "alloc"), alloc);
	assert_ptr_equal(snapshot_sibling(alloc, "inuse-objects"),
			 snapshot_companion(alloc, SAMPLE_MODE_INUSE_OBJECTS));
	assert_true(snapshot_level(snapshot_sibling(alloc, "inuse-objects")));
	assert_string_equal(snapshot_unit(snapshot_sibling(alloc, "inuse-objects")), "OBJECTS");
	assert_null(snapshot_sibling(alloc, "cpu"));
	assert_null(snapshot_sibling(alloc, "in-use"));
	snapshot_unref(alloc);
	snapshot_unref(inuse);
	snapshot_unref(objects);
	collector_free(c);
	ring_destroy(ring);
}

/* The run's seconds count from collector_start(), for the history too, however long reading
 * the processes' maps before it took (-a reads every process's). */
static void history_counts_from_the_start(void **state)
{
	struct ring *ring = ring_create(1 << 20);
	struct collector *c;
	struct snapshot *first, *second;
	bool ended;

	(void)state;
	assert_int_equal(collector_new(&c, ring, NULL, &config, NULL), 0);
	collector_set_history(c, 60);
	usleep(1200000); /* the maps of a whole machine */
	assert_int_equal(collector_start(c, NULL, 0), 0);
	push_sample(ring, (uint64_t)(uintptr_t)leaf_one, (uint32_t)getpid(), util_now_ns());
	assert_true(collector_elapsed(c, &ended) < 1000000000ull);
	collector_finish(c); /* drains the ring */
	first = collector_stretch(c, SAMPLE_MODE_CPU, 0, 1);
	second = collector_stretch(c, SAMPLE_MODE_CPU, 1, 2);
	assert_int_equal(first->samples, 1);
	assert_int_equal(second->samples, 0);
	snapshot_unref(first);
	snapshot_unref(second);
	collector_free(c);
	ring_destroy(ring);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ring_to_readers),
		cmocka_unit_test(ring_to_readers_changing_modes),
		cmocka_unit_test(ring_to_three_workers),
		cmocka_unit_test(workers_agree_with_one),
		cmocka_unit_test(modes_add_up),
		cmocka_unit_test(cpu_run_has_no_other_modes),
		cmocka_unit_test(allocations_add_up),
		cmocka_unit_test(long_wait_shows_while_it_lasts),
		cmocka_unit_test(attached_waits_count_once),
		cmocka_unit_test(history_counts_from_the_start),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
