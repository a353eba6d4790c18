/* source_coverage.c — coverage mode (coverage.h): each source line's executions, read from the
 * probes at each publication into the coverage profile: a function's one-frame stack with the
 * line's site (its first address), counted by how much more it ran since the last reading. Every
 * line of a watched module is a site from the start, at 0 when it never ran: the Lines view,
 * --annotate and the lcov tracefile show those too. Its timeline counts the lines first reached
 * in each second.
 *
 * The records it looks at: a child of a watched process (FORK), probed in turn; a module named by
 * --module without a path mapped (MMAP); an exec (COMM), after which its owner is looked up
 * again. */
#include "proftop/source.h"

#include "proftop/coverage.h"
#include "proftop/covmap.h"
#include "proftop/diag.h"
#include "proftop/profile.h"
#include "proftop/profiles.h"
#include "proftop/snapshot.h"
#include "proftop/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* What the profile holds of one (process, module) slot. */
struct slot_seen {
	bool registered;
	uint32_t *funcs;           /* per covmap function: its id */
	uint32_t *sites;           /* per covmap line: its site */
	uint64_t *counted;         /* per line: executions in the profile so far */
};

struct coverage_state {
	struct source_env *env;
	struct coverage *cov;
	char *failed;              /* why there are no probes */
	struct slot_seen *slots;
	size_t nslots;
	uint64_t lines_reached;
	bool *site_reached;        /* per site of the profile: some process ran its line */
	size_t nsite_reached;
	uint64_t *new_lines;       /* per second of the run: lines first reached */
	size_t nseconds, seconds_cap;
	uint64_t now_ns;
	pid_t *exec_pids;          /* watched processes that exec'd this round: owners to look up */
	size_t nexec_pids, exec_pids_cap;
};

static bool coverage_in_run(const struct sample_config *config)
{
	return config->mode == SAMPLE_MODE_COVERAGE;
}

static void *coverage_worker_new(struct source_env *env)
{
	struct coverage_state *s = xcalloc(1, sizeof(*s));

	s->env = env;
	s->cov = coverage_new(env->config->coverage_cap, &s->failed);
	return s;
}

static void coverage_worker_free(void *state)
{
	struct coverage_state *s = state;

	if (!s)
		return;
	coverage_free(s->cov);
	free(s->failed);
	for (size_t i = 0; i < s->nslots; i++) {
		free(s->slots[i].funcs);
		free(s->slots[i].sites);
		free(s->slots[i].counted);
	}
	free(s->slots);
	free(s->new_lines);
	free(s->site_reached);
	free(s->exec_pids);
	free(s);
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

bool coverage_module_named(const char *name, const char *path)
{
	const char *base = base_name(path);
	size_t len = strlen(name);

	if (strchr(name, '/'))
		return !strcmp(name, path);
	return !strncmp(base, name, len) && (!base[len] || base[len] == '.' || base[len] == '-');
}

static void warn(struct coverage_state *s, char *message)
{
	if (message)
		diag_report(s->env->diag, DIAG_WARNING, "coverage: %s", message);
	free(message);
}

/* The modules --module names without a path that process pid has mapped already (attached to
 * a running process: their mappings come from /proc, not as records). */
static void watch_mapped(struct coverage_state *s, pid_t pid)
{
	const struct sample_config *config = s->env->config;
	char maps[64], line[4096 + 256];
	FILE *f;

	if (!config->nmodules)
		return;
	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	f = fopen(maps, "re");
	while (f && fgets(line, sizeof(line), f)) {
		char perms[8], *path = strchr(line, '/');
		unsigned long long ino;
		char *message = NULL;

		if (!path || sscanf(line, "%*x-%*x %7s %*x %*x:%*x %llu", perms, &ino) != 2 ||
		    perms[2] != 'x')
			continue;
		path[strcspn(path, "\n")] = '\0';
		for (size_t i = 0; i < config->nmodules; i++) {
			if (strchr(config->modules[i], '/') ||
			    !coverage_module_named(config->modules[i], path))
				continue;
			coverage_watch(s->cov, pid, path, (ino_t)ino, &message);
			warn(s, message);
			message = NULL;
		}
	}
	if (f)
		fclose(f);
}

static int coverage_watch_process(void *const *states, pid_t pid, const char *exe,
				  char **message)
{
	struct coverage_state *s = states[0];
	const struct sample_config *config = s->env->config;
	int err;

	*message = NULL;
	if (!s->cov) {
		*message = xasprintf("coverage: %s", s->failed ? s->failed : "cannot place probes");
		return -ENOTSUP;
	}
	/* Who runs it, as /proc says now: the source files its lines show are read as that user
	 * (annotate_readers()); a command not yet exec'd is still proftop's user's. */
	profiles_lock(s->env->profiles);
	profiles_seen(s->env->profiles, pid, pid, false);
	profiles_unlock(s->env->profiles);
	err = coverage_watch(s->cov, pid, exe, 0, message);
	if ((err == -ENODATA || err == -ENOEXEC) && config->nmodules) {
		/* (a command without lines, a shell or an interpreter, running what --module names) */
		warn(s, xasprintf("%s: only the modules --module names are counted", *message));
		free(*message);
		*message = NULL;
		err = 0;
	}
	for (size_t i = 0; !err && i < config->nmodules; i++) {
		if (!strchr(config->modules[i], '/'))
			continue; /* (named: probed when mapped) */
		warn(s, *message); /* (the last one's warning) */
		err = coverage_watch(s->cov, pid, config->modules[i], 0, message);
	}
	if (!err)
		watch_mapped(s, pid);
	return err;
}

/* A record of a watched process: its children, its named modules, its exec. Never the
 * record's only reader (false): the resolver reads the same. */
static bool coverage_record(void *state, const void *data, size_t len)
{
	struct coverage_state *s = state;
	const struct sample_config *config = s->env->config;
	struct sample_record r;
	char *message = NULL;

	if (!s->cov || sample_parse(data, len, s->env->sample_type, s->env->regs_mask, &r) < 0)
		return false;
	if (r.kind == SAMPLE_KIND_COMM && r.comm.exec && coverage_watched(s->cov, (pid_t)r.pid)) {
		xgrow((void **)&s->exec_pids, &s->exec_pids_cap, s->nexec_pids + 1,
		      sizeof(*s->exec_pids));
		s->exec_pids[s->nexec_pids++] = (pid_t)r.pid;
	} else if (r.kind == SAMPLE_KIND_FORK && r.pid != r.task.ppid &&
		   coverage_watched(s->cov, (pid_t)r.task.ppid)) {
		coverage_child(s->cov, (pid_t)r.task.ppid, (pid_t)r.pid, &message);
		warn(s, message);
	} else if (r.kind == SAMPLE_KIND_MMAP && (r.mmap.prot & 4 /* PROT_EXEC */) &&
		   r.mmap.path[0] == '/' && coverage_watched(s->cov, (pid_t)r.pid)) {
		for (size_t i = 0; i < config->nmodules; i++) {
			if (strchr(config->modules[i], '/') ||
			    !coverage_module_named(config->modules[i], r.mmap.path))
				continue;
			coverage_watch(s->cov, (pid_t)r.pid, r.mmap.path, r.mmap.ino, &message);
			warn(s, message);
		}
	}
	return false;
}

/* Whether process pid is ending, its leader's EXIT just read: no /proc entry, or no thread but
 * that one (the record is written as the thread exits, before it is a zombie). A leader that
 * exits while other threads run leaves the process on, and its probes in place. */
static bool process_ended(pid_t pid)
{
	char path[64], text[256];
	FILE *f;
	int threads = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return true;
	while (fgets(text, sizeof(text), f))
		if (sscanf(text, "Threads: %d", &threads) == 1)
			break;
	fclose(f);
	return threads <= 1;
}

/* A thread ended: when it was a watched process's last, the process's probes go (their
 * counts kept). */
static void coverage_thread_exited(void *state, pid_t tid)
{
	struct coverage_state *s = state;

	if (s->cov && coverage_watched(s->cov, tid) && process_ended(tid))
		coverage_ended(s->cov, tid);
}

/* The end of a round: the owners of the processes that exec'd, which the collector forgot at
 * their exec (their new program's, as /proc says now). */
static void coverage_flush(void *state)
{
	struct coverage_state *s = state;

	if (!s->nexec_pids)
		return;
	profiles_lock(s->env->profiles);
	for (size_t i = 0; i < s->nexec_pids; i++)
		profiles_seen(s->env->profiles, s->exec_pids[i], s->exec_pids[i], false);
	profiles_unlock(s->env->profiles);
	s->nexec_pids = 0;
}

/* The slot's functions and lines made the profile's (at 0). */
static void register_slot(struct coverage_state *s, struct slot_seen *seen,
			  const struct coverage_lines *l)
{
	struct profile *p = profiles_get(s->env->profiles, SAMPLE_MODE_COVERAGE);
	const struct covmap *map = l->map;
	const char *module = base_name(map->path);

	seen->funcs = xcalloc(map->nfuncs ? map->nfuncs : 1, sizeof(*seen->funcs));
	seen->sites = xcalloc(map->nlines ? map->nlines : 1, sizeof(*seen->sites));
	seen->counted = xcalloc(map->nlines ? map->nlines : 1, sizeof(*seen->counted));
	for (size_t f = 0; f < map->nfuncs; f++) {
		if (!map->funcs[f].nlines)
			continue;
		seen->funcs[f] = profiles_func(s->env->profiles, module, map->funcs[f].name,
					       map->funcs[f].entry, false);
		profiles_func_code(s->env->profiles, seen->funcs[f], map->path, map->funcs[f].entry,
				   map->funcs[f].end);
	}
	for (size_t i = 0; i < map->nlines; i++) {
		const struct covmap_line *line = &map->lines[i];

		seen->sites[i] = l->unprobed[i] ? PROFILE_NO_SITE
				 : profile_line_site(p, seen->funcs[line->func], line->addr,
						     line->file, line->line);
	}
	/* (the process's thread, so that its functions show at 0 in the views) */
	profile_add_sites_n(p, l->pid, l->pid, NULL, NULL, 0, 0);
	seen->registered = true;
}

/* Site's line ran for the first time in one of the processes: new to the run when in none
 * before. */
static void count_new_line(struct coverage_state *s, uint32_t site)
{
	uint64_t start = s->env->start_ns;
	uint64_t second = s->now_ns > start ? (s->now_ns - start) / 1000000000u : 0;

	if (site >= s->nsite_reached) {
		size_t n = site + 1 > 2 * s->nsite_reached ? site + 1 : 2 * s->nsite_reached;

		s->site_reached = xrealloc(s->site_reached, n * sizeof(*s->site_reached));
		memset(s->site_reached + s->nsite_reached, 0,
		       (n - s->nsite_reached) * sizeof(*s->site_reached));
		s->nsite_reached = n;
	}
	if (s->site_reached[site])
		return;
	s->site_reached[site] = true;
	s->lines_reached++;
	if (second >= (uint64_t)1 << 32)
		return;
	if (second >= s->nseconds) {
		xgrow((void **)&s->new_lines, &s->seconds_cap, second + 1, sizeof(*s->new_lines));
		memset(s->new_lines + s->nseconds, 0, (second + 1 - s->nseconds) * sizeof(uint64_t));
		s->nseconds = second + 1;
	}
	s->new_lines[second]++;
}

static void read_slot(void *arg, const struct coverage_lines *l)
{
	struct coverage_state *s = arg;
	struct profile *p = profiles_get(s->env->profiles, SAMPLE_MODE_COVERAGE);
	struct slot_seen *seen;

	if (l->slot >= s->nslots) {
		s->slots = xrealloc(s->slots, (l->slot + 1) * sizeof(*s->slots));
		memset(s->slots + s->nslots, 0, (l->slot + 1 - s->nslots) * sizeof(*s->slots));
		s->nslots = l->slot + 1;
	}
	seen = &s->slots[l->slot];
	if (!seen->registered)
		register_slot(s, seen, l);
	for (size_t i = 0; i < l->map->nlines; i++) {
		uint32_t func;

		if (l->counts[i] <= seen->counted[i] || seen->sites[i] == PROFILE_NO_SITE)
			continue;
		if (!seen->counted[i])
			count_new_line(s, seen->sites[i]);
		func = seen->funcs[l->map->lines[i].func];
		profile_add_sites_n(p, l->pid, l->pid, &func, &seen->sites[i], 1,
				    l->counts[i] - seen->counted[i]);
		seen->counted[i] = l->counts[i];
	}
}

static void coverage_publishing(void *const *states, unsigned nworkers, uint64_t now_ns,
				bool ended)
{
	struct coverage_state *s = states[0];

	(void)nworkers;
	(void)ended;
	if (!s->cov)
		return;
	s->now_ns = now_ns;
	profiles_set_time(s->env->profiles, now_ns);
	coverage_read(s->cov, read_slot, s);
}

/* Its timeline: the lines first reached in each span's seconds. */
static struct snapshot *coverage_snapshot(void *const *states, unsigned nworkers,
					  enum sample_mode shown, uint32_t traced, uint64_t now_ns,
					  void (*stamp)(void *arg, struct snapshot *s), void *arg)
{
	struct coverage_state *st = states[0];
	struct profile *p = profiles_get(st->env->profiles, shown);
	struct snapshot *s;
	struct snapshot_span *spans;

	(void)nworkers;
	(void)now_ns;
	profile_trace(p, 0);
	(void)traced;
	s = profile_snapshot(p);
	s->mode = shown;
	stamp(arg, s);
	spans = s->nspans ? xmalloc(s->nspans * sizeof(*spans)) : NULL;
	for (size_t i = 0; i < s->nspans; i++) {
		spans[i] = s->spans[i];
		spans[i].samples = spans[i].traced = 0;
		for (uint64_t k = spans[i].start_s; k < spans[i].end_s && k < st->nseconds; k++)
			spans[i].samples += st->new_lines[k];
	}
	free((void *)s->spans);
	s->spans = spans;
	s->traced_func = 0;
	return s;
}

/* Its counters: lines reached, probes placed and still open. */
static void coverage_stamp(void *const *states, unsigned nworkers, struct snapshot *s)
{
	struct coverage_state *st = states[0];
	size_t placed = 0, open = 0;

	(void)nworkers;
	if (st->cov)
		coverage_probes(st->cov, &placed, &open);
	s->counters.samples = st->lines_reached;
	s->counters.probes = placed;
	s->counters.probes_open = open;
	s->coverage_cap = st->env->config->coverage_cap;
	s->freq = 1;
}

#define COVERAGE_KINDS PROFILES_MODE(SAMPLE_MODE_COVERAGE)

const struct source source_coverage = {
	.name = "coverage",
	.feeds = COVERAGE_KINDS,
	.owns = COVERAGE_KINDS,
	.one_worker = true,
	.in_run = coverage_in_run,
	.worker_new = coverage_worker_new,
	.worker_free = coverage_worker_free,
	.record = coverage_record,
	.thread_exited = coverage_thread_exited,
	.flush = coverage_flush,
	.publishing = coverage_publishing,
	.snapshot = coverage_snapshot,
	.stamp = coverage_stamp,
	.watch = coverage_watch_process,
};
