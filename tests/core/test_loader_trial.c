/* test_loader_trial.c - a plugin's ELF constructors tried in a child
 * process before the host runs them (host/plugin_trial.c): one that
 * crashes, exits or never returns is refused with what happened, and the
 * process that loads goes on -- it loads a good plugin next, in time (a
 * hang in the host's own dlopen would hold the dynamic loader's lock for
 * good). A constructor that returns runs in the host as before. */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "host/plugin_init.h"
#include "host/plugin_trial.h"
#include "loader_kit.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* good.so loads, and no trial child is left behind. */
static void assert_host_goes_on(void)
{
    shoal_loader_t *L = NULL;
    double t0 = now_s();
    shoal_module_t *m = lk_load(&L, lk_fixture("good.so"));
    CU_ASSERT(now_s() - t0 < 5.0);
    CU_ASSERT_PTR_NOT_NULL(m);
    shoal__module_release(m);
    shoal__loader_destroy(L);
    CU_ASSERT_EQUAL(waitpid(-1, NULL, WNOHANG), -1); /* no child at all: every trial reaped */
}

static void test_crash(void)
{
    lk_assert_refused(lk_fixture("ctor_crashes.so"),
                      "its ELF constructors were killed by SIGSEGV when tried in a child process");
    assert_host_goes_on();
}

/* Under ThreadSanitizer an exit inside dlopen's constructors ends with its
 * own status instead ("main thread finished with ignores enabled": 66). */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define EXIT_STATUS(n) ((void)(n), 66)
#endif
#endif
#ifndef EXIT_STATUS
#define EXIT_STATUS(n) (n)
#endif

static void assert_exit_refused(const char *so, int status)
{
    char want[200];
    snprintf(want, sizeof want,
             "its ELF constructors ended the process (exit status %d) when tried in a child "
             "process",
             EXIT_STATUS(status));
    lk_assert_refused(lk_fixture(so), want);
    assert_host_goes_on();
}

static void test_exit(void)
{
    assert_exit_refused("ctor_exits.so", 0);
    /* With the status the trial's child ends with once dlopen returns: it
     * did not return, and the byte it would have written never came. */
    assert_exit_refused("ctor_exits_87.so", 87);
}

/* Refused at the deadline (the loader's, 10 s), the child killed. */
static void test_hang(void)
{
    char want[200];
    snprintf(want, sizeof want,
             "its ELF constructors did not return within %u ms when tried in a child process "
             "(killed)",
             SHOAL_PLUGIN_INIT_TIMEOUT_MS);
    double t0 = now_s();
    lk_assert_refused(lk_fixture("ctor_hangs.so"), want);
    double took = now_s() - t0;
    CU_ASSERT(took >= SHOAL_PLUGIN_INIT_TIMEOUT_MS / 1000.0);
    CU_ASSERT(took < SHOAL_PLUGIN_INIT_TIMEOUT_MS / 1000.0 + 10.0);
    assert_host_goes_on();
}

/* A constructor that raises SIGTERM, in a process that blocks it (as
 * shoald does, for its signalfd): the trial unblocks every signal, so it
 * dies of it there. */
static void test_raise(void)
{
    sigset_t term, old;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &term, &old);
    lk_assert_refused(lk_fixture("ctor_raises_term.so"),
                      "its ELF constructors were killed by SIGTERM when tried in a child process");
    sigset_t pending;
    sigpending(&pending);
    CU_ASSERT(!sigismember(&pending, SIGTERM)); /* the host never got it */
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    assert_host_goes_on();
}

static volatile bool spinning;

static void *spin_localtime(void *arg)
{
    (void)arg;
    time_t now = time(NULL);
    struct tm tm;
    while (spinning)
        localtime_r(&now, &tm);
    return NULL;
}

/* While another thread keeps taking glibc's time-zone lock (the host's log
 * lines do), a plugin whose constructor calls localtime_r loads every
 * time: the trial is a fresh process, not a fork that may inherit that
 * lock held (which hung it there for the whole deadline). */
static void test_lock_held_elsewhere(void)
{
    spinning = true;
    pthread_t th;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, spin_localtime, NULL), 0);
    char path[2][600];
    for (int i = 0; i < 5; i++) {
        /* A new file each time: a file that passed is not tried again. */
        snprintf(path[i % 2], sizeof path[0], "/tmp/shoal-trial-%d-%d.so", (int)getpid(), i);
        char cmd[1400];
        snprintf(cmd, sizeof cmd, "cp %s %s", lk_fixture("ctor_localtime.so"), path[i % 2]);
        CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
        shoal_loader_t *L = NULL;
        double t0 = now_s();
        shoal_module_t *m = lk_load(&L, path[i % 2]);
        CU_ASSERT(now_s() - t0 < 5.0);
        shoal__module_release(m);
        shoal__loader_destroy(L);
        unlink(path[i % 2]);
    }
    spinning = false;
    pthread_join(th, NULL);
}

static void tended(void *arg) { (*(int *)arg)++; }

/* The trial alone, with a short deadline: the same verdicts, the wait
 * tended when asked; a file that passed is not tried again while it is the
 * same file. */
static void test_trial_direct(void)
{
    char why[256];
    struct stat hangs, good, null;
    int fd = open(lk_fixture("ctor_hangs.so"), O_RDONLY | O_CLOEXEC);
    CU_ASSERT_FATAL(fd >= 0 && fstat(fd, &hangs) == 0);
    double t0 = now_s();
    CU_ASSERT_EQUAL(shoal__plugin_trial(fd, &hangs, 300, why, sizeof why), SHOAL_ELOAD);
    CU_ASSERT(now_s() - t0 >= 0.3);
    CU_ASSERT_STRING_EQUAL(why, "its ELF constructors did not return within 300 ms when tried in "
                                "a child process (killed)");
    /* Tended (the host thread pets systemd's watchdog there): every 100 ms
     * at most, 5 in 500 ms -- on a loaded machine fewer. */
    int tends = 0;
    t0 = now_s();
    CU_ASSERT_EQUAL(shoal__plugin_trial_tended(fd, &hangs, 500, tended, &tends, why, sizeof why),
                    SHOAL_ELOAD);
    CU_ASSERT(now_s() - t0 >= 0.5);
    CU_ASSERT(tends >= 3);
    CU_ASSERT_STRING_EQUAL(why, "its ELF constructors did not return within 500 ms when tried in "
                                "a child process (killed)");
    int gfd = open(lk_fixture("good.so"), O_RDONLY | O_CLOEXEC);
    CU_ASSERT_FATAL(gfd >= 0 && fstat(gfd, &good) == 0);
    CU_ASSERT_EQUAL(shoal__plugin_trial(gfd, &good, 5000, why, sizeof why), 0);
    close(gfd);
    /* good.so's identity passed: not tried again, whatever the copy holds. */
    t0 = now_s();
    CU_ASSERT_EQUAL(shoal__plugin_trial(fd, &good, 300, why, sizeof why), 0);
    CU_ASSERT(now_s() - t0 < 0.3);
    close(fd);
    /* Not a shared object: the child's dlopen fails, which is the host's
     * dlopen's to report. */
    fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    CU_ASSERT_FATAL(fd >= 0 && fstat(fd, &null) == 0);
    CU_ASSERT_EQUAL(shoal__plugin_trial(fd, &null, 5000, why, sizeof why), 0);
    close(fd);
    CU_ASSERT_EQUAL(waitpid(-1, NULL, WNOHANG), -1);
}

/* A constructor that returns still runs in the host (its mark is ours). */
static void test_returns(void)
{
    unsetenv("SHOAL_FIXTURE_CTOR_OK");
    shoal_loader_t *L = NULL;
    shoal_module_t *m = lk_load(&L, lk_fixture("ctor_ok.so"));
    CU_ASSERT_PTR_NOT_NULL(m);
    const char *mark = getenv("SHOAL_FIXTURE_CTOR_OK");
    CU_ASSERT(mark != NULL && strcmp(mark, "1") == 0);
    shoal__module_release(m);
    shoal__loader_destroy(L);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"a constructor that crashes is refused", test_crash},
        {"a constructor that exits is refused", test_exit},
        {"a constructor that never returns is refused at the deadline", test_hang},
        {"a constructor that raises SIGTERM is refused", test_raise},
        {"a lock another thread holds does not hang the trial", test_lock_held_elsewhere},
        {"the trial alone", test_trial_direct},
        {"a constructor that returns runs in the host", test_returns},
        {NULL, NULL},
    };
    return lk_run("loader_trial", cases);
}
