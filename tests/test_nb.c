/* Nonblocking and persistent collectives, multi-process (real processes forked by the test
 * launcher, more of them than cores): every collective x team sizes x sizes 0, 1, odd and
 * > 64 KB (and > 1 MB in the full run) x every root x in place, several requests outstanding per
 * team completed in reverse and in random order (by wait, or by polling test), persistent
 * requests restarted with their buffers' contents changed between starts and one freed without
 * ever starting, blocking calls interleaved with outstanding requests; every call's data checked
 * and guard bytes after every receive buffer. Then: progress without the caller (a rank posts
 * and computes outside rcoll; its peers complete meanwhile), a root running more calls ahead of
 * ranks that are away than the board has slots, several teams of one context with requests
 * outstanding on each while the next is created, and peer failure (a rank that dies
 * before posting, or between post and wait: the others return an error, never hang).
 * Options: --quick (fewer sizes and team sizes), --np LIST, --coll LIST. Runs under whatever
 * RCOLL_* the environment sets (the test command also runs it with RCOLL_NB_SLOTS=0, the
 * caller-driven engine, and RCOLL_PROGRESS=thread). */
#include <stdint.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "bootstrap/oob_fork.h"
#include "coll/colls.h"
#include "rcoll/rcoll.h"

#define GUARD 64
#define OUTSTANDING 3
#define ROUNDS 4

static int quick;
static const size_t *sizes;
static int nsizes;
static rcoll_coll_t colls[RCOLL_COLL_COUNT];
static int ncolls;

static unsigned char val(int src, int dst, int call, size_t i)
{
    return (unsigned char)(src * 131 + dst * 17 + call * 31 + (int)(i * 7) + (int)(i >> 9) + 1);
}

/* One outstanding call: its buffers and what it must produce. */
typedef struct {
    rcoll_coll_t coll;
    size_t m;
    int root, call, inplace;
    unsigned char *send, *recv;
    size_t send_bytes, recv_bytes;
    size_t *scounts, *sdispls, *rcounts, *rdispls;
    rcoll_request_t *req;
} slot_t;

static size_t vcount(size_t m, int src, int dst)
{
    return m ? (m + (size_t)((src * 3 + dst) % 4) * 13) : 0;
}

/* Lays out counts: per peer k, count and displacement (reverse order, with 8-byte gaps). */
static size_t layout(size_t *counts, size_t *displs, int size, size_t m, int me, int as_sender)
{
    size_t off = 0;
    for (int k = size - 1; k >= 0; k--) {
        counts[k] = as_sender ? vcount(m, me, k) : vcount(m, k, me);
        displs[k] = off;
        off += counts[k] + 8;
    }
    return off;
}

static void fill_send(slot_t *s, int me, int size)
{
    const rcoll_coll_info_t *c = rcoll_coll_info(s->coll);
    bool root = s->root == me;
    memset(s->send, 0xee, s->send_bytes);
    memset(s->recv, 0xdd, s->recv_bytes + GUARD);
    switch (s->coll) {
    case RCOLL_COLL_ALLGATHER:
    case RCOLL_COLL_GATHER:
        for (size_t i = 0; i < s->m; i++)
            s->send[i] = val(me, 0, s->call, i);
        if (s->inplace) /* allgather / gather at the root: its block where it belongs */
            for (size_t i = 0; i < s->m; i++)
                s->recv[(size_t)me * s->m + i] = val(me, 0, s->call, i);
        break;
    case RCOLL_COLL_BCAST:
        if (root)
            for (size_t i = 0; i < s->m; i++)
                s->recv[i] = val(me, 0, s->call, i);
        break;
    case RCOLL_COLL_ALLTOALL:
    case RCOLL_COLL_SCATTER:
        if (c->send.root_only && !root)
            break;
        for (int k = 0; k < size; k++)
            for (size_t i = 0; i < s->m; i++)
                (s->inplace && s->coll == RCOLL_COLL_ALLTOALL ? s->recv : s->send)[(size_t)k * s->m + i] = val(me, k, s->call, i);
        break;
    case RCOLL_COLL_ALLGATHERV:
    case RCOLL_COLL_GATHERV:
        for (size_t i = 0; i < vcount(s->m, me, 0); i++)
            s->send[i] = val(me, 0, s->call, i);
        break;
    case RCOLL_COLL_ALLTOALLV:
    case RCOLL_COLL_SCATTERV:
        if (s->coll == RCOLL_COLL_SCATTERV && !root)
            break;
        for (int k = 0; k < size; k++)
            for (size_t i = 0; i < s->scounts[k]; i++)
                s->send[s->sdispls[k] + i] = val(me, k, s->call, i);
        break;
    default:
        break;
    }
}

static long check_block(const unsigned char *at, size_t n, int src, int dst, int call)
{
    long bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += at[i] != val(src, dst, call, i);
    return bad;
}

static long check_recv(const slot_t *s, int me, int size)
{
    long bad = 0;
    bool root = s->root == me;
    switch (s->coll) {
    case RCOLL_COLL_ALLGATHER:
        for (int k = 0; k < size; k++)
            bad += check_block(s->recv + (size_t)k * s->m, s->m, k, 0, s->call);
        break;
    case RCOLL_COLL_GATHER:
        if (root)
            for (int k = 0; k < size; k++)
                bad += check_block(s->recv + (size_t)k * s->m, s->m, k, 0, s->call);
        break;
    case RCOLL_COLL_BCAST:
        bad += check_block(s->recv, s->m, s->root, 0, s->call);
        break;
    case RCOLL_COLL_ALLTOALL:
        for (int k = 0; k < size; k++)
            bad += check_block(s->recv + (size_t)k * s->m, s->m, k, me, s->call);
        break;
    case RCOLL_COLL_SCATTER:
        if (!root || !s->inplace)
            bad += check_block(s->recv, s->m, s->root, me, s->call);
        break;
    case RCOLL_COLL_ALLGATHERV:
    case RCOLL_COLL_GATHERV:
        if (s->coll == RCOLL_COLL_GATHERV && !root)
            break;
        for (int k = 0; k < size; k++)
            bad += check_block(s->recv + s->rdispls[k], s->rcounts[k], k, 0, s->call);
        break;
    case RCOLL_COLL_ALLTOALLV:
        for (int k = 0; k < size; k++)
            bad += check_block(s->recv + s->rdispls[k], s->rcounts[k], k, me, s->call);
        break;
    case RCOLL_COLL_SCATTERV:
        bad += check_block(s->recv, vcount(s->m, s->root, me), s->root, me, s->call);
        break;
    default:
        break;
    }
    for (size_t i = 0; i < GUARD; i++)
        bad += s->recv[s->recv_bytes + i] != 0xdd;
    return bad;
}

static void setup(slot_t *s, rcoll_coll_t coll, size_t m, int root, int call, int inplace, int me, int size)
{
    memset(s, 0, sizeof *s);
    s->coll = coll;
    s->m = m;
    s->root = root;
    s->call = call;
    const rcoll_coll_info_t *c = rcoll_coll_info(coll);
    s->inplace = inplace && c->in_place != RCOLL_IN_PLACE_NONE &&
                 (!c->rooted || me == root) && !c->vform;
    size_t n = (size_t)size;
    s->scounts = calloc(4 * n, sizeof(size_t));
    s->sdispls = s->scounts + n;
    s->rcounts = s->sdispls + n;
    s->rdispls = s->rcounts + n;
    if (c->vform) {
        s->send_bytes = layout(s->scounts, s->sdispls, size, m, me, 1);
        s->recv_bytes = layout(s->rcounts, s->rdispls, size, m, me, 0);
        if (coll == RCOLL_COLL_ALLGATHERV || coll == RCOLL_COLL_GATHERV) { /* rank k sends (k, 0) */
            size_t off = 0;
            for (int k = size - 1; k >= 0; k--) {
                s->rcounts[k] = vcount(m, k, 0);
                s->rdispls[k] = off;
                off += s->rcounts[k] + 8;
            }
            s->recv_bytes = off;
        }
        if (coll == RCOLL_COLL_SCATTERV)
            s->recv_bytes = vcount(m, root, me);
    } else {
        s->send_bytes = c->send.blocks == RCOLL_BLOCKS_EACH ? n * m : m;
        s->recv_bytes = c->recv.blocks == RCOLL_BLOCKS_EACH ? n * m : m;
    }
    s->send = malloc(s->send_bytes + 1);
    s->recv = malloc(s->recv_bytes + GUARD);
}

static void teardown(slot_t *s)
{
    free(s->send);
    free(s->recv);
    free(s->scounts);
}

static rcoll_status_t post(rcoll_team_t *t, slot_t *s, int me, int persistent)
{
    const void *sb = s->inplace && (s->coll == RCOLL_COLL_ALLGATHER || s->coll == RCOLL_COLL_ALLTOALL ||
                                    s->coll == RCOLL_COLL_GATHER) ? RCOLL_IN_PLACE : s->send;
    void *rb = s->inplace && s->coll == RCOLL_COLL_SCATTER ? RCOLL_IN_PLACE : s->recv;
    size_t mine = vcount(s->m, me, 0);
    rcoll_request_t **q = &s->req;
    switch (s->coll) {
    case RCOLL_COLL_BARRIER:
        return persistent ? rcoll_barrier_init(t, q) : rcoll_ibarrier(t, q);
    case RCOLL_COLL_ALLGATHER:
        return persistent ? rcoll_allgather_init(t, sb, rb, s->m, q) : rcoll_iallgather(t, sb, rb, s->m, q);
    case RCOLL_COLL_ALLTOALL:
        return persistent ? rcoll_alltoall_init(t, sb, rb, s->m, q) : rcoll_ialltoall(t, sb, rb, s->m, q);
    case RCOLL_COLL_BCAST:
        return persistent ? rcoll_bcast_init(t, s->recv, s->m, s->root, q)
                          : rcoll_ibcast(t, s->recv, s->m, s->root, q);
    case RCOLL_COLL_GATHER:
        return persistent ? rcoll_gather_init(t, sb, rb, s->m, s->root, q)
                          : rcoll_igather(t, sb, rb, s->m, s->root, q);
    case RCOLL_COLL_SCATTER:
        return persistent ? rcoll_scatter_init(t, sb, rb, s->m, s->root, q)
                          : rcoll_iscatter(t, sb, rb, s->m, s->root, q);
    case RCOLL_COLL_ALLGATHERV:
        return persistent ? rcoll_allgatherv_init(t, s->send, mine, s->recv, s->rcounts, s->rdispls, q)
                          : rcoll_iallgatherv(t, s->send, mine, s->recv, s->rcounts, s->rdispls, q);
    case RCOLL_COLL_ALLTOALLV:
        return persistent ? rcoll_alltoallv_init(t, s->send, s->scounts, s->sdispls, s->recv, s->rcounts,
                                                 s->rdispls, q)
                          : rcoll_ialltoallv(t, s->send, s->scounts, s->sdispls, s->recv, s->rcounts,
                                             s->rdispls, q);
    case RCOLL_COLL_GATHERV:
        return persistent ? rcoll_gatherv_init(t, s->send, mine, s->recv, s->rcounts, s->rdispls, s->root, q)
                          : rcoll_igatherv(t, s->send, mine, s->recv, s->rcounts, s->rdispls, s->root, q);
    case RCOLL_COLL_SCATTERV:
        return persistent ? rcoll_scatterv_init(t, s->send, s->scounts, s->sdispls, s->recv,
                                                vcount(s->m, s->root, me), s->root, q)
                          : rcoll_iscatterv(t, s->send, s->scounts, s->sdispls, s->recv,
                                            vcount(s->m, s->root, me), s->root, q);
    default:
        return RCOLL_ERR_INVALID;
    }
}

static unsigned next_rand(unsigned *x)
{
    *x = *x * 1103515245u + 12345u;
    return *x >> 16;
}

/* Completes every slot: reverse order by wait, or a random order by polling test (pausing as
 * a caller's own wait loop does, rcoll_team_pause, when a test found it not done). */
static int complete_all(rcoll_team_t *t, slot_t *s, int n, int how, unsigned *seed, const char *what,
                        int me, int size)
{
    int fails = 0, done[OUTSTANDING] = {0}, left = n;
    uint64_t polls = 0;
    while (left) {
        int k = how == 0 ? left - 1 : (int)(next_rand(seed) % (unsigned)n);
        if (done[k])
            continue;
        rcoll_status_t st;
        int flag = 0;
        if (how == 0) {
            st = rcoll_wait(s[k].req);
            flag = 1;
        } else {
            st = rcoll_test(s[k].req, &flag);
        }
        if (st != RCOLL_OK) {
            fprintf(stderr, "rank %d: %s %s m=%zu: %s\n", me, what, rcoll_coll_name(s[k].coll), s[k].m,
                    rcoll_strerror(st));
            return fails + 1;
        }
        if (!flag) {
            (void)rcoll_team_pause(t, &polls);
            continue;
        }
        done[k] = 1;
        left--;
        long bad = check_recv(&s[k], me, size);
        if (bad) {
            fprintf(stderr, "rank %d/%d: %s %s m=%zu root=%d inplace=%d call=%d: %ld wrong bytes (%s)\n", me,
                    size, what, rcoll_coll_name(s[k].coll), s[k].m, s[k].root, s[k].inplace, s[k].call, bad,
                    rcoll_request_algorithm(s[k].req));
            fails++;
        }
    }
    return fails;
}

static int run_coll(rcoll_team_t *t, rcoll_coll_t coll, int me, int size)
{
    int fails = 0, call = 0;
    unsigned seed = 12345u + (unsigned)coll;
    unsigned rseed = 777u; /* same on every rank: the completion order may differ, posting may not */
    (void)rseed;
    for (int si = 0; si < nsizes; si++) {
        size_t m = sizes[si];
        if (coll == RCOLL_COLL_BARRIER && si > 0)
            break;
        if ((size_t)size * m > 16u << 20)
            continue;
        for (int round = 0; round < ROUNDS; round++) {
            slot_t s[OUTSTANDING];
            int n = 1 + round % OUTSTANDING;
            for (int k = 0; k < n; k++) {
                int root = (call + k) % size;
                setup(&s[k], coll, m >> k, root, call + k, (round + k) & 1, me, size);
                fill_send(&s[k], me, size);
                if (post(t, &s[k], me, 0) != RCOLL_OK) {
                    fprintf(stderr, "rank %d: post %s: %s\n", me, rcoll_coll_name(coll), rcoll_team_last_error(t));
                    return fails + 1;
                }
            }
            if (round == 2 && rcoll_barrier(t) != RCOLL_OK) /* a blocking call among outstanding ones */
                fails++;
            fails += complete_all(t, s, n, round & 1, &seed, "nonblocking", me, size);
            for (int k = 0; k < n; k++) {
                rcoll_request_free(s[k].req);
                teardown(&s[k]);
            }
            call += n;
        }
        /* Persistent: init, start/wait with fresh data each time; one never started. */
        slot_t p, never;
        setup(&p, coll, m, (call + 1) % size, call, 0, me, size);
        setup(&never, coll, m, 0, call, 0, me, size);
        if (post(t, &p, me, 1) != RCOLL_OK || post(t, &never, me, 1) != RCOLL_OK) {
            fprintf(stderr, "rank %d: init %s: %s\n", me, rcoll_coll_name(coll), rcoll_team_last_error(t));
            return fails + 1;
        }
        for (int k = 0; k < 3; k++) {
            p.call = call + 100 + k;
            fill_send(&p, me, size);
            if (rcoll_start(p.req) != RCOLL_OK) {
                fprintf(stderr, "rank %d: start %s: %s\n", me, rcoll_coll_name(coll), rcoll_team_last_error(t));
                return fails + 1;
            }
            fails += complete_all(t, &p, 1, k & 1, &seed, "persistent", me, size);
            if (rcoll_request_active(p.req) || rcoll_wait(p.req) != RCOLL_OK) /* inactive: at once */
                fails++;
        }
        rcoll_request_free(p.req);
        rcoll_request_free(never.req);
        teardown(&p);
        teardown(&never);
        call += 3;
    }
    return fails;
}

static int matrix_rank(int rank, const rcoll_oob_t *oob, void *arg)
{
    (void)arg;
    rcoll_context_t *ctx;
    rcoll_team_t *t;
    if (rcoll_context_create(&ctx) != RCOLL_OK || rcoll_team_create(ctx, oob, &t) != RCOLL_OK)
        return 1;
    int fails = 0;
    for (int c = 0; c < ncolls && !fails; c++)
        fails += run_coll(t, colls[c], rank, oob->size);
    if (rank == 0 && !fails)
        printf("  np=%d ok (%s progress)\n", oob->size, rcoll_team_progress_mode(t));
    rcoll_team_destroy(t);
    rcoll_context_destroy(ctx);
    return fails ? 1 : 0;
}

/* Runs body(team, rank, size) on a new context and team, then a barrier; its failures (a
 * body returns -1 when a call failed so that the team cannot go on: this rank leaves then). */
static int on_team(const rcoll_oob_t *oob, int rank, int (*body)(rcoll_team_t *t, int rank, int size))
{
    rcoll_context_t *ctx;
    rcoll_team_t *t;
    if (rcoll_context_create(&ctx) != RCOLL_OK || rcoll_team_create(ctx, oob, &t) != RCOLL_OK)
        return 1;
    int fails = body(t, rank, oob->size);
    if (fails < 0)
        return 1;
    rcoll_barrier(t);
    rcoll_team_destroy(t);
    rcoll_context_destroy(ctx);
    return fails;
}

/* ---- progress without the caller ---- */

static _Atomic int *awake; /* shared: rank 0 has come back from computing */

static int offload(rcoll_team_t *t, int rank, int size)
{
    int fails = 0;
    int peers = strcmp(rcoll_team_progress_mode(t), "peers") == 0;
    size_t m = 256 * 1024;
    for (int rep = 0; rep < 2 && !fails; rep++) {
        slot_t s;
        setup(&s, rep ? RCOLL_COLL_ALLGATHER : RCOLL_COLL_ALLTOALL, m, 0, 500 + rep, 0, rank, size);
        fill_send(&s, rank, size);
        if (rcoll_barrier(t) != RCOLL_OK || post(t, &s, rank, 0) != RCOLL_OK)
            return -1;
        if (rank == 0) { /* posts, then computes outside rcoll */
            struct timespec ts = {1, 0};
            nanosleep(&ts, NULL);
            atomic_store(awake, rep + 1);
        }
        if (rcoll_wait(s.req) != RCOLL_OK || check_recv(&s, rank, size)) {
            fprintf(stderr, "rank %d: offload %s failed\n", rank, rcoll_coll_name(s.coll));
            fails++;
        } else if (rank != 0 && peers && atomic_load(awake) > rep) {
            fprintf(stderr, "rank %d: offload %s: completed only after rank 0 came back\n", rank,
                    rcoll_coll_name(s.coll));
            fails++;
        }
        rcoll_request_free(s.req);
        teardown(&s);
    }
    return fails;
}

static int offload_rank(int rank, const rcoll_oob_t *oob, void *arg)
{
    (void)arg;
    return on_team(oob, rank, offload);
}

/* ---- a root far ahead of a receiver that is away ---- */

/* Rank 0, the root of every call, posts and completes more broadcasts and scatters than the
 * board has slots (32 by default) and inline areas (8) while the other ranks are away outside
 * rcoll: reusing a slot or an area, it writes what it held there for them into their buffers
 * itself. Then they post the same calls and find their data there, for tiny blocks (in the
 * slot head), small ones (in the head run or inline) and pushed ones. */
#define AHEAD_CALLS 40
static int ahead(rcoll_team_t *t, int rank, int size)
{
    int fails = 0;
    static const size_t ms[] = {8, 1000, 5000};
    for (int k = 0; k < 3 && !fails; k++) {
        slot_t s[AHEAD_CALLS];
        for (int i = 0; i < AHEAD_CALLS; i++) {
            setup(&s[i], i % 2 ? RCOLL_COLL_SCATTER : RCOLL_COLL_BCAST, ms[k], 0, 700 + i, 0, rank, size);
            fill_send(&s[i], rank, size);
        }
        if (rcoll_barrier(t) != RCOLL_OK)
            return -1;
        if (rank != 0) { /* away while the root runs ahead */
            struct timespec ts = {0, 200 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        for (int i = 0; i < AHEAD_CALLS && !fails; i++) {
            if (post(t, &s[i], rank, 0) != RCOLL_OK || rcoll_wait(s[i].req) != RCOLL_OK || check_recv(&s[i], rank, size)) {
                fprintf(stderr, "rank %d: ahead %s of %zu bytes, call %d failed\n", rank,
                        rcoll_coll_name(s[i].coll), ms[k], i);
                fails++;
            }
            rcoll_request_free(s[i].req);
        }
        for (int i = 0; i < AHEAD_CALLS; i++)
            teardown(&s[i]);
    }
    return fails;
}

static int ahead_rank(int rank, const rcoll_oob_t *oob, void *arg)
{
    (void)arg;
    return on_team(oob, rank, ahead);
}

/* ---- several teams side by side ---- */

/* One context, SIDE_TEAMS teams of the same ranks, each with requests outstanding while the
 * next team is created and its first calls run: with a progress thread per team (RCOLL_PROGRESS
 * =thread across nodes) the teams' threads work the context's one network worker at once, and
 * a team's creation runs while the others' threads work it. Each round posts one call on every
 * team made so far, the teams taken in an order that differs from rank to rank (each team's own
 * calls stay in order), then waits for them in reverse order and checks their data. */
#define SIDE_TEAMS 4
#define SIDE_CHURN 20

/* Teams made, used at once and destroyed, SIDE_CHURN times, while every rank but the last waits
 * in an ibarrier on `t` (its progress thread works the network all along): a peer's first
 * writes into a new team must not be lost while this rank still finishes creating it. */
static int churn(rcoll_context_t *ctx, const rcoll_oob_t *oob, rcoll_team_t *t, int rank)
{
    int size = oob->size, fails = 0;
    rcoll_request_t *bar = NULL;
    if (rank < size - 1 && rcoll_ibarrier(t, &bar) != RCOLL_OK)
        return 1;
    for (int j = 0; j < SIDE_CHURN && !fails; j++) {
        rcoll_team_t *x;
        uint64_t mine = (uint64_t)(rank + 1) << 32 | (uint64_t)j, all[64];
        if (rcoll_team_create(ctx, oob, &x) != RCOLL_OK)
            return 1;
        if (rcoll_allgather(x, &mine, all, sizeof mine) != RCOLL_OK) {
            fprintf(stderr, "rank %d: churn %d: %s\n", rank, j, rcoll_team_last_error(x));
            fails++;
        }
        for (int r = 0; r < size && !fails; r++)
            fails += all[r] != ((uint64_t)(r + 1) << 32 | (uint64_t)j);
        rcoll_team_destroy(x);
    }
    if (rank == size - 1 && rcoll_ibarrier(t, &bar) != RCOLL_OK)
        return 1;
    fails += rcoll_wait(bar) != RCOLL_OK;
    rcoll_request_free(bar);
    return fails;
}

static int side_rank(int rank, const rcoll_oob_t *oob, void *arg)
{
    (void)arg;
    static const rcoll_coll_t kinds[] = {RCOLL_COLL_ALLGATHER, RCOLL_COLL_ALLTOALL, RCOLL_COLL_BCAST,
                                         RCOLL_COLL_GATHERV};
    static const size_t ms[] = {7, 4097, 65539};
    int size = oob->size, fails = 0, made = 0;
    rcoll_context_t *ctx;
    rcoll_team_t *teams[SIDE_TEAMS];
    if (rcoll_context_create(&ctx) != RCOLL_OK)
        return 1;
    for (int round = 0; round < 3 * SIDE_TEAMS && !fails; round++) {
        slot_t s[SIDE_TEAMS];
        int n = made;
        for (int k = 0; k < n; k++) { /* the teams made so far, then a new one */
            int tk = (k + rank) % n;
            setup(&s[tk], kinds[(round + tk) % 4], ms[(round + tk) % 3], (round + tk) % size,
                  1000 + round * SIDE_TEAMS + tk, 0, rank, size);
            fill_send(&s[tk], rank, size);
            if (post(teams[tk], &s[tk], rank, 0) != RCOLL_OK) {
                fprintf(stderr, "rank %d: side by side: post on team %d: %s\n", rank, tk,
                        rcoll_team_last_error(teams[tk]));
                return 1;
            }
        }
        if (made < SIDE_TEAMS && rcoll_team_create(ctx, oob, &teams[made++]) != RCOLL_OK) {
            fprintf(stderr, "rank %d: side by side: team %d not created\n", rank, made - 1);
            return 1;
        }
        if (made == 1 && churn(ctx, oob, teams[0], rank)) {
            fprintf(stderr, "rank %d: side by side: teams made while another waits failed\n", rank);
            return 1;
        }
        for (int k = n - 1; k >= 0; k--) {
            if (rcoll_wait(s[k].req) != RCOLL_OK || check_recv(&s[k], rank, size)) {
                fprintf(stderr, "rank %d/%d: side by side: %s of %zu bytes on team %d (round %d) "
                        "failed: %s\n", rank, size, rcoll_coll_name(s[k].coll), s[k].m, k, round,
                        rcoll_team_last_error(teams[k]));
                fails++;
            }
            rcoll_request_free(s[k].req);
            teardown(&s[k]);
        }
    }
    for (int i = 0; i < made; i++) {
        if (!fails)
            rcoll_barrier(teams[i]);
        rcoll_team_destroy(teams[i]);
    }
    rcoll_context_destroy(ctx);
    return fails ? 1 : 0;
}

/* ---- peer failure ---- */

static int failure_rank(int rank, const rcoll_oob_t *oob, void *arg)
{
    int after_post = *(int *)arg;
    rcoll_context_t *ctx;
    rcoll_team_t *t;
    if (rcoll_context_create(&ctx) != RCOLL_OK || rcoll_team_create(ctx, oob, &t) != RCOLL_OK)
        return 1;
    if (rcoll_barrier(t) != RCOLL_OK)
        return 1;
    slot_t s;
    setup(&s, RCOLL_COLL_ALLTOALL, 100000, 0, 900, 0, rank, oob->size);
    fill_send(&s, rank, oob->size);
    if (rank == 1 && !after_post)
        _exit(0); /* dies before posting */
    if (post(t, &s, rank, 0) != RCOLL_OK)
        return rank == 1 ? 0 : 2;
    if (rank == 1)
        _exit(0); /* dies while its peers wait */
    rcoll_status_t st = rcoll_wait(s.req);
    /* Dying before posting: an error. After: an error, or success if its data had moved. */
    if (st == RCOLL_OK && !after_post)
        return 3;
    if (st != RCOLL_OK && st != RCOLL_ERR_PEER_DEAD && st != RCOLL_ERR_TIMEOUT && st != RCOLL_ERR_SYSTEM)
        return 4;
    return 0;
}

static int parse_list(const char *s, int *out, int max)
{
    int n = 0;
    while (*s && n < max) {
        out[n++] = atoi(s);
        const char *c = strchr(s, ',');
        if (!c)
            break;
        s = c + 1;
    }
    return n;
}

int main(int argc, char **argv)
{
    static const size_t full_sizes[] = {0, 1, 7, 1001, 4097, 20000, 65539, (1u << 20) + 5};
    static const size_t quick_sizes[] = {0, 1, 7, 4097, 65539};
    int nps[32], nnp = 0;
    ncolls = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick"))
            quick = 1;
        else if (!strcmp(argv[i], "--np") && i + 1 < argc)
            nnp = parse_list(argv[++i], nps, 32);
        else if (!strcmp(argv[i], "--coll") && i + 1 < argc) {
            char *list = strdup(argv[++i]);
            for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ","))
                if (rcoll_coll_from_name(tok) >= 0)
                    colls[ncolls++] = (rcoll_coll_t)rcoll_coll_from_name(tok);
            free(list);
        }
    }
    if (!ncolls)
        for (int c = 0; c < RCOLL_COLL_COUNT; c++)
            if (!rcoll_coll_info((rcoll_coll_t)c)->reduction)
                colls[ncolls++] = (rcoll_coll_t)c;
    sizes = quick ? quick_sizes : full_sizes;
    nsizes = quick ? 5 : 8;
    if (!nnp) {
        static const int full[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 16}, small[] = {1, 2, 3, 4, 5, 9};
        nnp = quick ? 6 : 10;
        memcpy(nps, quick ? small : full, (size_t)nnp * sizeof(int));
    }
    int failed = 0;
    for (int i = 0; i < nnp; i++) {
        int r = rcoll_fork_run(nps[i], matrix_rank, NULL, 600);
        if (r) {
            printf("FAIL matrix np=%d (%d ranks failed)\n", nps[i], r);
            failed++;
        }
    }
    awake = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    for (int np = 2; np <= 4; np += 2) {
        atomic_store(awake, 0);
        if (rcoll_fork_run(np, offload_rank, NULL, 120)) {
            printf("FAIL offload np=%d\n", np);
            failed++;
        } else {
            printf("  offload np=%d ok\n", np);
        }
    }
    for (int np = 2; np <= 3; np++) {
        if (rcoll_fork_run(np, ahead_rank, NULL, 120)) {
            printf("FAIL root ahead np=%d\n", np);
            failed++;
        } else {
            printf("  root ahead np=%d ok\n", np);
        }
    }
    for (int np = 4; np <= 5; np++) {
        if (rcoll_fork_run(np, side_rank, NULL, 120)) {
            printf("FAIL teams side by side np=%d\n", np);
            failed++;
        } else {
            printf("  teams side by side np=%d ok\n", np);
        }
    }
    setenv("RCOLL_TIMEOUT", "20", 1);
    for (int after = 0; after <= 1; after++) {
        int r = rcoll_fork_run(3, failure_rank, &after, 60);
        if (r) {
            printf("FAIL peer failure (%s post): %d ranks\n", after ? "after" : "before", r);
            failed++;
        } else {
            printf("  peer failure %s post ok\n", after ? "after" : "before");
        }
    }
    printf(failed ? "FAILED\n" : "ok\n");
    return failed ? 1 : 0;
}
