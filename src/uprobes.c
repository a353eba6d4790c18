/* uprobes.c — instruction counts with uprobe events defined in tracefs, each held by an anchor
 * process so that closing a probe is cheap (uprobes.h). */
#include "proftop/uprobes.h"

#include "proftop/idmap.h"
#include "proftop/util.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define TRACEFS "/sys/kernel/tracing"
#define EVENT_NAME_MAX 48
/* The anchor holds at most this many events (its table is reserved, not committed). */
#define ANCHOR_MAX (1u << 20)

struct probe {
	int fd;                    /* -1: closed */
	uint64_t count;            /* as read when closed */
	bool capped;
};

/* A uprobe event defined in tracefs: one instruction of one file. */
struct event {
	uint64_t id;               /* its tracepoint id */
	uint64_t offset;
	const char *path;          /* interned in paths */
};

/* What the parent asks the anchor: hold event id (named name, deleted at the end). */
struct anchor_request {
	uint64_t id;
	char name[EVENT_NAME_MAX];
};

struct uprobes {
	uint64_t cap;
	pid_t owner;               /* the thread the capped probes signal */
	int signo;
	char group[32];            /* proftop_PID */
	int defs;                  /* uprobe_events, open to append */
	pid_t anchor;
	int to_anchor, from_anchor;
	struct probe *probes;
	size_t n, cap_probes, open;
	struct event *events;
	size_t nevents, events_cap;
	struct idmap event_index;  /* hash of (path, offset) → event */
	char **paths;
	size_t npaths, paths_cap;
	uint32_t *of_fd;           /* per fd: its probe's index + 1 (0: none) */
	size_t nof_fd;
};

static int perf_open(uint64_t id, pid_t pid, uint64_t period, bool inherit)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.config = id;
	attr.inherit = inherit;
	attr.sample_period = period;
	attr.wakeup_events = period ? 1 : 0;
	return (int)syscall(SYS_perf_event_open, &attr, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

int uprobes_file_offset(const char *path, uint64_t vaddr, uint64_t *offset)
{
	int fd, err = -ENOENT;
	size_t n = 0;
	Elf *elf;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &n))
		err = -ENOEXEC;
	for (size_t i = 0; err == -ENOENT && i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && vaddr >= ph.p_vaddr &&
		    vaddr - ph.p_vaddr < ph.p_filesz) {
			*offset = ph.p_offset + (vaddr - ph.p_vaddr);
			err = 0;
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}

/* --- the anchor: a process of its own (only async-signal-safe calls after the fork) ---------- */

static bool read_all(int fd, void *buf, size_t len)
{
	for (size_t done = 0; done < len;) {
		ssize_t got = read(fd, (char *)buf + done, len - done);

		if (got <= 0 && !(got < 0 && errno == EINTR))
			return false;
		if (got > 0)
			done += (size_t)got;
	}
	return true;
}

/* Holds each event asked for (its reply: 0 or -errno), until its parent is gone: then closes them
 * (each close unregisters a uprobe: slow) and deletes their definitions. */
static void anchor_main(const char *group, const char *defs_path)
{
	struct anchor_held { int fd; char name[EVENT_NAME_MAX]; } *held;
	struct anchor_request req;
	size_t n = 0;
	sigset_t none;
	int defs;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	held = mmap(NULL, ANCHOR_MAX * sizeof(*held), PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (held == MAP_FAILED)
		_exit(1);
	while (read_all(0, &req, sizeof(req))) {
		int32_t reply = -ENOSPC;

		if (n < ANCHOR_MAX) {
			held[n].fd = perf_open(req.id, 0, 0, false);
			reply = held[n].fd < 0 ? -errno : 0;
			if (held[n].fd >= 0) {
				memcpy(held[n].name, req.name, EVENT_NAME_MAX);
				held[n].name[EVENT_NAME_MAX - 1] = '\0';
				n++;
			}
		}
		if (write(1, &reply, sizeof(reply)) != (ssize_t)sizeof(reply))
			break;
	}
	for (size_t i = 0; i < n; i++)
		close(held[i].fd);
	defs = open(defs_path, O_WRONLY | O_APPEND | O_CLOEXEC);
	for (size_t i = 0; defs >= 0 && i < n; i++) {
		char line[2 + 32 + 1 + EVENT_NAME_MAX + 2];
		size_t len = 0;

		line[len++] = '-';
		line[len++] = ':';
		for (const char *c = group; *c && len < 2 + 32; c++)
			line[len++] = *c;
		line[len++] = '/';
		for (const char *c = held[i].name; *c; c++)
			line[len++] = *c;
		line[len++] = '\n';
		if (write(defs, line, len) < 0) {
			/* (busy: another process holds it; its own anchor deletes it) */
		}
	}
	_exit(0);
}

static int start_anchor(struct uprobes *u, char **why)
{
	int down[2], up[2];
	pid_t pid;

	if (pipe2(down, O_CLOEXEC) || pipe2(up, O_CLOEXEC)) {
		*why = xasprintf("cannot make a pipe: %s", strerror(errno));
		return -errno;
	}
	pid = fork();
	if (pid < 0) {
		int err = errno;

		close(down[0]);
		close(down[1]);
		close(up[0]);
		close(up[1]);
		*why = xasprintf("cannot fork its anchor: %s", strerror(err));
		return -err;
	}
	if (!pid) {
		setsid(); /* (no terminal: its signals are not for the anchor) */
		if (dup2(down[0], 0) < 0 || dup2(up[1], 1) < 0)
			_exit(1);
		syscall(SYS_close_range, 2u, ~0u, 0u);
		anchor_main(u->group, TRACEFS "/uprobe_events");
	}
	close(down[0]);
	close(up[1]);
	u->anchor = pid;
	u->to_anchor = down[1];
	u->from_anchor = up[0];
	return 0;
}

/* --- tracefs ----------------------------------------------------------------------------------- */

/* Mounted as perf mounts it when it is not. */
static int open_definitions(char **why)
{
	int fd = open(TRACEFS "/uprobe_events", O_WRONLY | O_APPEND | O_CLOEXEC);
	struct stat st;

	if (fd < 0 && errno == ENOENT && !stat(TRACEFS, &st) &&
	    !mount("nodev", TRACEFS, "tracefs", 0, NULL))
		fd = open(TRACEFS "/uprobe_events", O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	if (errno == EACCES || errno == EPERM)
		*why = xstrdup(TRACEFS "/uprobe_events: not allowed: coverage defines uprobes, which "
			       "needs root");
	else if (errno == ENOENT)
		*why = xstrdup(TRACEFS "/uprobe_events: no such file: tracefs is not mounted there "
			       "(mount -t tracefs nodev " TRACEFS ") or the kernel has no uprobe "
			       "events (CONFIG_UPROBE_EVENTS)");
	else
		*why = xasprintf(TRACEFS "/uprobe_events: %s", strerror(errno));
	return -1;
}

/* The definitions a proftop that is gone left (its anchor killed too): deleted. */
static void delete_stale(int defs)
{
	FILE *f = fopen(TRACEFS "/uprobe_events", "re");
	char line[4096];

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char group[64], name[64], del[160];
		int pid, len;

		if (sscanf(line, "p:%63[^/]/%63s", group, name) != 2 ||
		    sscanf(group, "proftop_%d", &pid) != 1 || pid <= 0 ||
		    !(kill(pid, 0) && errno == ESRCH))
			continue;
		len = snprintf(del, sizeof(del), "-:%s/%s\n", group, name);
		if (write(defs, del, (size_t)len) < 0) {
			/* (still held: its anchor is still closing, and deletes it) */
		}
	}
	fclose(f);
}

/* The sets made in this process: each defines its events in a group of its own. */
static _Atomic unsigned sets;

struct uprobes *uprobes_new(uint64_t cap, pid_t tid, int signo, char **why)
{
	struct uprobes *u;
	int defs;

	*why = NULL;
	defs = open_definitions(why);
	if (defs < 0)
		return NULL;
	u = xcalloc(1, sizeof(*u));
	u->cap = cap;
	u->owner = tid;
	u->signo = signo;
	u->defs = defs;
	u->to_anchor = u->from_anchor = -1;
	/* (a group of its own: an earlier set's anchor may still be deleting its events) */
	snprintf(u->group, sizeof(u->group), "proftop_%d_%u", (int)getpid(), sets++);
	idmap_init(&u->event_index);
	delete_stale(defs);
	if (start_anchor(u, why)) {
		uprobes_free(u);
		return NULL;
	}
	return u;
}

static void close_probe(struct uprobes *u, struct probe *p)
{
	if (p->fd >= 0) {
		if ((size_t)p->fd < u->nof_fd)
			u->of_fd[p->fd] = 0;
		close(p->fd);
		u->open--;
	}
	p->fd = -1;
}

void uprobes_free(struct uprobes *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->n; i++)
		close_probe(u, &u->probes[i]);
	/* The anchor sees the end of its pipe: it closes its events and deletes them. */
	if (u->to_anchor >= 0)
		close(u->to_anchor);
	if (u->from_anchor >= 0)
		close(u->from_anchor);
	close(u->defs);
	for (size_t i = 0; i < u->npaths; i++)
		free(u->paths[i]);
	free(u->paths);
	free(u->events);
	idmap_free(&u->event_index);
	free(u->probes);
	free(u->of_fd);
	free(u);
}

static const char *intern_path(struct uprobes *u, const char *path)
{
	for (size_t i = u->npaths; i > 0; i--)
		if (!strcmp(u->paths[i - 1], path))
			return u->paths[i - 1];
	xgrow((void **)&u->paths, &u->paths_cap, u->npaths + 1, sizeof(*u->paths));
	u->paths[u->npaths] = xstrdup(path);
	return u->paths[u->npaths++];
}

static int read_id(const struct uprobes *u, size_t k, uint64_t *id)
{
	char path[128], text[32];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), TRACEFS "/events/%s/p%zu/id", u->group, k);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	text[n] = '\0';
	*id = strtoull(text, NULL, 10);
	return *id ? 0 : -EIO;
}

/* The event of (path, offset): defined, and held by the anchor, on first use. */
static int event_of(struct uprobes *u, const char *path, uint64_t offset, uint64_t *id)
{
	struct anchor_request req = { 0 };
	uint64_t key[2] = { offset, 0 };
	size_t k;
	uint64_t h;
	uint32_t at;
	int32_t reply;
	char *line;
	int err;

	for (const char *c = path; *c; c++)
		if ((unsigned char)*c <= ' ' || *c == 0x7f)
			return -EINVAL; /* (tracefs splits its lines at white space) */
	key[1] = util_hash_bytes(path, strlen(path), 0);
	for (uint64_t seed = 0;; seed++) {
		h = util_hash_bytes(key, sizeof(key), seed);
		at = idmap_get(&u->event_index, h);
		if (at == IDMAP_MISSING)
			break;
		if (u->events[at].offset == offset && !strcmp(u->events[at].path, path)) {
			*id = u->events[at].id;
			return 0;
		}
	}
	k = u->nevents;
	line = xasprintf("p:%s/p%zu %s:0x%llx\n", u->group, k, path, (unsigned long long)offset);
	err = write(u->defs, line, strlen(line)) < 0 ? -errno : 0;
	free(line);
	if (err)
		return err;
	err = read_id(u, k, id);
	if (err)
		return err;
	req.id = *id;
	snprintf(req.name, sizeof(req.name), "p%zu", k);
	if (write(u->to_anchor, &req, sizeof(req)) != (ssize_t)sizeof(req) ||
	    !read_all(u->from_anchor, &reply, sizeof(reply)))
		return -EPIPE;
	if (reply)
		return reply;
	xgrow((void **)&u->events, &u->events_cap, u->nevents + 1, sizeof(*u->events));
	u->events[u->nevents++] = (struct event){ *id, offset, intern_path(u, path) };
	idmap_put(&u->event_index, h, (uint32_t)k);
	return 0;
}

int uprobes_add(struct uprobes *u, pid_t pid, const char *path, uint64_t offset)
{
	struct probe p = { .fd = -1 };
	struct f_owner_ex owner = { F_OWNER_TID, u->owner };
	uint64_t id = 0;
	int err = event_of(u, path, offset, &id);

	if (err)
		return err;
	p.fd = perf_open(id, pid, u->cap, true);
	if (p.fd < 0)
		return -errno;
	u->open++;
	if (u->cap && (fcntl(p.fd, F_SETOWN_EX, &owner) || fcntl(p.fd, F_SETSIG, u->signo) ||
		       fcntl(p.fd, F_SETFL, O_ASYNC))) {
		err = -errno;
		close_probe(u, &p);
		return err;
	}
	if ((size_t)p.fd >= u->nof_fd) {
		size_t old = u->nof_fd;

		xgrow((void **)&u->of_fd, &u->nof_fd, (size_t)p.fd + 1, sizeof(*u->of_fd));
		memset(u->of_fd + old, 0, (u->nof_fd - old) * sizeof(*u->of_fd));
	}
	u->of_fd[p.fd] = (uint32_t)u->n + 1;
	xgrow((void **)&u->probes, &u->cap_probes, u->n + 1, sizeof(*u->probes));
	u->probes[u->n] = p;
	return (int)u->n++;
}

static uint64_t read_count(int fd)
{
	uint64_t count = 0;

	return read(fd, &count, sizeof(count)) == (ssize_t)sizeof(count) ? count : 0;
}

static bool reap(struct uprobes *u, struct probe *p)
{
	uint64_t count;

	if (p->fd < 0 || !u->cap)
		return false;
	count = read_count(p->fd);
	if (count < u->cap)
		return false;
	p->count = count;
	p->capped = true;
	close_probe(u, p);
	return true;
}

bool uprobes_reap_fd(struct uprobes *u, int fd)
{
	uint32_t at = fd >= 0 && (size_t)fd < u->nof_fd ? u->of_fd[fd] : 0;

	return at && reap(u, &u->probes[at - 1]);
}

size_t uprobes_reap(struct uprobes *u)
{
	size_t reaped = 0;

	for (size_t i = 0; i < u->n && u->cap; i++)
		reaped += reap(u, &u->probes[i]);
	return reaped;
}

uint64_t uprobes_count(struct uprobes *u, size_t i, bool *capped)
{
	struct probe *p = &u->probes[i];

	*capped = p->capped;
	return p->fd >= 0 ? read_count(p->fd) : p->count;
}

size_t uprobes_size(const struct uprobes *u)
{
	return u->n;
}

size_t uprobes_open(const struct uprobes *u)
{
	return u->open;
}
