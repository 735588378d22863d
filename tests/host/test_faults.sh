#!/bin/bash
# test_faults.sh BUILD_DIR [SANITIZER] - a plugin that kills shoald is
# reported before the process dies (runtime/fault.h). shoald runs a pool
# `bad` of one fault.fault worker (it faults on its 3rd message) beside a
# healthy echo pool, is reloaded once (generation 2), and then:
#   - segv (text log): exit status 139; exactly one fatal line naming the
#     actor, pool, behaviour, plugin file and version, SIGSEGV and gen=2;
#     a backtrace through fault.so; the control socket removed;
#   - abort: the same with 134 and SIGABRT;
#   - overflow: the worker's stack overflows; reported all the same (the
#     handler runs on the thread's alternate stack);
#   - segv with log.format json: the line and the backtrace parse as JSON
#     with those fields, and every other line of the log still does;
#   - kill -SEGV from outside: reported without an actor, with its sender;
#   - shoal-plugin-check on the same plugin: the same report, on stderr.
. "$(dirname "$0")/lib.sh" "$1"
sanitizer=${2:-}
fault=$build/fixtures/fault.so
export SHOAL_SOCKET=$tmp/ctl.sock

# The sanitizers install deadly-signal handlers of their own before main
# (ASan: SIGSEGV, SIGBUS, SIGFPE; TSan: SIGSEGV), which report and exit.
# With handle_*=1, their default, they "allow the user to set his own": our
# sigaction, made later, replaces theirs, so in these builds the report is
# ours, the process dies of the signal (139, 134) as in the normal build, and
# the test checks exactly the same things, plus that no sanitizer spoke:
# TSan watches the handler for async-signal-unsafe calls
# (report_signal_unsafe) and CI halts on its first report. The defaults are
# pinned here because handle_*=2 (or allow_user_segv_handler=0) in an
# inherited environment would make the sanitizer keep its own handler: then
# it, not shoald, would report, and this test would rightly fail.
# ASan's abort_on_error and LeakSanitizer never act in a process that dies
# of a signal. In the ASan+UBSan build the fixture's NULL store is exempt
# from UBSan's null check (fault.c), so it is a real SIGSEGV there too.
case $sanitizer in
address) san_env=(ASAN_OPTIONS="${ASAN_OPTIONS:-}:handle_segv=1:handle_sigbus=1:handle_sigfpe=1:allow_user_segv_handler=1") ;;
thread) san_env=(TSAN_OPTIONS="${TSAN_OPTIONS:-} handle_segv=1 allow_user_segv_handler=1") ;;
*) san_env=() ;;
esac

# config MODE FORMAT GOOD_SIZE: the test config
config() {
    cat > "$tmp/f.yaml.new" <<YAML
runtime: { control: ctl.sock, threads: 2 }
log: { level: info, format: $2 }
plugins:
  fault: $fault
  echo: $plugins/echo/echo.so
pools:
  bad:
    worker: fault.fault
    size: 1
    args: { mode: $1, every: 3, announce: true }
  good:
    worker: echo.echo
    size: $3
YAML
    mv "$tmp/f.yaml.new" "$tmp/f.yaml"
}

# start MODE FORMAT: shoald on the config, reloaded once (generation 2), the
# good pool answering; sets pid and worker (the bad worker's <slot.gen>).
start() {
    : > "$log"
    config "$1" "$2" 2
    : > "$log"
    env "${san_env[@]}" "$shoald" --no-table "$tmp/f.yaml" 2> "$log" &
    pid=$!
    wait_for "running $tmp/f.yaml: 2 pools"
    config "$1" "$2" 3
    kill -HUP "$pid"
    wait_for "reload: generation 2 from $tmp/f.yaml: good size 2 -> 3"
    [ "$("$shoalctl" call good ping)" = ping ] || fail "the good pool does not answer"
    if [ "$2" = json ]; then
        worker=$(grep -o '"pid":"[0-9]*\.[0-9]*","actor":"bad/fault","msg":"fault: ready' "$log" |
            sed 's/"pid":"\([0-9.]*\)".*/<\1>/')
    else
        worker=$(grep -o '<[0-9]*\.[0-9]*> bad/fault: fault: ready' "$log" | cut -d' ' -f1)
    fi
    [ -n "$worker" ] || fail "no 'fault: ready' line from the bad worker"
    [ -S "$SHOAL_SOCKET" ] || fail "no control socket"
}

# ends: waits (30 s at most) for shoald to die; sets status.
ends() {
    for _ in $(seq 1 3000); do
        kill -0 "$pid" 2> /dev/null || break
        sleep 0.01
    done
    kill -0 "$pid" 2> /dev/null && fail "shoald still runs 30 s after the fault"
    wait "$pid"
    status=$?
    pid=
}

# crash MODE FORMAT: start, then three messages to bad (the 3rd faults).
crash() {
    start "$1" "$2"
    "$shoalctl" send bad m1 || fail "send bad m1: exit $?"
    "$shoalctl" send bad m2 || fail "send bad m2: exit $?"
    # The worker may kill shoald before the host thread answers this one.
    "$shoalctl" send bad m3 2> /dev/null
    ends
}

# no_sanitizer_report: the log has no sanitizer's words in it.
no_sanitizer_report() {
    [ "$(grep -cE 'Sanitizer|runtime error' "$log")" -eq 0 ] || fail "a sanitizer reported"
}

# check_text STATUS CAUSE: the fatal line of a text log, its backtrace, the
# socket. CAUSE: the words after the signal's name, as a glob.
check_text() {
    local want_status=$1 sig=$2 cause=$3
    [ "$status" -eq "$want_status" ] || fail "exit status $status, not $want_status"
    [ "$(count 'fatal signal')" -eq 1 ] || fail "$(count 'fatal signal') fatal lines, not 1"
    no_sanitizer_report
    local line ts rest
    line=$(grep 'fatal signal' "$log")
    ts=${line%% *}
    rest=${line#* }
    [[ $ts =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$ ]] ||
        fail "timestamp '$ts'"
    # shellcheck disable=SC2053 # $cause is a glob on purpose
    [[ $rest == "gen=2 error $worker bad/fault: fatal signal $sig "$cause" in pool bad, behaviour fault, plugin fault 1.0.0 ($fault), on dispatcher thread "[01]"; the process ends" ]] ||
        fail "the fatal line: $line"
    grep -A1 'fatal signal' "$log" | tail -1 | grep -qx '  backtrace:' ||
        fail "no 'backtrace:' line after the fatal line"
    [ "$(grep -c '^    #[0-9]' "$log")" -ge 1 ] || fail "no frame in the backtrace"
    grep -q "^    #[0-9]* $fault(+0x[0-9a-f]*)" "$log" || fail "no frame in fault.so"
    [ ! -e "$SHOAL_SOCKET" ] || fail "the control socket was left behind"
}

# ---- SIGSEGV, SIGABRT, a stack overflow: text -----------------------------------
crash segv text
check_text 139 SIGSEGV "(address 0x0, not mapped)"
# The faulting instruction is frame #0: in the plugin.
grep -A2 'fatal signal' "$log" | tail -1 | grep -q "^    #0 $fault(+0x" || fail "frame #0 is not in fault.so"

crash abort text
check_text 134 SIGABRT "(raised by this process)"

crash overflow text
check_text 139 SIGSEGV "(address 0x*, *)"

# ---- JSON ------------------------------------------------------------------------
crash segv json
[ "$status" -eq 139 ] || fail "json: exit status $status, not 139"
no_sanitizer_report
[ ! -e "$SHOAL_SOCKET" ] || fail "json: the control socket was left behind"
python3 - "$log" "$worker" "$fault" <<'PY' || fail "json: the report"
import json, re, sys
log, worker, fault = sys.argv[1:]
lines = [json.loads(l) for l in open(log)]  # every line is one JSON object
fatal = [l for l in lines if l["msg"].startswith("fatal signal")]
assert len(fatal) == 1, f"{len(fatal)} fatal lines"
f = fatal[0]
assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", f["ts"]), f["ts"]
want = {"gen": 2, "level": "error", "pid": worker.strip("<>"), "actor": "bad/fault",
        "signal": "SIGSEGV", "pool": "bad", "behaviour": "fault",
        "origin": f"plugin fault 1.0.0 ({fault})"}
for k, v in want.items():
    assert f[k] == v, f"{k}: {f[k]!r}, not {v!r}"
assert re.fullmatch(r"dispatcher thread [01]", f["thread"]), f["thread"]
assert f["msg"] == (f"fatal signal SIGSEGV (address 0x0, not mapped) in pool bad, behaviour "
                    f"fault, plugin fault 1.0.0 ({fault}), on {f['thread']}; the process ends"), f["msg"]
bt = [l for l in lines if l["msg"] == "backtrace"]
assert len(bt) == 1, f"{len(bt)} backtrace lines"
b = bt[0]
for k in ("gen", "level", "pid", "actor"):
    assert b[k] == f[k], k
assert len(b["backtrace"]) >= 1, "no frames"
assert b["backtrace"][0].startswith(fault + "(+0x"), b["backtrace"][0]
PY

# ---- a signal from outside, on no actor ------------------------------------------
start segv text
kill -SEGV "$pid"
ends
[ "$status" -eq 139 ] || fail "kill -SEGV: exit status $status, not 139"
[ "$(count 'fatal signal')" -eq 1 ] || fail "kill -SEGV: $(count 'fatal signal') fatal lines"
no_sanitizer_report
line=$(grep 'fatal signal' "$log")
rest=${line#* }
[[ $rest =~ ^"gen=2 error fatal signal SIGSEGV (sent by process $BASHPID)"( in runtime code, not in any actor,)?" on "(the host thread|the timer thread|dispatcher thread [01])"; the process ends"$ ]] ||
    fail "kill -SEGV: the fatal line: $line"
[ ! -e "$SHOAL_SOCKET" ] || fail "kill -SEGV: the control socket was left behind"

# ---- shoal-plugin-check gives a plugin's author the same report -----------------
env "${san_env[@]}" "$build/bin/shoal-plugin-check" --args '{mode: segv, every: 2}' "$fault" \
    > "$tmp/check.out" 2> "$log"
status=$?
[ "$status" -eq 139 ] || fail "shoal-plugin-check: exit status $status, not 139"
no_sanitizer_report
# Its steps so far are on stdout (the crash may come before the messages' line).
grep -q '^    ok   spawn$' "$tmp/check.out" || fail "shoal-plugin-check: $(cat "$tmp/check.out")"
[ "$(count 'fatal signal')" -eq 1 ] || fail "shoal-plugin-check: $(count 'fatal signal') fatal lines"
line=$(grep 'fatal signal' "$log")
[[ ${line#* } =~ ^"gen=0 error <"[0-9]+\.[0-9]+"> fault: fatal signal SIGSEGV (address 0x0, not mapped) in behaviour fault (not a pool's worker), plugin fault 1.0.0 ($fault), on dispatcher thread "[0-9]+"; the process ends"$ ]] ||
    fail "shoal-plugin-check: the fatal line: $line"
grep -q "^    #0 $fault(+0x" "$log" || fail "shoal-plugin-check: frame #0 is not in fault.so"

echo "test_faults: ok"
