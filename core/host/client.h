/* client.h - the client's side of the control socket (protocol in
 * control.h), for shoalctl and shoald --check --diff: one request, one
 * answer, under one deadline for the whole exchange.
 */
#ifndef SHOAL_HOST_CLIENT_H
#define SHOAL_HOST_CLIENT_H

#include <stdbool.h>
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

/* The most of a "0" answer's body shoal__client_exchange collects for a
 * body callback: the server's own limit on a reply. */
#define SHOAL_CLIENT_BODY_MAX (4 * 1024 * 1024)

/* The most bytes an answer may take, its status line included: shoald's
 * replies stop at 4 MiB (control_conn.h); past this, whatever answers is
 * not shoald, and shoalctl stops reading (a server that sent without end
 * filled 2.4 GB of a terminal in 5 s). */
#define SHOAL_CLIENT_ANSWER_MAX (4 * 1024 * 1024 + 65536)

/* One exchange, as shoal__client_ask, with more said:
 *   origin  where path came from ("from --socket", ...), added to the
 *           "cannot reach" line as "(ORIGIN)"; NULL: nothing added
 *   body    NULL: a "0" answer's body is copied to out as it comes; else
 *           it is collected whole (more than SHOAL_CLIENT_BODY_MAX is an
 *           error, exit 2) and handed to body(arg, data, len, out, err),
 *           whose return is the exit status */
typedef int (*shoal_client_body_fn)(void *arg, const char *data, size_t len, FILE *out, FILE *err);
typedef struct shoal_client_s {
    const char *path, *origin, *prog;
    uint64_t timeout_ms;
    const char *late; /* NULL, or words after "no answer ... within N ms" */
    FILE *out, *err;
    shoal_client_body_fn body;
    void *arg;
} shoal_client_t;
int shoal__client_exchange(const shoal_client_t *cl, const char *req, size_t len);

/* Writes data[0..len) for a terminal: as it is when it is printable text
 * (valid UTF-8 without control characters but tab and newline), followed
 * by a newline if it does not end with one; else escaped, as C writes a
 * string (\n, \t, \r, \\, and \xNN, always two hex digits, for every other
 * byte that is not printable ASCII, NUL included: \x00, never \0, which a
 * digit after it would make octal), followed by a newline. Returns true
 * when it was escaped. */
bool shoal__client_write_text(FILE *out, const char *data, size_t len);

#endif
