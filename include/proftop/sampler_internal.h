/* sampler_internal.h — what sampler.c and sampler_events.c share of a sampler (sampler.h): its
 * definition and that of the kernel rings it reads. Not for other modules. */
#ifndef PROFTOP_SAMPLER_INTERNAL_H
#define PROFTOP_SAMPLER_INTERNAL_H

#include "proftop/sampler.h"

#include "proftop/backlog.h"
#include "proftop/idmap.h"
#include "proftop/shmring.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct blocked_thread;
struct diag;
struct ring;

struct kernel_ring {
	int fd;
	void *base;             /* the perf_event_mmap_page, then the data pages */
	const unsigned char *data; /* the data pages */
	size_t data_size;
};

/* A kernel ring being drained: records between data_tail and data_head, which the kernel
 * publishes with a release store; storing the new tail tells it the space is free again. */
struct ring_cursor {
	struct kernel_ring *kr;
	uint64_t head, tail;
	struct perf_event_header next; /* valid when has_next */
	uint64_t next_time;
	bool has_next;
};

struct sampler {
	struct sample_config config;
	uint64_t sample_type;
	struct ring *ring;
	struct diag *diag;
	int wake_fd;
	bool unsignalled;       /* records pushed since the consumer was last woken */
	uint64_t signalled_ns;
	int *fds;               /* every event */
	size_t nfds, fds_cap;
	struct kernel_ring *rings; /* one per CPU */
	size_t nrings;
	struct backlog backlog; /* records waiting for room in the ring, oldest first */
	unsigned char *bounce;  /* a record that wraps the end of a kernel ring is copied here */
	pthread_t thread;
	bool running;
	atomic_bool stop;
	int stop_fd;            /* eventfd: sampler_stop() wakes the thread at once */
	const char *step;       /* what sampler_open() is doing: step_open or step_mmap */
	atomic_uint requested_freq; /* at most config.freq: samples beyond it are thinned out */
	unsigned thin_credit;
	struct ring_cursor *cursors; /* one per ring, for drain_rings() */
	bool launched;          /* the events arm at the command's exec */
	bool dedupe;            /* attach mode: see the file's header */
	bool drop_idle;         /* -a: samples of the idle task are dropped (idle()) */
	pid_t drop_pid;         /* -a: proftop's own samples and switches are dropped; 0: none */
	struct idmap event_owner; /* event id → the tid proftop opened it for */
	struct idmap authority; /* tid → the tid whose events count for it */
	struct idmap switched;  /* tid → 1 while its last sampled switch is not back in */
	struct idmap switch_ids; /* ids of the context-switch events (→ 1) */
	struct blocked_thread *attached; /* attach mode, switch modes: the threads opened */
	size_t nattached, attached_cap;
	_Atomic uint64_t samples, switches, overflow, dropped, throttled;
	struct shmring_reader alloc_reader; /* an allocation run's shared ring */
	bool allocs;            /* alloc_reader is set */
	bool allocs_waiting;    /* the last pass left records there: no room in the ring */
};

#endif
