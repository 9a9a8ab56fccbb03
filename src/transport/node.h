/* The node transport: shared memory to ranks on my node, a network channel (net/net.h) to
 * ranks on other nodes. */
#ifndef RCOLL_TRANSPORT_NODE_H
#define RCOLL_TRANSPORT_NODE_H

#include "transport/transport.h"

/* Collective over the team (uses the out-of-band allgather twice, or not at all where it takes
 * over a kept segment offered in every rank's hello, and the network channel's creation when
 * the team spans nodes); the outcome is agreed by all ranks of the team. The segment is
 * unlinked before this returns. */
rcoll_status_t rcoll_node_tl_create(const rcoll_view_t *v, const rcoll_oob_t *oob,
                                    const rcoll_tl_hello_t *hellos, struct rcoll_tl_prep *prep,
                                    rcoll_tl_t **out);
/* rcoll_tl_hello and rcoll_tl_hello_drop (transport.h) of the node transport. */
struct rcoll_tl_prep *rcoll_node_tl_hello(struct rcoll_seg_pool *pool, const rcoll_config_t *cfg,
                                          const rcoll_tl_probe_t *probe, int rank, int size,
                                          rcoll_tl_hello_t *out);
void rcoll_node_tl_hello_drop(struct rcoll_seg_pool *pool, struct rcoll_tl_prep *prep);

/* The segments of destroyed teams on one node that a process keeps for a later team of the
 * same processes (at most `max`; NULL for 0): one per context, destroyed with it (unmapping
 * what it holds). Thread-safe. */
struct rcoll_seg_pool *rcoll_seg_pool_create(unsigned max);
void rcoll_seg_pool_destroy(struct rcoll_seg_pool *pool);

#endif
