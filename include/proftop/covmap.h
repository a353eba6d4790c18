/* covmap.h — what coverage mode counts in one ELF file: its functions, their source lines, and
 * the instructions that start each line (the DWARF line table's is_stmt rows, libdw), each with
 * the file offset a probe is placed at (uprobes.h).
 *
 * A function's entry address counts on its declaration's line, as gcov counts its calls there
 * (the line table has the opening brace), so that line counts the function's calls. A line's
 * count is the most any of its addresses ran (gcov's rule: a `for` line's test runs once more
 * than its body, its initialisation once; measured on an -O0 program, the same counts gcov
 * gives). The module's own DWARF is read, or its separate debug file's (debugfile.h). A
 * function in several address ranges (GCC's hot and cold parts) keeps the lines of each. */
#ifndef PROFTOP_COVMAP_H
#define PROFTOP_COVMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct strpool;

struct covmap_func {
	const char *name;          /* demangled; never NULL */
	uint64_t entry, end;       /* link-time addresses: [entry, end) */
	uint32_t first_line;       /* its lines are [first_line, first_line + nlines) */
	uint32_t nlines;
	uint32_t entry_line;       /* the line with its entry address (UINT32_MAX: none) */
	const char *decl_file;     /* where it is declared (NULL, 0: unknown) */
	unsigned decl_line;
};

struct covmap_line {
	const char *file;          /* as the line table names it (joined to its directory) */
	unsigned line;
	uint32_t func;
	uint64_t addr;             /* its first address (where it shows in a profile) */
};

/* An address that starts one of the lines (the same address may start more than one). */
struct covmap_addr {
	uint64_t addr, offset;     /* link-time address, and its file offset */
	bool probeable;            /* its instruction can be probed (uprobes_probeable()) */
};

/* Which lines an address starts: one pair per (line, address). */
struct covmap_pair {
	uint32_t line, addr;
};

struct covmap {
	char *path;                /* the file read */
	/* The file, open: probes name it by /proc/self/fd/FD (covmap_probe_path()), so that a file
	 * replaced at its path (rebuilt) is never probed at this one's offsets. */
	int fd;
	dev_t dev;
	ino_t ino;
	struct covmap_func *funcs;   /* by entry address */
	size_t nfuncs;
	struct covmap_line *lines;   /* by function, then line */
	size_t nlines;
	struct covmap_addr *addrs;   /* by address, each once */
	size_t naddrs;
	struct covmap_pair *pairs;   /* by line */
	size_t npairs;
	struct strpool *strings;   /* every name and file above */
};

/* Read path's functions and lines. pid: a process mapping it (its root is searched first for a
 * debug file), or 0. Returns 0, or -errno with *why (static) saying what was wrong: -ENOEXEC
 * not ELF, -ENODATA no DWARF line table (built without -g). */
int covmap_read(const char *path, pid_t pid, struct covmap **out, const char **why);
void covmap_free(struct covmap *map);
/* The path that names map's own file for as long as map lives, into buf. */
const char *covmap_probe_path(const struct covmap *map, char *buf, size_t size);

#endif
