/* util.c — allocation that cannot fail, the fatal-error path, clocks. */
#include "proftop/util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void (*fatal_hook)(void);

void util_set_fatal_hook(void (*hook)(void))
{
	fatal_hook = hook;
}

_Noreturn void fatal(const char *fmt, ...)
{
	va_list ap;

	if (fatal_hook) {
		void (*hook)(void) = fatal_hook;

		fatal_hook = NULL; /* a failure inside the hook must not recurse */
		hook();
	}
	fputs("proftop: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
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
