#!/usr/bin/env bash
# The installed package: builds rcoll into BUILD_DIR (default build/; an up-to-date build is
# reused), installs it into a temporary prefix, then builds examples/allgather.c against it and
# runs it: through find_package(rcoll) (shared and static targets), through pkg-config, and
# linked with librcoll.a through pkg-config --static. Any failure stops it with a message.
# Usage: scripts/test_install.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
np=4

tmp="$(mktemp -d "${TMPDIR:-/tmp}/rcoll-install.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
fail() {
    echo "FAIL test_install: $*" >&2
    exit 1
}
step() { echo "== test_install: $*"; }

if [ -f "$build/CMakeCache.txt" ]; then
    cmake --build "$build" -j"$(nproc)" >/dev/null || fail "building $build"
else
    scripts/build.sh "$build" >/dev/null || fail "configuring and building $build"
fi

prefix="$tmp/prefix"
step "cmake --install $build --prefix $prefix"
cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" || { cat "$tmp/install.log"; fail "cmake --install"; }
pc="$(find "$prefix" -name rcoll.pc -path '*/pkgconfig/*' | head -n 1)"
[ -n "$pc" ] || fail "no rcoll.pc installed under $prefix"
libdir="$(dirname "$(dirname "$pc")")"
for f in include/rcoll/rcoll.h include/rcoll/rcoll_mpi.h bin/rcoll-info; do
    [ -e "$prefix/$f" ] || fail "$f not installed"
done
for f in librcoll.so librcoll.so.0 librcoll.a; do
    [ -e "$libdir/$f" ] || fail "$libdir/$f not installed"
done
[ -f "$libdir/cmake/rcoll/rcollConfig.cmake" ] || fail "rcollConfig.cmake not installed"
# The MPI drop-ins and tools, for each MPI this build has.
for mpi in "" -mpich; do
    if [ -e "$build/librcoll-mpi$mpi.so" ]; then
        [ -e "$libdir/librcoll-mpi$mpi.so" ] || fail "librcoll-mpi$mpi.so not installed"
        [ -x "$prefix/bin/rcoll-bench$mpi" ] || fail "rcoll-bench$mpi not installed"
        [ -x "$prefix/bin/rcoll-soak$mpi" ] || fail "rcoll-soak$mpi not installed"
        [ -x "$prefix/bin/rcoll-loop$mpi" ] || fail "rcoll-loop$mpi not installed"
        for app in matmul nbody radix fft3d; do
            [ -x "$prefix/bin/rcoll-app-$app$mpi" ] || fail "rcoll-app-$app$mpi not installed"
        done
    fi
done
"$prefix/bin/rcoll-info" --list >/dev/null || fail "installed rcoll-info --list"

export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
run() {
    local what="$1" exe="$2"
    step "run $what: $exe $np"
    timeout 120 "$exe" "$np" || fail "$what: $exe $np exited with $?"
}

# 1. CMake: find_package(rcoll) with the installed prefix, both imported targets.
step "example through find_package(rcoll)"
cmake -S examples -B "$tmp/ex" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    >"$tmp/ex.log" 2>&1 || { cat "$tmp/ex.log"; fail "configuring examples/ with find_package(rcoll)"; }
grep -qx "rcoll_DIR:PATH=$libdir/cmake/rcoll" "$tmp/ex/CMakeCache.txt" ||
    fail "find_package(rcoll) found $(grep rcoll_DIR: "$tmp/ex/CMakeCache.txt"), not the one in $libdir"
cmake --build "$tmp/ex" >>"$tmp/ex.log" 2>&1 || { cat "$tmp/ex.log"; fail "building examples/"; }
readelf -d "$tmp/ex/allgather" | grep 'NEEDED.*librcoll\.so\.0' >/dev/null || fail "allgather (rcoll::rcoll) does not load librcoll.so.0"
readelf -d "$tmp/ex/allgather_static" | grep 'NEEDED.*librcoll\.so' >/dev/null && fail "allgather_static (rcoll::rcoll_static) loads librcoll.so"
run "find_package, rcoll::rcoll" "$tmp/ex/allgather"
run "find_package, rcoll::rcoll_static" "$tmp/ex/allgather_static"

# 2. pkg-config, shared library.
export PKG_CONFIG_PATH="$libdir/pkgconfig"
step "example through pkg-config: $(pkg-config --cflags --libs rcoll)"
# shellcheck disable=SC2046 # pkg-config's flags are words
cc -std=c11 -Wall -Wextra -Werror -o "$tmp/allgather_pc" examples/allgather.c $(pkg-config --cflags --libs rcoll) ||
    fail "cc with pkg-config --cflags --libs rcoll"
ldd "$tmp/allgather_pc" | grep "=> $libdir/librcoll\.so\.0 " >/dev/null || fail "allgather_pc does not load $libdir/librcoll.so.0"
run "pkg-config" "$tmp/allgather_pc"

# 3. pkg-config --static: librcoll.a itself (not librcoll.so from the same -L) plus Libs.private.
static_libs="$(pkg-config --static --libs rcoll)"
step "example through pkg-config --static: $static_libs"
link=()
for w in $static_libs; do
    [ "$w" = -lrcoll ] && w=-l:librcoll.a
    link+=("$w")
done
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror -o "$tmp/allgather_pc_static" examples/allgather.c \
    $(pkg-config --cflags rcoll) "${link[@]}" || fail "cc with pkg-config --static --libs rcoll"
readelf -d "$tmp/allgather_pc_static" | grep 'NEEDED.*librcoll\.so' >/dev/null && fail "the static link loads librcoll.so"
run "pkg-config --static" "$tmp/allgather_pc_static"

echo "test_install: 5 of 5 passed (install layout; find_package shared and static; pkg-config shared and static)"
