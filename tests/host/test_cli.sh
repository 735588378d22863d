#!/bin/bash
# test_cli.sh BUILD_DIR - the command lines of shoald, shoalctl,
# shoal-plugin-check and shoal-bench (when built), as an operator meets them:
#   1. --version: one line, NAME VERSION (ABI MAJOR.MINOR, commit SHA), exit 0;
#      --help and -h: usage on stdout, exit 0; an unknown option is named on
#      stderr with a hint to --help, exit 2; a missing value is named.
#   2. shoalctl without a server: help [CMD] and CMD --help print usage and
#      never connect; an unknown command, status with extra words, a bad N
#      or --type, bounds that cannot be (5..2, 2.., 0..0) are usage errors
#      (2); the socket tried (--socket,
#      $SHOAL_SOCKET, ./shoal.sock, /run/shoal/shoal.sock) is named.
#   3. With shoald running at --control (overriding runtime.control): call
#      prints text as text and binary escaped, --raw byte-exact, --type picks
#      the message type (the runtime's own, 0xFFFE0000 .. 0xFFFEFFFF, refused
#      for send and call); scale says when it clamped, scale MIN..MAX sets
#      the bounds (a max past the start max refused); diff without FILE diffs
#      the host's own file; shoald --check --diff finds the host at --control,
#      else at FILE's runtime.control (relative to FILE); a reload does not
#      complain that the socket differs from the file's.
. "$(dirname "$0")/lib.sh" "$1"
src=$(cd "$(dirname "$0")/../.." && pwd)
check=$build/bin/shoal-plugin-check
bench=$build/bin/shoal-bench

# run CMD...: runs it, stdout to $tmp/out, stderr to $tmp/err, status in $rc
run() {
    "$@" > "$tmp/out" 2> "$tmp/err"
    rc=$?
}
# expect RC OUT ERR: the last run's status, stdout and stderr, exactly
expect() {
    [ "$rc" = "$1" ] && [ "$(cat "$tmp/out")" = "$2" ] && [ "$(cat "$tmp/err")" = "$3" ] ||
        fail "$what: exit $rc (want $1); stdout: $(cat "$tmp/out"); stderr: $(cat "$tmp/err")"
}

# ---- 1. every program: --version, --help, an unknown option -------------------
version=$(sed -n 's/^project(shoal VERSION \([0-9.]*\) .*/\1/p' "$src/CMakeLists.txt")
major=$(sed -n 's/^#define SHOAL_ABI_MAJOR \([0-9]*\)$/\1/p' "$src/sdk/include/shoal/plugin.h")
minor=$(sed -n 's/^#define SHOAL_ABI_MINOR \([0-9]*\)$/\1/p' "$src/sdk/include/shoal/plugin.h")
[ -n "$version" ] && [ -n "$major" ] && [ -n "$minor" ] || fail "cannot read the version or the ABI"
# The commit the build read from git (cmake/GitCommit.cmake; the binaries
# are as old as it, HEAD may be newer): 7 hex digits, -dirty, or unknown.
sha=$(sed -n 's/^#define SHOAL_GIT_COMMIT "\(.*\)"$/\1/p' "$build/generated/shoal_commit.h")
[[ $sha =~ ^([0-9a-f]{7}(-dirty)?|unknown)$ ]] || fail "the build's commit: '$sha'"
if [ ! -e "$src/.git" ] && [ "$sha" != unknown ]; then
    fail "not a git checkout, yet the commit is $sha"
fi
progs=("$shoald" "$shoalctl" "$check" "$build/bin/shoal-demo")
firsts=("usage: shoald [--run-for DURATION] [--no-table] [--control SOCKET] FILE"
    "usage: shoalctl [--socket PATH] [--timeout MS] COMMAND [ARGS...]"
    "usage: shoal-plugin-check [--args YAML] [--messages N] [--timeout MS] FILE.so"
    "usage: shoal-demo [--seconds N] [--threads N] [--rate N] [--workers N]")
if [ -x "$bench" ]; then
    progs+=("$bench")
    firsts+=("usage: shoal-bench W1 N W | W2 P M | W3 A | W4 N [block|drop] | W5 N W [RATE]")
else
    echo "shoal-bench not built (SHOAL_BUILD_BENCH=OFF): its checks are skipped"
fi
for k in "${!progs[@]}"; do
    p=${progs[$k]}
    name=$(basename "$p")
    what="$name --version"
    run "$p" --version
    out=$(cat "$tmp/out")
    expect 0 "$name $version (ABI $major.$minor, commit $sha)" ""
    for h in --help -h; do
        what="$name $h"
        run "$p" $h
        [ "$rc" = 0 ] && [ "$(head -1 "$tmp/out")" = "${firsts[$k]}" ] && [ ! -s "$tmp/err" ] ||
            fail "$what: exit $rc; stdout: $(head -1 "$tmp/out"); stderr: $(cat "$tmp/err")"
    done
    what="$name --foo"
    run "$p" --foo
    expect 2 "" "$name: unknown option '--foo'
Try '$name --help'."
done

what="shoald --run-for without a duration"
run "$shoald" --no-table --run-for
expect 2 "" "shoald: --run-for needs a duration (e.g. 10s)
Try 'shoald --help'."
what="shoald --control without a path"
run "$shoald" x.yaml --control
expect 2 "" "shoald: --control needs a socket path
Try 'shoald --help'."
what="shoald with two files"
run "$shoald" a.yaml b.yaml
expect 2 "" "shoald: unexpected argument 'b.yaml' (one FILE only)
Try 'shoald --help'."
what="shoald without a file"
run "$shoald" --no-table
expect 2 "" "shoald: no FILE: name the config to run (shoald FILE)
Try 'shoald --help'."
what="shoal-plugin-check --messages without a number"
run "$check" x.so --messages
expect 2 "" "shoal-plugin-check: --messages needs a value
Try 'shoal-plugin-check --help'."
# --args is checked against the behaviour's schema, as shoald --check does.
what="shoal-plugin-check --args with an unknown key"
run "$check" --args '{target: api, rat: 5}' "$plugins/loadgen/loadgen.so"
[ "$rc" = 1 ] || fail "$what: exit $rc (want 1)"
grep -qxF "    FAIL args: --args:1:15: args: unknown key 'rat' for loadgen.loadgen (it takes: target, rate, size, type, count, done, tick, call, timeout, window, group)" "$tmp/out" ||
    fail "$what: $(cat "$tmp/out")"
what="shoal-plugin-check --args as the schema says"
run "$check" --args '{reply: pong}' "$plugins/echo/echo.so"
[ "$rc" = 0 ] && grep -qx '    ok   args: as the schema says' "$tmp/out" || fail "$what: exit $rc: $(cat "$tmp/out")"
what="shoal-plugin-check --messages many"
run "$check" --messages many x.so
expect 2 "" "shoal-plugin-check: --messages many: expected a number of messages (1 to 1000000)
Try 'shoal-plugin-check --help'."
if [ -x "$bench" ]; then
    what="shoal-bench W9"
    run "$bench" W9
    expect 2 "" "shoal-bench: unknown workload 'W9' (W1, W2, W3, W4, W5, W6, ISO, TASKS, SCALE)
Try 'shoal-bench --help'."
fi

# ---- 2. shoalctl without a server -----------------------------------------------
# A socket nobody listens at: anything that tried to connect would fail.
export SHOAL_SOCKET=$tmp/nobody.sock
cmds="status, groups, inspect, send, call, scale, epic, reload, diff, stop, help"
what="shoalctl stauts"
run "$shoalctl" stauts
expect 2 "" "shoalctl: unknown command 'stauts' (commands: $cmds)
Try 'shoalctl --help'."
what="shoalctl without a command"
run "$shoalctl" --timeout 100
expect 2 "" "shoalctl: no command (commands: $cmds)
Try 'shoalctl --help'."
what="shoalctl help"
run "$shoalctl" help
[ "$rc" = 0 ] && [ "$(head -1 "$tmp/out")" = "${firsts[1]}" ] && [ ! -s "$tmp/err" ] ||
    fail "$what: exit $rc: $(cat "$tmp/out" "$tmp/err")"
for c in status inspect send call scale reload diff stop help; do
    run "$shoalctl" help "$c"
    first=$(head -1 "$tmp/out")
    run "$shoalctl" "$c" --help
    [ "$rc" = 0 ] && [ ! -s "$tmp/err" ] && [ "$(head -1 "$tmp/out")" = "$first" ] ||
        fail "shoalctl $c --help: exit $rc: $(cat "$tmp/out" "$tmp/err")"
done
what="shoalctl help scale"
run "$shoalctl" help scale
expect 0 "usage: shoalctl [--socket PATH] [--timeout MS] scale POOL N|MIN..MAX
  POOL N: resizes POOL to N workers, within the pool's min and max (its
  config's min: and max:, or autoscale's), and prints the size it has now,
  e.g. \`api: 8 workers\`, or \`api: 1024 workers (asked 5000; clamped to max
  1024)\`. An autoscaled pool keeps N only until autoscale's next decision
  (none for its cooldown after the resize). At 0, a pool that neither
  autoscale nor idle_timeout starts is parked: every send is refused,
  counted, until it is scaled up (said: \`api: 0 workers (parked: ...)\`).
  POOL MIN..MAX: sets the pool's bounds live, e.g. \`scale api 2..16\`, its
  size clamped into them, and prints \`api: bounds 2..16, 4 workers\`, or
  \`api: bounds 2..3, 3 workers (clamped from 9)\`. An autoscaled pool scales
  within them from then on. MAX may not pass the most workers the pool was
  started for (its max at start): refused, exit 1; a reload with a larger
  max replaces the pool. A reload sets the config's bounds again." ""
what="shoalctl help call"
run "$shoalctl" call api x --help
[ "$rc" = 0 ] && [ "$(head -1 "$tmp/out")" = "usage: shoalctl [--socket PATH] [--timeout MS] call [--type N] [--timeout MS] [--raw] POOL DATA" ] &&
    grep -q -- '^  --type N     the message type (decimal, or hex after 0x); default 1, the$' "$tmp/out" &&
    grep -q -- '^  --raw        write the reply.s bytes exactly, nothing added$' "$tmp/out" ||
    fail "$what: exit $rc: $(cat "$tmp/out" "$tmp/err")"
what="shoalctl help send"
run "$shoalctl" help send
grep -q -- '^  --type N   the message type (decimal, or hex after 0x); default 1, the$' "$tmp/out" ||
    fail "$what: $(cat "$tmp/out")"
what="shoalctl help stauts"
run "$shoalctl" help stauts
expect 2 "" "shoalctl: unknown command 'stauts' (commands: $cmds)
Try 'shoalctl --help'."
what="shoalctl status with a word more"
run "$shoalctl" status now
expect 2 "" "shoalctl: status: unexpected argument 'now'
usage: shoalctl status (see shoalctl help status)"
what="shoalctl inspect with two pools"
run "$shoalctl" inspect a b
expect 2 "" "shoalctl: inspect: unexpected argument 'b'
usage: shoalctl inspect [POOL] (see shoalctl help inspect)"
what="shoalctl scale without N"
run "$shoalctl" scale api
expect 2 "" "shoalctl: scale: missing N or MIN..MAX
usage: shoalctl scale POOL N|MIN..MAX (see shoalctl help scale)"
what="shoalctl scale api many"
run "$shoalctl" scale api many
expect 2 "" "shoalctl: scale: N must be a number of workers (0 to 65536), or MIN..MAX the pool's bounds (e.g. 2..16), not 'many'
usage: shoalctl scale POOL N|MIN..MAX (see shoalctl help scale)"
# Bounds that cannot be are refused before any connection, as shoald would.
what="shoalctl scale api 5..2"
run "$shoalctl" scale api 5..2
expect 2 "" "shoalctl: scale: MIN 5 is above MAX 2 (the fewest workers first: 2..5)
usage: shoalctl scale POOL N|MIN..MAX (see shoalctl help scale)"
what="shoalctl scale api 2.."
run "$shoalctl" scale api 2..
expect 2 "" "shoalctl: scale: MIN..MAX takes two numbers of workers, the fewest and the most (e.g. 2..16), not '2..'
usage: shoalctl scale POOL N|MIN..MAX (see shoalctl help scale)"
what="shoalctl scale api 0..0"
run "$shoalctl" scale api 0..0
expect 2 "" "shoalctl: scale: MAX 0 is out of range: MIN is 0 to 65536, MAX 1 to 65536
usage: shoalctl scale POOL N|MIN..MAX (see shoalctl help scale)"
what="shoalctl scale api 1..70000"
run "$shoalctl" scale api 1..70000
expect 2 "" "shoalctl: scale: MAX 70000 is out of range: MIN is 0 to 65536, MAX 1 to 65536
usage: shoalctl scale POOL N|MIN..MAX (see shoalctl help scale)"
what="shoalctl call --type nope"
run "$shoalctl" call --type nope api x
expect 2 "" "shoalctl: --type nope: expected a message type (0 to 4294967295)
usage: shoalctl call [--type N] [--timeout MS] [--raw] POOL DATA (see shoalctl help call)"
what="shoalctl call --timeout soon"
run "$shoalctl" call api x --timeout soon
expect 2 "" "shoalctl: --timeout soon: expected milliseconds (1 to 3600000)
usage: shoalctl call [--type N] [--timeout MS] [--raw] POOL DATA (see shoalctl help call)"
what="shoalctl --timeout soon"
run "$shoalctl" --timeout soon status
expect 2 "" "shoalctl: --timeout soon: expected milliseconds (1 to 86400000)
Try 'shoalctl --help'."
what="shoalctl send --raw"
run "$shoalctl" send --raw api x
expect 2 "" "shoalctl: send: unknown option '--raw'
usage: shoalctl send [--type N] POOL DATA (see shoalctl help send)"
what="shoalctl --socket without a path"
run "$shoalctl" --socket
expect 2 "" "shoalctl: --socket needs a socket path
Try 'shoalctl --help'."
# The socket tried, and where it came from.
what="shoalctl with \$SHOAL_SOCKET"
run "$shoalctl" status
expect 2 "" "shoalctl: cannot reach shoald at $tmp/nobody.sock (from \$SHOAL_SOCKET): No such file or directory"
what="shoalctl --socket"
run "$shoalctl" --socket "$tmp/none.sock" status
expect 2 "" "shoalctl: cannot reach shoald at $tmp/none.sock (from --socket): No such file or directory"
unset SHOAL_SOCKET
mkdir "$tmp/here"
if [ ! -e /run/shoal/shoal.sock ]; then
    what="shoalctl with no socket named"
    run env -C "$tmp/here" "$shoalctl" status
    expect 2 "" "shoalctl: cannot reach shoald at /run/shoal/shoal.sock (the default: no --socket, no \$SHOAL_SOCKET, no ./shoal.sock): No such file or directory"
fi
: > "$tmp/here/shoal.sock" # not a socket: found, and refused
what="shoalctl with ./shoal.sock"
run env -C "$tmp/here" "$shoalctl" status
expect 2 "" "shoalctl: cannot reach shoald at ./shoal.sock (found in this directory): Connection refused"

# ---- 3. with shoald running --------------------------------------------------------
cat > "$tmp/s.yaml" << YAML
runtime: { control: ctl.sock }
log: { level: info }
plugins:
  echo: $plugins/echo/echo.so
pools:
  api:
    worker: echo.echo
    size: 2
    max: 8
  one:
    worker: echo.echo
    size: 1
  auto:
    worker: echo.echo
    autoscale: { min: 1, max: 4, up: { when: busy > 50%, for: 250ms }, down: { idle: 500ms }, cooldown: 250ms }
YAML
# --control, before the file: the socket is other.sock, not the file's ctl.sock.
: > "$log"
"$shoald" --control "$tmp/other.sock" --no-table "$tmp/s.yaml" 2> "$log" &
pid=$!
wait_for "running $tmp/s.yaml: 3 pools"
[ -S "$tmp/other.sock" ] && [ ! -e "$tmp/ctl.sock" ] || fail "--control: $(ls "$tmp")"
export SHOAL_SOCKET=$tmp/other.sock

what="groups with no checkout pool"
run "$shoalctl" groups
expect 0 "no groups: no checkout pool names a group" ""
what="call with text"
run "$shoalctl" call api hello
expect 0 "hello" ""
printf 'hello\n' > "$tmp/want"
cmp "$tmp/out" "$tmp/want" || fail "call api hello: not one line: $(od -c "$tmp/out")"
# DATA that ends in a number is DATA (shoalctl always sends the call's
# timeout, so shoald never takes DATA's last word for one).
what="call api hello 42"
run "$shoalctl" call api hello 42
expect 0 "hello 42" ""
what="call api 7"
run "$shoalctl" call api 7
expect 0 "7" ""
# Empty DATA, and DATA's own leading spaces: DATA is what follows POOL's
# one separator (shoald took the spaces off, and with them made the
# call's timeout, the last word shoalctl always sends, its DATA: "5000").
what="call api ''"
run "$shoalctl" call api ''
expect 0 "" ""
printf '\n' > "$tmp/want"
cmp "$tmp/out" "$tmp/want" || fail "$what: not one empty line: $(od -c "$tmp/out")"
what="call --timeout 250 api ''"
run "$shoalctl" call --timeout 250 api ''
cmp "$tmp/out" "$tmp/want" || fail "$what: not one empty line: $(od -c "$tmp/out")"
what="call --raw api ' x'"
run "$shoalctl" call --raw api ' x'
printf ' x' > "$tmp/want"
cmp "$tmp/out" "$tmp/want" || fail "$what: $(od -c "$tmp/out")"
what="call with UTF-8 text"
run "$shoalctl" call api 'héllo wörld'
expect 0 "héllo wörld" ""
# Binary: escaped for the terminal; --raw: the bytes exactly.
data=$(printf 'a\001\002\377b\tc\\d')
what="call with binary data"
run "$shoalctl" call api "$data"
expect 0 'a\x01\x02\xffb\tc\\d' ""
what="call --raw with binary data"
run "$shoalctl" call --raw api "$data"
printf 'a\001\002\377b\tc\\d' > "$tmp/want"
cmp "$tmp/out" "$tmp/want" || fail "$what: $(od -c "$tmp/out")"
[ "$rc" = 0 ] && [ ! -s "$tmp/err" ] || fail "$what: exit $rc: $(cat "$tmp/err")"
what="call api -- --raw -h"
run "$shoalctl" call api -- --raw -h
expect 0 "--raw -h" ""
# --type: echo answers type 0xFFFF0001 with its counters (calls, messages,
# echoed, echo_refused: 4 x uint64), any other type with the payload. One
# message and one call to the one worker first.
what="send one x"
run "$shoalctl" send one x
expect 0 "" ""
what="call --type 7"
run "$shoalctl" call --type 7 one hi
expect 0 "hi" ""
what="call --type 0xFFFF0001"
run "$shoalctl" call one --type 0xFFFF0001 q
expect 0 '\x01\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00' ""
what="call --type 4294901761 --raw"
run "$shoalctl" call --raw --type 4294901761 one q
[ "$(od -An -tu8 -w8 -v "$tmp/out" | tr -d ' ' | paste -sd,)" = "1,1,0,0" ] ||
    fail "$what: $(od -An -tu8 -w8 -v "$tmp/out")"
# The runtime's own types are refused, for send and call alike: a pool
# took them for its own commands (a checkout pool counted a forged note
# nowhere in the ledger).
for verb in send call; do
    what="$verb --type 0xFFFE010D"
    run "$shoalctl" $verb --type 0xFFFE010D one q
    expect 2 "" "shoalctl: type 0xFFFE010D is the runtime's (0xFFFE0000 .. 0xFFFEFFFF are reserved): pick another type"
done
what="call --type 0xFFFDFFFF (below the runtime's)"
run "$shoalctl" call --type 0xFFFDFFFF one q
expect 0 "q" ""
# scale: clamped or not, said.
what="scale api 5000"
run "$shoalctl" scale api 5000
expect 0 "api: 8 workers (asked 5000; clamped to max 8)" ""
what="scale api 3"
run "$shoalctl" scale api 3
expect 0 "api: 3 workers" ""
what="scale api 0"
run "$shoalctl" scale api 0
expect 0 "api: 1 worker (asked 0; clamped to min 1)" ""
# A pool whose autoscale grows on busy or wait_p99 only, without
# idle_timeout, is never set to 0 workers: busy stays 0 % then, no queue
# wait is measured, and nothing would start one (the config refuses such a
# pool's size 0 the same way). Bounds from 0 are fine: autoscale never
# shrinks it below 1 (the config takes min: 0 too).
what="scale auto 0..4"
run "$shoalctl" scale auto 0..4
expect 0 "auto: bounds 0..4, 1 worker" ""
what="scale auto 0"
run "$shoalctl" scale auto 0
expect 1 "" "shoalctl: auto: 0 workers would leave it with no worker, and nothing would start one: its autoscale grows on busy or wait_p99 only (0% and no queue wait with no worker) and it has no idle_timeout; keep at least 1 worker (a reload with up.when on refused, or idle_timeout, allows 0)"
"$shoalctl" status | grep -q '^pool auto size 1 ' || fail "auto after the refusals: $("$shoalctl" status | grep '^pool auto')"
what="scale auto 1..3"
run "$shoalctl" scale auto 1..3
expect 0 "auto: bounds 1..3, 1 worker" ""
"$shoalctl" status | grep -q '^pool auto size 1 ' || fail "auto: $("$shoalctl" status | grep '^pool auto')"
what="scale auto 1..4"
run "$shoalctl" scale auto 1..4
expect 0 "auto: bounds 1..4, 1 worker" ""
# scale MIN..MAX: the bounds live, the size clamped into them and said;
# a max past the 8 api started with is refused (exit 1).
what="scale api 2..4"
run "$shoalctl" scale api 2..4
expect 0 "api: bounds 2..4, 2 workers (clamped from 1)" ""
what="scale api 9"
run "$shoalctl" scale api 9
expect 0 "api: 4 workers (asked 9; clamped to max 4)" ""
what="scale api 1..9"
run "$shoalctl" scale api 1..9
expect 1 "" "shoalctl: api: max 9 is past 8, the most workers it was started for (its max at start); a reload with max 9 replaces it with a new pool under its name"
what="scale api 1..8"
run "$shoalctl" scale api 1..8
expect 0 "api: bounds 1..8, 4 workers" ""
grep -q 'info control: scale api to bounds 1\.\.8 (were 2\.\.4): size now 4 (was 4)$' "$log" ||
    fail "no log line for scale api 1..8: $(grep 'control: scale' "$log")"
what="scale api 1"
run "$shoalctl" scale api 1
expect 0 "api: 1 worker" ""
# A pool with no autoscale and no idle_timeout scaled to 0 is parked: said
# (shoalctl and a warn line), every send refused and counted until it is
# scaled up, and served again after.
what="scale api 0..8"
run "$shoalctl" scale api 0..8
expect 0 "api: bounds 0..8, 1 worker" ""
what="scale api 0 (parked)"
run "$shoalctl" scale api 0
expect 0 "api: 0 workers (parked: every send is refused, counted, until it is scaled up; nothing else starts a worker -- no autoscale, no idle_timeout)" ""
grep -q 'warn control: scale api to 0: size now 0 (parked: every send is refused until it is scaled up)$' "$log" ||
    fail "no warn line for the parked pool: $(grep 'control: scale api' "$log")"
what="send to the parked api"
run "$shoalctl" send api x
expect 1 "" "shoalctl: every worker of the pool is busy"
what="scale api 1..8"
run "$shoalctl" scale api 1..8
expect 0 "api: bounds 1..8, 1 worker (clamped from 0)" ""
what="call api once unparked"
run "$shoalctl" call api back
expect 0 "back" ""
what="status with a word more"
run "$shoalctl" status now
[ "$rc" = 2 ] || fail "$what: exit $rc"
what="status"
run "$shoalctl" status
[ "$rc" = 0 ] && grep -qx 'pool api size 1 target 1 in_flight 0 forwarded [0-9]*' "$tmp/out" ||
    fail "$what: exit $rc: $(cat "$tmp/out" "$tmp/err")"
# diff: without FILE, the host's own file; with FILE, that one.
what="diff"
run "$shoalctl" diff
expect 0 "generation 1 -> 2: api size 1 -> 2" ""
sed 's/size: 2/size: 4/' "$tmp/s.yaml" > "$tmp/t.yaml"
what="diff t.yaml"
run env -C "$tmp" "$shoalctl" diff t.yaml
expect 0 "generation 1 -> 2: api size 1 -> 4" ""
# A FILE that is not there is said so here: not sent as a name shoald
# would look up in its own directory (where this t.yaml is).
what="diff t.yaml from elsewhere"
mkdir -p "$tmp/elsewhere"
run env -C "$tmp/elsewhere" "$shoalctl" diff t.yaml
expect 2 "" "shoalctl: t.yaml: No such file or directory"
# A pool that becomes a pull pool is replaced, and the diff says why.
sed 's/size: 2/size: 1\n    kind: pull\n    prefetch: 3/' "$tmp/s.yaml" > "$tmp/p.yaml"
what="diff p.yaml (a pull pool)"
run env -C "$tmp" "$shoalctl" diff p.yaml
expect 0 "generation 1 -> 2: replace api (kind forward -> pull: a new pool under its name; the old one drains)" ""
# Many changes: whole ones while they fit (1500 bytes), then how many more
# -- not a line cut in the middle of a name (a reload's line lost its
# ledger so).
{ cat "$tmp/s.yaml"; for i in $(seq -w 1 300); do echo "  many$i: { worker: echo.echo, size: 1 }"; done; } > "$tmp/m.yaml"
what="diff m.yaml (300 pools more)"
run env -C "$tmp" "$shoalctl" diff m.yaml
[ "$rc" = 0 ] && [ "$(wc -l < "$tmp/out")" = 1 ] &&
    grep -qE '^generation 1 -> 2: api size 1 -> 2; start many001; start many002; (start many[0-9]{3}; )+and [0-9]+ more changes \(not listed\)$' "$tmp/out" ||
    fail "$what: exit $rc: $(cat "$tmp/out" "$tmp/err")"
listed=$(grep -o 'start many[0-9]*' "$tmp/out" | wc -l)
more=$(sed -n 's/.*; and \([0-9]*\) more changes.*/\1/p' "$tmp/out")
[ $((listed + more)) = 300 ] || fail "$what: $listed listed + $more more is not 300"
# shoald --check --diff: at --control, options in any order.
what="shoald --control S --diff --check FILE"
run "$shoald" --control "$tmp/other.sock" --diff --check "$tmp/t.yaml"
expect 0 "$tmp/t.yaml: ok: 1 plugin, 3 pools (0 nested)
plugin echo: $plugins/echo/echo.so (a path in the config)
pool auto: elastic, 1..4 workers (starts with 1), idle_timeout 0ms (never), max_waiting 0 (no bound), autoscale up when busy > 50% for 250ms (+1 at least); down when busy <= 25% for 500ms (-1); cooldown 250ms
generation 1 -> 2: api size 1 -> 4" ""
# Without --control: FILE's runtime.control, which nobody serves here.
what="shoald --check --diff FILE (its runtime.control)"
run "$shoald" --check --diff "$tmp/t.yaml"
expect 2 "$tmp/t.yaml: ok: 1 plugin, 3 pools (0 nested)
plugin echo: $plugins/echo/echo.so (a path in the config)
pool auto: elastic, 1..4 workers (starts with 1), idle_timeout 0ms (never), max_waiting 0 (no bound), autoscale up when busy > 50% for 250ms (+1 at least); down when busy <= 25% for 500ms (-1); cooldown 250ms" "shoald: cannot reach shoald at $tmp/ctl.sock (the config's runtime.control): No such file or directory"
what="shoald --check --control without --diff"
run "$shoald" --check --control "$tmp/other.sock" "$tmp/t.yaml"
expect 2 "" "shoald: --control asks a running shoald: it goes with --check --diff
Try 'shoald --help'."
what="shoald --diff without --check"
run "$shoald" --diff "$tmp/t.yaml"
expect 2 "" "shoald: --diff goes with --check (shoald --check --diff FILE)
Try 'shoald --help'."
# A reload keeps --control's socket and does not call it a runtime change.
what="reload"
run "$shoalctl" reload
expect 0 "generation 2 (was 1)" ""
[ "$(count 'runtime: and log.level: changes')" = 0 ] || fail "the reload took --control for a change"
[ -S "$tmp/other.sock" ] && [ ! -e "$tmp/ctl.sock" ] || fail "after reload: $(ls "$tmp")"

# A second shoald on a file in another directory, at its runtime.control
# (relative to the file): --check --diff finds it from anywhere.
mkdir "$tmp/sub"
cat > "$tmp/sub/u.yaml" << YAML
runtime: { control: u.sock }
plugins:
  echo: $plugins/echo/echo.so
pools:
  solo: { worker: echo.echo, size: 1 }
YAML
"$shoald" --no-table "$tmp/sub/u.yaml" 2> "$tmp/log2" &
pid2=$!
for _ in $(seq 1 1000); do [ -S "$tmp/sub/u.sock" ] && break; sleep 0.01; done
what="shoald --check --diff sub/u.yaml from $tmp/here"
run env -C "$tmp/here" "$shoald" --check --diff ../sub/u.yaml
expect 0 "../sub/u.yaml: ok: 1 plugin, 1 pool (0 nested)
plugin echo: $plugins/echo/echo.so (a path in the config)
generation 1 -> 2: no change" ""
what="stop the second"
run "$shoalctl" --socket "$tmp/sub/u.sock" stop
expect 0 "stopping: draining every pool" ""
wait $pid2 || fail "the second shoald: exit $?"

what="stop"
run "$shoalctl" stop
expect 0 "stopping: draining every pool" ""
wait $pid
rc=$?
pid=
[ $rc -eq 0 ] || fail "shoald exit $rc after stop"
echo "ok"
