/* chan_kit.h - what the suites of the channel between two processes share
 * (test_chan_records, test_chan_hostile): a channel with both ends in this
 * process, and a forked child that attaches to its own copies of the
 * channel's descriptors.
 */
#ifndef SHOAL_TEST_CHAN_KIT_H
#define SHOAL_TEST_CHAN_KIT_H

#include <sys/types.h>

#include "ipc/chan.h"
#include "support.h"

#define CN_RING (64u * 1024u) /* each ring's bytes, unless a case says */

/* Both ends in this process: the child's side attached to duplicates of
 * the parent's descriptors (asserted, fatally). `user`: the user area's
 * bytes. */
void cn_pair(size_t ring, size_t user, shoal_chan_t **parent, shoal_chan_t **child);

/* A forked child that runs body on duplicates of p's descriptors and exits
 * with what it returns; its pid (-1: no fork). */
pid_t cn_fork_child(shoal_chan_t *p, int (*body)(const int fds[3]));

#endif
