/* remote_calls.c - the calls an isolated pool's children hold (remote.h:
 * CALLS): one table per pool, (caller, ref) -> the child it was copied to,
 * so that a child that ends leaves no caller waiting, and a child answers
 * only the calls it was given, once each.
 *
 * PROTOCOL. Everything here is under the pool's calls_lock: the table, and
 * each child's calls_closed and calls_status.
 *   sender      (shoal__remote_forward, a call; remote.c) after its count
 *               in c's `pushed` (CLOSED not set, or it pushes nothing),
 *               writes (caller, ref, c) in, then copies the call into c's
 *               ring; a copy refused takes it out again and takes its
 *               count back (shoal__remote_call_refuse).
 *   supervisor  a REPLY from c takes (to, ref, c) out: delivered if it was
 *               there, else dropped.
 *   caller      timed out (shoal__call_gone): (caller, ref) is taken out.
 *   burial      (shoal__remote_close) sets CLOSED in c's `pushed`, marks c
 *               closed, answers every call of c's in the table and takes it
 *               out, in one hold of the lock.
 * A sender's count came before CLOSED in `pushed`'s order, so the burial
 * counted its call as held. Then either the call was in the table at the
 * burial, which answers it; or the sender finds c closed when it writes it
 * in or takes it back, and it stands as sent (SHOAL_OK), answered by the
 * sender if the burial did not see it; or the sender took it out and its
 * count back before the burial (which is under the same lock, so CLOSED
 * cannot come between them), and the call was refused. One answer, never
 * two, never none. The lock orders nothing else: the call's copy into the
 * ring, and the reply's way back, are the channel's (ipc/chan.c).
 *
 * Casts never come here: the senders' fast path is remote.c's alone.
 *
 * THE TABLE. Open addressing, linear probing, at most half full, deletion
 * by backward shift (no tombstones: a probe ends at the first free slot).
 * It grows by doubling, from 64 slots, up to SHOAL_REMOTE_CALLS_MAX calls
 * (twice as many slots), and never shrinks: its memory is bounded, not
 * given back.
 */
#include <stdlib.h>

#include "actor/send.h"
#include "pool/remote_child.h"
#include "runtime/runtime.h"

#define SLOTS_MIN 64u

static uint32_t hash_of(uint64_t caller, uint64_t ref)
{
    uint64_t h = caller * UINT64_C(0x9e3779b97f4a7c15) ^ ref;
    h ^= h >> 31;
    h *= UINT64_C(0xd6e8feb86659fd93);
    h ^= h >> 32;
    return (uint32_t)h;
}

/* Puts v in the first free slot from its own (there is one). */
static void put(remote_call_t *t, uint32_t mask, remote_call_t v)
{
    uint32_t i = hash_of(v.caller, v.ref) & mask;
    while (t[i].child != NULL)
        i = (i + 1) & mask;
    t[i] = v;
}

/* Frees slot i: the calls after it in its run move back over it if their
 * own slot allows, so that every probe still finds them. */
static void take_at(shoal_remote_t *r, uint32_t i)
{
    remote_call_t *t = r->calls;
    uint32_t mask = r->calls_cap - 1;
    for (uint32_t j = (i + 1) & mask; t[j].child != NULL; j = (j + 1) & mask) {
        uint32_t home = hash_of(t[j].caller, t[j].ref) & mask;
        /* It stays if its own slot is cyclically in (i, j]. */
        bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
        if (!stays) {
            t[i] = t[j];
            i = j;
        }
    }
    t[i].child = NULL;
    r->calls_n--;
}

/* The slot of (caller, ref) -- c's if c is not NULL -- or -1. */
static int64_t find(const shoal_remote_t *r, uint64_t caller, uint64_t ref, const child_t *c)
{
    if (r->calls_n == 0)
        return -1;
    uint32_t mask = r->calls_cap - 1;
    for (uint32_t i = hash_of(caller, ref) & mask; r->calls[i].child != NULL; i = (i + 1) & mask)
        if (r->calls[i].caller == caller && r->calls[i].ref == ref &&
            (c == NULL || r->calls[i].child == c))
            return i;
    return -1;
}

/* Room for one more (grown if need be): false at SHOAL_REMOTE_CALLS_MAX,
 * or without memory. */
static bool room(shoal_remote_t *r)
{
    if ((r->calls_n + 1) * 2 <= r->calls_cap)
        return true;
    if (r->calls_n >= SHOAL_REMOTE_CALLS_MAX)
        return false;
    uint32_t cap = r->calls_cap != 0 ? r->calls_cap * 2 : SLOTS_MIN;
    remote_call_t *t = calloc(cap, sizeof *t);
    if (t == NULL)
        return false;
    for (uint32_t i = 0; i < r->calls_cap; i++)
        if (r->calls[i].child != NULL)
            put(t, cap - 1, r->calls[i]);
    free(r->calls);
    r->calls = t;
    r->calls_cap = cap;
    return true;
}

/* Answers caller's call `ref` with `status`, from the pool. */
static void answer(shoal_remote_t *r, shoal_tcache_t *tc, shoal_pid_t caller, shoal_ref_t ref,
                   int status)
{
    shoal_env_t *e = shoal__env_new(tc, SHOAL_MSG_REPLY, SHOAL_ENV_STATUS, r->p->g.pid, ref,
                                    (uint32_t)status, NULL, 0);
    if (e != NULL && shoal__deliver(r->rt, tc, caller, e, true) == SHOAL_OK)
        return;
    if (e != NULL)
        shoal__env_free(tc, e);
    SHOAL_STAT_ADD(tc, replies_late, 1); /* its caller is gone (or no memory) */
}

bool shoal__remote_call_hold(shoal_remote_t *r, child_t *c, shoal_pid_t caller, shoal_ref_t ref)
{
    pthread_mutex_lock(&r->calls_lock);
    bool held = !c->calls_closed && room(r);
    if (held) {
        put(r->calls, r->calls_cap - 1, (remote_call_t){.caller = caller, .ref = ref, .child = c});
        r->calls_n++;
    }
    pthread_mutex_unlock(&r->calls_lock);
    return held;
}

int shoal__remote_call_refuse(shoal_remote_t *r, child_t *c, shoal_tcache_t *tc, shoal_env_t *e,
                              int refused, bool held)
{
    shoal_ref_t ref = shoal__env_ref(e);
    pthread_mutex_lock(&r->calls_lock);
    bool closed = c->calls_closed;
    int status = c->calls_status;
    if (!closed) {
        int64_t i = held ? find(r, e->from, ref, c) : -1;
        if (i >= 0)
            take_at(r, (uint32_t)i);
        /* relaxed: CLOSED is set only under this lock (shoal__remote_close),
         * so the count is still ours to take back; `pushed` alone decides,
         * by its modification order, what the burial counts. */
        atomic_fetch_sub_explicit(&c->pushed, 1, memory_order_relaxed);
    }
    pthread_mutex_unlock(&r->calls_lock);
    if (!closed)
        return refused;
    /* c has ended, and its burial counted this call as held (failed, or
     * dropped): it stands as sent. Written in, the burial answered it. */
    if (!held)
        answer(r, tc, e->from, ref, status);
    shoal__env_free(tc, e);
    return SHOAL_OK;
}

bool shoal__remote_call_take(shoal_remote_t *r, child_t *c, shoal_pid_t to, shoal_ref_t ref)
{
    pthread_mutex_lock(&r->calls_lock);
    int64_t i = find(r, to, ref, c);
    if (i >= 0)
        take_at(r, (uint32_t)i);
    pthread_mutex_unlock(&r->calls_lock);
    return i >= 0;
}

void shoal__remote_call_gone(shoal_remote_t *r, uint64_t caller, uint64_t ref)
{
    pthread_mutex_lock(&r->calls_lock);
    int64_t i = find(r, caller, ref, NULL);
    if (i >= 0)
        take_at(r, (uint32_t)i);
    pthread_mutex_unlock(&r->calls_lock);
}

uint64_t shoal__remote_close(shoal_remote_t *r, child_t *c, shoal_tcache_t *tc, int status)
{
    pthread_mutex_lock(&r->calls_lock);
    /* relaxed: `pushed` alone decides, by its modification order, which
     * senders' counts came before this (remote.c, unpush); a call's count
     * is taken back only under this lock (shoal__remote_call_refuse). */
    uint64_t pushed =
        atomic_fetch_or_explicit(&c->pushed, SHOAL__REMOTE_CLOSED, memory_order_relaxed) &
        ~SHOAL__REMOTE_CLOSED;
    c->calls_closed = true;
    c->calls_status = status;
    /* Its calls, answered and taken out. A slot freed is looked at again:
     * a call after it may have moved back into it (take_at); one moved
     * from the front past the end is not c's (those were taken already). */
    for (uint32_t i = 0; i < r->calls_cap && r->calls_n != 0;) {
        if (r->calls[i].child != c) {
            i++;
            continue;
        }
        answer(r, tc, r->calls[i].caller, r->calls[i].ref, status);
        take_at(r, i);
    }
    pthread_mutex_unlock(&r->calls_lock);
    return pushed;
}

void shoal__remote_calls_free(shoal_remote_t *r)
{
    free(r->calls);
    r->calls = NULL;
    r->calls_cap = r->calls_n = 0;
}
