#!/bin/bash
# test_stuck_inits.sh BUILD_DIR - reloads whose new workers hang in init do
# not take the threads the running pools serve on (core/sched/bulkhead.h).
# shoald runs on 2 dispatcher threads (so 2 compensating ones at most). Two
# reloads in a row each add a pool of 4 workers whose init (conn's connect)
# takes a minute:
#   - each fails after its 10 s, generation 1 kept;
#   - the running pool answers every call after each;
#   - 2 inits run in all, both listed as stalls, and the other 6 new
#     members wait: status says "held back 6 members", the log says why
#     once;
#   - SIGTERM then drains, names the 2 inits left in plugin code and the 6
#     members held back, and exits 3.
# Before the bulkhead, the first reload's compensating threads took the
# third and fourth inits too, and the second reload left no thread for
# generation 1: its calls went unanswered.
. "$(dirname "$0")/lib.sh" "$1"
export SHOAL_SOCKET=$tmp/ctl.sock

header() {
    cat <<YAML
runtime: { threads: 2, stall_warn: 300ms, control: ctl.sock }
log: { level: info }
shutdown: { drain: 1s }
plugins:
  echo: $plugins/echo/echo.so
  conn: $plugins/conn/conn.so
pools:
  api: { worker: echo.echo, size: 2 }
YAML
}

# calls WHAT N: N calls to api, each answered within 2 s
calls() {
    local out
    for i in $(seq 1 "$2"); do
        out=$("$shoalctl" --timeout 2000 call api "ping$i" 2>&1) ||
            fail "$1: call $i to api: $out"
        [ "$out" = "ping$i" ] || fail "$1: call $i to api answered '$out'"
    done
}

# reload_fails POOL: a reload adding POOL (4 workers whose init hangs) fails
# after its 10 s, naming it; then api answers calls (the control socket is
# the host thread's, which the reload holds meanwhile)
reload_fails() {
    write "  $1: { worker: conn.conn, size: 4, args: { connect: 1m } }"
    local out rc
    out=$("$shoalctl" --timeout 30000 reload 2>&1)
    rc=$?
    [ $rc -eq 1 ] || fail "the reload adding $1 exited $rc: $out"
    grep -q "pools.$1: cannot start: its workers did not start within 10000 ms" <<< "$out" ||
        fail "the reload adding $1 said: $out"
    [ "$(gen)" = 1 ] || fail "after the reload adding $1: generation $(gen)"
    calls "after the reload adding $1" 40
}

write ""
: > "$log"
"$shoald" --no-table "$tmp/s.yaml" 2> "$log" &
pid=$!
wait_for "running $tmp/s.yaml: 1 pool"
calls "at the start" 5

reload_fails bad
st=$("$shoalctl" status)
[ "$(grep -c '^stalled <.*> bad/conn' <<< "$st")" = 2 ] || fail "after one reload: $st"
grep -q '^held back 2 members' <<< "$st" || fail "after one reload, not 2 held: $st"

reload_fails bad2
st=$("$shoalctl" status)
[ "$(grep -c '^stalled <' <<< "$st")" = 2 ] || fail "after two reloads, not 2 stalls: $st"
grep -q '^held back 6 members (new ones, and those of pools with a stuck handler' <<< "$st" ||
    fail "after two reloads, not 6 held: $st"
[ "$(count 'callbacks stuck (')" = 1 ] ||
    fail "the hold logged $(count 'callbacks stuck (') times, not once"
grep -q "members of pools with a stuck callback, and new members while inits are stuck, wait until one returns, so the other pools keep their threads (first held: a new member of pool bad)" "$log" ||
    fail "the hold is not explained"
[ "$(count 'reload failed')" = 2 ] || fail "$(count 'reload failed') failed reloads logged"

t0=$(now_ms)
kill -TERM "$pid"
wait "$pid"
rc=$?
pid=
[ $rc -eq 3 ] || fail "shoald exited $rc after SIGTERM, not 3"
[ $(($(now_ms) - t0)) -lt 5000 ] || fail "shoald took $(($(now_ms) - t0)) ms to stop"
grep -q "shutdown: 6 members held back waiting for a stuck handler to return (sched/bulkhead.h): never run again" "$log" ||
    fail "the stop does not say 6 members were held: $(grep -E 'held|drained' "$log")"
grep -q "0 pools still busy, but 2 handlers still in plugin code" "$log" ||
    fail "the stop does not name 2 handlers left: $(grep drained "$log")"
echo "ok: two reloads whose inits hang held 6 members back; api answered 85 calls"
