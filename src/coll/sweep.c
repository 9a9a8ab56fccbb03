/* The arrival-order sweep: see sweep.h. */
#include "coll/sweep.h"

#include <stdbool.h>

static int pass(rcoll_args_t *a, int *items, int *count, rcoll_sweep_step_fn step, void *ctx)
{
    int left = 0, done = 0;
    for (int i = 0; i < *count; i++) {
        int r = step(a, ctx, items[i]);
        if (r < 0)
            return r;
        if (r > 0)
            done++;
        else
            items[left++] = items[i];
    }
    *count = left;
    return done;
}

rcoll_status_t rcoll_sweep(rcoll_args_t *a, int *items, int count, rcoll_sweep_step_fn step,
                           rcoll_sweep_event_fn event, void *ctx)
{
    rcoll_waiter_t w;
    bool waiting = false; /* the waiter starts (reads the clock) at the first pause only */
    while (count > 0) {
        int done = pass(a, items, &count, step, ctx);
        if (done < 0)
            return (rcoll_status_t)done;
        if (done > 0 || count == 0)
            continue;
        if (!waiting)
            rcoll_waiter_start(&w, &a->team->wait), waiting = true;
        rcoll_event_t ev = event(a, ctx, items[0]);
        rcoll_status_t st = a->tl->ops->pause(a->tl, &w, &ev);
        if (st != RCOLL_OK)
            return st;
    }
    return RCOLL_OK;
}

int rcoll_sweep_others(const rcoll_args_t *a, int *items)
{
    for (int i = 1; i < a->size; i++)
        items[i - 1] = (a->rank + i) % a->size;
    return a->size - 1;
}
