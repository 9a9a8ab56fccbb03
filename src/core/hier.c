/* Sub-teams (hier.h): their layout maps, and their building over the team's own allgather.
 *
 * Building: every rank of the team creates its node team, then its group team, as any team is
 * created (rcoll_team_create's steps, its shared-memory segment and network endpoints), with an
 * out-of-band allgather that runs over the parent team. All node teams are created at once (each
 * rank is in exactly one), then all group teams; the bootstrap goes in rounds of the parent's
 * allgather: in each round every rank of the parent says whether it takes part and with how many
 * bytes, then the bytes go, and a member keeps the parts of its own sub-team's members. A rank
 * whose sub-team is done (or failed) keeps joining rounds, taking no part, until a round where
 * nobody does: sub-teams whose creation needs different numbers of exchanges are built side by
 * side. The outcome is agreed by one more allgather, so that composed algorithms run on every
 * rank or on none. */
#include "core/hier.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uint32_t active;
    uint32_t len;
} round_head_t;

typedef struct {
    struct rcoll_team *parent;
    const int *members; /* parent ranks, in sub-team rank order */
    int count;
    round_head_t *heads; /* per parent rank */
    unsigned char *data; /* per parent rank: the round's bytes (capacity: cap each) */
    size_t cap;
} bootstrap_t;

/* One round: heads of every parent rank, then (when anybody takes part) the bytes, `max` each. */
static int boot_round(bootstrap_t *b, bool active, const void *send, size_t len, size_t *max)
{
    struct rcoll_team *p = b->parent;
    round_head_t mine = {active ? 1u : 0u, (uint32_t)len};
    b->heads[p->rank] = mine;
    if (rcoll_allgather(p, RCOLL_IN_PLACE, b->heads, sizeof mine) != RCOLL_OK)
        return -1;
    *max = 0;
    for (int r = 0; r < p->size; r++)
        if (b->heads[r].active && b->heads[r].len > *max)
            *max = b->heads[r].len;
    if (*max == 0)
        return 0;
    if (*max > b->cap) {
        unsigned char *d = realloc(b->data, (size_t)p->size * *max);
        if (!d)
            return -1; /* cannot take part: the others' rounds fail by timeout */
        b->data = d;
        b->cap = *max;
    }
    if (active)
        memcpy(b->data + (size_t)p->rank * *max, send, len);
    return rcoll_allgather(p, RCOLL_IN_PLACE, b->data, *max) == RCOLL_OK ? 0 : -1;
}

/* The sub-team's out-of-band allgather (rcoll_oob_t), one round of the parent. */
static int boot_allgather(const void *sendbuf, void *recvbuf, size_t len, void *info)
{
    bootstrap_t *b = info;
    size_t max;
    if (boot_round(b, true, sendbuf, len, &max) != 0)
        return -1;
    for (int i = 0; i < b->count; i++) {
        int r = b->members[i];
        if (!b->heads[r].active || b->heads[r].len != len)
            return -1; /* a member failed or left: so does this creation */
        memcpy((unsigned char *)recvbuf + (size_t)i * len, b->data + (size_t)r * max, len);
    }
    return 0;
}

/* After its own sub-team: rounds taking no part until nobody takes part. */
static int boot_drain(bootstrap_t *b)
{
    for (;;) {
        size_t max;
        if (boot_round(b, false, NULL, 0, &max) != 0)
            return -1;
        bool any = false;
        for (int r = 0; r < b->parent->size; r++)
            any |= b->heads[r].active != 0;
        if (!any)
            return 0;
    }
}

/* Creates the sub-team of `members` (this rank among them) whose node of every member is
 * `node_of`, side by side with the other ranks' sub-teams of the same kind. */
static rcoll_status_t build_one(struct rcoll_team *t, bootstrap_t *b, const int *members, int count,
                                const int *node_of, struct rcoll_team **out)
{
    int me = -1;
    for (int i = 0; i < count; i++)
        if (members[i] == t->rank)
            me = i;
    b->members = members;
    b->count = count;
    rcoll_oob_t oob = {boot_allgather, b, me, count};
    int host = t->host_size > t->ctx->host_procs ? t->host_size : t->ctx->host_procs;
    rcoll_status_t st = rcoll_team_create_sub(t->ctx, &oob, node_of, host, members, out);
    if (st == RCOLL_OK)
        (*out)->parent_size = t->size;
    if (boot_drain(b) != 0 && st == RCOLL_OK)
        st = RCOLL_ERR_BOOTSTRAP;
    return st;
}

/* ---- layout maps ---- */

static rcoll_status_t make_maps(struct rcoll_team *t, rcoll_hier_t *h)
{
    int P = t->size, N = t->node_count;
    h->lidx_of = calloc((size_t)P, sizeof(int));
    h->node_major = calloc((size_t)P, sizeof(int));
    h->group_major = calloc((size_t)P, sizeof(int));
    h->rank_at = calloc((size_t)P, sizeof(int));
    h->counts = calloc(4 * (size_t)P, sizeof(size_t));
    h->node_size = calloc((size_t)N, sizeof(int));
    h->node_first = calloc((size_t)N, sizeof(int));
    h->node_off = calloc((size_t)N, sizeof(int));
    h->group_size = calloc((size_t)t->ppn_max, sizeof(int));
    h->group_off = calloc((size_t)t->ppn_max, sizeof(int));
    if (!h->lidx_of || !h->node_major || !h->group_major || !h->rank_at || !h->counts || !h->node_size || !h->node_first ||
        !h->node_off || !h->group_size || !h->group_off)
        return RCOLL_ERR_NOMEM;
    h->groups = t->ppn_max;
    for (int r = 0; r < P; r++) {
        int k = t->node_of[r];
        if (h->node_size[k] == 0)
            h->node_first[k] = r;
        h->lidx_of[r] = h->node_size[k]++;
        h->group_size[h->lidx_of[r]]++;
    }
    for (int k = 1; k < N; k++)
        h->node_off[k] = h->node_off[k - 1] + h->node_size[k - 1];
    for (int g = 1; g < h->groups; g++)
        h->group_off[g] = h->group_off[g - 1] + h->group_size[g - 1];
    int *seen = calloc((size_t)h->groups, sizeof(int));
    if (!seen)
        return RCOLL_ERR_NOMEM;
    h->blocked = true;
    for (int r = 0; r < P; r++) {
        int g = h->lidx_of[r];
        h->node_major[r] = h->node_off[t->node_of[r]] + g;
        h->group_major[r] = h->group_off[g] + seen[g]++;
        h->rank_at[h->node_major[r]] = r;
        h->blocked &= h->node_major[r] == r;
    }
    free(seen);
    return RCOLL_OK;
}

/* ---- building ---- */

static rcoll_status_t build(struct rcoll_team *t, rcoll_hier_t *h)
{
    int P = t->size;
    rcoll_status_t st = make_maps(t, h);
    int *members = calloc((size_t)P, sizeof(int));
    int *node_of = calloc((size_t)P, sizeof(int));
    bootstrap_t b = {t, NULL, 0, calloc((size_t)P, sizeof(round_head_t)), NULL, 0};
    if (!members || !node_of || !b.heads)
        st = RCOLL_ERR_NOMEM;
    if (st == RCOLL_OK) { /* the node team: all on one node */
        int n = 0;
        for (int r = 0; r < P; r++)
            if (t->node_of[r] == t->node_of[t->rank])
                members[n++] = r;
        st = build_one(t, &b, members, n, node_of, &h->node);
    }
    if (st == RCOLL_OK) { /* the group team: each on its own node */
        int n = 0, g = h->lidx_of[t->rank];
        for (int r = 0; r < P; r++)
            if (h->lidx_of[r] == g) {
                node_of[n] = n;
                members[n++] = r;
            }
        st = build_one(t, &b, members, n, node_of, &h->group);
    }
    /* Agreed: the worst status of any rank (a rank that failed early has drained alike). */
    int32_t *all = calloc((size_t)P, sizeof(int32_t));
    rcoll_status_t agreed = all ? RCOLL_OK : RCOLL_ERR_NOMEM;
    if (all) {
        all[t->rank] = (int32_t)st;
        if (rcoll_allgather(t, RCOLL_IN_PLACE, all, sizeof *all) != RCOLL_OK)
            agreed = RCOLL_ERR_BOOTSTRAP;
        for (int r = 0; r < P && agreed == RCOLL_OK; r++)
            agreed = (rcoll_status_t)all[r];
    }
    free(all);
    free(members);
    free(node_of);
    free(b.heads);
    free(b.data);
    return agreed;
}

rcoll_hier_t *rcoll_hier_get(struct rcoll_team *t)
{
    if (t->hier)
        return t->hier->status == RCOLL_OK ? t->hier : NULL;
    if (rcoll_hier_not_for(t))
        return NULL;
    rcoll_hier_t *h = calloc(1, sizeof *h);
    if (!h)
        return NULL; /* rare enough: the others' building then fails by timeout */
    t->building = true;
    h->status = build(t, h);
    t->building = false;
    t->hier = h;
    if (h->status != RCOLL_OK) {
        rcoll_team_error(t, h->status, "node-aware sub-teams could not be built (%s): the flat "
                         "algorithms run instead", rcoll_strerror(h->status));
        rcoll_log(t->ctx, RCOLL_LOG_WARN, "rank %d: %s", t->rank, t->last_error);
        return NULL;
    }
    rcoll_log(t->ctx, RCOLL_LOG_DEBUG, "rank %d: node team of %d, group %d of %d ranks", t->rank,
              h->node->size, h->lidx_of[t->rank], h->group->size);
    return h;
}

const char *rcoll_hier_not_for(const struct rcoll_team *t)
{
    if (t->sub)
        return "a sub-team of a node-aware call";
    if (t->building)
        return "its sub-teams are being built";
    if (t->node_count < 2)
        return "a team on one node";
    if (t->ppn_max < 2)
        return "one rank per node";
    if (t->hier && t->hier->status != RCOLL_OK)
        return "its sub-teams could not be built";
    return NULL;
}

void rcoll_hier_destroy(rcoll_hier_t *h)
{
    if (!h)
        return;
    rcoll_team_destroy(h->node);
    rcoll_team_destroy(h->group);
    free(h->lidx_of);
    free(h->node_major);
    free(h->group_major);
    free(h->rank_at);
    free(h->counts);
    free(h->node_size);
    free(h->node_first);
    free(h->node_off);
    free(h->group_size);
    free(h->group_off);
    free(h);
}

bool rcoll_hier_step(struct rcoll_team *t, struct rcoll_team *sub, rcoll_status_t st,
                     rcoll_status_t *first)
{
    if (st == RCOLL_OK)
        return true;
    if (*first == RCOLL_OK) {
        *first = st;
        rcoll_team_error(t, st, "%s (node-aware, on the %s team): %s", t->coll ? t->coll : "call",
                         sub == (t->hier ? t->hier->node : NULL) ? "node" : "group",
                         sub->last_error);
    }
    return st == RCOLL_ERR_TRUNCATE;
}
