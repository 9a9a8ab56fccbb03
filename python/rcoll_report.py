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
Rooted collectives are grouped by their "root" (a rank or "rotate"), the v-forms by "skewed",
the reductions by their operation and element type ("op", "dtype": a table per collective, op
and type, e.g. "allreduce, sum of double") (rcoll-bench writes these keys exactly for those
collectives). A forced algorithm that does not
apply to a call gives way to its fallback: "algo" names what ran, "forced_algo" what was asked.
What each collective is (its order, what its size means, what each rank moves) comes from
rcoll's table of collectives, `rcoll-info --colls` (JSON lines): --colls FILE, else colls.jsonl
beside the first input file; without either, the report says less about each collective.
With --soak FILE (rcoll-soak's JSON lines, one per impl, as scripts/run_benchmarks.sh writes
them) the report gets a "Soak test" section: native and rcoll side by side, a failed or timed-out
run shown as FAILED with its message, never with numbers it did not report.
With --apps FILE (the application kernels' JSON lines, scripts/run_apps.sh) the report gets an
"Application kernels" section: per (kernel, size, MPI, np) the median over the runs of the
whole timed loop and of the time inside the collectives, natively and with rcoll, and the
speed-ups native / rcoll (above 1: rcoll faster); a row with a failed run shows FAILED instead
of a speed-up, and the run is listed under Failures; the plot apps.png shows the speed-ups.
--label may be left out when --apps or --soak is given (a report of those sections only).
With --modes LABEL=FILE (rcoll-bench --overlap and --persistent runs, JSON lines with "mode") the
report gets a "Nonblocking and persistent collectives" section: per MPI and np the overlap
percentage (OSU's) and the time inside wait of native and rcoll, the same with half of the ranks
late (the early ranks' wait against the pure time without skew), and nonblocking post+wait and
persistent start+wait against the blocking calls of both (their IMPL@MODE records, "run_mode"). Records whose "mode" is not "blocking" never enter the
per-collective tables of --label.
"""

import argparse
import datetime
import json
import math
import os
import platform
import statistics
import sys
import textwrap
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
    if row.get("reduction"):
        # rcoll-bench's size axis for a reduction: bytes of the elements (rcoll-bench --help).
        count = ("count = bytes / element size, every rank's count alike (equal counts) or rank "
                 "r's (r % 4) * count / 2 (skewed counts)" if row["vform"]
                 else "count = bytes / element size")
        return (f"{name}: bytes = {row['bytes_is']}, {count}; the operation and element type "
                f"are in each table's title (rcoll-bench --op, --dtype; native MPI the same); "
                f"{row['moves']}.")
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


def read_records(path, keys_of=None):
    """Returns the list of records of one JSON-lines file, in file order, each checked for the
    keys keys_of(record) names (default: rcoll-bench's, or those of its error records)."""
    if keys_of is None:
        keys_of = lambda rec: ERROR_KEYS if "error" in rec else REQUIRED_KEYS
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
            missing = [k for k in keys_of(rec) if k not in rec]
            if missing:
                raise SystemExit(f"{path}:{lineno}: missing keys {missing}")
            records.append(rec)
    return records


def variant_of(rec):
    """'' or a text such as 'root 0', 'root rotate', 'skewed counts', 'sum of double' for the
    group key: rcoll-bench writes "root" for the rooted collectives, "skewed" for the v-forms and
    "op" and "dtype" for the reductions."""
    parts = []
    if "op" in rec:
        parts.append(f"{rec['op']} of {rec.get('dtype', '?')}")
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
            if rec.get("mode", "blocking") != "blocking":  # the Nonblocking section's
                continue
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


# What each application kernel is (apps/README.md); {blas}: what matmul multiplied with.
APP_TEXT = OrderedDict([
    ("matmul", "dense C = A x B in row blocks (seed 000, section 5.3): every iteration an "
               "MPI_Allgather (MPI_Allgatherv where P does not divide N) of B's row blocks, "
               "N*N/P doubles from each rank, into a freshly allocated buffer, then the block "
               "product ({blas})"),
    ("nbody", "gravitational N-body steps (seed 001, section 6.5.3): every step an MPI_Allgather "
              "of the positions and masses, 32 B per body from each rank (64 B with the default "
              "2 bodies), then the forces on the rank's own bodies"),
    ("radix", "radix sort of 32-bit keys (seed 001, section 6.5.3): every pass over a 10-bit "
              "digit an MPI_Allgather of the 4 KB histograms, an MPI_Alltoall of the key counts "
              "and an MPI_Alltoallv of the keys"),
    ("fft3d", "3-D complex FFT as NAS FT (seed 001, section 6.5.3), class S 64x64x64 or W "
              "128x128x32 in z-slabs: every forward and every inverse transform transposes the "
              "grid by one MPI_Alltoall, the rest is 1-D FFTs"),
])
APP_KEYS = ("app", "np", "impl", "mpi")


def read_apps(path):
    """The application kernel runs of FILE (scripts/run_apps.sh), in file order."""
    records = []
    if not path:
        return records
    if not os.path.exists(path):
        print(f"rcoll_report: {path} does not exist; no Application kernels section",
              file=sys.stderr)
        return records
    return read_records(
        path, lambda rec: APP_KEYS if app_failed(rec) else APP_KEYS + ("total_s", "coll_s"))


def app_failed(rec):
    return "failed" in rec or not rec.get("ok")


class AppRow:
    """The runs of one (kernel, its options, MPI, np): native and rcoll side by side."""

    def __init__(self, app, args, mpi, np_):
        self.app, self.args, self.mpi, self.np = app, args, mpi, np_
        self.runs = {"native": [], "rcoll": []}
        self.size = None
        self.colls = []

    def add(self, rec):
        self.runs.setdefault(rec["impl"], []).append(rec)
        if not app_failed(rec):
            self.size = self.size or rec.get("size")
            if rec.get("coll") and rec["coll"] not in self.colls:
                self.colls.append(rec["coll"])

    def label(self):
        return f"{self.app} {self.size or self.args or 'default'}"

    def failures(self):
        return [r for impl in ("native", "rcoll") for r in self.runs.get(impl, [])
                if app_failed(r)]

    def median(self, impl, key):
        values = [r[key] for r in self.runs.get(impl, []) if not app_failed(r)]
        return statistics.median(values) if values else None

    def speedup(self, key):
        """native / rcoll of the medians; None where a run failed or one side is missing."""
        native, mine = self.median("native", key), self.median("rcoll", key)
        if self.failures() or not native or not mine:
            return None
        return native / mine

    def round_speedups(self, key):
        """native / rcoll of each round (the two runs measured back to back), sorted."""
        by_run = {}
        for impl in ("native", "rcoll"):
            for r in self.runs.get(impl, []):
                if not app_failed(r):
                    by_run.setdefault(r.get("run"), {})[impl] = r[key]
        return sorted(t["native"] / t["rcoll"] for t in by_run.values()
                      if t.get("native") and t.get("rcoll"))


def app_rows(records):
    """AppRow per (kernel, options, MPI, np): kernels in file order, then MPI, then np."""
    rows = OrderedDict()
    for rec in records:
        key = (rec["app"], rec.get("args", ""), rec["mpi"], int(rec["np"]))
        rows.setdefault(key, AppRow(*key)).add(rec)
    cases = list(OrderedDict.fromkeys((a, o) for a, o, _, _ in rows))
    mpis = list(OrderedDict.fromkeys(m for _, _, m, _ in rows))
    return [rows[k] for k in sorted(rows, key=lambda k: (cases.index(k[:2]), mpis.index(k[2]),
                                                         k[3]))]


def app_failure_lines(rows):
    lines = []
    for row in rows:
        for r in row.failures():
            detail = f" (`{r['detail']}`)" if r.get("detail") else ""
            lines.append(f"- Application kernel {row.label()}, {row.mpi} np={row.np}, "
                         f"{r['impl']}, run {r.get('run', '?')}: "
                         f"{r.get('failed', 'wrong result')}{detail}")
    return lines


def fmt_s(v):
    return f"{v:.3f}" if v is not None else "-"


def speedup_cell(row, key):
    if row.failures():
        return "FAILED"
    r = row.speedup(key)
    if r is None:
        return "-"
    spread = row.round_speedups(key)
    extra = f" ({spread[0]:.2f}-{spread[-1]:.2f})" if len(spread) > 1 else ""
    return f"{r:.2f}{extra}"


def apps_lines(records, plot=None):
    """The "Application kernels" section."""
    rows = app_rows(records)
    lines = ["## Application kernels", ""]
    blas = sorted({r["blas"] for r in records if r.get("app") == "matmul" and r.get("blas")})
    nruns = max((len(v) for row in rows for v in row.runs.values()), default=0)
    lines.append("Four MPI programs (apps/, apps/README.md; plain MPI, no rcoll header) run "
                 "natively and with librcoll-mpi.so (Open MPI) or librcoll-mpi-mpich.so (MPICH) "
                 "preloaded, by scripts/run_apps.sh:")
    lines.append("")
    for app in list(APP_TEXT) + sorted({r.app for r in rows} - set(APP_TEXT)):
        if any(r.app == app for r in rows):
            text = APP_TEXT.get(app, "see apps/README.md")
            lines.append(f"- {app}: " + text.format(blas=", ".join(blas) or "BLAS unknown"))
    lines.append("")
    lines.append(f"Each run: one warm-up iteration, then the timed ones; total = the timed loop "
                 "(the kernel's result checks left out), in collectives = the time inside the "
                 "collective calls, each the maximum over the ranks, in seconds: the median of "
                 f"{nruns} run(s), native and rcoll back to back in each round, their order "
                 "swapped every round. Speed-up = native time / rcoll time of those medians: "
                 "**above 1, rcoll is faster** (the opposite sense of the rcoll / native ratios "
                 "of the collectives' tables); in parentheses the lowest and highest of the rounds' own speed-ups. "
                 "Every run checked its result (apps/README.md); a row with a failed run shows "
                 "FAILED (see Failures). More ranks than cores (np=4 on this machine) make the "
                 "time in collectives include waiting for ranks that are not running.")
    lines.append("")
    lines.append("| kernel | size | MPI | np | collectives | runs | native total s | native in "
                 "collectives s | rcoll total s | rcoll in collectives s | speed-up end to end "
                 "| speed-up in collectives |")
    lines.append("|:---|:---|:---|---:|:---|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        nrun = max(len(row.runs.get("native", [])), len(row.runs.get("rcoll", [])))
        nfail = len(row.failures())
        runs = f"{nrun}" + (f" ({nfail} failed)" if nfail else "")
        lines.append(f"| {row.app} | {row.size or row.args or '-'} | {row.mpi} | {row.np} | "
                     f"{', '.join(row.colls) or '-'} | {runs} | "
                     f"{fmt_s(row.median('native', 'total_s'))} | "
                     f"{fmt_s(row.median('native', 'coll_s'))} | "
                     f"{fmt_s(row.median('rcoll', 'total_s'))} | "
                     f"{fmt_s(row.median('rcoll', 'coll_s'))} | "
                     f"{speedup_cell(row, 'total_s')} | {speedup_cell(row, 'coll_s')} |")
    lines.append("")
    summary = []
    for mpi in OrderedDict.fromkeys(r.mpi for r in rows):
        for np_ in sorted({r.np for r in rows if r.mpi == mpi}):
            ups = [r.speedup("total_s") for r in rows if r.mpi == mpi and r.np == np_]
            gm = geomean([u for u in ups if u is not None])
            if gm is not None:
                summary.append(f"{mpi} np={np_} {gm:.2f}")
    if summary:
        lines.append("Geometric mean of the end-to-end speed-ups: " + ", ".join(summary) + ".")
        lines.append("")
    if any(row.failures() for row in rows):
        lines.append("Some runs FAILED: see Failures and `raw/apps/`.")
        lines.append("")
    if plot:
        lines.append(f"![application kernels]({plot})")
        lines.append("")
    return lines


def plot_apps(out_dir, records):
    """apps.png: grouped bars of the speed-ups (end to end; in collectives), one group per
    kernel and size, one bar per MPI and np. Returns the file name, or None."""
    rows = app_rows(records)
    if not rows:
        return None
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("rcoll_report: matplotlib is not installed; no apps.png", file=sys.stderr)
        return None
    cases = list(OrderedDict.fromkeys((r.app, r.args) for r in rows))
    series = list(OrderedDict.fromkeys((r.mpi, r.np) for r in rows))
    by_key = {(r.app, r.args, r.mpi, r.np): r for r in rows}
    names = []
    for app, args in cases:
        row = next(r for r in rows if (r.app, r.args) == (app, args))
        names.append("\n".join([app] + textwrap.wrap(row.size or args or "default", 12,
                                                   break_long_words=False)))
    fig, axes = plt.subplots(1, 2, figsize=(13, 5), sharey=False)
    width = 0.8 / max(len(series), 1)
    for ax, key, title in ((axes[0], "total_s", "end to end"),
                           (axes[1], "coll_s", "inside the collectives")):
        top = bottom = 1.0
        for i, (mpi, np_) in enumerate(series):
            xs, ys = [], []
            for c, (app, args) in enumerate(cases):
                row = by_key.get((app, args, mpi, np_))
                value = row.speedup(key) if row else None
                if value is not None:
                    xs.append(c + (i - (len(series) - 1) / 2) * width)
                    ys.append(value)
                    top, bottom = max(top, value), min(bottom, value)
            bars = ax.bar(xs, ys, width, label=f"{mpi} np={np_}", color=f"C{i % 10}")
            for bar, value in zip(bars, ys):
                ax.annotate(f"{value:.2f}", (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                            ha="center", va="bottom", fontsize=7)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_xticks(range(len(cases)))
        ax.set_xticklabels(names, fontsize=8)
        if top > 4 or bottom < 0.25:  # far from 1 on either side: log scale
            ax.set_yscale("log")
            ax.set_ylim(bottom / 1.5, top * 1.5)
        else:
            ax.set_ylim(0, top * 1.15)
        ax.set_ylabel("speed-up, native / rcoll (above 1: rcoll faster)")
        ax.set_title(f"Application kernels: speed-up {title}")
        ax.grid(True, axis="y", alpha=0.3)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=max(len(series), 1), fontsize=9)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    name = "apps.png"
    fig.savefig(os.path.join(out_dir, name), dpi=110)
    plt.close(fig)
    return name


OVERLAP_KEYS = ("pure_us", "overall_us", "compute_us", "wait_us", "overlap_pct")


def mode_keys(rec):
    """The keys a record of --modes must have: rcoll-bench's, "mode", and for --overlap its own."""
    if "error" in rec:
        return ERROR_KEYS + ("mode",)
    return REQUIRED_KEYS + ("mode",) + (OVERLAP_KEYS if rec.get("mode") == "overlap" else ())


def read_modes(labelled_paths):
    """[(label, records)] of the --modes files (a missing file is skipped with a message)."""
    out = []
    for label, path in labelled_paths:
        if not os.path.exists(path):
            print(f"rcoll_report: {path} does not exist; skipped", file=sys.stderr)
            continue
        out.append((label, read_records(path, mode_keys)))
    return out


def late(rec):
    return rec.get("late_frac", 0) > 0


def mode_table(labelled, want):
    """(label, np) -> {(coll, bytes): {(impl, mode): record}} for the records want(rec) takes;
    rcoll's forced algorithms are left out (the automatic choice is compared)."""
    tables = OrderedDict()
    for label, records in labelled:
        for rec in records:
            if rec.get("forced") or not want(rec):
                continue
            rows = tables.setdefault((label, int(rec["np"])), {})
            rows.setdefault((rec["coll"], int(rec["bytes"])), {})[(rec["impl"], rec["mode"])] = rec
    return tables


def ordered_rows(rows):
    return sorted(rows, key=lambda cb: (coll_rank(cb[0]), cb[0], cb[1]))


def cell(rec, key, fmt="{:.2f}"):
    if rec is None:
        return "-"
    if failed(rec):
        return "FAILED"
    return fmt.format(rec[key]) if key in rec else "-"


def overlap_rows(rows):
    lines = ["| collective | bytes | native pure us | native overlap % | native wait us | "
             "rcoll pure us | rcoll overlap % | rcoll wait us | rcoll algo | "
             "rcoll overlap >= native |",
             "|:---|---:|---:|---:|---:|---:|---:|---:|:---|:---|"]
    for coll, nbytes in ordered_rows(rows):
        got = rows[(coll, nbytes)]
        n, r = got.get(("native", "overlap")), got.get(("rcoll", "overlap"))
        verdict = "-"
        if n and r and not failed(n) and not failed(r):
            verdict = "yes" if r["overlap_pct"] >= n["overlap_pct"] else "**no**"
        lines.append(f"| {coll} | {fmt_bytes(nbytes)} | {cell(n, 'pure_us')} | "
                     f"{cell(n, 'overlap_pct', '{:.1f}')} | {cell(n, 'wait_us')} | "
                     f"{cell(r, 'pure_us')} | {cell(r, 'overlap_pct', '{:.1f}')} | "
                     f"{cell(r, 'wait_us')} | {r['algo'] if r else '-'} | {verdict} |")
    return lines


def early_ratio(rec):
    """The early ranks' wait over the pure time without skew (None where not measured)."""
    if not rec or failed(rec) or rec.get("wait_early_us") is None or not rec.get("pure_noskew_us"):
        return None
    return rec["wait_early_us"] / rec["pure_noskew_us"]


def skewed_rows(rows):
    lines = ["| collective | bytes | native pure us (no skew) | native WaitEarly us | native "
             "WaitEarly / pure | native overlap % | rcoll pure us (no skew) | rcoll WaitEarly us | "
             "rcoll WaitEarly / pure | rcoll overlap % | rcoll at most 10% |",
             "|:---|---:|---:|---:|---:|---:|---:|---:|---:|---:|:---|"]
    for coll, nbytes in ordered_rows(rows):
        got = rows[(coll, nbytes)]
        n, r = got.get(("native", "overlap")), got.get(("rcoll", "overlap"))
        rn, rr = early_ratio(n), early_ratio(r)
        verdict = "-" if rr is None else ("yes" if rr <= 0.10 else "**no**")
        lines.append(f"| {coll} | {fmt_bytes(nbytes)} | {cell(n, 'pure_noskew_us')} | "
                     f"{cell(n, 'wait_early_us')} | {fmt_ratio(rn)} | "
                     f"{cell(n, 'overlap_pct', '{:.1f}')} | {cell(r, 'pure_noskew_us')} | "
                     f"{cell(r, 'wait_early_us')} | {fmt_ratio(rr)} | "
                     f"{cell(r, 'overlap_pct', '{:.1f}')} | {verdict} |")
    return lines


def in_run(mode):
    """The records of a --persistent or --nonblocking run: that mode's, and those of the
    implementations run beside them in another mode (IMPL@MODE, "run_mode")."""
    return lambda r: r["mode"] == mode or r.get("run_mode") == mode


def against_blocking_rows(rows, mode):
    """rcoll's and native's `mode` (persistent, nonblocking) against both blocking calls."""
    lines = [f"| collective | bytes | native {mode} max us | native blocking max us | "
             f"rcoll {mode} max us | rcoll blocking max us | rcoll {mode} / native {mode} | "
             f"rcoll {mode} / rcoll blocking |",
             "|:---|---:|---:|---:|---:|---:|---:|---:|"]
    for coll, nbytes in ordered_rows(rows):
        got = rows[(coll, nbytes)]
        nmode, nblock = got.get(("native", mode)), got.get(("native", "blocking"))
        rmode, rblock = got.get(("rcoll", mode)), got.get(("rcoll", "blocking"))
        form = ""
        if nmode and nmode.get("native_form") == "blocking":
            form = " (blocking)"
        # Where native MPI's form was not run (it has none, or its own fails the check), its
        # blocking call.
        against = fmt_ratio(ratio(rmode, nmode))
        if nmode is None and nblock is not None:
            against = f"{fmt_ratio(ratio(rmode, nblock))} (native blocking)"
        lines.append(f"| {coll} | {fmt_bytes(nbytes)} | {fmt_us(nmode)}{form} | {fmt_us(nblock)} | "
                     f"{fmt_us(rmode)} | {fmt_us(rblock)} | {against} | "
                     f"{fmt_ratio(ratio(rmode, rblock))} |")
    return lines


def progress_modes(labelled):
    return sorted({rec["progress"] for _, records in labelled for rec in records
                   if rec.get("progress")})


def modes_lines(labelled):
    """The "Nonblocking and persistent collectives" section (--modes)."""
    lines = ["## Nonblocking and persistent collectives", ""]
    progress = ", ".join(progress_modes(labelled)) or "not reported"
    lines.append("rcoll-bench `--overlap` (docs/benchmarking.md), as OSU's osu_iallgather: per "
                 "size each rank first measures its pure time (post, then wait at once), then "
                 "every iteration posts, computes (spins) for that time and waits. Overlap % = "
                 "max(0, 100 (1 - (overall - compute) / pure)), each a mean over ranks (OSU's "
                 "formula); wait = the time inside wait after the computation, the largest over "
                 "ranks of its mean. Native: PMPI_I<coll> + PMPI_Wait; rcoll: rcoll_i<coll> + "
                 f"rcoll_wait + rcoll_request_free (its progress mode here: {progress}). One "
                 "node: a copy needs a CPU, so a rank that computes moves nothing itself; what "
                 "overlaps is what a peer inside rcoll (or the MPI library's own progress) moves "
                 "for it. The means make the pure time fragile: one iteration that loses a "
                 "scheduler slice inflates it, and the computation with it.")
    lines.append("")
    plain = mode_table(labelled, lambda r: r["mode"] == "overlap" and not late(r))
    for (label, np_), rows in plain.items():
        lines.append(f"### Overlap, every rank computing: {label}, np={np_}")
        lines.append("")
        lines.extend(overlap_rows(rows))
        lines.append("")
    skewed = mode_table(labelled, lambda r: r["mode"] == "overlap" and late(r))
    for (label, np_), rows in skewed.items():
        some = next(rec for recs in rows.values() for rec in recs.values() if not failed(rec))
        how = (f"late by {some['late_pure']:g} times the pure time without skew (--late-pure), "
               if some.get("late_pure") else f"late by {some.get('late_us', '?')} us, ")
        lines.append(f"### Overlap, {some['late_frac']:g} of the ranks late: {label}, np={np_}")
        lines.append("")
        computes = ("per iteration its own pure time of that iteration under the same skew, "
                    "so that a rank that arrived early computes as long as it would have waited"
                    if some.get("compute_for") == "iteration" else
                    "its mean pure time under the skew")
        lines.append(f"In every iteration round({some['late_frac']:g} x np) ranks, chosen afresh "
                     f"(seed {some.get('seed', '?')}, the same for both), arrive {how}each "
                     f"implementation against its own pure time. Each rank computes {computes} "
                     f"(--compute-for {some.get('compute_for', '?')}). WaitEarly: the time inside "
                     "wait of the ranks that were not late, mean over those iterations, the "
                     "largest over ranks; divided by the pure time without skew (the issue's "
                     "target: at most 10%).")
        lines.append("")
        lines.extend(skewed_rows(rows))
        lines.append("")
    nonblocking = mode_table(labelled, in_run("nonblocking"))
    for (label, np_), rows in nonblocking.items():
        lines.append(f"### Nonblocking latency against the blocking calls: {label}, np={np_}")
        lines.append("")
        lines.append("rcoll-bench --nonblocking --impl native,native@blocking,rcoll,"
                     "rcoll@blocking: post, then wait at once (and, for rcoll, free the "
                     "request), against the blocking call, the four interleaved size by size in "
                     "one run; Max column in us. Target of the issue: rcoll's at most 1.10x its "
                     "blocking call up to 64 KB.")
        lines.append("")
        lines.extend(against_blocking_rows(rows, "nonblocking"))
        lines.append("")
    pers = mode_table(labelled, in_run("persistent"))
    for (label, np_), rows in pers.items():
        forms = sorted({rec.get("native_form") for recs in rows.values() for rec in recs.values()
                        if rec.get("native_form")})
        lines.append(f"### Persistent start+wait against the blocking calls: {label}, np={np_}")
        lines.append("")
        lines.append("Each run interleaves the four size by size (rcoll-bench --persistent --impl "
                     "native,native@blocking,rcoll,rcoll@blocking); Max column in us. Each "
                     "persistent request is made once per size outside the timing and started "
                     "every iteration (the data checked before timing over two starts). Native's "
                     "persistent form: " + (", ".join(forms) or "not run") + "; where it was not "
                     "run (an MPI without one, or whose own fails the check: see the notes) rcoll "
                     "is compared with native's blocking call. Targets of the issue: rcoll "
                     "persistent at most 0.8x native's and at most 1.05x rcoll's blocking call.")
        lines.append("")
        lines.extend(against_blocking_rows(rows, "persistent"))
        lines.append("")
    return lines


def mode_failure_lines(labelled):
    lines = []
    for label, records in labelled:
        for rec in records:
            if failed(rec):
                lines.append(f"- {label}: {rec['coll']} np={rec['np']} {rec['mode']}, "
                             f"{fmt_bytes(int(rec['bytes']))} bytes, {rec['impl']}: {rec['error']}")
    return lines


def write_report(out_dir, groups, labels, notes, plots, soak=None, apps=None, apps_plot=None,
                 modes=None):
    lines = ["# rcoll benchmark report", ""]
    lines.append(f"- Machine: {os.cpu_count()} CPUs (nproc), {cpu_model()}, {platform.system()} "
                 f"{platform.release()}")
    lines.append(f"- Date: {datetime.datetime.now().astimezone().strftime('%Y-%m-%d %H:%M %Z')}")
    if labels:
        lines.append("- Inputs: " + ", ".join(f"{label} = `{os.path.basename(path)}`"
                                              for label, path in labels))
    if groups:
        lines.append("- Latencies are the Max column of rcoll-bench (max over ranks of each "
                     "rank's mean per-call time, OSU style), in microseconds.")
        lines.append("- Ratios are rcoll Max / native Max measured in the same run (both "
                     "interleaved size by size); below 1 means rcoll is faster. Compare ratios, "
                     "not absolute times, across runs.")
        lines.append("- Every measured (collective, implementation, size) first passed a data "
                     "check of one call (rcoll-bench); a failed check is shown as FAILED, the "
                     "sizes after it are not measured, and it is listed under Failures.")
    for note in notes:
        lines.append(f"- Note: {note}")
    lines.append("")
    if groups:
        lines.append("## Summary")
        lines.append("")
        lines.append("rcoll's automatic choice against native MPI, one row per table below: "
                     "geometric mean of the ratios over the sizes, the sizes where rcoll is "
                     "faster, the worst ratio and the algorithms rcoll chose.")
        lines.append("")
        lines.extend(summary_lines(groups))
        lines.append("")
    failures = failure_lines(groups)
    if soak:
        failures += [f"- Soak test, {impl}: {soak_verdict(rec)}" for impl, rec in soak.items()
                     if soak_failed(rec)]
    if apps:
        failures += app_failure_lines(app_rows(apps))
    if modes:
        failures += mode_failure_lines(modes)
    if failures:
        lines.append("## Failures")
        lines.append("")
        lines.extend(failures)
        lines.append("")
    if apps:
        lines.extend(apps_lines(apps, apps_plot))
    if modes:
        lines.extend(modes_lines(modes))
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
    ap.add_argument("--label", action="append", type=parse_label, default=[],
                    metavar="LABEL=FILE",
                    help="a JSON-lines file from rcoll-bench --json and the MPI it was run with; "
                         "repeatable, and a label may be given several files (required unless "
                         "--apps or --soak is given)")
    ap.add_argument("--note", action="append", default=[],
                    help="a line added to the report header (repeatable)")
    ap.add_argument("--no-plots", action="store_true", help="write only report.md")
    ap.add_argument("--colls", metavar="FILE",
                    help="rcoll's table of collectives (rcoll-info --colls); default: colls.jsonl "
                         "beside the first --label file, if there is one")
    ap.add_argument("--soak", metavar="FILE",
                    help="JSON lines of rcoll-soak runs (one per impl, from run_benchmarks.sh): "
                         "adds the Soak test section")
    ap.add_argument("--apps", metavar="FILE",
                    help="JSON lines of the application kernels' runs (scripts/run_apps.sh): "
                         "adds the Application kernels section and apps.png")
    ap.add_argument("--modes", action="append", type=parse_label, default=[],
                    metavar="LABEL=FILE",
                    help="JSON lines of rcoll-bench --overlap / --persistent runs and the MPI they "
                         "ran with (repeatable): adds the Nonblocking and persistent section")
    args = ap.parse_args(argv)
    if not args.label and not args.apps and not args.soak and not args.modes:
        ap.error("give --label LABEL=FILE (or --apps FILE, --soak FILE or --modes LABEL=FILE)")

    colls = args.colls
    if colls is None and args.label:
        beside = os.path.join(os.path.dirname(args.label[0][1]), "colls.jsonl")
        colls = beside if os.path.exists(beside) else None
    if colls:
        read_colls(colls)
    elif args.label:
        print("rcoll_report: no table of collectives (rcoll-info --colls, --colls FILE): "
              "collectives in name order, without what they move", file=sys.stderr)
    labelled = []
    for label, path in args.label:
        if not os.path.exists(path):
            print(f"rcoll_report: {path} does not exist; skipped", file=sys.stderr)
            continue
        labelled.append((label, read_records(path)))
    groups = group(labelled)
    apps = read_apps(args.apps)
    soak = read_soak(args.soak)
    modes = read_modes(args.modes)
    if not groups and not apps and not soak and not modes:
        raise SystemExit("rcoll_report: no records in the input files")
    os.makedirs(args.out, exist_ok=True)
    plots = [] if args.no_plots else plot_all(args.out, groups)
    apps_plot = None if args.no_plots or not apps else plot_apps(args.out, apps)
    path = write_report(args.out, groups, args.label, args.note, plots, soak, apps, apps_plot,
                        modes)
    nplots = len(plots) + (1 if apps_plot else 0)
    print(f"rcoll_report: wrote {path}" + (f" and {nplots} plots" if nplots else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
