/* isolated.c - the host's part of `isolation: process` (isolated.h): how
 * the parent starts a child (the child's main is isolated_child.c).
 */
#include "host/isolated.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host/host.h"
#include "runtime/runtime.h"

typedef struct launch_s {
    int boot_fd;   /* a sealed memfd holding the boot record */
    int plugin_fd; /* the plugin's private copy (the parent's module's) */
    char **envp;   /* the child's environment (child_env), NULL-ended */
} launch_t;

/* The child runs the code shoald runs: the file /proc/self/exe leads to in
 * the forked child is the one shoald was started from, even once another
 * file has been renamed over its path (a package upgrade) or it has been
 * removed -- the path itself would run whatever is there now. */
#define SELF_EXE "/proc/self/exe"

extern char **environ;

/* What a child must not inherit: the service manager talks to shoald, not
 * to its children (a plugin calling sd_notify there would speak for
 * shoald). */
static bool not_for_child(const char *var)
{
    static const char *const names[] = {"NOTIFY_SOCKET=", "WATCHDOG_USEC=", "WATCHDOG_PID=", NULL};
    for (size_t i = 0; names[i] != NULL; i++)
        if (strncmp(var, names[i], strlen(names[i])) == 0)
            return true;
    return false;
}

static void env_free(char **envp)
{
    for (size_t i = 0; envp != NULL && envp[i] != NULL; i++)
        free(envp[i]);
    free(envp);
}

/* A copy of this process's environment without what not_for_child names;
 * NULL when out of memory. */
static char **child_env(void)
{
    size_t n = 0, k = 0;
    while (environ[n] != NULL)
        n++;
    char **envp = calloc(n + 1, sizeof *envp);
    for (size_t i = 0; envp != NULL && i < n; i++) {
        if (not_for_child(environ[i]))
            continue;
        if ((envp[k++] = strdup(environ[i])) == NULL) {
            env_free(envp);
            return NULL;
        }
    }
    return envp;
}

/* ---- the parent --------------------------------------------------------------- */

static void launch_release(void *user)
{
    launch_t *l = user;
    close(l->boot_fd);
    close(l->plugin_fd);
    env_free(l->envp);
    free(l);
}

/* Moves fd to at least `from`: a descriptor the dup2s below cannot clobber. */
static int lift(int fd, int from) { return fcntl(fd, F_DUPFD, from); }

static int launch(void *user, const int chan_fds[3], pid_t *pid, int *pidfd, char *why,
                  size_t why_size)
{
    launch_t *l = user;
    char *const argv[] = {"shoald", "--isolated-worker", NULL};
    pid_t parent = getpid();
    pid_t child = fork();
    if (child < 0) {
        snprintf(why, why_size, "cannot start its process: fork: %s", strerror(errno));
        return SHOAL_ENOMEM;
    }
    if (child == 0) {
        /* Only async-signal-safe calls from here to exec. */
        int src[5] = {chan_fds[0], chan_fds[1], chan_fds[2], l->plugin_fd, l->boot_fd};
        int high[5];
        for (int i = 0; i < 5; i++)
            if ((high[i] = lift(src[i], 100)) < 0)
                _exit(126);
        for (int i = 0; i < 5; i++)
            if (dup2(high[i], SHOAL__ISO_FD_CHAN + i) < 0) /* 3..7, without close-on-exec */
                _exit(126);
        syscall(SYS_close_range, SHOAL__ISO_FD_FIRST_FREE, ~0u, 0);
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
            _exit(125); /* never outlive shoald, even if it died just now */
        /* A group of its own: a Ctrl-C or a signal to shoald's group is
         * shoald's to handle (it drains the child), not the child's. */
        setpgid(0, 0);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL); /* shoald blocks its signals for its signalfd */
        execve(SELF_EXE, argv, l->envp);
        _exit(127);
    }
    int fd = (int)syscall(SYS_pidfd_open, child, 0);
    if (fd < 0) {
        snprintf(why, why_size, "cannot watch its process: pidfd_open: %s", strerror(errno));
        /* Nobody else reaps our children (the supervisor does, through
         * the pidfd we could not get): reap it here, or it stays a zombie
         * for as long as shoald lives -- one more at every retry. It has
         * not reached exec's code yet, and a SIGKILL ends it at once. */
        kill(child, SIGKILL);
        while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
            ;
        return SHOAL_EFAILED;
    }
    *pid = child;
    *pidfd = fd;
    return SHOAL_OK;
}

/* Threads a child's runtime has, every compensating one counted: one
 * counter stripe each, and one shared. */
static uint32_t stripes_for(const shoal_config_t *c)
{
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    uint32_t threads = c->runtime.threads != 0 ? c->runtime.threads
                       : online < 2            ? 2
                       : online > 1024         ? 1024
                                               : (uint32_t)online;
    uint32_t extra =
        c->runtime.max_extra_threads == SHOAL_CONFIG_AUTO ? threads : c->runtime.max_extra_threads;
    return threads + extra + 1;
}

int shoal__isolated_launch(const shoal_config_t *c, const shoal_config_pool_t *cp,
                           uint64_t generation, shoal_remote_launch_t *out, char *why,
                           size_t why_size)
{
    const shoal_config_pool_t *leaf = cp;
    while (leaf->nested != NULL)
        leaf = leaf->nested;
    launch_t *l = calloc(1, sizeof *l);
    if (l == NULL) {
        snprintf(why, why_size, "out of memory");
        return SHOAL_ENOMEM;
    }
    l->boot_fd = l->plugin_fd = -1;
    if (access(SELF_EXE, X_OK) != 0) {
        snprintf(why, why_size, "cannot run its own executable (%s): %s", SELF_EXE,
                 strerror(errno));
        goto fail;
    }
    if ((l->envp = child_env()) == NULL) {
        snprintf(why, why_size, "out of memory");
        goto fail;
    }
    if ((l->plugin_fd = fcntl(shoal__module_fd(leaf->module), F_DUPFD_CLOEXEC, 0)) < 0) {
        snprintf(why, why_size, "cannot keep the plugin's copy: %s", strerror(errno));
        goto fail;
    }
    shoal__iso_boot_t b = {
        .magic = SHOAL__ISO_BOOT_MAGIC,
        .version = SHOAL__ISO_BOOT_VERSION,
        .log_format = (uint32_t)c->log.format,
        .log_level = (uint32_t)c->log.level,
        .name_len = (uint32_t)strlen(cp->name),
        .file_len = (uint32_t)strlen(c->file),
        .generation = generation,
        .text_len = c->text_len,
    };
    l->boot_fd = memfd_create("shoal:boot", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (l->boot_fd < 0 || write(l->boot_fd, &b, sizeof b) != (ssize_t)sizeof b ||
        write(l->boot_fd, cp->name, b.name_len) != (ssize_t)b.name_len ||
        write(l->boot_fd, c->file, b.file_len) != (ssize_t)b.file_len ||
        write(l->boot_fd, c->text, c->text_len) != (ssize_t)c->text_len ||
        fcntl(l->boot_fd, F_ADD_SEALS, F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) !=
            0) {
        snprintf(why, why_size, "cannot write its boot record: %s", strerror(errno));
        goto fail;
    }
    *out = (shoal_remote_launch_t){
        .launch = launch, .release = launch_release, .user = l, .nstripes = stripes_for(c)};
    return SHOAL_OK;
fail:
    if (l->plugin_fd >= 0)
        close(l->plugin_fd);
    if (l->boot_fd >= 0)
        close(l->boot_fd);
    env_free(l->envp);
    free(l);
    return SHOAL_EFAILED;
}
