/* fuzz_chan_child.c - the fuzz_chan target's hostile child (fuzz_chan.c
 * runs the input): what it writes into the channel's shared region from its
 * own mapping -- raw bytes anywhere, the rings' control words, record
 * headers forged at a consumer's head -- what it does with its doorbell
 * ends, and its side attached again to the region as it is then. Each
 * write that reaches a ring or its control words marks that ring's model
 * no longer clean (the checks then keep to what chan.h promises whatever
 * the child wrote). */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include "fuzz_chan.h"
#include "ipc/chan.h"
#include "shoal/shoal.h"

/* ---- the child's scribbling ------------------------------------------------------- */

static void store64(world_t *w, uint64_t at, uint64_t v) { memcpy(w->region + at, &v, sizeof v); }

/* The child wrote at [at, at + n): the rings it touched are no longer what
 * was sent (the header page holds both rings' control words). */
static void scribbled(world_t *w, uint64_t at, uint64_t n)
{
    if (n == 0)
        return;
    if (at < PAGE || (at < RING_AT(1) && at + n > RING_AT(0)))
        w->m[0].clean = false;
    if (at < PAGE || (at < RING_AT(1) + RING && at + n > RING_AT(1)))
        w->m[1].clean = false;
}

void fc_poke(world_t *w, input_t *in)
{
    uint64_t at = fc_take(in, 3) % w->total;
    size_t n = fc_take(in, 1) % 33;
    if (n > w->total - at)
        n = w->total - at;
    scribbled(w, at, n);
    for (size_t k = 0; k < n; k++)
        w->region[at + k] = (unsigned char)fc_take(in, 1);
}

/* A control word (tail, head or sleeping of either ring): any value, or one
 * near its own or the other's, where the checks are. */
void fc_word(world_t *w, input_t *in)
{
    uint8_t how = (uint8_t)fc_take(in, 1);
    unsigned ri = how & 1;
    uint64_t at = (how >> 1) % 3 == 0   ? TAIL_AT(ri)
                  : (how >> 1) % 3 == 1 ? HEAD_AT(ri)
                                        : SLEEPING_AT(ri);
    int64_t delta = (int16_t)fc_take(in, 2);
    uint64_t v;
    switch ((how >> 3) % 4) {
    case 0:
        v = fc_take(in, 8);
        break;
    case 1:
        v = fc_load64(w, at) + (uint64_t)delta;
        break;
    case 2:
        v = fc_load64(w, at == TAIL_AT(ri) ? HEAD_AT(ri) : TAIL_AT(ri)) + (uint64_t)delta;
        break;
    default:
        v = fc_load64(w, at == TAIL_AT(ri) ? HEAD_AT(ri) : TAIL_AT(ri)) +
            (how & 0x80 ? RING : -RING) + (uint64_t)delta;
        break;
    }
    if (at == SLEEPING_AT(ri)) {
        uint32_t s = (uint32_t)v;
        memcpy(w->region + at, &s, sizeof s);
    } else {
        store64(w, at, v);
    }
    w->m[ri].clean = false;
}

/* A record header forged at or near the consumer's head of a ring: its stamp
 * right or nearly, its length small, at the limit, or anything. */
void fc_forge(world_t *w, input_t *in)
{
    uint8_t how = (uint8_t)fc_take(in, 1);
    unsigned ri = how & 1;
    uint64_t pos = w->m[ri].head + (uint64_t)((int8_t)fc_take(in, 1) * 8);
    uint64_t stamp = pos + 1 + (uint64_t)(int64_t)((int8_t)fc_take(in, 1) * ((how & 2) != 0));
    if ((how & 0x0c) == 0x0c)
        stamp = fc_take(in, 8);
    uint32_t len;
    switch ((how >> 4) % 4) {
    case 0:
        len = (uint32_t)fc_take(in, 1);
        break;
    case 1:
        len = (uint32_t)(LEN_MAX + (uint64_t)(int64_t)(int8_t)fc_take(in, 1));
        break;
    case 2:
        len = (uint32_t)(SHOAL_CHAN_RECORD_MAX + (uint64_t)(int64_t)(int8_t)fc_take(in, 1));
        break;
    default:
        len = (uint32_t)fc_take(in, 4);
        break;
    }
    uint32_t tag = (uint32_t)fc_take(in, 1);
    unsigned char hdr[16];
    memcpy(hdr, &stamp, 8);
    memcpy(hdr + 8, &len, 4);
    memcpy(hdr + 12, &tag, 4);
    for (unsigned k = 0; k < sizeof hdr; k++)
        w->region[RING_AT(ri) + ((pos + k) & (RING - 1))] = hdr[k];
    w->m[ri].clean = false;
}

/* The child's doorbell ends: rung without records, made blocking, shut. */
void fc_bell(world_t *w, input_t *in)
{
    uint8_t how = (uint8_t)fc_take(in, 1);
    switch (how % 6) {
    case 0: { /* rings for nothing, many */
        char one = 1;
        for (unsigned k = 0; k < (how >> 3); k++)
            (void)send(w->cfd[2], &one, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
        break;
    }
    case 1: /* its ends blocking: not ours */
        for (int i = 1; i < 3; i++)
            (void)fcntl(w->cfd[i], F_SETFL, fcntl(w->cfd[i], F_GETFL) & ~O_NONBLOCK);
        break;
    case 2:
        if (!w->bell_shut)
            (void)shutdown(w->cfd[1 + (how >> 7)], SHUT_RDWR);
        w->bell_shut = true;
        break;
    case 3:
        shoal__chan_ring(w->c);
        shoal__chan_ring(w->p);
        break;
    case 4: { /* the parent's poll: arm, disarm */
        bool ready = shoal__chan_arm(w->p);
        unsigned got = shoal__chan_disarm(w->p);
        CHECK(got <= 64);
        if (w->p_broken)
            CHECK(!ready);
        if (w->m[1].clean)
            CHECK(ready == (w->m[1].n != 0));
        break;
    }
    default: { /* the parent's wait, no sleep; the looks */
        bool ready = shoal__chan_wait(w->p, 0, 0);
        bool pending = shoal__chan_in_pending(w->p);
        if (shoal__chan_broken(w->p))
            CHECK(!ready && !pending);
        if (w->m[1].clean)
            CHECK(ready == (w->m[1].n != 0) && pending == (w->m[1].n != 0));
        (void)shoal__chan_wake_fd(w->p);
        break;
    }
    }
}

/* The child's own side attached again to the region as it is now: the
 * header checked (attach), or refused. */
void fc_reattach(world_t *w)
{
    int fds[3] = {fcntl(w->cfd[0], F_DUPFD_CLOEXEC, 0), -1, -1};
    CHECK(fds[0] >= 0);
    shoal_chan_t *c2;
    if (shoal__chan_attach(fds, &c2) != SHOAL_OK) {
        CHECK(c2 == NULL); /* it closed fds[0] */
        return;
    }
    size_t user;
    (void)shoal__chan_user(c2, &user);
    CHECK(PAGE + 2 * RING + user == w->total);
    uint64_t ring;
    CHECK(shoal__chan_out_free(c2, &ring) <= ring && ring == RING);
    uint32_t tag;
    const void *d;
    size_t len;
    if (shoal__chan_peek(c2, &tag, &d, &len) == SHOAL_OK)
        CHECK(len <= LEN_MAX);
    shoal__chan_destroy(c2);
}
