#!/bin/bash
# test_isolated_life.sh BUILD_DIR - the life of an isolated pool's child
# processes, which nothing else should notice (pool/remote_supervisor.c):
#   1. A handler in another pool that sends and then blocks for 8 s keeps
#      its dispatcher thread in a read-side region all that time (relay
#      fixture). The isolated pool's child is killed meanwhile: its death
#      is logged, a new child started and a call answered within 3 s, long
#      before the handler returns. (Before: all of it waited for the
#      handler, the death logged 7.5 s after the kill.)
#   2. A reload that changes iso's args and makes another pool's new worker
#      take 4 s in its init: iso's new child is up (PREPARED) and waits for
#      the COMMIT meanwhile; it is killed then. The reload succeeds and iso
#      serves the new args: a child from the new code replaced the lost one
#      at the COMMIT, and the old child drained. (Before: the reload was a
#      no-op that reported success; the old child served the old args on.)
. "$(dirname "$0")/lib.sh" "$1"
fixtures=$build/fixtures
export SHOAL_SOCKET=$tmp/ctl.sock

header() {
    cat <<YAML
runtime: { control: ctl.sock, threads: 4 }
log: { level: info }
shutdown: { drain: 10s }
plugins:
  echo: $plugins/echo/echo.so
  sink: $plugins/sink/sink.so
  conn: $plugins/conn/conn.so
  relay: $fixtures/relay.so
pools:
YAML
}

# ---- 1. a death is told at once, whatever another handler does -----------------
write "  iso: { worker: echo.echo, size: 1, isolation: process, args: { reply: pong } }
  relay: { worker: relay.relay, size: 1, args: { target: other, ms: 8s } }
  other: { worker: sink.sink, size: 1 }"
: > "$log"
"$shoald" --no-table "$tmp/s.yaml" 2> "$log" &
pid=$!
wait_for "running $tmp/s.yaml: 3 pools"
[ "$("$shoalctl" call iso hello)" = pong ] || fail "iso does not answer"
child=$(field iso process_pid)
"$shoalctl" send relay x > /dev/null || fail "send to relay"
wait_for "relay: sent (0), now blocking 8000 ms"
t0=$(now_ms)
kill -9 "$child"
wait_for "iso: isolated worker process $child was killed by SIGKILL" 1 300
logged=$(($(now_ms) - t0))
for _ in $(seq 1 300); do
    [ "$("$shoalctl" call --timeout 1000 iso x 2> /dev/null)" = pong ] && break
    sleep 0.01
done
answered=$(($(now_ms) - t0))
[ "$("$shoalctl" call --timeout 1000 iso x)" = pong ] || fail "iso does not answer after its child was killed"
[ "$(count 'relay: done blocking')" = 0 ] || fail "the handler returned first: the test tests nothing"
[ "$logged" -lt 3000 ] || fail "the death was logged after $logged ms"
[ "$answered" -lt 3000 ] || fail "iso answered again after $answered ms"
[ "$(field iso processes_died)" = 1 ] || fail "$(field iso processes_died) deaths counted"
echo "ok: death logged after $logged ms, answering again after $answered ms, a handler still blocked"
wait_for "relay: done blocking" 1 1000
alive

# ---- 2. the new child lost between PREPARE and COMMIT ---------------------------
write "  iso: { worker: echo.echo, size: 1, isolation: process, args: { reply: one } }
  slow: { worker: conn.conn, size: 1, args: { connect: 100ms } }"
"$shoalctl" reload > /dev/null || fail "reload to iso (one) and slow"
for _ in $(seq 1 500); do
    [ "$("$shoalctl" call iso x 2> /dev/null)" = one ] && break
    sleep 0.01
done
[ "$("$shoalctl" call iso x)" = one ] || fail "iso does not answer one"
old=$(field iso process_pid)
died=$(field iso processes_died)
write "  iso: { worker: echo.echo, size: 1, isolation: process, args: { reply: two } }
  slow: { worker: conn.conn, size: 1, args: { connect: 4s } }"
"$shoalctl" reload > "$tmp/reload.out" 2>&1 &
reloader=$!
# iso is prepared first; slow's new worker then sits in its init (a stall).
wait_for "slow/conn: stall: in its handler" 1 1000
new=$(pgrep -P "$pid" | grep -vx "$old" | head -1)
[ -n "$new" ] || fail "no prepared child beside $old"
kill -9 "$new"
wait "$reloader" || fail "the reload failed: $(cat "$tmp/reload.out")"
for _ in $(seq 1 500); do
    [ "$("$shoalctl" call iso x 2> /dev/null)" = two ] && break
    sleep 0.01
done
[ "$("$shoalctl" call iso x)" = two ] || fail "iso answers $("$shoalctl" call iso x): the old code serves on"
for _ in $(seq 1 500); do kill -0 "$old" 2> /dev/null || break; sleep 0.01; done
kill -0 "$old" 2> /dev/null && fail "the old child $old is still there"
[ "$(field iso processes_died)" = $((died + 1)) ] || fail "$(field iso processes_died) deaths, not $((died + 1))"
echo "ok: the new child lost before the commit: replaced from the new code, the old one drained"
alive

"$shoalctl" stop > /dev/null || fail "stop"
wait "$pid"
rc=$?
pid=
[ "$rc" = 0 ] || fail "shoald exited $rc after stop"
[ "$(count 'Sanitizer')" = 0 ] || fail "a sanitizer report in the log"
echo "ok: test_isolated_life"
