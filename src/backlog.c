/* backlog.c — the sampler's queue of records waiting for room in the ring (backlog.h).
 *
 * A chunk holds records one after the other, each as its length (8 bytes) then its bytes padded to
 * 8; `read` and `written` are offsets into its data, read <= written. The chunks form a list
 * from head (the oldest record at head->read) to tail (where the next one is written). Invariant:
 * a chunk before the tail always has a record unread, so an empty backlog is one chunk (or none)
 * with read == written. */
#include "proftop/backlog.h"

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

struct backlog_chunk {
	struct backlog_chunk *next;
	size_t read, written;
	unsigned char data[];
};

#define CHUNK_DATA (BACKLOG_CHUNK - offsetof(struct backlog_chunk, data))

static size_t entry_size(size_t len)
{
	return sizeof(uint64_t) + ((len + 7) & ~(size_t)7);
}

static struct backlog_chunk *chunk_new(struct backlog *b)
{
	struct backlog_chunk *c = b->spare;

	if (c) {
		b->spare = NULL;
	} else {
		c = mmap(NULL, BACKLOG_CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (c == MAP_FAILED)
			return NULL;
	}
	c->next = NULL;
	c->read = c->written = 0;
	return c;
}

/* One emptied chunk is kept: a backlog that fills and empties by turns maps nothing each time. */
static void chunk_release(struct backlog *b, struct backlog_chunk *c)
{
	if (!b->spare)
		b->spare = c;
	else
		munmap(c, BACKLOG_CHUNK);
}

void backlog_init(struct backlog *b, size_t limit)
{
	memset(b, 0, sizeof(*b));
	b->limit = limit;
}

void backlog_free(struct backlog *b)
{
	while (b->head) {
		struct backlog_chunk *next = b->head->next;

		munmap(b->head, BACKLOG_CHUNK);
		b->head = next;
	}
	if (b->spare)
		munmap(b->spare, BACKLOG_CHUNK);
	backlog_init(b, b->limit);
}

void *backlog_reserve(struct backlog *b, size_t len, bool bounded)
{
	size_t need = entry_size(len);
	uint64_t len64 = len;
	struct backlog_chunk *c = b->tail;

	if (len > BACKLOG_CHUNK / 2 || (bounded && b->bytes + need > b->limit))
		return NULL;
	if (!c || c->written + need > CHUNK_DATA) {
		c = chunk_new(b);
		if (!c)
			return NULL;
		if (b->tail)
			b->tail->next = c;
		else
			b->head = c;
		b->tail = c;
	}
	memcpy(c->data + c->written, &len64, sizeof(len64));
	c->written += need;
	b->bytes += need;
	return c->data + c->written - need + sizeof(len64);
}

const void *backlog_peek(const struct backlog *b, size_t *len)
{
	const struct backlog_chunk *c = b->head;
	uint64_t len64;

	if (!c || c->read == c->written)
		return NULL;
	memcpy(&len64, c->data + c->read, sizeof(len64));
	*len = (size_t)len64;
	return c->data + c->read + sizeof(len64);
}

void backlog_pop(struct backlog *b)
{
	struct backlog_chunk *c = b->head;
	size_t len;

	if (!backlog_peek(b, &len))
		return;
	c->read += entry_size(len);
	b->bytes -= entry_size(len);
	if (c->read < c->written)
		return;
	if (c != b->tail) {
		b->head = c->next;
		chunk_release(b, c);
	} else { /* empty: the tail starts over */
		c->read = c->written = 0;
	}
}

bool backlog_empty(const struct backlog *b)
{
	return !b->head || b->head->read == b->head->written;
}
