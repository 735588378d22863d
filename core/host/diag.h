/* diag.h - a human-readable error with the place it comes from. The caller
 * owns it; functions that can fail for a reason a person must read (config,
 * loader, args) fill one. */
#ifndef SHOAL_HOST_DIAG_H
#define SHOAL_HOST_DIAG_H

#include <stdint.h>

#include "shoal/types.h"

typedef struct shoal_diag_s {
    char file[512]; /* empty when not about a file */
    uint32_t line;  /* 0 when unknown */
    uint32_t col;
    char msg[512];
} shoal_diag_t;

/* Sets the diagnostic; file may be NULL. */
void shoal__diag_set(shoal_diag_t *d, const char *file, uint32_t line, uint32_t col,
                     const char *fmt, ...) SHOAL_PRINTF(5, 6);

/* "file:line:col: msg" (or the parts that are known) into buf, on one line:
 * control characters escaped as a log line's (shoal__log_clean). */
const char *shoal__diag_format(const shoal_diag_t *d, char *buf, size_t size);

#endif
