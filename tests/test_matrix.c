/* Multi-process correctness matrix: every algorithm of every collective x team sizes 1..9 and
 * 16 x sizes 0, 1, 7, 64, 1001, 4095, 4096, 4097, 65539, 1 MB+5 and 4 MB (skipped where one
 * buffer, or allgather's result, would pass 32 MB) x in-place or not x back-to-back calls (50;
 * 4 for blocks of 1 MB and more, whose check dominates), the root moving with every call
 * (every root is used), every call's data checked, and for the v-forms uneven, sparse (neighbours only) and skewed (one
 * hot rank) counts in turn, displacements in reverse order with gaps that must stay
 * untouched. Ranks are real processes forked by the test launcher, more of them than cores; random short stalls make fast ranks run ahead into the
 * next call while slow ones still read the last; barriers are interleaved so sequence numbers
 * are shared across collectives.
 * Options: --coll NAME[,NAME..] (default all), --algo NAME, --np 1,2,..., --quick (fewer sizes and
 * calls), --wait-modes (run under RCOLL_WAIT=spin, yield and block), --nodes N (emulated nodes:
 * RCOLL_NODE_MAP in blocks, uneven where N does not divide the team, e.g. 3+2+2; traffic between
 * them goes over the network channel RCOLL_NET chooses), --calls N (back-to-back calls),
 * --flat or --composed (only the flat or only the node-aware algorithms; these run where the
 * team spans nodes with several ranks on one, --nodes or RCOLL_NODE_MAP, unless --algo names
 * one).
 * For each team size one set of processes runs every algorithm of every collective in turn on
 * one team (back to back: sequence numbers continue from one algorithm to the next; one process
 * start-up per team size, which over a network library costs tenths of a second each). */
#include <sched.h>
#include <stdint.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bootstrap/oob_fork.h"
#include "coll/colls.h"
#include "rcoll/rcoll.h"
#include "select/select.h"

#define MAX_CALLS 50
#define MAX_ALGOS 128 /* (collective, algorithm) pairs one set of processes runs */

/* One set of processes (one team) runs every algorithm of `algos` in turn, back to back on the
 * same team: fewer process start-ups (a network library's initialization costs ~0.1 s of CPU
 * per process) and sequence numbers shared across algorithms. */
typedef struct {
    rcoll_coll_t coll; /* the one running */
    const char *algo;  /* ... and its algorithm */
    rcoll_coll_t colls[MAX_ALGOS];
    const char *algos[MAX_ALGOS];
    int nalgos;
    const size_t *sizes;
    int nsizes;
    int calls;
    _Atomic int *arrivals; /* barrier check: shared counters, one per call (of the running algorithm) */
} job_t;

/* Byte i of the block rank `src` sends to rank `dst` in call c: a per-(src, dst, c / 4) offset
 * added to a fixed template, so blocks differ by sender, receiver and position, and the check
 * vectorizes; calls 4k to 4k+2 send the same data and call 4k+3 changes only its last byte
 * (the node transport does not write unchanged data again: transport/copy.h, so a block sent
 * again, or changed at its very end, must arrive as well as one that changed everywhere). */
static unsigned char *template_bytes;
static size_t template_len;

static unsigned char offset_of(int src, int dst, int call)
{
    return (unsigned char)(src * 131 + dst * 17 + (call / 4) * 31 + 1);
}

static unsigned char tail_of(int call)
{
    return call % 4 == 3 ? 0x5a : 0;
}

static void make_template(size_t max)
{
    template_len = max;
    template_bytes = malloc(max + 1);
    for (size_t i = 0; i <= max; i++)
        template_bytes[i] = (unsigned char)(i * 7 + (i >> 8) + (i >> 16) * 3);
}

static void fill(unsigned char *block, size_t bytes, int src, int dst, int call)
{
    unsigned char off = offset_of(src, dst, call);
    for (size_t i = 0; i < bytes; i++)
        block[i] = (unsigned char)(template_bytes[i] + off);
    if (bytes)
        block[bytes - 1] = (unsigned char)(block[bytes - 1] + tail_of(call));
}

static void maybe_stall(int rank, int call)
{
    unsigned h = (unsigned)(rank * 2654435761u) ^ (unsigned)(call * 40503u);
    if (h % 7 == 0)
        usleep(h % 200);
    else if (h % 5 == 0)
        sched_yield();
}

/* The first wrong byte of a block, or -1. */
static long first_wrong(const unsigned char *block, size_t bytes, int src, int dst, int call)
{
    unsigned char off = offset_of(src, dst, call), diff = 0;
    if (!bytes)
        return -1;
    size_t last = bytes - 1;
    for (size_t i = 0; i < last; i++)
        diff |= (unsigned char)(block[i] ^ (unsigned char)(template_bytes[i] + off));
    if (!diff)
        return block[last] == (unsigned char)(template_bytes[last] + off + tail_of(call)) ? -1 : (long)last;
    size_t i = 0;
    while (block[i] == (unsigned char)(template_bytes[i] + off))
        i++;
    return (long)i;
}

/* What one call of the matrix is: for messages. */
typedef struct {
    rcoll_team_t *team;
    const job_t *job;
    int rank, size;
    size_t bytes;   /* block (v-forms: the base of the counts) */
    int inplace, call, root;
} call_t;

static int report(const call_t *c, const char *what, int block, long byte)
{
    fprintf(stderr, "FAIL %s %s p=%d bytes=%zu in-place=%d root=%d call %d: rank %d: %s (block %d, "
            "byte %ld)\n", rcoll_coll_name(c->job->coll), c->job->algo, c->size, c->bytes, c->inplace,
            c->root, c->call, c->rank, what, block, byte);
    return 1;
}

static int check(const call_t *c, const unsigned char *block, size_t bytes, int src, int dst)
{
    long at = first_wrong(block, bytes, src, dst, c->call);
    return at < 0 ? 0 : report(c, "wrong data", src, at);
}

static int status_failed(const call_t *c, rcoll_status_t st)
{
    if (st == RCOLL_OK)
        return 0;
    fprintf(stderr, "FAIL %s %s p=%d bytes=%zu root=%d: %s\n", rcoll_coll_name(c->job->coll),
            c->job->algo, c->size, c->bytes, c->root, rcoll_team_last_error(c->team));
    return 1;
}

/* v-forms: the count from src to dst, by call in turn (all symmetric, as MPI's in-place
 * alltoallv sends what it receives, where that matters):
 *   uneven: 0 to 1.5 x base, some zero;
 *   sparse: neighbours only (src - dst = +-1 mod P), 3.5 x base, zero to every other rank
 *           (a halo exchange: few large blocks, whose sum stays under the single-copy
 *           threshold while each block passes its inbox slot);
 *   skewed: one hot rank (moving from call to call) sends and receives 2 x base, the others
 *           base / 8. */
static size_t vcount(const call_t *c, int src, int dst)
{
    int p = c->size;
    if (c->call % 3 == 1) {
        int d = ((src - dst) % p + p) % p;
        return p > 1 && (d == 1 || d == p - 1) ? c->bytes * 7 / 2 : 0;
    }
    if (c->call % 3 == 2) {
        int hot = (c->call / 3) % p;
        return src == hot || dst == hot ? 2 * c->bytes : c->bytes / 8;
    }
    int k = c->inplace && c->job->coll == RCOLL_COLL_ALLTOALLV ? src + dst : src + 2 * dst;
    return c->bytes * (size_t)((k + c->call) % 4) / 2;
}

#define GAP 3 /* bytes left between v-blocks: must stay untouched */

/* Displacements laid out in reverse rank order with gaps that depend on the local rank `salt`
 * (as in MPI, every rank describes its own receive buffer); returns the extent. */
static size_t layout_reverse(const size_t *counts, size_t *displs, int size, int salt)
{
    size_t at = GAP;
    for (int r = size - 1; r >= 0; r--) {
        displs[r] = at;
        at += counts[r] + GAP + (size_t)((salt + r) % 3) * 5;
    }
    return at;
}

/* Every other round of the three count patterns (allgatherv): the compact rank-order layout
 * most programs use (displacements are the sums of the counts before), then GAP guard bytes. */
static bool compact_call(const call_t *c)
{
    return c->job->coll == RCOLL_COLL_ALLGATHERV && (c->call / 3) % 2 == 1;
}

static size_t layout_compact(const size_t *counts, size_t *displs, int size)
{
    size_t at = 0;
    for (int r = 0; r < size; r++) {
        displs[r] = at;
        at += counts[r];
    }
    return at + GAP;
}

static int gaps_untouched(const call_t *c, const unsigned char *buf, const size_t *counts,
                          const size_t *displs)
{
    if (compact_call(c)) {
        size_t end = displs[c->size - 1] + counts[c->size - 1];
        for (int i = 0; i < GAP; i++)
            if (buf[end + (size_t)i] != 0xEE)
                return report(c, "wrote past the last block", c->size - 1, (long)i);
        return 0;
    }

    for (int r = 0; r < c->size; r++) {
        const unsigned char *gap = buf + displs[r] + counts[r];
        for (int i = 0; i < GAP; i++)
            if (gap[i] != 0xEE)
                return report(c, "wrote outside its blocks", r, (long)(counts[r] + (size_t)i));
    }
    return 0;
}

static int allgather_call(const call_t *c, unsigned char *sbuf, unsigned char *rbuf)
{
    size_t b = c->bytes;
    memset(rbuf, 0xEE, (size_t)c->size * b);
    fill(c->inplace ? rbuf + (size_t)c->rank * b : sbuf, b, c->rank, 0, c->call);
    maybe_stall(c->rank, c->call);
    if (status_failed(c, rcoll_allgather(c->team, c->inplace ? RCOLL_IN_PLACE : sbuf, rbuf, b)))
        return 1;
    for (int r = 0; r < c->size; r++)
        if (check(c, rbuf + (size_t)r * b, b, r, 0))
            return 1;
    return 0;
}

static int alltoall_call(const call_t *c, unsigned char *sbuf, unsigned char *rbuf)
{
    size_t b = c->bytes;
    memset(rbuf, 0xEE, (size_t)c->size * b);
    for (int j = 0; j < c->size; j++)
        fill((c->inplace ? rbuf : sbuf) + (size_t)j * b, b, c->rank, j, c->call);
    maybe_stall(c->rank, c->call);
    if (status_failed(c, rcoll_alltoall(c->team, c->inplace ? RCOLL_IN_PLACE : sbuf, rbuf, b)))
        return 1;
    for (int r = 0; r < c->size; r++)
        if (check(c, rbuf + (size_t)r * b, b, r, c->rank))
            return 1;
    return 0;
}

static int bcast_call(const call_t *c, unsigned char *sbuf, unsigned char *rbuf)
{
    (void)sbuf;
    if (c->rank == c->root)
        fill(rbuf, c->bytes, c->root, 0, c->call);
    else
        memset(rbuf, 0xEE, c->bytes);
    maybe_stall(c->rank, c->call);
    if (status_failed(c, rcoll_bcast(c->team, rbuf, c->bytes, c->root)))
        return 1;
    return check(c, rbuf, c->bytes, c->root, 0);
}

static int gather_call(const call_t *c, unsigned char *sbuf, unsigned char *rbuf)
{
    size_t b = c->bytes;
    int am_root = c->rank == c->root, inplace = c->inplace && am_root;
    if (am_root)
        memset(rbuf, 0xEE, (size_t)c->size * b);
    fill(inplace ? rbuf + (size_t)c->rank * b : sbuf, b, c->rank, 0, c->call);
    maybe_stall(c->rank, c->call);
    if (status_failed(c, rcoll_gather(c->team, inplace ? RCOLL_IN_PLACE : sbuf, am_root ? rbuf : NULL,
                                      b, c->root)))
        return 1;
    for (int r = 0; am_root && r < c->size; r++)
        if (check(c, rbuf + (size_t)r * b, b, r, 0))
            return 1;
    return 0;
}

static int scatter_call(const call_t *c, unsigned char *sbuf, unsigned char *rbuf)
{
    size_t b = c->bytes;
    int am_root = c->rank == c->root, inplace = c->inplace && am_root;
    for (int j = 0; am_root && j < c->size; j++)
        fill(sbuf + (size_t)j * b, b, c->root, j, c->call);
    memset(rbuf, 0xEE, b);
    maybe_stall(c->rank, c->call);
    if (status_failed(c, rcoll_scatter(c->team, am_root ? sbuf : NULL, inplace ? RCOLL_IN_PLACE : rbuf,
                                       b, c->root)))
        return 1;
    if (inplace)
        return check(c, sbuf + (size_t)c->rank * b, b, c->root, c->rank);
    return check(c, rbuf, b, c->root, c->rank);
}

static int allgatherv_call(const call_t *c, unsigned char *sbuf, unsigned char *rbuf)
{
    size_t counts[64], displs[64];
    for (int r = 0; r < c->size; r++)
        counts[r] = vcount(c, r, 0);
    size_t extent = compact_call(c) ? layout_compact(counts, displs, c->size)
                                    : layout_reverse(counts, displs, c->size, c->rank);
    memset(rbuf, 0xEE, extent);
    size_t mine = counts[c->rank];
    fill(c->inplace ? rbuf + displs[c->rank] : sbuf, mine, c->rank, 0, c->call);
    maybe_stall(c->rank, c->call);
    if (status_failed(c, rcoll_allgatherv(c->team, c->inplace ? RCOLL_IN_PLACE : sbuf, mine, rbuf,
                                          counts, displs)))
        return 1;
    for (int r = 0; r < c->size; r++)
        if (check(c, rbuf + displs[r], counts[r], r, 0))
            return 1;
    return gaps_untouched(c, rbuf, counts, displs);
}

static int alltoallv_call(const call_t *c, unsigned char *sbuf, unsigned char *rbuf)
{
    size_t sc[64], sd[64], rc[64], rd[64], at = 0;
    for (int j = 0; j < c->size; j++) {
        sc[j] = vcount(c, c->rank, j);
        rc[j] = vcount(c, j, c->rank);
        sd[j] = at; /* send side: forward order, packed */
        at += sc[j];
    }
    memset(rbuf, 0xEE, layout_reverse(rc, rd, c->size, c->rank));
    for (int j = 0; j < c->size; j++)
        fill(c->inplace ? rbuf + rd[j] : sbuf + sd[j], c->inplace ? rc[j] : sc[j], c->rank, j, c->call);
    maybe_stall(c->rank, c->call);
    rcoll_status_t st = c->inplace ? rcoll_alltoallv(c->team, RCOLL_IN_PLACE, NULL, NULL, rbuf, rc, rd)
                                   : rcoll_alltoallv(c->team, sbuf, sc, sd, rbuf, rc, rd);
    if (status_failed(c, st))
        return 1;
    for (int r = 0; r < c->size; r++)
        if (check(c, rbuf + rd[r], rc[r], r, c->rank))
            return 1;
    return gaps_untouched(c, rbuf, rc, rd);
}

static int gatherv_call(const call_t *c, unsigned char *sbuf, unsigned char *rbuf)
{
    size_t counts[64], displs[64];
    int am_root = c->rank == c->root, inplace = c->inplace && am_root;
    for (int r = 0; r < c->size; r++)
        counts[r] = vcount(c, r, 0);
    size_t extent = layout_reverse(counts, displs, c->size, c->rank), mine = counts[c->rank];
    if (am_root)
        memset(rbuf, 0xEE, extent);
    fill(inplace ? rbuf + displs[c->rank] : sbuf, mine, c->rank, 0, c->call);
    maybe_stall(c->rank, c->call);
    /* Only the root's counts matter: other ranks pass NULL to prove it. */
    if (status_failed(c, rcoll_gatherv(c->team, inplace ? RCOLL_IN_PLACE : sbuf, mine,
                                       am_root ? rbuf : NULL, am_root ? counts : NULL,
                                       am_root ? displs : NULL, c->root)))
        return 1;
    for (int r = 0; am_root && r < c->size; r++)
        if (check(c, rbuf + displs[r], counts[r], r, 0))
            return 1;
    return am_root ? gaps_untouched(c, rbuf, counts, displs) : 0;
}

static int scatterv_call(const call_t *c, unsigned char *sbuf, unsigned char *rbuf)
{
    size_t counts[64], displs[64];
    int am_root = c->rank == c->root, inplace = c->inplace && am_root;
    for (int j = 0; j < c->size; j++)
        counts[j] = vcount(c, c->root, j);
    layout_reverse(counts, displs, c->size, c->rank);
    for (int j = 0; am_root && j < c->size; j++)
        fill(sbuf + displs[j], counts[j], c->root, j, c->call);
    size_t mine = counts[c->rank];
    memset(rbuf, 0xEE, mine + GAP);
    maybe_stall(c->rank, c->call);
    if (status_failed(c, rcoll_scatterv(c->team, am_root ? sbuf : NULL, am_root ? counts : NULL,
                                        am_root ? displs : NULL, inplace ? RCOLL_IN_PLACE : rbuf,
                                        mine, c->root)))
        return 1;
    if (inplace)
        return check(c, sbuf + displs[c->rank], mine, c->root, c->rank);
    if (check(c, rbuf, mine, c->root, c->rank))
        return 1;
    for (int i = 0; i < GAP; i++)
        if (rbuf[mine + (size_t)i] != 0xEE)
            return report(c, "wrote past its receive count", c->rank, (long)(mine + (size_t)i));
    return 0;
}

typedef int (*call_fn)(const call_t *c, unsigned char *sbuf, unsigned char *rbuf);

static call_fn call_of(rcoll_coll_t coll)
{
    switch (coll) {
    case RCOLL_COLL_ALLGATHER: return allgather_call;
    case RCOLL_COLL_ALLTOALL: return alltoall_call;
    case RCOLL_COLL_BCAST: return bcast_call;
    case RCOLL_COLL_GATHER: return gather_call;
    case RCOLL_COLL_SCATTER: return scatter_call;
    case RCOLL_COLL_ALLGATHERV: return allgatherv_call;
    case RCOLL_COLL_ALLTOALLV: return alltoallv_call;
    case RCOLL_COLL_GATHERV: return gatherv_call;
    case RCOLL_COLL_SCATTERV: return scatterv_call;
    default: return NULL;
    }
}

static int has_in_place(rcoll_coll_t coll)
{
    return rcoll_coll_info(coll)->in_place != RCOLL_IN_PLACE_NONE;
}

/* What the team says it ran is what was forced or, for a call that one does not apply to, its
 * declared fallback (or "trivial": a call every rank skips). */
static bool forced_or_fallback(rcoll_coll_t coll, const char *algo, const char *ran)
{
    if (!strcmp(ran, "trivial"))
        return true;
    for (const rcoll_algo_t *a = rcoll_algo_find(coll, algo); a; a = a->not_for ? a->fallback : NULL)
        if (!strcmp(ran, a->name))
            return true;
    return false;
}

static int ran_as_forced(const call_t *c)
{
    const char *ran = rcoll_team_last_algorithm(c->team);
    if (forced_or_fallback(c->job->coll, c->job->algo, ran))
        return 0;
    char what[96];
    snprintf(what, sizeof what, "the team says it ran %s", ran);
    return report(c, what, -1, -1);
}

/* Buffers big enough for any of the collectives at this size: v-counts reach 2 x bytes from
 * every rank (skewed), or 2 x 3.5 x bytes from the two neighbours (sparse). */
static size_t buffer_bytes(int size, size_t bytes)
{
    return (size_t)size * (2 * bytes + GAP + 11) + 7 * bytes + GAP + 64;
}

#define MAX_TOTAL_BYTES (32u << 20) /* per buffer: bigger sizes x teams are skipped (memory) */

static int run_data(rcoll_team_t *team, const job_t *job, int rank, int size)
{
    call_fn fn = call_of(job->coll);
    for (int s = 0; s < job->nsizes; s++) {
        size_t bytes = job->sizes[s], len = buffer_bytes(size, bytes);
        if (job->coll != RCOLL_COLL_ALLGATHER && job->coll != RCOLL_COLL_BCAST && size > 1 &&
            len > MAX_TOTAL_BYTES)
            continue;
        /* allgather: up to 32 MB gathered (4 MB blocks up to 8 ranks, 1 MB+5 at every size;
         * beyond, the check of 4 MB x 16 x every algorithm took a minute of the suite). */
        if (job->coll == RCOLL_COLL_ALLGATHER && (size_t)size * bytes > MAX_TOTAL_BYTES)
            continue;
        int calls = bytes >= (1u << 20) ? 4 : job->calls;
        unsigned char *rbuf = malloc(len), *sbuf = malloc(len);
        if (!rbuf || !sbuf)
            return 1;
        for (int inplace = 0; inplace < (has_in_place(job->coll) ? 2 : 1); inplace++)
            for (int c = 0; c < calls; c++) {
                call_t call = {team, job, rank, size, bytes, inplace, s * 1000 + inplace * 100 + c,
                               (c + s) % size};
                if (c % 7 == 3 && rcoll_barrier(team) != RCOLL_OK) /* sequence numbers shared */
                    return status_failed(&call, RCOLL_ERR_INVALID);
                if (fn(&call, sbuf, rbuf) || ran_as_forced(&call))
                    return 1;
            }
        free(rbuf);
        free(sbuf);
    }
    return 0;
}

static int run_barrier(rcoll_team_t *team, const job_t *job, int rank, int size)
{
    for (int c = 0; c < job->calls; c++) {
        maybe_stall(rank, c);
        atomic_fetch_add(&job->arrivals[c], 1);
        uint64_t all[64] = {0};
        all[rank] = (uint64_t)rank;
        if (c % 3 == 2 && size <= 64 && rcoll_allgather(team, RCOLL_IN_PLACE, all, sizeof all[0]) != RCOLL_OK)
            return 1; /* other collectives in between take sequence numbers too */
        if (rcoll_barrier(team) != RCOLL_OK) {
            fprintf(stderr, "FAIL barrier %s p=%d: %s\n", job->algo, size, rcoll_team_last_error(team));
            return 1;
        }
        const char *ran = rcoll_team_last_algorithm(team);
        if (!forced_or_fallback(job->coll, job->algo, ran)) {
            fprintf(stderr, "FAIL barrier %s p=%d: the team says it ran %s\n", job->algo, size, ran);
            return 1;
        }
        int seen = atomic_load(&job->arrivals[c]);
        if (seen != size) {
            fprintf(stderr, "FAIL barrier %s p=%d call %d: rank %d left when only %d of %d had "
                    "arrived\n", job->algo, size, c, rank, seen, size);
            return 1;
        }
    }
    return 0;
}

static int rank_main(int rank, const rcoll_oob_t *oob, void *arg)
{
    const job_t *all = arg;
    rcoll_context_t *ctx;
    rcoll_team_t *team;
    if (rcoll_context_create(&ctx) != RCOLL_OK)
        return 2;
    rcoll_status_t st = rcoll_team_create(ctx, oob, &team);
    if (st != RCOLL_OK) {
        fprintf(stderr, "FAIL team creation on rank %d: %s\n", rank, rcoll_strerror(st));
        return 3;
    }
    int rc = 0;
    for (int i = 0; i < all->nalgos && !rc; i++) {
        job_t one = *all;
        one.coll = all->colls[i];
        one.algo = all->algos[i];
        one.arrivals = all->arrivals + i * MAX_CALLS;
        const job_t *job = &one;
        if (rcoll_team_force_algorithm(team, job->coll, job->algo) != RCOLL_OK) {
            fprintf(stderr, "FAIL %s\n", rcoll_team_last_error(team));
            rc = 4;
            break;
        }
        rc = job->coll == RCOLL_COLL_BARRIER ? run_barrier(team, job, rank, oob->size)
                                             : run_data(team, job, rank, oob->size);
        /* The next collective runs beside the decision for this one, as in a program. */
        if (i + 1 == all->nalgos || all->colls[i + 1] != job->coll)
            rcoll_team_force_algorithm(team, job->coll, NULL);
    }
    rcoll_team_destroy(team);
    rcoll_context_destroy(ctx);
    return rc;
}

/* 40009: a block between an exchange's single-copy threshold and the others' (32 and 64 KB on one node) */
static const size_t full_sizes[] = {0, 1, 7, 64, 1001, 4095, 4096, 4097, 40009, 65539, (1u << 20) + 5, 4u << 20};
static const size_t quick_sizes[] = {0, 1, 7, 1001, 4097, 65539, (1u << 20) + 5};

static int parse_list(const char *text, int *out, int max)
{
    int n = 0;
    for (const char *p = text; *p && n < max;) {
        out[n++] = atoi(p);
        p = strchr(p, ',');
        if (!p)
            break;
        p++;
    }
    return n;
}

/* Is `name` in the comma-separated `list`? */
static int listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (strncmp(p, name, n) == 0 && (p[n] == ',' || p[n] == '\0'))
            return 1;
    return 0;
}

/* Emulated nodes: np ranks in blocks over min(nodes, np) nodes, the first ones one rank larger
 * when it does not divide (7 over 3: 3+2+2), as RCOLL_NODE_MAP. */
static void set_node_map(int np, int nodes, char *map, size_t len)
{
    int n = nodes < np ? nodes : np, r = 0;
    size_t used = 0;
    map[0] = '\0';
    for (int node = 0; node < n; node++)
        for (int k = 0; k < np / n + (node < np % n); k++, r++)
            used += (size_t)snprintf(map + used, len - used, "%s%d", r ? "," : "", node);
    setenv("RCOLL_NODE_MAP", map, 1);
}

/* Whether a team of np ranks spans nodes with several ranks on one: --nodes N (N < np), or
 * an RCOLL_NODE_MAP of the environment that repeats a node and names two. */
static int composed_applies(int np, int nodes)
{
    if (nodes)
        return nodes > 1 && nodes < np;
    const char *map = getenv("RCOLL_NODE_MAP");
    int ids[64], n = 0;
    for (const char *p = map; p && *p && n < 64; p = strchr(p, ',') ? strchr(p, ',') + 1 : "")
        ids[n++] = atoi(p);
    int distinct = 0, repeated = 0;
    for (int i = 0; i < n; i++) {
        int seen = 0;
        for (int j = 0; j < i; j++)
            seen |= ids[j] == ids[i];
        distinct += !seen;
        repeated |= seen;
    }
    return n == np && distinct > 1 && repeated;
}

static void run_one(job_t *job, int np, int nodes, int *passed, int *failed)
{
    char map[512] = "";
    if (nodes)
        set_node_map(np, nodes, map, sizeof map);
    memset((void *)job->arrivals, 0, MAX_ALGOS * MAX_CALLS * sizeof *job->arrivals);
    int bad = rcoll_fork_run(np, rank_main, job, 1800);
    const char *wait = getenv("RCOLL_WAIT");
    char names[2048] = "";
    size_t n = 0;
    for (int i = 0; i < job->nalgos && n < sizeof names; i++) {
        bool first = i == 0 || job->colls[i - 1] != job->colls[i];
        n += (size_t)snprintf(names + n, sizeof names - n, "%s%s%s%s", i == 0 ? "" : first ? "; " : ",",
                              first ? rcoll_coll_name(job->colls[i]) : "", first ? " " : "",
                              job->algos[i]);
    }
    printf("%s p=%d (%d sizes x 2 in-place x %d calls%s%s%s%s): %s\n", bad ? "FAIL" : "ok", np,
           job->nsizes, job->calls, wait ? ", RCOLL_WAIT=" : "", wait ? wait : "",
           map[0] ? ", nodes " : "", map, names);
    fflush(stdout);
    (bad ? (*failed)++ : (*passed)++);
}

int main(int argc, char **argv)
{
    int nps[32] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 16}, nnp = 10, quick = 0, wait_modes = 0, nodes = 0,
        calls = 0, kinds = 3; /* 1: flat algorithms, 2: composed (node-aware) ones, 3: both */
    const char *only_coll = NULL, *only_algo = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--coll") && i + 1 < argc) only_coll = argv[++i];
        else if (!strcmp(argv[i], "--algo") && i + 1 < argc) only_algo = argv[++i];
        else if (!strcmp(argv[i], "--np") && i + 1 < argc) nnp = parse_list(argv[++i], nps, 32);
        else if (!strcmp(argv[i], "--quick")) quick = 1;
        else if (!strcmp(argv[i], "--wait-modes")) wait_modes = 1;
        else if (!strcmp(argv[i], "--nodes") && i + 1 < argc) nodes = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--calls") && i + 1 < argc) calls = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--flat")) kinds = 1;
        else if (!strcmp(argv[i], "--composed")) kinds = 2;
        else { fprintf(stderr, "usage: %s [--coll C] [--algo A] [--np 1,2,..] [--quick] [--wait-modes] [--nodes N] [--calls N] [--flat | --composed]\n", argv[0]); return 2; }
    }
    make_template((4u << 20) * 2);
    job_t job = {0};
    job.arrivals = mmap(NULL, MAX_ALGOS * MAX_CALLS * sizeof(int), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    job.sizes = quick ? quick_sizes : full_sizes;
    job.nsizes = quick ? (int)(sizeof quick_sizes / sizeof *quick_sizes) : (int)(sizeof full_sizes / sizeof *full_sizes);
    job.calls = calls > 0 && calls < MAX_CALLS ? calls : quick ? 10 : MAX_CALLS;
    static const char *const modes[] = {"spin", "yield", "block"};
    int passed = 0, failed = 0;
    for (int m = 0; m < (wait_modes ? 3 : 1); m++) {
        if (wait_modes) {
            setenv("RCOLL_WAIT", modes[m], 1);
            nnp = 3;
            nps[0] = 2, nps[1] = 3, nps[2] = 5;
        }
        for (int i = 0; i < nnp; i++) {
            /* Composed algorithms only where they run (else they are their fallback). */
            int composed_run = composed_applies(nps[i], nodes);
            job.nalgos = 0;
            for (int c = 0; c < RCOLL_COLL_COUNT; c++) {
                const rcoll_coll_info_t *ci = rcoll_coll_info((rcoll_coll_t)c);
                if ((only_coll && !listed(only_coll, ci->name)) || ci->reduction)
                    continue; /* the reductions: test_reduce */
                for (int k = 0; ci->algos[k] && job.nalgos < MAX_ALGOS; k++) {
                    const rcoll_algo_t *al = ci->algos[k];
                    int kind = al->composed ? 2 : 1;
                    if ((only_algo && strcmp(only_algo, al->name)) || !(kinds & kind) ||
                        (al->composed && !composed_run && !only_algo))
                        continue;
                    job.colls[job.nalgos] = ci->coll;
                    job.algos[job.nalgos++] = al->name;
                }
            }
            if (job.nalgos)
                run_one(&job, nps[i], nodes, &passed, &failed);
        }
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
