/* notify.h - shoald under systemd (Type=notify, WatchdogSec=): the
 * service manager's notify protocol, through libsystemd's sd_notify.
 * Compiled into shoald only: libshoal never links libsystemd, and hears of
 * none of this but through the host's reload hooks (host.h, shoal__host_hook).
 *
 * What is sent (each a datagram to $NOTIFY_SOCKET; without it, nothing):
 *   starting      STATUS=starting generation 1: starting pool db, 3 of 6 (its
 *                 first workers run init), when a step of the start has
 *                 lasted 1 s (not sooner: a quick start says only READY=1)
 *   start         READY=1, STATUS=generation 1: 6 pools running
 *   reload begins RELOADING=1, MONOTONIC_USEC=<CLOCK_MONOTONIC in us>,
 *                 STATUS=reloading (generation 1 running)
 *   reload ends   READY=1, STATUS=generation 2: 7 pools running (reloaded)
 *                 or READY=1, STATUS=reload failed: WHY; generation 1 keeps running
 *   pools change  STATUS=generation 2: 6 pools running, 1 draining
 *   stop          STOPPING=1, STATUS=stopping (SIGTERM): draining 6 pools within 5000 ms
 *   watchdog      WATCHDOG=1 every WATCHDOG_USEC / 4, only while the
 *                 dispatcher handles the heartbeat actor's messages: the host
 *                 thread sends it one (priority) each time and pets only if
 *                 the previous one was handled since. When every dispatcher
 *                 thread is stuck, the pets stop (logged once) and systemd
 *                 restarts shoald; they resume (logged) when it moves again.
 *
 * All of it runs on the host thread and never blocks it: a message is
 * queued for a thread of notify.c's own that calls sd_notify (which blocks
 * while the receiver does not read; past 64 queued, messages are dropped
 * and that is logged once), and the heartbeat is a mailbox push. At close,
 * a sender still stuck after 1 s is left behind. WATCHDOG_USEC and
 * WATCHDOG_PID are taken out of the environment at open; an isolated
 * pool's child gets no NOTIFY_SOCKET either (isolated.c).
 */
#ifndef SHOAL_HOST_NOTIFY_H
#define SHOAL_HOST_NOTIFY_H

#include "host/host.h"

typedef struct shoal_notify_s shoal_notify_t;

/* Reads NOTIFY_SOCKET and the watchdog's variables (unsetting the
 * latter) and, with NOTIFY_SOCKET, starts the sender thread. Call before
 * any other thread starts (it changes the environment).
 * NULL when out of memory: then every call below is a no-op too. */
shoal_notify_t *shoal__notify_open(void);

/* The host has started every pool: hooks into h's reloads, spawns the
 * heartbeat actor if the watchdog is on, logs what it will send, and
 * sends READY=1. SHOAL_OK, or the heartbeat's spawn failure (logged; the
 * watchdog is then never petted). */
int shoal__notify_ready(shoal_notify_t *n, shoal_host_t *h);

/* The watchdog's turn (call it every time the host thread wakes): pets it
 * or not, as above, when its period has come. */
void shoal__notify_tick(shoal_notify_t *n, shoal_host_t *h);

/* Milliseconds until shoal__notify_tick has work (-1: never), for poll. */
int shoal__notify_timeout(const shoal_notify_t *n);

/* Sends STATUS= when the generation or the pools' counts have changed since
 * the last one (called once a second). */
void shoal__notify_status(shoal_notify_t *n, shoal_host_t *h);

/* While shoald starts (host.h: starting; called from the start's waits,
 * every SHOAL_ASK_EVERY_MS): STATUS=starting generation 1: STEP (h->step)
 * once a step has lasted 1 s, so that `systemctl status` says what a long
 * start waits for; a start whose steps are quicker says nothing before
 * READY=1. */
void shoal__notify_starting(shoal_notify_t *n, shoal_host_t *h);

/* STOPPING=1: the drain starts, because of why (e.g. "SIGTERM"). */
void shoal__notify_stopping(shoal_notify_t *n, shoal_host_t *h, const char *why, uint64_t drain_ms);

/* Before an exit that skips the clean-up (shoald's status 3): sends what is
 * queued (STOPPING=1 among it), waiting 1 s at most, and stops the sender;
 * frees nothing (the heartbeat actor may still run). */
void shoal__notify_flush(shoal_notify_t *n);

/* Sends what is queued (waiting 1 s at most for the sender), stops the
 * sender and frees n, after the host (and so the heartbeat actor) is
 * gone. */
void shoal__notify_close(shoal_notify_t *n);

#endif
