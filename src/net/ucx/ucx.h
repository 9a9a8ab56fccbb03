/* The UCX network channel's own declarations, shared by its files: ucx.c (context, worker,
 * endpoints, the operations of net.h) and held.c (the receiving side of active messages: writes
 * into this rank's areas and single copies held until their receiver enters). */
#ifndef RCOLL_NET_UCX_UCX_H
#define RCOLL_NET_UCX_UCX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ucp/api/ucp.h>

#include "net/net.h"
#include "net/regcache.h"
#include "transport/view.h"

#define STRIPE_ALIGN 4096
/* Single copies by message from this size on go rendezvous: the receiver takes the data when it
 * has entered the collective (held until then: only the small request waits, not a receive
 * segment of UCX's with the data in it). At np=4 over UCX tcp, 256 KB-1 MB alltoall and
 * allgather took 2.0-2.4 ms forced against 2.6-2.9 ms with UCX's own choice (docs/tuning.md). */
#define RNDV_MIN (64 * 1024)

struct rcoll_net_ctx {
    ucp_context_h context;
    ucp_worker_h worker;
    int efd; /* the worker's event descriptor (-1: no wakeup support) */
    bool no_peer_errors; /* the transports cannot report a peer gone (UCX shared memory) */
    bool puts_by_message; /* single copy as active messages (RMA emulated: UCX tcp) */
    struct {             /* the areas of this process's live teams: where peers may write */
        uintptr_t start, end;
    } *areas;
    int nareas, areas_cap;
    rcoll_regcache_t cache; /* user buffers, registered with ucp_mem_map (rkey packed) */
    struct parked *parked, **parked_tail; /* single copies held until their receiver enters */
};
typedef struct rcoll_net_ctx ucx_ctx_t;
extern const rcoll_net_ops_t rcoll_net_ucx;

typedef struct peer peer_t;

#define AM_WRITE 17    /* the active message id of a write into a peer's memory */
#define AM_PUT_USER 18 /* ... of a single copy into the user buffer a peer advertised */

typedef struct {
    uint64_t line;   /* the receiver's advertisement line (value = seq) */
    uint64_t adv;    /* ... and its rcoll_net_advert_t (address, length) */
    uint64_t seq;
    uint64_t offset; /* in the advertised buffer */
    uint64_t signal; /* the signal word raised once the data is there (0: none) */
    uint64_t value;
} am_user_t;

/* A single copy that came before its receiver entered the collective (see am_put_user). */
typedef struct parked {
    struct parked *next;
    am_user_t h;
    void *data;
    size_t length;
    bool rndv; /* data is UCX's rendezvous descriptor (received later, or released), else our copy */
} parked_t;

typedef struct {
    uint64_t signal, value;
} landing_t;

typedef struct {
    uint64_t dst;    /* where the data goes, in the receiver's address space */
    uint64_t signal; /* then the signal word to raise (0: none) */
    uint64_t value;  /* ... to this value */
} am_write_t;

/* One blocking operation: what UCX may still touch after the wait for it gave up (a dead or
 * stuck peer) lives here, not on the caller's stack -- the completion flags, the message
 * header, a copy of small data, the landing buffer of small reads. An abandoned record is
 * freed by its callback whenever UCX completes or purges the request. */
#define OP_BUF (4096 + 128)
typedef struct {
    int done;
    ucs_status_t status;
    bool abandoned;
    am_write_t header;
    unsigned char buf[OP_BUF];
} op_t;

struct peer {
    struct ucx_net *u;
    int rank;
    bool remote;
    bool failed;
    bool rma_pending;         /* RMA puts went out since the last fence */
    ucp_ep_h *ep;             /* per rail, created on first use */
    ucp_rkey_h *area_rkey;    /* per rail */
    uint64_t area_addr;
    const unsigned char *area_rkey_buf;
    const unsigned char *worker_addr;
    uint64_t user_id;         /* the user buffer whose key is unpacked below */
    ucp_rkey_h *user_rkey;    /* per rail */
    op_t *poll;               /* the read ucx_poll keeps in flight (NULL: none) */
};

typedef struct ucx_net {
    rcoll_net_t base;
    ucx_ctx_t *c;
    void *area;               /* this rank's area (peers write into it) */
    const rcoll_view_t *v;
    int rails;
    peer_t *peer;
    unsigned char *blobs;     /* every rank's worker address and area key */
    ucp_mem_h area_memh;
    long outstanding;         /* puts not yet completed locally */
    size_t hello_off;         /* word in a peer's area raised on first contact (0: none) */
    rcoll_reg_entry_t call_reg; /* without a cache: this call's registration */
} ucx_net_t;


/* ---- held.c ---- */

/* The active-message handlers: a write into a live area of this process (AM_WRITE), and a
 * single copy into an advertised buffer (AM_PUT_USER), held when it came early. */
ucs_status_t ucx_am_write(void *arg, const void *header, size_t header_length, void *data,
                          size_t length, const ucp_am_recv_param_t *param);
ucs_status_t ucx_am_put_user(void *arg, const void *header, size_t header_length, void *data,
                             size_t length, const ucp_am_recv_param_t *param);
/* This rank has entered a collective: held single copies for it go in now. */
void ucx_deliver_held(rcoll_net_t *n);
/* The context goes: every held message is dropped. */
void ucx_drop_held(ucx_ctx_t *c);

#endif
