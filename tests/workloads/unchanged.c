/* unchanged CASE REPORT [ARG...] — what a program can see of an allocation library preloaded
 * into it, written to REPORT (a file, so that proftop's own output is not mixed in): run with
 * and without proftop --mode alloc, the reports, the files written and the exit statuses must
 * be the same (tests/integration/unchanged.sh). Each case allocates enough for the library to
 * sample (at the rates the test sets) on every thread it uses.
 *
 *   fds IN OUT      closes every descriptor from 3 (close_range), opens IN (3) and OUT (4), and
 *                   copies IN to OUT while two threads allocate; the descriptors it holds, and
 *                   what open() gives next
 *   fds-reversed IN OUT   the same with OUT opened first
 *   errno           errno set before each allocation call that succeeds must be the same after,
 *                   on four threads and in a signal handler; no floating-point exception flag
 *                   raised, and none trapped when the program unmasks them
 *   limits          what sizes near SIZE_MAX and odd alignments give (NULL or a block, errno),
 *                   and blocks of their usable size written whole
 *   processes       a fork that does not exec, a vfork that execs, posix_spawn, signals handled
 *                   while allocating; then ends by SIGTERM
 *   threads         eight threads' allocations, their contents checked
 *   env             the environment as the program reads it, and as programs it starts see it
 *                   (through execv, execve with an environment of its own, one with its own
 *                   LD_PRELOAD, and execlp)
 *   env-child       (env's child) print the environment
 *   allocator       which allocator the blocks come from: jemalloc and tcmalloc count what they
 *                   hand out, glibc's mallinfo2 does
 *   getattr         threads whose first act is pthread_getattr_np(), which allocates with the
 *                   thread's lock held
 *   altstack        a signal handler on an 8 KiB alternate stack executes a program */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <fenv.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static FILE *report;
static char self[4096];

/* Allocate and free n blocks of size bytes: enough to be sampled. */
static void churn(int n, size_t size)
{
	for (int i = 0; i < n; i++) {
		char *p = malloc(size);

		if (!p)
			exit(90);
		p[0] = (char)i;
		p[size - 1] = (char)i;
		free(p);
	}
}

static void *churn_thread(void *arg)
{
	(void)arg;
	churn(200, 100000);
	return NULL;
}

static void churn_on_threads(int n)
{
	pthread_t t[8];

	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, churn_thread, NULL);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
}

/* The descriptors open now, as /proc/self/fd lists them (the listing's own left out), into
 * text (room bytes). */
static void list_fds(char *text, size_t room)
{
	DIR *dir = opendir("/proc/self/fd");
	int fds[256], n = 0, own = dir ? dirfd(dir) : -1;
	struct dirent *e;
	size_t used = 0;

	text[0] = '\0';
	while (dir && (e = readdir(dir)) && n < 256)
		if (e->d_name[0] != '.' && atoi(e->d_name) != own)
			fds[n++] = atoi(e->d_name);
	if (dir)
		closedir(dir);
	for (int i = 0; i < n; i++)
		for (int k = i + 1; k < n; k++)
			if (fds[k] < fds[i]) {
				int t = fds[i];

				fds[i] = fds[k];
				fds[k] = t;
			}
	for (int i = 0; i < n && used + 12 < room; i++)
		used += (size_t)snprintf(text + used, room - used, "%d ", fds[i]);
}

/* The allocation library's first sample comes before the descriptors are closed (libunwind
 * opened a pipe there, and went on using its numbers). */
static int case_fds(const char *in_path, const char *out_path, int reversed, const char *path)
{
	char buf[4096], listed[256];
	int in, out, next;
	ssize_t n;

	churn_on_threads(1);
	churn(100, 200000);
	close_range(3, ~0U, 0);
	if (reversed) {
		out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		in = open(in_path, O_RDONLY);
	} else {
		in = open(in_path, O_RDONLY);
		out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	}
	churn(100, 200000);
	while ((n = read(in, buf, sizeof(buf))) > 0) {
		churn_on_threads(2); /* each new thread's first sample */
		churn(20, 100000);
		if (write(out, buf, (size_t)n) != n)
			return 91;
	}
	list_fds(listed, sizeof(listed));
	next = open("/dev/null", O_RDONLY);
	report = fopen(path, "w");
	if (!report)
		return 92;
	fprintf(report, "in %d out %d read %zd next %d\nfds: %s\n", in, out, n, next, listed);
	return 0;
}

static int errno_changes, fp_changes;
static pthread_mutex_t errno_lock = PTHREAD_MUTEX_INITIALIZER;

/* Each successful call must leave errno as it found it. */
static void errno_round(void)
{
	int changed = 0;

	feclearexcept(FE_ALL_EXCEPT);
	for (int i = 0; i < 300; i++) {
		void *p, *q, *a = NULL, *small;

		errno = 4242;
		p = malloc(50000 + (size_t)i);
		changed += errno != 4242;
		small = malloc(1 + (size_t)i % 200);
		changed += errno != 4242;
		small = realloc(small, 300 + (size_t)i);
		changed += errno != 4242;
		free(small);
		changed += errno != 4242;
		q = calloc(10, 5000);
		changed += errno != 4242;
		p = realloc(p, 120000);
		changed += errno != 4242;
		changed += posix_memalign(&a, 64, 70000) != 0 || errno != 4242;
		free(a);
		a = aligned_alloc(256, 70000);
		changed += !a || errno != 4242;
		free(a);
		free(p);
		free(q);
		changed += errno != 4242;
	}
	pthread_mutex_lock(&errno_lock);
	errno_changes += changed;
	fp_changes += fetestexcept(FE_ALL_EXCEPT) != 0; /* (the library's arithmetic shows none) */
	pthread_mutex_unlock(&errno_lock);
}

static void *errno_thread(void *arg)
{
	(void)arg;
	errno_round();
	return NULL;
}

static volatile sig_atomic_t handler_changes, handler_runs;

static void errno_handler(int sig)
{
	int saved = errno;
	void *p;

	(void)sig;
	errno = 77;
	p = malloc(300000);
	handler_changes += errno != 77;
	free(p);
	handler_changes += errno != 77;
	handler_runs++;
	errno = saved;
}

static int case_errno(void)
{
	pthread_t t[4];

	signal(SIGUSR1, errno_handler);
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, errno_thread, NULL);
	errno_round();
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 50; i++)
		raise(SIGUSR1);
	fprintf(report, "errno changed by successful calls: %d; in the handler: %d of %d runs\n",
		errno_changes, (int)handler_changes, (int)handler_runs);
	fprintf(report, "threads that saw floating-point exception flags raised: %d\n", fp_changes);
	/* Inexact results trapped (SIGFPE): the library's arithmetic must not raise it. */
	feenableexcept(FE_INEXACT | FE_INVALID | FE_DIVBYZERO | FE_OVERFLOW);
	for (int i = 0; i < 2000; i++)
		free(malloc(100000 + (size_t)i));
	fedisableexcept(FE_ALL_EXCEPT);
	fprintf(report, "allocated with inexact results trapped\n");
	return 0;
}

static void result(const char *what, void *p, size_t alignment)
{
	int err = errno;

	fprintf(report, "%-32s %s%s errno %s\n", what, p ? "block" : "NULL",
		p && alignment && ((uintptr_t)p % alignment) ? " MISALIGNED" : "",
		err ? strerrorname_np(err) : "0");
}

/* (volatile: the compiler refuses the calls it can see are too large) */
static volatile size_t size_max = SIZE_MAX, ptrdiff_max = PTRDIFF_MAX;

static int case_limits(void)
{
	void *p = malloc(1000), *q;
	size_t huge = size_max, big = ptrdiff_max;
	int err;

	/* The huge ones first: each is sampled (it covers any gap). */
	errno = 0, q = malloc(huge), result("malloc(SIZE_MAX)", q, 0), free(q);
	errno = 0, q = malloc(huge - 8), result("malloc(SIZE_MAX - 8)", q, 0), free(q);
	errno = 0, q = malloc(big), result("malloc(PTRDIFF_MAX)", q, 0), free(q);
	errno = 0, q = calloc(huge / 2, 3), result("calloc(SIZE_MAX / 2, 3)", q, 0), free(q);
	errno = 0, q = calloc(1, huge), result("calloc(1, SIZE_MAX)", q, 0), free(q);
	errno = 0, q = realloc(p, huge), result("realloc(p, SIZE_MAX)", q, 0), free(q);
	errno = 0, q = reallocarray(p, huge, 2), result("reallocarray(p, SIZE_MAX, 2)", q, 0);
	free(q);
	errno = 0, q = valloc(huge), result("valloc(SIZE_MAX)", q, 0), free(q);
	errno = 0, q = pvalloc(huge), result("pvalloc(SIZE_MAX)", q, 0), free(q);
	errno = 0, q = memalign(64, huge), result("memalign(64, SIZE_MAX)", q, 64), free(q);
	errno = 0, q = aligned_alloc(24, 48), result("aligned_alloc(24, 48)", q, 0), free(q);
	errno = 0, q = aligned_alloc(0, 16), result("aligned_alloc(0, 16)", q, 0), free(q);
	errno = 0, q = aligned_alloc(3, 64), result("aligned_alloc(3, 64)", q, 0), free(q);
	errno = 0, q = aligned_alloc(64, 100), result("aligned_alloc(64, 100)", q, 64), free(q);
	errno = 0, q = aligned_alloc(4096, 1 << 20), result("aligned_alloc(4096, 1M)", q, 4096);
	free(q);
	errno = 0, q = memalign(3, 64), result("memalign(3, 64)", q, 0), free(q);
	errno = 0, q = memalign(0, 16), result("memalign(0, 16)", q, 0), free(q);
	q = NULL, errno = 0, err = posix_memalign(&q, 3, 64);
	fprintf(report, "posix_memalign(3, 64)            %d %s\n", err, q ? "block" : "NULL");
	free(q);
	q = NULL, errno = 0, err = posix_memalign(&q, 24, 64);
	fprintf(report, "posix_memalign(24, 64)           %d %s\n", err, q ? "block" : "NULL");
	free(q);
	q = NULL, errno = 0, err = posix_memalign(&q, 64, huge);
	fprintf(report, "posix_memalign(64, SIZE_MAX)     %d %s\n", err, q ? "block" : "NULL");
	free(q);
	errno = 0, q = malloc(0), result("malloc(0)", q, 0), free(q);
	errno = 0, q = realloc(NULL, 0), result("realloc(NULL, 0)", q, 0), free(q);
	/* A block's usable size is at least its size, and all of it can be written: the allocator's
	 * own, sampled or not. */
	for (size_t size = 1; size <= ((size_t)4 << 20); size = size * 3 + 7) {
		unsigned char *b = malloc(size);
		size_t usable = malloc_usable_size(b);

		memset(b, 0xab, usable);
		if (size < 100000) /* (past glibc's mmap threshold, which moves) */
			fprintf(report, "usable size of %zu: %zu\n", size, usable);
		b = realloc(b, size * 2);
		fprintf(report, "usable >= size for %zu: %s, kept through realloc: %s\n", size,
			usable >= size ? "yes" : "NO", b[size - 1] == 0xab && b[0] == 0xab ? "yes" : "NO");
		free(b);
	}
	errno = 0, q = realloc(p, 0), result("realloc(p, 0)", q, 0), free(q);
	return 0;
}

static volatile sig_atomic_t usr1_seen;

static void usr1(int sig)
{
	void *p = malloc(1 << 20);

	(void)sig;
	free(p);
	usr1_seen++;
}

static int case_processes(const char *path)
{
	char *echo_argv[] = { "echo", "spawned", NULL };
	posix_spawn_file_actions_t actions;
	pid_t pid;
	int status;

	signal(SIGUSR1, usr1);
	churn(50, 300000);
	pid = fork();
	if (pid == 0) { /* no exec: the library's state forked with it */
		FILE *f;
		char name[4200];

		churn(100, 300000);
		snprintf(name, sizeof(name), "%s.child", path);
		f = fopen(name, "w");
		fprintf(f, "child allocated\n");
		fclose(f);
		_exit(3);
	}
	waitpid(pid, &status, 0);
	fprintf(report, "fork: exit %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	pid = vfork();
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", "exit 4", (char *)NULL);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	fprintf(report, "vfork: exit %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	fflush(report);
	posix_spawn_file_actions_init(&actions);
	posix_spawn_file_actions_adddup2(&actions, fileno(report), 1);
	status = posix_spawnp(&pid, "echo", &actions, NULL, echo_argv, environ);
	posix_spawn_file_actions_destroy(&actions);
	if (!status)
		waitpid(pid, &status, 0);
	fprintf(report, "posix_spawn: exit %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	for (int i = 0; i < 30; i++) {
		raise(SIGUSR1);
		churn(10, 200000);
	}
	fprintf(report, "SIGUSR1 handled %d times\n", (int)usr1_seen);
	fclose(report);
	signal(SIGTERM, SIG_DFL);
	raise(SIGTERM);
	return 93;
}

struct filler {
	unsigned seed;
	unsigned long sum;
};

static void *fill_thread(void *arg)
{
	struct filler *f = arg;

	for (int i = 0; i < 500; i++) {
		size_t size = 1000 + (size_t)(rand_r(&f->seed) % 200000);
		unsigned char *b = malloc(size);

		for (size_t k = 0; k < size; k += 97)
			b[k] = (unsigned char)(k + (size_t)i);
		b = realloc(b, size + 5000);
		for (size_t k = 0; k < size; k += 97)
			f->sum += b[k];
		free(b);
	}
	return NULL;
}

static int case_threads(void)
{
	pthread_t t[8];
	struct filler f[8];

	for (int i = 0; i < 8; i++) {
		f[i] = (struct filler){ (unsigned)i + 1, 0 };
		pthread_create(&t[i], NULL, fill_thread, &f[i]);
	}
	for (int i = 0; i < 8; i++) {
		pthread_join(t[i], NULL);
		fprintf(report, "thread %d sum %lu\n", i, f[i].sum);
	}
	return 0;
}

/* The environment in its order (a library that moved an entry would show). */
static void print_env(FILE *out, const char *who)
{
	for (size_t i = 0; environ && environ[i]; i++)
		fprintf(out, "%s: %s\n", who, environ[i]);
	fprintf(out, "%s: getenv LD_PRELOAD %s\n", who, getenv("LD_PRELOAD") ? "set" : "unset");
}

/* The child's report goes to the same file, appended. */
static int run_child(const char *path, const char *how)
{
	char *argv[] = { self, "env-child", (char *)path, (char *)how, NULL };
	char *custom[] = { "A=1", "B=2", NULL };
	char *preloading[] = { "LD_PRELOAD=/lib/x86_64-linux-gnu/libm.so.6", "C=3", NULL };
	pid_t pid;
	int status;

	fflush(report);
	pid = fork();
	if (pid == 0) {
		if (!strcmp(how, "execv"))
			execv(self, argv);
		else if (!strcmp(how, "execve-custom"))
			execve(self, argv, custom);
		else if (!strcmp(how, "execve-preload"))
			execve(self, argv, preloading);
		else if (!strcmp(how, "execlp"))
			execlp(self, self, "env-child", path, how, (char *)NULL);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int case_env(const char *path)
{
	churn(20, 300000);
	print_env(report, "self");
	fclose(report);
	for (int i = 0; i < 4; i++) {
		const char *how[] = { "execv", "execve-custom", "execve-preload", "execlp" };

		if (run_child(path, how[i]))
			return 94;
	}
	report = fopen(path, "a");
	return 0;
}

/* (its own function: the test finds the children's allocations by it) */
__attribute__((noinline)) static void env_child_allocates(void)
{
	churn(20, 300000);
	__asm__ volatile("" ::: "memory");
}

static int case_env_child(const char *how)
{
	env_child_allocates();
	print_env(report, how);
	return 0;
}

/* Threads that ask for their own attributes first (as Rust's and the JVM's do): glibc allocates
 * in pthread_getattr_np() with the thread's lock held. */
static void *asks_attributes(void *arg)
{
	pthread_attr_t attr;
	size_t size = 0;

	(void)arg;
	if (!pthread_getattr_np(pthread_self(), &attr)) {
		pthread_attr_getstacksize(&attr, &size);
		pthread_attr_destroy(&attr);
	}
	churn(5, 100000);
	return (void *)(uintptr_t)(size > 0);
}

static int case_getattr(void)
{
	pthread_t t[64];
	int ok = 0;

	for (int round = 0; round < 4; round++) {
		for (int i = 0; i < 64; i++)
			pthread_create(&t[i], NULL, asks_attributes, NULL);
		for (int i = 0; i < 64; i++) {
			void *got;

			pthread_join(t[i], &got);
			ok += got != NULL;
		}
	}
	fprintf(report, "threads that read their attributes: %d of 256\n", ok);
	return 0;
}

/* A signal handler on a small alternate stack (as a crash reporter's) executes a program. */
static char exec_line[4200];

static void exec_from_handler(int sig)
{
	(void)sig;
	execl("/bin/sh", "sh", "-c", exec_line, (char *)NULL);
	_exit(96);
}

static int case_altstack(const char *path)
{
	static unsigned char altstack[8192]; /* SIGSTKSZ, as glibc 2.36 had it */
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };
	struct sigaction sa = { .sa_handler = exec_from_handler, .sa_flags = SA_ONSTACK };

	churn(20, 300000);
	snprintf(exec_line, sizeof(exec_line),
		 "echo executed from a handler on its alternate stack >> '%s'", path);
	fprintf(report, "raising SIGUSR2\n");
	fclose(report);
	report = NULL;
	if (sigaltstack(&ss, NULL) || sigaction(SIGUSR2, &sa, NULL))
		return 97;
	raise(SIGUSR2);
	return 98;
}

/* Who hands out the blocks: 64 MiB held must show in that allocator's own count. */
static int case_allocator(void)
{
	int (*mallctl)(const char *, void *, size_t *, void *, size_t) =
		(int (*)(const char *, void *, size_t *, void *, size_t))dlsym(RTLD_DEFAULT, "mallctl");
	int (*tc_property)(const char *, size_t *) =
		(int (*)(const char *, size_t *))dlsym(RTLD_DEFAULT, "MallocExtension_GetNumericProperty");
	void *held[64];
	uint64_t before = 0, after = 0;
	size_t len = sizeof(before), tc = 0;
	const char *who = mallctl ? "jemalloc" : tc_property ? "tcmalloc" : "glibc";

	if (mallctl)
		mallctl("thread.allocated", &before, &len, NULL, 0);
	else if (tc_property && tc_property("generic.current_allocated_bytes", &tc))
		before = tc;
	else
		before = mallinfo2().uordblks + mallinfo2().hblkhd;
	for (int i = 0; i < 64; i++) {
		held[i] = malloc(1 << 20);
		memset(held[i], 1, 4096);
	}
	if (mallctl)
		mallctl("thread.allocated", &after, &len, NULL, 0);
	else if (tc_property && tc_property("generic.current_allocated_bytes", &tc))
		after = tc;
	else
		after = mallinfo2().uordblks + mallinfo2().hblkhd;
	fprintf(report, "allocator %s counts the 64 MiB: %s\n", who,
		after - before >= (64ull << 20) && after - before < (72ull << 20) ? "yes" : "NO");
	for (int i = 0; i < 64; i++) {
		size_t usable = malloc_usable_size(held[i]);

		memset(held[i], 2, usable);
		held[i] = realloc(held[i], (2 << 20) + (size_t)i);
		free(held[i]);
	}
	/* The allocator's usable sizes, sampled blocks' too (every one, at --alloc-rate 1). */
	for (size_t size = 1; size < 70000; size = size * 5 / 4 + 1) {
		void *b = malloc(size);

		fprintf(report, "usable size of %zu: %zu\n", size, malloc_usable_size(b));
		free(b);
	}
	/* Small blocks, most not sampled, grown to sizes that are. */
	for (int i = 0; i < 500; i++) {
		char *b = malloc(100);

		memset(b, 3, malloc_usable_size(b));
		b = realloc(b, 200000 + (size_t)i);
		if (b[99] != 3)
			fprintf(report, "realloc lost the contents\n");
		memset(b, 4, malloc_usable_size(b));
		free(b);
	}
	churn_on_threads(4);
	return 0;
}

int main(int argc, char **argv)
{
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int rc;

	if (n <= 0 || argc < 3) {
		fprintf(stderr, "usage: unchanged CASE REPORT [ARG...]\n");
		return 2;
	}
	self[n] = '\0';
	if (!strncmp(argv[1], "fds", 3))
		return argc == 5 ? case_fds(argv[3], argv[4], !strcmp(argv[1], "fds-reversed"),
					    argv[2]) : 2;
	report = fopen(argv[2], !strcmp(argv[1], "env-child") ? "a" : "w");
	if (!report)
		return 95;
	if (!strcmp(argv[1], "errno"))
		rc = case_errno();
	else if (!strcmp(argv[1], "limits"))
		rc = case_limits();
	else if (!strcmp(argv[1], "processes"))
		rc = case_processes(argv[2]);
	else if (!strcmp(argv[1], "threads"))
		rc = case_threads();
	else if (!strcmp(argv[1], "env"))
		rc = case_env(argv[2]);
	else if (!strcmp(argv[1], "env-child") && argc == 4)
		rc = case_env_child(argv[3]);
	else if (!strcmp(argv[1], "allocator"))
		rc = case_allocator();
	else if (!strcmp(argv[1], "getattr"))
		rc = case_getattr();
	else if (!strcmp(argv[1], "altstack"))
		rc = case_altstack(argv[2]);
	else
		rc = 2;
	if (report)
		fclose(report);
	return rc;
}
