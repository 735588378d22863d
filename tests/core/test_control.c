/* test_control.c - the control socket (core/host/control.c) against
 * malformed and refused requests, over a raw connection: every one gets a
 * status line with the right code, the host stays up, and a good request
 * still works afterwards. */
#include <CUnit/Basic.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "host/control.h"
#include "host/host.h"
#include "support.h"

#ifndef SHOAL_PLUGIN_DIR
#error "SHOAL_PLUGIN_DIR must name <build>/plugins"
#endif

static char dir[64], sock[96], cfg[128];
static shoal_host_t *host;
static shoal_loader_t *loader;
static shoal_control_t *control;
static pthread_t server;
static atomic_int serving;

/* The host thread's part: answer until told to stop. */
static void *serve(void *arg)
{
    (void)arg;
    while (atomic_load(&serving)) {
        struct pollfd p = {.fd = shoal__control_fd(control), .events = POLLIN};
        if (poll(&p, 1, 20) > 0) {
            bool stop = false;
            shoal__control_serve(control, host, cfg, &stop);
        }
    }
    return NULL;
}

static int setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/shoal-control-XXXXXX");
    if (mkdtemp(dir) == NULL)
        return 1;
    snprintf(sock, sizeof sock, "%s/ctl.sock", dir);
    snprintf(cfg, sizeof cfg, "%s/s.yaml", dir);
    FILE *f = fopen(cfg, "w");
    if (f == NULL)
        return 1;
    fprintf(f,
            "plugins: { echo: %s/echo/echo.so }\npools: { api: { worker: echo.echo, size: 2 } }\n",
            SHOAL_PLUGIN_DIR);
    fclose(f);
    shoal_config_t *c;
    shoal_diag_t err = {0};
    if (shoal__config_load(cfg, &c, &err) != SHOAL_OK || shoal__loader_create(&loader) != 0 ||
        shoal__config_resolve(c, loader, &err) != SHOAL_OK)
        return 1;
    if (shoal__host_start(c, loader, stderr, &host, &err) != SHOAL_OK)
        return 1;
    if (shoal__control_open(sock, &control, &err) != SHOAL_OK)
        return 1;
    atomic_store(&serving, 1);
    return pthread_create(&server, NULL, serve, NULL) != 0;
}

static int teardown(void)
{
    atomic_store(&serving, 0);
    pthread_join(server, NULL);
    shoal__control_close(control);
    shoal__host_destroy(host);
    shoal__loader_destroy(loader);
    unlink(cfg);
    rmdir(dir);
    return 0;
}

/* Sends raw bytes (len of them; the write side is closed after unless
 * keep_open), returns the whole answer. */
static char *ask(const void *req, size_t len, bool close_write)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", sock);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    CU_ASSERT_FATAL(fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0);
    for (size_t off = 0; off < len;) {
        ssize_t w = send(fd, (const char *)req + off, len - off, MSG_NOSIGNAL);
        if (w <= 0)
            break; /* the server may close a request that is too long */
        off += (size_t)w;
    }
    if (close_write)
        shutdown(fd, SHUT_WR);
    static char buf[65536];
    size_t n = 0;
    ssize_t got;
    while (n < sizeof buf - 1 && (got = read(fd, buf + n, sizeof buf - 1 - n)) > 0)
        n += (size_t)got;
    buf[n] = '\0';
    close(fd);
    return buf;
}

static char *ask_line(const char *line) { return ask(line, strlen(line), true); }

static void starts_with(const char *got, const char *want)
{
    CU_ASSERT_EQUAL(strncmp(got, want, strlen(want)), 0);
    if (strncmp(got, want, strlen(want)) != 0)
        fprintf(stderr, "\n    got:  %.200s\n    want: %s...\n", got, want);
}

static void the_socket_is_private(void)
{
    struct stat st;
    CU_ASSERT_EQUAL(stat(sock, &st), 0);
    CU_ASSERT_EQUAL(st.st_mode & 0777, 0600);
    CU_ASSERT(S_ISSOCK(st.st_mode));
    /* A second server on a live socket is refused. */
    shoal_control_t *again;
    shoal_diag_t err = {0};
    CU_ASSERT_EQUAL(shoal__control_open(sock, &again, &err), SHOAL_EBUSY);
}

static void malformed_requests_get_status_2(void)
{
    starts_with(ask_line("\n"), "2 empty request\n");
    starts_with(ask_line("   \n"), "2 empty request\n");
    starts_with(ask_line("frobnicate\n"), "2 unknown command 'frobnicate'");
    starts_with(ask_line("scale api\n"), "2 usage: scale POOL N");
    starts_with(ask_line("scale api many\n"), "2 usage: scale POOL N");
    starts_with(ask_line("scale api 3 4\n"), "2 usage: scale POOL N");
    starts_with(ask_line("scale api 99999999999999999999\n"), "2 usage: scale POOL N");
    starts_with(ask_line("send\n"), "2 usage: send POOL DATA");
    starts_with(ask_line("diff\n"), "2 usage: diff PATH");
    /* No newline before the client closes: not a request. */
    starts_with(ask("status", 6, true), "2 expected one line");
    /* Binary junk with a newline: an unknown command, nothing worse. */
    const unsigned char junk[] = {0xff, 0x00, 0x01, 0x80, ' ', 0xfe, '\n'};
    starts_with(ask(junk, sizeof junk, true), "2 ");
    /* A line over 64 KiB. */
    size_t big = 70 * 1024;
    char *line = malloc(big + 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(line);
    memset(line, 'a', big);
    line[big] = '\n';
    starts_with(ask(line, big + 1, true), "2 expected one line of at most 65536 bytes");
    free(line);
}

static void refusals_get_status_1(void)
{
    starts_with(ask_line("inspect nosuch\n"), "1 unknown pool 'nosuch'\n");
    starts_with(ask_line("send nosuch data\n"), "1 unknown pool 'nosuch'\n");
    starts_with(ask_line("call nosuch data\n"), "1 unknown pool 'nosuch'\n");
    starts_with(ask_line("scale nosuch 3\n"), "1 unknown pool 'nosuch'\n");
    starts_with(ask_line("diff /nonexistent/x.yaml\n"), "1 /nonexistent/x.yaml: cannot read:");
}

static void good_requests_still_work(void)
{
    starts_with(ask_line("status\n"), "0 ok\ngeneration 1\n");
    starts_with(ask_line("scale api 3\n"), "0 ok\n3\n");
    starts_with(ask_line("call api ping\n"), "0 ok\nping\n");
    starts_with(ask_line("send api x\n"), "0 ok\n");
    starts_with(ask_line("inspect api\n"), "0 ok\n{\"pid\":");
    char req[256];
    snprintf(req, sizeof req, "diff %s\n", cfg);
    starts_with(ask_line(req), "0 ok\ngeneration 1 -> 2: api size 3 -> 2\n");
}

int main(void)
{
    if (setup() != 0) {
        fprintf(stderr, "test_control: cannot start a host with %s/echo/echo.so\n",
                SHOAL_PLUGIN_DIR);
        return 1;
    }
    static const shoal_test_case_t cases[] = {
        {"the socket is private (0600) and single", the_socket_is_private},
        {"malformed requests get status 2", malformed_requests_get_status_2},
        {"refusals get status 1", refusals_get_status_1},
        {"good requests still work", good_requests_still_work},
        {NULL, NULL},
    };
    int rc = shoal_test_run("control", cases);
    teardown();
    return rc;
}
