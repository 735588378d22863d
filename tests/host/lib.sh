# lib.sh - what the shoald integration tests share. Source it with the build
# directory as $1; it sets shoald, shoalctl, plugins, tmp (removed at exit),
# log (shoald's stderr), pid (set it to shoald's; it is killed at exit), and
# defines fail, count and wait_for.
set -u
build=$(cd "$1" && pwd)
shoald=$build/bin/shoald
shoalctl=$build/bin/shoalctl
plugins=$build/plugins
tmp=$(mktemp -d)
pid=
log=$tmp/log
cleanup() {
    [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
# fail MESSAGE: says what failed, shows the end of shoald's log, exits 1
fail() {
    echo "FAIL: $*"
    echo "---- shoald's log (last 40 lines)"
    tail -40 "$log" 2>/dev/null
    exit 1
}
# count PATTERN: lines of the log matching it
count() { grep -c -- "$1" "$log" 2>/dev/null || true; }
# wait_for PATTERN [N]: until the log has N (default 1) such lines, 10 s at most
wait_for() {
    local n=${2:-1}
    for _ in $(seq 1 1000); do
        [ "$(count "$1")" -ge "$n" ] && return 0
        sleep 0.01
    done
    fail "no ${n}x '$1' in the log"
}
