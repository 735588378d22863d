#!/bin/bash
# test_pull.sh BUILD_DIR - a pull pool in shoald, fed by the bundled seq
# source.
#
#   1. An epic of 10^7 numbers (times $SHOAL_STRESS_SCALE) through 4 burn
#      workers: logged when it starts and ends, with its count; every item
#      accepted once and handled (the ledger: accepted = handled, nothing
#      refused, nothing in flight); shoald's memory stays flat (its peak at
#      most 8 MiB over its size early in the epic: the buffer holds 1024
#      items however long the epic), measured at full scale only (the
#      sanitizers' own memory grows).
#   2. `shoalctl epic` while it runs: exit 1, busy, with the items so far;
#      on a pool without a source: exit 1, says so; when it is over: a new
#      epic starts (exit 0) and completes.
#   3. Reload while an epic runs: size 4 -> 2, prefetch 1 -> 4, buffer 1024
#      -> 64 applied live (logged), and the ledger still balances at the end.
#   4. `shoalctl epic POOL ARGS`: bad ARGS (an unknown key, a bad value, not
#      a mapping) exit 2 naming the place in ARGS, and start nothing; on a
#      pool without a source: exit 1; good ones start an epic of exactly
#      what they say ({from: 1, to: 5000, step: 2}: 2500 items, logged "with
#      its own args"); another with ARGS while one runs: busy, exit 1; the
#      ledger balances over all of it.
#   5. SIGTERM drains: exit 0.
. "$(dirname "$0")/lib.sh" "$1"
export SHOAL_SOCKET=$tmp/ctl.sock
scale=${SHOAL_STRESS_SCALE:-1}
# At least 4 * 10^6: the busy check below needs an epic still running.
n=$(awk -v s="$scale" 'BEGIN { n = 10000000 * s; printf "%d", n < 4000000 ? 4000000 : n }')

header() {
    cat <<YAML
runtime: { control: ctl.sock, threads: 2 }
log: { level: info }
shutdown: { drain: 10s }
plugins:
  burn: $plugins/burn/burn.so
  echo: $plugins/echo/echo.so
  seq: $plugins/seq/seq.so
YAML
}
pools() { # SIZE PREFETCH BUFFER
    cat <<YAML
pools:
  epic:
    kind: pull
    worker: burn.burn
    args: { rounds: 0 }
    size: $1
    prefetch: $2
    buffer: $3
    source: seq.seq
    source_args: { from: 1, to: $n }
  api: { worker: echo.echo, size: 1 }
YAML
}
write "$(pools 4 1 1024)"
"$shoald" "$tmp/s.yaml" >/dev/null 2>"$log" &
pid=$!
wait_for 'epic: epic started: source seq'
# The epic starts with its pool, before shoald has finished starting: a
# command before "running" is told "busy: shoald is starting" (CI, 6 ms).
wait_for "running $tmp/s.yaml"

# 1 + 2: busy while it runs, its memory early in the epic.
out=$("$shoalctl" epic epic 2>&1)
rc=$?
[ $rc = 1 ] || fail "epic while one runs: exit $rc, not 1 ($out)"
echo "$out" | grep -Eq '^shoalctl: busy: epic is working through an epic \([0-9]+ items so far\)' ||
    fail "epic while one runs: '$out'"
sleep 0.3
rss0=$(awk '/^VmRSS/ { print $2 }' /proc/$pid/status)
out=$("$shoalctl" epic api 2>&1)
[ $? = 1 ] && [ "$out" = "shoalctl: api has no source (an epic needs a pull pool with source:)" ] ||
    fail "epic on a forward pool: '$out'"
wait_done "epic: epic done: $n items in "
hwm=$(awk '/^VmHWM/ { print $2 }' /proc/$pid/status)
if [ "$scale" = 1 ] && [ $((hwm - rss0)) -gt 8192 ]; then
    fail "memory grew with the epic: VmRSS ${rss0} kB early, peak ${hwm} kB at the end"
fi
line=$(settled_ledger)
echo "$line" | grep -q "^ledger total: accepted $n = handled $n + failed 0 + dropped 0 + in flight 0; refused 0$" ||
    fail "after the epic: '$line'"
echo "ok: an epic of $n items: every one handled once; memory ${rss0} -> peak ${hwm} kB"

# 2: a new epic once it is over.
out=$("$shoalctl" epic epic 2>&1) || fail "epic after the last: '$out'"
[ "$out" = "epic: epic started" ] || fail "epic after the last: '$out'"
wait_done "epic: epic done: $n items in " 2

# 3: reload while the next epic runs.
"$shoalctl" epic epic >/dev/null || fail "third epic"
wait_for 'epic: epic started: source seq' 3
write "$(pools 2 4 64)"
out=$("$shoalctl" reload 2>&1) || fail "reload: '$out'"
wait_for 'reload: generation 2 from .*: epic size 4 -> 2; epic prefetch 1 -> 4; epic buffer 1024 -> 64; ledger: '
[ "$(count 'failed:')" = 0 ] || fail "a live change failed: $(grep 'failed:' "$log")"
wait_done "epic: epic done: $n items in " 3
line=$(settled_ledger)
want=$((3 * n))
echo "$line" | grep -q "^ledger total: accepted $want = handled $want + failed 0 + dropped 0 + in flight 0; refused 0$" ||
    fail "after a reload under an epic: '$line'"
st=$("$shoalctl" status)
echo "$st" | grep -q '^pool epic size 2 target 2 ' || fail "size not applied: $st"
echo "ok: reload under an epic: size, prefetch and buffer live; ledger balanced"

# 4: epics with their own args.
started=$(count 'epic: epic started')
bad() { # ARGS WANT: exit 2 and exactly WANT
    local out rc
    out=$("$shoalctl" epic epic "$1" 2>&1)
    rc=$?
    [ $rc = 2 ] && [ "$out" = "$2" ] || fail "epic epic '$1': exit $rc, '$out'; want exit 2, '$2'"
}
bad '{from: 1, tto: 5}' \
    "shoalctl: epic args:1:11: epic args: unknown key 'tto' for seq.seq (it takes: from, to, step, type)"
bad '{from: x}' "shoalctl: epic args:1:8: epic args.from: expected an integer, got 'x'"
bad '[1, 2]' \
    "shoalctl: epic args:1:1: epic args: expected a mapping of seq.seq's args, like '{from: 1, to: 1000}', got a list"
out=$("$shoalctl" epic api '{from: 1}' 2>&1)
[ $? = 1 ] && [ "$out" = "shoalctl: api has no source (an epic needs a pull pool with source:)" ] ||
    fail "epic with args on a forward pool: '$out'"
[ "$(count 'epic: epic started')" = "$started" ] || fail "a refused epic started one: $(grep 'epic started' "$log")"
out=$("$shoalctl" epic epic '{from: 1, to: 5000, step: 2}' 2>&1) || fail "epic with args: '$out'"
[ "$out" = "epic: epic started with its own args" ] || fail "epic with args: '$out'"
wait_done 'epic: epic done: 2500 items in '
[ "$(count 'epic: epic started: source seq (with its own args)')" = 1 ] || fail "not logged with its own args"
out=$("$shoalctl" epic epic '{from: 1, to: 2000000}' 2>&1) || fail "epic with args: '$out'"
out=$("$shoalctl" epic epic '{from: 1, to: 3}' 2>&1)
[ $? = 1 ] || fail "epic with args while one runs: '$out'"
echo "$out" | grep -Eq '^shoalctl: busy: epic is working through an epic \([0-9]+ items so far\)' ||
    fail "epic with args while one runs: '$out'"
wait_done 'epic: epic done: 2000000 items in '
line=$(settled_ledger)
want=$((3 * n + 2500 + 2000000))
echo "$line" | grep -q "^ledger total: accepted $want = handled $want + failed 0 + dropped 0 + in flight 0; refused 0$" ||
    fail "after epics with their own args: '$line'"
echo "ok: epics with their own args: exact counts; bad ARGS refused with their place"

stop_host 0
echo "ok: drained and stopped"
