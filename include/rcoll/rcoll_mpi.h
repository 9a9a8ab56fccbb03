/* Bootstrap adapter for MPI programs: an rcoll_oob_t whose allgather is PMPI_Allgather of bytes
 * on a communicator (PMPI, so that it never re-enters an interposed MPI_Allgather). Needs
 * <mpi.h>; header only (static inline), so that a program built against the installed package
 * gets it with whatever MPI it compiles with, and librcoll itself links no MPI. */
#ifndef RCOLL_RCOLL_MPI_H
#define RCOLL_RCOLL_MPI_H

#include <mpi.h>
#include "rcoll/rcoll.h"

#ifdef __cplusplus
extern "C" {
#endif

static inline int rcoll_oob_mpi_allgather(const void *sendbuf, void *recvbuf, size_t len,
                                          void *coll_info)
{
    MPI_Comm comm = *(const MPI_Comm *)coll_info;
    int rc = PMPI_Allgather((void *)sendbuf, (int)len, MPI_BYTE, recvbuf, (int)len, MPI_BYTE, comm);
    return rc == MPI_SUCCESS ? 0 : -1;
}

/* Fills *oob for *comm; the MPI_Comm variable must stay valid while the team is created. */
static inline void rcoll_oob_from_mpi_comm(MPI_Comm *comm, rcoll_oob_t *oob)
{
    PMPI_Comm_rank(*comm, &oob->rank);
    PMPI_Comm_size(*comm, &oob->size);
    oob->allgather = rcoll_oob_mpi_allgather;
    oob->coll_info = comm;
}

#ifdef __cplusplus
}
#endif
#endif
