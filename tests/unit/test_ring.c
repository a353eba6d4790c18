/* test_ring.c — the ring: single-thread edge cases, two readers, then stress tests of a producer
 * and one reader, and of a producer and three readers, on threads of their own.
 *
 * Every record the tests push is filled from a seed (its sequence number) so the consumer can
 * recompute its length and every payload byte and so detect a torn, shifted or reused record.
 *
 * The stress test pushes RING_STRESS_ITEMS records (default STRESS_ITEMS) and prints its rate.
 * Its threads cannot use cmocka's asserts (they longjmp), so they count what went wrong and the
 * main thread asserts on the counts after joining them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proftop/ring.h"
#include "proftop/util.h"

#define STRESS_ITEMS	5000000ull
#define STRESS_RING	(64 * 1024)
/* The consumer naps now and then so the producer surely meets a full ring. */
#define STRESS_NAP_EVERY	(1u << 16)
#define STRESS_MAX_READERS	3

static size_t align8(size_t len)
{
	return (len + 7) & ~(size_t)7;
}

/* Word i of a record seeded by seed. */
static uint64_t pattern_word(uint64_t seed, size_t i)
{
	return util_hash_u64(seed * 0x9e3779b97f4a7c15ull + i);
}

/* The record starts with its seed; the rest is pattern words, the last one cut to fit. */
static void record_fill(void *rec, size_t len, uint64_t seed)
{
	unsigned char *p = rec;
	size_t i;

	for (i = 0; i * 8 < len; i++) {
		uint64_t w = i ? pattern_word(seed, i) : seed;
		size_t n = len - i * 8 < 8 ? len - i * 8 : 8;

		memcpy(p + i * 8, &w, n);
	}
}

static bool record_check(const void *rec, size_t len, uint64_t seed)
{
	const unsigned char *p = rec;
	size_t i;

	for (i = 0; i * 8 < len; i++) {
		uint64_t w = i ? pattern_word(seed, i) : seed;
		size_t n = len - i * 8 < 8 ? len - i * 8 : 8;

		if (memcmp(p + i * 8, &w, n))
			return false;
	}
	return true;
}

static uint64_t record_seq(const void *rec)
{
	uint64_t seq;

	memcpy(&seq, rec, sizeof(seq));
	return seq;
}

static bool push(struct ring *ring, size_t len, uint64_t seed)
{
	void *p = ring_reserve(ring, len);

	if (!p)
		return false;
	assert_int_equal((uintptr_t)p % 8, 0);
	record_fill(p, len, seed);
	ring_commit(ring);
	return true;
}

/* Pop one record and check it is the one seeded by seed, len bytes long. */
static void pop_expect(struct ring *ring, size_t len, uint64_t seed)
{
	size_t got = 12345;
	const void *p = ring_peek(ring, &got);

	assert_non_null(p);
	assert_int_equal((uintptr_t)p % 8, 0);
	assert_int_equal(got, align8(len));
	assert_true(record_check(p, len, seed));
	ring_release(ring);
}

static void assert_empty(struct ring *ring)
{
	size_t len;

	assert_null(ring_peek(ring, &len));
	assert_int_equal(ring_used(ring), 0);
}

static void test_create_rounds_capacity(void **state)
{
	static const struct {
		size_t ask, want;
	} cases[] = {
		{ 1, 4096 }, { 4095, 4096 }, { 4096, 4096 }, { 4097, 8192 },
		{ 65536, 65536 }, { 100000, 131072 }, { (1u << 20) + 1, 1u << 21 },
	};
	struct ring *ring;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ring = ring_create(cases[i].ask);
		assert_non_null(ring);
		assert_int_equal(ring_capacity(ring), cases[i].want);
		assert_empty(ring);
		ring_destroy(ring);
	}
	assert_null(ring_create(0));
	assert_null(ring_create(((size_t)1 << 31) + 1));
	assert_null(ring_create(SIZE_MAX));
	ring_destroy(NULL);
}

static void test_empty_peek(void **state)
{
	struct ring *ring = ring_create(4096);
	size_t len = 77;

	(void)state;
	assert_null(ring_peek(ring, &len));
	assert_null(ring_peek(ring, NULL));
	/* Strays on either side publish nothing and free nothing. */
	ring_commit(ring);
	ring_release(ring);
	assert_empty(ring);

	assert_true(push(ring, 16, 1));
	assert_int_equal(ring_used(ring), 8 + 16);
	pop_expect(ring, 16, 1);
	assert_empty(ring);
	ring_release(ring);
	ring_commit(ring);
	assert_empty(ring);
	ring_destroy(ring);
}

static void test_round_trip_lengths(void **state)
{
	struct ring *ring = ring_create(4096);
	size_t len;
	uint64_t seed;

	(void)state;
	/* One at a time: every length, wrapping many times. */
	for (len = 0, seed = 100; len <= 600; len++, seed++) {
		assert_true(push(ring, len, seed));
		pop_expect(ring, len, seed);
		assert_empty(ring);
	}

	/* A batch of varied lengths comes out in order, each intact. */
	for (int round = 0; round < 50; round++) {
		size_t lens[16];
		int n;

		for (n = 0; n < 16; n++) {
			lens[n] = (size_t)(util_hash_u64(seed + n) % 200);
			if (!push(ring, lens[n], seed + n))
				break;
		}
		assert_true(n >= 8);
		for (int i = 0; i < n; i++)
			pop_expect(ring, lens[i], seed + i);
		assert_empty(ring);
		seed += 16;
	}

	/* Peeking twice without a release returns the same record. */
	assert_true(push(ring, 40, 7));
	{
		const void *a = ring_peek(ring, &len);
		const void *b = ring_peek(ring, &len);

		assert_ptr_equal(a, b);
	}
	pop_expect(ring, 40, 7);
	assert_empty(ring);
	ring_destroy(ring);
}

static void test_uncommitted_reservation_forgotten(void **state)
{
	struct ring *ring = ring_create(4096);
	void *a, *b;

	(void)state;
	a = ring_reserve(ring, 100);
	assert_non_null(a);
	memset(a, 0xee, 100);
	b = ring_reserve(ring, 24);
	assert_ptr_equal(a, b);
	record_fill(b, 24, 42);
	ring_commit(ring);
	pop_expect(ring, 24, 42);
	assert_empty(ring);
	ring_destroy(ring);
}

static void test_full_ring(void **state)
{
	struct ring *ring = ring_create(4096);
	uint64_t n = 0;

	(void)state;
	/* 56 + the 8-byte header is 64: exactly 64 records fill the ring. */
	while (push(ring, 56, 1000 + n))
		n++;
	assert_int_equal(n, 4096 / 64);
	assert_int_equal(ring_used(ring), 4096);
	assert_null(ring_reserve(ring, 0));
	assert_null(ring_reserve(ring, 1));
	/* A commit after a failed reserve must not publish anything. */
	ring_commit(ring);
	assert_int_equal(ring_used(ring), 4096);

	/* Free one slot: exactly one more fits, in the oldest record's place. */
	pop_expect(ring, 56, 1000);
	assert_true(push(ring, 56, 1000 + n));
	assert_null(ring_reserve(ring, 8));
	for (uint64_t i = 1; i <= n; i++)
		pop_expect(ring, 56, 1000 + i);
	assert_empty(ring);

	ring_destroy(ring);

	/* 100 + 8 rounds to 112, which does not divide 4096: 36 records leave 64 bytes at the end.
	 * The failed reserve pads them, so the ring is full to the byte, and the pad is skipped. */
	ring = ring_create(4096);
	n = 0;
	while (push(ring, 100, 2000 + n))
		n++;
	assert_int_equal(n, 4096 / 112);
	assert_null(ring_reserve(ring, 100));
	ring_commit(ring);
	assert_int_equal(ring_used(ring), 4096);
	for (uint64_t i = 0; i < n; i++)
		pop_expect(ring, 100, 2000 + i);
	assert_empty(ring);
	assert_true(push(ring, 100, 3000));
	pop_expect(ring, 100, 3000);
	assert_empty(ring);
	ring_destroy(ring);
}

/* The padding path step by step, where the counters are known. */
static void test_wrap_pads_to_end(void **state)
{
	struct ring *ring = ring_create(4096);

	(void)state;
	assert_true(push(ring, 2040, 1));	/* [0, 2048) */
	pop_expect(ring, 2040, 1);		/* tail = 2048 */
	assert_true(push(ring, 1016, 2));	/* [2048, 3072) */
	/* 1536 bytes do not fit in [3072, 4096): a pad takes that, the record goes to [0, 1536). */
	assert_true(push(ring, 1528, 3));
	assert_int_equal(ring_used(ring), 1024 + 1024 + 1536);
	/* Only [1536, 2048) is free: 512 bytes, one short of a 512-byte record and its header. */
	assert_null(ring_reserve(ring, 512));
	assert_true(push(ring, 504, 4));
	assert_int_equal(ring_used(ring), 4096);
	pop_expect(ring, 1016, 2);
	pop_expect(ring, 1528, 3);		/* the pad is skipped, never returned */
	pop_expect(ring, 504, 4);
	assert_empty(ring);
	ring_destroy(ring);
}

/* Many laps of lengths that do not divide the capacity, with a varying number in flight. */
static void test_wrap_many_laps(void **state)
{
	static const size_t lens[] = { 100, 13, 250, 77, 1, 333, 24, 509 };
	enum { NLENS = sizeof(lens) / sizeof(lens[0]), FIFO = 256 };
	struct ring *ring = ring_create(4096);
	uint64_t fifo[FIFO], head = 0, tail = 0, pushed_bytes = 0;

	(void)state;
	for (uint64_t seq = 0; seq < 20000; seq++) {
		size_t len = lens[seq % NLENS];
		/* Keep between 0 and 15 records in flight, varying so the pads move around. */
		uint64_t keep = util_hash_u64(seq) % 16;

		if (push(ring, len, seq)) {
			fifo[head++ % FIFO] = seq;
			pushed_bytes += len;
		}
		while (head - tail > keep) {
			uint64_t s = fifo[tail++ % FIFO];

			pop_expect(ring, lens[s % NLENS], s);
		}
	}
	while (head != tail) {
		uint64_t s = fifo[tail++ % FIFO];

		pop_expect(ring, lens[s % NLENS], s);
	}
	assert_empty(ring);
	assert_true(head > 19000);
	assert_true(pushed_bytes > 500 * 4096);
	ring_destroy(ring);
}

static void test_reserve_too_large(void **state)
{
	struct ring *ring = ring_create(4096);

	(void)state;
	assert_null(ring_reserve(ring, 2049));
	assert_null(ring_reserve(ring, SIZE_MAX));
	assert_null(ring_reserve(ring, SIZE_MAX - 3));
	ring_commit(ring);
	assert_empty(ring);
	assert_true(push(ring, 2048, 5));
	pop_expect(ring, 2048, 5);
	assert_empty(ring);
	ring_destroy(ring);
}

/* A record of capacity/2 needs capacity/2 + 8 bytes. In an empty ring at offset capacity/2 it fits
 * neither before the end nor after a pad; the first attempt must still move the ring to offset 0
 * so a retry after the consumer runs succeeds, instead of failing forever. */
static void test_max_record_always_fits_eventually(void **state)
{
	struct ring *ring = ring_create(4096);

	(void)state;
	assert_true(push(ring, 2040, 1));
	pop_expect(ring, 2040, 1);		/* empty, at offset 2048 */
	assert_null(ring_reserve(ring, 2048));
	ring_commit(ring);
	assert_int_equal(ring_used(ring), 2048);	/* the pad */
	assert_null(ring_peek(ring, NULL));	/* skips it */
	assert_int_equal(ring_used(ring), 0);
	assert_true(push(ring, 2048, 2));
	pop_expect(ring, 2048, 2);
	assert_empty(ring);
	ring_destroy(ring);
}

struct stress {
	struct ring *ring;
	uint64_t items;
	atomic_bool done;
	/* producer's; each side's counters on its own line, so the harness adds no false sharing */
	_Alignas(64) unsigned char scratch[512];
	uint64_t overflow;
	uint64_t committed;
	unsigned nreaders;
	struct stress_reader {
		struct stress *s;
		unsigned index;
		/* this reader's */
		_Alignas(64) uint64_t received;
		uint64_t bad_len;
		uint64_t bad_payload;
		uint64_t bad_order;
	} readers[STRESS_MAX_READERS];
};

/* 8..300 bytes, mostly not multiples of 8. */
static size_t stress_len(uint64_t seq)
{
	return 8 + (size_t)(util_hash_u64(seq ^ 0x5bd1e995u) % 293);
}

static void *stress_produce(void *arg)
{
	struct stress *s = arg;
	unsigned streak = 0;	/* overflows in a row */

	for (uint64_t seq = 0; seq < s->items; seq++) {
		size_t len = stress_len(seq);
		void *p = ring_reserve(s->ring, len);

		if (!p) {
			/* A failed reserve costs nanoseconds; a sampler still spent the time reading
			 * the sample. Spend it too, or the producer laps the consumer and hardly a
			 * record gets through to be checked. */
			record_fill(s->scratch, len, seq);
			s->overflow++;
			/* On one CPU, stand in for the sampler's poll() so the consumer runs. */
			if (++streak % 1024 == 0)
				sched_yield();
			continue;
		}
		record_fill(p, len, seq);
		ring_commit(s->ring);
		s->committed++;
		streak = 0;
	}
	atomic_store_explicit(&s->done, true, memory_order_release);
	return NULL;
}

static void stress_nap(void)
{
	struct timespec ts = { 0, 200 * 1000 };

	nanosleep(&ts, NULL);
}

/* Every reader reads every record. */
static void *stress_consume(void *arg)
{
	struct stress_reader *r = arg;
	struct stress *s = r->s;
	uint64_t next = 0;	/* the smallest sequence number still acceptable */
	unsigned idle = 0;

	for (;;) {
		size_t len;
		const void *p = ring_peek_reader(s->ring, r->index, &len);

		if (!p && atomic_load_explicit(&s->done, memory_order_acquire)) {
			/* done was set after the last commit: this peek sees everything. */
			p = ring_peek_reader(s->ring, r->index, &len);
			if (!p)
				break;
		}
		if (!p) {
			if (++idle % 64 == 0)
				sched_yield();
			continue;
		}

		uint64_t seq = record_seq(p);

		if (seq < next || seq >= s->items)
			r->bad_order++;
		else if (len != align8(stress_len(seq)))
			r->bad_len++;
		else if (!record_check(p, stress_len(seq), seq))
			r->bad_payload++;
		next = seq + 1;
		ring_release_reader(s->ring, r->index);
		/* More records than were produced: a broken ring is looping; fail, do not hang. */
		if (++r->received > s->items)
			break;
		if (r->received % STRESS_NAP_EVERY == 0)
			stress_nap();
	}
	return NULL;
}

static uint64_t stress_items(void)
{
	const char *env = getenv("RING_STRESS_ITEMS");
	char *end;
	unsigned long long n;

	if (!env || !*env)
		return STRESS_ITEMS;
	n = strtoull(env, &end, 10);
	if (*end || n == 0) {
		fprintf(stderr, "test_ring: bad RING_STRESS_ITEMS '%s', using %llu\n", env,
			STRESS_ITEMS);
		return STRESS_ITEMS;
	}
	return n;
}

/* Spread the threads over the CPUs (the nth on the nth, round the CPUs when there are more). Left to itself the scheduler
 * may keep a new thread on its creator's CPU for a good part of a second: then the producer
 * overflows for whole time slices and the test checks few records and measures nothing. */
static void stress_pin(pthread_attr_t *attr, int nth)
{
	cpu_set_t allowed, one;
	int cpu, seen = 0;

	if (sched_getaffinity(0, sizeof(allowed), &allowed) || CPU_COUNT(&allowed) < 2)
		return;
	nth %= CPU_COUNT(&allowed); /* more threads than CPUs: they share */
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (CPU_ISSET(cpu, &allowed) && seen++ == nth)
			break;
	}
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	pthread_attr_setaffinity_np(attr, sizeof(one), &one);
}

static void stress_start(pthread_t *thread, int nth, void *(*fn)(void *), void *s)
{
	pthread_attr_t attr;

	assert_int_equal(pthread_attr_init(&attr), 0);
	stress_pin(&attr, nth);
	assert_int_equal(pthread_create(thread, &attr, fn, s), 0);
	pthread_attr_destroy(&attr);
}

/* One producer and nreaders readers, each checking every record. */
static void stress_run(unsigned nreaders)
{
	struct stress s = { .items = stress_items(), .nreaders = nreaders };
	pthread_t producer, consumers[STRESS_MAX_READERS];
	uint64_t start, ns;

	s.ring = ring_create_readers(STRESS_RING, nreaders);
	assert_non_null(s.ring);
	atomic_init(&s.done, false);
	start = util_now_ns();
	for (unsigned i = 0; i < nreaders; i++) {
		s.readers[i].s = &s;
		s.readers[i].index = i;
		stress_start(&consumers[i], (int)i, stress_consume, &s.readers[i]);
	}
	stress_start(&producer, (int)nreaders, stress_produce, &s);
	assert_int_equal(pthread_join(producer, NULL), 0);
	for (unsigned i = 0; i < nreaders; i++)
		assert_int_equal(pthread_join(consumers[i], NULL), 0);
	ns = util_now_ns() - start;

	printf("ring stress, %u reader(s): %llu items in %.3f s: %llu received, %llu overflow; "
	       "%.2f M items/s, %.2f M received/s\n", nreaders,
	       (unsigned long long)s.items, ns / 1e9, (unsigned long long)s.readers[0].received,
	       (unsigned long long)s.overflow, s.items * 1e3 / ns, s.readers[0].received * 1e3 / ns);
	for (unsigned i = 0; i < nreaders; i++) {
		assert_int_equal(s.readers[i].bad_order, 0);
		assert_int_equal(s.readers[i].bad_len, 0);
		assert_int_equal(s.readers[i].bad_payload, 0);
		assert_int_equal(s.readers[i].received, s.committed);
	}
	assert_int_equal(s.committed + s.overflow, s.items);
	for (unsigned i = 0; i < nreaders; i++)
		assert_null(ring_peek_reader(s.ring, i, NULL));
	assert_int_equal(ring_used(s.ring), 0);
	ring_destroy(s.ring);
}

static void test_stress_two_threads(void **state)
{
	(void)state;
	stress_run(1);
}

/* The collectors' unwinding threads: a byte is reused only after the slowest reader let go. */
static void test_stress_three_readers(void **state)
{
	(void)state;
	stress_run(3);
}

/* reader reads the records seeded from..to-1, of 100 bytes each, in order. */
static void read_records(struct ring *ring, unsigned reader, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++) {
		size_t len;
		const void *p = ring_peek_reader(ring, reader, &len);

		assert_non_null(p);
		assert_true(record_check(p, 100, i));
		ring_release_reader(ring, reader);
	}
}

/* Two readers: each gets every record, and room comes back only when both released it. */
static void test_readers_each_read_all(void **state)
{
	struct ring *ring = ring_create_readers(4096, 2);
	size_t len, n = 0;
	void *p;

	(void)state;
	assert_null(ring_create_readers(4096, 0));
	assert_null(ring_create_readers(4096, RING_MAX_READERS + 1));
	assert_int_equal(ring_readers(ring), 2);
	while ((p = ring_reserve(ring, 100))) {
		record_fill(p, 100, n++);
		ring_commit(ring);
	}
	assert_true(n > 10);
	/* Reader 0 reads everything: still full, reader 1 has not. */
	read_records(ring, 0, 0, n);
	assert_null(ring_peek_reader(ring, 0, &len));
	assert_null(ring_reserve(ring, 100));
	/* Reader 1 reads one: room for one more. */
	read_records(ring, 1, 0, 1);
	assert_non_null(ring_reserve(ring, 100));
	read_records(ring, 1, 1, n);
	/* (a pad at the end is stepped over at the next peek) */
	assert_null(ring_peek_reader(ring, 0, &len));
	assert_null(ring_peek_reader(ring, 1, &len));
	assert_int_equal(ring_used(ring), 0);
	ring_destroy(ring);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_rounds_capacity),
		cmocka_unit_test(test_empty_peek),
		cmocka_unit_test(test_round_trip_lengths),
		cmocka_unit_test(test_uncommitted_reservation_forgotten),
		cmocka_unit_test(test_full_ring),
		cmocka_unit_test(test_wrap_pads_to_end),
		cmocka_unit_test(test_wrap_many_laps),
		cmocka_unit_test(test_reserve_too_large),
		cmocka_unit_test(test_max_record_always_fits_eventually),
		cmocka_unit_test(test_readers_each_read_all),
		cmocka_unit_test(test_stress_two_threads),
		cmocka_unit_test(test_stress_three_readers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
