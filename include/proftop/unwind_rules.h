/* unwind_rules.h — a frame's DWARF CFI row in the compact form nearly all compiled code has, and a
 * cache of them by (module, link-time address).
 *
 * A row says how to find the caller's registers: the CFA (canonical frame address, the caller's
 * stack pointer) as a register plus an offset, the return address and each callee-saved register
 * saved at CFA + offset, unchanged, or lost. Rows in that form ("simple") let unwind_dwarf.c step
 * a frame with a hash lookup and a load from the stack copy. Anything else (a CFA or register
 * expression, a register kept in another register, a value rule, a signal frame, a return address
 * column other than x86-64's 16) is "complex": such a frame is left to libunwind, as is code no
 * .eh_frame FDE covers ("none").
 *
 * Rows are read with libdw (dwarf_cfi_addrframe) from the module's .eh_frame, which libdw
 * bounds-checks. The cache belongs to one thread. */
#ifndef PROFTOP_UNWIND_RULES_H
#define PROFTOP_UNWIND_RULES_H

#include <stdint.h>

struct module;
struct Dwarf_CFI_s;

enum unwind_rule_kind {
	UNWIND_RULE_NONE,      /* no FDE covers the address, or libdw refused its CFI */
	UNWIND_RULE_COMPLEX,   /* an FDE does, in a form only libunwind follows */
	UNWIND_RULE_SIMPLE,
};

/* The registers a simple rule says something of, and their DWARF numbers (unwind_rule_dwarf). */
enum unwind_tracked {
	UNWIND_RBX, UNWIND_RBP, UNWIND_R12, UNWIND_R13, UNWIND_R14, UNWIND_R15,
	UNWIND_RA,             /* the return address: the caller's instruction pointer */
	UNWIND_NTRACKED,
};

enum unwind_where {
	UNWIND_SAME,           /* the caller's value is this frame's */
	/* Lost (for the return address: the outermost frame; rbp lost ends the chain too, as the
	 * x86-64 ABI has it). For rbx and r12-r15 it may also mean "not said": libdw gives its ABI
	 * default then, which has rbx lost (elfutils 0.188), while libunwind keeps the value. */
	UNWIND_UNDEFINED,
	UNWIND_AT_CFA,         /* saved at CFA + offset */
};

struct unwind_rule {
	uint8_t kind;          /* enum unwind_rule_kind */
	uint8_t cfa_reg;       /* DWARF register number: CFA = its value + cfa_offset */
	uint8_t where[UNWIND_NTRACKED];   /* enum unwind_where */
	int32_t cfa_offset;
	int16_t offset[UNWIND_NTRACKED];
};

/* DWARF x86-64 register numbers of the tracked ones: rbx 3, rbp 6, r12-r15, return address 16. */
extern const uint8_t unwind_rule_dwarf[UNWIND_NTRACKED];

/* The row of cfi at link-time address addr. Never fails: a row it cannot read is kind NONE. */
void unwind_rule_read(struct Dwarf_CFI_s *cfi, uint64_t addr, struct unwind_rule *out);

struct unwind_rules;

/* A cache of 2^log2_entries rows (direct-mapped; a row costs 48 bytes). */
struct unwind_rules *unwind_rules_new(unsigned log2_entries);
void unwind_rules_free(struct unwind_rules *rules);
/* mod's row at link-time address addr: cached, or read from its .eh_frame (module_cfi()) and
 * cached. Valid until the next call. mod must outlive the cache's use of it: keys are pointers. */
const struct unwind_rule *unwind_rules_get(struct unwind_rules *rules, struct module *mod,
					   uint64_t addr);
/* Lookups so far, and those that read a row (misses). */
void unwind_rules_stats(const struct unwind_rules *rules, uint64_t *lookups, uint64_t *misses);

#endif
