/* sanitize.h: lets a strategy tell AddressSanitizer which bytes of its own
 * memory are not handed out, so that ASan reports a use after free or an
 * overflow inside a pool or arena as it does for malloc. am_poison/am_unpoison
 * call ASan's manual poisoning in -fsanitize=address builds and compile to
 * nothing otherwise. The allocmark debug layer (AM_DEBUG) is in debug.h. */
#ifndef AM_SANITIZE_H
#define AM_SANITIZE_H

#include <stddef.h>

#if !defined(AM_ASAN)
#if defined(__SANITIZE_ADDRESS__)
#define AM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define AM_ASAN 1
#endif
#endif
#endif
#ifndef AM_ASAN
#define AM_ASAN 0
#endif

#if AM_ASAN
/* declared here rather than through <sanitizer/asan_interface.h>, which not
 * every toolchain installs; without its const, which makes gcc 12 take the
 * call for a read of a new chunk's uninitialised bytes (-Wmaybe-uninitialized) */
void __asan_poison_memory_region(void volatile *addr, size_t size);
void __asan_unpoison_memory_region(void volatile *addr, size_t size);
int __asan_address_is_poisoned(void const volatile *addr);
void __asan_describe_address(void *addr);
/* ASan tracks 8-byte granules: poisoning covers whole granules inside the
 * range, unpoisoning makes exactly [p, p+n) addressable. */
#define am_poison(p, n) __asan_poison_memory_region((p), (n))
#define am_unpoison(p, n) __asan_unpoison_memory_region((p), (n))
#define am_is_poisoned(p) __asan_address_is_poisoned(p)
#else
#define am_poison(p, n) ((void)(p), (void)(n))
#define am_unpoison(p, n) ((void)(p), (void)(n))
#define am_is_poisoned(p) ((void)(p), 0)
#endif

#endif
