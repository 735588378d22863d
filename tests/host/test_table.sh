#!/bin/bash
# test_table.sh BUILD_DIR - sources (singleton actors under `sources:`) and
# the table an operator reads.
#
#   1. `--check` counts sources; a source named like a pool is a config
#      error with its file:line:col.
#   2. Piped, every block of the table is the top line, the pools' header,
#      a row per pool, the sources' header and a row per source, then an
#      empty line: the sources never in the pool rows. A source that
#      overruns a small pool shows sent/s and refused/s above 0, and its
#      counts are exact: status says what loadgen itself counted (accepted,
#      refused busy), and the ledger's refusals are its refusals. Sources
#      start after every pool.
#   3. A crashing source is restarted (logged, counted in status and the
#      table) and, past its budget, down: logged once.
#   4. Reload: a new source starts, a changed one is replaced, a removed one
#      stops; a source whose init fails, or with args its behaviour does not
#      take, fails the reload and changes nothing.
#   5. SIGTERM: the sources stop before the pools drain; exit 0.
#   6. On a terminal (script(1)) the table redraws in place: ANSI home and
#      clear before each block.
#   7. A source's calls count as its sends.
#   8. A source whose target names nothing says so, once.
#   9. While a reload waits 3 s for an init, the table goes on: a block a
#      second saying what the reload waits for, its uncommitted pool
#      `starting`; after it, no burst of blocks to catch up.
. "$(dirname "$0")/lib.sh" "$1"
fixtures=$build/fixtures
export SHOAL_SOCKET=$tmp/ctl.sock

header() {
    cat <<YAML
runtime: { control: ctl.sock, threads: 2 }
log: { level: info }
shutdown: { drain: 5s }
plugins:
  echo: $plugins/echo/echo.so
  loadgen: $plugins/loadgen/loadgen.so
  crash: $plugins/crash/crash.so
  fault: $fixtures/fault.so
pools:
  api: { worker: echo.echo, size: 1, mailbox: 4 }
  big: { worker: echo.echo, size: 2, mailbox: 1000 }
sources:
YAML
}
SOURCES="  feed:
    actor: loadgen.loadgen
    args: { target: api, rate: 0, count: 20000 }
  calm:
    actor: loadgen.loadgen
    args: { target: big, rate: 1000 }
  boom:
    actor: crash.crash
    args: { every: 1 }
    restart: { max: 3, within: 1m, backoff: 500ms }"

# ---- 1. --check -------------------------------------------------------------
write "$SOURCES"
out=$("$shoald" --check "$tmp/s.yaml" 2>&1); rc=$?
[ $rc -eq 0 ] || fail "--check: exit $rc ($out)"
[ "$(echo "$out" | head -1)" = "$tmp/s.yaml: ok: 4 plugins, 2 pools (0 nested), 3 sources" ] ||
    fail "--check said: $out"
write "  api:
    actor: loadgen.loadgen
    args: { target: big }"
out=$("$shoald" --check "$tmp/s.yaml" 2>&1); rc=$?
[ $rc -eq 2 ] || fail "a source named like a pool: --check exit $rc ($out)"
want="$tmp/s.yaml:13:3: sources.api: the name is taken by pools.api (line 10): a name is one actor, a pool or a source"
[ "$out" = "$want" ] || fail "a source named like a pool: $out
want: $want"

# ---- 2. the table, piped -------------------------------------------------------
write "$SOURCES"
: > "$log"
"$shoald" "$tmp/s.yaml" > "$tmp/table" 2> "$log" &
pid=$!
wait_for "running $tmp/s.yaml: 2 pools, 3 sources on 2 threads"
# Sources start after every pool.
last_pool=$(grep -n ' info pool [a-z]* started' "$log" | tail -1 | cut -d: -f1)
first_source=$(grep -n ' info source [a-z]* started' "$log" | head -1 | cut -d: -f1)
[ "$(count ' info source [a-z]* started: ')" = 3 ] || fail "not 3 source started lines"
[ "$last_pool" -lt "$first_source" ] || fail "a source started before a pool"
# feed is done once its 20,000 were accepted.
for _ in $(seq 1 1000); do [ "$(loadgen feed 12)" = 1 ] && break; sleep 0.01; done
[ "$(loadgen feed 12)" = 1 ] || fail "feed never finished"
sent=$(loadgen feed 1); full=$(loadgen feed 2); busy=$(loadgen feed 3)
refused=$((full + busy))
[ "$sent" = 20000 ] || fail "feed sent $sent"
[ "$refused" -gt 0 ] || fail "feed never overran api (refused $refused)"
status=$("$shoalctl" status)
echo "$status" | grep -qx "source feed running: sent 20000, refused $refused, restarts 0" ||
    fail "status has no exact feed line (refused $refused): $status"
echo "$status" | grep -q '^source calm running: sent [1-9][0-9]*, refused 0, restarts 0$' ||
    fail "status has no calm line: $status"
echo "$status" | grep -qx 'source boom running: sent 0, refused 0, restarts 0' ||
    fail "status has no boom line: $status"
echo "$status" | grep -q '^pool \(feed\|calm\|boom\) ' && fail "a source among the pools: $status"
# inspect and scale are about pools: a source's name says what it is.
out=$("$shoalctl" scale calm 3 2>&1) && fail "scale of a source: exit 0"
[ "$out" = "shoalctl: 'calm' is a source (one actor), not a pool: scale is about pools; \`status\` shows what a source sent" ] ||
    fail "scale of a source said: $out"
out=$("$shoalctl" inspect calm 2>&1) && fail "inspect of a source: exit 0"
[ "$out" = "shoalctl: 'calm' is a source (one actor), not a pool: inspect is about pools; \`status\` shows what a source sent" ] ||
    fail "inspect of a source said: $out"
echo "$status" | grep -q "^ledger total: .*; refused $refused\$" ||
    fail "the ledger's refusals are not feed's $refused: $status"
# Three blocks at least, each whole.
for _ in $(seq 1 600); do
    [ "$(grep -c '^shoald: generation' "$tmp/table")" -ge 3 ] && break
    sleep 0.01
done
top='^shoald: generation 1, up 0m0[0-9]s, 2 pools, 3 sources, 2 threads$'
pool_header='pool             workers       in/s  refused/s  failed/s   queued restarts(total) wait_p50_us wait_p99_us state'
source_header='source           state         sent/s  refused/s  restarts(total)'
blocks=$(grep -c '^shoald: ' "$tmp/table")
[ "$blocks" -ge 3 ] || fail "$blocks table blocks in 6 s: $(cat "$tmp/table")"
[ "$(grep -c "$top" "$tmp/table")" = "$blocks" ] || fail "a top line is not as expected: $(grep '^shoald' "$tmp/table")"
[ "$(grep -cxF "$pool_header" "$tmp/table")" = "$blocks" ] || fail "not one pool header per block: $(cat "$tmp/table")"
[ "$(grep -cxF "$source_header" "$tmp/table")" = "$blocks" ] || fail "not one source header per block: $(cat "$tmp/table")"
# Every complete block: the same first words in the same order.
shapes=$(awk '/^shoald: /{s=""} {s=s (NF ? $1 : "|") " "} /^$/{print s}' "$tmp/table" | sort -u)
[ "$shapes" = "shoald: pool api big source feed calm boom | " ] || fail "blocks shaped: $shapes"
# feed's row (the block where it ran): sent/s and refused/s above 0.
grep -Eq '^feed +running +[1-9][0-9]* +[1-9][0-9]* +0$' "$tmp/table" ||
    fail "no feed row with sent/s and refused/s above 0: $(grep '^feed' "$tmp/table")"
# calm's row in the last block: sending.
tail -4 "$tmp/table" | grep -Eq '^calm +running +[1-9][0-9]* +0 +0$' ||
    fail "calm's last row: $(tail -4 "$tmp/table")"
# Pool rows: rates per second, latencies in microseconds with one decimal.
grep -Eq '^api +1 +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +0 +[0-9]+\.[0-9] +[0-9]+\.[0-9] running \(running [01], idle [01], submitted [0-9]+, completed [0-9]+\)$' "$tmp/table" ||
    fail "no api row as expected: $(grep '^api' "$tmp/table")"

# ---- 3. a crashing source ------------------------------------------------------
restarts() { "$shoalctl" status | sed -n 's/^source boom [a-z]*: sent 0, refused 0, restarts //p'; }
for i in 1 2; do
    "$shoalctl" send boom x > /dev/null || fail "send to the source boom refused"
    for _ in $(seq 1 500); do [ "$(restarts)" = "$i" ] && break; sleep 0.01; done
    [ "$(restarts)" = "$i" ] || fail "boom restarted $(restarts) times after $i crashes"
done
wait_for "warn source boom: restarted"
"$shoalctl" status | grep -qx 'source boom running: sent 0, refused 0, restarts 2' ||
    fail "boom after 2 crashes: $("$shoalctl" status | grep boom)"
# Past its budget (3 within 1m): down, said once.
"$shoalctl" send boom x > /dev/null
for _ in $(seq 1 500); do [ "$(restarts)" = 3 ] && break; sleep 0.01; done
"$shoalctl" send boom x > /dev/null
wait_for "warn source boom: down: more than 3 restarts within 60000 ms; retried after 500 ms (doubling)"
"$shoalctl" status | grep -q '^source boom down: ' || fail "boom not down: $("$shoalctl" status | grep boom)"
for _ in $(seq 1 300); do tail -5 "$tmp/table" | grep -Eq '^boom +down ' && break; sleep 0.01; done
tail -5 "$tmp/table" | grep -Eq '^boom +down +0 +0 +[3-9]$' || fail "boom's row: $(tail -5 "$tmp/table")"
sleep 1.2
[ "$(count 'source boom: down:')" = 1 ] || fail "down said $(count 'source boom: down:') times"

# ---- 4. reload -------------------------------------------------------------------
EXTRA="
  extra:
    actor: loadgen.loadgen
    args: { target: big, rate: 500 }"
write "$SOURCES$EXTRA"
out=$("$shoalctl" reload 2>&1) || fail "reload adding a source: $out"
[ "$out" = "generation 2 (was 1)" ] || fail "reload said: $out"
wait_for "reload: generation 2 from $tmp/s.yaml: source extra started; ledger: "
"$shoalctl" status | grep -q '^source extra running: ' || fail "extra not in status"
# calm replaced (new args): one calm line again, a new one (its count from 0).
write "$(echo "$SOURCES" | sed 's/rate: 1000 }/rate: 2000 }/')$EXTRA"
out=$("$shoalctl" reload 2>&1) || fail "reload replacing calm: $out"
wait_for "reload: generation 3 from $tmp/s.yaml: source calm replaced; ledger: "
for _ in $(seq 1 300); do [ "$("$shoalctl" status | grep -c '^source calm ')" = 1 ] && break; sleep 0.01; done
[ "$("$shoalctl" status | grep -c '^source calm running: ')" = 1 ] ||
    fail "calm after its replacement: $("$shoalctl" status | grep calm)"
before=$("$shoalctl" status | grep '^source ' | sed 's/: .*//' | sort)
# A source whose init fails: the reload fails, nothing changes.
write "$(echo "$SOURCES" | sed 's/rate: 1000 }/rate: 2000 }/')$EXTRA
  broken:
    actor: fault.fault
    args: { mode: ok, init: fail }"
out=$("$shoalctl" reload 2>&1); rc=$?
[ $rc -eq 1 ] || fail "a source whose init fails: reload exit $rc ($out)"
want="shoalctl: reload failed: $tmp/s.yaml:27:5: sources.broken: cannot start: $tmp/s.yaml:28:29: args 'init': init fails on purpose (init: fail); generation 3 keeps running"
[ "$out" = "$want" ] || fail "reload said: $out
want: $want"
# Args the behaviour does not take.
write "$(echo "$SOURCES" | sed 's/rate: 1000 }/rate: 2000 }/')
  extra:
    actor: loadgen.loadgen
    args: { target: big, rat: 500 }"
out=$("$shoalctl" reload 2>&1); rc=$?
[ $rc -eq 1 ] || fail "a source with a bad arg: reload exit $rc ($out)"
want="shoalctl: reload failed: $tmp/s.yaml:25:26: sources.extra.args: unknown key 'rat' for loadgen.loadgen (it takes: target, rate, size, type, count, done, tick, call, timeout, window, group); generation 3 keeps running"
[ "$out" = "$want" ] || fail "reload said: $out
want: $want"
[ "$(gen)" = 3 ] || fail "generation $(gen) after failed reloads"
after=$("$shoalctl" status | grep '^source ' | sed 's/: .*//' | sort)
[ "$after" = "$before" ] || fail "failed reloads changed the sources: $before -> $after"
[ "$(count ' info source broken')" = 0 ] || fail "broken was said to start"
# extra removed: it stops and goes.
write "$(echo "$SOURCES" | sed 's/rate: 1000 }/rate: 2000 }/')"
out=$("$shoalctl" reload 2>&1) || fail "reload removing extra: $out"
wait_for "reload: generation 4 from $tmp/s.yaml: source extra removed; ledger: "
for _ in $(seq 1 300); do "$shoalctl" status | grep -q '^source extra' || break; sleep 0.01; done
"$shoalctl" status | grep -q '^source extra' && fail "extra still in status"
for _ in $(seq 1 300); do [ "$(grep -c '^shoald: generation 4' "$tmp/table")" -ge 1 ] && break; sleep 0.01; done
grep -A9 '^shoald: generation 4' "$tmp/table" | grep -q '^extra ' && fail "extra still in the table"
grep -q '^shoald: generation 4, up 0m[0-9][0-9]s, 2 pools, 3 sources, 2 threads$' "$tmp/table" ||
    fail "no generation 4 top line: $(grep '^shoald' "$tmp/table" | tail -2)"

# ---- 5. SIGTERM: sources first -------------------------------------------------
stop_host 0
stopped=$(grep -n 'info shutdown: 3 sources stopped, the pools drain$' "$log" | cut -d: -f1)
drained=$(grep -n 'info drained in ' "$log" | cut -d: -f1)
[ -n "$stopped" ] && [ -n "$drained" ] && [ "$stopped" -lt "$drained" ] ||
    fail "the sources did not stop before the pools drained"

# ---- 6. on a terminal ------------------------------------------------------------
cat > "$tmp/tty.yaml" <<YAML
runtime: { threads: 2 }
plugins:
  echo: $plugins/echo/echo.so
  loadgen: $plugins/loadgen/loadgen.so
pools:
  big: { worker: echo.echo, size: 2, mailbox: 1000 }
sources:
  calm: { actor: loadgen.loadgen, args: { target: big, rate: 1000 } }
YAML
script -qec "$shoald --run-for 2500ms $tmp/tty.yaml 2> $tmp/tty.log" /dev/null > "$tmp/tty.out" ||
    fail "shoald under script: $(cat "$tmp/tty.log")"
# A block is 5 lines (top, the pools' header, big, the sources' header,
# calm): each one after the first goes up 5 lines and clears to the end.
redraws=$(grep -c $'\e\\[5A\e\\[Jshoald: generation 1, up 0m0[0-9]s, 1 pool, 1 source, 2 threads' "$tmp/tty.out")
[ "$redraws" -ge 1 ] || fail "$redraws redraws on a tty: $(od -c "$tmp/tty.out" | head -20)"
grep -q '^source ' "$tmp/tty.out" || fail "no sources header on the tty"
# Log lines on the same terminal are never wiped: a worker that panics on
# every 700th of 1000 messages a second logs between the blocks; the block
# after a log line is written below it, never over it (no cursor-up
# between a log line and the next block).
cat > "$tmp/tty2.yaml" <<YAML
runtime: { threads: 2 }
plugins:
  crash: $plugins/crash/crash.so
  loadgen: $plugins/loadgen/loadgen.so
pools:
  flaky:
    worker: crash.crash
    size: 1
    args: { every: 700 }
    restart: { max: 1000, within: 1s }
sources:
  calm: { actor: loadgen.loadgen, args: { target: flaky, rate: 1000 } }
YAML
script -qec "$shoald --run-for 3500ms $tmp/tty2.yaml" /dev/null > "$tmp/tty2.out" ||
    fail "shoald under script, logging to the terminal"
python3 - "$tmp/tty2.out" <<'PY' || fail "a log line was wiped on the terminal: see above"
import re, sys
out = open(sys.argv[1], "rb").read().decode(errors="replace")
logs = [m.end() for m in re.finditer(r"Z gen=1 (info|warn|error) [^\r\n]*", out)]
first = out.find("shoald: generation")
if first < 0 or not [e for e in logs if e > first and "panic" in out[out.rfind("\n", 0, e):e]]:
    print("no panic logged between the blocks"); sys.exit(1)
bad = 0
for end in logs:
    nxt = out.find("shoald: generation", end)
    if nxt >= 0 and re.search(r"\x1b\[(\d+A|\d*J|H)", out[end:nxt]):
        print("cursor-up or clear after a log line at byte %d" % end); bad += 1
sys.exit(1 if bad else 0)
PY
# Piped output has no escape sequences at all.
grep -q $'\e' "$tmp/table" && fail "escape sequences in piped output"

# ---- 7. calls count as sends ----------------------------------------------------
cat > "$tmp/call.yaml" <<YAML
runtime: { threads: 2, control: ctl.sock }
plugins:
  echo: $plugins/echo/echo.so
  loadgen: $plugins/loadgen/loadgen.so
pools:
  big: { worker: echo.echo, size: 2, mailbox: 1000 }
sources:
  asker: { actor: loadgen.loadgen, args: { target: big, rate: 0, call: true, count: 300 } }
YAML
: > "$log"
"$shoald" --no-table "$tmp/call.yaml" 2> "$log" &
pid=$!
wait_for "running $tmp/call.yaml: 1 pool, 1 source on 2 threads"
for _ in $(seq 1 1000); do [ "$(loadgen asker 12)" = 1 ] && break; sleep 0.01; done
[ "$(loadgen asker 12)" = 1 ] || fail "asker never finished"
"$shoalctl" status | grep -qx "source asker running: sent 300, refused $(($(loadgen asker 2) + $(loadgen asker 3))), restarts 0" ||
    fail "asker's calls: $("$shoalctl" status | grep asker)"
stop_host 0
# ---- 8. a source whose target names nothing says so, once ---------------------
cat > "$tmp/typo.yaml" <<YAML
runtime: { threads: 2, control: ctl.sock }
plugins:
  echo: $plugins/echo/echo.so
  loadgen: $plugins/loadgen/loadgen.so
pools:
  big: { worker: echo.echo, size: 2 }
sources:
  lost: { actor: loadgen.loadgen, args: { target: bgi, rate: 1000 } }
YAML
: > "$log"
"$shoald" --no-table "$tmp/typo.yaml" 2> "$log" &
pid=$!
wait_for "warn <[0-9.]*> lost/loadgen: target 'bgi': no pool or actor is registered under that name (or it is gone): nothing is sent; looked up again every 10 ms"
sleep 0.3 # 30 more ticks, none said again
[ "$(count "target 'bgi'")" = 1 ] || fail "the lost target was said $(count "target 'bgi'") times"
# A reload that adds the name: found, said once, sent to.
sed -i 's/^  big: /  bgi: /' "$tmp/typo.yaml"
"$shoalctl" reload > /dev/null || fail "reload adding bgi"
wait_for "info <[0-9.]*> lost/loadgen: target 'bgi' found: sending again"
stop_host 0
# ---- 9. the table goes on while a reload waits -----------------------------------
# A reload adds early (its worker connects in 10 ms) and slow (3 s): while
# slow connects, a block a second (the host thread writes them from its
# wait; a reload froze the table before), each saying what the reload waits
# for, early's row `starting` and the top line counting only api; after it,
# no burst of blocks to catch up.
cat > "$tmp/wait.yaml" <<YAML
runtime: { threads: 2, control: ctl.sock }
plugins:
  echo: $plugins/echo/echo.so
  conn: $plugins/conn/conn.so
pools:
  api: { worker: echo.echo, size: 1 }
YAML
: > "$log"
"$shoald" "$tmp/wait.yaml" > "$tmp/wait.out" 2> "$log" &
pid=$!
wait_for "running $tmp/wait.yaml: 1 pool on 2 threads"
cat >> "$tmp/wait.yaml" <<YAML
  early: { worker: conn.conn, size: 1, args: { connect: 10ms } }
  slow: { worker: conn.conn, size: 1, args: { connect: 3s } }
YAML
t0=$(now_ms)
"$shoalctl" --timeout 30000 reload > /dev/null || fail "the slow reload failed"
t1=$(now_ms)
sleep 2.2
stop_host 0
during=$(grep -c '^reloading: starting pool slow (its first workers run init)$' "$tmp/wait.out")
[ "$during" -ge 2 ] || fail "$during table blocks during a $((t1 - t0)) ms reload: $(cat "$tmp/wait.out")"
# every block written during it: api's top line, early starting
awk '/^shoald: generation/ { top = $0 }
     /^reloading: / && top !~ /^shoald: generation 1, up [0-9]+m[0-9]+s, 1 pool, 0 sources, 2 threads$/ { bad++ }
     END { exit bad ? 1 : 0 }' "$tmp/wait.out" ||
    fail "a block during the reload counts more than api: $(cat "$tmp/wait.out")"
[ "$(grep -c '^early .* 0\.0 starting (' "$tmp/wait.out")" = "$during" ] ||
    fail "early is not 'starting' in each block during the reload: $(cat "$tmp/wait.out")"
blocks=$(grep -c '^shoald: generation' "$tmp/wait.out")
after=$(grep -c '^shoald: generation 2, ' "$tmp/wait.out")
[ "$after" -le 3 ] || fail "$after blocks in the 2.2 s after the reload: a burst to catch up"
echo "9: $during table blocks during a $((t1 - t0)) ms reload, $after after it, $blocks in all"
echo "PASS: test_table"
