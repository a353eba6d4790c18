/* test_symbols.c — the symbolizer on real files: this test binary and libc through /proc/self/maps,
 * the vdso, demangling, stripped copies with and without debug files, corrupt ELF files mapped for
 * real, JIT perf maps, PIE and non-PIE programs compiled and run here, a deleted binary, the
 * kernel-record entry points (mmap/fork/exec/exit), and the warnings that reach a real diagnostics
 * channel.
 *
 * Files the tests make live in one temporary directory, removed at the end. Tests that need a
 * tool (objcopy, cc) skip when it is missing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <link.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proftop/debugfile.h"
#include "proftop/diag.h"
#include "proftop/lines.h"
#include "proftop/maps.h"
#include "proftop/module.h"
#include "proftop/symbols.h"

static char tmpdir[64];

/* The functions the tests look for. noinline and distinct bodies so that none is folded into
 * another (-fipa-icf) and each keeps its own symbol. */
__attribute__((noinline)) int test_symbols_target(int x)
{
	return x * 7 + 1;
}

void mangled_cxx(int) __asm__("_ZN7proftop4test7mangledEi");
__attribute__((noinline, used)) void mangled_cxx(int x)
{
	__asm__ volatile("" : : "r"(x));
}

void mangled_rust_legacy(void) __asm__("_ZN7proftop4core5write17h0123456789abcdefE");
__attribute__((noinline, used)) void mangled_rust_legacy(void)
{
	__asm__ volatile("nop; nop");
}

void mangled_rust_v0(void) __asm__("_RNvCs1234_7mycrate3foo");
__attribute__((noinline, used)) void mangled_rust_v0(void)
{
	__asm__ volatile("nop; nop; nop");
}

/* One function under several names: the one reported is chosen by binding, then a leading
 * underscore, then length. */
__attribute__((noinline, used)) int alias_longer_name(int x)
{
	return x * 13 + 5;
}
extern int _alias(int) __attribute__((alias("alias_longer_name")));
extern int alias_weak(int) __attribute__((weak, alias("alias_longer_name")));
static int alias_local(int) __attribute__((alias("alias_longer_name"), used));
extern int alias_short(int) __attribute__((alias("alias_longer_name")));

static uint64_t addr_of(void *p)
{
	return (uint64_t)(uintptr_t)p;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int run(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = system(cmd);
	return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static bool have_tool(const char *tool)
{
	return run("command -v %s >/dev/null 2>&1", tool) == 0;
}

static const char *tmp_path(const char *name)
{
	static char paths[8][256];
	static int next;
	char *p = paths[next++ % 8];

	snprintf(p, sizeof(paths[0]), "%s/%s", tmpdir, name);
	return p;
}

static const char *self_exe(void)
{
	static char path[4096];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);

	assert_true(n > 0);
	path[n] = '\0';
	return path;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* Copy at most limit bytes of src to dst. */
static void copy_file(const char *src, const char *dst, size_t limit)
{
	char buf[65536];
	int in = open(src, O_RDONLY), out = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	size_t total = 0;
	ssize_t n;

	assert_true(in >= 0 && out >= 0);
	while (total < limit && (n = read(in, buf, sizeof(buf))) > 0) {
		if ((size_t)n > limit - total)
			n = (ssize_t)(limit - total);
		assert_int_equal(write(out, buf, (size_t)n), n);
		total += (size_t)n;
	}
	close(in);
	close(out);
}

static void write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
}

/* mmap len bytes of path from offset (page-aligned) readable and executable, as a loader would. */
static void *map_file(const char *path, off_t offset, size_t len)
{
	int fd = open(path, O_RDONLY);
	void *p;

	assert_true(fd >= 0);
	p = mmap(NULL, len, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, offset);
	close(fd);
	assert_true(p != MAP_FAILED);
	return p;
}

/* The file offset this process's address addr maps. */
static uint64_t file_offset_of(uint64_t addr)
{
	struct maps *maps = maps_new();
	struct mapping *m;
	uint64_t off;

	assert_int_equal(maps_load_proc(maps, getpid(), 1), 0);
	m = maps_find(maps, getpid(), addr);
	assert_non_null(m);
	off = addr - m->start + m->pgoff;
	maps_free(maps);
	return off;
}

/* st_value of function name in path's .symtab (or .dynsym), through libelf. */
static bool elf_symbol_value(const char *path, const char *name, uint64_t *value)
{
	int fd = open(path, O_RDONLY);
	Elf_Scn *scn = NULL;
	bool found = false;
	Elf *elf;

	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	while (!found && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &shdr) || (shdr.sh_type != SHT_SYMTAB &&
						  shdr.sh_type != SHT_DYNSYM))
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && i < shdr.sh_size / shdr.sh_entsize; i++) {
			GElf_Sym sym;
			const char *s;

			if (!gelf_getsym(data, (int)i, &sym))
				continue;
			s = elf_strptr(elf, shdr.sh_link, sym.st_name);
			if (s && !strcmp(s, name)) {
				*value = sym.st_value;
				found = true;
				break;
			}
		}
	}
	elf_end(elf);
	close(fd);
	return found;
}

static int setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/proftop-symbols-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	run("rm -rf '%s'", tmpdir);
	return 0;
}

/* ---- this process --------------------------------------------------------------------------- */

static void test_self_function(void **state)
{
	struct symbolizer *s = symbolizer_new(NULL);
	int (*volatile fn)(int) = test_symbols_target;
	uint64_t addr = addr_of((void *)fn);
	struct link_map *main_map = _r_debug.r_map;
	struct symbol sym;

	(void)state;
	/* No symbolizer_load_proc(): an unknown pid reads its maps by itself. */
	symbolizer_resolve(s, getpid(), addr, &sym);
	assert_non_null(sym.function);
	assert_string_equal(sym.function, "test_symbols_target");
	assert_string_equal(sym.module, base_name(self_exe()));
	/* PIE or not, the module address is the link-time one: the runtime one less the bias. */
	assert_true(sym.module_addr == addr - main_map->l_addr);

	/* The function starts at its symbol, which is where fn points. */
	assert_true(sym.function_addr == addr - main_map->l_addr);

	symbolizer_resolve(s, getpid(), addr + 3, &sym);
	assert_string_equal(sym.function, "test_symbols_target");
	assert_true(sym.module_addr == addr + 3 - main_map->l_addr);
	assert_true(sym.function_addr == addr - main_map->l_addr);
	symbolizer_free(s);
}

static void test_libc_function(void **state)
{
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	struct symbolizer *s = symbolizer_new(NULL);
	struct link_map *map;
	struct symbol sym;
	uint64_t addr;

	(void)state;
	assert_non_null(libc);
	assert_int_equal(dlinfo(libc, RTLD_DI_LINKMAP, &map), 0);
	/* dlsym() on libc's own handle: libc's qsort even when a sanitizer intercepts it. */
	addr = addr_of(dlsym(libc, "qsort"));
	symbolizer_resolve(s, getpid(), addr, &sym);
	assert_non_null(sym.function);
	assert_string_equal(sym.function, "qsort");
	assert_string_equal(sym.module, "libc.so.6");
	assert_true(sym.module_addr == addr - map->l_addr);

	dlclose(libc);
	symbolizer_free(s);
}

static void test_aliases(void **state)
{
	struct symbolizer *s = symbolizer_new(NULL);
	struct symbol sym;

	(void)state;
	(void)alias_local;
	symbolizer_resolve(s, getpid(), addr_of((void *)alias_weak), &sym);
	assert_non_null(sym.function);
	assert_string_equal(sym.function, "alias_short");
	symbolizer_free(s);
}

/* Every string is the symbolizer's until it is freed: the same function gives the same pointers,
 * also after the maps are read again. */
static void test_stable_pointers(void **state)
{
	struct symbolizer *s = symbolizer_new(NULL);
	uint64_t addr = addr_of((void *)test_symbols_target);
	struct symbol a, b;

	(void)state;
	symbolizer_resolve(s, getpid(), addr, &a);
	assert_int_equal(symbolizer_load_proc(s, getpid()), 0);
	symbolizer_resolve(s, getpid(), addr + 1, &b);
	assert_ptr_equal(a.function, b.function);
	assert_ptr_equal(a.module, b.module);
	symbolizer_free(s);
}

static void test_unmapped_and_special(void **state)
{
	struct symbolizer *s = symbolizer_new(NULL);
	volatile int on_stack = 0;
	struct symbol sym;

	(void)state;
	symbolizer_resolve(s, getpid(), 0x10, &sym);
	assert_null(sym.function);
	assert_null(sym.module);
	assert_int_equal(sym.module_addr, 0x10);

	symbolizer_resolve(s, getpid(), addr_of((void *)&on_stack), &sym);
	assert_null(sym.function);
	assert_string_equal(sym.module, "[stack]");
	assert_true(sym.module_addr < addr_of((void *)&on_stack));

	/* Kernel addresses: the kernel's function where /proc/kallsyms shows addresses (root), else
	 * nothing. Unknown pids: nothing, and no crash. */
	symbolizer_resolve(s, 0, 0xffffffff81000010ull, &sym);
	if (sym.module) {
		assert_string_equal(sym.module, "[kernel.kallsyms]");
		assert_non_null(sym.function);
		assert_true(sym.function_addr <= 0xffffffff81000010ull);
	}
	symbolizer_resolve(s, -1, 0x1000, &sym);
	assert_null(sym.module);
	symbolizer_resolve(s, 0x7ffffff0, 0x1000, &sym);
	assert_null(sym.module);
	symbolizer_free(s);
}

static void test_vdso(void **state)
{
	uint64_t base = getauxval(AT_SYSINFO_EHDR), value = 0, load = UINT64_MAX;
	struct symbolizer *s = symbolizer_new(NULL);
	struct maps *maps = maps_new();
	struct mapping *m;
	struct symbol sym;
	Elf_Scn *scn = NULL;
	char *image;
	size_t n;
	Elf *elf;

	(void)state;
	if (!base)
		skip();
	assert_int_equal(maps_load_proc(maps, getpid(), 1), 0);
	m = maps_find(maps, getpid(), base);
	assert_non_null(m);
	assert_string_equal(m->path, "[vdso]");
	/* Find __vdso_clock_gettime the long way, in a copy of the image. */
	image = malloc(m->end - m->start);
	memcpy(image, (void *)(uintptr_t)base, m->end - m->start);
	elf_version(EV_CURRENT);
	elf = elf_memory(image, m->end - m->start);
	assert_non_null(elf);
	assert_int_equal(elf_getphdrnum(elf, &n), 0);
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr phdr;

		if (gelf_getphdr(elf, (int)i, &phdr) && phdr.p_type == PT_LOAD && phdr.p_vaddr < load)
			load = phdr.p_vaddr - phdr.p_offset;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_DYNSYM)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; i < shdr.sh_size / shdr.sh_entsize; i++) {
			GElf_Sym es;
			const char *name;

			gelf_getsym(data, (int)i, &es);
			name = elf_strptr(elf, shdr.sh_link, es.st_name);
			if (name && !strcmp(name, "__vdso_clock_gettime"))
				value = es.st_value;
		}
	}
	elf_end(elf);
	free(image);
	maps_free(maps);
	if (!value)
		skip();

	symbolizer_resolve(s, getpid(), base + (value - load) + 1, &sym);
	assert_string_equal(sym.module, "[vdso]");
	assert_non_null(sym.function);
	assert_string_equal(sym.function, "__vdso_clock_gettime");
	assert_true(sym.module_addr == value + 1);
	symbolizer_free(s);
}

static void test_demangle(void **state)
{
	struct symbolizer *s = symbolizer_new(NULL);
	struct symbol sym;

	(void)state;
	symbolizer_resolve(s, getpid(), addr_of((void *)mangled_cxx), &sym);
	assert_non_null(sym.function);
	assert_string_equal(sym.function, "proftop::test::mangled(int)");
	symbolizer_resolve(s, getpid(), addr_of((void *)mangled_rust_legacy), &sym);
	assert_non_null(sym.function);
	assert_string_equal(sym.function, "proftop::core::write");
	symbolizer_resolve(s, getpid(), addr_of((void *)mangled_rust_v0), &sym);
	assert_non_null(sym.function);
	assert_string_equal(sym.function, "mycrate::foo");
	symbolizer_free(s);
}

/* ---- copies of this binary, stripped, with debug files ----------------------------------- */

/* Map the part of copy that holds test_symbols_target in this binary and resolve that address
 * there. The copies keep the loadable layout, so the module address must not change. */
static void resolve_in_copy(const char *copy, struct symbol *sym, uint64_t *expect_addr)
{
	struct symbolizer *s = symbolizer_new(NULL);
	uint64_t addr = addr_of((void *)test_symbols_target), off = file_offset_of(addr);
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), at = off & ~(page - 1);
	static char function[256], module[256];
	struct symbol orig;
	char *base;

	symbolizer_resolve(s, getpid(), addr, &orig);
	*expect_addr = orig.module_addr;
	base = map_file(copy, (off_t)at, 2 * page);
	assert_int_equal(symbolizer_load_proc(s, getpid()), 0);
	symbolizer_resolve(s, getpid(), addr_of(base + (off - at)), sym);
	/* Copy out before the symbolizer goes; compare names by content. */
	snprintf(function, sizeof(function), "%s", sym->function ? sym->function : "");
	snprintf(module, sizeof(module), "%s", sym->module ? sym->module : "");
	sym->function = sym->function ? function : NULL;
	sym->module = sym->module ? module : NULL;
	munmap(base, 2 * page);
	symbolizer_free(s);
}

static void test_stripped_copy(void **state)
{
	const char *stripped = tmp_path("stripped");
	struct symbol sym;
	uint64_t expect;

	(void)state;
	if (!have_tool("objcopy"))
		skip();
	assert_int_equal(run("objcopy --strip-all '%s' '%s'", self_exe(), stripped), 0);
	resolve_in_copy(stripped, &sym, &expect);
	assert_null(sym.function);
	assert_string_equal(sym.module, "stripped");
	assert_true(sym.module_addr == expect);
}

/* The module of the file at path, read on its own (no debug file looked for). */
static struct module *load_module(const char *path)
{
	struct module *mod = module_new("m", 1);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(module_load_file(mod, fd, (size_t)st.st_size, NULL), 0);
	close(fd);
	return mod;
}

/* The ELF entry point of the file at path. */
static uint64_t entry_of(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	GElf_Ehdr ehdr;

	assert_non_null(elf);
	assert_non_null(gelf_getehdr(elf, &ehdr));
	elf_end(elf);
	close(fd);
	return ehdr.e_entry;
}

/* The functions .dynsym of the file at path defines, at distinct addresses (none is _start). */
static size_t dynsym_functions(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	uint64_t seen[64];
	Elf_Scn *scn = NULL;
	size_t n = 0;
	GElf_Shdr shdr;
	GElf_Sym sym;

	assert_non_null(elf);
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data = elf_getdata(scn, NULL);

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_DYNSYM || !data)
			continue;
		for (int i = 1; gelf_getsym(data, i, &sym); i++) {
			size_t k = 0;

			if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF)
				continue;
			while (k < n && seen[k] != sym.st_value)
				k++;
			if (k == n && n < 64)
				seen[n++] = sym.st_value;
		}
	}
	elf_end(elf);
	close(fd);
	return n;
}

/* A program stripped of its symbols still names its entry point _start, over the function its
 * symbol covered (its FDE), and only that: its symbols are still said to be missing (the warning,
 * debuginfod), and a shared library's entry point is not named so. */
static void test_stripped_entry(void **state)
{
	const char *stripped = tmp_path("stripped-entry");
	uint64_t entry = entry_of(self_exe()), start, end, ref_start, ref_end;
	struct module *orig, *mod;
	const char *name;
	Dl_info info;

	(void)state;
	if (!have_tool("objcopy"))
		skip();
	assert_int_equal(run("objcopy --strip-all '%s' '%s'", self_exe(), stripped), 0);
	orig = load_module(self_exe());
	name = module_lookup_range(orig, entry, &ref_start, &ref_end);
	assert_non_null(name);
	assert_string_equal(name, "_start");
	mod = load_module(stripped);
	name = module_lookup_range(mod, entry, &start, &end);
	assert_non_null(name);
	assert_string_equal(name, "_start");
	assert_true(start == entry);
	assert_true(end == ref_end);
	assert_null(module_lookup_range(mod, end, &start, &end));
	assert_int_equal(module_function_count(mod), dynsym_functions(stripped));
	module_free(mod);
	module_free(orig);

	/* libc.so.6 has an entry point (it prints its version), not called _start. */
	assert_true(dladdr((void *)printf, &info) && info.dli_fname);
	mod = load_module(info.dli_fname);
	name = module_lookup_range(mod, entry_of(info.dli_fname), &start, &end);
	assert_true(!name || strcmp(name, "_start"));
	module_free(mod);
}

static void test_debuglink_build_id(void **state)
{
	const char *debug = tmp_path("self.debug"), *linked = tmp_path("linked");
	struct symbol sym;
	uint64_t expect;

	(void)state;
	if (!have_tool("objcopy"))
		skip();
	assert_int_equal(run("objcopy --only-keep-debug '%s' '%s' && cd '%s' && "
			     "objcopy --strip-all --add-gnu-debuglink=self.debug '%s' linked",
			     self_exe(), debug, tmpdir, self_exe()), 0);
	resolve_in_copy(linked, &sym, &expect);
	assert_non_null(sym.function);
	assert_string_equal(sym.function, "test_symbols_target");
	assert_string_equal(sym.module, "linked");
	assert_true(sym.module_addr == expect);
}

/* Without build-ids only the CRC tells a debug file; one in .debug/ beside the binary. */
static void test_debuglink_crc(void **state)
{
	struct symbol sym;
	uint64_t expect;

	(void)state;
	if (!have_tool("objcopy"))
		skip();
	assert_int_equal(run("cd '%s' && mkdir -p .debug && "
			     "objcopy --remove-section=.note.gnu.build-id '%s' nobid 2>/dev/null && "
			     "objcopy --only-keep-debug nobid .debug/nobid.debug 2>/dev/null && "
			     "cd .debug && objcopy --strip-all --add-gnu-debuglink=nobid.debug "
			     "../nobid ../nobid.stripped", tmpdir, self_exe()), 0);
	resolve_in_copy(tmp_path("nobid.stripped"), &sym, &expect);
	assert_non_null(sym.function);
	assert_string_equal(sym.function, "test_symbols_target");

	/* The same link to a debug file that is now another file: its CRC is wrong. */
	assert_int_equal(run("cd '%s' && cp nobid.stripped nobid.stripped2 && "
			     "printf 'x' >> .debug/nobid.debug", tmpdir), 0);
	resolve_in_copy(tmp_path("nobid.stripped2"), &sym, &expect);
	assert_null(sym.function);
	assert_string_equal(sym.module, "nobid.stripped2");
	assert_true(sym.module_addr == expect);
}

/* A debuglink to a file over 1 GiB (sparse here) is not read for its CRC: it is refused, and
 * said why. Before, all of it was read (a link may name a terabyte), and it was then "another
 * build". */
static void test_debuglink_crc_too_big(void **state)
{
	const char *stripped = tmp_path("big.stripped");
	struct debugfile_origin origin = { .pid = getpid(), .path = stripped,
					   .path_len = strlen(stripped) };
	struct debugfile debug;
	struct stat st;
	char *rejected = NULL;
	Elf *elf;
	int fd;

	(void)state;
	assert_int_equal(run("cd '%s' && "
			     "objcopy --remove-section=.note.gnu.build-id '%s' big 2>/dev/null && "
			     "objcopy --only-keep-debug big big.debug 2>/dev/null && "
			     "objcopy --strip-all --add-gnu-debuglink=big.debug big big.stripped && "
			     "truncate -s 1073741825 big.debug", tmpdir, self_exe()), 0);
	fd = open(stripped, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0 && !fstat(fd, &st));
	origin.dev = st.st_dev;
	origin.ino = st.st_ino;
	assert_int_equal(module_init(), 0);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	assert_int_equal(debugfile_open(&debug, elf, &origin, &rejected), -ENOENT);
	assert_non_null(rejected);
	assert_non_null(strstr(rejected, "big.debug is not its debug file (it is over 1 GiB"));
	free(rejected);
	elf_end(elf);
	close(fd);
	unlink(tmp_path("big.debug"));
}

/* A debug file that is garbage or cut short is ignored, quietly. */
static void test_debuglink_corrupt(void **state)
{
	struct symbol sym;
	uint64_t expect;

	(void)state;
	if (!have_tool("objcopy"))
		skip();
	assert_int_equal(run("cd '%s' && objcopy --only-keep-debug '%s' cut.debug && "
			     "objcopy --strip-all --add-gnu-debuglink=cut.debug '%s' cut && "
			     "truncate -s 3000 cut.debug && "
			     "objcopy --only-keep-debug '%s' junk.debug && "
			     "objcopy --strip-all --add-gnu-debuglink=junk.debug '%s' junk && "
			     "head -c 100000 /dev/urandom > junk.debug",
			     tmpdir, self_exe(), self_exe(), self_exe(), self_exe()), 0);
	resolve_in_copy(tmp_path("cut"), &sym, &expect);
	assert_null(sym.function);
	assert_string_equal(sym.module, "cut");
	resolve_in_copy(tmp_path("junk"), &sym, &expect);
	assert_null(sym.function);
	assert_string_equal(sym.module, "junk");
}

/* ---- corrupt ELF files mapped for real --------------------------------------------------- */

static void resolve_mapped(const char *path, size_t len, const char *module)
{
	struct symbolizer *s = symbolizer_new(NULL);
	char *base = map_file(path, 0, len);
	struct symbol sym;

	assert_int_equal(symbolizer_load_proc(s, getpid()), 0);
	for (size_t off = 0; off < len; off += 997) {
		symbolizer_resolve(s, getpid(), addr_of(base + off), &sym);
		assert_non_null(sym.module);
		assert_string_equal(sym.module, module);
	}
	munmap(base, len);
	symbolizer_free(s);
}

static void test_corrupt_elf(void **state)
{
	unsigned char junk[16384];
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	char libc_path[4096];
	struct link_map *map;

	(void)state;
	srand(1);
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (unsigned char)rand();
	write_file(tmp_path("garbage"), junk, sizeof(junk));
	resolve_mapped(tmp_path("garbage"), sizeof(junk), "garbage");

	/* An ELF header in front of junk: section and program headers point anywhere. */
	memcpy(junk, "\177ELF\2\1\1\0", 8);
	write_file(tmp_path("elfjunk"), junk, sizeof(junk));
	resolve_mapped(tmp_path("elfjunk"), sizeof(junk), "elfjunk");

	/* A real ELF header and nothing else. */
	copy_file(self_exe(), tmp_path("header"), 64);
	resolve_mapped(tmp_path("header"), 4096, "header");

	/* libc cut short: headers fine, the tables they describe missing. */
	assert_non_null(libc);
	assert_int_equal(dlinfo(libc, RTLD_DI_LINKMAP, &map), 0);
	snprintf(libc_path, sizeof(libc_path), "%s", map->l_name);
	dlclose(libc);
	copy_file(libc_path, tmp_path("libc.cut"), 300000);
	resolve_mapped(tmp_path("libc.cut"), 300000, "libc.cut");
}

/* Copies of this binary with bytes of its first 64 KiB (headers, dynamic tables) overwritten at
 * random. Each copy stays on disk until teardown so that no two share an inode. */
static void test_mutated_elf(void **state)
{
	static unsigned char image[65536];
	int fd = open(self_exe(), O_RDONLY);
	ssize_t len;

	(void)state;
	assert_true(fd >= 0);
	len = read(fd, image, sizeof(image));
	close(fd);
	assert_true(len > 4096);
	srand(2);
	for (int round = 0; round < 60; round++) {
		unsigned char copy[sizeof(image)];
		char name[32];
		int flips = 1 + rand() % 32;

		memcpy(copy, image, (size_t)len);
		for (int i = 0; i < flips; i++) {
			/* Mostly the ELF and program/section header area. */
			size_t at = rand() % 2 ? (size_t)rand() % 256 : (size_t)rand() % (size_t)len;

			copy[at] = (unsigned char)rand();
		}
		snprintf(name, sizeof(name), "mutant%02d", round);
		write_file(tmp_path(name), copy, (size_t)len);
		resolve_mapped(tmp_path(name), (size_t)len, name);
	}
}

/* ---- JIT perf maps ------------------------------------------------------------------------- */

static void test_perf_map(void **state)
{
	struct symbolizer *s = symbolizer_new(NULL);
	char path[64], text[512];
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	char *code = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE | PROT_EXEC,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	const char *first;
	struct symbol sym;
	FILE *file;

	(void)state;
	assert_true(code != MAP_FAILED);
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	snprintf(text, sizeof(text),
		 "garbage line\n%lx 40 jit_compiled_fn\n0x%lx 0x20 Interpreter::stub\n"
		 "zzzz 10 nope\n1000 100 low_jit\n\n%lx\n",
		 (unsigned long)addr_of(code), (unsigned long)addr_of(code) + 0x100,
		 (unsigned long)addr_of(code) + 0x200);
	write_file(path, text, strlen(text));

	assert_int_equal(symbolizer_load_proc(s, getpid()), 0);
	symbolizer_resolve(s, getpid(), addr_of(code) + 0x10, &sym);
	assert_non_null(sym.function);
	assert_string_equal(sym.function, "jit_compiled_fn");
	assert_string_equal(sym.module, "[jit]");
	assert_true(sym.module_addr == addr_of(code) + 0x10);
	first = sym.function;
	symbolizer_resolve(s, getpid(), addr_of(code) + 0x11f, &sym);
	assert_string_equal(sym.function, "Interpreter::stub");
	/* In the anonymous mapping but no JIT function there. */
	symbolizer_resolve(s, getpid(), addr_of(code) + 0x300, &sym);
	assert_null(sym.function);
	assert_string_equal(sym.module, "[anon]");
	assert_int_equal(sym.module_addr, 0x300);
	/* In no mapping at all. */
	symbolizer_resolve(s, getpid(), 0x1010, &sym);
	assert_non_null(sym.function);
	assert_string_equal(sym.function, "low_jit");

	/* The JIT compiles more: seen once the file is looked at again. */
	file = fopen(path, "a");
	fprintf(file, "%lx 10 compiled_later\n", (unsigned long)addr_of(code) + 0x300);
	fclose(file);
	sleep_ms(150);
	symbolizer_resolve(s, getpid(), addr_of(code) + 0x300, &sym);
	assert_non_null(sym.function);
	assert_string_equal(sym.function, "compiled_later");
	symbolizer_resolve(s, getpid(), addr_of(code) + 0x10, &sym);
	assert_ptr_equal(sym.function, first);

	unlink(path);
	munmap(code, 2 * page);
	symbolizer_free(s);
}

/* What the symbolizer told of its JIT maps (symbolizer_jit_ops). */
struct jit_heard {
	struct symbolizer *s;
	uint64_t addr;		/* the address asked about when told of a change */
	pid_t named[4], forgotten[4];
	const char *name[4];	/* what the map named addr when it was told */
	int nnamed, nforgotten;
	bool waiting;
};

static void heard_named(void *arg, pid_t pid)
{
	struct jit_heard *h = arg;
	const char *module;

	assert_true(h->nnamed < 4);
	h->name[h->nnamed] = symbolizer_jit_name(h->s, pid, h->addr, &module);
	assert_string_equal(module, "[jit]");
	h->named[h->nnamed++] = pid;
}

static void heard_forget(void *arg, pid_t pid)
{
	struct jit_heard *h = arg;

	assert_true(h->nforgotten < 4);
	h->forgotten[h->nforgotten++] = pid;
}

static bool heard_waiting(void *arg, pid_t pid)
{
	(void)pid;
	return ((struct jit_heard *)arg)->waiting;
}

static const struct symbolizer_jit_ops heard_ops = { heard_named, heard_forget, heard_waiting };

/* A perf map written after its code ran: the address unnamed at first is handed back
 * (jit_addr), and the owner told when the map names it, live (the map looked at again), at the
 * last look after the process ended and was reaped (its owner still the one read from /proc
 * before), and at the end of the run (symbolizer_jit_final(), without waiting for a recheck). */
static void test_perf_map_late(void **state)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	char *code = mmap(NULL, page, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct symbolizer *s = symbolizer_new(NULL);
	struct jit_heard h = { .s = s, .waiting = true };
	char path[64], text[128];
	int go[2], status;
	struct symbol sym;
	pid_t child;

	(void)state;
	assert_true(code != MAP_FAILED);
	h.addr = addr_of(code) + 0x10;
	symbolizer_set_jit_ops(s, &heard_ops, &h);
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	unlink(path);
	assert_int_equal(symbolizer_load_proc(s, getpid()), 0);
	symbolizer_resolve(s, getpid(), h.addr, &sym);
	assert_null(sym.function);
	assert_true(sym.jit_addr == h.addr);

	/* Live: written later, seen at the next look that is due. */
	snprintf(text, sizeof(text), "%lx 40 late_fn\n", (unsigned long)addr_of(code));
	write_file(path, text, strlen(text));
	sleep_ms(150);
	symbolizer_resolve(s, getpid(), h.addr + 0x100, &sym);
	assert_int_equal(h.nnamed, 1);
	assert_int_equal(h.named[0], getpid());
	assert_string_equal(h.name[0], "late_fn");

	/* The end of the run: a map rewritten just now is read without waiting for a recheck. */
	snprintf(text, sizeof(text), "%lx 40 final_fn\n", (unsigned long)addr_of(code));
	write_file(path, text, strlen(text));
	symbolizer_jit_final(s);
	assert_int_equal(h.nnamed, 2);
	assert_string_equal(h.name[1], "final_fn");
	unlink(path);

	/* A process that writes its map as it ends, and is reaped before the symbolizer hears. */
	assert_int_equal(pipe(go), 0);
	child = fork();
	assert_true(child >= 0);
	if (!child) {
		char c;

		close(go[1]);
		if (read(go[0], &c, 1) == 1) {
			snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
			snprintf(text, sizeof(text), "%lx 40 dumped_at_exit\n", (unsigned long)addr_of(code));
			write_file(path, text, strlen(text));
		}
		_exit(0);
	}
	close(go[0]);
	assert_int_equal(symbolizer_load_proc(s, child), 0);
	symbolizer_resolve(s, child, h.addr, &sym);
	assert_null(sym.function);
	assert_true(sym.jit_addr == h.addr);
	assert_int_equal(write(go[1], "x", 1), 1);
	close(go[1]);
	assert_int_equal(waitpid(child, &status, 0), child);
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)child);
	symbolizer_exit(s, child);
	unlink(path);
	assert_int_equal(h.nnamed, 3);
	assert_int_equal(h.named[2], child);
	assert_string_equal(h.name[2], "dumped_at_exit");
	assert_int_equal(h.nforgotten, 1);
	assert_int_equal(h.forgotten[0], child);

	/* One that wrote no map: the last look finds none, and the map is dropped all the same. */
	child = fork();
	assert_true(child >= 0);
	if (!child) {
		pause();
		_exit(0);
	}
	assert_int_equal(symbolizer_load_proc(s, child), 0);
	symbolizer_resolve(s, child, h.addr, &sym);
	assert_true(sym.jit_addr == h.addr);
	kill(child, SIGKILL);
	assert_int_equal(waitpid(child, &status, 0), child);
	symbolizer_exit(s, child);
	assert_int_equal(h.nforgotten, 2);
	assert_int_equal(h.forgotten[1], child);
	symbolizer_settle_jits(s);
	assert_int_equal(h.nnamed, 3);

	/* Nothing waits for a name: the map is dropped with no last look. */
	h.waiting = false;
	symbolizer_exit(s, getpid());
	assert_int_equal(h.nnamed, 3);
	assert_int_equal(h.nforgotten, 3);
	munmap(code, page);
	symbolizer_free(s);
}

/* ---- other processes: PIE, non-PIE, deleted -------------------------------------------- */

static const char workload_src[] =
	"#include <stdio.h>\n#include <unistd.h>\n"
	"__attribute__((noinline)) int workload_fn(int x) { return x * 11 + 2; }\n"
	"int main(void) {\n"
	"	char c;\n"
	"	printf(\"%p\\n\", (void *)workload_fn);\n"
	"	fflush(stdout);\n"
	"	return read(0, &c, 1) < 0 ? workload_fn(c) : 0;\n"
	"}\n";

struct child {
	pid_t pid;
	int in;		/* its stdin: closing it ends the child */
	uint64_t fn;	/* where workload_fn is in it */
};

static void child_start(struct child *c, const char *path)
{
	int in[2], out[2];
	char line[64] = "";
	FILE *file;

	assert_int_equal(pipe(in), 0);
	assert_int_equal(pipe(out), 0);
	c->pid = fork();
	assert_true(c->pid >= 0);
	if (!c->pid) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	c->in = in[1];
	file = fdopen(out[0], "r");
	assert_non_null(fgets(line, sizeof(line), file));
	fclose(file);
	c->fn = strtoull(line, NULL, 16);
	assert_true(c->fn != 0);
}

static void child_stop(struct child *c)
{
	int status;

	close(c->in);
	waitpid(c->pid, &status, 0);
}

static bool compile(const char *out, const char *flags)
{
	const char *src = tmp_path("workload.c");

	write_file(src, workload_src, sizeof(workload_src) - 1);
	return run("cc -O1 %s -o '%s' '%s' >/dev/null 2>&1", flags, out, src) == 0;
}

static void check_workload(const char *path, bool pie)
{
	struct symbolizer *s = symbolizer_new(NULL);
	struct child c;
	struct symbol sym;
	uint64_t value = 0;

	assert_true(elf_symbol_value(path, "workload_fn", &value));
	child_start(&c, path);
	symbolizer_resolve(s, c.pid, c.fn + 2, &sym);
	assert_non_null(sym.function);
	assert_string_equal(sym.function, "workload_fn");
	assert_string_equal(sym.module, base_name(path));
	assert_true(sym.module_addr == value + 2);
	if (!pie)
		assert_true(sym.module_addr == c.fn + 2);
	child_stop(&c);
	symbolizer_free(s);
}

static void test_pie_and_non_pie(void **state)
{
	(void)state;
	if (!compile(tmp_path("nopie"), "-fno-pie -no-pie") ||
	    !compile(tmp_path("pie"), "-fPIE -pie"))
		skip();
	check_workload(tmp_path("nopie"), false);
	check_workload(tmp_path("pie"), true);
}

/* The binary is gone from its directory (an upgrade, a rebuild): map_files still opens it. */
static void test_deleted_binary(void **state)
{
	const char *path = tmp_path("doomed");
	struct symbolizer *s = symbolizer_new(NULL);
	struct child c;
	struct symbol sym;

	(void)state;
	/* Opening /proc/PID/map_files/ takes CAP_CHECKPOINT_RESTORE (or CAP_SYS_ADMIN). */
	if (geteuid() != 0 || !compile(path, "-fPIE -pie")) {
		symbolizer_free(s);
		skip();
	}
	child_start(&c, path);
	assert_int_equal(unlink(path), 0);
	/* Something else under the same name now. */
	copy_file(self_exe(), path, 1 << 20);
	symbolizer_resolve(s, c.pid, c.fn, &sym);
	assert_non_null(sym.function);
	assert_string_equal(sym.function, "workload_fn");
	assert_string_equal(sym.module, "doomed");
	child_stop(&c);
	symbolizer_free(s);
}

/* A stripped program without unwind tables of its own (no .eh_frame_hdr, its .debug_frame gone
 * with the rest): its one debug file gives both its functions and its .debug_frame. */
static void test_debug_file_gives_symbols_and_frames(void **state)
{
	const char *path = tmp_path("framesless");
	struct symbolizer *s = symbolizer_new(NULL);
	struct unwind_info info;
	struct child c;
	struct symbol sym;

	(void)state;
	if (!have_tool("objcopy") ||
	    !compile(tmp_path("frames.full"), "-g -fno-asynchronous-unwind-tables -Wl,--no-eh-frame-hdr") ||
	    run("cd '%s' && objcopy --only-keep-debug frames.full framesless.debug && "
		"objcopy --strip-all --add-gnu-debuglink=framesless.debug frames.full framesless",
		tmpdir)) {
		symbolizer_free(s);
		skip();
	}
	child_start(&c, path);
	symbolizer_resolve(s, c.pid, c.fn, &sym);
	assert_non_null(sym.function);
	assert_string_equal(sym.function, "workload_fn");
	assert_int_equal(symbolizer_unwind_info(s, c.pid, c.fn, &info), 0);
	assert_int_equal(info.eh_frame_hdr, 0);
	assert_non_null(info.debug_frame);
	assert_true(info.debug_frame_size > 0);
	assert_true(c.fn >= info.code_start && c.fn < info.code_end);
	child_stop(&c);
	symbolizer_free(s);
}

/* A debug file arriving later (debuginfod): the symbolizer asks for it once, by build-id; a file
 * that is not it is refused with the reason; the right one names the stripped program's function
 * and gives its lines; after that nothing is asked. */
struct late_debug {
	int wanted, named;
	size_t id_len;
	unsigned char id[64];
	char module[64];
};

static void late_want(void *arg, const unsigned char *id, size_t len, const char *module)
{
	struct late_debug *late = arg;

	late->wanted++;
	late->id_len = len;
	memcpy(late->id, id, len < sizeof(late->id) ? len : sizeof(late->id));
	snprintf(late->module, sizeof(late->module), "%s", module);
}

static void late_named(void *arg, const char *module, struct module *mod)
{
	struct late_debug *late = arg;

	assert_string_equal(module, "late");
	assert_non_null(mod);
	late->named++;
}

static void test_debug_file_arrives_later(void **state)
{
	const char *path = tmp_path("late"), *debug = tmp_path("late.debug"), *junk = tmp_path("junk");
	struct symbolizer *s = symbolizer_new(NULL);
	struct late_debug late = { 0 };
	struct lines_frame frames[4];
	struct symbol sym;
	struct child c;
	char *why;

	(void)state;
	if (!have_tool("objcopy") || !compile(tmp_path("late.full"), "-g") ||
	    run("cd '%s' && objcopy --only-keep-debug late.full late.debug && "
		"objcopy --strip-all late.full late", tmpdir)) {
		symbolizer_free(s);
		skip();
	}
	write_file(junk, "\x7f" "ELF junk", 8);
	symbolizer_want_debug_files(s, late_want, &late);
	child_start(&c, path);
	symbolizer_resolve(s, c.pid, c.fn + 2, &sym);
	assert_null(sym.function);
	assert_true(sym.bounded);
	assert_int_equal(late.wanted, 1);
	assert_int_equal(late.id_len, 20);
	assert_string_equal(late.module, "late");

	assert_int_equal(symbolizer_add_debug_file(s, late.id, late.id_len, junk, &why, late_named,
						   &late), 0);
	assert_non_null(why);
	assert_non_null(strstr(why, "not an ELF file"));
	free(why);
	/* Another build-id is no module's. */
	late.id[0] ^= 1;
	assert_int_equal(symbolizer_add_debug_file(s, late.id, late.id_len, debug, &why, late_named,
						   &late), 0);
	assert_null(why);
	late.id[0] ^= 1;

	assert_int_equal(symbolizer_add_debug_file(s, late.id, late.id_len, debug, &why, late_named,
						   &late), 1);
	assert_null(why);
	assert_int_equal(late.named, 1);
	symbolizer_resolve(s, c.pid, c.fn + 2, &sym);
	assert_non_null(sym.function);
	assert_string_equal(sym.function, "workload_fn");
	assert_non_null(sym.elf);
	assert_true(module_source(sym.elf, sym.module_addr, frames, 4) > 0);
	assert_non_null(frames[0].file);
	assert_non_null(strstr(frames[0].file, "workload.c"));
	assert_int_equal(symbolizer_add_debug_file(s, late.id, late.id_len, debug, &why, late_named,
						   &late), 0);
	assert_int_equal(late.named, 1);
	assert_int_equal(late.wanted, 1);
	child_stop(&c);
	symbolizer_free(s);
}

/* ---- the DWARF's memory ------------------------------------------------------------------------ */

/* The source frames of fn in this binary, through the symbolizer's module; the module in *mod. */
static size_t source_of(struct symbolizer *s, void *fn, struct module **mod, struct lines_frame *f)
{
	struct symbol sym;

	symbolizer_resolve(s, getpid(), addr_of(fn), &sym);
	assert_non_null(sym.elf);
	*mod = sym.elf;
	return module_source(sym.elf, sym.module_addr, f, LINES_MAX_FRAMES);
}

static bool file_is_this(const struct lines_frame *f)
{
	return f->file && strstr(f->file, "test_symbols.c");
}

/* n trims with budget; returns what the last one says is held. */
static size_t trims(struct symbolizer *s, int n, size_t budget, uint64_t *closed)
{
	size_t held = 0;

	for (int i = 0; i < n; i++)
		held = symbolizer_trim_sources(s, budget, closed);
	return held;
}

/* Past the budget, the DWARF of a module unread for 8 trims is closed; what it answered is still
 * answered (the same strings) without opening it, a new address opens it again, and a module
 * closed once waits 16 trims before the next close. Answers are dropped last. */
static void test_sources_within_budget(void **state)
{
	struct symbolizer *s = symbolizer_new(NULL);
	struct lines_frame f[LINES_MAX_FRAMES], again[LINES_MAX_FRAMES];
	size_t n, held, budget = 64 << 10;
	uint64_t closed = 0, reads;
	struct module *mod;

	(void)state;
	n = source_of(s, (void *)test_symbols_target, &mod, f);
	assert_true(n > 0);
	assert_true(file_is_this(&f[n - 1]));
	assert_string_equal(f[n - 1].function, "test_symbols_target");
	/* Read lately: kept, however far over the budget. */
	held = trims(s, 8, budget, &closed);
	assert_int_equal(closed, 0);
	assert_true(held > 4 * budget);
	assert_true(held >= module_source_memory(mod));
	/* Unread for 8 trims: closed, down to its answers. */
	held = trims(s, 1, budget, &closed);
	assert_int_equal(closed, 1);
	assert_true(held <= budget);
	assert_false(module_source_close(mod)); /* nothing open any more */
	reads = module_source_reads(mod);
	assert_int_equal(source_of(s, (void *)test_symbols_target, &mod, again), n);
	assert_int_equal(module_source_reads(mod), reads);
	assert_ptr_equal(again[n - 1].function, f[n - 1].function);
	assert_ptr_equal(again[n - 1].file, f[n - 1].file);
	assert_int_equal(again[n - 1].line, f[n - 1].line);
	/* An address no answer holds opens it again. */
	n = source_of(s, (void *)mangled_rust_legacy, &mod, f);
	assert_true(n > 0 && file_is_this(&f[n - 1]));
	assert_int_equal(module_source_reads(mod), reads + 1);
	assert_true(trims(s, 16, budget, &closed) > 4 * budget); /* backing off */
	assert_int_equal(closed, 1);
	assert_true(trims(s, 1, budget, &closed) <= budget);
	assert_int_equal(closed, 2);
	/* No limit: nothing is closed. */
	source_of(s, (void *)test_symbols_target, &mod, f);
	n = source_of(s, (void *)mangled_cxx, &mod, f);
	assert_true(trims(s, 100, 0, &closed) > 4 * budget);
	assert_int_equal(closed, 2);
	/* A budget below the answers themselves drops them too (but the names handed out): then
	 * even a known address reads the DWARF again, and answers as before. */
	held = trims(s, 1, 1, &closed);
	assert_int_equal(closed, 3);
	assert_int_equal(module_source_memory(mod), held);
	assert_true(held < 4096);
	reads = module_source_reads(mod);
	assert_int_equal(source_of(s, (void *)mangled_cxx, &mod, again), n);
	assert_int_equal(module_source_reads(mod), reads + 1);
	assert_string_equal(again[n - 1].function, f[n - 1].function);
	symbolizer_free(s);
}

/* ---- kernel records ------------------------------------------------------------------------ */

static void test_records(void **state)
{
	const pid_t pid = 0x7ffff000, child = 0x7ffff001;
	struct symbolizer *s = symbolizer_new(NULL);
	uint64_t addr = addr_of((void *)test_symbols_target), off = file_offset_of(addr);
	uint64_t base = 0x40000000, page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t at = off & ~(page - 1);
	struct symbol sym;
	struct stat st;

	(void)state;
	/* A process that does not exist: only the records tell where things are. */
	assert_int_equal(stat(self_exe(), &st), 0);
	symbolizer_mmap(s, pid, base, 4 * page, at, major(st.st_dev), minor(st.st_dev), st.st_ino,
			PROT_READ | PROT_EXEC, self_exe());
	symbolizer_resolve(s, pid, base + (off - at), &sym);
	assert_non_null(sym.function);
	assert_string_equal(sym.function, "test_symbols_target");

	/* A mapping on top of part of it replaces that part. */
	symbolizer_mmap(s, pid, base + page, page, 0, 0, 0, 0, PROT_READ | PROT_EXEC, "//anon");
	symbolizer_resolve(s, pid, base + page + 8, &sym);
	assert_string_equal(sym.module, "[anon]");
	assert_int_equal(sym.module_addr, 8);

	symbolizer_fork(s, pid, child);
	symbolizer_resolve(s, child, base + (off - at), &sym);
	assert_non_null(sym.function);
	assert_string_equal(sym.function, "test_symbols_target");
	symbolizer_exec(s, child);
	symbolizer_resolve(s, child, base + (off - at), &sym);
	assert_null(sym.module);
	symbolizer_exit(s, pid);
	symbolizer_resolve(s, pid, base + (off - at), &sym);
	assert_null(sym.module);

	/* The same path, but not the inode that was mapped: no symbols from the wrong file. */
	symbolizer_mmap(s, pid, base, 4 * page, at, major(st.st_dev), minor(st.st_dev),
			st.st_ino + 1000003, PROT_READ | PROT_EXEC, self_exe());
	symbolizer_resolve(s, pid, base + (off - at), &sym);
	assert_null(sym.function);
	assert_string_equal(sym.module, base_name(self_exe()));
	assert_true(sym.module_addr == off);

	/* Odd records: empty, wrapping, no path. */
	symbolizer_mmap(s, pid, 0x1000, 0, 0, 0, 0, 0, 0, "/x");
	symbolizer_mmap(s, pid, UINT64_MAX - 10, 100, 0, 0, 0, 0, 0, NULL);
	symbolizer_resolve(s, pid, UINT64_MAX - 5, &sym);
	assert_string_equal(sym.module, "[anon]");
	symbolizer_free(s);
}

/* An address no mapping holds rereads the maps, but at most once per 100 ms. */
static void test_reread_rate_limit(void **state)
{
	struct symbolizer *s = symbolizer_new(NULL);
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	struct symbol sym;
	char *p;

	(void)state;
	copy_file(self_exe(), tmp_path("late"), 1 << 20);
	assert_int_equal(symbolizer_load_proc(s, getpid()), 0);
	p = map_file(tmp_path("late"), 0, page);
	symbolizer_resolve(s, getpid(), addr_of(p), &sym);
	assert_null(sym.module);
	sleep_ms(150);
	symbolizer_resolve(s, getpid(), addr_of(p), &sym);
	assert_non_null(sym.module);
	assert_string_equal(sym.module, "late");
	munmap(p, page);
	symbolizer_free(s);
}

/* ---- warnings through the diagnostics channel -------------------------------------------- */

struct heard {
	char text[8][DIAG_TEXT_MAX + 1];
	size_t n;
};

static void hear(void *arg, enum diag_level level, const char *text)
{
	struct heard *h = arg;

	assert_int_equal(level, DIAG_WARNING);
	assert_true(h->n < 8);
	snprintf(h->text[h->n++], sizeof(h->text[0]), "%s", text);
}

/* What the channel delivers now; each text must contain a and b. */
static size_t deliver_all(struct diag *diag, struct heard *h, const char *a, const char *b)
{
	static const struct diag_ops ops = { .report = hear };

	h->n = 0;
	diag_deliver(diag, &ops, h);
	for (size_t i = 0; i < h->n; i++) {
		if (!strstr(h->text[i], a) || !strstr(h->text[i], b))
			fail_msg("unexpected warning: %s", h->text[i]);
	}
	return h->n;
}

/* A perf map the target's user does not own is refused, and said once (not per sample, not per
 * refresh) with the file and the reason. */
static void test_warn_refused_perf_map(void **state)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	char *code = mmap(NULL, page, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct diag *diag = diag_new();
	struct symbolizer *s = symbolizer_new(diag);
	char path[64], text[128];
	struct heard heard;
	struct symbol sym;

	(void)state;
	assert_true(code != MAP_FAILED);
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	snprintf(text, sizeof(text), "%lx 40 refused_fn\n", (unsigned long)addr_of(code));
	write_file(path, text, strlen(text));
	/* Only root can hand a file to someone else. */
	if (geteuid() != 0 || chown(path, 12345, 12345)) {
		unlink(path);
		symbolizer_free(s);
		diag_free(diag);
		munmap(code, page);
		skip();
	}
	assert_int_equal(symbolizer_load_proc(s, getpid()), 0);
	for (int i = 0; i < 3; i++) {
		symbolizer_resolve(s, getpid(), addr_of(code) + 4, &sym);
		assert_null(sym.function);
		assert_string_equal(sym.module, "[anon]");
		if (i == 1)
			sleep_ms(150); /* the file is looked at again, and refused again */
	}
	assert_int_equal(deliver_all(diag, &heard, path, "not owned by the process's user"), 1);
	assert_int_equal(deliver_all(diag, &heard, "", ""), 0);
	unlink(path);
	symbolizer_free(s);
	diag_free(diag);
	munmap(code, page);
}

/* Code in a file that cannot be opened, or that holds no ELF data, or no function symbols: one
 * warning per module however many addresses hit it; none for a data mapping. */
static void test_warn_unreadable_module(void **state)
{
	const pid_t pid = 0x7ffff100;
	const uint64_t base = 0x40000000, page = (uint64_t)sysconf(_SC_PAGESIZE);
	unsigned char junk[8192];
	struct diag *diag = diag_new();
	struct symbolizer *s = symbolizer_new(diag);
	struct heard heard;
	struct symbol sym;

	(void)state;
	memset(junk, 0x5a, sizeof(junk));
	write_file(tmp_path("junk.bin"), junk, sizeof(junk));
	symbolizer_mmap(s, pid, base, 2 * page, 0, 0, 0, 0, PROT_READ | PROT_EXEC,
			tmp_path("missing.so"));
	symbolizer_mmap(s, pid, base + 4 * page, 2 * page, 0, 0, 0, 0, PROT_READ | PROT_EXEC,
			tmp_path("junk.bin"));
	symbolizer_mmap(s, pid, base + 8 * page, 2 * page, 0, 0, 0, 0, PROT_READ, "/dev/null/data");
	for (uint64_t off = 0; off < 2 * page; off += 512) {
		symbolizer_resolve(s, pid, base + off, &sym);
		assert_string_equal(sym.module, "missing.so");
		assert_int_equal(sym.module_addr, off);
		symbolizer_resolve(s, pid, base + 4 * page + off, &sym);
		assert_string_equal(sym.module, "junk.bin");
		symbolizer_resolve(s, pid, base + 8 * page + off, &sym);
		assert_string_equal(sym.module, "data");
	}
	assert_int_equal(deliver_all(diag, &heard, "no symbols for ", "; its functions show as "), 2);
	assert_non_null(strstr(heard.text[0], "missing.so: No such file or directory"));
	assert_non_null(strstr(heard.text[1], "junk.bin: no ELF data proftop can read"));

	/* An ELF file without a single function symbol: a stripped static program. */
	write_file(tmp_path("nosyms.c"), "void _start(void) { for (;;); }\n", 32);
	if (!have_tool("cc") || run("cd '%s' && cc -O1 -nostdlib -static -o nosyms nosyms.c && "
				    "strip nosyms", tmpdir)) {
		symbolizer_free(s);
		diag_free(diag);
		skip();
	}
	symbolizer_mmap(s, pid, base + 12 * page, page, 0, 0, 0, 0, PROT_READ | PROT_EXEC,
			tmp_path("nosyms"));
	symbolizer_resolve(s, pid, base + 12 * page + 16, &sym);
	assert_null(sym.function);
	assert_int_equal(deliver_all(diag, &heard, "nosyms: no function symbols", "nosyms+0x"), 1);
	symbolizer_free(s);
	diag_free(diag);
}

/* ---- what is not a function ------------------------------------------------------------- */

/* sh_addr and sh_size of section name in path, through libelf. */
static bool elf_section_range(const char *path, const char *name, uint64_t *addr, uint64_t *size)
{
	int fd = open(path, O_RDONLY);
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	bool found = false;
	Elf *elf;

	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	while (!found && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;
		const char *s;

		if (!gelf_getshdr(scn, &shdr) || !(s = elf_strptr(elf, shstrndx, shdr.sh_name)) ||
		    strcmp(s, name))
			continue;
		*addr = shdr.sh_addr;
		*size = shdr.sh_size;
		found = true;
	}
	elf_end(elf);
	close(fd);
	return found;
}

/* A module read from the file at path, and looked up at link-time addresses. */
static struct module *module_of(const char *path)
{
	struct module *mod = module_new(base_name(path), strlen(base_name(path)));
	int fd = open(path, O_RDONLY);
	struct stat st;

	assert_true(fd >= 0 && !fstat(fd, &st));
	assert_int_equal(module_load_file(mod, fd, (size_t)st.st_size, NULL), 0);
	close(fd);
	return mod;
}

static const char *name_at(const struct module *mod, uint64_t addr)
{
	uint64_t start;
	const char *name = module_lookup(mod, addr, &start);

	return name ? name : "(none)";
}

/* Symbols typed FUNC that are labels: a marker at the end of .text (Go's runtime.etext, which
 * named every address past the code: ASCII a broken unwind took for a return address), a
 * size-0 label at a function's start, and a linker's marker name inside a function. This test
 * binary with those added by objcopy (which gives them size 0). */
static void test_marker_symbols(void **state)
{
	const char *marked = tmp_path("marked");
	uint64_t text = 0, text_size = 0, target = 0;
	struct module *mod, *plain;

	(void)state;
	if (!have_tool("objcopy"))
		skip();
	assert_true(elf_section_range(self_exe(), ".text", &text, &text_size));
	assert_true(elf_symbol_value(self_exe(), "test_symbols_target", &target));
	assert_int_equal(run("objcopy --add-symbol endmark=.text:%#" PRIx64 ",function,global "
			     "--add-symbol tst=.text:%#" PRIx64 ",function,global "
			     "--add-symbol etext=.text:%#" PRIx64 ",function,global '%s' '%s'",
			     text_size, target - text, target - text + 1, self_exe(), marked), 0);
	mod = module_of(marked);
	assert_string_equal(name_at(mod, target), "test_symbols_target");
	assert_string_equal(name_at(mod, target + 2), "test_symbols_target");
	for (uint64_t past = 0; past < 256; past += 8)
		assert_string_not_equal(name_at(mod, text + text_size + past), "endmark");
	/* And its functions are what they were: the last one in .text ends where it did. */
	plain = module_of(self_exe());
	assert_string_equal(name_at(mod, text + text_size - 1), name_at(plain, text + text_size - 1));
	module_free(plain);
	module_free(mod);
}

/* Go's runtime switches stacks in functions a DWARF unwind must stop at (module.h): known in a
 * program `go build` made, and by name only there, not in a C program that has the same names. */
static void test_go_roots(void **state)
{
	static const char go_src[] = "package main\n\nfunc main() { println(\"hi\") }\n";
	static const char c_src[] =
		"__attribute__((noinline)) void sys(void) __asm__(\"runtime.systemstack\");\n"
		"void sys(void) { __asm__ volatile(\"\"); }\n"
		"int main(void) { sys(); return 0; }\n";
	const char *go = tmp_path("goprog"), *c = tmp_path("cprog");
	uint64_t addr = 0;
	struct module *mod;

	(void)state;
	if (!have_tool("go") || !have_tool("cc"))
		skip();
	write_file(tmp_path("goprog.go"), go_src, sizeof(go_src) - 1);
	write_file(tmp_path("cprog.c"), c_src, sizeof(c_src) - 1);
	assert_int_equal(run("cd '%s' && HOME='%s' GOCACHE='%s/gocache' GO111MODULE=off "
			     "go build -o goprog goprog.go >/dev/null 2>&1 && cc -O1 -o cprog cprog.c",
			     tmpdir, tmpdir, tmpdir), 0);
	mod = module_of(go);
	assert_true(elf_symbol_value(go, "runtime.systemstack.abi0", &addr));
	assert_int_equal(module_frame_kind(mod, addr), MODULE_FRAME_SWITCH);
	assert_int_equal(module_frame_kind(mod, addr + 8), MODULE_FRAME_SWITCH);
	assert_true(elf_symbol_value(go, "runtime.goexit.abi0", &addr));
	assert_int_equal(module_frame_kind(mod, addr), MODULE_FRAME_TOP);
	assert_true(elf_symbol_value(go, "runtime.mstart.abi0", &addr));
	assert_int_equal(module_frame_kind(mod, addr), MODULE_FRAME_TOP);
	assert_true(elf_symbol_value(go, "runtime.mstart0", &addr));
	assert_int_equal(module_frame_kind(mod, addr), MODULE_FRAME_CALL);
	assert_true(elf_symbol_value(go, "main.main", &addr));
	assert_int_equal(module_frame_kind(mod, addr), MODULE_FRAME_CALL);
	module_free(mod);
	mod = module_of(c);
	assert_true(elf_symbol_value(c, "runtime.systemstack", &addr));
	assert_string_equal(name_at(mod, addr), "runtime.systemstack");
	assert_int_equal(module_frame_kind(mod, addr), MODULE_FRAME_CALL);
	module_free(mod);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_self_function),
		cmocka_unit_test(test_libc_function),
		cmocka_unit_test(test_aliases),
		cmocka_unit_test(test_stable_pointers),
		cmocka_unit_test(test_unmapped_and_special),
		cmocka_unit_test(test_vdso),
		cmocka_unit_test(test_demangle),
		cmocka_unit_test(test_stripped_copy),
		cmocka_unit_test(test_debuglink_build_id),
		cmocka_unit_test(test_debuglink_crc),
		cmocka_unit_test(test_debuglink_crc_too_big),
		cmocka_unit_test(test_debuglink_corrupt),
		cmocka_unit_test(test_corrupt_elf),
		cmocka_unit_test(test_mutated_elf),
		cmocka_unit_test(test_perf_map),
		cmocka_unit_test(test_pie_and_non_pie),
		cmocka_unit_test(test_deleted_binary),
		cmocka_unit_test(test_debug_file_gives_symbols_and_frames),
		cmocka_unit_test(test_debug_file_arrives_later),
		cmocka_unit_test(test_sources_within_budget),
		cmocka_unit_test(test_records),
		cmocka_unit_test(test_reread_rate_limit),
		cmocka_unit_test(test_warn_refused_perf_map),
		cmocka_unit_test(test_perf_map_late),
		cmocka_unit_test(test_stripped_entry),
		cmocka_unit_test(test_warn_unreadable_module),
		cmocka_unit_test(test_marker_symbols),
		cmocka_unit_test(test_go_roots),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
