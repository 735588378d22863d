#!/bin/bash
# test_diff_control.sh BUILD_DIR - `shoalctl diff` runs out of the control
# socket's handling (control_diff.c): a diff that waits on a plugin it
# loads leaves the socket served. Before, a diff naming a plugin whose init
# hung held the host thread -- every client, signals, the table -- 10 s.
#
#   1. A diff of a config naming a plugin whose init waits for a file (made
#      once the test has looked). Meanwhile: status answers at once, saying
#      "diffing FILE for T ms: reading it, loading its plugins"; a call is
#      answered; 4 more diffs wait (a 6th is told busy: at most 4 wait
#      beside the one running); a reload waits. Once the init returns: the first diff answers its
#      plan, the others answer in the order they came, and the reload runs
#      after them (generation 2, one reload line).
#   2. The client of a diff that runs goes away (its --timeout passes:
#      "no answer ... within 1000 ms; the diff goes on there, ..."): nothing
#      is answered to it, the log says nothing went wrong, and the next
#      diff is answered.
#   3. `shoalctl stop` while a diff waits on the init: answered at once; a
#      diff waiting behind it is told "shoald is stopping: the diff asked
#      was not done"; once the init returns the running diff is answered,
#      and shoald drains and exits 0. The same with a plugin after the one
#      whose init waits: it is not loaded, and the running diff is told it
#      was not done, naming it (before, every plugin left was loaded).
#   4. SIGTERM while a diff waits on an init, a reload and two diffs
#      behind it, the diff's first plugin one whose fini waits for another
#      file: once the init returns, the running diff is told it was not
#      done (its last plugin not loaded), the reload and the two diffs
#      waiting are too (before, the diffs ran: the signal was read only
#      after every diff asked; and the reload ran before the signal was
#      read, failing), shoald drains at once -- the fini runs after the
#      drain, not before it -- and exits 0 once the fini returns.
#   5. A SIGHUP while a diff runs, two diffs asked before it waiting: its
#      reload runs after all three, which answer against generation 1
#      (before, it ran between the second and the third).
. "$(dirname "$0")/lib.sh" "$1"
fixtures=$build/fixtures
export SHOAL_SOCKET=$tmp/ctl.sock
export SHOAL_FIXTURE_INIT_GO=$tmp/go # init_hangs.so's init returns once it exists

header() {
    cat <<YAML
runtime: { control: ctl.sock }
log: { level: info }
shutdown: { drain: 5s }
plugins:
  echo: $plugins/echo/echo.so
pools:
  api: { worker: echo.echo, size: 2 }
YAML
}
# hang.yaml: the config with a plugin whose init waits for $tmp/go
hang_config() {
    header | sed "s|^pools:\$|  hang: $fixtures/init_hangs.so\npools:|" > "$tmp/hang.yaml"
    echo "  more: { worker: echo.echo, size: 1 }" >> "$tmp/hang.yaml"
}
start_host() {
    write ""
    rm -f "$tmp/go" "$tmp/go.entered"
    : > "$log"
    "$shoald" --no-table "$tmp/s.yaml" 2> "$log" &
    pid=$!
    wait_for "running $tmp/s.yaml: 1 pool"
}
# diff_bg OUT FILE: a diff of FILE in the background (ctl: its PID)
diff_bg() {
    "$shoalctl" --timeout 30000 diff "$2" > "$1" 2>&1 &
    ctl=$!
}
# answered NAME RC TEXT [WHAT]: the client whose PID is in $NAME (its
# output in $tmp/NAME) exits RC, having printed TEXT; else fails, saying WHAT
answered() {
    local rc
    wait "${!1}"
    rc=$?
    [ $rc = "$2" ] && [ "$(cat "$tmp/$1")" = "$3" ] ||
        fail "${4:-$1}: exit $rc: $(cat "$tmp/$1") (want exit $2: $3)"
}
# until_entered: until the plugin's init has begun (5 s at most)
until_entered() { until_exists "$tmp/go.entered" "the plugin's init never began"; }
plan="generation 1 -> 2: start more"
# queue_diffs N: diffs d2..dN of s.yaml wait behind the running d1, each
# asked once the last is in (their order is theirs)
queue_diffs() {
    local n
    for n in $(seq 2 "$1"); do
        diff_bg "$tmp/d$n" "$tmp/s.yaml"
        eval "d$n=$ctl"
        open_n $((n + 1)) # d1..dn and the open_n's status
    done
}
# diffs_behind_hang N: a new shoald; d1, a diff of hang.yaml, waits on the
# plugin's init, and d2..dN wait behind it
diffs_behind_hang() {
    start_host
    hang_config
    diff_bg "$tmp/d1" "$tmp/hang.yaml"
    d1=$ctl
    until_entered
    queue_diffs "$1"
}

# ---- 1. served while a diff waits on a plugin's init ----------------------------------
diffs_behind_hang 1
t0=$(now_ms)
st=$("$shoalctl" status)
t1=$(now_ms)
[ $((t1 - t0)) -lt 1000 ] || fail "status took $((t1 - t0)) ms during the diff"
grep -q "^diffing $tmp/hang.yaml for [0-9]* ms: reading it, loading its plugins\$" <<< "$st" ||
    fail "status during the diff: $st"
expect_out "a call during the diff" 0 "x" "$shoalctl" call api x
queue_diffs 5 # 4 more wait
expect_out "a sixth diff" 1 \
    "shoalctl: busy: 4 diff requests already wait (a diff may load plugins, up to 10 s each); try again when they are done" \
    "$shoalctl" diff "$tmp/s.yaml"
"$shoalctl" --timeout 30000 reload > "$tmp/r1" 2>&1 &
r1=$!
open_n 7
for k in "$d1" "$d2" "$d3" "$d4" "$d5" "$r1"; do
    kill -0 "$k" 2> /dev/null || fail "a request was answered while the diff waited"
done
touch "$tmp/go"
answered d1 0 "$plan"
for k in d2 d3 d4 d5; do
    answered $k 0 "generation 1 -> 2: no change"
done
answered r1 0 "generation 2 (was 1)" "the reload asked during the diff"
[ "$(count "reload: generation")" = 1 ] || fail "$(count "reload: generation") reload lines, not 1"
"$shoalctl" status | grep -q '^diffing' && fail "status still says diffing"
echo "1: served while a diff waited on a plugin's init; 5 diffs in order, then the reload"

# ---- 2. the client of a running diff goes away -------------------------------------
rm -f "$tmp/go" "$tmp/go.entered"
header > "$tmp/hang.yaml"
sed -i "s|^pools:\$|  hang2: $fixtures/init_hangs.so\npools:|" "$tmp/hang.yaml"
echo "  more: { worker: echo.echo, size: 1 }" >> "$tmp/hang.yaml"
"$shoalctl" --timeout 1000 diff "$tmp/hang.yaml" > "$tmp/d1" 2>&1 &
ctl=$!
until_entered
wait "$ctl"
rc=$?
[ $rc = 1 ] && [ "$(cat "$tmp/d1")" = "shoalctl: no answer from shoald at $SHOAL_SOCKET within 1000 ms; the diff goes on there, changing nothing, unanswered (\`shoalctl status\` says while it runs)" ] ||
    fail "a diff past its --timeout: exit $rc: $(cat "$tmp/d1")"
for _ in $(seq 1 200); do
    [ "$("$shoalctl" status | sed -n 's/^control \([0-9]*\) open.*/\1/p')" = 1 ] && break
    sleep 0.01
done
touch "$tmp/go"
for _ in $(seq 1 500); do "$shoalctl" status | grep -q '^diffing' || break; sleep 0.01; done
expect_out "a diff after one whose client went away" 0 "generation 2 -> 3: start more" \
    "$shoalctl" diff "$tmp/hang.yaml"
alive
stop_host 0
echo "2: a diff whose client went away ran to its end; the next was answered"

# ---- 3. stop while a diff waits ---------------------------------------------------------
diffs_behind_hang 2
expect_out "stop during a diff" 0 "stopping: draining every pool" "$shoalctl" stop
wait "$d2"
rc=$?
[ $rc = 1 ] && [ "$(cat "$tmp/d2")" = "shoalctl: shoald is stopping: the diff asked was not done" ] ||
    fail "the diff waiting behind the stop: exit $rc: $(cat "$tmp/d2")"
kill -0 "$pid" || fail "shoald did not wait for the diff's init"
touch "$tmp/go"
answered d1 0 "$plan" "the running diff"
wait "$pid"
rc=$?
pid=
[ $rc = 0 ] || fail "shoald exited $rc, not 0, on a stop during a diff"
grep -q "shoalctl stop: draining every pool" "$log" || fail "no drain line for the stop"
echo "3: a stop during a diff: answered at once, shoald stopped once the diff ended"

# late.yaml: hang.yaml with a plugin after hang, and its pool
late_config() {
    hang_config
    sed -i "s|^pools:\$|  late: $plugins/sleep/sleep.so\npools:|" "$tmp/hang.yaml"
    echo "  nap: { worker: late.sleep, size: 1 }" >> "$tmp/hang.yaml"
}
# not_done OUT PID PLUGIN: the diff PID wrote to OUT was told it was not
# done, stopped before PLUGIN (at its line in hang.yaml)
not_done() {
    local rc line
    wait "$2"
    rc=$?
    line=$(grep -n "^  $3: " "$tmp/hang.yaml" | cut -d: -f1)
    [ $rc = 1 ] && grep -Eqx "shoalctl: shoald is stopping: the diff asked was not done \($tmp/hang.yaml:$line:[0-9]+: plugins.$3: not loaded: shoald is stopping\)" "$1" ||
        fail "the running diff: exit $rc: $(cat "$1")"
}
start_host
late_config
diff_bg "$tmp/d1" "$tmp/hang.yaml"
d1=$ctl
until_entered
expect_out "stop during a diff with a plugin left" 0 "stopping: draining every pool" "$shoalctl" stop
touch "$tmp/go"
not_done "$tmp/d1" "$d1" late
wait "$pid"
rc=$?
pid=
[ $rc = 0 ] || fail "shoald exited $rc, not 0, on a stop during a diff"
echo "3b: a stop during a diff: the plugin after the one loading was not loaded"

# ---- 4. SIGTERM during a diff: the diffs behind it not run, the fini after the drain ---
export SHOAL_FIXTURE_FINI_GO=$tmp/fgo # fini_hangs.so's fini returns once it exists
rm -f "$tmp/fgo" "$tmp/fgo.entered"
start_host
late_config
sed -i "s|^  hang: |  fin: $fixtures/fini_hangs.so\n  hang: |" "$tmp/hang.yaml"
echo "  last: { worker: fin.b, size: 1 }" >> "$tmp/hang.yaml"
diff_bg "$tmp/d1" "$tmp/hang.yaml"
d1=$ctl
until_entered
"$shoalctl" --timeout 30000 reload > "$tmp/r1" 2>&1 &
r1=$!
open_n 3
diff_bg "$tmp/d2" "$tmp/s.yaml"
d2=$ctl
open_n 4
diff_bg "$tmp/d3" "$tmp/s.yaml"
d3=$ctl
open_n 5
kill -TERM "$pid"
sleep 0.2
for k in "$d1" "$r1" "$d2" "$d3"; do
    kill -0 "$k" 2> /dev/null || fail "a request was answered before the init returned"
done
t0=$(now_ms)
touch "$tmp/go"
not_done "$tmp/d1" "$d1" late
for k in d2 d3; do
    answered $k 1 "shoalctl: shoald is stopping: the diff asked was not done" \
        "$k, asked behind the running diff"
done
answered r1 1 "shoalctl: shoald is stopping: the reload asked was not done" \
    "the reload asked behind the running diff"
[ "$(count "reload")" = 0 ] || fail "a reload ran: $(grep reload "$log")"
wait_for "drained in "
t1=$(now_ms)
fini_after_drain "$tmp/fgo" "the diff"
echo "4: SIGTERM during a diff: 3 diffs and a reload not done, drained $((t1 - t0)) ms after the init returned, the fini after"
unset SHOAL_FIXTURE_FINI_GO

# ---- 5. SIGHUP during a diff: its reload after the diffs asked before it ----------------
diffs_behind_hang 3
kill -HUP "$pid"
sleep 0.2
touch "$tmp/go"
answered d1 0 "$plan" "the running diff"
for k in d2 d3; do
    answered $k 0 "generation 1 -> 2: no change" "$k, asked before the SIGHUP"
done
wait_for "reload: generation 2 from "
[ "$(count "reload: generation")" = 1 ] || fail "$(count "reload: generation") reload lines, not 1"
stop_host 0
echo "5: a SIGHUP during a diff: its reload ran after the diffs asked before it"
echo "ok: test_diff_control"
