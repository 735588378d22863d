#!/bin/bash
# test_reload_slow_start.sh BUILD_DIR - a reload whose new workers take
# long in init: it allows them what a start does, hears a stop meanwhile,
# and a stop after it gave up on one does not wait for that init.
#
#   1. A checkout pool added by a reload whose member takes 11 s to
#      connect, with member_start_timeout 20s: the reload waits for it and
#      succeeds (it had 10 s whatever the config said: "did not start
#      within 10000 ms").
#   2. SIGTERM while a reload waits for a worker whose init takes 30 s:
#      the reload fails at once, saying so, nothing changed; shoald drains
#      (0 pools busy), waits for the init up to the drain's end (1 s), names
#      it in the log and exits 3 -- not 0 once the init returns, 30 s
#      later, after SIGTERM and SIGINT went unheard.
#   3. The same when the SIGTERM comes the moment the init has started (the
#      init sends it), on a reload and at a start: exit 3, the init named
#      (it was not seen as a handler, and the join waited 30 s).
. "$(dirname "$0")/lib.sh" "$1"
export SHOAL_SOCKET=$tmp/ctl.sock
fixtures=$build/fixtures

header() {
    cat <<YAML
runtime: { control: ctl.sock }
log: { level: info }
shutdown: { drain: 1s }
plugins:
  echo: $plugins/echo/echo.so
  conn: $plugins/conn/conn.so
pools:
  api: { worker: echo.echo, size: 2 }
YAML
}

# ---- 1. member_start_timeout past 10 s, on a reload ----------------------------
write ""
: > "$log"
"$shoald" --no-table "$tmp/s.yaml" 2> "$log" &
pid=$!
wait_for "running $tmp/s.yaml: 1 pool"
write "  db: { kind: checkout, member: conn.conn, init: 1, max: 2, member_start_timeout: 20s, args: { connect: 11s } }"
t0=$(now_ms)
out=$("$shoalctl" --timeout 30000 reload 2>&1); rc=$?
t1=$(now_ms)
[ $rc -eq 0 ] || fail "a reload whose member connects in 11 s (member_start_timeout 20s): exit $rc ($out)"
[ "$(gen)" = 2 ] || fail "generation $(gen), not 2"
[ $((t1 - t0)) -ge 10500 ] || fail "the reload took $((t1 - t0)) ms: the member's 11 s connect was not waited for"
"$shoalctl" status | grep -q '^pool db size 1 ' || fail "db is not there: $("$shoalctl" status)"
[ "$("$shoalctl" call api still-here)" = still-here ] || fail "api no longer answers"
echo "1: the reload waited $((t1 - t0)) ms for the member, and succeeded"

# ---- 2. SIGTERM while a reload waits for an init ---------------------------------
write "  db: { kind: checkout, member: conn.conn, init: 1, max: 2, member_start_timeout: 20s, args: { connect: 11s } }
  slow: { worker: conn.conn, size: 1, args: { connect: 30s } }"
"$shoalctl" --timeout 40000 reload > "$tmp/reload.out" 2>&1 &
ctl=$!
sleep 0.5
t0=$(now_ms)
kill -TERM "$pid"
wait $ctl
rc=$?
out=$(cat "$tmp/reload.out")
want="shoalctl: reload failed: $tmp/s.yaml:10:9: pools.slow: cannot start: interrupted while its workers started; generation 2 keeps running"
[ $rc -eq 1 ] && [ "$out" = "$want" ] || fail "the reload a SIGTERM interrupted: exit $rc: $out
want: $want"
stopped_leaving "SIGTERM during the reload" slow/conn shutdown
grep -q "reload failed (1 so far), generation 2 keeps running: $tmp/s.yaml:10:9: pools.slow: cannot start: interrupted while its workers started" "$log" ||
    fail "no reload failure in the log"
grep -q "SIGTERM: draining every pool (at most 1000 ms)" "$log" || fail "no drain"
grep -Eq "drained for [0-9]+ ms; 0 pools still busy, but 1 handler still in plugin code: exiting without waiting for it \(status 3\)" "$log" ||
    fail "no exit line"
echo "2: SIGTERM stopped the reload and shoald in $((t1 - t0)) ms, exit 3"

# ---- 3. a stop the moment an init has started -------------------------------------
# The init sends the SIGTERM itself (fault's init: stop), then sleeps 30 s:
# younger than the monitor's hand-off mark (~100 ms) when the drain ends, it
# was counted as no handler at all -- the threads were joined, the join
# waited the 30 s, SIGINT unheard, exit 0. On a reload, and at a start.
young() { # young WHAT WHEN: shoald's end after the init's own SIGTERM
    stopped_leaving "$1" young/fault "$2"
    echo "3: $1: exit 3 in $((t1 - t0)) ms"
}
write ""
sed -i "s|^plugins:\$|plugins:\n  fault: $fixtures/fault.so|" "$tmp/s.yaml"
: > "$log"
"$shoald" --no-table "$tmp/s.yaml" 2> "$log" &
pid=$!
wait_for "running $tmp/s.yaml: 1 pool"
echo "  young: { worker: fault.fault, size: 1, args: { init: stop, ms: 30s } }" >> "$tmp/s.yaml"
t0=$(now_ms)
kill -HUP "$pid"
young "a reload" shutdown
: > "$log"
"$shoald" --no-table "$tmp/s.yaml" 2> "$log" &
pid=$!
t0=$(now_ms)
young "a start" start
echo "ok: test_reload_slow_start"
