/* rcoll-info: what rcoll would run and why (--explain), the algorithm registry (--list) and
 * the table of collectives (--colls, JSON lines: what the report generator reads). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rcoll/rcoll.h"
/* The table of collectives: internal, but rcoll-info is built with the library. */
#include "../src/coll/colls.h"

static int usage(const char *prog, int code)
{
    FILE *f = code ? stderr : stdout;
    fprintf(f,
            "usage: %s --list\n"
            "       %s --colls\n"
            "       %s --explain --coll C --bytes N --size P [--ppn Q] [--nodes-per-host H]\n"
            "  --explain  print the algorithm rcoll selects for N bytes per rank (bcast: the\n"
            "             message; allgatherv: the mean count; barrier and the other v-forms are\n"
            "             chosen without a size) on a team\n"
            "             of P ranks with Q ranks per node (default Q = P), and why: the user rule\n"
            "             (RCOLL_TUNE, RCOLL_<COLL>_ALGO) or the default rule, with its range;\n"
            "             across nodes with Q > 1 the cost model's prediction of every candidate.\n"
            "             H nodes share one host (emulated nodes: H = P/Q; default 1).\n"
            "             C:",
            prog, prog, prog);
    for (int c = 0; c < RCOLL_COLL_COUNT; c++)
        fprintf(f, "%s %s", c ? "," : "", rcoll_coll_name((rcoll_coll_t)c));
    fprintf(f, "\n"
            "  --list     print every algorithm with its collective, summary and the calls it\n"
            "             applies to (and what runs the others)\n"
            "  --colls    print the table of collectives, one JSON object a line\n");
    return code;
}

static void json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            printf("\\%c", *s);
        else
            putchar(*s);
    }
    putchar('"');
}

static const char *blocks_name(rcoll_blocks_t b)
{
    return b == RCOLL_BLOCKS_EACH ? "each" : b == RCOLL_BLOCKS_ONE ? "one" : "none";
}

/* One line per collective: name, rooted, vform, the sides (blocks: none, one or each: one per
 * rank; root_only), what the size is and what each rank moves, whether it is a reduction (counts
 * in elements of a type), its algorithms. */
static void print_colls(void)
{
    for (int k = 0; k < RCOLL_COLL_COUNT; k++) {
        const rcoll_coll_info_t *c = rcoll_coll_info((rcoll_coll_t)k);
        printf("{\"coll\":");
        json_string(c->name);
        printf(",\"rooted\":%s,\"vform\":%s,\"by_bytes\":%s,\"send\":{\"blocks\":\"%s\","
               "\"root_only\":%s},\"recv\":{\"blocks\":\"%s\",\"root_only\":%s},\"one_buffer\":%s,"
               "\"in_place\":\"%s\",\"bytes_is\":", c->rooted ? "true" : "false",
               c->vform ? "true" : "false", rcoll_coll_by_bytes(c) ? "true" : "false",
               blocks_name(c->send.blocks), c->send.root_only ? "true" : "false",
               blocks_name(c->recv.blocks), c->recv.root_only ? "true" : "false",
               c->one_buffer ? "true" : "false",
               c->in_place == RCOLL_IN_PLACE_SEND ? "send" : c->in_place == RCOLL_IN_PLACE_RECV ? "recv" : "none");
        json_string(c->bytes_is);
        printf(",\"bytes_label\":");
        json_string(c->bytes_label);
        printf(",\"moves\":");
        json_string(c->moves);
        printf(",\"reduction\":%s", c->reduction ? "true" : "false");
        printf(",\"algos\":[");
        for (int i = 0; rcoll_coll_algo_name(c, i); i++) {
            printf("%s", i ? "," : "");
            json_string(rcoll_coll_algo_name(c, i));
        }
        printf("]}\n");
    }
}

static int parse_long(const char *text, long *out)
{
    char *end;
    *out = strtol(text, &end, 10);
    return *end || end == text || *out < 0;
}

int main(int argc, char **argv)
{
    int list = 0, explain = 0, colls = 0, coll = -1;
    long bytes = 0, size = -1, ppn = -1, per_host = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--list")) list = 1;
        else if (!strcmp(a, "--colls")) colls = 1;
        else if (!strcmp(a, "--explain")) explain = 1;
        else if (!strcmp(a, "--help") || !strcmp(a, "-h")) return usage(argv[0], 0);
        else if (v && !strcmp(a, "--coll")) { coll = rcoll_coll_from_name(v); i++;
            if (coll < 0) { fprintf(stderr, "rcoll-info: unknown collective '%s'\n", v); return 2; } }
        else if (v && !strcmp(a, "--bytes")) { if (parse_long(v, &bytes)) return usage(argv[0], 2); i++; }
        else if (v && !strcmp(a, "--size")) { if (parse_long(v, &size) || size < 1) return usage(argv[0], 2); i++; }
        else if (v && !strcmp(a, "--ppn")) { if (parse_long(v, &ppn) || ppn < 1) return usage(argv[0], 2); i++; }
        else if (v && !strcmp(a, "--nodes-per-host")) { if (parse_long(v, &per_host) || per_host < 1) return usage(argv[0], 2); i++; }
        else return usage(argv[0], 2);
    }
    if (list) {
        static char buf[32768];
        rcoll_list_algorithms(buf, sizeof buf);
        fputs(buf, stdout);
        char nets[128];
        rcoll_network_channels(nets, sizeof nets);
        printf("network channels (RCOLL_NET): %s\n",
               nets[0] ? nets : "none (this build runs teams on one node only)");
    }
    if (colls)
        print_colls();
    if (explain) {
        if (coll < 0 || size < 1)
            return usage(argv[0], 2);
        rcoll_context_t *ctx;
        if (rcoll_context_create(&ctx) != RCOLL_OK)
            return 1;
        char why[1024];
        const char *algo = rcoll_explain_hosts(ctx, (rcoll_coll_t)coll, (size_t)bytes, (int)size,
                                               (int)(ppn > 0 ? ppn : size), (int)per_host, why,
                                               sizeof why);
        printf("%s bytes=%ld size=%ld ppn=%ld -> %s\n  why: %s\n", rcoll_coll_name((rcoll_coll_t)coll),
               bytes, size, ppn > 0 ? ppn : size, algo ? algo : "(error)", why);
        rcoll_context_destroy(ctx);
        return algo ? 0 : 1;
    }
    return list || colls ? 0 : usage(argv[0], 2);
}
