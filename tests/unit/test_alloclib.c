/* The allocation-sampling library (preload/alloc.c) in real processes. This test runs itself
 * again as the child, with the library preloaded and a ring to write to: the child allocates a
 * known 70/30 split of bytes from two call sites on three threads (and frees them), leaks a known
 * number of bytes from a third, allocates in a signal handler, goes through calloc, realloc and
 * the aligned allocators (checking what each promises: zeroes, contents kept, alignment, the
 * usable size), and forks a child that execs this program again (whose allocations arrive too, the library preloaded by the inherited
 * environment) and one that does not exec. The parent reads the ring while the child runs, names the stacks with proftop's
 * symbolizer, and checks the estimates against what the child did. Nothing deadlocks: the child
 * must be done within a minute. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "proftop/allocrec.h"
#include "proftop/allocrun.h"
#include "proftop/sample.h"
#include "proftop/shmring.h"
#include "proftop/symbols.h"
#include "proftop/unwind.h"
#include "proftop/util.h"

#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define MEAN 65536
/* (a burst of leaks with the reader starved by a loaded machine: 1,600 records) */
#define SLOTS (4 * ALLOCRUN_SLOTS)
#define SMALL 64
#define BIG 4096
#define CHURN (400ull << 20)      /* bytes allocated and freed by the two sites */
#define LEAKS 1000
#define LEAK_SIZE (200 * 1024)    /* bytes each leak */
#define GRANDCHILD_ALLOCS 20
#define GRANDCHILD_SIZE (2 << 20)

static char self[4096];
static void *volatile leaked[LEAKS];

/* --- the child: the workload, the library preloaded -------------------------------------------- */

/* (The asm keeps the call from being a tail call: the site's frame stays on the stack.) */
__attribute__((noinline)) static void *site_small(void)
{
	void *p = malloc(SMALL);

	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

__attribute__((noinline)) static void *site_big(void)
{
	void *p = malloc(BIG);

	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

__attribute__((noinline)) static void *site_leak(void)
{
	void *p = malloc(LEAK_SIZE);

	memset(p, 1, 64);
	return p;
}

__attribute__((noinline)) static void site_signal(int sig)
{
	void *p = malloc(1 << 20); /* twice... sixteen times the mean: nearly always sampled */

	(void)sig;
	__asm__ volatile("" : : "r"(p) : "memory");
	free(p);
}

static void check(bool ok)
{
	if (!ok)
		abort();
}

/* The other entry points, each block checked, all freed. */
__attribute__((noinline)) static void site_others(void)
{
	for (int i = 0; i < 200; i++) {
		unsigned char *z = calloc(1000, 300);
		void *a = NULL, *b, *c;
		char *r = malloc(100);

		check(z != NULL && malloc_usable_size(z) >= 300000);
		for (size_t k = 0; k < 300000; k += 4096)
			check(z[k] == 0);
		free(z);
		check(posix_memalign(&a, 64, 256 * 1024) == 0 && ((uintptr_t)a & 63) == 0);
		b = aligned_alloc(4096, 300 * 1024);
		c = memalign(256, 200 * 1024);
		check(b && !((uintptr_t)b & 4095) && c && !((uintptr_t)c & 255));
		check(malloc_usable_size(a) >= 256 * 1024 && malloc_usable_size(b) >= 300 * 1024);
		free(a);
		free(b);
		free(c);
		/* grown by realloc to 1 MiB, its first bytes kept */
		memset(r, 'x', 100);
		for (size_t n = 1000; n <= ((size_t)1 << 20); n *= 4) {
			r = realloc(r, n);
			check(r && r[0] == 'x' && r[99] == 'x' && malloc_usable_size(r) >= n);
		}
		r = realloc(r, 10);
		check(r && r[9] == 'x');
		free(r);
	}
	check(posix_memalign(&(void *){ NULL }, 3, 64) == EINVAL);
	free(NULL);
}

__attribute__((noinline)) static void site_grandchild(void)
{
	for (int i = 0; i < GRANDCHILD_ALLOCS; i++) {
		void *p = malloc(GRANDCHILD_SIZE);

		__asm__ volatile("" : : "r"(p) : "memory");
		free(p);
	}
}

/* 70% of its bytes from site_small, 30% from site_big, each freed at once (after a few). */
static void *churn(void *arg)
{
	uint64_t bytes = (uint64_t)(uintptr_t)arg, small = 0, big = 0;
	void *keep[8] = { 0 };
	unsigned k = 0;

	while (small + big < bytes) {
		void *p;

		if (small * 10 < (small + big) * 7) {
			p = site_small();
			small += SMALL;
		} else {
			p = site_big();
			big += BIG;
		}
		free(keep[k]);
		keep[k] = p;
		k = (k + 1) % 8;
	}
	for (unsigned i = 0; i < 8; i++)
		free(keep[i]);
	return NULL;
}

static int child_main(int report_fd, int wait_fd)
{
	pthread_t t[2];
	pid_t grandchild;
	char done = 'd';

	signal(SIGUSR1, site_signal);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, churn, (void *)(uintptr_t)(CHURN / 3));
	churn((void *)(uintptr_t)(CHURN - 2 * (CHURN / 3)));
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < LEAKS; i++)
		leaked[i] = site_leak();
	for (int i = 0; i < 20; i++)
		raise(SIGUSR1);
	site_others();
	grandchild = fork();
	if (grandchild == 0) {
		execl(self, self, "--grandchild", (char *)NULL);
		_exit(127);
	}
	waitpid(grandchild, NULL, 0);
	grandchild = fork(); /* and one that does not exec: the library's state forked with it */
	if (grandchild == 0) {
		site_grandchild();
		_exit(0);
	}
	waitpid(grandchild, NULL, 0);
	/* Done: stay, with the mappings, until the parent has named the stacks. */
	if (write(report_fd, &done, 1) != 1 || read(wait_fd, &done, 1) < 0)
		return 1;
	return 0;
}

/* The library replaces malloc; a sanitizer's runtime must own it: nothing to see there. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define sanitizers_skip()                                                                          \
	do {                                                                                       \
		print_message("skipped: the library cannot go into a sanitizer's build\n");       \
		skip();                                                                            \
	} while (0)
#else
#define sanitizers_skip() ((void)0)
#endif

/* --- the parent: reads the ring ---------------------------------------------------------------- */

struct tally {
	double bytes[7];          /* per site (site_names): estimated bytes allocated */
	double leaked;            /* estimated bytes of site_leak never freed */
	uint64_t allocs, frees, untracked, grandchild, bad, overflow;
	pid_t grandchildren[2];   /* the pids their records carry */
	bool named;               /* the child's mappings read (once it runs this program again) */
	uint64_t *live;           /* sampled addresses not freed (of the child) */
	uint32_t *live_site;
	size_t nlive, cap;
};

/* site_of()'s names: the sites of this program, then cxxalloc's. */
static const char *const site_names[] = { "site_small", "site_big", "site_leak", "site_signal",
					   "cxx_objects", "cxx_arrays", "cxx_leak" };
#define NSITES 7

/* The site among the first frames of the record's stack (unwound as proftop's collector does:
 * from the registers and stack copy the record carries, past the library's own frames). */
static int site_of(struct symbolizer *sym, struct unwinder *unw, pid_t pid, const struct allocrec *r)
{
	static unsigned char record[sizeof(struct perf_event_header) + sizeof(struct allocrec) +
				    ALLOCREC_STACK_MAX];
	size_t len = sizeof(struct perf_event_header) + sizeof(*r) + r->stack_size;
	struct perf_event_header h = { SAMPLE_RECORD_ALLOC, 0, (uint16_t)len };
	struct sample_record sample;
	struct allocrec fixed;
	uint64_t ips[64];
	bool truncated;
	size_t n, skip = 0;

	if (r->stack_size > ALLOCREC_STACK_MAX)
		return -2;
	memcpy(record, &h, sizeof(h));
	memcpy(record + sizeof(h), r, sizeof(*r) + r->stack_size);
	if (sample_parse_alloc(record, len, &fixed, &sample))
		return -2;
	n = unwinder_unwind(unw, &sample, ips, 64, &truncated);
	while (skip < n && ips[skip] >= r->code_start && ips[skip] < r->code_end)
		skip++;
	for (size_t f = skip; f < n && f < skip + 6; f++) {
		struct symbol s;

		symbolizer_resolve(sym, pid, ips[f] - 1, &s);
		for (int i = 0; s.function && i < NSITES; i++)
			if (!strcmp(s.function, site_names[i]))
				return i;
	}
	return -1;
}

static void take(struct tally *t, struct symbolizer *sym, struct unwinder *unw, pid_t child,
		 const struct allocrec *r, size_t bytes)
{
	int site;

	if (bytes < sizeof(*r) || r->stack_size > bytes - sizeof(*r)) {
		t->bad++;
		return;
	}
	if ((pid_t)r->pid != child) {
		if (r->kind != ALLOCREC_FREE && r->size == GRANDCHILD_SIZE) {
			t->grandchild++;
			for (int i = 0; i < 2; i++)
				if (!t->grandchildren[i] || t->grandchildren[i] == (pid_t)r->pid) {
					t->grandchildren[i] = (pid_t)r->pid;
					break;
				}
		}
		return;
	}
	if (r->kind == ALLOCREC_FREE) {
		t->frees++;
		for (size_t i = 0; i < t->nlive; i++)
			if (t->live[i] == r->addr) {
				t->live[i] = t->live[--t->nlive];
				t->live_site[i] = t->live_site[t->nlive];
				return;
			}
		return;
	}
	t->allocs += r->kind == ALLOCREC_ALLOC;
	t->untracked += r->kind == ALLOCREC_UNTRACKED;
	if (!t->named) /* a record: the child runs the program it exec'd, mapped as it stays */
		t->named = symbolizer_load_proc(sym, child) == 0;
	site = site_of(sym, unw, child, r);
	if (site == -2) {
		t->bad++;
		return;
	}
	if (site >= 0)
		t->bytes[site] += (double)r->size * allocrec_scale(r->size, MEAN);
	xgrow((void **)&t->live, &t->cap, t->nlive + 1, sizeof(*t->live));
	t->live_site = realloc(t->live_site, t->cap * sizeof(*t->live_site));
	t->live[t->nlive] = r->addr;
	t->live_site[t->nlive++] = (uint32_t)site; /* (UINT32_MAX: another site) */
}

static void drain(struct shmring_reader *rd, struct tally *t, struct symbolizer *sym,
		  struct unwinder *unw, pid_t child)
{
	const struct allocrec *r;
	size_t bytes;

	while ((r = shmring_peek(rd, util_now_ns(), &bytes))) {
		take(t, sym, unw, child, r, bytes);
		shmring_release(rd);
	}
}

/* Run PROGRAM REPORT_FD WAIT_FD (or this program as --child) with the library preloaded and a
 * ring, take every record into *t while it runs and until it reports it is done, then let it
 * end: it must end well, within a minute. */
static void run_preloaded(const char *program, struct tally *t)
{
	uint32_t slot = ALLOCRUN_SLOT_SIZE;
	size_t bytes = shmring_bytes(SLOTS, slot);
	int fd = memfd_create("proftop-alloc-test", MFD_CLOEXEC), report[2], wait_pipe[2], status;
	struct symbolizer *sym = symbolizer_new(NULL);
	struct unwinder *unw = unwinder_new(CALLGRAPH_DWARF, sym, NULL);
	struct shmring_reader rd;
	char c, ringtext[64], waittext[16], reporttext[16], lib[4200];
	uint64_t deadline = util_now_ns() + 60ull * 1000000000ull;
	pid_t child;
	void *mem;

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)bytes), 0);
	mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(mem != MAP_FAILED);
	assert_int_equal(shmring_init(mem, bytes, SLOTS, slot), 0);
	shmring_reader_init(&rd, mem, SLOTS, slot);
	assert_int_equal(pipe(report), 0);
	assert_int_equal(pipe(wait_pipe), 0);
	/* The library beside this test's directory: build/tests/.. */
	snprintf(lib, sizeof(lib), "%s", self);
	*strrchr(lib, '/') = '\0';
	*strrchr(lib, '/') = '\0';
	strcat(lib, "/libproftop-alloc.so");
	assert_int_equal(access(lib, R_OK), 0);
	snprintf(ringtext, sizeof(ringtext), "/proc/%d/fd/%d", (int)getpid(), fd);
	snprintf(reporttext, sizeof(reporttext), "%d", report[1]);
	snprintf(waittext, sizeof(waittext), "%d", wait_pipe[0]);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		close(report[0]);
		close(wait_pipe[1]); /* or its read would never see the end */
		setenv("LD_PRELOAD", lib, 1);
		setenv("PROFTOP_ALLOC_RING", ringtext, 1);
		setenv("PROFTOP_ALLOC_MEAN", "65536", 1);
		if (program)
			execl(program, program, reporttext, waittext, (char *)NULL);
		else
			execl(self, self, "--child", reporttext, waittext, (char *)NULL);
		_exit(127);
	}
	close(report[1]);
	close(wait_pipe[0]);
	/* Read while the child works, until it says it is done. */
	for (;;) {
		struct timeval tv = { 0, 2000 };
		fd_set set;

		drain(&rd, t, sym, unw, child);
		FD_ZERO(&set);
		FD_SET(report[0], &set);
		if (select(report[0] + 1, &set, NULL, NULL, &tv) > 0)
			break;
		assert_true(util_now_ns() < deadline); /* a deadlock in the library */
	}
	assert_int_equal(read(report[0], &c, 1), 1);
	drain(&rd, t, sym, unw, child);
	close(wait_pipe[1]);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	t->overflow = shmring_overflow(&rd);
	unwinder_free(unw);
	symbolizer_free(sym);
	munmap(mem, bytes);
	close(fd);
	close(report[0]);
}

/* Estimated bytes still held by site's sampled blocks of size bytes. */
static double held(const struct tally *t, unsigned site, uint64_t size)
{
	double sum = 0;

	for (size_t i = 0; i < t->nlive; i++)
		if (t->live_site[i] == site)
			sum += (double)size * allocrec_scale(size, MEAN);
	return sum;
}

static void sites_shares_leaks(void **state)
{
	struct tally t = { 0 };

	(void)state;
	sanitizers_skip();
	run_preloaded(NULL, &t);
	t.leaked = held(&t, 2, LEAK_SIZE);
	print_message("samples %llu, frees %llu, untracked %llu, grandchild %llu, overflow %llu; "
		      "small %.1f MB big %.1f MB leak %.1f MB (leaked %.1f MB) signal %.1f MB\n",
		      (unsigned long long)t.allocs, (unsigned long long)t.frees,
		      (unsigned long long)t.untracked, (unsigned long long)t.grandchild,
		      (unsigned long long)t.overflow, t.bytes[0] / 1e6, t.bytes[1] / 1e6,
		      t.bytes[2] / 1e6, t.leaked / 1e6, t.bytes[3] / 1e6);
	assert_int_equal(t.bad, 0);
	assert_int_equal(t.overflow, 0);
	assert_int_equal(t.untracked, 0);
	/* 70/30 within 3 points; the churn's total and the leak within 5%. */
	assert_true(fabs(100 * t.bytes[0] / (t.bytes[0] + t.bytes[1]) - 70) < 3);
	assert_true(fabs((t.bytes[0] + t.bytes[1]) / (double)CHURN - 1) < 0.05);
	assert_true(fabs(t.leaked / ((double)LEAKS * LEAK_SIZE) - 1) < 0.05);
	/* Every sampled block but the leaks was freed, its free sent (realloc's and the aligned
	 * allocators' too). */
	for (size_t i = 0; i < t.nlive; i++)
		assert_true(t.live_site[i] == 2);
	assert_true(t.frees > 1000);
	assert_true(t.bytes[3] > 0);                 /* allocated in a signal handler */
	/* Two grandchildren, forked then exec'd and forked alone: each its own pid in its records. */
	assert_true(t.grandchild >= 2 * GRANDCHILD_ALLOCS * 3 / 4);
	assert_true(t.grandchildren[0] && t.grandchildren[1] &&
		    t.grandchildren[0] != t.grandchildren[1]);
	free(t.live);
	free(t.live_site);
}

/* C++: new and delete reach the library through libstdc++'s operator new and delete. */
static void cxx_new_delete(void **state)
{
	char program[4200];
	struct tally t = { 0 };
	double churn, held_by_leak;

	(void)state;
	sanitizers_skip();
	snprintf(program, sizeof(program), "%s", self);
	*strrchr(program, '/') = '\0';
	*strrchr(program, '/') = '\0';
	strcat(program, "/workloads/cxxalloc");
	if (access(program, X_OK)) {
		print_message("skipped: %s is not built\n", program);
		skip();
	}
	run_preloaded(program, &t);
	churn = t.bytes[4] + t.bytes[5];
	held_by_leak = held(&t, 6, 100000);
	print_message("samples %llu, frees %llu: objects %.1f MB arrays %.1f MB leaked %.1f MB\n",
		      (unsigned long long)t.allocs, (unsigned long long)t.frees, t.bytes[4] / 1e6,
		      t.bytes[5] / 1e6, held_by_leak / 1e6);
	assert_int_equal(t.bad + t.overflow + t.untracked, 0);
	/* 400 MiB in objects of 256 bytes and arrays of 4096, 1 to 16 in bytes; 200 MB leaked.
	 * 400 MiB at a mean of 64 KiB is ~6,400 samples, so 5% is four standard deviations
	 * (100 MiB made it two: CI failed on a 5.5% draw). */
	assert_true(fabs(churn / (double)(400ull << 20) - 1) < 0.05);
	assert_true(fabs(100 * t.bytes[4] / churn - 100.0 * 256 / (256 + 4096)) < 3);
	assert_true(fabs(held_by_leak / 200e6 - 1) < 0.05);
	for (size_t i = 0; i < t.nlive; i++)
		assert_true(t.live_site[i] == 6); /* delete and delete[] sent their frees */
	free(t.live);
	free(t.live_site);
}

int main(int argc, char **argv)
{
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		return 2;
	self[n] = '\0';
	if (argc == 4 && !strcmp(argv[1], "--child"))
		return child_main(atoi(argv[2]), atoi(argv[3]));
	if (argc == 2 && !strcmp(argv[1], "--grandchild")) {
		site_grandchild();
		return 0;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sites_shares_leaks),
		cmocka_unit_test(cxx_new_delete),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
