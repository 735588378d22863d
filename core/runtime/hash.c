/* hash.c - SipHash-2-4 under the process's key (hash.h). Written from the
 * algorithm's definition (Aumasson and Bernstein, 2012): four 64-bit lanes,
 * two rounds a message word, four to finish. */
#include "runtime/hash.h"

#include <pthread.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

static inline uint64_t rotl(uint64_t x, unsigned b) { return (x << b) | (x >> (64 - b)); }

#define SIPROUND(v0, v1, v2, v3)                                                                   \
    do {                                                                                           \
        v0 += v1;                                                                                  \
        v1 = rotl(v1, 13);                                                                         \
        v1 ^= v0;                                                                                  \
        v0 = rotl(v0, 32);                                                                         \
        v2 += v3;                                                                                  \
        v3 = rotl(v3, 16);                                                                         \
        v3 ^= v2;                                                                                  \
        v0 += v3;                                                                                  \
        v3 = rotl(v3, 21);                                                                         \
        v3 ^= v0;                                                                                  \
        v2 += v1;                                                                                  \
        v1 = rotl(v1, 17);                                                                         \
        v1 ^= v2;                                                                                  \
        v2 = rotl(v2, 32);                                                                         \
    } while (0)

/* The 8 bytes at p as a little-endian word, whatever the machine's order. */
static inline uint64_t le64(const unsigned char *p)
{
    uint64_t w = 0;
    for (unsigned i = 0; i < 8; i++)
        w |= (uint64_t)p[i] << (8 * i);
    return w;
}

uint64_t shoal__siphash(uint64_t k0, uint64_t k1, const void *p, size_t n)
{
    const unsigned char *in = p;
    uint64_t v0 = k0 ^ 0x736f6d6570736575ull, v1 = k1 ^ 0x646f72616e646f6dull;
    uint64_t v2 = k0 ^ 0x6c7967656e657261ull, v3 = k1 ^ 0x7465646279746573ull;
    size_t whole = n - n % 8;
    for (size_t i = 0; i < whole; i += 8) {
        uint64_t m = le64(in + i);
        v3 ^= m;
        SIPROUND(v0, v1, v2, v3);
        SIPROUND(v0, v1, v2, v3);
        v0 ^= m;
    }
    /* The last word: the bytes left, and the length's low byte on top. */
    uint64_t b = (uint64_t)n << 56;
    for (size_t i = whole; i < n; i++)
        b |= (uint64_t)in[i] << (8 * (i - whole));
    v3 ^= b;
    SIPROUND(v0, v1, v2, v3);
    SIPROUND(v0, v1, v2, v3);
    v0 ^= b;
    v2 ^= 0xff;
    for (int r = 0; r < 4; r++)
        SIPROUND(v0, v1, v2, v3);
    return v0 ^ v1 ^ v2 ^ v3;
}

static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static uint64_t key[2];

static void key_draw(void)
{
    unsigned char k[16];
    size_t got = 0;
    while (got < sizeof k) {
        ssize_t r = getrandom(k + got, sizeof k - got, 0);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    if (got < sizeof k) { /* no getrandom (an old kernel, a seccomp filter): what varies */
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        uint64_t mix[2] = {(uint64_t)t.tv_nsec ^ ((uint64_t)t.tv_sec << 32),
                           (uint64_t)getpid() ^ (uint64_t)(uintptr_t)&t};
        memcpy(k, mix, sizeof k);
    }
    key[0] = le64(k);
    key[1] = le64(k + 8);
}

uint64_t shoal__name_hash(const char *name)
{
    pthread_once(&key_once, key_draw);
    return shoal__siphash(key[0], key[1], name, strlen(name));
}
