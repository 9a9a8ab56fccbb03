/* Allgather Direct: every write in flight at once.
 * Paper: [qian-phd] (Qian), section 3.4 (Direct allgather); with the arrival-aware order of
 * chapter 6: a rank writes first to the peers that have already arrived and copies out
 * whatever has come in, so one late peer never holds up work that is ready.
 * Steps: one; rank r writes its block to every peer (r+i) mod P, i = 1..P-1 (tiny blocks
 * inline in the signal's cache line, small ones through the peer's inbox, large ones straight
 * into the peer's receive buffer), then collects the P-1 blocks of the others in arrival order.
 * Bytes on the wire per rank: (P-1) * m in P-1 messages, no forwarding.
 * When it wins: small teams and tiny to medium messages (one step, latency of one write). */
#include "coll/allgather/blocks.h"

typedef struct {
    int *peers;   /* pending peers, by distance */
    int count;
} pending_t;

static int remove_at(pending_t *p, int i)
{
    p->peers[i] = p->peers[--p->count];
    return i - 1;
}

/* One sweep: writes to arrived peers (all of them when no arrival is needed), reads of arrived
 * blocks. Returns the number of things done, or a negative status. */
static int sweep(rcoll_args_t *a, pending_t *out, pending_t *in, rcoll_msg_proto_t proto)
{
    int done = 0;
    ag_ranges_t mine = ag_one_block(a->rank);
    for (int i = 0; i < out->count; i++) {
        rcoll_event_t arrived = rcoll_ev_arrival(out->peers[i], a->seq);
        if (proto == RCOLL_MSG_ZCOPY && !a->tl->ops->test(a->tl, &arrived))
            continue;
        rcoll_status_t st = ag_send(a, out->peers[i], 0, &mine, 1);
        if (st != RCOLL_OK)
            return st;
        i = remove_at(out, i);
        done++;
    }
    for (int i = 0; i < in->count; i++) {
        rcoll_event_t ev = rcoll_ev_signal(in->peers[i], a->seq, 0);
        if (!a->tl->ops->test(a->tl, &ev))
            continue;
        ag_ranges_t theirs = ag_one_block(in->peers[i]);
        ag_finish_recv(a, in->peers[i], &theirs, 1);
        i = remove_at(in, i);
        done++;
    }
    return done;
}

/* Fixed order (the seed's non-PAP baseline): the writes in turn to (r+1), (r+2), ..., each
 * waiting for its receiver (single copy needs its advertised buffer), and only then the blocks
 * in turn from (r-1), (r-2), ...: one late peer holds up everything after it. Returns the number
 * of things done, or a negative status; `wait` is the event the first pending item needs. */
static int ordered_pass(rcoll_args_t *a, pending_t *out, pending_t *in, rcoll_msg_proto_t proto,
                        rcoll_event_t *wait)
{
    int done = 0;
    ag_ranges_t mine = ag_one_block(a->rank);
    while (out->count) {
        *wait = rcoll_ev_arrival(out->peers[0], a->seq);
        if (proto == RCOLL_MSG_ZCOPY && !a->tl->ops->test(a->tl, wait))
            return done;
        rcoll_status_t st = ag_send(a, out->peers[0], 0, &mine, 1);
        if (st != RCOLL_OK)
            return st;
        out->peers++;
        out->count--;
        done++;
    }
    while (in->count) {
        *wait = rcoll_ev_signal(in->peers[0], a->seq, 0);
        if (!a->tl->ops->test(a->tl, wait))
            return done;
        ag_ranges_t theirs = ag_one_block(in->peers[0]);
        ag_finish_recv(a, in->peers[0], &theirs, 1);
        in->peers++;
        in->count--;
        done++;
    }
    return done;
}

static rcoll_status_t direct_run(rcoll_args_t *a, bool in_order)
{
    int *peers = a->team->scratch;
    pending_t out = {peers, a->size - 1}, in = {peers + a->size, a->size - 1};
    for (int i = 1; i < a->size; i++) {
        out.peers[i - 1] = (a->rank + i) % a->size;
        in.peers[i - 1] = (a->rank - i + a->size) % a->size;
    }
    rcoll_msg_proto_t proto = ag_proto(a, a->bytes, 1);
    rcoll_waiter_t w;
    rcoll_waiter_start(&w, &a->team->wait);
    rcoll_status_t st = RCOLL_OK;
    while (out.count + in.count > 0) {
        rcoll_event_t ev;
        int done = in_order ? ordered_pass(a, &out, &in, proto, &ev) : sweep(a, &out, &in, proto);
        if (done < 0) {
            st = (rcoll_status_t)done;
            break;
        }
        if (done > 0)
            continue;
        /* Nothing was ready: pause on the first thing we cannot finish without. */
        if (!in_order)
            ev = out.count ? rcoll_ev_arrival(out.peers[0], a->seq)
                           : rcoll_ev_signal(in.peers[0], a->seq, 0);
        if ((st = a->tl->ops->pause(a->tl, &w, &ev)) != RCOLL_OK)
            break;
    }
    return st;
}

static rcoll_status_t allgather_direct(rcoll_args_t *a)
{
    return direct_run(a, false);
}

rcoll_status_t ag_direct_fixed_order(rcoll_args_t *a)
{
    return direct_run(a, true);
}

/* Cost model: one step, every rank writes its block to every other. */
static double cost(const rcoll_cost_in_t *in)
{
    return rcoll_cost_fan(in, in->P - in->L, in->L - 1, (double)in->bytes);
}

const rcoll_algo_t rcoll_allgather_direct = {
    .name = "direct",
    .coll = RCOLL_COLL_ALLGATHER,
    .summary = "[qian-phd]: one step, all P-1 writes in flight, arrival order",
    .run = allgather_direct,
    .cost = cost,
};
