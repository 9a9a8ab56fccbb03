/* ofi: what the two halves of the libfabric network channel share (ofi.c: context, completions,
 * waits, team creation and destruction; rma.c: the operations). The design is described at the
 * top of ofi.c. Nothing here is visible outside src/net/ofi/ but the ops table (net.h). */
#ifndef RCOLL_NET_OFI_OFI_H
#define RCOLL_NET_OFI_OFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

#include "net/net.h"
#include "net/regcache.h"
#include "signal/wait.h"
#include "transport/view.h"

/* Small data travels from a copy in its record, small reads land in the record: a pushed
 * publication (4 KB and its line) fits. */
#define OFI_OP_BUF (4096 + 128)
/* The longest endpoint name (fi_getname) a rank can advertise. */
#define OFI_NAME_MAX 256
/* Registrations of local buffers one call may hold when the registration cache is off and the
 * provider wants local buffers registered (FI_MR_LOCAL). */
#define OFI_LOCAL_REGS 4

/* A signal carried as remote CQ data (see the top of ofi.c): 64 bits = the target team's slot
 * in the target's context | the signal word's index in its area | the value's low bits. */
#define OFI_SLOT_BITS 8
#define OFI_WORD_BITS 20
#define OFI_VALUE_BITS (64 - OFI_SLOT_BITS - OFI_WORD_BITS)
#define OFI_SLOTS (1u << OFI_SLOT_BITS)
#define OFI_VALUE_MASK ((UINT64_C(1) << OFI_VALUE_BITS) - 1)
/* The largest step of a word a signal as CQ data carries: a step back (an entry read after a
 * later value landed by a plain write) then reads as more than this, and is dropped. */
#define OFI_STEP_MAX (OFI_VALUE_MASK >> 1)

/* A signal word of a peer's area and the value this rank last raised it to (one entry of the
 * peer's table, open addressing, never evicted: see cq_signal in rma.c). */
typedef struct {
    uint32_t word; /* index + 1 (0: empty) */
    uint64_t value;
} ofi_sent_t;

/* How a signal is kept behind the data written before it to the same peer. */
typedef enum {
    OFI_ORDER_WAW,      /* the provider keeps writes to one peer in order (FI_ORDER_WAW) */
    OFI_ORDER_FENCE,    /* a signal is posted with FI_FENCE */
    OFI_ORDER_DELIVERY, /* a signal is queued until all before it was delivered (FI_DELIVERY_COMPLETE) */
} ofi_order_t;

typedef struct ofi_net ofi_net_t;

enum {
    OFI_OP_COUNTED = 1,   /* a write: counted in outstanding and the peer's inflight */
    OFI_OP_UNORDERED = 2, /* posted with FI_DELIVERY_COMPLETE: counted in the peer's unordered */
    OFI_OP_KEEP = 4,      /* someone waits for it: completion marks it done, does not free it */
    OFI_OP_POLL = 8,      /* the read a poll keeps in flight: a failure is no verdict on the peer */
    OFI_OP_BORROWED = 16, /* reads the caller's buffer until it completes: counted in borrowed */
};

/* One posted operation. What the provider may still touch after a wait for it gave up (a dead
 * or stuck peer) lives here, not on the caller's stack: the context, a copy of small data, the
 * landing buffer of small reads. An abandoned record is freed at its completion (or with the
 * endpoint). Records come from registered slabs (one descriptor each, for FI_MR_LOCAL). */
typedef struct ofi_op {
    struct fi_context2 fctx; /* the provider's while posted (FI_CONTEXT, FI_CONTEXT2 modes) */
    struct ofi_op *next_free;
    ofi_net_t *owner;        /* the team that posted it (NULL: that team is gone) */
    int peer;
    unsigned flags;
    bool in_use, done, abandoned;
    bool queued;             /* waits in its peer's queue, not yet posted */
    int err;                 /* a failed completion: its (positive) error number */
    size_t len, off;         /* a poll: what it reads; a queued write: its length */
    struct ofi_op *qnext;    /* a queued write: the next in its peer's queue */
    uint64_t raddr, key, post_flags; /* ... where it goes */
    uint64_t cq_data;        /* ... its remote CQ data (with FI_REMOTE_CQ_DATA in post_flags) */
    void *desc;              /* the local descriptor of buf */
    unsigned char buf[OFI_OP_BUF] __attribute__((aligned(64)));
} ofi_op_t;

typedef struct ofi_slab {
    struct ofi_slab *next;
    struct fid_mr *mr; /* FI_MR_LOCAL: the whole slab, registered */
    unsigned count;
    ofi_op_t ops[];
} ofi_slab_t;

/* A peer endpoint already in the address vector (inserted once per context, kept until its
 * end: teams share the peers' endpoints and the connections libfabric makes to them). */
typedef struct {
    size_t len;
    unsigned char name[OFI_NAME_MAX];
    fi_addr_t addr;
} ofi_addr_t;

/* libfabric's functions that its headers do not define inline: rcoll does not link libfabric,
 * it opens it when a team first uses the channel (lib.c). */
typedef struct {
    int (*getinfo)(uint32_t version, const char *node, const char *service, uint64_t flags,
                   const struct fi_info *hints, struct fi_info **info);
    void (*freeinfo)(struct fi_info *info);
    struct fi_info *(*dupinfo)(const struct fi_info *info);
    int (*fabric)(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context);
    const char *(*strerror)(int errnum);
} ofi_lib_t;

/* The functions, libfabric opened on the first call (NULL if it cannot be: the reason in err). */
const ofi_lib_t *rcoll_ofi_lib(char *err, size_t err_len);

struct rcoll_net_ctx {
    const ofi_lib_t *lib;
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_ep *ep;
    struct fid_cq *cq;
    struct fid_av *av;
    int fd;                  /* the completion queue's wait descriptor (-1: none) */
    bool sleep_fd;           /* pause sleeps on it (manual progress: a peer's write wakes it) */
    uint64_t mr_mode;
    size_t inject, max_msg, max_waw;
    ofi_order_t order;
    uint64_t next_key;       /* keys this process chooses (no FI_MR_PROV_KEY) */
    ofi_slab_t *slabs;
    ofi_op_t *free_ops;
    long live_ops;           /* records in use (posted or held) */
    ofi_addr_t *addrs;
    int naddrs, addrs_cap;
    struct ofi_peer *qpeers; /* peers (of any team) with queued writes */
    bool cq_data;            /* signals may travel as remote CQ data (see the top of ofi.c) */
    struct ofi_net *slot[OFI_SLOTS]; /* teams by the slot their peers name in CQ data */
    unsigned next_slot;      /* slots are handed out round robin: a freed one is reused late */
    rcoll_regcache_t cache;  /* user buffers */
    char prov[48];           /* provider name (every rank must use the same) */
};
typedef struct rcoll_net_ctx ofi_ctx_t;

typedef struct ofi_peer {
    ofi_net_t *net;
    int rank;
    bool remote, contacted, failed;
    bool fence_next;          /* the next write lands after all before it (fence was called) */
    fi_addr_t addr;
    uint64_t area_addr;       /* the peer's area: where it starts in its address space */
    uint64_t area_key;
    int slot;                 /* the peer's team slot for CQ data (-1: none) */
    bool cq_data;             /* signals to the peer may go as CQ data (its slot, the context) */
    ofi_sent_t *sent;         /* what this rank last raised the peer's signal words to */
    uint32_t sent_cap, sent_used;
    bool area_key_mapped;     /* FI_MR_RAW: area_key came from fi_mr_map_raw */
    long inflight;            /* writes to the peer not yet completed (queued ones included) */
    long unordered;           /* ... of them posted with FI_DELIVERY_COMPLETE, not yet delivered */
    long borrowed;            /* ... of them reading the caller's buffer */
    uint64_t user_id;         /* FI_MR_RAW: the user buffer whose key is mapped below */
    uint64_t user_key, user_base;
    ofi_op_t *poll;           /* the read rcoll_net_poll keeps in flight (NULL: none) */
    /* Writes that must land after what is not yet delivered (a signal behind writes posted with
     * FI_DELIVERY_COMPLETE), in order; posted as deliveries complete (rcoll_ofi_kick). */
    ofi_op_t *qhead, *qtail;
    struct ofi_peer *qnext_peer; /* on the context's list of peers with a queue */
    bool on_qlist;
    char why[128];            /* what the network last reported of the peer */
} ofi_peer_t;

struct ofi_net {
    rcoll_net_t base;
    const rcoll_view_t *v;
    ofi_ctx_t *c;
    void *area;
    size_t area_bytes;
    struct fid_mr *area_mr;
    void *area_desc;
    ofi_peer_t *peer;
    long outstanding;         /* writes not yet completed (queued ones included) */
    long borrowed;            /* ... of them still reading the caller's buffer (quiet) */
    long queued;              /* ... of them waiting in a peer's queue (quiet) */
    size_t hello_off;         /* word in a peer's area raised on first contact (0: none) */
    int slot;                 /* this team's slot in the context (-1: none) */
    rcoll_reg_entry_t call_reg;                   /* cache off: this call's advertised buffer */
    rcoll_reg_entry_t local_reg[OFI_LOCAL_REGS];  /* cache off, FI_MR_LOCAL: local buffers */
};

/* ---- ofi.c ---- */
ofi_op_t *rcoll_ofi_op_new(ofi_net_t *n, int peer, unsigned flags);
void rcoll_ofi_op_free(ofi_ctx_t *c, ofi_op_t *o);
/* One read of the completion queue (completions handled); how many it brought. */
unsigned rcoll_ofi_look_ctx(ofi_ctx_t *c);
unsigned rcoll_ofi_progress_ctx(ofi_ctx_t *c);
rcoll_status_t rcoll_ofi_pause_net(ofi_net_t *n, rcoll_waiter_t *w);
/* The peer is known gone: the network said so, or (same host, checked now and then by the
 * waiter's phase) its process has ended. */
bool rcoll_ofi_peer_lost(ofi_net_t *n, ofi_peer_t *p, const rcoll_waiter_t *w);
rcoll_status_t rcoll_ofi_gone(ofi_net_t *n, const ofi_peer_t *p, const char *what);
rcoll_status_t rcoll_ofi_no_memory(ofi_net_t *n);
/* Registers [addr, addr+len) with `access` (bound to the endpoint where the provider wants):
 * 0, or -1 with the reason in err. */
int rcoll_ofi_mr_register(ofi_ctx_t *c, void *addr, size_t len, uint64_t access, struct fid_mr **mr,
                          char *err, size_t err_len);
/* A key as peers need it: {registration start, key} or {start, raw base, raw key} (FI_MR_RAW). */
int rcoll_ofi_pack_key(ofi_ctx_t *c, struct fid_mr *mr, uint64_t start, unsigned char *out,
                       uint32_t *len);
/* The reverse at the peer; *mapped: the key must be released with fi_mr_unmap_key. */
int rcoll_ofi_unpack_key(ofi_ctx_t *c, const unsigned char *in, uint32_t len, uint64_t *start,
                         uint64_t *key, bool *mapped);
/* The address an RMA names for `addr` in a peer's registration starting at `start`. */
static inline uint64_t rcoll_ofi_raddr(const ofi_ctx_t *c, uint64_t start, uint64_t addr)
{
    return (c->mr_mode & FI_MR_VIRT_ADDR) ? addr : addr - start;
}

/* ---- rma.c ---- */
rcoll_status_t rcoll_ofi_reg(rcoll_net_t *nn, void *addr, size_t len, rcoll_net_advert_t *out);
void rcoll_ofi_release_registrations(rcoll_net_t *nn);
rcoll_status_t rcoll_ofi_write(rcoll_net_t *nn, int peer, const void *src, size_t len, size_t area_off,
                               size_t signal_off, uint64_t value);
rcoll_status_t rcoll_ofi_put_user(rcoll_net_t *nn, int peer, const void *src, size_t len,
                                  const rcoll_net_advert_t *adv, size_t offset);
rcoll_status_t rcoll_ofi_send_user(rcoll_net_t *nn, int peer, const void *src, size_t len,
                                   size_t line_off, size_t adv_off, uint64_t seq, size_t offset,
                                   size_t signal_off, uint64_t value);
void rcoll_ofi_deliver_held(rcoll_net_t *nn);
rcoll_status_t rcoll_ofi_fence(rcoll_net_t *nn, int peer);
rcoll_status_t rcoll_ofi_get(rcoll_net_t *nn, int peer, void *dst, size_t len, size_t area_off);
rcoll_status_t rcoll_ofi_get_user(rcoll_net_t *nn, int peer, void *dst, size_t len,
                                  const rcoll_net_advert_t *adv, size_t offset);
int rcoll_ofi_poll(rcoll_net_t *nn, int peer, void *dst, size_t len, size_t area_off);
rcoll_status_t rcoll_ofi_quiet(rcoll_net_t *nn);
/* Releases the mapped user key of every peer (FI_MR_RAW), at team destruction. */
void rcoll_ofi_forget_keys(ofi_net_t *n);
/* Posts the queued writes whose turn has come (after every look at the completion queue). */
void rcoll_ofi_kick(ofi_ctx_t *c);
/* A team goes: its queued writes are dropped, its peers leave the context's list. */
void rcoll_ofi_drop_queues(ofi_net_t *n);

#endif
