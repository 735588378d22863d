/* test_names.c - registered names (runtime/names.c): register, whereis and
 * unregister against a model over 20,000 names with random removals (a
 * removal shifts the names after it back: every name must still be found,
 * none that was removed), a name registered again takes the new PID, bad
 * names are refused, and lookups on other threads while names come and go
 * always see a name's one PID or none (TSan checks the table's lock). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"
#include "support.h"

#define NNAMES 20000u

static shoal_runtime_t *rt_new(void)
{
    shoal_runtime_opts_t o;
    shoal_runtime_opts_init(&o);
    o.threads = 1;
    o.log_level = SHOAL_LOG_ERROR;
    shoal_runtime_t *rt = NULL;
    CU_ASSERT_EQUAL_FATAL(shoal_runtime_create(&rt, &o), SHOAL_OK);
    return rt;
}

static void name_of(unsigned i, char *buf, size_t n) { snprintf(buf, n, "pool-%u", i); }

/* The PID name i maps to in the model (any value but SHOAL_PID_NONE). */
static shoal_pid_t pid_of(unsigned i, unsigned round)
{
    return (shoal_pid_t)((uint64_t)(i + 1) << 20 | round);
}

static void names_match_a_model(void)
{
    shoal_runtime_t *rt = rt_new();
    static shoal_pid_t model[NNAMES];
    char name[32];
    for (unsigned i = 0; i < NNAMES; i++) {
        name_of(i, name, sizeof name);
        CU_ASSERT_EQUAL(shoal_runtime_whereis(rt, name), SHOAL_PID_NONE);
        model[i] = pid_of(i, 0);
        CU_ASSERT_EQUAL(shoal_runtime_register(rt, name, model[i]), SHOAL_OK);
    }
    /* Rounds of removals and new registrations, checked whole each time. */
    unsigned seed = 12345;
    for (unsigned round = 1; round <= 4; round++) {
        for (unsigned k = 0; k < NNAMES / 2; k++) {
            seed = seed * 1103515245u + 12345u;
            unsigned i = (seed >> 8) % NNAMES;
            name_of(i, name, sizeof name);
            if (model[i] != SHOAL_PID_NONE && (seed & 1)) {
                CU_ASSERT_EQUAL(shoal_runtime_unregister(rt, name), SHOAL_OK);
                model[i] = SHOAL_PID_NONE;
            } else if (model[i] == SHOAL_PID_NONE) {
                CU_ASSERT_EQUAL(shoal_runtime_unregister(rt, name), SHOAL_ENOPROC);
                model[i] = pid_of(i, round);
                CU_ASSERT_EQUAL(shoal_runtime_register(rt, name, model[i]), SHOAL_OK);
            } else { /* registered again: the new PID */
                model[i] = pid_of(i, round);
                CU_ASSERT_EQUAL(shoal_runtime_register(rt, name, model[i]), SHOAL_OK);
            }
        }
        unsigned wrong = 0;
        for (unsigned i = 0; i < NNAMES; i++) {
            name_of(i, name, sizeof name);
            wrong += shoal_runtime_whereis(rt, name) != model[i];
        }
        CU_ASSERT_EQUAL(wrong, 0);
    }
    /* Every name removed: none is found, and the table takes them again. */
    for (unsigned i = 0; i < NNAMES; i++) {
        name_of(i, name, sizeof name);
        CU_ASSERT_EQUAL(shoal_runtime_unregister(rt, name),
                        model[i] != SHOAL_PID_NONE ? SHOAL_OK : SHOAL_ENOPROC);
    }
    unsigned found = 0;
    for (unsigned i = 0; i < NNAMES; i++) {
        name_of(i, name, sizeof name);
        found += shoal_runtime_whereis(rt, name) != SHOAL_PID_NONE;
    }
    CU_ASSERT_EQUAL(found, 0);
    CU_ASSERT_EQUAL(shoal_runtime_register(rt, "again", pid_of(1, 9)), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_whereis(rt, "again"), pid_of(1, 9));
    shoal_runtime_destroy(rt);
}

static void bad_names_are_refused(void)
{
    shoal_runtime_t *rt = rt_new();
    char longest[257];
    memset(longest, 'x', 256);
    longest[256] = '\0';
    CU_ASSERT_EQUAL(shoal_runtime_register(rt, NULL, pid_of(1, 0)), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_runtime_register(rt, "", pid_of(1, 0)), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_runtime_register(rt, longest, pid_of(1, 0)), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_runtime_register(rt, "api", SHOAL_PID_NONE), SHOAL_EINVAL);
    CU_ASSERT_EQUAL(shoal_runtime_whereis(rt, NULL), SHOAL_PID_NONE);
    CU_ASSERT_EQUAL(shoal_runtime_whereis(rt, longest), SHOAL_PID_NONE);
    CU_ASSERT_EQUAL(shoal_runtime_unregister(rt, NULL), SHOAL_ENOPROC);
    CU_ASSERT_EQUAL(shoal_runtime_unregister(rt, "api"), SHOAL_ENOPROC);
    longest[255] = '\0'; /* 255 characters: the longest name */
    CU_ASSERT_EQUAL(shoal_runtime_register(rt, longest, pid_of(2, 0)), SHOAL_OK);
    CU_ASSERT_EQUAL(shoal_runtime_whereis(rt, longest), pid_of(2, 0));
    shoal_runtime_destroy(rt);
}

/* Readers look names up while the test thread registers and removes
 * others and moves one between two PIDs: a name is found with one of the
 * PIDs it was given, or not at all, never another's. */
typedef struct {
    shoal_runtime_t *rt;
    atomic_int stop;
    unsigned wrong, looks;
} reader_t;

static void *reader_main(void *arg)
{
    reader_t *r = arg;
    char name[32];
    for (unsigned k = 0; !atomic_load(&r->stop); k++) {
        unsigned i = k % 2000;
        name_of(i, name, sizeof name);
        shoal_pid_t p = shoal_runtime_whereis(r->rt, name);
        if (p != SHOAL_PID_NONE && p != pid_of(i, 0) && p != pid_of(i, 1))
            r->wrong++;
        r->looks++;
    }
    return NULL;
}

static void lookups_while_names_change(void)
{
    shoal_runtime_t *rt = rt_new();
    reader_t r[2] = {{.rt = rt}, {.rt = rt}};
    pthread_t th[2];
    for (int k = 0; k < 2; k++)
        CU_ASSERT_EQUAL_FATAL(pthread_create(&th[k], NULL, reader_main, &r[k]), 0);
    char name[32];
    for (unsigned round = 0; round < 20; round++) {
        for (unsigned i = 0; i < 2000; i++) {
            name_of(i, name, sizeof name);
            CU_ASSERT_EQUAL(shoal_runtime_register(rt, name, pid_of(i, round & 1)), SHOAL_OK);
        }
        for (unsigned i = round & 1; i < 2000; i += 2) {
            name_of(i, name, sizeof name);
            CU_ASSERT_EQUAL(shoal_runtime_unregister(rt, name), SHOAL_OK);
        }
    }
    for (int k = 0; k < 2; k++) {
        atomic_store(&r[k].stop, 1);
        pthread_join(th[k], NULL);
        CU_ASSERT_EQUAL(r[k].wrong, 0);
        CU_ASSERT_TRUE(r[k].looks > 0);
    }
    shoal_runtime_destroy(rt);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"names match a model over 20,000 names", names_match_a_model},
        {"bad names are refused", bad_names_are_refused},
        {"lookups while names come and go", lookups_while_names_change},
        {NULL, NULL},
    };
    return shoal_test_run("names", cases);
}
