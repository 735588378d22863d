/* num.h - a number as a word of a command line or a control request:
 * digits only (no sign, no space), in base 10, or base 0 (hex after 0x, as
 * a message type is written), at most max. The one parse shoalctl and the
 * control socket share, so both read `type=0xFFFF0001` or a timeout alike.
 */
#ifndef SHOAL_HOST_NUM_H
#define SHOAL_HOST_NUM_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

/* Whether s is such a number; *out gets it. */
static inline bool shoal__num_parse(const char *s, int base, uint64_t max, uint64_t *out)
{
    char *end;
    if (s == NULL || *s < '0' || *s > '9')
        return false;
    errno = 0;
    unsigned long long v = strtoull(s, &end, base);
    if (*end != '\0' || errno != 0 || v > max)
        return false;
    *out = v;
    return true;
}

#endif
