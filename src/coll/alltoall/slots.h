/* Moving alltoall blocks between ranks, shared by the alltoall(v) algorithms.
 *
 * Two shapes of traffic:
 * - One block per (sender, receiver) pair (direct, pairwise, the ranks standard exchange
 *   leaves out of its power): the block for `peer` goes inline in the signal's cache line
 *   (<= RCOLL_INLINE_MAX bytes), through the peer's inbox at slot rank * m (copy-based, below
 *   the zero-copy threshold when the slots fit the inbox), or by single copy (put_user) straight
 *   to the peer's recvbuf + rank * m. a2a_sweep_* runs such exchanges in arrival order: writes
 *   first to peers that can take them, blocks collected as they come, never blocking on one
 *   late peer while other work is ready, with an optional window of writes "in flight".
 * - Store-and-forward steps (bruck, standard exchange): in a step a rank sends a set of blocks
 *   to a partner and receives the same number into the same places of its recvbuf (the
 *   algorithms keep their working array in recvbuf itself, still-original blocks read from
 *   sendbuf). Copy-based: a region of the receiver's inbox per step, no handshake. Single
 *   copy: blocks that must be overwritten are first copied to local staging, the rank tells
 *   its sender it is ready, and the sender writes straight into the receiver's recvbuf. */
#ifndef RCOLL_COLL_ALLTOALL_SLOTS_H
#define RCOLL_COLL_ALLTOALL_SLOTS_H

#include <stdbool.h>
#include "coll/coll.h"
#include "coll/msg.h"


/* How `bytes` (one message) travels when the algorithm's inbox layout needs `inbox_need`
 * bytes: inline when tiny, copy-based below the zero-copy threshold if the layout fits, single
 * copy otherwise. Sender and receiver compute it alike. */
rcoll_msg_proto_t a2a_proto(const rcoll_args_t *a, size_t bytes, size_t inbox_need);

/* Alltoall, one block per pair: sendbuf block `peer` to the peer's block `rank`, signal step 0. */
rcoll_status_t a2a_send_block(rcoll_args_t *a, int peer, rcoll_msg_proto_t proto);
/* After the signal from `source`: copy its block out of the line or the inbox if needed. */
void a2a_finish_block(rcoll_args_t *a, int source, rcoll_msg_proto_t proto);

/* ---- one message per pair, in arrival order ---- */

typedef struct a2a_sweep a2a_sweep_t;
struct a2a_sweep {
    rcoll_args_t *a;
    int window;    /* > 0: write to distance d only once every block from distances < d-window+1
                    * has come in (the seed's k writes in flight); 0: all writes at once */
    int *out, *in; /* per distance d = 1..size-1: the write to rank+d / the block from rank-d is
                    * still pending (set by the caller before a2a_sweep_start) */
    bool in_order; /* the non-PAP baseline: writes strictly by distance, each waiting for its
                    * receiver, then the blocks strictly by distance (alltoall/direct_fixed.c) */
    int out_left, in_left, in_first;
    rcoll_msg_proto_t proto; /* for the default callbacks (alltoall blocks) */
    /* May the write to `peer` start now? If not, `*wait` is the event it needs. */
    bool (*ready)(a2a_sweep_t *s, int peer, rcoll_event_t *wait);
    rcoll_status_t (*send)(a2a_sweep_t *s, int peer);
    /* The signal (step 0) from `source` was seen. */
    void (*finish)(a2a_sweep_t *s, int source);
    void *ctx;
};

/* Nothing pending, alltoall-block callbacks with `proto`; out/in from the team's scratch. */
void a2a_sweep_init(a2a_sweep_t *s, rcoll_args_t *a, int window, rcoll_msg_proto_t proto);
/* After the caller marked what is pending. */
void a2a_sweep_start(a2a_sweep_t *s);
/* One pass over what is pending: the number of things done (0: `*wait` is what to pause on),
 * or a negative status. */
int a2a_sweep_pass(a2a_sweep_t *s, rcoll_event_t *wait);
/* Passes until nothing is pending. */
rcoll_status_t a2a_sweep_run(a2a_sweep_t *s);

/* ---- store-and-forward steps ---- */

typedef struct {
    int to, from;       /* send to `to`, receive from `from` (the same rank in standard exchange) */
    int n;              /* blocks each way */
    int *local;         /* per block: where in my recvbuf it is received (and, unless initial,
                         * what is sent) */
    int *initial;       /* per block: the sendbuf block to send (still the original data), or -1 */
    int *remote;        /* per block: where in `to`'s recvbuf it goes (single copy) */
    size_t send_off;    /* copy-based: where the message goes in `to`'s inbox */
    size_t recv_off;    /* ... and where the one from `from` is in mine */
    size_t staged;      /* internal: first staging block of this transfer */
    bool sent, received; /* internal */
} a2a_xfer_t;

/* Single copy for the steps of an algorithm whose copy-based layout needs `inbox_need` bytes of
 * the receiver's inbox: blocks of at least the zero-copy threshold, or a layout too large. */
bool a2a_steps_zcopy(const rcoll_args_t *a, size_t inbox_need);

/* Step `step` (< 0x7fff) of a store-and-forward algorithm with `nx` transfers; all sends of the
 * step read their blocks before anything is received into the same places. `zcopy`: single
 * copy with the ready handshake, through `staging` (room for every non-initial block of the
 * step); otherwise copy-based (inline when a message fits the signal's line). */
rcoll_status_t a2a_step(rcoll_args_t *a, unsigned step, a2a_xfer_t *x, int nx, bool zcopy,
                        void *staging);

#endif
