/* listen.c - TCP listen addresses: parsing what a config writes, and
 * opening the socket. See listen.h. */
#include "host/listen.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int shoal__listen_parse(const char *text, shoal_listen_t *out, char *why, size_t why_size)
{
    memset(out, 0, sizeof *out);
    size_t len = strlen(text);
    if (len == 0 || len >= sizeof out->text) {
        snprintf(why, why_size, "expected HOST:PORT (e.g. 127.0.0.1:9464 or [::1]:9464)");
        return -1;
    }
    char host[64];
    const char *port_text;
    if (text[0] == '[') { /* [v6]:port */
        const char *close = strchr(text, ']');
        if (close == NULL || close[1] != ':' || (size_t)(close - text - 1) >= sizeof host) {
            snprintf(why, why_size, "expected [IPv6]:PORT (e.g. [::1]:9464)");
            return -1;
        }
        memcpy(host, text + 1, (size_t)(close - text - 1));
        host[close - text - 1] = '\0';
        port_text = close + 2;
    } else {
        const char *colon = strrchr(text, ':');
        if (colon == NULL || colon == text || strchr(text, ':') != colon) {
            snprintf(why, why_size,
                     "expected HOST:PORT (e.g. 127.0.0.1:9464; an IPv6 address in brackets: "
                     "[::1]:9464)");
            return -1;
        }
        memcpy(host, text, (size_t)(colon - text));
        host[colon - text] = '\0';
        port_text = colon + 1;
    }
    char *end;
    errno = 0;
    long port = strtol(port_text, &end, 10);
    if (port_text[0] < '0' || port_text[0] > '9' || *end != '\0' || errno != 0 || port < 0 ||
        port > 65535) {
        snprintf(why, why_size, "the port '%s' is not a number in 0..65535 (0: any free port)",
                 port_text);
        return -1;
    }
    struct sockaddr_in *v4 = (struct sockaddr_in *)&out->addr;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&out->addr;
    if (text[0] != '[' && inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons((uint16_t)port);
        out->addr_len = sizeof *v4;
    } else if (text[0] == '[' && inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((uint16_t)port);
        out->addr_len = sizeof *v6;
    } else {
        snprintf(why, why_size,
                 "'%s' is not a numeric %s address (names are not looked up: write e.g. "
                 "127.0.0.1, 0.0.0.0 or [::1])",
                 host, text[0] == '[' ? "IPv6" : "IPv4");
        return -1;
    }
    snprintf(out->text, sizeof out->text, "%s", text);
    return 0;
}

int shoal__listen_open(const shoal_listen_t *l, int backlog, uint16_t *port)
{
    int fd = socket(l->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -1;
    int one = 1;
    struct sockaddr_storage got;
    socklen_t got_len = sizeof got;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        (l->addr.ss_family == AF_INET6 &&
         setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one) != 0) ||
        bind(fd, (const struct sockaddr *)&l->addr, l->addr_len) != 0 || listen(fd, backlog) != 0 ||
        getsockname(fd, (struct sockaddr *)&got, &got_len) != 0)
        goto fail;
    *port = ntohs(got.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&got)->sin6_port
                                            : ((struct sockaddr_in *)&got)->sin_port);
    return fd;
fail:;
    int e = errno;
    close(fd);
    errno = e;
    return -1;
}
