/* rcoll-ab: two configurations of rcoll against each other in one process set, for settings
 * whose effect is smaller than this machine's run-to-run noise (5-20% between separate runs).
 * It forks --np ranks (the test launcher's bootstrap, no MPI), pins rank r to core r % cores,
 * and makes two contexts and teams in every rank: A with the environment variables of --a set,
 * B with those of --b (each context reads RCOLL_* when it is made). Per collective and size it
 * then times --blocks blocks of --iters back-to-back calls on team A, then on team B,
 * alternating, and prints the medians (the slowest rank's mean time per call in a block) and
 * their ratio A/B. Both teams run the same binary and code layout, and the two configurations
 * see the same disturbances in turn. With --fresh the send data changes every call (three
 * elements written), as in a program; otherwise the buffers keep their contents.
 *
 *   rcoll-ab --a "RCOLL_DEMOTE=2k" --b "RCOLL_DEMOTE=0" [--np 2] [--coll allreduce,allgather]
 *            [-m 8:8192] [--iters 10000] [--blocks 9] [--fresh]
 *
 * Collectives: barrier, allreduce (sum of doubles), allgather, alltoall, bcast and gather
 * (root alternating between 0 and 1), iallgather (post, wait), allgather_init (start, wait).
 * --same runs A against A (no --a or --b needed): the spread of the method itself.
 * docs/benchmarking.md, "Two configurations in one process: rcoll-ab". */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bootstrap/oob_fork.h"
#include "rcoll/rcoll.h"

#define MAX_BYTES (64 * 1024)
#define MAX_BLOCKS 99

enum { BARRIER, ALLREDUCE, ALLGATHER, ALLTOALL, BCAST, GATHER, IALLGATHER, PALLGATHER, NKINDS };
static const char *const names[NKINDS] = {"barrier", "allreduce", "allgather", "alltoall",
                                          "bcast", "gather", "iallgather", "allgather_init"};

typedef struct {
    const char *a, *b;
    int np, kinds[NKINDS], nkinds, blocks, fresh, same;
    size_t lo, hi;
    long iters;
} opts_t;

/* What one team needs for its calls of one size. */
typedef struct {
    rcoll_team_t *team;
    rcoll_request_t *persistent; /* allgather_init, made at the size's first block */
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

/* "VAR=value VAR2=value2" into the environment. */
static void set_vars(const char *spec)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", spec ? spec : "");
    for (char *save = NULL, *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(tok, '=');
        if (eq) {
            *eq = '\0';
            setenv(tok, eq + 1, 1);
        }
    }
}

static rcoll_status_t one_call(int kind, side_t *s, double *send, double *recv, size_t m, long i,
                               int rank)
{
    rcoll_team_t *t = s->team;
    rcoll_request_t *q = NULL;
    rcoll_status_t st;
    switch (kind) {
    case BARRIER:
        return rcoll_barrier(t);
    case ALLREDUCE:
        return rcoll_allreduce(t, send, recv, m / 8 ? m / 8 : 1, RCOLL_DTYPE_DOUBLE, RCOLL_OP_SUM);
    case ALLGATHER:
        return rcoll_allgather(t, send, recv, m);
    case ALLTOALL:
        return rcoll_alltoall(t, send, recv, m);
    case BCAST:
        return rcoll_bcast(t, (i & 1) == rank ? (void *)send : (void *)recv, m, (int)(i & 1));
    case GATHER:
        return rcoll_gather(t, send, recv, m, (int)(i & 1));
    case IALLGATHER:
        st = rcoll_iallgather(t, send, recv, m, &q);
        if (st == RCOLL_OK)
            st = rcoll_wait(q);
        rcoll_request_free(q);
        return st;
    default: /* PALLGATHER */
        st = rcoll_start(s->persistent);
        return st == RCOLL_OK ? rcoll_wait(s->persistent) : st;
    }
}

/* One block: iters calls; returns the slowest rank's mean ns per call (< 0: an error). */
static double block(int kind, side_t *s, double *send, double *recv, size_t m, const opts_t *o,
                    int rank)
{
    if (rcoll_barrier(s->team) != RCOLL_OK)
        return -1;
    size_t n = m / sizeof(double);
    double t0 = now_ns();
    for (long i = 0; i < o->iters; i++) {
        if (o->fresh && n) {
            send[0] = (double)i;
            send[n / 2] = (double)i;
            send[n - 1] = (double)i;
        }
        if (one_call(kind, s, send, recv, m, i, rank) != RCOLL_OK)
            return -1;
    }
    double mine = (now_ns() - t0) / (double)o->iters, slowest;
    if (rcoll_allreduce(s->team, &mine, &slowest, 1, RCOLL_DTYPE_DOUBLE, RCOLL_OP_MAX) != RCOLL_OK)
        return -1;
    return slowest;
}

static int measure(int kind, side_t side[2], double *send, double *recv, size_t m, const opts_t *o,
                   int rank)
{
    double t[2][MAX_BLOCKS];
    for (int w = 0; w < 2 && kind == PALLGATHER; w++) {
        if (side[w].persistent)
            rcoll_request_free(side[w].persistent);
        if (rcoll_allgather_init(side[w].team, send, recv, m, &side[w].persistent) != RCOLL_OK)
            return 1;
    }
    for (int k = 0; k < o->blocks; k++)
        for (int w = 0; w < 2; w++)
            if ((t[w][k] = block(kind, &side[w], send, recv, m, o, rank)) < 0)
                return 1;
    for (int w = 0; w < 2; w++)
        qsort(t[w], (size_t)o->blocks, sizeof(double), cmp_double);
    double a = t[0][o->blocks / 2], b = t[1][o->blocks / 2];
    if (rank == 0)
        printf("%-14s %7zu %10.1f %10.1f %7.3f\n", names[kind], m, a, b, a / b);
    return 0;
}

static int rank_main(int rank, const rcoll_oob_t *oob, void *arg)
{
    const opts_t *o = arg;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(rank % (cores > 0 ? cores : 1), &set);
    sched_setaffinity(0, sizeof set, &set);
    rcoll_context_t *ctx[2] = {NULL, NULL};
    side_t side[2] = {{NULL, NULL}, {NULL, NULL}};
    for (int w = 0; w < 2; w++) {
        set_vars(w && !o->same ? o->b : o->a);
        if (rcoll_context_create(&ctx[w]) != RCOLL_OK || rcoll_team_create(ctx[w], oob, &side[w].team) != RCOLL_OK) {
            fprintf(stderr, "rcoll-ab: rank %d: context or team %c could not be made\n", rank, 'A' + w);
            return 1;
        }
    }
    double *send = calloc((size_t)o->np, MAX_BYTES), *recv = calloc((size_t)o->np, MAX_BYTES);
    int fail = !send || !recv;
    if (rank == 0 && !fail)
        printf("# A: %s\n# B: %s\n%-14s %7s %10s %10s %7s\n", o->a ? o->a : "", o->same ? "(A again)" : o->b ? o->b : "",
               "coll", "bytes", "A ns", "B ns", "A/B");
    for (int k = 0; k < o->nkinds && !fail; k++)
        for (size_t m = o->kinds[k] == BARRIER ? 0 : o->lo; !fail && m <= (o->kinds[k] == BARRIER ? 0 : o->hi);
             m = m ? m * 2 : 1)
            fail = measure(o->kinds[k], side, send, recv, m, o, rank);
    for (int w = 0; w < 2; w++) {
        if (side[w].persistent)
            rcoll_request_free(side[w].persistent);
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
    return v;
}

static int usage(void)
{
    fprintf(stderr, "usage: rcoll-ab --a \"VAR=val ...\" --b \"VAR=val ...\" [--same] [--np N] "
                    "[--coll LIST] [-m LO:HI] [--iters N] [--blocks K] [--fresh]\n");
    return 2;
}

int main(int argc, char **argv)
{
    opts_t o = {.np = 2, .blocks = 9, .iters = 10000, .lo = 8, .hi = 8192};
    const char *colls = "allreduce";
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--fresh"))
            o.fresh = 1;
        else if (!strcmp(argv[i], "--same"))
            o.same = 1;
        else if (!v)
            return usage();
        else if (!strcmp(argv[i], "--a"))
            o.a = v, i++;
        else if (!strcmp(argv[i], "--b"))
            o.b = v, i++;
        else if (!strcmp(argv[i], "--np"))
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
    if ((!o.a && !o.b && !o.same) || o.np < 2 || o.np > 64 || o.blocks < 1 || o.blocks > MAX_BLOCKS ||
        o.iters < 1 || !o.lo || o.lo > o.hi || o.hi > MAX_BYTES)
        return usage();
    char list[256];
    snprintf(list, sizeof list, "%s", colls);
    for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int k = 0;
        while (k < NKINDS && strcmp(tok, names[k]))
            k++;
        if (k == NKINDS || o.nkinds == NKINDS) {
            fprintf(stderr, "rcoll-ab: unknown collective %s\n", tok);
            return 2;
        }
        o.kinds[o.nkinds++] = k;
    }
    return rcoll_fork_run(o.np, rank_main, &o, 0) ? 1 : 0;
}
