/* agent.h - the control socket's agent: an actor that waits on other actors
 * for the host thread, so that thread never does.
 *
 * The host thread hands the agent a job (shoal__agent_submit): one request,
 * a call, a priority call or an inspection, to each of n actors at once,
 * with a timeout counted from the submission. The agent sends them with
 * the asynchronous actor API (shoal_call, shoal_call_priority,
 * shoal_inspect), collects every
 * SHOAL_MSG_REPLY or SHOAL_MSG_TIMEOUT, and when all n are in posts the
 * results back: onto a list the host thread takes (shoal__agent_take),
 * waking it through an eventfd it polls (shoal__agent_fd).
 *
 * The agent runs on the dispatcher like any actor: when every dispatcher
 * thread is stuck, it does not run, and a job is not answered. The host
 * thread keeps its own deadline on every job and answers without the
 * agent then; the agent's late result is taken and thrown away.
 *
 * THREADS: submit, take, fd and stop are the host thread's; the agent's
 * side runs on a dispatcher thread. They share only the link: the list of
 * results (under its mutex), the eventfd, and its reference count (two
 * references: the host's, dropped by stop, and the agent's, dropped when it
 * ends; the last one frees the link). Whichever ends first, the other never
 * touches freed memory.
 */
#ifndef SHOAL_HOST_AGENT_H
#define SHOAL_HOST_AGENT_H

#include <stddef.h>
#include <stdint.h>

#include "shoal/runtime.h"

typedef struct shoal_agent_s shoal_agent_t;

/* What a job asks of each of its actors. */
typedef enum shoal_agent_op_e {
    SHOAL_AGENT_CALL = 0,          /* shoal_call: to a pool, forwarded to a worker */
    SHOAL_AGENT_CALL_PRIORITY = 1, /* shoal_call_priority: to the pool itself */
    SHOAL_AGENT_INSPECT = 2,       /* shoal_inspect: data is the JSON, NUL-terminated */
} shoal_agent_op_t;

/* One actor's answer: rc is SHOAL_OK (data and size hold the reply, data
 * may be NULL when size is 0), SHOAL_ETIMEDOUT (no reply within the job's
 * timeout), the callee's error status, or the error that kept the request
 * from being sent (SHOAL_ENOPROC, SHOAL_EFULL, ...). */
typedef struct shoal_agent_result_s {
    int rc;
    uint32_t type;
    void *data;
    size_t size;
} shoal_agent_result_t;

/* A finished job, in the order its actors were given. */
typedef struct shoal_agent_done_s {
    struct shoal_agent_done_s *next;
    uint64_t id;
    size_t n;
    shoal_agent_result_t results[];
} shoal_agent_done_t;

/* Jobs the agent's mailbox holds: bounded, so requests that pile up while
 * every dispatcher thread is stuck cost bounded memory, and never subject
 * to runtime.max_queued (which refuses only sends into unbounded ones). */
#define SHOAL_AGENT_QUEUE_MAX 256

/* Spawns the agent in rt and opens its eventfd. SHOAL_OK, SHOAL_ENOMEM,
 * SHOAL_EFAILED (no eventfd), or what shoal_runtime_spawn returned. */
int shoal__agent_start(shoal_runtime_t *rt, shoal_agent_t **out);

/* Asks the agent to stop, throws away the results not yet taken, and lets
 * go of the link (results the agent still posts are freed by it). Call
 * before the runtime is destroyed. NULL is a no-op. */
void shoal__agent_stop(shoal_agent_t *a);

/* The eventfd that becomes readable when results were posted; for poll(). */
int shoal__agent_fd(const shoal_agent_t *a);

/* Hands the agent job `id`: op (with type, and size bytes of data, copied)
 * to each of the n actors in pids (copied), each to be answered within
 * timeout_ms from now (a job the agent gets later than that is not sent:
 * its results are all SHOAL_ETIMEDOUT). Returns
 * at once: SHOAL_OK (one shoal_agent_done_t with that id will be posted,
 * unless the agent is stopped first), or SHOAL_ENOMEM, or the error of the
 * send to the agent: SHOAL_EFULL when SHOAL_AGENT_QUEUE_MAX jobs wait
 * (then nothing will be posted). */
int shoal__agent_submit(shoal_agent_t *a, uint64_t id, shoal_agent_op_t op, uint32_t type,
                        const void *data, size_t size, const shoal_pid_t *pids, size_t n,
                        uint64_t timeout_ms);

/* Every result posted since the last call (a list through ->next, in no
 * particular order), NULL if none; clears the eventfd. The caller owns the
 * list: free each with shoal__agent_done_free. */
shoal_agent_done_t *shoal__agent_take(shoal_agent_t *a);

/* Frees one result and the reply data it holds. */
void shoal__agent_done_free(shoal_agent_done_t *d);

#endif
