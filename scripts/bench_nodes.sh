#!/usr/bin/env bash
# Node-aware collectives on emulated nodes (docs/tuning.md, "Node-aware collectives and the cost
# model"): for the layouts 2x2, 2x4 and 4x2 (RCOLL_PPN over UCX tcp on this machine), one
# rcoll-bench run per collective (barrier, allgather, alltoall, bcast and the v-forms allgatherv,
# gatherv, scatterv, every count the same) with native Open MPI
# (tcp BTL), rcoll's default and every algorithm the selection may choose across nodes (the
# read-based direct_read and flat_arrival are never chosen there), 1 B to 1 MB, interleaved.
# Writes OUT/<layout>.<coll>.json; then `scripts/nodes_table.py OUT BUILD` prints the tables.
# Usage: scripts/bench_nodes.sh [BUILD_DIR (build)] [OUT_DIR (nodes-bench)]
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
out=$(mkdir -p "${2:-nodes-bench}" && cd "${2:-nodes-bench}" && pwd)
for layout in 2x2:4:2 2x4:8:4 4x2:8:2; do
    IFS=: read -r name np ppn <<<"$layout"
    for coll in barrier allgather alltoall bcast allgatherv gatherv scatterv; do
        algos=$("$build/rcoll-info" --list |
            awk -v c="$coll:" '/^[a-z]+:$/ {cur=$1; next} cur==c {print "rcoll:"$1}' |
            grep -v -e direct_read -e flat_arrival | paste -sd,)
        rm -f "$out/$name.$coll.json"
        timeout 1500 mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$np" \
            --mca btl tcp,self --mca pml ob1 -x RCOLL_PPN="$ppn" -x RCOLL_NET=ucx -x UCX_TLS=tcp \
            "$build/rcoll-bench" --coll "$coll" --impl "native,rcoll,$algos" -m 1:1048576 \
            -i 200 -x 20 --json "$out/$name.$coll.json" > "$out/$name.$coll.txt"
    done
done
echo "written: $out/*.json"
