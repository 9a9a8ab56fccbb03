/* Selection: see select.h. The default table holds size ranges per (collective, layout); its
 * bounds were set from rcoll-bench runs on a 2-core machine, and docs/tuning.md, section
 * "Default selection", gives the measurements behind every row and how to redo them. The
 * reasons here say why an algorithm fits a range, never by how much: numbers belong there. */
#include "select/select.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "coll/colls.h"
#include "coll/nb/nb.h"
#include "core/team.h"
#include "select/model.h"

/* ---- the registry, by way of the collective table ---- */

const rcoll_algo_t *rcoll_algo_find(rcoll_coll_t coll, const char *name)
{
    const rcoll_coll_info_t *c = rcoll_coll_info(coll);
    int i = rcoll_coll_algo_index(c, name);
    return i >= 0 ? c->algos[i] : NULL;
}

void rcoll_algo_names(rcoll_coll_t coll, char *buf, size_t len)
{
    const rcoll_coll_info_t *c = rcoll_coll_info(coll);
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; c && c->algos[i] && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "", c->algos[i]->name);
}

/* ---- the default table ---- */

#define ANY (-1)
#define MULTI 2
#define INF RCOLL_TUNE_INF
#define ANY_SIZE 0x7fffffff
#define UPTO(n) ((size_t)(n) + 1) /* a range's end for "bytes <= n" */
#define KB 1024u
#define MB (1024u * 1024u)
#define MAX_RANGES 5

typedef struct {
    size_t below;              /* bytes < below, from the previous range's end (INF: the rest) */
    const rcoll_algo_t *algo;
    const char *why;
} range_t;

/* A row holds for teams of its collective in its layout of at most max_size ranks; the first
 * row that holds decides, by the range of the call's size. */
typedef struct {
    rcoll_coll_t coll;
    signed char nodes;         /* 1: the team spans nodes, 0: one node, ANY; MULTI: it spans
                                * nodes with several ranks on one (measured; before the model) */
    signed char crowded;       /* 1: ranks outnumber the cores of a node, 0: not, ANY */
    int max_size;
    range_t ranges[MAX_RANGES]; /* ascending, the last one to INF */
} row_t;

/* Why in words, shared by several rows. */
#define ACROSS_SMALL_TEAM "across nodes, small team: 2(P-1) messages through rank 0 in two hops"
#define V_FORM "v-form (its counts differ by rank, so no size decides): "
#define V_MEAN "allgatherv (by its mean count, which every rank knows): "

static const row_t rows[] = {
    /* Teams spanning nodes with several ranks on a node, up to 8 ranks: the layouts measured
     * here (2x2, 2x4, 4x2 over UCX tcp, docs/tuning.md "Node-aware collectives and the cost
     * model"), where these rules beat the cost model's picks (barrier, allgather(v), alltoall;
     * bcast, gather, scatter: the model). Larger teams: the model. */
    {RCOLL_COLL_BARRIER, MULTI, ANY, 8, {
        {INF, &rcoll_barrier_hier, "several ranks per node: fan-in on each node, a barrier among "
         "the leaders only, one release per node"}}},
    {RCOLL_COLL_ALLGATHER, MULTI, ANY, 8, {
        {UPTO(512 * KB), &rcoll_allgather_hier_gather_bcast, "several ranks per node: only the "
         "leaders cross the network, node blocks once each"},
        {INF, &rcoll_allgather_ring, "several ranks per node, large blocks: neighbour writes, "
         "one message across each node's edge per step"}}},
    {RCOLL_COLL_ALLTOALL, MULTI, ANY, 8, {
        {UPTO(8 * KB), &rcoll_alltoall_hier_aggregate, "several ranks per node, small blocks: one "
         "message per pair of nodes between leaders (their alltoall of node-blocks)"},
        {INF, &rcoll_alltoall_direct, "several ranks per node, larger blocks: every block one "
         "message, all in flight"}}},
    {RCOLL_COLL_ALLGATHERV, MULTI, ANY, 8, {
        {UPTO(512 * KB), &rcoll_allgatherv_hier_gather_bcast, "several ranks per node (keyed on "
         "the mean count): only the leaders cross the network, node blocks once each"},
        {INF, &rcoll_allgatherv_direct, "several ranks per node, large counts: every block one "
         "message, all in flight"}}},

    /* Teams spanning nodes (measured over UCX tcp, every rank its own node). Symmetric patterns
     * first: a rank that heard from a peer in this call knows that peer's slots are free, an
     * asymmetric one must read the peer's done word first (a round trip). */
    {RCOLL_COLL_BARRIER, 1, ANY, 2, {
        {INF, &rcoll_barrier_dissemination, "across nodes, two ranks: one message each way at once "
         "(through a leader it would be two in a row)"}}},
    {RCOLL_COLL_BARRIER, 1, ANY, 8, {
        {INF, &rcoll_barrier_gather_release, ACROSS_SMALL_TEAM " where dissemination sends "
         "P log2 P"}}},
    {RCOLL_COLL_BARRIER, 1, ANY, ANY_SIZE, {
        {INF, &rcoll_barrier_dissemination, "across nodes: ceil(log2 P) rounds of one message for "
         "any P (signals need no slots, so no flow control; flat arrival would send P-1 messages "
         "per rank)"}}},
    {RCOLL_COLL_ALLGATHER, 1, ANY, 2, {
        {UPTO(64 * KB), &rcoll_allgather_recursive_doubling, "across nodes, two ranks: one "
         "exchange at once (through a leader it would be two messages in a row)"},
        {INF, &rcoll_allgather_direct, "across nodes, large blocks: all P-1 writes in flight at "
         "once"}}},
    {RCOLL_COLL_ALLGATHER, 1, ANY, 8, {
        {UPTO(4 * KB), &rcoll_allgather_gather_bcast, ACROSS_SMALL_TEAM ", small blocks, instead "
         "of recursive doubling's P log2 P"},
        {UPTO(64 * KB), &rcoll_allgather_recursive_doubling, "across nodes, medium blocks: log2 P "
         "symmetric exchanges, one message each"},
        {INF, &rcoll_allgather_direct, "across nodes, large blocks: all P-1 writes in flight at "
         "once (gather_bcast's root would send P times the data)"}}},
    {RCOLL_COLL_ALLGATHER, 1, ANY, 64, {
        {UPTO(64 * KB), &rcoll_allgather_recursive_doubling, "across nodes, small and medium "
         "blocks: log2 P symmetric exchanges, one message each"},
        {INF, &rcoll_allgather_direct, "across nodes, large blocks: all P-1 writes in flight at "
         "once"}}},
    {RCOLL_COLL_ALLGATHER, 1, ANY, ANY_SIZE, {
        {UPTO(64 * KB), &rcoll_allgather_recursive_doubling, "across nodes, small and medium "
         "blocks: log2 P symmetric exchanges, one message each"},
        {INF, &rcoll_allgather_ring, "across nodes, large team, large blocks: neighbour writes, "
         "bandwidth-bound"}}},
    {RCOLL_COLL_ALLTOALL, 1, ANY, 2, {
        {INF, &rcoll_alltoall_direct, "across nodes, two ranks: one message each way at once "
         "(through a leader it would be two in a row)"}}},
    {RCOLL_COLL_ALLTOALL, 1, ANY, 8, {
        {UPTO(8 * KB), &rcoll_alltoall_gather_scatter, "across nodes, small blocks, small team: "
         "every rank's P blocks in one message to rank 0 and one back, 2(P-1) messages instead of "
         "P(P-1)"},
        {INF, &rcoll_alltoall_direct, "across nodes: every block one message, all in flight "
         "(RCOLL_ALLTOALL_KPORT bounds them), arrival order"}}},
    {RCOLL_COLL_ALLTOALL, 1, ANY, ANY_SIZE, {
        {INF, &rcoll_alltoall_direct, "across nodes: every block one message, all in flight "
         "(RCOLL_ALLTOALL_KPORT bounds them), arrival order; pairwise and bruck were slower at "
         "every size"}}},
    {RCOLL_COLL_BCAST, 1, ANY, ANY_SIZE, {
        {INF, &rcoll_bcast_knomial, "across nodes: the data is pushed down a k-nomial tree (a "
         "reader of the root's outbox would need the root to answer every read)"}}},
    {RCOLL_COLL_GATHER, 1, ANY, ANY_SIZE, {
        {INF, &rcoll_gather_direct, "across nodes: every rank writes its block straight to the "
         "root, one message each"}}},
    {RCOLL_COLL_SCATTER, 1, ANY, ANY_SIZE, {
        {INF, &rcoll_scatter_direct, "across nodes: the root writes every block once, one message "
         "each"}}},

    /* One node. */
    {RCOLL_COLL_BARRIER, 0, ANY, 2, {
        {INF, &rcoll_barrier_dissemination, "two ranks: one signal each way, nothing to gain from "
         "a tree"}}},
    {RCOLL_COLL_BARRIER, 0, 1, 64, {
        {INF, &rcoll_barrier_flat_arrival, "ranks share cores: completion is visible to each rank "
         "the moment it runs again, no tree or round needs a peer to have run since"}}},
    {RCOLL_COLL_BARRIER, 0, 1, ANY_SIZE, {
        {INF, &rcoll_barrier_gather_release, "ranks share cores, large team: gather tree, one "
         "release word frees all"}}},
    {RCOLL_COLL_BARRIER, 0, ANY, ANY_SIZE, {
        {INF, &rcoll_barrier_dissemination, "ceil(log2 P) rounds of one signal for any P"}}},
    {RCOLL_COLL_ALLGATHER, 0, 1, 8, {
        {UPTO(1 * MB), &rcoll_allgather_direct_read, "ranks share cores: one copy into shared "
         "memory and one out per reader (P*m instead of 2(P-1)*m copied per rank), no remote "
         "writes, arrival order"},
        {INF, &rcoll_allgather_direct, "large blocks, small team: one single-copy write per peer, "
         "all in flight"}}},
    {RCOLL_COLL_ALLGATHER, 0, 1, 64, {
        {UPTO(1 * MB), &rcoll_allgather_direct_read, "ranks share cores: one copy into shared "
         "memory and one out per reader, no remote writes, arrival order"},
        {INF, &rcoll_allgather_ring, "large blocks, larger team: neighbour writes, "
         "bandwidth-bound"}}},
    {RCOLL_COLL_ALLGATHER, 0, ANY, 8, {
        {UPTO(8 * KB), &rcoll_allgather_direct_read, "small blocks, small team: one step, each "
         "rank writes only its own line or outbox"},
        {INF, &rcoll_allgather_direct, "large blocks, small team: one single-copy write per peer, "
         "all in flight"}}},
    {RCOLL_COLL_ALLGATHER, 0, ANY, 16, {
        {UPTO(8 * KB), &rcoll_allgather_direct_read, "small blocks, small team: one step, each "
         "rank writes only its own line or outbox"},
        {INF, &rcoll_allgather_ring, "large blocks, larger team: neighbour writes, "
         "bandwidth-bound"}}},
    {RCOLL_COLL_ALLGATHER, 0, ANY, ANY_SIZE, {
        {UPTO(8 * KB), &rcoll_allgather_bruck, "small blocks, larger team: ceil(log_{k+1} P) "
         "k-port steps, no folding for P not a power of two"},
        {INF, &rcoll_allgather_ring, "large blocks, larger team: neighbour writes, "
         "bandwidth-bound"}}},
    {RCOLL_COLL_ALLTOALL, 0, 1, 64, {
        {UPTO(2 * KB), &rcoll_alltoall_direct_read, "ranks share cores: one copy of the P blocks "
         "into shared memory, each peer reads its own in arrival order, no remote writes"},
        {UPTO(8 * KB), &rcoll_alltoall_direct, "ranks share cores, 4-8 KB blocks: each block "
         "written once through the peer's inbox, arrival order (the P-block copy in costs more, "
         "and the most once the last rank arrives; docs/tuning.md)"},
        {UPTO(16 * KB), &rcoll_alltoall_direct_read, "ranks share cores: one copy of the P blocks "
         "into shared memory, each peer reads its own in arrival order, no remote writes"},
        {UPTO(64 * KB), &rcoll_alltoall_pairwise, "ranks share cores, blocks over 16 KB: one single "
         "copy to one peer per step (no rank copies P blocks in before anyone reads, no receiver "
         "written by several at once; docs/tuning.md)"},
        {INF, &rcoll_alltoall_direct, "ranks share cores, large blocks: every block written once, "
         "single copy, arrival order"}}},
    {RCOLL_COLL_ALLTOALL, 0, ANY, 2, {
        {UPTO(256), &rcoll_alltoall_direct_read, "two ranks, tiny blocks: one step, each rank "
         "writes only its own line or outbox"},
        {INF, &rcoll_alltoall_direct, "two ranks, each its own core: the block written once "
         "through the peer's inbox (512 B-1 KB 0.58-0.78x direct_read's time, which copies both "
         "blocks in; docs/tuning.md)"}}},
    {RCOLL_COLL_ALLTOALL, 0, ANY, 16, {
        {UPTO(1 * KB), &rcoll_alltoall_direct_read, "small blocks, small team: one step, each "
         "rank writes only its own line or outbox"},
        {INF, &rcoll_alltoall_direct, "each block moved once, no staging or forwarding; all "
         "writes in flight (RCOLL_ALLTOALL_KPORT bounds them)"}}},
    {RCOLL_COLL_ALLTOALL, 0, ANY, ANY_SIZE, {
        {UPTO(256), &rcoll_alltoall_bruck, "tiny blocks, larger team: k ceil(log_{k+1} N) "
         "messages per rank instead of N-1 (k-port Bruck index)"},
        {INF, &rcoll_alltoall_direct, "each block moved once, no staging or forwarding; all "
         "writes in flight (RCOLL_ALLTOALL_KPORT bounds them)"}}},
    {RCOLL_COLL_BCAST, 0, 1, 64, {
        {UPTO(1 * MB), &rcoll_bcast_direct_read, "ranks share cores: the root publishes once, "
         "each reader needs only the root to have run (a tree or ring pays a context switch per "
         "dependency)"},
        {INF, &rcoll_bcast_scatter_allgather, "ranks share cores, beyond the outbox: pieces "
         "scattered, then a ring spreads the copying"}}},
    {RCOLL_COLL_BCAST, 0, 1, ANY_SIZE, {
        {INF, &rcoll_bcast_scatter_allgather, "ranks share cores, large team: pieces scattered, "
         "then a ring spreads the copying"}}},
    {RCOLL_COLL_BCAST, 0, ANY, 3, {
        {UPTO(1 * MB), &rcoll_bcast_direct_read, "small team, up to the outbox: the root copies "
         "the message once into shared memory, readers copy out in parallel (from 64 KB in "
         "parts, the readers' copies overlapping the root's)"},
        {INF, &rcoll_bcast_knomial, "large messages, up to 3 ranks: one single-copy write per "
         "child"}}},
    {RCOLL_COLL_BCAST, 0, ANY, 8, {
        {UPTO(1 * MB), &rcoll_bcast_direct_read, "small team, up to the outbox: the root copies "
         "the message once into shared memory, readers copy out in parallel (from 64 KB in "
         "parts, the readers' copies overlapping the root's)"},
        {INF, &rcoll_bcast_scatter_allgather, "large messages, larger team: scatter then ring "
         "allgather, the copying spread over all ranks"}}},
    {RCOLL_COLL_BCAST, 0, ANY, ANY_SIZE, {
        {UPTO(16 * KB), &rcoll_bcast_knomial, "small messages, larger team: log_k P steps, "
         "readers do not all contend for one outbox"},
        {INF, &rcoll_bcast_scatter_allgather, "large messages, larger team: scatter then ring "
         "allgather, the copying spread over all ranks"}}},
    {RCOLL_COLL_GATHER, 0, ANY, 64, {
        {INF, &rcoll_gather_direct, "one node-sized team: every rank writes straight to the "
         "root, which collects in arrival order (binomial lost at every size)"}}},
    {RCOLL_COLL_GATHER, 0, ANY, ANY_SIZE, {
        {UPTO(256), &rcoll_gather_binomial, "tiny blocks, large team: ceil(log_{k+1} P) steps of "
         "k-port binomial tree instead of P-1 messages into one root"},
        {INF, &rcoll_gather_direct, "larger blocks: each block moved once, no forwarding through "
         "the tree"}}},
    {RCOLL_COLL_SCATTER, 0, 1, 64, {
        {UPTO(512), &rcoll_scatter_direct_read, "ranks share cores, tiny blocks: the root copies "
         "its P blocks once and leaves, each rank reads its own"},
        {UPTO(16 * KB), &rcoll_scatter_direct, "one node-sized team: the root writes every block "
         "once through the receiver's inbox, no arrival needed"},
        {INF, &rcoll_scatter_direct_read, "larger blocks: the root publishes its P blocks once "
         "(to 64 KB; np=4 on 2 cores, 32 KB: 0.48-1.04x native against direct's 0.78-1.51x, "
         "docs/tuning.md) or every rank reads its block out of the root's buffer by one single "
         "copy, in parallel (direct where there is no single copy)"}}},
    {RCOLL_COLL_SCATTER, 0, ANY, 2, {
        {UPTO(128 * KB), &rcoll_scatter_direct, "two ranks, each its own core: the root writes "
         "the block through the receiver's inbox (to 128 KB; 64-128 KB 0.46-0.84x native against "
         "direct_read's single copy 0.66-1.10x, docs/tuning.md)"},
        {INF, &rcoll_scatter_direct_read, "two ranks, large blocks: the receiver reads its block "
         "out of the root's buffer by one single copy"}}},
    {RCOLL_COLL_SCATTER, 0, ANY, 64, {
        {UPTO(32 * KB), &rcoll_scatter_direct, "one node-sized team: the root writes every block "
         "once through the receiver's inbox, no arrival needed (binomial lost at every size)"},
        {INF, &rcoll_scatter_direct_read, "large blocks: every rank reads its block out of the "
         "root's buffer by one single copy, in parallel (direct where there is no single copy)"}}},
    {RCOLL_COLL_SCATTER, 0, ANY, ANY_SIZE, {
        {UPTO(256), &rcoll_scatter_binomial, "tiny blocks, large team: ceil(log_{k+1} P) k-port "
         "binomial steps instead of P-1 writes from one root"},
        {INF, &rcoll_scatter_direct, "larger blocks: each block moved once, no forwarding through "
         "the tree"}}},

    /* The v-forms, any layout. */
    {RCOLL_COLL_ALLGATHERV, ANY, ANY, ANY_SIZE, {
        {INF, &rcoll_allgatherv_direct, V_MEAN "one step, every block written once, arrival "
         "order"}}},
    {RCOLL_COLL_ALLTOALLV, ANY, ANY, ANY_SIZE, {
        {INF, &rcoll_alltoallv_direct, V_FORM "one step, every block written once, arrival "
         "order"}}},
    {RCOLL_COLL_GATHERV, ANY, ANY, ANY_SIZE, {
        {INF, &rcoll_gatherv_direct, V_FORM "every rank sends straight to the root (only the root "
         "knows the counts)"}}},
    {RCOLL_COLL_SCATTERV, 0, 1, 12, {
        {INF, &rcoll_scatterv_direct_read, V_FORM "ranks share cores: the root publishes the "
         "small blocks once behind a table and leaves, each rank reads its own"}}},
    {RCOLL_COLL_SCATTERV, ANY, ANY, ANY_SIZE, {
        {INF, &rcoll_scatterv_direct, V_FORM "the root writes straight to every rank (only the "
         "root knows the counts)"}}},

    /* The reductions: their nested calls choose by layout themselves. */
    {RCOLL_COLL_ALLREDUCE, MULTI, ANY, ANY_SIZE, {
        {UPTO(1 * MB), &rcoll_allreduce_hier, "several ranks per node: one vector per node "
         "crosses the network (reduced in the node first, released in the node after)"},
        {INF, &rcoll_allreduce_hier_multi_leader, "several ranks per node, large vectors: every "
         "local rank carries 1/L of the vector across (measured 2x2 and 2x4 over UCX tcp: "
         "docs/tuning.md)"}}},
    {RCOLL_COLL_ALLREDUCE, 0, 1, 7, {
        {UPTO(8 * KB), &rcoll_allreduce_direct_read, "ranks share cores, small vectors: each rank "
         "publishes its vector once and folds all P itself, one step"},
        {INF, &rcoll_allreduce_reduce_scatter_allgather, "ranks share cores, larger vectors: each "
         "rank folds one slice, 1/P of direct_read's copying and operations"}}},
    {RCOLL_COLL_ALLREDUCE, 0, 1, ANY_SIZE, {
        {UPTO(2 * KB), &rcoll_allreduce_direct_read, "ranks share cores, tiny vectors: each rank "
         "publishes its vector once and folds all P itself, one step"},
        {UPTO(32 * KB), &rcoll_allreduce_knomial, "8 or more ranks sharing cores: a k-nomial "
         "fan-in, then one publication of the result; a rank reads k ceil(log_{k+1} P) vectors, "
         "not P - 1 (measured np=8 and 16: docs/tuning.md)"},
        {UPTO(64 * KB), &rcoll_allreduce_reduce_scatter_allgather, "measured np=8 and 16: each "
         "rank folds one slice (the fan-in lost at 64 KB in every run)"},
        {UPTO(512 * KB), &rcoll_allreduce_knomial, "8 or more ranks sharing cores: the k-nomial "
         "fan-in and one publication"},
        {INF, &rcoll_allreduce_reduce_scatter_allgather, "ranks share cores, large vectors: each "
         "rank folds one slice, single copies"}}},
    {RCOLL_COLL_ALLREDUCE, 0, 0, 2, {
        {UPTO(64 * KB), &rcoll_allreduce_direct_read, "small and medium vectors: each rank "
         "publishes its vector once (from 16 KB in 8 KB parts, each folded while in cache as the "
         "peers stage the next) and folds both itself, one step"},
        {INF, &rcoll_allreduce_reduce_scatter_allgather, "from 128 KB: each rank folds one "
         "slice, half the reading and folding (measured np=2, reused and fresh buffers: "
         "docs/tuning.md, \"Reductions\")"}}},
    {RCOLL_COLL_ALLREDUCE, 0, 0, ANY_SIZE, {
        {UPTO(64 * KB / 2), &rcoll_allreduce_direct_read, "every rank on its own core, small "
         "vectors: one step; (P-1) m copied and folded per rank, so a smaller bound than at two "
         "ranks (scaled from it by bytes per rank, not measured on more than 2 cores)"},
        {INF, &rcoll_allreduce_reduce_scatter_allgather, "larger vectors: each rank folds one "
         "slice, 2 (P-1)/P m copied per rank"}}},
    {RCOLL_COLL_ALLREDUCE, ANY, ANY, ANY_SIZE, {
        {UPTO(4 * KB), &rcoll_allreduce_gather_all, "across nodes, small vectors: one "
         "allgather (its own node-aware choice), every rank folds all P itself"},
        {UPTO(128 * KB), &rcoll_allreduce_recursive_doubling, "across nodes, medium vectors: log2 P "
         "exchanges of the vector instead of P - 1 vectors in (measured 4 and 8 nodes of one rank "
         "over UCX tcp: docs/tuning.md)"},
        {INF, &rcoll_allreduce_reduce_scatter_allgather, "across nodes, large vectors: each rank "
         "folds one slice, 2 (P-1)/P of the vector on the network per rank"}}},
    {RCOLL_COLL_REDUCE, 0, ANY, ANY_SIZE, {
        {UPTO(1 * MB), &rcoll_reduce_direct_read, "up to the outbox: every rank publishes its "
         "vector and leaves (from 16 KB with every rank on its own core: in 8 KB parts the root "
         "folds as they come), the root reads and folds, one step"},
        {INF, &rcoll_reduce_reduce_scatter_gather, "beyond the outbox: the folding spread over "
         "all ranks, the root receives 1/P of the vectors"}}},
    {RCOLL_COLL_REDUCE, MULTI, ANY, ANY_SIZE, {
        {UPTO(1 * MB), &rcoll_reduce_hier, "several ranks per node: one vector per node crosses "
         "the network (measured 2x2 and 2x4 over UCX tcp: docs/tuning.md)"},
        {INF, &rcoll_reduce_gather_reduce, "several ranks per node, large vectors: one gather "
         "(its node-aware choice), the root folds"}}},
    {RCOLL_COLL_REDUCE, ANY, ANY, ANY_SIZE, {
        {UPTO(32 * KB), &rcoll_reduce_gather_reduce, "small vectors: one gather, the root folds "
         "(one synchronization)"},
        {UPTO(1 * MB), &rcoll_reduce_knomial, "medium vectors: a k-nomial fan-in, the root "
         "receives k per level instead of P - 1 vectors (measured 4x1, 8x1, 2x2 over UCX tcp: "
         "docs/tuning.md)"},
        {INF, &rcoll_reduce_reduce_scatter_gather, "larger vectors: the folding spread over all "
         "ranks, the root receives 1/P of the vectors"}}},
    {RCOLL_COLL_REDUCE_SCATTER_BLOCK, 0, 1, ANY_SIZE, {
        {UPTO(2 * KB), &rcoll_reduce_scatter_block_direct_read, "ranks share cores, small blocks: "
         "the P blocks published once, each rank reads its own of every peer and folds, one step"},
        {INF, &rcoll_reduce_scatter_block_direct, "larger blocks: the alltoall's single copies, "
         "then each rank folds its own"}}},
    {RCOLL_COLL_REDUCE_SCATTER_BLOCK, 0, 0, 2, {
        {UPTO(256 * KB), &rcoll_reduce_scatter_block_direct_read, "two ranks, blocks up to 256 "
         "KB: the blocks published once, each rank folds its own from the peer's outbox, one step "
         "(measured np=2, reused and fresh buffers: docs/tuning.md, \"Reductions\")"},
        {INF, &rcoll_reduce_scatter_block_direct, "larger blocks: the alltoall's single copies, "
         "then each rank folds its own"}}},
    {RCOLL_COLL_REDUCE_SCATTER_BLOCK, 0, 0, ANY_SIZE, {
        {UPTO(4 * KB), &rcoll_reduce_scatter_block_direct_read, "small blocks: the P blocks "
         "published once, each rank reads its own of every peer and folds, one step"},
        {INF, &rcoll_reduce_scatter_block_direct, "larger blocks: the alltoall's single copies, "
         "then each rank folds its own"}}},
    {RCOLL_COLL_REDUCE_SCATTER_BLOCK, ANY, ANY, ANY_SIZE, {
        {UPTO(4 * KB), &rcoll_reduce_scatter_block_direct, "one alltoall of the blocks, each rank "
         "folds its own"},
        {UPTO(32 * KB), &rcoll_reduce_scatter_block_recursive_halving, "across nodes, medium "
         "blocks: log2 P steps of half the blocks held, not P - 1 messages at once (measured 4x1 "
         "and 8x1 over UCX tcp: docs/tuning.md)"},
        {INF, &rcoll_reduce_scatter_block_direct, "large blocks: one alltoall of the blocks, each "
         "block moved once"}}},
    {RCOLL_COLL_REDUCE_SCATTER, 1, ANY, ANY_SIZE, {
        {UPTO(64 * KB), &rcoll_reduce_scatter_recursive_halving, "across nodes, small and medium "
         "blocks: log2 P steps of the blocks held, not P - 1 messages at once (measured 4x1, 8x1 "
         "and 2x2 over UCX tcp: docs/tuning.md)"},
        {INF, &rcoll_reduce_scatter_direct, "large blocks: one alltoallv of the blocks, each "
         "block moved once"}}},
    {RCOLL_COLL_REDUCE_SCATTER, ANY, ANY, ANY_SIZE, {
        {INF, &rcoll_reduce_scatter_direct, "one alltoallv of the blocks, each rank folds its "
         "own"}}},
    {RCOLL_COLL_SCAN, 0, ANY, ANY_SIZE, {
        {UPTO(32 * KB), &rcoll_scan_direct, "one node, small vectors: one alltoallv to the ranks "
         "above, each rank folds what is below it with its own"},
        {INF, &rcoll_scan_linear, "one node, larger vectors: a chain in parts, m in and out per "
         "rank instead of rank r's r vectors (measured np=2, 4, 8: docs/tuning.md)"}}},
    {RCOLL_COLL_SCAN, ANY, ANY, ANY_SIZE, {
        {UPTO(64 * KB), &rcoll_scan_recursive_doubling, "across nodes, small vectors: ceil(log2 P) "
         "exchanges instead of the alltoallv's r vectors into rank r"},
        {INF, &rcoll_scan_linear, "across nodes, larger vectors: a chain in parts"}}},
    {RCOLL_COLL_EXSCAN, 0, ANY, ANY_SIZE, {
        {UPTO(32 * KB), &rcoll_exscan_direct, "one node, small vectors: one alltoallv to the ranks "
         "above, each rank folds what is below it"},
        {INF, &rcoll_exscan_linear, "one node, larger vectors: a chain in parts"}}},
    {RCOLL_COLL_EXSCAN, ANY, ANY, ANY_SIZE, {
        {UPTO(64 * KB), &rcoll_exscan_recursive_doubling, "across nodes, small vectors: "
         "ceil(log2 P) exchanges"},
        {INF, &rcoll_exscan_linear, "across nodes, larger vectors: a chain in parts"}}},
};
#define ROW_COUNT (sizeof rows / sizeof rows[0])

static bool in_range(size_t bytes, size_t lo, size_t hi)
{
    return bytes >= lo && (bytes < hi || hi == INF);
}

/* The row and range that decide, or NULL. */
static const row_t *default_row(rcoll_coll_t coll, size_t bytes, int size, int nodes, int crowded,
                                int *range)
{
    for (size_t i = 0; i < ROW_COUNT; i++) {
        const row_t *r = &rows[i];
        bool spans = nodes != 0;
        if (r->coll != coll || size > r->max_size ||
            (r->nodes != ANY && r->nodes != MULTI && r->nodes != spans) ||
            (r->nodes == MULTI && nodes != MULTI) ||
            (r->crowded != ANY && r->crowded != crowded))
            continue;
        size_t lo = 0;
        for (int k = 0; k < MAX_RANGES && r->ranges[k].algo; k++) {
            if (in_range(bytes, lo, r->ranges[k].below)) {
                *range = k;
                return r;
            }
            lo = r->ranges[k].below;
        }
    }
    return NULL;
}

/* ---- explanations ---- */

/* A size as RCOLL_TUNE writes it: inf, 8k, 1m, or digits. */
static const char *size_text(size_t n, char out[24])
{
    if (n == INF)
        snprintf(out, 24, "inf");
    else if (n && n % MB == 0)
        snprintf(out, 24, "%zum", n / MB);
    else if (n && n % KB == 0)
        snprintf(out, 24, "%zuk", n / KB);
    else
        snprintf(out, 24, "%zu", n);
    return out;
}

/* "bytes lo..last" for [lo, hi). */
static const char *bytes_text(size_t lo, size_t hi, char out[64])
{
    char a[24], b[24];
    snprintf(out, 64, "bytes %s..%s", size_text(lo, a), hi == INF ? "inf" : size_text(hi - 1, b));
    return out;
}

static void explain_default(const row_t *r, int k, const rcoll_coll_info_t *c, int ppn, int cores,
                            char *why, size_t why_len)
{
    char cond[160] = "", range[64] = "";
    size_t n = (size_t)snprintf(cond, sizeof cond, "%s", c->name);
    if (r->nodes != ANY)
        n += (size_t)snprintf(cond + n, sizeof cond - n, ", %s",
                              r->nodes == MULTI ? "several nodes, several ranks on one"
                              : r->nodes        ? "several nodes"
                                                : "one node");
    if (r->crowded != ANY)
        n += (size_t)snprintf(cond + n, sizeof cond - n, ", %s",
                              r->crowded ? "ranks outnumber cores" : "a core per rank");
    if (r->max_size != ANY_SIZE)
        snprintf(cond + n, sizeof cond - n, ", teams of at most %d", r->max_size);
    if (rcoll_coll_by_bytes(c))
        bytes_text(k ? r->ranges[k - 1].below : 0, r->ranges[k].below, range);
    snprintf(why, why_len,
             "default rule %d (%s)%s%s: %s (docs/tuning.md, section \"Default selection\", %s) "
             "[ppn %d, %d cores]",
             (int)(r - rows) + 1, cond, range[0] ? ", " : "", range, r->ranges[k].why, c->name, ppn,
             cores);
}

/* Appends, for an algorithm that may give way, when it does. */
static void explain_limits(const rcoll_algo_t *a, char *why, size_t why_len)
{
    size_t n = strlen(why);
    if (a->not_for && n + 1 < why_len)
        snprintf(why + n, why_len - n, "; %s applies to %s; elsewhere %s runs", a->name,
                 a->limits ? a->limits : "some calls only", a->fallback->name);
}

/* ---- the decision ---- */

/* The last RCOLL_TUNE range of `coll` that holds `bytes`, or NULL. */
static const rcoll_tune_range_t *user_range(const rcoll_config_t *cfg, rcoll_coll_t coll, size_t bytes)
{
    for (int i = cfg->tune_count - 1; i >= 0; i--)
        if (cfg->tune[i].coll == (int)coll && in_range(bytes, cfg->tune[i].lo, cfg->tune[i].hi))
            return &cfg->tune[i];
    return NULL;
}

bool rcoll_tune_names(const rcoll_config_t *cfg, rcoll_coll_t coll)
{
    for (int i = 0; i < cfg->tune_count; i++)
        if (cfg->tune[i].coll == (int)coll)
            return true;
    return false;
}

/* RCOLL_<COLL>_ALGO: the algorithm, or NULL with the error in `why`. */
static const rcoll_algo_t *env_forced(const rcoll_config_t *cfg, const rcoll_coll_info_t *c,
                                      char *why, size_t why_len)
{
    const char *forced = cfg->algo[c->coll];
    const rcoll_algo_t *a = rcoll_algo_find(c->coll, forced);
    if (!why)
        return a; /* no message wanted: the per-call path */
    char upper[32], shown[RCOLL_SHOWN_MAX];
    size_t n = 0;
    for (const char *p = c->name; *p && n < sizeof upper - 1; p++)
        upper[n++] = (char)toupper((unsigned char)*p);
    upper[n] = '\0';
    rcoll_config_show(forced, shown);
    if (!a) {
        char names[256];
        rcoll_algo_names(c->coll, names, sizeof names);
        snprintf(why, why_len, "RCOLL_%s_ALGO=%s is not valid: expected a known %s algorithm; "
                 "valid: %s, auto", upper, shown, c->name, names);
        return NULL;
    }
    snprintf(why, why_len, "forced by the environment (RCOLL_%s_ALGO=%s)", upper, shown);
    return a;
}

const rcoll_algo_t *rcoll_select_default(const rcoll_config_t *cfg, rcoll_coll_t coll, size_t bytes,
                                         int size, int ppn, int cores, int share, char *why,
                                         size_t why_len)
{
    const rcoll_coll_info_t *c = rcoll_coll_info(coll);
    if (!rcoll_coll_by_bytes(c))
        bytes = 0;
    int k = 0, nodes = ppn >= size ? 0 : ppn > 1 ? MULTI : 1;
    if (c->reduction && cfg->reproducible && nodes == MULTI)
        nodes = 1; /* the node-aware reductions fold in the nodes' order: the flat rules */
    const row_t *r = default_row(coll, bytes, size, nodes, ppn > cores, &k);
    bool model = rcoll_model_decides(coll, size, ppn);
    if (model && (!r || r->nodes != MULTI))
        return rcoll_model_pick(cfg, coll, bytes, size, ppn, cores, share, why, why_len);
    if (!r) {
        if (why)
            snprintf(why, why_len, "no rule matches");
        return NULL;
    }
    if (why)
        explain_default(r, k, c, ppn, cores, why, why_len);
    if (why && model) { /* the model's view, for comparison */
        size_t n = strlen(why);
        if (n + 40 < why_len) {
            snprintf(why + n, why_len - n, "; for comparison, ");
            n = strlen(why);
            rcoll_model_pick(cfg, coll, bytes, size, ppn, cores, share, why + n, why_len - n);
        }
    }
    return r->ranges[k].algo;
}

const rcoll_algo_t *rcoll_select(const rcoll_config_t *cfg, rcoll_coll_t coll, size_t bytes,
                                 int size, int ppn, int cores, char *why, size_t why_len)
{
    return rcoll_select_shared(cfg, coll, bytes, size, ppn, cores, 1, why, why_len);
}

const rcoll_algo_t *rcoll_select_shared(const rcoll_config_t *cfg, rcoll_coll_t coll, size_t bytes,
                                        int size, int ppn, int cores, int share, char *why,
                                        size_t why_len)
{
    const rcoll_coll_info_t *c = rcoll_coll_info(coll);
    if (!c) {
        if (why)
            snprintf(why, why_len, "unknown collective %d", (int)coll);
        return NULL;
    }
    if (!rcoll_coll_by_bytes(c))
        bytes = 0; /* the size does not select: every rank decides alike */
    const rcoll_algo_t *a = NULL;
    const rcoll_tune_range_t *u = cfg->tune_count ? user_range(cfg, coll, bytes) : NULL;
    if (u && u->algo != RCOLL_TUNE_AUTO) {
        a = c->algos[u->algo];
        if (why) {
            char lo[24], hi[24], range[64];
            if (u->lo == 0 && u->hi == INF)
                snprintf(why, why_len, "user rule RCOLL_TUNE %s=%s (every size)", c->name, a->name);
            else
                snprintf(why, why_len, "user rule RCOLL_TUNE %s:%s-%s=%s (%s)", c->name,
                         size_text(u->lo, lo), size_text(u->hi, hi), a->name,
                         bytes_text(u->lo, u->hi, range));
        }
    } else if (!u && cfg->algo[coll][0]) {
        a = env_forced(cfg, c, why, why_len);
        if (!a)
            return NULL;
    } else {
        a = rcoll_select_default(cfg, coll, bytes, size, ppn, cores, share, why, why_len);
        if (!a)
            return NULL;
        if (why && u) { /* RCOLL_TUNE gave auto for this range */
            size_t n = strlen(why);
            char lo[24], hi[24];
            snprintf(why + n, why_len - n, "; by user rule RCOLL_TUNE %s:%s-%s=auto", c->name,
                     size_text(u->lo, lo), size_text(u->hi, hi));
        }
    }
    if (why)
        explain_limits(a, why, why_len);
    return a;
}

const rcoll_algo_t *rcoll_fallback(const rcoll_algo_t *a, const rcoll_args_t *args,
                                   const char **why_not)
{
    *why_not = NULL;
    for (int hops = 0; (a->not_for || a->reorders) && hops < 4; hops++) { /* no cycle */
        const char *why = a->reorders && args->team->ctx->cfg.reproducible
                              ? "RCOLL_REPRODUCIBLE=1 (it folds in another order than the ranks' one)"
                          : a->not_for                                 ? a->not_for(args)
                                                                       : NULL;
        if (!why)
            break;
        if (!*why_not)
            *why_not = why;
        a = a->fallback;
    }
    return a;
}

/* ---- the public queries: rcoll-info ---- */

const char *rcoll_explain(rcoll_context_t *ctx, rcoll_coll_t coll, size_t bytes, int team_size,
                          int ppn, char *why, size_t why_len)
{
    return rcoll_explain_hosts(ctx, coll, bytes, team_size, ppn, 1, why, why_len);
}

const char *rcoll_explain_hosts(rcoll_context_t *ctx, rcoll_coll_t coll, size_t bytes, int team_size,
                                int ppn, int nodes_per_host, char *why, size_t why_len)
{
    if (!rcoll_coll_info(coll) || team_size < 1 || ppn < 1 || nodes_per_host < 1) {
        snprintf(why, why_len, "invalid query (collective, size >= 1, ppn >= 1 and nodes per host "
                 ">= 1 needed)");
        return NULL;
    }
    const rcoll_algo_t *a = rcoll_select_shared(&ctx->cfg, coll, bytes, team_size, ppn, ctx->cfg.cores,
                                                nodes_per_host, why, why_len);
    size_t used = strlen(why);
    bool slow = rcoll_tl_probe_cma_slow(&ctx->tl_probe);
    if (a && ppn == team_size && ctx->tl_probe.set_slow && used < why_len)
        snprintf(why + used, why_len - used, "; its messages take the copy path wherever they fit "
                 "the inbox (RCOLL_CMA=slow)");
    else if (a && ppn == team_size && slow && used < why_len)
        snprintf(why + used, why_len - used, "; its messages take the copy path wherever they fit "
                 "the inbox: a single copy (CMA) of 256 KB measured %.1f us here against %.1f us "
                 "for two copies (docs/tuning.md, \"Where a single copy is slow\")",
                 ctx->tl_probe.cma_ns / 1e3, ctx->tl_probe.copy_ns / 1e3);
    /* The node transport's streams (transport/node.c, streams()): where ranks do not share cores. */
    const rcoll_coll_info_t *c = rcoll_coll_info(coll);
    used = strlen(why);
    if (a && slow && ppn == team_size && ppn <= ctx->cfg.cores &&
        rcoll_tl_call_streams(rcoll_coll_rooted_moves(c), rcoll_coll_fan_in(c, team_size)) && used < why_len)
        snprintf(why + used, why_len - used, "; beyond the inbox they stream through the "
                 "receiver's ring of 4 chunks of 64 KB (each rank has its own core)");
    return a ? a->name : NULL;
}

void rcoll_list_algorithms(char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int k = 0; k < RCOLL_COLL_COUNT && used < len; k++) {
        const rcoll_coll_info_t *c = rcoll_coll_info((rcoll_coll_t)k);
        used += (size_t)snprintf(buf + used, len - used, "%s:\n", c->name);
        for (int i = 0; c->algos[i] && used < len; i++) {
            const rcoll_algo_t *a = c->algos[i];
            const char *named = a->by_name ? " (by name only)" : "";
            if (a->not_for)
                used += (size_t)snprintf(buf + used, len - used, "  %-20s %s; applies to %s%s, "
                                         "otherwise %s runs\n", a->name, a->summary,
                                         a->limits ? a->limits : "some calls only", named,
                                         a->fallback->name);
            else
                used += (size_t)snprintf(buf + used, len - used, "  %-20s %s; any team size, any "
                                         "bytes%s\n", a->name, a->summary, named);
        }
    }
    /* The nonblocking engine's algorithms on the board (docs/nonblocking.md). */
    const rcoll_nb_algo_t *nb[] = {&rcoll_nb_pairs, &rcoll_nb_binomial_forward};
    if (used < len)
        used += (size_t)snprintf(buf + used, len - used, "nonblocking:\n");
    for (size_t i = 0; i < sizeof nb / sizeof nb[0] && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "  %-20s %s; %s\n", nb[i]->name, nb[i]->summary,
                                 i ? "allgather, where RCOLL_NB_ALLGATHER names it" : "every collective (default)");
}

/* ---- consistency of the tables (unit test) ---- */

static int table_error(char *err, size_t len, const char *what, const char *name)
{
    snprintf(err, len, "%s: %s", name, what);
    return -1;
}

int rcoll_select_check_tables(char *err, size_t len)
{
    for (int k = 0; k < RCOLL_COLL_COUNT; k++) {
        const rcoll_coll_info_t *c = rcoll_coll_info((rcoll_coll_t)k);
        if (!c)
            return table_error(err, len, "collective row missing or out of place", "table");
        if (!c->algos[0])
            return table_error(err, len, "no algorithm", c->name);
        for (int i = 0; c->algos[i]; i++) {
            const rcoll_algo_t *a = c->algos[i], *f = a;
            if (a->coll != c->coll || !a->run || !a->name || !a->summary)
                return table_error(err, len, "an algorithm of another collective or incomplete", a->name);
            if (rcoll_coll_algo_index(c, a->name) != i)
                return table_error(err, len, "an algorithm name twice", a->name);
            for (int hops = 0; f->not_for || f->reorders; hops++, f = f->fallback)
                if (!f->fallback || f->fallback->coll != c->coll || !f->limits || hops == 4)
                    return table_error(err, len, "not_for without a fallback of its collective, its "
                                       "limits, or in a cycle", a->name);
            if (a->reorders && a->fallback->reorders)
                return table_error(err, len, "a fallback under RCOLL_REPRODUCIBLE=1 that reorders too",
                                   a->name);
        }
    }
    for (size_t i = 0; i < ROW_COUNT; i++) {
        const row_t *r = &rows[i];
        const rcoll_coll_info_t *c = rcoll_coll_info(r->coll);
        size_t lo = 0;
        int k = 0;
        for (; k < MAX_RANGES && r->ranges[k].algo; k++) {
            if (r->ranges[k].algo->coll != r->coll || !r->ranges[k].why)
                return table_error(err, len, "a default range of another collective's algorithm",
                                   r->ranges[k].algo->name);
            if (r->ranges[k].below <= lo)
                return table_error(err, len, "default ranges not ascending", c->name);
            lo = r->ranges[k].below;
        }
        if (!k || r->ranges[k - 1].below != INF || (!rcoll_coll_by_bytes(c) && k != 1))
            return table_error(err, len, "a default row not ending at inf (or ranges for a "
                               "collective chosen without a size)", c->name);
    }
    for (int k = 0; k < RCOLL_COLL_COUNT; k++)
        for (int layout = 0; layout < 4; layout++) {
            int range;
            if (!default_row((rcoll_coll_t)k, INF, ANY_SIZE, layout & 1, layout >> 1, &range))
                return table_error(err, len, "a layout no default row covers",
                                   rcoll_coll_info((rcoll_coll_t)k)->name);
        }
    return 0;
}
