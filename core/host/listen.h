/* listen.h - a TCP address to listen on, as a config writes it:
 * "127.0.0.1:9464", "[::1]:9464", "0.0.0.0:0" (port 0: any free port).
 * Numeric addresses only: no name is looked up.
 */
#ifndef SHOAL_HOST_LISTEN_H
#define SHOAL_HOST_LISTEN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

typedef struct shoal_listen_s {
    struct sockaddr_storage addr; /* AF_INET or AF_INET6, port set */
    socklen_t addr_len;
    char text[64]; /* as written (host and port) */
} shoal_listen_t;

/* Parses HOST:PORT (IPv4 dotted quad, or an IPv6 address in brackets) into
 * *out. 0, or -1 with why (a sentence) set. Any thread. */
int shoal__listen_parse(const char *text, shoal_listen_t *out, char *why, size_t why_size);

/* A socket bound to l and listening (close-on-exec, non-blocking,
 * SO_REUSEADDR), or -1 with errno set. *port: the port it got (the
 * kernel's pick when l's is 0). */
int shoal__listen_open(const shoal_listen_t *l, int backlog, uint16_t *port);

#endif
