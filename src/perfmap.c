/* perfmap.c — symbols a JIT compiler publishes in /tmp/perf-PID.map.
 *
 * A struct perfmap holds the entries parsed so far in an array sorted by start, with one entry per
 * start: when a JIT reuses an address the later line replaces the earlier one (each entry carries
 * the order it was read in, which breaks ties while sorting). Lookup is a binary search for the
 * last start at or below the address.
 *
 * Entries parsed since the last merge are appended unsorted after v[0..sorted); a merge sorts
 * only them and merges them into the sorted part in one pass, so a refresh that adds k entries to
 * a map of n costs k log k + n, never a sort of the whole map again.
 *
 * The file is read incrementally: `consumed` is the offset just past the last complete line, and a
 * refresh that finds the same file grown parses only from there. Whether it grew or was written
 * anew is told by its content, not its times (anyone may touch a file): the bytes just before
 * `consumed` are kept (`tail`), and a file that no longer holds them there, a different file
 * (inode), or one that shrank below `consumed` is parsed again from scratch.
 *
 * Time. A refresh reads a PERFMAP_CHUNK at a time until it reaches the end of the file, has read
 * PERFMAP_READ_MAX bytes, or passes the deadline its caller gave; the rest waits for the next
 * recheck, which goes on from there. So one look at a map costs its caller at most its deadline
 * plus a chunk's parse and a merge, whatever the file holds or however fast it grows.
 *
 * The file is the target's to write, so nothing in it decides how much memory proftop spends
 * (see perfmap.h for the limits). It is read through one PERFMAP_CHUNK buffer; a line is looked
 * at only as far as PERFMAP_LINE_MAX, and the rest of a longer one is skipped as it is read
 * (`skipping`), however long it grows. Entries and names count against the map's limits; lines
 * past them are counted in `skipped`, names cut in `cut`, for the symbolizer to tell the user. */
#include "proftop/perfmap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proftop/jitdump.h"
#include "proftop/strpool.h"
#include "proftop/util.h"

/* One refresh reads at most this much; the rest waits for the next one. */
#define PERFMAP_READ_MAX	(16u << 20)
/* The read buffer: more than PERFMAP_LINE_MAX, so a chunk always holds a line or a line's head;
 * small enough that parsing one (about half a millisecond) is a fine step for the deadline. */
#define PERFMAP_CHUNK		(64u << 10)
/* How many bytes before `consumed` say that the file still holds what was read. */
#define PERFMAP_TAIL		64

struct perfmap_sym {
	uint64_t start;
	uint64_t end;
	uint64_t seq;		/* order read in: the later line for a start wins */
	const char *name;	/* interned */
};

/* A mapped jitdump's path as the process names it: longer ones are not taken. */
#define PERFMAP_DUMP_PATH 256

struct perfmap {
	struct strpool *names;
	struct perfmap_sym *v;	/* sorted by start, starts unique (after perfmap_parse) */
	size_t n, cap;
	size_t sorted;		/* v[0..sorted) is sorted and unique; v[sorted..n) came after */
	bool full;		/* no room for new starts: v is sorted, and only replaced in place */
	uint64_t seq;
	size_t name_bytes;	/* what this map's new names cost the pool, over its life */
	size_t skipped;		/* lines left out for the limits, over the map's life */
	size_t cut;		/* names cut to PERFMAP_NAME_MAX */
	uint64_t changes;	/* entries added, replaced or forgotten, over the map's life */
	bool skipping;		/* `consumed` is inside an overlong line: skip to its newline */
	/* The file as last read. */
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	off_t consumed;
	unsigned char tail[PERFMAP_TAIL];	/* the file's tail_len bytes before `consumed` */
	size_t tail_len;
	uint64_t checked_ns;	/* last look at the file; 0: never */
	uint64_t behind_ns;	/* since when refreshes stop before the end of the file; 0: they don't */
	struct perfmap_owner owner;	/* the process's, as last read from /proc (has_uid: read) */
	/* The jitdump beside the map (/tmp/jit-PID.dump, jitdump.h): its records as last read. */
	dev_t dump_dev;
	ino_t dump_ino;
	off_t dump_consumed;	/* 0: its header not read yet */
	char dump_mapped[PERFMAP_DUMP_PATH];	/* perfmap_offer_dump()'s; "" none */
	char path[96];		/* what the last refresh read or failed on */
};

static bool perfmap_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Hex with an optional 0x; at least one digit; no overflow. */
static int perfmap_hex(const char **s, const char *end, uint64_t *out)
{
	const char *p = *s;

	if (end - p >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	return util_parse_hex(p, end, s, out);
}

/* At least one blank, then any more. */
static int perfmap_blanks(const char **s, const char *end)
{
	const char *p = *s;

	while (p < end && perfmap_blank(*p))
		p++;
	if (p == *s)
		return -EINVAL;
	*s = p;
	return 0;
}

/* A name cut to at most max bytes, not inside a UTF-8 character (whose continuation bytes are
 * 10xxxxxx; one is at most four bytes long, so anything else is not UTF-8 and cut anywhere). */
static size_t perfmap_cut(const char *name, size_t max)
{
	size_t len = max;

	while (len > max - 3 && ((unsigned char)name[len] & 0xc0) == 0x80)
		len--;
	return len;
}

int perfmap_parse_line(const char *line, size_t len, struct perfmap_entry *out)
{
	const char *p = line, *end = line + len;

	while (end > p && (end[-1] == '\r' || perfmap_blank(end[-1])))
		end--;
	while (p < end && perfmap_blank(*p))
		p++;
	if (perfmap_hex(&p, end, &out->start) || perfmap_blanks(&p, end) ||
	    perfmap_hex(&p, end, &out->size) || perfmap_blanks(&p, end))
		return -EINVAL;
	if (!out->size || out->start + out->size < out->start)
		return -EINVAL;
	/* A name is text: a NUL would cut it short where it is printed. */
	if (p == end || memchr(p, '\0', (size_t)(end - p)))
		return -EINVAL;
	out->name = p;
	out->name_len = (size_t)(end - p);
	out->cut = out->name_len > PERFMAP_NAME_MAX;
	if (out->cut)
		out->name_len = perfmap_cut(p, PERFMAP_NAME_MAX);
	return 0;
}

struct perfmap *perfmap_new(struct strpool *names)
{
	struct perfmap *map = xcalloc(1, sizeof(*map));

	map->names = names;
	return map;
}

void perfmap_free(struct perfmap *map)
{
	if (!map)
		return;
	free(map->v);
	free(map);
}

static int perfmap_cmp(const void *a, const void *b)
{
	const struct perfmap_sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Sort v[0..n) and keep only the last-read entry of each start. Returns how many are kept. A JIT
 * mostly writes its functions in the order of their addresses: v is often sorted already (it is
 * in the order read, so equal starts are in the order of seq). */
static size_t perfmap_unique(struct perfmap_sym *v, size_t n)
{
	size_t out = 0, in_order = 1;

	while (in_order < n && v[in_order - 1].start <= v[in_order].start)
		in_order++;
	if (in_order < n)
		qsort(v, n, sizeof(*v), perfmap_cmp);
	for (size_t i = 0; i < n; i++) {
		if (out && v[out - 1].start == v[i].start)
			out--;
		v[out++] = v[i];
	}
	return out;
}

/* Sort the entries added since the last merge and merge them into v[0..sorted), where each
 * replaces the entry of its start. Merged from the back, into the room the new entries took:
 * at every step at least as many slots are free as new entries are left, so an old entry is
 * never written over before it is moved. What replacing frees is a gap at the front, closed by
 * one move at the end. */
static void perfmap_merge(struct perfmap *map)
{
	struct perfmap_sym *v = map->v, *add;
	size_t i = map->sorted, j, out = map->n;

	if (map->sorted == map->n)
		return;
	j = perfmap_unique(v + map->sorted, map->n - map->sorted);
	add = xmalloc(j * sizeof(*add));
	memcpy(add, v + map->sorted, j * sizeof(*add));
	while (j) {
		if (i && v[i - 1].start > add[j - 1].start) {
			v[--out] = v[--i];
			continue;
		}
		if (i && v[i - 1].start == add[j - 1].start)
			i--;
		v[--out] = add[--j];
	}
	free(add);
	if (out > i)
		memmove(v + i, v + out, (map->n - out) * sizeof(*v));
	map->n = map->sorted = i + (map->n - out);
}

/* In a sorted map, the index of the first entry starting above addr. */
static size_t perfmap_upper(const struct perfmap *map, uint64_t addr)
{
	size_t lo = 0, hi = map->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (map->v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Where the entry for start goes: the end of the array, or in a full map the entry it replaces;
 * NULL when a full map has no entry for start. A map that reaches PERFMAP_ENTRIES_MAX drops the
 * entries later lines replaced; it is full when that frees less than an eighth of it, so that
 * merging stays rare. */
static struct perfmap_sym *perfmap_place(struct perfmap *map, uint64_t start)
{
	size_t i;

	if (map->n == PERFMAP_ENTRIES_MAX && !map->full) {
		perfmap_merge(map);
		map->full = map->n > PERFMAP_ENTRIES_MAX - PERFMAP_ENTRIES_MAX / 8;
	}
	if (!map->full) {
		xgrow((void **)&map->v, &map->cap, map->n + 1, sizeof(*map->v));
		return &map->v[map->n];
	}
	i = perfmap_upper(map, start);
	return i && map->v[i - 1].start == start ? &map->v[i - 1] : NULL;
}

/* The pool's copy of e's name, or NULL when a new one would take the map past
 * PERFMAP_NAMES_MAX. A name the pool already has costs nothing. */
static const char *perfmap_name(struct perfmap *map, const struct perfmap_entry *e)
{
	const char *name = strpool_find(map->names, e->name, e->name_len);
	size_t cost = strpool_cost(e->name_len);

	if (name)
		return name;
	if (map->name_bytes + cost > PERFMAP_NAMES_MAX)
		return NULL;
	map->name_bytes += cost;
	return strpool_intern(map->names, e->name, e->name_len);
}

/* Add an entry, from a line or a jitdump record. */
static void perfmap_add_entry(struct perfmap *map, struct perfmap_entry e, bool overlong)
{
	struct perfmap_sym *sym;
	const char *name;

	sym = perfmap_place(map, e.start);
	name = sym ? perfmap_name(map, &e) : NULL;
	if (!name) {
		map->skipped++;
		return;
	}
	if (e.cut || overlong)
		map->cut++;
	if (sym == &map->v[map->n])
		map->n++;
	sym->start = e.start;
	sym->end = e.start + e.size;
	sym->seq = map->seq++;
	sym->name = name;
	map->changes++;
}

/* Add one line (len bytes without its newline); an overlong line is only its head. */
static void perfmap_add_line(struct perfmap *map, const char *line, size_t len, bool overlong)
{
	struct perfmap_entry e;

	if (perfmap_parse_line(line, len, &e))
		return;
	/* The head of an overlong line ends wherever it was cut, maybe inside a character. */
	if (overlong && !e.cut)
		e.name_len = perfmap_cut(e.name, e.name_len);
	perfmap_add_entry(map, e, overlong);
}

/* Add buf's lines, the last one unterminated too when `tail` (it is the end of the file). A line
 * longer than PERFMAP_LINE_MAX is added from its head, and the rest skipped up to its newline,
 * also in later calls. Returns the bytes up to the last newline or the skipped part of a line:
 * where the next call starts. Does not sort. */
static size_t perfmap_add_lines(struct perfmap *map, const char *buf, size_t len, bool tail)
{
	size_t pos = 0, consumed = 0;

	while (pos < len) {
		size_t rest = len - pos, look = rest < PERFMAP_LINE_MAX + 1 ? rest : PERFMAP_LINE_MAX + 1;
		const char *nl = memchr(buf + pos, '\n', map->skipping ? rest : look);

		if (nl) {
			if (!map->skipping)
				perfmap_add_line(map, buf + pos, (size_t)(nl - (buf + pos)), false);
			map->skipping = false;
			consumed = pos = (size_t)(nl - buf) + 1;
		} else if (map->skipping) {
			consumed = pos = len;
		} else if (rest > PERFMAP_LINE_MAX) {
			perfmap_add_line(map, buf + pos, PERFMAP_LINE_MAX, true);
			map->skipping = true;
			consumed = pos += PERFMAP_LINE_MAX;
		} else {
			if (tail)
				perfmap_add_line(map, buf + pos, rest, false);
			break;
		}
	}
	return consumed;
}

size_t perfmap_parse(struct perfmap *map, const char *buf, size_t len)
{
	size_t consumed = perfmap_add_lines(map, buf, len, true);

	perfmap_merge(map);
	return consumed;
}

const char *perfmap_lookup(const struct perfmap *map, uint64_t addr)
{
	size_t i = perfmap_upper(map, addr);

	if (!i || addr >= map->v[i - 1].end)
		return NULL;
	return map->v[i - 1].name;
}

size_t perfmap_count(const struct perfmap *map)
{
	return map->n;
}

size_t perfmap_skipped(const struct perfmap *map)
{
	return map->skipped;
}

size_t perfmap_cut_names(const struct perfmap *map)
{
	return map->cut;
}

uint64_t perfmap_changes(const struct perfmap *map)
{
	return map->changes;
}

const char *perfmap_path(const struct perfmap *map)
{
	return map->path;
}

/* Blanks, then a decimal number of at most max ended by a blank or the line's end: its value,
 * and *p past it. */
static bool perfmap_status_number(const char **p, uint64_t max, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s < '0' || *s > '9')
		return false;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > (max - (uint64_t)(*s - '0')) / 10)
			return false;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	if (*s && !strchr(" \t\n", *s))
		return false;
	*p = s;
	*out = v;
	return true;
}

/* The kernel writes "Uid:\treal\teffective\tsaved\tfs" and "NSpid:\tpid\t...\tinnermost", in
 * decimal; a line in any other form says nothing (sscanf() and atoi() took "-1", "1035x" and an
 * overflowing 4294967297 as numbers, the last as pid 1). */
void perfmap_status_line(const char *line, struct perfmap_owner *owner)
{
	uint64_t ruid, euid, pid = 0;
	const char *p;
	bool any = false;

	if (!strncmp(line, "Uid:", 4)) {
		p = line + 4;
		/* (uid_t)-1 is no one's: chown() takes it for "unchanged". */
		if (perfmap_status_number(&p, UINT32_MAX - 1, &ruid) &&
		    perfmap_status_number(&p, UINT32_MAX - 1, &euid)) {
			owner->uid[0] = (uid_t)ruid;
			owner->uid[1] = (uid_t)euid;
			owner->has_uid = true;
		}
	} else if (!strncmp(line, "NSpid:", 6)) {
		p = line + 6;
		while (perfmap_status_number(&p, UINT64_MAX, &pid))
			any = true;
		while (*p == ' ' || *p == '\t')
			p++;
		if (any && (!*p || *p == '\n') && pid >= 1 && pid <= INT32_MAX)
			owner->nspid = (pid_t)pid;
	}
}

/* The target's owner and its pid in its own pid namespace, from /proc/PID/status. Returns 0, or
 * -errno (-ENOENT: the file has no Uid line). */
static int perfmap_status(pid_t pid, struct perfmap_owner *owner)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	FILE *file;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	file = fopen(path, "re");
	if (!file)
		return -errno;
	*owner = (struct perfmap_owner){ .uid = { (uid_t)-1, (uid_t)-1 }, .nspid = pid };
	while (getline(&line, &cap, file) > 0)
		perfmap_status_line(line, owner);
	free(line);
	fclose(file);
	return owner->has_uid ? 0 : -ENOENT;
}

/* Open path if it is a regular file one of uid owns. Returns the fd or -errno (-EPERM: someone
 * else's file). */
static int perfmap_try(const char *path, const uid_t uid[2], struct stat *st)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

	if (fd < 0)
		return -errno;
	if (!fstat(fd, st) && S_ISREG(st->st_mode) && (st->st_uid == uid[0] || st->st_uid == uid[1]))
		return fd;
	close(fd);
	return -EPERM;
}

/* Open pid's perf map if it is a regular file its owner may have written. Inside pid's mount
 * namespace it is named by pid's own pid there; /tmp of ours is the fallback. A file that is
 * there but refused or unreadable is the error to return, not the other one's absence; map->path
 * says which file. */
static int perfmap_open(struct perfmap *map, pid_t pid, struct stat *st)
{
	char path[2][sizeof(map->path)];
	struct perfmap_owner owner;
	int err, fd;

	snprintf(map->path, sizeof(map->path), "/proc/%d/status", (int)pid);
	err = perfmap_status(pid, &owner);
	/* A process gone (reaped) is who it was: a JIT may have written its map as it ended. */
	if (err && map->owner.has_uid)
		owner = map->owner;
	else if (err)
		return err;
	map->owner = owner;
	snprintf(path[0], sizeof(path[0]), "/proc/%d/root/tmp/perf-%d.map", (int)pid, (int)owner.nspid);
	snprintf(path[1], sizeof(path[1]), "/tmp/perf-%d.map", (int)pid);
	memcpy(map->path, path[1], sizeof(map->path));
	err = -ENOENT;
	for (int i = 0; i < 2; i++) {
		fd = perfmap_try(path[i], owner.uid, st);
		if (fd == -ENOENT)
			continue;
		memcpy(map->path, path[i], sizeof(map->path));
		if (fd >= 0)
			return fd;
		err = fd;
	}
	return err;
}

/* Up to want bytes at off; *got short only at the end of the file. */
static int perfmap_pread(int fd, char *buf, size_t want, off_t off, size_t *got)
{
	*got = 0;
	while (*got < want) {
		ssize_t r = pread(fd, buf + *got, want - *got, off + (off_t)*got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		*got += (size_t)r;
	}
	return 0;
}

/* Remember the bytes just before map->consumed, which a file that only grew still holds. */
static int perfmap_keep_tail(struct perfmap *map, int fd)
{
	size_t want = map->consumed < PERFMAP_TAIL ? (size_t)map->consumed : PERFMAP_TAIL;

	map->tail_len = 0;
	return perfmap_pread(fd, (char *)map->tail, want, map->consumed - (off_t)want,
			     &map->tail_len);
}

/* Does the file hold, before map->consumed, what it held when it was read there? */
static bool perfmap_same_tail(struct perfmap *map, int fd)
{
	unsigned char now[PERFMAP_TAIL];
	size_t got;

	if (perfmap_pread(fd, (char *)now, map->tail_len, map->consumed - (off_t)map->tail_len,
			  &got))
		return false;
	return got == map->tail_len && !memcmp(now, map->tail, got);
}

/* Parse what was appended since map->consumed, up to size and at most PERFMAP_READ_MAX bytes,
 * a chunk at a time, until a chunk ends at or past deadline_ns. A chunk that does not reach the
 * end of the file is parsed up to its last newline and read again from there. */
static int perfmap_read(struct perfmap *map, int fd, off_t size, uint64_t deadline_ns)
{
	char *buf = xmalloc(PERFMAP_CHUNK);
	off_t stop = size - map->consumed > PERFMAP_READ_MAX ? map->consumed + PERFMAP_READ_MAX : size;
	bool at_end = false;
	int err = 0;

	while (map->consumed < stop) {
		size_t want = size - map->consumed > PERFMAP_CHUNK ? PERFMAP_CHUNK :
			      (size_t)(size - map->consumed), got, used;

		err = perfmap_pread(fd, buf, want, map->consumed, &got);
		if (err)
			break;
		at_end = got < want || map->consumed + (off_t)got == size;
		used = perfmap_add_lines(map, buf, got, at_end);
		map->consumed += (off_t)used;
		/* At the end, what is left is the unfinished last line, read again next time. */
		if (at_end || !used || util_now_ns() >= deadline_ns)
			break;
	}
	free(buf);
	perfmap_merge(map);
	if (!err)
		err = perfmap_keep_tail(map, fd);
	if (at_end || err)
		map->behind_ns = 0;
	else if (!map->behind_ns)
		map->behind_ns = map->checked_ns;
	return err;
}

/* Forget what was read: the file is another one now. */
static void perfmap_reset(struct perfmap *map)
{
	if (map->n)
		map->changes++;
	map->n = map->sorted = 0;
	map->full = map->skipping = false;
	map->consumed = 0;
	map->tail_len = 0;
	map->behind_ns = 0;
	map->dump_consumed = 0; /* (its names went with the others: read again) */
}

void perfmap_expire(struct perfmap *map)
{
	map->checked_ns = 0;
}

bool perfmap_due(const struct perfmap *map, uint64_t now_ns)
{
	return !map->checked_ns || now_ns - map->checked_ns >= PERFMAP_RECHECK_NS;
}

uint64_t perfmap_behind_since(const struct perfmap *map)
{
	return map->behind_ns;
}

/* A jitdump record into the map: a code load names its range, a move names the new range as
 * the old one was. */
static void perfmap_add_record(struct perfmap *map, const struct jitdump_record *r)
{
	struct perfmap_entry e = { .start = r->addr, .size = r->size };
	size_t len;

	if (r->id == JITDUMP_CODE_LOAD) {
		e.name = r->name;
		e.name_len = r->name_len;
	} else if (r->id == JITDUMP_CODE_MOVE) {
		perfmap_merge(map);
		e.name = perfmap_lookup(map, r->old_addr);
		e.name_len = e.name ? strlen(e.name) : 0;
	}
	if (!e.name || !e.name_len || !e.size)
		return;
	len = perfmap_cut(e.name, e.name_len);
	e.cut = len < e.name_len;
	e.name_len = len;
	perfmap_add_entry(map, e, false);
}

/* The records appended to the jitdump at fd (size bytes now) since the last look, up to
 * deadline_ns. A record is read whole up to its name (the code bytes after it are stepped
 * over); a malformed one stops the reading of this file for good (-EINVAL). */
static int perfmap_read_dump(struct perfmap *map, int fd, off_t size, uint64_t deadline_ns)
{
	uint8_t buf[JITDUMP_RECORD_HEADER + 48 + JITDUMP_NAME_MAX + 1];
	struct jitdump_record r;
	int err = 0;

	while (!err && map->dump_consumed < size) {
		size_t got;

		err = perfmap_pread(fd, (char *)buf, sizeof(buf), map->dump_consumed, &got);
		if (err)
			break;
		if (!map->dump_consumed) {
			uint32_t header;

			err = jitdump_header(buf, got, &header);
			if (!err)
				map->dump_consumed = header;
			continue;
		}
		err = jitdump_record(buf, got, &r);
		if (!err && map->dump_consumed + r.total_size > size)
			err = -EAGAIN; /* being written */
		if (err)
			break;
		perfmap_add_record(map, &r);
		map->dump_consumed += r.total_size;
		if (util_now_ns() >= deadline_ns)
			break;
	}
	perfmap_merge(map);
	if (err == -EINVAL) /* nothing after a malformed record can be trusted */
		map->dump_consumed = size;
	return err == -EAGAIN ? 0 : err;
}

/* The number N of a jitdump's name "jit-N.dump" at the end of path (N a pid: 1 to 9 digits),
 * or -1. */
static long perfmap_dump_pid(const char *path)
{
	const char *base = strrchr(path, '/'), *digits;
	size_t n = 0;
	long pid = 0;

	base = base ? base + 1 : path;
	if (strncmp(base, "jit-", 4))
		return -1;
	for (digits = base + 4; digits[n] >= '0' && digits[n] <= '9' && n < 10; n++)
		pid = pid * 10 + (digits[n] - '0');
	return n && n < 10 && !strcmp(digits + n, ".dump") ? pid : -1;
}

bool perfmap_dump_name(const char *path)
{
	return perfmap_dump_pid(path) > 0;
}

/* Whether path names the process's own jitdump, as far as the map knows the process yet. */
static bool perfmap_dump_of(const struct perfmap *map, const char *path)
{
	long pid = perfmap_dump_pid(path);

	return pid > 0 && (!map->owner.has_uid || pid == (long)map->owner.nspid);
}

bool perfmap_wants_dump(const struct perfmap *map)
{
	return !map->dump_dev && !perfmap_dump_of(map, map->dump_mapped);
}

void perfmap_offer_dump(struct perfmap *map, const char *path)
{
	size_t len = strlen(path);

	/* (a child forked by a JIT maps its parent's dump too: not its own) */
	if (path[0] == '/' && len < sizeof(map->dump_mapped) && perfmap_dump_of(map, path) &&
	    perfmap_wants_dump(map))
		memcpy(map->dump_mapped, path, len + 1);
}

/* The jitdump of pid, as perf_open() finds the map, owned by pid's owner: /tmp/jit-PID.dump
 * (CPython's -X perf_jit), else the one pid mapped (perfmap_offer_dump(): V8's --perf-prof),
 * inside pid's mount namespace. Returns 0, or -errno (-ENOENT: none). */
static int perfmap_refresh_dump(struct perfmap *map, pid_t pid, uint64_t deadline_ns)
{
	char path[4][sizeof("/proc//root") + 12 + PERFMAP_DUMP_PATH];
	int npaths = 2, fd = -ENOENT, err;
	struct stat st;

	if (!map->owner.has_uid)
		return -ENOENT;
	snprintf(path[0], sizeof(path[0]), "/proc/%d/root/tmp/jit-%d.dump", (int)pid,
		 (int)map->owner.nspid);
	snprintf(path[1], sizeof(path[1]), "/tmp/jit-%d.dump", (int)pid);
	if (map->dump_mapped[0] && perfmap_dump_of(map, map->dump_mapped)) {
		snprintf(path[npaths++], sizeof(path[0]), "/proc/%d/root%s", (int)pid,
			 map->dump_mapped);
		/* Once the process is gone, so is its root: V8 buffers its records (2 MiB) and
		 * writes the rest as it exits, which the end of the run still reads here. */
		snprintf(path[npaths++], sizeof(path[0]), "%s", map->dump_mapped);
	}
	for (int i = 0; i < npaths && fd == -ENOENT; i++)
		fd = perfmap_try(path[i], map->owner.uid, &st);
	if (fd < 0)
		return fd;
	if (st.st_dev != map->dump_dev || st.st_ino != map->dump_ino || st.st_size < map->dump_consumed)
		map->dump_consumed = 0;
	map->dump_dev = st.st_dev;
	map->dump_ino = st.st_ino;
	err = perfmap_read_dump(map, fd, st.st_size, deadline_ns);
	close(fd);
	return err;
}

/* The text map (/tmp/perf-PID.map). */
static int perfmap_refresh_map(struct perfmap *map, pid_t pid, uint64_t deadline_ns)
{
	struct stat st;
	int fd, err = 0;

	fd = perfmap_open(map, pid, &st);
	if (fd < 0)
		return fd;
	if (st.st_dev != map->dev || st.st_ino != map->ino || st.st_size < map->consumed) {
		perfmap_reset(map);
	} else if (st.st_size != map->size || st.st_mtim.tv_sec != map->mtime.tv_sec ||
		   st.st_mtim.tv_nsec != map->mtime.tv_nsec) {
		if (!perfmap_same_tail(map, fd))
			perfmap_reset(map);
	}
	if (st.st_size > map->consumed)
		err = perfmap_read(map, fd, st.st_size, deadline_ns);
	else
		map->behind_ns = 0;
	map->dev = st.st_dev;
	map->ino = st.st_ino;
	map->size = st.st_size;
	map->mtime = st.st_mtim;
	close(fd);
	return err;
}

int perfmap_refresh(struct perfmap *map, pid_t pid, uint64_t now_ns, uint64_t deadline_ns)
{
	int err, dump;

	if (!perfmap_due(map, now_ns))
		return 0;
	map->checked_ns = now_ns ? now_ns : 1;
	err = perfmap_refresh_map(map, pid, deadline_ns);
	dump = perfmap_refresh_dump(map, pid, deadline_ns);
	/* Either file names the code: the map's error matters only without a jitdump. */
	return err == -ENOENT && dump != -ENOENT ? dump : err;
}
