#!/bin/bash
# test_memory.sh BUILD_DIR - memory is bounded or warned:
#
#   1. A pool whose queue passes its warn_queue is logged once (not once a
#      second while it stays there).
#   2. runtime.max_queued bounds what unbounded mailboxes hold: past it the
#      sends into them are refused with SHOAL_EBUSY, counted by the pool and
#      seen by the sender, which waits for the drain (no retry loop), and the
#      queue stays near the bound.
#   3. The actor records' address space scales with runtime.max_actors and
#      is logged: under `ulimit -v 1.5G` the default (16M actors, 1.9 GiB)
#      cannot start and says what to do; max_actors 1000000 starts.
. "$(dirname "$0")/lib.sh" "$1"
sanitizer=${2:-}
fixtures=$build/fixtures
export SHOAL_SOCKET=$tmp/ctl.sock

# A slow pool (1 ms a message) with an unbounded mailbox, fed as fast as it
# takes messages.
cat > "$tmp/s.yaml" <<YAML
runtime: { control: ctl.sock, max_queued: 5000 }
shutdown: { drain: 1s }
plugins:
  fault: $fixtures/fault.so
  loadgen: $plugins/loadgen/loadgen.so
pools:
  slow:
    worker: fault.fault
    size: 1
    mailbox: unbounded
    warn_queue: 1000
    args: { mode: sleep, ms: 1ms }
  feed:
    worker: loadgen.loadgen
    size: 1
    args: { target: slow, rate: 0 }
YAML
: > "$log"
"$shoald" --no-table "$tmp/s.yaml" 2> "$log" &
pid=$!
wait_for "running $tmp/s.yaml: 2 pools"
grep -q "address space: 2048.0 MiB reserved for 16777216 actors (runtime.max_actors, 128 bytes each)" "$log" ||
    fail "no address-space line"
wait_for "pool slow: [0-9]* messages queued, past its warn_queue 1000"
wait_for "max_queued: unbounded mailboxes hold [0-9]* messages (the limit is 5000): sends into them are refused with SHOAL_EBUSY until they drain"
busy=0
for _ in $(seq 1 500); do
    busy=$("$shoalctl" call --raw feed stats 2>> "$tmp/calls" | od -An -tu8 -w8 -v | sed -n 3p | tr -d ' ')
    case $busy in '' | *[!0-9]*) busy=0 ;; esac # a refused call: the last error is kept
    [ "$busy" -ge 1 ] && break
    sleep 0.01
done
[ "$busy" -ge 1 ] || fail "the source saw $busy refusals ($(tail -1 "$tmp/calls" 2> /dev/null))"
sleep 2 # the queue stays at the bound, and the warning is not repeated
# Refused, the source asks for ROOM and waits until the mailboxes have
# drained below 9/10 of the bound (500 messages at 1 ms: half a second),
# never retrying in between: a handful of refusals in those 2 s, not one
# per turn (past 100 within a second when its ROOM came at once).
later=$("$shoalctl" call --raw feed stats 2>> "$tmp/calls" | od -An -tu8 -w8 -v | sed -n 3p | tr -d ' ')
[ -n "$later" ] && [ "$later" -ge "$busy" ] && [ "$later" -le 20 ] ||
    fail "the source saw $later refusals in 2 s (after $busy): it does not wait for the drain"
[ "$(count 'past its warn_queue 1000')" = 1 ] || fail "warn_queue logged $(count 'past its warn_queue') times"
q=$("$shoalctl" status | sed -n 's/^pool slow .* in_flight \([0-9]*\) .*/\1/p')
# The bound is checked every 10 ms: a fast source may pass it by what it
# sends in that time, never by much more.
[ -n "$q" ] && [ "$q" -le 7000 ] || fail "slow holds $q messages (max_queued 5000)"
refused=$("$shoalctl" status | sed -n 's/^ledger total: .*; refused \([0-9]*\)$/\1/p')
[ -n "$refused" ] && [ "$refused" -ge "$later" ] || fail "the pool counted $refused refusals (the source $later)"
kill -9 $pid
wait $pid 2> /dev/null
pid=

# The address space: the default cannot start under 1.5 GB, 1M actors can.
# (A sanitizer's own shadow memory needs terabytes of address space.)
if [ -n "$sanitizer" ]; then
    echo "ok: test_memory (ulimit -v not tried under $sanitizer)"
    exit 0
fi
printf 'pools: {}\n' > "$tmp/v.yaml"
out=$(ulimit -v 1500000; "$shoald" --no-table --run-for 100ms "$tmp/v.yaml" 2>&1); rc=$?
[ $rc = 2 ] || fail "the default under ulimit -v 1.5G: exit $rc"
echo "$out" | grep -q "cannot create the runtime: out of memory (it reserves 128 bytes of address space per actor: lower runtime.max_actors under a \`ulimit -v\`)" ||
    fail "said: $out"
printf 'runtime: { max_actors: 1000000 }\npools: {}\n' > "$tmp/v.yaml"
out=$(ulimit -v 1500000; "$shoald" --no-table --run-for 100ms "$tmp/v.yaml" 2>&1); rc=$?
[ $rc = 0 ] || fail "max_actors 1000000 under ulimit -v 1.5G: exit $rc: $out"
echo "$out" | grep -q "address space: 122.1 MiB reserved for 1000000 actors" || fail "said: $out"
echo "ok: test_memory"
