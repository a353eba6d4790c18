/* maps.h — the address spaces of the processes a session sees.
 *
 * For each pid a sorted array of non-overlapping mappings, fed by /proc/PID/maps and by the
 * kernel's MMAP2/FORK/exec/EXIT records. Inserting a mapping replaces whatever it overlaps (the
 * kernel did the same when the process called mmap), splitting mappings it covers only in part.
 *
 * Paths are interned by the maps and live until maps_free(), so a mapping can be copied freely.
 * Each mapping carries one opaque cookie for its user (the symbolizer caches the module there);
 * the maps copy it along when they split or clone a mapping and never look at it. Not
 * thread-safe. */
#ifndef PROFTOP_MAPS_H
#define PROFTOP_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* How long a pid's /proc/PID/maps is trusted before an unknown address may read it again. */
#define MAPS_RELOAD_NS	(100 * 1000 * 1000ull)

struct mapping {
	uint64_t start;
	uint64_t end;		/* exclusive */
	uint64_t pgoff;		/* file offset that start maps */
	uint64_t ino;		/* 0 when unknown */
	uint32_t maj, min;	/* device of the file; meaningful only when ino is known */
	uint32_t prot;		/* PROT_READ | PROT_WRITE | PROT_EXEC */
	const char *path;	/* "" when anonymous; as the kernel printed it, " (deleted)" and all */
	void *cookie;		/* the user's; NULL in a new mapping */
};

struct maps;

struct maps *maps_new(void);
void maps_free(struct maps *maps);

/* pid now maps m->path at [m->start, m->end); m->path is copied, m->cookie kept. An empty or
 * inverted range is ignored. */
void maps_insert(struct maps *maps, pid_t pid, const struct mapping *m);
/* child's address space becomes a copy of parent's (an empty one when parent is unknown). */
void maps_fork(struct maps *maps, pid_t parent, pid_t child);
/* pid's mappings are gone; the next unknown address may read /proc/PID/maps at once. */
void maps_exec(struct maps *maps, pid_t pid);
void maps_exit(struct maps *maps, pid_t pid);

/* Replace pid's mappings with /proc/PID/maps as of now_ns. Even when that fails (the process is
 * gone) the attempt is remembered for maps_reload_due(). Returns 0 or -errno. */
int maps_load_proc(struct maps *maps, pid_t pid, uint64_t now_ns);
/* The same from file, read to its end: text in /proc/PID/maps's form (lines that do not parse,
 * or that start below the end of the line before, are dropped). Returns 0 or -errno of a read
 * error, which keeps the old maps. */
int maps_load_file(struct maps *maps, pid_t pid, FILE *file, uint64_t now_ns);
/* Whether reading /proc/PID/maps is allowed at now_ns: never read, or MAPS_RELOAD_NS since the
 * last attempt. */
bool maps_reload_due(const struct maps *maps, pid_t pid, uint64_t now_ns);

/* The mapping of pid holding addr, or NULL. The pointer is valid until the next change to pid's
 * maps; only its cookie may be written through it. */
struct mapping *maps_find(struct maps *maps, pid_t pid, uint64_t addr);
/* All of pid's mappings in address order (NULL and 0 when pid is unknown). */
const struct mapping *maps_list(const struct maps *maps, pid_t pid, size_t *count);

/* Parse one /proc/PID/maps line into *out; out->path points into line, whose newline (if any) is
 * cut off. Returns 0 or -EINVAL. */
int maps_parse_line(char *line, struct mapping *out);

#endif
