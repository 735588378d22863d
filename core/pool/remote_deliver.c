/* remote_deliver.c - what an isolated pool's child sends back, as its
 * supervisor thread delivers it (remote_supervisor.c): replies to the calls
 * it holds, sends into this runtime (a refused one counted and said:
 * remote.h, SENDS), a broken channel (the child is stopped, once); and the
 * look for room for the pool's waiting producers (remote.h: ROOM). The
 * supervisor's thread only.
 */
#include <inttypes.h>
#include <signal.h>
#include <string.h>

#include "actor/call.h"
#include "actor/room.h"
#include "actor/send.h"
#include "pool/pool.h"
#include "pool/remote_child.h"
#include "runtime/runtime.h"

/* REFUSED SENDS (remote.h: SENDS). A message a child's worker sent to an
 * actor here that the actor refused is dropped and counted; the first of a
 * burst is logged at once, the rest of it (sends_say) once a second --
 * after the line before -- while it goes on, and when the child ends. */
#define SENDS_SAY_NS 1000000000ull

void shoal__remote_sends_say(shoal_remote_t *r, child_t *c, bool ending)
{
    uint64_t now = shoal__now_ns();
    if (c->sends_unsaid == 0 || (!ending && now - c->sends_said_ns < SENDS_SAY_NS))
        return;
    shoal__log(r->rt, SHOAL_LOG_WARN, r->p->g.pid, r->p->name,
               "isolated worker process %d: %" PRIu64
               " more message%s its workers sent %s refused here and dropped (the last, to "
               "<%" PRIu32 ".%" PRIu32 ">: %s)",
               (int)c->pid, c->sends_unsaid, c->sends_unsaid == 1 ? "" : "s",
               c->sends_unsaid == 1 ? "was" : "were", shoal__pid_slot(c->sends_last_to),
               shoal__pid_gen(c->sends_last_to), shoal_errname(c->sends_last_rc));
    c->sends_unsaid = 0;
    c->sends_said_ns = now;
}

static void send_refused(shoal_remote_t *r, child_t *c, shoal_pid_t to, int rc)
{
    atomic_fetch_add_explicit(&r->sends_dropped, 1, memory_order_relaxed);
    c->sends_last_to = to;
    c->sends_last_rc = rc;
    uint64_t now = shoal__now_ns();
    if (c->sends_unsaid != 0 || now - c->sends_said_ns < SENDS_SAY_NS) {
        c->sends_unsaid++; /* in a burst: said with the rest of it */
        return;
    }
    shoal__log(r->rt, SHOAL_LOG_WARN, r->p->g.pid, r->p->name,
               "isolated worker process %d sent a message to <%" PRIu32 ".%" PRIu32
               "> that was refused here (%s): dropped (its worker was told SHOAL_OK)",
               (int)c->pid, shoal__pid_slot(to), shoal__pid_gen(to), shoal_errname(rc));
    c->sends_said_ns = now;
}

/* Messages the child sent back: replies and sends into this runtime; 4096
 * at most, or, once it has ended (all), every one its ring holds -- its
 * replies before its burial answers the calls it held -- bounded by what
 * the ring can hold (whoever may still write into it). */
size_t shoal__remote_deliver(shoal_remote_t *r, child_t *c, shoal_tcache_t *tc, bool all)
{
    uint32_t tag;
    const void *data;
    size_t len;
    size_t n = 0, most = all ? c->ring_bytes / SHOAL_CHAN_RECORD_HDR : 4096;
    while (n < most && shoal__chan_peek(c->chan, &tag, &data, &len) == SHOAL_OK) {
        n++;
        shoal_remote_msg_t m;
        if (tag == SHOAL_REMOTE_ROOM)
            c->room_armed = false; /* it answered: the look after this arms it again */
        if (tag == SHOAL_REMOTE_STATUS || tag == SHOAL_REMOTE_ROOM || len < sizeof m) {
            shoal__chan_consume(c->chan);
            continue;
        }
        memcpy(&m, data, sizeof m);
        const unsigned char *payload = (const unsigned char *)data + sizeof m;
        size_t size = len - sizeof m;
        if (tag == SHOAL_REMOTE_REPLY && !shoal__remote_call_take(r, c, m.to, m.ref)) {
            /* It answers no call this child holds (remote.h: CALLS). */
            SHOAL_STAT_ADD(tc, replies_late, 1);
        } else if (tag == SHOAL_REMOTE_REPLY) {
            bool status = (m.flags & SHOAL_REMOTE_MSG_STATUS) != 0;
            shoal_env_t *e =
                shoal__env_new(tc, SHOAL_MSG_REPLY, status ? SHOAL_ENV_STATUS : 0, r->p->g.pid,
                               m.ref, m.type, status ? NULL : payload, status ? 0 : size);
            if (e != NULL && shoal__deliver(r->rt, tc, m.to, e, true) != SHOAL_OK) {
                shoal__env_free(tc, e);
                SHOAL_STAT_ADD(tc, replies_late, 1);
            }
        } else if (tag == SHOAL_REMOTE_SEND) {
            int sent = shoal__send(r->rt, tc, r->p->g.pid, m.to, m.type, payload, size,
                                   (m.flags & SHOAL_REMOTE_MSG_PRIORITY) != 0, NULL, NULL);
            if (sent != SHOAL_OK)
                send_refused(r, c, m.to, sent);
        }
        shoal__chan_consume(c->chan);
    }
    /* A broken channel (either ring): nothing more comes from it, and
     * nothing more goes into it. The child is killed, whatever its role --
     * a retiring one's drain may last 24 h -- once, and said once; its
     * end comes through its pidfd as any other. */
    if ((shoal__chan_broken(c->chan) || shoal__chan_out_broken(c->chan)) && !c->nonsense) {
        c->nonsense = true;
        shoal__log(r->rt, SHOAL_LOG_ERROR, r->p->g.pid, r->p->name,
                   "isolated worker process %d wrote nonsense into its channel: stopped",
                   (int)c->pid);
        kill(c->pid, SIGKILL);
    }
    return n;
}

/* The look (remote.h: ROOM), after every wake: with someone waiting on
 * the pool, room in the current child tells them; none arms that child. */
void shoal__remote_room_look(shoal_remote_t *r, shoal_tcache_t *tc)
{
    shoal_pid_t pool = r->p->g.pid;
    const shoal_actor_t *a = shoal__actor_at(r->rt, shoal__pid_slot(pool));
    /* relaxed: an asker listed after this load wakes us again (CMD_ROOM,
     * under the lock) once it has looked itself. */
    if (!(atomic_load_explicit(&a->limit, memory_order_relaxed) & SHOAL_LIMIT_ROOM))
        return;
    /* relaxed: we are the one who publishes it. */
    child_t *c = atomic_load_explicit(&r->cur, memory_order_relaxed);
    if (c == NULL)
        return; /* none up: looked at again when one is published */
    uint64_t at;
    if (shoal__remote_child_room(r, c, &at)) {
        shoal__room_tell(r->rt, tc, pool, SHOAL_OK);
        return;
    }
    if (c->room_armed && c->room_at == at)
        return; /* armed for this already */
    c->room_armed = true;
    c->room_at = at;
    atomic_store_explicit(&c->area->room_at, at, memory_order_relaxed);
    /* release: pairs with the bridge's acquire of room_seq (it reads
     * room_at after the new seq). */
    atomic_fetch_add_explicit(&c->area->room_seq, 1, memory_order_release);
    /* And a record, to wake it: a child asleep on its ring looks for
     * records before it sleeps, not at the words (a ring that is full keeps
     * it awake anyway). */
    if (shoal__chan_send(c->chan, SHOAL_REMOTE_ROOM, NULL, 0, NULL, 0, true) != SHOAL_OK)
        shoal__chan_ring(c->chan);
}
