/* export_speedscope.c — a snapshot in speedscope's file format (JSON, its schema at
 * https://www.speedscope.app/file-format-schema.json): shared.frames holds the functions on the
 * scope's stacks, and there is one "sampled" profile per thread (per process with -a), named as
 * the Threads view shows it: "COMM (tid TID)", or "COMM (pid PID)" for a process.
 *
 * Time order: a profile's samples come stretch by stretch, oldest first (export.h's
 * export_timeline), and within a stretch in the tree walk's order (hottest child first): one
 * sample per stack with self counts, weighted by them. speedscope's Time Order view lays samples
 * out one after another by weight, so it shows the run's phases at the timeline's resolution
 * (a second for the newest --history seconds, coarser before). Without stretches the snapshot is
 * one stretch. Each stretch is read once and dropped; what it adds is kept per thread, as frame
 * indices and weights, until the file is written.
 *
 * Frames: a function's name; its source file and the line of its lowest sampled address when
 * DWARF gave them (proftop keeps no declaration lines: pprof's entry Locations use the same
 * line), else its module as the file. The root's own samples (no function at all) are
 * "[unknown]". Names go through json.h, so any bytes from the target give valid JSON.
 *
 * Weights: nanoseconds (count x 1e9 / freq: samples at the sampling frequency in cpu mode,
 * microseconds in the timed modes), bytes in the allocation modes that count bytes, and unit
 * "none" for objects and for coverage's executions. */
#include "proftop/export.h"
#include "proftop/export_writers.h"

#include "proftop/idmap.h"
#include "proftop/json.h"
#include "proftop/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define SPEEDSCOPE_SCHEMA "https://www.speedscope.app/file-format-schema.json"
#define NO_FRAME UINT32_MAX

/* One profile's samples as they came: per sample its depth then its frames, outermost first. */
struct thread_samples {
	uint32_t *stacks;
	size_t nstacks, stacks_cap;
	uint64_t *weights;
	size_t nweights, weights_cap;
};

struct frame {
	uint32_t func;
	char *name, *module;           /* copies: the stretch that named it is dropped */
};

struct speedscope {
	const struct snapshot *s;      /* the snapshot written: its threads, sites and unit */
	const struct snapshot_thread *threads; /* the profiles: the scope's threads with samples */
	size_t nthreads;
	struct idmap profile_of;       /* pid << 32 | tid → its index in threads */
	struct thread_samples *samples; /* per profile */
	unsigned per_second;           /* weights: count x 1e9 / per_second ns; 0: the count */
	uint32_t *frame_of;            /* per function id: its frame, NO_FRAME when none yet */
	size_t frame_of_cap;
	struct frame *frames;
	size_t nframes, frames_cap;
};

static uint64_t thread_key(const struct snapshot_thread *t)
{
	return (uint64_t)(uint32_t)t->pid << 32 | (uint32_t)t->tid;
}

/* The frame of function func of part, numbered when it is first seen. */
static uint32_t frame_of(struct speedscope *sp, const struct snapshot *part, uint32_t func)
{
	const struct snapshot_func *f = &part->funcs[func];
	size_t had = sp->frame_of_cap;

	if (func >= sp->frame_of_cap) {
		xgrow((void **)&sp->frame_of, &sp->frame_of_cap, (size_t)func + 1, sizeof(*sp->frame_of));
		memset(sp->frame_of + had, 0xff, (sp->frame_of_cap - had) * sizeof(*sp->frame_of));
	}
	if (sp->frame_of[func] != NO_FRAME)
		return sp->frame_of[func];
	xgrow((void **)&sp->frames, &sp->frames_cap, sp->nframes + 1, sizeof(*sp->frames));
	sp->frames[sp->nframes] = (struct frame){
		func,
		xstrdup(func != SNAPSHOT_ROOT_FUNC && f->name && *f->name ? f->name : "[unknown]"),
		f->module && strcmp(f->module, "[unknown]") ? xstrdup(f->module) : NULL,
	};
	return sp->frame_of[func] = (uint32_t)sp->nframes++;
}

static uint64_t weight_of(const struct speedscope *sp, uint64_t count)
{
	if (!sp->per_second)
		return count;
	return (uint64_t)(((unsigned __int128)count * 1000000000u + sp->per_second / 2) /
			  sp->per_second);
}

/* One sample of profile t: the path (len nodes of part, outermost first) with count. */
static void add_sample(struct speedscope *sp, struct thread_samples *t,
		       const struct snapshot *part, const uint32_t *path, size_t len,
		       uint64_t count)
{
	xgrow((void **)&t->stacks, &t->stacks_cap, t->nstacks + len + 1, sizeof(*t->stacks));
	t->stacks[t->nstacks++] = (uint32_t)len;
	for (size_t i = 0; i < len; i++)
		t->stacks[t->nstacks++] = frame_of(sp, part, part->nodes[path[i]].func);
	xgrow((void **)&t->weights, &t->weights_cap, t->nweights + 1, sizeof(*t->weights));
	t->weights[t->nweights++] = weight_of(sp, count);
}

/* The stacks of the tree under root in part, in the walk's order, to profile t. */
static void add_tree(struct speedscope *sp, struct thread_samples *t, const struct snapshot *part,
		     const struct snapshot_thread *thread)
{
	struct export_scope scope = { thread->root, thread };
	struct snapshot_walk w;
	struct snapshot_walk_step step;

	if (part->nodes[thread->root].self)
		add_sample(sp, t, part, &thread->root, 1, part->nodes[thread->root].self);
	export_walk_begin(&w, part, &scope, NULL, NULL);
	while (snapshot_walk_next(&w, &step)) {
		const uint32_t *path;
		size_t len;

		if (!part->nodes[step.node].self)
			continue;
		path = snapshot_walk_path(&w, &len);
		add_sample(sp, t, part, path, len, part->nodes[step.node].self);
	}
	snapshot_walk_end(&w);
}

/* One stretch of the run (or the whole snapshot): every written thread's stacks in it. */
static void add_stretch(struct speedscope *sp, const struct snapshot *part)
{
	for (size_t i = 0; i < part->nthreads; i++) {
		const struct snapshot_thread *thread = &part->threads[i];
		uint32_t at = idmap_get(&sp->profile_of, thread_key(thread));

		if (at != IDMAP_MISSING && part->nodes[thread->root].total)
			add_tree(sp, &sp->samples[at], part, thread);
	}
}

/* Per function of the snapshot, its site with a line at the lowest address (NULL: none). */
static const struct snapshot_site **first_lines(const struct snapshot *s)
{
	const struct snapshot_site **first = xcalloc(s->nfuncs ? s->nfuncs : 1, sizeof(*first));

	for (size_t i = 0; i < s->nsites; i++) {
		const struct snapshot_site *site = &s->sites[i];

		if (site->func >= s->nfuncs || !site->line || !site->file ||
		    site->addr == SNAPSHOT_SITE_OTHER)
			continue;
		if (!first[site->func] || site->addr < first[site->func]->addr)
			first[site->func] = site;
	}
	return first;
}

static void write_frames(FILE *out, const struct speedscope *sp)
{
	const struct snapshot_site **first = first_lines(sp->s);

	fputs("\"shared\":{\"frames\":[", out);
	for (size_t i = 0; i < sp->nframes; i++) {
		const struct frame *f = &sp->frames[i];
		const struct snapshot_site *site = f->func < sp->s->nfuncs ? first[f->func] : NULL;

		fputs(i ? ",\n{\"name\":" : "\n{\"name\":", out);
		json_write_string(out, f->name);
		if (f->func != SNAPSHOT_ROOT_FUNC && (site || f->module)) {
			fputs(",\"file\":", out);
			json_write_string(out, site ? site->file : f->module);
		}
		if (f->func != SNAPSHOT_ROOT_FUNC && site)
			fprintf(out, ",\"line\":%u", site->line);
		putc('}', out);
	}
	fputs("]},\n", out);
	free(first);
}

/* What the weights are in (and sp->per_second for weight_of()). */
static const char *unit_of(struct speedscope *sp)
{
	const struct snapshot *s = sp->s;

	sp->per_second = 0;
	if (snapshot_allocations(s))
		return snapshot_bytes(s) ? "bytes" : "none";
	if (snapshot_coverage(s) || !s->freq)
		return "none";
	sp->per_second = s->freq;
	return "nanoseconds";
}

/* A file read back (tmon.out) keeps no threads: its one tree is tid 0's. */
static void write_profile_name(FILE *out, const struct snapshot *s, const struct snapshot_thread *t)
{
	char *name = !t->tid && !t->pid
			     ? xstrdup("all threads")
			     : xasprintf("%s (%s %d)", t->comm && *t->comm ? t->comm : "[unknown]",
					 s->by_process ? "pid" : "tid",
					 (int)(s->by_process ? t->pid : t->tid));

	json_write_string(out, name);
	free(name);
}

static void write_profile(FILE *out, const struct speedscope *sp, size_t at, const char *unit)
{
	const struct thread_samples *t = &sp->samples[at];
	uint64_t end = 0;

	fputs("{\"type\":\"sampled\",\"name\":", out);
	write_profile_name(out, sp->s, &sp->threads[at]);
	fprintf(out, ",\"unit\":\"%s\",\"startValue\":0,\n\"samples\":[", unit);
	for (size_t i = 0, n = 0; i < t->nstacks; i += t->stacks[i] + 1, n++) {
		fputs(n ? ",[" : "[", out);
		for (uint32_t d = 0; d < t->stacks[i]; d++)
			fprintf(out, d ? ",%u" : "%u", t->stacks[i + 1 + d]);
		putc(']', out);
	}
	fputs("],\n\"weights\":[", out);
	for (size_t i = 0; i < t->nweights; i++) {
		fprintf(out, i ? ",%llu" : "%llu", (unsigned long long)t->weights[i]);
		end += t->weights[i];
	}
	fprintf(out, "],\"endValue\":%llu}", (unsigned long long)end);
}

/* The profile with the most samples: the one speedscope shows first. */
static size_t heaviest(const struct speedscope *sp)
{
	size_t best = 0;

	for (size_t i = 1; i < sp->nthreads; i++)
		if (sp->s->nodes[sp->threads[i].root].total > sp->s->nodes[sp->threads[best].root].total)
			best = i;
	return best;
}

static void write_file(FILE *out, struct speedscope *sp)
{
	const char *unit = unit_of(sp);
	char *name = xasprintf("proftop %s profile", snapshot_kind(sp->s));

	fputs("{\"$schema\":\"" SPEEDSCOPE_SCHEMA "\",\n", out);
	fputs("\"exporter\":\"proftop@" PROFTOP_VERSION "\",\n\"name\":", out);
	json_write_string(out, name);
	free(name);
	fprintf(out, ",\n\"activeProfileIndex\":%zu,\n", heaviest(sp));
	write_frames(out, sp);
	fputs("\"profiles\":[", out);
	for (size_t i = 0; i < sp->nthreads; i++) {
		fputs(i ? ",\n" : "\n", out);
		write_profile(out, sp, i, unit);
	}
	fputs("]}\n", out);
}

/* The profiles: the scope's thread, or every thread of the snapshot with samples. */
static void choose_threads(struct speedscope *sp, const struct export_scope *scope)
{
	const struct snapshot *s = sp->s;
	struct snapshot_thread *chosen = xcalloc(s->nthreads ? s->nthreads : 1, sizeof(*chosen));

	idmap_init(&sp->profile_of);
	for (size_t i = 0; i < s->nthreads; i++) {
		const struct snapshot_thread *t = &s->threads[i];

		if (!s->nodes[t->root].total ||
		    (scope->thread && thread_key(scope->thread) != thread_key(t)) ||
		    idmap_get(&sp->profile_of, thread_key(t)) != IDMAP_MISSING)
			continue;
		idmap_put(&sp->profile_of, thread_key(t), (uint32_t)sp->nthreads);
		chosen[sp->nthreads++] = *t;
	}
	sp->threads = chosen;
	sp->samples = xcalloc(sp->nthreads ? sp->nthreads : 1, sizeof(*sp->samples));
}

static void speedscope_free(struct speedscope *sp)
{
	for (size_t i = 0; i < sp->nthreads; i++) {
		free(sp->samples[i].stacks);
		free(sp->samples[i].weights);
	}
	for (size_t i = 0; i < sp->nframes; i++) {
		free(sp->frames[i].name);
		free(sp->frames[i].module);
	}
	free(sp->samples);
	free((void *)sp->threads);
	free(sp->frames);
	free(sp->frame_of);
	idmap_free(&sp->profile_of);
}

int export_speedscope(FILE *out, const struct snapshot *s, const struct export_scope *scope,
		      const struct export_timeline *timeline)
{
	struct speedscope sp = { .s = s };

	choose_threads(&sp, scope);
	unit_of(&sp);
	if (!timeline || !timeline->count)
		add_stretch(&sp, s);
	for (size_t i = 0; timeline && i < timeline->count; i++) {
		struct snapshot *part = timeline->stretch(timeline->arg, i);

		if (part)
			add_stretch(&sp, part);
		snapshot_unref(part);
	}
	write_file(out, &sp);
	speedscope_free(&sp);
	return ferror(out) ? -(errno ? errno : EIO) : 0;
}
