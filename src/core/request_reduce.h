/* Nonblocking and persistent reductions on the board engine (core/request.h): a reduction is
 * posted as its data mover -- the one collective that brings every vector (or slice) this
 * rank needs into the request's own scratch, moved one-sided while the caller computes: an
 * allgather (allreduce), a gather (reduce), an alltoall (reduce_scatter_block) or an alltoallv
 * (reduce_scatter, scan, exscan) -- and the fold (coll/op.h, rank order as every reduction) is
 * done when the mover completes, by whichever call of the owner sees it complete. One post per
 * call, so every rank's board numbers stay in step. The queue engine runs reductions as the
 * blocking calls do (their own algorithms). */
#ifndef RCOLL_CORE_REQUEST_REDUCE_H
#define RCOLL_CORE_REQUEST_REDUCE_H

#include "core/call.h"

typedef struct rcoll_nb_reduce rcoll_nb_reduce_t;

/* For the user's reduction call `user` (checked here as a blocking call would be): the mover
 * call into *mover (its count arrays and scratch owned by *out). */
rcoll_status_t rcoll_nb_reduce_make(struct rcoll_team *t, const rcoll_call_t *user, rcoll_call_t *mover,
                                    rcoll_nb_reduce_t **out);
/* The mover completed: fold into the user's receive buffer (RCOLL_ERR_NOMEM: coll/op.h). */
rcoll_status_t rcoll_nb_reduce_fold(const rcoll_nb_reduce_t *red, int rank);
void rcoll_nb_reduce_free(rcoll_nb_reduce_t *red);

#endif
