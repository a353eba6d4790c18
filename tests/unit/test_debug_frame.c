/* Unit tests of the .debug_frame → .eh_frame converter on hand-made sections. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "proftop/debug_frame.h"

#include <errno.h>
#include <string.h>

struct section {
	unsigned char bytes[512];
	size_t len;
};

static void put(struct section *s, const void *p, size_t n)
{
	memcpy(s->bytes + s->len, p, n);
	s->len += n;
}

static void put32(struct section *s, uint32_t v) { put(s, &v, 4); }
static void put64(struct section *s, uint64_t v) { put(s, &v, 8); }

/* A CIE: version, "" augmentation, [v4: address size 8, segment size 0], code align 1, data
 * align -8, return register 16, then DW_CFA_def_cfa rsp+8, DW_CFA_offset rip at cfa-8. */
static size_t add_cie(struct section *s, unsigned char version)
{
	static const unsigned char tail[] = { 0x01, 0x78, 0x10, 0x0c, 0x07, 0x08, 0x90, 0x01 };
	size_t at = s->len;
	size_t body = 4 + 1 + 1 + (version == 4 ? 2 : 0) + sizeof(tail);
	size_t pad = (8 - (4 + body) % 8) % 8;

	put32(s, (uint32_t)(body + pad));
	put32(s, 0xffffffffu);
	put(s, &version, 1);
	put(s, "", 1);
	if (version == 4)
		put(s, "\x08\x00", 2);
	put(s, tail, sizeof(tail));
	for (size_t i = 0; i < pad; i++)
		put(s, "\0", 1); /* DW_CFA_nop */
	return at;
}

static void add_fde(struct section *s, size_t cie, uint64_t start, uint64_t size)
{
	put32(s, 4 + 16 + 4);
	put32(s, (uint32_t)cie);
	put64(s, start);
	put64(s, size);
	put32(s, 0); /* four DW_CFA_nop */
}

static void converts_and_rebases(void **state)
{
	(void)state;
	struct section s = { .len = 0 };
	struct eh_frame_image img;
	size_t cie1 = add_cie(&s, 1), cie4;
	uint64_t bias = 0x7f0000000000ull, code = 0x7f0000001000ull;

	add_fde(&s, cie1, 0x2000, 0x100);
	cie4 = add_cie(&s, 4);
	add_fde(&s, cie4, 0x1000, 0x80);
	assert_int_equal(debug_frame_convert(s.bytes, s.len, bias, code, &img), 0);
	assert_int_equal(img.table_entries, 2);
	/* Sorted by location, relative to the code start. */
	assert_int_equal(img.table[0], 0x1000 + bias - code);
	assert_int_equal(img.table[2], 0x2000 + bias - code);
	for (size_t i = 0; i < 2; i++) {
		uint32_t fde = (uint32_t)img.table[2 * i + 1], len, back, cie_id;
		uint64_t start;

		memcpy(&len, img.eh_frame + fde, 4);
		memcpy(&back, img.eh_frame + fde + 4, 4);
		memcpy(&start, img.eh_frame + fde + 8, 8);
		assert_true(fde + 4 + len <= img.eh_frame_size);
		assert_int_equal(start, (uint64_t)img.table[2 * i] + code);
		/* The CIE pointer leads back to a CIE (id 0) of version 1 or 3. */
		assert_true(back <= fde + 4);
		memcpy(&cie_id, img.eh_frame + fde + 4 - back + 4, 4);
		assert_int_equal(cie_id, 0);
		assert_true(img.eh_frame[fde + 4 - back + 8] == 1 || img.eh_frame[fde + 4 - back + 8] == 3);
	}
	debug_frame_free(&img);
}

static void rejects_garbage(void **state)
{
	(void)state;
	struct section s = { .len = 0 };
	struct eh_frame_image img;
	unsigned char junk[64];

	memset(junk, 0xff, sizeof(junk));
	assert_int_equal(debug_frame_convert(junk, sizeof(junk), 0, 0, &img), -ENOENT);
	assert_int_equal(debug_frame_convert(junk, 3, 0, 0, &img), -ENOENT);
	/* An FDE whose CIE never came, and one with a length past the end. */
	add_fde(&s, 0x100, 0x1000, 0x10);
	put32(&s, 0x1000);
	put32(&s, 0);
	assert_int_equal(debug_frame_convert(s.bytes, s.len, 0, 0x1000, &img), -ENOENT);
	/* A CIE with an augmentation is left out, with its FDEs. */
	s.len = 0;
	put32(&s, 12);
	put32(&s, 0xffffffffu);
	put(&s, "\x01zR\0\x01\x78\x10\x00", 8);
	add_fde(&s, 0, 0x1000, 0x10);
	assert_int_equal(debug_frame_convert(s.bytes, s.len, 0, 0x1000, &img), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(converts_and_rebases),
		cmocka_unit_test(rejects_garbage),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
