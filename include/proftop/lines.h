/* lines.h — source positions and inlined frames of one ELF file, from its DWARF (libdw).
 *
 * A code address of a module maps to a chain of frames, innermost first: the function whose
 * code it is (an inlined helper, when the compiler inlined one there) with the file and line of
 * the address, then each function that helper was inlined into, with the file and line of the
 * call it was inlined for, up to the real (out-of-line) function that holds the code. Read from
 * the DWARF line table (the address's line) and the DW_TAG_inlined_subroutine scopes around the
 * address (each one's DW_AT_call_file and DW_AT_call_line). `perf report --inline` and
 * addr2line -i read the same.
 *
 * Addresses are link-time addresses of the file (the symbolizer's module addresses). Every string
 * returned stays valid until lines_free(). Nothing here is thread-safe: one thread (a
 * collector worker, through its symbolizer's module) owns a lines object. A file without DWARF, or with DWARF libdw refuses, is no
 * error: lookups then find nothing (lines_error() says what was refused). A lookup costs two
 * binary searches once the unit of its address is indexed, whatever the size of its
 * functions. */
#ifndef PROFTOP_LINES_H
#define PROFTOP_LINES_H

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct lines;

/* How deep an inlined chain is followed; deeper ones keep their innermost frames. */
#define LINES_MAX_FRAMES 32

struct lines_frame {
	/* The function (demangled when it has a linkage name); NULL when the DWARF names none. */
	const char *function;
	/* The source file (a name the compiler recorded relative to the directory it ran in is
	 * joined to that directory) and line; NULL and 0 when the line table has nothing. */
	const char *file;
	unsigned line;
	/* Whether this frame is a function inlined into the next one (the last frame is one only
	 * when the chain was cut at max). */
	bool inlined;
};

/* The DWARF of elf (which the caller keeps open until lines_free()): a module's own image, or
 * its separate debug file. mapped: elf reads a file mapped whole (elf_memory()), whose sections
 * are file pages (but those libdw inflates); else libelf reads each section into memory, and the sections
 * lookups never read are hidden from libdw in elf's section headers (which stay so). Returns
 * NULL when elf has no DWARF that libdw can read; *why then says why, in a static string. */
struct lines *lines_new(Elf *elf, bool mapped, const char **why);
void lines_free(struct lines *lines);
/* The bytes it holds in memory: the debug sections libdw inflated or libelf read (not a mapped
 * file's pages), libdw's units and the line tables read so far (estimated from their counts:
 * lines.c), the indexes and names. What lines_free() gives back. */
size_t lines_memory(const struct lines *lines);

/* The frames at link-time address addr, innermost first, into out[0..max). Returns how many:
 * 0 when no compilation unit covers addr. A chain deeper than max keeps its innermost frames
 * (the outermost, real function is the caller's from its symbol anyway). */
size_t lines_lookup(struct lines *lines, uint64_t addr, struct lines_frame *out, size_t max);
/* The first part of the DWARF that libdw refused so far (corrupt or truncated: lookups that
 * needed it found less), as "what: why"; NULL while none was. Valid until lines_free(). */
const char *lines_error(const struct lines *lines);

#endif
