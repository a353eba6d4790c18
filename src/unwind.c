/* unwind.c — the call-stack facade: leaf only, the kernel's frame-pointer callchain, or DWARF
 * unwinding of the copied user stack (unwind_dwarf.c). */
#include "proftop/unwind.h"

#include "proftop/unwind_dwarf.h"
#include "proftop/util.h"

#include <stdlib.h>
#include <string.h>

struct unwinder {
	enum callgraph_mode mode;
	struct unwind_dwarf *dwarf;
};

struct unwinder *unwinder_new(enum callgraph_mode mode, struct symbolizer *symbolizer,
			      struct diag *diag)
{
	struct unwinder *u = xcalloc(1, sizeof(*u));

	u->mode = mode;
	if (mode == CALLGRAPH_DWARF)
		u->dwarf = unwind_dwarf_new(symbolizer, diag);
	return u;
}

void unwinder_free(struct unwinder *u)
{
	if (!u)
		return;
	unwind_dwarf_free(u->dwarf);
	free(u);
}

void unwinder_set_rules(struct unwinder *u, bool rules)
{
	if (u->dwarf)
		unwind_dwarf_set_fast(u->dwarf, rules);
}

void unwinder_forget(struct unwinder *u, pid_t pid)
{
	if (u->dwarf)
		unwind_dwarf_forget(u->dwarf, pid);
}

/* The kernel's callchain interleaves context markers (PERF_CONTEXT_USER, ...) with addresses.
 * A chain that ends on a non-zero frame pointer walk stopped early; we cannot tell that from
 * the chain, so fp mode never reports truncation. */
static size_t unwind_callchain(const struct sample_record *r, uint64_t *ips, size_t max,
			       bool *truncated)
{
	size_t n = 0;

	for (uint64_t i = 0; i < r->sample.callchain_nr; i++) {
		uint64_t ip;

		memcpy(&ip, &r->sample.callchain[i], sizeof(ip));
		if (ip >= PERF_CONTEXT_MAX)
			continue;
		if (n == max) {
			*truncated = true;
			break;
		}
		ips[n++] = ip;
	}
	if (n == 0)
		ips[n++] = r->sample.ip;
	return n;
}

size_t unwinder_unwind(struct unwinder *u, const struct sample_record *r, uint64_t *ips, size_t max,
		       bool *truncated)
{
	size_t n = 0;

	*truncated = false;
	if (max == 0)
		return 0;
	switch (u->mode) {
	case CALLGRAPH_FP:
		return unwind_callchain(r, ips, max, truncated);
	case CALLGRAPH_DWARF:
		/* A sample taken in the kernel starts with the kernel's part of its stack (the
		 * kernel's callchain, with --kernel), or its address, then the user stack. */
		if (!r->sample.user && r->sample.callchain_nr)
			n = unwind_callchain(r, ips, max, truncated);
		else if (!r->sample.user)
			ips[n++] = r->sample.ip;
		n += unwind_dwarf(u->dwarf, r, ips + n, max - n, truncated);
		if (n == 0)
			ips[n++] = r->sample.ip;
		return n;
	default:
		ips[0] = r->sample.ip;
		return 1;
	}
}
