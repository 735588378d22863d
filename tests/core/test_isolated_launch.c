/* test_isolated_launch.c - how shoald starts an isolated pool's child
 * (core/host/isolated.c, its launch): a start that fails after the fork
 * leaves no process behind, neither running nor a zombie, and says why.
 *
 * The launch is made from a resolved config (config_kit's cf_resolve) and
 * called with every descriptor of this process taken: fork works,
 * pidfd_open does not (EMFILE). (Before the fix the child was killed and
 * dropped -- "reaped by init", but shoald is its parent and lives on: one
 * zombie per retry, as many as the pool's restart budget allowed.)
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config_kit.h"
#include "host/isolated.h"

#define ISO                                                                                        \
    "plugins:\n  echo: %1$s/echo/echo.so\n"                                                        \
    "pools:\n  iso:\n    worker: echo.echo\n    isolation: process\n"

#define HELD_MAX 512

static void launch_without_descriptors(shoal_config_t *c, shoal_loader_t *L)
{
    (void)L;
    const shoal_config_pool_t *cp = shoal__config_pool(c, "iso");
    CU_ASSERT_PTR_NOT_NULL_FATAL(cp);
    shoal_remote_launch_t l;
    char why[256] = "";
    CU_ASSERT_EQUAL_FATAL(shoal__isolated_launch(c, cp, 1, &l, why, sizeof why), SHOAL_OK);
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    CU_ASSERT_FATAL(null >= 0);
    int fds[3] = {null, null, null}; /* (the child never gets to use them) */
    /* Every descriptor below a low limit taken. */
    struct rlimit was;
    CU_ASSERT_EQUAL_FATAL(getrlimit(RLIMIT_NOFILE, &was), 0);
    struct rlimit low = {.rlim_cur = HELD_MAX / 2, .rlim_max = was.rlim_max};
    CU_ASSERT_EQUAL_FATAL(setrlimit(RLIMIT_NOFILE, &low), 0);
    int held[HELD_MAX], n = 0, full = 0;
    while (n < HELD_MAX) {
        int fd = fcntl(null, F_DUPFD_CLOEXEC, 0);
        if (fd < 0) {
            full = errno;
            break;
        }
        held[n++] = fd;
    }
    pid_t pid = 0;
    int pidfd = -1;
    int rc = l.launch(l.user, fds, &pid, &pidfd, why, sizeof why);
    while (n > 0)
        close(held[--n]);
    setrlimit(RLIMIT_NOFILE, &was);
    CU_ASSERT_EQUAL(full, EMFILE);
    CU_ASSERT_EQUAL(rc, SHOAL_EFAILED);
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "cannot watch its process: pidfd_open: "));
    /* No child of ours is left: none to reap, none still running. */
    siginfo_t si;
    memset(&si, 0, sizeof si);
    errno = 0;
    int w = waitid(P_ALL, 0, &si, WEXITED | WNOHANG);
    int err = errno;
    CU_ASSERT_EQUAL(w, -1);
    CU_ASSERT_EQUAL(err, ECHILD);
    if (w == 0) /* one left behind: reap it, so that the suite goes on */
        while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
            ;
    l.release(l.user);
    close(null);
}

static void failed_start_leaves_no_process(void)
{
    char err[1200];
    CU_ASSERT_EQUAL(cf_resolve(ISO, err, sizeof err, launch_without_descriptors), SHOAL_OK);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"a start that fails after the fork leaves no process", failed_start_leaves_no_process},
        {NULL, NULL},
    };
    return shoal_test_run("isolated_launch", cases);
}
