/* A team's sub-teams, for the node-aware (composed) algorithms of [qian-phd] chapters 4-5: the
 * node team (the ranks of my node, shared memory only, node-team rank = local index) and my
 * group team (the ranks whose local index is mine, one per node that has one; group 0 is the
 * leaders, group-0 rank k = the leader of node k). Built once, at the first call of a composed
 * algorithm, by every rank of the team at once over the team's own allgather; a composed
 * algorithm is a sequence of ordinary calls on these teams, so every flat algorithm, its
 * selection and its sequence numbers serve inside a node and between nodes. */
#ifndef RCOLL_CORE_HIER_H
#define RCOLL_CORE_HIER_H

#include <stdbool.h>
#include "core/team.h"

typedef struct rcoll_hier {
    rcoll_status_t status;      /* RCOLL_OK on every rank, or the sub-teams do not exist anywhere */
    struct rcoll_team *node;    /* my node's ranks */
    struct rcoll_team *group;   /* the ranks with my local index */
    int groups;                 /* the number of groups: the most ranks on one node */
    int *lidx_of;               /* per team rank: its index on its node */
    int *node_size;             /* per node: its ranks */
    int *node_first;            /* per node: its leader (its lowest team rank) */
    int *node_off;              /* per node: its first block in node-major order (ranks before) */
    int *group_size;            /* per local index g: the nodes that have a rank g */
    int *group_off;             /* per g: the first block of group g in group-major order */
    int *node_major;            /* per team rank: its position in node-major order */
    int *group_major;           /* per team rank: its position in group-major order */
    int *rank_at;               /* per node-major position: the team rank there */
    size_t *counts;             /* 4 * size counts and displacements a composed call may use */
    bool blocked;               /* node-major order is rank order (nodes' ranks consecutive) */
} rcoll_hier_t;

/* The sub-teams of `t`, built on the first call by every rank of `t` together (a collective
 * call of `t`); NULL when they cannot exist (a team on one node or with one rank per node) or
 * their building failed (then on every rank alike, the reason in the team's error). */
rcoll_hier_t *rcoll_hier_get(struct rcoll_team *t);
/* Whether a composed algorithm may run on `t`: NULL, or why not (every rank agrees). */
const char *rcoll_hier_not_for(const struct rcoll_team *t);
void rcoll_hier_destroy(rcoll_hier_t *h);

/* A sub-call returned `st`: the status the composed call keeps going with. A size error
 * (RCOLL_ERR_TRUNCATE) lets the call go on to its end (peers wait for the rest), reported at
 * the end; any other error stops it. `*first` keeps the first error; the sub-team's message is
 * copied to the team's. */
bool rcoll_hier_step(struct rcoll_team *t, struct rcoll_team *sub, rcoll_status_t st,
                     rcoll_status_t *first);

#endif
