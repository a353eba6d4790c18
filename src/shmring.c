/* shmring.c — the shared-memory ring from the preloaded library to proftop (shmring.h). It is
 * compiled into that library too: no allocation, no lock, nothing from the rest of proftop. */
#include "proftop/shmring.h"

#include <errno.h>
#include <string.h>

#define MAX_SLOTS (1u << 24)
#define MAX_SLOT_SIZE (1u << 16)

/* A slot: its sequence, then the payload. */
struct slot_head {
	_Atomic uint64_t seq;
};

static size_t header_bytes(void)
{
	return (sizeof(struct shmring_header) + 63) & ~(size_t)63;
}

static size_t stride(uint32_t slot_size)
{
	return sizeof(struct slot_head) + slot_size;
}

size_t shmring_bytes(uint32_t nslots, uint32_t slot_size)
{
	if (!nslots || nslots > MAX_SLOTS || (nslots & (nslots - 1)) || !slot_size ||
	    slot_size > MAX_SLOT_SIZE || slot_size % 8)
		return 0;
	return header_bytes() + (size_t)nslots * stride(slot_size);
}

static struct slot_head *slot_at(void *mem, uint32_t nslots, uint32_t slot_size, uint64_t pos)
{
	return (struct slot_head *)((unsigned char *)mem + header_bytes() +
				    (size_t)(pos & (nslots - 1)) * stride(slot_size));
}

int shmring_init(void *mem, size_t bytes, uint32_t nslots, uint32_t slot_size)
{
	struct shmring_header *h = mem;
	size_t need = shmring_bytes(nslots, slot_size);

	if (!need || bytes < need || ((uintptr_t)mem & 63))
		return -EINVAL;
	memset(mem, 0, need);
	h->nslots = nslots;
	h->slot_size = slot_size;
	atomic_init(&h->head, 0);
	atomic_init(&h->tail, 0);
	atomic_init(&h->overflow, 0);
	for (uint32_t i = 0; i < nslots; i++)
		atomic_init(&slot_at(mem, nslots, slot_size, i)->seq, i);
	/* Last: a producer that sees the magic sees the ring made. */
	atomic_store_explicit(&h->magic, SHMRING_MAGIC, memory_order_release);
	return 0;
}

bool shmring_valid(const void *mem, size_t bytes)
{
	const struct shmring_header *h = mem;
	size_t need;

	if (!mem || bytes < sizeof(*h) ||
	    atomic_load_explicit(&h->magic, memory_order_acquire) != SHMRING_MAGIC)
		return false;
	need = shmring_bytes(h->nslots, h->slot_size);
	return need && bytes >= need;
}

void *shmring_reserve(void *mem, uint64_t *pos)
{
	struct shmring_header *h = mem;
	uint32_t n = h->nslots, size = h->slot_size;
	uint64_t p = atomic_load_explicit(&h->head, memory_order_relaxed);

	for (;;) {
		struct slot_head *s = slot_at(mem, n, size, p);
		uint64_t q = atomic_load_explicit(&s->seq, memory_order_acquire);

		if (q == p) {
			/* On failure p becomes the head the CAS saw. */
			/* Release: the consumer's acquire of the head (shmring_reserved()) then sees
			 * what this thread saw before it reserved, its exec's records among them. */
			if (atomic_compare_exchange_weak_explicit(&h->head, &p, p + 1,
								  memory_order_release,
								  memory_order_relaxed)) {
				*pos = p;
				return s + 1;
			}
		} else if ((int64_t)(q - p) < 0) {
			atomic_fetch_add_explicit(&h->overflow, 1, memory_order_relaxed);
			return NULL;
		} else {
			p = atomic_load_explicit(&h->head, memory_order_relaxed);
		}
	}
}

void shmring_publish(void *mem, uint64_t pos)
{
	struct shmring_header *h = mem;
	struct slot_head *s = slot_at(mem, h->nslots, h->slot_size, pos);
	uint64_t expected = pos;

	/* Not when the consumer gave up on the slot meanwhile (shmring.h): it is another's now. */
	atomic_compare_exchange_strong_explicit(&s->seq, &expected, pos + 1, memory_order_release,
						memory_order_relaxed);
}

void shmring_reader_init(struct shmring_reader *r, void *mem, uint32_t nslots, uint32_t slot_size)
{
	memset(r, 0, sizeof(*r));
	r->h = mem;
	r->slots = (unsigned char *)mem + header_bytes();
	r->nslots = nslots;
	r->slot_size = slot_size;
}

const void *shmring_peek(struct shmring_reader *r, uint64_t now_ns)
{
	struct slot_head *s = slot_at(r->h, r->nslots, r->slot_size, r->tail);
	uint64_t q = atomic_load_explicit(&s->seq, memory_order_acquire);

	if (q == r->tail + 1) {
		r->stall_since_ns = 0;
		return s + 1;
	}
	/* Not ready. Reserved (the head, as the target says, is past it) for too long: its
	 * producer died in the middle; give the slot back and go on. */
	if (atomic_load_explicit(&r->h->head, memory_order_relaxed) <= r->tail) {
		r->stall_since_ns = 0;
		return NULL;
	}
	if (!r->stall_since_ns) {
		r->stall_since_ns = now_ns ? now_ns : 1;
		return NULL;
	}
	if (now_ns - r->stall_since_ns < SHMRING_STALL_NS)
		return NULL;
	r->skipped++;
	r->stall_since_ns = 0;
	atomic_store_explicit(&s->seq, r->tail + r->nslots, memory_order_release);
	r->tail++;
	atomic_store_explicit(&r->h->tail, r->tail, memory_order_relaxed);
	return shmring_peek(r, now_ns);
}

uint64_t shmring_reserved(const struct shmring_reader *r)
{
	return atomic_load_explicit(&r->h->head, memory_order_acquire);
}

uint64_t shmring_read(const struct shmring_reader *r)
{
	return r->tail;
}

void shmring_release(struct shmring_reader *r)
{
	struct slot_head *s = slot_at(r->h, r->nslots, r->slot_size, r->tail);

	atomic_store_explicit(&s->seq, r->tail + r->nslots, memory_order_release);
	r->tail++;
	atomic_store_explicit(&r->h->tail, r->tail, memory_order_relaxed);
}

uint64_t shmring_overflow(const struct shmring_reader *r)
{
	return atomic_load_explicit(&r->h->overflow, memory_order_relaxed);
}
