/* resolver.c — a worker's symbolizer, unwinder and frame caches (resolver.h).
 *
 * Resolved frames: (pid, address) -> its chain of (function, site): the function the address
 * is in, preceded by the functions inlined there, innermost first. Unwinding a deep stack
 * resolves the same return addresses sample after sample; each resolution is two binary
 * searches, a few hashes and a DWARF lookup (which the module keeps). A chain of up to
 * CHAIN_CACHED frames is kept in its entry; a deeper one (rare) is made again each time. Any
 * change to an address space bumps the generation, which empties the cache at once.
 *
 * Behind it, the same chains by (module, link-time address): a chain in an ELF file depends on
 * nothing else, so these outlive address-space changes (a build's compiler processes, a second
 * each, all map the same cc1 and libc, and each one's mmaps empty the cache above). Forgotten
 * only when modules' names change (a debug file arrived). */
#include "proftop/resolver.h"

#include "proftop/blocked.h"
#include "proftop/diag.h"
#include "proftop/fetch.h"
#include "proftop/frames_perl.h"
#include "proftop/frames_python.h"
#include "proftop/handoff.h"
#include "proftop/lines.h"
#include "proftop/module.h"
#include "proftop/profile.h"
#include "proftop/profiles.h"
#include "proftop/symbols.h"
#include "proftop/target.h"
#include "proftop/util.h"

#include <errno.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Samples of a process can still be in the ring (read from another CPU's kernel buffer) after
 * its EXIT record: forget its address space only this much later. */
#define EXIT_GRACE_NS 2000000000ull
/* How often the modules' DWARF is kept within the budget. */
#define TRIM_NS 1000000000ull
#define FRAME_CACHE_SIZE 16384
#define MODULE_FRAME_CACHE_SIZE 16384
#define CHAIN_CACHED 4
/* A frame source's frames of one native frame. */
#define SPLICED_MAX 256

/* What a frame of a stack being resolved is (--python=only keeps some). */
enum { FRAME_NATIVE, FRAME_INTERPRETER, FRAME_SPLICED };

struct chain_frame {
	uint32_t func;
	uint32_t site;             /* PROFILE_NO_SITE: none */
};

/* A chain, which frame source (1 + its index; 0: none) its function runs frames of, and
 * whether its module is an interpreter's (--python=only leaves it out). */
struct chain {
	uint32_t depth;
	uint8_t runs;
	bool interpreter;
	struct chain_frame frames[CHAIN_CACHED];
};

struct frame_cache_entry {
	uint64_t addr;
	pid_t pid;
	uint32_t generation;
	struct chain chain;
};

struct module_frame_entry {
	const struct module *mod;  /* NULL: empty */
	uint64_t addr;
	uint32_t generation;
	struct chain chain;
};

struct exited {
	pid_t pid;
	uint64_t at_ns;
};

struct frame_kind {
	const struct frame_source_ops *ops;
	void *arg;
	bool only;                 /* its interpreter's own frames are left out (=only) */
};

struct resolver {
	struct profiles *profiles;
	struct diag *diag;
	struct symbolizer *symbolizer;
	struct unwinder *unwinder;
	enum resolver_lines lines;
	bool only_spliced;         /* --python=only or --perl=only */
	struct frame_cache_entry *frames;
	uint32_t frames_generation;
	struct module_frame_entry *module_frames;
	uint32_t module_frames_generation;
	struct frame_kind sources[RESOLVER_MAX_FRAME_SOURCES];
	size_t nsources;
	struct handoff *handoff;   /* debuginfod's files; NULL: none */
	size_t fetched_applied;    /* of its files, taken so far (0 again: take them again) */
	struct exited *exited;     /* processes to forget, oldest first */
	size_t nexited, exited_cap;
	_Atomic uint64_t truncated;
	uint64_t trim_ns;          /* when its DWARF is next kept within the budget */
	uint64_t sources_closed;
	_Atomic uint64_t sources_closed_now;
	_Atomic size_t sources_held;
};

/* --- JIT maps read late ---------------------------------------------------------------------- */

struct jit_naming {
	struct resolver *r;
	pid_t pid;
};

/* A JIT address's name for profile_name_jit(): what the symbolizer read of the map. */
static const char *jit_name_at(void *arg, uint64_t addr, const char **module)
{
	struct jit_naming *n = arg;

	return symbolizer_jit_name(n->r->symbolizer, n->pid, addr, module);
}

/* pid's perf map changed: its addresses interned unnamed take the names it gives now. */
static void jit_named(void *arg, pid_t pid)
{
	struct jit_naming n = { arg, pid };

	profiles_lock(n.r->profiles);
	profiles_name_jit(n.r->profiles, pid, jit_name_at, &n);
	profiles_unlock(n.r->profiles);
}

static void jit_forget(void *arg, pid_t pid)
{
	struct resolver *r = arg;

	profiles_lock(r->profiles);
	profiles_jit_forget(r->profiles, pid);
	profiles_unlock(r->profiles);
}

static bool jit_waiting(void *arg, pid_t pid)
{
	struct resolver *r = arg;
	bool waiting;

	profiles_lock(r->profiles);
	waiting = profiles_jit_waiting(r->profiles, pid);
	profiles_unlock(r->profiles);
	return waiting;
}

static const struct symbolizer_jit_ops jit_ops = {
	.named = jit_named,
	.forget = jit_forget,
	.waiting = jit_waiting,
};

/* The kinds of frames that are not machine code: a module each, and a line here. */
const struct frame_source_ops *const resolver_frame_kinds[] = {
	&frames_python_ops,
	&frames_perl_ops,
	NULL,
};

/* What the options say of a kind of frames. */
static enum sample_python kind_setting(const struct sample_config *config, const char *name)
{
	return !strcmp(name, "perl") ? config->perl : config->python;
}

static void add_frame_kinds(struct resolver *r, const struct sample_config *config)
{
	for (size_t i = 0; resolver_frame_kinds[i] && i < RESOLVER_MAX_FRAME_SOURCES; i++) {
		const struct frame_source_ops *ops = resolver_frame_kinds[i];
		enum sample_python setting = kind_setting(config, ops->name);

		if (setting == SAMPLE_PYTHON_OFF)
			continue;
		r->sources[r->nsources++] = (struct frame_kind){
			ops, ops->create(r->diag), setting == SAMPLE_PYTHON_ONLY,
		};
		r->only_spliced |= setting == SAMPLE_PYTHON_ONLY;
	}
}

struct resolver *resolver_new(struct profiles *profiles, const struct sample_config *config,
			      struct diag *diag)
{
	struct resolver *r = xcalloc(1, sizeof(*r));
	enum callgraph_mode callgraph = sample_mode_allocations(config->mode) ? CALLGRAPH_DWARF
									     : config->callgraph;

	r->profiles = profiles;
	r->diag = diag;
	r->symbolizer = symbolizer_new(diag);
	symbolizer_set_jit_ops(r->symbolizer, &jit_ops, r);
	r->unwinder = unwinder_new(callgraph, r->symbolizer, diag);
	r->frames = xcalloc(FRAME_CACHE_SIZE, sizeof(*r->frames));
	r->frames_generation = 1; /* zeroed entries are of no generation */
	r->module_frames = xcalloc(MODULE_FRAME_CACHE_SIZE, sizeof(*r->module_frames));
	r->module_frames_generation = 1;
	atomic_init(&r->truncated, 0);
	atomic_init(&r->sources_closed_now, 0);
	atomic_init(&r->sources_held, 0);
	add_frame_kinds(r, config);
	return r;
}

void resolver_free(struct resolver *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nsources; i++)
		r->sources[i].ops->destroy(r->sources[i].arg);
	unwinder_free(r->unwinder);
	symbolizer_free(r->symbolizer);
	free(r->exited);
	free(r->frames);
	free(r->module_frames);
	free(r);
}

struct symbolizer *resolver_symbolizer(struct resolver *r)
{
	return r->symbolizer;
}

void resolver_set_lines(struct resolver *r, enum resolver_lines lines)
{
	r->lines = lines;
}

void resolver_set_rules(struct resolver *r, bool rules)
{
	unwinder_set_rules(r->unwinder, rules);
}

uint64_t resolver_unread_frames(const struct resolver *r)
{
	uint64_t n = 0;

	for (size_t i = 0; i < r->nsources; i++)
		n += r->sources[i].ops->unread(r->sources[i].arg);
	return n;
}

/* An address space changed: what the cache says may no longer hold. */
static void forget_frames(struct resolver *r)
{
	r->frames_generation++;
}

static void forget_process(struct resolver *r, pid_t pid)
{
	for (size_t i = 0; i < r->nsources; i++)
		if (r->sources[i].ops->forget)
			r->sources[i].ops->forget(r->sources[i].arg, pid);
}

void resolver_address_record(struct resolver *r, const struct sample_record *rec, uint64_t now_ns)
{
	switch (rec->kind) {
	case SAMPLE_KIND_MMAP:
		forget_frames(r);
		symbolizer_mmap(r->symbolizer, (pid_t)rec->pid, rec->mmap.start, rec->mmap.len,
				rec->mmap.pgoff, rec->mmap.maj, rec->mmap.min, rec->mmap.ino,
				rec->mmap.prot, rec->mmap.path);
		break;
	case SAMPLE_KIND_COMM:
		if (!rec->comm.exec)
			break;
		forget_frames(r);
		symbolizer_exec(r->symbolizer, (pid_t)rec->pid);
		unwinder_forget(r->unwinder, (pid_t)rec->pid);
		forget_process(r, (pid_t)rec->pid);
		break;
	case SAMPLE_KIND_FORK:
		if (rec->pid != rec->task.ppid) /* a new process, not a new thread */
			symbolizer_fork(r->symbolizer, (pid_t)rec->task.ppid, (pid_t)rec->pid);
		break;
	case SAMPLE_KIND_EXIT:
		/* Any thread's exit may be its process's last (the main thread can end first). */
		if (!r->nexited || r->exited[r->nexited - 1].pid != (pid_t)rec->pid) {
			xgrow((void **)&r->exited, &r->exited_cap, r->nexited + 1, sizeof(*r->exited));
			r->exited[r->nexited++] = (struct exited){ (pid_t)rec->pid, now_ns };
		}
		break;
	default:
		break;
	}
}

/* Forget the processes that had a thread exit more than the grace period ago and are gone; one
 * still running gets checked again at its next thread's exit. */
static void forget_exited(struct resolver *r, uint64_t now)
{
	size_t done = 0;

	while (done < r->nexited && now - r->exited[done].at_ns >= EXIT_GRACE_NS) {
		pid_t pid = r->exited[done].pid;

		if (target_pid_gone(pid)) {
			forget_frames(r);
			symbolizer_exit(r->symbolizer, pid);
			unwinder_forget(r->unwinder, pid);
			forget_process(r, pid);
		}
		done++;
	}
	if (done) {
		memmove(r->exited, r->exited + done, (r->nexited - done) * sizeof(*r->exited));
		r->nexited -= done;
	}
}

/* Once a second, the modules' DWARF within the budget. What the DWARF freed is mostly small
 * blocks of libdw's among the heap's others: handed back explicitly. */
static void trim_sources(struct resolver *r, uint64_t now, size_t budget)
{
	uint64_t closed = r->sources_closed;
	size_t held;

	if (now < r->trim_ns)
		return;
	r->trim_ns = now + TRIM_NS;
	held = symbolizer_trim_sources(r->symbolizer, budget, &r->sources_closed);
	atomic_store_explicit(&r->sources_held, held, memory_order_relaxed);
	if (r->sources_closed == closed)
		return;
	atomic_store_explicit(&r->sources_closed_now, r->sources_closed, memory_order_relaxed);
	malloc_trim(0);
}

void resolver_tick(struct resolver *r, uint64_t now_ns, size_t budget)
{
	forget_exited(r, now_ns);
	symbolizer_settle_jits(r->symbolizer);
	trim_sources(r, now_ns, budget);
}

size_t resolver_sources_held(const struct resolver *r)
{
	return atomic_load_explicit(&r->sources_held, memory_order_relaxed);
}

uint64_t resolver_sources_closed(const struct resolver *r)
{
	return atomic_load_explicit(&r->sources_closed_now, memory_order_relaxed);
}

uint64_t resolver_truncated(const struct resolver *r)
{
	return atomic_load_explicit(&r->truncated, memory_order_relaxed);
}

/* --- frames ----------------------------------------------------------------------------------- */

/* Which frame source (1 + its index; 0: none) runs frames in the native function sym, and
 * whether sym is an interpreter's own. */
static uint8_t frames_run_by(struct resolver *r, const struct symbol *sym, bool *interpreter)
{
	*interpreter = false;
	for (size_t i = 0; i < r->nsources && sym->elf; i++)
		*interpreter |= r->sources[i].only &&
				r->sources[i].ops->is_interpreter(r->sources[i].arg, sym);
	for (size_t i = 0; i < r->nsources && sym->function; i++)
		if (r->sources[i].ops->runs_frames(r->sources[i].arg, sym))
			return (uint8_t)(i + 1);
	return 0;
}

/* The chain of the address sym describes in pid into out (room for LINES_MAX_FRAMES): innermost
 * first, the function of the symbol last. Returns its length. The module's part (its line
 * tables, the slow part the first time) is read before the profiles are locked. */
static size_t make_chain(struct resolver *r, pid_t pid, const struct symbol *sym,
			 struct chain_frame *out)
{
	struct profiles *ps = r->profiles;
	struct lines_frame lf[LINES_MAX_FRAMES];
	bool lines = r->lines != RESOLVER_LINES_OFF && sym->elf, whole, news = false;
	const char *problem = NULL;
	size_t n = 0, depth = 0;
	uint32_t func;

	if (lines) {
		n = module_source(sym->elf, sym->module_addr, lf, LINES_MAX_FRAMES - 1);
		problem = module_source_problem(sym->elf, &news);
		if (news)
			diag_report(r->diag, DIAG_WARNING, "%s", problem);
	}
	profiles_lock(ps);
	if (!sym->function && sym->jit_addr)
		func = profiles_jit_func(ps, sym->module, sym->jit_addr, pid);
	else
		func = profiles_func(ps, sym->module, sym->function, sym->function || sym->bounded ?
				     sym->function_addr : sym->module_addr, false);
	if (sym->function && sym->elf)
		profiles_func_code(ps, func, module_path(sym->elf), sym->function_addr,
				   sym->function_end);
	if (!lines) {
		out[depth++] = (struct chain_frame){ func, PROFILE_NO_SITE };
		profiles_unlock(ps);
		return depth;
	}
	/* Unless the chain was cut, its last frame is the symbol's own function: its line is that
	 * function's, and the frames before it were inlined into it. */
	whole = n && !lf[n - 1].inlined;
	if (r->lines == RESOLVER_LINES_INLINE)
		for (size_t i = 0; i + whole < n; i++)
			out[depth++] = (struct chain_frame){
				profiles_func(ps, sym->module,
					      lf[i].function ? lf[i].function : "[inlined]", 0, true),
				PROFILE_NO_SITE,
			};
	for (size_t i = 0; i < depth; i++) {
		out[i].site = profiles_site(ps, out[i].func, sym->module_addr, lf[i].file, lf[i].line);
		if (problem && !lf[i].file)
			profiles_func_no_lines(ps, out[i].func, problem);
	}
	out[depth++] = (struct chain_frame){
		func, profiles_site(ps, func, sym->module_addr, whole ? lf[n - 1].file : NULL,
				    whole ? lf[n - 1].line : 0),
	};
	if (problem && !(whole && lf[n - 1].file))
		profiles_func_no_lines(ps, func, problem);
	profiles_unlock(ps);
	return depth;
}

/* The module cache's slot for addr in pid, with its key, when an ELF file with an image maps it
 * (the symbolizer then resolves addr from that file alone); else NULL. */
static struct module_frame_entry *module_frame(struct resolver *r, pid_t pid, uint64_t addr,
					       const struct module **mod, uint64_t *module_addr)
{
	struct unwind_info info;

	if (symbolizer_unwind_info(r->symbolizer, pid, addr, &info) < 0)
		return NULL;
	*mod = info.module;
	*module_addr = addr - info.bias;
	return &r->module_frames[util_hash_u64(*module_addr ^ ((uint64_t)(uintptr_t)*mod << 16)) &
				 (MODULE_FRAME_CACHE_SIZE - 1)];
}

static const struct chain_frame *cache_frame(struct resolver *r, struct frame_cache_entry *e,
					     pid_t pid, uint64_t addr, const struct chain *chain)
{
	e->addr = addr;
	e->pid = pid;
	e->generation = r->frames_generation;
	e->chain = *chain;
	return e->chain.frames;
}

/* The chain of addr in pid: from the caches, or made and cached; *runs: the frame source
 * whose frames it runs (1 + its index; 0: none); *interpreter: an interpreter's own code. */
static const struct chain_frame *resolve_frame(struct resolver *r, pid_t pid, uint64_t addr,
					       struct chain_frame *scratch, size_t *depth,
					       uint8_t *runs, bool *interpreter)
{
	struct frame_cache_entry *e =
		&r->frames[util_hash_u64(addr ^ ((uint64_t)(uint32_t)pid << 40)) & (FRAME_CACHE_SIZE - 1)];
	const struct module *mod = NULL;
	struct module_frame_entry *me;
	uint64_t module_addr = 0;
	struct symbol sym;
	struct chain made;

	if (e->generation == r->frames_generation && e->addr == addr && e->pid == pid) {
		*depth = e->chain.depth;
		*runs = e->chain.runs;
		*interpreter = e->chain.interpreter;
		return e->chain.frames;
	}
	me = module_frame(r, pid, addr, &mod, &module_addr);
	if (me && me->generation == r->module_frames_generation && me->mod == mod &&
	    me->addr == module_addr) {
		*depth = me->chain.depth;
		*runs = me->chain.runs;
		*interpreter = me->chain.interpreter;
		return cache_frame(r, e, pid, addr, &me->chain);
	}
	symbolizer_resolve(r->symbolizer, pid, addr, &sym);
	*depth = make_chain(r, pid, &sym, scratch);
	*runs = frames_run_by(r, &sym, interpreter);
	/* An unnamed address outside ELF files may be named later (a JIT appends to its perf
	 * map): not cached. One in an ELF file (stripped) is named later only by a debug file,
	 * which empties the caches. */
	if ((!sym.function && !sym.bounded && !sym.elf) || *depth > CHAIN_CACHED)
		return scratch;
	made.depth = (uint32_t)*depth;
	made.runs = *runs;
	made.interpreter = *interpreter;
	memcpy(made.frames, scratch, *depth * sizeof(*scratch));
	if (me && sym.elf == mod)
		*me = (struct module_frame_entry){ .mod = mod, .addr = module_addr,
						   .generation = r->module_frames_generation,
						   .chain = made };
	return cache_frame(r, e, pid, addr, &made);
}

/* The frames source k (1 + its index) gives for its nth native frame of count, at addr in
 * thread tid (having called callee), interned, into out[0..max) innermost first. Returns how
 * many. */
static size_t spliced_frames(struct resolver *r, uint8_t k, pid_t pid, pid_t tid, unsigned nth,
			     unsigned count, uint64_t addr, uint64_t callee, struct chain_frame *out,
			     size_t max)
{
	struct frame_source_frame got[SPLICED_MAX];
	const struct frame_kind *src = &r->sources[k - 1];
	struct unwind_info info;
	struct frame_source_native native;
	size_t n;

	if (symbolizer_unwind_info(r->symbolizer, pid, addr, &info) < 0)
		return 0;
	native = (struct frame_source_native){ module_path(info.module), info.bias, callee };
	n = src->ops->frames(src->arg, pid, tid, nth, count, &native, got,
			     max < SPLICED_MAX ? max : SPLICED_MAX);

	profiles_lock(r->profiles);
	for (size_t i = 0; i < n; i++) {
		uint32_t func = profiles_func(r->profiles, got[i].module, got[i].name, got[i].addr,
					      false);

		out[i] = (struct chain_frame){
			func, got[i].file && r->lines != RESOLVER_LINES_OFF
				      ? profiles_site(r->profiles, func, got[i].line, got[i].file,
						      got[i].line)
				      : PROFILE_NO_SITE,
		};
	}
	profiles_unlock(r->profiles);
	return n;
}

static void stack_end(struct resolver *r, pid_t pid, pid_t tid, const unsigned *used)
{
	for (size_t i = 0; i < r->nsources; i++)
		if (r->sources[i].ops->stack_end)
			r->sources[i].ops->stack_end(r->sources[i].arg, pid, tid, used[i]);
}

/* --python=only: the spliced frames and the native ones they call that are not an
 * interpreter's, without what is outside the outermost spliced frame. frames[0..depth) is
 * innermost first, kinds[] saying which is which. Returns the new depth. */
static size_t only_spliced(struct chain_frame *frames, const uint8_t *kinds, size_t depth)
{
	size_t outermost = depth, kept = 0;

	for (size_t i = 0; i < depth; i++)
		if (kinds[i] == FRAME_SPLICED)
			outermost = i;
	if (outermost == depth) /* no Python here: the stack as it is */
		return depth;
	for (size_t i = 0; i <= outermost; i++)
		if (kinds[i] != FRAME_INTERPRETER)
			frames[kept++] = frames[i];
	return kept;
}

/* Where a frame source's frames go: before native frame `at` (innermost first), run by the
 * nth of the source's native frames. */
struct splice_point {
	size_t at;
	uint8_t source;            /* 1 + its index */
	unsigned nth;
	uint64_t ip, callee;
};

size_t resolver_stack(struct resolver *r, pid_t pid, pid_t tid, const uint64_t *ips, size_t n,
		      bool first_exact, bool truncated, uint32_t *funcs, uint32_t *sites)
{
	struct chain_frame native[RESOLVER_MAX_FRAMES], frames[RESOLVER_MAX_FRAMES];
	struct chain_frame scratch[LINES_MAX_FRAMES];
	uint8_t native_kinds[RESOLVER_MAX_FRAMES], kinds[RESOLVER_MAX_FRAMES];
	struct splice_point points[UNWIND_MAX_FRAMES];
	unsigned nth[RESOLVER_MAX_FRAME_SOURCES] = { 0 };
	size_t native_depth = 0, npoints = 0, depth = 0, from = 0;

	/* The native frames first, and where the sources' frames go: a source is told how many
	 * of its native frames the stack has before it is asked for the first one's frames.
	 * Return addresses point after the call: look up the byte before them to stay inside the
	 * calling function (and on the call's line). A stack too deep with its inlined frames
	 * loses its outermost ones. */
	for (size_t i = 0; i < n; i++) {
		size_t len;
		uint8_t runs;
		bool interpreter;
		const struct chain_frame *chain;

		if (native_depth == RESOLVER_MAX_FRAMES) {
			truncated = true;
			break;
		}
		chain = resolve_frame(
			r, pid, i == 0 && first_exact ? ips[i] : ips[i] - 1, scratch, &len, &runs,
			&interpreter);

		if (runs && npoints < UNWIND_MAX_FRAMES)
			points[npoints++] = (struct splice_point){
				native_depth, runs, nth[runs - 1]++, ips[i], i ? ips[i - 1] : 0,
			};
		if (len > RESOLVER_MAX_FRAMES - native_depth) {
			truncated = true;
			len = RESOLVER_MAX_FRAMES - native_depth;
		}
		memcpy(&native[native_depth], chain, len * sizeof(*chain));
		memset(&native_kinds[native_depth], interpreter ? FRAME_INTERPRETER : FRAME_NATIVE,
		       len);
		native_depth += len;
	}
	/* Then each source's frames just inside the native frame that runs them. */
	for (size_t p = 0; p <= npoints; p++) {
		size_t to = p < npoints ? points[p].at : native_depth, len = to - from, spliced;

		if (len > RESOLVER_MAX_FRAMES - depth) {
			truncated = true;
			len = RESOLVER_MAX_FRAMES - depth;
		}
		memcpy(&frames[depth], &native[from], len * sizeof(*frames));
		memcpy(&kinds[depth], &native_kinds[from], len);
		depth += len;
		from = to;
		if (p == npoints)
			break;
		spliced = spliced_frames(r, points[p].source, pid, tid, points[p].nth,
					 nth[points[p].source - 1], points[p].ip, points[p].callee,
					 &frames[depth], RESOLVER_MAX_FRAMES - depth);
		memset(&kinds[depth], FRAME_SPLICED, spliced);
		depth += spliced;
	}
	if (r->nsources)
		stack_end(r, pid, tid, nth);
	if (r->only_spliced)
		depth = only_spliced(frames, kinds, depth);
	if (truncated)
		atomic_fetch_add_explicit(&r->truncated, 1, memory_order_relaxed);
	/* The profile wants the outermost frame first. */
	for (size_t i = 0; i < depth; i++) {
		funcs[depth - 1 - i] = frames[i].func;
		sites[depth - 1 - i] = frames[i].site;
	}
	return depth;
}

size_t resolver_unwind(struct resolver *r, const struct sample_record *rec, uint64_t *ips,
		       size_t max, bool *truncated)
{
	return unwinder_unwind(r->unwinder, rec, ips, max, truncated);
}

size_t resolver_sample_stack(struct resolver *r, const struct sample_record *rec, uint32_t *funcs,
			     uint32_t *sites)
{
	uint64_t ips[UNWIND_MAX_FRAMES];
	bool truncated;
	size_t n = unwinder_unwind(r->unwinder, rec, ips, UNWIND_MAX_FRAMES, &truncated);

	return resolver_stack(r, (pid_t)rec->pid, (pid_t)rec->tid, ips, n, true, truncated, funcs,
			      sites);
}

size_t resolver_kernel_frames(struct resolver *r, const char *frames, size_t len, uint32_t *funcs,
			      size_t depth)
{
	const char *names[BLOCKED_KFRAMES_MAX], *modules[BLOCKED_KFRAMES_MAX];
	const char *at = frames, *end = frames + len;
	size_t n = 0;

	while (n < BLOCKED_KFRAMES_MAX && blocked_next_kframe(&at, end, &names[n], &modules[n]))
		n++;
	while (n-- > 0 && depth < RESOLVER_MAX_FRAMES) {
		char module[BLOCKED_NAME_MAX + 2];
		struct symbol sym;

		if (modules[n])
			snprintf(module, sizeof(module), "[%s]", modules[n]);
		profiles_lock(r->profiles);
		if (symbolizer_kernel_function(r->symbolizer, names[n], modules[n] ? module : NULL, &sym))
			funcs[depth++] = profiles_func(r->profiles, sym.module, sym.function,
						       sym.function_addr, false);
		else
			funcs[depth++] = profiles_func(r->profiles,
						       modules[n] ? module : "[kernel.kallsyms]",
						       names[n], 0, false);
		profiles_unlock(r->profiles);
	}
	return depth;
}

/* --- debug files ------------------------------------------------------------------------------ */

struct naming {
	struct resolver *r;
	struct module *mod;
};

/* A function's name for profile_name_funcs(): the one starting at addr. */
static const char *name_at(void *arg, uint64_t addr, uint64_t *end)
{
	struct naming *n = arg;
	uint64_t start;
	const char *name = module_lookup_range(n->mod, addr, &start, end);

	return name && start == addr ? name : NULL;
}

static void module_named(void *arg, const char *module, struct module *mod)
{
	struct naming n = { arg, mod };

	profiles_lock(n.r->profiles);
	profiles_name_funcs(n.r->profiles, module, module_path(mod), name_at, &n);
	profiles_unlock(n.r->profiles);
}

/* A module of the symbolizer lacks symbols or DWARF (handoff_want()). */
static void want_debug_file(void *arg, const unsigned char *build_id, size_t len,
			    const char *module)
{
	struct resolver *r = arg;

	handoff_want(r->handoff, build_id, len, module, &r->fetched_applied);
}

void resolver_use_handoff(struct resolver *r, struct handoff *h)
{
	r->handoff = h;
	symbolizer_want_debug_files(r->symbolizer, h ? want_debug_file : NULL, h ? r : NULL);
}

void resolver_take_debug_files(struct resolver *r, bool when_waiting)
{
	const struct fetched *f;

	if (!r->handoff || (when_waiting && !handoff_waiting(r->handoff, r->fetched_applied)))
		return;
	while ((f = handoff_next(r->handoff, &r->fetched_applied))) {
		char *why = NULL;

		/* (every worker reports and names: the channel says a text once, and naming
		 * what is named already changes nothing) */
		if (symbolizer_add_debug_file(r->symbolizer, f->build_id, f->build_id_len, f->path,
					      &why, module_named, r)) {
			forget_frames(r);
			r->module_frames_generation++;
			diag_report(r->diag, DIAG_INFO, "debuginfod sent the debug file of %s: its "
				    "functions and lines are named", f->name);
		} else if (why) {
			diag_report(r->diag, DIAG_WARNING, "debuginfod sent for %s: %s; not used",
				    f->name, why);
		}
		free(why);
	}
}
