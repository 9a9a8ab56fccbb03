/* rcoll-soak: soak test of the blocking MPI collectives. A plain MPI program (no rcoll header),
 * run natively and with the rcoll drop-in (librcoll-mpi.so) LD_PRELOADed, like any third-party
 * program. It makes a long series of back-to-back collectives (default one million, no barrier
 * between them) of all ten kinds (barrier, allgather, alltoall, bcast, gather, scatter,
 * allgatherv, alltoallv, gatherv, scatterv) over several communicators (MPI_COMM_WORLD, a
 * duplicate that is freed and duplicated again every --churn calls, two halves, a split in
 * reversed rank order, an odd/even split and, when np > 2, all ranks but the last), with block
 * sizes from 0 bytes to 64 KB and rarely up to 1 MB, rotating or random roots, MPI_IN_PLACE at
 * times, MPI_BYTE or MPI_INT, v-form counts that are uneven or zero and displacements in
 * ascending or descending rank order with gaps. The schedule is a pure function of (seed, call
 * index), the same on every rank. Every --check-every-th call and the last --tail calls are
 * checked: send data is a pattern of (call, source, destination, offset), every received byte,
 * the gaps and a guard after the data, and the send buffer afterwards are compared; the other
 * calls move their buffers' stale contents. VmRSS, open fds and /dev/shm entries (all, named
 * "rcoll...", and rcoll ones created by this job's ranks) are measured at the start, after the
 * warm-up (a checked sweep of every collective, communicator and power-of-two size, then
 * --warmup calls of the schedule) and at the end. Wrong data or an MPI error aborts with the
 * call's description (--show prints any stretch of the schedule again, with v-form counts);
 * more open fds at the end than after the warm-up, a /dev/shm rcoll entry of this job at the
 * end, or VmRSS grown by more than --rss-limit-kb since the warm-up on any rank is a failure
 * (exit status 1); --timeout makes a hang name the call every rank is in. Rank 0 prints one
 * JSON line on stdout (see docs/benchmarking.md) and a summary on stderr. */
#include <mpi.h>
#include <dirent.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define POISON 0xA5
#define GUARD 64            /* poisoned bytes after every receive area, checked untouched */
#define MAX_OFFSET 64       /* buffers start at offsets 0..63 (alignment variety) */
#define MAX_GAP 3           /* v-form displacements: gaps of 0, 1 or 3 elements */
#define BIG_TOTAL (16 << 20) /* np * largest block stays below this */
#define MSG_LEN 512

enum kind { K_BARRIER, K_ALLGATHER, K_ALLTOALL, K_BCAST, K_GATHER, K_SCATTER, K_ALLGATHERV,
            K_ALLTOALLV, K_GATHERV, K_SCATTERV, NKINDS };
static const char *const kind_name[NKINDS] = { "barrier", "allgather", "alltoall", "bcast",
    "gather", "scatter", "allgatherv", "alltoallv", "gatherv", "scatterv" };
static const int kind_weight[NKINDS] = { 8, 12, 10, 16, 10, 10, 8, 8, 9, 9 };

enum comm_id { C_WORLD, C_DUP, C_HALVES, C_REVERSED, C_PARITY, C_ALLBUTLAST, NCOMMS };
static const char *const comm_name[NCOMMS] = { "MPI_COMM_WORLD", "dup of world",
    "halves", "reversed", "odd/even", "all but the last rank" };
static const char *const comm_key[NCOMMS] = { "world", "dup", "halves", "reversed", "parity",
    "allbutlast" }; /* --comms */
static const int comm_weight[NCOMMS] = { 30, 20, 15, 15, 10, 10 };

struct opts {
    long calls;          /* length of the schedule */
    long check_every;    /* call i is checked when i % check_every == 0 ... */
    long tail;           /* ... or when it is one of the last tail calls */
    long warmup;         /* the second measurement is taken after this many calls */
    long churn;          /* the dup is freed and duplicated again every churn calls (0: never) */
    unsigned long long seed;
    long rss_limit_kb;   /* VmRSS growth after the warm-up that is a failure */
    int timeout;         /* seconds; 0: none */
    long progress;       /* rank 0 prints its rate and resources every progress calls */
    long show_from, show_to; /* --show: print these calls of the schedule, run nothing */
    size_t max_bytes;    /* the largest block */
    int weight[NKINDS];  /* of each collective in the schedule (--colls: others 0) */
    int cweight[NCOMMS]; /* of each communicator (--comms: others 0) */
};

struct comm {
    MPI_Comm comm;       /* MPI_COMM_NULL: this rank is not a member */
    int rank, size;
};

/* One collective of the schedule; the same on every rank. */
struct call {
    long i;
    int kind, comm;
    size_t m;            /* bytes per block (whole message for bcast), a multiple of unit */
    int unit;            /* 1: MPI_BYTE, 4: MPI_INT */
    int root_rotates;    /* root i % size, else root_h % size */
    unsigned root_h;
    int inplace;         /* MPI_IN_PLACE (rooted collectives: at the root) */
    int rdesc, sdesc;    /* v-form receive / send blocks in descending rank order */
    int gap;             /* v-forms: elements between blocks */
    size_t soff, roff;   /* buffer offsets */
    int check;
    int root;            /* resolved for the rank's communicator */
};

/* What is measured at each point, per rank. */
struct res {
    long rss_kb, anon_kb, shmem_kb; /* VmRSS and two of its parts */
    long fds, shm_all, shm_rcoll, shm_job;
};

struct soak {
    struct opts o;
    int wrank, wsize;
    struct comm comms[NCOMMS];
    unsigned char *sbase, *rbase;
    int *scounts, *sdispls, *rcounts, *rdispls;
    int *pids;           /* of every world rank */
    long checked;        /* calls of the schedule checked */
    long swept;          /* calls of the warm-up sweep (all checked) */
};

static volatile sig_atomic_t g_call = -1, g_kind = -1, g_rank = -1, g_timeout;

/* ---- the schedule ---- */

static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static uint64_t key3(uint64_t a, uint64_t b, uint64_t c)
{
    return mix64(a ^ mix64(b ^ mix64(c)));
}

static int pick(uint64_t h, const int *weights, int n)
{
    int total = 0;
    for (int k = 0; k < n; k++)
        total += weights[k];
    int r = (int)(h % (uint64_t)total);
    for (int k = 0; k < n; k++) {
        if (r < weights[k])
            return k;
        r -= weights[k];
    }
    return 0;
}

/* Mostly small, like real programs: the average block is about 4 KB. */
static size_t plan_bytes(uint64_t h, size_t max_bytes)
{
    unsigned r = (unsigned)(h % 10000);
    uint64_t v = h >> 20;
    size_t m;
    if (r < 1000)
        m = 0;
    else if (r < 2500)
        m = 1;
    else if (r < 6000)
        m = 2 + v % 63; /* up to 64 */
    else if (r < 8000)
        m = 65 + v % 960; /* up to 1 KB */
    else if (r < 9500)
        m = 1025 + v % 15360; /* up to 16 KB */
    else if (r < 9990)
        m = 16385 + v % 49152; /* up to 64 KB */
    else
        m = 262144 + v % 786433; /* rarely: 256 KB to 1 MB */
    return m < max_bytes ? m : max_bytes;
}

static struct call plan(const struct soak *s, long i)
{
    const uint64_t seed = s->o.seed;
    uint64_t h0 = key3(seed, (uint64_t)i, 1), h1 = key3(seed, (uint64_t)i, 2);
    uint64_t h2 = key3(seed, (uint64_t)i, 3);
    struct call k;
    memset(&k, 0, sizeof k);
    k.i = i;
    k.kind = pick(h0, s->o.weight, NKINDS);
    k.comm = pick(h0 >> 8, s->o.cweight, NCOMMS);
    if (s->comms[k.comm].size == 0) /* all but the last: only when np > 2 */
        k.comm = C_WORLD;
    k.m = k.kind == K_BARRIER ? 0 : plan_bytes(h1, s->o.max_bytes);
    k.unit = (k.m > 0 && k.m % 4 == 0 && (h2 & 3) == 0) ? 4 : 1;
    k.root_rotates = (int)((h2 >> 2) & 1);
    k.root_h = (unsigned)(h2 >> 40);
    k.inplace = ((h2 >> 3) & 7) == 0 && k.kind != K_BARRIER && k.kind != K_BCAST;
    k.rdesc = (int)((h2 >> 6) & 1);
    k.sdesc = (int)((h2 >> 7) & 1);
    k.gap = (int)((h2 >> 8) % 3);
    if (k.gap == 2)
        k.gap = MAX_GAP;
    k.soff = (size_t)((h2 >> 16) % MAX_OFFSET) / (size_t)k.unit * (size_t)k.unit;
    k.roff = (size_t)((h2 >> 24) % MAX_OFFSET) / (size_t)k.unit * (size_t)k.unit;
    k.check = i % s->o.check_every == 0 || i >= s->o.calls - s->o.tail;
    return k;
}

/* ---- failures ---- */

static void describe(const struct soak *s, const struct call *k, char *out, size_t len)
{
    const struct comm *c = &s->comms[k->comm];
    char which[64];
    if (k->i >= 0)
        snprintf(which, sizeof which, "call %ld of %ld", k->i, s->o.calls);
    else
        snprintf(which, sizeof which, "warm-up sweep call %ld", -1 - k->i);
    int n = snprintf(out, len, "%s (seed %llu): %s on %s (size %d, rank %d), "
                     "%zu bytes per block as %s", which, s->o.seed,
                     kind_name[k->kind], comm_name[k->comm], c->size, c->rank, k->m,
                     k->unit == 4 ? "MPI_INT" : "MPI_BYTE");
    if (n < 0 || (size_t)n >= len)
        return;
    if (k->kind == K_BCAST || k->kind == K_GATHER || k->kind == K_SCATTER ||
        k->kind == K_GATHERV || k->kind == K_SCATTERV)
        n += snprintf(out + n, len - (size_t)n, ", root %d", k->root);
    if ((size_t)n < len && k->inplace)
        n += snprintf(out + n, len - (size_t)n, ", MPI_IN_PLACE");
    if ((size_t)n < len && k->kind >= K_ALLGATHERV)
        snprintf(out + n, len - (size_t)n, ", displacements: receive %s, send %s, gap %d",
                 k->rdesc ? "descending" : "ascending", k->sdesc ? "descending" : "ascending",
                 k->gap);
}

static void fail(const struct soak *s, const struct call *k, const char *fmt, ...)
{
    char what[MSG_LEN], call[MSG_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    describe(s, k, call, sizeof call);
    fprintf(stderr, "rcoll-soak: FAILED on world rank %d at %s: %s\n", s->wrank, call, what);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* ---- data: pattern of (call, source, destination, offset) ---- */

struct pat {
    unsigned char a, b;
};

static struct pat pat_of(const struct soak *s, long i, int src, int dst)
{
    uint64_t h = key3(s->o.seed ^ (uint64_t)i, (uint64_t)src, (uint64_t)dst);
    struct pat p = { (unsigned char)h, (unsigned char)((h >> 8) | 1) };
    return p;
}

static unsigned char pat_at(struct pat p, size_t off)
{
    return (unsigned char)(p.a + p.b * off + (off >> 8));
}

static void fill(unsigned char *buf, size_t n, struct pat p)
{
    for (size_t off = 0; off < n; off++)
        buf[off] = pat_at(p, off);
}

/* Block of n bytes that src sent to dst (dst 0 for the same block to every rank). */
static void expect(const struct soak *s, const struct call *k, const unsigned char *buf,
                   size_t n, int src, int dst, const char *what)
{
    struct pat p = pat_of(s, k->i, src, dst);
    for (size_t off = 0; off < n; off++)
        if (buf[off] != pat_at(p, off))
            fail(s, k, "%s (source rank %d): byte %zu of %zu is 0x%02x, expected 0x%02x", what,
                 src, off, n, buf[off], pat_at(p, off));
}

static void expect_poison(const struct soak *s, const struct call *k, const unsigned char *buf,
                          size_t n, const char *what)
{
    for (size_t off = 0; off < n; off++)
        if (buf[off] != POISON)
            fail(s, k, "%s: byte %zu of %zu was written (0x%02x)", what, off, n, buf[off]);
}

/* ---- the collectives: each fills (checked calls), calls MPI, checks (checked calls) ---- */

static MPI_Datatype type_of(const struct call *k)
{
    return k->unit == 4 ? MPI_INT : MPI_BYTE;
}

static unsigned char *sbuf(const struct soak *s, const struct call *k)
{
    return s->sbase + k->soff;
}

static unsigned char *rbuf(const struct soak *s, const struct call *k)
{
    return s->rbase + k->roff;
}

static int run_allgather(struct soak *s, const struct call *k, const struct comm *c)
{
    size_t m = k->m;
    int P = c->size, me = c->rank, cnt = (int)(m / (size_t)k->unit);
    unsigned char *sb = sbuf(s, k), *rb = rbuf(s, k);
    if (k->check) {
        memset(rb, POISON, (size_t)P * m + GUARD);
        fill(k->inplace ? rb + (size_t)me * m : sb, m, pat_of(s, k->i, me, 0));
    }
    int rc = MPI_Allgather(k->inplace ? MPI_IN_PLACE : sb, cnt, type_of(k), rb, cnt,
                           type_of(k), c->comm);
    if (rc != MPI_SUCCESS || !k->check)
        return rc;
    for (int r = 0; r < P; r++)
        expect(s, k, rb + (size_t)r * m, m, r, 0, "recvbuf block");
    expect_poison(s, k, rb + (size_t)P * m, GUARD, "guard after recvbuf");
    if (!k->inplace)
        expect(s, k, sb, m, me, 0, "sendbuf changed");
    return rc;
}

static int run_alltoall(struct soak *s, const struct call *k, const struct comm *c)
{
    size_t m = k->m;
    int P = c->size, me = c->rank, cnt = (int)(m / (size_t)k->unit);
    unsigned char *sb = sbuf(s, k), *rb = rbuf(s, k);
    if (k->check) {
        memset(rb, POISON, (size_t)P * m + GUARD);
        for (int j = 0; j < P; j++)
            fill((k->inplace ? rb : sb) + (size_t)j * m, m, pat_of(s, k->i, me, j));
    }
    int rc = MPI_Alltoall(k->inplace ? MPI_IN_PLACE : sb, cnt, type_of(k), rb, cnt, type_of(k),
                          c->comm);
    if (rc != MPI_SUCCESS || !k->check)
        return rc;
    for (int j = 0; j < P; j++)
        expect(s, k, rb + (size_t)j * m, m, j, me, "recvbuf block");
    expect_poison(s, k, rb + (size_t)P * m, GUARD, "guard after recvbuf");
    for (int j = 0; j < P && !k->inplace; j++)
        expect(s, k, sb + (size_t)j * m, m, me, j, "sendbuf changed");
    return rc;
}

static int run_bcast(struct soak *s, const struct call *k, const struct comm *c)
{
    unsigned char *rb = rbuf(s, k);
    if (k->check) {
        memset(rb, POISON, k->m + GUARD);
        if (c->rank == k->root)
            fill(rb, k->m, pat_of(s, k->i, k->root, 0));
    }
    int rc = MPI_Bcast(rb, (int)(k->m / (size_t)k->unit), type_of(k), k->root, c->comm);
    if (rc != MPI_SUCCESS || !k->check)
        return rc;
    expect(s, k, rb, k->m, k->root, 0, c->rank == k->root ? "root's buffer changed" : "buffer");
    expect_poison(s, k, rb + k->m, GUARD, "guard after buffer");
    return rc;
}

static int run_gather(struct soak *s, const struct call *k, const struct comm *c)
{
    size_t m = k->m;
    int P = c->size, me = c->rank, cnt = (int)(m / (size_t)k->unit);
    int root = me == k->root, ip = root && k->inplace;
    unsigned char *sb = sbuf(s, k), *rb = rbuf(s, k);
    if (k->check) {
        if (root)
            memset(rb, POISON, (size_t)P * m + GUARD);
        fill(ip ? rb + (size_t)me * m : sb, m, pat_of(s, k->i, me, 0));
    }
    int rc = MPI_Gather(ip ? MPI_IN_PLACE : sb, cnt, type_of(k), rb, cnt, type_of(k), k->root,
                        c->comm);
    if (rc != MPI_SUCCESS || !k->check)
        return rc;
    for (int r = 0; r < P && root; r++)
        expect(s, k, rb + (size_t)r * m, m, r, 0, "root's recvbuf block");
    if (root)
        expect_poison(s, k, rb + (size_t)P * m, GUARD, "guard after root's recvbuf");
    if (!ip)
        expect(s, k, sb, m, me, 0, "sendbuf changed");
    return rc;
}

static int run_scatter(struct soak *s, const struct call *k, const struct comm *c)
{
    size_t m = k->m;
    int P = c->size, me = c->rank, cnt = (int)(m / (size_t)k->unit);
    int root = me == k->root, ip = root && k->inplace;
    unsigned char *sb = sbuf(s, k), *rb = rbuf(s, k);
    if (k->check) {
        for (int j = 0; j < P && root; j++)
            fill(sb + (size_t)j * m, m, pat_of(s, k->i, me, j));
        if (!ip)
            memset(rb, POISON, m + GUARD);
    }
    int rc = MPI_Scatter(sb, cnt, type_of(k), ip ? MPI_IN_PLACE : rb, cnt, type_of(k), k->root,
                         c->comm);
    if (rc != MPI_SUCCESS || !k->check)
        return rc;
    if (!ip) {
        expect(s, k, rb, m, k->root, me, "recvbuf");
        expect_poison(s, k, rb + m, GUARD, "guard after recvbuf");
    }
    for (int j = 0; j < P && root; j++)
        expect(s, k, sb + (size_t)j * m, m, me, j, "root's sendbuf changed");
    return rc;
}

/* ---- v-forms: counts and displacements in elements ---- */

/* Elements from a to b (or of a's block when b < 0): 0 to m/unit, zero one time in eight. */
static int vcount(const struct soak *s, const struct call *k, int a, int b)
{
    size_t mc = k->m / (size_t)k->unit;
    uint64_t h = key3(s->o.seed ^ ((uint64_t)k->i << 1), (uint64_t)a, (uint64_t)(b + 1));
    if (mc == 0 || (h & 7) == 0)
        return 0;
    return (int)((h >> 3) % (mc + 1));
}

/* MPI_IN_PLACE alltoallv: what a sends b must be what b sends a. */
static int vcount_sym(const struct soak *s, const struct call *k, int a, int b)
{
    return a < b ? vcount(s, k, a, b) : vcount(s, k, b, a);
}

/* Blocks packed in ascending or descending rank order with gap elements after each; returns
 * the extent in elements. */
static size_t layout(const int *counts, int *displs, int P, int desc, int gap)
{
    size_t pos = 0;
    for (int n = 0; n < P; n++) {
        int r = desc ? P - 1 - n : n;
        displs[r] = (int)pos;
        pos += (size_t)counts[r] + (size_t)gap;
    }
    return pos;
}

/* The gaps between received blocks and the guard after them still hold the poison. */
static void expect_gaps(const struct soak *s, const struct call *k, const unsigned char *buf,
                        const int *counts, const int *displs, int P, size_t extent)
{
    size_t u = (size_t)k->unit;
    for (int r = 0; r < P; r++)
        expect_poison(s, k, buf + ((size_t)displs[r] + (size_t)counts[r]) * u,
                      (size_t)k->gap * u, "gap after a recvbuf block");
    expect_poison(s, k, buf + extent * u, GUARD, "guard after recvbuf");
}

static int run_allgatherv(struct soak *s, const struct call *k, const struct comm *c)
{
    int P = c->size, me = c->rank, *cnt = s->rcounts, *dsp = s->rdispls;
    size_t u = (size_t)k->unit;
    unsigned char *sb = sbuf(s, k), *rb = rbuf(s, k);
    for (int r = 0; r < P; r++)
        cnt[r] = vcount(s, k, r, -1);
    size_t ext = layout(cnt, dsp, P, k->rdesc, k->gap);
    if (k->check) {
        memset(rb, POISON, ext * u + GUARD);
        fill(k->inplace ? rb + (size_t)dsp[me] * u : sb, (size_t)cnt[me] * u,
             pat_of(s, k->i, me, 0));
    }
    int rc = MPI_Allgatherv(k->inplace ? MPI_IN_PLACE : sb, cnt[me], type_of(k), rb, cnt, dsp,
                            type_of(k), c->comm);
    if (rc != MPI_SUCCESS || !k->check)
        return rc;
    for (int r = 0; r < P; r++)
        expect(s, k, rb + (size_t)dsp[r] * u, (size_t)cnt[r] * u, r, 0, "recvbuf block");
    expect_gaps(s, k, rb, cnt, dsp, P, ext);
    if (!k->inplace)
        expect(s, k, sb, (size_t)cnt[me] * u, me, 0, "sendbuf changed");
    return rc;
}

static void alltoallv_fill(struct soak *s, const struct call *k, const struct comm *c,
                           size_t rext)
{
    size_t u = (size_t)k->unit;
    int me = c->rank;
    unsigned char *rb = rbuf(s, k);
    memset(rb, POISON, rext * u + GUARD);
    for (int j = 0; j < c->size; j++) {
        if (k->inplace)
            fill(rb + (size_t)s->rdispls[j] * u, (size_t)s->rcounts[j] * u,
                 pat_of(s, k->i, me, j));
        else
            fill(sbuf(s, k) + (size_t)s->sdispls[j] * u, (size_t)s->scounts[j] * u,
                 pat_of(s, k->i, me, j));
    }
}

static int run_alltoallv(struct soak *s, const struct call *k, const struct comm *c)
{
    int P = c->size, me = c->rank;
    size_t u = (size_t)k->unit;
    unsigned char *sb = sbuf(s, k), *rb = rbuf(s, k);
    for (int j = 0; j < P; j++) {
        s->scounts[j] = k->inplace ? vcount_sym(s, k, me, j) : vcount(s, k, me, j);
        s->rcounts[j] = k->inplace ? vcount_sym(s, k, j, me) : vcount(s, k, j, me);
    }
    layout(s->scounts, s->sdispls, P, k->sdesc, k->gap);
    size_t rext = layout(s->rcounts, s->rdispls, P, k->rdesc, k->gap);
    if (k->check)
        alltoallv_fill(s, k, c, rext);
    int rc = MPI_Alltoallv(k->inplace ? MPI_IN_PLACE : sb, s->scounts, s->sdispls, type_of(k),
                           rb, s->rcounts, s->rdispls, type_of(k), c->comm);
    if (rc != MPI_SUCCESS || !k->check)
        return rc;
    for (int j = 0; j < P; j++)
        expect(s, k, rb + (size_t)s->rdispls[j] * u, (size_t)s->rcounts[j] * u, j, me,
               "recvbuf block");
    expect_gaps(s, k, rb, s->rcounts, s->rdispls, P, rext);
    for (int j = 0; j < P && !k->inplace; j++)
        expect(s, k, sb + (size_t)s->sdispls[j] * u, (size_t)s->scounts[j] * u, me, j,
               "sendbuf changed");
    return rc;
}

static int run_gatherv(struct soak *s, const struct call *k, const struct comm *c)
{
    int P = c->size, me = c->rank, *cnt = s->rcounts, *dsp = s->rdispls;
    int root = me == k->root, ip = root && k->inplace;
    size_t u = (size_t)k->unit;
    unsigned char *sb = sbuf(s, k), *rb = rbuf(s, k);
    for (int r = 0; r < P; r++)
        cnt[r] = vcount(s, k, r, -1);
    size_t ext = layout(cnt, dsp, P, k->rdesc, k->gap);
    if (k->check) {
        if (root)
            memset(rb, POISON, ext * u + GUARD);
        fill(ip ? rb + (size_t)dsp[me] * u : sb, (size_t)cnt[me] * u, pat_of(s, k->i, me, 0));
    }
    int rc = MPI_Gatherv(ip ? MPI_IN_PLACE : sb, cnt[me], type_of(k), rb, cnt, dsp, type_of(k),
                         k->root, c->comm);
    if (rc != MPI_SUCCESS || !k->check)
        return rc;
    for (int r = 0; r < P && root; r++)
        expect(s, k, rb + (size_t)dsp[r] * u, (size_t)cnt[r] * u, r, 0, "root's recvbuf block");
    if (root)
        expect_gaps(s, k, rb, cnt, dsp, P, ext);
    if (!ip)
        expect(s, k, sb, (size_t)cnt[me] * u, me, 0, "sendbuf changed");
    return rc;
}

static int run_scatterv(struct soak *s, const struct call *k, const struct comm *c)
{
    int P = c->size, me = c->rank, *cnt = s->scounts, *dsp = s->sdispls;
    int root = me == k->root, ip = root && k->inplace;
    size_t u = (size_t)k->unit;
    unsigned char *sb = sbuf(s, k), *rb = rbuf(s, k);
    for (int r = 0; r < P; r++)
        cnt[r] = vcount(s, k, r, -1);
    layout(cnt, dsp, P, k->sdesc, k->gap);
    if (k->check) {
        for (int j = 0; j < P && root; j++)
            fill(sb + (size_t)dsp[j] * u, (size_t)cnt[j] * u, pat_of(s, k->i, me, j));
        if (!ip)
            memset(rb, POISON, (size_t)cnt[me] * u + GUARD);
    }
    int rc = MPI_Scatterv(sb, cnt, dsp, type_of(k), ip ? MPI_IN_PLACE : rb, cnt[me], type_of(k),
                          k->root, c->comm);
    if (rc != MPI_SUCCESS || !k->check)
        return rc;
    if (!ip) {
        expect(s, k, rb, (size_t)cnt[me] * u, k->root, me, "recvbuf");
        expect_poison(s, k, rb + (size_t)cnt[me] * u, GUARD, "guard after recvbuf");
    }
    for (int j = 0; j < P && root; j++)
        expect(s, k, sb + (size_t)dsp[j] * u, (size_t)cnt[j] * u, me, j, "root's sendbuf changed");
    return rc;
}

static int run_one(struct soak *s, const struct call *k, const struct comm *c)
{
    switch (k->kind) {
    case K_BARRIER: return MPI_Barrier(c->comm);
    case K_ALLGATHER: return run_allgather(s, k, c);
    case K_ALLTOALL: return run_alltoall(s, k, c);
    case K_BCAST: return run_bcast(s, k, c);
    case K_GATHER: return run_gather(s, k, c);
    case K_SCATTER: return run_scatter(s, k, c);
    case K_ALLGATHERV: return run_allgatherv(s, k, c);
    case K_ALLTOALLV: return run_alltoallv(s, k, c);
    case K_GATHERV: return run_gatherv(s, k, c);
    default: return run_scatterv(s, k, c);
    }
}

static void run_call(struct soak *s, struct call k)
{
    const struct comm *c = &s->comms[k.comm];
    if (c->comm == MPI_COMM_NULL)
        return;
    k.root = (int)(k.root_rotates ? k.i % c->size : (long)(k.root_h % (unsigned)c->size));
    g_call = (sig_atomic_t)k.i;
    g_kind = k.kind;
    int rc = run_one(s, &k, c);
    if (rc != MPI_SUCCESS) {
        char err[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, err, &len);
        fail(s, &k, "MPI error %d: %s", rc, err);
    }
    if (k.check && k.i >= 0)
        s->checked++;
}

/* Warm-up sweep, before the schedule: every collective on every communicator at 0 bytes and
 * every power of two up to the largest block, twice (the second time with MPI_IN_PLACE where
 * it applies), all checked. Buffers that grow with the largest message so far (collective
 * buffers touched page by page, caches) are then as large as the soak will make them, and
 * growth measured after the warm-up is growth the soak keeps causing. Calls -1, -2, ... */
static void sweep(struct soak *s)
{
    long j = 0;
    for (int id = 0; id < NCOMMS; id++)
        for (int kind = 0; kind < NKINDS; kind++)
            for (size_t m = 0; m <= s->o.max_bytes; m = m ? 2 * m : 1)
                for (int rep = 0; rep < 2; rep++, j++) {
                    struct call k = plan(s, -1 - j);
                    k.kind = kind;
                    k.comm = id;
                    k.m = kind == K_BARRIER ? 0 : m;
                    k.unit = 1;
                    k.soff = k.roff = 0;
                    k.root_rotates = 0;
                    k.root_h = (unsigned)(j / 2);
                    k.inplace = rep == 1 && kind != K_BARRIER && kind != K_BCAST;
                    k.check = 1;
                    if (s->comms[id].size != 0 && s->o.weight[kind] > 0 && s->o.cweight[id] > 0)
                        run_call(s, k);
                }
    s->swept = j;
}

/* ---- communicators ---- */

static void add_comm(struct soak *s, int id, MPI_Comm comm)
{
    struct comm *c = &s->comms[id];
    c->comm = comm;
    c->rank = c->size = 0;
    if (comm == MPI_COMM_NULL)
        return;
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm, &c->rank);
    MPI_Comm_size(comm, &c->size);
}

static void make_comms(struct soak *s)
{
    int r = s->wrank, P = s->wsize;
    MPI_Comm dup, halves, reversed, parity, abl;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_split(MPI_COMM_WORLD, r < P / 2, r, &halves);
    MPI_Comm_split(MPI_COMM_WORLD, 0, P - 1 - r, &reversed);
    MPI_Comm_split(MPI_COMM_WORLD, r % 2, r, &parity);
    MPI_Comm_split(MPI_COMM_WORLD, (P > 2 && r < P - 1) ? 0 : MPI_UNDEFINED, r, &abl);
    add_comm(s, C_WORLD, MPI_COMM_WORLD);
    add_comm(s, C_DUP, dup);
    add_comm(s, C_HALVES, halves);
    add_comm(s, C_REVERSED, reversed);
    add_comm(s, C_PARITY, parity);
    add_comm(s, C_ALLBUTLAST, abl);
    if (P > 2 && r == P - 1)
        s->comms[C_ALLBUTLAST].size = -1; /* exists, without this rank */
}

/* The dup is freed and duplicated again: the drop-in frees its team and builds a new one. */
static void churn(struct soak *s)
{
    MPI_Comm_free(&s->comms[C_DUP].comm);
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    add_comm(s, C_DUP, dup);
}

static void free_comms(struct soak *s)
{
    for (int id = C_DUP; id < NCOMMS; id++)
        if (s->comms[id].comm != MPI_COMM_NULL)
            MPI_Comm_free(&s->comms[id].comm);
}

/* ---- resources ---- */

/* VmRSS, RssAnon and RssShmem of /proc/self/status in kB (-1: not found). */
static void rss_kb(struct res *r)
{
    r->rss_kb = r->anon_kb = r->shmem_kb = -1;
    FILE *f = fopen("/proc/self/status", "r");
    if (f == NULL)
        return;
    char line[256];
    while (fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "VmRSS:", 6) == 0)
            r->rss_kb = strtol(line + 6, NULL, 10);
        else if (strncmp(line, "RssAnon:", 8) == 0)
            r->anon_kb = strtol(line + 8, NULL, 10);
        else if (strncmp(line, "RssShmem:", 9) == 0)
            r->shmem_kb = strtol(line + 9, NULL, 10);
    }
    fclose(f);
}

static long count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL)
        return -1;
    long n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n - 1; /* the fd of the listing itself */
}

/* Whether an rcoll segment name ("rcoll-<creator pid>-...") was created by a rank of this job. */
static int of_job(const struct soak *s, const char *name)
{
    long pid = strtol(name + strlen("rcoll-"), NULL, 10);
    for (int r = 0; r < s->wsize; r++)
        if (pid == s->pids[r])
            return 1;
    return 0;
}

static void count_shm(const struct soak *s, struct res *r)
{
    r->shm_all = r->shm_rcoll = r->shm_job = 0;
    DIR *d = opendir("/dev/shm");
    if (d == NULL)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        r->shm_all++;
        if (strncmp(e->d_name, "rcoll", 5) != 0)
            continue;
        r->shm_rcoll++;
        if (strncmp(e->d_name, "rcoll-", 6) == 0 && of_job(s, e->d_name))
            r->shm_job++;
    }
    closedir(d);
}

/* After a synchronisation (PMPI_Allreduce, which the drop-in does not see): no collective
 * of this job is running, so no team is being created. A segment of this job still listed is
 * looked at again for up to a second (it may be on its way out). */
static struct res measure(const struct soak *s)
{
    int dummy = 0, sum = 0;
    PMPI_Allreduce(&dummy, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    struct res r;
    rss_kb(&r);
    r.fds = count_fds();
    count_shm(s, &r);
    for (int tries = 0; tries < 20 && r.shm_job > 0; tries++) {
        struct timespec t = { 0, 50000000 };
        nanosleep(&t, NULL);
        count_shm(s, &r);
    }
    return r;
}

/* --progress: rank 0's rate and resources every N calls. */
static void progress(const struct soak *s, long i, double *t_last)
{
    double now = MPI_Wtime();
    struct res r;
    rss_kb(&r);
    fprintf(stderr, "rcoll-soak: call %ld: %.0f calls/s over the last %ld; rank 0: VmRSS %ld kB "
                    "(anonymous %ld, shared memory %ld), open fds %ld\n", i,
            (double)s->o.progress / (now - *t_last), s->o.progress, r.rss_kb, r.anon_kb,
            r.shmem_kb, count_fds());
    *t_last = now;
}

/* ---- options ---- */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: rcoll-soak [CALLS] [options]\n"
            "  -n, --calls N         collectives in the schedule (default 1000000)\n"
            "  -c, --check-every K   check every K-th call's data (default 1000)\n"
            "      --tail N          and the last N calls (default 100)\n"
            "  -s, --seed S          schedule seed (default 1)\n"
            "  -w, --warmup N        second measurement after N calls (default calls/10, at "
            "most 10000)\n"
            "      --churn N         free and duplicate the dup every N calls (default 100000;"
            " 0: never)\n"
            "      --max-bytes B     largest block (default 1048576, at most 16 MB / np)\n"
            "      --rss-limit-kb KB VmRSS growth after the warm-up that fails (default "
            "16384)\n"
            "      --timeout S       give up after S seconds, printing where each rank is "
            "(default 0: none)\n"
            "      --progress N      rank 0 prints its rate, VmRSS and fds every N calls\n"
            "      --colls LIST      only these collectives (comma-separated; default all ten)\n"
            "      --comms LIST      only these of world,dup,halves,reversed,parity,allbutlast\n"
            "                        (default all; allbutlast needs np > 2, else world)\n"
            "      --show FROM:TO    print calls FROM..TO of the schedule as rank 0 sees them, with\n"
            "                        their number on their communicator (1 = first call on it,\n"
            "                        warm-up sweep included, since the last --churn for the dup);\n"
            "                        run nothing\n");
}

static long num_arg(const char *text, const char *name, long min)
{
    char *end;
    long v = strtol(text, &end, 10);
    if (*text == '\0' || *end != '\0' || v < min) {
        fprintf(stderr, "rcoll-soak: bad %s '%s'\n", name, text);
        exit(2);
    }
    return v;
}

/* --colls a,b,c / --comms a,b: the names not listed get weight 0. */
static void parse_list(int *weight, const int *defaults, const char *const *names, int n,
                       const char *list, const char *what)
{
    memset(weight, 0, (size_t)n * sizeof *weight);
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    int total = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int k = 0;
        while (k < n && strcmp(t, names[k]) != 0)
            k++;
        if (k == n) {
            fprintf(stderr, "rcoll-soak: unknown %s '%s'\n", what, t);
            exit(2);
        }
        weight[k] = defaults[k];
        total += defaults[k];
    }
    if (total == 0) {
        fprintf(stderr, "rcoll-soak: no %s listed\n", what);
        exit(2);
    }
}

static void parse(struct opts *o, int argc, char **argv)
{
    static const struct option lo[] = {
        { "calls", required_argument, NULL, 'n' }, { "check-every", required_argument, NULL, 'c' },
        { "seed", required_argument, NULL, 's' }, { "warmup", required_argument, NULL, 'w' },
        { "tail", required_argument, NULL, 't' }, { "churn", required_argument, NULL, 'C' },
        { "max-bytes", required_argument, NULL, 'B' },
        { "rss-limit-kb", required_argument, NULL, 'R' },
        { "timeout", required_argument, NULL, 'T' }, { "help", no_argument, NULL, 'h' },
        { "progress", required_argument, NULL, 'P' }, { "colls", required_argument, NULL, 'L' },
        { "comms", required_argument, NULL, 'M' }, { "show", required_argument, NULL, 'S' },
        { NULL, 0, NULL, 0 } };
    *o = (struct opts){ 1000000, 1000, 100, -1, 100000, 1, 16384, 0, 0, -1, -1, 1 << 20, { 0 },
                        { 0 } };
    memcpy(o->weight, kind_weight, sizeof o->weight);
    memcpy(o->cweight, comm_weight, sizeof o->cweight);
    int ch;
    while ((ch = getopt_long(argc, argv, "n:c:s:w:h", lo, NULL)) != -1) {
        switch (ch) {
        case 'n': o->calls = num_arg(optarg, "--calls", 1); break;
        case 'c': o->check_every = num_arg(optarg, "--check-every", 1); break;
        case 's': o->seed = (unsigned long long)num_arg(optarg, "--seed", 0); break;
        case 'w': o->warmup = num_arg(optarg, "--warmup", 0); break;
        case 't': o->tail = num_arg(optarg, "--tail", 0); break;
        case 'C': o->churn = num_arg(optarg, "--churn", 0); break;
        case 'B': o->max_bytes = (size_t)num_arg(optarg, "--max-bytes", 0); break;
        case 'R': o->rss_limit_kb = num_arg(optarg, "--rss-limit-kb", 0); break;
        case 'T': o->timeout = (int)num_arg(optarg, "--timeout", 0); break;
        case 'P': o->progress = num_arg(optarg, "--progress", 0); break;
        case 'S':
            if (sscanf(optarg, "%ld:%ld", &o->show_from, &o->show_to) != 2 || o->show_from < 0) {
                fprintf(stderr, "rcoll-soak: --show FROM:TO\n");
                exit(2);
            }
            break;
        case 'L':
            parse_list(o->weight, kind_weight, kind_name, NKINDS, optarg, "collective");
            break;
        case 'M':
            parse_list(o->cweight, comm_weight, comm_key, NCOMMS, optarg, "communicator");
            break;
        case 'h': usage(stdout); exit(0);
        default: usage(stderr); exit(2);
        }
    }
    if (optind < argc)
        o->calls = num_arg(argv[optind++], "CALLS", 1);
    if (optind < argc) {
        usage(stderr);
        exit(2);
    }
    if (o->calls > 2000000000L) {
        fprintf(stderr, "rcoll-soak: at most 2000000000 calls\n");
        exit(2);
    }
    if (o->warmup < 0)
        o->warmup = o->calls / 10 < 10000 ? o->calls / 10 : 10000;
    if (o->warmup > o->calls)
        o->warmup = o->calls;
}

/* ---- watchdog: --timeout ---- */

static char *put_str(char *p, const char *str)
{
    while (*str != '\0')
        *p++ = *str++;
    return p;
}

static char *put_long(char *p, long v)
{
    char tmp[24];
    int n = 0;
    if (v < 0) {
        *p++ = '-';
        v = -v;
    }
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v > 0);
    while (n > 0)
        *p++ = tmp[--n];
    return p;
}

static void on_alarm(int sig)
{
    (void)sig;
    char msg[256], *p = msg;
    p = put_str(p, "rcoll-soak: TIMEOUT after ");
    p = put_long(p, g_timeout);
    p = put_str(p, " s: world rank ");
    p = put_long(p, g_rank);
    p = put_str(p, g_call < 0 ? " is in warm-up sweep call " : " is in call ");
    p = put_long(p, g_call < 0 ? -1 - (long)g_call : (long)g_call);
    p = put_str(p, " (");
    p = put_str(p, g_kind >= 0 ? kind_name[g_kind] : "before the first call");
    p = put_str(p, ")\n");
    ssize_t w = write(2, msg, (size_t)(p - msg));
    (void)w;
    _exit(3);
}

/* ---- report ---- */

/* The MPI library's first line, without characters JSON would need escaped. */
static void mpi_name(char *out, size_t len)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int n = 0;
    MPI_Get_library_version(v, &n);
    size_t k = 0;
    for (int j = 0; j < n && v[j] != '\n' && v[j] != ',' && k + 1 < len; j++)
        if (v[j] >= ' ' && v[j] != '"' && v[j] != '\\')
            out[k++] = v[j];
    while (k > 0 && out[k - 1] == ' ')
        k--;
    out[k] = '\0';
}

/* Per-rank values folded over ranks: the maximum of each (rank 0 gets them). */
struct folded {
    struct res start, warm, end;
    long rss_growth, fds_growth;
};

static long to_max(long v)
{
    long out = v;
    PMPI_Allreduce(&v, &out, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
    return out;
}

static struct res res_max(struct res r)
{
    struct res m = { to_max(r.rss_kb), to_max(r.anon_kb), to_max(r.shmem_kb), to_max(r.fds),
                     to_max(r.shm_all), to_max(r.shm_rcoll), to_max(r.shm_job) };
    return m;
}

/* ", "NAME_start": .., "NAME_warm": .., "NAME_end": .." */
static void json_points(const char *name, long start, long warm, long end)
{
    printf(", \"%s_start\": %ld, \"%s_warm\": %ld, \"%s_end\": %ld", name, start, name, warm,
           name, end);
}

static void report(const struct soak *s, const struct folded *f, double secs, const char *why)
{
    char mpi[128];
    mpi_name(mpi, sizeof mpi);
    const char *pre = getenv("LD_PRELOAD");
    int preloaded = pre != NULL && strstr(pre, "rcoll") != NULL;
    const struct res *a = &f->start, *w = &f->warm, *e = &f->end;
    printf("{\"soak\": true, \"mpi\": \"%s\", \"preloaded\": %s, \"np\": %d, \"calls\": %ld, "
           "\"seed\": %llu, \"check_every\": %ld, \"tail\": %ld, \"warmup\": %ld, \"churn\": %ld, "
           "\"seconds\": %.3f, \"rate\": %.1f, \"checked\": %ld, \"swept\": %ld",
           mpi, preloaded ? "true" : "false", s->wsize, s->o.calls, s->o.seed, s->o.check_every,
           s->o.tail, s->o.warmup, s->o.churn, secs, (double)s->o.calls / secs, s->checked,
           s->swept);
    json_points("rss_kb", a->rss_kb, w->rss_kb, e->rss_kb);
    json_points("rss_anon_kb", a->anon_kb, w->anon_kb, e->anon_kb);
    json_points("rss_shmem_kb", a->shmem_kb, w->shmem_kb, e->shmem_kb);
    json_points("fds", a->fds, w->fds, e->fds);
    json_points("shm", a->shm_rcoll, w->shm_rcoll, e->shm_rcoll);
    json_points("shm_job", a->shm_job, w->shm_job, e->shm_job);
    json_points("shm_all", a->shm_all, w->shm_all, e->shm_all);
    printf(", \"rss_growth_kb\": %ld, \"rss_limit_kb\": %ld, \"ok\": %s", f->rss_growth,
           s->o.rss_limit_kb, why[0] ? "false" : "true");
    if (why[0])
        printf(", \"error\": \"%s\"", why);
    printf("}\n");
    fflush(stdout);
    fprintf(stderr, "rcoll-soak: np %d, %ld calls in %.2f s (%.0f calls/s), %ld checked; VmRSS "
                    "(max over ranks) %ld -> %ld -> %ld kB (anonymous %ld -> %ld -> %ld, shared "
                    "memory %ld -> %ld -> %ld), open fds %ld -> %ld -> %ld, /dev/shm rcoll "
                    "entries %ld -> %ld -> %ld (of this job at the end: %ld): %s%s\n",
            s->wsize, s->o.calls, secs, (double)s->o.calls / secs, s->checked, a->rss_kb,
            w->rss_kb, e->rss_kb, a->anon_kb, w->anon_kb, e->anon_kb, a->shmem_kb, w->shmem_kb,
            e->shmem_kb, a->fds, w->fds, e->fds, a->shm_rcoll, w->shm_rcoll, e->shm_rcoll,
            e->shm_job, why[0] ? "FAILED: " : "OK", why);
    if (!why[0]) /* the line tests/mpi/run_mpi_tests.sh looks for */
        fprintf(stderr, "OK rcoll-soak np=%d calls=%ld seed=%llu\n", s->wsize, s->o.calls,
                s->o.seed);
}

/* "" when nothing grew, else what did. */
static void verdict(const struct soak *s, const struct folded *f, char *why, size_t len)
{
    why[0] = '\0';
    size_t n = 0;
    if (f->fds_growth > 0)
        n += (size_t)snprintf(why + n, len - n, "open fds grew by %ld after the warm-up; ",
                              f->fds_growth);
    if (n < len && f->end.shm_job > 0)
        n += (size_t)snprintf(why + n, len - n, "%ld rcoll /dev/shm entries of this job at the "
                              "end; ", f->end.shm_job);
    if (n < len && (f->rss_growth > s->o.rss_limit_kb || f->end.rss_kb < 0))
        n += (size_t)snprintf(why + n, len - n, "VmRSS grew by %ld kB after the warm-up (limit "
                              "%ld); ", f->rss_growth, s->o.rss_limit_kb);
    if (n >= 2 && n < len)
        why[n - 2] = '\0';
}

/* --show: a v-form's counts in elements (alltoallv: what rank a sends each rank, per a). */
static void show_counts(const struct soak *s, const struct call *k, int P)
{
    if (k->kind < K_ALLGATHERV)
        return;
    printf("; counts");
    for (int a = 0; a < P; a++) {
        if (k->kind != K_ALLTOALLV) {
            printf(" %d", vcount(s, k, a, -1));
            continue;
        }
        printf(" [");
        for (int b = 0; b < P; b++)
            printf(b ? " %d" : "%d", k->inplace ? vcount_sym(s, k, a, b) : vcount(s, k, a, b));
        printf("]");
    }
}

/* --show: the schedule from rank 0's point of view, and the number of each call on its
 * communicator (what rcoll's messages call "call #N" counts, if it counts every call). */
static void show(struct soak *s)
{
    long nth[NCOMMS] = { 0 };
    for (int id = 0; id < NCOMMS; id++)
        for (int kind = 0; kind < NKINDS; kind++)
            if (s->comms[id].comm != MPI_COMM_NULL && s->o.weight[kind] > 0 &&
                s->o.cweight[id] > 0)
                for (size_t m = 0; m <= s->o.max_bytes; m = m ? 2 * m : 1)
                    nth[id] += 2;
    for (long i = 0; i <= s->o.show_to && i < s->o.calls; i++) {
        if (s->o.churn > 0 && i > 0 && i % s->o.churn == 0)
            nth[C_DUP] = 0;
        struct call k = plan(s, i);
        const struct comm *c = &s->comms[k.comm];
        if (c->comm == MPI_COMM_NULL)
            continue;
        nth[k.comm]++;
        if (i < s->o.show_from)
            continue;
        k.root = (int)(k.root_rotates ? i % c->size : (long)(k.root_h % (unsigned)c->size));
        char text[MSG_LEN];
        describe(s, &k, text, sizeof text);
        printf("%s; call %ld on this communicator%s", text, nth[k.comm],
               k.check ? "; checked" : "");
        show_counts(s, &k, c->size);
        printf("\n");
    }
}

/* ---- main ---- */

static void setup(struct soak *s)
{
    size_t P = (size_t)s->wsize;
    if (s->o.max_bytes > BIG_TOTAL / P)
        s->o.max_bytes = BIG_TOTAL / P;
    size_t cap = P * (s->o.max_bytes + 4 * MAX_GAP + 4) + MAX_OFFSET + GUARD;
    s->sbase = malloc(cap);
    s->rbase = malloc(cap);
    s->scounts = malloc(4 * P * sizeof(int));
    s->pids = calloc(P, sizeof(int));
    if (s->sbase == NULL || s->rbase == NULL || s->scounts == NULL || s->pids == NULL) {
        fprintf(stderr, "rcoll-soak: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(s->sbase, 0, cap);
    memset(s->rbase, 0, cap);
    s->sdispls = s->scounts + P;
    s->rcounts = s->scounts + 2 * P;
    s->rdispls = s->scounts + 3 * P;
    /* Every rank's pid, without a collective the drop-in replaces. */
    int *mine = calloc(P, sizeof(int));
    if (mine == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);
    mine[s->wrank] = (int)getpid();
    PMPI_Allreduce(mine, s->pids, s->wsize, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    free(mine);
    make_comms(s);
}

int main(int argc, char **argv)
{
    static struct soak s;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &s.wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &s.wsize);
    parse(&s.o, argc, argv);
    g_rank = s.wrank;
    setup(&s);
    if (s.o.show_from >= 0) {
        if (s.wrank == 0)
            show(&s);
        free_comms(&s);
        MPI_Finalize();
        return 0;
    }
    if (s.o.timeout > 0) {
        g_timeout = s.o.timeout;
        signal(SIGALRM, on_alarm);
        alarm((unsigned)s.o.timeout);
    }
    struct res start = measure(&s);
    sweep(&s);
    struct res warm = measure(&s);
    double t0 = MPI_Wtime(), t_last = t0;
    for (long i = 0; i < s.o.calls; i++) {
        if (i == s.o.warmup && i > 0)
            warm = measure(&s);
        if (s.o.churn > 0 && i > 0 && i % s.o.churn == 0)
            churn(&s);
        if (s.o.progress > 0 && i > 0 && i % s.o.progress == 0 && s.wrank == 0)
            progress(&s, i, &t_last);
        run_call(&s, plan(&s, i));
    }
    int dummy = 0, sum = 0; /* everyone is done (PMPI_: not a collective the drop-in sees) */
    PMPI_Allreduce(&dummy, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    double secs = MPI_Wtime() - t0;
    alarm(0);
    struct res end = measure(&s);
    if (s.o.warmup >= s.o.calls)
        warm = end;
    struct folded f = { res_max(start), res_max(warm), res_max(end),
                        to_max(end.rss_kb - warm.rss_kb), to_max(end.fds - warm.fds) };
    char why[MSG_LEN];
    verdict(&s, &f, why, sizeof why);
    if (s.wrank == 0)
        report(&s, &f, secs, why);
    free_comms(&s);
    MPI_Finalize();
    return why[0] ? 1 : 0;
}
