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

rcoll_status_t rcoll_tl_create(const rcoll_view_t *v, const rcoll_oob_t *oob, rcoll_tl_t **out)
{
    return rcoll_node_tl_create(v, oob, out);
}
