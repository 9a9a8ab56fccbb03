#!/usr/bin/env python3
"""Tables of docs/tuning.md, "Node-aware collectives and the cost model", from the JSON that
scripts/bench_nodes.sh writes: per layout and collective, native, rcoll's default (and what it
ran), the best flat and the best node-aware algorithm (Max us) and their ratios; a summary; and
how often the cost model's pick (rcoll-info --explain, its prediction) and the selection's
default rule are within 10% of the best algorithm measured.
Usage: scripts/nodes_table.py OUT_DIR [BUILD_DIR (build)]"""
import json
import os
import subprocess
import sys

LAYOUTS = [("2x2", 4, 2), ("2x4", 8, 4), ("4x2", 8, 2)]
COLLS = ["barrier", "allgather", "alltoall", "bcast", "allgatherv", "gatherv", "scatterv"]
# The picks judged by size: gatherv and scatterv are chosen without one (only the root knows
# their counts), so the model has no size to judge them by.
JUDGED = ["barrier", "allgather", "alltoall", "bcast", "allgatherv"]


def load(path):
    rows = {}
    for line in open(path):
        o = json.loads(line)
        if "error" in o:
            continue
        key = o["forced_algo"] if o.get("forced") else o["impl"]
        rows.setdefault(o["bytes"], {})[key] = (o["max_us"], o.get("algo"))
    return rows


def composed(name):
    """The node-aware algorithms are the ones named hier (barrier, bcast, gather, scatter) or
    hier_* (rcoll-info --list)."""
    return name == "hier" or name.startswith("hier_")


def picks(build, coll, size, p, ppn):
    """(the rule's pick, the model's pick) for one call."""
    out = subprocess.run([os.path.join(build, "rcoll-info"), "--explain", "--coll", coll,
                          "--bytes", str(size), "--size", str(p), "--ppn", str(ppn),
                          "--nodes-per-host", str(p // ppn)], capture_output=True, text=True).stdout
    rule = out.split("-> ")[1].split()[0]
    model = out.split("predicted ")[1].split()[0] if "predicted " in out else rule
    return rule, model


def main():
    out_dir = sys.argv[1]
    build = sys.argv[2] if len(sys.argv) > 2 else "build"
    summary, hits = [], {}
    for name, p, ppn in LAYOUTS:
        for coll in COLLS:
            rows = load(os.path.join(out_dir, "%s.%s.json" % (name, coll)))
            print("\n#### %s, %s (np=%d, %d per node)\n" % (coll, name, p, ppn))
            print("| bytes | native | rcoll default (ran) | best flat | best node-aware | "
                  "node-aware / flat | default / native | default / best |")
            print("|---|---|---|---|---|---|---|---|")
            for size in sorted(rows):
                r = rows[size]
                forced = {k: v[0] for k, v in r.items() if k not in ("native", "rcoll")}
                flat = {k: t for k, t in forced.items() if not composed(k)}
                node = {k: t for k, t in forced.items() if composed(k)}
                if not flat or not node or "native" not in r or "rcoll" not in r:
                    continue
                native, (dflt, ran) = r["native"][0], r["rcoll"]
                bf, bn = min(flat, key=flat.get), min(node, key=node.get)
                best = min(forced.values())
                print("| %d | %.1f | %.1f (%s) | %.1f %s | %.1f %s | %.2f | %.2f | %.2f |" % (
                    size, native, dflt, ran, flat[bf], bf, node[bn], bn, node[bn] / flat[bf],
                    dflt / native, dflt / best))
                summary.append((name, coll, size, node[bn] / flat[bf], dflt / native, dflt / best))
                if coll not in JUDGED:
                    continue
                rule, model = picks(build, coll, size, p, ppn)
                for who, pick in (("model", model), ("rule", rule)):
                    ok = forced.get(pick, float("inf")) <= 1.10 * best
                    hits.setdefault((name, who), []).append(ok)
    print("\n#### Summary\n")
    print("| layout | collective | best node-aware / best flat, 1 B-8 KB | default / native, up to "
          "64 KB | default / best (worst; cells > 1.05) |")
    print("|---|---|---|---|---|")
    for name, _, _ in LAYOUTS:
        for coll in COLLS:
            s = [x for x in summary if x[0] == name and x[1] == coll]
            small = [x[3] for x in s if x[2] <= 8192]
            upto64 = [x[4] for x in s if x[2] <= 65536]
            print("| %s | %s | %.2f-%.2f | %.2f-%.2f | %.2f (%d of %d) |" % (
                name, coll, min(small), max(small), min(upto64), max(upto64),
                max(x[5] for x in s), sum(1 for x in s if x[5] > 1.05), len(s)))
    print("\n#### Picks within 10% of the best measured\n")
    print("| layout | the cost model's pick | the default rule's pick |")
    print("|---|---|---|")
    total = {"model": [0, 0], "rule": [0, 0]}
    for name, _, _ in LAYOUTS:
        cells = []
        for who in ("model", "rule"):
            h = hits.get((name, who), [])
            total[who][0] += sum(h)
            total[who][1] += len(h)
            cells.append("%d of %d" % (sum(h), len(h)))
        print("| %s | %s | %s |" % (name, cells[0], cells[1]))
    print("| all | %d of %d | %d of %d |" % (total["model"][0], total["model"][1],
                                          total["rule"][0], total["rule"][1]))


if __name__ == "__main__":
    main()
