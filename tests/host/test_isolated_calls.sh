#!/bin/bash
# test_isolated_calls.sh BUILD_DIR [SANITIZER] - calls into a pool with
# `isolation: process` whose child dies holding them are answered at once
# with an error, as an in-process pool's caller hears from a worker whose
# handler fails (pool/remote.h: CALLS); casts are counted as before.
#   1. shoalctl calls a pool whose worker crashes on every message (the
#      fault fixture, SIGSEGV), with a timeout of 8 s: each call is
#      answered "handler failed" within 3 s, three children in a row.
#      (Before: each waited its whole 8 s and timed out.)
#   2. A loadgen makes calls with no timeout, 8 in flight at most, into a
#      pool whose child crashes on every 100th message, beside a loadgen
#      of casts into the same pool: every call is settled (loadgen done,
#      none in flight), replies + reply errors = calls sent, and the pool's
#      handled + failed = calls + casts sent. (Before: the first death left
#      the calls it held unanswered for good: in flight 8 for ever.)
#   3. shoalctl stop: drained, exit 0, no sanitizer report (the first
#      shoald, of step 1, is stopped by SIGTERM: exit 0).
. "$(dirname "$0")/lib.sh" "$1"
sanitizer=${2:-}
fixtures=$build/fixtures
export SHOAL_SOCKET=$tmp/ctl.sock
# The child's fatal report is ours under the sanitizers too (test_faults.sh).
segv_ours "$sanitizer"

header() {
    cat <<YAML
runtime: { control: ctl.sock }
log: { level: info }
shutdown: { drain: 10s }
plugins:
  loadgen: $plugins/loadgen/loadgen.so
  fault: $fixtures/fault.so
pools:
YAML
}

# ---- 1. a call the child dies with is answered at once ---------------------------
write "  iso:
    worker: fault.fault
    size: 1
    isolation: process
    restart: { max: 100, within: 10s }
    args: { mode: segv }"
: > "$log"
"$shoald" --no-table "$tmp/s.yaml" 2> "$log" &
pid=$!
wait_for "running $tmp/s.yaml: 1 pool"
for i in 1 2 3; do
    for _ in $(seq 1 1000); do # its child up again after the last death
        c=$(field iso process_pid)
        [ -n "$c" ] && [ "$c" != 0 ] && break
        sleep 0.01
    done
    t0=$(now_ms)
    out=$("$shoalctl" call --timeout 8000 iso "call $i" 2>&1) && fail "call $i answered '$out'"
    took=$(($(now_ms) - t0))
    echo "$out" | grep -q "handler failed" || fail "call $i: $out"
    [ "$took" -lt 3000 ] || fail "call $i answered after $took ms"
    wait_for "iso: isolated worker process [0-9]* was killed by SIGSEGV; 1 message it held is counted as failed" "$i"
    echo "ok: call $i into a child that crashed on it: '$out' after $took ms"
done
[ "$(field iso messages_failed)" = 3 ] || fail "iso failed $(field iso messages_failed), not 3"
alive
stop_host 0

# ---- 2. calls with no timeout, casts beside them ---------------------------------
write "  iso:
    worker: fault.fault
    size: 1
    isolation: process
    restart: { max: 1000, within: 10s }
    args: { mode: segv, every: 100 }
  calls:
    worker: loadgen.loadgen
    size: 1
    args: { target: iso, rate: 0, call: true, timeout: 0, window: 8, count: 3000 }
  casts:
    worker: loadgen.loadgen
    size: 1
    args: { target: iso, rate: 0, count: 3000 }"
: > "$log"
"$shoald" --no-table "$tmp/s.yaml" 2> "$log" &
pid=$!
wait_for "running $tmp/s.yaml: 3 pools"
for _ in $(seq 1 3000); do
    [ "$(loadgen calls 12)" = 1 ] && [ "$(loadgen casts 12)" = 1 ] && break
    sleep 0.01
done
sent=$(loadgen calls 1)
replies=$(loadgen calls 6)
errors=$(loadgen calls 7)
[ "$(loadgen calls 12)" = 1 ] ||
    fail "the calls never settled: sent $sent, replies $replies, errors $errors, in flight $(loadgen calls 9)"
[ "$(loadgen casts 12)" = 1 ] || fail "the casts never ended: sent $(loadgen casts 1)"
[ "$sent" = 3000 ] || fail "calls sent $sent"
[ "$(loadgen calls 9)" = 0 ] || fail "calls in flight $(loadgen calls 9)"
[ "$(loadgen calls 8)" = 0 ] || fail "calls timed out $(loadgen calls 8)"
[ $((replies + errors)) = "$sent" ] || fail "replies $replies + errors $errors, $sent calls"
[ "$errors" -ge 1 ] || fail "no call was held by a child that died: the test tests nothing"
casts=$(loadgen casts 1)
for _ in $(seq 1 3000); do
    settled=$(($(field iso messages_handled) + $(field iso messages_failed)))
    [ "$settled" -ge $((sent + casts)) ] && break
    sleep 0.01
done
[ "$settled" = $((sent + casts)) ] || fail "iso settled $settled, $sent calls + $casts casts sent"
died=$(field iso processes_died)
echo "ok: $sent calls ($replies replies, $errors answered at their child's death), $casts casts, $died deaths"
alive

# ---- 3. stop ---------------------------------------------------------------------
"$shoalctl" stop > /dev/null || fail "stop: exit $?"
wait "$pid"
rc=$?
pid=
[ "$rc" = 0 ] || fail "shoald exited $rc after stop"
[ "$(count 'Sanitizer')" = 0 ] || fail "a sanitizer report in the log"
echo "ok: test_isolated_calls"
