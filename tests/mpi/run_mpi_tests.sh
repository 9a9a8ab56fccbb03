#!/usr/bin/env bash
# Runs the MPI drop-in tests (tests/mpi/*.c, built as <name> for the default MPI = Open MPI and
# <name>-mpich for MPICH) under mpirun with librcoll-mpi.so resp. librcoll-mpi-mpich.so
# LD_PRELOADed, for several process counts. Usage: run_mpi_tests.sh BUILD_DIR
# Prints PASS/FAIL per run and a final line "N passed, N failed"; exits non-zero on any failure.
# The machine may have 2 cores: MPICH busy-polls when oversubscribed, so its runs stay at
# np <= 3 with few repetitions. Every mpirun is bounded by `timeout`: a hang detector, not a
# speed budget. The times given below are several times a run's time on the quiet 2-core
# machine, and RCOLL_TEST_TIMEOUT_SCALE (default 4) multiplies them all, so a machine loaded
# by other work does not fail a correct run (throughput is measured by rcoll-bench instead).
# RCOLL_MPI_FORCED_FLAVORS (default "ompi mpich"; "none": neither): the MPIs under which every
# algorithm is also forced once through the drop-in (the sanitizer pass of scripts/test.sh runs
# none: its C API matrices force every algorithm under the sanitizers already, and the suite's
# time is tight); RCOLL_MPI_FORCED_REDS=0 leaves the reductions out of that. Under MPICH the
# sweeps force the node-aware algorithms only (where the MPI's own node detection and
# communicators matter; the flat ones run the same drop-in code as under Open MPI);
# RCOLL_MPI_FORCED_MPICH=all forces every one there too.
set -u

if [ $# -ne 1 ] || [ ! -d "$1" ]; then
    echo "usage: $0 BUILD_DIR" >&2
    exit 2
fi
BUILD=$(cd "$1" && pwd)
SRC_TESTS=$(cd "$(dirname "$0")" && pwd)
LOG=$(mktemp -d "${TMPDIR:-/tmp}/rcoll-mpi-tests.XXXXXX")
trap 'rm -rf "$LOG"' EXIT

start=$(date +%s)
: >"$LOG/results"
# Runs go RCOLL_MPI_TEST_JOBS (default 3) at a time where they are started with `par` (Open MPI's
# and the forced-algorithm sweeps; MPICH's own busy-poll, so its other runs go one at a time).
jobs_max=${RCOLL_MPI_TEST_JOBS:-3}

# Open MPI as root, on a machine with fewer cores than ranks.
OMPI_RUN=(mpirun --allow-run-as-root --oversubscribe --bind-to none)
MPICH_RUN=(mpirun.mpich)

# run FLAVOR NP TIMEOUT CHECK EXE [ARGS...] [-- VAR=VALUE ...]
#   FLAVOR: ompi | mpich. CHECK: none; log (the output must contain a line from rcoll: it ran);
#   quiet (no line from rcoll but its notice that it steps aside: everything went to PMPI_); algos:A,B (with RCOLL_LOG=info: the
#   log names "algorithm A" and "algorithm B", or A as the one a fallback replaced); ran:C,D=A (with RCOLL_LOG=info: rcoll ran
#   collective C, and D with algorithm A); req:F,G (with RCOLL_LOG=info: the drop-in ran MPI
#   functions F and G as rcoll requests, "rcoll[pid]: F on ...: request, algorithm ...").
run() {
    local flavor=$1 np=$2 tmo=$3 check=$4 exe=$5
    shift 5
    local args=() envs=()
    while [ $# -gt 0 ]; do
        if [ "$1" = "--" ]; then
            shift
            envs=("$@")
            break
        fi
        args+=("$1")
        shift
    done
    local suffix="" lib="$BUILD/librcoll-mpi.so" cmd=()
    if [ "$flavor" = mpich ]; then
        suffix="-mpich"
        lib="$BUILD/librcoll-mpi-mpich.so"
    fi
    # A sanitizer build (RCOLL_SANITIZE): the ASan runtime must come first in the preload list,
    # MPI's own allocations at exit are not ours to report, and the quarantine of freed memory
    # would read as growth in test_mpi_comm_cycles.
    local preload=$lib asan
    asan=$(ldd "$lib" 2>/dev/null | awk '/libasan\.so/ { print $3; exit }')
    if [ -n "$asan" ]; then
        preload="$asan:$lib"
        envs+=("ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:quarantine_size_mb=0}")
    fi
    # The variables go to the ranks only (not to mpirun itself).
    if [ "$flavor" = mpich ]; then
        cmd=("${MPICH_RUN[@]}" -np "$np" -genv LD_PRELOAD "$preload")
        for e in ${envs[@]+"${envs[@]}"}; do cmd+=(-genv "${e%%=*}" "${e#*=}"); done
    else
        cmd=("${OMPI_RUN[@]}" -np "$np" -x "LD_PRELOAD=$preload")
        for e in ${envs[@]+"${envs[@]}"}; do cmd+=(-x "$e"); done
    fi
    tmo=$((tmo * ${RCOLL_TEST_TIMEOUT_SCALE:-4}))
    local path="$BUILD/$exe$suffix"
    local name="$flavor np=$np $exe${args[*]+ ${args[*]}}${envs[*]+ [${envs[*]}]}"
    local out="$LOG/run.$BASHPID.out"
    if [ ! -x "$path" ]; then
        echo "FAIL $name: $path not built"
        echo fail >>"$LOG/results"
        return
    fi
    local t0 rc=0 why=""
    t0=$(date +%s%N)
    timeout -k 10 "$tmo" "${cmd[@]}" "$path" ${args[@]+"${args[@]}"} >"$out" 2>&1 </dev/null ||
        rc=$?
    local tenths=$((($(date +%s%N) - t0) / 100000000))
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        why="timed out after ${tmo}s"
    elif [ $rc -ne 0 ]; then
        why="exit status $rc"
    # (anywhere in a line: Open MPI may forward another rank's log line in pieces around it)
    elif ! grep -Eq "OK $exe( |$)" "$out"; then
        why="no 'OK $exe' line"
    elif [ "$check" = log ] && ! grep -q '^rcoll' "$out"; then
        why="no line from rcoll in the output"
    elif [ "$check" = quiet ] && grep '^rcoll' "$out" | grep -qv ': every collective goes to the MPI library$'; then
        why="rcoll was used (or complained) where everything should go to PMPI_"
    elif [ "${check%%:*}" = algos ]; then
        local a
        for a in $(echo "${check#algos:}" | tr ',' ' '); do
            # (or it gave way where it does not apply: hier_multi_leader on nodes of unequal
            # sizes, np=5 or 3 in 2-rank nodes, runs hier_gather_bcast and says so)
            grep -Eq "(algorithm|fallback of) $a\b" "$out" || why="$why the log never names algorithm $a;"
        done
    elif [ "${check%%:*}" = req ]; then
        local f
        for f in $(echo "${check#req:}" | tr ',' ' '); do
            grep -Eq "^rcoll\[[0-9]+\]: $f on .*: request, algorithm " "$out" ||
                why="$why the log never shows rcoll running $f;"
        done
    elif [ "${check%%:*}" = ran ]; then
        local c re
        for c in $(echo "${check#ran:}" | tr ',' ' '); do
            # (a forced algorithm that gives way where the layout does not allow it, as the
            # node-aware ones for nodes of unequal sizes, says so: "fallback of A")
            re="^rcoll\[[0-9]+\]: ${c%%=*} #[0-9]+ .*: algorithm "
            [ "${c#*=}" != "$c" ] && re="$re(${c#*=} |[a-z_]+ \(fallback of ${c#*=},)"
            grep -Eq "$re" "$out" || why="$why the log never shows rcoll running $c;"
        done
    fi
    # One write per run: runs in parallel do not interleave their lines.
    local report
    if [ -z "$why" ]; then
        report=$(echo "PASS $name ($((tenths / 10)).$((tenths % 10)) s)"
            grep -Eo "OK $exe( .*|$)" "$out" | head -1 | sed 's/^/     /'
            if [ "$check" = log ]; then grep -m 2 '^rcoll' "$out" | sed 's/^/     /'; fi)
        echo pass >>"$LOG/results"
    else
        # (a rank's own FAIL line first: mpirun's message about it can fill the tail)
        report=$(echo "FAIL $name: $why"
            grep -m 5 -E '(^|: )FAIL|^rcoll: ' "$out" | sed 's/^/   ! /'
            tail -n 25 "$out" | sed 's/^/     /')
        echo fail >>"$LOG/results"
    fi
    printf '%s\n' "$report"
    rm -f "$out"
}

# MPICH's own collective test suite with the drop-in preloaded (mpich_coll_suite.sh: fetched
# from Debian's archive and built once per build directory), under FLAVOR, np at most 4; alone
# (it starts its own mpiruns). SKIP where it cannot be fetched.
mpich_suite() {
    local flavor=$1 out rc=0 t0=$(date +%s)
    out=$(bash "$SRC_TESTS/mpich_coll_suite.sh" "$BUILD" "$flavor" 4 2>&1) || rc=$?
    if [ $rc -eq 0 ] && grep -q '^OK mpich_coll_suite' <<<"$out"; then
        echo "PASS mpich_coll_suite ($flavor, $(($(date +%s) - t0)) s)"
        grep '^OK mpich_coll_suite' <<<"$out" | sed 's/^/     /'
        echo pass >>"$LOG/results"
    elif [ $rc -eq 0 ] && grep -q '^SKIP mpich_coll_suite' <<<"$out"; then
        grep '^SKIP mpich_coll_suite' <<<"$out"
    else
        echo "FAIL mpich_coll_suite ($flavor): exit status $rc"
        tail -n 60 <<<"$out" | sed 's/^/     /'
        echo fail >>"$LOG/results"
    fi
}

# par ARGS...: `run ARGS...` in the background, at most jobs_max at a time (collect with wait).
par() {
    while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n; done
    run "$@" &
}

# The test/ folder of the source of the mpi4py that /usr/bin/python3 imports, fetched once by
# pip into the build directory; nothing where there is no such mpi4py or pip cannot fetch it.
mpi4py_tests() {
    local v dir tmp py
    v=$(/usr/bin/python3 -c 'import mpi4py; print(mpi4py.__version__)' 2>/dev/null) || return 0
    dir="$BUILD/mpi4py-$v-source"
    if [ ! -f "$dir/test/mpiunittest.py" ]; then
        tmp=$(mktemp -d "${TMPDIR:-/tmp}/rcoll-mpi4py.XXXXXX")
        for py in python3 /usr/bin/python3; do
            timeout 300 "$py" -m pip download --quiet --no-deps --no-binary :all: "mpi4py==$v" \
                -d "$tmp" >/dev/null 2>&1 && break
        done
        if [ -f "$tmp/mpi4py-$v.tar.gz" ]; then
            mkdir -p "$dir" && cp "$tmp/mpi4py-$v.tar.gz" "$dir/" &&
                tar -xzf "$tmp/mpi4py-$v.tar.gz" -C "$dir" --strip-components=1 "mpi4py-$v/test"
        fi
        rm -rf "$tmp"
    fi
    if [ -f "$dir/test/mpiunittest.py" ]; then echo "$dir/test"; fi
}
# The same mpi4py built for MPICH from that source (Debian's is built for Open MPI), once, into
# the build directory: the folder to put first in PYTHONPATH, or nothing where it cannot be built.
mpi4py_mpich() {
    local tests=$1 dir="$BUILD/mpi4py-mpich"
    if [ ! -d "$dir/mpi4py" ]; then
        local sdist
        sdist=$(ls "$(dirname "$tests")"/mpi4py-*.tar.gz 2>/dev/null | head -1)
        [ -n "$sdist" ] || return 0
        MPICC=mpicc.mpich timeout 600 /usr/bin/python3 -m pip install --quiet --no-deps \
            --no-build-isolation --no-binary :all: --target "$dir.tmp" "$sdist" >/dev/null 2>&1 &&
            mv "$dir.tmp" "$dir"
        rm -rf "$dir.tmp"
    fi
    if [ -d "$dir/mpi4py" ]; then echo "$dir"; fi
}
# In a sanitizer build (RCOLL_SANITIZE) the longer mpi4py_suite runs are left to the plain one.
asan_build=0
if [ -f "$BUILD/librcoll-mpi.so" ] && ldd "$BUILD/librcoll-mpi.so" 2>/dev/null | grep -q libasan; then
    asan_build=1
fi

have_ompi=0
have_mpich=0
if [ -f "$BUILD/librcoll-mpi.so" ]; then
    if command -v mpirun >/dev/null 2>&1; then
        have_ompi=1
    else
        echo "SKIP Open MPI: no mpirun"
    fi
fi
if [ -f "$BUILD/librcoll-mpi-mpich.so" ]; then
    if command -v mpirun.mpich >/dev/null 2>&1; then
        have_mpich=1
    else
        echo "SKIP MPICH: no mpirun.mpich"
    fi
fi
if [ $have_ompi -eq 0 ] && [ $have_mpich -eq 0 ]; then
    echo "FAIL neither $BUILD/librcoll-mpi.so (with mpirun) nor" \
        "$BUILD/librcoll-mpi-mpich.so (with mpirun.mpich) is available"
    echo "0 passed, 1 failed"
    exit 1
fi

# Algorithm names from rcoll-info --list (section "barrier:" / "allgather:"), to force each one
# through the drop-in with RCOLL_<COLL>_ALGO.
algos_of() {
    [ -x "$BUILD/rcoll-info" ] || return 0
    "$BUILD/rcoll-info" --list 2>/dev/null |
        awk -v want="$1:" '/^[^ ]/ { on = ($1 == want); next } on && NF { print $1 }'
}
ag_algos=($(algos_of allgather))
bar_algos=($(algos_of barrier))
if [ ${#ag_algos[@]} -eq 0 ] || [ ${#bar_algos[@]} -eq 0 ]; then
    echo "note: $BUILD/rcoll-info missing or lists no algorithms: no forced-algorithm runs"
fi
# nodes_for ALGO...: the environment under which the node-aware (hier*) ones among them run
# rather than their fallback: emulated nodes of 2 ranks over UCX tcp (nothing for the others).
nodes_for() {
    local a
    for a in "$@"; do
        case $a in hier | hier_*) echo "RCOLL_PPN=2 RCOLL_NET=ucx UCX_TLS=tcp"; return ;; esac
    done
}

# swept FLAVOR ALGO...: whether the sweep under FLAVOR forces these (see the head).
swept() {
    [ "$1" != mpich ] || [ "${RCOLL_MPI_FORCED_MPICH:-}" = all ] || [ -n "$(nodes_for "${@:2}")" ]
}

# run_forced FLAVOR NP REPS: test_mpi_basic once per allgather algorithm (barrier algorithms in
# turn), with the log checked for both names.
run_forced() {
    local i a b
    for i in "${!ag_algos[@]}"; do
        a=${ag_algos[$i]}
        b=${bar_algos[$((i % ${#bar_algos[@]}))]}
        swept "$1" "$a" "$b" || continue
        par "$1" "$2" 120 "algos:$a,$b" test_mpi_basic "$3" -- RCOLL_LOG=info \
            "RCOLL_ALLGATHER_ALGO=$a" "RCOLL_BARRIER_ALGO=$b" $(nodes_for "$a" "$b")
    done
    # barrier algorithms not paired above
    for ((i = ${#ag_algos[@]}; i < ${#bar_algos[@]}; i++)); do
        b=${bar_algos[$i]}
        swept "$1" "$b" || continue
        par "$1" "$2" 120 "algos:$b" test_mpi_basic "$3" -- RCOLL_LOG=info "RCOLL_BARRIER_ALGO=$b" \
            $(nodes_for "$b")
    done
    wait
}

# The collectives of test_mpi_colls: each must show in the log, and each of its algorithms is
# forced once through the drop-in (RCOLL_<COLL>_ALGO, test_mpi_colls on that collective only).
colls=(bcast gather scatter alltoall allgatherv alltoallv gatherv scatterv)
all_colls=$(IFS=,; echo "${colls[*]}")
# run_forced_colls FLAVOR NP
run_forced_colls() {
    local c a var
    for c in "${colls[@]}"; do
        var="RCOLL_$(echo "$c" | tr '[:lower:]' '[:upper:]')_ALGO"
        for a in $(algos_of "$c"); do
            swept "$1" "$a" || continue
            par "$1" "$2" 120 "ran:$c=$a" test_mpi_colls 1 "$c" -- RCOLL_LOG=info "$var=$a" \
                $(nodes_for "$a")
        done
    done
    wait
}
# The reductions of test_mpi_reduce: each must show in the log, and where a reduction has
# several algorithms each is forced once through the drop-in (test_mpi_reduce's quick subset).
reds=(allreduce reduce reduce_scatter_block reduce_scatter scan exscan)
all_reds=$(IFS=,; echo "${reds[*]}")
# run_forced_reds FLAVOR NP
run_forced_reds() {
    local c a var list
    for c in "${reds[@]}"; do
        var="RCOLL_$(echo "$c" | tr '[:lower:]' '[:upper:]')_ALGO"
        list=($(algos_of "$c"))
        [ ${#list[@]} -gt 1 ] || continue
        for a in "${list[@]}"; do
            swept "$1" "$a" || continue
            par "$1" "$2" 120 "ran:$c=$a" test_mpi_reduce 1 quick -- RCOLL_LOG=info "$var=$a" \
                $(nodes_for "$a")
        done
    done
    wait
}
# Open MPI 4.1's own MPI_Allgatherv (coll/tuned's fixed decision) picks its algorithm from the
# send type's size, so ranks whose send types differ (test_mpi_colls does that) take different
# algorithms and hang: where the drop-in is disabled, pin one algorithm (ring).
OMPI_AGV_FIX=(OMPI_MCA_coll_tuned_use_dynamic_rules=1 OMPI_MCA_coll_tuned_allgatherv_algorithm=3)

# forced FLAVOR: whether the forced-algorithm sweeps run under FLAVOR.
forced() {
    case " ${RCOLL_MPI_FORCED_FLAVORS:-ompi mpich} " in *" $1 "*) return 0 ;; esac
    return 1
}

# The nonblocking forms test_mpi_nb posts, and (MPI-4: MPICH) the persistent ones.
nb_forms=MPI_Ibarrier,MPI_Iallgather,MPI_Ialltoall,MPI_Ibcast,MPI_Igather,MPI_Iscatter,MPI_Iallgatherv,MPI_Ialltoallv,MPI_Igatherv,MPI_Iscatterv
p_forms=MPI_Barrier_init,MPI_Allgather_init,MPI_Alltoall_init,MPI_Bcast_init,MPI_Gather_init,MPI_Scatter_init,MPI_Allgatherv_init,MPI_Alltoallv_init,MPI_Gatherv_init,MPI_Scatterv_init

# The nonblocking reductions test_mpi_reduce_nb posts, and (MPI-4: MPICH) the persistent ones.
rnb_forms=MPI_Iallreduce,MPI_Ireduce,MPI_Ireduce_scatter_block,MPI_Ireduce_scatter,MPI_Iscan,MPI_Iexscan
# What the log of mpi4py's collective tests (mpi4py_suite, np=2) must show rcoll running, under
# either MPI: every blocking collective and reduction, and every nonblocking form as a request.
m4_ran="ran:barrier,allgather,alltoall,$all_colls,$all_reds"
m4_req="req:$nb_forms,$rnb_forms"
rp_forms=MPI_Allreduce_init,MPI_Reduce_init,MPI_Reduce_scatter_block_init,MPI_Reduce_scatter_init,MPI_Scan_init,MPI_Exscan_init

# Tests that this script knows; any other tests/mpi/*.c runs once per MPI with no arguments.
known=" test_mpi_basic test_mpi_colls test_mpi_comm_cycles test_mpi_errors test_mpi_intercomm_disable test_mpi_thread_multiple test_mpi_nb test_mpi_reduce test_mpi_reduce_nb test_mpi_fuzz "

if [ $have_ompi -eq 1 ]; then
    echo "== Open MPI ($BUILD/librcoll-mpi.so)"
    par ompi 1 60 none test_mpi_basic 20
    par ompi 3 120 none test_mpi_basic 20
    par ompi 4 120 none test_mpi_basic 20
    par ompi 5 120 none test_mpi_basic 10
    par ompi 2 60 log test_mpi_basic 1 -- RCOLL_LOG=info
    forced ompi && [ ${#ag_algos[@]} -gt 0 ] && [ ${#bar_algos[@]} -gt 0 ] && run_forced ompi 5 2
    # A configuration rcoll rejects (it says so): every collective must still work, by PMPI_.
    par ompi 3 60 log test_mpi_basic 2 -- RCOLL_LOG=not-a-level
    par ompi 1 60 none test_mpi_colls 2
    par ompi 2 120 none test_mpi_colls 2
    par ompi 3 120 none test_mpi_colls 2
    par ompi 4 120 none test_mpi_colls 1
    par ompi 5 150 none test_mpi_colls 1
    par ompi 3 120 "ran:$all_colls" test_mpi_colls 1 -- RCOLL_LOG=info
    # Across emulated nodes (every rank its own node, then 2+2+1): rcoll over UCX tcp.
    par ompi 3 150 "ran:$all_colls" test_mpi_colls 1 -- RCOLL_LOG=info RCOLL_PPN=1 UCX_TLS=tcp
    par ompi 5 150 none test_mpi_colls 1 -- RCOLL_PPN=2 UCX_TLS=tcp
    if forced ompi; then run_forced_colls ompi 5; fi
    par ompi 3 120 quiet test_mpi_colls 1 -- RCOLL_MPI_DISABLE=1 RCOLL_LOG=info "${OMPI_AGV_FIX[@]}"
    # Reductions (test_mpi_reduce): every predefined operation and type, user operations,
    # derived types, against a serial reference; on one node, then across emulated nodes.
    par ompi 1 60 none test_mpi_reduce
    par ompi 2 90 none test_mpi_reduce
    par ompi 3 90 none test_mpi_reduce
    par ompi 5 120 none test_mpi_reduce
    par ompi 3 90 "ran:$all_reds" test_mpi_reduce 1 quick -- RCOLL_LOG=info
    par ompi 3 90 "ran:$all_reds" test_mpi_reduce 1 quick -- RCOLL_LOG=info RCOLL_PPN=1 UCX_TLS=tcp
    par ompi 5 120 none test_mpi_reduce 1 quick -- RCOLL_PPN=2 UCX_TLS=tcp
    if forced ompi && [ "${RCOLL_MPI_FORCED_REDS:-1}" = 1 ]; then run_forced_reds ompi 4; fi
    # Leak checks: a leak of one descriptor, segment or 4 KB per cycle shows in 3000 cycles.
    par ompi 4 150 none test_mpi_comm_cycles 3000
    # Erroneous calls: the erroneous rank reports, nobody hangs or is written past, and the
    # communicator's next collectives work (one node, then 2+2+1 emulated nodes over UCX tcp).
    par ompi 2 60 none test_mpi_errors 3
    par ompi 4 60 none test_mpi_errors 2
    par ompi 5 90 none test_mpi_errors 1 -- RCOLL_PPN=2 UCX_TLS=tcp
    # The soak (tools/rcoll_soak.c) in short: mixed collectives on several communicators at
    # once, rotating roots, no barrier, data checked every 7th call; memory, fds, /dev/shm.
    par ompi 4 120 none rcoll-soak 30000 -c 7
    par ompi 3 120 none rcoll-soak 4000 -c 3 -s 2 -- RCOLL_PPN=2 UCX_TLS=tcp
    par ompi 1 60 none test_mpi_comm_cycles 1000
    par ompi 2 60 none test_mpi_intercomm_disable 10
    par ompi 5 60 none test_mpi_intercomm_disable 5
    par ompi 4 60 quiet test_mpi_intercomm_disable 5 -- RCOLL_MPI_DISABLE=1 RCOLL_LOG=info
    # Nonblocking collectives (test_mpi_nb; "strict": the statuses are the drop-in's): on one
    # node by one-sided completion (the log shows each form ran as an rcoll request); across
    # emulated nodes with a progress thread; in "caller" mode (emulated nodes, no thread) the
    # drop-in gives them to MPI and says so; and all through MPI with the drop-in disabled.
    par ompi 1 60 none test_mpi_nb 2 strict
    par ompi 2 90 "req:$nb_forms" test_mpi_nb 2 strict -- RCOLL_LOG=info
    par ompi 3 90 none test_mpi_nb 2 strict
    par ompi 5 120 none test_mpi_nb 1 strict
    par ompi 3 120 "req:$nb_forms" test_mpi_nb 1 strict -- RCOLL_LOG=info RCOLL_PPN=1 UCX_TLS=tcp \
        RCOLL_PROGRESS=thread
    par ompi 3 120 log test_mpi_nb 1 -- RCOLL_LOG=info RCOLL_PPN=1 UCX_TLS=tcp
    par ompi 3 60 quiet test_mpi_nb 1 -- RCOLL_MPI_DISABLE=1 RCOLL_LOG=info
    par ompi 3 90 none test_mpi_nb 2 strict threads
    # Nonblocking reductions (test_mpi_reduce_nb): on one node, across emulated nodes with a
    # progress thread (user operations there go to MPI: no MPI_THREAD_MULTIPLE), all through
    # MPI; and the pair types with padding (MPI_DOUBLE_INT ...), which run on rcoll, blocking
    # and nonblocking.
    par ompi 1 60 none test_mpi_reduce_nb 3 strict
    par ompi 3 90 "req:$rnb_forms" test_mpi_reduce_nb 2 strict -- RCOLL_LOG=info
    par ompi 5 120 none test_mpi_reduce_nb 2 strict
    par ompi 3 120 "req:$rnb_forms" test_mpi_reduce_nb 1 strict -- RCOLL_LOG=info RCOLL_PPN=1 \
        UCX_TLS=tcp RCOLL_PROGRESS=thread
    par ompi 3 60 quiet test_mpi_reduce_nb 1 -- RCOLL_MPI_DISABLE=1 RCOLL_LOG=info
    par ompi 3 60 "ran:$all_reds" test_mpi_reduce_nb 1 pairs-blocking -- RCOLL_LOG=info
    par ompi 3 60 "req:$rnb_forms" test_mpi_reduce_nb 1 pairs-nb -- RCOLL_LOG=info
    # MPI_THREAD_MULTIPLE: 3 threads, each on its own communicator, through rcoll; across
    # emulated nodes too (the threads take turns at the one UCX worker their teams share).
    par ompi 3 60 "ran:barrier,allgather,alltoall,bcast,gather,scatter,allgatherv,alltoallv,gatherv,scatterv" \
        test_mpi_thread_multiple 100 -- RCOLL_LOG=info
    par ompi 3 90 "ran:barrier,allgather,alltoall,bcast,gather,scatter,allgatherv,alltoallv,gatherv,scatterv" \
        test_mpi_thread_multiple 30 -- RCOLL_LOG=info RCOLL_PPN=1 UCX_TLS=tcp
    # mpi4py (MPI_THREAD_MULTIPLE by default) through rcoll: Debian's python3-mpi4py, Open MPI.
    if /usr/bin/python3 -c 'import mpi4py, numpy' 2>/dev/null; then
        ln -sf "$SRC_TESTS/mpi4py_check.py" "$BUILD/mpi4py_check"
        par ompi 3 120 ran:barrier,allgather,alltoall,bcast,gather,scatter,allgatherv \
            mpi4py_check -- RCOLL_LOG=info
    else
        echo "SKIP mpi4py_check: /usr/bin/python3 cannot import mpi4py and numpy" \
            "(apt-get install python3-mpi4py python3-numpy)"
    fi
    # mpi4py's own collective tests (test/test_cco*.py of its source, the installed version):
    # a third-party suite through rcoll, its blocking, nonblocking and reduction forms checked
    # in the log at np=2; np=3 and 5 and emulated nodes outside the sanitizer build.
    m4tests=$(mpi4py_tests)
    if [ -n "$m4tests" ]; then
        ln -sf "$SRC_TESTS/mpi4py_suite.py" "$BUILD/mpi4py_suite"
        par ompi 2 120 "$m4_ran" mpi4py_suite "$m4tests" -- RCOLL_LOG=info
        par ompi 2 120 "$m4_req" mpi4py_suite "$m4tests" -- RCOLL_LOG=info
        par ompi 3 120 none mpi4py_suite "$m4tests"
        if [ "$asan_build" = 0 ]; then
            par ompi 5 180 none mpi4py_suite "$m4tests"
            par ompi 4 120 none mpi4py_suite "$m4tests" -- RCOLL_PPN=2 UCX_TLS=tcp
        fi
    else
        echo "SKIP mpi4py_suite: no mpi4py for /usr/bin/python3, or its source could not be" \
            "fetched by pip (python3 -m pip download --no-binary :all: mpi4py==VERSION)"
    fi
    for src in "$SRC_TESTS"/*.c; do
        t=$(basename "$src" .c)
        case "$known" in *" $t "*) ;; *) par ompi 3 60 none "$t" ;; esac
    done
    wait
    # MPICH's collective test suite, built for Open MPI (outside the sanitizer build).
    [ "$asan_build" = 0 ] && mpich_suite ompi
    # Randomized sequences of every collective and form, checked against local results (seeds
    # differ per run; a failure prints the seed, np and call to rerun).
    par ompi 2 60 none test_mpi_fuzz 2 20000
    par ompi 3 60 none test_mpi_fuzz 3 20000
    par ompi 4 60 none test_mpi_fuzz 4 10000
    par ompi 5 90 none test_mpi_fuzz 5 10000
    par ompi 3 60 "ran:$all_colls,$all_reds" test_mpi_fuzz 7 400 -- RCOLL_LOG=info
    # Across emulated nodes the nonblocking calls go to Open MPI (progress mode caller), whose
    # in-place MPI_Ialltoallv fails with zero counts: the program avoids that case there.
    par ompi 4 90 none test_mpi_fuzz 14 5000 -- RCOLL_PPN=2 UCX_TLS=tcp FUZZ_NATIVE_WA=1
fi

if [ $have_mpich -eq 1 ]; then
    echo "== MPICH ($BUILD/librcoll-mpi-mpich.so)"
    run mpich 1 60 none test_mpi_basic 20
    run mpich 2 60 none test_mpi_basic 20
    run mpich 3 120 none test_mpi_basic 10
    run mpich 2 60 log test_mpi_basic 1 -- RCOLL_LOG=info
    forced mpich && [ ${#ag_algos[@]} -gt 0 ] && [ ${#bar_algos[@]} -gt 0 ] && run_forced mpich 3 1
    run mpich 1 60 none test_mpi_colls 2
    run mpich 2 120 none test_mpi_colls 1
    run mpich 3 150 none test_mpi_colls 1
    run mpich 2 120 "ran:$all_colls" test_mpi_colls 1 -- RCOLL_LOG=info
    run mpich 3 150 "ran:$all_colls" test_mpi_colls 1 -- RCOLL_LOG=info RCOLL_PPN=1 UCX_TLS=tcp
    if forced mpich; then run_forced_colls mpich 3; fi
    run mpich 2 120 quiet test_mpi_colls 1 -- RCOLL_MPI_DISABLE=1 RCOLL_LOG=info
    run mpich 1 60 none test_mpi_reduce
    run mpich 2 90 none test_mpi_reduce
    run mpich 3 90 none test_mpi_reduce 1 quick
    run mpich 2 90 "ran:$all_reds" test_mpi_reduce 1 quick -- RCOLL_LOG=info
    if forced mpich; then run_forced_reds mpich 3; fi
    run mpich 2 120 none test_mpi_comm_cycles 3000
    run mpich 2 60 none test_mpi_errors 3
    run mpich 3 60 none test_mpi_errors 1
    run mpich 3 120 none rcoll-soak 4000 -c 7
    run mpich 3 60 none test_mpi_intercomm_disable 2
    run mpich 2 60 quiet test_mpi_intercomm_disable 3 -- RCOLL_MPI_DISABLE=1 RCOLL_LOG=info
    run mpich 2 60 "ran:barrier,allgather,alltoall,bcast,gather,scatter,allgatherv,alltoallv,gatherv,scatterv" \
        test_mpi_thread_multiple 50 -- RCOLL_LOG=info
    # Nonblocking and persistent (MPI-4) collectives, as under Open MPI.
    run mpich 1 60 none test_mpi_nb 1 strict
    run mpich 2 90 "req:$nb_forms,$p_forms" test_mpi_nb 1 strict -- RCOLL_LOG=info
    run mpich 3 120 none test_mpi_nb 1 strict
    run mpich 2 120 "req:$nb_forms,$p_forms" test_mpi_nb 1 strict -- RCOLL_LOG=info RCOLL_PPN=1 \
        UCX_TLS=tcp RCOLL_PROGRESS=thread
    run mpich 2 60 quiet test_mpi_nb 1 -- RCOLL_MPI_DISABLE=1 RCOLL_LOG=info
    run mpich 2 90 none test_mpi_nb 1 strict threads
    run mpich 1 60 none test_mpi_reduce_nb 2 strict
    run mpich 2 90 "req:$rnb_forms,$rp_forms" test_mpi_reduce_nb 1 strict -- RCOLL_LOG=info
    run mpich 3 120 none test_mpi_reduce_nb 1 strict
    run mpich 2 120 "req:$rnb_forms,$rp_forms" test_mpi_reduce_nb 1 strict -- RCOLL_LOG=info \
        RCOLL_PPN=1 UCX_TLS=tcp RCOLL_PROGRESS=thread
    run mpich 2 60 quiet test_mpi_reduce_nb 1 -- RCOLL_MPI_DISABLE=1 RCOLL_LOG=info
    run mpich 2 60 "ran:$all_reds" test_mpi_reduce_nb 1 pairs-blocking -- RCOLL_LOG=info
    run mpich 2 60 "req:$rnb_forms" test_mpi_reduce_nb 1 pairs-nb -- RCOLL_LOG=info
    run mpich 2 60 none test_mpi_fuzz 2 20000
    run mpich 3 90 none test_mpi_fuzz 3 5000
    # mpi4py's own collective tests (as under Open MPI) with mpi4py built for MPICH; np=2 only
    # (at np=3 MPICH's busy-polling ranks take minutes, natively as well).
    m4tests=$(mpi4py_tests)
    m4mpich=""
    if [ -n "$m4tests" ] && [ "$asan_build" = 0 ]; then m4mpich=$(mpi4py_mpich "$m4tests"); fi
    if [ -n "$m4mpich" ]; then
        ln -sf "$SRC_TESTS/mpi4py_suite.py" "$BUILD/mpi4py_suite-mpich"
        run mpich 2 120 "$m4_ran" mpi4py_suite "$m4tests" -- RCOLL_LOG=info "PYTHONPATH=$m4mpich"
        run mpich 2 120 "$m4_req" mpi4py_suite "$m4tests" -- RCOLL_LOG=info "PYTHONPATH=$m4mpich"
    elif [ "$asan_build" = 0 ]; then
        echo "SKIP mpi4py_suite under MPICH: mpi4py's source not fetched, or not built for MPICH" \
            "(needs /usr/bin/python3 with pip and its headers: python3-pip python3-dev)"
    fi
    for src in "$SRC_TESTS"/*.c; do
        t=$(basename "$src" .c)
        case "$known" in *" $t "*) ;; *) run mpich 2 60 none "$t" ;; esac
    done
    # MPICH's own collective test suite (outside the sanitizer build).
    if [ "$asan_build" = 0 ]; then
        wait # (alone: MPICH's ranks busy-poll)
        mpich_suite mpich
    fi
fi

wait
passed=$(grep -c '^pass' "$LOG/results")
failed=$(grep -c '^fail' "$LOG/results")
echo "total time $(( $(date +%s) - start )) s"
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
