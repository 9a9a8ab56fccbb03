/* Failure test: a rank is killed inside a collective while another never arrives; the
 * survivors must return an error within the timeout (RCOLL_TIMEOUT=1) whose message names the
 * rank that never arrived and the one whose process is gone -- for every algorithm of every
 * collective (node-aware ones with TEST_COMPOSED=only: see main) (a survivor that needs nothing from the missing ranks, such as a bcast receiver
 * when the root is alive, may instead finish normally, but never hang). A second
 * case: a rank exits right after team creation; every other rank must get an error, not hang. */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bootstrap/oob_fork.h"
#include "rcoll/rcoll.h"
#include "coll/colls.h"
#include "select/select.h"

#define TIMEOUT_S 1.0

typedef struct {
    rcoll_coll_t coll;
    const char *algo;
    int scenario; /* 0: rank 2 killed inside, rank 3 absent; 1: rank 2 gone before the call */
} case_t;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void die_in(int ms)
{
    struct itimerval it = {{0, 0}, {ms / 1000, (ms % 1000) * 1000}};
    signal(SIGALRM, SIG_DFL); /* default action of SIGALRM terminates the process */
    setitimer(ITIMER_REAL, &it, NULL);
}

#define BLOCK 1000

/* One call of the collective, root 0, blocks of BLOCK bytes (buffers sized for every form). */
static rcoll_status_t call(rcoll_team_t *team, const case_t *c, char *buf, char *out)
{
    size_t counts[8], displs[8];
    int size = rcoll_team_size(team);
    for (int r = 0; r < size; r++)
        counts[r] = BLOCK, displs[r] = (size_t)r * BLOCK;
    switch (c->coll) {
    case RCOLL_COLL_BARRIER: return rcoll_barrier(team);
    case RCOLL_COLL_ALLGATHER: return rcoll_allgather(team, RCOLL_IN_PLACE, buf, BLOCK);
    case RCOLL_COLL_ALLTOALL: return rcoll_alltoall(team, out, buf, BLOCK);
    case RCOLL_COLL_BCAST: return rcoll_bcast(team, buf, BLOCK, 0);
    case RCOLL_COLL_GATHER: return rcoll_gather(team, out, buf, BLOCK, 0);
    case RCOLL_COLL_SCATTER: return rcoll_scatter(team, out, buf, BLOCK, 0);
    case RCOLL_COLL_ALLGATHERV: return rcoll_allgatherv(team, RCOLL_IN_PLACE, 0, buf, counts, displs);
    case RCOLL_COLL_ALLTOALLV: return rcoll_alltoallv(team, out, counts, displs, buf, counts, displs);
    case RCOLL_COLL_GATHERV: return rcoll_gatherv(team, out, BLOCK, buf, counts, displs, 0);
    case RCOLL_COLL_SCATTERV: return rcoll_scatterv(team, out, counts, displs, buf, BLOCK, 0);
    case RCOLL_COLL_ALLREDUCE: return rcoll_allreduce(team, out, buf, BLOCK, RCOLL_DTYPE_UINT8, RCOLL_OP_SUM);
    case RCOLL_COLL_REDUCE: return rcoll_reduce(team, out, buf, BLOCK, RCOLL_DTYPE_UINT8, RCOLL_OP_SUM, 0);
    case RCOLL_COLL_REDUCE_SCATTER_BLOCK:
        return rcoll_reduce_scatter_block(team, out, buf, BLOCK, RCOLL_DTYPE_UINT8, RCOLL_OP_SUM);
    case RCOLL_COLL_REDUCE_SCATTER: return rcoll_reduce_scatter(team, out, buf, counts, RCOLL_DTYPE_UINT8, RCOLL_OP_SUM);
    case RCOLL_COLL_SCAN: return rcoll_scan(team, out, buf, BLOCK, RCOLL_DTYPE_UINT8, RCOLL_OP_SUM);
    case RCOLL_COLL_EXSCAN: return rcoll_exscan(team, out, buf, BLOCK, RCOLL_DTYPE_UINT8, RCOLL_OP_SUM);
    default: return RCOLL_ERR_INVALID;
    }
}

/* May a survivor finish without error? Yes where it needs nothing from the absent or dead
 * ranks: a rooted collective's data flows one way (root 0 is alive), except into the root of
 * a gather or reduce; a scan's rank r needs ranks below r only (2 is the dead one). */
static int may_succeed(const case_t *c, int rank)
{
    switch (c->coll) {
    case RCOLL_COLL_BCAST: case RCOLL_COLL_SCATTER: case RCOLL_COLL_SCATTERV: return 1;
    case RCOLL_COLL_GATHER: case RCOLL_COLL_GATHERV: case RCOLL_COLL_REDUCE: return rank != 0;
    case RCOLL_COLL_SCAN: case RCOLL_COLL_EXSCAN: return rank < 2; /* it needs the ranks below */
    default: return 0;
    }
}

/* Is rank r in the list "a,b,c;" starting at p? */
static int listed_rank(const char *p, int r)
{
    while (*p && *p != ';') {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p)
            return 0;
        if (v == r)
            return 1;
        p = *end == ',' ? end + 1 : end;
    }
    return 0;
}

static int judge(const case_t *c, int rank, rcoll_status_t st, double spent, const char *msg);

/* Ranks of the running case whose first call (before any failure) timed out: shared between a
 * case's process and its ranks (run_case). */
static int *first_timeouts;

static int rank_main(int rank, const rcoll_oob_t *oob, void *arg)
{
    const case_t *c = arg;
    rcoll_context_t *ctx;
    rcoll_team_t *team;
    if (rcoll_context_create(&ctx) || rcoll_team_create(ctx, oob, &team)) {
        fprintf(stderr, "FAIL rank %d: %s %s: context or team creation failed\n", rank,
                rcoll_coll_name(c->coll), c->algo);
        return 10;
    }
    rcoll_team_force_algorithm(team, c->coll, c->algo);
    char *buf = calloc((size_t)oob->size, BLOCK), *out = calloc((size_t)oob->size, BLOCK);
    rcoll_status_t first = call(team, c, buf, out); /* one good call first */
    /* ... finished by every rank before anyone fails: a rank that exits without destroying
     * its team may take its last message with it (seen over UCX shared memory: rank 2's last
     * signal of the first call never reached rank 0), and its peers then rightly fail in the
     * first call. A team's destroy waits for every peer on another node (design.md). */
    int me = rank, all[8];
    if (oob->allgather(&me, all, sizeof me, oob->coll_info) != 0)
        return 12;
    if (first != RCOLL_OK) {
        if (first == RCOLL_ERR_TIMEOUT && first_timeouts)
            __atomic_fetch_add(first_timeouts, 1, __ATOMIC_SEQ_CST);
        fprintf(stderr, "FAIL rank %d: %s %s: the first call failed: %s\n", rank,
                rcoll_coll_name(c->coll), c->algo, rcoll_team_last_error(team));
        return 11;
    }
    if (c->scenario == 0 && rank == 3) { /* alive, but never arrives */
        usleep((useconds_t)(TIMEOUT_S * 1.5e6));
        _exit(0);
    }
    if (rank == 2) {
        if (c->scenario == 1)
            _exit(0);
        die_in(200); /* killed while waiting inside the collective */
    }
    double t0 = now_s();
    rcoll_status_t st = call(team, c, buf, out);
    if (rank == 2) /* it may need nothing from rank 3 (a bcast leaf): it dies all the same */
        for (;;)
            pause();
    double spent = now_s() - t0;
    int result = 0;
    if (!(st == RCOLL_OK && may_succeed(c, rank) && spent < TIMEOUT_S + 3.0))
        result = judge(c, rank, st, spent, rcoll_team_last_error(team));
    /* Leave as a program does (across nodes the last messages are only sure to be delivered
     * once the team is destroyed), then report. */
    rcoll_team_destroy(team);
    rcoll_context_destroy(ctx);
    free(buf);
    free(out);
    return result;
}

/* A survivor's error: within the timeout, naming the absent and the dead rank. */
static int judge(const case_t *c, int rank, rcoll_status_t st, double spent, const char *msg)
{
    int ok = st != RCOLL_OK && spent < TIMEOUT_S + 3.0;
    const char *gone = strstr(msg, "gone: ");
    /* Across (emulated) nodes a rank knows of another node's ranks only what it heard from
     * them: the absent rank 3 is among those it never heard from, with perhaps others. */
    const char *never = strstr(msg, "never arrived: ");
    int nodes = getenv("RCOLL_PPN") || getenv("RCOLL_NODE_MAP");
    int lists_3 = never && (nodes ? listed_rank(never + 15, 3) : strncmp(never + 15, "3;", 2) == 0);
    const char *comp = getenv("TEST_COMPOSED");
    /* A reduction's nested calls across nodes fail in one of them (a node-aware mover's
     * sub-team, or a read from one missing peer): in time, naming a rank it missed. */
    const rcoll_algo_t *al = rcoll_algo_find(c->coll, c->algo);
    if (nodes && al && al->nested && !(comp && !strcmp(comp, "only"))) {
        ok = ok && ((never && strncmp(never + 15, "none", 4) != 0) ||
                    (gone && strncmp(gone + 6, "none", 4) != 0) || strstr(msg, "rank 2") ||
                    strstr(msg, "rank 3"));
    } else if (comp && !strcmp(comp, "only")) {
        /* A node-aware call fails in one of its sub-teams, which knows its own members only:
         * the error must come in time and name a rank it missed (the dead one, or one that
         * left after its own error), not necessarily rank 3; or, where the network reports a
         * gone peer before any wait (rank 2 exited before the call: its connection is closed),
         * the transport's message naming it (in the team's numbering, not the sub-team's). */
        ok = ok && ((never && strncmp(never + 15, "none", 4) != 0) ||
                    (gone && strncmp(gone + 6, "none", 4) != 0) ||
                    (c->scenario == 1 && st == RCOLL_ERR_PEER_DEAD && strstr(msg, "rank 2 ")));
    } else if (c->scenario == 0) { /* the other survivor may have left already: gone lists 2 and maybe it */
        ok = ok && lists_3 && gone && strpbrk(gone + 6, "2");
    }
    if (!ok || getenv("VERBOSE"))
        fprintf(stderr, "%s rank %d: %s %s after %.2f s: %s\n", ok ? "ok" : "FAIL", rank,
                rcoll_coll_name(c->coll), rcoll_strerror(st), spent, msg);
    return ok ? 0 : 1;
}

/* Runs one case in a process of its own and prints its line; exits 0 if it went as it must. */
static int run_case(const case_t *c)
{
    double t0 = now_s();
    first_timeouts = mmap(NULL, sizeof *first_timeouts, PROT_READ | PROT_WRITE,
                          MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (first_timeouts == MAP_FAILED)
        first_timeouts = NULL;
    int bad = rcoll_fork_run(4, rank_main, (void *)c, 60);
    /* The good first call timed out (RCOLL_TIMEOUT is 1 s, the cases run six at a time: seen
     * in two of three suite runs in one day across emulated nodes over libfabric, every rank
     * waiting for every other): the machine was too busy to start the case, not a failure to detect. Run
     * it again, once; a first call that cannot work fails twice. */
    int expected = c->scenario == 0 ? 1 : 0; /* rank 2 is killed in scenario 0 */
    if (bad != expected && first_timeouts && __atomic_load_n(first_timeouts, __ATOMIC_SEQ_CST) > 0) {
        printf("note %s %s: %d first calls timed out before any failure; run again\n",
               rcoll_coll_name(c->coll), c->algo, *first_timeouts);
        fflush(stdout);
        *first_timeouts = 0;
        t0 = now_s();
        bad = rcoll_fork_run(4, rank_main, (void *)c, 60);
    }
    int good = bad == expected; /* exactly the killed one fails */
    printf("%s %s %s: %s, survivors returned an error in %.1f s (%d ranks failed)\n",
           good ? "ok" : "FAIL", rcoll_coll_name(c->coll), c->algo,
           c->scenario ? "rank 2 gone before the call" : "rank 2 killed inside, rank 3 absent",
           now_s() - t0, bad);
    fflush(stdout);
    return good ? 0 : 1;
}

/* Is this case run here (TEST_ALGO, TEST_COLL, TEST_COMPOSED, one node or across)? */
static bool wanted(rcoll_coll_t coll, const char *a)
{
    const char *only = getenv("TEST_ALGO"); /* "coll:algo", for a single case */
    const char *colls = getenv("TEST_COLL"); /* "barrier,bcast": those collectives */
    char name[96], key[40];
    snprintf(name, sizeof name, "%s:%s", rcoll_coll_name(coll), a);
    snprintf(key, sizeof key, ",%s,", rcoll_coll_name(coll));
    char list[256];
    snprintf(list, sizeof list, ",%s,", colls ? colls : "");
    if ((only && strcmp(only, name)) || (colls && !strstr(list, key)))
        return false;
    /* Node-aware algorithms only with TEST_COMPOSED=only (a layout where they run, a leader
     * among the dead); elsewhere they would be their fallback again. */
    const char *comp = getenv("TEST_COMPOSED");
    const rcoll_algo_t *al = rcoll_algo_find(coll, a);
    if (al->composed != (comp && !strcmp(comp, "only")))
        return false;
    /* A reduction fails as the calls it is made of do (each tested here): across nodes
     * allreduce gather_all stands for the nested ones (and the node-aware hier); on one node
     * the one-step forms, allreduce's nested ones, scan. */
    static const char *const one_node[] = {
        "allreduce:direct_read", "allreduce:gather_all", "allreduce:reduce_scatter_allgather",
        "reduce:direct_read", "reduce_scatter_block:direct_read", "reduce_scatter:direct",
        "scan:direct"};
    bool across = getenv("RCOLL_PPN") || getenv("RCOLL_NODE_MAP"), listed = false;
    for (size_t k = 0; k < sizeof one_node / sizeof *one_node; k++)
        listed |= strcmp(name, one_node[k]) == 0;
    return !(rcoll_coll_info(coll)->reduction && !al->composed &&
             (across ? strcmp(name, "allreduce:gather_all") != 0 : !listed));
}

#define MAX_CASES 256

/* Every case, TEST_PARALLEL (default 6) at a time, each in a process of its own: a case spends
 * most of its time waiting for the timeout, its survivors asleep (suite time). */
int main(void)
{
    char env[32];
    snprintf(env, sizeof env, "%g", TIMEOUT_S);
    setenv("RCOLL_TIMEOUT", env, 1);
    static case_t cases[MAX_CASES];
    int ncases = 0;
    for (int scenario = 0; scenario < 2; scenario++)
        for (int coll = 0; coll < RCOLL_COLL_COUNT; coll++) {
            char *save = NULL, list[256];
            rcoll_algo_names((rcoll_coll_t)coll, list, sizeof list);
            for (char *a = strtok_r(list, ", ", &save); a; a = strtok_r(NULL, ", ", &save))
                if (wanted((rcoll_coll_t)coll, a) && ncases < MAX_CASES) {
                    const rcoll_algo_t *al = rcoll_algo_find((rcoll_coll_t)coll, a);
                    cases[ncases++] = (case_t){(rcoll_coll_t)coll, al->name, scenario};
                }
        }
    const char *par_env = getenv("TEST_PARALLEL");
    int par = par_env && atoi(par_env) > 0 ? atoi(par_env) : 6;
    pid_t pids[MAX_CASES] = {0};
    int passed = 0, failed = 0, running = 0, next = 0;
    char failures[1024] = ""; /* repeated at the end, where a shortened log still shows it */
    size_t used = 0;
    fflush(NULL);
    while (next < ncases || running > 0) {
        if (next < ncases && running < par) {
            pid_t pid = fork();
            if (pid == 0)
                _exit(run_case(&cases[next]));
            if (pid < 0) {
                perror("fork");
                return 1;
            }
            pids[next++] = pid;
            running++;
            continue;
        }
        int status;
        pid_t pid = wait(&status);
        if (pid < 0)
            break;
        for (int i = 0; i < next; i++)
            if (pids[i] == pid) {
                running--;
                bool good = WIFEXITED(status) && WEXITSTATUS(status) == 0;
                good ? passed++ : failed++;
                if (!good && used < sizeof failures)
                    used += (size_t)snprintf(failures + used, sizeof failures - used, " %s:%s(scenario %d)",
                                             rcoll_coll_name(cases[i].coll), cases[i].algo,
                                             cases[i].scenario);
            }
    }
    if (failed)
        printf("failed cases:%s\n", failures);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
