#!/usr/bin/env bash
# rcoll-bench's nonblocking, persistent and overlap modes, short runs with every iteration's
# data checked (-c): under Open MPI at np=4, --nonblocking for all ten collectives (roots
# rotating, skewed v-form counts), --persistent for all ten with rcoll's blocking call beside it
# (rcoll@blocking), --overlap for allgather, alltoall and bcast, and --overlap with half of the
# ranks late by twice the pure time (--late-frac 0.5 --late-pure 2; for bcast also with the same
# ranks late every iteration, --late-same); under MPICH at np=2 (when
# rcoll-bench-mpich is built) the same modes on fewer collectives (persistent: those whose native
# persistent form MPICH 4.0.2 gets right). Then the JSON records: no
# failed check, each record's mode, native_form on the native persistent rows, and the overlap
# keys sane (0 <= overlap_pct <= 100, wait_us and wait_early_us >= 0, compute_us > 0, late_us =
# 2 x pure_noskew_us). Then the reductions, blocking (they have no other mode yet): all six
# with --op maxloc --dtype double_int (roots rotating, skewed counts), and allreduce, reduce and
# scan with --op sum --dtype int32 --sync none --no-reuse (MPICH too); their records carry op and
# dtype, the nonblocking and persistent runs of --coll all have none, and a reduction named in a
# nonblocking run is refused. No bound on any time: a loaded machine only makes them longer.
# Usage: check_bench_modes.sh BUILD_DIR
set -eu
BUILD=$(cd "$1" && pwd)
OUT=$(mktemp -d "${TMPDIR:-/tmp}/rcoll-bench-modes.XXXXXX")
trap 'rm -rf "$OUT"' EXIT
TMO=$((60 * ${RCOLL_TEST_TIMEOUT_SCALE:-4}))
# Under the sanitizer pass (scripts/test.sh) MPI's own allocations at exit are not ours to
# report: leak checking is off for the ranks (the ASan build still checks every access).
ASAN="ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
ompi() { # name, then rcoll-bench's options
    timeout "$TMO" mpirun --allow-run-as-root --oversubscribe --bind-to none -np 4 -x "$ASAN" \
        "$BUILD/rcoll-bench" -c -i 6 -x 1 --json "$OUT/$1.jsonl" "${@:2}" >"$OUT/$1.txt" 2>&1 ||
        { cat "$OUT/$1.txt"; echo "FAIL: rcoll-bench (Open MPI) $*"; exit 1; }
}
mpich() {
    timeout "$TMO" mpirun.mpich -np 2 -genv ASAN_OPTIONS "${ASAN#ASAN_OPTIONS=}" \
        "$BUILD/rcoll-bench-mpich" -c -i 6 -x 1 --json "$OUT/$1.jsonl" "${@:2}" >"$OUT/$1.txt" 2>&1 ||
        { cat "$OUT/$1.txt"; echo "FAIL: rcoll-bench-mpich $*"; exit 1; }
}
ompi nb --nonblocking --coll all -m 64:4K --root rotate --skewed-counts
ompi pers --persistent --coll all -m 64:4K --root rotate --skewed-counts --impl native,rcoll,rcoll@blocking
ompi ov --overlap --coll allgather,alltoall,bcast -m 16K:64K
ompi ovlate --overlap --coll allgather -m 64K --late-frac 0.5 --late-pure 2 --seed 3
ompi ovlatesame --overlap --coll bcast -m 64K --late-frac 0.5 --late-pure 2 --late-same
ompi red --coll allreduce,reduce,reduce_scatter_block,reduce_scatter,scan,exscan -m 8:4K \
    --root rotate --skewed-counts --op maxloc --dtype double_int
ompi rednr --coll allreduce,reduce,scan -m 4:4K --op sum --dtype int32 --sync none --no-reuse
if timeout "$TMO" mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2 \
    "$BUILD/rcoll-bench" --nonblocking --coll allreduce -m 8 >"$OUT/refused.txt" 2>&1 ||
    ! grep -q "not available for reductions" "$OUT/refused.txt"; then
    cat "$OUT/refused.txt"; echo "FAIL: rcoll-bench --nonblocking --coll allreduce not refused"; exit 1
fi
if [ -x "$BUILD/rcoll-bench-mpich" ] && command -v mpirun.mpich >/dev/null; then
    mpich mpich-nb --nonblocking --coll allgather,alltoallv,bcast,scatterv -m 64:4K --root rotate
    # (MPICH 4.0.2's own persistent allgather, gather and scatter deliver wrong data: their
    # restarts skip the local copy, pmodels/mpich#7078; rcoll-bench's check reports it)
    mpich mpich-pers --persistent --coll alltoall,bcast,alltoallv -m 64:4K --impl native,rcoll,rcoll@blocking
    mpich mpich-ov --overlap --coll allgather -m 64K --late-frac 0.5 --late-pure 2
    mpich mpich-rednr --coll allreduce,reduce,scan -m 4:4K --op sum --dtype int32 --sync none --no-reuse
fi
python3 - "$OUT" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
bad, n = [], 0
expect = {"nb": "nonblocking", "pers": "persistent", "ov": "overlap", "ovlate": "overlap", "ovlatesame": "overlap",
          "red": "blocking", "rednr": "blocking"}
reductions = {"allreduce", "reduce", "reduce_scatter_block", "reduce_scatter", "scan", "exscan"}
want_red = {"red": (reductions, "maxloc", "double_int"), "rednr": ({"allreduce", "reduce", "scan"}, "sum", "int32")}
for path in sorted(glob.glob(f"{out}/*.jsonl")):
    name = os.path.basename(path)[:-len(".jsonl")]
    rows = [json.loads(l) for l in open(path)]
    mode = expect[name.replace("mpich-", "")]
    if not rows:
        bad.append(f"{name}: no records")
    red = want_red.get(name.replace("mpich-", ""))
    if red and {r["coll"] for r in rows} != red[0]:
        bad.append(f"{name}: collectives {sorted({r['coll'] for r in rows})}, expected {sorted(red[0])}")
    for r in rows:
        if (r["coll"] in reductions) != bool(red):
            bad.append(f"{name}: a {r['coll']} record in a {mode} run")
        if red and (r.get("op"), r.get("dtype")) != red[1:]:
            bad.append(f"{name} {r['coll']} {r['bytes']}: op {r.get('op')} dtype {r.get('dtype')}, expected {red[1:]}")
        if red and r["bytes"] % {"int32": 4, "double_int": 16}[red[2]]:
            bad.append(f"{name} {r['coll']}: {r['bytes']} bytes is not a whole number of {red[2]}")
        n += 1
        what = f"{name} {r['coll']} {r['impl']} {r['mode']} {r['bytes']}"
        if "error" in r:
            bad.append(f"{what}: {r['error']}")
            continue
        beside = mode == "persistent" and r["impl"] == "rcoll" and r["mode"] == "blocking"  # rcoll@blocking
        if r["mode"] != ("blocking" if beside else mode) or r.get("run_mode") != (mode if beside else None):
            bad.append(f"{what}: mode {r['mode']} run_mode {r.get('run_mode')} in a {mode} run")
        if r["mode"] == "persistent" and r["impl"] == "native" and r.get("native_form") not in ("persistent", "blocking"):
            bad.append(f"{what}: native_form {r.get('native_form')}")
        if r["mode"] != "blocking" and r["impl"] == "rcoll" and not r.get("progress"):
            bad.append(f"{what}: no progress mode")
        if not (r["max_us"] > 0 and r["min_us"] <= r["avg_us"] <= r["max_us"]):
            bad.append(f"{what}: times {r['min_us']} {r['avg_us']} {r['max_us']}")
        if mode != "overlap":
            continue
        if not (0 <= r["overlap_pct"] <= 100):
            bad.append(f"{what}: overlap_pct {r['overlap_pct']}")
        if r["wait_us"] < 0 or r["pure_us"] <= 0 or r["compute_us"] <= 0 or r["post_us"] < 0:
            bad.append(f"{what}: pure {r['pure_us']} compute {r['compute_us']} wait {r['wait_us']} post {r['post_us']}")
        if abs(r["overall_us"] - r["avg_us"]) > 1e-3:
            bad.append(f"{what}: overall_us {r['overall_us']} is not the Avg column {r['avg_us']}")
        if "late" not in name:
            continue
        if r.get("late_same", False) != ("same" in name):
            bad.append(f"{what}: late_same {r.get('late_same')}")
        if r.get("wait_early_us", -1) < 0 or r.get("pure_noskew_us", 0) <= 0:
            bad.append(f"{what}: wait_early_us {r.get('wait_early_us')} pure_noskew_us {r.get('pure_noskew_us')}")
        elif abs(r["late_us"] - 2 * r["pure_noskew_us"]) > 1e-3 * r["late_us"] + 0.01:
            bad.append(f"{what}: late_us {r['late_us']} is not 2 x pure_noskew_us {r['pure_noskew_us']}")
        if r["compute_for"] != "iteration" or abs(r["delay_us"] - r["late_us"] / 2) > 1e-3 * r["late_us"] + 0.01:
            bad.append(f"{what}: compute_for {r['compute_for']} delay_us {r['delay_us']} (half of late_us expected)")
print("\n".join(bad) if bad else f"ok: {n} records (nonblocking, persistent, overlap, reductions; checked data)")
sys.exit(1 if bad else 0)
PY
