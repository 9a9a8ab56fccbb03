/* PAP Shm-Direct ([qian-phd] 6.4.4 alltoall, 6.4.5 allgather): what its two forms share, after
 * their phase 1 (the node gather to the leader, which cannot be arrival-aware: the leader needs
 * every local block before it has a node block to send).
 *
 * Phase 2, the leaders' PAP Direct over the group team: a leader writes its node's message to
 * every other leader, first to those that have arrived (single copy needs the receiver's
 * advertised buffer; copy-based and inline go at once), and takes the node blocks of the others
 * in the order they land. Phase 3, fused with it: the leader holds a call on its node team open
 * at the same time (core/team.h: bind, open, close), and as soon as a node block has landed --
 * its own first, then any source's -- it hands it to its node's ranks and raises their signal,
 * before it looks at the network again. Every local rank copies out each block as soon as it
 * is there, in landing order, never waiting for all leaders first.
 *
 * Signals are "at least" counters (transport.h): one line per source, steps raised in order.
 * A line per source leader ("one done flag per Master", the seed) would need the steps in the
 * order the blocks land, which is the order PAP cannot know. So the c-th landing raises step c
 * at every local rank, and the leader's log says which node's block that was: entry c of the
 * log (a uint32 in the leader's outbox) is written before signal c. A local rank that sees step
 * c has every landing up to c, reads their log entries and copies those blocks out.
 *
 * How a block reaches the local ranks, decided alike by every rank of a node (from sizes and the
 * node team's transport, never from a rank's own state):
 *   stage  the leader's whole receive layout, the log and the stop record fit its outbox
 *          (RCOLL_INBOX_BYTES): the leader copies each landed block once into its outbox (the
 *          seed's shared buffer: tl stage, no published word), the local ranks copy their part
 *          out in parallel (tl get);
 *   read   larger, with single copy (CMA): the local ranks read their part straight out of the
 *          leader's receive layout, which its node call advertised (tl get_user), and tell it
 *          when they are done (a signal, step 0): it stays in the node call until then;
 *   put    larger, without single copy: the leader writes each local rank's part into the
 *          buffer that rank advertised (message layer, single copy: tl put_user, chunked
 *          through shared memory), the signal riding with the data. It waits there for a rank
 *          that has not entered its node call yet (locals enter right after phase 1).
 * The outbox: [the receive layout (stage only)] [log: N uint32] [stop record].
 *
 * A leader that stops (an error in either call) writes its status and message into the stop
 * record and raises step PAP_ABORT (above every count) at its local ranks, which return that
 * error, naming the ranks the leader missed, instead of timing out on the leader. A local rank
 * whose own wait times out first waits one more period: the leader waits on the network with
 * the same timeout and says why when its own wait ends.
 *
 * Layouts, by `personal`:
 *   allgather (false): node k's block is its L_k blocks of m in node order; every local rank
 *     takes the whole block. The leader's receive layout: P m, node k's block at node_off[k] m.
 *   alltoall (true): node k's block at my leader holds, for each of my ranks jl, the L_k blocks
 *     node k's ranks send to jl: L L_k m, jl's part at jl L_k m. The receive layout: L P m,
 *     node k's block at L node_off[k] m (its leader packs it so: `pack`).
 * Either way local rank jl's part of node k's block is L_k blocks of m, one from (allgather: of)
 * each rank of node k in node order, placed at those ranks' places in its receive buffer. */
#ifndef RCOLL_COLL_HIER_PAP_H
#define RCOLL_COLL_HIER_PAP_H

#include <stdbool.h>
#include "coll/hier.h"

/* The step of the leader's stop signal: above every landing count. */
#define RCOLL_PAP_STOP 0xfffeu

typedef struct rcoll_pap rcoll_pap_t;

struct rcoll_pap {
    /* Set by the algorithm. */
    rcoll_args_t *a;            /* the composed call */
    const rcoll_algo_t *algo;   /* what the sub-teams' calls name */
    bool personal;              /* alltoall: each local rank takes only its part of a block */
    unsigned char *base;        /* leader: its receive layout (the group call's target); its own
                                 * node's block is at its place already (allgather: phase 1) or
                                 * packed there (alltoall) */
    /* Leader, personal: its message to node k's leader (L L_k m, that node's ranks jl' then its
     * own ranks i: the block from i to jl' at (jl' L + i) m) packed at `dst` from `in`. */
    void (*pack)(rcoll_pap_t *p, int k, unsigned char *dst);
    const unsigned char *in;    /* leader, personal: its ranks' P blocks, local rank i's at i P m */
    unsigned char *packed;      /* leader, personal: the messages, node k's at its receive place */

    /* The exchange's own. */
    rcoll_hier_t *h;
    size_t m, total;            /* block; the leader's receive layout */
    int N, me, L;               /* nodes, mine, my node's ranks */
    int mode;
    size_t log_off, stop_off, pub_total; /* the leader's outbox */
    unsigned landed;            /* leader: blocks handed out (the next step) */
    rcoll_status_t node_st;     /* leader: an error of the node call during the exchange */
    unsigned char *tmp;         /* local rank, nodes not in blocks: where its parts arrive */
    rcoll_args_t g, n;          /* the group call (leaders), the node call */
};

/* Phases 2 and 3, on every rank of the call: the leaders' exchange fused with the node's
 * hand-out; each rank's receive buffer complete at the end (the entry placed its own block).
 * `*first` keeps the first error (rcoll_hier_step); returns it. */
rcoll_status_t rcoll_pap_exchange(rcoll_pap_t *p, rcoll_status_t *first);

/* not_for of both forms: the composed algorithms' (a team spanning nodes with several ranks on
 * one), and a stop step above every landing and a log the outbox holds. */
const char *rcoll_pap_not_for(const rcoll_args_t *a);

#endif
