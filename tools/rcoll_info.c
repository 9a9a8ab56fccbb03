/* rcoll-info: what rcoll would run and why (--explain), and the algorithm registry (--list). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rcoll/rcoll.h"

static int usage(const char *prog, int code)
{
    fprintf(code ? stderr : stdout,
            "usage: %s --list\n"
            "       %s --explain --coll C --bytes N --size P [--ppn Q]\n"
            "  --explain  print the algorithm rcoll selects for N bytes per rank (bcast: the\n"
            "             message; the v-forms are chosen by team size alone) on a team of P\n"
            "             ranks with Q ranks per node (default Q = P), and why; RCOLL_*_ALGO\n"
            "             overrides in the environment apply. C: barrier, allgather, alltoall,\n"
            "             bcast, gather, scatter, allgatherv, alltoallv, gatherv, scatterv\n"
            "  --list     print every algorithm with its collective and summary\n",
            prog, prog);
    return code;
}

static int parse_long(const char *text, long *out)
{
    char *end;
    *out = strtol(text, &end, 10);
    return *end || end == text || *out < 0;
}

int main(int argc, char **argv)
{
    int list = 0, explain = 0, coll = -1;
    long bytes = 0, size = -1, ppn = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--list")) list = 1;
        else if (!strcmp(a, "--explain")) explain = 1;
        else if (!strcmp(a, "--help") || !strcmp(a, "-h")) return usage(argv[0], 0);
        else if (v && !strcmp(a, "--coll")) { coll = rcoll_coll_from_name(v); i++;
            if (coll < 0) { fprintf(stderr, "rcoll-info: unknown collective '%s'\n", v); return 2; } }
        else if (v && !strcmp(a, "--bytes")) { if (parse_long(v, &bytes)) return usage(argv[0], 2); i++; }
        else if (v && !strcmp(a, "--size")) { if (parse_long(v, &size) || size < 1) return usage(argv[0], 2); i++; }
        else if (v && !strcmp(a, "--ppn")) { if (parse_long(v, &ppn) || ppn < 1) return usage(argv[0], 2); i++; }
        else return usage(argv[0], 2);
    }
    if (list) {
        char buf[8192];
        rcoll_list_algorithms(buf, sizeof buf);
        fputs(buf, stdout);
    }
    if (explain) {
        if (coll < 0 || size < 1)
            return usage(argv[0], 2);
        rcoll_context_t *ctx;
        if (rcoll_context_create(&ctx) != RCOLL_OK)
            return 1;
        char why[512];
        const char *algo = rcoll_explain(ctx, (rcoll_coll_t)coll, (size_t)bytes, (int)size,
                                         (int)(ppn > 0 ? ppn : size), why, sizeof why);
        printf("%s bytes=%ld size=%ld ppn=%ld -> %s\n  why: %s\n", rcoll_coll_name((rcoll_coll_t)coll),
               bytes, size, ppn > 0 ? ppn : size, algo ? algo : "(error)", why);
        rcoll_context_destroy(ctx);
        return algo ? 0 : 1;
    }
    return list ? 0 : usage(argv[0], 2);
}
