/* Waiting: the one mechanism every rcoll wait goes through. A wait spins briefly, then yields
 * the core, then blocks on a futex on the 64-bit word it waits for (the waiter count in the same
 * cache line tells the writer to wake it; where the lines have a watch word, that word first
 * tells whether anyone sleeps at all); it always ends at the configured timeout. */
#ifndef RCOLL_SIGNAL_WAIT_H
#define RCOLL_SIGNAL_WAIT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include "config/config.h"

/* A waitable word in shared memory: the value one writer raises, the count of sleepers, and
 * room for a small payload that travels in the same cache line (the "inline" data). */
#define RCOLL_LINE_PAYLOAD 48
typedef struct {
    _Atomic uint64_t value;
    _Atomic uint32_t waiters;
    uint32_t len;
    unsigned char payload[RCOLL_LINE_PAYLOAD];
} __attribute__((aligned(64))) rcoll_line_t;

/* Raise a line's value so that everything written before is visible first (release), and
 * wake a sleeper if there is one. */
void rcoll_line_post(rcoll_line_t *line, uint64_t value);
/* The same for a line of a set whose sleepers also count themselves in `watch`, a word in a
 * cache line of its own (rcoll_waiter_t.watch): the line itself is read only while somebody
 * sleeps. A read of the line just posted, which its reader polls, waits for the line to come
 * back from the reader's core: np=2, a barrier 273 -> 190 ns, allreduce of 8 B 284 -> 214 ns
 * (docs/tuning.md, "Posting without looking back"). */
void rcoll_line_post_watched(rcoll_line_t *line, uint64_t value, const _Atomic uint32_t *watch);
/* A bell: a line whose value only counts "look again". Ringing costs a write only when its
 * owner sleeps (rcoll_waiter_sleep_unless registers first and looks again; a wake lost to a
 * write still in flight costs the sleeper the rest of its slice, as with rcoll_line_post). */
void rcoll_line_bump(rcoll_line_t *line);
void rcoll_line_ring(rcoll_line_t *line);
static inline bool rcoll_line_reached(rcoll_line_t *line, uint64_t target)
{
    return atomic_load_explicit(&line->value, memory_order_acquire) >= target;
}

/* A hold: the lock a thread keeps while it works something several threads of the process share
 * (the network channel of a context: one UCX worker or libfabric endpoint for all its teams,
 * worked by the teams' progress threads and the program's threads alike), and lets go of
 * whenever it pauses in a wait whose policy names it (rcoll_waiter_pause*), so that another
 * thread's wait works the channel meanwhile; it takes it again before it looks once more. Off
 * (taking it does nothing) until rcoll_hold_enable, which a thread calls before it starts a
 * second thread that may use what the hold guards. Recursive: the thread holding it may take
 * it again. */
typedef struct {
    pthread_mutex_t mutex;
    _Atomic bool on;
    _Atomic uintptr_t owner; /* the holder's pthread_self(); 0: nobody */
    unsigned depth;          /* the holder's takes not yet given back */
} rcoll_hold_t;
void rcoll_hold_init(rcoll_hold_t *h);
void rcoll_hold_destroy(rcoll_hold_t *h);
void rcoll_hold_enable(rcoll_hold_t *h);
/* Takes h (NULL or off: nothing); returns whether it did, for rcoll_hold_give. */
static inline bool rcoll_hold_take(rcoll_hold_t *h)
{
    if (!h || !atomic_load_explicit(&h->on, memory_order_relaxed))
        return false;
    uintptr_t me = (uintptr_t)pthread_self();
    if (atomic_load_explicit(&h->owner, memory_order_relaxed) != me) {
        pthread_mutex_lock(&h->mutex);
        atomic_store_explicit(&h->owner, me, memory_order_relaxed);
    }
    h->depth++;
    return true;
}
static inline void rcoll_hold_give(rcoll_hold_t *h, bool taken)
{
    if (!taken || --h->depth > 0)
        return;
    atomic_store_explicit(&h->owner, 0, memory_order_relaxed);
    pthread_mutex_unlock(&h->mutex);
}
/* Lets go of h entirely if this thread holds it, for a pause or an exchange with other
 * processes; returns the depth to restore with rcoll_hold_retake (0: it did not hold it). */
unsigned rcoll_hold_let_go(rcoll_hold_t *h);
void rcoll_hold_retake(rcoll_hold_t *h, unsigned depth);

typedef struct {
    rcoll_wait_mode_t mode;
    unsigned spin_iters;   /* polls before the first yield */
    unsigned yield_iters;  /* yields before blocking (auto mode) */
    uint64_t timeout_ns;   /* 0: never */
    uint64_t block_slice_ns; /* longest single futex sleep before re-checking */
    bool crowded;            /* ranks outnumber cores (auto mode) */
    unsigned idle_core_polls; /* crowded: polls allowed while no rank sharing my core needs it */
    rcoll_hold_t *hold;       /* NULL, or let go of by a waiting thread holding it while it pauses */
} rcoll_wait_policy_t;

/* The policy for `local_ranks` processes that may run on `cores` cores of this node; `network`:
 * the team spans nodes, so every look also asks the network (a system call) and network writes
 * wake no sleeper. */
void rcoll_wait_policy_init(rcoll_wait_policy_t *policy, const rcoll_config_t *cfg, int local_ranks,
                            int cores, bool network);

typedef struct {
    const rcoll_wait_policy_t *policy;
    uint64_t start_ns;
    uint64_t polls;
    unsigned idle_core_polls;
    /* NULL, or the watch word of the lines this wait sleeps on (rcoll_line_post_watched): a
     * sleep counts itself there too. Set by the caller after rcoll_waiter_start. */
    _Atomic uint32_t *watch;
} rcoll_waiter_t;

uint64_t rcoll_now_ns(void);
void rcoll_waiter_start(rcoll_waiter_t *w, const rcoll_wait_policy_t *policy);
/* One pause while nothing was ready: spin, yield or sleep on `line` until it may have reached
 * `target` (line NULL: sleep one slice of the policy). RCOLL_ERR_TIMEOUT once the policy's timeout has passed since the start. */
rcoll_status_t rcoll_waiter_pause(rcoll_waiter_t *w, rcoll_line_t *line, uint64_t target);
/* A pause while what we wait for arrives through a file descriptor (a network worker armed
 * for events): when ranks outnumber cores, or once the wait has reached its blocking phase,
 * sleep in poll() on fd for up to one slice; otherwise as rcoll_waiter_pause without a line. */
rcoll_status_t rcoll_waiter_pause_fd(rcoll_waiter_t *w, int fd);
/* The sleeping phase of a wait on a bell: registers as a sleeper of `bell`, then asks
 * ready(arg) once more, and sleeps one slice on the bell unless it is ready (a ringer that
 * changed what ready() reads before it saw the registration is seen by that look; one after
 * it rings). Returns the timeout as rcoll_waiter_pause. */
rcoll_status_t rcoll_waiter_sleep_unless(rcoll_waiter_t *w, rcoll_line_t *bell, bool (*ready)(void *arg),
                                         void *arg);
/* Ranks outnumber cores, yet none of those sharing mine needs it now (the caller knows): poll
 * again without giving the core away, so a core-mate that is only waiting too is not switched
 * in for nothing. False, doing nothing, once the policy's budget for this wait is spent. */
bool rcoll_waiter_idle_core_poll(rcoll_waiter_t *w);
/* Instead of a pause: what the caller polls (a network worker) did something, so it looks again
 * at once; counts as a poll (the policy's phases advance) and ends at the timeout. */
rcoll_status_t rcoll_waiter_progressed(rcoll_waiter_t *w);
/* True when the wait has entered its blocking phase (callers check peer liveness then). */
bool rcoll_waiter_is_sleeping(const rcoll_waiter_t *w);

#endif
