/* The table of collectives: see colls.h. */
#include "coll/colls.h"

#include <strings.h>

#include "coll/coll.h"

/* Each collective's algorithms, in the order rcoll-info lists them (and error messages name
 * the valid ones). */
static const rcoll_algo_t *const barrier_algos[] = {
    &rcoll_barrier_dissemination, &rcoll_barrier_pairwise_exchange, &rcoll_barrier_gather_release,
    &rcoll_barrier_flat_arrival, &rcoll_barrier_node_arrival, &rcoll_barrier_hier, NULL};
static const rcoll_algo_t *const allgather_algos[] = {
    &rcoll_allgather_recursive_doubling, &rcoll_allgather_ring, &rcoll_allgather_bruck,
    &rcoll_allgather_direct, &rcoll_allgather_direct_read, &rcoll_allgather_direct_fixed,
    &rcoll_allgather_gather_bcast,
    &rcoll_allgather_hier_gather_bcast, &rcoll_allgather_hier_multi_leader,
    &rcoll_allgather_hier_multi_group, &rcoll_allgather_hier_multi_gather,
    &rcoll_allgather_hier_pap, NULL};
static const rcoll_algo_t *const alltoall_algos[] = {
    &rcoll_alltoall_direct, &rcoll_alltoall_direct_read, &rcoll_alltoall_direct_fixed,
    &rcoll_alltoall_pairwise,
    &rcoll_alltoall_bruck, &rcoll_alltoall_standard_exchange, &rcoll_alltoall_gather_scatter,
    &rcoll_alltoall_hier_aggregate, &rcoll_alltoall_hier_multi_leader, &rcoll_alltoall_hier_pap,
    NULL};
static const rcoll_algo_t *const bcast_algos[] = {
    &rcoll_bcast_direct_read, &rcoll_bcast_knomial, &rcoll_bcast_scatter_allgather,
    &rcoll_bcast_hier, NULL};
static const rcoll_algo_t *const gather_algos[] = {&rcoll_gather_direct, &rcoll_gather_binomial,
    &rcoll_gather_hier, NULL};
static const rcoll_algo_t *const scatter_algos[] = {
    &rcoll_scatter_direct, &rcoll_scatter_direct_read, &rcoll_scatter_binomial, &rcoll_scatter_hier, NULL};
static const rcoll_algo_t *const allgatherv_algos[] = {&rcoll_allgatherv_direct,
                                                        &rcoll_allgatherv_hier_gather_bcast, NULL};
static const rcoll_algo_t *const alltoallv_algos[] = {&rcoll_alltoallv_direct, NULL};
static const rcoll_algo_t *const gatherv_algos[] = {&rcoll_gatherv_direct, &rcoll_gatherv_hier, NULL};
static const rcoll_algo_t *const scatterv_algos[] = {&rcoll_scatterv_direct, &rcoll_scatterv_direct_read,
                                                      &rcoll_scatterv_hier, NULL};
static const rcoll_algo_t *const allreduce_algos[] = {
    &rcoll_allreduce_direct_read, &rcoll_allreduce_gather_all, &rcoll_allreduce_reduce_scatter_allgather,
    &rcoll_allreduce_recursive_doubling, &rcoll_allreduce_ring, &rcoll_allreduce_knomial, &rcoll_allreduce_hier,
    &rcoll_allreduce_hier_multi_leader, NULL};
static const rcoll_algo_t *const reduce_algos[] = {
    &rcoll_reduce_direct_read, &rcoll_reduce_gather_reduce, &rcoll_reduce_reduce_scatter_gather,
    &rcoll_reduce_knomial, &rcoll_reduce_hier, NULL};
static const rcoll_algo_t *const reduce_scatter_block_algos[] = {
    &rcoll_reduce_scatter_block_direct_read, &rcoll_reduce_scatter_block_direct,
    &rcoll_reduce_scatter_block_recursive_halving, &rcoll_reduce_scatter_block_pairwise, NULL};
static const rcoll_algo_t *const reduce_scatter_algos[] = {&rcoll_reduce_scatter_direct,
    &rcoll_reduce_scatter_recursive_halving, &rcoll_reduce_scatter_pairwise, NULL};
static const rcoll_algo_t *const scan_algos[] = {&rcoll_scan_direct, &rcoll_scan_recursive_doubling,
                                                         &rcoll_scan_linear, NULL};
static const rcoll_algo_t *const exscan_algos[] = {&rcoll_exscan_direct, &rcoll_exscan_recursive_doubling,
                                                           &rcoll_exscan_linear,
                                                           NULL};

#define NONE {RCOLL_BLOCKS_NONE, false}
#define ONE {RCOLL_BLOCKS_ONE, false}
#define EACH {RCOLL_BLOCKS_EACH, false}
#define ROOT_ONE {RCOLL_BLOCKS_ONE, true}
#define ROOT_EACH {RCOLL_BLOCKS_EACH, true}

/* Indexed by the enum: every row at its own value (test_unit checks). */
const rcoll_coll_info_t rcoll_coll_table[] = {
    {RCOLL_COLL_BARRIER, "barrier", false, false, NONE, NONE, false, RCOLL_IN_PLACE_NONE,
     "nothing (no data)", "no data",
     "no rank leaves before every rank has entered", barrier_algos, false},
    {RCOLL_COLL_ALLGATHER, "allgather", false, false, ONE, EACH, false, RCOLL_IN_PLACE_SEND,
     "the block each rank contributes", "bytes per rank",
     "every rank sends its block; every rank receives the P blocks, in rank order",
     allgather_algos, false},
    {RCOLL_COLL_ALLTOALL, "alltoall", false, false, EACH, EACH, false, RCOLL_IN_PLACE_SEND,
     "the block each rank sends to each rank", "bytes per rank pair",
     "every rank sends P blocks, block j to rank j; every rank receives P blocks, one from each "
     "rank", alltoall_algos, false},
    {RCOLL_COLL_BCAST, "bcast", true, false, ROOT_ONE, ONE, true, RCOLL_IN_PLACE_NONE,
     "the whole message", "message bytes",
     "the root sends the message from its buffer; every other rank receives it into its own",
     bcast_algos, false},
    {RCOLL_COLL_GATHER, "gather", true, false, ONE, ROOT_EACH, false, RCOLL_IN_PLACE_SEND,
     "the block each rank sends", "bytes per rank",
     "every rank sends its block; the root receives the P blocks, in rank order", gather_algos, false},
    {RCOLL_COLL_SCATTER, "scatter", true, false, ROOT_EACH, ONE, false, RCOLL_IN_PLACE_RECV,
     "the block each rank receives", "bytes per rank",
     "the root sends P blocks, block j to rank j; every rank receives its block", scatter_algos, false},
    {RCOLL_COLL_ALLGATHERV, "allgatherv", false, true, ONE, EACH, false, RCOLL_IN_PLACE_SEND,
     "the counts, one per rank (each rank's block)", "bytes per rank",
     "every rank sends its block of its own count; every rank receives every rank's block at "
     "its displacement", allgatherv_algos, false},
    {RCOLL_COLL_ALLTOALLV, "alltoallv", false, true, EACH, EACH, false, RCOLL_IN_PLACE_SEND,
     "the counts, one per pair of ranks", "bytes per rank pair",
     "every rank sends a block of its own count to each rank; every rank receives one from each "
     "rank at its displacement", alltoallv_algos, false},
    {RCOLL_COLL_GATHERV, "gatherv", true, true, ONE, ROOT_EACH, false, RCOLL_IN_PLACE_SEND,
     "the counts, one per rank (each rank's block)", "bytes per rank",
     "every rank sends its block of its own count; the root receives every block at its "
     "displacement", gatherv_algos, false},
    {RCOLL_COLL_SCATTERV, "scatterv", true, true, ROOT_EACH, ONE, false, RCOLL_IN_PLACE_RECV,
     "the counts, one per rank (each rank's block)", "bytes per rank",
     "the root sends each rank its block from its displacement; every rank receives its block",
     scatterv_algos, false},
    {RCOLL_COLL_ALLREDUCE, "allreduce", false, false, ONE, ONE, false, RCOLL_IN_PLACE_SEND,
     "the vector each rank contributes (count elements)", "vector bytes",
     "every rank sends its vector; every rank receives the P vectors combined element by element",
     allreduce_algos, true},
    {RCOLL_COLL_REDUCE, "reduce", true, false, ONE, ROOT_ONE, false, RCOLL_IN_PLACE_SEND,
     "the vector each rank contributes (count elements)", "vector bytes",
     "every rank sends its vector; the root receives the P vectors combined element by element",
     reduce_algos, true},
    {RCOLL_COLL_REDUCE_SCATTER_BLOCK, "reduce_scatter_block", false, false, EACH, ONE, false,
     RCOLL_IN_PLACE_SEND, "each rank's block of the result (count elements)", "bytes per rank",
     "every rank sends P blocks; rank j receives block j of the P ranks combined",
     reduce_scatter_block_algos, true},
    {RCOLL_COLL_REDUCE_SCATTER, "reduce_scatter", false, true, EACH, ONE, false, RCOLL_IN_PLACE_SEND,
     "the counts, one per rank (each rank's block of the result)", "bytes per rank",
     "every rank sends P blocks of the counts; rank j receives block j of the P ranks combined",
     reduce_scatter_algos, true},
    {RCOLL_COLL_SCAN, "scan", false, false, ONE, ONE, false, RCOLL_IN_PLACE_SEND,
     "the vector each rank contributes (count elements)", "vector bytes",
     "every rank sends its vector; rank r receives the vectors of ranks 0..r combined",
     scan_algos, true},
    {RCOLL_COLL_EXSCAN, "exscan", false, false, ONE, ONE, false, RCOLL_IN_PLACE_SEND,
     "the vector each rank contributes (count elements)", "vector bytes",
     "every rank sends its vector; rank r > 0 receives the vectors of ranks 0..r-1 combined",
     exscan_algos, true},
};
_Static_assert(sizeof rcoll_coll_table / sizeof rcoll_coll_table[0] == RCOLL_COLL_COUNT,
               "one row per collective");

const rcoll_coll_info_t *rcoll_coll_info_by_name(const char *name)
{
    for (size_t i = 0; name && i < (size_t)RCOLL_COLL_COUNT; i++)
        if (strcasecmp(name, rcoll_coll_table[i].name) == 0)
            return &rcoll_coll_table[i];
    return NULL;
}

int rcoll_coll_algo_index(const rcoll_coll_info_t *c, const char *name)
{
    for (int i = 0; c && name && c->algos[i]; i++)
        if (strcasecmp(name, c->algos[i]->name) == 0)
            return i;
    return -1;
}

const char *rcoll_coll_algo_name(const rcoll_coll_info_t *c, int i)
{
    for (int k = 0; c && k <= i; k++)
        if (!c->algos[k])
            return NULL;
    return c ? c->algos[i]->name : NULL;
}

/* The public names (rcoll.h). */
const char *rcoll_coll_name(rcoll_coll_t coll)
{
    const rcoll_coll_info_t *c = rcoll_coll_info(coll);
    return c ? c->name : "unknown";
}

int rcoll_coll_from_name(const char *name)
{
    const rcoll_coll_info_t *c = rcoll_coll_info_by_name(name);
    return c ? (int)c->coll : -1;
}

const char *rcoll_coll_check(const rcoll_coll_info_t *c, int rank, int size, int root,
                             const void *sendbuf, const void *recvbuf, size_t bytes)
{
    if (c->rooted && (root < 0 || root >= size))
        return "root out of range";
    if (c->vform || bytes == 0)
        return NULL; /* the v-forms check their counts themselves */
    bool am_root = c->rooted && rank == root;
    bool bad = (rcoll_coll_sends(c, am_root) && !c->one_buffer && !sendbuf) ||
               (rcoll_coll_receives(c, am_root) && !recvbuf);
    /* Where the marker may stand, a rooted collective allows it at the root only. */
    if (c->rooted && !am_root)
        bad |= (c->in_place == RCOLL_IN_PLACE_SEND && sendbuf == RCOLL_IN_PLACE) ||
               (c->in_place == RCOLL_IN_PLACE_RECV && recvbuf == RCOLL_IN_PLACE);
    if (!bad)
        return NULL;
    return c->rooted && c->in_place != RCOLL_IN_PLACE_NONE
               ? "NULL buffer (or in place on a rank that is not the root)"
               : "NULL buffer";
}
