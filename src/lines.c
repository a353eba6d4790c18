/* lines.c — line tables and inlined scopes through libdw (see lines.h).
 *
 * One lookup: the compilation unit that covers the address, its line for the address
 * (dwarf_getsrc_die), and the function scopes around it, innermost first: each
 * DW_TAG_inlined_subroutine is a frame, named through its abstract origin, whose caller's
 * position is its DW_AT_call_file:DW_AT_call_line. Demangled names are interned in a pool so that
 * they live as long as the lines object.
 *
 * Indexes, not walks. libdw's dwarf_getscopes() walks a unit's DIEs on every call: for a function
 * of a megabyte of code with thousands of helpers inlined into it, that is milliseconds per
 * address and minutes for its disassembly. So the units' address ranges are read once (from each
 * unit's own DIE: a corrupt .debug_aranges then costs nothing), and a unit's function scopes
 * (DW_TAG_subprogram, DW_TAG_inlined_subroutine, and those of the partial units it imports) the
 * first time an address falls in it: a lookup is then two binary searches. The scope indexes
 * held are bounded (LINES_INDEX_MAX entries): past it, the others are dropped and rebuilt when
 * asked for again.
 *
 * A range table (units' or scopes') is sorted by start, outer ranges first at one start, and
 * each range links to the range around it (an earlier one). The innermost range holding an
 * address is then the last one starting at or below it, or the first range around that one
 * that still holds it: DWARF nests a scope's ranges inside its parent's. Ranges that do not
 * nest (corrupt DWARF) give a wrong answer, never a crash or an endless walk: links only go
 * back.
 *
 * Memory (lines_memory()). What an open file holds is counted as it is taken: the debug sections
 * libdw inflated (their inflated size) or libelf read into memory (not those of an image mapped
 * whole: they are file pages, which its owner gives back); libdw's units and line tables, which it allocates
 * itself, at what each costs in libdw 0.188 (measured on libc's debug file, libpython and
 * proftop: 1.6 to 4.3 KiB a unit, about 1 KiB and twice its share of .debug_abbrev, within a
 * fifth; 50 to 56 bytes a line-table row with its share of the file names), a table counted the
 * first time it is read; the indexes and names here exactly.
 *
 * Corrupt DWARF is no error of the lookup (it finds less), but the first thing libdw refused is
 * kept, for lines_error(). */
#include "proftop/lines.h"

#include "proftop/demangle.h"
#include "proftop/strpool.h"
#include "proftop/util.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LINES_NONE UINT32_MAX
/* Scope-index entries (scopes and their ranges) held at once: about 25 MiB. */
#define LINES_INDEX_MAX (1u << 19)
/* DIEs one unit's index may visit (partial units importing each other), and how deep. */
#define LINES_UNIT_DIES_MAX (1u << 24)
#define LINES_DEPTH_MAX 256
/* What libdw allocates for a unit (its header and abbreviation table: then twice the bytes of
 * the abbreviations it reads, LINES_ABBREV_COPIES) and for a row of a line table (with its share
 * of the table's file names). */
#define LINES_UNIT_BYTES 1024
#define LINES_ABBREV_COPIES 2
#define LINES_ROW_BYTES 56

struct lines_range {
	uint64_t lo, hi;        /* [lo, hi) */
	uint32_t id;            /* the unit's or scope's index */
	uint32_t up;            /* the range around this one; LINES_NONE */
	uint32_t depth;         /* of the scope in the DIE tree (0 for units) */
};

struct lines_scope {
	Dwarf_Die die;
	uint32_t parent;        /* the function scope around it; LINES_NONE */
	bool inlined;
	bool named;             /* name below is looked up */
	const char *name;
};

/* A unit's function scopes, innermost range by address. */
struct lines_index {
	struct lines_scope *scopes;
	size_t nscopes, scopes_cap;
	struct lines_range *ranges;
	size_t nranges, ranges_cap;
	size_t visited;         /* DIEs, while it is built */
};

struct lines_unit {
	Dwarf_Die die;
	struct lines_index *index;   /* NULL: not built (or dropped) */
	bool table_counted;          /* its line table is in table_bytes */
};

struct lines {
	Dwarf *dwarf;
	struct strpool *names;       /* demangled names, joined paths */
	struct lines_unit *units;
	size_t nunits;
	struct lines_range *unit_ranges;
	size_t nunit_ranges;
	size_t indexed;              /* entries in the units' indexes */
	size_t section_bytes;        /* the debug sections held (file comment) */
	size_t abbrev_bytes;         /* of .debug_abbrev */
	size_t table_bytes;          /* libdw's units and line tables */
	size_t index_bytes;          /* the units' indexes */
	size_t name_bytes;           /* names */
	char error[200];             /* the first thing libdw refused; "" */
};

/* Keep the first failure of libdw: what was being read, and libdw's word for what was wrong. */
static void note_error(struct lines *l, const char *what)
{
	const char *msg = dwarf_errmsg(-1);

	if (!l->error[0])
		snprintf(l->error, sizeof(l->error), "%s: %s", what, msg ? msg : "invalid DWARF");
}

const char *lines_error(const struct lines *l)
{
	return l->error[0] ? l->error : NULL;
}

/* ---- range tables ------------------------------------------------------------------------- */

static int compare_ranges(const void *pa, const void *pb)
{
	const struct lines_range *a = pa, *b = pb;

	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	if (a->depth != b->depth)
		return a->depth < b->depth ? -1 : 1;
	return (a->id > b->id) - (a->id < b->id);
}

/* Sort r[0..n) and link each range to the one around it. */
static void ranges_finish(struct lines_range *r, size_t n)
{
	uint32_t *stack;
	size_t top = 0;

	if (!n)
		return;
	stack = xmalloc(n * sizeof(*stack));
	qsort(r, n, sizeof(*r), compare_ranges);
	for (size_t i = 0; i < n; i++) {
		while (top && (r[stack[top - 1]].hi <= r[i].lo || r[stack[top - 1]].depth >= r[i].depth))
			top--;
		r[i].up = top ? stack[top - 1] : LINES_NONE;
		stack[top++] = (uint32_t)i;
	}
	free(stack);
}

/* The innermost range of r[0..n) that holds addr; LINES_NONE. */
static uint32_t ranges_find(const struct lines_range *r, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;
	uint32_t at;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return LINES_NONE;
	for (at = (uint32_t)(lo - 1); at != LINES_NONE && addr >= r[at].hi; at = r[at].up)
		;
	return at;
}

/* Append die's address ranges to *r as id's, at depth. Returns false when libdw refused them. */
static bool ranges_of(Dwarf_Die *die, uint32_t id, uint32_t depth, struct lines_range **r,
		      size_t *n, size_t *cap)
{
	Dwarf_Addr base = 0, start, end;
	ptrdiff_t off = 0;

	while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0) {
		if (end <= start)
			continue;
		xgrow((void **)r, cap, *n + 1, sizeof(**r));
		(*r)[(*n)++] = (struct lines_range){ start, end, id, LINES_NONE, depth };
	}
	return off == 0;
}

/* ---- units -------------------------------------------------------------------------------- */

/* Every compilation unit (and skeleton) and its ranges. A unit whose header cannot be read ends
 * the list: where the next one starts is then unknown. */
static void read_units(struct lines *l)
{
	size_t cap = 0, ranges_cap = 0;
	Dwarf_CU *cu = NULL;
	Dwarf_Half version;
	uint8_t type;
	Dwarf_Die die, sub;
	int r, tag;

	while ((r = dwarf_get_units(l->dwarf, cu, &cu, &version, &type, &die, &sub)) == 0) {
		if (type != DW_UT_compile && type != DW_UT_skeleton)
			continue;
		tag = dwarf_tag(&die);
		if (tag != DW_TAG_compile_unit && tag != DW_TAG_skeleton_unit) {
			note_error(l, "the DIE of a unit (.debug_info, .debug_abbrev)");
			continue;
		}
		if (l->nunits >= LINES_NONE - 1)
			break;
		xgrow((void **)&l->units, &cap, l->nunits + 1, sizeof(*l->units));
		l->units[l->nunits] = (struct lines_unit){ .die = die };
		if (!ranges_of(&die, (uint32_t)l->nunits, 0, &l->unit_ranges, &l->nunit_ranges,
			       &ranges_cap))
			note_error(l, "the address ranges of a unit (.debug_info, .debug_rnglists)");
		l->nunits++;
	}
	if (r < 0)
		note_error(l, "a unit header (.debug_info)");
	ranges_finish(l->unit_ranges, l->nunit_ranges);
	l->table_bytes += l->nunits * LINES_UNIT_BYTES + LINES_ABBREV_COPIES * l->abbrev_bytes +
			  cap * sizeof(*l->units) + ranges_cap * sizeof(*l->unit_ranges);
}

/* ---- the sections held -------------------------------------------------------------------- */

/* Whether name is one of the sections libdw reads (loading each when it opens the file), and
 * whether lookups read it: units (type units counted with them), their DIEs, strings, ranges and
 * line tables, not locations, macros, aranges or name indexes. */
static bool debug_section(const char *name, bool *looked_up)
{
	static const struct { const char *name; bool looked_up; } known[] = {
		{ "info", true },  { "abbrev", true },    { "line", true },      { "line_str", true },
		{ "str", true },   { "str_offsets", true }, { "addr", true },    { "ranges", true },
		{ "rnglists", true }, { "types", true }, { "aranges", false },
		{ "loc", false },  { "loclists", false }, { "pubnames", false }, { "macinfo", false },
		{ "macro", false },
	};
	const char *base;

	if (!name || (strncmp(name, ".debug_", 7) && strncmp(name, ".zdebug_", 8)))
		return false;
	base = name + (name[1] == 'z' ? 8 : 7);
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(base, known[i].name)) {
			*looked_up = known[i].looked_up;
			return true;
		}
	return false;
}

/* Which sections of elf are compressed, as a bitmap by index (NULL: none): what dwarf_begin_elf()
 * is about to inflate. */
static unsigned char *compressed_sections(Elf *elf)
{
	size_t shnum = 0;
	unsigned char *map = NULL;
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	if (elf_getshdrnum(elf, &shnum) || !shnum)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		size_t i = elf_ndxscn(scn);

		if (i >= shnum || !gelf_getshdr(scn, &shdr) || !(shdr.sh_flags & SHF_COMPRESSED))
			continue;
		if (!map)
			map = xcalloc(shnum / 8 + 1, 1);
		map[i / 8] |= (unsigned char)(1u << (i % 8));
	}
	return map;
}

/* The debug sections lookups never read (locations, macros, aranges, name indexes), hidden from
 * libdw in an ELF file read from its descriptor: libdw reads (and inflates, 15% of a libc's
 * debug file) every debug section it knows when it opens a file. Their headers are libelf's copy:
 * marked SHT_NOBITS, which libdw skips. An image mapped whole is left as it is: its headers may be
 * the image's own bytes, which other readers of the module share. */
static void hide_unread(Elf *elf)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		bool looked_up = true;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type == SHT_NOBITS ||
		    !debug_section(elf_strptr(elf, shstrndx, shdr.sh_name), &looked_up) || looked_up)
			continue;
		shdr.sh_type = SHT_NOBITS;
		gelf_update_shdr(scn, &shdr);
	}
}

/* The bytes of elf's debug sections the open DWARF holds in memory: those libdw inflated, and
 * (not mapped) the others libelf read. Only sections libdw has read already are looked at, so
 * nothing is read here. */
static size_t held_sections(Elf *elf, bool mapped, const unsigned char *compressed,
			    size_t *abbrev)
{
	size_t shstrndx, shnum = 0, bytes = 0;
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	if (elf_getshdrstrndx(elf, &shstrndx) || elf_getshdrnum(elf, &shnum))
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		size_t i = elf_ndxscn(scn);
		bool inflated = compressed && i < shnum && (compressed[i / 8] >> (i % 8) & 1);
		bool looked_up = false;
		const char *name;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type == SHT_NOBITS ||
		    (inflated && (shdr.sh_flags & SHF_COMPRESSED)))
			continue; /* (still compressed: not inflated, libdw ignores it) */
		name = elf_strptr(elf, shstrndx, shdr.sh_name);
		if (!debug_section(name, &looked_up) || !(data = elf_getdata(scn, NULL)))
			continue;
		if (!strcmp(name + (name[1] == 'z' ? 8 : 7), "abbrev"))
			*abbrev = data->d_size;
		if (!mapped || inflated || name[1] == 'z') /* else file pages (.zdebug_: inflated) */
			bytes += data->d_size;
	}
	return bytes;
}

struct lines *lines_new(Elf *elf, bool mapped, const char **why)
{
	unsigned char *compressed = NULL;
	struct lines *l;
	Dwarf *dwarf;

	if (elf && !mapped)
		hide_unread(elf);
	compressed = elf ? compressed_sections(elf) : NULL;
	dwarf = elf ? dwarf_begin_elf(elf, DWARF_C_READ, NULL) : NULL;
	if (!dwarf) {
		*why = elf ? dwarf_errmsg(-1) : "no ELF image";
		free(compressed);
		return NULL;
	}
	l = xcalloc(1, sizeof(*l));
	l->dwarf = dwarf;
	l->names = strpool_new();
	l->section_bytes = held_sections(elf, mapped, compressed, &l->abbrev_bytes);
	free(compressed);
	read_units(l);
	return l;
}

size_t lines_memory(const struct lines *l)
{
	return sizeof(*l) + l->section_bytes + l->table_bytes + l->index_bytes + l->name_bytes;
}

static size_t index_size(const struct lines_index *x)
{
	return sizeof(*x) + x->scopes_cap * sizeof(*x->scopes) + x->ranges_cap * sizeof(*x->ranges);
}

static void index_free(struct lines_index *x)
{
	if (!x)
		return;
	free(x->scopes);
	free(x->ranges);
	free(x);
}

void lines_free(struct lines *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->nunits; i++)
		index_free(l->units[i].index);
	free(l->units);
	free(l->unit_ranges);
	dwarf_end(l->dwarf);
	strpool_free(l->names);
	free(l);
}

/* ---- a unit's scopes ---------------------------------------------------------------------- */

static void index_children(struct lines *l, struct lines_index *x, Dwarf_Die *die, uint32_t scope,
			   uint32_t depth);

/* die and what it holds: a function scope is added with its ranges; an imported unit's DIEs
 * are walked as if they were here. */
static void index_die(struct lines *l, struct lines_index *x, Dwarf_Die *die, uint32_t scope,
		      uint32_t depth)
{
	int tag = dwarf_tag(die);

	if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
		uint32_t id = (uint32_t)x->nscopes;

		xgrow((void **)&x->scopes, &x->scopes_cap, x->nscopes + 1, sizeof(*x->scopes));
		x->scopes[x->nscopes++] = (struct lines_scope){ .die = *die, .parent = scope,
								.inlined = tag == DW_TAG_inlined_subroutine };
		if (!ranges_of(die, id, depth, &x->ranges, &x->nranges, &x->ranges_cap))
			note_error(l, "the address ranges of a function (.debug_info, .debug_rnglists)");
		scope = id;
	} else if (tag == DW_TAG_imported_unit) {
		Dwarf_Attribute attr;
		Dwarf_Die unit;

		if (dwarf_formref_die(dwarf_attr(die, DW_AT_import, &attr), &unit))
			index_children(l, x, &unit, scope, depth + 1);
		return;
	}
	if (dwarf_haschildren(die) > 0)
		index_children(l, x, die, scope, depth + 1);
}

static void index_children(struct lines *l, struct lines_index *x, Dwarf_Die *die, uint32_t scope,
			   uint32_t depth)
{
	Dwarf_Die child;
	int r;

	if (depth > LINES_DEPTH_MAX) {
		if (!l->error[0])
			snprintf(l->error, sizeof(l->error), "the scopes of a unit: nested over %d deep",
				 LINES_DEPTH_MAX);
		return;
	}
	for (r = dwarf_child(die, &child); r == 0; r = dwarf_siblingof(&child, &child)) {
		if (++x->visited > LINES_UNIT_DIES_MAX || x->nscopes >= LINES_NONE - 1) {
			if (!l->error[0])
				snprintf(l->error, sizeof(l->error), "the scopes of a unit: over %u "
					 "DIEs (units importing each other?)", LINES_UNIT_DIES_MAX);
			return;
		}
		index_die(l, x, &child, scope, depth);
	}
	if (r < 0)
		note_error(l, "the DIEs of a unit (.debug_info, .debug_abbrev)");
}

/* Drop every unit's index, to stay within LINES_INDEX_MAX. */
static void drop_indexes(struct lines *l)
{
	for (size_t i = 0; i < l->nunits; i++) {
		index_free(l->units[i].index);
		l->units[i].index = NULL;
	}
	l->indexed = 0;
	l->index_bytes = 0;
}

static struct lines_index *unit_index(struct lines *l, struct lines_unit *u)
{
	struct lines_index *x;

	if (u->index)
		return u->index;
	if (l->indexed > LINES_INDEX_MAX)
		drop_indexes(l);
	x = xcalloc(1, sizeof(*x));
	index_children(l, x, &u->die, LINES_NONE, 0);
	ranges_finish(x->ranges, x->nranges);
	l->indexed += x->nscopes + x->nranges;
	l->index_bytes += index_size(x);
	u->index = x;
	return x;
}

/* ---- one lookup --------------------------------------------------------------------------- */

/* s[0..len) in the names, counted when new. */
static const char *intern_name(struct lines *l, const char *s, size_t len)
{
	if (!strpool_find(l->names, s, len))
		l->name_bytes += strpool_cost(len);
	return strpool_intern(l->names, s, len);
}

/* The name of a function's DIE (followed to its abstract origin or declaration): its linkage
 * name demangled, else its plain name; NULL when it has neither. */
static const char *die_function(struct lines *l, Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *linkage = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	char *demangled;
	const char *name;

	if (!linkage)
		linkage = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
	demangled = linkage ? demangle_name(linkage) : NULL;
	if (demangled) {
		name = intern_name(l, demangled, strlen(demangled));
		free(demangled);
		return name;
	}
	return linkage ? linkage : dwarf_diename(die);
}

static const char *scope_name(struct lines *l, struct lines_scope *s)
{
	if (!s->named) {
		s->name = die_function(l, &s->die);
		s->named = true;
	}
	return s->name;
}

/* A file name of the unit as a path from the root: one the compiler recorded relative (to the
 * directory it ran in, as `gcc -g tests/x.c` does) joined to the unit's DW_AT_comp_dir. An empty
 * name is no name. */
static const char *absolute(struct lines *l, Dwarf_Die *cu, const char *file)
{
	Dwarf_Attribute attr;
	const char *dir;
	char *joined;

	if (!file || !*file)
		return NULL;
	if (file[0] == '/')
		return file;
	dir = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr));
	if (!dir || !*dir)
		return file;
	joined = xasprintf("%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", file);
	file = intern_name(l, joined, strlen(joined));
	free(joined);
	return file;
}

/* Where an inlined subroutine was called from: its DW_AT_call_file and DW_AT_call_line. */
static void call_site(struct lines *l, Dwarf_Die *cu, Dwarf_Die *inlined, struct lines_frame *caller)
{
	Dwarf_Attribute attr;
	Dwarf_Word file = 0, line = 0;
	Dwarf_Files *files;
	size_t nfiles;

	caller->file = NULL;
	caller->line = 0;
	if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_line, &attr), &line) == 0)
		caller->line = line > UINT32_MAX ? 0 : (unsigned)line;
	if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_file, &attr), &file) == 0 &&
	    dwarf_getsrcfiles(cu, &files, &nfiles) == 0 && file < nfiles)
		caller->file = absolute(l, cu, dwarf_filesrc(files, file, NULL, NULL));
}

/* The address's own line, in frame. A line table that cannot be read is corrupt; an address
 * the table has no row for is not. */
static void own_line(struct lines *l, struct lines_unit *u, uint64_t addr, struct lines_frame *frame)
{
	Dwarf_Die *cu = &u->die;
	Dwarf_Lines *table;
	Dwarf_Line *line = NULL;
	size_t nlines;
	int lineno = 0;

	if (dwarf_getsrclines(cu, &table, &nlines) == 0) {
		if (!u->table_counted)
			l->table_bytes += nlines * LINES_ROW_BYTES;
		u->table_counted = true;
		line = dwarf_getsrc_die(cu, addr);
	} else
		note_error(l, "the line table of a unit (.debug_line)");
	frame->file = line ? absolute(l, cu, dwarf_linesrc(line, NULL, NULL)) : NULL;
	frame->line = frame->file && dwarf_lineno(line, &lineno) == 0 && lineno > 0 ? (unsigned)lineno : 0;
}

size_t lines_lookup(struct lines *l, uint64_t addr, struct lines_frame *out, size_t max)
{
	uint32_t unit = ranges_find(l->unit_ranges, l->nunit_ranges, addr), at;
	struct lines_frame position;
	struct lines_index *x;
	struct lines_unit *u;
	size_t n = 0;

	if (!max || unit == LINES_NONE)
		return 0;
	u = &l->units[l->unit_ranges[unit].id];
	own_line(l, u, addr, &position);
	x = unit_index(l, u);
	at = ranges_find(x->ranges, x->nranges, addr);
	/* Innermost first: each function scope is a frame at the position found so far; an
	 * inlined one moves the position to its call site for the frame around it. Parents come
	 * before their children in scopes[], so the walk ends. */
	for (uint32_t s = at == LINES_NONE ? LINES_NONE : x->ranges[at].id; s != LINES_NONE && n < max;
	     s = x->scopes[s].parent) {
		struct lines_scope *scope = &x->scopes[s];

		out[n] = position;
		out[n].function = scope_name(l, scope);
		out[n].inlined = scope->inlined;
		n++;
		if (!scope->inlined)
			break;
		call_site(l, &u->die, &scope->die, &position);
	}
	/* No function scope (assembly, a unit without subprograms): the line alone. */
	if (n == 0) {
		out[0] = position;
		out[0].function = NULL;
		out[0].inlined = false;
		n = position.file ? 1 : 0;
	}
	return n;
}
