/* shoal/runtime.h - embedding the runtime: create it, spawn root actors, send
 * and call from threads that are not actors, stop it.
 *
 * Everything hangs off one shoal_runtime_t; there is no other global state,
 * so several runtimes may live in one process. Functions here may be called
 * from any thread, including worker threads, unless they say otherwise.
 */
#ifndef SHOAL_RUNTIME_H
#define SHOAL_RUNTIME_H

#include "shoal/behaviour.h"
#include "shoal/ctx.h"
#include "shoal/message.h"
#include "shoal/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct shoal_runtime_opts_s {
    unsigned threads;    /* dispatcher threads; 0 = max(online CPUs, 2) */
    unsigned throughput; /* messages per actor turn; 0 = 32 */
    unsigned spin_us;    /* how long an idle worker looks for work before it parks; 0 = 50 */
    uint32_t max_actors; /* live actors at most; 0 = 1 << 24 */
    int debug_checks;    /* non-zero: check on every turn that no actor runs on two threads */
    int log_level;       /* SHOAL_LOG_*; messages above it are dropped; default SHOAL_LOG_INFO */
    /* Where log lines go; NULL = stderr. Called from any thread. A line is
     * as formatted: a plugin's text may hold any byte but NUL (to stderr,
     * control characters are escaped as \n, \r, \t, \xNN or \u00NN). */
    void (*log_fn)(void *user, int level, const char *line);
    void *log_user;
    /* Messages all unbounded user mailboxes together may hold; 0 = no
     * limit. Past it a send into one is refused with SHOAL_EBUSY (counted in
     * refused_queued) until they drain below it. Checked every 10 ms, so the
     * total may pass it by what senders manage in that time. */
    uint64_t max_queued;
    /* A handler (any callback) still running after this many ms is logged
     * once (pool, behaviour, actor, elapsed) and listed while it lasts, and
     * its end is logged once; 0 = 1000; at most SHOAL_STALL_WARN_MAX_MS. A
     * dispatcher thread stuck in one callback for min(stall_warn, 100 ms)
     * gets a compensating thread, so other actors keep running. */
    unsigned stall_warn_ms;
    /* Compensating threads at most at once: 0 = threads;
     * SHOAL_EXTRA_THREADS_NONE = none (a stuck thread is only reported);
     * at most 1024. They retire when the stalls end. While as many
     * callbacks are stuck as this allows for, the members of a pool with a
     * stuck callback and members not started yet wait (held_back below),
     * so what is stuck cannot take the threads the other pools run on. */
    int max_extra_threads;
} shoal_runtime_opts_t;

#define SHOAL_STALL_WARN_MAX_MS 86400000u /* one day */
#define SHOAL_EXTRA_THREADS_NONE (-1)

/* Fills opts with the defaults. */
SHOAL_API void shoal_runtime_opts_init(shoal_runtime_opts_t *opts);

/* Creates a runtime and starts its threads. opts may be NULL (defaults).
 * SHOAL_EINVAL for impossible options, SHOAL_ENOMEM. */
SHOAL_API int shoal_runtime_create(shoal_runtime_t **rt, const shoal_runtime_opts_t *opts);

/* Stops every actor (each runs terminate with SHOAL_ESHUTDOWN; messages
 * still queued are dropped and counted), joins every thread and frees
 * everything. Call once, after every other thread has stopped using rt; not
 * from a worker thread. */
SHOAL_API void shoal_runtime_destroy(shoal_runtime_t *rt);

/* The number of dispatcher threads (without the compensating ones running
 * for stuck handlers: see shoal_runtime_stats_t.extra_threads_live). */
SHOAL_API unsigned shoal_runtime_threads(const shoal_runtime_t *rt);

/* Spawns a root actor (no parent). Init runs on a worker thread; `args` must
 * stay valid until it has. SHOAL_ESTOPPED while the runtime stops,
 * SHOAL_ELIMIT past max_actors. */
SHOAL_API int shoal_runtime_spawn(shoal_runtime_t *rt, const shoal_behaviour_t *behaviour,
                                  const void *args, const shoal_spawn_opts_t *opts,
                                  shoal_pid_t *pid);

/* As shoal_send / shoal_send_owned / shoal_send_priority, from outside any
 * actor: the receiver sees from = SHOAL_PID_NONE. */
SHOAL_API int shoal_runtime_send(shoal_runtime_t *rt, shoal_pid_t to, uint32_t type,
                                 const void *data, size_t size);
SHOAL_API int shoal_runtime_send_owned(shoal_runtime_t *rt, shoal_pid_t to, uint32_t type,
                                       void *data, size_t size, shoal_free_fn free_fn);
SHOAL_API int shoal_runtime_send_priority(shoal_runtime_t *rt, shoal_pid_t to, uint32_t type,
                                          const void *data, size_t size);
/* As shoal_send_many, from outside any actor. ABI 1.8. */
SHOAL_API int shoal_runtime_send_many(shoal_runtime_t *rt, shoal_pid_t to, uint32_t type,
                                      const void *data, size_t size, size_t n, size_t *sent);
/* As shoal_runtime_send, but a receiver that is full (SHOAL_EFULL, or
 * SHOAL_EBUSY from a pool, or SHOAL_ENOMEMBERS from a checkout pool whose
 * transactions are at max + queue_max: ABI 1.10) is waited for: the
 * thread sleeps until it has
 * room (one SHOAL_MSG_ROOM to a waiter of its own, as shoal_notify_room
 * asks -- below the receiver's low-water mark, a quarter of it free: never
 * polling) and tries again, until timeout_ms has passed
 * (SHOAL_ETIMEDOUT; UINT64_MAX: no limit). SHOAL_ENOPROC if the receiver
 * ends meanwhile. An isolated pool tells too (ABI 1.10: its child says when
 * its workers have settled enough); a receiver that cannot tell gives its
 * refusal at once; a refusal no room can cure, at once (an isolated
 * pool's SHOAL_EINVAL for a message over its limit: shoal_send); a pool
 * whose max_waiting senders wait already, SHOAL_EOVERLOAD at once
 * (shoal/pool.h) -- each wait asks again, so a
 * sender woken that finds the receiver full again may get it then. A
 * refusal for max_queued (SHOAL_EBUSY from a receiver with room of its
 * own) is waited for the same way: the thread sleeps until the unbounded
 * mailboxes have drained below 9/10 of it (shoal_notify_room). Not from a
 * worker thread (SHOAL_EINVAL): an actor asks with shoal_notify_room
 * instead. The thread waits as an actor record of its own (a waiter, one
 * per wait): SHOAL_ELIMIT if the runtime is at max_actors, with nothing
 * sent (retry once actors have ended). ABI 1.5. */
SHOAL_API int shoal_runtime_send_wait(shoal_runtime_t *rt, shoal_pid_t to, uint32_t type,
                                      const void *data, size_t size, uint64_t timeout_ms);

/* As shoal_stop, from outside any actor. */
SHOAL_API int shoal_runtime_stop_actor(shoal_runtime_t *rt, shoal_pid_t pid);

/* Names. A host registers a name for an actor (a pool); anyone looks it up.
 * Registering an existing name points it at the new PID. A name outlives its
 * actor: sends to the PID it still gives answer SHOAL_ENOPROC. */
SHOAL_API int shoal_runtime_register(shoal_runtime_t *rt, const char *name, shoal_pid_t pid);
/* SHOAL_OK, or SHOAL_ENOPROC when the name is not registered. */
SHOAL_API int shoal_runtime_unregister(shoal_runtime_t *rt, const char *name);
/* The PID registered under name, or SHOAL_PID_NONE. */
SHOAL_API shoal_pid_t shoal_runtime_whereis(shoal_runtime_t *rt, const char *name);

/* A reply received by a blocking call. Owned by the caller until released. */
typedef struct shoal_answer_s {
    uint32_t type;
    int status;       /* 0, or the callee's error status */
    const void *data; /* valid until shoal_answer_release */
    size_t size;
    void *internal_[2];
} shoal_answer_t;

/* Calls `to` and blocks the calling thread until the reply arrives or
 * timeout_ms passes. Not from a worker thread (SHOAL_EINVAL): actors use the
 * asynchronous shoal_call. Returns SHOAL_ETIMEDOUT, or a send error
 * (SHOAL_ENOPROC, SHOAL_EFULL, ...), or SHOAL_ELIMIT with nothing sent (the
 * thread waits for the reply as an actor record of its own, a waiter, and
 * the runtime is at max_actors: retry once actors have ended), or SHOAL_OK
 * with *answer filled: then check answer->status too, which carries the
 * callee's side: 0, or an error (SHOAL_ENOTSUP without handle_call,
 * SHOAL_EPANIC, SHOAL_ENOPROC if it ended with the call still queued, what
 * shoal_reply_error gave), in which case data is NULL. Release the answer
 * either way. A reply that arrives after the timeout is dropped and
 * counted. */
SHOAL_API int shoal_runtime_call(shoal_runtime_t *rt, shoal_pid_t to, uint32_t type,
                                 const void *data, size_t size, uint64_t timeout_ms,
                                 shoal_answer_t *answer);

/* As shoal_runtime_call, with high priority (see shoal_call_priority). */
SHOAL_API int shoal_runtime_call_priority(shoal_runtime_t *rt, shoal_pid_t to, uint32_t type,
                                          const void *data, size_t size, uint64_t timeout_ms,
                                          shoal_answer_t *answer);

/* Inspects a live actor (shoal/inspect.h), blocking like shoal_runtime_call,
 * with the same two levels of result: SHOAL_OK and answer->status 0 means
 * answer->data is the JSON object (NUL-terminated, answer->size bytes with
 * the NUL); answer->status carries SHOAL_ENOPROC (it ended first),
 * SHOAL_EPANIC or the inspect callback's error, with data NULL. Not from a
 * worker thread. */
SHOAL_API int shoal_runtime_inspect(shoal_runtime_t *rt, shoal_pid_t pid, uint64_t timeout_ms,
                                    shoal_answer_t *answer);

/* Frees what a blocking call returned. Safe on a zeroed answer. */
SHOAL_API void shoal_answer_release(shoal_answer_t *answer);

/* Counters of the whole runtime, summed over its threads. Values are read
 * while traffic flows, so they are a recent picture, not a snapshot. */
typedef struct shoal_runtime_stats_s {
    uint64_t actors_live;
    uint64_t actors_spawned;
    uint64_t actors_ended;
    uint64_t msgs_sent;     /* accepted by a mailbox */
    uint64_t msgs_refused;  /* refused for want of room: SHOAL_EFULL, SHOAL_EBUSY,
                             * SHOAL_ENOMEMBERS (a checkout pool's) */
    uint64_t msgs_noproc;   /* SHOAL_ENOPROC returned to a sender */
    uint64_t msgs_handled;  /* passed to a callback */
    uint64_t msgs_dropped;  /* accepted, then dropped because the receiver ended */
    uint64_t timer_refused; /* send_after deliveries refused at expiry */
    uint64_t replies_late;  /* replies that found their caller gone or timed out */
    uint64_t turns;         /* actor turns run */
    uint64_t steals;        /* actors taken from a sibling's ring */
    uint64_t parks;         /* times a worker went to sleep */
    uint64_t wakes;         /* times a worker was woken */
    uint64_t env_slabs;     /* envelope slabs allocated from the heap */
    uint64_t heap_payloads; /* payloads too large for the envelope (heap copies) */
    /* Messages put into and taken out of unbounded user mailboxes: the
     * difference is what they hold now (what runtime opts max_queued bounds). */
    uint64_t unbounded_pushed;
    uint64_t unbounded_popped;
    uint64_t refused_queued; /* SHOAL_EBUSY: unbounded mailboxes held max_queued messages */
    /* callbacks that ran past stall_warn (each logged) */
    uint64_t stalls;
    /* compensating threads started for stuck ones, and alive now (0 once
     * the stalls have ended) */
    uint64_t extra_threads_started;
    uint64_t extra_threads_live;
    /* Members waiting now because stuck callbacks hold every compensating
     * thread (a member not started yet, or one of a pool with a stuck
     * callback, waits until one returns), and how many times one was held
     * so far. Never with max_extra_threads SHOAL_EXTRA_THREADS_NONE. */
    uint64_t held_back;
    uint64_t held_back_total;
} shoal_runtime_stats_t;

/* Fills *stats: the first `size` bytes of it (sizeof the struct the caller
 * was built with: fields appended since are left out). */
SHOAL_API void shoal_runtime_stats_sized(shoal_runtime_t *rt, shoal_runtime_stats_t *stats,
                                         size_t size);
/* The struct as it was before ABI 1.14 (up to extra_threads_live). */
SHOAL_API void(shoal_runtime_stats)(shoal_runtime_t *rt, shoal_runtime_stats_t *stats);
#define shoal_runtime_stats(rt, stats)                                                             \
    shoal_runtime_stats_sized((rt), (stats), sizeof(shoal_runtime_stats_t))

#ifdef __cplusplus
}
#endif
#endif
