/* Unit tests of unwinding by cached CFI rows (unwind_rules.c, unwind_dwarf.c's walk), on a real
 * shared object assembled here with explicit CFI directives: a function saving callee-saved
 * registers, one with a frame pointer, a CFA from rbx, and the rows only libunwind may follow (a
 * CFA expression, a signal frame, a register kept in another), a lost return address and a lost
 * rbp (the outermost frame), code no FDE covers. The object is loaded into this process, so the
 * symbolizer finds it in /proc/self/maps.
 *
 * The rows are checked one by one; then thousands of made-up samples (registers and stack words
 * drawn from the object's addresses, addresses in the stack copy, junk, zero; copies cut at any
 * length) are unwound by rows and by libunwind alone, which must give the same frames and the
 * same truncation. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "proftop/module.h"
#include "proftop/sample.h"
#include "proftop/symbols.h"
#include "proftop/unwind_dwarf.h"
#include "proftop/unwind_rules.h"

#include <asm/perf_regs.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit_frames.h"

static const char *const sample_labels[] = {
	"p_plain", "p_framed", "p_rbx", "p_expr", "p_signal", "p_inreg", "p_outer", "p_norbp",
	"p_nocfi", "f_plain", "f_framed",
};
static const char *const return_labels[] = {
	"r_plain", "r_framed", "r_rbx", "r_expr", "r_signal", "r_inreg", "r_outer", "r_norbp",
	"r_nocfi",
};
#define NSAMPLE_LABELS (sizeof(sample_labels) / sizeof(sample_labels[0]))
#define NRETURN_LABELS (sizeof(return_labels) / sizeof(return_labels[0]))

static char tmpdir[64];
static char so_path[128];
static void *so, *so_df;

static int setup(void **state)
{
	char cmd[512];
	FILE *f;

	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/proftop-rules-XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(cmd, sizeof(cmd), "%s/frames.s", tmpdir);
	f = fopen(cmd, "w");
	if (!f || fputs(asm_source, f) < 0 || fclose(f))
		return -1;
	snprintf(so_path, sizeof(so_path), "%s/frames.so", tmpdir);
	snprintf(cmd, sizeof(cmd), "cc -shared -nostdlib -Wl,--eh-frame-hdr -o '%s' '%s/frames.s'",
		 so_path, tmpdir);
	if (system(cmd) != 0)
		return -1;
	so = dlopen(so_path, RTLD_NOW);
	/* The same code with its CFI in .debug_frame alone (unwound through a converted copy). */
	snprintf(cmd, sizeof(cmd), "cd '%s' && { echo '	.cfi_sections .debug_frame'; cat frames.s; } "
		 "> frames-df.s && cc -shared -nostdlib -o frames-df.so frames-df.s", tmpdir);
	if (system(cmd) != 0)
		return -1;
	snprintf(cmd, sizeof(cmd), "%s/frames-df.so", tmpdir);
	so_df = dlopen(cmd, RTLD_NOW);
	return so && so_df ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	if (so)
		dlclose(so);
	if (so_df)
		dlclose(so_df);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static uint64_t label(const char *name)
{
	void *p = dlsym(so, name);

	assert_non_null(p);
	return (uint64_t)(uintptr_t)p;
}

/* The object's link-time address of a label (it is linked at 0). */
static uint64_t link_addr(const char *name)
{
	Dl_info info;

	assert_true(dladdr((void *)(uintptr_t)label(name), &info) != 0);
	return label(name) - (uint64_t)(uintptr_t)info.dli_fbase;
}

static struct module *load_module(void)
{
	struct module *mod = module_new("frames.so", 9);
	int fd = open(so_path, O_RDONLY | O_CLOEXEC);
	struct stat st;

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(module_init(), 0);
	assert_int_equal(module_load_file(mod, fd, (size_t)st.st_size, NULL), 0);
	close(fd);
	return mod;
}

static struct unwind_rule rule_at(struct module *mod, const char *name, int64_t delta)
{
	struct unwind_rule rule;

	unwind_rule_read(module_cfi(mod), link_addr(name) + (uint64_t)delta, &rule);
	return rule;
}

/* Rows as the directives wrote them. */
static void rows_read(void **state)
{
	struct module *mod = load_module();
	struct unwind_rule r;

	(void)state;
	assert_non_null(module_cfi(mod));
	/* At entry: CFA = rsp + 8, return address at CFA - 8, the rest unchanged. */
	r = rule_at(mod, "f_plain", 0);
	assert_int_equal(r.kind, UNWIND_RULE_SIMPLE);
	assert_int_equal(r.cfa_reg, 7);
	assert_int_equal(r.cfa_offset, 8);
	assert_int_equal(r.where[UNWIND_RA], UNWIND_AT_CFA);
	assert_int_equal(r.offset[UNWIND_RA], -8);
	/* rbx may be "undefined": libdw's default when a row says nothing (see unwind_rules.h). */
	for (int t = UNWIND_RBP; t < UNWIND_RA; t++)
		assert_int_equal(r.where[t], UNWIND_SAME);
	/* In the body: rbx and r12 saved. */
	r = rule_at(mod, "p_plain", 0);
	assert_int_equal(r.kind, UNWIND_RULE_SIMPLE);
	assert_int_equal(r.cfa_reg, 7);
	assert_int_equal(r.cfa_offset, 64);
	assert_int_equal(r.where[UNWIND_RBX], UNWIND_AT_CFA);
	assert_int_equal(r.offset[UNWIND_RBX], -16);
	assert_int_equal(r.where[UNWIND_R12], UNWIND_AT_CFA);
	assert_int_equal(r.offset[UNWIND_R12], -24);
	assert_int_equal(r.where[UNWIND_R13], UNWIND_SAME);
	/* The call's last byte (what a return address looks up) has the body's row. */
	r = rule_at(mod, "r_plain", -1);
	assert_int_equal(r.cfa_offset, 64);
	r = rule_at(mod, "p_framed", 0);
	assert_int_equal(r.kind, UNWIND_RULE_SIMPLE);
	assert_int_equal(r.cfa_reg, 6);
	assert_int_equal(r.cfa_offset, 16);
	assert_int_equal(r.where[UNWIND_RBP], UNWIND_AT_CFA);
	assert_int_equal(r.offset[UNWIND_RBP], -16);
	r = rule_at(mod, "p_rbx", 0);
	assert_int_equal(r.kind, UNWIND_RULE_SIMPLE);
	assert_int_equal(r.cfa_reg, 3);
	assert_int_equal(r.cfa_offset, 24);
	r = rule_at(mod, "p_outer", 0);
	assert_int_equal(r.kind, UNWIND_RULE_SIMPLE);
	assert_int_equal(r.where[UNWIND_RA], UNWIND_UNDEFINED);
	r = rule_at(mod, "p_norbp", 0);
	assert_int_equal(r.kind, UNWIND_RULE_SIMPLE);
	assert_int_equal(r.where[UNWIND_RBP], UNWIND_UNDEFINED);
	/* Only libunwind follows these. */
	assert_int_equal(rule_at(mod, "p_expr", 0).kind, UNWIND_RULE_COMPLEX);
	assert_int_equal(rule_at(mod, "p_signal", 0).kind, UNWIND_RULE_COMPLEX);
	assert_int_equal(rule_at(mod, "p_inreg", 0).kind, UNWIND_RULE_COMPLEX);
	assert_int_equal(rule_at(mod, "p_nocfi", 0).kind, UNWIND_RULE_NONE);
	/* Far outside the object, and without CFI at all. */
	r = rule_at(mod, "p_plain", 1 << 30);
	assert_int_equal(r.kind, UNWIND_RULE_NONE);
	unwind_rule_read(NULL, 0, &r);
	assert_int_equal(r.kind, UNWIND_RULE_NONE);
	module_free(mod);
}

/* The cache hands back what a read gives, keeps it, and tells modules apart. */
static void cache_keeps_rows(void **state)
{
	struct module *mod = load_module(), *other = load_module();
	struct unwind_rules *rules = unwind_rules_new(4);
	uint64_t lookups, misses, at = link_addr("p_plain");
	struct unwind_rule direct = rule_at(mod, "p_plain", 0);

	(void)state;
	assert_memory_equal(unwind_rules_get(rules, mod, at), &direct, sizeof(direct));
	assert_memory_equal(unwind_rules_get(rules, mod, at), &direct, sizeof(direct));
	unwind_rules_stats(rules, &lookups, &misses);
	assert_int_equal(lookups, 2);
	assert_int_equal(misses, 1);
	assert_int_equal(unwind_rules_get(rules, other, at)->kind, UNWIND_RULE_SIMPLE);
	unwind_rules_stats(rules, &lookups, &misses);
	assert_int_equal(misses, 2);
	/* Every label of a tiny cache, twice: collisions read again, never mix rows up. */
	for (int round = 0; round < 2; round++)
		for (size_t i = 0; i < NSAMPLE_LABELS; i++) {
			struct unwind_rule want = rule_at(mod, sample_labels[i], 0);

			assert_memory_equal(unwind_rules_get(rules, mod, link_addr(sample_labels[i])),
					    &want, sizeof(want));
		}
	unwind_rules_free(rules);
	module_free(mod);
	module_free(other);
}

/* --- made-up samples, unwound both ways --------------------------------------------------------- */

#define STACK_WORDS 48

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* A word for a register or a stack slot: a return address, an address in the copy, junk, 0. */
static uint64_t some_word(const uint64_t *stack)
{
	switch (rnd() % 8) {
	case 0:
	case 1:
	case 2:
		return label(return_labels[rnd() % NRETURN_LABELS]);
	case 3:
	case 4:
		return (uint64_t)(uintptr_t)(stack + rnd() % STACK_WORDS);
	case 5:
		return 0;
	default:
		return rnd() & 0xffff;
	}
}

static void make_sample(struct sample_record *r, uint64_t *stack)
{
	uint64_t mask = sample_regs_mask();
	unsigned n = 0;

	for (size_t i = 0; i < STACK_WORDS; i++)
		stack[i] = some_word(stack);
	memset(r, 0, sizeof(*r));
	r->kind = SAMPLE_KIND_SAMPLE;
	r->pid = r->tid = (uint32_t)getpid();
	r->sample.user = true;
	r->sample.regs_abi = PERF_SAMPLE_REGS_ABI_64;
	r->sample.stack = (const unsigned char *)stack;
	r->sample.stack_size = rnd() % 4 ? STACK_WORDS * 8 : rnd() % (STACK_WORDS * 8 + 1);
	for (int reg = 0; reg < PERF_REG_X86_64_MAX && n < SAMPLE_MAX_REGS; reg++) {
		uint64_t v = some_word(stack);

		if (!(mask & (1ull << reg)))
			continue;
		if (reg == PERF_REG_X86_IP)
			v = label(sample_labels[rnd() % NSAMPLE_LABELS]) + (rnd() % 3 == 0);
		else if (reg == PERF_REG_X86_SP)
			v = (uint64_t)(uintptr_t)stack;
		r->sample.regs[n++] = v;
	}
	r->sample.nregs = n;
}

static void rows_unwind_as_libunwind(void **state)
{
	struct symbolizer *s = symbolizer_new(NULL);
	struct unwind_dwarf *by_rows = unwind_dwarf_new(s, NULL);
	struct unwind_dwarf *by_libunwind = unwind_dwarf_new(s, NULL);
	struct unwind_dwarf_stats stats;
	uint64_t *stack = calloc(STACK_WORDS, sizeof(*stack));
	size_t deep = 0;

	(void)state;
	assert_int_equal(symbolizer_load_proc(s, getpid()), 0);
	unwind_dwarf_set_fast(by_libunwind, false);
	for (int i = 0; i < 5000; i++) {
		struct sample_record r;
		uint64_t a[64], b[64];
		bool ta, tb;
		size_t na, nb, max = 1 + rnd() % 64;

		make_sample(&r, stack);
		na = unwind_dwarf(by_rows, &r, a, max, &ta);
		/* A new libunwind address space each time: its cache is keyed by the instruction
		 * pointer alone, and mixes the first frame's row with a return address's. */
		unwind_dwarf_forget(by_libunwind, (pid_t)r.pid);
		nb = unwind_dwarf(by_libunwind, &r, b, max, &tb);
		if (na != nb || ta != tb || memcmp(a, b, na * sizeof(a[0]))) {
			fprintf(stderr, "sample %d: rows %zu%s, libunwind %zu%s\n", i, na,
				ta ? " truncated" : "", nb, tb ? " truncated" : "");
			for (size_t k = 0; k < na || k < nb; k++)
				fprintf(stderr, "  %#llx %#llx\n", k < na ? (unsigned long long)a[k] : 0ull,
					k < nb ? (unsigned long long)b[k] : 0ull);
			fail();
		}
		deep += na >= 3;
	}
	unwind_dwarf_stats(by_rows, &stats);
	/* The rows did most of it, and the stacks were not all one frame deep. */
	assert_true(stats.fast_samples > stats.libunwind_samples);
	assert_true(deep > 100);
	free(stack);
	unwind_dwarf_free(by_rows);
	unwind_dwarf_free(by_libunwind);
	symbolizer_free(s);
}

/* A sample of registers set by name (perf's numbers; sp is the copy's address unless set). */
static void sample_at(struct sample_record *r, uint64_t *stack, size_t words, const int *regs,
		      const uint64_t *values, size_t nvalues)
{
	uint64_t mask = sample_regs_mask();
	unsigned n = 0;

	memset(r, 0, sizeof(*r));
	r->kind = SAMPLE_KIND_SAMPLE;
	r->pid = r->tid = (uint32_t)getpid();
	r->sample.user = true;
	r->sample.regs_abi = PERF_SAMPLE_REGS_ABI_64;
	r->sample.stack = (const unsigned char *)stack;
	r->sample.stack_size = words * 8;
	for (int reg = 0; reg < PERF_REG_X86_64_MAX; reg++) {
		uint64_t v = reg == PERF_REG_X86_SP ? (uint64_t)(uintptr_t)stack : 0;

		if (!(mask & (1ull << reg)))
			continue;
		for (size_t i = 0; i < nvalues; i++)
			if (regs[i] == reg)
				v = values[i];
		r->sample.regs[n++] = v;
	}
	r->sample.nregs = n;
}

/* Frames and truncation by rows and by libunwind alone, which must agree; returns the frames. */
static size_t unwind_both(struct symbolizer *s, const struct sample_record *r, bool *truncated)
{
	struct unwind_dwarf *by_rows = unwind_dwarf_new(s, NULL);
	struct unwind_dwarf *by_libunwind = unwind_dwarf_new(s, NULL);
	uint64_t a[16], b[16];
	bool tb;
	size_t na, nb;

	unwind_dwarf_set_fast(by_libunwind, false);
	na = unwind_dwarf(by_rows, r, a, 16, truncated);
	nb = unwind_dwarf(by_libunwind, r, b, 16, &tb);
	assert_int_equal(na, nb);
	assert_int_equal(*truncated, tb);
	assert_memory_equal(a, b, na * sizeof(a[0]));
	unwind_dwarf_free(by_rows);
	unwind_dwarf_free(by_libunwind);
	return na;
}

/* A register saved at address 0 is lost for libunwind (its "null location" is a memory location
 * at 0): the rows say the same. fuzz_unwind found the rows reading a return address from there
 * (truncated: the copy does not hold it) where libunwind ended the chain (not truncated), and
 * rbp saved at 0 is the end of the chain as a lost rbp is. */
static void null_location_as_libunwind(void **state)
{
	struct symbolizer *s = symbolizer_new(NULL);
	uint64_t stack[8] = { 0 };
	struct sample_record r;
	bool truncated;

	(void)state;
	assert_int_equal(symbolizer_load_proc(s, getpid()), 0);
	/* CFA = rbx + 24 = 8: the return address at 0, the end of the chain. */
	sample_at(&r, stack, 8, (int[]){ PERF_REG_X86_IP, PERF_REG_X86_BX },
		  (uint64_t[]){ label("p_rbx"), (uint64_t)-16 }, 2);
	assert_int_equal(unwind_both(s, &r, &truncated), 1);
	assert_false(truncated);
	/* A copy at address 0: CFA = rbp + 16 = 16, rbp saved at 0 and the return address at 8,
	 * readable, to f_plain; but rbp is lost, so the chain ends there too. */
	stack[1] = label("r_plain");
	sample_at(&r, NULL, 0, (int[]){ PERF_REG_X86_IP, PERF_REG_X86_BP, PERF_REG_X86_SP },
		  (uint64_t[]){ label("p_framed"), 0, 0 }, 3);
	r.sample.stack = (const unsigned char *)stack;
	r.sample.stack_size = sizeof(stack);
	assert_int_equal(unwind_both(s, &r, &truncated), 1);
	assert_false(truncated);
	symbolizer_free(s);
}

/* The rows read memory as libunwind does, also where a garbage CFA points at the made-up
 * addresses (from 0x4000000000000000, unwind_dwarf.c) that serve a converted .debug_frame to
 * libunwind. fuzz_unwind found the rows stopping there (truncated, one frame) where libunwind read
 * the image's first word as a return address (two frames). */
static void synth_memory_as_libunwind(void **state)
{
	struct symbolizer *s = symbolizer_new(NULL);
	struct unwind_dwarf *by_rows = unwind_dwarf_new(s, NULL);
	struct unwind_dwarf *by_libunwind = unwind_dwarf_new(s, NULL);
	uint64_t stack[8] = { 0 }, a[8], b[8];
	void *p_df = dlsym(so_df, "p_plain");
	struct sample_record r;
	bool ta, tb;
	size_t na, nb;

	(void)state;
	assert_non_null(p_df);
	assert_int_equal(symbolizer_load_proc(s, getpid()), 0);
	unwind_dwarf_set_fast(by_libunwind, false);
	/* Both convert the .debug_frame of frames-df.so: the first image, at 0x4000000000000000. */
	sample_at(&r, stack, 8, (int[]){ PERF_REG_X86_IP }, (uint64_t[]){ (uint64_t)(uintptr_t)p_df },
		  1);
	unwind_dwarf(by_rows, &r, a, 8, &ta);
	unwind_dwarf(by_libunwind, &r, b, 8, &tb);
	/* CFA = rbx + 24: the return address at the image's first word. */
	sample_at(&r, stack, 8, (int[]){ PERF_REG_X86_IP, PERF_REG_X86_BX },
		  (uint64_t[]){ label("p_rbx"), 0x4000000000000000ull - 16 }, 2);
	na = unwind_dwarf(by_rows, &r, a, 8, &ta);
	nb = unwind_dwarf(by_libunwind, &r, b, 8, &tb);
	assert_int_equal(na, nb);
	assert_int_equal(na, 2);
	assert_true(ta && tb);
	assert_memory_equal(a, b, na * sizeof(a[0]));
	unwind_dwarf_free(by_rows);
	unwind_dwarf_free(by_libunwind);
	symbolizer_free(s);
}

/* A CFA expression that branches back on itself (a hostile file's CFI) would have libunwind
 * evaluate it forever, and the collector with it: proftop -b -d 2 on a program spinning in such a
 * function never ended. The step now fails and the stack is cut there. Unwound in a child whose
 * CPU time is limited, so that the loop fails the test instead of hanging it. */
static void looping_expression_ends(void **state)
{
	pid_t child;
	int status;

	(void)state;
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		struct rlimit cpu = { 20, 20 };
		struct symbolizer *s = symbolizer_new(NULL);
		uint64_t stack[8] = { 0 };
		struct sample_record r;
		bool truncated;

		setrlimit(RLIMIT_CPU, &cpu);
		if (symbolizer_load_proc(s, getpid()))
			_exit(2);
		sample_at(&r, stack, 8, (int[]){ PERF_REG_X86_IP }, (uint64_t[]){ label("p_loop") }, 1);
		if (unwind_both(s, &r, &truncated) != 1 || !truncated)
			_exit(3);
		symbolizer_free(s);
		_exit(0);
	}
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rows_read),
		cmocka_unit_test(cache_keeps_rows),
		cmocka_unit_test(rows_unwind_as_libunwind),
		cmocka_unit_test(null_location_as_libunwind),
		cmocka_unit_test(synth_memory_as_libunwind),
		cmocka_unit_test(looping_expression_ends),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
