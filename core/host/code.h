/* code.h - what a pool's workers run: a plugin module and the args their
 * init reads, held together.
 *
 * The host makes one for every pool it starts and every worker swap. The
 * pool's record holds it while the pool may start workers from it, and
 * every worker holds it while it lives (shoal_pool_hold_t): the module
 * stays mapped and the args tree stays readable exactly as long as some
 * actor can run that code -- after a swap, until the last old worker has
 * ended -- and no longer. The args are a copy of the config's `args:`
 * subtree, so the config generation they came from can be freed at once.
 * A pull pool's source (its module and `source_args:`) is held with the
 * workers' code, by the same hold: the pool spec has one.
 */
#ifndef SHOAL_HOST_CODE_H
#define SHOAL_HOST_CODE_H

#include "host/loader.h"
#include "host/node.h"
#include "pool/pool.h"

typedef struct shoal_code_s shoal_code_t;

/* Takes a reference on m and copies args (may be NULL); the caller holds
 * the one reference. NULL on ENOMEM. */
shoal_code_t *shoal__code_new(shoal_module_t *m, const shoal_node_t *args);
/* The copy of the args, for the workers' init (NULL if there were none). */
const shoal_node_t *shoal__code_args(const shoal_code_t *c);
/* A pull pool's source runs from c too: takes a reference on m and copies
 * args (may be NULL), both held as long as c is. Once, before c is shared.
 * SHOAL_OK or SHOAL_ENOMEM (then c is unchanged). */
int shoal__code_set_source(shoal_code_t *c, shoal_module_t *m, const shoal_node_t *args);
/* The copy of the source's args, for its init (NULL if there were none). */
const shoal_node_t *shoal__code_source_args(const shoal_code_t *c);
/* The hold a pool takes on c: each acquire is a reference, each release
 * drops one. */
shoal_pool_hold_t shoal__code_hold(shoal_code_t *c);
/* Drops the caller's reference: the last frees the args and releases the
 * module. Any thread. */
void shoal__code_release(shoal_code_t *c);

#endif
