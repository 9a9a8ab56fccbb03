#!/usr/bin/env python3
"""Benchmark report for rcoll: reads the JSON-lines files written by `rcoll-bench --json` and
writes a markdown report (rcoll vs native MPI, Max latency column, per collective, MPI and
process count, with a summary table first) and log-log latency plots (PNG, matplotlib Agg
backend).

    python3 python/rcoll_report.py --out DIR --label openmpi=FILE1.jsonl --label mpich=FILE2.jsonl

Ratios are always rcoll Max / native Max of the same run: both were measured interleaved, size
by size, so machine noise hits both alike. rcoll-bench writes impl "rcoll" both for the automatic
choice and for forced algorithms; its "forced" key tells them apart (files without it: per size,
the first rcoll record of a file is the automatic one, as rcoll-bench runs impls in command-line
order, `rcoll` before `rcoll:<algo>`). A second native record for the same size starts a new run
(repeated runs of one label: several files, or one file appended to): the run whose ratio of
the automatic choice is the median stands for the size (the lower of the two middle ones for
an even count), and its table row also gives the lowest and highest ratio of the runs. A run
with a failed check stands instead, so that no failure hides behind a median. Records with an
"error" key are failed checks (rcoll error or wrong data): they show as FAILED in their table
and are listed in the report's Failures section.
Rooted collectives are grouped by their "root" (a rank or "rotate"), the v-forms by "skewed"
(rcoll-bench writes these keys exactly for those collectives). A forced algorithm that does not
apply to a call gives way to its fallback: "algo" names what ran, "forced_algo" what was asked.
What each collective is (its order, what its size means, what each rank moves) comes from
rcoll's table of collectives, `rcoll-info --colls` (JSON lines): --colls FILE, else colls.jsonl
beside the first input file; without either, the report says less about each collective.
With --soak FILE (rcoll-soak's JSON lines, one per impl, as scripts/run_benchmarks.sh writes
them) the report gets a "Soak test" section: native and rcoll side by side, a failed or timed-out
run shown as FAILED with its message, never with numbers it did not report.
"""

import argparse
import datetime
import json
import math
import os
import platform
import sys
from collections import OrderedDict

REQUIRED_KEYS = ("coll", "impl", "algo", "np", "ppn", "bytes", "avg_us", "min_us", "max_us",
                 "iter_max_us", "iters")
ERROR_KEYS = ("coll", "impl", "algo", "np", "ppn", "bytes", "error")

# rcoll's table of collectives (rcoll-info --colls), name -> row, in the table's order.
COLLS = OrderedDict()


def read_colls(path):
    """Loads rcoll-info --colls output into COLLS."""
    COLLS.clear()
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise SystemExit(f"{path}:{lineno}: not JSON: {e}")
            for key in ("coll", "vform", "send", "recv", "bytes_is", "bytes_label", "moves"):
                if key not in row:
                    raise SystemExit(f"{path}:{lineno}: missing key {key!r} (rcoll-info --colls?)")
            COLLS[row["coll"]] = row


def coll_text(coll):
    """What one measurement of `coll` is: the size axis as rcoll-bench defines it (OSU style)."""
    row = COLLS.get(coll)
    if row is None:
        return f"{coll}: bytes as rcoll-bench defines them (rcoll-bench --help)."
    name = coll[:1].upper() + coll[1:]
    if row["recv"]["blocks"] == "none":
        return f"{name}: no data ({row['moves']}), a single row per run."
    if not row["vform"]:
        return f"{name}: bytes = {row['bytes_is']}; {row['moves']}."
    # rcoll-bench's counts for the v-forms (its usage): m each, or skewed by rank (pair).
    pairs = row["send"]["blocks"] == "each" and row["recv"]["blocks"] == "each"
    skew = "((r + j) % 4) * m / 2 to rank j" if pairs else "(r % 4) * m / 2"
    return (f"{name}: bytes = m; rank r's count is m (equal counts) or {skew} (skewed counts); "
            f"{row['moves']}.")


def x_label(coll):
    row = COLLS.get(coll)
    return row["bytes_label"] if row else "bytes (m)"


def read_records(path):
    """Returns the list of records of one JSON-lines file, in file order."""
    records = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as e:
                raise SystemExit(f"{path}:{lineno}: not JSON: {e}")
            keys = ERROR_KEYS if "error" in rec else REQUIRED_KEYS
            missing = [k for k in keys if k not in rec]
            if missing:
                raise SystemExit(f"{path}:{lineno}: missing keys {missing}")
            records.append(rec)
    return records


def variant_of(rec):
    """'' or a text such as 'root 0', 'root rotate', 'skewed counts' for the group key: rcoll-bench
    writes "root" for the rooted collectives and "skewed" for the v-forms."""
    parts = []
    if "root" in rec:
        parts.append(f"root {rec['root']}")
    if "skewed" in rec:
        parts.append("skewed counts" if rec["skewed"] else "equal counts")
    return ", ".join(parts)


def failed(rec):
    return rec is not None and "error" in rec


class Point:
    """Everything measured for one (label, coll, variant, np, bytes)."""

    def __init__(self):
        self.native = None
        self.auto = None
        self.forced = OrderedDict()  # algo asked for -> record (its "algo": what ran)
        self.runs = []  # earlier runs: (native, auto, forced)
        self.run_ratios = []  # the automatic choice's ratio in each run, once finished

    def add(self, rec):
        if rec["impl"] == "native":
            if self.native is not None:  # a new run of the same point
                self.runs.append((self.native, self.auto, self.forced))
                self.auto = None
                self.forced = OrderedDict()
            self.native = rec
            return
        forced = rec.get("forced")
        if forced is None:
            forced = self.auto is not None
        if forced:
            self.forced[rec.get("forced_algo", rec["algo"])] = rec
        else:
            self.auto = rec

    def finish(self):
        """After the last record: one run stands for the point (see the module text)."""
        if not self.runs:
            return
        runs = self.runs + [(self.native, self.auto, self.forced)]
        self.runs = []
        scored = sorted((ratio(a, n), i) for i, (n, a, _) in enumerate(runs)
                        if ratio(a, n) is not None)
        self.run_ratios = [r for r, _ in scored]
        bad = [i for i, (n, a, f) in enumerate(runs)
               if any(failed(rec) for rec in [n, a, *f.values()])]
        if bad:
            pick = bad[-1]
        elif scored:
            pick = scored[(len(scored) - 1) // 2][1]
        else:
            pick = len(runs) - 1
        self.native, self.auto, self.forced = runs[pick]


def coll_rank(coll):
    order = list(COLLS)
    return order.index(coll) if coll in order else len(order)


def group(labelled_records):
    """(label, coll, variant, np) -> {"ppn": int, "points": {bytes: Point}}, ordered by
    collective, variant, label (input order) and np."""
    groups = {}
    label_order = []
    for label, records in labelled_records:
        if label not in label_order:
            label_order.append(label)
        for rec in records:
            key = (label, rec["coll"], variant_of(rec), int(rec["np"]))
            g = groups.setdefault(key, {"ppn": rec["ppn"], "points": {}})
            g["points"].setdefault(int(rec["bytes"]), Point()).add(rec)
    for g in groups.values():
        for p in g["points"].values():
            p.finish()

    def order(key):
        label, coll, variant, np_ = key
        return (coll_rank(coll), coll, variant, label_order.index(label), np_)

    return OrderedDict((k, groups[k]) for k in sorted(groups, key=order))


def cpu_model():
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def fmt_us(rec):
    if failed(rec):
        return "FAILED"
    return f"{rec['max_us']:.2f}" if rec else "-"


def ratio(rec, native):
    if not rec or not native or failed(rec) or failed(native) or native["max_us"] <= 0:
        return None
    return rec["max_us"] / native["max_us"]


def fmt_ratio(r):
    return f"{r:.2f}" if r is not None else "-"


def fmt_bytes(n):
    for unit, size in (("M", 1 << 20), ("K", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size}{unit}"
    return str(n)


def table_lines(points):
    """Markdown table rows for one group, and the list of (bytes, auto ratio)."""
    lines = ["| bytes | native max_us | rcoll max_us | rcoll algo | ratio |",
             "|---:|---:|---:|:---|---:|"]
    ratios = []
    for nbytes in sorted(points):
        p = points[nbytes]
        r = ratio(p.auto, p.native)
        if r is not None:
            ratios.append((nbytes, r))
        algo = p.auto["algo"] if p.auto else "-"
        if failed(p.auto):
            algo += " (failed check, see Failures)"
        spread = ""
        if len(p.run_ratios) > 1:
            spread = (f" ({p.run_ratios[0]:.2f}-{p.run_ratios[-1]:.2f} in "
                      f"{len(p.run_ratios)} runs)")
        lines.append(f"| {fmt_bytes(nbytes)} | {fmt_us(p.native)} | {fmt_us(p.auto)} | {algo} | "
                     f"{fmt_ratio(r)}{spread} |")
        for algo, rec in p.forced.items():
            note = "forced, failed check" if failed(rec) else "forced"
            ran = algo
            if rec["algo"] != algo:  # gave way to its fallback
                ran, note = rec["algo"], f"{note} {algo}, which does not apply here"
            lines.append(f"| {fmt_bytes(nbytes)} | | {fmt_us(rec)} | {ran} ({note}) | "
                         f"{fmt_ratio(ratio(rec, p.native))} |")
    return lines, ratios


def geomean(values):
    values = [v for v in values if v > 0]
    if not values:
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))


def records_of(points):
    return [rec for p in points.values() for rec in [p.native, p.auto, *p.forced.values()] if rec]


def iters_note(points):
    iters = sorted({rec["iters"] for rec in records_of(points) if not failed(rec)})
    if not iters:
        return "-"
    return f"{iters[0]}" if len(iters) == 1 else f"{iters[0]}-{iters[-1]}"


def auto_algos(points):
    algos = []
    for nbytes in sorted(points):
        rec = points[nbytes].auto
        if rec and not failed(rec) and rec["algo"] not in algos:
            algos.append(rec["algo"])
    return algos


def group_title(label, coll, variant, np_, ppn):
    extra = f", {variant}" if variant else ""
    return f"{label}: {coll}{extra}, np={np_}, ppn={ppn}"


def summary_lines(groups):
    """One row per table: how rcoll's automatic choice compares with native MPI."""
    lines = ["| collective | MPI | np | sizes | geomean ratio | rcoll faster at | worst ratio (at) "
             "| rcoll algorithms |",
             "|:---|:---|---:|---:|---:|---:|---:|:---|"]
    for (label, coll, variant, np_), g in groups.items():
        points = g["points"]
        _, ratios = table_lines(points)
        nfail = sum(1 for rec in records_of(points) if failed(rec))
        name = coll + (f" ({variant})" if variant else "")
        gm = geomean([r for _, r in ratios])
        if ratios:
            worst_b, worst = max(ratios, key=lambda x: x[1])
            faster = f"{sum(1 for _, r in ratios if r < 1)} of {len(ratios)}"
            worst_txt = f"{worst:.2f} ({fmt_bytes(worst_b)})"
        else:
            faster, worst_txt = "-", "-"
        algos = ", ".join(auto_algos(points)) or "-"
        if nfail:
            algos += f"; **{nfail} FAILED**"
        lines.append(f"| {name} | {label} | {np_} | {len(points)} | "
                     f"{fmt_ratio(gm)} | {faster} | {worst_txt} | {algos} |")
    return lines


def failure_lines(groups):
    lines = []
    for (label, coll, variant, np_), g in groups.items():
        for nbytes in sorted(g["points"]):
            p = g["points"][nbytes]
            for rec in [p.native, p.auto, *p.forced.values()]:
                if failed(rec):
                    who = "native" if rec["impl"] == "native" else f"rcoll {rec['algo']}" + (
                        " (forced)" if rec.get("forced") else "")
                    lines.append(f"- {group_title(label, coll, variant, np_, g['ppn'])}, "
                                 f"{fmt_bytes(nbytes)} bytes, {who}: {rec['error']} "
                                 "(not measured at the larger sizes)")
    return lines


def read_soak(path):
    """The soak runs of FILE (scripts/run_benchmarks.sh): impl -> its last record."""
    runs = OrderedDict()
    if not path or not os.path.exists(path):
        return runs
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if line.strip():
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError as e:
                    raise SystemExit(f"{path}:{lineno}: not JSON: {e}")
                runs[rec.get("impl", f"run {lineno}")] = rec
    return runs


def soak_failed(rec):
    return rec is None or "failed" in rec or not rec.get("ok")


def soak_cell(rec, *keys, fmt="{}"):
    """'a -> b -> c' of rec's keys, '-' for what the run did not report."""
    if rec is None or "failed" in rec:
        return "-"
    return " -> ".join(fmt.format(rec[k]) if k in rec else "-" for k in keys)


def soak_verdict(rec):
    if rec is None:
        return "not run"
    if "failed" in rec:
        detail = f" (`{rec['detail']}`)" if rec.get("detail") else ""
        return f"**FAILED**: {rec['failed']}{detail}".replace("|", "\\|")  # table cell
    if not rec.get("ok"):
        return f"**FAILED**: {rec.get('error', 'see its stderr')}".replace("|", "\\|")
    return "OK"


def soak_lines(runs):
    """The "Soak test" section: native and rcoll side by side, failures said plainly."""
    lines = ["## Soak test", ""]
    some = next((r for r in runs.values() if "calls" in r and "failed" not in r), None)
    text = ("`rcoll-soak` (tools/rcoll_soak.c, docs/benchmarking.md): back-to-back collectives of "
            "all ten kinds, no barrier between them, block sizes mostly small (0 B to 64 KB, "
            "rarely up to 1 MB), over MPI_COMM_WORLD, a duplicate, two halves, a reversed split, "
            "an odd/even split and all ranks but the last; roots rotating or random, "
            "MPI_IN_PLACE at times. The same schedule runs natively and with librcoll-mpi.so "
            "preloaded, np=4, Open MPI. Resources are the maximum over the ranks, at the start, "
            "after the warm-up (a checked sweep of every collective, communicator and power-of-two "
            "size, then the first calls of the schedule) and at the end; after the warm-up, more "
            "open fds, an rcoll entry of this job left in /dev/shm, or VmRSS growth beyond the "
            "limit fails the run.")
    if some:
        text += (f" This run: {some['calls']} calls, seed {some.get('seed', '?')}, every "
                 f"{some.get('check_every', '?')}th call and the last {some.get('tail', '?')} "
                 f"checked byte by byte, warm-up {some.get('warmup', '?')} calls")
        text += (f", the duplicate freed and duplicated again every {some['churn']} calls."
                 if some.get("churn") else ".")
    lines.append(text)
    lines.append("")
    impls = [i for i in ("native", "rcoll") if i in runs] + [i for i in runs
                                                             if i not in ("native", "rcoll")]
    lines.append("| | " + " | ".join(impls) + " |")
    lines.append("|:---|" + "---:|" * len(impls))
    rows = [
        ("calls (checked)", lambda r: "-" if r is None or "failed" in r else
         f"{r.get('calls', '-')} ({r.get('checked', '-')})"),
        ("seconds", lambda r: soak_cell(r, "seconds", fmt="{:.2f}")),
        ("rate (calls/s)", lambda r: soak_cell(r, "rate", fmt="{:.0f}")),
        ("VmRSS kB: start -> warm -> end", lambda r: soak_cell(
            r, "rss_kb_start", "rss_kb_warm", "rss_kb_end")),
        ("of it anonymous kB", lambda r: soak_cell(
            r, "rss_anon_kb_start", "rss_anon_kb_warm", "rss_anon_kb_end")),
        ("of it shared memory kB", lambda r: soak_cell(
            r, "rss_shmem_kb_start", "rss_shmem_kb_warm", "rss_shmem_kb_end")),
        ("VmRSS growth after the warm-up kB (limit)", lambda r: "-" if r is None or "failed" in r
         else f"{r.get('rss_growth_kb', '-')} ({r.get('rss_limit_kb', '-')})"),
        ("open fds: start -> warm -> end", lambda r: soak_cell(
            r, "fds_start", "fds_warm", "fds_end")),
        ("/dev/shm rcoll entries: start -> warm -> end", lambda r: soak_cell(
            r, "shm_start", "shm_warm", "shm_end")),
        ("of them this job's", lambda r: soak_cell(r, "shm_job_start", "shm_job_warm",
                                                     "shm_job_end")),
        ("verdict", soak_verdict),
    ]
    for name, cell in rows:
        lines.append(f"| {name} | " + " | ".join(cell(runs[i]) for i in impls) + " |")
    lines.append("")
    native, mine = runs.get("native"), runs.get("rcoll")
    if soak_failed(native) or soak_failed(mine):
        bad = [i for i in impls if soak_failed(runs[i])]
        lines.append(f"The soak test FAILED ({', '.join(bad)}): see the verdict above and "
                     "`raw/soak-<impl>.err`.")
    if (native and mine and native.get("rate") and mine.get("rate")
            and "failed" not in native and "failed" not in mine):
        r = mine["rate"] / native["rate"]
        lines.append(f"Rate of rcoll / rate of native: **{r:.2f}** (above 1: rcoll completes "
                     f"more calls per second; {mine['rate']:.0f} against {native['rate']:.0f}).")
    lines.append("")
    return lines


def write_report(out_dir, groups, labels, notes, plots, soak=None):
    lines = ["# rcoll benchmark report", ""]
    lines.append(f"- Machine: {os.cpu_count()} CPUs (nproc), {cpu_model()}, {platform.system()} "
                 f"{platform.release()}")
    lines.append(f"- Date: {datetime.datetime.now().astimezone().strftime('%Y-%m-%d %H:%M %Z')}")
    lines.append("- Inputs: " + ", ".join(f"{label} = `{os.path.basename(path)}`"
                                          for label, path in labels))
    lines.append("- Latencies are the Max column of rcoll-bench (max over ranks of each rank's "
                 "mean per-call time, OSU style), in microseconds.")
    lines.append("- Ratios are rcoll Max / native Max measured in the same run (both interleaved "
                 "size by size); below 1 means rcoll is faster. Compare ratios, not absolute "
                 "times, across runs.")
    lines.append("- Every measured (collective, implementation, size) first passed a data check "
                 "of one call (rcoll-bench); a failed check is shown as FAILED, the sizes after it "
                 "are not measured, and it is listed under Failures.")
    for note in notes:
        lines.append(f"- Note: {note}")
    lines.append("")
    lines.append("## Summary")
    lines.append("")
    lines.append("rcoll's automatic choice against native MPI, one row per table below: geometric "
                 "mean of the ratios over the sizes, the sizes where rcoll is faster, the worst "
                 "ratio and the algorithms rcoll chose.")
    lines.append("")
    lines.extend(summary_lines(groups))
    lines.append("")
    failures = failure_lines(groups)
    if soak:
        failures += [f"- Soak test, {impl}: {soak_verdict(rec)}" for impl, rec in soak.items()
                     if soak_failed(rec)]
    if failures:
        lines.append("## Failures")
        lines.append("")
        lines.extend(failures)
        lines.append("")
    if soak:
        lines.extend(soak_lines(soak))
    current = None
    for (label, coll, variant, np_), g in groups.items():
        if coll != current:
            current = coll
            lines.append(f"## {coll}")
            lines.append("")
            lines.append(coll_text(coll))
            lines.append("")
        points = g["points"]
        lines.append(f"### {group_title(label, coll, variant, np_, g['ppn'])}")
        lines.append("")
        rows, ratios = table_lines(points)
        lines.extend(rows)
        lines.append("")
        gm = geomean([r for _, r in ratios])
        summary = f"Iterations per size: {iters_note(points)}."
        if gm is not None:
            summary += (f" Geometric mean of the ratios (automatic choice): {gm:.2f}; rcoll faster "
                        f"at {sum(1 for _, r in ratios if r < 1)} of {len(ratios)} sizes.")
        if any(rec.get("sync") for rec in records_of(points)):
            summary += " Iterations separated by an untimed MPI barrier (OSU style)."
        nfail = sum(1 for rec in records_of(points) if failed(rec))
        if nfail:
            summary += f" {nfail} failed check(s): see Failures."
        lines.append(summary)
        lines.append("")
    if plots:
        lines.append("## Plots")
        lines.append("")
        for name in plots:
            lines.append(f"![{name}]({name})")
            lines.append("")
    path = os.path.join(out_dir, "report.md")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    return path


def series_for(groups, coll, variant, np_):
    """(name, [(bytes, max_us)]) for every label and impl/algo of one (coll, variant, np)."""
    series = OrderedDict()
    for (label, c, v, n), g in groups.items():
        if c != coll or v != variant or n != np_:
            continue
        for nbytes in sorted(g["points"]):
            p = g["points"][nbytes]
            entries = [("native", p.native), ("rcoll (auto)", p.auto)]
            entries += [(f"rcoll:{algo}", rec) for algo, rec in p.forced.items()]
            for impl, rec in entries:
                if rec and not failed(rec):
                    series.setdefault(f"{label} {impl}", []).append((nbytes, rec["max_us"]))
    return series


def slug(text):
    """'root 0, equal counts' -> 'root0_equal_counts' (file-name safe)."""
    words = "".join(ch if ch.isalnum() else " " for ch in text).split()
    return "_".join(words).replace("root_", "root")


def plot_all(out_dir, groups):
    """Writes <coll>[_<variant>]_np<N>.png per (coll, variant, np); returns the file names."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("rcoll_report: matplotlib is not installed; no plots written", file=sys.stderr)
        return []
    names = []
    seen = []
    for (_, c, v, n) in groups:
        if (c, v, n) not in seen:
            seen.append((c, v, n))
    for coll, variant, np_ in seen:
        series = series_for(groups, coll, variant, np_)
        if not series:
            continue
        fig, ax = plt.subplots(figsize=(8, 5))
        sized = any(b > 0 for pts in series.values() for b, _ in pts)
        if sized:
            plot_lines(ax, series, x_label(coll))
        else:
            plot_bars(ax, series)
        extra = f" ({variant})" if variant else ""
        ax.set_title(f"{coll}{extra}, np={np_}: Max latency (lower is better)")
        ax.grid(True, which="both", alpha=0.3)
        fig.tight_layout()
        name = f"{coll}{'_' + slug(variant) if variant else ''}_np{np_}.png"
        fig.savefig(os.path.join(out_dir, name), dpi=110)
        plt.close(fig)
        names.append(name)
    return names


def plot_lines(ax, series, xlabel):
    styles = ["-", "--", ":", "-."]
    labels = []
    for name in series:
        label = name.split(" ", 1)[0]
        if label not in labels:
            labels.append(label)
    for name, pts in series.items():
        pts = [(b, us) for b, us in pts if b > 0 and us > 0]
        if not pts:
            continue
        style = styles[labels.index(name.split(" ", 1)[0]) % len(styles)]
        ax.plot([b for b, _ in pts], [us for _, us in pts], style, marker="o", markersize=3,
                label=name)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("max latency (us)")
    ax.legend(fontsize=8)


def plot_bars(ax, series):
    """Barrier (no size axis): one bar per label and impl, log scale (MPICH crowded is ms), values printed."""
    names = list(series)
    values = [series[n][0][1] for n in names]
    colors = [f"C{i % 10}" for i in range(len(names))]
    bars = ax.bar(range(len(names)), values, color=colors)
    for bar, value in zip(bars, values):
        ax.annotate(f"{value:.2f}", (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                    ha="center", va="bottom", fontsize=8)
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=30, ha="right", fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("max latency (us)")


def parse_label(text):
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"expected LABEL=FILE, got {text!r}")
    label, path = text.split("=", 1)
    if not label or not path:
        raise argparse.ArgumentTypeError(f"expected LABEL=FILE, got {text!r}")
    return label, path


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="output directory (report.md and *.png)")
    ap.add_argument("--label", action="append", type=parse_label, required=True,
                    metavar="LABEL=FILE",
                    help="a JSON-lines file from rcoll-bench --json and the MPI it was run with; "
                         "repeatable, and a label may be given several files")
    ap.add_argument("--note", action="append", default=[],
                    help="a line added to the report header (repeatable)")
    ap.add_argument("--no-plots", action="store_true", help="write only report.md")
    ap.add_argument("--colls", metavar="FILE",
                    help="rcoll's table of collectives (rcoll-info --colls); default: colls.jsonl "
                         "beside the first --label file, if there is one")
    ap.add_argument("--soak", metavar="FILE",
                    help="JSON lines of rcoll-soak runs (one per impl, from run_benchmarks.sh): "
                         "adds the Soak test section")
    args = ap.parse_args(argv)

    colls = args.colls
    if colls is None:
        beside = os.path.join(os.path.dirname(args.label[0][1]), "colls.jsonl")
        colls = beside if os.path.exists(beside) else None
    if colls:
        read_colls(colls)
    else:
        print("rcoll_report: no table of collectives (rcoll-info --colls, --colls FILE): "
              "collectives in name order, without what they move", file=sys.stderr)
    labelled = []
    for label, path in args.label:
        if not os.path.exists(path):
            print(f"rcoll_report: {path} does not exist; skipped", file=sys.stderr)
            continue
        labelled.append((label, read_records(path)))
    groups = group(labelled)
    if not groups:
        raise SystemExit("rcoll_report: no records in the input files")
    os.makedirs(args.out, exist_ok=True)
    plots = [] if args.no_plots else plot_all(args.out, groups)
    path = write_report(args.out, groups, args.label, args.note, plots, read_soak(args.soak))
    print(f"rcoll_report: wrote {path}" + (f" and {len(plots)} plots" if plots else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
