#!/usr/bin/env python3
"""The best kernel of each value of one knob, per task, from one tuning
run's records: whether a choice (the wgmma templates' copy: 0 cp.async,
1 TMA, 2 TMA from a producer warpgroup) wins where the tuner tried it.
Usage: records_best.py RECORDS.jsonl [KNOB] (default: copy)"""
import sys

import records_lib


def main():
    path = sys.argv[1]
    knob = sys.argv[2] if len(sys.argv) > 2 else "copy"
    tasks = {}
    for rec, cost, key in records_lib.successful(path):
        values = [e[2] for e in rec["config"]["entity"] if e[0] == knob]
        if not values:
            continue
        best = tasks.setdefault(key, {})
        value = str(values[0])
        if value not in best or cost < best[value][0]:
            best[value] = (cost, rec["config"]["entity"])
    for key, best in tasks.items():
        print("task %s" % key)
        for value in sorted(best):
            cost, entity = best[value]
            knobs = " ".join("%s=%s" % (e[0], e[2]) for e in entity if e[0] != knob)
            print("  %s=%s: best %.2f us (%s)" % (knob, value, cost * 1e6, knobs))


if __name__ == "__main__":
    main()
