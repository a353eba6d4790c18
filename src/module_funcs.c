/* module_funcs.c — a module's functions (module.c reads the rest of the module): from its symbol
 * tables, the Go runtime's stack roots among them, function bounds from the FDEs where no symbol
 * says, and the entry point of a stripped program.
 *
 * A module's functions are sorted by start with one entry per address: aliases collapse to one
 * deterministic name (a global over a weak over a local binding, then a name without a leading
 * underscore, then the shorter, then the lesser), names are demangled once and copied into one
 * block the module owns, and a function of size 0 extends to the next one (or its section's end).
 * A program with no .symtab (its own or a debug file's) has its entry point named _start, as the
 * linker calls it, when no symbol covers it: the root of every stack of its main thread.
 *
 * A symbol is a function only inside its section: a linker's marker at a section's end (Go's
 * runtime.etext, typed FUNC with size 0) is no function, and would otherwise name every address
 * past the code (read-only data, or garbage a broken unwind took for a return address). Nor is
 * a size-0 symbol with a marker's name, and a sized symbol wins over a size-0 one at its address.
 *
 * Go's stack roots. A Go program (the gc toolchain's: it has a .gopclntab) runs goroutines on
 * stacks of their own and the runtime on each thread's g0 stack; the runtime's assembly switches
 * between them without telling the CFI. Above the frame of such a function a DWARF unwind of the
 * copied stack reads what is left on the other stack (names like runtime.etext, ASCII bytes).
 * So the functions Go's own unwinder ends a stack at (traceback.go: those marked TOPFRAME, and
 * the ones that write SP) are kept, by name, with what they are (module_frame_kind()). */
#include "proftop/module_internal.h"

#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "proftop/demangle.h"
#include "proftop/util.h"

/* A demangled name this long helps nobody; keep the mangled one. */
#define DEMANGLED_MAX		(64 * 1024)

/* A symbol table entry on its way into a module. */
struct module_raw {
	uint64_t start;
	uint64_t size;
	uint64_t limit;		/* end of its section: where a function must stop; UINT64_MAX:
				 * unknown */
	const char *name;	/* in the ELF's string table */
	int rank;		/* binding: global 2, weak 1, local 0 */
};

/* ---- the symbol tables -------------------------------------------------------------------- */

static int module_rank(unsigned char bind)
{
	switch (bind) {
	case STB_GLOBAL:
		return 2;
	case STB_LOCAL:
		return 0;
	default:		/* weak, GNU unique */
		return 1;
	}
}

/* The end of section shndx, for a symbol at addr inside it; UINT64_MAX when unknown (no section
 * or an unreadable header), 0 when addr is not inside it (at its end, as a linker's end-of-text
 * marker is). One symbol table names few sections, in runs, so the last answer is kept. */
static uint64_t module_section_end(Elf *elf, size_t shndx, uint64_t addr, size_t *last_ndx,
				   GElf_Shdr *last)
{
	Elf_Scn *scn;

	if (shndx == SHN_UNDEF || shndx >= SHN_LORESERVE)
		return UINT64_MAX;
	if (shndx != *last_ndx) {
		scn = elf_getscn(elf, shndx);
		if (!scn || !gelf_getshdr(scn, last)) {
			*last_ndx = 0;
			return UINT64_MAX;
		}
		*last_ndx = shndx;
	}
	if (addr < last->sh_addr || addr - last->sh_addr >= last->sh_size)
		return 0;
	return last->sh_addr + last->sh_size;
}

/* Names linkers give to section boundaries: labels, not functions, however they are typed. */
static bool module_is_marker(const char *name)
{
	static const char *const markers[] = {
		"runtime.text", "runtime.etext", "etext", "_etext", "__etext", "edata", "_edata",
		"end", "_end", "__end", "__bss_start", "__bss_start__", "__bss_end__", "_bss_end__",
		"__end__",
	};

	for (size_t i = 0; i < sizeof(markers) / sizeof(markers[0]); i++)
		if (!strcmp(name, markers[i]))
			return true;
	return false;
}

/* Append the function symbols of symbol table scn to raw. */
static int module_collect(Elf *elf, Elf_Scn *scn, struct module_raw **raw, size_t *n)
{
	size_t count, entsize, cap = 0, last_ndx = 0;
	GElf_Shdr shdr, last;
	Elf_Data *data;

	if (!gelf_getshdr(scn, &shdr) || !(data = elf_getdata(scn, NULL)))
		return -EINVAL;
	entsize = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
	if (!entsize)
		return -EINVAL;
	count = data->d_size / entsize;
	for (size_t i = 1; i < count; i++) {
		struct module_raw *r;
		unsigned char type;
		const char *name;
		uint64_t limit;
		GElf_Sym sym;

		if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC)
			continue;
		name = elf_strptr(elf, shdr.sh_link, sym.st_name);
		if (!name || !*name || (!sym.st_size && module_is_marker(name)))
			continue;
		limit = module_section_end(elf, sym.st_shndx, sym.st_value, &last_ndx, &last);
		if (!limit)
			continue;
		xgrow((void **)raw, &cap, *n + 1, sizeof(**raw));
		r = &(*raw)[(*n)++];
		r->start = sym.st_value;
		r->size = sym.st_size;
		r->limit = limit;
		r->name = name;
		r->rank = module_rank(GELF_ST_BIND(sym.st_info));
	}
	return 0;
}

/* By address; at one address the alias to keep comes first: one with a size (a function, not
 * a label at its start), then by binding, name. */
static int module_raw_cmp(const void *a, const void *b)
{
	const struct module_raw *x = a, *y = b;
	bool xu = x->name[0] == '_', yu = y->name[0] == '_';
	size_t xl, yl;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (!x->size != !y->size)
		return !x->size - !y->size;
	if (x->rank != y->rank)
		return y->rank - x->rank;
	if (xu != yu)
		return xu - yu;
	xl = strlen(x->name);
	yl = strlen(y->name);
	if (xl != yl)
		return xl < yl ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Collapse aliases (the first of a run wins, with the largest size among them) and give each
 * function its end. Returns the number kept at the front of raw. */
static size_t module_dedup(struct module_raw *raw, size_t n)
{
	size_t out = 0;

	if (!n)
		return 0;
	qsort(raw, n, sizeof(*raw), module_raw_cmp);
	for (size_t i = 0; i < n; i++) {
		if (out && raw[out - 1].start == raw[i].start) {
			if (raw[i].size > raw[out - 1].size)
				raw[out - 1].size = raw[i].size;
			continue;
		}
		raw[out++] = raw[i];
	}
	return out;
}

/* A function ends where its size says, but never past its section; one of size 0 at the next
 * function, or its section's end. With neither known it covers nothing: it would name every
 * address above it. */
static uint64_t module_func_end(const struct module_raw *raw, size_t i, size_t n)
{
	uint64_t next = i + 1 < n ? raw[i + 1].start : UINT64_MAX;
	uint64_t end = raw[i].start + raw[i].size < raw[i].start ? UINT64_MAX :
		       raw[i].start + raw[i].size;

	if (raw[i].size)
		return end < raw[i].limit ? end : raw[i].limit;
	if (next == UINT64_MAX && raw[i].limit == UINT64_MAX)
		return raw[i].start;
	return next < raw[i].limit ? next : raw[i].limit;
}

/* What raw's name shows as: without the symbol version a .symtab may carry
 * ("memcpy@@GLIBC_2.14"), demangled when mangled. Returns the demangled name (the caller frees
 * it) or NULL for the first *len bytes of raw. */
static char *module_display_name(const char *raw, size_t *len)
{
	size_t n = strcspn(raw, "@");
	char *plain = NULL, *name;

	if (!n)
		n = strlen(raw);
	else if (raw[n])
		plain = xasprintf("%.*s", (int)n, raw);
	name = demangle_name(plain ? plain : raw);
	free(plain);
	*len = n;
	if (name && strlen(name) <= DEMANGLED_MAX) {
		*len = strlen(name);
		return name;
	}
	free(name);
	return NULL;
}

/* Fill mod->funcs and mod->names from raw (deduplicated): names demangled here, once. */
static void module_build(struct module *mod, const struct module_raw *raw, size_t n)
{
	char **demangled = xcalloc(n ? n : 1, sizeof(*demangled));
	size_t *len = xcalloc(n ? n : 1, sizeof(*len));
	size_t total = 0, used = 0;

	for (size_t i = 0; i < n; i++) {
		demangled[i] = module_display_name(raw[i].name, &len[i]);
		total += len[i] + 1;
	}
	mod->names = xmalloc(total ? total : 1);
	mod->funcs = xmalloc((n ? n : 1) * sizeof(*mod->funcs));
	for (size_t i = 0; i < n; i++) {
		struct module_func *f = &mod->funcs[mod->nfuncs];

		f->start = raw[i].start;
		f->end = module_func_end(raw, i, n);
		if (f->end > f->start) {
			f->name = mod->names + used;
			memcpy(mod->names + used, demangled[i] ? demangled[i] : raw[i].name, len[i]);
			mod->names[used + len[i]] = '\0';
			used += len[i] + 1;
			mod->nfuncs++;
		}
		free(demangled[i]);
	}
	free(len);
	free(demangled);
}

/* ---- Go's stack roots ---------------------------------------------------------------------- */

/* Go's runtime (1.x, amd64) as its traceback.go sees it: TOPFRAME functions start a stack; the
 * others write SP ("SPWRITE"), switching to g0's stack (systemstack, mcall, morestack,
 * asmcgocall; nanotime1 and time.now to call the vdso, walltime before Go 1.17), to a
 * goroutine's (gogo, cgocallback), or aligning SP for C code (the cgo calls, sigfwd); Go's own
 * unwinder stops at them or jumps to the other stack, whose frames are not in the sample's copy.
 * Two of them leave nothing a frame-pointer walk can trust either: mcall clears the frame
 * pointer (the goroutine it came from may run on another thread meanwhile), and newstack, which
 * morestack calls, copies the goroutine's stack elsewhere and frees it (a walk found
 * 0xffffffffffffffff above it).
 * Assembly functions are named NAME.abi0 in the symbol table since Go 1.17. */
static const struct {
	const char *name;
	enum module_frame_kind kind;
} module_go_roots[] = {
	{ "runtime.goexit", MODULE_FRAME_TOP },
	{ "runtime.mstart", MODULE_FRAME_TOP },
	{ "runtime.rt0_go", MODULE_FRAME_TOP },
	{ "runtime.sigtramp", MODULE_FRAME_TOP },
	{ "runtime.cgoSigtramp", MODULE_FRAME_TOP },
	{ "runtime.systemstack", MODULE_FRAME_SWITCH },
	{ "runtime.mcall", MODULE_FRAME_TOP },
	{ "runtime.morestack", MODULE_FRAME_TOP },
	{ "runtime.asmcgocall", MODULE_FRAME_SWITCH },
	{ "runtime.asmcgocall_no_g", MODULE_FRAME_SWITCH },
	{ "runtime.gogo", MODULE_FRAME_SWITCH },
	{ "runtime.cgocallback", MODULE_FRAME_SWITCH },
	{ "runtime.nanotime1", MODULE_FRAME_SWITCH },
	{ "runtime.walltime", MODULE_FRAME_SWITCH },
	{ "runtime.walltime1", MODULE_FRAME_SWITCH },
	{ "time.now", MODULE_FRAME_SWITCH },
	{ "runtime.callCgoMmap", MODULE_FRAME_SWITCH },
	{ "runtime.callCgoMunmap", MODULE_FRAME_SWITCH },
	{ "runtime.callCgoSigaction", MODULE_FRAME_SWITCH },
	{ "runtime.sigfwd", MODULE_FRAME_SWITCH },
};

static enum module_frame_kind module_go_kind(const char *name)
{
	size_t len = strlen(name);

	if (len > 5 && !strcmp(name + len - 5, ".abi0"))
		len -= 5;
	for (size_t i = 0; i < sizeof(module_go_roots) / sizeof(module_go_roots[0]); i++)
		if (strlen(module_go_roots[i].name) == len && !memcmp(name, module_go_roots[i].name, len))
			return module_go_roots[i].kind;
	return MODULE_FRAME_CALL;
}

/* The gc toolchain's programs and libraries have its function table, in one section or the
 * other by how they were linked; gccgo's, whose runtime switches no stacks, have none. */
bool module_is_go(Elf *elf)
{
	return module_section(elf, SHT_NULL, ".gopclntab") ||
	       module_section(elf, SHT_NULL, ".data.rel.ro.gopclntab");
}

/* The roots among mod's functions, found again whenever its functions are. */
static void module_find_roots(struct module *mod)
{
	mod->nroots = 0;
	for (size_t i = 0; mod->go && i < mod->nfuncs && mod->nroots < MODULE_ROOTS_MAX; i++) {
		enum module_frame_kind kind = module_go_kind(mod->funcs[i].name);

		if (kind != MODULE_FRAME_CALL)
			mod->roots[mod->nroots++] = (struct module_root){ mod->funcs[i].start, kind };
	}
}

/* Read the functions of symbol table scn of elf into mod (which has none yet). */
int module_read_symbols(struct module *mod, Elf *elf, Elf_Scn *scn)
{
	struct module_raw *raw = NULL;
	size_t n = 0;
	int err;

	if (!scn)
		return -ENOENT;
	err = module_collect(elf, scn, &raw, &n);
	if (err)
		goto out_free;
	n = module_dedup(raw, n);
	module_build(mod, raw, n);
	module_find_roots(mod);
out_free:
	free(raw);
	return err;
}


/* ---- functions without symbols ---------------------------------------------------------------- */

/* The FDEs' start addresses from .eh_frame_hdr's search table, sorted as the table is: only the
 * encodings every x86-64 toolchain writes (a 4-byte .eh_frame pointer, a udata4 count, datarel
 * sdata4 entries); anything else leaves the table empty. */
static void module_read_fde_starts(struct module *mod)
{
	uint64_t hdr = mod->unwind.eh_frame_hdr, count;
	unsigned char head[12];
	uint32_t n;

	if (!hdr || module_read(mod, hdr, head, sizeof(head)) || head[0] != 1 ||
	    (head[1] & 0x0f) != 0x0b || head[2] != 0x03 || head[3] != 0x3b)
		return;
	memcpy(&n, head + 8, 4);
	count = n;
	if (!count || count > mod->unwind.eh_frame_hdr_size / 8)
		return;
	mod->fde_starts = xmalloc(count * sizeof(*mod->fde_starts));
	for (uint64_t i = 0; i < count; i++) {
		int32_t entry[2];

		if (module_read(mod, hdr + sizeof(head) + i * 8, entry, sizeof(entry)))
			break;
		mod->fde_starts[mod->nfde_starts++] = hdr + (uint64_t)(int64_t)entry[0];
	}
}

Dwarf_CFI *module_cfi(struct module *mod)
{
	if (!mod->cfi_tried) {
		mod->cfi_tried = true;
		mod->cfi_elf = mod->image && mod->elf ? elf_memory((char *)mod->image, mod->size) : NULL;
		mod->cfi = mod->cfi_elf ? dwarf_getcfi_elf(mod->cfi_elf) : NULL;
		if (mod->cfi) {
			GElf_Ehdr ehdr;

			module_read_fde_starts(mod);
			mod->x86_64 = gelf_getehdr(mod->cfi_elf, &ehdr) && ehdr.e_machine == EM_X86_64;
		}
	}
	return mod->cfi;
}

bool module_cfi_x86_64(struct module *mod)
{
	return module_cfi(mod) && mod->x86_64;
}

bool module_fde_bounds(struct module *mod, uint64_t addr, uint64_t *start)
{
	Dwarf_CFI *cfi = module_cfi(mod);
	Dwarf_Frame *frame;
	size_t lo = 0, hi;

	/* libdw says whether an FDE covers addr; the one that does starts at the last FDE start
	 * at or below it, since FDEs do not overlap. */
	if (!mod->nfde_starts || !cfi || dwarf_cfi_addrframe(cfi, addr, &frame))
		return false;
	free(frame);
	hi = mod->nfde_starts;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (mod->fde_starts[mid] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return false;
	*start = mod->fde_starts[lo - 1];
	return true;
}

/* ---- the entry point of a stripped program -------------------------------------------------- */

/* What the linker calls a program's entry point (ld's default ENTRY). */
static const char module_entry_name[] = "_start";

/* A program whose entry point is _start: ET_EXEC, or ET_DYN marked a PIE (DF_1_PIE). Not a shared
 * library, whose entry point (libc.so.6 has one) is another function; not a Go program, whose
 * linker names its entry point otherwise (_rt0_amd64_linux). */
static bool module_is_program(Elf *elf, const GElf_Ehdr *ehdr)
{
	size_t entsize = gelf_fsize(elf, ELF_T_DYN, 1, EV_CURRENT);
	Elf_Scn *scn = module_section(elf, SHT_DYNAMIC, NULL);
	Elf_Data *data;
	GElf_Dyn dyn;

	if (module_section(elf, SHT_NULL, ".note.go.buildid") ||
	    module_section(elf, SHT_NULL, ".go.buildinfo"))
		return false;
	if (ehdr->e_type == ET_EXEC)
		return true;
	if (ehdr->e_type != ET_DYN || !scn || !entsize || !(data = elf_getdata(scn, NULL)))
		return false;
	for (size_t i = 0; i < data->d_size / entsize && gelf_getdyn(data, (int)i, &dyn); i++) {
		if (dyn.d_tag == DT_NULL)
			break;
		if (dyn.d_tag == DT_FLAGS_1)
			return dyn.d_un.d_val & DF_1_PIE;
	}
	return false;
}

/* The end of the code section holding addr; 0 when none does. */
static uint64_t module_code_end(Elf *elf, uint64_t addr)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &shdr) && shdr.sh_type == SHT_PROGBITS &&
		    (shdr.sh_flags & SHF_EXECINSTR) && addr >= shdr.sh_addr &&
		    addr - shdr.sh_addr < shdr.sh_size)
			return shdr.sh_addr + shdr.sh_size;
	return 0;
}

/* Does an FDE cover addr? */
static bool module_fde_covers(Dwarf_CFI *cfi, uint64_t addr)
{
	Dwarf_Frame *frame;

	if (dwarf_cfi_addrframe(cfi, addr, &frame))
		return false;
	free(frame);
	return true;
}

/* Where the function at entry ends, limit at most: at the next function or FDE to start after
 * it, and within its own FDE when one starts at entry (the first address in [entry, limit) it
 * no longer covers: FDEs do not overlap). 0 when an FDE that starts before entry covers it:
 * entry is then inside another function. */
static uint64_t module_entry_end(struct module *mod, uint64_t entry, uint64_t limit)
{
	Dwarf_CFI *cfi = module_cfi(mod);
	uint64_t fde, lo, hi;

	for (size_t i = 0; i < mod->nfde_starts; i++)
		if (mod->fde_starts[i] > entry && mod->fde_starts[i] < limit)
			limit = mod->fde_starts[i];
	for (size_t i = 0; i < mod->nfuncs; i++)
		if (mod->funcs[i].start > entry && mod->funcs[i].start < limit)
			limit = mod->funcs[i].start;
	if (!cfi || !module_fde_bounds(mod, entry, &fde))
		return limit;
	if (fde != entry)
		return 0;
	/* Covered on [entry, end), not after it up to limit: the first address not covered. */
	lo = entry + 1;
	hi = limit;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (module_fde_covers(cfi, mid))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* A program stripped of its .symtab still says where it starts (e_entry): the entry point is
 * named _start, as the linker calls it, when no symbol covers it, from there to where that
 * function ends (module_entry_end()). No other function is named: nothing else says which. */
void module_name_entry(struct module *mod, Elf *elf)
{
	uint64_t entry, start, end, limit;
	size_t at = 0;
	GElf_Ehdr ehdr;

	if (!gelf_getehdr(elf, &ehdr) || !ehdr.e_entry || !module_is_program(elf, &ehdr))
		return;
	entry = ehdr.e_entry;
	limit = module_code_end(elf, entry);
	if (!limit || module_lookup_range(mod, entry, &start, &end))
		return;
	end = module_entry_end(mod, entry, limit);
	if (end <= entry)
		return;
	while (at < mod->nfuncs && mod->funcs[at].start < entry)
		at++;
	mod->funcs = xrealloc(mod->funcs, (mod->nfuncs + 1) * sizeof(*mod->funcs));
	memmove(&mod->funcs[at + 1], &mod->funcs[at], (mod->nfuncs - at) * sizeof(*mod->funcs));
	mod->funcs[at] = (struct module_func){ entry, end, module_entry_name };
	mod->nfuncs++;
	mod->entry_named = true;
}
