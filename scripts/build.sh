#!/usr/bin/env bash
# Configures and builds rcoll into BUILD_DIR (default build/); extra arguments go to cmake.
set -euo pipefail
build="${1:-build}"
shift || true
cmake -S "$(dirname "$0")/.." -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRCOLL_DEVELOPER=ON "$@" >/dev/null
cmake --build "$build" -j"$(nproc)"
