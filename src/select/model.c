/* The cost model's selection: see model.h and coll/cost.h. A composed algorithm's sub-team
 * calls are priced with the algorithm the selection would run on that sub-team (its default
 * rules: a sub-team has one rank per node or one node, where the model does not decide), so
 * the prediction follows what would run. */
#include "select/model.h"

#include <stdio.h>
#include <string.h>

#include "coll/colls.h"
#include "select/select.h"

typedef struct {
    rcoll_cost_in_t in;
    int cores;
} shape_t;

static double sub_cost(const rcoll_cost_in_t *in, int coll, size_t bytes, int P, int N, int L, int share);

static shape_t make_shape(const rcoll_config_t *cfg, const rcoll_model_t *m, size_t bytes, int P,
                          int ppn, int cores, int share)
{
    shape_t s;
    s.in.cfg = cfg;
    s.in.m = m;
    s.in.bytes = bytes;
    s.in.P = P;
    s.in.L = ppn < P ? ppn : P;
    s.in.N = (P + s.in.L - 1) / s.in.L;
    s.in.H = share < 1 ? 1 : share > s.in.N ? s.in.N : share;
    s.in.sub = sub_cost;
    s.cores = cores;
    return s;
}

/* The cheapest formula of `coll` for the shape (where the selection's own pick has none). */
static double cheapest(const rcoll_cost_in_t *in, rcoll_coll_t coll)
{
    const rcoll_coll_info_t *c = rcoll_coll_info(coll);
    double best = -1;
    for (int i = 0; c->algos[i]; i++) {
        const rcoll_algo_t *a = c->algos[i];
        if (!a->cost || a->composed || a->by_name)
            continue;
        double t = a->cost(in);
        if (t >= 0 && (best < 0 || t < best))
            best = t;
    }
    return best < 0 ? 0 : best;
}

static double sub_cost(const rcoll_cost_in_t *in, int coll, size_t bytes, int P, int N, int L, int share)
{
    rcoll_model_t m = *in->m;
    /* `share` such calls at once on every node: in each network step the node's link carries
     * the others' messages too (a step of k messages is share k of them on the link: share - 1
     * more gaps for the others' first messages, share gaps for each further one, share times
     * the bytes). */
    m.net.alpha += (share - 1) * m.net.gap;
    m.net.gap *= share;
    m.net.per_kb *= share;
    rcoll_cost_in_t sub = *in;
    sub.m = &m;
    sub.bytes = bytes;
    sub.P = P;
    sub.N = N;
    sub.L = L;
    sub.H = in->H < N ? in->H : N;
    if (P <= 1)
        return 0; /* a call every rank skips */
    double call = in->m->call;
    const rcoll_algo_t *a = rcoll_select_default(in->cfg, (rcoll_coll_t)coll, bytes, P, L, in->cfg->cores,
                                                 sub.H, NULL, 0);
    double t = a && a->cost && !a->composed ? a->cost(&sub) : RCOLL_COST_NONE;
    return call + (t >= 0 ? t : cheapest(&sub, (rcoll_coll_t)coll));
}

/* A call's predicted time: its algorithm's steps and, for a flat one, one call (a composed one
 * makes calls on its sub-teams, priced in its formula). */
static double predict(const rcoll_algo_t *a, const rcoll_cost_in_t *in)
{
    double t = a->cost ? a->cost(in) : RCOLL_COST_NONE;
    return t >= 0 && !a->composed ? t + in->m->call : t;
}

bool rcoll_model_decides(rcoll_coll_t coll, int size, int ppn)
{
    if (ppn < 2 || ppn >= size)
        return false;
    const rcoll_coll_info_t *c = rcoll_coll_info(coll);
    for (int i = 0; c && c->algos[i]; i++)
        if (c->algos[i]->composed && c->algos[i]->cost && !c->algos[i]->by_name)
            return true; /* (a composed one without a formula, as the v-forms': the rules) */
    return false;
}

double rcoll_model_predict(const rcoll_config_t *cfg, const rcoll_algo_t *a, size_t bytes,
                           int size, int ppn, int cores, int share)
{
    if (!a->cost)
        return -1;
    shape_t s = make_shape(cfg, &cfg->model, bytes, size, ppn, cores, share);
    return predict(a, &s.in);
}

const rcoll_algo_t *rcoll_model_pick(const rcoll_config_t *cfg, rcoll_coll_t coll, size_t bytes,
                                     int size, int ppn, int cores, int share, char *why, size_t why_len)
{
    const rcoll_coll_info_t *c = rcoll_coll_info(coll);
    shape_t s = make_shape(cfg, &cfg->model, bytes, size, ppn, cores, share);
    double t[32];
    int best = -1, n = 0;
    for (int i = 0; c->algos[i] && i < 32; i++, n++) {
        t[i] = predict(c->algos[i], &s.in);
        /* (one on trial is priced, shown below, never picked: coll.h by_name) */
        if (t[i] >= 0 && !c->algos[i]->by_name && (best < 0 || t[i] < t[best]))
            best = i;
    }
    if (best < 0)
        return NULL;
    if (why) {
        size_t used = (size_t)snprintf(why, why_len, "cost model (%s; %d ranks, %d nodes, %d per "
                                       "node, %d per host): predicted %s %.1f us (the least)",
                                       cfg->model_path[0] ? cfg->model_path : "shipped defaults",
                                       s.in.P, s.in.N, s.in.L, s.in.H, c->algos[best]->name, t[best]);
        for (int i = 0; i < n && used < why_len; i++) {
            const char *name = c->algos[i]->name;
            if (i == best)
                continue;
            if (t[i] >= 0)
                used += (size_t)snprintf(why + used, why_len - used, ", %s %.1f%s", name, t[i],
                                         c->algos[i]->by_name ? " (by name only)" : "");
            else
                used += (size_t)snprintf(why + used, why_len - used, ", %s (%s)", name,
                                         c->algos[i]->cost ? "never across nodes" : "no formula");
        }
    }
    return c->algos[best];
}
