#!/usr/bin/env bash
# Installs what rcoll needs on a fresh Debian machine (when run as root; otherwise it only checks):
# a C toolchain, cmake, Open MPI, MPICH, the UCX headers, OpenBLAS (the matmul application
# kernel), mpi4py and numpy for /usr/bin/python3 (the drop-in's mpi4py tests; pip, setuptools
# and its headers to build mpi4py for MPICH), curl and xz (MPICH's test suite, fetched by the
# drop-in tests), and matplotlib for the report plots.
set -euo pipefail
need_pkgs=()
have() { command -v "$1" >/dev/null 2>&1; }
have cc || need_pkgs+=(build-essential)
have cmake || need_pkgs+=(cmake)
have pkg-config || need_pkgs+=(pkg-config)
have mpicc.openmpi || need_pkgs+=(openmpi-bin libopenmpi-dev)
have mpicc.mpich || need_pkgs+=(mpich libmpich-dev)
[ -f /usr/include/ucp/api/ucp.h ] || need_pkgs+=(libucx-dev)
# libfabric for the OFI network channel (RCOLL_NET=ofi), and fi_info to see its providers.
[ -f /usr/include/rdma/fabric.h ] || need_pkgs+=(libfabric-dev)
have fi_info || need_pkgs+=(libfabric-bin)
# OpenBLAS for the matmul application kernel (apps/matmul.c; without it, its own blocked loop).
{ have pkg-config && pkg-config --exists openblas; } || need_pkgs+=(libopenblas-dev)
# mpi4py for the MPI drop-in tests (Debian's, built for Open MPI, for /usr/bin/python3).
/usr/bin/python3 -c 'import mpi4py, numpy' 2>/dev/null || need_pkgs+=(python3-mpi4py python3-numpy)
# pip, setuptools and the headers of /usr/bin/python3: the drop-in tests build the same mpi4py
# for MPICH to run its own test suite there (tests/mpi/run_mpi_tests.sh).
/usr/bin/python3 -m pip --version >/dev/null 2>&1 || need_pkgs+=(python3-pip)
/usr/bin/python3 -c 'import setuptools' 2>/dev/null || need_pkgs+=(python3-setuptools)
/usr/bin/python3 -c 'import os, sys, sysconfig; sys.exit(not os.path.exists(os.path.join(
    sysconfig.get_paths()["include"], "Python.h")))' 2>/dev/null || need_pkgs+=(python3-dev)
# curl and xz: the drop-in tests fetch MPICH's own test suite from Debian's archive.
have curl || need_pkgs+=(curl)
have xz || need_pkgs+=(xz-utils)
if [ ${#need_pkgs[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ]; then
        echo "setup: installing ${need_pkgs[*]}"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -q >/dev/null
        apt-get install -y -q "${need_pkgs[@]}" >/dev/null
    else
        echo "setup: missing ${need_pkgs[*]} (run as root to install them)" >&2
        exit 1
    fi
fi
if [ "${RCOLL_SETUP_PYTHON:-1}" = 1 ] && ! python3 -c 'import matplotlib' 2>/dev/null; then
    echo "setup: installing matplotlib"
    python3 -m pip install --quiet matplotlib || echo "setup: matplotlib unavailable: the report will have no plots" >&2
fi
