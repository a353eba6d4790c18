/* frame_slots.h — what the frame sources (frames_python.c, frames_perl.c) keep per process and
 * per interpreter file: a table of the source's own structures by key (a pid, an interned
 * path), each structure beginning with its uint64_t key (0: a free slot), and the reader of a
 * process's memory they hand their interpreter readers. A worker's: not thread-safe. */
#ifndef PROFTOP_FRAME_SLOTS_H
#define PROFTOP_FRAME_SLOTS_H

#include "proftop/idmap.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct frame_slots {
	struct idmap index;        /* key -> its slot */
	unsigned char *slots;
	size_t n, cap, size;       /* slots in use, room, bytes of one */
};

void frame_slots_init(struct frame_slots *t, size_t size);
/* (the caller closes what its slots hold first: frame_slots_at()) */
void frame_slots_free(struct frame_slots *t);
/* key's slot (key != 0). *made: it was not there, and is now, zeroed but for its key. The
 * pointer lasts until the next call that makes a slot. */
void *frame_slots_get(struct frame_slots *t, uint64_t key, bool *made);
/* key's slot, now free (its key 0), for the caller to close what it holds; NULL: none. A free
 * slot is reused by the next key to need one that last had it. */
void *frame_slots_take(struct frame_slots *t, uint64_t key);
/* The slots, in use or free, i < t->n. */
void *frame_slots_at(const struct frame_slots *t, size_t i);

/* Reads len bytes of process pid (arg: (void *)(intptr_t)pid) at addr into buf with
 * process_vm_readv(): 0, or -errno (-EIO: only part of it). */
int frame_slots_read_memory(void *arg, uint64_t addr, void *buf, size_t len);

#endif
