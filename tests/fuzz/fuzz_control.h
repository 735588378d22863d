/* fuzz_control.h - what the two files of the fuzz_control target share
 * (fuzz_control.c: the clients, the server's loop, the answers' checks and
 * the target; fuzz_control_host.c: the host behind the control socket, made
 * once, and its files): the host and its control socket, the files diff
 * PATH reads, and the functions each file calls from the other. */
#ifndef SHOAL_TEST_FUZZ_CONTROL_H
#define SHOAL_TEST_FUZZ_CONTROL_H

#include <stdbool.h>

#include "host/control.h"
#include "host/host.h"

#define NDIFF 9 /* the host's config, five YAML files, a missing file, the directory, a FIFO */

extern shoal_host_t *fctl_host;       /* NULL until fctl_setup */
extern shoal_control_t *fctl_control; /* the host's control socket */
extern bool fctl_stopping;            /* it serves as shoald does while stopping */
extern char fctl_sock[96];            /* its path */
extern char fctl_diffs[NDIFF][128];   /* what diff PATH reads instead of PATH */

/* Says what and detail on stderr and aborts: a finding. */
void fctl_fail(const char *what, const char *detail);
/* The host, its files and its control socket, made once (the first input). */
void fctl_setup(void);
/* The control socket opened (again), not stopping. */
void fctl_control_up(void);
/* Puts back what scale changed. */
void fctl_reshape(void);

#endif
