/* xs50.h - the per-message work of the peer harness's W1 (its spec):
 * shared by shoal-bench and the bench plugin (plugin/benchpool.c), which
 * does it in an isolated pool's child process. */
#ifndef SHOAL_BENCH_XS50_H
#define SHOAL_BENCH_XS50_H

#include <stdint.h>

/* 50 rounds of xorshift32 (13, 17, 5). */
static inline uint32_t xs50(uint64_t v)
{
    uint32_t s = (uint32_t)(v + 1);
    for (int i = 0; i < 50; i++) {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
    }
    return s;
}

#endif
