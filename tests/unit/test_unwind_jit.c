/* test_unwind_jit.c — JIT epilogues read from their bytes: CPython's perf trampoline (3.12 and
 * 3.13 -X perf, bytes as read from a running python3.13: the part after its call), pops with
 * rbp among them, nops, ret with an immediate; and what is refused: leave, a branch, a negative
 * add to rsp, code cut before its ret. */
#include "proftop/unwind_jit.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

static bool exit_of(const uint8_t *code, size_t len, struct unwind_jit_exit *x)
{
	return unwind_jit_epilogue(code, len, x);
}

static void test_trampoline(void **state)
{
	/* 48 83 ec 08 ff d1 | 48 83 c4 08 c3: from the return address after `call *%rcx` */
	static const uint8_t after_call[] = { 0x48, 0x83, 0xc4, 0x08, 0xc3, 0x48, 0x83 };
	struct unwind_jit_exit x;

	(void)state;
	assert_true(exit_of(after_call, sizeof(after_call), &x));
	assert_int_equal(x.words, 1);
	assert_int_equal(x.rbp_word, -1);
	assert_false(x.pops_others);
}

static void test_pops(void **state)
{
	/* pop %rbx; nop; pop %rbp; 66 90; pop %r12; ret $16 */
	static const uint8_t code[] = { 0x5b, 0x90, 0x5d, 0x66, 0x90, 0x41, 0x5c, 0xc2, 0x10, 0x00 };
	struct unwind_jit_exit x;

	(void)state;
	assert_true(exit_of(code, sizeof(code), &x));
	assert_int_equal(x.words, 3);
	assert_int_equal(x.rbp_word, 1);
	assert_true(x.pops_others);
}

static void test_refused(void **state)
{
	static const uint8_t leave[] = { 0xc9, 0xc3 };
	static const uint8_t branch[] = { 0x75, 0x02, 0xc3 };
	static const uint8_t grows[] = { 0x48, 0x83, 0xc4, 0xf8, 0xc3 };
	static const uint8_t cut[] = { 0x48, 0x83, 0xc4, 0x08 };
	struct unwind_jit_exit x;

	(void)state;
	assert_false(exit_of(leave, sizeof(leave), &x));
	assert_false(exit_of(branch, sizeof(branch), &x));
	assert_false(exit_of(grows, sizeof(grows), &x));
	assert_false(exit_of(cut, sizeof(cut), &x));
	assert_false(exit_of(cut, 0, &x));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trampoline),
		cmocka_unit_test(test_pops),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
