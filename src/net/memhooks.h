/* The memory monitor of the registration cache: tells a callback that [start, start+len) is
 * about to be unmapped (munmap, mremap, brk shrinking, shmdt), so registrations over it die.
 * Over UCX's libucm where it is built in (UCM_EVENT_VM_UNMAPPED); elsewhere there is none and
 * rcoll_memhooks_add fails (the cache then registers per call). */
#ifndef RCOLL_NET_MEMHOOKS_H
#define RCOLL_NET_MEMHOOKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    void (*cb)(void *arg, uintptr_t start, size_t len);
    void *arg;
    bool installed;
} rcoll_memhook_t;

/* Installs h (it must stay in place until removed): 0, or -1 with the reason in *why. */
int rcoll_memhooks_add(rcoll_memhook_t *h, const char **why);
void rcoll_memhooks_remove(rcoll_memhook_t *h);

#endif
