/* Barrier by flat arrival: every rank waits until every other rank has announced that it
 * entered this barrier.
 * Paper: the gather of RGM ([kini-tr03], 3.3) with the fan-in raised to P-1 and every rank its own
 * root, using the zero-cost arrival notification of [qian-phd] (chapter 6: on shared memory the
 * arrival a rank advertises when it enters a collective is visible to all, so no extra
 * message is needed). There is no release step: completion is visible to every rank the
 * moment the last one arrives.
 * Steps: one; a rank's arrival word (the sequence number it posts on entry) is read by all.
 * Bytes on the wire: no writes beyond the arrival word; each rank reads P-1 words.
 * When it wins: ranks outnumber cores. A rank that gets the core back sees at once whether the
 * barrier is complete, instead of depending on peers of a tree or of earlier rounds having run
 * since (each extra dependency costs a context switch, about 1.4 us here). Polling P-1 lines
 * makes it a poor choice for large teams on their own cores.
 * Across nodes an arrival is not visible without a message (a rank would have to be asked,
 * and might have left): a rank tells each rank on another node by a signal (P-1 writes in
 * the worst case, as a one-step all-to-all barrier). */
#include "coll/coll.h"

static bool other_node(const rcoll_args_t *a, int r)
{
    return a->team->node_of[r] != a->team->node_of[a->rank];
}

static rcoll_status_t barrier_flat_arrival(rcoll_args_t *a)
{
    rcoll_waiter_t w;
    rcoll_waiter_start(&w, &a->team->wait);
    for (int i = 1; a->team->node_count > 1 && i < a->size; i++)
        if (other_node(a, (a->rank + i) % a->size))
            a->tl->ops->signal(a->tl, (a->rank + i) % a->size, a->seq, 0);
    for (int i = 1; i < a->size; i++) {
        int r = (a->rank + i) % a->size;
        rcoll_event_t ev = other_node(a, r) ? rcoll_ev_signal(r, a->seq, 0) : rcoll_ev_arrival(r, a->seq);
        while (!a->tl->ops->test(a->tl, &ev)) {
            rcoll_status_t st = a->tl->ops->pause(a->tl, &w, &ev);
            if (st != RCOLL_OK)
                return st;
        }
    }
    return RCOLL_OK;
}

/* Cost model: every rank signals every other once, in one step. */
static double cost(const rcoll_cost_in_t *in)
{
    if (in->N > 1)
        return RCOLL_COST_NONE; /* reads across nodes (coll/cost.h) */
    return rcoll_cost_fan(in, in->P - in->L, in->L - 1, 0);
}

const rcoll_algo_t rcoll_barrier_flat_arrival = {
    .name = "flat_arrival",
    .coll = RCOLL_COLL_BARRIER,
    .summary = "RGM gather with fan-in P-1, no release: every rank reads all arrival words",
    .run = barrier_flat_arrival,
    .cost = cost,
};
