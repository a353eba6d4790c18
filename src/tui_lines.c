/* tui_lines.c — the rows of the screen's Lines view: one function's samples per source line
 * (annotate.h), and with `d` each line's instructions under it (annotate.h's code, as batch --asm
 * prints them). The state is the screen's (struct tui_screen); the keys that move in it are in
 * tui_screen.c's table.
 *
 * The lines come from the cumulative profile whatever the mode: their rows hold the file names of
 * that snapshot's string pool, which every snapshot of the profile shares, so they stay readable
 * until the next rebuild. The function is disassembled once, on the screen's thread, and its
 * samples per address counted again at every rebuild. */
#include "proftop/tui_lines.h"

#include "proftop/disasm.h"
#include "proftop/util.h"

#include <stdlib.h>
#include <string.h>

uint64_t tui_lines_line_key(const struct annotate_line *l)
{
	return l->file ? util_hash_bytes(l->file, strlen(l->file), l->line) : UINT64_MAX;
}

uint64_t tui_lines_row_key(const struct tui_screen *s, size_t i)
{
	const struct tui_lines_row *r = &s->lines_rows[i];

	if (r->insn != TUI_NO_INSN)
		return util_hash_bytes(&s->code.insns[r->insn].addr, sizeof(uint64_t), 0xd15a);
	return r->line == TUI_NO_LINE ? UINT64_MAX - 1 : tui_lines_line_key(&s->lines.lines[r->line]);
}

static int hotter_line(const void *pa, const void *pb, void *arg)
{
	const struct annotate_line *lines = arg, *a = &lines[*(const size_t *)pa],
				   *b = &lines[*(const size_t *)pb];

	if (a->self != b->self)
		return a->self < b->self ? 1 : -1;
	if (a->total != b->total)
		return a->total < b->total ? 1 : -1;
	return *(const size_t *)pa < *(const size_t *)pb ? -1 : 1;
}

/* lines_order: the lines with samples, hottest first. */
static void order_hot_lines(struct tui_screen *s)
{
	size_t n = 0;

	free(s->lines_order);
	s->lines_order = xmalloc((s->lines.nlines ? s->lines.nlines : 1) * sizeof(*s->lines_order));
	for (size_t i = 0; i < s->lines.nlines; i++)
		if (s->lines.lines[i].self || s->lines.lines[i].total)
			s->lines_order[n++] = i;
	qsort_r(s->lines_order, n, sizeof(*s->lines_order), hotter_line, s->lines.lines);
	s->lines_nhot = n;
}

/* lines_func's instructions, made the first time they are asked for. */
static void load_code(struct tui_screen *s, const struct snapshot *src)
{
	if (s->code_func == s->lines_func)
		return;
	if (!s->disasm)
		s->disasm = disasm_new();
	annotate_code_free(&s->code);
	s->code_func = s->lines_func;
	s->code_why = NULL;
	annotate_code_load(&s->code, s->disasm, src, s->lines_func, &s->code_why);
}

static void add_row(struct tui_screen *s, size_t *n, size_t line, size_t insn)
{
	xgrow((void **)&s->lines_rows, &s->lines_rows_cap, *n + 1, sizeof(*s->lines_rows));
	s->lines_rows[(*n)++] = (struct tui_lines_row){ line, insn };
}

/* Each line's row and, with the disassembly on, its instructions under it; those without a line
 * last, under a heading row. Returns how many rows. */
static size_t make_rows(struct tui_screen *s)
{
	bool code = s->lines_asm && !s->code_why;
	size_t n = 0, next = 0;

	for (size_t i = 0; i < s->lines.nlines; i++) {
		size_t upto = code ? annotate_code_upto(&s->code, next, &s->lines.lines[i]) : 0;

		add_row(s, &n, i, TUI_NO_INSN);
		for (; next < upto; next++)
			add_row(s, &n, i, s->code.order[next]);
	}
	if (code && next < s->code.n)
		add_row(s, &n, TUI_NO_LINE, TUI_NO_INSN);
	for (; code && next < s->code.n; next++)
		add_row(s, &n, TUI_NO_LINE, s->code.order[next]);
	return n;
}

size_t tui_lines_row_of_line(const struct tui_screen *s, size_t line)
{
	size_t i = 0;

	while (i + 1 < s->lists[TUI_LINES].rows &&
	       (s->lines_rows[i].line != line || s->lines_rows[i].insn != TUI_NO_INSN))
		i++;
	return i;
}

size_t tui_lines_build(struct tui_screen *s, uint32_t scope)
{
	const struct snapshot *src;

	snapshot_unref(s->lines_src);
	s->lines_src = scope == SNAPSHOT_NO_NODE ? snapshot_ref(s->shown) : snapshot_sites_in(s->shown, scope);
	src = s->lines_src;

	if (!s->sources)
		s->sources = annotate_sources_new();
	annotation_free(&s->lines);
	annotate_function(src, s->lines_func, &s->lines);
	/* Whose processes ran it: of the whole profile, which a scope's snapshot has no threads of. */
	annotate_readers(s->shown, s->lines_func, &s->lines_readers);
	if (s->lines_asm) {
		load_code(s, src);
		annotate_code_positions(&s->code, &s->lines);
		annotate_code_count(&s->code, src, s->lines_func);
	}
	order_hot_lines(s);
	return make_rows(s);
}

void tui_lines_free(struct tui_screen *s)
{
	annotation_free(&s->lines);
	free(s->lines_order);
	free(s->lines_rows);
	annotate_code_free(&s->code);
	disasm_free(s->disasm);
	annotate_sources_free(s->sources);
	snapshot_unref(s->lines_src);
}
