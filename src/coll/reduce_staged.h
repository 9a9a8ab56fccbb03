/* The staged (pipelined) form of the one-step reductions on the transport (allreduce and
 * reduce direct_read): a rank copies its vector into its outbox in parts of 8 KB and signals
 * each part to its readers (transport stage + signal, as bcast direct_read's root); a reader copies part i
 * of every peer out and folds it (rank order, coll/reduce.h) while the peers copy part i+1 in.
 * On one node where every rank has its own core this overlaps the readers' copying and folding
 * with the writers' copying in, instead of following it (docs/tuning.md, "Reductions"). */
#ifndef RCOLL_COLL_REDUCE_STAGED_H
#define RCOLL_COLL_REDUCE_STAGED_H

#include "coll/reduce.h"

/* Whether a call goes in parts: vectors from 16 KB where ranks do not share cores (alike on
 * every rank: the size and the team's layout). */
bool rcoll_staged(const rcoll_args_t *a);
/* This rank's vector (a->sendbuf) in parts, each signalled to the root or to every peer. */
rcoll_status_t rcoll_staged_send(rcoll_args_t *a, bool to_all);
/* Every peer's vector in parts into `all` (P vectors' room, rank order), each part folded with
 * this rank's own into a->recvbuf as soon as every peer's is there; `in` holds P inputs. */
rcoll_status_t rcoll_staged_fold(rcoll_args_t *a, unsigned char *all, const void **in, const char *coll);

#endif
