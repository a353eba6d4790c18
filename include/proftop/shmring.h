/* shmring.h — a bounded multi-producer, single-consumer ring of fixed-size slots in shared
 * memory: from the allocation-sampling library preloaded into the target's processes (any
 * thread of any of them, forked children included) to proftop's collector.
 *
 * The ring is a header and a power-of-two array of slots; each slot is a 64-bit sequence number
 * and slot_size bytes of payload. Slot i starts with sequence i. Positions are free-running
 * 64-bit counters, never wrapped (Vyukov's bounded queue):
 *
 *      producer (any thread, any process)          consumer (proftop, one thread)
 *      -----------------------------------         ------------------------------
 *      p = load(head)                              s = slot[tail % n]
 *      loop:                                       q = load_acquire(s.seq)
 *        q = load_acquire(slot[p % n].seq)         if q != tail + 1: nothing ready
 *        q == p:  CAS(head, p, p + 1) wins  -+     read the payload
 *                 the slot (else p = the     |     store_release(s.seq, tail + n) --+
 *                 head the CAS saw, again)   |     tail++ (private; store(ring tail) |
 *        q < p:   full: overflow++, give up  |     for the record)                   |
 *        q > p:   p = load(head), again      |                                       |
 *      write the payload                     |     The release of seq + n hands the  |
 *      store_release(slot.seq, p + 1) -------+---> slot back, after the reads; the   |
 *      (orders the payload before the            producer's acquire of seq == p     |
 *       sequence the consumer acquires)          (one lap later) pairs with it. <---+
 *
 * A producer never waits (a full ring drops the record and counts it), never allocates and
 * takes no lock: it may run inside malloc, in a signal handler, in a forked child.
 *
 * The consumer trusts nothing in the shared memory but the slots' sequence numbers, and those
 * only to know when a slot is ready: the target can write anything there. It keeps its own copy
 * of the geometry and of the tail; a payload is bytes to validate. A slot reserved and never
 * published (its producer was killed while writing it) would stop the ring: a slot that stays
 * unready for SHMRING_STALL_NS while a later one is ready is skipped (counted). A producer that
 * was only stopped that long (SIGSTOP, a debugger) then publishes into a slot that another may
 * be writing: one record may come out mixed, which validation must survive. */
#ifndef PROFTOP_SHMRING_H
#define PROFTOP_SHMRING_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SHMRING_MAGIC 0x70726f66746f7052ull /* "Rpotforp" */
#define SHMRING_STALL_NS 1000000000ull

/* The shared header. head and tail are on cache lines of their own. */
struct shmring_header {
	_Atomic uint64_t magic;
	uint32_t nslots;            /* a power of two */
	uint32_t slot_size;         /* payload bytes per slot, a multiple of 8 */
	_Alignas(64) _Atomic uint64_t head;
	_Alignas(64) _Atomic uint64_t tail;   /* the consumer's, published for statistics */
	_Atomic uint64_t overflow;  /* records producers dropped: the ring was full */
};

/* Bytes of shared memory a ring of nslots slots of slot_size bytes takes (0: bad geometry:
 * nslots not a power of two or 0, slot_size not a multiple of 8 or 0, or too large). */
size_t shmring_bytes(uint32_t nslots, uint32_t slot_size);

/* Make a ring in mem (bytes long, from shmring_bytes(), 64-byte aligned). 0 or -EINVAL. */
int shmring_init(void *mem, size_t bytes, uint32_t nslots, uint32_t slot_size);

/* --- producers: in the target, on the memory as mapped there ----------------------------------- */

/* Whether mem (bytes long) holds a ring of this geometry's header; the producer's check before
 * it uses one it was handed. */
bool shmring_valid(const void *mem, size_t bytes);
/* A slot for one record, and its position in *pos; NULL when the ring is full (counted). */
void *shmring_reserve(void *mem, uint64_t *pos);
/* Publish the slot reserved at pos. */
void shmring_publish(void *mem, uint64_t pos);

/* --- the consumer: proftop ------------------------------------------------------------------- */

struct shmring_reader {
	struct shmring_header *h;
	unsigned char *slots;
	uint32_t nslots, slot_size;   /* its own copies, never read back from the memory */
	uint64_t tail;
	uint64_t stall_since_ns;      /* when the slot at tail was first seen unready; 0: not */
	uint64_t skipped;             /* slots given up on (their producer died writing them) */
};

/* Read the ring made by shmring_init() at mem with this geometry. */
void shmring_reader_init(struct shmring_reader *r, void *mem, uint32_t nslots, uint32_t slot_size);
/* The payload of the oldest ready record (slot_size bytes, to validate), or NULL when none is;
 * now_ns (CLOCK_MONOTONIC) times a stalled slot. */
const void *shmring_peek(struct shmring_reader *r, uint64_t now_ns);
/* Records reserved so far (the producers' head: as the target wrote it, so only a bound) and
 * read so far. */
uint64_t shmring_reserved(const struct shmring_reader *r);
uint64_t shmring_read(const struct shmring_reader *r);
/* Hand the record shmring_peek() returned back to the producers. */
void shmring_release(struct shmring_reader *r);
/* Records producers dropped on a full ring (as the shared counter says: the target's to write). */
uint64_t shmring_overflow(const struct shmring_reader *r);

#endif
