/* Requests: the nonblocking (rcoll_i<coll>) and persistent (rcoll_<coll>_init, rcoll_start)
 * collectives, their completion (test, wait, free) and the two engines behind them (see
 * core/request.h and docs/nonblocking.md). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "coll/colls.h"
#include "coll/nb/nb.h"
#include "core/request.h"
#include "core/request_reduce.h"
#include "core/team.h"

static rcoll_board_t *board_of(struct rcoll_team *t)
{
    return t->tl ? t->tl->board : NULL;
}

/* The team's engine: known from its transport and configuration before its first request. */
static rcoll_nb_mode_t mode_of(const struct rcoll_team *t)
{
    if (t->tl && t->tl->board)
        return RCOLL_NB_PEERS;
    return t->ctx->cfg.progress_thread ? RCOLL_NB_THREAD : RCOLL_NB_CALLER;
}

rcoll_status_t rcoll_nb_team_init(struct rcoll_team *t)
{
    rcoll_nb_team_t *nb = calloc(1, sizeof *nb);
    if (!nb)
        return RCOLL_ERR_NOMEM;
    pthread_mutex_init(&nb->lock, NULL);
    pthread_cond_init(&nb->cond, NULL);
    nb->mode = mode_of(t);
    nb->seq = t->tl ? t->tl->first_nb_seq : 0; /* a reused segment's board: on from its numbers */
    t->nb = nb;
    return RCOLL_OK;
}

bool rcoll_nb_team_idle(const struct rcoll_team *t)
{
    if (!t->nb)
        return true;
    for (const struct rcoll_request *r = t->nb->head; r; r = r->next)
        if (!r->complete)
            return false;
    return true;
}

void rcoll_nb_team_destroy(struct rcoll_team *t)
{
    rcoll_nb_team_t *nb = t->nb;
    if (!nb)
        return;
    if (nb->thread_started) {
        pthread_mutex_lock(&nb->lock);
        nb->stopping = true;
        pthread_cond_broadcast(&nb->cond);
        pthread_mutex_unlock(&nb->lock);
        pthread_join(nb->thread, NULL);
    }
    /* Requests still listed were released while active (their owner freed them): drop them. */
    for (struct rcoll_request *r = nb->head, *next; r; r = next) {
        next = r->next;
        if (r->freed) {
            free(r->arrays);
            free(r->copy.buf);
            free(r->state);
            rcoll_nb_reduce_free(r->red);
            free(r);
        }
    }
    while (nb->pooled) {
        struct rcoll_request *r = nb->pool[--nb->pooled];
        free(r->state);
        free(r);
    }
    pthread_mutex_destroy(&nb->lock);
    pthread_cond_destroy(&nb->cond);
    free(nb);
    t->nb = NULL;
}

const char *rcoll_team_progress_mode(const rcoll_team_t *t)
{
    if (!t)
        return "caller";
    static const char *const names[] = {"peers", "thread", "caller"};
    return names[t->nb ? t->nb->mode : mode_of(t)];
}

/* ---- the list of started requests ---- */

static void list_append(rcoll_nb_team_t *nb, struct rcoll_request *r)
{
    r->next = NULL;
    r->queued = true;
    if (nb->tail)
        nb->tail->next = r;
    else
        nb->head = r;
    nb->tail = r;
}

static void release(struct rcoll_request *r)
{
    free(r->arrays);
    free(r->copy.buf);
    rcoll_nb_reduce_free(r->red);
    /* On the board (one thread drives the team) the struct is kept for the next post, with its
     * algorithm's state (a replay of the same call keeps it: request_new). */
    rcoll_nb_team_t *nb = r->team->nb;
    if (nb->mode == RCOLL_NB_PEERS && nb->pooled < RCOLL_NB_POOL) {
        nb->pool[nb->pooled++] = r;
    } else {
        free(r->state);
        free(r);
    }
}

/* A request for call c: a pooled one as calloc's, but the team and the call, which make() sets,
 * and the call's arguments, which a start prepares whole. A pooled request that last ran the same
 * call (a loop posting the same collective on the same buffers) keeps its preparation too, as a
 * persistent request does: its start replays it (docs/tuning.md, "A call like the last one"). */
static struct rcoll_request *request_new(rcoll_nb_team_t *nb, const rcoll_call_t *c)
{
    if (!nb->pooled)
        return calloc(1, sizeof(struct rcoll_request));
    struct rcoll_request *r = nb->pool[--nb->pooled];
    bool keep = r->replay && rcoll_call_same(&r->call, c);
    const struct rcoll_nb_algo *algo = r->algo;
    rcoll_call_verdict_t verdict = r->verdict;
    rcoll_call_copy_t own = r->copy;
    void *state = r->state;
    memset(&r->arrays, 0, offsetof(struct rcoll_request, args) - offsetof(struct rcoll_request, arrays));
    memset((char *)r + offsetof(struct rcoll_request, args) + sizeof r->args, 0,
           sizeof *r - offsetof(struct rcoll_request, args) - sizeof r->args);
    if (keep) { /* its copy.buf is NULL: a replayable call makes no copy */
        r->algo = algo;
        r->verdict = verdict;
        r->copy = own;
        r->prepared = r->replay = true;
        r->state = state;
    } else {
        free(state);
    }
    return r;
}

/* Drops the complete requests from the list (a released one is freed). */
static void list_prune(rcoll_nb_team_t *nb)
{
    struct rcoll_request **pp = &nb->head, *last = NULL;
    while (*pp) {
        struct rcoll_request *r = *pp;
        if (r->complete) {
            *pp = r->next;
            r->queued = false;
            if (r->freed)
                release(r);
        } else {
            last = r;
            pp = &r->next;
        }
    }
    nb->tail = last;
}

/* ---- the board engine ---- */

static void finish(struct rcoll_request *r, rcoll_status_t st)
{
    if (r->red && st == RCOLL_OK) /* a reduction's mover is done: its fold */
        st = rcoll_nb_reduce_fold(r->red, r->team->rank);
    r->status = st;
    r->complete = true;
}

void rcoll_nb_progress_board(struct rcoll_team *t)
{
    rcoll_board_t *b = board_of(t);
    rcoll_nb_team_t *nb = t->nb;
    if (!b || !nb->head)
        return;
    bool any = false, mark = !nb->present; /* a rank inside rcoll moves its own blocks */
    if (mark)
        rcoll_board_present(b, true);
    for (struct rcoll_request *r = nb->head; r; r = r->next) {
        if (r->complete)
            continue;
        rcoll_status_t st = RCOLL_OK;
        if (r->algo->progress(r, b, &st)) {
            finish(r, st);
            any = true;
        } else if (st != RCOLL_OK) {
            finish(r, st);
            any = true;
        }
    }
    if (mark)
        rcoll_board_present(b, false);
    if (any)
        list_prune(nb);
}

/* The ranks whose part of `r` is missing, for a timeout's message. */
static int board_arrived(void *arg, int rank)
{
    struct rcoll_request *r = arg;
    return rank == r->team->rank || rcoll_board_arrived(board_of(r->team), rank, r->seq);
}

static int board_gone(void *arg, int rank)
{
    struct rcoll_request *r = arg;
    return rank != r->team->rank && rcoll_team_process_gone(r->team, rank);
}

/* A peer of r that has not posted r yet and whose process has ended, or -1. */
static int dead_peer(struct rcoll_request *r)
{
    for (int p = 0; p < r->team->size; p++)
        if (!board_arrived(r, p) && board_gone(r, p))
            return p;
    return -1;
}

static rcoll_status_t board_failed(struct rcoll_request *r, rcoll_status_t st)
{
    struct rcoll_team *t = r->team;
    int peer = -1;
    for (int p = 0; p < t->size && peer < 0; p++)
        if (!board_arrived(r, p))
            peer = p;
    t->coll = rcoll_coll_name(r->call.coll);
    st = rcoll_team_wait_failed(t, st, peer < 0 ? (t->rank + 1) % t->size : peer, board_arrived, board_gone, r);
    t->coll = NULL;
    return st;
}

struct board_look {
    struct rcoll_team *t;
    bool (*done)(void *arg);
    void *arg;
};

/* One look: progress every started request, then ask. */
static bool board_look(void *arg)
{
    struct board_look *l = arg;
    rcoll_nb_progress_board(l->t);
    return l->done(l->arg);
}

/* Waits on my bell until done(arg) holds, progressing every started request meanwhile. */
static rcoll_status_t board_wait(struct rcoll_team *t, bool (*done)(void *arg), void *arg,
                                 struct rcoll_request *blame)
{
    rcoll_board_t *b = board_of(t);
    rcoll_line_t *bell = rcoll_board_bell(b);
    rcoll_waiter_t w;
    rcoll_waiter_start(&w, &t->wait);
    struct board_look look = {t, done, arg};
    rcoll_status_t st = RCOLL_OK;
    rcoll_board_present(b, true);
    t->nb->present = true;
    while (!board_look(&look)) {
        st = rcoll_waiter_is_sleeping(&w) ? rcoll_waiter_sleep_unless(&w, bell, board_look, &look)
                                          : rcoll_waiter_pause(&w, NULL, 0);
        if (st == RCOLL_OK && rcoll_waiter_is_sleeping(&w) && blame && dead_peer(blame) >= 0)
            st = RCOLL_ERR_PEER_DEAD;
        if (st != RCOLL_OK)
            break;
    }
    t->nb->present = false;
    rcoll_board_present(b, false);
    if (st != RCOLL_OK && blame)
        return board_failed(blame, st);
    return st;
}

struct slot_wait {
    rcoll_board_t *b;
    uint64_t seq;
    bool area; /* the inline area too */
};

static bool slot_ready(const struct slot_wait *s)
{
    return rcoll_board_slot_free(s->b, s->seq) && (!s->area || rcoll_board_area_free(s->b, s->seq));
}

static bool slot_is_free(void *arg)
{
    struct slot_wait *s = arg;
    if (slot_ready(s))
        return true;
    /* What I posted on the board calls ago and a peer has not taken: I write it myself. */
    if (!rcoll_board_slot_free(s->b, s->seq))
        rcoll_nb_rescue(s->b, s->seq - rcoll_board_slots(s->b));
    if (s->area && !rcoll_board_area_free(s->b, s->seq))
        rcoll_nb_rescue(s->b, rcoll_board_area_last(s->b, s->seq));
    return slot_ready(s);
}

static const rcoll_nb_algo_t *choose_nb(struct rcoll_team *t, rcoll_coll_t coll)
{
    if (coll == RCOLL_COLL_ALLGATHER && t->ctx->cfg.nb_algo == RCOLL_NB_ALGO_BINOMIAL_FORWARD)
        return &rcoll_nb_binomial_forward;
    return &rcoll_nb_pairs;
}

/* A start's preparation: the call's checks and arguments (core/call.h) and its algorithm. A
 * persistent request keeps them from its first start on (the same buffers and counts every
 * time: MPI's persistent collectives) and moves only its own block again at each start
 * (rcoll_call_restart), unless a start has more work of its own: an in-place copy of the send
 * data, a reduction's mover, a call every rank skips or passes. */
static rcoll_status_t prepare_start(struct rcoll_request *r)
{
    struct rcoll_team *t = r->team;
    rcoll_status_t st = rcoll_call_prepare(t, &r->call, &r->args, &r->copy, &r->verdict);
    if (st != RCOLL_OK || r->verdict == RCOLL_CALL_SKIP)
        return st;
    r->args.team = t;
    r->args.rank = t->rank;
    r->args.size = t->size;
    r->args.root = r->call.root;
    r->algo = choose_nb(t, r->call.coll);
    r->prepared = r->persistent && r->verdict == RCOLL_CALL_RUN && !r->copy.buf && !r->red;
    r->replay = !r->persistent && !r->red && rcoll_call_replayable(&r->call, r->verdict);
    return RCOLL_OK;
}

static rcoll_status_t board_start(struct rcoll_request *r)
{
    struct rcoll_team *t = r->team;
    rcoll_board_t *b = board_of(t);
    rcoll_status_t st = RCOLL_OK;
    if (r->prepared)
        rcoll_call_restart(&r->copy);
    else
        st = prepare_start(r);
    if (st != RCOLL_OK)
        return st;
    r->complete = false;
    r->status = RCOLL_OK;
    if (r->verdict == RCOLL_CALL_SKIP) { /* every rank skips alike: no number on the board */
        r->ran = "trivial";
        finish(r, RCOLL_OK);
        return RCOLL_OK;
    }
    r->ran = r->algo->name;
    r->seq = ++t->nb->seq;
    r->area = !r->algo->head_only || !r->algo->head_only(r, b);
    struct slot_wait sw = {b, r->seq, r->area};
    if (!slot_ready(&sw)) {
        st = board_wait(t, slot_is_free, &sw, NULL);
        if (st != RCOLL_OK) {
            --t->nb->seq;
            return rcoll_team_error(t, st, "%s: no free slot on the board (a peer stopped taking part "
                                    "%u calls ago or earlier)", rcoll_coll_name(r->call.coll),
                                    r->area ? rcoll_board_areas(b) : rcoll_board_slots(b));
        }
    }
    st = r->algo->start(r, b);
    if (st != RCOLL_OK)
        return st;
    list_append(t->nb, r);
    rcoll_nb_progress_board(t); /* what the peers already posted moves now */
    return RCOLL_OK;
}

/* ---- the queue engine (caller or progress thread) ---- */

static rcoll_status_t queue_run(struct rcoll_request *r)
{
    struct rcoll_team *t = r->team;
    rcoll_args_t a;
    rcoll_call_verdict_t v;
    rcoll_status_t st = rcoll_call_prepare(t, &r->call, &a, &r->copy, &v);
    if (st == RCOLL_OK)
        st = v == RCOLL_CALL_SKIP ? rcoll_team_skip(t)
           : v == RCOLL_CALL_PASS ? rcoll_team_pass(t)
                                  : rcoll_team_run(t, r->call.coll, &a);
    r->ran = t->last_algo;
    return st;
}

/* Caller: runs the queued calls in order, up to `upto` (all of them for NULL). */
static void queue_run_caller(struct rcoll_team *t, struct rcoll_request *upto)
{
    rcoll_nb_team_t *nb = t->nb;
    while (nb->head) {
        struct rcoll_request *r = nb->head;
        nb->inside = true;
        rcoll_status_t st = queue_run(r);
        nb->inside = false;
        finish(r, st);
        list_prune(nb);
        if (r == upto)
            break;
    }
}

static void *progress_thread(void *arg)
{
    struct rcoll_team *t = arg;
    rcoll_nb_team_t *nb = t->nb;
    pthread_mutex_lock(&nb->lock);
    for (;;) {
        while (!nb->stopping && !nb->head)
            pthread_cond_wait(&nb->cond, &nb->lock);
        if (nb->stopping)
            break;
        struct rcoll_request *r = nb->head;
        nb->running = true;
        pthread_mutex_unlock(&nb->lock);
        rcoll_status_t st = queue_run(r);
        pthread_mutex_lock(&nb->lock);
        nb->running = false;
        finish(r, st);
        list_prune(nb);
        pthread_cond_broadcast(&nb->cond);
    }
    pthread_mutex_unlock(&nb->lock);
    return NULL;
}

static rcoll_status_t queue_start(struct rcoll_request *r)
{
    struct rcoll_team *t = r->team;
    rcoll_nb_team_t *nb = t->nb;
    r->complete = false;
    r->status = RCOLL_OK;
    r->ran = "queued";
    if (nb->mode == RCOLL_NB_CALLER) {
        list_append(nb, r);
        return RCOLL_OK;
    }
    pthread_mutex_lock(&nb->lock);
    if (!nb->thread_started) {
        /* From now on two threads of this process may work the context's network. */
        rcoll_hold_enable(&t->ctx->net_hold);
        if (pthread_create(&nb->thread, NULL, progress_thread, t) != 0) {
            pthread_mutex_unlock(&nb->lock);
            return rcoll_team_error(t, RCOLL_ERR_SYSTEM, "%s: could not start the progress thread",
                                    rcoll_coll_name(r->call.coll));
        }
        nb->thread_started = true;
    }
    list_append(nb, r);
    pthread_cond_broadcast(&nb->cond);
    pthread_mutex_unlock(&nb->lock);
    return RCOLL_OK;
}

rcoll_status_t rcoll_requests_drain(struct rcoll_team *t)
{
    rcoll_nb_team_t *nb = t->nb;
    if (!nb || !nb->head)
        return RCOLL_OK;
    /* A queued call's own blocking calls on the team (a composed algorithm building its
     * sub-teams over it) run inside it: there is nothing before them to wait for. */
    if (nb->inside || (nb->thread_started && pthread_equal(pthread_self(), nb->thread)))
        return RCOLL_OK;
    if (nb->mode == RCOLL_NB_PEERS) { /* ordered by their numbers: only help them along */
        rcoll_nb_progress_board(t);
    } else if (nb->mode == RCOLL_NB_CALLER) {
        queue_run_caller(t, NULL);
    } else if (nb->mode == RCOLL_NB_THREAD) {
        pthread_mutex_lock(&nb->lock);
        while (nb->head)
            pthread_cond_wait(&nb->cond, &nb->lock);
        pthread_mutex_unlock(&nb->lock);
    }
    return RCOLL_OK;
}

/* ---- the public calls ---- */

static size_t *copy_array(size_t **at, const size_t *src, int n)
{
    if (!src)
        return NULL;
    size_t *dst = *at;
    memcpy(dst, src, (size_t)n * sizeof *dst);
    *at += n;
    return dst;
}

static rcoll_status_t make(rcoll_team_t *t, const rcoll_call_t *c, bool persistent, rcoll_request_t **out)
{
    if (!out)
        return t ? rcoll_team_error(t, RCOLL_ERR_INVALID, "%s: NULL request pointer",
                                    rcoll_coll_name(c->coll)) : RCOLL_ERR_INVALID;
    *out = NULL;
    if (!t)
        return RCOLL_ERR_INVALID;
    if (!t->nb && rcoll_nb_team_init(t) != RCOLL_OK)
        return rcoll_team_error(t, RCOLL_ERR_NOMEM, "%s: out of memory", rcoll_coll_name(c->coll));
    struct rcoll_request *r = request_new(t->nb, c);
    int n = t->size, arrays = !!c->scounts + !!c->sdispls + !!c->rcounts + !!c->rdispls;
    if (r && arrays)
        r->arrays = malloc((size_t)arrays * (size_t)n * sizeof(size_t));
    if (r)
        r->team = t;
    if (!r || (arrays && !r->arrays)) {
        if (r)
            release(r);
        return rcoll_team_error(t, RCOLL_ERR_NOMEM, "%s: out of memory", rcoll_coll_name(c->coll));
    }
    r->persistent = persistent;
    r->call = *c;
    size_t *at = r->arrays;
    r->call.scounts = copy_array(&at, c->scounts, n);
    r->call.sdispls = copy_array(&at, c->sdispls, n);
    r->call.rcounts = copy_array(&at, c->rcounts, n);
    r->call.rdispls = copy_array(&at, c->rdispls, n);
    r->complete = true;
    r->ran = "";
    /* The arguments are checked by the preparation at each start (core/call.h): a post fails
     * at once on an erroneous call, a persistent request at its start. */
    *out = r;
    return RCOLL_OK;
}

static rcoll_status_t start(struct rcoll_request *r)
{
    struct rcoll_team *t = r->team;
    rcoll_status_t st = t->nb->mode == RCOLL_NB_PEERS ? board_start(r) : queue_start(r);
    if (st == RCOLL_OK)
        r->active = true;
    return st;
}

/* A reduction on the board: its mover's request, with the fold for the end. Elsewhere (the
 * queue) the reduction runs as a blocking call would. */
static rcoll_status_t make_any(rcoll_team_t *t, const rcoll_call_t *c, bool persistent, rcoll_request_t **out)
{
    const rcoll_coll_info_t *ci = rcoll_coll_info(c->coll);
    if (!t || !out || !ci || !ci->reduction)
        return make(t, c, persistent, out);
    if (!t->nb && rcoll_nb_team_init(t) != RCOLL_OK)
        return rcoll_team_error(t, RCOLL_ERR_NOMEM, "%s: out of memory", ci->name);
    if (t->nb->mode != RCOLL_NB_PEERS) {
        rcoll_status_t st = rcoll_call_check(t, c); /* an erroneous call fails at its post */
        return st == RCOLL_OK ? make(t, c, persistent, out) : st;
    }
    rcoll_call_t mover;
    struct rcoll_nb_reduce *red;
    rcoll_status_t st = rcoll_nb_reduce_make(t, c, &mover, &red);
    if (st != RCOLL_OK)
        return st;
    st = make(t, &mover, persistent, out);
    if (st != RCOLL_OK) {
        rcoll_nb_reduce_free(red);
        return st;
    }
    (*out)->red = red;
    return RCOLL_OK;
}

static rcoll_status_t post(rcoll_team_t *t, const rcoll_call_t *c, rcoll_request_t **out)
{
    rcoll_status_t st = make_any(t, c, false, out);
    if (st != RCOLL_OK)
        return st;
    st = start(*out);
    if (st != RCOLL_OK) {
        release(*out);
        *out = NULL;
    }
    return st;
}

static rcoll_status_t init(rcoll_team_t *t, const rcoll_call_t *c, rcoll_request_t **out)
{
    return make_any(t, c, true, out);
}

rcoll_status_t rcoll_start(rcoll_request_t *r)
{
    if (!r)
        return RCOLL_ERR_INVALID;
    if (!r->persistent || r->active)
        return rcoll_team_error(r->team, RCOLL_ERR_INVALID, "%s: rcoll_start of a request that is %s",
                                rcoll_coll_name(r->call.coll), r->active ? "active" : "not persistent");
    return start(r);
}

/* Completes r if its work is over: true then, with its status. */
static bool settle(struct rcoll_request *r, rcoll_status_t *st)
{
    if (!r->complete)
        return false;
    r->active = false;
    *st = r->status;
    return true;
}

static bool is_complete(void *arg)
{
    return ((struct rcoll_request *)arg)->complete;
}

rcoll_status_t rcoll_test(rcoll_request_t *r, int *done)
{
    if (done)
        *done = 0;
    if (!r || !done)
        return RCOLL_ERR_INVALID;
    rcoll_status_t st = RCOLL_OK;
    if (!r->active) {
        *done = 1;
        return RCOLL_OK;
    }
    rcoll_nb_team_t *nb = r->team->nb;
    if (nb->mode == RCOLL_NB_PEERS) {
        rcoll_nb_progress_board(r->team);
    } else if (nb->mode == RCOLL_NB_CALLER) {
        queue_run_caller(r->team, r);
    } else {
        pthread_mutex_lock(&nb->lock);
        bool c = r->complete;
        pthread_mutex_unlock(&nb->lock);
        if (!c)
            return RCOLL_OK;
    }
    if (settle(r, &st))
        *done = 1;
    return st;
}

rcoll_status_t rcoll_wait(rcoll_request_t *r)
{
    if (!r)
        return RCOLL_ERR_INVALID;
    if (!r->active)
        return RCOLL_OK;
    struct rcoll_team *t = r->team;
    rcoll_nb_team_t *nb = t->nb;
    rcoll_status_t st = RCOLL_OK;
    if (nb->mode == RCOLL_NB_PEERS) {
        if (!r->complete)
            st = board_wait(t, is_complete, r, r);
        if (st != RCOLL_OK) { /* it stays listed: its peers may still need its buffers */
            r->active = false;
            return st;
        }
    } else if (nb->mode == RCOLL_NB_CALLER) {
        queue_run_caller(t, r);
    } else {
        pthread_mutex_lock(&nb->lock);
        while (!r->complete)
            pthread_cond_wait(&nb->cond, &nb->lock);
        pthread_mutex_unlock(&nb->lock);
    }
    settle(r, &st);
    return st;
}

void rcoll_request_free(rcoll_request_t *r)
{
    if (!r)
        return;
    rcoll_nb_team_t *nb = r->team->nb;
    bool thread = nb->mode == RCOLL_NB_THREAD;
    if (thread)
        pthread_mutex_lock(&nb->lock);
    bool later = r->queued && !r->complete;
    if (later)
        r->freed = true; /* the engine frees it once its work is over */
    if (thread)
        pthread_mutex_unlock(&nb->lock);
    if (!later && !r->queued)
        release(r);
    else if (!later) /* complete but still listed: pruned at the next pass */
        r->freed = true;
}

int rcoll_request_active(const rcoll_request_t *r)
{
    return r && r->active;
}

int rcoll_request_persistent(const rcoll_request_t *r)
{
    return r && r->persistent;
}

const char *rcoll_request_algorithm(const rcoll_request_t *r)
{
    return r ? r->ran : "";
}

rcoll_status_t rcoll_team_progress(rcoll_team_t *t)
{
    if (!t)
        return RCOLL_ERR_INVALID;
    if (t->nb && t->nb->mode == RCOLL_NB_PEERS)
        rcoll_nb_progress_board(t);
    return RCOLL_OK;
}

/* The pause of rcoll_wait (board_wait) for a loop the caller runs: sleeping, it sleeps on the
 * board's bell (a peer that completes work for this rank rings it), or one slice. */
int rcoll_team_pause(rcoll_team_t *t, uint64_t *polls)
{
    if (!t || !polls)
        return 0;
    rcoll_waiter_t w;
    rcoll_waiter_start(&w, &t->wait);
    w.polls = *polls;
    rcoll_board_t *b = board_of(t);
    bool sleeping = w.polls >= (uint64_t)t->wait.spin_iters + t->wait.yield_iters;
    rcoll_line_t *bell = b && sleeping ? rcoll_board_bell(b) : NULL;
    uint64_t rung = bell ? atomic_load_explicit(&bell->value, memory_order_acquire) : 0;
    bool spun = w.polls < t->wait.spin_iters;
    (void)rcoll_waiter_pause(&w, bell, rung + 1); /* a wait the caller runs has no timeout here */
    *polls = w.polls;
    return !spun;
}

/* ---- the entry points: the blocking call's arguments, then a request ---- */

rcoll_status_t rcoll_ibarrier(rcoll_team_t *t, rcoll_request_t **req)
{
    rcoll_call_t c = {.coll = RCOLL_COLL_BARRIER};
    return post(t, &c, req);
}

rcoll_status_t rcoll_barrier_init(rcoll_team_t *t, rcoll_request_t **req)
{
    rcoll_call_t c = {.coll = RCOLL_COLL_BARRIER};
    return init(t, &c, req);
}

#define BLOCK_FORMS(name, COLL)                                                                    \
    rcoll_status_t rcoll_i##name(rcoll_team_t *t, const void *sendbuf, void *recvbuf, size_t bytes,    \
                                 rcoll_request_t **req)                                            \
    {                                                                                              \
        rcoll_call_t c = {.coll = COLL, .sendbuf = sendbuf, .recvbuf = recvbuf, .bytes = bytes};  \
        return post(t, &c, req);                                                                   \
    }                                                                                              \
    rcoll_status_t rcoll_##name##_init(rcoll_team_t *t, const void *sendbuf, void *recvbuf,        \
                                       size_t bytes, rcoll_request_t **req)                        \
    {                                                                                              \
        rcoll_call_t c = {.coll = COLL, .sendbuf = sendbuf, .recvbuf = recvbuf, .bytes = bytes};  \
        return init(t, &c, req);                                                                   \
    }
BLOCK_FORMS(allgather, RCOLL_COLL_ALLGATHER)
BLOCK_FORMS(alltoall, RCOLL_COLL_ALLTOALL)

#define ROOTED_FORMS(name, COLL)                                                                   \
    rcoll_status_t rcoll_i##name(rcoll_team_t *t, const void *sendbuf, void *recvbuf, size_t bytes,    \
                                 int root, rcoll_request_t **req)                                  \
    {                                                                                              \
        rcoll_call_t c = {.coll = COLL, .sendbuf = sendbuf, .recvbuf = recvbuf, .bytes = bytes,   \
                          .root = root};                                                           \
        return post(t, &c, req);                                                                   \
    }                                                                                              \
    rcoll_status_t rcoll_##name##_init(rcoll_team_t *t, const void *sendbuf, void *recvbuf,        \
                                       size_t bytes, int root, rcoll_request_t **req)              \
    {                                                                                              \
        rcoll_call_t c = {.coll = COLL, .sendbuf = sendbuf, .recvbuf = recvbuf, .bytes = bytes,   \
                          .root = root};                                                           \
        return init(t, &c, req);                                                                   \
    }
ROOTED_FORMS(gather, RCOLL_COLL_GATHER)
ROOTED_FORMS(scatter, RCOLL_COLL_SCATTER)

static rcoll_call_t bcast_call(void *buf, size_t bytes, int root)
{
    rcoll_call_t c = {.coll = RCOLL_COLL_BCAST, .sendbuf = buf, .recvbuf = buf, .bytes = bytes, .root = root};
    return c;
}

rcoll_status_t rcoll_ibcast(rcoll_team_t *t, void *buf, size_t bytes, int root, rcoll_request_t **req)
{
    rcoll_call_t c = bcast_call(buf, bytes, root);
    return post(t, &c, req);
}

rcoll_status_t rcoll_bcast_init(rcoll_team_t *t, void *buf, size_t bytes, int root, rcoll_request_t **req)
{
    rcoll_call_t c = bcast_call(buf, bytes, root);
    return init(t, &c, req);
}

static rcoll_call_t allgatherv_call(const void *sendbuf, size_t sendbytes, void *recvbuf,
                                    const size_t *counts, const size_t *displs)
{
    rcoll_call_t c = {.coll = RCOLL_COLL_ALLGATHERV, .sendbuf = sendbuf, .recvbuf = recvbuf,
                      .bytes = sendbytes, .rcounts = counts, .rdispls = displs};
    return c;
}

rcoll_status_t rcoll_iallgatherv(rcoll_team_t *t, const void *sendbuf, size_t sendbytes, void *recvbuf,
                                 const size_t *counts, const size_t *displs, rcoll_request_t **req)
{
    rcoll_call_t c = allgatherv_call(sendbuf, sendbytes, recvbuf, counts, displs);
    return post(t, &c, req);
}

rcoll_status_t rcoll_allgatherv_init(rcoll_team_t *t, const void *sendbuf, size_t sendbytes, void *recvbuf,
                                     const size_t *counts, const size_t *displs, rcoll_request_t **req)
{
    rcoll_call_t c = allgatherv_call(sendbuf, sendbytes, recvbuf, counts, displs);
    return init(t, &c, req);
}

static rcoll_call_t alltoallv_call(const void *sendbuf, const size_t *sendcounts, const size_t *sdispls,
                                   void *recvbuf, const size_t *recvcounts, const size_t *rdispls)
{
    rcoll_call_t c = {.coll = RCOLL_COLL_ALLTOALLV, .sendbuf = sendbuf, .recvbuf = recvbuf,
                      .scounts = sendcounts, .sdispls = sdispls, .rcounts = recvcounts, .rdispls = rdispls};
    return c;
}

rcoll_status_t rcoll_ialltoallv(rcoll_team_t *t, const void *sendbuf, const size_t *sendcounts,
                                const size_t *sdispls, void *recvbuf, const size_t *recvcounts,
                                const size_t *rdispls, rcoll_request_t **req)
{
    rcoll_call_t c = alltoallv_call(sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls);
    return post(t, &c, req);
}

rcoll_status_t rcoll_alltoallv_init(rcoll_team_t *t, const void *sendbuf, const size_t *sendcounts,
                                    const size_t *sdispls, void *recvbuf, const size_t *recvcounts,
                                    const size_t *rdispls, rcoll_request_t **req)
{
    rcoll_call_t c = alltoallv_call(sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls);
    return init(t, &c, req);
}

static rcoll_call_t gatherv_call(const void *sendbuf, size_t sendbytes, void *recvbuf, const size_t *counts,
                                 const size_t *displs, int root)
{
    rcoll_call_t c = {.coll = RCOLL_COLL_GATHERV, .sendbuf = sendbuf, .recvbuf = recvbuf, .bytes = sendbytes,
                      .rcounts = counts, .rdispls = displs, .root = root};
    return c;
}

rcoll_status_t rcoll_igatherv(rcoll_team_t *t, const void *sendbuf, size_t sendbytes, void *recvbuf,
                              const size_t *counts, const size_t *displs, int root, rcoll_request_t **req)
{
    rcoll_call_t c = gatherv_call(sendbuf, sendbytes, recvbuf, counts, displs, root);
    return post(t, &c, req);
}

rcoll_status_t rcoll_gatherv_init(rcoll_team_t *t, const void *sendbuf, size_t sendbytes, void *recvbuf,
                                  const size_t *counts, const size_t *displs, int root, rcoll_request_t **req)
{
    rcoll_call_t c = gatherv_call(sendbuf, sendbytes, recvbuf, counts, displs, root);
    return init(t, &c, req);
}

static rcoll_call_t scatterv_call(const void *sendbuf, const size_t *counts, const size_t *displs,
                                  void *recvbuf, size_t recvbytes, int root)
{
    rcoll_call_t c = {.coll = RCOLL_COLL_SCATTERV, .sendbuf = sendbuf, .recvbuf = recvbuf, .bytes = recvbytes,
                      .scounts = counts, .sdispls = displs, .root = root};
    return c;
}

rcoll_status_t rcoll_iscatterv(rcoll_team_t *t, const void *sendbuf, const size_t *counts, const size_t *displs,
                               void *recvbuf, size_t recvbytes, int root, rcoll_request_t **req)
{
    rcoll_call_t c = scatterv_call(sendbuf, counts, displs, recvbuf, recvbytes, root);
    return post(t, &c, req);
}

rcoll_status_t rcoll_scatterv_init(rcoll_team_t *t, const void *sendbuf, const size_t *counts,
                                   const size_t *displs, void *recvbuf, size_t recvbytes, int root,
                                   rcoll_request_t **req)
{
    rcoll_call_t c = scatterv_call(sendbuf, counts, displs, recvbuf, recvbytes, root);
    return init(t, &c, req);
}

/* ---- reductions ---- */

static rcoll_call_t reduction_call(rcoll_coll_t coll, const void *sendbuf, void *recvbuf, size_t count,
                                   const size_t *counts, rcoll_dtype_t dtype, rcoll_op_t op, int root)
{
    rcoll_call_t c = {.coll = coll, .sendbuf = sendbuf, .recvbuf = recvbuf, .bytes = count,
                      .rcounts = counts, .dtype = dtype, .op = op, .root = root};
    return c;
}

rcoll_status_t rcoll_iallreduce(rcoll_team_t *t, const void *sendbuf, void *recvbuf, size_t count,
                                rcoll_dtype_t dtype, rcoll_op_t op, rcoll_request_t **req)
{
    rcoll_call_t c = reduction_call(RCOLL_COLL_ALLREDUCE, sendbuf, recvbuf, count, NULL, dtype, op, 0);
    return post(t, &c, req);
}

rcoll_status_t rcoll_ireduce(rcoll_team_t *t, const void *sendbuf, void *recvbuf, size_t count,
                             rcoll_dtype_t dtype, rcoll_op_t op, int root, rcoll_request_t **req)
{
    rcoll_call_t c = reduction_call(RCOLL_COLL_REDUCE, sendbuf, recvbuf, count, NULL, dtype, op, root);
    return post(t, &c, req);
}

rcoll_status_t rcoll_ireduce_scatter_block(rcoll_team_t *t, const void *sendbuf, void *recvbuf, size_t count,
                                           rcoll_dtype_t dtype, rcoll_op_t op, rcoll_request_t **req)
{
    rcoll_call_t c = reduction_call(RCOLL_COLL_REDUCE_SCATTER_BLOCK, sendbuf, recvbuf, count, NULL, dtype, op, 0);
    return post(t, &c, req);
}

rcoll_status_t rcoll_ireduce_scatter(rcoll_team_t *t, const void *sendbuf, void *recvbuf, const size_t *counts,
                                     rcoll_dtype_t dtype, rcoll_op_t op, rcoll_request_t **req)
{
    rcoll_call_t c = reduction_call(RCOLL_COLL_REDUCE_SCATTER, sendbuf, recvbuf, 0, counts, dtype, op, 0);
    return post(t, &c, req);
}

rcoll_status_t rcoll_iscan(rcoll_team_t *t, const void *sendbuf, void *recvbuf, size_t count,
                           rcoll_dtype_t dtype, rcoll_op_t op, rcoll_request_t **req)
{
    rcoll_call_t c = reduction_call(RCOLL_COLL_SCAN, sendbuf, recvbuf, count, NULL, dtype, op, 0);
    return post(t, &c, req);
}

rcoll_status_t rcoll_iexscan(rcoll_team_t *t, const void *sendbuf, void *recvbuf, size_t count,
                             rcoll_dtype_t dtype, rcoll_op_t op, rcoll_request_t **req)
{
    rcoll_call_t c = reduction_call(RCOLL_COLL_EXSCAN, sendbuf, recvbuf, count, NULL, dtype, op, 0);
    return post(t, &c, req);
}

rcoll_status_t rcoll_allreduce_init(rcoll_team_t *t, const void *sendbuf, void *recvbuf, size_t count,
                                    rcoll_dtype_t dtype, rcoll_op_t op, rcoll_request_t **req)
{
    rcoll_call_t c = reduction_call(RCOLL_COLL_ALLREDUCE, sendbuf, recvbuf, count, NULL, dtype, op, 0);
    return init(t, &c, req);
}

rcoll_status_t rcoll_reduce_init(rcoll_team_t *t, const void *sendbuf, void *recvbuf, size_t count,
                                 rcoll_dtype_t dtype, rcoll_op_t op, int root, rcoll_request_t **req)
{
    rcoll_call_t c = reduction_call(RCOLL_COLL_REDUCE, sendbuf, recvbuf, count, NULL, dtype, op, root);
    return init(t, &c, req);
}

rcoll_status_t rcoll_reduce_scatter_block_init(rcoll_team_t *t, const void *sendbuf, void *recvbuf,
                                               size_t count, rcoll_dtype_t dtype, rcoll_op_t op,
                                               rcoll_request_t **req)
{
    rcoll_call_t c = reduction_call(RCOLL_COLL_REDUCE_SCATTER_BLOCK, sendbuf, recvbuf, count, NULL, dtype, op, 0);
    return init(t, &c, req);
}

rcoll_status_t rcoll_reduce_scatter_init(rcoll_team_t *t, const void *sendbuf, void *recvbuf,
                                         const size_t *counts, rcoll_dtype_t dtype, rcoll_op_t op,
                                         rcoll_request_t **req)
{
    rcoll_call_t c = reduction_call(RCOLL_COLL_REDUCE_SCATTER, sendbuf, recvbuf, 0, counts, dtype, op, 0);
    return init(t, &c, req);
}

rcoll_status_t rcoll_scan_init(rcoll_team_t *t, const void *sendbuf, void *recvbuf, size_t count,
                               rcoll_dtype_t dtype, rcoll_op_t op, rcoll_request_t **req)
{
    rcoll_call_t c = reduction_call(RCOLL_COLL_SCAN, sendbuf, recvbuf, count, NULL, dtype, op, 0);
    return init(t, &c, req);
}

rcoll_status_t rcoll_exscan_init(rcoll_team_t *t, const void *sendbuf, void *recvbuf, size_t count,
                                 rcoll_dtype_t dtype, rcoll_op_t op, rcoll_request_t **req)
{
    rcoll_call_t c = reduction_call(RCOLL_COLL_EXSCAN, sendbuf, recvbuf, count, NULL, dtype, op, 0);
    return init(t, &c, req);
}
