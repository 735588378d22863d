# lib.sh - what the shoald integration tests share. Source it with the build
# directory as $1; it sets shoald, shoalctl, plugins, tmp (removed at exit),
# log (shoald's stderr), pid (set it to shoald's; it is killed at exit), and
# defines fail, count, wait_for, write (with the test's `header`), gen,
# wait_done, settled_ledger, stop_host, stopped_3, stopped_leaving, expect_out,
# expect_out_ms, open_n, start_until,
# loadgen, field, alive and segv_ours.
set -u
build=$(cd "$1" && pwd)
shoald=$build/bin/shoald
shoalctl=$build/bin/shoalctl
plugins=$build/plugins
tmp=$(mktemp -d)
pid=
log=$tmp/log
cleanup() {
    [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
# fail MESSAGE: says what failed, shows the end of shoald's log, exits 1
fail() {
    echo "FAIL: $*"
    echo "---- shoald's log (last 40 lines)"
    tail -40 "$log" 2>/dev/null
    exit 1
}
# count PATTERN: lines of the log matching it
count() { grep -c -- "$1" "$log" 2>/dev/null || true; }
# wait_done PATTERN [N]: as wait_for, for an epic's end: up to a minute
# (an epic of 4 * 10^6 takes 20 s under TSan on a busy machine)
wait_done() { wait_for "$1" "${2:-1}" 6000; }
# wait_for PATTERN [N [TRIES]]: until the log has N (default 1) such lines,
# looking TRIES times (default 1000: about 10 s). A test empties the log
# (: > "$log") before it starts a shoald: the child's own 2> "$log" empties
# it only once the child runs, and a wait_for before that matched the last
# shoald's lines (its start line: signals then came before the new one
# blocked them, test_shoald).
wait_for() {
    local n=${2:-1}
    for _ in $(seq 1 "${3:-1000}"); do
        [ "$(count "$1")" -ge "$n" ] && return 0
        sleep 0.01
    done
    fail "no ${n}x '$1' in the log"
}
# write TEXT: the config $tmp/s.yaml is the test's `header` + TEXT,
# replaced atomically (a rename), as an operator's editor would
write() {
    { header; printf '%s\n' "$1"; } > "$tmp/s.yaml.new"
    mv "$tmp/s.yaml.new" "$tmp/s.yaml"
}
# gen: the running config generation
gen() { "$shoalctl" status | sed -n 's/^generation //p'; }
# settled_ledger: until the total ledger has nothing in flight (5 s at
# most); prints its line
settled_ledger() {
    for _ in $(seq 1 500); do
        "$shoalctl" status | grep -q '^ledger total: .* + in flight 0;' && break
        sleep 0.01
    done
    "$shoalctl" status | grep '^ledger total: '
}
# stop_host [RC [SIGNAL]]: SIGNAL (default TERM) to shoald ($pid), waits
# for it; fails unless it exits RC (default 0)
stop_host() {
    local want=${1:-0} sig=${2:-TERM} rc
    kill -"$sig" "$pid"
    wait "$pid"
    rc=$?
    pid=
    [ "$rc" = "$want" ] || fail "shoald exited $rc, not $want, on SIG$sig"
}
# stopped_3 WHAT: shoald (stopped at t0) ends with exit 3 within 5 s (a
# 30 s init left running, not waited for). Sets rc and t1.
stopped_3() {
    wait "$pid"
    rc=$?
    t1=$(now_ms)
    pid=
    [ $rc -eq 3 ] || fail "$1: shoald exited $rc, not 3"
    [ $((t1 - t0)) -lt 5000 ] || fail "$1: shoald took $((t1 - t0)) ms to stop: it waited for the 30 s init"
}
# stopped_leaving WHAT NAME WHEN: stopped_3, and the log names the init of
# NAME (pool/behaviour) it left running outside every pool at WHEN (start,
# shutdown).
stopped_leaving() {
    stopped_3 "$1"
    grep -Eq "> $2: $3: still in its handler after [0-9.]+ s \(.*\): not waited for" "$log" ||
        fail "$1: the init left running is not named: $(grep -E 'handler|drain|stopped' "$log")"
}
# expect_out WHAT RC WANT CMD...: CMD exits RC and prints exactly WANT
expect_out() {
    local what=$1 want_rc=$2 want=$3 out rc
    shift 3
    out=$("$@" 2>&1)
    rc=$?
    [ "$rc" = "$want_rc" ] && [ "$out" = "$want" ] ||
        fail "$what: exit $rc, printed:
$out
want exit $want_rc:
$want"
}
# expect_out_ms WHAT RC WANT CMD...: expect_out, with each "for T ms" CMD
# printed read as "for N ms" (how long shoald had waited when it answered)
expect_out_ms() {
    local what=$1 want_rc=$2 want=$3
    shift 3
    expect_out "$what" "$want_rc" "$want" \
        bash -c '"$@" 2>&1 | sed -E "s/for [0-9]+ ms/for N ms/g"; exit ${PIPESTATUS[0]}' _ "$@"
}
# open_n N: until status counts N open control connections (its own
# included), 5 s at most
open_n() {
    for _ in $(seq 1 500); do
        [ "$("$shoalctl" status | sed -n 's/^control \([0-9]*\) open.*/\1/p')" -ge "$1" ] && return 0
        sleep 0.01
    done
    fail "never $1 control connections open: $("$shoalctl" status)"
}
# loadgen POOL N: the N-th uint64 of a loadgen source's stats (1 sent,
# 2 refused_full, 3 refused_busy, 4 noproc, 12 done: plugins/loadgen/
# loadgen.h). The call goes through the source's pool and is counted there.
loadgen() { "$shoalctl" call --raw "$1" stats | od -An -tu8 -w8 -v | sed -n "${2}p" | tr -d ' '; }
# start_until PATTERN: shoald on $tmp/s.yaml (its log emptied first, pid
# set) until the log has PATTERN
start_until() {
    : > "$log"
    "$shoald" --no-table "$tmp/s.yaml" 2> "$log" &
    pid=$!
    wait_for "$1"
}
# now_ms: the wall clock in milliseconds (for timing a step)
now_ms() { echo $(($(date +%s%N) / 1000000)); }
# field POOL KEY: the first number KEY has in POOL's inspection
field() { "$shoalctl" inspect "$1" | grep -o "\"$2\":[0-9]*" | head -1 | cut -d: -f2; }
# alive: fails unless shoald ($pid) still runs
alive() { kill -0 "$pid" 2> /dev/null || fail "shoald died"; }
# until_exists FILE WHAT: until FILE exists (5 s at most), e.g. the
# ".entered" a fixture's hook makes (init_hangs.c); else fails "WHAT"
until_exists() {
    for _ in $(seq 1 500); do [ -e "$1" ] && return 0; sleep 0.01; done
    fail "$2"
}
# fini_after_drain GO WHAT: shoald, stopped by a SIGTERM, drains while the
# fini of a plugin WHAT loaded (fini_hangs.so, waiting for GO) has not run
# yet; the fini then runs, and shoald exits 0 once GO lets it return
fini_after_drain() {
    local rc
    wait_for "SIGTERM: draining every pool"
    wait_for "drained in "
    [ -e "$1" ] && fail "the fini's file exists already"
    alive # the fini waits for GO, after the drain
    until_exists "$1.entered" "the fini of the plugin $2 loaded never ran"
    touch "$1"
    wait "$pid"
    rc=$?
    pid=
    [ $rc = 0 ] || fail "shoald exited $rc, not 0, on a SIGTERM during $2"
}
# segv_ours SANITIZER: under address or thread, a worker's SIGSEGV is
# shoal's to report (its fault handler), not the sanitizer's (test_faults.sh)
segv_ours() {
    case ${1:-} in
    address) export ASAN_OPTIONS="${ASAN_OPTIONS:-}:handle_segv=1:allow_user_segv_handler=1" ;;
    thread) export TSAN_OPTIONS="${TSAN_OPTIONS:-} handle_segv=1 allow_user_segv_handler=1" ;;
    esac
}
