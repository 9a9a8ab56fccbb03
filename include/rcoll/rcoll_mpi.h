/* Bootstrap adapter for MPI programs: an rcoll_oob_t whose allgather is PMPI_Allgather on a
 * communicator. Needs <mpi.h>; compiled into the MPI-facing parts (librcoll-mpi, rcoll-bench). */
#ifndef RCOLL_RCOLL_MPI_H
#define RCOLL_RCOLL_MPI_H

#include <mpi.h>
#include "rcoll/rcoll.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fills *oob for *comm; the MPI_Comm variable must stay valid while the team is created. */
void rcoll_oob_from_mpi_comm(MPI_Comm *comm, rcoll_oob_t *oob);

#ifdef __cplusplus
}
#endif
#endif
