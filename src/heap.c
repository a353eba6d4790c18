/* heap.c — the sampled blocks in use (heap.h). */
#include "proftop/heap.h"

#include "proftop/util.h"

#include <stdlib.h>
#include <string.h>

void heap_init(struct heap *h)
{
	memset(h, 0, sizeof(*h));
}

void heap_free(struct heap *h)
{
	for (size_t i = 0; i < h->capacity; i++)
		free(h->slots[i].funcs);
	free(h->slots);
	memset(h, 0, sizeof(*h));
}

static size_t home(const struct heap *h, pid_t pid, uint64_t addr)
{
	return util_hash_u64(addr ^ (uint64_t)(uint32_t)pid << 48 ^ (uint64_t)(uint32_t)pid) &
	       (h->capacity - 1);
}

/* The slot of (pid, addr), or of the empty slot where it would go. */
static size_t find(const struct heap *h, pid_t pid, uint64_t addr)
{
	size_t i = home(h, pid, addr);

	while (heap_used(&h->slots[i]) && (h->slots[i].pid != pid || h->slots[i].addr != addr))
		i = (i + 1) & (h->capacity - 1);
	return i;
}

static void grow(struct heap *h)
{
	struct heap_block *old = h->slots;
	size_t old_cap = h->capacity;

	h->capacity = old_cap ? old_cap * 2 : 1024;
	h->slots = xcalloc(h->capacity, sizeof(*h->slots));
	for (size_t i = 0; i < old_cap; i++)
		if (heap_used(&old[i]))
			h->slots[find(h, old[i].pid, old[i].addr)] = old[i];
	free(old);
}

void heap_add(struct heap *h, pid_t pid, pid_t tid, uint64_t addr, uint64_t bytes,
	      uint64_t objects, const uint32_t *funcs, uint32_t depth)
{
	struct heap_block *b;

	if ((h->count + 1) * 4 > h->capacity * 3)
		grow(h);
	b = &h->slots[find(h, pid, addr)];
	if (heap_used(b)) {
		h->bytes -= b->bytes;
		h->objects -= b->objects;
		free(b->funcs);
	} else {
		h->count++;
	}
	*b = (struct heap_block){ addr, pid, tid, bytes, objects, depth, NULL };
	if (depth) {
		b->funcs = xmalloc(depth * sizeof(*funcs));
		memcpy(b->funcs, funcs, depth * sizeof(*funcs));
	}
	h->bytes += bytes;
	h->objects += objects;
}

bool heap_remove(struct heap *h, pid_t pid, uint64_t addr)
{
	size_t mask = h->capacity - 1, i, j;

	if (!h->count)
		return false;
	i = find(h, pid, addr);
	if (!heap_used(&h->slots[i]))
		return false;
	h->bytes -= h->slots[i].bytes;
	h->objects -= h->slots[i].objects;
	free(h->slots[i].funcs);
	h->count--;
	/* Backward shift: move up every later entry of the run that may sit at i. */
	for (j = (i + 1) & mask; heap_used(&h->slots[j]); j = (j + 1) & mask) {
		size_t want = home(h, h->slots[j].pid, h->slots[j].addr);

		/* j's entry may move to i unless its home lies cyclically in (i, j]. */
		if ((j > i && (want <= i || want > j)) || (j < i && want <= i && want > j)) {
			h->slots[i] = h->slots[j];
			i = j;
		}
	}
	memset(&h->slots[i], 0, sizeof(h->slots[i]));
	return true;
}

size_t heap_remove_pid(struct heap *h, pid_t pid)
{
	uint64_t *addrs = NULL;
	size_t n = 0, cap = 0;

	/* Collected first: a removal shifts later blocks back, under a scan. */
	for (size_t i = 0; i < h->capacity; i++)
		if (heap_used(&h->slots[i]) && h->slots[i].pid == pid) {
			xgrow((void **)&addrs, &cap, n + 1, sizeof(*addrs));
			addrs[n++] = h->slots[i].addr;
		}
	for (size_t i = 0; i < n; i++)
		heap_remove(h, pid, addrs[i]);
	free(addrs);
	return n;
}
