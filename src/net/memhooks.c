/* The memory monitor (memhooks.h): UCX's libucm hooks, where rcoll is built with UCX. */
#include "net/memhooks.h"

#ifdef RCOLL_HAVE_UCM
#include <ucm/api/ucm.h>

static void on_unmap(ucm_event_type_t type, ucm_event_t *ev, void *arg)
{
    rcoll_memhook_t *h = arg;
    if (type == UCM_EVENT_VM_UNMAPPED)
        h->cb(h->arg, (uintptr_t)ev->vm_unmapped.address, ev->vm_unmapped.size);
}

int rcoll_memhooks_add(rcoll_memhook_t *h, const char **why)
{
    h->installed = ucm_set_event_handler(UCM_EVENT_VM_UNMAPPED, 0, on_unmap, h) == UCS_OK;
    if (!h->installed)
        *why = "UCX memory hooks unavailable";
    return h->installed ? 0 : -1;
}

void rcoll_memhooks_remove(rcoll_memhook_t *h)
{
    if (h->installed)
        ucm_unset_event_handler(UCM_EVENT_VM_UNMAPPED, on_unmap, h);
    h->installed = false;
}

#else

int rcoll_memhooks_add(rcoll_memhook_t *h, const char **why)
{
    h->installed = false;
    *why = "no memory monitor in this build (rcoll without UCX's libucm)";
    return -1;
}

void rcoll_memhooks_remove(rcoll_memhook_t *h) { h->installed = false; }

#endif
