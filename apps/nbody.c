/* nbody: gravitational N-body steps, the N-BODY application of seed 001 (PAP-aware
 * MPI_Allgather, section 6.5.3: "mostly 64B" allgathers). Every rank owns B bodies (default 2);
 * each step it allgathers the positions and masses of all bodies with MPI_Allgather, B x
 * (x, y, z, mass) doubles = 32 B per body from each rank (64 B at B=2), computes the softened
 * gravitational acceleration of its own bodies from all bodies (in global body order) and
 * integrates them (kick-drift leapfrog). Check: every rank then runs the same steps serially
 * over all bodies, with the same force routine summing in the same order, and its own bodies
 * must come out bitwise equal; total momentum must also be conserved (to 1e-9 relative).
 * Usage: nbody [-b BODIES_PER_RANK] [-s STEPS]; rank 0 prints one JSON line. */
#include "app_common.h"

#include <getopt.h>
#include <math.h>
#include <string.h>

static const char usage[] = "nbody [-b BODIES_PER_RANK (default 2)] [-s STEPS (default 60000)]";

enum { X, Y, Z, M, BODY = 4 }; /* a body's gathered record: position and mass */

#define DT 1e-3
#define SOFT2 1e-2 /* softening length squared */

struct body_state {
    long n;        /* bodies */
    double *pm;    /* n x BODY: position, mass */
    double *vel;   /* n x 3 */
};

static struct body_state alloc_state(long n)
{
    struct body_state s = { .n = n };
    s.pm = app_alloc(sizeof(double) * BODY * n);
    s.vel = app_alloc(sizeof(double) * 3 * n);
    return s;
}

static void free_state(struct body_state *s)
{
    free(s->pm);
    free(s->vel);
}

/* Body g of the global set (first g0 .. g0 + s->n - 1 into s): a deterministic cloud. */
static void init_bodies(struct body_state *s, long g0)
{
    for (long i = 0; i < s->n; i++) {
        uint64_t g = (uint64_t)(g0 + i);
        for (int d = 0; d < 3; d++) {
            s->pm[i * BODY + d] = app_uniform(1, 3 * g + d);
            s->vel[i * 3 + d] = 0.1 * app_uniform(2, 3 * g + d);
        }
        s->pm[i * BODY + M] = 1.0 + 0.5 * app_uniform(3, g);
    }
}

/* Acceleration on a body at pos from all n bodies of all (skipping index self), in order. */
static void accel(const double *pos, long self, const double *all, long n, double acc[3])
{
    acc[0] = acc[1] = acc[2] = 0;
    for (long j = 0; j < n; j++) {
        if (j == self)
            continue;
        const double *b = all + j * BODY;
        double dx = b[X] - pos[X], dy = b[Y] - pos[Y], dz = b[Z] - pos[Z];
        double r2 = dx * dx + dy * dy + dz * dz + SOFT2;
        double f = b[M] / (r2 * sqrt(r2));
        acc[0] += f * dx;
        acc[1] += f * dy;
        acc[2] += f * dz;
    }
}

/* One step for bodies g0.. of s, given the positions of all n bodies (s's own among them). */
static void step(struct body_state *s, long g0, const double *all, long n)
{
    for (long i = 0; i < s->n; i++) {
        double acc[3];
        accel(s->pm + i * BODY, g0 + i, all, n, acc);
        for (int d = 0; d < 3; d++) {
            s->vel[i * 3 + d] += DT * acc[d];
            s->pm[i * BODY + d] += DT * s->vel[i * 3 + d];
        }
    }
}

/* The distributed run: steps (and one warm-up step first, untimed) of this rank's bodies. */
static double run_parallel(struct body_state *mine, long b, long steps, double *all)
{
    long g0 = (long)app_rank() * b, n = b * app_size();
    double total = 0;
    for (long it = -1; it < steps; it++) {
        if (it == 0) {
            MPI_Barrier(MPI_COMM_WORLD);
            app_coll_s = 0;
        }
        double t0 = MPI_Wtime();
        APP_COLL(MPI_Allgather(mine->pm, (int)(BODY * b), MPI_DOUBLE, all, (int)(BODY * b),
                               MPI_DOUBLE, MPI_COMM_WORLD));
        step(mine, g0, all, n);
        if (it >= 0)
            total += MPI_Wtime() - t0;
    }
    return total;
}

/* The same steps + 1 over all bodies on this rank alone: the reference. */
static void run_serial(struct body_state *s, long steps, double *snapshot)
{
    for (long it = -1; it < steps; it++) {
        memcpy(snapshot, s->pm, sizeof(double) * BODY * s->n);
        step(s, 0, snapshot, s->n);
    }
}

static void momentum(const struct body_state *s, double p[3])
{
    p[0] = p[1] = p[2] = 0;
    for (long i = 0; i < s->n; i++)
        for (int d = 0; d < 3; d++)
            p[d] += s->pm[i * BODY + M] * s->vel[i * 3 + d];
}

static int check(const struct body_state *mine, long b, long steps)
{
    long n = b * app_size(), g0 = (long)app_rank() * b;
    struct body_state ref = alloc_state(n);
    double *snapshot = app_alloc(sizeof(double) * BODY * n), p0[3], p1[3];
    init_bodies(&ref, 0);
    momentum(&ref, p0);
    run_serial(&ref, steps, snapshot);
    momentum(&ref, p1);
    int ok = 1;
    for (long i = 0; i < b && ok; i++)
        for (int d = 0; d < BODY; d++)
            if (mine->pm[i * BODY + d] != ref.pm[(g0 + i) * BODY + d] ||
                (d < 3 && mine->vel[i * 3 + d] != ref.vel[(g0 + i) * 3 + d])) {
                app_check_failed("nbody", "body %ld, component %d: %.17g, serial run %.17g",
                                 g0 + i, d, mine->pm[i * BODY + d], ref.pm[(g0 + i) * BODY + d]);
                ok = 0;
                break;
            }
    for (int d = 0; d < 3 && ok; d++)
        if (fabs(p1[d] - p0[d]) > 1e-9 * (1 + fabs(p0[d]))) {
            app_check_failed("nbody", "momentum %d drifted from %.17g to %.17g", d, p0[d], p1[d]);
            ok = 0;
        }
    free(snapshot);
    free_state(&ref);
    return ok;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    long b = 2, steps = 60000;
    int c;
    while ((c = getopt(argc, argv, "b:s:")) != -1) {
        if (c == 'b')
            b = app_parse_long(usage, "-b", optarg, 1 << 20);
        else if (c == 's')
            steps = app_parse_long(usage, "-s", optarg, 100000000);
        else
            app_usage_fail(usage, "unknown option");
    }
    if (optind < argc)
        app_usage_fail(usage, "unexpected argument '%s'", argv[optind]);
    int p = app_size();
    if ((double)b * p * BODY > 1e8)
        app_usage_fail(usage, "-b %ld: too many bodies for %d ranks", b, p);

    struct body_state mine = alloc_state(b);
    init_bodies(&mine, (long)app_rank() * b);
    double *all = app_alloc(sizeof(double) * BODY * b * p);
    double total = run_parallel(&mine, b, steps, all);
    int ok = app_all_ok(check(&mine, b, steps));
    double coll = app_max(app_coll_s), tot = app_max(total);
    if (app_rank() == 0) {
        printf("{\"app\":\"nbody\",\"size\":\"%ld bodies/rank\",\"bodies_per_rank\":%ld,"
               "\"bytes_per_rank\":%ld,\"np\":%d,\"iters\":%ld,\"total_s\":%.6f,\"coll_s\":%.6f,"
               "\"coll\":\"allgather\",\"ok\":%s}\n",
               b, b, (long)(sizeof(double) * BODY * b), p, steps, tot, coll,
               ok ? "true" : "false");
        if (!ok)
            fprintf(stderr, "nbody: FAILED: the distributed run differs from the serial one\n");
    }
    free(all);
    free_state(&mine);
    MPI_Finalize();
    return ok ? 0 : 1;
}
