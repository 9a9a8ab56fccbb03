#!/usr/bin/env bash
# rcoll-bench comparison against native MPI: barrier, allgather, alltoall, bcast, gather and
# scatter (root 0; their iterations separated by an untimed barrier, rcoll-bench --sync), and
# the reductions allreduce, reduce (root 0, synced alike) and reduce_scatter_block of doubles
# summed (--op sum --dtype double; sizes from one element, 8 B) at np=2 and np=4 (4 ranks on a
# 2-core machine: more ranks than cores), with Open MPI and with MPICH, every size interleaved
# native/rcoll in one run, every (collective, implementation, size) checked once before it is
# timed; at np=2 allreduce also from 2 MB to 16 MB in a second run (<mpi>-large-np2), and with
# Open MPI at np=2 bcast, gather, scatter, allgather, alltoall and reduce from 1 KB with fresh
# buffers every iteration (--no-reuse; openmpi-fresh; RCOLL_BENCH_FRESH_COLLS, _SIZES). Writes
# OUT_DIR/raw/<mpi>-np<N>.jsonl (.txt: the OSU-style output, .err: stderr), then
# OUT_DIR/report.md and plots.
# Across nodes (emulated: every rank its own node, UCX tcp) against Open MPI over its tcp BTL at
# np=4: barrier, allgather, alltoall (RCOLL_BENCH_INTERNODE_COLLS) and allreduce
# (RCOLL_BENCH_INTERNODE_UCX_EXTRA; over UCX only, not in the libfabric runs); and allgather
# 32 KB with fresh buffers, with and without the registration cache (RCOLL_BENCH_INTERNODE=0
# skips these). Each runs RCOLL_BENCH_INTERNODE_RUNS times (default 5; the report shows the
# median run per size, the cache pair alternating).
# Then the nonblocking and persistent modes (rcoll-bench --overlap, with half of the ranks late,
# and --persistent beside the blocking calls; Open MPI and MPICH; RCOLL_BENCH_MODES=0 skips them):
# the report's "Nonblocking and persistent collectives".
# Then the soak test (rcoll-soak, np=4, Open MPI, native and preloaded; RCOLL_SOAK=0 skips it,
# RCOLL_SOAK_CALLS, RCOLL_SOAK_TIMEOUT): OUT_DIR/raw/soak.jsonl, the report's "Soak test".
# Then the application kernels (scripts/run_apps.sh: matmul, nbody, radix sort, 3-D FFT at np=2
# and 4, natively and preloaded; RCOLL_APPS=0 skips them): the report's "Application kernels".
# Usage: scripts/run_benchmarks.sh BUILD_DIR OUT_DIR
# Environment: RCOLL_BENCH_COLLS (default barrier,allgather,alltoall,bcast,gather,scatter,
# allreduce,reduce,reduce_scatter_block; any list rcoll-bench --coll takes), RCOLL_BENCH_OP and
# RCOLL_BENCH_DTYPE (the reductions': sum, double), RCOLL_BENCH_SIZES (1:1048576),
# RCOLL_BENCH_LARGE_COLLS and RCOLL_BENCH_LARGE_SIZES (the second run at np=2: allreduce,
# 2M:16M; an empty list skips it), RCOLL_BENCH_ITERS (default 2000; rcoll-bench scales it down
# above 64 KB), RCOLL_BENCH_WARMUP (200); MPICH at np=4 busy-polls when oversubscribed (a native
# barrier takes milliseconds), so it runs RCOLL_BENCH_MPICH4_ITERS (default 30) iterations.
# A run that fails (a failed check: rcoll error or wrong data; a crash; a timeout) does not stop
# the others: the report is written with what was measured, lists the failures, and the script
# then exits with status 1.
set -euo pipefail
build="$(cd "$1" && pwd)"
out="$2"
mkdir -p "$out/raw"
iters=${RCOLL_BENCH_ITERS:-2000}
warm=${RCOLL_BENCH_WARMUP:-200}
mpich4=${RCOLL_BENCH_MPICH4_ITERS:-30}
sizes=${RCOLL_BENCH_SIZES:-1:1048576}
colls=${RCOLL_BENCH_COLLS:-barrier,allgather,alltoall,bcast,gather,scatter,allreduce,reduce,reduce_scatter_block}
reduction=(--op "${RCOLL_BENCH_OP:-sum}" --dtype "${RCOLL_BENCH_DTYPE:-double}")
large_colls=${RCOLL_BENCH_LARGE_COLLS-allreduce}
large_sizes=${RCOLL_BENCH_LARGE_SIZES:-2M:16M}
export RCOLL_TIMEOUT=${RCOLL_TIMEOUT:-300}
common=(--coll "$colls" --impl native,rcoll -m "$sizes" "${reduction[@]}")
labels=()
notes=()
failed=()

run() { # mpi label, np, iterations, warmup, launcher and bench...
    local label=$1 np=$2 it=$3 wu=$4
    shift 4
    local base="$out/raw/$label-np$np"
    : >"$base.jsonl"
    echo "bench: $label np=$np ($it iterations per size; $colls)"
    local start=$SECONDS rc=0
    timeout 1200 "$@" "${common[@]}" -i "$it" -x "$wu" --json "$base.jsonl" >"$base.txt" \
        2>"$base.err" || rc=$?
    echo "bench: $label np=$np done in $((SECONDS - start)) s"
    if [ "$rc" -ne 0 ]; then
        local why="exit status $rc"
        [ "$rc" -eq 124 ] && why="timed out after 1200 s"
        echo "bench: $label np=$np FAILED ($why); its stdout:" >&2
        grep '^# FAILED' "$base.txt" >&2 || true
        echo "bench: its stderr (last lines, all in $base.err):" >&2
        grep -v '^ *$' "$base.err" | tail -n 15 >&2 || true
        failed+=("$label np=$np")
        notes+=(--note "FAILED: rcoll-bench $label np=$np ($why; raw/$label-np$np.txt and .err).")
    fi
}

# At np=2 the larger sizes of RCOLL_BENCH_LARGE_COLLS (allreduce) in a run of their own, its
# records joining the same tables (mpi label, then the launcher and bench).
large_run() {
    local label=$1
    shift
    if [ -z "$large_colls" ]; then
        return
    fi
    local saved=("${common[@]}") colls="$large_colls (-m $large_sizes)"
    common=(--coll "$large_colls" --impl native,rcoll -m "$large_sizes" "${reduction[@]}")
    run "$label-large" 2 "$iters" "$warm" "$@"
    common=("${saved[@]}")
}
if [ -x "$build/rcoll-bench" ]; then
    for np in 2 4; do
        run openmpi "$np" "$iters" "$warm" mpirun --allow-run-as-root --oversubscribe --bind-to none \
            -np "$np" "$build/rcoll-bench"
    done
    large_run openmpi mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2 "$build/rcoll-bench"
    cat "$out"/raw/openmpi-np2.jsonl "$out"/raw/openmpi-np4.jsonl >"$out/raw/openmpi.jsonl"
    if [ -n "$large_colls" ]; then
        cat "$out/raw/openmpi-large-np2.jsonl" >>"$out/raw/openmpi.jsonl"
    fi
    labels+=(--label "openmpi=$out/raw/openmpi.jsonl")
    # The same at np=2 with fresh buffers, written with new data before every call (--no-reuse):
    # the pattern of programs that compute what they send between calls. With one unchanged
    # buffer a single copy reads lines the reader already holds from the call before, and
    # rcoll's copy path does not write the unchanged data again (docs/tuning.md, "16-32 KB
    # rooted copies against Open MPI's single copy", "Unchanged data").
    saved=("${common[@]}")
    common=(--coll "${RCOLL_BENCH_FRESH_COLLS:-bcast,gather,scatter,allgather,alltoall,reduce}" --impl native,rcoll
            -m "${RCOLL_BENCH_FRESH_SIZES:-1K:1M}" --no-reuse "${reduction[@]}")
    saved_colls=$colls
    colls="fresh buffers"
    run openmpi-fresh 2 "$iters" "$warm" mpirun --allow-run-as-root --oversubscribe --bind-to none \
        -np 2 "$build/rcoll-bench"
    colls=$saved_colls
    common=("${saved[@]}")
    labels+=(--label "openmpi-fresh=$out/raw/openmpi-fresh-np2.jsonl")
    notes+=(--note "openmpi-fresh: Open MPI, np=2, rcoll-bench --no-reuse: fresh buffers every iteration, written with new data before the call (untimed), as programs that compute their send buffers between calls; the openmpi rows send one unchanged buffer every iteration, where a single copy (Open MPI's from 4 KB) reads lines the reader already holds from the call before, and rcoll's copy path does not write the unchanged data again (docs/tuning.md, \"Unchanged data\").")
fi
# Across nodes, emulated on this machine: every rank its own node (RCOLL_PPN=1), all of rcoll's
# traffic over UCX's tcp transport, against Open MPI with shared memory off (ob1 over its tcp
# BTL). Then allgather of 32 KB blocks with fresh buffers every iteration (--no-reuse; single
# copy forced from 32 KB, RCOLL_ZCOPY_THRESHOLD, so each call registers its receive buffer)
# with the registration cache (RCOLL_REG_CACHE=64) and without (0).
if [ -x "$build/rcoll-bench" ] && [ "${RCOLL_BENCH_INTERNODE:-1}" = 1 ]; then
    tcp=(mpirun --allow-run-as-root --oversubscribe --bind-to none -np 4 --mca btl tcp,self
         --mca pml ob1 -x RCOLL_PPN=1 -x RCOLL_NET=ucx -x UCX_TLS=tcp)
    saved=("${common[@]}")
    internode=${RCOLL_BENCH_INTERNODE_COLLS:-barrier,allgather,alltoall}
    ucx_extra=${RCOLL_BENCH_INTERNODE_UCX_EXTRA-allreduce} # over UCX only
    common=(--coll "$internode${ucx_extra:+,$ucx_extra}" --impl native,rcoll -m "$sizes" "${reduction[@]}")
    runs=${RCOLL_BENCH_INTERNODE_RUNS:-5}
    for ((k = 1; k <= runs; k++)); do
        run "openmpi-tcp-run$k" 4 "${RCOLL_BENCH_INTERNODE_ITERS:-1000}" "$warm" "${tcp[@]}" "$build/rcoll-bench"
        labels+=(--label "openmpi-tcp=$out/raw/openmpi-tcp-run$k-np4.jsonl")
    done
    notes+=(--note "openmpi-tcp: nodes emulated on this machine, every rank its own node (RCOLL_PPN=1): rcoll's traffic all over UCX tcp (RCOLL_NET=ucx UCX_TLS=tcp), native Open MPI with '--mca btl tcp,self --mca pml ob1' (its shared memory off); ppn in its table titles counts ranks per machine. $runs runs, each interleaving native and rcoll size by size: per size the run with the median ratio is shown, with the lowest and highest ratio of the runs beside it.")
    # Allreduce on 2 emulated nodes of 2 ranks (RCOLL_PPN=2): the node-aware form's layout,
    # against the same native Open MPI over tcp.
    if [ -n "$ucx_extra" ]; then
        tcp22=(mpirun --allow-run-as-root --oversubscribe --bind-to none -np 4 --mca btl tcp,self
               --mca pml ob1 -x RCOLL_PPN=2 -x RCOLL_NET=ucx -x UCX_TLS=tcp)
        common=(--coll "$ucx_extra" --impl native,rcoll -m "$sizes" "${reduction[@]}")
        for ((k = 1; k <= runs; k++)); do
            run "openmpi-tcp-2x2-run$k" 4 "${RCOLL_BENCH_INTERNODE_ITERS:-1000}" "$warm" "${tcp22[@]}" "$build/rcoll-bench"
            labels+=(--label "openmpi-tcp-2x2=$out/raw/openmpi-tcp-2x2-run$k-np4.jsonl")
        done
        notes+=(--note "openmpi-tcp-2x2: as openmpi-tcp, but two emulated nodes of two ranks each (RCOLL_PPN=2; rcoll's traffic inside a node through shared memory, between nodes over UCX tcp); the native side is the same Open MPI over its tcp BTL. $runs runs, shown as for openmpi-tcp.")
        # Reproducible mode's cost where it has one (the node-aware form excluded).
        run "openmpi-tcp-2x2-reproducible" 4 "${RCOLL_BENCH_INTERNODE_ITERS:-1000}" "$warm" "${tcp22[@]}" \
            -x RCOLL_REPRODUCIBLE=1 "$build/rcoll-bench"
        labels+=(--label "openmpi-tcp-2x2-reproducible=$out/raw/openmpi-tcp-2x2-reproducible-np4.jsonl")
        notes+=(--note "openmpi-tcp-2x2-reproducible: openmpi-tcp-2x2 with RCOLL_REPRODUCIBLE=1 (every reduction folds in rank order: the node-aware allreduce is not chosen), one run: compare its rcoll column with openmpi-tcp-2x2's for the mode's cost.")
    fi
    # The same over the libfabric channel, where this build has it: the tcp provider's own
    # reliable-datagram endpoint (libfabric 1.17 calls it net; from 1.18 it is tcp's, and
    # FI_PROVIDER=tcp gives tcp;ofi_rxm here: docs/tuning.md has both).
    if "$build/rcoll-info" --list | grep '^network channels (RCOLL_NET):.*\bofi\b' >/dev/null; then
        common=(--coll "$internode" --impl native,rcoll -m "$sizes")
        ofi=(mpirun --allow-run-as-root --oversubscribe --bind-to none -np 4 --mca btl tcp,self
             --mca pml ob1 -x RCOLL_PPN=1 -x RCOLL_NET=ofi -x FI_PROVIDER=net)
        for ((k = 1; k <= runs; k++)); do
            run "openmpi-tcp-ofi-run$k" 4 "${RCOLL_BENCH_INTERNODE_ITERS:-1000}" "$warm" "${ofi[@]}" "$build/rcoll-bench"
            labels+=(--label "openmpi-tcp-ofi=$out/raw/openmpi-tcp-ofi-run$k-np4.jsonl")
        done
        notes+=(--note "openmpi-tcp-ofi: as openmpi-tcp, but rcoll's traffic over the libfabric channel and the tcp provider's own reliable-datagram endpoint (RCOLL_NET=ofi FI_PROVIDER=net: libfabric 1.17's name for it; manual progress, signals as remote CQ data); the native side is the same Open MPI over its tcp BTL. $runs runs, shown as for openmpi-tcp.")
    fi
    # The pair alternates, $runs times: the two settings meet the same machine states.
    common=(--coll allgather --impl native,rcoll -m 32768:32768 --no-reuse)
    for ((k = 1; k <= runs; k++)); do
        for cache in 64 0; do
            run "noreuse-cache$cache-run$k" 4 "${RCOLL_BENCH_INTERNODE_ITERS:-1000}" "$warm" "${tcp[@]}" \
                -x RCOLL_REG_CACHE=$cache -x RCOLL_ZCOPY_THRESHOLD=32k "$build/rcoll-bench"
        done
    done
    notes+=(--note "$(python3 - "$out/raw" "$runs" <<'PY'
import json, sys
raw, runs = sys.argv[1], int(sys.argv[2])
def measured(cache):
    out = []  # (ratio, rcoll us, native us) of every run that measured both
    for k in range(1, runs + 1):
        t = {}
        try:
            for line in open(f"{raw}/noreuse-cache{cache}-run{k}-np4.jsonl"):
                r = json.loads(line)
                if "max_us" in r:
                    t["native" if r["impl"] == "native" else "rcoll"] = r["max_us"]
        except OSError:
            pass
        if "rcoll" in t and "native" in t:
            out.append((t["rcoll"] / t["native"], t["rcoll"], t["native"]))
    return sorted(out)
def cell(cache):
    m = measured(cache)
    if not m:
        return "not measured"
    ratio, mine, native = m[(len(m) - 1) // 2]
    return (f"{ratio:.2f}x native (rcoll {mine:.1f} us, native {native:.1f} us in that run; "
            f"{m[0][0]:.2f}-{m[-1][0]:.2f} in {len(m)} runs)")
print("Allgather 32 KB, fresh buffers every iteration, np=4 over UCX tcp, single copy from 32 KB, "
      "median ratio of runs alternating the two settings: "
      f"with the registration cache {cell('64')}; without (RCOLL_REG_CACHE=0) {cell('0')}.")
PY
)")
    common=("${saved[@]}")
fi
if [ -x "$build/rcoll-bench-mpich" ]; then
    run mpich 2 "$iters" "$warm" mpirun.mpich -np 2 "$build/rcoll-bench-mpich"
    run mpich 4 "$mpich4" 5 mpirun.mpich -np 4 "$build/rcoll-bench-mpich"
    large_run mpich mpirun.mpich -np 2 "$build/rcoll-bench-mpich"
    cat "$out"/raw/mpich-np2.jsonl "$out"/raw/mpich-np4.jsonl >"$out/raw/mpich.jsonl"
    if [ -n "$large_colls" ]; then
        cat "$out/raw/mpich-large-np2.jsonl" >>"$out/raw/mpich.jsonl"
    fi
    labels+=(--label "mpich=$out/raw/mpich.jsonl")
    notes+=(--note "MPICH at np=4 (more ranks than cores) busy-polls: its runs use $mpich4 iterations per size.")
fi
if [ ${#labels[@]} -eq 0 ]; then
    echo "run_benchmarks: neither $build/rcoll-bench nor $build/rcoll-bench-mpich exists" >&2
    exit 1
fi
# Nonblocking and persistent collectives (rcoll-bench --overlap and --persistent): the report's
# "Nonblocking and persistent collectives". Per MPI (Open MPI at np=4 and 2, MPICH at np=2, as it
# busy-polls): iallgather, ialltoall and ibcast from 64 KB to 1 MB with every rank computing,
# then with half of the ranks late by twice the pure time (--late-frac 0.5 --late-pure 2), and
# their nonblocking latency (post, wait) from 1 B to 64 KB beside the blocking calls; then
# persistent allgather and alltoall at np=2 from 1 B to 1 MB beside the blocking calls, native
# and rcoll interleaved in one run. MPICH 4.0.2's own persistent allgather restarts without its
# local copy (rcoll-bench's check fails it): its blocking call stands in for it there. Into
# raw/modes-<mpi>.jsonl. RCOLL_BENCH_MODES=0 skips them; RCOLL_BENCH_OVERLAP_ITERS (default 40,
# 20 above 64 KB), RCOLL_BENCH_PERSISTENT_ITERS (default 1000; also the nonblocking runs').
modes=()
mode_run() { # as run, its progress line giving the options
    local colls="${common[*]}"
    run "$@"
}
mode_runs() { # mpi label, then the launcher and bench, the process count written @NP@
    local mpi=$1
    shift
    local launch=("$@") np nps=(4 2) pers=native,native@blocking,rcoll,rcoll@blocking
    local oi=${RCOLL_BENCH_OVERLAP_ITERS:-40} pi=${RCOLL_BENCH_PERSISTENT_ITERS:-1000}
    if [ "$mpi" = mpich ]; then
        nps=(2)
    fi
    for np in "${nps[@]}"; do
        common=(--overlap --coll allgather,alltoall,bcast --impl native,rcoll -m 64K:1M)
        mode_run "overlap-$mpi" "$np" "$oi" 4 "${launch[@]/@NP@/$np}"
        common+=(--late-frac 0.5 --late-pure 2)
        mode_run "overlap-late-$mpi" "$np" "$oi" 4 "${launch[@]/@NP@/$np}"
        common=(--nonblocking --coll allgather,alltoall,bcast --impl "$pers" -m 1:64K)
        mode_run "nonblocking-$mpi" "$np" "$pi" 100 "${launch[@]/@NP@/$np}"
    done
    common=(--persistent --coll alltoall --impl "$pers" -m 1:1M)
    if [ "$mpi" != mpich ]; then
        common[2]=allgather,alltoall
    fi
    mode_run "persistent-$mpi" 2 "$pi" 100 "${launch[@]/@NP@/2}"
    local files=("$out"/raw/overlap-"$mpi"-np*.jsonl "$out"/raw/overlap-late-"$mpi"-np*.jsonl
                 "$out"/raw/nonblocking-"$mpi"-np*.jsonl "$out/raw/persistent-$mpi-np2.jsonl")
    if [ "$mpi" = mpich ]; then
        common=(--persistent --coll allgather --impl native@blocking,rcoll,rcoll@blocking -m 1:1M)
        mode_run "persistent-allgather-$mpi" 2 "$pi" 100 "${launch[@]/@NP@/2}"
        files+=("$out/raw/persistent-allgather-$mpi-np2.jsonl")
    fi
    cat "${files[@]}" >"$out/raw/modes-$mpi.jsonl"
    modes+=(--modes "$mpi=$out/raw/modes-$mpi.jsonl")
}
if [ "${RCOLL_BENCH_MODES:-1}" = 1 ]; then
    saved=("${common[@]}")
    start=$SECONDS
    if [ -x "$build/rcoll-bench" ]; then
        mode_runs openmpi mpirun --allow-run-as-root --oversubscribe --bind-to none -np @NP@ \
            "$build/rcoll-bench"
    fi
    if [ -x "$build/rcoll-bench-mpich" ]; then
        mode_runs mpich mpirun.mpich -np @NP@ "$build/rcoll-bench-mpich"
        notes+=(--note "MPICH 4.0.2's persistent MPI_Allgather_init restarts without its local copy: from the second MPI_Start on, blocks are missing (rcoll-bench's check starts a persistent request twice and fails it; MPI_Gather_init and MPI_Scatter_init too, the class of pmodels/mpich#7078). Its persistent allgather row therefore compares rcoll with MPICH's blocking MPI_Allgather; alltoall with MPI_Alltoall_init.")
    fi
    echo "bench: nonblocking and persistent modes done in $((SECONDS - start)) s"
    common=("${saved[@]}")
fi
# Soak test (tools/rcoll_soak.c): RCOLL_SOAK_CALLS (default 1000000) back-to-back collectives of
# all ten kinds, mixed sizes, several communicators, at np=4 under Open MPI, once natively and
# once with librcoll-mpi.so preloaded; each bounded by RCOLL_SOAK_TIMEOUT seconds (default 900).
# One JSON line per run in raw/soak.jsonl ("impl" native or rcoll; a run that printed none, e.g.
# wrong data, a crash or a timeout, gets a line with "failed" and its first error message).
# RCOLL_SOAK=0 skips it.
soak_run() { # impl, then mpirun's extra options
    local impl=$1
    shift
    local base="$out/raw/soak-$impl" calls=${RCOLL_SOAK_CALLS:-1000000}
    local tmo=${RCOLL_SOAK_TIMEOUT:-900}
    echo "soak: $impl np=4, $calls calls"
    local start=$SECONDS rc=0
    timeout $((tmo + 60)) mpirun --allow-run-as-root --oversubscribe --bind-to none -np 4 "$@" \
        "$build/rcoll-soak" "$calls" --timeout "$tmo" >"$base.out" 2>"$base.err" || rc=$?
    echo "soak: $impl done in $((SECONDS - start)) s (exit status $rc)"
    python3 - "$base" "$impl" "$rc" "$((SECONDS - start))" "$tmo" >>"$out/raw/soak.jsonl" <<'PY'
import json, sys
base, impl, rc, wall, tmo = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
rec = None
for line in open(base + ".out", errors="replace"):
    if line.startswith('{"soak"'):
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            pass
errs = [l.strip() for l in open(base + ".err", errors="replace") if l.strip()]
# The soak's own message (the call, communicator, size) and rcoll's, if any, else the last line.
own = next((l for l in errs if l.startswith(("rcoll-soak: FAILED", "rcoll-soak: TIMEOUT"))), "")
lib = next((l for l in errs if l.startswith("rcoll:")), "")
first = "; ".join(l for l in (own, lib) if l) or (errs[-1] if errs else "")
if rec is None:
    why = f"exit status {rc}"
    if rc == 124:
        why = f"killed by timeout after {int(tmo) + 60} s"
    elif rc == 3 or "TIMEOUT" in first:
        why = f"timed out after {tmo} s (rcoll-soak --timeout)"
    rec = {"soak": True, "ok": False, "failed": why, "detail": first[:600]}
elif rc != 0 and rec.get("ok"):
    rec["ok"] = False
    rec["failed"] = f"exit status {rc} after its report"
    rec["detail"] = first[:600]
rec.update({"impl": impl, "exit": rc, "wall_seconds": wall})
print(json.dumps(rec))
PY
    if [ "$rc" -ne 0 ]; then
        echo "soak: $impl FAILED (exit status $rc); its stderr (last lines, all in $base.err):" >&2
        grep -v '^ *$' "$base.err" | tail -n 15 >&2 || true
        failed+=("soak $impl")
    fi
}
soak=()
if [ -x "$build/rcoll-soak" ] && [ "${RCOLL_SOAK:-1}" = 1 ]; then
    : >"$out/raw/soak.jsonl"
    soak_run native
    soak_run rcoll -x LD_PRELOAD="$build/librcoll-mpi.so"
    soak=(--soak "$out/raw/soak.jsonl")
fi
# Application kernels (apps/, scripts/run_apps.sh): raw/apps.jsonl, the report's "Application
# kernels" section and apps.png. RCOLL_APPS=0 skips them (RCOLL_APPS_RUNS: rounds, default 3).
apps=()
if [ -x "$build/rcoll-app-matmul" ] && [ "${RCOLL_APPS:-1}" = 1 ]; then
    "$(dirname "$0")/run_apps.sh" "$build" "$out" || failed+=("application kernels")
    apps=(--apps "$out/raw/apps.jsonl")
fi
notes+=(--note "Launch: Open MPI 'mpirun --oversubscribe --bind-to none', MPICH 'mpirun.mpich'; $iters iterations per size up to 64 KB, fewer above (rcoll-bench --help); rooted collectives with root 0 and an untimed MPI barrier after every iteration (OSU style; without it the root runs ahead), the others back to back.")
notes+=(--note "Reductions (rcoll-bench ${reduction[*]}: the same operation and element type for rcoll and native MPI): bytes = the vector each rank contributes (reduce_scatter_block: each rank's block of the result), count = bytes / element size, sizes below one element left out; checked against a result computed in rcoll-bench before timing.${large_colls:+ At np=2 $large_colls also at $large_sizes bytes, in a run of its own (raw/<mpi>-large-np2).}")
plots=()
rm -f "$out"/*.png # plots of an earlier run, possibly of collectives not measured now
python3 -c 'import matplotlib' 2>/dev/null || plots=(--no-plots)
# What each collective is (order, size, what each rank moves): rcoll's table, for the report.
colltab=()
"$build/rcoll-info" --colls >"$out/raw/colls.jsonl" && colltab=(--colls "$out/raw/colls.jsonl")
python3 "$(dirname "$0")/../python/rcoll_report.py" --out "$out" "${labels[@]}" "${notes[@]}" "${plots[@]}" \
    "${soak[@]}" "${apps[@]}" "${modes[@]}" "${colltab[@]}"
if [ ${#failed[@]} -gt 0 ]; then
    echo "run_benchmarks: FAILED runs: ${failed[*]} (the report lists what failed)" >&2
    exit 1
fi
