/* matmul: distributed dense matrix multiplication C = A x B (N x N doubles), row-block
 * decomposition: rank r owns rows of A, B and C (N/P each, the first N%P ranks one more).
 * Every iteration a rank gathers all row blocks of B with MPI_Allgather (MPI_Allgatherv when P
 * does not divide N), N*N/P doubles from each rank (512 KB in all at N=256, 8 MB at N=1024),
 * into a freshly malloc'd receive buffer (the previous one freed: fresh buffers every
 * iteration), then multiplies its row block of A by B with an optimized BLAS (OpenBLAS's
 * cblas_dgemm, single-threaded) when the build found one, else a cache-blocked loop. The
 * application kernel of seed 000 (RDMA-based MPI_Allgather, section 5.3: 256x256 on 8 ranks).
 * B's entries change every iteration (as a solver's would); A and B are small integers, so
 * every product is exact: after every iteration the gathered B is compared with its formula
 * and C w with A (B w) for a fixed integer vector w (both outside the timed part).
 * Usage: matmul [-n N] [-i ITERS]; rank 0 prints one JSON line. */
#include "app_common.h"

#include <getopt.h>
#include <string.h>
#ifdef APP_HAVE_OPENBLAS
#include <cblas.h>
#define APP_BLAS "openblas"
#else
#define APP_BLAS "blocked-loop"
#endif

static const char usage[] = "matmul [-n N (default 256)] [-i ITERS (default: 1.2e10 / N^3, at "
                            "least 3)]";

struct layout {
    int n, p, rank;
    int *rows, *first;       /* rows and first row of each rank */
    int *counts, *displs;    /* the same in doubles, for MPI_Allgatherv */
    int even;                /* P divides N: MPI_Allgather */
};

static double a_entry(long i, long k) { return (double)((i + 2 * k) % 7 - 3); }
static double b_entry(long k, long j, long it) { return (double)((3 * k + j + it) % 5 - 2); }
static double w_entry(long j) { return (double)(j % 3 + 1); }

static struct layout make_layout(int n)
{
    struct layout l = { .n = n, .p = app_size(), .rank = app_rank() };
    l.rows = app_alloc(sizeof(int) * l.p);
    l.first = app_alloc(sizeof(int) * l.p);
    l.counts = app_alloc(sizeof(int) * l.p);
    l.displs = app_alloc(sizeof(int) * l.p);
    for (int r = 0, at = 0; r < l.p; r++) {
        l.rows[r] = n / l.p + (r < n % l.p);
        l.first[r] = at;
        l.counts[r] = l.rows[r] * n;
        l.displs[r] = at * n;
        at += l.rows[r];
    }
    l.even = n % l.p == 0;
    return l;
}

static void free_layout(struct layout *l)
{
    free(l->rows);
    free(l->first);
    free(l->counts);
    free(l->displs);
}

/* This rank's rows of A (once) or of B for iteration it. */
static void fill_a(const struct layout *l, double *a)
{
    for (long i = 0; i < l->rows[l->rank]; i++)
        for (long k = 0; k < l->n; k++)
            a[i * l->n + k] = a_entry(l->first[l->rank] + i, k);
}

static void fill_b(const struct layout *l, double *b, long it)
{
    for (long i = 0; i < l->rows[l->rank]; i++)
        for (long j = 0; j < l->n; j++)
            b[i * l->n + j] = b_entry(l->first[l->rank] + i, j, it);
}

/* The iteration's all-gather of B's row blocks into a fresh buffer (the old one freed). */
static double *gather_b(const struct layout *l, const double *mine, double *old)
{
    free(old);
    double *all = app_alloc(sizeof(double) * l->n * l->n);
    int me = l->counts[l->rank];
    if (l->even)
        APP_COLL(MPI_Allgather(mine, me, MPI_DOUBLE, all, me, MPI_DOUBLE, MPI_COMM_WORLD));
    else
        APP_COLL(MPI_Allgatherv(mine, me, MPI_DOUBLE, all, l->counts, l->displs, MPI_DOUBLE,
                                MPI_COMM_WORLD));
    return all;
}

#ifndef APP_HAVE_OPENBLAS
/* c (m x n) = a (m x n) b (n x n), blocked for the cache: i-k-j order inside 64x64x64 tiles. */
static void multiply_blocked(long m, long n, const double *a, const double *b, double *c)
{
    enum { T = 64 };
    memset(c, 0, sizeof(double) * m * n);
    for (long i0 = 0; i0 < m; i0 += T)
        for (long k0 = 0; k0 < n; k0 += T)
            for (long j0 = 0; j0 < n; j0 += T) {
                long i1 = i0 + T < m ? i0 + T : m, k1 = k0 + T < n ? k0 + T : n;
                long j1 = j0 + T < n ? j0 + T : n;
                for (long i = i0; i < i1; i++)
                    for (long k = k0; k < k1; k++) {
                        double aik = a[i * n + k];
                        const double *bk = b + k * n;
                        double *ci = c + i * n;
                        for (long j = j0; j < j1; j++)
                            ci[j] += aik * bk[j];
                    }
            }
}
#endif

static void multiply(long m, long n, const double *a, const double *b, double *c)
{
    if (m == 0)
        return;
#ifdef APP_HAVE_OPENBLAS
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)n, 1.0, a,
                (int)n, b, (int)n, 0.0, c, (int)n);
#else
    multiply_blocked(m, n, a, b, c);
#endif
}

/* The gathered B against its formula, and C w against A (B w): exact in integers. */
static int check(const struct layout *l, const double *a, const double *ball, const double *c,
                 long it)
{
    long n = l->n, m = l->rows[l->rank];
    for (long k = 0; k < n; k++)
        for (long j = 0; j < n; j++)
            if (ball[k * n + j] != b_entry(k, j, it)) {
                app_check_failed("matmul", "iteration %ld: gathered B[%ld][%ld] = %.17g, "
                                 "expected %g", it, k, j, ball[k * n + j], b_entry(k, j, it));
                return 0;
            }
    double *bw = app_alloc(sizeof(double) * n);
    for (long k = 0; k < n; k++) {
        bw[k] = 0;
        for (long j = 0; j < n; j++)
            bw[k] += b_entry(k, j, it) * w_entry(j);
    }
    int ok = 1;
    for (long i = 0; i < m && ok; i++) {
        double cw = 0, abw = 0;
        for (long j = 0; j < n; j++)
            cw += c[i * n + j] * w_entry(j);
        for (long k = 0; k < n; k++)
            abw += a[i * n + k] * bw[k];
        if (cw != abw) {
            app_check_failed("matmul", "iteration %ld: row %ld of C: C w = %.17g, A (B w) = %.17g",
                             it, l->first[l->rank] + i, cw, abw);
            ok = 0;
        }
    }
    free(bw);
    return ok;
}

static long default_iters(long n)
{
    long it = (long)(1.2e10 / ((double)n * n * n)); /* 715 at 256, 11 at 1024 */
    return it < 3 ? 3 : it;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
#ifdef APP_HAVE_OPENBLAS
    openblas_set_num_threads(1); /* one core per rank: ranks already fill the machine */
#endif
    long n = 256, iters = 0;
    int c;
    while ((c = getopt(argc, argv, "n:i:")) != -1) {
        if (c == 'n')
            n = app_parse_long(usage, "-n", optarg, 16384);
        else if (c == 'i')
            iters = app_parse_long(usage, "-i", optarg, 1000000);
        else
            app_usage_fail(usage, "unknown option");
    }
    if (optind < argc)
        app_usage_fail(usage, "unexpected argument '%s'", argv[optind]);
    if (!iters)
        iters = default_iters(n);

    struct layout l = make_layout((int)n);
    long m = l.rows[l.rank];
    double *a = app_alloc(sizeof(double) * m * n), *b = app_alloc(sizeof(double) * m * n);
    double *cm = app_alloc(sizeof(double) * m * n), *ball = NULL;
    fill_a(&l, a);
    int ok = 1;
    double total = 0;
    for (long it = -1; it < iters; it++) { /* it = -1: the warm-up, not timed */
        if (it == 0) {
            MPI_Barrier(MPI_COMM_WORLD);
            app_coll_s = 0;
        }
        double t0 = MPI_Wtime();
        fill_b(&l, b, it + 1);
        ball = gather_b(&l, b, ball);
        multiply(m, n, a, ball, cm);
        if (it >= 0)
            total += MPI_Wtime() - t0;
        if (ok)
            ok = check(&l, a, ball, cm, it + 1);
    }
    free(ball);
    ok = app_all_ok(ok);
    double coll = app_max(app_coll_s), tot = app_max(total);
    if (l.rank == 0)
        printf("{\"app\":\"matmul\",\"size\":\"N=%ld\",\"n\":%ld,\"np\":%d,\"iters\":%ld,"
               "\"total_s\":%.6f,\"coll_s\":%.6f,\"coll\":\"%s\",\"ok\":%s,\"blas\":\"%s\"}\n",
               n, n, l.p, iters, tot, coll, l.even ? "allgather" : "allgatherv",
               ok ? "true" : "false", APP_BLAS);
    if (!ok && l.rank == 0)
        fprintf(stderr, "matmul: FAILED: wrong product (see the CHECK FAILED lines)\n");
    free(a);
    free(b);
    free(cm);
    free_layout(&l);
    MPI_Finalize();
    return ok ? 0 : 1;
}
