/* session.h — one profiling session and its run: the target, the sampler, the ring and the
 * collector wired together, the signals that steer them, the duration, saves, the final snapshot
 * file and the exit status. A frontend (batch tables, the screen) only renders: session_run()
 * owns the loop and calls the frontend's ops when there is something to show.
 *
 * A session either profiles (launch or attach mode) or shows a saved profile (a tmon.out read
 * back); the second kind has ended before it starts and never samples.
 *
 * session_open() blocks SIGINT, SIGTERM, SIGQUIT, SIGHUP, SIGCHLD and SIGUSR1 in the calling
 * thread (and so in every thread it starts) and receives them through a signalfd. The engine's
 * threads report what goes wrong through a diagnostics channel (diag.h); session_run() hands
 * each report to the frontend on the calling thread, the only one that may touch a terminal. */
#ifndef PROFTOP_SESSION_H
#define PROFTOP_SESSION_H

#include "proftop/diag.h"
#include "proftop/export.h"
#include "proftop/sample.h"
#include "proftop/otlp_push.h"
#include "proftop/serve.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct snapshot;

/* How a session runs, whichever frontend shows it. */
struct run_options {
	double duration;       /* seconds to profile; 0: until the target ends or a signal */
	double interval;       /* seconds between the frontend's refreshes; 0: none before the end */
	struct export_options export; /* -o when the run ends; where SIGUSR1 and session_save() write */
};

struct session_options {
	struct sample_config sample;
	char **argv;           /* launch mode: the command */
	const pid_t *pids;     /* attach mode */
	size_t npids;
	bool children;         /* attach mode: their children started before the attach too */
	const char *input;     /* a saved profile (tmon.out) to show instead */
	const char *baseline;  /* a saved profile (tmon.out) to compare with; NULL: none */
	size_t ring_size;      /* bytes of the sampler → collector ring */
	unsigned history;      /* seconds of history kept a second each (0: no history) */
	size_t max_memory;     /* bytes for the call trees and DWARF (0: no limit) */
	bool no_inline;        /* inlined functions are not frames of their own */
	bool no_lines;         /* no source lines, inlined frames nor per-address counts */
	int command_output_fd; /* launch mode: the command's stdout/stderr (-1: proftop's) */
	const struct serve_address *serve; /* --serve: where to serve profiles (NULL: nowhere) */
	const struct otlp_push_options *otlp; /* --otlp-endpoint: where to push (NULL: nowhere) */
	struct run_options run;
};

/* Why profiling ended. */
enum session_end {
	SESSION_RUNNING,       /* it has not */
	SESSION_END_TARGET,    /* the command exited, or every attached process is gone */
	SESSION_END_DURATION,  /* the duration passed */
	SESSION_END_SIGNAL,    /* SIGINT, SIGTERM, SIGQUIT or SIGHUP */
	SESSION_END_QUIT,      /* the frontend asked (the q key) */
	SESSION_END_SAVED,     /* a saved profile: nothing ran */
};

struct session;

/* What a frontend does when session_run() has something for it. Every op is optional; arg is
 * passed to each. */
struct session_frontend {
	void *arg;
	int fds[2];            /* the frontend's own descriptors to wait on too (-1: none) */
	/* After every wakeup (input on fds, a timer, a refresh, a report): read input, draw.
	 * Returns false to end the run. */
	bool (*wake)(void *arg, struct session *session);
	/* Milliseconds until the frontend wants wake() for a timer of its own (-1: no timer). */
	int (*timeout_ms)(void *arg);
	/* Each interval while profiling: time to show the newest snapshot. */
	void (*refresh)(void *arg, struct session *session);
	/* A snapshot was published (one asked for with session_ask(), or another): session_newest()
	 * gives it (NULL: not told). */
	void (*published)(void *arg, struct session *session);
	/* Something to tell the user: a save's outcome, an engine warning (NULL: standard error). */
	void (*report)(void *arg, enum diag_level level, const char *text);
	/* Profiling ended (session_end() says why) and the final snapshot is published. Returns true
	 * to keep the run going until wake() returns false; ignored when the run is ending anyway
	 * (a signal, or wake() said so). */
	bool (*ended)(void *arg, struct session *session);
	/* The run is over; the command has not been ended yet (that may take a grace period), so
	 * the screen gives back the terminal here. */
	void (*leave)(void *arg);
};

/* Start profiling, or read the saved profile. On failure returns the exit status proftop should
 * end with (1, 126 or 127) and a malloc'd message in *message; on success returns 0. */
int session_open(struct session **out, const struct session_options *options, char **message);
/* Run to the end with frontend (NULL: none) and return proftop's exit status: the command's
 * (128+N if signal N killed it), 0 in attach mode or for a saved profile, 1 when the -o snapshot
 * could not be written. */
int session_run(struct session *session, const struct session_frontend *frontend);
void session_free(struct session *session);

/* --- what a frontend may ask while it runs (on session_run()'s thread) -------------------------- */

/* The newest snapshot, with a reference for the caller; while the engine runs it is asked for
 * a fresh one, waited for up to half a second (batch tables, exports, saves). */
struct snapshot *session_snapshot(struct session *session);
/* For a frame loop, which never waits on the engine: the newest snapshot there is and its
 * selected stretch's (NULL when none) into *range, with references; and a request for the next
 * one, the frontend's published() told when it is there. */
struct snapshot *session_newest(struct session *session, struct snapshot **range);
void session_ask(struct session *session);
/* Select a stretch of the run, or none (NULL): while one is, every publication also makes a
 * snapshot of it (a second snapshot's cost). False when this session keeps no history (a saved
 * profile, --history 0). */
bool session_select(struct session *session, const struct snapshot_range *range);
/* The function whose samples the timeline also counts, per second (0: none). */
void session_trace(struct session *session, uint32_t func);
/* Both at once, made together (the screen's Lines view reads the cumulative one's sites while
 * the rest shows the stretch): the selected stretch's snapshot or NULL into *range, the
 * cumulative returned. */
struct snapshot *session_snapshots(struct session *session, struct snapshot **range);
/* Show the run's next kind of profile from the next snapshot on (cpu, offcpu, runnable, wall;
 * or alloc, inuse and their objects), its name into *kind and what it counts into *measures (a
 * sentence for the screen). False: the run keeps one kind only (a cpu run, a profile read from
 * a file). */
bool session_next_kind(struct session *session, const char **kind, const char **measures);
/* NULL when the frequency can change; else why not (a sentence for the screen): the run samples
 * the context switches too, its CPU samples weighed as time against them, or allocations. */
const char *session_freq_fixed(struct session *session);
/* Change the sampling frequency; returns the one in effect (at most the -F the session started
 * with), or 0 when the session is not sampling (ended, or a saved profile). */
unsigned session_set_freq(struct session *session, unsigned freq);
/* The baseline the profile is compared with (--baseline's file, or one the frontend set), with a
 * reference for the caller, and *label naming it; NULL when there is none. */
struct snapshot *session_baseline(struct session *session, const char **label);
/* Compare with baseline from now on (NULL: with nothing); label names it ("seconds 0-12"). A
 * folded save then writes both sides' counts per stack (export_write()). */
void session_set_baseline(struct session *session, struct snapshot *baseline, const char *label);
/* Write the profile as it is now to the -o file, or to the next free numbered name: the selected
 * stretch while one is (session_select()), else the cumulative snapshot, against the baseline in
 * the folded format; the outcome goes to the frontend's report op. Returns 0 or -errno. */
int session_save(struct session *session);
enum session_end session_end(const struct session *session);
/* The state for a title line: "running", "attached", "exited with status 3", "stopped after 5s;
 * status 143", "detached after 5s", "ended", "saved profile". */
const char *session_state(const struct session *session);
/* Where profiles are served ("127.0.0.1:6060"), *exposed saying whether other machines can
 * connect; NULL when they are not. */
const char *session_serving(const struct session *session, bool *exposed);
/* A one-line description of the target: the command line, the PIDs, or the saved file. */
const char *session_describe(const struct session *session);

#endif
