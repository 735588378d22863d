#!/bin/bash
# test_isolated_hostile.sh BUILD_DIR [SANITIZER] - a plugin in a pool with
# `isolation: process` does to its child's channel to shoald what a buggy or
# hostile plugin may (the hostile fixture, on a cast); shoald does not care:
#   1. Its doorbell descriptors (ipc/chan.h). `block` clears O_NONBLOCK on
#      the channel's descriptors, `shutdown` shuts the doorbells down,
#      `close` closes them. After each, every call to the pool is still
#      answered, and a kill -9 of the child is still seen (its death line)
#      and the pool restarted and serving. (With eventfd doorbells, one open
#      file description for both processes, `block` made the parent's read
#      in the supervisor wait for good: calls unanswered, a killed child a
#      zombie, shutdown only ended by its drain deadline.)
#   2. The shared region. `truncate` grows it, tries to seal it against
#      writes, and shrinks it to 4096 bytes: every one is refused (the
#      region is sealed against resizing and further seals: EPERM), shoald
#      lives and the pool serves on. (Unsealed, the shrink made shoald's
#      next touch of the region past 4096 bytes a SIGBUS: shoald died.)
#   3. The ring shoald reads from. `scribble` writes garbage over it (a
#      stray write into the shared memory): shoald finds the ring broken,
#      says so in one line naming the child, kills it once, and the pool
#      serves on from a new child -- whether the child is the current one
#      or a retiring one (scribbling 3 s after its cast, while a reload's
#      new child has taken over and it drains, then sleeping 30 s). In
#      the 2 s after, no thread of shoald used more than a quarter of a
#      core. (Before: the broken ring read as a record to take, so the
#      supervisor never slept: a current child was logged and killed again
#      on every turn until reaped -- a line each time -- and a retiring one
#      was not killed at all, nor named, while shoald burned a core until it
#      exited on its own.)
#   4. The doorbell that wakes shoald. `ring` rings it from a thread as
#      fast as it can for 4 s with nothing sent: shoald stops listening to
#      it for a second at a time, says so once, counts it
#      (process_doorbell_deafened); no thread of shoald uses more than a
#      quarter of a core meanwhile, and every call is answered. (Before,
#      the supervisor woke for every datagram: a core spent, said nowhere.)
#   5. shoalctl stop: drained, exit 0, no sanitizer report.
. "$(dirname "$0")/lib.sh" "$1"
fixtures=$build/fixtures
export SHOAL_SOCKET=$tmp/ctl.sock

header() {
    cat <<YAML
runtime: { control: ctl.sock }
log: { level: info }
shutdown: { drain: 10s }
plugins:
  hostile: $fixtures/hostile.so
pools:
YAML
}
pool() { # pool NAME TRICK
    printf '  %s:\n    worker: hostile.hostile\n    size: 1\n    isolation: process\n    restart: { max: 100, within: 10s }\n    args: { trick: %s }\n' "$1" "$2"
}
# calls POOL: five calls, each answered with its payload within 3 s
calls() {
    local i out
    for i in 1 2 3 4 5; do
        out=$("$shoalctl" --timeout 3000 call "$1" "hello $i" 2>&1) ||
            fail "$1: call $i not answered: $out"
        [ "$out" = "hello $i" ] || fail "$1: call $i answered '$out'"
        sleep 0.1 # the supervisor sleeps and wakes between calls
    done
}
# up_again POOL OLD: until a child other than OLD is the pool's (10 s at most)
up_again() {
    local c
    for _ in $(seq 1 1000); do
        c=$(field "$1" process_pid)
        [ -n "$c" ] && [ "$c" != 0 ] && [ "$c" != "$2" ] && return 0
        sleep 0.01
    done
    fail "$1: no child after $2"
}

# ---- 1. doorbells: blocking, shut down, closed ---------------------------------
write "$(pool hb block)
$(pool hs shutdown)
$(pool hc close)"
: > "$log"
"$shoald" --no-table "$tmp/s.yaml" 2> "$log" &
pid=$!
wait_for "running $tmp/s.yaml: 3 pools"
for p in hb hs hc; do
    case $p in hb) trick=block ;; hs) trick=shutdown ;; hc) trick=close ;; esac
    calls "$p"
    "$shoalctl" send "$p" x > /dev/null || fail "$p: send"
    wait_for "\[$p:[0-9]*\] .*hostile: $trick fd 5: "
    calls "$p"
    child=$(field "$p" process_pid)
    kill -9 "$child"
    wait_for "$p: isolated worker process $child was killed by SIGKILL" 1 500
    up_again "$p" "$child"
    calls "$p"
    [ "$(field "$p" processes_died)" = 1 ] || fail "$p: $(field "$p" processes_died) deaths, not 1"
    alive
    echo "ok: $p ($trick): calls answered, its killed child seen and replaced"
done

# ---- 2. the shared region: resized, sealed ---------------------------------------
write "$(pool hb block)
$(pool hs shutdown)
$(pool hc close)
$(pool ht truncate)"
"$shoalctl" reload > /dev/null || fail "reload adding ht"
for _ in $(seq 1 1000); do
    [ "$(field ht pool_size)" = 1 ] && break
    sleep 0.01
done
calls ht
"$shoalctl" send ht x > /dev/null || fail "ht: send"
wait_for "\[ht:[0-9]*\] .*hostile: truncate fd 3: "
sleep 0.3 # shoald's supervisor and senders touch the region meanwhile
alive
for what in grow seal truncate; do
    [ "$(count "\[ht:[0-9]*\] .*hostile: $what fd 3: Operation not permitted")" = 1 ] ||
        fail "ht: the child's $what was not refused: $(grep "hostile: $what" "$log")"
done
calls ht
"$shoalctl" send ht x > /dev/null || fail "ht: send after the tricks"
calls ht
[ "$(field ht processes_died)" = 0 ] || fail "ht: its child died"
alive
echo "ok: ht (truncate): the region cannot be resized or sealed by the child; calls answered"

# ---- 3. the ring shoald reads from: garbage ----------------------------------------
# busiest SECONDS: the most CPU (ticks) one thread of shoald used in that long
busiest() {
    local t v max=0
    declare -A before
    for t in /proc/"$pid"/task/*; do
        before[$t]=$(awk '{ print $14 + $15 }' "$t/stat" 2> /dev/null)
    done
    sleep "$1"
    for t in /proc/"$pid"/task/*; do
        v=$(awk '{ print $14 + $15 }' "$t/stat" 2> /dev/null) || continue
        [ -n "$v" ] && [ -n "${before[$t]:-}" ] && [ $((v - before[$t])) -gt "$max" ] &&
            max=$((v - before[$t]))
    done
    echo "$max"
}
quarter=$(($(getconf CLK_TCK) * 2 / 4)) # a quarter of a core, over 2 s
# scribbled POOL CHILD: CHILD's garbage seen, said once, CHILD killed once,
# shoald idle meanwhile, the pool serving from another child
scribbled() {
    wait_for "\[$1:$2\] .*hostile: scribble fd 3: ok"
    sleep 0.5
    local cpu
    cpu=$(busiest 2)
    [ "$cpu" -le "$quarter" ] || fail "$1: a thread of shoald used $cpu ticks in 2 s after the scribble"
    wait_for "$1: isolated worker process $2 wrote nonsense into its channel: stopped" 1 300
    wait_for "$1: isolated worker process $2 was killed by SIGKILL"
    sleep 0.3
    [ "$(count "isolated worker process $2 wrote nonsense")" = 1 ] ||
        fail "$1: said $(count "isolated worker process $2 wrote nonsense") times"
    kill -0 "$2" 2> /dev/null && fail "$1: its child $2 still runs"
    echo "ok: $1: child $2 scribbled: said once, killed, at most $cpu ticks of a thread in 2 s"
}
write "$(pool hb block)
$(pool hs shutdown)
$(pool hc close)
$(pool ht truncate)
$(pool sc scribble)
$(pool sr scribble | sed 's/{ trick: scribble }/{ trick: scribble, after: 3s, ms: 30s }/')"
"$shoalctl" reload > /dev/null || fail "reload adding sc and sr"
for _ in $(seq 1 1000); do
    [ "$(field sc pool_size)" = 1 ] && [ "$(field sr pool_size)" = 1 ] && break
    sleep 0.01
done
# The current child.
calls sc
child=$(field sc process_pid)
"$shoalctl" send sc x > /dev/null || fail "sc: send"
scribbled sc "$child"
up_again sc "$child"
calls sc
alive
# A retiring one: its cast's handler sleeps while a reload's new child takes
# over, then scribbles.
calls sr
old=$(field sr process_pid)
"$shoalctl" send sr x > /dev/null || fail "sr: send"
write "$(pool hb block)
$(pool hs shutdown)
$(pool hc close)
$(pool ht truncate)
$(pool sc scribble)
$(pool sr scribble | sed 's/{ trick: scribble }/{ trick: scribble, after: 3s, ms: 31s }/')"
"$shoalctl" reload > /dev/null || fail "reload of sr's args"
up_again sr "$old"
[ "$(count "\[sr:$old\] .*hostile: scribble")" = 0 ] ||
    fail "sr: its child scribbled before the reload's took over: the test tests nothing"
kill -0 "$old" 2> /dev/null || fail "sr: the old child $old is not draining"
scribbled sr "$old"
calls sr
alive

# ---- 4. the doorbell that wakes shoald: rung for nothing ---------------------------
# The child's plugin rings shoald's doorbell as fast as it can for 4 s, with
# nothing sent. shoald stops listening to it for a second at a time (1000
# rings more than records within a second), said once, counted; meanwhile no
# thread of shoald uses more than a quarter of a core and every call is
# answered. (Before, the supervisor woke for every datagram: a core of
# shoald spent on it, said nowhere.)
write "$(pool hb block)
$(pool hs shutdown)
$(pool hc close)
$(pool ht truncate)
$(pool sc scribble)
$(pool sr scribble | sed 's/{ trick: scribble }/{ trick: scribble, after: 3s, ms: 31s }/')
$(pool rg ring | sed 's/{ trick: ring }/{ trick: ring, ms: 4s }/')"
"$shoalctl" reload > /dev/null || fail "reload adding rg"
for _ in $(seq 1 1000); do
    [ "$(field rg pool_size)" = 1 ] && break
    sleep 0.01
done
calls rg
child=$(field rg process_pid)
"$shoalctl" send rg x > /dev/null || fail "rg: send"
wait_for "\[rg:$child\] .*hostile: ring fd 5: ok"
sleep 0.3
cpu=$(busiest 2)
[ "$cpu" -le "$quarter" ] || fail "rg: a thread of shoald used $cpu ticks in 2 s of its child's ringing"
calls rg
wait_for "rg: isolated worker process $child rang its doorbell 1000 times more than it sent records, within a second: not listened to for 1 s"
deafened=$(field rg process_doorbell_deafened)
[ "$deafened" -ge 2 ] || fail "rg: not listened to $deafened times in 2 s of ringing"
sleep 1.5 # the ringing is over
[ "$(count "isolated worker process $child rang its doorbell")" = 1 ] ||
    fail "rg: said $(count "isolated worker process $child rang its doorbell") times"
calls rg
[ "$(field rg processes_died)" = 0 ] || fail "rg: its child died"
alive
echo "ok: rg (ring): not listened to $deafened+ times, said once, at most $cpu ticks of a thread in 2 s, calls answered"

# ---- 5. stop -------------------------------------------------------------------
"$shoalctl" stop > /dev/null || fail "stop: exit $?"
wait "$pid"
rc=$?
pid=
[ "$rc" = 0 ] || fail "shoald exited $rc after stop"
[ "$(count 'Sanitizer')" = 0 ] || fail "a sanitizer report in the log"
echo "ok: test_isolated_hostile"
