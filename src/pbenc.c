/* pbenc.c — protocol buffers' wire format (pbenc.h). */
#include "proftop/pbenc.h"

#include "proftop/util.h"

#include <stdlib.h>
#include <string.h>

void pb_raw(struct pb *b, const void *data, size_t len)
{
	if (!len)
		return;
	xgrow((void **)&b->buf, &b->cap, b->len + len, 1);
	memcpy(b->buf + b->len, data, len);
	b->len += len;
}

void pb_varint(struct pb *b, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;

	do {
		tmp[n++] = (uint8_t)(v & 0x7f) | (v > 0x7f ? 0x80 : 0);
		v >>= 7;
	} while (v);
	pb_raw(b, tmp, n);
}

static size_t varint_size(uint64_t v)
{
	size_t n = 1;

	while (v > 0x7f) {
		v >>= 7;
		n++;
	}
	return n;
}

void pb_uint(struct pb *b, unsigned field, uint64_t v)
{
	if (!v)
		return;
	pb_varint(b, (uint64_t)field << 3 | PB_WIRE_VARINT);
	pb_varint(b, v);
}

void pb_fixed64(struct pb *b, unsigned field, uint64_t v)
{
	uint8_t le[8];

	if (!v)
		return;
	for (int i = 0; i < 8; i++)
		le[i] = (uint8_t)(v >> (8 * i));
	pb_varint(b, (uint64_t)field << 3 | PB_WIRE_FIXED64);
	pb_raw(b, le, sizeof(le));
}

void pb_bytes(struct pb *b, unsigned field, const void *data, size_t len)
{
	pb_varint(b, (uint64_t)field << 3 | PB_WIRE_BYTES);
	pb_varint(b, len);
	pb_raw(b, data, len);
}

void pb_string(struct pb *b, unsigned field, const char *s)
{
	pb_bytes(b, field, s, strlen(s));
}

void pb_message(struct pb *b, unsigned field, struct pb *msg)
{
	pb_bytes(b, field, msg->buf, msg->len);
	msg->len = 0;
}

void pb_packed(struct pb *b, unsigned field, const uint64_t *v, size_t n)
{
	size_t len = 0;

	if (!n)
		return;
	for (size_t i = 0; i < n; i++)
		len += varint_size(v[i]);
	pb_varint(b, (uint64_t)field << 3 | PB_WIRE_BYTES);
	pb_varint(b, len);
	for (size_t i = 0; i < n; i++)
		pb_varint(b, v[i]);
}

void pb_free(struct pb *b)
{
	free(b->buf);
	*b = (struct pb){ 0 };
}
