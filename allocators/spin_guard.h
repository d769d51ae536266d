/* spin_guard.h: a lock for short, rare critical sections that must work
 * before anything is created: a shared pool set's handle count (whose first
 * handle creates the set's mutex) and the counting wrapper's tables. A spin
 * on a C11 atomic_flag, statically initialised; never on a fast path.
 * C11 <stdatomic.h>: MSVC needs VS 2022 17.5+ with /experimental:c11atomics. */
#ifndef AM_SPIN_GUARD_H
#define AM_SPIN_GUARD_H

#include <stdatomic.h>
#include "platform.h"

#define AM_SPIN_GUARD_INIT ATOMIC_FLAG_INIT

AM_INLINE void am_spin_enter(atomic_flag *guard) {
    while (atomic_flag_test_and_set_explicit(guard, memory_order_acquire)) {}
}

AM_INLINE void am_spin_leave(atomic_flag *guard) { atomic_flag_clear_explicit(guard, memory_order_release); }

#endif
