/* util.h — allocation that cannot fail, the one fatal-error path, and text made safe to show.
 *
 * Allocation failure is the only fatal error: xmalloc() and friends call fatal(), which runs the
 * cleanup hook a frontend registered (the TUI restores the terminal there) before printing and
 * exiting 1. Everything else an engine thread meets is reported through diag.h.
 *
 * The hook runs only on the thread that registered it. fatal() on another thread hands the
 * message over and waits: that thread must poll util_fatal_fd() and call util_fatal_check(), and
 * join workers with util_join(). */
#ifndef PROFTOP_UTIL_H
#define PROFTOP_UTIL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

void *xmalloc(size_t size);
void *xcalloc(size_t count, size_t size);
void *xrealloc(void *ptr, size_t size);
/* Grow *array (of *capacity elements of elem_size) so that it holds at least needed elements. */
void xgrow(void **array, size_t *capacity, size_t needed, size_t elem_size);
char *xstrdup(const char *s);
/* bytes as people read them, at most 7 characters: "512B", "12.3K", "1.5G" (powers of 1024).
 * Returns out. */
const char *util_bytes_text(char *out, size_t size, uint64_t bytes);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Called once by fatal() before it prints, on the calling thread; NULL clears it. */
void util_set_fatal_hook(void (*hook)(void));
_Noreturn void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Readable once a worker thread's fatal() waits for the hook's thread (made on the first call). */
int util_fatal_fd(void);
/* On the hook's thread: if a worker failed fatally, run the hook, print its message, exit 1. */
void util_fatal_check(void);
/* pthread_join() that runs util_fatal_check() while it waits. Returns 0 or -errno. */
int util_join(pthread_t thread);

/* Wake-ups between threads: an eventfd (non-blocking, close-on-exec; -errno when none could be
 * made) that util_wake() signals (a saturated one is awake already) and util_wake_wait() waits
 * on, at most ms milliseconds, taking what was signalled. */
int util_wake_new(void);
void util_wake(int fd);
void util_wake_wait(int fd, int ms);

/* The first size - 1 bytes of a small file (a /proc one), NUL-terminated in buf. Returns the
 * bytes read, 0 when the file cannot be opened or read or is empty. */
size_t util_read_small(const char *path, char *buf, size_t size);

/* Monotonic clock in nanoseconds (CLOCK_MONOTONIC, the clock perf timestamps use). */
uint64_t util_now_ns(void);

/* Hex digits (no sign, no "0x", no blanks; at least one) from p, up to end (NULL: up to the
 * first non-digit). Returns 0 with *after past the digits, or -EINVAL (no digit, overflow). */
int util_parse_hex(const char *p, const char *end, const char **after, uint64_t *out);

/* --- text for a terminal ---------------------------------------------------------------------------
 *
 * Names and paths come from the target (a symbol table, a JIT's perf map, a thread's name, a file
 * path) and may hold anything. Before such text reaches a terminal, or a line of a text file, each
 * character that would act rather than show is written visibly, one rule for every frontend:
 *   C0 controls and DEL in caret notation, as curses draws them: ESC ^[, BEL ^G, LF ^J, DEL ^?;
 *   C1 controls (U+0080..U+009F in UTF-8, which some terminals obey) as \u0080 .. \u009f;
 *   a byte that is not part of well-formed UTF-8 as \xNN (lower-case hex).
 * Everything else, valid UTF-8 included, stays as it is. The result holds no control character
 * and no line break, and is its own visible form. */

/* The most bytes one character turns into ("\u0080"). */
#define UTIL_VISIBLE_CHAR_MAX 6

/* The character at *text (not its terminating NUL) as it shows: writes its bytes to out and
 * returns how many, moving *text past the character. */
size_t util_visible_char(const char **text, char out[static UTIL_VISIBLE_CHAR_MAX]);
/* text in visible form into out (size bytes, NUL-terminated; text that does not fit is cut
 * before the first character that would not fit whole). Returns the length written. */
size_t util_visible(char *out, size_t size, const char *text);
/* text in visible form: text itself when it is already, else *buf (grown, with capacity *cap;
 * NULL and 0 to start; the caller frees it), which the next call may overwrite. */
const char *util_visible_str(const char *text, char **buf, size_t *cap);
/* text in visible form, written to out. */
void util_print_safe(FILE *out, const char *text);
/* A malloc'd copy of a line of text with each tab replaced by spaces up to the next multiple of
 * 8 bytes (source code shows as an editor shows it; the visible form would print ^I). */
char *util_expand_tabs(const char *text);

/* FNV-1a over bytes, the hash every table in proftop uses. */
static inline uint64_t util_hash_bytes(const void *data, size_t len, uint64_t seed)
{
	const unsigned char *p = data;
	uint64_t h = seed ^ 1469598103934665603ull;
	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 1099511628211ull;
	}
	return h;
}

static inline uint64_t util_hash_u64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

/* command as execvp() finds it (malloc'd): itself when it has a slash, else the first
 * executable file of that name in $PATH; NULL when there is none. */
char *util_find_command(const char *command);

#endif
