/* disasm.c — a function's instructions with their lines (see disasm.h).
 *
 * The file is read as the collector reads it (module.c: segments, symbols, the DWARF or its debug
 * file), but by a module of the frontend's own, so nothing is shared between threads. The code
 * bytes come from the file image through the segment that holds them; capstone turns them into
 * text, and bytes it cannot decode into ".byte" lines, so the listing covers the whole function.
 * A function that no longer starts where the profile saw it means the file was rebuilt since:
 * then nothing is shown rather than the wrong code. */
#include "proftop/disasm.h"

#include "proftop/debugfile.h"
#include "proftop/lines.h"
#include "proftop/module.h"
#include "proftop/util.h"

#include <capstone/capstone.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct disasm_file {
	char *path;
	struct module *mod;   /* NULL: it could not be read, see err and why */
	int err;
	const char *why;
};

struct disasm {
	struct disasm_file *files;
	size_t n, cap;
	csh cs;
	bool cs_open;
};

struct disasm *disasm_new(void)
{
	struct disasm *d = xcalloc(1, sizeof(*d));

	d->cs_open = cs_open(CS_ARCH_X86, CS_MODE_64, &d->cs) == CS_ERR_OK;
	/* Bytes capstone cannot decode (data in the code, an instruction newer than it) become
	 * ".byte 0x.." and the listing goes on; without this it ended there, and annotate counted the
	 * samples of the rest of the function to the last instruction shown. */
	if (d->cs_open && cs_option(d->cs, CS_OPT_SKIPDATA, CS_OPT_ON) != CS_ERR_OK) {
		cs_close(&d->cs);
		d->cs_open = false;
	}
	return d;
}

void disasm_free(struct disasm *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n; i++) {
		module_free(d->files[i].mod);
		free(d->files[i].path);
	}
	free(d->files);
	if (d->cs_open)
		cs_close(&d->cs);
	free(d);
}

/* Read path as a module, its debug file looked for around it. */
static void disasm_load(struct disasm_file *f)
{
	struct debugfile_origin origin = { .pid = getpid(), .path = f->path,
					   .path_len = strlen(f->path) };
	const char *base = strrchr(f->path, '/');
	struct stat st;
	int fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);

	if (fd < 0) {
		f->err = -errno;
		f->why = "cannot open the file";
		return;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		f->err = -EINVAL;
		f->why = "not a regular file";
		close(fd);
		return;
	}
	origin.dev = st.st_dev;
	origin.ino = st.st_ino;
	base = base ? base + 1 : f->path;
	f->mod = module_new(base, strlen(base));
	f->err = module_load_file(f->mod, fd, (size_t)st.st_size, &origin);
	close(fd);
	if (f->err || !module_is_elf(f->mod)) {
		f->err = f->err ? f->err : -ENOEXEC;
		f->why = "not an ELF file proftop can read";
		module_free(f->mod);
		f->mod = NULL;
	}
}

static struct disasm_file *disasm_file(struct disasm *d, const char *path)
{
	struct disasm_file *f;

	for (size_t i = 0; i < d->n; i++)
		if (!strcmp(d->files[i].path, path))
			return &d->files[i];
	xgrow((void **)&d->files, &d->cap, d->n + 1, sizeof(*d->files));
	f = &d->files[d->n++];
	*f = (struct disasm_file){ .path = xstrdup(path) };
	disasm_load(f);
	return f;
}

/* The line of addr as the function's own frame has it: the outermost frame of the chain. */
static void insn_line(struct module *mod, struct disasm_insn *insn)
{
	struct lines_frame frames[LINES_MAX_FRAMES];
	size_t n = mod ? module_source(mod, insn->addr, frames, LINES_MAX_FRAMES - 1) : 0;

	insn->file = n && !frames[n - 1].inlined ? frames[n - 1].file : NULL;
	insn->line = insn->file ? frames[n - 1].line : 0;
}

/* One instruction at a time: capstone's cs_disasm() would first hold all of them in its own,
 * larger form. */
size_t disasm_bytes(struct disasm *d, struct module *mod, const unsigned char *code, size_t size,
		    uint64_t start, struct disasm_insn **out)
{
	cs_insn *ci = d->cs_open ? cs_malloc(d->cs) : NULL;
	size_t count = 0, cap = 0;
	uint64_t addr = start;

	*out = NULL;
	while (ci && cs_disasm_iter(d->cs, &code, &size, &addr, ci)) {
		struct disasm_insn *insn;
		int len;

		xgrow((void **)out, &cap, count + 1, sizeof(**out));
		insn = &(*out)[count++];
		insn->addr = ci->address;
		insn->size = ci->size;
		len = snprintf(insn->text, sizeof(insn->text), "%.31s", ci->mnemonic);
		if (ci->op_str[0])
			snprintf(insn->text + len, sizeof(insn->text) - (size_t)len, " %.78s", ci->op_str);
		insn_line(mod, insn);
	}
	if (ci)
		cs_free(ci, 1);
	return count;
}

int disasm_function(struct disasm *d, const char *path, uint64_t start, uint64_t end,
		    struct disasm_insn **out, size_t *n, const char **why)
{
	struct disasm_file *f = disasm_file(d, path);
	uint64_t found_start = 0, found_end = 0;
	unsigned char *code;

	*out = NULL;
	*n = 0;
	if (!f->mod) {
		*why = f->why;
		return f->err;
	}
	if (end <= start || end - start > DISASM_MAX_BYTES) {
		*why = "the function is over 4 MiB";
		return -EFBIG;
	}
	if (!module_lookup_range(f->mod, start, &found_start, &found_end) || found_start != start ||
	    found_end != end) {
		*why = "the file changed since it was profiled";
		return -ESTALE;
	}
	code = xmalloc(end - start);
	if (module_read(f->mod, start, code, end - start)) {
		free(code);
		*why = "its code is not in the file";
		return -EFAULT;
	}
	*n = disasm_bytes(d, f->mod, code, end - start, start, out);
	free(code);
	/* The lines are read: the DWARF (tens of MB for a large library) is not held between
	 * functions, as the collector does not hold it past its budget (the files the instructions
	 * name stay, in the module). */
	module_source_close(f->mod);
	if (!*n) {
		free(*out);
		*out = NULL;
		*why = "capstone could not disassemble it";
		return -EINVAL;
	}
	return 0;
}

/* --- an inlined function's copies ------------------------------------------------------------- */

/* Whether a frame is the inlined function name (collector.c names an unnamed one "[inlined]"). */
static bool frame_is(const struct lines_frame *frame, const char *name)
{
	return frame->inlined && (frame->function ? !strcmp(frame->function, name)
						  : !strcmp(name, "[inlined]"));
}

/* Of insns[0..n), the ones name's frame is on (its innermost, for a function inlined into
 * itself), moved to the front with that frame's line; returns how many. */
static size_t keep_inlined(struct module *mod, const char *name, struct disasm_insn *insns,
			   size_t n)
{
	size_t kept = 0;

	for (size_t i = 0; i < n; i++) {
		struct lines_frame frames[LINES_MAX_FRAMES];
		size_t depth = module_source(mod, insns[i].addr, frames, LINES_MAX_FRAMES - 1), k = 0;

		while (k < depth && !frame_is(&frames[k], name))
			k++;
		if (k == depth)
			continue;
		insns[i].file = frames[k].file;
		insns[i].line = frames[k].line;
		insns[kept++] = insns[i];
	}
	return kept;
}

/* The file's function at r as the profile saw it, or -ESTALE with *why. */
static int check_range(struct module *mod, const struct disasm_range *r, const char **why)
{
	uint64_t start = 0, end = 0;

	if (!module_lookup_range(mod, r->start, &start, &end) || start != r->start || end != r->end) {
		*why = "the file changed since it was profiled";
		return -ESTALE;
	}
	return 0;
}

/* name's instructions in the function at r, appended to *out (n of them, room for *cap). */
static int add_inlined(struct disasm *d, struct module *mod, const char *name,
		       const struct disasm_range *r, struct disasm_insn **out, size_t *n, size_t *cap,
		       const char **why)
{
	struct disasm_insn *insns;
	unsigned char *code;
	size_t got;

	if (check_range(mod, r, why))
		return -ESTALE;
	code = xmalloc(r->end - r->start);
	if (module_read(mod, r->start, code, r->end - r->start)) {
		free(code);
		*why = "its code is not in the file";
		return -EFAULT;
	}
	got = disasm_bytes(d, NULL, code, r->end - r->start, r->start, &insns);
	free(code);
	got = keep_inlined(mod, name, insns, got);
	xgrow((void **)out, cap, *n + got + 1, sizeof(**out));
	memcpy(*out + *n, insns, got * sizeof(*insns));
	*n += got;
	free(insns);
	return 0;
}

int disasm_inlined(struct disasm *d, const char *path, const char *name,
		   const struct disasm_range *ranges, size_t nranges, struct disasm_insn **out,
		   size_t *n, const char **why)
{
	struct disasm_file *f = disasm_file(d, path);
	uint64_t bytes = 0;
	size_t cap = 0;
	int err = 0;

	*out = NULL;
	*n = 0;
	if (!f->mod) {
		*why = f->why;
		return f->err;
	}
	for (size_t i = 0; i < nranges && !err; i++) {
		if (ranges[i].end <= ranges[i].start ||
		    ranges[i].end - ranges[i].start > DISASM_MAX_BYTES - bytes)
			continue;
		bytes += ranges[i].end - ranges[i].start;
		err = add_inlined(d, f->mod, name, &ranges[i], out, n, &cap, why);
	}
	module_source_close(f->mod); /* as disasm_function() does */
	if (!err && !*n) {
		*why = "none of the code of the functions its samples are in is its own";
		err = -ENOENT;
	}
	if (err) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return err;
}
