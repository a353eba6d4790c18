/* debug_frame.h — .debug_frame rewritten as .eh_frame, so libunwind's remote lookup can use it.
 *
 * libunwind reads .debug_frame only from the local process. A module that has no .eh_frame for
 * some code (built with -fno-asynchronous-unwind-tables) still has .debug_frame when built with
 * -g, with the same call frame instructions in a slightly different container: CIE ids, CIE
 * pointers and version 4's address/segment size fields differ. debug_frame_convert() rewrites
 * each CIE and FDE into .eh_frame form with absolute 8-byte addresses, rebased to where the
 * module is loaded, and builds the binary search table that .eh_frame_hdr would hold.
 *
 * Pure: it reads only its input, so a fuzzer can feed it anything. */
#ifndef PROFTOP_DEBUG_FRAME_H
#define PROFTOP_DEBUG_FRAME_H

#include <stddef.h>
#include <stdint.h>

struct eh_frame_image {
	unsigned char *eh_frame;   /* the converted entries */
	size_t eh_frame_size;
	int32_t *table;            /* pairs (initial location - code_start, FDE offset), sorted */
	size_t table_entries;      /* pairs in table */
};

/* Convert debug_frame for a module loaded with bias, whose code starts at code_start (runtime).
 * Entries it cannot convert (64-bit DWARF, CIE augmentations, addresses too far from code_start
 * for the table's 32-bit offsets) are left out. Returns 0, or -ENOENT when nothing converted. */
int debug_frame_convert(const unsigned char *debug_frame, size_t size, uint64_t bias,
			uint64_t code_start, struct eh_frame_image *out);
void debug_frame_free(struct eh_frame_image *image);

#endif
