/* isolated.h - `isolation: process`: the host's part of a pool whose workers
 * run in a child process (the pool's part is pool/remote.h).
 *
 * The parent starts each child by fork and exec of its own executable
 * (shoald --isolated-worker), handing it five descriptors at fixed numbers:
 * the channel (3: region, 4 and 5: doorbells), the plugin's private copy
 * (6: the very code the parent checked) and a boot record (7: the config
 * file's text and name, the pool's name, the generation, the log format).
 * The child parses the same text under the same name -- an args error
 * there names the same file:line:col -- keeps only its pool, runs it in a
 * runtime of its own with its counters in the channel's shared area, and
 * feeds it from the ring until it is told to drain, or its parent dies
 * (PR_SET_PDEATHSIG: it never outlives shoald).
 */
#ifndef SHOAL_HOST_ISOLATED_H
#define SHOAL_HOST_ISOLATED_H

#include "host/config.h"
#include "pool/remote.h"

/* How to start a child for pool cp of config c (whose text it runs): the
 * launch a pool takes over (remote.h). SHOAL_OK, or an error with why. */
int shoal__isolated_launch(const shoal_config_t *c, const shoal_config_pool_t *cp,
                           uint64_t generation, shoal_remote_launch_t *out, char *why,
                           size_t why_size);

/* The child: shoald --isolated-worker. Returns the process's exit status. */
int shoal__isolated_main(void);

/* ---- between isolated.c (the parent) and isolated_child.c ---- */

/* The descriptors a child finds at fixed numbers. */
enum {
    SHOAL__ISO_FD_CHAN = 3,
    SHOAL__ISO_FD_PLUGIN = 6,
    SHOAL__ISO_FD_BOOT = 7,
    SHOAL__ISO_FD_FIRST_FREE = 8
};

#define SHOAL__ISO_BOOT_MAGIC UINT64_C(0x6f6f626c616f6873) /* "shoalboo" */
#define SHOAL__ISO_BOOT_VERSION 2u /* 2: the area has room_seq and room_at (pool/remote.h) */

/* The boot record: this header, then the pool's name, the config file's
 * name and its text, one after the other. */
typedef struct shoal__iso_boot_s {
    uint64_t magic;
    uint32_t version;
    uint32_t log_format;
    uint32_t log_level;
    uint32_t name_len, file_len;
    uint32_t pad;
    uint64_t generation;
    uint64_t text_len;
} shoal__iso_boot_t;

#endif
