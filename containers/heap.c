/* heap.c: the little of heap.h that is not a template: a per-thread token for
 * the debug ownership check, and what happens when that check fails. */
#include <stdio.h>
#include <stdlib.h>
#include "platform.h"

const void *am_thread_token(void);
extern void (*am_qheap_wrong_thread)(const char *operation);

/* A thread-local's address differs in every live thread: a thread id without
 * asking the OS. */
const void *am_thread_token(void) {
    static AM_THREAD_LOCAL char token;
    return &token;
}

static void wrong_thread_abort(const char *operation) {
    fprintf(stderr, "allocmark: query heap used (%s) from a thread other than its creator\n",
            operation);
    abort();
}

void (*am_qheap_wrong_thread)(const char *operation) = wrong_thread_abort;
