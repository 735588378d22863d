/* fuzz_chan.h - what the two files of the fuzz_chan target share
 * (fuzz_chan.c: the input, the model, the checks and the target;
 * fuzz_chan_child.c: the child's scribbling): the region's layout as chan.c
 * lays it out, CHECK, an input being read, one input's world, and the
 * functions each file calls from the other. */
#ifndef SHOAL_TEST_FUZZ_CHAN_H
#define SHOAL_TEST_FUZZ_CHAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "ipc/chan.h"
#include "pool/pool.h"
#include "pool/remote.h"
#include "pool/remote_child.h"

/* The region as chan.c lays it out (its LAYOUT; checked once, layout_ok):
 * a header page -- each ring's control block at CTL + i * CTL_STRIDE, its
 * tail first, its head a cache line on, then sleeping -- then ring 0
 * (parent -> child) and ring 1 (child -> parent), then the user area. */
#define RING ((uint64_t)64 * 1024)
#define PAGE 4096u
#define CTL 64u
#define CTL_STRIDE 128u
#define TAIL_AT(i) (CTL + (i)*CTL_STRIDE)
#define HEAD_AT(i) (CTL + (i)*CTL_STRIDE + 64u)
#define SLEEPING_AT(i) (CTL + (i)*CTL_STRIDE + 72u)
#define RING_AT(i) (PAGE + (i)*RING)
#define LEN_MAX SHOAL_CHAN_LEN_MAX(RING)
#define NSTRIPES 2u
#define MODEL_MAX (RING / SHOAL_CHAN_RECORD_HDR + 1)

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* ---- the input (fuzz_chan.c) ---------------------------------------------------- */

typedef struct input_s {
    const uint8_t *p;
    size_t n;
} input_t;

/* The next `bytes` bytes of the input, little-endian (0 past its end). */
uint64_t fc_take(input_t *in, unsigned bytes);

/* ---- the model of a ring the child left alone (fuzz_chan.c) ---------------------- */

typedef struct rec_s {
    uint32_t tag, len;
    uint64_t sum; /* of its bytes */
} rec_t;

typedef struct model_s {
    bool clean; /* the child never wrote over this ring or its control words */
    rec_t q[MODEL_MAX];
    size_t first, n;
    uint64_t used;   /* bytes the records take */
    uint64_t head;   /* the consumer's, as far as we know */
    uint64_t peeked; /* the size of the record its last peek gave, 0 if none */
} model_t;

/* ---- one input's world (fuzz_chan.c) ------------------------------------------------ */

typedef struct world_s {
    shoal_chan_t *p, *c;   /* the parent's side, the child's */
    int cfd[3];            /* the child's descriptors (its chan owns them) */
    unsigned char *region; /* the whole region, through the child's mapping */
    uint64_t total;
    model_t m[2]; /* ring 0: parent -> child; ring 1: child -> parent */
    bool p_broken, c_broken, p_out_broken, c_out_broken;
    bool handed, bell_shut;
    /* the isolated pool around the channel */
    shoal_pool_t *pool;
    shoal_remote_t *r;
    child_t *child;
} world_t;

/* The 8 bytes at `at` in the region. */
uint64_t fc_load64(const world_t *w, uint64_t at);

/* ---- the child's scribbling (fuzz_chan_child.c) ------------------------------------ */

/* Any bytes anywhere in the region. */
void fc_poke(world_t *w, input_t *in);
/* A control word (tail, head or sleeping of either ring): any value, or one
 * near its own or the other's, where the checks are. */
void fc_word(world_t *w, input_t *in);
/* A record header forged at or near the consumer's head of a ring: its stamp
 * right or nearly, its length small, at the limit, or anything. */
void fc_forge(world_t *w, input_t *in);
/* The child's doorbell ends: rung without records, made blocking, shut;
 * and the parent's looks at its own. */
void fc_bell(world_t *w, input_t *in);
/* The child's own side attached again to the region as it is now: the
 * header checked (attach), or refused. */
void fc_reattach(world_t *w);

#endif
