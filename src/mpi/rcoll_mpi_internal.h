/* What the drop-in's four files share: rcoll_mpi.c (the process state, teams per
 * communicator, MPI_Init/Finalize, MPI_Barrier) gives rcoll_mpi_colls.c (the other collectives'
 * bodies and blocking wrappers), rcoll_mpi_nb.c (nonblocking and persistent wrappers, their
 * requests, the completion calls) and rcoll_mpi_reduce.c (the blocking reductions, and the
 * user operations' functions) the team lookup, the error reporting and the datatype
 * helpers; rcoll_mpi_colls.c and rcoll_mpi_reduce.c give rcoll_mpi_nb.c the bodies, which run a
 * call at once or through a plan (rmpi_plan_t: the call posted or bound, its packing
 * deferred), and rcoll_mpi_reduce.c the reductions' route. Internal: not exported from
 * librcoll-mpi.so. */
#ifndef RCOLL_MPI_INTERNAL_H
#define RCOLL_MPI_INTERNAL_H

#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "rcoll/rcoll.h"

#define RMPI_HIDDEN __attribute__((visibility("hidden")))

/* The team that runs this communicator's collectives, or NULL for PMPI_. Collective over comm
 * the first time (it may create the team); the answer is the same on every rank. */
RMPI_HIDDEN rcoll_team_t *rmpi_team_for(MPI_Comm comm);

/* The MPI error class of an rcoll error (MPI_ERR_TRUNCATE, MPI_ERR_ARG or MPI_ERR_OTHER). */
RMPI_HIDDEN int rmpi_rcoll_code(rcoll_status_t st);
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

/* A team kept alive by a request: MPI_Comm_free (or MPI_Finalize) destroys the team of a
 * communicator only once the last hold is released. NULL if comm has no team. */
typedef struct rmpi_hold rmpi_hold_t;
RMPI_HIDDEN rmpi_hold_t *rmpi_team_hold(MPI_Comm comm);
RMPI_HIDDEN void rmpi_team_release(rmpi_hold_t *h);
/* Says once per process (RCOLL_LOG=info) that comm's nonblocking and persistent collectives
 * go to the MPI library: its team's requests progress only in its own calls (`how`). */
RMPI_HIDDEN void rmpi_log_caller_mode(MPI_Comm comm, const char *how);
/* At RCOLL_LOG=info: one line per request rcoll runs (posted, or started if persistent), as
 * the core logs each blocking collective: "rcoll[pid]: MPI_Iallgather on <comm>: request,
 * algorithm <name> (progress: <mode>)". */
RMPI_HIDDEN void rmpi_log_request(MPI_Comm comm, const char *name, const rcoll_request_t *req,
                                  const rcoll_team_t *team);
/* The thread level MPI provides (the highest of all ranks where agreed). */
RMPI_HIDDEN int rmpi_thread_level(void);

/* ---- plans: a call posted (nonblocking) or bound (persistent) rather than run at once ----
 * A wrapper's body runs the same checks in every mode; where the blocking call packs, unpacks
 * or copies around the rcoll call, a plan records the step instead: the steps before the call
 * run when it is posted (each start, for a persistent one), those after it when it completes.
 * Temporaries belong to the plan (freed with it). rcoll_mpi_nb.c owns plans. */
typedef enum { RMPI_POST, RMPI_INIT } rmpi_mode_t;
typedef struct rmpi_plan rmpi_plan_t;

/* One call of a wrapper: its communicator, name (for the messages), team and plan (NULL: the
 * call runs at once, blocking). */
typedef struct {
    MPI_Comm comm;
    const char *name;
    rcoll_team_t *team;
    rmpi_plan_t *plan;
    int rank, size;
} rmpi_call_t;

/* Memory that lives as long as the plan (zeroed); NULL if out of memory. */
RMPI_HIDDEN void *rmpi_plan_alloc(rmpi_plan_t *p, size_t bytes);
/* Records a step: pack (`count` elements of d at in -> out), unpack (out <- in) or copy
 * (`count` bytes), run before the call (after = 0) or after it completes (after = 1). MPI
 * error code (MPI_ERR_NO_MEM). */
enum { RMPI_STEP_PACK, RMPI_STEP_UNPACK, RMPI_STEP_COPY };
RMPI_HIDDEN int rmpi_plan_step(rmpi_plan_t *p, int after, int kind, const void *in, size_t count,
                               const rmpi_dtype_t *d, void *out);
/* Where the call's rcoll request goes; for a nonblocking plan the steps before the call have
 * just run. NULL for a blocking call (p NULL). */
RMPI_HIDDEN rcoll_request_t **rmpi_plan_request(rmpi_plan_t *p);
RMPI_HIDDEN int rmpi_plan_persistent(const rmpi_plan_t *p);
/* Calls fn(arg) when the plan is freed, after its rcoll request was freed (an rcoll operation
 * the request used, a datatype it held); the hooks run in the reverse order of their
 * registration, outside any MPI call. MPI error code (MPI_ERR_NO_MEM). */
RMPI_HIDDEN int rmpi_plan_on_free(rmpi_plan_t *p, void (*fn)(void *), void *arg);

/* The bodies of the collectives (rcoll_mpi_colls.c): everything after the route was decided
 * (c->team set; c->plan set for a nonblocking or persistent call). An MPI error code. */
RMPI_HIDDEN int rmpi_call_start(rmpi_call_t *c, MPI_Comm comm, const char *name);
RMPI_HIDDEN int rmpi_body_allgather(rmpi_call_t *c, const void *sendbuf, int sendcount,
                                    MPI_Datatype sendtype, void *recvbuf, int recvcount,
                                    MPI_Datatype recvtype);
RMPI_HIDDEN int rmpi_body_alltoall(rmpi_call_t *c, const void *sendbuf, int sendcount,
                                   MPI_Datatype sendtype, void *recvbuf, int recvcount,
                                   MPI_Datatype recvtype);
RMPI_HIDDEN int rmpi_body_bcast(rmpi_call_t *c, void *buffer, int count, MPI_Datatype datatype,
                                int root);
RMPI_HIDDEN int rmpi_body_gather(rmpi_call_t *c, const void *sendbuf, int sendcount,
                                 MPI_Datatype sendtype, void *recvbuf, int recvcount,
                                 MPI_Datatype recvtype, int root);
RMPI_HIDDEN int rmpi_body_scatter(rmpi_call_t *c, const void *sendbuf, int sendcount,
                                  MPI_Datatype sendtype, void *recvbuf, int recvcount,
                                  MPI_Datatype recvtype, int root);
RMPI_HIDDEN int rmpi_body_allgatherv(rmpi_call_t *c, const void *sendbuf, int sendcount,
                                     MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                                     const int displs[], MPI_Datatype recvtype);
RMPI_HIDDEN int rmpi_body_alltoallv(rmpi_call_t *c, const void *sendbuf, const int sendcounts[],
                                    const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                    const int recvcounts[], const int rdispls[],
                                    MPI_Datatype recvtype);
RMPI_HIDDEN int rmpi_body_gatherv(rmpi_call_t *c, const void *sendbuf, int sendcount,
                                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                                  const int displs[], MPI_Datatype recvtype, int root);
RMPI_HIDDEN int rmpi_body_scatterv(rmpi_call_t *c, const void *sendbuf, const int sendcounts[],
                                   const int displs[], MPI_Datatype sendtype, void *recvbuf,
                                   int recvcount, MPI_Datatype recvtype, int root);

/* ---- the reductions (rcoll_mpi_reduce.c): the route and the bodies that the blocking
 * wrappers there and the nonblocking and persistent ones in rcoll_mpi_nb.c share ---- */
enum { RMPI_ALLREDUCE, RMPI_REDUCE, RMPI_RS_BLOCK, RMPI_RS, RMPI_SCAN, RMPI_EXSCAN };

/* What rcoll gets for a (datatype, operation). */
typedef struct {
    rcoll_dtype_t dt;
    size_t per;    /* rcoll elements in one element of the MPI datatype */
    size_t esize;  /* bytes of one rcoll element */
    rcoll_op_t op; /* predefined; NULL: the user operation below */
    MPI_User_function *fn;
    int commute;
    MPI_Datatype type; /* the caller's, for the user function */
    MPI_Aint extent;
} rmpi_red_t;

/* 1 if rcoll runs a reduction of `count` elements of `type` with `op` (r filled), 0 for
 * PMPI_ (also for a count of zero). Depends only on what MPI makes the same on every rank. */
RMPI_HIDDEN int rmpi_red_route(long long count, MPI_Datatype type, MPI_Op op, rmpi_red_t *r);
/* The count that decides MPI_Reduce_scatter's route: the sum of recvcounts over comm's ranks,
 * or 1 where the counts are erroneous (NULL, negative: the body reports them). */
RMPI_HIDDEN long long rmpi_red_rs_total(MPI_Comm comm, const int recvcounts[]);
/* The bodies, once the route was decided (c->team set by rmpi_call_start; c->plan set for a
 * nonblocking or persistent call): kind RMPI_ALLREDUCE, RMPI_REDUCE (root), RMPI_RS_BLOCK
 * (count per rank), RMPI_SCAN, RMPI_EXSCAN; and MPI_Reduce_scatter's. An MPI error code. */
RMPI_HIDDEN int rmpi_body_reduce(rmpi_call_t *c, int kind, const rmpi_red_t *r,
                                 const void *sendbuf, void *recvbuf, int count, int root);
RMPI_HIDDEN int rmpi_body_reduce_scatter(rmpi_call_t *c, const rmpi_red_t *r,
                                         const void *sendbuf, void *recvbuf,
                                         const int recvcounts[]);

/* rcoll_mpi_nb.c's part of the process state (kept in rcoll_mpi.c's one global): the table
 * from MPI request handle to rcoll request, and the orphans (the stand-ins of erroneous calls,
 * under way with no handle: completed in the background). `live` counts both: while it is 0
 * every completion wrapper goes straight to PMPI_. */
#define RMPI_NB_BUCKETS 256
typedef struct rmpi_nb {
    _Atomic int live;
    int locking; /* MPI_THREAD_MULTIPLE: the table and the orphans under `lock` */
    pthread_mutex_t lock;
    struct rmpi_plan *bucket[RMPI_NB_BUCKETS];
    struct rmpi_plan *orphans;
    /* Released plans kept for the next call with their handles (under `lock` too): no
     * allocation and no MPI request made or freed per call. */
#define RMPI_NB_SPARES 16
    struct rmpi_plan *spare[RMPI_NB_SPARES];
    int spares;
} rmpi_nb_t;
RMPI_HIDDEN rmpi_nb_t *rmpi_nb(void);
/* MPI_Finalize's clean-up: orphans completed, requests the program left live released. */
RMPI_HIDDEN void rmpi_nb_finalize(void);
/* MPI_Finalize's clean-up of rcoll_mpi_reduce.c: the table of user operations' functions. */
RMPI_HIDDEN void rmpi_reduce_finalize(void);

static inline void *rmpi_addr_add(const void *base, MPI_Aint off)
{
    return (void *)((uintptr_t)base + (uintptr_t)off);
}

#endif
