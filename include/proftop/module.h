/* module.h — one ELF file as the symbolizer reads it: its PT_LOAD segments, its functions
 * (demangled) and its unwind tables, read from the file's bytes, which the module keeps.
 *
 * A module is read once, from a file it maps whole for its lifetime or from an image in memory
 * (the vdso, a fuzzer's input), and then only looked at. Addresses here are the module's own:
 * file offsets, or link-time addresses (the p_vaddr of its segments). Its name and every function
 * name it returns stay valid, at the same address, until module_free().
 *
 * A module that could not be read (no file, not ELF) still has its name: it then has no segments
 * and no functions, and its addresses are file offsets. Not thread-safe. */
#ifndef PROFTOP_MODULE_H
#define PROFTOP_MODULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct debugfile_origin;
struct lines_frame;
struct module;

/* Where DWARF unwinding finds the module's frames, in its link-time address space. */
struct module_unwind {
	uint64_t eh_frame_hdr;		/* link-time address; 0: none */
	uint64_t eh_frame_hdr_size;
	uint64_t code_start;		/* link-time range of the executable segments */
	uint64_t code_end;
	const unsigned char *debug_frame; /* the module's .debug_frame or its debug file's; NULL */
	size_t debug_frame_size;
};

/* Ready libelf, once per process before the first load. Returns 0, or -ENOTSUP when libelf
 * refuses our ELF version (then no module can be read). */
int module_init(void);

/* A module named name[0..len) with nothing read yet. */
struct module *module_new(const char *name, size_t len);
void module_free(struct module *mod);

/* Read mod from the regular file open at fd (size bytes), which it maps for its lifetime: fd may
 * be closed afterwards. Its functions come from its .symtab, else its debug file's (looked for
 * around origin; NULL: nowhere), else its .dynsym. Returns 0, or -errno: -ENOEXEC when the file
 * holds no ELF data this reader can use. */
int module_load_file(struct module *mod, int fd, size_t size, const struct debugfile_origin *origin);
/* Read mod from image[0..size) (malloc'd): from this call on the image is the module's. The same
 * as a file without a debug file. Returns 0 or -ENOEXEC. */
int module_load_image(struct module *mod, void *image, size_t size);

const char *module_name(const struct module *mod);
/* Whether its segments were read: then module_translate() gives link-time addresses. */
bool module_is_elf(const struct module *mod);
/* The functions its symbols name (a stripped program's entry point, named _start for want of
 * them, is not counted). */
size_t module_function_count(const struct module *mod);
/* The link-time address of file offset off (off itself when the module has no segments). */
uint64_t module_translate(const struct module *mod, uint64_t off);
/* The function holding link-time address addr, with where it starts in *start; or NULL. */
const char *module_lookup(const struct module *mod, uint64_t addr, uint64_t *start);
/* The same, with where it ends (exclusive) in *end. */
const char *module_lookup_range(const struct module *mod, uint64_t addr, uint64_t *start,
				uint64_t *end);
/* Where a stack ends, by the function a frame is in: Go's runtime switches stacks in assembly its
 * CFI does not describe (module.c). */
enum module_frame_kind {
	MODULE_FRAME_CALL,	/* any other function: its caller's frame is above it */
	MODULE_FRAME_SWITCH,	/* it switched stacks: its caller's frames are on the other stack,
				 * which a copy of this one does not hold (a frame-pointer walk of
				 * the live process may follow them) */
	MODULE_FRAME_TOP,	/* the last frame any walk can trust: nothing called it, or its
				 * callers' frames are gone */
};
/* The kind of the function at link-time address addr. */
enum module_frame_kind module_frame_kind(const struct module *mod, uint64_t addr);
/* The path the file was loaded from, as the process mapped it; NULL for an image. */
const char *module_path(const struct module *mod);
/* Its unwind tables; NULL when it has no ELF image to unwind through. */
const struct module_unwind *module_unwind(const struct module *mod);
/* Copy len bytes at link-time address addr from the file image: they must lie in one segment's
 * file range, and in the image. Returns 0 or -EFAULT. */
int module_read(const struct module *mod, uint64_t addr, void *buf, size_t len);

/* Its .eh_frame as libdw reads it (opened on the first call, kept until module_free()); NULL when
 * it has none. Addresses in it are link-time ones. */
struct Dwarf_CFI_s *module_cfi(struct module *mod);
/* Whether it has one and is an x86-64 file: libdw then reads its rows with that ABI's defaults. */
bool module_cfi_x86_64(struct module *mod);
/* For an address no function symbol covers (a stripped file): where the .eh_frame FDE that
 * covers link-time address addr starts, in *start, which is where its function starts. Returns
 * false when no FDE covers it. */
bool module_fde_bounds(struct module *mod, uint64_t addr, uint64_t *start);
/* The source frames at link-time address addr, innermost first (lines.h's lines_lookup()), from
 * the module's DWARF or its debug file's, opened on the first call (and again on the first one
 * after module_source_close() that no kept answer holds). 0 when there is none. Names and files
 * stay valid until module_free(). */
size_t module_source(struct module *mod, uint64_t addr, struct lines_frame *out, size_t max);
/* How many module_source() calls read the DWARF (no kept answer held the address): a caller
 * sees from it whether the DWARF was needed since it last looked. */
uint64_t module_source_reads(const struct module *mod);
/* The bytes module_source() holds: the DWARF open (lines_memory()), the answers kept, the
 * names handed out. */
size_t module_source_memory(const struct module *mod);
/* Give back the file pages its open DWARF read from its image, which later lookups read again as
 * they need (module.c says which). */
void module_source_drop_pages(struct module *mod);
/* Whether its DWARF is open. */
bool module_source_open(const struct module *mod);
/* Close the DWARF to give its memory back; the answers kept stay. Returns whether it was open. */
bool module_source_close(struct module *mod);
/* Drop the answers kept (the names handed out stay). */
void module_source_forget(struct module *mod);
/* What is wrong with the DWARF module_source() reads, or would: it is corrupt (libdw refused a
 * part of it, at open or in a lookup so far), or the debug file found is another build's.
 * "PATH: what: what it costs", valid until module_free(); NULL when nothing is (a file without
 * DWARF or a debug file is nothing wrong). *news is true the first time it returns the text. */
const char *module_source_problem(struct module *mod, bool *news);
/* Which part of its file lies past the file's end, as in a file cut short ("its section headers
 * lie past the end of the file (cut short?)"); NULL when nothing does. */
const char *module_damage(const struct module *mod);
/* Its GNU build-id (*len bytes, 0 when it has none), valid until module_free(). */
const unsigned char *module_build_id(const struct module *mod, size_t *len);
/* Whether a debug file fetched by build-id (fetch.h) would give mod what it lacks: it has a
 * build-id (in *build_id[0..*len), valid until module_free()), no DWARF of its own and no debug
 * file on disk, or not the right one. */
bool module_wants_debug_file(struct module *mod, const unsigned char **build_id, size_t *len);
/* Take from the debug file at path, if it is mod's (debugfile_open_path()): its functions when
 * mod had none from a .symtab (*named is then true), its DWARF for module_source(). Names handed
 * out before stay valid. Returns 0, or -errno with *why (malloc'd) saying what is wrong. */
int module_add_debug_file(struct module *mod, const char *path, bool *named, char **why);
/* A debug file found for the module that was not its own (debugfile.h), "PATH is not its debug
 * file (why)"; NULL. */
const char *module_debugfile_rejected(const struct module *mod);

#endif
