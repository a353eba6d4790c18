/* disasm.h — a function's instructions, each with its source line, for annotate views: read from
 * the ELF file on disk (and its DWARF, or its debug file's) by a frontend, apart from the
 * collector, and disassembled with capstone (x86-64).
 *
 * A disassembler keeps each file it opened (a module of its own, module.h) until disasm_free(),
 * but not its DWARF, which each function's lines open again: one per frontend thread, nothing
 * shared. */
#ifndef PROFTOP_DISASM_H
#define PROFTOP_DISASM_H

#include <stddef.h>
#include <stdint.h>

/* A function bigger than this is not disassembled. */
#define DISASM_MAX_BYTES (4u << 20)

struct disasm;
struct module;

struct disasm_insn {
	uint64_t addr;          /* link-time address */
	unsigned size;          /* its bytes: [addr, addr + size) */
	const char *file;       /* its source line, as the function's own frame sees it (code
				 * inlined there is on the line of the inlined call); NULL, 0 */
	unsigned line;
	char text[112];         /* "mnemonic operands", cut to fit */
};

struct disasm *disasm_new(void);
void disasm_free(struct disasm *disasm);

/* The instructions of [start, end) of the ELF file at path into *out (malloc'd) and *n. Returns
 * 0, or -errno with *why (a static string) saying what was wrong: the file cannot be opened or
 * read, it no longer has a function starting at start (rebuilt since it was profiled), the
 * range is too big, not in the file, or not x86-64 code. */
int disasm_function(struct disasm *disasm, const char *path, uint64_t start, uint64_t end,
		    struct disasm_insn **out, size_t *n, const char **why);
/* A function's link-time range, [start, end). */
struct disasm_range {
	uint64_t start, end;
};

/* The instructions of the inlined function name (a lines.h frame's; "[inlined]" for those the
 * DWARF names none) in the functions ranges[0..nranges) (by start, as the profile saw them: those
 * its samples were in) of the ELF file at path: the instructions whose chain of inlined frames has
 * name in it, each with the line that frame has there (a line of name's own source, as its
 * samples are counted). By address, into *out (malloc'd) and *n. The functions are read up to
 * DISASM_MAX_BYTES in all, the first ones first. Returns 0, or -errno with *why (static) as
 * disasm_function() says it, or saying that none of the instructions there is name's. */
int disasm_inlined(struct disasm *disasm, const char *path, const char *name,
		   const struct disasm_range *ranges, size_t nranges, struct disasm_insn **out,
		   size_t *n, const char **why);
/* The instructions of code[0..size), at link-time address start, into *out (malloc'd; NULL when
 * there are none), with their source lines from mod (NULL: none). Returns how many. What
 * disasm_function() does once it has the bytes: no file is read but mod's DWARF. */
size_t disasm_bytes(struct disasm *disasm, struct module *mod, const unsigned char *code,
		    size_t size, uint64_t start, struct disasm_insn **out);

#endif
