#!/bin/bash
# test_reload_control.sh BUILD_DIR - the control socket while a reload
# waits for new workers' init (control_reload.c): answered, not frozen.
#
#   1. A reload adds two pools, early (its worker connects in 10 ms) and
#      slow (3 s). Meanwhile (the first `shoalctl reload` has not answered
#      yet): status says "reloading generation 2 from PATH for N ms:
#      starting pool slow (...)" and lists early as " starting"; a call to
#      api is answered; early is reached by no name (call and inspect say
#      "not running yet: the reload to generation 2 starts it", as for
#      slow; inspect of every pool leaves it out); scale and diff are
#        refused "busy: a reload to generation 2 is running"; 15 more
#        `shoalctl reload`s wait, and are answered by one reload after
#        (generation 3, was 2), not by the one running (it read the file
#        before); a 17th is told busy at once (16 wait at most). Two reload
#        lines in the log.
#   2. The same while a kept pool's workers are swapped (new args: a new
#      connect of 3 s): status says "reloading generation 4".
#   3. `shoalctl stop` while a reload waits for a 30 s init: the reload
#      fails at once ("interrupted while its workers started"), changing
#      nothing, and shoald drains and exits (3: the init is left running),
#      within 5 s.
#   4. SIGTERM while a reload swaps a pool's workers, whose new init takes
#      30 s: the same ("interrupted while its new workers started"); it
#      waited 15 s before.
#   5. A reload loads a plugin whose own init hangs until the test lets it
#      return: status says "reading the file, loading its plugins"
#      meanwhile, and a call to the pool the reload brings is told it is
#      not running yet (it said "unknown pool" until the plugins loaded); a `shoalctl stop` then fails the reload as soon as the
#      init returns ("interrupted by a stop before its pools started"), no
#      pool of it started, and shoald exits 0.
#   5b. The same with SIGTERM and a plugin after the one whose init hangs:
#      that plugin is not loaded (each may take 10 s): the reload fails
#      naming it ("plugins.late: not loaded: shoald is stopping"). A
#      plugin the reload loaded before, whose fini waits for a file, is
#      released after the drain, not before it; exit 0 once it returns.
#   6. A reload adds two sources, feed (at once) and dial (its init takes
#      3 s): while dial starts, status says "source feed starting: sent 0,
#      ..." (held: it sends nothing until the commit), and feed is reached
#      by no name; then it runs.
#   7. A reload drops a plugin whose fini hangs: after the commit, while
#      the fini holds the host thread, status says generation 2
#      ("committed: releasing the plugins no longer used") and the new
#      pool answers by its name.
. "$(dirname "$0")/lib.sh" "$1"
export SHOAL_SOCKET=$tmp/ctl.sock

header() {
    cat <<YAML
runtime: { control: ctl.sock }
log: { level: info }
shutdown: { drain: 1s }
plugins:
  echo: $plugins/echo/echo.so
  conn: $plugins/conn/conn.so
pools:
  api: { worker: echo.echo, size: 2 }
YAML
}

# reload_bg OUT: a `shoalctl reload` in the background, its output in OUT;
# sets ctl to its PID
reload_bg() {
    "$shoalctl" --timeout 40000 reload > "$1" 2>&1 &
    ctl=$!
}

# reload_answered WHAT PID OUT RC WANT: the reload client PID (from
# reload_bg) exits RC, having printed exactly WANT into OUT
reload_answered() {
    local rc
    wait "$2"
    rc=$?
    [ "$rc" = "$4" ] && [ "$(cat "$3")" = "$5" ] || fail "$1: exit $rc: $(cat "$3")
want exit $4: $5"
}

# during_reload GEN STEP: while the reload to GEN runs (its client, $ctl,
# has not answered), status says so and what it waits for (STEP), within
# 5 s of its start
during_reload() {
    local st want="reloading generation $1 from $tmp/s.yaml for [0-9]* ms: $2"
    for _ in $(seq 1 500); do
        st=$("$shoalctl" status 2>&1)
        grep -q "^$want\$" <<< "$st" && break
        sleep 0.01
    done
    grep -q "^$want\$" <<< "$st" || fail "status never said '$want': $st"
    grep -q "^generation $(($1 - 1))\$" <<< "$st" || fail "status's generation during the reload: $st"
    kill -0 "$ctl" 2> /dev/null || fail "the reload had answered already: $(cat "$tmp/r1")"
}

# ---- 1. a new pool's slow init ----------------------------------------------------
write ""
: > "$log"
"$shoald" --no-table "$tmp/s.yaml" 2> "$log" &
pid=$!
wait_for "running $tmp/s.yaml: 1 pool"
write "  early: { worker: conn.conn, size: 1, args: { connect: 10ms } }
  slow: { worker: conn.conn, size: 1, args: { connect: 3s } }"
reload_bg "$tmp/r1"
during_reload 2 "starting pool slow (its first workers run init)"
# early has started, but is not committed: listed as starting, reached by
# no name, and not inspected
"$shoalctl" status | grep -q '^pool early size 1 target 1 in_flight 0 forwarded 0 starting$' ||
    fail "the started pool is not said to be starting: $("$shoalctl" status)"
expect_out_ms "a call to a pool the reload started" 1 \
    "shoalctl: pool 'early' is not running yet: the reload to generation 2 starts it (for N ms): starting pool slow (its first workers run init); it is reached once that reload commits" \
    "$shoalctl" call early x
expect_out_ms "inspect of a pool the reload started" 1 \
    "shoalctl: pool 'early' is not running yet: the reload to generation 2 starts it (for N ms): starting pool slow (its first workers run init); it is reached once that reload commits" \
    "$shoalctl" inspect early
expect_out "a call to a name neither config has" 1 "shoalctl: unknown pool 'nosuch'" \
    "$shoalctl" call nosuch x
"$shoalctl" inspect | grep -q early && fail "inspect lists the uncommitted pool: $("$shoalctl" inspect)"
expect_out "a call to api during the reload" 0 "still-here" "$shoalctl" call api still-here
expect_out_ms "a call to the pool being started" 1 \
    "shoalctl: pool 'slow' is not running yet: the reload to generation 2 starts it (for N ms): starting pool slow (its first workers run init); it is reached once that reload commits" \
    "$shoalctl" call slow x
expect_out_ms "a scale during the reload" 1 \
    "shoalctl: busy: a reload to generation 2 is running (for N ms): scale waits for it; try again when it ends" \
    "$shoalctl" scale api 3
expect_out_ms "a diff during the reload" 1 \
    "shoalctl: busy: a reload to generation 2 is running (for N ms): diff waits for it; try again when it ends" \
    "$shoalctl" diff
# Reloads asked now read the file after the running one did: 15 more wait
# (one reload answers them all); with the first, 16 wait, and a 17th is
# told busy at once.
write "  early: { worker: conn.conn, size: 1, args: { connect: 10ms } }
  slow: { worker: conn.conn, size: 1, args: { connect: 3s } }
  more: { worker: echo.echo, size: 1 }"
asked=()
for i in $(seq 1 15); do
    "$shoalctl" --timeout 40000 reload > "$tmp/q$i" 2>&1 &
    asked+=($!)
done
for _ in $(seq 1 200); do # until all wait: open are they, the first and this status
    [ "$("$shoalctl" status | sed -n 's/^control \([0-9]*\) open.*/\1/p')" -ge 17 ] && break
done
expect_out "a 17th reload asked" 1 \
    "shoalctl: busy: 16 reload requests already wait for a reload; it will read the file after yours came: its outcome is in \`status\`" \
    "$shoalctl" reload
kill -0 "$ctl" 2> /dev/null || fail "the first reload ended before the 17th was asked: raise its connect"
reload_answered "the first reload" "$ctl" "$tmp/r1" 0 "generation 2 (was 1)"
for i in $(seq 1 15); do
    reload_answered "reload $i asked during the first" "${asked[$((i - 1))]}" "$tmp/q$i" 0 \
        "generation 3 (was 2)"
done
[ "$(count "reload: generation")" = 2 ] || fail "$(count "reload: generation") reload lines, not 2"
grep -q "reload: generation 3 from $tmp/s.yaml: started more" "$log" || fail "no 'started more' line"
expect_out "a call to the new pool" 0 "x" "$shoalctl" call more x
echo "1: served during a new pool's 3 s init; the reload asked meanwhile ran after it"

# ---- 2. a kept pool's workers swapped ----------------------------------------------
write "  early: { worker: conn.conn, size: 1, args: { connect: 10ms } }
  slow: { worker: conn.conn, size: 1, args: { connect: 3s, seed: 7 } }
  more: { worker: echo.echo, size: 1 }"
reload_bg "$tmp/r1"
during_reload 4 "starting pool slow's new workers (they run init)"
expect_out "a call to api during the swap" 0 "swap" "$shoalctl" call api swap
reload_answered "the swapping reload" "$ctl" "$tmp/r1" 0 "generation 4 (was 3)"
grep -q "reload: generation 4 from $tmp/s.yaml: slow: 1 workers replaced" "$log" ||
    fail "no swap line: $(grep 'reload:' "$log")"
echo "2: served during a swap's 3 s init"

# ---- 3. shoalctl stop during a reload ------------------------------------------------
write "  early: { worker: conn.conn, size: 1, args: { connect: 10ms } }
  slow: { worker: conn.conn, size: 1, args: { connect: 3s, seed: 7 } }
  more: { worker: echo.echo, size: 1 }
  stuck: { worker: conn.conn, size: 1, args: { connect: 30s } }"
reload_bg "$tmp/r1"
during_reload 5 "starting pool stuck (its first workers run init)"
t0=$(now_ms)
expect_out "stop during the reload" 0 "stopping: draining every pool" "$shoalctl" stop
reload_answered "the reload a stop interrupted" "$ctl" "$tmp/r1" 1 \
    "shoalctl: reload failed: $tmp/s.yaml:12:10: pools.stuck: cannot start: interrupted while its workers started; generation 4 keeps running"
stopped_leaving "shoalctl stop during the reload" stuck/conn shutdown
grep -q "shoalctl stop: draining every pool (at most 1000 ms)" "$log" || fail "no drain line"
echo "3: shoalctl stop ended the reload and shoald in $((t1 - t0)) ms, exit 3"

# ---- 4. SIGTERM while a swap's new worker runs a 30 s init ----------------------------
write "  slow: { worker: conn.conn, size: 1, args: { connect: 10ms } }"
: > "$log"
"$shoald" --no-table "$tmp/s.yaml" 2> "$log" &
pid=$!
wait_for "running $tmp/s.yaml: 2 pools"
write "  slow: { worker: conn.conn, size: 1, args: { connect: 30s } }"
reload_bg "$tmp/r1"
during_reload 2 "starting pool slow's new workers (they run init)"
t0=$(now_ms)
kill -TERM "$pid"
reload_answered "the swap SIGTERM interrupted" "$ctl" "$tmp/r1" 1 \
    "shoalctl: reload failed: $tmp/s.yaml:9:9: pools.slow: a new worker did not start: interrupted while its new workers started; generation 1 keeps running"
stopped_3 "SIGTERM during the swap"
# the new worker is its running pool's (retiring), so the drain names it
grep -Eq "> slow/conn: shutdown: still in its handler after [0-9.]+ s \(pool slow, behaviour conn" "$log" ||
    fail "the swap's init left running is not named"
echo "4: SIGTERM ended a swap's wait and shoald in $((t1 - t0)) ms, exit 3"

# ---- 5. a new plugin's init hangs: served meanwhile; a stop there fails the reload --
write ""
: > "$log"
SHOAL_FIXTURE_INIT_GO=$tmp/go "$shoald" --no-table "$tmp/s.yaml" 2> "$log" &
pid=$!
wait_for "running $tmp/s.yaml: 1 pool"
{ header | sed "s|^pools:\$|  hang: $build/fixtures/init_hangs.so\npools:|"
  echo "  more: { worker: hang.b, size: 1 }"; } > "$tmp/s.yaml.new"
mv "$tmp/s.yaml.new" "$tmp/s.yaml"
reload_bg "$tmp/r1"
until_exists "$tmp/go.entered" "the plugin's init never ran"
during_reload 2 "reading the file, loading its plugins"
expect_out_ms "a call to a pool of the reload's file, its plugins loading" 1 \
    "shoalctl: pool 'more' is not running yet: the reload to generation 2 starts it (for N ms): reading the file, loading its plugins; it is reached once that reload commits" \
    "$shoalctl" call more x
expect_out "stop while the plugin's init hangs" 0 "stopping: draining every pool" "$shoalctl" stop
# stopping from then on, though the reload has not returned yet
expect_out "a second stop" 0 "stopping already: draining every pool" "$shoalctl" stop
expect_out "a call after the stop" 1 \
    "shoalctl: shoald is stopping (draining every pool): only status, groups and inspect are served" \
    "$shoalctl" call api x
"$shoalctl" status | grep -q '^stopping draining every pool$' || fail "status does not say stopping"
sleep 0.3
kill -0 "$ctl" 2> /dev/null || fail "the reload ended before the init returned: $(cat "$tmp/r1")"
touch "$tmp/go" # the init returns: the reload hears the stop before any pool starts
reload_answered "the reload a stop came during" "$ctl" "$tmp/r1" 1 \
    "shoalctl: reload failed: interrupted by a stop before its pools started; generation 1 keeps running"
wait "$pid"
rc=$?
pid=
[ $rc = 0 ] || fail "shoald exited $rc, not 0"
[ "$(count "started more")" = 0 ] || fail "the pool of the stopped reload started"
echo "5: served while a plugin's init hung; the stop asked then failed the reload"

# ---- 5b. SIGTERM there, a plugin after it: not loaded ---------------------------------
write ""
: > "$log"
rm -f "$tmp/go" "$tmp/go.entered" "$tmp/fgo" "$tmp/fgo.entered"
SHOAL_FIXTURE_INIT_GO=$tmp/go SHOAL_FIXTURE_FINI_GO=$tmp/fgo "$shoald" --no-table "$tmp/s.yaml" 2> "$log" &
pid=$!
wait_for "running $tmp/s.yaml: 1 pool"
{ header | sed "s|^pools:\$|  fin: $build/fixtures/fini_hangs.so\n  hang: $build/fixtures/init_hangs.so\n  late: $plugins/sleep/sleep.so\npools:|"
  echo "  last: { worker: fin.b, size: 1 }"
  echo "  more: { worker: hang.b, size: 1 }"
  echo "  nap: { worker: late.sleep, size: 1 }"; } > "$tmp/s.yaml.new"
mv "$tmp/s.yaml.new" "$tmp/s.yaml"
late_at=$(grep -n "^  late: " "$tmp/s.yaml" | cut -d: -f1):9 # the path
reload_bg "$tmp/r1"
until_exists "$tmp/go.entered" "the plugin's init never ran"
kill -TERM "$pid"
sleep 0.1
touch "$tmp/go"
reload_answered "the reload SIGTERM came during" "$ctl" "$tmp/r1" 1 \
    "shoalctl: reload failed: $tmp/s.yaml:$late_at: plugins.late: not loaded: shoald is stopping; generation 1 keeps running"
fini_after_drain "$tmp/fgo" "the reload"
echo "5b: SIGTERM while a plugin's init hung: the plugin after it not loaded, the one before released after the drain"

# ---- 6. new sources: one started is "starting" while the next runs init -------------
write ""
: > "$log"
"$shoald" --no-table "$tmp/s.yaml" 2> "$log" &
pid=$!
wait_for "running $tmp/s.yaml: 1 pool"
write "sources:
  feed: { actor: loadgen.loadgen, args: { target: api, rate: 100 } }
  dial: { actor: conn.conn, args: { connect: 3s } }"
sed -i "s|^plugins:\$|plugins:\n  loadgen: $plugins/loadgen/loadgen.so|" "$tmp/s.yaml"
reload_bg "$tmp/r1"
during_reload 2 "starting the new sources (they run init)"
"$shoalctl" status | grep -q '^source feed starting: sent 0, refused 0, restarts 0$' ||
    fail "the source started is not said to be starting: $("$shoalctl" status)"
expect_out_ms "a call to a source the reload started" 1 \
    "shoalctl: source 'feed' is not running yet: the reload to generation 2 starts it (for N ms): starting the new sources (they run init); it is reached once that reload commits" \
    "$shoalctl" call feed stats
expect_out_ms "inspect of a source the reload started" 1 \
    "shoalctl: source 'feed' is not running yet: the reload to generation 2 starts it (for N ms): starting the new sources (they run init); it is reached once that reload commits" \
    "$shoalctl" inspect feed
reload_answered "the sources' reload" "$ctl" "$tmp/r1" 0 "generation 2 (was 1)"
"$shoalctl" status | grep -q '^source feed running: ' || fail "feed is not running: $("$shoalctl" status)"
stop_host 0
echo "6: a source the reload started was 'starting' while the next one ran init"

# ---- 7. an old plugin's fini hangs after the commit: generation 2 is served ---------
{ header | sed "s|^pools:\$|  fh: $build/fixtures/fini_hangs.so\npools:|"; } > "$tmp/s.yaml"
: > "$log"
SHOAL_FIXTURE_INIT_GO=$tmp/fini.go "$shoald" --no-table "$tmp/s.yaml" 2> "$log" &
pid=$!
wait_for "running $tmp/s.yaml: 1 pool"
write "  more: { worker: echo.echo, size: 1 }" # fh dropped: its fini runs, and hangs
reload_bg "$tmp/r1"
for _ in $(seq 1 500); do [ -e "$tmp/fini.go.entered" ] && break; sleep 0.01; done
[ -e "$tmp/fini.go.entered" ] || fail "the dropped plugin's fini never ran"
st=$("$shoalctl" status)
grep -q "^generation 2\$" <<< "$st" &&
    grep -q "^reloading generation 2 from $tmp/s.yaml for [0-9]* ms: committed: releasing the plugins no longer used\$" <<< "$st" &&
    grep -q "^pool more size 1 target 1 in_flight 0 forwarded 0\$" <<< "$st" ||
    fail "status while the fini hangs: $st"
expect_out "a call to the committed pool while the fini hangs" 0 "x" "$shoalctl" call more x
kill -0 "$ctl" 2> /dev/null || fail "the reload answered before the fini returned"
touch "$tmp/fini.go"
reload_answered "the reload" "$ctl" "$tmp/r1" 0 "generation 2 (was 1)"
stop_host 0
echo "7: generation 2 served while an old plugin's fini hung"
echo "ok: test_reload_control"
