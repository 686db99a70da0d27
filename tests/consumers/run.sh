#!/bin/sh
# Builds and runs a tiny consumer program (consumer.c) in each way a
# project can take tecomp, against this checkout, in a temporary folder:
#   1. CMake, add_subdirectory(tecomp)           -> tecomp::tecomp
#   2. CMake, FetchContent from this repository  -> tecomp::tecomp
#   3. meson install (headers, tecomp.pc), then a plain cc with pkg-config
#   4. Meson, C only, tecomp as a subproject through packaging/tecomp.wrap,
#      with CXX pointing at no compiler (tecomp must not ask for C++)
# Needs cmake, pkg-config, git, meson and ninja (./tecomp-dev run sh
# tests/consumers/run.sh puts the last two on PATH). Exit status 0 when all
# four built and ran.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$root/tests/consumers" "$work/src"
log="$work/log"
cc=${CC:-cc}

step() { printf '== consumer: %s\n' "$*"; }
fail() {
    printf 'FAILED: consumer: %s\n' "$*"
    cat "$log"
    exit 1
}

commit=""
if git -C "$root" rev-parse --verify -q HEAD >/dev/null 2>&1; then
    commit=$(git -C "$root" rev-parse HEAD)
    if [ -n "$(git -C "$root" status --porcelain --untracked-files=no)" ]; then
        echo "(consumer: the checkout has uncommitted changes; FetchContent and the wrap take the commit $commit)"
    fi
fi

step "CMake add_subdirectory"
cmake -S "$work/src/cmake" -B "$work/cmake-sub" -DTECOMP_SOURCE_DIR="$root" -DTECOMP_HOW=subdirectory >"$log" 2>&1 &&
    cmake --build "$work/cmake-sub" >>"$log" 2>&1 || fail "CMake add_subdirectory did not build"
"$work/cmake-sub/consumer" || fail "the add_subdirectory build did not run"

if [ -n "$commit" ]; then
    step "CMake FetchContent"
    cmake -S "$work/src/cmake" -B "$work/cmake-fetch" -DTECOMP_SOURCE_DIR="$root" -DTECOMP_HOW=fetchcontent -DTECOMP_GIT_TAG="$commit" \
        >"$log" 2>&1 && cmake --build "$work/cmake-fetch" >>"$log" 2>&1 || fail "CMake FetchContent did not build"
    "$work/cmake-fetch/consumer" || fail "the FetchContent build did not run"
else
    echo "(consumer: not a git checkout: FetchContent and the wrap are not tried)"
fi

step "meson install, then pkg-config --cflags --libs tecomp"
meson setup "$work/install-build" "$root" --prefix "$work/prefix" >"$log" 2>&1 &&
    meson install -C "$work/install-build" --no-rebuild >>"$log" 2>&1 || fail "meson install did not install"
pc=$(find "$work/prefix" -name tecomp.pc | head -n 1)
[ -n "$pc" ] || fail "meson install wrote no tecomp.pc"
PKG_CONFIG_PATH=$(dirname "$pc")
export PKG_CONFIG_PATH
[ "$(pkg-config --modversion tecomp)" = "$(sed -n 's/^#define TECOMP_VERSION_STRING "\(.*\)"/\1/p' "$root/tecomp_ir.h")" ] ||
    fail "tecomp.pc's version is not the header's"
# shellcheck disable=SC2046 # pkg-config's flags are words
$cc -std=c99 -Wall -Wextra -Werror $(pkg-config --cflags tecomp) "$work/src/consumer.c" -o "$work/consumer-pc" $(pkg-config --libs tecomp) \
    >"$log" 2>&1 || fail "cc with pkg-config's flags did not build"
"$work/consumer-pc" || fail "the pkg-config build did not run"

if [ -n "$commit" ]; then
    step "Meson subproject through packaging/tecomp.wrap, C only"
    mkdir -p "$work/src/meson/subprojects"
    sed -e "s|^url = .*|url = $root|" -e "s|^revision = .*|revision = $commit|" -e '/^depth = /d' \
        "$root/packaging/tecomp.wrap" >"$work/src/meson/subprojects/tecomp.wrap"
    CXX="$work/no-such-c++" meson setup "$work/meson-build" "$work/src/meson" >"$log" 2>&1 || fail "the Meson consumer did not configure"
    meson test -C "$work/meson-build" --print-errorlogs >>"$log" 2>&1 || fail "the Meson consumer did not build and pass"
    grep -q 'C++' "$work/meson-build/meson-logs/meson-log.txt" && grep -q 'Detecting compiler via.*no-such-c++' "$work/meson-build/meson-logs/meson-log.txt" &&
        fail "tecomp asked Meson for a C++ compiler"
    "$work/meson-build/consumer"
fi
echo "consumers: all built and ran"
