/* Barrier by node arrival: the rank that completes its node tells the other nodes, directly.
 * Paper: [qian-phd] chapter 6 (process arrival patterns: let the ranks that arrive do the work,
 * learn arrivals at no extra message: on shared memory a rank's arrival word is visible to its
 * node) applied to the node-aware barrier of [kini-tr03] / [qian-phd] chapter 4: instead of a
 * fixed leader that must be woken to cross the network and then to release its node, whichever
 * rank arrives last on a node sends that node's single message to every rank of the other nodes.
 * Steps: one. A rank posts its arrival (on entry) and, after a full fence, looks at its node's
 * arrival words once: if every local rank is there it is (one of) the last, and it signals every
 * rank on another node (the fence makes sure the last one sees all: two racing last ranks may
 * both send, which is harmless). Then every rank waits until all local ranks have arrived and,
 * for each other node, a signal has come from any of its ranks.
 * Messages on the network: N - 1 per rank of another node from each node, N (P - L) in all
 * (flat_arrival sends P (P - L), hier's dissemination among leaders N log2 N plus two hops
 * inside each node); no release step, no leader to wake.
 * When it wins: teams spanning nodes whose ranks arrive at different times (the last arrival's
 * node answers at once) and crowded nodes, where waking a leader costs a context switch; one
 * node: it is flat_arrival. A rank polls P - 1 lines, so not for large teams. */
#include <stdatomic.h>

#include "coll/coll.h"

/* Has every rank of this rank's node arrived? `next` is where to look again (an event to pause
 * on when not). */
static bool node_complete(rcoll_args_t *a, int *next, rcoll_event_t *ev)
{
    const struct rcoll_team *t = a->team;
    for (; *next < a->size; (*next)++) {
        int r = *next;
        if (r == a->rank || t->node_of[r] != t->node_of[a->rank])
            continue;
        *ev = rcoll_ev_arrival(r, a->seq);
        if (!a->tl->ops->test(a->tl, ev))
            return false;
    }
    return true;
}

/* Has a signal come from any rank of node `node`? */
static bool node_heard(rcoll_args_t *a, int node, rcoll_event_t *ev)
{
    const struct rcoll_team *t = a->team;
    bool first = true;
    for (int r = 0; r < a->size; r++) {
        if (t->node_of[r] != node)
            continue;
        rcoll_event_t e = rcoll_ev_signal(r, a->seq, 0);
        if (a->tl->ops->test(a->tl, &e))
            return true;
        if (first)
            *ev = e;
        first = false;
    }
    return false;
}

static void tell_other_nodes(rcoll_args_t *a)
{
    const struct rcoll_team *t = a->team;
    for (int i = 1; i < a->size; i++) {
        int r = (a->rank + i) % a->size;
        if (t->node_of[r] != t->node_of[a->rank])
            a->tl->ops->signal(a->tl, r, a->seq, 0);
    }
}

static rcoll_status_t barrier_node_arrival(rcoll_args_t *a)
{
    const struct rcoll_team *t = a->team;
    int next = 0, node = 0;
    rcoll_event_t ev;
    /* My arrival was posted on entry: against the other local ranks' posts, one of us sees all. */
    atomic_thread_fence(memory_order_seq_cst);
    if (t->node_count > 1 && node_complete(a, &next, &ev))
        tell_other_nodes(a);
    rcoll_waiter_t w;
    rcoll_waiter_start(&w, &a->team->wait);
    for (;;) {
        bool local = node_complete(a, &next, &ev);
        while (local && node < t->node_count &&
               (node == t->node_of[a->rank] || node_heard(a, node, &ev)))
            node++;
        if (local && node == t->node_count)
            return RCOLL_OK;
        rcoll_status_t st = a->tl->ops->pause(a->tl, &w, &ev);
        if (st != RCOLL_OK)
            return st;
    }
}

/* Cost model: one step; each node's last rank signals every rank of the other nodes (the
 * node's link carries P - L messages, L times fewer than if every rank sent). */
static double cost(const rcoll_cost_in_t *in)
{
    return rcoll_cost_fan(in, in->N > 1 ? (double)(in->P - in->L) / in->L : 0, in->L - 1, 0);
}

const rcoll_algo_t rcoll_barrier_node_arrival = {
    .name = "node_arrival",
    .coll = RCOLL_COLL_BARRIER,
    .summary = "[qian-phd] ch. 6 + [kini-tr03]: a node's last-arrived rank signals the other nodes, no leader, no release",
    .run = barrier_node_arrival,
    .by_name = true, /* measured under skew: no win over hier on this machine (tuning.md) */
    .cost = cost,
};
