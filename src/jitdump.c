/* jitdump.c — a jitdump file's header and records (jitdump.h). Fields are little-endian (the
 * file is written by the process on this machine, x86-64). */
#include "proftop/jitdump.h"

#include <errno.h>
#include <string.h>

static uint32_t u32_at(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t u64_at(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

int jitdump_header(const uint8_t *buf, size_t len, uint32_t *size)
{
	if (len < 12)
		return -EAGAIN;
	if (u32_at(buf) != JITDUMP_MAGIC || u32_at(buf + 4) == 0)
		return -EINVAL;
	*size = u32_at(buf + 8);
	if (*size < JITDUMP_HEADER_MIN || *size > JITDUMP_RECORD_MAX)
		return -EINVAL;
	return 0;
}

/* A code load: pid, tid (u32 each), vma, code address, code size, code index (u64 each), then
 * the name up to its NUL. */
#define LOAD_FIXED (JITDUMP_RECORD_HEADER + 8 + 32)
/* A move: pid, tid, vma, old address, new address, code size, code index. */
#define MOVE_FIXED (JITDUMP_RECORD_HEADER + 8 + 40)

static int code_load(const uint8_t *buf, size_t len, struct jitdump_record *out)
{
	size_t room = out->total_size < len ? out->total_size : len, max;
	const uint8_t *name = buf + LOAD_FIXED, *nul;

	if (out->total_size < LOAD_FIXED + 1)
		return -EINVAL;
	if (len < LOAD_FIXED)
		return -EAGAIN;
	out->addr = u64_at(buf + JITDUMP_RECORD_HEADER + 16);
	out->size = u64_at(buf + JITDUMP_RECORD_HEADER + 24);
	if (out->addr + out->size < out->addr)
		return -EINVAL;
	max = room - LOAD_FIXED;
	nul = memchr(name, 0, max < JITDUMP_NAME_MAX + 1 ? max : JITDUMP_NAME_MAX + 1);
	if (!nul) /* not in the bytes given: more of them, unless the record or the limit ends */
		return max > JITDUMP_NAME_MAX || room == out->total_size ? -EINVAL : -EAGAIN;
	out->name = (const char *)name;
	out->name_len = (size_t)(nul - name);
	return 0;
}

int jitdump_record(const uint8_t *buf, size_t len, struct jitdump_record *out)
{
	memset(out, 0, sizeof(*out));
	if (len < JITDUMP_RECORD_HEADER)
		return -EAGAIN;
	out->id = u32_at(buf);
	out->total_size = u32_at(buf + 4);
	if (out->total_size < JITDUMP_RECORD_HEADER || out->total_size > JITDUMP_RECORD_MAX)
		return -EINVAL;
	switch (out->id) {
	case JITDUMP_CODE_LOAD:
		return code_load(buf, len, out);
	case JITDUMP_CODE_MOVE:
		if (out->total_size < MOVE_FIXED)
			return -EINVAL;
		if (len < MOVE_FIXED)
			return -EAGAIN;
		out->old_addr = u64_at(buf + JITDUMP_RECORD_HEADER + 16);
		out->addr = u64_at(buf + JITDUMP_RECORD_HEADER + 24);
		out->size = u64_at(buf + JITDUMP_RECORD_HEADER + 32);
		return out->addr + out->size < out->addr ? -EINVAL : 0;
	default: /* debug info, unwinding info, close, and kinds to come: stepped over */
		return 0;
	}
}
