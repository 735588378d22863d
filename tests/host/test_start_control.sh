#!/bin/bash
# test_start_control.sh BUILD_DIR - the control socket while shoald's own
# start waits for its pools' and sources' init (control_reload.c: WHILE
# SHOALD STARTS): answered, not frozen.
#
#   1. shoald starts api (at once), slow (its worker connects in 3 s) and
#      a source dial (2 s). While slow connects: status answers at once,
#      saying "starting generation 1 from PATH for N ms: starting pool
#      slow, 2 of 2 (its first workers run init)" and listing api only;
#      inspect and groups are served, slow is reached by no name; send,
#      call, scale and diff are refused "busy: shoald is starting"; a
#      `shoalctl reload` waits, and runs once the start has ended
#      (generation 2, was 1: one reload line, after the running line).
#      While dial connects, status says "starting the sources (they run
#      init)". After the start, a call is answered.
#   2. `shoalctl stop` while slow connects (drain 5 s): answered "stopping:
#      the start is given up; every pool started stops"; a second stop
#      "stopping already"; a reload waiting is told shoald is stopping;
#      shoald says "shoalctl stop while the pools started: stopped
#      (FILE:L:C: pools.slow: cannot start: interrupted while its workers
#      started)" and exits 0 once the init has returned; nothing ran.
#   3. `shoalctl stop` while an init takes 30 s (drain 1 s): shoald exits 3
#      within 5 s, naming the init it left running ("start: still in its
#      handler").
#   4. SIGTERM during the start (drain 5 s), then `shoalctl stop`: "stopping
#      already" (status says stopping, call is refused as stopping), not a
#      second stop: the 3 s init is waited for and shoald exits 0.
#   5. A start that fails on its own (slow's connect refused after 2 s)
#      while a `shoalctl reload` waits: the reload is told "shoald is
#      stopping: its start failed: FILE:L:C: ...: the reload asked was not
#      done", and shoald exits 2 with the same line.
#   6. SIGTERM while shoald loads its plugins (before the socket exists),
#      one's init hanging until the test lets it return, another plugin
#      after it: that one is not loaded (each may take 10 s): "shoald:
#      SIGTERM while its plugins loaded: stopped (FILE:L:C: plugins.late:
#      not loaded: shoald is stopping)", exit 0, no pool started.
. "$(dirname "$0")/lib.sh" "$1"
export SHOAL_SOCKET=$tmp/ctl.sock
drain=5s

header() {
    cat <<YAML
runtime: { control: ctl.sock }
log: { level: info }
shutdown: { drain: $drain }
plugins:
  echo: $plugins/echo/echo.so
  conn: $plugins/conn/conn.so
pools:
  api: { worker: echo.echo, size: 2 }
YAML
}

# busy CMD...: shoalctl CMD is refused while shoald starts (the time masked)
busy() {
    expect_out_ms "$1 during the start" 1 \
        "shoalctl: busy: shoald is starting (for N ms): $1 waits for it; try again when it ends (\`status\` says what the start waits for)" \
        "$shoalctl" "$@"
}

# during_start STEP: until status says the start waits for STEP (5 s at
# most); sets st to that status
during_start() {
    local want="starting generation 1 from $tmp/s.yaml for [0-9]* ms: $1"
    for _ in $(seq 1 500); do
        st=$("$shoalctl" status 2>&1)
        grep -q "^$want\$" <<< "$st" && break
        sleep 0.01
    done
    grep -q "^$want\$" <<< "$st" || fail "status never said '$want': $st"
    grep -q "^generation 1\$" <<< "$st" || fail "status's generation during the start: $st"
    [ "$(count "running $tmp/s.yaml")" = 0 ] || fail "the start had ended already"
}

# start_bg: shoald on $tmp/s.yaml in the background (pid), its stderr the log
start_bg() {
    : > "$log"
    "$shoald" --no-table "$tmp/s.yaml" 2> "$log" &
    pid=$!
    for _ in $(seq 1 500); do [ -S "$tmp/ctl.sock" ] && break; sleep 0.01; done
}

# ---- 1. served while a pool and a source start ----------------------------------------
write "  slow: { worker: conn.conn, size: 1, args: { connect: 3s } }
sources:
  dial: { actor: conn.conn, args: { connect: 2s } }"
start_bg
during_start "starting pool slow, 2 of 2 (its first workers run init)"
t0=$(now_ms)
st=$("$shoalctl" status)
t1=$(now_ms)
[ $((t1 - t0)) -lt 1000 ] || fail "status took $((t1 - t0)) ms during the start"
grep -q '^pool api size 2 target 2 in_flight 0 forwarded 0$' <<< "$st" ||
    fail "the pool started is not listed: $st"
grep -q '^pool slow' <<< "$st" && fail "the pool being started is listed: $st"
"$shoalctl" --timeout 40000 reload > "$tmp/r1" 2>&1 &
ctl=$!
busy call api x
busy send api x
busy scale api 3
busy diff
"$shoalctl" inspect api | grep -q '"pool":"api"' || fail "inspect api: $("$shoalctl" inspect api 2>&1)"
expect_out_ms "inspect of the pool being started" 1 \
    "shoalctl: pool 'slow' is not running yet: shoald is starting (for N ms): starting pool slow, 2 of 2 (its first workers run init); try again when the start ends" \
    "$shoalctl" inspect slow
expect_out_ms "inspect of a source not started yet" 1 \
    "shoalctl: source 'dial' is not running yet: shoald is starting (for N ms): starting pool slow, 2 of 2 (its first workers run init); try again when the start ends" \
    "$shoalctl" inspect dial
expect_out "inspect of a name the config has not" 1 "shoalctl: unknown pool 'nosuch'" \
    "$shoalctl" inspect nosuch
expect_out "groups during the start" 0 "no groups: no checkout pool names a group" \
    "$shoalctl" groups
kill -0 "$ctl" 2> /dev/null || fail "the reload answered during the start: $(cat "$tmp/r1")"
during_start "starting the sources (they run init)"
wait "$ctl"
rc=$?
[ $rc = 0 ] && [ "$(cat "$tmp/r1")" = "generation 2 (was 1)" ] ||
    fail "the reload asked during the start: exit $rc: $(cat "$tmp/r1")"
[ "$(count "reload: generation")" = 1 ] || fail "$(count "reload: generation") reload lines, not 1"
run=$(grep -n "running $tmp/s.yaml: 2 pools, 1 source" "$log" | cut -d: -f1)
again=$(grep -n "reload: generation 2 from $tmp/s.yaml: no change" "$log" | cut -d: -f1)
[ -n "$run" ] && [ -n "$again" ] && [ "$run" -lt "$again" ] ||
    fail "the reload did not run after the start (lines '$run' and '$again')"
"$shoalctl" status | grep -q '^starting' && fail "status still says starting"
expect_out "a call after the start" 0 "x" "$shoalctl" call api x
stop_host 0
echo "1: served while a pool and a source started; status answered in $((t1 - t0)) ms; the reload asked then ran after"

# ---- 2. shoalctl stop during the start ------------------------------------------------
write "  slow: { worker: conn.conn, size: 1, args: { connect: 3s } }"
start_bg
during_start "starting pool slow, 2 of 2 (its first workers run init)"
"$shoalctl" --timeout 40000 reload > "$tmp/r1" 2>&1 &
ctl=$!
open_n 2 # until it waits: open are it and this status
expect_out "stop during the start" 0 "stopping: the start is given up; every pool started stops" \
    "$shoalctl" stop
expect_out "a second stop" 0 "stopping already: the start is given up" "$shoalctl" stop
wait "$ctl"
rc=$?
[ $rc = 1 ] && [ "$(cat "$tmp/r1")" = "shoalctl: shoald is stopping: the reload asked was not done" ] ||
    fail "the reload asked during the start: exit $rc: $(cat "$tmp/r1")"
wait "$pid"
rc=$?
pid=
[ $rc = 0 ] || fail "shoald exited $rc, not 0, on a stop during the start"
grep -q "^shoald: shoalctl stop while the pools started: stopped ($tmp/s.yaml:9:9: pools.slow: cannot start: interrupted while its workers started)\$" "$log" ||
    fail "no line for the stopped start"
[ "$(count "running $tmp/s.yaml")" = 0 ] || fail "the start ran on"
echo "2: shoalctl stop gave the start up, exit 0"

# ---- 3. shoalctl stop while an init hangs: exit 3, the init named ---------------------
drain=1s
write "  stuck: { worker: conn.conn, size: 1, args: { connect: 30s } }"
start_bg
during_start "starting pool stuck, 2 of 2 (its first workers run init)"
t0=$(now_ms)
expect_out "stop during a 30 s init" 0 "stopping: the start is given up; every pool started stops" \
    "$shoalctl" stop
stopped_leaving "shoalctl stop during the start" stuck/conn start
echo "3: shoalctl stop during a 30 s init: exit 3 in $((t1 - t0)) ms, the init named"

# ---- 4. SIGTERM during the start, then shoalctl stop: not a second stop ----------------
# (it was: the stop gave up the wait for the init, and shoald exited 3)
drain=5s
write "  slow: { worker: conn.conn, size: 1, args: { connect: 3s } }"
start_bg
during_start "starting pool slow, 2 of 2 (its first workers run init)"
kill -TERM "$pid"
for _ in $(seq 1 200); do "$shoalctl" status | grep -q '^stopping draining every pool$' && break; sleep 0.01; done
"$shoalctl" status | grep -q '^stopping draining every pool$' || fail "status does not say stopping after SIGTERM"
expect_out "stop after SIGTERM during the start" 0 "stopping already: the start is given up" "$shoalctl" stop
expect_out "a call after SIGTERM during the start" 1 \
    "shoalctl: shoald is stopping (draining every pool): only status, groups and inspect are served" \
    "$shoalctl" call api x
wait "$pid"
rc=$?
pid=
[ $rc = 0 ] || fail "shoald exited $rc, not 0: the stop after SIGTERM gave up the init's wait"
grep -q "^shoald: SIGTERM while the pools started: stopped ($tmp/s.yaml:9:9: pools.slow: cannot start: interrupted while its workers started)\$" "$log" ||
    fail "no line for the start SIGTERM stopped"
[ "$(count "not waited for")" = 0 ] || fail "an init was not waited for"
echo "4: SIGTERM then shoalctl stop during the start: the init waited for, exit 0"

# ---- 5. a start that fails on its own: a reload waiting is told why ---------------------
write "  slow: { worker: conn.conn, size: 1, args: { connect: 2s, connect_fail_permille: 1000 } }"
start_bg
during_start "starting pool slow, 2 of 2 (its first workers run init)"
"$shoalctl" --timeout 40000 reload > "$tmp/r1" 2>&1 &
ctl=$!
open_n 2 # until it waits: open are it and this status
wait "$ctl"
rc=$?
why="$tmp/s.yaml:9:9: pools.slow: cannot start: $tmp/s.yaml:9:83: args 'connect_fail_permille': connect refused (1000 per mille of connects fail)"
[ $rc = 1 ] && [ "$(cat "$tmp/r1")" = "shoalctl: shoald is stopping: its start failed: $why: the reload asked was not done" ] ||
    fail "the reload asked during a start that failed: exit $rc: $(cat "$tmp/r1")"
wait "$pid"
rc=$?
pid=
[ $rc = 2 ] || fail "shoald exited $rc, not 2, on a start that failed"
grep -qxF "$why" "$log" || fail "no line for the failed start: $(tail -3 "$log")"
echo "5: a start that failed told the reload waiting why"

# ---- 6. SIGTERM while the plugins load: no more is loaded ---------------------------
rm -f "$tmp/go" "$tmp/go.entered"
{ header | sed "s|^pools:\$|  hang: $build/fixtures/init_hangs.so\n  late: $plugins/sleep/sleep.so\npools:|"
  echo "  more: { worker: hang.b, size: 1 }"
  echo "  nap: { worker: late.sleep, size: 1 }"; } > "$tmp/s.yaml"
: > "$log"
SHOAL_FIXTURE_INIT_GO=$tmp/go "$shoald" --no-table "$tmp/s.yaml" 2> "$log" &
pid=$!
until_exists "$tmp/go.entered" "the plugin's init never ran"
kill -TERM "$pid"
sleep 0.1
touch "$tmp/go"
wait "$pid"
rc=$?
pid=
[ $rc = 0 ] || fail "shoald exited $rc, not 0, on a SIGTERM while its plugins loaded"
line=$(grep -n "^  late: " "$tmp/s.yaml" | cut -d: -f1)
grep -qxF "shoald: SIGTERM while its plugins loaded: stopped ($tmp/s.yaml:$line:9: plugins.late: not loaded: shoald is stopping)" "$log" ||
    fail "no line for the stop while the plugins loaded: $(tail -3 "$log")"
[ "$(count " started")" = 0 ] || fail "a pool started: $(grep " started" "$log")"
echo "6: SIGTERM while the plugins loaded: the next one was not loaded, exit 0"
echo "ok: test_start_control"
