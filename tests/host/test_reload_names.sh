#!/bin/bash
# test_reload_names.sh BUILD_DIR - the names a reload leaves registered
# (shoal_whereis: what a loadgen looks its target up by, every tick).
#
#   1. A source becomes a pool of its name: the new pool is registered
#      before the reload stops the old source, and the source's
#      unregister must not take the name from it. A loadgen source aimed
#      at the name reaches the pool: its handled count grows, and the
#      loadgen's sends stop being refused with "no such actor". (It lost
#      the name: every send after the reload went to no one.)
#   2. And back: the pool becomes a source of its name again; the loadgen
#      reaches the source (its sends are answered, none refused).
#   3. A pool removed while another of the file keeps running: its name is
#      gone (a loadgen aimed at it counts every send noproc).
. "$(dirname "$0")/lib.sh" "$1"
export SHOAL_SOCKET=$tmp/ctl.sock

header() {
    cat <<YAML
runtime: { control: ctl.sock }
log: { level: info }
shutdown: { drain: 1s }
plugins:
  echo: $plugins/echo/echo.so
  loadgen: $plugins/loadgen/loadgen.so
pools:
  api: { worker: echo.echo, size: 1 }
YAML
}

# The loadgen's counters (loadgen.h: sent, refused_full, refused_busy, noproc, ...
# as its stats reply lays them out): sent is the 1st, noproc the 4th.
sent() { loadgen "$1" 1; }
noproc() { loadgen "$1" 4; }

# until_grows WHAT CMD...: CMD's number grows by 20 or more within 5 s
until_grows() {
    local what=$1 a b
    shift
    a=$("$@")
    for _ in $(seq 1 500); do
        b=$("$@")
        [ "$b" -ge $((a + 20)) ] && return 0
        sleep 0.01
    done
    fail "$what: stayed at $b (from $a)"
}

# steady WHAT CMD...: CMD's number does not move over 300 ms
steady() {
    local what=$1 a b
    shift
    a=$("$@")
    sleep 0.3
    b=$("$@")
    [ "$a" = "$b" ] || fail "$what: moved $a -> $b"
}

write "sources:
  feed: { actor: echo.echo }
  load: { actor: loadgen.loadgen, args: { target: feed, rate: 500 } }"
"$shoald" --no-table "$tmp/s.yaml" 2> "$log" &
pid=$!
wait_for "running $tmp/s.yaml: 1 pool"
until_grows "the loadgen's sends to source feed" sent load
steady "noproc while feed is a source" noproc load

# ---- 1. the source feed becomes a pool feed -----------------------------------------
write "  feed: { worker: echo.echo, size: 1 }
sources:
  load: { actor: loadgen.loadgen, args: { target: feed, rate: 500 } }"
[ "$("$shoalctl" reload)" = "generation 2 (was 1)" ] || fail "reload 2"
wait_for "reload: generation 2 from $tmp/s.yaml: started feed; source feed removed; ledger"
handled() { field feed messages_handled; }
until_grows "the pool feed's handled count" handled
steady "noproc once feed is a pool" noproc load
echo "1: a source become a pool keeps its name"

# ---- 2. and back: a source feed again -----------------------------------------------
write "sources:
  feed: { actor: echo.echo }
  load: { actor: loadgen.loadgen, args: { target: feed, rate: 500 } }"
[ "$("$shoalctl" reload)" = "generation 3 (was 2)" ] || fail "reload 3"
wait_for "reload: generation 3 from $tmp/s.yaml: removed feed; source feed started; ledger"
until_grows "the loadgen's sends to source feed again" sent load
steady "noproc once feed is a source again" noproc load
echo "2: a pool become a source keeps its name"

# ---- 3. removed: the name is gone -----------------------------------------------------
write "sources:
  load: { actor: loadgen.loadgen, args: { target: feed, rate: 500 } }"
[ "$("$shoalctl" reload)" = "generation 4 (was 3)" ] || fail "reload 4"
wait_for "reload: generation 4 from $tmp/s.yaml: source feed removed; ledger"
until_grows "noproc once feed is gone" noproc load
echo "3: a removed source's name is gone"

stop_host 0
echo "test_reload_names: ok"
