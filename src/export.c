/* export.c — which format, which file names: the writers (export_tmon.c, export_callgrind.c,
 * export_folded.c, export_pprof.c, export_lcov.c, export_otlp.c, export_speedscope.c) over one
 * scope of a snapshot, into files that outfile.c writes whole or not at all. Numbered saves
 * (export_save) put their files in place without replacing one, so two proftops saving at once
 * never overwrite each other: each takes the next name. */
#include "proftop/export.h"

#include "proftop/export_writers.h"
#include "proftop/outfile.h"
#include "proftop/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const format_names[] = {
	[EXPORT_AUTO] = "auto",
	[EXPORT_TMON] = "tmon",
	[EXPORT_CALLGRIND] = "callgrind",
	[EXPORT_FOLDED] = "folded",
	[EXPORT_PPROF] = "pprof",
	[EXPORT_LCOV] = "lcov",
	[EXPORT_OTLP] = "otlp",
	[EXPORT_SPEEDSCOPE] = "speedscope",
};

int export_format_parse(const char *name, enum export_format *format)
{
	for (int f = EXPORT_TMON; f < (int)(sizeof(format_names) / sizeof(*format_names)); f++) {
		if (!strcmp(name, format_names[f])) {
			*format = (enum export_format)f;
			return 0;
		}
	}
	return -EINVAL;
}

const char *export_format_name(enum export_format format)
{
	return format_names[format];
}

static bool ends_with(const char *s, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	return len >= n && !memcmp(s + len - n, suffix, n);
}

enum export_format export_format_of_path(const char *path)
{
	const char *base = strrchr(path, '/');
	size_t len;

	base = base ? base + 1 : path;
	len = strlen(base);
	/* Leave out one trailing ".N" (a save counter or a thread id). */
	for (size_t i = len; i > 0; i--) {
		if (base[i - 1] == '.') {
			if (i < len)
				len = i - 1;
			break;
		}
		if (base[i - 1] < '0' || base[i - 1] > '9')
			break;
	}
	if (!strncmp(base, "callgrind.out", 13) || ends_with(base, len, ".callgrind"))
		return EXPORT_CALLGRIND;
	if (ends_with(base, len, ".folded") || ends_with(base, len, ".collapsed"))
		return EXPORT_FOLDED;
	if (ends_with(base, len, ".otlp") || ends_with(base, len, ".otlp.pb"))
		return EXPORT_OTLP;
	if (ends_with(base, len, ".pb.gz") || ends_with(base, len, ".pprof") ||
	    ends_with(base, len, ".pb"))
		return EXPORT_PPROF;
	if (ends_with(base, len, ".info"))
		return EXPORT_LCOV;
	if (ends_with(base, len, ".speedscope.json"))
		return EXPORT_SPEEDSCOPE;
	return EXPORT_TMON;
}

const char *export_default_path(enum export_format format)
{
	switch (format) {
	case EXPORT_CALLGRIND:
		return "callgrind.out";
	case EXPORT_FOLDED:
		return "proftop.folded";
	case EXPORT_PPROF:
		return "proftop.pb.gz";
	case EXPORT_LCOV:
		return "proftop.info";
	case EXPORT_OTLP:
		return "proftop.otlp";
	case EXPORT_SPEEDSCOPE:
		return "proftop.speedscope.json";
	default:
		return "tmon.out";
	}
}

/* Why snapshot s cannot be written in format (a static message), or NULL. */
static const char *refused_format(const struct snapshot *s, enum export_format format)
{
	if (format == EXPORT_TMON && snapshot_allocations(s))
		return EXPORT_TMON_NO_ALLOCATIONS;
	if (format == EXPORT_TMON && snapshot_coverage(s))
		return EXPORT_TMON_NO_COVERAGE;
	if (format == EXPORT_LCOV && !snapshot_coverage(s))
		return EXPORT_LCOV_COVERAGE_ONLY;
	return NULL;
}

/* What one file holds: a scope of the snapshot, and for a folded diff the baseline's tree of the
 * same thread (or all of it), for speedscope the run's stretches (NULL: none). */
struct export_job {
	const struct snapshot *s, *baseline;
	enum export_format format;
	bool replace;
	const struct export_timeline *timeline;
};

static int write_format(FILE *out, const struct export_job *job, const struct export_scope *scope)
{
	const struct snapshot *s = job->s;

	switch (job->format) {
	case EXPORT_CALLGRIND:
		return export_callgrind(out, s, scope);
	case EXPORT_FOLDED:
		if (job->baseline) {
			struct export_scope old;

			export_scope_of_tid(&old, job->baseline, scope->thread ? scope->thread->tid : 0);
			return export_folded_diff(out, job->baseline, &old, s, scope);
		}
		return export_folded(out, s, scope);
	case EXPORT_PPROF:
		return export_pprof(out, s, scope);
	case EXPORT_LCOV:
		return export_lcov(out, s, scope);
	case EXPORT_OTLP:
		return export_otlp(out, s, scope);
	case EXPORT_SPEEDSCOPE:
		return export_speedscope(out, s, scope, job->timeline);
	default:
		return export_tmon(out, s, scope);
	}
}

int export_stream(FILE *out, const struct snapshot *s, enum export_format format, char **message)
{
	struct export_job job = { s, NULL, format, false, NULL };
	struct export_scope scope;
	int err;

	*message = NULL;
	if (refused_format(s, format)) {
		*message = xstrdup(refused_format(s, format));
		return -EINVAL;
	}
	export_scope_merged(&scope, s);
	err = write_format(out, &job, &scope);
	if (!err && fflush(out))
		err = -errno;
	if (err)
		*message = xasprintf("writing the %s profile: %s", export_format_name(format),
				     strerror(-err));
	return err;
}

static int write_one(const struct export_job *job, const char *path,
		     const struct export_scope *scope, char **message)
{
	struct outfile f;
	int err = outfile_open(&f, path, message);

	if (err)
		return err;
	err = write_format(f.fp, job, scope);
	if (err) {
		*message = outfile_error(&f, "writing", -err);
		outfile_abandon(&f);
		return err;
	}
	return outfile_close(&f, job->replace, message);
}

static char *thread_path(const char *path, const struct snapshot_thread *t)
{
	return xasprintf("%s.%d", path, (int)t->tid);
}

/* Every file of one save: path, or path.TID for each thread with samples. */
static int write_files(const struct export_job *what, const char *path, bool per_thread,
		       char **message)
{
	const struct snapshot *s = what->s;
	struct export_job job = *what;
	struct export_scope scope;

	if (job.format == EXPORT_AUTO)
		job.format = export_format_of_path(path);
	if (refused_format(s, job.format)) {
		*message = xstrdup(refused_format(s, job.format));
		return -EINVAL;
	}
	if (!per_thread) {
		export_scope_merged(&scope, s);
		return write_one(&job, path, &scope, message);
	}
	if (!strcmp(path, "-")) {
		*message = xstrdup("--per-thread writes one file per thread: it needs a file name, "
				   "not -");
		return -EINVAL;
	}
	for (size_t i = 0; i < s->nthreads; i++) {
		char *name;
		int err;

		if (!s->nodes[s->threads[i].root].total)
			continue;
		name = thread_path(path, &s->threads[i]);
		scope = (struct export_scope){ s->threads[i].root, &s->threads[i] };
		err = write_one(&job, name, &scope, message);
		free(name);
		if (err)
			return err;
	}
	return 0;
}

/* -o - onto a terminal: never the screen's own, and never binary bytes. */
static int check_stdout(const struct export_options *o, bool screen, char **message)
{
	enum export_format format = o->format == EXPORT_AUTO ? export_format_of_path("-") : o->format;

	if (!isatty(STDOUT_FILENO))
		return 0;
	if (screen)
		*message = xstrdup("-o - would write the snapshot onto the terminal the screen uses: "
				   "give -o a file name, redirect standard output, or add -b");
	else if (format == EXPORT_PPROF || format == EXPORT_OTLP)
		*message = xasprintf("-o -: a%s %s snapshot is binary, and standard output is a "
				     "terminal: give -o a file name or redirect standard output",
				     format == EXPORT_OTLP ? "n" : "", export_format_name(format));
	return *message ? -EINVAL : 0;
}

int export_check(const struct export_options *o, bool screen, char **message)
{
	*message = NULL;
	if (!o->output)
		return 0;
	if (!strcmp(o->output, "-"))
		return check_stdout(o, screen, message);
	/* --per-thread writes FILE.TID, in FILE's directory. */
	return outfile_check(o->output, !o->per_thread, message);
}

int export_write(const struct snapshot *s, const struct snapshot *baseline, const char *path,
		 enum export_format format, bool per_thread, char **message)
{
	struct export_job job = { s, baseline, format, true, NULL };

	*message = NULL;
	return write_files(&job, path, per_thread, message);
}

bool export_keeps_time_order(const char *path, enum export_format format)
{
	if (format == EXPORT_AUTO)
		format = export_format_of_path(path);
	return format == EXPORT_SPEEDSCOPE;
}

int export_write_timeline(const struct snapshot *s, const struct export_timeline *timeline,
			  const char *path, enum export_format format, bool per_thread,
			  char **message)
{
	struct export_job job = { s, NULL, format, true, timeline };

	*message = NULL;
	return write_files(&job, path, per_thread, message);
}

/* Whether any file a numbered save would write under name exists already. */
static bool taken(const struct snapshot *s, const char *name, bool per_thread)
{
	struct stat st;
	bool any = false;

	if (!per_thread)
		return lstat(name, &st) == 0 || errno != ENOENT;
	for (size_t i = 0; i < s->nthreads && !any; i++) {
		char *p = thread_path(name, &s->threads[i]);

		any = lstat(p, &st) == 0 || errno != ENOENT;
		free(p);
	}
	return any;
}

int export_save(const struct snapshot *s, const struct snapshot *baseline,
		const struct export_options *o, char **message)
{
	return export_save_timeline(s, baseline, NULL, o, message);
}

int export_save_timeline(const struct snapshot *s, const struct snapshot *baseline,
			 const struct export_timeline *timeline, const struct export_options *o,
			 char **message)
{
	static const struct export_options defaults = { NULL, EXPORT_AUTO, false, NULL };
	enum export_format format;
	const char *base;
	int err;

	if (!o)
		o = &defaults;
	*message = NULL;
	format = o->format;
	if (o->output && strcmp(o->output, "-")) {
		struct export_job job = { s, baseline, format, true, timeline };

		err = write_files(&job, o->output, o->per_thread, message);
		if (!err)
			*message = xasprintf("saved %s%s", o->output, o->per_thread ? ".TID" : "");
		return err;
	}
	base = o->base;
	if (format == EXPORT_AUTO) /* tmon.out holds no allocations (pprof does), no coverage */
		format = base ? export_format_of_path(base)
			 : snapshot_allocations(s)	    ? EXPORT_PPROF
			 : snapshot_coverage(s) ? EXPORT_LCOV
							    : EXPORT_TMON;
	if (!base)
		base = export_default_path(format);
	for (unsigned n = 0; n < 100000; n++) {
		char *name = n ? xasprintf("%s.%u", base, n) : xstrdup(base);

		if (taken(s, name, o->per_thread)) {
			free(name);
			continue;
		}
		struct export_job job = { s, baseline, format, false, timeline };

		err = write_files(&job, name, o->per_thread, message);
		if (err == -EEXIST) { /* someone else took the name meanwhile */
			free(*message);
			*message = NULL;
			free(name);
			continue;
		}
		if (!err)
			*message = xasprintf("saved %s%s", name, o->per_thread ? ".TID" : "");
		free(name);
		return err;
	}
	*message = xasprintf("cannot save: %s, %s.1 ... %s.99999 all exist", base, base, base);
	return -EEXIST;
}
