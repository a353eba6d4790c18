/* unwind_dwarf.h — DWARF unwinding of a sample's copied user stack with libunwind's remote API.
 * Used through unwind.h; declared apart because only unwind.c calls it. */
#ifndef PROFTOP_UNWIND_DWARF_H
#define PROFTOP_UNWIND_DWARF_H

#include "proftop/sample.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct symbolizer;
struct dwarf_unwinder;

struct dwarf_unwinder *dwarf_unwinder_new(struct symbolizer *symbolizer);
void dwarf_unwinder_free(struct dwarf_unwinder *unwinder);
/* ips leaf first; returns the frame count (0 when the sample has no user registers). */
size_t dwarf_unwind(struct dwarf_unwinder *unwinder, const struct sample_record *sample,
		    uint64_t *ips, size_t max, bool *truncated);
/* pid's address space changed wholesale (exec) or is gone (exit): forget what was cached. */
void dwarf_unwinder_forget(struct dwarf_unwinder *unwinder, pid_t pid);

#endif
