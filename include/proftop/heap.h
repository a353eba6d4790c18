/* heap.h — the sampled blocks still in use in the allocation modes: (pid, address) → the stack
 * that allocated the block, its thread, and what it stands for (bytes and objects, allocrec.h's
 * estimate). The collector adds a block when its sampled allocation arrives and takes it out at
 * its free; what is left when profiling ends is the leak report.
 *
 * Open addressing with linear probing and backward-shift deletion (no tombstones: a run that
 * allocates and frees for hours keeps a table the size of what is in use). Stacks are copied in
 * and freed with their block. Only the collector thread touches a heap. */
#ifndef PROFTOP_HEAP_H
#define PROFTOP_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct heap_block {
	uint64_t addr;
	pid_t pid, tid;
	uint64_t bytes, objects;   /* what the sampled block stands for */
	uint32_t depth;
	uint32_t *funcs;           /* its stack, outermost first (function ids) */
};

struct heap {
	struct heap_block *slots;  /* capacity of them; addr 0 and pid 0: empty */
	size_t count, capacity;    /* capacity is 0 or a power of two, kept at most 3/4 full */
	uint64_t bytes, objects;   /* the sums over the blocks */
};

void heap_init(struct heap *heap);
void heap_free(struct heap *heap);
/* Add a block (pid and addr not 0); a block already at that address (its free was lost) is
 * replaced. */
void heap_add(struct heap *heap, pid_t pid, pid_t tid, uint64_t addr, uint64_t bytes,
	      uint64_t objects, const uint32_t *funcs, uint32_t depth);
/* Take the block at addr in pid out; false when there is none (not sampled). */
bool heap_remove(struct heap *heap, pid_t pid, uint64_t addr);
/* Take every block of pid out (its image ended: an exec); returns how many there were. */
size_t heap_remove_pid(struct heap *heap, pid_t pid);
/* The blocks, in no order: for (size_t i = 0; i < heap->capacity; i++) if (heap_used(...)). */
static inline bool heap_used(const struct heap_block *b)
{
	return b->pid != 0;
}

#endif
