/* Unit tests of perlframes.c: on Debian's perl 5.36 (installed by make deps), programs whose
 * subs are known (a package's sub, an anonymous sub, nested calls; a sort comparator, which
 * runs in a run loop of its own; an XS sub, which pushes no context) are read from their
 * memory and must be those, innermost first, with packages, lines and runs. Then forged memory:
 * a chain of context stacks that loops, counts past their limits, an SV of the wrong type, a
 * name longer than any, a perl of unknown layout: each an error or a cut name, never a crash. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "proftop/perlframes.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#define PERL "/usr/bin/perl"

/* Nested calls: outer -> an anonymous sub -> middle -> Foo::bar, which spins. */
static const char nested[] =
	"package Foo;\n"                                          /* 1 */
	"sub bar {\n"                                             /* 2 */
	"    my $x = 0; $| = 1; print \"ready\\n\";\n"            /* 3 */
	"    $x++ while 1;\n"                                     /* 4 */
	"}\n"                                                     /* 5 */
	"package main;\n"                                         /* 6 */
	"sub middle { Foo::bar() }\n"                             /* 7 */
	"my $anon = sub {\n"                                      /* 8 */
	"    middle();\n"                                         /* 9 */
	"};\n"                                                    /* 10 */
	"sub outer { $anon->() }\n"                               /* 11 */
	"outer();\n";                                             /* 12 */

/* A sort whose comparator spins: its own run loop. */
static const char sorting[] =
	"sub slow_cmp {\n"                                        /* 1 */
	"    my $x = 0; $| = 1; print \"ready\\n\";\n"            /* 2 */
	"    $x++ while 1;\n"                                     /* 3 */
	"}\n"                                                     /* 4 */
	"sub sorter { my @s = sort slow_cmp 1, 2 }\n"             /* 5 */
	"sorter();\n";                                            /* 6 */

/* An XS sub: md5_hex of 256 MB, over and over. */
static const char xs[] =
	"use Digest::MD5;\n"                                      /* 1 */
	"sub hashing {\n"                                         /* 2 */
	"    my $s = 'x' x (256 << 20); $| = 1; print \"ready\\n\";\n" /* 3 */
	"    Digest::MD5::md5_hex($s) while 1;\n"                 /* 4 */
	"}\n"                                                     /* 5 */
	"hashing();\n";                                           /* 6 */

struct child {
	pid_t pid;
	char script[64];
};

/* The test's child, which spins: killed by the teardown whether the test passed or failed
 * (a failed assertion leaves the test at once), and by the kernel if this process dies. */
static struct child *running;

static int read_mem(void *arg, uint64_t addr, void *buf, size_t len)
{
	const struct child *c = arg;
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };

	return process_vm_readv(c->pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -EIO;
}

/* Run perl on program (written to a file), until it says it is ready. */
static void start(const char *program, struct child *c)
{
	int fds[2], fd;
	char line[16];
	FILE *out;

	snprintf(c->script, sizeof(c->script), "/tmp/test_perlframes.XXXXXX");
	fd = mkstemp(c->script);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, program, strlen(program)), (ssize_t)strlen(program));
	close(fd);
	assert_int_equal(pipe(fds), 0);
	c->pid = fork();
	assert_true(c->pid >= 0);
	if (c->pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(fds[1], 1);
		close(fds[0]);
		execl(PERL, PERL, c->script, (char *)NULL);
		_exit(127);
	}
	running = c;
	close(fds[1]);
	out = fdopen(fds[0], "r");
	assert_non_null(fgets(line, sizeof(line), out));
	assert_string_equal(line, "ready\n");
	fclose(out);
	usleep(200000); /* (from the print to the loop) */
}

static void stop(struct child *c)
{
	kill(c->pid, SIGKILL);
	waitpid(c->pid, NULL, 0);
	unlink(c->script);
	running = NULL;
}

static int stop_running(void **state)
{
	(void)state;
	if (running)
		stop(running);
	return 0;
}

/* The interpreter of c: /usr/bin/perl's symbols, its load bias from its first mapping. */
static void open_child(struct child *c, struct perlframes *pl)
{
	struct perlframes_symbols sym;
	char path[64], line[512];
	unsigned long long start = 0;
	FILE *maps;

	assert_int_equal(perlframes_symbols_of(PERL, &sym), 0);
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)c->pid);
	maps = fopen(path, "r");
	assert_non_null(maps);
	while (fgets(line, sizeof(line), maps))
		if (strstr(line, " " PERL "\n") && sscanf(line, "%llx-", &start) == 1)
			break;
	fclose(maps);
	assert_true(start != 0);
	assert_int_equal(perlframes_open(pl, &sym, start, read_mem, c), 0);
}

static void expect(const struct perlframe *f, const char *package, const char *name,
		   unsigned line, unsigned run)
{
	assert_string_equal(f->package, package);
	assert_string_equal(f->name, name);
	assert_int_equal(f->line, line);
	assert_int_equal(f->run, run);
}

static void live_nested(void **state)
{
	static struct perlframe f[16];
	struct perlframes pl;
	static struct child c; /* (the teardown reads it after a failure) */
	char anon[PERLFRAMES_NAME_MAX];
	unsigned runs;
	int n;

	(void)state;
	start(nested, &c);
	open_child(&c, &pl);
	n = perlframes_stack(&pl, f, 16, &runs);
	assert_int_equal(n, 5);
	assert_int_equal(runs, 1);
	expect(&f[0], "Foo", "bar", 4, 0);
	expect(&f[1], "main", "middle", 7, 0);
	snprintf(anon, sizeof(anon), "__ANON__[%s:9]", c.script);
	expect(&f[2], "main", anon, 9, 0);
	expect(&f[3], "main", "outer", 11, 0);
	expect(&f[4], "main", "RUNTIME", 12, 0);
	assert_string_equal(f[0].file, c.script);
	assert_int_equal(f[1].first_line, 7);
	assert_false(f[0].xsub);
	/* Fewer frames asked for: the innermost. */
	assert_int_equal(perlframes_stack(&pl, f, 2, &runs), 2);
	expect(&f[0], "Foo", "bar", 4, 0);
	perlframes_close(&pl);
	stop(&c);
}

static void live_sort(void **state)
{
	static struct perlframe f[16];
	struct perlframes pl;
	static struct child c; /* (the teardown reads it after a failure) */
	unsigned runs;

	(void)state;
	start(sorting, &c);
	open_child(&c, &pl);
	assert_int_equal(perlframes_stack(&pl, f, 16, &runs), 3);
	assert_int_equal(runs, 2);
	expect(&f[0], "main", "slow_cmp", 3, 0);
	expect(&f[1], "main", "sorter", 5, 1);
	expect(&f[2], "main", "RUNTIME", 6, 1);
	perlframes_close(&pl);
	stop(&c);
}

static void live_xs(void **state)
{
	static struct perlframe f[16];
	struct perlframes pl;
	static struct child c; /* (the teardown reads it after a failure) */
	unsigned runs;
	int n = 0, tries;

	(void)state;
	start(xs, &c);
	open_child(&c, &pl);
	/* (the statement copies its argument first: the XS sub is the innermost most of the time) */
	for (tries = 0; tries < 200; tries++) {
		n = perlframes_stack(&pl, f, 16, &runs);
		if (n == 3)
			break;
		usleep(10000);
	}
	assert_int_equal(n, 3);
	assert_int_equal(runs, 1);
	assert_true(f[0].xsub);
	assert_string_equal(f[0].package, "Digest::MD5");
	assert_string_equal(f[0].name, "md5_hex");
	expect(&f[1], "main", "hashing", 4, 0);
	expect(&f[2], "main", "RUNTIME", 6, 0);
	perlframes_close(&pl);
	stop(&c);
}

/* --- forged memory ------------------------------------------------------------------------- */

#define BASE 0x10000u
#define SIZE_ADDR 0x8000u /* where PL_interp_size is: outside the image */

struct image {
	uint8_t bytes[8192];
	uint16_t interp_size;
};

static int read_image(void *arg, uint64_t addr, void *buf, size_t len)
{
	const struct image *m = arg;

	if (addr == SIZE_ADDR && len == 2) {
		memcpy(buf, &m->interp_size, 2);
		return 0;
	}
	if (addr < BASE || addr - BASE > sizeof(m->bytes) || len > sizeof(m->bytes) - (addr - BASE))
		return -EIO;
	memcpy(buf, m->bytes + (addr - BASE), len);
	return 0;
}

static void put64(struct image *m, uint64_t at, uint64_t v)
{
	memcpy(m->bytes + (at - BASE), &v, 8);
}

static void put32(struct image *m, uint64_t at, uint32_t v)
{
	memcpy(m->bytes + (at - BASE), &v, 4);
}

/* 5.36's offsets (perlframes.c): the interpreter at +0x100 (curcop 208, curstackinfo 224,
 * phase 2512), one context stack at +0x40 whose contexts are at +0x1000, a CV at +0x200 (body
 * +0x240), its glob at +0x300 (body +0x340), a stash at +0x400 (body +0x440; its aux part at
 * body + 32), names (HEKs) at +0x500 and +0xc00. */
enum {
	INTERP = BASE + 0x100, SI = BASE + 0x40, CX = BASE + 0x1000, CV = BASE + 0x200,
	CV_BODY = BASE + 0x240, GV = BASE + 0x300, GV_BODY = BASE + 0x340, HV = BASE + 0x400,
	HV_BODY = BASE + 0x440, SUB_HEK = BASE + 0x500, PKG_HEK = BASE + 0xc00,
	NAMES = BASE + 0xd00, COP = BASE + 0xe00, COP_FILE = BASE + 0xf00,
};

/* One sub, main::sub, called from Perl, in the only context of the only stack. */
static void forge(struct image *m)
{
	memset(m, 0, sizeof(*m));
	m->interp_size = 3768;
	put64(m, BASE, INTERP);                 /* PL_curinterp */
	put64(m, INTERP + 224, SI);             /* curstackinfo */
	put64(m, SI + 8, CX);                   /* si_cxstack */
	put32(m, SI + 32, 0);                   /* cxix */
	put32(m, SI + 36, 3);                   /* cxmax */
	m->bytes[CX - BASE] = 9;                /* CXt_SUB */
	put64(m, CX + 48, 0x1234);              /* retop: called from Perl */
	put64(m, CX + 72, CV);
	put64(m, CV, CV_BODY);                  /* sv_any */
	put32(m, CV + 12, 13);                  /* SVt_PVCV */
	put64(m, CV_BODY + 56, GV);             /* xcv_gv */
	put64(m, GV, GV_BODY);
	put32(m, GV + 12, 9);                   /* SVt_PVGV */
	put64(m, GV_BODY + 32, SUB_HEK);        /* GvNAME_HEK */
	put64(m, GV_BODY + 40, HV);             /* GvSTASH */
	put64(m, HV, HV_BODY);
	put32(m, HV + 12, 12 | 0x02000000);     /* SVt_PVHV, SVf_OOK */
	put64(m, HV_BODY + 32, PKG_HEK);        /* aux: its name */
	put32(m, SUB_HEK + 4, 3);
	memcpy(m->bytes + (SUB_HEK + 8 - BASE), "sub", 3);
	put32(m, PKG_HEK + 4, 4);
	memcpy(m->bytes + (PKG_HEK + 8 - BASE), "main", 4);
	put64(m, CX + 16, COP);                 /* the statement that called the sub */
	put32(m, COP + 36, 12);                 /* its line */
	put64(m, COP + 48, COP_FILE);               /* its file */
	memcpy(m->bytes + (COP_FILE - BASE), "prog.pl", 8);
}

static int forged_stack(struct image *m, struct perlframe *f, size_t max, unsigned *runs)
{
	struct perlframes_symbols sym = { .curinterp = BASE, .interp_size = SIZE_ADDR };
	struct perlframes pl;
	int n, err = perlframes_open(&pl, &sym, 0, read_image, m);

	if (err)
		return err;
	n = perlframes_stack(&pl, f, max, runs);
	perlframes_close(&pl);
	return n;
}

static void forged(void **state)
{
	static struct perlframe f[8];
	struct image *m = calloc(1, sizeof(*m));
	unsigned runs;

	(void)state;
	forge(m);
	assert_int_equal(forged_stack(m, f, 8, &runs), 1);
	assert_int_equal(runs, 1);
	expect(&f[0], "main", "sub", 0, 0);
	/* While the program runs: the main program too, outermost, at the statement that called. */
	put32(m, INTERP + 2512, 4);
	assert_int_equal(forged_stack(m, f, 8, &runs), 2);
	expect(&f[1], "main", "RUNTIME", 12, 0);
	assert_string_equal(f[1].file, "prog.pl");
	/* ... but not at a statement that does not read (no line, no file): no main program. */
	put32(m, COP + 36, 0);
	assert_int_equal(forged_stack(m, f, 8, &runs), 1);
	put32(m, COP + 36, 12);
	put64(m, COP + 48, 0);
	assert_int_equal(forged_stack(m, f, 8, &runs), 1);
	put64(m, COP + 48, COP_FILE);
	/* A stash with several names: the first. */
	put32(m, HV_BODY + 32 + 28, 2);
	put64(m, HV_BODY + 32, NAMES);
	put64(m, NAMES, PKG_HEK);
	assert_int_equal(forged_stack(m, f, 8, &runs), 2);
	expect(&f[0], "main", "sub", 0, 0);
	/* A name longer than any: cut, and still a string. */
	put32(m, SUB_HEK + 4, 100000);
	memset(m->bytes + (SUB_HEK + 8 - BASE), 'a', 0x300);
	assert_int_equal(forged_stack(m, f, 8, &runs), 2);
	assert_int_equal(strlen(f[0].name), PERLFRAMES_NAME_MAX - 1);
	/* A HEK of negative length, an SV of the wrong type: errors. */
	put32(m, SUB_HEK + 4, (uint32_t)-5);
	assert_int_equal(forged_stack(m, f, 8, &runs), -EBADMSG);
	forge(m);
	put32(m, CV + 12, 12);
	assert_int_equal(forged_stack(m, f, 8, &runs), -EBADMSG);
	/* More contexts than room, or a room past the limit; a context stack that loops. */
	forge(m);
	put32(m, SI + 32, 4);
	assert_int_equal(forged_stack(m, f, 8, &runs), -EBADMSG);
	forge(m);
	put32(m, SI + 36, 1u << 20);
	assert_int_equal(forged_stack(m, f, 8, &runs), -EBADMSG);
	forge(m);
	put64(m, SI + 16, SI);
	assert_int_equal(forged_stack(m, f, 8, &runs), -EBADMSG);
	/* Contexts past the image: unreadable. */
	forge(m);
	put64(m, SI + 8, BASE + sizeof(m->bytes) - 8);
	assert_int_equal(forged_stack(m, f, 8, &runs), -EIO);
	/* No interpreter yet; a perl of another layout. */
	forge(m);
	put64(m, BASE, 0);
	assert_int_equal(forged_stack(m, f, 8, &runs), -ENOENT);
	forge(m);
	m->interp_size = 1000;
	assert_int_equal(forged_stack(m, f, 8, &runs), -ENOTSUP);
	free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(live_nested, stop_running),
		cmocka_unit_test_teardown(live_sort, stop_running),
		cmocka_unit_test_teardown(live_xs, stop_running),
		cmocka_unit_test(forged),
	};

	if (access(PERL, X_OK)) {
		fprintf(stderr, "%s is not installed (make deps installs perl)\n", PERL);
		return 1;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
