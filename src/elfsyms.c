/* elfsyms.c — named symbols of an ELF file (elfsyms.h), read with libelf. */
#include "proftop/elfsyms.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include <unistd.h>

static void symbols_in(Elf *elf, Elf_Scn *scn, const char *const *names, uint64_t *values,
		       uint64_t *sizes, size_t n)
{
	GElf_Shdr shdr;
	Elf_Data *data;

	if (!gelf_getshdr(scn, &shdr) || (shdr.sh_type != SHT_DYNSYM && shdr.sh_type != SHT_SYMTAB) ||
	    !shdr.sh_entsize || !(data = elf_getdata(scn, NULL)))
		return;
	for (size_t i = 0; i < shdr.sh_size / shdr.sh_entsize; i++) {
		GElf_Sym sym;
		const char *name;

		if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF || !sym.st_value ||
		    !(name = elf_strptr(elf, shdr.sh_link, sym.st_name)))
			continue;
		for (size_t k = 0; k < n; k++)
			if (!strcmp(name, names[k])) {
				values[k] = sym.st_value;
				if (sizes)
					sizes[k] = sym.st_size;
			}
	}
}

int elfsyms_find(const char *path, const char *const *names, uint64_t *values, uint64_t *sizes,
		 size_t n)
{
	int fd, err = 0;
	Elf *elf;

	memset(values, 0, n * sizeof(*values));
	if (sizes)
		memset(sizes, 0, n * sizeof(*sizes));
	if (!path || elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF) {
		for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));)
			symbols_in(elf, scn, names, values, sizes, n);
	} else {
		err = -ENOEXEC;
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}
