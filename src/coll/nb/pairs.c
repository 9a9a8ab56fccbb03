/* Nonblocking pairwise exchange on the board ("pairs"), every collective: one-sided completion
 * by peers, the host-CPU-free progress of [yu-tr04] done with CMA instead of a NIC.
 *
 * Every collective is a set of (source -> destination) blocks: per peer, the region of a rank's
 * memory that goes to it and the region where its data for the rank goes (rcoll_nb_regions).
 * At start a rank posts both on the board; data it sends of at most RCOLL_NB_INLINE bytes in
 * all is copied onto the board first, into its slot's head run or an inline area (its buffers
 * are then free at once; a rank that receives nothing streams one shared block of 16 KB or
 * more instead: posted first, then copied in parts its readers take as they come). A pair is
 * moved by the first rank that finds both ends posted and claims it:
 *   - an inline block by its receiver (a copy out of shared memory), or, from 4 KB, by the
 *     sender (CMA) when the receiver is not inside rcoll and sends nothing to the sender (in
 *     a rooted collective; between two ranks that both send and receive the receiver comes
 *     back sooner than the write is done); the sender also writes it when it needs the slot
 *     back (rcoll_nb_rescue);
 *   - any other block by either end, one CMA copy (the receiver reads the sender's region, or
 *     the sender writes into the receiver's): the later of the two moves it at its arrival, so
 *     a rank that posted and went computing finds its data delivered; a receiver that is
 *     waiting inside rcoll is left to read it itself, so that ranks present together copy in
 *     parallel instead of the later one doing both directions; but between two ranks that both
 *     send and receive (allgather, alltoall and their v-forms) each writes its own block into
 *     the other while the other is inside rcoll (still in parallel: a CMA write measured 15-30%
 *     faster than a read from 64 KB, docs/tuning.md "Nonblocking collectives").
 * A rank's call is complete when every block into it is moved and every block of its own
 * buffers (not inline) has been taken. In a rooted collective the blocks its shape leaves
 * empty (between two ranks that are not the root; into a bcast or scatter root; out of a gather
 * root) are known to both ends and never touched: nobody marks or waits for them. Bytes: each block crosses once (inline: twice, through
 * the slot). Steps: none; a rank waits only for the arrival of the peers it exchanges with.
 * Wins whenever ranks arrive apart (the early ones compute while the late ones move the data);
 * with everyone present, work splits by arrival order. */
#include <stdlib.h>
#include <string.h>

#include "coll/colls.h"
#include "coll/nb/nb.h"
#include "core/team.h"

/* Inline blocks of at least this size are written into a receiver that is not inside rcoll. */
#define PUSH_INLINE_MIN 4096

static bool any_coll(rcoll_coll_t coll)
{
    (void)coll;
    return true;
}

static rcoll_region_t region(const void *base, size_t off, size_t len)
{
    rcoll_region_t g = {len ? (uint64_t)(uintptr_t)((const char *)base + off) : 0, len};
    return g;
}

/* The allgathers' own block as peers read it: from the send buffer, or in place from the receive
 * buffer. Not from the receive buffer's copy of it: a peer that read those lines leaves them
 * shared in its cache, and the next start's own copy, storing into them, then pays a cross-core
 * invalidation per line (rep movsb 6x slower: persistent allgather of 128 KB at np=2 took 2x
 * the blocking call; docs/tuning.md, "Nonblocking collectives"). */
static rcoll_region_t own_region(const rcoll_args_t *a, size_t off, size_t len)
{
    return a->sendbuf == RCOLL_IN_PLACE ? region(a->recvbuf, off, len) : region(a->sendbuf, 0, len);
}

void rcoll_nb_regions(const struct rcoll_request *r, int peer, rcoll_region_t *send, rcoll_region_t *recv)
{
    const rcoll_args_t *a = &r->args;
    int me = a->rank;
    bool root = a->rank == a->root;
    size_t m = a->bytes;
    rcoll_region_t none = {0, 0};
    *send = *recv = none;
    if (r->verdict != RCOLL_CALL_RUN || a->idle) /* this rank moves nothing */
        return;
    switch (r->call.coll) {
    case RCOLL_COLL_ALLGATHER:
        *send = own_region(a, (size_t)me * m, m);
        *recv = region(a->recvbuf, (size_t)peer * m, m);
        break;
    case RCOLL_COLL_ALLTOALL:
        *send = region(a->sendbuf, (size_t)peer * m, m);
        *recv = region(a->recvbuf, (size_t)peer * m, m);
        break;
    case RCOLL_COLL_BCAST:
        if (root)
            *send = region(a->recvbuf, 0, m);
        else if (peer == a->root)
            *recv = region(a->recvbuf, 0, m);
        break;
    case RCOLL_COLL_GATHER:
        if (root)
            *recv = region(a->recvbuf, (size_t)peer * m, m);
        else if (peer == a->root)
            *send = region(a->sendbuf, 0, m);
        break;
    case RCOLL_COLL_SCATTER:
        if (root)
            *send = region(a->sendbuf, (size_t)peer * m, m);
        else if (peer == a->root)
            *recv = region(a->recvbuf, 0, m);
        break;
    case RCOLL_COLL_ALLGATHERV:
        *send = own_region(a, a->rdispls[me], a->rcounts[me]);
        *recv = region(a->recvbuf, a->rdispls[peer], a->rcounts[peer]);
        break;
    case RCOLL_COLL_ALLTOALLV:
        *send = region(a->sendbuf, a->sdispls[peer], a->scounts[peer]);
        *recv = region(a->recvbuf, a->rdispls[peer], a->rcounts[peer]);
        break;
    case RCOLL_COLL_GATHERV:
        if (root)
            *recv = region(a->recvbuf, a->rdispls[peer], a->rcounts[peer]);
        else if (peer == a->root)
            *send = region(a->sendbuf, 0, m);
        break;
    case RCOLL_COLL_SCATTERV:
        if (root)
            *send = region(a->sendbuf, a->sdispls[peer], a->scounts[peer]);
        else if (peer == a->root)
            *recv = region(a->recvbuf, 0, m);
        break;
    default: /* barrier: nothing but the arrival */
        break;
    }
}

/* The send regions' bytes, counting once a region every peer shares (allgather, bcast). */
static size_t send_bytes(const rcoll_board_desc_t *d, int size, int me)
{
    size_t total = 0;
    const rcoll_region_t *last = NULL;
    for (int p = 0; p < size; p++) {
        if (p == me || !d[p].send.len)
            continue;
        if (!last || last->addr != d[p].send.addr || last->len != d[p].send.len)
            total += d[p].send.len;
        last = &d[p].send;
    }
    return total;
}

/* Copies the send regions into the inline area, each shared region once. */
static void copy_inline(rcoll_board_t *b, rcoll_board_desc_t *d, int size, int me, unsigned char *area)
{
    size_t off = 0;
    rcoll_region_t last = {0, 0};
    uint64_t last_off = 0;
    for (int p = 0; p < size; p++) {
        if (p == me || !d[p].send.len)
            continue;
        if (last.len && last.addr == d[p].send.addr && last.len == d[p].send.len) {
            d[p].send.addr = last_off;
            continue;
        }
        last = d[p].send;
        rcoll_board_fill(b, area + off, (const void *)(uintptr_t)d[p].send.addr, d[p].send.len);
        last_off = d[p].send.addr = RCOLL_BOARD_INLINE | off;
        off += (d[p].send.len + 63) & ~(size_t)63;
    }
}

/* My peers whose pairs with me carry something (r->in, r->out). Rooted collectives: blocks
 * that the collective's shape leaves empty, as both ends know: between two ranks that are not
 * the root, into the root of bcast and scatter(v), out of the root of gather(v). Posted as such
 * (rcoll_board_post's masks): nobody moves, marks or waits for them (a bcast root, say, is
 * complete once its receivers took its data, whether or not the others arrived; a receiver
 * writes no line but the root's and its own). */
static void shape(struct rcoll_request *r)
{
    int root = r->args.root, me = r->args.rank, size = r->args.size;
    uint64_t others = (size < 64 ? (1ull << size) - 1 : ~0ull) & ~(1ull << me);
    uint64_t from_root = me == root ? 0 : 1ull << root;
    switch (r->call.coll) {
    case RCOLL_COLL_BCAST: /* only (root -> others) */
    case RCOLL_COLL_SCATTER:
    case RCOLL_COLL_SCATTERV:
        r->in = from_root;
        r->out = me == root ? others : 0;
        break;
    case RCOLL_COLL_GATHER: /* only (others -> root) */
    case RCOLL_COLL_GATHERV:
        r->in = me == root ? others : 0;
        r->out = from_root;
        break;
    default:
        r->in = r->out = others;
        break;
    }
}

static bool has(uint64_t mask, int p)
{
    return (mask >> p) & 1;
}

/* Calls whose blocks follow a pattern: a rank whose blocks to its peers are one region shared
 * by every peer (allgather, bcast, gather) or all of one length (alltoall, scatter) and fit the
 * board says so in its head word, and puts them in its slot's head run (up to head_max, from
 * the head line's payload on) or its inline area, at offset 0 (shared) or at the peer's
 * ordinal times the block (per peer). A receiver then finds its block without the sender's
 * descriptors: it learns the arrival and reads tiny data in one cache line, as the blocking
 * algorithms' published lines do, and the rest in the lines after it. A call in the head run
 * takes no inline area, so a rank runs as many such calls ahead as the board has slots. */
#define DIRECT (1u << 31)
#define DIRECT_PER_PEER (1u << 30)
#define DIRECT_AREA (1u << 29)
#define DIRECT_STREAM (1u << 28) /* the area's one shared block is streamed (rcoll_board_stream_*) */
#define DIRECT_LEN 0xffffffu

/* A shared block in the inline area from this size is streamed: posted first, then copied in
 * parts that its readers copy out as they come, by a rank that receives nothing in the call (a
 * bcast root, a gather's senders: their readers would wait for the whole copy; an allgather's
 * ranks copy their peers' blocks out meanwhile, and streaming measured no better there) where
 * every rank has its own core (crowded ranks take turns on a core: the reader would only wait).
 * np=2, post+wait against rcoll's own blocking call: docs/tuning.md, "Nonblocking collectives". */
#define STREAM_MIN (16 * 1024)
#define STREAM_PART (8 * 1024)

/* A rank that also receives in the call (allgather, alltoall) puts at most this much inline: it
 * copies its peers' blocks out meanwhile, and above it one CMA copy per block measured faster
 * than two through the board (np=2, post+wait against the blocking call: 24 KB 0.9-1.2x either
 * way, 48 KB 0.98-1.14x inline against 0.79-0.95x by CMA, 64 KB 1.2-1.4x against 0.93-1.23x;
 * docs/tuning.md, "Nonblocking collectives"). Not where single copy measured slow
 * (rcoll_board_cma_slow): there the whole inline area is used (1 MB), while a rank that
 * receives nothing in the call (a bcast root, a gather's senders) keeps RCOLL_NB_INLINE
 * (rcoll_board_send_inline): above it a late sender moves its block by CMA as it arrives, so a
 * receiver that posted and went computing finds it delivered (ibcast of 128-256 KB with half
 * the ranks late: the early ranks' wait 0.03-0.04 of the pure time by CMA, 0.55-0.85 through
 * the board, which they copy out themselves; docs/tuning.md, "Where a single copy is slow").
 * A persistent request's sender uses the whole area all the same: what it promises is a start
 * and wait no dearer than the blocking call (np=2 bcast_init and gather_init of 128 KB-1 MB
 * 0.30-0.58 of the blocking call's speed with 68 KB, 0.72-0.94 with the area). */
#define SYMMETRIC_INLINE_MAX (40 * 1024)

/* Where every rank has its own core, a call's blocks go in the head run only up to this many
 * bytes, larger ones through the inline area: in the run, 512 B-1 KB took 1.02-1.71x as long
 * (np=2, rcoll-ab, nonblocking and persistent allgather and alltoall 1.12-1.71x, bcast and
 * gather 1.02-1.22x), up to 256 B the run is as fast or faster. Where ranks share cores the
 * run takes all it holds: its depth (a slot per call, against RCOLL_NB_AREAS areas) lets a
 * root run ahead of receivers waiting for a core (np=4, --sync none, bcast and gather of
 * 512 B-1 KB 3-3.6x slower through the areas). docs/tuning.md, "Nonblocking collectives". */
#define HEAD_OWN_CORE 256u

static size_t head_max(const struct rcoll_request *r)
{
    return r->args.team->wait.crowded ? RCOLL_BOARD_HEAD_BYTES : HEAD_OWN_CORE;
}

/* The peers' ordinal of p seen from me (me skipped). */
static int ordinal(int p, int me)
{
    return p < me ? p : p - 1;
}

static size_t align64(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

/* Where block `len` of a direct word lies for the peer of ordinal k: its board address. */
static uint64_t direct_addr(uint32_t word, int k)
{
    size_t len = word & DIRECT_LEN;
    size_t stride = word & DIRECT_AREA ? align64(len) : len;
    size_t off = word & DIRECT_PER_PEER ? (size_t)k * stride : 0;
    return (word & DIRECT_AREA ? RCOLL_BOARD_INLINE : RCOLL_BOARD_HEAD) | off;
}

/* The head word of a call with a pattern that fits, or 0 (the descriptors then say it all). */
static uint32_t direct_word(const struct rcoll_request *r, const rcoll_board_desc_t *d, size_t area)
{
    int size = r->args.size;
    const rcoll_region_t *first = NULL;
    bool shared = true, equal = true;
    for (int p = 0; p < size; p++) {
        if (!has(r->out, p))
            continue;
        if (!first)
            first = &d[p].send;
        shared &= d[p].send.addr == first->addr && d[p].send.len == first->len;
        equal &= d[p].send.len == first->len;
    }
    if (!first) /* my shape sends nothing */
        return DIRECT;
    size_t len = first->len, peers = (size_t)size - 1;
    if (len > DIRECT_LEN || !(shared || equal))
        return 0;
    uint32_t word = DIRECT | (uint32_t)len | (shared ? 0 : DIRECT_PER_PEER);
    if ((shared ? len : len * peers) <= head_max(r))
        return word;
    if ((shared ? align64(len) : align64(len) * peers) <= area)
        return word | DIRECT_AREA;
    return 0;
}

/* Copies my blocks where the word says (a streamed one after the post) and points my
 * descriptors at them (a peer pushed to by CMA or rescued reads them there). */
static void copy_direct(const struct rcoll_request *r, rcoll_board_t *b, rcoll_board_desc_t *d, uint32_t word)
{
    int size = r->args.size, me = r->args.rank;
    size_t len = word & DIRECT_LEN;
    unsigned char *base = word & DIRECT_AREA ? rcoll_board_inline(b, r->seq) : rcoll_board_head(b, r->seq);
    bool copied = false;
    for (int p = 0; p < size; p++) { /* empty blocks too: held, nobody needs to take them */
        if (!has(r->out, p))
            continue;
        uint64_t addr = direct_addr(word, ordinal(p, me));
        if (len && !(word & DIRECT_STREAM) && (!copied || (word & DIRECT_PER_PEER)))
            rcoll_board_fill(b, base + (addr & ~RCOLL_BOARD_HELD), (const void *)(uintptr_t)d[p].send.addr, len);
        copied = true;
        d[p].send.addr = addr;
    }
}

/* Whether my blocks ride in the head run alone (direct_word's head case), from the call's
 * arguments before any descriptor is made: such a post needs no inline area. */
static bool pairs_head_only(const struct rcoll_request *r, rcoll_board_t *b)
{
    (void)b;
    const rcoll_args_t *a = &r->args;
    if (r->verdict != RCOLL_CALL_RUN || a->idle) /* sends nothing */
        return true;
    size_t m = a->bytes, all = m * (size_t)(a->size - 1);
    bool root = a->rank == a->root;
    switch (r->call.coll) {
    case RCOLL_COLL_BARRIER:
        return true;
    case RCOLL_COLL_ALLGATHER: /* one region every peer shares */
        return m <= head_max(r);
    case RCOLL_COLL_BCAST:
        return !root || m <= head_max(r);
    case RCOLL_COLL_GATHER:
        return root || m <= head_max(r);
    case RCOLL_COLL_ALLTOALL: /* a block per peer */
        return all <= head_max(r);
    case RCOLL_COLL_SCATTER:
        return !root || all <= head_max(r);
    default:
        return false;
    }
}

static bool word_in_area(uint32_t word)
{
    return (word & DIRECT) && (word & DIRECT_AREA);
}

/* A prepared request's post (a persistent one; its arguments hold from start to start), kept
 * from its first start when its blocks ride at fixed places on the board: the same arguments
 * make the same shape, head word and descriptors every time, so a later start copies the
 * descriptors and the data and posts (a persistent 8-byte allgather's start at np=2: 1,097 ->
 * 934 instructions; docs/tuning.md, "Nonblocking collectives"). */
typedef struct {
    uint64_t in, out;
    uint32_t word;
    rcoll_board_desc_t *posted; /* the descriptors as posted, size of them */
    const void **from;          /* per peer, where its block's data comes from */
} pairs_kept_t;

static void keep_post(struct rcoll_request *r, const rcoll_board_desc_t *d, uint32_t word)
{
    int size = r->args.size;
    pairs_kept_t *k = malloc(sizeof *k + (size_t)size * (sizeof *k->posted + sizeof *k->from));
    if (!k) /* no memory: every start prepares its post, nothing else lost */
        return;
    k->in = r->in;
    k->out = r->out;
    k->word = word;
    k->posted = (rcoll_board_desc_t *)(void *)(k + 1);
    k->from = (const void **)(void *)(k->posted + size);
    for (int p = 0; p < size; p++)
        k->from[p] = (const void *)(uintptr_t)d[p].send.addr;
    r->state = k;
}

/* A start of a kept post: its descriptors and data, then the post. */
static rcoll_status_t start_kept(struct rcoll_request *r, rcoll_board_t *b, const pairs_kept_t *k)
{
    int size = r->args.size;
    uint32_t word = k->word;
    size_t len = word & DIRECT_LEN;
    r->in = k->in;
    r->out = k->out;
    memcpy(rcoll_board_descs(b, r->seq), k->posted, (size_t)size * sizeof *k->posted);
    if (word_in_area(word))
        rcoll_board_use_area(b, r->seq);
    unsigned char *base = word & DIRECT_AREA ? rcoll_board_inline(b, r->seq) : rcoll_board_head(b, r->seq);
    for (int p = 0; p < size && len; p++) {
        if (!has(r->out, p))
            continue;
        rcoll_board_fill(b, base + (k->posted[p].send.addr & ~RCOLL_BOARD_HELD), k->from[p], len);
        if (!(word & DIRECT_PER_PEER))
            break;
    }
    rcoll_board_post(b, r->seq, word, r->in, r->out);
    return RCOLL_OK;
}

static rcoll_status_t pairs_start(struct rcoll_request *r, rcoll_board_t *b)
{
    int size = r->args.size, me = r->args.rank;
    if (r->state && r->prepared)
        return start_kept(r, b, r->state);
    shape(r);
    rcoll_board_desc_t *d = rcoll_board_descs(b, r->seq);
    for (int p = 0; p < size; p++)
        if (p != me)
            rcoll_nb_regions(r, p, &d[p].send, &d[p].recv);
    memset(&d[me], 0, sizeof d[me]);
    /* Without its inline area (pairs_head_only said its data fit the head run; kept correct
     * should they ever disagree), blocks that would need it stay in my buffers, read or written
     * by CMA. */
    size_t area = r->area ? rcoll_board_inline_bytes(b) : 0;
    if (r->in && area > SYMMETRIC_INLINE_MAX && !rcoll_board_cma_slow(b))
        area = SYMMETRIC_INLINE_MAX;
    if (!r->in && area > rcoll_board_send_inline(b) && !r->persistent)
        area = rcoll_board_send_inline(b);
    uint32_t word = direct_word(r, d, area);
    const void *streamed = NULL; /* my one shared block, copied in after the post */
    if (word_in_area(word))
        rcoll_board_use_area(b, r->seq);
    if (word_in_area(word) && !(word & DIRECT_PER_PEER) && (word & DIRECT_LEN) >= STREAM_MIN &&
        !r->in && !r->args.team->wait.crowded) {
        for (int p = 0; p < size && !streamed; p++) /* shared: every peer's is the same */
            if (has(r->out, p))
                streamed = (const void *)(uintptr_t)d[p].send.addr;
        word |= DIRECT_STREAM;
        rcoll_board_stream_open(b, r->seq);
    }
    if (word) {
        bool keep = r->prepared && !r->state && !(word & DIRECT_STREAM);
        if (keep)
            keep_post(r, d, word);
        copy_direct(r, b, d, word);
        if (keep && r->state)
            memcpy(((pairs_kept_t *)r->state)->posted, d, (size_t)size * sizeof *d);
    } else if (area) {
        /* Inline: the sum rounded up per region must fit the area. */
        size_t bytes = send_bytes(d, size, me);
        if (bytes && bytes + 64 * (size_t)size <= area) {
            rcoll_board_use_area(b, r->seq);
            copy_inline(b, d, size, me, rcoll_board_inline(b, r->seq));
        }
    }
    rcoll_board_post(b, r->seq, word, r->in, r->out);
    for (size_t off = 0, len = word & DIRECT_LEN; streamed && off < len; off += STREAM_PART)
        rcoll_board_stream_fill(b, r->seq, off, (const char *)streamed + off,
                                len - off < STREAM_PART ? len - off : STREAM_PART);
    return RCOLL_OK;
}

/* Moves block (src -> dst) of seq, claimed by me: from src's send region to dst's receive
 * region, by a read (I am dst) or a write (I am src); the shorter length is moved and a
 * difference marked. */
static rcoll_status_t move(rcoll_board_t *b, uint64_t seq, int src, int dst, const rcoll_board_desc_t *sd,
                           const rcoll_board_desc_t *dd, int me)
{
    const rcoll_region_t *from = &sd[dst].send, *to = &dd[src].recv;
    size_t len = from->len < to->len ? from->len : to->len;
    rcoll_status_t st;
    if (me == dst)
        st = rcoll_board_read(b, src, seq, (void *)(uintptr_t)to->addr, from->addr, len);
    else
        st = rcoll_board_write(b, dst, to->addr, rcoll_board_local(b, seq, from->addr), len);
    rcoll_board_done(b, src, dst, seq, from->len != to->len);
    return st;
}

/* A block into me of a peer's direct word, claimed: from where its word says. */
static rcoll_status_t take_direct(rcoll_board_t *b, uint64_t seq, int peer, int me, uint32_t word,
                                  const rcoll_region_t *to)
{
    size_t len = word & DIRECT_LEN, n = len < to->len ? len : to->len;
    uint64_t from = direct_addr(word, ordinal(me, peer));
    rcoll_status_t st = word & DIRECT_STREAM
                            ? rcoll_board_read_stream(b, peer, seq, (void *)(uintptr_t)to->addr, from, n)
                            : rcoll_board_read(b, peer, seq, (void *)(uintptr_t)to->addr, from, n);
    rcoll_board_done(b, peer, me, seq, len != to->len);
    return st;
}

/* One pass over my pairs with `peer`; true when both are moved (or not mine to wait for). */
static bool pass_peer(struct rcoll_request *r, rcoll_board_t *b, int peer, rcoll_status_t *st)
{
    uint64_t seq = r->seq;
    int me = r->args.rank;
    const rcoll_board_desc_t *mine = rcoll_board_descs(b, seq);
    uint64_t out_addr = mine[peer].send.addr;
    bool held = (out_addr & RCOLL_BOARD_HELD) != 0;
    /* A block of mine on the board is mine no more; one of at least 4 KB inline is still
     * written into a peer that is not inside rcoll (unless it is so small that copying it out
     * at its wait costs less than my system call), but not between two ranks that both send and
     * receive: there the peer is mostly away between two calls of a loop or taking its turn on
     * a shared core, and comes back sooner than my write is done (docs/tuning.md, "Nonblocking
     * collectives"). */
    bool both_ways = has(r->in, peer) && has(r->out, peer);
    bool push = !held ||
                ((out_addr & RCOLL_BOARD_INLINE) && mine[peer].send.len >= PUSH_INLINE_MIN && !both_ways);
    bool in_none = !has(r->in, peer), out_none = !has(r->out, peer);
    bool in_done = in_none || rcoll_board_is_done(b, peer, me, seq);
    bool out_done = out_none || !push || rcoll_board_is_done(b, me, peer, seq);
    if (in_done && (out_done || held))
        return true;
    uint32_t word;
    if (!rcoll_board_peer_head(b, peer, seq, &word))
        return false; /* not posted yet (it cannot have moved past: it needs me for that) */
    const rcoll_board_desc_t *theirs = NULL;
    rcoll_status_t e = RCOLL_OK;
    if (!in_done && (word & DIRECT)) {
        if (rcoll_board_claim(b, peer, me, seq))
            e = take_direct(b, seq, peer, me, word, &mine[peer].recv);
    } else if (!in_done) {
        theirs = rcoll_board_peer(b, peer, seq);
        /* A block in the sender's own memory, between two ranks that both send and receive,
         * is written by its sender while the sender is inside rcoll (see the head comment). */
        bool theirs_to_write = theirs && both_ways && !(theirs[me].send.addr & RCOLL_BOARD_HELD) &&
                               rcoll_board_is_present(b, peer);
        if (theirs && !theirs_to_write && rcoll_board_claim(b, peer, me, seq))
            e = move(b, seq, peer, me, theirs, mine, me);
    }
    /* A peer waiting inside rcoll reads its block itself (both copy at once); one that is not
     * gets it from me; so does, from its sender, a block in the sender's memory between two
     * ranks that both send and receive. */
    if (!out_done && (!rcoll_board_is_present(b, peer) || (both_ways && !held))) {
        if (!theirs)
            theirs = rcoll_board_peer(b, peer, seq);
        if (theirs && rcoll_board_claim(b, me, peer, seq)) {
            rcoll_status_t e2 = move(b, seq, me, peer, mine, theirs, me);
            if (e == RCOLL_OK)
                e = e2;
            out_done = true;
        }
    }
    if (e != RCOLL_OK && *st == RCOLL_OK)
        *st = e;
    in_done = in_none || rcoll_board_is_done(b, peer, me, seq);
    out_done = out_done || held || rcoll_board_is_done(b, me, peer, seq);
    return in_done && out_done;
}

static bool pairs_progress(struct rcoll_request *r, rcoll_board_t *b, rcoll_status_t *st)
{
    int size = r->args.size, me = r->args.rank;
    uint64_t any = r->in | r->out;
    bool all = true;
    for (int k = 1; k < size; k++) { /* from my right neighbour on: ranks spread their reads */
        int peer = me + k < size ? me + k : me + k - size;
        if (has(any, peer))
            all &= pass_peer(r, b, peer, st);
    }
    if (!all)
        return false;
    for (uint64_t in = r->in; in && *st == RCOLL_OK; in &= in - 1)
        if (rcoll_board_mismatch(b, __builtin_ctzll(in), me, r->seq))
            *st = RCOLL_ERR_TRUNCATE;
    return true;
}

rcoll_status_t rcoll_nb_rescue(rcoll_board_t *b, uint64_t seq)
{
    rcoll_status_t st = RCOLL_OK;
    int me = rcoll_board_rank(b);
    const rcoll_board_desc_t *mine = rcoll_board_descs(b, seq);
    uint64_t out = rcoll_board_waits(b, seq, true);
    for (int p = 0; p < rcoll_board_size(b); p++) {
        const rcoll_board_desc_t *theirs;
        if (!((out >> p) & 1) || rcoll_board_is_done(b, me, p, seq) || !(theirs = rcoll_board_peer(b, p, seq)) ||
            !rcoll_board_claim(b, me, p, seq))
            continue;
        rcoll_status_t e = move(b, seq, me, p, mine, theirs, me);
        if (st == RCOLL_OK)
            st = e;
    }
    return st;
}

const rcoll_nb_algo_t rcoll_nb_pairs = {
    .name = "pairs",
    .summary = "[yu-tr04] progress without the caller: every block moved by whichever end is "
               "inside rcoll (CMA), small sends copied onto the board at post",
    .applies = any_coll,
    .head_only = pairs_head_only,
    .start = pairs_start,
    .progress = pairs_progress,
};
