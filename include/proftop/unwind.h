/* unwind.h — one facade over the ways a sample becomes a call stack: the sampled instruction only,
 * the kernel's frame-pointer callchain, or DWARF unwinding of the copied user stack. */
#ifndef PROFTOP_UNWIND_H
#define PROFTOP_UNWIND_H

#include "proftop/sample.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define UNWIND_MAX_FRAMES 256

struct diag;
struct symbolizer;
struct unwinder;

/* What goes wrong is reported to diag (NULL: nowhere). */
struct unwinder *unwinder_new(enum callgraph_mode mode, struct symbolizer *symbolizer,
			      struct diag *diag);
void unwinder_free(struct unwinder *unwinder);
/* DWARF mode: step frames by cached CFI rows where they can be (true, the default), or by libunwind
 * alone (for comparisons: both give the same stacks). */
void unwinder_set_rules(struct unwinder *unwinder, bool rules);
/* pid exec'd or exited: drop what was cached about its address space. */
void unwinder_forget(struct unwinder *unwinder, pid_t pid);

/* Fill ips (leaf first) with the call stack of a SAMPLE record; returns the number of frames.
 * Frames after the first are return addresses. *truncated is set when the stack visibly stops
 * before its start (no unwind information, the stack copy ended, a corrupt frame). */
size_t unwinder_unwind(struct unwinder *unwinder, const struct sample_record *sample, uint64_t *ips,
		       size_t max, bool *truncated);

#endif
