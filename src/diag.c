/* diag.c — the diagnostics channel: a mutex-guarded queue of fixed-size reports, an eventfd that
 * says the queue is not empty, and the hashes of every text already reported (so each is said
 * once).
 *
 * Threads: diag_report() may run on any thread; the queue, the seen set and the dropped count are
 * guarded by the lock. diag_deliver() copies the queue out under the lock and calls the ops
 * without it, so an op may report again. */
#include "proftop/diag.h"

#include "proftop/idmap.h"
#include "proftop/util.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Distinct texts remembered; beyond this a repeat may be said again (never more often than the
 * queue lets it through). */
#define DIAG_SEEN_MAX 4096

struct diag_entry {
	enum diag_level level;
	char text[DIAG_TEXT_MAX + 1];
};

struct diag {
	pthread_mutex_t lock;
	struct diag_entry queue[DIAG_QUEUE_MAX];
	size_t count;
	size_t dropped;        /* reports that found the queue full */
	struct idmap seen;     /* hash of a text → 1 */
	int fd;                /* eventfd: nonzero while the queue holds something */
};

const char *diag_prefix(enum diag_level level)
{
	return level == DIAG_WARNING ? "warning: " : "";
}

void diag_print(FILE *out, enum diag_level level, const char *text)
{
	fprintf(out, "proftop: %s", diag_prefix(level));
	util_print_safe(out, text);
	fputc('\n', out);
}

struct diag *diag_new(void)
{
	struct diag *d = xcalloc(1, sizeof(*d));

	d->fd = util_wake_new();
	if (d->fd < 0) {
		free(d);
		return NULL;
	}
	pthread_mutex_init(&d->lock, NULL);
	idmap_init(&d->seen);
	return d;
}

void diag_free(struct diag *d)
{
	if (!d)
		return;
	close(d->fd);
	idmap_free(&d->seen);
	pthread_mutex_destroy(&d->lock);
	free(d);
}

int diag_fd(const struct diag *d)
{
	return d->fd;
}

/* Under the lock: whether text was reported before (and remember it if not). */
static bool already_said(struct diag *d, const char *text)
{
	uint64_t h = util_hash_bytes(text, strlen(text), 0x64696167);

	if (idmap_get(&d->seen, h) != IDMAP_MISSING)
		return true;
	if (d->seen.count < DIAG_SEEN_MAX)
		idmap_put(&d->seen, h, 1);
	return false;
}

void diag_report(struct diag *d, enum diag_level level, const char *fmt, ...)
{
	struct diag_entry e = { .level = level };
	char text[DIAG_TEXT_MAX + 1];
	bool wake = false;
	va_list ap;

	if (!d)
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	/* Reports carry paths and names from the target: they are kept in visible form, so no byte
	 * of theirs acts on a terminal, whichever frontend shows them. */
	util_visible(e.text, sizeof(e.text), text);
	pthread_mutex_lock(&d->lock);
	if (!already_said(d, e.text)) {
		if (d->count < DIAG_QUEUE_MAX)
			d->queue[d->count++] = e;
		else
			d->dropped++;
		wake = true;
	}
	pthread_mutex_unlock(&d->lock);
	if (wake)
		util_wake(d->fd);
}

size_t diag_deliver(struct diag *d, const struct diag_ops *ops, void *arg)
{
	struct diag_entry *entries;
	size_t count, dropped;
	uint64_t value;

	if (!d)
		return 0;
	if (read(d->fd, &value, sizeof(value)) < 0) {
		/* nothing signalled; the queue is looked at anyway */
	}
	pthread_mutex_lock(&d->lock);
	count = d->count;
	dropped = d->dropped;
	entries = count ? xmalloc(count * sizeof(*entries)) : NULL;
	if (count)
		memcpy(entries, d->queue, count * sizeof(*entries));
	d->count = 0;
	d->dropped = 0;
	pthread_mutex_unlock(&d->lock);
	for (size_t i = 0; ops && ops->report && i < count; i++)
		ops->report(arg, entries[i].level, entries[i].text);
	if (dropped && ops && ops->report) {
		char text[64];

		snprintf(text, sizeof(text), "%zu more warnings not shown", dropped);
		ops->report(arg, DIAG_WARNING, text);
	}
	free(entries);
	return count + (dropped ? 1 : 0);
}
