/* libFuzzer target: the /proc/PID/maps reader (maps.c) on arbitrary bytes, then the address maps
 * it fills. The bytes are read as the file through a stream (maps_load_file(), what
 * maps_load_proc() does with the real one); what was kept must be exactly the lines that parse
 * and start at or above the end of the line kept before, in order, each as maps_parse_line() reads
 * it alone. The same lines are then inserted as the kernel's MMAP2 records would be, overlapping
 * as they come: at every boundary of every range, maps_find() must give what the last insert
 * covering that address mapped there (same path, same file offset), and nothing where none does.
 * A fork copies, an exec empties, an exit forgets.
 *
 * Seeds in corpus/fuzz_maps: this machine's /proc/self/maps of a small process (a program, its
 * libraries, [heap], [stack], [vvar], [vdso], a deleted file), and lines every field of which is
 * wrong in one way. */
#include "proftop/maps.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LINES 512

struct line {
	struct mapping m;
	char *text; /* the NUL-terminated copy m.path points into */
};

/* Every line of data that parses, as getline() would cut them (the newline kept). */
static size_t parse_lines(const uint8_t *data, size_t size, struct line *out)
{
	size_t n = 0;

	for (size_t start = 0, i = 0; i < size && n < MAX_LINES; i++) {
		if (data[i] != '\n' && i + 1 < size)
			continue;
		out[n].text = malloc(i + 1 - start + 1);
		memcpy(out[n].text, data + start, i + 1 - start);
		out[n].text[i + 1 - start] = '\0';
		start = i + 1;
		if (maps_parse_line(out[n].text, &out[n].m)) {
			free(out[n].text);
			continue;
		}
		if (out[n].m.start >= out[n].m.end || strchr(out[n].m.path, '\n') ||
		    out[n].m.path < out[n].text || out[n].m.path > out[n].text + strlen(out[n].text))
			abort();
		n++;
	}
	return n;
}

static void check_same(const struct mapping *a, const struct mapping *b)
{
	if (a->start != b->start || a->end != b->end || a->pgoff != b->pgoff || a->ino != b->ino ||
	    a->maj != b->maj || a->min != b->min || a->prot != b->prot || strcmp(a->path, b->path))
		abort();
}

/* pid's maps are what reading the file keeps: the lines in order, none starting below the end of
 * the one before. */
static void check_loaded(struct maps *maps, pid_t pid, const struct line *lines, size_t n)
{
	size_t count, k = 0;
	const struct mapping *v = maps_list(maps, pid, &count);

	for (size_t i = 0; i < n; i++) {
		if (k && lines[i].m.start < v[k - 1].end)
			continue;
		if (k >= count)
			abort();
		check_same(&v[k++], &lines[i].m);
	}
	if (k != count)
		abort();
}

/* The mapping the last insert covering addr made, or NULL. */
static const struct mapping *last_cover(const struct line *lines, size_t n, uint64_t addr)
{
	for (size_t i = n; i-- > 0;)
		if (addr >= lines[i].m.start && addr < lines[i].m.end)
			return &lines[i].m;
	return NULL;
}

static void check_find(struct maps *maps, pid_t pid, const struct line *lines, size_t n,
		       uint64_t addr)
{
	const struct mapping *want = last_cover(lines, n, addr), *got = maps_find(maps, pid, addr);

	if (!want != !got)
		abort();
	if (!got)
		return;
	if (addr < got->start || addr >= got->end || strcmp(got->path, want->path) ||
	    got->pgoff + (addr - got->start) != want->pgoff + (addr - want->start))
		abort();
}

/* Sorted, disjoint, never empty. */
static void check_sorted(struct maps *maps, pid_t pid)
{
	size_t count;
	const struct mapping *v = maps_list(maps, pid, &count);

	for (size_t i = 0; i < count; i++)
		if (v[i].start >= v[i].end || (i && v[i].start < v[i - 1].end))
			abort();
}

static void check_inserted(struct maps *maps, const struct line *lines, size_t n)
{
	for (size_t i = 0; i < n; i++)
		maps_insert(maps, 2, &lines[i].m);
	check_sorted(maps, 2);
	for (size_t i = 0; i < n; i++) {
		const struct mapping *m = &lines[i].m;

		check_find(maps, 2, lines, n, m->start);
		check_find(maps, 2, lines, n, m->start - 1);
		check_find(maps, 2, lines, n, m->end - 1);
		check_find(maps, 2, lines, n, m->end);
	}
	maps_fork(maps, 2, 3);
	for (size_t i = 0; i < n; i++)
		check_find(maps, 3, lines, n, lines[i].m.start);
	maps_exec(maps, 2);
	if (maps_find(maps, 2, n ? lines[0].m.start : 0) || !maps_reload_due(maps, 2, 1))
		abort();
	maps_exit(maps, 3);
	if (maps_find(maps, 3, n ? lines[0].m.start : 0))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct line lines[MAX_LINES];
	struct maps *maps = maps_new();
	size_t n = parse_lines(data, size, lines);
	FILE *file = size ? fmemopen((void *)data, size, "r") : NULL;

	if (file) {
		if (maps_load_file(maps, 1, file, 5) || maps_reload_due(maps, 1, 6))
			abort();
		fclose(file);
		if (n < MAX_LINES)
			check_loaded(maps, 1, lines, n);
		check_sorted(maps, 1);
	}
	check_inserted(maps, lines, n);
	for (size_t i = 0; i < n; i++)
		free(lines[i].text);
	maps_free(maps);
	return 0;
}
