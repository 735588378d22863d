#!/bin/bash
# test_metrics.sh BUILD_DIR - shoald's Prometheus endpoint (metrics.listen).
#
#   1. --check: a malformed listen address is an error at its
#      file:line:col; an IPv6 one is fine.
#   2. A loadgen sends exactly 20,000 messages into an echo pool: /metrics
#      passes `promtool check metrics` (when promtool is on PATH);
#      forwarded and handled are 20,000 (+ 3 after three `shoalctl send`),
#      refused equals the loadgen's EBUSY count, the ledger equals the
#      pools' sums; each histogram's buckets are cumulative, +Inf ==
#      _count, _count <= handled; 404 for another path, 405 for POST.
#   3. Reloads: a new pool's series appear, a removed pool's go while the
#      ledger keeps its counts; generation and reload counts follow, a failed
#      reload is counted; a new metrics.listen is served and the old one
#      closed; one in use fails the reload (file:line:col, the address) and
#      the old one keeps serving.
#   4. 100 clients that send half a request and never read, and 20 that
#      send a whole one and never read: another scrape answers within 2 s,
#      a reload and a send go through.
#   4b. 300 clients that trickle half a request: the 44 past 256 each
#      evict the oldest, a scrape evicts one more and is answered within
#      2 s; shoal_metrics_http_evicted_total counts 45 exactly,
#      shoal_metrics_http_connections 256 at the next scrape; a warn line
#      says it.
#   5. Scrapes in a loop while 40 reloads add and remove a pool under load
#      (TSan runs this): every scrape answers 200.
#   6. The port in use: a second shoald exits 2 naming file:line:col and
#      the address. An IPv6 address ([::1]:0) serves too, where ::1 exists.
#   7. A real Prometheus server (when `prometheus` is on PATH) scrapes
#      shoald every second and answers a query for
#      shoal_pool_messages_forwarded_total{pool="api"} with a value > 0.
#   8. A reload without metrics: stops serving; one with it serves again.
. "$(dirname "$0")/lib.sh" "$1"
export SHOAL_SOCKET=$tmp/ctl.sock
command -v python3 > /dev/null || fail "python3 is needed for the HTTP clients"

# scrape [PATH [METHOD]]: the body of http://127.0.0.1:$port/PATH (status
# and body on failure: "HTTP 404" ...), 2 s at most
scrape() {
    python3 - "http://127.0.0.1:$port${1:-/metrics}" "${2:-GET}" <<'PY'
import sys, urllib.request, urllib.error
req = urllib.request.Request(sys.argv[1], method=sys.argv[2], data=b"x" if sys.argv[2] == "POST" else None)
try:
    with urllib.request.urlopen(req, timeout=2) as r:
        sys.stdout.write(r.read().decode())
except urllib.error.HTTPError as e:
    print("HTTP %d %s" % (e.code, e.headers.get("Allow", "")))
except Exception as e:
    print("ERROR %s" % e)
    sys.exit(1)
PY
}
# scrape_beside FLAG WHAT: once the clients have made FLAG, a scrape into
# $tmp/m answers within 2 s beside WHAT
scrape_beside() {
    local t0 ms
    for _ in $(seq 1 500); do [ -e "$1" ] && break; sleep 0.01; done
    [ -e "$1" ] || fail "the clients of '$2' did not connect"
    t0=$(date +%s%N)
    scrape > "$tmp/m" || fail "a scrape beside $2: $(cat "$tmp/m")"
    ms=$((($(date +%s%N) - t0) / 1000000))
    [ "$ms" -lt 2000 ] || fail "a scrape beside $2 took $ms ms"
}
# val SERIES: its value in $tmp/m (a scrape), e.g. val 'shoal_generation'
val() { grep -F "$1 " "$tmp/m" | grep -F -v '#' | awk -v s="$1" '$1 == s { print $2 }'; }
# metric SERIES WANT: fails unless val SERIES is WANT
metric() {
    local got
    got=$(val "$1")
    [ "$got" = "$2" ] || fail "$1 is '$got', want $2"
}

listen_port=0 # what header() writes: 0 until step 3 moves it
header() {
    cat <<YAML
runtime: { control: ctl.sock, threads: 2 }
metrics: { listen: 127.0.0.1:$listen_port }
log: { level: info }
shutdown: { drain: 5s }
plugins:
  echo: $plugins/echo/echo.so
  loadgen: $plugins/loadgen/loadgen.so
  seq: $plugins/seq/seq.so
pools:
YAML
}

# ---- 1. --check -------------------------------------------------------------
printf 'metrics:\n  listen: localhost:9464\npools: {}\n' > "$tmp/bad.yaml"
out=$("$shoald" --check "$tmp/bad.yaml" 2>&1); rc=$?
want="$tmp/bad.yaml:2:11: metrics.listen: 'localhost' is not a numeric IPv4 address (names are not looked up: write e.g. 127.0.0.1, 0.0.0.0 or [::1]), got 'localhost:9464'"
[ $rc -eq 2 ] && [ "$out" = "$want" ] || fail "--check of a name: exit $rc: $out
want: $want"
printf 'metrics: { listen: "127.0.0.1:65536" }\npools: {}\n' > "$tmp/bad.yaml"
out=$("$shoald" --check "$tmp/bad.yaml" 2>&1); rc=$?
want="$tmp/bad.yaml:1:20: metrics.listen: the port '65536' is not a number in 0..65535 (0: any free port), got '127.0.0.1:65536'"
[ $rc -eq 2 ] && [ "$out" = "$want" ] || fail "--check of a bad port: exit $rc: $out
want: $want"
printf 'metrics: { listen: 9464 }\npools: {}\n' > "$tmp/bad.yaml"
out=$("$shoald" --check "$tmp/bad.yaml" 2>&1); rc=$?
[ $rc -eq 2 ] && [[ "$out" == "$tmp/bad.yaml:1:20: metrics.listen: expected HOST:PORT "* ]] ||
    fail "--check of a bare port: exit $rc: $out"
printf 'metrics: { listen: "[::1]:0" }\npools: {}\n' > "$tmp/ok.yaml"
out=$("$shoald" --check "$tmp/ok.yaml" 2>&1) || fail "--check of [::1]:0: $out"

# ---- 2. exact counts ------------------------------------------------------
# api, fed 20,000 messages by feed as fast as it takes them: sections 2 and 3
POOLS="  api:
    worker: echo.echo
    size: 2
    mailbox: 16
  feed:
    worker: loadgen.loadgen
    size: 1
    args: { target: api, rate: 0, count: 20000, done: idle }"
write "$POOLS"
: > "$log"
"$shoald" --no-table "$tmp/s.yaml" 2> "$log" &
pid=$!
wait_for "metrics: serving GET /metrics on http://127.0.0.1:"
port=$(sed -n 's|.*metrics: serving GET /metrics on http://127.0.0.1:\([0-9]*\)/metrics$|\1|p' "$log")
[ -n "$port" ] && [ "$port" -gt 0 ] || fail "no port in the log"
for _ in $(seq 1 1000); do [ "$(loadgen feed 12)" = 1 ] && break; sleep 0.01; done
[ "$(loadgen feed 12)" = 1 ] || fail "the loadgen did not finish its 20000"
for i in 1 2 3; do "$shoalctl" send api "m$i" > /dev/null || fail "send $i"; done
settled_ledger > /dev/null
busy=$(loadgen feed 3)
scrape > "$tmp/m" || fail "scrape: $(cat "$tmp/m")"
if command -v promtool > /dev/null; then
    promtool check metrics < "$tmp/m" > "$tmp/promtool" 2>&1 || fail "promtool: $(cat "$tmp/promtool")"
else
    echo "SKIP: promtool is not on PATH (Debian: apt-get install prometheus): format not linted"
fi
metric 'shoal_pool_messages_forwarded_total{pool="api"}' 20003
metric 'shoal_pool_messages_handled_total{pool="api"}' 20003
metric 'shoal_pool_messages_failed_total{pool="api"}' 0
metric 'shoal_pool_messages_dropped_total{pool="api"}' 0
metric 'shoal_pool_messages_refused_total{pool="api"}' "$busy"
metric 'shoal_pool_queue_depth{pool="api"}' 0
metric 'shoal_pool_size{pool="api"}' 2
metric 'shoal_pool_target_size{pool="api"}' 2
metric 'shoal_pool_state{pool="api",state="running"}' 1
metric 'shoal_pool_state{pool="api",state="draining"}' 0
metric 'shoal_generation' 1
metric 'shoal_reloads_total{result="ok"}' 0
metric 'shoal_reloads_total{result="failed"}' 0
metric 'shoal_runtime_threads' 2
# The ledger is every pool's sum (the loadgen's stats calls went to feed).
fwd_feed=$(val 'shoal_pool_messages_forwarded_total{pool="feed"}')
metric 'shoal_ledger_messages_total{outcome="accepted"}' $((20003 + fwd_feed))
metric 'shoal_ledger_messages_total{outcome="handled"}' $((20003 + fwd_feed))
# (the stats calls above may themselves be refused by feed's one busy
# worker, and retried: those are feed's refusals, in the ledger too)
ref_feed=$(val 'shoal_pool_messages_refused_total{pool="feed"}')
metric 'shoal_ledger_messages_total{outcome="refused"}' $((busy + ref_feed))
# Histograms: cumulative buckets, +Inf == _count, at most one per message.
python3 - "$tmp/m" <<'PY' || fail "histograms: see above"
import re, sys
series = {}
for line in open(sys.argv[1]):
    if line.startswith("#"):
        continue
    name, value = line.rsplit(" ", 1)
    series[name] = float(value)
bad = 0
for h in ("shoal_pool_queue_wait_seconds", "shoal_pool_service_seconds"):
    for pool in ("api", "feed"):
        les = [(k, v) for k, v in series.items() if k.startswith('%s_bucket{pool="%s",' % (h, pool))]
        if len(les) != 15:
            print("%s %s: %d buckets, want 15" % (h, pool, len(les))); bad += 1
        last = -1
        for k, v in les:  # in the order written
            if v < last:
                print("%s: %s after %s: not cumulative" % (k, v, last)); bad += 1
            last = v
        inf = series['%s_bucket{pool="%s",le="+Inf"}' % (h, pool)]
        count = series['%s_count{pool="%s"}' % (h, pool)]
        total = series['%s_sum{pool="%s"}' % (h, pool)]
        handled = series['shoal_pool_messages_handled_total{pool="%s"}' % pool]
        if inf != count or count > handled or (pool == "api" and count == 0):
            print("%s %s: +Inf %s, _count %s, handled %s" % (h, pool, inf, count, handled)); bad += 1
        if (count == 0) != (total == 0):
            print("%s %s: _count %s but _sum %s" % (h, pool, count, total)); bad += 1
sys.exit(1 if bad else 0)
PY
[ "$(scrape /other)" = "HTTP 404 " ] || fail "GET /other: $(scrape /other)"
[ "$(scrape /metrics POST)" = "HTTP 405 GET, HEAD" ] || fail "POST /metrics: $(scrape /metrics POST)"

# ---- 3. reloads -----------------------------------------------------------
write "$POOLS
  extra:
    worker: echo.echo
    size: 3"
"$shoalctl" reload > /dev/null || fail "reload 2"
"$shoalctl" send extra hello > /dev/null || fail "send extra"
settled_ledger > /dev/null
scrape > "$tmp/m"
metric 'shoal_generation' 2
metric 'shoal_reloads_total{result="ok"}' 1
metric 'shoal_pool_size{pool="extra"}' 3
metric 'shoal_pool_messages_forwarded_total{pool="extra"}' 1
accepted=$(val 'shoal_ledger_messages_total{outcome="accepted"}')
printf 'pools: [\n' > "$tmp/s.yaml.bad" && cp "$tmp/s.yaml" "$tmp/s.yaml.good" &&
    mv "$tmp/s.yaml.bad" "$tmp/s.yaml"
"$shoalctl" reload > /dev/null 2>&1 && fail "a broken file reloaded"
mv "$tmp/s.yaml.good" "$tmp/s.yaml"
write "$POOLS"
"$shoalctl" reload > /dev/null || fail "reload 3"
scrape > "$tmp/m"
metric 'shoal_generation' 3
metric 'shoal_reloads_total{result="ok"}' 2
metric 'shoal_reloads_total{result="failed"}' 1
! grep -q 'pool="extra"' "$tmp/m" || fail "a removed pool still has series: $(grep 'pool="extra"' "$tmp/m" | head -3)"
got=$(val 'shoal_ledger_messages_total{outcome="accepted"}')
[ "$got" -ge "$accepted" ] || fail "the ledger went down: $accepted -> $got"
# A new address: served before the reload commits, the old one closed after.
listen_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
sed -i "s/listen: 127.0.0.1:0/listen: 127.0.0.1:$listen_port/" "$tmp/s.yaml"
# diff and the reload line say it (the rest is unchanged).
[ "$("$shoalctl" diff)" = "generation 3 -> 4: metrics.listen 127.0.0.1:0 -> 127.0.0.1:$listen_port" ] ||
    fail "diff of a new metrics.listen: $("$shoalctl" diff)"
"$shoalctl" reload > /dev/null || fail "reload 4 (metrics.listen 127.0.0.1:$listen_port)"
wait_for "reload: generation 4 from $tmp/s.yaml: metrics.listen 127.0.0.1:0 -> 127.0.0.1:$listen_port; ledger"
wait_for "metrics: serving GET /metrics on http://127.0.0.1:$listen_port/metrics (no longer on 127.0.0.1:$port)"
out=$(scrape) && fail "the old port $port still answers"
[[ "$out" == ERROR*"Connection refused"* ]] || fail "the old port $port: $out"
port=$listen_port
scrape > "$tmp/m" || fail "the new port $port does not answer: $(cat "$tmp/m")"
metric 'shoal_generation' 4
# An address in use: the reload fails, nothing changes.
python3 - "$tmp/busy" <<'PY' &
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen()
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
time.sleep(30)
PY
squatter=$!
for _ in $(seq 1 500); do [ -s "$tmp/busy" ] && break; sleep 0.01; done
busy_port=$(cat "$tmp/busy")
sed -i "s/listen: 127.0.0.1:$port/listen: 127.0.0.1:$busy_port/" "$tmp/s.yaml"
out=$("$shoalctl" reload 2>&1) && fail "a reload onto port $busy_port in use succeeded"
want="shoalctl: reload failed: $tmp/s.yaml:2:20: metrics.listen: cannot listen on 127.0.0.1:$busy_port: Address already in use (another process has that port: pick another, or 0 for any free one); generation 4 keeps running"
[ "$out" = "$want" ] || fail "reload onto a port in use said: $out
want: $want"
kill "$squatter"
wait "$squatter" 2> /dev/null
scrape > "$tmp/m" || fail "port $port no longer answers after a failed reload"
metric 'shoal_generation' 4
metric 'shoal_reloads_total{result="failed"}' 2
sed -i "s/listen: 127.0.0.1:$busy_port/listen: 127.0.0.1:$port/" "$tmp/s.yaml"

# ---- 4. clients that hold connections -------------------------------------
python3 - "$port" "$tmp/held" <<'PY' &
import socket, sys, time
port, flag = int(sys.argv[1]), sys.argv[2]
held = []
for i in range(120):
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
    # 100 half requests, then 20 whole ones whose replies are never read
    s.sendall(b"GET /metr" if i < 100 else b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n" * 50)
    held.append(s)
open(flag, "w").close()
time.sleep(6)
PY
holder=$!
scrape_beside "$tmp/held" "120 held connections"
metric 'shoal_generation' 4
"$shoalctl" reload > /dev/null || fail "a reload beside 120 held connections"
"$shoalctl" send api held > /dev/null || fail "a send beside 120 held connections"
kill "$holder" 2> /dev/null
wait "$holder" 2> /dev/null

# ---- 4b. clients that take every slot ------------------------------------
# 300 connections that each trickle half a request: past 256, each new one
# evicts the oldest; a scrape evicts one more and is answered.
for _ in $(seq 1 200); do # the held ones closed: only the scrape is open
    scrape > "$tmp/m" && [ "$(val shoal_metrics_http_connections)" = 1 ] && break
    sleep 0.05
done
metric shoal_metrics_http_connections 1
ev0=$(val shoal_metrics_http_evicted_total)
python3 - "$port" "$tmp/full" <<'PY' &
import socket, sys, time
port, flag = int(sys.argv[1]), sys.argv[2]
held = []
for i in range(300):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
    held.append(s)
open(flag, "w").close()
for _ in range(80): # trickle a header line into each, under the 10 s silence
    time.sleep(0.1)
    for s in held:
        try:
            s.sendall(b"X: y\r\n")
        except OSError:
            pass
PY
holder=$!
scrape_beside "$tmp/full" "300 trickling connections"
metric shoal_metrics_http_evicted_total $((ev0 + 45))
scrape > "$tmp/m" || fail "a second scrape beside 256 trickling connections: $(cat "$tmp/m")"
metric shoal_metrics_http_evicted_total $((ev0 + 45)) # 255 open and this one: none evicted
metric shoal_metrics_http_connections 256
kill "$holder" 2> /dev/null
wait "$holder" 2> /dev/null
said='warn metrics: [0-9]* connections to /metrics closed to make room (256 were open: clients that trickle requests, do not read, or hold many connections; the one open longest goes first; [0-9]* in all)$'
for _ in $(seq 1 300); do grep -q "$said" "$log" && break; sleep 0.01; done
grep -q "$said" "$log" || fail "no log line for the evicted connections: $(grep metrics: "$log" | tail -3)"

# ---- 5. scrapes during reloads, under load --------------------------------
sed -i 's/count: 20000, done: idle/rate: 20000/; s/rate: 0, //' "$tmp/s.yaml"
"$shoalctl" reload > /dev/null || fail "reload to a steady load"
python3 - "$port" "$tmp/stop" > "$tmp/scrapes" <<'PY' &
import os, sys, urllib.request
url = "http://127.0.0.1:%s/metrics" % sys.argv[1]
ok = bad = down = 0
seen = {}
while not os.path.exists(sys.argv[2]):
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            body = r.read().decode()
            ok += r.status == 200 and body.endswith("\n") and "shoal_generation " in body
    except Exception as e:
        bad += 1
        print("error", e)
        continue
    # The ledger's counters never go down (Prometheus reads a drop as a reset).
    for line in body.splitlines():
        if line.startswith("shoal_ledger_messages_total{"):
            k, v = line.rsplit(" ", 1)
            if int(v) < seen.get(k, 0):
                down += 1
                print("down %s %d -> %s" % (k, seen[k], v))
            seen[k] = max(seen.get(k, 0), int(v))
print("ok %d bad %d down %d" % (ok, bad, down))
PY
scraper=$!
for i in $(seq 1 20); do
    write "  api:
    worker: echo.echo
    size: 2
    mailbox: 16
  feed:
    worker: loadgen.loadgen
    size: 1
    args: { target: api, rate: 20000 }
  extra$i:
    kind: pull
    worker: echo.echo
    size: 2
    buffer: 64
    source: seq.seq
    source_args: { from: 1, to: 1000000000 }"
    "$shoalctl" reload > /dev/null || fail "reload $i (add)"
    sleep 0.1 # items through the pool the next reload sets draining
    write "  api:
    worker: echo.echo
    size: $((2 + i % 2))
    mailbox: 16
  feed:
    worker: loadgen.loadgen
    size: 1
    args: { target: api, rate: 20000 }"
    "$shoalctl" reload > /dev/null || fail "reload $i (remove)"
done
touch "$tmp/stop"
wait "$scraper"
grep -q '^ok [1-9][0-9]* bad 0 down 0$' "$tmp/scrapes" || fail "scrapes during reloads: $(cat "$tmp/scrapes")"
kill -0 "$pid" || fail "shoald died"

# ---- 6. the port in use -----------------------------------------------------
printf 'runtime: { threads: 1 }\nmetrics: { listen: 127.0.0.1:%s }\npools: {}\n' "$port" > "$tmp/two.yaml"
out=$("$shoald" --no-table --run-for 5s "$tmp/two.yaml" 2>&1); rc=$?
want="$tmp/two.yaml:2:20: metrics.listen: cannot listen on 127.0.0.1:$port: Address already in use (another process has that port: pick another, or 0 for any free one)"
[ $rc -eq 2 ] && [ "$out" = "$want" ] || fail "a second shoald on port $port: exit $rc: $out
want: $want"

# An IPv6 address, where this machine has ::1.
if python3 -c 'import socket; socket.socket(socket.AF_INET6).bind(("::1", 0))' 2> /dev/null; then
    printf 'runtime: { threads: 1 }\nmetrics: { listen: "[::1]:0" }\npools: {}\n' > "$tmp/six.yaml"
    "$shoald" --no-table --run-for 10s "$tmp/six.yaml" 2> "$tmp/six.log" &
    six=$!
    for _ in $(seq 1 500); do grep -q 'metrics: serving' "$tmp/six.log" && break; sleep 0.01; done
    sport=$(sed -n 's|.*metrics: serving GET /metrics on http://\[::1\]:\([0-9]*\)/metrics$|\1|p' "$tmp/six.log")
    got=$(python3 -c 'import sys, urllib.request; print(urllib.request.urlopen("http://[::1]:%s/metrics" % sys.argv[1], timeout=2).status)' "$sport" 2>&1)
    kill "$six"
    wait "$six"
    [ "$got" = 200 ] || fail "GET over IPv6 (port '$sport'): $got; $(cat "$tmp/six.log")"
else
    echo "SKIP: no IPv6 loopback here: [::1] not tried"
fi

# ---- 7. a real Prometheus server ------------------------------------------
if ! command -v prometheus > /dev/null; then
    echo "SKIP: prometheus is not on PATH (Debian: apt-get install prometheus): no real scrape"
else
    pport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    cat > "$tmp/prom.yml" <<YAML
global: { scrape_interval: 1s, evaluation_interval: 1s }
scrape_configs:
  - job_name: shoald
    static_configs: [{ targets: ["127.0.0.1:$port"] }]
YAML
    prometheus --config.file="$tmp/prom.yml" --storage.tsdb.path="$tmp/tsdb" \
        --web.listen-address="127.0.0.1:$pport" > "$tmp/prom.log" 2>&1 &
    prom=$!
    got=
    for _ in $(seq 1 40); do
        got=$(python3 - "$pport" <<'PY'
import json, sys, urllib.parse, urllib.request
q = urllib.parse.quote('shoal_pool_messages_forwarded_total{pool="api"}')
try:
    with urllib.request.urlopen("http://127.0.0.1:%s/api/v1/query?query=%s" % (sys.argv[1], q), timeout=2) as r:
        res = json.load(r)["data"]["result"]
        print(res[0]["value"][1] if res else "")
except Exception:
    print("")
PY
)
        [ -n "$got" ] && [ "${got%.*}" -gt 0 ] 2> /dev/null && break
        sleep 0.5
    done
    kill "$prom" 2> /dev/null
    wait "$prom" 2> /dev/null
    [ -n "$got" ] && [ "${got%.*}" -gt 0 ] 2> /dev/null ||
        fail "prometheus never answered with a value > 0 (got '$got'): $(tail -5 "$tmp/prom.log")"
    echo "prometheus: shoal_pool_messages_forwarded_total{pool=\"api\"} = $got"
fi

# ---- 8. metrics.listen removed by a reload, then added back ---------------
sed -i '/^metrics:/d' "$tmp/s.yaml"
"$shoalctl" diff | grep -q "metrics.listen 127.0.0.1:$port -> none (stop serving)$" ||
    fail "diff without metrics: $("$shoalctl" diff)"
"$shoalctl" reload > /dev/null || fail "reload without metrics:"
wait_for ": metrics.listen 127.0.0.1:$port -> none (no longer served); ledger"
wait_for "metrics: no longer serving 127.0.0.1:$port (metrics.listen removed)"
out=$(scrape) && fail "port $port still answers without metrics:"
[[ "$out" == ERROR*"Connection refused"* ]] || fail "port $port without metrics: $out"
sed -i "1a metrics: { listen: 127.0.0.1:$port }" "$tmp/s.yaml"
"$shoalctl" reload > /dev/null || fail "reload with metrics: again"
wait_for "metrics: serving GET /metrics on http://127.0.0.1:$port/metrics$"
scrape > "$tmp/m" || fail "port $port does not answer once metrics: is back: $(cat "$tmp/m")"
# Another address on the same port: shoald holds it itself (the new one is
# bound before the old one closes): refused, and it says so.
sed -i "s/listen: 127.0.0.1:$port/listen: 0.0.0.0:$port/" "$tmp/s.yaml"
out=$("$shoalctl" reload 2>&1) && fail "a reload to 0.0.0.0:$port: exit 0"
case "$out" in
*"metrics.listen: cannot listen on 0.0.0.0:$port: Address already in use (shoald itself serves that port, and the new address is bound before the old one is closed: move to another port first, or restart shoald)"*) ;;
*) fail "a reload to 0.0.0.0:$port said: $out" ;;
esac
sed -i "s/listen: 0.0.0.0:$port/listen: 127.0.0.1:$port/" "$tmp/s.yaml"
scrape > "$tmp/m" || fail "port $port stopped answering after the refused reload"

# ---- 9. sources: what each sent, exactly; up; gone with a reload --------------
# A source sends 5000 accepted messages as fast as a small pool takes them:
# its sent series is exactly 5000, its refused series exactly what the
# pool refused (nobody else sends to it).
cat >> "$tmp/s.yaml" <<YAML
  small: { worker: echo.echo, size: 1, mailbox: 4 }
sources:
  burst:
    actor: loadgen.loadgen
    args: { target: small, rate: 0, count: 5000, done: idle }
YAML
"$shoalctl" reload > /dev/null || fail "reload adding the source burst"
for _ in $(seq 1 1000); do
    scrape > "$tmp/m"
    [ "$(val 'shoal_source_messages_sent_total{source="burst"}')" = 5000 ] && break
    sleep 0.01
done
metric 'shoal_source_messages_sent_total{source="burst"}' 5000
metric 'shoal_source_messages_refused_total{source="burst"}' \
    "$(val 'shoal_pool_messages_refused_total{pool="small"}')"
metric 'shoal_pool_messages_forwarded_total{pool="small"}' 5000
metric 'shoal_source_restarts_total{source="burst"}' 0
metric 'shoal_source_up{source="burst"}' 1
if command -v promtool > /dev/null; then
    promtool check metrics < "$tmp/m" > "$tmp/promtool" 2>&1 || fail "promtool: $(cat "$tmp/promtool")"
fi
sed -i '/^sources:/,$d' "$tmp/s.yaml"
"$shoalctl" reload > /dev/null || fail "reload removing the source burst"
for _ in $(seq 1 500); do
    scrape > "$tmp/m"
    grep -q '^shoal_source_' "$tmp/m" || break
    sleep 0.01
done
grep -q '^shoal_source_' "$tmp/m" && fail "the removed source's series stayed: $(grep '^shoal_source_' "$tmp/m")"

kill -TERM "$pid"
wait "$pid"
rc=$?
pid=
[ $rc -eq 0 ] || fail "shoald exited $rc after SIGTERM"
echo "PASS"
