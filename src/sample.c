/* sample.c — perf_event_attr for proftop's events, and the parser of the records they produce.
 *
 * The parser reads fields through a cursor that never runs past the record: a record that claims
 * more than it holds is rejected as a whole, so a corrupt kernel ring (or a fuzzer) cannot make it
 * read out of bounds. */
#include "proftop/sample.h"

#include "proftop/allocrec.h"

#include <asm/perf_regs.h>
#include <errno.h>
#include <string.h>
#include <time.h>

const struct sample_mode_info *sample_mode_info(enum sample_mode mode)
{
	static const struct sample_mode_info info[SAMPLE_NMODES] = {
		[SAMPLE_MODE_CPU] = { "cpu", "SAMPLES", "where the threads burn CPU time", NULL,
				      false },
		[SAMPLE_MODE_OFFCPU] = { "offcpu", "SECONDS", "100% is every thread's time blocked",
					 "blocked", false },
		[SAMPLE_MODE_RUNNABLE] = { "runnable", "SECONDS",
					   "100% is every thread's time preempted (runnable, not "
					   "running)",
					   "preempted", false },
		[SAMPLE_MODE_WALL] = { "wall", "SECONDS",
				       "100% is every thread's time on and off the CPU",
				       "thread time", false },
		[SAMPLE_MODE_ALLOC] = { "alloc", "BYTES", "bytes allocated", NULL, false },
		[SAMPLE_MODE_INUSE] = { "inuse", "BYTES", "bytes in use (allocated, not freed)", NULL,
					true },
		[SAMPLE_MODE_ALLOC_OBJECTS] = { "alloc-objects", "OBJECTS", "blocks allocated", NULL,
						false },
		[SAMPLE_MODE_INUSE_OBJECTS] = { "inuse-objects", "OBJECTS",
						"blocks in use (allocated, not freed)", NULL, true },
		[SAMPLE_MODE_COVERAGE] = { "coverage", "EXECUTIONS",
					   "how often each source line ran (# never)", NULL, false },
	};
	static const struct sample_mode_info unknown = { "?", "SAMPLES", "?", NULL, false };

	return (unsigned)mode < SAMPLE_NMODES ? &info[mode] : &unknown;
}

const char *sample_mode_name(enum sample_mode mode)
{
	return sample_mode_info(mode)->name;
}

bool sample_mode_parse(const char *name, enum sample_mode *mode)
{
	for (int m = 0; m < SAMPLE_NMODES; m++)
		if (!strcmp(name, sample_mode_name((enum sample_mode)m))) {
			*mode = (enum sample_mode)m;
			return true;
		}
	return false;
}

bool sample_mode_switches(enum sample_mode mode)
{
	return mode >= SAMPLE_MODE_OFFCPU && mode <= SAMPLE_MODE_WALL;
}

bool sample_mode_allocations(enum sample_mode mode)
{
	return mode >= SAMPLE_MODE_ALLOC && mode <= SAMPLE_MODE_INUSE_OBJECTS;
}

bool sample_mode_unsampled(enum sample_mode mode)
{
	return sample_mode_allocations(mode) || mode == SAMPLE_MODE_COVERAGE;
}

enum sample_mode sample_mode_family(enum sample_mode mode, size_t *count)
{
	if (sample_mode_allocations(mode)) {
		*count = SAMPLE_MODE_INUSE_OBJECTS + 1 - SAMPLE_MODE_ALLOC;
		return SAMPLE_MODE_ALLOC;
	}
	*count = sample_mode_switches(mode) ? SAMPLE_MODE_WALL + 1 : 1;
	return SAMPLE_MODE_CPU;
}

uint64_t sample_period_ns(unsigned freq)
{
	if (freq == 0)
		freq = 1;
	return 1000000000ull / freq;
}

uint64_t sample_regs_mask(void)
{
	uint64_t all = (1ull << PERF_REG_X86_64_MAX) - 1;

	/* The segment registers other than cs/ss do not exist in 64-bit mode: the kernel refuses them. */
	return all & ~((1ull << PERF_REG_X86_DS) | (1ull << PERF_REG_X86_ES) |
		       (1ull << PERF_REG_X86_FS) | (1ull << PERF_REG_X86_GS));
}

uint64_t sample_type_for(const struct sample_config *config)
{
	uint64_t type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;

	if (sample_mode_unsampled(config->mode)) /* no samples: the fields records carry */
		return type;
	if (config->callgraph == CALLGRAPH_FP)
		type |= PERF_SAMPLE_CALLCHAIN;
	else if (config->callgraph == CALLGRAPH_DWARF)
		type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER |
			/* the kernel's part of the stack: it walks it itself */
			(config->kernel ? PERF_SAMPLE_CALLCHAIN : 0);
	return type;
}

void sample_attr_init(struct perf_event_attr *attr, const struct sample_config *config)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = PERF_TYPE_SOFTWARE;
	attr->config = PERF_COUNT_SW_CPU_CLOCK;
	attr->sample_period = sample_period_ns(config->freq);
	attr->sample_type = sample_type_for(config);
	/* The modes that sample switches count a thread's whole time: its CPU time in the kernel
	 * too (charged to the system call's user stack unless --kernel), or a thread that spends
	 * its time in system calls would not add up to its lifetime. They need kernel samples
	 * allowed anyway. */
	attr->exclude_kernel = !config->kernel && !sample_mode_switches(config->mode);
	attr->exclude_hv = 1;
	attr->exclude_callchain_kernel = !config->kernel;
	attr->mmap = 1;
	attr->mmap2 = 1;
	attr->comm = 1;
	attr->comm_exec = 1;
	attr->task = 1;
	attr->sample_id_all = 1;
	attr->inherit = 1;
	attr->disabled = 1;
	attr->watermark = 1;
	attr->wakeup_watermark = 64 * 1024;
	/* The switch records' times are compared with proftop's clock when profiling ends, an
	 * exec's with the allocation library's (source_alloc.c); the events that share a ring
	 * must share a clock too. */
	if (sample_mode_switches(config->mode) || sample_mode_allocations(config->mode)) {
		attr->use_clockid = 1;
		attr->clockid = CLOCK_MONOTONIC;
	}
	if (config->callgraph == CALLGRAPH_DWARF) {
		attr->exclude_callchain_user = 1; /* (its callchain, with --kernel: the kernel's part) */
		attr->sample_regs_user = sample_regs_mask();
		attr->sample_stack_user = config->stack_size;
	}
}

void sample_dummy_attr_init(struct perf_event_attr *attr, const struct sample_config *config)
{
	sample_attr_init(attr, config);
	attr->config = PERF_COUNT_SW_DUMMY;
	attr->sample_period = 1;
	attr->exclude_kernel = 1;
	attr->exclude_callchain_user = 0;
	attr->sample_regs_user = 0;
	attr->sample_stack_user = 0;
}

void sample_switch_attr_init(struct perf_event_attr *attr, const struct sample_config *config)
{
	sample_attr_init(attr, config);
	attr->config = PERF_COUNT_SW_CONTEXT_SWITCHES;
	attr->sample_period = config->switch_period > 1 ? config->switch_period : 1;
	attr->exclude_kernel = 0;
	attr->context_switch = 1;
}

struct cursor {
	const unsigned char *p, *end;
	bool bad;
};

static const void *take(struct cursor *c, size_t n)
{
	const unsigned char *at = c->p;

	if (c->bad || (size_t)(c->end - c->p) < n) {
		c->bad = true;
		return NULL;
	}
	c->p += n;
	return at;
}

static uint64_t take_u64(struct cursor *c)
{
	const void *at = take(c, 8);
	uint64_t v = 0;

	if (at)
		memcpy(&v, at, 8);
	return v;
}

static uint32_t take_u32(struct cursor *c)
{
	const void *at = take(c, 4);
	uint32_t v = 0;

	if (at)
		memcpy(&v, at, 4);
	return v;
}

/* A NUL-terminated string padded to 8 bytes; NULL if the terminator is missing. */
static const char *take_string(struct cursor *c, const unsigned char *limit)
{
	const char *s = (const char *)c->p;
	const void *nul;

	if (c->bad || limit < c->p)
		goto bad;
	nul = memchr(c->p, '\0', (size_t)(limit - c->p));
	if (!nul)
		goto bad;
	c->p = (const unsigned char *)nul + 1;
	c->p += (8 - ((uintptr_t)(c->p - (const unsigned char *)s) & 7)) & 7;
	if (c->p > c->end)
		c->p = c->end;
	return s;
bad:
	c->bad = true;
	return NULL;
}

/* The sample_id trailer of non-sample records: the fields before TIME decide where time is.
 * The trailer is at the end of the record and its size depends only on sample_type. */
static void parse_sample_id(const unsigned char *record, size_t len, uint64_t sample_type,
			    struct sample_record *out)
{
	size_t n = 0;
	struct cursor c;

	n += (sample_type & PERF_SAMPLE_TID) ? 8 : 0;
	n += (sample_type & PERF_SAMPLE_TIME) ? 8 : 0;
	n += (sample_type & PERF_SAMPLE_ID) ? 8 : 0;
	n += (sample_type & PERF_SAMPLE_STREAM_ID) ? 8 : 0;
	n += (sample_type & PERF_SAMPLE_CPU) ? 8 : 0;
	n += (sample_type & PERF_SAMPLE_IDENTIFIER) ? 8 : 0;
	if (n > len - sizeof(struct perf_event_header))
		return;
	c = (struct cursor){ record + len - n, record + len, false };
	if (sample_type & PERF_SAMPLE_TID) {
		uint32_t pid = take_u32(&c), tid = take_u32(&c);

		if (!out->pid && !out->tid) {
			out->pid = pid;
			out->tid = tid;
		}
	}
	if (sample_type & PERF_SAMPLE_TIME)
		out->time = take_u64(&c);
	if (sample_type & PERF_SAMPLE_ID)
		take_u64(&c);
	if (sample_type & PERF_SAMPLE_STREAM_ID)
		take_u64(&c);
	if (sample_type & PERF_SAMPLE_CPU)
		take_u64(&c);
	if (sample_type & PERF_SAMPLE_IDENTIFIER)
		out->id = take_u64(&c);
}

static int parse_sample(struct cursor *c, uint16_t misc, uint64_t type, uint64_t regs_mask,
			struct sample_record *out)
{
	if (type & PERF_SAMPLE_IDENTIFIER)
		out->id = take_u64(c);
	if (type & PERF_SAMPLE_IP)
		out->sample.ip = take_u64(c);
	if (type & PERF_SAMPLE_TID) {
		out->pid = take_u32(c);
		out->tid = take_u32(c);
	}
	if (type & PERF_SAMPLE_TIME)
		out->time = take_u64(c);
	if (type & PERF_SAMPLE_ADDR)
		take_u64(c);
	if (type & PERF_SAMPLE_ID)
		take_u64(c);
	if (type & PERF_SAMPLE_STREAM_ID)
		take_u64(c);
	if (type & PERF_SAMPLE_CPU)
		take_u64(c);
	if (type & PERF_SAMPLE_PERIOD)
		take_u64(c);
	if (type & (PERF_SAMPLE_READ | PERF_SAMPLE_RAW | PERF_SAMPLE_BRANCH_STACK))
		return -EINVAL; /* proftop never asks for these */
	if (type & PERF_SAMPLE_CALLCHAIN) {
		uint64_t nr = take_u64(c);

		if (nr > (size_t)(c->end - c->p) / 8)
			return -EINVAL;
		out->sample.callchain_nr = nr;
		out->sample.callchain = take(c, nr * 8);
	}
	if (type & PERF_SAMPLE_REGS_USER) {
		out->sample.regs_abi = take_u64(c);
		if (out->sample.regs_abi) {
			unsigned n = (unsigned)__builtin_popcountll(regs_mask);

			if (n > SAMPLE_MAX_REGS)
				return -EINVAL;
			for (unsigned i = 0; i < n; i++)
				out->sample.regs[i] = take_u64(c);
			out->sample.nregs = n;
		}
	}
	if (type & PERF_SAMPLE_STACK_USER) {
		uint64_t size = take_u64(c);

		if (size) {
			const unsigned char *data;
			uint64_t dyn;

			if (size > (size_t)(c->end - c->p))
				return -EINVAL;
			data = take(c, size);
			dyn = take_u64(c);
			out->sample.stack = data;
			out->sample.stack_size = dyn < size ? dyn : size;
		}
	}
	out->sample.user = (misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER;
	out->sample.switch_event = (misc & SAMPLE_MISC_SWITCH_EVENT) != 0;
	return c->bad ? -EINVAL : 0;
}

static int parse_mmap(struct cursor *c, const struct perf_event_header *h, const unsigned char *record,
		      size_t trailer, struct sample_record *out)
{
	out->pid = take_u32(c);
	out->tid = take_u32(c);
	out->mmap.start = take_u64(c);
	out->mmap.len = take_u64(c);
	out->mmap.pgoff = take_u64(c);
	if (h->type == PERF_RECORD_MMAP2) {
		if (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
			take(c, 24); /* build_id_size, reserved, build_id[20] */
		} else {
			out->mmap.maj = take_u32(c);
			out->mmap.min = take_u32(c);
			out->mmap.ino = take_u64(c);
			take_u64(c); /* ino_generation */
		}
		out->mmap.prot = take_u32(c);
		take_u32(c); /* flags */
	} else {
		out->mmap.prot = (h->misc & PERF_RECORD_MISC_MMAP_DATA) ? 0 : 4 /* PROT_EXEC */;
	}
	out->mmap.path = take_string(c, record + h->size - trailer);
	out->kind = SAMPLE_KIND_MMAP;
	return c->bad ? -EINVAL : 0;
}

static size_t sample_id_size(uint64_t type)
{
	uint64_t fields = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |
			  PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER;

	return 8 * (size_t)__builtin_popcountll(type & fields);
}

/* A sample starts with IDENTIFIER, IP, TID, TIME in that order, each when selected. */
static int sample_head_layout(uint64_t type, size_t size, struct sample_layout *out)
{
	size_t at = sizeof(struct perf_event_header);

	if (type & PERF_SAMPLE_IDENTIFIER) {
		out->id = (int)at;
		at += 8;
	}
	at += (type & PERF_SAMPLE_IP) ? 8 : 0;
	if (type & PERF_SAMPLE_TID) {
		out->pid_tid = (int)at;
		at += 8;
	}
	if (type & PERF_SAMPLE_TIME) {
		out->time = (int)at;
		at += 8;
	}
	return at <= size ? 0 : -EINVAL;
}

/* Other records end with the sample_id trailer: TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER. */
static int trailer_layout(uint64_t type, size_t size, struct sample_layout *out)
{
	size_t trailer = sample_id_size(type), at;

	if (size < sizeof(struct perf_event_header) + trailer)
		return -EINVAL;
	at = size - trailer;
	if (type & PERF_SAMPLE_TID) {
		out->pid_tid = (int)at;
		at += 8;
	}
	if (type & PERF_SAMPLE_TIME)
		out->time = (int)at;
	if (type & PERF_SAMPLE_IDENTIFIER)
		out->id = (int)(size - 8);
	return 0;
}

int sample_layout(uint64_t sample_type, const struct perf_event_header *h,
		  struct sample_layout *out)
{
	*out = (struct sample_layout){ -1, -1, -1 };
	if (h->type == PERF_RECORD_SAMPLE)
		return sample_head_layout(sample_type, h->size, out);
	return trailer_layout(sample_type, h->size, out);
}

int sample_parse(const void *record, size_t len, uint64_t sample_type, uint64_t regs_mask,
		 struct sample_record *out)
{
	const unsigned char *bytes = record;
	struct perf_event_header h;
	size_t trailer = sample_id_size(sample_type);
	struct cursor c;
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (len < sizeof(h))
		return -EINVAL;
	memcpy(&h, record, sizeof(h));
	if (h.size < sizeof(h) || h.size > len)
		return -EINVAL;
	c = (struct cursor){ bytes + sizeof(h), bytes + h.size, false };

	switch (h.type) {
	case PERF_RECORD_SAMPLE:
		out->kind = SAMPLE_KIND_SAMPLE;
		return parse_sample(&c, h.misc, sample_type, regs_mask, out);
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		if (h.size < sizeof(h) + trailer)
			return -EINVAL;
		err = parse_mmap(&c, &h, bytes, trailer, out);
		break;
	case PERF_RECORD_COMM:
		if (h.size < sizeof(h) + trailer)
			return -EINVAL;
		out->kind = SAMPLE_KIND_COMM;
		out->pid = take_u32(&c);
		out->tid = take_u32(&c);
		out->comm.comm = take_string(&c, bytes + h.size - trailer);
		out->comm.exec = (h.misc & PERF_RECORD_MISC_COMM_EXEC) != 0;
		err = c.bad ? -EINVAL : 0;
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		out->kind = h.type == PERF_RECORD_FORK ? SAMPLE_KIND_FORK : SAMPLE_KIND_EXIT;
		out->pid = take_u32(&c);
		out->task.ppid = take_u32(&c);
		out->tid = take_u32(&c);
		out->task.ptid = take_u32(&c);
		out->time = take_u64(&c);
		err = c.bad ? -EINVAL : 0;
		break;
	case PERF_RECORD_LOST:
		out->kind = SAMPLE_KIND_LOST;
		take_u64(&c); /* id */
		out->lost.lost = take_u64(&c);
		err = c.bad ? -EINVAL : 0;
		break;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE: /* -a: the other task's pid/tid first, then the same */
		if (h.size < sizeof(h) + trailer + (h.type == PERF_RECORD_SWITCH ? 0 : 8))
			return -EINVAL;
		out->kind = SAMPLE_KIND_SWITCH;
		out->switched.out = (h.misc & PERF_RECORD_MISC_SWITCH_OUT) != 0;
		out->switched.preempted = (h.misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) != 0;
		break;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		out->kind = h.type == PERF_RECORD_THROTTLE ? SAMPLE_KIND_THROTTLE : SAMPLE_KIND_UNTHROTTLE;
		out->time = take_u64(&c);
		return c.bad ? -EINVAL : 0;
	default:
		out->kind = SAMPLE_KIND_OTHER;
		return 0;
	}
	if (!err)
		parse_sample_id(bytes, h.size, sample_type, out);
	return err;
}

/* The perf register each of an allocation record's registers is (allocrec_reg's order). */
static const int alloc_perf_regs[ALLOCREC_NREGS] = {
	PERF_REG_X86_IP,  PERF_REG_X86_SP,  PERF_REG_X86_BX,  PERF_REG_X86_BP,
	PERF_REG_X86_R12, PERF_REG_X86_R13, PERF_REG_X86_R14, PERF_REG_X86_R15,
};

int sample_parse_alloc(const void *record, size_t len, struct allocrec *alloc,
		       struct sample_record *out)
{
	const unsigned char *bytes = record;
	struct perf_event_header h;
	uint64_t mask = sample_regs_mask();

	memset(out, 0, sizeof(*out));
	memset(alloc, 0, sizeof(*alloc));
	if (len < sizeof(h))
		return -EINVAL;
	memcpy(&h, record, sizeof(h));
	if (h.type != SAMPLE_RECORD_ALLOC || h.size > len || h.size < sizeof(h) + sizeof(*alloc))
		return -EINVAL;
	memcpy(alloc, bytes + sizeof(h), sizeof(*alloc));
	if (alloc->kind < ALLOCREC_ALLOC || alloc->kind > ALLOCREC_UNTRACKED || !alloc->pid ||
	    !alloc->tid || alloc->pid > INT32_MAX || alloc->tid > INT32_MAX ||
	    alloc->stack_size > ALLOCREC_STACK_MAX ||
	    alloc->stack_size > h.size - sizeof(h) - sizeof(*alloc))
		return -EINVAL;
	out->kind = SAMPLE_KIND_SAMPLE;
	out->pid = alloc->pid;
	out->tid = alloc->tid;
	out->time = alloc->time_ns;
	out->sample.ip = alloc->regs[ALLOCREC_REG_IP];
	out->sample.user = true;
	out->sample.regs_abi = PERF_SAMPLE_REGS_ABI_64;
	out->sample.nregs = (unsigned)__builtin_popcountll(mask);
	for (int i = 0; i < ALLOCREC_NREGS; i++)
		out->sample.regs[__builtin_popcountll(mask & ((1ull << alloc_perf_regs[i]) - 1))] =
			alloc->regs[i];
	out->sample.stack_size = alloc->stack_size;
	out->sample.stack = bytes + sizeof(h) + sizeof(*alloc);
	return 0;
}

unsigned sample_reg_index(int perf_reg)
{
	return (unsigned)__builtin_popcountll(sample_regs_mask() & ((1ull << perf_reg) - 1));
}
