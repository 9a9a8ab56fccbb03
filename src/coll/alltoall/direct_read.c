/* Alltoall Direct-read: each rank publishes its whole send buffer once, every peer reads its
 * own block of it.
 * Paper: [qian-phd] (Qian), chapter 6, the shared-memory Direct ("Shm-Direct") alltoall: instead
 * of writing P-1 blocks into P-1 peers' slots, a rank copies its P blocks once into its own
 * outbox in shared memory (all of them inline in its published cache line when P*m <= 48
 * bytes) and raises one word; peer q copies block q out of it as soon as it sees the word, in
 * whatever order the ranks arrive, never waiting on one late rank while another's data is
 * ready. On an RDMA transport the same is a read of the peer's registered outbox.
 * Steps: one. Copies per rank: P*m in, (P-1)*m out; no remote cache line is written, so a
 * rank that shares its core with others never waits for a particular peer to have run since a
 * given step.
 * Bytes on the wire per rank: (P-1) * m read.
 * When it wins: ranks sharing cores (any m whose P*m fits the outbox), tiny blocks. When P*m
 * exceeds the outbox (RCOLL_INBOX_BYTES) it runs direct (single-copy writes) instead. */
#include "coll/sweep.h"

/* Peer q's blocks are published: take mine. */
static int take(rcoll_args_t *a, void *ctx, int q)
{
    (void)ctx;
    rcoll_event_t ev = rcoll_ev_published(q, a->seq);
    if (!a->tl->ops->test(a->tl, &ev))
        return 0;
    rcoll_status_t st = a->tl->ops->get(a->tl, q, a->seq, (char *)a->recvbuf + (size_t)q * a->bytes,
                                        a->bytes, (size_t)a->rank * a->bytes);
    return st != RCOLL_OK ? (int)st : 1;
}

static rcoll_event_t published(rcoll_args_t *a, void *ctx, int q)
{
    (void)ctx;
    return rcoll_ev_published(q, a->seq);
}

static rcoll_status_t alltoall_direct_read(rcoll_args_t *a)
{
    size_t total = (size_t)a->size * a->bytes;
    rcoll_status_t st = a->tl->ops->publish(a->tl, a->seq, a->sendbuf, total);
    if (st != RCOLL_OK)
        return st;
    int *items = a->team->scratch;
    return rcoll_sweep(a, items, rcoll_sweep_others(a, items), take, published, NULL);
}

static const char *alltoall_direct_read_not_for(const rcoll_args_t *a)
{
    return (size_t)a->size * a->bytes > a->tl->inbox_bytes ? "the P blocks are larger than the outbox"
                                                           : NULL;
}

/* Cost model: the P blocks copied into the outbox, then every rank reads its block of every
 * other's. */
static double cost(const rcoll_cost_in_t *in)
{
    if (in->N > 1)
        return RCOLL_COST_NONE; /* reads across nodes (coll/cost.h) */
    double m = (double)in->bytes;
    return rcoll_cost_copy(in, in->P * m) + rcoll_cost_fan(in, in->P - in->L, in->L - 1, m);
}

const rcoll_algo_t rcoll_alltoall_direct_read = {
    .name = "direct_read",
    .coll = RCOLL_COLL_ALLTOALL,
    .summary = "[qian-phd] ch. 6 Shm-Direct: publish all P blocks once, each peer reads its own, arrival order",
    .run = alltoall_direct_read,
    .not_for = alltoall_direct_read_not_for,
    .fallback = &rcoll_alltoall_direct,
    .limits = "P blocks of at most RCOLL_INBOX_BYTES in all (one publication in the outbox)",
    .cost = cost,
};
