/* rcoll example: N processes (default 4, or argv[1]) on this machine gather each other's data
 * with rcoll_allgather, using only the installed public API (rcoll/rcoll.h).
 *
 * A team is created over an out-of-band allgather that the program supplies (rcoll_oob_t):
 * an MPI program would use MPI_Allgather (rcoll/rcoll_mpi.h), this one forks its ranks and
 * exchanges the few bootstrap messages through a shared anonymous mapping made before the fork.
 *
 * Build: cc allgather.c $(pkg-config --cflags --libs rcoll)   or with CMake: examples/CMakeLists.txt
 * Run:   ./allgather 4                                       (exit status 0 when the data is right) */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include <rcoll/rcoll.h>

#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_RANKS 64
#define SLOT_BYTES (64 * 1024) /* the largest bootstrap message this exchange carries */
#define COUNT 1000             /* integers each rank contributes */

/* The shared mapping: a reusable barrier and one slot per rank. */
struct exchange {
    atomic_uint arrived;
    atomic_uint phase;
    int size;
    unsigned char slot[MAX_RANKS][SLOT_BYTES];
};

struct oob_info {
    struct exchange *ex;
    int rank;
};

/* Every rank waits until all have arrived; gives up after 60 s (a rank that died). */
static int barrier(struct exchange *ex)
{
    unsigned phase = atomic_load(&ex->phase);
    if (atomic_fetch_add(&ex->arrived, 1) + 1 == (unsigned)ex->size) {
        atomic_store(&ex->arrived, 0);
        atomic_fetch_add(&ex->phase, 1);
        return 0;
    }
    time_t give_up = time(NULL) + 60;
    while (atomic_load(&ex->phase) == phase) {
        if (time(NULL) > give_up)
            return -1;
        sched_yield();
    }
    return 0;
}

/* rcoll_oob_t's allgather: `len` bytes from every rank into recvbuf, in rank order. */
static int oob_allgather(const void *sendbuf, void *recvbuf, size_t len, void *coll_info)
{
    struct oob_info *info = coll_info;
    struct exchange *ex = info->ex;
    if (len > SLOT_BYTES)
        return -1;
    memcpy(ex->slot[info->rank], sendbuf, len);
    if (barrier(ex) != 0)
        return -1;
    for (int r = 0; r < ex->size; r++)
        memcpy((unsigned char *)recvbuf + (size_t)r * len, ex->slot[r], len);
    return barrier(ex); /* nobody writes the next message into a slot still being read */
}

static int run_rank(struct exchange *ex, int rank)
{
    struct oob_info info = {ex, rank};
    rcoll_oob_t oob = {.allgather = oob_allgather, .coll_info = &info, .rank = rank, .size = ex->size};
    rcoll_context_t *ctx;
    rcoll_team_t *team;
    rcoll_status_t st = rcoll_context_create(&ctx);
    if (st != RCOLL_OK) {
        fprintf(stderr, "rank %d: rcoll_context_create: %s\n", rank, rcoll_strerror(st));
        return 1;
    }
    st = rcoll_team_create(ctx, &oob, &team);
    if (st != RCOLL_OK) {
        fprintf(stderr, "rank %d: rcoll_team_create: %s\n", rank, rcoll_strerror(st));
        rcoll_context_destroy(ctx);
        return 1;
    }

    int32_t mine[COUNT];
    int32_t *all = malloc(sizeof mine * (size_t)ex->size);
    for (int i = 0; i < COUNT; i++)
        mine[i] = rank * COUNT + i;
    int bad = !all;
    if (!bad) {
        st = rcoll_allgather(team, mine, all, sizeof mine);
        if (st != RCOLL_OK) {
            fprintf(stderr, "rank %d: rcoll_allgather: %s (%s)\n", rank, rcoll_strerror(st),
                    rcoll_team_last_error(team));
            bad = 1;
        }
        for (int i = 0; !bad && i < COUNT * ex->size; i++)
            if (all[i] != i) {
                fprintf(stderr, "rank %d: element %d is %d, expected %d\n", rank, i, (int)all[i], i);
                bad = 1;
            }
    }
    if (!bad && rank == 0)
        printf("allgather of %zu bytes per rank over %d processes: data correct (algorithm %s)\n",
               sizeof mine, rcoll_team_size(team), rcoll_team_last_algorithm(team));
    free(all);
    rcoll_team_destroy(team);
    rcoll_context_destroy(ctx);
    return bad;
}

int main(int argc, char **argv)
{
    int size = argc > 1 ? atoi(argv[1]) : 4;
    if (size < 1 || size > MAX_RANKS) {
        fprintf(stderr, "usage: %s [processes, 1 to %d]\n", argv[0], MAX_RANKS);
        return 2;
    }
    struct exchange *ex = mmap(NULL, sizeof *ex, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (ex == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    atomic_init(&ex->arrived, 0);
    atomic_init(&ex->phase, 0);
    ex->size = size;
    fflush(stdout);

    int failed = 0;
    for (int rank = 0; rank < size; rank++) {
        pid_t pid = fork();
        if (pid < 0) {
            perror("fork");
            failed++; /* the ranks already started give up in the barrier */
            break;
        }
        if (pid == 0) {
            int bad = run_rank(ex, rank);
            fflush(stdout); /* _exit does not flush stdio */
            _exit(bad);
        }
    }
    int status;
    while (wait(&status) > 0)
        failed += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    munmap(ex, sizeof *ex);
    if (failed)
        fprintf(stderr, "%d of %d processes failed\n", failed, size);
    return failed ? 1 : 0;
}
