#!/bin/bash
# test_isolated_upgrade.sh BUILD_DIR - an isolated pool's children run the
# binary shoald runs, not the file at its path: shoald runs from a copy,
# and that copy is replaced by another program (as a package upgrade
# renames a new shoald over the old). A child killed then is restarted
# from shoald's own code and answers; a reload that adds an isolated pool
# starts its child the same way. (Before: the restart exec'd the file now
# at the path -- here a script that exits 99 -- and the pool never came
# back.) The child is still named shoald in ps.
. "$(dirname "$0")/lib.sh" "$1"
export SHOAL_SOCKET=$tmp/ctl.sock

header() {
    cat <<YAML
runtime: { control: ctl.sock }
log: { level: info }
shutdown: { drain: 2s }
plugins:
  echo: $plugins/echo/echo.so
pools:
  iso: { worker: echo.echo, size: 1, isolation: process, args: { reply: pong } }
YAML
}

mkdir "$tmp/bin"
cp "$shoald" "$tmp/bin/shoald"
write ""
: > "$log"
"$tmp/bin/shoald" --no-table "$tmp/s.yaml" 2> "$log" &
pid=$!
wait_for "running $tmp/s.yaml: 1 pool"
[ "$("$shoalctl" call iso hello)" = pong ] || fail "iso does not answer"

# The upgrade: another program renamed over the path shoald runs from.
printf '#!/bin/sh\necho "the new file ran" >&2\nexit 99\n' > "$tmp/bin/shoald.new"
chmod +x "$tmp/bin/shoald.new"
mv "$tmp/bin/shoald.new" "$tmp/bin/shoald"

child=$(field iso process_pid)
kill -9 "$child"
wait_for "iso: isolated worker process $child was killed by SIGKILL" 1 300
for _ in $(seq 1 500); do
    [ "$("$shoalctl" call --timeout 1000 iso x 2> /dev/null)" = pong ] && break
    sleep 0.01
done
[ "$("$shoalctl" call --timeout 1000 iso x)" = pong ] ||
    fail "iso does not answer after its child was killed past the upgrade"
[ "$(count 'the new file ran')" = 0 ] || fail "a child ran the file now at shoald's path"
new=$(field iso process_pid)
[ "$new" != "$child" ] || fail "no new child"
[ "$(cat "/proc/$new/comm")" = shoald ] || fail "the child is named '$(cat "/proc/$new/comm")' in ps"

write "  iso2: { worker: echo.echo, size: 1, isolation: process, args: { reply: pong2 } }"
out=$("$shoalctl" --timeout 30000 reload 2>&1) || fail "a reload adding an isolated pool: $out"
[ "$("$shoalctl" call iso2 x)" = pong2 ] || fail "iso2 does not answer"
[ "$(count 'the new file ran')" = 0 ] || fail "a child ran the file now at shoald's path"
stop_host 0
echo "ok: children restarted and started from shoald's own code after its file was replaced"
