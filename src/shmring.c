/* shmring.c — the shared-memory ring from the preloaded library to proftop (shmring.h). It is
 * compiled into that library too: no allocation, no lock, nothing from the rest of proftop. */
#include "proftop/shmring.h"

#include <errno.h>
#include <string.h>

#define MIN_SLOTS 4u
#define MAX_SLOTS (1u << 24)
#define MIN_SLOT_SIZE 16u
#define MAX_SLOT_SIZE (1u << 16)

static size_t round64(size_t n)
{
	return (n + 63) & ~(size_t)63;
}

static size_t header_bytes(void)
{
	return round64(sizeof(struct shmring_header));
}

static size_t seqs_bytes(uint32_t nslots)
{
	return round64((size_t)nslots * sizeof(uint64_t));
}

/* A record takes at most a quarter of the ring: with the padding before it, under half. */
static uint32_t max_record_slots(uint32_t nslots)
{
	return nslots / 4;
}

size_t shmring_bytes(uint32_t nslots, uint32_t slot_size)
{
	if (nslots < MIN_SLOTS || nslots > MAX_SLOTS || (nslots & (nslots - 1)) ||
	    slot_size < MIN_SLOT_SIZE || slot_size > MAX_SLOT_SIZE || slot_size % 8)
		return 0;
	return header_bytes() + seqs_bytes(nslots) + (size_t)nslots * slot_size;
}

size_t shmring_max_payload(uint32_t nslots, uint32_t slot_size)
{
	if (!shmring_bytes(nslots, slot_size))
		return 0;
	return (size_t)max_record_slots(nslots) * slot_size - sizeof(struct shmring_record);
}

static _Atomic uint64_t *seq_at(void *mem, uint32_t nslots, uint64_t pos)
{
	return (_Atomic uint64_t *)((unsigned char *)mem + header_bytes()) + (pos & (nslots - 1));
}

static struct shmring_record *record_at(void *mem, uint32_t nslots, uint32_t slot_size,
					uint64_t pos)
{
	return (struct shmring_record *)((unsigned char *)mem + header_bytes() + seqs_bytes(nslots) +
					 (size_t)(pos & (nslots - 1)) * slot_size);
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
		atomic_init(seq_at(mem, nslots, i), i);
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

/* Publish the k slots from pos, the first last. A slot the consumer gave up on meanwhile
 * (shmring.h) is another's now: the compare-and-swap leaves it. */
static void publish_slots(void *mem, uint32_t nslots, uint64_t pos, uint32_t k)
{
	for (uint32_t i = k; i-- > 0;) {
		uint64_t expected = pos + i;

		atomic_compare_exchange_strong_explicit(seq_at(mem, nslots, pos + i), &expected,
							pos + i + 1, memory_order_release,
							memory_order_relaxed);
	}
}

void *shmring_reserve(void *mem, size_t bytes, uint64_t *pos)
{
	struct shmring_header *h = mem;
	uint32_t n = h->nslots, size = h->slot_size;
	uint64_t k, p;

	if (bytes > shmring_max_payload(n, size)) {
		atomic_fetch_add_explicit(&h->overflow, 1, memory_order_relaxed);
		return NULL;
	}
	k = (bytes + sizeof(struct shmring_record) + size - 1) / size;
	p = atomic_load_explicit(&h->head, memory_order_relaxed);
	for (;;) {
		uint64_t at = p & (n - 1), pad = at + k > n ? n - at : 0, last = p + pad + k - 1;
		uint64_t q = atomic_load_explicit(seq_at(mem, n, last), memory_order_acquire);

		if (q == last) {
			/* On failure p becomes the head the CAS saw. Release: the consumer's
			 * acquire of the head (shmring_reserved()) then sees what this thread saw
			 * before it reserved, its exec's records among them. */
			if (!atomic_compare_exchange_weak_explicit(&h->head, &p, p + pad + k,
								   memory_order_release,
								   memory_order_relaxed))
				continue;
			if (pad) {
				*record_at(mem, n, size, p) =
					(struct shmring_record){ SHMRING_TAG_PAD, (uint32_t)pad };
				publish_slots(mem, n, p, (uint32_t)pad);
			}
			*pos = p + pad;
			*record_at(mem, n, size, *pos) =
				(struct shmring_record){ SHMRING_TAG_RECORD, (uint32_t)k };
			return record_at(mem, n, size, *pos) + 1;
		}
		if ((int64_t)(q - last) < 0) {
			atomic_fetch_add_explicit(&h->overflow, 1, memory_order_relaxed);
			return NULL;
		}
		p = atomic_load_explicit(&h->head, memory_order_relaxed);
	}
}

void shmring_publish(void *mem, uint64_t pos)
{
	struct shmring_header *h = mem;
	uint32_t k = record_at(mem, h->nslots, h->slot_size, pos)->nslots;

	if (k > max_record_slots(h->nslots))
		k = max_record_slots(h->nslots);
	publish_slots(mem, h->nslots, pos, k ? k : 1);
}

void shmring_reader_init(struct shmring_reader *r, void *mem, uint32_t nslots, uint32_t slot_size)
{
	memset(r, 0, sizeof(*r));
	r->h = mem;
	r->seqs = seq_at(mem, nslots, 0);
	r->slots = (unsigned char *)record_at(mem, nslots, slot_size, 0);
	r->nslots = nslots;
	r->slot_size = slot_size;
}

/* Hand the k slots at the tail back to the producers, in order (shmring.h says why). */
static void give_back(struct shmring_reader *r, uint32_t k)
{
	for (uint32_t i = 0; i < k; i++)
		atomic_store_explicit(&r->seqs[(r->tail + i) & (r->nslots - 1)],
				      r->tail + i + r->nslots, memory_order_release);
	r->tail += k;
	r->stall_since_ns = 0; /* the next record's wait starts now */
	atomic_store_explicit(&r->h->tail, r->tail, memory_order_relaxed);
}

/* The slots the record at the tail takes as its start says (copied: the target may change it
 * meanwhile); 0 when that start is no record's, or the count is outside the ring's bounds. */
static uint32_t record_slots(const struct shmring_reader *r, uint32_t *tag)
{
	uint32_t at = (uint32_t)(r->tail & (r->nslots - 1));
	struct shmring_record start;

	memcpy(&start, r->slots + (size_t)at * r->slot_size, sizeof(start));
	*tag = start.tag;
	if ((start.tag != SHMRING_TAG_RECORD && start.tag != SHMRING_TAG_PAD) || !start.nslots ||
	    start.nslots > max_record_slots(r->nslots) || at + start.nslots > r->nslots)
		return 0;
	return start.nslots;
}

/* The record at the tail is not ready. Reserved (the head, as the target says, is past it) for
 * too long: its producer died in the middle; give it back and go on (true). */
static bool stalled(struct shmring_reader *r, uint64_t now_ns)
{
	uint64_t head = atomic_load_explicit(&r->h->head, memory_order_relaxed);
	uint32_t tag, k;

	if ((int64_t)(head - r->tail) <= 0) {
		r->stall_since_ns = 0;
		return false;
	}
	if (!r->stall_since_ns) {
		r->stall_since_ns = now_ns ? now_ns : 1;
		return false;
	}
	if (now_ns - r->stall_since_ns < SHMRING_STALL_NS)
		return false;
	/* As many slots as its start says; when the start is no record's (its producer died
	 * before writing it), every slot up to the next one published. */
	k = record_slots(r, &tag);
	if (!k) {
		while (k < head - r->tail && k < max_record_slots(r->nslots) &&
		       atomic_load_explicit(&r->seqs[(r->tail + k) & (r->nslots - 1)],
					    memory_order_acquire) != r->tail + k + 1)
			k++;
	}
	if (!k || k > head - r->tail)
		k = 1;
	r->skipped += k;
	give_back(r, k);
	return true;
}

const void *shmring_peek(struct shmring_reader *r, uint64_t now_ns, size_t *bytes)
{
	/* Bounded: the target may rewrite the sequences as fast as garbage is skipped. */
	for (uint32_t round = 0; round < r->nslots; round++) {
		uint64_t q = atomic_load_explicit(&r->seqs[r->tail & (r->nslots - 1)],
						  memory_order_acquire);
		uint32_t tag, k;

		if (q != r->tail + 1) {
			if (stalled(r, now_ns))
				continue;
			return NULL;
		}
		k = record_slots(r, &tag);
		if (!k) { /* no record starts here: garbage, or a mixed record's middle */
			r->skipped++;
			give_back(r, 1);
			continue;
		}
		/* The first slot is published last: the others are, unless the record is mixed. */
		if (atomic_load_explicit(&r->seqs[(r->tail + k - 1) & (r->nslots - 1)],
					 memory_order_acquire) != r->tail + k) {
			if (stalled(r, now_ns))
				continue;
			return NULL;
		}
		r->stall_since_ns = 0;
		if (tag == SHMRING_TAG_PAD) {
			give_back(r, k);
			continue;
		}
		r->current = k;
		*bytes = (size_t)k * r->slot_size - sizeof(struct shmring_record);
		return r->slots + (size_t)(r->tail & (r->nslots - 1)) * r->slot_size +
		       sizeof(struct shmring_record);
	}
	return NULL;
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
	give_back(r, r->current ? r->current : 1);
	r->current = 0;
}

uint64_t shmring_overflow(const struct shmring_reader *r)
{
	return atomic_load_explicit(&r->h->overflow, memory_order_relaxed);
}
