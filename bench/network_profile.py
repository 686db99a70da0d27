#!/usr/bin/env python3
"""Where a network tuning's time went (issue 16): per task of a records
file written by `tecomp-tune --network`, the trials, the refused (invalid)
ones, the build + run seconds of a candidate (the records' all_cost: mean,
90th percentile, max) and the builder-seconds; with the run's log
(`--verbose` or not), each task's wall time and so its candidates' average
occupancy of the builders (builder-seconds / its wall seconds; since
tc_tune_tasks the tasks overlap: a task's wall time runs from its start to
its last result), and the whole call's (all builder-seconds / the tuning's
wall time, from tecomp-tune's "distinct shapes" line).

    python3 bench/network_profile.py network.jsonl [network.log]
"""
import json
import re
import sys
from collections import OrderedDict


def tasks_of(records_path):
    tasks = OrderedDict()
    with open(records_path) as f:
        for line in f:
            r = json.loads(line)
            key = (r["input"][1], tuple(r["input"][2]))
            tasks.setdefault(key, []).append(r)
    return tasks


def walls_of(log_path):
    """Each task's seconds by (template, n, c, h, w, k, r) (a list: strides
    are not in the line, so two tasks may share a key; they are taken in
    the log's order), and the whole tuning's."""
    pattern = re.compile(r"^\[\d+/\d+\] (\S+) (\d+)x(\d+)x(\d+)x(\d+) k(\d+) (\d+)x\d+, .*, ([0-9.]+) s$")
    total = re.compile(r"distinct shapes .*, ([0-9.]+) s$")
    walls = {}
    seconds = None
    with open(log_path) as f:
        for line in f:
            m = pattern.match(line.strip())
            if m:
                key = (m.group(1),) + tuple(int(m.group(k)) for k in range(2, 8))
                walls.setdefault(key, []).append(float(m.group(8)))
            m = total.search(line.strip())
            if m:
                seconds = float(m.group(1))
    return walls, seconds


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    tasks = tasks_of(sys.argv[1])
    walls, seconds = walls_of(sys.argv[2]) if len(sys.argv) > 2 else ({}, None)
    total_busy = 0.0
    print("%-18s %-22s %6s %7s %7s %7s %7s %9s %7s %9s" % ("template", "shape (n c h k r)", "trials", "refused", "mean s",
                                                        "p90 s", "max s", "builder s", "wall s", "occupancy"))
    for (template, args), recs in tasks.items():
        costs = sorted(r["result"][2] for r in recs)
        refused = sum(1 for r in recs if r.get("tecomp_error") == "gpu_limit")
        busy = sum(costs)
        total_busy += busy
        key = (template,) + tuple(args[:6])
        wall = walls[key].pop(0) if walls.get(key) else None
        shape = "%d %d %d %d %d" % (args[0], args[1], args[2], args[4], args[5])
        print("%-18s %-22s %6d %7d %7.3f %7.3f %7.2f %9.1f %7s %9s" % (
            template, shape, len(recs), refused, busy / len(recs), costs[int(0.9 * len(costs))], costs[-1], busy,
            "%.1f" % wall if wall is not None else "-", "%.1f" % (busy / wall) if wall else "-"))
    line = "all: %d trials, %.0f builder-seconds" % (sum(len(v) for v in tasks.values()), total_busy)
    if seconds:
        line += " in %.1f s of tuning: %.1f builders busy on average" % (seconds, total_busy / seconds)
    print(line)


if __name__ == "__main__":
    main()
