#!/bin/bash
# test_stuck_output.sh BUILD_DIR - a reader of shoald's stdout or stderr that
# stops reading (a pager left on its first page, a terminal stopped with
# Ctrl-S, a hung log shipper) holds nothing: each stream goes to a FIFO
# whose reader (python3) filled it and does not read until told.
#
#   1. stdout stuck: the table is skipped, said once; status answers, a
#      SIGHUP reloads; once the reader reads, the table comes back (said
#      with the count of blocks skipped) and SIGTERM exits 0.
#   2. stderr stuck: status answers, `shoalctl reload` reloads, SIGTERM
#      drains; once the reader reads, every log line reaches it, whole and
#      in order, and shoald exits 0.
#   3. stderr stuck and a plugin faults: the crash reporter waits for the
#      reader only so long, and shoald dies of the signal (exit 139).
#   4. stderr stuck under an isolated pool whose workers log every message:
#      the child process drops what it cannot hold, and once the reader
#      reads it says how many lines it dropped, as shoald does.
#
# SANITIZER (the second argument, as CMake's SHOAL_SANITIZE) lets the
# sanitizer leave SIGSEGV to shoald's reporter, as in test_faults. Its
# reports go to files ($tmp/san.PID, shown by san_check), not to the stuck
# stderr, and the symbolizer it starts writes its own complaints (it cannot
# read a plugin loaded from a memfd) to /dev/null: either would otherwise
# wait on the stuck stderr with the report, and shoald with it.
. "$(dirname "$0")/lib.sh" "$1"
san_env=()
if [ -n "${2:-}" ]; then
    to_file="log_path=$tmp/san:symbolize=0" # no symbolizer: addresses only
    if sym=$(command -v llvm-symbolizer-14 || command -v llvm-symbolizer); then
        printf '#!/bin/sh\nexec %s "$@" 2> /dev/null\n' "$sym" > "$tmp/llvm-symbolizer"
        chmod +x "$tmp/llvm-symbolizer"
        to_file="log_path=$tmp/san:external_symbolizer_path=$tmp/llvm-symbolizer"
    fi
fi
case ${2:-} in
address) san_env=(ASAN_OPTIONS="${ASAN_OPTIONS:-}:$to_file"
    UBSAN_OPTIONS="${UBSAN_OPTIONS:-}:$to_file") ;;
thread) san_env=(TSAN_OPTIONS="${TSAN_OPTIONS:-} ${to_file/:/ }") ;;
esac
# san_segv: san_env, and the sanitizer leaves SIGSEGV to shoald
san_segv=("${san_env[@]}")
case ${2:-} in
address) san_segv[0]+=":handle_segv=1:allow_user_segv_handler=1" ;;
thread) san_segv[0]+=" handle_segv=1 allow_user_segv_handler=1" ;;
esac
# fail, as lib.sh's, shows the sanitizer's reports first
eval "lib_$(declare -f fail)"
fail() {
    local f
    for f in "$tmp"/san.*; do
        [ -e "$f" ] && { echo "---- $f"; cat "$f"; }
    done
    lib_fail "$@"
}
# san_check: fails when the sanitizer reported
san_check() {
    local f
    for f in "$tmp"/san.*; do
        [ -e "$f" ] && fail "the sanitizer reported (above)"
    done
    return 0
}
export SHOAL_SOCKET=$tmp/ctl.sock
command -v python3 > /dev/null || fail "python3 is needed for the FIFO's reader"

cat > "$tmp/s.yaml" <<YAML
runtime: { control: ctl.sock, threads: 2 }
shutdown: { drain: 3s }
plugins:
  echo: $plugins/echo/echo.so
pools:
  api:
    worker: echo.echo
    size: 2
YAML

# stuck_reader FIFO GO OUT: opens FIFO for reading, fills it, reads nothing
# until the file GO exists, then copies all it reads (but the filling) to
# OUT until the end of file. Returns once FIFO is full.
stuck_reader() {
    rm -f "$1" "$2" "$3" "$3.full"
    mkfifo "$1"
    python3 - "$1" "$2" "$3" <<'PY' &
import fcntl, os, sys, time
fifo, go, out = sys.argv[1:]
r = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
w = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
line = b"f" * 4095 + b"\n"
try:
    while True:
        os.write(w, line)
except BlockingIOError:
    pass
os.close(w)
open(out + ".full", "w").close()
while not os.path.exists(go):
    if not os.path.isdir(os.path.dirname(go)):  # the test ended (failed): so does its reader
        sys.exit(0)
    time.sleep(0.01)
fcntl.fcntl(r, fcntl.F_SETFL, 0)
with open(out, "wb", buffering=0) as f:
    while True:
        b = os.read(r, 65536)
        if not b:
            break
        f.write(b)
PY
    for _ in $(seq 1 500); do [ -e "$3.full" ] && return 0; sleep 0.01; done
    fail "the FIFO's reader did not fill it"
}

# ---- 1. stdout stuck -------------------------------------------------------
stuck_reader "$tmp/out.fifo" "$tmp/out.go" "$tmp/out.got"
: > "$log"
env "${san_env[@]}" "$shoald" "$tmp/s.yaml" > "$tmp/out.fifo" 2> "$log" &
pid=$!
wait_for "gen=1 info running $tmp/s.yaml: 1 pool "
wait_for "warn table: stdout is not read: no table until it is; shoald goes on"
out=$("$shoalctl" --timeout 2000 status) || fail "status with stdout stuck: exit $?"
echo "$out" | grep -q '^generation 1$' || fail "status with stdout stuck: $out"
kill -HUP $pid
wait_for "gen=2 info reload: generation 2 from $tmp/s.yaml: no change"
touch "$tmp/out.go"
wait_for "info table: stdout is read again ([0-9]* blocks\? skipped)"
[ "$(count "table: stdout is not read")" -eq 1 ] || fail "the skipped table said more than once"
for _ in $(seq 1 300); do
    grep -q '^shoald: generation 2, ' "$tmp/out.got" 2> /dev/null && break
    sleep 0.01
done
grep -q '^shoald: generation 2, ' "$tmp/out.got" || fail "no table after stdout was read again"
stop_host 0
san_check
echo "stdout stuck: table skipped, status, SIGHUP and SIGTERM went on"

# ---- 2. stderr stuck -------------------------------------------------------
stuck_reader "$tmp/err.fifo" "$tmp/err.go" "$tmp/err.got"
env "${san_env[@]}" "$shoald" --no-table "$tmp/s.yaml" > "$tmp/stdout" 2> "$tmp/err.fifo" &
pid=$!
for _ in $(seq 1 500); do "$shoalctl" --timeout 200 status > /dev/null 2>&1 && break; sleep 0.01; done
out=$("$shoalctl" --timeout 2000 status) || fail "status with stderr stuck: exit $?"
echo "$out" | grep -q '^generation 1$' || fail "status with stderr stuck: $out"
out=$("$shoalctl" --timeout 2000 reload) || fail "reload with stderr stuck: exit $?"
[ "$out" = "generation 2 (was 1)" ] || fail "reload with stderr stuck said: $out"
kill -TERM $pid
touch "$tmp/err.go"
wait $pid
rc=$?
pid=
[ $rc -eq 0 ] || fail "shoald with stderr stuck exited $rc on SIGTERM"
wait # the reader: shoald's end was its end of file
grep -v '^f*$' "$tmp/err.got" | sed 's/^[^ ]* //' > "$log"
want="gen=1 info pool api started: 2 workers, mailbox 64
gen=1 info running $tmp/s.yaml: 1 pool on 2 threads, control socket $tmp/ctl.sock
gen=2 info reload: generation 2 from $tmp/s.yaml: no change; ledger: accepted 0 = handled 0 + failed 0 + dropped 0 + in flight 0; refused 0
gen=2 info SIGTERM: draining every pool (at most 3000 ms)"
got=$(grep -v 'address space:\|drained in' "$log")
[ "$got" = "$want" ] || fail "the log that stderr's reader got:
$got"
[ "$(count '^gen=2 info drained in [0-9]* ms; 0 pools still busy, stopped$')" -eq 1 ] ||
    fail "no last log line"
san_check
echo "stderr stuck: status, reload and SIGTERM went on; every log line came out in order"

# ---- 3. stderr stuck, and a plugin faults ------------------------------------
cat > "$tmp/f.yaml" <<YAML
runtime: { control: ctl.sock, threads: 2 }
plugins:
  fault: $build/fixtures/fault.so
pools:
  bad:
    worker: fault.fault
    size: 1
    args: { mode: segv, every: 1 }
YAML
stuck_reader "$tmp/crash.fifo" "$tmp/crash.go" "$tmp/crash.got"
env "${san_segv[@]}" "$shoald" --no-table "$tmp/f.yaml" > /dev/null 2> "$tmp/crash.fifo" &
pid=$!
for _ in $(seq 1 500); do "$shoalctl" --timeout 200 status > /dev/null 2>&1 && break; sleep 0.01; done
"$shoalctl" --timeout 2000 send bad boom || fail "send to the faulting pool: exit $?"
for _ in $(seq 1 3000); do
    kill -0 $pid 2> /dev/null || break
    sleep 0.01
done
kill -0 $pid 2> /dev/null && fail "shoald still runs 30 s after its plugin faulted (stderr stuck)"
wait $pid
rc=$?
pid=
[ $rc -eq 139 ] || fail "shoald exited $rc after the fault, not 139 (SIGSEGV)"
touch "$tmp/crash.go"
wait
san_check
echo "stderr stuck and a plugin faulted: shoald died of SIGSEGV"

# ---- 4. stderr stuck, an isolated pool that logs a line a message -----------
cat > "$tmp/i.yaml" <<YAML
runtime: { control: ctl.sock, threads: 2 }
shutdown: { drain: 3s }
plugins:
  fault: $build/fixtures/fault.so
  loadgen: $plugins/loadgen/loadgen.so
pools:
  chat:
    worker: fault.fault
    size: 1
    mailbox: 1000
    isolation: process
    args: { chatter: true }
  feed:
    worker: loadgen.loadgen
    size: 1
    args: { target: chat, rate: 0, count: 30000 }
YAML
stuck_reader "$tmp/iso.fifo" "$tmp/iso.go" "$tmp/iso.got"
env "${san_env[@]}" "$shoald" --no-table "$tmp/i.yaml" > /dev/null 2> "$tmp/iso.fifo" &
pid=$!
for _ in $(seq 1 500); do "$shoalctl" --timeout 200 status > /dev/null 2>&1 && break; sleep 0.01; done
# 30,000 lines of ~100 bytes: past the child's 1 MiB.
handled=0
for _ in $(seq 1 3000); do
    handled=$("$shoalctl" status | sed -n 's/^pool chat .* forwarded \([0-9]*\)$/\1/p')
    [ "${handled:-0}" -ge 30000 ] && break
    sleep 0.01
done
[ "${handled:-0}" -ge 30000 ] || fail "chat handled ${handled:-0} of 30000 in 30 s"
touch "$tmp/iso.go"
for _ in $(seq 1 500); do
    grep -q "log: [0-9]* lines dropped while stderr was not read" "$tmp/iso.got" 2> /dev/null && break
    sleep 0.01
done
# "forwarded" counts what went to the child: its last lines may still come.
for _ in $(seq 1 500); do
    line=$(grep "log: [0-9]* lines dropped while stderr was not read" "$tmp/iso.got")
    n=$(echo "$line" | sed -n 's/.*log: \([0-9]*\) lines dropped.*/\1/p' | head -1)
    kept=$(grep -c "fault: a message of" "$tmp/iso.got")
    [ "$((${n:-0} + kept))" -ge 30000 ] && break
    sleep 0.01
done
[ "$(echo "$line" | grep -c .)" -eq 1 ] || fail "not one drop line: $line"
# Every line either came whole or was counted: shoald and its child write
# to one FIFO, a line a write, so neither cuts the other's lines (before,
# a line cut by shoald's was missing from both counts).
[ "$((n + kept))" -eq 30000 ] || fail "dropped $n + kept $kept lines, not 30000"
bad=$(grep -v '^f*$' "$tmp/iso.got" | grep -cv '^20[0-9-]*T[0-9:.]*Z gen=[0-9]* [a-z]* ')
[ "$bad" -eq 0 ] || fail "$bad lines cut or mixed: $(grep -v '^f*$' "$tmp/iso.got" |
    grep -v '^20[0-9-]*T[0-9:.]*Z gen=[0-9]* [a-z]* ' | head -3)"
[ "$n" -gt 0 ] || fail "nothing dropped"
kill -TERM $pid
wait $pid
rc=$?
pid=
[ $rc -eq 0 ] || fail "shoald exited $rc on SIGTERM"
wait
san_check
echo "stderr stuck under an isolated pool: its child said it dropped $n lines (kept $kept)"
echo "PASS"
