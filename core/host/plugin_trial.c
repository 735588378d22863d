/* plugin_trial.c - see plugin_trial.h. */
#include "host/plugin_trial.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host/file.h"
#include "sched/futex.h"
#include "shoal/error.h"

/* The child's exit status once dlopen has returned (not 0: a constructor
 * may exit(0)); before it, it writes one byte to the parent's pipe -- a
 * constructor that ends the process with the same status does not. */
enum { TRIAL_DONE = 87 };
enum { BYTE_LOADED = 'L', BYTE_NOT_LOADED = 'N' };

/* The environment variable that makes a process the trial: "COPY,PIPE,PID",
 * the descriptors of the plugin's copy and of the pipe's end, and the
 * host's pid. */
#define TRIAL_ENV "SHOAL__PLUGIN_TRIAL"

/* The trial's side, before main: a process started by shoal__plugin_trial
 * (this same program, exec'd anew: single-threaded, no lock held by a
 * thread it does not have) dlopens the copy, says so on the pipe and
 * _exits -- no destructor, no main. Any program that links the loader
 * links this. */
__attribute__((constructor(101))) static void trial_main(void)
{
    const char *v = getenv(TRIAL_ENV);
    int copy, done;
    long host;
    if (v == NULL || sscanf(v, "%d,%d,%ld", &copy, &done, &host) != 3)
        return;
    /* Once: a plugin that links libshoal.so brings a second copy of this
     * constructor, which must not take the plugin's own load for a trial
     * of its own (it would answer before the plugin's constructors ran). */
    unsetenv(TRIAL_ENV);
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* the host gone, so is its trial */
    if (getppid() != (pid_t)host)     /* it died just now; not 1: the host may be pid 1 */
        _exit(TRIAL_DONE + 1);
    /* A fault is the trial's death, whatever handler the program's start
     * put there (a sanitizer's, which would exit 1 instead). */
    static const int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS};
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++)
        sigaction(fatal[i], &dfl, NULL);
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none); /* a constructor that crashes leaves no core file */
    char at[64];
    snprintf(at, sizeof at, "/proc/self/fd/%d", copy);
    char b = dlopen(at, RTLD_NOW | RTLD_LOCAL) != NULL ? BYTE_LOADED : BYTE_NOT_LOADED;
    _exit(write(done, &b, 1) == 1 ? TRIAL_DONE : TRIAL_DONE + 1);
}

/* ---- the files that passed ---------------------------------------------------- */

/* A file that passed is not tried again while it stays the same file
 * (device, inode, size, modification and change times): a reload that
 * loads it again, or a test that loads it a thousand times. */
#define PASSED_MAX 64

static pthread_mutex_t passed_lock = PTHREAD_MUTEX_INITIALIZER;
static shoal_file_id_t passed[PASSED_MAX];
static unsigned npassed, passed_next;

static bool has_passed(const shoal_file_id_t *f)
{
    pthread_mutex_lock(&passed_lock);
    bool found = false;
    for (unsigned i = 0; i < npassed && !found; i++)
        found = shoal__file_id_same(&passed[i], f);
    pthread_mutex_unlock(&passed_lock);
    return found;
}

static void mark_passed(const shoal_file_id_t *f)
{
    pthread_mutex_lock(&passed_lock);
    passed[passed_next] = *f; /* the oldest goes */
    passed_next = (passed_next + 1) % PASSED_MAX;
    if (npassed < PASSED_MAX)
        npassed++;
    pthread_mutex_unlock(&passed_lock);
}

/* ---- the host's side -------------------------------------------------------- */

/* Waits for pid to end within timeout_ms: 1 with *status, 0 at the
 * deadline, -1 on an error (errno). tend (NULL: none) every
 * SHOAL_ASK_EVERY_MS at most. */
static int wait_for(pid_t pid, unsigned timeout_ms, void (*tend)(void *), void *tend_arg,
                    int *status)
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
        if (tend != NULL)
            tend(tend_arg);
        uint64_t left = shoal__ms_until(now, deadline);
        uint64_t slice = tend != NULL ? SHOAL_ASK_EVERY_MS : 1000;
        if (pfd >= 0) { /* readable when the child has ended */
            struct pollfd p = {.fd = pfd, .events = POLLIN};
            poll(&p, 1, left > slice ? (int)slice : (int)left + 1);
        } else { /* no pidfd (a kernel before 5.3): look every millisecond */
            struct timespec ms = {.tv_sec = 0, .tv_nsec = 1000000};
            nanosleep(&ms, NULL);
        }
    }
}

/* Starts the trial: this program again (/proc/self/exe), with fds 0-2 on
 * /dev/null (a constructor that writes to a stderr nobody reads must not
 * block there), the copy and the pipe's end kept (dup2 onto themselves:
 * no close-on-exec), every other descriptor closed, every signal at its
 * default and none blocked (shoald blocks HUP, INT and TERM for its
 * signalfd; a constructor that raises one must die of it here). */
static int spawn(int copy, int done, pid_t *pid)
{
    extern char **environ;
    size_t n = 0;
    while (environ[n] != NULL)
        n++;
    char **envp = malloc((n + 2) * sizeof *envp);
    if (envp == NULL)
        return ENOMEM;
    char var[80];
    snprintf(var, sizeof var, TRIAL_ENV "=%d,%d,%ld", copy, done, (long)getpid());
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], TRIAL_ENV "=", sizeof TRIAL_ENV) != 0)
            envp[k++] = environ[i];
    envp[k++] = var;
    envp[k] = NULL;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&at);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    posix_spawn_file_actions_adddup2(&fa, copy, copy);
    posix_spawn_file_actions_adddup2(&fa, done, done);
    posix_spawn_file_actions_addclosefrom_np(&fa, (copy > done ? copy : done) + 1);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &all);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    char *argv[] = {"shoal-plugin-trial", NULL};
    int rc = posix_spawn(pid, "/proc/self/exe", &fa, &at, argv, envp);
    posix_spawnattr_destroy(&at);
    posix_spawn_file_actions_destroy(&fa);
    free(envp);
    return rc;
}

int shoal__plugin_trial(int copy, const struct stat *st, unsigned timeout_ms, char *why,
                        size_t why_size)
{
    return shoal__plugin_trial_tended(copy, st, timeout_ms, NULL, NULL, why, why_size);
}

int shoal__plugin_trial_tended(int copy, const struct stat *st, unsigned timeout_ms,
                               void (*tend)(void *), void *tend_arg, char *why, size_t why_size)
{
    shoal_file_id_t file = shoal__file_id(st);
    if (has_passed(&file))
        return 0;
    /* Both above 2 (fds 0-2 are the child's /dev/null), close-on-exec here. */
    int done[2] = {-1, -1}, c = fcntl(copy, F_DUPFD_CLOEXEC, 3);
    if (c < 0 || pipe2(done, O_CLOEXEC | O_NONBLOCK) != 0) {
        snprintf(why, why_size, "cannot try its ELF constructors in a child process: %s",
                 strerror(errno));
        if (c >= 0)
            close(c);
        return SHOAL_ELOAD;
    }
    int w = fcntl(done[1], F_DUPFD_CLOEXEC, 3);
    close(done[1]);
    pid_t pid = -1;
    int e = w < 0 ? errno : spawn(c, w, &pid);
    close(c);
    if (w >= 0)
        close(w);
    if (e != 0) {
        snprintf(why, why_size, "cannot try its ELF constructors in a child process: %s",
                 strerror(e));
        close(done[0]);
        return SHOAL_ELOAD;
    }
    int status = 0;
    int got = wait_for(pid, timeout_ms, tend, tend_arg, &status);
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
                 "its ELF constructors were killed by SIG%s when tried in a child process",
                 name != NULL ? name : "?");
        return SHOAL_ELOAD;
    }
    if (returned && WIFEXITED(status) && WEXITSTATUS(status) == TRIAL_DONE) {
        mark_passed(&file);
        return 0;
    }
    /* A constructor that called exit() or _exit(): the host would have
     * ended. */
    snprintf(why, why_size,
             "its ELF constructors ended the process (exit status %d) when tried in a child "
             "process",
             WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return SHOAL_ELOAD;
}
