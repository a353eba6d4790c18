/* fetch.h — debug files fetched from debuginfod servers (libdebuginfod) in the background.
 *
 * When DEBUGINFOD_URLS names servers, a module without symbols or DWARF of its own or in a debug
 * file on disk is asked for by its build-id: fetcher_want() only queues the id, and the fetcher's
 * thread does the network work, one file at a time, into libdebuginfod's cache
 * (DEBUGINFOD_CACHE_PATH, DEBUGINFOD_TIMEOUT and the library's other variables apply). What ended,
 * found or not, waits until the owner takes it with fetcher_take(); the owner's eventfd is written
 * then, so it need not poll. The owner never waits on the network: fetcher_free() stops a
 * transfer under way (libdebuginfod asks about progress about once a second) and waits for the
 * thread for at most FETCH_STOP_WAIT_NS.
 *
 * Threads: the fetcher's thread owns the libdebuginfod client; the queue, the finished list and
 * the name being fetched are shared under the fetcher's lock, and so is what was asked for
 * (fetcher_want() is called by any collector worker). Everything else is the owner's (the
 * collector thread). */
#ifndef PROFTOP_FETCH_H
#define PROFTOP_FETCH_H

#include <stdbool.h>
#include <stddef.h>

#include "proftop/debugfile.h"

#define FETCH_STOP_WAIT_NS 1500000000ull

struct fetcher;

/* A fetch that ended. */
struct fetched {
	unsigned char build_id[DEBUGFILE_BUILD_ID_MAX];
	size_t build_id_len;
	char *name;	/* the module's, as fetcher_want() was given it */
	char *path;	/* the file in libdebuginfod's cache; NULL when none came */
	int err;	/* then why: -ENOENT (no server has it), or another -errno */
};

/* A fetcher, when DEBUGINFOD_URLS names a server; NULL with errno 0 (nothing to do) when it does
 * not, NULL with errno set when no client or thread could be made. wake_fd is written when a
 * fetch ends. */
struct fetcher *fetcher_new(int wake_fd);
/* Stop (see above) and free; f may be NULL. */
void fetcher_free(struct fetcher *f);
/* The servers asked, as DEBUGINFOD_URLS names them (for messages). */
const char *fetcher_urls(const struct fetcher *f);
/* Queue a fetch of the debug file of build_id[0..len) for the module called name; a build-id
 * asked for before is not asked again. Never blocks on the network. Any thread. */
void fetcher_want(struct fetcher *f, const unsigned char *build_id, size_t len, const char *name);
/* Take the oldest fetch that ended into *out (free with fetched_clear()). Returns false when
 * none did. */
bool fetcher_take(struct fetcher *f, struct fetched *out);
void fetched_clear(struct fetched *done);
/* What is being fetched: the module's name in name[0..size) ("" when nothing is); returns how
 * many more wait after it. */
size_t fetcher_status(struct fetcher *f, char *name, size_t size);

#endif
