/* The UCX network channel (net/net.h) over UCP: context, worker, endpoints and operations;
 * the receiving side of its active messages is held.c.
 *
 * Writes into a peer's area (copy-path data, inline data, signal words) go as one UCP active
 * message each, eager, carrying the destination address, the data and the signal word to
 * raise after it: the receiving worker's handler copies the data and then stores the signal
 * (release order), so data and signal arrive together, in order, in one message -- stronger
 * than put + ucp_worker_fence + put, and half the messages where UCX emulates RMA with active
 * messages itself (its tcp transport answers every put with a completion message). Large
 * single-copy transfers into user buffers go by RMA put (ucp_put_nbx, zero copy where the
 * transport has it); the signal after them waits for their remote completion (an endpoint
 * flush on every rail used), which also orders the rails of a striped transfer.
 *
 * Where UCX emulates RMA (its tcp transport) a single copy is one active message instead, sent
 * at once, without first reading the receiver's advertisement (that read would be a round trip
 * the receiver's worker must answer, and an arrival-ordered sweep repeats it until the peer
 * has come: ~120 us per collective at np=4). The receiver places it if it has entered that
 * collective, holds it until it does otherwise (a copy when small; from 64 KB the rendezvous
 * request only, UCX then placing the data in the buffer), and signal words only rise, so
 * a held message that lands after a later signal of its sender cannot pull the word back.
 *
 * Striping (RCOLL_RAILS=k, from RCOLL_RAIL_MIN = 64 KB on): the transfer is cut into k parts of
 * equal size rounded up to 4 KB (the last one shorter), part i on rail i. Each rail is its own
 * UCP endpoint to the peer's worker, with its own connection(s); UCX spreads each endpoint's
 * lanes over the devices UCX_NET_DEVICES allows.
 *
 * User buffers are registered (ucp_mem_map, key packed with ucp_rkey_pack) through the
 * registration cache every channel shares (net/regcache.h). */
#include "net/ucx/ucx.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- context ---- */

static void ucx_ctx_destroy(ucx_ctx_t *c)
{
    if (!c)
        return;
    rcoll_regcache_fini(&c->cache);
    ucx_drop_held(c);
    free(c->areas);
    if (c->worker) { /* closed endpoints' leftovers (UCX discards them in the background) */
        uint64_t until = rcoll_now_ns() + 200000000ull;
        for (int idle = 0; idle < 5 && rcoll_now_ns() < until;) {
            if (ucp_worker_progress(c->worker)) {
                idle = 0;
            } else {
                idle++;
                usleep(1000);
            }
        }
        ucp_worker_destroy(c->worker);
    }
    if (c->context)
        ucp_cleanup(c->context);
    free(c);
}

/* UCX_TLS naming only shared-memory transports (sm, shm, posix, sysv, cma, knem, xpmem,
 * self): none of them reports a peer gone, and UCX would refuse (and log) the first endpoint
 * asking for that. */
static bool shared_memory_only(void)
{
    const char *tls = getenv("UCX_TLS");
    if (!tls || !*tls || tls[0] == '^')
        return false;
    static const char *const sm[] = {"sm", "shm", "posix", "sysv", "cma", "knem", "xpmem", "self", "mm"};
    char copy[256];
    snprintf(copy, sizeof copy, "%s", tls);
    char *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        bool known = false;
        for (size_t i = 0; i < sizeof sm / sizeof sm[0]; i++)
            known |= strcmp(t, sm[i]) == 0;
        if (!known)
            return false;
    }
    return true;
}

/* RCOLL_UCX_PUT=am|rma (parsed in config.c), or by UCX_TLS: tcp without an RDMA transport
 * means UCX emulates RMA with messages (each put answered by a completion, a flush a round
 * trip), and a single copy goes better as one active message that UCX places in the buffer. */
static bool rma_emulated(const rcoll_config_t *cfg)
{
    if (cfg->ucx_put != RCOLL_UCX_PUT_AUTO)
        return cfg->ucx_put == RCOLL_UCX_PUT_AM;
    const char *tls = getenv("UCX_TLS");
    if (!tls || !strstr(tls, "tcp") || tls[0] == '^')
        return false;
    static const char *const rdma[] = {"rc", "dc", "ud", "ib", "mlx", "verbs", "all"};
    for (size_t i = 0; i < sizeof rdma / sizeof rdma[0]; i++)
        if (strstr(tls, rdma[i]))
            return false;
    return true;
}

static int reg_map(void *arg, uintptr_t start, uintptr_t end, void **handle, unsigned char *key,
                   uint32_t *key_len, char *err, size_t err_len);
static void reg_unmap(void *arg, void *handle);

/* UCX_TLS lets UCX use its tcp transport (a setting for it would otherwise be reported unused). */
static bool tcp_in_use(void)
{
    const char *tls = getenv("UCX_TLS");
    if (!tls || !*tls || tls[0] == '^')
        return !tls || !strstr(tls, "tcp");
    return strstr(tls, "tcp") || strstr(tls, "all");
}

static rcoll_status_t ctx_create(const rcoll_view_t *v, ucx_ctx_t **out)
{
    ucx_ctx_t *c = calloc(1, sizeof *c);
    if (!c)
        return rcoll_view_error(v, RCOLL_ERR_NOMEM, "ucx transport: out of memory");
    c->parked_tail = &c->parked;
    /* UCX's tcp transport moves data in segments of 8 KB by default: every large message then
     * costs a system call per 8 KB on each side. 2 MB segments (unless the user chose) made
     * allgather over UCX tcp at np=4 0.5-0.65x Open MPI's tcp from 32 KB to 1 MB, against
     * 0.7-1.0x up to 128 KB and 2.6-3.5x beyond with 8 KB (256 KB and 1 MB segments: slow just
     * above the segment size; docs/tuning.md). Passed through UCX's own configuration of this
     * context only (never the environment); a value the user set in UCX_TCP_*_SEG_SIZE wins. */
    ucp_config_t *config;
    ucs_status_t us = ucp_config_read(NULL, NULL, &config);
    if (us == UCS_OK && tcp_in_use() && !getenv("UCX_TCP_TX_SEG_SIZE") && !getenv("UCX_TCP_RX_SEG_SIZE")) {
        /* Transport fields go by their bare name (UCX 1.13 warns of a "TCP_" one as unused). */
        us = ucp_config_modify(config, "TX_SEG_SIZE", "2m");
        if (us == UCS_OK)
            us = ucp_config_modify(config, "RX_SEG_SIZE", "2m");
    }
    if (us == UCS_OK) {
        ucp_params_t params;
        memset(&params, 0, sizeof params);
        params.field_mask = UCP_PARAM_FIELD_FEATURES;
        params.features = UCP_FEATURE_RMA | UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
        us = ucp_init(&params, config, &c->context);
        ucp_config_release(config);
    }
    if (us == UCS_OK) {
        ucp_worker_params_t wp;
        memset(&wp, 0, sizeof wp);
        wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
        wp.thread_mode = UCS_THREAD_MODE_SINGLE;
        us = ucp_worker_create(c->context, &wp, &c->worker);
    }
    if (us != UCS_OK) {
        ucx_ctx_destroy(c);
        return rcoll_view_error(v, RCOLL_ERR_SYSTEM, "ucx transport: UCP initialisation failed: %s",
                                ucs_status_string(us));
    }
    if (ucp_worker_get_efd(c->worker, &c->efd) != UCS_OK)
        c->efd = -1;
    ucp_am_handler_param_t am;
    memset(&am, 0, sizeof am);
    am.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                    UCP_AM_HANDLER_PARAM_FIELD_ARG;
    am.id = AM_WRITE;
    am.cb = ucx_am_write;
    am.arg = c;
    us = ucp_worker_set_am_recv_handler(c->worker, &am);
    if (us == UCS_OK) {
        am.id = AM_PUT_USER;
        am.cb = ucx_am_put_user;
        us = ucp_worker_set_am_recv_handler(c->worker, &am);
    }
    if (us != UCS_OK) {
        ucx_ctx_destroy(c);
        return rcoll_view_error(v, RCOLL_ERR_SYSTEM, "ucx transport: active messages: %s",
                                ucs_status_string(us));
    }
    c->no_peer_errors = shared_memory_only();
    c->puts_by_message = rma_emulated(v->cfg);
    rcoll_regcache_ops_t ops = {c, reg_map, reg_unmap};
    const char *why;
    rcoll_regcache_init(&c->cache, (unsigned)v->cfg->reg_cache, &ops, &why);
    if (why)
        rcoll_view_log(v, RCOLL_LOG_WARN, "ucx transport: %s: user buffers are registered per call "
                       "(no registration cache)", why);
    *out = c;
    return RCOLL_OK;
}

/* ---- requests ---- */

static rcoll_status_t set_error(ucx_net_t *u, rcoll_status_t st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static rcoll_status_t set_error(ucx_net_t *u, rcoll_status_t st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char msg[256];
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return rcoll_view_error(u->v, st, "%s", msg);
}

static void put_done(void *request, ucs_status_t status, void *user_data)
{
    peer_t *p = user_data;
    p->u->outstanding--;
    if (status != UCS_OK)
        p->failed = true;
    ucp_request_free(request);
}

static void op_done(void *request, ucs_status_t status, void *user_data)
{
    op_t *o = user_data;
    ucp_request_free(request);
    if (o->abandoned) {
        free(o);
        return;
    }
    o->status = status;
    o->done = 1;
}

static op_t *op_new(void)
{
    op_t *o = malloc(sizeof *o);
    if (o) {
        o->done = 0;
        o->status = UCS_OK;
        o->abandoned = false;
    }
    return o;
}

/* The caller is done with the record: free it, or leave it to its callback if UCX still has
 * the request. */
static void op_drop(op_t *o, bool pending)
{
    if (!o)
        return;
    if (pending && !o->done)
        o->abandoned = true;
    else
        free(o);
}

/* Parameters of a send-side operation completed through `cb` with `user_data`. */
static ucp_request_param_t send_param(ucp_send_nbx_callback_t cb, void *user_data)
{
    ucp_request_param_t prm;
    memset(&prm, 0, sizeof prm);
    prm.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    prm.cb.send = cb;
    prm.user_data = user_data;
    return prm;
}

static ucp_request_param_t op_param(op_t *o)
{
    return send_param(op_done, o);
}

static unsigned ucx_progress(rcoll_net_t *n)
{
    ucx_net_t *u = (ucx_net_t *)n;
    unsigned done = 0, k;
    while ((k = ucp_worker_progress(u->c->worker)))
        done += k;
    return done;
}

static unsigned ucx_look(rcoll_net_t *n)
{
    ucx_net_t *u = (ucx_net_t *)n;
    return ucp_worker_progress(u->c->worker);
}

static bool ucx_peer_failed(const rcoll_net_t *n, int peer)
{
    const ucx_net_t *u = (const ucx_net_t *)n;
    return u->peer[peer].failed;
}

static bool ucx_contacted(const rcoll_net_t *n, int peer)
{
    const ucx_net_t *u = (const ucx_net_t *)n;
    return u->peer[peer].ep && u->peer[peer].ep[0];
}

static rcoll_status_t rail_ready(ucx_net_t *u, peer_t *p, int rail);

/* Teams with at most this many ranks on other nodes connect to all of them at creation. */
#define EAGER_PEERS_MAX 64

/* First contact with every rank on another node now, while all of them are alive and inside
 * the team's creation: UCX 1.13's tcp transport asserts, and aborts the caller, when a
 * connection it starts is refused by a process that has just ended (tcp_ep.c:478; seen in
 * 2 of 40 runs of nb_nodes_caller_ucx's peer-failure case with lazy connections). Nothing is
 * waited for here: the connection and the hello complete as the ranks progress. Larger teams
 * connect at first contact, as MPI libraries do. */
static void ucx_hello_at(rcoll_net_t *n, size_t signal_off)
{
    ucx_net_t *u = (ucx_net_t *)n;
    u->hello_off = signal_off;
    int remote = 0;
    for (int r = 0; r < u->v->size; r++)
        remote += u->peer[r].remote;
    if (remote > EAGER_PEERS_MAX)
        return;
    for (int r = 0; r < u->v->size; r++)
        if (u->peer[r].remote)
            (void)rail_ready(u, &u->peer[r], 0); /* a peer unreachable now fails at first use */
    ucx_progress(&u->base);
}

static rcoll_status_t ucx_pause(rcoll_net_t *n, rcoll_waiter_t *w)
{
    ucx_net_t *u = (ucx_net_t *)n;
    /* Something came in: the caller looks again at once. A yield here would hand the core to a
     * core-mate with what we wait for perhaps already here, a sleep would last a whole slice
     * (nothing more comes to wake it). */
    if (ucx_look(&u->base))
        return rcoll_waiter_progressed(w);
    int fd = u->c->efd;
    /* Armed: nothing is pending and the descriptor will tell when something comes. Busy:
     * something came meanwhile, the caller looks again at once. */
    if (fd >= 0 && rcoll_waiter_is_sleeping(w)) {
        ucs_status_t us = ucp_worker_arm(u->c->worker);
        if (us == UCS_ERR_BUSY)
            return RCOLL_OK;
        if (us != UCS_OK)
            fd = -1;
    }
    return rcoll_waiter_pause_fd(w, fd);
}

/* Until `c` completes: progress, pause by the team's policy, give up at its timeout or when
 * the peer is reported gone. */
static rcoll_status_t wait_completion(ucx_net_t *u, peer_t *p, op_t *c, const char *what)
{
    rcoll_waiter_t w;
    rcoll_waiter_start(&w, u->v->wait);
    ucx_progress(&u->base);
    while (!c->done) {
        if (p->failed)
            return set_error(u, RCOLL_ERR_PEER_DEAD, "%s: %s rank %d: UCX reports the peer gone",
                             rcoll_view_coll(u->v, "ucx"), what, p->rank);
        rcoll_status_t st = ucx_pause(&u->base, &w);
        if (st != RCOLL_OK)
            return set_error(u, st, "%s: %s rank %d did not complete in time",
                             rcoll_view_coll(u->v, "ucx"), what, p->rank);
    }
    if (c->status != UCS_OK) {
        p->failed = true;
        return set_error(u, RCOLL_ERR_PEER_DEAD, "%s: %s rank %d failed: %s",
                         rcoll_view_coll(u->v, "ucx"), what, p->rank,
                         ucs_status_string(c->status));
    }
    return RCOLL_OK;
}

/* Waits for the operation `ptr` of record o, then drops the record (see op_drop). */
static rcoll_status_t wait_op(ucx_net_t *u, peer_t *p, ucs_status_ptr_t ptr, op_t *o,
                              const char *what)
{
    rcoll_status_t st = RCOLL_OK;
    if (UCS_PTR_IS_ERR(ptr)) {
        p->failed = true;
        st = set_error(u, RCOLL_ERR_PEER_DEAD, "%s: %s rank %d failed: %s",
                       rcoll_view_coll(u->v, "ucx"), what, p->rank,
                       ucs_status_string(UCS_PTR_STATUS(ptr)));
    } else if (ptr) {
        st = wait_completion(u, p, o, what);
    }
    op_drop(o, ptr && !UCS_PTR_IS_ERR(ptr));
    return st;
}

static rcoll_status_t no_memory(ucx_net_t *u)
{
    return set_error(u, RCOLL_ERR_NOMEM, "ucx transport: out of memory");
}

/* ---- endpoints and keys ---- */

static void ep_failed(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    (void)ep;
    (void)status;
    ((peer_t *)arg)->failed = true;
}

/* The write message of record o (its header set) with len bytes from src, on rail 0. */
static ucs_status_ptr_t send_write(peer_t *p, op_t *o, const void *src, size_t len)
{
    ucp_request_param_t prm = op_param(o);
    prm.op_attr_mask |= UCP_OP_ATTR_FIELD_FLAGS;
    prm.flags = UCP_AM_SEND_FLAG_EAGER;
    return ucp_am_send_nbx(p->ep[0], AM_WRITE, &o->header, sizeof o->header, src, len, &prm);
}

/* First contact: the peer's hello word rises, ahead of everything else sent to it on rail 0,
 * so that it knows at team destruction that this rank waits for its goodbye
 * (ucx_contacted). Nothing waits for it; its record goes with its callback. */
static void say_hello(ucx_net_t *u, peer_t *p)
{
    op_t *o = u->hello_off ? op_new() : NULL;
    if (!o)
        return;
    o->header.dst = 0;
    o->header.signal = p->area_addr + u->hello_off;
    o->header.value = 1;
    ucs_status_ptr_t r = send_write(p, o, NULL, 0);
    if (UCS_PTR_IS_ERR(r))
        p->failed = true;
    op_drop(o, r && !UCS_PTR_IS_ERR(r));
}

static rcoll_status_t rail_ready(ucx_net_t *u, peer_t *p, int rail)
{
    if (p->ep[rail])
        return RCOLL_OK;
    if (rail > 0) { /* rail 0 first: it carries the hello */
        rcoll_status_t st = rail_ready(u, p, 0);
        if (st != RCOLL_OK)
            return st;
    }
    if (p->failed)
        return set_error(u, RCOLL_ERR_PEER_DEAD, "%s: rank %d is gone (UCX)",
                         rcoll_view_coll(u->v, "ucx"), p->rank);
    /* Never connect to a process of this host that has ended: UCX 1.13's tcp transport
     * asserts on the error path of a refused connection (tcp_ep.c:478; see ucx_hello_at). */
    if (u->v->same_host[p->rank] && u->v->process_gone(u->v->owner, p->rank)) {
        p->failed = true;
        return set_error(u, RCOLL_ERR_PEER_DEAD, "%s: rank %d is gone (its process ended)",
                         rcoll_view_coll(u->v, "ucx"), p->rank);
    }
    ucp_ep_params_t ep;
    memset(&ep, 0, sizeof ep);
    /* UCX reports a peer gone (peer error handling; without it a broken connection is fatal
     * to the process in UCX 1.13). UCX's shared-memory transports have no such reports and
     * refuse the mode: then (found once per context, UCX says so once) endpoints go without,
     * and the same host's process check finds a dead peer. */
    ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                    UCP_EP_PARAM_FIELD_ERR_HANDLER;
    ep.address = (const ucp_address_t *)(const void *)p->worker_addr;
    ep.err_mode = UCP_ERR_HANDLING_MODE_PEER;
    ep.err_handler.cb = ep_failed;
    ep.err_handler.arg = p;
    ucs_status_t us = UCS_ERR_UNREACHABLE;
    if (!u->c->no_peer_errors)
        us = ucp_ep_create(u->c->worker, &ep, &p->ep[rail]);
    /* ... but not when the peer is only unreachable because its process is gone: taking the
     * fallback then left this context without peer errors, and a live peer's endpoint with
     * them met one without (UCX 1.13 asserted on the mismatch). */
    bool gone = us == UCS_ERR_UNREACHABLE && u->v->process_gone(u->v->owner, p->rank);
    if (gone) {
        p->failed = true;
        return set_error(u, RCOLL_ERR_PEER_DEAD, "%s: rank %d is gone (its process ended)",
                         rcoll_view_coll(u->v, "ucx"), p->rank);
    }
    if (us == UCS_ERR_UNREACHABLE && u->v->same_host[p->rank]) {
        u->c->no_peer_errors = true;
        ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
        us = ucp_ep_create(u->c->worker, &ep, &p->ep[rail]);
    }
    if (us == UCS_OK)
        us = ucp_ep_rkey_unpack(p->ep[rail], p->area_rkey_buf, &p->area_rkey[rail]);
    if (us != UCS_OK) {
        p->failed = true; /* waits for it end now, not at the timeout */
        return set_error(u, RCOLL_ERR_SYSTEM, "ucx transport: rank %d unreachable from rank %d: %s",
                         p->rank, u->v->rank, ucs_status_string(us));
    }
    if (rail == 0)
        say_hello(u, p);
    return RCOLL_OK;
}

static rcoll_status_t user_rkey(ucx_net_t *u, peer_t *p, const rcoll_net_advert_t *adv, int rails)
{
    if (!adv->id)
        return set_error(u, RCOLL_ERR_INVALID, "%s: rank %d advertised no registered buffer",
                         rcoll_view_coll(u->v, "ucx"), p->rank);
    if (p->user_id != adv->id) {
        for (int r = 0; r < u->rails; r++)
            if (p->user_rkey[r]) {
                ucp_rkey_destroy(p->user_rkey[r]);
                p->user_rkey[r] = NULL;
            }
        p->user_id = adv->id;
    }
    for (int r = 0; r < rails; r++) {
        rcoll_status_t st = rail_ready(u, p, r);
        if (st != RCOLL_OK)
            return st;
        if (!p->user_rkey[r]) {
            ucs_status_t us = ucp_ep_rkey_unpack(p->ep[r], adv->key, &p->user_rkey[r]);
            if (us != UCS_OK) {
                p->user_id = 0;
                return set_error(u, RCOLL_ERR_SYSTEM, "%s: key of rank %d unusable: %s",
                                 rcoll_view_coll(u->v, "ucx"), p->rank,
                                 ucs_status_string(us));
            }
        }
    }
    return RCOLL_OK;
}

/* ---- operations ---- */

static ucp_request_param_t put_param(peer_t *p)
{
    return send_param(put_done, p);
}

static rcoll_status_t put_on(ucx_net_t *u, peer_t *p, int rail, const void *src, size_t len,
                             uint64_t addr, ucp_rkey_h rkey)
{
    ucp_request_param_t prm = put_param(p);
    ucs_status_ptr_t r = ucp_put_nbx(p->ep[rail], src, len, addr, rkey, &prm);
    if (UCS_PTR_IS_ERR(r)) {
        p->failed = true;
        return set_error(u, RCOLL_ERR_PEER_DEAD, "%s: put of %zu bytes to rank %d failed: %s",
                         rcoll_view_coll(u->v, "ucx"), len, p->rank,
                         ucs_status_string(UCS_PTR_STATUS(r)));
    }
    if (r)
        u->outstanding++;
    return RCOLL_OK;
}

/* The endpoint to `p` and a record for one operation on it. */
static rcoll_status_t op_begin(ucx_net_t *u, peer_t *p, op_t **o)
{
    rcoll_status_t st = rail_ready(u, p, 0);
    if (st != RCOLL_OK)
        return st;
    *o = op_new();
    return *o ? RCOLL_OK : no_memory(u);
}

static rcoll_status_t ucx_write(rcoll_net_t *n, int peer, const void *src, size_t len,
                               size_t area_off, size_t signal_off, uint64_t value)
{
    ucx_net_t *u = (ucx_net_t *)n;
    peer_t *p = &u->peer[peer];
    op_t *o;
    rcoll_status_t st = op_begin(u, p, &o);
    if (st != RCOLL_OK)
        return st;
    o->header.dst = p->area_addr + area_off;
    o->header.signal = signal_off == RCOLL_NET_NO_SIGNAL ? 0 : p->area_addr + signal_off;
    o->header.value = value;
    if (len <= sizeof o->buf) { /* small data travels from the record */
        memcpy(o->buf, src, len);
        src = o->buf;
    }
    return wait_op(u, p, send_write(p, o, src, len), o, "write to");
}

/* A transfer that would pass the end of what the peer advertised: refused, with why. */
static rcoll_status_t beyond(ucx_net_t *u, const char *what, size_t len, size_t offset,
                             const rcoll_net_advert_t *adv, int peer)
{
    return set_error(u, RCOLL_ERR_INVALID, "%s: %s of %zu bytes at %zu beyond the %llu bytes "
                     "rank %d advertised", rcoll_view_coll(u->v, "ucx"), what, len, offset,
                     (unsigned long long)adv->len, peer);
}

static rcoll_status_t ucx_put_user(rcoll_net_t *n, int peer, const void *src, size_t len,
                                  const rcoll_net_advert_t *adv, size_t offset)
{
    ucx_net_t *u = (ucx_net_t *)n;
    peer_t *p = &u->peer[peer];
    if (!len)
        return RCOLL_OK;
    if (offset + len > adv->len)
        return beyond(u, "write", len, offset, adv, peer);
    int rails = u->rails > 1 && len >= u->v->cfg->rail_min ? u->rails : 1;
    rcoll_status_t st = user_rkey(u, p, adv, rails);
    if (st != RCOLL_OK)
        return st;
    size_t part = rails > 1 ? ((len + (size_t)rails - 1) / (size_t)rails + STRIPE_ALIGN - 1) &
                                  ~(size_t)(STRIPE_ALIGN - 1)
                            : len;
    const unsigned char *s = src;
    for (int r = 0; r < rails && st == RCOLL_OK; r++) {
        size_t from = (size_t)r * part;
        if (from >= len)
            break;
        size_t n = len - from < part ? len - from : part;
        st = put_on(u, p, r, s + from, n, adv->addr + offset + from, p->user_rkey[r]);
    }
    p->rma_pending = true;
    return st;
}

static rcoll_status_t ucx_send_user(rcoll_net_t *n, int peer, const void *src, size_t len,
                                   size_t line_off, size_t adv_off, uint64_t seq, size_t offset,
                                   size_t signal_off, uint64_t value)
{
    ucx_net_t *u = (ucx_net_t *)n;
    peer_t *p = &u->peer[peer];
    op_t *o;
    rcoll_status_t st = op_begin(u, p, &o);
    if (st != RCOLL_OK)
        return st;
    am_user_t *h = (am_user_t *)(void *)o->buf; /* the header stays valid with the record */
    h->line = p->area_addr + line_off;
    h->adv = p->area_addr + adv_off;
    h->seq = seq;
    h->offset = offset;
    h->signal = signal_off == RCOLL_NET_NO_SIGNAL ? 0 : p->area_addr + signal_off;
    h->value = value;
    ucp_request_param_t prm = op_param(o);
    if (len >= RNDV_MIN) {
        prm.op_attr_mask |= UCP_OP_ATTR_FIELD_FLAGS;
        prm.flags = UCP_AM_SEND_FLAG_RNDV;
    }
    ucs_status_ptr_t r = ucp_am_send_nbx(p->ep[0], AM_PUT_USER, h, sizeof *h, src, len, &prm);
    return wait_op(u, p, r, o, "single copy to");
}

static rcoll_status_t ucx_fence(rcoll_net_t *n, int peer)
{
    ucx_net_t *u = (ucx_net_t *)n;
    peer_t *p = &u->peer[peer];
    if (p->rma_pending) { /* only remote completion orders an RMA put before a message */
        p->rma_pending = false;
        for (int r = 0; r < u->rails; r++) {
            if (!p->ep[r])
                continue;
            op_t *o = op_new();
            if (!o)
                return no_memory(u);
            ucp_request_param_t prm = op_param(o);
            rcoll_status_t st = wait_op(u, p, ucp_ep_flush_nbx(p->ep[r], &prm), o, "flush to");
            if (st != RCOLL_OK)
                return st;
        }
    }
    return RCOLL_OK;
}

static rcoll_status_t get_from(ucx_net_t *u, peer_t *p, void *dst, size_t len, uint64_t addr,
                               ucp_rkey_h rkey)
{
    op_t *o = op_new();
    if (!o)
        return no_memory(u);
    bool small = len <= sizeof o->buf; /* lands in the record, copied out once complete */
    ucp_request_param_t prm = op_param(o);
    ucs_status_ptr_t r = ucp_get_nbx(p->ep[0], small ? o->buf : dst, len, addr, rkey, &prm);
    if (UCS_PTR_IS_ERR(r))
        return wait_op(u, p, r, o, "read from");
    rcoll_status_t st = r ? wait_completion(u, p, o, "read from") : RCOLL_OK;
    if (st == RCOLL_OK && small)
        memcpy(dst, o->buf, len);
    op_drop(o, r != NULL);
    return st;
}

static rcoll_status_t ucx_get(rcoll_net_t *n, int peer, void *dst, size_t len, size_t area_off)
{
    ucx_net_t *u = (ucx_net_t *)n;
    peer_t *p = &u->peer[peer];
    rcoll_status_t st = rail_ready(u, p, 0);
    if (st != RCOLL_OK || !len)
        return st;
    return get_from(u, p, dst, len, p->area_addr + area_off, p->area_rkey[0]);
}

static rcoll_status_t ucx_get_user(rcoll_net_t *n, int peer, void *dst, size_t len,
                                  const rcoll_net_advert_t *adv, size_t offset)
{
    ucx_net_t *u = (ucx_net_t *)n;
    peer_t *p = &u->peer[peer];
    if (!len)
        return RCOLL_OK;
    if (offset + len > adv->len)
        return beyond(u, "read", len, offset, adv, peer);
    rcoll_status_t st = user_rkey(u, p, adv, 1);
    if (st != RCOLL_OK)
        return st;
    return get_from(u, p, dst, len, adv->addr + offset, p->user_rkey[0]);
}

static int ucx_poll(rcoll_net_t *n, int peer, void *dst, size_t len, size_t area_off)
{
    ucx_net_t *u = (ucx_net_t *)n;
    peer_t *p = &u->peer[peer];
    if (len > RCOLL_NET_POLL_MAX)
        return RCOLL_ERR_INVALID;
    if (!p->poll) {
        rcoll_status_t st = rail_ready(u, p, 0);
        if (st != RCOLL_OK)
            return st;
        op_t *o = op_new();
        if (!o)
            return no_memory(u);
        ucp_request_param_t prm = op_param(o);
        ucs_status_ptr_t r = ucp_get_nbx(p->ep[0], o->buf, len, p->area_addr + area_off,
                                         p->area_rkey[0], &prm);
        if (UCS_PTR_IS_ERR(r)) {
            op_drop(o, false);
            return set_error(u, RCOLL_ERR_PEER_DEAD, "%s: read from rank %d failed: %s",
                             rcoll_view_coll(u->v, "ucx"), peer,
                             ucs_status_string(UCS_PTR_STATUS(r)));
        }
        if (!r) {
            memcpy(dst, o->buf, len);
            op_drop(o, false);
            return 1;
        }
        p->poll = o;
    }
    ucx_progress(&u->base);
    op_t *o = p->poll;
    if (!o->done)
        return p->failed ? set_error(u, RCOLL_ERR_PEER_DEAD, "%s: rank %d is gone (UCX)",
                                     rcoll_view_coll(u->v, "ucx"), peer)
                         : 0;
    p->poll = NULL;
    ucs_status_t us = o->status;
    if (us == UCS_OK)
        memcpy(dst, o->buf, len);
    op_drop(o, false);
    if (us != UCS_OK) /* the peer may just have left: not a verdict on it */
        return set_error(u, RCOLL_ERR_PEER_DEAD, "%s: read from rank %d failed: %s",
                         rcoll_view_coll(u->v, "ucx"), peer, ucs_status_string(us));
    return 1;
}

static rcoll_status_t ucx_quiet(rcoll_net_t *n)
{
    ucx_net_t *u = (ucx_net_t *)n;
    if (!u->outstanding)
        return RCOLL_OK;
    rcoll_waiter_t w;
    rcoll_waiter_start(&w, u->v->wait);
    ucx_progress(&u->base);
    while (u->outstanding > 0) {
        for (int r = 0; r < u->v->size; r++)
            if (u->peer[r].failed)
                return set_error(u, RCOLL_ERR_PEER_DEAD, "%s: rank %d is gone (UCX)",
                                 rcoll_view_coll(u->v, "ucx"), r);
        rcoll_status_t st = ucx_pause(&u->base, &w);
        if (st != RCOLL_OK)
            return set_error(u, st, "%s: %ld puts did not complete in time",
                             rcoll_view_coll(u->v, "ucx"), u->outstanding);
    }
    return RCOLL_OK;
}

/* ---- registration (through the registration cache, net/regcache.h) ---- */

typedef struct {
    ucp_mem_h memh;
} ucx_reg_t;

static int reg_map(void *arg, uintptr_t start, uintptr_t end, void **handle, unsigned char *key,
                   uint32_t *key_len, char *err, size_t err_len)
{
    ucx_ctx_t *c = arg;
    ucp_mem_map_params_t mp;
    memset(&mp, 0, sizeof mp);
    mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
    mp.address = (void *)start;
    mp.length = end - start;
    ucp_mem_h memh;
    void *rkey = NULL;
    size_t rkey_len = 0;
    ucs_status_t us = ucp_mem_map(c->context, &mp, &memh);
    if (us == UCS_OK) {
        us = ucp_rkey_pack(c->context, memh, &rkey, &rkey_len);
        if (us == UCS_OK && rkey_len > RCOLL_NET_KEY_MAX)
            us = UCS_ERR_EXCEEDS_LIMIT;
        if (us == UCS_OK) {
            memcpy(key, rkey, rkey_len);
            *key_len = (uint32_t)rkey_len;
            *handle = memh;
        }
        if (rkey)
            ucp_rkey_buffer_release(rkey);
        if (us != UCS_OK)
            ucp_mem_unmap(c->context, memh);
    }
    if (us != UCS_OK)
        snprintf(err, err_len, "%s", ucs_status_string(us));
    return us == UCS_OK ? 0 : -1;
}

static void reg_unmap(void *arg, void *handle)
{
    ucx_ctx_t *c = arg;
    ucp_mem_unmap(c->context, handle);
}

static rcoll_status_t ucx_register(rcoll_net_t *n, void *addr, size_t len, rcoll_net_advert_t *out)
{
    ucx_net_t *u = (ucx_net_t *)n;
    char err[128];
    rcoll_status_t st = rcoll_regcache_get(&u->c->cache, &u->call_reg, addr, len, out, err, sizeof err);
    if (st != RCOLL_OK)
        return set_error(u, st, "%s: registering %zu bytes failed: %s", rcoll_view_coll(u->v, "ucx"),
                         len, err);
    return RCOLL_OK;
}

static void ucx_release_registrations(rcoll_net_t *n)
{
    ucx_net_t *u = (ucx_net_t *)n;
    rcoll_regcache_release_call(&u->c->cache, &u->call_reg);
}

static unsigned ucx_ctx_look(ucx_ctx_t *c)
{
    return ucp_worker_progress(c->worker);
}

static void ucx_cache_stats(const ucx_ctx_t *c, rcoll_reg_cache_stats_t *out)
{
    *out = c->cache.stats;
}

/* ---- creation ---- */

typedef struct {
    int32_t status;
    uint32_t addr_len, key_len;
    uint64_t area_addr;
} ucx_offer_t;

static rcoll_status_t exchange(const rcoll_oob_t *oob, const void *mine, void *all, size_t len)
{
    return oob->allgather(mine, all, len, oob->coll_info) == 0 ? RCOLL_OK : RCOLL_ERR_BOOTSTRAP;
}

/* Everything this rank offers its peers: status, worker address and area key (sizes first). */
static rcoll_status_t share(ucx_net_t *u, const rcoll_oob_t *oob, int err, ucp_address_t *waddr,
                            size_t waddr_len, void *rkey, size_t key_len, void *area)
{
    const rcoll_view_t *t = u->v;
    ucx_offer_t mine = {err, (uint32_t)waddr_len, (uint32_t)key_len, (uint64_t)(uintptr_t)area};
    ucx_offer_t *all = calloc((size_t)t->size, sizeof *all);
    if (!all)
        return RCOLL_ERR_NOMEM;
    rcoll_status_t st = exchange(oob, &mine, all, sizeof mine);
    size_t blob = 0;
    for (int r = 0; st == RCOLL_OK && r < t->size; r++) {
        if (all[r].status && st == RCOLL_OK)
            st = rcoll_view_error(t, RCOLL_ERR_SYSTEM, "ucx transport: rank %d could not set up "
                                  "UCX (see its log)", r);
        size_t n = (size_t)all[r].addr_len + all[r].key_len;
        blob = n > blob ? n : blob;
    }
    unsigned char *minebuf = NULL;
    if (st == RCOLL_OK) {
        blob = (blob + 7) & ~(size_t)7;
        minebuf = calloc(1, blob);
        u->blobs = calloc((size_t)t->size, blob);
        if (!minebuf || !u->blobs)
            st = RCOLL_ERR_NOMEM; /* every rank takes part in both exchanges or none */
    }
    if (st == RCOLL_OK) {
        memcpy(minebuf, waddr, waddr_len);
        memcpy(minebuf + waddr_len, rkey, key_len);
        st = exchange(oob, minebuf, u->blobs, blob);
    }
    for (int r = 0; st == RCOLL_OK && r < t->size; r++) {
        peer_t *p = &u->peer[r];
        p->worker_addr = u->blobs + (size_t)r * blob;
        p->area_rkey_buf = p->worker_addr + all[r].addr_len;
        p->area_addr = all[r].area_addr;
    }
    free(minebuf);
    free(all);
    return st;
}

static void ucx_destroy(rcoll_net_t *n);

static rcoll_status_t ucx_alloc(const rcoll_view_t *t, ucx_net_t **out)
{
    ucx_net_t *u = calloc(1, sizeof *u);
    if (!u)
        return RCOLL_ERR_NOMEM;
    u->v = t;
    u->rails = t->cfg->rails > 0 ? t->cfg->rails : 1;
    u->peer = calloc((size_t)t->size, sizeof *u->peer);
    *out = u;
    if (!u->peer)
        return RCOLL_ERR_NOMEM;
    for (int r = 0; r < t->size; r++) {
        peer_t *p = &u->peer[r];
        p->u = u;
        p->rank = r;
        p->remote = t->local_index[r] < 0;
        if (!p->remote)
            continue;
        p->ep = calloc((size_t)u->rails, sizeof *p->ep);
        p->area_rkey = calloc((size_t)u->rails, sizeof *p->area_rkey);
        p->user_rkey = calloc((size_t)u->rails, sizeof *p->user_rkey);
        if (!p->ep || !p->area_rkey || !p->user_rkey)
            return RCOLL_ERR_NOMEM;
    }
    return RCOLL_OK;
}

static int area_add(ucx_ctx_t *c, void *area, size_t bytes)
{
    if (c->nareas == c->areas_cap) {
        int cap = c->areas_cap ? 2 * c->areas_cap : 8;
        void *p = realloc(c->areas, (size_t)cap * sizeof *c->areas);
        if (!p)
            return -1;
        c->areas = p;
        c->areas_cap = cap;
    }
    c->areas[c->nareas].start = (uintptr_t)area;
    c->areas[c->nareas].end = (uintptr_t)area + bytes;
    c->nareas++;
    return 0;
}

static void area_remove(ucx_ctx_t *c, void *area)
{
    for (int i = 0; i < c->nareas; i++)
        if (c->areas[i].start == (uintptr_t)area) {
            c->areas[i] = c->areas[--c->nareas];
            return;
        }
}

static rcoll_status_t ucx_create(const rcoll_view_t *t, const rcoll_oob_t *oob, void *area,
                                 size_t area_bytes, rcoll_net_t **out)
{
    ucx_net_t *u = NULL;
    int err = ucx_alloc(t, &u) != RCOLL_OK;
    ucx_ctx_t **shared = rcoll_net_ctx_slot(t, &rcoll_net_ucx);
    if (!err) { /* threads creating teams at once: one creates the UCP context, the rest wait */
        pthread_mutex_lock(t->net_lock);
        if (!*shared && ctx_create(t, shared) != RCOLL_OK)
            err = 1;
        pthread_mutex_unlock(t->net_lock);
    }
    ucp_address_t *waddr = NULL;
    size_t waddr_len = 0, key_len = 0;
    void *rkey = NULL;
    if (!err) {
        u->c = *shared;
        ucp_mem_map_params_t mp;
        memset(&mp, 0, sizeof mp);
        mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
        mp.address = area;
        mp.length = area_bytes;
        ucs_status_t us = ucp_worker_get_address(u->c->worker, &waddr, &waddr_len);
        if (us == UCS_OK)
            us = ucp_mem_map(u->c->context, &mp, &u->area_memh);
        if (us == UCS_OK)
            us = ucp_rkey_pack(u->c->context, u->area_memh, &rkey, &key_len);
        if (us != UCS_OK) {
            rcoll_view_error(t, RCOLL_ERR_SYSTEM, "ucx transport: %s", ucs_status_string(us));
            err = 1;
        }
    }
    /* The area is known to the worker before any peer can know of it: a peer that finishes
     * the exchange first writes into it at once, and where another thread of this process
     * works the worker meanwhile (a progress thread) the write lands before this one returns;
     * a write for no known area is dropped as a destroyed team's last words. */
    if (!err && area_add(u->c, area, area_bytes) != 0)
        err = 1;
    else if (!err)
        u->area = area; /* ucx_destroy removes it */
    rcoll_status_t st = u && u->peer ? share(u, oob, err, waddr, waddr_len, rkey, key_len, area)
                                     : RCOLL_ERR_NOMEM;
    if (rkey)
        ucp_rkey_buffer_release(rkey);
    if (waddr)
        ucp_worker_release_address(u->c->worker, waddr);
    if (st == RCOLL_OK && err)
        st = RCOLL_ERR_SYSTEM;
    if (st != RCOLL_OK) {
        ucx_destroy(&u->base);
        return st;
    }
    u->base.ops = &rcoll_net_ucx;
    u->base.puts_by_message = u->c->puts_by_message;
    *out = &u->base;
    return RCOLL_OK;
}

/* Waits a bounded time for a request of record o, cancelling it if need be; drops o. */
static void wait_bounded(ucx_net_t *u, ucs_status_ptr_t r, op_t *o)
{
    if (r && !UCS_PTR_IS_ERR(r)) {
        uint64_t until = rcoll_now_ns() + 1000000000ull;
        while (!o->done && rcoll_now_ns() < until)
            ucp_worker_progress(u->c->worker);
        if (!o->done) {
            ucp_request_cancel(u->c->worker, r);
            while (!o->done && rcoll_now_ns() < until + 1000000000ull)
                ucp_worker_progress(u->c->worker);
        }
    }
    op_drop(o, r && !UCS_PTR_IS_ERR(r));
}

/* No member is inside a collective when a team is destroyed: every peer has received what it
 * waited for from this rank, so nothing more is owed and the endpoint closes without the
 * disconnect handshake (a peer that has exited could not answer it). */
static void close_ep(ucx_net_t *u, ucp_ep_h ep)
{
    op_t *o = op_new();
    if (!o)
        return;
    ucp_request_param_t prm = op_param(o);
    prm.op_attr_mask |= UCP_OP_ATTR_FIELD_FLAGS;
    prm.flags = UCP_EP_CLOSE_FLAG_FORCE;
    wait_bounded(u, ucp_ep_close_nbx(ep, &prm), o);
}

static void ucx_destroy(rcoll_net_t *n)
{
    ucx_net_t *u = (ucx_net_t *)n;
    if (!u)
        return;
    if (u->c && u->area)
        area_remove(u->c, u->area); /* from now on writes for it are dropped */
    if (u->c) {
        /* What is still in flight finishes (or fails) before the memory goes. */
        uint64_t until = rcoll_now_ns() + 1000000000ull;
        while (u->outstanding > 0 && rcoll_now_ns() < until)
            ucp_worker_progress(u->c->worker);
    }
    for (int r = 0; u->peer && r < u->v->size; r++) {
        peer_t *p = &u->peer[r];
        op_drop(p->poll, true); /* a read still in flight: its callback frees it */
        for (int k = 0; p->ep && k < u->rails; k++) {
            if (p->user_rkey && p->user_rkey[k])
                ucp_rkey_destroy(p->user_rkey[k]);
            if (p->area_rkey && p->area_rkey[k])
                ucp_rkey_destroy(p->area_rkey[k]);
            if (p->ep[k])
                close_ep(u, p->ep[k]);
        }
        free(p->ep);
        free(p->area_rkey);
        free(p->user_rkey);
    }
    if (u->c) {
        ucx_release_registrations(&u->base);
        if (u->area_memh)
            ucp_mem_unmap(u->c->context, u->area_memh);
    }
    free(u->peer);
    free(u->blobs);
    free(u);
}

static int ucx_event_fd(rcoll_net_t *n)
{
    return ((ucx_net_t *)n)->c->efd;
}

const rcoll_net_ops_t rcoll_net_ucx = {
    .name = "ucx",
    .ctx_destroy = ucx_ctx_destroy,
    .ctx_look = ucx_ctx_look,
    .cache_stats = ucx_cache_stats,
    .create = ucx_create,
    .destroy = ucx_destroy,
    .reg = ucx_register,
    .release_registrations = ucx_release_registrations,
    .write = ucx_write,
    .put_user = ucx_put_user,
    .send_user = ucx_send_user,
    .deliver_held = ucx_deliver_held,
    .fence = ucx_fence,
    .get = ucx_get,
    .get_user = ucx_get_user,
    .poll = ucx_poll,
    .quiet = ucx_quiet,
    .progress = ucx_progress,
    .look = ucx_look,
    .pause = ucx_pause,
    .event_fd = ucx_event_fd,
    .peer_failed = ucx_peer_failed,
    .contacted = ucx_contacted,
    .hello_at = ucx_hello_at,
};
