/* test_loader_trial.c - a plugin's ELF constructors tried in a child
 * process before the host runs them (host/plugin_trial.c): one that
 * crashes, exits or never returns is refused with what happened, and the
 * process that loads goes on -- it loads a good plugin next, in time (a
 * hang in the host's own dlopen would hold the dynamic loader's lock for
 * good). A constructor that returns runs in the host as before. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
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
                      "its ELF constructors crashed (SIGSEGV) when tried in a child process");
    assert_host_goes_on();
}

static void test_exit(void)
{
    lk_assert_refused(lk_fixture("ctor_exits.so"),
                      "its ELF constructors ended the process (exit status 0) when tried in a "
                      "child process");
    assert_host_goes_on();
    /* With the status the trial's child ends with once dlopen returns: it
     * did not return, and the byte it would have written never came. */
    lk_assert_refused(lk_fixture("ctor_exits_87.so"),
                      "its ELF constructors ended the process (exit status 87) when tried in a "
                      "child process");
    assert_host_goes_on();
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

/* The trial alone, with a short deadline: the same verdicts. */
static void test_trial_direct(void)
{
    char why[256];
    int fd = open(lk_fixture("ctor_hangs.so"), O_RDONLY | O_CLOEXEC);
    CU_ASSERT_FATAL(fd >= 0);
    double t0 = now_s();
    CU_ASSERT_EQUAL(shoal__plugin_trial(fd, 300, why, sizeof why), SHOAL_ELOAD);
    CU_ASSERT(now_s() - t0 >= 0.3);
    CU_ASSERT_STRING_EQUAL(why, "its ELF constructors did not return within 300 ms when tried in "
                                "a child process (killed)");
    close(fd);
    fd = open(lk_fixture("good.so"), O_RDONLY | O_CLOEXEC);
    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT_EQUAL(shoal__plugin_trial(fd, 5000, why, sizeof why), 0);
    close(fd);
    /* Not a shared object: the child's dlopen fails, which is the host's
     * dlopen's to report. */
    fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    CU_ASSERT_EQUAL(shoal__plugin_trial(fd, 5000, why, sizeof why), 0);
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
        {"the trial alone", test_trial_direct},
        {"a constructor that returns runs in the host", test_returns},
        {NULL, NULL},
    };
    return lk_run("loader_trial", cases);
}
