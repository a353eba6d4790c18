/* symbols_jit.c — the symbolizer's JIT maps (symbols.c says how they are read and paid for):
 * pid -> perf map, refreshed on a budget of the worker's time, and the names that come late. */
#include "proftop/symbols_internal.h"

#include "proftop/diag.h"
#include "proftop/maps.h"
#include "proftop/perfmap.h"
#include "proftop/strpool.h"
#include "proftop/util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Index of pid in s->jits, or where it would go. */
static size_t symbolizer_jit_search(const struct symbolizer *s, pid_t pid)
{
	size_t lo = 0, hi = s->njits;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->jits[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct symbolizer_jit *symbolizer_jit(struct symbolizer *s, pid_t pid)
{
	size_t i = symbolizer_jit_search(s, pid);

	if (i < s->njits && s->jits[i].pid == pid)
		return &s->jits[i];
	xgrow((void **)&s->jits, &s->jits_cap, s->njits + 1, sizeof(*s->jits));
	memmove(&s->jits[i + 1], &s->jits[i], (s->njits - i) * sizeof(*s->jits));
	s->jits[i] = (struct symbolizer_jit){ .pid = pid, .map = perfmap_new(s->strings) };
	s->njits++;
	return &s->jits[i];
}

/* pid's map, or NULL (none is made). */
struct symbolizer_jit *symbolizer_find_jit(const struct symbolizer *s, pid_t pid)
{
	size_t i = symbolizer_jit_search(s, pid);

	return i < s->njits && s->jits[i].pid == pid ? &s->jits[i] : NULL;
}

/* Forget pid's map, and tell the owner that nothing more of pid will be named. */
void symbolizer_drop_jit(struct symbolizer *s, pid_t pid)
{
	size_t i = symbolizer_jit_search(s, pid);

	if (i == s->njits || s->jits[i].pid != pid)
		return;
	if (s->jit_ops && s->jits[i].missed)
		s->jit_ops->forget(s->jit_arg, pid);
	perfmap_free(s->jits[i].map);
	memmove(&s->jits[i], &s->jits[i + 1], (s->njits - i - 1) * sizeof(*s->jits));
	s->njits--;
}

/* A perf map that is there but not used. Most processes have none (-ENOENT): no news. A refresh
 * fails again every PERFMAP_RECHECK_NS while the file stays as it is (and returns 0 in between):
 * the text is made only when the error changes. */
static void symbolizer_warn_jit(struct symbolizer *s, struct symbolizer_jit *jit, int err)
{
	if (!err || err == jit->reported)
		return;
	jit->reported = err;
	if (err == -EPERM)
		diag_report(s->diag, DIAG_WARNING, "JIT symbols of pid %d ignored: %s is not owned "
			    "by the process's user", (int)jit->pid, perfmap_path(jit->map));
	else if (err != -ENOENT)
		diag_report(s->diag, DIAG_WARNING, "JIT symbols of pid %d ignored: cannot read %s: %s",
			    (int)jit->pid, perfmap_path(jit->map), strerror(-err));
}

/* A perf map past its limits (perfmap.h), said once per map: more of the same is no news. */
static void symbolizer_warn_jit_limits(struct symbolizer *s, struct symbolizer_jit *jit)
{
	if (!jit->told_skipped && perfmap_skipped(jit->map)) {
		jit->told_skipped = true;
		diag_report(s->diag, DIAG_WARNING, "JIT symbols of pid %d: %s is past proftop's "
			    "limit of %u functions and %u MiB of names per map: lines past it are "
			    "skipped (%zu so far)", (int)jit->pid, perfmap_path(jit->map),
			    PERFMAP_ENTRIES_MAX, PERFMAP_NAMES_MAX >> 20, perfmap_skipped(jit->map));
	}
	if (!jit->told_cut && perfmap_cut_names(jit->map)) {
		jit->told_cut = true;
		diag_report(s->diag, DIAG_WARNING, "JIT symbols of pid %d: %s has names longer than "
			    "%u bytes: they are cut there (%zu so far)", (int)jit->pid,
			    perfmap_path(jit->map), PERFMAP_NAME_MAX, perfmap_cut_names(jit->map));
	}
}

/* A perf map read more slowly than it grows, said once per map: its newest functions show
 * unnamed (anonymous memory) until proftop catches up, if it ever does. */
static void symbolizer_warn_jit_behind(struct symbolizer *s, struct symbolizer_jit *jit,
				       uint64_t now)
{
	uint64_t since = perfmap_behind_since(jit->map);

	if (jit->told_behind || !since || now - since < JIT_BEHIND_NS)
		return;
	jit->told_behind = true;
	diag_report(s->diag, DIAG_WARNING, "JIT symbols of pid %d: %s holds more than proftop "
		    "reads of it (%lld ms of every %lld, for all perf maps): functions it names past "
		    "what was read show unnamed until then", (int)jit->pid, perfmap_path(jit->map),
		    JIT_SLICE_NS / 1000000, JIT_SLICE_NS * JIT_SHARE / 1000000);
}

/* The deadline for a refresh at now: now plus what is left of the budget, refilled first. 0
 * when the budget is spent. */
static uint64_t symbolizer_jit_deadline(struct symbolizer *s, uint64_t now)
{
	uint64_t earned = (now - s->jit_credit_at) / JIT_SHARE;

	s->jit_credit_at = now;
	if (earned > (uint64_t)JIT_SLICE_NS)
		earned = JIT_SLICE_NS;
	s->jit_credit_ns += (int64_t)earned;
	if (s->jit_credit_ns > JIT_SLICE_NS)
		s->jit_credit_ns = JIT_SLICE_NS;
	return s->jit_credit_ns > 0 ? now + (uint64_t)s->jit_credit_ns : 0;
}

/* A jitdump the process mapped (V8's --perf-prof, in its working directory), from its mappings
 * as the symbolizer knows them, until the map has one. */
static void offer_mapped_dump(struct symbolizer *s, struct symbolizer_jit *jit)
{
	const struct mapping *m;
	size_t n;

	if (!perfmap_wants_dump(jit->map) || !(m = maps_list(s->maps, jit->pid, &n)))
		return;
	for (size_t i = 0; i < n; i++)
		if ((m[i].prot & PROT_EXEC) && perfmap_dump_name(m[i].path))
			perfmap_offer_dump(jit->map, m[i].path);
}

/* Look at jit's perf map until deadline (a refresh that is due), and tell the owner when what it
 * names changed since an address found no name there; both charged to the budget. Returns
 * whether the look is complete: the map was read to the end of its file, or cannot be read (none
 * was written, say); not when the deadline stopped it first. */
static bool symbolizer_look_jit(struct symbolizer *s, struct symbolizer_jit *jit, uint64_t now,
				uint64_t deadline)
{
	int err;

	offer_mapped_dump(s, jit);
	err = perfmap_refresh(jit->map, jit->pid, now, deadline);

	symbolizer_warn_jit(s, jit, err);
	symbolizer_warn_jit_limits(s, jit);
	symbolizer_warn_jit_behind(s, jit, now);
	if (s->jit_ops && jit->missed && perfmap_changes(jit->map) != jit->changes) {
		jit->changes = perfmap_changes(jit->map);
		s->jit_ops->named(s->jit_arg, jit->pid);
	}
	s->jit_credit_ns -= (int64_t)(util_now_ns() - now);
	return err || !perfmap_behind_since(jit->map);
}

/* Look at pid's perf map again when that is due and the budget allows, charging the budget. */
static void symbolizer_refresh_jit(struct symbolizer *s, struct symbolizer_jit *jit)
{
	uint64_t now = util_now_ns(), deadline;

	if (!perfmap_due(jit->map, now))
		return;
	deadline = symbolizer_jit_deadline(s, now);
	if (deadline)
		symbolizer_look_jit(s, jit, now, deadline);
}

/* Does an address of jit's process still wait for a name in its map? */
static bool symbolizer_jit_waits(const struct symbolizer *s, const struct symbolizer_jit *jit)
{
	return s->jit_ops && jit->missed && s->jit_ops->waiting(s->jit_arg, jit->pid);
}

/* A process gone: the last look at its map, read to its end, unless nothing waits for a name
 * from it; then the map is dropped. A look the budget does not allow now, or that did not reach
 * the end of the file, waits for the next call. */
void symbolizer_settle_jit(struct symbolizer *s, struct symbolizer_jit *jit)
{
	uint64_t now, deadline;

	if (symbolizer_jit_waits(s, jit)) {
		now = util_now_ns();
		deadline = symbolizer_jit_deadline(s, now);
		if (!deadline)
			return;
		perfmap_expire(jit->map);
		if (!symbolizer_look_jit(s, jit, now, deadline))
			return;
	}
	symbolizer_drop_jit(s, jit->pid);
}

void symbolizer_settle_jits(struct symbolizer *s)
{
	for (size_t i = s->njits; i-- > 0;)
		if (i < s->njits && s->jits[i].gone)
			symbolizer_settle_jit(s, &s->jits[i]);
}

void symbolizer_jit_final(struct symbolizer *s)
{
	uint64_t now = util_now_ns(), deadline;
	int64_t share = (int64_t)((now - s->born_ns) / JIT_SHARE);

	share = share < JIT_FINAL_MIN_NS ? JIT_FINAL_MIN_NS :
		share > JIT_FINAL_MAX_NS ? JIT_FINAL_MAX_NS : share;
	deadline = now + (uint64_t)share;
	for (size_t i = 0; i < s->njits && now < deadline; i++) {
		if (!symbolizer_jit_waits(s, &s->jits[i]))
			continue;
		/* One look reads at most PERFMAP_READ_MAX: a larger file takes more. */
		do {
			perfmap_expire(s->jits[i].map);
		} while (!symbolizer_look_jit(s, &s->jits[i], now, deadline) &&
			 (now = util_now_ns()) < deadline);
		now = util_now_ns();
	}
}

void symbolizer_set_jit_ops(struct symbolizer *s, const struct symbolizer_jit_ops *ops, void *arg)
{
	s->jit_ops = ops;
	s->jit_arg = arg;
}

const char *symbolizer_jit_name(struct symbolizer *s, pid_t pid, uint64_t addr,
				const char **module)
{
	struct symbolizer_jit *jit = symbolizer_find_jit(s, pid);

	*module = s->jit_module;
	return jit ? perfmap_lookup(jit->map, addr) : NULL;
}

/* An address no ELF file explains may be JIT code pid described in its perf map. */
void symbolizer_resolve_jit(struct symbolizer *s, pid_t pid, uint64_t addr,
				   struct symbol *out)
{
	struct symbolizer_jit *jit;
	const char *name;

	if (addr >= KERNEL_START || pid <= 0)
		return;
	jit = symbolizer_jit(s, pid);
	symbolizer_refresh_jit(s, jit);
	name = perfmap_lookup(jit->map, addr);
	if (!name) {
		/* What the map names now is no news to addresses unnamed from here on. */
		if (!jit->missed)
			jit->changes = perfmap_changes(jit->map);
		jit->missed = true;
		out->jit_addr = addr;
		return;
	}
	out->function = name;
	out->module = s->jit_module;
	out->module_addr = addr;
}
