/* remote_bell.c - an isolated pool's child that rings its doorbell for
 * nothing, as its supervisor thread (remote_supervisor.c) tells it. The
 * supervisor's thread only.
 *
 * A DOORBELL RUNG FOR NOTHING. A child rings the doorbell (ipc/chan.h)
 * when it has put a record into its ring and the supervisor said it
 * sleeps, so a wake by it finds a record -- bar a ring that races with the
 * supervisor's own look, now and then. A plugin in the child can write to
 * the doorbell's descriptor as often as it likes, though (a bug, or on
 * purpose): each datagram wakes the supervisor, which finds nothing, and
 * sleeps again only to be woken at once -- a core of shoald spent on it,
 * said nowhere. So the wake-ups by a child's doorbell that found nothing
 * from it are counted; BELL_IDLE_MAX of them within one second and its
 * doorbell is not listened to for BELL_DEAF_NS: the supervisor looks at
 * its ring at least every SHOAL__REMOTE_DEAF_POLL_MS meanwhile (what it
 * sends is still read, ~5 ms later on average, and its death still comes
 * through its pidfd at once). Then it is listened to again, and counted
 * afresh. Each time is counted (inspect's process_doorbell_deafened) and
 * logged, with how many times it was so far: the first at once, the next
 * no sooner than a minute after the line before. A child rings for
 * nothing at most BELL_IDLE_MAX times a second this way, and one that
 * rings only after records it sent -- every child that is not broken --
 * never comes near it.
 */
#include <inttypes.h>

#include "pool/remote_child.h"
#include "runtime/runtime.h"

#define BELL_WINDOW_NS 1000000000ull
#define BELL_IDLE_MAX 1000u
#define BELL_DEAF_NS 1000000000ull
#define BELL_SAY_NS 60000000000ull

bool shoal__remote_bell_heard(const child_t *c, uint64_t now)
{
    return now >= c->deaf_until;
}

void shoal__remote_bell_idle(shoal_remote_t *r, child_t *c, uint64_t now)
{
    if (now - c->bell_window_ns >= BELL_WINDOW_NS) {
        c->bell_window_ns = now;
        c->bell_idle = 0;
    }
    if (++c->bell_idle < BELL_IDLE_MAX)
        return;
    c->bell_idle = 0;
    c->bell_window_ns = now + BELL_DEAF_NS;
    c->deaf_until = now + BELL_DEAF_NS;
    atomic_fetch_add_explicit(&r->bells_deafened, 1, memory_order_relaxed); /* a count */
    c->deaf_times++;
    if (c->deaf_said_ns != 0 && now - c->deaf_said_ns < BELL_SAY_NS)
        return;
    shoal__log(r->rt, SHOAL_LOG_WARN, r->p->g.pid, r->p->name,
               "isolated worker process %d rang its doorbell %u times in a second with nothing "
               "sent: not listened to for %llu s (its ring looked at every %d ms); %" PRIu64
               " time%s so far",
               (int)c->pid, BELL_IDLE_MAX, BELL_DEAF_NS / 1000000000ull,
               SHOAL__REMOTE_DEAF_POLL_MS, c->deaf_times, c->deaf_times == 1 ? "" : "s");
    c->deaf_said_ns = now;
}
