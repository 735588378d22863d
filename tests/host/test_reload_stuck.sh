#!/bin/bash
# test_reload_stuck.sh BUILD_DIR - a reload that swaps a kept pool's
# workers (new args) while every dispatcher thread is stuck in a handler
# (2 threads, no compensating one: runtime.max_extra_threads 0).
#
#   1. Stuck after the swap was prepared, before its COMMIT: one thread
#      in the slow pool's 8 s loop since before the reload, the other
#      taken by a new pool's worker the moment the reload lets the pool
#      go (its init queued itself a message: the fault fixture's init:
#      stall; a 6 s loop), which is just before the swap's COMMIT. The
#      COMMIT is not answered within the reload's 5 s: the reload
#      succeeds, says the workers are replaced when the pool's actor
#      runs, and warns once. When the loops end the pool carries the
#      COMMIT out: calls get the new reply, and `shoalctl diff` of the
#      same file says "no change" (the swap is not owed).
#   2. Stuck before the reload (20 s loops): the swap's PREPARE is not
#      answered within 15 s (member_start_timeout's 10 s + 5 s); the
#      reload fails then, naming the pool's file:line:col -- it does not
#      wait again for the ABORT it leaves queued (it waited up to 15 s
#      more) -- and the generation stays. Once the loops end the pool
#      reads its PREPARE and ABORT: the old workers, 2 of them, still
#      answer with the old reply; the next reload swaps them.
. "$(dirname "$0")/lib.sh" "$1"
fault=$build/fixtures/fault.so
[ -f "$fault" ] || fail "no $fault"
export SHOAL_SOCKET=$tmp/ctl.sock
export TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}atexit_sleep_ms=0"

LOOP=6s
header() {
    cat <<YAML
runtime: { threads: 2, stall_warn: 1s, control: ctl.sock, max_extra_threads: 0 }
log: { level: info }
shutdown: { drain: 1s }
plugins:
  fault: $fault
  echo: $plugins/echo/echo.so
pools:
  slow:
    worker: fault.fault
    size: 2
    mailbox: 10
    args: { mode: loop, ms: $LOOP }
YAML
}
# api REPLY [SOURCES]: the api pool answers calls with REPLY ("": the
# request's own bytes); SOURCES: a sources section
api() {
    local args=""
    [ -n "$1" ] && args=", args: { reply: $1 }"
    write "  api: { worker: echo.echo, size: 2$args }
${2:-}"
}
start() { start_until "gen=1 info running $tmp/s.yaml: 2 pools on 2 threads"; }
# answers WANT: a call to api answers WANT
answers() {
    local out
    out=$("$shoalctl" call api hello --timeout 2000) || fail "call api: exit $?"
    [ "$out" = "$1" ] || fail "call api answered '$out', not '$1'"
}
STALLED='warn <[0-9.]*> slow/fault: stall: in its handler for [0-9.]* s'
RETURNED='warn <[0-9.]*> [a-z]*/fault: stall: returned after [0-9.]* s (pool [a-z]*, behaviour fault, thread [0-1])$'

# ---- 1. stuck between the swap's PREPARE and its COMMIT ------------------------
LOOP=8s
api ""
start
answers hello
"$shoalctl" send slow m1 || fail "send slow m1: exit $?"
wait_for "$STALLED"
api one "  hog: { worker: fault.fault, size: 1, args: { init: stall, mode: loop, ms: 6s } }"
t0=$(now_ms)
out=$("$shoalctl" --timeout 30000 reload 2>&1) || fail "the reload with every thread stuck: exit $?: $out"
ms=$(($(now_ms) - t0))
[ $ms -ge 4500 ] && [ $ms -lt 6000 ] || fail "the reload took $ms ms (the COMMIT's deadline is 5 s)"
[ "$(count "gen=1 warn reload: pool api: the swap of its workers was not answered within 5000 ms (its actor did not run: every dispatcher thread busy?); it is still queued and takes effect when the actor runs")" = 1 ] ||
    fail "no warning for the COMMIT not answered"
grep -q "info reload: generation 2 from $tmp/s.yaml: .*api: workers replaced when its actor runs (echo.echo)" "$log" ||
    fail "the reload's line does not say the swap waits for the pool's actor"
wait_for "$RETURNED" 2 1000
answers one
expect_out "diff after the COMMIT was carried out" 0 "generation 2 -> 3: no change" "$shoalctl" diff
stop_host 0
echo "ok: a COMMIT not answered ($ms ms) was carried out when the threads were free"

# ---- 2. stuck before the reload: its PREPARE is not answered ---------------------
LOOP=20s
api ""
start
answers hello
for i in 1 2; do "$shoalctl" send slow "m$i" || fail "send slow m$i: exit $?"; done
wait_for "$STALLED" 2
api two
line=$(grep -n "^  api:" "$tmp/s.yaml" | cut -d: -f1)
t0=$(now_ms)
out=$("$shoalctl" --timeout 40000 reload 2>&1)
rc=$?
ms=$(($(now_ms) - t0))
[ $rc -ne 0 ] || fail "the reload whose PREPARE was not answered succeeded: $out"
[ $ms -ge 14500 ] && [ $ms -lt 16500 ] || fail "the failed reload took $ms ms (its PREPARE's deadline is 15 s)"
why="$tmp/s.yaml:$line:8: pools.api: a new worker did not start: its new workers did not start in time"
[ "$out" = "shoalctl: reload failed: $why; generation 1 keeps running" ] ||
    fail "the failed reload does not say why at the pool's place: $out"
[ "$(count "gen=1 error reload failed (1 so far), generation 1 keeps running: $why")" = 1 ] ||
    fail "the log does not say the reload failed"
[ "$(gen)" = 1 ] || fail "the failed reload changed the generation to $(gen)"
wait_for "$RETURNED" 2 1000
answers hello
"$shoalctl" status | grep -q "^pool api size 2 " || fail "api is not 2 workers: $("$shoalctl" status | grep '^pool api')"
"$shoalctl" --timeout 30000 reload > /dev/null || fail "the reload after the threads were free: exit $?"
answers two
stop_host 0
echo "ok: a PREPARE not answered failed the reload in $ms ms and changed nothing"
