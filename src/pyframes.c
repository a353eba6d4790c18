/* pyframes.c — the Python frames of a CPython thread, from the process's memory (pyframes.h).
 *
 * The offsets below are those of CPython's own structures on x86-64, as the interpreters'
 * debug info gives them (gdb: `print &((PyThreadState *)0)->native_thread_id` in each of
 * pyenv's 3.8.18, 3.9.18, 3.10.13, 3.11.7, 3.12.1, 3.13.0). They hold for every release of a
 * minor version: CPython keeps these structures' layout within one. A layout is checked when
 * it is used: a thread state must point back at its interpreter, a frame at a code object.
 *
 * The frame chain, per version:
 *  - 3.8 to 3.10: PyThreadState.frame, PyFrameObject.f_back; each frame object is one call of
 *    _PyEval_EvalFrameDefault.
 *  - 3.11: PyThreadState.cframe->current_frame, _PyInterpreterFrame.previous; one evaluation
 *    runs frames down to the one marked is_entry.
 *  - 3.12: the same chain; an evaluation entered from C begins with a frame owned by the C stack
 *    (owner FRAME_OWNED_BY_CSTACK), a shim that is no Python function: skipped, it ends the run.
 *  - 3.13: PyThreadState.current_frame; f_executable for the code; shims as in 3.12.
 * Before 3.11 a thread state knows its thread by pthread_t only: the kernel's id is read from
 * glibc's struct pthread, at the offset proftop's own thread has it. */
#include "proftop/pyframes.h"

#include "proftop/elfsyms.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

enum line_table {
	LINES_LNOTAB,    /* 3.8, 3.9: co_lnotab, f_lasti in bytes */
	LINES_RANGES,    /* 3.10: co_linetable of ranges, f_lasti in instructions */
	LINES_LOCATIONS, /* 3.11+: co_linetable of locations, the frame's instruction pointer */
};

enum frame_model {
	FRAME_OBJECTS, /* 3.8 to 3.10 */
	FRAME_ENTRY,   /* 3.11: is_entry */
	FRAME_SHIMS,   /* 3.12, 3.13: owner */
};

#define OWNED_BY_CSTACK 3

struct pyframes_layout {
	unsigned minor;
	enum frame_model model;
	uint16_t interp_head;    /* _PyRuntimeState.interpreters.head */
	uint16_t threads_head;   /* PyInterpreterState.tstate_head or threads.head */
	uint16_t tstate_next, tstate_interp;
	uint16_t tstate_frame;   /* frame, cframe or current_frame */
	int16_t cframe_current;  /* _PyCFrame.current_frame; -1: tstate_frame is the frame itself */
	uint16_t tstate_thread_id, tstate_native_id; /* native: 0 before 3.11 */
	uint16_t frame_back, frame_code, frame_mark; /* mark: is_entry (3.11) or owner (3.12+) */
	uint16_t code_name, code_qualname, code_filename, code_firstlineno; /* qualname: 0 before 3.11 */
	uint16_t ascii_size, compact_size; /* sizeof PyASCIIObject, PyCompactUnicodeObject */
	enum line_table lines;
	uint16_t frame_where;    /* f_lasti (int) before 3.11, prev_instr or instr_ptr from 3.11 */
	uint16_t code_table;     /* co_lnotab or co_linetable (a bytes object) */
	uint16_t code_units;     /* co_code_adaptive: the instructions (3.11+) */
};

static const struct pyframes_layout layouts[] = {
	{ 8, FRAME_OBJECTS, 32, 8, 8, 16, 24, -1, 176, 0, 24, 32, 0, 112, 0, 104, 40, 48, 72,
	  LINES_LNOTAB, 104, 120, 0 },
	{ 9, FRAME_OBJECTS, 32, 8, 8, 16, 24, -1, 176, 0, 24, 32, 0, 112, 0, 104, 40, 48, 72,
	  LINES_LNOTAB, 104, 120, 0 },
	{ 10, FRAME_OBJECTS, 32, 8, 8, 16, 24, -1, 176, 0, 24, 32, 0, 112, 0, 104, 40, 48, 72,
	  LINES_RANGES, 96, 120, 0 },
	{ 11, FRAME_ENTRY, 40, 16, 8, 16, 56, 8, 152, 160, 48, 32, 68, 120, 128, 112, 72, 48, 72,
	  LINES_LOCATIONS, 56, 136, 184 },
	{ 12, FRAME_SHIMS, 40, 72, 8, 16, 56, 0, 136, 144, 8, 0, 70, 120, 128, 112, 68, 40, 56,
	  LINES_LOCATIONS, 56, 136, 192 },
	{ 13, FRAME_SHIMS, 632, 7344, 8, 16, 72, -1, 152, 160, 8, 0, 70, 120, 128, 112, 68, 40, 56,
	  LINES_LOCATIONS, 56, 136, 200 },
};

/* A code object as it was read: its fields, to tell it is still the same object (code objects
 * do not change; one freed and another made at its address has other fields), its texts and its
 * line table's bytes. */
struct pyframes_code {
	uint64_t code, type, name, file, table; /* 0 code: empty */
	int32_t first;
	char name_text[PYFRAMES_NAME_MAX], file_text[PYFRAMES_NAME_MAX];
	uint8_t *lines;            /* NULL: no table read */
	size_t nlines;
};

/* A thread state list this long is no list. */
#define MAX_THREADS 100000

/* --- the file's symbols ------------------------------------------------------------------------ */

/* "libpython3.X..." or "python3.X": X. */
static void version_of_name(const char *path, struct pyframes_symbols *out)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	unsigned major, minor;

	if (!strncmp(base, "lib", 3))
		base += 3;
	if (sscanf(base, "python%u.%u", &major, &minor) == 2 && major == 3 && minor < 100) {
		out->name_major = major;
		out->name_minor = minor;
	}
}

int pyframes_symbols_of(const char *path, struct pyframes_symbols *out)
{
	static const char *const names[] = { "_PyRuntime", "Py_Version", "PyCode_Type" };
	uint64_t values[3];
	int err = elfsyms_find(path, names, values, NULL, 3);

	memset(out, 0, sizeof(*out));
	if (err)
		return err;
	out->runtime = values[0];
	out->version = values[1];
	out->code_type = values[2];
	if (!out->runtime || !out->code_type)
		return -ENOENT;
	version_of_name(path, out);
	return 0;
}

/* --- reading the process ------------------------------------------------------------------------- */

static int read_u64(const struct pyframes *py, uint64_t addr, uint64_t *v)
{
	return py->read(py->arg, addr, v, sizeof(*v));
}

/* Where glibc keeps the kernel's thread id in struct pthread: found in this thread's own. */
static size_t pthread_tid_offset(void)
{
	const int32_t *self = (const int32_t *)(uintptr_t)pthread_self();
	int32_t tid = (int32_t)syscall(SYS_gettid);

	for (size_t i = 0; i < 1024 / sizeof(*self); i++)
		if (self[i] == tid)
			return i * sizeof(*self);
	return 0;
}

int pyframes_open(struct pyframes *py, const struct pyframes_symbols *sym, uint64_t bias,
		  pyframes_read_fn *read, void *arg)
{
	memset(py, 0, sizeof(*py));
	py->read = read;
	py->arg = arg;
	py->runtime = sym->runtime + bias;
	py->code_type = sym->code_type + bias;
	py->major = sym->name_major;
	py->minor = sym->name_minor;
	if (sym->version) { /* Py_Version: 0xMMmmPPRS */
		uint32_t v;

		if (read(arg, sym->version + bias, &v, sizeof(v)))
			return -EIO;
		py->major = v >> 24;
		py->minor = (v >> 16) & 0xff;
	}
	for (size_t i = 0; py->major == 3 && i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].minor == py->minor)
			py->layout = &layouts[i];
	if (!py->layout)
		return -ENOTSUP;
	if (py->layout->model == FRAME_OBJECTS && !(py->pthread_tid_offset = pthread_tid_offset()))
		return -ENOTSUP;
	py->codes = calloc(PYFRAMES_CODES, sizeof(*py->codes));
	return py->codes ? 0 : -ENOMEM;
}

void pyframes_close(struct pyframes *py)
{
	for (size_t i = 0; py->codes && i < PYFRAMES_CODES; i++)
		free(py->codes[i].lines);
	free(py->codes);
	py->codes = NULL;
}

/* The kernel's id of the thread whose state is at tstate (0: unreadable). */
static pid_t thread_of(const struct pyframes *py, uint64_t tstate)
{
	const struct pyframes_layout *l = py->layout;
	uint64_t v;
	int32_t tid;

	if (l->tstate_native_id)
		return read_u64(py, tstate + l->tstate_native_id, &v) ? 0 : (pid_t)v;
	if (read_u64(py, tstate + l->tstate_thread_id, &v) || !v ||
	    py->read(py->arg, v + py->pthread_tid_offset, &tid, sizeof(tid)))
		return 0;
	return tid;
}

/* The thread state of tid in the main interpreter's list (0: none, or -errno). */
static int64_t thread_state(const struct pyframes *py, pid_t tid)
{
	const struct pyframes_layout *l = py->layout;
	uint64_t interp, tstate, back;

	if (read_u64(py, py->runtime + l->interp_head, &interp) || !interp ||
	    read_u64(py, interp + l->threads_head, &tstate))
		return -EIO;
	/* A list that loops is found as soon as it comes round (Brent's: the mark jumps to where
	 * the walk is at each power of two), whatever its length, without reading more. */
	uint64_t mark = 0;
	size_t power = 1, since = 0;

	for (size_t n = 0; tstate && n < MAX_THREADS; n++) {
		if (tstate == mark)
			return -EBADMSG;
		if (++since == power) {
			mark = tstate;
			power *= 2;
			since = 0;
		}
		if (read_u64(py, tstate + l->tstate_interp, &back))
			return -EIO;
		if (back != interp)
			return -EBADMSG;
		if (thread_of(py, tstate) == tid)
			return (int64_t)tstate;
		if (read_u64(py, tstate + l->tstate_next, &tstate))
			return -EIO;
	}
	return tstate ? -EBADMSG : 0;
}

/* A str object's text into out (UTF-8, at most size - 1 bytes). */
static int read_str(const struct pyframes *py, uint64_t str, char *out, size_t size)
{
	const struct pyframes_layout *l = py->layout;
	uint8_t head[72], raw[4 * PYFRAMES_NAME_MAX];
	int64_t length;
	uint32_t state, kind;
	size_t n = 0, chars;

	if (py->read(py->arg, str, head, l->ascii_size))
		return -EIO;
	memcpy(&length, head + 16, sizeof(length));
	memcpy(&state, head + 32, sizeof(state));
	kind = (state >> 2) & 7;
	if (length < 0 || !(state >> 5 & 1) || (kind != 1 && kind != 2 && kind != 4))
		return -EBADMSG; /* not a compact str */
	chars = (size_t)length < size - 1 ? (size_t)length : size - 1;
	if (py->read(py->arg, str + (state >> 6 & 1 ? l->ascii_size : l->compact_size), raw,
		     chars * kind))
		return -EIO;
	for (size_t i = 0; i < chars; i++) {
		uint32_t c = kind == 1 ? raw[i] : kind == 2 ? (uint32_t)(raw[2 * i] | raw[2 * i + 1] << 8)
			     : (uint32_t)(raw[4 * i] | raw[4 * i + 1] << 8 | raw[4 * i + 2] << 16 |
					  (uint32_t)raw[4 * i + 3] << 24);
		int len = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;

		if (c > 0x10ffff || n + (size_t)len >= size)
			break;
		if (len == 1) {
			out[n++] = (char)c;
			continue;
		}
		out[n++] = (char)((len == 2 ? 0xc0 : len == 3 ? 0xe0 : 0xf0) | c >> (6 * (len - 1)));
		for (int k = len - 2; k >= 0; k--)
			out[n++] = (char)(0x80 | ((c >> (6 * k)) & 0x3f));
	}
	out[n] = '\0';
	return 0;
}

/* --- line numbers ------------------------------------------------------------------------------ */

/* A line table longer than this is refused (the largest in CPython's own library: ~30 KB). */
#define LINE_TABLE_MAX (64 * 1024)

/* 3.8, 3.9: pairs of increments (bytes, lines); the line of the instruction at byte offset. */
static int line_lnotab(const uint8_t *t, size_t n, int line, int64_t offset)
{
	int64_t addr = 0;

	for (size_t i = 0; i + 1 < n; i += 2) {
		addr += t[i];
		if (addr > offset)
			break;
		line += (int8_t)t[i + 1];
	}
	return line;
}

/* 3.10: ranges of bytes, each with its line's delta (-128: no line). */
static int line_ranges(const uint8_t *t, size_t n, int line, int64_t offset)
{
	int64_t end = 0;

	for (size_t i = 0; i + 1 < n; i += 2) {
		int64_t start = end;
		int8_t delta = (int8_t)t[i + 1];

		end += t[i];
		if (delta != -128)
			line += delta;
		if (offset >= start && offset < end)
			return delta == -128 ? 0 : line;
	}
	return 0;
}

/* 3.11+: unsigned varints of 6-bit chunks, bit 6 saying another follows. */
static uint64_t location_varint(const uint8_t *t, size_t n, size_t *i)
{
	uint64_t v = 0;

	for (unsigned shift = 0; *i < n && shift < 64; shift += 6) {
		uint8_t b = t[(*i)++];

		v |= (uint64_t)(b & 63) << shift;
		if (!(b & 64))
			break;
	}
	return v;
}

static int64_t location_svarint(const uint8_t *t, size_t n, size_t *i)
{
	uint64_t v = location_varint(t, n, i);

	return v & 1 ? -(int64_t)(v >> 1) : (int64_t)(v >> 1);
}

/* 3.11+: entries of code units, each starting with a byte with bit 7 set: its kind (bits 3-6)
 * and its length - 1 (bits 0-2); kind 15 has no location, 14 is the long form (line delta, end
 * line, columns), 13 a line delta alone, 10-12 the line plus kind - 10 with two columns, 0-9
 * the same line with one. The line of code unit unit. */
static int line_locations(const uint8_t *t, size_t n, int line, int64_t unit)
{
	int64_t at = 0;
	size_t i = 0;

	while (i < n && t[i] & 0x80) {
		unsigned kind = (t[i] >> 3) & 15, len = (t[i] & 7) + 1;
		bool none = kind == 15;

		i++;
		if (kind == 14 || kind == 13) {
			line += (int)location_svarint(t, n, &i);
			if (kind == 14)
				for (int k = 0; k < 3; k++)
					location_varint(t, n, &i);
		} else if (kind >= 10 && kind <= 12) {
			line += (int)kind - 10;
			i += 2;
		} else if (!none) {
			i += 1;
		}
		if (unit >= at && unit < at + len)
			return none ? 0 : line;
		at += len;
	}
	return 0;
}

/* The bytes of c's line table into c (none when it cannot be read). */
static void read_line_table(const struct pyframes *py, struct pyframes_code *c)
{
	int64_t size;

	free(c->lines);
	c->lines = NULL;
	c->nlines = 0;
	if (read_u64(py, c->table + 16, (uint64_t *)&size) || size < 0 || size > LINE_TABLE_MAX ||
	    !(c->lines = malloc(size ? (size_t)size : 1)))
		return;
	if (py->read(py->arg, c->table + 32, c->lines, (size_t)size)) {
		free(c->lines);
		c->lines = NULL;
		return;
	}
	c->nlines = (size_t)size;
}

/* The line where the frame is, whose instruction field (f_lasti, prev_instr or instr_ptr) is
 * where, in the code c at code (0: unknown). */
static unsigned frame_line(const struct pyframes *py, uint64_t where, uint64_t code,
			   const struct pyframes_code *c)
{
	const struct pyframes_layout *l = py->layout;
	int first = c->first;
	int64_t offset;
	int line;

	if (!c->lines)
		return 0;
	if (l->lines == LINES_LOCATIONS) {
		if (where < code + l->code_units)
			return 0;
		offset = (int64_t)(where - code - l->code_units) / 2;
	} else {
		int32_t lasti = (int32_t)where;

		if (lasti < 0)
			return first > 0 ? (unsigned)first : 0;
		offset = l->lines == LINES_RANGES ? (int64_t)lasti * 2 : lasti;
	}
	if (l->lines == LINES_LNOTAB)
		line = line_lnotab(c->lines, c->nlines, first, offset);
	else if (l->lines == LINES_RANGES)
		line = line_ranges(c->lines, c->nlines, first, offset);
	else
		line = line_locations(c->lines, c->nlines, first, offset);
	return line > 0 ? (unsigned)line : 0;
}

/* A field of a header read into bytes. */
static uint64_t field_u64(const uint8_t *bytes, uint16_t at)
{
	uint64_t v;

	memcpy(&v, bytes + at, sizeof(v));
	return v;
}

/* The code object at code, from the cache when its header says it is the one there, else read
 * (its names and its line table) into the cache. NULL when it is no code object (*err
 * -EBADMSG) or cannot be read (-EIO). */
static const struct pyframes_code *read_code(const struct pyframes *py, uint64_t code, int *err)
{
	const struct pyframes_layout *l = py->layout;
	uint16_t name_at = l->code_qualname ? l->code_qualname : l->code_name;
	uint16_t end = l->code_table;
	uint8_t head[256];
	struct pyframes_code *c = &py->codes[(code >> 4) % PYFRAMES_CODES], got = { .code = code };

	end = name_at > end ? name_at : end;
	end = l->code_filename > end ? l->code_filename : end;
	end = l->code_firstlineno > end ? l->code_firstlineno : end;
	if (py->read(py->arg, code, head, (size_t)end + 8u)) { /* (end is below 248: the layouts') */
		*err = -EIO;
		return NULL;
	}
	got.type = field_u64(head, 8);
	got.name = field_u64(head, name_at);
	got.file = field_u64(head, l->code_filename);
	got.table = field_u64(head, l->code_table);
	memcpy(&got.first, head + l->code_firstlineno, sizeof(got.first));
	if (got.type != py->code_type) {
		*err = -EBADMSG;
		return NULL;
	}
	if (c->code == code && c->type == got.type && c->name == got.name && c->file == got.file &&
	    c->table == got.table && c->first == got.first)
		return c;
	free(c->lines);
	*c = got;
	if ((*err = read_str(py, got.name, c->name_text, sizeof(c->name_text))) ||
	    (*err = read_str(py, got.file, c->file_text, sizeof(c->file_text)))) {
		c->code = 0; /* not cached: what it held is half read */
		return NULL;
	}
	read_line_table(py, c);
	return c;
}

/* The innermost frame of the thread state (0: none). */
static int first_frame(const struct pyframes *py, uint64_t tstate, uint64_t *frame)
{
	const struct pyframes_layout *l = py->layout;

	if (read_u64(py, tstate + l->tstate_frame, frame))
		return -EIO;
	if (l->cframe_current >= 0 && *frame && read_u64(py, *frame + (uint64_t)l->cframe_current, frame))
		return -EIO;
	return 0;
}

int pyframes_stack(const struct pyframes *py, pid_t tid, struct pyframe *out, size_t max)
{
	const struct pyframes_layout *l = py->layout;
	int64_t tstate = thread_state(py, tid);
	uint64_t frame, code, seen = 0;
	size_t n = 0, power = 1, since = 0;
	int err;

	if (tstate <= 0)
		return tstate ? (int)tstate : -ESRCH;
	err = first_frame(py, (uint64_t)tstate, &frame);
	for (size_t steps = 0; !err && frame && steps < PYFRAMES_MAX; steps++) {
		uint8_t mark = 0;

		if (frame == seen) /* a chain that loops (Brent's, as thread_state()) */
			return -EBADMSG;
		if (++since == power) {
			seen = frame;
			power *= 2;
			since = 0;
		}

		if (l->frame_mark && py->read(py->arg, frame + l->frame_mark, &mark, sizeof(mark)))
			return -EIO;
		if (l->model == FRAME_SHIMS && mark == OWNED_BY_CSTACK) {
			if (n)
				out[n - 1].run_end = true;
		} else if (n < max) {
			const struct pyframes_code *c;
			uint64_t where = 0;

			if (read_u64(py, frame + l->frame_code, &code) ||
			    py->read(py->arg, frame + l->frame_where, &where,
				     l->lines == LINES_LOCATIONS ? 8 : 4))
				return -EIO;
			c = read_code(py, code, &err);
			if (c) {
				out[n].code = code;
				out[n].first_line = c->first > 0 ? (unsigned)c->first : 0;
				memcpy(out[n].name, c->name_text, sizeof(out[n].name));
				memcpy(out[n].file, c->file_text, sizeof(out[n].file));
				out[n].line = frame_line(py, where, code, c);
			}
			out[n].run_end = l->model == FRAME_OBJECTS || (l->model == FRAME_ENTRY && mark);
			n++;
		}
		if (!err && read_u64(py, frame + l->frame_back, &frame))
			return -EIO;
	}
	if (err)
		return err;
	if (frame)
		return -EBADMSG; /* deeper than any real stack: a loop */
	if (n)
		out[n - 1].run_end = true;
	return (int)n;
}
