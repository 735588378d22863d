/* chan_kit.c - the channel suites' pair and forked child (chan_kit.h). */
#include "chan_kit.h"

#include <unistd.h>

void cn_pair(size_t ring, size_t user, shoal_chan_t **parent, shoal_chan_t **child)
{
    CU_ASSERT_EQUAL_FATAL(shoal__chan_create(ring, user, parent), SHOAL_OK);
    int fds[3], dups[3];
    shoal__chan_fds(*parent, fds);
    for (int i = 0; i < 3; i++)
        dups[i] = dup(fds[i]);
    CU_ASSERT_EQUAL_FATAL(shoal__chan_attach(dups, child), SHOAL_OK);
}

pid_t cn_fork_child(shoal_chan_t *p, int (*body)(const int fds[3]))
{
    int fds[3];
    shoal__chan_fds(p, fds);
    pid_t pid = fork();
    if (pid == 0) {
        int mine[3] = {dup(fds[0]), dup(fds[1]), dup(fds[2])};
        _exit(body(mine));
    }
    return pid;
}
