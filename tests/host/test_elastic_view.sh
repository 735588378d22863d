#!/bin/bash
# test_elastic_view.sh BUILD_DIR - elastic pools as an operator sees and
# drives them: shoalctl inspect, status, the table, GET /metrics, and
# shoalctl scale POOL MIN..MAX.
#
#   1. api (sleep.sleep for 2 ms, mailbox 4, autoscale 1..12 on busy > 80%
#      or refused > 0, 16 dispatcher threads: a sleeping handler holds one)
#      fed 2000 messages a second by a loadgen grows, one log line naming
#      its signals (`api: autoscale: up 1 -> N workers: busy ...`).
#   2. lazy (sleep.sleep for a minute, size 4, max 4, mailbox 1,
#      idle_timeout 100ms) idles down to min: expired 3, size 1. Then five
#      shoalctl sends, each waited for: the third and the fifth find every
#      worker full and start one (lazy 2, size 3), none is refused.
#   3. jobs (a pull pool of one sleeper, buffer 2, max_waiting 2) and two
#      loadgens at full speed: both wait for room (waiting 2/2). A third,
#      added by a reload and removed by the next, is refused its wait
#      (waiting_refused > 0, then still). The reloads keep lazy's running
#      size (3, not the file's 4).
#   4. lazy's and jobs's facts are the same in inspect, status, the table
#      (whose queued column is in flight: 5)
#      and /metrics (exact where they stand still); /metrics passes
#      promtool (when on PATH); a pool with nothing elastic (plain) keeps
#      its status line and table row, and has no elastic series but its
#      bounds and waiting.
#   5. shoalctl scale api 2..3 under load: said, logged, and the size never
#      passes 3 (status, the table, /metrics); api's bounds, decisions and
#      busy reading agree in all four views; bad forms exit 2 (5..2, 2..)
#      or 1 (a max past the 12 api started with) with exact messages;
#      scale api 5 is clamped to 3.
#   6. scale api 1..12: autoscale grows it again; a reload to 100 messages
#      a second: it shrinks (`api: autoscale: down N -> M workers: calm for
#      ...`), never below 1; the reload kept its running size.
#   7. SIGTERM with lazy's and jobs's workers asleep: exit 3 after the drain.
. "$(dirname "$0")/lib.sh" "$1" || exit 1
export SHOAL_SOCKET=$tmp/ctl.sock
command -v python3 > /dev/null || fail "python3 is needed to parse JSON and scrape"

# header: the config but its sources; write SOURCES puts them after it.
header() {
    cat <<YAML
runtime: { control: ctl.sock, threads: 16 }
metrics: { listen: 127.0.0.1:0 }
log: { level: info }
shutdown: { drain: 1s }
plugins:
  echo: $plugins/echo/echo.so
  sleep: $plugins/sleep/sleep.so
  loadgen: $plugins/loadgen/loadgen.so
pools:
  api:
    worker: sleep.sleep
    args: { latency: 2ms }
    mailbox: 4
    autoscale:
      min: 1
      max: 12
      up: { when: [busy > 80%, refused > 0], for: 250ms }
      down: { idle: 750ms }
      cooldown: 250ms
  lazy:
    worker: sleep.sleep
    args: { latency: 60s }
    size: 4
    max: 4
    mailbox: 1
    idle_timeout: 100ms
  jobs: { kind: pull, worker: sleep.sleep, args: { latency: 60s }, size: 1, buffer: 2, max_waiting: 2 }
  plain: { worker: echo.echo, size: 2 }
sources:
  j1: { actor: loadgen.loadgen, args: { target: jobs, rate: 0 } }
  j2: { actor: loadgen.loadgen, args: { target: jobs, rate: 0 } }
YAML
}
write "  load: { actor: loadgen.loadgen, args: { target: api, rate: 2000 } }"

# scrape: the body of GET /metrics into $tmp/m
scrape() {
    python3 - "http://127.0.0.1:$port/metrics" > "$tmp/m" <<'PY' || fail "scrape: $(cat "$tmp/m")"
import sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=2) as r:
    sys.stdout.write(r.read().decode())
PY
}
# metric SERIES: its value in $tmp/m ("" when absent)
metric() { awk -v s="$1" '$1 == s { print $2 }' "$tmp/m"; }
# want_metric SERIES WANT: fails unless SERIES reads WANT in $tmp/m
want_metric() {
    [ "$(metric "$1")" = "$2" ] || fail "$1 is '$(metric "$1")', want $2"
}
# facts POOL: its inspection as KEY=VALUE lines: pool_size, target_size,
# min_size, max_size, waiting, and its "elastic" object flattened
# (elastic.expired=3, elastic.autoscale.ups=1, elastic.autoscale=None)
facts() {
    "$shoalctl" inspect "$1" > "$tmp/i.json" || fail "inspect $1: exit $?"
    python3 - "$tmp/i.json" <<'PY' || fail "inspect $1 is not as expected: $(cat "$tmp/i.json")"
import json, sys
info = json.load(open(sys.argv[1]))["info"]
for k in ("pool_size", "target_size", "min_size", "max_size", "waiting", "queue_depth",
          "messages_forwarded", "messages_unhandled"):
    print("%s=%s" % (k, info[k]))
def flat(d, pre):
    for k, v in d.items():
        if isinstance(v, dict):
            flat(v, pre + k + ".")
        else:
            print("%s%s=%s" % (pre, k, v))
flat(info["elastic"], "elastic.")
PY
}
# fact POOL KEY: the value of "KEY" in its inspection (a key that is
# unique there: pool_size, expired, ups, ...; quotes stripped), read
# without python, which may be slow to start
fact() {
    "$shoalctl" inspect "$1" | grep -o "\"$2\":[^,}]*" | head -1 | cut -d: -f2 | tr -d '"'
}
# until_fact POOL KEY VALUE [TRIES]: until it reads VALUE (10 ms apart)
until_fact() {
    for _ in $(seq 1 "${4:-500}"); do
        [ "$(fact "$1" "$2")" = "$3" ] && return 0
        sleep 0.01
    done
    fail "$1's $2 is $(fact "$1" "$2"), not $3: $("$shoalctl" inspect "$1")"
}
# line POOL: its status line
line() { "$shoalctl" status | grep "^pool $1 "; }
# row POOL: its last row in the table, after the table's line $2 (0: any)
row() { tail -n +"$((${2:-0} + 1))" "$tmp/table" | grep "^$1 " | tail -1; }
# next_block: until the table has printed two more blocks
next_block() {
    local n
    n=$(grep -c '^shoald: generation' "$tmp/table")
    for _ in $(seq 1 300); do
        [ "$(grep -c '^shoald: generation' "$tmp/table")" -ge $((n + 2)) ] && return 0
        sleep 0.01
    done
    fail "the table stopped"
}
# run CMD...: stdout to $tmp/out, stderr to $tmp/err, status in $rc
run() {
    "$@" > "$tmp/out" 2> "$tmp/err"
    rc=$?
}
# expect RC OUT ERR: the last run's status, stdout and stderr, exactly
expect() {
    [ "$rc" = "$1" ] && [ "$(cat "$tmp/out")" = "$2" ] && [ "$(cat "$tmp/err")" = "$3" ] ||
        fail "$what: exit $rc (want $1); stdout: $(cat "$tmp/out"); stderr: $(cat "$tmp/err")"
}

: > "$log"
"$shoald" "$tmp/s.yaml" > "$tmp/table" 2> "$log" &
pid=$!
wait_for "metrics: serving GET /metrics on http://127.0.0.1:"
port=$(sed -n 's|.*metrics: serving GET /metrics on http://127.0.0.1:\([0-9]*\)/metrics$|\1|p' "$log")

# ---- 1. api grows under load ---------------------------------------------------------
wait_for ' api: autoscale: up 1 -> '
up='info <[0-9.]+> api: autoscale: up 1 -> ([2-9]|1[0-2]) workers: busy [0-9]+\.[0-9]% (>|<=) 80%, refused [0-9]+/s (>|<=) 0/s for [0-9]+ ms \(offered [0-9]+/s, [0-9]+ us a message: [0-9]+ workers at 60% busy\)$'
grep -Eq "$up" "$log" || fail "the first decision's line: $(grep 'autoscale: up' "$log")"

# ---- 2. lazy idles down to min, then grows for sends that find no room ----------------
until_fact lazy expired 3 300
[ "$(line lazy)" = "pool lazy size 1 target 1 in_flight 0 forwarded 0 bounds 1..4 waiting 0 idle_timeout 100ms expired 3 lazy 0" ] ||
    fail "lazy at min: $(line lazy)"
# Each send waited for: a worker takes the 1st (and sleeps on it), the 2nd
# waits in its mailbox, the 3rd finds every worker full: one is started
# for it; then the same with the 4th and 5th.
for i in 1 2 3 4 5; do
    "$shoalctl" send lazy "m$i" || fail "lazy refused send $i (exit $?): $(facts lazy)"
    until_fact lazy messages_forwarded "$i"
    case $i in 1 | 3) until_fact lazy queue_depth $(((i - 1) / 2)) ;; esac
done
until_fact lazy lazy_grown 2
want="pool_size=3
target_size=3
min_size=1
max_size=4
waiting=0
queue_depth=2
messages_forwarded=5
messages_unhandled=0
elastic.idle_timeout_ms=100
elastic.max_waiting=0
elastic.waiting_refused=0
elastic.expired=3
elastic.lazy_grown=2
elastic.autoscale=None"
[ "$(facts lazy)" = "$want" ] || fail "lazy's inspection:
$(facts lazy)
want:
$want"

# ---- 3. jobs: two wait for room, a third is refused its wait ----------------------------
until_fact jobs waiting 2
until_fact jobs messages_forwarded 3 # the buffer's 2 and the one its worker sleeps on
[ "$(fact jobs waiting_refused)" = 0 ] || fail "jobs refused a wait: $(facts jobs)"
write "  load: { actor: loadgen.loadgen, args: { target: api, rate: 2000 } }
  j3: { actor: loadgen.loadgen, args: { target: jobs, rate: 0 } }"
"$shoalctl" reload > /dev/null || fail "reload adding j3: exit $?"
for _ in $(seq 1 500); do [ "$(fact jobs waiting_refused)" != 0 ] && break; sleep 0.01; done
[ "$(fact jobs waiting_refused)" != 0 ] || fail "j3 was never refused its wait: $(facts jobs)"
write "  load: { actor: loadgen.loadgen, args: { target: api, rate: 2000 } }"
"$shoalctl" reload > /dev/null || fail "reload removing j3: exit $?"
wait_for "reload: generation 3 from $tmp/s.yaml: "
grep "reload: generation [23] " "$log" | grep -q 'lazy size' &&
    fail "a reload changed lazy's size: $(grep 'reload: generation' "$log")"
for _ in $(seq 1 300); do "$shoalctl" status | grep -q '^source j3 ' || break; sleep 0.01; done
refused_waits=$(fact jobs waiting_refused)
sleep 0.1
[ "$(fact jobs waiting_refused)" = "$refused_waits" ] ||
    fail "jobs's waiting_refused still moves with j3 gone: $refused_waits, then $(fact jobs waiting_refused)"
[ "$(fact jobs waiting)" = 2 ] || fail "jobs's waiters: $(facts jobs)"
[ "$(fact lazy pool_size)" = 3 ] || fail "the reloads changed lazy's running size: $(facts lazy)"

# ---- 4. the same facts in status, the table and /metrics --------------------------------
[ "$(line lazy)" = "pool lazy size 3 target 3 in_flight 5 forwarded 5 bounds 1..4 waiting 0 idle_timeout 100ms expired 3 lazy 2" ] ||
    fail "status's lazy line: $(line lazy)"
jobs_refused=$(fact jobs messages_unhandled)
[ "$(line jobs)" = "pool jobs size 1 target 1 in_flight 3 forwarded 3 pull buffer 2/2 held 1/1 idle 0 refused $jobs_refused bounds 1..1024 waiting 2/2 waiting_refused $refused_waits" ] ||
    fail "status's jobs line: $(line jobs) (refused $jobs_refused, waiting_refused $refused_waits)"
[ "$(line plain)" = "pool plain size 2 target 2 in_flight 0 forwarded 0" ] || fail "status's plain line: $(line plain)"
next_block
header_row='pool             workers       in/s  refused/s  failed/s   queued restarts(total) wait_p50_us wait_p99_us state'
grep -qxF "$header_row" "$tmp/table" || fail "the header changed: $(grep '^pool ' "$tmp/table" | head -1)"
row lazy | grep -Eq '^lazy +3 +0 +0 +0 +5 +0 +[0-9]+\.[0-9] +[0-9]+\.[0-9] running \(running 3, idle 0, submitted 5, completed 0, bounds 1\.\.4\)$' ||
    fail "lazy's row: $(row lazy)"
row jobs | grep -Eq '^jobs +1 +0 +[0-9]+ +0 +2/2 +0 +[0-9]+\.[0-9] +[0-9]+\.[0-9] running \(pull, held 1/1, running [01], idle 0, submitted 3, completed 0, waiting 2, bounds 1\.\.1024\)$' ||
    fail "jobs's row: $(row jobs)"
row plain | grep -Eq '^plain +2 +0 +0 +0 +0 +0 +0\.0 +0\.0 running \(running 0, idle 2, submitted 0, completed 0\)$' || fail "plain's row changed: $(row plain)"
scrape
if command -v promtool > /dev/null; then
    promtool check metrics < "$tmp/m" > "$tmp/promtool" 2>&1 || fail "promtool: $(cat "$tmp/promtool")"
else
    echo "SKIP: promtool is not on PATH (Debian: apt-get install prometheus): format not linted"
fi
want_metric 'shoal_pool_size{pool="lazy"}' 3
want_metric 'shoal_pool_min_workers{pool="lazy"}' 1
want_metric 'shoal_pool_max_workers{pool="lazy"}' 4
want_metric 'shoal_pool_waiting{pool="lazy"}' 0
want_metric 'shoal_pool_idle_timeout_seconds{pool="lazy"}' 0.1
want_metric 'shoal_pool_workers_expired_total{pool="lazy"}' 3
want_metric 'shoal_pool_workers_lazy_started_total{pool="lazy"}' 2
want_metric 'shoal_pool_waiting_refused_total{pool="lazy"}' 0
want_metric 'shoal_pool_max_waiting{pool="lazy"}' ''
want_metric 'shoal_pool_busy_ratio{pool="lazy"}' ''
want_metric 'shoal_pool_autoscale_decisions_total{pool="lazy",direction="up"}' ''
want_metric 'shoal_pool_waiting{pool="jobs"}' 2
want_metric 'shoal_pool_max_waiting{pool="jobs"}' 2
want_metric 'shoal_pool_waiting_refused_total{pool="jobs"}' "$refused_waits"
want_metric 'shoal_pool_min_workers{pool="jobs"}' 1
want_metric 'shoal_pool_max_workers{pool="jobs"}' 1024
want_metric 'shoal_pool_idle_timeout_seconds{pool="jobs"}' ''
want_metric 'shoal_pool_min_workers{pool="plain"}' 1
want_metric 'shoal_pool_max_workers{pool="plain"}' 1024
want_metric 'shoal_pool_waiting{pool="plain"}' 0
# pond's running and idle: lazy's 3 workers in their blocked handlers,
# plain's 2 idle; nobody resized either
want_metric 'shoal_pool_workers_running{pool="lazy"}' 3
want_metric 'shoal_pool_workers_idle{pool="lazy"}' 0
want_metric 'shoal_pool_workers_running{pool="plain"}' 0
want_metric 'shoal_pool_workers_idle{pool="plain"}' 2
want_metric 'shoal_pool_resizes_total{pool="lazy"}' 0
want_metric 'shoal_pool_resizes_total{pool="plain"}' 0
# pond's submitted, completed, failed and dropped: the messages_* counts
# under pond's names, for every pool
for pool in lazy plain jobs; do
    for pair in submitted:forwarded completed:handled failed:failed dropped:dropped; do
        a=$(sed -n "s/^shoal_pool_${pair%%:*}_total{pool=\"$pool\"} //p" "$tmp/m")
        b=$(sed -n "s/^shoal_pool_messages_${pair#*:}_total{pool=\"$pool\"} //p" "$tmp/m")
        [ -n "$a" ] && [ "$a" = "$b" ] ||
            fail "$pool: shoal_pool_${pair%%:*}_total '$a', shoal_pool_messages_${pair#*:}_total '$b'"
    done
done
[ "$(sed -n 's/^shoal_pool_submitted_total{pool="jobs"} //p' "$tmp/m")" -gt 0 ] ||
    fail "jobs submitted nothing: $(grep 'pool="jobs"' "$tmp/m" | grep total)"
grep '{pool="plain"' "$tmp/m" | grep -E '^shoal_pool_(max_waiting|waiting_refused|idle_timeout|workers_expired|workers_lazy|busy|autoscale)' &&
    fail "plain (nothing elastic) has elastic series"
for f in min_workers max_workers waiting max_waiting waiting_refused_total idle_timeout_seconds \
    workers_expired_total workers_lazy_started_total busy_ratio autoscale_decisions_total; do
    [ "$(grep -c "^# TYPE shoal_pool_$f " "$tmp/m")" = 1 ] || fail "shoal_pool_$f: not one TYPE line"
    [ "$(grep -c "^# HELP shoal_pool_$f " "$tmp/m")" = 1 ] || fail "shoal_pool_$f: not one HELP line"
done

# ---- 5. scale api 2..3 under load -----------------------------------------------------
what="scale api 2..3"
run "$shoalctl" scale api 2..3
[ "$rc" = 0 ] && [ ! -s "$tmp/err" ] || fail "$what: exit $rc: $(cat "$tmp/out" "$tmp/err")"
grep -Eqx 'api: bounds 2\.\.3, (3 workers \(clamped from ([4-9]|1[0-2])\)|3 workers|2 workers)' "$tmp/out" ||
    fail "$what said: $(cat "$tmp/out")"
grep -Eq 'info control: scale api to bounds 2\.\.3 \(were 1\.\.12\): size now [23] \(was [0-9]+\)$' "$log" ||
    fail "no log line for $what: $(grep 'control: scale' "$log")"
after=$(wc -l < "$tmp/table")
for _ in $(seq 1 60); do
    read -r size target <<< "$(line api | sed -n 's/^pool api size \([0-9]*\) target \([0-9]*\) .*/\1 \2/p')"
    [ "$size" -ge 2 ] && [ "$size" -le 3 ] && [ "$target" -le 3 ] ||
        fail "api passed its bounds 2..3 under load: $(line api)"
    sleep 0.02
done
next_block
tail -n +"$((after + 1))" "$tmp/table" | grep '^api ' | awk '$2 > 3 { exit 1 }' ||
    fail "a table row of api past 3: $(tail -n +"$((after + 1))" "$tmp/table" | grep '^api ')"
# Three workers cannot keep up with 2000 a second of 2 ms each: busy (not
# all the time: loadgen sends in bursts, one every 10 ms), at max, nothing
# to decide -- the four views agree.
ups=$(fact api ups)
downs=$(fact api downs)
[ "$(fact api min_size)/$(fact api max_size)/$(fact api pool_size)" = 2/3/3 ] || fail "api's inspection: $(facts api)"
line api | grep -Eq "^pool api size 3 target 3 in_flight [0-9]+ forwarded [0-9]+ bounds 2\.\.3 waiting [0-9]+ autoscale busy [0-9.]+% refused [0-9]+/s ups $ups downs $downs\$" ||
    fail "status's api line (ups $ups, downs $downs): $(line api)"
busy=$(line api | sed -n 's/.* autoscale busy \([0-9.]*\)% .*/\1/p')
awk -v b="$busy" 'BEGIN { exit !(b >= 30 && b <= 100) }' ||
    fail "api at 3 workers under load is not busy: $(line api)"
row api "$after" | grep -Eq "^api +3 +[0-9]+ +[0-9]+ +0 +[0-9]+ +0 +[0-9]+\.[0-9] +[0-9]+\.[0-9] running \(running [0-3], idle [0-3], submitted [1-9][0-9]*, completed [1-9][0-9]*, (failed [0-9]+, )?(dropped [0-9]+, )?(waiting [0-9]+, )?resizes [1-9][0-9]*, bounds 2\.\.3, busy [0-9]+(\.[0-9])?%, up $ups, down $downs\)$" ||
    fail "api's row: $(row api "$after")"
scrape
want_metric 'shoal_pool_size{pool="api"}' 3
want_metric 'shoal_pool_min_workers{pool="api"}' 2
want_metric 'shoal_pool_max_workers{pool="api"}' 3
want_metric 'shoal_pool_autoscale_decisions_total{pool="api",direction="up"}' "$ups"
resizes=$(fact api resizes) # autoscale's and the clamp of its bounds
[ -n "$resizes" ] && [ "$resizes" -ge 1 ] || fail "api's inspection has resizes '$resizes'"
want_metric 'shoal_pool_resizes_total{pool="api"}' "$resizes"
want_metric 'shoal_pool_autoscale_decisions_total{pool="api",direction="down"}' "$downs"
awk -v b="$(metric 'shoal_pool_busy_ratio{pool="api"}')" 'BEGIN { exit !(b >= 0.3 && b <= 1) }' ||
    fail "api's busy ratio: $(metric 'shoal_pool_busy_ratio{pool="api"}')"
want_metric 'shoal_pool_idle_timeout_seconds{pool="api"}' ''
facts api | grep -qx 'elastic.autoscale.when=busy,refused' || fail "api's autoscale: $(facts api)"
# Bad forms: named, exit 2; a max past the start max: refused, exit 1.
what="scale api 5..2"
run "$shoalctl" scale api 5..2
expect 2 "" "shoalctl: scale: MIN 5 is above MAX 2 (the fewest workers first: 2..5)
usage: shoalctl scale POOL N|MIN..MAX (see shoalctl help scale)"
what="scale api 2.."
run "$shoalctl" scale api 2..
expect 2 "" "shoalctl: scale: MIN..MAX takes two numbers of workers, the fewest and the most (e.g. 2..16), not '2..'
usage: shoalctl scale POOL N|MIN..MAX (see shoalctl help scale)"
what="scale api 1..13"
run "$shoalctl" scale api 1..13
expect 1 "" "shoalctl: api: max 13 is past 12, the most workers it was started for (its max at start); a reload with max 13 replaces it with a new pool under its name"
what="scale nosuch 1..2"
run "$shoalctl" scale nosuch 1..2
expect 1 "" "shoalctl: unknown pool 'nosuch'"
what="scale api 5"
run "$shoalctl" scale api 5
expect 0 "api: 3 workers (asked 5; clamped to max 3)" ""
[ "$(fact api min_size)/$(fact api max_size)" = 2/3 ] || fail "a refused scale changed api's bounds: $(facts api)"

# ---- 6. within 1..12 again: it grows; calmer load: it shrinks ----------------------------
what="scale api 1..12"
run "$shoalctl" scale api 1..12
expect 0 "api: bounds 1..12, 3 workers" ""
wait_for ' api: autoscale: up 3 -> '
write "  load: { actor: loadgen.loadgen, args: { target: api, rate: 100 } }"
"$shoalctl" reload > /dev/null || fail "reload to 100 a second: exit $?"
wait_for "reload: generation 4 from $tmp/s.yaml: "
grep 'reload: generation 4 ' "$log" | grep -q 'api size' && fail "the reload resized api: $(grep 'reload: generation 4' "$log")"
wait_for ' api: autoscale: down '
down='info <[0-9.]+> api: autoscale: down ([2-9]|1[0-2]) -> ([1-9]|1[01]) workers: calm for [0-9]+ ms \(busy [0-9]+\.[0-9]% <= 40%, refused 0/s <= 0/s\)$'
grep ' api: autoscale: down ' "$log" | head -1 | grep -Eq "$down" ||
    fail "the first shrink's line: $(grep 'autoscale: down' "$log" | head -1)"
[ "$(fact api downs)" -ge 1 ] || fail "api's downs: $(facts api)"

stop_host 3
echo "PASS: test_elastic_view"
