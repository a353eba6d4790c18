/* lines.c — line tables and inlined scopes through libdw (see lines.h).
 *
 * One lookup: the compilation unit that covers the address (dwarf_addrdie, from .debug_aranges
 * or the units' own ranges), its line for the address (dwarf_getsrc_die), and the scopes around
 * it, innermost first (dwarf_getscopes): each DW_TAG_inlined_subroutine is a frame, named through
 * its abstract origin, whose caller's position is its DW_AT_call_file:DW_AT_call_line. Demangled
 * names are interned in a pool so that they live as long as the lines object. */
#include "proftop/lines.h"

#include "proftop/demangle.h"
#include "proftop/strpool.h"
#include "proftop/util.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdlib.h>
#include <string.h>

struct lines {
	Dwarf *dwarf;
	struct strpool *names;   /* demangled names */
};

struct lines *lines_new(Elf *elf, const char **why)
{
	struct lines *l;
	Dwarf *dwarf = elf ? dwarf_begin_elf(elf, DWARF_C_READ, NULL) : NULL;

	if (!dwarf) {
		*why = elf ? dwarf_errmsg(-1) : "no ELF image";
		return NULL;
	}
	l = xcalloc(1, sizeof(*l));
	l->dwarf = dwarf;
	l->names = strpool_new();
	return l;
}

void lines_free(struct lines *l)
{
	if (!l)
		return;
	dwarf_end(l->dwarf);
	strpool_free(l->names);
	free(l);
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
		name = strpool_intern(l->names, demangled, strlen(demangled));
		free(demangled);
		return name;
	}
	return linkage ? linkage : dwarf_diename(die);
}

/* A file name of the unit as a path from the root: one the compiler recorded relative (to the
 * directory it ran in, as `gcc -g tests/x.c` does) joined to the unit's DW_AT_comp_dir. */
static const char *absolute(struct lines *l, Dwarf_Die *cu, const char *file)
{
	Dwarf_Attribute attr;
	const char *dir;
	char *joined;

	if (!file || file[0] == '/')
		return file;
	dir = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr));
	if (!dir || !*dir)
		return file;
	joined = xasprintf("%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", file);
	file = strpool_intern(l->names, joined, strlen(joined));
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

/* The address's own line, in frame. */
static void own_line(struct lines *l, Dwarf_Die *cu, uint64_t addr, struct lines_frame *frame)
{
	Dwarf_Line *line = dwarf_getsrc_die(cu, addr);
	int lineno = 0;

	frame->file = line ? absolute(l, cu, dwarf_linesrc(line, NULL, NULL)) : NULL;
	frame->line = line && dwarf_lineno(line, &lineno) == 0 && lineno > 0 ? (unsigned)lineno : 0;
}

size_t lines_lookup(struct lines *l, uint64_t addr, struct lines_frame *out, size_t max)
{
	Dwarf_Die cu, *scopes = NULL;
	struct lines_frame position;
	size_t n = 0;
	int nscopes;

	if (!max || !dwarf_addrdie(l->dwarf, addr, &cu))
		return 0;
	own_line(l, &cu, addr, &position);
	/* dwarf_getscopes() goes on from an inlined subroutine into its abstract definition's
	 * scopes; the functions it was inlined into are the DIEs that hold it, which
	 * dwarf_getscopes_die() lists from the innermost scope out. */
	nscopes = dwarf_getscopes(&cu, addr, &scopes);
	if (nscopes > 0) {
		Dwarf_Die innermost = scopes[0];

		free(scopes);
		scopes = NULL;
		nscopes = dwarf_getscopes_die(&innermost, &scopes);
	}
	/* Innermost first: each function scope is a frame at the position found so far; an
	 * inlined one moves the position to its call site for the frame around it. */
	for (int i = 0; i < nscopes && n < max; i++) {
		int tag = dwarf_tag(&scopes[i]);

		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue;
		out[n] = position;
		out[n].function = die_function(l, &scopes[i]);
		out[n].inlined = tag == DW_TAG_inlined_subroutine;
		n++;
		if (tag == DW_TAG_subprogram)
			break;
		call_site(l, &cu, &scopes[i], &position);
	}
	free(scopes);
	/* No function scope (assembly, a unit without subprograms): the line alone. */
	if (n == 0) {
		out[0] = position;
		out[0].function = NULL;
		out[0].inlined = false;
		n = position.file ? 1 : 0;
	}
	return n;
}
