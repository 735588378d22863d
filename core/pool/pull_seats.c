/* pull_seats.c - a pull pool's seats (pull.h: seats): one per member, for
 * its counters as readers see them (shoal_pull_worker_stats_t). The pool's
 * actor adds and removes seats under seats_lock; readers on any thread walk
 * the table under it; each member writes only its own seat (pull_members.c). */
#include "pool/pull.h"

#include <stdlib.h>
#include <string.h>

#include "pool/pool.h"
#include "runtime/runtime.h"

shoal_pull_seat_t *shoal__pull_seat_new(shoal_pool_t *p, uint64_t words[SHOAL_MEMBER_WORDS])
{
    shoal_pull_t *q = p->pull;
    shoal_pull_seat_t *seat = aligned_alloc(64, sizeof *seat);
    if (seat == NULL)
        return NULL;
    memset(seat, 0, sizeof *seat);
    seat->pid = SHOAL_PID_NONE;
    /* Idle from the start: a member that has taken nothing yet (spawned,
     * in its init) runs no item -- shoal_tasks_running is 0 right after
     * create, and idle expiry counts its wait from here. */
    atomic_store_explicit(&seat->idle_since, shoal__now_ns(), memory_order_relaxed);
    pthread_mutex_lock(&q->seats_lock);
    uint32_t i = 0;
    while (i < q->nseats && q->seats[i] != NULL)
        i++;
    if (i == q->nseats) {
        shoal_pull_seat_t **t = realloc(q->seats, (size_t)(q->nseats + 1) * sizeof *t);
        if (t == NULL) {
            pthread_mutex_unlock(&q->seats_lock);
            free(seat);
            return NULL;
        }
        q->seats = t;
        q->nseats++;
    }
    seat->index = i;
    q->seats[i] = seat;
    pthread_mutex_unlock(&q->seats_lock);
    shoal_pull_member_t m = {.seat = seat};
    memcpy(words, &m, sizeof m);
    return seat;
}

void shoal__pull_seat_bind(shoal_pool_t *p, shoal_pull_seat_t *seat, shoal_pid_t pid)
{
    shoal_pull_t *q = p->pull;
    pthread_mutex_lock(&q->seats_lock);
    seat->pid = pid;
    if (pid == SHOAL_PID_NONE)
        q->seats[seat->index] = NULL;
    pthread_mutex_unlock(&q->seats_lock);
    if (pid == SHOAL_PID_NONE)
        free(seat);
}

void shoal__pull_seat_drop(shoal_pool_t *p, shoal_pid_t pid)
{
    shoal_pull_t *q = p->pull;
    shoal_pull_seat_t *seat = NULL;
    pthread_mutex_lock(&q->seats_lock);
    for (uint32_t i = 0; i < q->nseats; i++) {
        if (q->seats[i] != NULL && q->seats[i]->pid == pid) {
            seat = q->seats[i];
            q->seats[i] = NULL;
            break;
        }
    }
    pthread_mutex_unlock(&q->seats_lock);
    free(seat);
}

size_t shoal__pull_workers(shoal_pool_t *p, shoal_pull_worker_stats_t *out, size_t cap)
{
    shoal_pull_t *q = p->pull;
    if (q == NULL)
        return 0;
    uint64_t now = shoal__now_ns();
    size_t n = 0;
    pthread_mutex_lock(&q->seats_lock);
    for (uint32_t i = 0; i < q->nseats; i++) {
        const shoal_pull_seat_t *s = q->seats[i];
        if (s == NULL || s->pid == SHOAL_PID_NONE)
            continue;
        if (n < cap) {
            uint64_t since = atomic_load_explicit(&s->idle_since, memory_order_relaxed);
            uint64_t done = atomic_load_explicit(&s->completed, memory_order_relaxed);
            uint64_t taken = atomic_load_explicit(&s->taken, memory_order_relaxed);
            out[n] = (shoal_pull_worker_stats_t){
                .pid = s->pid,
                .seat = s->index,
                .taken = taken,
                .completed = done,
                /* A live member's items are settled by success only (a
                 * failure ends it): what it took and has not completed. */
                .in_progress = taken > done ? (uint32_t)(taken - done) : 0,
                .idle_ns = atomic_load_explicit(&s->idle_ns, memory_order_relaxed) +
                           (since != 0 && now > since ? now - since : 0),
                .idle = since != 0,
            };
        }
        n++;
    }
    pthread_mutex_unlock(&q->seats_lock);
    return n;
}

uint32_t shoal__pull_idle(shoal_pool_t *p)
{
    shoal_pull_t *q = p->pull;
    uint32_t n = 0;
    if (q == NULL)
        return 0;
    pthread_mutex_lock(&q->seats_lock);
    for (uint32_t i = 0; i < q->nseats; i++)
        n += q->seats[i] != NULL && q->seats[i]->pid != SHOAL_PID_NONE &&
             atomic_load_explicit(&q->seats[i]->idle_since, memory_order_relaxed) != 0;
    pthread_mutex_unlock(&q->seats_lock);
    return n;
}

size_t shoal__pull_idle_past(shoal_pool_t *p, uint64_t now, uint64_t limit, shoal_pid_t *out,
                             size_t cap)
{
    shoal_pull_t *q = p->pull;
    size_t n = 0;
    if (q == NULL)
        return 0;
    pthread_mutex_lock(&q->seats_lock);
    for (uint32_t i = 0; i < q->nseats && n < cap; i++) {
        const shoal_pull_seat_t *s = q->seats[i];
        if (s == NULL || s->pid == SHOAL_PID_NONE)
            continue;
        uint64_t since = atomic_load_explicit(&s->idle_since, memory_order_relaxed);
        if (since != 0 && now > since && now - since >= limit)
            out[n++] = s->pid;
    }
    pthread_mutex_unlock(&q->seats_lock);
    return n;
}
