/* frames_python.c — CPython's frames in the native stacks (frames_python.h).
 *
 * A process's interpreter is looked for the first time one of its stacks reaches an evaluation
 * function: that function's module (libpython, or a static python binary) must export
 * _PyRuntime (pyframes_symbols_of(), kept per file), and its version must have a known layout;
 * else the process's stacks stay native, with one warning per file. Its memory is read with
 * process_vm_readv(): the same permission perf events need, checked once per process. */
#include "proftop/frames_python.h"

#include "proftop/diag.h"
#include "proftop/module.h"
#include "proftop/pyframes.h"
#include "proftop/frame_slots.h"
#include "proftop/frame_source.h"
#include "proftop/symbols.h"
#include "proftop/util.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* What is known of a file's interpreter. */
struct python_file {
	uint64_t key;              /* the path: the symbolizer's interned string */
	int err;                   /* pyframes_symbols_of()'s */
	struct pyframes_symbols sym;
};

/* A process's interpreter: open, or not one (err). */
struct python_process {
	uint64_t key;              /* the pid */
	int err;                   /* 0: py is open */
	struct pyframes py;
};

struct frames_python {
	struct diag *diag;
	struct frame_slots files, processes;
	/* The stack being resolved: its thread's frames, read at its first evaluation. */
	pid_t pid, tid;
	int read_err;              /* 0: frames[0..nframes) read */
	struct pyframe frames[PYFRAMES_MAX];
	size_t nframes;
	size_t runs;               /* evaluations the frames have (run_end marks) */
	_Atomic uint64_t unread;
};

static void *python_new(struct diag *diag)
{
	struct frames_python *fp = xcalloc(1, sizeof(*fp));

	fp->diag = diag;
	frame_slots_init(&fp->files, sizeof(struct python_file));
	frame_slots_init(&fp->processes, sizeof(struct python_process));
	atomic_init(&fp->unread, 0);
	return fp;
}

static void python_free(void *arg)
{
	struct frames_python *fp = arg;

	if (!fp)
		return;
	for (size_t i = 0; i < fp->processes.n; i++)
		pyframes_close(&((struct python_process *)frame_slots_at(&fp->processes, i))->py);
	frame_slots_free(&fp->processes);
	frame_slots_free(&fp->files);
	free(fp);
}

static uint64_t python_unread(void *arg)
{
	struct frames_python *fp = arg;

	return atomic_load_explicit(&fp->unread, memory_order_relaxed);
}

static const struct python_file *file_of(struct frames_python *fp, const char *path)
{
	static const struct python_file none = { .err = -ENOENT }; /* a module without a path */
	struct python_file *f;
	bool made;

	if (!path)
		return &none;
	f = frame_slots_get(&fp->files, (uint64_t)(uintptr_t)path, &made);
	if (made)
		f->err = pyframes_symbols_of(path, &f->sym);
	return f;
}

/* pid's interpreter, opened at its first evaluation (native says where it runs). */
static struct python_process *process_of(struct frames_python *fp, pid_t pid,
					 const struct frame_source_native *native)
{
	bool made;
	struct python_process *p = frame_slots_get(&fp->processes, (uint64_t)pid, &made);
	const struct python_file *f;

	if (!made)
		return p;
	f = file_of(fp, native->path);
	p->err = f->err;
	if (!p->err)
		p->err = pyframes_open(&p->py, &f->sym, native->bias, frame_slots_read_memory,
				       (void *)(intptr_t)pid);
	if (p->err == -ENOTSUP)
		diag_report(fp->diag, DIAG_WARNING, "python: %s is CPython %u.%u, whose frames proftop "
			    "cannot read (it knows 3.8 to 3.13): its stacks stay native",
			    native->path, p->py.major, p->py.minor);
	else if (p->err == -EIO || p->err == -EPERM)
		diag_report(fp->diag, DIAG_WARNING, "python: cannot read the memory of process %d "
			    "(%s): its stacks stay native", (int)pid, native->path);
	return p;
}

/* The frames of thread tid, read once per stack. */
static void read_stack(struct frames_python *fp, struct python_process *p, pid_t tid)
{
	int n = pyframes_stack(&p->py, tid, fp->frames, PYFRAMES_MAX);

	fp->read_err = n < 0 ? n : 0;
	fp->nframes = n < 0 ? 0 : (size_t)n;
	fp->runs = 0;
	for (size_t i = 0; i < fp->nframes; i++)
		fp->runs += fp->frames[i].run_end;
	/* A chain cut by PYFRAMES_MAX ends without its last run's mark. */
	if (fp->nframes && !fp->frames[fp->nframes - 1].run_end)
		fp->runs++;
}

/* The base name of a path, the MODULE column's. */
static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static bool python_is_interpreter(void *arg, const struct symbol *sym)
{
	return !file_of(arg, module_path(sym->elf))->err;
}

static bool python_runs_frames(void *arg, const struct symbol *sym)
{
	(void)arg;
	return !strcmp(sym->function, "_PyEval_EvalFrameDefault");
}

static size_t python_frames(void *arg, pid_t pid, pid_t tid, unsigned nth, unsigned count,
			    const struct frame_source_native *native, struct frame_source_frame *out,
			    size_t max)
{
	struct frames_python *fp = arg;
	size_t first = 0, n = 0;
	unsigned run = 0;

	(void)count; /* (each run's end is marked: they are counted from the innermost) */
	if (nth == 0) {
		struct python_process *p = process_of(fp, pid, native);

		fp->pid = pid;
		fp->tid = tid;
		fp->read_err = p->err ? p->err : 0;
		fp->nframes = 0;
		fp->runs = 0;
		if (!p->err)
			read_stack(fp, p, tid);
	}
	if (fp->pid != pid || fp->tid != tid)
		return 0;
	/* The nth run: the frames after the nth-1'th run's end, up to the nth's. */
	while (first < fp->nframes && run < nth)
		run += fp->frames[first++].run_end;
	while (first + n < fp->nframes && n < max) {
		const struct pyframe *f = &fp->frames[first + n];

		out[n++] = (struct frame_source_frame){
			.module = base_name(f->file),
			.name = f->name,
			.addr = f->first_line,
			.file = f->file,
			.line = f->line ? f->line : f->first_line,
		};
		if (f->run_end)
			break;
	}
	return n;
}

/* A stack whose evaluations and runs disagree, or whose frames could not be read, had its
 * Python part wrong or missing: counted. A process that is not Python (or not readable) is
 * not counted, nor is a thread that runs no Python now (a native thread of a Python process). */
static void python_stack_end(void *arg, pid_t pid, pid_t tid, unsigned used)
{
	struct frames_python *fp = arg;
	bool mine = used && fp->pid == pid && fp->tid == tid;

	if (mine && fp->read_err != -ENOTSUP && fp->read_err != -ENOENT &&
	    (fp->read_err || fp->runs != used))
		atomic_fetch_add_explicit(&fp->unread, 1, memory_order_relaxed);
	fp->pid = 0;
	fp->tid = 0;
}

static void python_forget(void *arg, pid_t pid)
{
	struct frames_python *fp = arg;
	struct python_process *p = frame_slots_take(&fp->processes, (uint64_t)pid);

	if (p)
		pyframes_close(&p->py);
}

const struct frame_source_ops frames_python_ops = {
	.name = "python",
	.create = python_new,
	.destroy = python_free,
	.unread = python_unread,
	.is_interpreter = python_is_interpreter,
	.runs_frames = python_runs_frames,
	.frames = python_frames,
	.stack_end = python_stack_end,
	.forget = python_forget,
};
