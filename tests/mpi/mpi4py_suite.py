#!/usr/bin/python3
"""mpi4py's own collective tests through the rcoll MPI drop-in: a third-party suite, run as its
authors wrote it (run_mpi_tests.sh fetches the source of the installed mpi4py version by pip and
runs this under mpirun with the drop-in preloaded).

Runs every test/test_cco*.py module of that source (blocking, nonblocking, vector and object
collectives, intercommunicators and neighbourhood collectives; the last two go to the MPI
library) in one unittest run per rank, with mpi4py's default thread level (MPI_THREAD_MULTIPLE).
A rank prints its failures; rank 0 prints "OK mpi4py_suite" when every rank passed.
Usage: mpi4py_suite.py MPI4PY_TEST_DIR"""
import os
import sys
import unittest

if len(sys.argv) != 2 or not os.path.isfile(os.path.join(sys.argv[1], "mpiunittest.py")):
    sys.stderr.write("usage: mpi4py_suite.py MPI4PY_TEST_DIR (mpi4py's source, test/)\n")
    sys.exit(2)
tests = sys.argv[1]
sys.path.insert(0, tests)

import mpi4py  # noqa: E402
from mpi4py import MPI  # noqa: E402

world = MPI.COMM_WORLD
names = sorted(f[:-3] for f in os.listdir(tests) if f.startswith("test_cco") and f.endswith(".py"))
suite = unittest.defaultTestLoader.loadTestsFromNames(names)
result = unittest.TextTestRunner(stream=sys.stderr, verbosity=0).run(suite)
mine = result.wasSuccessful() and result.testsRun > 0
if not mine:
    sys.stderr.write("FAIL mpi4py_suite (rank %d): %d failures, %d errors in %d tests\n"
                     % (world.Get_rank(), len(result.failures), len(result.errors), result.testsRun))
every = world.allreduce(1 if mine else 0, op=MPI.MIN)
if every and world.Get_rank() == 0:
    level = MPI.Query_thread()
    names_of = {MPI.THREAD_SINGLE: "SINGLE", MPI.THREAD_FUNNELED: "FUNNELED",
                MPI.THREAD_SERIALIZED: "SERIALIZED", MPI.THREAD_MULTIPLE: "MULTIPLE"}
    print("OK mpi4py_suite (np %d, mpi4py %s, MPI_THREAD_%s, %d tests, %d skipped: %s)"
          % (world.Get_size(), mpi4py.__version__, names_of.get(level, str(level)), result.testsRun,
             len(result.skipped), " ".join(names)))
sys.exit(0 if every else 1)
