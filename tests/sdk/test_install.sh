#!/bin/bash
# tests/sdk/test_install.sh BUILD_DIR SOURCE_DIR
#
# The SDK as a user gets it: installs BUILD_DIR into a temporary prefix, then
# builds examples/hello-plugin against that prefix
#   1. with CMake:            find_package(shoal) via CMAKE_PREFIX_PATH,
#   2. with make + pkg-config: PKG_CONFIG_PATH=<prefix>/<libdir>/pkgconfig,
# and checks each hello.so: it exists, exports only the descriptor
# `shoal_plugin`, carries the .note.shoal ABI note, and leaves no symbol
# undefined but libc's and shoal_* ones that libshoal defines. When
# shoal-plugin-check is installed, it then loads each hello.so, runs its
# behaviour (init with args, messages, a call, stop) and prints its args
# schema (--describe). Finally the prefix is
# moved elsewhere and the CMake build is done again (the package must be
# relocatable), plus a pkg-config build with --define-prefix.
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
    if ! nm -D --defined-only "$so" | awk '{print $NF}' | grep -qx shoal_plugin; then
        fail "$what: does not export shoal_plugin"
    elif [ -n "$bad" ]; then
        fail "$what: exports more than shoal_plugin: $bad"
    else
        ok "$what: exports only shoal_plugin"
    fi

    # The ABI note the host reads before loading.
    if readelf -n "$so" | grep -q 'notes found in: \.note\.shoal' &&
        readelf -n "$so" | grep -A3 '\.note\.shoal' | grep -qw shoal; then
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
    if readelf -d "$so" | grep NEEDED | grep -q 'libshoal\.so'; then
        ok "$what: links libshoal"
    else
        fail "$what: has no DT_NEEDED on libshoal"
    fi

    # Load it as the host would and run the behaviour, with a name in its args.
    if [ -n "$checker" ]; then
        local out=$tmp/check-$RANDOM.log
        if LD_LIBRARY_PATH=$libdir "$checker" --args 'name: installed' "$so" >"$out" 2>&1 &&
            grep -q 'call: reply type 1, 17 bytes, status SHOAL_OK' "$out"; then
            ok "$what: shoal-plugin-check passed (reply 'hello, installed')"
        else
            fail "$what: shoal-plugin-check failed:"
            sed 's/^/        /' "$out" >&2
        fi
        # Its args schema, built from the installed headers (ABI 1.3).
        if LD_LIBRARY_PATH=$libdir "$checker" --describe "$so" >"$out" 2>&1 &&
            grep -qx '    name  string  default world  who to greet, at most 64 bytes: calls are answered "hello, <name>"' "$out"; then
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
    case " $cflags " in
    *" -I$prefix_now/include "*) ok "$what: pkg-config --cflags gives -I${prefix_now#"$tmp"/}/include" ;;
    *) fail "$what: pkg-config --cflags gives '$cflags', not -I$prefix_now/include" ;;
    esac
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
build_make "pkg-config --define-prefix, moved" "$libdir/pkgconfig" "$tmp/build-make-moved" \
    "pkg-config --define-prefix"

if [ "$failures" -ne 0 ]; then
    echo "test_install: FAILED: $failures check(s) failed (see above)" >&2
    exit 1
fi
echo "test_install: passed"
