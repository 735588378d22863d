/* test_hash.c - the hash of names (runtime/hash.c): SipHash-2-4 against
 * its reference vectors, the name hash keyed (not the bare function under
 * a fixed key), and names made to collide under FNV-1a -- the unkeyed
 * hash the tables had, for which 32,768 keys of one hash held shoald's
 * thread 8 s in a mapping -- spread out under it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/hash.h"
#include "support.h"

/* The reference vectors (the SipHash paper, appendix A, and its
 * implementation's vectors.h): key 00 01 .. 0f, message 00 01 .. n-1. */
static void reference_vectors(void)
{
    const uint64_t k0 = 0x0706050403020100ull, k1 = 0x0f0e0d0c0b0a0908ull;
    unsigned char m[64];
    for (unsigned i = 0; i < sizeof m; i++)
        m[i] = (unsigned char)i;
    CU_ASSERT_EQUAL(shoal__siphash(k0, k1, m, 0), 0x726fdb47dd0e0e31ull);
    CU_ASSERT_EQUAL(shoal__siphash(k0, k1, m, 1), 0x74f839c593dc67fdull);
    CU_ASSERT_EQUAL(shoal__siphash(k0, k1, m, 7), 0xab0200f58b01d137ull);
    CU_ASSERT_EQUAL(shoal__siphash(k0, k1, m, 8), 0x93f5f5799a932462ull);
    CU_ASSERT_EQUAL(shoal__siphash(k0, k1, m, 15), 0xa129ca6149be45e5ull);
    CU_ASSERT_EQUAL(shoal__siphash(k0, k1, m, 63), 0x958a324ceb064572ull);
}

/* A name's hash is SipHash under a key of the process's: not under the
 * zero key, the same for the same name every time. */
static void name_hash_keyed(void)
{
    const char *names[] = {"", "api", "pool-1", "a much longer name than sixteen bytes"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        uint64_t h = shoal__name_hash(names[i]);
        CU_ASSERT_EQUAL(h, shoal__name_hash(names[i]));
        CU_ASSERT_NOT_EQUAL(h, shoal__siphash(0, 0, names[i], strlen(names[i])));
    }
}

static uint32_t fnv1a(uint32_t h, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

#define STAGES 12 /* 2^12 names of one FNV-1a hash */
#define BLOCK 6

/* Try c's block: 6 characters from the top of c times an odd constant
 * (so that every character varies from the first tries on: with c's own
 * low bits only the first three did, and FNV-1a maps those one to one). */
static void block_of(uint32_t c, char s[BLOCK])
{
    static const char al[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-";
    uint64_t x = (uint64_t)c * 0x9E3779B97F4A7C15ull >> 28;
    for (int i = 0; i < BLOCK; i++, x >>= 6)
        s[i] = al[x & 63];
}

/* Joux's multicollision: at each stage, two 6-byte blocks that take the
 * state to the same value (a birthday search); a name is one of the two at
 * each stage. pair[k][0..1] get the blocks. */
static void fnv_pairs(char pair[STAGES][2][BLOCK + 1])
{
    const size_t slots = (size_t)1 << 19;
    uint32_t *val = malloc(slots * sizeof *val);
    uint32_t *tried = malloc(slots * sizeof *tried); /* the try's number + 1; 0: empty */
    CU_ASSERT_PTR_NOT_NULL_FATAL(val);
    CU_ASSERT_PTR_NOT_NULL_FATAL(tried);
    uint32_t h = 2166136261u;
    for (int k = 0; k < STAGES; k++) {
        memset(tried, 0, slots * sizeof *tried);
        for (uint32_t c = 0; c < slots / 2; c++) { /* ~82,000 tries expected */
            char s[BLOCK];
            block_of(c, s);
            uint32_t v = fnv1a(h, s, BLOCK);
            size_t at = (v * 2654435761u) & (slots - 1);
            while (tried[at] != 0 && val[at] != v)
                at = (at + 1) & (slots - 1);
            if (tried[at] != 0) {
                block_of(tried[at] - 1, pair[k][0]);
                memcpy(pair[k][1], s, BLOCK);
                pair[k][0][BLOCK] = pair[k][1][BLOCK] = '\0';
                h = v;
                break;
            }
            tried[at] = c + 1;
            val[at] = v;
        }
        CU_ASSERT_FATAL(pair[k][0][0] != '\0'); /* found within the table's half */
    }
    free(val);
    free(tried);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* 4,096 names that FNV-1a maps to one value (checked): under the name
 * hash they are 4,096 values, and in a table of 8,192 slots (half full,
 * as the tables keep it) no slot is home to more than a handful. */
static void fnv_collisions_spread(void)
{
    static char pair[STAGES][2][BLOCK + 1];
    fnv_pairs(pair);
    enum { N = 1 << STAGES };
    static uint64_t h[N];
    static unsigned home[2 * N];
    uint32_t fnv = 0;
    int same = 0;
    for (unsigned m = 0; m < N; m++) {
        char name[STAGES * BLOCK + 1];
        for (int k = 0; k < STAGES; k++)
            memcpy(name + k * BLOCK, pair[k][(m >> k) & 1], BLOCK);
        name[STAGES * BLOCK] = '\0';
        uint32_t f = fnv1a(2166136261u, name, STAGES * BLOCK);
        if (m == 0)
            fnv = f;
        same += f == fnv;
        h[m] = shoal__name_hash(name);
        home[h[m] & (2 * N - 1)]++;
    }
    CU_ASSERT_EQUAL(same, N); /* the input is what an attacker would write */
    qsort(h, N, sizeof h[0], cmp_u64);
    int equal = 0;
    for (unsigned i = 1; i < N; i++)
        equal += h[i] == h[i - 1];
    CU_ASSERT_EQUAL(equal, 0);
    unsigned most = 0;
    for (unsigned i = 0; i < 2 * N; i++)
        most = home[i] > most ? home[i] : most;
    /* Random homes: the fullest of 8,192 holds ~6 of 4,096 names (a slot
     * with 16 has odds under 10^-9); under FNV-1a one slot held all. */
    CU_ASSERT(most < 16);
    printf("\n    4096 names of one FNV-1a hash: at most %u share a home of 8192 ", most);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"SipHash-2-4 reference vectors", reference_vectors},
        {"a name's hash is keyed", name_hash_keyed},
        {"names that collide under FNV-1a spread", fnv_collisions_spread},
        {NULL, NULL},
    };
    return shoal_test_run("hash", cases);
}
