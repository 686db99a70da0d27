#!/usr/bin/env python3
"""Where a network tuning's time went (issue 16): per task of a records
file written by `tecomp-tune --network`, the trials, the refused (invalid)
ones, the build + run seconds of a candidate (the records' all_cost: mean,
90th percentile, max) and the builder-seconds; with the run's log
(`--verbose` or not), each task's wall time and so its builders' average
occupancy (builder-seconds / wall seconds).

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
    pattern = re.compile(r"^\[\d+/\d+\] (\S+) .*, ([0-9.]+) s$")
    walls = []
    with open(log_path) as f:
        for line in f:
            m = pattern.match(line.strip())
            if m:
                walls.append(float(m.group(2)))
    return walls


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    tasks = tasks_of(sys.argv[1])
    walls = walls_of(sys.argv[2]) if len(sys.argv) > 2 else []
    total_busy = 0.0
    print("%-18s %-22s %6s %7s %7s %7s %7s %9s %7s %9s" % ("template", "shape (n c h k r)", "trials", "refused", "mean s",
                                                        "p90 s", "max s", "builder s", "wall s", "occupancy"))
    for i, ((template, args), recs) in enumerate(tasks.items()):
        costs = sorted(r["result"][2] for r in recs)
        refused = sum(1 for r in recs if r.get("tecomp_error") == "gpu_limit")
        busy = sum(costs)
        total_busy += busy
        wall = walls[i] if i < len(walls) else None
        shape = "%d %d %d %d %d" % (args[0], args[1], args[2], args[4], args[5])
        print("%-18s %-22s %6d %7d %7.3f %7.3f %7.2f %9.1f %7s %9s" % (
            template, shape, len(recs), refused, busy / len(recs), costs[int(0.9 * len(costs))], costs[-1], busy,
            "%.1f" % wall if wall is not None else "-", "%.1f" % (busy / wall) if wall else "-"))
    line = "all: %d trials, %.0f builder-seconds" % (sum(len(v) for v in tasks.values()), total_busy)
    if walls:
        line += " in %.1f s of tasks: %.1f builders busy on average" % (sum(walls), total_busy / sum(walls))
    print(line)


if __name__ == "__main__":
    main()
