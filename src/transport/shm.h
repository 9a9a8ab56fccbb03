/* The shared-memory transport: one POSIX shm segment per node per team. */
#ifndef RCOLL_TRANSPORT_SHM_H
#define RCOLL_TRANSPORT_SHM_H

#include "transport/transport.h"

/* Collective over the team (uses the out-of-band allgather three times); the outcome is agreed
 * by all ranks of the team. The segment is unlinked before this returns. */
rcoll_status_t rcoll_shm_create(struct rcoll_team *team, const rcoll_oob_t *oob, rcoll_tl_t **out);

#endif
