/* What an algorithm receives and what the registry knows of it. */
#ifndef RCOLL_COLL_H
#define RCOLL_COLL_H

#include <stdbool.h>
#include <stddef.h>
#include "core/team.h"
#include "coll/cost.h"
#include "transport/transport.h"

/* One call, as the algorithm sees it. The entry points (core/collectives.c) have already
 * checked the arguments, copied this rank's own block to where it belongs (so an algorithm never
 * moves data to itself), turned in-place alltoall(v) into a copy of the send data, and skipped
 * calls every rank knows to be empty. */
typedef struct rcoll_args {
    struct rcoll_team *team;
    rcoll_tl_t *tl;
    uint64_t seq;
    int rank, size;
    int root;            /* rooted collectives */
    const void *sendbuf; /* allgather: RCOLL_IN_PLACE or the caller's block; alltoall(v): never
                          * in place; gather(v): this rank's block (the root's: in recvbuf);
                          * scatter(v) and bcast: the root's data (bcast: == recvbuf) */
    void *recvbuf;       /* scatter(v) at the root: its own block's place, never written */
    size_t bytes;        /* per rank (allgather, alltoall, gather, scatter), the message
                          * (bcast), this rank's own count (allgatherv, gatherv: sent;
                          * scatterv: received) */
    const size_t *scounts, *sdispls; /* sending side: alltoallv, scatterv at the root */
    const size_t *rcounts, *rdispls; /* receiving side: allgatherv, alltoallv, gatherv at the root */
    void *target;        /* what enter() advertises for put_user: recvbuf unless prepare set it */
    size_t target_bytes; /* its size (computed for recvbuf; prepare sets it with target) */
    void *tmp;           /* scratch an algorithm's prepare obtained (rcoll_team_tmp) */
    /* Reductions: the vector's element count (reduce_scatter(_block): this rank's block of the
     * result), type and operation; rcounts then holds reduce_scatter's blocks in bytes. */
    size_t count;
    rcoll_dtype_t dtype;
    rcoll_op_t op;
    bool idle;           /* gatherv, scatterv: this rank moves nothing (a zero count; at the
                          * root, all zero counts). Under a flat algorithm it passes
                          * (rcoll_team_pass) without running; a composed one runs on every
                          * rank, whose sub-teams need each of them */
} rcoll_args_t;

/* After `ev` was seen: the sender's length, where the line that carried it tells (transport
 * sent_len), compared with what this rank expects; a difference (sizes that differ between
 * ranks, an erroneous program) is noted and the call goes on to its end, then fails with
 * RCOLL_ERR_TRUNCATE. Free: the line is the one just waited on. */
static inline void rcoll_check_len(const rcoll_args_t *a, const rcoll_event_t *ev, size_t expect)
{
    size_t sent;
    if (a->tl->ops->sent_len(a->tl, ev, &sent) && sent != expect)
        rcoll_team_note_size(a->team, ev->peer, sent, expect);
}

typedef struct rcoll_algo {
    const char *name;
    rcoll_coll_t coll;
    const char *summary; /* one line: the paper and the idea */
    rcoll_status_t (*run)(rcoll_args_t *args);
    /* Optional, before the rank enters the collective: set `target` (and `tmp`) when peers
     * must write somewhere else than recvbuf (a tree's staging buffer). */
    rcoll_status_t (*prepare)(rcoll_args_t *args);
    /* Optional: why the algorithm cannot run this call (a short phrase), NULL when it can. The
     * run path (core/team.c) then runs `fallback` instead, and names that one as what ran: an
     * algorithm never runs another itself. It may read only what every rank of the call
     * agrees on (bytes of the forms without v, team size, the transport's thresholds and
     * capabilities, which are the same on every rank), so that every rank falls back alike. */
    const char *(*not_for)(const rcoll_args_t *args);
    const struct rcoll_algo *fallback; /* same collective; required with not_for */
    const char *limits; /* not_for in words, for rcoll-info --list ("blocks up to ...") */
    /* A node-aware composition (core/hier.h): ordinary calls on the team's sub-teams, each
     * with its own sequence number, so the team itself takes none and enters no transport. */
    bool composed;
    /* Runs ordinary calls of other collectives on the team itself (a reduction made of an
     * allgather, alltoall or gather and local folds, coll/reduce.h): each takes its own
     * sequence number, the call itself none. */
    bool nested;
    /* A reduction whose fold order is not the one linear rank order (coll/reduce.h): a tree's,
     * the ring's, nodes first. Under RCOLL_REPRODUCIBLE=1 it gives way to its fallback (which
     * must not reorder), as if its not_for said so. */
    bool reorders;
    /* Runs only where it is named (RCOLL_TUNE, RCOLL_<COLL>_ALGO, rcoll_team_force_algorithm):
     * an algorithm on trial. The cost model prices it (rcoll-info --explain shows the
     * prediction) but never picks it, and calibration does not time it. */
    bool by_name;
    /* The cost model's predicted time of a call (coll/cost.h), microseconds; NULL where the
     * model has no formula for it (then it is never the model's pick). */
    double (*cost)(const rcoll_cost_in_t *in);
} rcoll_algo_t;

/* Every algorithm, by collective (defined in its own file). */
extern const rcoll_algo_t rcoll_barrier_pairwise_exchange;
extern const rcoll_algo_t rcoll_barrier_dissemination;
extern const rcoll_algo_t rcoll_barrier_gather_release;
extern const rcoll_algo_t rcoll_barrier_flat_arrival;
extern const rcoll_algo_t rcoll_barrier_node_arrival;
extern const rcoll_algo_t rcoll_barrier_hier;
extern const rcoll_algo_t rcoll_allgather_recursive_doubling;
extern const rcoll_algo_t rcoll_allgather_ring;
extern const rcoll_algo_t rcoll_allgather_bruck;
extern const rcoll_algo_t rcoll_allgather_direct;
extern const rcoll_algo_t rcoll_allgather_direct_read;
extern const rcoll_algo_t rcoll_allgather_direct_fixed;
extern const rcoll_algo_t rcoll_allgather_gather_bcast;
extern const rcoll_algo_t rcoll_allgather_hier_gather_bcast;
extern const rcoll_algo_t rcoll_allgather_hier_multi_leader;
extern const rcoll_algo_t rcoll_allgather_hier_multi_group;
extern const rcoll_algo_t rcoll_allgather_hier_multi_gather;
extern const rcoll_algo_t rcoll_allgather_hier_pap;
extern const rcoll_algo_t rcoll_alltoall_direct;
extern const rcoll_algo_t rcoll_alltoall_direct_read;
extern const rcoll_algo_t rcoll_alltoall_direct_fixed;
extern const rcoll_algo_t rcoll_alltoall_pairwise;
extern const rcoll_algo_t rcoll_alltoall_bruck;
extern const rcoll_algo_t rcoll_alltoall_standard_exchange;
extern const rcoll_algo_t rcoll_alltoall_gather_scatter;
extern const rcoll_algo_t rcoll_alltoall_hier_aggregate;
extern const rcoll_algo_t rcoll_alltoall_hier_multi_leader;
extern const rcoll_algo_t rcoll_alltoall_hier_pap;
extern const rcoll_algo_t rcoll_bcast_knomial;
extern const rcoll_algo_t rcoll_bcast_scatter_allgather;
extern const rcoll_algo_t rcoll_bcast_direct_read;
extern const rcoll_algo_t rcoll_bcast_hier;
extern const rcoll_algo_t rcoll_gather_binomial;
extern const rcoll_algo_t rcoll_gather_direct;
extern const rcoll_algo_t rcoll_gather_hier;
extern const rcoll_algo_t rcoll_scatter_binomial;
extern const rcoll_algo_t rcoll_scatter_direct;
extern const rcoll_algo_t rcoll_scatter_direct_read;
extern const rcoll_algo_t rcoll_scatter_hier;
extern const rcoll_algo_t rcoll_allgatherv_direct;
extern const rcoll_algo_t rcoll_allgatherv_hier_gather_bcast;
extern const rcoll_algo_t rcoll_alltoallv_direct;
extern const rcoll_algo_t rcoll_gatherv_direct;
extern const rcoll_algo_t rcoll_gatherv_hier;
extern const rcoll_algo_t rcoll_scatterv_direct;
extern const rcoll_algo_t rcoll_scatterv_direct_read;
extern const rcoll_algo_t rcoll_scatterv_hier;
extern const rcoll_algo_t rcoll_allreduce_direct_read;
extern const rcoll_algo_t rcoll_allreduce_gather_all;
extern const rcoll_algo_t rcoll_allreduce_reduce_scatter_allgather;
extern const rcoll_algo_t rcoll_allreduce_recursive_doubling;
extern const rcoll_algo_t rcoll_allreduce_ring;
extern const rcoll_algo_t rcoll_allreduce_knomial;
extern const rcoll_algo_t rcoll_allreduce_hier;
extern const rcoll_algo_t rcoll_allreduce_hier_multi_leader;
extern const rcoll_algo_t rcoll_reduce_direct_read;
extern const rcoll_algo_t rcoll_reduce_gather_reduce;
extern const rcoll_algo_t rcoll_reduce_reduce_scatter_gather;
extern const rcoll_algo_t rcoll_reduce_knomial;
extern const rcoll_algo_t rcoll_reduce_hier;
extern const rcoll_algo_t rcoll_reduce_scatter_block_direct;
extern const rcoll_algo_t rcoll_reduce_scatter_block_direct_read;
extern const rcoll_algo_t rcoll_reduce_scatter_block_recursive_halving;
extern const rcoll_algo_t rcoll_reduce_scatter_direct;
extern const rcoll_algo_t rcoll_reduce_scatter_recursive_halving;
extern const rcoll_algo_t rcoll_reduce_scatter_pairwise;
extern const rcoll_algo_t rcoll_reduce_scatter_block_pairwise;
extern const rcoll_algo_t rcoll_scan_direct;
extern const rcoll_algo_t rcoll_scan_recursive_doubling;
extern const rcoll_algo_t rcoll_scan_linear;
extern const rcoll_algo_t rcoll_exscan_direct;
extern const rcoll_algo_t rcoll_exscan_recursive_doubling;
extern const rcoll_algo_t rcoll_exscan_linear;

#endif
