/* control.h - shoald's control socket: a Unix stream socket (mode 0600) at
 * runtime.control, served by the host thread between other work.
 *
 * PROTOCOL (one request per connection; text, so `nc -U` works too)
 *   request:  one line, at most 64 KiB: COMMAND [ARGS...] '\n'
 *   response: a status line, then a body, then the server closes:
 *               "0 ok\n"           done; the body is the answer
 *               "1 <reason>\n"     refused (busy, unknown pool, failed reload)
 *               "2 <reason>\n"     a malformed request
 *   commands: status | inspect [POOL] | send POOL DATA | call POOL DATA [TIMEOUT_MS]
 *             | scale POOL N | reload | diff PATH | stop
 * DATA is the rest of the line after POOL (and before TIMEOUT_MS for
 * call: the last word, if it is a number, is the timeout).
 */
#ifndef SHOAL_HOST_CONTROL_H
#define SHOAL_HOST_CONTROL_H

#include <stdbool.h>

#include "host/host.h"

typedef struct shoal_control_s shoal_control_t;

/* Listens at path (an existing socket file nobody answers on is replaced).
 * SHOAL_EBUSY if a live server answers there; SHOAL_EFAILED with err. */
int shoal__control_open(const char *path, shoal_control_t **out, shoal_diag_t *err);
void shoal__control_close(shoal_control_t *c);
/* The listening descriptor, for poll(). */
int shoal__control_fd(const shoal_control_t *c);

/* Accepts one pending connection and answers it (reading its request with a
 * short timeout). *stop is set when the request was `stop`; `config` names
 * the file a `reload` reads. */
void shoal__control_serve(shoal_control_t *c, shoal_host_t *h, const char *config, bool *stop);

#endif
