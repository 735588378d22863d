#!/bin/bash
# test_notify.sh BUILD_DIR - shoald under systemd's notify protocol
# (core/host/notify.h), heard by a python3 listener on a datagram
# NOTIFY_SOCKET that records every datagram with its sender's pid
# (SO_PASSCRED) and the time it came (CLOCK_MONOTONIC).
#   1. A socket path, WATCHDOG_USEC=2s and WATCHDOG_PID=shoald's, 1
#      dispatcher thread and no compensating one, an isolated pool: the
#      exact sequence of datagrams across start (READY=1), a SIGHUP reload,
#      a `shoalctl reload`, a failed reload (its STATUS is shoalctl's error),
#      a reload that removes a pool (STATUS once it has drained) and SIGTERM
#      (STOPPING=1, exit 0); MONOTONIC_USEC is the monotonic clock.
#      WATCHDOG=1 at least twice per interval while healthy; none while the
#      only dispatcher thread is stuck in a handler (fault.fault, loop 5 s),
#      one warning when they stop and one when they resume, and they do
#      resume. No datagram from any pid but shoald's; the isolated pool's
#      child has no NOTIFY_SOCKET or WATCHDOG_* in its environment.
#   2. An abstract socket ('@name'), a WATCHDOG_PID that is not shoald's:
#      READY=1 and STOPPING=1 (shoalctl stop), no watchdog, exit 0.
#   3. A socket nobody reads (sd_notify would block): shoald answers,
#      reloads and stops (exit 0); one warning that messages are dropped.
#   6. A reload that waits 3 s for a checkout member's connect, with
#      WATCHDOG_USEC=2s and two dispatcher threads: WATCHDOG=1 goes on
#      (the host thread waiting pets it), never 1.5 s without one.
#   7. A diff naming a plugin whose ELF constructor hangs (refused after its
#      10 s trial) and one whose fini waits 3 s, WATCHDOG_USEC=2s: the host
#      thread waiting on them pets it, never 1.5 s without one. The second
#      diff is answered before the fini (status says "diffing FILE ...:
#      answered; releasing the plugins it loaded" until it returns).
#   8. A start that waits 2.5 s for a pool's init: STATUS=starting
#      generation 1: starting pool slow, 2 of 2 (its first workers run
#      init), once, then READY=1; given up by `shoalctl stop`, STOPPING=1
#      after it, and nothing more.
# (Without NOTIFY_SOCKET: every other integration test.)
. "$(dirname "$0")/lib.sh" "$1"
fault=$build/fixtures/fault.so
[ -f "$fault" ] || fail "no $fault"
export SHOAL_SOCKET=$tmp/ctl.sock
export TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}atexit_sleep_ms=0"
lpid=
stop_listener() { [ -n "$lpid" ] && kill "$lpid" 2> /dev/null; lpid=; }
trap 'stop_listener; cleanup' EXIT

cat > "$tmp/listen.py" <<'PY'
import os, socket, struct, sys, time
where, out = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
s.bind("\0" + where[1:] if where.startswith("@") else where)
f = open(out, "w", buffering=1)
open(out + ".ready", "w").close()
while True:
    data, anc, _, _ = s.recvmsg(65536, socket.CMSG_SPACE(12))
    t = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
    pid = -1
    for level, kind, d in anc:
        if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
            pid = struct.unpack("iII", d[:12])[0]
    f.write("%d %d %s\n" % (t, pid, data.decode().replace("\n", "|")))
PY
# listen WHERE: records into $tmp/notify (time pid payload, '|' for newlines)
listen() {
    rm -f "$tmp/notify" "$tmp/notify.ready"
    python3 "$tmp/listen.py" "$1" "$tmp/notify" &
    lpid=$!
    for _ in $(seq 1 500); do [ -f "$tmp/notify.ready" ] && return 0; sleep 0.01; done
    fail "the listener did not start"
}
# all_events: the payloads but the watchdog's, MONOTONIC_USEC's number as N
all_events() { grep -v ' WATCHDOG=1$' "$tmp/notify" | cut -d' ' -f3- | sed 's/MONOTONIC_USEC=[0-9]*|/MONOTONIC_USEC=N|/'; }
# events: as all_events, without the start's steps (STATUS=starting ...,
# sent only for a step that lasts 1 s: case 8 has them; here a slow
# machine would add one)
events() { all_events | grep -v '^STATUS=starting generation 1: '; }
# wait_event N: until N datagrams other than WATCHDOG=1 came (10 s at most)
wait_event() {
    for _ in $(seq 1 1000); do
        [ "$(events | wc -l)" -ge "$1" ] && return 0
        sleep 0.01
    done
    fail "not $1 notify datagrams: $(events)"
}
pets() { grep -c ' WATCHDOG=1$' "$tmp/notify"; }
# max_gap FROM_LINE: the longest time (us) between two WATCHDOG=1 from the
# FROM_LINE-th one on
max_gap() { grep ' WATCHDOG=1$' "$tmp/notify" | tail -n +"$1" | awk 'NR > 1 && $1 - p > m { m = $1 - p } { p = $1 } END { print m + 0 }'; }
# notified SOCKET [WATCHDOG_USEC [WATCHDOG_PID]]: shoald on $tmp/s.yaml in the
# background ($pid) with NOTIFY_SOCKET, and the watchdog's variables when
# given (WATCHDOG_PID self, the default: shoald's own pid, as systemd sets it)
notified() {
    (
        export NOTIFY_SOCKET=$1
        if [ -n "${2:-}" ]; then
            export WATCHDOG_USEC=$2
            if [ "${3:-self}" = self ]; then export WATCHDOG_PID=$BASHPID; else export WATCHDOG_PID=$3; fi
        fi
        exec "$shoald" --no-table "$tmp/s.yaml" 2> "$log"
    ) &
    pid=$!
}

header() {
    cat <<YAML
runtime: { threads: 1, max_extra_threads: 0, stall_warn: 300ms, control: ctl.sock }
log: { level: info }
shutdown: { drain: 5s }
plugins:
  echo: $plugins/echo/echo.so
  fault: $fault
pools:
  slow:
    worker: fault.fault
    size: 1
    args: { mode: loop, ms: 5s }
  iso:
    worker: echo.echo
    size: 1
    isolation: process
YAML
}

# ---- 1. a socket path, the watchdog, start to stop ---------------------------
listen "$tmp/notify.sock"
write "  api: { worker: echo.echo, size: 2 }"
notified "$tmp/notify.sock" 2000000
wait_for "running $tmp/s.yaml: 3 pools on 1 thread,"
wait_for "info systemd: notify socket $tmp/notify.sock; watchdog 2000 ms, petted every 500 ms while the dispatcher handles heartbeats$"
wait_event 1

# The isolated pool's child: nothing of systemd's in its environment.
child=
for _ in $(seq 1 500); do
    child=$(field iso process_pid)
    [ -n "$child" ] && [ "$child" != 0 ] && break
    sleep 0.01
done
[ -n "$child" ] && [ -r "/proc/$child/environ" ] || fail "no isolated child ($child)"
tr '\0' '\n' < "/proc/$child/environ" | grep -q '^SHOAL_SOCKET=' ||
    fail "the child's environment is not shoald's"
[ "$(tr '\0' '\n' < "/proc/$child/environ" | grep -c '^\(NOTIFY_SOCKET\|WATCHDOG_USEC\|WATCHDOG_PID\)=')" = 0 ] ||
    fail "the child inherited: $(tr '\0' '\n' < "/proc/$child/environ" | grep '^\(NOTIFY\|WATCHDOG\)')"
"$shoalctl" call iso hello > /dev/null || fail "the isolated pool does not answer"

# Healthy: at least twice per interval (2 s), never 2 s without one.
sleep 4
n=$(pets)
[ "$n" -ge 4 ] || fail "$n WATCHDOG=1 in 4 s while healthy"
gap=$(max_gap 1)
[ "$gap" -lt 2000000 ] || fail "$gap us without WATCHDOG=1 while healthy"
# The only dispatcher thread loops for 5 s: the pets stop, then resume.
before=$(pets)
"$shoalctl" send slow x > /dev/null || fail "send slow"
wait_for "warn systemd: watchdog: the dispatcher has not handled a heartbeat for [0-9]* ms: not petting the watchdog (systemd restarts shoald after 2000 ms)$"
wait_for "warn systemd: watchdog: the dispatcher handled the heartbeat after [0-9]* ms: petting the watchdog again$"
wait_for "slow/fault: stall: returned after"
during=$(pets)
sleep 2.5
after=$(pets)
[ "$((after - during))" -ge 2 ] || fail "$((after - during)) WATCHDOG=1 in 2.5 s after the stall"
[ "$(count 'not petting the watchdog')" = 1 ] || fail "$(count 'not petting the watchdog') warnings"
[ "$(count 'petting the watchdog again')" = 1 ] || fail "$(count 'petting the watchdog again') resumptions"
gap=$(max_gap "$before")
[ "$gap" -ge 3500000 ] || fail "the longest gap in WATCHDOG=1 around a 5 s stall is $gap us"
# And healthy again: no gap of 2 s since it resumed.
gap=$(max_gap "$((during + 1))")
[ "$gap" -lt 2000000 ] || fail "$gap us without WATCHDOG=1 after the stall"

# A reload on SIGHUP (api 2 -> 3 workers).
write "  api: { worker: echo.echo, size: 3 }"
kill -HUP "$pid"
wait_event 3
# shoalctl reload (a new pool).
write "  api: { worker: echo.echo, size: 3 }
  api2: { worker: echo.echo, size: 1 }"
"$shoalctl" reload > /dev/null || fail "shoalctl reload: exit $?"
wait_event 5
# A broken file: refused; READY=1 again, STATUS says why (as shoalctl does).
write "  api: { worker: echo.echo, size: 3, nope: 1 }"
err=$("$shoalctl" reload 2>&1) && fail "a broken reload: exit 0"
case "$err" in "shoalctl: reload failed: $tmp/s.yaml:"*"; generation 3 keeps running") ;;
*) fail "shoalctl said: $err" ;; esac
wait_event 7
# A removed pool: draining at the reload's end, gone a little later.
write "  api: { worker: echo.echo, size: 3 }"
"$shoalctl" reload > /dev/null || fail "reload removing api2: exit $?"
wait_event 10
spid=$pid
kill -TERM "$pid"
wait "$pid"
rc=$?
pid=
[ "$rc" = 0 ] || fail "shoald exited $rc"
wait_event 11
sleep 0.2
stop_listener
want="READY=1|STATUS=generation 1: 3 pools running
RELOADING=1|MONOTONIC_USEC=N|STATUS=reloading (generation 1 running)
READY=1|STATUS=generation 2: 3 pools running (reloaded)
RELOADING=1|MONOTONIC_USEC=N|STATUS=reloading (generation 2 running)
READY=1|STATUS=generation 3: 4 pools running (reloaded)
RELOADING=1|MONOTONIC_USEC=N|STATUS=reloading (generation 3 running)
READY=1|STATUS=${err#shoalctl: }
RELOADING=1|MONOTONIC_USEC=N|STATUS=reloading (generation 3 running)
READY=1|STATUS=generation 4: 3 pools running, 1 draining (reloaded)
STATUS=generation 4: 3 pools running
STOPPING=1|STATUS=stopping (SIGTERM): draining 3 pools within 5000 ms"
got=$(events)
[ "$got" = "$want" ] || fail "the datagrams were:
$got
---- wanted:
$want"
# MONOTONIC_USEC: this machine's monotonic clock, at most 1 s before the
# datagram came.
bad=$(awk '{ if (match($3, /MONOTONIC_USEC=[0-9]+/)) { v = substr($3, RSTART + 15, RLENGTH - 15) + 0;
      n++; if (v > $1 || $1 - v > 1000000) print } } END { if (n != 4) print "count " n }' "$tmp/notify")
[ -z "$bad" ] || fail "MONOTONIC_USEC: $bad"
# Every datagram from shoald itself, none from the isolated child.
others=$(awk -v p="$spid" '$2 != p' "$tmp/notify")
[ -z "$others" ] || fail "datagrams not from shoald ($spid): $others"
[ "$(count 'Sanitizer')" = 0 ] || fail "a sanitizer report in the log"
echo "ok: path socket: $(wc -l < "$tmp/notify") datagrams, $(pets) WATCHDOG=1, the sequence exact"

# ---- 2. an abstract socket, a watchdog for another process -------------------
abstract="@shoal-test-notify-$$-$RANDOM"
listen "$abstract"
header() {
    cat <<YAML
runtime: { control: ctl.sock }
log: { level: info }
shutdown: { drain: 5s }
plugins:
  echo: $plugins/echo/echo.so
pools:
YAML
}
write "  api: { worker: echo.echo, size: 2 }"
notified "$abstract" 200000 1
wait_for "info systemd: notify socket $abstract; no watchdog$"
wait_event 1
sleep 0.5
"$shoalctl" stop > /dev/null || fail "shoalctl stop: exit $?"
wait "$pid"
rc=$?
spid=$pid
pid=
[ "$rc" = 0 ] || fail "shoald exited $rc"
wait_event 2
sleep 0.2
stop_listener
want="READY=1|STATUS=generation 1: 1 pool running
STOPPING=1|STATUS=stopping (shoalctl stop): draining 1 pool within 5000 ms"
got=$(events)
[ "$got" = "$want" ] || fail "the datagrams were:
$got
---- wanted:
$want"
[ "$(pets)" = 0 ] || fail "$(pets) WATCHDOG=1 for a watchdog that is not shoald's"
others=$(awk -v p="$spid" '$2 != p' "$tmp/notify")
[ -z "$others" ] || fail "datagrams not from shoald ($spid): $others"
[ "$(count 'Sanitizer')" = 0 ] || fail "a sanitizer report in the log"
echo "ok: abstract socket, no watchdog"

# ---- 3. a receiver that never reads -----------------------------------------
# Its queue fills (net.unix.max_dgram_qlen), sd_notify blocks: only the
# sender thread waits; past 64 queued, messages are dropped (one warning).
# The host thread goes on: status, a reload, SIGTERM and exit 0.
python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
open(sys.argv[1] + ".ready", "w").close()
time.sleep(600)' "$tmp/deaf.sock" &
lpid=$!
for _ in $(seq 1 500); do [ -f "$tmp/deaf.sock.ready" ] && break; sleep 0.01; done
[ -f "$tmp/deaf.sock.ready" ] || fail "the deaf listener did not start"
notified "$tmp/deaf.sock" 200000
wait_for "info systemd: notify socket $tmp/deaf.sock; watchdog 200 ms, petted every 50 ms"
wait_for "warn systemd: the notify socket is not read (64 messages waiting): dropping messages to it$"
timeout 2 "$shoalctl" status > /dev/null || fail "status did not answer (exit $?)"
kill -HUP "$pid"
wait_for "info reload: generation 2 from $tmp/s.yaml: no change"
kill -TERM "$pid"
wait "$pid"
rc=$?
pid=
[ "$rc" = 0 ] || fail "shoald exited $rc with a deaf notify socket"
[ "$(count 'dropping messages')" = 1 ] || fail "$(count 'dropping messages') drop warnings"
[ "$(count 'Sanitizer')" = 0 ] || fail "a sanitizer report in the log"
stop_listener
echo "ok: a notify socket that is not read does not hold shoald"

# ---- 4. exit 3: STOPPING=1 still reaches systemd --------------------------------
# A handler that loops for a minute on the only thread; SIGTERM, then a
# second SIGTERM while draining: shoald exits 3 at once, without its
# clean-up, and systemd was told STOPPING=1 (the exit-3 path flushes the
# sender's queue first, so this holds however soon the exit follows).
listen "$tmp/notify3.sock"
header() {
    cat <<YAML
runtime: { threads: 1, max_extra_threads: 0, control: ctl.sock }
shutdown: { drain: 30s }
plugins:
  fault: $fault
pools:
  stuck:
    worker: fault.fault
    size: 1
    args: { mode: loop, ms: 60s }
YAML
}
write ""
notified "$tmp/notify3.sock"
wait_for "running $tmp/s.yaml: 1 pool on 1 thread,"
wait_event 1
"$shoalctl" send stuck go > /dev/null || fail "send to stuck"
wait_for "stall: in its handler"
kill -TERM "$pid"
wait_for "SIGTERM: draining every pool"
kill -TERM "$pid"
wait "$pid"
rc=$?
pid=
[ "$rc" = 3 ] || fail "shoald exited $rc, not 3, on a second SIGTERM while stuck"
wait_event 2
sleep 0.2
stop_listener
want="READY=1|STATUS=generation 1: 1 pool running
STOPPING=1|STATUS=stopping (SIGTERM): draining 1 pool within 30000 ms"
[ "$(events)" = "$want" ] || fail "exit 3: the datagrams were: $(events)"
echo "ok: exit 3 still says STOPPING=1"

# ---- 5. a notify socket that is not there: said once, shoald runs on -----------
header() {
    cat <<YAML
runtime: { threads: 1, control: ctl.sock }
plugins:
  echo: $plugins/echo/echo.so
pools:
YAML
}
write "  api: { worker: echo.echo, size: 1 }"
notified "$tmp/nobody.sock"
wait_for "error systemd: cannot send to the notify socket $tmp/nobody.sock: No such file or directory (systemd does not hear READY=1, reloads or the watchdog)"
kill -HUP "$pid" # more messages to send, no more lines
wait_for "reload: generation 2"
sleep 1.2
[ "$(count 'cannot send to the notify socket')" = 1 ] ||
    fail "$(count 'cannot send to the notify socket') lines about the missing socket"
stop_host 0
echo "ok: a notify socket that is not there is said once"

# ---- 6. a reload that waits for a slow member still pets the watchdog ----------
# Two dispatcher threads: a checkout pool added by a reload whose member
# connects in 3 s (past WATCHDOG_USEC 2 s) holds one of them, the other
# handles the heartbeats, and the host thread, waiting for the member,
# pets the watchdog as its main loop would (there was no WATCHDOG=1 for
# the whole wait, and systemd would have killed shoald mid-reload).
header() {
    cat <<YAML
runtime: { threads: 2, control: ctl.sock }
plugins:
  echo: $plugins/echo/echo.so
  conn: $plugins/conn/conn.so
pools:
  api: { worker: echo.echo, size: 1 }
YAML
}
write ""
listen "$tmp/notify6.sock"
notified "$tmp/notify6.sock" 2000000
wait_for "running $tmp/s.yaml: 1 pool on 2 threads,"
wait_event 1
sleep 1
write "  db: { kind: checkout, member: conn.conn, init: 1, max: 1, args: { connect: 3s } }"
from=$(pets) # the last WATCHDOG=1 before the reload, and every one after
t0=$(now_ms)
"$shoalctl" --timeout 20000 reload > /dev/null || fail "the reload adding db: exit $?"
t1=$(now_ms)
[ $((t1 - t0)) -ge 2900 ] || fail "the reload took $((t1 - t0)) ms: the 3 s connect was not waited for"
sleep 0.6
gap=$(max_gap "$from")
[ "$gap" -lt 1500000 ] || fail "$gap us without WATCHDOG=1 while a reload waited $((t1 - t0)) ms for a member"
stop_host 0
stop_listener
echo "ok: a reload that waited $((t1 - t0)) ms for a member: at most $gap us between WATCHDOG=1"

# ---- 7. a diff whose plugin hangs pets the watchdog meanwhile ------------------
# The host thread waits up to 10 s on a new plugin's ELF constructors (their
# trial in a child) and on its fini (a diff releases what it loaded): the
# dispatcher is free and handles the heartbeats, so the watchdog goes on,
# as while a reload waits for init (6). There was no WATCHDOG=1 for the
# whole wait: 10 s, and systemd (WatchdogSec=10s) killed shoald for a diff.
fixtures=$build/fixtures
header() {
    cat <<YAML
runtime: { threads: 1, max_extra_threads: 0, control: ctl.sock }
plugins:
  echo: $plugins/echo/echo.so
pools:
  api: { worker: echo.echo, size: 1 }
YAML
}
write ""
printf 'plugins:\n  h: %s/ctor_hangs.so\npools: {}\n' "$fixtures" > "$tmp/ctor.yaml"
printf 'plugins:\n  h: %s/fini_hangs.so\npools: {}\n' "$fixtures" > "$tmp/fini.yaml"
listen "$tmp/notify7.sock"
export SHOAL_FIXTURE_INIT_GO=$tmp/fini.go # fini_hangs' fini returns once it exists
notified "$tmp/notify7.sock" 2000000
unset SHOAL_FIXTURE_INIT_GO
wait_for "running $tmp/s.yaml: 1 pool on 1 thread,"
wait_event 1
sleep 1
from=$(pets)
t0=$(now_ms)
out=$("$shoalctl" --timeout 30000 diff "$tmp/ctor.yaml" 2>&1); rc=$?
t1=$(now_ms)
want="shoalctl: $tmp/ctor.yaml:2:6: plugins.h: $fixtures/ctor_hangs.so: plugin refused: its ELF constructors did not return within 10000 ms when tried in a child process (killed)"
[ $rc -eq 1 ] && [ "$out" = "$want" ] || fail "diff of a plugin whose constructor hangs: exit $rc ($out)
want: $want"
sleep 0.6
gap=$(max_gap "$from")
[ "$gap" -lt 1500000 ] || fail "$gap us without WATCHDOG=1 while a diff waited $((t1 - t0)) ms for a constructor"
echo "ok: a diff that waited $((t1 - t0)) ms for a hung constructor: at most $gap us between WATCHDOG=1"
# fini: held until fini.go, made 3 s in (past WATCHDOG_USEC)
(sleep 3; touch "$tmp/fini.go") &
from=$(pets)
t0=$(now_ms)
out=$("$shoalctl" --timeout 30000 diff "$tmp/fini.yaml" 2>&1); rc=$?
[ $rc -eq 0 ] && [ "$out" = "generation 1 -> 2: remove api (it drains)" ] ||
    fail "diff of a plugin whose fini waits: exit $rc ($out)"
[ -e "$tmp/fini.go" ] && fail "the diff was answered only after its fini"
for _ in $(seq 1 500); do [ -e "$tmp/fini.go.entered" ] && break; sleep 0.01; done
[ -e "$tmp/fini.go.entered" ] || fail "fini never ran"
"$shoalctl" status | grep -q "^diffing $tmp/fini.yaml for [0-9]* ms: answered; releasing the plugins it loaded\$" ||
    fail "status during the diff's fini: $("$shoalctl" status)"
for _ in $(seq 1 1000); do "$shoalctl" status | grep -q '^diffing' || break; sleep 0.01; done
t1=$(now_ms)
[ -e "$tmp/fini.go" ] || fail "the diff ended before its fini returned"
sleep 0.6
gap=$(max_gap "$from")
[ "$gap" -lt 1500000 ] || fail "$gap us without WATCHDOG=1 while a diff waited $((t1 - t0)) ms for a fini"
[ "$(count 'not petting the watchdog')" = 0 ] || fail "the watchdog was said stuck"
stop_host 0
stop_listener
echo "ok: a diff that waited $((t1 - t0)) ms for a fini: at most $gap us between WATCHDOG=1"

# ---- 8. a long start says what it waits for ------------------------------------
header() {
    cat <<YAML
runtime: { control: ctl.sock }
plugins:
  echo: $plugins/echo/echo.so
  conn: $plugins/conn/conn.so
pools:
  api: { worker: echo.echo, size: 1 }
YAML
}
write "  slow: { worker: conn.conn, size: 1, args: { connect: 2500ms } }"
listen "$tmp/notify8.sock"
notified "$tmp/notify8.sock"
wait_for "running $tmp/s.yaml: 2 pools"
wait_event 1
stop_host 0
wait_event 2
sleep 0.2
stop_listener
want="STATUS=starting generation 1: starting pool slow, 2 of 2 (its first workers run init)
READY=1|STATUS=generation 1: 2 pools running
STOPPING=1|STATUS=stopping (SIGTERM): draining 2 pools within 10000 ms"
got=$(all_events)
[ "$got" = "$want" ] || fail "the datagrams of a long start were:
$got
---- wanted:
$want"
echo "ok: a 2.5 s start said what it waited for"
# A stop during that start: STOPPING=1 (it was never sent), no more
# STATUS=starting after it.
listen "$tmp/notify9.sock"
notified "$tmp/notify9.sock"
for _ in $(seq 1 500); do [ "$(all_events | wc -l)" -ge 1 ] && break; sleep 0.01; done
"$shoalctl" stop > /dev/null || fail "shoalctl stop during the start: exit $?"
wait "$pid"
rc=$?
pid=
[ "$rc" = 0 ] || fail "shoald exited $rc after a stop during the start"
sleep 0.2
stop_listener
want="STATUS=starting generation 1: starting pool slow, 2 of 2 (its first workers run init)
STOPPING=1|STATUS=stopping (shoalctl stop): draining 1 pool within 10000 ms"
got=$(all_events)
[ "$got" = "$want" ] || fail "the datagrams of a start given up were:
$got
---- wanted:
$want"
echo "ok: a start given up said STOPPING=1"
