/* symbols.c — from a sampled address in some process to "function in module".
 *
 * Three tables, all owned by the symbolizer:
 *
 *   maps     pid -> sorted mappings (maps.c). A mapping's cookie caches its struct module, so the
 *            common resolve is two binary searches and no hashing.
 *   modules  one per mapped file, keyed by (device, inode) or by path when the inode is unknown;
 *            one per special mapping name ("[heap]", "[anon]"); one per distinct vdso image
 *            (keyed by a hash of its bytes, as 32- and 64-bit processes see different ones).
 *            A module holds its PT_LOAD segments and its functions; it is loaded once, the first
 *            time an address needs it, and freed only by symbolizer_free(). Every module name and
 *            function name the symbolizer returns lives in a module or in `strings`, which is
 *            what keeps them valid and at the same address for the symbolizer's lifetime.
 *   jits     pid -> perf map (perfmap.c), sorted by pid, for pids that had an address no ELF
 *            file explains: one in no mapping, in anonymous memory, or in a mapping without ELF
 *            data ("[heap]", a memfd a JIT maps twice).
 *
 * Address translation. A file mapping [start, end) maps file offset pgoff at start, so addr is at
 * file offset off = addr - start + pgoff. The PT_LOAD segment whose file range holds off gives the
 * link-time address: off - p_offset + p_vaddr. That one rule covers PIE and non-PIE executables
 * and shared libraries alike; special mappings (vdso included) use off = addr - start. A module
 * without ELF data reports the offset itself.
 *
 * A module's functions are sorted by start with one entry per address: aliases collapse to one
 * deterministic name (a global over a weak over a local binding, then a name without a leading
 * underscore, then the shorter, then the lesser), names are demangled once and copied into one
 * block the module owns, and a function of size 0 extends to the next one (or its section's end).
 *
 * A cached module is trusted for as long as the symbolizer lives: a file deleted and its inode
 * reused for another ELF file while proftop runs would be misnamed. */
#include "proftop/symbols.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "proftop/demangle.h"
#include "proftop/maps.h"
#include "proftop/perfmap.h"
#include "proftop/strpool.h"
#include "proftop/util.h"

/* Larger "vdso" mappings are not a vdso; do not read them. */
#define VDSO_MAX		(1u << 20)
/* Build-ids are 20 bytes (sha1) in practice; anything longer is not worth a lookup. */
#define BUILD_ID_MAX		64
/* A demangled name this long helps nobody; keep the mangled one. */
#define DEMANGLED_MAX		(64 * 1024)
/* Addresses from here up are the kernel's: no JIT map describes them. */
#define KERNEL_START		(1ull << 63)

enum module_kind {
	MODULE_FILE,		/* a mapped file, ELF or not */
	MODULE_SPECIAL,		/* "[vdso]", "[heap]", "[stack]", ...: no file behind it */
	MODULE_ANON,		/* anonymous memory: "[anon]", "[anon:name]" */
};

struct module_key {
	enum module_kind kind;
	uint64_t dev;
	uint64_t ino;		/* FILE: 0 when unknown (then path is the key); vdso: image hash */
	const char *path;	/* interned in symbolizer->strings, so compared by pointer */
};

struct module_seg {
	uint64_t offset;	/* p_offset */
	uint64_t filesz;
	uint64_t memsz;
	uint64_t vaddr;
	uint64_t page_start;	/* offset of the page holding p_offset: where its mapping starts */
};

struct module_func {
	uint64_t start;
	uint64_t end;		/* exclusive */
	const char *name;	/* in module->names */
};

/* A module's file image and unwind tables, mapped the first time a sample must be unwound
 * through it (most modules are only ever symbolized). */
struct module_unwind {
	bool tried;
	unsigned char *image;	/* the whole file, mapped privately, or the vdso's copy */
	size_t size;
	bool mapped;		/* image is an mmap (else malloc'd) */
	uint64_t eh_frame_hdr;	/* link-time address; 0: none */
	uint64_t eh_frame_hdr_size;
	uint64_t code_start, code_end; /* link-time range of the executable segments */
	unsigned char *debug_frame;
	size_t debug_frame_size;
};

struct module {
	struct module *next;	/* hash chain */
	uint64_t hash;
	struct module_key key;
	char *name;		/* what symbol.module says */
	bool elf;		/* its segments were read: module_addr is a link-time address */
	struct module_seg *segs;
	size_t nsegs;
	struct module_func *funcs;	/* sorted by start, starts unique */
	size_t nfuncs;
	char *names;
	struct module_unwind unwind;
};

struct symbolizer_jit {
	pid_t pid;
	struct perfmap *map;
};

struct symbolizer {
	struct maps *maps;
	struct module **modules;	/* hash buckets */
	size_t nbuckets;		/* a power of two */
	size_t nmodules;
	struct strpool *strings;	/* module keys, JIT names */
	const char *jit_module;		/* "[jit]", interned */
	const char *vdso_name;		/* "[vdso]", interned */
	struct symbolizer_jit *jits;	/* sorted by pid */
	size_t njits, jits_cap;
	bool elf_ok;			/* libelf accepted our version */
};

/* What the ELF loaders need to know about the file they read, to find its debug file. */
struct module_file {
	pid_t pid;
	const char *path;	/* as mapped, without " (deleted)" */
	size_t path_len;
	dev_t dev;		/* of the opened file: a debug file must be another one */
	ino_t ino;
	unsigned char build_id[BUILD_ID_MAX];
	size_t build_id_len;
	const char *debuglink;	/* in the ELF's data: valid while it is open */
	uint32_t debuglink_crc;
};

/* A symbol table entry on its way into a module. */
struct module_raw {
	uint64_t start;
	uint64_t size;
	uint64_t limit;		/* end of its section: where a size-0 function must stop */
	const char *name;	/* in the ELF's string table */
	int rank;		/* binding: global 2, weak 1, local 0 */
};

/* ---- modules: lookup ---------------------------------------------------------------------- */

/* The link-time address of file offset off. Besides the exact segment, an offset in the page
 * below a segment's start, or in its zero-filled tail, translates through that segment: the kernel
 * maps whole pages. */
static uint64_t module_translate(const struct module *mod, uint64_t off)
{
	size_t i;

	for (i = 0; i < mod->nsegs; i++) {
		const struct module_seg *seg = &mod->segs[i];

		if (off >= seg->offset && off - seg->offset < seg->filesz)
			return off - seg->offset + seg->vaddr;
	}
	for (i = 0; i < mod->nsegs; i++) {
		const struct module_seg *seg = &mod->segs[i];
		uint64_t size = seg->memsz > seg->filesz ? seg->memsz : seg->filesz;

		if (off >= seg->page_start && off < seg->offset + size)
			return off - seg->offset + seg->vaddr;
	}
	return off;
}

static const char *module_lookup(const struct module *mod, uint64_t addr)
{
	size_t lo = 0, hi = mod->nfuncs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (mod->funcs[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= mod->funcs[lo - 1].end)
		return NULL;
	return mod->funcs[lo - 1].name;
}

static uint64_t module_addr(const struct module *mod, const struct mapping *m, uint64_t addr)
{
	uint64_t off = addr - m->start;

	if (mod->key.kind == MODULE_FILE)
		off += m->pgoff;
	return mod->elf ? module_translate(mod, off) : off;
}

static void module_free(struct module *mod)
{
	if (mod->unwind.mapped)
		munmap(mod->unwind.image, mod->unwind.size);
	else
		free(mod->unwind.image);
	free(mod->unwind.debug_frame);
	free(mod->name);
	free(mod->segs);
	free(mod->funcs);
	free(mod->names);
	free(mod);
}

/* ---- modules: reading ELF ----------------------------------------------------------------- */

static int module_read_segments(struct module *mod, Elf *elf)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	size_t n, cap = 0;
	GElf_Phdr phdr;

	if (elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &n))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		struct module_seg *seg;

		if (!gelf_getphdr(elf, (int)i, &phdr) || phdr.p_type != PT_LOAD)
			continue;
		xgrow((void **)&mod->segs, &cap, mod->nsegs + 1, sizeof(*mod->segs));
		seg = &mod->segs[mod->nsegs++];
		seg->offset = phdr.p_offset;
		seg->filesz = phdr.p_filesz;
		seg->memsz = phdr.p_memsz;
		seg->vaddr = phdr.p_vaddr;
		seg->page_start = phdr.p_offset & ~(page - 1);
	}
	mod->elf = true;
	return 0;
}

/* The first section of the given type, or (type SHT_NULL) of the given name. */
static Elf_Scn *module_section(Elf *elf, Elf64_Word type, const char *name)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx = 0;
	GElf_Shdr shdr;

	if (name && elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *sname;

		if (!gelf_getshdr(scn, &shdr))
			continue;
		if (!name) {
			if (shdr.sh_type == type)
				return scn;
			continue;
		}
		sname = elf_strptr(elf, shstrndx, shdr.sh_name);
		if (sname && !strcmp(sname, name))
			return scn;
	}
	return NULL;
}

static int module_rank(unsigned char bind)
{
	switch (bind) {
	case STB_GLOBAL:
		return 2;
	case STB_LOCAL:
		return 0;
	default:		/* weak, GNU unique */
		return 1;
	}
}

/* The end of section shndx, for a symbol at addr inside it; UINT64_MAX when unknown. One
 * symbol table names few sections, in runs, so the last answer is kept. */
static uint64_t module_section_end(Elf *elf, size_t shndx, uint64_t addr, size_t *last_ndx,
				   GElf_Shdr *last)
{
	Elf_Scn *scn;

	if (shndx == SHN_UNDEF || shndx >= SHN_LORESERVE)
		return UINT64_MAX;
	if (shndx != *last_ndx) {
		scn = elf_getscn(elf, shndx);
		if (!scn || !gelf_getshdr(scn, last)) {
			*last_ndx = 0;
			return UINT64_MAX;
		}
		*last_ndx = shndx;
	}
	if (addr < last->sh_addr || addr - last->sh_addr >= last->sh_size)
		return UINT64_MAX;
	return last->sh_addr + last->sh_size;
}

/* Append the function symbols of symbol table scn to raw. */
static int module_collect(Elf *elf, Elf_Scn *scn, struct module_raw **raw, size_t *n)
{
	size_t count, entsize, cap = 0, last_ndx = 0;
	GElf_Shdr shdr, last;
	Elf_Data *data;

	if (!gelf_getshdr(scn, &shdr) || !(data = elf_getdata(scn, NULL)))
		return -EINVAL;
	entsize = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
	if (!entsize)
		return -EINVAL;
	count = data->d_size / entsize;
	for (size_t i = 1; i < count; i++) {
		struct module_raw *r;
		unsigned char type;
		const char *name;
		GElf_Sym sym;

		if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC)
			continue;
		name = elf_strptr(elf, shdr.sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		xgrow((void **)raw, &cap, *n + 1, sizeof(**raw));
		r = &(*raw)[(*n)++];
		r->start = sym.st_value;
		r->size = sym.st_size;
		r->limit = module_section_end(elf, sym.st_shndx, sym.st_value, &last_ndx, &last);
		r->name = name;
		r->rank = module_rank(GELF_ST_BIND(sym.st_info));
	}
	return 0;
}

/* By address; at one address the alias to keep comes first. */
static int module_raw_cmp(const void *a, const void *b)
{
	const struct module_raw *x = a, *y = b;
	bool xu = x->name[0] == '_', yu = y->name[0] == '_';
	size_t xl, yl;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->rank != y->rank)
		return y->rank - x->rank;
	if (xu != yu)
		return xu - yu;
	xl = strlen(x->name);
	yl = strlen(y->name);
	if (xl != yl)
		return xl < yl ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Collapse aliases (the first of a run wins, with the largest size among them) and give each
 * function its end. Returns the number kept at the front of raw. */
static size_t module_dedup(struct module_raw *raw, size_t n)
{
	size_t out = 0;

	if (!n)
		return 0;
	qsort(raw, n, sizeof(*raw), module_raw_cmp);
	for (size_t i = 0; i < n; i++) {
		if (out && raw[out - 1].start == raw[i].start) {
			if (raw[i].size > raw[out - 1].size)
				raw[out - 1].size = raw[i].size;
			continue;
		}
		raw[out++] = raw[i];
	}
	return out;
}

static uint64_t module_func_end(const struct module_raw *raw, size_t i, size_t n)
{
	uint64_t next = i + 1 < n ? raw[i + 1].start : UINT64_MAX;

	if (raw[i].size)
		return raw[i].start + raw[i].size < raw[i].start ? UINT64_MAX :
		       raw[i].start + raw[i].size;
	return next < raw[i].limit ? next : raw[i].limit;
}

/* What raw's name shows as: without the symbol version a .symtab may carry
 * ("memcpy@@GLIBC_2.14"), demangled when mangled. Returns the demangled name (the caller frees
 * it) or NULL for the first *len bytes of raw. */
static char *module_name(const char *raw, size_t *len)
{
	size_t n = strcspn(raw, "@");
	char *plain = NULL, *name;

	if (!n)
		n = strlen(raw);
	else if (raw[n])
		plain = xasprintf("%.*s", (int)n, raw);
	name = demangle_name(plain ? plain : raw);
	free(plain);
	*len = n;
	if (name && strlen(name) <= DEMANGLED_MAX) {
		*len = strlen(name);
		return name;
	}
	free(name);
	return NULL;
}

/* Fill mod->funcs and mod->names from raw (deduplicated): names demangled here, once. */
static void module_build(struct module *mod, const struct module_raw *raw, size_t n)
{
	char **demangled = xcalloc(n ? n : 1, sizeof(*demangled));
	size_t *len = xcalloc(n ? n : 1, sizeof(*len));
	size_t total = 0, used = 0;

	for (size_t i = 0; i < n; i++) {
		demangled[i] = module_name(raw[i].name, &len[i]);
		total += len[i] + 1;
	}
	mod->names = xmalloc(total ? total : 1);
	mod->funcs = xmalloc((n ? n : 1) * sizeof(*mod->funcs));
	for (size_t i = 0; i < n; i++) {
		struct module_func *f = &mod->funcs[mod->nfuncs];

		f->start = raw[i].start;
		f->end = module_func_end(raw, i, n);
		if (f->end > f->start) {
			f->name = mod->names + used;
			memcpy(mod->names + used, demangled[i] ? demangled[i] : raw[i].name, len[i]);
			mod->names[used + len[i]] = '\0';
			used += len[i] + 1;
			mod->nfuncs++;
		}
		free(demangled[i]);
	}
	free(len);
	free(demangled);
}

/* Read the functions of symbol table scn of elf into mod (which has none yet). */
static int module_read_symbols(struct module *mod, Elf *elf, Elf_Scn *scn)
{
	struct module_raw *raw = NULL;
	size_t n = 0;
	int err;

	if (!scn)
		return -ENOENT;
	err = module_collect(elf, scn, &raw, &n);
	if (err)
		goto out_free;
	n = module_dedup(raw, n);
	module_build(mod, raw, n);
out_free:
	free(raw);
	return err;
}

/* ---- debug files -------------------------------------------------------------------------- */

/* The NT_GNU_BUILD_ID note, from whichever SHT_NOTE section has it. */
static size_t module_build_id(Elf *elf, unsigned char *out)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	while ((scn = elf_nextscn(elf, scn))) {
		size_t off = 0, name_off, desc_off;
		Elf_Data *data;
		GElf_Nhdr nhdr;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		while (data && (off = gelf_getnote(data, off, &nhdr, &name_off, &desc_off))) {
			if (nhdr.n_type != NT_GNU_BUILD_ID || nhdr.n_namesz != 4 ||
			    memcmp((char *)data->d_buf + name_off, "GNU", 4) ||
			    !nhdr.n_descsz || nhdr.n_descsz > BUILD_ID_MAX)
				continue;
			memcpy(out, (char *)data->d_buf + desc_off, nhdr.n_descsz);
			return nhdr.n_descsz;
		}
	}
	return 0;
}

/* .gnu_debuglink: a file name, NUL, padding to 4 bytes, and the CRC32 of that file in the ELF's
 * byte order. */
static void module_debuglink(Elf *elf, struct module_file *file)
{
	Elf_Scn *scn = module_section(elf, SHT_NULL, ".gnu_debuglink");
	const unsigned char *p, *crc;
	const char *ident;
	Elf_Data *data;
	size_t len;

	if (!scn || !(data = elf_getdata(scn, NULL)) || !data->d_buf)
		return;
	p = data->d_buf;
	len = strnlen((const char *)p, data->d_size);
	if (!len || len == data->d_size || ((len + 4) & ~3ul) + 4 > data->d_size)
		return;
	if (memchr(p, '/', len))
		return;
	crc = p + ((len + 4) & ~3ul);
	ident = elf_getident(elf, NULL);
	if (ident && ident[EI_DATA] == ELFDATA2MSB)
		file->debuglink_crc = (uint32_t)crc[0] << 24 | (uint32_t)crc[1] << 16 |
				      (uint32_t)crc[2] << 8 | crc[3];
	else
		file->debuglink_crc = (uint32_t)crc[3] << 24 | (uint32_t)crc[2] << 16 |
				      (uint32_t)crc[1] << 8 | crc[0];
	file->debuglink = (const char *)p;
}

/* CRC-32 (the zlib/IEEE one, reflected 0xedb88320), which .gnu_debuglink uses. */
static int module_file_crc(int fd, uint32_t *out)
{
	uint32_t table[256], crc = 0xffffffffu;
	unsigned char *buf = xmalloc(64 * 1024);
	off_t pos = 0;
	ssize_t r;
	int err = 0;

	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
		table[i] = c;
	}
	while ((r = pread(fd, buf, 64 * 1024, pos)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			goto out_free;
		}
		for (ssize_t i = 0; i < r; i++)
			crc = table[(crc ^ buf[i]) & 0xff] ^ (crc >> 8);
		pos += r;
	}
	*out = crc ^ 0xffffffffu;
out_free:
	free(buf);
	return err;
}

/* Open path as a debug file for file: another file than file itself, an ELF with a .symtab,
 * and the right one — same build-id when both have one, else (for a debuglink) the same CRC.
 * Returns the Elf (its fd in *fd) or NULL. */
static Elf *module_try_debug(const char *path, const struct module_file *file, bool by_build_id,
			     int *fd)
{
	unsigned char id[BUILD_ID_MAX];
	struct stat st;
	uint32_t crc = 0;
	size_t id_len;
	Elf *elf;

	*fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (*fd < 0)
		return NULL;
	if (fstat(*fd, &st) || !S_ISREG(st.st_mode) ||
	    (st.st_dev == file->dev && st.st_ino == file->ino))
		goto out_close;
	elf = elf_begin(*fd, ELF_C_READ, NULL);
	if (!elf)
		goto out_close;
	if (elf_kind(elf) != ELF_K_ELF || !module_section(elf, SHT_SYMTAB, NULL))
		goto out_end;
	id_len = module_build_id(elf, id);
	if (file->build_id_len && id_len) {
		if (id_len != file->build_id_len || memcmp(id, file->build_id, id_len))
			goto out_end;
	} else if (by_build_id) {
		goto out_end;
	} else if (module_file_crc(*fd, &crc) || crc != file->debuglink_crc) {
		goto out_end;
	}
	return elf;
out_end:
	elf_end(elf);
out_close:
	close(*fd);
	*fd = -1;
	return NULL;
}

/* Where a separate debug file may be: by build-id under /usr/lib/debug/.build-id, then by
 * .gnu_debuglink next to the file, in .debug/ beside it, and under /usr/lib/debug. Each place is
 * looked up inside the process's root first (another mount namespace), then in ours. */
static Elf *module_find_debug(const struct module_file *file, int *fd)
{
	/* Around the file's directory: before it, after it. */
	static const char *const around[3][2] = {
		{ "", "" }, { "", "/.debug" }, { "/usr/lib/debug", "" },
	};
	char root[40], path[PATH_MAX], hex[2 * BUILD_ID_MAX + 1];
	const char *prefix[2] = { root, "" };
	int dir_len = 0, n;
	Elf *elf;

	snprintf(root, sizeof(root), "/proc/%d/root", (int)file->pid);
	for (size_t i = 0; i < file->build_id_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", file->build_id[i]);
	for (const char *p = file->path; p < file->path + file->path_len; p++)
		if (*p == '/')
			dir_len = (int)(p - file->path);
	for (int i = 0; i < 2; i++) {
		if (file->build_id_len > 1) {
			n = snprintf(path, sizeof(path), "%s/usr/lib/debug/.build-id/%.2s/%s.debug",
				     prefix[i], hex, hex + 2);
			if (n > 0 && (size_t)n < sizeof(path) &&
			    (elf = module_try_debug(path, file, true, fd)))
				return elf;
		}
		for (int k = 0; file->debuglink && k < 3; k++) {
			n = snprintf(path, sizeof(path), "%s%s%.*s%s/%s", prefix[i], around[k][0],
				     dir_len, file->path, around[k][1], file->debuglink);
			if (n > 0 && (size_t)n < sizeof(path) &&
			    (elf = module_try_debug(path, file, false, fd)))
				return elf;
		}
	}
	return NULL;
}

/* ---- modules: loading --------------------------------------------------------------------- */

/* Functions from file's separate debug file, when it has one. */
static int module_read_debug(struct module *mod, Elf *elf, struct module_file *file)
{
	Elf *debug;
	int fd, err;

	file->build_id_len = module_build_id(elf, file->build_id);
	module_debuglink(elf, file);
	debug = module_find_debug(file, &fd);
	if (!debug)
		return -ENOENT;
	err = module_read_symbols(mod, debug, module_section(debug, SHT_SYMTAB, NULL));
	elf_end(debug);
	close(fd);
	return err;
}

/* Segments from elf itself; functions from its .symtab, else a debug file's, else its .dynsym. */
static void module_load_elf(struct module *mod, Elf *elf, struct module_file *file)
{
	if (module_read_segments(mod, elf))
		return;
	if (!module_read_symbols(mod, elf, module_section(elf, SHT_SYMTAB, NULL)))
		return;
	if (file && !module_read_debug(mod, elf, file))
		return;
	module_read_symbols(mod, elf, module_section(elf, SHT_DYNSYM, NULL));
}

/* " (deleted)" is the kernel's note, not part of the name. */
static size_t module_path_len(const char *path)
{
	static const char deleted[] = " (deleted)";
	size_t len = strlen(path), dlen = sizeof(deleted) - 1;

	if (len > dlen && !strcmp(path + len - dlen, deleted))
		return len - dlen;
	return len;
}

/* Open the file m maps: through map_files (the very file mapped, even when deleted or replaced
 * since), else inside the process's root (another mount namespace), else by its path. A file
 * that is not the mapped inode is not it. */
static int module_open(pid_t pid, const struct mapping *m, size_t path_len, struct stat *st)
{
	char path[PATH_MAX + 64];
	int fd, n;

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
		if (fd < 0)
			continue;
		if (!fstat(fd, st) && S_ISREG(st->st_mode) && (!m->ino || st->st_ino == m->ino))
			return fd;
		close(fd);
	}
	return -ENOENT;
}

/* Open the file m maps and describe it in *file (for its debug file). Returns the fd or -ENOENT. */
static int module_open_file(pid_t pid, const struct mapping *m, struct module_file *file,
			    struct stat *st)
{
	int fd;

	*file = (struct module_file){ .pid = pid, .path = m->path, .path_len = module_path_len(m->path) };
	fd = module_open(pid, m, file->path_len, st);
	if (fd >= 0) {
		file->dev = st->st_dev;
		file->ino = st->st_ino;
	}
	return fd;
}

static void module_load_file(struct module *mod, pid_t pid, const struct mapping *m)
{
	struct module_file file;
	struct stat st;
	Elf *elf;
	int fd = module_open_file(pid, m, &file, &st);

	if (fd < 0)
		return;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf) {
		module_load_elf(mod, elf, &file);
		elf_end(elf);
	}
	close(fd);
}

/* The vdso is a real ELF image the kernel maps into every process; read it from the process. */
static void *module_read_vdso(pid_t pid, const struct mapping *m, size_t *size)
{
	char path[64];
	void *buf;
	ssize_t r;
	int fd;

	*size = m->end - m->start;
	if (*size > VDSO_MAX)
		return NULL;
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	buf = xmalloc(*size);
	r = pread(fd, buf, *size, (off_t)m->start);
	close(fd);
	if (r != (ssize_t)*size) {
		free(buf);
		return NULL;
	}
	return buf;
}

static void module_load_image(struct module *mod, void *image, size_t size)
{
	Elf *elf = elf_memory(image, size);

	if (!elf)
		return;
	module_load_elf(mod, elf, NULL);
	elf_end(elf);
}

/* ---- modules: unwind data ----------------------------------------------------------------- */

/* A copy of the named section's bytes (decompressed if need be), or NULL. */
static unsigned char *module_section_copy(Elf *elf, const char *name, size_t *size)
{
	Elf_Scn *scn = module_section(elf, SHT_NULL, name);
	GElf_Shdr shdr;
	Elf_Data *data;
	unsigned char *copy;

	if (!scn || !gelf_getshdr(scn, &shdr) || shdr.sh_type == SHT_NOBITS)
		return NULL;
	if ((shdr.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
		return NULL;
	data = elf_getdata(scn, NULL);
	if (!data || !data->d_buf || !data->d_size)
		return NULL;
	copy = xmalloc(data->d_size);
	memcpy(copy, data->d_buf, data->d_size);
	*size = data->d_size;
	return copy;
}

/* .debug_frame from the module's separate debug file, for modules that carry none. */
static unsigned char *module_debug_frame_from_debug_file(Elf *elf, struct module_file *file,
							 size_t *size)
{
	unsigned char *copy = NULL;
	Elf *debug;
	int fd;

	file->build_id_len = module_build_id(elf, file->build_id);
	module_debuglink(elf, file);
	debug = module_find_debug(file, &fd);
	if (!debug)
		return NULL;
	copy = module_section_copy(debug, ".debug_frame", size);
	elf_end(debug);
	close(fd);
	return copy;
}

static void module_read_unwind(struct module_unwind *uw, Elf *elf, struct module_file *file)
{
	size_t n;
	GElf_Phdr phdr;

	if (elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &n))
		return;
	uw->code_start = UINT64_MAX;
	for (size_t i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, (int)i, &phdr))
			continue;
		if (phdr.p_type == PT_GNU_EH_FRAME) {
			uw->eh_frame_hdr = phdr.p_vaddr;
			uw->eh_frame_hdr_size = phdr.p_memsz;
		} else if (phdr.p_type == PT_LOAD && (phdr.p_flags & PF_X)) {
			if (phdr.p_vaddr < uw->code_start)
				uw->code_start = phdr.p_vaddr;
			if (phdr.p_vaddr + phdr.p_memsz > uw->code_end)
				uw->code_end = phdr.p_vaddr + phdr.p_memsz;
		}
	}
	if (uw->code_start == UINT64_MAX)
		uw->code_start = 0;
	uw->debug_frame = module_section_copy(elf, ".debug_frame", &uw->debug_frame_size);
	/* A stripped module without .eh_frame_hdr: its debug file may describe its frames. */
	if (!uw->debug_frame && !uw->eh_frame_hdr && file)
		uw->debug_frame = module_debug_frame_from_debug_file(elf, file, &uw->debug_frame_size);
}

/* Map the module's file (or keep the vdso's image) and find its unwind tables. */
static void module_load_unwind(struct module *mod, pid_t pid, const struct mapping *m)
{
	struct module_unwind *uw = &mod->unwind;
	struct module_file file = { .pid = pid, .path = m->path };
	struct stat st;
	Elf *elf;
	int fd;

	uw->tried = true;
	if (!mod->elf)
		return;
	if (mod->key.kind == MODULE_SPECIAL) { /* the vdso: its image is in the process */
		uw->image = module_read_vdso(pid, m, &uw->size);
	} else {
		fd = module_open_file(pid, m, &file, &st);
		if (fd < 0)
			return;
		/* Private and writable so libelf may convert in place without touching the file. */
		uw->image = st.st_size > 0 ? mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE,
						  MAP_PRIVATE, fd, 0) : MAP_FAILED;
		close(fd);
		if (uw->image == MAP_FAILED) {
			uw->image = NULL;
			return;
		}
		uw->size = (size_t)st.st_size;
		uw->mapped = true;
	}
	if (!uw->image)
		return;
	elf = elf_memory((char *)uw->image, uw->size);
	if (!elf)
		return;
	module_read_unwind(uw, elf, mod->key.kind == MODULE_FILE ? &file : NULL);
	elf_end(elf);
}

/* ---- the module cache --------------------------------------------------------------------- */

static uint64_t symbolizer_key_hash(const struct module_key *key)
{
	uint64_t h = util_hash_u64(key->dev * 31 + (uint64_t)key->kind);

	h = util_hash_u64(h ^ key->ino);
	return util_hash_u64(h ^ (uint64_t)(uintptr_t)key->path);
}

static struct module *symbolizer_find_module(struct symbolizer *s, const struct module_key *key,
					     uint64_t hash)
{
	struct module *mod = s->modules[hash & (s->nbuckets - 1)];

	for (; mod; mod = mod->next)
		if (mod->hash == hash && mod->key.kind == key->kind && mod->key.dev == key->dev &&
		    mod->key.ino == key->ino && mod->key.path == key->path)
			return mod;
	return NULL;
}

static void symbolizer_add_module(struct symbolizer *s, struct module *mod)
{
	struct module **bucket;

	if (s->nmodules >= s->nbuckets) {
		struct module **old = s->modules;
		size_t nold = s->nbuckets;

		s->nbuckets *= 2;
		s->modules = xcalloc(s->nbuckets, sizeof(*s->modules));
		for (size_t i = 0; i < nold; i++) {
			struct module *m = old[i], *next;

			for (; m; m = next) {
				next = m->next;
				bucket = &s->modules[m->hash & (s->nbuckets - 1)];
				m->next = *bucket;
				*bucket = m;
			}
		}
		free(old);
	}
	bucket = &s->modules[mod->hash & (s->nbuckets - 1)];
	mod->next = *bucket;
	*bucket = mod;
	s->nmodules++;
}

/* Anonymous memory under its many names: perf's "//anon", a private /dev/zero, hugetlb, and the
 * "[anon:name]" of prctl(PR_SET_VMA_ANON_NAME). */
static bool symbolizer_is_anon(const char *path)
{
	return !*path || !strcmp(path, "//anon") || !strncmp(path, "[anon:", 6) ||
	       !strncmp(path, "/dev/zero", 9) || !strncmp(path, "/anon_hugepage", 14);
}

/* The module's key, and the name a new module would get. */
static void symbolizer_classify(struct symbolizer *s, const struct mapping *m,
				struct module_key *key, char **name)
{
	const char *path = m->path ? m->path : "";
	const char *base;
	size_t len;

	memset(key, 0, sizeof(*key));
	if (symbolizer_is_anon(path)) {
		key->kind = MODULE_ANON;
		if (path[0] != '[')
			path = "[anon]";
		key->path = strpool_intern(s->strings, path, strlen(path));
		*name = xstrdup(path);
		return;
	}
	if (path[0] == '[') {
		key->kind = MODULE_SPECIAL;
		key->path = strpool_intern(s->strings, path, strlen(path));
		*name = xstrdup(path);
		return;
	}
	key->kind = MODULE_FILE;
	if (m->ino) {
		key->dev = makedev(m->maj, m->min);
		key->ino = m->ino;
	} else {
		key->path = strpool_intern(s->strings, path, strlen(path));
	}
	len = module_path_len(path);
	base = memrchr(path, '/', len);
	base = base ? base + 1 : path;
	*name = xasprintf("%.*s", (int)(len - (size_t)(base - path)), base);
}

/* The vdso's module: the image decides which (its hash is the key), read once per mapping. */
static struct module *symbolizer_vdso(struct symbolizer *s, pid_t pid, const struct mapping *m)
{
	struct module_key key = { .kind = MODULE_SPECIAL, .path = s->vdso_name };
	struct module *mod;
	void *image;
	size_t size;
	uint64_t hash;

	image = s->elf_ok ? module_read_vdso(pid, m, &size) : NULL;
	if (image)
		key.ino = util_hash_bytes(image, size, 0) | 1;
	hash = symbolizer_key_hash(&key);
	mod = symbolizer_find_module(s, &key, hash);
	if (!mod) {
		mod = xcalloc(1, sizeof(*mod));
		mod->key = key;
		mod->hash = hash;
		mod->name = xstrdup("[vdso]");
		if (image)
			module_load_image(mod, image, size);
		symbolizer_add_module(s, mod);
	}
	free(image);
	return mod;
}

/* The module m maps, loaded on first use. */
static struct module *symbolizer_module(struct symbolizer *s, pid_t pid, const struct mapping *m)
{
	struct module_key key;
	struct module *mod;
	uint64_t hash;
	char *name;

	if (m->path && !strcmp(m->path, "[vdso]"))
		return symbolizer_vdso(s, pid, m);
	symbolizer_classify(s, m, &key, &name);
	hash = symbolizer_key_hash(&key);
	mod = symbolizer_find_module(s, &key, hash);
	if (mod) {
		free(name);
		return mod;
	}
	mod = xcalloc(1, sizeof(*mod));
	mod->key = key;
	mod->hash = hash;
	mod->name = name;
	if (key.kind == MODULE_FILE && s->elf_ok)
		module_load_file(mod, pid, m);
	symbolizer_add_module(s, mod);
	return mod;
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

static struct perfmap *symbolizer_jit(struct symbolizer *s, pid_t pid)
{
	size_t i = symbolizer_jit_search(s, pid);

	if (i < s->njits && s->jits[i].pid == pid)
		return s->jits[i].map;
	xgrow((void **)&s->jits, &s->jits_cap, s->njits + 1, sizeof(*s->jits));
	memmove(&s->jits[i + 1], &s->jits[i], (s->njits - i) * sizeof(*s->jits));
	s->jits[i].pid = pid;
	s->jits[i].map = perfmap_new(s->strings);
	s->njits++;
	return s->jits[i].map;
}

static void symbolizer_drop_jit(struct symbolizer *s, pid_t pid)
{
	size_t i = symbolizer_jit_search(s, pid);

	if (i == s->njits || s->jits[i].pid != pid)
		return;
	perfmap_free(s->jits[i].map);
	memmove(&s->jits[i], &s->jits[i + 1], (s->njits - i - 1) * sizeof(*s->jits));
	s->njits--;
}

/* An address no ELF file explains may be JIT code pid described in its perf map. */
static void symbolizer_resolve_jit(struct symbolizer *s, pid_t pid, uint64_t addr,
				   struct symbol *out)
{
	struct perfmap *map;
	const char *name;

	if (addr >= KERNEL_START || pid <= 0)
		return;
	map = symbolizer_jit(s, pid);
	perfmap_refresh(map, pid, util_now_ns());
	name = perfmap_lookup(map, addr);
	if (!name)
		return;
	out->function = name;
	out->module = s->jit_module;
	out->module_addr = addr;
}

/* ---- the facade --------------------------------------------------------------------------- */

struct symbolizer *symbolizer_new(void)
{
	struct symbolizer *s = xcalloc(1, sizeof(*s));

	s->maps = maps_new();
	s->nbuckets = 64;
	s->modules = xcalloc(s->nbuckets, sizeof(*s->modules));
	s->strings = strpool_new();
	s->jit_module = strpool_intern(s->strings, "[jit]", 5);
	s->vdso_name = strpool_intern(s->strings, "[vdso]", 6);
	s->elf_ok = elf_version(EV_CURRENT) != EV_NONE;
	return s;
}

void symbolizer_free(struct symbolizer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nbuckets; i++) {
		struct module *mod = s->modules[i], *next;

		for (; mod; mod = next) {
			next = mod->next;
			module_free(mod);
		}
	}
	for (size_t i = 0; i < s->njits; i++)
		perfmap_free(s->jits[i].map);
	free(s->jits);
	free(s->modules);
	maps_free(s->maps);
	strpool_free(s->strings);
	free(s);
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
	maps_exit(s->maps, pid);
	symbolizer_drop_jit(s, pid);
}

/* The mapping of pid holding addr (reading /proc/PID/maps again first when none does and that
 * is due), with its module in *mod, loaded on first use. NULL when no mapping holds addr. */
static struct mapping *symbolizer_find(struct symbolizer *s, pid_t pid, uint64_t addr,
				       struct module **mod)
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
	*mod = m->cookie;
	return m;
}

void symbolizer_resolve(struct symbolizer *s, pid_t pid, uint64_t addr, struct symbol *out)
{
	struct module *mod;
	struct mapping *m = symbolizer_find(s, pid, addr, &mod);

	out->function = NULL;
	out->module = NULL;
	out->module_addr = addr;
	if (!m) {
		symbolizer_resolve_jit(s, pid, addr, out);
		return;
	}
	out->module = mod->name;
	out->module_addr = module_addr(mod, m, addr);
	out->function = module_lookup(mod, out->module_addr);
	/* Only ELF files have symbols; anything else may be JIT code (anonymous memory, or a
	 * memfd a JIT maps twice). */
	if (!out->function && !mod->elf)
		symbolizer_resolve_jit(s, pid, addr, out);
}

int symbolizer_unwind_info(struct symbolizer *s, pid_t pid, uint64_t addr, struct unwind_info *out)
{
	struct module *mod;
	struct mapping *m = symbolizer_find(s, pid, addr, &mod);
	uint64_t bias;

	if (!m)
		return -ENOENT;
	if (!mod->unwind.tried && s->elf_ok)
		module_load_unwind(mod, pid, m);
	if (!mod->unwind.image)
		return -ENOENT;
	bias = addr - module_addr(mod, m, addr);
	*out = (struct unwind_info){
		.bias = bias,
		.code_start = mod->unwind.code_start + bias,
		.code_end = mod->unwind.code_end + bias,
		.eh_frame_hdr = mod->unwind.eh_frame_hdr ? mod->unwind.eh_frame_hdr + bias : 0,
		.eh_frame_hdr_size = mod->unwind.eh_frame_hdr_size,
		.debug_frame = mod->unwind.debug_frame,
		.debug_frame_size = mod->unwind.debug_frame_size,
		.module = mod,
	};
	return 0;
}

int symbolizer_read_module(const struct unwind_info *info, uint64_t addr, void *buf, size_t len)
{
	const struct module *mod = info->module;
	uint64_t vaddr = addr - info->bias;

	for (size_t i = 0; i < mod->nsegs; i++) {
		const struct module_seg *seg = &mod->segs[i];
		uint64_t at;

		if (vaddr < seg->vaddr || vaddr - seg->vaddr >= seg->filesz ||
		    len > seg->filesz - (vaddr - seg->vaddr))
			continue;
		at = seg->offset + (vaddr - seg->vaddr);
		if (at > mod->unwind.size || len > mod->unwind.size - at)
			return -EFAULT;
		memcpy(buf, mod->unwind.image + at, len);
		return 0;
	}
	return -EFAULT;
}
