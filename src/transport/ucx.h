/* ucx: how the node transport reaches ranks on other nodes (UCP one-sided put/get/fence).
 *
 * Per rcoll context: one UCP context and worker and the registration cache of user buffers
 * (rcoll_ucx_ctx_t, created with the first team that spans nodes). Per team (rcoll_ucx_t):
 * worker addresses and every rank's registered area (its part of its node's shared segment:
 * signal lines, inbox, outbox) exchanged once at creation, endpoints created on first use,
 * `RCOLL_RAILS` endpoints per peer for striping large transfers.
 *
 * Addresses are offsets in the peer's area, or (for a user buffer the peer advertised) an
 * address with the packed key the peer published. Puts never block: their source must stay
 * unchanged until rcoll_ucx_quiet(); gets complete before they return. Every wait progresses
 * the worker and ends in an error at the team's timeout, or at once when UCX reports the peer
 * gone. */
#ifndef RCOLL_TRANSPORT_UCX_H
#define RCOLL_TRANSPORT_UCX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "signal/wait.h"
#include "rcoll/rcoll.h"

struct rcoll_team;
typedef struct rcoll_ucx_ctx rcoll_ucx_ctx_t;
typedef struct rcoll_ucx rcoll_ucx_t;

/* The largest packed key of a user buffer a rank can advertise. */
#define RCOLL_UCX_RKEY_MAX 448
#define RCOLL_UCX_POLL_MAX 1024

void rcoll_ucx_ctx_destroy(rcoll_ucx_ctx_t *c);

/* Collective over the team: `area` is this rank's area of area_bytes (the same size on every
 * rank). The outcome is agreed by all ranks. */
rcoll_status_t rcoll_ucx_create(struct rcoll_team *team, const rcoll_oob_t *oob, void *area,
                                size_t area_bytes, rcoll_ucx_t **out);
void rcoll_ucx_destroy(rcoll_ucx_t *u);

/* The remote side of a user buffer a peer advertised. */
typedef struct {
    uint64_t addr, len, id; /* id 0: not registered */
    uint32_t rkey_len;
    unsigned char rkey[RCOLL_UCX_RKEY_MAX];
} rcoll_ucx_advert_t;

/* Registers [addr, addr+len) through the registration cache (or for this call only, when the
 * cache is off) and describes it for peers. */
rcoll_status_t rcoll_ucx_register(rcoll_ucx_t *u, void *addr, size_t len, rcoll_ucx_advert_t *out);
/* This rank has left the collective: registrations made for it alone may go. */
void rcoll_ucx_release_registrations(rcoll_ucx_t *u);

#define RCOLL_UCX_NO_SIGNAL ((size_t)-1)
/* len bytes into the peer's area at `area_off`, then its 64-bit word at `signal_off` (unless
 * RCOLL_UCX_NO_SIGNAL) raised to `value`: one message, in order after everything written to
 * the peer before (and after RMA puts once rcoll_ucx_fence was called). src may change once
 * this returns. */
rcoll_status_t rcoll_ucx_write(rcoll_ucx_t *u, int peer, const void *src, size_t len,
                               size_t area_off, size_t signal_off, uint64_t value);
/* Data into a user buffer the peer advertised, striped over the rails when large. */
rcoll_status_t rcoll_ucx_put_user(rcoll_ucx_t *u, int peer, const void *src, size_t len,
                                  const rcoll_ucx_advert_t *adv, size_t offset);
/* The same as one active message (for transports that emulate RMA, see
 * rcoll_ucx_puts_by_message), sent without waiting for the peer's advertisement: the peer's
 * worker places the data in the buffer it advertised for seq (advertisement line
 * at line_off, advertisement at adv_off) at `offset` (UCX rendezvous when large), holding it
 * until the peer enters seq if it came before, and raises its signal word after. No key, no
 * flush, no round trip. */
rcoll_status_t rcoll_ucx_send_user(rcoll_ucx_t *u, int peer, const void *src, size_t len,
                                   size_t line_off, size_t adv_off, uint64_t seq, size_t offset,
                                   size_t signal_off, uint64_t value);
bool rcoll_ucx_puts_by_message(const rcoll_ucx_t *u);
/* This rank has just entered a collective (its advertisement line raised): single copies that
 * came for it before are delivered now (see rcoll_ucx_send_user). */
void rcoll_ucx_deliver_held(rcoll_ucx_t *u);
/* RMA puts to `peer` so far land before anything written after. */
rcoll_status_t rcoll_ucx_fence(rcoll_ucx_t *u, int peer);
/* Reads, complete on return. */
rcoll_status_t rcoll_ucx_get(rcoll_ucx_t *u, int peer, void *dst, size_t len, size_t area_off);
rcoll_status_t rcoll_ucx_get_user(rcoll_ucx_t *u, int peer, void *dst, size_t len,
                                  const rcoll_ucx_advert_t *adv, size_t offset);
/* Polling a peer's word without blocking: keeps one read of [area_off, +len) (at most
 * RCOLL_UCX_POLL_MAX bytes) in flight per peer; 1 when a fresh copy has landed in dst, 0 while in flight, or an error. */
int rcoll_ucx_poll(rcoll_ucx_t *u, int peer, void *dst, size_t len, size_t area_off);
/* Every put issued so far has left its source buffer. */
rcoll_status_t rcoll_ucx_quiet(rcoll_ucx_t *u);
/* Runs the worker until it has nothing more to do; returns how much it did (0: nothing). */
unsigned rcoll_ucx_progress(rcoll_ucx_t *u);
/* One look at the worker (over tcp: one epoll_wait, and a read per socket with data); returns
 * how much it did. A wait calls this once per pause and then looks at what it waits for:
 * running the worker dry cost one more empty epoll_wait per arrival, 0-3 us of a ~30 us small
 * collective where four ranks share two cores (docs/tuning.md). */
unsigned rcoll_ucx_look(rcoll_ucx_t *u);
/* One pause of a wait for something a remote peer writes (spin, yield, or sleep on the
 * worker's event descriptor). */
rcoll_status_t rcoll_ucx_pause(rcoll_ucx_t *u, rcoll_waiter_t *w);
/* UCX reported the connection to this peer broken. */
bool rcoll_ucx_peer_failed(const rcoll_ucx_t *u, int peer);
/* This rank has an endpoint to the peer (it reached it at least once). */
bool rcoll_ucx_contacted(const rcoll_ucx_t *u, int peer);
/* On first contact with a peer, raise to 1 the 64-bit word at signal_off in the peer's area
 * (this rank's own word there): the peer then knows it was contacted. */
void rcoll_ucx_hello_at(rcoll_ucx_t *u, size_t signal_off);

/* Counters of the context's registration cache. */
void rcoll_ucx_cache_stats(const rcoll_ucx_ctx_t *c, rcoll_reg_cache_stats_t *out);

#endif
