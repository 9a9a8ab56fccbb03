#!/usr/bin/env bash
# The application kernels (apps/, apps/README.md) natively and with the rcoll drop-in: matmul
# (N=256 and N=1024), nbody, radix and fft3d (classes S and W), each at its default iterations,
# under Open MPI at np=2 and np=4 ('mpirun --allow-run-as-root --oversubscribe --bind-to none',
# librcoll-mpi.so preloaded by -x LD_PRELOAD for rcoll), then under MPICH at np=2 only
# (mpirun.mpich, librcoll-mpi-mpich.so; MPICH busy-polls when ranks outnumber cores).
# RCOLL_APPS_RUNS rounds (default 3); in each, every (kernel, MPI, np) runs natively and
# preloaded back to back, the order swapped from one round to the next, so that both meet the
# same machine states. Every run is bounded by `timeout` (RCOLL_APPS_TIMEOUT seconds, default 60).
# Writes OUT_DIR/raw/apps.jsonl afresh, one JSON line per run: the kernel's own line plus
# "impl" (native or rcoll), "mpi" (openmpi or mpich), "run" (the round), "args" (its options)
# and "exit"; a run that failed (wrong result, crash, timeout, no JSON line) has "failed" and
# "detail" (its first error line). The output of every run is kept in OUT_DIR/raw/apps/.
# A failure does not stop the other runs; the script exits 1 at the end if any run failed.
# Usage: scripts/run_apps.sh BUILD_DIR OUT_DIR
# Environment: RCOLL_APPS_RUNS (3), RCOLL_APPS_TIMEOUT (60), RCOLL_APPS_MPICH (1; 0 skips MPICH).
# With the defaults, 108 runs: about 75 s on the quiet 2-core machine (25 s a round), about 2
# minutes with another job's tests running beside them.
set -uo pipefail
if [ $# -ne 2 ] || [ ! -d "$1" ]; then
    echo "usage: $0 BUILD_DIR OUT_DIR" >&2
    exit 2
fi
build="$(cd "$1" && pwd)"
out="$2"
runs=${RCOLL_APPS_RUNS:-3}
tmo=${RCOLL_APPS_TIMEOUT:-60}
mkdir -p "$out/raw/apps"
jsonl="$out/raw/apps.jsonl"
: >"$jsonl"

# kernel|options: the cases, in report order
cases=("matmul|-n 256" "matmul|-n 1024" "nbody|" "radix|" "fft3d|-c S" "fft3d|-c W")
failed=()
total=0

# one_run MPI NP IMPL ROUND KERNEL OPTIONS: one mpirun, one JSON line appended to apps.jsonl.
one_run() {
    local mpi=$1 np=$2 impl=$3 k=$4 kernel=$5 opts=$6
    local suffix="" cmd=()
    if [ "$mpi" = mpich ]; then
        suffix="-mpich"
        cmd=(mpirun.mpich -np "$np" -genv OPENBLAS_NUM_THREADS 1)
        [ "$impl" = rcoll ] && cmd+=(-genv LD_PRELOAD "$build/librcoll-mpi-mpich.so")
    else
        cmd=(mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$np"
             -x OPENBLAS_NUM_THREADS=1)
        [ "$impl" = rcoll ] && cmd+=(-x "LD_PRELOAD=$build/librcoll-mpi.so")
    fi
    local tag="$kernel${opts:+${opts// /}}-$mpi-np$np-$impl-run$k"
    local base="$out/raw/apps/$tag" rc=0 start=$SECONDS
    # shellcheck disable=SC2086 # opts: the kernel's options, words on purpose
    timeout -k 10 "$tmo" "${cmd[@]}" "$build/rcoll-app-$kernel$suffix" $opts \
        >"$base.out" 2>"$base.err" </dev/null || rc=$?
    total=$((total + 1))
    # The record, appended to apps.jsonl; one line for the log; status 1 for a failed run.
    python3 - "$base" "$kernel" "$opts" "$mpi" "$np" "$impl" "$k" "$rc" "$tmo" "$jsonl" \
        "$tag" "$((SECONDS - start))" <<'PY' || failed+=("$tag")
import json, sys
base, kernel, opts, mpi, np_, impl, k, rc, tmo, jsonl, tag, wall = sys.argv[1:]
rc = int(rc)
rec = None
for line in open(base + ".out", errors="replace"):
    if line.startswith('{"app"'):
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            pass
errs = [l.strip() for l in open(base + ".err", errors="replace") if l.strip()]
# The kernel's own message first (CHECK FAILED, FAILED, usage), then rcoll's, else the last line.
own = next((l for l in errs if "CHECK FAILED" in l or l.startswith(kernel + ":")), "")
lib = next((l for l in errs if l.startswith("rcoll")), "")
detail = "; ".join(l for l in (own, lib) if l) or (errs[-1] if errs else "")
why = None
if rc in (124, 137):
    why = f"timed out after {tmo} s"
elif rec is None:
    why = f"exit status {rc}, no JSON line"
elif not rec.get("ok"):
    why = f"wrong result (exit status {rc})"
elif rc != 0:
    why = f"exit status {rc} after its JSON line"
if rec is None:
    rec = {"app": kernel, "np": int(np_), "ok": False}
rec.update({"impl": impl, "mpi": mpi, "run": int(k), "args": opts, "exit": rc})
if why:
    rec.update({"ok": False, "failed": why, "detail": detail[:600]})
with open(jsonl, "a", encoding="utf-8") as f:
    f.write(json.dumps(rec) + "\n")
if why:
    print(f"apps: {tag} FAILED after {wall} s: {why}: {detail[:300]}", file=sys.stderr)
    sys.exit(1)
print(f"apps: {tag}: {rec['total_s']:.3f} s, in collectives {rec['coll_s']:.3f} s")
PY
}

# round MPI NP K: every case once natively and once preloaded, the order by K's parity.
round() {
    local mpi=$1 np=$2 k=$3 c impls=(native rcoll)
    [ $((k % 2)) -eq 0 ] && impls=(rcoll native)
    for c in "${cases[@]}"; do
        for impl in "${impls[@]}"; do
            one_run "$mpi" "$np" "$impl" "$k" "${c%%|*}" "${c#*|}"
        done
    done
}

start=$SECONDS
have_ompi=0
have_mpich=0
[ -x "$build/rcoll-app-matmul" ] && [ -f "$build/librcoll-mpi.so" ] &&
    command -v mpirun >/dev/null && have_ompi=1
[ "${RCOLL_APPS_MPICH:-1}" = 1 ] && [ -x "$build/rcoll-app-matmul-mpich" ] &&
    [ -f "$build/librcoll-mpi-mpich.so" ] && command -v mpirun.mpich >/dev/null && have_mpich=1
if [ $have_ompi -eq 0 ] && [ $have_mpich -eq 0 ]; then
    echo "run_apps: no application kernels with a drop-in and mpirun in $build" >&2
    exit 1
fi
for ((k = 1; k <= runs; k++)); do
    if [ $have_ompi -eq 1 ]; then
        round openmpi 2 "$k"
        round openmpi 4 "$k"
    fi
    [ $have_mpich -eq 1 ] && round mpich 2 "$k"
done
echo "apps: $total runs in $((SECONDS - start)) s, ${#failed[@]} failed; $jsonl"
if [ ${#failed[@]} -gt 0 ]; then
    echo "run_apps: FAILED runs: ${failed[*]} (their output in $out/raw/apps/)" >&2
    exit 1
fi
