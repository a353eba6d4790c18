/* unwind_dwarf.h — DWARF unwinding of a sample's copied user stack with libunwind's remote API.
 * Used through unwind.h; declared apart because only unwind.c calls it. unwind_dwarf.c also
 * defines sigprocmask() for the whole program, to keep libunwind's locks from making two system
 * calls per frame (its header says why that is safe). */
#ifndef PROFTOP_UNWIND_DWARF_H
#define PROFTOP_UNWIND_DWARF_H

#include "proftop/sample.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct diag;
struct symbolizer;
struct unwind_dwarf;

struct unwind_dwarf *unwind_dwarf_new(struct symbolizer *symbolizer, struct diag *diag);
void unwind_dwarf_free(struct unwind_dwarf *unwinder);
/* ips leaf first; returns the frame count (0 when the sample has no user registers). */
size_t unwind_dwarf(struct unwind_dwarf *unwinder, const struct sample_record *sample,
		    uint64_t *ips, size_t max, bool *truncated);
/* Whether frames are stepped by cached CFI rows where they can be (the default) or by libunwind
 * alone; both give the same stacks (the tests compare them). */
void unwind_dwarf_set_fast(struct unwind_dwarf *unwinder, bool fast);

struct unwind_dwarf_stats {
	uint64_t fast_samples;      /* unwound by rows alone */
	uint64_t libunwind_samples; /* handed to libunwind (a row it alone follows, no FDE, fast off) */
	uint64_t rule_lookups, rule_misses;
};
void unwind_dwarf_stats(const struct unwind_dwarf *unwinder, struct unwind_dwarf_stats *out);
/* pid's address space changed wholesale (exec) or is gone (exit): forget what was cached. */
void unwind_dwarf_forget(struct unwind_dwarf *unwinder, pid_t pid);

#endif
