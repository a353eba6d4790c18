/* perlframes.c — a perl process's subs, read from its memory (perlframes.h).
 *
 * Layouts. Each is the offsets of the fields read, on x86-64, for one perl build: Debian 12's
 * perl 5.36.0 (ithreads, multiplicity), whose PerlInterpreter is 3,768 bytes. They are the
 * offsetof() of perl's own headers (CORE/intrpvar.h, cop.h, cv.h, gv.h, hv.h, sv.h, op.h), and
 * tests/unit/test_perlframes.c checks them against the installed headers when it is built with
 * them. The values of the constants (CXt_SUB, CVf_NAMED, SVt_PVCV, OP_NEXTSTATE...) too. */
#include "proftop/perlframes.h"

#include "proftop/elfsyms.h"
#include "proftop/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct perlframes_layout {
	const char *version;
	unsigned interp_size;
	/* PerlInterpreter */
	size_t interp_stack_sp, interp_op, interp_curcop, interp_curstackinfo, interp_phase;
	unsigned phase_run;
	/* PERL_SI */
	size_t si_size, si_cxstack, si_prev, si_cxix, si_cxmax;
	/* PERL_CONTEXT: its size, the type byte, the block's old COP, the sub's return op and CV */
	size_t cx_size, cx_oldcop, cx_retop, cx_cv;
	unsigned cxt_mask, cxt_sub, cxt_format;
	/* COP and OP */
	size_t cop_line, cop_file, op_type;
	unsigned op_nextstate, op_dbstate, op_entersub;
	/* SV head: body, flags; type in the flags' low byte */
	size_t sv_any, sv_flags, sv_u;
	unsigned svt_iv, svt_pvgv, svt_pvhv, svt_pvcv;
	uint32_t svf_ook, svf_rok;
	/* XPVCV, XPVGV, XPVHV (+ its aux part), HEK */
	size_t xcv_stash, xcv_start, xcv_gv, xcv_file, xcv_flags, xcv_end;
	uint32_t cvf_isxsub, cvf_anon, cvf_named;
	size_t xgv_namehek, xgv_stash, gp_cv;
	size_t xhv_aux, aux_name, aux_name_count;
	size_t hek_len, hek_key;
};

static const struct perlframes_layout layouts[] = {
	{
		.version = "5.36", .interp_size = 3768,
		.interp_stack_sp = 0, .interp_op = 8, .interp_curcop = 208, .interp_curstackinfo = 224, .interp_phase = 2512,
		.phase_run = 4,
		.si_size = 48, .si_cxstack = 8, .si_prev = 16, .si_cxix = 32, .si_cxmax = 36,
		.cx_size = 104, .cx_oldcop = 16, .cx_retop = 48, .cx_cv = 72,
		.cxt_mask = 15, .cxt_sub = 9, .cxt_format = 10,
		.cop_line = 36, .cop_file = 48, .op_type = 32,
		.op_nextstate = 195, .op_dbstate = 196, .op_entersub = 184,
		.sv_any = 0, .sv_flags = 12, .sv_u = 16,
		.svt_iv = 1, .svt_pvgv = 9, .svt_pvhv = 12, .svt_pvcv = 13,
		.svf_ook = 0x02000000, .svf_rok = 0x800,
		.xcv_stash = 32, .xcv_start = 40, .xcv_gv = 56, .xcv_file = 64, .xcv_flags = 92,
		.xcv_end = 96,
		.cvf_isxsub = 0x8, .cvf_anon = 0x80, .cvf_named = 0x8000,
		.xgv_namehek = 32, .xgv_stash = 40, .gp_cv = 16,
		.xhv_aux = 32, .aux_name = 0, .aux_name_count = 28,
		.hek_len = 4, .hek_key = 8,
	},
};

/* A stack of contexts this deep is no stack; nor are more contexts than this in all (four per
 * frame: a sub's blocks and loops; a forged stack of zeros costs at most 32 reads), or a chain
 * of stacks that comes round (found as soon as it does: Brent's cycle finding). */
#define CX_MAX (1u << 20)
#define CX_WALKED_MAX (4u * PERLFRAMES_MAX)
/* Contexts read at once (6.5 KB). */
#define CX_CHUNK 64

/* A sub as read once: its body tells a CV freed and another made at its address. */
struct perlframes_cv {
	uint64_t cv, body;
	char package[PERLFRAMES_NAME_MAX];
	char name[PERLFRAMES_NAME_MAX];
	char file[PERLFRAMES_NAME_MAX];
	unsigned first_line;
	bool xsub;
};

/* (with a second layout, this lists both) */
_Static_assert(sizeof(layouts) / sizeof(layouts[0]) == 1, "perlframes_known() names one layout");

const char *perlframes_known(void)
{
	return layouts[0].version;
}

int perlframes_symbols_of(const char *path, struct perlframes_symbols *out)
{
	static const char *const names[] = { "PL_curinterp", "PL_interp_size", "Perl_pp_entersub" };
	uint64_t values[3], sizes[3];
	int err = elfsyms_find(path, names, values, sizes, 3);

	memset(out, 0, sizeof(*out));
	if (err)
		return err;
	out->curinterp = values[0];
	out->interp_size = values[1];
	out->entersub = values[2];
	out->entersub_size = sizes[2];
	return out->curinterp && out->interp_size ? 0 : -ENOENT;
}

int perlframes_open(struct perlframes *pl, const struct perlframes_symbols *sym, uint64_t bias,
		    perlframes_read_fn *read, void *arg)
{
	uint16_t size;

	memset(pl, 0, sizeof(*pl));
	pl->read = read;
	pl->arg = arg;
	pl->curinterp = sym->curinterp + bias;
	pl->entersub = sym->entersub ? sym->entersub + bias : 0;
	pl->entersub_end = pl->entersub + sym->entersub_size;
	if (read(arg, sym->interp_size + bias, &size, sizeof(size)))
		return -EIO;
	pl->interp_size = size;
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].interp_size == size)
			pl->layout = &layouts[i];
	if (!pl->layout)
		return -ENOTSUP;
	pl->cvs = xcalloc(PERLFRAMES_CVS, sizeof(*pl->cvs));
	return 0;
}

void perlframes_close(struct perlframes *pl)
{
	free(pl->cvs);
	pl->cvs = NULL;
}

/* --- reading ------------------------------------------------------------------------------- */

static int read_u64(const struct perlframes *pl, uint64_t addr, uint64_t *v)
{
	return addr ? pl->read(pl->arg, addr, v, sizeof(*v)) : -EBADMSG;
}

static int read_u32(const struct perlframes *pl, uint64_t addr, uint32_t *v)
{
	return addr ? pl->read(pl->arg, addr, v, sizeof(*v)) : -EBADMSG;
}

/* A NUL-terminated string at addr into out (at most max - 1 bytes, cut there), read in pieces
 * that stay inside a page (the next one may be unmapped). */
static int read_string(const struct perlframes *pl, uint64_t addr, char *out, size_t max)
{
	size_t have = 0;

	if (!addr)
		return -EBADMSG;
	while (have + 1 < max) {
		size_t want = 64 - (addr + have) % 64;
		int err;

		if (want > max - 1 - have)
			want = max - 1 - have;
		if ((err = pl->read(pl->arg, addr + have, out + have, want)))
			return err;
		if (memchr(out + have, '\0', want))
			return 0;
		have += want;
	}
	out[have] = '\0';
	return 0;
}

/* A shared hash key (HEK): its length and bytes, at most max - 1 of them. */
static int read_hek(const struct perlframes *pl, uint64_t hek, char *out, size_t max)
{
	const struct perlframes_layout *l = pl->layout;
	int32_t len;
	int err;

	if (!hek)
		return -EBADMSG;
	err = pl->read(pl->arg, hek + l->hek_len, &len, sizeof(len));
	if (err)
		return err;
	if (len <= 0) /* (no name is empty) */
		return -EBADMSG;
	if ((size_t)len > max - 1)
		len = (int32_t)(max - 1);
	err = pl->read(pl->arg, hek + l->hek_key, out, (size_t)len);
	out[err ? 0 : len] = '\0';
	return err ? err : out[0] ? 0 : -EBADMSG; /* (no name is empty) */
}

/* An SV's head: its body and flags (one read: the head is 16 bytes, both in it). */
static int sv_peek(const struct perlframes *pl, uint64_t sv, uint64_t *body, uint32_t *flags)
{
	const struct perlframes_layout *l = pl->layout;
	uint8_t head[16];
	int err;

	if (!sv || l->sv_flags + 4 > sizeof(head) || l->sv_any + 8 > sizeof(head))
		return -EBADMSG;
	if ((err = pl->read(pl->arg, sv, head, sizeof(head))))
		return err;
	memcpy(body, head + l->sv_any, 8);
	memcpy(flags, head + l->sv_flags, 4);
	return 0;
}

/* An SV's head, checked to be of type and to have a body. */
static int sv_head(const struct perlframes *pl, uint64_t sv, unsigned type, uint64_t *body,
		   uint32_t *flags)
{
	int err = sv_peek(pl, sv, body, flags);

	if (err)
		return err;
	return (*flags & 0xff) == type && *body ? 0 : -EBADMSG;
}

/* A stash's name (HvNAME: its aux part's first name), into out. */
static int stash_name(const struct perlframes *pl, uint64_t hv, char *out, size_t max)
{
	const struct perlframes_layout *l = pl->layout;
	uint64_t body, name;
	uint32_t flags;
	int32_t count;
	int err;

	if ((err = sv_head(pl, hv, l->svt_pvhv, &body, &flags)))
		return err;
	if (!(flags & l->svf_ook))
		return -EBADMSG;
	if ((err = read_u64(pl, body + l->xhv_aux + l->aux_name, &name)) ||
	    (err = pl->read(pl->arg, body + l->xhv_aux + l->aux_name_count, &count, sizeof(count))))
		return err;
	if (count && (err = read_u64(pl, name, &name))) /* an array of names: the first */
		return err;
	return read_hek(pl, name, out, max);
}

/* The first line of a sub: its first op's, when that is a statement. */
static unsigned first_line(const struct perlframes *pl, uint64_t start)
{
	const struct perlframes_layout *l = pl->layout;
	uint16_t type;
	uint32_t line;

	if (!start || pl->read(pl->arg, start + l->op_type, &type, sizeof(type)))
		return 0;
	type &= 0x1ff;
	if ((type != l->op_nextstate && type != l->op_dbstate) || read_u32(pl, start + l->cop_line, &line))
		return 0;
	return line;
}

/* Read the sub cv into c, named as DProf names it: its glob's stash and name. */
static int read_cv(const struct perlframes *pl, uint64_t cv, uint64_t body, struct perlframes_cv *c)
{
	const struct perlframes_layout *l = pl->layout;
	uint8_t x[128];
	uint64_t stash, gv_u, file, start, gv_body;
	uint32_t cvflags, gv_flags;
	char sub[PERLFRAMES_NAME_MAX];
	int err;

	if (l->xcv_end > sizeof(x))
		return -EBADMSG;
	if ((err = pl->read(pl->arg, body, x, l->xcv_end)))
		return err;
	memcpy(&stash, x + l->xcv_stash, 8);
	memcpy(&start, x + l->xcv_start, 8);
	memcpy(&gv_u, x + l->xcv_gv, 8);
	memcpy(&file, x + l->xcv_file, 8);
	memcpy(&cvflags, x + l->xcv_flags, 4);
	if (cvflags & l->cvf_named) { /* no glob: its name is its own, its package its stash */
		err = read_hek(pl, gv_u, sub, sizeof(sub));
	} else {
		if (!(err = sv_head(pl, gv_u, l->svt_pvgv, &gv_body, &gv_flags)) &&
		    !(err = read_u64(pl, gv_body + l->xgv_stash, &stash)))
			err = read_hek(pl, read_u64(pl, gv_body + l->xgv_namehek, &gv_u) ? 0 : gv_u,
				       sub, sizeof(sub));
	}
	if (err)
		return err;
	if (stash_name(pl, stash, c->package, sizeof(c->package)))
		snprintf(c->package, sizeof(c->package), "%s", "__ANON__");
	if (!file || read_string(pl, file, c->file, sizeof(c->file)))
		c->file[0] = '\0';
	c->xsub = cvflags & l->cvf_isxsub;
	c->first_line = c->xsub ? 0 : first_line(pl, start);
	if (cvflags & l->cvf_anon) /* as NYTProf names them: where they are */
		snprintf(c->name, sizeof(c->name), "__ANON__[%.200s:%u]",
			 strlen(c->file) > 200 ? c->file + strlen(c->file) - 200 : c->file,
			 c->first_line);
	else
		memcpy(c->name, sub, sizeof(c->name));
	c->cv = cv;
	c->body = body;
	return 0;
}

/* The sub at cv, from the cache when its head is still the one cached. */
static const struct perlframes_cv *sub_of(const struct perlframes *pl, uint64_t cv, int *err)
{
	struct perlframes_cv *c = &pl->cvs[util_hash_u64(cv) & (PERLFRAMES_CVS - 1)];
	uint64_t body;
	uint32_t flags;

	if ((*err = sv_head(pl, cv, pl->layout->svt_pvcv, &body, &flags)))
		return NULL;
	if (c->cv == cv && c->body == body)
		return c;
	c->cv = 0;
	*err = read_cv(pl, cv, body, c);
	return *err ? NULL : c;
}

/* The line of a statement (COP); 0 when unreadable. */
static unsigned cop_line(const struct perlframes *pl, uint64_t cop)
{
	uint32_t line;

	return cop && !read_u32(pl, cop + pl->layout->cop_line, &line) ? line : 0;
}

struct walk {
	struct perlframe *out;
	size_t max, n;
	size_t walked;             /* contexts looked at */
	uint64_t cop;              /* where the next sub out is (the previous one's caller) */
	unsigned run;
	bool closed;               /* the last sub ended its run (it was entered from C) */
	bool main_contexts;        /* the main stack (the last) has contexts */
};

/* One context: a sub's adds its frame. */
static int walk_context(const struct perlframes *pl, const uint8_t *cx, struct walk *w)
{
	const struct perlframes_layout *l = pl->layout;
	uint64_t cv, retop, oldcop;
	const struct perlframes_cv *c;
	unsigned type = cx[0] & l->cxt_mask;
	int err;

	w->closed = false;
	if (type != l->cxt_sub && type != l->cxt_format)
		return 0;
	memcpy(&cv, cx + l->cx_cv, 8);
	memcpy(&retop, cx + l->cx_retop, 8);
	memcpy(&oldcop, cx + l->cx_oldcop, 8);
	if (!(c = sub_of(pl, cv, &err)))
		return err;
	if (w->n < w->max) {
		struct perlframe *f = &w->out[w->n++];

		memcpy(f->package, c->package, sizeof(f->package));
		memcpy(f->name, c->name, sizeof(f->name));
		memcpy(f->file, c->file, sizeof(f->file));
		f->cv = cv;
		f->first_line = c->first_line;
		f->line = cop_line(pl, w->cop);
		f->run = w->run;
		f->xsub = false;
	}
	w->cop = oldcop;
	if (!retop) { /* entered from C (call_sv, sort, magic): its run loop is its own */
		w->run++;
		w->closed = true;
	}
	return 0;
}

/* The contexts of one stack of them, innermost first. */
static int walk_stack_info(const struct perlframes *pl, uint64_t cxstack, int32_t cxix,
			   struct walk *w)
{
	const struct perlframes_layout *l = pl->layout;
	uint8_t buf[CX_CHUNK * 128];
	int err;

	if (l->cx_size > 128)
		return -EBADMSG;
	for (int64_t hi = cxix; hi >= 0 && w->n < w->max;) {
		int64_t lo = hi - CX_CHUNK + 1 < 0 ? 0 : hi - CX_CHUNK + 1;

		w->walked += (size_t)(hi - lo + 1);
		if (w->walked > CX_WALKED_MAX)
			return -EBADMSG;
		err = pl->read(pl->arg, cxstack + (uint64_t)lo * l->cx_size, buf,
			       (size_t)(hi - lo + 1) * l->cx_size);
		if (err)
			return err;
		for (int64_t i = hi; i >= lo; i--)
			if ((err = walk_context(pl, buf + (size_t)(i - lo) * l->cx_size, w)))
				return err;
		hi = lo - 1;
	}
	return 0;
}

/* The XS sub being called, if the op being run is a call and the sub it popped off Perl's
 * stack (still there, above the stack pointer, while the sub runs) is an XS sub: XS subs push
 * no context. Returns it, or NULL. */
static const struct perlframes_cv *xsub_called(const struct perlframes *pl, uint64_t op,
					       uint64_t sp)
{
	const struct perlframes_layout *l = pl->layout;
	uint64_t sv, body, cv;
	const struct perlframes_cv *c;
	uint32_t flags;
	uint16_t type;
	int err;

	if (!op || pl->read(pl->arg, op + l->op_type, &type, sizeof(type)) ||
	    (type & 0x1ff) != l->op_entersub || read_u64(pl, sp + 8, &sv) ||
	    sv_peek(pl, sv, &body, &flags))
		return NULL;
	cv = sv;
	if ((flags & 0xff) == l->svt_pvgv) { /* a glob: its sub */
		uint64_t gp;

		if (read_u64(pl, sv + l->sv_u, &gp) || read_u64(pl, gp + l->gp_cv, &cv))
			return NULL;
	} else if ((flags & 0xff) == l->svt_iv && (flags & l->svf_rok)) { /* a code reference */
		if (read_u64(pl, sv + l->sv_u, &cv))
			return NULL;
	} else if ((flags & 0xff) != l->svt_pvcv) {
		return NULL;
	}
	c = sub_of(pl, cv, &err);
	return c && c->xsub ? c : NULL;
}

int perlframes_stack(const struct perlframes *pl, struct perlframe *out, size_t max,
		     unsigned *runs)
{
	const struct perlframes_cv *xsub;
	const struct perlframes_layout *l = pl->layout;
	struct walk w = { .out = out, .max = max };
	uint8_t start[256];
	uint64_t interp, si, op, sp;
	uint32_t phase;
	int err;

	*runs = 0;
	if ((err = pl->read(pl->arg, pl->curinterp, &interp, sizeof(interp))))
		return err;
	if (!interp)
		return -ENOENT;
	/* The fields near its start in one read (its phase is far from them). */
	if (l->interp_curstackinfo + 8 > sizeof(start) || l->interp_curcop + 8 > sizeof(start) ||
	    l->interp_op + 8 > sizeof(start) || l->interp_stack_sp + 8 > sizeof(start))
		return -EBADMSG;
	if ((err = pl->read(pl->arg, interp, start, l->interp_curstackinfo + 8)) ||
	    (err = read_u32(pl, interp + l->interp_phase, &phase)))
		return err;
	memcpy(&w.cop, start + l->interp_curcop, 8);
	memcpy(&si, start + l->interp_curstackinfo, 8);
	memcpy(&op, start + l->interp_op, 8);
	memcpy(&sp, start + l->interp_stack_sp, 8);
	if (max && (xsub = xsub_called(pl, op, sp))) {
		struct perlframe *f = &out[w.n++];

		memset(f, 0, sizeof(*f));
		memcpy(f->package, xsub->package, sizeof(f->package));
		memcpy(f->name, xsub->name, sizeof(f->name));
		memcpy(f->file, xsub->file, sizeof(f->file));
		f->cv = xsub->cv;
		f->xsub = true;
	}
	for (uint64_t tortoise = 0, power = 1, lam = 0; si; lam++) {
		uint8_t head[64];
		uint64_t cxstack, prev;
		int32_t cxix, cxmax;

		if (si == tortoise || l->si_size > sizeof(head))
			return -EBADMSG; /* a chain of stacks that comes round */
		if (lam == power) {
			tortoise = si;
			power *= 2;
			lam = 0;
		}
		if ((err = pl->read(pl->arg, si, head, l->si_size)))
			return err;
		memcpy(&cxstack, head + l->si_cxstack, 8);
		memcpy(&prev, head + l->si_prev, 8);
		memcpy(&cxix, head + l->si_cxix, 4);
		memcpy(&cxmax, head + l->si_cxmax, 4);
		if (cxix < -1 || cxix > cxmax || cxmax >= (int32_t)CX_MAX || (cxix >= 0 && !cxstack))
			return -EBADMSG;
		w.closed = false;
		w.main_contexts = !prev && cxix >= 0;
		if (cxix >= 0 && (err = walk_stack_info(pl, cxstack, cxix, &w)))
			return err;
		/* A stack pushed for sort or magic runs in a run loop of its own (a sort block
		 * too, with no sub in it), unless its bottom sub already ended one. */
		if (prev && !w.closed)
			w.run++;
		si = prev;
	}
	/* The main program, outermost, while it runs: at a statement that reads (a file, a line),
	 * with its contexts (the main program's block at least) in the main stack. */
	if (phase == l->phase_run && !w.closed && w.main_contexts && w.n < max) {
		struct perlframe *f = &out[w.n];
		uint64_t file;

		memset(f, 0, sizeof(*f));
		f->line = cop_line(pl, w.cop);
		if (f->line && !read_u64(pl, w.cop + l->cop_file, &file) &&
		    !read_string(pl, file, f->file, sizeof(f->file)) && f->file[0]) {
			snprintf(f->package, sizeof(f->package), "%s", "main");
			snprintf(f->name, sizeof(f->name), "%s", "RUNTIME");
			f->run = w.run;
			w.n++;
		}
	}
	*runs = w.closed ? w.run : w.run + 1;
	return (int)w.n;
}
