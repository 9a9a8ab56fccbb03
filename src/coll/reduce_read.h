/* How the one-step reductions (allreduce, reduce and reduce_scatter_block direct_read) read
 * their peers' published vectors, before or while they fold them. A peer on this node is read
 * where its publication lies (transport peek: the fold reads the peer's outbox in shared
 * memory, one copy fewer than copying it out first: 10-30% faster from 16 KB to 512 KB at np=2,
 * docs/tuning.md "Reductions"); one on another node is copied into this rank's scratch (get):
 * - whole: every peer's publication (or this rank's block of it) taken as it arrives, in
 *   arrival order (the sweep); on this node its arrival, length and place in one step
 *   (transport peek_published);
 * - staged (pipelined): a rank copies its vector into its outbox in parts of 8 KB and signals
 *   each part to its readers (transport stage + signal, as bcast direct_read's root); a reader
 *   takes part i of every peer and folds it (rank order, coll/reduce.h) while the peers
 *   copy part i+1 in. On one node where every rank has its own core this overlaps the readers'
 *   copying and folding with the writers' copying in, instead of following it, and folds each
 *   part while it is in the first-level cache (docs/tuning.md, "Reductions").
 * The scratch (RCOLL_TMP_REDUCE, taken by rcoll_read_prepare before the rank enters) holds room
 * for the P vectors read (rank order) and then the fold's list of P inputs. */
#ifndef RCOLL_COLL_REDUCE_READ_H
#define RCOLL_COLL_REDUCE_READ_H

#include "coll/reduce.h"

/* The scratch for a call whose rank reads P vectors of a->bytes (the algorithm's prepare). */
rcoll_status_t rcoll_read_prepare(rcoll_args_t *a, const char *coll);
/* The fold's list of P inputs in that scratch. */
const void **rcoll_read_inputs(const rcoll_args_t *a);

/* Every peer's publication of `total` bytes, its a->bytes at `offset`, in arrival order: in[q]
 * points where it lies (this node) or at its copy in the scratch at q * a->bytes, in[rank] at
 * `mine`. */
rcoll_status_t rcoll_read_published(rcoll_args_t *a, size_t offset, size_t total, const void *mine);

/* Whether a call goes in parts: vectors from 16 KB where ranks do not share cores (alike on
 * every rank: the size and the team's layout). */
bool rcoll_staged(const rcoll_args_t *a);
/* This rank's vector (a->sendbuf) in parts, each signalled to the root or to every peer. */
rcoll_status_t rcoll_staged_send(rcoll_args_t *a, bool to_all);
/* Every peer's vector in parts (in place, or copied into the scratch), each part folded with
 * this rank's own into a->recvbuf as soon as every peer's is there. */
rcoll_status_t rcoll_staged_fold(rcoll_args_t *a, const char *coll);

#endif
