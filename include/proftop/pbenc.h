/* pbenc.h — protocol buffers' wire format, written by hand (pprof's profile.proto and OTLP's
 * profiles): a message is a sequence of (field << 3 | wire type) keys, each followed by a varint,
 * eight little-endian bytes, or a length and that many bytes. Fields equal to their default (0,
 * "") are left out, as proto3 does. */
#ifndef PROFTOP_PBENC_H
#define PROFTOP_PBENC_H

#include <stddef.h>
#include <stdint.h>

enum { PB_WIRE_VARINT = 0, PB_WIRE_FIXED64 = 1, PB_WIRE_BYTES = 2 };

/* A growing buffer a message is encoded into. */
struct pb {
	uint8_t *buf;
	size_t len, cap;
};

void pb_raw(struct pb *b, const void *data, size_t len);
void pb_varint(struct pb *b, uint64_t v);
/* A varint field (uint32/64, int32/64 as two's complement, bool, enum); 0 is left out. */
void pb_uint(struct pb *b, unsigned field, uint64_t v);
void pb_fixed64(struct pb *b, unsigned field, uint64_t v);
/* A length-delimited field: bytes, a string (always written), or an embedded message. */
void pb_bytes(struct pb *b, unsigned field, const void *data, size_t len);
void pb_string(struct pb *b, unsigned field, const char *s);
/* An embedded message that msg holds; msg is emptied for reuse. */
void pb_message(struct pb *b, unsigned field, struct pb *msg);
/* A packed repeated varint field; nothing when n is 0. */
void pb_packed(struct pb *b, unsigned field, const uint64_t *v, size_t n);
void pb_free(struct pb *b);

#endif
