/* The algorithm registry and the default decision by (collective, bytes, team size,
 * processes per node), with user overrides and a readable explanation of every choice. */
#ifndef RCOLL_SELECT_H
#define RCOLL_SELECT_H

#include <stddef.h>
#include "coll/coll.h"

const rcoll_algo_t *rcoll_algo_find(rcoll_coll_t coll, const char *name);
/* Names of the algorithms of `coll`, comma separated. */
void rcoll_algo_names(rcoll_coll_t coll, char *buf, size_t len);

/* The decision: the override of the configuration if any (its error, naming the valid
 * algorithms, when the name is unknown), else the default table. Writes why into `why` unless it is NULL (the fast path). */
/* `cores`: how many cores the ranks of one node can run on (ranks outnumber them: "crowded"). */
const rcoll_algo_t *rcoll_select(const rcoll_config_t *cfg, rcoll_coll_t coll, size_t bytes,
                                 int size, int ppn, int cores, char *why, size_t why_len);

#endif
