/* The arrival-order sweep every one-step algorithm runs: a list of pending items (peers to
 * write to, peers to read from), each tried in turn; what is ready is done at once, and only
 * when a whole pass found nothing ready does the rank pause (the wait policy) on the first
 * pending item's event -- never blocking on one late peer while another's work is ready. */
#ifndef RCOLL_COLL_SWEEP_H
#define RCOLL_COLL_SWEEP_H

#include "coll/coll.h"

/* Tries one item: > 0 done, 0 not ready (a signal not seen yet, a receiver not arrived yet),
 * < 0 a status. */
typedef int (*rcoll_sweep_step_fn)(rcoll_args_t *a, void *ctx, int item);
/* The event that would make the item ready (paused on when nothing was). */
typedef rcoll_event_t (*rcoll_sweep_event_fn)(rcoll_args_t *a, void *ctx, int item);

/* Passes over items[0..count) until all are done. Items keep their order (the preferred one
 * first); `items` is used as scratch. */
rcoll_status_t rcoll_sweep(rcoll_args_t *a, int *items, int count, rcoll_sweep_step_fn step,
                           rcoll_sweep_event_fn event, void *ctx);

/* Items: the other ranks in the order rank+1, rank+2, ... (wrapping); returns their count. */
int rcoll_sweep_others(const rcoll_args_t *a, int *items);

#endif
