/* Unit tests of the snapshot writers (tmon.out, callgrind, folded) on synthetic profiles whose
 * counts are known, read back by independent means: tmon.out through tmon_read.c (the reader
 * under `proftop report` and -i), callgrind and folded by parsing their text here (pprof's are in
 * test_export_pprof.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "proftop/export.h"
#include "proftop/export_writers.h"
#include "proftop/profile.h"
#include "proftop/report.h"
#include "proftop/tmon_read.h"
#include "unit_profiles.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HZ 100

struct fixture {
	struct snapshot *s;
	uint32_t main_, path_a, path_b, mid, burn, solo, rec, leaf, spaced, dup1, dup2;
};

static uint32_t func(struct profile *p, const char *module, const char *name)
{
	return profile_func(p, module, name, 0);
}

/* Thread 7: main → path_a → burn 60, main → path_b → mid → burn 30, main → solo 10.
 * Thread 8: main → rec → rec → rec → leaf 20, main → rec 5 (recursion), main → spaced 4,
 * main → dup 3 + 2 (two functions named alike in modules named alike). */
static struct fixture *fixture_new(void)
{
	static const char m[] = "prog", libc[] = "libc.so.6";
	static const char other_prog[] = "prog", other_dup[] = "dup";
	struct fixture *f = calloc(1, sizeof(*f));
	struct profile *p = profile_new(NULL);

	f->main_ = func(p, m, "main");
	f->path_a = func(p, m, "path_a");
	f->path_b = func(p, m, "path_b");
	f->mid = func(p, m, "mid_b");
	f->burn = func(p, libc, "burn");
	f->solo = func(p, m, "solo");
	f->rec = func(p, m, "rec");
	f->leaf = func(p, m, "leaf");
	f->spaced = func(p, m, "operator new(unsigned long)");
	f->dup1 = func(p, m, "dup");
	f->dup2 = profile_func(p, other_prog, other_dup, 0x2000); /* a second static dup() */
	unit_add(p, 7, 60, 3, f->main_, f->path_a, f->burn);
	unit_add(p, 7, 30, 4, f->main_, f->path_b, f->mid, f->burn);
	unit_add(p, 7, 10, 2, f->main_, f->solo);
	unit_add(p, 8, 20, 5, f->main_, f->rec, f->rec, f->rec, f->leaf);
	unit_add(p, 8, 5, 2, f->main_, f->rec);
	unit_add(p, 8, 4, 2, f->main_, f->spaced);
	unit_add(p, 8, 3, 2, f->main_, f->dup1);
	unit_add(p, 8, 2, 2, f->main_, f->dup2);
	profile_set_comm(p, 7, 7, "prog");
	profile_set_comm(p, 7, 8, "worker");
	f->s = profile_snapshot(p);
	f->s->freq = HZ;
	f->s->elapsed_ns = 2000000000ull;
	f->s->user_ns = 1230000000ull;
	f->s->system_ns = 20000000ull;
	f->s->counters.samples = 134;
	profile_free(p); /* the snapshot owns what it shows */
	return f;
}

static void fixture_free(struct fixture *f)
{
	snapshot_unref(f->s);
	free(f);
}

static int setup(void **state)
{
	*state = fixture_new();
	return 0;
}

static int teardown(void **state)
{
	fixture_free(*state);
	return 0;
}

/* The writer's output for the merged tree, NUL-terminated; *len its size. */
static char *render(const struct snapshot *s,
		    int (*writer)(FILE *, const struct snapshot *, const struct export_scope *),
		    const struct export_scope *scope, size_t *len)
{
	struct export_scope merged;
	char *buf = NULL;
	size_t n = 0;
	FILE *out = open_memstream(&buf, &n);

	assert_non_null(out);
	if (!scope) {
		export_scope_merged(&merged, s);
		scope = &merged;
	}
	assert_int_equal(writer(out, s, scope), 0);
	assert_int_equal(fclose(out), 0);
	if (len)
		*len = n;
	return buf;
}

static uint32_t func_named(const struct snapshot *s, const char *module, const char *name)
{
	for (uint32_t i = 1; i < s->nfuncs; i++)
		if (!strcmp(s->funcs[i].name, name) && !strcmp(s->funcs[i].module, module))
			return i;
	return 0;
}

/* --- tmon.out ---------------------------------------------------------------------------------- */

static struct tmon *parse_tmon(const char *text, size_t len)
{
	struct tmon_read_options o = { 0 };
	struct tmon *tm;
	char *message = NULL;

	if (tmon_read(text, len, &o, NULL, &tm, &message))
		fail_msg("tmon.out does not parse: %s", message);
	return tm;
}

/* Read back, every function's self and total samples are the snapshot's. */
static void tmon_reads_back_exactly(void **state)
{
	struct fixture *f = *state;
	size_t len;
	char *text = render(f->s, export_tmon, NULL, &len);
	struct tmon *tm = parse_tmon(text, len);
	struct snapshot *s2 = tmon_snapshot(tm);

	assert_int_equal(s2->samples, f->s->samples);
	assert_int_equal(s2->freq, HZ);
	assert_int_equal(s2->elapsed_ns, f->s->elapsed_ns);
	assert_int_equal(s2->user_ns, f->s->user_ns);
	assert_int_equal(s2->system_ns, f->s->system_ns);
	assert_int_equal(s2->counters.samples, 134);
	for (uint32_t i = 1; i < f->s->nfuncs; i++) {
		const char *name = f->s->funcs[i].name;
		uint32_t j = func_named(s2, f->s->funcs[i].module, name);

		if (i == f->dup2) /* the second "prog::dup" got a suffix to stay apart */
			j = func_named(s2, "prog", "dup#2");
		assert_int_not_equal(j, 0);
		assert_int_equal(s2->func_self[j], f->s->func_self[i]);
		assert_int_equal(s2->func_total[j], f->s->func_total[i]);
	}
	snapshot_unref(s2);
	tmon_free(tm);
	free(text);
}

/* Writing what was read back gives the same file again. */
static void tmon_round_trip_is_identical(void **state)
{
	struct fixture *f = *state;
	size_t len, len2;
	char *text = render(f->s, export_tmon, NULL, &len);
	struct tmon *tm = parse_tmon(text, len);
	struct snapshot *s2 = tmon_snapshot(tm);
	char *again = render(s2, export_tmon, NULL, &len2);

	/* Only the & names of the renamed duplicate differ: it is read back as "dup#2" and so
	 * written as that, which is what it was written as. */
	assert_int_equal(len, len2);
	assert_memory_equal(text, again, len);
	snapshot_unref(s2);
	tmon_free(tm);
	free(text);
	free(again);
}

/* dprofpp's table for the file: exclusive = self / hz, cumulative = total / hz, #Calls = the
 * call paths into the function, %Time over the header's user+system time. */
static void tmon_table_numbers(void **state)
{
	struct fixture *f = *state;
	struct report_options o = { .rows = -1 };
	size_t len, n = 0;
	char *text = render(f->s, export_tmon, NULL, &len), *out = NULL;
	struct tmon *tm = parse_tmon(text, len);
	FILE *fp = open_memstream(&out, &n);

	report_print(fp, tm, &o);
	fclose(fp);
	/* burn: 90 self of 125 cpu ticks = 72%, reached by 2 paths. */
	assert_non_null(strstr(out, "Total Elapsed Time =        2 Seconds\n"
				    "  User+System Time =     1.25 Seconds\n"));
	assert_non_null(strstr(out, " 72.0   0.900  0.900      2   0.4500 0.4500  libc.so.6::burn\n"));
	/* rec: 5 self, 25 total however deep the recursion, entered along 3 paths. */
	assert_non_null(strstr(out, " 4.00   0.050  0.250      3   0.0167 0.0833  prog::rec\n"));
	assert_non_null(strstr(out, " 0.00   0.000  1.340      1   0.0000 1.3400  prog::main\n"));
	tmon_free(tm);
	free(text);
	free(out);
}

/* Whitespace in a name becomes U+00A0 on the & line (dprofpp splits fields on ASCII whitespace)
 * and comes back as a space, other control characters are in visible form (^A, ^[); the header
 * holds nothing from the target. */
static void tmon_names_and_header(void **state)
{
	struct fixture *f = *state;
	static const char evil_module[] = "x';system('id');'\n$hz=1;";
	struct profile *p = profile_new(NULL);
	uint32_t evil = func(p, evil_module, "a b\tc\x01\033[2J");
	char *text, *part2, *line;
	size_t len;

	unit_add(p, 1, 3, 1, evil);
	struct snapshot *s = profile_snapshot(p);
	profile_free(p); /* the snapshot owns its names */
	s->freq = HZ;
	text = render(s, export_tmon, NULL, &len);
	part2 = strstr(text, "\nPART2\n");
	assert_non_null(part2);
	*part2 = '\0';
	assert_null(strstr(text, "system"));
	assert_null(strstr(text, "a b"));
	*part2 = '\n';
	line = strstr(part2, "\n& 1 ");
	assert_non_null(line);
	assert_non_null(strstr(line, "& 1 x';system('id');'\xc2\xa0$hz=1; a\xc2\xa0" "b\xc2\xa0" "c^A^[[2J\n"));
	free(text);
	snapshot_unref(s);

	text = render(f->s, export_tmon, NULL, &len);
	assert_non_null(strstr(text, " prog operator\xc2\xa0new(unsigned\xc2\xa0long)\n"));
	free(text);
}

/* A thread's own tree: only its functions, its samples. */
static void tmon_one_thread(void **state)
{
	struct fixture *f = *state;
	const struct snapshot_thread *t = &f->s->threads[0];
	struct export_scope scope = { t->root, t };
	size_t len;
	char *text = render(f->s, export_tmon, &scope, &len);
	struct tmon *tm = parse_tmon(text, len);
	struct snapshot *s2 = tmon_snapshot(tm);

	assert_int_equal(t->tid, 7);
	assert_int_equal(s2->samples, 100);
	assert_int_equal(func_named(s2, "prog", "rec"), 0);
	assert_int_equal(s2->func_total[func_named(s2, "libc.so.6", "burn")], 90);
	snapshot_unref(s2);
	tmon_free(tm);
	free(text);
}

/* --- folded ------------------------------------------------------------------------------------- */

static void folded_lines_and_sum(void **state)
{
	struct fixture *f = *state;
	char *text = render(f->s, export_folded, NULL, NULL), *save = NULL;
	uint64_t sum = 0;
	int lines = 0;

	assert_non_null(strstr(text, "main;path_a;burn 60\n"));
	assert_non_null(strstr(text, "main;path_b;mid_b;burn 30\n"));
	assert_non_null(strstr(text, "main;rec;rec;rec;leaf 20\n"));
	assert_non_null(strstr(text, "main;operator new(unsigned long) 4\n"));
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		sum += strtoull(strrchr(l, ' ') + 1, NULL, 10);
		lines++;
	}
	assert_int_equal(sum, f->s->samples);
	assert_int_equal(lines, 8);
	free(text);
}

/* Against a baseline: "stack OLD NEW" for every stack of either side, two lines of the same text
 * (dup() of two modules named alike) one; each column adds up to its side's samples. */
static void folded_diff_lines(void **state)
{
	struct fixture *f = *state;
	struct profile *p = profile_new(NULL);
	uint32_t m = func(p, "prog", "main"), a = func(p, "prog", "path_a");
	uint32_t b = func(p, "libc.so.6", "burn"), g = func(p, "prog", "gone");
	struct export_scope old_scope, scope;
	char *buf = NULL, *save = NULL;
	size_t n = 0;
	uint64_t sum[2] = { 0, 0 };
	int lines = 0;

	unit_add(p, 1, 10, 3, m, a, b);
	unit_add(p, 1, 5, 2, m, g);
	struct snapshot *old = profile_snapshot(p);
	FILE *out = open_memstream(&buf, &n);

	export_scope_of_tid(&old_scope, old, 8); /* no thread 8 there: all of it */
	assert_int_equal(old_scope.root, old->merged_root);
	export_scope_merged(&scope, f->s);
	assert_int_equal(export_folded_diff(out, old, &old_scope, f->s, &scope), 0);
	assert_int_equal(fclose(out), 0);
	assert_non_null(strstr(buf, "main;path_a;burn 10 60\n"));
	assert_non_null(strstr(buf, "main;path_b;mid_b;burn 0 30\n"));
	assert_non_null(strstr(buf, "main;gone 5 0\n"));
	assert_non_null(strstr(buf, "main;dup 0 5\n"));
	assert_true(strstr(buf, "main;path_a;burn 10 60\n") < strstr(buf, "main;gone 5 0\n"));
	for (char *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *last = strrchr(l, ' ');

		*last = '\0';
		sum[1] += strtoull(last + 1, NULL, 10);
		sum[0] += strtoull(strrchr(l, ' ') + 1, NULL, 10);
		lines++;
	}
	assert_int_equal(sum[0], old->samples);
	assert_int_equal(sum[1], f->s->samples);
	assert_int_equal(lines, 8); /* the fixture's 8 lines less a dup, and gone */
	free(buf);
	/* One thread's file against the same thread of the baseline when it has it. */
	export_scope_of_tid(&old_scope, old, 1);
	assert_int_equal(old_scope.root, old->threads[0].root);
	assert_ptr_equal(old_scope.thread, &old->threads[0]);
	snapshot_unref(old);
	profile_free(p);
}

/* Names with line breaks and escape sequences (an ELF symbol can be any bytes) keep every text
 * format's lines whole and put no control character in the file: they are in visible form, as
 * batch mode prints them. */
static void text_formats_show_names_visibly(void **state)
{
	static const char name[] = "a\nb;c\033]0;T\007\r", module[] = "m\nod\xc2\x9b";
	int (*const writers[])(FILE *, const struct snapshot *, const struct export_scope *) = {
		export_folded, export_callgrind, export_tmon };
	struct profile *p = profile_new(NULL);
	uint32_t main_ = func(p, "prog", "main"), evil = func(p, module, name);
	struct snapshot *s;
	char *text;

	(void)state;
	unit_add(p, 1, 3, 2, main_, evil);
	s = profile_snapshot(p);
	profile_free(p);
	s->freq = HZ;
	for (size_t w = 0; w < sizeof(writers) / sizeof(*writers); w++) {
		text = render(s, writers[w], NULL, NULL);
		for (const unsigned char *c = (const unsigned char *)text; *c; c++)
			if ((*c < 0x20 && *c != '\n') || *c == 0x7f)
				fail_msg("writer %zu: control byte 0x%02x at %zu", w, *c,
					 (size_t)((const char *)c - text));
		assert_null(strstr(text, "\xc2\x9b"));
		if (w == 0)
			assert_string_equal(text, "main;a^Jb:c^[]0:T^G^M 3\n");
		else if (w == 1)
			assert_non_null(strstr(text, "\ncob=(2) m^Jod\\u009b\ncfl=(2) m^Jod\\u009b\n"
						     "cfn=(2) a^Jb;c^[]0;T^G^M\ncalls=1 0\n"));
		else
			assert_non_null(strstr(text, " m\xc2\xa0od\\u009b a\xc2\xa0" "b;c^[]0;T^G\xc2\xa0\n"));
		free(text);
	}
	snapshot_unref(s);
}

/* --- callgrind ---------------------------------------------------------------------------------- */

/* A profile without a single call (a JIT's code, which nothing unwinds out of): one fn, its self
 * cost, no calls= line. (Under UBSan, the empty edge list once reached qsort() as NULL.) */
static void callgrind_without_calls(void **state)
{
	struct profile *p = profile_new(NULL);
	struct snapshot *s;
	char *text;

	(void)state;
	unit_add(p, 1, 5, 1, func(p, "[jit]", "jit_hot_loop"));
	s = profile_snapshot(p);
	profile_free(p);
	s->freq = HZ;
	text = render(s, export_callgrind, NULL, NULL);
	assert_non_null(strstr(text, "\nfn=(1) jit_hot_loop\n0 5\n"));
	assert_null(strstr(text, "calls="));
	free(text);
	snapshot_unref(s);
}

/* Inclusive cost per function as callgrind_annotate computes it: self lines plus the cost line
 * after each calls= line, under the current fn. Names come from "fn=(id) name" compression. */
static void callgrind_inclusive(const char *text, const struct snapshot *s,
				const char *name, uint64_t *self, uint64_t *incl)
{
	char names[64][128] = { { 0 } };
	char *copy = strdup(text), *save = NULL;
	int cur = -1, want = -1;
	bool after_calls = false;

	*self = *incl = 0;
	for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		int id;
		char nm[128];

		if (sscanf(l, "fn=(%d) %127[^\n]", &id, nm) == 2 && id < 64)
			strcpy(names[id], nm);
		if (sscanf(l, "cfn=(%d) %127[^\n]", &id, nm) == 2 && id < 64)
			strcpy(names[id], nm);
		if (sscanf(l, "fn=(%d)", &id) == 1) {
			cur = id;
			if (!strcmp(names[id], name))
				want = id;
			continue;
		}
		if (!strncmp(l, "calls=", 6)) {
			after_calls = true;
			continue;
		}
		if (l[0] == '0' && l[1] == ' ' && cur >= 0 && cur == want) {
			uint64_t v = strtoull(l + 2, NULL, 10);

			*incl += v;
			if (!after_calls)
				*self += v;
		}
		if (l[0] == '0' && l[1] == ' ')
			after_calls = false;
	}
	(void)s;
	free(copy);
}

static void callgrind_costs(void **state)
{
	struct fixture *f = *state;
	char *text = render(f->s, export_callgrind, NULL, NULL);
	static const char *const names[] = { "main", "path_a", "path_b", "mid_b", "burn", "solo",
					     "rec", "leaf" };

	assert_non_null(strstr(text, "# callgrind format\n"));
	assert_non_null(strstr(text, "events: Samples\n"));
	assert_non_null(strstr(text, "summary: 134\n"));
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		uint32_t id = func_named(f->s, i == 4 ? "libc.so.6" : "prog", names[i]);
		uint64_t self, incl;

		callgrind_inclusive(text, f->s, names[i], &self, &incl);
		assert_int_equal(self, f->s->func_self[id]);
		/* Inclusive equals TOTAL, recursion included (rec: 25, not 5 + 3 x 20). */
		assert_int_equal(incl, f->s->func_total[id]);
	}
	/* No self-call edge for the recursion. */
	assert_null(strstr(text, "fn=(7) rec\n0 5\ncob=(1)\ncfl=(1)\ncfn=(7)\n"));
	free(text);
}

/* --- file names and formats ---------------------------------------------------------------------- */

static void formats_from_names(void **state)
{
	(void)state;
	enum export_format fmt;

	assert_int_equal(export_format_of_path("tmon.out"), EXPORT_TMON);
	assert_int_equal(export_format_of_path("tmon.out.3"), EXPORT_TMON);
	assert_int_equal(export_format_of_path("out/whatever.txt"), EXPORT_TMON);
	assert_int_equal(export_format_of_path("callgrind.out.1234"), EXPORT_CALLGRIND);
	assert_int_equal(export_format_of_path("x.callgrind"), EXPORT_CALLGRIND);
	assert_int_equal(export_format_of_path("a/b.folded"), EXPORT_FOLDED);
	assert_int_equal(export_format_of_path("b.collapsed.17"), EXPORT_FOLDED);
	assert_int_equal(export_format_of_path("cpu.pb.gz"), EXPORT_PPROF);
	assert_int_equal(export_format_of_path("cpu.pb.gz.2"), EXPORT_PPROF);
	assert_int_equal(export_format_of_path("x.pprof"), EXPORT_PPROF);
	assert_int_equal(export_format_parse("folded", &fmt), 0);
	assert_int_equal(fmt, EXPORT_FOLDED);
	assert_int_not_equal(export_format_parse("json", &fmt), 0);
	assert_string_equal(export_format_name(EXPORT_PPROF), "pprof");
	assert_string_equal(export_default_path(EXPORT_TMON), "tmon.out");
}

/* The writers' walk: hottest child first, each node once, parents before children. */
static void walk_is_hottest_first(void **state)
{
	struct fixture *f = *state;
	struct export_scope scope;
	struct snapshot_walk w;
	struct snapshot_walk_step step;
	uint32_t order[64];
	size_t n = 0;

	export_scope_merged(&scope, f->s);
	export_walk_begin(&w, f->s, &scope, NULL, NULL);
	while (snapshot_walk_next(&w, &step) && n < 64)
		order[n++] = step.node;
	snapshot_walk_end(&w);
	assert_true(n > 3);
	assert_int_equal(f->s->nodes[order[0]].func, f->main_);
	assert_int_equal(f->s->nodes[order[1]].func, f->path_a); /* 60, the hottest */
	assert_int_equal(f->s->nodes[order[2]].func, f->burn);
	assert_int_equal(f->s->nodes[order[3]].func, f->path_b);
	for (size_t i = 1; i < n; i++) {
		bool parent_seen = f->s->nodes[order[i]].parent == f->s->merged_root;

		for (size_t j = 0; j < i && !parent_seen; j++)
			parent_seen = order[j] == f->s->nodes[order[i]].parent;
		assert_true(parent_seen);
	}
}

static void ticks(void **state)
{
	(void)state;
	assert_int_equal(export_ns_to_ticks(1000000000ull, 999), 999);
	assert_int_equal(export_ns_to_ticks(1500000ull, 1000), 2);
	assert_int_equal(export_ns_to_ticks(86400ull * 1000000000ull * 365, 100000),
			 86400ull * 365 * 100000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(tmon_reads_back_exactly, setup, teardown),
		cmocka_unit_test_setup_teardown(tmon_round_trip_is_identical, setup, teardown),
		cmocka_unit_test_setup_teardown(tmon_table_numbers, setup, teardown),
		cmocka_unit_test_setup_teardown(tmon_names_and_header, setup, teardown),
		cmocka_unit_test_setup_teardown(tmon_one_thread, setup, teardown),
		cmocka_unit_test_setup_teardown(folded_lines_and_sum, setup, teardown),
		cmocka_unit_test_setup_teardown(folded_diff_lines, setup, teardown),
		cmocka_unit_test(text_formats_show_names_visibly),
		cmocka_unit_test_setup_teardown(callgrind_costs, setup, teardown),
		cmocka_unit_test(callgrind_without_calls),
		cmocka_unit_test(formats_from_names),
		cmocka_unit_test_setup_teardown(walk_is_hottest_first, setup, teardown),
		cmocka_unit_test(ticks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
