/* The public blocking collective calls and the preparation of every call (core/call.h):
 * argument checks, the local part every algorithm shares (a rank's own block copied to where it
 * belongs, in-place alltoall(v) turned into a copy of the send data), calls every rank knows to
 * be empty skipped, then the team's run (algorithm choice, transport enter/leave). What an
 * algorithm may assume is written in coll/coll.h. */
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "coll/colls.h"
#include "coll/op.h"
#include "core/call.h"
#include "core/request.h"
#include "core/team.h"

static rcoll_status_t bad(struct rcoll_team *t, const char *coll, const char *what)
{
    return rcoll_team_error(t, RCOLL_ERR_INVALID, "%s: %s", coll, what);
}

/* What the collective table checks for every collective (coll/colls.h): the root, and for the
 * forms without v this rank's buffers. */
static rcoll_status_t check(struct rcoll_team *t, rcoll_coll_t coll, int root, const void *sendbuf,
                            const void *recvbuf, size_t bytes)
{
    const rcoll_coll_info_t *c = rcoll_coll_info(coll);
    const char *why = rcoll_coll_check(c, t->rank, t->size, root, sendbuf, recvbuf, bytes);
    return why ? bad(t, c->name, why) : RCOLL_OK;
}

static void copy_block(void *to, const void *from, size_t bytes)
{
    if (bytes && to != from)
        memmove(to, from, bytes);
}

/* The rank's own block to where it belongs, noted for a request's later starts. */
static void own_block(rcoll_call_copy_t *cp, void *to, const void *from, size_t bytes)
{
    if (cp) {
        cp->own_to = to;
        cp->own_from = from;
        cp->own_len = bytes;
    }
    copy_block(to, from, bytes);
}

void rcoll_call_restart(const rcoll_call_copy_t *cp)
{
    copy_block(cp->own_to, cp->own_from, cp->own_len);
}

/* Largest displacement + count: the bytes a v-form's layout spans. */
static bool all_zero(const size_t *counts, int size)
{
    for (int r = 0; r < size; r++)
        if (counts[r])
            return false;
    return true;
}

static size_t extent_of(const size_t *counts, const size_t *displs, int size)
{
    size_t end = 0;
    for (int r = 0; r < size; r++)
        if (counts[r] && displs[r] + counts[r] > end)
            end = displs[r] + counts[r];
    return end;
}

static rcoll_status_t verdict(rcoll_call_verdict_t *v, rcoll_call_verdict_t what)
{
    *v = what;
    return RCOLL_OK;
}

/* The in-place copy's buffer: the team's scratch slot (blocking) or the request's own. */
static void *inplace_copy(struct rcoll_team *t, rcoll_call_copy_t *cp, size_t bytes)
{
    if (!cp || cp->scratch)
        return rcoll_team_tmp(t, RCOLL_TMP_INPLACE, bytes);
    if (bytes > cp->bytes) {
        void *p = realloc(cp->buf, bytes);
        if (!p)
            return NULL;
        cp->buf = p;
        cp->bytes = bytes;
    }
    return cp->buf;
}

static rcoll_status_t prep_barrier(struct rcoll_team *t, const rcoll_call_t *c, rcoll_args_t *a,
                                   rcoll_call_copy_t *cp, rcoll_call_verdict_t *v)
{
    (void)c;
    (void)a;
    (void)cp;
    if (t->size == 1)
        return verdict(v, RCOLL_CALL_SKIP);
    return verdict(v, RCOLL_CALL_RUN);
}

static rcoll_status_t prep_allgather(struct rcoll_team *t, const rcoll_call_t *c, rcoll_args_t *a,
                                     rcoll_call_copy_t *cp, rcoll_call_verdict_t *v)
{
    const void *sendbuf = c->sendbuf;
    void *recvbuf = c->recvbuf;
    size_t bytes = c->bytes;
    rcoll_status_t st = check(t, RCOLL_COLL_ALLGATHER, 0, sendbuf, recvbuf, bytes);
    if (st != RCOLL_OK)
        return st;
    if (bytes && sendbuf != RCOLL_IN_PLACE)
        own_block(cp, (char *)recvbuf + (size_t)t->rank * bytes, sendbuf, bytes);
    if (t->size == 1 || bytes == 0) /* nothing to move: every rank knows it, no exchange */
        return verdict(v, RCOLL_CALL_SKIP);
    a->sendbuf = sendbuf;
    a->recvbuf = recvbuf;
    a->bytes = bytes;
    return verdict(v, RCOLL_CALL_RUN);
}

static rcoll_status_t prep_alltoall(struct rcoll_team *t, const rcoll_call_t *c, rcoll_args_t *a,
                                    rcoll_call_copy_t *cp, rcoll_call_verdict_t *v)
{
    const void *sendbuf = c->sendbuf;
    void *recvbuf = c->recvbuf;
    size_t bytes = c->bytes;
    rcoll_status_t st = check(t, RCOLL_COLL_ALLTOALL, 0, sendbuf, recvbuf, bytes);
    if (st != RCOLL_OK)
        return st;
    size_t total = (size_t)t->size * bytes;
    if (bytes && sendbuf == RCOLL_IN_PLACE && t->size > 1) {
        void *copy = inplace_copy(t, cp, total);
        if (!copy)
            return rcoll_team_error(t, RCOLL_ERR_NOMEM, "alltoall: no memory for the in-place copy");
        memcpy(copy, recvbuf, total);
        sendbuf = copy;
    }
    if (bytes && sendbuf != RCOLL_IN_PLACE)
        own_block(cp, (char *)recvbuf + (size_t)t->rank * bytes,
                   (const char *)sendbuf + (size_t)t->rank * bytes, bytes);
    if (t->size == 1 || bytes == 0)
        return verdict(v, RCOLL_CALL_SKIP);
    a->sendbuf = sendbuf;
    a->recvbuf = recvbuf;
    a->bytes = bytes;
    return verdict(v, RCOLL_CALL_RUN);
}

static rcoll_status_t prep_bcast(struct rcoll_team *t, const rcoll_call_t *c, rcoll_args_t *a,
                                 rcoll_call_copy_t *cp, rcoll_call_verdict_t *v)
{
    (void)cp;
    void *buf = c->recvbuf;
    size_t bytes = c->bytes;
    int root = c->root;
    rcoll_status_t st = check(t, RCOLL_COLL_BCAST, root, buf, buf, bytes);
    if (st != RCOLL_OK)
        return st;
    if (t->size == 1 || bytes == 0)
        return verdict(v, RCOLL_CALL_SKIP);
    a->root = root;
    a->sendbuf = buf;
    a->recvbuf = buf;
    a->bytes = bytes;
    return verdict(v, RCOLL_CALL_RUN);
}

static rcoll_status_t prep_gather(struct rcoll_team *t, const rcoll_call_t *c, rcoll_args_t *a,
                                  rcoll_call_copy_t *cp, rcoll_call_verdict_t *v)
{
    const void *sendbuf = c->sendbuf;
    void *recvbuf = c->recvbuf;
    size_t bytes = c->bytes;
    int root = c->root;
    rcoll_status_t st = check(t, RCOLL_COLL_GATHER, root, sendbuf, recvbuf, bytes);
    if (st != RCOLL_OK)
        return st;
    int am_root = t->rank == root;
    if (am_root && bytes) {
        char *mine = (char *)recvbuf + (size_t)root * bytes;
        if (sendbuf != RCOLL_IN_PLACE)
            own_block(cp, mine, sendbuf, bytes);
        sendbuf = mine;
    }
    if (t->size == 1 || bytes == 0)
        return verdict(v, RCOLL_CALL_SKIP);
    a->root = root;
    a->sendbuf = sendbuf;
    a->recvbuf = am_root ? recvbuf : NULL;
    a->bytes = bytes;
    return verdict(v, RCOLL_CALL_RUN);
}

static rcoll_status_t prep_scatter(struct rcoll_team *t, const rcoll_call_t *c, rcoll_args_t *a,
                                   rcoll_call_copy_t *cp, rcoll_call_verdict_t *v)
{
    const void *sendbuf = c->sendbuf;
    void *recvbuf = c->recvbuf;
    size_t bytes = c->bytes;
    int root = c->root;
    rcoll_status_t st = check(t, RCOLL_COLL_SCATTER, root, sendbuf, recvbuf, bytes);
    if (st != RCOLL_OK)
        return st;
    int am_root = t->rank == root;
    if (am_root && bytes) {
        const char *mine = (const char *)sendbuf + (size_t)root * bytes;
        if (recvbuf != RCOLL_IN_PLACE)
            own_block(cp, recvbuf, mine, bytes);
        recvbuf = (void *)(uintptr_t)mine; /* never written: the root receives nothing */
    }
    if (t->size == 1 || bytes == 0)
        return verdict(v, RCOLL_CALL_SKIP);
    a->root = root;
    a->sendbuf = am_root ? sendbuf : NULL;
    a->recvbuf = recvbuf;
    a->bytes = bytes;
    return verdict(v, RCOLL_CALL_RUN);
}

static rcoll_status_t prep_allgatherv(struct rcoll_team *t, const rcoll_call_t *c, rcoll_args_t *a,
                                      rcoll_call_copy_t *cp, rcoll_call_verdict_t *v)
{
    const void *sendbuf = c->sendbuf;
    size_t sendbytes = c->bytes;
    void *recvbuf = c->recvbuf;
    const size_t *counts = c->rcounts, *displs = c->rdispls;
    if (!counts || !displs || !sendbuf)
        return bad(t, "allgatherv", "NULL counts, displacements or send buffer");
    size_t mine = counts[t->rank];
    if (sendbuf != RCOLL_IN_PLACE && sendbytes != mine)
        return bad(t, "allgatherv", "sendbytes differs from counts[rank]");
    if (extent_of(counts, displs, t->size) && !recvbuf)
        return bad(t, "allgatherv", "NULL receive buffer");
    if (sendbuf != RCOLL_IN_PLACE)
        own_block(cp, (char *)recvbuf + displs[t->rank], sendbuf, mine);
    if (t->size == 1 || all_zero(counts, t->size)) /* every rank holds the same counts */
        return verdict(v, RCOLL_CALL_SKIP);
    a->sendbuf = sendbuf;
    a->recvbuf = recvbuf;
    a->bytes = mine;
    a->rcounts = counts;
    a->rdispls = displs;
    return verdict(v, RCOLL_CALL_RUN);
}

static rcoll_status_t prep_alltoallv(struct rcoll_team *t, const rcoll_call_t *c, rcoll_args_t *a,
                                     rcoll_call_copy_t *cp, rcoll_call_verdict_t *v)
{
    const void *sendbuf = c->sendbuf;
    const size_t *sendcounts = c->scounts, *sdispls = c->sdispls;
    void *recvbuf = c->recvbuf;
    const size_t *recvcounts = c->rcounts, *rdispls = c->rdispls;
    if (!sendbuf || !recvcounts || !rdispls)
        return bad(t, "alltoallv", "NULL send buffer, receive counts or displacements");
    size_t rextent = extent_of(recvcounts, rdispls, t->size);
    if (rextent && !recvbuf)
        return bad(t, "alltoallv", "NULL receive buffer");
    if (sendbuf == RCOLL_IN_PLACE) {
        sendcounts = recvcounts;
        sdispls = rdispls;
        if (t->size > 1 && rextent) {
            void *copy = inplace_copy(t, cp, rextent);
            if (!copy)
                return rcoll_team_error(t, RCOLL_ERR_NOMEM, "alltoallv: no memory for the in-place copy");
            memcpy(copy, recvbuf, rextent);
            sendbuf = copy;
        }
    } else if (!sendcounts || !sdispls) {
        return bad(t, "alltoallv", "NULL send counts or displacements");
    }
    if (sendcounts[t->rank] != recvcounts[t->rank])
        return bad(t, "alltoallv", "this rank sends itself a different count than it receives");
    if (sendbuf != RCOLL_IN_PLACE)
        own_block(cp, (char *)recvbuf + rdispls[t->rank], (const char *)sendbuf + sdispls[t->rank],
                   recvcounts[t->rank]);
    if (t->size == 1)
        return verdict(v, RCOLL_CALL_SKIP);
    if (all_zero(sendcounts, t->size) && all_zero(recvcounts, t->size))
        return verdict(v, RCOLL_CALL_PASS);
    a->sendbuf = sendbuf;
    a->recvbuf = recvbuf;
    a->scounts = sendcounts;
    a->sdispls = sdispls;
    a->rcounts = recvcounts;
    a->rdispls = rdispls;
    return verdict(v, RCOLL_CALL_RUN);
}

static rcoll_status_t prep_gatherv(struct rcoll_team *t, const rcoll_call_t *c, rcoll_args_t *a,
                                   rcoll_call_copy_t *cp, rcoll_call_verdict_t *v)
{
    const void *sendbuf = c->sendbuf;
    size_t sendbytes = c->bytes;
    void *recvbuf = c->recvbuf;
    const size_t *counts = c->rcounts, *displs = c->rdispls;
    int root = c->root;
    rcoll_status_t st = check(t, RCOLL_COLL_GATHERV, root, NULL, NULL, 0);
    if (st != RCOLL_OK)
        return st;
    int am_root = t->rank == root;
    if (am_root && (!counts || !displs))
        return bad(t, "gatherv", "NULL counts or displacements at the root");
    if (!sendbuf || (!am_root && sendbuf == RCOLL_IN_PLACE))
        return bad(t, "gatherv", "NULL send buffer (or in place on a rank that is not the root)");
    if (am_root && !recvbuf && extent_of(counts, displs, t->size))
        return bad(t, "gatherv", "NULL receive buffer at the root");
    if (am_root) {
        char *mine = (char *)recvbuf + displs[root];
        if (sendbuf != RCOLL_IN_PLACE) {
            if (sendbytes != counts[root])
                return bad(t, "gatherv", "the root's sendbytes differs from counts[root]");
            own_block(cp, mine, sendbuf, sendbytes);
        }
        sendbuf = mine;
        sendbytes = counts[root];
    }
    if (t->size == 1)
        return verdict(v, RCOLL_CALL_SKIP);
    a->idle = am_root ? all_zero(counts, t->size) : sendbytes == 0;
    a->root = root;
    a->sendbuf = sendbuf;
    a->recvbuf = am_root ? recvbuf : NULL;
    a->bytes = sendbytes;
    a->rcounts = am_root ? counts : NULL;
    a->rdispls = am_root ? displs : NULL;
    return verdict(v, RCOLL_CALL_RUN);
}

static rcoll_status_t prep_scatterv(struct rcoll_team *t, const rcoll_call_t *c, rcoll_args_t *a,
                                    rcoll_call_copy_t *cp, rcoll_call_verdict_t *v)
{
    const void *sendbuf = c->sendbuf;
    const size_t *counts = c->scounts, *displs = c->sdispls;
    void *recvbuf = c->recvbuf;
    size_t recvbytes = c->bytes;
    int root = c->root;
    rcoll_status_t st = check(t, RCOLL_COLL_SCATTERV, root, NULL, NULL, 0);
    if (st != RCOLL_OK)
        return st;
    int am_root = t->rank == root;
    if (am_root && (!counts || !displs))
        return bad(t, "scatterv", "NULL counts or displacements at the root");
    if (am_root && !sendbuf && extent_of(counts, displs, t->size))
        return bad(t, "scatterv", "NULL send buffer at the root");
    if ((recvbytes && !recvbuf) || (!am_root && recvbuf == RCOLL_IN_PLACE))
        return bad(t, "scatterv", "NULL receive buffer (or in place on a rank that is not the root)");
    if (am_root) {
        const char *mine = (const char *)sendbuf + displs[root];
        if (recvbuf != RCOLL_IN_PLACE) {
            if (recvbytes != counts[root])
                return bad(t, "scatterv", "the root's recvbytes differs from counts[root]");
            own_block(cp, recvbuf, mine, recvbytes);
        }
        recvbuf = (void *)(uintptr_t)mine; /* never written: the root receives nothing */
        recvbytes = counts[root];
    }
    if (t->size == 1)
        return verdict(v, RCOLL_CALL_SKIP);
    a->idle = am_root ? all_zero(counts, t->size) : recvbytes == 0;
    a->root = root;
    a->sendbuf = am_root ? sendbuf : NULL;
    a->recvbuf = recvbuf;
    a->bytes = recvbytes;
    a->scounts = am_root ? counts : NULL;
    a->sdispls = am_root ? displs : NULL;
    return verdict(v, RCOLL_CALL_RUN);
}

/* ---- reductions ---- */

/* The checks of a reduction: element type and operation, counts, root, buffers. *count is this
 * rank's elements of the result, *total the bytes of input every rank holds. */
static rcoll_status_t check_reduction(struct rcoll_team *t, const rcoll_call_t *c, size_t es, size_t *count,
                                      size_t *total)
{
    const rcoll_coll_info_t *ci = rcoll_coll_info(c->coll);
    const char *why = rcoll_op_check(c->op, c->dtype);
    if (why)
        return bad(t, ci->name, why);
    size_t P = (size_t)t->size, b;
    *count = c->bytes;
    *total = 0;
    if (c->coll == RCOLL_COLL_REDUCE_SCATTER) {
        if (!c->rcounts)
            return bad(t, ci->name, "NULL counts");
        for (int r = 0; r < t->size; r++) {
            if (__builtin_mul_overflow(c->rcounts[r], es * P, &b) ||
                __builtin_add_overflow(*total, c->rcounts[r] * es, total))
                return bad(t, ci->name, "counts too large");
        }
        *count = c->rcounts[t->rank];
    } else {
        /* (no division on the latency path: the products are checked for overflow) */
        if (__builtin_mul_overflow(*count, es * P, &b))
            return bad(t, ci->name, "count too large");
        *total = *count * es * (ci->send.blocks == RCOLL_BLOCKS_EACH ? P : 1);
    }
    /* exscan's rank 0 receives nothing: its receive buffer may be NULL (unless in place). */
    const void *recv = c->recvbuf;
    if (c->coll == RCOLL_COLL_EXSCAN && t->rank == 0 && !recv && c->sendbuf != RCOLL_IN_PLACE)
        recv = c->sendbuf;
    rcoll_status_t st = check(t, c->coll, c->root, c->sendbuf, recv, *total);
    if (st != RCOLL_OK)
        return st;
    if (ci->vform && *total && (!c->sendbuf || (*count && !c->recvbuf)))
        return bad(t, ci->name, "NULL buffer");
    return RCOLL_OK;
}

rcoll_status_t rcoll_call_check(struct rcoll_team *t, const rcoll_call_t *c)
{
    size_t count, total;
    return check_reduction(t, c, rcoll_dtype_size(c->dtype), &count, &total);
}

/* The local part of every reduction after its checks: the own vector (the receive buffer where
 * in place); the counts of reduce_scatter in bytes. A team of one copies its input to its
 * result; an empty call is skipped (every rank knows). */
static rcoll_status_t prep_reduction(struct rcoll_team *t, const rcoll_call_t *c, rcoll_args_t *a,
                                     rcoll_call_copy_t *cp, rcoll_call_verdict_t *v)
{
    (void)cp;
    const rcoll_coll_info_t *ci = rcoll_coll_info(c->coll);
    size_t count, total, es = rcoll_dtype_size(c->dtype);
    rcoll_status_t st = check_reduction(t, c, es, &count, &total);
    if (st != RCOLL_OK)
        return st;
    if (c->coll == RCOLL_COLL_REDUCE_SCATTER) {
        size_t *bc = rcoll_team_tmp(t, RCOLL_TMP_COUNTS, 2 * (size_t)t->size * sizeof(size_t));
        if (!bc)
            return rcoll_team_error(t, RCOLL_ERR_NOMEM, "%s: no memory for the counts", ci->name);
        size_t off = 0;
        for (int r = 0; r < t->size; r++) {
            bc[r] = c->rcounts[r] * es;
            bc[t->size + r] = off;
            off += bc[r];
        }
        a->rcounts = bc;
        a->rdispls = bc + t->size;
    }
    size_t bytes = count * es;
    bool am_root = !ci->rooted || t->rank == c->root;
    a->root = c->root;
    a->sendbuf = c->sendbuf == RCOLL_IN_PLACE ? c->recvbuf : c->sendbuf;
    a->recvbuf = am_root ? c->recvbuf : NULL;
    a->bytes = bytes;
    a->count = count;
    a->dtype = c->dtype;
    a->op = c->op;
    if (t->size == 1 || total == 0) {
        /* Nothing to combine: a team of one's result is its input (exscan's rank 0: none). */
        if (c->coll != RCOLL_COLL_EXSCAN && bytes && c->sendbuf != RCOLL_IN_PLACE)
            copy_block(c->recvbuf, c->sendbuf, bytes);
        return verdict(v, RCOLL_CALL_SKIP);
    }
    return verdict(v, RCOLL_CALL_RUN);
}

rcoll_status_t rcoll_call_prepare(struct rcoll_team *t, const rcoll_call_t *c, rcoll_args_t *a,
                                  rcoll_call_copy_t *cp, rcoll_call_verdict_t *v)
{
    static rcoll_status_t (*const prep[RCOLL_COLL_COUNT])(struct rcoll_team *, const rcoll_call_t *,
                                                          rcoll_args_t *, rcoll_call_copy_t *,
                                                          rcoll_call_verdict_t *) = {
        [RCOLL_COLL_BARRIER] = prep_barrier,       [RCOLL_COLL_ALLGATHER] = prep_allgather,
        [RCOLL_COLL_ALLTOALL] = prep_alltoall,     [RCOLL_COLL_BCAST] = prep_bcast,
        [RCOLL_COLL_GATHER] = prep_gather,         [RCOLL_COLL_SCATTER] = prep_scatter,
        [RCOLL_COLL_ALLGATHERV] = prep_allgatherv, [RCOLL_COLL_ALLTOALLV] = prep_alltoallv,
        [RCOLL_COLL_GATHERV] = prep_gatherv,       [RCOLL_COLL_SCATTERV] = prep_scatterv,
        [RCOLL_COLL_ALLREDUCE] = prep_reduction,   [RCOLL_COLL_REDUCE] = prep_reduction,
        [RCOLL_COLL_REDUCE_SCATTER_BLOCK] = prep_reduction,
        [RCOLL_COLL_REDUCE_SCATTER] = prep_reduction,
        [RCOLL_COLL_SCAN] = prep_reduction,        [RCOLL_COLL_EXSCAN] = prep_reduction,
    };
    memset(a, 0, sizeof *a);
    if (cp)
        cp->own_len = 0;
    if ((unsigned)c->coll >= RCOLL_COLL_COUNT)
        return rcoll_team_error(t, RCOLL_ERR_INVALID, "unknown collective %d", (int)c->coll);
    return prep[c->coll](t, c, a, cp, v);
}

/* The last blocking call a team prepared that can be replayed: the same call again (a loop
 * over the same buffers and sizes, most programs' pattern) skips its checks and the set-up of
 * its arguments, which would come out the same; its own block is moved again. Not kept: calls
 * with count arrays (the caller may change their contents), an in-place alltoall(v) (its copy
 * of the send data is made anew), calls that skip or pass. docs/tuning.md, "A call like the
 * last one". */
struct rcoll_call_cache {
    bool valid;
    rcoll_call_t call;
    rcoll_args_t args;
    rcoll_call_copy_t own;
    const struct rcoll_algo *algo; /* what ran it (a flat algorithm), NULL: choose */
    unsigned forced_gen;           /* the team's forced algorithms then */
};

bool rcoll_call_same(const rcoll_call_t *a, const rcoll_call_t *b)
{
    return a->coll == b->coll && a->sendbuf == b->sendbuf && a->recvbuf == b->recvbuf &&
           a->bytes == b->bytes && a->root == b->root && a->dtype == b->dtype && a->op == b->op &&
           !b->scounts && !b->sdispls && !b->rcounts && !b->rdispls;
}

bool rcoll_call_replayable(const rcoll_call_t *c, rcoll_call_verdict_t v)
{
    bool inplace_copy = (c->coll == RCOLL_COLL_ALLTOALL || c->coll == RCOLL_COLL_ALLTOALLV) &&
                        c->sendbuf == RCOLL_IN_PLACE;
    return v == RCOLL_CALL_RUN && !inplace_copy && !c->scounts && !c->sdispls && !c->rcounts &&
           !c->rdispls;
}

/* Prepares c (or replays the team's last preparation of the same call) into *a and *v; *replay
 * is the cache entry replayed, or NULL. */
static rcoll_status_t prepare_blocking(struct rcoll_team *t, const rcoll_call_t *c, rcoll_args_t *a,
                                       rcoll_call_verdict_t *v, struct rcoll_call_cache **replay)
{
    struct rcoll_call_cache *k = t->call_cache;
    *replay = NULL;
    if (k && k->valid && rcoll_call_same(&k->call, c)) {
        *a = k->args;
        *v = RCOLL_CALL_RUN;
        rcoll_call_restart(&k->own);
        *replay = k;
        return RCOLL_OK;
    }
    rcoll_call_copy_t own = {.scratch = true};
    rcoll_status_t st = rcoll_call_prepare(t, c, a, &own, v);
    if (!k && st == RCOLL_OK && rcoll_call_replayable(c, *v))
        k = t->call_cache = calloc(1, sizeof *k); /* no memory: no replay, nothing else lost */
    if (k) {
        k->valid = st == RCOLL_OK && rcoll_call_replayable(c, *v);
        if (k->valid) {
            k->call = *c;
            k->args = *a;
            k->own = own;
            k->algo = NULL; /* known once it ran */
        }
    }
    return st;
}

rcoll_status_t rcoll_call_blocking(struct rcoll_team *t, const rcoll_call_t *c)
{
    if (!t)
        return RCOLL_ERR_INVALID;
    rcoll_status_t st = rcoll_requests_drain(t); /* what is queued before it runs first */
    if (st != RCOLL_OK)
        return st;
    rcoll_args_t a;
    rcoll_call_verdict_t v;
    struct rcoll_call_cache *replay;
    st = prepare_blocking(t, c, &a, &v, &replay);
    if (st != RCOLL_OK)
        return st;
    if (v == RCOLL_CALL_SKIP)
        return rcoll_team_skip(t);
    if (v == RCOLL_CALL_PASS)
        return rcoll_team_pass(t);
    if (replay && replay->algo && replay->forced_gen == t->forced_gen)
        return rcoll_team_rerun(t, c->coll, replay->algo, &a);
    st = rcoll_team_run(t, c->coll, &a);
    /* A flat algorithm ran this very call (not a call nested in it, with arguments of its own):
     * the entry, if it still holds this call, remembers it. */
    struct rcoll_call_cache *k = t->call_cache;
    if (k && k->valid && t->last_flat_args == &a && rcoll_call_same(&k->call, c)) {
        k->algo = t->last_flat;
        k->forced_gen = t->forced_gen;
    }
    return st;
}

/* A call every rank knows to be empty (no bytes per block, a valid root): it returns at once, as
 * MPI libraries return from a zero count, with no preparation, no selection and no sequence
 * number (docs/tuning.md, "Back-to-back rooted calls"). Queued nonblocking calls are not run
 * first: an empty call takes no number, so nothing is ordered after it. */
static bool empty_call(struct rcoll_team *t, size_t bytes, int root, bool rooted)
{
    if (bytes || !t || (rooted && (root < 0 || root >= t->size)))
        return false;
    t->last_algo = "trivial";
    return true;
}

/* A gatherv or scatterv rank that moves nothing (all zero counts at the root, a zero count
 * elsewhere), its arguments valid, nothing queued before it: it takes the call's number and
 * leaves without preparation or selection where the team already knows the algorithm is flat
 * (rcoll_team_pass_known). Anything else, errors included, takes the whole path. */
static bool vform_idle(struct rcoll_team *t, rcoll_coll_t coll, int root, size_t mine, bool buf_ok,
                       const size_t *counts, const size_t *displs, rcoll_status_t *st)
{
    if (!t || mine || !buf_ok || root < 0 || root >= t->size || t->size == 1)
        return false;
    if (t->rank == root && (!counts || !displs || !all_zero(counts, t->size)))
        return false;
    if (t->nb && t->nb->head)
        return false;
    return rcoll_team_pass_known(t, coll, st);
}

rcoll_status_t rcoll_barrier(rcoll_team_t *t)
{
    rcoll_call_t c = {.coll = RCOLL_COLL_BARRIER};
    return rcoll_call_blocking(t, &c);
}

rcoll_status_t rcoll_allgather(rcoll_team_t *t, const void *sendbuf, void *recvbuf, size_t bytes)
{
    if (empty_call(t, bytes, 0, false))
        return RCOLL_OK;
    rcoll_call_t c = {.coll = RCOLL_COLL_ALLGATHER, .sendbuf = sendbuf, .recvbuf = recvbuf, .bytes = bytes};
    return rcoll_call_blocking(t, &c);
}

rcoll_status_t rcoll_alltoall(rcoll_team_t *t, const void *sendbuf, void *recvbuf, size_t bytes)
{
    if (empty_call(t, bytes, 0, false))
        return RCOLL_OK;
    rcoll_call_t c = {.coll = RCOLL_COLL_ALLTOALL, .sendbuf = sendbuf, .recvbuf = recvbuf, .bytes = bytes};
    return rcoll_call_blocking(t, &c);
}

rcoll_status_t rcoll_bcast(rcoll_team_t *t, void *buf, size_t bytes, int root)
{
    if (empty_call(t, bytes, root, true))
        return RCOLL_OK;
    rcoll_call_t c = {.coll = RCOLL_COLL_BCAST, .sendbuf = buf, .recvbuf = buf, .bytes = bytes, .root = root};
    return rcoll_call_blocking(t, &c);
}

rcoll_status_t rcoll_gather(rcoll_team_t *t, const void *sendbuf, void *recvbuf, size_t bytes, int root)
{
    if (empty_call(t, bytes, root, true))
        return RCOLL_OK;
    rcoll_call_t c = {.coll = RCOLL_COLL_GATHER, .sendbuf = sendbuf, .recvbuf = recvbuf, .bytes = bytes,
                      .root = root};
    return rcoll_call_blocking(t, &c);
}

rcoll_status_t rcoll_scatter(rcoll_team_t *t, const void *sendbuf, void *recvbuf, size_t bytes, int root)
{
    if (empty_call(t, bytes, root, true))
        return RCOLL_OK;
    rcoll_call_t c = {.coll = RCOLL_COLL_SCATTER, .sendbuf = sendbuf, .recvbuf = recvbuf, .bytes = bytes,
                      .root = root};
    return rcoll_call_blocking(t, &c);
}

rcoll_status_t rcoll_allgatherv(rcoll_team_t *t, const void *sendbuf, size_t sendbytes, void *recvbuf,
                                const size_t *counts, const size_t *displs)
{
    rcoll_call_t c = {.coll = RCOLL_COLL_ALLGATHERV, .sendbuf = sendbuf, .recvbuf = recvbuf,
                      .bytes = sendbytes, .rcounts = counts, .rdispls = displs};
    return rcoll_call_blocking(t, &c);
}

rcoll_status_t rcoll_alltoallv(rcoll_team_t *t, const void *sendbuf, const size_t *sendcounts,
                               const size_t *sdispls, void *recvbuf, const size_t *recvcounts,
                               const size_t *rdispls)
{
    rcoll_call_t c = {.coll = RCOLL_COLL_ALLTOALLV, .sendbuf = sendbuf, .recvbuf = recvbuf,
                      .scounts = sendcounts, .sdispls = sdispls, .rcounts = recvcounts, .rdispls = rdispls};
    return rcoll_call_blocking(t, &c);
}

rcoll_status_t rcoll_gatherv(rcoll_team_t *t, const void *sendbuf, size_t sendbytes, void *recvbuf,
                             const size_t *counts, const size_t *displs, int root)
{
    rcoll_status_t st;
    bool in_place = sendbuf == RCOLL_IN_PLACE && t && t->rank == root; /* its block is counts[root] */
    if (vform_idle(t, RCOLL_COLL_GATHERV, root, in_place ? 0 : sendbytes,
                   sendbuf && (in_place || sendbuf != RCOLL_IN_PLACE), counts, displs, &st))
        return st;
    rcoll_call_t c = {.coll = RCOLL_COLL_GATHERV, .sendbuf = sendbuf, .recvbuf = recvbuf, .bytes = sendbytes,
                      .rcounts = counts, .rdispls = displs, .root = root};
    return rcoll_call_blocking(t, &c);
}

rcoll_status_t rcoll_scatterv(rcoll_team_t *t, const void *sendbuf, const size_t *counts,
                              const size_t *displs, void *recvbuf, size_t recvbytes, int root)
{
    rcoll_status_t st;
    bool in_place = recvbuf == RCOLL_IN_PLACE && t && t->rank == root; /* its block is counts[root] */
    if (vform_idle(t, RCOLL_COLL_SCATTERV, root, in_place ? 0 : recvbytes,
                   in_place || recvbuf != RCOLL_IN_PLACE, counts, displs, &st))
        return st;
    rcoll_call_t c = {.coll = RCOLL_COLL_SCATTERV, .sendbuf = sendbuf, .recvbuf = recvbuf, .bytes = recvbytes,
                      .scounts = counts, .sdispls = displs, .root = root};
    return rcoll_call_blocking(t, &c);
}

static rcoll_status_t reduction(rcoll_team_t *t, rcoll_coll_t coll, const void *sendbuf, void *recvbuf,
                                size_t count, const size_t *counts, rcoll_dtype_t dtype, rcoll_op_t op,
                                int root)
{
    /* An empty call every rank knows (count 0; reduce_scatter's counts are checked on the
     * whole path) with a valid operation and type returns at once, as empty_call. */
    if (coll != RCOLL_COLL_REDUCE_SCATTER && !count && !rcoll_op_check(op, dtype) &&
        empty_call(t, 0, root, rcoll_coll_info(coll)->rooted))
        return RCOLL_OK;
    rcoll_call_t c = {.coll = coll, .sendbuf = sendbuf, .recvbuf = recvbuf, .bytes = count,
                      .rcounts = counts, .dtype = dtype, .op = op, .root = root};
    return rcoll_call_blocking(t, &c);
}

rcoll_status_t rcoll_allreduce(rcoll_team_t *t, const void *sendbuf, void *recvbuf, size_t count,
                               rcoll_dtype_t dtype, rcoll_op_t op)
{
    return reduction(t, RCOLL_COLL_ALLREDUCE, sendbuf, recvbuf, count, NULL, dtype, op, 0);
}

rcoll_status_t rcoll_reduce(rcoll_team_t *t, const void *sendbuf, void *recvbuf, size_t count,
                            rcoll_dtype_t dtype, rcoll_op_t op, int root)
{
    return reduction(t, RCOLL_COLL_REDUCE, sendbuf, recvbuf, count, NULL, dtype, op, root);
}

rcoll_status_t rcoll_reduce_scatter_block(rcoll_team_t *t, const void *sendbuf, void *recvbuf, size_t count,
                                          rcoll_dtype_t dtype, rcoll_op_t op)
{
    return reduction(t, RCOLL_COLL_REDUCE_SCATTER_BLOCK, sendbuf, recvbuf, count, NULL, dtype, op, 0);
}

rcoll_status_t rcoll_reduce_scatter(rcoll_team_t *t, const void *sendbuf, void *recvbuf, const size_t *counts,
                                    rcoll_dtype_t dtype, rcoll_op_t op)
{
    return reduction(t, RCOLL_COLL_REDUCE_SCATTER, sendbuf, recvbuf, 0, counts, dtype, op, 0);
}

rcoll_status_t rcoll_scan(rcoll_team_t *t, const void *sendbuf, void *recvbuf, size_t count,
                          rcoll_dtype_t dtype, rcoll_op_t op)
{
    return reduction(t, RCOLL_COLL_SCAN, sendbuf, recvbuf, count, NULL, dtype, op, 0);
}

rcoll_status_t rcoll_exscan(rcoll_team_t *t, const void *sendbuf, void *recvbuf, size_t count,
                            rcoll_dtype_t dtype, rcoll_op_t op)
{
    return reduction(t, RCOLL_COLL_EXSCAN, sendbuf, recvbuf, count, NULL, dtype, op, 0);
}
