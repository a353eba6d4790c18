/* maps.c — the address spaces of the processes a session sees.
 *
 * struct maps is a hash table of struct maps_proc, chained by pid. A maps_proc holds its mappings
 * in an array sorted by start whose ranges never overlap, so the mapping holding an address is the
 * last one starting at or below it and a binary search finds it. Every change keeps that
 * invariant: maps_insert() cuts away whatever the new range covers before it goes in, and
 * /proc/PID/maps lines that would break it are dropped.
 *
 * A maps_proc also remembers when /proc/PID/maps was last read (or tried), which is what rate-
 * limits rereads for addresses that no mapping holds. */
#include "proftop/maps.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "proftop/strpool.h"
#include "proftop/util.h"

struct maps_proc {
	struct maps_proc *next;	/* hash chain */
	pid_t pid;
	uint64_t loaded_ns;	/* last attempt to read /proc/PID/maps; 0: never */
	struct mapping *v;	/* sorted by start, disjoint */
	size_t n, cap;
};

struct maps {
	struct maps_proc **buckets;
	size_t nbuckets;	/* a power of two */
	size_t nprocs;
	struct strpool *paths;
};

struct maps *maps_new(void)
{
	struct maps *maps = xcalloc(1, sizeof(*maps));

	maps->nbuckets = 64;
	maps->buckets = xcalloc(maps->nbuckets, sizeof(*maps->buckets));
	maps->paths = strpool_new();
	return maps;
}

static void maps_proc_free(struct maps_proc *proc)
{
	free(proc->v);
	free(proc);
}

void maps_free(struct maps *maps)
{
	if (!maps)
		return;
	for (size_t i = 0; i < maps->nbuckets; i++) {
		struct maps_proc *proc = maps->buckets[i], *next;

		for (; proc; proc = next) {
			next = proc->next;
			maps_proc_free(proc);
		}
	}
	free(maps->buckets);
	strpool_free(maps->paths);
	free(maps);
}

static struct maps_proc **maps_bucket(const struct maps *maps, pid_t pid)
{
	return &maps->buckets[util_hash_u64((uint64_t)pid) & (maps->nbuckets - 1)];
}

static struct maps_proc *maps_lookup(const struct maps *maps, pid_t pid)
{
	struct maps_proc *proc;

	for (proc = *maps_bucket(maps, pid); proc; proc = proc->next)
		if (proc->pid == pid)
			return proc;
	return NULL;
}

static void maps_rehash(struct maps *maps)
{
	struct maps_proc **old = maps->buckets;
	size_t nold = maps->nbuckets;

	maps->nbuckets *= 2;
	maps->buckets = xcalloc(maps->nbuckets, sizeof(*maps->buckets));
	for (size_t i = 0; i < nold; i++) {
		struct maps_proc *proc = old[i], *next;

		for (; proc; proc = next) {
			struct maps_proc **bucket = maps_bucket(maps, proc->pid);

			next = proc->next;
			proc->next = *bucket;
			*bucket = proc;
		}
	}
	free(old);
}

/* pid's entry, created empty (and never loaded) when pid is new. */
static struct maps_proc *maps_get(struct maps *maps, pid_t pid)
{
	struct maps_proc *proc = maps_lookup(maps, pid), **bucket;

	if (proc)
		return proc;
	if (maps->nprocs >= maps->nbuckets)
		maps_rehash(maps);
	proc = xcalloc(1, sizeof(*proc));
	proc->pid = pid;
	bucket = maps_bucket(maps, pid);
	proc->next = *bucket;
	*bucket = proc;
	maps->nprocs++;
	return proc;
}

/* Index of the first mapping that ends above addr (proc->n when none does). */
static size_t maps_proc_search(const struct maps_proc *proc, uint64_t addr)
{
	size_t lo = 0, hi = proc->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (proc->v[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Replace v[i, j) — the mappings m overlaps — by what is left of them around m, and m. At most
 * two pieces survive: the head of v[i] below m and the tail of v[j-1] above it (the same mapping
 * when m punches a hole in one). */
static void maps_proc_insert(struct maps_proc *proc, const struct mapping *m)
{
	size_t i = maps_proc_search(proc, m->start), j = i, k = 0;
	struct mapping piece[3];

	while (j < proc->n && proc->v[j].start < m->end)
		j++;
	if (i < j && proc->v[i].start < m->start) {
		piece[k] = proc->v[i];
		piece[k++].end = m->start;
	}
	piece[k++] = *m;
	if (i < j && proc->v[j - 1].end > m->end) {
		piece[k] = proc->v[j - 1];
		piece[k].pgoff += m->end - piece[k].start;
		piece[k++].start = m->end;
	}
	xgrow((void **)&proc->v, &proc->cap, proc->n - (j - i) + k, sizeof(*proc->v));
	memmove(&proc->v[i + k], &proc->v[j], (proc->n - j) * sizeof(*proc->v));
	memcpy(&proc->v[i], piece, k * sizeof(*piece));
	proc->n = proc->n - (j - i) + k;
}

void maps_insert(struct maps *maps, pid_t pid, const struct mapping *m)
{
	struct mapping copy = *m;

	if (m->start >= m->end)
		return;
	copy.path = strpool_intern(maps->paths, m->path ? m->path : "",
				   m->path ? strlen(m->path) : 0);
	maps_proc_insert(maps_get(maps, pid), &copy);
}

void maps_fork(struct maps *maps, pid_t parent, pid_t child)
{
	struct maps_proc *from, *to;

	if (parent == child)
		return;
	to = maps_get(maps, child);
	from = maps_lookup(maps, parent);
	to->n = 0;
	to->loaded_ns = 0;
	if (!from || !from->n)
		return;
	xgrow((void **)&to->v, &to->cap, from->n, sizeof(*to->v));
	memcpy(to->v, from->v, from->n * sizeof(*to->v));
	to->n = from->n;
}

void maps_exec(struct maps *maps, pid_t pid)
{
	struct maps_proc *proc = maps_lookup(maps, pid);

	if (!proc)
		return;
	proc->n = 0;
	proc->loaded_ns = 0;
}

void maps_exit(struct maps *maps, pid_t pid)
{
	struct maps_proc **link = maps_bucket(maps, pid), *proc;

	for (; (proc = *link); link = &proc->next) {
		if (proc->pid == pid) {
			*link = proc->next;
			maps_proc_free(proc);
			maps->nprocs--;
			return;
		}
	}
}

/* Strict hex, at least one digit. Advances *s past the digits. */
static int maps_parse_hex(char **s, uint64_t *out)
{
	const char *after;

	if (util_parse_hex(*s, NULL, &after, out))
		return -EINVAL;
	*s += after - *s;
	return 0;
}

static int maps_parse_dec(char **s, uint64_t *out)
{
	uint64_t v = 0;
	char *p = *s;

	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (p == *s)
		return -EINVAL;
	*s = p;
	*out = v;
	return 0;
}

static int maps_expect(char **s, char c)
{
	if (**s != c)
		return -EINVAL;
	(*s)++;
	return 0;
}

static int maps_parse_prot(char **s, uint32_t *prot)
{
	char *p = *s;

	if (strlen(p) < 4)
		return -EINVAL;
	*prot = (p[0] == 'r' ? PROT_READ : 0) | (p[1] == 'w' ? PROT_WRITE : 0) |
		(p[2] == 'x' ? PROT_EXEC : 0);
	*s = p + 4;
	return 0;
}

/* "start-end perms offset maj:min inode [path]", the numbers in hex except the inode. */
int maps_parse_line(char *line, struct mapping *out)
{
	uint64_t maj, min;
	char *p = line;
	size_t len;

	memset(out, 0, sizeof(*out));
	if (maps_parse_hex(&p, &out->start) || maps_expect(&p, '-') ||
	    maps_parse_hex(&p, &out->end) || maps_expect(&p, ' ') ||
	    maps_parse_prot(&p, &out->prot) || maps_expect(&p, ' ') ||
	    maps_parse_hex(&p, &out->pgoff) || maps_expect(&p, ' ') ||
	    maps_parse_hex(&p, &maj) || maps_expect(&p, ':') ||
	    maps_parse_hex(&p, &min) || maps_expect(&p, ' ') ||
	    maps_parse_dec(&p, &out->ino))
		return -EINVAL;
	if (out->start >= out->end || maj > UINT32_MAX || min > UINT32_MAX)
		return -EINVAL;
	out->maj = (uint32_t)maj;
	out->min = (uint32_t)min;
	while (*p == ' ' || *p == '\t')
		p++;
	len = strlen(p);
	if (len && p[len - 1] == '\n')
		p[--len] = '\0';
	out->path = p;
	return 0;
}

/* Read a whole maps file into a fresh sorted array; the caller swaps it in only on success so a
 * process dying halfway through leaves the old maps alone. */
static int maps_read(struct maps *maps, FILE *file, struct mapping **v, size_t *n)
{
	size_t cap = 0, linecap = 0;
	char *line = NULL;
	int err = 0;

	*v = NULL;
	*n = 0;
	while (getline(&line, &linecap, file) > 0) {
		struct mapping m;

		if (maps_parse_line(line, &m))
			continue;
		if (*n && m.start < (*v)[*n - 1].end)
			continue;
		m.path = strpool_intern(maps->paths, m.path, strlen(m.path));
		xgrow((void **)v, &cap, *n + 1, sizeof(**v));
		(*v)[(*n)++] = m;
	}
	if (ferror(file))
		err = errno ? -errno : -EIO;
	free(line);
	if (err) {
		free(*v);
		*v = NULL;
		*n = 0;
	}
	return err;
}

int maps_load_file(struct maps *maps, pid_t pid, FILE *file, uint64_t now_ns)
{
	struct maps_proc *proc = maps_get(maps, pid);
	struct mapping *v;
	size_t n;
	int err;

	proc->loaded_ns = now_ns ? now_ns : 1;
	errno = 0;
	err = maps_read(maps, file, &v, &n);
	if (err)
		return err;
	free(proc->v);
	proc->v = v;
	proc->n = proc->cap = n;
	return 0;
}

int maps_load_proc(struct maps *maps, pid_t pid, uint64_t now_ns)
{
	char path[64];
	FILE *file;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	file = fopen(path, "re");
	if (!file) {
		err = -errno;
		maps_get(maps, pid)->loaded_ns = now_ns ? now_ns : 1;
		return err;
	}
	err = maps_load_file(maps, pid, file, now_ns);
	fclose(file);
	return err;
}

bool maps_reload_due(const struct maps *maps, pid_t pid, uint64_t now_ns)
{
	const struct maps_proc *proc = maps_lookup(maps, pid);

	return !proc || !proc->loaded_ns || now_ns - proc->loaded_ns >= MAPS_RELOAD_NS;
}

struct mapping *maps_find(struct maps *maps, pid_t pid, uint64_t addr)
{
	struct maps_proc *proc = maps_lookup(maps, pid);
	size_t i;

	if (!proc)
		return NULL;
	i = maps_proc_search(proc, addr);
	if (i == proc->n || proc->v[i].start > addr)
		return NULL;
	return &proc->v[i];
}

const struct mapping *maps_list(const struct maps *maps, pid_t pid, size_t *count)
{
	const struct maps_proc *proc = maps_lookup(maps, pid);

	*count = proc ? proc->n : 0;
	return proc && proc->n ? proc->v : NULL;
}
