/* Reduction operations: element types, the predefined operations and user ones, and the local
 * kernels every reduction algorithm combines vectors with (docs/reductions.md). One fixed order:
 * a fold of n vectors is in[0] op (in[1] op (... op in[n-1])), element by element, so that a
 * result depends only on which vectors are folded in which order, never on how an algorithm
 * split them into slices or parts. */
#ifndef RCOLL_COLL_OP_H
#define RCOLL_COLL_OP_H

#include <stdbool.h>
#include <stddef.h>
#include "rcoll/rcoll.h"

/* The predefined operations by index (RCOLL_OP_SUM is 1, ...); 0 is a user operation. */
enum { RCOLL_OPI_USER = 0, RCOLL_OPI_SUM, RCOLL_OPI_PROD, RCOLL_OPI_MIN, RCOLL_OPI_MAX,
       RCOLL_OPI_LAND, RCOLL_OPI_LOR, RCOLL_OPI_LXOR, RCOLL_OPI_BAND, RCOLL_OPI_BOR,
       RCOLL_OPI_BXOR, RCOLL_OPI_MINLOC, RCOLL_OPI_MAXLOC, RCOLL_OPI_COUNT };

struct rcoll_op {
    rcoll_user_fn_t fn;
    void *arg;
    bool commutative;
};

/* Index of a predefined operation, RCOLL_OPI_USER for a user one, -1 for NULL. */
int rcoll_op_index(rcoll_op_t op);
bool rcoll_op_commutative(rcoll_op_t op);
/* Why `op` cannot combine `dtype` (a phrase for the error message), NULL when it can. */
const char *rcoll_op_check(rcoll_op_t op, rcoll_dtype_t dtype);

/* inout = in op inout over count elements (in and inout do not overlap). */
void rcoll_op_apply(rcoll_op_t op, rcoll_dtype_t dtype, const void *in, void *inout, size_t count);
/* out = in[0] op (in[1] op (... op in[n-1])) over count elements (n >= 1), in parts that stay
 * in the first-level cache; the first step is out = in[n-2] op in[n-1] (no copy of an input
 * first). out may be any one of the inputs (in place) but overlap no other. */
rcoll_status_t rcoll_op_fold(rcoll_op_t op, rcoll_dtype_t dtype, const void *const *in, int n, void *out,
                             size_t count);

#endif
