#!/bin/bash
# test_isolated_room.sh BUILD_DIR - a sender refused by a pool with
# `isolation: process` waits for room as it would for any pool
# (pool/remote.h: ROOM): told by the parent's supervisor once the child
# says its workers have settled enough, never retrying.
#   1. feed (a loadgen, as fast as it is let) sends 3000 messages into
#      slow (two sleep.sleep workers of 1 ms, mailbox 4, in a child
#      process): every refusal is followed by a wait for SHOAL_MSG_ROOM
#      (room_waits = refusals > 0), none by a retry (retries 0), all 3000
#      accepted and handled. Before ROOM for isolated pools: shoal_notify_room
#      said SHOAL_ENOTSUP and each refusal was a retry.
#   2. The same with the child killed (SIGKILL) twice while feed waits: the
#      new child is published and its room told; retries still 0, every
#      message accepted is handled or counted failed (held by a dead child).
#   3. shoalctl stop: drained, exit 0.
. "$(dirname "$0")/lib.sh" "$1"
export SHOAL_SOCKET=$tmp/ctl.sock

header() {
    cat <<YAML
runtime: { control: ctl.sock }
log: { level: info }
shutdown: { drain: 10s }
plugins:
  sleep: $plugins/sleep/sleep.so
  loadgen: $plugins/loadgen/loadgen.so
pools:
  slow:
    worker: sleep.sleep
    args: { latency: 1ms }
    size: 2
    mailbox: 4
    isolation: process
    restart: { max: 100, within: 10s }
YAML
}
# feed_done POOL: until the loadgen in POOL has sent its count (60 s at most)
feed_done() {
    for _ in $(seq 1 6000); do
        [ "$(loadgen "$1" 12)" = 1 ] && return 0
        sleep 0.01
    done
    fail "$1 sent $(loadgen "$1" 1) (refused $(loadgen "$1" 3), waits $(loadgen "$1" 13), retries $(loadgen "$1" 14))"
}
# settle POOL N: until the pool's handled + failed is N (30 s at most)
settle() {
    for _ in $(seq 1 3000); do
        [ "$(($(field "$1" messages_handled) + $(field "$1" messages_failed)))" = "$2" ] && return 0
        sleep 0.01
    done
    fail "pool $1 settled $(($(field "$1" messages_handled) + $(field "$1" messages_failed))) of $2"
}
# check_feed POOL N: N sent, every refusal waited for ROOM, no retry
check_feed() {
    local sent refused waits retries
    sent=$(loadgen "$1" 1) refused=$(loadgen "$1" 3) waits=$(loadgen "$1" 13) retries=$(loadgen "$1" 14)
    [ "$sent" = "$2" ] || fail "$1 sent $sent, not $2"
    [ "$retries" = 0 ] || fail "$1 retried $retries times (refused $refused, waited $waits)"
    [ "$refused" -gt 0 ] || fail "$1 was never refused: the test tests nothing"
    [ "$waits" = "$refused" ] || fail "$1 waited $waits times for $refused refusals"
    echo "ok: $1 sent $sent, refused $refused times, waited for ROOM each time, 0 retries"
}
feed() { # feed NAME COUNT
    printf '  %s:\n    worker: loadgen.loadgen\n    size: 1\n    mailbox: unbounded\n    args: { target: slow, rate: 0, count: %s }\n' "$1" "$2"
}

# ---- 1. refusals wait for ROOM -------------------------------------------------
write "$(feed feed 3000)"
: > "$log"
"$shoald" --no-table "$tmp/s.yaml" 2> "$log" &
pid=$!
wait_for "running $tmp/s.yaml: 2 pools"
feed_done feed
check_feed feed 3000
settle slow 3000
[ "$(field slow messages_handled)" = 3000 ] || fail "slow handled $(field slow messages_handled)"
[ "$(field slow processes_died)" = 0 ] || fail "a child died"

# ---- 2. the child killed while the feed waits --------------------------------
write "$(feed feed 3000)
$(feed feed2 3000)"
"$shoalctl" reload > /dev/null || fail "reload adding feed2: exit $?"
wait_for "reload: generation 2 from $tmp/s.yaml: "
for k in 1 2; do
    for _ in $(seq 1 1000); do # until feed2 is well under way
        [ "$(loadgen feed2 1)" -ge $((k * 800)) ] && break
        sleep 0.01
    done
    child=$(field slow process_pid)
    [ -n "$child" ] && [ "$child" != 0 ] || fail "no child to kill"
    kill -9 "$child"
    for _ in $(seq 1 1000); do # until the next one is up
        c=$(field slow process_pid)
        [ -n "$c" ] && [ "$c" != 0 ] && [ "$c" != "$child" ] && break
        sleep 0.01
    done
done
feed_done feed2
check_feed feed2 3000
settle slow 6000
[ "$(field slow processes_died)" = 2 ] || fail "slow: $(field slow processes_died) deaths, not 2"
echo "ok: two children killed under a waiting feed: $(field slow messages_handled) handled, $(field slow messages_failed) failed with them"

# ---- 3. stop -----------------------------------------------------------------
"$shoalctl" stop > /dev/null || fail "stop: exit $?"
wait "$pid"
rc=$?
pid=
[ "$rc" = 0 ] || fail "shoald exited $rc after stop"
[ "$(count 'Sanitizer')" = 0 ] || fail "a sanitizer report in the log"
echo "ok: stopped"
