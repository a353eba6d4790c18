/* strpool.c — interned strings that live as long as their pool.
 *
 * Copies go into chunks that are only ever appended to and are freed together in strpool_free(),
 * so a returned pointer never moves. An open-addressing table (linear probing, power-of-two size,
 * kept at most half full) maps a string to its copy; each slot caches the hash and length so that
 * growing the table and rejecting mismatches never touch the string bytes.
 *
 * References: the pool is freed when its last reference goes. The collector's profile interns
 * into a pool while snapshots on other threads hold references to it and read the strings they
 * were made with: those bytes never change after they are written, and the table and chunk list
 * the interning thread changes are not what readers look at. */
#include "proftop/strpool.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proftop/util.h"

#define STRPOOL_CHUNK	(64 * 1024)

struct strpool_chunk {
	struct strpool_chunk *next;
	size_t used;
	size_t size;
	char data[];
};

struct strpool_slot {
	const char *str;	/* NULL: empty slot */
	uint64_t hash;
	size_t len;
};

struct strpool {
	atomic_int refs;
	struct strpool_slot *slots;
	size_t nslots;		/* a power of two */
	size_t count;
	struct strpool_chunk *chunks;	/* newest first; only the head has room left */
};

struct strpool *strpool_new(void)
{
	struct strpool *pool = xcalloc(1, sizeof(*pool));

	atomic_init(&pool->refs, 1);
	pool->nslots = 256;
	pool->slots = xcalloc(pool->nslots, sizeof(*pool->slots));
	return pool;
}

struct strpool *strpool_ref(struct strpool *pool)
{
	atomic_fetch_add_explicit(&pool->refs, 1, memory_order_relaxed);
	return pool;
}

void strpool_free(struct strpool *pool)
{
	struct strpool_chunk *chunk, *next;

	if (!pool || atomic_fetch_sub_explicit(&pool->refs, 1, memory_order_acq_rel) != 1)
		return;
	for (chunk = pool->chunks; chunk; chunk = next) {
		next = chunk->next;
		free(chunk);
	}
	free(pool->slots);
	free(pool);
}

/* Room for len bytes. A string larger than a chunk gets a chunk of its own behind the head, so
 * the head's free space is not wasted. */
static char *strpool_alloc(struct strpool *pool, size_t len)
{
	struct strpool_chunk *chunk = pool->chunks;

	if (chunk && chunk->size - chunk->used >= len) {
		chunk->used += len;
		return chunk->data + chunk->used - len;
	}
	if (len > STRPOOL_CHUNK / 4) {
		chunk = xmalloc(sizeof(*chunk) + len);
		chunk->size = chunk->used = len;
		if (pool->chunks) {
			chunk->next = pool->chunks->next;
			pool->chunks->next = chunk;
		} else {
			chunk->next = NULL;
			pool->chunks = chunk;
		}
		return chunk->data;
	}
	chunk = xmalloc(sizeof(*chunk) + STRPOOL_CHUNK);
	chunk->size = STRPOOL_CHUNK;
	chunk->used = len;
	chunk->next = pool->chunks;
	pool->chunks = chunk;
	return chunk->data;
}

static void strpool_rehash(struct strpool *pool)
{
	size_t nslots = pool->nslots * 2, mask = nslots - 1;
	struct strpool_slot *slots = xcalloc(nslots, sizeof(*slots));

	for (size_t i = 0; i < pool->nslots; i++) {
		struct strpool_slot *old = &pool->slots[i];
		size_t j;

		if (!old->str)
			continue;
		for (j = old->hash & mask; slots[j].str; j = (j + 1) & mask)
			;
		slots[j] = *old;
	}
	free(pool->slots);
	pool->slots = slots;
	pool->nslots = nslots;
}

/* The slot holding s[0..len), or the empty slot where it would go. */
static struct strpool_slot *strpool_slot(const struct strpool *pool, const char *s, size_t len,
					 uint64_t hash)
{
	size_t mask = pool->nslots - 1, i;
	struct strpool_slot *slot;

	for (i = hash & mask; pool->slots[i].str; i = (i + 1) & mask) {
		slot = &pool->slots[i];
		if (slot->hash == hash && slot->len == len && !memcmp(slot->str, s, len))
			return slot;
	}
	return &pool->slots[i];
}

const char *strpool_find(const struct strpool *pool, const char *s, size_t len)
{
	return strpool_slot(pool, s, len, util_hash_bytes(s, len, 0))->str;
}

size_t strpool_cost(size_t len)
{
	/* After a rehash the table is a quarter full: four slots per string. */
	return len + 1 + 4 * sizeof(struct strpool_slot);
}

const char *strpool_intern(struct strpool *pool, const char *s, size_t len)
{
	uint64_t hash = util_hash_bytes(s, len, 0);
	struct strpool_slot *slot = strpool_slot(pool, s, len, hash);
	char *copy;

	if (slot->str)
		return slot->str;
	copy = strpool_alloc(pool, len + 1);
	memcpy(copy, s, len);
	copy[len] = '\0';
	slot->str = copy;
	slot->hash = hash;
	slot->len = len;
	if (++pool->count * 2 > pool->nslots)
		strpool_rehash(pool);
	return copy;
}
