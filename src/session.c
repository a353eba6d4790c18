/* session.c — wires target → sampler → ring → collector, and turns signals into session events. */
#include "proftop/session.h"

#include "proftop/collector.h"
#include "proftop/ring.h"
#include "proftop/sampler.h"
#include "proftop/target.h"
#include "proftop/util.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#define TERMINATE_GRACE_MS 2000

struct session {
	struct target target;
	struct ring *ring;
	struct sampler *sampler;
	struct collector *collector;
	int signal_fd;
	bool stopped;
	bool interrupted;      /* SIGINT: the command got it from the terminal too */
};

static int open_signals(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

static int fail(struct session *s, int status, char **message, char *text)
{
	*message = text;
	target_abandon(&s->target);
	session_free(s);
	return status;
}

int session_open(struct session **out, const struct session_options *o, char **message)
{
	struct session *s = xcalloc(1, sizeof(*s));
	const char *what = NULL;
	int err;

	s->target.barrier_fd = s->target.exec_status_fd = -1;
	s->signal_fd = open_signals();
	if (s->signal_fd < 0)
		return fail(s, 1, message, xasprintf("signalfd: %s", strerror(errno)));
	if (o->argv) {
		err = target_launch(&s->target, o->argv, o->command_output_fd);
		if (err)
			return fail(s, 1, message, xasprintf("cannot start '%s': %s", o->argv[0],
							      strerror(-err)));
	} else {
		pid_t missing = 0;

		err = target_attach(&s->target, o->pids, o->npids, &missing);
		if (err)
			return fail(s, 1, message, xasprintf("no such process: %d", (int)missing));
	}
	s->ring = ring_create(o->ring_size);
	if (!s->ring)
		return fail(s, 1, message, xasprintf("cannot create a ring of %zu bytes", o->ring_size));
	err = sampler_open(&s->sampler, &o->sample, &s->target, s->ring, &what);
	if (err) {
		if (err == -ESRCH && !o->argv)
			return fail(s, 1, message, xstrdup("no such process: the target ended while proftop "
							   "attached"));
		return fail(s, 1, message, xasprintf("%s: %s (%s)", what, strerror(-err),
						      sampler_advice(err, !o->argv)));
	}
	s->collector = collector_new(s->ring, s->sampler, &o->sample);
	collector_set_window(s->collector, o->window_ns);
	/* Events first, then /proc/PID/maps: a mapping made in between is then in both. */
	err = sampler_start(s->sampler, collector_wake_fd(s->collector));
	if (!err)
		err = collector_start(s->collector, s->target.pids, s->target.npids);
	if (err)
		return fail(s, 1, message, xasprintf("cannot start threads: %s", strerror(-err)));
	if (o->argv) {
		err = target_start(&s->target);
		if (err) {
			int status = err == ENOENT ? 127 : 126;

			session_stop(s);
			return fail(s, status, message, xasprintf("cannot run '%s': %s", o->argv[0],
								   strerror(err)));
		}
	}
	*out = s;
	return 0;
}

int session_fd(const struct session *s)
{
	return s->signal_fd;
}

/* The target's CPU time, for the snapshots' tmon.out headers. */
static void update_cpu_times(struct session *s)
{
	uint64_t user_ns, system_ns;

	target_cpu_times(&s->target, &user_ns, &system_ns);
	collector_set_cpu_times(s->collector, user_ns, system_ns);
}

unsigned session_events(struct session *s)
{
	struct signalfd_siginfo info;
	unsigned events = 0;

	while (read(s->signal_fd, &info, sizeof(info)) == (ssize_t)sizeof(info)) {
		switch (info.ssi_signo) {
		case SIGINT:
			s->interrupted = true;
			events |= SESSION_QUIT;
			break;
		case SIGTERM:
		case SIGHUP:
			events |= SESSION_QUIT;
			break;
		case SIGUSR1:
			events |= SESSION_SAVE;
			break;
		default:
			break;
		}
	}
	if (s->target.launched ? target_poll(&s->target) : !target_any_alive(&s->target))
		events |= SESSION_ENDED;
	update_cpu_times(s);
	return events;
}

struct snapshot *session_snapshot(struct session *s)
{
	return collector_snapshot(s->collector);
}

void session_want_window(struct session *s, bool want)
{
	collector_want_window(s->collector, want);
}

struct snapshot *session_window_snapshot(struct session *s)
{
	return collector_window_snapshot(s->collector);
}

bool session_launched(const struct session *s)
{
	return s->target.launched;
}

unsigned session_set_freq(struct session *s, unsigned freq)
{
	return sampler_set_freq(s->sampler, freq);
}

void session_stop(struct session *s)
{
	if (s->stopped)
		return;
	s->stopped = true;
	/* A Ctrl-C reached the command as well: give it the grace period to finish its own way
	 * (and exit with its own status) before SIGTERM. */
	if (s->interrupted && s->target.launched)
		target_wait(&s->target, TERMINATE_GRACE_MS);
	target_terminate(&s->target, TERMINATE_GRACE_MS);
	update_cpu_times(s);
	sampler_stop(s->sampler);
	collector_finish(s->collector);
}

int session_exit_code(const struct session *s)
{
	return target_exit_code(&s->target);
}

char *session_describe(const struct session *s)
{
	char *text = xstrdup(s->target.launched ? "" : "pid");

	if (s->target.launched) {
		for (char **a = s->target.argv; *a; a++) {
			char *next = xasprintf("%s%s%s", text, a == s->target.argv ? "" : " ", *a);

			free(text);
			text = next;
		}
		return text;
	}
	for (size_t i = 0; i < s->target.npids; i++) {
		char *next = xasprintf("%s%s%d", text, i ? "," : " ", (int)s->target.pids[i]);

		free(text);
		text = next;
	}
	return text;
}

void session_free(struct session *s)
{
	if (!s)
		return;
	if (s->sampler && s->collector)
		session_stop(s);
	collector_free(s->collector);
	sampler_free(s->sampler);
	ring_destroy(s->ring);
	target_free(&s->target);
	if (s->signal_fd >= 0)
		close(s->signal_fd);
	free(s);
}
