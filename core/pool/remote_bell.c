/* remote_bell.c - an isolated pool's child that rings its doorbell for
 * nothing, as its supervisor thread (remote_supervisor.c) tells it. The
 * supervisor's thread only.
 *
 * A DOORBELL RUNG FOR NOTHING. A child rings the doorbell (ipc/chan.h)
 * after it has put a record into its ring, when the supervisor said it
 * sleeps: at most one ring a record. Some of those come late -- the
 * supervisor had seen the record before it slept, or cleared the doorbell
 * before the ring came, and the next poll wakes at once to an empty ring
 * (a well-behaved child under heavy traffic: up to ~990 such wakes in a
 * second) -- but never more rings than records. A plugin in the child can
 * write to the doorbell's descriptor as often as it likes, though (a bug,
 * or on purpose): each datagram wakes the supervisor, which finds nothing
 * and sleeps again only to be woken at once -- a core of shoald spent on
 * it, said nowhere. So each wake counts, per child, the rings it cleared
 * (at most 64, chan.c) less the records it took: a balance that a
 * child's records keep at or below 0 (a record's credit, up to
 * BELL_CREDIT of them, pays for its ring that comes later), and rings
 * with nothing sent raise. Rings cleared while records are pending in
 * its ring are not counted (shoal__chan_in_pending: a producer between
 * its reservation and its stamp holds back the records behind it, whose
 * rings came; on a busy machine, for milliseconds): so counted, children
 * flooding shoald with sends from 4-16 workers on 2-8 threads never
 * raised it above 0 (it reached 624 with those rings counted). Past
 * BELL_EXCESS_MAX within one second (what is above 0 at a second's end
 * is forgotten), its doorbell is not
 * listened to for BELL_DEAF_NS: the supervisor looks at its ring at least
 * every SHOAL__REMOTE_DEAF_POLL_MS meanwhile (what it sends is still
 * read, ~5 ms later on average, and its death still comes through its
 * pidfd at once). Then it is listened to again, from a balance of 0.
 * Each time is counted (inspect's process_doorbell_deafened) and logged,
 * with how many times it was so far: the first at once, the next no
 * sooner than a minute after the line before. A child whose plugin sends
 * a record with every ring is never stopped this way: it costs what its
 * records cost.
 */
#include <inttypes.h>

#include "pool/remote_child.h"
#include "runtime/runtime.h"

#define BELL_WINDOW_NS 1000000000ull
#define BELL_EXCESS_MAX 1000
#define BELL_CREDIT 4096
#define BELL_DEAF_NS 1000000000ull
#define BELL_SAY_NS 60000000000ull

bool shoal__remote_bell_heard(const child_t *c, uint64_t now) { return now >= c->deaf_until; }

void shoal__remote_bell_count(shoal_remote_t *r, child_t *c, unsigned rang, size_t got,
                              uint64_t now)
{
    if (now - c->bell_window_ns >= BELL_WINDOW_NS) {
        c->bell_window_ns = now;
        if (c->bell_balance > 0)
            c->bell_balance = 0;
    }
    c->bell_balance += (int64_t)rang - (int64_t)(got < BELL_CREDIT ? got : BELL_CREDIT);
    if (c->bell_balance < -BELL_CREDIT)
        c->bell_balance = -BELL_CREDIT;
    if (c->bell_balance < BELL_EXCESS_MAX)
        return;
    c->bell_balance = 0;
    c->bell_window_ns = now + BELL_DEAF_NS;
    c->deaf_until = now + BELL_DEAF_NS;
    atomic_fetch_add_explicit(&r->bells_deafened, 1, memory_order_relaxed); /* a count */
    c->deaf_times++;
    if (c->deaf_said_ns != 0 && now - c->deaf_said_ns < BELL_SAY_NS)
        return;
    shoal__log(r->rt, SHOAL_LOG_WARN, r->p->g.pid, r->p->name,
               "isolated worker process %d rang its doorbell %d times more than it sent "
               "records, within a second: not listened to for %llu s (its ring looked at every "
               "%d ms); %" PRIu64 " time%s so far",
               (int)c->pid, BELL_EXCESS_MAX, BELL_DEAF_NS / 1000000000ull,
               SHOAL__REMOTE_DEAF_POLL_MS, c->deaf_times, c->deaf_times == 1 ? "" : "s");
    c->deaf_said_ns = now;
}
