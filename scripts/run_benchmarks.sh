#!/usr/bin/env bash
# rcoll-bench comparison against native MPI: barrier and allgather at np=2 and np=4 (4 ranks on
# a 2-core machine: more ranks than cores), with Open MPI and with MPICH, every size interleaved
# native/rcoll in one run. Writes OUT_DIR/raw/<mpi>-np<N>.jsonl, then OUT_DIR/report.md and plots.
# Usage: scripts/run_benchmarks.sh BUILD_DIR OUT_DIR
# Iterations: RCOLL_BENCH_ITERS (default 2000), RCOLL_BENCH_WARMUP (200); MPICH at np=4 busy-polls
# when oversubscribed (a native barrier takes milliseconds), so it runs RCOLL_BENCH_MPICH4_ITERS
# (default 30) iterations.
set -euo pipefail
build="$(cd "$1" && pwd)"
out="$2"
mkdir -p "$out/raw"
iters=${RCOLL_BENCH_ITERS:-2000}
warm=${RCOLL_BENCH_WARMUP:-200}
mpich4=${RCOLL_BENCH_MPICH4_ITERS:-30}
sizes=${RCOLL_BENCH_SIZES:-1:1048576}
export RCOLL_TIMEOUT=${RCOLL_TIMEOUT:-300}
common=(--coll barrier,allgather --impl native,rcoll -m "$sizes")
labels=()
notes=()

run() { # mpi label, np, iterations, warmup, launcher and bench...
    local label=$1 np=$2 it=$3 wu=$4
    shift 4
    local file="$out/raw/$label-np$np.jsonl"
    : >"$file"
    echo "bench: $label np=$np ($it iterations per size)"
    timeout 1200 "$@" "${common[@]}" -i "$it" -x "$wu" --json "$file" >"$out/raw/$label-np$np.txt"
}

if [ -x "$build/rcoll-bench" ]; then
    for np in 2 4; do
        run openmpi "$np" "$iters" "$warm" mpirun --allow-run-as-root --oversubscribe --bind-to none \
            -np "$np" "$build/rcoll-bench"
    done
    cat "$out"/raw/openmpi-np2.jsonl "$out"/raw/openmpi-np4.jsonl >"$out/raw/openmpi.jsonl"
    labels+=(--label "openmpi=$out/raw/openmpi.jsonl")
fi
if [ -x "$build/rcoll-bench-mpich" ]; then
    run mpich 2 "$iters" "$warm" mpirun.mpich -np 2 "$build/rcoll-bench-mpich"
    run mpich 4 "$mpich4" 5 mpirun.mpich -np 4 "$build/rcoll-bench-mpich"
    cat "$out"/raw/mpich-np2.jsonl "$out"/raw/mpich-np4.jsonl >"$out/raw/mpich.jsonl"
    labels+=(--label "mpich=$out/raw/mpich.jsonl")
    notes+=(--note "MPICH at np=4 (more ranks than cores) busy-polls: its runs use $mpich4 iterations per size.")
fi
notes+=(--note "Launch: Open MPI 'mpirun --oversubscribe --bind-to none', MPICH 'mpirun.mpich'; $iters iterations per size up to 64 KB, fewer above (rcoll-bench --help).")
plots=()
python3 -c 'import matplotlib' 2>/dev/null || plots=(--no-plots)
python3 "$(dirname "$0")/../python/rcoll_report.py" --out "$out" "${labels[@]}" "${notes[@]}" "${plots[@]}"
