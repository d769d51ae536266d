/* calibrate.h: how many repetitions a sample of a cell takes. The arithmetic
 * only, so a test can drive it with made-up durations; cell_main.c runs the
 * repetitions and feeds the durations in. */
#ifndef AM_CALIBRATE_H
#define AM_CALIBRATE_H

#include <stdint.h>

#include "platform.h"

/* From one repetition's duration: the count that should fill target_ns with
 * a fifth to spare, never above the workload's starting count (a slow
 * strategy, e.g. an ordered free list walked on each free, may need one). */
AM_INLINE unsigned am_reps_from_one(unsigned start, uint64_t one_ns, uint64_t target_ns) {
    if (!one_ns) return start;
    double enough = (double)target_ns / (double)one_ns * 1.2 + 1;
    return enough < start ? (unsigned)enough : start;
}

/* After a run of reps that lasted ns < target_ns: a larger count. At most 16
 * times larger (one run's duration is noisy), at least 10% and one more, so
 * the count always grows and calibration ends. */
AM_INLINE unsigned am_reps_grow(unsigned reps, uint64_t ns, uint64_t target_ns) {
    double grow = ns ? (double)target_ns / (double)ns * 1.2 : 16.0;
    if (grow > 16) grow = 16;
    if (grow < 1.1) grow = 1.1;
    double more = (double)reps * grow;
    if (more >= 4294967295.0) return 4294967295u;
    return (unsigned)more > reps ? (unsigned)more : reps + 1;
}

/* A repetition that alone lasts this many times the target settles the
 * count at one, the least there is: no run after it is that much faster (a
 * fresh heap's page faults make a run a few times slower, not eight), and
 * confirming it would repeat the cell's longest run for nothing. */
#define AM_ONE_REP_SETTLES 8

AM_INLINE int am_one_rep_settles(unsigned reps, uint64_t ns, uint64_t target_ns) {
    return reps == 1 && ns / AM_ONE_REP_SETTLES >= target_ns;
}

/* A visit spends in its samples at most AM_VISIT_SLACK times what its planned
 * samples take at the target, each side: a cell whose one repetition outlasts
 * the target many times over takes fewer samples, at least one. pair_ns: a
 * sample of the row and one of its partner (0: unknown, the planned count).
 * A first visit counts them from its calibration; the runner gives the later
 * ones the count their first visit's samples give (runner/rounds.py). */
#define AM_VISIT_SLACK 2

AM_INLINE unsigned am_visit_samples(unsigned planned, unsigned sides, uint64_t pair_ns, uint64_t target_ns) {
    if (!pair_ns) return planned;
    double fit = (double)AM_VISIT_SLACK * planned * sides * (double)target_ns / (double)pair_ns;
    if (fit >= planned) return planned;
    return fit < 1 ? 1 : (unsigned)fit;
}

/* After the other side's sample, a side runs half a sample's repetitions
 * (at least one) untimed before its own. One repetition was not enough: beside
 * a row whose repetition frees its 2.5 MB back (glibc, jemalloc at alloc_bulk
 * 256), the partner's sample after one repetition ran 25-65% slower than its
 * sample after its own, and after half a sample 0-5%; time alone, spent
 * spinning, did not help, so it is the side's own memory that must come back
 * (docs/measurements.md, "The partner after the row's sample"). */
AM_INLINE unsigned am_settle_reps(unsigned reps) {
    return reps / 2 + (reps % 2);
}

#endif
