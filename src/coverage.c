/* coverage.c — coverage mode's probes and their counts (coverage.h). */
#include "proftop/coverage.h"

#include "proftop/covmap.h"
#include "proftop/uprobes.h"
#include "proftop/util.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* How often the capped instructions are taken out (a hot line runs on at most this long past
 * its cap: counted no more, but trapping). */
#define RECAP_NS 10000000ull
/* Links replaced in one round at most (the rest wait for the next). */
#define RECAP_MAX 64

/* A (process, module) pair: its probes, and scratch counts. */
struct slot {
	pid_t pid;
	uint32_t module;
	struct uprobes *probes;    /* NULL: none could be placed (the error was said) */
	size_t *of_addr;           /* per address of the module: its probe's index; SIZE_MAX none */
	uint64_t *addr_counts, *line_counts;
	bool *line_capped, *line_unprobed;
	bool ended;                /* its process ended: its counts final, its links closed */
};

struct coverage {
	pthread_mutex_t lock;
	uint64_t cap;
	struct covmap **modules;
	bool *warned;              /* per module: its refused addresses were said */
	size_t nmodules, modules_cap;
	struct slot *slots;
	size_t nslots, slots_cap;
	pid_t *followed;           /* the processes watched, whether a module of theirs is probed */
	size_t nfollowed, followed_cap;
	pthread_t recapper;
	bool recapping;
	pthread_mutex_t stop_lock;
	pthread_cond_t stop_cond;
	bool stop;
};

/* The capped instructions left out of new links; the old links closed with c unlocked (each
 * close waits for a grace period). */
static void recap_all(struct coverage *c)
{
	int old[RECAP_MAX];
	size_t nold = 0;

	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < c->nslots && nold < RECAP_MAX; i++)
		if (c->slots[i].probes && !c->slots[i].ended)
			nold += uprobes_recap(c->slots[i].probes, old + nold, RECAP_MAX - nold);
	pthread_mutex_unlock(&c->lock);
	uprobes_close_links(old, nold);
}

/* The capped instructions' breakpoints removed, every RECAP_NS. */
static void *recap_probes(void *arg)
{
	struct coverage *c = arg;

	pthread_mutex_lock(&c->stop_lock);
	while (!c->stop) {
		struct timespec until;

		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_nsec += (long)RECAP_NS;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&c->stop_cond, &c->stop_lock, &until);
		if (c->stop)
			break;
		pthread_mutex_unlock(&c->stop_lock);
		recap_all(c);
		pthread_mutex_lock(&c->stop_lock);
	}
	pthread_mutex_unlock(&c->stop_lock);
	return NULL;
}

struct coverage *coverage_new(uint64_t cap, char **why)
{
	struct coverage *c = xcalloc(1, sizeof(*c));
	pthread_condattr_t monotonic;

	*why = NULL;
	c->cap = cap;
	pthread_mutex_init(&c->lock, NULL);
	pthread_mutex_init(&c->stop_lock, NULL);
	pthread_condattr_init(&monotonic);
	pthread_condattr_setclock(&monotonic, CLOCK_MONOTONIC);
	pthread_cond_init(&c->stop_cond, &monotonic);
	pthread_condattr_destroy(&monotonic);
	if (cap) {
		if (pthread_create(&c->recapper, NULL, recap_probes, c)) {
			*why = xstrdup("cannot start its thread");
			coverage_free(c);
			return NULL;
		}
		c->recapping = true;
	}
	return c;
}

void coverage_free(struct coverage *c)
{
	if (!c)
		return;
	if (c->recapping) {
		pthread_mutex_lock(&c->stop_lock);
		c->stop = true;
		pthread_cond_signal(&c->stop_cond);
		pthread_mutex_unlock(&c->stop_lock);
		pthread_join(c->recapper, NULL);
	}
	for (size_t i = 0; i < c->nslots; i++) {
		struct slot *s = &c->slots[i];

		uprobes_detach(s->probes);
		free(s->of_addr);
		free(s->addr_counts);
		free(s->line_counts);
		free(s->line_capped);
		free(s->line_unprobed);
	}
	for (size_t i = 0; i < c->nmodules; i++)
		covmap_free(c->modules[i]);
	free(c->modules);
	free(c->warned);
	free(c->slots);
	free(c->followed);
	pthread_mutex_destroy(&c->lock);
	pthread_mutex_destroy(&c->stop_lock);
	pthread_cond_destroy(&c->stop_cond);
	free(c);
}

/* Process pid is watched from now on (c locked). */
static void follow(struct coverage *c, pid_t pid)
{
	for (size_t i = 0; i < c->nfollowed; i++)
		if (c->followed[i] == pid)
			return;
	xgrow((void **)&c->followed, &c->followed_cap, c->nfollowed + 1, sizeof(*c->followed));
	c->followed[c->nfollowed++] = pid;
}

/* The module of the file at path (read once per file: its device and inode), its index; or
 * -errno with *message. ino, when not 0: the file a mapping record named, which path must
 * still be. */
static int module_of(struct coverage *c, const char *path, pid_t pid, ino_t ino, char **message)
{
	struct covmap *map;
	struct stat st;
	const char *why;
	int err;

	if (stat(path, &st)) {
		*message = xasprintf("%s: %s", path, strerror(errno));
		return -errno;
	}
	if (ino && st.st_ino != ino) {
		*message = xasprintf("%s: another file than the one mapped (replaced since): not "
				     "counted", path);
		return -ESTALE;
	}
	for (size_t i = 0; i < c->nmodules; i++)
		if (c->modules[i]->dev == st.st_dev && c->modules[i]->ino == st.st_ino)
			return (int)i;
	err = covmap_read(path, pid, &map, &why);
	if (err) {
		*message = xasprintf("%s: %s", path, why);
		return err;
	}
	c->warned = xrealloc(c->warned, (c->nmodules + 1) * sizeof(*c->warned));
	c->warned[c->nmodules] = false;
	xgrow((void **)&c->modules, &c->modules_cap, c->nmodules + 1, sizeof(*c->modules));
	c->modules[c->nmodules] = map;
	return (int)c->nmodules++;
}

/* The slot of (pid, module) that is not ended, or NULL (c locked). */
static struct slot *slot_of(struct coverage *c, pid_t pid, uint32_t module)
{
	for (size_t i = 0; i < c->nslots; i++)
		if (c->slots[i].pid == pid && c->slots[i].module == module && !c->slots[i].ended)
			return &c->slots[i];
	return NULL;
}

/* Probe module's probeable addresses in process pid (c locked). */
static int probe_module(struct coverage *c, pid_t pid, uint32_t module, char **message)
{
	const struct covmap *map = c->modules[module];
	uint64_t *offsets;
	struct slot s = { .pid = pid, .module = module };
	size_t n = 0, refused = 0;
	char *why = NULL, path[64];
	int err = 0;

	if (slot_of(c, pid, module))
		return 0;
	offsets = xmalloc((map->naddrs ? map->naddrs : 1) * sizeof(*offsets));
	s.of_addr = xmalloc((map->naddrs ? map->naddrs : 1) * sizeof(*s.of_addr));
	s.addr_counts = xcalloc(map->naddrs ? map->naddrs : 1, sizeof(*s.addr_counts));
	s.line_counts = xcalloc(map->nlines ? map->nlines : 1, sizeof(*s.line_counts));
	s.line_capped = xcalloc(map->nlines ? map->nlines : 1, sizeof(*s.line_capped));
	s.line_unprobed = xcalloc(map->nlines ? map->nlines : 1, sizeof(*s.line_unprobed));
	for (size_t a = 0; a < map->naddrs; a++) {
		s.of_addr[a] = map->addrs[a].probeable ? n : SIZE_MAX;
		if (map->addrs[a].probeable)
			offsets[n++] = map->addrs[a].offset;
		else
			refused++;
	}
	s.probes = uprobes_attach(pid, covmap_probe_path(map, path, sizeof(path)), offsets, n,
				  c->cap, &err, &why);
	free(offsets);
	if (!s.probes && err != -ESRCH)
		*message = xasprintf("cannot probe %s in process %d: %s", map->path, (int)pid, why);
	else if (s.probes && refused && !c->warned[module]) {
		*message = xasprintf("%s: the kernel's uprobes do not probe %zu of its %zu line "
				     "addresses (instructions with a lock or segment prefix); a line "
				     "with no other address is left out", map->path, refused,
				     map->naddrs);
		c->warned[module] = true;
	}
	free(why);
	if (!s.probes && err == -ESRCH) /* (the process ended first) */
		err = 0;
	xgrow((void **)&c->slots, &c->slots_cap, c->nslots + 1, sizeof(*c->slots));
	c->slots[c->nslots++] = s;
	return s.probes ? 0 : err;
}

int coverage_watch(struct coverage *c, pid_t pid, const char *path, ino_t ino, char **message)
{
	int module, err;

	*message = NULL;
	pthread_mutex_lock(&c->lock);
	follow(c, pid);
	module = module_of(c, path, pid, ino, message);
	err = module < 0 ? module : probe_module(c, pid, (uint32_t)module, message);
	pthread_mutex_unlock(&c->lock);
	return err;
}

/* *message, and more (malloc'd) after it on a line of its own. */
static void add_message(char **message, char *more)
{
	char *both;

	if (!more)
		return;
	if (!*message) {
		*message = more;
		return;
	}
	both = xasprintf("%s\n%s", *message, more);
	free(*message);
	free(more);
	*message = both;
}

int coverage_child(struct coverage *c, pid_t ppid, pid_t pid, char **message)
{
	size_t n;
	int err = 0;

	*message = NULL;
	pthread_mutex_lock(&c->lock);
	follow(c, pid);
	n = c->nslots;
	for (size_t i = 0; i < n; i++)
		if (c->slots[i].pid == ppid && !c->slots[i].ended) {
			char *one = NULL;
			int got = probe_module(c, pid, c->slots[i].module, &one);

			add_message(message, one);
			err = err ? err : got;
		}
	pthread_mutex_unlock(&c->lock);
	return err;
}

void coverage_ended(struct coverage *c, pid_t pid)
{
	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < c->nfollowed; i++)
		if (c->followed[i] == pid)
			c->followed[i] = c->followed[--c->nfollowed];
	for (size_t i = 0; i < c->nslots; i++)
		if (c->slots[i].pid == pid && !c->slots[i].ended) {
			c->slots[i].ended = true;
			if (c->slots[i].probes)
				uprobes_retire(c->slots[i].probes);
		}
	pthread_mutex_unlock(&c->lock);
}

bool coverage_watched(struct coverage *c, pid_t pid)
{
	bool found = false;

	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < c->nfollowed && !found; i++)
		found = c->followed[i] == pid;
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

		if (!s->probes)
			continue;
		for (size_t a = 0; a < map->naddrs; a++)
			s->addr_counts[a] = s->of_addr[a] == SIZE_MAX
						    ? 0 : uprobes_count(s->probes, s->of_addr[a]);
		memset(s->line_counts, 0, map->nlines * sizeof(*s->line_counts));
		for (size_t l = 0; l < map->nlines; l++)
			s->line_unprobed[l] = true;
		for (size_t p = 0; p < map->npairs; p++) {
			const struct covmap_pair *pair = &map->pairs[p];

			s->line_unprobed[pair->line] &= s->of_addr[pair->addr] == SIZE_MAX;
			if (s->addr_counts[pair->addr] > s->line_counts[pair->line])
				s->line_counts[pair->line] = s->addr_counts[pair->addr];
		}
		for (size_t l = 0; l < map->nlines; l++)
			s->line_capped[l] = c->cap && s->line_counts[l] >= c->cap;
		fn(arg, &(struct coverage_lines){ i, s->pid, map, s->line_counts, s->line_capped,
						  s->line_unprobed });
	}
	pthread_mutex_unlock(&c->lock);
}

void coverage_probes(struct coverage *c, size_t *placed, size_t *open)
{
	*placed = *open = 0;
	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < c->nslots; i++) {
		const struct covmap *map = c->modules[c->slots[i].module];

		if (!c->slots[i].probes)
			continue;
		for (size_t a = 0; a < map->naddrs; a++)
			*placed += c->slots[i].of_addr[a] != SIZE_MAX;
		*open += uprobes_placed(c->slots[i].probes);
	}
	pthread_mutex_unlock(&c->lock);
}
