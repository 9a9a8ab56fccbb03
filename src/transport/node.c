/* The node transport: the one-sided interface of transport.h over one POSIX shared-memory
 * segment per node per team, and, for ranks on other nodes, over the team's network channel
 * (net/net.h: UCX or libfabric) into the same areas (see "Ranks on other nodes" below and
 * docs/design.md).
 *
 * Segment: a header page, then one area per local rank. An area holds what others write to
 * that rank and what it publishes, in two rings indexed by the call's sequence number: the
 * lines' (L = RCOLL_DEPTH slots on one node) and the boxes' (B = BOX_DEPTH slots); across
 * nodes both have B.
 *   arrival[L]   its advertisement per line slot (seq mod L): value = seq, payload = user address
 *   done         the last collective it has finished reading (flow control of its slots)
 *   release      its one-step release word (gather-tree barrier root)
 *   published[L] per line slot: value = seq when its outbox holds its data; tiny data inline
 *   where        the core it last ran on, and whether it is waiting (see core_mate_needs_cpu)
 *   signal[P][L] one line per source rank and line slot; payload carries inline data
 *   view[P]      (teams spanning nodes) lines ranks on other nodes raise for me: release, fin
 *   pushed[P][B] (teams spanning nodes) their publications, pushed: news + data up to 4 KB
 *   advert[L]    (teams spanning nodes) my advertisement for them to read: line + buffer key
 *   bounce[N]    per local sender: a chunk line, an ack line and a ring of chunks (one where
 *                CMA is not permitted, BOUNCE_RING where it measured slow: a stream)
 *   small[L]     what it published of 49 B to PUB_SMALL_MAX, one per line slot
 *   smallin[L]   its small inbox (put_small: SMALL_INBOX bytes), one per line slot
 *   inbox[B]     the copy-based slots ("collective buffer"), one per box slot (seq mod B)
 *   outbox[B]    what it published for every peer to read, one per box slot
 * A sender writes into a receiver's slot of seq only after the receiver's done word shows
 * seq - depth of that ring (L for what travels in lines alone, B for a box), so a rank may
 * run ahead of a slow one -- a rooted call's root, with a rotating root too -- L-1 calls with
 * tiny data and B-1 with more, and never overwrites what the slow one still reads; a
 * publication of up to PUB_SMALL_MAX bytes takes the lines' ring (small[L]). A rank's own
 * published line and outbox wait only for the readers of its last publication in the same slot
 * (a root that publishes every P-th call runs up to P*L resp. P*B calls ahead). Single copy
 * for large data goes by CMA (process_vm_writev) into the address the receiver advertised when
 * it arrived; where CMA is not permitted (found once, at creation, or
 * RCOLL_CMA=0) the same put goes chunk by chunk through the bounce area and the receiver copies
 * it out while it waits (its wait runs the transport's progress); where a single copy measured
 * slow (transport/cma_probe.c), a put the copy path cannot take (larger than the inbox) streams
 * the same way through a ring of BOUNCE_RING chunks, the sender copying the next chunks in
 * while the receiver copies the last ones out. A single-copy read
 * (get_user, process_vm_readv from the address a peer advertised) exists only with CMA.
 *
 * The segment is created by the node's first rank and mapped by the others. It is an anonymous
 * memory file (memfd) that the others open through /proc/<pid>/fd of its creator: no /dev/shm
 * space (a container's is often 64 MB, and a page touched past it raised SIGBUS in the middle of
 * a collective), nothing ever left there, its pages taken as touched. Where a peer cannot open
 * it (a /proc that hides it), every rank of the node retries with a POSIX segment in /dev/shm
 * whose pages are reserved at creation (posix_fallocate: a full /dev/shm fails the team's
 * creation, and the caller, the MPI drop-in say, runs the communicator without rcoll, instead
 * of a bus error later), unlinked as soon as everyone has mapped it. A destroyed team's segment
 * may be kept and taken over by a later team of the same processes ("the segment pool"). */
#include "transport/node.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <sched.h>
#include "transport/board.h"
#include "transport/copy.h"
#include "transport/view.h"
#include "net/net.h"

#define SHM_MAGIC 0x72636f6c6c73686dull /* "rcollshm" */
#define SHM_HEADER_BYTES 4096
#define BOUNCE_CHUNK (64 * 1024)
/* Chunks in flight per sender where single copy measured slow (a stream, above). On the AMD
 * EPYC VM a single copy of 1 MB by CMA took 119 us and two memcpy 51 us; with one chunk in
 * flight each chunk waits for both copies and two handovers. Measured: docs/tuning.md, "Where
 * a single copy is slow". 4 x 64 KB stay in the cache the receiver copies from. */
#define BOUNCE_RING 4u
/* Calls a sender may run ahead of a receiver with data in its inbox or outbox (docs/tuning.md,
 * "Back-to-back rooted calls"). Each box is RCOLL_INBOX_BYTES: a deeper ring takes that much
 * more shared memory and keeps copied data out of cache. Measured where ranks outnumber cores
 * (np=4 on 2 cores), where depth helps most: 8 boxes took back-to-back bcast/scatterv/gatherv
 * of 64-256 B with a fixed root from 2-5x native to 0.7-1.7x, but the soak test's mixed calls
 * ran at 113,000 calls/s instead of 142,000 and its shared memory kept growing (97 -> 142 MB
 * after the warm-up); 32 boxes took allgather at 128 KB-1 MB from 0.5-1.0x to 0.8-2.4x. */
#define BOX_DEPTH 2u

/* The board's inline areas (RCOLL_NB_INLINE, 68 KB) where single copy measured slow: the blocks
 * of nonblocking and persistent exchanges up to this go through the board, two copies, as the
 * blocking calls' copy path does (np=2 allgather_init and alltoall_init of 64-512 KB from
 * 1.45-2.3x the blocking call's time to 1.06-1.14x; 256 KB areas were 1.14-1.43x slower than
 * these at 128-512 KB; docs/tuning.md, "Where a single copy is slow"). */
#define SLOW_CMA_NB_INLINE (1024u * 1024)
/* ... and 4 of them instead of RCOLL_NB_AREAS' 8: a persistent call cycles through every area,
 * and 8 of 1 MB per rank outgrow the caches that 4 fit better. rcoll-ab np=2, 8 areas' time over
 * 4's: allgather_init, alltoall_init 64-512 KB 0.99-1.05, 1 MB 1.27-1.48, bcast_init 128 KB-1 MB
 * 1.06-1.79; iallgather, ialltoall 1.0-1.15, 1 MB 1.44-1.50; ibcast 16-32 KB 0.90 (a root runs
 * 4 calls ahead instead of 8), else 1.0; np=4 iallgather, allgather_init 1.03-1.45. 2 areas
 * were 0.54-0.70 (docs/tuning.md, "Where a single copy is slow"). */
#define SLOW_CMA_NB_AREAS 4
/* Publications up to this size go into the publisher's small[L] ring, not a box: a root
 * publishing small messages back to back (bcast, scatter) may then run the lines' L calls ahead
 * of its readers instead of the boxes' 2 (docs/tuning.md, "Back-to-back rooted calls"). */
#define PUB_SMALL_MAX 1024u
/* The small inbox: copy-based messages whose inbox layout ends within it (a fixed root's
 * gather of 49-256 B from 4-16 ranks) take the lines' ring too (docs/tuning.md). */
#define SMALL_INBOX 4096u

/* A sender's channel into a receiver's area: the lines and where each ring slot's chunk goes,
 * then the ring's chunks (bounce_data). Its counts go on from team to team of a kept segment. */
typedef struct {
    rcoll_line_t chunk; /* value: chunks sent */
    rcoll_line_t ack;   /* value: chunks copied out by the receiver */
    struct {
        uint64_t dst, len; /* written before the chunk line is raised */
    } slot[BOUNCE_RING];
} __attribute__((aligned(64))) bounce_channel_t;

typedef struct {
    uint64_t magic;
    uint64_t area_bytes;
    uint32_t depth, box_depth; /* the rings: every rank of the node must lay them out alike */
    /* Copies into the segment (and the board) of at least this many bytes use non-temporal
     * stores: RCOLL_COPY_STREAM, or what the store probe measured (probe_stores: 8 KB, 16 KB or
     * never). */
    _Atomic uint64_t stream_min;
    rcoll_line_t probe_round, probe_ack; /* the probe's two ranks: a round written, read */
    /* Ranks asleep on any line of the segment count themselves here too, in a line of its own
     * that changes only when somebody sleeps: a post reads this, not the line it raised (which
     * its reader polls), to know whether to wake anyone (rcoll_line_post_watched). */
    struct {
        _Atomic uint32_t sleepers;
    } __attribute__((aligned(64))) watch;
} shm_header_t;

/* What a rank advertises, per ring slot, for ranks on other nodes to read (they cannot poll its
 * arrival line): the line (value = seq) and the registered buffer behind its advertisement. */
typedef struct {
    rcoll_line_t line;
    rcoll_net_advert_t adv;
} __attribute__((aligned(64))) advert_block_t;

_Static_assert(sizeof(advert_block_t) <= RCOLL_NET_POLL_MAX, "an advertisement is polled whole");

/* Lines of mine that a rank on another node raises for me: it cannot make me poll its own. */
/* VIEW_READ: the last collective in which the source read my publication (from my outbox, or
 * the copy pushed to it), raised by the source as it leaves -- my waits for my readers
 * (net_wait_readers, wait_outbox_free) need no read of theirs, which a reader gone back into
 * native MPI would never serve. */
enum { VIEW_RELEASE = 0, VIEW_FIN = 1, VIEW_HELLO = 2, VIEW_READ = 3, VIEW_LINES = 4 };

/* A publication of a rank on another node, pushed whole (with the news) when it fits: then
 * nobody has to read the publisher's outbox, which over UCX's tcp only the publisher's own
 * progress could serve. Larger ones are read from the outbox (the publisher stays until its
 * readers are done). One block per source and ring slot. */
#define PUSHED_MAX 4096
typedef struct {
    rcoll_line_t line; /* value = seq, len = the publication's length, tiny ones inline */
    unsigned char data[PUSHED_MAX];
} pushed_block_t;

typedef struct {
    rcoll_tl_t base;
    const rcoll_view_t *v;
    rcoll_net_t *net;         /* ranks on other nodes (NULL: the team is on one node) */
    advert_block_t *adv_seen; /* per team rank on another node: its last advertisement read */
    uint64_t pulled_seq;      /* the last collective in which ranks on other nodes read my outbox */
    uint64_t *heard;          /* per team rank on another node: the last collective it was heard in */
    uint64_t *pulled_from;    /* ... the last collective in which I read its outbox */
    uint64_t read_any;        /* the last collective in which I read an outbox on another node */
    uint64_t local_done_seen; /* a team on one node: every peer was seen done with this call */
    uint64_t pub_seq[RCOLL_DEPTH_MAX]; /* per box slot: the call of my last publication (0: none) */
    int pub_reader[RCOLL_DEPTH_MAX];   /* ... and its readers (tl->pull_reader then) */
    uint64_t box_last[RCOLL_DEPTH_MAX];  /* per box slot: my last call that wrote my outbox there */
    uint64_t line_last[RCOLL_DEPTH_MAX]; /* per line slot: my last call that wrote my published line */
    unsigned depth;           /* lines' ring: slots per peer (RCOLL_DEPTH, a power of two) */
    unsigned box_depth;       /* boxes' ring (inboxes, outboxes, pushed blocks): BOX_DEPTH */
    unsigned char *seg;
    size_t seg_bytes;
    size_t area_bytes;
    size_t off_signal, off_view, off_pushed, off_advert, off_bounce, off_small, off_smallin, off_inbox;
    size_t off_board, board_bytes; /* the nonblocking engine's board, after the areas */
    /* The team's first local rank measured single copy slow (transport/cma_probe.c): the copy
     * path wherever it fits (slow_single_copy), and the board's inline areas of
     * SLOW_CMA_NB_INLINE unless RCOLL_NB_INLINE is set. */
    bool cma_slow;
    size_t nb_inline;
    bool streams;             /* puts the copy path cannot take stream through the bounce ring */
    unsigned bounce_ring;     /* chunks per bounce channel: BOUNCE_RING where cma_slow, else 1 */
    unsigned char **area;     /* per local index */
    uint64_t *peer_done_seen; /* per team rank: last done value read (flow control cache) */
    uint64_t *bounce_sent;    /* per local index: chunks I sent to that rank */
    uint64_t *sent_seq;       /* per team rank: the call of sent_bytes (see sent_len) */
    uint64_t *sent_bytes;     /* ... bytes put to it since my last signal to it in that call */
    int my_index;
    uint64_t seg_id; /* the segment's number, alike on every rank (0: never kept for reuse) */
    int memfd; /* the leader's segment file until every rank has mapped it, or -1 */
    volatile uint64_t cma_probe;
    rcoll_copy_seen_t *seen; /* what I last wrote where (copy_unchanged; made at first use) */
    size_t unchanged_min;    /* RCOLL_UNCHANGED */
    size_t demote_max;       /* RCOLL_DEMOTE */
} shm_tl_t;

typedef struct {
    rcoll_line_t arrival[RCOLL_DEPTH_MAX];
    rcoll_line_t done;
    rcoll_line_t release;
    rcoll_line_t published[RCOLL_DEPTH_MAX];
    struct {
        _Atomic int32_t cpu;      /* the core its owner last ran on, plus one (0: not known) */
        _Atomic uint32_t waiting; /* its owner is inside a wait, for the line below */
        _Atomic uint64_t line;    /* offset in the segment of the line it waits for */
        _Atomic uint64_t target;  /* ... and the value it waits for */
    } __attribute__((aligned(64))) where;
} area_head_t;

/* The ring slot of collective seq: of the lines, and of the boxes. */
static inline unsigned slot_of(const shm_tl_t *s, uint64_t seq)
{
    return (unsigned)seq & (s->depth - 1);
}
static inline unsigned box_of(const shm_tl_t *s, uint64_t seq)
{
    return (unsigned)seq & (s->box_depth - 1);
}

static area_head_t *head_of(shm_tl_t *s, int team_rank)
{
    return (area_head_t *)(void *)s->area[s->v->local_index[team_rank]];
}

static rcoll_line_t *signal_line(shm_tl_t *s, int receiver, int source, uint64_t seq)
{
    unsigned char *a = s->area[s->v->local_index[receiver]] + s->off_signal;
    return (rcoll_line_t *)(void *)a + (size_t)source * s->depth + slot_of(s, seq);
}

static size_t bounce_bytes(const shm_tl_t *s)
{
    return sizeof(bounce_channel_t) + (size_t)s->bounce_ring * BOUNCE_CHUNK;
}

static bounce_channel_t *bounce_of(shm_tl_t *s, int receiver_index, int sender_index)
{
    unsigned char *a = s->area[receiver_index] + s->off_bounce;
    return (bounce_channel_t *)(void *)(a + (size_t)sender_index * bounce_bytes(s));
}

static unsigned char *bounce_data(shm_tl_t *s, bounce_channel_t *ch, uint64_t chunk)
{
    return (unsigned char *)(ch + 1) + (size_t)((chunk - 1) % s->bounce_ring) * BOUNCE_CHUNK;
}

static unsigned char *inbox_of(shm_tl_t *s, int rank, uint64_t seq)
{
    return s->area[s->v->local_index[rank]] + s->off_inbox + box_of(s, seq) * s->base.inbox_bytes;
}

static unsigned char *small_inbox_of(shm_tl_t *s, int rank, uint64_t seq)
{
    return s->area[s->v->local_index[rank]] + s->off_smallin + slot_of(s, seq) * (size_t)SMALL_INBOX;
}

static unsigned char *outbox_of(shm_tl_t *s, int rank, uint64_t seq)
{
    return inbox_of(s, rank, seq) + s->box_depth * s->base.inbox_bytes;
}

/* Where a rank's publication of seq lies, by its whole length: in its line, its small ring, or
 * its outbox (box ring). */
static unsigned char *publication_of(shm_tl_t *s, int rank, uint64_t seq, size_t total)
{
    if (total <= RCOLL_INLINE_MAX)
        return head_of(s, rank)->published[slot_of(s, seq)].payload;
    if (total <= PUB_SMALL_MAX)
        return s->area[s->v->local_index[rank]] + s->off_small + slot_of(s, seq) * (size_t)PUB_SMALL_MAX;
    return outbox_of(s, rank, seq);
}

/* ---- ranks on other nodes: the same area layout, reached through the network channel ---- */

static bool is_remote(const shm_tl_t *s, int rank)
{
    return s->v->local_index[rank] < 0;
}

static rcoll_line_t *view_line(shm_tl_t *s, int source, int which)
{
    unsigned char *a = s->area[s->my_index] + s->off_view;
    return (rcoll_line_t *)(void *)a + (size_t)source * VIEW_LINES + which;
}

/* Offsets in any rank's area (every area has the same layout). */
static size_t signal_off(const shm_tl_t *s, int source, uint64_t seq)
{
    return s->off_signal + ((size_t)source * s->depth + slot_of(s, seq)) * sizeof(rcoll_line_t);
}
static size_t view_off(const shm_tl_t *s, int source, int which)
{
    return s->off_view + ((size_t)source * VIEW_LINES + (size_t)which) * sizeof(rcoll_line_t);
}
static pushed_block_t *pushed_block(shm_tl_t *s, int source, uint64_t seq)
{
    unsigned char *a = s->area[s->my_index] + s->off_pushed;
    return (pushed_block_t *)(void *)a + (size_t)source * s->box_depth + box_of(s, seq);
}
static size_t pushed_off(const shm_tl_t *s, int source, uint64_t seq)
{
    return s->off_pushed + ((size_t)source * s->box_depth + box_of(s, seq)) * sizeof(pushed_block_t);
}
static size_t advert_off(const shm_tl_t *s, uint64_t seq)
{
    return s->off_advert + slot_of(s, seq) * sizeof(advert_block_t);
}
static size_t box_off(const shm_tl_t *s, uint64_t seq, int outbox)
{
    return s->off_inbox + (box_of(s, seq) + (outbox ? s->box_depth : 0u)) * s->base.inbox_bytes;
}

/* Raise a line of the peer's area, in one message with its payload (inline data, a
 * publication's length) when with_len: the payload lands first. The line's sleeper count is
 * the owner's and is never written. */
static rcoll_status_t net_post(shm_tl_t *s, int peer, size_t line_off, uint64_t value,
                               const void *payload, size_t len, bool with_len)
{
    struct {
        uint32_t len;
        unsigned char payload[RCOLL_LINE_PAYLOAD];
    } tail = {0, {0}};
    size_t n = 0;
    if (with_len) {
        tail.len = (uint32_t)len;
        n = payload && len <= RCOLL_LINE_PAYLOAD ? len : 0;
        if (n)
            memcpy(tail.payload, payload, n);
        n += sizeof tail.len;
    }
    return rcoll_net_write(s->net, peer, &tail, n, line_off + offsetof(rcoll_line_t, len),
                           line_off + offsetof(rcoll_line_t, value), value);
}

/* The peer's advertisement for seq, fetched (or the copy a poll brought). */
static rcoll_status_t net_advert(shm_tl_t *s, int peer, uint64_t seq, const rcoll_net_advert_t **out);

/* Bytes of a copy into the segment from which it streams (copy_stream: transport/copy.h). */
static uint64_t stream_min(const shm_tl_t *s)
{
    return atomic_load_explicit(&((shm_header_t *)(void *)s->seg)->stream_min, memory_order_relaxed);
}

/* A copy into a slot a peer reads: unchanged data is not written again (copy.h). */
static void copy_out(shm_tl_t *s, void *dst, const void *src, size_t len)
{
    copy_unchanged(&s->seen, s->unchanged_min, dst, src, len, len >= stream_min(s), s->demote_max);
}

/* ---- waiting ---- */

static _Atomic uint32_t *watch_of(shm_tl_t *s)
{
    return &((shm_header_t *)(void *)s->seg)->watch.sleepers;
}

/* Raises a line of the segment (its sleepers, waiting in pause_on_line, are watched). */
static void post_line(shm_tl_t *s, rcoll_line_t *line, uint64_t value)
{
    rcoll_line_post_watched(line, value, watch_of(s));
}

static int rank_arrived(void *arg, int rank)
{
    shm_tl_t *s = arg;
    if (is_remote(s, rank)) /* as far as what was heard from it tells */
        return s->heard[rank] >= (*s->v->seq) ||
               atomic_load(&s->adv_seen[rank].line.value) >= (*s->v->seq);
    area_head_t *h = head_of(s, rank);
    uint64_t last = 0; /* its latest arrival, in whichever slot (a call it passed posts none) */
    for (unsigned k = 0; k < s->depth; k++) {
        uint64_t a = atomic_load(&h->arrival[k].value);
        if (a > last)
            last = a;
    }
    return last >= (*s->v->seq);
}

/* The receiver's side of the fallback copy and of streams: copy out every chunk that local
 * senders left, each acknowledged as soon as it is out (its slot free for the sender). */
static void bounce_progress(shm_tl_t *s)
{
    for (int i = 0; i < s->v->local_size; i++) {
        if (i == s->my_index)
            continue;
        bounce_channel_t *ch = bounce_of(s, s->my_index, i);
        uint64_t sent = atomic_load_explicit(&ch->chunk.value, memory_order_acquire);
        for (uint64_t c = atomic_load_explicit(&ch->ack.value, memory_order_relaxed) + 1; c <= sent; c++) {
            unsigned k = (unsigned)((c - 1) % s->bounce_ring);
            memcpy((void *)(uintptr_t)ch->slot[k].dst, bounce_data(s, ch, c), ch->slot[k].len);
            post_line(s, &ch->ack, c);
        }
    }
}

static inline void set_not_waiting(shm_tl_t *s)
{
    _Atomic uint32_t *mine = &head_of(s, s->v->rank)->where.waiting;
    if (atomic_load_explicit(mine, memory_order_relaxed))
        atomic_store_explicit(mine, 0, memory_order_relaxed);
}

static void set_waiting_for(shm_tl_t *s, rcoll_line_t *line, uint64_t target)
{
    area_head_t *me = head_of(s, s->v->rank);
    uint64_t off = (uint64_t)((unsigned char *)line - s->seg);
    if (atomic_load_explicit(&me->where.waiting, memory_order_relaxed) &&
        atomic_load_explicit(&me->where.line, memory_order_relaxed) == off &&
        atomic_load_explicit(&me->where.target, memory_order_relaxed) == target)
        return;
    atomic_store_explicit(&me->where.line, off, memory_order_relaxed);
    atomic_store_explicit(&me->where.target, target, memory_order_relaxed);
    atomic_store_explicit(&me->where.waiting, 1, memory_order_relaxed);
}

/* A core-mate in a wait needs no core while what it waits for has not happened. */
static bool mate_can_proceed(shm_tl_t *s, area_head_t *h)
{
    if (!atomic_load_explicit(&h->where.waiting, memory_order_relaxed))
        return true;
    uint64_t off = atomic_load_explicit(&h->where.line, memory_order_relaxed);
    uint64_t target = atomic_load_explicit(&h->where.target, memory_order_relaxed);
    if (off % sizeof(rcoll_line_t) || off > s->seg_bytes - sizeof(rcoll_line_t))
        return true; /* torn or stale: assume it needs the core */
    return rcoll_line_reached((rcoll_line_t *)(void *)(s->seg + off), target);
}

/* Ranks outnumber cores. Does a rank that last ran on my core need it -- one that has not
 * arrived in this collective yet, is working, or waits for something that has happened? If
 * none does, yielding would only switch in a core-mate that would find nothing to do
 * (measured at 4 ranks on 2 cores: 3 yields per barrier instead of 2, barrier 0.66-0.77x
 * native instead of 0.46-0.63x). What is read may be stale (ranks migrate): the poll budget of
 * the wait policy bounds the cost. */
static bool core_mate_needs_cpu(shm_tl_t *s, rcoll_line_t *line, uint64_t target)
{
    const rcoll_view_t *t = s->v;
    int cpu = sched_getcpu() + 1;
    area_head_t *me = head_of(s, t->rank);
    if (atomic_load_explicit(&me->where.cpu, memory_order_relaxed) != cpu)
        atomic_store_explicit(&me->where.cpu, cpu, memory_order_relaxed);
    set_waiting_for(s, line, target);
    for (int i = 0; i < t->local_size; i++) {
        area_head_t *h = head_of(s, t->local_ranks[i]);
        int32_t its = atomic_load_explicit(&h->where.cpu, memory_order_relaxed);
        /* A rank whose core is not known yet (a new team: it has not entered a collective)
         * may be on mine. */
        if (h == me || (its != 0 && its != cpu))
            continue;
        if (atomic_load_explicit(&h->arrival[slot_of(s, *t->seq)].value, memory_order_relaxed) < *t->seq ||
            mate_can_proceed(s, h))
            return true;
    }
    return false;
}

static bool peer_gone(shm_tl_t *s, int who)
{
    if (who < 0 || who == s->v->rank)
        return false;
    if (s->net && is_remote(s, who) && rcoll_net_peer_failed(s->net, who))
        return true;
    return s->v->process_gone(s->v->owner, who);
}

static int rank_gone(void *arg, int rank)
{
    return peer_gone(arg, rank);
}

/* One pause of a wait for `line` to reach `target` (NULL: something a rank on another node
 * must be asked for), `who` being the rank that will raise it. */
static rcoll_status_t pause_on_line(shm_tl_t *s, rcoll_waiter_t *w, rcoll_line_t *line,
                                    uint64_t target, int who)
{
    rcoll_status_t st;
    bool remote = who >= 0 && is_remote(s, who);
    if (!s->base.single_copy || s->base.single_copy_slow)
        bounce_progress(s);
    /* While waiting for a local peer, serve the network too (the context's, in a team without
     * one: a node team of a node-aware call); if it brought something, look again before
     * yielding. */
    if (!remote && (s->net ? rcoll_net_look(s->net) : rcoll_net_ctx_look_all(s->v->net_ctx, s->v->net_hold))) {
        st = rcoll_waiter_progressed(w);
        return st == RCOLL_OK ? st : s->v->wait_failed(s->v->owner, st, who, rank_arrived, rank_gone, s);
    }
    if (remote) { /* its writes come through the network worker: wait on that */
        st = rcoll_net_pause(s->net, w);
        if (st == RCOLL_OK && (rcoll_waiter_is_sleeping(w) || (w->polls & 1023) == 0) &&
            peer_gone(s, who) && !(line && rcoll_line_reached(line, target)))
            st = RCOLL_ERR_PEER_DEAD;
        if (st != RCOLL_OK)
            return s->v->wait_failed(s->v->owner, st, who, rank_arrived, rank_gone, s);
        return RCOLL_OK;
    }
    if (s->v->wait->crowded && w->idle_core_polls < w->policy->idle_core_polls &&
        !core_mate_needs_cpu(s, line, target) && rcoll_waiter_idle_core_poll(w))
        return RCOLL_OK;
    w->watch = watch_of(s); /* a sleep on a line of the segment counts itself there */
    st = rcoll_waiter_pause(w, line, target);
    /* A peer may post what we wait for and exit before we look: gone only if still missing. */
    if (st == RCOLL_OK && rcoll_waiter_is_sleeping(w) && peer_gone(s, who) &&
        !rcoll_line_reached(line, target))
        st = RCOLL_ERR_PEER_DEAD;
    if (st != RCOLL_OK)
        return s->v->wait_failed(s->v->owner, st, who, rank_arrived, rank_gone, s);
    return RCOLL_OK;
}

static rcoll_status_t wait_line(shm_tl_t *s, rcoll_line_t *line, uint64_t target, int who)
{
    if (rcoll_line_reached(line, target) && s->base.single_copy)
        return RCOLL_OK;
    rcoll_waiter_t w;
    rcoll_waiter_start(&w, s->v->wait);
    while (!rcoll_line_reached(line, target)) {
        rcoll_status_t st = pause_on_line(s, &w, line, target, who);
        if (st != RCOLL_OK)
            return st;
    }
    return RCOLL_OK;
}

/* The line an event raises in this process's view, or NULL for the arrival of a rank on
 * another node (its advertisement is read, not pushed). */
static rcoll_line_t *event_line(shm_tl_t *s, const rcoll_event_t *ev, uint64_t *target)
{
    bool remote = is_remote(s, ev->peer);
    switch (ev->kind) {
    case RCOLL_EV_SIGNAL:
        *target = RCOLL_SIGNAL(ev->seq, ev->step);
        return signal_line(s, s->v->rank, ev->peer, ev->seq);
    case RCOLL_EV_ARRIVAL:
        *target = ev->seq;
        return remote ? NULL : &head_of(s, ev->peer)->arrival[slot_of(s, ev->seq)];
    case RCOLL_EV_PUBLISHED:
        *target = ev->seq;
        return remote ? &pushed_block(s, ev->peer, ev->seq)->line
                      : &head_of(s, ev->peer)->published[slot_of(s, ev->seq)];
    case RCOLL_EV_LEFT:
        *target = ev->seq;
        return remote ? NULL : &head_of(s, ev->peer)->done;
    case RCOLL_EV_RELEASE:
    default:
        *target = ev->seq;
        return remote ? view_line(s, ev->peer, VIEW_RELEASE) : &head_of(s, ev->peer)->release;
    }
}

/* Has the rank on another node entered seq? Keeps one read of its advertisement in flight.
 * Where single copies go by message its worker holds what comes early (rcoll_net_send_user):
 * it counts as arrived for writes at once, with no reads that it would have to answer. */
static bool net_arrived(shm_tl_t *s, int peer, uint64_t seq)
{
    if (rcoll_net_puts_by_message(s->net))
        return true;
    advert_block_t *seen = &s->adv_seen[peer];
    if (atomic_load_explicit(&seen->line.value, memory_order_relaxed) >= seq)
        return true;
    return rcoll_net_poll(s->net, peer, seen, sizeof *seen, advert_off(s, seq)) > 0 &&
           atomic_load_explicit(&seen->line.value, memory_order_relaxed) >= seq;
}

/* Has the rank on another node left seq? One read of its done word unless already seen. */
static bool net_left(shm_tl_t *s, int peer, uint64_t seq)
{
    if (s->peer_done_seen[peer] >= seq)
        return true;
    uint64_t done = 0;
    if (rcoll_net_get(s->net, peer, &done, sizeof done,
                      offsetof(area_head_t, done) + offsetof(rcoll_line_t, value)) != RCOLL_OK)
        return false; /* the wait's pause finds the failure */
    if (done > s->peer_done_seen[peer])
        s->peer_done_seen[peer] = done;
    return done >= seq;
}

/* What a rank learns from a peer's signal or publication for collective seq: it has left
 * seq-1 (flow control for free); and this rank is no longer waiting. */
static inline void heard_from(shm_tl_t *s, int peer, uint64_t seq, bool signal_or_published)
{
    if (s->net && is_remote(s, peer) && s->heard[peer] < seq)
        s->heard[peer] = seq;
    set_not_waiting(s);
    if (signal_or_published && s->peer_done_seen[peer] + 1 < seq)
        s->peer_done_seen[peer] = seq - 1;
}

static bool shm_test(rcoll_tl_t *tl, const rcoll_event_t *ev)
{
    shm_tl_t *s = (shm_tl_t *)tl;
    uint64_t target;
    rcoll_line_t *line = event_line(s, ev, &target);
    if (!line && ev->kind == RCOLL_EV_LEFT)
        return net_left(s, ev->peer, ev->seq);
    if (!line)
        return net_arrived(s, ev->peer, ev->seq);
    if (!rcoll_line_reached(line, target)) /* the network progresses in pause, once per pass */
        return false;
    heard_from(s, ev->peer, ev->seq, ev->kind == RCOLL_EV_SIGNAL || ev->kind == RCOLL_EV_PUBLISHED);
    return true;
}

static rcoll_status_t shm_pause(rcoll_tl_t *tl, rcoll_waiter_t *w, const rcoll_event_t *ev)
{
    shm_tl_t *s = (shm_tl_t *)tl;
    uint64_t target;
    rcoll_line_t *line = event_line(s, ev, &target);
    return pause_on_line(s, w, line, target, ev->peer);
}

/* ---- one-sided operations ---- */

/* For ranks on other nodes: the buffer behind my advertisement, registered (through the
 * registration cache) when messages into or out of it may go single copy: any message of at
 * least the threshold, and any block larger than the smallest inbox slot an algorithm cuts
 * (inbox / team size: alltoallv and gatherv send such a block single copy whatever its size;
 * a sparse alltoallv at 5 ranks sent 256 KB blocks into 512 KB - 8 bytes, unregistered). */
static bool net_needs_key(const shm_tl_t *s, size_t user_len)
{
    size_t slot = (s->base.inbox_bytes / (size_t)s->v->size) & ~(size_t)63;
    size_t zcopy = s->base.zcopy_exchange < s->base.zcopy_threshold ? s->base.zcopy_exchange : s->base.zcopy_threshold;
    return user_len >= zcopy || user_len > slot;
}

static rcoll_status_t net_enter(shm_tl_t *s, uint64_t seq, void *user_addr, size_t user_len)
{
    advert_block_t *b = (advert_block_t *)(void *)(s->area[s->my_index] + s->off_advert) + slot_of(s, seq);
    rcoll_status_t st = RCOLL_OK;
    memset(&b->adv, 0, offsetof(rcoll_net_advert_t, key));
    b->adv.addr = (uint64_t)(uintptr_t)user_addr; /* a single copy by message needs no key */
    b->adv.len = user_addr ? user_len : 0;
    if (user_addr && net_needs_key(s, user_len))
        st = rcoll_net_register(s->net, user_addr, user_len, &b->adv);
    rcoll_line_post(&b->line, seq); /* arrived, even without a buffer: peers then see why */
    rcoll_net_deliver_held(s->net);
    return st;
}

/* What a rank's arrival line carries for local peers: the advertised buffer and its length (a
 * single copy never writes past it). */
typedef struct {
    uint64_t addr, len;
} arrival_payload_t;
_Static_assert(sizeof(arrival_payload_t) <= RCOLL_LINE_PAYLOAD, "an arrival fits its line");

/* Whether this call's puts that the copy path cannot take stream (tl->call_rooted). */
static bool streams(const shm_tl_t *s)
{
    return s->streams && rcoll_tl_call_streams(s->base.call_rooted, s->base.call_fan_in);
}

static rcoll_status_t shm_enter(rcoll_tl_t *tl, uint64_t seq, void *user_addr, size_t user_len)
{
    shm_tl_t *s = (shm_tl_t *)tl;
    area_head_t *me = head_of(s, s->v->rank);
    rcoll_line_t *adv = &me->arrival[slot_of(s, seq)];
    set_not_waiting(s);
    if (s->v->wait->crowded) { /* core-mates must know where a rank that never waits runs */
        int cpu = sched_getcpu() + 1;
        if (atomic_load_explicit(&me->where.cpu, memory_order_relaxed) != cpu)
            atomic_store_explicit(&me->where.cpu, cpu, memory_order_relaxed);
    }
    arrival_payload_t pl = {(uint64_t)(uintptr_t)user_addr, user_addr ? user_len : 0};
    memcpy(adv->payload, &pl, sizeof pl);
    post_line(s, adv, seq);
    return s->net ? net_enter(s, seq, user_addr, user_len) : RCOLL_OK;
}

static rcoll_status_t net_wait_done(shm_tl_t *s, int peer, uint64_t need);
static rcoll_status_t net_wait_read(shm_tl_t *s, int peer, uint64_t seq);
static bool net_reads(int readers, int peer);

/* Ranks on other nodes read my outbox with requests that I must serve (over UCX's tcp my worker
 * answers them): I stay until each of them has said, by a write into my VIEW_READ line as it
 * left, that it read it -- every rank on another node, or the call's only reader where the
 * algorithm named one or none (tl->pull_reader). Their word is not read: a reader that
 * has left for native MPI (or for computing) would never serve the read. Its word comes after
 * its done word: its slots are free for collective seq + D as well. */
static rcoll_status_t net_wait_readers(shm_tl_t *s, uint64_t seq)
{
    for (int peer = 0; peer < s->v->size; peer++) {
        if (!is_remote(s, peer) || !net_reads(s->base.pull_reader, peer) || s->peer_done_seen[peer] >= seq)
            continue;
        rcoll_status_t st = net_wait_read(s, peer, seq);
        if (st != RCOLL_OK)
            return st;
    }
    return RCOLL_OK;
}

/* As I leave: each rank on another node whose outbox I read in this call is told so (not one
 * whose process is gone: a write to it would only fail, and replace the call's own error). */
static void net_tell_read(shm_tl_t *s, uint64_t seq)
{
    for (int peer = 0; peer < s->v->size; peer++)
        if (is_remote(s, peer) && s->pulled_from[peer] == seq && !peer_gone(s, peer))
            net_post(s, peer, view_off(s, s->v->rank, VIEW_READ), seq, NULL, 0, false);
}

static rcoll_status_t shm_leave(rcoll_tl_t *tl, uint64_t seq)
{
    shm_tl_t *s = (shm_tl_t *)tl;
    rcoll_status_t st = s->net ? rcoll_net_quiet(s->net) : RCOLL_OK;
    post_line(s, &head_of(s, s->v->rank)->done, seq);
    if (s->net && s->read_any == seq)
        net_tell_read(s, seq);
    if (s->net && s->pulled_seq == seq && st == RCOLL_OK)
        st = net_wait_readers(s, seq);
    s->base.pull_reader = RCOLL_PULL_EVERY;
    if (s->net)
        rcoll_net_release_registrations(s->net);
    return st;
}

static void *shm_inbox(rcoll_tl_t *tl, uint64_t seq)
{
    shm_tl_t *s = (shm_tl_t *)tl;
    return inbox_of(s, s->v->rank, seq);
}

static void *shm_small_inbox(rcoll_tl_t *tl, uint64_t seq)
{
    shm_tl_t *s = (shm_tl_t *)tl;
    return small_inbox_of(s, s->v->rank, seq);
}

/* A rank on another node: read its done word until it shows `need` (what it last said, or a
 * signal or publication from it for a later collective, saves the read). */
static rcoll_status_t net_wait_done(shm_tl_t *s, int peer, uint64_t need)
{
    rcoll_waiter_t w;
    rcoll_waiter_start(&w, s->v->wait);
    for (;;) {
        uint64_t done = 0;
        rcoll_status_t st = rcoll_net_get(s->net, peer, &done, sizeof done,
                                          offsetof(area_head_t, done) + offsetof(rcoll_line_t, value));
        if (st != RCOLL_OK)
            return st;
        if (done > s->peer_done_seen[peer])
            s->peer_done_seen[peer] = done;
        if (s->peer_done_seen[peer] >= need)
            return RCOLL_OK;
        if ((st = pause_on_line(s, &w, NULL, 0, peer)) != RCOLL_OK)
            return st;
    }
}

/* Until the peer has finished collective `need` (0: at once). */
static rcoll_status_t wait_peer_done(shm_tl_t *s, int peer, uint64_t need)
{
    if (need == 0 || s->peer_done_seen[peer] >= need)
        return RCOLL_OK;
    if (is_remote(s, peer))
        return net_wait_done(s, peer, need);
    rcoll_line_t *done = &head_of(s, peer)->done;
    rcoll_status_t st = wait_line(s, done, need, peer);
    s->peer_done_seen[peer] = atomic_load_explicit(&done->value, memory_order_relaxed);
    return st;
}

/* The peer's slot of seq in a ring of `depth` (its lines' or its boxes') is free once it has
 * finished collective seq-depth. */
static rcoll_status_t wait_slots_free(shm_tl_t *s, int peer, uint64_t seq, unsigned depth)
{
    return wait_peer_done(s, peer, seq > depth ? seq - depth : 0);
}

/* The signal that follows a single-copy put to a rank on another node. */
static rcoll_status_t net_signal(shm_tl_t *s, int peer, uint64_t seq, unsigned step)
{
    rcoll_status_t st = rcoll_net_fence(s->net, peer);
    if (st == RCOLL_OK)
        st = net_post(s, peer, signal_off(s, s->v->rank, seq), RCOLL_SIGNAL(seq, step), NULL, 0,
                      false);
    return st;
}

/* After the put the source may change (as with a copy on one node): wait until UCX has taken
 * it. Only the local side: the transfer itself may still be on its way. */
static rcoll_status_t net_put_done(shm_tl_t *s, int peer, uint64_t seq, unsigned step,
                                   rcoll_status_t st)
{
    if (st == RCOLL_OK)
        st = rcoll_net_quiet(s->net);
    if (st == RCOLL_OK && step != RCOLL_NO_SIGNAL)
        st = net_signal(s, peer, seq, step);
    return st;
}

/* Data put to a peer on this node: counted until the signal that ends the message, whose
 * line then carries the message's length (sent_len). */
static void count_sent(shm_tl_t *s, int peer, uint64_t seq, size_t len)
{
    if (s->sent_seq[peer] != seq) {
        s->sent_seq[peer] = seq;
        s->sent_bytes[peer] = 0;
    }
    s->sent_bytes[peer] += len;
}

static void post_signal(shm_tl_t *s, int peer, uint64_t seq, unsigned step, size_t len)
{
    count_sent(s, peer, seq, len);
    rcoll_line_t *line = signal_line(s, peer, s->v->rank, seq);
    line->len = s->sent_bytes[peer] > UINT32_MAX ? UINT32_MAX : (uint32_t)s->sent_bytes[peer];
    s->sent_bytes[peer] = 0;
    post_line(s, line, RCOLL_SIGNAL(seq, step));
}

/* How far a put in parts got, in the payload of the signal line that will carry its signal
 * (no inline data shares the line: a line with inline data carries one message a call): the
 * signal it will raise, then the inbox range written so far, [start, upto). The first part
 * sets start and upto before tag; later parts move upto (release: their data first). */
typedef struct {
    _Atomic uint64_t tag, start, upto;
} put_progress_t;

static put_progress_t *progress_of(rcoll_line_t *line)
{
    return (put_progress_t *)(void *)line->payload;
}

/* A put to a peer on this node, its signal raised at the end: in parts of RCOLL_PUT_PART from
 * RCOLL_PUT_PARTS_MIN bytes, so that a receiver already waiting copies each part out while the
 * next is written (one kind of store for all parts: by the whole length). */
static void put_parts(shm_tl_t *s, int peer, uint64_t seq, unsigned step, unsigned char *inbox,
                      const unsigned char *src, size_t len, size_t inbox_offset)
{
    bool stream = len >= stream_min(s);
    put_progress_t *p = progress_of(signal_line(s, peer, s->v->rank, seq));
    size_t done = 0;
    for (; len - done > RCOLL_PUT_PART; done += RCOLL_PUT_PART) {
        copy_unchanged(&s->seen, s->unchanged_min, inbox + inbox_offset + done, src + done, RCOLL_PUT_PART,
                       stream, 0);
        atomic_store_explicit(&p->upto, inbox_offset + done + RCOLL_PUT_PART, memory_order_release);
        if (done == 0) {
            atomic_store_explicit(&p->start, inbox_offset, memory_order_relaxed);
            atomic_store_explicit(&p->tag, RCOLL_SIGNAL(seq, step), memory_order_release);
        }
    }
    copy_unchanged(&s->seen, s->unchanged_min, inbox + inbox_offset + done, src + done, len - done, stream,
                   0);
}

/* A copy into the peer's inbox (its box ring) or its small inbox (the lines' ring). */
static rcoll_status_t put_copy(shm_tl_t *s, int peer, uint64_t seq, unsigned step,
                               const void *src, size_t len, size_t inbox_offset, bool small, bool parts)
{
    rcoll_status_t st = wait_slots_free(s, peer, seq, small ? s->depth : s->box_depth);
    if (st != RCOLL_OK)
        return st;
    size_t off = small ? s->off_smallin + slot_of(s, seq) * (size_t)SMALL_INBOX : box_off(s, seq, 0);
    if (is_remote(s, peer)) /* data and signal in one message */
        return rcoll_net_write(s->net, peer, src, len, off + inbox_offset,
                               step == RCOLL_NO_SIGNAL ? RCOLL_NET_NO_SIGNAL
                                                       : signal_off(s, s->v->rank, seq),
                               RCOLL_SIGNAL(seq, step));
    if (parts && step != RCOLL_NO_SIGNAL && len >= RCOLL_PUT_PARTS_MIN)
        put_parts(s, peer, seq, step, inbox_of(s, peer, seq), src, len, inbox_offset);
    else if (len)
        copy_out(s, (small ? small_inbox_of(s, peer, seq) : inbox_of(s, peer, seq)) + inbox_offset, src, len);
    if (step != RCOLL_NO_SIGNAL)
        post_signal(s, peer, seq, step, len);
    else
        count_sent(s, peer, seq, len);
    return RCOLL_OK;
}

static rcoll_status_t shm_put(rcoll_tl_t *tl, int peer, uint64_t seq, unsigned step,
                              const void *src, size_t len, size_t inbox_offset)
{
    return put_copy((shm_tl_t *)tl, peer, seq, step, src, len, inbox_offset, false, false);
}

static rcoll_status_t shm_put_parts(rcoll_tl_t *tl, int peer, uint64_t seq, unsigned step,
                                    const void *src, size_t len, size_t inbox_offset)
{
    return put_copy((shm_tl_t *)tl, peer, seq, step, src, len, inbox_offset, false, true);
}

static rcoll_status_t shm_put_small(rcoll_tl_t *tl, int peer, uint64_t seq, unsigned step,
                                    const void *src, size_t len, size_t inbox_offset)
{
    return put_copy((shm_tl_t *)tl, peer, seq, step, src, len, inbox_offset, true, false);
}

static rcoll_status_t shm_put_inline(rcoll_tl_t *tl, int peer, uint64_t seq, unsigned step,
                                     const void *src, size_t len)
{
    shm_tl_t *s = (shm_tl_t *)tl;
    rcoll_status_t st = wait_slots_free(s, peer, seq, s->depth);
    if (st != RCOLL_OK)
        return st;
    if (is_remote(s, peer))
        return net_post(s, peer, signal_off(s, s->v->rank, seq), RCOLL_SIGNAL(seq, step), src,
                        len, true);
    rcoll_line_t *line = signal_line(s, peer, s->v->rank, seq);
    memcpy(line->payload, src, len);
    post_signal(s, peer, seq, step, len);
    return RCOLL_OK;
}

static const void *shm_inline_data(rcoll_tl_t *tl, int source, uint64_t seq)
{
    shm_tl_t *s = (shm_tl_t *)tl;
    return signal_line(s, s->v->rank, source, seq)->payload;
}

static bool shm_copy_arrived(rcoll_tl_t *tl, int source, uint64_t seq, unsigned step, void *dst,
                             size_t len, size_t inbox_offset, size_t *done)
{
    shm_tl_t *s = (shm_tl_t *)tl;
    const unsigned char *inbox = inbox_of(s, s->v->rank, seq) + inbox_offset;
    rcoll_event_t ev = rcoll_ev_signal(source, seq, step);
    if (shm_test(tl, &ev)) {
        if (len > *done)
            memcpy((unsigned char *)dst + *done, inbox + *done, len - *done);
        *done = len;
        return true;
    }
    if (is_remote(s, source) || len < RCOLL_PUT_PARTS_MIN)
        return false;
    put_progress_t *p = progress_of(signal_line(s, s->v->rank, source, seq));
    if (atomic_load_explicit(&p->tag, memory_order_acquire) != RCOLL_SIGNAL(seq, step))
        return false;
    uint64_t start = atomic_load_explicit(&p->start, memory_order_relaxed);
    uint64_t upto = atomic_load_explicit(&p->upto, memory_order_acquire);
    /* [start, upto) of the inbox is written; what lies before start only once the signal says
     * so (an earlier put of the message may not have covered it). */
    if (start > inbox_offset + *done || upto <= inbox_offset + *done)
        return false;
    size_t to = upto - inbox_offset < len ? (size_t)(upto - inbox_offset) : len;
    memcpy((unsigned char *)dst + *done, inbox + *done, to - *done);
    *done = to;
    return false;
}

/* One single copy by CMA between my `local` buffer and `remote` in the peer (write: to it). */
static rcoll_status_t cma_copy(shm_tl_t *s, int peer, void *local, uint64_t remote, size_t len,
                               bool write)
{
    size_t done = 0;
    while (done < len) {
        struct iovec mine = {(char *)local + done, len - done};
        struct iovec theirs = {(void *)(uintptr_t)(remote + done), len - done};
        ssize_t n = write ? process_vm_writev(s->v->pid_of[peer], &mine, 1, &theirs, 1, 0)
                          : process_vm_readv(s->v->pid_of[peer], &mine, 1, &theirs, 1, 0);
        if (n <= 0) {
            if (n < 0 && errno == EINTR)
                continue;
            return rcoll_view_error(s->v, n < 0 && errno == ESRCH ? RCOLL_ERR_PEER_DEAD
                                                                      : RCOLL_ERR_SYSTEM,
                                    "%s: single-copy %s of %zu bytes %s rank %d failed: %s",
                                    rcoll_view_coll(s->v, "shm"), write ? "write" : "read", len,
                                    write ? "to" : "from", peer,
                                    n < 0 ? strerror(errno) : "no progress");
        }
        done += (size_t)n;
    }
    return RCOLL_OK;
}

/* Fallback single copy, and the stream where single copy measured slow: through the
 * receiver's bounce channel, a ring of s->bounce_ring chunks in flight (a slot is written
 * again once the receiver acknowledged its last chunk); returns once every chunk is out, so
 * the signal that follows finds the data in place. */
static rcoll_status_t bounce_write(shm_tl_t *s, int peer, const void *src, size_t len, uint64_t dst)
{
    int pi = s->v->local_index[peer];
    bounce_channel_t *ch = bounce_of(s, pi, s->my_index);
    rcoll_status_t st = RCOLL_OK;
    for (size_t done = 0; done < len && st == RCOLL_OK;) {
        size_t n = len - done < BOUNCE_CHUNK ? len - done : BOUNCE_CHUNK;
        uint64_t c = s->bounce_sent[pi] + 1;
        if (c > s->bounce_ring && (st = wait_line(s, &ch->ack, c - s->bounce_ring, peer)) != RCOLL_OK)
            break;
        copy_out(s, bounce_data(s, ch, c), (const char *)src + done, n); /* lines the receiver read */
        unsigned k = (unsigned)((c - 1) % s->bounce_ring);
        ch->slot[k].dst = dst + done;
        ch->slot[k].len = n;
        post_line(s, &ch->chunk, c);
        s->bounce_sent[pi] = c;
        done += n;
    }
    return st == RCOLL_OK ? wait_line(s, &ch->ack, s->bounce_sent[pi], peer) : st;
}

/* The advertisement of a rank on another node for seq: the copy an arrival poll brought if it
 * is for seq, else read until it is. */
static rcoll_status_t net_advert(shm_tl_t *s, int peer, uint64_t seq, const rcoll_net_advert_t **out)
{
    advert_block_t *seen = &s->adv_seen[peer];
    rcoll_waiter_t w;
    rcoll_waiter_start(&w, s->v->wait);
    while (atomic_load_explicit(&seen->line.value, memory_order_relaxed) != seq) {
        advert_block_t b;
        rcoll_status_t st = rcoll_net_get(s->net, peer, &b, sizeof b, advert_off(s, seq));
        if (st != RCOLL_OK)
            return st;
        if (atomic_load_explicit(&b.line.value, memory_order_relaxed) >= seq) {
            memcpy(seen, &b, sizeof b);
            break;
        }
        if ((st = pause_on_line(s, &w, NULL, 0, peer)) != RCOLL_OK)
            return st;
    }
    *out = &seen->adv;
    return RCOLL_OK;
}

/* A single copy never passes the end of what the receiver advertised (an erroneous program's
 * sizes differ between ranks): cut at that end, noted for the call (tl->truncated: the
 * sender's call fails with RCOLL_ERR_TRUNCATE after it has done its part, so nobody waits for
 * a signal that never comes). */
static size_t fit_advertised(shm_tl_t *s, int peer, uint64_t seq, const arrival_payload_t *pl,
                             size_t len, size_t offset)
{
    if (offset <= pl->len && len <= pl->len - offset)
        return len;
    s->base.truncated = seq;
    s->base.truncated_peer = peer;
    return offset < pl->len ? (size_t)(pl->len - offset) : 0;
}

static rcoll_status_t shm_put_user(rcoll_tl_t *tl, int peer, uint64_t seq, unsigned step,
                                   const void *src, size_t len, size_t remote_offset)
{
    shm_tl_t *s = (shm_tl_t *)tl;
    if (is_remote(s, peer)) {
        if (rcoll_net_puts_by_message(s->net)) { /* data and signal, one message, no round trip */
            size_t block = advert_off(s, seq);
            return rcoll_net_send_user(s->net, peer, src, len, block + offsetof(advert_block_t, line),
                                       block + offsetof(advert_block_t, adv), seq, remote_offset,
                                       step == RCOLL_NO_SIGNAL ? RCOLL_NET_NO_SIGNAL
                                                               : signal_off(s, s->v->rank, seq),
                                       RCOLL_SIGNAL(seq, step));
        }
        const rcoll_net_advert_t *adv;
        rcoll_status_t st = net_advert(s, peer, seq, &adv);
        if (st == RCOLL_OK)
            st = rcoll_net_put_user(s->net, peer, src, len, adv, remote_offset);
        return net_put_done(s, peer, seq, step, st);
    }
    rcoll_line_t *adv = &head_of(s, peer)->arrival[slot_of(s, seq)];
    rcoll_status_t st = wait_line(s, adv, seq, peer);
    if (st != RCOLL_OK)
        return st;
    arrival_payload_t pl;
    memcpy(&pl, adv->payload, sizeof pl);
    size_t asked = len; /* what the receiver is told was sent: the cut shows there */
    len = fit_advertised(s, peer, seq, &pl, len, remote_offset);
    uint64_t base = pl.addr;
    if (len) {
        st = s->base.single_copy && !streams(s)
                 ? cma_copy(s, peer, (void *)(uintptr_t)src, base + remote_offset, len, true)
                 : bounce_write(s, peer, src, len, base + remote_offset);
        if (st != RCOLL_OK)
            return st;
    }
    if (step != RCOLL_NO_SIGNAL)
        post_signal(s, peer, seq, step, asked);
    else
        count_sent(s, peer, seq, asked);
    return RCOLL_OK;
}

static rcoll_status_t shm_get_user(rcoll_tl_t *tl, int peer, uint64_t seq, void *dst, size_t len,
                                   size_t remote_offset)
{
    shm_tl_t *s = (shm_tl_t *)tl;
    if (is_remote(s, peer)) {
        const rcoll_net_advert_t *adv;
        rcoll_status_t st = net_advert(s, peer, seq, &adv);
        return st == RCOLL_OK ? rcoll_net_get_user(s->net, peer, dst, len, adv, remote_offset) : st;
    }
    if (!s->base.single_copy)
        return rcoll_view_error(s->v, RCOLL_ERR_UNSUPPORTED, "%s: single-copy read without CMA",
                                rcoll_view_coll(s->v, "shm"));
    rcoll_line_t *adv = &head_of(s, peer)->arrival[slot_of(s, seq)];
    rcoll_status_t st = wait_line(s, adv, seq, peer);
    if (st != RCOLL_OK || !len)
        return st;
    arrival_payload_t pl;
    memcpy(&pl, adv->payload, sizeof pl);
    len = fit_advertised(s, peer, seq, &pl, len, remote_offset);
    return len ? cma_copy(s, peer, dst, pl.addr + remote_offset, len, false) : RCOLL_OK;
}

/* Has a rank on another node said it read my outbox in collective `seq` or later? */
static rcoll_status_t net_wait_read(shm_tl_t *s, int peer, uint64_t seq)
{
    rcoll_status_t st = wait_line(s, view_line(s, peer, VIEW_READ), seq, peer);
    if (st == RCOLL_OK && s->peer_done_seen[peer] < seq) /* it says so as it leaves */
        s->peer_done_seen[peer] = seq;
    return st;
}

/* Is `peer`, on another node, among the readers `readers` (tl->pull_reader) of a publication? */
static bool net_reads(int readers, int peer)
{
    return readers == RCOLL_PULL_EVERY || readers == peer;
}

/* My publication slots of seq are free once every local peer has finished the call of my last
 * publication there (its published line's slot, and its outbox slot when `box`): a root that
 * publishes every P-th call waits for calls P back, not D back. My pushed blocks of that box
 * slot at ranks on other nodes are free once those that read my last publication of that slot
 * (and only they) have said so (net_tell_read): a rank on another node that read nothing of it
 * may have left for native MPI, where a read of its done word would never be served (reduce: a
 * rank that is not the root waits for nobody). */
static rcoll_status_t wait_outbox_free(shm_tl_t *s, uint64_t seq, bool box)
{
    unsigned k = box_of(s, seq), j = slot_of(s, seq);
    uint64_t last = s->pub_seq[k];
    int readers = s->pub_reader[k];
    /* A slot this call already wrote (a publication staged again from its start) was waited for. */
    uint64_t need = s->line_last[j] == seq ? 0 : s->line_last[j];
    if (box && s->box_last[k] != seq && s->box_last[k] > need)
        need = s->box_last[k];
    s->pub_seq[k] = seq;
    s->pub_reader[k] = s->base.pull_reader;
    s->line_last[j] = seq;
    if (box)
        s->box_last[k] = seq;
    if (!s->net && need <= s->local_done_seen)
        return RCOLL_OK; /* every peer was seen past it: most calls on one node */
    int n = s->net ? s->v->size : s->v->local_size;
    uint64_t least = UINT64_MAX;
    for (int i = 0; i < n; i++) {
        int peer = s->net ? i : s->v->local_ranks[i];
        rcoll_status_t st = RCOLL_OK;
        if (peer == s->v->rank)
            continue;
        if (!is_remote(s, peer))
            st = wait_peer_done(s, peer, need);
        else if (last && net_reads(readers, peer) && s->peer_done_seen[peer] < last)
            st = net_wait_read(s, peer, last);
        if (st != RCOLL_OK)
            return st;
        if (s->peer_done_seen[peer] < least)
            least = s->peer_done_seen[peer];
    }
    if (!s->net && least != UINT64_MAX)
        s->local_done_seen = least;
    return RCOLL_OK;
}

/* Tells a rank on another node of my publication: tiny data inline in the news, up to
 * PUSHED_MAX bytes the data itself into its block for me (one message), larger ones it reads
 * from my outbox -- and I stay in the collective until it has. */
static rcoll_status_t net_push_publication(shm_tl_t *s, int peer, uint64_t seq, const void *src,
                                           size_t len)
{
    size_t line_off = pushed_off(s, s->v->rank, seq);
    if (len <= RCOLL_INLINE_MAX || len > PUSHED_MAX) {
        if (len > PUSHED_MAX)
            s->pulled_seq = seq;
        return net_post(s, peer, line_off, seq, src, len, true);
    }
    struct {
        uint32_t len;
        unsigned char payload[RCOLL_LINE_PAYLOAD];
        unsigned char data[PUSHED_MAX];
    } msg;
    _Static_assert(offsetof(pushed_block_t, data) - offsetof(rcoll_line_t, len) ==
                   offsetof(__typeof__(msg), data), "the pushed block is written in one piece");
    msg.len = (uint32_t)len;
    memset(msg.payload, 0, sizeof msg.payload);
    memcpy(msg.data, src, len);
    return rcoll_net_write(s->net, peer, &msg, offsetof(__typeof__(msg), data) + len,
                           line_off + offsetof(rcoll_line_t, len),
                           line_off + offsetof(rcoll_line_t, value), seq);
}

static rcoll_status_t shm_publish(rcoll_tl_t *tl, uint64_t seq, const void *src, size_t len)
{
    shm_tl_t *s = (shm_tl_t *)tl;
    /* Tiny and small data travel in the published line and the small ring: the lines' ring. */
    rcoll_status_t st = wait_outbox_free(s, seq, len > PUB_SMALL_MAX);
    if (st != RCOLL_OK)
        return st;
    rcoll_line_t *line = &head_of(s, s->v->rank)->published[slot_of(s, seq)];
    if (len <= RCOLL_INLINE_MAX) /* in the line, which its post writes anyway: a plain copy */
        memcpy(line->payload, src, len);
    else
        copy_out(s, publication_of(s, s->v->rank, seq, len), src, len);
    line->len = (uint32_t)len;
    post_line(s, line, seq);
    for (int peer = 0; s->net && st == RCOLL_OK && peer < s->v->size; peer++)
        if (is_remote(s, peer))
            st = net_push_publication(s, peer, seq, src, len);
    return st;
}

static rcoll_status_t shm_stage(rcoll_tl_t *tl, uint64_t seq, const void *src, size_t len,
                                size_t offset, size_t total)
{
    shm_tl_t *s = (shm_tl_t *)tl;
    if (offset == 0) {
        rcoll_status_t st = wait_outbox_free(s, seq, total > PUB_SMALL_MAX);
        if (st != RCOLL_OK)
            return st;
        /* Readers of this slot are done: its length may change (get reads it). */
        head_of(s, s->v->rank)->published[slot_of(s, seq)].len = (uint32_t)total;
        s->pulled_seq = seq;
    }
    /* By the whole publication's size: its readers took these lines in the last call. */
    copy_unchanged(&s->seen, s->unchanged_min, publication_of(s, s->v->rank, seq, total) + offset, src, len,
                   total >= stream_min(s), total <= s->demote_max ? s->demote_max : 0);
    return RCOLL_OK;
}

/* Where a peer on this node put its publication of seq (its length is in its published line). */
static const unsigned char *local_publication(shm_tl_t *s, int peer, uint64_t seq)
{
    const rcoll_line_t *line = &head_of(s, peer)->published[slot_of(s, seq)];
    return publication_of(s, peer, seq, line->len);
}

static rcoll_status_t shm_get(rcoll_tl_t *tl, int peer, uint64_t seq, void *dst, size_t len,
                             size_t offset)
{
    shm_tl_t *s = (shm_tl_t *)tl;
    if (is_remote(s, peer)) {
        pushed_block_t *b = pushed_block(s, peer, seq);
        if (s->base.pull_reader != RCOLL_PULL_SIGNALLED) /* it waits for my word (shm_leave) */
            s->pulled_from[peer] = s->read_any = seq;
        if (rcoll_line_reached(&b->line, seq) && b->line.len <= PUSHED_MAX) {
            memcpy(dst, (b->line.len <= RCOLL_INLINE_MAX ? b->line.payload : b->data) + offset, len);
            return RCOLL_OK;
        }
        /* Not pushed: larger than PUSHED_MAX, or staged (stage pushes nothing), which across
         * nodes happens from 16 KB only -- a staged publication of at most PUB_SMALL_MAX
         * bytes lies in the small ring, and only node teams (hier_pap) stage such. */
        return rcoll_net_get(s->net, peer, dst, len, box_off(s, seq, 1) + offset);
    }
    if (len)
        memcpy(dst, local_publication(s, peer, seq) + offset, len);
    return RCOLL_OK;
}

/* On this node every publication lies in shared memory, readable in place; one of a rank on
 * another node is copied (get). */
static const void *shm_peek(rcoll_tl_t *tl, int peer, uint64_t seq, size_t len, size_t offset)
{
    shm_tl_t *s = (shm_tl_t *)tl;
    (void)len;
    return is_remote(s, peer) ? NULL : local_publication(s, peer, seq) + offset;
}

/* On this node: the peer's published line of seq, raised, tells where its publication lies. */
static const void *shm_peek_published(rcoll_tl_t *tl, int peer, uint64_t seq, size_t offset, size_t *total)
{
    shm_tl_t *s = (shm_tl_t *)tl;
    if (is_remote(s, peer))
        return NULL;
    rcoll_line_t *line = &head_of(s, peer)->published[slot_of(s, seq)];
    if (!rcoll_line_reached(line, seq))
        return NULL;
    heard_from(s, peer, seq, true);
    *total = line->len;
    if (*total <= RCOLL_INLINE_MAX) /* tiny: in the line just tested */
        return line->payload + offset;
    return publication_of(s, peer, seq, *total) + offset;
}

/* A signal alone: on another node a failure shows in the peer's next wait (it is gone). */
static void shm_signal(rcoll_tl_t *tl, int peer, uint64_t seq, unsigned step)
{
    shm_tl_t *s = (shm_tl_t *)tl;
    if (is_remote(s, peer)) {
        net_post(s, peer, signal_off(s, s->v->rank, seq), RCOLL_SIGNAL(seq, step), NULL, 0, false);
        return;
    }
    /* The value only: a signal alone has no flow control (a barrier's), so it may come while
     * the peer still reads the line for the call D before, whose length must stay. */
    post_line(s, signal_line(s, peer, s->v->rank, seq), RCOLL_SIGNAL(seq, step));
}

static void shm_release(rcoll_tl_t *tl, uint64_t seq)
{
    shm_tl_t *s = (shm_tl_t *)tl;
    post_line(s, &head_of(s, s->v->rank)->release, seq);
    for (int peer = 0; s->net && peer < s->v->size; peer++)
        if (is_remote(s, peer))
            net_post(s, peer, view_off(s, s->v->rank, VIEW_RELEASE), seq, NULL, 0, false);
}

/* The length a signal line or publication carries (see transport.h sent_len). */
static bool shm_sent_len(rcoll_tl_t *tl, const rcoll_event_t *ev, size_t *len)
{
    shm_tl_t *s = (shm_tl_t *)tl;
    if (ev->kind == RCOLL_EV_PUBLISHED) {
        rcoll_line_t *line = is_remote(s, ev->peer) ? &pushed_block(s, ev->peer, ev->seq)->line
                                                    : &head_of(s, ev->peer)->published[slot_of(s, ev->seq)];
        /* A publication in parts is not pushed to other nodes: their block is older then. */
        if (is_remote(s, ev->peer) && atomic_load_explicit(&line->value, memory_order_acquire) != ev->seq)
            return false;
        *len = line->len;
        return true;
    }
    if (ev->kind != RCOLL_EV_SIGNAL || is_remote(s, ev->peer))
        return false;
    *len = signal_line(s, s->v->rank, ev->peer, ev->seq)->len;
    return true;
}

/* Did this rank and `peer` (on another node) ever reach each other? Either side's first
 * contact raised the other's hello line (rcoll_net_hello_at). */
static bool net_linked(shm_tl_t *s, int peer)
{
    return rcoll_net_contacted(s->net, peer) || rcoll_line_reached(view_line(s, peer, VIEW_HELLO), 1);
}

/* My goodbye to a linked peer, once: after everything I sent it, on the same connection (a
 * peer found gone is settled too, and not looked at again). */
static void net_goodbye(shm_tl_t *s, int peer, bool *said)
{
    if (said[peer] || !net_linked(s, peer))
        return;
    said[peer] = true;
    if (!peer_gone(s, peer) && rcoll_net_fence(s->net, peer) == RCOLL_OK)
        net_post(s, peer, view_off(s, s->v->rank, VIEW_FIN), 1, NULL, 0, false);
}

/* Before the connections go: every rank on another node that this one reached, or that reached
 * it, is told that this one is done with the team, and is waited for in turn (bounded: a peer
 * that exited or never comes is left after at most 10 s). Only then is nothing owed either
 * way, and nothing of mine still in flight when the endpoints close. Ranks never linked are
 * left alone: connecting to one now would serve nothing, and a connection to a process that
 * is exiting can make UCX 1.13's tcp transport assert (and abort this process) when the
 * peer's listening socket accepts, then resets (docs/design.md). A hello still in flight when
 * this rank looks is answered while it waits for the others; if it waits for none, the peer
 * waits for its goodbye until the bound. */
static void net_finish(shm_tl_t *s)
{
    bool *said = calloc((size_t)s->v->size, sizeof *said);
    if (!said)
        return;
    for (int peer = 0; peer < s->v->size; peer++)
        if (is_remote(s, peer))
            net_goodbye(s, peer, said);
    uint64_t limit = s->v->wait->timeout_ns && s->v->wait->timeout_ns < 10000000000ull
                         ? s->v->wait->timeout_ns : 10000000000ull;
    uint64_t until = rcoll_now_ns() + limit;
    for (int peer = 0; peer < s->v->size; peer++) {
        while (is_remote(s, peer) && said[peer] &&
               !rcoll_line_reached(view_line(s, peer, VIEW_FIN), 1) && !peer_gone(s, peer) &&
               rcoll_now_ns() < until) {
            rcoll_net_progress(s->net);
            for (int other = 0; other < s->v->size; other++)
                if (is_remote(s, other))
                    net_goodbye(s, other, said);
            sched_yield();
        }
    }
    free(said);
}

static bool pool_keep(shm_tl_t *s, uint64_t nb_seq);

static void shm_destroy(rcoll_tl_t *tl)
{
    shm_tl_t *s = (shm_tl_t *)tl;
    if (!s)
        return;
    if (s->net)
        net_finish(s);
    rcoll_net_destroy(s->net);
    /* The board numbers a kept segment goes on from: the last this team posted, or, if it
     * posted none, those it started from (a reused segment's: a team that only made and freed
     * requests would hand 0 on, and the next team's posts would read the words left behind as
     * its own, finished calls, with the data of older ones). */
    uint64_t nb_seq = s->base.board ? rcoll_board_last_seq(s->base.board) : 0;
    if (nb_seq < s->base.first_nb_seq)
        nb_seq = s->base.first_nb_seq;
    rcoll_board_detach(s->base.board);
    free(s->adv_seen);
    free(s->heard);
    if (s->seg && !pool_keep(s, nb_seq))
        munmap(s->seg, s->seg_bytes);
    if (s->memfd >= 0)
        close(s->memfd);
    free(s->area);
    free(s->peer_done_seen);
    free(s->seen);
    free(s->bounce_sent);
    free(s->sent_seq);
    free(s);
}

static const rcoll_tl_ops_t shm_ops = {
    .name = "shm",
    .enter = shm_enter,
    .sent_len = shm_sent_len,
    .leave = shm_leave,
    .inbox = shm_inbox,
    .put = shm_put,
    .small_inbox = shm_small_inbox,
    .put_small = shm_put_small,
    .put_inline = shm_put_inline,
    .put_parts = shm_put_parts,
    .inline_data = shm_inline_data,
    .copy_arrived = shm_copy_arrived,
    .put_user = shm_put_user,
    .publish = shm_publish,
    .get = shm_get,
    .peek = shm_peek,
    .peek_published = shm_peek_published,
    .stage = shm_stage,
    .get_user = shm_get_user,
    .signal = shm_signal,
    .release = shm_release,
    .test = shm_test,
    .pause = shm_pause,
    .destroy = shm_destroy,
};

/* ---- creation ---- */

typedef struct {
    char name[64];
    int32_t status;
    uint32_t reserved;
    uint64_t probe_addr;
    uint64_t id;          /* the leader's new segment's number */
} shm_offer_t;

typedef struct {
    int32_t status;
    int32_t cma_ok;
    int32_t memfd_refused; /* status is a failure to open or map the leader's memfd */
} shm_answer_t;

/* ---- the segment pool ----
 *
 * A communicator made, used a few times and freed again and again (MPI_Comm_dup in a library
 * call, a test suite's set-up) paid for a new segment every time: the memory file, its
 * mappings, the first touch of every page it used (this machine: ~2 us a page to allocate,
 * ~0.8 us to map in each further process) and the unmapping. A destroyed team's segment is
 * therefore kept, mapped, by each of its processes (at most RCOLL_SHM_POOL per context), and a
 * later team of the same processes in the same order with the same layout takes it over:
 *   - every rank offers, in its hello to the team's first exchange (core's, before the team's
 *     nodes are known), the kept segments that would fit a team of one node (reserved
 *     meanwhile, so that two threads creating teams at once never offer the same one): of the
 *     team's size, its layout, with this process at this rank; the first of the leader's that
 *     every rank offered is taken, alike on every rank (from the hellos only), where the team
 *     has one node and no hello reports a failed preparation: every rank kept it, so every rank's earlier team is gone and nobody
 *     touches it any more, and it holds the same processes in the same order (each is at its
 *     rank there);
 *   - nothing in it is reset (a rank could not know when its peers stop reading): the new team
 *     numbers its calls and board posts on from the highest its ranks reached there, so every
 *     word left behind reads as an older call, as a ring slot's words do when it is reused;
 *   - otherwise (the leader had none to offer, or no offer was common) the leader makes a new
 *     segment as always, the reservations going back to the pool.
 * Kept: single-node teams with single copy (CMA) whose calls all ended in step (no error, no
 * request outstanding; rcoll_tl_t.reusable). The oldest kept segment is unmapped when the pool
 * is full, the rest when the context is destroyed. */

typedef struct pooled {
    struct pooled *next;
    unsigned char *seg;
    size_t seg_bytes, area_bytes, board_bytes, inbox_bytes;
    unsigned depth, box_depth;
    uint64_t id, seq, nb_seq;
    int size;
    pid_t *pids; /* the team's processes, in rank order */
} pooled_t;

struct rcoll_seg_pool {
    pthread_mutex_t lock;
    unsigned max, count;
    uint32_t made;  /* segments this process created (their numbers) */
    pooled_t *head; /* the most recently kept first */
};

struct rcoll_seg_pool *rcoll_seg_pool_create(unsigned max)
{
    if (!max)
        return NULL;
    struct rcoll_seg_pool *pool = calloc(1, sizeof *pool);
    if (!pool)
        return NULL; /* no pool: every team makes its own segment */
    pthread_mutex_init(&pool->lock, NULL);
    pool->max = max;
    return pool;
}

static void pooled_free(pooled_t *e, bool unmap)
{
    if (unmap)
        munmap(e->seg, e->seg_bytes);
    free(e->pids);
    free(e);
}

void rcoll_seg_pool_destroy(struct rcoll_seg_pool *pool)
{
    if (!pool)
        return;
    for (pooled_t *e = pool->head, *next; e; e = next) {
        next = e->next;
        pooled_free(e, true);
    }
    pthread_mutex_destroy(&pool->lock);
    free(pool);
}

/* A number for a new segment, alike on every rank once the leader offered it (0: no pool). */
static uint64_t pool_new_id(struct rcoll_seg_pool *pool)
{
    if (!pool)
        return 0;
    pthread_mutex_lock(&pool->lock);
    uint32_t n = ++pool->made;
    pthread_mutex_unlock(&pool->lock);
    return (uint64_t)(uint32_t)getpid() << 32 | n;
}

/* Puts e (a list) at the head of the pool; what no longer fits its size is unmapped. */
static void pool_return(struct rcoll_seg_pool *pool, pooled_t *list)
{
    if (!list)
        return;
    pooled_t *evict = NULL;
    pthread_mutex_lock(&pool->lock);
    while (list) {
        pooled_t *e = list;
        list = e->next;
        e->next = pool->head;
        pool->head = e;
        pool->count++;
    }
    if (pool->count > pool->max) { /* cut the oldest */
        pooled_t **pp = &pool->head;
        for (unsigned i = 0; i < pool->max; i++)
            pp = &(*pp)->next;
        evict = *pp;
        *pp = NULL;
        pool->count = pool->max;
    }
    pthread_mutex_unlock(&pool->lock);
    for (pooled_t *next; evict; evict = next) {
        next = evict->next;
        pooled_free(evict, true);
    }
}

static bool offered(const rcoll_tl_hello_t *h, uint64_t id, uint64_t *seq, uint64_t *nb_seq)
{
    for (uint32_t i = 0; i < h->ncand && i < RCOLL_TL_HELLO_CAND; i++)
        if (h->cand[i].id == id) {
            *seq = h->cand[i].seq > *seq ? h->cand[i].seq : *seq;
            *nb_seq = h->cand[i].nb_seq > *nb_seq ? h->cand[i].nb_seq : *nb_seq;
            return true;
        }
    return false;
}

/* The first of the leader's offered segments that has the layout the team planned (by its
 * lead's probe: a rank whose own probe said otherwise offered it too) and that every rank
 * offered (alike on every rank: from the hellos only), its numbers on from the highest any
 * rank reached; 0 if none. */
static uint64_t pool_choose(const shm_tl_t *s, const rcoll_tl_hello_t *hellos, uint64_t *seq,
                            uint64_t *nb_seq)
{
    const rcoll_view_t *t = s->v;
    const rcoll_tl_hello_t *lead = &hellos[t->local_ranks[0]];
    if (t->node_count != 1)
        return 0;
    for (uint32_t i = 0; i < lead->ncand && i < RCOLL_TL_HELLO_CAND; i++) {
        uint64_t id = lead->cand[i].id;
        if (!(lead->cand[i].fits & (s->cma_slow ? 2u : 1u)))
            continue;
        *seq = *nb_seq = 0;
        int r = 0;
        while (r < t->size && offered(&hellos[r], id, seq, nb_seq))
            r++;
        if (r == t->size)
            return id;
    }
    return 0;
}

/* s takes over kept segment `id` (out of `held`, which keeps the others). */
static void pool_take(shm_tl_t *s, pooled_t **held, uint64_t id, uint64_t seq, uint64_t nb_seq)
{
    pooled_t **pp = held;
    while ((*pp)->id != id) /* it is there: this rank offered it */
        pp = &(*pp)->next;
    pooled_t *e = *pp;
    *pp = e->next;
    s->seg = e->seg;
    s->seg_id = e->id;
    for (int i = 0; i < s->v->local_size; i++)
        s->area[i] = s->seg + SHM_HEADER_BYTES + (size_t)i * s->area_bytes;
    s->base.single_copy = true; /* only segments of teams with single copy are kept */
    for (int i = 0; i < s->v->local_size; i++) /* the channels' counts go on from the last team */
        s->bounce_sent[i] = atomic_load(&bounce_of(s, i, s->my_index)->chunk.value);
    s->base.first_seq = seq;
    s->base.first_nb_seq = nb_seq;
    pooled_free(e, false);
}

/* At destroy: keeps s's segment in the pool where it may serve a later team (true: kept). */
static bool pool_keep(shm_tl_t *s, uint64_t nb_seq)
{
    const rcoll_view_t *t = s->v;
    if (!s->seg || !s->seg_id || !s->base.reusable || !t->seg_pool || s->net || t->node_count != 1 ||
        !s->base.single_copy || s->memfd >= 0)
        return false;
    pooled_t *e = calloc(1, sizeof *e);
    pid_t *pids = malloc((size_t)t->size * sizeof *pids);
    if (!e || !pids) {
        free(e);
        free(pids);
        return false;
    }
    memcpy(pids, t->pid_of, (size_t)t->size * sizeof *pids);
    *e = (pooled_t){NULL, s->seg, s->seg_bytes, s->area_bytes, s->board_bytes, s->base.inbox_bytes,
                    s->depth, s->box_depth, s->seg_id, *t->seq, nb_seq, t->size, pids};
    pool_return(t->seg_pool, e);
    return true;
}

/* Every area has the same layout on every node (ranks on other nodes address it by offset). */
/* The board's inline areas: RCOLL_NB_AREAS, at most one per slot; where single copy measured
 * slow (areas of SLOW_CMA_NB_INLINE), SLOW_CMA_NB_AREAS unless RCOLL_NB_AREAS is set. */
static unsigned board_areas(const rcoll_config_t *cfg, bool cma_slow)
{
    int areas = cma_slow && !cfg->nb_areas_set && cfg->nb_areas > SLOW_CMA_NB_AREAS ? SLOW_CMA_NB_AREAS
                                                                                   : cfg->nb_areas;
    return (unsigned)(areas < cfg->nb_slots ? areas : cfg->nb_slots);
}

static void layout(shm_tl_t *s, const rcoll_view_t *t, size_t inbox_bytes)
{
    s->off_signal = sizeof(area_head_t);
    s->off_view = s->off_signal + (size_t)t->size * s->depth * sizeof(rcoll_line_t);
    s->off_pushed = s->off_view + (t->node_count > 1 ? (size_t)t->size * VIEW_LINES * sizeof(rcoll_line_t) : 0);
    s->off_advert = s->off_pushed + (t->node_count > 1 ? (size_t)t->size * s->box_depth * sizeof(pushed_block_t) : 0);
    s->off_bounce = s->off_advert + (t->node_count > 1 ? s->depth * sizeof(advert_block_t) : 0);
    s->bounce_ring = s->cma_slow ? BOUNCE_RING : 1;
    s->off_small = s->off_bounce + (size_t)t->ppn_max * bounce_bytes(s);
    s->off_smallin = s->off_small + (size_t)s->depth * PUB_SMALL_MAX;
    s->off_inbox = s->off_smallin + (size_t)s->depth * SMALL_INBOX;
    s->base.small_inbox_bytes = SMALL_INBOX;
    s->base.inbox_bytes = inbox_bytes;
    /* The seed's M_T is 4 KB for InfiniBand, where copying is the cost. Here a single copy is a
     * process_vm_writev system call (~2.5 us with page pinning) into a receiver that must have
     * entered the call, while a copy through shared memory with non-temporal stores (copy_out)
     * costs ~0.1 us per KB on each side and goes out at once. Measured on the 2-core machine
     * (rcoll-bench against Open MPI and MPICH; docs/tuning.md, "Why the shm zero-copy
     * threshold is 64 KB"): 64 KB, whether or not ranks outnumber cores. These are the
     * thresholds of a machine whose CMA copies about as fast as memcpy (the Intel machine of
     * 2026-11-29); where it measured slow they are lifted after the exchange (slow_single_copy). */
    size_t dflt = 64 * 1024;
    /* Across nodes the copy path is one message per block where a single copy over UCX tcp
     * adds a rendezvous (RTS, RTR) from 64 KB: over UCX tcp at np=4 the copy path won up to
     * 256 KB (10 alternating runs at 256 KB, median ratio to Open MPI's tcp: allgather 0.98
     * copied against 1.26 single copy, alltoall 0.99 against 1.08). From 512 KB the blocks
     * of 4 ranks no longer fit the 1 MB inbox anyway. */
    if (t->node_count > 1)
        dflt = 512 * 1024;
    s->base.zcopy_threshold = t->cfg->zcopy_threshold ? t->cfg->zcopy_threshold : dflt;
    /* The rooted collectives' messages on one node where every rank has its own core: single
     * copy from 256 KB. There one side copies in and the other out, and a block sent again
     * unchanged is not written again (copy_unchanged), while a single copy waits for its
     * receiver to have entered: np=2, rotating root, 64-128 KB, gather(v) 0.81-1.14x native ->
     * 0.37-0.47x with reused buffers, 0.92-1.06x -> 0.64-0.79x with new data each call. Ranks
     * sharing cores keep 64 KB (np=4 on 2 cores: scatterv 64-128 KB 0.63-0.71x -> 1.29-1.39x
     * through the copy path). docs/tuning.md, "Unchanged data". */
    bool crowded = t->wait && t->wait->crowded;
    s->base.zcopy_rooted = t->cfg->zcopy_threshold ? t->cfg->zcopy_threshold
                           : t->node_count > 1 || crowded ? dflt : 256 * 1024;
    s->unchanged_min = t->cfg->unchanged_min;
    /* Ranks sharing cores: a reader often runs on its writer's core, where the lines are in
     * its own caches (np=4 on 2 cores, bcast 64 B-8 KB 3-10% slower demoted). */
    s->demote_max = crowded ? 0 : t->cfg->demote_max;
    /* An exchange's blocks (allgather, alltoall: every rank copies its blocks in and its
     * peers' out at once) on one node: single copy from 32 KB. np=2, 32 KB per rank, median
     * ratio to native of 3 runs, 64 KB -> 32 KB: Open MPI allgather 1.74 -> 0.86, alltoall
     * 1.79 -> 0.93, MPICH 0.80 -> 0.46 and 1.03 -> 0.53; np=4 unchanged (docs/tuning.md, "Why
     * the shm zero-copy threshold is 64 KB"). Across nodes as above. */
    s->base.zcopy_exchange = t->cfg->zcopy_threshold ? t->cfg->zcopy_threshold
                                                     : t->node_count > 1 ? dflt : 32 * 1024;
    s->area_bytes = (s->off_inbox + 2 * s->box_depth * inbox_bytes + 4095) & ~(size_t)4095; /* in, out */
    s->seg_bytes = SHM_HEADER_BYTES + (size_t)t->local_size * s->area_bytes;
    s->nb_inline = s->cma_slow && !t->cfg->nb_inline_set && t->cfg->nb_inline < SLOW_CMA_NB_INLINE
                       ? SLOW_CMA_NB_INLINE : t->cfg->nb_inline;
    s->board_bytes = t->node_count == 1 ? rcoll_board_bytes(t->size, (unsigned)t->cfg->nb_slots,
                                                            board_areas(t->cfg, s->cma_slow), s->nb_inline) : 0;
    s->off_board = s->seg_bytes;
    s->seg_bytes += (s->board_bytes + 4095) & ~(size_t)4095;
}

/* The rings' depths and the layout of a team's segment. */
static void plan(shm_tl_t *s, const rcoll_view_t *t)
{
    /* Across nodes both rings keep the boxes' depth: a publication's pushed blocks and its
     * readers' word (wait_outbox_free) are tracked per box slot. */
    s->box_depth = BOX_DEPTH;
    s->depth = t->node_count == 1 && t->cfg->depth >= 2 && t->cfg->depth <= RCOLL_DEPTH_MAX
                   ? (unsigned)t->cfg->depth : BOX_DEPTH;
    layout(s, t, t->cfg->inbox_bytes);
}

/* Whether kept segment e has the layout of `s`. */
static bool pool_fits(const pooled_t *e, const shm_tl_t *s)
{
    return e->seg_bytes == s->seg_bytes && e->area_bytes == s->area_bytes &&
           e->board_bytes == s->board_bytes && e->inbox_bytes == s->base.inbox_bytes &&
           e->depth == s->depth && e->box_depth == s->box_depth;
}

/* The transport's memory for a team of `size` ranks (a node's ranks are at most that many). */
static shm_tl_t *shm_alloc(int size)
{
    shm_tl_t *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->memfd = -1;
    s->base.ops = &shm_ops;
    s->base.pull_reader = RCOLL_PULL_EVERY;
    for (int k = 0; k < RCOLL_DEPTH_MAX; k++)
        s->pub_reader[k] = RCOLL_PULL_EVERY;
    s->cma_probe = SHM_MAGIC;
    s->area = calloc((size_t)size, sizeof *s->area);
    s->peer_done_seen = calloc((size_t)size, sizeof *s->peer_done_seen);
    s->bounce_sent = calloc((size_t)size, sizeof *s->bounce_sent);
    s->sent_seq = calloc(2 * (size_t)size, sizeof *s->sent_seq);
    s->sent_bytes = s->sent_seq ? s->sent_seq + size : NULL;
    if (!s->area || !s->peer_done_seen || !s->bounce_sent || !s->sent_seq) {
        shm_destroy(&s->base);
        return NULL;
    }
    return s;
}

/* What a hello prepared: the transport's memory, allocated before the first exchange so that
 * its failure is in the hello (every rank then knows not to take a kept segment), and the
 * kept segments this rank offered. */
struct rcoll_tl_prep {
    shm_tl_t *s;
    pooled_t *held;
};

/* Whether a team on one node goes by a single copy measured slow: its first local rank's
 * probe (transport/cma_probe.c) said so, alike on every rank (the lead's hello and the
 * configuration); RCOLL_ZCOPY_THRESHOLD set keeps its value. */
static bool measured_slow(const rcoll_view_t *t, const rcoll_tl_hello_t *lead)
{
    rcoll_tl_probe_t p = {lead->cma_ns, lead->copy_ns, lead->cma_set_slow};
    return t->node_count == 1 && !t->cfg->zcopy_threshold && rcoll_tl_probe_cma_slow(&p);
}

/* The kept segments of `pool` that fit a team of `size` ranks on one node in which this
 * process is rank `rank`, taken out of the pool (at most RCOLL_TL_HELLO_CAND) and listed,
 * each with the verdicts of the single-copy probe whose layout it has: the team plans by its
 * lead's probe, which near the threshold may say otherwise than this process's. */
static pooled_t *pool_reserve(struct rcoll_seg_pool *pool, const rcoll_config_t *cfg, int rank,
                              int size, rcoll_tl_hello_t *out)
{
    rcoll_view_t one = {.rank = rank, .size = size, .node_count = 1, .local_rank = rank,
                        .local_size = size, .ppn_max = size, .cfg = cfg};
    shm_tl_t want[2];
    memset(want, 0, sizeof want);
    want[1].cma_slow = !cfg->zcopy_threshold; /* set, it keeps its value: no slow layout */
    plan(&want[0], &one);
    plan(&want[1], &one);
    pid_t me = getpid();
    pooled_t *held = NULL, **tail = &held;
    pthread_mutex_lock(&pool->lock);
    for (pooled_t **pp = &pool->head; *pp && out->ncand < RCOLL_TL_HELLO_CAND;) {
        pooled_t *e = *pp;
        uint32_t fits = (pool_fits(e, &want[0]) ? 1u : 0u) | (pool_fits(e, &want[1]) ? 2u : 0u);
        if (e->size != size || e->pids[rank] != me || !fits) {
            pp = &e->next;
            continue;
        }
        *pp = e->next;
        pool->count--;
        e->next = NULL;
        *tail = e;
        tail = &e->next;
        out->cand[out->ncand].id = e->id;
        out->cand[out->ncand].seq = e->seq;
        out->cand[out->ncand].nb_seq = e->nb_seq;
        out->cand[out->ncand].fits = fits;
        out->ncand++;
    }
    pthread_mutex_unlock(&pool->lock);
    return held;
}

struct rcoll_tl_prep *rcoll_node_tl_hello(struct rcoll_seg_pool *pool, const rcoll_config_t *cfg,
                                          const rcoll_tl_probe_t *probe, int rank, int size,
                                          rcoll_tl_hello_t *out)
{
    memset(out, 0, sizeof *out);
    out->cma_ns = probe ? probe->cma_ns : 0;
    out->copy_ns = probe ? probe->copy_ns : 0;
    out->cma_set_slow = probe ? probe->set_slow : 0;
    struct rcoll_tl_prep *prep = calloc(1, sizeof *prep);
    if (prep)
        prep->s = shm_alloc(size);
    if (!prep || !prep->s) {
        free(prep);
        out->status = -ENOMEM;
        return NULL;
    }
    if (pool)
        prep->held = pool_reserve(pool, cfg, rank, size, out);
    return prep;
}

void rcoll_node_tl_hello_drop(struct rcoll_seg_pool *pool, struct rcoll_tl_prep *prep)
{
    if (!prep)
        return;
    pool_return(pool, prep->held);
    shm_destroy(&prep->s->base);
    free(prep);
}

/* The memory file of a new segment (memfd, or POSIX when `posix`), its size set; its name for
 * the others in `name`: /proc/<pid>/fd/<fd>, or the POSIX name. */
static int segment_file(shm_tl_t *s, bool posix, char *name, size_t name_len)
{
    const rcoll_view_t *t = s->v;
    int fd = -1, err;
    if (!posix) {
        snprintf(name, name_len, "rcoll-%u", t->serial);
        fd = memfd_create(name, MFD_CLOEXEC);
        if (fd < 0)
            return -errno;
        snprintf(name, name_len, "/proc/%d/fd/%d", (int)getpid(), fd);
        if (ftruncate(fd, (off_t)s->seg_bytes) == 0)
            return fd;
    } else {
        snprintf(name, name_len, "/rcoll-%d-%u-%llx", (int)getpid(), t->serial,
                 (unsigned long long)(rcoll_now_ns() & 0xffffffffffull));
        fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fd < 0)
            return -errno;
        /* posix_fallocate returns the error itself (not in errno). */
        if ((err = posix_fallocate(fd, 0, (off_t)s->seg_bytes)) == 0)
            return fd;
        errno = err;
    }
    err = -errno;
    close(fd);
    if (posix)
        shm_unlink(name);
    return err;
}

/* The leader's segment: a memfd kept open until every rank has mapped it (s->memfd), else
 * (posix, or no memfd here) a POSIX one. */
static int create_segment(shm_tl_t *s, bool posix, char *name, size_t name_len)
{
    int fd = segment_file(s, posix, name, name_len);
    if (fd < 0 && !posix) /* no memfd here (an old kernel, a seccomp filter): POSIX at once */
        fd = segment_file(s, posix = true, name, name_len);
    if (fd < 0)
        return fd;
    int err = 0;
    s->seg = mmap(NULL, s->seg_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (s->seg == MAP_FAILED) {
        s->seg = NULL;
        err = -errno;
    }
    if (err || posix)
        close(fd);
    else
        s->memfd = fd;
    if (err) {
        if (posix)
            shm_unlink(name);
        return err;
    }
    shm_header_t *h = (shm_header_t *)(void *)s->seg;
    h->area_bytes = s->area_bytes;
    h->depth = s->depth;
    h->box_depth = s->box_depth;
    atomic_store_explicit(&h->stream_min, s->v->cfg->copy_stream == RCOLL_STREAM_OFF ? UINT64_MAX
                                                                                      : RCOLL_COPY_STREAM_MIN,
                          memory_order_relaxed);
    h->magic = SHM_MAGIC;
    return 0;
}

/* Whether a segment's name is the path of its creator's memfd. */
static bool is_memfd_name(const char *name)
{
    return strncmp(name, "/proc/", 6) == 0;
}

static int map_segment(shm_tl_t *s, const char *name)
{
    int fd = is_memfd_name(name) ? open(name, O_RDWR | O_CLOEXEC) : shm_open(name, O_RDWR, 0600);
    if (fd < 0)
        return -errno;
    /* Not the segment (another process's file where the creator's pid means another process,
     * as across PID namespaces): a file of another size would raise SIGBUS when read. */
    struct stat st;
    if (fstat(fd, &st) != 0 || (size_t)st.st_size != s->seg_bytes) {
        close(fd);
        return -EPROTO;
    }
    s->seg = mmap(NULL, s->seg_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int err = s->seg == MAP_FAILED ? -errno : 0;
    close(fd);
    if (err) {
        s->seg = NULL;
        return err;
    }
    shm_header_t *h = (shm_header_t *)(void *)s->seg;
    return h->magic == SHM_MAGIC && h->area_bytes == s->area_bytes && h->depth == s->depth &&
                   h->box_depth == s->box_depth
               ? 0
               : -EPROTO;
}

/* Can this process read a local peer's memory by CMA? Probed once, on the next local rank. */
static int probe_cma(shm_tl_t *s, const shm_offer_t *offers)
{
    const rcoll_view_t *t = s->v;
    if (t->cfg->cma == RCOLL_CMA_OFF)
        return 0;
    if (t->local_size == 1)
        return 1;
    int peer = t->local_ranks[(t->local_rank + 1) % t->local_size];
    uint64_t got = 0;
    struct iovec local = {&got, sizeof got};
    struct iovec remote = {(void *)(uintptr_t)offers[peer].probe_addr, sizeof got};
    ssize_t n = process_vm_readv(t->pid_of[peer], &local, 1, &remote, 1, 0);
    return n == (ssize_t)sizeof got && got == SHM_MAGIC;
}

static rcoll_status_t exchange(const rcoll_oob_t *oob, const void *mine, void *all, size_t len)
{
    return oob->allgather(mine, all, len, oob->coll_info) == 0 ? RCOLL_OK : RCOLL_ERR_BOOTSTRAP;
}

/* The longest sleep of the team's waits, once its segment and single copy are known. */
static void set_slice(shm_tl_t *s)
{
    if (!s->base.single_copy) /* chunks arrive on lines nobody sleeps on: sleep in short slices */
        s->base.block_slice_ns = 200 * 1000;
    /* A team on one node of a context whose other teams span nodes (a node team): its sleepers
     * wake in the network's short slices, to serve what those teams' peers read from this
     * process (pause_on_line looks at the context's network). */
    if (!s->net && rcoll_net_ctx_any(s->v->net_ctx))
        s->base.block_slice_ns = 100 * 1000;
}

/* Every rank's outcome, alike on all: RCOLL_OK, or the first failure; *retry when every
 * failure was a peer that could not open its leader's memfd (all then try a POSIX segment). */
static rcoll_status_t agree(shm_tl_t *s, const rcoll_oob_t *oob, shm_answer_t mine,
                            char *leader_name, bool leader, bool *retry)
{
    const rcoll_view_t *t = s->v;
    shm_answer_t *all = calloc((size_t)t->size, sizeof *all);
    *retry = false;
    if (!all)
        return RCOLL_ERR_NOMEM;
    rcoll_status_t st = exchange(oob, &mine, all, sizeof mine);
    /* Everyone has mapped it (or given up): nothing stays behind. */
    if (s->memfd >= 0)
        close(s->memfd);
    s->memfd = -1;
    if (leader && leader_name[0] && !is_memfd_name(leader_name))
        shm_unlink(leader_name);
    s->base.single_copy = true;
    bool refused = false, other = false;
    for (int r = 0; st == RCOLL_OK && r < t->size; r++) {
        refused |= all[r].status && all[r].memfd_refused;
        other |= all[r].status && !all[r].memfd_refused;
    }
    *retry = st == RCOLL_OK && refused && !other;
    for (int r = 0; st == RCOLL_OK && !*retry && r < t->size; r++) {
        if (all[r].status)
            st = rcoll_view_error(t, RCOLL_ERR_SYSTEM, "shm transport: rank %d could not set up "
                                  "shared memory: %s", r, strerror(-all[r].status));
        else if (t->node_of[r] == t->node_of[t->rank] && !all[r].cma_ok)
            s->base.single_copy = false;
    }
    free(all);
    if (*retry)
        return RCOLL_OK;
    set_slice(s);
    return st;
}

/* Such a team, single copy agreed, takes the copy path wherever it fits: no threshold of
 * single copy. */
static bool slow_single_copy(shm_tl_t *s)
{
    if (!s->cma_slow || !s->base.single_copy)
        return false;
    s->base.zcopy_threshold = s->base.zcopy_rooted = s->base.zcopy_exchange = SIZE_MAX;
    s->base.single_copy_slow = true;
    /* A stream needs its receiver on a core to copy the chunks out: not where ranks share
     * cores (np=4 on 2 cores: gather of 512 KB-4 MB 13-17x slower than CMA, bcast of 2-4 MB
     * 3x; docs/tuning.md). */
    s->streams = !s->v->wait->crowded;
    return true;
}

/* Every rank's hellos say nothing failed, and node_count is alike: so is the choice. */
static bool take_kept(shm_tl_t *s, const rcoll_tl_hello_t *hellos, pooled_t **held)
{
    const rcoll_view_t *t = s->v;
    for (int r = 0; r < t->size; r++)
        if (hellos[r].status)
            return false;
    uint64_t seq = 0, nb_seq = 0, id = pool_choose(s, hellos, &seq, &nb_seq);
    if (id)
        pool_take(s, held, id, seq, nb_seq);
    return id != 0;
}

/* ---- the store probe (RCOLL_COPY_STREAM=auto) ----
 * Whether copies into memory a peer reads should use non-temporal stores depends on the
 * processor: on the AMD EPYC test machine a plain store into a line the peer read in the last
 * call first took it back from the peer's cache (64 KB in 28 us against 3.3 with non-temporal
 * stores), on an Intel Xeon one the peer's reads of lines written around the caches cost more
 * (bcast 32 KB-512 KB 1.6-1.9x native against 1.1-1.6x with plain stores). Where they start
 * depends on it too: in another mode of the EPYC machine non-temporal stores made calls of
 * 8 KB with changing data take 1.2-1.9x as long, while the two kinds were even at 32 KB. So
 * the segment's creator and the next local rank measure it once, as the transports use it:
 * the creator copies PROBE_SMALL and PROBE_BYTES into its outbox, the other copies them out,
 * PROBE_ROUNDS rounds of each size with each kind of store; the fastest round of each decides
 * (plain only if 10% faster): plain at the larger size, no non-temporal stores at all; else
 * plain at the smaller, non-temporal from twice it; else from RCOLL_COPY_STREAM_MIN. The
 * creator sets the segment's stream_min, which every rank of the node reads. Ranks that share
 * cores do not probe (they would measure the scheduler); nor does an earlier team's reused
 * segment, which keeps its answer. docs/tuning.md, "Copies into shared memory". */
#define PROBE_BYTES (32 * 1024)
#define PROBE_SMALL RCOLL_COPY_STREAM_MIN
#define PROBE_ROUNDS 12
#define PROBE_TIMEOUT_NS (50ull * 1000 * 1000)

/* Waits until the line reaches `target`; false after the deadline (the other rank is gone or
 * was not scheduled: the probe is abandoned). */
static bool probe_wait(rcoll_line_t *line, uint64_t target, uint64_t deadline)
{
    for (unsigned n = 0; !rcoll_line_reached(line, target); n++) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
        if ((n & 255) == 255 && rcoll_now_ns() > deadline)
            return false;
    }
    return true;
}

/* Whether plain stores were at least 10% faster in the fastest rounds of each kind. */
static bool plain_wins(const uint64_t best[2])
{
    return best[0] + best[0] / 10 < best[1];
}

/* Where non-temporal stores start, from the fastest rounds (ns) per size (small, large) and kind
 * (plain, non-temporal). */
static uint64_t probed_stream_min(const uint64_t best[2][2])
{
    if (plain_wins(best[1]))
        return UINT64_MAX;
    return plain_wins(best[0]) ? 2 * PROBE_SMALL : PROBE_SMALL;
}

static void probe_stores(shm_tl_t *s)
{
    const rcoll_view_t *t = s->v;
    shm_header_t *h = (shm_header_t *)(void *)s->seg;
    if (t->cfg->copy_stream != RCOLL_STREAM_AUTO || t->local_size < 2 || t->local_rank > 1 ||
        t->wait->crowded || s->base.inbox_bytes < PROBE_BYTES)
        return;
    unsigned char *buf = outbox_of(s, t->local_ranks[0], 1); /* unused until rank 0 publishes */
    unsigned char *mine = malloc(PROBE_BYTES);
    uint64_t deadline = rcoll_now_ns() + PROBE_TIMEOUT_NS;
    uint64_t best[2][2] = {{UINT64_MAX, UINT64_MAX}, {UINT64_MAX, UINT64_MAX}};
    bool ok = mine != NULL;
    if (mine)
        memset(mine, 0x5a, PROBE_BYTES);
    for (uint64_t round = 1; ok && round <= 4 * PROBE_ROUNDS; round++) {
        bool nt = round & 1, large = round & 2; /* kinds and sizes alternate, as calls would */
        size_t bytes = large ? PROBE_BYTES : PROBE_SMALL;
        if (t->local_rank == 1) { /* the reader */
            ok = probe_wait(&h->probe_round, round, deadline);
            if (ok)
                memcpy(mine, buf, bytes);
            rcoll_line_post(&h->probe_ack, ok ? round : UINT64_MAX); /* a failed wait ends it */
            continue;
        }
        uint64_t t0 = rcoll_now_ns();
        copy_stream(buf, mine, bytes, nt);
        rcoll_line_post(&h->probe_round, round);
        ok = probe_wait(&h->probe_ack, round, deadline) && atomic_load(&h->probe_ack.value) == round;
        uint64_t dt = rcoll_now_ns() - t0;
        if (ok && round > 4 && dt < best[large][nt]) /* the first of each: warm-up */
            best[large][nt] = dt;
    }
    free(mine);
    if (t->local_rank == 0 && !ok) /* let the reader go */
        rcoll_line_post(&h->probe_round, UINT64_MAX);
    if (t->local_rank != 0)
        return;
    uint64_t from = ok ? probed_stream_min(best) : RCOLL_COPY_STREAM_MIN;
    atomic_store_explicit(&h->stream_min, from, memory_order_relaxed);
    char choice[64];
    if (from == UINT64_MAX)
        snprintf(choice, sizeof choice, "plain stores");
    else
        snprintf(choice, sizeof choice, "non-temporal from %llu KB", (unsigned long long)(from / 1024));
    rcoll_view_log(t, RCOLL_LOG_INFO, "node transport: store probe, through the segment and back to back, "
                   "plain / non-temporal stores: %d KB %.1f / %.1f us, %d KB %.1f / %.1f us: %s%s",
                   PROBE_SMALL / 1024, ok ? (double)best[0][0] / 1000 : 0.0, ok ? (double)best[0][1] / 1000 : 0.0,
                   PROBE_BYTES / 1024, ok ? (double)best[1][0] / 1000 : 0.0, ok ? (double)best[1][1] / 1000 : 0.0,
                   ok ? "" : "abandoned (the other rank did not answer), ", choice);
}

rcoll_status_t rcoll_node_tl_create(const rcoll_view_t *t, const rcoll_oob_t *oob,
                                    const rcoll_tl_hello_t *hellos, struct rcoll_tl_prep *prep,
                                    rcoll_tl_t **out)
{
    shm_tl_t *s = prep ? prep->s : NULL; /* allocated by the hello (NULL: it said so) */
    pooled_t *held = prep ? prep->held : NULL;
    free(prep);
    if (s && t->node_count > 1) {
        s->adv_seen = calloc((size_t)t->size, sizeof *s->adv_seen);
        s->heard = calloc(2 * (size_t)t->size, sizeof *s->heard);
        s->pulled_from = s->heard ? s->heard + t->size : NULL;
    }
    int err = (!s || (t->node_count > 1 && (!s->adv_seen || !s->heard))) ? -ENOMEM : 0;
    bool leader = t->local_rank == 0;
    if (s) {
        s->base.wait = t->wait;
        s->v = t;
        s->my_index = t->local_rank;
        s->cma_slow = measured_slow(t, &hellos[t->local_ranks[0]]);
        plan(s, t);
    }
    /* A kept segment offered by every rank (the segment pool, above): no exchange at all. */
    bool reused = s && take_kept(s, hellos, &held);
    pool_return(t->seg_pool, held);
    rcoll_status_t st = RCOLL_OK;
    bool retry = !reused, posix = t->cfg->shm_posix;
    /* Without these few bytes this rank cannot even take part in the exchange. */
    shm_offer_t *offers = reused ? NULL : calloc((size_t)t->size, sizeof *offers);
    if (!reused && !offers) {
        shm_destroy(s ? &s->base : NULL);
        return rcoll_view_error(t, RCOLL_ERR_NOMEM, "shm transport: out of memory");
    }
    while (retry) { /* a memfd, then (a peer could not open it) a POSIX segment */
        shm_offer_t mine;
        memset(&mine, 0, sizeof mine);
        mine.status = err;
        mine.probe_addr = s ? (uint64_t)(uintptr_t)&s->cma_probe : 0;
        char created[64] = "";
        if (s && !err && leader &&
            (mine.status = create_segment(s, posix, created, sizeof created)) == 0) {
            memcpy(mine.name, created, sizeof created);
            mine.id = s->seg_id = pool_new_id(t->seg_pool);
        }
        st = exchange(oob, &mine, offers, sizeof mine);
        if (st != RCOLL_OK) {
            if (created[0] && !is_memfd_name(created))
                shm_unlink(created);
            shm_destroy(s ? &s->base : NULL);
            free(offers);
            return rcoll_view_error(t, st, "shm transport: out-of-band exchange failed");
        }
        if (!s) { /* still take part in the last exchange, so the others see why and give up */
            shm_answer_t *all = (shm_answer_t *)(void *)offers, nomem = {-ENOMEM, 0, 0};
            exchange(oob, &nomem, all, sizeof nomem);
            free(offers);
            return rcoll_view_error(t, RCOLL_ERR_NOMEM, "shm transport: out of memory");
        }
        const shm_offer_t *lead = &offers[t->local_ranks[0]];
        if (!leader)
            s->seg_id = lead->id;
        shm_answer_t answer = {mine.status, 0, 0};
        if (!answer.status && lead->status)
            answer.status = lead->status;
        if (!answer.status && !leader) {
            answer.status = map_segment(s, lead->name);
            answer.memfd_refused = answer.status && is_memfd_name(lead->name);
        }
        if (!answer.status) {
            for (int i = 0; i < t->local_size; i++)
                s->area[i] = s->seg + SHM_HEADER_BYTES + (size_t)i * s->area_bytes;
            answer.cma_ok = probe_cma(s, offers);
        }
        st = agree(s, oob, answer, created, leader, &retry);
        if (retry && s->seg) { /* every rank again, with a POSIX segment */
            munmap(s->seg, s->seg_bytes);
            s->seg = NULL;
        }
        if (retry && leader)
            rcoll_view_log(t, RCOLL_LOG_INFO, "shm transport: a rank could not open its node "
                           "leader's memfd (/proc/<pid>/fd): a POSIX segment in /dev/shm instead");
        posix = true; /* a POSIX segment's failures are never retried */
    }
    if (reused)
        set_slice(s);
    else if (st == RCOLL_OK)
        probe_stores(s);
    free(offers);
    if (st == RCOLL_OK && s->base.single_copy && s->board_bytes) /* alike on every rank */
        s->base.board = rcoll_board_attach(t, s->seg + s->off_board, (unsigned)t->cfg->nb_slots,
                                           board_areas(t->cfg, s->cma_slow), s->nb_inline, t->cfg->nb_inline,
                                           s->cma_slow,
                                           &((shm_header_t *)(void *)s->seg)->stream_min);
    if (st == RCOLL_OK && t->node_count > 1) /* all ranks agree: all take part */
        st = rcoll_net_create(t, oob, s->area[s->my_index], s->area_bytes, &s->net);
    if (st == RCOLL_OK && s->net)
        rcoll_net_hello_at(s->net, view_off(s, t->rank, VIEW_HELLO) + offsetof(rcoll_line_t, value));
    if (st != RCOLL_OK) {
        shm_destroy(&s->base);
        return st;
    }
    const rcoll_tl_hello_t *lead = &hellos[t->local_ranks[0]];
    bool slow = slow_single_copy(s);
    char when[160];
    if (slow && lead->cma_set_slow)
        snprintf(when, sizeof when, "only where the copy path does not fit (RCOLL_CMA=slow)");
    else if (slow)
        snprintf(when, sizeof when, "only where the copy path does not fit (rank %d measured a single "
                 "copy of 256 KB at %.1f us against %.1f us for two copies)", t->local_ranks[0],
                 lead->cma_ns / 1e3, lead->copy_ns / 1e3);
    else
        snprintf(when, sizeof when, "from %zu bytes (an exchange's blocks from %zu)",
                 s->base.zcopy_threshold, s->base.zcopy_exchange);
    char ring[96] = "";
    if (s->streams)
        snprintf(ring, sizeof ring, "; a rooted call's puts beyond the inbox stream through a ring "
                 "of %u chunks of %u KB", BOUNCE_RING, BOUNCE_CHUNK / 1024);
    if (t->rank == 0)
        rcoll_view_log(t, RCOLL_LOG_INFO, "node transport: %d ranks on %d node(s); rings of %u lines "
                       "and %u boxes of %zu bytes per rank; single copy %s%s%s%s", t->size,
                       t->node_count, s->depth, s->box_depth, s->base.inbox_bytes, when,
                       s->base.single_copy ? " (CMA)" : " (no CMA: bounce)", ring,
                       reused ? "; the segment of an earlier team of these processes, reused" : "");
    *out = &s->base;
    return RCOLL_OK;
}
