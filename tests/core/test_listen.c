/* test_listen.c - metrics.listen's addresses (host/listen.c): what parses
 * (IPv4, IPv6 in brackets, port 0) and each error's exact sentence; a
 * socket opened on port 0 gets a real port, and a second one on that port
 * fails with EADDRINUSE. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <unistd.h>

#include "host/listen.h"
#include "support.h"

static void ok(const char *text, int family, uint16_t port)
{
    shoal_listen_t l;
    char why[256] = "";
    CU_ASSERT_EQUAL(shoal__listen_parse(text, &l, why, sizeof why), 0);
    CU_ASSERT_EQUAL(l.addr.ss_family, family);
    uint16_t got = family == AF_INET ? ntohs(((struct sockaddr_in *)&l.addr)->sin_port)
                                     : ntohs(((struct sockaddr_in6 *)&l.addr)->sin6_port);
    CU_ASSERT_EQUAL(got, port);
    CU_ASSERT_STRING_EQUAL(l.text, text);
}

static void bad(const char *text, const char *want)
{
    shoal_listen_t l;
    char why[256] = "";
    CU_ASSERT_EQUAL(shoal__listen_parse(text, &l, why, sizeof why), -1);
    CU_ASSERT_STRING_EQUAL(why, want);
    if (strcmp(why, want) != 0)
        fprintf(stderr, "\n    for:  %s\n    got:  %s\n    want: %s\n", text, why, want);
}

static void test_parse(void)
{
    ok("127.0.0.1:9464", AF_INET, 9464);
    ok("0.0.0.0:0", AF_INET, 0);
    ok("[::1]:9464", AF_INET6, 9464);
    ok("[::]:65535", AF_INET6, 65535);
    bad("", "expected HOST:PORT (e.g. 127.0.0.1:9464 or [::1]:9464)");
    bad("9464", "expected HOST:PORT (e.g. 127.0.0.1:9464; an IPv6 address in brackets: "
                "[::1]:9464)");
    bad(":9464", "expected HOST:PORT (e.g. 127.0.0.1:9464; an IPv6 address in brackets: "
                 "[::1]:9464)");
    bad("::1:9464", "expected HOST:PORT (e.g. 127.0.0.1:9464; an IPv6 address in brackets: "
                    "[::1]:9464)");
    bad("[::1]9464", "expected [IPv6]:PORT (e.g. [::1]:9464)");
    bad("127.0.0.1:65536", "the port '65536' is not a number in 0..65535 (0: any free port)");
    bad("127.0.0.1:-1", "the port '-1' is not a number in 0..65535 (0: any free port)");
    bad("127.0.0.1:", "the port '' is not a number in 0..65535 (0: any free port)");
    bad("127.0.0.1:80x", "the port '80x' is not a number in 0..65535 (0: any free port)");
    bad("localhost:9464", "'localhost' is not a numeric IPv4 address (names are not looked up: "
                          "write e.g. 127.0.0.1, 0.0.0.0 or [::1])");
    bad("[127.0.0.1]:9464", "'127.0.0.1' is not a numeric IPv6 address (names are not looked "
                            "up: write e.g. 127.0.0.1, 0.0.0.0 or [::1])");
}

static void test_open_and_in_use(void)
{
    shoal_listen_t l;
    char why[256];
    CU_ASSERT_EQUAL_FATAL(shoal__listen_parse("127.0.0.1:0", &l, why, sizeof why), 0);
    uint16_t port = 0;
    int fd = shoal__listen_open(&l, 8, &port);
    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT(port != 0);
    char text[32];
    snprintf(text, sizeof text, "127.0.0.1:%u", (unsigned)port);
    shoal_listen_t again;
    CU_ASSERT_EQUAL_FATAL(shoal__listen_parse(text, &again, why, sizeof why), 0);
    uint16_t port2 = 0;
    int fd2 = shoal__listen_open(&again, 8, &port2);
    CU_ASSERT_EQUAL(fd2, -1);
    CU_ASSERT_EQUAL(errno, EADDRINUSE);
    close(fd);
}

int main(void)
{
    static const shoal_test_case_t cases[] = {
        {"parse", test_parse},
        {"open, and a port in use", test_open_and_in_use},
        {NULL, NULL},
    };
    return shoal_test_run("listen", cases);
}
