/* perlframes.h — the Perl subs a perl process is in, read from its memory, as Devel::DProf
 * names them (Package::sub).
 *
 * The interpreter is found by its exported globals (PL_curinterp, PL_interp_size: dynamic
 * symbols, which Debian's stripped /usr/bin/perl keeps); its layout is known by the size of its
 * PerlInterpreter (PL_interp_size), one per known perl (perlframes.c lists them and where their
 * offsets come from). The main interpreter's context stack is walked: every stack of contexts
 * (PERL_SI, innermost first: sort and magic push one each), every CXt_SUB and CXt_FORMAT
 * context of it, innermost first; a sub is named by its package (its glob's stash's name, or
 * its own for a sub without a glob) and name, as tmon.out's & lines name them; its site is the
 * statement it is at (PL_curcop for the innermost, else the one that called the next inner
 * sub).
 *
 * An XS sub pushes no context: the one being called is the one the call op (PL_op, an
 * entersub) popped off Perl's stack, which stays there while it runs; it is the innermost
 * frame, named as Perl calls it (Digest::MD5::md5_hex), its native frames under it: a frame
 * kept only when the run loop's callee on the native stack is Perl_pp_entersub (pl->entersub).
 *
 * Which run loop runs which subs: a sub entered from C (call_sv: XS callbacks, sort and magic
 * subs, BEGIN blocks) has no op to return to, and its run loop ends with it; a stack of
 * contexts pushed for sort or magic has a run loop of its own. So the subs are cut into runs,
 * innermost first, one per call of Perl_runops_standard on the native stack.
 *
 * Everything read is checked before use (types of the SVs, counts, lengths); the process runs on
 * while it is read, and what fails the checks is reported, never guessed at. */
#ifndef PROFTOP_PERLFRAMES_H
#define PROFTOP_PERLFRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PERLFRAMES_MAX 512
#define PERLFRAMES_NAME_MAX 256
#define PERLFRAMES_CVS 256          /* subs cached per interpreter (direct-mapped) */

/* Reads len bytes of the process at addr into buf: 0, or -errno. */
typedef int perlframes_read_fn(void *arg, uint64_t addr, void *buf, size_t len);

/* An interpreter's globals in its file (link-time addresses; 0: absent), and where its call
 * op's function is. */
struct perlframes_symbols {
	uint64_t curinterp, interp_size, entersub, entersub_size;
};

/* The symbols of the ELF file at path. Returns 0, or -errno (-ENOENT: no PL_curinterp). */
int perlframes_symbols_of(const char *path, struct perlframes_symbols *out);

struct perlframes_cv;

struct perlframes {
	const struct perlframes_layout *layout;
	unsigned interp_size;       /* the process's PerlInterpreter's: tells its layout */
	uint64_t curinterp;         /* run-time address of PL_curinterp */
	uint64_t entersub, entersub_end; /* Perl_pp_entersub's code, run-time; 0: unknown */
	perlframes_read_fn *read;
	void *arg;
	struct perlframes_cv *cvs;  /* PERLFRAMES_CVS of them */
};

/* The interpreter whose symbols are sym, loaded with bias. Returns 0, -ENOTSUP for a perl
 * whose layout is unknown (interp_size says which), -EIO when its memory could not be read. */
int perlframes_open(struct perlframes *pl, const struct perlframes_symbols *sym, uint64_t bias,
		    perlframes_read_fn *read, void *arg);
void perlframes_close(struct perlframes *pl);
/* The perl versions whose layouts are known, for messages ("5.36"). */
const char *perlframes_known(void);

struct perlframe {
	uint64_t cv;                     /* the sub's identity; 0 for the main program */
	char package[PERLFRAMES_NAME_MAX]; /* its stash's name: "main", "Digest::MD5" */
	char name[PERLFRAMES_NAME_MAX];  /* "foo", "__ANON__[file:12]"; the main program: main's
					  * "RUNTIME" (as NYTProf calls it) */
	char file[PERLFRAMES_NAME_MAX];  /* where it is defined */
	unsigned first_line, line;       /* its first statement's; the one it is at (0: unknown) */
	unsigned run;                    /* which run loop runs it: 0 the innermost */
	bool xsub;                       /* an XS sub (file: its C file; no line) */
};

/* The subs the main interpreter is in, innermost first, at most max, with the main program
 * (main::RUNTIME) outermost while it runs; *runs: how many run loops they take (runs can be
 * empty: a sort block's). Returns how many, or -ENOENT (no interpreter yet), -EIO (memory
 * unreadable), -EBADMSG (what was read is inconsistent). */
int perlframes_stack(const struct perlframes *pl, struct perlframe *out, size_t max,
		     unsigned *runs);

#endif
