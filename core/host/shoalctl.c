/* shoalctl.c - talks to shoald's control socket (protocol: control.h).
 *
 *   shoalctl [--socket PATH] status | inspect [POOL] | send POOL DATA
 *            | call POOL DATA [--timeout MS] | scale POOL N | reload | stop
 *
 * The socket: --socket PATH, else $SHOAL_SOCKET, else ./shoal.sock.
 * Exit: 0 done, 1 refused (busy, unknown pool, failed reload), 2 usage or
 * no connection.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int usage(void)
{
    fprintf(stderr, "usage: shoalctl [--socket PATH] COMMAND\n"
                    "  status                      generation, reloads, pools\n"
                    "  inspect [POOL]              a pool's inspection (JSON), or every pool's\n"
                    "  send POOL DATA              send DATA to the pool\n"
                    "  call POOL DATA [--timeout MS]  call the pool, print the reply\n"
                    "  scale POOL N                resize the pool; prints the new size\n"
                    "  reload                      re-read the config (as SIGHUP)\n"
                    "  stop                        drain every pool and exit\n"
                    "The socket: --socket PATH, else $SHOAL_SOCKET, else ./shoal.sock.\n"
                    "Exit: 0 done, 1 refused, 2 usage or no connection.\n");
    return 2;
}

int main(int argc, char **argv)
{
    const char *path = getenv("SHOAL_SOCKET");
    int i = 1;
    if (i + 1 < argc && strcmp(argv[i], "--socket") == 0) {
        path = argv[i + 1];
        i += 2;
    }
    if (path == NULL || path[0] == '\0')
        path = "shoal.sock";
    if (i >= argc)
        return usage();
    const char *cmd = argv[i];
    static const char *const known[] = {"status", "inspect", "send", "call",
                                        "scale",  "reload",  "stop", NULL};
    int k = 0;
    while (known[k] != NULL && strcmp(known[k], cmd) != 0)
        k++;
    if (known[k] == NULL)
        return usage();
    /* The request: the words, a timeout moved to the end for call. */
    char req[65536];
    size_t n = 0;
    const char *timeout = NULL;
    int words = 0;
    for (; i < argc; i++) {
        if (strcmp(cmd, "call") == 0 && strcmp(argv[i], "--timeout") == 0 && i + 1 < argc) {
            timeout = argv[++i];
            continue;
        }
        if (strchr(argv[i], '\n') != NULL) {
            fprintf(stderr, "shoalctl: arguments cannot contain a newline\n");
            return 2;
        }
        int w = snprintf(req + n, sizeof req - n, "%s%s", words ? " " : "", argv[i]);
        if (w < 0 || (size_t)w >= sizeof req - n) {
            fprintf(stderr, "shoalctl: request too long\n");
            return 2;
        }
        n += (size_t)w;
        words++;
    }
    if ((strcmp(cmd, "send") == 0 || strcmp(cmd, "call") == 0 || strcmp(cmd, "scale") == 0) &&
        words < 3)
        return usage();
    if (timeout != NULL)
        n += (size_t)snprintf(req + n, sizeof req - n, " %s", timeout);
    if (n + 1 >= sizeof req)
        return 2;
    req[n++] = '\n';

    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof sa.sun_path) {
        fprintf(stderr, "shoalctl: socket path too long: %s\n", path);
        return 2;
    }
    memcpy(sa.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        fprintf(stderr, "shoalctl: cannot reach shoald at %s: %s\n", path, strerror(errno));
        return 2;
    }
    for (size_t off = 0; off < n;) {
        ssize_t w = write(fd, req + off, n - off);
        if (w <= 0) {
            fprintf(stderr, "shoalctl: %s: %s\n", path, strerror(errno));
            return 2;
        }
        off += (size_t)w;
    }
    shutdown(fd, SHUT_WR);
    /* The status line, then the body as it comes. */
    char line[2048];
    size_t ln = 0;
    int status = -1;
    char buf[8192];
    ssize_t got;
    while ((got = read(fd, buf, sizeof buf)) > 0) {
        size_t off = 0;
        if (status < 0) {
            while (off < (size_t)got && buf[off] != '\n' && ln + 1 < sizeof line)
                line[ln++] = buf[off++];
            if (off == (size_t)got)
                continue;
            off++; /* the newline */
            line[ln] = '\0';
            status = line[0] == '0' ? 0 : line[0] == '1' ? 1 : 2;
            if (status != 0)
                fprintf(stderr, "shoalctl: %s\n", ln > 2 ? line + 2 : line);
        }
        fwrite(buf + off, 1, (size_t)got - off, status == 0 ? stdout : stderr);
    }
    close(fd);
    if (status < 0) {
        fprintf(stderr, "shoalctl: shoald closed the connection without an answer\n");
        return 2;
    }
    return status;
}
