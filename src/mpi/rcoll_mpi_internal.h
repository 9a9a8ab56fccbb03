/* What the drop-in's two files share: rcoll_mpi.c (the process state, teams per communicator,
 * MPI_Init/Finalize, MPI_Barrier, MPI_Allgather) gives rcoll_mpi_colls.c (the other collectives)
 * the team lookup, the error reporting and the datatype helpers. Internal: not exported from
 * librcoll-mpi.so. */
#ifndef RCOLL_MPI_INTERNAL_H
#define RCOLL_MPI_INTERNAL_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "rcoll/rcoll.h"

#define RMPI_HIDDEN __attribute__((visibility("hidden")))

/* The team that runs this communicator's collectives, or NULL for PMPI_. Collective over comm
 * the first time (it may create the team); the answer is the same on every rank. */
RMPI_HIDDEN rcoll_team_t *rmpi_team_for(MPI_Comm comm);

/* An rcoll call failed: prints "rcoll: <detail>", raises MPI_ERR_OTHER through comm's error
 * handler and returns it. */
RMPI_HIDDEN int rmpi_rcoll_failed(rcoll_team_t *team, rcoll_status_t st, MPI_Comm comm);
/* A local problem (bad argument, no memory, pack failed): prints "rcoll: <coll>: <what>",
 * raises `code` through comm's error handler and returns it. */
RMPI_HIDDEN int rmpi_local_failed(MPI_Comm comm, int code, const char *coll, const char *what);

/* One datatype as the drop-in sees it. */
typedef struct {
    MPI_Datatype type;
    MPI_Count size;  /* bytes of data in one element */
    MPI_Aint extent; /* from one element to the next */
    int plain;       /* elements are their bytes back to back from the buffer address: no packing */
} rmpi_dtype_t;

/* Fills *d; MPI_SUCCESS or MPI_ERR_TYPE. Only for a datatype that is significant here (a
 * rank never looks at an argument MPI says it ignores). */
RMPI_HIDDEN int rmpi_dtype(MPI_Datatype type, rmpi_dtype_t *d);
/* count elements of d in bytes; MPI_ERR_COUNT if count < 0 or on overflow. */
RMPI_HIDDEN int rmpi_bytes(int count, const rmpi_dtype_t *d, size_t *bytes);

/* Packs `count` elements of d at `in` into `out` (count * d->size bytes), resp. unpacks; MPI
 * error code. */
RMPI_HIDDEN int rmpi_pack(const void *in, size_t count, const rmpi_dtype_t *d, char *out,
                          MPI_Comm comm);
RMPI_HIDDEN int rmpi_unpack(const char *in, size_t count, const rmpi_dtype_t *d, void *out,
                            MPI_Comm comm);

static inline void *rmpi_addr_add(const void *base, MPI_Aint off)
{
    return (void *)((uintptr_t)base + (uintptr_t)off);
}

#endif
