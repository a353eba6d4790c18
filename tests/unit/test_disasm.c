/* Unit tests of the disassembly annotate shows (disasm.c), on a real shared object assembled
 * here: a function is listed whole, bytes capstone cannot decode included; a range that is not a
 * function of the file is refused. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "proftop/disasm.h"
#include "proftop/module.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* with_data: 0x06 (push %es) and 0xd6 (salc) do not exist in 64-bit mode. */
static const char asm_source[] =
	"	.text\n"
	"	.globl with_data\n"
	"	.type with_data, @function\n"
	"with_data:\n"
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	"	.byte 0x06, 0xd6\n"
	"	nop\n"
	"	pop %rbp\n"
	"	ret\n"
	"	.size with_data, .-with_data\n"
	"	.section .note.GNU-stack,\"\",@progbits\n";

static char tmpdir[64], so_path[128];

static int setup(void **state)
{
	char cmd[512];
	FILE *f;

	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/proftop-disasm-XXXXXX");
	if (!mkdtemp(tmpdir) || module_init())
		return -1;
	snprintf(cmd, sizeof(cmd), "%s/code.s", tmpdir);
	f = fopen(cmd, "w");
	if (!f || fputs(asm_source, f) < 0 || fclose(f))
		return -1;
	snprintf(so_path, sizeof(so_path), "%s/code.so", tmpdir);
	snprintf(cmd, sizeof(cmd), "cc -shared -nostdlib -o '%s' '%s/code.s'", so_path, tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* with_data's link-time range, from the module reader. */
static void function_range(uint64_t *start, uint64_t *end)
{
	struct module *mod = module_new("code.so", 7);
	int fd = open(so_path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	const char *name;

	assert_true(fd >= 0 && !fstat(fd, &st));
	assert_int_equal(module_load_file(mod, fd, (size_t)st.st_size, NULL), 0);
	close(fd);
	for (uint64_t a = module_unwind(mod)->code_start;; a++) {
		name = module_lookup_range(mod, a, start, end);
		if (name && !strcmp(name, "with_data"))
			break;
		assert_true(a < module_unwind(mod)->code_end);
	}
	module_free(mod);
}

/* Undecodable bytes are ".byte" lines, and the listing goes on to the end of the function.
 * fuzz_disasm found it ending at them: here after mov, so the samples of nop, pop and ret
 * counted to mov. */
static void data_bytes_listed(void **state)
{
	struct disasm *d = disasm_new();
	struct disasm_insn *insns;
	uint64_t start, end;
	const char *why;
	size_t n;

	(void)state;
	function_range(&start, &end);
	assert_int_equal(disasm_function(d, so_path, start, end, &insns, &n, &why), 0);
	assert_int_equal(n, 7);
	assert_string_equal(insns[0].text, "push rbp");
	assert_string_equal(insns[2].text, ".byte 0x06");
	assert_int_equal(insns[2].addr, start + 4);
	assert_string_equal(insns[3].text, ".byte 0xd6");
	assert_string_equal(insns[4].text, "nop");
	assert_string_equal(insns[6].text, "ret");
	assert_int_equal(insns[6].addr, end - 1);
	free(insns);
	/* One byte in: not a function of the file. */
	assert_int_equal(disasm_function(d, so_path, start + 1, end, &insns, &n, &why), -ESTALE);
	assert_null(insns);
	disasm_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(data_bytes_listed),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
