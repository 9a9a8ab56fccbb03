/* What every transport shares: the wait for one event, built on the transport's own test and
 * pause (so the transport's progress runs while it waits). */
#include "transport/transport.h"
#include "transport/node.h"

rcoll_status_t rcoll_tl_wait(rcoll_tl_t *tl, const rcoll_event_t *ev)
{
    if (tl->ops->test(tl, ev) && tl->single_copy)
        return RCOLL_OK;
    rcoll_waiter_t w;
    rcoll_waiter_start(&w, tl->wait);
    while (!tl->ops->test(tl, ev)) {
        rcoll_status_t st = tl->ops->pause(tl, &w, ev);
        if (st != RCOLL_OK)
            return st;
    }
    return RCOLL_OK;
}

rcoll_status_t rcoll_tl_create(const rcoll_view_t *v, const rcoll_oob_t *oob,
                               const rcoll_tl_hello_t *hellos, struct rcoll_tl_prep *prep,
                               rcoll_tl_t **out)
{
    return rcoll_node_tl_create(v, oob, hellos, prep, out);
}

struct rcoll_tl_prep *rcoll_tl_hello(struct rcoll_seg_pool *pool, const rcoll_config_t *cfg,
                                     const rcoll_tl_probe_t *probe, int rank, int size,
                                     rcoll_tl_hello_t *out)
{
    return rcoll_node_tl_hello(pool, cfg, probe, rank, size, out);
}

void rcoll_tl_hello_drop(struct rcoll_seg_pool *pool, struct rcoll_tl_prep *prep)
{
    rcoll_node_tl_hello_drop(pool, prep);
}
