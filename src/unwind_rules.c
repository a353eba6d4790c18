/* unwind_rules.c — CFI rows in compact form (see unwind_rules.h), read with libdw and cached.
 *
 * The cache is direct-mapped on (module, link-time address): a collision replaces the older row,
 * which costs one more libdw lookup when it comes back. Keying by module rather than by process
 * keeps the rows across processes that map the same file (each of a build's compiler processes
 * lives a fraction of a second: per-process caches would start empty every time). */
#include "proftop/unwind_rules.h"

#include "proftop/module.h"
#include "proftop/util.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stdlib.h>

#define DWARF_REG_RSP 7
#define DWARF_REG_RA 16
#define DWARF_NREGS 17

const uint8_t unwind_rule_dwarf[UNWIND_NTRACKED] = { 3, 6, 12, 13, 14, 15, DWARF_REG_RA };

struct unwind_rules_entry {
	const struct module *mod;      /* NULL: empty */
	uint64_t addr;
	struct unwind_rule rule;
};

struct unwind_rules {
	struct unwind_rules_entry *entries;
	size_t mask;
	uint64_t lookups, misses;
};

/* One register's rule as where/offset; false when it is none of same, undefined, CFA + offset
 * (within an int16). libdw describes "CFA + N" as DW_OP_call_frame_cfa [DW_OP_plus_uconst N],
 * N modulo 2^64 for a negative offset. */
static bool read_register(Dwarf_Frame *frame, int regno, uint8_t *where, int16_t *offset)
{
	static Dwarf_Op unset; /* tells "libdw set *ops" from NULL and from ops_mem */
	Dwarf_Op ops_mem[3], *ops = &unset;
	size_t nops = 0;
	int64_t off = 0;

	if (dwarf_frame_register(frame, regno, ops_mem, &ops, &nops) != 0) /* 1: a value rule */
		return false;
	if (nops == 0) {
		if (ops == NULL)
			*where = UNWIND_SAME;
		else if (ops == ops_mem)
			*where = UNWIND_UNDEFINED;
		else
			return false;
		*offset = 0;
		return true;
	}
	if (ops[0].atom != DW_OP_call_frame_cfa || nops > 2)
		return false;
	if (nops == 2) {
		if (ops[1].atom != DW_OP_plus_uconst)
			return false;
		off = (int64_t)ops[1].number;
	}
	if (off < INT16_MIN || off > INT16_MAX)
		return false;
	*where = UNWIND_AT_CFA;
	*offset = (int16_t)off;
	return true;
}

/* The CFA as register + offset: libdw gives a def_cfa rule as one DW_OP_bregx. */
static bool read_cfa(Dwarf_Frame *frame, struct unwind_rule *out)
{
	Dwarf_Op *ops = NULL;
	size_t nops = 0;
	int64_t off;

	if (dwarf_frame_cfa(frame, &ops, &nops) != 0 || nops != 1 || !ops ||
	    ops[0].atom != DW_OP_bregx || ops[0].number >= DWARF_NREGS)
		return false;
	off = (int64_t)ops[0].number2;
	if (off < INT32_MIN || off > INT32_MAX)
		return false;
	out->cfa_reg = (uint8_t)ops[0].number;
	out->cfa_offset = (int32_t)off;
	return true;
}

static bool read_simple(Dwarf_Frame *frame, struct unwind_rule *out)
{
	Dwarf_Addr start, end;
	bool signal = false;

	/* A signal frame's caller resumes at its exact address: libunwind knows that case. */
	if (dwarf_frame_info(frame, &start, &end, &signal) != DWARF_REG_RA || signal)
		return false;
	if (!read_cfa(frame, out))
		return false;
	for (int t = 0; t < UNWIND_NTRACKED; t++)
		if (!read_register(frame, unwind_rule_dwarf[t], &out->where[t], &out->offset[t]))
			return false;
	/* The same return address again would loop; libunwind's locations say what that means. */
	return out->where[UNWIND_RA] != UNWIND_SAME;
}

void unwind_rule_read(Dwarf_CFI *cfi, uint64_t addr, struct unwind_rule *out)
{
	Dwarf_Frame *frame = NULL;

	*out = (struct unwind_rule){ .kind = UNWIND_RULE_NONE };
	if (!cfi || dwarf_cfi_addrframe(cfi, addr, &frame) != 0 || !frame)
		return;
	if (read_simple(frame, out))
		out->kind = UNWIND_RULE_SIMPLE;
	else
		*out = (struct unwind_rule){ .kind = UNWIND_RULE_COMPLEX };
	free(frame);
}

struct unwind_rules *unwind_rules_new(unsigned log2_entries)
{
	struct unwind_rules *rules = xcalloc(1, sizeof(*rules));

	rules->entries = xcalloc((size_t)1 << log2_entries, sizeof(*rules->entries));
	rules->mask = ((size_t)1 << log2_entries) - 1;
	return rules;
}

void unwind_rules_free(struct unwind_rules *rules)
{
	if (!rules)
		return;
	free(rules->entries);
	free(rules);
}

const struct unwind_rule *unwind_rules_get(struct unwind_rules *rules, struct module *mod,
					   uint64_t addr)
{
	struct unwind_rules_entry *e =
		&rules->entries[util_hash_u64(addr ^ ((uint64_t)(uintptr_t)mod << 16)) & rules->mask];

	rules->lookups++;
	if (e->mod == mod && e->addr == addr)
		return &e->rule;
	rules->misses++;
	/* Another machine's file has another ABI's defaults for unsaid registers: libunwind's. */
	unwind_rule_read(module_cfi_x86_64(mod) ? module_cfi(mod) : NULL, addr, &e->rule);
	e->mod = mod;
	e->addr = addr;
	return &e->rule;
}

void unwind_rules_stats(const struct unwind_rules *rules, uint64_t *lookups, uint64_t *misses)
{
	*lookups = rules->lookups;
	*misses = rules->misses;
}
