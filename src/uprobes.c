/* uprobes.c — instruction counts with the kernel's uprobes (uprobes.h). */
#include "proftop/uprobes.h"

#include "proftop/util.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

struct probe {
	int fd;                    /* -1: closed */
	uint64_t count;            /* as read when closed */
	bool capped;
};

struct uprobes {
	uint64_t cap;
	pid_t owner;               /* the thread the capped probes signal */
	int signo;
	int type;
	struct probe *probes;
	size_t n, cap_probes, open;
	uint32_t *of_fd;           /* per fd: its probe's index + 1 (0: none) */
	size_t nof_fd;
};

int uprobes_pmu_type(void)
{
	FILE *f = fopen("/sys/bus/event_source/devices/uprobe/type", "re");
	int type = -1;

	if (!f)
		return -errno;
	if (fscanf(f, "%d", &type) != 1 || type < 0)
		type = -EINVAL;
	fclose(f);
	return type;
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

struct uprobes *uprobes_new(uint64_t cap, pid_t tid, int signo)
{
	struct uprobes *u = xcalloc(1, sizeof(*u));

	u->cap = cap;
	u->owner = tid;
	u->signo = signo;
	u->type = uprobes_pmu_type();
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
	free(u->probes);
	free(u->of_fd);
	free(u);
}

int uprobes_add(struct uprobes *u, pid_t pid, const char *path, uint64_t offset)
{
	struct perf_event_attr attr;
	struct probe p = { .fd = -1 };
	struct f_owner_ex owner = { F_OWNER_TID, u->owner };
	int err;

	if (u->type < 0)
		return u->type;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = (uint32_t)u->type;
	attr.config1 = (uint64_t)(uintptr_t)path; /* (the kernel copies the path at open) */
	attr.config2 = offset;
	/* Not inherited: the kernel reads config1 again at each inheriting clone, from the
	 * cloning process's memory, where the pointer means nothing (the clone fails: EFAULT). */
	if (u->cap) {
		attr.sample_period = u->cap;
		attr.wakeup_events = 1;
	}
	p.fd = (int)syscall(SYS_perf_event_open, &attr, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
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
