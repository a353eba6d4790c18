/* util.c — allocation that cannot fail, the fatal-error path, clocks.
 *
 * The fatal path on a worker thread: the hook (the TUI's terminal restore) must run on the thread
 * that registered it, which may be inside curses right now. So a worker formats its message into
 * fatal_text, makes fatal_fd readable and waits; the hook's thread notices (util_fatal_check()
 * from its poll loop, util_join() while it joins a worker), runs the hook, prints and exits. A
 * worker that is not taken care of within FATAL_WAIT_NS prints and exits by itself. */
#include "proftop/util.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#define FATAL_WAIT_NS 5000000000ull

static void (*fatal_hook)(void);
static pthread_t hook_thread;
static int fatal_fd = -1;
static atomic_flag fatal_claimed = ATOMIC_FLAG_INIT;
static atomic_bool fatal_ready;
static char fatal_text[512];

void util_set_fatal_hook(void (*hook)(void))
{
	fatal_hook = hook;
	hook_thread = pthread_self();
}

int util_fatal_fd(void)
{
	if (fatal_fd < 0)
		fatal_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	return fatal_fd;
}

static _Noreturn void die(void)
{
	if (fatal_hook) {
		void (*hook)(void) = fatal_hook;

		fatal_hook = NULL; /* a failure inside the hook must not recurse */
		hook();
	}
	fprintf(stderr, "proftop: %s\n", fatal_text);
	exit(1);
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* A worker's fatal error: hand it to the hook's thread and wait to be ended with the process. */
static _Noreturn void hand_over(void)
{
	uint64_t one = 1;

	atomic_store(&fatal_ready, true);
	if (fatal_fd >= 0 && write(fatal_fd, &one, sizeof(one)) < 0) {
		/* saturated: the hook's thread has been told already */
	}
	sleep_ns(FATAL_WAIT_NS);
	fprintf(stderr, "proftop: %s\n", fatal_text);
	_exit(1);
}

_Noreturn void fatal(const char *fmt, ...)
{
	va_list ap;

	/* Only the first fatal error is told; a second thread failing meanwhile waits for the end. */
	if (atomic_flag_test_and_set(&fatal_claimed)) {
		if (fatal_hook && pthread_equal(pthread_self(), hook_thread) && atomic_load(&fatal_ready))
			die();
		for (;;)
			sleep_ns(FATAL_WAIT_NS);
	}
	va_start(ap, fmt);
	vsnprintf(fatal_text, sizeof(fatal_text), fmt, ap);
	va_end(ap);
	if (fatal_hook && !pthread_equal(pthread_self(), hook_thread))
		hand_over();
	die();
}

void util_fatal_check(void)
{
	uint64_t value;

	if (fatal_fd >= 0 && read(fatal_fd, &value, sizeof(value)) < 0) {
		/* nothing was written: see the flag */
	}
	if (atomic_load(&fatal_ready))
		die();
}

int util_join(pthread_t thread)
{
	for (;;) {
		struct timespec until;
		int err;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += 50 * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		err = pthread_timedjoin_np(thread, NULL, &until);
		if (err != ETIMEDOUT)
			return -err;
		util_fatal_check();
	}
}

static void *check(void *ptr, size_t size)
{
	if (!ptr && size)
		fatal("out of memory (%zu bytes)", size);
	return ptr;
}

void *xmalloc(size_t size)
{
	return check(malloc(size), size);
}

void *xcalloc(size_t count, size_t size)
{
	return check(calloc(count, size), count * size);
}

void *xrealloc(void *ptr, size_t size)
{
	return check(realloc(ptr, size), size);
}

void xgrow(void **array, size_t *capacity, size_t needed, size_t elem_size)
{
	size_t cap = *capacity;

	if (needed <= cap)
		return;
	if (cap < 16)
		cap = 16;
	while (cap < needed)
		cap *= 2;
	if (cap > SIZE_MAX / elem_size)
		fatal("out of memory (array of %zu)", cap);
	*array = xrealloc(*array, cap * elem_size);
	*capacity = cap;
}

char *xstrdup(const char *s)
{
	return check(strdup(s), strlen(s) + 1);
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *out = NULL;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&out, fmt, ap);
	va_end(ap);
	if (n < 0)
		fatal("out of memory (formatting)");
	return out;
}

uint64_t util_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int util_parse_hex(const char *p, const char *end, const char **after, uint64_t *out)
{
	const char *start = p;
	uint64_t v = 0;

	for (; !end || p < end; p++) {
		unsigned d;

		if (*p >= '0' && *p <= '9')
			d = (unsigned)(*p - '0');
		else if (*p >= 'a' && *p <= 'f')
			d = (unsigned)(*p - 'a' + 10);
		else if (*p >= 'A' && *p <= 'F')
			d = (unsigned)(*p - 'A' + 10);
		else
			break;
		if (v >> 60)
			return -EINVAL;
		v = v << 4 | d;
	}
	if (p == start)
		return -EINVAL;
	*after = p;
	*out = v;
	return 0;
}

/* The length of the UTF-8 sequence at p if it is well formed, else 0; *cp its code point. */
static size_t utf8_sequence(const unsigned char *p, uint32_t *code_point)
{
	size_t len = p[0] >= 0xf0 ? 4 : p[0] >= 0xe0 ? 3 : p[0] >= 0xc2 ? 2 : 0;
	uint32_t cp;

	if (!len || p[0] > 0xf4)
		return 0;
	cp = p[0] & (0x7f >> len);
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	*code_point = cp;
	return len;
}

void util_print_safe(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		uint32_t cp = 0;
		size_t len;

		if (*p < 0x20 || *p == 0x7f) {
			fputc('^', out);
			fputc(*p == 0x7f ? '?' : *p + '@', out);
			p++;
		} else if (*p < 0x80) {
			fputc(*p++, out);
		} else if ((len = utf8_sequence(p, &cp)) && cp > 0x9f) {
			fwrite(p, 1, len, out);
			p += len;
		} else { /* a C1 control (one '?' for its two bytes), or not UTF-8 */
			fputc('?', out);
			p += len ? len : 1;
		}
	}
}
