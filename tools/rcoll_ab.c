/* rcoll-ab: two configurations of rcoll against each other in one process set, for settings
 * whose effect is smaller than this machine's run-to-run noise (5-20% between separate runs).
 * It forks --np ranks (the test launcher's bootstrap, no MPI), pins rank r to core r % cores
 * (--no-pin: leaves them where the scheduler puts them, as mpirun --bind-to none does),
 * and makes two contexts and teams in every rank: A with the environment variables of --a set,
 * B with those of --b (each context reads RCOLL_* when it is made). Per collective and size it
 * then times --blocks blocks of --iters back-to-back calls on team A, then on team B,
 * alternating, and prints the medians (the slowest rank's mean time per call in a block) and
 * their ratio A/B. Both teams run the same binary and code layout, and the two configurations
 * see the same disturbances in turn. The send data differs by rank and place; with --fresh it
 * also changes every call (three elements written), as in a program; otherwise the buffers
 * keep their contents. With --new-pages the receive buffer's pages are given back before every
 * call (untimed), so that each call writes into brand-new pages, as a program that mallocs its
 * large buffers afresh. Sizes up to 16 MB.
 *
 *   rcoll-ab --a "RCOLL_DEMOTE=2k" --b "RCOLL_DEMOTE=0" [--np 2] [--coll allreduce,allgather]
 *            [-m 8:8192] [--iters 10000] [--blocks 9] [--fresh]
 *
 * Collectives: barrier, allreduce (sum of doubles), allgather, alltoall, bcast and gather
 * (root alternating between 0 and 1), each also as i<coll> (post, wait) and <coll>_init (start,
 * wait; made once per size, one request per root). --same runs A against A (no --a or --b
 * needed): the spread of the method itself. --b-form blocking|i|init runs A's configuration on
 * both sides, B calling each collective in the form given: a form against another, e.g.
 * "--a '' --b-form init --coll allgather" is blocking allgather against its persistent form.
 * docs/benchmarking.md, "Two configurations in one process: rcoll-ab". */
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bootstrap/oob_fork.h"
#include "rcoll/rcoll.h"

#define MAX_BYTES (16 * 1024 * 1024)
#define MAX_BLOCKS 99

enum { BARRIER, ALLREDUCE, ALLGATHER, ALLTOALL, BCAST, GATHER, NCOLLS };
static const char *const names[NCOLLS] = {"barrier", "allreduce", "allgather", "alltoall", "bcast", "gather"};

/* How a call is made: blocking, post then wait (rcoll_i<coll>), start then wait (<coll>_init). */
enum { BLOCKING, NONBLOCKING, PERSISTENT, NFORMS };

typedef struct {
    int coll, form;
} kind_t;

#define MAX_KINDS 32

typedef struct {
    const char *a, *b;
    int np, nkinds, blocks, fresh, new_pages, same, b_form, no_pin;
    kind_t kinds[MAX_KINDS];
    size_t lo, hi;
    long iters;
} opts_t;

/* What one team needs for its calls of one size. */
typedef struct {
    rcoll_team_t *team;
    rcoll_request_t *persistent[2]; /* persistent forms, made at the size's first block (per root) */
} side_t;

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* "VAR=value VAR2=value2" into the environment (unset: the variables named are removed). */
static void set_vars(const char *spec, bool unset)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", spec ? spec : "");
    for (char *save = NULL, *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(tok, '=');
        if (eq) {
            *eq = '\0';
            if (unset)
                unsetenv(tok);
            else
                setenv(tok, eq + 1, 1);
        }
    }
}

/* The rooted collectives alternate their root between ranks 0 and 1. */
static bool rooted(int coll)
{
    return coll == BCAST || coll == GATHER;
}

static void *bcast_buf(double *send, double *recv, int root, int rank)
{
    return root == rank ? (void *)send : (void *)recv;
}

static rcoll_status_t blocking_call(int coll, rcoll_team_t *t, double *send, double *recv, size_t m, int root,
                                    int rank)
{
    switch (coll) {
    case BARRIER:
        return rcoll_barrier(t);
    case ALLREDUCE:
        return rcoll_allreduce(t, send, recv, m / 8 ? m / 8 : 1, RCOLL_DTYPE_DOUBLE, RCOLL_OP_SUM);
    case ALLGATHER:
        return rcoll_allgather(t, send, recv, m);
    case ALLTOALL:
        return rcoll_alltoall(t, send, recv, m);
    case BCAST:
        return rcoll_bcast(t, bcast_buf(send, recv, root, rank), m, root);
    default:
        return rcoll_gather(t, send, recv, m, root);
    }
}

/* Posts the nonblocking form (persistent: makes it) of a call. */
static rcoll_status_t post_call(int coll, bool init, rcoll_team_t *t, double *send, double *recv, size_t m,
                                int root, int rank, rcoll_request_t **q)
{
    size_t count = m / 8 ? m / 8 : 1;
    switch (coll) {
    case BARRIER:
        return init ? rcoll_barrier_init(t, q) : rcoll_ibarrier(t, q);
    case ALLREDUCE:
        return init ? rcoll_allreduce_init(t, send, recv, count, RCOLL_DTYPE_DOUBLE, RCOLL_OP_SUM, q)
                    : rcoll_iallreduce(t, send, recv, count, RCOLL_DTYPE_DOUBLE, RCOLL_OP_SUM, q);
    case ALLGATHER:
        return init ? rcoll_allgather_init(t, send, recv, m, q) : rcoll_iallgather(t, send, recv, m, q);
    case ALLTOALL:
        return init ? rcoll_alltoall_init(t, send, recv, m, q) : rcoll_ialltoall(t, send, recv, m, q);
    case BCAST:
        return init ? rcoll_bcast_init(t, bcast_buf(send, recv, root, rank), m, root, q)
                    : rcoll_ibcast(t, bcast_buf(send, recv, root, rank), m, root, q);
    default:
        return init ? rcoll_gather_init(t, send, recv, m, root, q) : rcoll_igather(t, send, recv, m, root, q);
    }
}

static rcoll_status_t one_call(kind_t k, side_t *s, double *send, double *recv, size_t m, long i, int rank)
{
    int root = rooted(k.coll) ? (int)(i & 1) : 0;
    rcoll_request_t *q = NULL;
    rcoll_status_t st;
    switch (k.form) {
    case BLOCKING:
        return blocking_call(k.coll, s->team, send, recv, m, root, rank);
    case NONBLOCKING:
        st = post_call(k.coll, false, s->team, send, recv, m, root, rank, &q);
        if (st == RCOLL_OK)
            st = rcoll_wait(q);
        rcoll_request_free(q);
        return st;
    default:
        q = s->persistent[root];
        st = rcoll_start(q);
        return st == RCOLL_OK ? rcoll_wait(q) : st;
    }
}

static double block(kind_t kind, side_t *s, double *send, double *recv, size_t m, const opts_t *o,
                    int rank)
{
    if (rcoll_barrier(s->team) != RCOLL_OK)
        return -1;
    size_t n = m / sizeof(double);
    double t0 = now_ns(), away = 0;
    for (long i = 0; i < o->iters; i++) {
        if (o->fresh && n) {
            send[0] = (double)i;
            send[n / 2] = (double)i;
            send[n - 1] = (double)i;
        }
        if (o->new_pages) { /* untimed: the receive buffer's pages given back, new ones next */
            double t1 = now_ns();
            uintptr_t lo = ((uintptr_t)recv + 4095) & ~(uintptr_t)4095;
            uintptr_t hi = ((uintptr_t)recv + (size_t)o->np * m) & ~(uintptr_t)4095;
            if (hi > lo)
                madvise((void *)lo, hi - lo, MADV_DONTNEED);
            away += now_ns() - t1;
        }
        if (one_call(kind, s, send, recv, m, i, rank) != RCOLL_OK)
            return -1;
    }
    double mine = (now_ns() - t0 - away) / (double)o->iters, slowest;
    if (rcoll_allreduce(s->team, &mine, &slowest, 1, RCOLL_DTYPE_DOUBLE, RCOLL_OP_MAX) != RCOLL_OK)
        return -1;
    return slowest;
}

static void free_persistent(side_t *s)
{
    for (int r = 0; r < 2; r++) {
        if (s->persistent[r])
            rcoll_request_free(s->persistent[r]);
        s->persistent[r] = NULL;
    }
}

/* Side w's kind: B runs --b-form's form of A's collective when it is given. */
static kind_t side_kind(kind_t k, int w, const opts_t *o)
{
    if (w && o->b_form >= 0)
        k.form = o->b_form;
    return k;
}

static int measure(kind_t kind, side_t side[2], double *send, double *recv, size_t m, const opts_t *o,
                   int rank)
{
    double t[2][MAX_BLOCKS];
    for (int w = 0; w < 2; w++) {
        kind_t k = side_kind(kind, w, o);
        free_persistent(&side[w]);
        for (int r = 0; k.form == PERSISTENT && r < (rooted(k.coll) ? 2 : 1); r++)
            if (post_call(k.coll, true, side[w].team, send, recv, m, r, rank, &side[w].persistent[r]) != RCOLL_OK)
                return 1;
    }
    for (int b = 0; b < o->blocks; b++)
        for (int w = 0; w < 2; w++)
            if ((t[w][b] = block(side_kind(kind, w, o), &side[w], send, recv, m, o, rank)) < 0)
                return 1;
    for (int w = 0; w < 2; w++)
        qsort(t[w], (size_t)o->blocks, sizeof(double), cmp_double);
    double a = t[0][o->blocks / 2], b = t[1][o->blocks / 2];
    char name[32];
    snprintf(name, sizeof name, "%s%s%s", kind.form == NONBLOCKING ? "i" : "", names[kind.coll],
             kind.form == PERSISTENT ? "_init" : "");
    if (rank == 0)
        printf("%-14s %7zu %10.1f %10.1f %7.3f\n", name, m, a, b, a / b);
    return 0;
}

static int rank_main(int rank, const rcoll_oob_t *oob, void *arg)
{
    const opts_t *o = arg;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(rank % (cores > 0 ? cores : 1), &set);
    if (!o->no_pin)
        sched_setaffinity(0, sizeof set, &set);
    rcoll_context_t *ctx[2] = {NULL, NULL};
    side_t side[2] = {{NULL, {NULL, NULL}}, {NULL, {NULL, NULL}}};
    for (int w = 0; w < 2; w++) {
        /* B's context must not see what A's alone set: a variable of --a missing from --b is
         * unset (the process's own environment before --a is not restored). */
        if (w)
            set_vars(o->a, true);
        set_vars(w && !o->same && o->b_form < 0 ? o->b : o->a, false);
        if (rcoll_context_create(&ctx[w]) != RCOLL_OK || rcoll_team_create(ctx[w], oob, &side[w].team) != RCOLL_OK) {
            fprintf(stderr, "rcoll-ab: rank %d: context or team %c could not be made\n", rank, 'A' + w);
            return 1;
        }
    }
    size_t cap = o->hi < 64 ? 64 : o->hi; /* bytes per rank's block, the largest size */
    double *send = calloc((size_t)o->np, cap), *recv = calloc((size_t)o->np, cap);
    int fail = !send || !recv;
    /* Data that differs by rank and place, as a program's: a copy that skips what a slot
     * already holds (transport/copy.h) skips only what a program's data would let it. */
    for (size_t i = 0; !fail && i < (size_t)o->np * cap / sizeof *send; i++)
        send[i] = (double)rank * 1e9 + (double)i;
    if (rank == 0 && !fail && o->b_form >= 0)
        printf("# A: %s\n# B: the same, each call in its %s form\n%-14s %7s %10s %10s %7s\n", o->a ? o->a : "",
               o->b_form == BLOCKING ? "blocking" : o->b_form == NONBLOCKING ? "nonblocking (post, wait)"
                                                                           : "persistent (start, wait)",
               "coll", "bytes", "A ns", "B ns", "A/B");
    else if (rank == 0 && !fail)
        printf("# A: %s\n# B: %s\n%-14s %7s %10s %10s %7s\n", o->a ? o->a : "", o->same ? "(A again)" : o->b ? o->b : "",
               "coll", "bytes", "A ns", "B ns", "A/B");
    for (int k = 0; k < o->nkinds && !fail; k++)
        for (size_t m = o->kinds[k].coll == BARRIER ? 0 : o->lo; !fail && m <= (o->kinds[k].coll == BARRIER ? 0 : o->hi);
             m = m ? m * 2 : 1)
            fail = measure(o->kinds[k], side, send, recv, m, o, rank);
    for (int w = 0; w < 2; w++) {
        free_persistent(&side[w]);
        rcoll_team_destroy(side[w].team);
        rcoll_context_destroy(ctx[w]);
    }
    free(send);
    free(recv);
    if (fail)
        fprintf(stderr, "rcoll-ab: rank %d: a call failed\n", rank);
    return fail;
}

static size_t parse_size(const char *s)
{
    char *end;
    size_t v = strtoull(s, &end, 10);
    if (*end == 'k' || *end == 'K')
        v *= 1024;
    else if (*end == 'm' || *end == 'M')
        v *= 1024 * 1024;
    return v;
}

static int usage(void)
{
    fprintf(stderr, "usage: rcoll-ab --a \"VAR=val ...\" --b \"VAR=val ...\" [--same] [--np N] "
                    "[--coll LIST] [--b-form blocking|i|init] [-m LO:HI] [--iters N] [--blocks K] [--fresh] [--new-pages] [--no-pin]\n");
    return 2;
}

int main(int argc, char **argv)
{
    opts_t o = {.np = 2, .blocks = 9, .iters = 10000, .lo = 8, .hi = 8192, .b_form = -1};
    const char *colls = "allreduce";
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--fresh"))
            o.fresh = 1;
        else if (!strcmp(argv[i], "--new-pages"))
            o.new_pages = 1;
        else if (!strcmp(argv[i], "--no-pin"))
            o.no_pin = 1;
        else if (!strcmp(argv[i], "--same"))
            o.same = 1;
        else if (!v)
            return usage();
        else if (!strcmp(argv[i], "--a"))
            o.a = v, i++;
        else if (!strcmp(argv[i], "--b"))
            o.b = v, i++;
        else if (!strcmp(argv[i], "--b-form")) {
            o.b_form = !strcmp(v, "blocking") ? BLOCKING : !strcmp(v, "i") ? NONBLOCKING : !strcmp(v, "init") ? PERSISTENT : -2;
            i++;
            if (o.b_form == -2)
                return usage();
        } else if (!strcmp(argv[i], "--np"))
            o.np = atoi(v), i++;
        else if (!strcmp(argv[i], "--coll"))
            colls = v, i++;
        else if (!strcmp(argv[i], "--iters"))
            o.iters = atol(v), i++;
        else if (!strcmp(argv[i], "--blocks"))
            o.blocks = atoi(v), i++;
        else if (!strcmp(argv[i], "-m")) {
            const char *colon = strchr(v, ':');
            o.lo = parse_size(v);
            o.hi = colon ? parse_size(colon + 1) : o.lo;
            i++;
        } else
            return usage();
    }
    if ((!o.a && !o.b && !o.same && o.b_form < 0) || o.np < 2 || o.np > 64 || o.blocks < 1 || o.blocks > MAX_BLOCKS ||
        o.iters < 1 || !o.lo || o.lo > o.hi || o.hi > MAX_BYTES)
        return usage();
    char list[256];
    snprintf(list, sizeof list, "%s", colls);
    for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        kind_t k = {0, BLOCKING};
        size_t n = strlen(tok);
        if (n > 5 && !strcmp(tok + n - 5, "_init"))
            k.form = PERSISTENT, tok[n - 5] = '\0';
        else if (tok[0] == 'i') /* no collective's own name starts with i */
            k.form = NONBLOCKING, tok++;
        while (k.coll < NCOLLS && strcmp(tok, names[k.coll]))
            k.coll++;
        if (k.coll == NCOLLS || o.nkinds == MAX_KINDS) {
            fprintf(stderr, "rcoll-ab: unknown collective %s\n", tok);
            return 2;
        }
        o.kinds[o.nkinds++] = k;
    }
    return rcoll_fork_run(o.np, rank_main, &o, 0) ? 1 : 0;
}
