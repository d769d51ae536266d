/* partner.h: the partner of a measured cell. Every measured executable holds
 * a second row besides its own (the Makefile's PARTNER: the baseline,
 * monotonic, unless told otherwise), its unit compiled alone with every
 * global name prefixed (partner_names.h) so that both link. The cell times its
 * row and the partner in alternating samples in one process; their ratio,
 * sample by sample, leaves out most of what differs from process to process.
 * This table is the one name the partner's unit exports. */
#ifndef AM_PARTNER_H
#define AM_PARTNER_H

#include <stddef.h>
#include <stdint.h>

/* what the partner is asked to run: the cell's one-thread job */
typedef struct am_partner_job {
    const char *workload;
    size_t size;
    double param;
    uint64_t work_loops;
    int has_work_loops;
    size_t limit;     /* the heap's byte limit (--limit) */
    uint64_t seed;    /* the first repetition seed */
    unsigned age;     /* repetitions a new heap runs, untimed, first */
    const struct am_replay *trace; /* the workload trace's calls (replay.h), decoded once by the cell */
} am_partner_job;

typedef struct am_partner_row {
    const char *name; /* its row, as strategies.txt names it */
    /* NULL when the partner has no such workload or no memory */
    void *(*open)(const am_partner_job *job);
    /* a new heap, aged (the previous one destroyed): 0 (AM_OK) or the workload's status */
    int (*fresh_heap)(void *partner);
    /* one sample on the current heap, as the cell's own (sample.h): reps
     * repetitions from the seed cycle's first-th */
    int (*sample)(void *partner, unsigned first, unsigned reps, uint64_t *checksum, uint64_t *ns);
    void (*close)(void *partner);
} am_partner_row;

extern const am_partner_row am_partner;

#endif
