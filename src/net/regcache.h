/* The registration cache every network channel uses for user buffers (one per context and
 * channel kind).
 *
 * User buffers that peers write into or read from are registered once and kept in a bounded
 * LRU list of RCOLL_REG_CACHE entries, looked up by address range (page-rounded). An entry dies
 * when the memory under it is unmapped: the memory monitor (memhooks: UCX's libucm where it is
 * built in; munmap, mremap, brk shrinking, shmdt) marks it invalid before the pages go, and it
 * is deregistered at the next lookup. free() of a small block keeps its pages mapped (and
 * registered correctly); free() of a large one unmaps them and a later malloc at the same
 * address gets a new registration. Without a monitor nothing is cached: every call registers
 * its buffer and drops it when it leaves (rcoll_regcache_release_call).
 *
 * The channel supplies how to register and deregister (rcoll_regcache_ops_t); the cache knows
 * nothing of any network library. */
#ifndef RCOLL_NET_REGCACHE_H
#define RCOLL_NET_REGCACHE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "net/memhooks.h"
#include "net/net.h"

typedef struct {
    void *arg; /* the channel's per-context state */
    /* Registers [start, end): a handle, and the key peers need (at most RCOLL_NET_KEY_MAX
     * bytes) in key/key_len. 0, or -1 with a message in err. */
    int (*reg)(void *arg, uintptr_t start, uintptr_t end, void **handle, unsigned char *key,
               uint32_t *key_len, char *err, size_t err_len);
    void (*dereg)(void *arg, void *handle);
} rcoll_regcache_ops_t;

typedef struct {
    uintptr_t start, end;
    void *handle;
    uint64_t id;
    uint64_t last_use;
    _Atomic int invalid; /* set by the memory monitor */
    bool used;
    uint32_t key_len;
    unsigned char key[RCOLL_NET_KEY_MAX];
} rcoll_reg_entry_t;

typedef struct rcoll_regcache {
    rcoll_regcache_ops_t ops;
    rcoll_reg_entry_t *reg;
    unsigned cap;
    uint64_t clock, next_id;
    rcoll_memhook_t hook;
    rcoll_reg_cache_stats_t stats;
} rcoll_regcache_t;

/* `capacity` entries (0: no cache). Installs the memory monitor; without it the cache holds
 * nothing (stats.hooks false) and `why` says so for a warning. */
int rcoll_regcache_init(rcoll_regcache_t *c, unsigned capacity, const rcoll_regcache_ops_t *ops,
                        const char **why);
void rcoll_regcache_fini(rcoll_regcache_t *c);
/* Registers [addr, addr+len) (a hit, or a new entry; without the cache, `call` holds this
 * call's registration, replacing the previous one) and describes it in `out`. */
rcoll_status_t rcoll_regcache_get(rcoll_regcache_t *c, rcoll_reg_entry_t *call, void *addr,
                                  size_t len, rcoll_net_advert_t *out, char *err, size_t err_len);
/* Drops this call's registration (the cache is off). */
void rcoll_regcache_release_call(rcoll_regcache_t *c, rcoll_reg_entry_t *call);
/* The entry that describes a registration id (NULL: gone); for channels whose registration
 * handle a local operation needs (a read into a registered buffer). */
const rcoll_reg_entry_t *rcoll_regcache_find(const rcoll_regcache_t *c, const rcoll_reg_entry_t *call,
                                             void *addr, size_t len);

#endif
