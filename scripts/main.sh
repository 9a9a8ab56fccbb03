#!/usr/bin/env bash
# The main job: install what is missing, build, run the benchmark comparison of rcoll against
# native Open MPI and MPICH (barrier, allgather, alltoall, bcast, gather, scatter; np=2 and
# np=4; and across emulated nodes over UCX tcp and libfabric tcp against Open MPI over tcp), the
# nonblocking and persistent collectives (overlap with computation, also with half of the ranks
# late; persistent start+wait against the blocking calls), then the soak test (rcoll-soak: a
# million mixed collectives at np=4, native and preloaded) and the application kernels, write
# report/report.md and the plots beside it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh build
scripts/run_benchmarks.sh build report
echo "main: report written to report/report.md"
