#!/bin/bash
# test_deploy.sh BUILD_DIR - deploying a plugin the way people do: `cp`
# over the loaded file, then reload, 100 times, while a source keeps the
# pool busy.
#   - every reload after a finished cp succeeds and the pool then answers
#     with the new build's code (v1 and v2 of the same plugin, alternately);
#   - every 10th deploy is first caught half way (the file cut to 200
#     bytes): that reload fails, exit 1, naming the file and why; the old
#     code keeps answering; the finished cp then deploys as usual;
#   - shoald never dies; nothing is lost: once the source is removed, the
#     ledger balances with nothing failed, dropped or in flight; the copies
#     of replaced builds
#     are unmapped once their workers are gone: at the end shoald maps at
#     most two copies of x.so (the running build, and one whose last
#     retiring worker is finishing).
. "$(dirname "$0")/lib.sh" "$1"
fixtures=$build/fixtures
export SHOAL_SOCKET=$tmp/ctl.sock
mkdir "$tmp/plugins"
cp "$fixtures/v1.so" "$tmp/plugins/x.so"
cat > "$tmp/s.yaml" <<YAML
runtime: { control: ctl.sock }
log: { level: info }
plugins:
  x: plugins/x.so
  loadgen: $plugins/loadgen/loadgen.so
pools:
  w:
    worker: x.v
    size: 2
    mailbox: 100
  feed:
    worker: loadgen.loadgen
    size: 1
    mailbox: unbounded
    args: { target: w, rate: 20000 }
YAML
# ask: w's answer to a call; a call refused because every worker is busy
# (the source keeps them so) is asked again, 5 s at most
ask() {
    local out
    for _ in $(seq 1 500); do
        out=$("$shoalctl" call w hi 2>&1) && break
        case $out in *busy*) sleep 0.01 ;; *) break ;; esac
    done
    echo "$out"
}
# answers V: until calls to w are answered by build V (5 s at most)
answers() {
    for _ in $(seq 1 500); do
        [ "$(ask)" = "$1" ] && return 0
        sleep 0.01
    done
    fail "w answers $(ask), not $1"
}
: > "$log"
"$shoald" --no-table "$tmp/s.yaml" 2> "$log" &
pid=$!
wait_for "running $tmp/s.yaml: 2 pools"
[ "$(ask)" = v1 ] || fail "v1 does not answer"

cur=v1 half=0
for i in $(seq 1 100); do
    next=v$((i % 2 + 1))
    if [ $((i % 10)) = 0 ]; then
        head -c 200 "$fixtures/$next.so" > "$tmp/plugins/x.so" # cp, caught half way
        out=$("$shoalctl" reload 2>&1) && fail "deploy $i: a reload of a cut file succeeded"
        echo "$out" | grep -q "plugins.x: $tmp/plugins/x.so: " || fail "deploy $i: $out"
        [ "$(ask)" = "$cur" ] || fail "deploy $i: the old code answers $(ask)"
        half=$((half + 1))
    fi
    cp "$fixtures/$next.so" "$tmp/plugins/x.so" # in place: the same inode
    "$shoalctl" reload > "$tmp/out" 2>&1 || fail "deploy $i: $(cat "$tmp/out")"
    answers "$next"
    cur=$next
    kill -0 "$pid" 2> /dev/null || fail "shoald died at deploy $i"
done
# Each deploy's two new workers said so from their threads, in the log's
# format, while the host moved to the new generation.
[ "$(count ' w/v: version v[12]: ready$')" -ge 202 ] || fail "$(count 'version v[12]: ready') ready lines"
echo "ok: 100 deploys, $half caught half way"
out=$("$shoalctl" reload 2>&1) # one more: a no-op, for the count below
[ "$(sed -n 's/^reloads \([0-9]*\) ok, \([0-9]*\) failed$/\1 \2/p' <<< "$("$shoalctl" status)")" = "101 10" ] ||
    fail "$("$shoalctl" status | grep '^reloads')"

# Copies mapped: the running build's, and at most one still retiring.
inodes=0
for _ in $(seq 1 500); do
    inodes=$(grep 'memfd:shoal:x.so' "/proc/$pid/maps" | awk '{ print $5 }' | sort -u | wc -l)
    [ "$inodes" -le 2 ] && break
    sleep 0.01
done
[ "$inodes" -ge 1 ] && [ "$inodes" -le 2 ] || fail "$inodes copies of x.so mapped after 100 deploys"

# Nothing lost: the source removed, w drained, the ledger balances.
sed -i '/^  feed:/,$d' "$tmp/s.yaml"
"$shoalctl" reload > /dev/null || fail "reload without the source"
wait_for "removed feed"
line=$(settled_ledger)
echo "$line" | grep -q 'failed 0 + dropped 0 + in flight 0;' || fail "$line"
kill -0 "$pid" 2> /dev/null || fail "shoald died"
[ "$(count Sanitizer)" = 0 ] || fail "a sanitizer report in the log"
echo "ok: test_deploy ($line)"
