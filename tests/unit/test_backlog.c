/* test_backlog.c — the sampler's backlog: records come out in order with their lengths and bytes,
 * across chunks; the limit refuses bounded records only; chunks are given back as they empty (the
 * process's address space, VmSize of /proc/self/status, shrinks back). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "proftop/backlog.h"

/* The bytes of record seq, of length len. */
static void fill(unsigned char *p, size_t len, unsigned seq)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (unsigned char)(seq * 31 + i);
}

static size_t len_of(unsigned seq)
{
	return 1 + (seq * 7919u) % 40000u; /* 1 byte to about 39 KiB, unaligned */
}

/* The process's address space in KiB. */
static long vm_size_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmSize: %ld kB", &kb) == 1)
			break;
	fclose(f);
	assert_true(kb > 0);
	return kb;
}

static void push_seq(struct backlog *b, unsigned seq)
{
	unsigned char *p = backlog_reserve(b, len_of(seq), true);

	assert_non_null(p);
	assert_int_equal((uintptr_t)p % 8, 0);
	fill(p, len_of(seq), seq);
}

static void pop_seq(struct backlog *b, unsigned seq)
{
	unsigned char want[40000];
	size_t len = 0;
	const unsigned char *p = backlog_peek(b, &len);

	assert_non_null(p);
	assert_int_equal(len, len_of(seq));
	fill(want, len, seq);
	assert_memory_equal(p, want, len);
	backlog_pop(b);
}

static void test_empty(void **state)
{
	struct backlog b;
	size_t len;

	(void)state;
	backlog_init(&b, 1 << 20);
	assert_true(backlog_empty(&b));
	assert_null(backlog_peek(&b, &len));
	backlog_pop(&b); /* nothing: no crash */
	backlog_free(&b);
}

/* Far more than a chunk, interleaved: every record as it went in. */
static void test_fifo_across_chunks(void **state)
{
	struct backlog b;
	unsigned in = 0, out = 0;

	(void)state;
	backlog_init(&b, 64u << 20);
	for (int round = 0; round < 50; round++) {
		for (int i = 0; i < 300; i++)
			push_seq(&b, in++);
		for (int i = 0; i < 280; i++)
			pop_seq(&b, out++);
	}
	while (out < in)
		pop_seq(&b, out++);
	assert_true(backlog_empty(&b));
	assert_int_equal(b.bytes, 0);
	backlog_free(&b);
}

/* Bounded records stop at the limit; unbounded ones still go in, after them. */
static void test_limit(void **state)
{
	struct backlog b;
	unsigned seq = 0;
	size_t len;
	unsigned char *p;

	(void)state;
	backlog_init(&b, 100000);
	while (backlog_reserve(&b, 1000, true))
		seq++;
	assert_in_range(seq, 90, 99);
	assert_true(b.bytes <= 100000);
	p = backlog_reserve(&b, 5, false);
	assert_non_null(p);
	memcpy(p, "hello", 5);
	for (unsigned i = 0; i < seq; i++) {
		assert_non_null(backlog_peek(&b, &len));
		assert_int_equal(len, 1000);
		backlog_pop(&b);
	}
	p = (unsigned char *)backlog_peek(&b, &len);
	assert_int_equal(len, 5);
	assert_memory_equal(p, "hello", 5);
	backlog_pop(&b);
	assert_true(backlog_empty(&b));
	assert_null(backlog_reserve(&b, BACKLOG_CHUNK, false)); /* larger than a record can be */
	backlog_free(&b);
}

/* 40 MiB queued then read: the chunks are unmapped as they empty, one kept. */
static void test_memory_given_back(void **state)
{
	struct backlog b;
	long before = vm_size_kb();
	unsigned in = 0, out = 0;

	(void)state;
	backlog_init(&b, 64u << 20);
	while (b.bytes < (40u << 20))
		push_seq(&b, in++);
	assert_true(vm_size_kb() >= before + 40 * 1024);
	while (out < in)
		pop_seq(&b, out++);
	/* the tail and the spare, at most */
	assert_true(vm_size_kb() <= before + 2 * BACKLOG_CHUNK / 1024);
	backlog_free(&b);
	assert_true(vm_size_kb() <= before);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_fifo_across_chunks),
		cmocka_unit_test(test_limit),
		cmocka_unit_test(test_memory_given_back),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
