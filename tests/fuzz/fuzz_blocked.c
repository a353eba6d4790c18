/* libFuzzer target: what proftop reads of the threads found waiting at an attach (blocked.h), on
 * arbitrary bytes. The first byte picks the reader: /proc/PID/task/TID/status, .../syscall or
 * .../stack (each as the NUL-terminated text util_read_small() gives), or a SAMPLE_RECORD_BLOCKED
 * record as the collector parses it. Beyond not crashing: every kernel frame the stack parser
 * writes reads back through blocked_next_kframe() as a name without spaces and a module, and the
 * frames of a record that parses lie inside it.
 *
 * Seeds in corpus/fuzz_blocked: a sleeping process's status, syscall and stack files, and a
 * record built from them. */
#include "proftop/blocked.h"
#include "proftop/sample.h"

#include <stdlib.h>
#include <string.h>

static void kstack(const char *text)
{
	char out[BLOCKED_KERNEL_MAX];
	size_t len = blocked_parse_kstack(text, out, sizeof(out)), n = 0;
	const char *at = out, *name, *module;

	if (len > sizeof(out))
		abort();
	while (blocked_next_kframe(&at, out + len, &name, &module)) {
		if (!*name || strchr(name, ' ') || (module && strchr(module, ' ')))
			abort();
		n++;
	}
	if (at != out + len || n > BLOCKED_KFRAMES_MAX)
		abort();
}

static void record(const uint8_t *data, size_t size)
{
	struct blockedrec b;
	struct sample_record r;
	const char *kernel, *name, *module;
	size_t kernel_len;

	if (blocked_parse(data, size, &b, &r, &kernel, &kernel_len))
		return;
	if (kernel < (const char *)data || kernel + kernel_len > (const char *)data + size ||
	    (r.sample.stack && r.sample.stack + r.sample.stack_size > data + size))
		abort();
	while (blocked_next_kframe(&kernel, kernel + kernel_len, &name, &module))
		kernel_len -= strlen(name) + 1 + (module ? strlen(module) : 0) + 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text;
	char state;
	uint64_t a, b;

	if (size < 1)
		return 0;
	if (data[0] % 4 == 3) {
		record(data + 1, size - 1);
		return 0;
	}
	text = malloc(size);
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	switch (data[0] % 4) {
	case 0:
		blocked_parse_status(text, &state, &a);
		break;
	case 1:
		blocked_parse_syscall(text, &a, &b);
		break;
	default:
		kstack(text);
		break;
	}
	free(text);
	return 0;
}
