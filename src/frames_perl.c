/* frames_perl.c — Perl's subs in the native stacks (frames_perl.h).
 *
 * A process's interpreter is looked for the first time one of its stacks reaches a run loop:
 * that function's module (/usr/bin/perl, static, or libperl) must export PL_curinterp and
 * PL_interp_size (perlframes_symbols_of(), kept per file), and its layout must be known; else
 * the process's stacks stay native, with one warning per file. */
#include "proftop/frames_perl.h"

#include "proftop/diag.h"
#include "proftop/frame_slots.h"
#include "proftop/frame_source.h"
#include "proftop/module.h"
#include "proftop/perlframes.h"
#include "proftop/symbols.h"
#include "proftop/util.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct perl_file {
	uint64_t key;              /* the path: the symbolizer's interned string */
	int err;                   /* perlframes_symbols_of()'s */
	struct perlframes_symbols sym;
};

struct perl_process {
	uint64_t key;              /* the pid */
	int err;                   /* 0: pl is open */
	struct perlframes pl;
};

struct frames_perl {
	struct diag *diag;
	struct frame_slots files, processes;
	/* The stack being resolved: its subs, read at its first run loop. */
	pid_t pid, tid;
	int read_err;
	struct perlframe frames[PERLFRAMES_MAX];
	size_t nframes;
	unsigned runs;
	uint64_t entersub, entersub_end; /* the process's Perl_pp_entersub */
	_Atomic uint64_t unread;
};

static void *perl_new(struct diag *diag)
{
	struct frames_perl *fp = xcalloc(1, sizeof(*fp));

	fp->diag = diag;
	frame_slots_init(&fp->files, sizeof(struct perl_file));
	frame_slots_init(&fp->processes, sizeof(struct perl_process));
	atomic_init(&fp->unread, 0);
	return fp;
}

static void perl_free(void *arg)
{
	struct frames_perl *fp = arg;

	if (!fp)
		return;
	for (size_t i = 0; i < fp->processes.n; i++)
		perlframes_close(&((struct perl_process *)frame_slots_at(&fp->processes, i))->pl);
	frame_slots_free(&fp->processes);
	frame_slots_free(&fp->files);
	free(fp);
}

static uint64_t perl_unread(void *arg)
{
	struct frames_perl *fp = arg;

	return atomic_load_explicit(&fp->unread, memory_order_relaxed);
}

static const struct perl_file *file_of(struct frames_perl *fp, const char *path)
{
	static const struct perl_file none = { .err = -ENOENT }; /* a module without a path */
	struct perl_file *f;
	bool made;

	if (!path)
		return &none;
	f = frame_slots_get(&fp->files, (uint64_t)(uintptr_t)path, &made);
	if (made)
		f->err = perlframes_symbols_of(path, &f->sym);
	return f;
}

/* pid's interpreter, opened at its first run loop (native says where it runs). */
static struct perl_process *process_of(struct frames_perl *fp, pid_t pid,
				       const struct frame_source_native *native)
{
	bool made;
	struct perl_process *p = frame_slots_get(&fp->processes, (uint64_t)pid, &made);
	const struct perl_file *f;

	if (!made)
		return p;
	f = file_of(fp, native->path);
	p->err = f->err;
	if (!p->err)
		p->err = perlframes_open(&p->pl, &f->sym, native->bias, frame_slots_read_memory,
					 (void *)(intptr_t)pid);
	if (p->err == -ENOTSUP)
		diag_report(fp->diag, DIAG_WARNING, "perl: %s is a perl whose interpreter (%u bytes) "
			    "proftop does not know (it knows %s on x86-64): its stacks stay native",
			    native->path, p->pl.interp_size, perlframes_known());
	else if (p->err == -EIO || p->err == -EPERM)
		diag_report(fp->diag, DIAG_WARNING, "perl: cannot read the memory of process %d "
			    "(%s): its stacks stay native", (int)pid, native->path);
	return p;
}

static bool perl_is_interpreter(void *arg, const struct symbol *sym)
{
	return !file_of(arg, module_path(sym->elf))->err;
}

static bool perl_runs_frames(void *arg, const struct symbol *sym)
{
	(void)arg;
	return !strcmp(sym->function, "Perl_runops_standard") ||
	       !strcmp(sym->function, "Perl_runops_debug");
}

/* The subs of the nth of count run loops. The runs are matched from the outermost: a stack of
 * contexts is pushed before its run loop starts and popped after it ended, and a sort's sub
 * stays pushed between the comparisons, so runs the native stack has no run loop for are the
 * innermost ones, and are left out. */
static size_t perl_frames(void *arg, pid_t pid, pid_t tid, unsigned nth, unsigned count,
			  const struct frame_source_native *native, struct frame_source_frame *out,
			  size_t max)
{
	struct frames_perl *fp = arg;
	long run;
	size_t n = 0;

	if (nth == 0) {
		struct perl_process *p = process_of(fp, pid, native);
		int got;

		fp->pid = pid;
		fp->tid = tid;
		fp->nframes = 0;
		fp->runs = 0;
		fp->read_err = p->err;
		fp->entersub = p->pl.entersub;
		fp->entersub_end = p->pl.entersub_end;
		/* (the main interpreter is the main thread's) */
		if (!p->err && tid != pid)
			fp->read_err = -ESRCH;
		if (!fp->read_err) {
			got = perlframes_stack(&p->pl, fp->frames, PERLFRAMES_MAX, &fp->runs);
			fp->read_err = got < 0 ? got : 0;
			fp->nframes = got < 0 ? 0 : (size_t)got;
		}
	}
	if (fp->pid != pid || fp->tid != tid)
		return 0;
	run = (long)fp->runs - (long)count + (long)nth;
	for (size_t i = 0; i < fp->nframes && n < max && run >= 0; i++) {
		const struct perlframe *f = &fp->frames[i];

		if (f->run != (unsigned long)run)
			continue;
		/* (an XS sub read while the sampled stack was elsewhere is not its) */
		if (f->xsub && !(native->callee >= fp->entersub && native->callee < fp->entersub_end))
			continue;
		out[n++] = (struct frame_source_frame){
			.module = f->package,
			.name = f->name,
			.addr = f->first_line,
			.file = f->file[0] && !f->xsub ? f->file : NULL,
			.line = f->line ? f->line : f->first_line,
		};
	}
	return n;
}

/* A stack whose subs could not be read, or with run loops for which no run was read (the
 * process returned from them meanwhile), had its Perl part missing: counted. More runs than
 * run loops is no sign of that (a sort between comparisons). */
static void perl_stack_end(void *arg, pid_t pid, pid_t tid, unsigned used)
{
	struct frames_perl *fp = arg;
	bool mine = used && fp->pid == pid && fp->tid == tid;

	if (mine && fp->read_err != -ENOTSUP && fp->read_err != -ENOENT &&
	    fp->read_err != -ESRCH && (fp->read_err || fp->runs < used))
		atomic_fetch_add_explicit(&fp->unread, 1, memory_order_relaxed);
	fp->pid = 0;
	fp->tid = 0;
}

static void perl_forget(void *arg, pid_t pid)
{
	struct frames_perl *fp = arg;
	struct perl_process *p = frame_slots_take(&fp->processes, (uint64_t)pid);

	if (p)
		perlframes_close(&p->pl);
}

const struct frame_source_ops frames_perl_ops = {
	.name = "perl",
	.create = perl_new,
	.destroy = perl_free,
	.unread = perl_unread,
	.is_interpreter = perl_is_interpreter,
	.runs_frames = perl_runs_frames,
	.frames = perl_frames,
	.stack_end = perl_stack_end,
	.forget = perl_forget,
};
