/* annotate.c — a function's samples per source line, and the lines' text (see annotate.h).
 *
 * Sites are in the snapshot in the order they were first seen, so one pass picks a function's,
 * and a sort by (file, line) groups them. Files are compared by pointer first: the profile
 * interns them, so equal names are one pointer unless the snapshot came from elsewhere, when
 * the sort's strcmp still groups them. */
#include "proftop/annotate.h"

#include "proftop/disasm.h"
#include "proftop/snapshot.h"
#include "proftop/util.h"
#include "proftop/view_name.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A source file bigger than this is not read. */
#define SOURCE_MAX (16u << 20)

static const char inlined_suffix[] = " (inlined)";

static bool name_matches(const char *name, const char *want)
{
	size_t len = strlen(want);

	return !strncmp(name, want, len) && (!name[len] || !strcmp(name + len, inlined_suffix));
}

/* A name as the tables show it, whole or shortened (--names): "ns::crunch<double>" finds
 * "double ns::crunch<double>(double, unsigned long)", and every overload of it. */
static bool func_matches(const char *name, const char *want)
{
	char buf[8192];

	for (int n = VIEW_NAMES_FULL; n < VIEW_NAMES_COUNT; n++)
		if (name_matches(view_name(name, (enum view_names)n, buf, sizeof(buf)), want))
			return true;
	return false;
}

size_t annotate_find(const struct snapshot *s, const char *name, uint32_t *out, size_t max)
{
	size_t n = 0;

	for (size_t f = 1; f < s->nfuncs; f++) {
		size_t at;

		if (!func_matches(s->funcs[f].name, name))
			continue;
		/* Insertion by total, hottest first: few functions share a name. */
		for (at = n < max ? n : max; at > 0 && s->func_total[out[at - 1]] < s->func_total[f]; at--)
			if (at < max)
				out[at] = out[at - 1];
		if (at < max)
			out[at] = (uint32_t)f;
		n++;
	}
	return n;
}

int annotate_compare_position(const char *file_a, unsigned line_a, const char *file_b,
			      unsigned line_b)
{
	int c;

	if (!file_a || !file_b)
		return (file_a == NULL) - (file_b == NULL);
	c = file_a == file_b ? 0 : strcmp(file_a, file_b);
	if (c)
		return c;
	return (line_a > line_b) - (line_a < line_b);
}

static int compare_lines(const void *pa, const void *pb)
{
	const struct annotate_line *a = pa, *b = pb;

	return annotate_compare_position(a->file, a->line, b->file, b->line);
}

/* Sort a->lines[0..n) and merge the runs of one line into one row. */
static void sort_and_merge(struct annotation *out, size_t n)
{
	out->nlines = 0;
	if (!n)
		return;
	qsort(out->lines, n, sizeof(*out->lines), compare_lines);
	out->nlines = 1;
	for (size_t i = 1; i < n; i++) {
		struct annotate_line *last = &out->lines[out->nlines - 1];

		if (!compare_lines(last, &out->lines[i])) {
			last->self += out->lines[i].self;
			last->total += out->lines[i].total;
		} else {
			out->lines[out->nlines++] = out->lines[i];
		}
	}
}

void annotate_add_positions(struct annotation *a, const char *const *files, const unsigned *lines,
			    size_t n)
{
	size_t cap = a->nlines, count = a->nlines;

	for (size_t i = 0; i < n; i++) {
		if (!files[i])
			continue;
		xgrow((void **)&a->lines, &cap, count + 1, sizeof(*a->lines));
		a->lines[count++] = (struct annotate_line){ files[i], lines[i], 0, 0 };
	}
	sort_and_merge(a, count);
}

/* out's lines from sites ids[0..nids) of func (ids NULL: the first nids sites, those of func
 * among them), one row per (file, line), sorted. */
static void annotate_from(const struct snapshot *s, uint32_t func, const uint32_t *ids, size_t nids,
			  struct annotation *out)
{
	size_t n = 0;

	memset(out, 0, sizeof(*out));
	out->func = func;
	if (func < s->nfuncs) {
		out->self = s->func_self[func];
		out->total = s->func_total[func];
		out->no_lines = s->funcs[func].no_lines;
	}
	if (nids)
		out->lines = xmalloc(nids * sizeof(*out->lines));
	for (size_t i = 0; i < nids; i++) {
		const struct snapshot_site *site = &s->sites[ids ? ids[i] : i];

		if (!ids && site->func != func)
			continue;
		out->has_sites = true;
		/* not in a window's or a thread's samples (coverage's lines that never ran are) */
		if (!site->self && !site->total && s->mode != SAMPLE_MODE_COVERAGE)
			continue;
		out->lines[n++] = (struct annotate_line){ site->line ? site->file : NULL,
							  site->file ? site->line : 0, site->self,
							  site->total };
		out->has_lines |= site->file && site->line;
	}
	sort_and_merge(out, n);
}

void annotate_function(const struct snapshot *s, uint32_t func, struct annotation *out)
{
	annotate_from(s, func, NULL, s->nsites, out);
}

size_t *annotate_index(const struct snapshot *s, uint32_t **ids)
{
	size_t *first = xcalloc(s->nfuncs + 1, sizeof(*first)), *at;

	*ids = xmalloc((s->nsites ? s->nsites : 1) * sizeof(**ids));
	for (size_t i = 0; i < s->nsites; i++)
		if (s->sites[i].func < s->nfuncs)
			first[s->sites[i].func + 1]++;
	for (size_t f = 0; f < s->nfuncs; f++)
		first[f + 1] += first[f];
	at = xmalloc((s->nfuncs + 1) * sizeof(*at));
	memcpy(at, first, (s->nfuncs + 1) * sizeof(*at));
	for (size_t i = 0; i < s->nsites; i++)
		if (s->sites[i].func < s->nfuncs)
			(*ids)[at[s->sites[i].func]++] = (uint32_t)i;
	free(at);
	return first;
}

void annotate_indexed(const struct snapshot *s, uint32_t func, const size_t *first,
		      const uint32_t *ids, struct annotation *out)
{
	annotate_from(s, func, ids + first[func], first[func + 1] - first[func], out);
}

void annotation_free(struct annotation *a)
{
	free(a->lines);
	a->lines = NULL;
	a->nlines = 0;
}

size_t annotate_hottest(const struct annotation *a)
{
	size_t best = 0;

	for (size_t i = 1; i < a->nlines; i++)
		if (a->lines[i].self > a->lines[best].self ||
		    (a->lines[i].self == a->lines[best].self && a->lines[i].total > a->lines[best].total))
			best = i;
	return best;
}

const char *annotate_why_no_lines(const struct annotation *a)
{
	if (a->has_lines)
		return NULL;
	if (!a->has_sites)
		return "no addresses were recorded for it (a saved profile, or --no-lines)";
	if (a->no_lines)
		return a->no_lines;
	return "its file has no DWARF line table, nor a debug file with one (build with -g, or "
	       "install its debug package)";
}

/* --- instructions ------------------------------------------------------------------------------ */

static int compare_insns(const void *pa, const void *pb, void *arg)
{
	const struct disasm_insn *insns = arg, *a = &insns[*(const size_t *)pa],
				 *b = &insns[*(const size_t *)pb];
	int c = annotate_compare_position(a->file, a->line, b->file, b->line);

	return c ? c : (a->addr > b->addr) - (a->addr < b->addr);
}

static int compare_ranges(const void *pa, const void *pb)
{
	const struct disasm_range *a = pa, *b = pb;

	return (a->start > b->start) - (a->start < b->start);
}

/* The index of the range of ranges[0..n) (by start, not overlapping) that holds addr; n if none. */
static size_t range_of(const struct disasm_range *ranges, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ranges[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && addr < ranges[lo - 1].end ? lo - 1 : n;
}

/* The functions of path (as the profile saw them) that func's samples were in, by start, into
 * *out (malloc'd); returns how many. An inlined function's code is in those. */
static size_t inlined_containers(const struct snapshot *s, uint32_t func, const char *path,
				 struct disasm_range **out)
{
	struct disasm_range *all = xmalloc(s->nfuncs * sizeof(*all));
	bool *used;
	size_t n = 0, kept = 0;

	for (size_t f = 1; f < s->nfuncs; f++)
		if (s->funcs[f].path && !strcmp(s->funcs[f].path, path) &&
		    s->funcs[f].code_end > s->funcs[f].code_start)
			all[n++] = (struct disasm_range){ s->funcs[f].code_start, s->funcs[f].code_end };
	qsort(all, n, sizeof(*all), compare_ranges);
	used = xcalloc(n + 1, sizeof(*used));
	for (size_t i = 0; i < s->nsites; i++)
		if (s->sites[i].func == func && s->sites[i].addr != SNAPSHOT_SITE_OTHER)
			used[range_of(all, n, s->sites[i].addr)] = true;
	for (size_t i = 0; i < n; i++)
		if (used[i])
			all[kept++] = all[i];
	free(used);
	*out = all;
	return kept;
}

/* An inlined function's code: its copies in the functions its samples were in. */
static int inlined_code_load(struct annotate_code *code, struct disasm *d, const struct snapshot *s,
			     uint32_t func, const char **why)
{
	const char *path = annotate_binary(s, func), *shown = s->funcs[func].name;
	size_t len = strlen(shown), n = 0;
	struct disasm_range *ranges = NULL;
	char *name;
	int err;

	if (path)
		n = inlined_containers(s, func, path, &ranges);
	if (!n) {
		free(ranges);
		*why = "no code address is known for it (a saved profile, or code without symbols)";
		return -ENOENT;
	}
	if (len >= sizeof(inlined_suffix) - 1 &&
	    !strcmp(shown + len - (sizeof(inlined_suffix) - 1), inlined_suffix))
		len -= sizeof(inlined_suffix) - 1;
	name = xasprintf("%.*s", (int)len, shown);
	err = disasm_inlined(d, path, name, ranges, n, &code->insns, &code->n, why);
	free(name);
	free(ranges);
	return err;
}

int annotate_code_load(struct annotate_code *code, struct disasm *d, const struct snapshot *s,
		       uint32_t func, const char **why)
{
	const struct snapshot_func *f = func < s->nfuncs ? &s->funcs[func] : NULL;
	int err;

	memset(code, 0, sizeof(*code));
	if (f && f->inlined && !f->path)
		err = inlined_code_load(code, d, s, func, why);
	else if (!f || !f->path) {
		*why = "no code address is known for it (a saved profile, or JIT or stripped code)";
		return -ENOENT;
	} else
		err = disasm_function(d, f->path, f->code_start, f->code_end, &code->insns,
				      &code->n, why);
	if (err)
		return err;
	code->order = xmalloc(code->n * sizeof(*code->order));
	for (size_t i = 0; i < code->n; i++)
		code->order[i] = i;
	qsort_r(code->order, code->n, sizeof(*code->order), compare_insns, code->insns);
	return 0;
}

void annotate_code_free(struct annotate_code *code)
{
	free(code->insns);
	free(code->order);
	free(code->sites);
	memset(code, 0, sizeof(*code));
}

void annotate_code_positions(const struct annotate_code *code, struct annotation *a)
{
	const char **files = xmalloc((code->n ? code->n : 1) * sizeof(*files));
	unsigned *lines = xmalloc((code->n ? code->n : 1) * sizeof(*lines));

	for (size_t i = 0; i < code->n; i++) {
		files[i] = code->insns[i].file;
		lines[i] = code->insns[i].line;
	}
	annotate_add_positions(a, files, lines, code->n);
	free(files);
	free(lines);
}

static int compare_site_addrs(const void *pa, const void *pb)
{
	const struct snapshot_site *a = pa, *b = pb;

	return (a->addr > b->addr) - (a->addr < b->addr);
}

void annotate_code_count(struct annotate_code *code, const struct snapshot *s, uint32_t func)
{
	code->nsites = 0;
	for (size_t i = 0; i < s->nsites; i++) {
		if (s->sites[i].func != func)
			continue;
		xgrow((void **)&code->sites, &code->sites_cap, code->nsites + 1, sizeof(*code->sites));
		code->sites[code->nsites++] = s->sites[i];
	}
	qsort(code->sites, code->nsites, sizeof(*code->sites), compare_site_addrs);
}

void annotate_code_samples(const struct annotate_code *code, size_t i, uint64_t *self,
			   uint64_t *total)
{
	uint64_t from = code->insns[i].addr, to = from + code->insns[i].size;
	size_t lo = 0, hi = code->nsites;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (code->sites[mid].addr < from)
			lo = mid + 1;
		else
			hi = mid;
	}
	*self = *total = 0;
	for (; lo < code->nsites && code->sites[lo].addr < to; lo++) {
		*self += code->sites[lo].self;
		*total += code->sites[lo].total;
	}
}

size_t annotate_code_upto(const struct annotate_code *code, size_t from, const struct annotate_line *l)
{
	while (from < code->n) {
		const struct disasm_insn *insn = &code->insns[code->order[from]];

		if (l && annotate_compare_position(insn->file, insn->line, l->file, l->line) > 0)
			break;
		from++;
	}
	return from;
}

/* --- who reads them ---------------------------------------------------------------------------- */

/* Add owner to out unless it is there already or out is full. */
static void readers_add(struct annotate_readers *out, const struct snapshot_thread *t)
{
	if (t->owner != SNAPSHOT_OWNER_KNOWN) {
		out->unknown = true;
		return;
	}
	for (size_t i = 0; i < out->n; i++)
		if (out->v[i].uid == t->uid && out->v[i].gid == t->gid)
			return;
	if (out->n < ANNOTATE_READERS_MAX)
		out->v[out->n++] = (struct asuser){ t->uid, t->gid };
}

void annotate_readers(const struct snapshot *s, uint32_t func, struct annotate_readers *out)
{
	uint32_t *thread_of;
	bool *seen;

	memset(out, 0, sizeof(*out));
	out->self = s->ownerless;
	if (out->self || !s->nthreads)
		return;
	/* Each node's thread, from its parent's: a parent's index is below its children's. */
	thread_of = xmalloc(s->nnodes * sizeof(*thread_of));
	seen = xcalloc(s->nthreads, sizeof(*seen));
	for (size_t n = 0; n < s->nnodes; n++)
		thread_of[n] = UINT32_MAX;
	for (size_t t = 0; t < s->nthreads; t++)
		if (s->threads[t].root < s->nnodes)
			thread_of[s->threads[t].root] = (uint32_t)t;
	for (size_t n = 0; n < s->nnodes; n++) {
		uint32_t parent = s->nodes[n].parent, t;

		if (parent != SNAPSHOT_NO_NODE && parent < n)
			thread_of[n] = thread_of[parent];
		t = thread_of[n];
		if (s->nodes[n].func == func && t != UINT32_MAX && !seen[t]) {
			seen[t] = true;
			readers_add(out, &s->threads[t]);
		}
	}
	/* A coverage run's function that never ran is in every process probed for its module:
	 * their owners read it. */
	for (size_t t = 0; s->mode == SAMPLE_MODE_COVERAGE && !out->n && !out->unknown &&
			   t < s->nthreads; t++)
		readers_add(out, &s->threads[t]);
	free(thread_of);
	free(seen);
}

/* --- source text ------------------------------------------------------------------------------ */

struct source_file {
	char *path;
	bool self;         /* read as proftop; else as `as` */
	struct asuser as;
	char *text;        /* NULL: unreadable, see why */
	const char *why;
	char *why_text;    /* why, when it is made for this file */
	struct timespec mtime;
	size_t *starts;    /* offset of each line in text */
	size_t nlines;
	const char *binary; /* the binary last compared with (a snapshot's string) */
	char *newer;       /* NULL, or why the text is not shown: it is newer than binary */
};

struct annotate_sources {
	struct source_file *files;
	size_t n, cap;
};

struct annotate_sources *annotate_sources_new(void)
{
	return xcalloc(1, sizeof(struct annotate_sources));
}

void annotate_sources_free(struct annotate_sources *sources)
{
	if (!sources)
		return;
	for (size_t i = 0; i < sources->n; i++) {
		free(sources->files[i].path);
		free(sources->files[i].text);
		free(sources->files[i].why_text);
		free(sources->files[i].newer);
		free(sources->files[i].starts);
	}
	free(sources->files);
	free(sources);
}

/* What opening a source file found, made as its reader (source_fd()). */
struct source_opening {
	const char *path;
	bool ran;          /* source_fd() ran: the reader's identity was taken */
	bool irregular;
	int fd;            /* or -errno */
};

/* Open o->path if it is a regular file, without opening anything else: the path comes from the
 * profiled program's debug information, and opening a device or a FIFO can act (a watchdog
 * starts, a tape rewinds, a FIFO's waiting writer wakes). */
static int source_fd(void *arg)
{
	struct source_opening *o = arg;
	struct stat st;

	o->ran = true;
	if (!stat(o->path, &st) && !S_ISREG(st.st_mode)) {
		o->irregular = true;
		return 0;
	}
	o->fd = open(o->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (o->fd < 0)
		o->fd = -errno;
	return 0;
}

/* Why f could not be opened (o: what source_fd() found, err: asuser_run()'s answer). */
static void source_why(struct source_file *f, const struct source_opening *o, int err)
{
	if (!o->ran) {
		f->why_text = xasprintf("not read: it is for a process of uid %u, and proftop cannot "
					"read files as another user (%s)", (unsigned)f->as.uid,
					strerror(-err));
	} else if (o->irregular) {
		f->why = "not a regular file";
		return;
	} else if (o->fd == -ENOENT) {
		f->why = "not on this machine";
		return;
	} else if (f->self || asuser_is_self(&f->as)) {
		f->why_text = xasprintf("cannot be opened: %s", strerror(-o->fd));
	} else {
		f->why_text = xasprintf("cannot be opened by its process's user (uid %u): %s",
					(unsigned)f->as.uid, strerror(-o->fd));
	}
	f->why = f->why_text;
}

/* The whole of a regular file of at most SOURCE_MAX bytes, NUL-terminated; NULL with f->why set
 * otherwise. Opened as f's reader could (asuser.h); what is
 * opened is read as it is. fstat() checks again what was opened, without blocking: a FIFO put
 * there in between must not hang the reader. */
static char *read_source(struct source_file *f, size_t *len)
{
	struct source_opening o = { .path = f->path, .fd = -ENOENT };
	struct stat st;
	char *text = NULL;
	size_t got = 0;
	int err = f->self ? source_fd(&o) : asuser_run(&f->as, source_fd, &o);

	if (!o.ran || o.irregular || o.fd < 0) {
		source_why(f, &o, err);
		return NULL;
	}
	if (fstat(o.fd, &st) || !S_ISREG(st.st_mode)) {
		f->why = "not a regular file";
	} else if (st.st_size > SOURCE_MAX) {
		f->why = "over 16 MiB";
	} else {
		f->mtime = st.st_mtim;
		text = xmalloc((size_t)st.st_size + 1);
		while (got < (size_t)st.st_size) {
			ssize_t r = read(o.fd, text + got, (size_t)st.st_size - got);

			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			got += (size_t)r;
		}
		text[got] = '\0';
	}
	close(o.fd);
	*len = got;
	return text;
}

size_t annotate_source_lines(char *text, size_t len, size_t **starts)
{
	size_t n = 0, cap = 0;

	*starts = NULL;
	for (size_t i = 0; i < len; i++)
		if (!text[i])
			text[i] = ' ';
	for (size_t at = 0; at < len;) {
		char *nl = memchr(text + at, '\n', len - at);

		xgrow((void **)starts, &cap, n + 1, sizeof(**starts));
		(*starts)[n++] = at;
		if (!nl)
			break;
		*nl = '\0';
		at = (size_t)(nl - text) + 1;
	}
	return n;
}

/* The file at path as reader (NULL: proftop) reads it: read on first sight. */
static struct source_file *source_open(struct annotate_sources *sources, const char *path,
				       const struct asuser *reader)
{
	struct source_file *f;
	size_t len = 0;

	for (size_t i = 0; i < sources->n; i++) {
		f = &sources->files[i];
		if (!strcmp(f->path, path) && f->self == !reader &&
		    (!reader || (f->as.uid == reader->uid && f->as.gid == reader->gid)))
			return f;
	}
	xgrow((void **)&sources->files, &sources->cap, sources->n + 1, sizeof(*sources->files));
	f = &sources->files[sources->n++];
	memset(f, 0, sizeof(*f));
	f->path = xasprintf("%s", path);
	f->self = !reader;
	if (reader)
		f->as = *reader;
	f->text = read_source(f, &len);
	if (f->text)
		f->nlines = annotate_source_lines(f->text, len, &f->starts);
	return f;
}

/* The file as the first of readers who can read it (NULL or self: as proftop); the first's
 * failure when none can, and NULL with *why set when there is nobody to read it as. */
static struct source_file *source_for(struct annotate_sources *sources, const char *path,
				      const struct annotate_readers *readers, const char **why)
{
	struct source_file *first = NULL;

	if (!readers || readers->self)
		return source_open(sources, path, NULL);
	for (size_t i = 0; i < readers->n; i++) {
		struct source_file *f = source_open(sources, path, &readers->v[i]);

		if (f->text)
			return f;
		if (!first)
			first = f;
	}
	if (!first)
		*why = "not read: the user of the processes it ran in is not known (they ended before "
		       "proftop looked)";
	return first;
}

/* Whether f was changed after binary was built (f's time is that of its first read): the lines
 * the binary's DWARF gives are then likely not the file's. Sets f->newer to say so. */
static bool source_newer(struct source_file *f, const char *binary)
{
	struct stat st;

	if (!binary)
		return false;
	if (binary == f->binary)
		return f->newer;
	f->binary = binary;
	free(f->newer);
	f->newer = NULL;
	if (stat(binary, &st) || f->mtime.tv_sec < st.st_mtim.tv_sec ||
	    (f->mtime.tv_sec == st.st_mtim.tv_sec && f->mtime.tv_nsec <= st.st_mtim.tv_nsec))
		return false;
	f->newer = xasprintf("newer than %s: it changed since the build", binary);
	return true;
}

const char *annotate_source_line(struct annotate_sources *sources, const char *file, unsigned line,
				 const char *binary, const struct annotate_readers *readers,
				 const char **why)
{
	const char *unused;
	struct source_file *f;

	if (!why)
		why = &unused;
	if (!file || !line) {
		*why = "no line information";
		return NULL;
	}
	f = source_for(sources, file, readers, why);
	if (!f)
		return NULL;
	if (!f->text) {
		*why = f->why;
		return NULL;
	}
	if (source_newer(f, binary)) {
		*why = f->newer;
		return NULL;
	}
	if (line > f->nlines) {
		*why = "no such line: the file changed since the build";
		return NULL;
	}
	return f->text + f->starts[line - 1];
}

const char *annotate_binary(const struct snapshot *s, uint32_t func)
{
	const char *module;

	if (func >= s->nfuncs)
		return NULL;
	if (s->funcs[func].path)
		return s->funcs[func].path;
	module = s->funcs[func].module;
	for (size_t f = 1; f < s->nfuncs; f++)
		if (s->funcs[f].path && !strcmp(s->funcs[f].module, module))
			return s->funcs[f].path;
	return NULL;
}
