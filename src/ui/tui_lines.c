/* tui_lines.c — the rows of the screen's Lines view: one function's samples per source line
 * (annotate.h), and with `d` each line's instructions under it (annotate.h's code, as batch --asm
 * prints them). Its state is its own (struct tui_lines, which the screen holds); the keys that
 * move in it are in tui_screen.c's table.
 *
 * The lines come from the cumulative profile whatever the mode: their rows hold the file names of
 * that snapshot's string pool, which every snapshot of the profile shares, so they stay readable
 * until the next rebuild. The function is disassembled once, on the screen's thread, and its
 * samples per address counted again at every rebuild. */
#include "proftop/ui/tui_lines.h"

#include "proftop/disasm.h"
#include "proftop/snapshot.h"
#include "proftop/util.h"

#include <stdlib.h>
#include <string.h>

uint64_t tui_lines_line_key(const struct annotate_line *l)
{
	return l->file ? util_hash_bytes(l->file, strlen(l->file), l->line) : UINT64_MAX;
}

uint64_t tui_lines_row_key(const struct tui_lines *lv, size_t i)
{
	const struct tui_lines_row *r = &lv->rows[i];

	if (r->insn != TUI_NO_INSN)
		return util_hash_bytes(&lv->code.insns[r->insn].addr, sizeof(uint64_t), 0xd15a);
	return r->line == TUI_NO_LINE ? UINT64_MAX - 1 : tui_lines_line_key(&lv->lines.lines[r->line]);
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
static void order_hot_lines(struct tui_lines *lv)
{
	size_t n = 0;

	free(lv->order);
	lv->order = xmalloc((lv->lines.nlines ? lv->lines.nlines : 1) * sizeof(*lv->order));
	for (size_t i = 0; i < lv->lines.nlines; i++)
		if (lv->lines.lines[i].self || lv->lines.lines[i].total)
			lv->order[n++] = i;
	qsort_r(lv->order, n, sizeof(*lv->order), hotter_line, lv->lines.lines);
	lv->nhot = n;
}

/* func's instructions, made the first time they are asked for. */
static void load_code(struct tui_lines *lv, const struct snapshot *src, uint32_t func)
{
	if (lv->code_func == func)
		return;
	if (!lv->disasm)
		lv->disasm = disasm_new();
	annotate_code_free(&lv->code);
	lv->code_func = func;
	lv->code_why = NULL;
	annotate_code_load(&lv->code, lv->disasm, src, func, &lv->code_why);
}

static void add_row(struct tui_lines *lv, size_t *n, size_t line, size_t insn)
{
	xgrow((void **)&lv->rows, &lv->rows_cap, *n + 1, sizeof(*lv->rows));
	lv->rows[(*n)++] = (struct tui_lines_row){ line, insn };
}

/* Each line's row and, with the disassembly on, its instructions under it; those without a line
 * last, under a heading row. Returns how many rows. */
static size_t make_rows(struct tui_lines *lv, bool with_code)
{
	bool code = with_code && !lv->code_why;
	size_t n = 0, next = 0;

	for (size_t i = 0; i < lv->lines.nlines; i++) {
		size_t upto = code ? annotate_code_upto(&lv->code, next, &lv->lines.lines[i]) : 0;

		add_row(lv, &n, i, TUI_NO_INSN);
		for (; next < upto; next++)
			add_row(lv, &n, i, lv->code.order[next]);
	}
	if (code && next < lv->code.n)
		add_row(lv, &n, TUI_NO_LINE, TUI_NO_INSN);
	for (; code && next < lv->code.n; next++)
		add_row(lv, &n, TUI_NO_LINE, lv->code.order[next]);
	return n;
}

size_t tui_lines_row_of_line(const struct tui_lines *lv, size_t line)
{
	size_t i = 0;

	while (i + 1 < lv->nrows &&
	       (lv->rows[i].line != line || lv->rows[i].insn != TUI_NO_INSN))
		i++;
	return i;
}

size_t tui_lines_build(struct tui_lines *lv, struct snapshot *shown, uint32_t func, bool with_code,
		       uint32_t scope)
{
	const struct snapshot *src;

	snapshot_unref(lv->src);
	lv->src = scope == SNAPSHOT_NO_NODE ? snapshot_ref(shown) : snapshot_sites_in(shown, scope);
	src = lv->src;

	if (!lv->sources)
		lv->sources = annotate_sources_new();
	annotation_free(&lv->lines);
	annotate_function(src, func, &lv->lines);
	/* Whose processes ran it: of the whole profile, which a scope's snapshot has no threads of. */
	annotate_readers(shown, func, &lv->readers);
	if (with_code) {
		load_code(lv, src, func);
		annotate_code_positions(&lv->code, &lv->lines);
		annotate_code_count(&lv->code, src, func);
	}
	order_hot_lines(lv);
	lv->nrows = make_rows(lv, with_code);
	return lv->nrows;
}

void tui_lines_free(struct tui_lines *lv)
{
	annotation_free(&lv->lines);
	free(lv->order);
	free(lv->rows);
	annotate_code_free(&lv->code);
	disasm_free(lv->disasm);
	annotate_sources_free(lv->sources);
	snapshot_unref(lv->src);
}
