#!/bin/bash
# test_table_noanswer.sh BUILD_DIR - the table's row for an isolated pool
# whose counts cannot be read in time (README: `no answer` when an isolated
# pool's counts could not be read within 20 ms, its numbers shown as `-`).
#
# Nothing in shoald holds an isolated pool's counts (its supervisor's lock,
# core/pool/remote.c) for more than microseconds, so the test makes it so:
# SHOAL_TEST_HOLD_COUNTS_MS=3000 (test-only, read when the pool is made)
# has the supervisor keep the lock 3 s longer when it buries a child that
# died unasked, and the test kills the pool's child (kill -9) while a
# loadgen source sends to it, 500 a second. Piped:
#   1. Before the kill every row is `running`: the hook does nothing until
#      a child dies.
#   2. While the lock is held: in 2 blocks at least, one after the other,
#      the pool's row is exactly
#        iso                    -          -          -         -        -               -           -           - no answer
#      (name padded as in every row, each number `-`, never zeros, never
#      `ended`); the source's row in the same blocks goes on.
#   3. The first block after them: `running` again, and its rates span the
#      unread seconds too (table.c, unread_s): its in/s + refused/s is the
#      source's sent/s + refused/s averaged over the `no answer` blocks and
#      this one (every send the source made was one of the two), not their
#      sum (that would be 3x at least).
#   4. Then the restart shows: restarts(total) 1, in/s the source's sent/s
#      again. SIGTERM: exit 0 (the hold is not for a drained child).
# The pool keeps its default warn_queue: shoald's once-a-second look at it
# (host.c, shoal__host_watch) must not wait for the counts either, or the
# table would wait behind it and never say `no answer`. No shoalctl while
# the lock is held: status and inspect wait for the counts on shoald's
# thread, and the table with them.
. "$(dirname "$0")/lib.sh" "$1"
export SHOAL_SOCKET=$tmp/ctl.sock
table=$tmp/table

cat > "$tmp/s.yaml" <<YAML
runtime: { control: ctl.sock, threads: 2 }
log: { level: info }
plugins:
  echo: $plugins/echo/echo.so
  loadgen: $plugins/loadgen/loadgen.so
pools:
  iso: { worker: echo.echo, size: 1, mailbox: 100, isolation: process }
sources:
  feed: { actor: loadgen.loadgen, args: { target: iso, rate: 500 } }
YAML
noanswer='iso                    -          -          -         -        -               -           -           - no answer'

# rows: one line per complete block of the table (it ends with an empty
# line): BLOCK STATE IN REFUSED RESTARTS FEED_SENT FEED_REFUSED, STATE R
# (running), N (no answer) or X (anything else); numbers `-` when unread.
rows() {
    awk '/^shoald: /   { n++; st = "?"; i = r = rs = s = f = "-" }
         /^iso /       { st = ($10 == "running" && $11 == "(submitted" && $13 == "completed") ? "R" : \
                              ($10 == "no" && $11 == "answer" && NF == 11) ? "N" : "X"
                         i = $3; r = $4; rs = $7 }
         /^feed /      { s = $3; f = $4 }
         /^$/ && n     { print n, st, i, r, rs, s, f }' "$table"
}
blocks() { rows | wc -l; }
# wait_blocks N: until the table has N complete blocks (about 3 s per
# block at most)
wait_blocks() {
    for _ in $(seq 1 $((300 * $1))); do
        [ "$(blocks)" -ge "$1" ] && return 0
        sleep 0.01
    done
    fail "$(blocks) table blocks, not $1: $(cat "$table")"
}
# near A B PCT: A is within PCT% of B
near() { [ $(($1 * 100)) -ge $(($2 * (100 - $3))) ] && [ $(($1 * 100)) -le $(($2 * (100 + $3))) ]; }

: > "$log"
SHOAL_TEST_HOLD_COUNTS_MS=3000 "$shoald" "$tmp/s.yaml" > "$table" 2> "$log" &
pid=$!
wait_for "running $tmp/s.yaml: 1 pool, 1 source on 2 threads"

# ---- 1. before the kill: running ---------------------------------------------
wait_blocks 2
child=$(field iso process_pid)
[ -n "$child" ] && [ "$child" -gt 0 ] || fail "no child process for iso: $("$shoalctl" inspect iso)"
before=$(blocks)
states=$(rows | awk '{ printf "%s", $2 }')
[ "$states" = "$(printf 'R%.0s' $(seq 1 "$before"))" ] || fail "rows before the kill: $states: $(cat "$table")"
# The pool and its source count the same sends: in + refused = sent + refused.
read -r _ _ in ref _ sent sref <<< "$(rows | tail -1)"
[ "$sent" -ge 250 ] || fail "feed sends $sent/s, not about 500"
near $((in + ref)) $((sent + sref)) 10 || fail "iso counted $in+$ref/s, feed $sent+$sref/s"

# ---- 2. the child dies; its burial holds the counts 3 s --------------------------
kill -9 "$child"
# Logged once the lock is let go (remote_supervisor.c, child_ended).
wait_for "iso: isolated worker process $child was killed by SIGKILL; " 1 1500
# Until the restart shows in a running row (restarts 1), 2 blocks more.
for _ in $(seq 1 1000); do
    rows | awk -v b="$before" '$1 > b && $2 == "R" && $5 == 1 { ok = 1 } END { exit !ok }' && break
    sleep 0.01
done
after=$(rows | awk -v b="$before" '$1 > b')
states=$(echo "$after" | awk '{ printf "%s", $2 }')
echo "$states" | grep -Eq '^R*NN+R+$' ||
    fail "rows after the kill are $states (R running, N no answer), not R*NN+R+: $(cat "$table")"
nblocks=$(echo "$states" | tr -cd N | wc -c)
# Each of them exactly the row, and no other row like it.
[ "$(grep -cxF "$noanswer" "$table")" = "$nblocks" ] ||
    fail "not $nblocks rows exactly '$noanswer': $(grep '^iso ' "$table")"
[ "$(grep -c '^iso .* no answer$' "$table")" = "$nblocks" ] || fail "a no answer row not as expected"
grep -q '^iso .*ended' "$table" && fail "an ended row for iso"
# The source's rows go on meanwhile: it sends, the pool (no child) refuses.
echo "$after" | awk '$2 == "N" && ($6 + $7) < 250 { exit 1 }' ||
    fail "feed's rows while iso did not answer: $(echo "$after" | awk '$2 == "N"')"

# ---- 3. the first running row after them spans the unread seconds ----------------
first=$(echo "$after" | awk '$2 == "N" { n = 1 } n && $2 == "R" { print; exit }')
read -r fb _ in ref _ _ _ <<< "$first"
# The source's sends a second over the unread blocks and this one.
span=$(echo "$after" | awk -v f="$fb" -v k="$nblocks" '$1 > f - k - 1 && $1 <= f { s += $6 + $7 } END { printf "%d", s / (k + 1) }')
near $((in + ref)) "$span" 25 ||
    fail "the row after $nblocks unread blocks: in $in + refused $ref a second, the source's over them $span (the sum would be $((span * (nblocks + 1)))): $(cat "$table")"
echo "ok: $nblocks blocks said no answer; then in $in + refused $ref a second over $((nblocks + 1)) blocks (the source: $span)"

# ---- 4. restarted, serving; SIGTERM ------------------------------------------------
# A running row with restarts(total) 1 whose in/s is the source's sent/s.
for _ in $(seq 1 500); do
    rows | awk -v b="$fb" '$1 > b && $2 == "R" && $5 == 1 && $3 > 0 && $3 * 100 >= $6 * 75 && $3 * 100 <= $6 * 125 { ok = 1 } END { exit !ok }' && break
    sleep 0.01
done
rows | awk -v b="$fb" '$1 > b && $2 == "R" && $5 == 1 && $3 > 0 && $3 * 100 >= $6 * 75 && $3 * 100 <= $6 * 125 { ok = 1 } END { exit !ok }' ||
    fail "iso not serving again after the restart: $(rows | awk -v b="$fb" '$1 > b')"
[ "$(field iso processes_died)" = 1 ] || fail "processes_died $(field iso processes_died)"
stop_host 0
# One death line: the kill. (Its restarted child may also have replies to
# the source refused once the source has stopped at the shutdown: those are
# said, "sent a message to <32.1> that was refused here", and are no death.)
[ "$(count 'isolated worker process [0-9]* .*counted as failed')" = 1 ] ||
    fail "$(count 'isolated worker process [0-9]* .*counted as failed') death lines"
echo "PASS: test_table_noanswer"
