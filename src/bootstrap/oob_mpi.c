/* MPI bootstrap adapter: the team's out-of-band allgather is PMPI_Allgather of bytes on the
 * communicator, so it never re-enters an interposed MPI_Allgather. */
#include "rcoll/rcoll_mpi.h"

static int oob_mpi_allgather(const void *sendbuf, void *recvbuf, size_t len, void *coll_info)
{
    MPI_Comm comm = *(const MPI_Comm *)coll_info;
    int rc = PMPI_Allgather((void *)sendbuf, (int)len, MPI_BYTE, recvbuf, (int)len, MPI_BYTE, comm);
    return rc == MPI_SUCCESS ? 0 : -1;
}

void rcoll_oob_from_mpi_comm(MPI_Comm *comm, rcoll_oob_t *oob)
{
    PMPI_Comm_rank(*comm, &oob->rank);
    PMPI_Comm_size(*comm, &oob->size);
    oob->allgather = oob_mpi_allgather;
    oob->coll_info = comm;
}
