/* annotate.h — where inside one function its samples were: a snapshot's sites (snapshot.h) summed
 * per source line, and the source text of those lines when the file is on disk. Frontends (batch
 * --annotate, the screen's annotate view) read a function through this.
 *
 * Everything here works on one snapshot and copies nothing the snapshot owns: an annotation
 * lives no longer than its snapshot. Thread-safe as snapshots are (one annotation per thread). */
#ifndef PROFTOP_ANNOTATE_H
#define PROFTOP_ANNOTATE_H

#include "proftop/asuser.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct disasm;
struct disasm_insn;
struct snapshot;
struct snapshot_site;

struct annotate_line {
	const char *file;   /* as the compiler recorded it; NULL: addresses without a line */
	unsigned line;
	uint64_t self;      /* samples taken on the line */
	uint64_t total;     /* samples with the line on their stack (a recursive one may count a
			     * sample on two lines) */
};

struct annotation {
	uint32_t func;
	uint64_t self, total;          /* the function's, as the flat table counts them */
	struct annotate_line *lines;   /* by file, then line; the unknown last */
	size_t nlines;
	bool has_lines;                /* some site had a source line */
	bool has_sites;                /* the snapshot had sites for it at all */
	const char *no_lines;          /* the snapshot's word on why it has none (snapshot.h) */
};

/* The functions of snapshot named name: exactly, or as "name (inlined)", whole or shortened as
 * --names shortens it (view_name.h). Fills out[0..max) with their ids, hottest (by total) first;
 * returns how many there are. */
size_t annotate_find(const struct snapshot *snapshot, const char *name, uint32_t *out, size_t max);

/* Sum func's sites per line into *out (annotation_free() it). */
void annotate_function(const struct snapshot *snapshot, uint32_t func, struct annotation *out);
void annotation_free(struct annotation *annotation);
/* For annotating many functions of one snapshot: the sites of function f are
 * (*ids)[first[f] .. first[f + 1]). Returns first (malloc'd, as is *ids). */
size_t *annotate_index(const struct snapshot *snapshot, uint32_t **ids);
/* annotate_function() through that index. */
void annotate_indexed(const struct snapshot *snapshot, uint32_t func, const size_t *first,
		      const uint32_t *ids, struct annotation *out);
/* The order of annotation lines: by file (NULL last), then line. */
int annotate_compare_position(const char *file_a, unsigned line_a, const char *file_b,
			      unsigned line_b);
/* Add rows without samples for the positions files[i]:lines[i] a has no row for (those with a
 * NULL file are left out), in order: the lines of a function's instructions, say. */
void annotate_add_positions(struct annotation *annotation, const char *const *files,
			    const unsigned *lines, size_t n);
/* The index of the line with the most self samples (total on a tie, then the first); 0 when
 * there are none. */
size_t annotate_hottest(const struct annotation *annotation);
/* Why an annotation has no source lines, and how to get them, for every frontend to say alike:
 * what was wrong with its file's DWARF when something was, as the profile recorded it (the text
 * names files: show it in visible form); NULL when it has some. */
const char *annotate_why_no_lines(const struct annotation *annotation);

/* --- instructions -----------------------------------------------------------------------------
 *
 * A function's instructions beside its annotation (batch --asm, the screen's Lines view): in the
 * order of the annotation's rows, by (file, line) and by address within a line, with the samples
 * taken in each instruction's bytes. The instructions are made once per function; the samples
 * are counted again for every snapshot. */
struct annotate_code {
	struct disasm_insn *insns;    /* by address */
	size_t n;
	size_t *order;                /* indexes of insns in the order of the rows */
	struct snapshot_site *sites;  /* the function's in the counted snapshot, by address */
	size_t nsites, sites_cap;
};

/* func's instructions from the file its snapshot names, read with d (code is then
 * annotate_code_free()'d); an inlined function's are those of its copies in the functions its
 * samples were in (disasm_inlined()). Returns 0, or -errno with *why (static) saying why there are
 * none: no code address is known, or what disasm_function() or disasm_inlined() said. */
int annotate_code_load(struct annotate_code *code, struct disasm *d, const struct snapshot *snapshot,
		       uint32_t func, const char **why);
void annotate_code_free(struct annotate_code *code);
/* Rows without samples for the lines of code's instructions that annotation has none for. */
void annotate_code_positions(const struct annotate_code *code, struct annotation *annotation);
/* Take func's samples per address from snapshot, for annotate_code_samples(). */
void annotate_code_count(struct annotate_code *code, const struct snapshot *snapshot, uint32_t func);
/* The samples of the sites in the bytes of insns[i] (a call's site is the byte before its return
 * address, inside the call instruction). */
void annotate_code_samples(const struct annotate_code *code, size_t i, uint64_t *self,
			   uint64_t *total);
/* Where the instructions of the row l end: order[from ..] up to the returned index come no later
 * than l's line (to the end when l is NULL). Walking the rows in order with it puts each
 * instruction under its line. */
size_t annotate_code_upto(const struct annotate_code *code, size_t from, const struct annotate_line *l);

/* Source files read for their text, each once per reader.
 *
 * A file's name comes from the profiled program's debug information, which its owner writes:
 * proftop (root, under -a or -p) reads it only as the owner of a process the function ran in
 * could (asuser.h). Those owners are the function's readers. */
#define ANNOTATE_READERS_MAX 8

struct annotate_readers {
	bool self;      /* read as proftop itself: the snapshot keeps no owners (a saved one) */
	size_t n;       /* else the known owners of the threads func ran in, up to the max: a file
			 * is read as the first who can; with none it is not read */
	bool unknown;   /* some thread's owner is not known (it ended before it was looked at) */
	struct asuser v[ANNOTATE_READERS_MAX];
};

/* Who func's source files are read as (O(nodes) of snapshot: once per function shown). */
void annotate_readers(const struct snapshot *snapshot, uint32_t func,
		      struct annotate_readers *out);

struct annotate_sources;

struct annotate_sources *annotate_sources_new(void);
void annotate_sources_free(struct annotate_sources *sources);
/* The text of line (1-based) of file, without its newline, read as readers could (NULL: as
 * proftop); NULL when the file cannot be read by them, is not a regular file, is over 16 MiB,
 * has fewer lines, or is newer than binary (the ELF file the line came from; NULL: not
 * compared), whose DWARF then likely gives other lines than the file's. *why (may be NULL) then
 * says why (it may name files: show it in visible form; valid until the next call). */
const char *annotate_source_line(struct annotate_sources *sources, const char *file,
				 unsigned line, const char *binary,
				 const struct annotate_readers *readers, const char **why);
/* A source file's text[0..len) (with a NUL at text[len]) made into lines, in place: NULs inside
 * become spaces, each newline the NUL that ends its line; *starts (malloc'd) gets where each line
 * starts. Returns the number of lines (a last newline starts none). Pure: annotate_source_line()
 * reads every file through it. */
size_t annotate_source_lines(char *text, size_t len, size_t **starts);
/* The ELF file func's lines come from: its code's file, or for code without one (an inlined
 * function) the file of another function of its module; NULL when none is known. */
const char *annotate_binary(const struct snapshot *snapshot, uint32_t func);

#endif
