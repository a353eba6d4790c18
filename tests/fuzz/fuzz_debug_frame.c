/* libFuzzer target: the .debug_frame converter on arbitrary section contents (a module's
 * .debug_frame comes from a file proftop does not control). */
#include "proftop/debug_frame.h"

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct eh_frame_image img;

	if (debug_frame_convert(data, size, 0x555555554000ull, 0x555555555000ull, &img) == 0) {
		/* Every table entry must point at an entry inside the output. */
		for (size_t i = 0; i < img.table_entries; i++)
			if ((size_t)(uint32_t)img.table[2 * i + 1] + 8 > img.eh_frame_size)
				__builtin_trap();
		debug_frame_free(&img);
	}
	return 0;
}
