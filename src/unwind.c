/* unwind.c — the call-stack facade: leaf only, or the kernel's frame-pointer callchain. */
#include "proftop/unwind.h"

#include "proftop/util.h"

#include <stdlib.h>
#include <string.h>

struct unwinder {
	enum callgraph_mode mode;
	struct symbolizer *symbolizer;
};

struct unwinder *unwinder_new(enum callgraph_mode mode, struct symbolizer *symbolizer)
{
	struct unwinder *u = xcalloc(1, sizeof(*u));

	u->mode = mode;
	u->symbolizer = symbolizer;
	return u;
}

void unwinder_free(struct unwinder *u)
{
	free(u);
}

/* The kernel's callchain interleaves context markers (PERF_CONTEXT_USER, ...) with addresses. */
static size_t unwind_callchain(const struct sample_record *r, uint64_t *ips, size_t max,
			       bool *truncated)
{
	size_t n = 0;
	bool user = false;

	for (uint64_t i = 0; i < r->sample.callchain_nr; i++) {
		uint64_t ip;

		memcpy(&ip, &r->sample.callchain[i], sizeof(ip));
		if (ip >= PERF_CONTEXT_MAX) {
			user = ip == PERF_CONTEXT_USER;
			continue;
		}
		if (n == max) {
			*truncated = true;
			break;
		}
		if (user || r->sample.user || n == 0)
			ips[n++] = ip;
	}
	if (n == 0)
		ips[n++] = r->sample.ip;
	return n;
}

size_t unwinder_unwind(struct unwinder *u, const struct sample_record *r, uint64_t *ips, size_t max,
		       bool *truncated)
{
	*truncated = false;
	if (max == 0)
		return 0;
	if (u->mode == CALLGRAPH_FP)
		return unwind_callchain(r, ips, max, truncated);
	ips[0] = r->sample.ip;
	return 1;
}
