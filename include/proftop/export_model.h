/* export_model.h — what pprof's profile.proto and OTLP's profiles both describe, made once from
 * a snapshot for their writers (export_pprof.c, export_otlp.c): a string table, a Mapping per
 * module file, Locations (a function's entry, or a sampled instruction with the Lines of its
 * inlined chain) and the samples, each a stack of Locations, leaf first, with its count.
 *
 * Addresses are the modules' link-time (ELF) addresses. A module's Mapping spans the link-time
 * range of its executable PT_LOAD segment (the one holding its functions' code), its file_offset
 * that segment's p_offset, so address - memory_start + file_offset is the address's offset in
 * the file, as symbolizers compute it; build_id is the file's GNU build-id. Both are read from
 * the file when the profile is written (libelf): a file that cannot be read, that changed since
 * profiling began, or whose segment no longer holds those functions gives a Mapping that spans
 * the functions' code, without build ID or file offset.
 *
 * Samples, one per (stack, leaf site): a thread node's self samples are split by the sites they
 * were taken at (snapshot_node_sites()). The leaf Location is the sampled instruction itself:
 * its address, and a Line (function, line) per frame there, innermost first, so an inlined chain
 * is several Lines in one Location (pprof's convention; the callers that share it are left off
 * the rest of the stack). The callers are Locations at their function's entry (its code's start,
 * on the line of its lowest sampled address): proftop keeps per-path counts by function, not by
 * call site, so the sampled instruction is exact and the callers are placed at their function's
 * entry. A node's samples without a site (no line lookups, a file read back, "[other]") have
 * their leaf at its function's entry too; a function without code or sites has one Location with
 * no address, a Line of line 0. Location ids: a function's entry is its function id, a leaf
 * nfuncs + its site's. */
#ifndef PROFTOP_EXPORT_MODEL_H
#define PROFTOP_EXPORT_MODEL_H

#include "proftop/debugfile.h"
#include "proftop/export_walk.h"
#include "proftop/idmap.h"
#include "proftop/snapshot.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MODEL_NO_SITE UINT32_MAX

/* One Mapping: a module's file, or its name alone when none of its functions has one. */
struct model_mapping {
	const char *key;            /* interned: the file's path, else the module's name */
	const char *path;           /* NULL: no file */
	uint64_t lo, hi;            /* the range of its functions' code */
	uint64_t start, limit, offset; /* as written; all 0 without a file */
	unsigned char build_id[DEBUGFILE_BUILD_ID_MAX];
	size_t build_id_len;
	bool lines, inline_frames;
};

/* One tree whose samples are written: a thread's (thread NULL: no thread to name). */
struct model_tree {
	const struct snapshot_thread *thread;
	uint32_t root;
};

/* Go's heap profile: its sample types in its order, and proftop's kind of profile of each. */
struct model_heap_type {
	const char *type, *unit, *kind;
};
extern const struct model_heap_type model_heap_types[SNAPSHOT_NCOMPANIONS];

struct export_model {
	const struct snapshot *s;   /* the snapshot (while a part's samples are walked: the part) */
	struct strpool *pool;
	struct idmap string_index;  /* interned string → index in strings */
	const char **strings;
	size_t nstrings, strings_cap;
	uint32_t *mapping_of;       /* function → its mapping id (0: function not used) */
	struct model_mapping *mappings; /* mapping id - 1 */
	size_t nmappings, mappings_cap;
	struct idmap mapping_index; /* interned key → mapping id */
	struct idmap module_file;   /* interned module → a function of it with a file, + 1 */
	uint32_t *first_site;       /* per function: its lowest sampled address with a line */
	/* Per site: a leaf Location's Lines after its own, the sites of the callers its code is
	 * inlined into, innermost first: chain[chain_at[site]] on, chain_len[site] of them
	 * (MODEL_NOT_LEAF: no leaf Location). Kept per leaf, not as a link per site: a site
	 * (function, address) recurs in the chain of code inlined into itself, and links would
	 * make a cycle. */
	uint32_t *chain, *chain_at, *chain_len;
	size_t nchain, chain_cap;
	struct idmap site_index;    /* hash of (function, address) → site (verified on lookup) */
	uint64_t profiled_since;    /* CLOCK_REALTIME ns when profiling began */
	struct model_tree *trees;   /* the scope's: its own tree, or every thread's */
	size_t ntrees;
	/* An allocation profile's snapshots, in model_heap_types' order (NULL: none), and the trees
	 * of each that are written (the snapshot's own: the scope's; a companion's: every
	 * thread's). */
	const struct snapshot *parts[SNAPSHOT_NCOMPANIONS];
	struct model_tree *part_trees[SNAPSHOT_NCOMPANIONS];
	size_t part_ntrees[SNAPSHOT_NCOMPANIONS];
};

/* The model of the scope of s: its strings ("" first), mappings and functions in the order the
 * samples meet them (main's first). */
void model_init(struct export_model *m, const struct snapshot *s, const struct export_scope *scope);
void model_free(struct export_model *m);

/* The index of string str in the table (added when new). */
uint64_t model_string(struct export_model *m, const char *str);

/* What the mappings say of themselves (lines, inlined chains) and their files' layouts: once,
 * after every sample was walked (the chains are made by the walk). */
void model_mappings_finish(struct export_model *m);

/* One sample: locations[0..depth), leaf first, count of them, in tree t. */
typedef void model_sample_fn(void *arg, const struct model_tree *t, const uint64_t *locations,
			     size_t depth, uint64_t count);
/* The samples of tree t of snapshot part (m->s or one of m->parts), each node with self samples
 * depth first, until stop(arg) says so (NULL: never). */
void model_samples(struct export_model *m, const struct snapshot *part, const struct model_tree *t,
		   model_sample_fn *fn, bool (*stop)(void *arg), void *arg);

/* A Location's Line. */
struct model_line {
	uint32_t func;
	uint32_t line;
};
/* One Location: its id, mapping id (0: none), address (0: none) and Lines, innermost first. */
typedef void model_location_fn(void *arg, uint64_t id, uint32_t mapping, uint64_t addr,
			       const struct model_line *lines, size_t nlines);
/* Every Location the walked samples use (after model_mappings_finish()): the functions' entries
 * in function order, then the leaves in site order. */
void model_locations(struct export_model *m, model_location_fn *fn, void *arg);
/* The first site of function f with a line (MODEL_NO_SITE: none): its file names the function's. */
static inline uint32_t model_first_site(const struct export_model *m, uint32_t f)
{
	return m->first_site[f];
}

/* A build ID as lowercase hex into hex (2 * DEBUGFILE_BUILD_ID_MAX + 1 bytes). */
void model_build_id_hex(const struct model_mapping *mapping, char *hex);

#endif
