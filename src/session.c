/* session.c — a profiling session: wires target → sampler → ring → collector, and runs it: the
 * loop that waits on signals, the engine's reports, the duration and the frontend's own input,
 * and decides when profiling ends, what is saved and with which exit status.
 *
 * Threads: everything here runs on the thread that called session_open() (the main thread). The
 * sampler and collector threads it starts own their halves of the engine; the session reads them
 * only through snapshots, atomic counters and the diagnostics channel.
 *
 * The loop waits on one epoll set (the signalfd, the diagnostics eventfd and util's fatal-error
 * eventfd) plus the frontend's descriptors. */
#include "proftop/session.h"

#include "proftop/allocrun.h"
#include "proftop/collector.h"
#include "proftop/outstream.h"
#include "proftop/ring.h"
#include "proftop/sampler.h"
#include "proftop/source.h"
#include "proftop/stretches.h"
#include "proftop/target.h"
#include "proftop/tmon_read.h"
#include "proftop/util.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#define TERMINATE_GRACE_MS 2000
/* Attached processes ending send no signal: look at them this often. */
#define ATTACH_CHECK_MS 250
/* A named process that used under 1/IDLE_SHARE of a CPU over its first IDLE_CHECK_NS (or the
 * whole run, if shorter) is idle: if processes it started before the attach run, they are said
 * to be unfollowed. */
#define IDLE_CHECK_NS 2000000000ull
#define IDLE_SHARE 100
/* --children: rounds of attaching to the processes started before their parent's events were
 * open; each round's are those started while the round before opened its events. */
#define CHILDREN_ROUNDS_MAX 16

struct session {
	struct target *target;     /* NULL for a saved profile */
	struct ring *ring;
	struct sampler *sampler;
	struct collector *collector;
	struct server *server;     /* --serve; NULL: none */
	struct otlp_push *push;    /* --otlp-endpoint; NULL: none */
	bool server_exposed;       /* it listens where other machines reach */
	struct allocrun alloc;     /* an allocation run's ring and environment (ring NULL: none) */
	struct snapshot *saved; /* a saved profile's one snapshot */
	char *saved_name;
	struct snapshot *baseline; /* what the profile is compared with (NULL: nothing) */
	char *baseline_label;
	struct diag *diag;
	struct run_options run;
	int signal_fd;
	int epoll_fd;
	bool interrupted;          /* SIGINT, SIGQUIT: the command got it from the terminal too */
	enum session_end end;
	uint64_t started_ns;       /* when profiling began */
	bool children;             /* --children: the attached ones' children were attached too */
	bool idle_checked;         /* attach mode: idle named processes were looked for */
	char state[96];
	const struct session_frontend *frontend; /* while session_run() runs */
};

/* --- opening --------------------------------------------------------------------------------- */

static int open_signals(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGQUIT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

/* One epoll set for everything the loop waits on besides the frontend. */
static int open_wait_set(struct session *s)
{
	int fds[3] = { s->signal_fd, diag_fd(s->diag), util_fatal_fd() };

	s->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epoll_fd < 0)
		return -errno;
	for (int i = 0; i < 3; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.fd = fds[i] };

		if (fds[i] >= 0 && epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, fds[i], &ev) < 0)
			return -errno;
	}
	return 0;
}

/* A frame loop asks for the next snapshot and is told when it is there (session_ask()). */
static void watch_publications(struct session *s)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = collector_published_fd(s->collector) };

	if (ev.data.fd >= 0)
		epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, ev.data.fd, &ev);
}

/* A snapshot was published since the last look: the frontend may show it. */
static void take_publication(struct session *s)
{
	const struct session_frontend *fe = s->frontend;
	int fd = s->collector ? collector_published_fd(s->collector) : -1;
	uint64_t count;

	if (fd >= 0 && read(fd, &count, sizeof(count)) == (ssize_t)sizeof(count) && fe &&
	    fe->published)
		fe->published(fe->arg, s);
}

static int fail(struct session *s, int status, char **message, char *text)
{
	*message = text;
	if (s->target)
		target_abandon(s->target);
	session_free(s);
	return status;
}

/* Whether pid is a kernel thread, then said in text, its name in visible form like every name
 * from a target. */
static bool kernel_thread(pid_t pid, char *text, size_t size)
{
	char name[64], safe[64 * UTIL_VISIBLE_CHAR_MAX];

	if (!target_kernel_thread(pid, name, sizeof(name)))
		return false;
	util_visible(safe, sizeof(safe), name);
	snprintf(text, size, "pid %d (%s) is a kernel thread: it has no user space for proftop to "
		 "profile", (int)pid, safe);
	return true;
}

/* Check the PIDs and attach. A kernel thread among them samples nothing: it is left out with a
 * warning, or is the error when no other PID is left. */
static int open_attach(struct session *s, const struct session_options *o, char **message)
{
	pid_t *pids = xmalloc(o->npids * sizeof(*pids)), missing = 0;
	char text[512];
	size_t n = 0;
	int err = 0;

	for (size_t i = 0; i < o->npids; i++)
		if (!kernel_thread(o->pids[i], text, sizeof(text)))
			pids[n++] = o->pids[i];
	for (size_t i = 0; i < o->npids && !err; i++) {
		if (!kernel_thread(o->pids[i], text, sizeof(text)))
			continue;
		if (n)
			diag_report(s->diag, DIAG_WARNING, "%s; the other PIDs are profiled", text);
		else
			err = -EPERM;
	}
	if (err)
		*message = xstrdup(text);
	else if ((err = target_attach(&s->target, pids, n, &missing)))
		*message = xasprintf("no such process: %d", (int)missing);
	free(pids);
	return err;
}

/* The processes: launch the command behind its barrier, or check the PIDs. */
static int open_target(struct session *s, const struct session_options *o, char **message)
{
	int err;

	if (o->sample.system_wide) {
		err = target_system(&s->target);
		if (err)
			*message = xasprintf("-a: cannot list the processes in /proc: %s",
					     strerror(-err));
		return err;
	}
	if (o->argv) {
		if (sample_mode_allocations(o->sample.mode)) {
			if (allocrun_prepare(&s->alloc, o->argv[0], o->sample.alloc_rate, message))
				return -EINVAL;
		}
		err = target_launch(&s->target, o->argv, o->command_output_fd,
				    s->alloc.ring ? s->alloc.env : NULL);
		if (err)
			*message = xasprintf("cannot start '%s': %s", o->argv[0], strerror(-err));
		return err;
	}
	return open_attach(s, o, message);
}

/* The i-th process -p named. */
static pid_t named_pid(const struct session *s, size_t i)
{
	size_t n;

	return target_pids(s->target, &n)[i];
}

/* --children: events on the processes the attached ones started before their events were open
 * (target.h), round after round, since a process found in one round may have started others
 * before its own events opened. One that cannot be attached to is said and left out. */
static void open_children(struct session *s)
{
	size_t adopted = 0;

	for (int round = 0; round < CHILDREN_ROUNDS_MAX; round++) {
		pid_t *pids;
		size_t *roots, n = target_unfollowed(s->target, &pids, &roots);

		for (size_t i = 0; i < n; i++) {
			int err = sampler_attach(s->sampler, pids[i]);

			if (!err)
				err = target_adopt(s->target, pids[i], roots[i]);
			adopted += !err;
			if (err && err != -ESRCH)
				diag_report(s->diag, DIAG_WARNING, "--children: cannot attach to pid %d, "
					    "which pid %d started: %s", (int)pids[i],
					    (int)named_pid(s, roots[i]), strerror(-err));
		}
		free(pids);
		free(roots);
		target_stamp(s->target);
		if (!n)
			break;
	}
	diag_report(s->diag, DIAG_INFO, "--children: %zu processes started before the attach are "
		    "followed too", adopted);
}

/* The engine: events on the target, the ring, the collector, their threads. */
/* The CPUs this process may run on (its affinity), not the machine's. */
static long usable_cpus(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		return sysconf(_SC_NPROCESSORS_ONLN);
	return CPU_COUNT(&set);
}

/* Coverage: the command before its exec, or each process -p named, probed before the collector
 * starts. */
static int watch_coverage(struct session *s, const struct session_options *o, bool launched,
			  const pid_t *pids, size_t npids, char **message)
{
	int err = 0;

	if (launched) {
		char *exe = util_find_command(o->argv[0]);

		if (!exe) {
			*message = xasprintf("cannot find '%s' in $PATH", o->argv[0]);
			return -ENOENT;
		}
		err = collector_watch(s->collector, pids[0], exe, message);
		free(exe);
		return err;
	}
	for (size_t i = 0; i < npids && !err; i++) {
		char link[64], exe[4096];
		ssize_t n;

		snprintf(link, sizeof(link), "/proc/%d/exe", (int)pids[i]);
		n = readlink(link, exe, sizeof(exe) - 1);
		if (n <= 0) {
			*message = xasprintf("%s: %s", link, strerror(errno));
			return -errno;
		}
		exe[n] = '\0';
		err = collector_watch(s->collector, pids[i], exe, message);
	}
	return err;
}

/* What the OTLP pusher did, into a snapshot's counters (on the collector's thread). */
static void push_counts(void *arg, struct counters *counters)
{
	otlp_push_counts(arg, counters);
}

static int open_engine(struct session *s, const struct session_options *o, char **message)
{
	const char *what = NULL;
	size_t npids;
	const pid_t *pids = target_pids(s->target, &npids);
	bool launched = target_launched(s->target);
	struct sample_config config = o->sample;
	int err;

	/* The collector's workers, each a reader of the ring: as asked; by default one, and under -a
	 * as many as the CPUs proftop may run on call for (collector.h); one when a source of the
	 * run needs one (the allocations'), whatever was asked. */
	if (!config.collectors)
		config.collectors = config.system_wide ? source_default_workers(usable_cpus()) : 1;
	if (!source_workers_allowed(&config, config.collectors))
		config.collectors = 1;
	s->ring = ring_create_readers(o->ring_size, config.collectors);
	if (!s->ring) {
		*message = xasprintf("cannot create a ring of %zu bytes", o->ring_size);
		return -EINVAL;
	}
	err = sampler_open(&s->sampler, &o->sample, pids, npids, launched, s->ring, s->diag, &what);
	if (err == -ESRCH && !launched)
		*message = xstrdup("no such process: the target ended while proftop attached");
	else if (err) {
		char *advice = sampler_advice(err, what, &o->sample, !launched);

		*message = xasprintf("%s: %s (%s)", what, strerror(-err), advice);
		free(advice);
	}
	if (err)
		return err;
	if (!launched && !config.system_wide) {
		target_stamp(s->target);
		s->children = o->children;
		if (o->children)
			open_children(s);
		pids = target_pids(s->target, &npids);
	}
	err = collector_new(&s->collector, s->ring, s->sampler, &config, s->diag);
	if (err) {
		*message = xasprintf("collector: %s", strerror(-err));
		return err;
	}
	if (o->otlp && (err = otlp_push_new(&s->push, o->otlp, message)))
		return err;
	if (s->push)
		collector_count_also(s->collector, push_counts, s->push);
	if (config.mode == SAMPLE_MODE_COVERAGE &&
	    (err = watch_coverage(s, o, launched, pids, npids, message)))
		return err;
	watch_publications(s);
	if (s->alloc.ring)
		sampler_set_alloc_ring(s->sampler, s->alloc.ring, s->alloc.nslots, s->alloc.slot_size);
	collector_set_history(s->collector, o->history);
	collector_set_max_memory(s->collector, o->max_memory);
	collector_set_source(s->collector, o->no_lines ? COLLECTOR_SOURCE_OFF
					   : o->no_inline ? COLLECTOR_SOURCE_LINES
							  : COLLECTOR_SOURCE_INLINE);
	collector_use_debuginfod(s->collector);
	/* Events first, then /proc/PID/maps: a mapping made in between is then in both. */
	err = sampler_start(s->sampler, collector_wake_fd(s->collector));
	if (!err)
		err = collector_start(s->collector, launched ? NULL : pids, launched ? 0 : npids);
	if (!err && s->push)
		err = otlp_push_start(s->push, s->collector);
	if (err)
		*message = xasprintf("cannot start threads: %s", strerror(-err));
	s->started_ns = util_now_ns();
	return err;
}

/* Release the command now that its events are armed. Returns its exit status on failure. */
static int start_command(struct session *s, const char *name, char **message)
{
	int err = target_start(s->target);

	if (!err)
		return 0;
	*message = xasprintf("cannot run '%s': %s", name, strerror(err));
	return err == ENOENT ? 127 : 126;
}

static int open_saved(struct session *s, const char *path, char **message)
{
	struct tmon_read_options ro = { 0 };
	struct tmon *tm;

	if (tmon_read_file(path, &ro, NULL, &tm, message))
		return -EINVAL;
	s->saved = tmon_snapshot(tm);
	tmon_free(tm);
	s->saved_name = xstrdup(path);
	s->end = SESSION_END_SAVED;
	snprintf(s->state, sizeof(s->state), "saved profile");
	return 0;
}

/* --baseline FILE: a tmon.out read as -i reads one. */
static int open_baseline(struct session *s, const char *path, char **message)
{
	struct tmon_read_options ro = { 0 };
	struct tmon *tm;
	char *why;

	if (tmon_read_file(path, &ro, NULL, &tm, &why)) {
		*message = xasprintf("--baseline: %s", why);
		free(why);
		return -EINVAL;
	}
	s->baseline = tmon_snapshot(tm);
	s->baseline_label = xstrdup(path);
	tmon_free(tm);
	return 0;
}

/* --serve: the HTTP endpoint over the collector. The next seconds are cut from the history,
 * whose oldest second merges into coarser stretches as a new one begins: a profile may be one
 * second shorter than the history. */
static int open_server(struct session *s, const struct session_options *o, char **message)
{
	int err = serve_start(&s->server, o->serve, s->collector, o->history ? o->history - 1 : 0,
			      message);

	if (err)
		return err;
	s->server_exposed = !serve_address_local(o->serve);
	diag_report(s->diag, s->server_exposed ? DIAG_WARNING : DIAG_INFO,
		    "serving profiles at http://%s/debug/pprof/%s", serve_where(s->server),
		    s->server_exposed ? " to every machine that can connect: they are not "
					"protected" : "");
	return 0;
}

int session_open(struct session **out, const struct session_options *o, char **message)
{
	struct session *s = xcalloc(1, sizeof(*s));
	int status;

	*out = NULL;
	s->run = o->run;
	s->epoll_fd = s->signal_fd = -1;
	/* A saved profile is read before the signals are taken over, so that Ctrl-C still ends
	 * proftop while it waits on a FIFO or a terminal for the file. */
	if ((o->input && open_saved(s, o->input, message)) ||
	    (o->baseline && open_baseline(s, o->baseline, message)))
		return fail(s, 1, message, *message);
	s->diag = diag_new();
	s->signal_fd = s->diag ? open_signals() : -1;
	if (!s->diag || s->signal_fd < 0)
		return fail(s, 1, message, xasprintf("%s: %s", s->diag ? "signalfd" : "eventfd",
						      strerror(errno)));
	if (open_wait_set(s) < 0)
		return fail(s, 1, message, xasprintf("epoll: %s", strerror(errno)));
	if (o->input) {
		*out = s;
		return 0;
	}
	if (open_target(s, o, message) || open_engine(s, o, message))
		return fail(s, 1, message, *message);
	if (o->serve && open_server(s, o, message))
		return fail(s, 1, message, *message);
	snprintf(s->state, sizeof(s->state), o->argv || o->sample.system_wide ? "running"
									       : "attached");
	if (o->argv && (status = start_command(s, o->argv[0], message))) {
		session_free(s);
		return status;
	}
	*out = s;
	return 0;
}

/* --- stopping -------------------------------------------------------------------------------- */

/* The target's CPU time, for the snapshots' tmon.out headers. */
static void update_cpu_times(struct session *s)
{
	uint64_t user_ns, system_ns;

	target_cpu_times(s->target, &user_ns, &system_ns);
	collector_set_cpu_times(s->collector, user_ns, system_ns);
}

static void describe_end(struct session *s)
{
	bool launched = target_launched(s->target);
	int code = target_exit_code(s->target);
	double seconds = s->run.duration;

	if (s->end == SESSION_END_DURATION && launched)
		snprintf(s->state, sizeof(s->state), "stopped after %gs; status %d", seconds, code);
	else if (s->end == SESSION_END_DURATION && target_system_wide(s->target))
		snprintf(s->state, sizeof(s->state), "stopped after %gs", seconds);
	else if (s->end == SESSION_END_DURATION)
		snprintf(s->state, sizeof(s->state), "detached after %gs", seconds);
	else if (launched)
		snprintf(s->state, sizeof(s->state), "exited with status %d", code);
	else
		snprintf(s->state, sizeof(s->state), "ended");
}

/* Attach mode without --children, once: a named process idle over its first IDLE_CHECK_NS (or
 * the run, if shorter) while processes it started before the attach run unfollowed, whose work
 * is then what the user came for (a server's workers), is said, with their number. */
static void check_idle(struct session *s, uint64_t now, bool at_end)
{
	uint64_t elapsed = now - s->started_ns;
	size_t *roots, n;
	pid_t *pids;

	if (s->idle_checked || s->children || target_launched(s->target) ||
	    target_system_wide(s->target) || (!at_end && elapsed < IDLE_CHECK_NS))
		return;
	s->idle_checked = true;
	n = target_unfollowed(s->target, &pids, &roots);
	for (size_t i = 0; i < target_named(s->target); i++) {
		uint64_t cpu = target_named_own_cpu_ns(s->target, i);
		size_t started = 0;

		for (size_t j = 0; j < n; j++)
			started += roots[j] == i;
		if (started && cpu * IDLE_SHARE < elapsed)
			diag_report(s->diag, DIAG_WARNING, "pid %d is idle (%.2fs of CPU in %.1fs); "
				    "the %zu processes it started before proftop attached are not "
				    "followed: use --children (-C)", (int)named_pid(s, i),
				    (double)cpu / 1e9, (double)elapsed / 1e9, started);
	}
	free(pids);
	free(roots);
}

/* Profiling has ended (or, for a saved profile, never ran). */
static bool stopped(const struct session *s)
{
	return s->end != SESSION_RUNNING;
}

/* End profiling: a launched command still running is ended (SIGTERM, then SIGKILL), attached
 * processes are left running; the events are drained and the final snapshot published. */
static void stop(struct session *s, enum session_end why)
{
	if (stopped(s))
		return;
	s->end = why;
	/* The signal is read: from now on a reader that takes nothing may hold up the final
	 * table and snapshot only for a while (outstream.h). */
	if (why == SESSION_END_SIGNAL)
		outstream_hurry();
	/* A Ctrl-C (or Ctrl-\) reached the command as well: give it the grace period to finish its
	 * own way (and exit with its own status) before SIGTERM. */
	if (s->interrupted && target_launched(s->target))
		target_wait(s->target, TERMINATE_GRACE_MS);
	target_terminate(s->target, TERMINATE_GRACE_MS);
	check_idle(s, util_now_ns(), true);
	update_cpu_times(s);
	sampler_stop(s->sampler);
	collector_finish(s->collector);
	/* The last stretch pushed, then published again: the final table counts that push. */
	if (s->push) {
		otlp_push_finish(s->push);
		collector_finish(s->collector);
	}
	describe_end(s);
}

/* --- the loop -------------------------------------------------------------------------------- */

/* Reports no frontend takes go to standard error. */
static void report_to_stderr(void *arg, enum diag_level level, const char *text)
{
	(void)arg;
	diag_print(stderr, level, text);
}

static void report(struct session *s, enum diag_level level, const char *text)
{
	const struct session_frontend *fe = s->frontend;

	if (fe && fe->report)
		fe->report(fe->arg, level, text);
	else
		report_to_stderr(NULL, level, text);
}

static void deliver_reports(struct session *s)
{
	const struct session_frontend *fe = s->frontend;
	struct diag_ops ops = { fe && fe->report ? fe->report : report_to_stderr };

	diag_deliver(s->diag, &ops, fe ? fe->arg : NULL);
}

/* The signals that arrived; returns the end they ask for (SESSION_RUNNING: none). */
static enum session_end read_signals(struct session *s)
{
	struct signalfd_siginfo info;
	enum session_end end = SESSION_RUNNING;

	while (read(s->signal_fd, &info, sizeof(info)) == (ssize_t)sizeof(info)) {
		if (info.ssi_signo == SIGINT || info.ssi_signo == SIGQUIT)
			s->interrupted = true;
		if (info.ssi_signo == SIGINT || info.ssi_signo == SIGQUIT ||
		    info.ssi_signo == SIGTERM || info.ssi_signo == SIGHUP)
			end = SESSION_END_SIGNAL;
		else if (info.ssi_signo == SIGUSR1)
			session_save(s);
	}
	return end;
}

static bool target_ended(struct session *s)
{
	if (target_launched(s->target))
		return target_poll(s->target);
	return !target_any_alive(s->target);
}

static int ms_until(uint64_t when, uint64_t now)
{
	if (!when)
		return -1;
	return when <= now ? 0 : (int)((when - now + 999999) / 1000000);
}

static int min_timeout(int a, int b)
{
	return a < 0 ? b : b < 0 ? a : a < b ? a : b;
}

struct clock {
	uint64_t deadline;         /* end of the duration; 0: none */
	uint64_t interval;         /* between refreshes; 0: none */
	uint64_t next_refresh;
};

/* Wait for the next thing to happen: a signal, a report, the frontend's input or timer, a
 * refresh, the deadline, or (attach mode) the next look at the processes. */
static void wait_once(struct session *s, const struct clock *c)
{
	const struct session_frontend *fe = s->frontend;
	struct pollfd fds[3] = { { .fd = s->epoll_fd, .events = POLLIN } };
	uint64_t now = util_now_ns();
	int timeout = -1, n = 1;

	if (!stopped(s)) {
		timeout = min_timeout(ms_until(c->deadline, now), ms_until(c->next_refresh, now));
		if (!target_launched(s->target))
			timeout = min_timeout(timeout, ATTACH_CHECK_MS);
	}
	if (fe && fe->timeout_ms)
		timeout = min_timeout(timeout, fe->timeout_ms(fe->arg));
	for (int i = 0; fe && i < 2; i++)
		if (fe->fds[i] >= 0)
			fds[n++] = (struct pollfd){ .fd = fe->fds[i], .events = POLLIN };
	if (poll(fds, (nfds_t)n, timeout) < 0 && errno != EINTR)
		fatal("poll: %s", strerror(errno));
}

static void refresh(struct session *s)
{
	const struct session_frontend *fe = s->frontend;

	if (fe && fe->refresh)
		fe->refresh(fe->arg, s);
}

/* Profiling ended by itself (the target, the duration): whether the frontend keeps going. */
static bool ended(struct session *s, enum session_end why)
{
	const struct session_frontend *fe = s->frontend;

	stop(s, why);
	deliver_reports(s);
	return fe && fe->ended && fe->ended(fe->arg, s);
}

/* One turn of the loop after a wakeup; returns SESSION_RUNNING to go on, or why the run ends. */
static enum session_end turn(struct session *s, struct clock *c)
{
	enum session_end end;
	uint64_t now;

	util_fatal_check();
	deliver_reports(s);
	take_publication(s);
	end = read_signals(s);
	if (end != SESSION_RUNNING || stopped(s))
		return end;
	update_cpu_times(s);
	now = util_now_ns();
	check_idle(s, now, false);
	if (target_ended(s))
		end = SESSION_END_TARGET;
	else if (c->deadline && now >= c->deadline)
		end = SESSION_END_DURATION;
	if (end != SESSION_RUNNING)
		return ended(s, end) ? SESSION_RUNNING : end;
	if (c->next_refresh && now >= c->next_refresh) {
		refresh(s);
		while (c->next_refresh <= now)
			c->next_refresh += c->interval;
	}
	return SESSION_RUNNING;
}

static uint64_t seconds_ns(double seconds)
{
	return seconds > 0 ? (uint64_t)llround(seconds * 1e9) : 0;
}

/* The -o file; in time order when its format keeps it (speedscope). */
static int write_output(struct session *s, const struct snapshot *snap, char **message)
{
	const struct export_options *e = &s->run.export;
	struct stretches st;
	int err;

	if (!export_keeps_time_order(e->output, e->format))
		return export_write(snap, s->baseline, e->output, e->format, e->per_thread, message);
	stretches_open(&st, s->collector, snap);
	err = export_write_timeline(snap, &st.timeline, e->output, e->format, e->per_thread, message);
	stretches_close(&st);
	return err;
}

/* The end of a run: the terminal back, the command ended, the -o file written. */
static int finish(struct session *s, enum session_end why)
{
	const struct session_frontend *fe = s->frontend;
	bool was_stopped = stopped(s);
	const struct export_options *e = &s->run.export;
	int status = s->target ? target_exit_code(s->target) : 0;

	if (fe && fe->leave)
		fe->leave(fe->arg);
	if (!was_stopped) {
		stop(s, why);
		status = target_exit_code(s->target);
		if (fe && fe->ended)
			fe->ended(fe->arg, s);
	}
	/* Requests still waiting get what was profiled. */
	serve_stop(s->server);
	s->server = NULL;
	if (e->output) {
		struct snapshot *snap = session_snapshot(s);
		char *message;

		if (write_output(s, snap, &message)) {
			diag_report(s->diag, DIAG_ERROR, "%s", message);
			status = 1;
		}
		free(message);
		snapshot_unref(snap);
	}
	deliver_reports(s);
	return status;
}

int session_run(struct session *s, const struct session_frontend *fe)
{
	uint64_t start = util_now_ns();
	struct clock c = { 0 };
	enum session_end end = SESSION_RUNNING;

	s->frontend = fe;
	c.interval = seconds_ns(s->run.interval);
	c.next_refresh = c.interval ? start + c.interval : 0;
	c.deadline = s->run.duration > 0 ? start + seconds_ns(s->run.duration) : 0;
	if (s->end == SESSION_END_SAVED && !(fe && fe->ended && fe->ended(fe->arg, s)))
		end = SESSION_END_SAVED;
	while (end == SESSION_RUNNING) {
		if (fe && fe->wake && !fe->wake(fe->arg, s)) {
			end = SESSION_END_QUIT;
			break;
		}
		wait_once(s, &c);
		end = turn(s, &c);
	}
	return finish(s, end);
}

/* --- what frontends ask ---------------------------------------------------------------------- */

const char *session_serving(const struct session *s, bool *exposed)
{
	*exposed = s->server_exposed;
	return s->server ? serve_where(s->server) : NULL;
}

struct snapshot *session_snapshot(struct session *s)
{
	if (s->saved)
		return snapshot_ref(s->saved);
	return collector_snapshot(s->collector);
}

struct snapshot *session_newest(struct session *s, struct snapshot **range)
{
	*range = NULL;
	if (s->saved || !s->collector)
		return session_snapshot(s);
	return collector_newest(s->collector, range);
}

void session_ask(struct session *s)
{
	if (!s->saved && s->collector)
		collector_ask(s->collector);
}

struct snapshot *session_snapshots(struct session *s, struct snapshot **range)
{
	*range = NULL;
	if (s->saved || !s->collector)
		return session_snapshot(s);
	return collector_snapshots(s->collector, range);
}

bool session_select(struct session *s, const struct snapshot_range *range)
{
	return s->collector && collector_select(s->collector, range);
}

void session_trace(struct session *s, uint32_t func)
{
	if (s->collector)
		collector_trace(s->collector, func);
}

bool session_next_kind(struct session *s, const char **kind, const char **measures)
{
	/* (From the kind asked last: two asks before the next snapshot go two kinds on.) */
	enum sample_mode now = s->collector ? collector_shown(s->collector) : SAMPLE_MODE_CPU, next;
	size_t count;
	enum sample_mode first = sample_mode_family(now, &count);

	next = (enum sample_mode)(first + (now - first + 1) % (count > 1 ? count : SAMPLE_MODE_WALL + 1));
	if (s->saved || !s->collector || !collector_show(s->collector, next))
		return false;
	*kind = sample_mode_info(next)->name;
	*measures = sample_mode_info(next)->measures;
	return true;
}

const char *session_freq_fixed(struct session *s)
{
	if (!s->sampler || !sampler_freq_fixed(s->sampler))
		return NULL;
	return s->collector && sample_mode_allocations(collector_shown(s->collector))
		       ? "this run samples allocations by bytes (--alloc-rate), not the CPU"
		       : "this run samples the context switches beside the CPU, weighed as time "
			 "against each other: the frequency stays";
}

unsigned session_set_freq(struct session *s, unsigned freq)
{
	if (stopped(s))
		return 0;
	return sampler_set_freq(s->sampler, freq);
}

int session_save(struct session *s)
{
	struct snapshot *range, *snap = session_snapshots(s, &range);
	struct stretches st;
	char *message;
	int err;

	if (range) {
		snapshot_unref(snap);
		snap = range;
	}
	stretches_open(&st, s->collector, snap); /* (made only if the format asks for them) */
	err = export_save_timeline(snap, s->baseline, &st.timeline, &s->run.export, &message);
	stretches_close(&st);

	report(s, err ? DIAG_ERROR : DIAG_INFO, message);
	free(message);
	snapshot_unref(snap);
	return err;
}

struct snapshot *session_baseline(struct session *s, const char **label)
{
	*label = s->baseline_label;
	return s->baseline ? snapshot_ref(s->baseline) : NULL;
}

void session_set_baseline(struct session *s, struct snapshot *baseline, const char *label)
{
	snapshot_unref(s->baseline);
	free(s->baseline_label);
	s->baseline = baseline ? snapshot_ref(baseline) : NULL;
	s->baseline_label = baseline ? xstrdup(label) : NULL;
}

enum session_end session_end(const struct session *s)
{
	return s->end;
}

const char *session_state(const struct session *s)
{
	return s->state;
}

const char *session_describe(const struct session *s)
{
	return s->saved_name ? s->saved_name : target_describe(s->target);
}

void session_free(struct session *s)
{
	if (!s)
		return;
	if (s->sampler && s->collector)
		stop(s, SESSION_END_QUIT);
	serve_stop(s->server);
	otlp_push_finish(s->push);
	collector_free(s->collector);
	otlp_push_free(s->push); /* (the collector counted it to its end) */
	sampler_free(s->sampler);
	ring_destroy(s->ring);
	if (s->alloc.ring)
		allocrun_release(&s->alloc);
	target_free(s->target);
	snapshot_unref(s->saved);
	free(s->saved_name);
	snapshot_unref(s->baseline);
	free(s->baseline_label);
	if (s->signal_fd >= 0)
		close(s->signal_fd);
	if (s->epoll_fd >= 0)
		close(s->epoll_fd);
	diag_free(s->diag);
	free(s);
}
