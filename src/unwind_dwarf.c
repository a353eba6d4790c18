/* unwind_dwarf.c — DWARF CFI unwinding of a copied user stack, with libunwind's remote API.
 *
 * libunwind asks us, through accessors, for registers and memory of the "remote" process. We
 * answer from the sample alone: registers from PERF_SAMPLE_REGS_USER, stack memory from the
 * PERF_SAMPLE_STACK_USER copy (which starts at the sampled sp), and any other address from the
 * file image of the module mapped there — that is where libunwind reads .eh_frame_hdr and
 * .eh_frame. Nothing is read from the live process, so unwinding works after it exited and
 * costs no system call.
 *
 * Unwind tables: .eh_frame_hdr's binary search table, handed to dwarf_search_unwind_table() as a
 * remote table. Code that only .debug_frame describes is unwound through a converted copy in
 * .eh_frame form (debug_frame.c) that the accessors serve at a made-up address: above
 * 0x4000000000000000, which no x86-64 user address can be, one 4 GiB slot per image.
 *
 * One libunwind address space per process, so its cache of parsed frames never mixes two
 * processes' code at the same address.
 *
 * This file also defines sigprocmask() for the whole program (see the comment above its
 * definition): while the collector thread unwinds, libunwind's lock wrappers leave the signal mask
 * alone, which more than quadruples unwinding speed; everywhere else it is libc's. */
#include "proftop/unwind_dwarf.h"

#include "proftop/debug_frame.h"
#include "proftop/diag.h"
#include "proftop/idmap.h"
#include "proftop/module.h"
#include "proftop/symbols.h"
#include "proftop/unwind_jit.h"
#include "proftop/unwind_rules.h"
#include "proftop/util.h"

#include <asm/perf_regs.h>
#include <errno.h>
#include <libunwind.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

/* Declared by libunwind's sources but not by its public headers. */
extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip,
					       unw_dyn_info_t *di, unw_proc_info_t *pi,
					       int need_unwind_info, void *arg);
#define dwarf_search_unwind_table UNW_OBJ(dwarf_search_unwind_table)

#define MODULES_PER_UNWIND 16
/* Rows cached (unwind_rules.h): 2^15 of 48 bytes, 1.5 MiB, for the return addresses of a large
 * program's many deep stacks. */
#define RULES_LOG2 15
#define DWARF_NREGS 17
#define DWARF_RSP 7
#define SYNTH_BASE 0x4000000000000000ull
#define SYNTH_SLOT_SHIFT 32
/* libunwind reads the unwind tables, and evaluates CFA expressions, through access_mem() a word at
 * a time: an expression that branches back on itself (DW_OP_skip -3, in a hostile file's CFI)
 * would have it read forever, with the collector stuck. A step (table search, CIE and FDE parsed
 * byte by byte, expressions) reads a few hundred words (at most 137 on a C++ program, 325 on
 * python3, by bench/replay unwinding with libunwind alone); past this many it fails, and the
 * stack is truncated there. */
#define READS_PER_STEP 16384
#define JIT_EXITS 1024

/* A module's .debug_frame converted for one load address; it lives at synth_addr(index). */
struct synth_image {
	const void *module;
	uint64_t bias;
	bool ok;                     /* conversion found something */
	struct eh_frame_image image;
};

struct unwind_dwarf {
	struct symbolizer *symbolizer;
	struct diag *diag;
	unw_accessors_t accessors;
	struct idmap spaces_by_pid;    /* pid -> index in spaces */
	unw_addr_space_t *spaces;
	size_t nspaces, spaces_cap;
	struct synth_image *synths;
	size_t nsynths, synths_cap;
	struct unwind_rules *rules;
	struct jit_exit_entry *jit_exits; /* JIT_EXITS */
	bool fast;                     /* step frames by rules, libunwind only where they cannot */
	uint64_t fast_samples, libunwind_samples;
};

/* What the accessors see of one sample. */
struct unwind_ctx {
	struct unwind_dwarf *unwinder;
	const struct sample_record *sample;
	pid_t pid;
	uint64_t sp;
	struct unwind_info modules[MODULES_PER_UNWIND]; /* modules met so far, newest last */
	size_t nmodules;
	bool lookup_failed; /* a frame had no unwind information: its caller would be a guess */
	unsigned reads_left; /* libunwind's reads this step may still make (READS_PER_STEP) */
};

/* libunwind's x86-64 register numbers → perf's. */
static int perf_reg_of(int unw_reg)
{
	switch (unw_reg) {
	case UNW_X86_64_RAX: return PERF_REG_X86_AX;
	case UNW_X86_64_RDX: return PERF_REG_X86_DX;
	case UNW_X86_64_RCX: return PERF_REG_X86_CX;
	case UNW_X86_64_RBX: return PERF_REG_X86_BX;
	case UNW_X86_64_RSI: return PERF_REG_X86_SI;
	case UNW_X86_64_RDI: return PERF_REG_X86_DI;
	case UNW_X86_64_RBP: return PERF_REG_X86_BP;
	case UNW_X86_64_RSP: return PERF_REG_X86_SP;
	case UNW_X86_64_RIP: return PERF_REG_X86_IP;
	default:
		if (unw_reg >= UNW_X86_64_R8 && unw_reg <= UNW_X86_64_R15)
			return PERF_REG_X86_R8 + (unw_reg - UNW_X86_64_R8);
		return -1;
	}
}

/* The sample's value of a perf register: registers come packed in mask bit order. */
static int sample_reg(const struct sample_record *r, int perf_reg, uint64_t *value)
{
	uint64_t mask = sample_regs_mask();
	unsigned index;

	if (perf_reg < 0 || !(mask & (1ull << perf_reg)))
		return -EINVAL;
	index = (unsigned)__builtin_popcountll(mask & ((1ull << perf_reg) - 1));
	if (index >= r->sample.nregs)
		return -EINVAL;
	*value = r->sample.regs[index];
	return 0;
}

static const struct unwind_info *ctx_module(struct unwind_ctx *ctx, uint64_t ip)
{
	struct unwind_info info;

	for (size_t i = ctx->nmodules; i-- > 0;)
		if (ip >= ctx->modules[i].code_start && ip < ctx->modules[i].code_end)
			return &ctx->modules[i];
	if (symbolizer_unwind_info(ctx->unwinder->symbolizer, ctx->pid, ip, &info) < 0)
		return NULL;
	if (ctx->nmodules == MODULES_PER_UNWIND) {
		memmove(ctx->modules, ctx->modules + 1, sizeof(ctx->modules[0]) * (MODULES_PER_UNWIND - 1));
		ctx->nmodules--;
	}
	ctx->modules[ctx->nmodules] = info;
	return &ctx->modules[ctx->nmodules++];
}

static int read_u32(struct unwind_ctx *ctx, const struct unwind_info *m, uint64_t addr,
		    uint32_t *out)
{
	(void)ctx;
	return symbolizer_read_module(m, addr, out, sizeof(*out));
}

/* Build the remote-table description of .eh_frame_hdr: version 1, then the encoded pointer to
 * .eh_frame, the FDE count and the table of (initial location, FDE) pairs, both datarel sdata4. */
static int eh_frame_hdr_table(struct unwind_ctx *ctx, const struct unwind_info *m,
			      unw_dyn_info_t *di)
{
	unsigned char head[4];
	uint32_t fde_count;

	if (symbolizer_read_module(m, m->eh_frame_hdr, head, sizeof(head)) < 0)
		return -UNW_ENOINFO;
	/* version 1; eh_frame_ptr pcrel|sdata4 (0x1b); fde_count udata4 (0x03); table
	 * datarel|sdata4 (0x3b): what every linker writes, and all that libunwind's lookup takes. */
	if (head[0] != 1 || head[3] != 0x3b || (head[1] & 0x0f) != 0x0b || head[2] != 0x03)
		return -UNW_ENOINFO;
	if (read_u32(ctx, m, m->eh_frame_hdr + 8, &fde_count) < 0 || !fde_count)
		return -UNW_ENOINFO;
	memset(di, 0, sizeof(*di));
	di->format = UNW_INFO_FORMAT_REMOTE_TABLE;
	di->start_ip = m->code_start;
	di->end_ip = m->code_end;
	di->u.rti.segbase = m->eh_frame_hdr;
	di->u.rti.table_data = m->eh_frame_hdr + 12;
	di->u.rti.table_len = fde_count * 8 / sizeof(unw_word_t);
	return 0;
}

static uint64_t synth_addr(size_t index)
{
	return SYNTH_BASE + ((uint64_t)index << SYNTH_SLOT_SHIFT);
}

/* The converted .debug_frame of m (made on first use, kept for the unwinder's life). */
static const struct synth_image *synth_of(struct unwind_dwarf *u, const struct unwind_info *m,
					  size_t *index)
{
	struct synth_image *img;

	for (size_t i = 0; i < u->nsynths; i++) {
		if (u->synths[i].module == m->module && u->synths[i].bias == m->bias) {
			*index = i;
			return u->synths[i].ok ? &u->synths[i] : NULL;
		}
	}
	xgrow((void **)&u->synths, &u->synths_cap, u->nsynths + 1, sizeof(*u->synths));
	img = &u->synths[u->nsynths];
	*img = (struct synth_image){ .module = m->module, .bias = m->bias };
	img->ok = debug_frame_convert(m->debug_frame, m->debug_frame_size, m->bias, m->code_start,
				      &img->image) == 0;
	*index = u->nsynths++;
	return img->ok ? img : NULL;
}

/* Serve a read inside a converted image: the .eh_frame entries, then the search table. */
static int synth_read(const struct unwind_dwarf *u, uint64_t addr, unw_word_t *value)
{
	size_t index = (size_t)((addr - SYNTH_BASE) >> SYNTH_SLOT_SHIFT);
	uint64_t off = addr & ((1ull << SYNTH_SLOT_SHIFT) - 1);
	const struct eh_frame_image *img;
	size_t table_size;

	if (index >= u->nsynths || !u->synths[index].ok)
		return -UNW_EINVAL;
	img = &u->synths[index].image;
	table_size = img->table_entries * 2 * sizeof(int32_t);
	if (off + sizeof(*value) <= img->eh_frame_size) {
		memcpy(value, img->eh_frame + off, sizeof(*value));
		return 0;
	}
	if (off >= img->eh_frame_size && off - img->eh_frame_size + sizeof(*value) <= table_size) {
		memcpy(value, (const unsigned char *)img->table + (off - img->eh_frame_size),
		       sizeof(*value));
		return 0;
	}
	/* A last word that straddles the end: what is there, zero-padded. */
	if (off < img->eh_frame_size + table_size) {
		unsigned char word[sizeof(*value)] = { 0 };

		for (size_t i = 0; i < sizeof(word) && off + i < img->eh_frame_size + table_size; i++)
			word[i] = off + i < img->eh_frame_size
					  ? img->eh_frame[off + i]
					  : ((const unsigned char *)img->table)[off + i - img->eh_frame_size];
		memcpy(value, word, sizeof(word));
		return 0;
	}
	return -UNW_EINVAL;
}

/* The table of a converted .debug_frame: entries relative to the code start (IP_OFFSET), FDE
 * offsets relative to the image's made-up address. */
static int debug_frame_table(struct unwind_ctx *ctx, const struct unwind_info *m,
			     unw_dyn_info_t *di)
{
	size_t index;
	const struct synth_image *img = synth_of(ctx->unwinder, m, &index);

	if (!img)
		return -UNW_ENOINFO;
	memset(di, 0, sizeof(*di));
	di->format = UNW_INFO_FORMAT_IP_OFFSET;
	di->start_ip = m->code_start;
	di->end_ip = m->code_end;
	di->u.rti.segbase = synth_addr(index);
	di->u.rti.table_data = synth_addr(index) + img->image.eh_frame_size;
	di->u.rti.table_len = img->image.table_entries * 8 / sizeof(unw_word_t);
	return 0;
}

static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi,
			  int need_unwind_info, void *arg)
{
	struct unwind_ctx *ctx = arg;
	const struct unwind_info *m = ctx_module(ctx, ip);
	unw_dyn_info_t di;
	int ret = -UNW_ENOINFO;

	if (!m) {
		ctx->lookup_failed = true;
		return -UNW_ENOINFO;
	}
	if (m->eh_frame_hdr && eh_frame_hdr_table(ctx, m, &di) == 0)
		ret = dwarf_search_unwind_table(as, ip, &di, pi, need_unwind_info, arg);
	/* Code .eh_frame does not cover (built without asynchronous unwind tables) may still be
	 * in .debug_frame. */
	if (ret == -UNW_ENOINFO && m->debug_frame && debug_frame_table(ctx, m, &di) == 0)
		ret = dwarf_search_unwind_table(as, ip, &di, pi, need_unwind_info, arg);
	if (ret < 0)
		ctx->lookup_failed = true;
	return ret;
}

static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
	(void)as;
	(void)pi;
	(void)arg;
}

static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *addr, void *arg)
{
	(void)as;
	(void)addr;
	(void)arg;
	return -UNW_ENOINFO;
}

/* The 8 bytes of the stack copy at addr; false outside it. */
static bool stack_word(const struct unwind_ctx *ctx, uint64_t addr, uint64_t *value)
{
	uint64_t size = ctx->sample->sample.stack_size;

	if (addr < ctx->sp || size < sizeof(*value) || addr - ctx->sp > size - sizeof(*value))
		return false;
	memcpy(value, ctx->sample->sample.stack + (addr - ctx->sp), sizeof(*value));
	return true;
}

/* A word of the process as far as the sample shows it: the stack copy, else (unwind tables and
 * code) the file of a module this unwind already met, whose other segments (.eh_frame sits in
 * the read-only one) need not be in our maps. Above SYNTH_BASE, the converted .debug_frame
 * images. The rows' walk and libunwind read through this one function, so that they see the
 * same memory even where a garbage CFA points. */
static bool ctx_word(const struct unwind_ctx *ctx, uint64_t addr, uint64_t *value)
{
	unw_word_t word;

	if (addr >= SYNTH_BASE) {
		if (synth_read(ctx->unwinder, addr, &word) < 0)
			return false;
		*value = word;
		return true;
	}
	if (stack_word(ctx, addr, value))
		return true;
	for (size_t i = ctx->nmodules; i-- > 0;)
		if (symbolizer_read_module(&ctx->modules[i], addr, value, sizeof(*value)) == 0)
			return true;
	return false;
}

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *value, int write,
		      void *arg)
{
	struct unwind_ctx *ctx = arg;
	uint64_t v;

	(void)as;
	if (write || !ctx->reads_left)
		return -UNW_EINVAL;
	ctx->reads_left--;
	if (!ctx_word(ctx, addr, &v))
		return -UNW_EINVAL;
	*value = v;
	return 0;
}

static int access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *value, int write,
		      void *arg)
{
	struct unwind_ctx *ctx = arg;
	uint64_t v;

	(void)as;
	if (write || sample_reg(ctx->sample, perf_reg_of(reg), &v) < 0)
		return -UNW_EBADREG;
	*value = v;
	return 0;
}

static int access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *value, int write,
			void *arg)
{
	(void)as;
	(void)reg;
	(void)value;
	(void)write;
	(void)arg;
	return -UNW_EBADREG;
}

static int resume(unw_addr_space_t as, unw_cursor_t *cursor, void *arg)
{
	(void)as;
	(void)cursor;
	(void)arg;
	return -UNW_EINVAL;
}

static int get_proc_name(unw_addr_space_t as, unw_word_t addr, char *buf, size_t len,
			 unw_word_t *offset, void *arg)
{
	(void)as;
	(void)addr;
	(void)buf;
	(void)len;
	(void)offset;
	(void)arg;
	return -UNW_ENOINFO; /* names come from the symbolizer */
}

/* ---- stepping by rules -------------------------------------------------------------------- */

/* Most frames' CFI rows are "CFA = register + offset, return address and callee-saved registers at
 * CFA + offsets" (unwind_rules.h). Stepping such a frame is a cached lookup by the module's
 * link-time address and a load from the stack copy, where libunwind takes a binary search and a
 * parse of the FDE through our accessors, a call per byte, for every frame its per-process cache
 * has not seen. walk() follows libunwind's steps exactly (lookup at ip - 1 but in the first frame,
 * CFA from the register's value in this frame, the same reasons to stop); the first frame whose
 * row is not simple, a missing FDE (.debug_frame may have it) or a register it does not know
 * hands the whole sample to libunwind, so the stacks are libunwind's. */

enum walk_result { WALK_DONE, WALK_LIBUNWIND };

/* Whether the frame looked up at lookup (in m) is the last one this stack holds: Go's runtime
 * started the stack there, or switched to it from another, whose frames the copy does not have
 * (module.h). Its "caller" would be whatever that stack left behind. */
static bool ends_stack(const struct unwind_info *m, uint64_t lookup)
{
	return m && module_frame_kind(m->module, lookup - m->bias) != MODULE_FRAME_CALL;
}

/* Where the row says the caller's value of tracked register t is, for a frame whose CFA is cfa.
 * libunwind's "null location", which it takes for a lost register (the end of the chain for the
 * return address and rbp), is a memory location at address 0: a register saved at CFA + offset
 * = 0 is lost for it, so it is lost here too, or the two would disagree on garbage stacks. */
static enum unwind_where walk_where(const struct unwind_rule *rule, int t, uint64_t cfa)
{
	if (rule->where[t] == UNWIND_AT_CFA && cfa + (uint64_t)(int64_t)rule->offset[t] == 0)
		return UNWIND_UNDEFINED;
	return rule->where[t];
}

/* The caller's registers by rule: the stack pointer is the CFA; callee-saved registers stay or
 * are loaded from the stack copy. A register is unknown when the row has it undefined (libdw
 * cannot tell that from "not said", which libunwind takes as unchanged), when it was saved outside
 * the copy (libunwind reads it only when used, from memory we cannot be sure to see the same way),
 * and for the caller-saved ones (libunwind keeps stale values, which no sane CFA uses): a CFA
 * that needs an unknown register hands the sample to libunwind. */
static void walk_registers(const struct unwind_ctx *ctx, const struct unwind_rule *rule,
			   uint64_t cfa, uint64_t *regs, uint32_t *known)
{
	uint32_t kept = 0;

	for (int t = 0; t < UNWIND_RA; t++) {
		int reg = unwind_rule_dwarf[t];
		enum unwind_where where = walk_where(rule, t, cfa);

		if (where == UNWIND_SAME)
			kept |= *known & (1u << reg);
		else if (where == UNWIND_AT_CFA &&
			 stack_word(ctx, cfa + (uint64_t)(int64_t)rule->offset[t], &regs[reg]))
			kept |= 1u << reg;
	}
	regs[DWARF_RSP] = cfa;
	*known = kept | (1u << DWARF_RSP);
}

/* Whether ra can be a return address: in code proftop can unwind from (an ELF file's, or JIT
 * code). A frame pointer that code without one left in rbp points anywhere; the word after it
 * is rarely that. */
static bool returns_to_code(struct unwind_ctx *ctx, uint64_t ra)
{
	return ra && (ctx_module(ctx, ra - 1) ||
		      symbolizer_jit_code(ctx->unwinder->symbolizer, ctx->pid, ra - 1));
}

/* What the epilogue at a return address in JIT code says (unwind_jit.h), cached by (pid,
 * address): the code is read from the process once (it outlives its samples: trampolines and
 * compiled code stay where they are, but for a moving GC's, which keeps frame pointers). */
struct jit_exit_entry {
	uint64_t ip;
	pid_t pid;
	bool known, ok;
	struct unwind_jit_exit exit;
};

static const struct unwind_jit_exit *jit_exit(struct unwind_dwarf *u, pid_t pid, uint64_t ip)
{
	struct jit_exit_entry *e = &u->jit_exits[util_hash_u64(ip ^ ((uint64_t)(uint32_t)pid << 40)) &
						  (JIT_EXITS - 1)];
	uint8_t code[32];
	struct iovec local = { code, sizeof(code) }, remote = { (void *)(uintptr_t)ip, sizeof(code) };

	if (!e->known || e->ip != ip || e->pid != pid) {
		e->ip = ip;
		e->pid = pid;
		e->known = true;
		/* (a short read near the end of the mapping reads what there is) */
		ssize_t got = process_vm_readv(pid, &local, 1, &remote, 1, 0);

		e->ok = got > 0 && unwind_jit_epilogue(code, (size_t)got, &e->exit);
	}
	return e->ok ? &e->exit : NULL;
}

/* A frame of JIT code stepped over by its epilogue: the return address and rbp where it says. */
static bool epilogue_step(struct unwind_ctx *ctx, uint64_t ip, uint64_t *regs, uint32_t *known,
			  uint64_t *out_ip)
{
	const struct unwind_jit_exit *x;
	uint64_t sp = regs[DWARF_RSP], ra, rbp;

	if (!symbolizer_jit_code(ctx->unwinder->symbolizer, ctx->pid, ip) ||
	    !(x = jit_exit(ctx->unwinder, ctx->pid, ip)) ||
	    !stack_word(ctx, sp + 8ull * x->words, &ra) || !returns_to_code(ctx, ra) ||
	    (x->rbp_word >= 0 && !stack_word(ctx, sp + 8ull * (unsigned)x->rbp_word, &rbp)))
		return false;
	if (x->pops_others)
		*known &= (1u << UNW_X86_64_RBP);
	if (x->rbp_word >= 0) {
		regs[UNW_X86_64_RBP] = rbp;
		*known |= 1u << UNW_X86_64_RBP;
	}
	regs[DWARF_RSP] = sp + 8ull * x->words + 8;
	*known |= 1u << DWARF_RSP;
	*out_ip = ra;
	return true;
}

/* JIT code has no unwind tables, but the JITs that write perf maps keep frame pointers (V8,
 * HotSpot): a frame of code in an executable mapping without an ELF image is stepped over by
 * rbp, as perf's frame-pointer unwinder would: the caller's return address at rbp + 8, its rbp
 * at rbp, its stack pointer rbp + 16; and so is a frame without CFI that such a frame called
 * (V8's builtins, in node's own text without CFI, between JavaScript frames). Only upwards on
 * the stack copy and only from a known rbp; doc/accuracy.md names the rule. */
static bool frame_pointer_step(struct unwind_ctx *ctx, uint64_t lookup, bool jit, uint64_t *regs,
			       uint32_t *known, uint64_t *ip)
{
	uint64_t fp = regs[UNW_X86_64_RBP], caller_fp, ra;

	if (!(*known & (1u << UNW_X86_64_RBP)) || fp < regs[DWARF_RSP] ||
	    (jit && !symbolizer_jit_code(ctx->unwinder->symbolizer, ctx->pid, lookup)) ||
	    !stack_word(ctx, fp, &caller_fp) || !stack_word(ctx, fp + 8, &ra) ||
	    !returns_to_code(ctx, ra) || (caller_fp && caller_fp <= fp))
		return false;
	regs[UNW_X86_64_RBP] = caller_fp;
	regs[DWARF_RSP] = fp + 16;
	*known = (1u << UNW_X86_64_RBP) | (1u << DWARF_RSP);
	*ip = ra;
	return true;
}

/* Unwind ctx's sample into ips by rules alone, or say that libunwind must. */
static enum walk_result walk(struct unwind_ctx *ctx, uint64_t *ips, size_t max, size_t *n,
			     bool *truncated)
{
	uint64_t regs[DWARF_NREGS], ip;
	uint32_t known = 0;
	bool by_fp = false;        /* the last frame was stepped over by its frame pointer */

	/* libunwind's register numbers on x86-64 are DWARF's. */
	for (int reg = 0; reg < DWARF_NREGS; reg++)
		if (sample_reg(ctx->sample, perf_reg_of(reg), &regs[reg]) == 0)
			known |= 1u << reg;
	if (!(known & (1u << UNW_X86_64_RIP)))
		return WALK_LIBUNWIND;
	ip = regs[UNW_X86_64_RIP];
	regs[DWARF_RSP] = ctx->sp;
	*n = 0;
	while (ip) {
		uint64_t lookup = *n ? ip - 1 : ip, cfa, ra;
		const struct unwind_info *m;
		const struct unwind_rule *rule;

		if (*n == max) {
			*truncated = true;
			break;
		}
		ips[(*n)++] = ip;
		m = ctx_module(ctx, lookup);
		if (!m && epilogue_step(ctx, ips[*n - 1], regs, &known, &ip)) {
			by_fp = true;
			continue;
		}
		if (!m && (by_fp = frame_pointer_step(ctx, lookup, true, regs, &known, &ip)))
			continue;
		if (!m) { /* no unwind information, no frame pointer to follow: we stop here */
			*truncated = true;
			break;
		}
		if (ends_stack(m, lookup))
			break;
		if (!m->eh_frame_hdr)
			return WALK_LIBUNWIND;
		rule = unwind_rules_get(ctx->unwinder->rules, m->module, lookup - m->bias);
		if (rule->kind == UNWIND_RULE_NONE && by_fp &&
		    frame_pointer_step(ctx, lookup, false, regs, &known, &ip))
			continue;
		by_fp = false;
		if (rule->kind != UNWIND_RULE_SIMPLE || !(known & (1u << rule->cfa_reg)))
			return WALK_LIBUNWIND;
		cfa = regs[rule->cfa_reg] + (uint64_t)(int64_t)rule->cfa_offset;
		if (walk_where(rule, UNWIND_RA, cfa) == UNWIND_UNDEFINED)
			break; /* the outermost frame */
		if (!ctx_word(ctx, cfa + (uint64_t)(int64_t)rule->offset[UNWIND_RA], &ra)) {
			*truncated = true; /* the copy ends before the frame does */
			break;
		}
		/* libunwind calls a frame that changes neither a bad one. */
		if (ra == ip && cfa == regs[DWARF_RSP]) {
			*truncated = true;
			break;
		}
		/* The x86-64 ABI ends the chain where rbp is lost (libunwind's unw_step). */
		if (walk_where(rule, UNWIND_RBP, cfa) == UNWIND_UNDEFINED)
			break;
		walk_registers(ctx, rule, cfa, regs, &known);
		ip = ra;
	}
	return WALK_DONE;
}

/* libunwind's locks (frame cache, memory pool) block every signal around each access, two
 * sigprocmask() calls per frame, so that a signal handler unwinding the same thread cannot
 * deadlock on them. proftop never unwinds in a signal handler, and those system calls were
 * three quarters of the cost of unwinding: bench/replay measured 29,000 samples/s on a 60-frame
 * stack with them and 123,000 without. So proftop defines sigprocmask() itself — the
 * executable's definition is the one every shared library binds to — and while this thread is
 * inside unwind_dwarf() it leaves the mask as it is; everywhere else it is libc's. */
static _Thread_local bool unwinding;

int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	int err;

	if (unwinding) {
		if (old)
			sigemptyset(old); /* only ever handed back to us for the matching restore */
		return 0;
	}
	err = pthread_sigmask(how, set, old);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

struct unwind_dwarf *unwind_dwarf_new(struct symbolizer *symbolizer, struct diag *diag)
{
	struct unwind_dwarf *u = xcalloc(1, sizeof(*u));

	u->symbolizer = symbolizer;
	u->diag = diag;
	u->accessors = (unw_accessors_t){
		.find_proc_info = find_proc_info,
		.put_unwind_info = put_unwind_info,
		.get_dyn_info_list_addr = get_dyn_info_list_addr,
		.access_mem = access_mem,
		.access_reg = access_reg,
		.access_fpreg = access_fpreg,
		.resume = resume,
		.get_proc_name = get_proc_name,
	};
	idmap_init(&u->spaces_by_pid);
	u->rules = unwind_rules_new(RULES_LOG2);
	u->jit_exits = xcalloc(JIT_EXITS, sizeof(*u->jit_exits));
	u->fast = true;
	return u;
}

void unwind_dwarf_set_fast(struct unwind_dwarf *u, bool fast)
{
	u->fast = fast;
}

void unwind_dwarf_stats(const struct unwind_dwarf *u, struct unwind_dwarf_stats *out)
{
	out->fast_samples = u->fast_samples;
	out->libunwind_samples = u->libunwind_samples;
	unwind_rules_stats(u->rules, &out->rule_lookups, &out->rule_misses);
}

static unw_addr_space_t space_of(struct unwind_dwarf *u, pid_t pid)
{
	uint32_t i = idmap_get(&u->spaces_by_pid, (uint64_t)(uint32_t)pid);
	unw_addr_space_t as;

	if (i != IDMAP_MISSING && u->spaces[i])
		return u->spaces[i];
	as = unw_create_addr_space(&u->accessors, 0);
	if (!as) {
		diag_report(u->diag, DIAG_WARNING, "libunwind could not create an address space: "
			    "stacks of process %d end at the sampled function", (int)pid);
		return NULL;
	}
	/* The frame cache saves parsing CFI again for every frame. Debian's libunwind has no
	 * per-thread cache (it falls back to the global one, locked as sigprocmask() below). */
	unw_set_caching_policy(as, UNW_CACHE_GLOBAL);
	if (i == IDMAP_MISSING) {
		xgrow((void **)&u->spaces, &u->spaces_cap, u->nspaces + 1, sizeof(*u->spaces));
		i = (uint32_t)u->nspaces++;
		idmap_put(&u->spaces_by_pid, (uint64_t)(uint32_t)pid, i);
	}
	u->spaces[i] = as;
	return as;
}

void unwind_dwarf_forget(struct unwind_dwarf *u, pid_t pid)
{
	uint32_t i = idmap_get(&u->spaces_by_pid, (uint64_t)(uint32_t)pid);

	if (i != IDMAP_MISSING && u->spaces[i]) {
		unw_destroy_addr_space(u->spaces[i]);
		u->spaces[i] = NULL;
	}
}

void unwind_dwarf_free(struct unwind_dwarf *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->nspaces; i++)
		if (u->spaces[i])
			unw_destroy_addr_space(u->spaces[i]);
	free(u->spaces);
	for (size_t i = 0; i < u->nsynths; i++)
		debug_frame_free(&u->synths[i].image);
	free(u->synths);
	unwind_rules_free(u->rules);
	free(u->jit_exits);
	idmap_free(&u->spaces_by_pid);
	free(u);
}

size_t unwind_dwarf(struct unwind_dwarf *u, const struct sample_record *r, uint64_t *ips,
		    size_t max, bool *truncated)
{
	struct unwind_ctx ctx = { .unwinder = u, .sample = r, .pid = (pid_t)r->pid };
	unw_addr_space_t as;
	unw_cursor_t cursor;
	size_t n = 0;
	int step = 0;

	*truncated = false;
	if (!r->sample.regs_abi || sample_reg(r, PERF_REG_X86_SP, &ctx.sp) < 0)
		return 0;
	if (u->fast) {
		if (walk(&ctx, ips, max, &n, truncated) == WALK_DONE) {
			u->fast_samples++;
			if (n == 0)
				*truncated = true;
			return n;
		}
		/* From the start again, as if the walk had not been: libunwind reads words outside
		 * the stack copy from the modules met so far, which must be its own. */
		*truncated = false;
		ctx.lookup_failed = false;
		ctx.nmodules = 0;
		n = 0;
	}
	u->libunwind_samples++;
	as = space_of(u, ctx.pid);
	if (!as) {
		*truncated = true;
		return 0;
	}
	unwinding = true;
	ctx.reads_left = READS_PER_STEP;
	if (unw_init_remote(&cursor, as, &ctx) < 0) {
		unwinding = false;
		*truncated = true;
		return 0;
	}
	do {
		unw_word_t ip;

		if (unw_get_reg(&cursor, UNW_REG_IP, &ip) < 0 || !ip)
			break;
		if (n == max) {
			*truncated = true;
			break;
		}
		ips[n++] = ip;
		/* Met before the step: a row libunwind has cached is not looked up again, but a CFA
		 * expression in it (a PLT entry's) is read from the module's .eh_frame, which
		 * access_mem finds only in modules met. */
		if (ends_stack(ctx_module(&ctx, n == 1 ? ip : ip - 1), n == 1 ? ip : ip - 1))
			break;
		ctx.reads_left = READS_PER_STEP;
		step = unw_step(&cursor);
		/* Without unwind information libunwind guesses the caller from rbp, which code built
		 * without frame pointers uses for anything: stop at the last frame we know. */
		if (ctx.lookup_failed) {
			*truncated = true;
			break;
		}
	} while (step > 0);
	unwinding = false;
	/* unw_step() returns 0 at the outermost frame (_start's CFI marks the return address
	 * undefined); anything negative means the unwind lost its way. */
	if (step < 0 || n == 0)
		*truncated = true;
	return n;
}
