#!/bin/bash
# test_reload_held.sh BUILD_DIR - a reload's new pools take nothing and lend
# nothing before it commits (core/pool/pool.h: opts held), so a reload
# that fails has changed nothing outside them either:
#   1. A source makes transactions on the group dbs (one pool, db) all
#      along. A reload starts a pull pool `jobs` (its source seq, ten
#      million items), a checkout pool `db2` of the group dbs, and a
#      checkout pool `down` whose member connects for 3 s and is then
#      refused. jobs' source runs its init (held: no epic is said to
#      start), then the
#      reload fails, and the ledger's total is generation 1's: in those
#      3 s no item was taken from jobs' source and no transaction went to
#      db2 (without the hold, millions and hundreds). Its pools are gone,
#      generation 1 runs on.
#   2. A reload makes three new senders to the running pool work, which
#      nothing feeds yet: the worker of the running pool lg (a loadgen
#      sending to busy) gets new args, so its new worker, started beside
#      the old one, sends to work; a new pool lg2 of a loadgen sending to
#      work as fast as it can; and a source `feed` doing the same. Then the
#      source `slow`, whose init takes 3 s and fails. The reload fails, and
#      work has been sent nothing: each of the three ran its init, then
#      waited for the commit (without the hold, feed alone sent ten million
#      messages in those 3 s).
#   3. The same reloads without `down` and `slow` commit: dbs has two
#      pools, db and db2, db2 takes transactions, jobs takes items from its
#      source and works through them, and lg's new worker, lg2 and feed
#      send to work.
#   4. SIGTERM drains and exits 0.
. "$(dirname "$0")/lib.sh" "$1" || exit 1
export SHOAL_SOCKET=$tmp/ctl.sock

header() {
    cat <<YAML
runtime: { control: ctl.sock, threads: 2 }
log: { level: info }
shutdown: { drain: 5s }
plugins:
  conn: $plugins/conn/conn.so
  burn: $plugins/burn/burn.so
  seq: $plugins/seq/seq.so
  loadgen: $plugins/loadgen/loadgen.so
sources:
  tx: { actor: loadgen.loadgen, args: { target: dbs, group: true, rate: 500 } }
pools:
  db: { kind: checkout, member: conn.conn, group: dbs }
  work: { worker: burn.burn, args: { rounds: 0 }, size: 1, mailbox: 1000 }
  busy: { worker: burn.burn, args: { rounds: 0 }, size: 1, mailbox: 1000 }
  lg: { worker: loadgen.loadgen, size: 1, args: { target: ${LG:-busy}, rate: 200 } }
YAML
}
new_pools=$(cat <<'YAML'
  jobs:
    kind: pull
    worker: burn.burn
    args: { rounds: 0 }
    size: 2
    source: seq.seq
    source_args: { from: 1, to: 10000000 }
  db2: { kind: checkout, member: conn.conn, group: dbs }
YAML
)
write ""
: > "$log"
"$shoald" --no-table "$tmp/s.yaml" 2> "$log" &
pid=$!
wait_for "running $tmp/s.yaml: 4 pools, 1 source"
for _ in $(seq 1 500); do [ "$(field db takes)" -ge 100 ] 2>/dev/null && break; sleep 0.01; done
[ "$(field db takes)" -ge 100 ] || fail "no transactions on dbs: $(field db takes) takes"

# ---- 1. a reload that fails: held until then, so nothing was taken --------------
write "$new_pools
  down:
    kind: checkout
    member: conn.conn
    member_start_timeout: 10s
    args: { connect: 3s, connect_fail_permille: 1000 }"
out=$("$shoalctl" --timeout 20000 reload 2>&1); rc=$?
[ $rc = 1 ] || fail "the reload: exit $rc ($out)"
echo "$out" | grep -q "^shoalctl: reload failed: $tmp/s.yaml:[0-9]*:[0-9]*: pools.down: cannot start: .*connect refused" ||
    fail "the reload said: $out"
[ "$(count "jobs: source seq started, held: asked for nothing until the reload commits")" = 1 ] ||
    fail "jobs' source did not run its init"
[ "$(count "jobs: epic started")" = 0 ] || fail "the epic of a reload that failed is said to have started"
[ "$(count "down/conn: stall: returned after 3.0 s")" = 1 ] || fail "down's connect was not 3 s"
[ "$(gen)" = 1 ] || fail "the generation moved to $(gen)"
# The ledger's total is generation 1's: the failed generation's pools
# (counted in the total when they are forgotten) handled nothing.
status=$("$shoalctl" status)
gen1=$(echo "$status" | sed -n 's/^ledger gen 1: accepted \([0-9]*\) .*/\1/p')
total=$(echo "$status" | sed -n 's/^ledger total: accepted \([0-9]*\) .*/\1/p')
[ -n "$gen1" ] && [ "$gen1" = "$total" ] || fail "the failed generation's pools took work: $status"
echo "$status" | grep -q '^pool \(jobs\|db2\|down\) ' && fail "a pool of the failed reload is there: $status"
groups=$("$shoalctl" groups)
echo "$groups" | grep -q '^group dbs pools 1 .*: db (in_use [01] free [01])$' || fail "dbs: $groups"

# ---- 2. new sources: one sends nothing while a later one starts ----------------
# sources TEXT: the header without its sources, then TEXT (more pools, and
# sources: of its own)
sources() { header | sed '/^sources:$/,/^pools:$/{/^sources:$/d;/^  tx:/d}'; printf '%s\n' "$1"; }
# senders TEXT: the config of this section, TEXT more sources
senders() {
    { LG=work sources "  lg2: { worker: loadgen.loadgen, size: 1, args: { target: work, rate: 0 } }
sources:
  tx: { actor: loadgen.loadgen, args: { target: dbs, group: true, rate: 500 } }
  feed: { actor: loadgen.loadgen, args: { target: work, rate: 0 } }
$1"; } > "$tmp/s.yaml.new"
    mv "$tmp/s.yaml.new" "$tmp/s.yaml"
}
senders "  slow: { actor: conn.conn, args: { connect: 3s, connect_fail_permille: 1000 } }"
out=$("$shoalctl" --timeout 20000 reload 2>&1); rc=$?
[ $rc = 1 ] || fail "the reload with slow: exit $rc ($out)"
echo "$out" | grep -q "^shoalctl: reload failed: $tmp/s.yaml:[0-9]*:[0-9]*: sources.slow: cannot start: .*connect refused" ||
    fail "the reload said: $out"
[ "$(count "slow/conn: stall: returned after 3.0 s")" = 1 ] || fail "slow's connect was not 3 s"
[ "$(count "trying generation 2 from $tmp/s.yaml: starting beside the running pools: lg (new workers); lg2 (a new pool)")" = 1 ] ||
    fail "the reload did not start lg's new worker and lg2"
[ "$(field work messages_forwarded)" = 0 ] || fail "sent to work before the reload committed: $(field work messages_forwarded)"
status=$("$shoalctl" status)
echo "$status" | grep -q '^source \(feed\|slow\) ' && fail "a source of the failed reload is there: $status"
echo "$status" | grep -q '^pool lg2 ' && fail "a pool of the failed reload is there: $status"

# ---- 3. the same reloads without what fails: they commit, then they work -------
write "$new_pools"
out=$("$shoalctl" --timeout 20000 reload 2>&1) || fail "the reload: $out"
[ "$(gen)" = 2 ] || fail "generation $(gen) after the reload"
for _ in $(seq 1 500); do
    groups=$("$shoalctl" groups)
    echo "$groups" | grep -q '^group dbs pools 2 ' && break
    sleep 0.01
done
echo "$groups" | grep -Eq '^group dbs pools 2 .*: (db \(.*\), db2 \(.*\)|db2 \(.*\), db \(.*\))$' ||
    fail "dbs after the reload: $groups"
for _ in $(seq 1 500); do [ "$(field db2 takes)" -ge 10 ] 2>/dev/null && break; sleep 0.01; done
[ "$(field db2 takes)" -ge 10 ] || fail "no transactions went to db2: $(field db2 takes) takes"
for _ in $(seq 1 500); do
    [ "$(field jobs messages_handled)" -ge 1000 ] 2>/dev/null && break
    sleep 0.01
done
[ "$(field jobs messages_handled)" -ge 1000 ] || fail "jobs took nothing from its source: $(field jobs messages_handled) handled"

senders ""
out=$("$shoalctl" --timeout 20000 reload 2>&1) || fail "the reload of the senders: $out"
wait_for "reload: generation 3 from $tmp/s.yaml: lg: 1 workers replaced (loadgen.loadgen); .*started lg2; .*source feed started"
for _ in $(seq 1 500); do
    [ "$(field work messages_forwarded)" -ge 1000 ] 2>/dev/null && break
    sleep 0.01
done
[ "$(field work messages_forwarded)" -ge 1000 ] || fail "nothing sent to work: $(field work messages_forwarded)"

# ---- 4. SIGTERM drains and exits 0 ---------------------------------------------------
stop_host 0
echo ok
