/* The cost model's selection (docs/tuning.md, "Cost model"): for a team spanning nodes with
 * several ranks on a node, every algorithm of the collective with a formula (coll/cost.h) is
 * priced for the call's shape and the cheapest runs. */
#ifndef RCOLL_SELECT_MODEL_H
#define RCOLL_SELECT_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include "coll/coll.h"

/* Whether the model decides calls of `coll` on a team of `size` ranks, at most `ppn` on one
 * node: the team spans nodes, some node holds several ranks, and the collective has a
 * node-aware algorithm with a formula that may be chosen (the v-forms' have none: their rules
 * decide; one that runs by name only does not count). */
bool rcoll_model_decides(rcoll_coll_t coll, int size, int ppn);

/* `share`: the nodes that share one host (1 on a cluster; emulated nodes on one machine: all of
 * them), coll/cost.h's H. */
/* The algorithm with the least predicted time, never one that runs by name only (`why`, when
 * not NULL: every candidate's prediction, the pick first). */
const rcoll_algo_t *rcoll_model_pick(const rcoll_config_t *cfg, rcoll_coll_t coll, size_t bytes,
                                     int size, int ppn, int cores, int share, char *why, size_t why_len);

/* The predicted time of `a` (microseconds), or a negative value where it has no formula. */
double rcoll_model_predict(const rcoll_config_t *cfg, const rcoll_algo_t *a, size_t bytes,
                           int size, int ppn, int cores, int share);

#endif
