/* libFuzzer target: the symbolizer's ELF loading (segments, symbol tables, notes, debuglink) on
 * arbitrary bytes. The input becomes a memfd that this process maps, exactly as a loader would map
 * a file, and addresses across the mapping are resolved through the public API.
 *
 * The seed corpus/fuzz_elf/seed.so is a 5.6 KiB shared object of three small functions, built with
 * gcc -O1 -shared -fPIC -nostdlib -Wl,-z,max-page-size=0x1000 -Wl,-z,noseparate-code
 * -Wl,--build-id and stripped of .comment: headers, .symtab, .dynsym and a build-id note to
 * mutate. */
#include "proftop/symbols.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct symbolizer *s;
	struct symbol sym;
	char *base;
	int fd;

	if (!size)
		return 0;
	fd = memfd_create("fuzz_elf", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	base = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (base == MAP_FAILED)
		return 0;
	s = symbolizer_new();
	symbolizer_load_proc(s, getpid());
	for (size_t off = 0; off < size; off += 61) {
		symbolizer_resolve(s, getpid(), (uint64_t)(uintptr_t)(base + off), &sym);
		if (sym.function)
			(void)strlen(sym.function);
	}
	symbolizer_free(s);
	munmap(base, size);
	return 0;
}
