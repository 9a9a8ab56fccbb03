/* Allgather Direct-read: each rank publishes its block once, every peer reads it.
 * Paper: [qian-phd] (Qian), the shared-memory-aware Direct allgather of chapter 6 (and the
 * SMP-aware Direct of 4.4.2, here on one node): instead of writing its block into each of the
 * P-1 peers' slots, a rank copies it once into its own outbox in shared memory (tiny blocks:
 * into its published cache line) and raises one word; each peer copies it out when it sees the
 * word, in whatever order the ranks arrive (arrival-aware, never waiting on one late rank while
 * another's block is ready). On an RDMA transport the same is a read of the peer's
 * registered outbox.
 * Steps: one. Copies per rank: m in, (P-1)*m out -- against (P-1)*m in and (P-1)*m out for
 * direct's writes, and no remote cache line is written.
 * Bytes on the wire per rank: (P-1) * m read.
 * When it wins: ranks sharing cores and medium blocks (less copying), tiny blocks (each rank
 * writes only its own line). Blocks larger than the outbox go to direct (single copy). */
#include "coll/allgather/blocks.h"
#include "coll/sweep.h"

/* Peer q's block is published: copy it out. */
static int take(rcoll_args_t *a, void *ctx, int q)
{
    (void)ctx;
    rcoll_event_t ev = rcoll_ev_published(q, a->seq);
    if (!a->tl->ops->test(a->tl, &ev))
        return 0;
    rcoll_status_t st = a->tl->ops->get(a->tl, q, a->seq, (char *)a->recvbuf + (size_t)q * a->bytes,
                                        a->bytes, 0);
    return st != RCOLL_OK ? (int)st : 1;
}

static rcoll_event_t published(rcoll_args_t *a, void *ctx, int q)
{
    (void)ctx;
    return rcoll_ev_published(q, a->seq);
}

static rcoll_status_t allgather_direct_read(rcoll_args_t *a)
{
    const char *mine = (const char *)a->recvbuf + (size_t)a->rank * a->bytes;
    rcoll_status_t st = a->tl->ops->publish(a->tl, a->seq, mine, a->bytes);
    if (st != RCOLL_OK)
        return st;
    int *items = a->team->scratch;
    return rcoll_sweep(a, items, rcoll_sweep_others(a, items), take, published, NULL);
}

static const char *allgather_direct_read_not_for(const rcoll_args_t *a)
{
    return a->bytes > a->tl->inbox_bytes ? "the block is larger than the outbox" : NULL;
}

/* Cost model: one copy into the outbox, then every rank reads every other's block. */
static double cost(const rcoll_cost_in_t *in)
{
    if (in->N > 1)
        return RCOLL_COST_NONE; /* reads across nodes (coll/cost.h) */
    return rcoll_cost_copy(in, (double)in->bytes) + rcoll_cost_fan(in, in->P - in->L, in->L - 1, (double)in->bytes);
}

const rcoll_algo_t rcoll_allgather_direct_read = {
    .name = "direct_read",
    .coll = RCOLL_COLL_ALLGATHER,
    .summary = "[qian-phd] ch. 6: publish once in shared memory, every peer reads it, arrival order",
    .run = allgather_direct_read,
    .not_for = allgather_direct_read_not_for,
    .fallback = &rcoll_allgather_direct,
    .limits = "blocks of at most RCOLL_INBOX_BYTES (one publication in the outbox)",
    .cost = cost,
};
