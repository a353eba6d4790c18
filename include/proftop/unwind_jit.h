/* unwind_jit.h — how JIT code without unwind tables or a frame pointer returns, read from its
 * code: the epilogue from a return address to its `ret`.
 *
 * CPython's perf trampolines (3.12's and 3.13's -X perf: `sub $8,%rsp; call *%rcx; add
 * $8,%rsp; ret`) keep no frame pointer, so neither the CFI rule nor rbp finds their caller; the
 * instructions after the call say exactly where the return address is. Only straight-line code
 * of a few forms is followed (add to rsp, pop, nop, ret); anything else (a branch, leave, an
 * rsp from elsewhere) is no answer, and the unwinder falls back to the frame pointer. */
#ifndef PROFTOP_UNWIND_JIT_H
#define PROFTOP_UNWIND_JIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The code from a return address to its ret: the return address is `words` stack words above
 * the stack pointer there; rbp is restored from word rbp_word (-1: rbp is left alone). */
struct unwind_jit_exit {
	unsigned words;
	int rbp_word;
	bool pops_others;          /* registers other than rbp are restored too */
};

/* The exit of code[0..len), read from a return address. Returns whether it is one of the forms
 * followed (within len bytes and 64 words). */
bool unwind_jit_epilogue(const uint8_t *code, size_t len, struct unwind_jit_exit *out);

#endif
