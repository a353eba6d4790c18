/* pyframes.h — the Python frames of a thread of an unmodified CPython process (3.8 to 3.13), read
 * from its memory.
 *
 * The interpreter is found by its symbols (_PyRuntime, Py_Version, PyCode_Type: dynamic ones,
 * which even Debian's stripped python3.11 keeps), its version from Py_Version or, before 3.11,
 * from the file's name; the structures' offsets are per minor version (pyframes.c lists where
 * they come from). A thread's state is found by its kernel thread id, its frames by following
 * the frame chain. Everything read is checked before it is used: a code object must be of
 * PyCode_Type, a chain is at most PYFRAMES_MAX deep, a string at most PYFRAMES_NAME_MAX bytes.
 * The process runs on while it is read: a frame popped meanwhile reads as garbage and fails the
 * checks; the caller counts what could not be read instead of guessing. */
#ifndef PROFTOP_PYFRAMES_H
#define PROFTOP_PYFRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PYFRAMES_MAX 512
#define PYFRAMES_NAME_MAX 256

/* Reads len bytes of the process at addr into buf: 0, or -errno. */
typedef int pyframes_read_fn(void *arg, uint64_t addr, void *buf, size_t len);

/* An interpreter's symbols in its file (link-time addresses; 0: absent), and its version when
 * the file's name says it (libpython3.X.so..., python3.X; 0: unknown). */
struct pyframes_symbols {
	uint64_t runtime, version, code_type;
	unsigned name_major, name_minor;
};

/* The symbols of the ELF file at path. Returns 0, or -errno (-ENOENT: no _PyRuntime). */
int pyframes_symbols_of(const char *path, struct pyframes_symbols *out);

struct pyframes_code;

/* One interpreter of one process: its layout and where its runtime and code type are, and the
 * code objects read so far (their names and line tables: a sample then reads each frame's code
 * object's header once, to check it is the one cached, and no strings or tables). */
struct pyframes {
	const struct pyframes_layout *layout;
	unsigned major, minor;
	uint64_t runtime, code_type; /* run-time addresses */
	pyframes_read_fn *read;
	void *arg;
	size_t pthread_tid_offset; /* where glibc's struct pthread holds the tid (before 3.11) */
	struct pyframes_code *codes; /* PYFRAMES_CODES of them */
};

/* Code objects cached per interpreter (a direct-mapped cache): at most this many, each with its
 * line table (at most 64 KB). */
#define PYFRAMES_CODES 256

/* The interpreter whose symbols are sym, loaded with bias (run-time minus link-time address).
 * Returns 0, -ENOTSUP for a version whose layout is unknown (*major, *minor say which), or
 * -EIO when its memory could not be read. */
int pyframes_open(struct pyframes *py, const struct pyframes_symbols *sym, uint64_t bias,
		  pyframes_read_fn *read, void *arg);

/* One Python frame: its code object (its identity), names, first line, the line it is at (0:
 * unknown; the line table read at most 64 KB). run_end: the last
 * (outermost) frame one call of the evaluation function runs; the next frame belongs to an
 * evaluation further down the native stack. */
struct pyframe {
	uint64_t code;
	char name[PYFRAMES_NAME_MAX];     /* co_qualname from 3.11, co_name before */
	char file[PYFRAMES_NAME_MAX];     /* co_filename */
	unsigned first_line, line;
	bool run_end;
};

/* What pyframes_open() allocated (nothing when it failed). */
void pyframes_close(struct pyframes *py);

/* The frames of thread tid, innermost first, at most max. Returns how many (0: the thread runs
 * no Python now), or -ESRCH (no thread state for tid), -EIO (memory unreadable), -EBADMSG (what
 * was read is inconsistent: a chain that loops or points at no code object). */
int pyframes_stack(const struct pyframes *py, pid_t tid, struct pyframe *out, size_t max);

#endif
