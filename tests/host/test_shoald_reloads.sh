#!/bin/bash
# test_shoald_reloads.sh BUILD_DIR [SANITIZER] - 1,000 reloads alternating a pool's size
# while a loadgen sends 100,000 messages into it: every message sent is
# handled or refused (handled + refused == attempts, forwarded == handled:
# nothing lost, nothing twice), and the process's RSS, descriptors, threads
# and mapped plugins are back to their baseline. Under a sanitizer (second
# argument) RSS is not compared: ASan keeps freed memory in quarantine and
# TSan grows its shadow; LeakSanitizer checks for leaks instead.
. "$(dirname "$0")/lib.sh" "$1"
sanitizer=${2:-}
reloads=${SHOAL_TEST_RELOADS:-1000}
total=100000
export SHOAL_SOCKET=$tmp/ctl.sock

config() {
    cat > "$tmp/s.yaml.new" <<YAML
runtime: { control: ctl.sock }
log: { level: warn }
shutdown: { drain: 5s }
plugins:
  echo: $plugins/echo/echo.so
  loadgen: $plugins/loadgen/loadgen.so
pools:
  api:
    worker: echo.echo
    size: $1
    max: 8
    mailbox: 100
  load:
    worker: loadgen.loadgen
    size: 1
    mailbox: unbounded
    args: { target: api, rate: 20000, count: $total }
YAML
    mv "$tmp/s.yaml.new" "$tmp/s.yaml"
}

# json FIELD: the value of "FIELD": in `shoalctl inspect api`
json() { "$shoalctl" inspect api | grep -o "\"$1\":[0-9]*" | head -1 | cut -d: -f2; }
measure() {
    rss=$(awk '/^VmRSS/ {print $2}' /proc/$pid/status)
    fds=$(ls /proc/$pid/fd | wc -l)
    threads=$(ls /proc/$pid/task | wc -l)
    maps=$(grep -c "/memfd:shoal:" /proc/$pid/maps) # the plugins' private copies
}

config 2
: > "$log"
"$shoald" --no-table "$tmp/s.yaml" 2> "$log" &
pid=$!
for _ in $(seq 1 500); do [ -S "$SHOAL_SOCKET" ] && break; sleep 0.01; done
"$shoalctl" status > /dev/null || fail "shoald did not start"
# A first round of reloads before the baseline: allocator pools, caches.
for i in 1 2 3 4; do
    config $((i % 2 ? 6 : 2))
    "$shoalctl" reload > /dev/null || fail "warm-up reload $i"
done
measure
base_rss=$rss base_fds=$fds base_threads=$threads base_maps=$maps

t0=$(date +%s)
for i in $(seq 1 "$reloads"); do
    size=$((i % 2 ? 6 : 2))
    config $size
    out=$("$shoalctl" reload) || fail "reload $i: $out"
done
echo "$reloads reloads in $(( $(date +%s) - t0 )) s"
kill -0 $pid || fail "shoald died"
[ "$(json target_size)" = 2 ] || fail "api target size $(json target_size) after the last reload"

# Let the load finish and the pool empty.
for _ in $(seq 1 3000); do
    [ "$(loadgen load 12)" = 1 ] && [ "$(json queue_depth)" = 0 ] && break
    sleep 0.01
done
sent=$(loadgen load 1) busy=$(loadgen load 3) full=$(loadgen load 2) noproc=$(loadgen load 4)
fwd=$(json messages_forwarded) handled=$(json messages_handled) unhandled=$(json messages_unhandled)
failed=$(json messages_failed) dropped=$(json messages_dropped)
echo "load: sent $sent, refused busy $busy; api: forwarded $fwd, handled $handled," \
    "unhandled $unhandled, failed $failed, dropped $dropped"
[ "$sent" = $total ] || fail "the loadgen sent $sent of $total"
[ "$full" = 0 ] && [ "$noproc" = 0 ] || fail "full $full, noproc $noproc"
[ "$fwd" = "$sent" ] || fail "forwarded $fwd != sent $sent"
[ "$handled" = "$sent" ] || fail "handled $handled != sent $sent (lost or twice)"
[ "$unhandled" = "$busy" ] || fail "the pool refused $unhandled, the loadgen saw $busy"
[ "$failed" = 0 ] && [ "$dropped" = 0 ] || fail "failed $failed, dropped $dropped"

# The host's own ledger over every pool agrees: nothing in flight.
line=$("$shoalctl" status | grep '^ledger total: ')
echo "$line"
acc=$(echo "$line" | sed -n 's/^ledger total: accepted \([0-9]*\) = handled \([0-9]*\) + failed 0 + dropped 0 + in flight 0; refused [0-9]*$/\1 \2/p')
[ -n "$acc" ] && [ "${acc% *}" = "${acc#* }" ] || fail "ledger: $line"

measure
echo "baseline: rss ${base_rss} kB, $base_fds fds, $base_threads threads, $base_maps plugin maps;" \
    "after $reloads reloads: rss ${rss} kB, $fds fds, $threads threads, $maps plugin maps"
[ "$fds" = "$base_fds" ] || fail "descriptors $base_fds -> $fds"
[ "$threads" = "$base_threads" ] || fail "threads $base_threads -> $threads"
[ "$maps" = "$base_maps" ] || fail "plugin mappings $base_maps -> $maps"
[ -n "$sanitizer" ] || [ "$rss" -le $((base_rss + 4096)) ] || fail "RSS ${base_rss} kB -> ${rss} kB"

"$shoalctl" stop > /dev/null || fail "stop"
wait $pid
rc=$?
pid=
[ $rc -eq 0 ] || fail "exit $rc"
echo "ok: test_shoald_reloads ($reloads reloads)"
