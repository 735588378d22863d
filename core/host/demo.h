/* demo.h - what shoal-demo's main (demo.c) and its actors (demo_actors.c)
 * share: the message types, the settings and counters they keep, the
 * actors' arguments and behaviours.
 */
#ifndef SHOAL_HOST_DEMO_H
#define SHOAL_HOST_DEMO_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include <shoal/shoal.h>

#define FLAKY_SHARE 10 /* one message in this many goes to the flaky pool */

/* Message types. */
enum {
    MSG_TICK = 1,   /* source -> itself, through the timer */
    MSG_WORK = 2,   /* source -> worker / flaky */
    MSG_RESULT = 3, /* worker / flaky -> sink */
    MSG_STOP = 5,   /* main -> source: stop sending */
    MSG_COUNT = 6,  /* main -> sink (a blocking call): how many results? */
};

typedef struct sink_count_s {
    uint64_t received;
    uint64_t checksum;
} sink_count_t;

/* Settings (written by main before the runtime starts) and the counters the
 * actors keep (relaxed atomics: main reads them while traffic flows). */
typedef struct demo_s {
    unsigned workers;
    unsigned mailbox;
    unsigned panic_every;
    unsigned cost;
    uint64_t rate;
    unsigned surge;  /* the rate multiplier during the surge second */
    double surge_at; /* the surge second starts this long after the source */

    _Atomic uint64_t offered;  /* source: sends tried */
    _Atomic uint64_t accepted; /* source: SHOAL_OK */
    _Atomic uint64_t busy;     /* source: SHOAL_EBUSY */
    _Atomic uint64_t handled;  /* workers: WORK done, RESULT sent */
    _Atomic uint64_t lost;     /* flaky: the WORK being handled when it panicked */
    _Atomic uint64_t sunk;     /* sink: RESULTs received */
    _Atomic int source_stopped;

    /* Log lines the runtime produced (log_fn), by level. */
    _Atomic uint64_t log_lines[4];
    pthread_mutex_t log_lock;
    char first_log[4][160];
} demo_t;

/* Seconds on the monotonic clock. */
static inline double shoal__demo_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

typedef struct worker_args_s {
    demo_t *demo;
    shoal_pid_t sink;
} worker_args_t;

typedef struct source_args_s {
    demo_t *demo;
    shoal_pid_t api, flaky;
} source_args_t;

/* The actors (demo_actors.c). worker and flaky take a worker_args_t, sink
 * the demo_t, source a source_args_t. */
extern const shoal_behaviour_t shoal__demo_worker; /* the api pool's workers */
extern const shoal_behaviour_t shoal__demo_flaky;  /* panic on every --panic-every-th message */
extern const shoal_behaviour_t shoal__demo_sink;   /* counts RESULTs, answers MSG_COUNT */
extern const shoal_behaviour_t shoal__demo_source; /* offers WORK at the rate, until MSG_STOP */

#endif
