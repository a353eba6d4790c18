/* libFuzzer target: pyframes.c's readers of a CPython process's memory (thread states, frame
 * chains, code objects, str objects), over a forged memory image. The input: one byte choosing
 * the minor version (3.8 to 3.13), four bytes of the thread id looked for, then the memory,
 * mapped at 0x10000 (the runtime at its start; the code type is the address 0x10008, so a
 * forged code object's ob_type can name it). Reads outside the image fail as a process's would.
 * Checks: never more frames than asked for, every name and file a NUL-terminated string of its
 * buffer, an error or a count as pyframes.h says.
 *
 * Seeds in corpus/fuzz_pyframes: a 3.11 image of one thread with two frames, a 3.8 image whose
 * frame chain loops. */
#include "proftop/pyframes.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define BASE 0x10000u

struct image {
	const uint8_t *data;
	size_t size;
};

static int read_image(void *arg, uint64_t addr, void *buf, size_t len)
{
	const struct image *m = arg;

	if (addr < BASE || addr - BASE > m->size || len > m->size - (addr - BASE))
		return -EIO;
	memcpy(buf, m->data + (addr - BASE), len);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pyframes_symbols sym = { .runtime = BASE, .code_type = BASE + 8, .name_major = 3 };
	struct image m;
	struct pyframes py;
	struct pyframe frames[8];
	int32_t tid;
	int n;

	if (size < 5)
		return 0;
	sym.name_minor = 8 + data[0] % 6;
	memcpy(&tid, data + 1, sizeof(tid));
	m = (struct image){ data + 5, size - 5 };
	if (pyframes_open(&py, &sym, 0, read_image, &m))
		return 0;
	n = pyframes_stack(&py, tid, frames, 8);
	if (n > 0 && pyframes_stack(&py, tid, frames, 8) != n) /* again: through the code cache */
		abort();
	pyframes_close(&py);
	if (n > 8 || (n < 0 && n != -ESRCH && n != -EIO && n != -EBADMSG))
		abort();
	for (int i = 0; i < n; i++)
		if (!memchr(frames[i].name, 0, sizeof(frames[i].name)) ||
		    !memchr(frames[i].file, 0, sizeof(frames[i].file)))
			abort();
	return 0;
}
