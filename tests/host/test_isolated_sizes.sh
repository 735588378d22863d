#!/bin/bash
# test_isolated_sizes.sh BUILD_DIR - the largest message a pool with
# `isolation: process` carries each way: 524,240 bytes of payload (512 KiB
# less 48: half its smallest ring, 1 MiB, less the headers; pool/remote.h).
# The sizes fixture: tx (sizes.sender, in-process) sends, waits or calls
# on request; iso (sizes.replier in a child process) answers a call "N"
# with N bytes; inproc is the same without isolation.
#   1. 524,240 bytes: shoal_send and shoal_runtime_send_wait take it, iso
#      handles both.
#   2. One byte more, and 600 KiB: refused with SHOAL_EINVAL at once, by
#      send and by send_wait (no wait for room that cannot come), counted in
#      iso's messages_unhandled; inproc takes 600 KiB. (Before: SHOAL_EBUSY,
#      and send_wait spun on a room that was told at once, at a full core,
#      until its timeout.)
#   3. A loadgen source sending 600 KiB to iso as fast as it is let: every
#      attempt a send error, none refused as busy, no wait for ROOM, no
#      retry at once. (Before: hundreds of thousands of SHOAL_EBUSY a second,
#      each answered by an at-once SHOAL_MSG_ROOM.)
#   4. Replies: a reply of 524,240 bytes reaches its caller; one byte more
#      reaches it as the status SHOAL_EINVAL at once. (Before: dropped in
#      the child; the caller waited for its timeout.) Twelve callers at
#      once on a pool of four, each answered with 500,000 bytes (6 MB
#      through a 1 MiB ring): every one answered, a reply waiting in the
#      child for room. (Before: the replies that found the ring full were
#      dropped in the child, handled but never answered: 5 of 12 callers
#      timed out.)
#   5. shoalctl stop: drained, exit 0, no sanitizer report.
. "$(dirname "$0")/lib.sh" "$1"
fixtures=$build/fixtures
export SHOAL_SOCKET=$tmp/ctl.sock
max=524240

header() {
    cat <<YAML
runtime: { control: ctl.sock }
log: { level: info }
shutdown: { drain: 10s }
plugins:
  sizes: $fixtures/sizes.so
  loadgen: $plugins/loadgen/loadgen.so
pools:
  iso: { worker: sizes.replier, size: 1, isolation: process }
  iso4: { worker: sizes.replier, size: 4, isolation: process }
  inproc: { worker: sizes.replier, size: 1 }
  tx: { worker: sizes.sender, size: 1 }
YAML
}
# tx HOW POOL N: what sizes.sender says of it
tx() { "$shoalctl" --timeout 10000 call tx "$1 $2 $3"; }
# expect HOW POOL N ANSWER [MS]: tx's answer starts with ANSWER, within MS
# milliseconds (default 500) of its own clock
expect() {
    local out ms
    out=$(tx "$1" "$2" "$3") || fail "tx $1 $2 $3: $out"
    case $out in "$4 ms="*) ;; *) fail "$1 $2 $3: '$out', not '$4'" ;; esac
    ms=${out##*ms=}
    [ "$ms" -lt "${5:-500}" ] || fail "$1 $2 $3: $ms ms ($out)"
    echo "ok: $1 $2 $3: $out"
}
# until_field POOL KEY VALUE: until inspect says so (10 s at most)
until_field() {
    for _ in $(seq 1 1000); do
        [ "$(field "$1" "$2")" = "$3" ] && return 0
        sleep 0.01
    done
    fail "pool $1: $2 is $(field "$1" "$2"), not $3"
}

write ""
: > "$log"
"$shoald" --no-table "$tmp/s.yaml" 2> "$log" &
pid=$!
wait_for "running $tmp/s.yaml: 4 pools"
until_field iso pool_size 1
until_field iso4 pool_size 4

# ---- 1. at the limit: taken and handled ------------------------------------------
expect send iso $max "send=SHOAL_OK"
expect wait iso $max "wait=SHOAL_OK"
until_field iso messages_handled 2
[ "$(field iso messages_unhandled)" = 0 ] || fail "iso refused $(field iso messages_unhandled)"

# ---- 2. over it: refused for good, at once ---------------------------------------
expect send iso $((max + 1)) "send=SHOAL_EINVAL"
expect wait iso $((max + 1)) "wait=SHOAL_EINVAL"
expect send iso 614400 "send=SHOAL_EINVAL"
expect wait iso 614400 "wait=SHOAL_EINVAL"
[ "$(field iso messages_unhandled)" = 4 ] || fail "iso counted $(field iso messages_unhandled) refusals, not 4"
expect send inproc 614400 "send=SHOAL_OK"
expect wait inproc 614400 "wait=SHOAL_OK"
until_field inproc messages_handled 2

# ---- 3. a loadgen as fast as it is let ---------------------------------------------
write "sources:
  feed: { actor: loadgen.loadgen, args: { target: iso, rate: 0, size: 600KiB, count: 5 } }"
"$shoalctl" reload > /dev/null || fail "reload adding feed"
wait_for "source feed started"
sleep 1
sent=$(loadgen feed 1) busy=$(loadgen feed 3) errors=$(loadgen feed 5)
waits=$(loadgen feed 13) retries=$(loadgen feed 14)
[ "$sent" = 0 ] || fail "feed sent $sent"
[ "$busy" = 0 ] || fail "feed was refused as busy $busy times (send errors $errors, waits $waits)"
[ "$errors" -gt 0 ] || fail "feed had no send error"
[ "$waits" = 0 ] && [ "$retries" = 0 ] || fail "feed waited $waits times, retried $retries times"
echo "ok: feed: $errors send errors in a second, none busy, no wait, no retry"

# ---- 4. replies ----------------------------------------------------------------------
expect call iso $max "call=SHOAL_OK status=SHOAL_OK size=$max"
expect call iso $((max + 1)) "call=SHOAL_OK status=SHOAL_EINVAL size=0"
expect call inproc $((max + 1)) "call=SHOAL_OK status=SHOAL_OK size=$((max + 1))"
[ "$(field iso processes_died)" = 0 ] || fail "iso's child died"
# Twelve callers at once, each answered with 500,000 bytes by iso4's four
# workers: 6 MB of replies through a 1 MiB ring. Every one is answered.
callers=()
for i in $(seq 1 12); do
    "$shoalctl" --timeout 10000 call iso4 500000 > "$tmp/big.$i" 2>&1 &
    callers+=($!)
done
wait "${callers[@]}"
for i in $(seq 1 12); do
    n=$(wc -c < "$tmp/big.$i")
    [ "$n" = 2000001 ] || fail "iso4: caller $i got $n bytes of output: $(head -c 200 "$tmp/big.$i")"
done
[ "$(field iso4 messages_handled)" = 12 ] || fail "iso4 handled $(field iso4 messages_handled)"
[ "$(count 'was dropped: the channel to the parent stayed full')" = 0 ] || fail "a reply was dropped"
echo "ok: iso4: 12 callers at once, each answered with 500000 bytes"

# ---- 5. stop -------------------------------------------------------------------------
"$shoalctl" stop > /dev/null || fail "stop: exit $?"
wait "$pid"
rc=$?
pid=
[ "$rc" = 0 ] || fail "shoald exited $rc after stop"
[ "$(count 'Sanitizer')" = 0 ] || fail "a sanitizer report in the log"
echo "ok: test_isolated_sizes"
