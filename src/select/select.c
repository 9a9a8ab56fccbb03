/* Algorithm registry and default decision table: see select.h.
 * The table was set from rcoll-bench runs on a 2-core machine (docs/tuning.md tells how to
 * redo it); each rule says why it holds. */
#include "select/select.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static const rcoll_algo_t *const registry[] = {
    &rcoll_barrier_dissemination,      &rcoll_barrier_pairwise_exchange,
    &rcoll_barrier_gather_release,     &rcoll_barrier_flat_arrival,
    &rcoll_allgather_recursive_doubling,
    &rcoll_allgather_ring,             &rcoll_allgather_bruck,
    &rcoll_allgather_direct,           &rcoll_allgather_direct_read,
    &rcoll_allgather_gather_bcast,
    &rcoll_alltoall_direct,            &rcoll_alltoall_direct_read,
    &rcoll_alltoall_pairwise,
    &rcoll_alltoall_bruck,             &rcoll_alltoall_standard_exchange,
    &rcoll_alltoall_gather_scatter,
    &rcoll_bcast_direct_read,          &rcoll_bcast_knomial,
    &rcoll_bcast_scatter_allgather,
    &rcoll_gather_direct,              &rcoll_gather_binomial,
    &rcoll_scatter_direct,             &rcoll_scatter_direct_read,
    &rcoll_scatter_binomial,
    &rcoll_allgatherv_direct,          &rcoll_alltoallv_direct,
    &rcoll_gatherv_direct,             &rcoll_scatterv_direct,
};
#define REGISTRY_COUNT (sizeof registry / sizeof registry[0])

typedef struct {
    rcoll_coll_t coll;
    size_t max_bytes;   /* rule holds for bytes per rank <= max_bytes */
    int max_size;       /* and team size <= max_size */
    int crowded;        /* 1: only when ranks outnumber cores, 0: only when not, -1: either */
    int nodes;          /* 1: only teams spanning nodes, 0: only one node, -1: either */
    const rcoll_algo_t *algo;
    const char *reason;
} rule_t;

#define ANY_BYTES ((size_t)-1)
#define ANY_SIZE 0x7fffffff

static const rule_t rules[] = {
    /* Teams spanning nodes (measured over UCX tcp, every rank its own node, np=4 on 2 cores;
     * docs/tuning.md). Symmetric patterns first: a rank that heard from a peer in this call
     * knows that peer's slots are free, an asymmetric one must read the peer's done word
     * first (one round trip). */
    {RCOLL_COLL_BARRIER, ANY_BYTES, 8, -1, 1, &rcoll_barrier_gather_release,
     "across nodes, small team: P-1 arrivals to rank 0, P-1 releases back, 2(P-1) messages in "
     "two hops where dissemination sends P log2 P (np=4: 0.6-0.75x native against "
     "dissemination's 0.75-0.95x)"},
    {RCOLL_COLL_BARRIER, ANY_BYTES, ANY_SIZE, -1, 1, &rcoll_barrier_dissemination,
     "across nodes: ceil(log2 P) rounds of one message for any P (signals need no slots, so "
     "no flow control; flat arrival would send P-1 messages per rank)"},
    {RCOLL_COLL_ALLGATHER, 4 * 1024, 8, -1, 1, &rcoll_allgather_gather_bcast,
     "across nodes, small blocks, small team: 2(P-1) messages through rank 0 instead of "
     "recursive doubling's P log2 P (np=4: 0.68-0.83x native up to 4 KB, recursive doubling "
     "0.69-0.87x)"},
    {RCOLL_COLL_ALLGATHER, 64 * 1024, ANY_SIZE, -1, 1, &rcoll_allgather_recursive_doubling,
     "across nodes, small and medium blocks: log2 P symmetric exchanges, one message each "
     "(np=4: 0.5-0.8x native up to 64 KB, direct's P-1 messages per rank 0.55-1.08x)"},
    {RCOLL_COLL_ALLGATHER, ANY_BYTES, 64, -1, 1, &rcoll_allgather_direct,
     "across nodes, large blocks: all P-1 writes in flight at once (np=4 at 128 KB: 0.72x native "
     "against recursive doubling's 0.8x; gather_bcast's root sends P times the data)"},
    {RCOLL_COLL_ALLGATHER, ANY_BYTES, ANY_SIZE, -1, 1, &rcoll_allgather_ring,
     "across nodes, large team, large blocks: neighbour writes, bandwidth-bound"},
    {RCOLL_COLL_ALLTOALL, 8 * 1024, 8, -1, 1, &rcoll_alltoall_gather_scatter,
     "across nodes, small blocks, small team: every rank's P blocks in one message to rank 0 "
     "and one back, 2(P-1) messages instead of P(P-1) (np=4: 0.57-0.73x native up to 8 KB, "
     "direct 0.85-1.06x, standard exchange 0.7-0.8x up to 16 B)"},
    {RCOLL_COLL_ALLTOALL, ANY_BYTES, ANY_SIZE, -1, 1, &rcoll_alltoall_direct,
     "across nodes: every block one message, all in flight (RCOLL_ALLTOALL_KPORT bounds them), "
     "arrival order; pairwise and bruck were slower at every size at np=4"},
    {RCOLL_COLL_BCAST, ANY_BYTES, ANY_SIZE, -1, 1, &rcoll_bcast_knomial,
     "across nodes: the data is pushed down a k-nomial tree (a reader of the root's outbox "
     "would need the root to answer every read)"},
    {RCOLL_COLL_GATHER, ANY_BYTES, ANY_SIZE, -1, 1, &rcoll_gather_direct,
     "across nodes: every rank writes its block straight to the root, one message each"},
    {RCOLL_COLL_SCATTER, ANY_BYTES, ANY_SIZE, -1, 1, &rcoll_scatter_direct,
     "across nodes: the root writes every block once, one message each"},
    {RCOLL_COLL_BARRIER, ANY_BYTES, 2, -1, 0, &rcoll_barrier_dissemination,
     "two ranks: one signal each way, nothing to gain from a tree"},
    {RCOLL_COLL_BARRIER, ANY_BYTES, 64, 1, 0, &rcoll_barrier_flat_arrival,
     "ranks share cores: completion is visible to each rank the moment it runs again, no "
     "tree or round needs a peer to have run since"},
    {RCOLL_COLL_BARRIER, ANY_BYTES, ANY_SIZE, 1, 0, &rcoll_barrier_gather_release,
     "ranks share cores, large team: gather tree, one release word frees all"},
    {RCOLL_COLL_BARRIER, ANY_BYTES, ANY_SIZE, -1, 0, &rcoll_barrier_dissemination,
     "ceil(log2 P) rounds of one signal for any P"},
    {RCOLL_COLL_ALLGATHER, 1024 * 1024, 64, 1, 0, &rcoll_allgather_direct_read,
     "ranks share cores: one copy into shared memory and one out per reader (P*m instead of "
     "2(P-1)*m copied per rank), no remote writes, arrival order"},
    {RCOLL_COLL_ALLGATHER, 8 * 1024, 16, -1, 0, &rcoll_allgather_direct_read,
     "small blocks, small team: one step, each rank writes only its own line or outbox"},
    {RCOLL_COLL_ALLGATHER, 8 * 1024, ANY_SIZE, -1, 0, &rcoll_allgather_bruck,
     "small blocks, larger team: ceil(log_{k+1} P) k-port steps, no folding for P not a power "
     "of two"},
    {RCOLL_COLL_ALLGATHER, ANY_BYTES, 8, -1, 0, &rcoll_allgather_direct,
     "large blocks, small team: one single-copy write per peer, all in flight"},
    {RCOLL_COLL_ALLGATHER, ANY_BYTES, ANY_SIZE, -1, 0, &rcoll_allgather_ring,
     "large blocks, larger team: neighbour writes, bandwidth-bound"},
    {RCOLL_COLL_ALLTOALL, 64 * 1024, 64, 1, 0, &rcoll_alltoall_direct_read,
     "ranks share cores: one copy of the P blocks into shared memory, each peer reads its own "
     "in arrival order, no remote writes (np=4 on 2 cores: 0.3-0.7x native up to 64 KB, "
     "1.1-1.3x at 128-256 KB where direct is 0.85-0.9x; runs direct when P*m exceeds the "
     "outbox)"},
    {RCOLL_COLL_ALLTOALL, ANY_BYTES, 64, 1, 0, &rcoll_alltoall_direct,
     "ranks share cores, large blocks: every block written once, single copy, arrival order"},
    {RCOLL_COLL_ALLTOALL, 1024, 16, -1, 0, &rcoll_alltoall_direct_read,
     "small blocks, small team: one step, each rank writes only its own line or outbox (from "
     "2 KB at np=2 direct's one write per peer wins: 0.3-0.5x against 0.8-1.5x)"},
    {RCOLL_COLL_ALLTOALL, 256, 7, -1, 0, &rcoll_alltoall_direct,
     "tiny blocks, small team: N-1 writes cost little more than log2 N steps"},
    {RCOLL_COLL_ALLTOALL, 256, ANY_SIZE, -1, 0, &rcoll_alltoall_bruck,
     "tiny blocks, larger team: k ceil(log_{k+1} N) messages per rank instead of N-1 (k-port "
     "Bruck index)"},
    {RCOLL_COLL_ALLTOALL, ANY_BYTES, ANY_SIZE, -1, 0, &rcoll_alltoall_direct,
     "each block moved once, no staging or forwarding; all writes in flight (RCOLL_ALLTOALL_KPORT "
     "bounds them)"},
    {RCOLL_COLL_BCAST, 1024 * 1024, 64, 1, 0, &rcoll_bcast_direct_read,
     "ranks share cores: the root publishes once, each reader needs only the root to have run "
     "(a tree or ring pays a context switch per dependency: ~2x native at 8-512 KB on 2 cores)"},
    {RCOLL_COLL_BCAST, ANY_BYTES, ANY_SIZE, 1, 0, &rcoll_bcast_scatter_allgather,
     "ranks share cores, beyond the outbox: pieces scattered, then a ring spreads the copying"},
    {RCOLL_COLL_BCAST, 1024 * 1024, 8, -1, 0, &rcoll_bcast_direct_read,
     "small team, up to the outbox: the root copies the message once into shared memory, readers "
     "copy out in parallel -- from 64 KB in parts, the readers' copies overlapping the root's "
     "(np=2: 0.4-0.8x native up to 32 KB, 0.5-0.98x from 64 KB to 1 MB against knomial's "
     "0.8-1.26x)"},
    {RCOLL_COLL_BCAST, 16 * 1024, ANY_SIZE, -1, 0, &rcoll_bcast_knomial,
     "small messages, larger team: log_k P steps, readers do not all contend for one outbox"},
    {RCOLL_COLL_BCAST, ANY_BYTES, 3, -1, 0, &rcoll_bcast_knomial,
     "large messages, up to 3 ranks: one single-copy write per child"},
    {RCOLL_COLL_BCAST, ANY_BYTES, ANY_SIZE, -1, 0, &rcoll_bcast_scatter_allgather,
     "large messages, larger team: scatter then ring allgather, the copying spread over all ranks"},
    {RCOLL_COLL_GATHER, ANY_BYTES, 64, -1, 0, &rcoll_gather_direct,
     "one node-sized team: every rank writes straight to the root, which collects in arrival "
     "order (binomial lost at every size at np=8 on 2 cores; at P=4, k=2 they are the same)"},
    {RCOLL_COLL_GATHER, 256, ANY_SIZE, -1, 0, &rcoll_gather_binomial,
     "tiny blocks, large team: ceil(log_{k+1} P) steps of k-port binomial tree instead of P-1 "
     "messages into one root"},
    {RCOLL_COLL_GATHER, ANY_BYTES, ANY_SIZE, -1, 0, &rcoll_gather_direct,
     "larger blocks: each block moved once, no forwarding through the tree"},
    {RCOLL_COLL_SCATTER, 512, 64, 1, 0, &rcoll_scatter_direct_read,
     "ranks share cores, tiny blocks: the root copies its P blocks once and leaves, each rank "
     "reads its own (np=4 on 2 cores: 0.5x native against direct's 0.75x)"},
    {RCOLL_COLL_SCATTER, 32 * 1024, 64, -1, 0, &rcoll_scatter_direct,
     "one node-sized team: the root writes every block once through the receiver's inbox, no "
     "arrival needed (binomial lost at every size at np=8 on 2 cores)"},
    {RCOLL_COLL_SCATTER, ANY_BYTES, 64, -1, 0, &rcoll_scatter_direct_read,
     "large blocks: every rank reads its block out of the root's buffer by one single copy, in "
     "parallel (np=4: 0.7-0.99x native against direct's 1.2-1.4x; np=2 from 128 KB 0.96x "
     "against 1.08x); runs direct without CMA"},
    {RCOLL_COLL_SCATTER, 256, ANY_SIZE, -1, 0, &rcoll_scatter_binomial,
     "tiny blocks, large team: ceil(log_{k+1} P) k-port binomial steps instead of P-1 writes "
     "from one root"},
    {RCOLL_COLL_SCATTER, ANY_BYTES, ANY_SIZE, -1, 0, &rcoll_scatter_direct,
     "larger blocks: each block moved once, no forwarding through the tree"},
    {RCOLL_COLL_ALLGATHERV, ANY_BYTES, ANY_SIZE, -1, -1, &rcoll_allgatherv_direct,
     "v-form (counts differ by rank, so only the team size can decide): one step, every block "
     "written once, arrival order"},
    {RCOLL_COLL_ALLTOALLV, ANY_BYTES, ANY_SIZE, -1, -1, &rcoll_alltoallv_direct,
     "v-form (counts differ by rank, so only the team size can decide): one step, every block "
     "written once, arrival order"},
    {RCOLL_COLL_GATHERV, ANY_BYTES, ANY_SIZE, -1, -1, &rcoll_gatherv_direct,
     "v-form (only the root knows the counts, so only the team size can decide): every rank "
     "sends straight to the root"},
    {RCOLL_COLL_SCATTERV, ANY_BYTES, ANY_SIZE, -1, -1, &rcoll_scatterv_direct,
     "v-form (only the root knows the counts, so only the team size can decide): the root "
     "writes straight to every rank"},
};

const rcoll_algo_t *rcoll_algo_find(rcoll_coll_t coll, const char *name)
{
    for (size_t i = 0; i < REGISTRY_COUNT; i++)
        if (registry[i]->coll == coll && strcasecmp(registry[i]->name, name) == 0)
            return registry[i];
    return NULL;
}

void rcoll_algo_names(rcoll_coll_t coll, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < REGISTRY_COUNT && used < len; i++)
        if (registry[i]->coll == coll)
            used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "",
                                     registry[i]->name);
}

const rcoll_algo_t *rcoll_select(const rcoll_config_t *cfg, rcoll_coll_t coll, size_t bytes,
                                 int size, int ppn, int cores, char *why, size_t why_len)
{
    const char *forced = cfg->algo[coll];
    if (forced[0]) {
        const rcoll_algo_t *a = rcoll_algo_find(coll, forced);
        if (a && !why)
            return a; /* no message wanted: the per-call path */
        char upper[32], shown[RCOLL_SHOWN_MAX];
        size_t n = 0;
        for (const char *p = rcoll_coll_name(coll); *p && n < sizeof upper - 1; p++)
            upper[n++] = (char)toupper((unsigned char)*p);
        upper[n] = '\0';
        rcoll_config_show(forced, shown);
        if (!a) {
            char names[256];
            rcoll_algo_names(coll, names, sizeof names);
            snprintf(why, why_len, "RCOLL_%s_ALGO=%s is not valid: expected a known %s algorithm; "
                     "valid: %s, auto", upper, shown, rcoll_coll_name(coll), names);
            return NULL;
        }
        snprintf(why, why_len, "forced by the environment (RCOLL_%s_ALGO=%s)", upper, shown);
        return a;
    }
    int crowded = ppn > cores;
    int nodes = ppn < size; /* the largest node holds fewer ranks than the team */
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
        const rule_t *r = &rules[i];
        if (r->coll != coll || bytes > r->max_bytes || size > r->max_size ||
            (r->crowded >= 0 && r->crowded != crowded) || (r->nodes >= 0 && r->nodes != nodes))
            continue;
        if (!why)
            return r->algo;
        char limit[96] = "";
        size_t n = 0;
        if (r->max_bytes != ANY_BYTES)
            n += (size_t)snprintf(limit + n, sizeof limit - n, "bytes <= %zu ", r->max_bytes);
        if (r->max_size != ANY_SIZE)
            n += (size_t)snprintf(limit + n, sizeof limit - n, "size <= %d ", r->max_size);
        if (r->crowded >= 0)
            n += (size_t)snprintf(limit + n, sizeof limit - n, "%s", r->crowded ? "ppn > cores " : "ppn <= cores ");
        if (r->nodes >= 0)
            snprintf(limit + n, sizeof limit - n, "%s", r->nodes ? "nodes > 1 " : "one node ");
        snprintf(why, why_len, "default rule %zu [%s]: %s (ppn %d, %d cores)", i + 1,
                 limit[0] ? limit : "any", r->reason, ppn, cores);
        return r->algo;
    }
    if (why)
        snprintf(why, why_len, "no rule matches");
    return NULL;
}
