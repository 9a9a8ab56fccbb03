/* Calibration of the cost model (docs/tuning.md, "Cost model"; coll/cost.h): measured on the
 * team's own sub-teams, so each channel is timed alone, with allgather direct (one step in
 * which every rank writes its block to every other and waits for all of theirs: no rank runs
 * ahead of another, so the mean time per call is the step's):
 *   S, S64  node teams, 8 B and 64 KB per rank: L-1 messages per rank over shared memory:
 *           shm.alpha + (L-2) shm.gap (+ bytes);
 *   A, A64  the leaders (group 0), 8 B and 64 KB: N-1 network messages per node:
 *           net.alpha + (N-2) net.gap (+ bytes);
 *   B       the whole team, 8 B: L (P-L) network messages per node: net.alpha + (L (P-L) - 1)
 *           net.gap;
 *   C       a local memcpy of 1 MB.
 * A gap is fitted where two measurements differ in their count of messages (net: B against A;
 * shm: never, L-1 is its only count), else it is taken as half the step's latency. Times are
 * means per call over back-to-back calls, the slowest rank's.
 * These first estimates then start a fit: every algorithm of barrier, allgather and alltoall
 * that the model may choose across nodes is timed on the whole team at 8 B, 1 KB and 16 KB,
 * and the seven parameters (all but the memcpy's) are set where the model's predictions of
 * these calls come closest to the measured times (least squares of the logarithms, Nelder-Mead
 * over the logarithms of the parameters: they stay positive; a weak pull towards the first
 * estimates keeps what the samples cannot tell apart where it was). The fit prices what the model
 * cannot see one by one (context switches of ranks sharing cores, a call's own overhead). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <math.h>

#include "coll/colls.h"
#include "core/hier.h"
#include "core/team.h"
#include "select/model.h"

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* Mean time per allgather (direct) of `bytes` on `sub` (NULL: this rank does not measure);
 * every rank of `t` takes part in the closing barrier. */
static rcoll_status_t time_calls(struct rcoll_team *t, struct rcoll_team *sub, size_t bytes,
                                 unsigned char *buf, double *us)
{
    rcoll_status_t st = RCOLL_OK;
    *us = 0;
    if (sub) {
        int iters = bytes > 4096 ? 50 : 300;
        const struct rcoll_algo *before = sub->forced[RCOLL_COLL_ALLGATHER];
        st = rcoll_team_force_algorithm(sub, RCOLL_COLL_ALLGATHER, "direct");
        for (int i = 0; i < 20 && st == RCOLL_OK; i++)
            st = rcoll_allgather(sub, RCOLL_IN_PLACE, buf, bytes);
        double t0 = now_us();
        for (int i = 0; i < iters && st == RCOLL_OK; i++)
            st = rcoll_allgather(sub, RCOLL_IN_PLACE, buf, bytes);
        *us = (now_us() - t0) / iters;
        sub->forced[RCOLL_COLL_ALLGATHER] = before;
    }
    rcoll_status_t b = rcoll_barrier(t);
    return st != RCOLL_OK ? st : b;
}

/* The largest of every rank's values (0 where a rank did not measure). */
static rcoll_status_t slowest(struct rcoll_team *t, double *v, int n)
{
    double *all = calloc((size_t)t->size * (size_t)n, sizeof *all);
    if (!all)
        return RCOLL_ERR_NOMEM;
    memcpy(all + (size_t)t->rank * (size_t)n, v, (size_t)n * sizeof *v);
    rcoll_status_t st = rcoll_allgather(t, RCOLL_IN_PLACE, all, (size_t)n * sizeof *v);
    for (int i = 0; i < n; i++) {
        v[i] = 0;
        for (int r = 0; r < t->size; r++)
            if (all[(size_t)r * (size_t)n + (size_t)i] > v[i])
                v[i] = all[(size_t)r * (size_t)n + (size_t)i];
    }
    free(all);
    return st;
}

static double copy_us_per_kb(void)
{
    size_t n = 1 << 20;
    unsigned char *a = malloc(n), *b = malloc(n);
    if (!a || !b) {
        free(a);
        free(b);
        return 0.08;
    }
    memset(a, 1, n);
    memset(b, 2, n);
    double best = 1e30;
    for (int i = 0; i < 20; i++) {
        double t0 = now_us();
        memcpy(b, a, n);
        double t = now_us() - t0;
        if (t < best && b[i] == 1)
            best = t;
    }
    free(a);
    free(b);
    return best / 1024.0;
}

/* The model from the measurements (see the top of this file). */
static void fit(const struct rcoll_team *t, const double *v, rcoll_model_t *m)
{
    enum { S, S64, A, A64, B, C };
    double L = t->ppn_max, N = t->node_count, P = t->size;
    m->shm.alpha = v[S] / (1 + 0.5 * (L - 2));
    m->shm.gap = m->shm.alpha / 2;
    m->shm.per_kb = L > 1 && v[S64] > v[S] ? (v[S64] - v[S]) / ((L - 1) * 64) : 0;
    double extra = (L * (P - L) - 1) - (N - 2);
    double g = extra > 0 ? (v[B] - v[A]) / extra : -1;
    if (g <= 0) /* not fitted (or not measurable here): half the latency */
        g = v[A] / (2 + (N - 2));
    m->net.gap = g;
    m->net.alpha = v[A] - (N - 2) * g > 0 ? v[A] - (N - 2) * g : v[A];
    m->net.per_kb = v[A64] > v[A] ? (v[A64] - v[A]) / ((N - 1) * 64) : 0;
    m->copy_per_kb = v[C];
}

/* ---- the fit ---- */

#define FIT_MAX 64
#define FIT_PARAMS 7

typedef struct {
    const struct rcoll_algo *algo;
    size_t bytes;
    double us;
} sample_t;

typedef struct {
    const struct rcoll_team *t;
    double x0[FIT_PARAMS]; /* the first estimates: a weak pull towards them keeps a parameter
                            * the samples cannot tell (shm.gap with 2 ranks a node) in reach */
    rcoll_config_t cfg; /* its model is the point being tried */
    sample_t s[FIT_MAX];
    int n;
} fit_t;

static double *param(rcoll_model_t *m, int i)
{
    double *p[FIT_PARAMS] = {&m->shm.alpha, &m->shm.gap, &m->shm.per_kb, &m->net.alpha,
                             &m->net.gap, &m->net.per_kb, &m->call};
    return p[i];
}

/* Squared error of the logarithms at the point x (logarithms of the parameters). */
static double fit_error(fit_t *f, const double *x)
{
    for (int i = 0; i < FIT_PARAMS; i++)
        *param(&f->cfg.model, i) = exp(x[i]);
    double e = 0;
    for (int i = 0; i < FIT_PARAMS; i++)
        e += 0.01 * (x[i] - f->x0[i]) * (x[i] - f->x0[i]);
    for (int k = 0; k < f->n; k++) {
        double p = rcoll_model_predict(&f->cfg, f->s[k].algo, f->s[k].bytes, f->t->size,
                                       f->t->ppn_max, f->t->select_cores, rcoll_team_node_share(f->t));
        double d = log(p > 0.01 ? p : 0.01) - log(f->s[k].us);
        e += d * d;
    }
    return e;
}

/* Nelder-Mead from x (in place): a few hundred evaluations of a cheap function. */
static void nelder_mead(fit_t *f, double *x)
{
    enum { D = FIT_PARAMS };
    double pt[D + 1][D], val[D + 1];
    for (int i = 0; i <= D; i++) {
        for (int j = 0; j < D; j++)
            pt[i][j] = x[j] + (i == j + 1 ? 0.7 : 0);
        val[i] = fit_error(f, pt[i]);
    }
    for (int iter = 0; iter < 2000; iter++) {
        int hi = 0, lo = 0;
        for (int i = 1; i <= D; i++) {
            if (val[i] > val[hi])
                hi = i;
            if (val[i] < val[lo])
                lo = i;
        }
        if (val[hi] - val[lo] < 1e-9)
            break;
        double c[D] = {0}, r[D], e[D];
        for (int i = 0; i <= D; i++)
            for (int j = 0; j < D && i != hi; j++)
                c[j] += pt[i][j] / D;
        for (int j = 0; j < D; j++)
            r[j] = c[j] + (c[j] - pt[hi][j]);
        double vr = fit_error(f, r);
        if (vr < val[lo]) {
            for (int j = 0; j < D; j++)
                e[j] = c[j] + 2 * (c[j] - pt[hi][j]);
            double ve = fit_error(f, e);
            memcpy(pt[hi], ve < vr ? e : r, sizeof r);
            val[hi] = ve < vr ? ve : vr;
            continue;
        }
        int second = lo;
        for (int i = 0; i <= D; i++)
            if (i != hi && val[i] > val[second])
                second = i;
        if (vr < val[second]) {
            memcpy(pt[hi], r, sizeof r);
            val[hi] = vr;
            continue;
        }
        for (int j = 0; j < D; j++)
            r[j] = c[j] + 0.5 * (pt[hi][j] - c[j]);
        vr = fit_error(f, r);
        if (vr < val[hi]) {
            memcpy(pt[hi], r, sizeof r);
            val[hi] = vr;
            continue;
        }
        for (int i = 0; i <= D; i++) /* shrink towards the best */
            if (i != lo) {
                for (int j = 0; j < D; j++)
                    pt[i][j] = pt[lo][j] + 0.5 * (pt[i][j] - pt[lo][j]);
                val[i] = fit_error(f, pt[i]);
            }
    }
    int best = 0;
    for (int i = 1; i <= D; i++)
        if (val[i] < val[best])
            best = i;
    memcpy(x, pt[best], sizeof pt[best]);
}

/* Times every candidate of barrier, allgather and alltoall (those with a formula across nodes)
 * on the whole team; the slowest rank's mean per call. */
static rcoll_status_t sample_team(struct rcoll_team *t, fit_t *f, unsigned char *buf)
{
    static const rcoll_coll_t colls[] = {RCOLL_COLL_BARRIER, RCOLL_COLL_ALLGATHER, RCOLL_COLL_ALLTOALL};
    static const size_t sizes[] = {8, 1024, 16384};
    double us[FIT_MAX];
    f->n = 0;
    rcoll_status_t st = RCOLL_OK;
    for (size_t c = 0; c < 3 && st == RCOLL_OK; c++) {
        const rcoll_coll_info_t *ci = rcoll_coll_info(colls[c]);
        const struct rcoll_algo *before = t->forced[colls[c]];
        for (int a = 0; ci->algos[a] && st == RCOLL_OK; a++) {
            const struct rcoll_algo *al = ci->algos[a];
            if (al->by_name ||
                rcoll_model_predict(&t->ctx->cfg, al, 8, t->size, t->ppn_max, t->select_cores, 1) < 0)
                continue; /* on trial, no formula, or never across nodes */
            for (size_t k = 0; k < (c ? 3u : 1u) && f->n < FIT_MAX && st == RCOLL_OK; k++) {
                t->forced[colls[c]] = al;
                size_t m = sizes[k];
                int iters = 60;
                double t0 = 0;
                for (int i = 0; i < iters + 10 && st == RCOLL_OK; i++) {
                    if (i == 10)
                        t0 = now_us();
                    st = colls[c] == RCOLL_COLL_BARRIER ? rcoll_barrier(t)
                         : colls[c] == RCOLL_COLL_ALLGATHER
                             ? rcoll_allgather(t, RCOLL_IN_PLACE, buf, m)
                             : rcoll_alltoall(t, buf, buf + (size_t)t->size * m, m);
                }
                us[f->n] = (now_us() - t0) / iters;
                f->s[f->n].algo = al;
                f->s[f->n].bytes = colls[c] == RCOLL_COLL_BARRIER ? 0 : m;
                f->n++;
            }
        }
        t->forced[colls[c]] = before;
    }
    if (st == RCOLL_OK)
        st = slowest(t, us, f->n);
    for (int k = 0; k < f->n; k++)
        f->s[k].us = us[k] > 0.1 ? us[k] : 0.1;
    return st;
}

rcoll_status_t rcoll_team_calibrate(rcoll_team_t *t, char *text, size_t len)
{
    if (!t || !text || !len)
        return RCOLL_ERR_INVALID;
    const char *why = rcoll_hier_not_for(t);
    if (why)
        return rcoll_team_error(t, RCOLL_ERR_UNSUPPORTED, "calibrate: needs a team spanning nodes "
                                "with several ranks on a node (this one is %s)", why);
    rcoll_hier_t *h = rcoll_hier_get(t);
    if (!h)
        return RCOLL_ERR_UNSUPPORTED; /* the team's error says why (on every rank) */
    size_t big = 64 * 1024;
    unsigned char *buf = calloc((size_t)t->size + 1, big);
    if (!buf)
        return rcoll_team_error(t, RCOLL_ERR_NOMEM, "calibrate: out of memory");
    bool leader = h->lidx_of[t->rank] == 0;
    double v[6] = {0};
    rcoll_status_t st = time_calls(t, h->node, 8, buf, &v[0]);
    if (st == RCOLL_OK)
        st = time_calls(t, h->node, big, buf, &v[1]);
    if (st == RCOLL_OK)
        st = time_calls(t, leader ? h->group : NULL, 8, buf, &v[2]);
    if (st == RCOLL_OK)
        st = time_calls(t, leader ? h->group : NULL, big, buf, &v[3]);
    if (st == RCOLL_OK)
        st = time_calls(t, t, 8, buf, &v[4]);
    fit_t *f = calloc(1, sizeof *f);
    if (!f)
        st = rcoll_team_error(t, RCOLL_ERR_NOMEM, "calibrate: out of memory");
    if (st == RCOLL_OK)
        st = sample_team(t, f, buf);
    free(buf);
    v[5] = t->rank == 0 ? copy_us_per_kb() : 0;
    if (st == RCOLL_OK)
        st = slowest(t, v, 6);
    if (st != RCOLL_OK) {
        free(f);
        return st;
    }
    rcoll_model_t m;
    fit(t, v, &m);
    m.call = 1.0;
    /* The fit, from the first estimates (the same on every rank: the same numbers). */
    f->t = t;
    f->cfg = t->ctx->cfg;
    f->cfg.model = m;
    double x[FIT_PARAMS];
    for (int i = 0; i < FIT_PARAMS; i++)
        f->x0[i] = x[i] = log(*param(&m, i) > 0.01 ? *param(&m, i) : 0.01);
    double before = fit_error(f, x);
    nelder_mead(f, x);
    double after = fit_error(f, x);
    for (int i = 0; i < FIT_PARAMS; i++)
        *param(&m, i) = exp(x[i]);
    int samples = f->n;
    free(f);
    const char *names[RCOLL_MODEL_KEYS];
    double *values[RCOLL_MODEL_KEYS];
    rcoll_model_keys(&m, names, values);
    size_t n = (size_t)snprintf(text, len,
                                "# rcoll cost model (RCOLL_MODEL=this file), microseconds: "
                                "rcoll_team_calibrate on %d ranks, %d nodes, at most %d per node\n"
                                "# measured (allgather direct per call): node teams %.2f (64 KB: "
                                "%.2f), leaders %.2f (64 KB: %.2f), whole team %.2f; memcpy %.4f "
                                "per KB\n"
                                "# fitted to %d timed calls of barrier, allgather and alltoall "
                                "algorithms: rms log error %.3f before, %.3f after\n",
                                t->size, t->node_count, t->ppn_max, v[0], v[1], v[2], v[3], v[4], v[5],
                                samples, sqrt(before / samples), sqrt(after / samples));
    for (int i = 0; i < RCOLL_MODEL_KEYS && n < len; i++)
        n += (size_t)snprintf(text + n, len - n, "%s %.4f\n", names[i], *values[i]);
    return n < len ? RCOLL_OK : rcoll_team_error(t, RCOLL_ERR_INVALID, "calibrate: text buffer too small");
}
