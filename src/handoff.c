/* handoff.c — debuginfod's files handed to every worker (handoff.h). */
#include "proftop/handoff.h"

#include "proftop/diag.h"
#include "proftop/fetch.h"
#include "proftop/util.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct handoff {
	struct fetcher *fetcher;   /* NULL once stopped */
	struct diag *diag;
	pthread_mutex_t lock;
	struct fetched **fetched;  /* sent so far, each worker's to take */
	size_t nfetched, fetched_cap;
	_Atomic size_t count;      /* nfetched, for a look without the lock */
};

struct handoff *handoff_new(int wake_fd, struct diag *diag)
{
	struct fetcher *f = fetcher_new(wake_fd);
	struct handoff *h;

	if (!f) {
		if (errno)
			diag_report(diag, DIAG_WARNING, "debuginfod: no debug files are fetched: %s",
				    strerror(errno));
		return NULL;
	}
	h = xcalloc(1, sizeof(*h));
	h->fetcher = f;
	h->diag = diag;
	pthread_mutex_init(&h->lock, NULL);
	atomic_init(&h->count, 0);
	return h;
}

void handoff_free(struct handoff *h)
{
	if (!h)
		return;
	fetcher_free(h->fetcher);
	for (size_t i = 0; i < h->nfetched; i++) {
		fetched_clear(h->fetched[i]);
		free(h->fetched[i]);
	}
	free(h->fetched);
	pthread_mutex_destroy(&h->lock);
	free(h);
}

void handoff_want(struct handoff *h, const unsigned char *build_id, size_t len,
		  const char *module, size_t *applied)
{
	bool sent = false;

	pthread_mutex_lock(&h->lock);
	for (size_t i = 0; i < h->nfetched && !sent; i++)
		sent = h->fetched[i]->build_id_len == len &&
		       !memcmp(h->fetched[i]->build_id, build_id, len);
	pthread_mutex_unlock(&h->lock);
	if (sent)
		*applied = 0;
	else if (h->fetcher)
		fetcher_want(h->fetcher, build_id, len, module);
}

bool handoff_take(struct handoff *h)
{
	struct fetched done;
	bool any = false;

	while (h->fetcher && fetcher_take(h->fetcher, &done)) {
		if (done.err == -ENOENT) {
			diag_report(h->diag, DIAG_INFO, "debuginfod has no debug file for %s", done.name);
		} else if (done.err) {
			diag_report(h->diag, DIAG_WARNING, "debuginfod: no debug file could be fetched "
				    "from %s: %s; stripped files' functions show as module+0x...",
				    fetcher_urls(h->fetcher), strerror(-done.err));
		} else {
			struct fetched *f = xmalloc(sizeof(*f));

			*f = done; /* (its strings go with it) */
			pthread_mutex_lock(&h->lock);
			xgrow((void **)&h->fetched, &h->fetched_cap, h->nfetched + 1, sizeof(*h->fetched));
			h->fetched[h->nfetched++] = f;
			atomic_store_explicit(&h->count, h->nfetched, memory_order_relaxed);
			pthread_mutex_unlock(&h->lock);
			any = true;
			continue;
		}
		fetched_clear(&done);
	}
	return any;
}

bool handoff_waiting(const struct handoff *h, size_t applied)
{
	return atomic_load_explicit(&h->count, memory_order_relaxed) > applied;
}

const struct fetched *handoff_next(struct handoff *h, size_t *applied)
{
	const struct fetched *f = NULL;

	pthread_mutex_lock(&h->lock);
	if (*applied < h->nfetched)
		f = h->fetched[(*applied)++];
	pthread_mutex_unlock(&h->lock);
	return f;
}

void handoff_status(struct handoff *h, char *buf, size_t size)
{
	char name[48];
	size_t waiting;

	buf[0] = '\0';
	if (!h->fetcher)
		return;
	waiting = fetcher_status(h->fetcher, name, sizeof(name));
	if (waiting)
		snprintf(buf, size, "%s (+%zu)", name, waiting);
	else
		snprintf(buf, size, "%s", name);
}

void handoff_stop(struct handoff *h)
{
	char name[64];
	size_t waiting;

	if (!h->fetcher)
		return;
	waiting = fetcher_status(h->fetcher, name, sizeof(name));
	if (name[0])
		diag_report(h->diag, DIAG_WARNING, "debuginfod was still fetching the debug file of %s "
			    "when profiling ended%s: not used", name,
			    waiting ? " (more were waiting)" : "");
	fetcher_free(h->fetcher);
	h->fetcher = NULL;
}
