/* test_loader_init.c - a plugin's own init and fini under a deadline
 * (host/plugin_init.c): an init that returns in time gives its result and
 * reason; one that never returns, or a fini that never returns, is given
 * up on at the deadline, its plugin and copy left to its thread, which
 * unloads the plugin and closes the copy once the hook does return; the
 * next hook runs in time on a new thread; a load waiting on one calls the
 * loader's tend, on the thread that set it only. The fixtures are dlopen'd
 * here as the loader does after its checks. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "host/loader.h"
#include "host/plugin_init.h"
#include "loader_kit.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const shoal_plugin_t *descriptor(void *dl)
{
    return dl == NULL ? NULL : dlsym(dl, SHOAL_PLUGIN_SYMBOL);
}

/* In time: init's own result and reason; nothing is the init thread's. */
static void test_in_time(void)
{
    void *dl = dlopen(lk_fixture("init_fails.so"), RTLD_NOW | RTLD_LOCAL);
    const shoal_plugin_t *d = descriptor(dl);
    CU_ASSERT_FATAL(d != NULL && d->init != NULL);
    int copy = open("/dev/null", O_RDONLY | O_CLOEXEC);
    char why[256] = "";
    int result = 0;
    CU_ASSERT_EQUAL(shoal__plugin_hook_run(d, false, dl, copy, 5000, why, sizeof why, &result), 0);
    CU_ASSERT_EQUAL(result, 7);
    CU_ASSERT_STRING_EQUAL(why, "database is down");
    CU_ASSERT_EQUAL(fcntl(copy, F_GETFD), FD_CLOEXEC); /* still the caller's */
    close(copy);
    dlclose(dl);
}

/* A hook (init, or fini) of fixture `so` that waits for a file: given up
 * on at a 200 ms deadline with the copy still open and the plugin mapped
 * (they are its thread's now); once the file exists the hook returns, and
 * its thread closes the copy and unloads the plugin. */
static void hook_given_up_then_returns(const char *so, bool fini)
{
    char go[64];
    snprintf(go, sizeof go, "/tmp/shoal-hook-go.%d", (int)getpid());
    unlink(go);
    setenv("SHOAL_FIXTURE_INIT_GO", go, 1);
    const char *path = lk_fixture(so);
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    const shoal_plugin_t *d = descriptor(dl);
    CU_ASSERT_FATAL(d != NULL && (fini ? d->fini != NULL : d->init != NULL));
    int copy = open("/dev/null", O_RDONLY | O_CLOEXEC);
    char why[256] = "x";
    int result = -1;
    double t0 = now_s();
    CU_ASSERT_EQUAL(shoal__plugin_hook_run(d, fini, dl, copy, 200, why, sizeof why, &result),
                    SHOAL_ETIMEDOUT);
    double took = now_s() - t0;
    CU_ASSERT(took >= 0.2 && took < 5.0);
    CU_ASSERT_EQUAL(result, -1);
    CU_ASSERT_STRING_EQUAL(why, "");
    CU_ASSERT_EQUAL(fcntl(copy, F_GETFD), FD_CLOEXEC); /* the hook still runs: still open */
    CU_ASSERT_TRUE(lk_mapped(path));
    int fd = open(go, O_WRONLY | O_CREAT | O_CLOEXEC, 0600); /* the hook returns now */
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    for (int i = 0; i < 500 && fcntl(copy, F_GETFD) != -1; i++) {
        struct timespec tick = {0, 10 * 1000 * 1000};
        nanosleep(&tick, NULL);
    }
    CU_ASSERT_EQUAL(fcntl(copy, F_GETFD), -1);
    CU_ASSERT_EQUAL(errno, EBADF);
    CU_ASSERT_FALSE(lk_mapped(path)); /* dlclose'd by its thread */
    unlink(go);
    char entered[80];
    snprintf(entered, sizeof entered, "%s.entered", go);
    unlink(entered);
}

/* An init that never returns in time (init_hangs.so). */
static void test_never_returns(void) { hook_given_up_then_returns("init_hangs.so", false); }

/* A fini that never returns in time (fini_hangs.so; fini runs once). */
static void test_fini_never_returns(void) { hook_given_up_then_returns("fini_hangs.so", true); }

/* A hook while another caller waits for one that hangs: it runs at once,
 * on a thread of its own, not behind the hanging one. */
typedef struct {
    const shoal_plugin_t *d;
    void *dl;
    int copy, rc, result;
} hang_call_t;

static void *hang_caller(void *arg)
{
    hang_call_t *h = arg;
    char why[64];
    h->rc = shoal__plugin_hook_run(h->d, false, h->dl, h->copy, 20000, why, sizeof why, &h->result);
    return NULL;
}

static void test_hook_beside_a_hanging_one(void)
{
    char go[64], entered[80];
    snprintf(go, sizeof go, "/tmp/shoal-hook-go.%d", (int)getpid());
    snprintf(entered, sizeof entered, "%s.entered", go);
    unlink(go);
    unlink(entered);
    setenv("SHOAL_FIXTURE_INIT_GO", go, 1);
    hang_call_t h = {.dl = dlopen(lk_fixture("init_hangs.so"), RTLD_NOW | RTLD_LOCAL), .rc = -1};
    h.d = descriptor(h.dl);
    CU_ASSERT_FATAL(h.d != NULL);
    h.copy = open("/dev/null", O_RDONLY | O_CLOEXEC);
    pthread_t th;
    CU_ASSERT_FATAL(pthread_create(&th, NULL, hang_caller, &h) == 0);
    for (int i = 0; i < 2000 && access(entered, F_OK) != 0; i++) {
        struct timespec tick = {0, 5 * 1000 * 1000};
        nanosleep(&tick, NULL);
    }
    CU_ASSERT_FATAL(access(entered, F_OK) == 0); /* the hanging init runs: its caller waits */
    double t0 = now_s();
    test_in_time(); /* init_fails.so: its result and reason */
    CU_ASSERT(now_s() - t0 < 5.0);
    int fd = open(go, O_WRONLY | O_CREAT | O_CLOEXEC, 0600); /* the hanging one returns */
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    pthread_join(th, NULL);
    CU_ASSERT_EQUAL(h.rc, 0);
    CU_ASSERT_EQUAL(h.result, 0);
    close(h.copy);
    dlclose(h.dl);
    unlink(go);
    unlink(entered);
}

/* After a hook given up on, the next runs on a new thread, in time. */
static void test_next_after_a_hang(void)
{
    hook_given_up_then_returns("init_hangs.so", false);
    test_in_time();
}

/* The loader's tend (loader.h): called while a load waits on a hook, on
 * the thread that set it only -- shoald pets systemd's watchdog there, and
 * its host thread waited up to 10 s unpetted. */
static void tended(void *arg) { atomic_fetch_add((_Atomic int *)arg, 1); }

static void *go_later(void *arg)
{
    struct timespec wait = {0, 500 * 1000 * 1000};
    nanosleep(&wait, NULL);
    int fd = open(arg, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd >= 0)
        close(fd);
    return NULL;
}

typedef struct {
    shoal_loader_t *L;
    _Atomic int *n;
} set_tend_t;

static void *set_tend_there(void *arg)
{
    set_tend_t *s = arg;
    shoal__loader_set_tend(s->L, tended, s->n);
    return NULL;
}

/* Loads init_hangs.so, whose init returns 500 ms in; how many times the
 * loader's tend was called meanwhile. set_elsewhere: set on another thread
 * than the one that loads. */
static int tends_in_a_load(bool set_elsewhere)
{
    char go[64], entered[80];
    snprintf(go, sizeof go, "/tmp/shoal-hook-go.%d", (int)getpid());
    snprintf(entered, sizeof entered, "%s.entered", go);
    unlink(go);
    setenv("SHOAL_FIXTURE_INIT_GO", go, 1);
    _Atomic int n = 0;
    shoal_loader_t *L = NULL;
    CU_ASSERT_FATAL(shoal__loader_create(&L) == SHOAL_OK);
    pthread_t th;
    if (set_elsewhere) {
        set_tend_t s = {L, &n};
        CU_ASSERT_FATAL(pthread_create(&th, NULL, set_tend_there, &s) == 0);
        pthread_join(th, NULL);
    } else {
        shoal__loader_set_tend(L, tended, &n);
    }
    CU_ASSERT_FATAL(pthread_create(&th, NULL, go_later, go) == 0);
    shoal_module_t *m = NULL;
    shoal_diag_t err;
    double t0 = now_s();
    CU_ASSERT_EQUAL(shoal__module_load(L, lk_fixture("init_hangs.so"), &m, &err), SHOAL_OK);
    double took = now_s() - t0;
    CU_ASSERT(took >= 0.5 && took < 5.0);
    pthread_join(th, NULL);
    if (m != NULL)
        shoal__module_release(m);
    shoal__loader_set_tend(L, NULL, NULL);
    shoal__loader_destroy(L);
    unlink(go);
    unlink(entered);
    return atomic_load(&n);
}

static void test_load_tended(void)
{
    int here = tends_in_a_load(false);
    CU_ASSERT(here >= 3); /* every 100 ms at most: 5 in 500 ms, on a loaded machine fewer */
    CU_ASSERT_EQUAL(tends_in_a_load(true), 0);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"an init that returns in time", test_in_time},
        {"an init that never returns", test_never_returns},
        {"a fini that never returns", test_fini_never_returns},
        {"a hook in time after one given up on", test_next_after_a_hang},
        {"a hook beside a hanging one", test_hook_beside_a_hanging_one},
        {"a load's wait is tended, on the thread that asked only", test_load_tended},
        {NULL, NULL},
    };
    return lk_run("loader_init", cases);
}
