/* test_config_load.c - shoald's config (host/config.c) loaded from a
 * real file with shoal__config_load: a missing file, paths against the
 * file's directory, an error naming the real file, and a directory or a
 * FIFO refused unread. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config_kit.h"

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

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"load from a file", test_load},
        {NULL, NULL},
    };
    return shoal_test_run("config_load", cases);
}
