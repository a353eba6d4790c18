/* unwind.c — the call-stack facade: leaf only, the kernel's frame-pointer callchain, or DWARF
 * unwinding of the copied user stack (unwind_dwarf.c).
 *
 * A stack ends at a frame above which nothing can be trusted (module.h's MODULE_FRAME_TOP: Go's
 * goexit, mstart, morestack, ...): what the kernel's walk found above it is not a caller. Go
 * keeps frame pointers across its other stack switches (systemstack), so the kernel's walk of
 * the live process follows those (the DWARF unwinder, which has one stack's copy, cannot). */
#include "proftop/unwind.h"

#include "proftop/module.h"
#include "proftop/symbols.h"
#include "proftop/unwind_dwarf.h"
#include "proftop/util.h"

#include <stdlib.h>
#include <string.h>

struct unwinder {
	enum callgraph_mode mode;
	struct symbolizer *symbolizer;	/* NULL: stacks are not cut at a MODULE_FRAME_TOP */
	struct unwind_dwarf *dwarf;
};

struct unwinder *unwinder_new(enum callgraph_mode mode, struct symbolizer *symbolizer,
			      struct diag *diag)
{
	struct unwinder *u = xcalloc(1, sizeof(*u));

	u->mode = mode;
	u->symbolizer = symbolizer;
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

/* Whether the user frame at ip of pid (a return address unless exact) is the last one to
 * trust. */
static bool starts_stack(struct unwinder *u, pid_t pid, uint64_t ip, bool exact)
{
	uint64_t lookup = exact ? ip : ip - 1;
	struct unwind_info info;

	if (!u->symbolizer || symbolizer_unwind_info(u->symbolizer, pid, lookup, &info) < 0)
		return false;
	return module_frame_kind(info.module, lookup - info.bias) == MODULE_FRAME_TOP;
}

/* The kernel's callchain interleaves context markers (PERF_CONTEXT_USER, ...) with addresses.
 * A chain that ends on a non-zero frame pointer walk stopped early; we cannot tell that from
 * the chain, so fp mode never reports truncation. */
static size_t unwind_callchain(struct unwinder *u, const struct sample_record *r, uint64_t *ips,
			       size_t max, bool *truncated)
{
	size_t n = 0, user_from = SIZE_MAX;

	for (uint64_t i = 0; i < r->sample.callchain_nr; i++) {
		uint64_t ip;

		memcpy(&ip, &r->sample.callchain[i], sizeof(ip));
		if (ip >= PERF_CONTEXT_MAX) {
			user_from = ip == PERF_CONTEXT_USER ? n : SIZE_MAX;
			continue;
		}
		if (n == max) {
			*truncated = true;
			break;
		}
		ips[n++] = ip;
		if (n > user_from && starts_stack(u, (pid_t)r->pid, ip, n - 1 == user_from))
			break;
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
		return unwind_callchain(u, r, ips, max, truncated);
	case CALLGRAPH_DWARF:
		/* A sample taken in the kernel starts with the kernel's part of its stack (the
		 * kernel's callchain, with --kernel), or its address, then the user stack. */
		if (!r->sample.user && r->sample.callchain_nr)
			n = unwind_callchain(u, r, ips, max, truncated);
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
