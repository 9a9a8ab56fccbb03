/* Reductions on the board engine: see request_reduce.h. */
#include "core/request_reduce.h"

#include <stdlib.h>
#include <string.h>

#include "coll/colls.h"
#include "coll/op.h"
#include "core/team.h"

struct rcoll_nb_reduce {
    rcoll_call_t user;
    size_t count;        /* elements this rank's result holds */
    size_t stride;       /* bytes between the vectors (or blocks) in tmp */
    int first, inputs;   /* tmp holds the inputs of ranks first.. first+inputs-1 */
    bool mine_last;      /* scan: this rank's own vector is the last input */
    const void *own;     /* this rank's vector (its block for the reduce_scatters) */
    unsigned char *tmp;
    size_t *arrays;      /* the mover's counts and displacements */
    const void **in;     /* the fold's inputs */
};

void rcoll_nb_reduce_free(rcoll_nb_reduce_t *red)
{
    if (!red)
        return;
    free(red->tmp);
    free(red->arrays);
    free(red->in);
    free(red);
}

/* The alltoallv of a reduce_scatter (block j to rank j) or of a scan (my vector to every rank
 * above, theirs from every rank below). */
static void vform(rcoll_nb_reduce_t *red, const rcoll_call_t *u, int rank, int P, size_t es)
{
    size_t *sc = red->arrays, *sd = sc + P, *rc = sd + P, *rd = rc + P;
    size_t off = 0, mine = red->count * es;
    for (int j = 0; j < P; j++) {
        if (u->coll == RCOLL_COLL_REDUCE_SCATTER) {
            sc[j] = u->rcounts[j] * es;
            sd[j] = off;
            off += sc[j];
            rc[j] = mine;
        } else {
            sc[j] = j > rank ? mine : 0;
            sd[j] = 0;
            rc[j] = j < rank ? mine : 0;
        }
        rd[j] = (size_t)j * mine;
    }
}

rcoll_status_t rcoll_nb_reduce_make(struct rcoll_team *t, const rcoll_call_t *u, rcoll_call_t *mover,
                                    rcoll_nb_reduce_t **out)
{
    const char *name = rcoll_coll_name(u->coll);
    rcoll_status_t st = rcoll_call_check(t, u);
    if (st != RCOLL_OK)
        return st;
    int P = t->size, rank = t->rank;
    rcoll_nb_reduce_t *red = calloc(1, sizeof *red);
    if (!red)
        return rcoll_team_error(t, RCOLL_ERR_NOMEM, "%s: out of memory", name);
    size_t es = rcoll_dtype_size(u->dtype);
    red->user = *u;
    red->count = u->coll == RCOLL_COLL_REDUCE_SCATTER ? u->rcounts[rank] : u->bytes;
    red->stride = red->count * es;
    red->own = u->sendbuf == RCOLL_IN_PLACE ? u->recvbuf : u->sendbuf;
    red->first = 0;
    red->inputs = P;
    bool root = u->coll != RCOLL_COLL_REDUCE || rank == u->root;
    red->tmp = malloc(root && red->stride ? (size_t)P * red->stride : 1);
    red->arrays = malloc(4 * (size_t)P * sizeof(size_t));
    red->in = malloc(((size_t)P + 1) * sizeof(void *));
    if (!red->tmp || !red->arrays || !red->in) {
        rcoll_nb_reduce_free(red);
        return rcoll_team_error(t, RCOLL_ERR_NOMEM, "%s: out of memory", name);
    }
    memset(mover, 0, sizeof *mover);
    mover->sendbuf = red->own ? red->own : red->tmp; /* an empty call may name NULL buffers */
    mover->recvbuf = red->tmp;
    mover->bytes = red->stride;
    switch (u->coll) {
    case RCOLL_COLL_ALLREDUCE:
        mover->coll = RCOLL_COLL_ALLGATHER;
        break;
    case RCOLL_COLL_REDUCE:
        mover->coll = RCOLL_COLL_GATHER;
        mover->root = u->root;
        break;
    case RCOLL_COLL_REDUCE_SCATTER_BLOCK:
        mover->coll = RCOLL_COLL_ALLTOALL;
        break;
    default: /* reduce_scatter, scan, exscan */
        mover->coll = RCOLL_COLL_ALLTOALLV;
        vform(red, u, rank, P, es);
        mover->scounts = red->arrays;
        mover->sdispls = red->arrays + P;
        mover->rcounts = red->arrays + 2 * P;
        mover->rdispls = red->arrays + 3 * P;
        if (u->coll == RCOLL_COLL_SCAN) {
            red->inputs = rank; /* the ranks below, then my own vector */
            red->mine_last = true;
        } else if (u->coll == RCOLL_COLL_EXSCAN) {
            red->inputs = rank;
        }
        break;
    }
    *out = red;
    return RCOLL_OK;
}

void rcoll_nb_reduce_fold(const rcoll_nb_reduce_t *red, int rank, int size)
{
    const rcoll_call_t *u = &red->user;
    if (u->coll == RCOLL_COLL_REDUCE && rank != u->root)
        return;
    int n = red->inputs;
    for (int i = 0; i < n; i++)
        red->in[i] = red->tmp + (size_t)(red->first + i) * red->stride;
    if (u->coll == RCOLL_COLL_ALLREDUCE || u->coll == RCOLL_COLL_REDUCE)
        red->in[rank] = red->own; /* where it is (the mover copied it into tmp too) */
    if (red->mine_last)
        red->in[n++] = red->own;
    if (n == 0 || red->count == 0)
        return; /* exscan's rank 0: nothing */
    (void)size;
    rcoll_op_fold(u->op, u->dtype, red->in, n, u->recvbuf, red->count);
}
