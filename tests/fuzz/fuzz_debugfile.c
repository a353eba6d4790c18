/* libFuzzer target: the debug-file lookup (debugfile.c) and what the module reader takes from the
 * file it finds (module.c), for a hostile module and a hostile debug file. The input is both: a
 * 4-byte little-endian length, the module's bytes (the rest of the input when it is shorter), and
 * the candidate debug file's bytes.
 *
 * In a scratch directory, the module is written as mod.so and the candidate as x.debug and as
 * .debug/y.debug (two of the places a .gnu_debuglink name is looked for); beside them lie a FIFO
 * (fifo.debug: opening it must not block), a directory (dir.debug), a link to a character device
 * (zero.debug) and a link to the module itself (self.debug: never its own debug file). Then:
 *  - debugfile_open() on the module's ELF: a file it opens must be one of the candidates, another
 *    file than the module, an ELF file with a .symtab, with the module's build-id when both have
 *    one, else with the CRC-32 the module's .gnu_debuglink names (checked here with zlib's);
 *  - debugfile_open_path() on x.debug, as a fetched file is: the same, by build-id only;
 *  - module_load_file() on mod.so, which looks for the debug file and takes its functions and
 *    DWARF, then lookups and source lines at input words, and module_add_debug_file() of x.debug.
 * What they say is wrong names files and may hold the module's bytes: it is touched whole.
 *
 * Seeds in corpus/fuzz_debugfile, from a two-function C file built with gcc -g -O1 -shared -fPIC
 * -nostdlib, its debug file split off with objcopy --only-keep-debug, the module stripped of
 * .symtab and DWARF and given a .gnu_debuglink: build-id (a matching build-id, link x.debug),
 * crc (no build-id, link y.debug, the CRC matching), other-build (another build's debug file),
 * self (link self.debug: the module itself), fifo (link fifo.debug). */
#include "proftop/debugfile.h"
#include "proftop/lines.h"
#include "proftop/module.h"

#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static char dir[] = "/tmp/fuzz_debugfile-XXXXXX";
static char mod_path[64], cand_path[2][64];

static void die(const char *what)
{
	fprintf(stderr, "fuzz_debugfile: %s\n", what);
	exit(1);
}

static void remove_dir(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "fuzz_debugfile: cannot remove %s\n", dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char path[128];

	(void)argc;
	(void)argv;
	if (!mkdtemp(dir) || module_init())
		die("cannot make a scratch directory or ready libelf");
	atexit(remove_dir);
	snprintf(mod_path, sizeof(mod_path), "%s/mod.so", dir);
	snprintf(cand_path[0], sizeof(cand_path[0]), "%s/x.debug", dir);
	snprintf(cand_path[1], sizeof(cand_path[1]), "%s/.debug/y.debug", dir);
	snprintf(path, sizeof(path), "%s/.debug", dir);
	if (mkdir(path, 0700))
		die("mkdir .debug");
	snprintf(path, sizeof(path), "%s/fifo.debug", dir);
	if (mkfifo(path, 0600))
		die("mkfifo");
	snprintf(path, sizeof(path), "%s/dir.debug", dir);
	if (mkdir(path, 0700))
		die("mkdir dir.debug");
	snprintf(path, sizeof(path), "%s/zero.debug", dir);
	if (symlink("/dev/zero", path))
		die("symlink zero.debug");
	snprintf(path, sizeof(path), "%s/self.debug", dir);
	if (symlink("mod.so", path))
		die("symlink self.debug");
	return 0;
}

static void write_file(const char *path, const uint8_t *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0 || write(fd, data, size) != (ssize_t)size || close(fd))
		die("cannot write a file");
}

static void touch(const char *s)
{
	if (s && strlen(s) > (1u << 30))
		abort();
}

/* What ties elf to a debug file, read here on its own: build-id, .gnu_debuglink's CRC, .symtab. */
struct ident {
	unsigned char build_id[DEBUGFILE_BUILD_ID_MAX];
	size_t build_id_len;
	bool has_crc, symtab;
	uint32_t crc;
};

static void ident_of(Elf *elf, struct ident *id)
{
	size_t shstrndx = 0;
	bool names = !elf_getshdrstrndx(elf, &shstrndx), link_seen = false;
	Elf_Scn *scn = NULL;
	const char *e_ident = elf_getident(elf, NULL);

	memset(id, 0, sizeof(*id));
	id->build_id_len = debugfile_build_id(elf, id->build_id);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		const char *name;
		size_t len;

		if (!gelf_getshdr(scn, &sh))
			continue;
		id->symtab |= sh.sh_type == SHT_SYMTAB;
		name = names ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
		if (link_seen || !name || strcmp(name, ".gnu_debuglink"))
			continue;
		link_seen = true;
		data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf)
			continue;
		len = strnlen(data->d_buf, data->d_size);
		if (!len || len == data->d_size || ((len + 4) & ~3ul) + 4 > data->d_size)
			continue;
		const unsigned char *c = (const unsigned char *)data->d_buf + ((len + 4) & ~3ul);
		id->has_crc = true;
		id->crc = e_ident && e_ident[EI_DATA] == ELFDATA2MSB
				  ? (uint32_t)c[0] << 24 | (uint32_t)c[1] << 16 | (uint32_t)c[2] << 8 | c[3]
				  : (uint32_t)c[3] << 24 | (uint32_t)c[2] << 16 | (uint32_t)c[1] << 8 | c[0];
	}
}

/* A debug file found for the module whose ident is mod must be what debugfile.h says it is. */
static void check_found(const struct debugfile *d, const struct ident *mod, const uint8_t *cand,
			size_t cand_size, bool by_build_id_only)
{
	struct ident id;

	if (!d->elf || d->fd < 0 || !d->path)
		abort();
	if (strcmp(d->path, cand_path[0]) && strcmp(d->path, cand_path[1]))
		abort();
	ident_of(d->elf, &id);
	if (!id.symtab)
		abort();
	if (mod->build_id_len && id.build_id_len) {
		if (mod->build_id_len != id.build_id_len ||
		    memcmp(mod->build_id, id.build_id, id.build_id_len))
			abort();
	} else if (by_build_id_only || !mod->has_crc ||
		   crc32(0, cand, (uInt)cand_size) != mod->crc) {
		abort();
	}
}

static void check_lookup(const uint8_t *mod, size_t mod_size, const uint8_t *cand,
			 size_t cand_size)
{
	char *image = malloc(mod_size ? mod_size : 1), *rejected = NULL;
	struct stat st;
	struct debugfile_origin origin = { .pid = getpid(), .path = mod_path,
					   .path_len = strlen(mod_path) };
	struct debugfile d;
	struct ident id;
	Elf *elf;

	memcpy(image, mod, mod_size);
	if (stat(mod_path, &st))
		die("stat mod.so");
	origin.dev = st.st_dev;
	origin.ino = st.st_ino;
	elf = elf_memory(image, mod_size);
	if (elf && elf_kind(elf) == ELF_K_ELF) {
		ident_of(elf, &id);
		if (id.build_id_len > DEBUGFILE_BUILD_ID_MAX)
			abort();
		if (!debugfile_open(&d, elf, &origin, &rejected))
			check_found(&d, &id, cand, cand_size, false);
		touch(rejected);
		free(rejected);
		debugfile_close(&d);
		if (!debugfile_open_path(&d, elf, cand_path[0], &origin, &rejected))
			check_found(&d, &id, cand, cand_size, true);
		touch(rejected);
		free(rejected);
		debugfile_close(&d);
	}
	elf_end(elf);
	free(image);
}

static uint64_t word_at(const uint8_t *data, size_t size, size_t i)
{
	uint64_t w = 0;

	memcpy(&w, data + i, size - i < sizeof(w) ? size - i : sizeof(w));
	return w;
}

/* The module reader with its debug file: functions, lines, and a fetched file added. */
static void check_module(const uint8_t *data, size_t size)
{
	struct debugfile_origin origin = { .pid = getpid(), .path = mod_path,
					   .path_len = strlen(mod_path) };
	struct module *mod = module_new("mod.so", 6);
	struct lines_frame f[LINES_MAX_FRAMES];
	int fd = open(mod_path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	char *why = NULL;
	bool named, news;
	uint64_t start;

	if (fd < 0 || fstat(fd, &st))
		die("open mod.so");
	origin.dev = st.st_dev;
	origin.ino = st.st_ino;
	module_load_file(mod, fd, (size_t)st.st_size, &origin);
	close(fd);
	for (int round = 0; round < 2; round++) {
		for (size_t i = 0; i < size && i < 64 * 8; i += 8) {
			uint64_t addr = word_at(data, size, i);
			size_t n = module_source(mod, addr, f, LINES_MAX_FRAMES);

			touch(module_lookup(mod, addr, &start));
			for (size_t k = 0; k < n; k++) {
				touch(f[k].function);
				touch(f[k].file);
			}
		}
		touch(module_source_problem(mod, &news));
		touch(module_debugfile_rejected(mod));
		if (round == 0) {
			module_add_debug_file(mod, cand_path[0], &named, &why);
			touch(why);
			free(why);
		}
	}
	module_free(mod);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t mod_size;
	uint32_t len;

	if (size < 4)
		return 0;
	memcpy(&len, data, 4);
	data += 4;
	size -= 4;
	mod_size = len < size ? len : size;
	write_file(mod_path, data, mod_size);
	write_file(cand_path[0], data + mod_size, size - mod_size);
	write_file(cand_path[1], data + mod_size, size - mod_size);
	check_lookup(data, mod_size, data + mod_size, size - mod_size);
	check_module(data, mod_size);
	return 0;
}
