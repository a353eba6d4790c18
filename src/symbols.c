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
#include "proftop/symbols_internal.h"

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
