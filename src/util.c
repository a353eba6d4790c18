/* util.c — allocation that cannot fail, the fatal-error path, clocks, text made safe to show.
 *
 * The fatal path on a worker thread: the hook (the TUI's terminal restore) must run on the thread
 * that registered it, which may be inside curses right now. So a worker formats its message into
 * fatal_text, makes fatal_fd readable and waits; the hook's thread notices (util_fatal_check()
 * from its poll loop, util_join() while it joins a worker), runs the hook, prints and exits. A
 * worker that is not taken care of within FATAL_WAIT_NS prints and exits by itself. */
#include "proftop/util.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <poll.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
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
	atomic_store(&fatal_ready, true);
	if (fatal_fd >= 0)
		util_wake(fatal_fd);
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

size_t util_read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	buf[0] = '\0';
	if (fd < 0)
		return 0;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return (size_t)n;
}

const char *util_bytes_text(char *out, size_t size, uint64_t bytes)
{
	static const char units[] = "KMGTPE";
	double v = (double)bytes;
	int u = -1;

	if (bytes < 1024) {
		snprintf(out, size, "%lluB", (unsigned long long)bytes);
		return out;
	}
	while (v >= 1023.95 && u < 5) {
		v /= 1024;
		u++;
	}
	snprintf(out, size, v < 99.95 ? "%.1f%c" : "%.0f%c", v, units[u]);
	return out;
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

/* --- text for a terminal --------------------------------------------------------------------- */

/* The length of the well-formed UTF-8 sequence at p (RFC 3629: no overlong forms, no surrogates,
 * nothing past U+10FFFF), or 0. Stops at the first byte that does not fit, so never reads past a
 * terminating NUL. */
static size_t utf8_length(const unsigned char *p)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n;

	if (*p < 0x80)
		return 1;
	if (*p >= 0xc2 && *p <= 0xdf) {
		n = 2;
	} else if (*p >= 0xe0 && *p <= 0xef) {
		n = 3;
		lo = *p == 0xe0 ? 0xa0 : lo;
		hi = *p == 0xed ? 0x9f : hi;
	} else if (*p >= 0xf0 && *p <= 0xf4) {
		n = 4;
		lo = *p == 0xf0 ? 0x90 : lo;
		hi = *p == 0xf4 ? 0x8f : hi;
	} else {
		return 0;
	}
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

size_t util_visible_char(const char **text, char out[static UTIL_VISIBLE_CHAR_MAX])
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)*text;
	size_t n = utf8_length(p);

	if (*p < 0x20 || *p == 0x7f) {
		out[0] = '^';
		out[1] = (char)(*p ^ 0x40);
		*text += 1;
		return 2;
	}
	if (!n) {
		memcpy(out, "\\x", 2);
		out[2] = hex[*p >> 4];
		out[3] = hex[*p & 15];
		*text += 1;
		return 4;
	}
	if (n == 2 && p[0] == 0xc2 && p[1] < 0xa0) {
		memcpy(out, "\\u00", 4);
		out[4] = hex[p[1] >> 4];
		out[5] = hex[p[1] & 15];
		*text += 2;
		return 6;
	}
	memcpy(out, p, n);
	*text += n;
	return n;
}

size_t util_visible(char *out, size_t size, const char *text)
{
	char one[UTIL_VISIBLE_CHAR_MAX];
	size_t len = 0;

	if (!size)
		return 0;
	while (*text) {
		size_t n = util_visible_char(&text, one);

		if (len + n >= size)
			break;
		memcpy(out + len, one, n);
		len += n;
	}
	out[len] = '\0';
	return len;
}

const char *util_visible_str(const char *text, char **buf, size_t *cap)
{
	char one[UTIL_VISIBLE_CHAR_MAX];
	const char *p = text;
	bool changes = false;

	/* A character changes exactly when its visible form is longer than it. */
	while (*p && !changes) {
		const char *at = p;

		changes = util_visible_char(&p, one) != (size_t)(p - at);
	}
	if (!changes)
		return text;
	/* No character grows more than fourfold (a stray byte becomes "\xNN"). */
	xgrow((void **)buf, cap, 4 * strlen(text) + 1, 1);
	util_visible(*buf, *cap, text);
	return *buf;
}

void util_print_safe(FILE *out, const char *text)
{
	char one[UTIL_VISIBLE_CHAR_MAX];

	while (*text)
		fwrite(one, 1, util_visible_char(&text, one), out);
}

char *util_expand_tabs(const char *text)
{
	size_t tabs = 0, len = 0;
	char *out;

	for (const char *p = text; *p; p++)
		tabs += *p == '\t';
	out = xmalloc(strlen(text) + tabs * 7 + 1);
	for (const char *p = text; *p; p++) {
		if (*p != '\t') {
			out[len++] = *p;
			continue;
		}
		do
			out[len++] = ' ';
		while (len % 8);
	}
	out[len] = '\0';
	return out;
}

int util_wake_new(void)
{
	int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

	return fd < 0 ? -errno : fd;
}

void util_wake(int fd)
{
	if (write(fd, &(uint64_t){ 1 }, sizeof(uint64_t)) < 0) {
		/* saturated: the thread is awake already */
	}
}

void util_wake_wait(int fd, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	uint64_t count;

	poll(&pfd, 1, ms);
	if (read(fd, &count, sizeof(count)) < 0) {
		/* nothing signalled: the poll timed out */
	}
}

/* command as execvp() finds it (malloc'd): itself when it has a slash, else the first
 * executable file of that name in $PATH; NULL when there is none. */
char *util_find_command(const char *command)
{
	const char *path = getenv("PATH"), *at;

	if (strchr(command, '/'))
		return xstrdup(command);
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (at = path;; at++) {
		const char *end = strchr(at, ':');
		size_t len = end ? (size_t)(end - at) : strlen(at);
		char *full = xasprintf("%.*s%s%s", (int)len, at, len ? "/" : "", command);
		struct stat st;

		if (!stat(full, &st) && S_ISREG(st.st_mode) && !access(full, X_OK))
			return full;
		free(full);
		if (!end)
			return NULL;
		at = end;
	}
}
