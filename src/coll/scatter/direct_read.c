/* Scatter Direct-read: every rank takes its own block from the root instead of the root
 * writing P-1 blocks one after the other.
 * Paper: [qian-phd] (Qian), 3.4.1 Direct scatter, turned around as in the shared-memory
 * collectives of chapter 6 (a buffer written once, read by all, arrival for free): the
 * receivers copy in parallel, the root's work no longer grows with P.
 * Steps: one.
 *   Blocks below the zero-copy threshold whose P blocks fit the outbox: the root copies its P
 *   blocks once into its outbox (inline in its published line when P*m <= 48 B), raises one
 *   word and leaves; rank r waits for the word and copies block r out.
 *   Larger blocks (single copy available): rank r reads block r straight out of the root's
 *   send buffer (CMA process_vm_readv; an RDMA read) and signals the root, which leaves once
 *   every rank has read -- in whatever order they come.
 *   Without single copy the large case runs direct.
 * Bytes on the wire per rank: m read (the root: P*m copied in, or nothing).
 * When it wins: ranks sharing cores -- the root does one copy (or none) instead of P-1 writes
 * that each wait for their receiver to have run, and the readers copy in parallel. */
#include "coll/sweep.h"

static int published_path(const rcoll_args_t *a)
{
    return a->bytes < a->tl->zcopy_threshold && (size_t)a->size * a->bytes <= a->tl->inbox_bytes;
}

static rcoll_status_t scatter_direct_read_prepare(rcoll_args_t *a)
{
    if (a->rank == a->root) { /* readers take their block from the whole send buffer */
        a->target = (void *)(uintptr_t)a->sendbuf;
        a->target_bytes = (size_t)a->size * a->bytes;
    }
    return RCOLL_OK;
}

/* Root of the read path: rank r has read its block. */
static int has_read(rcoll_args_t *a, void *ctx, int r)
{
    (void)ctx;
    rcoll_event_t ev = rcoll_ev_signal(r, a->seq, 0);
    return a->tl->ops->test(a->tl, &ev);
}

static rcoll_event_t read_signal(rcoll_args_t *a, void *ctx, int r)
{
    (void)ctx;
    return rcoll_ev_signal(r, a->seq, 0);
}

static rcoll_status_t scatter_direct_read(rcoll_args_t *a)
{
    size_t mine = (size_t)a->rank * a->bytes;
    if (published_path(a)) {
        if (a->rank == a->root)
            return a->tl->ops->publish(a->tl, a->seq, a->sendbuf, (size_t)a->size * a->bytes);
        rcoll_event_t ev = rcoll_ev_published(a->root, a->seq);
        rcoll_status_t st = rcoll_tl_wait(a->tl, &ev);
        if (st == RCOLL_OK)
            rcoll_check_len(a, &ev, (size_t)a->size * a->bytes);
        if (st == RCOLL_OK)
            st = a->tl->ops->get(a->tl, a->root, a->seq, a->recvbuf, a->bytes, mine);
        return st;
    }
    if (a->rank == a->root) {
        int *items = a->team->scratch;
        return rcoll_sweep(a, items, rcoll_sweep_others(a, items), has_read, read_signal, NULL);
    }
    rcoll_status_t st = a->tl->ops->get_user(a->tl, a->root, a->seq, a->recvbuf, a->bytes, mine);
    if (st == RCOLL_OK)
        a->tl->ops->signal(a->tl, a->root, a->seq, 0);
    return st;
}

static const char *scatter_direct_read_not_for(const rcoll_args_t *a)
{
    return !published_path(a) && !a->tl->single_copy
               ? "blocks for single copy, which this team's transport cannot read" : NULL;
}

/* Cost model: the root's blocks copied once, every rank reads its own (the root's node's link
 * serves the readers elsewhere). */
static double cost(const rcoll_cost_in_t *in)
{
    if (in->N > 1)
        return RCOLL_COST_NONE; /* reads across nodes (coll/cost.h) */
    return rcoll_cost_copy(in, in->P * (double)in->bytes) + rcoll_cost_root(in, (double)in->bytes);
}

const rcoll_algo_t rcoll_scatter_direct_read = {
    .name = "direct_read",
    .coll = RCOLL_COLL_SCATTER,
    .summary = "[qian-phd] 3.4.1 + ch. 6: every rank reads its block from the root (outbox or CMA read)",
    .run = scatter_direct_read,
    .prepare = scatter_direct_read_prepare,
    .not_for = scatter_direct_read_not_for,
    .fallback = &rcoll_scatter_direct,
    .limits = "blocks below the zero-copy threshold whose P blocks fit RCOLL_INBOX_BYTES (the root's "
        "outbox), larger ones where single copy works (CMA; not with RCOLL_CMA=0)",
    .cost = cost,
};
