/* Unit tests of `proftop report` and of the tmon.out reader under it: dprofpp's numbers and layout
 * (expected outputs below are what dprofpp 20110802 printed for the same input), the trees, errors
 * that name the line, and the snapshot a file turns into. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "proftop/profile.h"
#include "proftop/report.h"
#include "proftop/tmon_read.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* What perl -d:DProf wrote for a script that dies in a sub (the "/" exits), leaves one by
 * goto &sub (the "*" mark) and recurses, three times over. */
static char *dprof_file(void)
{
	static const char head[] =
		"#fOrTyTwO\n$hz=100;\n$XS_VERSION='DProf 20110802.00';\n"
		"# All values are given in HZ\n$over_utime=1; $over_stime=0; $over_rtime=2;\n"
		"$over_tests=10000;\n$rrun_utime=0; $rrun_stime=1; $rrun_rtime=0;\n"
		"$total_marks=45                    \n\nPART2\n@ 0 1 0\n"
		"& 2 main mid\n+ 2\n& 3 main thrower\n+ 3\n/ 3\n/ 2\n& 4 main jumper\n+ 4\n"
		"& 5 main tgt\n* 5\n- 4\n& 6 main rec\n+ 6\n+ 6\n+ 6\n+ 6\n- 6\n- 6\n- 6\n- 6\n";
	static const char again[] = "+ 2\n+ 3\n/ 3\n/ 2\n+ 4\n* 5\n- 4\n+ 6\n+ 6\n+ 6\n+ 6\n"
				    "- 6\n- 6\n- 6\n- 6\n";
	char *text = malloc(sizeof(head) + 2 * sizeof(again));

	strcpy(text, head);
	strcat(text, again);
	strcat(text, again);
	return text;
}

/* The report's table (or with a tree option, its tree) for text; fails the test on an error. */
static char *run(const char *text, struct report_options o)
{
	struct tmon_trace trace = { 0 };
	bool trees = o.tree || o.compact_tree;
	struct tmon *tm;
	char *message = NULL, *out = NULL;
	size_t n = 0;
	FILE *fp = open_memstream(&out, &n);

	if (tmon_read(text, strlen(text), &o.read, trees ? &trace : NULL, &tm, &message))
		fail_msg("parse failed: %s", message);
	if (trees)
		report_print_tree(fp, &trace, &o);
	else
		report_print(fp, tm, &o);
	tmon_trace_free(&trace);
	tmon_free(tm);
	fclose(fp);
	return out;
}

/* The error for text, which must not parse. */
static char *error_of(const char *text, struct tmon_read_options o)
{
	struct tmon *tm = NULL;
	char *message = NULL;

	assert_int_not_equal(tmon_read(text, strlen(text), &o, NULL, &tm, &message), 0);
	assert_null(tm);
	assert_non_null(message);
	return message;
}

static void dprof_table(void **state)
{
	(void)state;
	char *text = dprof_file(), *out = run(text, (struct report_options){ 0 });

	assert_string_equal(out,
		"Total Elapsed Time = -2.4e-05 Seconds\n"
		"  User+System Time = 0.009976 Seconds\n"
		"Exclusive Times\n"
		"%Time ExclSec CumulS #Calls sec/call Csec/c  Name\n"
		" 0.00        -  0.000      3         - 0.0000  main::tgt\n"
		" 0.00        - -0.000      3         -       -  main::thrower\n"
		" 0.00        - -0.000      3         -       -  main::jumper\n"
		" 0.00        - -0.000      3         -       -  main::mid\n"
		" 0.00        - -0.000     12         -       -  main::rec\n");
	free(out);
	free(text);
}

static void dprof_trees(void **state)
{
	(void)state;
	char *text = dprof_file(), *out;

	out = run(text, (struct report_options){ .tree = true });
	assert_true(!strncmp(out, "main::mid\n   main::thrower\nmain::jumper\nmain::tgt\nmain::rec\n"
				  "   main::rec\n      main::rec\n         main::rec\nmain::mid\n", 85));
	free(out);
	out = run(text, (struct report_options){ .compact_tree = true });
	assert_true(!strncmp(out, "main::mid\n   main::thrower\nmain::jumper\nmain::tgt\nmain::rec\n"
				  "   main::rec\n", 71));
	free(out);
	free(text);
}

/* Long names wrap; what CumulS and Csec/c could not show goes on the Name's next line, as
 * dprofpp's format does it; -l sorts by calls; -t folds repeats. */
static void wrapping_and_sorting(void **state)
{
	(void)state;
	static const char text[] =
		"#fOrTyTwO\n$hz=1;\n$rrun_utime=10; $rrun_stime=0; $rrun_rtime=3000000;\nPART2\n"
		"& 1 main a_rather_long_subroutine_name-with-dashes_and_more_of_it\n+ 1\n@ 2 0 2\n"
		"& 2 main b\n+ 2\n@ 1234567 0 1234567\n- 2\n+ 2\n- 2\n- 1\n";
	static const char table[] =
		"Total Elapsed Time =  3000000 Seconds\n"
		"  User+System Time =       10 Seconds\n"
		"Exclusive Times\n"
		"%Time ExclSec CumulS #Calls sec/call Csec/c  Name\n"
		" 1234   12345 123456      2   617283 617283  main::b\n"
		" 20.0   2.000 123456      1   2.0000 123456  main::a_rather_long_subroutine_nam\n"
		"               9.000                 9.0000  e-with-dashes_and_more_of_it\n";
	char *out = run(text, (struct report_options){ 0 });

	assert_string_equal(out, table);
	free(out);
	out = run(text, (struct report_options){ .by_calls = true });
	assert_string_equal(out, table);
	free(out);
	out = run(text, (struct report_options){ .compact_tree = true });
	assert_string_equal(out, "main::a_rather_long_subroutine_name-with-dashes_and_more_of_it\n"
				 "   main::b (2x)\n");
	free(out);
	out = run(text, (struct report_options){ .rows = 1 });
	assert_null(strstr(out, "main::a_rather"));
	free(out);
}

/* DProf's first format: absolute times on + and - marks, full names. */
static void old_format(void **state)
{
	(void)state;
	static const char text[] =
		"#fOrTyTwO\n$hz=100;\n$XS_VERSION='DProf 19970606';\n# All values are given in HZ\n"
		"$rrun_utime=2; $rrun_stime=0; $rrun_rtime=7\nPART2\n"
		"+ 26 28 566822884 DynaLoader::import\n- 26 28 566822884 DynaLoader::import\n"
		"+ 27 28 566822885 main::bar\n- 27 28 566822886 main::bar\n"
		"+ 27 28 566822886 main::baz\n+ 27 28 566822887 main::bar\n"
		"- 27 28 566822888 main::bar\n- 30 28 566822890 main::baz\n";
	char *out = run(text, (struct report_options){ 0 });

	assert_string_equal(out,
		"Total Elapsed Time =     0.07 Seconds\n"
		"  User+System Time =     0.02 Seconds\n"
		"Exclusive Times\n"
		"%Time ExclSec CumulS #Calls sec/call Csec/c  Name\n"
		" 150.   0.030  0.030      1   0.0300 0.0300  main::baz\n"
		" 0.00   0.000  0.000      1   0.0000 0.0000  DynaLoader::import\n"
		" 0.00   0.000  0.000      2   0.0000 0.0000  main::bar\n");
	free(out);
	out = run(text, (struct report_options){ .read.clock = TMON_REAL });
	assert_non_null(strstr(out, "         Real Time =     0.07 Seconds\n"));
	assert_non_null(strstr(out, " 42.8   0.030  0.040      1   0.0300 0.0400  main::baz\n"));
	assert_non_null(strstr(out, " 28.5   0.020  0.020      2   0.0100 0.0100  main::bar\n"));
	free(out);
}

/* More rows than a page: dprofpp's format starts a new page (form feed, titles) every 60 lines. */
static void pages(void **state)
{
	(void)state;
	char *text = malloc(1 << 16), *out;
	size_t n = (size_t)sprintf(text, "#fOrTyTwO\n$hz=100;\n$rrun_utime=100;\nPART2\n");
	int pages = 0;

	for (int i = 0; i < 70; i++)
		n += (size_t)sprintf(text + n, "& %d main f%02d\n+ %d\n@ %d 0 %d\n- %d\n", i + 1, i,
				     i + 1, 100 - i, 100 - i, i + 1);
	out = run(text, (struct report_options){ .rows = -1 });
	for (char *p = out; (p = strchr(p, '\f')); p++)
		pages++;
	assert_int_equal(pages, 1);
	/* 4 title lines and 56 rows, then the form feed and the titles again. */
	assert_non_null(strstr(out, "main::f55\n\fTotal Elapsed Time ="));
	free(out);
	free(text);
}

static void errors_name_the_line(void **state)
{
	(void)state;
	static const struct {
		const char *text, *error;
	} cases[] = {
		{ "garbage\n", "line 1: not a tmon.out file" },
		{ "#fOrTyTwO\n$hz=100;\n$x = `rm -rf /`;\nPART2\n", "line 3: bad value for $x" },
		{ "#fOrTyTwO\n$hz=100;\nsystem('x');\nPART2\n", "line 3: not a header assignment" },
		{ "#fOrTyTwO\n$hz=100;\n", "line 2: the file ends in its header" },
		{ "#fOrTyTwO\n$hz=0;\nPART2\n", "line 3: the header sets no $hz" },
		{ "#fOrTyTwO\n$hz=100;\nPART2\n& 1 main a\n+ 2\n", "line 5: sub id 2 has no '&' line" },
		{ "#fOrTyTwO\n$hz=100;\nPART2\n& 1 main a\n- 1\n", "line 5: an exit from main::a, but no sub" },
		{ "#fOrTyTwO\n$hz=100;\nPART2\n@ 1 x 1\n", "line 4: bad times in a '@' mark" },
		{ "#fOrTyTwO\n$hz=100;\nPART2\n@ 1 0\n", "line 4: a '@' mark needs three times" },
		{ "#fOrTyTwO\n$hz=100;\nPART2\n? 1\n", "line 4: unknown mark '?'" },
		{ "#fOrTyTwO\n$hz=100;\nPART2\n\n", "line 4: not a mark" },
		{ "#fOrTyTwO\n$hz=100;\nPART2\n& 1 main\n", "line 4: an '&' line needs" },
		{ "#fOrTyTwO\n$hz=100;\nPART2\n+ 1 2 3\n", "line 4: a '+' mark with times but no sub" },
		{ "#fOrTyTwO\n$hz=100;\nPART2\n@ 1 0 99999999999999999\n", "line 4: bad times" },
		{ "#fOrTyTwO\n$hz=100;\nPART2\n& 1 main a\n+ 1\n& 2 main b\n+ 2\n@ 1 0 1\n",
		  "line 8: the file ends with 2 subs never exited (main::b, main::a)" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *message = error_of(cases[i].text, (struct tmon_read_options){ 0 });

		if (strncmp(message, cases[i].error, strlen(cases[i].error)))
			fail_msg("case %zu: got \"%s\", want \"%s...\"", i, message, cases[i].error);
		free(message);
	}
}

/* The tree of text, which must not parse, as report prints it before the error. */
static char *tree_of_broken(const char *text, struct report_options o)
{
	struct tmon_trace trace = { 0 };
	struct tmon *tm = NULL;
	char *message = NULL, *out = NULL;
	size_t n = 0;
	FILE *fp = open_memstream(&out, &n);

	assert_int_not_equal(tmon_read(text, strlen(text), &o.read, &trace, &tm, &message), 0);
	assert_null(tm);
	report_print_tree(fp, &trace, &o);
	tmon_trace_free(&trace);
	free(message);
	fclose(fp);
	return out;
}

/* A broken file's tree goes as far as dprofpp's, which prints it while reading: up to the line the
 * file fails at, and -t's last line only when the marks were read to their end. */
static void trees_of_broken_files(void **state)
{
	(void)state;
	static const char bad_mark[] = "#fOrTyTwO\n$hz=100;\nPART2\n& 1 main a\n& 2 main b\n"
				       "+ 1\n+ 2\n- 2\n+ 2\n? 1\n";
	static const char never_exited[] = "#fOrTyTwO\n$hz=100;\nPART2\n& 1 main a\n& 2 main b\n"
					   "+ 1\n+ 2\n- 2\n+ 2\n";
	char *out;

	out = tree_of_broken(bad_mark, (struct report_options){ .tree = true });
	assert_string_equal(out, "main::a\n   main::b\n   main::b\n");
	free(out);
	out = tree_of_broken(bad_mark, (struct report_options){ .compact_tree = true });
	assert_string_equal(out, "main::a\n");
	free(out);
	out = tree_of_broken(never_exited, (struct report_options){ .compact_tree = true });
	assert_string_equal(out, "main::a\n   main::b (2x)\n");
	free(out);
	out = tree_of_broken("#fOrTyTwO\n$hz=0;\nPART2\n", (struct report_options){ .tree = true });
	assert_string_equal(out, "");
	free(out);
}

/* -F closes what a truncated file left open, at its last time, and says so. */
static void fake_exits(void **state)
{
	(void)state;
	static const char text[] = "#fOrTyTwO\n$hz=100;\n$rrun_utime=3;\nPART2\n& 1 main a\n+ 1\n"
				   "& 2 main b\n+ 2\n@ 3 0 3\n";
	struct report_options o = { .read.fake_exits = true };
	struct tmon *tm;
	char *message;
	char *out = run(text, o);

	assert_non_null(strstr(out, " 100.   0.030  0.030      1   0.0300 0.0300  main::b\n"));
	assert_non_null(strstr(out, " 0.00   0.000  0.030      1   0.0000 0.0300  main::a\n"));
	free(out);
	assert_int_equal(tmon_read(text, strlen(text), &o.read, NULL, &tm, &message), 0);
	assert_non_null(strstr(tm->warnings, "Faking 2 exit timestamp(s).\n"));
	tmon_free(tm);
}

/* A file's names are any bytes: the table and the trees show them in visible form, so none of
 * them acts on a terminal (the one difference from dprofpp, which prints them raw). */
static void names_show_visibly(void **state)
{
	(void)state;
	static const char text[] = "#fOrTyTwO\n$hz=100;\n$rrun_utime=3;\nPART2\n"
				   "& 1 main jit\033]0;TITLE\007\033[2J\xc2\x9b\xff\n+ 1\n@ 3 0 3\n- 1\n";
	static const char shown[] = "main::jit^[]0;TITLE^G^[[2J\\u009b\\xff";
	struct report_options modes[] = { { .columns = 120 }, { .tree = true }, { .compact_tree = true } };

	for (size_t m = 0; m < sizeof(modes) / sizeof(*modes); m++) {
		char *out = run(text, modes[m]);

		assert_non_null(strstr(out, shown));
		assert_null(strchr(out, '\033'));
		assert_null(strchr(out, '\007'));
		assert_null(strstr(out, "\xc2\x9b"));
		free(out);
	}
}

/* Whether every line of text is well-formed UTF-8 on its own (2- and 3-byte forms suffice). */
static bool lines_whole_utf8(const char *text)
{
	for (const unsigned char *p = (const unsigned char *)text; *p;) {
		int more = *p < 0x80 ? 0 : (*p & 0xe0) == 0xc0 ? 1 : (*p & 0xf0) == 0xe0 ? 2 : -1;

		if (more < 0)
			return false;
		for (p++; more > 0; more--, p++)
			if ((*p & 0xc0) != 0x80)
				return false;
	}
	return true;
}

/* A long name wraps at the name column's width, but never between the bytes of a character. */
static void wrapping_keeps_characters_whole(void **state)
{
	(void)state;
	char text[512] = "#fOrTyTwO\n$hz=100;\n$rrun_utime=3;\nPART2\n& 1 main x";
	char *out;

	for (int i = 0; i < 60; i++)
		strcat(text, "\xc3\xa9"); /* é */
	strcat(text, "\n+ 1\n@ 3 0 3\n- 1\n");
	out = run(text, (struct report_options){ 0 });
	assert_non_null(strstr(out, "main::x\xc3\xa9"));
	assert_true(lines_whole_utf8(out));
	free(out);
}

/* A file as a snapshot: packages become modules, no-break spaces become spaces again, ticks
 * become samples, the header's times and proftop's counters come along. */
static void snapshot_of_file(void **state)
{
	(void)state;
	static const char text[] =
		"#fOrTyTwO\n$hz=1000;\n$rrun_utime=250; $rrun_stime=50; $rrun_rtime=400;\n"
		"# proftop: samples 7 overflow 1 dropped 2 throttled 3 truncated 4\nPART2\n"
		"& 1 libc.so.6 operator\xc2\xa0new(unsigned\xc2\xa0long)\n& 2 prog main\n"
		"+ 2\n@ 2 0 2\n+ 1\n@ 5 0 5\n- 1\n- 2\n+ & Other::Pkg::sub\n@ 1 0 1\n- & Other::Pkg::sub\n";
	struct tmon_read_options o = { 0 };
	struct tmon *tm;
	char *message;

	assert_int_equal(tmon_read(text, strlen(text), &o, NULL, &tm, &message), 0);
	struct snapshot *s = tmon_snapshot(tm);
	assert_int_equal(s->samples, 8);
	assert_int_equal(s->freq, 1000);
	assert_int_equal(s->user_ns, 250000000);
	assert_int_equal(s->system_ns, 50000000);
	assert_int_equal(s->elapsed_ns, 400000000);
	assert_int_equal(s->counters.samples, 7);
	assert_int_equal(s->counters.truncated, 4);
	for (uint32_t f = 1; f < s->nfuncs; f++) {
		if (!strcmp(s->funcs[f].name, "operator new(unsigned long)")) {
			assert_string_equal(s->funcs[f].module, "libc.so.6");
			assert_int_equal(s->func_self[f], 5);
		} else if (!strcmp(s->funcs[f].name, "main")) {
			assert_string_equal(s->funcs[f].module, "prog");
			assert_int_equal(s->func_total[f], 7);
		} else {
			assert_string_equal(s->funcs[f].name, "sub");
			assert_string_equal(s->funcs[f].module, "Other::Pkg");
			assert_int_equal(s->func_self[f], 1);
		}
	}
	snapshot_unref(s);
	tmon_free(tm);
}

/* A big file (half a million subs entered) parses, with the right sums. */
static void big_file(void **state)
{
	(void)state;
	size_t cap = 16u << 20, n;
	char *text = malloc(cap), *out;

	n = (size_t)sprintf(text, "#fOrTyTwO\n$hz=1000;\n$rrun_utime=1000000;\nPART2\n"
				  "& 1 prog outer\n& 2 prog inner\n");
	for (int i = 0; i < 250000; i++)
		n += (size_t)sprintf(text + n, "+ 1\n@ 1 0 1\n+ 2\n@ 3 0 3\n- 2\n- 1\n");
	assert_true(n < cap);
	out = run(text, (struct report_options){ 0 });
	assert_non_null(strstr(out, " 75.0   750.0 750.00 250000   0.0030 0.0030  prog::inner\n"));
	assert_non_null(strstr(out, " 25.0   250.0 1000.0 250000   0.0010 0.0040  prog::outer\n"));
	free(out);
	free(text);
}

/* No line may hold more than a MiB, and the first line nothing but the magic: a long name still
 * reads, a longer line or a first line that is not the magic fails on its line. */
static void long_lines(void **state)
{
	(void)state;
	size_t big = 3u << 20;
	char *text = malloc(big + 256), *message;
	struct tmon *tm;
	struct tmon_read_options o = { 0 };
	int n = sprintf(text, "#fOrTyTwO\n$hz=100;\nPART2\n& 1 main ");

	memset(text + n, 'x', 200000);
	strcpy(text + n + 200000, "\n+ 1\n@ 1 0 1\n- 1\n");
	assert_int_equal(tmon_read(text, strlen(text), &o, NULL, &tm, &message), 0);
	assert_int_equal(strlen(tm->funcs[0].name), 200000);
	tmon_free(tm);

	memset(text + n, 'x', (1u << 20) + 1);
	strcpy(text + n + (1u << 20) + 1, "\n+ 1\n@ 1 0 1\n- 1\n");
	message = error_of(text, o);
	assert_string_equal(message, "line 4: longer than 1048576 bytes: not a tmon.out line");
	free(message);

	memset(text, 0, big); /* /dev/zero's bytes */
	assert_int_not_equal(tmon_read(text, big, &o, NULL, &tm, &message), 0);
	assert_string_equal(message, "line 1: not a tmon.out file (the first line is not #fOrTyTwO)");
	free(message);
	message = error_of("#fOrTyTwO#fOrTyTwO\n$hz=100;\nPART2\n", o);
	assert_string_equal(message, "line 1: not a tmon.out file (the first line is not #fOrTyTwO)");
	free(message);
	/* The other formats proftop writes, and perf's, are named. */
	static const char *const others[][2] = {
		{ "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03xyz", "it is gzip-compressed, as a pprof "
		  "profile is" },
		{ "# callgrind format\nversion: 1\n", "it looks like a callgrind profile" },
		{ "version: 1\ncreator: proftop\n", "it looks like a callgrind profile" },
		{ "main;work 12\n", "it looks like folded stacks" },
		{ "PERFILE2\x68\x00\x00\x00", "it is a perf.data file" },
	};
	for (size_t i = 0; i < sizeof(others) / sizeof(*others); i++) {
		char want[160];

		snprintf(want, sizeof(want), "line 1: not a tmon.out file (the first line is not "
			 "#fOrTyTwO; %s)", others[i][1]);
		message = error_of(others[i][0], o);
		assert_string_equal(message, want);
		free(message);
	}
	free(text);
}

/* big_file's text with a 300 KB name in it: more than a read of the file reader, and one line
 * longer than a read. */
static char *file_text(void)
{
	size_t cap = 8u << 20, n;
	char *text = malloc(cap);

	n = (size_t)sprintf(text, "#fOrTyTwO\r\n$hz=1000;\n$rrun_utime=1000000;\nPART2\n"
				  "& 1 prog outer\n& 2 prog ");
	memset(text + n, 'i', 300000);
	n += 300000;
	n += (size_t)sprintf(text + n, "\n");
	for (int i = 0; i < 50000; i++)
		n += (size_t)sprintf(text + n, "+ 1\n@ 1 0 1\n+ 2\n@ 3 0 3\n- 2\n- 1\n");
	assert_true(n < cap);
	return text;
}

/* The report of the file at path, or its error. */
static char *report_of_file(const char *path)
{
	struct report_options o = { 0 };
	struct tmon *tm;
	char *message = NULL, *out = NULL;
	size_t n = 0;
	FILE *fp;

	if (tmon_read_file(path, &o.read, NULL, &tm, &message))
		return message;
	fp = open_memstream(&out, &n);
	report_print(fp, tm, &o);
	fclose(fp);
	tmon_free(tm);
	return out;
}

/* Write text into fd in pieces of 4093 bytes from a child, so the reader gets short reads. */
static pid_t write_slowly(int fd, const char *text)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		for (size_t at = 0, len = strlen(text), n; at < len; at += n) {
			n = len - at < 4093 ? len - at : 4093;
			if (write(fd, text + at, n) != (ssize_t)n)
				_exit(1);
		}
		_exit(0);
	}
	close(fd);
	return pid;
}

/* A file read a piece at a time reads as the same text in memory does: from a file and from a
 * pipe that gives short reads. Errors of reading name the file. */
static void file_reads_as_memory(void **state)
{
	(void)state;
	char *text = file_text(), *want = run(text, (struct report_options){ 0 }), *got;
	char path[] = "/tmp/test_report.XXXXXX", fdpath[32];
	int fd = mkstemp(path), pipefd[2], status;
	pid_t child;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	got = report_of_file(path);
	assert_string_equal(got, want);
	free(got);
	unlink(path);

	assert_int_equal(pipe(pipefd), 0);
	child = write_slowly(pipefd[1], text);
	snprintf(fdpath, sizeof(fdpath), "/dev/fd/%d", pipefd[0]);
	got = report_of_file(fdpath);
	assert_string_equal(got, want);
	free(got);
	close(pipefd[0]);
	assert_int_equal(waitpid(child, &status, 0), child);

	got = report_of_file("/");
	assert_string_equal(got, "cannot read /: Is a directory");
	free(got);
	got = report_of_file("/dev/zero");
	assert_string_equal(got, "/dev/zero: line 1: not a tmon.out file (the first line is not "
				 "#fOrTyTwO)");
	free(got);
	free(want);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dprof_table),
		cmocka_unit_test(dprof_trees),
		cmocka_unit_test(wrapping_and_sorting),
		cmocka_unit_test(old_format),
		cmocka_unit_test(pages),
		cmocka_unit_test(errors_name_the_line),
		cmocka_unit_test(trees_of_broken_files),
		cmocka_unit_test(fake_exits),
		cmocka_unit_test(names_show_visibly),
		cmocka_unit_test(wrapping_keeps_characters_whole),
		cmocka_unit_test(snapshot_of_file),
		cmocka_unit_test(big_file),
		cmocka_unit_test(long_lines),
		cmocka_unit_test(file_reads_as_memory),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
