/* debugfile.c — finding a module's separate debug file (see debugfile.h for where and how).
 *
 * One walk over an ELF file's sections gives what ties it to a debug file (its build-id, its
 * .gnu_debuglink) and whether it could be one (a .symtab): the module and every candidate are
 * read the same way. A candidate is opened with libelf on its descriptor and handed over open;
 * the caller closes it with debugfile_close() once it has copied what it needs. */
#include "proftop/debugfile.h"

#include <errno.h>
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

#include "proftop/util.h"

/* A file found by its .gnu_debuglink alone is told by the CRC-32 of all of it, which is not read
 * past this size: the link may name any file, a sparse terabyte among them, and the collector
 * would read it all (debug files that big come with build-ids). */
#define DEBUGFILE_CRC_MAX (1ull << 30)

/* What ties an ELF file to a debug file, from its sections. */
struct debugfile_ident {
	unsigned char build_id[DEBUGFILE_BUILD_ID_MAX];
	size_t build_id_len;
	bool debuglink_seen;	/* a .gnu_debuglink section was met (only the first counts) */
	const char *debuglink;	/* in the ELF's data: valid while it is open; NULL: none */
	uint32_t debuglink_crc;
	bool symtab;		/* it has a .symtab, which is what a debug file is for */
};

/* The NT_GNU_BUILD_ID note of one SHT_NOTE section. Returns its length, 0 when it has none. */
static size_t debugfile_note_build_id(Elf_Scn *scn, unsigned char *out)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nhdr;

	while (data && (off = gelf_getnote(data, off, &nhdr, &name_off, &desc_off))) {
		if (nhdr.n_type != NT_GNU_BUILD_ID || nhdr.n_namesz != 4 ||
		    memcmp((char *)data->d_buf + name_off, "GNU", 4) ||
		    !nhdr.n_descsz || nhdr.n_descsz > DEBUGFILE_BUILD_ID_MAX)
			continue;
		memcpy(out, (char *)data->d_buf + desc_off, nhdr.n_descsz);
		return nhdr.n_descsz;
	}
	return 0;
}

/* .gnu_debuglink: a file name, NUL, padding to 4 bytes, and the CRC32 of that file in the ELF's
 * byte order. */
static void debugfile_debuglink(Elf *elf, Elf_Scn *scn, struct debugfile_ident *id)
{
	const unsigned char *p, *crc;
	const char *ident;
	Elf_Data *data;
	size_t len;

	if (!(data = elf_getdata(scn, NULL)) || !data->d_buf)
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
		id->debuglink_crc = (uint32_t)crc[0] << 24 | (uint32_t)crc[1] << 16 |
				    (uint32_t)crc[2] << 8 | crc[3];
	else
		id->debuglink_crc = (uint32_t)crc[3] << 24 | (uint32_t)crc[2] << 16 |
				    (uint32_t)crc[1] << 8 | crc[0];
	id->debuglink = (const char *)p;
}

static bool debugfile_is_debuglink(Elf *elf, bool names, size_t shstrndx, const GElf_Shdr *shdr)
{
	const char *name = names ? elf_strptr(elf, shstrndx, shdr->sh_name) : NULL;

	return name && !strcmp(name, ".gnu_debuglink");
}

/* The build-id (from whichever SHT_NOTE section has it), the first .gnu_debuglink, and whether
 * elf has a .symtab. */
static void debugfile_scan(Elf *elf, struct debugfile_ident *id)
{
	size_t shstrndx = 0;
	bool names = !elf_getshdrstrndx(elf, &shstrndx);
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	memset(id, 0, sizeof(*id));
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &shdr))
			continue;
		if (shdr.sh_type == SHT_SYMTAB)
			id->symtab = true;
		if (shdr.sh_type == SHT_NOTE && !id->build_id_len)
			id->build_id_len = debugfile_note_build_id(scn, id->build_id);
		if (!id->debuglink_seen && debugfile_is_debuglink(elf, names, shstrndx, &shdr)) {
			id->debuglink_seen = true;
			debugfile_debuglink(elf, scn, id);
		}
	}
}

/* CRC-32 (the zlib/IEEE one, reflected 0xedb88320), which .gnu_debuglink uses. */
static int debugfile_crc(int fd, uint32_t *out)
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

/* Whether the candidate open in debug is the module's debug file: same build-id when both have
 * one; otherwise only a file found by debuglink can tell, by its CRC. NULL when it is, else why
 * not. */
static const char *debugfile_mismatch(const struct debugfile *debug, const struct debugfile_ident *mod,
				      bool by_build_id)
{
	struct debugfile_ident id;
	struct stat st;
	uint32_t crc = 0;

	debugfile_scan(debug->elf, &id);
	if (!id.symtab)
		return "it has no .symtab";
	if (mod->build_id_len && id.build_id_len)
		return id.build_id_len == mod->build_id_len &&
		       !memcmp(id.build_id, mod->build_id, id.build_id_len) ? NULL :
		       "its build-id differs: another build";
	if (by_build_id)
		return "it has no build-id";
	if (fstat(debug->fd, &st) || (uint64_t)st.st_size > DEBUGFILE_CRC_MAX)
		return "it is over 1 GiB: its CRC-32 is not read";
	if (debugfile_crc(debug->fd, &crc))
		return "it cannot be read";
	return crc == mod->debuglink_crc ? NULL :
	       "its CRC-32 is not the one .gnu_debuglink names: another build";
}

/* Open path as the debug file of the module origin and mod describe. Returns 0 or -ENOENT; a
 * file that is there but is not the debug file is named in *rejected (unless it already names
 * one), as shown (path without the prefix of a process's root). */
static int debugfile_try(const char *path, const char *shown, const struct debugfile_origin *origin,
			 const struct debugfile_ident *mod, bool by_build_id, struct debugfile *out,
			 char **rejected)
{
	const char *why = NULL;
	struct stat st;

	out->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (out->fd < 0)
		return -ENOENT;
	if (fstat(out->fd, &st) || (st.st_dev == origin->dev && st.st_ino == origin->ino))
		goto out_close;
	if (!S_ISREG(st.st_mode)) {
		why = "not a regular file";
		goto out_close;
	}
	out->elf = elf_begin(out->fd, ELF_C_READ, NULL);
	if (!out->elf || elf_kind(out->elf) != ELF_K_ELF)
		why = "not an ELF file";
	else if (!(why = debugfile_mismatch(out, mod, by_build_id))) {
		out->path = xstrdup(shown);
		return 0;
	}
	elf_end(out->elf);
out_close:
	close(out->fd);
	*out = (struct debugfile){ .fd = -1 };
	if (why && rejected && !*rejected)
		*rejected = xasprintf("%s is not its debug file (%s)", shown, why);
	return -ENOENT;
}

/* The debug file named by build-id under prefix (a process's root, or "" for ours). */
static int debugfile_by_build_id(const char *prefix, const struct debugfile_origin *origin,
				 const struct debugfile_ident *mod, struct debugfile *out, char **rejected)
{
	char path[PATH_MAX], hex[2 * DEBUGFILE_BUILD_ID_MAX + 1];
	int n;

	if (mod->build_id_len < 2)
		return -ENOENT;
	for (size_t i = 0; i < mod->build_id_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", mod->build_id[i]);
	n = snprintf(path, sizeof(path), "%s/usr/lib/debug/.build-id/%.2s/%s.debug", prefix, hex,
		     hex + 2);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENOENT;
	return debugfile_try(path, path + strlen(prefix), origin, mod, true, out, rejected);
}

/* The debug file named by debuglink, around the module's directory under prefix: beside it, in
 * .debug/ beside it, under /usr/lib/debug. */
static int debugfile_by_debuglink(const char *prefix, const struct debugfile_origin *origin,
				  const struct debugfile_ident *mod, struct debugfile *out, char **rejected)
{
	/* Around the file's directory: before it, after it. */
	static const char *const around[3][2] = {
		{ "", "" }, { "", "/.debug" }, { "/usr/lib/debug", "" },
	};
	char path[PATH_MAX];
	int dir_len = 0, n;

	if (!mod->debuglink)
		return -ENOENT;
	for (const char *p = origin->path; p < origin->path + origin->path_len; p++)
		if (*p == '/')
			dir_len = (int)(p - origin->path);
	for (int k = 0; k < 3; k++) {
		n = snprintf(path, sizeof(path), "%s%s%.*s%s/%s", prefix, around[k][0], dir_len,
			     origin->path, around[k][1], mod->debuglink);
		if (n > 0 && (size_t)n < sizeof(path) &&
		    !debugfile_try(path, path + strlen(prefix), origin, mod, false, out, rejected))
			return 0;
	}
	return -ENOENT;
}

int debugfile_open(struct debugfile *out, Elf *elf, const struct debugfile_origin *origin,
		   char **rejected)
{
	char root[40];
	const char *prefix[2] = { root, "" };
	struct debugfile_ident mod;

	*out = (struct debugfile){ .fd = -1 };
	if (rejected)
		*rejected = NULL;
	debugfile_scan(elf, &mod);
	snprintf(root, sizeof(root), "/proc/%d/root", (int)origin->pid);
	for (int i = 0; i < 2; i++)
		if (!debugfile_by_build_id(prefix[i], origin, &mod, out, rejected) ||
		    !debugfile_by_debuglink(prefix[i], origin, &mod, out, rejected))
			return 0;
	return -ENOENT;
}

int debugfile_open_path(struct debugfile *out, Elf *elf, const char *path,
			const struct debugfile_origin *origin, char **rejected)
{
	struct debugfile_ident mod;

	*out = (struct debugfile){ .fd = -1 };
	if (rejected)
		*rejected = NULL;
	debugfile_scan(elf, &mod);
	if (!mod.build_id_len) {
		if (rejected)
			*rejected = xasprintf("%s cannot be checked against it: it has no build-id", path);
		return -ENOENT;
	}
	if (debugfile_try(path, path, origin, &mod, true, out, rejected)) {
		if (rejected && !*rejected)
			*rejected = xasprintf("%s cannot be opened", path);
		return -ENOENT;
	}
	return 0;
}

size_t debugfile_build_id(Elf *elf, unsigned char *out)
{
	struct debugfile_ident id;

	debugfile_scan(elf, &id);
	memcpy(out, id.build_id, id.build_id_len);
	return id.build_id_len;
}

void debugfile_close(struct debugfile *debug)
{
	if (debug->elf)
		elf_end(debug->elf);
	if (debug->fd >= 0)
		close(debug->fd);
	free(debug->path);
	*debug = (struct debugfile){ .fd = -1 };
}
