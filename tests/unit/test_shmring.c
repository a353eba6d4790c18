/* The shared-memory ring: its geometry, order and fullness on one thread; records of one slot
 * and of many, padded past the end of the slots; four producer threads racing one consumer (make
 * tsan runs this under ThreadSanitizer), every record intact, in each producer's order, once,
 * and every refusal of the full ring counted; producers in forked processes; a record whose
 * producer died while writing it; and a consumer that survives whatever the target writes into
 * the memory. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "proftop/shmring.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define SLOT 64
#define PRODUCERS 4
#define PER_PRODUCER 100000
#define MAX_FILL 600

struct record {
	uint64_t producer, seq, check, len;
	unsigned char fill[]; /* len bytes, each seq's low byte */
};

static uint64_t check_of(uint64_t producer, uint64_t seq)
{
	return (producer * 0x9e3779b97f4a7c15ull) ^ (seq * 0xbf58476d1ce4e5b9ull) ^ 0x5a;
}

/* The fill of record seq: from a few bytes to many slots. */
static uint64_t fill_of(uint64_t seq)
{
	return (seq * 2654435761u) % MAX_FILL;
}

static void *ring_memory(uint32_t nslots, size_t *bytes)
{
	void *mem;

	*bytes = shmring_bytes(nslots, SLOT);
	mem = mmap(NULL, *bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(mem != MAP_FAILED);
	assert_int_equal(shmring_init(mem, *bytes, nslots, SLOT), 0);
	return mem;
}

static bool send_fill(void *mem, uint64_t producer, uint64_t seq, uint64_t fill)
{
	uint64_t pos;
	struct record *r = shmring_reserve(mem, sizeof(*r) + fill, &pos);

	if (!r)
		return false;
	r->producer = producer;
	r->seq = seq;
	r->check = check_of(producer, seq);
	r->len = fill;
	memset(r->fill, (int)(seq & 0xff), fill);
	shmring_publish(mem, pos);
	return true;
}

static bool send(void *mem, uint64_t producer, uint64_t seq)
{
	return send_fill(mem, producer, seq, 8);
}

static const struct record *peek(struct shmring_reader *r, uint64_t now)
{
	size_t bytes;
	const struct record *got = shmring_peek(r, now, &bytes);

	if (got) {
		assert_true(bytes >= sizeof(*got));
		assert_true(got->len <= bytes - sizeof(*got));
	}
	return got;
}

static void geometry(void **state)
{
	(void)state;
	assert_int_equal(shmring_bytes(0, 64), 0);
	assert_int_equal(shmring_bytes(2, 64), 0);
	assert_int_equal(shmring_bytes(3, 64), 0);
	assert_int_equal(shmring_bytes(4, 0), 0);
	assert_int_equal(shmring_bytes(4, 12), 0);
	assert_int_equal(shmring_bytes(4, 8), 0);
	assert_int_equal(shmring_bytes(1u << 25, 64), 0);
	assert_true(shmring_bytes(4, 64) >= sizeof(struct shmring_header) + 4 * 72);
	/* A record takes at most a quarter of the slots. */
	assert_int_equal(shmring_max_payload(16, 64), 4 * 64 - 8);
	assert_int_equal(shmring_max_payload(3, 64), 0);
	/* Too small, misaligned: refused. */
	static _Alignas(64) unsigned char buf[4096];

	assert_int_equal(shmring_init(buf, 100, 4, 64), -EINVAL);
	assert_int_equal(shmring_init(buf + 8, sizeof(buf) - 8, 4, 64), -EINVAL);
	assert_false(shmring_valid(buf, sizeof(buf)));
	assert_int_equal(shmring_init(buf, sizeof(buf), 4, 64), 0);
	assert_true(shmring_valid(buf, sizeof(buf)));
	assert_false(shmring_valid(buf, 100));
}

static void order_and_fullness(void **state)
{
	size_t bytes;
	void *mem = ring_memory(8, &bytes);
	struct shmring_reader r;
	const struct record *got;

	(void)state;
	shmring_reader_init(&r, mem, 8, SLOT);
	assert_null(peek(&r, 1));
	for (uint64_t i = 0; i < 8; i++)
		assert_true(send(mem, 1, i));
	assert_false(send(mem, 1, 8)); /* full */
	assert_int_equal(shmring_overflow(&r), 1);
	for (uint64_t i = 0; i < 3; i++) {
		got = peek(&r, 1);
		assert_non_null(got);
		assert_int_equal(got->seq, i);
		shmring_release(&r);
	}
	for (uint64_t i = 8; i < 11; i++) /* room again, a lap on */
		assert_true(send(mem, 1, i));
	for (uint64_t i = 3; i < 11; i++) {
		got = peek(&r, 1);
		assert_non_null(got);
		assert_int_equal(got->seq, i);
		assert_true(got->check == check_of(1, i));
		shmring_release(&r);
	}
	assert_null(peek(&r, 1));
	assert_int_equal(shmring_read(&r), 11);
	munmap(mem, bytes);
}

/* Records of several slots: contiguous, never across the end (padded there instead), refused
 * beyond a quarter of the ring, and the ring full when the slots are, not the records. */
static void many_slot_records(void **state)
{
	size_t bytes;
	void *mem = ring_memory(16, &bytes);
	struct shmring_reader r;
	const struct record *got;
	uint64_t pos;

	(void)state;
	shmring_reader_init(&r, mem, 16, SLOT);
	assert_null(shmring_reserve(mem, 4 * SLOT, &pos)); /* more than a quarter: refused */
	assert_int_equal(shmring_overflow(&r), 1);
	/* 3 slots each (8 + 32 + 120 bytes): five of them take 15 slots, a sixth does not fit. */
	for (uint64_t i = 0; i < 5; i++)
		assert_true(send_fill(mem, 1, i, 120));
	assert_false(send_fill(mem, 1, 5, 120));
	for (uint64_t i = 0; i < 2; i++) {
		got = peek(&r, 1);
		assert_true(got && got->seq == i && got->len == 120);
		shmring_release(&r);
	}
	/* Six slots free at the start, one at the end: a 3-slot record is padded there. */
	assert_true(send_fill(mem, 1, 5, 120));
	assert_int_equal(shmring_reserved(&r), 19);
	for (uint64_t i = 2; i < 6; i++) {
		got = peek(&r, 1);
		assert_non_null(got);
		assert_int_equal(got->seq, i);
		assert_int_equal(got->len, 120);
		for (uint64_t b = 0; b < got->len; b++)
			assert_int_equal(got->fill[b], i & 0xff);
		assert_true((const unsigned char *)got + sizeof(*got) + got->len <=
			    (const unsigned char *)mem + bytes);
		shmring_release(&r);
	}
	assert_null(peek(&r, 1));
	assert_int_equal(r.skipped, 0);
	munmap(mem, bytes);
}

struct race {
	void *mem;
	uint64_t producer;
	uint64_t refused;          /* tries the full ring refused (each counted as overflow) */
};

/* Each record until it goes in: the ring refuses while full, and counts each refusal. */
static void *producer(void *arg)
{
	struct race *p = arg;

	for (uint64_t i = 0; i < PER_PRODUCER; i++) {
		while (!send_fill(p->mem, p->producer, i, fill_of(i))) {
			p->refused++;
			sched_yield();
		}
		if (i % 1024 == 0)
			sched_yield();
	}
	return NULL;
}

/* Consume every producer's records: each intact, each producer's in its order, none twice. */
static uint64_t consume(void *mem, uint32_t nslots, uint64_t expected_total)
{
	struct shmring_reader r;
	uint64_t next[PRODUCERS + 1] = { 0 }, received = 0;

	shmring_reader_init(&r, mem, nslots, SLOT);
	while (received < expected_total) {
		const struct record *got = peek(&r, 1);

		if (!got) {
			sched_yield();
			continue;
		}
		assert_true(got->producer >= 1 && got->producer <= PRODUCERS);
		assert_true(got->check == check_of(got->producer, got->seq));
		assert_int_equal(got->len, fill_of(got->seq));
		for (size_t i = 0; i < got->len; i++)
			assert_int_equal(got->fill[i], got->seq & 0xff);
		assert_int_equal(got->seq, next[got->producer]);
		next[got->producer] = got->seq + 1;
		received++;
		shmring_release(&r);
	}
	assert_int_equal(r.skipped, 0);
	return received;
}

static void threads_race(void **state)
{
	size_t bytes;
	void *mem = ring_memory(256, &bytes);
	pthread_t t[PRODUCERS];
	struct race p[PRODUCERS];
	uint64_t refused = 0;

	(void)state;
	for (int i = 0; i < PRODUCERS; i++) {
		p[i] = (struct race){ mem, (uint64_t)i + 1, 0 };
		assert_int_equal(pthread_create(&t[i], NULL, producer, &p[i]), 0);
	}
	consume(mem, 256, (uint64_t)PRODUCERS * PER_PRODUCER);
	for (int i = 0; i < PRODUCERS; i++) {
		pthread_join(t[i], NULL);
		refused += p[i].refused;
	}
	assert_int_equal(shmring_overflow(&(struct shmring_reader){ .h = mem }), refused);
	munmap(mem, bytes);
}

/* Forked producers write into the same shared mapping, as the preloaded library's children do. */
static void processes_race(void **state)
{
	size_t bytes;
	void *mem = ring_memory(256, &bytes);
	pid_t pids[2];
	int status;
	(void)state;
	for (int i = 0; i < 2; i++) {
		pids[i] = fork();
		assert_true(pids[i] >= 0);
		if (pids[i] == 0) {
			struct race p = { mem, (uint64_t)i + 1, 0 };

			producer(&p);
			_exit(0);
		}
	}
	consume(mem, 256, 2ull * PER_PRODUCER);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	munmap(mem, bytes);
}

/* A producer that reserved a record and died: after SHMRING_STALL_NS the consumer goes past
 * all its slots at once; the dead producer's late publish (were it only stopped) does not take
 * them back. */
static void stalled_record(void **state)
{
	size_t bytes;
	void *mem = ring_memory(16, &bytes);
	struct shmring_reader r;
	const struct record *got;
	uint64_t dead;

	(void)state;
	shmring_reader_init(&r, mem, 16, SLOT);
	assert_non_null(shmring_reserve(mem, 150, &dead)); /* 3 slots */
	assert_true(send(mem, 2, 7));
	assert_null(peek(&r, 1000));
	assert_null(peek(&r, 1000 + SHMRING_STALL_NS - 1));
	got = peek(&r, 1000 + SHMRING_STALL_NS);
	assert_non_null(got);
	assert_int_equal(got->seq, 7);
	assert_int_equal(r.skipped, 3);
	shmring_release(&r);
	shmring_publish(mem, dead); /* too late: the slots are the ring's again */
	assert_null(peek(&r, 2 * SHMRING_STALL_NS));
	for (uint64_t i = 0; i < 12; i++) /* a whole lap on the slots given back */
		assert_true(send(mem, 3, i));
	for (uint64_t i = 0; i < 12; i++) {
		got = peek(&r, 3 * SHMRING_STALL_NS);
		assert_non_null(got);
		assert_true(got->producer == 3 && got->seq == i);
		shmring_release(&r);
	}
	munmap(mem, bytes);
}

/* A producer that died between reserving its slots and writing its record's start: after
 * SHMRING_STALL_NS the consumer goes past every slot up to the next record at once. */
static void stalled_before_start(void **state)
{
	size_t bytes;
	void *mem = ring_memory(16, &bytes);
	struct shmring_reader r;
	const struct record *got;
	uint64_t dead;
	unsigned char *payload;

	(void)state;
	shmring_reader_init(&r, mem, 16, SLOT);
	payload = shmring_reserve(mem, 150, &dead); /* 3 slots */
	assert_non_null(payload);
	memset(payload - sizeof(struct shmring_record), 0xee, sizeof(struct shmring_record));
	assert_true(send(mem, 2, 9));
	assert_null(peek(&r, 1000));
	got = peek(&r, 1000 + SHMRING_STALL_NS);
	assert_non_null(got);
	assert_int_equal(got->seq, 9);
	assert_int_equal(r.skipped, 3);
	shmring_release(&r);
	munmap(mem, bytes);
}

/* The target owns the memory: garbage in the header, the sequences and the records' starts
 * never takes the consumer outside the ring, nor hangs it. */
static void garbage_memory(void **state)
{
	size_t bytes;
	void *mem = ring_memory(16, &bytes);
	struct shmring_reader r;
	unsigned seed = 7;

	(void)state;
	shmring_reader_init(&r, mem, 16, SLOT);
	for (int round = 0; round < 400; round++) {
		unsigned char *b = mem;

		for (size_t i = 0; i < bytes; i++)
			b[i] = (unsigned char)rand_r(&seed);
		/* Half the rounds: sequences that say ready, records that say few slots. */
		for (uint32_t i = 0; round % 2 && i < 16; i++) {
			struct shmring_record start = { rand_r(&seed) % 3 ? SHMRING_TAG_RECORD
									  : SHMRING_TAG_PAD,
							(uint32_t)(rand_r(&seed) % 6) };

			((uint64_t *)(b + 64 * 3))[i] = r.tail + i + 1;
			memcpy(b + 64 * 3 + 16 * 8 + i * SLOT, &start, sizeof(start));
		}
		for (int i = 0; i < 64; i++) {
			size_t len;
			const unsigned char *got =
				shmring_peek(&r, (uint64_t)round * SHMRING_STALL_NS + (uint64_t)i, &len);

			if (got) {
				assert_true(got >= b && got + len <= b + bytes);
				shmring_release(&r);
			}
		}
	}
	munmap(mem, bytes);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(geometry),
		cmocka_unit_test(order_and_fullness),
		cmocka_unit_test(many_slot_records),
		cmocka_unit_test(threads_race),
		cmocka_unit_test(processes_race),
		cmocka_unit_test(stalled_record),
		cmocka_unit_test(stalled_before_start),
		cmocka_unit_test(garbage_memory),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
