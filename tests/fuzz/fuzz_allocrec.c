/* libFuzzer target: the allocation records proftop reads from the shared ring the preloaded
 * library writes, which the target process owns. The input is the ring's memory as the target
 * might leave it (header, sequences, records: read with shmring_peek() as the sampler does), then
 * records as the sampler forwards them, fed to a collector of an allocation run, which parses
 * them (sample_parse_alloc()), unwinds their registers and stack bytes with real CFI (the pid of
 * the records made this process's for most of them, so that its modules are read) and keeps
 * the heap of blocks in use. A collector lives for INPUTS_PER_COLLECTOR inputs (reading this
 * process's modules each time it starts is slow), then is finished and each of its profiles made
 * into a snapshot. */
#include "proftop/allocrec.h"
#include "proftop/collector.h"
#include "proftop/ring.h"
#include "proftop/sample.h"
#include "proftop/shmring.h"
#include "proftop/snapshot.h"

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SLOTS 16
#define SLOT_SIZE 64
#define INPUTS_PER_COLLECTOR 2000 /* (the heap of blocks in use grows with the inputs) */

static _Alignas(64) unsigned char ring_memory[8192];

/* The ring part: as much of the input as the ring's memory holds, over a ring made first, so
 * that the geometry the reader was given is the real one and the rest is the target's. */
static size_t read_ring(const uint8_t *data, size_t size)
{
	size_t bytes = shmring_bytes(SLOTS, SLOT_SIZE), take = size < bytes ? size : bytes, len;
	struct shmring_reader r;
	const unsigned char *got;

	if (!bytes || bytes > sizeof(ring_memory) || shmring_init(ring_memory, bytes, SLOTS, SLOT_SIZE))
		abort();
	memcpy(ring_memory, data, take);
	shmring_reader_init(&r, ring_memory, SLOTS, SLOT_SIZE);
	for (int i = 0; i < 4 * SLOTS; i++) {
		got = shmring_peek(&r, (uint64_t)i * SHMRING_STALL_NS, &len);
		if (!got)
			continue;
		if (got < ring_memory || got + len > ring_memory + bytes)
			abort();
		volatile unsigned char sink = len ? got[len - 1] : 0;
		(void)sink;
		shmring_release(&r);
	}
	return take;
}

static struct collector *collector_for_input(struct ring *ring)
{
	static struct collector *c;
	static unsigned inputs;
	static const struct sample_config config = { 999, false, CALLGRAPH_DWARF, 8192,
						     SAMPLE_MODE_ALLOC, 1, 65536 };

	if (c && ++inputs % INPUTS_PER_COLLECTOR == 0) {
		collector_finish(c);
		for (enum sample_mode m = SAMPLE_MODE_ALLOC; m <= SAMPLE_MODE_INUSE_OBJECTS; m++) {
			if (!collector_show(c, m))
				abort();
			snapshot_unref(collector_snapshot(c));
		}
		collector_free(c);
		c = NULL;
	}
	if (!c && collector_new(&c, ring, NULL, &config, NULL))
		abort();
	return c;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ring *ring;
	static unsigned char record[sizeof(struct perf_event_header) + sizeof(struct allocrec) +
				    ALLOCREC_STACK_MAX];
	struct collector *c;
	size_t at;

	if (!ring)
		ring = ring_create(1 << 16);
	c = collector_for_input(ring);
	at = read_ring(data, size);
	/* Records: a length byte pair, a flag byte (bit 0: this process's pid and tid), the bytes. */
	while (at + 3 <= size) {
		size_t len = (size_t)data[at] | (size_t)data[at + 1] << 8, body;
		bool ours = data[at + 2] & 1;
		struct perf_event_header h;
		struct allocrec a;

		at += 3;
		body = len < size - at ? len : size - at;
		if (sizeof(h) + body > sizeof(record))
			body = sizeof(record) - sizeof(h);
		h = (struct perf_event_header){ SAMPLE_RECORD_ALLOC, 0, (uint16_t)(sizeof(h) + body) };
		memcpy(record, &h, sizeof(h));
		memcpy(record + sizeof(h), data + at, body);
		at += body;
		if (ours && body >= sizeof(a)) {
			memcpy(&a, record + sizeof(h), sizeof(a));
			a.pid = a.tid = (uint32_t)getpid();
			memcpy(record + sizeof(h), &a, sizeof(a));
		} else if (body >= offsetof(struct allocrec, addr)) {
			/* another pid: one no process has, never another process's maps */
			memcpy(&a, record + sizeof(h), offsetof(struct allocrec, addr));
			a.pid = a.pid ? 0x7ffffff0u : 0;
			memcpy(record + sizeof(h) + offsetof(struct allocrec, pid), &a.pid, sizeof(a.pid));
		}
		collector_process(c, record, sizeof(h) + body);
	}
	return 0;
}
