/* num.h - a number as a word of a command line or a control request:
 * digits only (no sign, no space), in base 10, or base 0 (hex after 0x, as
 * a message type is written), at most max. The one parse shoalctl and the
 * control socket share, so both read `type=0xFFFF0001` or a timeout alike;
 * and scale's bounds, MIN..MAX, which both refuse with the same words.
 */
#ifndef SHOAL_HOST_NUM_H
#define SHOAL_HOST_NUM_H

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Whether s is a pool's bounds, MIN..MAX (0 <= MIN <= MAX, 1 <= MAX <=
 * limit, base 10), into *min and *max. When it is not: why says what is
 * wrong with it, or is "" when s has no ".." (then it may be a plain N). */
static inline bool shoal__num_bounds(const char *s, uint64_t limit, uint32_t *min, uint32_t *max,
                                     char *why, size_t size)
{
    const char *dots = s != NULL ? strstr(s, "..") : NULL;
    char lo_text[24];
    uint64_t lo, hi;
    why[0] = '\0';
    if (dots == NULL)
        return false;
    size_t n = (size_t)(dots - s);
    snprintf(lo_text, sizeof lo_text, "%.*s", (int)(n < sizeof lo_text ? n : sizeof lo_text - 1),
             s);
    if (n >= sizeof lo_text || !shoal__num_parse(lo_text, 10, UINT64_MAX, &lo) ||
        !shoal__num_parse(dots + 2, 10, UINT64_MAX, &hi)) {
        snprintf(why, size,
                 "MIN..MAX takes two numbers of workers, the fewest and the most (e.g. 2..16), "
                 "not '%s'",
                 s);
        return false;
    }
    if (hi == 0 || hi > limit || lo > limit) {
        snprintf(
            why, size, "%s %" PRIu64 " is out of range: MIN is 0 to %" PRIu64 ", MAX 1 to %" PRIu64,
            hi == 0 || hi > limit ? "MAX" : "MIN", hi == 0 || hi > limit ? hi : lo, limit, limit);
        return false;
    }
    if (lo > hi) {
        snprintf(why, size,
                 "MIN %" PRIu64 " is above MAX %" PRIu64 " (the fewest workers first: %" PRIu64
                 "..%" PRIu64 ")",
                 lo, hi, hi, lo);
        return false;
    }
    *min = (uint32_t)lo;
    *max = (uint32_t)hi;
    return true;
}

#endif
