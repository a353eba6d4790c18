/* blocked.c — threads found waiting at the attach, and what /proc tells of their waits
 * (blocked.h).
 *
 * Every /proc file is read whole into a bounded buffer and parsed by the pure functions first in
 * this file; a file that cannot be read or does not parse leaves that part of the wait unknown.
 * A scan owns the records it builds: one per waiting thread, complete but for the time the wait
 * counts from, which blocked_confirm() writes. */
#include "proftop/blocked.h"

#include "proftop/sample.h"
#include "proftop/util.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <fcntl.h>
#include <asm/perf_regs.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* /proc/PID/task/TID/stack holds one short line per frame. */
#define KSTACK_TEXT_MAX 8192
#define STATUS_TEXT_MAX 4096
#define LINE_TEXT_MAX 512
/* A record's size is a perf_event_header's, 16 bits; records are 8-byte aligned. */
#define RECORD_MAX 65528u

/* --- the pure part ---------------------------------------------------------------------------- */

bool blocked_state_waits(char state)
{
	return state == 'S' || state == 'D' || state == 'T' || state == 't';
}

/* The value after KEY at the start of a line of text, read with format; false when absent. */
static bool status_field(const char *text, const char *key, const char *format, void *out)
{
	size_t klen = strlen(key);
	const char *p = text;

	while (p && *p) {
		if (!strncmp(p, key, klen))
			return sscanf(p + klen, format, out) == 1;
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return false;
}

int blocked_parse_status(const char *text, char *state, uint64_t *switches)
{
	uint64_t voluntary, nonvoluntary;

	if (!status_field(text, "State:", " %c", state) ||
	    !status_field(text, "voluntary_ctxt_switches:", " %" SCNu64, &voluntary) ||
	    !status_field(text, "nonvoluntary_ctxt_switches:", " %" SCNu64, &nonvoluntary))
		return -EINVAL;
	*switches = voluntary + nonvoluntary;
	return 0;
}

/* One hexadecimal word "0x..." ending at a space or the end; false for anything else. */
static bool hex_word(const char **at, uint64_t *value)
{
	const char *p = *at;
	char *end;

	if (p[0] != '0' || p[1] != 'x' || !((p[2] >= '0' && p[2] <= '9') || (p[2] >= 'a' && p[2] <= 'f')))
		return false;
	errno = 0;
	*value = strtoull(p, &end, 16);
	if (errno || (*end && *end != ' ' && *end != '\n'))
		return false;
	*at = *end == ' ' ? end + 1 : end;
	return true;
}

int blocked_parse_syscall(const char *text, uint64_t *sp, uint64_t *ip)
{
	uint64_t words[8];
	const char *p = text;
	char *end;
	long nr;
	int n = 0;

	if (!strncmp(text, "running", 7))
		return -EAGAIN;
	errno = 0;
	nr = strtol(p, &end, 10);
	if (errno || end == p || *end != ' ' || nr < -1)
		return -EINVAL;
	p = end + 1;
	while (*p && *p != '\n' && n < 8)
		if (!hex_word(&p, &words[n++]))
			return -EINVAL;
	/* "-1 SP PC" outside a system call, "NR" and six arguments before them in one. */
	if ((*p && *p != '\n') || n != (nr == -1 ? 2 : 8))
		return -EINVAL;
	*sp = words[n - 2];
	*ip = words[n - 1];
	return 0;
}

/* A kernel name: printable, no space, not empty, shorter than BLOCKED_NAME_MAX. */
static bool kernel_name(const char *s, size_t len)
{
	if (!len || len >= BLOCKED_NAME_MAX)
		return false;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] <= ' ' || (unsigned char)s[i] >= 0x7f)
			return false;
	return true;
}

/* Append name and module (len bytes each) as two terminated strings; false when out is full. */
static bool put_frame(char *out, size_t cap, size_t *at, const char *name, size_t name_len,
		      const char *module, size_t module_len)
{
	if (*at + name_len + module_len + 2 > cap)
		return false;
	memcpy(out + *at, name, name_len);
	out[*at + name_len] = '\0';
	memcpy(out + *at + name_len + 1, module, module_len);
	out[*at + name_len + 1 + module_len] = '\0';
	*at += name_len + module_len + 2;
	return true;
}

/* One line "[<ADDR>] NAME+0xOFF/0xSIZE" with " [MODULE]" after it or not. */
static bool kstack_line(const char *line, size_t len, char *out, size_t cap, size_t *at)
{
	const char *end = line + len, *name, *plus, *module = "", *p;
	size_t module_len = 0;

	p = memchr(line, ']', len);
	if (line[0] != '[' || !p || p + 1 >= end || p[1] != ' ')
		return false;
	name = p + 2;
	plus = memchr(name, '+', (size_t)(end - name));
	if (!plus || !kernel_name(name, (size_t)(plus - name)))
		return false;
	p = memchr(plus, ' ', (size_t)(end - plus));
	if (p) { /* " [MODULE]" */
		if (p + 3 > end || p[1] != '[' || end[-1] != ']')
			return false;
		module = p + 2;
		module_len = (size_t)(end - 1 - module);
		if (!kernel_name(module, module_len))
			return false;
	}
	return put_frame(out, cap, at, name, (size_t)(plus - name), module, module_len);
}

size_t blocked_parse_kstack(const char *text, char *out, size_t cap)
{
	size_t at = 0;
	int frames = 0;

	for (const char *line = text; *line && frames < BLOCKED_KFRAMES_MAX; frames++) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);

		if (!kstack_line(line, len, out, cap, &at))
			break;
		line += len + (nl != NULL);
	}
	return at;
}

bool blocked_next_kframe(const char **at, const char *end, const char **name,
			 const char **module)
{
	const char *p = *at, *z1, *z2;

	if (p >= end || !(z1 = memchr(p, '\0', (size_t)(end - p))) ||
	    !(z2 = memchr(z1 + 1, '\0', (size_t)(end - z1 - 1))) || z1 == p)
		return false;
	*name = p;
	*module = z1[1] ? z1 + 1 : NULL;
	*at = z2 + 1;
	return true;
}

/* --- reading /proc ---------------------------------------------------------------------------- */

struct waiter {
	pid_t pid, tid;
	uint64_t switches;          /* when first read */
	unsigned char *record;      /* SAMPLE_RECORD_BLOCKED */
	size_t len;
};

struct blocked {
	struct waiter *waiters;
	size_t n, cap;
	unsigned char *scratch;     /* RECORD_MAX bytes: a record being built */
};

static size_t read_task_file(pid_t pid, pid_t tid, const char *name, char *buf, size_t size)
{
	char path[96];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/%s", (int)pid, (int)tid, name);
	return util_read_small(path, buf, size);
}

/* The thread's state and switches now; false when its status cannot be read (it ended). */
static bool task_state(pid_t pid, pid_t tid, char *state, uint64_t *switches)
{
	char text[STATUS_TEXT_MAX];

	return read_task_file(pid, tid, "status", text, sizeof(text)) &&
	       blocked_parse_status(text, state, switches) == 0;
}

/* The kernel's frames (root), else the function the thread waits in, in the record's form. */
static size_t kernel_frames(pid_t pid, pid_t tid, char *out, size_t cap)
{
	char text[KSTACK_TEXT_MAX];
	size_t at = 0, len;

	if (read_task_file(pid, tid, "stack", text, sizeof(text)) &&
	    (at = blocked_parse_kstack(text, out, cap)))
		return at;
	len = read_task_file(pid, tid, "wchan", text, LINE_TEXT_MAX);
	while (len && text[len - 1] == '\n')
		text[--len] = '\0';
	/* "0": no wait known, or the name hidden from this user */
	if (len && !(len == 1 && text[0] == '0') && kernel_name(text, len))
		put_frame(out, cap, &at, text, len, "", 0);
	return at;
}

/* Up to want bytes of pid's memory at addr into buf; the bytes read (0 when unreadable). */
static size_t read_stack(pid_t pid, uint64_t addr, unsigned char *buf, size_t want)
{
	char path[64];
	ssize_t got;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	/* (a read that meets an unmapped page stops there: the top of the stack) */
	got = pread(fd, buf, want, (off_t)addr);
	close(fd);
	return got > 0 ? (size_t)got & ~(size_t)7 : 0;
}

/* The record of tid's wait: registers, stack and kernel frames as far as they can be read. */
static void build_record(struct waiter *w, uint32_t stack_bytes, unsigned char *scratch)
{
	char text[LINE_TEXT_MAX], kernel[BLOCKED_KERNEL_MAX];
	struct blockedrec rec = { .pid = (uint32_t)w->pid, .tid = (uint32_t)w->tid };
	size_t klen = kernel_frames(w->pid, w->tid, kernel, sizeof(kernel));
	size_t room = RECORD_MAX - sizeof(struct perf_event_header) - sizeof(rec) - klen;
	struct perf_event_header h = { SAMPLE_RECORD_BLOCKED, 0, 0 };
	unsigned char *stack = scratch + sizeof(h) + sizeof(rec);

	if (!read_task_file(w->pid, w->tid, "syscall", text, sizeof(text)) ||
	    blocked_parse_syscall(text, &rec.sp, &rec.ip))
		rec.ip = rec.sp = 0;
	if (rec.ip && stack_bytes)
		rec.stack_size = (uint32_t)read_stack(w->pid, rec.sp, stack,
						      stack_bytes < room ? stack_bytes : room);
	rec.kernel_size = (uint32_t)klen;
	memcpy(stack + rec.stack_size, kernel, klen);
	w->len = (sizeof(h) + sizeof(rec) + rec.stack_size + klen + 7) & ~(size_t)7;
	memset(stack + rec.stack_size + klen, 0, w->len - (sizeof(h) + sizeof(rec) + rec.stack_size + klen));
	h.size = (uint16_t)w->len;
	memcpy(scratch, &h, sizeof(h));
	memcpy(scratch + sizeof(h), &rec, sizeof(rec));
	w->record = xmalloc(w->len);
	memcpy(w->record, scratch, w->len);
}

struct blocked *blocked_scan(const struct blocked_thread *threads, size_t n, uint32_t stack_bytes)
{
	struct blocked *b = xcalloc(1, sizeof(*b));

	b->scratch = xmalloc(RECORD_MAX);
	for (size_t i = 0; i < n; i++) {
		struct waiter w = { .pid = threads[i].pid, .tid = threads[i].tid };
		char state;

		if (!task_state(w.pid, w.tid, &state, &w.switches) || !blocked_state_waits(state))
			continue;
		build_record(&w, stack_bytes, b->scratch);
		xgrow((void **)&b->waiters, &b->cap, b->n + 1, sizeof(*b->waiters));
		b->waiters[b->n++] = w;
	}
	free(b->scratch);
	b->scratch = NULL;
	if (!b->n) {
		blocked_free(b);
		return NULL;
	}
	return b;
}

size_t blocked_confirm(struct blocked *b, uint64_t since_ns)
{
	size_t kept = 0;

	for (size_t i = 0; i < b->n; i++) {
		struct waiter *w = &b->waiters[i];
		uint64_t switches;
		char state;

		if (!task_state(w->pid, w->tid, &state, &switches) || !blocked_state_waits(state) ||
		    switches != w->switches) {
			free(w->record);
			continue;
		}
		memcpy(w->record + sizeof(struct perf_event_header) + offsetof(struct blockedrec, since_ns),
		       &since_ns, sizeof(since_ns));
		b->waiters[kept++] = *w;
	}
	b->n = kept;
	return kept;
}

size_t blocked_count(const struct blocked *b)
{
	return b ? b->n : 0;
}

const void *blocked_record(const struct blocked *b, size_t i, pid_t *tid, size_t *len)
{
	*tid = b->waiters[i].tid;
	*len = b->waiters[i].len;
	return b->waiters[i].record;
}

void blocked_free(struct blocked *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->n; i++)
		free(b->waiters[i].record);
	free(b->waiters);
	free(b);
}

int blocked_parse(const void *record, size_t len, struct blockedrec *blocked,
		  struct sample_record *out, const char **kernel, size_t *kernel_len)
{
	const unsigned char *bytes = record;
	struct perf_event_header h;
	size_t body;

	memset(out, 0, sizeof(*out));
	memset(blocked, 0, sizeof(*blocked));
	if (len < sizeof(h))
		return -EINVAL;
	memcpy(&h, record, sizeof(h));
	if (h.type != SAMPLE_RECORD_BLOCKED || h.size > len || h.size < sizeof(h) + sizeof(*blocked))
		return -EINVAL;
	memcpy(blocked, bytes + sizeof(h), sizeof(*blocked));
	body = h.size - sizeof(h) - sizeof(*blocked);
	if (!blocked->pid || !blocked->tid || blocked->pid > INT32_MAX || blocked->tid > INT32_MAX ||
	    blocked->stack_size > body || blocked->kernel_size > body - blocked->stack_size ||
	    (blocked->kernel_size &&
	     bytes[sizeof(h) + sizeof(*blocked) + blocked->stack_size + blocked->kernel_size - 1]))
		return -EINVAL;
	out->kind = SAMPLE_KIND_SAMPLE;
	out->pid = blocked->pid;
	out->tid = blocked->tid;
	out->time = blocked->since_ns;
	out->sample.ip = blocked->ip;
	out->sample.user = true;
	out->sample.switch_event = true;
	if (blocked->ip) {
		out->sample.regs_abi = PERF_SAMPLE_REGS_ABI_64;
		out->sample.nregs = (unsigned)__builtin_popcountll(sample_regs_mask());
		out->sample.regs[sample_reg_index(PERF_REG_X86_IP)] = blocked->ip;
		out->sample.regs[sample_reg_index(PERF_REG_X86_SP)] = blocked->sp;
		out->sample.stack_size = blocked->stack_size;
		out->sample.stack = bytes + sizeof(h) + sizeof(*blocked);
	}
	*kernel = (const char *)bytes + sizeof(h) + sizeof(*blocked) + blocked->stack_size;
	*kernel_len = blocked->kernel_size;
	return 0;
}
