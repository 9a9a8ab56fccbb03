/* Fork-based bootstrap and launcher for tests: see oob_fork.h. The allgather is a two-phase
 * exchange (write own slot, barrier, read all, barrier) with a generation-counting barrier. */
#include "bootstrap/oob_fork.h"

#include <errno.h>
#include <stddef.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct rcoll_fork_job {
    _Atomic int arrived;
    _Atomic unsigned generation;
    int size;
    size_t max_len;
    size_t map_bytes;
    int ranks[]; /* the rank argument of each oob (size entries), then the data slots */
};

static unsigned char *slots(rcoll_fork_job_t *job)
{
    return (unsigned char *)(job->ranks + job->size);
}

rcoll_fork_job_t *rcoll_fork_job_create(int size, size_t max_len)
{
    size_t bytes = sizeof(rcoll_fork_job_t) + (size_t)size * sizeof(int) + (size_t)size * max_len;
    rcoll_fork_job_t *job = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (job == MAP_FAILED)
        return NULL;
    job->size = size;
    job->max_len = max_len;
    job->map_bytes = bytes;
    for (int r = 0; r < size; r++)
        job->ranks[r] = r;
    return job;
}

void rcoll_fork_job_destroy(rcoll_fork_job_t *job)
{
    if (job)
        munmap(job, job->map_bytes);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int job_barrier(rcoll_fork_job_t *job)
{
    unsigned gen = atomic_load(&job->generation);
    if (atomic_fetch_add(&job->arrived, 1) == job->size - 1) {
        atomic_store(&job->arrived, 0);
        atomic_fetch_add(&job->generation, 1);
        return 0;
    }
    double deadline = now_s() + 120.0;
    while (atomic_load(&job->generation) == gen) {
        sched_yield();
        if (now_s() > deadline)
            return -1;
    }
    return 0;
}

static int fork_allgather(const void *sendbuf, void *recvbuf, size_t len, void *coll_info)
{
    int rank = *(int *)coll_info;
    int *first = (int *)coll_info - rank;
    rcoll_fork_job_t *job = (rcoll_fork_job_t *)(void *)((char *)first - offsetof(rcoll_fork_job_t, ranks));
    if (len > job->max_len)
        return -1;
    memcpy(slots(job) + (size_t)rank * job->max_len, sendbuf, len);
    if (job_barrier(job))
        return -1;
    for (int r = 0; r < job->size; r++)
        memcpy((unsigned char *)recvbuf + (size_t)r * len, slots(job) + (size_t)r * job->max_len, len);
    return job_barrier(job);
}

void rcoll_fork_job_oob(rcoll_fork_job_t *job, int rank, rcoll_oob_t *oob)
{
    oob->allgather = fork_allgather;
    oob->coll_info = &job->ranks[rank];
    oob->rank = rank;
    oob->size = job->size;
}

static void kill_all(pid_t *pids, int size)
{
    for (int r = 0; r < size; r++)
        if (pids[r] > 0)
            kill(pids[r], SIGKILL);
}

int rcoll_fork_run(int size, int (*fn)(int rank, const rcoll_oob_t *oob, void *arg), void *arg,
                   double timeout_s)
{
    rcoll_fork_job_t *job = rcoll_fork_job_create(size, RCOLL_FORK_OOB_MAX);
    pid_t *pids = calloc((size_t)size, sizeof *pids);
    if (!job || !pids) {
        rcoll_fork_job_destroy(job);
        free(pids);
        return -1;
    }
    fflush(NULL);
    int failed = 0, started = 0;
    for (int r = 0; r < size; r++) {
        pids[r] = fork();
        if (pids[r] == 0) {
            rcoll_oob_t oob;
            rcoll_fork_job_oob(job, r, &oob);
            int rc = fn(r, &oob, arg);
            fflush(NULL);
            _exit(rc & 0xff);
        }
        if (pids[r] < 0) {
            kill_all(pids, r);
            failed = -1;
            break;
        }
        started++;
    }
    double deadline = timeout_s > 0 ? now_s() + timeout_s : 0;
    for (int left = started; left > 0;) {
        int status;
        pid_t p = waitpid(-1, &status, deadline ? WNOHANG : 0);
        if (p == 0) {
            if (now_s() > deadline) {
                fprintf(stderr, "fork launcher: job of %d ranks still running after %.0f s: killed\n",
                        size, timeout_s);
                kill_all(pids, size);
                deadline = 0;
            } else {
                usleep(1000);
            }
            continue;
        }
        if (p < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        int who = -1;
        for (int r = 0; r < size; r++)
            if (pids[r] == p) {
                pids[r] = 0;
                who = r;
            }
        if (failed >= 0 && (!WIFEXITED(status) || WEXITSTATUS(status) != 0)) {
            failed++;
            if (getenv("VERBOSE"))
                fprintf(stderr, "fork launcher: rank %d %s %d\n", who,
                        WIFEXITED(status) ? "exited with" : "killed by signal",
                        WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        }
        left--;
    }
    free(pids);
    rcoll_fork_job_destroy(job);
    return failed;
}
