/* trace_read.h: reads a trace that the recorder wrote (docs/trace.md) into
 * memory: every call, in the order the program made them, with its blocks
 * named by dense ids. Portable C11 and stdio alone; it replays nothing. */
#ifndef AM_TRACE_READ_H
#define AM_TRACE_READ_H

#include <stddef.h>
#include <stdint.h>

#include "trace_format.h"

typedef struct am_trace_call {
    uint64_t id;      /* the block the call made, 1, 2, ... in the order made; 0: none */
    uint64_t old_id;  /* the block it freed or resized; 0: none */
    uint64_t size;    /* bytes asked: count * element size for calloc and reallocarray (UINT64_MAX on overflow) */
    uint64_t count;   /* calloc's and reallocarray's count of elements; 1 for the other calls */
    uint64_t align;   /* the alignment asked (posix_memalign, aligned_alloc, memalign); 0 for none */
    uint32_t thread;  /* the calling thread, 0, 1, ... in the order threads first called */
    uint8_t kind;     /* enum am_trace_kind */
    uint8_t failed;   /* no block came of the call (NULL, or posix_memalign's error); for free: free(NULL) */
    uint8_t old_ends; /* the call ended old_id (free; realloc that moved, resized or freed it) */
} am_trace_call;

typedef struct am_trace {
    unsigned version;
    uint64_t pid, parent_pid;
    unsigned origin;              /* enum am_trace_origin */
    char *program;                /* the program's name, as in the trace file's name */
    char *command;                /* its command line, arguments separated by spaces */
    am_trace_call *calls;
    size_t ncalls;
    uint64_t blocks;              /* ids given: 1 .. blocks */
    uint32_t threads;
    uint64_t file_bytes;
    /* the closing record, when the trace has one at its end */
    int closed;
    uint64_t closing[AM_CLOSE_FIELDS];
    /* a cut trace: the file ends inside a unit (a program killed while writing
     * it, a copy cut off) or without a closing record; the complete units are kept */
    int cut;
    uint64_t cut_at;              /* the byte where the last complete unit ends */
    char cut_reason[200];
    uint64_t dropped;             /* in a cut trace: calls naming blocks whose allocation was not written */
} am_trace;

/* 0 and *trace filled, or -1 and a message in err (the trace is then empty) */
int am_trace_read(const char *path, am_trace *trace, char *err, size_t errlen);
/* the same from a trace in memory; name stands for the file in messages */
int am_trace_parse(const unsigned char *data, size_t len, const char *name, am_trace *trace, char *err,
                   size_t errlen);
void am_trace_free(am_trace *trace);
const char *am_trace_kind_name(unsigned kind);
/* Where the reader keeps its arrays (the file, the calls, its working
 * tables): realloc and free unless a program gives others (NULL: those),
 * before it reads and until it frees. A cell gives pages of its own
 * (cell/trace_load.h): it decodes through the malloc of the row it measures,
 * and a library that keeps the address space of what it frees (jemalloc)
 * kept the decode's, gigabytes for a trace of ten million calls. */
void am_trace_use_memory(void *(*resize)(void *p, size_t bytes), void (*release)(void *p));

#endif
