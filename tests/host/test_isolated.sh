#!/bin/bash
# test_isolated.sh BUILD_DIR [SANITIZER] - a pool with `isolation: process`:
# its plugin's crashes kill only its child process, are counted exactly and
# reported, and the pool is managed like any other.
#   1. Crashes. `bad` (one fault.fault worker in a child, SIGSEGV on every
#      1000th message, every finished message recorded in a file) is fed
#      20,000 messages beside a healthy in-process pool fed as many: shoald
#      lives; each death is one fatal line naming pool, behaviour and the
#      configured plugin file, then one "isolated worker process N was
#      killed by SIGSEGV; K messages it held are counted as failed" line;
#      inspect's processes_died and worker_restarts equal the deaths; the
#      pool's handled equals the records (no message finished twice) and its
#      failed is exactly 20,000 - handled, which is the sum of the K's; the
#      healthy pool handled all 20,000. (One worker: with two, the other
#      one's handler may have done its work and not yet returned when the
#      process dies; that message counts as failed, as it should, but the
#      record file would have it.)
#   2. A reload that changes size and mailbox only: applied by the child,
#      no new process.
#   3. A reload whose args fail init in the new child: refused (exit 1, the
#      init's message and file:line:col), generation and process unchanged.
#   4. A reload that changes args, then one that swaps the plugin: a new
#      child each time, the old one drains and exits (no death counted), the
#      new code answers calls.
#   5. kill -9 of the child from outside: logged, restarted, serving again.
#   6. A pool whose child dies on every message, past its restart budget:
#      degraded (logged once), started again after its backoff; the other
#      pools serve on.
#   7. shoalctl stop: drained, exit 0, no child left. kill -9 of shoald:
#      its child follows (PR_SET_PDEATHSIG).
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
  echo: $plugins/echo/echo.so
  loadgen: $plugins/loadgen/loadgen.so
  fault: $fixtures/fault.so
pools:
YAML
}
# settle POOL N: until the pool's handled + failed is N (30 s at most)
settle() {
    for _ in $(seq 1 3000); do
        [ "$(($(field "$1" messages_handled) + $(field "$1" messages_failed)))" = "$2" ] && return 0
        sleep 0.01
    done
    fail "pool $1 settled $(($(field "$1" messages_handled) + $(field "$1" messages_failed))) of $2"
}
# wait_field POOL KEY VALUE: until inspect says so (10 s at most)
wait_field() {
    for _ in $(seq 1 1000); do
        [ "$(field "$1" "$2")" = "$3" ] && return 0
        sleep 0.01
    done
    fail "pool $1: $2 is $(field "$1" "$2"), not $3"
}
# clean: no sanitizer spoke, in shoald or in a child (they share the log)
clean() { [ "$(count 'Sanitizer')" = 0 ] || fail "a sanitizer report in the log"; }

bad_pool() { # bad_pool SIZE MAILBOX ARGS [WORKER]
    printf '  bad:\n    worker: %s\n    size: %s\n    mailbox: %s\n    isolation: process\n    restart: { max: 1000, within: 10s }\n    args: %s\n' \
        "${4:-fault.fault}" "$1" "$2" "$3"
}
sources="  good:
    worker: echo.echo
    size: 2
  feed:
    worker: loadgen.loadgen
    size: 1
    mailbox: unbounded
    args: { target: bad, rate: 0, count: 20000 }
  feed2:
    worker: loadgen.loadgen
    size: 1
    mailbox: unbounded
    args: { target: good, rate: 0, count: 20000 }"

# ---- 1. crashes --------------------------------------------------------------
write "$(bad_pool 1 100 "{ mode: segv, every: 1000, record: $tmp/rec }")
$sources"
: > "$log"
"$shoald" --no-table "$tmp/s.yaml" 2> "$log" &
pid=$!
wait_for "running $tmp/s.yaml: 4 pools"
for _ in $(seq 1 3000); do
    [ "$(loadgen feed 12)" = 1 ] && [ "$(loadgen feed2 12)" = 1 ] && break
    sleep 0.01
done
[ "$(loadgen feed 1)" = 20000 ] || fail "feed sent $(loadgen feed 1)"
[ "$(loadgen feed2 1)" = 20000 ] || fail "feed2 sent $(loadgen feed2 1)"
settle bad 20000
alive
recorded=$(($(stat -c %s "$tmp/rec") / 8))
handled=$(field bad messages_handled)
failed=$(field bad messages_failed)
died=$(field bad processes_died)
[ "$handled" = "$recorded" ] || fail "bad handled $handled, its workers recorded $recorded"
[ "$failed" = $((20000 - recorded)) ] || fail "bad failed $failed, 20000 - $recorded recorded"
[ "$(od -An -tu8 -w8 -v "$tmp/rec" | sort | uniq -d | wc -l)" = 0 ] || fail "a message finished twice"
# Each child takes at most 999 handled + 1 fatal + 100 held: 18 at least.
[ "$died" -ge 18 ] || fail "only $died deaths"
[ "$(field bad worker_restarts)" = "$died" ] || fail "$(field bad worker_restarts) restarts for $died deaths"
[ "$(field bad processes_started)" = $((died + 1)) ] || fail "$(field bad processes_started) started"
[ "$(count "fatal signal SIGSEGV (address 0x0, not mapped) in pool bad, behaviour fault, plugin fault 1.0.0 ($fixtures/fault.so)")" = "$died" ] ||
    fail "$(count 'fatal signal SIGSEGV') fatal lines for $died deaths"
[ "$(count "bad: isolated worker process [0-9]* was killed by SIGSEGV; [0-9]* messages\? it held \(is\|are\) counted as failed")" = "$died" ] ||
    fail "not one death line per death"
held=$(sed -n 's/.* bad: .*was killed by SIGSEGV; \([0-9]*\) messages\? it held.*/\1/p' "$log" | awk '{ s += $1 } END { print s + 0 }')
[ "$held" = "$failed" ] || fail "the death lines count $held failed, the pool $failed"
[ "$(field good messages_handled)" = 20000 ] || fail "good handled $(field good messages_handled)"
[ "$(field good messages_failed)" = 0 ] || fail "good failed"
echo "ok: $died crashes, $handled handled, $failed failed, exactly"

# ---- 2. size and mailbox: applied by the same child --------------------------
child=$(field bad process_pid)
started=$(field bad processes_started)
write "$(bad_pool 3 50 "{ mode: segv, every: 1000, record: $tmp/rec }")
$sources"
"$shoalctl" reload > /dev/null || fail "reload of size and mailbox"
wait_field bad pool_size 3
wait_field bad worker_mailbox_size 50
[ "$(field bad process_pid)" = "$child" ] || fail "a new process for a resize"
[ "$(field bad processes_started)" = "$started" ] || fail "a process started for a resize"

# ---- 3. args that fail init: refused, nothing changes -------------------------
g=$(gen)
write "$(bad_pool 3 50 "{ mode: ok, init: fail }")
$sources"
out=$("$shoalctl" reload 2>&1) && fail "a reload whose init fails succeeded: $out"
echo "$out" | grep -q "init fails on purpose (init: fail)" || fail "reload said: $out"
echo "$out" | grep -q "s.yaml:[0-9]*:[0-9]*" || fail "no file:line:col in: $out"
[ "$(gen)" = "$g" ] || fail "the generation moved"
echo "ok: refused: $(echo "$out" | head -1)"
[ "$(field bad process_pid)" = "$child" ] || fail "the process changed"
[ "$(field bad pool_size)" = 3 ] || fail "the size changed"

# ---- 4. new args, then another plugin: a new child each, none died ------------
died=$(field bad processes_died)
write "$(bad_pool 3 50 "{ mode: ok }")
$sources"
"$shoalctl" reload > /dev/null || fail "reload of args"

for _ in $(seq 1 1000); do
    c=$(field bad process_pid)
    [ -n "$c" ] && [ "$c" != 0 ] && [ "$c" != "$child" ] && break
    sleep 0.01
done
[ "$c" != "$child" ] || fail "no new child for new args"
for _ in $(seq 1 1000); do kill -0 "$child" 2> /dev/null || break; sleep 0.01; done
kill -0 "$child" 2> /dev/null && fail "the old child $child is still there"
[ "$("$shoalctl" call bad hello)" = hello ] || fail "fault (mode ok) did not echo"
write "$(bad_pool 3 50 "{ reply: pong }" echo.echo)
$sources"
"$shoalctl" reload > /dev/null || fail "reload to echo"
for _ in $(seq 1 1000); do
    [ "$("$shoalctl" call bad hello 2> /dev/null)" = pong ] && break
    sleep 0.01
done
[ "$("$shoalctl" call bad hello)" = pong ] || fail "the new plugin does not answer"
[ "$(field bad processes_died)" = "$died" ] || fail "a swap counted a death"
"$shoalctl" inspect bad | grep -q '"worker_behaviour":"echo"' || fail "inspect names $("$shoalctl" inspect bad)"

# ---- 5. kill -9 of the child ------------------------------------------------------
child=$(field bad process_pid)
kill -9 "$child"
wait_for "bad: isolated worker process $child was killed by SIGKILL"
for _ in $(seq 1 1000); do
    [ "$("$shoalctl" call bad x 2> /dev/null)" = pong ] && break
    sleep 0.01
done
[ "$("$shoalctl" call bad x)" = pong ] || fail "not serving after its child was killed"
[ "$(field bad processes_died)" = $((died + 1)) ] || fail "the kill was not counted"
alive

# ---- 6. past the restart budget: degraded, retried with backoff ---------------
# `worse` crashes on every message, 2 restarts allowed within 10 s: the
# third death degrades it (logged once), it is started again after its
# backoff, and nothing else notices.
write "$(bad_pool 3 50 "{ reply: pong }" echo.echo)
  worse:
    worker: fault.fault
    size: 1
    isolation: process
    restart: { max: 2, within: 10s, backoff: 200ms }
    args: { mode: segv }
$sources"
"$shoalctl" reload > /dev/null || fail "reload adding worse"
wait_field worse pool_size 1
for i in 1 2 3 4; do
    for _ in $(seq 1 500); do "$shoalctl" send worse x > /dev/null 2>&1 && break; sleep 0.01; done
    wait_for "worse: isolated worker process [0-9]* was killed by SIGSEGV" "$i"
done
wait_for "worse: degraded: more than 2 restarts within 10000 ms"
[ "$(count 'worse: degraded:')" = 1 ] || fail "degraded logged $(count 'worse: degraded:') times"
[ "$("$shoalctl" call bad x)" = pong ] || fail "bad stopped serving while worse crashed"
alive

# ---- 7. stop drains and leaves no child; a killed shoald leaves none ----------
child=$(field bad process_pid)
"$shoalctl" stop > /dev/null || fail "stop"
wait "$pid"
rc=$?
pid=
[ "$rc" = 0 ] || fail "shoald exited $rc after stop"
clean
kill -0 "$child" 2> /dev/null && fail "child $child outlived shoald"
: > "$log"
"$shoald" --no-table "$tmp/s.yaml" 2> "$log" &
pid=$!
wait_for "running $tmp/s.yaml: 5 pools"
wait_field bad pool_size 3
child=$(field bad process_pid)
kill -9 "$pid"
wait "$pid" 2> /dev/null
pid=
for _ in $(seq 1 500); do kill -0 "$child" 2> /dev/null || break; sleep 0.01; done
kill -0 "$child" 2> /dev/null && fail "child $child outlived a killed shoald"
clean

# A child whose own workers pass their restart budget (a handler error on
# every 2nd message, 2 restarts allowed) is degraded in there: the pool in
# shoald says degraded too, and counts the child's worker restarts.
cat > "$tmp/deg.yaml" <<YAML
runtime: { control: ctl.sock }
shutdown: { drain: 1s }
plugins:
  echo: $plugins/echo/echo.so
  crash: $plugins/crash/crash.so
  loadgen: $plugins/loadgen/loadgen.so
pools:
  ci:
    worker: crash.crash
    size: 1
    isolation: process
    args: { every: 2, mode: fail }
    restart: { max: 2, within: 1m, backoff: 1m }
sources:
  feed: { actor: loadgen.loadgen, args: { target: ci, rate: 50 } }
YAML
: > "$log"
"$shoald" --no-table "$tmp/deg.yaml" 2> "$log" &
pid=$!
wait_for "running $tmp/deg.yaml: 1 pool, 1 source"
wait_for "ci: degraded: "
for _ in $(seq 1 500); do
    "$shoalctl" inspect ci | grep -q '"state":"degraded"' && break
    sleep 0.01
done
"$shoalctl" inspect ci | grep -q '"state":"degraded"' ||
    fail "a degraded child, its pool in shoald: $("$shoalctl" inspect ci)"
# status says so too, at the end of the pool's line (it said nothing).
"$shoalctl" status | grep -q '^pool ci size .* degraded$' ||
    fail "status of a degraded pool: $("$shoalctl" status | grep '^pool ci ')"
[ "$(field ci worker_restarts)" -ge 2 ] || fail "the child's restarts: $(field ci worker_restarts)"
# Its child has no worker left (the backoff is a minute): what it holds
# cannot drain, and shoald says so and exits 3.
stop_host 3
wait_for "shutdown: [0-9]* messages\? lost (queued, or in handlers that did not return), counted as dropped"
clean
echo "ok: test_isolated"
