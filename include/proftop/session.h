/* session.h — one profiling session: the target, the sampler, the ring and the collector wired
 * together, and the signals that steer it. Frontends (batch, TUI) drive a session through a file
 * descriptor they poll and the events it reports; they never see the pieces inside.
 *
 * session_open() blocks SIGINT, SIGTERM, SIGHUP, SIGCHLD and SIGUSR1 in the calling thread (and so
 * in every thread it starts) and receives them through a signalfd instead. */
#ifndef PROFTOP_SESSION_H
#define PROFTOP_SESSION_H

#include "proftop/snapshot.h"
#include "proftop/sample.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct session_options {
	struct sample_config sample;
	char **argv;           /* launch mode: the command */
	const pid_t *pids;     /* attach mode */
	size_t npids;
	size_t ring_size;      /* bytes of the sampler → collector ring */
	uint64_t window_ns;    /* length of the time window (0: none) */
	int command_output_fd; /* launch mode: the command's stdout/stderr (-1: proftop's) */
};

enum session_event {
	SESSION_QUIT = 1,      /* SIGINT, SIGTERM or SIGHUP */
	SESSION_ENDED = 2,     /* the command exited, or every attached process is gone */
	SESSION_SAVE = 4,      /* SIGUSR1: write a snapshot now */
};

struct session;

/* Start profiling. On failure returns the exit status proftop should end with (1, 126 or 127) and
 * a malloc'd message in *message; on success returns 0. */
int session_open(struct session **out, const struct session_options *options, char **message);
/* Poll this for readability; then call session_events(). */
int session_fd(const struct session *session);
/* The events that happened since the last call (a mask of enum session_event). Never blocks. */
unsigned session_events(struct session *session);
/* The newest snapshot, with a reference for the caller. */
struct snapshot *session_snapshot(struct session *session);
/* Whether window snapshots are wanted (they cost a second snapshot per publication), and the
 * newest one with a reference: NULL until one was made. */
void session_want_window(struct session *session, bool want);
struct snapshot *session_window_snapshot(struct session *session);
/* Change the sampling frequency while running; returns the one in effect (at most the -F the
 * session started with). */
unsigned session_set_freq(struct session *session, unsigned freq);
/* Stop profiling: a launched command still running is ended (SIGTERM, then SIGKILL), attached
 * processes are left running; the events are drained and the final snapshot published. */
void session_stop(struct session *session);
/* proftop's exit status: the command's (128+N if signal N killed it), or 0 in attach mode. */
int session_exit_code(const struct session *session);
/* True in launch mode, false in attach mode. */
bool session_launched(const struct session *session);
/* A one-line description of the target: the command line or the PIDs. malloc'd. */
char *session_describe(const struct session *session);
void session_free(struct session *session);

#endif
