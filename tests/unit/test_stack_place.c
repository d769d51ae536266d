/* test_stack_place.c: cell/stack_place.h puts a callee's frame at one offset
 * within a page whatever the depth of the stack it is called from, as the
 * kernel's random start of the stack moves it from process to process. */
#include "check.h"
#include "../../cell/stack_place.h"
#include "sanitize.h"

#define DEPTHS 40

static uintptr_t seen; /* the probe's local, modulo a page */

static AM_NOINLINE void probe(void) {
    volatile char here = 0;
    seen = (uintptr_t)&here & (AM_STACK_PERIOD - 1);
    (void)here;
}

static AM_NOINLINE void placed_probe(void) {
    AM_AT_STACK_PLACE(probe());
}

/* depth frames of 16 bytes or more each, then the probe, placed or not */
static AM_NOINLINE void at_depth(unsigned depth, int placed) {
    volatile char frame[24];
    frame[0] = (char)depth;
    if (depth) at_depth(depth - 1, placed);
    else if (placed) placed_probe();
    else probe();
    (void)frame[0];
}

static unsigned offsets_seen(int placed) {
    uintptr_t offsets[DEPTHS];
    unsigned distinct = 0;
    for (unsigned d = 0; d < DEPTHS; d++) {
        at_depth(d, placed);
        unsigned k = 0;
        while (k < distinct && offsets[k] != seen) k++;
        if (k == distinct) offsets[distinct++] = seen;
    }
    return distinct;
}

static void test_depth_moves_an_unplaced_frame(void) {
    /* the premise: the depths below do move the stack */
    CHECK(offsets_seen(0) == DEPTHS);
}

static void test_a_placed_frame_stays_at_one_offset(void) {
#if AM_ASAN
    CHECK_SKIP("AddressSanitizer pads the reserved bytes with its own");
#else
    CHECK_MSG(offsets_seen(1) == 1, "the placed probe's frame moved with the stack");
#endif
}

int main(int argc, char **argv) {
    static const am_test tests[] = {
        {"depth_moves_an_unplaced_frame", test_depth_moves_an_unplaced_frame},
        {"a_placed_frame_stays_at_one_offset", test_a_placed_frame_stays_at_one_offset},
        {NULL, NULL}};
    return am_run_tests("stack_place", tests, argc, argv);
}
