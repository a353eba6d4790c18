/* libFuzzer target: the PERF_RECORD_* parser on arbitrary bytes, with every sample layout proftop
 * configures. The first byte picks the layout. */
#include "proftop/sample.h"

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum callgraph_mode modes[] = { CALLGRAPH_NONE, CALLGRAPH_FP, CALLGRAPH_DWARF };
	struct sample_config config = { 999, false, CALLGRAPH_NONE, 8192 };
	struct sample_record r;

	if (size < 1)
		return 0;
	config.callgraph = modes[data[0] % 3];
	if (sample_parse(data + 1, size - 1, sample_type_for(&config), sample_regs_mask(), &r) == 0 &&
	    r.kind == SAMPLE_KIND_MMAP) {
		volatile char sink = r.mmap.path[0]; /* the path must be readable */
		(void)sink;
	}
	return 0;
}
