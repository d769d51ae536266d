/* stack_place.h: a call whose frame begins at one stack address modulo a
 * page, in every process and from every caller. The kernel starts a
 * process's stack at a random 16-byte step, and a workload's locals move with
 * it: minimal timed beside its own code read 0%, -8% or +9% from one process
 * to the next by where the stack began (docs/measurements.md, "The stack at
 * one place"). The caller reserves the bytes between its frame and the page
 * boundary below it, then calls: the callee's frame starts at that boundary,
 * less what the caller's frame layout adds, the same every time. */
#ifndef AM_STACK_PLACE_H
#define AM_STACK_PLACE_H

#include <stdint.h>
#include "platform.h"

#define AM_STACK_PERIOD ((uintptr_t)4096)

/* the bytes from the address `here` down to the page boundary below it */
#define AM_STACK_PAD(here) ((size_t)((uintptr_t)(here) & (AM_STACK_PERIOD - 1)))

/* Runs the statement `call` below the reserved bytes. They last until the
 * enclosing function returns: one use per call of that function, never in a
 * loop. */
#define AM_AT_STACK_PLACE(call)                                                  \
    do {                                                                         \
        volatile char am_here_ = 0;                                              \
        volatile char *am_pad_ = AM_STACK_RESERVE(AM_STACK_PAD(&am_here_) + 1); \
        am_pad_[0] = am_here_;                                                   \
        call;                                                                    \
    } while (0)

#endif
