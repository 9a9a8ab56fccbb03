/* PAP Shm-Direct, phases 2 and 3: see hier_pap.h. */
#include "coll/hier_pap.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "coll/msg.h"
#include "coll/sweep.h"

enum { PAP_STAGE, PAP_READ, PAP_PUT };

/* What a stopped leader tells its ranks. */
typedef struct {
    int32_t status;
    char msg[1020];
} pap_stop_t;

static size_t up64(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

/* The log and the stop record. */
static size_t control_bytes(int N)
{
    return up64((size_t)N * sizeof(uint32_t)) + sizeof(pap_stop_t);
}

const char *rcoll_pap_not_for(const rcoll_args_t *a)
{
    const char *why = rcoll_composed_not_for(a);
    if (why)
        return why;
    if (a->team->node_count >= (int)RCOLL_PAP_STOP)
        return "more nodes than signal steps";
    if (control_bytes(a->team->node_count) > a->tl->inbox_bytes)
        return "more nodes than the leader's outbox can log (RCOLL_INBOX_BYTES)";
    return NULL;
}

/* ---- layout (hier_pap.h) ---- */

static size_t fan(const rcoll_pap_t *p, int L)
{
    return p->personal ? (size_t)L : 1;
}

/* Node k's block at my leader, and its place in my leader's receive layout. */
static size_t block_len(const rcoll_pap_t *p, int k)
{
    return fan(p, p->L) * (size_t)p->h->node_size[k] * p->m;
}
static size_t block_at(const rcoll_pap_t *p, int k)
{
    return fan(p, p->L) * (size_t)p->h->node_off[k] * p->m;
}
/* Local rank jl's part of it: where it starts in the block, and its length. */
static size_t part_at(const rcoll_pap_t *p, int k, int jl)
{
    return p->personal ? (size_t)jl * (size_t)p->h->node_size[k] * p->m : 0;
}
static size_t part_len(const rcoll_pap_t *p, int k)
{
    return (size_t)p->h->node_size[k] * p->m;
}
/* My leader's message to node k's leader: its length, its place in k's layout, that layout. */
static size_t out_len(const rcoll_pap_t *p, int k)
{
    return fan(p, p->h->node_size[k]) * (size_t)p->L * p->m;
}
static size_t out_at(const rcoll_pap_t *p, int k)
{
    return fan(p, p->h->node_size[k]) * (size_t)p->h->node_off[p->me] * p->m;
}
static size_t layout_of(const rcoll_pap_t *p, int k)
{
    return fan(p, p->h->node_size[k]) * (size_t)p->a->size * p->m;
}

/* Node k's L_k blocks (a part, in node order at `src`) to their ranks' places. */
static void place(const rcoll_pap_t *p, int k, const unsigned char *src)
{
    unsigned char *out = p->a->recvbuf;
    int first = p->h->node_off[k], n = p->h->node_size[k];
    if (p->h->blocked) {
        unsigned char *dst = out + (size_t)first * p->m;
        if (dst != src)
            memcpy(dst, src, (size_t)n * p->m);
        return;
    }
    for (int i = 0; i < n; i++)
        memcpy(out + (size_t)p->h->rank_at[first + i] * p->m, src + (size_t)i * p->m, p->m);
}

/* ---- the leader ---- */

/* Node k's block has landed at `d`: the leader's own part to its places, then the node's
 * hand-out (its log entry, then the data or the signal for every local rank). */
static rcoll_status_t land(rcoll_pap_t *p, int k, const unsigned char *d)
{
    unsigned c = p->landed++;
    unsigned char *home = p->base + block_at(p, k);
    if (p->L > 1 && p->mode == PAP_READ && d != home) { /* where the local ranks read it */
        memcpy(home, d, block_len(p, k));
        d = home;
    }
    place(p, k, d + part_at(p, k, 0));
    if (p->L == 1)
        return RCOLL_OK;
    rcoll_tl_t *tl = p->n.tl;
    size_t len = part_len(p, k), lo = part_at(p, k, 1), hi = part_at(p, k, p->L - 1) + len;
    rcoll_status_t st = RCOLL_OK;
    if (p->mode == PAP_STAGE)
        st = tl->ops->stage(tl, p->n.seq, d + lo, hi - lo, block_at(p, k) + lo, p->pub_total);
    uint32_t entry = (uint32_t)k;
    if (st == RCOLL_OK)
        st = tl->ops->stage(tl, p->n.seq, &entry, sizeof entry, p->log_off + c * sizeof entry,
                            p->pub_total);
    for (int jl = 1; st == RCOLL_OK && jl < p->L; jl++) {
        if (p->mode == PAP_PUT)
            st = rcoll_msg_put(&p->n, jl, c, RCOLL_MSG_ZCOPY, d + part_at(p, k, jl), len,
                               (size_t)p->h->node_off[k] * p->m);
        else
            tl->ops->signal(tl, jl, p->n.seq, c);
    }
    return st;
}

/* Group items: k < N, my message to node k's leader; N + k, node k's block. */
static int group_step(rcoll_args_t *g, void *ctx, int item)
{
    rcoll_pap_t *p = ctx;
    const rcoll_tl_ops_t *ops = g->tl->ops;
    if (item < p->N) {
        int k = item;
        size_t len = out_len(p, k);
        rcoll_msg_proto_t proto = rcoll_msg_proto(g, len, layout_of(p, k), true);
        rcoll_event_t ev = rcoll_ev_arrival(k, g->seq);
        if (proto == RCOLL_MSG_ZCOPY && !ops->test(g->tl, &ev))
            return 0; /* into its advertised buffer: once it has arrived */
        const unsigned char *src = p->base + block_at(p, p->me);
        if (p->personal) {
            unsigned char *dst = p->packed + block_at(p, k);
            p->pack(p, k, dst);
            src = dst;
        }
        rcoll_status_t st = rcoll_msg_put(g, k, 0, proto, src, len, out_at(p, k));
        return st == RCOLL_OK ? 1 : (int)st;
    }
    int k = item - p->N;
    rcoll_event_t ev = rcoll_ev_signal(k, g->seq, 0);
    if (!ops->test(g->tl, &ev))
        return 0;
    size_t len = block_len(p, k);
    rcoll_check_len(g, &ev, len);
    const unsigned char *d = rcoll_msg_data(g, k, rcoll_msg_proto(g, len, p->total, true),
                                            block_at(p, k));
    rcoll_status_t st = land(p, k, d ? d : p->base + block_at(p, k));
    if (st != RCOLL_OK)
        p->node_st = st;
    return st == RCOLL_OK ? 1 : (int)st;
}

static rcoll_event_t group_event(rcoll_args_t *g, void *ctx, int item)
{
    const rcoll_pap_t *p = ctx;
    return item < p->N ? rcoll_ev_arrival(item, g->seq) : rcoll_ev_signal(item - p->N, g->seq, 0);
}

/* Phase 2 with phase 3 inside: sends to arrived leaders and blocks that landed, in one sweep
 * over the group call. Nothing is ever pending on the node call here (the hand-out does not
 * wait, bar flow control and `put` to a rank not yet entered): when a pass finds nothing
 * ready, the leader pauses on the group team's transport only (the network's file descriptor
 * or its poll budget), on the first pending item -- any network event ends the pause. */
static rcoll_status_t exchange(rcoll_pap_t *p)
{
    if (p->personal)
        p->pack(p, p->me, p->base + block_at(p, p->me));
    rcoll_status_t st = land(p, p->me, p->base + block_at(p, p->me));
    if (st != RCOLL_OK) {
        p->node_st = st;
        return st;
    }
    int *items = p->g.team->scratch, n = 0;
    for (int i = 1; i < p->N; i++)
        items[n++] = (p->me + i) % p->N;
    for (int i = 1; i < p->N; i++)
        items[n++] = (p->me - i + p->N) % p->N + p->N;
    return rcoll_sweep(&p->g, items, n, group_step, group_event, p);
}

/* The leader stops: its local ranks learn why (the stop record, then step RCOLL_PAP_STOP). */
static void stop(rcoll_pap_t *p, rcoll_status_t st, const char *msg)
{
    pap_stop_t rec;
    memset(&rec, 0, sizeof rec);
    rec.status = st;
    snprintf(rec.msg, sizeof rec.msg, "%s", msg);
    rcoll_tl_t *tl = p->n.tl;
    if (tl->ops->stage(tl, p->n.seq, &rec, sizeof rec, p->stop_off, p->pub_total) != RCOLL_OK)
        return;
    for (int jl = 1; jl < p->L; jl++)
        tl->ops->signal(tl, jl, p->n.seq, RCOLL_PAP_STOP);
}

static int reader_done(rcoll_args_t *n, void *ctx, int jl)
{
    (void)ctx;
    rcoll_event_t ev = rcoll_ev_signal(jl, n->seq, 0);
    return n->tl->ops->test(n->tl, &ev) ? 1 : 0;
}

static rcoll_event_t reader_event(rcoll_args_t *n, void *ctx, int jl)
{
    (void)ctx;
    return rcoll_ev_signal(jl, n->seq, 0);
}

/* `read`: the local ranks read out of my receive layout until they say they are done. */
static rcoll_status_t wait_readers(rcoll_pap_t *p)
{
    int *items = p->n.team->scratch;
    for (int jl = 1; jl < p->L; jl++)
        items[jl - 1] = jl;
    return rcoll_sweep(&p->n, items, p->L - 1, reader_done, reader_event, NULL);
}

static rcoll_status_t leader(rcoll_pap_t *p, rcoll_status_t *first)
{
    rcoll_hier_t *h = p->h;
    bool local = p->L > 1, primed = false;
    rcoll_status_t gst = rcoll_hier_open(h->group, p->algo, &p->g, p->m, p->base, p->total);
    rcoll_status_t nst = RCOLL_OK;
    if (local) {
        nst = rcoll_hier_open(h->node, p->algo, &p->n, p->m, p->mode == PAP_READ ? p->base : NULL,
                              p->total);
        /* The outbox free of the node call two before (its readers done), the length set. */
        if (nst == RCOLL_OK)
            nst = p->n.tl->ops->stage(p->n.tl, p->n.seq, &p->landed, 0, 0, p->pub_total);
        primed = nst == RCOLL_OK;
    }
    if (gst == RCOLL_OK && nst == RCOLL_OK) {
        gst = exchange(p);
        if (p->node_st != RCOLL_OK) /* (the sweep stopped for the node call's error) */
            nst = p->node_st, gst = RCOLL_OK;
    }
    if (primed && ((gst != RCOLL_OK && gst != RCOLL_ERR_TRUNCATE) || nst != RCOLL_OK))
        stop(p, gst != RCOLL_OK ? gst : nst, gst != RCOLL_OK ? h->group->last_error : h->node->last_error);
    gst = rcoll_hier_close(&p->g, gst);
    if (local && nst == RCOLL_OK && p->mode == PAP_READ &&
        (gst == RCOLL_OK || gst == RCOLL_ERR_TRUNCATE))
        nst = wait_readers(p);
    if (local)
        nst = rcoll_hier_close(&p->n, nst);
    rcoll_hier_step(p->a->team, h->group, gst, first);
    rcoll_hier_step(p->a->team, h->node, nst, first);
    return *first;
}

/* ---- a local rank ---- */

/* The leader stopped: its status and message. */
static rcoll_status_t stopped(rcoll_pap_t *p)
{
    pap_stop_t rec;
    rcoll_status_t st = p->n.tl->ops->get(p->n.tl, 0, p->n.seq, &rec, sizeof rec, p->stop_off);
    if (st != RCOLL_OK)
        return st;
    rec.msg[sizeof rec.msg - 1] = '\0';
    st = rec.status < 0 ? (rcoll_status_t)rec.status : RCOLL_ERR_SYSTEM;
    return rcoll_team_error(p->n.team, st, "%s: the leader of node %d (rank %d) stopped: %s",
                            p->a->team->coll, p->me, p->h->node_first[p->me], rec.msg);
}

/* Landing c is there: copy out my part of the block it brought. */
static rcoll_status_t take(rcoll_pap_t *p, unsigned c, int jl)
{
    rcoll_args_t *n = &p->n;
    const rcoll_tl_ops_t *ops = n->tl->ops;
    rcoll_event_t stop_ev = rcoll_ev_signal(0, n->seq, RCOLL_PAP_STOP);
    if (ops->test(n->tl, &stop_ev))
        return stopped(p);
    uint32_t entry;
    rcoll_status_t st = ops->get(n->tl, 0, n->seq, &entry, sizeof entry, p->log_off + c * sizeof entry);
    if (st != RCOLL_OK)
        return st;
    if (entry >= (uint32_t)p->N)
        return rcoll_team_error(n->team, RCOLL_ERR_SYSTEM, "%s: landing %u of the leader's log "
                                "names node %u of %d", p->a->team->coll, c, entry, p->N);
    int k = (int)entry;
    size_t len = part_len(p, k), from = block_at(p, k) + part_at(p, k, jl);
    unsigned char *out = p->a->recvbuf;
    switch (p->mode) {
    case PAP_STAGE:
        if (p->h->blocked)
            return ops->get(n->tl, 0, n->seq, out + (size_t)p->h->node_off[k] * p->m, len, from);
        for (int i = 0; st == RCOLL_OK && i < p->h->node_size[k]; i++)
            st = ops->get(n->tl, 0, n->seq, out + (size_t)p->h->rank_at[p->h->node_off[k] + i] * p->m,
                          p->m, from + (size_t)i * p->m);
        return st;
    case PAP_READ:
        st = ops->get_user(n->tl, 0, n->seq,
                           p->h->blocked ? out + (size_t)p->h->node_off[k] * p->m : p->tmp, len, from);
        if (st == RCOLL_OK && !p->h->blocked)
            place(p, k, p->tmp);
        return st;
    default: /* put: in place already (in node order where nodes are not in blocks) */
        if (!p->h->blocked)
            place(p, k, p->tmp + (size_t)p->h->node_off[k] * p->m);
        return RCOLL_OK;
    }
}

/* Every landing in turn, as soon as it is there (each step c means landings 0..c). */
static rcoll_status_t take_all(rcoll_pap_t *p, int jl)
{
    rcoll_args_t *n = &p->n;
    rcoll_waiter_t w;
    bool waiting = false, patient = true;
    for (unsigned c = 0; c < (unsigned)p->N;) {
        rcoll_event_t ev = rcoll_ev_signal(0, n->seq, c);
        if (n->tl->ops->test(n->tl, &ev)) {
            rcoll_status_t st = take(p, c++, jl);
            if (st != RCOLL_OK)
                return st;
            waiting = false; /* progress: spin again before giving the core away */
            continue;
        }
        if (!waiting)
            rcoll_waiter_start(&w, &n->team->wait), waiting = true;
        rcoll_status_t st = n->tl->ops->pause(n->tl, &w, &ev);
        if (st == RCOLL_ERR_TIMEOUT && patient) {
            /* The leader is alive (else the pause would say it is gone) and waits on the
             * network with the same timeout: one more period for its word (a block, or why it
             * stopped), which names the ranks it misses. */
            patient = false, waiting = false;
            continue;
        }
        if (st != RCOLL_OK)
            return st;
    }
    return RCOLL_OK;
}

static rcoll_status_t local(rcoll_pap_t *p, rcoll_status_t *first)
{
    struct rcoll_team *t = p->a->team;
    rcoll_hier_t *h = p->h;
    size_t all = (size_t)p->a->size * p->m;
    rcoll_status_t nomem = RCOLL_OK;
    p->tmp = NULL;
    if (!h->blocked && p->mode != PAP_STAGE) { /* parts in node order, then to their places */
        p->tmp = rcoll_team_tmp(t, RCOLL_TMP_ALGO, p->mode == PAP_PUT ? all : (size_t)t->ppn_max * p->m);
        if (!p->tmp)
            nomem = RCOLL_ERR_NOMEM;
    }
    void *target = p->mode == PAP_PUT ? (h->blocked ? p->a->recvbuf : (void *)p->tmp) : NULL;
    /* Opened even without memory, so that the node team's calls stay in step. */
    rcoll_status_t st = rcoll_hier_open(h->node, p->algo, &p->n, p->m, target, all);
    if (st == RCOLL_OK && nomem != RCOLL_OK)
        st = rcoll_team_error(h->node, nomem, "%s: no memory for the node-order blocks", t->coll);
    if (st == RCOLL_OK)
        st = take_all(p, h->lidx_of[p->a->rank]);
    if (st == RCOLL_OK && p->mode == PAP_READ) /* done reading the leader's buffer */
        p->n.tl->ops->signal(p->n.tl, 0, p->n.seq, 0);
    st = rcoll_hier_close(&p->n, st);
    rcoll_hier_step(t, h->node, st, first);
    return *first;
}

/* ---- both ---- */

rcoll_status_t rcoll_pap_exchange(rcoll_pap_t *p, rcoll_status_t *first)
{
    struct rcoll_team *t = p->a->team;
    rcoll_hier_t *h = p->h = t->hier;
    p->m = p->a->bytes;
    p->N = t->node_count;
    p->me = t->node_of[p->a->rank];
    p->L = h->node_size[p->me];
    p->total = fan(p, p->L) * (size_t)p->a->size * p->m;
    p->landed = 0;
    p->node_st = RCOLL_OK;
    /* Alike on every rank of the node: its sizes and its node team's transport. */
    rcoll_tl_t *ntl = h->node->tl;
    if (up64(p->total) + control_bytes(p->N) <= ntl->inbox_bytes)
        p->mode = PAP_STAGE;
    else
        p->mode = ntl->single_copy ? PAP_READ : PAP_PUT;
    p->log_off = p->mode == PAP_STAGE ? up64(p->total) : 0;
    p->stop_off = up64(p->log_off + (size_t)p->N * sizeof(uint32_t));
    p->pub_total = p->stop_off + sizeof(pap_stop_t);
    return h->lidx_of[p->a->rank] == 0 ? leader(p, first) : local(p, first);
}
