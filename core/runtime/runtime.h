/* runtime.h - the one object everything hangs off (no other global state).
 */
#ifndef SHOAL_RUNTIME_RUNTIME_H
#define SHOAL_RUNTIME_RUNTIME_H

#include <pthread.h>
#include <stdarg.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "actor/actor.h"
#include "runtime/tcache.h"
#include "sched/inject.h"
#include "shoal/runtime.h"

struct shoal_worker_s;
struct shoal_timers_s;
struct shoal_monitor_s;

/* A PID of an actor in another process: its slot has this bit (a slot is
 * always below max_actors <= 2^30 otherwise). The child process of an
 * isolated pool sees its parent's PIDs so (pool/remote.c). */
#define SHOAL__PID_REMOTE (UINT32_C(1) << 31)
/* Where envelopes to remote PIDs go: on SHOAL_OK the gateway has taken e
 * (sent on and freed it); on an error the caller still owns it. Called on
 * the sender's thread; must not block. */
typedef int (*shoal_gateway_fn)(void *user, shoal_tcache_t *tc, shoal_pid_t to,
                                struct shoal_env_s *e, bool sys);

struct shoal_runtime_s {
    /* settings, fixed at create */
    unsigned nthreads; /* dispatcher threads that run from create to destroy */
    unsigned nslots;   /* nthreads + compensating slots (sched/monitor.h) */
    unsigned throughput;
    uint64_t spin_ns;
    uint32_t max_actors;
    int debug_checks;
    int log_level;
    void (*log_fn)(void *user, int level, const char *line);
    void *log_user;
    uint64_t max_queued; /* 0: no limit (queued.c) */
    /* the bulkhead (sched/bulkhead.h): callbacks listed as stuck, read at
     * the start of a member's turn; hold_at is E (UINT32_MAX: off), and
     * hold_from 1 (UINT32_MAX: off) so that the turn's look is one compare */
    _Atomic uint32_t nstuck;
    _Atomic uint32_t nstuck_init; /* ... of them members' inits */
    _Atomic uint32_t ninit;       /* members inside their init now */
    uint32_t hold_from, hold_at;

    /* actor records: recs[slot] (actor.h) */
    shoal_actor_rec_t *recs;
    size_t recs_bytes;

    /* free slots beyond the thread caches */
    pthread_mutex_t slots_lock;
    _Atomic uint32_t
        next_fresh; /* slots below this have been used once; written under slots_lock */
    uint32_t *free_slots;
    uint32_t nfree, free_cap;
    uint32_t populated; /* records below this are committed (registry.c); under slots_lock */

    /* envelope depot: free envelopes threads trade SHOAL_ENV_BATCH at a time
     * (envelope.c), and the slabs they come from */
    pthread_mutex_t env_lock;
    struct shoal_env_s **env_depot;
    size_t env_ndepot, env_depot_cap;
    void **env_slabs;
    size_t env_nslabs, env_slabs_cap;
    /* kept back for messages whose loss would lose what they stand for
     * (envelope.c: THE RESERVE); under env_lock */
    struct shoal_env_s *env_reserve[SHOAL_ENV_RESERVE];
    uint32_t env_nreserve;

    /* dispatcher */
    struct shoal_worker_s *workers; /* nslots */
    shoal_inject_t global;
    alignas(64) _Atomic uint32_t nparked;
    _Atomic uint32_t nspinning;
    _Atomic uint32_t shutdown; /* workers exit */
    _Atomic uint32_t wake_rr;
    /* 1 while the monitor sleeps with nothing to watch: a worker leaving
     * park wakes it (worker.c, monitor.c). Next to nspinning, which that
     * worker has just written. */
    _Atomic uint32_t mon_idle;
    /* Slots that stealing and waking look at: nthreads, raised by the
     * monitor past every compensating slot it starts (never lowered). */
    _Atomic uint32_t nscan;

    /* the monitor (sched/monitor.c), run by the timer thread */
    struct shoal_monitor_s *monitor;
    /* members the bulkhead holds (sched/bulkhead.c), under hold_lock */
    pthread_mutex_t hold_lock;
    struct shoal_held_back_s *held;
    size_t nheld, held_cap;
    size_t nheld_new; /* ... of them not started */
    uint64_t held_total;
    uint64_t held_told_ns; /* when the last "held" line was logged (0: never) */
    bool hold_episode;     /* something was held since the bulkhead last opened */
    bool hold_told;        /* ... and that was logged */

    /* lifecycle */
    alignas(64) _Atomic uint64_t live;
    _Atomic uint32_t stopping;  /* no new spawns */
    _Atomic uint32_t all_ended; /* futex: set when live reaches 0 while stopping */

    /* remote PIDs (SHOAL__PID_REMOTE): set before any actor runs, then read
     * only */
    shoal_gateway_fn gateway;
    void *gateway_user;

    /* timers */
    struct shoal_timers_s *timers;

    /* unbounded mailboxes over max_queued (queued.c): written by the timer
     * thread, read by senders [relaxed: a flag, nothing rides on it] */
    alignas(64) _Atomic uint32_t queued_over;
    uint64_t queued_checked_ns;  /* timer thread only */
    pthread_mutex_t queued_lock; /* the crossing lines' rate limit */
    uint64_t queued_logged_ns, queued_skipped;
    /* Set [release] once create has started every thread: the timer thread
     * (started before the workers) sums their counters only after it. */
    _Atomic uint32_t started;

    /* room waiters (actor/room.h): SHOAL_ROOM_STRIPES stripes */
    struct shoal_room_stripe_s *rooms;

    /* registered names, and groups of PIDs under one name (names.c) */
    pthread_rwlock_t names_lock;
    void *names;
    size_t nnames, names_cap;
    void *groups;
    size_t ngroups, groups_cap;

    /* unpublished records waiting out their grace period (qsbr.h) */
    pthread_mutex_t limbo_lock;
    struct shoal_qsbr_retired_s *limbo;

    /* threads that are not workers */
    pthread_key_t tc_key;
    uint64_t tc_id; /* this runtime among every one the process made (tcache.c) */
    pthread_mutex_t tc_lock;
    shoal_tcache_t *foreign; /* list */
    shoal_tstats_t retired;  /* counters of foreign caches whose thread exited */
    alignas(64) _Atomic uint64_t ref_seq;
};

/* Actor record lookups. */
static inline shoal_actor_t *shoal__actor_at(shoal_runtime_t *rt, uint32_t slot)
{
    return &rt->recs[slot].front;
}
static inline shoal_actor_back_t *shoal__actor_back(shoal_runtime_t *rt, shoal_actor_t *a)
{
    (void)rt;
    return &((shoal_actor_rec_t *)(void *)a)->back;
}
static inline uint32_t shoal__actor_slot(shoal_runtime_t *rt, shoal_actor_t *a)
{
    return (uint32_t)((shoal_actor_rec_t *)(void *)a - rt->recs);
}
static inline shoal_pid_t shoal__actor_pid(shoal_runtime_t *rt, shoal_actor_t *a)
{
    uint64_t w = atomic_load_explicit(&a->user_rsv, memory_order_relaxed);
    return shoal__pid_make(shoal__rsv_gen(w), shoal__actor_slot(rt, a));
}

/* A fresh call reference (unique within the runtime), from tc's block of
 * them (tc NULL: from the runtime's count itself). A thread takes
 * SHOAL__REF_BLOCK at a time: a call is then no write to a line every
 * calling thread shares (one locked add a call, on W6's path, stalled on
 * the line the other core had written last). */
#define SHOAL__REF_BLOCK 1024u
shoal_ref_t shoal__ref_next_slow(shoal_runtime_t *rt, struct shoal_tcache_s *tc);
static inline shoal_ref_t shoal__ref_next(shoal_runtime_t *rt, struct shoal_tcache_s *tc)
{
    if (__builtin_expect(tc != NULL && tc->ref_next != tc->ref_end, 1)) {
        shoal_ref_t r = ++tc->ref_next & SHOAL_REF_MAX;
        if (__builtin_expect(r != 0, 1))
            return r;
    }
    return shoal__ref_next_slow(rt, tc);
}

/* Logging (log.c). pid may be SHOAL_PID_NONE, name NULL. Written as text,
 * a line's control characters are escaped (shoal__log_clean): one event,
 * one line. */
void shoal__log(shoal_runtime_t *rt, int level, shoal_pid_t pid, const char *name, const char *fmt,
                ...) SHOAL_PRINTF(5, 6);
void shoal__vlog(shoal_runtime_t *rt, int level, shoal_pid_t pid, const char *name, const char *fmt,
                 va_list ap);
/* line, or when it holds a control character (C0, DEL, C1 in UTF-8), buf
 * (size bytes) holding it with each escaped: \n, \r, \t, \xNN, \u00NN; cut
 * at a whole escape when it does not fit. */
const char *shoal__log_clean(const char *line, char *buf, size_t size);
/* How much of p[0..n) one write should take so that a pipe, which writes
 * at most PIPE_BUF bytes whole or not at all, takes whole lines and
 * another writer of it cuts none: all of it when it fits, else the whole
 * lines within PIPE_BUF, else PIPE_BUF of a longer line. Async-signal-safe
 * (the crash reporter's writes, fault.c; host/output.c's). */
static inline size_t shoal__line_piece(const char *p, size_t n)
{
    if (n <= PIPE_BUF)
        return n;
    for (size_t i = PIPE_BUF; i > 0; i--)
        if (p[i - 1] == '\n')
            return i;
    return PIPE_BUF;
}

/* Slots (registry.c). */
int shoal__slots_init(shoal_runtime_t *rt);
void shoal__slots_fini(shoal_runtime_t *rt);
/* A free slot for a new actor; SHOAL_ELIMIT when max_actors are live. */
int shoal__slot_alloc(shoal_tcache_t *tc, uint32_t *slot);
void shoal__slot_free(shoal_tcache_t *tc, uint32_t slot);
void shoal__slots_flush(shoal_tcache_t *tc);

/* Registered names (names.c). */
int shoal__names_init(shoal_runtime_t *rt);
void shoal__names_fini(shoal_runtime_t *rt);
/* As shoal_runtime_unregister, only while name still names pid
 * (SHOAL_ENOPROC otherwise): a host removing what it registered leaves a
 * name that another pool or source of its took meanwhile. */
int shoal__names_unregister_pid(shoal_runtime_t *rt, const char *name, shoal_pid_t pid);
/* Groups (names.c): pid joins or leaves the group `name` (at most 63
 * bytes; a pid is in a group at most once); the open members of a group,
 * at most max of them into out (the count is returned, which may be more).
 * A member that joins closed (open false: a pool a reload holds) is not
 * listed until shoal__group_open, which allocates nothing -- its join took
 * the memory -- and says whether pid was in the group. Any thread. */
int shoal__group_join(shoal_runtime_t *rt, const char *name, shoal_pid_t pid, bool open);
bool shoal__group_open(shoal_runtime_t *rt, const char *name, shoal_pid_t pid);
void shoal__group_leave(shoal_runtime_t *rt, const char *name, shoal_pid_t pid);
size_t shoal__group_members(shoal_runtime_t *rt, const char *name, shoal_pid_t *out, size_t max);

/* Sums what unbounded mailboxes hold and sets or clears queued_over (the
 * timer thread every 10 ms while max_queued is set, and senders every
 * SHOAL_QUEUED_BATCH pushes); logs each crossing. Any thread. */
void shoal__queued_check(shoal_runtime_t *rt);

/* Unbounded mailboxes (queued.c). A send into one: SHOAL_OK to go on, or
 * SHOAL_EBUSY (counted) while they hold max_queued messages. */
static inline int shoal__queued_admit(shoal_runtime_t *rt, shoal_tcache_t *tc)
{
    if (rt->max_queued != 0 && atomic_load_explicit(&rt->queued_over, memory_order_relaxed)) {
        SHOAL_STAT_ADD(tc, refused_queued, 1);
        return SHOAL_EBUSY;
    }
    return SHOAL_OK;
}
/* e goes into an unbounded user mailbox: marked and counted in. With a
 * bound set, every QUEUED_BATCH of this thread's pushes also sums them all
 * (a fast sender must not outrun the timer thread's 10 ms checks). */
#define SHOAL_QUEUED_BATCH 1024u
/* Its first half: the mark and the count (all of it when max_queued is
 * 0: shoal_send's fast path). */
static inline void shoal__queued_mark(shoal_tcache_t *tc, shoal_env_t *e)
{
    e->meta |= SHOAL_ENV_UNBOUNDED;
    SHOAL_STAT_ADD(tc, unbounded_pushed, 1);
}
static inline void shoal__queued_in(shoal_tcache_t *tc, shoal_env_t *e)
{
    shoal__queued_mark(tc, e);
    if (tc->rt->max_queued != 0 &&
        (atomic_load_explicit(&tc->stats.unbounded_pushed, memory_order_relaxed) &
         (SHOAL_QUEUED_BATCH - 1)) == 0)
        shoal__queued_check(tc->rt);
}
/* e was popped from a user mailbox: counted out if it was marked. */
static inline void shoal__queued_out(shoal_tcache_t *tc, shoal_env_t *e)
{
    if (e->meta & SHOAL_ENV_UNBOUNDED) {
        e->meta &= ~(uint64_t)SHOAL_ENV_UNBOUNDED;
        SHOAL_STAT_ADD(tc, unbounded_popped, 1);
    }
}

/* Envelope depot (envelope.c). */
void shoal__envs_fini(shoal_runtime_t *rt);
void shoal__envs_flush(shoal_tcache_t *tc);

#endif
