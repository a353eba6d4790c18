/* Unit tests of annotate.c: finding a function by name, its sites summed per source line (over
 * snapshots of a real profile), the hottest line, source lines read from real files, and who
 * they are read as: the owners of the threads a function ran in (a saved profile's: proftop). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "proftop/annotate.h"
#include "proftop/profile.h"
#include "proftop/strpool.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* count samples main → func, in func at site (main's site unknown). */
static void add(struct profile *p, uint32_t main_, uint32_t func, uint32_t site, int count)
{
	const uint32_t funcs[] = { main_, func }, sites[] = { PROFILE_NO_SITE, site };

	for (int i = 0; i < count; i++)
		profile_add_sites(p, 1, 1, funcs, sites, 2);
}

/* "step" in prog (5 samples), in lib.so (10), inlined (20); "stepper" (30), "ste" nowhere. */
static void find_by_name(void **state)
{
	(void)state;
	struct profile *p = profile_new(NULL);
	uint32_t main_ = profile_func(p, "prog", "main", 0);
	uint32_t prog = profile_func(p, "prog", "step", 0x100);
	uint32_t lib = profile_func(p, "lib.so", "step", 0x200);
	uint32_t inl = profile_inlined_func(p, "prog", "step");
	uint32_t longer = profile_func(p, "prog", "stepper", 0x300);
	uint32_t out[4];

	add(p, main_, prog, PROFILE_NO_SITE, 5);
	add(p, main_, lib, PROFILE_NO_SITE, 10);
	add(p, main_, inl, PROFILE_NO_SITE, 20);
	add(p, main_, longer, PROFILE_NO_SITE, 30);
	struct snapshot *s = profile_snapshot(p);

	assert_int_equal(annotate_find(s, "step", out, 4), 3);
	assert_int_equal(out[0], inl);
	assert_int_equal(out[1], lib);
	assert_int_equal(out[2], prog);
	/* Fewer slots: still the hottest, and the full count. */
	memset(out, 0xff, sizeof(out));
	assert_int_equal(annotate_find(s, "step", out, 1), 3);
	assert_int_equal(out[0], inl);
	assert_int_equal(out[1], UINT32_MAX);
	assert_int_equal(annotate_find(s, "step", out, 2), 3);
	assert_int_equal(out[0], inl);
	assert_int_equal(out[1], lib);
	assert_int_equal(annotate_find(s, "step", NULL, 0), 3);

	assert_int_equal(annotate_find(s, "ste", out, 4), 0);
	assert_int_equal(annotate_find(s, "step (inlined)", out, 4), 1);
	assert_int_equal(out[0], inl);
	assert_int_equal(annotate_find(s, "stepper", out, 4), 1);
	assert_int_equal(out[0], longer);
	assert_int_equal(annotate_find(s, "nowhere", out, 4), 0);
	snapshot_unref(s);
	profile_free(p);
}

/* Sites of "work": a.c:10 at two addresses, a.c:12, b.h:3, and three without a line (no file,
 * a file but line 0, a line but no file); "other" has sites on a.c:10 too. */
static void function_per_line(void **state)
{
	(void)state;
	struct profile *p = profile_new(NULL);
	uint32_t main_ = profile_func(p, "prog", "main", 0);
	uint32_t work = profile_func(p, "prog", "work", 0);
	uint32_t other = profile_func(p, "prog", "other", 0);
	struct annotation a;

	add(p, main_, work, profile_site(p, work, 0x40, "b.h", 3), 4);
	add(p, main_, work, profile_site(p, work, 0x10, "a.c", 12), 2);
	add(p, main_, work, profile_site(p, work, 0x20, "a.c", 10), 3);
	add(p, main_, work, profile_site(p, work, 0x50, NULL, 0), 1);
	add(p, main_, work, profile_site(p, work, 0x24, "a.c", 10), 5);
	add(p, main_, work, profile_site(p, work, 0x54, "a.c", 0), 1);
	add(p, main_, work, profile_site(p, work, 0x58, NULL, 7), 1);
	add(p, main_, work, PROFILE_NO_SITE, 6);
	add(p, main_, other, profile_site(p, other, 0x24, "a.c", 10), 50);
	/* work calling other from a.c:12: a total sample for that line, no self one. */
	const uint32_t funcs[] = { main_, work, other };
	const uint32_t sites[] = { PROFILE_NO_SITE, profile_site(p, work, 0x14, "a.c", 12),
				   PROFILE_NO_SITE };
	profile_add_sites(p, 1, 1, funcs, sites, 3);
	struct snapshot *s = profile_snapshot(p);

	annotate_function(s, work, &a);
	assert_int_equal(a.func, work);
	assert_int_equal(a.self, 23);
	assert_int_equal(a.total, 24);
	assert_true(a.has_sites);
	assert_true(a.has_lines);
	assert_int_equal(a.nlines, 4);
	assert_string_equal(a.lines[0].file, "a.c");
	assert_int_equal(a.lines[0].line, 10);
	assert_int_equal(a.lines[0].self, 8);
	assert_int_equal(a.lines[0].total, 8);
	assert_string_equal(a.lines[1].file, "a.c");
	assert_int_equal(a.lines[1].line, 12);
	assert_int_equal(a.lines[1].self, 2);
	assert_int_equal(a.lines[1].total, 3);
	assert_string_equal(a.lines[2].file, "b.h");
	assert_int_equal(a.lines[2].line, 3);
	assert_int_equal(a.lines[2].self, 4);
	assert_null(a.lines[3].file);
	assert_int_equal(a.lines[3].line, 0);
	assert_int_equal(a.lines[3].self, 3);
	assert_int_equal(a.lines[3].total, 3);
	assert_int_equal(annotate_hottest(&a), 0);
	annotation_free(&a);
	assert_null(a.lines);
	assert_int_equal(a.nlines, 0);

	/* main has no sites at all. */
	annotate_function(s, main_, &a);
	assert_false(a.has_sites);
	assert_false(a.has_lines);
	assert_int_equal(a.nlines, 0);
	assert_int_equal(a.total, s->samples);
	assert_int_equal(annotate_hottest(&a), 0);
	annotation_free(&a);
	snapshot_unref(s);
	profile_free(p);
}

/* Sites without a line only (no file, a file but no line, a line but no file): one row, and
 * has_lines false. */
static void function_without_lines(void **state)
{
	(void)state;
	struct profile *p = profile_new(NULL);
	uint32_t main_ = profile_func(p, "prog", "main", 0);
	uint32_t work = profile_func(p, "prog", "work", 0);
	struct annotation a;

	add(p, main_, work, profile_site(p, work, 0x10, NULL, 0), 2);
	add(p, main_, work, profile_site(p, work, 0x14, "a.c", 0), 3);
	add(p, main_, work, profile_site(p, work, 0x18, NULL, 9), 4);
	struct snapshot *s = profile_snapshot(p);
	annotate_function(s, work, &a);
	assert_true(a.has_sites);
	assert_false(a.has_lines);
	assert_int_equal(a.nlines, 1);
	assert_null(a.lines[0].file);
	assert_int_equal(a.lines[0].line, 0);
	assert_int_equal(a.lines[0].self, 9);
	annotation_free(&a);

	/* A line without its file is no line either. */
	uint32_t lone = profile_func(p, "prog", "lone", 0);
	add(p, main_, lone, profile_site(p, lone, 0x30, NULL, 9), 1);
	snapshot_unref(s);
	s = profile_snapshot(p);
	annotate_function(s, lone, &a);
	assert_false(a.has_lines);
	assert_int_equal(a.nlines, 1);
	assert_null(a.lines[0].file);
	assert_int_equal(a.lines[0].line, 0);
	annotation_free(&a);
	snapshot_unref(s);
	profile_free(p);
}

/* A snapshot from elsewhere (not interned): equal file names in two strings are one file. */
static void function_files_by_content(void **state)
{
	(void)state;
	static const char a1[] = "a.c", a2[] = "a.c", b[] = "b.c";
	struct snapshot *s = snapshot_alloc(strpool_new());
	struct snapshot_func *funcs = calloc(2, sizeof(*funcs));
	uint64_t *self = calloc(2, sizeof(*self)), *total = calloc(2, sizeof(*total));
	struct snapshot_site *sites = calloc(4, sizeof(*sites));
	struct annotation a;

	funcs[0].name = "[root]";
	funcs[1].name = "work";
	sites[0] = (struct snapshot_site){ 1, 4, 0x10, a1, 1, 1 };
	sites[1] = (struct snapshot_site){ 1, 2, 0x14, b, 2, 2 };
	sites[2] = (struct snapshot_site){ 1, 4, 0x18, a2, 4, 4 };
	sites[3] = (struct snapshot_site){ 1, 4, 0x1c, b, 8, 8 };
	s->funcs = funcs;
	s->nfuncs = 2;
	s->func_self = self;
	s->func_total = total;
	s->sites = sites;
	s->nsites = 4;
	annotate_function(s, 1, &a);
	assert_int_equal(a.nlines, 3);
	assert_string_equal(a.lines[0].file, "a.c");
	assert_int_equal(a.lines[0].self, 5);
	assert_ptr_equal(a.lines[1].file, b);
	assert_int_equal(a.lines[1].line, 2);
	assert_int_equal(a.lines[2].line, 4);
	assert_int_equal(a.lines[2].self, 8);
	annotation_free(&a);
	snapshot_unref(s);
}

/* The line with the most self samples; on a tie the one with more total, then the first. */
static void hottest_line(void **state)
{
	(void)state;
	struct annotate_line lines[] = {
		{ "a.c", 1, 3, 9 }, { "a.c", 2, 7, 7 }, { "a.c", 3, 7, 8 }, { "a.c", 4, 7, 8 },
		{ NULL, 0, 1, 1 },
	};
	struct annotation a = { .lines = lines, .nlines = 5 };

	assert_int_equal(annotate_hottest(&a), 2);
	lines[1].self = 9;
	assert_int_equal(annotate_hottest(&a), 1);
	lines[4].self = 10;
	assert_int_equal(annotate_hottest(&a), 4);
}

/* --- source text ------------------------------------------------------------------------------ */

/* A new temporary file holding len bytes of text; its name in path (64 bytes). */
static void temp_file(char *path, const char *text, size_t len)
{
	int fd;

	strcpy(path, "/tmp/proftop_annotate_XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	close(fd);
}

/* Lines by number, without their newline; a tab stays (util_expand_tabs is the frontend's), a NUL
 * byte becomes a space; past the last line, or without a line, nothing. */
static void source_lines(void **state)
{
	(void)state;
	static const char text[] = "int a;\n\tint b;\nx\0y\n\nlast";
	struct annotate_sources *src = annotate_sources_new();
	char path[64];
	const char *why = NULL;

	temp_file(path, text, sizeof(text) - 1);
	assert_string_equal(annotate_source_line(src, path, 1, NULL, NULL, &why), "int a;");
	assert_string_equal(annotate_source_line(src, path, 2, NULL, NULL, &why), "\tint b;");
	assert_string_equal(annotate_source_line(src, path, 3, NULL, NULL, &why), "x y");
	assert_string_equal(annotate_source_line(src, path, 4, NULL, NULL, &why), "");
	assert_string_equal(annotate_source_line(src, path, 5, NULL, NULL, &why), "last");
	assert_null(annotate_source_line(src, path, 6, NULL, NULL, &why));
	assert_non_null(strstr(why, "changed since the build"));
	assert_null(annotate_source_line(src, path, 6, NULL, NULL, NULL));

	unlink(path);
	assert_null(annotate_source_line(src, NULL, 1, NULL, NULL, &why));
	assert_non_null(strstr(why, "no line"));
	assert_null(annotate_source_line(src, "/tmp", 0, NULL, NULL, &why));
	annotate_sources_free(src);
}

/* Each file is read once: a file changed after the first read is not read again. */
static void source_cached(void **state)
{
	(void)state;
	struct annotate_sources *src = annotate_sources_new();
	char path[64];
	FILE *f;

	temp_file(path, "one\n", 4);
	assert_string_equal(annotate_source_line(src, path, 1, NULL, NULL, NULL), "one");
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("two\nthree\n", f);
	fclose(f);
	assert_string_equal(annotate_source_line(src, path, 1, NULL, NULL, NULL), "one");
	assert_null(annotate_source_line(src, path, 2, NULL, NULL, NULL));
	unlink(path);
	annotate_sources_free(src);
}

static void source_empty_file(void **state)
{
	(void)state;
	struct annotate_sources *src = annotate_sources_new();
	char path[64];
	const char *why = NULL;

	temp_file(path, "", 0);
	assert_null(annotate_source_line(src, path, 1, NULL, NULL, &why));
	assert_non_null(strstr(why, "changed since the build"));
	unlink(path);
	annotate_sources_free(src);
}

static void source_unreadable(void **state)
{
	(void)state;
	struct annotate_sources *src = annotate_sources_new();
	char dir[] = "/tmp/proftop_annotate_dir_XXXXXX", fifo[128], big[128];
	const char *why = NULL;
	int fd;

	assert_non_null(mkdtemp(dir));
	snprintf(fifo, sizeof(fifo), "%s/fifo.c", dir);
	snprintf(big, sizeof(big), "%s/big.c", dir);

	assert_null(annotate_source_line(src, "/nonexistent/proftop/src/x.c", 1, NULL, NULL, &why));
	assert_string_equal(why, "not on this machine");

	/* A FIFO with no writer: a blocking open would never return (the alarm ends the test). */
	assert_int_equal(mkfifo(fifo, 0600), 0);
	alarm(10);
	why = NULL;
	assert_null(annotate_source_line(src, fifo, 1, NULL, NULL, &why));
	alarm(0);
	assert_string_equal(why, "not a regular file");

	why = NULL;
	assert_null(annotate_source_line(src, dir, 1, NULL, NULL, &why));
	assert_string_equal(why, "not a regular file");

	/* Sparse: 17 MiB that take no disk. */
	fd = open(big, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 17 << 20), 0);
	close(fd);
	why = NULL;
	assert_null(annotate_source_line(src, big, 1, NULL, NULL, &why));
	assert_string_equal(why, "over 16 MiB");

	unlink(fifo);
	unlink(big);
	rmdir(dir);
	annotate_sources_free(src);
}

/* A path that is no regular file is not even opened: opening a device or a FIFO can act (a
 * watchdog starts, a FIFO's waiting writer wakes), and the path comes from the profiled
 * program's debug information. inotify sees every open of the FIFO, as it happens. */
static void source_special_not_opened(void **state)
{
	(void)state;
	struct annotate_sources *src = annotate_sources_new();
	char dir[] = "/tmp/proftop_annotate_dir_XXXXXX", fifo[128];
	struct inotify_event ev[16];
	const char *why = NULL;
	int in;

	assert_non_null(mkdtemp(dir));
	snprintf(fifo, sizeof(fifo), "%s/fifo.c", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	assert_true(in >= 0);
	assert_true(inotify_add_watch(in, fifo, IN_OPEN) >= 0);
	alarm(10);
	assert_null(annotate_source_line(src, fifo, 1, NULL, NULL, &why));
	alarm(0);
	assert_string_equal(why, "not a regular file");
	assert_int_equal(read(in, ev, sizeof(ev)), -1); /* no event: never opened */
	assert_int_equal(errno, EAGAIN);
	close(in);
	unlink(fifo);
	rmdir(dir);
	annotate_sources_free(src);
}

/* A source file changed after the binary was built is not shown: the lines the binary's DWARF
 * gives are likely not the file's any more. Equal times, or no binary, are no reason. */
static void source_newer_than_binary(void **state)
{
	(void)state;
	struct annotate_sources *src = annotate_sources_new();
	struct timespec times[2] = { { .tv_nsec = UTIME_OMIT }, { 0 } };
	char path[64], binary[64];
	const char *why = NULL;

	temp_file(path, "one\ntwo\n", 8);
	temp_file(binary, "ELF", 3);
	times[1].tv_sec = time(NULL) - 3600;
	assert_int_equal(utimensat(AT_FDCWD, binary, times, 0), 0);
	assert_null(annotate_source_line(src, path, 1, binary, NULL, &why));
	assert_non_null(strstr(why, "newer than "));
	assert_non_null(strstr(why, binary));
	assert_non_null(strstr(why, "changed since the build"));
	assert_string_equal(annotate_source_line(src, path, 2, NULL, NULL, &why), "two");

	/* The binary rebuilt after the edit: shown. */
	times[1].tv_sec = time(NULL) + 60;
	assert_int_equal(utimensat(AT_FDCWD, binary, times, 0), 0);
	annotate_sources_free(src);
	src = annotate_sources_new();
	assert_string_equal(annotate_source_line(src, path, 1, binary, NULL, &why), "one");
	/* A binary that is gone tells nothing. */
	assert_string_equal(annotate_source_line(src, path, 1, "/nonexistent/proftop/prog", NULL, &why),
			    "one");
	unlink(path);
	unlink(binary);
	annotate_sources_free(src);
}

/* A file that cannot be opened says why, in the system's words. */
static void source_open_error(void **state)
{
	(void)state;
	struct annotate_sources *src = annotate_sources_new();
	char dir[] = "/tmp/proftop_annotate_dir_XXXXXX", loop[128];
	const char *why = NULL;

	assert_non_null(mkdtemp(dir));
	snprintf(loop, sizeof(loop), "%s/loop.c", dir);
	assert_int_equal(symlink("loop.c", loop), 0);
	assert_null(annotate_source_line(src, loop, 1, NULL, NULL, &why));
	assert_non_null(why);
	assert_string_equal(why, "cannot be opened: Too many levels of symbolic links");
	unlink(loop);
	rmdir(dir);
	annotate_sources_free(src);
}

/* The binary of an inlined function (no code of its own) is its module's. */
/* The owners of the threads a function ran in, each once; a thread whose owner was not known
 * says so; a saved profile reads as proftop. */
static void readers_of_function(void **state)
{
	(void)state;
	struct profile *p = profile_new(NULL);
	uint32_t main_ = profile_func(p, "prog", "main", 0);
	uint32_t hot = profile_func(p, "prog", "hot", 0x100);
	uint32_t cold = profile_func(p, "prog", "cold", 0x200);
	const uint32_t in_hot[] = { main_, hot }, in_cold[] = { main_, cold };
	struct asuser alice = { 1000, 100 }, bob = { 1001, 100 };
	struct annotate_readers r;
	struct snapshot *s;

	profile_set_owner(p, 1, 1, &alice);
	profile_set_owner(p, 1, 2, &alice);
	profile_set_owner(p, 3, 3, &bob);
	profile_set_owner(p, 4, 4, NULL);
	profile_add(p, 1, 1, in_hot, 2);
	profile_add(p, 1, 2, in_hot, 2);
	profile_add(p, 3, 3, in_cold, 2);
	profile_add(p, 4, 4, in_cold, 2);
	s = profile_snapshot(p);

	annotate_readers(s, hot, &r);
	assert_false(r.self);
	assert_false(r.unknown);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.v[0].uid, 1000);
	annotate_readers(s, cold, &r);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.v[0].uid, 1001);
	assert_true(r.unknown);
	annotate_readers(s, main_, &r);
	assert_int_equal(r.n, 2);
	snapshot_unref(s);
	profile_free(p);

	/* Read from a file: nobody's, proftop reads. */
	p = profile_new(NULL);
	profile_set_ownerless(p);
	main_ = profile_func(p, "prog", "main", 0);
	profile_add(p, 0, 0, &main_, 1);
	s = profile_snapshot(p);
	annotate_readers(s, main_, &r);
	assert_true(r.self);
	snapshot_unref(s);
	profile_free(p);
}

/* A file is read as the readers could, and what one reader read is not another's: as nobody a
 * file only root may read stays shut (and says by whom), as proftop (root) it opens; with no
 * known reader nothing is read. */
static void source_read_as_owner(void **state)
{
	(void)state;
	struct annotate_sources *src;
	struct annotate_readers nobody = { .n = 1, .v = { { 65534, 65534 } } }, none = { 0 },
				proftop = { .self = true };
	char path[64];
	const char *why = NULL;

	if (geteuid() != 0)
		skip();
	src = annotate_sources_new();
	temp_file(path, "secret\n", 7);
	assert_int_equal(chmod(path, 0600), 0);
	assert_null(annotate_source_line(src, path, 1, NULL, &nobody, &why));
	assert_string_equal(why, "cannot be opened by its process's user (uid 65534): Permission denied");
	assert_string_equal(annotate_source_line(src, path, 1, NULL, &proftop, &why), "secret");
	/* Read already, as root: still shut to nobody. */
	assert_null(annotate_source_line(src, path, 1, NULL, &nobody, &why));
	assert_null(annotate_source_line(src, path, 1, NULL, &none, &why));
	assert_non_null(strstr(why, "not read: the user of the processes it ran in is not known"));
	assert_int_equal(chmod(path, 0644), 0);
	annotate_sources_free(src);
	src = annotate_sources_new();
	assert_string_equal(annotate_source_line(src, path, 1, NULL, &nobody, &why), "secret");
	unlink(path);
	annotate_sources_free(src);
}

static void binary_of_inlined(void **state)
{
	(void)state;
	struct profile *p = profile_new(NULL);
	uint32_t main_ = profile_func(p, "prog", "main", 0x10);
	uint32_t inl = profile_inlined_func(p, "prog", "step");
	uint32_t lib = profile_inlined_func(p, "lib.so", "step");
	struct snapshot *s;

	profile_func_code(p, main_, "/usr/bin/prog", 0x10, 0x20);
	add(p, main_, inl, PROFILE_NO_SITE, 1);
	add(p, main_, lib, PROFILE_NO_SITE, 1);
	s = profile_snapshot(p);
	assert_string_equal(annotate_binary(s, main_), "/usr/bin/prog");
	assert_string_equal(annotate_binary(s, inl), "/usr/bin/prog");
	assert_null(annotate_binary(s, lib));
	assert_null(annotate_binary(s, 12345));
	snapshot_unref(s);
	profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(find_by_name),
		cmocka_unit_test(function_per_line),
		cmocka_unit_test(function_without_lines),
		cmocka_unit_test(function_files_by_content),
		cmocka_unit_test(hottest_line),
		cmocka_unit_test(source_lines),
		cmocka_unit_test(source_cached),
		cmocka_unit_test(source_empty_file),
		cmocka_unit_test(source_unreadable),
		cmocka_unit_test(source_special_not_opened),
		cmocka_unit_test(source_newer_than_binary),
		cmocka_unit_test(source_open_error),
		cmocka_unit_test(binary_of_inlined),
		cmocka_unit_test(readers_of_function),
		cmocka_unit_test(source_read_as_owner),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
