/* The collectives, one row each: name, root or not, v-form or not, what a call's size means and
 * what each rank sends and receives, the buffers a call must name, and the algorithms. Team
 * (receive extent, the size the selection keys on), selection (registry, RCOLL_TUNE), the entry
 * points' argument checks, configuration (RCOLL_<COLL>_ALGO, RCOLL_TUNE), rcoll-bench (buffer
 * layouts), rcoll-info (--list, --colls), the tests and the report (through rcoll-info --colls)
 * read this table: a new collective is one row here, its entry point and its algorithms. The
 * public enum (rcoll.h) only numbers the rows; nothing may rely on its order.
 * This header needs nothing but the public one, so that every layer may include it. */
#ifndef RCOLL_COLL_COLLS_H
#define RCOLL_COLL_COLLS_H

#include <stdbool.h>
#include <stddef.h>
#include "rcoll/rcoll.h"

struct rcoll_algo;

/* The blocks one side (send or receive) of a call holds on a rank that has that side. */
typedef enum {
    RCOLL_BLOCKS_NONE = 0, /* nothing (barrier) */
    RCOLL_BLOCKS_ONE,      /* one block: the rank's own, the message (bcast), its share (scatter) */
    RCOLL_BLOCKS_EACH      /* one block per rank of the team, in rank order (P blocks) */
} rcoll_blocks_t;

typedef struct {
    rcoll_blocks_t blocks;
    bool root_only; /* only the root has this side (gather's receive, scatter's send, bcast's) */
} rcoll_side_t;

/* Where RCOLL_IN_PLACE may stand (at the root only, for a rooted collective). */
typedef enum { RCOLL_IN_PLACE_NONE = 0, RCOLL_IN_PLACE_SEND, RCOLL_IN_PLACE_RECV } rcoll_in_place_t;

typedef struct {
    rcoll_coll_t coll;
    const char *name;
    bool rooted;          /* takes a root */
    bool vform;           /* counts and displacements per rank, which differ by rank: every rank
                           * must choose alike, so the selection sees the team size only */
    rcoll_side_t send, recv;
    bool one_buffer;      /* the root's data is its receive buffer, sent from there (bcast) */
    rcoll_in_place_t in_place;
    const char *bytes_is;    /* what the size of a call (m) is */
    const char *bytes_label; /* the same, short (a plot's axis) */
    const char *moves;       /* what each rank sends and receives, in words */
    const struct rcoll_algo *const *algos; /* NULL-terminated; the order rcoll-info lists */
    bool reduction;       /* combines the ranks' vectors (element type and operation; counts in
                           * elements, a call's size in bytes of them) */
} rcoll_coll_info_t;

extern const rcoll_coll_info_t rcoll_coll_table[];
/* The row of `coll`, NULL for a value that names no collective (inline: every call asks). */
static inline const rcoll_coll_info_t *rcoll_coll_info(rcoll_coll_t coll)
{
    return (unsigned)coll < RCOLL_COLL_COUNT ? &rcoll_coll_table[coll] : NULL;
}
/* The row named `name` (any case), NULL if none. */
const rcoll_coll_info_t *rcoll_coll_info_by_name(const char *name);

/* A rooted collective that moves data (not a reduction), and the most ranks that put into one
 * receiver in it (a gather's root: all others): what the team tells its transport per call. */
static inline bool rcoll_coll_rooted_moves(const rcoll_coll_info_t *c)
{
    return c->rooted && !c->reduction;
}
static inline int rcoll_coll_fan_in(const rcoll_coll_info_t *c, int size)
{
    return c->recv.root_only ? size - 1 : 1;
}
/* Index in c->algos of the algorithm named `name` (any case), -1 if none. */
int rcoll_coll_algo_index(const rcoll_coll_info_t *c, const char *name);
/* Name of the i-th algorithm of `c`, NULL past the last (for code that has no coll/coll.h). */
const char *rcoll_coll_algo_name(const rcoll_coll_info_t *c, int i);

/* Whether the size of a call enters the selection: collectives that move data, but not the
 * v-forms whose counts only some ranks know (their own counts differ by rank); allgatherv and
 * reduce_scatter enter with their mean count, which every rank knows (rcoll_coll_key). */
static inline bool rcoll_coll_by_bytes(const rcoll_coll_info_t *c)
{
    return (!c->vform || c->coll == RCOLL_COLL_ALLGATHERV || c->coll == RCOLL_COLL_REDUCE_SCATTER) &&
           c->recv.blocks != RCOLL_BLOCKS_NONE;
}

/* Whether a rank has the send (receive) side of a call. */
static inline bool rcoll_coll_sends(const rcoll_coll_info_t *c, bool am_root)
{
    return c->send.blocks != RCOLL_BLOCKS_NONE && (!c->send.root_only || am_root);
}
static inline bool rcoll_coll_receives(const rcoll_coll_info_t *c, bool am_root)
{
    return c->recv.blocks != RCOLL_BLOCKS_NONE && (!c->recv.root_only || am_root);
}

/* The checks of a call every form shares: the root (rooted collectives), then, for the forms
 * without v and a call that moves data, the buffers this rank must name (NULL where its side
 * holds data, RCOLL_IN_PLACE where only the root may give it). NULL when the call is good,
 * else what is wrong (the entry point's error message). */
const char *rcoll_coll_check(const rcoll_coll_info_t *c, int rank, int size, int root,
                             const void *sendbuf, const void *recvbuf, size_t bytes);

#endif
