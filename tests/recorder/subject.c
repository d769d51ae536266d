/* subject.c: the program tests/python/test_recorder.py records. Each mode
 * makes known calls of the malloc family and prints how many of the rarer
 * kinds it made, for the test to find in the trace:
 *   threads  four threads beside main, one ending early, blocks freed across threads
 *   fork     a child that frees a block it inherited and allocates its own
 *   exec     a few calls, then the program runs itself again (mode leaf)
 *   loop     a thread that ends at once, then allocations until killed, "ready"
 *            once the first units are written
 *   late N   N calls in main (past 2^24, or what a test build of the recorder keeps
 *            of each call's number), then a thread that frees a block of main's
 *   fail     a few calls, then exit status 3
 * Linux only, as the recorder is. */
#if defined(__linux__)
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define ROUNDS 2000
#define HANDED 64

static void *handed[HANDED];   /* allocated by main, freed by thread 2 */
static void *made_by_thread[HANDED]; /* allocated by thread 3, freed by main */

static void every_kind(void)
{
    void *p = malloc(24), *q = calloc(3, 40), *r = NULL, *a = NULL;
    p = realloc(p, 100);
    q = reallocarray(q, 5, 40);
    if (posix_memalign(&r, 64, 200) != 0)
        exit(1);
    void *b = aligned_alloc(128, 256), *c = memalign(32, 48), *d = valloc(10), *e = pvalloc(20);
    a = malloc(7);
    free(a);
    free(NULL);
    free(p);
    free(q);
    free(r);
    free(b);
    free(c);
    free(d);
    free(e);
}

static void *worker(void *arg)
{
    long id = (long)arg;
    if (id == 1) { /* ends early */
        every_kind();
        return NULL;
    }
    if (id == 2)
        for (int i = 0; i < HANDED; i++)
            free(handed[i]);
    if (id == 3)
        for (int i = 0; i < HANDED; i++)
            made_by_thread[i] = malloc(32 + (size_t)i);
    void *keep[16] = {0};
    for (int i = 0; i < ROUNDS; i++) {
        int k = i % 16;
        free(keep[k]);
        keep[k] = malloc((size_t)(16 + (i * 7 + id) % 300));
        if (i % 100 == 0)
            every_kind();
    }
    for (int k = 0; k < 16; k++)
        free(keep[k]);
    return NULL;
}

static int threads(void)
{
    for (int i = 0; i < HANDED; i++)
        handed[i] = malloc(48);
    pthread_t t[4];
    for (long i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, worker, (void *)(i + 1));
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < HANDED; i++)
        free(made_by_thread[i]);
    /* every_kind: once by thread 1, ROUNDS / 100 times by threads 2, 3 and 4 */
    printf("every_kind %d\ncross_thread %d\n", 1 + 3 * (ROUNDS / 100), 2 * HANDED);
    return 0;
}

static void *late_worker(void *arg)
{
    free(*(void **)arg);
    for (int i = 0; i < 1000; i++)
        free(malloc(40));
    *(void **)arg = malloc(77);
    return NULL;
}

static int late(long calls)
{
    for (long i = 0; i < calls / 2; i++)
        free(malloc(24));
    void *shared = malloc(55);
    pthread_t t;
    pthread_create(&t, NULL, late_worker, &shared);
    pthread_join(t, NULL);
    free(shared);
    return 0;
}

static int forks(void)
{
    void *inherited = malloc(1000);
    every_kind();
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        free(inherited); /* not the child's recorded block */
        every_kind();
        exit(0);
    }
    int status;
    waitpid(pid, &status, 0);
    free(inherited);
    printf("every_kind_parent 1\nevery_kind_child 1\n");
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "threads") == 0)
        return threads();
    if (strcmp(mode, "fork") == 0)
        return forks();
    if (strcmp(mode, "late") == 0)
        return late(argc > 2 ? atol(argv[2]) : 1L << 25);
    if (strcmp(mode, "exec") == 0) {
        every_kind();
        fflush(stdout);
        execl(argv[0], argv[0], "leaf", (char *)NULL);
        return 1;
    }
    if (strcmp(mode, "leaf") == 0) {
        every_kind();
        every_kind();
        return 0;
    }
    if (strcmp(mode, "loop") == 0) {
        pthread_t early;
        pthread_create(&early, NULL, worker, (void *)1L);
        pthread_join(early, NULL);
        for (long i = 0;; i++) {
            void *p = malloc((size_t)(i % 500) + 1);
            if (i % 3)
                free(p);
            if (i == 200000) {
                printf("ready\n");
                fflush(stdout);
            }
            if (i > 200000)
                usleep(10);
        }
    }
    if (strcmp(mode, "fail") == 0) {
        every_kind();
        return 3;
    }
    fprintf(stderr, "subject: mode threads, fork, late, exec, leaf, loop or fail\n");
    return 2;
}
#else
int main(void)
{
    return 2;
}
#endif
