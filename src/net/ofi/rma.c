/* ofi: the operations of the libfabric network channel -- writes with their signal, user puts,
 * reads, polls, fence and quiet, registration (the design is at the top of ofi.c). */
#include "net/ofi/ofi.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

/* One transfer: the local side and where it goes (or comes from) in the peer. */
typedef struct {
    void *buf;
    size_t len;
    void *desc;
    uint64_t raddr, key;
    uint64_t data; /* remote CQ data (posted with FI_REMOTE_CQ_DATA) */
} span_t;

static const char *coll(const ofi_net_t *n) { return rcoll_view_coll(n->v, "ofi"); }

static rcoll_status_t timed_out(ofi_net_t *n, const ofi_peer_t *p, const char *what, rcoll_status_t st)
{
    return rcoll_view_error(n->v, st, "%s: %s rank %d timed out", coll(n), what, p->rank);
}

static uint64_t area_raddr(const ofi_net_t *n, const ofi_peer_t *p, size_t off)
{
    return rcoll_ofi_raddr(n->c, p->area_addr, p->area_addr + off);
}

/* Errors of a post that say the connection to the peer is broken (others are ours). */
static bool connection_error(ssize_t r)
{
    switch (-r) {
    case FI_ECONNREFUSED: case FI_ECONNRESET: case FI_ECONNABORTED: case FI_ENOTCONN:
    case FI_EHOSTUNREACH: case FI_EHOSTDOWN: case FI_ENETUNREACH: case FI_ENETDOWN: case FI_ESHUTDOWN:
    case FI_EADDRNOTAVAIL: case FI_ETIMEDOUT:
        return true;
    default:
        return false;
    }
}

/* One attempt to post the record's operation. */
static ssize_t post_once(ofi_ctx_t *c, const ofi_peer_t *p, ofi_op_t *o, bool write, const span_t *s,
                         uint64_t flags)
{
    struct iovec iov = {s->buf, s->len};
    void *desc = s->desc;
    struct fi_rma_iov rma = {s->raddr, s->len, s->key};
    struct fi_msg_rma msg = {&iov, &desc, 1, p->addr, &rma, 1, o, s->data};
    return write ? fi_writemsg(c->ep, &msg, flags | FI_COMPLETION)
                 : fi_readmsg(c->ep, &msg, flags | FI_COMPLETION);
}

/* A write posted or queued: counted until it completes. */
static void issued(ofi_net_t *n, ofi_peer_t *p, const ofi_op_t *o, int sign)
{
    if (o->flags & OFI_OP_COUNTED) {
        n->outstanding += sign;
        p->inflight += sign;
    }
    if (o->flags & OFI_OP_BORROWED) {
        n->borrowed += sign;
        p->borrowed += sign;
    }
}

/* A post refused for another reason than a busy provider. */
static void post_failed(ofi_peer_t *p, ssize_t r)
{
    snprintf(p->why, sizeof p->why, "libfabric %s: %s", p->net->c->prov, p->net->c->lib->strerror((int)-r));
    p->failed = connection_error(r);
}

/* Posts the record's operation, retrying while the provider is busy (-FI_EAGAIN: a full queue,
 * a connection being made); the record is freed if it could not be posted. */
static rcoll_status_t post(ofi_net_t *n, ofi_peer_t *p, ofi_op_t *o, bool write, const span_t *s,
                           uint64_t flags, const char *what)
{
    ofi_ctx_t *c = n->c;
    rcoll_waiter_t w;
    rcoll_waiter_start(&w, n->v->wait);
    for (;;) {
        ssize_t r = post_once(c, p, o, write, s, flags);
        if (r == 0)
            break;
        rcoll_status_t st;
        if (r != -FI_EAGAIN) {
            post_failed(p, r);
            st = p->failed ? rcoll_ofi_gone(n, p, what)
                           : rcoll_view_error(n->v, RCOLL_ERR_SYSTEM, "%s: %s rank %d failed: %s",
                                              coll(n), what, p->rank, p->why);
        } else if (rcoll_ofi_peer_lost(n, p, &w)) {
            st = rcoll_ofi_gone(n, p, what);
        } else if ((st = rcoll_ofi_pause_net(n, &w)) != RCOLL_OK) {
            st = timed_out(n, p, what, st);
        }
        if (st != RCOLL_OK) {
            rcoll_ofi_op_free(c, o);
            return st;
        }
    }
    issued(n, p, o, 1);
    if (o->flags & OFI_OP_UNORDERED)
        p->unordered++;
    return RCOLL_OK;
}

/* ---- the queue of writes that wait for earlier ones to be delivered ---- */

/* Writes the provider does not keep in order: posted with FI_DELIVERY_COMPLETE, and what must
 * land after them waits for their completion. */
static bool needs_delivery(const ofi_ctx_t *c, size_t len)
{
    return c->order == OFI_ORDER_DELIVERY || (c->order == OFI_ORDER_WAW && len > c->max_waw);
}

/* A copy of the write, posted when everything before it to p has been delivered. */
static rcoll_status_t enqueue(ofi_net_t *n, ofi_peer_t *p, const void *src, size_t len, uint64_t raddr,
                              uint64_t key, uint64_t flags, const uint64_t *cq_data)
{
    ofi_ctx_t *c = n->c;
    bool deliver = needs_delivery(c, len);
    ofi_op_t *o = rcoll_ofi_op_new(n, p->rank, OFI_OP_COUNTED | (deliver ? OFI_OP_UNORDERED : 0));
    if (!o)
        return rcoll_ofi_no_memory(n);
    memcpy(o->buf, src, len);
    o->len = len;
    o->raddr = raddr;
    o->key = key;
    o->post_flags = flags | (deliver ? FI_DELIVERY_COMPLETE : 0) | (len <= c->inject ? FI_INJECT : 0) |
                    (cq_data ? FI_REMOTE_CQ_DATA : 0);
    o->cq_data = cq_data ? *cq_data : 0;
    o->queued = true;
    if (p->qtail)
        p->qtail->qnext = o;
    else
        p->qhead = o;
    p->qtail = o;
    n->queued++;
    issued(n, p, o, 1);
    if (!p->on_qlist) {
        p->on_qlist = true;
        p->qnext_peer = c->qpeers;
        c->qpeers = p;
    }
    return RCOLL_OK;
}

static ofi_op_t *dequeue(ofi_peer_t *p)
{
    ofi_op_t *o = p->qhead;
    p->qhead = o->qnext;
    if (!p->qhead)
        p->qtail = NULL;
    o->queued = false;
    o->qnext = NULL;
    p->net->queued--;
    return o;
}

/* Posts p's queued writes while nothing before them awaits delivery; a busy provider leaves
 * them for the next look. */
static void kick_peer(ofi_peer_t *p)
{
    ofi_net_t *n = p->net;
    while (p->qhead && p->failed) { /* what it would have waited for can no longer matter */
        ofi_op_t *o = dequeue(p);
        issued(n, p, o, -1);
        rcoll_ofi_op_free(n->c, o);
    }
    while (p->qhead && p->unordered == 0) {
        ofi_op_t *o = p->qhead;
        span_t s = {o->buf, o->len, o->desc, o->raddr, o->key, o->cq_data};
        ssize_t r = post_once(n->c, p, o, true, &s, o->post_flags);
        if (r == -FI_EAGAIN)
            return;
        dequeue(p);
        if (r == 0) {
            if (o->flags & OFI_OP_UNORDERED)
                p->unordered++;
            continue;
        }
        post_failed(p, r);
        p->failed = true; /* its waits end now: what it waits for from us cannot come */
        issued(n, p, o, -1);
        rcoll_ofi_op_free(n->c, o);
    }
}

void rcoll_ofi_kick(ofi_ctx_t *c)
{
    for (ofi_peer_t **pp = &c->qpeers; *pp;) {
        ofi_peer_t *p = *pp;
        kick_peer(p);
        if (p->qhead) {
            pp = &p->qnext_peer;
        } else {
            *pp = p->qnext_peer;
            p->on_qlist = false;
        }
    }
}

void rcoll_ofi_drop_queues(ofi_net_t *n)
{
    ofi_ctx_t *c = n->c;
    for (ofi_peer_t **pp = &c->qpeers; *pp;) {
        ofi_peer_t *p = *pp;
        if (p->net != n) {
            pp = &p->qnext_peer;
            continue;
        }
        *pp = p->qnext_peer;
        p->on_qlist = false;
        while (p->qhead) {
            ofi_op_t *o = dequeue(p);
            issued(n, p, o, -1);
            rcoll_ofi_op_free(c, o);
        }
    }
}

/* Until the record completes (copied out to dst when given, then freed); a wait that gives up
 * abandons the record to its completion. */
static rcoll_status_t wait_op(ofi_net_t *n, ofi_peer_t *p, ofi_op_t *o, void *dst, const char *what)
{
    rcoll_waiter_t w;
    rcoll_waiter_start(&w, n->v->wait);
    rcoll_ofi_progress_ctx(n->c);
    rcoll_status_t st = RCOLL_OK;
    while (!o->done && st == RCOLL_OK) {
        if (rcoll_ofi_peer_lost(n, p, &w))
            st = rcoll_ofi_gone(n, p, what);
        else if ((st = rcoll_ofi_pause_net(n, &w)) != RCOLL_OK)
            st = timed_out(n, p, what, st);
    }
    if (st != RCOLL_OK) {
        o->abandoned = true;
        return st;
    }
    int err = o->err;
    if (!err && dst)
        memcpy(dst, o->buf, o->len);
    rcoll_ofi_op_free(n->c, o);
    if (err)
        return rcoll_view_error(n->v, RCOLL_ERR_PEER_DEAD, "%s: %s rank %d failed (%s)", coll(n), what,
                                p->rank, p->why);
    return RCOLL_OK;
}

/* Until every write to p posted with FI_DELIVERY_COMPLETE has been delivered and none waits in
 * its queue. */
static rcoll_status_t drain_peer(ofi_net_t *n, ofi_peer_t *p, const char *what)
{
    if (!p->unordered && !p->qhead)
        return RCOLL_OK;
    rcoll_waiter_t w;
    rcoll_waiter_start(&w, n->v->wait);
    rcoll_ofi_progress_ctx(n->c);
    while (p->unordered > 0 || p->qhead) {
        if (rcoll_ofi_peer_lost(n, p, &w))
            return rcoll_ofi_gone(n, p, what);
        rcoll_status_t st = rcoll_ofi_pause_net(n, &w);
        if (st != RCOLL_OK)
            return timed_out(n, p, what, st);
    }
    return RCOLL_OK;
}

/* Every write that reads the caller's buffer (put_user: zero copy) has completed, and every
 * queued write has been posted: nothing of this call waits for this rank's later calls.
 * Copies and injected data have left the caller's buffer already; queued writes to a peer found
 * gone are dropped (nobody will wait for them), not reported: the wait that found it says so. */
rcoll_status_t rcoll_ofi_quiet(rcoll_net_t *nn)
{
    ofi_net_t *n = (ofi_net_t *)nn;
    rcoll_waiter_t w;
    rcoll_waiter_start(&w, n->v->wait);
    if (n->borrowed || n->queued)
        rcoll_ofi_progress_ctx(n->c);
    while (n->borrowed > 0 || n->queued > 0) {
        ofi_peer_t *late = NULL;
        for (int r = 0; r < n->v->size; r++) {
            ofi_peer_t *p = &n->peer[r];
            if (p->inflight <= 0)
                continue;
            if (rcoll_ofi_peer_lost(n, p, &w)) {
                kick_peer(p); /* drops its queue */
                if (p->borrowed > 0)
                    return rcoll_ofi_gone(n, p, "write to");
                continue;
            }
            late = late && late->qhead ? late : p;
        }
        if (!n->borrowed && !n->queued)
            break;
        rcoll_status_t st = rcoll_ofi_pause_net(n, &w);
        if (st != RCOLL_OK && late)
            return timed_out(n, late, "write to", st);
        if (st != RCOLL_OK)
            return rcoll_view_error(n->v, st, "%s: %ld writes did not complete in time", coll(n),
                                    n->borrowed + n->queued);
    }
    return RCOLL_OK;
}

/* ---- local registrations (FI_MR_LOCAL) ---- */

static rcoll_status_t free_local_reg(ofi_net_t *n, rcoll_reg_entry_t **slot)
{
    for (int i = 0; i < OFI_LOCAL_REGS; i++)
        if (!n->local_reg[i].used) {
            *slot = &n->local_reg[i];
            return RCOLL_OK;
        }
    /* All held by this call: once every write has left its source none is in use. */
    rcoll_status_t st = rcoll_ofi_quiet(&n->base);
    for (int i = 0; st == RCOLL_OK && i < OFI_LOCAL_REGS; i++)
        rcoll_regcache_release_call(&n->c->cache, &n->local_reg[i]);
    *slot = &n->local_reg[0];
    return st;
}

/* The descriptor a local buffer needs where the provider wants local buffers registered. */
static rcoll_status_t local_desc(ofi_net_t *n, const void *addr, size_t len, void **desc)
{
    ofi_ctx_t *c = n->c;
    *desc = NULL;
    if (!(c->mr_mode & FI_MR_LOCAL) || !len)
        return RCOLL_OK;
    uintptr_t a = (uintptr_t)addr, area = (uintptr_t)n->area;
    if (n->area_mr && a >= area && a + len <= area + n->area_bytes) {
        *desc = n->area_desc;
        return RCOLL_OK;
    }
    const rcoll_reg_entry_t *e = rcoll_regcache_find(&c->cache, &n->call_reg, (void *)addr, len);
    for (int i = 0; !e && i < OFI_LOCAL_REGS; i++)
        e = rcoll_regcache_find(&c->cache, &n->local_reg[i], (void *)addr, len);
    if (!e) {
        rcoll_reg_entry_t *slot;
        rcoll_status_t st = free_local_reg(n, &slot);
        if (st != RCOLL_OK)
            return st;
        rcoll_net_advert_t adv;
        char err[160];
        st = rcoll_regcache_get(&c->cache, slot, (void *)addr, len, &adv, err, sizeof err);
        if (st != RCOLL_OK)
            return rcoll_view_error(n->v, st, "%s: registering %zu local bytes failed: %s", coll(n),
                                    len, err);
        e = rcoll_regcache_find(&c->cache, slot, (void *)addr, len);
        if (!e)
            return rcoll_view_error(n->v, RCOLL_ERR_SYSTEM, "%s: a registration of %zu local bytes "
                                    "vanished", coll(n), len);
    }
    *desc = fi_mr_desc((struct fid_mr *)e->handle);
    return RCOLL_OK;
}

/* ---- writes ---- */

static rcoll_status_t write_span(ofi_net_t *n, ofi_peer_t *p, const void *src, size_t len,
                                 uint64_t raddr, uint64_t key, bool signal, bool keep_src,
                                 const uint64_t *cq_data, const char *what);

/* First contact: the peer's hello word rises, so that it knows at team destruction that this
 * rank waits for its goodbye (contacted). */
static rcoll_status_t contact(ofi_net_t *n, ofi_peer_t *p)
{
    if (p->failed)
        return rcoll_ofi_gone(n, p, NULL);
    if (p->contacted)
        return RCOLL_OK;
    p->contacted = true;
    if (!n->hello_off)
        return RCOLL_OK;
    uint64_t one = 1;
    return write_span(n, p, &one, sizeof one, area_raddr(n, p, n->hello_off), p->area_key, true, false,
                      NULL, "hello to");
}

/* One piece (at most max_msg bytes): injected, copied into the record, or from src (waited for
 * unless the source stays until quiet); with remote CQ data when cq_data is not NULL. */
static rcoll_status_t write_piece(ofi_net_t *n, ofi_peer_t *p, const void *src, size_t len,
                                  uint64_t raddr, uint64_t key, uint64_t flags, bool keep_src,
                                  const uint64_t *cq_data, const char *what)
{
    ofi_ctx_t *c = n->c;
    unsigned of = OFI_OP_COUNTED;
    if (needs_delivery(c, len)) {
        of |= OFI_OP_UNORDERED;
        flags |= FI_DELIVERY_COMPLETE;
    }
    bool inject = len <= c->inject, copy = !inject && !keep_src && len <= OFI_OP_BUF;
    bool wait = !inject && !copy && !keep_src;
    if (!inject && !copy && keep_src)
        of |= OFI_OP_BORROWED;
    void *desc = NULL;
    if (!inject && !copy) {
        rcoll_status_t st = local_desc(n, src, len, &desc);
        if (st != RCOLL_OK)
            return st;
    }
    ofi_op_t *o = rcoll_ofi_op_new(n, p->rank, of | (wait ? OFI_OP_KEEP : 0));
    if (!o)
        return rcoll_ofi_no_memory(n);
    if (inject)
        flags |= FI_INJECT;
    if (copy) {
        memcpy(o->buf, src, len);
        src = o->buf;
        desc = o->desc;
    }
    span_t s = {(void *)src, len, desc, raddr, key, cq_data ? *cq_data : 0};
    if (cq_data)
        flags |= FI_REMOTE_CQ_DATA;
    rcoll_status_t st = post(n, p, o, true, &s, flags, what);
    if (st != RCOLL_OK || !wait)
        return st;
    return wait_op(n, p, o, NULL, what);
}

/* len bytes from src to raddr in p. A signal (and the first write after fence) lands after
 * everything written to p before it: free under WAW ordering, FI_FENCE under fence ordering, else
 * queued behind what is not yet delivered (see the top of ofi.c). keep_src: src stays unchanged
 * until quiet (zero copy, no wait), else it is free on return. cq_data (a signal): remote CQ
 * data on the last piece (queued with it), or alone on an empty write when len is 0. */
static rcoll_status_t write_span(ofi_net_t *n, ofi_peer_t *p, const void *src, size_t len,
                                 uint64_t raddr, uint64_t key, bool signal, bool keep_src,
                                 const uint64_t *cq_data, const char *what)
{
    ofi_ctx_t *c = n->c;
    rcoll_status_t st = contact(n, p);
    if (st != RCOLL_OK || (!len && !cq_data))
        return st;
    bool after = signal || p->fence_next;
    p->fence_next = false;
    uint64_t flags = after && c->order == OFI_ORDER_FENCE ? FI_FENCE : 0;
    if (after && (p->unordered > 0 || p->qhead)) {
        if (len <= OFI_OP_BUF && len <= c->max_msg)
            return enqueue(n, p, src, len, raddr, key, flags, cq_data);
        if ((st = drain_peer(n, p, what)) != RCOLL_OK) /* a large one waits for its turn */
            return st;
    }
    const unsigned char *s = src;
    size_t done = 0;
    do { /* once at least: a signal as CQ data may carry no data */
        size_t piece = len - done < c->max_msg ? len - done : c->max_msg;
        st = write_piece(n, p, s + done, piece, raddr + done, key, flags, keep_src,
                         done + piece == len ? cq_data : NULL, what);
        flags = 0; /* the ones after a fenced write wait behind it */
        done += piece;
    } while (done < len && st == RCOLL_OK);
    return st;
}

/* Where key (a word index + 1) is in table t of cap entries (a power of 2, never full), or the
 * empty entry where it would go. */
static ofi_sent_t *sent_probe(ofi_sent_t *t, uint32_t cap, uint32_t key)
{
    uint32_t h = key * 2654435761u;
    while (t[h & (cap - 1)].word && t[h & (cap - 1)].word != key)
        h++;
    return &t[h & (cap - 1)];
}

/* p's entry for signal word `word`, inserted if new (NULL: no room, and the word not there). The
 * table grows to stay at most half full. */
static ofi_sent_t *sent_entry(ofi_peer_t *p, uint32_t word)
{
    if (2 * (p->sent_used + 1) > p->sent_cap) {
        uint32_t cap = p->sent_cap ? 2 * p->sent_cap : 16;
        ofi_sent_t *t = calloc(cap, sizeof *t);
        if (t) {
            for (uint32_t i = 0; i < p->sent_cap; i++)
                if (p->sent[i].word)
                    *sent_probe(t, cap, p->sent[i].word) = p->sent[i];
            free(p->sent);
            p->sent = t;
            p->sent_cap = cap;
        }
    }
    if (!p->sent_cap)
        return NULL;
    ofi_sent_t *e = sent_probe(p->sent, p->sent_cap, word + 1);
    if (!e->word) {
        if (2 * (p->sent_used + 1) > p->sent_cap)
            return NULL; /* the table could not grow */
        p->sent_used++;
        e->word = word + 1;
    }
    return e;
}

/* Whether the signal goes as remote CQ data (see the top of ofi.c): the peer can rebuild the
 * value from its word, which holds what this rank last raised it to (remembered here, never
 * forgotten: once a word has had a signal as CQ data, every later one goes so too, so that no
 * plain write overtakes an entry still in the peer's queue) and at most OFI_STEP_MAX below.
 * Remembers value either way; *data: the CQ data. */
static bool cq_signal(ofi_peer_t *p, size_t signal_off, uint64_t value, uint64_t *data)
{
    size_t word = signal_off / sizeof(uint64_t);
    if (!p->cq_data || signal_off % sizeof(uint64_t) || word >= (1u << OFI_WORD_BITS))
        return false;
    ofi_sent_t *e = sent_entry(p, (uint32_t)word);
    if (!e)
        return false; /* a new word (never sent as CQ data): a plain write is safe */
    bool known = e->value && value >= e->value && value - e->value <= OFI_STEP_MAX;
    e->value = value;
    *data = (uint64_t)p->slot << (64 - OFI_SLOT_BITS) | (uint64_t)word << OFI_VALUE_BITS |
            (value & OFI_VALUE_MASK);
    return known;
}

/* With its signal as CQ data, data that goes in one piece carries it (the piece lands whole
 * before its completion); longer data goes first and an empty write carries the signal after
 * it. Otherwise the signal word goes by a second write. */
rcoll_status_t rcoll_ofi_write(rcoll_net_t *nn, int peer, const void *src, size_t len, size_t area_off,
                               size_t signal_off, uint64_t value)
{
    ofi_net_t *n = (ofi_net_t *)nn;
    ofi_peer_t *p = &n->peer[peer];
    rcoll_status_t st = contact(n, p);
    uint64_t data;
    bool signal = signal_off != RCOLL_NET_NO_SIGNAL;
    bool as_cq = st == RCOLL_OK && signal && cq_signal(p, signal_off, value, &data);
    if (as_cq && len <= n->c->max_msg)
        return write_span(n, p, src, len, area_raddr(n, p, len ? area_off : signal_off), p->area_key,
                          true, false, &data, "write to");
    if (st == RCOLL_OK && len)
        st = write_span(n, p, src, len, area_raddr(n, p, area_off), p->area_key, false, false,
                        NULL, "write to");
    if (st == RCOLL_OK && signal)
        st = write_span(n, p, &value, as_cq ? 0 : sizeof value, area_raddr(n, p, signal_off),
                        p->area_key, true, false, as_cq ? &data : NULL, "write to");
    return st;
}

/* A transfer that would pass the end of what the peer advertised: refused, with why. */
static rcoll_status_t beyond(ofi_net_t *n, const char *what, size_t len, size_t offset,
                             const rcoll_net_advert_t *adv, int peer)
{
    return rcoll_view_error(n->v, RCOLL_ERR_INVALID, "%s: %s of %zu bytes at %zu beyond the %llu "
                            "bytes rank %d advertised", coll(n), what, len, offset,
                            (unsigned long long)adv->len, peer);
}

/* The start and usable key of the buffer the peer advertised. */
static rcoll_status_t user_key(ofi_net_t *n, ofi_peer_t *p, const rcoll_net_advert_t *adv,
                               uint64_t *start, uint64_t *key)
{
    ofi_ctx_t *c = n->c;
    if (!adv->id)
        return rcoll_view_error(n->v, RCOLL_ERR_INVALID, "%s: rank %d advertised no registered buffer",
                                coll(n), p->rank);
    bool mapped = false;
    if (!(c->mr_mode & FI_MR_RAW)) {
        if (rcoll_ofi_unpack_key(c, adv->key, adv->key_len, start, key, &mapped) == 0)
            return RCOLL_OK;
    } else if (p->user_id == adv->id) {
        *start = p->user_base;
        *key = p->user_key;
        return RCOLL_OK;
    } else {
        if (p->user_id)
            fi_mr_unmap_key(c->domain, p->user_key);
        p->user_id = 0;
        if (rcoll_ofi_unpack_key(c, adv->key, adv->key_len, &p->user_base, &p->user_key, &mapped) == 0) {
            p->user_id = adv->id;
            *start = p->user_base;
            *key = p->user_key;
            return RCOLL_OK;
        }
    }
    return rcoll_view_error(n->v, RCOLL_ERR_SYSTEM, "%s: the key of rank %d's buffer is unusable here",
                            coll(n), p->rank);
}

void rcoll_ofi_forget_keys(ofi_net_t *n)
{
    for (int r = 0; n->peer && r < n->v->size; r++)
        if (n->peer[r].user_id && (n->c->mr_mode & FI_MR_RAW))
            fi_mr_unmap_key(n->c->domain, n->peer[r].user_key);
}

rcoll_status_t rcoll_ofi_put_user(rcoll_net_t *nn, int peer, const void *src, size_t len,
                                  const rcoll_net_advert_t *adv, size_t offset)
{
    ofi_net_t *n = (ofi_net_t *)nn;
    ofi_peer_t *p = &n->peer[peer];
    if (!len)
        return RCOLL_OK;
    if (offset > adv->len || len > adv->len - offset)
        return beyond(n, "write", len, offset, adv, peer);
    uint64_t start, key;
    rcoll_status_t st = user_key(n, p, adv, &start, &key);
    if (st != RCOLL_OK)
        return st;
    return write_span(n, p, src, len, rcoll_ofi_raddr(n->c, start, adv->addr + offset), key, false,
                      true, NULL, "write to");
}

rcoll_status_t rcoll_ofi_send_user(rcoll_net_t *nn, int peer, const void *src, size_t len,
                                   size_t line_off, size_t adv_off, uint64_t seq, size_t offset,
                                   size_t signal_off, uint64_t value)
{
    ofi_net_t *n = (ofi_net_t *)nn;
    (void)src, (void)len, (void)line_off, (void)adv_off, (void)seq, (void)offset;
    (void)signal_off, (void)value;
    return rcoll_view_error(n->v, RCOLL_ERR_UNSUPPORTED, "%s: single copy by message to rank %d: the "
                            "ofi channel puts into advertised buffers (puts_by_message is false)",
                            coll(n), peer);
}

/* Nothing is ever held: single copies are RMA writes (see send_user). */
void rcoll_ofi_deliver_held(rcoll_net_t *nn) { (void)nn; }

/* The next write to the peer lands after every put before it (see write_span). */
rcoll_status_t rcoll_ofi_fence(rcoll_net_t *nn, int peer)
{
    ofi_net_t *n = (ofi_net_t *)nn;
    ofi_peer_t *p = &n->peer[peer];
    if (p->contacted)
        p->fence_next = true;
    return RCOLL_OK;
}

/* ---- reads ---- */

static rcoll_status_t read_span(ofi_net_t *n, ofi_peer_t *p, void *dst, size_t len, uint64_t raddr,
                                uint64_t key, const char *what)
{
    ofi_ctx_t *c = n->c;
    rcoll_status_t st = contact(n, p);
    unsigned char *d = dst;
    for (size_t done = 0; st == RCOLL_OK && done < len;) {
        size_t piece = len - done < c->max_msg ? len - done : c->max_msg;
        bool small = piece <= OFI_OP_BUF; /* lands in the record, copied out once complete */
        void *desc = NULL;
        if (!small && (st = local_desc(n, d + done, piece, &desc)) != RCOLL_OK)
            return st;
        ofi_op_t *o = rcoll_ofi_op_new(n, p->rank, OFI_OP_KEEP);
        if (!o)
            return rcoll_ofi_no_memory(n);
        o->len = piece;
        span_t s = {small ? o->buf : d + done, piece, small ? o->desc : desc, raddr + done, key, 0};
        st = post(n, p, o, false, &s, 0, what);
        if (st == RCOLL_OK)
            st = wait_op(n, p, o, small ? d + done : NULL, what);
        done += piece;
    }
    return st;
}

rcoll_status_t rcoll_ofi_get(rcoll_net_t *nn, int peer, void *dst, size_t len, size_t area_off)
{
    ofi_net_t *n = (ofi_net_t *)nn;
    ofi_peer_t *p = &n->peer[peer];
    return read_span(n, p, dst, len, area_raddr(n, p, area_off), p->area_key, "read from");
}

rcoll_status_t rcoll_ofi_get_user(rcoll_net_t *nn, int peer, void *dst, size_t len,
                                  const rcoll_net_advert_t *adv, size_t offset)
{
    ofi_net_t *n = (ofi_net_t *)nn;
    ofi_peer_t *p = &n->peer[peer];
    if (!len)
        return RCOLL_OK;
    if (offset > adv->len || len > adv->len - offset)
        return beyond(n, "read", len, offset, adv, peer);
    uint64_t start, key;
    rcoll_status_t st = user_key(n, p, adv, &start, &key);
    if (st != RCOLL_OK)
        return st;
    return read_span(n, p, dst, len, rcoll_ofi_raddr(n->c, start, adv->addr + offset), key, "read from");
}

int rcoll_ofi_poll(rcoll_net_t *nn, int peer, void *dst, size_t len, size_t area_off)
{
    ofi_net_t *n = (ofi_net_t *)nn;
    ofi_peer_t *p = &n->peer[peer];
    if (len > RCOLL_NET_POLL_MAX || len > OFI_OP_BUF)
        return RCOLL_ERR_INVALID;
    if (!p->poll) {
        rcoll_status_t st = contact(n, p);
        if (st != RCOLL_OK)
            return st;
        ofi_op_t *o = rcoll_ofi_op_new(n, peer, OFI_OP_KEEP | OFI_OP_POLL);
        if (!o)
            return rcoll_ofi_no_memory(n);
        o->len = len;
        o->off = area_off;
        span_t s = {o->buf, len, o->desc, area_raddr(n, p, area_off), p->area_key, 0};
        if ((st = post(n, p, o, false, &s, 0, "read from")) != RCOLL_OK)
            return st;
        p->poll = o;
    }
    rcoll_ofi_progress_ctx(n->c);
    ofi_op_t *o = p->poll;
    if (!o->done)
        return p->failed ? rcoll_ofi_gone(n, p, NULL) : 0;
    p->poll = NULL;
    bool same = o->len == len && o->off == area_off; /* else a read of something else: discarded */
    int err = o->err;
    if (!err && same)
        memcpy(dst, o->buf, len);
    rcoll_ofi_op_free(n->c, o);
    if (err) /* the peer may just have left: not a verdict on it */
        return rcoll_view_error(n->v, RCOLL_ERR_PEER_DEAD, "%s: read from rank %d failed (%s)", coll(n),
                                peer, p->why);
    return same ? 1 : 0;
}

/* ---- registration of user buffers ---- */

rcoll_status_t rcoll_ofi_reg(rcoll_net_t *nn, void *addr, size_t len, rcoll_net_advert_t *out)
{
    ofi_net_t *n = (ofi_net_t *)nn;
    char err[160];
    rcoll_status_t st = rcoll_regcache_get(&n->c->cache, &n->call_reg, addr, len, out, err, sizeof err);
    if (st != RCOLL_OK)
        return rcoll_view_error(n->v, st, "%s: registering %zu bytes failed: %s", coll(n), len, err);
    return RCOLL_OK;
}

void rcoll_ofi_release_registrations(rcoll_net_t *nn)
{
    ofi_net_t *n = (ofi_net_t *)nn;
    rcoll_regcache_release_call(&n->c->cache, &n->call_reg);
    for (int i = 0; i < OFI_LOCAL_REGS; i++)
        rcoll_regcache_release_call(&n->c->cache, &n->local_reg[i]);
}
