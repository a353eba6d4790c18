/* test_frame_slots.c — the frame sources' per-key slots: made once per key and zeroed, found
 * again, freed by take and then reused by the next key that had that slot; many keys grow the
 * table; and the memory reader reads this process and refuses an unmapped address. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "proftop/frame_slots.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

struct thing {
	uint64_t key;
	int value;
};

static void slots(void **state)
{
	struct frame_slots t;
	struct thing *a, *b;
	bool made;

	(void)state;
	frame_slots_init(&t, sizeof(struct thing));
	a = frame_slots_get(&t, 42, &made);
	assert_true(made);
	assert_int_equal(a->key, 42);
	assert_int_equal(a->value, 0);
	a->value = 7;
	a = frame_slots_get(&t, 42, &made);
	assert_false(made);
	assert_int_equal(a->value, 7);
	/* Taken: free, and made afresh (zeroed) when the key comes back. */
	assert_ptr_equal(frame_slots_take(&t, 42), a);
	assert_int_equal(a->key, 0);
	assert_null(frame_slots_take(&t, 42));
	assert_null(frame_slots_take(&t, 43));
	b = frame_slots_get(&t, 42, &made);
	assert_true(made);
	assert_int_equal(b->value, 0);
	assert_int_equal(t.n, 1);
	/* Many keys: each its own slot, found again. */
	for (uint64_t k = 1; k <= 1000; k++) {
		struct thing *s = frame_slots_get(&t, 1000 + k, &made);

		assert_true(made);
		s->value = (int)k;
	}
	for (uint64_t k = 1; k <= 1000; k++) {
		struct thing *s = frame_slots_get(&t, 1000 + k, &made);

		assert_false(made);
		assert_int_equal(s->value, (int)k);
	}
	assert_int_equal(t.n, 1001);
	frame_slots_free(&t);
}

static void read_memory(void **state)
{
	static const char here[] = "read me";
	char buf[sizeof(here)];
	void *self = (void *)(intptr_t)getpid();

	(void)state;
	assert_int_equal(frame_slots_read_memory(self, (uint64_t)(uintptr_t)here, buf, sizeof(buf)), 0);
	assert_string_equal(buf, here);
	assert_true(frame_slots_read_memory(self, 8, buf, sizeof(buf)) < 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(slots),
		cmocka_unit_test(read_memory),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
