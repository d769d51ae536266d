/* trace_format.h: the constants of allocmark's trace format (docs/trace.md),
 * shared by the recorder (record_*.c) and the reader (trace_read.c). Only
 * constants: how to write or read a trace lives in those files. */
#ifndef AM_TRACE_FORMAT_H
#define AM_TRACE_FORMAT_H

#define AM_TRACE_MAGIC "AMTRACE"   /* 7 characters and a NUL: the file's first 8 bytes */
#define AM_TRACE_MAGIC_LEN 8
#define AM_TRACE_VERSION 1

/* a unit of the file after the header: its tag byte */
#define AM_UNIT_RECORDS 0x52  /* 'R': thread, payload length, a thread's records */
#define AM_UNIT_CLOSING 0x45  /* 'E': payload length, the closing record */

/* how a process came to write its trace (header field) */
enum am_trace_origin {
    AM_ORIGIN_FIRST = 0,  /* the process make record started, writing FILE itself */
    AM_ORIGIN_FORK = 1,   /* a child of fork() in a recorded process */
    AM_ORIGIN_OTHER = 2   /* any other process: an exec'ed program, a spawned one */
};

/* the calls: the low 4 bits of a record's tag byte */
enum am_trace_kind {
    AM_CALL_MALLOC = 0,
    AM_CALL_CALLOC = 1,
    AM_CALL_REALLOC = 2,
    AM_CALL_REALLOCARRAY = 3,
    AM_CALL_FREE = 4,
    AM_CALL_POSIX_MEMALIGN = 5,
    AM_CALL_ALIGNED_ALLOC = 6,
    AM_CALL_MEMALIGN = 7,
    AM_CALL_VALLOC = 8,
    AM_CALL_PVALLOC = 9,
    AM_CALL_KINDS = 10
};

/* the high 4 bits of a record's tag byte */
#define AM_REC_SEQ 0x10      /* a varint step of the call's sequence number follows (else the step is 1) */
#define AM_REC_NULL 0x20     /* no block came of the call (it failed); for free: free(NULL) */
#define AM_REC_OTHER 0x40    /* the block named is another thread's: thread and number follow */
#define AM_REC_NO_OLD 0x80   /* realloc/reallocarray of no recorded block (NULL or not the program's) */

/* reasons in the closing record */
enum am_trace_end {
    AM_END_EXIT = 1,   /* exit() or return from main */
    AM_END_EXEC = 2,   /* the process exec'ed another program (which writes a trace of its own) */
    AM_END__EXIT = 3   /* _exit() or _Exit() */
};

/* the closing record's fields, in order; a later version may append more */
enum am_closing_field {
    AM_CLOSE_REASON = 0,
    AM_CLOSE_THREADS = 1,
    AM_CLOSE_COUNTS = 2,                         /* AM_CALL_KINDS fields: the calls of each kind */
    AM_CLOSE_FOREIGN_FREES = AM_CLOSE_COUNTS + AM_CALL_KINDS, /* frees of pointers not from recorded calls */
    AM_CLOSE_FOREIGN_REALLOCS,                   /* reallocs of such pointers (recorded as of no block) */
    AM_CLOSE_PEAK_LIVE,                          /* peak live bytes, as the program asked them */
    AM_CLOSE_FINAL_LIVE,                         /* live bytes at the end */
    AM_CLOSE_UNTRACKED,                          /* blocks the address table had no room for */
    AM_CLOSE_FIELDS
};

#endif
