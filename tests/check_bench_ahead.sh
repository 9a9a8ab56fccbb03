#!/usr/bin/env bash
# Back-to-back rooted calls whose root runs ahead of its receivers through the node transport's
# rings (docs/tuning.md, "Back-to-back rooted calls"): rcoll-bench with every iteration's data
# checked (-c), no barrier between calls (--sync none), a fixed root (it runs as far ahead as
# the rings allow) and a rotating one, for bcast, scatter, gather and the v-forms, sizes that
# travel in lines (up to 48 bytes), in boxes and by single copy. Open MPI at np=4 on the
# machine's cores (ranks outnumber cores on a 2-core machine) with the default
# ring of lines and with RCOLL_DEPTH=2 and 64; at np=2 (a core each); MPICH at
# np=2 when built. No bound on any time.
# Usage: check_bench_ahead.sh BUILD_DIR
set -eu
BUILD=$(cd "$1" && pwd)
OUT=$(mktemp -d "${TMPDIR:-/tmp}/rcoll-bench-ahead.XXXXXX")
trap 'rm -rf "$OUT"' EXIT
TMO=$((60 * ${RCOLL_TEST_TIMEOUT_SCALE:-4}))
ASAN="ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
COLLS=bcast,scatter,gather,scatterv,gatherv
run() { # np, depth, then rcoll-bench's options
    timeout "$TMO" mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$1" -x "$ASAN" \
        -x RCOLL_DEPTH="$2" "$BUILD/rcoll-bench" -c --sync none --coll $COLLS "${@:3}" \
        >"$OUT/run.txt" 2>&1 ||
        { cat "$OUT/run.txt"; echo "FAIL: np=$1 RCOLL_DEPTH=$2 rcoll-bench $*"; exit 1; }
}
for depth in 32 2 64; do
    run 4 "$depth" -m 1:512 -i 300 -x 10 --root 0
    run 4 "$depth" -m 1:512 -i 100 -x 10 --root rotate
done
run 4 32 -m 4K:128K -i 40 -x 4 --root 0
run 2 32 -m 1:512 -i 300 -x 10 --root 0
run 2 32 -m 1:128K -i 40 -x 4 --root rotate
if [ -x "$BUILD/rcoll-bench-mpich" ] && command -v mpirun.mpich >/dev/null; then
    timeout "$TMO" mpirun.mpich -np 2 -genv ASAN_OPTIONS "${ASAN#ASAN_OPTIONS=}" \
        "$BUILD/rcoll-bench-mpich" -c --sync none --coll $COLLS -m 1:512 -i 300 -x 10 --root 0 \
        >"$OUT/mpich.txt" 2>&1 || { cat "$OUT/mpich.txt"; echo "FAIL: rcoll-bench-mpich"; exit 1; }
fi
echo "ok: rooted calls back to back, data checked (fixed and rotating roots, RCOLL_DEPTH 2, 32, 64)"
