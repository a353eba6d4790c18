/* jitdump.h — the records of a jitdump file, the format perf defined for JITs to describe their
 * code to `perf inject --jit` (tools/perf/util/jitdump.h): CPython 3.13's -X perf_jit writes one
 * to /tmp/jit-PID.dump, V8's --perf-prof to jit-PID.dump in its working directory.
 *
 * A header (magic "JiTD" as a little-endian u32 0x4A695444, version, its own size, the ELF
 * machine, the pid, a timestamp, flags), then records, each a header (u32 id, u32 total_size, u64
 * timestamp) and its body. proftop takes the names: JIT_CODE_LOAD (pid, tid, vma, code address,
 * code size, code index, the NUL-terminated name, then the code bytes) and JIT_CODE_MOVE (code
 * moved from one address to another); debug info, unwinding info and close records are
 * stepped over. The file is the target's to write: every size is checked against the bytes
 * given and against JITDUMP_RECORD_MAX, and a name must end inside its record. Pure. */
#ifndef PROFTOP_JITDUMP_H
#define PROFTOP_JITDUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JITDUMP_MAGIC 0x4A695444u
#define JITDUMP_HEADER_MIN 40u        /* the header's fields, version 1 */
#define JITDUMP_RECORD_HEADER 16u
#define JITDUMP_RECORD_MAX (256u << 20) /* a record past this is no record: the file is refused */
#define JITDUMP_NAME_MAX 4096u

enum jitdump_kind {
	JITDUMP_CODE_LOAD = 0,
	JITDUMP_CODE_MOVE = 1,
	JITDUMP_DEBUG_INFO = 2,
	JITDUMP_CLOSE = 3,
	JITDUMP_UNWINDING_INFO = 4,
};

/* The file's header in buf[0..len): its size (where the records start) into *size. Returns 0,
 * -EAGAIN when len is short of it, -EINVAL when it is no jitdump (magic, version, size). */
int jitdump_header(const uint8_t *buf, size_t len, uint32_t *size);

struct jitdump_record {
	uint32_t id;                  /* enum jitdump_kind, or another the format may add */
	uint32_t total_size;          /* the whole record, header included */
	uint64_t addr, size;          /* CODE_LOAD: where and how long; CODE_MOVE: where to */
	uint64_t old_addr;            /* CODE_MOVE: where from */
	const char *name;             /* CODE_LOAD: into buf, name_len bytes, NUL-terminated there */
	size_t name_len;
};

/* The record at buf[0..len), len the bytes there are of it (a code load's code bytes need not
 * be: its name must). Returns 0, -EAGAIN when more of it is needed (its header, or a code
 * load's fixed part and name), -EINVAL when it is malformed (a size below its fields or past
 * JITDUMP_RECORD_MAX, a name not ended inside the record or longer than JITDUMP_NAME_MAX, a
 * code range that wraps). Fields not of its kind are 0. */
int jitdump_record(const uint8_t *buf, size_t len, struct jitdump_record *out);

#endif
