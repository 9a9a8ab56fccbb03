#!/usr/bin/env bash
# Publication reads across nodes, with ranks leaving rcoll for native MPI between calls: every
# algorithm whose readers read a publisher's outbox (direct_read of allgather, alltoall, bcast,
# scatter, reduce, reduce_scatter_block and allreduce; allreduce knomial's release) forced on
# emulated nodes over UCX tcp, where only the target's own progress serves a read. rcoll-bench
# checks every iteration (-c) and, by default, meets in an untimed native barrier after each
# rooted call and after the timed loop: a publisher that read its readers' done words hung there
# until the timeout (docs/reductions.md). Sizes from inline through pushed (<= 4 KB) to read from
# the outbox; rotating roots with no barrier between calls; 4 nodes of one rank, then nodes of
# 2, 2 and 1 ranks. No bound on any time: the timeout only catches a hang.
# Usage: check_bench_reads_nodes.sh BUILD_DIR
set -eu
BUILD=$(cd "$1" && pwd)
OUT=$(mktemp -d "${TMPDIR:-/tmp}/rcoll-bench-reads.XXXXXX")
trap 'rm -rf "$OUT"' EXIT
TMO=$((60 * ${RCOLL_TEST_TIMEOUT_SCALE:-4}))
# Under the sanitizer pass (scripts/test.sh) MPI's own allocations at exit are not ours to
# report: leak checking is off for the ranks (the ASan build still checks every access).
ASAN="ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
run() { # np, ppn, then rcoll-bench's options
    timeout "$TMO" mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$1" \
        --mca btl self,tcp --mca pml ob1 -x "$ASAN" -x RCOLL_PPN="$2" -x RCOLL_NET=ucx -x UCX_TLS=tcp \
        -x RCOLL_TIMEOUT=$((15 * ${RCOLL_TEST_TIMEOUT_SCALE:-4})) \
        "$BUILD/rcoll-bench" -c -i 4 -x 1 "${@:3}" >"$OUT/run.txt" 2>&1 &&
        ! grep -q FAILED "$OUT/run.txt" ||
        { cat "$OUT/run.txt"; echo "FAIL: np=$1 RCOLL_PPN=$2 rcoll-bench $*"; exit 1; }
}
READ=allgather,alltoall,bcast,scatter,reduce,reduce_scatter_block,allreduce
run 4 1 --coll "$READ" --impl rcoll:direct_read -m 8:16K
run 4 1 --coll "$READ" --impl rcoll:direct_read -m 64:16K --root rotate --sync none
run 4 1 --coll allreduce --impl rcoll:knomial -m 8:64K --sync all
run 5 2 --coll bcast,reduce,allreduce --impl rcoll:direct_read -m 2K:64K --root rotate --sync none
run 5 2 --coll allreduce --impl rcoll:knomial -m 2K:64K --sync none
echo "publication reads across nodes: no hang, data checked"
