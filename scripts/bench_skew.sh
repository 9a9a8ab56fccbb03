#!/usr/bin/env bash
# Collectives under process arrival skew (docs/tuning.md, "Process arrival patterns"): the
# judged comparison of issue 15, each repeated RUNS times (default 3; the machine is noisy):
#   one node, np=4, --mif 32, allgather and alltoall 1 B - 1 MB: native Open MPI, rcoll's default,
#   the arrival-order Direct and the fixed-order Direct (the seed's baseline); native MPICH
#   against rcoll's default the same way (MPICH busy-polls at np=4: 30 iterations);
#   2x2 emulated nodes over UCX tcp (native: Open MPI's tcp BTL): rcoll's default, the
#   node-aware non-PAP forms (hier_gather_bcast, hier_aggregate), PAP Shm-Direct (hier_pap),
#   Direct and fixed-order Direct; 4x2 nodes (np=8) up to 64 KB against the node-aware forms
#   (with two nodes a leader gets one node block: nothing for PAP Shm-Direct to overlap);
#   one node, np=4, barrier and bcast with 1 of 4 ranks 200 us late (--late-frac 0.25
#   --late-us 200) and with --mif 32, and on 2x2 nodes with the late rank: every algorithm.
# Writes OUT/<case>-run<k>.jsonl; `python3 scripts/skew_table.py OUT` prints the tables.
# Usage: scripts/bench_skew.sh [BUILD_DIR (build)] [OUT_DIR (skew-bench)]; CASES="node-ompi
# nodes4x2 ..." runs only those cases.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
out=$(mkdir -p "${2:-skew-bench}" && cd "${2:-skew-bench}" && pwd)
runs=${RUNS:-3}
ompi=(mpirun --allow-run-as-root --oversubscribe --bind-to none)
tcp=("${ompi[@]}" --mca btl tcp,self --mca pml ob1 -x RCOLL_NET=ucx -x UCX_TLS=tcp)
algos() { # collective: every algorithm of it, as rcoll:<name>, comma separated
    "$build/rcoll-info" --list | awk -v c="$1:" '/^[a-z]+:$/ {cur=$1; next} cur==c {print "rcoll:"$1}' |
        paste -sd,
}
one() { # case name, then the launcher and rcoll-bench's options
    local name=$1
    shift
    case " ${CASES:-all} " in *" all "* | *" $name "*) ;; *) return 0 ;; esac
    echo "skew: $name run $k"
    rm -f "$out/$name-run$k.jsonl"
    timeout 1800 "$@" --json "$out/$name-run$k.jsonl" >"$out/$name-run$k.txt" 2>&1 ||
        echo "skew: $name run $k FAILED (see $out/$name-run$k.txt)" >&2
}
# Across nodes bcast's direct_read (its ranks read the root's buffer over the network) is left
# out: a reader that has left rcoll for the untimed MPI barrier does not serve reads (a known
# limit of forced read-based algorithms across nodes), and barrier's hier is already listed.
nodes_bcast() { algos bcast | tr , '\n' | grep -v -e direct_read -e ':hier$' | paste -sd,; }
pap=rcoll:direct,rcoll:direct_fixed
hier=rcoll:hier_gather_bcast,rcoll:hier_aggregate
if "$build/rcoll-info" --list | grep '^  hier_pap ' >/dev/null; then hier=$hier,rcoll:hier_pap; fi
for ((k = 1; k <= runs; k++)); do
    one node-ompi "${ompi[@]}" -np 4 "$build/rcoll-bench" --coll allgather,alltoall \
        --impl "native,rcoll,$pap" -m 1:1048576 --mif 32 -i 200 -x 20
    [ -x "$build/rcoll-bench-mpich" ] && one node-mpich mpirun.mpich -np 4 "$build/rcoll-bench-mpich" \
        --coll allgather,alltoall --impl native,rcoll -m 1:1048576 --mif 32 -i 30 -x 3
    one nodes2x2 "${tcp[@]}" -np 4 -x RCOLL_PPN=2 "$build/rcoll-bench" --coll allgather,alltoall \
        --impl "native,rcoll,$hier,$pap" -m 1:1048576 --mif 32 -i 200 -x 20
    one nodes4x2 "${tcp[@]}" -np 8 -x RCOLL_PPN=2 "$build/rcoll-bench" --coll allgather,alltoall \
        --impl "native,rcoll,$hier" -m 1:65536 --mif 32 -i 100 -x 10
    one barrier-bcast-late "${ompi[@]}" -np 4 "$build/rcoll-bench" --coll barrier,bcast \
        --impl "native,rcoll,$(algos barrier),$(algos bcast)" -m 1:65536 --late-frac 0.25 \
        --late-us 200 -i 300 -x 20
    one nodes2x2-barrier-bcast-late "${tcp[@]}" -np 4 -x RCOLL_PPN=2 "$build/rcoll-bench" \
        --coll barrier,bcast --impl "native,rcoll,$(algos barrier),$(nodes_bcast)" -m 1:65536 \
        --late-frac 0.25 --late-us 200 -i 300 -x 20
    one barrier-bcast-mif "${ompi[@]}" -np 4 "$build/rcoll-bench" --coll barrier,bcast \
        --impl "native,rcoll,$(algos barrier),$(algos bcast)" -m 1:65536 --mif 32 -i 300 -x 20
done
echo "written: $out/*.jsonl"
