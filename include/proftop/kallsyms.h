/* kallsyms.h — the kernel's function names, from /proc/kallsyms, for the kernel frames of
 * --kernel stacks ("pipe_read", "futex_wait", "do_nanosleep").
 *
 * The file has one line per symbol: "ADDRESS TYPE NAME", ADDRESS in hex, then for a module's
 * symbol a tab and "[MODULE]". Only code symbols (types t, T, w, W) name functions; a function
 * ends where the next one starts, and at most KALLSYMS_FUNC_MAX bytes after its start (what lies
 * past the last one, BPF programs or the like, stays unnamed). Core kernel functions are of the
 * module "[kernel.kallsyms]", as perf names it, a module's of "[MODULE]".
 *
 * Unless root (or CAP_SYSLOG) reads it where kernel.kptr_restrict allows, every address is 0:
 * there is nothing to look up then, and kallsyms_load() says so. Not thread-safe. */
#ifndef PROFTOP_KALLSYMS_H
#define PROFTOP_KALLSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where the kernel's half of the address space starts on x86-64. */
#define KALLSYMS_KERNEL_START 0xffff800000000000ull
#define KALLSYMS_FUNC_MAX (1u << 20)
/* Longer names (and module names) are not the kernel's: their lines are skipped. */
#define KALLSYMS_NAME_MAX 512u

struct kallsyms_line {
	uint64_t addr;
	char type;
	const char *name;     /* into the line, name_len bytes */
	size_t name_len;
	const char *module;   /* into the line, without its brackets; NULL: the core kernel's */
	size_t module_len;
};

/* Parse one line (len bytes, without its newline). Returns 0, or -EINVAL for anything else,
 * which callers skip: no address, no one-letter type, no name, a name or module too long or
 * holding control characters, text after the module. Pure. */
int kallsyms_parse_line(const char *line, size_t len, struct kallsyms_line *out);

struct kallsyms;

/* The code symbols of text, len bytes in the file's format (lines that do not parse skipped). */
struct kallsyms *kallsyms_parse(const char *text, size_t len);
/* Read path (NULL: /proc/kallsyms). NULL when it cannot be read or names no function at an
 * address (kptr_restrict), with *why saying which (for the user; free it). */
struct kallsyms *kallsyms_load(const char *path, char **why);
void kallsyms_free(struct kallsyms *k);
size_t kallsyms_count(const struct kallsyms *k);

/* The function holding addr: its name, and its start and module ("[kernel.kallsyms]",
 * "[ext4]") in *start and *module; NULL when none does. The strings live as long as k. */
const char *kallsyms_lookup(const struct kallsyms *k, uint64_t addr, uint64_t *start,
			    const char **module);
/* The function named name in module ("[ext4]"; NULL: in any, the core kernel's first), as
 * kallsyms_lookup() names it: its name, start and module, the strings living as long as k; NULL
 * when there is none (an alias of another name at the same address is not kept). The first call
 * indexes the names. */
const char *kallsyms_find(struct kallsyms *k, const char *name, const char *module,
			  uint64_t *start, const char **module_out);

#endif
