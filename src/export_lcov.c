/* export_lcov.c — a coverage snapshot as an lcov tracefile (geninfo(1)'s format, which lcov and
 * genhtml read): per source file an SF record, its functions (FN: first line and name, FNDA:
 * calls, FNF/FNH), its lines (DA: line and executions, LF/LH) and end_of_record.
 *
 * The lines are the snapshot's sites (coverage's: one per line, at 0 when it never ran); a line
 * two functions share counts the most either ran (gcov's rule for a line of several blocks). A
 * function's calls are the executions of its entry line (the site at its first address). The
 * whole run's lines: the sites have no split by thread (--per-thread is refused). Names and
 * paths come from the target's DWARF: a control character (a newline would end the record) is
 * written as '?'. */
#include "proftop/export_writers.h"

#include "proftop/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct lcov_line {
	const char *file;
	unsigned line;
	uint32_t func;
	uint64_t count;
	bool entry;                /* at its function's first address */
};

static int by_file_line(const void *a, const void *b)
{
	const struct lcov_line *x = a, *y = b;
	int c = x->file == y->file ? 0 : strcmp(x->file, y->file);

	if (c)
		return c;
	return x->line < y->line ? -1 : x->line > y->line;
}

static void put_clean(FILE *out, const char *s)
{
	for (; *s; s++)
		fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, out);
}

/* The file's functions, lines [from, to) of lines (sorted): FN, FNDA, FNF, FNH. A function is
 * the file of its home (its entry's line, else its first line): code inlined from a header
 * counts its lines there, not the function. */
static void put_functions(FILE *out, const struct snapshot *s, const struct lcov_line *lines,
			  size_t from, size_t to, uint32_t *seen, const char *const *home)
{
	size_t nfuncs = 0, hit = 0;

	for (size_t i = from; i < to; i++) {
		uint32_t f = lines[i].func;
		unsigned first = lines[i].line;
		uint64_t calls = 0;
		bool entry = false;

		if (seen[f] == (uint32_t)from + 1 || (home[f] && strcmp(home[f], lines[i].file)))
			continue;
		seen[f] = (uint32_t)from + 1;
		for (size_t k = i; k < to; k++) {
			if (lines[k].func != f)
				continue;
			if (lines[k].entry && !entry) {
				entry = true;
				first = lines[k].line;
				calls = lines[k].count;
			}
		}
		if (!entry) /* (no line at its first address: its first line's count) */
			calls = lines[i].count;
		fprintf(out, "FN:%u,", first);
		put_clean(out, s->funcs[f].name);
		fprintf(out, "\nFNDA:%llu,", (unsigned long long)calls);
		put_clean(out, s->funcs[f].name);
		fputc('\n', out);
		nfuncs++;
		hit += calls > 0;
	}
	fprintf(out, "FNF:%zu\nFNH:%zu\n", nfuncs, hit);
}

int export_lcov(FILE *out, const struct snapshot *s, const struct export_scope *scope)
{
	struct lcov_line *lines = xmalloc((s->nsites ? s->nsites : 1) * sizeof(*lines));
	uint32_t *seen = xcalloc(s->nfuncs ? s->nfuncs : 1, sizeof(*seen));
	const char **home = xcalloc(s->nfuncs ? s->nfuncs : 1, sizeof(*home));
	bool *home_is_entry = xcalloc(s->nfuncs ? s->nfuncs : 1, sizeof(*home_is_entry));
	size_t n = 0;

	(void)scope;
	for (size_t i = 0; i < s->nsites; i++) {
		const struct snapshot_site *site = &s->sites[i];

		if (!site->file || !site->line || site->addr == SNAPSHOT_SITE_OTHER ||
		    site->func >= s->nfuncs)
			continue;
		lines[n++] = (struct lcov_line){ site->file, site->line, site->func, site->self,
						 site->addr == s->funcs[site->func].code_start };
	}
	qsort(lines, n, sizeof(*lines), by_file_line);
	for (size_t i = 0; i < n; i++) {
		uint32_t f = lines[i].func;

		if (lines[i].entry && !home_is_entry[f]) {
			home[f] = lines[i].file;
			home_is_entry[f] = true;
		} else if (!home[f]) {
			home[f] = lines[i].file;
		}
	}
	fputs("TN:\n", out);
	for (size_t from = 0, to; from < n; from = to) {
		size_t found = 0, hit = 0;

		for (to = from; to < n && !strcmp(lines[to].file, lines[from].file); to++)
			;
		fputs("SF:", out);
		put_clean(out, lines[from].file);
		fputc('\n', out);
		put_functions(out, s, lines, from, to, seen, home);
		for (size_t i = from; i < to;) {
			uint64_t count = 0;
			unsigned line = lines[i].line;

			for (; i < to && lines[i].line == line; i++)
				if (lines[i].count > count)
					count = lines[i].count;
			fprintf(out, "DA:%u,%llu\n", line, (unsigned long long)count);
			found++;
			hit += count > 0;
		}
		fprintf(out, "LF:%zu\nLH:%zu\nend_of_record\n", found, hit);
	}
	free(lines);
	free(seen);
	free(home);
	free(home_is_entry);
	return ferror(out) ? -EIO : 0;
}
