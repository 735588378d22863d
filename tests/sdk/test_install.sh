#!/bin/bash
# tests/sdk/test_install.sh BUILD_DIR SOURCE_DIR
#
# The install as a user gets it. Installs BUILD_DIR into a temporary prefix
# and checks the tree: the programs (shoald, shoalctl, shoal-plugin-check),
# the example config etc/shoal/shoal.yaml, the systemd unit (its exact
# lines; `systemd-analyze verify` when it is installed), the man pages
# (groff -man -ww, man -l), and every installed ELF file's RUNPATH
# ($ORIGIN-relative only, nothing of the build tree) and shoald's SONAME.
# After the prefix is moved, the installed shoald runs the installed config
# (plugins by name, from the moved prefix, no LD_LIBRARY_PATH anywhere):
# every pool starts (shoalctl status), answers a call, and stops with exit
# 0; and the out-of-tree hello plugin, built against the moved prefix with
# CMake and with the README's pkg-config line, is loaded by name
# (runtime.plugin_path, then SHOAL_PLUGIN_PATH) and answers a call.
#
# The SDK part: installs BUILD_DIR into a temporary prefix, then
# builds examples/hello-plugin against that prefix
#   1. with CMake:            find_package(shoal) via CMAKE_PREFIX_PATH,
#   2. with make + pkg-config: PKG_CONFIG_PATH=<prefix>/<libdir>/pkgconfig,
# and checks each hello.so: it exists, exports only the descriptor
# `shoal_plugin`, carries the .note.shoal ABI note, and leaves no symbol
# undefined but libc's and shoal_* ones that libshoal defines. When
# shoal-plugin-check is installed, it then loads each hello.so, runs its
# behaviour (init with args, messages, a call, stop) and prints its args
# schema (--describe). The README's own worked plugin ("Write a plugin") is
# built with its pkg-config line and -Wall -Wextra -Werror, and
# shoal-plugin-check must print exactly the README's sample for it.
# Finally the prefix is
# moved elsewhere and the CMake build is done again (the package must be
# relocatable), plus a pkg-config build (shoal.pc is relocatable too).
#
# The example builds use the default compiler with no flags from the main
# build: a sanitizer build of shoal (clang, -fsanitize=...) installs an
# instrumented libshoal, but the plugin itself is not instrumented, so it
# references no sanitizer symbols and links with -z defs as usual (-z defs
# only concerns the plugin's own references; those of libshoal are resolved
# when the host, itself built with the sanitizer, loads both). Nothing needs
# passing through. shoal-plugin-check is built with the sanitizer like the
# rest, so under such a build this test runs the plugin under it too.
#
# Exits 0 when every check passed; otherwise non-zero, naming what failed.
# SHOAL_TEST_KEEP=1 keeps the temporary directory for a look afterwards.
set -uo pipefail
# No `| grep -q` here: under pipefail a pipeline into grep -q fails with
# its writer's SIGPIPE (141) when grep exits at a match before the writer
# has written its last line -- bash's echo writes a line at a time. A
# check then failed with the line it looked for in plain sight, under load
# (a full ctest -j2 beside other work). grep -q reads a here-string, or the
# last grep of a pipe reads it all (>/dev/null).

if [ $# -ne 2 ]; then
    echo "usage: $0 BUILD_DIR SOURCE_DIR" >&2
    exit 2
fi
build=$(cd -- "$1" && pwd) || exit 2
src=$(cd -- "$2" && pwd) || exit 2
example=$src/examples/hello-plugin

# The example is built as a user would: nothing from the caller's flags.
unset CFLAGS CPPFLAGS LDFLAGS CMAKE_PREFIX_PATH PKG_CONFIG_PATH PKG_CONFIG_LIBDIR \
    CMAKE_GENERATOR CMAKE_BUILD_TYPE MAKEFLAGS MFLAGS MAKELEVEL

tmp=$(mktemp -d "${TMPDIR:-/tmp}/shoal-test-install.XXXXXX") || exit 2
cleanup() {
    if [ "${SHOAL_TEST_KEEP:-0}" = 1 ]; then
        echo "kept $tmp"
    else
        rm -rf -- "$tmp"
    fi
}
trap cleanup EXIT

failures=0
step() { echo "-- $*"; }
ok() { echo "   ok   $*"; }
fail() {
    echo "   FAIL $*" >&2
    failures=$((failures + 1))
}
# die MESSAGE [LOG]: a step that everything after it needs failed.
die() {
    echo "test_install: FAILED: $1" >&2
    if [ $# -gt 1 ] && [ -f "$2" ]; then
        echo "---- last lines of $2:" >&2
        tail -n 40 "$2" >&2
    fi
    exit 1
}

for tool in cmake make pkg-config nm readelf; do
    command -v "$tool" >/dev/null || die "$tool is not installed"
done
[ -f "$example/CMakeLists.txt" ] || die "no example project at $example"
[ -f "$build/CMakeCache.txt" ] || die "$build is not a configured build directory"

# ---- install ------------------------------------------------------------------
prefix=$tmp/prefix
step "cmake --install $build --prefix $prefix"
cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 ||
    die "cmake --install failed (is the build complete?)" "$tmp/install.log"

pc=$(find "$prefix" -path '*/pkgconfig/shoal.pc' | head -n 1)
config=$(find "$prefix" -path '*/cmake/shoal/shoalConfig.cmake' | head -n 1)
[ -n "$pc" ] || die "no pkgconfig/shoal.pc under $prefix"
[ -n "$config" ] || die "no cmake/shoal/shoalConfig.cmake under $prefix"
libdir=$(dirname -- "$(dirname -- "$pc")")
libshoal=$libdir/libshoal.so
for f in "$prefix/include/shoal/shoal.h" "$prefix/include/shoal/plugin.h" "$libshoal" \
    "$(dirname -- "$config")/shoalConfigVersion.cmake" \
    "$(dirname -- "$config")/shoalTargets.cmake" \
    "$(dirname -- "$config")/ShoalPlugin.cmake"; do
    [ -e "$f" ] || die "not installed: ${f#"$tmp"/}"
done
ok "installed: headers, ${libshoal#"$prefix"/}, ${pc#"$prefix"/}, ${config#"$prefix"/}"
grep -q '^plugindir=\${libdir}/shoal/plugins$' "$pc" || fail "shoal.pc has no plugindir=\${libdir}/shoal/plugins"

# Every bundled plugin the build made is installed in the plugin directory.
plugindir=$libdir/shoal/plugins
for so in "$build"/plugins/*/*.so; do
    [ -e "$so" ] || continue
    if [ -f "$plugindir/$(basename -- "$so")" ]; then
        ok "bundled plugin installed: ${plugindir#"$prefix"/}/$(basename -- "$so")"
    else
        fail "bundled plugin $(basename -- "$so") not installed in ${plugindir#"$prefix"/}"
    fi
done

# ---- the host: programs, config, unit, man pages, RUNPATHs ---------------------
for f in bin/shoald bin/shoalctl bin/shoal-plugin-check; do
    [ -x "$prefix/$f" ] && ok "installed: $f" || fail "not installed: $f"
done
etc=$prefix/etc/shoal/shoal.yaml
unit=$prefix/lib/systemd/system/shoald.service
[ -f "$etc" ] && ok "installed: etc/shoal/shoal.yaml" || die "not installed: etc/shoal/shoal.yaml"
[ -f "$unit" ] && ok "installed: lib/systemd/system/shoald.service" ||
    die "not installed: lib/systemd/system/shoald.service"

# The unit: the lines systemd acts on, with the install's own paths.
for line in "Type=notify" "NotifyAccess=main" \
    "ExecStart=$prefix/bin/shoald --no-table $prefix/etc/shoal/shoal.yaml" \
    "ExecReload=$prefix/bin/shoalctl --socket /run/shoal/shoal.sock reload" \
    "Restart=on-failure" "WatchdogSec=10s" "NoNewPrivileges=yes" "ProtectSystem=strict" \
    "RuntimeDirectory=shoal" "TimeoutStopSec=30s"; do
    grep -qxF -- "$line" "$unit" && ok "unit: $line" || fail "unit has no line '$line'"
done
# The loader maps memfd copies of the plugins executable: never this.
grep -q '^MemoryDenyWriteExecute' "$unit" && fail "unit sets MemoryDenyWriteExecute (breaks plugins)"
# Its stop timeout is above the installed config's shutdown.drain.
drain=$(sed -n 's/^  drain: *\([0-9]*\)s.*/\1/p' "$etc")
[ -n "$drain" ] && [ "$drain" -lt 30 ] && ok "unit: TimeoutStopSec=30s > shutdown.drain ${drain}s" ||
    fail "the config's shutdown.drain ('$drain' s) is not below TimeoutStopSec=30s"
grep -qx '  control: /run/shoal/shoal.sock.*' "$etc" ||
    fail "the installed config's runtime.control is not /run/shoal/shoal.sock"

mandir=$prefix/share/man
for page in man8/shoald.8 man8/shoalctl.8 man1/shoal-plugin-check.1 man5/shoal.yaml.5; do
    if [ ! -f "$mandir/$page" ]; then
        fail "man page not installed: share/man/$page"
        continue
    fi
    if command -v groff >/dev/null; then
        out=$(LC_ALL=C groff -man -ww -z "$mandir/$page" 2>&1)
        [ -z "$out" ] && ok "man page $page: groff -man -ww clean" || fail "groff -ww on $page: $out"
    fi
    if command -v man >/dev/null; then
        out=$(LC_ALL=C MANWIDTH=80 man -l "$mandir/$page" 2>&1 >"$tmp/page.txt")
        if [ -z "$out" ] && grep -q '^NAME' "$tmp/page.txt"; then
            ok "man page $page: man -l renders it"
        else
            fail "man -l $page: $out"
        fi
    fi
done

# systemd's own check of the unit (the Documentation= pages found through
# MANPATH): it exits 0 even on unknown keys, so any output is a failure.
if command -v systemd-analyze >/dev/null; then
    out=$(MANPATH=$mandir systemd-analyze verify "$unit" 2>&1)
    [ $? -eq 0 ] && [ -z "$out" ] && ok "systemd-analyze verify shoald.service: clean" ||
        fail "systemd-analyze verify shoald.service: $out"
else
    echo "   skip systemd-analyze verify: systemd-analyze is not installed"
fi

# RUNPATHs: $ORIGIN-relative only, nothing from the build or source tree.
# shoald and shoal-plugin-check carry libshoal's SONAME: plugins bind to
# their own copy of the runtime (cmake/Install.cmake).
while read -r elf; do
    rp=$(readelf -d "$elf" 2>/dev/null | sed -n 's/.*(R[UN]*PATH).*\[\(.*\)\]$/\1/p')
    [ -n "$rp" ] || continue
    bad=$(echo "$rp" | tr ':' '\n' | grep -v '^\$ORIGIN' | tr '\n' ' ')
    case $rp in *"$build"* | *"$src"*) bad="$bad(build path)" ;; esac
    [ -z "$bad" ] && ok "RUNPATH of ${elf#"$prefix"/}: $rp" ||
        fail "RUNPATH of ${elf#"$prefix"/} is '$rp': $bad"
done < <(find "$prefix" -type f \( -name '*.so*' -o -path '*/bin/*' \) | sort)
for p in shoald shoal-plugin-check; do
    grep -q 'SONAME.*\[libshoal\.so\.0\]' <<<"$(readelf -d "$prefix/bin/$p")" &&
        ok "bin/$p has SONAME libshoal.so.0" || fail "bin/$p has no SONAME libshoal.so.0"
done

# Symbols libshoal defines: a plugin's shoal_* references must be among them.
nm -D --defined-only "$libshoal" | awk '{print $NF}' | sed 's/@.*//' | sort -u >"$tmp/libshoal.syms" ||
    die "nm failed on $libshoal"

checker=$prefix/bin/shoal-plugin-check
[ -x "$checker" ] || checker=

# check_plugin WHAT SO: the checks every built hello.so must pass.
check_plugin() {
    local what=$1 so=$2 bad
    if [ ! -f "$so" ]; then
        fail "$what: $so was not built"
        return
    fi
    ok "$what: built ${so#"$tmp"/}"

    # Exported: only the descriptor. (_init/_fini/_edata/_end/__bss_start are
    # defined by older linkers in every shared object; they are not ours.)
    bad=$(nm -D --defined-only "$so" | awk '{print $NF}' | sed 's/@.*//' |
        grep -vxE 'shoal_plugin|_init|_fini|_edata|_end|__bss_start' | tr '\n' ' ')
    if ! grep -qx shoal_plugin <<<"$(nm -D --defined-only "$so" | awk '{print $NF}')"; then
        fail "$what: does not export shoal_plugin"
    elif [ -n "$bad" ]; then
        fail "$what: exports more than shoal_plugin: $bad"
    else
        ok "$what: exports only shoal_plugin"
    fi

    # The ABI note the host reads before loading.
    notes=$(readelf -n "$so")
    if grep -q 'notes found in: \.note\.shoal' <<<"$notes" &&
        grep -A3 '\.note\.shoal' <<<"$notes" | grep -w shoal >/dev/null; then
        ok "$what: has the .note.shoal ABI note"
    else
        fail "$what: no .note.shoal note (readelf -n)"
    fi

    # Undefined: weak ones are fine; strong ones must be libc's (GLIBC
    # versioned) or public shoal_* symbols that libshoal defines.
    bad=""
    local kind sym name
    while read -r kind sym; do
        [ "$kind" = U ] || continue
        name=${sym%%@*}
        case $sym in
        shoal_*)
            grep -qx -- "$name" "$tmp/libshoal.syms" || bad="$bad $sym(not in libshoal)"
            ;;
        *@GLIBC_*) ;;
        *) bad="$bad $sym" ;;
        esac
    done < <(nm -D --undefined-only "$so")
    if [ -n "$bad" ]; then
        fail "$what: undefined symbols beyond libc and shoal_*:$bad"
    else
        ok "$what: undefined symbols are libc's and libshoal's only"
    fi
    if grep NEEDED <<<"$(readelf -d "$so")" | grep 'libshoal\.so' >/dev/null; then
        ok "$what: links libshoal"
    else
        fail "$what: has no DT_NEEDED on libshoal"
    fi

    # Load it as the host would and run the behaviour, with a name in its args.
    if [ -n "$checker" ]; then
        local out=$tmp/check-$RANDOM.log
        if env -u LD_LIBRARY_PATH "$checker" --args 'name: installed' "$so" >"$out" 2>&1 &&
            grep -q 'call: reply type 1, 17 bytes, status SHOAL_OK' "$out"; then
            ok "$what: shoal-plugin-check passed (reply 'hello, installed')"
        else
            fail "$what: shoal-plugin-check failed:"
            sed 's/^/        /' "$out" >&2
        fi
        # Its args schema (ABI 1.3 and later), built from the installed headers.
        if env -u LD_LIBRARY_PATH "$checker" --describe "$so" >"$out" 2>&1 &&
            grep -qx '    name  string  default world  0..64 bytes  who to greet, at most 64 bytes: calls are answered "hello, <name>"' "$out"; then
            ok "$what: shoal-plugin-check --describe shows its args schema"
        else
            fail "$what: shoal-plugin-check --describe:"
            sed 's/^/        /' "$out" >&2
        fi
    fi
}

# build_cmake WHAT PREFIX BUILD_DIR: the example with find_package(shoal).
build_cmake() {
    local what=$1 pfx=$2 dir=$3
    step "$what: cmake -S examples/hello-plugin -DCMAKE_PREFIX_PATH=${pfx#"$tmp"/}"
    if ! cmake -S "$example" -B "$dir" -DCMAKE_PREFIX_PATH="$pfx" \
        -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF >"$dir.log" 2>&1 ||
        ! cmake --build "$dir" >>"$dir.log" 2>&1; then
        fail "$what: the CMake build failed"
        tail -n 40 "$dir.log" | sed 's/^/        /' >&2
        return
    fi
    # The right SDK was found, and its paths point into this prefix.
    local found plugdir
    found=$(sed -n 's/^shoal_DIR:PATH=//p' "$dir/CMakeCache.txt")
    plugdir=$(sed -n 's/^HELLO_PLUGIN_DIR:PATH=//p' "$dir/CMakeCache.txt")
    case $found in
    "$pfx"/*) ok "$what: found the SDK in ${found#"$tmp"/}" ;;
    *) fail "$what: find_package(shoal) found '$found', not the one in $pfx" ;;
    esac
    case $plugdir in
    "$pfx"/*/shoal/plugins) ok "$what: SHOAL_PLUGIN_DIR is ${plugdir#"$tmp"/}" ;;
    *) fail "$what: SHOAL_PLUGIN_DIR is '$plugdir', not under $pfx" ;;
    esac
    check_plugin "$what" "$dir/hello.so"
}

# build_make WHAT PKG_CONFIG_PATH DIR [PKG_CONFIG]: the example's Makefile.
build_make() {
    local what=$1 pcpath=$2 dir=$3 pkgconfig=${4:-pkg-config}
    step "$what: PKG_CONFIG_PATH=${pcpath#"$tmp"/} make"
    mkdir -p "$dir" && cp "$example/Makefile" "$example/hello.c" "$dir/" || die "cannot copy the example"
    if ! PKG_CONFIG_PATH=$pcpath make -C "$dir" PKG_CONFIG="$pkgconfig" >"$dir.log" 2>&1; then
        fail "$what: the make build failed"
        tail -n 40 "$dir.log" | sed 's/^/        /' >&2
        return
    fi
    local cflags
    cflags=$(PKG_CONFIG_PATH=$pcpath $pkgconfig --cflags shoal)
    # -I<the prefix the tree is in now>/include, however it is spelled
    # (shoal.pc says ${pcfiledir}/../..).
    local inc=${cflags#*-I}
    inc=${inc%% *}
    if [ -d "$inc" ] && [ "$(cd "$inc" && pwd -P)" = "$(cd "$prefix_now/include" && pwd -P)" ]; then
        ok "$what: pkg-config --cflags gives ${prefix_now#"$tmp"/}/include ($cflags)"
    else
        fail "$what: pkg-config --cflags gives '$cflags', not -I$prefix_now/include"
    fi
    check_plugin "$what" "$dir/hello.so"
}

prefix_now=$prefix
build_cmake "cmake" "$prefix" "$tmp/build-cmake"
build_make "pkg-config" "$(dirname -- "$pc")" "$tmp/build-make"

# ---- relocated --------------------------------------------------------------
moved=$tmp/elsewhere/prefix
step "moving the prefix to ${moved#"$tmp"/}"
mkdir -p "$(dirname -- "$moved")" && mv "$prefix" "$moved" || die "cannot move the prefix"
libdir=$moved${libdir#"$prefix"}
libshoal=$libdir/libshoal.so
checker=${checker:+$moved/bin/shoal-plugin-check}
prefix_now=$moved
build_cmake "cmake, moved" "$moved" "$tmp/build-cmake-moved"
build_make "pkg-config, moved (shoal.pc finds its prefix)" "$libdir/pkgconfig" \
    "$tmp/build-make-moved" "pkg-config"

# ---- the moved install runs -------------------------------------------------------
# run_host WHAT CONFIG POOL DATA WANT [VAR=VALUE...]: the installed shoald on
# CONFIG (no LD_LIBRARY_PATH), every pool of CONFIG in `shoalctl status`,
# `shoalctl call POOL DATA` answering WANT (and, when $echo_too names a pool
# of echo, `call $echo_too DATA` answering DATA), `shoalctl stop`, exit 0.
run_host() {
    local what=$1 cfg=$2 pool=$3 data=$4 want=$5
    shift 5
    local sock log pid out rc i p
    local ctl=()
    if [ -n "${control:-}" ]; then # shoald --control: the socket here, not the file's
        sock=$control
        ctl=(--control "$control")
    else
        sock=$(sed -n 's/^  control: *\([^ #]*\).*/\1/p' "$cfg")
    fi
    log=$tmp/shoald-$RANDOM.log
    step "$what: installed shoald on ${cfg#"$tmp"/}"
    env -u LD_LIBRARY_PATH "$@" "$moved/bin/shoald" --no-table "${ctl[@]}" "$cfg" >"$log" 2>&1 &
    pid=$!
    for i in $(seq 100); do
        [ -S "$sock" ] && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if [ ! -S "$sock" ]; then
        fail "$what: shoald did not start:"
        sed 's/^/        /' "$log" >&2
        kill "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        return
    fi
    # A pool with `isolation: process` starts its child after the socket is
    # up (README, Isolation): its size is 0 until then. Wait up to 20 s (a
    # sanitizer build starts slowly) for every pool to have a member.
    local pools missing
    pools=$(sed -n '/^pools:/,/^[a-z]/ s/^  \([a-z-]*\):.*/\1/p' "$cfg")
    for i in $(seq 200); do
        out=$(env -u LD_LIBRARY_PATH "$moved/bin/shoalctl" --socket "$sock" status 2>&1)
        missing=
        for p in $pools; do
            grep -q "^pool $p size [1-9]" <<<"$out" || missing="$missing $p"
        done
        [ -z "$missing" ] && break
        sleep 0.1
    done
    for p in $pools; do
        grep -q "^pool $p size [1-9]" <<<"$out" && ok "$what: pool $p started" ||
            fail "$what: no started pool $p in status after 20 s: $out"
    done
    # --raw: the reply's bytes (hello's is a NUL-padded buffer), NULs dropped.
    out=$(env -u LD_LIBRARY_PATH "$moved/bin/shoalctl" --socket "$sock" call --raw "$pool" "$data" |
        tr -d '\0')
    [ "$out" = "$want" ] && ok "$what: call $pool $data: $out" ||
        fail "$what: call $pool $data answered '$out', not '$want'"
    if [ -n "${echo_too:-}" ]; then
        out=$(env -u LD_LIBRARY_PATH "$moved/bin/shoalctl" --socket "$sock" call "$echo_too" "$data")
        [ "$out" = "$data" ] && ok "$what: call $echo_too $data: $out" ||
            fail "$what: call $echo_too $data answered '$out'"
    fi
    if [ -n "${scrape:-}" ]; then # GET /metrics of this host: its pool's counter
        out=$(python3 -c 'import sys, urllib.request
print(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' "$scrape" 2>&1)
        grep -q "^shoal_pool_messages_forwarded_total{pool=\"$pool\"} [1-9]" <<<"$out" &&
            ok "$what: $scrape has shoal_pool_messages_forwarded_total{pool=\"$pool\"} > 0" ||
            fail "$what: $scrape: no forwarded count for $pool: $(echo "$out" | head -5)"
    fi
    env -u LD_LIBRARY_PATH "$moved/bin/shoalctl" --socket "$sock" stop >/dev/null 2>&1 ||
        fail "$what: shoalctl stop failed"
    wait "$pid"
    rc=$?
    [ "$rc" -eq 0 ] && ok "$what: shoald stopped, exit 0" || {
        fail "$what: shoald exited $rc:"
        sed 's/^/        /' "$log" >&2
    }
}

# shoal-demo links libshoal.so: found through its $ORIGIN RUNPATH, moved.
if [ -x "$moved/bin/shoal-demo" ]; then
    out=$(env -u LD_LIBRARY_PATH ldd "$moved/bin/shoal-demo" | grep 'libshoal\.so')
    case $out in
    *"=> $moved/bin/../lib/libshoal.so.0 "* | *"=> $libdir/libshoal.so.0 "*) ok "bin/shoal-demo finds ${libdir#"$tmp"/}/libshoal.so.0" ;;
    *) fail "bin/shoal-demo: ldd says: $out" ;;
    esac
fi

# The installed config as it is, its control socket here (shoald --control:
# the real one is in /run), its /metrics scraped on 127.0.0.1:9464 - unless
# that port is taken on this machine: then a copy listening on a free port,
# not scraped (said so).
etc=$moved/etc/shoal/shoal.yaml
run_cfg=$etc scrape=http://127.0.0.1:9464/metrics
if ! python3 -c "import socket; s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind((\"127.0.0.1\", 9464)); s.listen()" 2>/dev/null; then
    echo "   skip 127.0.0.1:9464 is taken here: the installed config runs from a copy on port 0, not scraped"
    sed 's|listen: 127.0.0.1:9464|listen: 127.0.0.1:0|' "$etc" >"$tmp/installed.yaml"
    run_cfg=$tmp/installed.yaml scrape=
fi
out=$(env -u LD_LIBRARY_PATH "$moved/bin/shoald" --check "$etc" 2>&1)
want="$etc: ok: 3 plugins, 2 pools (1 nested), 2 sources
plugin echo: $libdir/shoal/plugins/echo.so (the install's plugin directory)
plugin burn: $libdir/shoal/plugins/burn.so (the install's plugin directory)
plugin loadgen: $libdir/shoal/plugins/loadgen.so (the install's plugin directory)"
[ "$out" = "$want" ] && ok "shoald --check on the installed config: plugins found in the moved prefix" ||
    fail "shoald --check $etc said: $out"
control=$tmp/ctl.sock run_host "installed config" "$run_cfg" api hello hello
scrape=

# hello.so built against the moved prefix with the README's pkg-config line.
readme=$tmp/build-readme-moved
mkdir -p "$readme" && cp "$example/hello.c" "$readme/"
step "README line: cc ... \$(pkg-config --cflags --libs shoal), moved prefix"
# (No --define-prefix: the moved shoal.pc finds its prefix from where it is.)
if (cd "$readme" && PKG_CONFIG_PATH=$libdir/pkgconfig cc -std=c11 -O2 -fPIC -fvisibility=hidden \
    -fno-gnu-unique -shared -Wl,-z,defs -o hello.so hello.c \
    $(PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --cflags --libs shoal)) \
    >"$readme.log" 2>&1; then
    check_plugin "README line, moved" "$readme/hello.so"
else
    fail "the README's pkg-config line failed:"
    sed 's/^/        /' "$readme.log" >&2
fi

# The README's own plugin ("Write a plugin"), built as it says and checked
# as it shows: shoal-plugin-check's every line is the README's sample.
worked=$tmp/build-readme-worked
mkdir -p "$worked"
awk '/^## Write a plugin/ { p = 1 } p && /^```c$/ { c = 1; next } c && /^```$/ { exit } c' \
    "$src/README.md" >"$worked/hello.c"
awk -v cmd="$ \"\$HOME/shoal/bin/shoal-plugin-check\" --args 'name: shoal' hello.so" \
    '$0 == cmd { c = 1; next } c && /^```$/ { exit } c' "$src/README.md" >"$worked/want.txt"
step "the README's worked plugin, built with its pkg-config line and checked"
if [ ! -s "$worked/hello.c" ] || [ ! -s "$worked/want.txt" ]; then
    fail "README: no worked plugin or no shoal-plugin-check sample under 'Write a plugin'"
elif (cd "$worked" && PKG_CONFIG_PATH=$libdir/pkgconfig cc -std=c11 -O2 -Wall -Wextra -Werror \
    -fPIC -fvisibility=hidden -fno-gnu-unique -shared -Wl,-z,defs -o hello.so hello.c \
    $(PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --cflags --libs shoal)) >"$worked.log" 2>&1; then
    (cd "$worked" && env -u LD_LIBRARY_PATH "$moved/bin/shoal-plugin-check" --args 'name: shoal' \
        hello.so) >"$worked/got.txt" 2>&1
    if diff "$worked/want.txt" "$worked/got.txt" >"$worked/diff.txt"; then
        ok "README's plugin: shoal-plugin-check printed the README's $(wc -l <"$worked/want.txt") lines"
    else
        fail "README's plugin: shoal-plugin-check differs from the README's sample (< README, > got):"
        sed 's/^/        /' "$worked/diff.txt" >&2
    fi
else
    fail "the README's worked plugin did not build:"
    sed 's/^/        /' "$worked.log" >&2
fi

# Loaded by name: the CMake build through runtime.plugin_path (relative to
# the config), beside an isolated pool of echo (its child process finds
# the plugin through its parent); the README build through SHOAL_PLUGIN_PATH.
mkdir -p "$tmp/conf"
cat >"$tmp/conf/hello.yaml" <<YAML
runtime:
  control: $tmp/hello.sock
  plugin_path: [../build-cmake-moved]
plugins: [hello, echo]
pools:
  greet: { worker: hello.hello, size: 2, args: { name: moved } }
  iso: { worker: echo.echo, size: 1, isolation: process }
YAML
# check_found WHAT LINE [VAR=VALUE...]: `shoald --check` of hello.yaml found
# hello where LINE says.
check_found() {
    local what=$1 line=$2 out
    shift 2
    out=$(env -u LD_LIBRARY_PATH "$@" "$moved/bin/shoald" --check "$tmp/conf/hello.yaml" 2>&1)
    grep -qxF -- "$line" <<<"$out" && ok "$what: --check: $line" ||
        fail "$what: --check said: $out (no line '$line')"
}
check_found "hello (CMake)" \
    "plugin hello: $tmp/conf/../build-cmake-moved/hello.so (runtime.plugin_path)" \
    "SHOAL_PLUGIN_PATH=$readme"
echo_too=iso run_host "hello (CMake) by runtime.plugin_path" "$tmp/conf/hello.yaml" greet x \
    "hello, moved"
sed -i '/plugin_path/d' "$tmp/conf/hello.yaml"
check_found "hello (README line)" "plugin hello: $readme/hello.so (SHOAL_PLUGIN_PATH)" \
    "SHOAL_PLUGIN_PATH=$tmp/nowhere:$readme"
echo_too=iso run_host "hello (README line) by SHOAL_PLUGIN_PATH" "$tmp/conf/hello.yaml" greet x \
    "hello, moved" "SHOAL_PLUGIN_PATH=$tmp/nowhere:$readme"
# The schema bounds name at 64 bytes (ABI 1.11): 65 is a config error at
# --check, with its place, before any init runs.
long=$(printf '%065d' 0)
sed "s/name: moved/name: $long/" "$tmp/conf/hello.yaml" >"$tmp/conf/long.yaml"
out=$(env -u LD_LIBRARY_PATH SHOAL_PLUGIN_PATH="$readme" "$moved/bin/shoald" --check "$tmp/conf/long.yaml" 2>&1)
rc=$?
want="$tmp/conf/long.yaml:5:56: pools.greet.args.name: 65 bytes long: expected 0 to 64 bytes"
[ $rc = 2 ] && [ "$out" = "$want" ] && ok "hello: a 65-byte name refused at --check: $want" ||
    fail "hello: a 65-byte name at --check: exit $rc: $out (want $want)"

if [ "$failures" -ne 0 ]; then
    echo "test_install: FAILED: $failures check(s) failed (see above)" >&2
    exit 1
fi
echo "test_install: passed"
