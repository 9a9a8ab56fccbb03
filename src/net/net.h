/* The network-channel interface: how the node transport reaches a rank on another node.
 *
 * The node transport (src/transport/node.c) routes every peer: a rank on its node to shared
 * memory, a rank on another node to the team's network channel. A channel moves bytes between
 * the ranks' *areas* (each rank's part of its node's shared segment: signal lines, inbox,
 * outbox, the same layout everywhere, addressed by offset) and user buffers the ranks
 * advertise; it knows nothing of collectives, of the segment layout, or of the team (it gets a
 * rcoll_view_t). Implementations live in their own folder (src/net/ucx/, src/net/ofi/); the
 * factory in net.c chooses one by RCOLL_NET=auto|ucx|ofi. Adding one: docs/contributing.md.
 *
 * What a channel provides (one vtable, rcoll_net_ops_t):
 * - per context: shared state (worker or domain, the registration cache) created by the first
 *   team that spans nodes, destroyed with the context;
 * - create (collective over the team, out-of-band): connect/advertise every rank's area;
 * - write: data into a peer's area, then a 64-bit signal word in its area raised to a value,
 *   one ordered operation (put with signal);
 * - put_user / send_user: data into a user buffer the peer advertised (with the packed key the
 *   peer published, or by message where the network emulates RMA), then the signal;
 * - get / get_user: reads from a peer's area or advertised buffer, complete on return;
 * - poll: a non-blocking read of a peer's word kept in flight (for what a peer cannot write to
 *   me, such as its advertisement);
 * - fence and quiet: ordering and local completion;
 * - progress, look and pause: the channel's progress, one look, one pause of a wait (spin,
 *   yield or sleep on the channel's file descriptor, `event_fd`);
 * - register / release_registrations: user buffers through the registration cache
 *   (src/net/regcache.h), described for peers in a rcoll_net_advert_t;
 * - liveness: whether the network reported a peer gone, whether a peer was ever contacted.
 *
 * Errors are reported through the view (the team's last error) and returned as a status. */
#ifndef RCOLL_NET_NET_H
#define RCOLL_NET_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "rcoll/rcoll.h"
#include "signal/wait.h"
#include "transport/view.h"

typedef struct rcoll_net rcoll_net_t;
typedef struct rcoll_net_ctx rcoll_net_ctx_t;

/* The most channels one build has: the context keeps a slot of per-context state for each, in
 * the order of rcoll_net_channels. */
#define RCOLL_NET_SLOTS 4

/* The largest packed key of a user buffer a rank can advertise. */
#define RCOLL_NET_KEY_MAX 448
/* The largest word rcoll_net_poll keeps in flight. */
#define RCOLL_NET_POLL_MAX 1024
/* As signal_off of write and send_user: no signal. */
#define RCOLL_NET_NO_SIGNAL ((size_t)-1)

/* The remote side of a user buffer a rank advertised: what a peer needs to reach it. */
typedef struct {
    uint64_t addr, len, id; /* id 0: not registered */
    uint32_t key_len;
    unsigned char key[RCOLL_NET_KEY_MAX];
} rcoll_net_advert_t;

typedef struct rcoll_net_ops {
    const char *name; /* as RCOLL_NET names it: letters, digits and _, lower case */
    /* ---- per context ---- */
    void (*ctx_destroy)(rcoll_net_ctx_t *c);
    void (*cache_stats)(const rcoll_net_ctx_t *c, rcoll_reg_cache_stats_t *out);
    /* One look at the context's worker or completion queue: what the context's teams on other
     * nodes need from this process (a read of its memory that only its own progress serves,
     * over UCX tcp or a manual-progress provider) goes on while it waits in a team that has no
     * network of its own (a node team of a node-aware call). How much it did (0: nothing). */
    unsigned (*ctx_look)(rcoll_net_ctx_t *c);
    /* ---- per team ---- */
    /* Collective over the team: `area` is this rank's area of area_bytes (the same size on
     * every rank). The outcome is agreed by all ranks. */
    rcoll_status_t (*create)(const rcoll_view_t *v, const rcoll_oob_t *oob, void *area,
                             size_t area_bytes, rcoll_net_t **out);
    void (*destroy)(rcoll_net_t *n);
    /* Registers [addr, addr+len) through the registration cache (or for this call only, when
     * the cache is off) and describes it for peers. */
    rcoll_status_t (*reg)(rcoll_net_t *n, void *addr, size_t len, rcoll_net_advert_t *out);
    /* This rank has left the collective: registrations made for it alone may go. */
    void (*release_registrations)(rcoll_net_t *n);
    /* len bytes into the peer's area at `area_off`, then its 64-bit word at `signal_off`
     * (unless RCOLL_NET_NO_SIGNAL) raised to `value`, in order after everything written to the
     * peer before (and after put_user once fence was called). src may change on return. */
    rcoll_status_t (*write)(rcoll_net_t *n, int peer, const void *src, size_t len, size_t area_off,
                            size_t signal_off, uint64_t value);
    /* Data into a user buffer the peer advertised, at `offset` (striped over rails when large).
     * src must stay unchanged until quiet. */
    rcoll_status_t (*put_user)(rcoll_net_t *n, int peer, const void *src, size_t len,
                               const rcoll_net_advert_t *adv, size_t offset);
    /* Only where n->puts_by_message: the same as one message sent without waiting for the
     * peer's advertisement. The peer places the data in the buffer it advertised for seq (its
     * advertisement line at line_off, the rcoll_net_advert_t at adv_off of its area), holding
     * it until the peer enters seq if it came before, and raises its signal word after. */
    rcoll_status_t (*send_user)(rcoll_net_t *n, int peer, const void *src, size_t len,
                                size_t line_off, size_t adv_off, uint64_t seq, size_t offset,
                                size_t signal_off, uint64_t value);
    /* This rank has just entered a collective (its advertisement line raised): held single
     * copies for it are delivered now (see send_user). */
    void (*deliver_held)(rcoll_net_t *n);
    /* put_user to `peer` so far lands before anything written after. */
    rcoll_status_t (*fence)(rcoll_net_t *n, int peer);
    /* Reads, complete on return. */
    rcoll_status_t (*get)(rcoll_net_t *n, int peer, void *dst, size_t len, size_t area_off);
    rcoll_status_t (*get_user)(rcoll_net_t *n, int peer, void *dst, size_t len,
                               const rcoll_net_advert_t *adv, size_t offset);
    /* Keeps one read of [area_off, +len) (at most RCOLL_NET_POLL_MAX bytes) in flight per
     * peer: 1 when a fresh copy has landed in dst, 0 while in flight, or an error (< 0). */
    int (*poll)(rcoll_net_t *n, int peer, void *dst, size_t len, size_t area_off);
    /* Every put issued so far has left its source buffer. */
    rcoll_status_t (*quiet)(rcoll_net_t *n);
    /* Runs the channel until it has nothing more to do; how much it did (0: nothing). */
    unsigned (*progress)(rcoll_net_t *n);
    /* One look at the channel (one poll of its completion queue or sockets). */
    unsigned (*look)(rcoll_net_t *n);
    /* One pause of a wait for something a remote peer writes. */
    rcoll_status_t (*pause)(rcoll_net_t *n, rcoll_waiter_t *w);
    /* A file descriptor that becomes readable when the channel has work, or -1. */
    int (*event_fd)(rcoll_net_t *n);
    /* The network reported the connection to this peer broken. */
    bool (*peer_failed)(const rcoll_net_t *n, int peer);
    /* This rank has reached the peer at least once. */
    bool (*contacted)(const rcoll_net_t *n, int peer);
    /* On first contact with a peer, raise to 1 the 64-bit word at signal_off in its area
     * (called once, right after create; a channel may make first contact with every peer
     * then, as UCX does for small teams). */
    void (*hello_at)(rcoll_net_t *n, size_t signal_off);
} rcoll_net_ops_t;

/* Every channel's handle starts with this. */
struct rcoll_net {
    const rcoll_net_ops_t *ops;
    bool puts_by_message; /* single copies go by send_user, not put_user */
    /* The context's network hold (signal/wait.h), set by rcoll_net_create: every helper below
     * takes it around its call, so that the threads of a process (teams' progress threads, a
     * program's threads) never work the context's shared worker at once. A channel's own waits
     * let go of it while they pause (the team's wait policy names it). */
    rcoll_hold_t *hold;
};

/* The channels built into this library, in the order `auto` tries them (NULL-terminated). */
extern const rcoll_net_ops_t *const rcoll_net_channels[];

/* This channel's slot of per-context state (created by the first team of the context that
 * spans nodes, under v->net_lock; destroyed by ctx_destroy with the context). */
rcoll_net_ctx_t **rcoll_net_ctx_slot(const rcoll_view_t *v, const rcoll_net_ops_t *ops);
/* The factory: the channel RCOLL_NET chose (auto: the first built in), created collectively
 * over the team. With no channel built in, RCOLL_ERR_UNSUPPORTED and a message that says so. */
rcoll_status_t rcoll_net_create(const rcoll_view_t *v, const rcoll_oob_t *oob, void *area,
                                size_t area_bytes, rcoll_net_t **out);
/* The channel RCOLL_NET names (NULL: not built in; the message in `why`). */
const rcoll_net_ops_t *rcoll_net_choose(const rcoll_config_t *cfg, char *why, size_t why_len);
/* Per-context state of every channel. */
void rcoll_net_ctx_destroy_all(rcoll_net_ctx_t **slots);
void rcoll_net_cache_stats(rcoll_net_ctx_t *const *slots, rcoll_hold_t *hold, rcoll_reg_cache_stats_t *out);
/* Whether the context has a network channel context (some team of it spans nodes). */
bool rcoll_net_ctx_any(rcoll_net_ctx_t *const *slots);
/* One look at every channel context of the context (ops->ctx_look), under the hold; how much
 * they did. */
unsigned rcoll_net_ctx_look_all(rcoll_net_ctx_t *const *slots, rcoll_hold_t *hold);

/* The helpers: each calls the channel under the hold (struct rcoll_net). */
static inline void rcoll_net_destroy(rcoll_net_t *n)
{
    if (!n)
        return;
    rcoll_hold_t *hold = n->hold;
    bool h = rcoll_hold_take(hold);
    n->ops->destroy(n);
    rcoll_hold_give(hold, h);
}
static inline rcoll_status_t rcoll_net_register(rcoll_net_t *n, void *addr, size_t len,
                                                rcoll_net_advert_t *out)
{
    bool h = rcoll_hold_take(n->hold);
    rcoll_status_t st = n->ops->reg(n, addr, len, out);
    rcoll_hold_give(n->hold, h);
    return st;
}
static inline void rcoll_net_release_registrations(rcoll_net_t *n)
{
    bool h = rcoll_hold_take(n->hold);
    n->ops->release_registrations(n);
    rcoll_hold_give(n->hold, h);
}
static inline rcoll_status_t rcoll_net_write(rcoll_net_t *n, int peer, const void *src, size_t len,
                                             size_t area_off, size_t signal_off, uint64_t value)
{
    bool h = rcoll_hold_take(n->hold);
    rcoll_status_t st = n->ops->write(n, peer, src, len, area_off, signal_off, value);
    rcoll_hold_give(n->hold, h);
    return st;
}
static inline rcoll_status_t rcoll_net_put_user(rcoll_net_t *n, int peer, const void *src, size_t len,
                                                const rcoll_net_advert_t *adv, size_t offset)
{
    bool h = rcoll_hold_take(n->hold);
    rcoll_status_t st = n->ops->put_user(n, peer, src, len, adv, offset);
    rcoll_hold_give(n->hold, h);
    return st;
}
static inline rcoll_status_t rcoll_net_send_user(rcoll_net_t *n, int peer, const void *src,
                                                 size_t len, size_t line_off, size_t adv_off,
                                                 uint64_t seq, size_t offset, size_t signal_off,
                                                 uint64_t value)
{
    bool h = rcoll_hold_take(n->hold);
    rcoll_status_t st = n->ops->send_user(n, peer, src, len, line_off, adv_off, seq, offset,
                                          signal_off, value);
    rcoll_hold_give(n->hold, h);
    return st;
}
static inline bool rcoll_net_puts_by_message(const rcoll_net_t *n) { return n->puts_by_message; }
static inline void rcoll_net_deliver_held(rcoll_net_t *n)
{
    bool h = rcoll_hold_take(n->hold);
    n->ops->deliver_held(n);
    rcoll_hold_give(n->hold, h);
}
static inline rcoll_status_t rcoll_net_fence(rcoll_net_t *n, int peer)
{
    bool h = rcoll_hold_take(n->hold);
    rcoll_status_t st = n->ops->fence(n, peer);
    rcoll_hold_give(n->hold, h);
    return st;
}
static inline rcoll_status_t rcoll_net_get(rcoll_net_t *n, int peer, void *dst, size_t len, size_t area_off)
{
    bool h = rcoll_hold_take(n->hold);
    rcoll_status_t st = n->ops->get(n, peer, dst, len, area_off);
    rcoll_hold_give(n->hold, h);
    return st;
}
static inline rcoll_status_t rcoll_net_get_user(rcoll_net_t *n, int peer, void *dst, size_t len,
                                                const rcoll_net_advert_t *adv, size_t offset)
{
    bool h = rcoll_hold_take(n->hold);
    rcoll_status_t st = n->ops->get_user(n, peer, dst, len, adv, offset);
    rcoll_hold_give(n->hold, h);
    return st;
}
static inline int rcoll_net_poll(rcoll_net_t *n, int peer, void *dst, size_t len, size_t area_off)
{
    bool h = rcoll_hold_take(n->hold);
    int rc = n->ops->poll(n, peer, dst, len, area_off);
    rcoll_hold_give(n->hold, h);
    return rc;
}
static inline rcoll_status_t rcoll_net_quiet(rcoll_net_t *n)
{
    bool h = rcoll_hold_take(n->hold);
    rcoll_status_t st = n->ops->quiet(n);
    rcoll_hold_give(n->hold, h);
    return st;
}
/* progress or look under the hold: how much it did. */
static inline unsigned rcoll_net_held_work(rcoll_net_t *n, unsigned (*work)(rcoll_net_t *))
{
    bool h = rcoll_hold_take(n->hold);
    unsigned done = work(n);
    rcoll_hold_give(n->hold, h);
    return done;
}
static inline unsigned rcoll_net_progress(rcoll_net_t *n) { return rcoll_net_held_work(n, n->ops->progress); }
static inline unsigned rcoll_net_look(rcoll_net_t *n) { return rcoll_net_held_work(n, n->ops->look); }
/* The channel's pause lets go of the hold while it sleeps (through the waiter's policy). */
static inline rcoll_status_t rcoll_net_pause(rcoll_net_t *n, rcoll_waiter_t *w)
{
    bool h = rcoll_hold_take(n->hold);
    rcoll_status_t st = n->ops->pause(n, w);
    rcoll_hold_give(n->hold, h);
    return st;
}
static inline bool rcoll_net_peer_failed(const rcoll_net_t *n, int peer)
{
    bool h = rcoll_hold_take(n->hold);
    bool failed = n->ops->peer_failed(n, peer);
    rcoll_hold_give(n->hold, h);
    return failed;
}
static inline bool rcoll_net_contacted(const rcoll_net_t *n, int peer)
{
    bool h = rcoll_hold_take(n->hold);
    bool yes = n->ops->contacted(n, peer);
    rcoll_hold_give(n->hold, h);
    return yes;
}
static inline void rcoll_net_hello_at(rcoll_net_t *n, size_t signal_off)
{
    bool h = rcoll_hold_take(n->hold);
    n->ops->hello_at(n, signal_off);
    rcoll_hold_give(n->hold, h);
}

#endif
