/* fetch.c — the debuginfod fetcher (see fetch.h).
 *
 * Threads: fetch_main() is the fetcher's thread. It owns `client`; `queue`, `done`, `current` and
 * `stop` are under `lock` (stop is also read without it, as an atomic, by the progress callback
 * libdebuginfod calls during a transfer), and so is `asked` (the collector's workers each ask).
 * The rest is the owner's. */
#include "proftop/fetch.h"

#include <elfutils/debuginfod.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "proftop/idmap.h"
#include "proftop/util.h"

struct fetcher {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct fetched *queue;	/* waiting, oldest first (path NULL, err 0) */
	size_t nqueue, queue_cap;
	struct fetched *done;	/* ended, oldest first */
	size_t ndone, done_cap;
	char current[64];	/* the name being fetched; "" */
	atomic_bool stop;
	debuginfod_client *client;
	int wake_fd;		/* a copy of the owner's: still valid if the thread is left behind */
	char *urls;
	struct idmap asked;	/* hash of a build-id -> 1 */
};

/* libdebuginfod calls this while a transfer runs; non-zero ends it. */
static int fetch_progress(debuginfod_client *client, long done, long total)
{
	struct fetcher *f = debuginfod_get_user_data(client);

	(void)done;
	(void)total;
	return atomic_load_explicit(&f->stop, memory_order_relaxed);
}

static void fetch_push(struct fetched **list, size_t *n, size_t *cap, const struct fetched *item)
{
	xgrow((void **)list, cap, *n + 1, sizeof(**list));
	(*list)[(*n)++] = *item;
}

static void fetch_shift(struct fetched *list, size_t *n, struct fetched *out)
{
	*out = list[0];
	memmove(list, list + 1, --*n * sizeof(*list));
}

/* libdebuginfod's cache directory, as it finds it: DEBUGINFOD_CACHE_PATH, else an old
 * ~/.debuginfod_client_cache that exists, else $XDG_CACHE_HOME or ~/.cache, /debuginfod_client.
 * Returns 0, or -ENAMETOOLONG. */
static int fetch_cache_dir(char *buf, size_t size)
{
	const char *env = getenv(DEBUGINFOD_CACHE_PATH_ENV_VAR), *home = getenv("HOME");
	const char *xdg = getenv("XDG_CACHE_HOME");
	struct stat st;
	int n;

	if (!home || !*home)
		home = "/";
	if (env && *env)
		n = snprintf(buf, size, "%s", env);
	else if ((n = snprintf(buf, size, "%s/.debuginfod_client_cache", home)) > 0 &&
		 (size_t)n < size && !stat(buf, &st) && S_ISDIR(st.st_mode))
		return 0;
	else if (xdg && *xdg)
		n = snprintf(buf, size, "%s/debuginfod_client", xdg);
	else
		n = snprintf(buf, size, "%s/.cache/debuginfod_client", home);
	return n > 0 && (size_t)n < size ? 0 : -ENAMETOOLONG;
}

/* libdebuginfod 0.188 records a transfer we cancelled as "no server has it" (an empty file in
 * its cache, believed for ten minutes; later versions fixed that): take that entry out again,
 * so the next run asks. */
static void fetch_forget_cancelled(const struct fetched *job)
{
	char dir[PATH_MAX], path[PATH_MAX + 2 * DEBUGFILE_BUILD_ID_MAX + 16];
	size_t at;
	struct stat st;

	if (fetch_cache_dir(dir, sizeof(dir)))
		return;
	at = (size_t)snprintf(path, sizeof(path), "%s/", dir);
	for (size_t i = 0; i < job->build_id_len; i++)
		at += (size_t)snprintf(path + at, sizeof(path) - at, "%02x", job->build_id[i]);
	snprintf(path + at, sizeof(path) - at, "/debuginfo");
	if (!lstat(path, &st) && S_ISREG(st.st_mode) && st.st_size == 0)
		unlink(path);
}

static void *fetch_main(void *arg)
{
	struct fetcher *f = arg;
	struct fetched job;
	int fd;

	pthread_mutex_lock(&f->lock);
	for (;;) {
		while (!f->nqueue && !atomic_load(&f->stop))
			pthread_cond_wait(&f->cond, &f->lock);
		if (atomic_load(&f->stop))
			break;
		fetch_shift(f->queue, &f->nqueue, &job);
		snprintf(f->current, sizeof(f->current), "%s", job.name);
		pthread_mutex_unlock(&f->lock);

		fd = debuginfod_find_debuginfo(f->client, job.build_id, (int)job.build_id_len,
					       &job.path);
		if (fd >= 0)
			close(fd);
		else
			job.err = fd;
		if (fd < 0 && atomic_load(&f->stop))
			fetch_forget_cancelled(&job);

		pthread_mutex_lock(&f->lock);
		f->current[0] = '\0';
		fetch_push(&f->done, &f->ndone, &f->done_cap, &job);
		util_wake(f->wake_fd);
	}
	pthread_mutex_unlock(&f->lock);
	return NULL;
}

/* Whether DEBUGINFOD_URLS names anything: servers are separated by spaces. */
static bool fetch_urls_set(const char *urls)
{
	return urls && urls[strspn(urls, " \t\n")];
}

/* Everything f holds, once no thread runs (or none was started). */
static void fetch_release(struct fetcher *f)
{
	for (size_t i = 0; i < f->nqueue; i++)
		fetched_clear(&f->queue[i]);
	for (size_t i = 0; i < f->ndone; i++)
		fetched_clear(&f->done[i]);
	free(f->queue);
	free(f->done);
	debuginfod_end(f->client);
	pthread_mutex_destroy(&f->lock);
	pthread_cond_destroy(&f->cond);
	idmap_free(&f->asked);
	if (f->wake_fd >= 0)
		close(f->wake_fd);
	free(f->urls);
	free(f);
}

struct fetcher *fetcher_new(int wake_fd)
{
	const char *urls = getenv(DEBUGINFOD_URLS_ENV_VAR);
	struct fetcher *f;
	int err;

	errno = 0;
	if (!fetch_urls_set(urls))
		return NULL;
	f = xcalloc(1, sizeof(*f));
	f->client = debuginfod_begin();
	if (!f->client) {
		free(f);
		errno = ENOMEM;
		return NULL;
	}
	/* DEBUGINFOD_PROGRESS and DEBUGINFOD_VERBOSE would have the library write to stderr, under
	 * the screen: progress is ours to show, and the library says nothing. */
	debuginfod_set_user_data(f->client, f);
	debuginfod_set_progressfn(f->client, fetch_progress);
	debuginfod_set_verbose_fd(f->client, -1);
	f->wake_fd = fcntl(wake_fd, F_DUPFD_CLOEXEC, 0);
	f->urls = xstrdup(urls);
	idmap_init(&f->asked);
	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->cond, NULL);
	err = f->wake_fd < 0 ? errno : pthread_create(&f->thread, NULL, fetch_main, f);
	if (err) {
		fetch_release(f);
		errno = err;
		return NULL;
	}
	return f;
}

void fetched_clear(struct fetched *done)
{
	free(done->name);
	free(done->path);
	done->name = done->path = NULL;
}

void fetcher_free(struct fetcher *f)
{
	struct timespec until;

	if (!f)
		return;
	pthread_mutex_lock(&f->lock);
	atomic_store(&f->stop, true);
	pthread_cond_broadcast(&f->cond);
	pthread_mutex_unlock(&f->lock);
	/* pthread_timedjoin_np's clock is CLOCK_REALTIME. */
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += (time_t)(FETCH_STOP_WAIT_NS / 1000000000u);
	until.tv_nsec += (long)(FETCH_STOP_WAIT_NS % 1000000000u);
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	if (pthread_timedjoin_np(f->thread, NULL, &until)) {
		/* A library call that does not return (a resolver stuck in getaddrinfo, which no
		 * progress callback interrupts): leave the thread and what it uses to the process's
		 * exit rather than make the user wait. */
		pthread_detach(f->thread);
		return;
	}
	fetch_release(f);
}

const char *fetcher_urls(const struct fetcher *f)
{
	return f->urls;
}

void fetcher_want(struct fetcher *f, const unsigned char *build_id, size_t len, const char *name)
{
	uint64_t h = util_hash_bytes(build_id, len, 0);
	struct fetched job = { .build_id_len = len };

	if (!len || len > sizeof(job.build_id))
		return;
	/* (the collector's workers each ask for the modules they load: once is enough) */
	pthread_mutex_lock(&f->lock);
	if (idmap_get(&f->asked, h) != IDMAP_MISSING) {
		pthread_mutex_unlock(&f->lock);
		return;
	}
	idmap_put(&f->asked, h, 1);
	memcpy(job.build_id, build_id, len);
	job.name = xstrdup(name);
	fetch_push(&f->queue, &f->nqueue, &f->queue_cap, &job);
	pthread_cond_signal(&f->cond);
	pthread_mutex_unlock(&f->lock);
}

bool fetcher_take(struct fetcher *f, struct fetched *out)
{
	bool any;

	pthread_mutex_lock(&f->lock);
	any = f->ndone > 0;
	if (any)
		fetch_shift(f->done, &f->ndone, out);
	pthread_mutex_unlock(&f->lock);
	return any;
}

size_t fetcher_status(struct fetcher *f, char *name, size_t size)
{
	size_t waiting;

	pthread_mutex_lock(&f->lock);
	snprintf(name, size, "%s", f->current);
	waiting = f->current[0] ? f->nqueue : 0;
	pthread_mutex_unlock(&f->lock);
	return waiting;
}
