/* The blocks in use (heap.c): random adds and removes against a plain array of what should be
 * there, through growth and the backward shifts of deletion, with colliding addresses across
 * processes; then one process's blocks all taken out. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "proftop/heap.h"

#include <stdlib.h>
#include <string.h>

#define SPACE 4096 /* (pid, addr) pairs drawn from: many adds replace, many removes miss */

struct expected {
	bool live;
	uint64_t bytes;
};

static void random_against_reference(void **state)
{
	static struct expected want[SPACE];
	struct heap h;
	uint64_t x = 88172645463325252ull, sum = 0;
	size_t live = 0;

	(void)state;
	heap_init(&h);
	for (int step = 0; step < 400000; step++) {
		size_t k;
		pid_t pid;
		uint64_t addr;
		uint32_t funcs[3] = { 1, 2, (uint32_t)step };

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		k = (size_t)(x % SPACE);
		pid = (pid_t)(1 + k % 3);
		addr = 0x1000 + (k / 3) * 16;
		if (x >> 60 < 9) { /* a little more adds than removes: the table grows, then churns */
			if (want[k].live)
				sum -= want[k].bytes;
			else
				live++;
			want[k] = (struct expected){ true, (x >> 20) % 100000 + 1 };
			sum += want[k].bytes;
			heap_add(&h, pid, pid, addr, want[k].bytes, 1, funcs, 3);
		} else {
			assert_int_equal(heap_remove(&h, pid, addr), want[k].live);
			if (want[k].live) {
				sum -= want[k].bytes;
				live--;
			}
			want[k].live = false;
		}
		assert_int_equal(h.count, live);
		assert_int_equal(h.bytes, sum);
	}
	/* One process's image ends (an exec): its blocks go, the others' stay. */
	{
		size_t of_two = 0;

		for (size_t k = 0; k < SPACE; k++)
			if (want[k].live && k % 3 == 1) {
				of_two++;
				sum -= want[k].bytes;
				live--;
				want[k].live = false;
			}
		assert_true(of_two > 0);
		assert_int_equal(heap_remove_pid(&h, 2), of_two);
		assert_int_equal(heap_remove_pid(&h, 2), 0);
		assert_int_equal(h.count, live);
		assert_int_equal(h.bytes, sum);
	}
	/* Every block there is one that should be, with its bytes and its stack. */
	for (size_t i = 0; i < h.capacity; i++) {
		const struct heap_block *b = &h.slots[i];
		size_t k;

		if (!heap_used(b))
			continue;
		k = (size_t)((b->addr - 0x1000) / 16 * 3 + (uint64_t)(b->pid - 1));
		assert_true(k < SPACE && want[k].live);
		assert_int_equal(b->bytes, want[k].bytes);
		assert_int_equal(b->depth, 3);
		assert_int_equal(b->funcs[0], 1);
	}
	heap_free(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(random_against_reference),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
