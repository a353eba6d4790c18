/* symbols_internal.h — what symbols.c and symbols_jit.c share of a symbolizer (symbols.h):
 * its tables, and the JIT maps' part that the facade calls. Not for other modules. */
#ifndef PROFTOP_SYMBOLS_INTERNAL_H
#define PROFTOP_SYMBOLS_INTERNAL_H

#include "proftop/symbols.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct diag;
struct kallsyms;
struct maps;
struct perfmap;
struct strpool;

/* Addresses from here up are the kernel's: no JIT map describes them. */
#define KERNEL_START		(1ull << 63)
/* Reading perf maps takes at most 1/JIT_SHARE of a worker's time, and one look at one at most
 * JIT_SLICE_NS (plus a chunk and a merge: perfmap.h). */
#define JIT_SHARE		10
#define JIT_SLICE_NS		(10 * 1000 * 1000ll)
/* A map this long behind its file is worth a word to the user. */
#define JIT_BEHIND_NS		(2 * 1000 * 1000 * 1000ull)
/* The last look at the end of the run takes at most 1/JIT_SHARE of the run, within these. */
#define JIT_FINAL_MIN_NS	JIT_SLICE_NS
#define JIT_FINAL_MAX_NS	(1000 * 1000 * 1000ll)

enum symbolizer_kind {
	SYMBOLIZER_FILE,	/* a mapped file, ELF or not */
	SYMBOLIZER_SPECIAL,	/* "[vdso]", "[heap]", "[stack]", ...: no file behind it */
	SYMBOLIZER_ANON,	/* anonymous memory: "[anon]", "[anon:name]" */
};

struct symbolizer_key {
	enum symbolizer_kind kind;
	uint64_t dev;
	uint64_t ino;		/* FILE: 0 when unknown (then path is the key); vdso: image hash */
	const char *path;	/* interned in symbolizer->strings, so compared by pointer */
};

/* A module in the cache; mappings' cookies point here. */
struct symbolizer_entry {
	struct symbolizer_entry *next;	/* hash chain */
	uint64_t hash;
	struct symbolizer_key key;
	struct module *mod;
	uint64_t reads_seen;	/* module_source_reads() at the last trim */
	uint32_t idle;		/* trims since its DWARF was last read */
	uint32_t closes;	/* times its DWARF was closed for memory */
};

struct symbolizer_jit {
	pid_t pid;
	struct perfmap *map;
	int reported;		/* the last refresh error seen (0: none yet) */
	bool told_skipped;	/* the user knows the map went past its limits */
	bool told_cut;		/* ... and had names cut */
	bool told_behind;	/* ... and that it is read more slowly than it grows */
	bool missed;		/* an address of pid found no name in the map */
	bool gone;		/* the process ended: its last look is still to take */
	uint64_t changes;	/* perfmap_changes() when the owner was last told */
};

struct symbolizer {
	struct maps *maps;
	struct symbolizer_entry **modules;	/* hash buckets */
	size_t nbuckets;		/* a power of two */
	size_t nmodules;
	struct strpool *strings;	/* module keys, JIT names */
	const char *jit_module;		/* "[jit]", interned */
	const char *vdso_name;		/* "[vdso]", interned */
	struct symbolizer_jit *jits;	/* sorted by pid */
	size_t njits, jits_cap;
	int64_t jit_credit_ns;		/* what reading perf maps may still take; may go below 0 */
	uint64_t jit_credit_at;		/* when it was last refilled */
	uint64_t born_ns;		/* when the symbolizer was made: the run's start */
	const struct symbolizer_jit_ops *jit_ops;	/* NULL: no one is told */
	void *jit_arg;
	bool elf_ok;			/* libelf accepted our version */
	struct diag *diag;		/* NULL: reports dropped */
	struct kallsyms *kernel;	/* read at the first kernel address */
	bool kernel_tried;
	symbolizer_want_fn *want_debug;	/* told of modules a fetched debug file would help */
	void *want_arg;
};

/* The JIT maps (symbols_jit.c). */
struct symbolizer_jit *symbolizer_find_jit(const struct symbolizer *s, pid_t pid);
void symbolizer_drop_jit(struct symbolizer *s, pid_t pid);
void symbolizer_settle_jit(struct symbolizer *s, struct symbolizer_jit *jit);
void symbolizer_resolve_jit(struct symbolizer *s, pid_t pid, uint64_t addr,
				   struct symbol *out);

#endif
