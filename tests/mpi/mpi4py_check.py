#!/usr/bin/python3
"""mpi4py through the rcoll MPI drop-in (run_mpi_tests.sh runs it under mpirun with
librcoll-mpi.so preloaded and RCOLL_LOG=info, and checks that rcoll ran the collectives).

mpi4py initialises MPI with MPI_THREAD_MULTIPLE by default. The buffer forms on numpy arrays
(Barrier, Allgather, Alltoall, Bcast, Gather, Scatter, Allgatherv) go straight to the MPI calls;
the object forms (allgather, bcast) pickle and also end in MPI_Allgather(v) and MPI_Bcast. Then two
Python threads run collectives at the same time on their own duplicates of COMM_WORLD (mpi4py
releases the GIL inside MPI calls). Every result is checked; rank 0 prints "OK mpi4py_check".
Usage: mpi4py_check.py [repetitions (default 20)]"""
import sys
import threading

import mpi4py
import numpy as np
from mpi4py import MPI


def fail(comm, what):
    sys.stderr.write("FAIL mpi4py_check (rank %d): %s\n" % (comm.Get_rank(), what))
    sys.stderr.flush()
    MPI.COMM_WORLD.Abort(1)


def expect(comm, ok, what):
    if not ok:
        fail(comm, what)


def buffer_forms(comm, tag, it):
    """The uppercase calls on numpy arrays, every root in turn."""
    rank, size = comm.Get_rank(), comm.Get_size()
    n = 1 + (it * 37 + tag * 11) % 500
    comm.Barrier()
    send = np.arange(n, dtype=np.int64) + 1000 * rank + tag
    recv = np.empty(size * n, dtype=np.int64)
    comm.Allgather(send, recv)
    for r in range(size):
        expect(comm, np.array_equal(recv[r * n:(r + 1) * n], np.arange(n) + 1000 * r + tag),
               "Allgather block %d" % r)
    blocks = np.arange(size * n, dtype=np.float64) + 0.5 * rank
    got = np.empty(size * n, dtype=np.float64)
    comm.Alltoall(blocks, got)
    for r in range(size):
        want = np.arange(rank * n, (rank + 1) * n, dtype=np.float64) + 0.5 * r
        expect(comm, np.array_equal(got[r * n:(r + 1) * n], want), "Alltoall block %d" % r)
    root = it % size
    buf = np.arange(n, dtype=np.int32) * (root + 1) if rank == root else np.zeros(n, np.int32)
    comm.Bcast(buf, root=root)
    expect(comm, np.array_equal(buf, np.arange(n, dtype=np.int32) * (root + 1)), "Bcast")
    gathered = np.empty(size * n, dtype=np.int64) if rank == root else None
    comm.Gather(send, gathered, root=root)
    if rank == root:
        expect(comm, np.array_equal(gathered, recv), "Gather")
    part = np.empty(n, dtype=np.int64)
    comm.Scatter(recv if rank == root else None, part, root=root)
    expect(comm, np.array_equal(part, np.arange(n) + 1000 * rank + tag), "Scatter")
    counts = [1 + (r + it) % 3 for r in range(size)]
    mine = np.full(counts[rank], rank, dtype=np.int32)
    allv = np.empty(sum(counts), dtype=np.int32)
    comm.Allgatherv(mine, [allv, counts])
    expect(comm, np.array_equal(allv, np.repeat(np.arange(size, dtype=np.int32), counts)),
           "Allgatherv")


def object_forms(comm, it):
    rank, size = comm.Get_rank(), comm.Get_size()
    objs = comm.allgather({"rank": rank, "it": it})
    expect(comm, objs == [{"rank": r, "it": it} for r in range(size)], "allgather")
    root = it % size
    obj = comm.bcast(("root", root, it) if rank == root else None, root=root)
    expect(comm, obj == ("root", root, it), "bcast")


def thread_work(comm, tag, reps, errors):
    try:
        for it in range(reps):
            buffer_forms(comm, tag, it)
    except Exception as e:  # a failure in a thread must fail the run
        errors.append("thread %d: %r" % (tag, e))


def main():
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    world = MPI.COMM_WORLD
    level = MPI.Query_thread()
    for it in range(reps):
        buffer_forms(world, 0, it)
        object_forms(world, it)
    comms = [world.Dup() for _ in range(2)]
    errors = []
    if level == MPI.THREAD_MULTIPLE:
        threads = [threading.Thread(target=thread_work, args=(c, t + 1, reps, errors))
                   for t, c in enumerate(comms)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    else:
        for t, c in enumerate(comms):
            thread_work(c, t + 1, reps, errors)
    expect(world, not errors, "; ".join(errors))
    for c in comms:
        c.Free()
    world.Barrier()
    if world.Get_rank() == 0:
        names = {MPI.THREAD_SINGLE: "SINGLE", MPI.THREAD_FUNNELED: "FUNNELED",
                 MPI.THREAD_SERIALIZED: "SERIALIZED", MPI.THREAD_MULTIPLE: "MULTIPLE"}
        print("OK mpi4py_check (np %d, MPI_THREAD_%s, mpi4py %s, %d repetitions)"
              % (world.Get_size(), names.get(level, str(level)), mpi4py.__version__, reps))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
