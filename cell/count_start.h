/* count_start.h: the point where a count run's valgrind starts to simulate.
 *
 * A count (runner/counts.py) runs the cell under callgrind with
 * --instr-atstart=no: the process's start, its oracle and the aging of a
 * heap (--age, some thousand repetitions for thrash_pool_sort) then run on
 * valgrind's plain translation, not through the cache simulation that makes
 * a process some two hundred times slower than native. The cell turns the
 * simulation on just before its warm-up sample, so the simulated caches
 * start empty there, whatever ran before, on every run and every machine.
 *
 * The request is callgrind's START_INSTRUMENTATION in valgrind's client
 * request ABI (valgrind.h, callgrind.h): the request code ('C' << 24 |
 * 'T' << 16) + 4 at the address in rax, announced by four rotations of rdi
 * that add up to 128 bits and xchg of rbx with itself. Natively those are no
 * operation; under valgrind they are the request. Where the ABI is not
 * written here (another architecture or compiler), AM_COUNT_START is 0 and a
 * count simulates from the process's start (the cell's --list says which). */
#ifndef AM_COUNT_START_H
#define AM_COUNT_START_H

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define AM_COUNT_START 1
static inline void am_count_start(void) {
    volatile unsigned long long request[6] = {((unsigned long long)'C' << 24 | (unsigned long long)'T' << 16) + 4,
                                              0, 0, 0, 0, 0};
    unsigned long long result = 0;
    __asm__ volatile("rolq $3, %%rdi ; rolq $13, %%rdi\n\t"
                     "rolq $61, %%rdi ; rolq $51, %%rdi\n\t"
                     "xchgq %%rbx, %%rbx"
                     : "=d"(result)
                     : "a"(&request[0]), "0"(result)
                     : "cc", "memory");
    (void)result;
}
#else
#define AM_COUNT_START 0
static inline void am_count_start(void) {}
#endif

#endif
