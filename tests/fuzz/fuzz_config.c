/* fuzz_config.c - libFuzzer target: the config loader (parse + validate)
 * on arbitrary bytes. Any input must either give a config (freed without a
 * leak) or an error with a message; a crash, a leak, undefined behaviour or
 * an error without a message is a finding. CI runs it for a few minutes
 * under ASan+UBSan from the seeds in corpus/ (.ci/run, job fuzz). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "host/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    shoal_config_t *c = NULL;
    shoal_diag_t err = {0};
    int rc = shoal__config_parse("/fuzz/shoal.yaml", (const char *)data, size, &c, &err);
    if (rc == SHOAL_OK) {
        if (c == NULL)
            abort();
        shoal__config_free(c);
        return 0;
    }
    if (c != NULL || err.msg[0] == '\0') {
        fprintf(stderr, "fuzz_config: error %d without a message\n", rc);
        abort();
    }
    return 0;
}
