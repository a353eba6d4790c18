/* sample.h — the perf_event side of sampling: how events are configured, and the pure parser of
 * the records the kernel writes (PERF_RECORD_*). Nothing here touches a file descriptor, so the
 * parser can be fuzzed on arbitrary bytes.
 *
 * Every record type the sampler asks for carries sample_id_all fields, so each record knows its
 * pid, tid, time and the id of the event that wrote it (PERF_SAMPLE_IDENTIFIER: the id of the
 * event proftop opened, also for the events the kernel inherited from it into new threads).
 *
 * This file is the one place that knows where a field sits in a record: the sampler asks
 * sample_layout() where the time and id are instead of counting bytes itself. */
#ifndef PROFTOP_SAMPLE_H
#define PROFTOP_SAMPLE_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum callgraph_mode {
	CALLGRAPH_NONE,  /* the sampled instruction only */
	CALLGRAPH_FP,    /* the kernel's frame-pointer callchain */
	CALLGRAPH_DWARF, /* registers + a copy of the user stack, unwound by us */
};

/* What a profile measures (--mode). CPU is sampled alone; offcpu, runnable and wall sample the
 * CPU and every context switch, so that those four profiles are kept and can be shown in turn.
 * The allocation modes are another kind of run: the command's allocations, sampled by a library
 * preloaded into it (allocrec.h), counted in four profiles too. Coverage counts executions of
 * source lines with uprobes (coverage.h). */
enum sample_mode {
	SAMPLE_MODE_CPU,        /* cpu-clock, freq times a second of each thread's CPU time */
	SAMPLE_MODE_OFFCPU,     /* the time switched out and blocked, on the stack it blocked at */
	SAMPLE_MODE_RUNNABLE,   /* the time switched out while runnable (preempted) */
	SAMPLE_MODE_WALL,       /* all three: each thread's rows add up to its lifetime */
	SAMPLE_MODE_ALLOC,      /* bytes allocated, on the stack that allocated them */
	SAMPLE_MODE_INUSE,      /* bytes allocated and not freed yet: at the end, the leaks */
	SAMPLE_MODE_ALLOC_OBJECTS, /* the same two in blocks, not bytes */
	SAMPLE_MODE_INUSE_OBJECTS,
	SAMPLE_MODE_COVERAGE,   /* how often each source line ran, counted by uprobes (coverage.h) */
	SAMPLE_NMODES
};

/* What a mode's profile is, for whoever shows or writes it: one row per mode, the one table of
 * them (snapshot_kind(), snapshot_unit(), ... answer frontends from it; they name no mode). */
struct sample_mode_info {
	const char *name;          /* --mode's: "cpu", "offcpu", ..., "inuse-objects" */
	const char *unit;          /* the counts' heading: "SAMPLES", "SECONDS", "BYTES", "OBJECTS" */
	const char *measures;      /* what it counts, as the screen says on switching to it */
	const char *time_measured; /* what 100% is in a timed mode ("blocked"); NULL in others */
	bool level;                /* its timeline is a level at each moment (in use), not a sum */
};
/* mode's row; a mode out of range (a corrupt saved profile) gets one named "?" counting samples. */
const struct sample_mode_info *sample_mode_info(enum sample_mode mode);
/* "cpu", "offcpu", "runnable", "wall", "alloc", "inuse", "alloc-objects", "inuse-objects". */
const char *sample_mode_name(enum sample_mode mode);
/* The mode named name into *mode; false (and *mode untouched) for any other string. */
bool sample_mode_parse(const char *name, enum sample_mode *mode);
/* Whether a run in mode samples the context switches (offcpu, runnable, wall). */
bool sample_mode_switches(enum sample_mode mode);
/* Whether mode counts allocations (alloc, inuse and their objects): no perf samples. */
bool sample_mode_allocations(enum sample_mode mode);
/* Whether a run in mode takes no perf samples (allocations, coverage): a dummy event gives the
 * records of the processes' mappings and threads. */
bool sample_mode_unsampled(enum sample_mode mode);
/* The modes a run started in mode keeps, in the order `m` shows them: [first, first + *count). */
enum sample_mode sample_mode_family(enum sample_mode mode, size_t *count);

/* What the stacks show of the frames an interpreter runs (resolver.h): CPython's functions
 * (--python), Perl's subs (--perl). */
enum sample_python {
	SAMPLE_PYTHON_MIXED,    /* spliced among the native frames (the default) */
	SAMPLE_PYTHON_ONLY,     /* the Python frames and the native code they call outside the
				 * interpreter (C extensions), as py-spy shows them */
	SAMPLE_PYTHON_OFF,      /* native frames only; no process memory is read */
};

struct sample_config {
	unsigned freq;          /* samples per second per thread */
	bool kernel;            /* also sample kernel mode */
	enum callgraph_mode callgraph;
	uint32_t stack_size;    /* bytes of user stack copied per sample (dwarf) */
	enum sample_mode mode;
	unsigned switch_period; /* one switch in this many is sampled (0 or 1: every one) */
	uint64_t alloc_rate;    /* allocation modes: a sample every this many bytes on average */
	bool system_wide;       /* -a: every process, an event per CPU; profiles per process */
	bool include_self;      /* -a: proftop's own process too (--include-self) */
	unsigned collectors;    /* the collector's unwinding threads (collector.h); 0: one */
	enum sample_python python; /* CPython's frames (--python) */
	enum sample_python perl;   /* Perl's subs (--perl) */
	uint64_t coverage_cap;  /* coverage: a line's counting stops at this many (0: never) */
	char *const *modules;   /* coverage: the modules counted besides the command's (--module) */
	size_t nmodules;
};

/* Fill attr for the cpu-clock software event. The period is set in nanoseconds of task clock
 * rather than as a frequency, so every sample stands for the same CPU time from the first one on
 * (frequency mode starts with a guessed period and adjusts, which skews short runs). */
void sample_attr_init(struct perf_event_attr *attr, const struct sample_config *config);
uint64_t sample_period_ns(unsigned freq);
/* Fill attr for the allocation modes' event: a dummy software event that samples nothing, for
 * the records that follow the command's address spaces, threads and execs. */
void sample_dummy_attr_init(struct perf_event_attr *attr, const struct sample_config *config);
/* Fill attr for the off-CPU mode's event: the context-switches software event sampled at every
 * switch out of a thread, or one in config->switch_period (with the same stack copy as CPU
 * samples), and PERF_RECORD_SWITCH records
 * for every switch out and back in. The event fires in the kernel, so it cannot exclude kernel
 * mode (perf_event_paranoid must allow that); the kernel part of the stack is left out unless
 * config->kernel. */
void sample_switch_attr_init(struct perf_event_attr *attr, const struct sample_config *config);

/* An allocation run's records from the preloaded library (allocrec.h), which the sampler moves
 * from the shared ring into its own, after the kernel's records of the same pass: a
 * perf_event_header of this type (one no kernel writes), then the struct allocrec and its
 * stack_size bytes of stack. */
#define SAMPLE_RECORD_ALLOC 0x7f00u
/* A thread found waiting when proftop attached (blocked.h): a perf_event_header of this type,
 * then the struct blockedrec, its stack and its kernel frames. The sampler puts these in the
 * ring before any of the kernel's records. */
#define SAMPLE_RECORD_BLOCKED 0x7f01u

/* The sampler marks the samples of the context-switch event with this bit of the header's misc
 * (one the kernel leaves unused in samples) as it copies them: the CPU's and the switches' share
 * one ring and one sample_type. */
#define SAMPLE_MISC_SWITCH_EVENT (1u << 11)

/* The sample_type every event uses for a configuration. */
uint64_t sample_type_for(const struct sample_config *config);
/* The user registers copied per sample in dwarf mode (x86-64: the unwinder needs ip, sp, bp and
 * the callee-saved ones). */
uint64_t sample_regs_mask(void);

enum sample_kind {
	SAMPLE_KIND_OTHER = 0,
	SAMPLE_KIND_SAMPLE,
	SAMPLE_KIND_MMAP,
	SAMPLE_KIND_COMM,
	SAMPLE_KIND_FORK,
	SAMPLE_KIND_EXIT,
	SAMPLE_KIND_LOST,
	SAMPLE_KIND_THROTTLE,
	SAMPLE_KIND_UNTHROTTLE,
	SAMPLE_KIND_SWITCH,     /* the thread (pid, tid) was switched out or back in, at time */
};

#define SAMPLE_MAX_REGS 24

/* A parsed record. Pointers point into the record that was parsed. */
struct sample_record {
	enum sample_kind kind;
	uint32_t pid, tid;
	uint64_t time;
	uint64_t id;                           /* the event's (PERF_SAMPLE_IDENTIFIER); 0: none */
	union {
		struct {
			uint64_t ip;
			bool user;                 /* the sampled ip was in user mode */
			bool switch_event;         /* a context switch's (SAMPLE_MISC_SWITCH_EVENT) */
			uint64_t callchain_nr;
			const uint64_t *callchain; /* into the record: read entries with memcpy */
			uint64_t regs_abi;         /* 0: no user registers (kernel thread) */
			uint64_t regs[SAMPLE_MAX_REGS];
			unsigned nregs;
			uint64_t stack_size;       /* bytes of stack that are valid (dyn_size) */
			const unsigned char *stack;
		} sample;
		struct {
			uint64_t start, len, pgoff;
			uint32_t maj, min;
			uint64_t ino;
			uint32_t prot;
			const char *path;          /* NUL-terminated inside the record */
		} mmap;
		struct {
			const char *comm;
			bool exec;                 /* the COMM came from execve() */
		} comm;
		struct {
			uint32_t ppid, ptid;       /* pid/tid are the new (FORK) or exiting (EXIT) task */
		} task;
		struct {
			uint64_t lost;
		} lost;
		struct {
			bool out;                  /* switched out; else back in */
			bool preempted;            /* out while still runnable (kernels from 4.17) */
		} switched;
	};
};

/* Where a record's fields are, as byte offsets from its start (-1: the record has none), for
 * a record with header h written by an event with sample_type and sample_id_all. */
struct sample_layout {
	int id;                /* u64 PERF_SAMPLE_IDENTIFIER */
	int pid_tid;           /* u32 pid, u32 tid */
	int time;              /* u64 */
};

/* Fill *out for the record h introduces. Returns 0, or -EINVAL when h->size is too small for
 * the fields its type has. */
int sample_layout(uint64_t sample_type, const struct perf_event_header *h,
		  struct sample_layout *out);

/* Parse one record of len bytes (the record's header.size) written by an event with sample_type
 * and sample_id_all. Returns 0, or -EINVAL for a malformed record (fields that overrun the record,
 * a path without its terminator, ...). Records of types proftop does not use parse as OTHER. */
int sample_parse(const void *record, size_t len, uint64_t sample_type, uint64_t regs_mask,
		 struct sample_record *out);

struct allocrec;
/* Parse a SAMPLE_RECORD_ALLOC record of len bytes (the header's size): its fixed part into
 * *alloc, and, for a record with a stack, *out as the CPU sample of a DWARF run it would be
 * (registers in sample_regs_mask() order, the ones the record lacks 0; the stack pointing into
 * the record). Returns 0, or -EINVAL for a record too short for its fields or its stack, a kind
 * no library sends, or ids that are no process's. */
int sample_parse_alloc(const void *record, size_t len, struct allocrec *alloc,
		       struct sample_record *out);


/* Where a perf register goes in a sample_record's regs[] (sample_regs_mask() order). */
unsigned sample_reg_index(int perf_reg);

#endif
