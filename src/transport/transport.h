/* The one-sided transport interface every algorithm is written against (BRIEF section 3).
 *
 * Every operation is tagged with the team's 64-bit sequence number `seq` of the collective it
 * serves and, inside it, a step; a signal's value is RCOLL_SIGNAL(seq, step) and waits are for
 * "at least", so flags are never reset and back-to-back collectives cannot confuse each other.
 * Each (receiver, source) pair has its own signal line, written by that source only.
 *
 * - put:        copy into the peer's inbox (its slot of the team's collective buffer) for this
 *               collective, then raise the peer's signal from me. Copy-based path.
 * - put_inline: up to RCOLL_INLINE_MAX bytes inside the signal's own cache line.
 * - put_small:  as put, into the peer's small inbox (small_inbox_bytes, 0: none): a ring as
 *               deep as the signal lines', where a put's ring is the boxes' (2 deep).
 * - put_parts:  as put, for a receiver that takes the message as it comes (copy_arrived): from
 *               RCOLL_PUT_PARTS_MIN bytes to a peer on this node it is written in parts, and its
 *               signal line tells how far it got.
 * - put_user:   single copy into the buffer the peer advertised when it entered the collective
 *               (CMA on shm, or a chunked copy through shared memory), then raise the signal;
 *               never past the advertised end (cut there, the call noted in tl->truncated).
 * - publish:    copy into my own outbox (inline in my published line when tiny) and raise my
 *               published word; every peer may then `get` it, or a part of it -- one copy in,
 *               one out per reader (on RDMA: a read of the peer's registered outbox).
 * - stage:      copy one part of a larger publication into my outbox without raising the
 *               published word: the algorithm tells readers of each part by a signal, and they
 *               `get` it while the next part is copied in (a pipelined one-to-many copy).
 * - peek:       what `get` would copy, read where it lies instead (a peer's outbox in shared
 *               memory on this node) while the reader is in the collective: a reduction folds
 *               it straight from there, one copy fewer; NULL where it must be copied.
 * - get_user:   single copy out of the buffer the peer advertised when it entered (the RDMA
 *               read; CMA process_vm_readv on shm). Only where `single_copy` holds; the peer
 *               must stay in the collective until the reader tells it (a signal) it is done.
 * - signal:     raise the signal only.
 * - events:     what a rank can wait for: a signal from a source, a peer's arrival (its
 *               advertisement; it tells that put_user to the peer may go, so a transport that
 *               holds early writes for their receiver reports it at once), the release word of
 *               a root (one-step release every rank polls), a peer's leaving a collective
 *               (it has finished with everything of that call, or passed it moving nothing).
 *
 * An algorithm never names a transport; a transport never knows which collective it serves. */
#ifndef RCOLL_TRANSPORT_H
#define RCOLL_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "signal/wait.h"
#include "transport/view.h"
#include "rcoll/rcoll.h"

#define RCOLL_INLINE_MAX RCOLL_LINE_PAYLOAD
/* put_parts of at least this size to a peer on this node go in parts its receiver copies out
 * as they come (copy_arrived; docs/tuning.md, "Copies in parts"). */
#define RCOLL_PUT_PART (4 * 1024)
#define RCOLL_PUT_PARTS_MIN (2 * RCOLL_PUT_PART)
/* As the step of put or put_user: move the data but raise no signal (more follows). */
#define RCOLL_NO_SIGNAL 0xffffu
#define RCOLL_SIGNAL(seq, step) (((uint64_t)(seq) << 16) | ((uint64_t)(step) + 1))

typedef enum {
    RCOLL_EV_SIGNAL,
    RCOLL_EV_ARRIVAL,
    RCOLL_EV_RELEASE,
    RCOLL_EV_PUBLISHED,
    RCOLL_EV_LEFT
} rcoll_event_kind_t;
typedef struct {
    rcoll_event_kind_t kind;
    int peer;      /* the source of the signal, the arriving peer, the releasing root, the
                    * leaving peer */
    uint64_t seq;
    unsigned step; /* signals only */
} rcoll_event_t;

typedef struct rcoll_tl rcoll_tl_t;

typedef struct {
    const char *name;
    /* Entering collective seq: announce arrival and advertise the `user_len` bytes at
     * `user_addr` for put_user and get_user (registered for other nodes when large). */
    rcoll_status_t (*enter)(rcoll_tl_t *tl, uint64_t seq, void *user_addr, size_t user_len);
    /* After the event `ev` (a signal or a publication of `ev->peer` for ev->seq) was seen: the
     * bytes its sender said it sent, where the line that carried the event tells at no cost --
     * a publication's length; for a signal raised by the source's put, put_inline or put_user
     * to me, what those sent since its previous such signal (on this node only; a signal
     * raised alone leaves the length as it was). False where it does not tell. A receiver compares with what it expects: sizes that differ
     * between ranks (an erroneous program) are found without an extra message. */
    bool (*sent_len)(rcoll_tl_t *tl, const rcoll_event_t *ev, size_t *len);
    /* Leaving collective seq: this rank has read everything it received for it, and what it
     * sent has left its buffers. */
    rcoll_status_t (*leave)(rcoll_tl_t *tl, uint64_t seq);
    void *(*inbox)(rcoll_tl_t *tl, uint64_t seq);
    void *(*small_inbox)(rcoll_tl_t *tl, uint64_t seq);
    rcoll_status_t (*put_small)(rcoll_tl_t *tl, int peer, uint64_t seq, unsigned step,
                                const void *src, size_t len, size_t inbox_offset);
    rcoll_status_t (*put)(rcoll_tl_t *tl, int peer, uint64_t seq, unsigned step, const void *src,
                          size_t len, size_t inbox_offset);
    rcoll_status_t (*put_parts)(rcoll_tl_t *tl, int peer, uint64_t seq, unsigned step, const void *src,
                                size_t len, size_t inbox_offset);
    rcoll_status_t (*put_inline)(rcoll_tl_t *tl, int peer, uint64_t seq, unsigned step,
                                 const void *src, size_t len);
    const void *(*inline_data)(rcoll_tl_t *tl, int source, uint64_t seq);
    /* The message of signal `step` from `source` that one put brought into my inbox at
     * [inbox_offset, inbox_offset + len) (any puts of it without a signal came first): copy to
     * dst what has arrived of it beyond the *done bytes already copied (a put from this node
     * is written in parts and says how far it got) and advance *done; true once its signal was
     * seen and all of it is copied. Never blocks. */
    bool (*copy_arrived)(rcoll_tl_t *tl, int source, uint64_t seq, unsigned step, void *dst, size_t len,
                         size_t inbox_offset, size_t *done);
    rcoll_status_t (*put_user)(rcoll_tl_t *tl, int peer, uint64_t seq, unsigned step,
                               const void *src, size_t len, size_t remote_offset);
    rcoll_status_t (*publish)(rcoll_tl_t *tl, uint64_t seq, const void *src, size_t len);
    /* Part [offset, offset+len) of a publication of `total` (> RCOLL_INLINE_MAX) bytes; the
     * first part (offset 0) waits until the outbox is free. No published word is raised. */
    rcoll_status_t (*stage)(rcoll_tl_t *tl, uint64_t seq, const void *src, size_t len, size_t offset,
                            size_t total);
    /* After the peer's RCOLL_EV_PUBLISHED for seq (or its signal for a staged part): copy len
     * bytes of what it published, from
     * `offset` on (a reader may take only its part). */
    rcoll_status_t (*get)(rcoll_tl_t *tl, int peer, uint64_t seq, void *dst, size_t len,
                          size_t offset);
    /* As get's conditions: the len bytes from `offset` of the peer's publication where they
     * lie, readable until this rank leaves seq (the peer reuses its outbox only after that),
     * or NULL where the transport cannot show them in place (then get). */
    const void *(*peek)(rcoll_tl_t *tl, int peer, uint64_t seq, size_t len, size_t offset);
    /* test, sent_len and peek of the peer's publication of seq in one step, for readers that
     * take whole publications: where it lies from `offset` once it is there, its whole length
     * in *total; NULL while it is not, or where the transport cannot show it in place (the
     * caller then tests and gets). */
    const void *(*peek_published)(rcoll_tl_t *tl, int peer, uint64_t seq, size_t offset, size_t *total);
    /* Waits for the peer's arrival, then reads len bytes at remote_offset of its advertised
     * buffer. RCOLL_ERR_UNSUPPORTED unless tl->single_copy. */
    rcoll_status_t (*get_user)(rcoll_tl_t *tl, int peer, uint64_t seq, void *dst, size_t len,
                               size_t remote_offset);
    void (*signal)(rcoll_tl_t *tl, int peer, uint64_t seq, unsigned step);
    void (*release)(rcoll_tl_t *tl, uint64_t seq);
    bool (*test)(rcoll_tl_t *tl, const rcoll_event_t *ev);
    /* Nothing is ready: one pause of the wait policy on `ev`, with the transport's progress. */
    rcoll_status_t (*pause)(rcoll_tl_t *tl, rcoll_waiter_t *w, const rcoll_event_t *ev);
    void (*destroy)(rcoll_tl_t *tl);
} rcoll_tl_ops_t;

enum { RCOLL_PULL_EVERY = -1, RCOLL_PULL_SIGNALLED = -2 };

struct rcoll_tl {
    const rcoll_tl_ops_t *ops;
    size_t inbox_bytes;   /* usable bytes of one inbox, and of one outbox */
    size_t small_inbox_bytes; /* of one small inbox (put_small), 0: none */
    size_t zcopy_threshold; /* messages of at least this many bytes go single copy */
    /* The same for the blocks of an exchange, where every rank sends and receives in one step
     * (allgather, alltoall): the copy path then copies each block twice on every core at once
     * (0: zcopy_threshold). */
    size_t zcopy_exchange;
    /* The same for the messages of the rooted collectives' copy path (coll/xfer.h): one side
     * copies in, the other out, and unchanged data is not written again (transport/copy.h)
     * (0: zcopy_threshold). */
    size_t zcopy_rooted;
    bool single_copy;     /* put_user is a true single copy (CMA), get_user works */
    /* ... but measured slower than two copies: the thresholds of single copy are lifted (the
     * copy path wherever it fits), and callers that cut data in parts cut them to fit. */
    bool single_copy_slow;
    /* The call last bound (set by the team at every call): a rooted collective other than a
     * reduction (bcast, scatter, gather and their v-forms), and the most ranks that put into
     * one receiver in it (a gather's root: all others; else one). Where single copy is slow, a
     * put the copy path cannot take streams through the receiver's bounce ring, which the
     * receiver copies out on its own core (transport/node.c): a gain where a receiver hears
     * from one rank and sends nothing meanwhile (np=2 bcast and gather of 2-16 MB 1.2-1.7x
     * faster than CMA), a loss in an exchange, where every core then copies twice (np=2
     * allgather 1-4 MB 1.3-1.6x slower), not measured for a root fed by many. */
    bool call_rooted;
    int call_fan_in;
    const rcoll_wait_policy_t *wait; /* the team's wait policy */
    uint64_t truncated;   /* the last call in which a single copy was cut at the end of what */
    int truncated_peer;   /* ... this peer advertised (its sizes differ from mine) */
    uint64_t block_slice_ns; /* the longest sleep the team's wait policy should take (0: its own) */
    /* Who reads this call's publication, for a publisher whose readers on other nodes read its
     * outbox and which therefore waits for their word as it leaves: RCOLL_PULL_EVERY (every
     * rank), one rank (reduce's root), or RCOLL_PULL_SIGNALLED (each reader signals the
     * publisher after its read, in the same call: nothing more to wait for, and a reader owes
     * no word). Set by the algorithm (on every rank: readers too) before it publishes or
     * reads; back to RCOLL_PULL_EVERY as the rank leaves. */
    int pull_reader;
    /* The nonblocking engine's board (transport/board.h): a team on one node whose ranks may
     * read and write each other's memory; NULL otherwise. */
    struct rcoll_board *board;
    /* A team whose segment an earlier team of the same processes left (RCOLL_SHM_POOL) numbers
     * its calls on from where that one stopped, so that every word left in the segment reads
     * as an older call: its first call takes first_seq + 1, its first board post first_nb_seq
     * + 1 (both 0 for a new segment). */
    uint64_t first_seq, first_nb_seq;
    /* Set by the team before destroy: its calls all ended in step (no wait failed, no request
     * outstanding), so its segment may serve a later team. */
    bool reusable;
};

/* What a rank brings for the transport to its team's first exchange (core's, which carries it
 * as plain bytes): whether its preparation failed (status, -errno) and the kept segments it
 * could take over (the segment pool, transport/node.c), so that a team that takes one over
 * needs no exchange of the transport's own. */
#define RCOLL_TL_HELLO_CAND 4
typedef struct {
    uint32_t ncand;
    int32_t status;
    uint32_t cma_ns, copy_ns, cma_set_slow; /* its process's rcoll_tl_probe_t */
    struct {
        uint64_t id, seq, nb_seq;
        uint32_t fits; /* bit 0: the layout of single copy measured fast, bit 1: slow */
        uint32_t pad;
    } cand[RCOLL_TL_HELLO_CAND];
} rcoll_tl_hello_t;

/* Whether a call of this kind (tl->call_rooted, tl->call_fan_in) may stream its puts where
 * single copy is slow: the node transport's rule, which rcoll-info --explain states too. */
static inline bool rcoll_tl_call_streams(bool rooted, int fan_in)
{
    return rooted && fan_in <= 1;
}

/* What a process measured of its machine once (rcoll_tl_probe, at context creation): a single
 * copy of 256 KB by CMA and the copy path's two copies of it, ns, the fastest of a few rounds
 * (0: not measured: no CMA, RCOLL_ZCOPY_THRESHOLD set, or RCOLL_CMA set to a verdict). Each rank's travels in its hello;
 * a team on one node goes by its first local rank's (transport/cma_probe.c). */
typedef struct {
    uint32_t cma_ns, copy_ns;
    uint32_t set_slow; /* RCOLL_CMA=slow: the verdict without a measurement */
} rcoll_tl_probe_t;
void rcoll_tl_probe(const rcoll_config_t *cfg, rcoll_tl_probe_t *out);
/* A single copy here is clearly slower than the copy path's two, even where its system call's
 * fixed cost is spread over 256 KB: the copy path wherever it fits. */
bool rcoll_tl_probe_cma_slow(const rcoll_tl_probe_t *p);

/* What a hello prepared on this rank (its memory, the kept segments it reserved), until
 * rcoll_tl_create or rcoll_tl_hello_drop consumes it. NULL: the preparation failed (the hello
 * says so). */
struct rcoll_tl_prep;

/* Fills rank `rank`'s hello for a team of `size` processes of a context with segment pool
 * `pool` (NULL: none), reserving what it offers (two threads creating teams at once never
 * offer the same). A team that fails before rcoll_tl_create drops the preparation. */
struct rcoll_tl_prep *rcoll_tl_hello(struct rcoll_seg_pool *pool, const rcoll_config_t *cfg,
                                     const rcoll_tl_probe_t *probe, int rank, int size,
                                     rcoll_tl_hello_t *out);
void rcoll_tl_hello_drop(struct rcoll_seg_pool *pool, struct rcoll_tl_prep *prep);

/* The transport factory: the node transport (shared memory on the node, the network channel
 * RCOLL_NET chose to other nodes), created collectively over the team described by `v`, from
 * every rank's hello (`hellos`, in rank order) and this rank's preparation (always consumed). */
rcoll_status_t rcoll_tl_create(const rcoll_view_t *v, const rcoll_oob_t *oob,
                               const rcoll_tl_hello_t *hellos, struct rcoll_tl_prep *prep,
                               rcoll_tl_t **out);

/* Wait until `ev` happened (the policy's spin/yield/block, then the team's timeout). */
rcoll_status_t rcoll_tl_wait(rcoll_tl_t *tl, const rcoll_event_t *ev);

static inline rcoll_event_t rcoll_ev_signal(int source, uint64_t seq, unsigned step)
{
    rcoll_event_t ev = {RCOLL_EV_SIGNAL, source, seq, step};
    return ev;
}
static inline rcoll_event_t rcoll_ev_arrival(int peer, uint64_t seq)
{
    rcoll_event_t ev = {RCOLL_EV_ARRIVAL, peer, seq, 0};
    return ev;
}
static inline rcoll_event_t rcoll_ev_published(int peer, uint64_t seq)
{
    rcoll_event_t ev = {RCOLL_EV_PUBLISHED, peer, seq, 0};
    return ev;
}
/* The peer has left collective seq (or a later one): its leave() for it. */
static inline rcoll_event_t rcoll_ev_left(int peer, uint64_t seq)
{
    rcoll_event_t ev = {RCOLL_EV_LEFT, peer, seq, 0};
    return ev;
}
static inline rcoll_event_t rcoll_ev_release(int root, uint64_t seq)
{
    rcoll_event_t ev = {RCOLL_EV_RELEASE, root, seq, 0};
    return ev;
}

#endif
