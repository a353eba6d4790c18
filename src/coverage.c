/* coverage.c — coverage mode's probes and their counts (coverage.h). */
#include "proftop/coverage.h"

#include "proftop/covmap.h"
#include "proftop/uprobes.h"
#include "proftop/util.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* The signal a capped probe sends the reaping thread (F_SETSIG; it is directed at that thread,
 * which blocks it, so no other thread sees it). */
#define COVERAGE_SIGNAL (SIGRTMIN + 3)

/* One thread's probes of one module: the probes [first, first + n) of the set, for its first n
 * addresses (all of them, unless the kernel refused one). */
struct watch {
	pid_t pid, tid;
	uint32_t module, slot;
	size_t first, n;
};

/* A (process, module) pair and its scratch counts. */
struct slot {
	pid_t pid;
	uint32_t module;
	uint64_t *addr_counts, *line_counts;
	bool *addr_capped, *line_capped;
};

struct coverage {
	pthread_mutex_t lock;
	struct uprobes *probes;
	uint64_t cap;
	struct covmap **modules;
	size_t nmodules, modules_cap;
	struct watch *watches;
	size_t nwatches, watches_cap;
	struct slot *slots;
	size_t nslots, slots_cap;
	pthread_t reaper;
	bool reaping;
	_Atomic bool stop;
	pid_t reaper_tid;
	pthread_mutex_t started_lock;
	pthread_cond_t started;
};

static void *reap_probes(void *arg)
{
	struct coverage *c = arg;
	sigset_t set;
	siginfo_t info;
	struct timespec wait = { 0, 200000000 };

	sigemptyset(&set);
	sigaddset(&set, COVERAGE_SIGNAL);
	sigaddset(&set, SIGIO);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	pthread_mutex_lock(&c->started_lock);
	c->reaper_tid = gettid();
	pthread_cond_signal(&c->started);
	pthread_mutex_unlock(&c->started_lock);
	while (!c->stop) {
		int got = sigtimedwait(&set, &info, &wait);

		if (got < 0 || c->stop || !c->probes)
			continue;
		pthread_mutex_lock(&c->lock);
		if (got == COVERAGE_SIGNAL && info.si_code == POLL_IN)
			uprobes_reap_fd(c->probes, info.si_fd);
		else /* SIGIO: the queue was full, a signal lost */
			uprobes_reap(c->probes);
		pthread_mutex_unlock(&c->lock);
	}
	return NULL;
}

struct coverage *coverage_new(uint64_t cap, char **why)
{
	struct coverage *c;
	struct rlimit files;

	*why = NULL;
	c = xcalloc(1, sizeof(*c));
	c->cap = cap;
	pthread_mutex_init(&c->lock, NULL);
	pthread_mutex_init(&c->started_lock, NULL);
	pthread_cond_init(&c->started, NULL);
	/* A probe is a file descriptor: as many as proftop may have. */
	if (!getrlimit(RLIMIT_NOFILE, &files) && files.rlim_cur < files.rlim_max) {
		files.rlim_cur = files.rlim_max;
		setrlimit(RLIMIT_NOFILE, &files);
	}
	if (cap) {
		if (pthread_create(&c->reaper, NULL, reap_probes, c)) {
			*why = xstrdup("cannot start its thread");
			coverage_free(c);
			return NULL;
		}
		c->reaping = true;
		pthread_mutex_lock(&c->started_lock);
		while (!c->reaper_tid)
			pthread_cond_wait(&c->started, &c->started_lock);
		pthread_mutex_unlock(&c->started_lock);
	}
	c->probes = uprobes_new(cap, c->reaper_tid, COVERAGE_SIGNAL, why);
	if (!c->probes) {
		coverage_free(c);
		return NULL;
	}
	return c;
}

void coverage_free(struct coverage *c)
{
	if (!c)
		return;
	if (c->reaping) {
		c->stop = true;
		pthread_kill(c->reaper, COVERAGE_SIGNAL);
		pthread_join(c->reaper, NULL);
	}
	uprobes_free(c->probes);
	for (size_t i = 0; i < c->nmodules; i++)
		covmap_free(c->modules[i]);
	for (size_t i = 0; i < c->nslots; i++) {
		free(c->slots[i].addr_counts);
		free(c->slots[i].line_counts);
		free(c->slots[i].addr_capped);
		free(c->slots[i].line_capped);
	}
	free(c->modules);
	free(c->watches);
	free(c->slots);
	pthread_mutex_destroy(&c->lock);
	pthread_mutex_destroy(&c->started_lock);
	pthread_cond_destroy(&c->started);
	free(c);
}

/* The module read from path (once), its index; or -errno with *message. */
static int module_of(struct coverage *c, const char *path, pid_t pid, char **message)
{
	struct covmap *map;
	const char *why;
	int err;

	for (size_t i = 0; i < c->nmodules; i++)
		if (!strcmp(c->modules[i]->path, path))
			return (int)i;
	err = covmap_read(path, pid, &map, &why);
	if (err) {
		*message = xasprintf("%s: %s", path, why);
		return err;
	}
	xgrow((void **)&c->modules, &c->modules_cap, c->nmodules + 1, sizeof(*c->modules));
	c->modules[c->nmodules] = map;
	return (int)c->nmodules++;
}

static uint32_t slot_of(struct coverage *c, pid_t pid, uint32_t module)
{
	const struct covmap *map = c->modules[module];
	struct slot *s;

	for (size_t i = 0; i < c->nslots; i++)
		if (c->slots[i].pid == pid && c->slots[i].module == module)
			return (uint32_t)i;
	xgrow((void **)&c->slots, &c->slots_cap, c->nslots + 1, sizeof(*c->slots));
	s = &c->slots[c->nslots];
	*s = (struct slot){ pid, module, xcalloc(map->naddrs, sizeof(uint64_t)),
			    xcalloc(map->nlines ? map->nlines : 1, sizeof(uint64_t)),
			    xcalloc(map->naddrs, sizeof(bool)),
			    xcalloc(map->nlines ? map->nlines : 1, sizeof(bool)) };
	return (uint32_t)c->nslots++;
}

static const char *refused(int err)
{
	switch (-err) {
	case EACCES:
	case EPERM:
		return "not allowed: coverage needs root, or CAP_PERFMON (CAP_SYS_ADMIN before "
		       "Linux 5.8), and read access to the file";
	case EMFILE:
	case ENFILE:
		return "out of file descriptors (a probe is one: raise `ulimit -Hn`, or use "
		       "--coverage-cap)";
	default:
		return strerror(-err);
	}
}

/* Probe module's every address in thread tid (c locked). */
static int probe_module(struct coverage *c, pid_t pid, pid_t tid, uint32_t module, char **message)
{
	const struct covmap *map = c->modules[module];
	struct watch w = { pid, tid, module, 0, uprobes_size(c->probes), 0 };
	int err = 0;

	for (size_t i = 0; i < c->nwatches; i++)
		if (c->watches[i].tid == tid && c->watches[i].module == module)
			return 0;
	for (; w.n < map->naddrs; w.n++) {
		int got = c->probes ? uprobes_add(c->probes, tid, map->path, map->addrs[w.n].offset)
				    : -ENOMEM;

		if (got < 0) {
			err = got;
			break;
		}
	}
	if (err == -ESRCH && !w.n) /* (the thread ended first) */
		return 0;
	if (err)
		*message = xasprintf("cannot probe %s in thread %d: %s (%zu of its %zu addresses "
				     "probed)", map->path, (int)tid, refused(err), w.n, map->naddrs);
	if (w.n) {
		w.slot = slot_of(c, pid, module);
		xgrow((void **)&c->watches, &c->watches_cap, c->nwatches + 1, sizeof(*c->watches));
		c->watches[c->nwatches++] = w;
	}
	return err;
}

/* Probe module in each thread of pid watched so far (c locked). */
static int probe_threads(struct coverage *c, pid_t pid, uint32_t module, char **message)
{
	size_t n = c->nwatches;
	int err = 0;

	for (size_t i = 0; i < n && !err; i++) {
		bool earlier = false;

		if (c->watches[i].pid != pid)
			continue;
		for (size_t k = 0; k < i; k++)
			earlier |= c->watches[k].tid == c->watches[i].tid;
		if (!earlier)
			err = probe_module(c, pid, c->watches[i].tid, module, message);
	}
	return err;
}

int coverage_watch(struct coverage *c, pid_t pid, pid_t tid, const char *path, char **message)
{
	int module, err;

	*message = NULL;
	pthread_mutex_lock(&c->lock);
	module = module_of(c, path, pid, message);
	if (module < 0)
		err = module;
	else if (tid)
		err = probe_module(c, pid, tid, (uint32_t)module, message);
	else
		err = probe_threads(c, pid, (uint32_t)module, message);
	pthread_mutex_unlock(&c->lock);
	return err;
}

bool coverage_watched(struct coverage *c, pid_t pid)
{
	bool found = false;

	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < c->nwatches && !found; i++)
		found = c->watches[i].pid == pid;
	pthread_mutex_unlock(&c->lock);
	return found;
}

void coverage_read(struct coverage *c, void (*fn)(void *arg, const struct coverage_lines *lines),
		   void *arg)
{
	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < c->nslots; i++) {
		struct slot *s = &c->slots[i];
		const struct covmap *map = c->modules[s->module];

		memset(s->addr_counts, 0, map->naddrs * sizeof(*s->addr_counts));
		memset(s->addr_capped, 0, map->naddrs * sizeof(*s->addr_capped));
		for (size_t k = 0; k < c->nwatches; k++) {
			const struct watch *w = &c->watches[k];

			if (w->slot != i)
				continue;
			for (size_t a = 0; a < w->n; a++) {
				bool capped;

				s->addr_counts[a] += uprobes_count(c->probes, w->first + a, &capped);
				s->addr_capped[a] |= capped;
			}
		}
		memset(s->line_counts, 0, map->nlines * sizeof(*s->line_counts));
		memset(s->line_capped, 0, map->nlines * sizeof(*s->line_capped));
		for (size_t p = 0; p < map->npairs; p++) {
			const struct covmap_pair *pair = &map->pairs[p];

			if (s->addr_counts[pair->addr] > s->line_counts[pair->line])
				s->line_counts[pair->line] = s->addr_counts[pair->addr];
			s->line_capped[pair->line] |= s->addr_capped[pair->addr];
		}
		fn(arg, &(struct coverage_lines){ i, s->pid, map, s->line_counts, s->line_capped });
	}
	pthread_mutex_unlock(&c->lock);
}

void coverage_probes(struct coverage *c, size_t *placed, size_t *open)
{
	pthread_mutex_lock(&c->lock);
	*placed = c->probes ? uprobes_size(c->probes) : 0;
	*open = c->probes ? uprobes_open(c->probes) : 0;
	pthread_mutex_unlock(&c->lock);
}

uint64_t coverage_cap(const struct coverage *c)
{
	return c->cap;
}
