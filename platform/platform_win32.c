/* platform_win32.c: the Win32 side of platform.h, for MSVC, clang-cl and
 * MinGW-w64. Plain Win32 calls only, no POSIX emulation layer. Where Windows
 * has no equivalent of a POSIX call the function says what it does instead
 * (see docs/windows.md). Nothing here is on a measured fast path except the
 * clock, which is read once per sample. */
#if defined(_WIN32)
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN 1
#endif
#ifndef NOMINMAX
#define NOMINMAX 1
#endif
#include "platform.h"

#include <windows.h>
#include <psapi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(_MSC_VER) && !defined(__clang__)
#include <intrin.h>
#endif

/* ---- compiler ---- */

#if defined(_MSC_VER) && !defined(__clang__)
/* where platform.h's am_escape stores the pointer on MSVC */
const void *volatile am_escape_sink;
#endif

/* ---- time ---- */

static uint64_t qpc_frequency(void) {
    static uint64_t freq; /* fixed at boot; a racing first call stores the same value */
    if (!freq) {
        LARGE_INTEGER f;
        QueryPerformanceFrequency(&f);
        freq = (uint64_t)f.QuadPart;
    }
    return freq;
}

uint64_t am_now_ns(void) {
    LARGE_INTEGER t;
    QueryPerformanceCounter(&t);
    uint64_t ticks = (uint64_t)t.QuadPart, freq = qpc_frequency();
    /* whole seconds and the remainder apart: ticks * 1e9 overflows after ~30 min at 10 MHz */
    return ticks / freq * 1000000000u + ticks % freq * 1000000000u / freq;
}

/* ---- threads and locks ---- */

struct am_thread { HANDLE handle; am_thread_fn fn; void *arg; };

/* Every thread started here runs through this function: per-thread set-up
 * and tear-down belong here, next to the call of fn. */
static DWORD WINAPI thread_trampoline(LPVOID p) {
    am_thread *t = (am_thread *)p;
    t->fn(t->arg);
    return 0;
}

am_thread *am_thread_start(am_thread_fn fn, void *arg) {
    am_thread *t = (am_thread *)malloc(sizeof *t);
    if (!t) return NULL;
    t->fn = fn;
    t->arg = arg;
    t->handle = CreateThread(NULL, 0, thread_trampoline, t, 0, NULL);
    if (!t->handle) {
        free(t);
        return NULL;
    }
    return t;
}

void am_thread_join(am_thread *t) {
    WaitForSingleObject(t->handle, INFINITE);
    CloseHandle(t->handle);
    free(t);
}

void am_thread_yield(void) { SwitchToThread(); }

unsigned am_cpu_count(void) {
    /* every processor group, not only this thread's (machines past 64 CPUs) */
    DWORD n = GetActiveProcessorCount(ALL_PROCESSOR_GROUPS);
    if (n == 0) {
        SYSTEM_INFO si;
        GetSystemInfo(&si);
        n = si.dwNumberOfProcessors;
    }
    return n ? (unsigned)n : 1u;
}

/* A slim reader/writer lock taken exclusively: no kernel object, no
 * destruction needed, and like a default pthread mutex it is not recursive. */
struct am_mutex { SRWLOCK lock; };

am_mutex *am_mutex_create(void) {
    am_mutex *m = (am_mutex *)malloc(sizeof *m);
    if (m) InitializeSRWLock(&m->lock);
    return m;
}
void am_mutex_destroy(am_mutex *m) { free(m); }
void am_mutex_lock(am_mutex *m) { AcquireSRWLockExclusive(&m->lock); }
void am_mutex_unlock(am_mutex *m) { ReleaseSRWLockExclusive(&m->lock); }

/* ---- virtual memory ---- */

size_t am_page_size(void) {
    static size_t page;
    if (!page) {
        SYSTEM_INFO si;
        GetSystemInfo(&si);
        page = si.dwPageSize;
    }
    return page;
}

/* Committed at once, as mmap's memory is usable at once: the whole size counts
 * against the commit limit (RAM + page file) but pages take RAM only when
 * touched. Windows hands out address space in 64 KiB steps. */
void *am_vm_reserve(size_t bytes) {
    if (bytes == 0) return NULL;
    return VirtualAlloc(NULL, bytes, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE);
}

/* Windows releases a reservation only whole and from its base. Releasing part
 * of one (munmap of a head or tail) decommits instead: the memory goes back,
 * the address space stays reserved. */
void am_vm_release(void *p, size_t bytes) {
    MEMORY_BASIC_INFORMATION mi;
    if (!p || !bytes) return;
    if (VirtualQuery(p, &mi, sizeof mi) == 0) return;
    if (mi.AllocationBase == p) {
        /* the reservation's size: the regions that share its base */
        size_t whole = 0;
        char *q = (char *)p;
        while (VirtualQuery(q, &mi, sizeof mi) != 0 && mi.AllocationBase == p && mi.State != MEM_FREE) {
            whole += mi.RegionSize;
            q += mi.RegionSize;
        }
        if (bytes >= whole) {
            VirtualFree(p, 0, MEM_RELEASE);
            return;
        }
    }
    VirtualFree(p, bytes, MEM_DECOMMIT);
}

/* VirtualUnlock on pages that are not locked removes them from the working set
 * (and fails with ERROR_NOT_LOCKED, which is the expected answer). The contents
 * stay: the pages go to the standby or modified list, and the next touch is a
 * soft fault, or a read from the page file if the system needed the RAM. This
 * is MADV_PAGEOUT's meaning, the one the POSIX side prefers. */
static int trim_working_set(void *p, size_t bytes) {
    if (VirtualUnlock(p, bytes)) return 0;
    return GetLastError() == ERROR_NOT_LOCKED ? 0 : -1;
}

/* a job object could cap the process's commit; the runner does not ask here */
int am_limit_address_space(uint64_t bytes) {
    (void)bytes;
    return -1;
}

int am_vm_evict(void *p, size_t bytes) {
    if (!p || !bytes) return -1;
    return trim_working_set(p, bytes);
}

/* QueryWorkingSetEx: one entry per page, Valid set when the page is in this
 * process's working set. Asked in batches to keep the buffer on the stack. */
size_t am_vm_resident(const void *p, size_t bytes) {
    enum { BATCH = 256 };
    PSAPI_WORKING_SET_EX_INFORMATION info[BATCH];
    size_t page = am_page_size();
    uintptr_t start = (uintptr_t)p & ~(uintptr_t)(page - 1);
    size_t pages = bytes ? ((uintptr_t)p + bytes - start + page - 1) / page : 0;
    size_t resident = 0;
    HANDLE self = GetCurrentProcess();
    for (size_t done = 0; done < pages;) {
        size_t n = pages - done < BATCH ? pages - done : BATCH;
        for (size_t i = 0; i < n; i++) {
            memset(&info[i], 0, sizeof info[i]);
            info[i].VirtualAddress = (PVOID)(start + (done + i) * page);
        }
        if (!QueryWorkingSetEx(self, info, (DWORD)(n * sizeof info[0]))) return 0;
        for (size_t i = 0; i < n; i++) resident += info[i].VirtualAttributes.Valid;
        done += n;
    }
    return resident * page;
}

/* The file is opened FILE_FLAG_DELETE_ON_CLOSE: Windows cannot delete a file
 * while it is mapped, so the file goes away by itself once the view, the
 * mapping and the handle are closed, also when the process dies. A caller's
 * own remove(path) afterwards then finds nothing, which is harmless. */
int am_file_map_create(am_file_map *m, const char *path, size_t bytes) {
    memset(m, 0, sizeof *m);
    if (!bytes) return -1;
    HANDLE f = CreateFileA(path, GENERIC_READ | GENERIC_WRITE,
                           FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL, CREATE_ALWAYS,
                           FILE_ATTRIBUTE_TEMPORARY | FILE_FLAG_DELETE_ON_CLOSE, NULL);
    if (f == INVALID_HANDLE_VALUE) return -1;
    /* the mapping's size extends the file, as ftruncate does */
    uint64_t size = (uint64_t)bytes;
    HANDLE map = CreateFileMappingA(f, NULL, PAGE_READWRITE, (DWORD)(size >> 32), (DWORD)size, NULL);
    if (!map) { CloseHandle(f); return -1; }
    void *p = MapViewOfFile(map, FILE_MAP_ALL_ACCESS, 0, 0, bytes);
    if (!p) { CloseHandle(map); CloseHandle(f); return -1; }
    m->base = p;
    m->size = bytes;
    m->handle = (intptr_t)f;
    m->mapping = (intptr_t)map;
    return 0;
}

void am_file_map_close(am_file_map *m) {
    if (m->base) UnmapViewOfFile(m->base);
    if (m->mapping) CloseHandle((HANDLE)m->mapping);
    if (m->handle && (HANDLE)m->handle != INVALID_HANDLE_VALUE) CloseHandle((HANDLE)m->handle);
    memset(m, 0, sizeof *m);
}

/* Written back first, then out of the working set. Windows has no
 * POSIX_FADV_DONTNEED: the system file cache may still hold the pages, so the
 * next touch can be a soft fault instead of a disk read. */
int am_file_evict(am_file_map *m, size_t offset, size_t bytes) {
    if (!m->base || offset > m->size || bytes > m->size - offset) return -1;
    char *p = (char *)m->base + offset;
    if (!FlushViewOfFile(p, bytes)) return -1;
    if (!FlushFileBuffers((HANDLE)m->handle)) return -1;
    return trim_working_set(p, bytes);
}

/* ---- process ---- */

size_t am_peak_rss_bytes(void) {
    PROCESS_MEMORY_COUNTERS pmc;
    memset(&pmc, 0, sizeof pmc);
    pmc.cb = sizeof pmc;
    if (!GetProcessMemoryInfo(GetCurrentProcess(), &pmc, sizeof pmc)) return 0;
    return (size_t)pmc.PeakWorkingSetSize;
}

int am_page_faults(uint64_t *minor, uint64_t *major) {
    PROCESS_MEMORY_COUNTERS pmc;
    memset(&pmc, 0, sizeof pmc);
    pmc.cb = sizeof pmc;
    if (!GetProcessMemoryInfo(GetCurrentProcess(), &pmc, sizeof pmc)) return -1;
    *minor = (uint64_t)pmc.PageFaultCount; /* soft and hard together */
    *major = 0;
    return 0;
}

/* The module that holds the malloc this code calls: the C runtime DLL
 * (ucrtbase.dll, msvcrt.dll) or, with a static runtime, the executable itself.
 * Where malloc is reached through an import thunk in the executable, the
 * thunk's jump is followed to the DLL. No version call: the file name says it. */
int am_move_memory(uint64_t heap_bytes, uint64_t map_bytes) {
    (void)heap_bytes, (void)map_bytes;
    return -1; /* --layout shifted is Linux's (runner/layout.py refuses it elsewhere) */
}

int am_layout_randomized(void) {
    return -1; /* ASLR is a property of the image and the system policy: not read here */
}

int am_malloc_library(char *buf, size_t n) {
    void *(*fn)(size_t) = malloc;
    const unsigned char *addr;
    memcpy(&addr, &fn, sizeof addr);
#if defined(_M_X64) || defined(__x86_64__)
    /* jmp qword ptr [rip + disp32]: FF 25 disp32 */
    if (addr[0] == 0xFF && addr[1] == 0x25) {
        int32_t disp;
        memcpy(&disp, addr + 2, sizeof disp);
        memcpy(&addr, addr + 6 + disp, sizeof addr);
    }
#endif
    HMODULE mod = NULL;
    char path[MAX_PATH];
    if (!GetModuleHandleExA(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
                            (LPCSTR)addr, &mod) ||
        !GetModuleFileNameA(mod, path, sizeof path)) {
        snprintf(buf, n, "unknown (no module holds malloc)");
        return -1;
    }
    const char *base = path;
    for (const char *c = path; *c; c++)
        if (*c == '\\' || *c == '/') base = c + 1;
    snprintf(buf, n, "%s%s", base, mod == GetModuleHandleA(NULL) ? " (static runtime)" : "");
    return 0;
}

/* ---- thread exit hooks ---- */
/* A fiber-local slot whose callback runs when a thread ends holds each
 * thread's list of hooks, newest first, as the POSIX key destructor does. */
typedef struct exit_hook { void (*fn)(void *); void *arg; struct exit_hook *next; } exit_hook;
static INIT_ONCE exit_once = INIT_ONCE_STATIC_INIT;
static DWORD exit_slot = FLS_OUT_OF_INDEXES;

static void WINAPI run_exit_hooks(void *p) {
    exit_hook *e = p;
    while (e) {
        exit_hook *next = e->next;
        e->fn(e->arg);
        free(e);
        e = next;
    }
}

static BOOL CALLBACK make_exit_slot(PINIT_ONCE once, void *param, void **ctx) {
    (void)once; (void)param; (void)ctx;
    exit_slot = FlsAlloc(run_exit_hooks);
    return TRUE;
}

int am_thread_exit_hook(void (*fn)(void *arg), void *arg) {
    InitOnceExecuteOnce(&exit_once, make_exit_slot, NULL, NULL);
    if (exit_slot == FLS_OUT_OF_INDEXES) return -1;
    exit_hook *e = malloc(sizeof *e);
    if (!e) return -1;
    e->fn = fn;
    e->arg = arg;
    e->next = FlsGetValue(exit_slot);
    if (!FlsSetValue(exit_slot, e)) { free(e); return -1; }
    return 0;
}

/* ---- hardware counters ---- */
/* Windows gives user programs no portable cycle/instruction counters (ETW's
 * PMC sources need administrator rights): say so, as the runner expects. */
am_hw_counters *am_hw_counters_open(const char **why) {
    if (why) *why = "unavailable: no user-mode hardware counters on Windows";
    return NULL;
}
void am_hw_counters_start(am_hw_counters *c) { (void)c; }
int am_hw_counters_stop(am_hw_counters *c, uint64_t *instructions, uint64_t *cycles) {
    (void)c; *instructions = 0; *cycles = 0;
    return -1;
}
void am_hw_counters_close(am_hw_counters *c) { (void)c; }
#endif
