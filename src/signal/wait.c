/* Waiting: spin, then yield, then futex sleep with a waiter count; see wait.h. */
#include "signal/wait.h"

#include <linux/futex.h>
#include <poll.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long futex(_Atomic uint32_t *addr, int op, uint32_t val, const struct timespec *ts)
{
    return syscall(SYS_futex, (uint32_t *)addr, op, val, ts, NULL, 0);
}

/* The futex word is the low half of the 64-bit value (x86-64 and aarch64 are little-endian). */
static _Atomic uint32_t *futex_word(rcoll_line_t *line)
{
    return (_Atomic uint32_t *)(void *)&line->value;
}

/* No fence between the store and the check of sleepers: a full fence here would wait for the
 * store to reach the peer's cache before we may go on (about one cache-line transfer on every
 * signal, the whole latency of a small collective). The price: a sleeper that registered just
 * while our store was still in flight is not woken by us, and instead wakes at the end of its
 * sleep slice (block_slice_ns, 1 ms) and sees the value. */
void rcoll_line_post(rcoll_line_t *line, uint64_t value)
{
    atomic_store_explicit(&line->value, value, memory_order_release);
    if (atomic_load_explicit(&line->waiters, memory_order_relaxed))
        futex(futex_word(line), FUTEX_WAKE, INT32_MAX, NULL);
}

/* As rcoll_line_post, and with its price: a sleeper that registered (in the watch word, then
 * in the line) while our store was still in flight, and read the value before it, sleeps to
 * the end of its slice. */
void rcoll_line_post_watched(rcoll_line_t *line, uint64_t value, const _Atomic uint32_t *watch)
{
    atomic_store_explicit(&line->value, value, memory_order_release);
    if (atomic_load_explicit(watch, memory_order_relaxed) &&
        atomic_load_explicit(&line->waiters, memory_order_relaxed))
        futex(futex_word(line), FUTEX_WAKE, INT32_MAX, NULL);
}

void rcoll_line_bump(rcoll_line_t *line)
{
    atomic_fetch_add_explicit(&line->value, 1, memory_order_seq_cst);
    if (atomic_load_explicit(&line->waiters, memory_order_relaxed))
        futex(futex_word(line), FUTEX_WAKE, INT32_MAX, NULL);
}

/* No fence before the check of sleepers, as in rcoll_line_post: a full fence on every ring was
 * the largest single cost of a small nonblocking call (perf, np=2, 8 B). The price is the same:
 * a sleeper that registered while our write was still in flight, and whose look after
 * registering missed it, wakes at the end of its sleep slice. */
void rcoll_line_ring(rcoll_line_t *line)
{
    if (atomic_load_explicit(&line->waiters, memory_order_relaxed))
        rcoll_line_bump(line);
}

uint64_t rcoll_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void rcoll_wait_policy_init(rcoll_wait_policy_t *policy, const rcoll_config_t *cfg, int local_ranks,
                            int cores, bool network)
{
    bool crowded = local_ranks > cores;
    policy->mode = cfg->wait_mode;
    policy->crowded = crowded && cfg->wait_mode == RCOLL_WAIT_AUTO;
    policy->idle_core_polls = 20000;
    policy->hold = NULL;
    policy->timeout_ns = (uint64_t)(cfg->timeout_s * 1e9); /* at most 1e18 (RCOLL_TIMEOUT_MAX) */
    if (cfg->timeout_s > 0 && policy->timeout_ns == 0)
        policy->timeout_ns = 1; /* a timeout under 1 ns is 1 ns, not none */
    /* Network writes wake no futex sleeper: sleep in short slices. */
    policy->block_slice_ns = network ? 100 * 1000 : 1000 * 1000;
    switch (cfg->wait_mode) {
    case RCOLL_WAIT_SPIN: policy->spin_iters = UINT32_MAX; policy->yield_iters = 0; break;
    case RCOLL_WAIT_YIELD: policy->spin_iters = 64; policy->yield_iters = UINT32_MAX; break;
    case RCOLL_WAIT_BLOCK: policy->spin_iters = 64; policy->yield_iters = 0; break;
    case RCOLL_WAIT_AUTO:
        /* Each rank owning a core: spin ~50 us before giving the core away. Sharing cores: the
         * peer we wait for may need this very core, so yield at once (measured: 0-4 polls
         * before the first yield gave the fastest barriers at 4 ranks on 2 cores, 64 and
         * more were 2-20x slower). Across nodes every poll is also an epoll_wait on the
         * network: yielding at the first miss took small collectives 2-5% faster at np=4
         * over UCX tcp (docs/tuning.md). */
        /* Each rank owning a core never yields: a yield hands the core to whatever else is
         * runnable there (a CPU-bound process beside the job) for the rest of its time slice,
         * milliseconds, while the peer answers within microseconds. It spins ~10 ms (a wait
         * that long is long by measurement) and then sleeps on the futex. Sleeping sooner
         * (after 15-150 us) was as bad as yielding beside a busy process without binding: the
         * futex wake pulls the woken rank onto its waker's core, where the waker then spins
         * (np=2 beside `yes`, --bind-to none, docs/tuning.md). */
        policy->spin_iters = crowded ? (network ? 0 : 2) : 4000000;
        policy->yield_iters = crowded ? 2000 : 0;
        break;
    }
    if (cfg->spin_iters >= 0)
        policy->spin_iters = (unsigned)cfg->spin_iters;
    if (cfg->yield_iters >= 0)
        policy->yield_iters = (unsigned)cfg->yield_iters;
}

void rcoll_waiter_start(rcoll_waiter_t *w, const rcoll_wait_policy_t *policy)
{
    w->policy = policy;
    w->start_ns = 0;
    w->polls = 0;
    w->idle_core_polls = 0;
    w->watch = NULL;
}

bool rcoll_waiter_is_sleeping(const rcoll_waiter_t *w)
{
    return w->polls > (uint64_t)w->policy->spin_iters + w->policy->yield_iters;
}

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static void sleep_on(rcoll_line_t *line, uint64_t target, uint64_t slice_ns, _Atomic uint32_t *watch)
{
    if (watch)
        atomic_fetch_add_explicit(watch, 1, memory_order_seq_cst);
    atomic_fetch_add_explicit(&line->waiters, 1, memory_order_seq_cst);
    uint64_t seen = atomic_load_explicit(&line->value, memory_order_seq_cst);
    if (seen < target) {
        struct timespec ts = {(time_t)(slice_ns / 1000000000ull), (long)(slice_ns % 1000000000ull)};
        futex(futex_word(line), FUTEX_WAIT, (uint32_t)seen, &ts);
    }
    atomic_fetch_sub_explicit(&line->waiters, 1, memory_order_relaxed);
    if (watch)
        atomic_fetch_sub_explicit(watch, 1, memory_order_relaxed);
}

bool rcoll_waiter_idle_core_poll(rcoll_waiter_t *w)
{
    if (w->idle_core_polls >= w->policy->idle_core_polls)
        return false;
    w->idle_core_polls++;
    cpu_relax();
    return true;
}

/* One sleep: the policy's slice, shortened to what is left before the timeout. */
static uint64_t sleep_slice(const rcoll_waiter_t *w)
{
    const rcoll_wait_policy_t *p = w->policy;
    uint64_t slice = p->block_slice_ns;
    if (p->timeout_ns && w->start_ns) {
        uint64_t spent = rcoll_now_ns() - w->start_ns;
        if (spent < p->timeout_ns && p->timeout_ns - spent < slice)
            slice = p->timeout_ns - spent;
    }
    return slice;
}

/* The wait's clock starts at its first pause that looks at the time. */
static rcoll_status_t check_timeout(rcoll_waiter_t *w)
{
    const rcoll_wait_policy_t *p = w->policy;
    if (!p->timeout_ns)
        return RCOLL_OK;
    uint64_t now = rcoll_now_ns();
    if (!w->start_ns)
        w->start_ns = now;
    return now - w->start_ns >= p->timeout_ns ? RCOLL_ERR_TIMEOUT : RCOLL_OK;
}

void rcoll_hold_init(rcoll_hold_t *h)
{
    pthread_mutex_init(&h->mutex, NULL);
    atomic_init(&h->on, false);
    atomic_init(&h->owner, 0);
    h->depth = 0;
}

void rcoll_hold_destroy(rcoll_hold_t *h) { pthread_mutex_destroy(&h->mutex); }

void rcoll_hold_enable(rcoll_hold_t *h)
{
    /* Before the thread that needs it starts: pthread_create orders this store before the new
     * thread's first take, and no thread is inside a take or give of an off hold then but the
     * caller, which is not. */
    atomic_store_explicit(&h->on, true, memory_order_relaxed);
}

unsigned rcoll_hold_let_go(rcoll_hold_t *h)
{
    if (!h || atomic_load_explicit(&h->owner, memory_order_relaxed) != (uintptr_t)pthread_self())
        return 0;
    unsigned depth = h->depth;
    h->depth = 0;
    atomic_store_explicit(&h->owner, 0, memory_order_relaxed);
    pthread_mutex_unlock(&h->mutex);
    return depth;
}

void rcoll_hold_retake(rcoll_hold_t *h, unsigned depth)
{
    if (!depth)
        return;
    pthread_mutex_lock(&h->mutex);
    atomic_store_explicit(&h->owner, (uintptr_t)pthread_self(), memory_order_relaxed);
    h->depth = depth;
}

static rcoll_status_t pause_held(rcoll_waiter_t *w, rcoll_line_t *line, uint64_t target)
{
    const rcoll_wait_policy_t *p = w->policy;
    uint64_t n = w->polls++;
    if (n < p->spin_iters) {
        cpu_relax();
        if ((n & 1023) != 1023 || !p->timeout_ns)
            return RCOLL_OK;
    } else if (n < (uint64_t)p->spin_iters + p->yield_iters) {
        sched_yield();
    } else if (line) {
        sleep_on(line, target, sleep_slice(w), w->watch);
    } else {
        /* Nothing to sleep on (what we wait for arrives through another channel, e.g. the
         * network): sleep one slice, the caller progresses that channel in between. */
        uint64_t slice = sleep_slice(w);
        struct timespec ts = {(time_t)(slice / 1000000000ull), (long)(slice % 1000000000ull)};
        nanosleep(&ts, NULL);
    }
    return check_timeout(w);
}

/* A pause lets go of the policy's hold if this thread holds it (wait.h, rcoll_hold_t). */
rcoll_status_t rcoll_waiter_pause(rcoll_waiter_t *w, rcoll_line_t *line, uint64_t target)
{
    unsigned held = rcoll_hold_let_go(w->policy->hold);
    rcoll_status_t st = pause_held(w, line, target);
    rcoll_hold_retake(w->policy->hold, held);
    return st;
}

rcoll_status_t rcoll_waiter_sleep_unless(rcoll_waiter_t *w, rcoll_line_t *bell, bool (*ready)(void *arg),
                                         void *arg)
{
    w->polls++;
    atomic_fetch_add_explicit(&bell->waiters, 1, memory_order_seq_cst);
    uint64_t seen = atomic_load_explicit(&bell->value, memory_order_seq_cst);
    if (!ready(arg)) {
        uint64_t slice = sleep_slice(w);
        struct timespec ts = {(time_t)(slice / 1000000000ull), (long)(slice % 1000000000ull)};
        futex(futex_word(bell), FUTEX_WAIT, (uint32_t)seen, &ts);
    }
    atomic_fetch_sub_explicit(&bell->waiters, 1, memory_order_relaxed);
    return check_timeout(w);
}

rcoll_status_t rcoll_waiter_pause_fd(rcoll_waiter_t *w, int fd)
{
    /* Only in the sleeping phase: waking from poll() costs ~50 us on the 2-core test machine,
     * so crowded ranks yield first like every other wait (docs/tuning.md). */
    if (fd < 0 || !rcoll_waiter_is_sleeping(w))
        return rcoll_waiter_pause(w, NULL, 0);
    w->polls++;
    struct pollfd pfd = {fd, POLLIN, 0};
    unsigned held = rcoll_hold_let_go(w->policy->hold);
    poll(&pfd, 1, (int)((sleep_slice(w) + 999999) / 1000000));
    rcoll_hold_retake(w->policy->hold, held);
    return check_timeout(w);
}

rcoll_status_t rcoll_waiter_progressed(rcoll_waiter_t *w)
{
    if ((w->polls++ & 1023) != 1023)
        return RCOLL_OK;
    return check_timeout(w);
}
