/* test_config_help.c - shoald's --help-config table (host/config.c,
 * shoal__config_help): its lines, and a row for every key. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_kit.h"
#include "host/config.h"

/* ---- --help-config ------------------------------------------------------------- */

static void test_help(void)
{
    char *out = cf_help_text();
    static const char *const lines[] = {
        "shoald config (YAML). Paths are relative to the config file.\n",
        "  key                        type                           default          what\n",
        "  runtime.threads            auto | 1..1024                 auto             dispatcher "
        "threads; auto = max(online CPUs, 2)\n",
        "  runtime.spin               duration (us, ms, s), <= 1s    50us             how long an "
        "idle thread looks for work before it sleeps\n",
        "  runtime.stall_warn         duration (250ms, 2s, 1m)       1s               a handler "
        "running longer is logged and shown in status and inspect\n",
        "  runtime.max_extra_threads  auto | 0..1024                 auto             threads "
        "started while handlers are stuck; auto = threads, 0 = none. With that many stuck, their "
        "pools' other members wait (new members too, while inits are stuck)\n",
        "  log.level                  error | warn | info | debug    info             error, warn, "
        "info or debug\n",
        "  shutdown.drain             duration (250ms, 2s, 1m)       10s              on "
        "SIGTERM/SIGINT, how long pools may drain; still busy then: shoald exits 3\n",
        "\nPOOL (each entry under pools:):\n",
        "  mailbox                    1.. | unbounded                64               per worker: "
        "a number >= 1, or unbounded\n",
        "  restart.within             duration (250ms, 2s, 1m)       5s               the restart "
        "window\n",
        "\nSOURCE (each entry under sources:):\n"
        "  actor                      PLUGIN.BEHAVIOUR               (required)       "
        "PLUGIN.BEHAVIOUR: one actor, spawned after every pool, stopped before they drain\n",
        "  sources                    mapping NAME: SOURCE           {}               NAME: SOURCE "
        "(singleton actors that feed pools; names distinct from pools')\n",
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
        CU_ASSERT_PTR_NOT_NULL(strstr(out, lines[i]));
        if (strstr(out, lines[i]) == NULL)
            fprintf(stderr, "\n    missing line: %s", lines[i]);
    }
    /* Every key, at the start of a row. */
    static const char *const keys[] = {"runtime",
                                       "runtime.threads",
                                       "runtime.throughput",
                                       "runtime.spin",
                                       "runtime.max_actors",
                                       "runtime.control",
                                       "runtime.plugin_path",
                                       "log",
                                       "log.format",
                                       "log.level",
                                       "shutdown",
                                       "shutdown.drain",
                                       "plugins",
                                       "pools",
                                       "worker",
                                       "size",
                                       "min",
                                       "max",
                                       "mailbox",
                                       "args",
                                       "restart",
                                       "restart.max",
                                       "restart.within",
                                       "restart.backoff"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        char row[64];
        snprintf(row, sizeof row, "\n  %-24s ", keys[i]);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, row));
        if (strstr(out, row) == NULL)
            fprintf(stderr, "\n    no row for %s\n", keys[i]);
    }
    free(out);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"help", test_help},
        {NULL, NULL},
    };
    return shoal_test_run("config_help", cases);
}
