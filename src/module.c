/* module.c — reading one ELF module: segments, functions, unwind tables (see module.h).
 *
 * The image. A module's bytes are read once: a file is mapped whole, privately and writable (so
 * libelf may convert in place without touching the file), and libelf reads it from memory, as it
 * reads the vdso's copy or a fuzzer's input. The image is kept for the module's lifetime because
 * unwinding reads .eh_frame_hdr, .eh_frame and code from it; once reading is done, the pages it
 * touched are handed back (a mapped file costs memory only for what the unwinder reads again).
 * A module whose reading failed keeps no image.
 *
 * Address translation. The PT_LOAD segment whose file range holds file offset off gives the
 * link-time address: off - p_offset + p_vaddr. Which file offset an address in a process is at
 * is the caller's business (symbols.c); a module without segments reports the offset itself.
 *
 * A module's functions (module_funcs.c) come from its symbol tables, Go's stack roots among them,
 * and, where no symbol says, from its FDEs and a stripped program's entry point.
 *
 * The debug file. A module without a .symtab, or without any unwind table (no .eh_frame_hdr, no
 * .debug_frame), is looked up once in its separate debug file (debugfile.c), which gives what the
 * module lacks: its functions, its .debug_frame, or both. A debug file fetched later (debuginfod)
 * gives its functions to a module that had only .dynsym ones, and its DWARF to one without any;
 * the functions it replaces keep their names' memory, which callers may still hold.
 *
 * Source lines. The DWARF (lines.c) is opened on the first question about a line: from the image
 * when it has a .debug_info, else from the debug file, which then stays open with it. Where the
 * module came from is kept for that. What is wrong on the way (DWARF libdw refuses, now or in a
 * later lookup; a debug file of another build) is kept as a message for the user. A DWARF lookup walks a unit's DIEs, so each address's
 * answer is kept (the file never changes), up to SOURCE_MEMO_MAX frames per module, with its names
 * copied into a pool of the module's own.
 *
 * The DWARF open costs memory (lines_memory(): a libc's debug file is 12 MB once read), the
 * answers kept little, so a caller over its budget closes a module's DWARF
 * (module_source_close()) and keeps its answers: the strings handed out live in the module's pool,
 * not in the DWARF, and the next address no answer holds opens it again (lines_tried is cleared,
 * what was wrong with it was said already).
 *
 * DWARF read from the image is file pages: the whole pages of its debug sections go back after
 * each lookup that read a new unit or line table, at a close, and whenever the caller asks
 * (module_source_drop_pages()), so what stays resident is what the lookups since read. Only in
 * the image of a file in this host's byte order, and not where its headers are: libelf writes
 * nothing into such an image, so its pages read back as they were. */
#include "proftop/module_internal.h"

#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "proftop/debugfile.h"
#include "proftop/idmap.h"
#include "proftop/lines.h"
#include "proftop/strpool.h"
#include "proftop/util.h"

/* Frames of looked-up addresses kept per module: 1.5 MiB at most. */
#define SOURCE_MEMO_MAX		65536

/* ---- lookup ------------------------------------------------------------------------------- */

const char *module_name(const struct module *mod)
{
	return mod->name;
}

bool module_is_elf(const struct module *mod)
{
	return mod->elf;
}

size_t module_function_count(const struct module *mod)
{
	return mod->nfuncs - mod->entry_named;
}

/* Besides the exact segment, an offset in the page below a segment's start, or in its
 * zero-filled tail, translates through that segment: the kernel maps whole pages. */
uint64_t module_translate(const struct module *mod, uint64_t off)
{
	size_t i;

	for (i = 0; i < mod->nsegs; i++) {
		const struct module_seg *seg = &mod->segs[i];

		if (off >= seg->offset && off - seg->offset < seg->filesz)
			return off - seg->offset + seg->vaddr;
	}
	for (i = 0; i < mod->nsegs; i++) {
		const struct module_seg *seg = &mod->segs[i];
		uint64_t size = seg->memsz > seg->filesz ? seg->memsz : seg->filesz;

		if (off >= seg->page_start && off < seg->offset + size)
			return off - seg->offset + seg->vaddr;
	}
	return off;
}

const char *module_lookup(const struct module *mod, uint64_t addr, uint64_t *start)
{
	uint64_t end;

	return module_lookup_range(mod, addr, start, &end);
}

const char *module_path(const struct module *mod)
{
	return mod->origin_path;
}

const char *module_lookup_range(const struct module *mod, uint64_t addr, uint64_t *start,
				uint64_t *end)
{
	size_t lo = 0, hi = mod->nfuncs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (mod->funcs[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= mod->funcs[lo - 1].end)
		return NULL;
	*start = mod->funcs[lo - 1].start;
	*end = mod->funcs[lo - 1].end;
	return mod->funcs[lo - 1].name;
}

/* The kind of the function module_lookup() names at addr: only Go's modules have roots, and
 * only they pay for the lookup. */
enum module_frame_kind module_frame_kind(const struct module *mod, uint64_t addr)
{
	uint64_t start, end;

	if (!mod->nroots || !module_lookup_range(mod, addr, &start, &end))
		return MODULE_FRAME_CALL;
	for (size_t i = 0; i < mod->nroots; i++)
		if (mod->roots[i].start == start)
			return mod->roots[i].kind;
	return MODULE_FRAME_CALL;
}

const struct module_unwind *module_unwind(const struct module *mod)
{
	return mod->image ? &mod->unwind : NULL;
}

/* The bytes must be in one segment's file range (where the kernel mapped them from the file),
 * and in the image: a segment's header may claim more than the file has. */
int module_read(const struct module *mod, uint64_t addr, void *buf, size_t len)
{
	for (size_t i = 0; mod->image && i < mod->nsegs; i++) {
		const struct module_seg *seg = &mod->segs[i];
		uint64_t in = addr - seg->vaddr;

		if (addr < seg->vaddr || in >= seg->filesz || len > seg->filesz - in)
			continue;
		if (seg->offset > mod->size || in > mod->size - seg->offset ||
		    len > mod->size - seg->offset - in)
			return -EFAULT;
		memcpy(buf, mod->image + seg->offset + in, len);
		return 0;
	}
	return -EFAULT;
}

/* ---- life --------------------------------------------------------------------------------- */

int module_init(void)
{
	return elf_version(EV_CURRENT) == EV_NONE ? -ENOTSUP : 0;
}

struct module *module_new(const char *name, size_t len)
{
	struct module *mod = xcalloc(1, sizeof(*mod));

	mod->name = xasprintf("%.*s", (int)len, name);
	return mod;
}

static void module_drop_image(struct module *mod)
{
	if (mod->mapped)
		munmap(mod->image, mod->size);
	else
		free(mod->image);
	mod->image = NULL;
	mod->size = 0;
	mod->mapped = false;
}

static void module_close_lines(struct module *mod)
{
	lines_free(mod->lines);
	mod->lines = NULL;
	if (mod->lines_elf)
		elf_end(mod->lines_elf);
	mod->lines_elf = NULL;
	if (mod->lines_debug.elf)
		debugfile_close(&mod->lines_debug);
	mod->lines_debug.elf = NULL;
}

void module_free(struct module *mod)
{
	if (!mod)
		return;
	module_close_lines(mod);
	if (mod->cfi)
		dwarf_cfi_end(mod->cfi);
	if (mod->cfi_elf)
		elf_end(mod->cfi_elf);
	free(mod->fde_starts);
	module_source_forget(mod);
	strpool_free(mod->source_names);
	free(mod->origin_path);
	free(mod->lines_problem);
	free(mod->debug_rejected);
	free(mod->damage);
	module_drop_image(mod);
	free(mod->debug_frame_copy);
	free(mod->name);
	free(mod->segs);
	free(mod->funcs);
	free(mod->names);
	for (size_t i = 0; i < mod->nold_names; i++)
		free(mod->old_names[i]);
	free(mod->old_names);
	free(mod->fetched_path);
	free(mod);
}

/* ---- reading ELF -------------------------------------------------------------------------- */

static int module_read_segments(struct module *mod, Elf *elf)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	size_t n, cap = 0;
	GElf_Phdr phdr;

	if (elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &n))
		return -ENOEXEC;
	for (size_t i = 0; i < n; i++) {
		struct module_seg *seg;

		if (!gelf_getphdr(elf, (int)i, &phdr) || phdr.p_type != PT_LOAD)
			continue;
		xgrow((void **)&mod->segs, &cap, mod->nsegs + 1, sizeof(*mod->segs));
		seg = &mod->segs[mod->nsegs++];
		seg->offset = phdr.p_offset;
		seg->filesz = phdr.p_filesz;
		seg->memsz = phdr.p_memsz;
		seg->vaddr = phdr.p_vaddr;
		seg->page_start = phdr.p_offset & ~(page - 1);
	}
	mod->elf = true;
	return 0;
}

/* The first section of the given type, or (type SHT_NULL) of the given name. */
Elf_Scn *module_section(Elf *elf, Elf64_Word type, const char *name)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx = 0;
	GElf_Shdr shdr;

	if (name && elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *sname;

		if (!gelf_getshdr(scn, &shdr))
			continue;
		if (!name) {
			if (shdr.sh_type == type)
				return scn;
			continue;
		}
		sname = elf_strptr(elf, shstrndx, shdr.sh_name);
		if (sname && !strcmp(sname, name))
			return scn;
	}
	return NULL;
}


/* ---- unwind data -------------------------------------------------------------------------- */

/* Whether the size bytes at p lie in the module's image (then they live as long as it). */
static bool module_in_image(const struct module *mod, const void *p, size_t size)
{
	uintptr_t at = (uintptr_t)p, base = (uintptr_t)mod->image;

	return mod->image && at >= base && at - base <= mod->size && size <= mod->size - (at - base);
}

/* .debug_frame of elf (the module's or its debug file's), decompressed if need be: in place when
 * its bytes are the image's as they are, else a copy the module owns. */
static void module_read_debug_frame(struct module *mod, Elf *elf)
{
	Elf_Scn *scn = module_section(elf, SHT_NULL, ".debug_frame");
	struct module_unwind *uw = &mod->unwind;
	GElf_Shdr shdr;
	Elf_Data *data;

	if (!scn || !gelf_getshdr(scn, &shdr) || shdr.sh_type == SHT_NOBITS)
		return;
	if ((shdr.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
		return;
	data = elf_getdata(scn, NULL);
	if (!data || !data->d_buf || !data->d_size)
		return;
	uw->debug_frame_size = data->d_size;
	if (module_in_image(mod, data->d_buf, data->d_size)) {
		uw->debug_frame = data->d_buf;
		return;
	}
	mod->debug_frame_copy = xmalloc(data->d_size);
	memcpy(mod->debug_frame_copy, data->d_buf, data->d_size);
	uw->debug_frame = mod->debug_frame_copy;
}

/* .eh_frame_hdr and the range of the executable segments, from the program headers; the
 * module's own .debug_frame. */
static void module_read_unwind(struct module *mod, Elf *elf)
{
	struct module_unwind *uw = &mod->unwind;
	GElf_Phdr phdr;
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return;
	uw->code_start = UINT64_MAX;
	for (size_t i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, (int)i, &phdr))
			continue;
		if (phdr.p_type == PT_GNU_EH_FRAME) {
			uw->eh_frame_hdr = phdr.p_vaddr;
			uw->eh_frame_hdr_size = phdr.p_memsz;
		} else if (phdr.p_type == PT_LOAD && (phdr.p_flags & PF_X)) {
			if (phdr.p_vaddr < uw->code_start)
				uw->code_start = phdr.p_vaddr;
			if (phdr.p_vaddr + phdr.p_memsz > uw->code_end)
				uw->code_end = phdr.p_vaddr + phdr.p_memsz;
		}
	}
	if (uw->code_start == UINT64_MAX)
		uw->code_start = 0;
	module_read_debug_frame(mod, elf);
}

/* ---- loading ------------------------------------------------------------------------------ */

/* What the module lacks, from its debug file when it has one: its functions when need_symbols,
 * its .debug_frame when it has no unwind table at all (stripped, no .eh_frame_hdr). Returns
 * whether it read functions. */
static bool module_read_debugfile(struct module *mod, Elf *elf,
				  const struct debugfile_origin *origin, bool need_symbols)
{
	bool need_frames = !mod->unwind.debug_frame && !mod->unwind.eh_frame_hdr;
	struct debugfile debug;
	bool read = false;

	if (!origin || (!need_symbols && !need_frames) ||
	    debugfile_open(&debug, elf, origin, mod->debug_rejected ? NULL : &mod->debug_rejected))
		return false;
	if (need_symbols)
		read = !module_read_symbols(mod, debug.elf, module_section(debug.elf, SHT_SYMTAB, NULL));
	if (need_frames)
		module_read_debug_frame(mod, debug.elf);
	mod->debug_found = true;
	debugfile_close(&debug);
	return read;
}

/* A file cut short (a copy or a download that stopped) keeps its program headers and code but
 * loses what comes last: the DWARF sections and the section headers, which libelf then ignores
 * or refuses. Say which part is missing rather than that there is no DWARF. */
static char *module_check_extent(Elf *elf, size_t size)
{
	size_t shnum = 0, shstrndx = 0;
	bool names = !elf_getshdrstrndx(elf, &shstrndx);
	GElf_Ehdr ehdr;
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	if (!gelf_getehdr(elf, &ehdr))
		return NULL;
	if (ehdr.e_shoff && (ehdr.e_shoff > size ||
			     (uint64_t)ehdr.e_shnum * ehdr.e_shentsize > size - ehdr.e_shoff))
		return xasprintf("its section headers lie past the end of the file (cut short?)");
	if (elf_getshdrnum(elf, &shnum))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type == SHT_NOBITS ||
		    (shdr.sh_offset <= size && shdr.sh_size <= size - shdr.sh_offset))
			continue;
		name = names ? elf_strptr(elf, shstrndx, shdr.sh_name) : NULL;
		return xasprintf("its %s section reaches past the end of the file (cut short?)",
				 name && *name ? name : "unnamed");
	}
	return NULL;
}

/* Segments and unwind tables from the image; functions from its .symtab, else the debug file's,
 * else its .dynsym (and a stripped program's entry point). */
static int module_read_image(struct module *mod, const struct debugfile_origin *origin)
{
	Elf *elf = elf_memory((char *)mod->image, mod->size);
	bool symbols;
	int err;

	if (!elf)
		return -ENOEXEC;
	err = module_read_segments(mod, elf);
	if (err)
		goto out_end;
	mod->damage = module_check_extent(elf, mod->size);
	mod->build_id_len = debugfile_build_id(elf, mod->build_id);
	mod->go = module_is_go(elf);
	symbols = !module_read_symbols(mod, elf, module_section(elf, SHT_SYMTAB, NULL));
	module_read_unwind(mod, elf);
	if (module_read_debugfile(mod, elf, origin, !symbols))
		symbols = true;
	mod->symtab = symbols;
	if (!symbols) {
		module_read_symbols(mod, elf, module_section(elf, SHT_DYNSYM, NULL));
		module_name_entry(mod, elf);
	}
out_end:
	elf_end(elf);
	return err;
}

int module_load_image(struct module *mod, void *image, size_t size)
{
	int err;

	mod->image = image;
	mod->size = size;
	err = module_read_image(mod, NULL);
	if (err)
		module_drop_image(mod);
	return err;
}

int module_load_file(struct module *mod, int fd, size_t size, const struct debugfile_origin *origin)
{
	void *image;
	int err;

	if (!size)
		return -ENOEXEC;
	image = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (image == MAP_FAILED)
		return -errno;
	mod->image = image;
	mod->size = size;
	mod->mapped = true;
	err = module_read_image(mod, origin);
	if (err) {
		module_drop_image(mod);
		return err;
	}
	if (origin) {
		mod->origin = *origin;
		mod->origin_path = xasprintf("%.*s", (int)origin->path_len, origin->path);
		mod->origin.path = mod->origin_path;
	}
	/* Everything read is copied out (names, segments) or is file bytes the unwinder may read
	 * again: give the pages back rather than keep a module's symbol table in memory. */
	madvise(image, size, MADV_DONTNEED);
	return 0;
}

/* ---- source lines ------------------------------------------------------------------------- */

static bool module_has_dwarf(Elf *elf)
{
	return module_section(elf, SHT_NULL, ".debug_info") ||
	       module_section(elf, SHT_NULL, ".zdebug_info");
}

/* Where the module came from, for messages: its path, else its name. */
static const char *module_where(const struct module *mod)
{
	return mod->origin_path ? mod->origin_path : mod->name;
}

/* The whole pages of the image its debug sections span (module.c's file comment): none unless
 * the file is in this host's byte order and the span keeps clear of its headers. */
static void module_dwarf_pages(struct module *mod, Elf *elf)
{
	static const union { uint16_t word; unsigned char first; } host = { .word = 1 };
	size_t page = (size_t)sysconf(_SC_PAGESIZE), shstrndx, lo = SIZE_MAX, hi = 0;
	const char *ident = elf_getident(elf, NULL);
	Elf_Scn *scn = NULL;
	GElf_Ehdr ehdr;
	GElf_Shdr shdr;

	mod->dwarf_lo = mod->dwarf_hi = 0;
	if (!ident || ident[EI_DATA] != (host.first ? ELFDATA2LSB : ELFDATA2MSB) ||
	    !gelf_getehdr(elf, &ehdr) || elf_getshdrstrndx(elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type == SHT_NOBITS ||
		    !(name = elf_strptr(elf, shstrndx, shdr.sh_name)) || strncmp(name, ".debug_", 7) ||
		    shdr.sh_offset > mod->size || shdr.sh_size > mod->size - shdr.sh_offset)
			continue;
		lo = shdr.sh_offset < lo ? shdr.sh_offset : lo;
		hi = shdr.sh_offset + shdr.sh_size > hi ? shdr.sh_offset + shdr.sh_size : hi;
	}
	lo = (lo + page - 1) / page * page;
	hi = hi / page * page;
	/* The headers: the ELF header and program headers at the start, the section headers. */
	if (lo >= hi || lo < ehdr.e_phoff + (uint64_t)ehdr.e_phnum * ehdr.e_phentsize ||
	    (ehdr.e_shoff < hi && ehdr.e_shoff + (uint64_t)ehdr.e_shnum * ehdr.e_shentsize > lo))
		return;
	mod->dwarf_lo = lo;
	mod->dwarf_hi = hi;
}

void module_source_drop_pages(struct module *mod)
{
	if (mod->lines && mod->dwarf_hi > mod->dwarf_lo && mod->mapped)
		madvise(mod->image + mod->dwarf_lo, mod->dwarf_hi - mod->dwarf_lo, MADV_DONTNEED);
}

/* What is wrong with its DWARF now: a DWARF closed for memory and opened again may fail where it
 * did not (its debug file went away), which is news. */
static void module_set_problem(struct module *mod, char *problem)
{
	free(mod->lines_problem);
	mod->lines_problem = problem;
	mod->problem_told = false;
}

/* The DWARF of the debug file open in mod->lines_debug; closed again when there is none. */
static void module_open_debug_lines(struct module *mod)
{
	const char *why;

	if (module_has_dwarf(mod->lines_debug.elf)) {
		mod->lines = lines_new(mod->lines_debug.elf, false, &why);
		if (!mod->lines)
			module_set_problem(mod, xasprintf("%s: the DWARF of its debug file %s "
							  "cannot be read: %s; no source lines for it",
							  module_where(mod), mod->lines_debug.path,
							  why));
	}
	if (!mod->lines)
		debugfile_close(&mod->lines_debug);
}

/* The DWARF of the image, else of its debug file. A file without either has no lines, which is
 * nothing wrong; DWARF libdw refuses, or a debug file of another build, is. */
static void module_open_lines(struct module *mod)
{
	const char *why;
	Elf *elf;

	mod->lines_tried = true;
	if (!mod->image || !mod->elf || !(elf = elf_memory((char *)mod->image, mod->size)))
		return;
	if (module_has_dwarf(elf)) {
		mod->lines = lines_new(elf, true, &why);
		if (mod->lines) {
			mod->lines_elf = elf;
			module_dwarf_pages(mod, elf);
			return;
		}
		module_set_problem(mod, xasprintf("%s: its DWARF cannot be read: %s; no source "
						  "lines for it", module_where(mod),
						  mod->damage ? mod->damage : why));
	} else if (mod->fetched_path &&
		   !debugfile_open_path(&mod->lines_debug, elf, mod->fetched_path, &mod->origin, NULL)) {
		module_open_debug_lines(mod);
	} else if (mod->origin_path &&
		   !debugfile_open(&mod->lines_debug, elf, &mod->origin,
				   mod->debug_rejected ? NULL : &mod->debug_rejected)) {
		module_open_debug_lines(mod);
	} else if (mod->debug_rejected) {
		module_set_problem(mod, xasprintf("%s: %s; not used: no source lines for it",
						  module_where(mod), mod->debug_rejected));
	} else if (mod->damage) {
		module_set_problem(mod, xasprintf("%s: %s; no source lines for it",
						  module_where(mod), mod->damage));
	}
	elf_end(elf);
}

/* Keep the answer for addr, while there is room. */
static void module_memo_put(struct module *mod, uint64_t addr, const struct lines_frame *frames,
			    size_t n)
{
	if (mod->memo_nframes + n > SOURCE_MEMO_MAX)
		return;
	if (!mod->memo_nspans)
		idmap_init(&mod->memo_index);
	xgrow((void **)&mod->memo_spans, &mod->memo_spans_cap, mod->memo_nspans + 1,
	      sizeof(*mod->memo_spans));
	xgrow((void **)&mod->memo_frames, &mod->memo_frames_cap, mod->memo_nframes + n + 1,
	      sizeof(*mod->memo_frames));
	memcpy(&mod->memo_frames[mod->memo_nframes], frames, n * sizeof(*frames));
	mod->memo_spans[mod->memo_nspans].first = (uint32_t)mod->memo_nframes;
	mod->memo_spans[mod->memo_nspans].count = (uint32_t)n;
	idmap_put(&mod->memo_index, addr, (uint32_t)mod->memo_nspans++);
	mod->memo_nframes += n;
}

/* A string of an answer, in the module's pool (counted when new). */
static const char *module_source_own(struct module *mod, const char *s)
{
	size_t len;

	if (!s)
		return NULL;
	len = strlen(s);
	if (!mod->source_names)
		mod->source_names = strpool_new();
	if (!strpool_find(mod->source_names, s, len))
		mod->source_name_bytes += strpool_cost(len);
	return strpool_intern(mod->source_names, s, len);
}

size_t module_source(struct module *mod, uint64_t addr, struct lines_frame *out, size_t max)
{
	uint32_t span;
	size_t n, held;

	span = mod->memo_nspans ? idmap_get(&mod->memo_index, addr) : IDMAP_MISSING;
	if (span != IDMAP_MISSING && max) {
		n = mod->memo_spans[span].count < max ? mod->memo_spans[span].count : max;
		memcpy(out, &mod->memo_frames[mod->memo_spans[span].first], n * sizeof(*out));
		return n;
	}
	if (!mod->lines_tried)
		module_open_lines(mod);
	if (!mod->lines || !max)
		return 0;
	mod->source_reads++;
	held = lines_memory(mod->lines);
	n = lines_lookup(mod->lines, addr, out, max);
	if (lines_memory(mod->lines) != held) /* a unit's index or line table: pages read */
		module_source_drop_pages(mod);
	for (size_t i = 0; i < n; i++) {
		out[i].function = module_source_own(mod, out[i].function);
		out[i].file = module_source_own(mod, out[i].file);
	}
	module_memo_put(mod, addr, out, n);
	return n;
}

uint64_t module_source_reads(const struct module *mod)
{
	return mod->source_reads;
}

size_t module_source_memory(const struct module *mod)
{
	return (mod->lines ? lines_memory(mod->lines) : 0) + mod->source_name_bytes +
	       mod->memo_spans_cap * sizeof(*mod->memo_spans) +
	       mod->memo_frames_cap * sizeof(*mod->memo_frames) +
	       mod->memo_index.capacity * (sizeof(*mod->memo_index.keys) +
					   sizeof(*mod->memo_index.values));
}

bool module_source_open(const struct module *mod)
{
	return mod->lines != NULL;
}

bool module_source_close(struct module *mod)
{
	if (!mod->lines)
		return false;
	module_source_drop_pages(mod);
	module_close_lines(mod);
	mod->lines_tried = false;
	mod->source_closed = true;
	return true;
}

void module_source_forget(struct module *mod)
{
	idmap_free(&mod->memo_index);
	free(mod->memo_spans);
	free(mod->memo_frames);
	mod->memo_spans = NULL;
	mod->memo_frames = NULL;
	mod->memo_nspans = mod->memo_spans_cap = 0;
	mod->memo_nframes = mod->memo_frames_cap = 0;
}

const char *module_source_problem(struct module *mod, bool *news)
{
	const char *error = mod->lines && !mod->lines_problem ? lines_error(mod->lines) : NULL;

	if (error)
		mod->lines_problem = mod->lines_debug.elf ?
			xasprintf("%s: the DWARF of its debug file %s is corrupt: %s; lines that "
				  "need it show as unknown", module_where(mod), mod->lines_debug.path,
				  error) :
			xasprintf("%s: its DWARF is corrupt: %s; lines that need it show as unknown",
				  module_where(mod), error);
	*news = mod->lines_problem && !mod->problem_told;
	mod->problem_told |= *news;
	return mod->lines_problem;
}

const char *module_damage(const struct module *mod)
{
	return mod->damage;
}

const char *module_debugfile_rejected(const struct module *mod)
{
	return mod->debug_rejected;
}

/* ---- debug files fetched later ------------------------------------------------------------- */

const unsigned char *module_build_id(const struct module *mod, size_t *len)
{
	*len = mod->build_id_len;
	return mod->build_id;
}

bool module_wants_debug_file(struct module *mod, const unsigned char **build_id, size_t *len)
{
	struct debugfile debug = { .fd = -1 };
	bool want;
	Elf *elf;

	if (!mod->build_id_len || !mod->origin_path || mod->debug_found || mod->fetched_path ||
	    !mod->image || !mod->elf || !(elf = elf_memory((char *)mod->image, mod->size)))
		return false;
	want = !module_has_dwarf(elf) && debugfile_open(&debug, elf, &mod->origin, NULL);
	debugfile_close(&debug);
	elf_end(elf);
	*build_id = mod->build_id;
	*len = mod->build_id_len;
	return want;
}

/* The functions of the debug file's .symtab in place of those from .dynsym (or none): the old
 * names stay where they are, since callers may still hold them. */
static bool module_take_symbols(struct module *mod, Elf *debug)
{
	struct module_func *funcs = mod->funcs;
	size_t nfuncs = mod->nfuncs;
	char *names = mod->names;

	mod->funcs = NULL;
	mod->names = NULL;
	mod->nfuncs = 0;
	if (module_read_symbols(mod, debug, module_section(debug, SHT_SYMTAB, NULL))) {
		free(mod->funcs);
		free(mod->names);
		mod->funcs = funcs;
		mod->names = names;
		mod->nfuncs = nfuncs;
		return false;
	}
	free(funcs);
	mod->old_names = xrealloc(mod->old_names, (mod->nold_names + 1) * sizeof(*mod->old_names));
	mod->old_names[mod->nold_names++] = names;
	mod->symtab = true;
	mod->entry_named = false;
	return true;
}

int module_add_debug_file(struct module *mod, const char *path, bool *named, char **why)
{
	struct debugfile debug;
	Elf *elf;
	int err;

	*named = false;
	*why = NULL;
	if (!mod->image || !mod->elf || !(elf = elf_memory((char *)mod->image, mod->size))) {
		*why = xasprintf("%s cannot be read any more", module_where(mod));
		return -ENOEXEC;
	}
	err = debugfile_open_path(&debug, elf, path, &mod->origin, why);
	elf_end(elf);
	if (err)
		return err;
	if (!mod->symtab)
		*named = module_take_symbols(mod, debug.elf);
	debugfile_close(&debug);
	free(mod->fetched_path);
	mod->fetched_path = xstrdup(path);
	/* Lines the module had none of come from the file from the next lookup on. */
	if (!mod->lines && !mod->source_closed) {
		module_close_lines(mod);
		mod->lines_tried = false;
		free(mod->lines_problem);
		mod->lines_problem = NULL;
		mod->problem_told = false;
	}
	if (mod->mapped)
		madvise(mod->image, mod->size, MADV_DONTNEED);
	return 0;
}
