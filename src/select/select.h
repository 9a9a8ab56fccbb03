/* The algorithm registry (by way of the collective table, coll/colls.h), the decision of which
 * algorithm runs a call -- RCOLL_TUNE's ranges, RCOLL_<COLL>_ALGO, then the default table of
 * size ranges per (collective, layout) -- with a readable explanation of every choice, and the
 * one place where an algorithm that does not apply to a call gives way to its fallback. */
#ifndef RCOLL_SELECT_H
#define RCOLL_SELECT_H

#include <stdbool.h>
#include <stddef.h>
#include "coll/coll.h"

const rcoll_algo_t *rcoll_algo_find(rcoll_coll_t coll, const char *name);
/* Names of the algorithms of `coll`, comma separated. */
void rcoll_algo_names(rcoll_coll_t coll, char *buf, size_t len);

/* The decision for a call of `coll` whose size is `bytes` (ignored where the size does not
 * select: barrier, the v-forms) on a team of `size` ranks, at most `ppn` of them on one node
 * (ppn < size: the team spans nodes), which run on `cores` cores per node (ppn > cores: ranks
 * outnumber cores, "crowded"). In order: the last RCOLL_TUNE range of the collective that holds
 * `bytes`, RCOLL_<COLL>_ALGO (its error, naming the valid algorithms, when the name is
 * unknown), the default table. Writes why into `why` unless it is NULL (the fast path). */
const rcoll_algo_t *rcoll_select(const rcoll_config_t *cfg, rcoll_coll_t coll, size_t bytes,
                                 int size, int ppn, int cores, char *why, size_t why_len);

/* The default decision alone (no RCOLL_TUNE, no RCOLL_<COLL>_ALGO): a sub-team's, and the
 * cost model's for a sub-team call. */
const rcoll_algo_t *rcoll_select_default(const rcoll_config_t *cfg, rcoll_coll_t coll, size_t bytes,
                                         int size, int ppn, int cores, int share, char *why,
                                         size_t why_len);
/* rcoll_select for a team whose nodes share hosts, `share` nodes a host (emulated nodes; the
 * cost model's H, select/model.h); rcoll_select is this with share 1. */
const rcoll_algo_t *rcoll_select_shared(const rcoll_config_t *cfg, rcoll_coll_t coll, size_t bytes,
                                        int size, int ppn, int cores, int share, char *why,
                                        size_t why_len);

/* Whether RCOLL_TUNE names `coll` (then RCOLL_<COLL>_ALGO cannot be resolved once per team:
 * RCOLL_TUNE's ranges come first). */
bool rcoll_tune_names(const rcoll_config_t *cfg, rcoll_coll_t coll);

/* What runs the call: `a`, or, where a->not_for gives a reason, its fallback (and so on), the
 * reason of the first one that gave way written to *why_not (NULL when `a` runs). Every rank
 * decides alike (not_for reads only what every rank agrees on: coll/coll.h). */
const rcoll_algo_t *rcoll_fallback(const rcoll_algo_t *a, const rcoll_args_t *args,
                                   const char **why_not);

/* The consistency of the tables (unit test): every row of the collective table at its value,
 * its algorithms its own, fallbacks of the same collective without a cycle; the default table's
 * ranges ascending to inf, its algorithms of its collective, every layout covered. 0 if all
 * hold, else -1 with what does not in `err`. */
int rcoll_select_check_tables(char *err, size_t len);

#endif
