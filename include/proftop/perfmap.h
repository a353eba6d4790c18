/* perfmap.h — symbols a JIT compiler publishes in /tmp/perf-PID.map.
 *
 * The file is the convention perf established: one line per compiled function, "START SIZE name",
 * START and SIZE in hex (with or without 0x), the name the rest of the line. JITs append to it as
 * they compile, so a struct perfmap rereads only what was appended, and starts over when the file
 * was replaced or shrank. A later line for the same START wins. Names are interned in the pool the
 * caller provides, so they stay valid after the perfmap is refreshed or freed.
 *
 * The file is trusted only when the target process's uid owns it: /tmp is world-writable, and
 * anyone could otherwise put names into someone else's profile. Not thread-safe. */
#ifndef PROFTOP_PERFMAP_H
#define PROFTOP_PERFMAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct strpool;

/* How long a perf map is trusted before refresh looks at the file again. */
#define PERFMAP_RECHECK_NS	(100 * 1000 * 1000ull)

struct perfmap_entry {
	uint64_t start;
	uint64_t size;		/* never 0; start + size does not overflow */
	const char *name;	/* not NUL-terminated: name_len bytes, never 0 */
	size_t name_len;
};

/* Parse one line (len bytes, without its newline; a trailing '\r' is ignored). out->name points
 * into line. Returns 0 or -EINVAL for anything else, which callers skip. Pure. */
int perfmap_parse_line(const char *line, size_t len, struct perfmap_entry *out);

struct perfmap;

struct perfmap *perfmap_new(struct strpool *names);
void perfmap_free(struct perfmap *map);

/* Parse buf as whole lines appended to the file and add them. Returns the number of bytes up to
 * and including the last newline; an unterminated tail is added too but not counted, so the next
 * call sees it again once the writer has finished it. */
size_t perfmap_parse(struct perfmap *map, const char *buf, size_t len);
/* The function holding addr, or NULL. */
const char *perfmap_lookup(const struct perfmap *map, uint64_t addr);
size_t perfmap_count(const struct perfmap *map);

/* Bring map up to date with pid's perf map file (/tmp/perf-PID.map, or the one inside pid's mount
 * namespace under its namespace pid), looking at the file at most once per PERFMAP_RECHECK_NS.
 * Returns 0 (also when nothing changed) or -errno; a failure keeps what was already known. */
int perfmap_refresh(struct perfmap *map, pid_t pid, uint64_t now_ns);
/* The file the last refresh read, or failed on (when it returned an error other than -ENOENT, the
 * file it could not use); "" before the first refresh. */
const char *perfmap_path(const struct perfmap *map);

#endif
