/* rcoll public C API: contexts, teams built over an out-of-band bootstrap, and blocking,
 * nonblocking and persistent collectives (barrier, allgather, alltoall, bcast, gather, scatter and the v-forms of
 * allgather, alltoall, gather and scatter), and reductions (allreduce, reduce, reduce_scatter,
 * reduce_scatter_block, scan, exscan). Everything a user or a binding needs is in this header.
 * Data movement is counted in bytes (a binding packs typed data before it calls rcoll);
 * reductions count elements of a type. */
#ifndef RCOLL_RCOLL_H
#define RCOLL_RCOLL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define RCOLL_API __attribute__((visibility("default")))
#else
#define RCOLL_API
#endif

#define RCOLL_VERSION_MAJOR 0
#define RCOLL_VERSION_MINOR 1

typedef enum {
    RCOLL_OK = 0,
    RCOLL_ERR_INVALID = -1,     /* bad argument or bad configuration value */
    RCOLL_ERR_NOMEM = -2,       /* allocation failed */
    RCOLL_ERR_SYSTEM = -3,      /* an OS call failed (errno is in the message) */
    RCOLL_ERR_TIMEOUT = -4,     /* a peer did not arrive within RCOLL_TIMEOUT */
    RCOLL_ERR_PEER_DEAD = -5,   /* a peer process is gone */
    RCOLL_ERR_UNSUPPORTED = -6, /* not possible with this team or build */
    RCOLL_ERR_BOOTSTRAP = -7,   /* the out-of-band exchange failed */
    RCOLL_ERR_TRUNCATE = -8     /* sizes differ between ranks: a message longer than its
                                 * receiver's buffer was cut at the receiver's length */
} rcoll_status_t;
/* A bad argument of this rank's call (the message names the argument and the rank). */
#define RCOLL_ERR_ARG RCOLL_ERR_INVALID

/* In-place marker, as MPI_IN_PLACE: as the send buffer of allgather(v), alltoall(v) and of
 * gather(v) at the root, as the receive buffer of scatter(v) at the root (see each call). */
#define RCOLL_IN_PLACE ((void *)1)

typedef struct rcoll_context rcoll_context_t;
typedef struct rcoll_team rcoll_team_t;

typedef enum {
    RCOLL_COLL_BARRIER = 0,
    RCOLL_COLL_ALLGATHER = 1,
    RCOLL_COLL_ALLTOALL = 2,
    RCOLL_COLL_BCAST = 3,
    RCOLL_COLL_GATHER = 4,
    RCOLL_COLL_SCATTER = 5,
    RCOLL_COLL_ALLGATHERV = 6,
    RCOLL_COLL_ALLTOALLV = 7,
    RCOLL_COLL_GATHERV = 8,
    RCOLL_COLL_SCATTERV = 9,
    RCOLL_COLL_ALLREDUCE = 10,
    RCOLL_COLL_REDUCE = 11,
    RCOLL_COLL_REDUCE_SCATTER_BLOCK = 12,
    RCOLL_COLL_REDUCE_SCATTER = 13,
    RCOLL_COLL_SCAN = 14,
    RCOLL_COLL_EXSCAN = 15,
    RCOLL_COLL_COUNT
} rcoll_coll_t;

/* Out-of-band bootstrap, the UCC "oob" shape: an allgather of `len` bytes from every member,
 * called a few times while a team is created and never on the data path. Returns 0 on success. */
typedef struct {
    int (*allgather)(const void *sendbuf, void *recvbuf, size_t len, void *coll_info);
    void *coll_info;
    int rank;
    int size;
} rcoll_oob_t;

/* Context: configuration read from the environment (RCOLL_*) once, shared by its teams.
 * Threads may create and use teams of one context at the same time as long as each team is
 * used by one thread at a time; where teams spanning several nodes are among them, say so first
 * (rcoll_context_set_threaded): they share the context's one network worker, which the threads
 * then take turns at. rcoll_context_destroy: no team of the context may be in use. */
RCOLL_API rcoll_status_t rcoll_context_create(rcoll_context_t **ctx);
RCOLL_API void rcoll_context_destroy(rcoll_context_t *ctx);
/* For a context whose teams several threads use at once (set before its first team): its
 * threads take turns at the network worker its teams across nodes share (a lock no thread
 * holds while it waits; docs/design.md, "Threads and the network"). */
RCOLL_API void rcoll_context_set_threaded(rcoll_context_t *ctx, int threaded);
/* The processes of the job on this host, where the caller knows more than a team can see (a
 * team on a sub-communicator sees only its own members): waits judge whether ranks outnumber
 * cores by the larger of this and the team's own count. 0 (default): the team's count. */
RCOLL_API void rcoll_context_set_host_procs(rcoll_context_t *ctx, int procs);

/* The registration cache of user buffers that ranks on other nodes write into or read from
 * (UCX; RCOLL_REG_CACHE entries, LRU, an entry dropped when its memory is unmapped). All zero
 * before the context's first team that spans nodes. */
typedef struct {
    unsigned long long hits, misses, evictions, invalidations, registrations;
    unsigned entries, capacity;
    int hooks; /* UCX memory hooks report unmapped memory (else no caching) */
} rcoll_reg_cache_stats_t;
RCOLL_API void rcoll_context_reg_cache_stats(const rcoll_context_t *ctx, rcoll_reg_cache_stats_t *out);

/* Team: collective over oob->size processes. Every member calls it; the result is agreed, so
 * either all members get a team or all get the same error. A member without a context (its
 * rcoll_context_create failed) calls it with ctx NULL: it takes part in the first exchange only,
 * and every member returns RCOLL_ERR_INVALID instead of waiting for it. */
RCOLL_API rcoll_status_t rcoll_team_create(rcoll_context_t *ctx, const rcoll_oob_t *oob, rcoll_team_t **team);
/* Local only: unmaps and frees. No member may be inside a collective on the team. */
RCOLL_API void rcoll_team_destroy(rcoll_team_t *team);

RCOLL_API int rcoll_team_rank(const rcoll_team_t *team);
RCOLL_API int rcoll_team_size(const rcoll_team_t *team);
RCOLL_API int rcoll_team_node_count(const rcoll_team_t *team);
RCOLL_API int rcoll_team_local_size(const rcoll_team_t *team);

RCOLL_API rcoll_status_t rcoll_barrier(rcoll_team_t *team);
/* Every member contributes `bytes` bytes; recvbuf receives size * bytes, rank order. */
RCOLL_API rcoll_status_t rcoll_allgather(rcoll_team_t *team, const void *sendbuf, void *recvbuf, size_t bytes);

/* Block j of sendbuf (bytes each) goes to rank j, which stores it at recvbuf + rank * bytes.
 * In place (sendbuf = RCOLL_IN_PLACE): the blocks to send are in recvbuf and are replaced. */
RCOLL_API rcoll_status_t rcoll_alltoall(rcoll_team_t *team, const void *sendbuf, void *recvbuf, size_t bytes);
/* The root's `bytes` bytes of buf are copied into buf on every rank. */
RCOLL_API rcoll_status_t rcoll_bcast(rcoll_team_t *team, void *buf, size_t bytes, int root);
/* Every rank's block lands at recvbuf + rank * bytes on the root (recvbuf matters at the root
 * only). In place at the root (sendbuf = RCOLL_IN_PLACE): its block already sits there. */
RCOLL_API rcoll_status_t rcoll_gather(rcoll_team_t *team, const void *sendbuf, void *recvbuf, size_t bytes,
                                      int root);
/* Block j of the root's sendbuf goes to rank j's recvbuf (sendbuf matters at the root only).
 * In place at the root (recvbuf = RCOLL_IN_PLACE): the root's own block stays where it is. */
RCOLL_API rcoll_status_t rcoll_scatter(rcoll_team_t *team, const void *sendbuf, void *recvbuf, size_t bytes,
                                       int root);

/* The v-forms: counts and displacements in bytes, one per rank, as in MPI. Zero counts and any
 * displacements are allowed; the arrays are read during the call only. */
/* Rank j's sendbytes land at recvbuf + displs[j] on every rank; sendbytes must equal
 * counts[rank]. In place: this rank's block already sits at recvbuf + displs[rank]. */
RCOLL_API rcoll_status_t rcoll_allgatherv(rcoll_team_t *team, const void *sendbuf, size_t sendbytes,
                                          void *recvbuf, const size_t *counts, const size_t *displs);
/* sendcounts[j] bytes at sendbuf + sdispls[j] go to rank j, which stores them at recvbuf +
 * rdispls[rank] (its recvcounts[rank] must be equal). In place: sendbuf = RCOLL_IN_PLACE,
 * sendcounts and sdispls are ignored, the data to send is described by recvcounts and rdispls
 * and is replaced. */
RCOLL_API rcoll_status_t rcoll_alltoallv(rcoll_team_t *team, const void *sendbuf, const size_t *sendcounts,
                                         const size_t *sdispls, void *recvbuf, const size_t *recvcounts,
                                         const size_t *rdispls);
/* Rank j's sendbytes land at recvbuf + displs[j] on the root; recvbuf, counts and displs matter
 * at the root only. In place at the root as for rcoll_gather. */
RCOLL_API rcoll_status_t rcoll_gatherv(rcoll_team_t *team, const void *sendbuf, size_t sendbytes, void *recvbuf,
                                       const size_t *counts, const size_t *displs, int root);
/* counts[j] bytes at sendbuf + displs[j] on the root go to rank j's recvbuf (recvbytes must
 * equal them); sendbuf, counts and displs matter at the root only. In place at the root as for
 * rcoll_scatter. */
RCOLL_API rcoll_status_t rcoll_scatterv(rcoll_team_t *team, const void *sendbuf, const size_t *counts,
                                        const size_t *displs, void *recvbuf, size_t recvbytes, int root);

/* ---- Reductions (docs/reductions.md) ----
 *
 * Element types: the fixed-size integers, float, double, long double, the C complex types, C
 * bool, the pairs of minloc/maxloc (value, then int index: the C struct's layout, as MPI's
 * MPI_FLOAT_INT, ...), and opaque elements of n bytes (RCOLL_DTYPE_BYTES(n)), which only a
 * user operation can combine. */
typedef int rcoll_dtype_t;
enum {
    RCOLL_DTYPE_INT8 = 0, RCOLL_DTYPE_UINT8, RCOLL_DTYPE_INT16, RCOLL_DTYPE_UINT16,
    RCOLL_DTYPE_INT32, RCOLL_DTYPE_UINT32, RCOLL_DTYPE_INT64, RCOLL_DTYPE_UINT64,
    RCOLL_DTYPE_FLOAT, RCOLL_DTYPE_DOUBLE, RCOLL_DTYPE_LONG_DOUBLE,
    RCOLL_DTYPE_FLOAT_COMPLEX, RCOLL_DTYPE_DOUBLE_COMPLEX, RCOLL_DTYPE_LONG_DOUBLE_COMPLEX,
    RCOLL_DTYPE_BOOL,
    RCOLL_DTYPE_FLOAT_INT,       /* struct { float v; int i; } */
    RCOLL_DTYPE_DOUBLE_INT,      /* struct { double v; int i; } */
    RCOLL_DTYPE_LONG_INT,        /* struct { long v; int i; } */
    RCOLL_DTYPE_2INT,            /* struct { int v; int i; } */
    RCOLL_DTYPE_SHORT_INT,       /* struct { short v; int i; } */
    RCOLL_DTYPE_LONG_DOUBLE_INT, /* struct { long double v; int i; } */
    RCOLL_DTYPE_COUNT
};
/* An opaque element of n bytes (1 <= n < 2^24), for user operations. */
#define RCOLL_DTYPE_BYTES(n) ((rcoll_dtype_t)(0x1000000 + (int)(n)))

/* Operations: the predefined ones are constants; a user operation is made by rcoll_op_create.
 * Predefined operations apply where C (and MPI) define them: sum and prod on numbers (complex
 * included), min and max on integers and real floating types, land, lor and lxor on integers
 * and bool, band, bor and bxor on integers, minloc and maxloc on the pair types (the smaller
 * index on a tie). Anything else is RCOLL_ERR_INVALID. */
typedef struct rcoll_op *rcoll_op_t;
#define RCOLL_OP_SUM ((rcoll_op_t)(uintptr_t)1)
#define RCOLL_OP_PROD ((rcoll_op_t)(uintptr_t)2)
#define RCOLL_OP_MIN ((rcoll_op_t)(uintptr_t)3)
#define RCOLL_OP_MAX ((rcoll_op_t)(uintptr_t)4)
#define RCOLL_OP_LAND ((rcoll_op_t)(uintptr_t)5)
#define RCOLL_OP_LOR ((rcoll_op_t)(uintptr_t)6)
#define RCOLL_OP_LXOR ((rcoll_op_t)(uintptr_t)7)
#define RCOLL_OP_BAND ((rcoll_op_t)(uintptr_t)8)
#define RCOLL_OP_BOR ((rcoll_op_t)(uintptr_t)9)
#define RCOLL_OP_BXOR ((rcoll_op_t)(uintptr_t)10)
#define RCOLL_OP_MINLOC ((rcoll_op_t)(uintptr_t)11)
#define RCOLL_OP_MAXLOC ((rcoll_op_t)(uintptr_t)12)

/* A user operation: inout[i] = in[i] op inout[i] for i < count (MPI's order: `in` holds the
 * contribution of the lower ranks). It must be associative; a commutative one lets rcoll
 * combine in any order, a non-commutative one is always applied in rank order. `arg` is passed
 * through. The function may be called from any rcoll call of the team (also another thread's
 * progress thread, RCOLL_PROGRESS=thread). Free it once no call that uses it is outstanding. */
typedef void (*rcoll_user_fn_t)(const void *in, void *inout, size_t count, rcoll_dtype_t dtype, void *arg);
RCOLL_API rcoll_status_t rcoll_op_create(rcoll_user_fn_t fn, void *arg, int commutative, rcoll_op_t *op);
RCOLL_API void rcoll_op_free(rcoll_op_t op);
/* Bytes of one element (0 for a value that names no type). */
RCOLL_API size_t rcoll_dtype_size(rcoll_dtype_t dtype);
/* Names as rcoll-bench takes them ("double", "int32", "sum", "maxloc", ...); -1 / NULL if unknown. */
RCOLL_API const char *rcoll_dtype_name(rcoll_dtype_t dtype);
RCOLL_API int rcoll_dtype_from_name(const char *name);
RCOLL_API const char *rcoll_op_name(rcoll_op_t op);
RCOLL_API rcoll_op_t rcoll_op_from_name(const char *name);
/* Whether `op` applies to `dtype` (1) or not (0). */
RCOLL_API int rcoll_op_valid(rcoll_op_t op, rcoll_dtype_t dtype);
/* inout = in op inout, locally (MPI_Reduce_local). */
RCOLL_API rcoll_status_t rcoll_reduce_local(const void *in, void *inout, size_t count, rcoll_dtype_t dtype,
                                            rcoll_op_t op);

/* Every call of a team combines the ranks' vectors in one fixed order per team size (rank order
 * where the operation is not commutative), so every rank gets bitwise the same result; with
 * RCOLL_REPRODUCIBLE=1 also the same from run to run whatever the algorithm (docs/reductions.md).
 * Counts are elements of `dtype`. In place: sendbuf = RCOLL_IN_PLACE, the input is in recvbuf. */
RCOLL_API rcoll_status_t rcoll_allreduce(rcoll_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                                         rcoll_dtype_t dtype, rcoll_op_t op);
/* The result lands in the root's recvbuf only (recvbuf matters at the root only; in place at
 * the root only). */
RCOLL_API rcoll_status_t rcoll_reduce(rcoll_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                                      rcoll_dtype_t dtype, rcoll_op_t op, int root);
/* sendbuf holds size * count elements; block j of the result (count elements) lands in rank
 * j's recvbuf. In place: the input is recvbuf's size * count elements, the result its first
 * count. */
RCOLL_API rcoll_status_t rcoll_reduce_scatter_block(rcoll_team_t *team, const void *sendbuf, void *recvbuf,
                                                    size_t count, rcoll_dtype_t dtype, rcoll_op_t op);
/* As rcoll_reduce_scatter_block with counts[j] elements for rank j (blocks back to back in the
 * send buffer; counts alike on every rank). */
RCOLL_API rcoll_status_t rcoll_reduce_scatter(rcoll_team_t *team, const void *sendbuf, void *recvbuf,
                                              const size_t *counts, rcoll_dtype_t dtype, rcoll_op_t op);
/* Inclusive prefix: rank r receives the vectors of ranks 0..r combined. */
RCOLL_API rcoll_status_t rcoll_scan(rcoll_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                                    rcoll_dtype_t dtype, rcoll_op_t op);
/* Exclusive prefix: rank r receives ranks 0..r-1 combined; rank 0's recvbuf is not written. */
RCOLL_API rcoll_status_t rcoll_exscan(rcoll_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                                      rcoll_dtype_t dtype, rcoll_op_t op);

/* ---- Nonblocking and persistent collectives (docs/nonblocking.md) ----
 *
 * rcoll_i<coll> posts the collective and returns at once with *req; the arguments are those of
 * the blocking call, and the buffers (and the v-forms' count and displacement arrays) must not
 * be touched until the request completes. rcoll_<coll>_init makes a persistent request bound to
 * its buffers: each rcoll_start runs the collective again with whatever the buffers hold then;
 * it is inactive before the first start and after each completion. Every rank of the team posts
 * (and starts) its collectives, blocking, nonblocking and persistent alike, in the same order;
 * several may be outstanding on a team and they may be completed in any order.
 *
 * Completion: rcoll_test (never blocks: *done = 1 once complete) or rcoll_wait; both return the
 * collective's status once it completed (a request that is inactive returns RCOLL_OK at once).
 * Every request is released by rcoll_request_free, also an active one: it then completes on
 * its own (its buffers stay in use until it does), as MPI_Request_free.
 *
 * Progress: where every rank of the team is on one node and may read and write its peers'
 * memory (CMA), a rank that is inside rcoll moves the data of the ranks that are not (a posted
 * rank's buffers are readable and writable by its peers): a collective completes while the
 * caller computes once its peers have posted it. Elsewhere the caller drives it in test, wait
 * and its next call on the team, or a progress thread does (RCOLL_PROGRESS=thread). A request
 * cannot be used by two threads at once. */
typedef struct rcoll_request rcoll_request_t;

RCOLL_API rcoll_status_t rcoll_ibarrier(rcoll_team_t *team, rcoll_request_t **req);
RCOLL_API rcoll_status_t rcoll_iallgather(rcoll_team_t *team, const void *sendbuf, void *recvbuf, size_t bytes,
                                          rcoll_request_t **req);
RCOLL_API rcoll_status_t rcoll_ialltoall(rcoll_team_t *team, const void *sendbuf, void *recvbuf, size_t bytes,
                                         rcoll_request_t **req);
RCOLL_API rcoll_status_t rcoll_ibcast(rcoll_team_t *team, void *buf, size_t bytes, int root,
                                      rcoll_request_t **req);
RCOLL_API rcoll_status_t rcoll_igather(rcoll_team_t *team, const void *sendbuf, void *recvbuf, size_t bytes,
                                       int root, rcoll_request_t **req);
RCOLL_API rcoll_status_t rcoll_iscatter(rcoll_team_t *team, const void *sendbuf, void *recvbuf, size_t bytes,
                                        int root, rcoll_request_t **req);
RCOLL_API rcoll_status_t rcoll_iallgatherv(rcoll_team_t *team, const void *sendbuf, size_t sendbytes,
                                           void *recvbuf, const size_t *counts, const size_t *displs,
                                           rcoll_request_t **req);
RCOLL_API rcoll_status_t rcoll_ialltoallv(rcoll_team_t *team, const void *sendbuf, const size_t *sendcounts,
                                          const size_t *sdispls, void *recvbuf, const size_t *recvcounts,
                                          const size_t *rdispls, rcoll_request_t **req);
RCOLL_API rcoll_status_t rcoll_igatherv(rcoll_team_t *team, const void *sendbuf, size_t sendbytes,
                                        void *recvbuf, const size_t *counts, const size_t *displs, int root,
                                        rcoll_request_t **req);
RCOLL_API rcoll_status_t rcoll_iscatterv(rcoll_team_t *team, const void *sendbuf, const size_t *counts,
                                         const size_t *displs, void *recvbuf, size_t recvbytes, int root,
                                         rcoll_request_t **req);

RCOLL_API rcoll_status_t rcoll_barrier_init(rcoll_team_t *team, rcoll_request_t **req);
RCOLL_API rcoll_status_t rcoll_allgather_init(rcoll_team_t *team, const void *sendbuf, void *recvbuf,
                                              size_t bytes, rcoll_request_t **req);
RCOLL_API rcoll_status_t rcoll_alltoall_init(rcoll_team_t *team, const void *sendbuf, void *recvbuf,
                                             size_t bytes, rcoll_request_t **req);
RCOLL_API rcoll_status_t rcoll_bcast_init(rcoll_team_t *team, void *buf, size_t bytes, int root,
                                          rcoll_request_t **req);
RCOLL_API rcoll_status_t rcoll_gather_init(rcoll_team_t *team, const void *sendbuf, void *recvbuf,
                                           size_t bytes, int root, rcoll_request_t **req);
RCOLL_API rcoll_status_t rcoll_scatter_init(rcoll_team_t *team, const void *sendbuf, void *recvbuf,
                                            size_t bytes, int root, rcoll_request_t **req);
RCOLL_API rcoll_status_t rcoll_allgatherv_init(rcoll_team_t *team, const void *sendbuf, size_t sendbytes,
                                               void *recvbuf, const size_t *counts, const size_t *displs,
                                               rcoll_request_t **req);
RCOLL_API rcoll_status_t rcoll_alltoallv_init(rcoll_team_t *team, const void *sendbuf,
                                              const size_t *sendcounts, const size_t *sdispls, void *recvbuf,
                                              const size_t *recvcounts, const size_t *rdispls,
                                              rcoll_request_t **req);
RCOLL_API rcoll_status_t rcoll_gatherv_init(rcoll_team_t *team, const void *sendbuf, size_t sendbytes,
                                            void *recvbuf, const size_t *counts, const size_t *displs, int root,
                                            rcoll_request_t **req);
RCOLL_API rcoll_status_t rcoll_scatterv_init(rcoll_team_t *team, const void *sendbuf, const size_t *counts,
                                             const size_t *displs, void *recvbuf, size_t recvbytes, int root,
                                             rcoll_request_t **req);

/* The reductions' nonblocking and persistent forms (arguments as the blocking calls'). On the
 * board (one node with CMA) a reduction's data moves one-sided while the caller computes and
 * the fold runs in the call that sees its data complete (test, wait, or any rcoll call on the
 * team); elsewhere it progresses as the other requests do. A user operation may then be called
 * from any of those calls. */
RCOLL_API rcoll_status_t rcoll_iallreduce(rcoll_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                                          rcoll_dtype_t dtype, rcoll_op_t op, rcoll_request_t **req);
RCOLL_API rcoll_status_t rcoll_ireduce(rcoll_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                                       rcoll_dtype_t dtype, rcoll_op_t op, int root, rcoll_request_t **req);
RCOLL_API rcoll_status_t rcoll_ireduce_scatter_block(rcoll_team_t *team, const void *sendbuf, void *recvbuf,
                                                     size_t count, rcoll_dtype_t dtype, rcoll_op_t op,
                                                     rcoll_request_t **req);
RCOLL_API rcoll_status_t rcoll_ireduce_scatter(rcoll_team_t *team, const void *sendbuf, void *recvbuf,
                                               const size_t *counts, rcoll_dtype_t dtype, rcoll_op_t op,
                                               rcoll_request_t **req);
RCOLL_API rcoll_status_t rcoll_iscan(rcoll_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                                     rcoll_dtype_t dtype, rcoll_op_t op, rcoll_request_t **req);
RCOLL_API rcoll_status_t rcoll_iexscan(rcoll_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                                       rcoll_dtype_t dtype, rcoll_op_t op, rcoll_request_t **req);
RCOLL_API rcoll_status_t rcoll_allreduce_init(rcoll_team_t *team, const void *sendbuf, void *recvbuf,
                                              size_t count, rcoll_dtype_t dtype, rcoll_op_t op,
                                              rcoll_request_t **req);
RCOLL_API rcoll_status_t rcoll_reduce_init(rcoll_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                                           rcoll_dtype_t dtype, rcoll_op_t op, int root, rcoll_request_t **req);
RCOLL_API rcoll_status_t rcoll_reduce_scatter_block_init(rcoll_team_t *team, const void *sendbuf, void *recvbuf,
                                                         size_t count, rcoll_dtype_t dtype, rcoll_op_t op,
                                                         rcoll_request_t **req);
RCOLL_API rcoll_status_t rcoll_reduce_scatter_init(rcoll_team_t *team, const void *sendbuf, void *recvbuf,
                                                   const size_t *counts, rcoll_dtype_t dtype, rcoll_op_t op,
                                                   rcoll_request_t **req);
RCOLL_API rcoll_status_t rcoll_scan_init(rcoll_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                                         rcoll_dtype_t dtype, rcoll_op_t op, rcoll_request_t **req);
RCOLL_API rcoll_status_t rcoll_exscan_init(rcoll_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                                           rcoll_dtype_t dtype, rcoll_op_t op, rcoll_request_t **req);

/* Starts an inactive persistent request (RCOLL_ERR_INVALID if it is active or not persistent). */
RCOLL_API rcoll_status_t rcoll_start(rcoll_request_t *req);
RCOLL_API rcoll_status_t rcoll_test(rcoll_request_t *req, int *done);
RCOLL_API rcoll_status_t rcoll_wait(rcoll_request_t *req);
RCOLL_API void rcoll_request_free(rcoll_request_t *req);
/* 1 while started and not yet completed by test or wait. */
RCOLL_API int rcoll_request_active(const rcoll_request_t *req);
RCOLL_API int rcoll_request_persistent(const rcoll_request_t *req);
/* The algorithm that runs (or ran) the request's collective. */
RCOLL_API const char *rcoll_request_algorithm(const rcoll_request_t *req);
/* How the team's requests progress, alike on every rank: "peers" (one-sided: a posted rank's
 * data moves while it computes), "thread" (RCOLL_PROGRESS=thread: a progress thread of this
 * process runs them) or "caller" (only inside rcoll calls of this rank). */
RCOLL_API const char *rcoll_team_progress_mode(const rcoll_team_t *team);
/* Moves data of the team's outstanding requests where this rank can, without blocking. */
RCOLL_API rcoll_status_t rcoll_team_progress(rcoll_team_t *team);
/* One pause of a caller's own wait loop for the team's requests (rcoll_test, with other work
 * between the tests, such as an MPI library's own progress): it spins, yields the core or
 * sleeps as rcoll_wait would at the same point of its wait, by the team's wait policy
 * (RCOLL_WAIT; ranks sharing cores yield at once, a rank with a core of its own spins ~10 ms
 * first). *polls counts the pauses of this wait: 0 at its start. Returns 1 if it yielded or
 * slept (the caller's other work may want a look now), 0 if it spun. */
RCOLL_API int rcoll_team_pause(rcoll_team_t *team, uint64_t *polls);

/* Run `name` for every later call of `coll` on this team (NULL or "auto": back to the
 * decision). An unknown or inapplicable name is RCOLL_ERR_INVALID; the message lists the valid
 * ones. Every member must force the same algorithm. */
RCOLL_API rcoll_status_t rcoll_team_force_algorithm(rcoll_team_t *team, rcoll_coll_t coll, const char *name);

/* Measures the cost model's parameters on this team's machines (docs/tuning.md, "Cost
 * model"): collective, for a team spanning at least two nodes with several ranks on one
 * (RCOLL_ERR_UNSUPPORTED otherwise); takes a few seconds. Writes, on every rank, the text of a
 * model file that RCOLL_MODEL=<file> makes later contexts use. */
RCOLL_API rcoll_status_t rcoll_team_calibrate(rcoll_team_t *team, char *text, size_t len);

/* Name of the algorithm the team's last collective ran ("" before the first one). */
RCOLL_API const char *rcoll_team_last_algorithm(const rcoll_team_t *team);
/* Readable detail of the team's last error (which collective, which ranks), "" if none. */
RCOLL_API const char *rcoll_team_last_error(const rcoll_team_t *team);
RCOLL_API const char *rcoll_strerror(rcoll_status_t status);

RCOLL_API const char *rcoll_coll_name(rcoll_coll_t coll);
/* Parse a collective name ("barrier", "allgather", "alltoallv", ...); -1 if unknown. */
RCOLL_API int rcoll_coll_from_name(const char *name);

/* Selection, without a team: which algorithm rcoll would run and why (for rcoll-info). `bytes`
 * is the block per rank (the message for bcast; ignored for the v-forms, chosen by team size
 * only as their counts differ by rank). The overrides of the context's configuration apply
 * (RCOLL_<COLL>_ALGO, and RCOLL_TUNE's rules per size range). Writes a readable explanation
 * into `why` (which rule chose: a default one or the user's) and returns the algorithm name,
 * or NULL with the error in `why`. */
RCOLL_API const char *rcoll_explain(rcoll_context_t *ctx, rcoll_coll_t coll, size_t bytes, int team_size,
                          int ppn, char *why, size_t why_len);
/* rcoll_explain for nodes that share hosts, `nodes_per_host` of them on one (emulated nodes:
 * RCOLL_PPN or RCOLL_NODE_MAP on one machine); rcoll_explain is this with 1. */
RCOLL_API const char *rcoll_explain_hosts(rcoll_context_t *ctx, rcoll_coll_t coll, size_t bytes,
                                          int team_size, int ppn, int nodes_per_host, char *why,
                                          size_t why_len);
/* Writes the algorithm registry (name, collective, constraints, description) to `buf`. */
RCOLL_API void rcoll_list_algorithms(char *buf, size_t len);
/* Writes the network channels this build has, as RCOLL_NET names them ("ucx, ofi"; "" if none:
 * then a team must stay on one node). */
RCOLL_API void rcoll_network_channels(char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
