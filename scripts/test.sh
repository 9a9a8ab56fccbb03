#!/usr/bin/env bash
# The tests: install what is missing, build, run the whole suite (unit tests, the multi-process
# matrix on one node and over 2, 3 and 4 emulated nodes through each network channel (UCX and
# libfabric, over tcp), failure and cleanup tests,
# the registration cache, the MPI drop-in with Open MPI and MPICH), then build with
# AddressSanitizer + UndefinedBehaviorSanitizer and run the suite again (the full and the
# multi-node matrices, the reductions', the rails' and the one without CMA, in short form there;
# the wait modes, the 4-node composed matrix and the 9-node early-arrival one natively only).
set -euo pipefail
cd "$(dirname "$0")/.."
RCOLL_SETUP_PYTHON=0 scripts/setup.sh
scripts/build.sh build
scripts/test_install.sh build
export RCOLL_TIMEOUT=${RCOLL_TIMEOUT:-120}
# ctest's and the MPI script's time limits only catch hangs: generous, so that a machine busy
# with other work does not fail a correct run (see tests/mpi/run_mpi_tests.sh).
(cd build && ctest --output-on-failure --timeout 3600)
scripts/build.sh build-asan -DRCOLL_SANITIZE=ON
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# Leak checking for rcoll's own processes; the MPI tests set their own ASAN_OPTIONS (the MPI
# libraries themselves leak at exit, which is not ours to report).
(cd build-asan &&
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 ctest --output-on-failure --timeout 3600 \
        -E '^(matrix_(barrier|allgather|alltoall|bcast|gather_scatter|vforms|no_cma|nodes3_.*|nodes4_.*|nodes2_ucx_sm|kport1|kport3|wait_modes|hier4_ucx|nodes_ucx_rails|nodes9_ucx_early)|reduce|reduce_no_cma|reduce_reproducible|reduce_nodes3_.*|nb_board|nb_nodes_.*|peer_failure_nodes_.*|mpi_dropin)$' &&
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 ./test_reduce --quick --np 1,2,3,5 &&
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 ./test_matrix --quick --np 1,2,3,5,8,9 &&
    RCOLL_CMA=0 ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 ./test_matrix --quick --np 2,5 &&
    RCOLL_KPORT=1 ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 ./test_matrix --quick --coll allgather,alltoall --np 5 &&
    RCOLL_KPORT=3 ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 ./test_matrix --quick --coll allgather,alltoall --np 9 &&
    RCOLL_NET=ucx UCX_TLS=tcp ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 ./test_matrix --nodes 3 --quick --calls 2 --np 3,7 &&
    RCOLL_NET=ofi FI_PROVIDER=tcp ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 ./test_matrix --nodes 3 --quick --calls 2 --np 3,7 &&
    UCX_TLS=sm RCOLL_PPN=2 ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 ./test_matrix --quick --calls 2 --np 4,5 &&
    RCOLL_NET=ucx UCX_TLS=tcp RCOLL_UCX_PUT=rma RCOLL_RAILS=3 RCOLL_RAIL_MIN=4k RCOLL_ZCOPY_THRESHOLD=4k \
        ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 ./test_matrix --nodes 2 --quick --calls 2 --np 3 &&
    RCOLL_MPI_FORCED_FLAVORS=none RCOLL_MPI_FORCED_REDS=0 ctest --output-on-failure --timeout 3600 -R '^mpi_dropin$')
