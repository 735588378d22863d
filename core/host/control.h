/* control.h - shoald's control socket: a Unix stream socket (mode 0600) at
 * runtime.control, served by the host thread between other work, without
 * ever blocking it.
 *
 * PROTOCOL (one request per connection; text, so `nc -U` works too)
 *   request:  one line, at most 64 KiB: COMMAND [ARGS...] '\n'
 *   response: a status line, then a body, then the server closes:
 *               "0 ok\n"           done; the body is the answer
 *               "1 <reason>\n"     refused (busy, unknown pool, failed reload,
 *                                  timed out, too many connections)
 *               "2 <reason>\n"     a malformed request
 *   commands: status | inspect [POOL] | send [type=N] POOL DATA
 *             | call [type=N] POOL DATA [TIMEOUT_MS] | scale POOL N
 *             | scale POOL MIN..MAX | epic POOL [ARGS] | reload | diff [PATH]
 *             | stop
 * DATA is the rest of the line after POOL and its one separator, spaces
 * included (and before TIMEOUT_MS for call: the last word, if it is a
 * number, is the timeout -- `call P  5000` is an empty DATA; 0 and one
 * past 3600000 are refused). A line may end in "\r\n"; one that holds a
 * NUL byte is refused ("2 a request line holds a NUL byte: not read").
 *
 *   status      takes no argument ("2 usage: status" otherwise); the body is
 *               a line per fact (generation, reloads, threads, ledger,
 *               control, one "pool NAME size ..." line per pool, stalls)
 *   send, call  the message goes to the pool with type N: an optional first
 *               word type=N (decimal, or hex after 0x; 0 to 4294967295),
 *               SHOAL_CONTROL_TYPE_DEFAULT (1) without it, the type the
 *               bundled plugins take as their ordinary message (a plugin's
 *               own types, e.g. a stats request, need type=N). Older
 *               clients are not broken: a request without type= means
 *               what it did (but a pool named "type=..." cannot be
 *               addressed by send and call). call's body is the reply's
 *               payload, as it is (any bytes), then one '\n'.
 *   scale       the body is "SIZE asked N min MIN max MAX\n": SIZE the
 *               pool's size now, N what was asked, MIN and MAX the pool's
 *               bounds, which N was clamped to. Older servers answered
 *               "SIZE\n": a client reads the first word as the size.
 *               scale POOL MIN..MAX sets the pool's bounds live
 *               (SHOAL_POOL_SET_BOUNDS; 0 <= MIN <= MAX, 1 <= MAX): the body
 *               is "SIZE bounds MIN..MAX from WAS\n", SIZE the size now,
 *               clamped into them, WAS the size before. A MAX past what the
 *               pool was started for (its max at start) is refused: "1 POOL:
 *               max N is past C, ..."; a malformed MIN..MAX is "2 scale:
 *               ..." (the words shoalctl says too: num.h).
 *   epic        a pull pool's source from the start (a new epic): with
 *               the config's source_args, or with ARGS, the rest of the line:
 *               a YAML mapping checked against the source's args schema
 *               ("2 epic args:LINE:COL: ..." when it does not fit). The body
 *               is "POOL: epic started[ with its own args]\n"; "1 busy: ..."
 *               while an epic runs. The args go to the pool, which frees
 *               them when no source of theirs lives; after a timeout they
 *               are left to it (it may still take them).
 *   diff        what a reload from PATH would change, nothing done; without
 *               PATH, from the file the host reloads from (its own config).
 *               It loads the plugins PATH names that are new (up to 10 s
 *               each), so the request waits for the main loop to run it,
 *               one diff at a time (at most 4 wait: the next is told "1
 *               busy: 4 diff requests already wait ..."); meanwhile the
 *               socket is served as during a reload, status saying
 *               "diffing PATH for T ms" (control_diff.c)
 *   reload      re-reads the host's own config file (as SIGHUP): the
 *               request waits for the host's next reload, run by its main
 *               loop, and is answered with that reload's outcome
 *               ("0 ok\ngeneration N (was M)\n" or "1 reload failed: ...")
 *
 * WHILE A RELOAD RUNS the socket is still served, from inside the reload's
 * waits (control_reload.c): status (with a "reloading generation N from
 * PATH for T ms: STEP" line), groups, inspect, send and call as ever; a
 * pool of the new config is reached by no name until the reload commits
 * ("1 pool 'db' is not running yet: the reload to generation N starts it
 * ..."); reload waits for the next one (at most 16 reload requests wait
 * at once: the next is told "1 busy: 16 reload requests already wait
 * ...", and a reload runs all the same, as after a SIGHUP; so does one
 * whose client went away); stop stops the reload (as SIGTERM); scale, epic
 * and diff are refused "1 busy: a reload to generation N is running ...".
 *
 * WHILE SHOALD STARTS its pools and sources (host.h: starting) the socket
 * is served the same way, from the start's waits (control_reload.c):
 * status (with a "starting generation 1 from PATH for T ms: STEP" line,
 * and the pools started so far), groups and inspect (a pool not started
 * yet: "1 pool 'db' is not running yet: shoald is starting ..."); reload
 * waits, and runs once the start has ended (or is told "1 shoald is
 * stopping: its start failed: ..." when it fails); stop gives the start
 * up (as SIGTERM); send, call, scale, epic and diff are refused "1 busy:
 * shoald is starting ...".
 *
 * DEADLINES AND LIMITS (what one client can cost the host)
 *   - the whole request line must arrive within 2 s of the connection being
 *     accepted (however it trickles in), else the connection is closed;
 *   - the whole reply must be taken by the client within 5 s of being ready,
 *     and may be at most 4 MiB (a bigger one is refused with a status 1
 *     line), else the connection is closed;
 *   - at most 64 connections are open at once; beyond that a new one gets
 *     "1 busy: ..." and is closed at once;
 *   - every connection is non-blocking and in the host thread's poll set,
 *     so a silent, slow or non-reading client never delays another one,
 *     nor a signal, a reload or the table. Closed connections are counted
 *     (status: `control ...` line) and logged at debug.
 *   - status reads the pools' records (host.h), never their actors: it
 *     answers at once whatever the pools do. What waits on an actor (call,
 *     inspect, scale) runs in an agent actor (agent.h), never on the host
 *     thread: call waits TIMEOUT_MS (default 5 s, at most an hour), inspect
 *     and scale 5 s. The host thread keeps its own deadline (those plus
 *     500 ms), so a request is answered even when every dispatcher thread
 *     is stuck: a pool that did not answer is shown as
 *     {"error":"unresponsive"} (inspect), and call and scale answer
 *     "1 timed out: ...".
 *   - diff and reload read only a regular file (never a FIFO, a device or a
 *     directory), opened without blocking.
 */
#ifndef SHOAL_HOST_CONTROL_H
#define SHOAL_HOST_CONTROL_H

#include <poll.h>
#include <stdbool.h>

#include "host/host.h"

typedef struct shoal_control_s shoal_control_t;

/* The message type of a send or call without type=N. */
#define SHOAL_CONTROL_TYPE_DEFAULT 1u

/* The most descriptors shoal__control_pollfds fills: the listening socket,
 * the agent's eventfd and one per open connection. */
#define SHOAL_CONTROL_CONNS_MAX 64
#define SHOAL_CONTROL_POLLFDS (2 + SHOAL_CONTROL_CONNS_MAX)

/* Listens at path (an existing socket file nobody answers on is replaced).
 * SHOAL_EBUSY if a live server answers there; SHOAL_EFAILED with err. No
 * connection is accepted before shoal__control_start. */
int shoal__control_open(const char *path, shoal_control_t **out, shoal_diag_t *err);

/* Serves h from now on: spawns the agent actor in h's runtime; `config`
 * names the file a `reload` reads (kept by reference). h may still be
 * starting (shoal__host_create done, its pools not yet): then it is
 * served as WHILE SHOALD STARTS says, from shoal__control_serve. SHOAL_OK
 * or what shoal__agent_start returned. */
int shoal__control_start(shoal_control_t *c, shoal_host_t *h, const char *config);

/* Answers every request still waiting ("1 shoald is stopping"), gives each
 * open connection one last non-blocking write, closes them and the socket
 * (its file removed), and stops the agent. Call before the runtime is
 * destroyed. NULL is a no-op. */
void shoal__control_close(shoal_control_t *c);

/* A crash report (runtime/fault.h) removes this control socket -- the one
 * made, not whatever is at its path then. Returns as shoal__fault_set_unlink. */
int shoal__control_unlink_on_crash(const shoal_control_t *c);

/* shoald has begun to stop: from now on status, groups and inspect are
 * served (inspect NAME finds the newest pool of that name, draining), and
 * every other request is answered "1 shoald is stopping ...". A `reload`
 * waiting is answered that it was not done, and why, when why is not NULL
 * (e.g. "its start failed: FILE:L:C: ..."). */
void shoal__control_set_stopping(shoal_control_t *c, const char *why);

/* Fills fds (room for SHOAL_CONTROL_POLLFDS) with what the control socket
 * waits on now; returns how many. Pass the same fds, after poll(), to
 * shoal__control_handle. */
size_t shoal__control_pollfds(shoal_control_t *c, struct pollfd *fds);

/* ms (>= 0) until the next deadline of a connection or a job, or -1 when
 * none: poll() no longer than that. */
int shoal__control_timeout(const shoal_control_t *c);

/* Does what the events in fds[0..n) (from shoal__control_pollfds, after
 * poll()) and the deadlines passed call for: accepts, reads, answers,
 * writes, closes. Never blocks on a client or an actor. Sets *stop when it
 * answered a `stop` request. Call after every poll(), timed out or not. */
void shoal__control_handle(shoal_control_t *c, const struct pollfd *fds, size_t n, bool *stop);

/* While shoald starts, a reload runs or a diff runs on the host thread
 * (control_reload.c and control_diff.c say what is served then): handles
 * what is ready on the socket now, without waiting. shoald calls it from
 * their waits (host.h: interrupted; the loader's tend). Sets *stop for a
 * `stop`. A no-op otherwise, or inside shoal__control_handle. */
void shoal__control_serve(shoal_control_t *c, bool *stop);

/* A SIGHUP: a reload is wanted, in its place among the requests (after
 * the diffs asked before it), as a `reload` request without a client. */
void shoal__control_hup(shoal_control_t *c);

/* Whether a `reload` request waits for a reload that has not begun, and
 * no diff asked before it waits: the main loop then runs one
 * (shoal__host_reload), which answers it. */
bool shoal__control_reload_wanted(const shoal_control_t *c);

/* Whether a `diff` request waits to be run (never while shoald stops, nor
 * while one runs), and running the first that waits -- one a call, unless
 * a reload asked before it waits -- on the host thread, outside
 * shoal__control_handle: it may wait on plugins it loads, serving the
 * socket meanwhile from the loader's tend (control_diff.c). A stop (the
 * host's `interrupted`) ends it at its next plugin; what it loaded is
 * then released after the drain (shoal__host_keep_until_end). */
bool shoal__control_diff_wanted(shoal_control_t *c);
void shoal__control_diff_run(shoal_control_t *c);
/* Whether a diff runs now (c NULL: no). */
bool shoal__control_diffing(const shoal_control_t *c);

#endif
