/* libFuzzer target: a jitdump file (jitdump.h) as proftop reads it: its header, then record after
 * record, each from the bytes left. Beyond not crashing or reading past the input: a record that
 * parses takes at least its header's bytes, a code load's name ends at a NUL inside the record
 * and the bytes given, and the walk ends (every step moves on).
 *
 * Seeds in corpus/fuzz_jitdump: the start of a dump CPython 3.13's -X perf_jit wrote. */
#include "proftop/jitdump.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t header;
	size_t at;

	if (jitdump_header(data, size, &header))
		return 0;
	for (at = header; at < size;) {
		struct jitdump_record r;

		if (jitdump_record(data + at, size - at, &r))
			break;
		if (r.total_size < JITDUMP_RECORD_HEADER)
			abort();
		if (r.id == JITDUMP_CODE_LOAD &&
		    ((const uint8_t *)r.name < data + at || (const uint8_t *)r.name + r.name_len >= data + size ||
		     r.name_len >= r.total_size || r.name[r.name_len] || memchr(r.name, 0, r.name_len)))
			abort();
		at += r.total_size;
	}
	return 0;
}
