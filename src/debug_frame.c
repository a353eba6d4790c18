/* debug_frame.c — .debug_frame → .eh_frame (see debug_frame.h for why).
 *
 * Layout of both (DWARF 32-bit): u32 length, then u32 id. In .debug_frame a CIE has id
 * 0xffffffff and an FDE's id is its CIE's offset from the section start; in .eh_frame a CIE has
 * id 0 and an FDE's field holds the distance back from the field to its CIE. A .debug_frame CIE
 * of version 4 carries address_size and segment_selector_size after its augmentation string,
 * which .eh_frame (version 1 or 3) does not. With an empty augmentation string an .eh_frame FDE's
 * addresses are absolute 8-byte values, as in .debug_frame. */
#include "proftop/debug_frame.h"

#include "proftop/idmap.h"
#include "proftop/util.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>


struct converter {
	const unsigned char *in;
	size_t size;
	unsigned char *out;
	size_t out_len, out_cap;
	struct idmap cies;         /* .debug_frame offset of a converted CIE -> its output offset */
	int32_t *table;
	size_t nentries, table_cap;   /* entries, each two int32 */
};

static uint32_t get_u32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static void emit(struct converter *c, const void *data, size_t len)
{
	xgrow((void **)&c->out, &c->out_cap, c->out_len + len, 1);
	memcpy(c->out + c->out_len, data, len);
	c->out_len += len;
}

static void emit_u32(struct converter *c, uint32_t v)
{
	emit(c, &v, 4);
}

static void patch_u32(struct converter *c, size_t at, uint32_t v)
{
	memcpy(c->out + at, &v, 4);
}

/* A CIE's body (after length and id): version, augmentation, [v4: address and segment size],
 * then the rest unchanged. Version 4 becomes 3, which has the same uleb128 return register. */
static bool convert_cie(struct converter *c, const unsigned char *body, size_t len,
			uint64_t df_offset)
{
	const unsigned char *aug, *nul;
	size_t start = c->out_len;
	unsigned char version;

	if (len < 2)
		return false;
	version = body[0];
	aug = body + 1;
	nul = memchr(aug, '\0', len - 1);
	if (!nul || nul != aug) /* an augmentation we would have to interpret */
		return false;
	if (version != 1 && version != 3 && version != 4)
		return false;
	emit_u32(c, 0);  /* length, patched below */
	emit_u32(c, 0);  /* CIE id in .eh_frame */
	{
		unsigned char v = version == 4 ? 3 : version;

		emit(c, &v, 1);
	}
	emit(c, "", 1);
	if (version == 4) {
		if (len < 4 || body[2] != 8 || body[3] != 0) /* 8-byte addresses, no segments */
			return false;
		emit(c, body + 4, len - 4);
	} else {
		emit(c, body + 2, len - 2);
	}
	patch_u32(c, start, (uint32_t)(c->out_len - start - 4));
	if (start < IDMAP_MISSING)
		idmap_put(&c->cies, df_offset, (uint32_t)start);
	return true;
}

/* An FDE's body (after length and CIE pointer): initial location and range (8 bytes each), then
 * the instructions, unchanged. */
static bool convert_fde(struct converter *c, const unsigned char *body, size_t len,
			uint64_t cie_df_offset, uint64_t bias, uint64_t code_start)
{
	uint32_t cie = idmap_get(&c->cies, cie_df_offset);
	uint64_t location, range, runtime;
	size_t start = c->out_len;
	int64_t ip_offset;

	if (cie == IDMAP_MISSING || len < 16)
		return false;
	memcpy(&location, body, 8);
	memcpy(&range, body + 8, 8);
	if (!range)
		return false;
	runtime = location + bias;
	ip_offset = (int64_t)(runtime - code_start);
	if (ip_offset < INT32_MIN || ip_offset > INT32_MAX || start > INT32_MAX)
		return false;
	emit_u32(c, 0);
	emit_u32(c, (uint32_t)(start + 4 - cie));
	emit(c, &runtime, 8);
	emit(c, body + 8, len - 8);
	patch_u32(c, start, (uint32_t)(c->out_len - start - 4));
	xgrow((void **)&c->table, &c->table_cap, 2 * (c->nentries + 1), sizeof(*c->table));
	c->table[2 * c->nentries] = (int32_t)ip_offset;
	c->table[2 * c->nentries + 1] = (int32_t)start;
	c->nentries++;
	return true;
}

static int by_location(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return (x > y) - (x < y);
}

int debug_frame_convert(const unsigned char *in, size_t size, uint64_t bias, uint64_t code_start,
			struct eh_frame_image *out)
{
	struct converter c = { .in = in, .size = size };
	size_t off = 0;

	idmap_init(&c.cies);
	memset(out, 0, sizeof(*out));
	while (size - off >= 8) {
		uint32_t len = get_u32(in + off), id;

		if (len == 0xffffffffu || len < 4 || len > size - off - 4)
			break; /* 64-bit DWARF or a length past the end: stop here */
		id = get_u32(in + off + 4);
		if (id == 0xffffffffu)
			convert_cie(&c, in + off + 8, len - 4, off);
		else
			convert_fde(&c, in + off + 8, len - 4, id, bias, code_start);
		off += 4 + (size_t)len;
	}
	idmap_free(&c.cies);
	if (!c.nentries) {
		free(c.out);
		free(c.table);
		return -ENOENT;
	}
	qsort(c.table, c.nentries, 2 * sizeof(*c.table), by_location);
	out->eh_frame = c.out;
	out->eh_frame_size = c.out_len;
	out->table = c.table;
	out->table_entries = c.nentries;
	return 0;
}

void debug_frame_free(struct eh_frame_image *image)
{
	free(image->eh_frame);
	free(image->table);
	memset(image, 0, sizeof(*image));
}
