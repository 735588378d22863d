#!/bin/bash
# test_checkout.sh BUILD_DIR - checkout pools in shoald (kind: checkout, the
# conn plugin as members):
#   1. --check describes each checkout pool in one line.
#   2. shoalctl call on a checkout pool is a transaction: 4 calls to db
#      (init 2) go to its two members in turn -- two sessions, uses 1, 1,
#      2, 2 -- and come back: takes 4, returned_ok 4, in use 0, free 2 in
#      inspect; status says the same in short.
#      /metrics has the checkout families with db's exact values (and
#      passes promtool when it is on PATH).
#   3. A failing call (flaky: conn breaks on every call) answers the caller
#      with an error (shoalctl exits 1), the member is returned FAIL and
#      replaced: returned_fail 1, failed 1, a new session. The table's rows
#      say in use, free, takes/s and the failure totals (returned fail 1).
#      flaky has no restart in its budget (max 0): the log says it is
#      degraded once, and so do status, inspect, its row and /metrics.
#   4. A reload changing init, max and queue_max is applied live (the same
#      members, one more started); one changing the members' args replaces
#      the pool (new sessions), logged with why; a bad member is refused
#      at file:line:col and changes nothing.
#   5. shoalctl scale on a checkout pool says where its members are set; a
#      reload's log line names only what changed (max 5 -> 6) and why a
#      pool was replaced (kind checkout -> forward); a new strategy (fifo
#      -> lifo) is applied live; a new group (as diff says first) or restart
#      replaces the pool, and one out of its group is no longer in it.
#   6. SIGTERM drains and exits 0.
#   7. A draining pool serves the transactions it accepted: the queued
#      call of a replacing reload is answered by the old member, and
#      SIGTERM handles every queued send before it exits 0.
#   8. A loadgen with group: true makes transactions on a group: 300 of
#      them, 4 at a time, all answered, spread over both pools of dbs
#      (takes sum to 300, each pool has some); a group with no pool is said
#      once and counted as noproc. Ten reloads replace the one pool of a
#      group that a loadgen makes transactions on: none is refused, lost or
#      left unanswered.
. "$(dirname "$0")/lib.sh" "$1" || exit 1
export SHOAL_SOCKET=$tmp/ctl.sock

header() {
    cat <<YAML
runtime: { control: ctl.sock, threads: 2 }
metrics: { listen: 127.0.0.1:0 }
log: { level: info }
shutdown: { drain: 2s }
plugins:
  conn: $plugins/conn/conn.so
YAML
}
# flaky: no restart within its budget, so its first failure degrades it
# (its starts wait 1 ms)
fr="restart: { max: 0, within: 1m, backoff: 1ms }"
write "pools:
  db: { kind: checkout, member: conn.conn, init: 2, max: 4, group: dbs, args: { connect: 1ms } }
  db2: { kind: checkout, member: conn.conn, group: dbs }
  flaky: { kind: checkout, member: conn.conn, $fr, args: { fail_permille: 1000, seed: 7 } }"

out=$("$shoald" --check "$tmp/s.yaml" 2>&1) || fail "--check: $out"
echo "$out" | grep -qx "pool db: checkout, 2..4 members (conn.conn), fifo, queue_max 50, lease 30000ms, cull_interval 60000ms, max_age 30000ms, max_lifetime never (+/- 0ms), group dbs" ||
    fail "--check said: $out"
echo "$out" | grep -qx "pool flaky: checkout, 1..1 members (conn.conn), fifo, queue_max 50, lease 30000ms, cull_interval 60000ms, max_age 30000ms, max_lifetime never (+/- 0ms), group none" ||
    fail "--check said: $out"

: > "$log"
(cd "$tmp" && exec "$shoald" s.yaml) > "$tmp/table" 2> "$log" &
pid=$!
wait_for "running s.yaml: 3 pools"

# call POOL: the conn reply of a transaction: "SESSION USES VALUE"
call() { "$shoalctl" call --raw "$1" x | od -An -tu8 -w8 -v | tr -d ' ' | paste -sd' '; }

r1=$(call db) r2=$(call db) r3=$(call db) r4=$(call db)
s1=${r1%% *} s2=${r2%% *}
[ "$s1" != "$s2" ] || fail "two calls went to one member: $r1 / $r2"
[ "$r1 $r2 $r3 $r4" = "$s1 1 0 $s2 1 0 $s1 2 0 $s2 2 0" ] ||
    fail "transactions did not take the members in turn: $r1 / $r2 / $r3 / $r4"
for kv in takes=4 returned_ok=4 returned_fail=0 in_use=0 free=2 pool_size=2 messages_forwarded=4 \
    messages_handled=4; do
    got=$(field db "${kv%%=*}")
    [ "$got" = "${kv#*=}" ] || fail "db's ${kv%%=*} is $got, want ${kv#*=}"
done
"$shoalctl" inspect db | grep -q '"kind":"checkout"' || fail "db's kind is not checkout"
"$shoalctl" inspect db | grep -q '"group":"dbs"' || fail "db's group is not dbs"
"$shoalctl" status | grep -q "^pool db size 2 target 2 .* checkout in_use 0 free 2 starting 0 queued 0 takes 4 no_members 0 killed 0 group dbs$" ||
    fail "status said: $("$shoalctl" status | grep '^pool db ')"
# groups: dbs with its two pools (db2 starts its one member at once),
# summed, then each; flaky has no group.
want="group dbs pools 2 in_use 0 free 3 starting 0 queued 0: db (in_use 0 free 2), db2 (in_use 0 free 1)"
for _ in $(seq 1 500); do
    [ "$("$shoalctl" groups)" = "$want" ] && break
    sleep 0.01
done
[ "$("$shoalctl" groups)" = "$want" ] || fail "groups said: $("$shoalctl" groups)"

wait_for "metrics: serving GET /metrics"
port=$(sed -n 's|.*metrics: serving GET /metrics on http://127.0.0.1:\([0-9]*\)/metrics$|\1|p' "$log")
command -v python3 > /dev/null || fail "python3 is needed to scrape"
python3 - "http://127.0.0.1:$port/metrics" > "$tmp/m" <<'PY' || fail "scrape: $(cat "$tmp/m")"
import sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=2) as r:
    sys.stdout.write(r.read().decode())
PY
for want in 'shoal_checkout_takes_total{pool="db"} 4' 'shoal_checkout_members_free{pool="db"} 2' \
    'shoal_checkout_members_in_use{pool="db"} 0' 'shoal_checkout_returns_total{pool="db",how="ok"} 4' \
    'shoal_checkout_members_killed_total{pool="db",when="in_use"} 0' \
    'shoal_checkout_takers_waiting{pool="db2"} 0' 'shoal_pool_messages_forwarded_total{pool="db"} 4'; do
    grep -qxF "$want" "$tmp/m" || fail "/metrics has no line '$want': $(grep checkout "$tmp/m" | head -20)"
done
if command -v promtool > /dev/null; then
    promtool check metrics < "$tmp/m" > "$tmp/promtool" 2>&1 || fail "promtool: $(cat "$tmp/promtool")"
fi

# 3. A call that breaks the connection.
"$shoalctl" call flaky x > "$tmp/o" 2>&1 && fail "flaky's call succeeded: $(cat "$tmp/o")"
grep -q "handler failed" "$tmp/o" || fail "flaky's call said: $(cat "$tmp/o")"
wait_for "flaky/conn: connection broke after 1 use"
for _ in $(seq 1 500); do [ "$(field flaky free)" = 1 ] && break; sleep 0.01; done
for kv in returned_fail=1 messages_failed=1 free=1 in_use=0; do
    got=$(field flaky "${kv%%=*}")
    [ "$got" = "${kv#*=}" ] || fail "flaky's ${kv%%=*} is $got, want ${kv#*=}"
done
# The table (piped: a block a second) says the same: members in use and
# free, takes a second, and each failure total once it is not 0; its wait
# columns are the takes' wait for a member. The broken member's
# replacement is a restart, as a forward pool's worker's.
n=$(grep -c '^shoald: generation' "$tmp/table")
for _ in $(seq 1 300); do
    [ "$(grep -c '^shoald: generation' "$tmp/table")" -ge $((n + 2)) ] && break
    sleep 0.01
done
row() { grep "^$1 " "$tmp/table" | tail -1; }
row db | grep -Eq '^db +2 +0 +0 +0 +0 +0 +[0-9]+\.[0-9] +[0-9]+\.[0-9] running \(checkout, in use 0/2, free 2, takes 0/s\)$' ||
    fail "db's row: $(row db)"
row flaky | grep -Eq '^flaky +1 +0 +0 +0 +0 +1 +[0-9]+\.[0-9] +[0-9]+\.[0-9] degraded \(checkout, in use 0/1, free 1, takes 0/s, returned fail 1\)$' ||
    fail "flaky's row: $(row flaky)"
# Past its restart budget (max 0), flaky is degraded wherever its state is
# shown: the log once, status, inspect, the table (above) and /metrics.
[ "$(count "flaky: degraded: more than 0 restarts within 60000 ms")" = 1 ] ||
    fail "flaky's degraded line: $(grep degraded "$log")"
"$shoalctl" status | grep -q "^pool flaky size .* degraded$" ||
    fail "flaky in status: $("$shoalctl" status | grep '^pool flaky')"
"$shoalctl" inspect flaky | grep -q '"state":"degraded"' || fail "flaky's state in inspect"

# Every checkout family of /metrics says what inspect says, for each pool
# (flaky's returned fail is not 0 by now).
python3 - "http://127.0.0.1:$port/metrics" > "$tmp/m" <<'PY' || fail "scrape: $(cat "$tmp/m")"
import sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=2) as r:
    sys.stdout.write(r.read().decode())
PY
for pool in db db2 flaky; do
    "$shoalctl" inspect "$pool" > "$tmp/i"
    for pair in members_in_use:in_use members_free:free members_starting:starting \
        takers_waiting:queued takes_total:takes no_members_total:error_no_members \
        take_timeouts_total:take_timeouts lease_expired_total:lease_expired culled_total:culled \
        recycled_total:recycled start_failures_total:start_failures; do
        m=$(sed -n "s/^shoal_checkout_${pair%%:*}{pool=\"$pool\"} //p" "$tmp/m")
        i=$(grep -o "\"${pair#*:}\":[0-9]*" "$tmp/i" | head -1 | cut -d: -f2)
        [ -n "$m" ] && [ "$m" = "$i" ] || fail "$pool: /metrics ${pair%%:*} '$m', inspect ${pair#*:} '$i'"
    done
    for pair in 'returns_total{pool="P",how="ok"}:returned_ok' \
        'returns_total{pool="P",how="fail"}:returned_fail' \
        'members_killed_total{pool="P",when="free"}:killed_free' \
        'members_killed_total{pool="P",when="in_use"}:killed_in_use'; do
        series=shoal_checkout_${pair%%:*}
        series=${series//P/$pool}
        m=$(grep -F "$series " "$tmp/m" | cut -d' ' -f2)
        i=$(grep -o "\"${pair#*:}\":[0-9]*" "$tmp/i" | head -1 | cut -d: -f2)
        [ -n "$m" ] && [ "$m" = "$i" ] || fail "$pool: /metrics $series '$m', inspect ${pair#*:} '$i'"
    done
    for q in p50 p99; do
        m=$(sed -n "s/^shoal_checkout_take_wait_${q}_seconds{pool=\"$pool\"} //p" "$tmp/m")
        i=$(grep -o "\"take_wait_${q}_ns\":[0-9]*" "$tmp/i" | cut -d: -f2)
        [ "$m" = "$(awk -v n="$i" 'BEGIN { printf "%d.%09d", n / 1e9, n % 1e9 }')" ] ||
            fail "$pool: /metrics take_wait_${q}_seconds '$m', inspect take_wait_${q}_ns '$i'"
    done
done
[ "$(sed -n 's/^shoal_checkout_returns_total{pool="flaky",how="fail"} //p' "$tmp/m")" = 1 ] ||
    fail "flaky's returns fail in /metrics: $(grep 'pool="flaky"' "$tmp/m" | grep returns)"
for st in running:0 degraded:1 draining:0; do
    [ "$(sed -n "s/^shoal_pool_state{pool=\"flaky\",state=\"${st%%:*}\"} //p" "$tmp/m")" = "${st#*:}" ] ||
        fail "flaky's state ${st%%:*} in /metrics: $(grep 'shoal_pool_state{pool="flaky"' "$tmp/m")"
done

# 4. Reloads: live, replacing, refused.
write "pools:
  db: { kind: checkout, member: conn.conn, init: 3, max: 5, queue_max: 9, group: dbs, args: { connect: 1ms } }
  db2: { kind: checkout, member: conn.conn, group: dbs, cull_interval: never, lease: 2s }
  flaky: { kind: checkout, member: conn.conn, $fr, args: { fail_permille: 1000, seed: 7 } }"
"$shoalctl" reload > "$tmp/o" 2>&1 || fail "live reload: $(cat "$tmp/o")"
# Each live change said with its values (it was "checkout settings changed").
wait_for "db init 2 -> 3, max 4 -> 5, queue_max 50 -> 9;"
wait_for "db2 cull_interval 60000ms -> never, lease 30000ms -> 2000ms;"
for _ in $(seq 1 500); do [ "$(field db free)" = 3 ] && break; sleep 0.01; done
[ "$(field db free)" = 3 ] || fail "db did not grow to init 3"
[ "$(field db takes)" = 4 ] || fail "db was replaced by a live reload (takes $(field db takes))"
"$shoalctl" inspect db | grep -q '"queue_max":9' || fail "db's queue_max is not 9"

write "pools:
  db: { kind: checkout, member: conn.conn, init: 3, max: 5, queue_max: 9, group: dbs, args: { connect: 2ms } }
  db2: { kind: checkout, member: conn.conn, group: dbs }
  flaky: { kind: checkout, member: conn.conn, $fr, args: { fail_permille: 1000, seed: 7 } }"
"$shoalctl" reload > "$tmp/o" 2>&1 || fail "replacing reload: $(cat "$tmp/o")"
wait_for "replaced db (its members' code or args changed (conn.conn))"
r=$(call db)
[ "${r#* }" = "1 0" ] || fail "db's new member is not fresh: $r"
[ "${r%% *}" != "$s1" ] && [ "${r%% *}" != "$s2" ] || fail "db's new member is an old session: $r"
[ "$(field db takes)" = 1 ] || fail "the new db counted $(field db takes) takes"

g=$(gen)
write "pools:
  db: { kind: checkout, member: conn.nope, init: 3, max: 5, group: dbs }
  db2: { kind: checkout, member: conn.conn, group: dbs }
  flaky: { kind: checkout, member: conn.conn, $fr, args: { fail_permille: 1000, seed: 7 } }"
"$shoalctl" reload > "$tmp/o" 2>&1 && fail "a reload naming conn.nope succeeded"
grep -q "s.yaml:8:33: pools.db.member: plugin 'conn' has no behaviour 'nope' (it has: conn)" "$tmp/o" ||
    fail "the bad reload said: $(cat "$tmp/o")"
[ "$(gen)" = "$g" ] || fail "a failed reload changed the generation"
r=$(call db)
[ "${r#* }" = "1 0" ] && [ "$(field db takes)" = 2 ] ||
    fail "db after the failed reload: $r, takes $(field db takes) (the next member in turn, once)"

# scale is for forward and pull pools: a checkout pool says where its
# members are set, for a size and for bounds alike.
for a in 3 1..3; do
    out=$("$shoalctl" scale db "$a" 2>&1) && fail "scale db $a succeeded: $out"
    [ "$out" = "shoalctl: db is a checkout pool: its members are set by init and max in the config, which a reload applies live (members in use untouched)" ] ||
        fail "scale db $a said: $out"
done

# A reload says what it changed and why it replaced: only max here; then
# flaky as a forward pool (its kind).
write "pools:
  db: { kind: checkout, member: conn.conn, init: 3, max: 6, queue_max: 9, group: dbs, args: { connect: 2ms } }
  db2: { kind: checkout, member: conn.conn, group: dbs }
  flaky: { worker: conn.conn, args: { fail_permille: 1000, seed: 7 } }"
"$shoalctl" reload > "$tmp/o" 2>&1 || fail "kind reload: $(cat "$tmp/o")"
wait_for "from s.yaml: replaced flaky (kind checkout -> forward); db max 5 -> 6; ledger"

# strategy is applied live: the pool is not replaced (its takes stay).
t=$(field db takes)
write "pools:
  db: { kind: checkout, member: conn.conn, init: 3, max: 6, queue_max: 9, group: dbs, args: { connect: 2ms }, strategy: lifo }
  db2: { kind: checkout, member: conn.conn, group: dbs }
  flaky: { worker: conn.conn, args: { fail_permille: 1000, seed: 7 } }"
"$shoalctl" reload > "$tmp/o" 2>&1 || fail "strategy reload: $(cat "$tmp/o")"
wait_for "from s.yaml: db strategy fifo -> lifo; ledger"
"$shoalctl" inspect db | grep -q '"strategy":"lifo"' || fail "db's strategy is not lifo"
[ "$(field db takes)" = "$t" ] || fail "db was replaced by a strategy reload (takes $(field db takes))"

# group and restart are not applied live: a change to either replaces the
# pool, as diff says first. Out of its group, db is no longer found there.
write "pools:
  db: { kind: checkout, member: conn.conn, init: 3, max: 6, queue_max: 9, args: { connect: 2ms }, strategy: lifo }
  db2: { kind: checkout, member: conn.conn, group: dbs }
  flaky: { worker: conn.conn, args: { fail_permille: 1000, seed: 7 } }"
out=$("$shoalctl" diff 2>&1) || fail "diff of a group change: $out"
[ "$out" = "generation 5 -> 6: replace db (group dbs -> none: a new pool under its name; the old one drains)" ] ||
    fail "diff of a group change said: $out"
"$shoalctl" reload > "$tmp/o" 2>&1 || fail "group reload: $(cat "$tmp/o")"
wait_for "from s.yaml: replaced db (group dbs -> none); ledger"
[ "$(field db takes)" = 0 ] || fail "db was not replaced by a group change (takes $(field db takes))"
[ "$("$shoalctl" groups)" = "group dbs pools 1 in_use 0 free 1 starting 0 queued 0: db2 (in_use 0 free 1)" ] ||
    fail "groups after db left dbs: $("$shoalctl" groups)"
write "pools:
  db: { kind: checkout, member: conn.conn, init: 3, max: 6, queue_max: 9, args: { connect: 2ms }, strategy: lifo, restart: { max: 9 } }
  db2: { kind: checkout, member: conn.conn, group: dbs }
  flaky: { worker: conn.conn, args: { fail_permille: 1000, seed: 7 } }"
"$shoalctl" reload > "$tmp/o" 2>&1 || fail "restart reload: $(cat "$tmp/o")"
wait_for "from s.yaml: replaced db (restart changed); ledger"

stop_host 0

# 7. A draining checkout pool serves the transactions it accepted (sleep
#    members, one call at a time). A reload replacing the pool while a call
#    is in its member and one is queued: the queued call is answered by the
#    old pool's member (2 calls at its end), nothing dropped. SIGTERM while
#    a send is in the member and three are queued: all four handled (4
#    messages at its end), the drain completes, exit 0, nothing lost.
header() {
    cat <<YAML
runtime: { control: ctl.sock, threads: 4 }
log: { level: debug }
shutdown: { drain: 10s }
plugins:
  sleep: $plugins/sleep/sleep.so
YAML
}
# Each call or send holds the member 1 s: queue (below) must see it in use
# before it ends, a status read away (under TSan on a loaded machine a
# shoalctl took long enough to miss 400 ms, and every later wait failed).
sleepy() { write "pools:
  db: { kind: checkout, member: sleep.sleep, init: 1, max: 1, args: { latency: $1 } }"; }
sleepy 1000ms
: > "$log"
(cd "$tmp" && exec "$shoald" --no-table s.yaml) 2> "$log" &
pid=$!
wait_for "running s.yaml: 1 pool"
# queue VERB N: N transactions to db (shoalctl call, in the background, or
# send), each in the queue before the next; the first takes the member
queue() {
    for k in $(seq 1 "$2"); do
        if [ "$1" = call ]; then
            ("$shoalctl" call db "c$k" > "$tmp/call$k" 2>&1; echo "rc=$?" >> "$tmp/call$k") &
        else
            "$shoalctl" send db "s$k" > "$tmp/o" 2>&1 || fail "send $k: $(cat "$tmp/o")"
        fi
        local u q
        for _ in $(seq 1 500); do
            u=$(field db in_use) q=$(field db queued)
            [ "$u" = 1 ] && [ "$q" = $((k - 1)) ] && break
            sleep 0.01
        done
        [ "$u" = 1 ] && [ "$q" = $((k - 1)) ] || fail "$1 $k of $2 not seen queued: in_use $u, queued $q"
    done
}
answered() { # N: each of the N calls answered with what it sent
    for _ in $(seq 1 1000); do
        [ "$(grep -l '^rc=' "$tmp"/call* 2>/dev/null | wc -l)" -ge "$1" ] && break
        sleep 0.01
    done
    for k in $(seq 1 "$1"); do
        [ "$(cat "$tmp/call$k")" = "$(printf 'c%s\nrc=0' "$k")" ] ||
            fail "call $k of $1 said: $(cat "$tmp/call$k")"
    done
    rm -f "$tmp"/call*
}
queue call 2
[ "$(field db queued)" = 1 ] || fail "the second call is not queued (queued $(field db queued))"
sleepy 1001ms
"$shoalctl" reload > "$tmp/o" 2>&1 || fail "replacing reload: $(cat "$tmp/o")"
wait_for "replaced db (its members' code or args changed (sleep.sleep))"
answered 2
wait_for "db/sleep: sleep ends (SHOAL_ESHUTDOWN): 0 messages, 2 calls"
"$shoalctl" status | grep -qx "ledger gen 1: accepted 2 = handled 2 + failed 0 + dropped 0 + in flight 0; refused 0" ||
    fail "the replaced pool's ledger: $("$shoalctl" status | grep '^ledger')"
# Sends: no caller's answer to read, so the member's own count says what
# was handled (calls in flight would be answered: the control socket is
# served while shoald drains).
queue send 4
[ "$(field db queued)" = 3 ] || fail "three sends are not queued (queued $(field db queued))"
stop_host 0
wait_for "db/sleep: sleep ends (SHOAL_ESHUTDOWN): 4 messages, 0 calls"
[ "$(count "lost\|not run\|dropped [1-9]")" = 0 ] ||
    fail "the drain lost or dropped: $(grep 'lost\|not run\|dropped [1-9]' "$log")"

# ---- 8. transactions on a group, from a loadgen ------------------------------------
header() {
    cat <<YAML
runtime: { control: ctl.sock, threads: 2 }
log: { level: info }
shutdown: { drain: 2s }
plugins:
  conn: $plugins/conn/conn.so
  loadgen: $plugins/loadgen/loadgen.so
YAML
}
write "pools:
  db: { kind: checkout, member: conn.conn, init: 2, max: 2, group: dbs, args: { connect: 1ms } }
  db2: { kind: checkout, member: conn.conn, init: 1, max: 1, group: dbs, args: { connect: 1ms } }
sources:
  tx: { actor: loadgen.loadgen, args: { target: dbs, group: true, rate: 0, count: 300, window: 4 } }
  none: { actor: loadgen.loadgen, args: { target: nodbs, group: true, rate: 100 } }"
: > "$log"
"$shoald" --no-table "$tmp/s.yaml" 2> "$log" &
pid=$!
wait_for "running $tmp/s.yaml: 2 pools, 2 sources"
for _ in $(seq 1 1000); do [ "$(loadgen tx 12)" = 1 ] && break; sleep 0.01; done
[ "$(loadgen tx 12)" = 1 ] || fail "tx did not finish: sent $(loadgen tx 1), replies $(loadgen tx 6)"
[ "$(loadgen tx 1)/$(loadgen tx 6)/$(loadgen tx 7)/$(loadgen tx 8)" = 300/300/0/0 ] ||
    fail "tx sent/replies/reply errors/timeouts: $(loadgen tx 1)/$(loadgen tx 6)/$(loadgen tx 7)/$(loadgen tx 8)"
t1=$(field db takes) t2=$(field db2 takes)
[ $((t1 + t2)) = 300 ] && [ "$t1" -gt 0 ] && [ "$t2" -gt 0 ] || fail "takes: db $t1, db2 $t2"
[ "$(field db error_no_members)/$(field db2 error_no_members)" = 0/0 ] || fail "group transactions refused"
wait_for "none/loadgen: group 'nodbs': no checkout pool has that group (or none is left): nothing is sent"
[ "$(count "group 'nodbs'")" = 1 ] || fail "the missing group said $(count "group 'nodbs'") times"
[ "$(loadgen none 4)" -gt 0 ] && [ "$(loadgen none 1)" = 0 ] || fail "none: noproc $(loadgen none 4), sent $(loadgen none 1)"
echo "group transactions: db $t1, db2 $t2 of 300"

# A group's takers find one of its pools open all through a reload that
# replaces the only one: the new pool joins the group when the reload
# commits, before the old one drains (README). ty makes transactions on
# solo, whose one pool ten reloads replace (connect 1ms <-> 2ms): none is
# refused, lost or left unanswered.
solo() { write "pools:
  db: { kind: checkout, member: conn.conn, init: 2, max: 2, group: dbs, args: { connect: 1ms } }
  db2: { kind: checkout, member: conn.conn, init: 1, max: 1, group: dbs, args: { connect: 1ms } }
  one: { kind: checkout, member: conn.conn, init: 2, max: 2, group: solo, args: { connect: $1 } }
sources:
  tx: { actor: loadgen.loadgen, args: { target: dbs, group: true, rate: 0, count: 300, window: 4 } }
  none: { actor: loadgen.loadgen, args: { target: nodbs, group: true, rate: 100 } }
  ty: { actor: loadgen.loadgen, args: { target: solo, group: true, rate: 1000, window: 4 } }"; }
solo 1ms
"$shoalctl" reload > "$tmp/o" 2>&1 || fail "reload adding solo: $(cat "$tmp/o")"
for _ in $(seq 1 500); do [ "$(loadgen ty 6)" -gt 50 ] && break; sleep 0.01; done
for k in $(seq 1 10); do
    solo "$((k % 2 + 1))ms"
    "$shoalctl" reload > "$tmp/o" 2>&1 || fail "replacing reload $k of one: $(cat "$tmp/o")"
    [ "$(count "replaced one (its members' code or args changed (conn.conn))")" = "$k" ] ||
        fail "reload $k did not replace one: $(cat "$tmp/o")"
    sleep 0.1
done
# A call lost in a replacement would time out within loadgen's 1 s.
sleep 1.5
replies=$(loadgen ty 6)
[ "$(loadgen ty 4)/$(loadgen ty 5)/$(loadgen ty 7)/$(loadgen ty 8)" = 0/0/0/0 ] ||
    fail "ty across 10 replacements: noproc $(loadgen ty 4), send errors $(loadgen ty 5), reply errors $(loadgen ty 7), timeouts $(loadgen ty 8)"
[ "$replies" -gt 500 ] || fail "ty got $replies replies across 10 replacements"
[ "$(count "dropped [1-9]\|not run\|group 'solo'")" = 0 ] ||
    fail "a replacement lost or refused: $(grep "dropped [1-9]\|not run\|group 'solo'" "$log")"
echo "group solo across 10 replacements: $replies replies, none refused or lost"
stop_host 0
echo "test_checkout: ok"
