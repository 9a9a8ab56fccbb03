/* The UCX channel's receiving side (ucx.h): what peers' active messages do in this process.
 *
 * A write (AM_WRITE) lands in one of this process's live team areas, data first, then the
 * signal word it names raised (words only rise). A single copy by message (AM_PUT_USER, where
 * UCX emulates RMA) goes into the buffer its receiver advertised for that collective: at once
 * if the receiver has entered it, held in arrival order until it does if it came early (a copy
 * when small; from RNDV_MIN UCX's rendezvous descriptor only, UCX then placing the data), and
 * dropped if the receiver has already left it. Messages for a team already destroyed here (a
 * peer's last words) are dropped. */
#include "net/ucx/ucx.h"

#include <stdlib.h>
#include <string.h>

/* [addr, addr+len) lies in the area of a team alive in this process. */
static bool in_live_area(const ucx_ctx_t *c, uint64_t addr, size_t len)
{
    for (int i = 0; i < c->nareas; i++)
        if (addr >= c->areas[i].start && addr + len <= c->areas[i].end && addr + len >= addr)
            return true;
    return false;
}

/* Signal words only rise: a single copy held until its receiver entered may land after a later
 * signal of the same sender (for a collective ahead, on the same slot of the ring) came. */
static void raise_signal(uint64_t signal, uint64_t value)
{
    if (!signal)
        return;
    _Atomic uint64_t *word = (_Atomic uint64_t *)(uintptr_t)signal;
    uint64_t seen = atomic_load_explicit(word, memory_order_relaxed);
    while (seen < value && !atomic_compare_exchange_weak_explicit(word, &seen, value, memory_order_release,
                                                                   memory_order_relaxed))
        ;
}

/* A peer's write (see the top): sent eager, so the data is here, whole, in this call. */
ucs_status_t ucx_am_write(void *arg, const void *header, size_t header_length, void *data,
                          size_t length, const ucp_am_recv_param_t *param)
{
    ucx_ctx_t *c = arg;
    (void)param;
    am_write_t h;
    if (header_length != sizeof h)
        return UCS_OK;
    memcpy(&h, header, sizeof h);
    /* A late write for a team already destroyed here (a peer's last words) is dropped. */
    if ((length && !in_live_area(c, h.dst, length)) ||
        (h.signal && !in_live_area(c, h.signal, sizeof(uint64_t))))
        return UCS_OK;
    if (length)
        memcpy((void *)(uintptr_t)h.dst, data, length);
    raise_signal(h.signal, h.value);
    return UCS_OK;
}

static void landed(void *request, ucs_status_t status, size_t length, void *user_data)
{
    (void)length;
    landing_t *l = user_data;
    if (status == UCS_OK)
        raise_signal(l->signal, l->value);
    free(l);
    ucp_request_free(request);
}

/* Delivers a message whose receiver has entered h->seq: small data is here, large data is
 * received by UCX into the buffer (rendezvous; over tcp UCX 1.13 still reads it into its own
 * segment and copies it, docs/tuning.md); the signal follows once it has landed.
 * Returns false (nothing done) if it does not fit what was advertised: a sender that computed
 * other offsets than this rank, whose wait then names it at the timeout. */
static bool deliver(ucx_ctx_t *c, const am_user_t *h, void *data, size_t length, bool rndv)
{
    const rcoll_net_advert_t *a = (const rcoll_net_advert_t *)(uintptr_t)h->adv;
    if (h->offset + length > a->len || h->offset + length < h->offset)
        return false;
    void *dst = (void *)(uintptr_t)(a->addr + h->offset);
    if (!rndv) {
        if (length)
            memcpy(dst, data, length);
        raise_signal(h->signal, h->value);
        return true;
    }
    landing_t *l = malloc(sizeof *l);
    if (!l)
        return false; /* the sender's wait then fails at its timeout */
    l->signal = h->signal;
    l->value = h->value;
    ucp_request_param_t prm;
    memset(&prm, 0, sizeof prm);
    prm.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    prm.cb.recv_am = landed;
    prm.user_data = l;
    ucs_status_ptr_t r = ucp_am_recv_data_nbx(c->worker, data, dst, length, &prm);
    if (!UCS_PTR_IS_PTR(r)) {
        if (r == NULL)
            raise_signal(l->signal, l->value);
        free(l);
    }
    return true;
}

/* Where a message for h->seq stands: < 0 for a collective already left (or a team gone), 0 not
 * yet entered, > 0 entered. */
static int receiver_state(const ucx_ctx_t *c, const am_user_t *h)
{
    if (!in_live_area(c, h->line, sizeof(uint64_t)) ||
        !in_live_area(c, h->adv, sizeof(rcoll_net_advert_t)) ||
        (h->signal && !in_live_area(c, h->signal, sizeof(uint64_t))))
        return -1;
    uint64_t entered = atomic_load_explicit((_Atomic uint64_t *)(uintptr_t)h->line, memory_order_acquire);
    return entered == h->seq ? 1 : entered < h->seq ? 0 : -1;
}

static void release_held(ucx_ctx_t *c, parked_t *p, bool delivered)
{
    if (!p->rndv)
        free(p->data);
    else if (!delivered)
        ucp_am_data_release(c->worker, p->data);
    free(p);
}

/* Keeps a message that came before its receiver entered, in arrival order: a copy of small
 * data, or UCX's rendezvous descriptor (UCS_INPROGRESS: UCX keeps it for us). */
static ucs_status_t hold(ucx_ctx_t *c, const am_user_t *h, void *data, size_t length, bool rndv)
{
    parked_t *p = calloc(1, sizeof *p);
    void *copy = rndv || !length ? NULL : malloc(length);
    if (!p || (!rndv && length && !copy)) {
        free(p);
        free(copy);
        return UCS_OK; /* out of memory: the sender's wait fails at its timeout */
    }
    if (copy)
        memcpy(copy, data, length);
    p->h = *h;
    p->length = length;
    p->rndv = rndv;
    p->data = rndv ? data : copy;
    *c->parked_tail = p;
    c->parked_tail = &p->next;
    return rndv ? UCS_INPROGRESS : UCS_OK;
}

/* A peer's single copy into my advertised buffer for collective h.seq. The sender does not
 * wait for my advertisement (over an emulated-RMA transport each look at it is a round trip my
 * worker must answer): a message that comes before I have entered h.seq is held and delivered
 * when I enter (ucx_deliver_held). One for a collective I have left is dropped. */
ucs_status_t ucx_am_put_user(void *arg, const void *header, size_t header_length, void *data,
                             size_t length, const ucp_am_recv_param_t *param)
{
    ucx_ctx_t *c = arg;
    am_user_t h;
    if (header_length != sizeof h)
        return UCS_OK;
    memcpy(&h, header, sizeof h);
    bool rndv = param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV;
    int state = receiver_state(c, &h);
    if (state == 0)
        return hold(c, &h, data, length, rndv);
    if (state > 0)
        deliver(c, &h, data, length, rndv);
    return UCS_OK;
}

void ucx_deliver_held(rcoll_net_t *n)
{
    ucx_net_t *u = (ucx_net_t *)n;
    ucx_ctx_t *c = u->c;
    parked_t **pp = &c->parked;
    while (*pp) {
        parked_t *p = *pp;
        int state = receiver_state(c, &p->h);
        if (state == 0) {
            pp = &p->next;
            continue;
        }
        bool delivered = state > 0 && deliver(c, &p->h, p->data, p->length, p->rndv);
        *pp = p->next;
        release_held(c, p, delivered);
    }
    c->parked_tail = pp;
}

void ucx_drop_held(ucx_ctx_t *c)
{
    while (c->parked) {
        parked_t *p = c->parked;
        c->parked = p->next;
        release_held(c, p, false);
    }
    c->parked_tail = &c->parked;
}
