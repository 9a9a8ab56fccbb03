/* Multi-process correctness matrix: every algorithm x team sizes 1..9 and 16 x sizes 0, 1, 7,
 * 64, 1001, 4095, 4096, 4097, 65539, 1 MB+5 and 4 MB x in-place or not x back-to-back calls (50; 4
 * for blocks of 1 MB and more, whose check dominates), every call's data checked. Ranks are
 * real processes forked by the test launcher, more of them than cores; random short stalls
 * make fast ranks run ahead into the next call while slow ones still read the last.
 * Options: --coll barrier|allgather (default both), --algo NAME, --np 1,2,..., --quick (fewer
 * sizes and calls), --wait-modes (run under RCOLL_WAIT=spin, yield and block). */
#include <sched.h>
#include <stdint.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bootstrap/oob_fork.h"
#include "rcoll/rcoll.h"
#include "select/select.h"

#define MAX_CALLS 50

typedef struct {
    rcoll_coll_t coll;
    const char *algo;
    const size_t *sizes;
    int nsizes;
    int calls;
    _Atomic int *arrivals; /* barrier check: shared counters, one per call */
} job_t;

/* Byte i of rank r's block in call c: a per-(rank, call) offset added to a fixed template, so
 * blocks differ by rank, call and position, and the check vectorizes. */
static unsigned char *template_bytes;

static unsigned char offset_of(int rank, int call)
{
    return (unsigned char)(rank * 131 + call * 31 + 1);
}

static unsigned char pattern(int rank, int call, size_t i)
{
    return (unsigned char)(template_bytes[i] + offset_of(rank, call));
}

static void make_template(size_t max)
{
    template_bytes = malloc(max + 1);
    for (size_t i = 0; i <= max; i++)
        template_bytes[i] = (unsigned char)(i * 7 + (i >> 8) + (i >> 16) * 3);
}

static void maybe_stall(int rank, int call)
{
    unsigned h = (unsigned)(rank * 2654435761u) ^ (unsigned)(call * 40503u);
    if (h % 7 == 0)
        usleep(h % 200);
    else if (h % 5 == 0)
        sched_yield();
}

static int block_differs(const unsigned char *block, size_t bytes, unsigned char offset)
{
    unsigned char diff = 0;
    for (size_t i = 0; i < bytes; i++)
        diff |= (unsigned char)(block[i] ^ (unsigned char)(template_bytes[i] + offset));
    return diff != 0;
}

static int check_blocks(const unsigned char *rbuf, int size, size_t bytes, int call, int rank,
                        const char *algo, int inplace)
{
    for (int r = 0; r < size; r++) {
        const unsigned char *block = rbuf + (size_t)r * bytes;
        if (!block_differs(block, bytes, offset_of(r, call)))
            continue;
        size_t i = 0;
        while (block[i] == pattern(r, call, i))
            i++;
        fprintf(stderr, "FAIL allgather %s p=%d bytes=%zu in-place=%d call %d: rank %d has a "
                "wrong byte %zu of block %d\n", algo, size, bytes, inplace, call, rank, i, r);
        return 1;
    }
    return 0;
}

static int run_allgather(rcoll_team_t *team, const job_t *job, int rank, int size)
{
    for (int s = 0; s < job->nsizes; s++) {
        size_t bytes = job->sizes[s];
        int calls = bytes >= (1u << 20) ? 4 : job->calls;
        unsigned char *rbuf = malloc((size_t)size * bytes + 1), *sbuf = malloc(bytes + 1);
        if (!rbuf || !sbuf)
            return 1;
        for (int inplace = 0; inplace < 2; inplace++)
            for (int c = 0; c < calls; c++) {
                int call = s * 1000 + inplace * 100 + c;
                memset(rbuf, 0xEE, (size_t)size * bytes); /* stale data must not pass */
                unsigned char *mine = inplace ? rbuf + (size_t)rank * bytes : sbuf;
                for (size_t i = 0; i < bytes; i++)
                    mine[i] = pattern(rank, call, i);
                maybe_stall(rank, call);
                rcoll_status_t st = rcoll_allgather(team, inplace ? RCOLL_IN_PLACE : sbuf, rbuf, bytes);
                if (st != RCOLL_OK) {
                    fprintf(stderr, "FAIL allgather %s p=%d bytes=%zu: %s\n", job->algo, size,
                            bytes, rcoll_team_last_error(team));
                    return 1;
                }
                if (check_blocks(rbuf, size, bytes, call, rank, job->algo, inplace))
                    return 1;
            }
        free(rbuf);
        free(sbuf);
    }
    return 0;
}

static int run_barrier(rcoll_team_t *team, const job_t *job, int rank, int size)
{
    for (int c = 0; c < job->calls; c++) {
        maybe_stall(rank, c);
        atomic_fetch_add(&job->arrivals[c], 1);
        uint64_t all[64] = {0};
        all[rank] = (uint64_t)rank;
        if (c % 3 == 2 && size <= 64 && rcoll_allgather(team, RCOLL_IN_PLACE, all, sizeof all[0]) != RCOLL_OK)
            return 1; /* other collectives in between take sequence numbers too */
        if (rcoll_barrier(team) != RCOLL_OK) {
            fprintf(stderr, "FAIL barrier %s p=%d: %s\n", job->algo, size, rcoll_team_last_error(team));
            return 1;
        }
        int seen = atomic_load(&job->arrivals[c]);
        if (seen != size) {
            fprintf(stderr, "FAIL barrier %s p=%d call %d: rank %d left when only %d of %d had "
                    "arrived\n", job->algo, size, c, rank, seen, size);
            return 1;
        }
    }
    return 0;
}

static int rank_main(int rank, const rcoll_oob_t *oob, void *arg)
{
    const job_t *job = arg;
    rcoll_context_t *ctx;
    rcoll_team_t *team;
    if (rcoll_context_create(&ctx) != RCOLL_OK)
        return 2;
    rcoll_status_t st = rcoll_team_create(ctx, oob, &team);
    if (st != RCOLL_OK) {
        fprintf(stderr, "FAIL team creation on rank %d: %s\n", rank, rcoll_strerror(st));
        return 3;
    }
    if (rcoll_team_force_algorithm(team, job->coll, job->algo) != RCOLL_OK) {
        fprintf(stderr, "FAIL %s\n", rcoll_team_last_error(team));
        return 4;
    }
    int rc = job->coll == RCOLL_COLL_BARRIER ? run_barrier(team, job, rank, oob->size)
                                             : run_allgather(team, job, rank, oob->size);
    rcoll_team_destroy(team);
    rcoll_context_destroy(ctx);
    return rc;
}

static const size_t full_sizes[] = {0, 1, 7, 64, 1001, 4095, 4096, 4097, 65539, (1u << 20) + 5, 4u << 20};
static const size_t quick_sizes[] = {0, 1, 7, 1001, 4097, 65539, (1u << 20) + 5};

static int parse_list(const char *text, int *out, int max)
{
    int n = 0;
    for (const char *p = text; *p && n < max;) {
        out[n++] = atoi(p);
        p = strchr(p, ',');
        if (!p)
            break;
        p++;
    }
    return n;
}

static void run_one(job_t *job, int np, int *passed, int *failed)
{
    memset((void *)job->arrivals, 0, MAX_CALLS * sizeof *job->arrivals);
    int bad = rcoll_fork_run(np, rank_main, job, 600);
    const char *wait = getenv("RCOLL_WAIT");
    printf("%s %s %s p=%d (%d sizes x 2 in-place x %d calls%s%s)\n", bad ? "FAIL" : "ok",
           rcoll_coll_name(job->coll), job->algo, np,
           job->coll == RCOLL_COLL_BARRIER ? 0 : job->nsizes, job->calls, wait ? ", RCOLL_WAIT=" : "",
           wait ? wait : "");
    fflush(stdout);
    (bad ? (*failed)++ : (*passed)++);
}

int main(int argc, char **argv)
{
    int nps[32] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 16}, nnp = 10, quick = 0, wait_modes = 0;
    const char *only_coll = NULL, *only_algo = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--coll") && i + 1 < argc) only_coll = argv[++i];
        else if (!strcmp(argv[i], "--algo") && i + 1 < argc) only_algo = argv[++i];
        else if (!strcmp(argv[i], "--np") && i + 1 < argc) nnp = parse_list(argv[++i], nps, 32);
        else if (!strcmp(argv[i], "--quick")) quick = 1;
        else if (!strcmp(argv[i], "--wait-modes")) wait_modes = 1;
        else { fprintf(stderr, "usage: %s [--coll C] [--algo A] [--np 1,2,..] [--quick] [--wait-modes]\n", argv[0]); return 2; }
    }
    make_template(4u << 20);
    job_t job = {0};
    job.arrivals = mmap(NULL, MAX_CALLS * sizeof(int), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    job.sizes = quick ? quick_sizes : full_sizes;
    job.nsizes = quick ? (int)(sizeof quick_sizes / sizeof *quick_sizes) : (int)(sizeof full_sizes / sizeof *full_sizes);
    job.calls = quick ? 10 : MAX_CALLS;
    static const char *const modes[] = {"spin", "yield", "block"};
    int passed = 0, failed = 0;
    for (int m = 0; m < (wait_modes ? 3 : 1); m++) {
        if (wait_modes) {
            setenv("RCOLL_WAIT", modes[m], 1);
            nnp = 3;
            nps[0] = 2, nps[1] = 3, nps[2] = 5;
        }
        for (int c = 0; c < RCOLL_COLL_COUNT; c++) {
            if (only_coll && rcoll_coll_from_name(only_coll) != c)
                continue;
            char names[256];
            rcoll_algo_names((rcoll_coll_t)c, names, sizeof names);
            char *save = NULL;
            for (char *a = strtok_r(names, ", ", &save); a; a = strtok_r(NULL, ", ", &save)) {
                if (only_algo && strcmp(only_algo, a))
                    continue;
                job.coll = (rcoll_coll_t)c;
                job.algo = a;
                for (int i = 0; i < nnp; i++)
                    run_one(&job, nps[i], &passed, &failed);
            }
        }
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
