/* shoalctl.c - talks to shoald's control socket (protocol: control.h).
 *
 *   shoalctl [--socket PATH] [--timeout MS] status | inspect [POOL]
 *            | send POOL DATA | call POOL DATA [--timeout MS] | scale POOL N
 *            | reload | diff FILE | stop
 *
 * The socket: --socket PATH, else $SHOAL_SOCKET, else ./shoal.sock.
 * --timeout before the command bounds the whole exchange (connect, write,
 * read; default 5000 ms); after `call`, it is the call's own timeout, and
 * shoalctl then waits that plus 2 s unless --timeout was also given before.
 * Exit: 0 done, 1 refused (busy, unknown pool, failed reload) or no answer
 * in time, 2 usage or no connection.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/client.h"

#define DEFAULT_TIMEOUT_MS 5000
#define CALL_MARGIN_MS 2000  /* beyond a call's own timeout */
#define CALL_DEFAULT_MS 5000 /* shoald's, for a call without --timeout */

static int usage(void)
{
    fprintf(stderr, "usage: shoalctl [--socket PATH] [--timeout MS] COMMAND\n"
                    "  status                      generation, reloads, pools\n"
                    "  inspect [POOL]              a pool's inspection (JSON), or every pool's\n"
                    "  send POOL DATA              send DATA to the pool\n"
                    "  call POOL DATA [--timeout MS]  call the pool, print the reply\n"
                    "  scale POOL N                resize the pool; prints the new size\n"
                    "  reload                      re-read the config (as SIGHUP)\n"
                    "  diff FILE                   what a reload from FILE would change\n"
                    "  stop                        drain every pool and exit\n"
                    "The socket: --socket PATH, else $SHOAL_SOCKET, else ./shoal.sock.\n"
                    "--timeout MS: for the whole exchange (default 5000); after call, the call's.\n"
                    "Exit: 0 done, 1 refused or no answer in time, 2 usage or no connection.\n");
    return 2;
}

static bool millis(const char *s, uint64_t *out)
{
    char *end;
    if (s == NULL || *s < '0' || *s > '9')
        return false;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end != '\0' || errno != 0 || v == 0 || v > 24ULL * 3600 * 1000)
        return false;
    *out = v;
    return true;
}

int main(int argc, char **argv)
{
    const char *path = getenv("SHOAL_SOCKET");
    uint64_t timeout = DEFAULT_TIMEOUT_MS;
    bool timeout_given = false;
    int i = 1;
    while (i + 1 < argc && argv[i][0] == '-') {
        if (strcmp(argv[i], "--socket") == 0) {
            path = argv[i + 1];
        } else if (strcmp(argv[i], "--timeout") == 0) {
            if (!millis(argv[i + 1], &timeout)) {
                fprintf(stderr, "shoalctl: --timeout %s: expected milliseconds (1 to 86400000)\n",
                        argv[i + 1]);
                return 2;
            }
            timeout_given = true;
        } else {
            return usage();
        }
        i += 2;
    }
    if (path == NULL || path[0] == '\0')
        path = "shoal.sock";
    if (i >= argc)
        return usage();
    const char *cmd = argv[i];
    static const char *const known[] = {"status", "inspect", "send", "call", "scale",
                                        "reload", "diff",    "stop", NULL};
    int k = 0;
    while (known[k] != NULL && strcmp(known[k], cmd) != 0)
        k++;
    if (known[k] == NULL)
        return usage();
    bool is_call = strcmp(cmd, "call") == 0, is_diff = strcmp(cmd, "diff") == 0;
    /* The request: the words, a timeout moved to the end for call. */
    char req[65536];
    size_t n = 0;
    const char *call_timeout = NULL;
    int words = 0;
    for (; i < argc; i++) {
        const char *arg = argv[i];
        if (is_call && strcmp(arg, "--timeout") == 0 && i + 1 < argc) {
            call_timeout = argv[++i];
            continue;
        }
        char abs[PATH_MAX];
        if (is_diff && words == 1 && realpath(arg, abs) != NULL)
            arg = abs; /* shoald may run elsewhere */
        if (strchr(arg, '\n') != NULL) {
            fprintf(stderr, "shoalctl: arguments cannot contain a newline\n");
            return 2;
        }
        int w = snprintf(req + n, sizeof req - n, "%s%s", words ? " " : "", arg);
        if (w < 0 || (size_t)w >= sizeof req - n) {
            fprintf(stderr, "shoalctl: request too long\n");
            return 2;
        }
        n += (size_t)w;
        words++;
    }
    if (((is_call || strcmp(cmd, "send") == 0 || strcmp(cmd, "scale") == 0) && words < 3) ||
        (is_diff && words != 2))
        return usage();
    if (call_timeout != NULL) {
        int w = snprintf(req + n, sizeof req - n, " %s", call_timeout);
        if (w < 0 || (size_t)w >= sizeof req - n) {
            fprintf(stderr, "shoalctl: request too long\n");
            return 2;
        }
        n += (size_t)w;
    }
    if (n + 1 >= sizeof req) {
        fprintf(stderr, "shoalctl: request too long\n");
        return 2;
    }
    req[n++] = '\n';
    if (is_call && !timeout_given) {
        uint64_t t = CALL_DEFAULT_MS;
        if (call_timeout != NULL && !millis(call_timeout, &t))
            t = CALL_DEFAULT_MS;
        timeout = t + CALL_MARGIN_MS;
    }
    return shoal__client_ask(path, req, n, timeout, "shoalctl", stdout, stderr);
}
