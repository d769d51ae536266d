/* record_process.c: the recording library's life in a process (make record):
 * the C library's functions found, recording started by the constructor and
 * ended at exit; a fork child's trace of its own; exec and _exit, where this
 * process's trace ends. The malloc family is record_calls.c's. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

#include "record.h"

struct real_functions real;
atomic_int g_booting;

/* a child of fork: a trace of its own, as one thread that has allocated
 * nothing yet; blocks it inherited are not its recorded ones */
static void after_fork_child(void)
{
    if (!atomic_load(&g_on))
        return;
    atomic_store(&g_on, 0);
    drop_trace();
    calls_after_fork();
    buffers_after_fork();
    start_trace(1);
}

static void find_real(void)
{
    atomic_store(&g_booting, 1);
    real.calloc = dlsym(RTLD_NEXT, "calloc");
    real.malloc = dlsym(RTLD_NEXT, "malloc");
    real.realloc = dlsym(RTLD_NEXT, "realloc");
    real.free = dlsym(RTLD_NEXT, "free");
    real.posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
    real.aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
    real.memalign = dlsym(RTLD_NEXT, "memalign");
    real.valloc = dlsym(RTLD_NEXT, "valloc");
    real.pvalloc = dlsym(RTLD_NEXT, "pvalloc");
    real.execve = dlsym(RTLD_NEXT, "execve");
    real.execv = dlsym(RTLD_NEXT, "execv");
    real.execvp = dlsym(RTLD_NEXT, "execvp");
    real.execvpe = dlsym(RTLD_NEXT, "execvpe");
    real.fexecve = dlsym(RTLD_NEXT, "fexecve");
    real.exit_now = dlsym(RTLD_NEXT, "_exit");
    real.exit_now_c99 = dlsym(RTLD_NEXT, "_Exit");
    atomic_store(&g_booting, 0);
}

static atomic_int g_started;

__attribute__((constructor)) static void recorder_start(void)
{
    if (atomic_exchange(&g_started, 1))
        return;
    if (real.malloc == NULL)
        find_real();
    const char *path = getenv("AM_TRACE");
    if (path == NULL || *path == 0)
        return;
    if (!buffers_start() || !table_map())
        return;
    name_trace(path);
    pthread_atfork(NULL, NULL, after_fork_child);
    start_trace(0);
}

__attribute__((destructor)) static void recorder_end(void)
{
    if (owns_trace())
        close_trace(AM_END_EXIT);
}

/* a call before the constructor (another library's constructor, ld.so) */
void early(void)
{
    if (atomic_load(&g_booting))
        return;
    recorder_start();
}

/* ---- exec and _exit: this process's trace ends here ---- */
static int before_exec(void)
{
    if (!owns_trace())
        return 0;
    close_trace(AM_END_EXEC);
    return 1;
}

static int after_failed_exec(int closed, int r)
{
    int saved = errno;
    if (closed) {
        unlock_buffers();
        atomic_store(&g_on, 1);
    }
    errno = saved;
    return r;
}

EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    NEED_REAL(execve);
    int c = before_exec();
    return after_failed_exec(c, real.execve(path, argv, envp));
}

EXPORT int execv(const char *path, char *const argv[])
{
    NEED_REAL(execv);
    int c = before_exec();
    return after_failed_exec(c, real.execv(path, argv));
}

EXPORT int execvp(const char *file, char *const argv[])
{
    NEED_REAL(execvp);
    int c = before_exec();
    return after_failed_exec(c, real.execvp(file, argv));
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    NEED_REAL(execvpe);
    int c = before_exec();
    return after_failed_exec(c, real.execvpe(file, argv, envp));
}

EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    NEED_REAL(fexecve);
    int c = before_exec();
    return after_failed_exec(c, real.fexecve(fd, argv, envp));
}

/* execl, execlp, execle: their arguments gathered into an array, then the
 * call of the v kind; va_start must be in the variadic wrapper itself */
#define MAX_LIST_ARGS 4096
enum list_exec { LIST_EXECV, LIST_EXECVP, LIST_EXECVE };
static int exec_list(enum list_exec which, const char *path, const char *arg, va_list ap)
{
    char *argv[MAX_LIST_ARGS];
    int n = 0;
    argv[n++] = (char *)arg;
    while (argv[n - 1] != NULL) {
        if (n == MAX_LIST_ARGS) {
            errno = E2BIG;
            return -1;
        }
        argv[n++] = va_arg(ap, char *);
    }
    if (which == LIST_EXECVE) {
        char *const *envp = va_arg(ap, char *const *);
        return execve(path, argv, envp);
    }
    return which == LIST_EXECVP ? execvp(path, argv) : execv(path, argv);
}

#define EXEC_LIST(which, path, arg)                                                                                \
    do {                                                                                                           \
        va_list ap;                                                                                                \
        va_start(ap, arg);                                                                                         \
        int r = exec_list(which, path, arg, ap);                                                                   \
        va_end(ap);                                                                                                \
        return r;                                                                                                  \
    } while (0)

EXPORT int execl(const char *path, const char *arg, ...)
{
    EXEC_LIST(LIST_EXECV, path, arg);
}

EXPORT int execlp(const char *file, const char *arg, ...)
{
    EXEC_LIST(LIST_EXECVP, file, arg);
}

EXPORT int execle(const char *path, const char *arg, ...)
{
    EXEC_LIST(LIST_EXECVE, path, arg);
}

EXPORT void _exit(int status)
{
    NEED_REAL(exit_now);
    if (owns_trace())
        close_trace(AM_END__EXIT);
    real.exit_now(status);
    __builtin_unreachable();
}

EXPORT void _Exit(int status)
{
    NEED_REAL(exit_now_c99);
    if (owns_trace())
        close_trace(AM_END__EXIT);
    real.exit_now_c99(status);
    __builtin_unreachable();
}
