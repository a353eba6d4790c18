/* frame_slots.c — per-process state of the frame sources (frame_slots.h). */
#include "proftop/frame_slots.h"

#include "proftop/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

void frame_slots_init(struct frame_slots *t, size_t size)
{
	memset(t, 0, sizeof(*t));
	idmap_init(&t->index);
	t->size = size;
}

void frame_slots_free(struct frame_slots *t)
{
	idmap_free(&t->index);
	free(t->slots);
	t->slots = NULL;
	t->n = t->cap = 0;
}

void *frame_slots_at(const struct frame_slots *t, size_t i)
{
	return t->slots + i * t->size;
}

static uint64_t key_of(const struct frame_slots *t, size_t i)
{
	uint64_t key;

	memcpy(&key, frame_slots_at(t, i), sizeof(key));
	return key;
}

void *frame_slots_get(struct frame_slots *t, uint64_t key, bool *made)
{
	uint32_t at = idmap_get(&t->index, key);
	void *slot;

	*made = false;
	if (at != IDMAP_MISSING && key_of(t, at) == key)
		return frame_slots_at(t, at);
	/* (a slot this key had, since freed, is reused; else a new one) */
	if (at == IDMAP_MISSING || key_of(t, at)) {
		xgrow((void **)&t->slots, &t->cap, t->n + 1, t->size);
		at = (uint32_t)t->n++;
		idmap_put(&t->index, key, at);
	}
	slot = frame_slots_at(t, at);
	memset(slot, 0, t->size);
	memcpy(slot, &key, sizeof(key));
	*made = true;
	return slot;
}

void *frame_slots_take(struct frame_slots *t, uint64_t key)
{
	uint32_t at = idmap_get(&t->index, key);
	const uint64_t none = 0;
	void *slot;

	if (at == IDMAP_MISSING || key_of(t, at) != key)
		return NULL;
	slot = frame_slots_at(t, at);
	memcpy(slot, &none, sizeof(none));
	return slot;
}

int frame_slots_read_memory(void *arg, uint64_t addr, void *buf, size_t len)
{
	pid_t pid = (pid_t)(intptr_t)arg;
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t got = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	return got == (ssize_t)len ? 0 : got < 0 ? -errno : -EIO;
}
