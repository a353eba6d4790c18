/* uprobes.c — instruction counts with multi-uprobe BPF links per process and file
 * (uprobes.h). The program is a few instructions written here (no compiler, no libbpf):
 *
 *	cookie = bpf_get_attach_cookie(ctx)      index in the low 32 bits, generation above
 *	counter = lookup(map, index)
 *	if (!counter || lookup(map, n + index / CHUNK) != cookie >> 32) return 0
 *	if (cap && *counter >= cap) return 0
 *	atomic *counter += 1
 *
 * The instructions are linked in chunks of CHUNK, each with a generation slot after the n
 * counters: uprobes_recap() makes a chunk's link again without its capped instructions (a few
 * hundred registrations, not the whole file's) and attaches it before the old one is closed;
 * from the moment the chunk's slot names the new generation, only the new link's executions
 * count. */
#include "proftop/uprobes.h"

#include "proftop/util.h"

#include <errno.h>
#include <linux/bpf.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Newer than the kernel headers this builds with (Linux 6.6's UAPI). */
#define ATTACH_UPROBE_MULTI 48u
#define FUNC_GET_ATTACH_COOKIE 174

#define CHUNK_SHIFT 8
#define CHUNK (1u << CHUNK_SHIFT)

/* The link of the indexes [i * CHUNK, (i + 1) * CHUNK) not removed. */
struct chunk {
	int link;                  /* -1: none (none left, or the process is gone) */
	uint32_t generation;
	size_t placed;
};

struct uprobes {
	int map, prog;             /* -1: none */
	uint64_t *counts;          /* the map's values, mapped: n counters, then the chunks' generations */
	size_t mapped;
	size_t n;
	uint64_t cap;
	pid_t pid;
	char *path;
	uint64_t *offsets;         /* the file's offsets, by index */
	bool *removed;             /* per index: capped, out of its chunk's link */
	struct chunk *chunks;
	size_t nchunks;
};

static long bpf(int cmd, void *attr, size_t size)
{
	return syscall(SYS_bpf, cmd, attr, size);
}

#define INSN(code, dst, src, off, imm) ((struct bpf_insn){ (code), (dst), (src), (off), (imm) })

/* At prog[n]: r0 = the map's value for the key at r10 + key_at; returns the next index. */
static int lookup(struct bpf_insn *prog, int n, int map, int16_t key_at)
{
	prog[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_X, 2, 10, 0, 0);
	prog[n++] = INSN(BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, key_at);
	prog[n++] = INSN(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, map);
	prog[n++] = INSN(0, 0, 0, 0, 0);
	prog[n++] = INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem);
	return n;
}

static int load_program(int map, uint32_t slots_from, uint64_t cap, char **why)
{
	struct bpf_insn prog[32];
	union bpf_attr attr;
	int n = 0, exit_at, fd;
	int jumps[4], njumps = 0;

	prog[n++] = INSN(BPF_JMP | BPF_CALL, 0, 0, 0, FUNC_GET_ATTACH_COOKIE);
	prog[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_X, 6, 0, 0, 0);          /* r6 = cookie */
	prog[n++] = INSN(BPF_STX | BPF_MEM | BPF_W, 10, 0, -4, 0);          /* key = index */
	n = lookup(prog, n, map, -4);
	jumps[njumps++] = n;
	prog[n++] = INSN(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 0, 0);            /* no counter */
	prog[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_X, 7, 0, 0, 0);          /* r7 = counter */
	prog[n++] = INSN(BPF_ALU | BPF_MOV | BPF_X, 8, 6, 0, 0);            /* r8 = index */
	prog[n++] = INSN(BPF_ALU64 | BPF_RSH | BPF_K, 8, 0, 0, CHUNK_SHIFT);
	prog[n++] = INSN(BPF_ALU64 | BPF_ADD | BPF_K, 8, 0, 0, (int32_t)slots_from);
	prog[n++] = INSN(BPF_STX | BPF_MEM | BPF_W, 10, 8, -8, 0);          /* key = its slot */
	n = lookup(prog, n, map, -8);
	jumps[njumps++] = n;
	prog[n++] = INSN(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 0, 0);            /* no slot */
	prog[n++] = INSN(BPF_LDX | BPF_MEM | BPF_DW, 1, 0, 0, 0);           /* r1 = generation */
	prog[n++] = INSN(BPF_ALU64 | BPF_RSH | BPF_K, 6, 0, 0, 32);
	jumps[njumps++] = n;
	prog[n++] = INSN(BPF_JMP | BPF_JNE | BPF_X, 6, 1, 0, 0);            /* an old link's */
	if (cap) {
		prog[n++] = INSN(BPF_LDX | BPF_MEM | BPF_DW, 1, 7, 0, 0);
		jumps[njumps++] = n;
		prog[n++] = INSN(BPF_JMP | BPF_JGE | BPF_K, 1, 0, 0, (int32_t)cap);
	}
	prog[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_K, 1, 0, 0, 1);
	prog[n++] = INSN(BPF_STX | BPF_ATOMIC | BPF_DW, 7, 1, 0, BPF_ADD);
	exit_at = n;
	prog[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0);
	prog[n++] = INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	for (int i = 0; i < njumps; i++)
		prog[jumps[i]].off = (int16_t)(exit_at - jumps[i] - 1);

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_KPROBE;
	attr.expected_attach_type = ATTACH_UPROBE_MULTI;
	attr.insns = (uint64_t)(uintptr_t)prog;
	attr.insn_cnt = (uint32_t)n;
	attr.license = (uint64_t)(uintptr_t)"GPL";
	fd = (int)bpf(BPF_PROG_LOAD, &attr, sizeof(attr));
	if (fd < 0) {
		int err = errno;

		*why = xasprintf("the kernel refused its BPF program: %s%s", strerror(err),
				 err == EINVAL ? " (multi-uprobe programs need Linux 6.6 or later)"
				 : err == EPERM || err == EACCES
					 ? " (coverage loads a BPF program: it needs root, or "
					   "CAP_BPF and CAP_PERFMON)"
					 : "");
		errno = err;
	}
	return fd;
}

/* The link of chunk c's indexes not removed, their cookies of generation; -errno when refused
 * (-ENOENT: none left). */
static int make_link(struct uprobes *u, size_t c, uint32_t generation, size_t *placed)
{
	uint64_t offsets[CHUNK], cookies[CHUNK];
	size_t end = (c + 1) * CHUNK < u->n ? (c + 1) * CHUNK : u->n;
	/* link_create's attr: prog_fd, target_fd, attach_type, flags, then (at 16) uprobe_multi's
	 * path, offsets, ref_ctr_offsets, cookies, cnt, flags, pid. */
	uint64_t attr[16] = { 0 };
	uint32_t *words = (uint32_t *)attr;
	size_t k = 0;
	int fd;

	for (size_t i = c * CHUNK; i < end; i++)
		if (!u->removed[i]) {
			offsets[k] = u->offsets[i];
			cookies[k++] = (uint64_t)generation << 32 | i;
		}
	*placed = k;
	if (!k)
		return -ENOENT;
	words[0] = (uint32_t)u->prog;
	words[2] = ATTACH_UPROBE_MULTI;
	attr[2] = (uint64_t)(uintptr_t)u->path;
	attr[3] = (uint64_t)(uintptr_t)offsets;
	attr[5] = (uint64_t)(uintptr_t)cookies;
	words[12] = (uint32_t)k;
	words[14] = (uint32_t)u->pid;
	fd = (int)bpf(BPF_LINK_CREATE, attr, sizeof(attr));
	return fd < 0 ? -errno : fd;
}

static void set_generation(struct uprobes *u, size_t c, uint32_t generation)
{
	u->chunks[c].generation = generation;
	__atomic_store_n(&u->counts[u->n + c], (uint64_t)generation, __ATOMIC_SEQ_CST);
}

struct uprobes *uprobes_attach(pid_t pid, const char *path, const uint64_t *offsets, size_t n,
			       uint64_t cap, int *err, char **why)
{
	struct uprobes *u = xcalloc(1, sizeof(*u));
	union bpf_attr attr;
	int fd = 0;

	*why = NULL;
	u->map = u->prog = -1;
	u->n = n;
	u->cap = cap > INT32_MAX ? INT32_MAX : cap;
	u->pid = pid;
	u->path = xstrdup(path);
	u->offsets = xmalloc((n ? n : 1) * sizeof(*u->offsets));
	memcpy(u->offsets, offsets, n * sizeof(*offsets));
	u->removed = xcalloc(n ? n : 1, sizeof(*u->removed));
	u->nchunks = (n + CHUNK - 1) / CHUNK;
	u->chunks = xcalloc(u->nchunks ? u->nchunks : 1, sizeof(*u->chunks));
	for (size_t c = 0; c < u->nchunks; c++)
		u->chunks[c].link = -1;
	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_MAP_TYPE_ARRAY;
	attr.key_size = 4;
	attr.value_size = 8;
	attr.max_entries = (uint32_t)(n + u->nchunks + 1);
	attr.map_flags = BPF_F_MMAPABLE;
	u->map = (int)bpf(BPF_MAP_CREATE, &attr, sizeof(attr));
	if (u->map < 0) {
		*err = -errno;
		*why = xasprintf("the kernel refused a BPF map: %s%s", strerror(errno),
				 errno == EPERM ? " (coverage needs root, or CAP_BPF and CAP_PERFMON)"
						: "");
		goto fail;
	}
	u->mapped = ((n + u->nchunks + 1) * sizeof(uint64_t) + 4095) & ~(size_t)4095;
	u->counts = mmap(NULL, u->mapped, PROT_READ | PROT_WRITE, MAP_SHARED, u->map, 0);
	if (u->counts == MAP_FAILED) {
		u->counts = NULL;
		*err = -errno;
		*why = xasprintf("cannot map the counters: %s", strerror(errno));
		goto fail;
	}
	u->prog = load_program(u->map, (uint32_t)n, u->cap, why);
	if (u->prog < 0) {
		*err = -errno;
		goto fail;
	}
	for (size_t c = 0; c < u->nchunks && fd >= 0; c++) {
		set_generation(u, c, 0);
		fd = make_link(u, c, 0, &u->chunks[c].placed);
		u->chunks[c].link = fd;
	}
	if (fd < 0) {
		*err = fd;
		*why = xasprintf("the kernel refused the probes: %s%s", strerror(-fd),
				 fd == -EPERM || fd == -EACCES
					 ? " (coverage needs root, or CAP_BPF and CAP_PERFMON)"
					 : fd == -524 ? " (an instruction its uprobes do not probe)" : "");
		if (fd == -524) /* (the kernel's ENOTSUPP, which has no userspace name) */
			*err = -ENOTSUP;
		goto fail;
	}
	return u;
fail:
	uprobes_detach(u);
	return NULL;
}

static void *close_link(void *arg)
{
	close((int)(intptr_t)arg);
	return NULL;
}

void uprobes_close_links(const int *links, size_t n)
{
	enum { AT_ONCE = 64 };
	pthread_t closers[AT_ONCE];
	bool started[AT_ONCE];

	for (size_t from = 0; from < n; from += AT_ONCE) {
		size_t k = n - from < AT_ONCE ? n - from : AT_ONCE;

		for (size_t i = 0; i < k; i++)
			started[i] = !pthread_create(&closers[i], NULL, close_link,
						     (void *)(intptr_t)links[from + i]);
		for (size_t i = 0; i < k; i++) {
			if (started[i])
				pthread_join(closers[i], NULL);
			else
				close(links[from + i]);
		}
	}
}

void uprobes_retire(struct uprobes *u)
{
	if (u->nchunks) { /* (their breakpoints go with them) */
		int *links = xmalloc(u->nchunks * sizeof(*links));
		size_t n = 0;

		for (size_t c = 0; c < u->nchunks; c++) {
			if (u->chunks[c].link >= 0)
				links[n++] = u->chunks[c].link;
			u->chunks[c].link = -1;
			u->chunks[c].placed = 0;
		}
		uprobes_close_links(links, n);
		free(links);
	}
	if (u->prog >= 0)
		close(u->prog);
	if (u->map >= 0)
		close(u->map); /* (the counters stay mapped) */
	u->prog = u->map = -1;
}

void uprobes_detach(struct uprobes *u)
{
	if (!u)
		return;
	uprobes_retire(u);
	free(u->chunks);
	if (u->counts)
		munmap(u->counts, u->mapped);
	if (u->map >= 0)
		close(u->map);
	free(u->path);
	free(u->offsets);
	free(u->removed);
	free(u);
}

uint64_t uprobes_count(const struct uprobes *u, size_t i)
{
	return i < u->n ? __atomic_load_n(&u->counts[i], __ATOMIC_RELAXED) : 0;
}

/* Chunk c made again without its capped instructions: whether it was, its old link to close
 * in *old (-1: none), or -errno (the old link stays). */
static int recap_chunk(struct uprobes *u, size_t c, int *old)
{
	struct chunk *k = &u->chunks[c];
	size_t end = (c + 1) * CHUNK < u->n ? (c + 1) * CHUNK : u->n, placed = 0;
	bool newly = false, was[CHUNK];
	int fd;

	*old = -1;
	if (k->link < 0)
		return 0;
	for (size_t i = c * CHUNK; i < end; i++)
		newly |= !u->removed[i] && uprobes_count(u, i) >= u->cap;
	if (!newly)
		return 0;
	memcpy(was, u->removed + c * CHUNK, (end - c * CHUNK) * sizeof(*was));
	for (size_t i = c * CHUNK; i < end; i++)
		u->removed[i] |= uprobes_count(u, i) >= u->cap;
	fd = make_link(u, c, k->generation + 1, &placed);
	/* None left (-ENOENT) or the process is gone (-ESRCH): the old link only goes. */
	if (fd < 0 && fd != -ENOENT && fd != -ESRCH) { /* (tried again next time) */
		memcpy(u->removed + c * CHUNK, was, (end - c * CHUNK) * sizeof(*was));
		return fd;
	}
	/* The new link counts from now on; the old one's breakpoints go with it. */
	set_generation(u, c, k->generation + 1);
	*old = k->link;
	k->link = fd >= 0 ? fd : -1;
	k->placed = fd >= 0 ? placed : 0;
	return 1;
}

size_t uprobes_recap(struct uprobes *u, int *old_links, size_t max)
{
	size_t nold = 0;

	for (size_t c = 0; u->cap && c < u->nchunks && nold < max; c++)
		if (recap_chunk(u, c, &old_links[nold]) > 0 && old_links[nold] >= 0)
			nold++;
	return nold;
}

size_t uprobes_placed(const struct uprobes *u)
{
	size_t placed = 0;

	for (size_t c = 0; c < u->nchunks; c++)
		placed += u->chunks[c].placed;
	return placed;
}

bool uprobes_probeable(const unsigned char *code, size_t len)
{
	size_t i = 0;

	for (; i < len; i++) {
		switch (code[i]) {
		case 0xf0: /* lock */
		case 0x26: /* es, cs, ss, ds */
		case 0x2e:
		case 0x36:
		case 0x3e:
			return false;
		case 0x64: /* fs, gs, operand and address size, rep */
		case 0x65:
		case 0x66:
		case 0x67:
		case 0xf2:
		case 0xf3:
			continue;
		default:
			break;
		}
		break;
	}
	if (i < len && (code[i] & 0xf0) == 0x40) /* REX */
		i++;
	if (i >= len)
		return false;
	switch (code[i]) {
	case 0xcc: /* int3, int n, int1, hlt, in/out */
	case 0xcd:
	case 0xf1:
	case 0xf4:
	case 0xe4: case 0xe5: case 0xe6: case 0xe7:
	case 0xec: case 0xed: case 0xee: case 0xef:
	case 0x6c: case 0x6d: case 0x6e: case 0x6f:
		return false;
	default:
		return true;
	}
}
