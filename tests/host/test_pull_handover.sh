#!/bin/bash
# test_pull_handover.sh BUILD_DIR - a reload that replaces a pull pool fed by
# a source (redeliver changed: a new pool under its name) hands the epic over
# when the new pool runs the same source with the same source_args
# (host/host_pull.c, pool/pull_source.c): the old pool's source stops, and
# the new one's resumes at the last cursor the old one reported, as a
# restarted source does. Before, the new pool's source started its epic from
# the start and every item the old one had sent was handled again.
#
#   1. Mid-epic (seq 1..N through 2 workers of 5 us an item, buffer 64):
#      `shoalctl diff` says the epic is taken over; the old pool logs its
#      epic "handed over" with its count, the new one "taken over ...
#      resumes at its last cursor" with the same count (and no "epic
#      started": it runs the old one); the new pool's epic ends done,
#      counting both pools' items; over both, the ledger accepted between
#      N and N + 66 (at most the items of the one request the old source
#      was answering when it was stopped: no more than the pool holds,
#      buffer + size x prefetch here), and handled all of them.
#   2. After the epic: diff says it is done; another replacing reload logs
#      "epic done already" with the same count and runs no epic (the
#      ledger does not move); `shoalctl epic` then runs one from the start
#      (N more).
#   3. An epic with its own args (shoalctl epic POOL ARGS) is not taken
#      over (diff and a warning say so): the old pool's runs on until that
#      pool drains (never logged "handed over"), and the new pool's epic
#      runs the config's args from the start (N items); the ledger
#      balances.
#   4. The new pool's source does not start (lines.lines, its file deleted
#      mid-epic): the old epic is not stopped for it nor logged handed over
#      -- a warning says it is not taken over and stops as the old pool
#      drains, which it does.
#   5. SIGTERM drains: exit 0.
. "$(dirname "$0")/lib.sh" "$1"
export SHOAL_SOCKET=$tmp/ctl.sock
n=800000

header() {
    cat <<YAML
runtime: { control: ctl.sock, threads: 2 }
log: { level: info }
shutdown: { drain: 10s }
plugins:
  burn: $plugins/burn/burn.so
  seq: $plugins/seq/seq.so
  lines: $plugins/lines/lines.so
YAML
}
pools() { # REDELIVER [SOURCE SOURCE_ARGS]: the jobs pool, fed by seq 1..$n by default
    cat <<YAML
pools:
  jobs:
    kind: pull
    worker: burn.burn
    args: { rounds: 0, spin: 5us }
    size: 2
    prefetch: 1
    buffer: 64
    redeliver: $1
    source: ${2:-seq.seq}
    source_args: ${3:-"{ from: 1, to: $n }"}
YAML
}
accepted() { settled_ledger | sed -n 's/^ledger total: accepted \([0-9]*\) = handled \([0-9]*\) + failed 0 + dropped 0 + in flight 0; refused 0$/\1 \2/p'; }
# next_done: waits for one more "epic done" line than now; prints its count
next_done() {
    local k
    k=$(count 'jobs: epic done: ')
    "$@" > /dev/null || fail "$*: exit $?"
    wait_done 'jobs: epic done: [0-9]* items in ' $((k + 1))
    grep 'jobs: epic done: [0-9]* items in ' "$log" | tail -1 | sed 's/.*jobs: epic done: \([0-9]*\) items in .*/\1/'
}
reload_to() { # REDELIVER GEN
    write "$(pools "$1")"
    out=$("$shoalctl" reload 2>&1) || fail "reload to redeliver $1: '$out'"
    wait_for "reload: generation $2 from .*replaced jobs (redeliver "
}

write "$(pools 0)"
start_until "running $tmp/s.yaml"
wait_for 'jobs: epic started: source seq'

# 1: mid-epic; shoalctl diff says what the reload will do.
sleep 0.3
write "$(pools 1)"
expect_out "diff mid-epic" 0 "generation 1 -> 2: replace jobs (redeliver 0 -> 1: a new pool under its name, taking its epic over; the old one drains)" \
    "$shoalctl" diff
reload_to 1 2
grep -q 'jobs: epic done: ' "$log" && fail "the epic ended before the reload: make n larger"
wait_for 'jobs: epic handed over to the pool that replaces it: [0-9]* items in '
x=$(sed -n 's/.*jobs: epic handed over to the pool that replaces it: \([0-9]*\) items in .*/\1/p' "$log")
wait_for "jobs: epic taken over from the pool it replaces ($x items sent there): source seq resumes at its last cursor"
wait_done 'jobs: epic done: [0-9]* items in '
y=$(sed -n 's/.*jobs: epic done: \([0-9]*\) items in .*/\1/p' "$log")
read -r acc hand <<< "$(accepted)"
[ -n "$acc" ] || fail "ledger not balanced: $(settled_ledger)"
[ "$acc" = "$hand" ] || fail "accepted $acc, handled $hand"
[ "$acc" -ge "$n" ] && [ "$acc" -le $((n + 66)) ] ||
    fail "accepted $acc over both pools: not N = $n to N + 66 (handed over at $x, done at $y)"
[ "$y" -ge "$n" ] && [ "$y" -le "$acc" ] || fail "the epic done at $y items, not $n to $acc"
[ "$(count 'epic started: source seq')" = 1 ] || fail "$(grep 'epic started' "$log")"
echo "ok: mid-epic: handed over at $x items, done at $y; accepted $acc of $n (+$((acc - n)))"

# 2: after the epic.
write "$(pools 0)"
expect_out "diff after the epic" 0 "generation 2 -> 3: replace jobs (redeliver 1 -> 0: a new pool under its name, its epic done (not run again); the old one drains)" \
    "$shoalctl" diff
reload_to 0 3
wait_for "jobs: epic done already in the pool it replaces ($y items): source seq not asked (shoalctl epic starts a new one)"
sleep 0.3
read -r acc2 _ <<< "$(accepted)"
[ "$acc2" = "$acc" ] || fail "an epic done ran again: accepted $acc -> $acc2"
[ "$(count 'epic started: source seq')" = 1 ] || fail "$(grep 'epic started' "$log")"
got=$(next_done "$shoalctl" epic jobs)
[ "$got" = "$n" ] || fail "the epic after the handed-over one: $got items, not $n"
read -r acc3 _ <<< "$(accepted)"
[ "$acc3" = $((acc + n)) ] || fail "a new epic: accepted $acc -> $acc3, not +$n"
echo "ok: an epic done is not run again by the pool replacing it; shoalctl epic runs a new one"

# 3: an epic with its own args is not taken over.
out=$("$shoalctl" epic jobs "{from: 1, to: $n}" 2>&1) || fail "epic with args: '$out'"
wait_for 'jobs: epic started: source seq (with its own args)'
sleep 0.2
write "$(pools 1)"
expect_out "diff under an own-args epic" 0 "generation 3 -> 4: replace jobs (redeliver 0 -> 1: a new pool under its name, not taking its epic over (it runs with its own args: the config's starts from the start); the old one drains)" \
    "$shoalctl" diff
handed=$(count 'epic handed over')
started=$(count 'jobs: epic started: source seq$')
got=$(next_done reload_to 1 4)
[ "$got" = "$n" ] || fail "the config's epic after an own-args one: $got items, not $n"
grep -q 'jobs: the epic of the pool it replaces runs with its own args (shoalctl epic; [0-9]* items sent) and is not taken over (it ends as that pool drains): source seq starts its epic from the start' "$log" ||
    fail "an own-args epic not taken over is not said"
[ "$(count 'jobs: epic started: source seq$')" = $((started + 1)) ] || fail "$(grep 'epic started' "$log")"
[ "$(count 'epic handed over')" = "$handed" ] || fail "an own-args epic was logged handed over"
read -r acc4 hand4 <<< "$(accepted)"
[ -n "$acc4" ] && [ "$acc4" = "$hand4" ] || fail "ledger after an own-args epic: $(settled_ledger)"
[ "$acc4" -ge $((acc3 + n)) ] || fail "accepted $acc3 -> $acc4: the config's epic did not run in full"
echo "ok: an epic with its own args is not taken over (said); the config's runs from the start"

# 4: the new pool's source does not start.
seq 1 $n > "$tmp/in.txt"
write "$(pools 1 lines.lines "{ path: $tmp/in.txt }")"
"$shoalctl" reload > /dev/null || fail "reload to a lines source"
wait_for 'reload: generation 5 from .*replaced jobs (source seq.seq -> lines.lines)'
wait_for 'jobs: epic started: source lines$'
sleep 0.3
rm "$tmp/in.txt"
handed=$(count 'epic handed over')
write "$(pools 0 lines.lines "{ path: $tmp/in.txt }")"
"$shoalctl" reload > /dev/null || fail "reload with the file gone"
wait_for 'reload: generation 6 from .*: jobs: its new source did not start (its init failed): the epic of the pool it replaces is not taken over, and stops as that pool drains; replaced jobs (redeliver 1 -> 0); ledger'
wait_for 'jobs: epic stopped (the pool drains): [0-9]* items in '
[ "$(count 'epic handed over')" = "$handed" ] || fail "an epic was stopped for a source that did not start"
echo "ok: a new source that does not start takes nothing over; the old epic stops as its pool drains (said)"

stop_host 0
echo "ok: drained and stopped"
