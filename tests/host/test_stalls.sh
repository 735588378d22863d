#!/bin/bash
# test_stalls.sh BUILD_DIR - handlers that do not return, on a shoald of 2
# dispatcher threads: a pool of 2 workers that loop in their handler
# (fault.fault, mode loop), each sent one message. Another pool keeps
# answering, `shoalctl status` answers within 1 s and lists both stalls, the
# log has one line when each passes stall_warn and one when it returns, and
# the thread count goes back to normal. Then loops that never end: SIGTERM
# exits 3 within shutdown.drain + 1 s, naming each stuck handler and what
# was queued (also when no thread is left to run the pools' actors); while
# it drains, status and inspect answer, a reload is refused and a SIGHUP is
# said once and ignored; and a
# second SIGTERM while draining exits at once. An init that hangs while
# the pools start (conn's connect): SIGTERM stops the start and exits 3
# within shutdown.drain + 1 s, naming it; one that ends meanwhile is waited
# for (exit 0); past member_start_timeout the start fails and exits 2 the
# same way. And a plugin whose own fini never returns: shoald exits 0 after
# 10 s, saying so.
. "$(dirname "$0")/lib.sh" "$1"
fault=$build/fixtures/fault.so
[ -f "$fault" ] || fail "no $fault"
export SHOAL_SOCKET=$tmp/ctl.sock
# Under ThreadSanitizer a process sleeps 1 s on its way out (atexit_sleep_ms);
# the exit times measured here are shoald's own.
export TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}atexit_sleep_ms=0"

# config LOOP DRAIN [EXTRA]: the slow pool loops LOOP (a duration) per
# message (0s: for ever); EXTRA: runtime.max_extra_threads (auto)
config() {
    cat > "$tmp/s.yaml" <<YAML
runtime: { threads: 2, stall_warn: 300ms, control: ctl.sock, max_extra_threads: ${3:-auto} }
log: { level: info }
shutdown: { drain: $2 }
plugins:
  fault: $fault
  echo: $plugins/echo/echo.so
pools:
  slow:
    worker: fault.fault
    size: 2
    mailbox: 10
    args: { mode: loop, ms: $1 }
  api:
    worker: echo.echo
    size: 2
YAML
}
# start [WHAT]: shoald on the config, until it runs WHAT (2 pools)
start() { start_until "gen=1 info running $tmp/s.yaml: ${1:-2 pools} on 2 threads"; }
# sigterm_ms: SIGTERM to shoald, waits for it; sets rc (its exit status)
# and ms (how long it took)
sigterm_ms() {
    local t0
    t0=$(now_ms)
    kill -TERM $pid
    wait $pid
    rc=$?
    ms=$(($(now_ms) - t0))
    pid=
}
threads_of() { awk '/^Threads:/ { print $2 }' "/proc/$pid/status"; }
# send_slow N: N messages to the slow pool (its FIFO alternates workers)
send_slow() {
    for i in $(seq 1 "$1"); do
        "$shoalctl" send slow "m$i" || fail "send slow m$i: exit $?"
    done
}
# api_answers: the echo pool answers calls while the slow pool is stuck
api_answers() {
    for i in 1 2 3 4 5; do
        out=$("$shoalctl" call api "hello$i" --timeout 2000) || fail "call api: exit $?"
        [ "$out" = "hello$i" ] || fail "call api said '$out'"
    done
}
STALLED='warn <[0-9.]*> slow/fault: stall: in its handler for [0-9.]* s (pool slow, behaviour fault, thread [0-3])$'
RETURNED='warn <[0-9.]*> slow/fault: stall: returned after [0-9.]* s (pool slow, behaviour fault, thread [0-3])$'

# ---- stalls seen and survived ------------------------------------------------
config 3s 5s
start
base=$(threads_of)
send_slow 2
wait_for "$STALLED" 2
api_answers
t0=$(now_ms)
out=$(timeout 1 "$shoalctl" status) || fail "status did not answer within 1 s (exit $?)"
[ $(($(now_ms) - t0)) -lt 1000 ] || fail "status took $(($(now_ms) - t0)) ms"
[ "$(echo "$out" | grep -c '^stalled <[0-9.]*> slow/fault for [0-9]* ms (pool slow, behaviour fault, thread [0-3])$')" = 2 ] ||
    fail "status does not list both stalls: $out"
inspect=$("$shoalctl" inspect slow) || fail "inspect slow: exit $?"
echo "$inspect" | grep -q '"stalled":\[{"pid":"[0-9.]*","ms":[0-9]*,"thread":[0-3]},{"pid":"[0-9.]*","ms":[0-9]*,"thread":[0-3]}\]' ||
    fail "inspect slow: $inspect"
"$shoalctl" inspect api | grep -q '"stalled":\[\]' || fail "inspect api: $("$shoalctl" inspect api)"
# One compensating thread per stuck one at most, started while work waits.
extra=$(echo "$out" | sed -n 's/^compensating threads \([12]\) (for handlers that do not return)$/\1/p')
[ -n "$extra" ] || fail "status does not show 1 or 2 compensating threads: $out"
started=$(count 'dispatcher: compensating thread [23] started: [12] stuck in a handler')
[ "$started" -ge 1 ] && [ "$started" -le 2 ] || fail "$started compensating threads started"
now=$(threads_of)
[ "$now" -gt "$base" ] && [ "$now" -le $((base + 2)) ] || fail "threads $now while stuck, $base before"
# The loops end (3 s each): one line each, and back to 2 threads.
wait_for "$RETURNED" 2
[ "$(count "$STALLED")" = 2 ] || fail "stall lines: $(count "$STALLED")"
for _ in $(seq 1 1000); do
    [ "$(threads_of)" = "$base" ] && break
    sleep 0.01
done
[ "$(threads_of)" = "$base" ] || fail "threads $(threads_of) after the stalls, $base before"
wait_for "dispatcher: compensating thread [23] retired (0 left)"
"$shoalctl" status | grep -q '^stalled' && fail "status still lists a stall: $("$shoalctl" status)"
api_answers
kill -TERM $pid
wait $pid
rc=$?
pid=
[ $rc -eq 0 ] || fail "SIGTERM after the stalls: exit $rc"
grep -q "drained in .* ms; 0 pools still busy, stopped" "$log" || fail "not drained"

# ---- shutdown ends whatever is stuck -----------------------------------------
config 0s 1s
start
send_slow 5 # 2 in the loops, 3 queued behind them
wait_for "$STALLED" 2
api_answers
sigterm_ms
[ $rc -eq 3 ] || fail "SIGTERM with stuck handlers: exit $rc"
[ $ms -lt 2000 ] || fail "SIGTERM with stuck handlers took $ms ms (drain 1 s)"
# 5 in flight: 2 in the handlers that loop, 3 queued behind them.
grep -q "shutdown: pool slow still busy after 1000 ms: 5 in flight, " "$log" || fail "no queued count"
[ "$(count 'warn <[0-9.]*> slow/fault: shutdown: still in its handler after [0-9.]* s (pool slow, behaviour fault, thread [0-3])$')" = 2 ] ||
    fail "the stuck handlers are not named"
grep -q "shutdown: 5 messages lost (queued, or in handlers that did not return), counted as dropped; ledger: accepted [0-9]* = handled [0-9]* + failed 0 + dropped 5 + in flight 0; refused 0" "$log" ||
    fail "no loss in the ledger"
grep -q "1 pool still busy: exiting without waiting for them (status 3)" "$log" || fail "no last line"
[ -e "$tmp/ctl.sock" ] && fail "the control socket is left behind"

# ---- ... even with no thread left to run the pools' actors ---------------------
# max_extra_threads 0: both threads stuck, nothing else runs; the counts are
# read without the pools' actors (never uninitialised numbers).
config 0s 1s 0
start
send_slow 5
wait_for "$STALLED" 2
"$shoalctl" send api hi || fail "send api: exit $?" # queued: no thread for it
sigterm_ms
[ $rc -eq 3 ] || fail "SIGTERM with no thread free: exit $rc"
[ $ms -lt 2000 ] || fail "SIGTERM with no thread free took $ms ms (drain 1 s)"
grep -q "shutdown: pool slow still busy after 1000 ms: 5 in flight, 2 workers, 0 retiring" "$log" ||
    fail "no counts for slow"
grep -q "shutdown: pool api still busy after 1000 ms: 1 in flight, 2 workers, 0 retiring" "$log" ||
    fail "no counts for api"
grep -q "shutdown: 6 messages lost (queued, or in handlers that did not return), counted as dropped; ledger: accepted 6 = handled 0 + failed 0 + dropped 6 + in flight 0; refused 0" "$log" ||
    fail "no loss in the ledger"
[ "$(count 'compensating thread')" = 0 ] || fail "a compensating thread started with max_extra_threads 0"

# ---- a second SIGTERM ends a stuck drain at once -------------------------------
config 0s 30s
start
send_slow 2
wait_for "$STALLED" 2
kill -TERM $pid
wait_for "SIGTERM: draining every pool (at most 30000 ms)"
# While it drains, the control socket still answers what is going on, and
# refuses what would change it.
out=$("$shoalctl" status) || fail "status while draining: exit $?"
echo "$out" | grep -qx "stopping draining every pool" || fail "status while draining: $out"
echo "$out" | grep -q "^pool slow size .* draining$" || fail "slow while draining: $out"
"$shoalctl" inspect slow | grep -q '"state":"draining"' || fail "inspect slow while draining"
out=$("$shoalctl" inspect api 2>&1) && fail "inspect of an ended pool succeeded: $out"
[ "$out" = "shoalctl: pool 'api' has ended (shoald is stopping): \`status\` has its counts" ] ||
    fail "inspect of an ended pool said: $out"
out=$("$shoalctl" reload 2>&1) && fail "a reload while draining succeeded"
[ "$out" = "shoalctl: shoald is stopping (draining every pool): only status, groups and inspect are served" ] ||
    fail "a reload while draining said: $out"
[ "$("$shoalctl" stop)" = "stopping already: draining every pool" ] || fail "stop while draining"
# A SIGHUP while draining starts no reload, and is said once however many
# come (shoald.8).
reloads=$(count "reload")
kill -HUP $pid
wait_for "SIGHUP while draining: no reload"
for _ in 1 2; do
    sleep 0.3
    kill -HUP $pid
done
sleep 0.3
"$shoalctl" status > /dev/null || fail "status after SIGHUPs while draining: exit $?"
[ "$(count "SIGHUP while draining: no reload")" = 1 ] || fail "SIGHUP while draining: not said once"
# (its own line is the one more with "reload" in it)
[ "$(count "reload")" = "$((reloads + 1))" ] || fail "a SIGHUP while draining reloaded: $(grep reload "$log")"
t0=$(now_ms)
kill -TERM $pid
wait $pid
rc=$?
ms=$(($(now_ms) - t0))
pid=
[ $rc -eq 3 ] || fail "second SIGTERM: exit $rc"
[ $ms -lt 1000 ] || fail "second SIGTERM took $ms ms"
[ "$(count "SIGTERM while draining: exiting now (status 3)")" = 1 ] || fail "no line for it"
# What it leaves is said as a drain that runs out says it (it said nothing):
# the two handlers still in their loops, and the two messages lost.
[ "$(count "slow/fault: shutdown: still in its handler after [0-9.]* s (pool slow, behaviour fault, thread [01])")" = 2 ] ||
    fail "no report of slow's handlers after the second SIGTERM"
grep -q "shutdown: 2 messages lost (queued, or in handlers that did not return), counted as dropped; ledger: accepted [0-9]* = handled [0-9]* + failed 0 + dropped 2 + in flight 0; refused 0" "$log" ||
    fail "no loss in the ledger after the second SIGTERM"
[ -e "$tmp/ctl.sock" ] && fail "the control socket is left behind"

# ---- a stuck source and a stuck pool share one shutdown.drain -------------------
# The sources stop first, within the deadline, and the pools drain in what
# is left of it (host.c: one end for both): with a handler stuck in each,
# shoald exits 3 within drain (1 s) + 1 s, the source's handler reported.
config 0s 1s
cat >> "$tmp/s.yaml" <<YAML
sources:
  stuck: { actor: fault.fault, args: { mode: loop, ms: 0s } }
YAML
start "2 pools, 1 source"
"$shoalctl" send stuck go > /dev/null || fail "send to the source"
send_slow 1
wait_for 'stall: in its handler' 2
sigterm_ms
[ $rc -eq 3 ] || fail "a stuck source and pool: exit $rc"
[ $ms -lt 2000 ] || fail "a stuck source and pool: stopped after $ms ms (drain 1 s)"
[ "$(count 'stuck/fault: shutdown: still in its handler after')" = 1 ] ||
    fail "the source's stuck handler is not reported"

# ---- an init that hangs while the pools start ------------------------------------
# starting CONNECT START_TIMEOUT [DRAIN [EXTRA [WHO]]]: a checkout pool
# whose one member connects for CONNECT, given START_TIMEOUT, and
# shutdown.drain DRAIN (1s); EXTRA appended to the file; shoald on it, not
# yet running, until WHO (db/conn) is stalled in its init
starting() {
    cat > "$tmp/s.yaml" <<YAML
runtime: { threads: 2, control: ctl.sock }
shutdown: { drain: ${3:-1s} }
plugins:
  conn: $plugins/conn/conn.so
pools:
  db: { kind: checkout, member: conn.conn, init: 1, member_start_timeout: $2, args: { connect: $1 } }
${4:-}
YAML
    : > "$log"
    "$shoald" --no-table "$tmp/s.yaml" 2> "$log" &
    pid=$!
    wait_for "${5:-db/conn}: stall: in its handler"
}
NOT_RUN="shoald: SIGTERM while the pools started: stopped ($tmp/s.yaml:6:7: pools.db: cannot start: interrupted while its workers started)"
starting 60s 2m
sigterm_ms
[ $rc -eq 3 ] || fail "SIGTERM while an init hangs: exit $rc"
[ $ms -lt 2500 ] || fail "SIGTERM while an init hangs: stopped after $ms ms (drain 1 s)"
[ "$(count 'warn <[0-9.]*> db/conn: start: still in its handler after [0-9.]* s (pool db, behaviour conn, thread [01]): not waited for$')" = 1 ] ||
    fail "the hung init is not named"
[ "$(grep -cxF "$NOT_RUN" "$log")" = 1 ] || fail "the stopped start is not said"
[ "$(count 'running ')" = 0 ] || fail "it ran"
starting 1500ms 2m
sigterm_ms
[ $rc -eq 0 ] || fail "SIGTERM while an init that ends runs: exit $rc"
[ $ms -lt 2500 ] || fail "SIGTERM while an init that ends runs: stopped after $ms ms"
[ "$(count 'not waited for')/$(grep -cxF "$NOT_RUN" "$log")" = 0/1 ] || fail "an init that ended in time"
starting 60s 1s
t0=$(now_ms)
wait $pid
rc=$? ms=$(($(now_ms) - t0)) pid=
[ $rc -eq 2 ] || fail "an init past member_start_timeout: exit $rc"
[ $ms -lt 3500 ] || fail "an init past member_start_timeout: stopped after $ms ms (1 s + drain 1 s)"
[ "$(count 'db/conn: start: still in its handler after [0-9.]* s (.*): not waited for$')" = 1 ] ||
    fail "the hung init is not named"
grep -qxF "$tmp/s.yaml:6:7: pools.db: cannot start: a member did not start within 1000 ms (member_start_timeout)" "$log" ||
    fail "the failed start's error"
# A signal ends the wait for a hung init at once: after a failed start
# (drain 10 s), and a second one after a stopped start.
starting 60s 1s 10s
wait_for "a member did not start within 1000 ms"
sleep 0.3
sigterm_ms
[ $rc -eq 3 ] && [ $ms -lt 1000 ] || fail "SIGTERM while a failed start waits: exit $rc after $ms ms"
[ "$(count 'db/conn: start: still in its handler after')" = 1 ] || fail "the hung init is not named"
starting 60s 2m 10s
kill -TERM $pid
sleep 0.5
sigterm_ms
[ $rc -eq 3 ] && [ $ms -lt 1000 ] || fail "a second SIGTERM while a stopped start waits: exit $rc after $ms ms"
# A source's init that hangs: the same.
starting 1ms 2m 1s "sources:
  s1: { actor: conn.conn, args: { connect: 60s } }" s1/conn
sigterm_ms
[ $rc -eq 3 ] && [ $ms -lt 2500 ] || fail "SIGTERM while a source starts: exit $rc after $ms ms"
grep -qxF "shoald: SIGTERM while the pools started: stopped ($tmp/s.yaml:8:7: sources.s1: cannot start: interrupted while its workers started)" "$log" ||
    fail "the stopped source start is not said: $(grep shoald: "$log")"

# ---- a reload's live changes while every dispatcher thread is stuck ------------------
# Both threads in slow's loops (6 s), no compensating thread: three kept
# pools resized by a reload share one deadline (5 s), not 5 s each; each is
# said, and applied once the actors run again.
config 6s 1s 0
cat >> "$tmp/s.yaml" <<YAML
  p1: { worker: echo.echo, size: 1 }
  p2: { worker: echo.echo, size: 1 }
  p3: { worker: echo.echo, size: 1 }
YAML
start "5 pools"
send_slow 2
wait_for "$STALLED" 2
sed -i 's/^  p\([123]\): { worker: echo.echo, size: 1 }$/  p\1: { worker: echo.echo, size: 2 }/' "$tmp/s.yaml"
t0=$(now_ms)
"$shoalctl" --timeout 30000 reload > /dev/null || fail "the reload with every thread stuck: exit $?"
ms=$(($(now_ms) - t0))
[ $ms -ge 4500 ] && [ $ms -lt 7000 ] || fail "the reload's live changes took $ms ms (one deadline of 5 s)"
[ "$(count "warn reload: pool p[123]: a live change was not answered within 5000 ms (its actor did not run: every dispatcher thread busy?); it is still queued and takes effect when the actor runs: p[123] size 1 -> 2 (failed)")" = 3 ] ||
    fail "not one line for each pool whose change was not answered"
wait_for "$RETURNED" 2
for p in p1 p2 p3; do
    for _ in $(seq 1 100); do "$shoalctl" status | grep -q "^pool $p size 2 " && break; sleep 0.05; done
    "$shoalctl" status | grep -q "^pool $p size 2 " || fail "$p did not take its size once the threads were free"
done
sigterm_ms
[ $rc -eq 0 ] || fail "exit $rc"
echo "ok: a reload's live changes with every thread stuck: $ms ms"

# ---- a plugin whose own fini never returns ------------------------------------
# (fini_hangs.so waits for a file never made.) Its last reference goes after
# the drain: shoald waits 10 s for it, says so, and exits 0 (it hung for
# good before).
cat > "$tmp/s.yaml" <<YAML
runtime: { threads: 2, control: ctl.sock }
shutdown: { drain: 1s }
plugins:
  hangs: $build/fixtures/fini_hangs.so
pools:
  p: { worker: hangs.b, size: 1 }
YAML
export SHOAL_FIXTURE_INIT_GO=$tmp/never
start "1 pool"
sigterm_ms
[ $rc -eq 0 ] || fail "a fini that never returns: exit $rc"
[ $ms -ge 10000 ] && [ $ms -lt 12000 ] || fail "a fini that never returns: stopped after $ms ms"
[ "$(count "gen=1 warn plugin finihangs 1 ($build/fixtures/fini_hangs.so): fini did not return within 10000 ms: left running, the plugin stays loaded")" = 1 ] ||
    fail "no line for the fini"
echo "ok"
