#!/bin/bash
# test_autoscale.sh BUILD_DIR - an autoscaled pool in shoald, its load set
# by reloads (a loadgen source's rate: a changed args restarts the source):
#
#   1. Light load: no decision. shoald --check describes the pool.
#   2. A step to 100 messages a second into sleep workers of 40 ms: one
#      decision grows the pool to what the load needs (100 x 40 ms at the
#      target 60% busy: 7, give or take the sleep's overshoot) within
#      up.for + 1 s of the reload; its log line names busy and refused.
#   3. Steady at 60% busy, midway between the thresholds (80% up, 40%
#      down): not one decision in 30 s.
#   3b. Thresholds live: a reload lowers up's busy to 50%, under the same
#      load: one decision grows the same pool (PID) within up.for + 1 s,
#      its line naming the new threshold. Back to 80%: it keeps its size.
#      idle_timeout live: spare (3 workers, never idle out) given 100ms by
#      a reload ends 2 idle workers, down to min 1, the same pool.
#   4. A reload that changes nothing of the pool keeps its grown size (the
#      file's size is where it starts, not where a reload puts it back);
#      one that changes its workers' args swaps them and keeps it too.
#   5. New bounds in the file (max 16 -> 6): applied live, the same pool
#      (PID), the size clamped into them; a scale by command holds; under
#      the load autoscale grows it back, never past 6.
#   6. No load: calm for down.idle, then down 2 at a time, cooldown apart,
#      to min 1; every decision one log line.
#   7. A pull pool autoscaled from the file: its load (a loadgen set by
#      reload) grows it in one decision within up.for + 1 s to what its
#      reading needs, the same pool; new bounds clamp it live; no load:
#      back to min.
#   8. Nothing lost: the ledger balances; the loadgen's refusals are the
#      pool's refusals.
. "$(dirname "$0")/lib.sh" "$1" || exit 1
export SHOAL_SOCKET=$tmp/ctl.sock

header() {
    cat <<YAML
runtime: { control: ctl.sock, threads: 16 }
log: { level: info }
shutdown: { drain: 2s }
plugins:
  sleep: $plugins/sleep/sleep.so
  loadgen: $plugins/loadgen/loadgen.so
YAML
}
# pool MAX: the autoscaled pool, bounds 1..MAX, growing past busy $UP%;
# spare, 3 workers that idle out after $IDLE; and jobs, an autoscaled pull
# pool, bounds 1..$JMAX, fed by pload at $PRATE a second (none for 0)
# Workers sleep 40 ms a message: what a busy machine adds to a sleep is a
# few milliseconds whatever its length (the thread waits to run again), and
# at 10 ms that moved the busy readings by up to 68 % (CI: 16.8 ms a
# message at the step; here 10.1 ms at the step, then 14.0 ms 7 s into the
# steady window, busy 90.4 % > 80 %: an up decision where none is due).
UP=80 IDLE=never JMAX=12 PRATE=0 WARGS="latency: 40ms" DIDLE=2s
pool() {
    cat <<YAML
pools:
  work:
    worker: sleep.sleep
    args: { $WARGS }
    mailbox: 16
    autoscale:
      min: 1
      max: $1
      up: { when: [busy > $UP%, refused > 0], for: 500ms }
      down: { idle: $DIDLE, step: 2 }
      cooldown: 1s
  spare:
    worker: sleep.sleep
    args: { latency: 1ms }
    size: 3
    max: 3
    idle_timeout: $IDLE
  jobs:
    kind: pull
    worker: sleep.sleep
    args: { latency: 40ms }
    buffer: 16
    autoscale:
      min: 1
      max: $JMAX
      up: { when: [busy > 80%, refused > 0], for: 500ms }
      down: { idle: 1s, step: 4 }
      cooldown: 1s
YAML
}
# config RATE [MAX]: the pool, and a loadgen at RATE a second (none for 0)
config() {
    local src="" load=""
    [ "$1" != 0 ] && load="
  load: { actor: loadgen.loadgen, args: { target: work, rate: $1 } }"
    [ "$PRATE" != 0 ] && load="$load
  pload: { actor: loadgen.loadgen, args: { target: jobs, rate: $PRATE } }"
    [ -n "$load" ] && src="sources:$load"
    write "$(pool "${2:-16}")
$src"
}
ups() { count 'work: autoscale: up '; }
downs() { count 'work: autoscale: down '; }
# field NAME [POOL]: a field of work's (or POOL's) inspection
# ("target_size", "pid", ...); elastic NAME: one of work's autoscale object's
field() {
    "$shoalctl" inspect "${2:-work}" | python3 -c "import json,sys; i=json.load(sys.stdin); print(i['info'].get('$1', i.get('$1')))"
}
jups() { count 'jobs: autoscale: up '; }
jdowns() { count 'jobs: autoscale: down '; }
elastic() {
    "$shoalctl" inspect work | python3 -c "import json,sys; print(json.load(sys.stdin)['info']['elastic']['autoscale']['$1'])"
}
target() { field target_size; }
# spare_view: spare's size/expired/pid
spare_view() {
    "$shoalctl" inspect spare | python3 -c "import json,sys; i=json.load(sys.stdin); print('%s/%s/%s' % (i['info']['pool_size'], i['info']['elastic']['expired'], i['pid']))"
}
reload_ok() { "$shoalctl" reload > /dev/null || fail "shoalctl reload: exit $?"; }

config 5
out=$("$shoald" --check "$tmp/s.yaml") || fail "--check: exit $?"
echo "$out" | grep -qx "pool work: elastic, 1..16 workers (starts with 1), idle_timeout 0ms (never), max_waiting 0 (no bound), autoscale up when busy > 80%, refused > 0/s for 500ms (+1 at least); down when busy <= 40%, refused <= 0/s for 2000ms (-2); cooldown 1000ms" ||
    fail "--check said: $out"

: > "$log"
"$shoald" --no-table "$tmp/s.yaml" 2> "$log" &
pid=$!
wait_for "running $tmp/s.yaml"

# ---- 1. light load: nothing to decide ---------------------------------------------
sleep 2
[ "$(ups)$(downs)" = 00 ] || fail "decisions under light load"
[ "$(target)" = 1 ] || fail "work is not at 1 under light load"
wpid=$(field pid)

# ---- 2. a step ----------------------------------------------------------------------
config 100
t0=$(date +%s.%N)
reload_ok
for _ in $(seq 1 400); do [ "$(ups)" -ge 1 ] && break; sleep 0.01; done
t1=$(date +%s.%N)
[ "$(ups)" = 1 ] || fail "no growth within 4 s of the step"
line=$(grep 'work: autoscale: up ' "$log")
grown=$(echo "$line" | sed -n 's/.*up 1 -> \([0-9]*\) workers.*/\1/p')
# The size is what the decision's own reading needs (Little's law at 60 %
# busy), whatever the sleep's overshoot made a message take on this
# machine (40 ms asked: 7 on an idle machine): the line's "N workers at
# 60% busy", and offered near the 100 asked.
offered=$(echo "$line" | sed -n 's/.*(offered \([0-9]*\)\/s,.*/\1/p')
need=$(echo "$line" | sed -n 's/.*: \([0-9]*\) workers at 60% busy).*/\1/p')
[ -n "$grown" ] && [ -n "$need" ] && [ -n "$offered" ] || fail "the decision's line: $line"
[ "$grown" = "$((need < 16 ? need : 16))" ] || fail "grew to $grown, the reading needs $need: $line"
[ "$offered" -ge 75 ] && [ "$offered" -le 125 ] || fail "offered $offered/s (100 asked): $line"
# And checked apart from the decision's arithmetic: a message takes at
# least the 40 ms asked (nanosleep never returns early) and, on a machine
# fit to run this, at most 160 ms; and the time a message the line reports
# is what its other numbers say -- 1 worker at its busy share, handling
# offered - refused a second -- within a factor of 2 (the two are read
# over the same 250 ms tick, some 6 messages, but what was accepted and
# what was handled in it differ by the mailbox's ebb and flow). A
# fixed band of 6..14 ms failed on a CI machine whose 10 ms sleeps took
# 16.8 ms, at the step, alone on it (RUN_SERIAL): 12 workers, as its
# reading needed (busy 100%, 411 offered, 347 refused: 15.6 ms).
us=$(echo "$line" | sed -n 's/.*, \([0-9]*\) us a message:.*/\1/p')
refused=$(echo "$line" | sed -n 's/.*refused \([0-9]*\)\/s > 0\/s.*/\1/p')
busy=$(echo "$line" | sed -n 's/.*: busy \([0-9.]*\)% > 80%.*/\1/p')
[ -n "$us" ] && [ -n "$refused" ] && [ -n "$busy" ] || fail "the decision's line: $line"
[ "$us" -ge 40000 ] && [ "$us" -le 160000 ] || fail "$us us a message, 40 ms asked: $line"
awk -v us="$us" -v b="$busy" -v o="$offered" -v r="$refused" \
    'BEGIN { h = o - r; if (h <= 0) exit 1; x = b / 100 * 1e6 / h; exit !(us >= x / 2 && us <= x * 2) }' ||
    fail "$us us a message, but busy $busy% handling $offered - $refused a second says otherwise: $line"
echo "$line" | grep -q 'busy [0-9.]*% > 80%, refused [0-9]*/s > 0/s for [0-9]* ms (offered' ||
    fail "the decision's line: $line"
took=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
awk -v t="$took" 'BEGIN { exit !(t <= 1.5) }' || fail "it took $took s to grow (for: 0.5 s + 1 s)"
echo "step: 1 -> $grown workers in $took s"

# ---- 3. steady at 60% busy: no decision in 30 s -------------------------------------
# grown workers x 60% / the time a message took, as the decision measured
# it (40 ms and the sleep's overshoot, which a sanitizer build or a loaded
# machine stretches); then corrected by the busy read at that rate (the
# overshoot under this load, not the step's), again while a reading is
# more than 5 points off 60%, up to four times, so the load stands at 60%,
# midway between the thresholds. (Once was not always enough: the
# overshoot moves with the machine's load -- CI saw 11 ms a message at the
# step, then 14 ms, busy 89 % > 80 %: an up decision before the window
# began. And 70 % was too near 80 %: CI saw a reading of 81.2 % for 500 ms
# 24 s into the window, with the load calibrated at 70 %.)
rate=$((grown * 600000 / us))
for _ in 1 2 3 4; do
    config "$rate"
    reload_ok
    sleep 2
    busy=$(elastic busy_permille)
    [ "$busy" -gt 0 ] || fail "busy read $busy at $rate/s"
    [ "$busy" -ge 550 ] && [ "$busy" -le 650 ] && break
    rate=$((rate * 600 / busy))
done
sleep 1
u=$(ups) d=$(downs) sum=0 lo=1000 hi=0
for _ in $(seq 1 30); do
    sleep 1
    b=$(elastic busy_permille)
    sum=$((sum + b))
    [ "$b" -lt "$lo" ] && lo=$b
    [ "$b" -gt "$hi" ] && hi=$b
done
[ "$(ups)/$(downs)" = "$u/$d" ] || fail "decisions under a steady load: ups $u -> $(ups), downs $d -> $(downs)"
mean=$((sum / 30))
[ "$mean" -ge 520 ] && [ "$mean" -le 680 ] || fail "steady busy read $mean permille on average ($lo..$hi)"
echo "steady at $rate/s: busy $mean permille on average ($lo..$hi, a reading a second), no decision in 30 s"

# ---- 3b. thresholds and idle_timeout, live ----------------------------------------
size=$(target)
UP=50
config "$rate"
t0=$(date +%s.%N)
reload_ok
for _ in $(seq 1 400); do [ "$(ups)" -gt "$u" ] && break; sleep 0.01; done
t1=$(date +%s.%N)
[ "$(ups)" = $((u + 1)) ] || fail "busy > 50% under 60%: $(ups) up decisions, $u before"
took=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
awk -v t="$took" 'BEGIN { exit !(t <= 1.5) }' || fail "it took $took s to grow past the new threshold"
line2=$(grep 'work: autoscale: up ' "$log" | tail -1)
echo "$line2" | grep -q "up $size -> [0-9]* workers: busy [0-9.]*% > 50%" || fail "the decision's line: $line2"
[ "$(field pid)" = "$wpid" ] || fail "new thresholds replaced the pool"
echo "thresholds live: $line2"
# Back to 80 %, and calm must now last a minute before a step down: the
# growth past 50 % left it at 37 % busy, under 40 %, and from here to
# step 6 the test reads its size across reloads (a step down 2 s after
# this reload came 40 ms before step 4b's swap, which then replaced 11
# workers where the size read 13: CI).
UP=80 DIDLE=60s
config "$rate"
reload_ok
grown=$(target)
[ "$grown" -gt "$size" ] || fail "back to busy > 80%: size $grown, was $size before the decision"

v=$(spare_view)
spid=${v##*/}
[ "$v" = "3/0/$spid" ] || fail "spare without idle_timeout: size/expired/pid $v"
IDLE=100ms
config "$rate"
reload_ok
for _ in $(seq 1 500); do [ "$(spare_view)" = "1/2/$spid" ] && break; sleep 0.01; done
[ "$(spare_view)" = "1/2/$spid" ] || fail "spare with idle_timeout 100ms: size/expired/pid $(spare_view), not 1/2/$spid"
echo "idle_timeout live: spare 3 -> 1 worker, expired 2"

# ---- 4. a reload that changes nothing of the pool keeps its size --------------------
size=$(target)
config "$rate"
reload_ok
[ "$(target)" = "$size" ] || fail "a reload put work back from $size to $(target)"

# ---- 4b. new code for its workers (their args) keeps its size too ------------------
# The swap starts as many new workers as it runs (it started the file's
# size, here min 1: the pool fell from its grown size to 1 at each reload
# that changed its args).
size=$(target)
WARGS="latency: 40ms, jitter: 0ms"
config "$rate"
reload_ok
grep -q "work: $size workers replaced (sleep.sleep)" "$log" ||
    fail "the swap's line: $(grep 'workers replaced' "$log")"
[ "$(target)" = "$size" ] || fail "a swap of its workers put work back from $size to $(target)"
[ "$(field pid)" = "$wpid" ] || fail "new args replaced the pool"
echo "a swap keeps the running size: $size workers replaced"

# ---- 5. new bounds, live; a scale holds --------------------------------------------
config "$rate" 6
reload_ok
wait_for "work bounds 1..16 -> 1..6"
[ "$(target)" -le 6 ] || fail "target $(target) past the new max 6"
[ "$(field pid)" = "$wpid" ] || fail "new bounds replaced the pool"
"$shoalctl" scale work 2 > /dev/null || fail "scale work 2"
sleep 0.5
# The ups are counted before the target is read, not after: an up decided
# between the two reads (a loaded machine stretches each shoalctl) was in
# the count while the target still read 2, and the growth it made then
# failed as 'did not grow back'. Counted first, a growth seen below is
# always an up after the count.
u=$(ups)
[ "$(target)" = 2 ] || fail "scale 2 did not hold through the cooldown: $(target)"
# The load needs more than 2: autoscale grows it again, and the file's max
# holds it in -- at every reading for 3 s, never past 6.
most=0
for _ in $(seq 1 30); do
    sleep 0.1
    t=$(target)
    [ "$t" -gt "$most" ] && most=$t
done
[ "$most" -le 6 ] || fail "work grew to $most under the file's max 6"
[ "$(ups)" -gt "$u" ] && [ "$most" -gt 2 ] || fail "work did not grow back from 2 under its load: ups $u -> $(ups), at most $most"
echo "bounds from the file: grew back from 2 to $most under load, never past 6"

# ---- 6. no load: down by 2, cooldown apart, to 1 -----------------------------------
DIDLE=2s
config 0 6
reload_ok
u=$(ups)
for _ in $(seq 1 1500); do [ "$(target)" = 1 ] && break; sleep 0.01; done
[ "$(target)" = 1 ] || fail "work did not shrink to 1: $(target)"
grep 'work: autoscale: down ' "$log" | tail -1 | grep -q 'workers: calm for [0-9]* ms (busy 0.0% <= 40%, refused 0/s <= 0/s)$' ||
    fail "the last down line: $(grep 'work: autoscale: down ' "$log" | tail -1)"

# ---- 7. a pull pool, autoscaled from the file ------------------------------------
# jobs (kind: pull) has sat at 1 with no load. 75 a second of 40 ms: one
# decision grows it to what its reading needs within up.for + 1 s, the same
# pool (PID); new bounds from the file clamp it live; no load: back to 1.
[ "$(jups)$(jdowns)" = 00 ] || fail "jobs decided without load: $(grep 'jobs: autoscale' "$log")"
[ "$(field target_size jobs)/$(field kind jobs)" = 1/pull ] || fail "jobs before its load: $("$shoalctl" inspect jobs)"
jpid=$(field pid jobs)
PRATE=75
config 0 6
t0=$(date +%s.%N)
reload_ok
for _ in $(seq 1 400); do [ "$(jups)" -ge 1 ] && break; sleep 0.01; done
t1=$(date +%s.%N)
[ "$(jups)" = 1 ] || fail "jobs did not grow within 4 s of its load: $(grep 'jobs: autoscale' "$log")"
jline=$(grep 'jobs: autoscale: up ' "$log")
jgrown=$(echo "$jline" | sed -n 's/.*up 1 -> \([0-9]*\) workers.*/\1/p')
jneed=$(echo "$jline" | sed -n 's/.*: \([0-9]*\) workers at 60% busy).*/\1/p')
[ -n "$jgrown" ] && [ "$jgrown" = "$((jneed < JMAX ? jneed : JMAX))" ] ||
    fail "jobs grew to $jgrown, its reading needs $jneed: $jline"
[ "$jgrown" -ge 4 ] || fail "jobs grew to $jgrown for 75/s of 40 ms (5 at 60% busy): $jline"
took=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
awk -v t="$took" 'BEGIN { exit !(t <= 1.5) }' || fail "jobs took $took s to grow (for: 0.5 s + 1 s)"
[ "$(field pid jobs)" = "$jpid" ] || fail "jobs's growth replaced it"
[ "$(field target_size jobs)" = "$jgrown" ] || fail "jobs's target $(field target_size jobs), grown to $jgrown"
echo "pull: jobs 1 -> $jgrown workers in $took s"
JMAX=3
config 0 6
reload_ok
wait_for "jobs bounds 1..12 -> 1..3"
[ "$(field target_size jobs)" = 3 ] || fail "jobs's target $(field target_size jobs) past the new max 3"
[ "$(field pid jobs)" = "$jpid" ] || fail "jobs's new bounds replaced it"
PRATE=0
config 0 6
reload_ok
for _ in $(seq 1 800); do [ "$(field target_size jobs)" = 1 ] && break; sleep 0.01; done
[ "$(field target_size jobs)" = 1 ] || fail "jobs did not shrink to 1 without load: $(field target_size jobs)"
grep 'jobs: autoscale: down ' "$log" | tail -1 | grep -q 'workers: calm for [0-9]* ms (busy 0.0% <= 40%, refused 0/s <= 0/s)$' ||
    fail "jobs's last down line: $(grep 'jobs: autoscale: down ' "$log" | tail -1)"
[ "$(field pid jobs)" = "$jpid" ] || fail "jobs was replaced"

# ---- 8. nothing lost --------------------------------------------------------------
settled_ledger | grep -q ' + in flight 0;' || fail "the ledger did not settle"
"$shoalctl" status | grep -q '^ledger total: accepted [0-9]* = handled [0-9]* + failed 0 + dropped 0 + in flight 0;' ||
    fail "ledger: $("$shoalctl" status | grep ledger)"
stop_host 0
echo "ok: $(ups) up, $(downs) down decisions"
