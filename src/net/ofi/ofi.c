/* ofi: the network channel over libfabric (net.h): one-sided RMA on one reliable-datagram
 * endpoint per context. This file: the context, completions, waits, team creation and
 * destruction; the operations are in rma.c.
 *
 * Per context (struct rcoll_net_ctx, made by the first team that spans nodes, under
 * v->net_lock): the provider libfabric's own FI_PROVIDER chooses (fi_getinfo for an FI_EP_RDM
 * endpoint with RMA read and write both ways; its first answer), one fabric, domain, endpoint,
 * completion queue (FI_CQ_FORMAT_DATA; with a wait descriptor, FI_WAIT_FD, where the provider
 * has one, else none), a table address vector, slabs of operation records and the registration
 * cache of user buffers (net/regcache.h). A peer endpoint enters the address vector once per
 * context and stays: teams share the connections libfabric makes to it.
 *
 * Per team (collective, out of band, three exchanges that every rank takes part in or none):
 * a small fixed offer (status, sizes, the area's start, the registration mode), then a blob of
 * the size the largest offer needs (provider name, endpoint name, the area's packed key), then,
 * once peers on other nodes are in the address vector, whether every rank could reach its
 * peers. A rank that failed locally still takes part (its offer says so); all ranks judge the
 * same offers and blobs, so all reach the same verdict. Out-of-band layers may limit a message
 * to a few hundred bytes (the fork launcher's: 256), hence the small first step.
 *
 * Bytes and steps:
 * - write: the data by one fi_write into the peer's area (FI_INJECT up to the provider's inject
 *   size; copied into the operation's record up to 4 KB + 128; beyond, from src, and write
 *   waits for its local completion), then the 8-byte signal word by a second fi_write
 *   (FI_INJECT). Small writes neither wait nor make a round trip.
 *   Signals as remote CQ data (c->cq_data: manual progress, write-after-write ordering, 8 bytes
 *   of CQ data, no FI_RX_CQ_DATA mode): the data goes by one fi_writedata (no data: 0 bytes at
 *   the signal word) whose CQ data is {the target team's slot (8 bits), the signal word's index
 *   in the area (20 bits), the value's low 36 bits}; the target, reading its completion queue
 *   (which it must do anyway for the data to land under manual progress), raises the word by
 *   the step those low bits give over what it holds. That is the value sent when the word holds
 *   what this rank last raised it to and at most OFI_STEP_MAX (2^35 - 1) less: signal words
 *   have one writer and only rise (docs/design.md), and the sender remembers per peer what it
 *   last raised each word to (a table that never forgets). The first signal to a word in a team
 *   goes by a plain second write (nothing of it can be in the peer's queue yet); every later
 *   one as CQ data, so that no plain write overtakes an entry still unread in the peer's queue
 *   (a step larger than OFI_STEP_MAX, a word raised again after half a million calls of the
 *   team, would go plain, and the target drops an entry that reads as a step back). Data longer
 *   than one piece goes first and an empty fi_writedata carries the signal after it (queued like
 *   any signal where ordering needs it). Each rank offers its team's slot (the context's table
 *   of teams, OFI_SLOTS, handed out round robin; none free: its peers use two writes). One
 *   message instead of two: the emulated 4-node small allgather and alltoall went from 1.5-2.1x
 *   native to about 0.9x (docs/tuning.md). Building with -DRCOLL_OFI_CQ_DATA=0 turns it off.
 * - put_user: one fi_write (zero copy) into the buffer the peer advertised; its source stays
 *   unchanged until quiet. puts_by_message is false: send_user answers RCOLL_ERR_UNSUPPORTED and
 *   deliver_held does nothing (libfabric gives RMA everywhere, emulated by the provider where
 *   the hardware has none, so nothing is sent by message). RCOLL_RAILS is UCX's: one endpoint.
 * - get, get_user: one fi_read, waited for (small reads land in the record and are copied).
 * - poll: one fi_read of the word kept in flight per peer, copied out once it has landed.
 * - quiet: waits until the zero-copy puts have completed and no write waits in a queue (below);
 *   copied and injected data left the caller's buffer when the write returned.
 * Messages larger than the provider's max_msg_size (or 1 GB) go in pieces.
 *
 * Ordering (a signal lands after everything written to the peer before it, and after fence the
 * next write lands after every put before it), chosen per context from what the endpoint offers:
 * - FI_ORDER_WAW (tx and rx; tcp;ofi_rxm, sockets, net): writes to one peer land in the order
 *   posted: nothing to do. A write longer than max_order_waw_size goes with
 *   FI_DELIVERY_COMPLETE and is handled as below.
 * - otherwise FI_FENCE, where the provider has the capability: a signal, and the first write
 *   after fence, are posted with FI_FENCE (deferred until all before to the peer completed).
 * - otherwise (shm) every write goes with FI_DELIVERY_COMPLETE, and a signal (or the first
 *   write after fence) must wait until all earlier writes to the peer were delivered: it waits,
 *   copied, in the peer's queue and is posted when the last delivery completes (any look at the
 *   completion queue), so write returns at once and signals reach one word in the order posted
 *   (they only rise, as in ucx.c's raise_signal). Delivery needs the peer's progress, and quiet
 *   (at the end of each call) waits for the queues to empty: with such a provider a call ends
 *   only once the peers it wrote to have reached it (a bcast root waits for its receivers, up to
 *   the timeout). Queued writes to a peer found gone are dropped.
 * Building with -DRCOLL_OFI_ORDER=1 (FENCE) or 2 (DELIVERY) forces a weaker ordering, to test it;
 * -DRCOLL_OFI_MR_EXTRA=FI_MR_LOCAL (or FI_MR_RAW) adds a registration mode the provider did
 * not ask for, to test its path.
 *
 * Memory registration: the hints allow FI_MR_LOCAL, FI_MR_VIRT_ADDR, FI_MR_ALLOCATED,
 * FI_MR_PROV_KEY, FI_MR_ENDPOINT and FI_MR_RAW, and whichever the provider keeps is honoured:
 * addresses are virtual or offsets from the registration's start (carried in the packed key
 * {start, key}), keys are the provider's or chosen here (a counter per domain), raw keys are
 * packed {start, raw base, raw key} and mapped at the peer (fi_mr_map_raw), registrations are
 * bound to the endpoint and enabled. With FI_MR_LOCAL the record slabs are registered (small
 * data and reads), the area has its descriptor, and larger local buffers are registered through
 * the registration cache (without the cache, up to OFI_LOCAL_REGS per call, dropped at its end).
 *
 * Progress: the context asks for manual data progress first and keeps it where its completion
 * queue gives a wait descriptor (tcp;ofi_rxm; net, whose default is automatic); otherwise it
 * takes the provider's own choice (sockets: automatic -- asked for manual, it gives no
 * descriptor and its writes of more than 4 KB stalled here; shm: manual, no descriptor).
 * Manual progress moves data only inside libfabric calls, the target of an RMA included: every
 * wait of the node transport calls pause, which reads the completion queue (look) each time. In
 * its sleeping phase, with a wait descriptor, it sleeps on the descriptor (fi_trywait first) for
 * one slice of the policy and reads the queue again when it wakes, so what woke it has landed
 * when the caller looks; with automatic progress a peer's write raises no completion and wakes
 * nothing, and without a descriptor the sleeping phase sleeps one slice. Signals go as CQ data
 * only under manual progress; on net that took the emulated 4-node small allgather, alltoall
 * and barrier from about 1.5x native to about 0.7x (docs/tuning.md). Every wait ends at the team's
 * timeout (v->wait->timeout_ns) with a message naming the peer ("<coll>: write to rank N timed
 * out"), and at once when the provider reports an operation to the peer failed (the peer is then
 * marked failed) or, for a peer on this host, when v->process_gone says its process ended.
 *
 * Threads: the endpoint is opened FI_THREAD_DOMAIN; the teams of one context are not used by
 * several threads at once (as with the UCX channel's single-threaded worker; rcoll_mpi refuses
 * teams spanning nodes under MPI_THREAD_MULTIPLE).
 *
 * Tested with libfabric 1.17, nodes emulated on one host: tcp;ofi_rxm (WAW, mr_mode 0: offsets
 * and keys chosen here, manual progress, wait descriptor), sockets (WAW, automatic progress),
 * net (WAW, manual progress, wait descriptor), shm (no write ordering and no fence: delivery
 * ordering, FI_MR_VIRT_ADDR, no wait descriptor); delivery ordering and FI_MR_LOCAL also forced
 * over tcp;ofi_rxm. Not tested: FENCE ordering (only sockets has FI_FENCE here, and it orders
 * writes anyway; forced, its fenced writes stall when several peers are written to, then fail
 * with FI_EIO -- its progress engine holds a connection for a fenced entry while the entry waits
 * for all earlier ones), FI_MR_PROV_KEY, FI_MR_ENDPOINT, FI_MR_RAW (no provider here asks for
 * them). */
#include "net/ofi/ofi.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/fi_cm.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include "config/config.h"

#define OFI_API FI_VERSION(1, 9)
#define OFI_CAPS (FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE)
#define OFI_MR_MODES (FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | \
                      FI_MR_ENDPOINT | FI_MR_RAW)
#define OFI_ORDERS (FI_ORDER_WAW | FI_ORDER_RAW | FI_ORDER_WAR | FI_ORDER_RAR)
#define OFI_MSG_MAX (1ull << 30)
#define SLAB_OPS 32
#ifndef RCOLL_OFI_ORDER
#define RCOLL_OFI_ORDER OFI_ORDER_WAW
#endif
#ifndef RCOLL_OFI_CQ_DATA
#define RCOLL_OFI_CQ_DATA 1
#endif
#ifndef RCOLL_OFI_MR_EXTRA
#define RCOLL_OFI_MR_EXTRA 0
#endif

extern const rcoll_net_ops_t rcoll_net_ofi;

/* ---- context ---- */

/* Hints for `caps`; `progress` FI_PROGRESS_MANUAL asks for manual data progress (0: any). */
static struct fi_info *hints_new(const ofi_lib_t *lib, uint64_t caps, enum fi_progress progress,
                                 const struct fi_info *like)
{
    struct fi_info *h = lib->dupinfo(NULL); /* fi_allocinfo */
    if (!h)
        return NULL;
    h->caps = caps;
    h->mode = FI_CONTEXT | FI_CONTEXT2;
    h->ep_attr->type = FI_EP_RDM;
    h->domain_attr->mr_mode = OFI_MR_MODES;
    h->domain_attr->threading = FI_THREAD_DOMAIN;
    h->domain_attr->data_progress = progress;
    if (like) { /* the same provider and domain, with one more capability */
        h->fabric_attr->prov_name = strdup(like->fabric_attr->prov_name);
        h->domain_attr->name = strdup(like->domain_attr->name);
    }
    return h;
}

/* The first answer of fi_getinfo for `caps` and `progress` (NULL: none; the reason in err). */
static struct fi_info *first_info(const ofi_lib_t *lib, uint64_t caps, enum fi_progress progress,
                                  const struct fi_info *like, char *err, size_t err_len)
{
    struct fi_info *h = hints_new(lib, caps, progress, like), *info = NULL;
    int r = h ? lib->getinfo(OFI_API, NULL, NULL, 0, h, &info) : -FI_ENOMEM;
    lib->freeinfo(h);
    if (r) {
        const char *prov = getenv("FI_PROVIDER");
        snprintf(err, err_len, "fi_getinfo: %s (no provider%s%s offers reliable datagram endpoints "
                 "with RMA)", lib->strerror(-r), prov ? " of FI_PROVIDER=" : "", prov ? prov : "");
        return NULL;
    }
    if (info->next) {
        lib->freeinfo(info->next);
        info->next = NULL;
    }
    return info;
}

static const char *order_name(ofi_order_t o)
{
    return o == OFI_ORDER_WAW ? "write-after-write" : o == OFI_ORDER_FENCE ? "fence" : "delivery";
}

/* Keeps `info` and the ordering it gives (see the top). */
static void take_info(ofi_ctx_t *c, struct fi_info *info, ofi_order_t order)
{
    uint64_t have = info->tx_attr->msg_order & info->rx_attr->msg_order & OFI_ORDERS;
    if (order != OFI_ORDER_WAW)
        have &= ~(uint64_t)FI_ORDER_WAW; /* not relied on (a weaker ordering forced) */
    info->tx_attr->msg_order = have; /* asked of the endpoint: what it offers of what we use */
    info->rx_attr->msg_order = have;
    c->info = info;
    c->mr_mode = info->domain_attr->mr_mode | RCOLL_OFI_MR_EXTRA;
    c->inject = info->tx_attr->inject_size;
    c->max_msg = info->ep_attr->max_msg_size && info->ep_attr->max_msg_size < OFI_MSG_MAX
                     ? info->ep_attr->max_msg_size : OFI_MSG_MAX;
    c->max_waw = (have & FI_ORDER_WAW) ? info->ep_attr->max_order_waw_size : 0;
    c->order = order;
    snprintf(c->prov, sizeof c->prov, "%s", info->fabric_attr->prov_name);
}

static int choose_info(ofi_ctx_t *c, enum fi_progress progress, char *err, size_t err_len)
{
    struct fi_info *info = first_info(c->lib, OFI_CAPS, progress, NULL, err, err_len);
    if (!info)
        return -1;
    uint64_t have = info->tx_attr->msg_order & info->rx_attr->msg_order;
    ofi_order_t order = (have & FI_ORDER_WAW) && info->ep_attr->max_order_waw_size >= sizeof(uint64_t)
                            ? OFI_ORDER_WAW : OFI_ORDER_FENCE;
    if (order < RCOLL_OFI_ORDER)
        order = RCOLL_OFI_ORDER;
    if (order == OFI_ORDER_FENCE && !(info->caps & FI_FENCE)) {
        char ignored[200];
        struct fi_info *fenced =
            first_info(c->lib, OFI_CAPS | FI_FENCE, progress, info, ignored, sizeof ignored);
        if (fenced) {
            c->lib->freeinfo(info);
            info = fenced;
        } else {
            order = OFI_ORDER_DELIVERY;
        }
    }
    take_info(c, info, order);
    return 0;
}

static int open_cq(ofi_ctx_t *c)
{
    struct fi_cq_attr ca;
    memset(&ca, 0, sizeof ca);
    ca.format = FI_CQ_FORMAT_DATA;
    ca.size = c->info->tx_attr->size + c->info->rx_attr->size;
    ca.wait_obj = FI_WAIT_FD;
    c->fd = -1;
    if (fi_cq_open(c->domain, &ca, &c->cq, NULL) == 0) {
        if (fi_control(&c->cq->fid, FI_GETWAIT, &c->fd) == 0 && c->fd >= 0)
            return 0;
        c->fd = -1; /* a wait object we cannot sleep on only costs: none */
        fi_close(&c->cq->fid);
        c->cq = NULL;
    }
    ca.wait_obj = FI_WAIT_NONE;
    return fi_cq_open(c->domain, &ca, &c->cq, NULL);
}

static int open_endpoint(ofi_ctx_t *c, char *err, size_t err_len)
{
    const char *step = "fi_fabric";
    int r = c->lib->fabric(c->info->fabric_attr, &c->fabric, NULL);
    if (!r) {
        step = "fi_domain";
        r = fi_domain(c->fabric, c->info, &c->domain, NULL);
    }
    if (!r) {
        step = "fi_cq_open";
        r = open_cq(c);
    }
    if (!r) {
        struct fi_av_attr aa;
        memset(&aa, 0, sizeof aa);
        aa.type = FI_AV_TABLE;
        step = "fi_av_open";
        r = fi_av_open(c->domain, &aa, &c->av, NULL);
    }
    if (!r) {
        step = "fi_endpoint";
        r = fi_endpoint(c->domain, c->info, &c->ep, NULL);
    }
    if (!r) {
        step = "fi_ep_bind";
        r = fi_ep_bind(c->ep, &c->cq->fid, FI_TRANSMIT | FI_RECV);
    }
    if (!r)
        r = fi_ep_bind(c->ep, &c->av->fid, 0);
    if (!r) {
        step = "fi_enable";
        r = fi_enable(c->ep);
    }
    if (r)
        snprintf(err, err_len, "%s (provider %s): %s", step, c->prov, c->lib->strerror(-r));
    return r;
}

static void close_fid(void *fidp)
{
    struct fid **f = fidp;
    if (*f)
        fi_close(*f);
    *f = NULL;
}

/* Closes what open_endpoint opened and forgets the provider's answer. */
static void close_endpoint(ofi_ctx_t *c)
{
    close_fid(&c->ep);
    close_fid(&c->av);
    close_fid(&c->cq);
    close_fid(&c->domain);
    close_fid(&c->fabric);
    c->fd = -1;
    if (c->info)
        c->lib->freeinfo(c->info);
    c->info = NULL;
}

static void ofi_ctx_destroy(ofi_ctx_t *c)
{
    if (!c)
        return;
    /* Operations of teams already gone (a dead peer's): a bounded wait, then the endpoint goes
     * with them. */
    uint64_t until = rcoll_now_ns() + 200000000ull;
    while (c->cq && c->live_ops > 0 && rcoll_now_ns() < until)
        if (!rcoll_ofi_progress_ctx(c))
            usleep(100);
    int busy = c->ep ? fi_close(&c->ep->fid) : 0;
    if (!busy)
        c->ep = NULL;
    rcoll_regcache_fini(&c->cache);
    while (c->slabs) {
        ofi_slab_t *s = c->slabs;
        c->slabs = s->next;
        close_fid(&s->mr);
        free(s);
    }
    close_endpoint(c); /* the endpoint too, where the provider refused with registrations bound */
    free(c->addrs);
    free(c);
}

static void ofi_cache_stats(const ofi_ctx_t *c, rcoll_reg_cache_stats_t *out)
{
    *out = c->cache.stats;
}

/* ---- registration ---- */

int rcoll_ofi_mr_register(ofi_ctx_t *c, void *addr, size_t len, uint64_t access, struct fid_mr **mr,
                          char *err, size_t err_len)
{
    uint64_t key = (c->mr_mode & FI_MR_PROV_KEY) ? 0 : c->next_key++;
    *mr = NULL;
    const char *step = "fi_mr_reg";
    int r = fi_mr_reg(c->domain, addr, len, access, 0, key, 0, mr, NULL);
    if (!r && (c->mr_mode & FI_MR_ENDPOINT)) {
        step = "fi_mr_bind";
        r = fi_mr_bind(*mr, &c->ep->fid, 0);
        if (!r) {
            step = "fi_mr_enable";
            r = fi_mr_enable(*mr);
        }
    }
    if (r) {
        close_fid(mr);
        snprintf(err, err_len, "%s: %s", step, c->lib->strerror(-r));
        return -1;
    }
    return 0;
}

int rcoll_ofi_pack_key(ofi_ctx_t *c, struct fid_mr *mr, uint64_t start, unsigned char *out,
                       uint32_t *len)
{
    uint64_t words[2] = {start, 0};
    size_t raw = 0;
    if (c->mr_mode & FI_MR_RAW) {
        raw = RCOLL_NET_KEY_MAX - sizeof words;
        if (fi_mr_raw_attr(mr, &words[1], out + sizeof words, &raw, 0) != 0)
            return -1;
    } else {
        words[1] = fi_mr_key(mr);
        if (words[1] == FI_KEY_NOTAVAIL)
            return -1;
    }
    memcpy(out, words, sizeof words);
    *len = (uint32_t)(sizeof words + raw);
    return 0;
}

int rcoll_ofi_unpack_key(ofi_ctx_t *c, const unsigned char *in, uint32_t len, uint64_t *start,
                         uint64_t *key, bool *mapped)
{
    uint64_t words[2];
    *mapped = false;
    if (len < sizeof words || len > RCOLL_NET_KEY_MAX)
        return -1;
    memcpy(words, in, sizeof words);
    *start = words[0];
    if (!(c->mr_mode & FI_MR_RAW)) {
        *key = words[1];
        return 0;
    }
    unsigned char raw[RCOLL_NET_KEY_MAX];
    memcpy(raw, in + sizeof words, len - sizeof words);
    if (fi_mr_map_raw(c->domain, words[1], raw, len - sizeof words, key, 0) != 0)
        return -1;
    *mapped = true;
    return 0;
}

static int cache_reg(void *arg, uintptr_t start, uintptr_t end, void **handle, unsigned char *key,
                     uint32_t *key_len, char *err, size_t err_len)
{
    ofi_ctx_t *c = arg;
    struct fid_mr *mr;
    uint64_t access = FI_REMOTE_READ | FI_REMOTE_WRITE | FI_READ | FI_WRITE;
    if (rcoll_ofi_mr_register(c, (void *)start, end - start, access, &mr, err, err_len) != 0)
        return -1;
    if (rcoll_ofi_pack_key(c, mr, start, key, key_len) != 0) {
        fi_close(&mr->fid);
        snprintf(err, err_len, "no key for the registration");
        return -1;
    }
    *handle = mr;
    return 0;
}

static void cache_dereg(void *arg, void *handle)
{
    (void)arg;
    fi_close(&((struct fid_mr *)handle)->fid);
}

/* The provider's answer for `progress`, and the endpoint on it (non-zero: failed, why in err). */
static int open_ctx(ofi_ctx_t *c, enum fi_progress progress, char *err, size_t err_len)
{
    return choose_info(c, progress, err, err_len) || open_endpoint(c, err, err_len);
}

static rcoll_status_t ctx_create(const rcoll_view_t *v, ofi_ctx_t **out)
{
    ofi_ctx_t *c = calloc(1, sizeof *c);
    if (!c)
        return rcoll_view_error(v, RCOLL_ERR_NOMEM, "ofi transport: out of memory");
    c->fd = -1;
    c->next_key = 1;
    char err[256] = "";
    c->lib = rcoll_ofi_lib(err, sizeof err);
    if (!c->lib) {
        free(c);
        return rcoll_view_error(v, RCOLL_ERR_SYSTEM, "ofi transport: %s", err);
    }
    /* Manual progress where the provider offers it with a descriptor to sleep on (see Progress
     * at the top), else the provider's own choice. */
    int r = open_ctx(c, FI_PROGRESS_MANUAL, err, sizeof err);
    if (r || c->fd < 0) {
        close_endpoint(c);
        r = open_ctx(c, FI_PROGRESS_UNSPEC, err, sizeof err);
    }
    if (r) {
        ofi_ctx_destroy(c);
        return rcoll_view_error(v, RCOLL_ERR_SYSTEM, "ofi transport: %s", err);
    }
    /* With automatic progress a peer's write lands without a completion: nothing wakes a sleep
     * on the descriptor before its slice ends, and a plain sleep of the policy's (shorter)
     * slice serves better. */
    c->sleep_fd = c->fd >= 0 && c->info->domain_attr->data_progress == FI_PROGRESS_MANUAL;
    /* Signals as remote CQ data: where the target must look at its queue for a write to land
     * anyway (manual progress), writes stay in order, and the data has room (see the top). */
    c->cq_data = RCOLL_OFI_CQ_DATA && c->info->domain_attr->data_progress == FI_PROGRESS_MANUAL &&
                 c->order == OFI_ORDER_WAW && c->info->domain_attr->cq_data_size >= sizeof(uint64_t) &&
                 !(c->info->mode & FI_RX_CQ_DATA);
    rcoll_regcache_ops_t ops = {c, cache_reg, cache_dereg};
    const char *why = NULL;
    rcoll_regcache_init(&c->cache, (unsigned)v->cfg->reg_cache, &ops, &why);
    if (why)
        rcoll_view_log(v, RCOLL_LOG_WARN, "ofi transport: %s: user buffers are registered per call "
                       "(no registration cache)", why);
    rcoll_view_log(v, RCOLL_LOG_INFO, "ofi transport: provider %s, fabric %s, domain %s: %s ordering, "
                   "mr_mode 0x%llx, inject %zu bytes, %s, signals %s", c->prov,
                   c->info->fabric_attr->name, c->info->domain_attr->name, order_name(c->order),
                   (unsigned long long)c->mr_mode, c->inject,
                   c->sleep_fd ? "manual progress, sleeps on its wait descriptor"
                   : c->fd >= 0 ? "automatic progress" : "no wait descriptor",
                   c->cq_data ? "as remote CQ data" : "by a second write");
    *out = c;
    return RCOLL_OK;
}

/* ---- operation records ---- */

static int slab_add(ofi_ctx_t *c)
{
    size_t bytes = sizeof(ofi_slab_t) + SLAB_OPS * sizeof(ofi_op_t);
    void *mem = NULL;
    if (posix_memalign(&mem, 4096, bytes) != 0)
        return -1;
    memset(mem, 0, bytes);
    ofi_slab_t *s = mem;
    s->count = SLAB_OPS;
    if (c->mr_mode & FI_MR_LOCAL) {
        char err[128];
        if (rcoll_ofi_mr_register(c, s->ops, SLAB_OPS * sizeof(ofi_op_t), FI_READ | FI_WRITE, &s->mr,
                                  err, sizeof err) != 0) {
            free(s);
            return -1;
        }
    }
    void *desc = s->mr ? fi_mr_desc(s->mr) : NULL;
    for (unsigned i = 0; i < s->count; i++) {
        s->ops[i].desc = desc;
        s->ops[i].next_free = c->free_ops;
        c->free_ops = &s->ops[i];
    }
    s->next = c->slabs;
    c->slabs = s;
    return 0;
}

ofi_op_t *rcoll_ofi_op_new(ofi_net_t *n, int peer, unsigned flags)
{
    ofi_ctx_t *c = n->c;
    if (!c->free_ops && slab_add(c) != 0)
        return NULL;
    ofi_op_t *o = c->free_ops;
    c->free_ops = o->next_free;
    void *desc = o->desc;
    memset(o, 0, offsetof(ofi_op_t, buf));
    o->desc = desc;
    o->owner = n;
    o->peer = peer;
    o->flags = flags;
    o->in_use = true;
    c->live_ops++;
    return o;
}

void rcoll_ofi_op_free(ofi_ctx_t *c, ofi_op_t *o)
{
    if (!o)
        return;
    o->in_use = false;
    o->owner = NULL;
    o->next_free = c->free_ops;
    c->free_ops = o;
    c->live_ops--;
}

/* A team goes: its records still posted are left to their completions, held ones freed. */
static void detach_ops(ofi_ctx_t *c, ofi_net_t *n)
{
    for (ofi_slab_t *s = c->slabs; s; s = s->next)
        for (unsigned i = 0; i < s->count; i++) {
            ofi_op_t *o = &s->ops[i];
            if (!o->in_use || o->owner != n)
                continue;
            if ((o->flags & OFI_OP_KEEP) && o->done) {
                rcoll_ofi_op_free(c, o);
            } else {
                o->owner = NULL;
                o->abandoned = true;
            }
        }
}

/* ---- completions ---- */

static void op_complete(ofi_ctx_t *c, ofi_op_t *o, int err, const char *why)
{
    ofi_net_t *n = o->owner;
    if (n) {
        ofi_peer_t *p = &n->peer[o->peer];
        if (o->flags & OFI_OP_COUNTED) {
            n->outstanding--;
            p->inflight--;
        }
        if (o->flags & OFI_OP_BORROWED) {
            n->borrowed--;
            p->borrowed--;
        }
        if (o->flags & OFI_OP_UNORDERED)
            p->unordered--;
        if (err && !p->failed)
            snprintf(p->why, sizeof p->why, "%s", why);
        if (err && !(o->flags & OFI_OP_POLL))
            p->failed = true;
    }
    if ((o->flags & OFI_OP_KEEP) && !o->abandoned) {
        o->done = true;
        o->err = err;
    } else {
        rcoll_ofi_op_free(c, o);
    }
}

static unsigned read_error(ofi_ctx_t *c)
{
    struct fi_cq_err_entry e;
    memset(&e, 0, sizeof e);
    if (fi_cq_readerr(c->cq, &e, 0) != 1)
        return 0;
    const char *detail = fi_cq_strerror(c->cq, e.prov_errno, e.err_data, NULL, 0);
    char why[128];
    int err = e.err ? e.err : FI_EOTHER;
    snprintf(why, sizeof why, "libfabric %s: %s%s%s", c->prov, c->lib->strerror(err),
             detail && *detail ? ": " : "", detail ? detail : "");
    if (e.op_context)
        op_complete(c, (ofi_op_t *)e.op_context, err, why);
    return 1;
}

/* A peer's signal that came as remote CQ data (see the top): the word rises to the value whose
 * low bits came, the least one not below what the word holds; one that reads as a step of more
 * than OFI_STEP_MAX is older than what the word holds (a later plain write landed first) and is
 * dropped, as is one for a team gone. */
static void signal_arrived(ofi_ctx_t *c, uint64_t data)
{
    ofi_net_t *n = c->slot[data >> (64 - OFI_SLOT_BITS)];
    size_t off = (size_t)(data >> OFI_VALUE_BITS & ((1u << OFI_WORD_BITS) - 1)) * sizeof(uint64_t);
    if (!n || off + sizeof(uint64_t) > n->area_bytes)
        return;
    uint64_t *word = (uint64_t *)((char *)n->area + off);
    uint64_t old = __atomic_load_n(word, __ATOMIC_RELAXED);
    uint64_t step = (data - old) & OFI_VALUE_MASK;
    if (step <= OFI_STEP_MAX) /* else an older value than the word holds: dropped */
        __atomic_store_n(word, old + step, __ATOMIC_RELEASE);
}

unsigned rcoll_ofi_look_ctx(ofi_ctx_t *c)
{
    struct fi_cq_data_entry e[16];
    ssize_t r = fi_cq_read(c->cq, e, sizeof e / sizeof e[0]);
    unsigned got = 0;
    if (r > 0) {
        for (ssize_t i = 0; i < r; i++)
            if (e[i].flags & FI_REMOTE_CQ_DATA)
                signal_arrived(c, e[i].data);
            else if (e[i].op_context)
                op_complete(c, (ofi_op_t *)e[i].op_context, 0, NULL);
        got = (unsigned)r;
    } else if (r == -FI_EAVAIL) {
        got = read_error(c);
    }
    if (c->qpeers)
        rcoll_ofi_kick(c);
    return got;
}

unsigned rcoll_ofi_progress_ctx(ofi_ctx_t *c)
{
    unsigned n = 0, k;
    while ((k = rcoll_ofi_look_ctx(c)))
        n += k;
    return n;
}

static unsigned ofi_progress(rcoll_net_t *nn) { return rcoll_ofi_progress_ctx(((ofi_net_t *)nn)->c); }

static unsigned ofi_look(rcoll_net_t *nn) { return rcoll_ofi_look_ctx(((ofi_net_t *)nn)->c); }

/* ---- waits ---- */

rcoll_status_t rcoll_ofi_pause_net(ofi_net_t *n, rcoll_waiter_t *w)
{
    ofi_ctx_t *c = n->c;
    /* Something completed: the caller looks again at once (a sleep would last a slice). */
    if (rcoll_ofi_look_ctx(c))
        return rcoll_waiter_progressed(w);
    int fd = c->sleep_fd ? c->fd : -1;
    if (fd >= 0 && rcoll_waiter_is_sleeping(w)) {
        struct fid *f = &c->cq->fid;
        int r = fi_trywait(c->fabric, &f, 1);
        if (r == -FI_EAGAIN) { /* work pending in the provider: not a moment to sleep */
            sched_yield();
            return rcoll_waiter_progressed(w);
        }
        if (r != FI_SUCCESS)
            fd = -1;
    }
    rcoll_status_t st = rcoll_waiter_pause_fd(w, fd);
    /* After a sleep what woke it (a peer's write, manual progress) lands before the caller
     * looks at what it waits for. */
    if (rcoll_waiter_is_sleeping(w))
        rcoll_ofi_look_ctx(c);
    return st;
}

static rcoll_status_t ofi_pause(rcoll_net_t *nn, rcoll_waiter_t *w)
{
    return rcoll_ofi_pause_net((ofi_net_t *)nn, w);
}

bool rcoll_ofi_peer_lost(ofi_net_t *n, ofi_peer_t *p, const rcoll_waiter_t *w)
{
    const rcoll_view_t *v = n->v;
    if (p->failed)
        return true;
    if (!v->same_host[p->rank] || !v->process_gone)
        return false;
    if (w && !rcoll_waiter_is_sleeping(w) && (w->polls & 1023) != 0)
        return false; /* a system call: now and then only, until the wait sleeps */
    if (!v->process_gone(v->owner, p->rank))
        return false;
    p->failed = true;
    snprintf(p->why, sizeof p->why, "its process ended");
    return true;
}

rcoll_status_t rcoll_ofi_gone(ofi_net_t *n, const ofi_peer_t *p, const char *what)
{
    const char *why = p->why[0] ? p->why : "libfabric reports it";
    if (!what)
        return rcoll_view_error(n->v, RCOLL_ERR_PEER_DEAD, "%s: rank %d is gone (%s)",
                                rcoll_view_coll(n->v, "ofi"), p->rank, why);
    return rcoll_view_error(n->v, RCOLL_ERR_PEER_DEAD, "%s: %s rank %d: the peer is gone (%s)",
                            rcoll_view_coll(n->v, "ofi"), what, p->rank, why);
}

rcoll_status_t rcoll_ofi_no_memory(ofi_net_t *n)
{
    return rcoll_view_error(n->v, RCOLL_ERR_NOMEM, "ofi transport: out of memory");
}

static int ofi_event_fd(rcoll_net_t *nn) { return ((ofi_net_t *)nn)->c->fd; }

static bool ofi_peer_failed(const rcoll_net_t *nn, int peer)
{
    return ((const ofi_net_t *)nn)->peer[peer].failed;
}

static bool ofi_contacted(const rcoll_net_t *nn, int peer)
{
    return ((const ofi_net_t *)nn)->peer[peer].contacted;
}

static void ofi_hello_at(rcoll_net_t *nn, size_t signal_off) { ((ofi_net_t *)nn)->hello_off = signal_off; }

/* ---- team ---- */

/* What a rank offers first (small: an out-of-band layer may limit a message to a few hundred
 * bytes), then its blob: provider name, endpoint name and the area's packed key, in the size the
 * largest offer needs. */
typedef struct {
    int32_t status;
    uint32_t prov_len, name_len, key_len;
    int32_t slot; /* this team's slot for signals as CQ data (-1: none) */
    uint64_t area_addr, mr_mode;
} ofi_offer_t;

#define OFI_BLOB_MAX (sizeof(((ofi_ctx_t *)0)->prov) + OFI_NAME_MAX + RCOLL_NET_KEY_MAX)

/* The exchange: offers, blobs and every rank's verdict on reaching its peers. The buffers are
 * made before the first exchange (the largest blob possible), so that a rank that gets this far
 * takes part in every exchange. */
typedef struct {
    ofi_offer_t mine, *all;
    unsigned char *mine_blob, *blobs;
    size_t blob;
    int32_t *reached;
} ofi_share_t;

static rcoll_status_t exchange(const rcoll_oob_t *oob, const void *mine, void *all, size_t len)
{
    return oob->allgather(mine, all, len, oob->coll_info) == 0 ? RCOLL_OK : RCOLL_ERR_BOOTSTRAP;
}

static int share_alloc(ofi_share_t *sh, int size)
{
    memset(sh, 0, sizeof *sh);
    sh->all = calloc((size_t)size, sizeof *sh->all);
    sh->mine_blob = calloc(1, OFI_BLOB_MAX);
    sh->blobs = calloc((size_t)size, OFI_BLOB_MAX);
    sh->reached = calloc((size_t)size, sizeof *sh->reached);
    return sh->all && sh->mine_blob && sh->blobs && sh->reached ? 0 : -1;
}

static void share_free(ofi_share_t *sh)
{
    free(sh->all);
    free(sh->mine_blob);
    free(sh->blobs);
    free(sh->reached);
}

static rcoll_status_t net_alloc(const rcoll_view_t *v, ofi_net_t **out)
{
    ofi_net_t *n = calloc(1, sizeof *n);
    *out = n;
    if (!n)
        return rcoll_view_error(v, RCOLL_ERR_NOMEM, "ofi transport: out of memory");
    n->v = v;
    n->peer = calloc((size_t)v->size, sizeof *n->peer);
    if (!n->peer)
        return rcoll_view_error(v, RCOLL_ERR_NOMEM, "ofi transport: out of memory");
    for (int r = 0; r < v->size; r++) {
        n->peer[r].net = n;
        n->peer[r].rank = r;
        n->peer[r].remote = v->local_index[r] < 0;
        n->peer[r].slot = -1;
    }
    n->slot = -1;
    return RCOLL_OK;
}

/* The context's shared state: threads creating teams at once, one creates it. */
static rcoll_status_t ctx_get(const rcoll_view_t *v, ofi_ctx_t **out)
{
    ofi_ctx_t **slot = rcoll_net_ctx_slot(v, &rcoll_net_ofi);
    rcoll_status_t st = RCOLL_OK;
    pthread_mutex_lock(v->net_lock);
    if (!*slot)
        st = ctx_create(v, slot);
    *out = *slot;
    pthread_mutex_unlock(v->net_lock);
    return st;
}

/* A slot for the team, where its peers' signals as CQ data find it (-1: none free, or signals
 * go by a second write here). Round robin, so that a slot freed is reused as late as possible. */
static int take_slot(ofi_net_t *n)
{
    ofi_ctx_t *c = n->c;
    if (!c->cq_data)
        return -1;
    pthread_mutex_lock(n->v->net_lock);
    for (unsigned i = 0; i < OFI_SLOTS && n->slot < 0; i++) {
        unsigned s = (c->next_slot + i) % OFI_SLOTS;
        if (!c->slot[s]) {
            c->slot[s] = n;
            n->slot = (int)s;
            c->next_slot = s + 1;
        }
    }
    pthread_mutex_unlock(n->v->net_lock);
    return n->slot;
}

static void free_slot(ofi_net_t *n)
{
    if (n->slot < 0)
        return;
    pthread_mutex_lock(n->v->net_lock);
    n->c->slot[n->slot] = NULL;
    pthread_mutex_unlock(n->v->net_lock);
    n->slot = -1;
}

/* Registers the area and describes this rank: offer and blob. */
static rcoll_status_t offer_fill(ofi_net_t *n, void *area, size_t bytes, ofi_share_t *sh)
{
    ofi_ctx_t *c = n->c;
    ofi_offer_t *o = &sh->mine;
    unsigned char *b = sh->mine_blob;
    o->prov_len = (uint32_t)strlen(c->prov);
    memcpy(b, c->prov, o->prov_len);
    size_t len = OFI_NAME_MAX;
    int r = fi_getname(&c->ep->fid, b + o->prov_len, &len);
    if (r || len > OFI_NAME_MAX)
        return rcoll_view_error(n->v, RCOLL_ERR_SYSTEM, "ofi transport: fi_getname: %s",
                                r ? c->lib->strerror(-r) : "name too long");
    o->name_len = (uint32_t)len;
    char err[160];
    uint64_t access = FI_REMOTE_READ | FI_REMOTE_WRITE | FI_READ | FI_WRITE;
    if (rcoll_ofi_mr_register(c, area, bytes, access, &n->area_mr, err, sizeof err) != 0)
        return rcoll_view_error(n->v, RCOLL_ERR_SYSTEM, "ofi transport: registering the %zu-byte "
                                "area: %s", bytes, err);
    n->area = area;
    n->area_bytes = bytes;
    n->area_desc = fi_mr_desc(n->area_mr);
    if (rcoll_ofi_pack_key(c, n->area_mr, (uintptr_t)area, b + o->prov_len + o->name_len,
                           &o->key_len) != 0)
        return rcoll_view_error(n->v, RCOLL_ERR_SYSTEM, "ofi transport: no key for the area");
    o->area_addr = (uintptr_t)area;
    o->mr_mode = c->mr_mode;
    o->slot = take_slot(n);
    return RCOLL_OK;
}

/* The provider rank r uses, as its blob names it. */
static const char *blob_prov(const ofi_share_t *sh, int r, char *out, size_t out_len)
{
    size_t len = sh->all[r].prov_len < out_len ? sh->all[r].prov_len : out_len - 1;
    memcpy(out, sh->blobs + (size_t)r * sh->blob, len);
    out[len] = '\0';
    return out;
}

/* Every rank judges the same offers: all agree. A rank that failed keeps its own message. */
static rcoll_status_t check_offers(const rcoll_view_t *v, const ofi_share_t *sh, bool failed_here)
{
    for (int r = 0; r < v->size; r++)
        if (sh->all[r].status)
            return failed_here ? RCOLL_ERR_SYSTEM
                               : rcoll_view_error(v, RCOLL_ERR_SYSTEM, "ofi transport: rank %d could "
                                                  "not set up libfabric (see its log)", r);
    return RCOLL_OK;
}

static rcoll_status_t check_blobs(const rcoll_view_t *v, const ofi_share_t *sh)
{
    char first[64], other[64];
    blob_prov(sh, 0, first, sizeof first);
    for (int r = 1; r < v->size; r++)
        if (strcmp(blob_prov(sh, r, other, sizeof other), first) || sh->all[r].mr_mode != sh->all[0].mr_mode)
            return rcoll_view_error(v, RCOLL_ERR_UNSUPPORTED, "ofi transport: rank 0 uses libfabric "
                                    "provider %s, rank %d %s (FI_PROVIDER must choose the same "
                                    "everywhere)", first, r, other);
    return RCOLL_OK;
}

/* The peer endpoint `name` in the address vector, inserted on first sight. */
static int av_lookup(ofi_ctx_t *c, const unsigned char *name, size_t len, fi_addr_t *out)
{
    for (int i = 0; i < c->naddrs; i++)
        if (c->addrs[i].len == len && memcmp(c->addrs[i].name, name, len) == 0) {
            *out = c->addrs[i].addr;
            return 0;
        }
    if (c->naddrs == c->addrs_cap) {
        int cap = c->addrs_cap ? 2 * c->addrs_cap : 16;
        void *a = realloc(c->addrs, (size_t)cap * sizeof *c->addrs);
        if (!a)
            return -FI_ENOMEM;
        c->addrs = a;
        c->addrs_cap = cap;
    }
    ofi_addr_t *a = &c->addrs[c->naddrs];
    int r = fi_av_insert(c->av, name, 1, &a->addr, 0, NULL);
    if (r != 1)
        return r < 0 ? r : -FI_EINVAL;
    a->len = len;
    memcpy(a->name, name, len);
    c->naddrs++;
    *out = a->addr;
    return 0;
}

static rcoll_status_t connect_peers(ofi_net_t *n, const ofi_share_t *sh)
{
    ofi_ctx_t *c = n->c;
    for (int r = 0; r < n->v->size; r++) {
        ofi_peer_t *p = &n->peer[r];
        const ofi_offer_t *o = &sh->all[r];
        const unsigned char *name = sh->blobs + (size_t)r * sh->blob + o->prov_len;
        if (!p->remote)
            continue;
        int e = av_lookup(c, name, o->name_len, &p->addr);
        if (e)
            return rcoll_view_error(n->v, RCOLL_ERR_SYSTEM, "ofi transport: the address of rank %d "
                                    "is unusable here: %s", r, c->lib->strerror(-e));
        uint64_t start;
        if (rcoll_ofi_unpack_key(c, name + o->name_len, o->key_len, &start, &p->area_key,
                                 &p->area_key_mapped) != 0)
            return rcoll_view_error(n->v, RCOLL_ERR_SYSTEM, "ofi transport: the key of rank %d's "
                                    "area is unusable here", r);
        p->area_addr = o->area_addr;
        p->slot = o->slot;
        p->cq_data = p->slot >= 0 && c->cq_data;
    }
    return RCOLL_OK;
}

static void ofi_destroy(rcoll_net_t *nn)
{
    ofi_net_t *n = (ofi_net_t *)nn;
    if (!n)
        return;
    ofi_ctx_t *c = n->c;
    if (c) {
        /* What is still in flight finishes (or fails) before the memory goes: bounded. */
        uint64_t until = rcoll_now_ns() + 1000000000ull;
        while (n->outstanding > 0 && rcoll_now_ns() < until)
            if (!rcoll_ofi_progress_ctx(c))
                sched_yield();
        rcoll_ofi_drop_queues(n);
        detach_ops(c, n);
        rcoll_ofi_release_registrations(nn);
        rcoll_ofi_forget_keys(n);
        for (int r = 0; n->peer && r < n->v->size; r++)
            if (n->peer[r].area_key_mapped)
                fi_mr_unmap_key(c->domain, n->peer[r].area_key);
        free_slot(n);
        close_fid(&n->area_mr);
    }
    for (int r = 0; n->peer && r < n->v->size; r++)
        free(n->peer[r].sent);
    free(n->peer);
    free(n);
}

static rcoll_status_t bootstrap_failed(const rcoll_view_t *v)
{
    return rcoll_view_error(v, RCOLL_ERR_BOOTSTRAP, "ofi transport: the out-of-band exchange failed");
}

/* The size of the largest blob, rounded to 8 bytes (the same on every rank). */
static size_t blob_size(const ofi_share_t *sh, int size)
{
    size_t blob = 8;
    for (int r = 0; r < size; r++) {
        size_t b = (size_t)sh->all[r].prov_len + sh->all[r].name_len + sh->all[r].key_len;
        blob = b > blob ? b : blob;
    }
    return (blob + 7) & ~(size_t)7;
}

/* The exchanges (see the top), each taken part in by every rank or by none. */
static rcoll_status_t share(ofi_net_t *n, const rcoll_view_t *v, const rcoll_oob_t *oob,
                            ofi_share_t *sh, rcoll_status_t st)
{
    sh->mine.status = st != RCOLL_OK;
    if (exchange(oob, &sh->mine, sh->all, sizeof sh->mine) != RCOLL_OK)
        return bootstrap_failed(v);
    rcoll_status_t agreed = check_offers(v, sh, st != RCOLL_OK);
    if (agreed != RCOLL_OK)
        return agreed; /* every rank saw the same offers: none goes on */
    sh->blob = blob_size(sh, v->size);
    if (sh->blob > OFI_BLOB_MAX || exchange(oob, sh->mine_blob, sh->blobs, sh->blob) != RCOLL_OK)
        return bootstrap_failed(v);
    if ((agreed = check_blobs(v, sh)) != RCOLL_OK)
        return agreed;
    int32_t ok = connect_peers(n, sh) == RCOLL_OK;
    if (exchange(oob, &ok, sh->reached, sizeof ok) != RCOLL_OK)
        return bootstrap_failed(v);
    for (int r = 0; r < v->size; r++)
        if (!sh->reached[r])
            return !ok ? RCOLL_ERR_SYSTEM
                       : rcoll_view_error(v, RCOLL_ERR_SYSTEM, "ofi transport: rank %d could not "
                                          "reach its peers (see its log)", r);
    return RCOLL_OK;
}

/* Collective: see the top. */
static rcoll_status_t ofi_create(const rcoll_view_t *v, const rcoll_oob_t *oob, void *area,
                                 size_t area_bytes, rcoll_net_t **out)
{
    *out = NULL;
    ofi_share_t sh;
    ofi_net_t *n = NULL;
    rcoll_status_t st;
    if (share_alloc(&sh, v->size) != 0) { /* no room to take part: the peers' exchange fails too */
        st = rcoll_view_error(v, RCOLL_ERR_NOMEM, "ofi transport: out of memory");
    } else {
        st = net_alloc(v, &n);
        if (st == RCOLL_OK)
            st = ctx_get(v, &n->c);
        if (st == RCOLL_OK)
            st = offer_fill(n, area, area_bytes, &sh);
        st = share(n, v, oob, &sh, st);
    }
    share_free(&sh);
    if (st != RCOLL_OK) {
        ofi_destroy(n ? &n->base : NULL);
        return st;
    }
    n->base.ops = &rcoll_net_ofi;
    n->base.puts_by_message = false;
    *out = &n->base;
    return RCOLL_OK;
}

const rcoll_net_ops_t rcoll_net_ofi = {
    .name = "ofi",
    .ctx_destroy = ofi_ctx_destroy,
    .ctx_look = rcoll_ofi_look_ctx,
    .cache_stats = ofi_cache_stats,
    .create = ofi_create,
    .destroy = ofi_destroy,
    .reg = rcoll_ofi_reg,
    .release_registrations = rcoll_ofi_release_registrations,
    .write = rcoll_ofi_write,
    .put_user = rcoll_ofi_put_user,
    .send_user = rcoll_ofi_send_user,
    .deliver_held = rcoll_ofi_deliver_held,
    .fence = rcoll_ofi_fence,
    .get = rcoll_ofi_get,
    .get_user = rcoll_ofi_get_user,
    .poll = rcoll_ofi_poll,
    .quiet = rcoll_ofi_quiet,
    .progress = ofi_progress,
    .look = ofi_look,
    .pause = ofi_pause,
    .event_fd = ofi_event_fd,
    .peer_failed = ofi_peer_failed,
    .contacted = ofi_contacted,
    .hello_at = ofi_hello_at,
};
