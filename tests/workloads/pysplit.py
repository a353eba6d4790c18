# pysplit.py SECONDS [CYCLE] — a Python program with a known split of its CPU time: every CYCLE
# seconds (default 2), 30% of it in hash_blocks (a loop around a native library's sha256: Python
# calling native code) and 70% in count_primes (pure Python), by the clock.
# (Phases this long: proftop reads a thread's Python frames some milliseconds after its sample,
# so the samples just before a switch of function may be credited to the next one; README.)
import hashlib
import sys
import time


def hash_blocks(seconds):
    data = b"x" * 65536
    end = time.perf_counter() + seconds
    h = 0
    while time.perf_counter() < end:
        h ^= hashlib.sha256(data).digest()[0]
    return h


def count_primes(seconds):
    end = time.perf_counter() + seconds
    c, i = 0, 2
    while time.perf_counter() < end:
        j = 2
        while j * j <= i:
            if i % j == 0:
                break
            j += 1
        else:
            c += 1
        i += 1
    return c


def main(seconds, cycle):
    for _ in range(max(1, int(seconds / cycle))):
        hash_blocks(0.3 * cycle)
        count_primes(0.7 * cycle)


main(float(sys.argv[1]) if len(sys.argv) > 1 else 3,
     float(sys.argv[2]) if len(sys.argv) > 2 else 2)
