#!/usr/bin/env python3
"""Issue 20's table from bench/multi_gpu_run.sh's logs (one.*, two.*, mpi.*
in DIR): per run the trials, the tuning seconds and the trials per second
(all of a run's trials over its tuning wall time: under MPI the ranks tune
at once, so the slower rank's sum), the speedup over one GPU, the share of
the machine's CPU time the run kept busy (builds are CPU work), and per row
the best kernel's time measured after tuning (L2 flushed, median of 100),
with the geometric mean of each run's times over one GPU's.
Usage: multi_gpu_summary.py DIR"""
import math
import os
import re
import sys

import records_lib

TUNED = re.compile(r"\[rank (\d+)\] (\S+) \((\S+)\): (\d+) trials .* in ([0-9.]+) s: ([0-9.]+) trials/s")
BEST = re.compile(r"\[rank (\d+)\] (\S+): the best kernel")
TIMED = re.compile(r"tecomp \(tuned[^)]*\)\s+([0-9.]+)")
TAG = re.compile(r"^\[\d+,(\d+)\]<std(?:out|err)>:(.*)$")


def read_run(directory, name):
    """(rows {row: (template, trials, seconds, rank)}, times {row: ms},
    wall seconds, share of the machine's CPU kept busy, exit line) or None
    when the run has no log."""
    path = os.path.join(directory, name + ".log")
    if not os.path.exists(path):
        return None
    rows, times, checking = {}, {}, {}
    exit_line = ""
    for raw in open(path, errors="replace"):
        line = raw.rstrip("\n")
        rank = "0"
        tagged = TAG.match(line)
        if tagged:  # mpirun --tag-output: each line carries its rank
            rank, line = tagged.group(1), tagged.group(2)
        if line.startswith("exit "):
            exit_line = line
        m = TUNED.search(line)
        if m:
            rows[m.group(2)] = (m.group(3), int(m.group(4)), float(m.group(5)), int(m.group(1)))
            continue
        m = BEST.search(line)
        if m:
            checking[rank] = m.group(2)
            continue
        m = TIMED.search(line)
        if m and rank in checking:
            times[checking.pop(rank)] = float(m.group(1))
    return rows, times, number(directory, name + ".seconds"), number(directory, name + ".cpu"), exit_line


def number(directory, name):
    path = os.path.join(directory, name)
    return float(open(path).read()) if os.path.exists(path) else float("nan")


def best_by_shape(path):
    best = {}
    if not os.path.exists(path):
        return best
    for _rec, cost, key in records_lib.successful(path):
        best[key] = min(cost, best.get(key, cost))
    return best


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def main():
    directory = sys.argv[1]
    runs = {}
    for name, label in (("one", "one GPU (--devices 0)"), ("two", "two GPUs, one process (--devices 0,1)"),
                        ("mpi", "two GPUs, mpirun -n 2 (a rank a GPU)")):
        run = read_run(directory, name)
        if run:
            runs[name] = (label,) + run
    print("| run | trials | tuning s | trials/s | vs one GPU | whole command s | CPU busy | exit |")
    print("|---|---|---|---|---|---|---|---|")
    rate_one = None
    for name, (label, rows, _times, wall, cpu, exit_line) in runs.items():
        trials = sum(r[1] for r in rows.values())
        per_rank = {}
        for _template, _n, seconds, rank in rows.values():
            per_rank[rank] = per_rank.get(rank, 0.0) + seconds
        tuning = max(per_rank.values()) if per_rank else float("nan")
        rate = trials / tuning if per_rank else float("nan")
        if name == "one":
            rate_one = rate
        speedup = f"{rate / rate_one:.2f}x" if rate_one else "-"
        print(f"| {label} | {trials} | {tuning:.1f} | {rate:.1f} | {speedup} | {wall:.1f} | {cpu:.0%} | {exit_line} |")
    if "one" not in runs:
        return
    names = sorted(runs["one"][1], key=lambda r: int(r[1:]) if r[1:].isdigit() else 0)
    print("\nThe best kernel of each row, timed after tuning (ms, L2 flushed, median of 100):\n")
    print("| row | template | " + " | ".join(runs[n][0] for n in runs) + " |")
    print("|---|---|" + "---|" * len(runs))
    for row in names:
        cells = [f"{runs[n][2][row]:.4f}" if row in runs[n][2] else "-" for n in runs]
        print(f"| {row} | {runs['one'][1][row][0]} | " + " | ".join(cells) + " |")
    for n in runs:
        if n == "one":
            continue
        ratios = [runs[n][2][r] / runs["one"][2][r] for r in names if r in runs[n][2] and r in runs["one"][2]]
        shapes_one = best_by_shape(os.path.join(directory, "one.jsonl"))
        shapes_n = best_by_shape(os.path.join(directory, n + ".jsonl"))
        recorded = [shapes_n[k] / shapes_one[k] for k in shapes_one if k in shapes_n]
        print(f"\n{runs[n][0]} over one GPU: timed after {geomean(ratios):.3f} (geometric mean of {len(ratios)} rows), "
              f"best recorded while tuning {geomean(recorded):.3f} ({len(recorded)} shapes)")


if __name__ == "__main__":
    main()
