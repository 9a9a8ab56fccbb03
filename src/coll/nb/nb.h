/* The nonblocking engine's algorithms on the board (transport/board.h): how a request's call is
 * posted and how one pass moves what this rank can move now. Every algorithm is one-sided: a
 * rank inside rcoll moves the data of the ranks that are not (docs/nonblocking.md). */
#ifndef RCOLL_COLL_NB_H
#define RCOLL_COLL_NB_H

#include <stdbool.h>
#include "core/request.h"
#include "transport/board.h"

typedef struct rcoll_nb_algo {
    const char *name;
    const char *summary;
    bool (*applies)(rcoll_coll_t coll);
    /* Optional: true when the call's data rides in its slot's head run alone, so that its
     * post needs no inline area (rcoll_board_area_free); without it every post waits for one. */
    bool (*head_only)(const struct rcoll_request *r, rcoll_board_t *b);
    /* Posts the request's call (r->seq, r->args) on the board; the slot is free, and so is the
     * inline area when r->area. */
    rcoll_status_t (*start)(struct rcoll_request *r, rcoll_board_t *b);
    /* One pass: moves what it can; true once this rank's part is complete (*st its result). */
    bool (*progress)(struct rcoll_request *r, rcoll_board_t *b, rcoll_status_t *st);
} rcoll_nb_algo_t;

extern const rcoll_nb_algo_t rcoll_nb_pairs;
extern const rcoll_nb_algo_t rcoll_nb_binomial_forward;

/* A slot that is not free yet because a peer has not taken what I posted inline in it
 * collectives ago (it is busy outside rcoll): I write it into the peer's buffer myself. */
rcoll_status_t rcoll_nb_rescue(rcoll_board_t *b, uint64_t seq);

/* Per peer, the regions of my call (r->args) that go to it and come from it (mine: none). */
void rcoll_nb_regions(const struct rcoll_request *r, int peer, rcoll_region_t *send, rcoll_region_t *recv);

#endif
