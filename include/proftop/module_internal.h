/* module_internal.h — what module.c and module_funcs.c share of a module (module.h): its struct,
 * and the reading of its functions that loading calls. Not for other modules. */
#ifndef PROFTOP_MODULE_INTERNAL_H
#define PROFTOP_MODULE_INTERNAL_H

#include "proftop/module.h"

#include <elfutils/libdw.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proftop/debugfile.h"
#include "proftop/idmap.h"
#include "proftop/lines.h"

struct module_seg {
	uint64_t offset;	/* p_offset */
	uint64_t filesz;
	uint64_t memsz;
	uint64_t vaddr;
	uint64_t page_start;	/* offset of the page holding p_offset: where its mapping starts */
};

struct module_func {
	uint64_t start;
	uint64_t end;		/* exclusive */
	const char *name;	/* in module->names */
};

/* A Go runtime function at which a stack ends (module_frame_kind()), by its start. A runtime has
 * about twenty; ABI wrappers may double some. */
#define MODULE_ROOTS_MAX 48

struct module_root {
	uint64_t start;
	enum module_frame_kind kind;
};

struct module {
	char *name;
	bool elf;		/* its segments were read: addresses translate to link-time ones */
	struct module_seg *segs;
	size_t nsegs;
	struct module_func *funcs;	/* sorted by start, starts unique */
	size_t nfuncs;
	char *names;
	bool symtab;		/* the functions came from a .symtab (its own, or a debug file's) */
	bool entry_named;	/* one of them is a stripped program's entry point, named _start */
	bool go;		/* built by Go's gc toolchain: its runtime's functions are roots */
	struct module_root roots[MODULE_ROOTS_MAX];
	size_t nroots;
	char **old_names;	/* names of functions a debug file replaced: still handed out */
	size_t nold_names;
	unsigned char build_id[DEBUGFILE_BUILD_ID_MAX];
	size_t build_id_len;
	bool debug_found;	/* a debug file on disk gave it symbols or frames at load */
	char *fetched_path;	/* a debug file fetched for it (module_add_debug_file()); NULL */
	unsigned char *image;	/* the whole file, mapped, or a malloc'd copy; NULL: unreadable */
	size_t size;
	bool mapped;		/* image is an mmap (else malloc'd) */
	struct module_unwind unwind;
	unsigned char *debug_frame_copy; /* unwind.debug_frame when it is not in the image */
	struct debugfile_origin origin;	/* where it was loaded from (path copied); pid 0: nowhere */
	char *origin_path;
	bool lines_tried;	/* the DWARF was looked for */
	struct lines *lines;	/* NULL: none */
	Elf *lines_elf;		/* the image's, when lines come from it */
	struct debugfile lines_debug; /* the debug file's, when they come from there (elf != NULL) */
	char *lines_problem;	/* what is wrong with its DWARF or debug file; NULL: nothing */
	bool problem_told;	/* module_source_problem() said it was news */
	char *debug_rejected;	/* a debug file found that is not its (debugfile_open()) */
	char *damage;		/* which part of the file lies past its end; NULL: none */
	struct idmap memo_index; /* address -> its span in memo_spans */
	struct { uint32_t first, count; } *memo_spans;
	size_t memo_nspans, memo_spans_cap;
	struct lines_frame *memo_frames;
	size_t memo_nframes, memo_frames_cap;
	struct strpool *source_names;	/* the names and files of answers handed out; NULL */
	size_t source_name_bytes;
	uint64_t source_reads;	/* lookups that read the DWARF (no answer was kept) */
	bool source_closed;	/* its DWARF was open and is closed for memory */
	size_t dwarf_lo, dwarf_hi; /* whole pages of the image its open DWARF reads; lo == hi: none */
	bool cfi_tried;		/* .eh_frame was opened for FDE bounds */
	bool x86_64;		/* its e_machine, read with it */
	Elf *cfi_elf;
	Dwarf_CFI *cfi;		/* NULL: none */
	uint64_t *fde_starts;	/* link-time starts of the FDEs, sorted */
	size_t nfde_starts;
};

/* The first section of the given type, or (type SHT_NULL) of the given name (module.c). */
Elf_Scn *module_section(Elf *elf, Elf64_Word type, const char *name);

/* Whether elf is a program or library of Go's gc toolchain, whose runtime's functions are roots. */
bool module_is_go(Elf *elf);
/* Read the functions of symbol table scn of elf into mod (which has none yet). */
int module_read_symbols(struct module *mod, Elf *elf, Elf_Scn *scn);
/* Name a stripped program's entry point _start when no symbol covers it. */
void module_name_entry(struct module *mod, Elf *elf);

#endif
