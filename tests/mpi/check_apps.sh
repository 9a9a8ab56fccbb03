#!/usr/bin/env bash
# The application kernels (apps/, built as rcoll-app-*) once each at np=4 under Open MPI with
# librcoll-mpi.so preloaded, at small sizes (a few seconds in all): each must exit 0 (its own
# result check passed) with "ok":true in its JSON line, and rcoll's log (RCOLL_LOG=info) must show
# it running the kernel's collectives. Usage: check_apps.sh BUILD_DIR. Exit status 77 (ctest:
# skipped) when there is no librcoll-mpi.so or no mpirun. Each mpirun is bounded by `timeout`
# (60 s times RCOLL_TEST_TIMEOUT_SCALE, default 4): a hang detector, not a speed budget.
set -u
if [ $# -ne 1 ] || [ ! -d "$1" ]; then
    echo "usage: $0 BUILD_DIR" >&2
    exit 2
fi
BUILD=$(cd "$1" && pwd)
lib="$BUILD/librcoll-mpi.so"
if [ ! -f "$lib" ] || ! command -v mpirun >/dev/null 2>&1; then
    echo "SKIP: no $lib or no mpirun"
    exit 77
fi
LOG=$(mktemp -d "${TMPDIR:-/tmp}/rcoll-apps-test.XXXXXX")
trap 'rm -rf "$LOG"' EXIT

# A sanitizer build: the ASan runtime first in the preload list, and MPI's own allocations at
# exit are not ours to report.
preload=$lib
envs=(-x RCOLL_LOG=info -x OPENBLAS_NUM_THREADS=1)
asan=$(ldd "$lib" 2>/dev/null | awk '/libasan\.so/ { print $3; exit }')
if [ -n "$asan" ]; then
    preload="$asan:$lib"
    envs+=(-x "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0")
fi
tmo=$((60 * ${RCOLL_TEST_TIMEOUT_SCALE:-4}))
passed=0
failed=0

# check KERNEL COLLECTIVES OPTIONS...: COLLECTIVES, comma-separated, must show in rcoll's log.
check() {
    local kernel=$1 colls=$2
    shift 2
    local out="$LOG/$kernel.out" rc=0 why="" c t0
    t0=$(date +%s%N)
    timeout -k 10 "$tmo" mpirun --allow-run-as-root --oversubscribe --bind-to none -np 4 \
        -x "LD_PRELOAD=$preload" "${envs[@]}" "$BUILD/rcoll-app-$kernel" "$@" >"$out" 2>&1 \
        </dev/null || rc=$?
    local tenths=$((($(date +%s%N) - t0) / 100000000))
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        why="timed out after ${tmo}s"
    elif [ $rc -ne 0 ]; then
        why="exit status $rc"
    elif ! grep -q "^{\"app\":\"$kernel\".*\"ok\":true" "$out"; then
        why="no JSON line with \"ok\":true"
    fi
    for c in ${colls//,/ }; do
        grep -Eq "^rcoll\[[0-9]+\]: $c #[0-9]+ .*: algorithm " "$out" ||
            why="$why rcoll's log never shows it running $c;"
    done
    if [ -z "$why" ]; then
        echo "PASS $kernel $* ($((tenths / 10)).$((tenths % 10)) s)"
        grep "^{\"app\"" "$out" | sed 's/^/     /'
        passed=$((passed + 1))
    else
        echo "FAIL $kernel $*: $why"
        grep -v '^rcoll\[' "$out" | tail -n 25 | sed 's/^/     /'
        failed=$((failed + 1))
    fi
}

# N=102 is not a multiple of 4: MPI_Allgatherv; radix's ranks hold 2000, 2001, 2002, 2000 keys.
check matmul allgatherv -n 102 -i 3
check nbody allgather -s 300
check radix allgather,alltoall,alltoallv -k 2000 -i 2
check fft3d alltoall -c 16x16x8 -i 2
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
