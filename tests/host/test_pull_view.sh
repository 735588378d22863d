#!/bin/bash
# test_pull_view.sh BUILD_DIR - a pull pool as an operator sees it: shoalctl
# inspect, the table and GET /metrics, beside a forward pool.
#
#   1. jobs (kind pull, 2 sleep workers, prefetch 1, buffer 10): two items
#      taken by the workers, which sleep on them for a minute; 40 sends in
#      all: 12 accepted, 28 refused (shoalctl send exits 1). inspect parses
#      as JSON and has kind "pull" and the exact "pull" object, and per
#      worker (seats 0 and 1): one item in progress each, one taken, none
#      completed, not idle; the forward pool api has kind "forward" and no
#      "pull" or "workers". status's jobs line says the same in short;
#      api's is as it was.
#   2. The table: jobs's row reads its buffer in the queued column (10/10)
#      and what its workers hold after the state ("running (pull, held
#      2/2, idle 0)"); some row shows the refusals per second; api's row keeps the
#      forward format.
#   3. /metrics passes promtool (when on PATH); the pull families have
#      jobs's exact values, and none of them names api.
#   4. quick (kind pull, echo workers, prefetch 4) fed 2000 items by a
#      loadgen source: received, delivered and completed are exactly 2000,
#      refused exactly the loadgen's own EBUSY count, the buffer empty and
#      the demand size x prefetch, in inspect and in /metrics alike; per
#      worker (seats 0..2): taken and completed sum to 2000 each, nothing
#      in progress, all three idle with idle time above 0, in inspect and
#      in /metrics alike.
#   5. SIGTERM with jobs's workers still asleep: exit 3 after the drain.
. "$(dirname "$0")/lib.sh" "$1" || exit 1
export SHOAL_SOCKET=$tmp/ctl.sock
command -v python3 > /dev/null || fail "python3 is needed to parse JSON and scrape"

cat > "$tmp/s.yaml" <<YAML
runtime: { control: ctl.sock, threads: 4 }
metrics: { listen: 127.0.0.1:0 }
log: { level: info }
shutdown: { drain: 1s }
plugins:
  echo: $plugins/echo/echo.so
  sleep: $plugins/sleep/sleep.so
  loadgen: $plugins/loadgen/loadgen.so
pools:
  api: { worker: echo.echo, size: 1 }
  jobs:
    kind: pull
    worker: sleep.sleep
    size: 2
    prefetch: 1
    buffer: 10
    args: { latency: 60s }
  quick: { kind: pull, worker: echo.echo, size: 3, prefetch: 4, buffer: 64 }
sources:
  feeder: { actor: loadgen.loadgen, args: { target: quick, rate: 0, count: 2000 } }
YAML

# scrape: the body of GET /metrics into $tmp/m
scrape() {
    python3 - "http://127.0.0.1:$port/metrics" > "$tmp/m" <<'PY' || fail "scrape: $(cat "$tmp/m")"
import sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=2) as r:
    sys.stdout.write(r.read().decode())
PY
}
# metric SERIES WANT: fails unless SERIES reads WANT in $tmp/m
metric() {
    local got
    got=$(awk -v s="$1" '$1 == s { print $2 }' "$tmp/m")
    [ "$got" = "$2" ] || fail "$1 is '$got', want $2"
}
# pull POOL: the pool's inspection, checked as JSON, as KEY=VALUE lines of
# its "pull" object (source.state=none ...), and kind=...
pull() {
    "$shoalctl" inspect "$1" > "$tmp/i.json" || fail "inspect $1: exit $?"
    python3 - "$tmp/i.json" <<'PY' || fail "inspect $1 is not as expected: $(cat "$tmp/i.json")"
import json, sys
info = json.load(open(sys.argv[1]))["info"]
print("kind=%s" % info["kind"])
def flat(d, pre=""):
    for k, v in d.items():
        if isinstance(v, dict):
            flat(v, pre + k + ".")
        else:
            print("%s%s=%s" % (pre, k, v))
flat(info.get("pull", {}))
PY
}
# workers POOL: its workers from its inspection, one line each by seat:
# "SEAT in_progress taken completed idle", then "unlisted=N"; and
# the sums of taken and completed, and the smallest idle_ms, as
# "sum taken completed min_idle_ms".
workers() {
    "$shoalctl" inspect "$1" > "$tmp/w.json" || fail "inspect $1: exit $?"
    python3 - "$tmp/w.json" <<'PY' || fail "inspect $1: no workers: $(cat "$tmp/w.json")"
import json, sys
info = json.load(open(sys.argv[1]))["info"]
w = info["workers"]
assert [x["seat"] for x in w] == sorted(x["seat"] for x in w), w
for x in w:
    assert x["pid"].count(".") == 1, x
    print(x["seat"], x["in_progress"], x["taken"], x["completed"], str(x["idle"]).lower())
print("unlisted=%d" % info["workers_unlisted"])
print("sum", sum(x["taken"] for x in w), sum(x["completed"] for x in w), min(x["idle_ms"] for x in w))
PY
}

: > "$log"
"$shoald" "$tmp/s.yaml" > "$tmp/table" 2> "$log" &
pid=$!
wait_for "metrics: serving GET /metrics on http://127.0.0.1:"
port=$(sed -n 's|.*metrics: serving GET /metrics on http://127.0.0.1:\([0-9]*\)/metrics$|\1|p' "$log")

# ---- 1. inspect: 12 accepted, 28 refused ------------------------------------------
ok=0 refused=0
for i in $(seq 1 40); do
    if "$shoalctl" send jobs "item $i" > /dev/null 2>&1; then ok=$((ok + 1)); else refused=$((refused + 1)); fi
    # The first two are taken before the others are sent: each worker holds one.
    if [ "$i" = 2 ]; then
        for _ in $(seq 1 500); do pull jobs | grep -qx 'delivered=2' && break; sleep 0.01; done
    fi
done
[ "$ok/$refused" = 12/28 ] || fail "jobs took $ok and refused $refused of 40, not 12 and 28"
want="kind=pull
prefetch=1
buffer=10
buffer_depth=10
held=2
demand=0
received=12
delivered=2
completed=0
failed=0
refused=28
redelivered=0
dead_lettered=0
dropped=0
source.state=none
source.items=0
source.restarts=0"
got=$(pull jobs)
[ "$got" = "$want" ] || fail "jobs's inspection:
$got
want:
$want"
got=$(workers jobs | head -3)
want="0 1 1 0 false
1 1 1 0 false
unlisted=0"
[ "$got" = "$want" ] || fail "jobs's workers:
$got
want:
$want"
"$shoalctl" inspect jobs | grep -q '"messages_forwarded":12,"messages_unhandled":28,"messages_handled":0,' ||
    fail "jobs's ledger: $("$shoalctl" inspect jobs)"
# status: the pull pool's line goes on; the forward one's is as it was.
"$shoalctl" status > "$tmp/status"
grep -qx 'pool jobs size 2 target 2 in_flight 12 forwarded 12 pull buffer 10/10 held 2/2 idle 0 refused 28' "$tmp/status" ||
    fail "status's jobs line: $(grep '^pool jobs' "$tmp/status")"
grep -qx 'pool api size 1 target 1 in_flight 0 forwarded 0' "$tmp/status" ||
    fail "status's api line: $(grep '^pool api' "$tmp/status")"
[ "$(pull api)" = "kind=forward" ] || fail "api's inspection: $("$shoalctl" inspect api)"
"$shoalctl" inspect api | grep -q '"workers"' && fail "api (forward) lists pull workers: $("$shoalctl" inspect api)"
# Every pool's at once is one JSON object too.
"$shoalctl" inspect | python3 -c 'import json, sys; d = json.load(sys.stdin); assert sorted(d) == ["api", "jobs", "quick"], d' ||
    fail "inspect of every pool: $("$shoalctl" inspect)"

# ---- 2. the table -------------------------------------------------------------------
row='^jobs +2 +[0-9]+ +[0-9]+ +0 +10/10 +0 +[0-9]+\.[0-9] +[0-9]+\.[0-9] running \(pull, held 2/2, running [0-2], idle 0, submitted 12, completed 0\)$'
for _ in $(seq 1 300); do tail -8 "$tmp/table" | grep -Eq "$row" && break; sleep 0.01; done
tail -8 "$tmp/table" | grep -Eq "$row" || fail "jobs's last row: $(grep '^jobs' "$tmp/table" | tail -2)"
grep -Eq '^jobs +2 +[0-9]+ +[1-9][0-9]* ' "$tmp/table" ||
    fail "no jobs row with refused/s above 0: $(grep '^jobs' "$tmp/table")"
grep -Eq '^api +1 +[0-9]+ +[0-9]+ +[0-9]+ +0 +0 +[0-9]+\.[0-9] +[0-9]+\.[0-9] running \(running [01], idle [01], submitted 0, completed 0\)$' "$tmp/table" ||
    fail "api's row changed: $(grep '^api' "$tmp/table" | tail -1)"
header='pool             workers       in/s  refused/s  failed/s   queued restarts(total) wait_p50_us wait_p99_us state'
grep -qxF "$header" "$tmp/table" || fail "the header changed: $(grep '^pool ' "$tmp/table" | head -1)"

# ---- 3. /metrics ------------------------------------------------------------------
scrape
if command -v promtool > /dev/null; then
    promtool check metrics < "$tmp/m" > "$tmp/promtool" 2>&1 || fail "promtool: $(cat "$tmp/promtool")"
else
    echo "SKIP: promtool is not on PATH (Debian: apt-get install prometheus): format not linted"
fi
metric 'shoal_pool_messages_forwarded_total{pool="jobs"}' 12
metric 'shoal_pool_messages_refused_total{pool="jobs"}' 28
metric 'shoal_pool_queue_depth{pool="jobs"}' 12
metric 'shoal_pool_prefetch{pool="jobs"}' 1
metric 'shoal_pool_buffer_capacity{pool="jobs"}' 10
metric 'shoal_pool_buffer_items{pool="jobs"}' 10
metric 'shoal_pool_demand_items{pool="jobs"}' 0
metric 'shoal_pool_items_delivered_total{pool="jobs"}' 2
metric 'shoal_pool_items_redelivered_total{pool="jobs"}' 0
metric 'shoal_pool_items_dead_lettered_total{pool="jobs"}' 0
metric 'shoal_pool_source_epic_items{pool="jobs"}' 0
metric 'shoal_pool_source_restarts_total{pool="jobs"}' 0
metric 'shoal_pool_source_state{pool="jobs",state="none"}' 1
metric 'shoal_pool_source_state{pool="jobs",state="running"}' 0
metric 'shoal_pool_source_state{pool="jobs",state="done"}' 0
metric 'shoal_pool_source_state{pool="jobs",state="failed"}' 0
for seat in 0 1; do
    metric "shoal_pull_worker_in_progress{pool=\"jobs\",worker=\"$seat\"}" 1
    metric "shoal_pull_worker_completed_total{pool=\"jobs\",worker=\"$seat\"}" 0
done
# Busy (asleep on their items): their idle time stands still.
idle0=$(grep '^shoal_pull_worker_idle_seconds_total{pool="jobs"' "$tmp/m")
[ "$(echo "$idle0" | wc -l)" = 2 ] || fail "jobs's idle series: $idle0"
sleep 0.1
scrape
[ "$(grep '^shoal_pull_worker_idle_seconds_total{pool="jobs"' "$tmp/m")" = "$idle0" ] ||
    fail "busy workers' idle time moved: $idle0 -> $(grep '^shoal_pull_worker_idle' "$tmp/m")"
[ "$(grep -c '^shoal_pull_worker_in_progress{pool="jobs"' "$tmp/m")" = 2 ] ||
    fail "jobs: not two workers' series: $(grep '^shoal_pull_worker_' "$tmp/m")"
# One HELP and one TYPE per family, the pull ones naming pull pools only.
for f in prefetch buffer_capacity buffer_items demand_items items_delivered_total \
    items_redelivered_total items_dead_lettered_total source_epic_items source_restarts_total \
    source_state; do
    [ "$(grep -c "^# TYPE shoal_pool_$f " "$tmp/m")" = 1 ] || fail "shoal_pool_$f: not one TYPE line"
    grep "^shoal_pool_$f{" "$tmp/m" | grep -qv 'pool="\(jobs\|quick\)"' &&
        fail "shoal_pool_$f names a forward pool: $(grep "^shoal_pool_$f{" "$tmp/m")"
done
for f in completed_total in_progress idle_seconds_total; do
    [ "$(grep -c "^# TYPE shoal_pull_worker_$f " "$tmp/m")" = 1 ] || fail "shoal_pull_worker_$f: not one TYPE line"
    grep "^shoal_pull_worker_$f{" "$tmp/m" | grep -qv 'pool="\(jobs\|quick\)"' &&
        fail "shoal_pull_worker_$f names a forward pool: $(grep "^shoal_pull_worker_$f{" "$tmp/m")"
done
grep -q '^shoal_pool_[a-z_]*{pool="api"' "$tmp/m" || fail "api has no series at all"

# ---- 4. quick: 2000 items through, exactly ------------------------------------------
for _ in $(seq 1 1000); do [ "$(loadgen feeder 12)" = 1 ] && break; sleep 0.01; done
[ "$(loadgen feeder 12)" = 1 ] || fail "feeder did not finish its 2000"
busy=$(loadgen feeder 3)
for _ in $(seq 1 500); do pull quick | grep -qx 'completed=2000' && break; sleep 0.01; done
want="kind=pull
prefetch=4
buffer=64
buffer_depth=0
held=0
demand=12
received=2000
delivered=2000
completed=2000
failed=0
refused=$busy
redelivered=0
dead_lettered=0
dropped=0
source.state=none
source.items=0
source.restarts=0"
got=$(pull quick)
[ "$got" = "$want" ] || fail "quick's inspection:
$got
want:
$want"
scrape
metric 'shoal_pool_messages_forwarded_total{pool="quick"}' 2000
metric 'shoal_pool_messages_handled_total{pool="quick"}' 2000
metric 'shoal_pool_messages_refused_total{pool="quick"}' "$busy"
metric 'shoal_pool_items_delivered_total{pool="quick"}' 2000
metric 'shoal_pool_buffer_items{pool="quick"}' 0
metric 'shoal_pool_buffer_capacity{pool="quick"}' 64
metric 'shoal_pool_demand_items{pool="quick"}' 12
metric 'shoal_pool_prefetch{pool="quick"}' 4
# Per worker: idle now (the feeder has finished), what they took and
# completed adds up to the pool's.
for _ in $(seq 1 300); do workers quick | grep -c ' true$' | grep -qx 3 && break; sleep 0.01; done
got=$(workers quick)
echo "$got" | sed -n 1,3p | awk '$1 != NR - 1 || $2 != 0 || $5 != "true" { exit 1 }' ||
    fail "quick's workers: $got"
echo "$got" | grep -qx 'unlisted=0' || fail "quick's workers: $got"
read -r _ taken completed _ <<< "$(echo "$got" | grep '^sum ')"
[ "$taken $completed" = "2000 2000" ] ||
    fail "quick's workers took $taken and completed $completed, not 2000 each: $got"
c=0
for seat in 0 1 2; do
    metric "shoal_pull_worker_in_progress{pool=\"quick\",worker=\"$seat\"}" 0
    x=$(awk -v s="shoal_pull_worker_completed_total{pool=\"quick\",worker=\"$seat\"}" '$1 == s { print $2 }' "$tmp/m")
    c=$((c + x))
    awk -v s="shoal_pull_worker_idle_seconds_total{pool=\"quick\",worker=\"$seat\"}" \
        '$1 == s && $2 > 0 { ok = 1 } END { exit !ok }' "$tmp/m" ||
        fail "quick's worker $seat has no idle time: $(grep '^shoal_pull_worker_idle' "$tmp/m")"
done
[ "$c" = 2000 ] || fail "quick's workers' completed_total sum to $c, not 2000"
# jobs's workers sleep on past shutdown.drain (1s): exit 3, not a hang.
stop_host 3
echo "PASS: test_pull_view"
