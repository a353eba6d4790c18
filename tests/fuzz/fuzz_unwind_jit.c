/* libFuzzer target: JIT code's epilogues read from arbitrary bytes (unwind_jit.h), as the unwinder
 * reads them from a process's memory at a return address. Beyond not crashing or reading past
 * the bytes: an answer stays within the words the reader allows, and the word rbp is restored
 * from lies below the return address's.
 *
 * Seeds in corpus/fuzz_unwind_jit: CPython's perf trampoline after its call, an epilogue with
 * pops, one with leave (no answer). */
#include "proftop/unwind_jit.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct unwind_jit_exit x;

	if (unwind_jit_epilogue(data, size, &x) &&
	    (x.words > 64 || (x.rbp_word >= 0 && (unsigned)x.rbp_word >= x.words)))
		abort();
	return 0;
}
