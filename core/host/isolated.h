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

#endif
