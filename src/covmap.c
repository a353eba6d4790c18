/* covmap.c — a module's functions and lines for coverage mode (covmap.h), from libdw. */
#include "proftop/covmap.h"

#include "proftop/debugfile.h"
#include "proftop/demangle.h"
#include "proftop/strpool.h"
#include "proftop/uprobes.h"
#include "proftop/util.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A row of the line tables kept: an is_stmt address inside a function. */
struct row {
	uint64_t addr;
	const char *file;
	unsigned line;
	uint32_t func;
};

struct reader {
	struct covmap *map;
	bool *decl_taken;          /* per function: its entry row was given its declaration's line */
	/* The functions' address ranges (a function GCC split into hot and cold parts has more
	 * than one), by address once the functions are sorted. */
	struct range { uint64_t lo, hi; uint32_t func; } *ranges;
	size_t nranges, ranges_cap;
	size_t funcs_cap;
	struct row *rows;
	size_t nrows, rows_cap;
	GElf_Phdr *loads;
	size_t nloads;
	const char *comp_dir;      /* the unit's, while it is read */
};

/* file, joined to its unit's directory when relative, interned. */
static const char *joined(struct reader *r, const char *file)
{
	char *full;
	const char *out;

	if (file[0] == '/' || !r->comp_dir)
		return strpool_intern(r->map->strings, file, strlen(file));
	full = xasprintf("%s/%s", r->comp_dir, file);
	out = strpool_intern(r->map->strings, full, strlen(full));
	free(full);
	return out;
}

/* (DWARF nests C++'s functions in namespaces and classes; walked at most this deep.) */
#define SCOPE_DEPTH 16

static void add_function(struct reader *r, Dwarf_Die *die)
{
	Dwarf_Addr low, high;
	Dwarf_Attribute attr;
	const char *linkage, *name, *file;
	char *demangled = NULL;
	struct covmap_func *f;
	int line;

	Dwarf_Addr base, start, end;
	ptrdiff_t at = 0;
	size_t first_range = r->nranges;

	while ((at = dwarf_ranges(die, at, &base, &start, &end)) > 0)
		if (end > start) {
			xgrow((void **)&r->ranges, &r->ranges_cap, r->nranges + 1, sizeof(*r->ranges));
			r->ranges[r->nranges++] = (struct range){ start, end, (uint32_t)r->map->nfuncs };
		}
	if (r->nranges == first_range)
		return;
	/* Its entry, and the range that holds it (its code for a disassembler). */
	if (dwarf_entrypc(die, &low))
		low = r->ranges[first_range].lo;
	high = 0;
	for (size_t i = first_range; i < r->nranges; i++)
		if (low >= r->ranges[i].lo && low < r->ranges[i].hi)
			high = r->ranges[i].hi;
	if (!high) {
		r->nranges = first_range;
		return;
	}
	linkage = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	if (linkage)
		demangled = demangle_name(linkage);
	name = demangled ? demangled : linkage ? linkage : dwarf_diename(die);
	if (!name)
		name = "[unnamed]";
	xgrow((void **)&r->map->funcs, &r->funcs_cap, r->map->nfuncs + 1, sizeof(*r->map->funcs));
	f = &r->map->funcs[r->map->nfuncs++];
	*f = (struct covmap_func){ strpool_intern(r->map->strings, name, strlen(name)), low, high, 0,
				   0, UINT32_MAX };
	free(demangled);
	if (!dwarf_decl_line(die, &line) && line > 0 && (file = dwarf_decl_file(die))) {
		f->decl_file = joined(r, file);
		f->decl_line = (unsigned)line;
	}
}

static void walk_scope(struct reader *r, Dwarf_Die *parent, int depth)
{
	Dwarf_Die child;

	if (depth > SCOPE_DEPTH || dwarf_child(parent, &child))
		return;
	do {
		int tag = dwarf_tag(&child);

		if (tag == DW_TAG_subprogram)
			add_function(r, &child);
		else if (tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
			 tag == DW_TAG_structure_type)
			walk_scope(r, &child, depth + 1);
	} while (!dwarf_siblingof(&child, &child));
}

static int by_entry(const void *a, const void *b)
{
	const struct covmap_func *x = a, *y = b;

	return x->entry < y->entry ? -1 : x->entry > y->entry;
}

static int by_lo(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The functions sorted by entry, and their ranges by address naming them so. */
static void sort_functions(struct reader *r)
{
	struct covmap *map = r->map;
	uint32_t *new_of = xmalloc((map->nfuncs ? map->nfuncs : 1) * sizeof(*new_of));

	/* (entries are made unique below: an alias keeps the first) */
	for (size_t i = 0; i < map->nfuncs; i++)
		map->funcs[i].first_line = (uint32_t)i; /* (its old index, for a moment) */
	qsort(map->funcs, map->nfuncs, sizeof(*map->funcs), by_entry);
	for (size_t i = 0; i < map->nfuncs; i++) {
		new_of[map->funcs[i].first_line] = (uint32_t)i;
		map->funcs[i].first_line = 0;
	}
	for (size_t i = 0; i < r->nranges; i++)
		r->ranges[i].func = new_of[r->ranges[i].func];
	qsort(r->ranges, r->nranges, sizeof(*r->ranges), by_lo);
	free(new_of);
}

/* The function whose code holds addr, or UINT32_MAX. */
static uint32_t function_at(const struct reader *r, uint64_t addr)
{
	size_t lo = 0, hi = r->nranges;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->ranges[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && addr < r->ranges[lo - 1].hi ? r->ranges[lo - 1].func : UINT32_MAX;
}

static void add_rows(struct reader *r, Dwarf_Die *cu)
{
	Dwarf_Lines *lines;
	size_t n;

	if (dwarf_getsrclines(cu, &lines, &n))
		return;
	for (size_t i = 0; i < n; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		Dwarf_Addr addr;
		bool stmt = false, end = false;
		int line = 0;
		const char *file;
		uint32_t func;

		if (!l || dwarf_lineaddr(l, &addr) || dwarf_linebeginstatement(l, &stmt) ||
		    dwarf_lineendsequence(l, &end) || dwarf_lineno(l, &line) || !stmt || end ||
		    line <= 0 || !(file = dwarf_linesrc(l, NULL, NULL)))
			continue;
		func = function_at(r, addr);
		if (func == UINT32_MAX)
			continue;
		xgrow((void **)&r->rows, &r->rows_cap, r->nrows + 1, sizeof(*r->rows));
		/* Its first row at its entry is its declaration's line, as gcov counts calls (the
		 * line table puts the prologue on the opening brace's). */
		if (addr == r->map->funcs[func].entry && r->map->funcs[func].decl_line &&
		    !r->decl_taken[func]) {
			r->decl_taken[func] = true;
			r->rows[r->nrows++] = (struct row){ addr, r->map->funcs[func].decl_file,
							    r->map->funcs[func].decl_line, func };
			continue;
		}
		r->rows[r->nrows++] = (struct row){ addr, joined(r, file), (unsigned)line, func };
	}
}

static int by_line(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	int c;

	if (x->func != y->func)
		return x->func < y->func ? -1 : 1;
	if (x->file != y->file && (c = strcmp(x->file, y->file)))
		return c;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int by_addr(const void *a, const void *b)
{
	const struct covmap_addr *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static bool file_offset(const struct reader *r, uint64_t addr, uint64_t *offset)
{
	for (size_t i = 0; i < r->nloads; i++)
		if (addr >= r->loads[i].p_vaddr && addr - r->loads[i].p_vaddr < r->loads[i].p_filesz) {
			*offset = r->loads[i].p_offset + (addr - r->loads[i].p_vaddr);
			return true;
		}
	return false;
}

/* The rows, sorted, into lines, addresses and pairs. */
static void make_lines(struct reader *r)
{
	struct covmap *map = r->map;
	size_t addrs_cap = 0, lines_cap = 0, pairs_cap = 0;

	qsort(r->rows, r->nrows, sizeof(*r->rows), by_line);
	for (size_t i = 0; i < r->nrows; i++) {
		const struct row *w = &r->rows[i];
		uint64_t offset;

		if (!file_offset(r, w->addr, &offset))
			continue;
		if (!map->nlines || map->lines[map->nlines - 1].func != w->func ||
		    map->lines[map->nlines - 1].file != w->file ||
		    map->lines[map->nlines - 1].line != w->line) {
			xgrow((void **)&map->lines, &lines_cap, map->nlines + 1, sizeof(*map->lines));
			map->lines[map->nlines++] = (struct covmap_line){ w->file, w->line, w->func,
									  w->addr };
		} else if (map->pairs[map->npairs - 1].addr == (uint32_t)map->naddrs - 1 &&
			   map->addrs[map->naddrs - 1].addr == w->addr) {
			continue; /* (the same row twice) */
		}
		xgrow((void **)&map->addrs, &addrs_cap, map->naddrs + 1, sizeof(*map->addrs));
		map->addrs[map->naddrs] = (struct covmap_addr){ w->addr, offset };
		xgrow((void **)&map->pairs, &pairs_cap, map->npairs + 1, sizeof(*map->pairs));
		map->pairs[map->npairs++] = (struct covmap_pair){ (uint32_t)map->nlines - 1,
								  (uint32_t)map->naddrs++ };
	}
}

/* Each address once: pairs renumbered to the sorted, distinct addresses. */
static void merge_addresses(struct covmap *map)
{
	struct covmap_addr *sorted = xmalloc((map->naddrs ? map->naddrs : 1) * sizeof(*sorted));
	size_t n = 0;

	memcpy(sorted, map->addrs, map->naddrs * sizeof(*sorted));
	qsort(sorted, map->naddrs, sizeof(*sorted), by_addr);
	for (size_t i = 0; i < map->naddrs; i++)
		if (!n || sorted[n - 1].addr != sorted[i].addr)
			sorted[n++] = sorted[i];
	for (size_t i = 0; i < map->npairs; i++) {
		struct covmap_addr key = map->addrs[map->pairs[i].addr];
		const struct covmap_addr *at = bsearch(&key, sorted, n, sizeof(*sorted), by_addr);

		map->pairs[i].addr = (uint32_t)(at - sorted);
	}
	free(map->addrs);
	map->addrs = sorted;
	map->naddrs = n;
}

/* Each function's run of lines, and the line its entry address starts. */
static void index_functions(struct covmap *map)
{
	for (size_t i = 0; i < map->nlines; i++) {
		struct covmap_func *f = &map->funcs[map->lines[i].func];

		if (!f->nlines)
			f->first_line = (uint32_t)i;
		f->nlines++;
	}
	for (size_t i = 0; i < map->npairs; i++) {
		struct covmap_func *f = &map->funcs[map->lines[map->pairs[i].line].func];

		if (map->addrs[map->pairs[i].addr].addr == f->entry && f->entry_line == UINT32_MAX)
			f->entry_line = map->pairs[i].line;
	}
}

static int read_loads(struct reader *r, Elf *elf)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return -ENOEXEC;
	r->loads = xcalloc(n ? n : 1, sizeof(*r->loads));
	for (size_t i = 0; i < n; i++)
		if (gelf_getphdr(elf, (int)i, &r->loads[r->nloads]) &&
		    r->loads[r->nloads].p_type == PT_LOAD)
			r->nloads++;
	return 0;
}

static int read_dwarf(struct reader *r, Dwarf *dw)
{
	Dwarf_Off off = 0, next;
	size_t header;

	for (int pass = 0; pass < 2; pass++) {
		off = 0;
		while (!dwarf_nextcu(dw, off, &next, &header, NULL, NULL, NULL)) {
			Dwarf_Die cu;

			if (dwarf_offdie(dw, off + header, &cu)) {
				Dwarf_Attribute attr;

				r->comp_dir = dwarf_formstring(dwarf_attr(&cu, DW_AT_comp_dir, &attr));
				if (!pass)
					walk_scope(r, &cu, 0);
				else
					add_rows(r, &cu);
			}
			off = next;
		}
		if (!pass) {
			sort_functions(r);
			r->decl_taken = xcalloc(r->map->nfuncs ? r->map->nfuncs : 1, sizeof(bool));
		}
	}
	return r->nrows ? 0 : -ENODATA;
}

int covmap_read(const char *path, pid_t pid, struct covmap **out, const char **why)
{
	struct reader r = { 0 };
	struct debugfile debug = { .fd = -1 };
	bool have_debug = false;
	struct stat st;
	Dwarf *dw = NULL;
	Elf *elf = NULL;
	int fd, err;

	*out = NULL;
	*why = NULL;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return *why = "libelf refused its version", -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return *why = "cannot open it", -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return *why = "not a regular file", -ENOEXEC;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	r.map = xcalloc(1, sizeof(*r.map));
	r.map->path = xstrdup(path);
	r.map->fd = -1;
	r.map->dev = st.st_dev;
	r.map->ino = st.st_ino;
	r.map->strings = strpool_new();
	if (!elf || elf_kind(elf) != ELF_K_ELF || read_loads(&r, elf)) {
		err = -ENOEXEC;
		*why = "not an ELF file";
		goto out;
	}
	dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (!dw) {
		struct debugfile_origin origin = { pid, path, strlen(path), st.st_dev, st.st_ino };

		if (!debugfile_open(&debug, elf, &origin, NULL)) {
			have_debug = true;
			dw = dwarf_begin_elf(debug.elf, DWARF_C_READ, NULL);
		}
	}
	err = dw ? read_dwarf(&r, dw) : -ENODATA;
	if (err) {
		*why = "no DWARF line table (build it with -g, or install its debug file)";
		goto out;
	}
	make_lines(&r);
	merge_addresses(r.map);
	index_functions(r.map);
	for (size_t i = 0; i < r.map->naddrs; i++) {
		unsigned char code[16];
		ssize_t got = pread(fd, code, sizeof(code), (off_t)r.map->addrs[i].offset);

		r.map->addrs[i].probeable = got > 0 && uprobes_probeable(code, (size_t)got);
	}
	if (!r.map->naddrs) {
		err = -ENODATA;
		*why = "no line of its functions is in a loaded segment";
	}
out:
	if (dw)
		dwarf_end(dw);
	if (have_debug)
		debugfile_close(&debug);
	if (elf)
		elf_end(elf);
	if (err)
		close(fd);
	else
		r.map->fd = fd;
	free(r.rows);
	free(r.loads);
	free(r.ranges);
	free(r.decl_taken);
	if (err)
		covmap_free(r.map);
	else
		*out = r.map;
	return err;
}

void covmap_free(struct covmap *map)
{
	if (!map)
		return;
	if (map->fd >= 0)
		close(map->fd);
	free(map->path);
	free(map->funcs);
	free(map->lines);
	free(map->addrs);
	free(map->pairs);
	strpool_free(map->strings);
	free(map);
}

const char *covmap_probe_path(const struct covmap *map, char *buf, size_t size)
{
	snprintf(buf, size, "/proc/self/fd/%d", map->fd);
	return buf;
}
