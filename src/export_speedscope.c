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
 * one stretch.
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

struct speedscope {
	FILE *out;
	const struct snapshot *s;      /* the snapshot written: its threads, sites and unit */
	const struct snapshot *const *parts; /* the stretches in time order (or s alone) */
	size_t nparts;
	struct idmap *thread_at;       /* per part: pid << 32 | tid → its thread's index */
	const struct snapshot *names;  /* the part with the most functions: it names them all */
	size_t nfuncs;                 /* its functions (at least the root) */
	uint32_t *frame_of;            /* per function id: its frame, NO_FRAME when on no stack */
	uint32_t nframes;
	uint64_t *weights;             /* the profile being written's */
	size_t nweights, weights_cap;
};

static uint64_t thread_key(const struct snapshot_thread *t)
{
	return (uint64_t)(uint32_t)t->pid << 32 | (uint32_t)t->tid;
}

/* The tree of thread t in part p (SNAPSHOT_NO_NODE when it has no samples there). */
static uint32_t root_in(const struct speedscope *sp, size_t p, const struct snapshot_thread *t)
{
	const struct snapshot *part = sp->parts[p];
	uint32_t at = idmap_get(&sp->thread_at[p], thread_key(t));

	if (at == IDMAP_MISSING || !part->nodes[part->threads[at].root].total)
		return SNAPSHOT_NO_NODE;
	return part->threads[at].root;
}

static void index_threads(struct speedscope *sp)
{
	sp->thread_at = xcalloc(sp->nparts, sizeof(*sp->thread_at));
	sp->names = sp->s;
	for (size_t p = 0; p < sp->nparts; p++) {
		const struct snapshot *part = sp->parts[p];

		idmap_init(&sp->thread_at[p]);
		for (size_t i = 0; i < part->nthreads; i++)
			idmap_put(&sp->thread_at[p], thread_key(&part->threads[i]), (uint32_t)i);
		if (part->nfuncs > sp->names->nfuncs)
			sp->names = part;
	}
	sp->nfuncs = sp->names->nfuncs ? sp->names->nfuncs : 1;
}

/* The threads written: the scope's, or every thread of the snapshot with samples. */
static size_t scope_threads(const struct snapshot *s, const struct export_scope *scope,
			    const struct snapshot_thread **first)
{
	*first = scope->thread ? scope->thread : s->threads;
	return scope->thread ? 1 : s->nthreads;
}

/* Give every function on a stack of the threads' trees a frame, in function id order. */
static void number_frames(struct speedscope *sp, const struct snapshot_thread *threads,
			  size_t nthreads)
{
	size_t nfuncs = sp->nfuncs;

	sp->frame_of = xmalloc(nfuncs * sizeof(*sp->frame_of));
	memset(sp->frame_of, 0xff, nfuncs * sizeof(*sp->frame_of));
	for (size_t t = 0; t < nthreads; t++) {
		for (size_t p = 0; p < sp->nparts; p++) {
			const struct snapshot *part = sp->parts[p];
			uint32_t root = root_in(sp, p, &threads[t]);
			struct snapshot_walk w = { .nodes = part->nodes, .unordered = true };
			struct snapshot_walk_step step;

			if (root == SNAPSHOT_NO_NODE)
				continue;
			if (part->nodes[root].self)
				sp->frame_of[SNAPSHOT_ROOT_FUNC] = 0;
			snapshot_walk_begin(&w, root, false);
			while (snapshot_walk_next(&w, &step))
				if (part->nodes[step.node].func < nfuncs)
					sp->frame_of[part->nodes[step.node].func] = 0;
			snapshot_walk_end(&w);
		}
	}
	for (size_t f = 0; f < nfuncs; f++)
		if (sp->frame_of[f] != NO_FRAME)
			sp->frame_of[f] = sp->nframes++;
}

/* Per function, its site with a line at the lowest address (NULL: none). */
static const struct snapshot_site **first_lines(const struct snapshot *s, size_t nfuncs)
{
	const struct snapshot_site **first = xcalloc(nfuncs ? nfuncs : 1, sizeof(*first));

	for (size_t i = 0; i < s->nsites; i++) {
		const struct snapshot_site *site = &s->sites[i];

		if (site->func >= nfuncs || !site->line || !site->file ||
		    site->addr == SNAPSHOT_SITE_OTHER)
			continue;
		if (!first[site->func] || site->addr < first[site->func]->addr)
			first[site->func] = site;
	}
	return first;
}

static void write_frames(struct speedscope *sp)
{
	const struct snapshot *names = sp->names;
	const struct snapshot_site **first = first_lines(sp->s, names->nfuncs);
	bool comma = false;

	fputs("\"shared\":{\"frames\":[", sp->out);
	for (size_t f = 0; f < sp->nfuncs; f++) {
		const struct snapshot_func *func = f < names->nfuncs ? &names->funcs[f] : NULL;

		if (sp->frame_of[f] == NO_FRAME)
			continue;
		fputs(comma ? ",\n{\"name\":" : "\n{\"name\":", sp->out);
		comma = true;
		json_write_string(sp->out, f != SNAPSHOT_ROOT_FUNC && func && *func->name
						   ? func->name : "[unknown]");
		if (f != SNAPSHOT_ROOT_FUNC && first[f]) {
			fputs(",\"file\":", sp->out);
			json_write_string(sp->out, first[f]->file);
			fprintf(sp->out, ",\"line\":%u", first[f]->line);
		} else if (f != SNAPSHOT_ROOT_FUNC && func && func->module &&
			   strcmp(func->module, "[unknown]")) {
			fputs(",\"file\":", sp->out);
			json_write_string(sp->out, func->module);
		}
		putc('}', sp->out);
	}
	fputs("]},\n", sp->out);
	free(first);
}

/* What the weights are in, and how a count becomes a weight: count x 1e9 / freq nanoseconds,
 * or the count itself (*per_second 0). */
static const char *unit_of(const struct snapshot *s, unsigned *per_second)
{
	*per_second = 0;
	if (snapshot_allocations(s))
		return snapshot_bytes(s) ? "bytes" : "none";
	if (snapshot_coverage(s) || !s->freq)
		return "none";
	*per_second = s->freq;
	return "nanoseconds";
}

static uint64_t weight_of(uint64_t count, unsigned per_second)
{
	if (!per_second)
		return count;
	return (uint64_t)(((unsigned __int128)count * 1000000000u + per_second / 2) / per_second);
}

/* One sample: the frames of path (len nodes of part, outermost first), and its weight. */
static void write_sample(struct speedscope *sp, const struct snapshot *part, const uint32_t *path,
			 size_t len, uint64_t weight)
{
	putc(sp->nweights ? ',' : '[', sp->out);
	putc('[', sp->out);
	for (size_t i = 0; i < len; i++)
		fprintf(sp->out, i ? ",%u" : "%u", sp->frame_of[part->nodes[path[i]].func]);
	putc(']', sp->out);
	xgrow((void **)&sp->weights, &sp->weights_cap, sp->nweights + 1, sizeof(*sp->weights));
	sp->weights[sp->nweights++] = weight;
}

/* The stacks of thread t's tree under root in part, in the walk's order. */
static void write_stretch(struct speedscope *sp, size_t p, const struct snapshot_thread *t,
			  uint32_t root, unsigned per_second)
{
	const struct snapshot *part = sp->parts[p];
	struct export_scope scope = { root, t };
	struct snapshot_walk w;
	struct snapshot_walk_step step;

	if (part->nodes[root].self)
		write_sample(sp, part, &root, 1, weight_of(part->nodes[root].self, per_second));
	export_walk_begin(&w, part, &scope, NULL, NULL);
	while (snapshot_walk_next(&w, &step)) {
		const uint32_t *path;
		size_t len;

		if (!part->nodes[step.node].self)
			continue;
		path = snapshot_walk_path(&w, &len);
		write_sample(sp, part, path, len, weight_of(part->nodes[step.node].self, per_second));
	}
	snapshot_walk_end(&w);
}

static void write_profile_name(FILE *out, const struct snapshot *s, const struct snapshot_thread *t)
{
	char *name = xasprintf("%s (%s %d)", t->comm && *t->comm ? t->comm : "[unknown]",
			       s->by_process ? "pid" : "tid", (int)(s->by_process ? t->pid : t->tid));

	json_write_string(out, name);
	free(name);
}

static void write_profile(struct speedscope *sp, const struct snapshot_thread *t)
{
	unsigned per_second;
	const char *unit = unit_of(sp->s, &per_second);
	uint64_t end = 0;

	fputs("{\"type\":\"sampled\",\"name\":", sp->out);
	write_profile_name(sp->out, sp->s, t);
	fprintf(sp->out, ",\"unit\":\"%s\",\"startValue\":0,\n\"samples\":", unit);
	sp->nweights = 0;
	for (size_t p = 0; p < sp->nparts; p++) {
		uint32_t root = root_in(sp, p, t);

		if (root != SNAPSHOT_NO_NODE)
			write_stretch(sp, p, t, root, per_second);
	}
	fputs(sp->nweights ? "],\n\"weights\":[" : "[],\n\"weights\":[", sp->out);
	for (size_t i = 0; i < sp->nweights; i++) {
		fprintf(sp->out, i ? ",%llu" : "%llu", (unsigned long long)sp->weights[i]);
		end += sp->weights[i];
	}
	fprintf(sp->out, "],\"endValue\":%llu}", (unsigned long long)end);
}

/* The threads with samples in the snapshot, and the heaviest's index among them: the profile
 * speedscope shows first. */
static size_t count_profiles(const struct snapshot *s, const struct snapshot_thread *threads,
			     size_t nthreads, size_t *heaviest)
{
	size_t n = 0;
	uint64_t most = 0;

	*heaviest = 0;
	for (size_t t = 0; t < nthreads; t++) {
		uint64_t total = s->nodes[threads[t].root].total;

		if (!total)
			continue;
		if (total > most) {
			most = total;
			*heaviest = n;
		}
		n++;
	}
	return n;
}

static void write_file(struct speedscope *sp, const struct snapshot_thread *threads,
		       size_t nthreads)
{
	size_t heaviest;
	bool comma = false;

	count_profiles(sp->s, threads, nthreads, &heaviest);
	fputs("{\"$schema\":\"" SPEEDSCOPE_SCHEMA "\",\n", sp->out);
	fputs("\"exporter\":\"proftop@" PROFTOP_VERSION "\",\n\"name\":", sp->out);
	json_write_string(sp->out, snapshot_kind(sp->s));
	fprintf(sp->out, ",\n\"activeProfileIndex\":%zu,\n", heaviest);
	write_frames(sp);
	fputs("\"profiles\":[", sp->out);
	for (size_t t = 0; t < nthreads; t++) {
		if (!sp->s->nodes[threads[t].root].total)
			continue;
		fputs(comma ? ",\n" : "\n", sp->out);
		comma = true;
		write_profile(sp, &threads[t]);
	}
	fputs("]}\n", sp->out);
}

int export_speedscope(FILE *out, const struct snapshot *s, const struct export_scope *scope,
		      const struct export_timeline *timeline)
{
	const struct snapshot *const whole[1] = { s };
	struct speedscope sp = { .out = out, .s = s, .parts = whole, .nparts = 1 };
	const struct snapshot_thread *threads;
	size_t nthreads = scope_threads(s, scope, &threads);

	if (timeline && timeline->count) {
		sp.parts = (const struct snapshot *const *)timeline->stretches;
		sp.nparts = timeline->count;
	}
	index_threads(&sp);
	number_frames(&sp, threads, nthreads);
	write_file(&sp, threads, nthreads);
	for (size_t p = 0; p < sp.nparts; p++)
		idmap_free(&sp.thread_at[p]);
	free(sp.thread_at);
	free(sp.frame_of);
	free(sp.weights);
	return ferror(out) ? -(errno ? errno : EIO) : 0;
}
