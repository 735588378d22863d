#!/bin/bash
# test_isolated_sends.sh BUILD_DIR - what a worker in a pool with
# `isolation: process` sends to an actor of shoald is handled or counted,
# never silently gone (pool/remote.h: SENDS).
#   `relay` (in shoald, mailbox 1) sends a cast on to `ech` (echo.echo in a
#   child process) 3 times, then blocks for 3 s; echo sends each back to
#   relay's worker. Its mailbox takes one; the other two are refused there,
#   after the child's echo was told SHOAL_OK. Each copy is either handled
#   by relay ("relay: 1 back from the target") or dropped and counted
#   (ech's process_sends_dropped) and logged -- at once for the first, the
#   rest of the burst a second later: back + dropped = echoed = 3. (Before:
#   the two were dropped without a word or a count: echo said 3 echoed, 0
#   refused; relay got one.) Then stop: exit 0, no sanitizer report.
. "$(dirname "$0")/lib.sh" "$1"
fixtures=$build/fixtures
export SHOAL_SOCKET=$tmp/ctl.sock

header() {
    cat <<YAML
runtime: { control: ctl.sock }
log: { level: info }
shutdown: { drain: 10s }
plugins:
  echo: $plugins/echo/echo.so
  relay: $fixtures/relay.so
pools:
YAML
}
# echo_stats: echo's calls, messages, echoed, echo_refused (its stats call)
echo_stats() { "$shoalctl" call --type 4294901761 --raw ech s | od -An -tu8 -w8 -v | tr -s ' \n' ' '; }

write "  ech: { worker: echo.echo, size: 1, isolation: process }
  relay: { worker: relay.relay, size: 1, mailbox: 1, args: { target: ech, copies: 3, ms: 3s } }"
: > "$log"
"$shoald" --no-table "$tmp/s.yaml" 2> "$log" &
pid=$!
wait_for "running $tmp/s.yaml: 2 pools"
"$shoalctl" send relay x > /dev/null || fail "send to relay"
wait_for "relay: sent (0), now blocking 3000 ms"
wait_for "ech: isolated worker process [0-9]* sent a message to <[0-9.]*> that was refused here (SHOAL_EFULL): dropped (its worker was told SHOAL_OK)"
wait_for "ech: isolated worker process [0-9]*: 1 more message its workers sent was refused here and dropped (the last, to <[0-9.]*>: SHOAL_EFULL)"
wait_for "relay: 1 back from the target" 1 500
sleep 0.3 # anything more would show now
stats=$(echo_stats)
set -- $stats
[ "$3" = 3 ] && [ "$4" = 0 ] || fail "echo's calls/messages/echoed/refused: $stats"
dropped=$(field ech process_sends_dropped)
back=$(count "relay: [0-9]* back from the target")
[ "$back" = 1 ] || fail "relay got $back back"
[ "$dropped" = 2 ] || fail "ech dropped $dropped"
[ $((back + dropped)) = "$3" ] || fail "$back back + $dropped dropped, $3 echoed"
[ "$(count 'that was refused here')" = 1 ] || fail "the first refusal said $(count 'that was refused here') times"
echo "ok: 3 echoed by the child: $back handled by relay, $dropped refused, dropped, counted, logged"

"$shoalctl" stop > /dev/null || fail "stop: exit $?"
wait "$pid"
rc=$?
pid=
[ "$rc" = 0 ] || fail "shoald exited $rc after stop"
[ "$(count 'Sanitizer')" = 0 ] || fail "a sanitizer report in the log"
echo "ok: test_isolated_sends"
