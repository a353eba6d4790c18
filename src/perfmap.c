/* perfmap.c — symbols a JIT compiler publishes in /tmp/perf-PID.map.
 *
 * A struct perfmap holds the entries parsed so far in an array sorted by start, with one entry per
 * start: when a JIT reuses an address the later line replaces the earlier one (each entry carries
 * the order it was read in, which breaks ties while sorting). Lookup is a binary search for the
 * last start at or below the address.
 *
 * The file is read incrementally: `consumed` is the offset just past the last complete line, and a
 * refresh that finds the same file grown parses only from there. A different file (inode), one
 * that shrank, or one rewritten in place (same size, new mtime) is parsed again from scratch. */
#include "proftop/perfmap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proftop/strpool.h"
#include "proftop/util.h"

/* One refresh reads at most this much; the rest waits for the next one. */
#define PERFMAP_READ_MAX	(64u << 20)

struct perfmap_sym {
	uint64_t start;
	uint64_t end;
	uint64_t seq;		/* order read in: the later line for a start wins */
	const char *name;	/* interned */
};

struct perfmap {
	struct strpool *names;
	struct perfmap_sym *v;	/* sorted by start, starts unique (after perfmap_parse) */
	size_t n, cap;
	uint64_t seq;
	/* The file as last read. */
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	off_t consumed;
	uint64_t checked_ns;	/* last look at the file; 0: never */
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

/* Sort, then keep only the last-read entry of each start. */
static void perfmap_sort(struct perfmap *map)
{
	size_t out = 0;

	qsort(map->v, map->n, sizeof(*map->v), perfmap_cmp);
	for (size_t i = 0; i < map->n; i++) {
		if (out && map->v[out - 1].start == map->v[i].start)
			out--;
		map->v[out++] = map->v[i];
	}
	map->n = out;
}

size_t perfmap_parse(struct perfmap *map, const char *buf, size_t len)
{
	size_t pos = 0, consumed = 0, before = map->n;

	while (pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t line_len = nl ? (size_t)(nl - (buf + pos)) : len - pos;
		struct perfmap_entry e;

		if (!perfmap_parse_line(buf + pos, line_len, &e)) {
			struct perfmap_sym *sym;

			xgrow((void **)&map->v, &map->cap, map->n + 1, sizeof(*map->v));
			sym = &map->v[map->n++];
			sym->start = e.start;
			sym->end = e.start + e.size;
			sym->seq = map->seq++;
			sym->name = strpool_intern(map->names, e.name, e.name_len);
		}
		pos += line_len;
		if (nl)
			consumed = ++pos;
	}
	if (map->n != before)
		perfmap_sort(map);
	return consumed;
}

const char *perfmap_lookup(const struct perfmap *map, uint64_t addr)
{
	size_t lo = 0, hi = map->n;

	/* The first entry starting above addr; the one before it is the candidate. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (map->v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= map->v[lo - 1].end)
		return NULL;
	return map->v[lo - 1].name;
}

size_t perfmap_count(const struct perfmap *map)
{
	return map->n;
}

const char *perfmap_path(const struct perfmap *map)
{
	return map->path;
}

/* The target's real and effective uids and its pid in its own pid namespace, from
 * /proc/PID/status ("Uid:\treal\teffective\tsaved\tfs", "NSpid:\t... innermost"). */
static int perfmap_status(pid_t pid, uid_t uid[2], pid_t *nspid)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	int found = 0;
	FILE *file;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	file = fopen(path, "re");
	if (!file)
		return -errno;
	*nspid = pid;
	while (getline(&line, &cap, file) > 0) {
		unsigned ruid, euid;
		char *last;

		if (sscanf(line, "Uid: %u %u", &ruid, &euid) == 2) {
			uid[0] = ruid;
			uid[1] = euid;
			found = 1;
		} else if (!strncmp(line, "NSpid:", 6)) {
			last = strrchr(line, '\t');
			if (last && atoi(last + 1) > 0)
				*nspid = atoi(last + 1);
		}
	}
	free(line);
	fclose(file);
	return found ? 0 : -ENOENT;
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
	pid_t nspid = pid;
	uid_t uid[2] = { (uid_t)-1, (uid_t)-1 };
	int err, fd;

	snprintf(map->path, sizeof(map->path), "/proc/%d/status", (int)pid);
	err = perfmap_status(pid, uid, &nspid);
	if (err)
		return err;
	snprintf(path[0], sizeof(path[0]), "/proc/%d/root/tmp/perf-%d.map", (int)pid, (int)nspid);
	snprintf(path[1], sizeof(path[1]), "/tmp/perf-%d.map", (int)pid);
	memcpy(map->path, path[1], sizeof(map->path));
	err = -ENOENT;
	for (int i = 0; i < 2; i++) {
		fd = perfmap_try(path[i], uid, st);
		if (fd == -ENOENT)
			continue;
		memcpy(map->path, path[i], sizeof(map->path));
		if (fd >= 0)
			return fd;
		err = fd;
	}
	return err;
}

static int perfmap_read(struct perfmap *map, int fd, off_t size)
{
	size_t want = (size_t)(size - map->consumed), got = 0, used;
	char *buf;
	int err = 0;

	if (want > PERFMAP_READ_MAX)
		want = PERFMAP_READ_MAX;
	buf = xmalloc(want);
	while (got < want) {
		ssize_t r = pread(fd, buf + got, want - got, map->consumed + (off_t)got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			break;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	used = perfmap_parse(map, buf, got);
	/* A full read without a single newline would be read again forever: give up on it. */
	if (!used && got == PERFMAP_READ_MAX)
		used = got;
	map->consumed += (off_t)used;
	free(buf);
	return err;
}

int perfmap_refresh(struct perfmap *map, pid_t pid, uint64_t now_ns)
{
	struct stat st;
	int fd, err = 0;

	if (map->checked_ns && now_ns - map->checked_ns < PERFMAP_RECHECK_NS)
		return 0;
	map->checked_ns = now_ns ? now_ns : 1;
	fd = perfmap_open(map, pid, &st);
	if (fd < 0)
		return fd;
	if (st.st_dev != map->dev || st.st_ino != map->ino || st.st_size < map->consumed ||
	    (st.st_size == map->size && (st.st_mtim.tv_sec != map->mtime.tv_sec ||
					 st.st_mtim.tv_nsec != map->mtime.tv_nsec))) {
		map->n = 0;
		map->consumed = 0;
	}
	if (st.st_size > map->consumed)
		err = perfmap_read(map, fd, st.st_size);
	map->dev = st.st_dev;
	map->ino = st.st_ino;
	map->size = st.st_size;
	map->mtime = st.st_mtim;
	close(fd);
	return err;
}
