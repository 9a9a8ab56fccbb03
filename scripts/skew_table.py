#!/usr/bin/env python3
"""Tables of scripts/bench_skew.sh's runs (docs/tuning.md, "Process arrival patterns").

For each case, collective and size: per implementation the median over runs of the Max column
(the slowest rank's mean time from its own arrival) and of AfterLast (from the last arrival
the rank depends on to its return), and, against rcoll's default, the median over runs of the
per-run ratio impl/default of the Max column (> 1: the default is faster). Floor is the
median of the runs' floors of the default's rows (the wait no algorithm can beat).
Usage: skew_table.py OUT_DIR [--sizes 8192,...]"""
import glob
import json
import os
import statistics
import sys


def load(out):
    cases = {}
    for path in sorted(glob.glob(os.path.join(out, "*-run*.jsonl"))):
        case = os.path.basename(path).rsplit("-run", 1)[0]
        run = {}
        for line in open(path):
            r = json.loads(line)
            if "max_us" not in r:
                continue
            impl = r["impl"] + (":" + r["forced_algo"] if r.get("forced") else "")
            run[(r["coll"], r["bytes"], impl)] = r
        cases.setdefault(case, []).append(run)
    return cases


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def table(case, runs, sizes):
    keys = sorted({k for run in runs for k in run}, key=lambda k: (k[0], k[1]))
    colls = sorted({(k[0], k[1]) for k in keys})
    impls = sorted({k[2] for k in keys}, key=lambda i: (i != "native", i != "rcoll", i))
    print(f"\n### {case} ({len(runs)} runs)\n")
    head = "| coll | bytes | floor | " + " | ".join(
        f"{i} Max / AfterLast (x default)" for i in impls) + " |"
    print(head)
    print("|" + "---|" * (3 + len(impls)))
    for coll, b in colls:
        if sizes and b not in sizes and coll not in ("barrier",):
            continue
        dflt = [run.get((coll, b, "rcoll")) for run in runs]
        floor = med([d["floor_us"] for d in dflt if d])
        cells = []
        for i in impls:
            rows = [run.get((coll, b, i)) for run in runs]
            mx = med([r["max_us"] for r in rows if r])
            al = med([r["after_last_us"] for r in rows if r])
            ratio = med([r["max_us"] / d["max_us"] for r, d in zip(rows, dflt) if r and d])
            algo = next((r["algo"] for r in rows if r), "")
            name = f" [{algo}]" if i == "rcoll" else ""
            cells.append(f"{mx:.1f} / {al:.1f}{name}" + ("" if i == "rcoll" else f" ({ratio:.2f})"))
        print(f"| {coll} | {b} | {floor:.1f} | " + " | ".join(cells) + " |")


def main():
    out = sys.argv[1]
    sizes = set()
    if "--sizes" in sys.argv:
        sizes = {int(x) for x in sys.argv[sys.argv.index("--sizes") + 1].split(",")}
    for case, runs in sorted(load(out).items()):
        table(case, runs, sizes)


if __name__ == "__main__":
    main()
