/* The cost model's view of a call (select/model.c evaluates it; docs/tuning.md, "Cost model"):
 * a latency/bandwidth model per channel (config.h: rcoll_model_t) and the shape of the team --
 * P ranks on N nodes, at most L on one, in blocks of consecutive ranks -- from which each
 * algorithm's `cost` predicts its time in microseconds. A step is one round of messages in
 * which every rank waits for what it receives: its latency, then each further message its
 * node's link (network) or the rank itself (shared memory) handles, then the bytes.
 * Composed algorithms add the predicted time of their sub-team calls as the selection would
 * run them (`sub`). Nothing here moves data; no function is used on the data path. */
#ifndef RCOLL_COLL_COST_H
#define RCOLL_COLL_COST_H

#include <stdbool.h>
#include <stddef.h>
#include "config/config.h"

typedef struct rcoll_cost_in {
    const rcoll_config_t *cfg; /* radix and fan-in of the trees */
    const rcoll_model_t *m;
    size_t bytes;              /* the call's size as the selection keys on it */
    int P, N, L;               /* ranks, nodes, most ranks on one node */
    int H;                     /* nodes that share one host's link and cores (1 on a cluster;
                                * emulated nodes: all of them): a network step's messages queue
                                * behind those of the host's other nodes */
    /* The predicted time of a call of `coll` of `bytes` on a sub-team (P ranks, N nodes, L per
     * node), with the algorithm the selection runs there; `share` such calls run at once on
     * every node (their network messages queue behind each other). */
    double (*sub)(const struct rcoll_cost_in *in, int coll, size_t bytes, int P, int N, int L,
                  int share);
} rcoll_cost_in_t;

/* What a cost function returns where the algorithm must not be chosen: read-based algorithms
 * across nodes, whose readers need the publisher to answer each read (over UCX tcp only the
 * publisher's own progress serves a read, and a publisher that left the call for other work
 * never answers). */
#define RCOLL_COST_NONE (-1.0)

/* One step over channel `c`: `msgs` messages of `bytes` each handled in a row. */
static inline double rcoll_cost_step(const rcoll_cost_channel_t *c, double msgs, double bytes)
{
    if (msgs <= 0)
        return 0;
    return c->alpha + (msgs - 1) * c->gap + msgs * bytes / 1024.0 * c->per_kb;
}

static inline double rcoll_cost_copy(const rcoll_cost_in_t *in, double bytes)
{
    return bytes / 1024.0 * in->m->copy_per_kb;
}

/* A round in which every rank sends one message of `bytes` to the rank `d` away (rank r with
 * r XOR d where `xor`, else r + d): shared memory when it stays on every node, else the
 * network, with as many messages per node (per host: H nodes) as its ranks whose partner is
 * elsewhere. */
static inline double rcoll_cost_round(const rcoll_cost_in_t *in, int d, bool xor, double bytes)
{
    if (in->N == 1)
        return rcoll_cost_step(&in->m->shm, 1, bytes);
    if (d >= in->L)
        return rcoll_cost_step(&in->m->net, (double)in->L * in->H, bytes);
    if (xor && in->L % (2 * d) == 0)
        return rcoll_cost_step(&in->m->shm, 1, bytes);
    return rcoll_cost_step(&in->m->net, (double)(xor ? in->L : d) * in->H, bytes);
}

/* One step in which every rank sends `per_rank_remote` messages to other nodes and
 * `per_rank_local` on its node, `bytes` each: the node's link carries L times the first. */
static inline double rcoll_cost_fan(const rcoll_cost_in_t *in, double per_rank_remote,
                                    double per_rank_local, double bytes)
{
    double net = rcoll_cost_step(&in->m->net, per_rank_remote * in->L * in->H, bytes);
    double shm = rcoll_cost_step(&in->m->shm, per_rank_local, bytes);
    return net > shm ? net : shm;
}

/* A root's step: it receives (or sends) one message from every other rank, `bytes` each. */
static inline double rcoll_cost_root(const rcoll_cost_in_t *in, double bytes)
{
    double net = rcoll_cost_step(&in->m->net, in->P - in->L, bytes);
    double shm = rcoll_cost_step(&in->m->shm, in->L - 1, bytes);
    return net + shm;
}

/* A k-port binomial gather or scatter tree: ceil(log_{k+1} P) levels; at distance d a parent
 * exchanges d blocks with each of its k children (on the node while d (k+1) <= L). */
static inline double rcoll_cost_binomial(const rcoll_cost_in_t *in, int k)
{
    double t = 0;
    for (long d = 1; d < in->P; d *= k + 1) {
        bool local = in->N == 1 || d * (k + 1) <= in->L;
        t += rcoll_cost_step(local ? &in->m->shm : &in->m->net, k, (double)d * (double)in->bytes);
    }
    return t;
}

#endif
