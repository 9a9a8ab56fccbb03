/* Barrier RGM: gather tree, then a one-step release.
 * Paper: Kini et al., "Fast and Scalable Barrier using RDMA and Multicast" ([kini-tr03], 3.3): the
 * gather runs up a tree of fan-in l (7 performed best there; RCOLL_BARRIER_FANIN), then the
 * root multicasts the barrier id once. On shared memory the multicast is one release word in
 * the root's area that every rank polls (or sleeps on): one store, every waiter sees it.
 * Steps: a rank waits for the signals of its children ((r*l+1) .. (r*l+l)), then signals its
 * parent (r-1)/l; rank 0, once all children arrived, posts the release; all wait for it.
 * Bytes on the wire: P-1 signals up the tree, one release word read by P-1 ranks;
 * ceil(log_{l+1} P) + 1 hops.
 * When it wins: many ranks sharing few cores (one wake-up releases everyone) and large teams. */
#include "coll/coll.h"
#include "coll/schedule.h"

static rcoll_status_t gather_children(rcoll_args_t *a, int fanin)
{
    int first = rcoll_tree_first_child(a->rank, fanin, a->size);
    int count = rcoll_tree_child_count(a->rank, fanin, a->size);
    for (int c = first; c < first + count; c++) {
        rcoll_event_t ev = rcoll_ev_signal(c, a->seq, 0);
        rcoll_status_t st = rcoll_tl_wait(a->tl, &ev);
        if (st != RCOLL_OK)
            return st;
    }
    return RCOLL_OK;
}

static rcoll_status_t barrier_gather_release(rcoll_args_t *a)
{
    int fanin = a->team->ctx->cfg.gather_fanin;
    rcoll_status_t st = gather_children(a, fanin);
    if (st != RCOLL_OK)
        return st;
    if (a->rank == 0) {
        a->tl->ops->release(a->tl, a->seq);
        return RCOLL_OK;
    }
    a->tl->ops->signal(a->tl, rcoll_tree_parent(a->rank, fanin), a->seq, 0);
    rcoll_event_t ev = rcoll_ev_release(0, a->seq);
    return rcoll_tl_wait(a->tl, &ev);
}

/* Cost model: the gather tree's levels (each parent waits for `fanin` children), then the
 * root's release: one word every rank of its node polls, one write per rank elsewhere. */
static double cost(const rcoll_cost_in_t *in)
{
    int fanin = in->cfg->gather_fanin, levels = 0;
    for (long span = 1; span < in->P; span = span * (fanin + 1))
        levels++;
    const rcoll_cost_channel_t *up = in->N > 1 ? &in->m->net : &in->m->shm;
    return levels * rcoll_cost_step(up, fanin < in->P - 1 ? fanin : in->P - 1, 0) +
           (in->N > 1 ? rcoll_cost_step(&in->m->net, in->P - in->L, 0) : rcoll_cost_step(&in->m->shm, 1, 0));
}

const rcoll_algo_t rcoll_barrier_gather_release = {
    .name = "gather_release",
    .coll = RCOLL_COLL_BARRIER,
    .summary = "RGM [kini-tr03]: gather tree fan-in 7, then one release word every rank polls",
    .run = barrier_gather_release,
    .cost = cost,
};
