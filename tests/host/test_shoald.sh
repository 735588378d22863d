#!/bin/bash
# test_shoald.sh BUILD_DIR - shoald as a real process: --check (args checked
# against the behaviours' schemas too), --help-config FILE, start, reload on
# SIGHUP (a size change, a new pool, a removed pool, a replaced pool), 100
# malformed reloads that change nothing, a reload with bad args refused
# while traffic goes on, a storm of 10,000 SIGHUPs that coalesces,
# SIGTERM under load that drains and exits 0, and a plugin's log line
# holding a newline and escape sequences that stays one line (text) or
# reads back whole (JSON); and shoald as pid 1, as a container starts it.
. "$(dirname "$0")/lib.sh" "$1"

# config SIZE [EXTRA_POOLS [MAILBOX [LOAD_ARGS]]]: the test config with api of
# SIZE workers (mailbox 80 unless given), fed by loadgen with LOAD_ARGS
# (target: api, rate: 20000 unless given)
config() {
    cat > "$tmp/s.yaml.new" <<YAML
runtime: { control: ctl.sock }
log: { level: info }
shutdown: { drain: 3s }
plugins:
  echo: $plugins/echo/echo.so
  loadgen: $plugins/loadgen/loadgen.so
  sink: $plugins/sink/sink.so
pools:
  api:
    worker: echo.echo
    size: $1
    max: 16
    mailbox: ${3:-80}
  load:
    worker: loadgen.loadgen
    size: 1
    args: { ${4:-target: api, rate: 20000} }
${2:-}
YAML
    mv "$tmp/s.yaml.new" "$tmp/s.yaml"
}

# ---- --check ------------------------------------------------------------
config 2 "" 50
out=$("$shoald" --check "$tmp/s.yaml") || fail "--check of a valid file: exit $?"
want="$tmp/s.yaml: ok: 3 plugins, 2 pools (0 nested)
plugin echo: $plugins/echo/echo.so (a path in the config)
plugin loadgen: $plugins/loadgen/loadgen.so (a path in the config)
plugin sink: $plugins/sink/sink.so (a path in the config)"
[ "$out" = "$want" ] || fail "--check said: $out"
printf 'pools:\n  api: { worker: echo.echo, mailbox: 0 }\nplugins: { echo: x.so }\n' > "$tmp/bad.yaml"
out=$("$shoald" --check "$tmp/bad.yaml" 2>&1)
[ $? -eq 2 ] || fail "--check of a bad file: exit not 2"
want="$tmp/bad.yaml:2:38: pools.api.mailbox: 0 would refuse every message: write a number >= 1, or unbounded"
[ "$out" = "$want" ] || fail "--check said: $out"
"$shoald" --help-config | grep -q '^  runtime.threads  *auto | 1..1024' || fail "--help-config"
# Args are checked against the behaviour's schema: an unknown key, at the key.
cat > "$tmp/badargs.yaml" <<YAML
plugins:
  echo: $plugins/echo/echo.so
pools:
  api:
    worker: echo.echo
    args: { rpely: pong }
YAML
out=$("$shoald" --check "$tmp/badargs.yaml" 2>&1)
[ $? -eq 2 ] || fail "--check of an unknown args key: exit not 2"
want="$tmp/badargs.yaml:6:13: pools.api.args: unknown key 'rpely' for echo.echo (it takes: reply)"
[ "$out" = "$want" ] || fail "--check said: $out"
# A required key that is absent: at the pool's mapping (it has no args:).
printf 'plugins: { loadgen: %s }\npools:\n  load: { worker: loadgen.loadgen }\n' \
    "$plugins/loadgen/loadgen.so" > "$tmp/badargs.yaml"
out=$("$shoald" --check "$tmp/badargs.yaml" 2>&1)
[ $? -eq 2 ] || fail "--check of a missing required arg: exit not 2"
want="$tmp/badargs.yaml:3:9: pools.load.args: missing required key 'target' for loadgen.loadgen"
[ "$out" = "$want" ] || fail "--check said: $out"
# A pull pool: --check prints what it is made of; its source_args are
# checked against the source's schema, at the key.
cat > "$tmp/pull.yaml" <<YAML
plugins:
  echo: $plugins/echo/echo.so
  loadgen: $plugins/loadgen/loadgen.so
pools:
  failed: { worker: echo.echo }
  jobs:
    kind: pull
    worker: echo.echo
    size: 2
    prefetch: 4
    buffer: 500
    redeliver: 2
    dead_letter: failed
    source: loadgen.loadgen
    source_args: { target: failed }
YAML
out=$("$shoald" --check "$tmp/pull.yaml") || fail "--check of a pull pool: exit $?"
want="$tmp/pull.yaml: ok: 2 plugins, 2 pools (0 nested)
plugin echo: $plugins/echo/echo.so (a path in the config)
plugin loadgen: $plugins/loadgen/loadgen.so (a path in the config)
pool jobs: pull, 2 workers (echo.echo), mailbox 64, prefetch 4, buffer 500, redeliver 2, dead_letter failed, source loadgen.loadgen (with source_args)"
[ "$out" = "$want" ] || fail "--check of a pull pool said: $out"
sed -i 's/source_args: { target: failed }/source_args: { taget: failed }/' "$tmp/pull.yaml"
out=$("$shoald" --check "$tmp/pull.yaml" 2>&1)
[ $? -eq 2 ] || fail "--check of a bad source_args key: exit not 2"
want="$tmp/pull.yaml:15:20: pools.jobs.source_args: unknown key 'taget' for loadgen.loadgen (it takes: target, rate, size, type, count, done, tick, call, timeout, window, group)"
[ "$out" = "$want" ] || fail "--check said: $out"
"$shoald" --help-config | grep -q '^  prefetch  *integer 1..1024  *1  *pull only' ||
    fail "--help-config: no prefetch row"
# --help-config FILE: the config schema, then what each behaviour takes.
out=$("$shoald" --help-config "$tmp/s.yaml") || fail "--help-config FILE: exit $?"
echo "$out" | grep -q '^  runtime.threads  *auto | 1..1024' || fail "--help-config FILE: no schema"
echo "$out" | grep -qx "plugin loadgen 1.0.0 (ABI 1.14) from $plugins/loadgen/loadgen.so" ||
    fail "--help-config FILE: no loadgen line: $out"
echo "$out" | grep -qx '  loadgen.loadgen' || fail "--help-config FILE: no loadgen.loadgen"
echo "$out" | grep -qx '    target   string    required                      the registered name (a pool.s) to send to, looked up on every tick' ||
    fail "--help-config FILE: no target row: $out"
echo "$out" | grep -qx '    reply  string  optional  answer every call with these bytes (no NUL) instead of the request.s payload' ||
    fail "--help-config FILE: no reply row: $out"
"$shoald" --help-config "$tmp/missing.yaml" > /dev/null 2>&1
[ $? -eq 2 ] || fail "--help-config of a missing file: exit not 2"

# ---- shoald as pid 1 (a container's entrypoint) -----------------------------
# Its plugins' trials are its children, whose parent is pid 1: a trial that
# took that for its host gone refused every plugin ("its ELF constructors
# ended the process"). Needs a pid namespace (root); skipped, said so,
# without one.
config 2 "" 50
if unshare --pid --fork --mount-proc true 2>/dev/null; then
    out=$(unshare --pid --fork --mount-proc "$shoald" --no-table --run-for 1s "$tmp/s.yaml" 2>&1) ||
        fail "shoald as pid 1: exit $?: $out"
    echo "$out" | grep -q 'info pool api started: 2 workers' || fail "shoald as pid 1: $out"
else
    echo "shoald as pid 1: skipped (no pid namespace here: unshare --pid failed)"
fi

# ---- start and reload -----------------------------------------------------
: > "$log"
"$shoald" --no-table "$tmp/s.yaml" 2> "$log" &
pid=$!
wait_for "gen=1 info running $tmp/s.yaml: 2 pools"

config 6
kill -HUP $pid
wait_for "reload: generation 2 from $tmp/s.yaml: api size 2 -> 6; api mailbox 50 -> 80"

config 6 "  side:
    worker: sink.sink
    size: 2"
kill -HUP $pid
wait_for "reload: generation 3 from $tmp/s.yaml: started side"

side_pid=$(SHOAL_SOCKET=$tmp/ctl.sock "$shoalctl" inspect side | grep -o '"pid":"[0-9.]*"')
config 6 "  side:
    worker: echo.echo
    size: 2"
kill -HUP $pid
wait_for "reload: generation 4 from $tmp/s.yaml: side: 2 workers replaced (echo.echo)"
# Swapped in place: the same pool (PID), now answering as echo.
[ "$(SHOAL_SOCKET=$tmp/ctl.sock "$shoalctl" inspect side | grep -o '"pid":"[0-9.]*"')" = "$side_pid" ] ||
    fail "the swapped pool changed its PID"
[ "$(SHOAL_SOCKET=$tmp/ctl.sock "$shoalctl" call side swapped)" = swapped ] || fail "call side after the swap"

# New bounds within what the pool was started for: applied live, same PID.
config 6 "  side:
    worker: echo.echo
    size: 2
    max: 4"
kill -HUP $pid
wait_for "reload: generation 5 from $tmp/s.yaml: side bounds 1..1024 -> 1..4; "
[ "$(SHOAL_SOCKET=$tmp/ctl.sock "$shoalctl" inspect side | grep -o '"pid":"[0-9.]*"')" = "$side_pid" ] ||
    fail "new bounds changed the pool's PID"
# Past it (a max above the 1024 it started with): a new pool under the name.
config 6 "  side:
    worker: echo.echo
    size: 2
    max: 2000"
kill -HUP $pid
wait_for "reload: generation 6 from $tmp/s.yaml: replaced side"

# One reload that replaces a pool and starts one: each said once, in the
# file's order, the new pool not said to replace anything.
config 6 "  side:
    worker: echo.echo
    size: 2
    max: 3000
  more:
    worker: sink.sink
    size: 1"
kill -HUP $pid
wait_for "reload: generation 7 from $tmp/s.yaml: replaced side; started more; ledger"

config 6
kill -HUP $pid
wait_for "reload: generation 8 from $tmp/s.yaml: removed side; removed more; ledger"

# ---- the control socket ----------------------------------------------------
export SHOAL_SOCKET=$tmp/ctl.sock
[ "$(stat -c %a "$SHOAL_SOCKET")" = 600 ] || fail "control socket mode $(stat -c %a "$SHOAL_SOCKET")"
out=$("$shoalctl" status) || fail "shoalctl status: exit $?"
echo "$out" | grep -q '^generation 8$' || fail "status: $out"
echo "$out" | grep -q '^pool api size 6 target 6 ' || fail "status: $out"
[ "$("$shoalctl" scale api 4)" = "api: 4 workers" ] || fail "scale api 4"
[ "$("$shoalctl" scale api 100)" = "api: 16 workers (asked 100; clamped to max 16)" ] ||
    fail "scale api 100 (clamped to max 16)"
"$shoalctl" inspect api | grep -q '"pool":"api","state":"running","pool_size":16,"target_size":16' ||
    fail "inspect api: $("$shoalctl" inspect api)"
[ "$("$shoalctl" call api hello --timeout 2000)" = hello ] || fail "call api"
"$shoalctl" inspect api | grep -q '"worker_mailbox_size":80,' || fail "the mailbox limit was not applied"
"$shoalctl" send api hi || fail "send api: exit $?"
"$shoalctl" send nosuch hi 2> "$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q "unknown pool 'nosuch'" "$tmp/err" || fail "send nosuch: exit $rc"
"$shoalctl" --socket "$tmp/none.sock" status 2> /dev/null; rc=$?
[ $rc -eq 2 ] || fail "no connection: exit $rc"
"$shoalctl" scale api 2> /dev/null; rc=$?
[ $rc -eq 2 ] || fail "usage: exit $rc"
# --check --diff: what a reload would do, and nothing done.
config 6 "  extra:
    worker: echo.echo
    size: 1"
out=$("$shoald" --check --diff "$tmp/s.yaml" --control "$SHOAL_SOCKET") || fail "--diff: exit $?"
echo "$out" | grep -q "^generation 8 -> 9: api size 16 -> 6; start extra$" || fail "--diff said: $out"
"$shoalctl" status | grep -q '^generation 8$' || fail "--diff changed the generation"
config 6
# A reload puts the file's size back over a scale.
out=$("$shoalctl" reload) || fail "shoalctl reload: exit $?"
[ "$out" = "generation 9 (was 8)" ] || fail "reload said: $out"
wait_for "reload: generation 9 from $tmp/s.yaml: api size 16 -> 6"

# ---- 100 malformed reloads change nothing ---------------------------------
bad=(
    "pools: { api: { worker: echo.echo, size: -1 } }"
    "pools: { api: { worker: nosuch.echo } }"
    "runtime: { treads: 2 }"
    "pools: [ 1, 2 ]"
    "plugins: { echo: $tmp/missing.so }"
    "pools: { api: { worker: echo.echo, mailbox: 0 } }"
    "a: [ unclosed"
    "--- {}
--- {}"
    "pools: !!map { api: { worker: echo.echo } }"
    "plugins: { echo: $plugins/echo/echo.so }
pools: { api: { worker: echo.nosuch } }"
)
for i in $(seq 1 100); do
    printf '%s\n' "${bad[$(( (i - 1) % ${#bad[@]} ))]}" > "$tmp/s.yaml"
    kill -HUP $pid
    wait_for "reload failed ($i so far), generation 9 keeps running"
done
kill -0 $pid || fail "shoald died during malformed reloads"
"$shoalctl" status | grep -q '^pool api size 6 target 6 ' || fail "malformed reloads changed api"
config 3
kill -HUP $pid
wait_for "reload: generation 10 from $tmp/s.yaml: api size 6 -> 3"

# ---- a reload with bad args is refused before anything starts ---------------
load_pid=$("$shoalctl" inspect load | grep -o '"pid":"[0-9.]*"')
forwarded() { "$shoalctl" status | sed -n 's/^pool api size 3 target 3 in_flight [0-9]* forwarded \([0-9]*\)$/\1/p'; }
before=$(forwarded)
[ -n "$before" ] || fail "status before the bad-args reload: $("$shoalctl" status)"
config 3 "" "" "target: api, rate: 20000, rat: 5"
kill -HUP $pid
wait_for "reload failed (101 so far), generation 10 keeps running: $tmp/s.yaml:17:39: pools.load.args: unknown key 'rat' for loadgen.loadgen (it takes: target, rate, size, type, count, done, tick, call, timeout, window, group)"
config 3 "" "" "target: api, rate: fast"
"$shoalctl" reload 2> "$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q "^shoalctl: reload failed: $tmp/s.yaml:17:32: pools.load.args.rate: expected an integer, got 'fast'; generation 10 keeps running$" "$tmp/err" ||
    fail "bad-args reload over the socket: exit $rc, $(cat "$tmp/err")"
wait_for "reload failed (102 so far), generation 10 keeps running: $tmp/s.yaml:17:32: pools.load.args.rate: expected an integer, got 'fast'"
out=$("$shoalctl" status)
echo "$out" | grep -q '^generation 10$' || fail "a bad-args reload changed the generation: $out"
echo "$out" | grep -q '^reloads [0-9]* ok, 102 failed$' || fail "failed reloads not counted: $out"
echo "$out" | grep -q '^pool api size 3 target 3 ' || fail "a bad-args reload changed api: $out"
[ "$("$shoalctl" inspect load | grep -o '"pid":"[0-9.]*"')" = "$load_pid" ] ||
    fail "a bad-args reload replaced the load pool"
# Traffic goes on: loadgen (20000/s) keeps feeding api.
for _ in $(seq 1 500); do
    [ "$(forwarded)" -gt "$before" ] 2>/dev/null && break
    sleep 0.01
done
after=$(forwarded)
[ "$after" -gt "$before" ] || fail "traffic stopped after a bad-args reload: $before -> $after"
[ "$("$shoalctl" call api still-here)" = still-here ] || fail "call api after a bad-args reload"
config 3

# ---- a SIGHUP storm coalesces ----------------------------------------------
before=$(count "reload: generation")
for _ in $(seq 1 10000); do kill -HUP $pid 2>/dev/null || break; done
sleep 1
kill -0 $pid || fail "shoald died in the SIGHUP storm"
after=$(count "reload: generation")
n=$((after - before))
[ $n -ge 1 ] && [ $n -lt 10000 ] || fail "storm: $n reloads for 10000 SIGHUPs"
echo "SIGHUP storm: 10000 signals, $n reloads"

# ---- malformed and failing requests over the socket ---------------------------
"$shoalctl" reload > /dev/null || fail "reload before stop"
printf 'pools: [' > "$tmp/s.yaml"
"$shoalctl" reload 2> "$tmp/err"; rc=$?
want="shoalctl: reload failed: $tmp/s.yaml:2:1: while parsing a flow node did not find expected node content"
[ $rc -eq 1 ] && grep -q "^$want; generation [0-9]* keeps running$" "$tmp/err" ||
    fail "failed reload over the socket: exit $rc, $(cat "$tmp/err")"
config 3

# ---- SIGTERM under load -----------------------------------------------------
start=$(date +%s%N)
kill -TERM $pid
wait $pid
rc=$?
pid=
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ $rc -eq 0 ] || fail "SIGTERM: exit $rc"
[ $ms -lt 5000 ] || fail "SIGTERM: took $ms ms (drain deadline 3 s)"
grep -q "SIGTERM: draining every pool (at most 3000 ms)" "$log" || fail "no drain line"
grep -q "drained in .* ms; 0 pools still busy, stopped" "$log" || fail "not drained"
[ ! -e "$tmp/ctl.sock" ] || fail "the control socket was left behind"

# ---- its end removes its own socket, nothing else at the path -------------------
# The socket removed by hand and a second shoald started on the same path:
# the first one's end (a stop, or a crash) leaves the second's socket, and
# a regular file put there, alone.
config 1 "" 50 "target: api, rate: 10"
: > "$log"
"$shoald" --no-table "$tmp/s.yaml" 2> "$log" &
pid=$!
wait_for "gen=1 info running $tmp/s.yaml: 2 pools"
# SIGUSR1, SIGUSR2 and SIGALRM mean nothing to it: said and ignored (they
# ended it, silently, its socket left behind).
kill -USR1 $pid
kill -USR2 $pid
kill -ALRM $pid
for s in USR1 USR2 ALRM; do
    wait_for "warn SIG$s: shoald does not use it (SIGHUP reloads, SIGTERM or SIGINT stops): ignored"
done
"$shoalctl" status > /dev/null || fail "shoald after SIGUSR1, SIGUSR2 and SIGALRM: status exit $?"
rm "$tmp/ctl.sock"
"$shoald" --no-table "$tmp/s.yaml" 2> "$tmp/second.log" &
second=$!
for _ in $(seq 1 100); do "$shoalctl" status > /dev/null 2>&1 && break; sleep 0.05; done
stop_host 0
"$shoalctl" status > /dev/null 2>&1
reached=$?
kill -TERM $second
wait $second
rc=$?
[ $reached -eq 0 ] || fail "the first shoald's stop removed the second's socket"
[ $rc -eq 0 ] || fail "the second shoald exited $rc"
[ ! -e "$tmp/ctl.sock" ] || fail "the second shoald left its socket behind"
: > "$log"
"$shoald" --no-table "$tmp/s.yaml" 2> "$log" &
pid=$!
wait_for "gen=1 info running $tmp/s.yaml: 2 pools"
rm "$tmp/ctl.sock"
echo precious > "$tmp/ctl.sock"
stop_host 139 SEGV
[ "$(cat "$tmp/ctl.sock" 2>/dev/null)" = precious ] || fail "a crash removed the file put at the socket's path"
rm "$tmp/ctl.sock"

# ---- the host's own settings a reload changes, said and applied ---------------------
# shutdown.drain (read when the stop comes: it kept the start's), a pool's
# warn_queue and log.format: each said by diff and by the reload's line
# (all three said 'no change').
config 1 "" 50 "target: api, rate: 10"
: > "$log"
"$shoald" --no-table "$tmp/s.yaml" 2> "$log" &
pid=$!
wait_for "gen=1 info running $tmp/s.yaml: 2 pools"
sed -i 's/^shutdown: { drain: 3s }$/shutdown: { drain: 2s }/; s/^    mailbox: 50$/    mailbox: 50\n    warn_queue: 5/' "$tmp/s.yaml"
out=$("$shoalctl" diff) || fail "diff: exit $?"
[ "$out" = "generation 1 -> 2: api warn_queue 100000 -> 5; shutdown.drain 3000ms -> 2000ms" ] || fail "diff said: $out"
"$shoalctl" reload > /dev/null || fail "reload: exit $?"
wait_for "reload: generation 2 from $tmp/s.yaml: api warn_queue 100000 -> 5; shutdown.drain 3000ms -> 2000ms; ledger"
sed -i 's/^log: { level: info }$/log: { level: info, format: json }/' "$tmp/s.yaml"
"$shoalctl" reload > /dev/null || fail "reload to json: exit $?"
wait_for '"msg":"reload: generation 3 from .*: log.format text -> json; ledger'
stop_host 0
wait_for '"msg":"SIGTERM: draining every pool (at most 2000 ms)"'

# ---- names without a slash -------------------------------------------------------
# A value with no '/' is a plugin NAME, searched on the plugin path (here the
# build's own lib/shoal/plugins beside bin/shoald): never a file beside the
# config, which must be written ./e.so; the error says so when one is there.
# shoal-plugin-check takes a file, so `e.so` there is still the file.
mkdir "$tmp/here"
cp "$plugins/echo/echo.so" "$tmp/here/e.so"
printf 'plugins: { e: e.so }\npools:\n  a: { worker: e.echo }\n' > "$tmp/here/s.yaml"
out=$(cd "$tmp/here" && "$shoald" --check s.yaml 2>&1)
[ $? -eq 2 ] || fail "--check s.yaml naming e.so: exit not 2: $out"
bindir=$(cd "$(dirname "$shoald")" && pwd -P)
instdir=$(cd "$bindir/../lib/shoal/plugins" && pwd -P)
want="s.yaml:1:15: plugins.e: e.so not found in $instdir (the install's plugin directory); write ./e.so for the file beside this config"
[ "$out" = "$want" ] || fail "--check s.yaml said: $out (want: $want)"
printf 'plugins: { e: ./e.so }\npools:\n  a: { worker: e.echo }\n' > "$tmp/here/s.yaml"
out=$(cd "$tmp/here" && "$shoald" --check s.yaml 2>&1) || fail "--check s.yaml with ./e.so: $out"
[ "$out" = "s.yaml: ok: 1 plugin, 1 pool (0 nested)
plugin e: ./e.so (a path in the config)" ] || fail "--check s.yaml said: $out"
# Names: a list, and a mapping naming echo (found in the build's plugin
# directory) or e (found through runtime.plugin_path, relative to the file,
# before SHOAL_PLUGIN_PATH and the build's directory).
mkdir "$tmp/here/mine"
cp "$plugins/echo/echo.so" "$tmp/here/mine/echo.so"
printf 'plugins: [echo, loadgen.so]\npools:\n  a: { worker: echo.echo }\n' > "$tmp/here/l.yaml"
out=$(cd "$tmp/here" && SHOAL_PLUGIN_PATH= "$shoald" --check l.yaml 2>&1) || fail "--check l.yaml: $out"
[ "$out" = "l.yaml: ok: 2 plugins, 1 pool (0 nested)
plugin echo: $instdir/echo.so (the install's plugin directory)
plugin loadgen: $instdir/loadgen.so (the install's plugin directory)" ] || fail "--check l.yaml said: $out"
printf 'runtime: { plugin_path: [mine] }\nplugins: { e: echo }\npools:\n  a: { worker: e.echo }\n' > "$tmp/here/p.yaml"
out=$(SHOAL_PLUGIN_PATH=$plugins/echo "$shoald" --check "$tmp/here/p.yaml" 2>&1) || fail "--check p.yaml: $out"
[ "$out" = "$tmp/here/p.yaml: ok: 1 plugin, 1 pool (0 nested)
plugin e: $tmp/here/mine/echo.so (runtime.plugin_path)" ] || fail "--check p.yaml said: $out"
# config/shoal.yaml names its plugins, so it works with any build: here a
# copy of shoald with the plugins in its own lib/shoal/plugins, elsewhere.
src=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$tmp/other/bin" "$tmp/other/lib/shoal/plugins"
cp "$shoald" "$tmp/other/bin/"
for p in echo burn crash loadgen seq conn; do cp "$plugins/$p/$p.so" "$tmp/other/lib/shoal/plugins/"; done
out=$(cd "$tmp" && env -u SHOAL_PLUGIN_PATH "$tmp/other/bin/shoald" --check "$src/config/shoal.yaml" 2>&1) ||
    fail "another build's --check config/shoal.yaml: $out"
want="$src/config/shoal.yaml: ok: 6 plugins, 6 pools (1 nested), 5 sources"
for p in echo burn crash loadgen seq conn; do
    want="$want
plugin $p: $tmp/other/lib/shoal/plugins/$p.so (the install's plugin directory)"
done
want="$want
pool jobs: pull, 2 workers (burn.burn), mailbox 64, prefetch 1, buffer 256, redeliver 0, dead_letter none (counted failed), source seq.seq (with source_args)
pool db-a: checkout, 2..4 members (conn.conn), fifo, queue_max 64, lease 30000ms, cull_interval 60000ms, max_age 30000ms, max_lifetime never (+/- 0ms), group dbs
pool db-b: checkout, 1..2 members (conn.conn), fifo, queue_max 50, lease 30000ms, cull_interval 60000ms, max_age 30000ms, max_lifetime never (+/- 0ms), group dbs"
[ "$out" = "$want" ] || fail "another build's --check config/shoal.yaml said: $out"
out=$(cd "$tmp/here" && "$build/bin/shoal-plugin-check" e.so 2>&1) || fail "plugin-check e.so: $out"
echo "$out" | grep -q "^plugin echo 1.0.0 .* from e.so$" || fail "plugin-check e.so said: $out"
# Settings fixed at start (runtime:, log.level) are said to wait for the
# next start when a reload changes them; runtime.max_queued among them.
printf 'runtime: { control: %s }\nplugins: [echo]\npools:\n  a: { worker: echo.echo }\n' \
    "$tmp/q.sock" > "$tmp/q.yaml"
: > "$log"
"$shoald" --no-table "$tmp/q.yaml" 2> "$log" &
pid=$!
wait_for "running $tmp/q.yaml"
sed -i 's|control: |max_queued: 1000, control: |' "$tmp/q.yaml"
"$shoalctl" --socket "$tmp/q.sock" reload > /dev/null || fail "reload changing max_queued"
wait_for "reload: generation 2 from $tmp/q.yaml: runtime: and log.level: changes take effect at the next start"
stop_host 0
# A control socket that cannot be made: said at runtime.control, with the
# way out; a file that is not a socket is left alone.
printf 'runtime: { control: %s/nodir/s.sock }\nplugins: [echo]\npools:\n  a: { worker: echo.echo }\n' \
    "$tmp" > "$tmp/c1.yaml"
out=$("$shoald" "$tmp/c1.yaml" 2>&1) && fail "a control socket in a missing directory: exit 0"
[ "$out" = "$tmp/c1.yaml:1:21: runtime.control: control socket $tmp/nodir/s.sock: No such file or directory (its directory does not exist: create it; under systemd, RuntimeDirectory=shoal makes /run/shoal); or run shoald with --control PATH" ] ||
    fail "a control socket in a missing directory: $out"
echo keep > "$tmp/plain"
out=$("$shoald" --control "$tmp/plain" "$tmp/c1.yaml" 2>&1) && fail "--control naming a file: exit 0"
[ "$out" = "control socket $tmp/plain: a regular file is there, not a socket: left as it is (name another path)" ] ||
    fail "--control naming a regular file: $out"
[ "$(cat "$tmp/plain")" = keep ] || fail "the file --control named was touched"
# A reader of stdout or stderr that goes away does not kill shoald: the
# table stops (said once), log lines to a closed stderr are lost, the
# pools, reloads and control go on, and SIGTERM exits 0.
mkfifo "$tmp/out.fifo" "$tmp/err.fifo"
: > "$log"
"$shoald" "$tmp/q.yaml" > "$tmp/out.fifo" 2> "$log" &
pid=$!
head -3 < "$tmp/out.fifo" > /dev/null # then the fifo has no reader
wait_for "table: stdout cannot be written (its reader is gone?): no more table; shoald goes on"
"$shoalctl" --socket "$tmp/q.sock" status > /dev/null || fail "status after stdout went away"
stop_host 0 # not 141: SIGPIPE
"$shoald" --no-table "$tmp/q.yaml" 2> "$tmp/err.fifo" &
pid=$!
head -1 < "$tmp/err.fifo" > /dev/null # its first log line, then no reader
"$shoalctl" --socket "$tmp/q.sock" reload > /dev/null || fail "reload with stderr gone"
kill -HUP "$pid" # a reload's log line, written to no one
for _ in $(seq 1 500); do
    "$shoalctl" --socket "$tmp/q.sock" status | grep -q '^generation 3$' && break
    sleep 0.01
done
"$shoalctl" --socket "$tmp/q.sock" status | grep -q '^generation 3$' ||
    fail "status after two reloads with stderr gone"
stop_host 0 # not 141: SIGPIPE
# A plugin's log line quoting a config string with a newline, a carriage
# return, a terminal escape sequence and a C1 control (U+009B) stays one
# line, escaped: nothing in it reads as a line of shoald's own. In the JSON
# log the same text is JSON's to escape, and reads back as it was.
nl_config() {
    cat > "$tmp/nl.yaml" <<YAML
runtime: { control: nl.sock }
log: { format: $1 }
plugins:
  loadgen: $plugins/loadgen/loadgen.so
pools:
  feed:
    worker: loadgen.loadgen
    size: 1
    args: { target: "x\\n2026-11-24T00:00:00.000Z gen=1 error forged\\r\\e[2J\\u009b", rate: 10, count: 1 }
YAML
}
nl_config text
: > "$log"
"$shoald" --no-table "$tmp/nl.yaml" 2> "$log" &
pid=$!
wait_for "feed/loadgen: target 'x.n2026-11-24T00:00:00.000Z gen=1 error forged.r.x1b\[2J.u009b': no pool"
[ "$(count 'forged')" -eq 1 ] || fail "the forged text is not on one line"
grep -q '^2026-11-24T00:00:00.000Z' "$log" && fail "a plugin's text made a line of its own"
grep -q "target 'x\\\\n2026-11-24T00:00:00.000Z gen=1 error forged\\\\r\\\\x1b\\[2J\\\\u009b'" "$log" ||
    fail "not escaped as \\n, \\r, \\x1b and \\u009b: $(grep forged "$log")"
stop_host 0
nl_config json
: > "$log"
"$shoald" --no-table "$tmp/nl.yaml" 2> "$log" &
pid=$!
wait_for "forged"
[ "$(count 'forged')" -eq 1 ] || fail "the forged text is not on one JSON line"
python3 - "$log" <<'PY' || fail "the JSON log line does not read back as the text: $(grep forged "$log")"
import json, sys
for line in open(sys.argv[1], encoding="utf-8"):
    if "forged" in line:
        msg = json.loads(line)["msg"]
        want = "target 'x\n2026-11-24T00:00:00.000Z gen=1 error forged\r\x1b[2J\u009b'"
        sys.exit(0 if msg.startswith(want) else 1)
sys.exit(1)
PY
stop_host 0
# A config error quoting such a value is one line too.
sed 's/rate: 10, count: 1/rate: "1\\n2026-11-24T00:00:00.000Z gen=1 error forged"/' "$tmp/nl.yaml" > "$tmp/nl3.yaml"
out=$("$shoald" --check "$tmp/nl3.yaml" 2>&1) && fail "--check of a bad rate: exit 0"
[ "$out" = "$tmp/nl3.yaml:9:90: pools.feed.args.rate: expected an integer, got '1\\n2026-11-24T00:00:00.000Z gen=1 error forged'" ] ||
    fail "--check of a rate with a newline said: $out"
echo "ok: test_shoald ($ms ms to stop)"
