/* perfmap.h — symbols a JIT compiler publishes in /tmp/perf-PID.map.
 *
 * The file is the convention perf established: one line per compiled function, "START SIZE name",
 * START and SIZE in hex (with or without 0x), the name the rest of the line. JITs append to it as
 * they compile, so a struct perfmap rereads only what was appended, and starts over when the file
 * was replaced or shrank. A later line for the same START wins. Names are interned in the pool the
 * caller provides, so they stay valid after the perfmap is refreshed or freed.
 *
 * The file is trusted only when the target process's uid owns it: /tmp is world-writable, and
 * anyone could otherwise put names into someone else's profile. Not thread-safe.
 *
 * Limits. The file is the target's to write, and may be huge or hostile; a map costs at most
 * about 100 MiB however large it is: at most PERFMAP_ENTRIES_MAX entries (32 bytes each: 32 MiB),
 * names adding at most PERFMAP_NAMES_MAX to the pool over the map's life (strpool_cost(): the
 * copies and their index), and a 64 KiB read buffer. A name longer than PERFMAP_NAME_MAX bytes
 * is cut there (the function is still named, by the start of its name), and only that much of a
 * line is ever held in memory. Lines that would go past the entries or the names limit are
 * skipped; a line for a start the map already has still replaces it. Both are counted.
 *
 * Time. A refresh reads until the deadline its caller gives (or PERFMAP_READ_MAX bytes), and the
 * next one goes on from there: a file that grows faster than that, or holds more, costs each
 * look no more than the deadline, one more 64 KiB chunk and merging what was read into the map. */
#ifndef PROFTOP_PERFMAP_H
#define PROFTOP_PERFMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct strpool;

/* How long a perf map is trusted before refresh looks at the file again. */
#define PERFMAP_RECHECK_NS	(100 * 1000 * 1000ull)
/* A longer name is cut to this many bytes (not inside a UTF-8 character). */
#define PERFMAP_NAME_MAX	4096u
/* How much of a line is looked at: two 64-bit hex fields and their blanks, then the name. */
#define PERFMAP_LINE_MAX	(PERFMAP_NAME_MAX + 128)
/* At most this many functions in one map. A map this full whose replaced entries, once dropped,
 * free less than an eighth of it takes no new starts. */
#define PERFMAP_ENTRIES_MAX	(1u << 20)
/* New names cost the pool at most this much per map. */
#define PERFMAP_NAMES_MAX	(64u << 20)

struct perfmap_entry {
	uint64_t start;
	uint64_t size;		/* never 0; start + size does not overflow */
	const char *name;	/* not NUL-terminated: name_len bytes, never 0 */
	size_t name_len;	/* at most PERFMAP_NAME_MAX */
	bool cut;		/* the name was longer, and cut */
};

/* Parse one line (len bytes, without its newline; a trailing '\r' is ignored). out->name points
 * into line. Returns 0 or -EINVAL for anything else, which callers skip. Pure. */
int perfmap_parse_line(const char *line, size_t len, struct perfmap_entry *out);

struct perfmap;

struct perfmap *perfmap_new(struct strpool *names);
void perfmap_free(struct perfmap *map);

/* Parse buf as whole lines appended to the file and add them. Returns the number of bytes up to
 * and including the last newline; an unterminated tail is added too but not counted, so the next
 * call sees it again once the writer has finished it. A line longer than PERFMAP_NAME_MAX and its
 * fields is added from its head, and its rest skipped, here or in the calls that follow (then
 * counted as read). */
size_t perfmap_parse(struct perfmap *map, const char *buf, size_t len);
/* The function holding addr, or NULL. */
const char *perfmap_lookup(const struct perfmap *map, uint64_t addr);
size_t perfmap_count(const struct perfmap *map);
/* Lines skipped because the map was at a limit, and names cut, since the map was made. */
size_t perfmap_skipped(const struct perfmap *map);
size_t perfmap_cut_names(const struct perfmap *map);
/* How many times an entry was added or replaced, or the entries forgotten (a file written anew),
 * since the map was made: what perfmap_lookup() answers changed only when this did. */
uint64_t perfmap_changes(const struct perfmap *map);

/* Bring map up to date with pid's perf map file (/tmp/perf-PID.map, or the one inside pid's mount
 * namespace under its namespace pid), looking at the file at most once per PERFMAP_RECHECK_NS.
 * What was appended since the last look is read, or all of it when the file is a new one (another
 * inode, shorter, or no longer holding what was read); reading stops at the first chunk that ends
 * at or past deadline_ns (util_now_ns()'s clock), and the next look goes on from there. Returns 0
 * (also when nothing changed) or -errno; a failure keeps what was already known. */
int perfmap_refresh(struct perfmap *map, pid_t pid, uint64_t now_ns, uint64_t deadline_ns);
/* The process's owner is read from /proc at each look; once it is gone (reaped), the owner last
 * read is still the one the file must belong to, and /tmp/perf-PID.map the file: a JIT writes its
 * map as it ends (Java's -XX:+DumpPerfMapAtExit), which a look after the end still reads. */
/* A file the process has mapped, named as the process sees it (/proc/PID/maps, an MMAP record).
 * When its last component is "jit-N.dump", N the process's own pid, it is the process's jitdump
 * wherever it is (V8's --perf-prof writes it into the working directory and maps it so that
 * perf finds it, as perf does: by that mapping): refreshes read it, inside the process's mount
 * namespace and owned by its user (or, once the process is gone, at that path here), when /tmp
 * holds none. Another pid's dump is refused once the map knows the process (a child a JIT forked
 * maps its parent's). Whether the map wants an offer: perfmap_wants_dump() (it has read no
 * jitdump, and was offered none that can be the process's). */
void perfmap_offer_dump(struct perfmap *map, const char *path);
bool perfmap_wants_dump(const struct perfmap *map);
/* Whether path's last component has the form of a jitdump's name (cheap: the caller's filter). */
bool perfmap_dump_name(const char *path);
/* Would perfmap_refresh() at now_ns look at the file? */
bool perfmap_due(const struct perfmap *map, uint64_t now_ns);
/* Make the next perfmap_refresh() look at the file, however recent the last look. */
void perfmap_expire(struct perfmap *map);
/* When (now_ns of that refresh) refreshes began to stop before the end of the file, for want of
 * time: the map has been this long behind its file. 0 when the last refresh read to the end. */
uint64_t perfmap_behind_since(const struct perfmap *map);
/* The file the last refresh read, or failed on (when it returned an error other than -ENOENT, the
 * file it could not use); "" before the first refresh. */
const char *perfmap_path(const struct perfmap *map);

/* What the owner check needs of the target, from /proc/PID/status: the "Uid:" line's real and
 * effective uids, and the last pid of the "NSpid:" line, the target's in its own pid namespace
 * (its perf map is named by that one). */
struct perfmap_owner {
	uid_t uid[2];
	bool has_uid;		/* a Uid line was read */
	pid_t nspid;
};

/* Take what one line of /proc/PID/status (NUL-terminated, its newline kept or not) says into
 * *owner; anything else leaves it as it was: numbers are decimal and fit (a uid below
 * (uid_t)-1, a pid in 1..INT32_MAX), as the kernel writes them. Pure. */
void perfmap_status_line(const char *line, struct perfmap_owner *owner);

#endif
