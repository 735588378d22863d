/* test_control.c - the control socket (core/host/control.c, control_cmd.c,
 * agent.c) over raw connections, with a host behind it served the way
 * shoald serves it (pollfds, poll, handle on one thread): malformed and
 * refused requests get the right status line; a trickling client is
 * dropped at its deadline while others are served; silent connections
 * cost others nothing; past 64 connections a new one is refused at once;
 * diff refuses a FIFO and a directory at once; a failed reload says
 * file:line:col; with every dispatcher thread stuck, status and inspect
 * still answer (status from the pools' records, inspect: each pool
 * unresponsive), a call times out, and past SHOAL_AGENT_QUEUE_MAX waiting
 * jobs a request is refused at once; closing answers the clients still
 * waiting, and frees the args of an epic the agent never sent. */
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
#include <time.h>
#include <unistd.h>

#include "host/agent.h"
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
static bool server_running;

/* The host thread's part, as shoald's loop does it: answer until told to
 * stop. */
static void *serve(void *arg)
{
    (void)arg;
    while (atomic_load(&serving)) {
        struct pollfd fds[SHOAL_CONTROL_POLLFDS];
        size_t n = shoal__control_pollfds(control, fds);
        int ms = shoal__control_timeout(control);
        poll(fds, n, ms < 0 || ms > 20 ? 20 : ms);
        bool stop = false;
        shoal__control_handle(control, fds, n, &stop);
        if (!stop && shoal__control_diff_wanted(control)) /* a `diff` waits for it */
            shoal__control_diff_run(control);
        if (!stop && shoal__control_reload_wanted(control)) /* a `reload` waits for it */
            (void)shoal__host_reload(host, cfg, NULL, 0);
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
    /* No compensating threads: "every dispatcher thread stuck" must stay
     * so (test_monitor tests them). */
    fprintf(f,
            "runtime: { threads: 2, max_extra_threads: 0 }\n"
            "plugins: { echo: %s/echo/echo.so, sleep: %s/sleep/sleep.so, seq: %s/seq/seq.so }\n"
            "pools:\n"
            "  api: { worker: echo.echo, size: 2 }\n"
            "  slow: { worker: sleep.sleep, size: 1, args: { latency: 2s } }\n"
            "  jobs: { kind: pull, worker: echo.echo, size: 1, source: seq.seq,\n"
            "          source_args: { to: 3 } }\n",
            SHOAL_PLUGIN_DIR, SHOAL_PLUGIN_DIR, SHOAL_PLUGIN_DIR);
    fclose(f);
    shoal_config_t *c;
    shoal_diag_t err = {0};
    if (shoal__config_load(cfg, &c, &err) != SHOAL_OK || shoal__loader_create(&loader) != 0 ||
        shoal__config_resolve(c, loader, &err) != SHOAL_OK)
        return 1;
    if (shoal__host_start(c, loader, stderr, &host, &err) != SHOAL_OK)
        return 1;
    if (shoal__control_open(sock, &control, &err) != SHOAL_OK ||
        shoal__control_start(control, host, cfg) != SHOAL_OK)
        return 1;
    atomic_store(&serving, 1);
    server_running = pthread_create(&server, NULL, serve, NULL) == 0;
    return !server_running;
}

/* Every dispatcher thread held in a handler, until released. More
 * blockers than threads are sent a message each (the scheduler may queue
 * several on one thread's ring; a sibling steals the rest), and a hold
 * waits until as many are inside their handler as there are threads. */
static atomic_int inside, finished, released;
static int blocks_sent;
static shoal_pid_t blockers[64];
static unsigned nblockers;

static int blocker_message(shoal_ctx_t *ctx, void *state, const shoal_msg_t *msg)
{
    (void)ctx, (void)state, (void)msg;
    atomic_fetch_add(&inside, 1);
    while (!atomic_load(&released)) {
        struct timespec nap = {0, 1000000};
        nanosleep(&nap, NULL);
    }
    atomic_fetch_sub(&inside, 1);
    atomic_fetch_add(&finished, 1);
    return 0;
}

static const shoal_behaviour_t blocker = {.name = "blocker", .handle_message = blocker_message};

/* Holds every dispatcher thread of the host's runtime in a blocker's
 * handler. Whether it does. */
static bool hold_every_thread(void)
{
    unsigned n = shoal_runtime_threads(host->rt), want = 4 * n < 64 ? 4 * n : 64;
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&finished) == blocks_sent, 10); /* the last hold's are done */
    if (atomic_load(&finished) != blocks_sent)
        return false;
    atomic_store(&released, 0);
    while (nblockers < want)
        if (shoal_runtime_spawn(host->rt, &blocker, NULL, NULL, &blockers[nblockers++]) != SHOAL_OK)
            return false;
    for (unsigned i = 0; i < want; i++)
        if (shoal_runtime_send(host->rt, blockers[i], 1, NULL, 0) == SHOAL_OK)
            blocks_sent++;
    SHOAL_TEST_WAIT_UNTIL(atomic_load(&inside) == (int)n, 10);
    return atomic_load(&inside) == (int)n;
}

static void release_blockers(void) { atomic_store(&released, 1); }

static void stop_server(void)
{
    if (!server_running)
        return;
    atomic_store(&serving, 0);
    pthread_join(server, NULL);
    server_running = false;
}

static int teardown(void)
{
    stop_server();
    shoal__control_close(control); /* NULL if a case closed it */
    release_blockers();
    shoal__host_destroy(host);
    shoal__loader_destroy(loader);
    unlink(cfg);
    rmdir(dir);
    return 0;
}

static int connect_to_server(void)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", sock);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* Everything fd gives until its end (at most 20 s), into buf. */
static size_t read_all(int fd, char *buf, size_t size)
{
    size_t n = 0;
    double end = shoal_test_now() + 20;
    while (n < size - 1 && shoal_test_now() < end) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 100) <= 0)
            continue;
        ssize_t got = read(fd, buf + n, size - 1 - n);
        if (got <= 0)
            break;
        n += (size_t)got;
    }
    buf[n] = '\0';
    return n;
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
    read_all(fd, buf, sizeof buf); /* a server that never answers fails the test, not hangs it */
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
    starts_with(ask_line("send\n"), "2 usage: send [type=N] POOL DATA");
    CU_ASSERT_STRING_EQUAL(ask_line("send type=x api d\n"),
                           "2 usage: send [type=N] POOL DATA (N a message type, 0 to "
                           "4294967295)\n");
    starts_with(ask_line("call type=4294967296 api d\n"), "2 usage: call [type=N] POOL DATA");
    starts_with(ask_line("call type=1\n"), "2 usage: call [type=N] POOL DATA");
    CU_ASSERT_STRING_EQUAL(ask_line("status now\n"), "2 usage: status\n");
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

/* diff opens only a regular file: a FIFO (whose open would wait for a
 * writer forever) and a directory are refused, at once. */
static void diff_refuses_what_is_not_a_file(void)
{
    char fifo[160], req[200], want[240];
    snprintf(fifo, sizeof fifo, "%s/fifo.yaml", dir);
    CU_ASSERT_EQUAL_FATAL(mkfifo(fifo, 0600), 0);
    snprintf(req, sizeof req, "diff %s\n", fifo);
    snprintf(want, sizeof want, "1 %s: not a regular file (a FIFO)\n", fifo);
    double t0 = shoal_test_now();
    CU_ASSERT_STRING_EQUAL(ask_line(req), want);
    snprintf(req, sizeof req, "diff %s\n", dir);
    snprintf(want, sizeof want, "1 %s: not a regular file (a directory)\n", dir);
    CU_ASSERT_STRING_EQUAL(ask_line(req), want);
    CU_ASSERT(shoal_test_now() - t0 < 1.0); /* liveness: nothing waited */
    unlink(fifo);
}

static void good_requests_still_work(void)
{
    starts_with(ask_line("status\n"), "0 ok\ngeneration 1\n");
    /* scale: the size, what was asked and the bounds (api: 1 to 1024) */
    CU_ASSERT_STRING_EQUAL(ask_line("scale api 3\n"), "0 ok\n3 asked 3 min 1 max 1024\n");
    CU_ASSERT_STRING_EQUAL(ask_line("call api ping\n"), "0 ok\nping\n");
    /* type=N: echo answers its stats type with 32 bytes of counters */
    char *stats = ask_line("call type=0xFFFF0001 api ping\n");
    CU_ASSERT_EQUAL(memcmp(stats, "0 ok\n", 5), 0);
    CU_ASSERT_STRING_NOT_EQUAL(stats, "0 ok\nping\n");
    CU_ASSERT_STRING_EQUAL(ask_line("call type=7 api ping\n"), "0 ok\nping\n");
    CU_ASSERT_STRING_EQUAL(ask_line("send type=7 api x\n"), "0 ok\n");
    starts_with(ask_line("call api ping 1000\n"), "0 ok\nping\n");
    starts_with(ask_line("send api x\n"), "0 ok\n");
    starts_with(ask_line("inspect api\n"), "0 ok\n{\"pid\":");
    starts_with(ask_line("inspect\n"), "0 ok\n{\"api\":{\"pid\":");
    CU_ASSERT_PTR_NOT_NULL(strstr(ask_line("status\n"), "\npool api size 3 target 3 in_flight "));
    char req[256];
    snprintf(req, sizeof req, "diff %s\n", cfg);
    starts_with(ask_line(req), "0 ok\ngeneration 1 -> 2: api size 3 -> 2\n");
    /* Without PATH: the host's own config file, the same one here. */
    CU_ASSERT_STRING_EQUAL(ask_line("diff\n"), "0 ok\ngeneration 1 -> 2: api size 3 -> 2\n");
}

/* A failed reload over the socket says what failed, where. */
static void a_failed_reload_says_where(void)
{
    char good[1024], want[600];
    FILE *f = fopen(cfg, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    size_t n = fread(good, 1, sizeof good - 1, f);
    good[n] = '\0';
    fclose(f);
    f = fopen(cfg, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fprintf(f,
            "plugins: { echo: %s/echo/echo.so }\npools:\n  api: { worker: echo.echo, size: -1 }\n",
            SHOAL_PLUGIN_DIR);
    fclose(f);
    snprintf(want, sizeof want,
             "1 reload failed: %s:3:35: pools.api.size: -1 is out of range: expected 0 to 65536; "
             "generation 1 keeps running\n",
             cfg);
    CU_ASSERT_STRING_EQUAL(ask_line("reload\n"), want);
    f = fopen(cfg, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(good, f);
    fclose(f);
    starts_with(ask_line("status\n"), "0 ok\ngeneration 1\nreloads 0 ok, 1 failed\n");
}

/* The counters in status's control line. */
static void control_counts(unsigned long *open, unsigned long *dropped, unsigned long *refused)
{
    const char *line = strstr(ask_line("status\n"), "\ncontrol ");
    unsigned long accepted = 0;
    *open = *dropped = *refused = 99999;
    CU_ASSERT_PTR_NOT_NULL_FATAL(line);
    CU_ASSERT_EQUAL(sscanf(line, "\ncontrol %lu open, %lu accepted, %lu dropped, %lu refused", open,
                           &accepted, dropped, refused),
                    4);
}

/* One byte every 300 ms: the whole request has 2 s, however it trickles.
 * The client is dropped then (with a line saying so), and every other
 * request meanwhile is answered. */
static void a_trickling_client_is_dropped_at_its_deadline(void)
{
    unsigned long open0, dropped0, refused0, open1, dropped1, refused1;
    control_counts(&open0, &dropped0, &refused0);
    int fd = connect_to_server();
    CU_ASSERT_FATAL(fd >= 0);
    const char *req = "status status status status status"; /* never a newline */
    double t0 = shoal_test_now();
    bool closed = false;
    unsigned answered = 0, sent = 0;
    char buf[256];
    while (!closed && sent < strlen(req) && shoal_test_now() - t0 < 5.0) {
        if (send(fd, req + sent, 1, MSG_NOSIGNAL) == 1)
            sent++;
        answered += strncmp(ask_line("status\n"), "0 ok\n", 5) == 0;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        closed = poll(&p, 1, 300) > 0;
    }
    CU_ASSERT(closed);
    CU_ASSERT_EQUAL(answered, sent); /* every status asked meanwhile was answered */
    read_all(fd, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "2 no whole request line within 2000 ms\n");
    close(fd);
    control_counts(&open1, &dropped1, &refused1);
    CU_ASSERT_EQUAL(dropped1, dropped0 + 1);
    CU_ASSERT_EQUAL(refused1, refused0);
}

/* 20 connections that say nothing: a status asked after them is answered
 * at once (they are not served one at a time); then they are dropped at
 * their deadline. */
static void silent_connections_cost_others_nothing(void)
{
    unsigned long open0, dropped0, refused0, open1, dropped1, refused1;
    control_counts(&open0, &dropped0, &refused0);
    int fds[20];
    for (int i = 0; i < 20; i++)
        CU_ASSERT_FATAL((fds[i] = connect_to_server()) >= 0);
    double t0 = shoal_test_now();
    starts_with(ask_line("status\n"), "0 ok\ngeneration 1\n");
    CU_ASSERT(shoal_test_now() - t0 < 1.0); /* liveness, not speed: the deadline is 2 s */
    control_counts(&open1, &dropped1, &refused1);
    CU_ASSERT_EQUAL(open1, 21); /* the 20 and this status */
    char buf[256];
    for (int i = 0; i < 20; i++) {
        read_all(fds[i], buf, sizeof buf);
        CU_ASSERT_STRING_EQUAL(buf, "2 no whole request line within 2000 ms\n");
        close(fds[i]);
    }
    control_counts(&open1, &dropped1, &refused1);
    CU_ASSERT_EQUAL(dropped1, dropped0 + 20);
    CU_ASSERT_EQUAL(open1, 1);
}

/* At most 64 connections: the 65th is told so and closed at once. */
static void past_64_connections_a_new_one_is_refused(void)
{
    unsigned long open0, dropped0, refused0, open1, dropped1, refused1;
    control_counts(&open0, &dropped0, &refused0);
    int fds[SHOAL_CONTROL_CONNS_MAX];
    for (int i = 0; i < SHOAL_CONTROL_CONNS_MAX; i++)
        CU_ASSERT_FATAL((fds[i] = connect_to_server()) >= 0);
    int extra = connect_to_server();
    CU_ASSERT_FATAL(extra >= 0);
    char buf[256];
    read_all(extra, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "1 busy: too many control connections open (at most 64)\n");
    close(extra);
    for (int i = 0; i < SHOAL_CONTROL_CONNS_MAX; i++) { /* each a whole request: answered */
        CU_ASSERT_EQUAL(send(fds[i], "send api x\n", 11, MSG_NOSIGNAL), 11);
        read_all(fds[i], buf, sizeof buf);
        CU_ASSERT_STRING_EQUAL(buf, "0 ok\n");
        close(fds[i]);
    }
    control_counts(&open1, &dropped1, &refused1);
    CU_ASSERT_EQUAL(refused1, refused0 + 1);
    CU_ASSERT_EQUAL(dropped1, dropped0);
}

/* With every dispatcher thread stuck in a handler, the agent cannot run:
 * the host thread answers at its own deadline: inspect shows each pool
 * unresponsive, a call times out; status, which reads the pools' records,
 * still has every pool's line. Afterwards all is as before. */
static void every_thread_stuck_status_and_inspect_answer(void)
{
    CU_ASSERT_FATAL(hold_every_thread());
    const char *got = ask_line("status\n");
    starts_with(got, "0 ok\ngeneration 1\n");
    /* status reads the records: every pool's line, at once */
    CU_ASSERT_PTR_NOT_NULL(strstr(got, "\npool api size 3 target 3 in_flight "));
    CU_ASSERT_STRING_EQUAL(ask_line("inspect api\n"), "0 ok\n{\"error\":\"unresponsive\"}\n");
    CU_ASSERT_STRING_EQUAL(ask_line("inspect\n"), "0 ok\n{\"api\":{\"error\":\"unresponsive\"},"
                                                  "\"slow\":{\"error\":\"unresponsive\"},"
                                                  "\"jobs\":{\"error\":\"unresponsive\"}}\n");
    CU_ASSERT_STRING_EQUAL(ask_line("call api ping 100\n"),
                           "1 timed out: no answer within 600 ms (the runtime did not run the "
                           "control agent: are all its threads busy?)\n");
    CU_ASSERT_STRING_EQUAL(ask_line("send api x\n"), "0 ok\n"); /* send never waits */
    /* The 3 jobs above still wait in the agent's mailbox; it holds
     * SHOAL_AGENT_QUEUE_MAX: of 300 more calls (60 at a time), 253 are
     * taken (and time out), 47 are refused at once. */
    int taken = 0, busy = 0;
    for (int round = 0; round < 5; round++) {
        int fds[60];
        for (int i = 0; i < 60; i++) {
            CU_ASSERT_FATAL((fds[i] = connect_to_server()) >= 0);
            CU_ASSERT_EQUAL(send(fds[i], "call api ping 1\n", 16, MSG_NOSIGNAL), 16);
        }
        for (int i = 0; i < 60; i++) {
            char buf[256];
            read_all(fds[i], buf, sizeof buf);
            close(fds[i]);
            if (strncmp(buf, "1 timed out: no answer within 501 ms", 36) == 0)
                taken++;
            else if (strcmp(buf, "1 busy: 256 requests already wait for the control agent (are "
                                 "the dispatcher threads stuck?)\n") == 0)
                busy++;
            else
                CU_FAIL(buf);
        }
    }
    CU_ASSERT_EQUAL(taken, SHOAL_AGENT_QUEUE_MAX - 3);
    CU_ASSERT_EQUAL(busy, 300 - (SHOAL_AGENT_QUEUE_MAX - 3));
    release_blockers();
    /* The agent runs again and throws the stale jobs away (past their
     * timeout, none is sent): its mailbox takes requests again. */
    const char *answer = ask_line("call api ping\n");
    for (int i = 0; i < 500 && strncmp(answer, "1 busy: ", 8) == 0; i++) {
        struct timespec ms10 = {0, 10 * 1000 * 1000};
        nanosleep(&ms10, NULL);
        answer = ask_line("call api ping\n");
    }
    starts_with(answer, "0 ok\nping\n");
    CU_ASSERT_PTR_NOT_NULL(strstr(ask_line("status\n"), "\npool api size 3 target 3 in_flight "));
}

/* A call whose pool answers later than its timeout: the agent's own
 * timeout answers, naming the pool (the slow pool sleeps 2 s a message). */
static void a_call_past_its_timeout_times_out(void)
{
    CU_ASSERT_STRING_EQUAL(ask_line("call slow late 200\n"),
                           "1 timed out: no reply from pool slow within 200 ms\n");
    starts_with(ask_line("inspect slow\n"), "0 ok\n{\"pid\":"); /* the pool itself answers */
}

/* Closing the control socket answers the clients still waiting. An epic
 * with its own args whose job the agent never read (every thread held, the
 * agent stopped first) has them freed with the job: under LeakSanitizer
 * (the asan job) they were a leak -- found by tests/fuzz/fuzz_control.c. */
static void closing_answers_waiting_clients(void)
{
    CU_ASSERT_FATAL(hold_every_thread());
    int fd = connect_to_server(), epic = connect_to_server();
    CU_ASSERT_FATAL(fd >= 0 && epic >= 0);
    CU_ASSERT_EQUAL(send(fd, "call api ping 60000\n", 20, MSG_NOSIGNAL), 20);
    CU_ASSERT_EQUAL(send(epic, "epic jobs {from: 1, to: 2}\n", 27, MSG_NOSIGNAL), 27);
    unsigned long waited = 0;
    struct pollfd p[2] = {{.fd = fd, .events = POLLIN}, {.fd = epic, .events = POLLIN}};
    while (poll(p, 2, 10) == 0 && waited++ < 50) /* 0.5 s: they are waiting for their jobs */
        continue;
    CU_ASSERT_EQUAL(p[0].revents, 0);
    CU_ASSERT_EQUAL(p[1].revents, 0);
    stop_server();
    shoal__control_close(control);
    control = NULL;
    char buf[256];
    read_all(fd, buf, sizeof buf);
    close(fd);
    CU_ASSERT_STRING_EQUAL(buf, "1 shoald is stopping\n");
    read_all(epic, buf, sizeof buf);
    close(epic);
    CU_ASSERT_STRING_EQUAL(buf, "1 shoald is stopping\n");
    release_blockers();
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
        {"diff refuses a FIFO and a directory, at once", diff_refuses_what_is_not_a_file},
        {"good requests still work", good_requests_still_work},
        {"a failed reload says file:line:col", a_failed_reload_says_where},
        {"a trickling client is dropped at its 2 s deadline",
         a_trickling_client_is_dropped_at_its_deadline},
        {"20 silent connections cost other clients nothing",
         silent_connections_cost_others_nothing},
        {"past 64 connections a new one is refused at once",
         past_64_connections_a_new_one_is_refused},
        {"every dispatcher thread stuck: status and inspect answer",
         every_thread_stuck_status_and_inspect_answer},
        {"a call past its timeout times out, naming the pool", a_call_past_its_timeout_times_out},
        {"closing answers the clients still waiting", closing_answers_waiting_clients},
        {NULL, NULL},
    };
    int rc = shoal_test_run("control", cases);
    teardown();
    return rc;
}
