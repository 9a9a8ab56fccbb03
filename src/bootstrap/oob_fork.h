/* Bootstrap for processes forked from one parent (the test launcher): the out-of-band allgather
 * runs over an anonymous shared mapping made before the fork. */
#ifndef RCOLL_BOOTSTRAP_OOB_FORK_H
#define RCOLL_BOOTSTRAP_OOB_FORK_H

#include <stddef.h>
#include "rcoll/rcoll.h"

typedef struct rcoll_fork_job rcoll_fork_job_t;

/* The largest out-of-band message of a team's creation, with room to spare (its first exchange,
 * every rank's host, process, cores and transport hello, is about 300 bytes). */
#define RCOLL_FORK_OOB_MAX 1024

/* A job of `size` ranks whose out-of-band messages are at most `max_len` bytes. */
rcoll_fork_job_t *rcoll_fork_job_create(int size, size_t max_len);
void rcoll_fork_job_destroy(rcoll_fork_job_t *job);
void rcoll_fork_job_oob(rcoll_fork_job_t *job, int rank, rcoll_oob_t *oob);

/* Forks `size` processes, each running fn(rank, oob, arg) and exiting with its result; waits
 * for all of them. Returns the number of ranks that failed (non-zero exit or killed), or -1 if
 * a process could not be started. `timeout_s` > 0 kills the whole job when it runs longer. */
int rcoll_fork_run(int size, int (*fn)(int rank, const rcoll_oob_t *oob, void *arg), void *arg,
                   double timeout_s);

#endif
