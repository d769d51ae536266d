/* test_calibrate.c: the repetition counts of cell/calibrate.h, fed made-up
 * durations: a count that always grows (a cell near min_ms once hung with a
 * growth of 1.1 rounding back to 1), bounded steps, and the one-repetition
 * estimate that keeps slow strategies from samples of seconds, the long
 * repetition that settles the count, and a long visit's fewer samples. */
#include "check.h"
#include "../../cell/calibrate.h"

static void test_grow_always_grows(void) {
    /* every count, even where 10% of it rounds to nothing */
    for (unsigned reps = 1; reps < 100; reps++) {
        CHECK(am_reps_grow(reps, 9999999, 10000000) > reps);
        CHECK(am_reps_grow(reps, 10000000 - 1, 10000000) >= reps + 1);
    }
}

static void test_grow_aims_past_target(void) {
    /* 100 reps took 1 ms of a 10 ms target: 1,200 with the fifth to spare */
    CHECK(am_reps_grow(100, 1000000, 10000000) == 1200);
    /* capped at 16 times a too-fast run, and a zero reading counts as too fast */
    CHECK(am_reps_grow(100, 1, 10000000) == 1600);
    CHECK(am_reps_grow(100, 0, 10000000) == 1600);
    /* 90% of the way: a small step, not a doubling */
    CHECK(am_reps_grow(1000, 9000000, 10000000) == 1333);
}

static void test_grow_saturates(void) {
    CHECK(am_reps_grow(4000000000u, 1, 10000000) == 4294967295u);
}

static void test_from_one_lowers_for_slow_runs(void) {
    /* one repetition of 94 ms with a 6.25 ms target: one is enough */
    CHECK(am_reps_from_one(16, 94000000, 6250000) == 1);
    /* one of 1 ms for 10 ms: 13, under the workload's 16 */
    CHECK(am_reps_from_one(16, 1000000, 10000000) == 13);
    /* fast ones keep the starting count (one repetition is too short to trust) */
    CHECK(am_reps_from_one(16, 1000, 10000000) == 16);
    CHECK(am_reps_from_one(16, 0, 10000000) == 16);
}

static void test_one_long_repetition_settles_the_count(void) {
    /* a repetition of eight targets or more is the count; shorter ones, or
     * counts above one, are confirmed by a second run */
    CHECK(am_one_rep_settles(1, 8 * 575000, 575000));
    CHECK(am_one_rep_settles(1, 100000000, 575000));
    CHECK(!am_one_rep_settles(1, 8 * 575000 - 8, 575000));
    CHECK(!am_one_rep_settles(2, 100000000, 575000));
}

static void test_a_long_visit_takes_fewer_samples(void) {
    /* 8 pairs planned at 0.5 ms a side: 16 ms allowed; pairs of 1 ms all run */
    CHECK(am_visit_samples(8, 2, 1000000, 500000) == 8);
    /* pairs of 4.5 ms: 3; of 100 ms: one, never none */
    CHECK(am_visit_samples(8, 2, 4500000, 500000) == 3);
    CHECK(am_visit_samples(8, 2, 100000000, 500000) == 1);
    /* alone, half the allowance; unknown durations keep the planned count */
    CHECK(am_visit_samples(8, 1, 4500000, 500000) == 1);
    CHECK(am_visit_samples(8, 2, 0, 500000) == 8);
}

static void test_a_side_settles_for_half_a_sample(void) {
    /* half the sample's repetitions, rounded up: never none */
    CHECK(am_settle_reps(1) == 1);
    CHECK(am_settle_reps(2) == 1);
    CHECK(am_settle_reps(3) == 2);
    CHECK(am_settle_reps(25) == 13);
    CHECK(am_settle_reps(4000000000u) == 2000000000u);
    CHECK(am_settle_reps(4294967295u) == 2147483648u);
}

int main(int argc, char **argv) {
    static const am_test tests[] = {
        {"grow_always_grows", test_grow_always_grows},
        {"grow_aims_past_target", test_grow_aims_past_target},
        {"grow_saturates", test_grow_saturates},
        {"from_one_lowers_for_slow_runs", test_from_one_lowers_for_slow_runs},
        {"one_long_repetition_settles_the_count", test_one_long_repetition_settles_the_count},
        {"a_long_visit_takes_fewer_samples", test_a_long_visit_takes_fewer_samples},
        {"a_side_settles_for_half_a_sample", test_a_side_settles_for_half_a_sample},
        {NULL, NULL}};
    return am_run_tests("calibrate", tests, argc, argv);
}
