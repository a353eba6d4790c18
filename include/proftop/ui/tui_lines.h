/* tui_lines.h — the rows of the screen's Lines view (tui_lines.c): a function's source lines with
 * their samples, and with the disassembly on each line's instructions under it. */
#ifndef PROFTOP_TUI_LINES_H
#define PROFTOP_TUI_LINES_H

#include "proftop/annotate.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct disasm;
struct snapshot;

/* A row of the Lines view: a source line, or with the disassembly on, one of the instructions
 * under it. */
#define TUI_NO_INSN SIZE_MAX   /* insn of a line's own row */
#define TUI_NO_LINE SIZE_MAX   /* line of the instructions without one (and of their heading) */

struct tui_lines_row {
	size_t line;           /* its line in lines.lines, or the line it is under */
	size_t insn;           /* its instruction in code.insns */
};

struct tui_lines {
	struct annotation lines; /* lines.lines[0..nlines) */
	size_t *order;         /* its lines with samples, hottest first by self (for n and N) */
	size_t nhot;           /* how many */
	struct annotate_sources *sources; /* source texts, read once each */
	struct annotate_readers readers; /* who the function's sources are read as */
	struct tui_lines_row *rows; /* nrows of them */
	size_t nrows, rows_cap;
	/* What the rows were made from: the shown snapshot, or its sites in the thread scope. */
	struct snapshot *src;
	/* The disassembly, made on the screen's thread once per function: code_func's
	 * instructions in code, or code_why says why there are none. The reader keeps the files
	 * it opened (the instructions' file names live there) until the view is freed. */
	struct disasm *disasm;
	struct annotate_code code;
	uint32_t code_func;    /* 0: none made yet */
	const char *code_why;  /* NULL: code holds code_func's instructions */
};

/* The rows of func again, with order its lines by heat, from shown, or its sites in the
 * subtree under scope (a thread's root; SNAPSHOT_NO_NODE: all), which becomes src; with_code:
 * each line's instructions under it. Returns how many rows. */
size_t tui_lines_build(struct tui_lines *lines, struct snapshot *shown, uint32_t func,
		       bool with_code, uint32_t scope);
/* A source line's key: its file and number. */
uint64_t tui_lines_line_key(const struct annotate_line *line);
/* A row's key: its line's file and number, or its instruction's address. */
uint64_t tui_lines_row_key(const struct tui_lines *lines, size_t row);
/* The row of line (its own, not its instructions'). */
size_t tui_lines_row_of_line(const struct tui_lines *lines, size_t line);
void tui_lines_free(struct tui_lines *lines);

#endif
