/* test_config_load.c - shoald's config (host/config.c) loaded from a
 * real file with shoal__config_load: a missing file, paths against the
 * file's directory, an error naming the real file, and a directory or a
 * FIFO refused unread; a file being written taken only once it is whole
 * (host/file.c), or refused when it never settles; what a diff reads, once,
 * refused at once when it changed while read. */
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config_kit.h"
#include "host/file.h"

static void sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static void write_file(const char *path, const char *mode, const char *text)
{
    FILE *f = fopen(path, mode);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    CU_ASSERT_EQUAL(fclose(f), 0);
}

/* ---- load ------------------------------------------------------------------------ */

static void test_load(void)
{
    shoal_config_t *c = (shoal_config_t *)1;
    shoal_diag_t err;
    char buf[1200];
    CU_ASSERT_EQUAL(shoal__config_load("/nonexistent-shoal/x.yaml", &c, &err), SHOAL_ELOAD);
    CU_ASSERT_PTR_NULL(c);
    shoal_test_same(shoal__diag_format(&err, buf, sizeof buf),
                    "/nonexistent-shoal/x.yaml: cannot read: No such file or directory",
                    "missing file");

    char dir[] = "/tmp/shoal-test-config-XXXXXX";
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    char path[PATH_MAX], want[2 * PATH_MAX];
    snprintf(path, sizeof path, "%s/shoal.yaml", dir);
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("runtime: {control: shoal.sock}\nplugins: {e: sub/echo.so}\n"
          "pools:\n  api: {worker: e.echo, size: 3}\n",
          f);
    fclose(f);
    CU_ASSERT_EQUAL(shoal__config_load(path, &c, &err), SHOAL_OK);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_STRING_EQUAL(c->file, path);
    CU_ASSERT_STRING_EQUAL(c->dir, dir);
    snprintf(want, sizeof want, "%s/shoal.sock", dir);
    CU_ASSERT_STRING_EQUAL(c->runtime.control, want);
    snprintf(want, sizeof want, "%s/sub/echo.so", dir);
    CU_ASSERT_STRING_EQUAL(c->plugins[0].path, want);
    CU_ASSERT_EQUAL(c->pools[0].size, 3);
    shoal__config_free(c);

    /* An error names the real file. */
    f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("log:\n  level: loud\n", f);
    fclose(f);
    CU_ASSERT_EQUAL(shoal__config_load(path, &c, &err), SHOAL_EINVAL);
    CU_ASSERT_PTR_NULL(c);
    snprintf(want, sizeof want,
             "%s:2:10: log.level: expected one of error, warn, info, debug, got 'loud'", path);
    shoal_test_same(shoal__diag_format(&err, buf, sizeof buf), want, path);

    /* A directory (or a FIFO, whose open would wait for a writer) is not
     * read at all: only a regular file is (host/file.c). */
    c = NULL;
    CU_ASSERT_EQUAL(shoal__config_load(dir, &c, &err), SHOAL_ELOAD);
    CU_ASSERT_PTR_NULL(c);
    snprintf(want, sizeof want, "%s: not a regular file (a directory)", dir);
    shoal_test_same(shoal__diag_format(&err, buf, sizeof buf), want, dir);
    char fifo[600];
    snprintf(fifo, sizeof fifo, "%s/fifo.yaml", dir);
    CU_ASSERT_EQUAL_FATAL(mkfifo(fifo, 0600), 0);
    CU_ASSERT_EQUAL(shoal__config_load(fifo, &c, &err), SHOAL_ELOAD);
    CU_ASSERT_PTR_NULL(c);
    snprintf(want, sizeof want, "%s: not a regular file (a FIFO)", fifo);
    shoal_test_same(shoal__diag_format(&err, buf, sizeof buf), want, fifo);
    CU_ASSERT_EQUAL(unlink(fifo), 0);
    CU_ASSERT_EQUAL(unlink(path), 0);
    CU_ASSERT_EQUAL(rmdir(dir), 0);
}

/* ---- a file being written -------------------------------------------------------- */

#define HALF "plugins: {e: e.so}\npools:\n  a: {worker: e.echo, size: 2}\n"
#define REST "  b: {worker: e.echo, size: 3}\n"

typedef struct writer_s {
    const char *path;
    long every_ms; /* 0: append REST once after 30 ms; else a comment line each every_ms */
    atomic_bool stop;
} writer_t;

static void *writer(void *arg)
{
    writer_t *w = arg;
    if (w->every_ms == 0) {
        sleep_ms(30);
        write_file(w->path, "a", REST);
        return NULL;
    }
    while (!atomic_load(&w->stop)) {
        write_file(w->path, "a", "# still typing\n");
        sleep_ms(w->every_ms);
    }
    return NULL;
}

/* path (a mkstemp template) made, holding text. */
static void make_file(char *path, const char *text)
{
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    write_file(path, "w", text);
}

/* The writer started on w. */
static pthread_t start_writer(writer_t *w)
{
    atomic_init(&w->stop, false);
    pthread_t th;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, writer, w), 0);
    return th;
}

/* A file written a moment ago is read once it has been left alone for the
 * settle time: shoald never reads it in the middle of an editor's save. */
static void test_fresh_file_waits(void)
{
    char path[] = "/tmp/shoal-test-fresh-XXXXXX";
    make_file(path, HALF REST);
    shoal_config_t *c = NULL;
    shoal_diag_t err;
    long t0 = now_ms();
    CU_ASSERT_EQUAL_FATAL(shoal__config_load(path, &c, &err), SHOAL_OK);
    /* The file's ctime is the kernel's coarse clock, up to a tick behind. */
    CU_ASSERT(now_ms() - t0 >= SHOAL_FILE_SETTLE_MS - 15);
    CU_ASSERT_EQUAL(c->npools, 2);
    shoal__config_free(c);

    /* A file left alone that long is read as it is. */
    sleep_ms(SHOAL_FILE_SETTLE_MS + 20);
    CU_ASSERT_EQUAL_FATAL(shoal__config_load(path, &c, &err), SHOAL_OK);
    CU_ASSERT_EQUAL(c->npools, 2);
    shoal__config_free(c);
    CU_ASSERT_EQUAL(unlink(path), 0);
}

/* Half a config is a valid config with fewer pools; a reload that read it
 * would drain the rest. Written in two parts 30 ms apart, the file is read
 * whole: both pools. */
static void test_half_written_read_whole(void)
{
    char path[] = "/tmp/shoal-test-half-XXXXXX";
    make_file(path, HALF);
    writer_t w = {.path = path, .every_ms = 0};
    pthread_t th = start_writer(&w);
    char *buf = NULL;
    size_t len = 0;
    shoal_diag_t err;
    /* A settle time well past the writer's pause: a slow machine only
     * makes the read later, never earlier. */
    CU_ASSERT_EQUAL(shoal__file_read_settled(path, 1u << 20, 400, 5000, &buf, &len, &err),
                    SHOAL_OK);
    pthread_join(th, NULL);
    CU_ASSERT_EQUAL(len, strlen(HALF REST));
    CU_ASSERT_STRING_EQUAL(buf, HALF REST);
    shoal_config_t *c = NULL;
    CU_ASSERT_EQUAL_FATAL(shoal__config_parse(path, buf, len, &c, &err), SHOAL_OK);
    CU_ASSERT_EQUAL(c->npools, 2);
    shoal__config_free(c);
    free(buf);
    CU_ASSERT_EQUAL(unlink(path), 0);
}

/* A file that keeps changing is refused at the deadline, unread, with a
 * message that says why; a reload then changes nothing. */
static void test_never_settles_refused(void)
{
    char path[] = "/tmp/shoal-test-busy-XXXXXX";
    make_file(path, HALF);
    writer_t w = {.path = path, .every_ms = 10};
    pthread_t th = start_writer(&w);
    char *buf = (char *)1, msg[600], want[600];
    size_t len = 7;
    shoal_diag_t err;
    long t0 = now_ms();
    CU_ASSERT_EQUAL(shoal__file_read_settled(path, 1u << 20, 300, 800, &buf, &len, &err),
                    SHOAL_ELOAD);
    CU_ASSERT(now_ms() - t0 >= 800);
    atomic_store(&w.stop, true);
    pthread_join(th, NULL);
    CU_ASSERT_PTR_NULL(buf);
    CU_ASSERT_EQUAL(len, 0);
    snprintf(want, sizeof want,
             "%s: still being written: it changed within 300 ms of every read for 800 ms; not "
             "read (try again once it is saved)",
             path);
    shoal_test_same(shoal__diag_format(&err, msg, sizeof msg), want, "never settles");
    CU_ASSERT_EQUAL(unlink(path), 0);
}

static void *chmod_loop(void *arg)
{
    writer_t *w = arg;
    while (!atomic_load(&w->stop)) {
        chmod(w->path, 0644);
        sleep_ms(10);
    }
    return NULL;
}

/* A file whose metadata alone keeps changing (a chmod every 10 ms moves
 * its ctime) is read: the same bytes, inode, size and mtime a settle time
 * apart. */
static void test_metadata_churn_read(void)
{
    char path[] = "/tmp/shoal-test-chmod-XXXXXX";
    make_file(path, HALF REST);
    writer_t w = {.path = path};
    atomic_init(&w.stop, false);
    pthread_t th;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, chmod_loop, &w), 0);
    char *buf = NULL;
    size_t len = 0;
    shoal_diag_t err;
    CU_ASSERT_EQUAL(shoal__file_read_settled(path, 1u << 20, 200, 5000, &buf, &len, &err),
                    SHOAL_OK);
    atomic_store(&w.stop, true);
    pthread_join(th, NULL);
    CU_ASSERT_EQUAL(len, strlen(HALF REST));
    free(buf);
    CU_ASSERT_EQUAL(unlink(path), 0);
}

/* What a diff reads (shoal__config_load_once): a file that never settles
 * -- /proc/self/environ, whose size says 0 whatever is read -- refused at
 * once with a message that says why, not after SETTLE_MAX_MS (2 s) of
 * waiting; a file saved just now taken at once, whole. */
static void test_read_once(void)
{
    char msg[600];
    shoal_diag_t err;
    shoal_config_t *c = (shoal_config_t *)1;
    long t0 = now_ms();
    CU_ASSERT_EQUAL(shoal__config_load_once("/proc/self/environ", &c, &err), SHOAL_ELOAD);
    CU_ASSERT(now_ms() - t0 < 1000);
    CU_ASSERT_PTR_NULL(c);
    shoal_test_same(shoal__diag_format(&err, msg, sizeof msg),
                    "/proc/self/environ: changed while it was read (it is being written, or it "
                    "never stops changing); not read: try again once it is saved",
                    "environ");
    char path[] = "/tmp/shoal-test-once-XXXXXX";
    make_file(path, HALF REST);
    char *buf = NULL;
    size_t len = 0;
    t0 = now_ms();
    CU_ASSERT_EQUAL(shoal__file_read_once(path, 1u << 20, &buf, &len, &err), SHOAL_OK);
    CU_ASSERT(now_ms() - t0 < 1000);
    CU_ASSERT_EQUAL(len, strlen(HALF REST));
    CU_ASSERT_STRING_EQUAL(buf, HALF REST);
    free(buf);
    CU_ASSERT_EQUAL(unlink(path), 0);
}

/* Past the size limit: refused, SHOAL_ELIMIT. */
static void test_too_large(void)
{
    char path[] = "/tmp/shoal-test-large-XXXXXX";
    make_file(path, HALF REST);
    char *buf = (char *)1, msg[600], want[600];
    size_t len = 7;
    shoal_diag_t err;
    CU_ASSERT_EQUAL(shoal__file_read_settled(path, 16, 0, 0, &buf, &len, &err), SHOAL_ELIMIT);
    CU_ASSERT_PTR_NULL(buf);
    snprintf(want, sizeof want, "%s: too large (at most 0 MiB)", path);
    shoal_test_same(shoal__diag_format(&err, msg, sizeof msg), want, "too large");
    /* Exactly at the limit: read. */
    size_t whole = strlen(HALF REST);
    CU_ASSERT_EQUAL(shoal__file_read_settled(path, whole, 0, 0, &buf, &len, &err), SHOAL_OK);
    CU_ASSERT_EQUAL(len, whole);
    CU_ASSERT_EQUAL(buf[len], '\0');
    free(buf);
    CU_ASSERT_EQUAL(unlink(path), 0);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"load from a file", test_load},
        {"a file written just now is read once it is left alone", test_fresh_file_waits},
        {"a file written in two parts is read whole", test_half_written_read_whole},
        {"a file that never settles is refused", test_never_settles_refused},
        {"a file whose metadata alone keeps changing is read", test_metadata_churn_read},
        {"a file past the size limit is refused", test_too_large},
        {"a diff reads once: a file that never settles is refused at once", test_read_once},
        {NULL, NULL},
    };
    return shoal_test_run("config_load", cases);
}
