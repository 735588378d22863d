#!/bin/bash
# test_reload_sizes.sh BUILD_DIR - the size a reload leaves a pool that
# sizes itself with (host/reload_live.c: shoal__host_keeps_size), and the
# order of its live changes.
#
#   1. A size the file does not write never changed in it: an autoscaled
#      pool scaled to 6, then a reload of autoscale.min 1 -> 2 only, keeps
#      6 workers (it set 2: the size implied by min).
#   2. A pool that idled to 0 workers, reloaded to an autoscale that grows
#      on busy only (nothing would start a worker): set to the file's size
#      1, and a send is handled (it stayed at 0 and refused every send).
#   3. A pull pool fed by its own source refuses nothing, so an autoscale
#      from 0 that grows on refused would never start a worker: the config
#      is refused at autoscale.min's file:line:col (it was accepted).
#   4. A pull pool that grows by itself (idle_timeout, max 4) reloaded to
#      a plain one (size 2, max 1024, new args: its workers swapped): its
#      elastic settings change before
#      its bounds grow, so it does not grow towards 1024 first (it ran 100s
#      of workers in 3 of 4 runs, and kept them).
#   5. `shoalctl scale POOL 0` of a fed pull pool whose autoscale (min 0)
#      grows on busy or refused: refused, saying its own source's items
#      are never refused (it suggested up.when on refused, which would not
#      start a worker either).
. "$(dirname "$0")/lib.sh" "$1"
export SHOAL_SOCKET=$tmp/ctl.sock
header() {
    cat <<YAML
runtime: { threads: 2, control: ctl.sock }
log: { level: info }
shutdown: { drain: 2s }
plugins:
  sleep: $plugins/sleep/sleep.so
  seq: $plugins/seq/seq.so
pools:
YAML
}
start() { start_until "gen=1 info running $tmp/s.yaml: 1 pool on 2 threads"; }
# size_is POOL N: until status says POOL runs N workers (5 s at most)
size_is() {
    for _ in $(seq 1 250); do
        "$shoalctl" status | grep -q "^pool $1 size $2 target $2 " && return 0
        sleep 0.02
    done
    fail "pool $1 is not at $2 workers: $("$shoalctl" status | grep "^pool $1 ")"
}

# ---- 1. autoscale.min changed, size not written ---------------------------------------
as() { write "  p: { worker: sleep.sleep, args: { latency: 1ms }, autoscale: { min: $1, max: 16, up: { when: [busy > 80%] } } }"; }
as 1
start
size_is p 1
"$shoalctl" scale p 6 > /dev/null || fail "scale p 6: exit $?"
size_is p 6
as 2
"$shoalctl" reload > /dev/null || fail "reload min 2: exit $?"
grep -q "gen=2 info reload: generation 2 from $tmp/s.yaml: p bounds 1..16 -> 2..16; ledger" "$log" ||
    fail "the reload's line: $(grep 'reload: generation 2' "$log")"
"$shoalctl" status | grep -q "^pool p size 6 target 6 .* bounds 2..16 " ||
    fail "min 1 -> 2 did not keep 6 workers: $("$shoalctl" status | grep '^pool p ')"
stop_host 0
echo "ok: autoscale.min 1 -> 2 kept the 6 workers"

# ---- 2. no worker, and the reload's settings would start none -----------------------------
write "  p: { worker: sleep.sleep, args: { latency: 1ms }, size: 1, min: 0, max: 4, idle_timeout: 10ms }"
start
size_is p 0
write "  p: { worker: sleep.sleep, args: { latency: 1ms }, size: 1, autoscale: { min: 0, max: 4, up: { when: [busy > 80%] } } }"
"$shoalctl" reload > /dev/null || fail "the reload to busy-only autoscale: exit $?"
grep -q "gen=2 info reload: generation 2 from $tmp/s.yaml: .*; p size 0 -> 1; ledger" "$log" ||
    fail "the reload's line: $(grep 'reload: generation 2' "$log")"
size_is p 1
"$shoalctl" send p hello || fail "a send to the pool after the reload: exit $?"
stop_host 0
echo "ok: a pool at 0 that nothing would grow was set to the file's size"

# ---- 3. a pull pool fed by its own source, from 0 on refused ---------------------------------
write "  jobs:
    kind: pull
    worker: sleep.sleep
    source: seq.seq
    source_args: { from: 1, to: 100 }
    autoscale: { min: 0, max: 4, up: { when: [busy > 80%, refused > 0] } }"
line=$(grep -n "^    autoscale:" "$tmp/s.yaml" | cut -d: -f1)
expect_out "a fed pull pool from 0" 2 "$tmp/s.yaml:$line:18: pools.jobs.autoscale: it would start with no worker and nothing would start one (busy stays 0%, no queue wait is measured, and a pool fed by its own source refuses nothing): give size or min >= 1, or idle_timeout (an item starts a worker)" \
    "$shoald" --check "$tmp/s.yaml"
echo "ok: a fed pull pool from 0 is refused at its autoscale"

# ---- 4. a pull pool that grows by itself, reloaded to a plain one ------------------------------
pull() { write "  jobs: { kind: pull, worker: sleep.sleep, args: { latency: $1 }, buffer: 64, source: seq.seq, source_args: { from: 1, to: 100000000 }, $2 }"; }
pull 1ms "size: 2"
start
pull 1ms "size: 3, idle_timeout: 10ms, min: 0, max: 4"
"$shoalctl" reload > /dev/null || fail "the reload to an elastic pull pool: exit $?"
sleep 1
pull 2ms "size: 2" # its workers swapped too
"$shoalctl" reload > /dev/null || fail "the reload back to a plain pull pool: exit $?"
size_is jobs 2
sleep 1
"$shoalctl" status | grep -q "^pool jobs size 2 target 2 " ||
    fail "the plain pull pool does not run 2 workers: $("$shoalctl" status | grep '^pool jobs ')"
echo "ok: an elastic pull pool reloaded to a plain one runs its 2 workers"

# ---- 5. scale to 0 of a fed pull pool that nothing would grow again ----------------------------
# Its own source's items are never refused: up.when on refused would not
# start a worker either, and shoalctl says so (it told it to add that).
pull 2ms "size: 2, autoscale: { min: 0, max: 4, up: { when: [busy > 80%, refused > 0] } }"
"$shoalctl" reload > /dev/null || fail "the reload to an autoscaled fed pull pool: exit $?"
expect_out "scale jobs 0" 1 "shoalctl: jobs: 0 workers would leave it with no worker, and nothing would start one: its autoscale sees no busy time and no queue wait with no worker, and its own source's items are never refused; keep at least 1 worker (a reload with idle_timeout allows 0)" \
    "$shoalctl" scale jobs 0
stop_host 0
echo "ok: a fed pull pool is not scaled to 0 workers, and the refusal says why"
