/* libFuzzer target: the PERF_RECORD_* parser on arbitrary bytes, with every sample layout proftop
 * configures. The first byte picks the layout. The field offsets sample_layout() gives the
 * sampler must lie inside a record whose header it accepted. */
#include "proftop/sample.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void check_layout(const uint8_t *data, size_t size, uint64_t type)
{
	struct perf_event_header h;
	struct sample_layout at;

	if (size < sizeof(h))
		return;
	memcpy(&h, data, sizeof(h));
	if (h.size < sizeof(h) || sample_layout(type, &h, &at))
		return;
	if ((at.id >= 0 && (size_t)at.id + 8 > h.size) ||
	    (at.pid_tid >= 0 && (size_t)at.pid_tid + 8 > h.size) ||
	    (at.time >= 0 && (size_t)at.time + 8 > h.size) ||
	    (at.id >= 0 && at.id < (int)sizeof(h)))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum callgraph_mode modes[] = { CALLGRAPH_NONE, CALLGRAPH_FP, CALLGRAPH_DWARF };
	struct sample_config config = { 999, false, CALLGRAPH_NONE, 8192 };
	struct sample_record r;

	if (size < 1)
		return 0;
	config.callgraph = modes[data[0] % 3];
	check_layout(data + 1, size - 1, sample_type_for(&config));
	if (sample_parse(data + 1, size - 1, sample_type_for(&config), sample_regs_mask(), &r) == 0 &&
	    r.kind == SAMPLE_KIND_MMAP) {
		volatile char sink = r.mmap.path[0]; /* the path must be readable */
		(void)sink;
	}
	return 0;
}
