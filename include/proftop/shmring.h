/* shmring.h — a bounded multi-producer, single-consumer ring of variable-sized records in shared
 * memory: from the allocation-sampling library preloaded into the target's processes (any
 * thread of any of them, forked children included) to proftop's sampler thread.
 *
 * The memory is a header, an array of nslots 64-bit sequence numbers, and nslots slots of
 * slot_size bytes each. A record takes k consecutive slots (1 <= k <= nslots / 4) whose bytes
 * are contiguous: a record never wraps around the end of the slots; one that would is preceded
 * by a padding record to the end. A record's first 8 bytes (struct shmring_record) are the
 * ring's: a tag and k. Slot i's sequence starts at i. Positions are free-running 64-bit counters,
 * never wrapped (Vyukov's bounded queue, with a reservation of k slots at once):
 *
 *      producer (any thread, any process)            consumer (proftop, one thread)
 *      -----------------------------------           ------------------------------
 *      p = load(head)                                s = seq[tail % n]
 *      loop: (pad: slots to the end, if k            q = load_acquire(s)
 *             would not fit before it; t = pad + k)  if q != tail + 1: not ready
 *        q = load_acquire(seq[p + t - 1])            read k from the record; the last
 *        q == p + t - 1: CAS(head, p, p + t)  --+    slot's sequence must be published
 *                 wins them (else p = what the  |    too; copy the payload out
 *                 CAS saw, again)               |    store_release(seq[tail + i],
 *        q < p + t - 1: full: overflow++, give up    tail + i + n) for i < k  ------+
 *        q > p + t - 1: p = load(head), again   |    tail += k (private; stored to  |
 *      write the record                         |    the header for the record)     |
 *      store_release(seq[p + i], p + i + 1) for |                                   |
 *      i = k - 1 down to 0 (the first last) ----+--> The first slot's release orders |
 *                                                    the payload and the others'     |
 *      The consumer hands slots back in order, so    sequences before it.            |
 *      the last of t slots free means all are: <-------------------------------------+
 *
 * A producer never waits (a full ring drops the record and counts it), never allocates and
 * takes no lock: it may run inside malloc, in a signal handler, in a forked child.
 *
 * The consumer trusts nothing in the shared memory but the sequence numbers, and those only to
 * know when a slot is ready: the target can write anything there. It keeps its own copy of the
 * geometry and of the tail, and a record's k only within the ring's bounds; a payload is bytes
 * to validate, after copying them out. A slot reserved and never published (its producer was
 * killed while writing it) would stop the ring: a record that stays unready for SHMRING_STALL_NS
 * while a later one is reserved is skipped (counted): as many slots as its header says, or, when
 * the producer died before writing that, those up to the next one published.
 * A producer that was only stopped that long (SIGSTOP, a debugger) then publishes into slots
 * another may be writing: one record may come out mixed, which validation must survive. */
#ifndef PROFTOP_SHMRING_H
#define PROFTOP_SHMRING_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SHMRING_MAGIC 0x70726f66746f7053ull /* "Spotforp": variable-sized records */
#define SHMRING_STALL_NS 1000000000ull

/* The shared header. head and tail are on cache lines of their own. */
struct shmring_header {
	_Atomic uint64_t magic;
	uint32_t nslots;            /* a power of two */
	uint32_t slot_size;         /* bytes per slot, a multiple of 8 */
	_Alignas(64) _Atomic uint64_t head;
	_Alignas(64) _Atomic uint64_t tail;   /* the consumer's, published for statistics */
	_Atomic uint64_t overflow;  /* records producers dropped: the ring was full */
};

/* The start of every record: the ring's own. */
struct shmring_record {
	uint32_t tag;               /* SHMRING_TAG_RECORD or SHMRING_TAG_PAD */
	uint32_t nslots;            /* slots the record takes, this one included */
};

#define SHMRING_TAG_RECORD 0x52656331u /* "1ceR" */
#define SHMRING_TAG_PAD 0x50616431u    /* "1daP" */

/* Bytes of shared memory a ring of nslots slots of slot_size bytes takes (0: bad geometry:
 * nslots not a power of two or under 4, slot_size not a multiple of 8 or under 16, or too
 * large). */
size_t shmring_bytes(uint32_t nslots, uint32_t slot_size);
/* The largest payload one record of this geometry holds. */
size_t shmring_max_payload(uint32_t nslots, uint32_t slot_size);

/* Make a ring in mem (bytes long, from shmring_bytes(), 64-byte aligned). 0 or -EINVAL. */
int shmring_init(void *mem, size_t bytes, uint32_t nslots, uint32_t slot_size);

/* --- producers: in the target, on the memory as mapped there ----------------------------------- */

/* Whether mem (bytes long) holds a ring of this layout; the producer's check before it uses one
 * it was handed. */
bool shmring_valid(const void *mem, size_t bytes);
/* Room for a payload of bytes bytes (8-byte aligned, contiguous), and its position in *pos;
 * NULL when the ring is full (counted) or bytes is more than one record holds. */
void *shmring_reserve(void *mem, size_t bytes, uint64_t *pos);
/* Publish the record reserved at pos. */
void shmring_publish(void *mem, uint64_t pos);

/* --- the consumer: proftop ------------------------------------------------------------------- */

struct shmring_reader {
	struct shmring_header *h;
	_Atomic uint64_t *seqs;
	unsigned char *slots;
	uint32_t nslots, slot_size;   /* its own copies, never read back from the memory */
	uint64_t tail;
	uint32_t current;             /* slots of the record peek returned; 0: none */
	uint64_t stall_since_ns;      /* when the record at tail was first seen unready; 0: not */
	uint64_t skipped;             /* slots given up on (dead producers, garbage) */
};

/* Read the ring made by shmring_init() at mem with this geometry. */
void shmring_reader_init(struct shmring_reader *r, void *mem, uint32_t nslots, uint32_t slot_size);
/* The payload of the oldest ready record, in the shared memory (to copy out before it is
 * validated), and in *bytes its length as the ring bounds it (the slots it takes, less the
 * record's start; what the producer wrote may be shorter); NULL when none is ready. now_ns
 * (CLOCK_MONOTONIC) times a stalled record. */
const void *shmring_peek(struct shmring_reader *r, uint64_t now_ns, size_t *bytes);
/* Slots reserved so far (the producers' head: as the target wrote it, so only a bound) and
 * read so far. */
uint64_t shmring_reserved(const struct shmring_reader *r);
uint64_t shmring_read(const struct shmring_reader *r);
/* Hand the record shmring_peek() returned back to the producers. */
void shmring_release(struct shmring_reader *r);
/* Records producers dropped on a full ring (as the shared counter says: the target's to write). */
uint64_t shmring_overflow(const struct shmring_reader *r);

#endif
