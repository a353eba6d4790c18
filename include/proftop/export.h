/* export.h — snapshots as files that other tools read: tmon.out (Devel::DProf's format, for
 * dprofpp and `proftop report`), callgrind (callgrind_annotate, KCachegrind), folded stacks
 * (flamegraph.pl, speedscope), pprof (gzipped protobuf: go tool pprof, Pyroscope, Parca) and
 * speedscope's JSON (its time order too: export_write_timeline()).
 *
 * export.c picks the format, names the files and writes them atomically: a temporary file in the
 * target's directory, fsync, rename. A failure at any point leaves the previous file as it was and
 * says what failed; a symbolic link at the target path is refused, never followed. A FIFO, a
 * device or a standard output that is no regular file is written in place, and never blocks:
 * a FIFO nobody reads is an error, and a wait for room ends when SIGINT, SIGTERM, SIGQUIT or
 * SIGHUP is pending (the session keeps them blocked). The writers (export_tmon.c, ...) only turn one tree
 * of a snapshot into bytes on a stream.
 *
 * A snapshot keeps no time order of its samples, so the writers walk its call tree depth first,
 * hottest child first (export_walk_begin()), and emit each node's self samples as if they were
 * consecutive. The run's time order is its timeline's stretches (history.h): a format that keeps
 * time order (speedscope) is written from a snapshot of each, in order. */
#ifndef PROFTOP_EXPORT_H
#define PROFTOP_EXPORT_H

#include "proftop/snapshot.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

enum export_format {
	EXPORT_AUTO,      /* from the file name */
	EXPORT_TMON,
	EXPORT_CALLGRIND,
	EXPORT_FOLDED,
	EXPORT_PPROF,
	EXPORT_LCOV,      /* a coverage run's lines: lcov's tracefile (genhtml) */
	EXPORT_OTLP,      /* OpenTelemetry's profiles signal: an ExportProfilesServiceRequest */
	EXPORT_SPEEDSCOPE, /* speedscope's JSON, a profile per thread, in time order */
};

struct export_options {
	const char *output;       /* -o: written when profiling ends; "-" is stdout; NULL: none */
	enum export_format format; /* -f; EXPORT_AUTO: from the file name */
	bool per_thread;          /* --per-thread: one file per thread, FILE.TID */
	const char *base;         /* $PROFTOP_OUT_FILE: where numbered saves start; NULL: default */
};

/* Why an allocation mode's snapshot is not written as tmon.out. */
#define EXPORT_TMON_NO_ALLOCATIONS \
	"tmon.out carries time only (Devel::DProf's ticks), not bytes: save an allocation " \
	"profile as pprof (-f pprof, *.pb.gz), callgrind or folded"

/* Why a coverage snapshot is not written as tmon.out, and another as lcov. */
#define EXPORT_TMON_NO_COVERAGE \
	"tmon.out holds the time spent in subs: save a coverage run's executions as lcov " \
	"(-f lcov, *.info), callgrind, folded or pprof"
#define EXPORT_LCOV_COVERAGE_ONLY \
	"an lcov tracefile holds how often lines ran: it is written from a coverage run " \
	"(--mode coverage)"

/* "tmon", "callgrind", "folded", "pprof", "lcov", "otlp" or "speedscope". Returns 0 or -EINVAL. */
int export_format_parse(const char *name, enum export_format *format);
const char *export_format_name(enum export_format format);
/* The format a file name asks for: callgrind.out*, *.callgrind, *.folded, *.collapsed, *.pb.gz,
 * *.pprof, *.pb, *.info (lcov), *.otlp, *.otlp.pb, *.speedscope.json (a trailing .N counter or
 * .TID is ignored); anything else is tmon.out. */
enum export_format export_format_of_path(const char *path);
/* The name numbered saves start from when neither -o nor $PROFTOP_OUT_FILE gives one. */
const char *export_default_path(enum export_format format);

/* Before profiling starts: whether the -o target (options->output; nothing to check when NULL)
 * can be written, so that a typo costs no profile. The directory must take a new file (one is
 * created and removed, which also clears stale temporary files of the same name); a symbolic
 * link or a directory at the path is refused; a FIFO or a device must be writable (a FIFO's
 * reader is not looked for: opening it now would hand the reader an end of file). -o - onto a
 * terminal is refused for the screen (screen: it owns the terminal) and for pprof (binary).
 * Returns 0, or -errno with a malloc'd *message naming the path. */
int export_check(const struct export_options *options, bool screen, char **message);

/* Write the snapshot to path ("-": standard output) in format (EXPORT_AUTO: from path). With
 * per_thread, one file per thread with samples, path.TID. With a baseline (NULL: none), the
 * folded format writes both sides' counts per stack (export_folded_diff()); the other formats
 * hold the snapshot alone. Returns 0, or -errno with a malloc'd *message saying what failed. */
int export_write(const struct snapshot *snapshot, const struct snapshot *baseline,
		 const char *path, enum export_format format, bool per_thread, char **message);

/* The run in time order, for the formats that keep it (speedscope): count consecutive
 * stretches of the run, oldest first, which together hold the snapshot's samples. The writer
 * asks for them one at a time, stretch(arg, i) for i = 0 ... count - 1, and drops each (a
 * snapshot with a reference for it; NULL: none) before the next: a stretch's snapshot holds a
 * whole tree, so all of a long run's at once would hold it hundreds of times. count 0: no time
 * order is known (a profile read from a file, an in-use profile: a level of now, not a sum). */
struct export_timeline {
	size_t count;
	struct snapshot *(*stretch)(void *arg, size_t i);
	void *arg;
};

/* Whether a file at path in format (EXPORT_AUTO: from path) is written in time order, from an
 * export_timeline: then export_write_timeline() is worth its stretches. */
bool export_keeps_time_order(const char *path, enum export_format format);
/* export_write() of a format that keeps time order, from timeline's stretches (NULL or empty:
 * the snapshot as one stretch); any other format is written as export_write() writes it,
 * without a baseline. */
int export_write_timeline(const struct snapshot *snapshot, const struct export_timeline *timeline,
			  const char *path, enum export_format format, bool per_thread,
			  char **message);

/* The snapshot's merged tree in format (not EXPORT_AUTO) onto out, a stream that is no file of
 * its own (an HTTP response's body). Returns 0, or -errno with a malloc'd *message: -EINVAL for
 * a format the snapshot cannot be written in (tmon.out of allocations). */
int export_stream(FILE *out, const struct snapshot *snapshot, enum export_format format,
		  char **message);

/* A snapshot on demand (the TUI's `s` key, SIGUSR1): to the -o file, replacing it, when one was
 * given (not "-"); otherwise to the first free name of base, base.1, base.2, ... (base is
 * options->base or the format's default name, tmon.out for tmon; with neither -f nor a base
 * the format is tmon, or pprof for an allocation profile), never replacing a file. options
 * may be NULL for the defaults; baseline as for export_write(). Returns 0 with *message "saved FILE", or -errno with the error;
 * *message is malloc'd either way. */
int export_save(const struct snapshot *snapshot, const struct snapshot *baseline,
		const struct export_options *options, char **message);
/* export_save() with the run's stretches for a format that keeps time order (timeline as for
 * export_write_timeline(); the other formats leave it unread). */
int export_save_timeline(const struct snapshot *snapshot, const struct snapshot *baseline,
			 const struct export_timeline *timeline,
			 const struct export_options *options, char **message);

#endif
