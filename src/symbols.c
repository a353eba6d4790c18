/* symbols.c — from a sampled address in some process to "function in module".
 *
 * Three tables, all owned by the symbolizer:
 *
 *   maps     pid -> sorted mappings (maps.c). A mapping's cookie caches its module's entry, so the
 *            common resolve is two binary searches and no hashing.
 *   modules  one entry per mapped file, keyed by (device, inode) or by path when the inode is
 *            unknown; one per special mapping name ("[heap]", "[anon]"); one per distinct vdso
 *            image (keyed by a hash of its bytes, as 32- and 64-bit processes see different ones).
 *            Each holds a struct module (module.c), loaded once, the first time an address needs
 *            it, and freed only by symbolizer_free(). Every module name and function name the
 *            symbolizer returns lives in a module or in `strings`, which is what keeps them valid
 *            and at the same address for the symbolizer's lifetime.
 *   jits     pid -> perf map (perfmap.c), sorted by pid, for pids that had an address no ELF
 *            file explains: one in no mapping, in anonymous memory, or in a mapping without ELF
 *            data ("[heap]", a memfd a JIT maps twice).
 *
 * Perf maps are the processes' to write, and under -a any user's process is one: reading them
 * must not take the worker's time from unwinding samples. So all of them together get at most
 * JIT_SHARE of the worker's time: a budget (`jit_credit_ns`) that time refills at that rate, up
 * to JIT_SLICE_NS, which is the deadline a refresh gets and is charged for what it took. A
 * refresh that is due while the budget is spent waits (the map keeps what it has) until time
 * refilled it. A map that stays behind its file for JIT_BEHIND_NS is reported once.
 *
 * Names that come late. A JIT may write its map after its code ran: Java's -XX:+DumpPerfMapAtExit
 * as it ends, `jcmd PID Compiler.perfmap` when asked. An address the map did not name is handed
 * back with jit_addr, and when the map changes later the owner (symbolizer_jit_ops) is told, to
 * name what it kept of such addresses. A process gone keeps its map until a last look at it (on
 * the budget, when an address still waits for a name: symbolizer_settle_jits()), and the end of
 * the run looks at every such map once more (symbolizer_jit_final(): a tenth of the run).
 *
 * Address translation. A file mapping [start, end) maps file offset pgoff at start, so addr is at
 * file offset off = addr - start + pgoff, which the module turns into a link-time address through
 * its PT_LOAD segments. That one rule covers PIE and non-PIE executables and shared libraries
 * alike; special mappings (vdso included) use off = addr - start.
 *
 * What the user should know goes to the diagnostics channel, once per condition: a file whose
 * functions will show as module+0xoffset (unopenable, not ELF, stripped), a perf map refused or
 * past its limits.
 * Nothing is reported, or formatted, per sample.
 *
 * A cached module is trusted for as long as the symbolizer lives: a file deleted and its inode
 * reused for another ELF file while proftop runs would be misnamed.
 *
 * The DWARF a module opens for source lines is what a module holds most of (tens of MB for a
 * large library or an inflated debug file), and is needed only while new addresses come:
 * symbolizer_trim_sources(), called at a steady pace (once a second), closes the DWARF of modules
 * left unread for a while, the longest unread first, while the sum is over the budget. A while
 * is 8 calls, doubling with each time the module was closed (at most 64): a libc opened for the
 * first frames of a program is not reopened for its exit's a few seconds later, and one asked
 * about now and then is reopened less and less often. Past that, the answers modules keep are
 * dropped, the longest unread first. */
#include "proftop/symbols.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "proftop/debugfile.h"
#include "proftop/diag.h"
#include "proftop/kallsyms.h"
#include "proftop/maps.h"
#include "proftop/module.h"
#include "proftop/perfmap.h"
#include "proftop/strpool.h"
#include "proftop/util.h"

/* Larger "vdso" mappings are not a vdso; do not read them. */
#define VDSO_MAX		(1u << 20)
/* Addresses from here up are the kernel's: no JIT map describes them. */
#define KERNEL_START		(1ull << 63)
/* Reading perf maps takes at most 1/JIT_SHARE of a worker's time, and one look at one at most
 * JIT_SLICE_NS (plus a chunk and a merge: perfmap.h). */
#define JIT_SHARE		10
#define JIT_SLICE_NS		(10 * 1000 * 1000ll)
/* A map this long behind its file is worth a word to the user. */
#define JIT_BEHIND_NS		(2 * 1000 * 1000 * 1000ull)
/* The last look at the end of the run takes at most 1/JIT_SHARE of the run, within these. */
#define JIT_FINAL_MIN_NS	JIT_SLICE_NS
#define JIT_FINAL_MAX_NS	(1000 * 1000 * 1000ll)

enum symbolizer_kind {
	SYMBOLIZER_FILE,	/* a mapped file, ELF or not */
	SYMBOLIZER_SPECIAL,	/* "[vdso]", "[heap]", "[stack]", ...: no file behind it */
	SYMBOLIZER_ANON,	/* anonymous memory: "[anon]", "[anon:name]" */
};

struct symbolizer_key {
	enum symbolizer_kind kind;
	uint64_t dev;
	uint64_t ino;		/* FILE: 0 when unknown (then path is the key); vdso: image hash */
	const char *path;	/* interned in symbolizer->strings, so compared by pointer */
};

/* A module in the cache; mappings' cookies point here. */
struct symbolizer_entry {
	struct symbolizer_entry *next;	/* hash chain */
	uint64_t hash;
	struct symbolizer_key key;
	struct module *mod;
	uint64_t reads_seen;	/* module_source_reads() at the last trim */
	uint32_t idle;		/* trims since its DWARF was last read */
	uint32_t closes;	/* times its DWARF was closed for memory */
};

struct symbolizer_jit {
	pid_t pid;
	struct perfmap *map;
	int reported;		/* the last refresh error seen (0: none yet) */
	bool told_skipped;	/* the user knows the map went past its limits */
	bool told_cut;		/* ... and had names cut */
	bool told_behind;	/* ... and that it is read more slowly than it grows */
	bool missed;		/* an address of pid found no name in the map */
	bool gone;		/* the process ended: its last look is still to take */
	uint64_t changes;	/* perfmap_changes() when the owner was last told */
};

struct symbolizer {
	struct maps *maps;
	struct symbolizer_entry **modules;	/* hash buckets */
	size_t nbuckets;		/* a power of two */
	size_t nmodules;
	struct strpool *strings;	/* module keys, JIT names */
	const char *jit_module;		/* "[jit]", interned */
	const char *vdso_name;		/* "[vdso]", interned */
	struct symbolizer_jit *jits;	/* sorted by pid */
	size_t njits, jits_cap;
	int64_t jit_credit_ns;		/* what reading perf maps may still take; may go below 0 */
	uint64_t jit_credit_at;		/* when it was last refilled */
	uint64_t born_ns;		/* when the symbolizer was made: the run's start */
	const struct symbolizer_jit_ops *jit_ops;	/* NULL: no one is told */
	void *jit_arg;
	bool elf_ok;			/* libelf accepted our version */
	struct diag *diag;		/* NULL: reports dropped */
	struct kallsyms *kernel;	/* read at the first kernel address */
	bool kernel_tried;
	symbolizer_want_fn *want_debug;	/* told of modules a fetched debug file would help */
	void *want_arg;
};

/* ---- the DWARF's memory -------------------------------------------------------------------- */

/* A module closed k times must be unread for 2^(k + 3) calls, at most 2^6. */
#define SYMBOLIZER_IDLE_SHIFT 3
#define SYMBOLIZER_IDLE_SHIFT_MAX 6

/* Longest unread first. */
static int symbolizer_idle_cmp(const void *a, const void *b)
{
	const struct symbolizer_entry *x = *(const struct symbolizer_entry *const *)a;
	const struct symbolizer_entry *y = *(const struct symbolizer_entry *const *)b;

	return (x->idle < y->idle) - (x->idle > y->idle);
}

/* Every module's reads since the last call (the file pages they read given back), and the bytes
 * their DWARF holds; the entries unread since, into idle[] (room for nmodules). */
static size_t symbolizer_sources_held(struct symbolizer *s, struct symbolizer_entry **idle,
				      size_t *nidle)
{
	size_t held = 0;

	*nidle = 0;
	for (size_t i = 0; i < s->nbuckets; i++)
		for (struct symbolizer_entry *e = s->modules[i]; e; e = e->next) {
			uint64_t reads = module_source_reads(e->mod);

			if (reads != e->reads_seen) {
				e->reads_seen = reads;
				e->idle = 0;
				module_source_drop_pages(e->mod);
			} else if (e->idle < UINT32_MAX) {
				e->idle++;
				idle[(*nidle)++] = e;
			}
			held += module_source_memory(e->mod);
		}
	return held;
}

size_t symbolizer_trim_sources(struct symbolizer *s, size_t budget, uint64_t *closed)
{
	struct symbolizer_entry **idle = xmalloc((s->nmodules + 1) * sizeof(*idle));
	size_t nidle, held = symbolizer_sources_held(s, idle, &nidle);

	qsort(idle, nidle, sizeof(*idle), symbolizer_idle_cmp);
	for (size_t i = 0; budget && held > budget && i < nidle; i++) {
		struct symbolizer_entry *e = idle[i];
		size_t before = module_source_memory(e->mod);
		uint32_t shift = e->closes + SYMBOLIZER_IDLE_SHIFT;

		if (shift > SYMBOLIZER_IDLE_SHIFT_MAX)
			shift = SYMBOLIZER_IDLE_SHIFT_MAX;
		if (e->idle < (1u << shift) || !module_source_close(e->mod))
			continue;
		e->closes++;
		(*closed)++;
		held -= before - module_source_memory(e->mod);
	}
	/* Answers are dropped only where the DWARF is closed: one spared for now answers from it
	 * anyway. */
	for (size_t i = 0; budget && held > budget && i < nidle; i++) {
		size_t before = module_source_memory(idle[i]->mod);

		if (module_source_open(idle[i]->mod))
			continue;
		module_source_forget(idle[i]->mod);
		held -= before - module_source_memory(idle[i]->mod);
	}
	free(idle);
	return held;
}

/* ---- the files behind mappings ------------------------------------------------------------ */

/* " (deleted)" is the kernel's note, not part of the name. */
static size_t symbolizer_path_len(const char *path)
{
	static const char deleted[] = " (deleted)";
	size_t len = strlen(path), dlen = sizeof(deleted) - 1;

	if (len > dlen && !strcmp(path + len - dlen, deleted))
		return len - dlen;
	return len;
}

/* Open the file m maps: through map_files (the very file mapped, even when deleted or replaced
 * since), else inside the process's root (another mount namespace), else by its path. A file
 * that is not the mapped inode is not it. Returns the fd, or the last attempt's -errno (-ESTALE
 * when a file was there but not the mapped one). */
static int symbolizer_open(pid_t pid, const struct mapping *m, size_t path_len, struct stat *st)
{
	char path[PATH_MAX + 64];
	int fd, n, err = -ENOENT;
	bool stale = false;

	for (int i = 0; i < 3; i++) {
		if (i == 0)
			n = snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64,
				     (int)pid, m->start, m->end);
		else if (i == 1)
			n = snprintf(path, sizeof(path), "/proc/%d/root%.*s", (int)pid,
				     (int)path_len, m->path);
		else
			n = snprintf(path, sizeof(path), "%.*s", (int)path_len, m->path);
		if (n < 0 || (size_t)n >= sizeof(path))
			continue;
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0) {
			err = -errno;
			continue;
		}
		if (!fstat(fd, st) && S_ISREG(st->st_mode) && (!m->ino || st->st_ino == m->ino))
			return fd;
		stale = true;
		close(fd);
	}
	return stale ? -ESTALE : err;
}

/* Load mod from the file m maps, which is also where its debug file is looked for. */
static int symbolizer_load_file(struct module *mod, pid_t pid, const struct mapping *m)
{
	struct debugfile_origin origin = { .pid = pid, .path = m->path };
	struct stat st;
	int fd, err;

	origin.path_len = symbolizer_path_len(m->path);
	fd = symbolizer_open(pid, m, origin.path_len, &st);
	if (fd < 0)
		return fd;
	origin.dev = st.st_dev;
	origin.ino = st.st_ino;
	err = module_load_file(mod, fd, (size_t)st.st_size, &origin);
	close(fd);
	return err;
}

/* The vdso is a real ELF image the kernel maps into every process; read it from the process. */
static int symbolizer_read_vdso(pid_t pid, const struct mapping *m, void **image, size_t *size)
{
	char path[64];
	ssize_t r;
	int fd, err = 0;

	*image = NULL;
	*size = m->end - m->start;
	if (*size > VDSO_MAX)
		return -EFBIG;
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	*image = xmalloc(*size);
	r = pread(fd, *image, *size, (off_t)m->start);
	if (r != (ssize_t)*size) {
		err = r < 0 ? -errno : -EIO;
		free(*image);
		*image = NULL;
	}
	close(fd);
	return err;
}

/* ---- the module cache --------------------------------------------------------------------- */

static uint64_t symbolizer_key_hash(const struct symbolizer_key *key)
{
	uint64_t h = util_hash_u64(key->dev * 31 + (uint64_t)key->kind);

	h = util_hash_u64(h ^ key->ino);
	return util_hash_u64(h ^ (uint64_t)(uintptr_t)key->path);
}

static struct symbolizer_entry *symbolizer_find_entry(struct symbolizer *s,
						      const struct symbolizer_key *key, uint64_t hash)
{
	struct symbolizer_entry *e = s->modules[hash & (s->nbuckets - 1)];

	for (; e; e = e->next)
		if (e->hash == hash && e->key.kind == key->kind && e->key.dev == key->dev &&
		    e->key.ino == key->ino && e->key.path == key->path)
			return e;
	return NULL;
}

static void symbolizer_rehash(struct symbolizer *s)
{
	struct symbolizer_entry **old = s->modules, *e, *next;
	size_t nold = s->nbuckets;

	s->nbuckets *= 2;
	s->modules = xcalloc(s->nbuckets, sizeof(*s->modules));
	for (size_t i = 0; i < nold; i++) {
		for (e = old[i]; e; e = next) {
			next = e->next;
			e->next = s->modules[e->hash & (s->nbuckets - 1)];
			s->modules[e->hash & (s->nbuckets - 1)] = e;
		}
	}
	free(old);
}

/* A new entry for mod under key (not in the cache yet). */
static struct symbolizer_entry *symbolizer_add(struct symbolizer *s,
					       const struct symbolizer_key *key, uint64_t hash,
					       struct module *mod)
{
	struct symbolizer_entry *e = xcalloc(1, sizeof(*e)), **bucket;

	if (s->nmodules >= s->nbuckets)
		symbolizer_rehash(s);
	e->key = *key;
	e->hash = hash;
	e->mod = mod;
	bucket = &s->modules[hash & (s->nbuckets - 1)];
	e->next = *bucket;
	*bucket = e;
	s->nmodules++;
	return e;
}

/* Anonymous memory under its many names: perf's "//anon", a private /dev/zero, hugetlb, and the
 * "[anon:name]" of prctl(PR_SET_VMA_ANON_NAME). */
static bool symbolizer_is_anon(const char *path)
{
	return !*path || !strcmp(path, "//anon") || !strncmp(path, "[anon:", 6) ||
	       !strncmp(path, "/dev/zero", 9) || !strncmp(path, "/anon_hugepage", 14);
}

/* The module's key, and the name a new module would get (name[0..len), in m->path or static). */
static void symbolizer_classify(struct symbolizer *s, const struct mapping *m,
				struct symbolizer_key *key, const char **name, size_t *len)
{
	const char *path = m->path ? m->path : "";
	const char *base;

	memset(key, 0, sizeof(*key));
	/* Anonymous memory under any of its names is one "[anon]" (or its own "[anon:name]"). */
	if (symbolizer_is_anon(path) || path[0] == '[') {
		key->kind = symbolizer_is_anon(path) ? SYMBOLIZER_ANON : SYMBOLIZER_SPECIAL;
		if (path[0] != '[')
			path = "[anon]";
		key->path = strpool_intern(s->strings, path, strlen(path));
		*name = path;
		*len = strlen(path);
		return;
	}
	key->kind = SYMBOLIZER_FILE;
	if (m->ino) {
		key->dev = makedev(m->maj, m->min);
		key->ino = m->ino;
	} else {
		key->path = strpool_intern(s->strings, path, strlen(path));
	}
	*len = symbolizer_path_len(path);
	base = memrchr(path, '/', *len);
	*name = base ? base + 1 : path;
	*len -= (size_t)(*name - path);
}

/* Once per module, as it is loaded: why its functions will show as module+0xoffset. Only for
 * code (a data file hit by a stray address is no news), and not for a memfd, whose code a JIT
 * names in its perf map if anywhere. */
static void symbolizer_warn_module(struct symbolizer *s, const struct mapping *m,
				   const struct module *mod, int err, bool asked)
{
	const char *why;

	if (!(m->prot & PROT_EXEC) || !strncmp(m->path, "/memfd:", 7))
		return;
	if (err == -ENOEXEC)
		why = "no ELF data proftop can read";
	else if (err == -ESTALE)
		why = "the file at that path is not the one mapped";
	else if (err)
		why = strerror(-err);
	else if (!module_function_count(mod) && module_damage(mod))
		why = module_damage(mod);
	else if (!module_function_count(mod) && module_debugfile_rejected(mod))
		why = module_debugfile_rejected(mod);
	else if (!module_function_count(mod))
		why = "no function symbols in it or in a debug file";
	else
		return;
	diag_report(s->diag, DIAG_WARNING, "no symbols for %.*s: %s; its functions show as %s+0x...%s",
		    (int)symbolizer_path_len(m->path), m->path, why, module_name(mod),
		    asked ? " until debuginfod sends its debug file" : "");
}

/* The vdso's module: the image decides which (its hash is the key), read once per mapping. */
static struct symbolizer_entry *symbolizer_vdso(struct symbolizer *s, pid_t pid,
						const struct mapping *m)
{
	struct symbolizer_key key = { .kind = SYMBOLIZER_SPECIAL, .path = s->vdso_name };
	struct symbolizer_entry *e;
	struct module *mod;
	void *image = NULL;
	size_t size = 0;
	uint64_t hash;
	int err = s->elf_ok ? symbolizer_read_vdso(pid, m, &image, &size) : 0;

	if (image)
		key.ino = util_hash_bytes(image, size, 0) | 1;
	hash = symbolizer_key_hash(&key);
	e = symbolizer_find_entry(s, &key, hash);
	if (e) {
		free(image);
		return e;
	}
	mod = module_new("[vdso]", 6);
	if (image)
		module_load_image(mod, image, size);
	else if (err)
		diag_report(s->diag, DIAG_WARNING, "no symbols for [vdso]: cannot read it from "
			    "/proc/%d/mem: %s", (int)pid, strerror(-err));
	return symbolizer_add(s, &key, hash, mod);
}

/* The module m maps, loaded on first use. */
static struct symbolizer_entry *symbolizer_module(struct symbolizer *s, pid_t pid,
						  const struct mapping *m)
{
	struct symbolizer_key key;
	struct symbolizer_entry *e;
	struct module *mod;
	const char *name;
	uint64_t hash;
	size_t len;

	if (m->path && !strcmp(m->path, "[vdso]"))
		return symbolizer_vdso(s, pid, m);
	symbolizer_classify(s, m, &key, &name, &len);
	hash = symbolizer_key_hash(&key);
	e = symbolizer_find_entry(s, &key, hash);
	if (e)
		return e;
	mod = module_new(name, len);
	if (key.kind == SYMBOLIZER_FILE && s->elf_ok) {
		int err = symbolizer_load_file(mod, pid, m);
		const unsigned char *id;
		bool asked = false;
		size_t id_len;

		if (!err && s->want_debug && module_wants_debug_file(mod, &id, &id_len)) {
			s->want_debug(s->want_arg, id, id_len, module_name(mod));
			asked = true;
		}
		symbolizer_warn_module(s, m, mod, err, asked);
	}
	return symbolizer_add(s, &key, hash, mod);
}

/* ---- JIT maps ----------------------------------------------------------------------------- */

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
static struct symbolizer_jit *symbolizer_find_jit(const struct symbolizer *s, pid_t pid)
{
	size_t i = symbolizer_jit_search(s, pid);

	return i < s->njits && s->jits[i].pid == pid ? &s->jits[i] : NULL;
}

/* Forget pid's map, and tell the owner that nothing more of pid will be named. */
static void symbolizer_drop_jit(struct symbolizer *s, pid_t pid)
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

/* Look at jit's perf map until deadline (a refresh that is due), and tell the owner when what it
 * names changed since an address found no name there; both charged to the budget. Returns
 * whether the look is complete: the map was read to the end of its file, or cannot be read (none
 * was written, say); not when the deadline stopped it first. */
static bool symbolizer_look_jit(struct symbolizer *s, struct symbolizer_jit *jit, uint64_t now,
				uint64_t deadline)
{
	int err = perfmap_refresh(jit->map, jit->pid, now, deadline);

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
static void symbolizer_settle_jit(struct symbolizer *s, struct symbolizer_jit *jit)
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
static void symbolizer_resolve_jit(struct symbolizer *s, pid_t pid, uint64_t addr,
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

/* ---- the facade --------------------------------------------------------------------------- */

struct symbolizer *symbolizer_new(struct diag *diag)
{
	struct symbolizer *s = xcalloc(1, sizeof(*s));

	s->maps = maps_new();
	s->nbuckets = 64;
	s->modules = xcalloc(s->nbuckets, sizeof(*s->modules));
	s->strings = strpool_new();
	s->jit_module = strpool_intern(s->strings, "[jit]", 5);
	s->vdso_name = strpool_intern(s->strings, "[vdso]", 6);
	s->diag = diag;
	s->jit_credit_ns = JIT_SLICE_NS;
	s->jit_credit_at = s->born_ns = util_now_ns();
	s->elf_ok = module_init() == 0;
	if (!s->elf_ok)
		diag_report(diag, DIAG_WARNING, "libelf refuses this ELF version: no symbols");
	return s;
}

void symbolizer_free(struct symbolizer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nbuckets; i++) {
		struct symbolizer_entry *e = s->modules[i], *next;

		for (; e; e = next) {
			next = e->next;
			module_free(e->mod);
			free(e);
		}
	}
	for (size_t i = 0; i < s->njits; i++)
		perfmap_free(s->jits[i].map);
	free(s->jits);
	free(s->modules);
	kallsyms_free(s->kernel);
	maps_free(s->maps);
	strpool_free(s->strings);
	free(s);
}

void symbolizer_want_debug_files(struct symbolizer *s, symbolizer_want_fn *fn, void *arg)
{
	s->want_debug = fn;
	s->want_arg = arg;
}

size_t symbolizer_add_debug_file(struct symbolizer *s, const unsigned char *build_id, size_t len,
				 const char *path, char **why, symbolizer_named_fn *named, void *arg)
{
	size_t took = 0;

	*why = NULL;
	for (size_t i = 0; i < s->nbuckets; i++)
		for (struct symbolizer_entry *e = s->modules[i]; e; e = e->next) {
			const unsigned char *id;
			size_t id_len;
			bool gained;
			char *refused;

			/* The build-id first: asking whether a module wants a file looks for one
			 * on disk. */
			id = module_build_id(e->mod, &id_len);
			if (e->key.kind != SYMBOLIZER_FILE || id_len != len || memcmp(id, build_id, len) ||
			    !module_wants_debug_file(e->mod, &id, &id_len))
				continue;
			if (module_add_debug_file(e->mod, path, &gained, &refused)) {
				if (!*why)
					*why = refused;
				else
					free(refused);
				continue;
			}
			took++;
			if (gained && named)
				named(arg, module_name(e->mod), e->mod);
		}
	return took;
}

int symbolizer_load_proc(struct symbolizer *s, pid_t pid)
{
	return maps_load_proc(s->maps, pid, util_now_ns());
}

void symbolizer_mmap(struct symbolizer *s, pid_t pid, uint64_t start, uint64_t len,
		     uint64_t pgoff, uint32_t maj, uint32_t min, uint64_t ino, uint32_t prot,
		     const char *path)
{
	struct mapping m = {
		.start = start,
		.end = start + len < start ? UINT64_MAX : start + len,
		.pgoff = pgoff,
		.ino = ino,
		.maj = maj,
		.min = min,
		.prot = prot,
		.path = path ? path : "",
	};

	maps_insert(s->maps, pid, &m);
}

void symbolizer_fork(struct symbolizer *s, pid_t parent, pid_t child)
{
	maps_fork(s->maps, parent, child);
}

void symbolizer_exec(struct symbolizer *s, pid_t pid)
{
	maps_exec(s->maps, pid);
	symbolizer_drop_jit(s, pid);
}

void symbolizer_exit(struct symbolizer *s, pid_t pid)
{
	struct symbolizer_jit *jit = symbolizer_find_jit(s, pid);

	maps_exit(s->maps, pid);
	if (!jit)
		return;
	jit->gone = true;
	symbolizer_settle_jit(s, jit);
}

/* The mapping of pid holding addr (reading /proc/PID/maps again first when none does and that
 * is due), with its module's entry in *e, loaded on first use. NULL when no mapping holds addr. */
static struct mapping *symbolizer_find(struct symbolizer *s, pid_t pid, uint64_t addr,
				       struct symbolizer_entry **e)
{
	struct mapping *m = maps_find(s->maps, pid, addr);
	uint64_t now;

	if (!m) {
		now = util_now_ns();
		if (pid <= 0 || !maps_reload_due(s->maps, pid, now))
			return NULL;
		maps_load_proc(s->maps, pid, now);
		m = maps_find(s->maps, pid, addr);
		if (!m)
			return NULL;
	}
	if (!m->cookie)
		m->cookie = symbolizer_module(s, pid, m);
	*e = m->cookie;
	return m;
}

/* addr (in m) in the module's own address space: a link-time address when it has segments. */
static uint64_t symbolizer_module_addr(const struct symbolizer_entry *e, const struct mapping *m,
				       uint64_t addr)
{
	uint64_t off = addr - m->start;

	if (e->key.kind == SYMBOLIZER_FILE)
		off += m->pgoff;
	return module_translate(e->mod, off);
}

/* /proc/kallsyms, read at the first kernel frame, once; NULL when it cannot be read. */
static struct kallsyms *kernel_symbols(struct symbolizer *s)
{
	if (!s->kernel_tried) {
		char *why;

		s->kernel_tried = true;
		s->kernel = kallsyms_load(NULL, &why);
		if (!s->kernel)
			diag_report(s->diag, DIAG_WARNING, "%s", why);
		free(why);
	}
	return s->kernel;
}

/* A kernel frame (--kernel): named from /proc/kallsyms, read once, when it can be. */
static void symbolizer_resolve_kernel(struct symbolizer *s, uint64_t addr, struct symbol *out)
{
	uint64_t start;
	const char *module, *name;

	name = kernel_symbols(s) ? kallsyms_lookup(s->kernel, addr, &start, &module) : NULL;
	if (!name)
		return;
	out->function = name;
	out->function_addr = start;
	out->module = module;
}

bool symbolizer_kernel_function(struct symbolizer *s, const char *name, const char *module,
				struct symbol *out)
{
	uint64_t start;
	const char *found, *found_module;

	if (!kernel_symbols(s) ||
	    !(found = kallsyms_find(s->kernel, name, module, &start, &found_module)))
		return false;
	memset(out, 0, sizeof(*out));
	out->function = found;
	out->function_addr = start;
	out->module_addr = start;
	out->module = found_module;
	return true;
}

void symbolizer_resolve(struct symbolizer *s, pid_t pid, uint64_t addr, struct symbol *out)
{
	struct symbolizer_entry *e;
	struct mapping *m = symbolizer_find(s, pid, addr, &e);

	out->function = NULL;
	out->function_addr = 0;
	out->module = NULL;
	out->module_addr = addr;
	out->elf = NULL;
	out->bounded = false;
	out->function_end = 0;
	out->jit_addr = 0;
	if (!m && addr >= KALLSYMS_KERNEL_START) {
		symbolizer_resolve_kernel(s, addr, out);
		return;
	}
	if (!m) {
		symbolizer_resolve_jit(s, pid, addr, out);
		return;
	}
	out->module = module_name(e->mod);
	out->module_addr = symbolizer_module_addr(e, m, addr);
	out->function = module_lookup_range(e->mod, out->module_addr, &out->function_addr,
					    &out->function_end);
	if (module_is_elf(e->mod))
		out->elf = e->mod;
	if (!out->function && module_is_elf(e->mod))
		out->bounded = module_fde_bounds(e->mod, out->module_addr, &out->function_addr);
	/* Only ELF files have symbols; anything else may be JIT code (anonymous memory, or a
	 * memfd a JIT maps twice). */
	if (!out->function && !module_is_elf(e->mod))
		symbolizer_resolve_jit(s, pid, addr, out);
}

int symbolizer_unwind_info(struct symbolizer *s, pid_t pid, uint64_t addr, struct unwind_info *out)
{
	struct symbolizer_entry *e;
	struct mapping *m = symbolizer_find(s, pid, addr, &e);
	const struct module_unwind *uw = m ? module_unwind(e->mod) : NULL;
	uint64_t bias;

	if (!uw)
		return -ENOENT;
	bias = addr - symbolizer_module_addr(e, m, addr);
	*out = (struct unwind_info){
		.bias = bias,
		.code_start = uw->code_start + bias,
		.code_end = uw->code_end + bias,
		.eh_frame_hdr = uw->eh_frame_hdr ? uw->eh_frame_hdr + bias : 0,
		.eh_frame_hdr_size = uw->eh_frame_hdr_size,
		.debug_frame = uw->debug_frame,
		.debug_frame_size = uw->debug_frame_size,
		.module = e->mod,
	};
	return 0;
}

bool symbolizer_jit_code(struct symbolizer *s, pid_t pid, uint64_t addr)
{
	struct symbolizer_entry *e;
	struct mapping *m = symbolizer_find(s, pid, addr, &e);

	return m && (m->prot & PROT_EXEC) && !module_unwind(e->mod);
}

int symbolizer_read_module(const struct unwind_info *info, uint64_t addr, void *buf, size_t len)
{
	return module_read(info->module, addr - info->bias, buf, len);
}
