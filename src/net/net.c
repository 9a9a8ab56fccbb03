/* The network-channel factory (net.h): which channels this build has, and which one a team
 * spanning nodes uses (RCOLL_NET=auto or a channel's name; auto: the first in rcoll_net_channels).
 * Adding a channel: its folder, its entry in the list below, its CMake file
 * (docs/contributing.md). */
#include "net/net.h"

#include <stdio.h>
#include <string.h>

#ifdef RCOLL_HAVE_UCX
extern const rcoll_net_ops_t rcoll_net_ucx;
#endif
#ifdef RCOLL_HAVE_OFI
extern const rcoll_net_ops_t rcoll_net_ofi;
#endif

/* The one list of network channels: the factory, rcoll-info and the tests read it. */
const rcoll_net_ops_t *const rcoll_net_channels[] = {
#ifdef RCOLL_HAVE_UCX
    &rcoll_net_ucx,
#endif
#ifdef RCOLL_HAVE_OFI
    &rcoll_net_ofi,
#endif
    NULL,
};
_Static_assert(sizeof rcoll_net_channels / sizeof rcoll_net_channels[0] <= RCOLL_NET_SLOTS + 1,
               "more channels than RCOLL_NET_SLOTS");

/* The channels built in, as "ucx, ofi". */
void rcoll_network_channels(char *out, size_t len)
{
    size_t n = 0;
    out[0] = '\0';
    for (int i = 0; rcoll_net_channels[i] && n < len; i++)
        n += (size_t)snprintf(out + n, len - n, "%s%s", i ? ", " : "", rcoll_net_channels[i]->name);
}

const rcoll_net_ops_t *rcoll_net_choose(const rcoll_config_t *cfg, char *why, size_t why_len)
{
    for (int i = 0; rcoll_net_channels[i]; i++)
        if (!cfg->net[0] || !strcmp(rcoll_net_channels[i]->name, cfg->net))
            return rcoll_net_channels[i];
    char built[64];
    rcoll_network_channels(built, sizeof built);
    if (!cfg->net[0])
        snprintf(why, why_len, "this rcoll was built without a network channel (neither UCX nor "
                 "libfabric): it runs teams on one node only");
    else
        snprintf(why, why_len, "RCOLL_NET=%s: this rcoll has no such network channel (built in: %s)",
                 cfg->net, built[0] ? built : "none");
    return NULL;
}

rcoll_net_ctx_t **rcoll_net_ctx_slot(const rcoll_view_t *v, const rcoll_net_ops_t *ops)
{
    int i = 0;
    while (rcoll_net_channels[i] && rcoll_net_channels[i] != ops)
        i++;
    return &v->net_ctx[i];
}

/* The out-of-band exchange of a channel's creation, which runs under the hold: it lets go of
 * the hold while it exchanges with the other processes, as a wait does while it pauses (a peer
 * may need this process's other threads to work the network before it comes to the exchange). */
typedef struct {
    const rcoll_oob_t *oob;
    rcoll_hold_t *hold;
} released_oob_t;

static int allgather_released(const void *sendbuf, void *recvbuf, size_t len, void *arg)
{
    const released_oob_t *r = arg;
    unsigned held = rcoll_hold_let_go(r->hold);
    int rc = r->oob->allgather(sendbuf, recvbuf, len, r->oob->coll_info);
    rcoll_hold_retake(r->hold, held);
    return rc;
}

rcoll_status_t rcoll_net_create(const rcoll_view_t *v, const rcoll_oob_t *oob, void *area,
                                size_t area_bytes, rcoll_net_t **out)
{
    char why[200];
    const rcoll_net_ops_t *ops = rcoll_net_choose(v->cfg, why, sizeof why);
    *out = NULL;
    if (!ops) /* every rank reads the same configuration and build: all refuse alike */
        return rcoll_view_error(v, RCOLL_ERR_UNSUPPORTED, "team spans %d nodes: %s", v->node_count, why);
    released_oob_t r = {oob, v->net_hold};
    rcoll_oob_t released = *oob;
    released.allgather = allgather_released;
    released.coll_info = &r;
    bool h = rcoll_hold_take(v->net_hold);
    rcoll_status_t st = ops->create(v, &released, area, area_bytes, out);
    if (st == RCOLL_OK)
        (*out)->hold = v->net_hold;
    rcoll_hold_give(v->net_hold, h);
    return st;
}

void rcoll_net_ctx_destroy_all(rcoll_net_ctx_t **slots)
{
    for (int i = 0; rcoll_net_channels[i]; i++) {
        rcoll_net_ctx_t **slot = &slots[i];
        if (*slot)
            rcoll_net_channels[i]->ctx_destroy(*slot);
        *slot = NULL;
    }
}

bool rcoll_net_ctx_any(rcoll_net_ctx_t *const *slots)
{
    for (int i = 0; slots && rcoll_net_channels[i]; i++)
        if (slots[i])
            return true;
    return false;
}

unsigned rcoll_net_ctx_look_all(rcoll_net_ctx_t *const *slots, rcoll_hold_t *hold)
{
    unsigned done = 0;
    bool h = rcoll_hold_take(hold);
    for (int i = 0; slots && rcoll_net_channels[i]; i++)
        if (slots[i])
            done += rcoll_net_channels[i]->ctx_look(slots[i]);
    rcoll_hold_give(hold, h);
    return done;
}

void rcoll_net_cache_stats(rcoll_net_ctx_t *const *slots, rcoll_hold_t *hold, rcoll_reg_cache_stats_t *out)
{
    memset(out, 0, sizeof *out);
    bool h = rcoll_hold_take(hold);
    for (int i = 0; slots && rcoll_net_channels[i]; i++) {
        rcoll_reg_cache_stats_t one;
        if (!slots[i])
            continue;
        rcoll_net_channels[i]->cache_stats(slots[i], &one);
        *out = one; /* a context uses one channel (RCOLL_NET is read once) */
    }
    rcoll_hold_give(hold, h);
}
