/* test_jitdump.c — jitdump records (jitdump.h): a real file, written by CPython 3.13's -X
 * perf_jit for a program calling two functions, reads as a header and whole records that add up
 * to the file, with a code load named for each function; and what a hostile file can hold is
 * refused or waited for: a name without its NUL, sizes below a record's fields or past the
 * limit, a code range that wraps, a record cut short. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "proftop/jitdump.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define PY313 "/root/.pyenv/versions/3.13.0/bin/python3.13"

/* The dump python writes for a program calling alpha and beta, read whole; NULL when this
 * machine has no CPython 3.13 (pyenv's). */
static uint8_t *real_dump(size_t *len)
{
	char path[64];
	FILE *f;
	uint8_t *buf;
	pid_t pid;
	int status;
	long size;

	if (access(PY313, X_OK))
		return NULL;
	pid = fork();
	if (pid == 0) {
		execl(PY313, PY313, "-X", "perf_jit", "-c",
		      "def alpha(): return 1\ndef beta(): return alpha()\nbeta()\n", (char *)NULL);
		_exit(127);
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	snprintf(path, sizeof(path), "/tmp/jit-%d.dump", (int)pid);
	f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	rewind(f);
	buf = malloc((size_t)size);
	assert_int_equal(fread(buf, 1, (size_t)size, f), (size_t)size);
	fclose(f);
	unlink(path);
	*len = (size_t)size;
	return buf;
}

static void real_file(void **state)
{
	size_t len, at;
	uint8_t *buf = real_dump(&len);
	uint32_t header;
	bool alpha = false, beta = false;
	unsigned loads = 0;

	(void)state;
	if (!buf) {
		print_message(PY313 ": not on this machine (pyenv's), not tested\n");
		return;
	}
	assert_int_equal(jitdump_header(buf, len, &header), 0);
	for (at = header; at < len;) {
		struct jitdump_record r;

		assert_int_equal(jitdump_record(buf + at, len - at, &r), 0);
		if (r.id == JITDUMP_CODE_LOAD) {
			loads++;
			assert_true(r.size > 0 && r.name_len == strlen(r.name));
			alpha |= strstr(r.name, "py::alpha:") == r.name;
			beta |= strstr(r.name, "py::beta:") == r.name;
		}
		at += r.total_size;
	}
	assert_int_equal(at, len); /* whole records, to the end */
	assert_true(loads >= 2 && alpha && beta);
	/* Cut anywhere inside a record: more is needed, never a wrong record. */
	{
		struct jitdump_record r;

		assert_int_equal(jitdump_record(buf + header, 8, &r), -EAGAIN);
		assert_int_equal(jitdump_header(buf, 8, &header), -EAGAIN);
	}
	free(buf);
}

/* A code load record of total bytes with the name (its NUL written when terminated). */
static size_t code_load(uint8_t *buf, uint32_t total, uint64_t addr, uint64_t size,
			const char *name, bool terminated)
{
	uint32_t id = JITDUMP_CODE_LOAD;
	size_t n = strlen(name) + terminated;

	memset(buf, 0, 256);
	memcpy(buf, &id, 4);
	memcpy(buf + 4, &total, 4);
	memcpy(buf + 16 + 16, &addr, 8);
	memcpy(buf + 16 + 24, &size, 8);
	memcpy(buf + 56, name, n);
	return 56 + n;
}

static void hostile_records(void **state)
{
	uint8_t buf[256];
	struct jitdump_record r;
	uint32_t header;
	size_t len;

	(void)state;
	len = code_load(buf, 56 + 4, 0x1000, 16, "abc", true);
	assert_int_equal(jitdump_record(buf, len, &r), 0);
	assert_string_equal(r.name, "abc");
	assert_true(r.addr == 0x1000 && r.size == 16);
	/* The name runs to the record's end without a NUL. */
	len = code_load(buf, 56 + 3, 0x1000, 16, "abc", false);
	assert_int_equal(jitdump_record(buf, len, &r), -EINVAL);
	/* Only part of the name given, the record longer: wait for it. */
	len = code_load(buf, 200, 0x1000, 16, "abc", false);
	assert_int_equal(jitdump_record(buf, len, &r), -EAGAIN);
	/* Below its fields, past the limit, a range that wraps. */
	len = code_load(buf, 40, 0x1000, 16, "abc", true);
	assert_int_equal(jitdump_record(buf, len, &r), -EINVAL);
	len = code_load(buf, JITDUMP_RECORD_MAX + 1, 0x1000, 16, "abc", true);
	assert_int_equal(jitdump_record(buf, len, &r), -EINVAL);
	len = code_load(buf, 60, UINT64_MAX - 4, 16, "abc", true);
	assert_int_equal(jitdump_record(buf, len, &r), -EINVAL);
	/* No magic, a header below its fields. */
	memset(buf, 0, sizeof(buf));
	assert_int_equal(jitdump_header(buf, 64, &header), -EINVAL);
	{
		uint32_t magic = JITDUMP_MAGIC, version = 1, small = 8;

		memcpy(buf, &magic, 4);
		memcpy(buf + 4, &version, 4);
		memcpy(buf + 8, &small, 4);
		assert_int_equal(jitdump_header(buf, 64, &header), -EINVAL);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(real_file),
		cmocka_unit_test(hostile_records),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
