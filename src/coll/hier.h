/* What the node-aware (composed) algorithms share: their applicability, the sub-teams, and the
 * rule for a sub-call's status (core/hier.h). A composed algorithm is a sequence of ordinary
 * calls on the node team and the group team; every rank of a sub-team makes the same calls in
 * the same order, so each sub-team's sequence numbers stay in step. */
#ifndef RCOLL_COLL_HIER_H
#define RCOLL_COLL_HIER_H

#include "coll/coll.h"
#include "core/hier.h"

/* not_for of every composed algorithm: the team spans nodes with several ranks on some. */
static inline const char *rcoll_composed_not_for(const rcoll_args_t *a)
{
    return rcoll_hier_not_for(a->team);
}

/* Whether every node has the same number of ranks (agreed: the layout is known to all). */
static inline bool rcoll_hier_even(const struct rcoll_team *t)
{
    return t->ppn_max * t->node_count == t->size;
}

/* Goes on after a sub-call (see rcoll_hier_step); `first` keeps the first error. */
#define HIER_STEP(a, sub, call, first)                                                          \
    do {                                                                                         \
        if (!rcoll_hier_step((a)->team, (sub), (call), &(first)))                               \
            return (first);                                                                      \
    } while (0)

#endif
