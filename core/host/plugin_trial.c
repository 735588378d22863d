/* plugin_trial.c - see plugin_trial.h. */
#include "host/plugin_trial.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sched/futex.h"
#include "shoal/error.h"

/* The child's exit statuses. */
/* The child's exit status once dlopen has returned (not 0: a constructor
 * may exit(0)); before it, it writes one byte to the parent's pipe -- a
 * constructor that ends the process with the same status does not. */
enum { TRIAL_DONE = 87 };
enum { BYTE_LOADED = 'L', BYTE_NOT_LOADED = 'N' };

static const int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS};

/* The child: only calls that are safe after a multi-threaded fork until
 * dlopen (glibc resets the loader's and malloc's locks in a fork's child). */
static _Noreturn void child(int copy, int done, const char *at)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    prctl(PR_SET_DUMPABLE, 0); /* no core file */
    /* A fault is the child's death, not the host's fault handler's to
     * report or recover from. */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigset_t set;
    sigemptyset(&set);
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++) {
        sigaction(fatal[i], &dfl, NULL);
        sigaddset(&set, fatal[i]);
    }
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    /* The host's sockets, pipes and files are not the child's to hold:
     * only the copy and the pipe's end stay. */
    unsigned lo = (unsigned)(copy < done ? copy : done), hi = (unsigned)(copy < done ? done : copy);
    if (lo > 3)
        syscall(SYS_close_range, 3u, lo - 1, 0u);
    if (hi > lo + 1)
        syscall(SYS_close_range, lo + 1, hi - 1, 0u);
    syscall(SYS_close_range, hi + 1, ~0u, 0u);
    char b = dlopen(at, RTLD_NOW | RTLD_LOCAL) != NULL ? BYTE_LOADED : BYTE_NOT_LOADED;
    _exit(write(done, &b, 1) == 1 ? TRIAL_DONE : TRIAL_DONE + 1);
}

/* Waits for pid to end within timeout_ms: 1 with *status, 0 at the
 * deadline, -1 on an error (errno). */
static int wait_for(pid_t pid, unsigned timeout_ms, int *status)
{
    uint64_t deadline = shoal__deadline_ns(shoal__now_ns(), timeout_ms);
    int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
    for (;;) {
        pid_t got = waitpid(pid, status, WNOHANG);
        if (got == pid) {
            if (pfd >= 0)
                close(pfd);
            return 1;
        }
        if (got < 0 && errno != EINTR) {
            int e = errno;
            if (pfd >= 0)
                close(pfd);
            errno = e;
            return -1;
        }
        uint64_t now = shoal__now_ns();
        if (now >= deadline) {
            if (pfd >= 0)
                close(pfd);
            return 0;
        }
        uint64_t left = shoal__ms_until(now, deadline);
        if (pfd >= 0) { /* readable when the child has ended */
            struct pollfd p = {.fd = pfd, .events = POLLIN};
            poll(&p, 1, left > 1000 ? 1000 : (int)left + 1);
        } else { /* no pidfd (a kernel before 5.3): look every millisecond */
            struct timespec ms = {.tv_sec = 0, .tv_nsec = 1000000};
            nanosleep(&ms, NULL);
        }
    }
}

int shoal__plugin_trial(int copy, unsigned timeout_ms, char *why, size_t why_size)
{
    char at[64];
    snprintf(at, sizeof at, "/proc/self/fd/%d", copy);
    int done[2];
    if (pipe2(done, O_CLOEXEC | O_NONBLOCK) != 0) {
        snprintf(why, why_size, "cannot try its ELF constructors in a child process: pipe: %s",
                 strerror(errno));
        return SHOAL_ELOAD;
    }
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(why, why_size, "cannot try its ELF constructors in a child process: fork: %s",
                 strerror(errno));
        close(done[0]);
        close(done[1]);
        return SHOAL_ELOAD;
    }
    if (pid == 0)
        child(copy, done[1], at);
    close(done[1]);
    int status = 0;
    int got = wait_for(pid, timeout_ms, &status);
    char b = 0;
    bool returned =
        got == 1 && read(done[0], &b, 1) == 1 && (b == BYTE_LOADED || b == BYTE_NOT_LOADED);
    close(done[0]);
    if (got == 0) {
        kill(pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
        snprintf(why, why_size,
                 "its ELF constructors did not return within %u ms when tried in a child "
                 "process (killed)",
                 timeout_ms);
        return SHOAL_ELOAD;
    }
    if (got < 0) {
        snprintf(why, why_size, "cannot try its ELF constructors in a child process: waitpid: %s",
                 strerror(errno));
        return SHOAL_ELOAD;
    }
    if (WIFSIGNALED(status)) {
        const char *name = sigabbrev_np(WTERMSIG(status));
        snprintf(why, why_size,
                 "its ELF constructors crashed (SIG%s) when tried in a child process",
                 name != NULL ? name : "?");
        return SHOAL_ELOAD;
    }
    if (returned && WIFEXITED(status) && WEXITSTATUS(status) == TRIAL_DONE)
        return 0;
    /* A constructor that called exit() or _exit(): the host would have
     * ended. */
    snprintf(why, why_size,
             "its ELF constructors ended the process (exit status %d) when tried in a child "
             "process",
             WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return SHOAL_ELOAD;
}
