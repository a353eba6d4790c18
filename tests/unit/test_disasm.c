/* Unit tests of the disassembly annotate shows (disasm.c), on real shared objects made here: a
 * function is listed whole, bytes capstone cannot decode included, each instruction where the one
 * before ends; a range that is not a function of the file is refused. An inlined function's code is
 * its copies in the functions given, on its own lines (a -O2 -g build of a helper inlined twice). */
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

/* mix() inlined into one() and two(); its body is on line 3. */
static const char c_source[] =
	"static inline __attribute__((always_inline)) unsigned long mix(unsigned long x)\n"
	"{\n"
	"	return x * 6364136223846793005ul + 1442695040888963407ul;\n"
	"}\n"
	"unsigned long one(unsigned long x) { return mix(x) ^ 1; }\n"
	"unsigned long two(unsigned long x) { return mix(x >> 3) ^ 2; }\n";

static char tmpdir[64], so_path[128], inl_path[128];

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
	if (system(cmd))
		return -1;
	snprintf(cmd, sizeof(cmd), "%s/inl.c", tmpdir);
	f = fopen(cmd, "w");
	if (!f || fputs(c_source, f) < 0 || fclose(f))
		return -1;
	snprintf(inl_path, sizeof(inl_path), "%s/inl.so", tmpdir);
	snprintf(cmd, sizeof(cmd), "cc -O2 -g -fPIC -shared -nostdlib -o '%s' '%s/inl.c'", inl_path,
		 tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* The link-time range of the function called want in the file at path, from the module reader. */
static void range_of(const char *path, const char *want, uint64_t *start, uint64_t *end)
{
	struct module *mod = module_new("code.so", 7);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	const char *name;

	assert_true(fd >= 0 && !fstat(fd, &st));
	assert_int_equal(module_load_file(mod, fd, (size_t)st.st_size, NULL), 0);
	close(fd);
	for (uint64_t a = module_unwind(mod)->code_start;; a++) {
		name = module_lookup_range(mod, a, start, end);
		if (name && !strcmp(name, want))
			break;
		assert_true(a < module_unwind(mod)->code_end);
	}
	module_free(mod);
}

static void function_range(uint64_t *start, uint64_t *end)
{
	range_of(so_path, "with_data", start, end);
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

/* mix()'s copies in one() and two(): only their instructions, each on mix's line 3 (the
 * functions' own frames have them on the line of the call, 5 or 6), the multiply among them in both; none for a function
 * not inlined there; a range that is not the file's function is stale. */
static void inlined_copies(void **state)
{
	struct disasm *d = disasm_new();
	struct disasm_range ranges[2], moved;
	struct disasm_insn *insns;
	size_t n, imuls[2] = { 0, 0 };
	const char *why = NULL;

	(void)state;
	range_of(inl_path, "one", &ranges[0].start, &ranges[0].end);
	range_of(inl_path, "two", &ranges[1].start, &ranges[1].end);
	if (ranges[1].start < ranges[0].start) {
		moved = ranges[0];
		ranges[0] = ranges[1];
		ranges[1] = moved;
	}
	assert_int_equal(disasm_inlined(d, inl_path, "mix", ranges, 2, &insns, &n, &why), 0);
	assert_true(n >= 2);
	for (size_t i = 0; i < n; i++) {
		int in = insns[i].addr >= ranges[1].start;

		assert_true(insns[i].addr >= ranges[in].start && insns[i].addr < ranges[in].end);
		assert_true(!i || insns[i].addr > insns[i - 1].addr);
		assert_non_null(insns[i].file);
		assert_non_null(strstr(insns[i].file, "inl.c"));
		assert_int_equal(insns[i].line, 3);
		imuls[in] += !strncmp(insns[i].text, "imul", 4);
	}
	assert_true(imuls[0] >= 1 && imuls[1] >= 1);
	free(insns);
	/* The same multiply as the function's own frame has it: on the line of the call. */
	assert_int_equal(disasm_function(d, inl_path, ranges[0].start, ranges[0].end, &insns, &n,
					 &why), 0);
	for (size_t i = 0; i < n; i++)
		if (!strncmp(insns[i].text, "imul", 4))
			assert_true(insns[i].line == 5 || insns[i].line == 6);
	free(insns);
	assert_int_equal(disasm_inlined(d, inl_path, "one", ranges, 2, &insns, &n, &why), -ENOENT);
	assert_null(insns);
	assert_non_null(why);
	moved = (struct disasm_range){ ranges[0].start + 1, ranges[0].end };
	assert_int_equal(disasm_inlined(d, inl_path, "mix", &moved, 1, &insns, &n, &why), -ESTALE);
	assert_null(insns);
	disasm_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(data_bytes_listed),
		cmocka_unit_test(inlined_copies),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
