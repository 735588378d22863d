/* agent.c - the control socket's agent actor and its link to the host
 * thread (see agent.h for the protocol between them).
 *
 * A job reaches the agent as one message whose payload (a request_t) the
 * runtime owns and frees: if the agent ends with it still queued, nothing
 * leaks. The agent copies what it needs, sends every request, and keeps
 * the job until each of them has been answered or has timed out (the
 * runtime's own call timer sends the SHOAL_MSG_TIMEOUT; the agent needs no
 * timer of its own). It finds a job by the reply's ref: each job keeps its
 * refs sorted.
 *
 * An epic's own args (a SHOAL__POOL_EPIC_ARGS call: the payload is a
 * shoal_pull_epic_args_t, a tree the pool takes over once it reads the
 * call) have one owner at a time. The job's message from the submission
 * (request_free frees them with it if the agent never read it: it ended
 * first); the agent once it read it, which frees them when the call is not
 * made (the job came past its timeout, or the send failed); then the call,
 * whose payload is handed over (shoal__call_owned) with epic_box_free:
 * the pool that reads it takes them, clearing the box (pool/commands.c),
 * and whatever drops the call unread -- the pool ended with it queued,
 * after the agent's timeout or not -- frees them with it. The agent never
 * touches them after the call is made.
 */
#include "host/agent.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "actor/call.h" /* shoal__call_owned */
#include "pool/pool.h"  /* SHOAL__POOL_EPIC_ARGS */
#include "pool/pull.h"
#include "shoal/ctx.h"

#define JOB_MSG 1u /* the one message type the agent takes */

struct shoal_agent_s {
    pthread_mutex_t lock;
    shoal_agent_done_t *done; /* posted, not yet taken; under lock */
    bool closed;              /* under lock: the host let go (stop) */
    int efd;                  /* written under lock while !closed; closed by stop */
    /* The host's reference and the agent's. Each drop is acq_rel: it
     * releases what its side wrote, and the last one acquires what the
     * other side wrote before freeing. */
    _Atomic unsigned refs;
    shoal_runtime_t *rt; /* the host's side only */
    shoal_pid_t pid;
};

/* A job as submitted: the message payload. */
typedef struct request_s {
    uint64_t id;
    uint64_t expires_ms; /* on the monotonic clock: submitted + timeout */
    uint32_t op, type;
    uint64_t n, size;
    bool read;          /* by the agent (start): its epic args are the job's from then */
    shoal_pid_t pids[]; /* n of them, then size bytes of data */
} request_t;

/* Whether r is an epic with its own args; *ea gets them. */
static bool epic_args(const request_t *r, shoal_pull_epic_args_t *ea)
{
    if (r->op != SHOAL_AGENT_CALL_PRIORITY || r->type != SHOAL__POOL_EPIC_ARGS || r->n != 1 ||
        r->size != sizeof *ea)
        return false;
    memcpy(ea, r->pids + r->n, sizeof *ea);
    return true;
}

/* The runtime frees a job's message with this: one the agent never read
 * (it ended with the job queued) takes its epic args with it. */
static void request_free(void *p)
{
    request_t *r = p;
    shoal_pull_epic_args_t ea;
    if (!r->read && epic_args(r, &ea))
        ea.free_args(ea.args);
    free(r);
}

static void link_unref(shoal_agent_t *l)
{
    /* acq_rel: pairs with the same fetch_sub of every other holder: the
     * last one out sees their use of l before it frees it. */
    if (atomic_fetch_sub_explicit(&l->refs, 1, memory_order_acq_rel) != 1)
        return;
    while (l->done != NULL) {
        shoal_agent_done_t *d = l->done;
        l->done = d->next;
        shoal__agent_done_free(d);
    }
    pthread_mutex_destroy(&l->lock);
    free(l);
}

void shoal__agent_done_free(shoal_agent_done_t *d)
{
    if (d == NULL)
        return;
    for (size_t i = 0; i < d->n; i++)
        free(d->results[i].data);
    free(d);
}

/* ---- the agent's side (a dispatcher thread) -------------------------------- */

typedef struct pending_s {
    shoal_ref_t ref;
    size_t i; /* its result */
} pending_t;

typedef struct job_s {
    struct job_s *next;
    shoal_agent_done_t *done; /* filled as answers come */
    pending_t *pending;       /* sorted by ref */
    size_t npending, left;
} job_t;

typedef struct agent_s {
    shoal_agent_t *link;
    job_t *jobs;
} agent_t;

/* Hands a finished job to the host thread, or frees it if the host let go. */
static void post(shoal_agent_t *l, shoal_agent_done_t *d)
{
    pthread_mutex_lock(&l->lock);
    if (l->closed) {
        pthread_mutex_unlock(&l->lock);
        shoal__agent_done_free(d);
        return;
    }
    d->next = l->done;
    l->done = d;
    uint64_t one = 1;
    ssize_t w = write(l->efd, &one, sizeof one); /* only fails when the counter is huge */
    (void)w;
    pthread_mutex_unlock(&l->lock);
}

static int by_ref(const void *a, const void *b)
{
    shoal_ref_t x = ((const pending_t *)a)->ref, y = ((const pending_t *)b)->ref;
    return x < y ? -1 : x > y;
}

static void job_free(job_t *j)
{
    shoal__agent_done_free(j->done);
    free(j->pending);
    free(j);
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The payload of an epic's call frees what the pool did not take. */
static void epic_box_free(void *p)
{
    shoal_pull_epic_args_t *box = p;
    if (box->free_args != NULL)
        box->free_args(box->args);
    free(box);
}

/* Sends r to `to`. ea: an epic's args, handed over with the call when it
 * is made (SHOAL_OK), still the agent's otherwise. */
static int issue(shoal_ctx_t *ctx, const request_t *r, shoal_pid_t to, uint64_t timeout_ms,
                 const shoal_pull_epic_args_t *ea, shoal_ref_t *ref)
{
    const void *data = r->size != 0 ? (const char *)(r->pids + r->n) : NULL;
    if (ea != NULL) {
        shoal_pull_epic_args_t *box = malloc(sizeof *box);
        if (box == NULL)
            return SHOAL_ENOMEM;
        *box = *ea;
        int rc = shoal__call_owned(ctx, to, r->type, box, sizeof *box, epic_box_free, true,
                                   timeout_ms, ref);
        if (rc != SHOAL_OK)
            free(box);
        return rc;
    }
    switch (r->op) {
    case SHOAL_AGENT_CALL:
        return shoal_call(ctx, to, r->type, data, r->size, timeout_ms, ref);
    case SHOAL_AGENT_CALL_PRIORITY:
        return shoal_call_priority(ctx, to, r->type, data, r->size, timeout_ms, ref);
    case SHOAL_AGENT_INSPECT:
        return shoal_inspect(ctx, to, timeout_ms, ref);
    default:
        return SHOAL_EINVAL;
    }
}

/* A new job: every request sent at once, each timing out when the job
 * does; posted now if none is pending. A job that comes after its timeout
 * (the agent could not run) sends nothing: its client has had its answer,
 * and a scale it was told timed out must not happen later. */
static void start(shoal_ctx_t *ctx, agent_t *ag, const shoal_msg_t *msg)
{
    request_t *r = (request_t *)msg->data; /* shoal__agent_submit's buffer: ours to mark */
    if (msg->size < sizeof *r || r->n > (msg->size - sizeof *r) / sizeof(shoal_pid_t) ||
        r->size != msg->size - sizeof *r - r->n * sizeof(shoal_pid_t))
        return; /* not from shoal__agent_submit */
    r->read = true;
    shoal_pull_epic_args_t ea = {0};
    bool epic = epic_args(r, &ea);
    job_t *j = calloc(1, sizeof *j);
    shoal_agent_done_t *d = calloc(1, sizeof *d + r->n * sizeof d->results[0]);
    pending_t *p = r->n != 0 ? calloc(r->n, sizeof *p) : NULL;
    if (j == NULL || d == NULL || (r->n != 0 && p == NULL)) {
        free(j);
        free(p);
        if (d != NULL) { /* answer what we can: out of memory */
            d->id = r->id;
            d->n = 0;
            post(ag->link, d);
        }
        if (epic) /* not sent */
            ea.free_args(ea.args);
        return;
    }
    d->id = r->id;
    d->n = r->n;
    j->done = d;
    j->pending = p;
    uint64_t now = now_ms();
    for (size_t i = 0; i < r->n; i++) {
        shoal_ref_t ref;
        d->results[i].rc = now >= r->expires_ms ? SHOAL_ETIMEDOUT
                                                : issue(ctx, r, r->pids[i], r->expires_ms - now,
                                                        epic ? &ea : NULL, &ref);
        if (d->results[i].rc == SHOAL_OK) {
            d->results[i].rc = SHOAL_ETIMEDOUT; /* until it answers */
            p[j->npending++] = (pending_t){.ref = ref, .i = i};
        }
    }
    j->left = j->npending;
    if (epic && j->npending == 0) /* not sent (an epic has one pid): still ours */
        ea.free_args(ea.args);
    if (j->left == 0) {
        j->done = NULL;
        post(ag->link, d);
        job_free(j);
        return;
    }
    qsort(p, j->npending, sizeof *p, by_ref);
    j->next = ag->jobs;
    ag->jobs = j;
}

/* A REPLY or TIMEOUT: the answer of one pending request. */
static void settle(agent_t *ag, const shoal_msg_t *msg)
{
    pending_t key = {.ref = msg->ref, .i = 0};
    for (job_t **at = &ag->jobs; *at != NULL; at = &(*at)->next) {
        job_t *j = *at;
        pending_t *p = bsearch(&key, j->pending, j->npending, sizeof *p, by_ref);
        if (p == NULL)
            continue;
        shoal_agent_result_t *res = &j->done->results[p->i];
        res->rc = msg->kind == SHOAL_MSG_TIMEOUT ? SHOAL_ETIMEDOUT : msg->status;
        res->type = msg->type;
        if (res->rc == SHOAL_OK && msg->size != 0) {
            if ((res->data = malloc(msg->size)) == NULL)
                res->rc = SHOAL_ENOMEM;
            else
                memcpy(res->data, msg->data, msg->size);
            res->size = res->data != NULL ? msg->size : 0;
        }
        if (--j->left == 0) {
            *at = j->next;
            post(ag->link, j->done);
            j->done = NULL;
            job_free(j);
        }
        return;
    }
}

static int agent_init(shoal_ctx_t *ctx, void *state, const void *args)
{
    (void)ctx;
    ((agent_t *)state)->link = (shoal_agent_t *)args; /* the agent's reference */
    return SHOAL_OK;
}

static int agent_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    agent_t *ag = state;
    if (msg->kind == SHOAL_MSG_CAST && msg->type == JOB_MSG)
        start(ctx, ag, msg);
    else if (msg->kind == SHOAL_MSG_REPLY || msg->kind == SHOAL_MSG_TIMEOUT)
        settle(ag, msg);
    return SHOAL_OK;
}

static void agent_terminate(shoal_ctx_t *ctx, void *state, int reason)
{
    (void)ctx;
    (void)reason;
    agent_t *ag = state;
    while (ag->jobs != NULL) {
        job_t *j = ag->jobs;
        ag->jobs = j->next;
        job_free(j);
    }
    link_unref(ag->link);
}

static const shoal_behaviour_t agent_behaviour = {
    .name = "control-agent",
    .state_size = sizeof(agent_t),
    .init = agent_init,
    .handle_message = agent_message,
    .terminate = agent_terminate,
};

/* ---- the host thread's side ---------------------------------------------- */

int shoal__agent_start(shoal_runtime_t *rt, shoal_agent_t **out)
{
    *out = NULL;
    shoal_agent_t *l = calloc(1, sizeof *l);
    if (l == NULL)
        return SHOAL_ENOMEM;
    if ((l->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0) {
        free(l);
        return SHOAL_EFAILED;
    }
    pthread_mutex_init(&l->lock, NULL);
    atomic_init(&l->refs, 2); /* the host's and the agent's */
    l->rt = rt;
    shoal_spawn_opts_t opts = {.mailbox_limit = SHOAL_AGENT_QUEUE_MAX};
    int rc = shoal_runtime_spawn(rt, &agent_behaviour, l, &opts, &l->pid);
    if (rc != SHOAL_OK) {
        close(l->efd);
        atomic_store_explicit(&l->refs, 1, memory_order_relaxed); /* no agent */
        link_unref(l);
        return rc;
    }
    *out = l;
    return SHOAL_OK;
}

void shoal__agent_stop(shoal_agent_t *a)
{
    if (a == NULL)
        return;
    shoal_runtime_stop_actor(a->rt, a->pid);
    pthread_mutex_lock(&a->lock);
    a->closed = true;
    shoal_agent_done_t *d = a->done;
    a->done = NULL;
    close(a->efd);
    a->efd = -1;
    pthread_mutex_unlock(&a->lock);
    while (d != NULL) {
        shoal_agent_done_t *next = d->next;
        shoal__agent_done_free(d);
        d = next;
    }
    link_unref(a);
}

int shoal__agent_fd(const shoal_agent_t *a) { return a->efd; }

int shoal__agent_submit(shoal_agent_t *a, uint64_t id, shoal_agent_op_t op, uint32_t type,
                        const void *data, size_t size, const shoal_pid_t *pids, size_t n,
                        uint64_t timeout_ms)
{
    if (n > (SIZE_MAX - sizeof(request_t) - size) / sizeof *pids)
        return SHOAL_EINVAL;
    size_t bytes = sizeof(request_t) + n * sizeof *pids + size;
    request_t *r = malloc(bytes);
    if (r == NULL)
        return SHOAL_ENOMEM;
    *r = (request_t){.id = id,
                     .expires_ms = now_ms() + timeout_ms,
                     .op = op,
                     .type = type,
                     .n = n,
                     .size = size};
    if (n != 0)
        memcpy(r->pids, pids, n * sizeof *pids);
    if (size != 0)
        memcpy(r->pids + n, data, size);
    int rc = shoal_runtime_send_owned(a->rt, a->pid, JOB_MSG, r, bytes, request_free);
    if (rc != SHOAL_OK)
        free(r); /* refused: still ours, and its epic args the caller's */
    return rc;
}

shoal_agent_done_t *shoal__agent_take(shoal_agent_t *a)
{
    uint64_t count;
    ssize_t got = read(a->efd, &count, sizeof count); /* EAGAIN when nothing was posted */
    (void)got;
    pthread_mutex_lock(&a->lock);
    shoal_agent_done_t *d = a->done;
    a->done = NULL;
    pthread_mutex_unlock(&a->lock);
    return d;
}
