/* client.h - the client's side of the control socket (protocol in
 * control.h), for shoalctl and shoald --check --diff: one request, one
 * answer, under one deadline for the whole exchange.
 */
#ifndef SHOAL_HOST_CLIENT_H
#define SHOAL_HOST_CLIENT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Connects to the shoald listening at path, sends the request (len bytes,
 * ending with a newline), and copies the body of a "0" answer to out as it
 * comes, or the reason of a "1" or "2" answer (and its body) to err, after
 * "prog: ". Connecting, writing and reading all end within timeout_ms.
 * Never killed by SIGPIPE (it ignores that signal from the first call).
 * Returns the exit status documented in control.h: 0 done; 1 refused, or
 * no answer within timeout_ms ("prog: no answer from shoald at PATH within
 * N ms"); 2 a malformed request, no connection, or a connection closed
 * before a whole status line came. Every failure is one line on err. */
int shoal__client_ask(const char *path, const char *req, size_t len, uint64_t timeout_ms,
                      const char *prog, FILE *out, FILE *err);

#endif
