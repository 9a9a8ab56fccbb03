/* What the reductions' algorithms share. Each is nested (coll.h): ordinary calls of the data
 * movers (allgather, alltoall(v), gather(v), their own selection picking the one-sided shared
 * memory or network algorithm for the team) on the team itself, and local folds (coll/op.h)
 * in the one order every algorithm keeps: vector of rank 0 op (rank 1 op (... op rank P-1)).
 * A result thus depends on the team size only, not on the algorithm, its slices or parts, nor
 * the arrival order: every rank gets the same bits, from run to run (docs/reductions.md). */
#ifndef RCOLL_COLL_REDUCE_H
#define RCOLL_COLL_REDUCE_H

#include <stdio.h>
#include <string.h>

#include "coll/coll.h"
#include "coll/op.h"

/* The scratch a reduction's parts may take (P vectors of one part): vectors larger than it
 * run in parts, each one round of the nested calls. */
#define RCOLL_REDUCE_SCRATCH (8u << 20)

/* Elements of a part when each of `ways` copies of it is held at once: at least one element.
 * Where single copy measured slow (transport.h) the `ways` copies also fit the inbox, so that
 * the nested calls take the copy path: np=2 allreduce of 2-16 MB 0.52-1.18x native in parts
 * of 8 MB, 0.16-0.49x in parts of 1 MB (docs/tuning.md, "Where a single copy is slow"). */
static inline size_t rcoll_reduce_part(const rcoll_args_t *a, size_t ways)
{
    size_t es = rcoll_dtype_size(a->dtype);
    size_t room = a->tl->single_copy_slow && a->tl->inbox_bytes < RCOLL_REDUCE_SCRATCH
                      ? a->tl->inbox_bytes : RCOLL_REDUCE_SCRATCH;
    size_t n = room / (ways * es);
    return n ? n : 1;
}

/* Slice j of `count` elements split among P ranks: from lo, n elements; sizes differ by at
 * most one element, the larger ones first. */
static inline size_t rcoll_slice_lo(size_t count, int P, int j)
{
    size_t q = count / (size_t)P, r = count % (size_t)P;
    return (size_t)j * q + ((size_t)j < r ? (size_t)j : r);
}
static inline size_t rcoll_slice_n(size_t count, int P, int j)
{
    return count / (size_t)P + ((size_t)j < count % (size_t)P);
}

/* A nested call failed with `st`: its message (the team's last error) prefixed with the
 * reduction's name. */
static inline rcoll_status_t rcoll_reduce_failed(rcoll_args_t *a, const char *coll, rcoll_status_t st)
{
    char inner[sizeof a->team->last_error];
    snprintf(inner, sizeof inner, "%s", a->team->last_error);
    return rcoll_team_error(a->team, st, "%s (%s): %s", coll, a->team->last_algo, inner);
}

/* A fold's status (coll/op.h: out of memory only), the team's error named. */
static inline rcoll_status_t rcoll_reduce_fold_status(rcoll_args_t *a, rcoll_status_t st, const char *coll)
{
    return st == RCOLL_OK ? st : rcoll_team_error(a->team, st, "%s: no memory for a fold", coll);
}

/* out = x op y over `bytes` of the call's elements (the flat algorithms' two-input step: x the
 * lower ranks' part); out may be x or y. The team's error named on failure. */
static inline rcoll_status_t rcoll_fold2(rcoll_args_t *a, const void *x, const void *y, void *out, size_t bytes,
                                         const char *coll)
{
    const void *in[2] = {x, y};
    rcoll_status_t st = rcoll_op_fold(a->op, a->dtype, in, 2, out, bytes / rcoll_dtype_size(a->dtype));
    return rcoll_reduce_fold_status(a, st, coll);
}

/* Scratch of the reduction (slot RCOLL_TMP_REDUCE or _REDUCE2), with the team's error when
 * out of memory. */
static inline void *rcoll_reduce_tmp(rcoll_args_t *a, int slot, size_t bytes, const char *coll)
{
    void *p = rcoll_team_tmp(a->team, slot, bytes ? bytes : 1);
    if (!p)
        rcoll_team_error(a->team, RCOLL_ERR_NOMEM, "%s: no memory for %zu bytes of scratch", coll, bytes);
    return p;
}

/* A call's lists: 4 P sizes (a v-form's counts and displacements, both sides) and P + 1
 * inputs of a fold, in the scratch slot RCOLL_TMP_REDUCE2. */
typedef struct {
    size_t *v;
    const void **in;
} rcoll_reduce_lists_t;

static inline bool rcoll_reduce_lists(rcoll_args_t *a, rcoll_reduce_lists_t *l, const char *coll)
{
    size_t P = (size_t)a->size, vb = 4 * P * sizeof(size_t);
    unsigned char *p = rcoll_reduce_tmp(a, RCOLL_TMP_REDUCE2, vb + (P + 1) * sizeof(void *), coll);
    if (!p)
        return false;
    l->v = (size_t *)(void *)p;
    l->in = (const void **)(void *)(p + vb);
    return true;
}

/* `bytes` rounded up to a pointer's alignment (a list of inputs after data in one scratch). */
static inline size_t rcoll_reduce_ptr_align(size_t bytes)
{
    return (bytes + sizeof(void *) - 1) / sizeof(void *) * sizeof(void *);
}

/* in[i] = base + i * stride for i < n. */
static inline const void **rcoll_reduce_strided(const void **in, const void *base, size_t stride, int n)
{
    for (int i = 0; i < n; i++)
        in[i] = (const char *)base + (size_t)i * stride;
    return in;
}

/* Scan and exscan's direct algorithm (scan/direct.c): the fold of the vectors of the ranks
 * below this one, and this rank's own when `inclusive`. */
rcoll_status_t rcoll_scan_run(rcoll_args_t *a, bool inclusive, const char *coll);
/* Their recursive doubling (scan/recursive_doubling.c): the scratch before the rank enters,
 * the run, and where it does not apply. */
rcoll_status_t rcoll_scan_rd_prepare(rcoll_args_t *a, const char *coll);
rcoll_status_t rcoll_scan_rd_run(rcoll_args_t *a, bool inclusive, const char *coll);
const char *rcoll_scan_rd_not_for(const rcoll_args_t *a);
/* Their pipelined chain (scan/linear.c). */
rcoll_status_t rcoll_scan_linear_prepare(rcoll_args_t *a, bool inclusive, const char *coll);
rcoll_status_t rcoll_scan_linear_run(rcoll_args_t *a, bool inclusive, const char *coll);

#endif
