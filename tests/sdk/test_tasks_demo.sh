#!/bin/bash
# tests/sdk/test_tasks_demo.sh DEMO_BINARY SOURCE_DIR
#
# The README's section "Task pools for C programs" quotes
# examples/tasks/tasks_demo.c: the first ```c block after its heading must
# be that file, byte for byte. Then the program runs and must exit 0 and
# print exactly the lines the README shows after it (its stdout; the panic
# lines go to stderr).
set -u
demo=$1
src=$2
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

heading='## Task pools for C programs (shoal/tasks.h)'
# The n-th fenced block of the given language after the heading.
block() {
    awk -v h="$heading" -v lang="$1" -v want="$2" '
        $0 == h { in_sec = 1; next }
        in_sec && /^## / { exit }
        in_sec && !in_code && $0 == "```" lang { n++; if (n == want) { in_code = 1; next } }
        in_code && $0 == "```" { exit }
        in_code { print }
    ' "$src/README.md"
}

block c 1 > "$tmp/readme.c"
if ! diff -u "$src/examples/tasks/tasks_demo.c" "$tmp/readme.c"; then
    echo "FAIL: README's program differs from examples/tasks/tasks_demo.c"
    fail=1
fi

if ! "$demo" > "$tmp/out" 2> "$tmp/err"; then
    echo "FAIL: the demo exited non-zero"; cat "$tmp/out" "$tmp/err"
    fail=1
fi
block text 1 > "$tmp/readme.out"
if ! diff -u "$tmp/readme.out" "$tmp/out"; then
    echo "FAIL: the demo's output differs from the README's"
    fail=1
fi
if ! grep -q '^task 42 panicked: task 42 cannot go on$' "$tmp/err"; then
    echo "FAIL: no panic hook line on stderr"; cat "$tmp/err"
    fail=1
fi
[ $fail -eq 0 ] && echo "ok: README quotes tasks_demo.c, which runs and prints what the README says"
exit $fail
