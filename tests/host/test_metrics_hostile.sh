#!/bin/bash
# test_metrics_hostile.sh BUILD_DIR [SANITIZER] - /metrics when it is big,
# when it is asked for by a flood, and when its server cannot start.
#
#   1. A small reply (2 pools) is rendered for every request: 5 scrapes,
#      shoal_metrics_http_replies_total{reply="rendered"} one more at each,
#      none shared.
#   2. A big one (160 pools, over 256 KiB): 20 scrapes right after one are
#      the same bytes (shared); rendered + shared grow by exactly the 20,
#      and no more renders than whole seconds passed. A reload that adds a
#      pool: the very next scrape shows it (a shared reply is never of
#      older pools).
#   3. A flood of clients that each send GET /metrics and hang up at once,
#      for 3 s: every scrape beside it (one after another) is answered
#      200 within Prometheus's default scrape timeout (10 s: the flood
#      can still fill the kernel's queue of connections, and a SYN it
#      drops is sent again 1 s later, then 2 s after that), and no more
#      renders than whole seconds passed + 1.
#   4. The HTTP server's thread cannot start (a preloaded library fails
#      it, as a machine out of threads would): shoald exits 2 naming the
#      listen key's file:line:col; a reload that moves metrics.listen then
#      fails alike and the old address keeps serving; once threads start
#      again, the reload serves the new one. No descriptor is closed twice
#      (libmicrohttpd closes the socket it was given on this failure).
#      Not under a sanitizer, whose runtime takes the preloaded calls.
. "$(dirname "$0")/lib.sh" "$1"
sanitizer=${2:-}
export SHOAL_SOCKET=$tmp/ctl.sock
command -v python3 > /dev/null || fail "python3 is needed for the HTTP clients"

listen=127.0.0.1:0
NPOOLS=2
header() {
    cat <<YAML
runtime: { control: ctl.sock, threads: 2 }
metrics: { listen: $listen }
log: { level: info }
plugins:
  echo: $plugins/echo/echo.so
pools:
YAML
}
# config [EXTRA]: NPOOLS echo pools, p0 .. (and a pool named EXTRA)
config() {
    local body="" i
    for i in $(seq 0 $((NPOOLS - 1))); do body="$body  p$i: { worker: echo.echo, size: 1 }
"; done
    [ -n "${1:-}" ] && body="$body  $1: { worker: echo.echo, size: 1 }
"
    write "$body"
}
# scrape N OUT: N scrapes back to back, one process; OUT.i their bodies
# (i = 1..N), OUT.t the seconds from the first request to the last reply
scrape() {
    python3 - "http://127.0.0.1:$port/metrics" "$1" "$2" <<'PY' || fail "scrape: $(cat "$2.err")"
import sys, time, urllib.request
url, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
t0 = time.monotonic()
try:
    for i in range(1, n + 1):
        with urllib.request.urlopen(url, timeout=2) as r:
            open("%s.%d" % (out, i), "wb").write(r.read())
except Exception as e:
    open(out + ".err", "w").write("%s" % e)
    sys.exit(1)
open(out + ".t", "w").write("%.3f\n" % (time.monotonic() - t0))
PY
}
# replies FILE KIND: the reply counter of KIND (rendered, shared) in FILE
replies() { sed -n "s/^shoal_metrics_http_replies_total{reply=\"$2\"} //p" "$1"; }
# port_of LOG: the port the last "serving" line of LOG names
port_of() { sed -n 's|.*metrics: serving GET /metrics on http://127.0.0.1:\([0-9]*\)/metrics.*|\1|p' "$1" | tail -1; }

config
start_until "metrics: serving GET /metrics on http://127.0.0.1:"
port=$(port_of "$log")

# ---- 1. small: each request rendered ----------------------------------------
scrape 5 "$tmp/a"
r0=$(replies "$tmp/a.1" rendered)
for i in 2 3 4 5; do
    [ "$(replies "$tmp/a.$i" rendered)/$(replies "$tmp/a.$i" shared)" = "$((r0 + i - 1))/0" ] ||
        fail "small reply $i: rendered $(replies "$tmp/a.$i" rendered), shared $(replies "$tmp/a.$i" shared); the first said rendered $r0"
done
echo "small: 5 scrapes, 5 renders ($(wc -c < "$tmp/a.5") bytes)"

# ---- 2. big: shared ------------------------------------------------------------
NPOOLS=160
config
"$shoalctl" reload > /dev/null || fail "reload to $NPOOLS pools"
scrape 1 "$tmp/b0"
size=$(wc -c < "$tmp/b0.1")
[ "$size" -ge 262144 ] || fail "$NPOOLS pools rendered $size bytes: not big enough to be shared"
grep -q '^shoal_pool_size{pool="p159"} 1$' "$tmp/b0.1" || fail "p159 is not in the big reply"
scrape 20 "$tmp/b"
t=$(cat "$tmp/b.t")
cmp -s "$tmp/b0.1" "$tmp/b.1" || fail "the scrape right after a big one was not the same reply"
sleep 1.5 # past the window of the last render (1 s, or 10 x its time)
scrape 1 "$tmp/b1"
r0=$(replies "$tmp/b0.1" rendered) s0=$(replies "$tmp/b0.1" shared)
r1=$(replies "$tmp/b1.1" rendered) s1=$(replies "$tmp/b1.1" shared)
renders=$((r1 - r0 - 1)) shares=$((s1 - s0)) # between: the 20 (the last one rendered itself)
[ $((renders + shares)) = 20 ] || fail "20 scrapes: $renders rendered + $shares shared"
most=$(awk -v t="$t" 'BEGIN { printf "%d", t }')
[ "$renders" -le "$most" ] || fail "20 scrapes in $t s: $renders renders, at most $most (one a second)"
echo "big: $size bytes; 20 scrapes in $t s: $renders rendered, $shares shared"
config extra
"$shoalctl" reload > /dev/null || fail "reload adding a pool"
scrape 1 "$tmp/b2"
grep -q '^shoal_pool_size{pool="extra"} 1$' "$tmp/b2.1" || fail "the scrape after a reload did not show its new pool"

# ---- 3. a flood of requests that hang up ----------------------------------------
sleep 1.5
scrape 1 "$tmp/c0"
# The flood's 4 threads and a scraper beside them, one process: each
# scrape (urllib, 10 s at most) noted with its status and time.
t0=$(date +%s%N)
python3 - "$port" "$tmp/flood" <<'PY' || fail "the flood's client failed"
import socket, sys, threading, time, urllib.request
port, out = int(sys.argv[1]), sys.argv[2]
sent = [0] * 4
end = time.monotonic() + 3
def run(k):
    while time.monotonic() < end:
        try:
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            s.close()
            sent[k] += 1
        except OSError:
            pass
scrapes = []
def scrape(): # at least 2, the second after the flood if the first waited long
    while time.monotonic() < end or len(scrapes) < 2:
        t = time.monotonic()
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10) as r:
                r.read()
                scrapes.append("%d:%d" % (r.status, (time.monotonic() - t) * 1000))
        except Exception as e:
            scrapes.append("error:%s" % e)
        time.sleep(0.1)
ts = [threading.Thread(target=run, args=(k,)) for k in range(4)] + [threading.Thread(target=scrape)]
for t in ts: t.start()
for t in ts: t.join()
open(out, "w").write("%d %s\n" % (sum(sent), " ".join(scrapes)))
PY
secs=$(((($(date +%s%N) - t0) / 1000000000) + 1))
read -r sent scrapes < "$tmp/flood"
n=$(echo "$scrapes" | wc -w)
sleep 1.5
scrape 1 "$tmp/c1"
renders=$(($(replies "$tmp/c1.1" rendered) - $(replies "$tmp/c0.1" rendered) - 1))
for x in $scrapes; do
    [ "${x%%:*}" = 200 ] || fail "a scrape beside the flood: $x (all: $scrapes)"
done
[ "$renders" -le $((secs + 1)) ] ||
    fail "$renders renders in the $secs s of a flood of $sent requests: more than one a second"
echo "flood: $sent requests that hung up; $n scrapes beside them, every one 200 (status:ms $scrapes); $renders renders in $secs s"
alive
stop_host 0

# ---- 4. the HTTP server's thread does not start ---------------------------------
preload=$build/fixtures/http_thread_fails.so
if [ -n "$sanitizer" ]; then
    echo "SKIP: a $sanitizer build: its runtime takes pthread_create and close before a preloaded library"
    echo "ok"
    exit 0
fi
[ -f "$preload" ] || fail "no $preload"
export SHOAL_PRELOAD_FAIL_HTTP_THREAD=$tmp/no-threads
NPOOLS=2 listen=127.0.0.1:0
config
touch "$tmp/no-threads"
out=$(LD_PRELOAD=$preload "$shoald" --no-table --run-for 5s "$tmp/s.yaml" 2>&1); rc=$?
want="$tmp/s.yaml:2:20: metrics.listen: cannot serve 127.0.0.1:0: the HTTP server did not start"
[ $rc = 2 ] && [ "$out" = "$want" ] || fail "shoald without its HTTP thread: exit $rc: $out
want: $want"
rm "$tmp/no-threads"
# Served on a port of the test's choosing, so that the reload to
# 127.0.0.1:0 below is another address (a new server).
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
listen=127.0.0.1:$port
config
: > "$log"
LD_PRELOAD=$preload "$shoald" --no-table "$tmp/s.yaml" 2> "$log" &
pid=$!
wait_for "metrics: serving GET /metrics on http://127.0.0.1:$port/metrics"
listen=127.0.0.1:0
config
touch "$tmp/no-threads"
out=$("$shoalctl" reload 2>&1) && fail "a reload whose HTTP server cannot start succeeded: $out"
want="shoalctl: reload failed: $tmp/s.yaml:2:20: metrics.listen: cannot serve 127.0.0.1:0: the HTTP server did not start; generation 1 keeps running"
[ "$out" = "$want" ] || fail "the failed reload said: $out
want: $want"
scrape 1 "$tmp/d"
grep -q '^shoal_reloads_total{result="failed"} 1$' "$tmp/d.1" || fail "the failed reload: $(grep reloads_total "$tmp/d.1")"
rm "$tmp/no-threads"
"$shoalctl" reload > /dev/null || fail "the reload once threads start again"
wait_for "metrics: serving GET /metrics on http://127.0.0.1:[0-9]*/metrics (no longer on 127.0.0.1:$port)"
port=$(port_of "$log")
scrape 1 "$tmp/e"
stop_host 0
[ "$(count 'preload: close(')" = 0 ] || fail "a descriptor closed twice: $(grep 'preload: close(' "$log")"
echo "no HTTP thread: start refused at file:line:col, a reload refused and the old address served, no descriptor closed twice"
echo "ok"
