/* fuzz_config.c - libFuzzer target: the config loader (parse + validate)
 * on arbitrary bytes, and every leaf pool's args checked against a schema of
 * every type (argcheck.c, as resolve does with a behaviour's schema). Any
 * input must either give a config (freed without a leak) or an error with a
 * message; a crash, a leak, undefined behaviour or an error without a
 * message is a finding. CI runs it for a few minutes under ASan+UBSan from
 * the seeds in corpus/fuzz_config/ (.ci/run, job fuzz). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "host/argcheck.h"
#include "host/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const modes[] = {"idle", "exit", NULL};
static const shoal_arg_spec_t schema[] = {
    {.key = "target", .type = SHOAL_ARG_STRING, .flags = SHOAL_ARG_REQUIRED},
    {.key = "rate", .type = SHOAL_ARG_INT, .min = 0, .max = 1000000000, .def = "1000"},
    {.key = "any", .type = SHOAL_ARG_INT},
    {.key = "size", .type = SHOAL_ARG_SIZE, .min = 0, .max = 16 << 20, .def = "8B"},
    {.key = "bytes", .type = SHOAL_ARG_SIZE},
    {.key = "done", .type = SHOAL_ARG_ENUM, .choices = modes, .def = "idle"},
    {.key = "tick", .type = SHOAL_ARG_DURATION, .min = 1, .max = 60000, .def = "10ms"},
    {.key = "spin", .type = SHOAL_ARG_DURATION_US, .min = 0, .max = 3600000000, .def = "0"},
    {.key = "call", .type = SHOAL_ARG_BOOL, .def = "false"},
    {.key = "items", .type = SHOAL_ARG_LIST, .def = "[]"},
    {.key = "map", .type = SHOAL_ARG_MAP, .def = "{}"},
    {.key = NULL},
};

/* Each pool's leaf args against the schema: OK, or an error with a message. */
static void check_args(const shoal_config_t *c)
{
    for (size_t i = 0; i < c->npools; i++) {
        const shoal_config_pool_t *p = &c->pools[i];
        while (p->nested != NULL)
            p = p->nested;
        shoal_diag_t err = {0};
        int rc = shoal__argcheck_args(schema, p->args, p->at, p->path, "f.f", &err);
        if (rc != SHOAL_OK && (rc != SHOAL_EINVAL || err.msg[0] == '\0')) {
            fprintf(stderr, "fuzz_config: args check %d without a message\n", rc);
            abort();
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int schema_ok = -1;
    char why[400];
    if (schema_ok < 0)
        schema_ok = shoal__argcheck_schema("f.f", schema, why, sizeof why) == SHOAL_OK;
    if (!schema_ok) {
        fprintf(stderr, "fuzz_config: the fuzzer's own schema is refused: %s\n", why);
        abort();
    }
    shoal_config_t *c = NULL;
    shoal_diag_t err = {0};
    int rc = shoal__config_parse("/fuzz/shoal.yaml", (const char *)data, size, &c, &err);
    if (rc == SHOAL_OK) {
        if (c == NULL)
            abort();
        check_args(c);
        shoal__config_free(c);
        return 0;
    }
    if (c != NULL || err.msg[0] == '\0') {
        fprintf(stderr, "fuzz_config: error %d without a message\n", rc);
        abort();
    }
    return 0;
}
