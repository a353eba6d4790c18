/* Unit tests of the PERF_RECORD_* parser on records laid out as the kernel writes them. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "proftop/blocked.h"
#include "proftop/sample.h"

#include <asm/perf_regs.h>
#include <errno.h>
#include <string.h>

struct builder {
	unsigned char buf[4096];
	size_t len;
};

static void put(struct builder *b, const void *data, size_t n)
{
	memcpy(b->buf + b->len, data, n);
	b->len += n;
}

static void put64(struct builder *b, uint64_t v) { put(b, &v, 8); }

static void put32x2(struct builder *b, uint32_t x, uint32_t y)
{
	put(b, &x, 4);
	put(b, &y, 4);
}

static void begin(struct builder *b, uint32_t type, uint16_t misc)
{
	struct perf_event_header h = { type, misc, 0 };

	b->len = 0;
	put(b, &h, sizeof(h));
}

static size_t finish(struct builder *b)
{
	struct perf_event_header *h = (void *)b->buf;

	h->size = (uint16_t)b->len;
	return b->len;
}

static const uint64_t basic = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;

static void sample_ip_tid_time(void **state)
{
	(void)state;
	struct builder b;
	struct sample_record r;

	begin(&b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	put64(&b, 0x401234);
	put32x2(&b, 42, 43);
	put64(&b, 999);
	assert_int_equal(sample_parse(b.buf, finish(&b), basic, 0, &r), 0);
	assert_int_equal(r.kind, SAMPLE_KIND_SAMPLE);
	assert_int_equal(r.sample.ip, 0x401234);
	assert_int_equal(r.pid, 42);
	assert_int_equal(r.tid, 43);
	assert_int_equal(r.time, 999);
	assert_true(r.sample.user);
	/* One byte short: rejected, never read past. */
	struct perf_event_header *h = (void *)b.buf;
	h->size -= 8;
	assert_int_equal(sample_parse(b.buf, h->size, basic, 0, &r), -EINVAL);
}

static void sample_callchain_and_stack(void **state)
{
	(void)state;
	struct sample_config cfg = { 999, false, CALLGRAPH_FP, 0 };
	struct builder b;
	struct sample_record r;

	begin(&b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	put64(&b, 0xfeed); /* identifier */
	put64(&b, 0x10);
	put32x2(&b, 1, 1);
	put64(&b, 5);
	put64(&b, 3);
	put64(&b, PERF_CONTEXT_USER);
	put64(&b, 0x10);
	put64(&b, 0x20);
	assert_int_equal(sample_parse(b.buf, finish(&b), sample_type_for(&cfg), 0, &r), 0);
	assert_int_equal(r.sample.callchain_nr, 3);
	assert_int_equal(r.id, 0xfeed);
	/* A callchain that claims more entries than the record holds. */
	begin(&b, PERF_RECORD_SAMPLE, 0);
	put64(&b, 0xfeed);
	put64(&b, 0x10);
	put32x2(&b, 1, 1);
	put64(&b, 5);
	put64(&b, 1000);
	assert_int_equal(sample_parse(b.buf, finish(&b), sample_type_for(&cfg), 0, &r), -EINVAL);

	cfg.callgraph = CALLGRAPH_DWARF;
	uint64_t mask = sample_regs_mask();
	unsigned nregs = (unsigned)__builtin_popcountll(mask);
	begin(&b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	put64(&b, 0xfeed);
	put64(&b, 0x10);
	put32x2(&b, 1, 1);
	put64(&b, 5);
	put64(&b, PERF_SAMPLE_REGS_ABI_64);
	for (unsigned i = 0; i < nregs; i++)
		put64(&b, 100 + i);
	put64(&b, 64);
	for (int i = 0; i < 8; i++)
		put64(&b, 0xabc0 + (uint64_t)i);
	put64(&b, 40);
	assert_int_equal(sample_parse(b.buf, finish(&b), sample_type_for(&cfg), mask, &r), 0);
	assert_int_equal(r.sample.nregs, nregs);
	assert_int_equal(r.sample.regs[nregs - 1], 100 + nregs - 1);
	assert_int_equal(r.sample.stack_size, 40);
	assert_non_null(r.sample.stack);
}

static void mmap2_comm_fork_lost(void **state)
{
	(void)state;
	struct builder b;
	struct sample_record r;
	char path[16] = "/usr/bin/true";

	begin(&b, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
	put32x2(&b, 7, 7);
	put64(&b, 0x400000);
	put64(&b, 0x1000);
	put64(&b, 0x2000);
	put32x2(&b, 8, 1);
	put64(&b, 1234);
	put64(&b, 0);
	put32x2(&b, 5, 0);
	put(&b, path, sizeof(path));
	put32x2(&b, 7, 7);
	put64(&b, 77);
	assert_int_equal(sample_parse(b.buf, finish(&b), basic, 0, &r), 0);
	assert_int_equal(r.kind, SAMPLE_KIND_MMAP);
	assert_int_equal(r.mmap.start, 0x400000);
	assert_int_equal(r.mmap.pgoff, 0x2000);
	assert_int_equal(r.mmap.ino, 1234);
	assert_string_equal(r.mmap.path, "/usr/bin/true");
	assert_int_equal(r.time, 77);

	/* A path without its terminator must be rejected. */
	memset(path, 'x', sizeof(path));
	begin(&b, PERF_RECORD_MMAP2, 0);
	put32x2(&b, 7, 7);
	put64(&b, 0x400000);
	put64(&b, 0x1000);
	put64(&b, 0);
	put32x2(&b, 8, 1);
	put64(&b, 1);
	put64(&b, 0);
	put32x2(&b, 5, 0);
	put(&b, path, sizeof(path));
	put32x2(&b, 7, 7);
	put64(&b, 77);
	assert_int_equal(sample_parse(b.buf, finish(&b), basic, 0, &r), -EINVAL);

	char comm[8] = "prog";
	begin(&b, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
	put32x2(&b, 9, 9);
	put(&b, comm, sizeof(comm));
	put32x2(&b, 9, 9);
	put64(&b, 1);
	assert_int_equal(sample_parse(b.buf, finish(&b), basic, 0, &r), 0);
	assert_int_equal(r.kind, SAMPLE_KIND_COMM);
	assert_true(r.comm.exec);
	assert_string_equal(r.comm.comm, "prog");

	begin(&b, PERF_RECORD_FORK, 0);
	put32x2(&b, 20, 10);
	put32x2(&b, 20, 10);
	put64(&b, 3);
	assert_int_equal(sample_parse(b.buf, finish(&b), basic, 0, &r), 0);
	assert_int_equal(r.kind, SAMPLE_KIND_FORK);
	assert_int_equal(r.task.ppid, 10);

	begin(&b, PERF_RECORD_LOST, 0);
	put64(&b, 1);
	put64(&b, 55);
	put32x2(&b, 1, 1);
	put64(&b, 1);
	assert_int_equal(sample_parse(b.buf, finish(&b), basic, 0, &r), 0);
	assert_int_equal(r.lost.lost, 55);
}

/* PERF_RECORD_SWITCH: out (preempted or not) or back in, the thread and time from the trailer; a
 * record too short for its trailer is malformed. */
static void switch_records(void **state)
{
	struct builder b;
	struct sample_record r;

	(void)state;
	begin(&b, PERF_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT | PERF_RECORD_MISC_SWITCH_OUT_PREEMPT);
	put32x2(&b, 30, 31);
	put64(&b, 1000);
	assert_int_equal(sample_parse(b.buf, finish(&b), basic, 0, &r), 0);
	assert_int_equal(r.kind, SAMPLE_KIND_SWITCH);
	assert_true(r.switched.out && r.switched.preempted);
	assert_true(r.pid == 30 && r.tid == 31 && r.time == 1000);
	begin(&b, PERF_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT);
	put32x2(&b, 30, 31);
	put64(&b, 1500);
	assert_int_equal(sample_parse(b.buf, finish(&b), basic, 0, &r), 0);
	assert_true(r.switched.out && !r.switched.preempted);
	begin(&b, PERF_RECORD_SWITCH, 0);
	put32x2(&b, 30, 31);
	put64(&b, 2500);
	assert_int_equal(sample_parse(b.buf, finish(&b), basic, 0, &r), 0);
	assert_true(!r.switched.out && r.time == 2500);
	begin(&b, PERF_RECORD_SWITCH, 0);
	put32x2(&b, 30, 31);
	assert_int_equal(sample_parse(b.buf, finish(&b), basic, 0, &r), -EINVAL);
}

/* Where the sampler finds a record's time, thread and event id, with every field proftop asks
 * for: a sample's come first (identifier, ip, pid/tid, time), the others' in the trailer
 * (pid/tid, time, ..., identifier last). */
static void layout_of_records(void **state)
{
	struct sample_config cfg = { 999, false, CALLGRAPH_DWARF, 8192 };
	uint64_t type = sample_type_for(&cfg);
	struct perf_event_header sample = { PERF_RECORD_SAMPLE, 0, 200 };
	struct perf_event_header comm = { PERF_RECORD_COMM, 0, 48 };
	struct perf_event_header tiny = { PERF_RECORD_COMM, 0, 16 };
	struct sample_layout at;
	struct builder b;
	struct sample_record r;

	(void)state;
	assert_true(type & PERF_SAMPLE_IDENTIFIER);
	assert_int_equal(sample_layout(type, &sample, &at), 0);
	assert_int_equal(at.id, 8);
	assert_int_equal(at.pid_tid, 24);
	assert_int_equal(at.time, 32);
	assert_int_equal(sample_layout(type, &comm, &at), 0);
	assert_int_equal(at.pid_tid, 24);
	assert_int_equal(at.time, 32);
	assert_int_equal(at.id, 40);
	assert_int_equal(sample_layout(type, &tiny, &at), -EINVAL);
	/* The parser reads the same places: an EXIT record with its trailer. */
	begin(&b, PERF_RECORD_EXIT, 0);
	put32x2(&b, 9, 1);
	put32x2(&b, 10, 1);
	put64(&b, 1234);
	put32x2(&b, 9, 10);
	put64(&b, 1234);
	put64(&b, 0xabcd);
	assert_int_equal(sample_parse(b.buf, finish(&b), type, 0, &r), 0);
	assert_int_equal(r.kind, SAMPLE_KIND_EXIT);
	assert_int_equal(r.tid, 10);
	assert_int_equal(r.time, 1234);
	assert_int_equal(r.id, 0xabcd);
	assert_int_equal(sample_layout(type, (struct perf_event_header *)b.buf, &at), 0);
	assert_int_equal(at.id, (int)b.len - 8);
}

static void garbage_headers(void **state)
{
	(void)state;
	unsigned char junk[16] = { 0 };
	struct sample_record r;

	assert_int_equal(sample_parse(junk, 4, basic, 0, &r), -EINVAL);
	assert_int_equal(sample_parse(junk, sizeof(junk), basic, 0, &r), -EINVAL); /* size 0 */
	struct perf_event_header h = { PERF_RECORD_SAMPLE, 0, 200 };
	memcpy(junk, &h, sizeof(h));
	assert_int_equal(sample_parse(junk, sizeof(junk), basic, 0, &r), -EINVAL); /* size > len */
}

/* A blocked record: its parts where the header says, its registers where a DWARF sample's are;
 * sizes past the record, a thread 0 and kernel frames without their terminator refused. */
static void blocked_records(void **state)
{
	struct builder b;
	struct blockedrec in = { 7, 8, 1000, 0x401000, 0x7ffd00, 16, 4 }, out;
	struct sample_record r;
	const char *kernel;
	size_t kernel_len, len;
	uint64_t mask = sample_regs_mask();

	(void)state;
	begin(&b, SAMPLE_RECORD_BLOCKED, 0);
	put(&b, &in, sizeof(in));
	put64(&b, 0x1111);
	put64(&b, 0x2222);
	put(&b, "f\0\0\0\0\0\0\0", 8); /* one frame, "f" of the core kernel, then padding */
	len = finish(&b);
	assert_int_equal(blocked_parse(b.buf, len, &out, &r, &kernel, &kernel_len), 0);
	assert_int_equal(out.since_ns, 1000);
	assert_int_equal(r.tid, 8);
	assert_int_equal(r.time, 1000);
	assert_int_equal(r.sample.regs[__builtin_popcountll(mask & ((1ull << PERF_REG_X86_IP) - 1))],
			 0x401000);
	assert_int_equal(r.sample.regs[__builtin_popcountll(mask & ((1ull << PERF_REG_X86_SP) - 1))],
			 0x7ffd00);
	assert_int_equal(r.sample.stack_size, 16);
	assert_ptr_equal(r.sample.stack, b.buf + 8 + sizeof(in));
	assert_ptr_equal(kernel, (const char *)b.buf + 8 + sizeof(in) + 16);
	assert_int_equal(kernel_len, 4);
	assert_int_equal(blocked_parse(b.buf, len - 1, &out, &r, &kernel, &kernel_len),
			 -EINVAL); /* shorter than its header says */
	in.kernel_size = 3; /* "f\0\0" cut before the module's terminator... still terminated */
	memcpy(b.buf + 8, &in, sizeof(in));
	assert_int_equal(blocked_parse(b.buf, len, &out, &r, &kernel, &kernel_len), 0);
	b.buf[8 + sizeof(in) + 16 + 2] = 'x'; /* ...not now */
	assert_int_equal(blocked_parse(b.buf, len, &out, &r, &kernel, &kernel_len), -EINVAL);
	in.kernel_size = 64;
	memcpy(b.buf + 8, &in, sizeof(in));
	assert_int_equal(blocked_parse(b.buf, len, &out, &r, &kernel, &kernel_len), -EINVAL);
	in.kernel_size = 0;
	in.stack_size = 4096;
	memcpy(b.buf + 8, &in, sizeof(in));
	assert_int_equal(blocked_parse(b.buf, len, &out, &r, &kernel, &kernel_len), -EINVAL);
	in.stack_size = 0;
	in.tid = 0;
	memcpy(b.buf + 8, &in, sizeof(in));
	assert_int_equal(blocked_parse(b.buf, len, &out, &r, &kernel, &kernel_len), -EINVAL);
	/* The instruction pointer unknown: no registers, the stack unused. */
	in.tid = 8;
	in.ip = 0;
	memcpy(b.buf + 8, &in, sizeof(in));
	assert_int_equal(blocked_parse(b.buf, len, &out, &r, &kernel, &kernel_len), 0);
	assert_int_equal(r.sample.regs_abi, 0);
	assert_null(r.sample.stack);
}

/* The one table of the kinds of profile: every mode has a whole row, named as --mode names it,
 * its unit and 100% as its counts are (samples; time in the switch modes; bytes or blocks),
 * and only the in-use ones a level. */
static void every_mode_has_its_facts(void **state)
{
	(void)state;
	for (enum sample_mode m = SAMPLE_MODE_CPU; m < SAMPLE_NMODES; m++) {
		const struct sample_mode_info *info = sample_mode_info(m);
		enum sample_mode parsed;

		assert_true(sample_mode_parse(info->name, &parsed));
		assert_int_equal(parsed, m);
		assert_non_null(info->measures);
		assert_int_equal(info->time_measured != NULL, sample_mode_switches(m));
		assert_string_equal(info->unit, sample_mode_switches(m)     ? "SECONDS"
						: m == SAMPLE_MODE_COVERAGE   ? "EXECUTIONS"
						: !sample_mode_allocations(m) ? "SAMPLES"
						: strstr(info->name, "objects") ? "OBJECTS"
										: "BYTES");
		assert_int_equal(info->level, !strncmp(info->name, "inuse", 5));
	}
	assert_string_equal(sample_mode_info(SAMPLE_MODE_WALL)->time_measured, "thread time");
	assert_string_equal(sample_mode_info(SAMPLE_NMODES)->name, "?");
	assert_string_equal(sample_mode_info(SAMPLE_NMODES)->unit, "SAMPLES");
	assert_string_equal(sample_mode_name((enum sample_mode)-1), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sample_ip_tid_time),
		cmocka_unit_test(sample_callchain_and_stack),
		cmocka_unit_test(mmap2_comm_fork_lost),
		cmocka_unit_test(switch_records),
		cmocka_unit_test(layout_of_records),
		cmocka_unit_test(garbage_headers),
		cmocka_unit_test(blocked_records),
		cmocka_unit_test(every_mode_has_its_facts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
