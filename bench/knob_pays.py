#!/usr/bin/env python3
"""Whether a template's reorder/annotate knobs pay, from one tuning run's
records: per task, the best time over every configuration against the best
over those that leave the knobs at their first choice (the schedule the
template had before the knobs: identity order, no annotation), and the knob
values of the overall best.
Usage: knob_pays.py RECORDS.jsonl [REORDER_KNOB [ANNOTATE_KNOB]]
(defaults: reorder_inner, ann_reduce)"""
import sys

import records_lib


def is_default(entity, reorder, annotate):
    for name, kind, value in entity:
        if name == reorder and value != sorted(value):
            return False
        if name == annotate and any(v != "none" for v in value):
            return False
    return True


def main():
    path = sys.argv[1]
    reorder = sys.argv[2] if len(sys.argv) > 2 else "reorder_inner"
    annotate = sys.argv[3] if len(sys.argv) > 3 else "ann_reduce"
    tasks = {}
    for rec, cost, key in records_lib.successful(path):
        entity = rec["config"]["entity"]
        if not any(e[0] in (reorder, annotate) for e in entity):
            continue
        t = tasks.setdefault(key, {"best": None, "default": None, "n": 0, "n_default": 0})
        t["n"] += 1
        if t["best"] is None or cost < t["best"][0]:
            t["best"] = (cost, [e for e in entity if e[0] in (reorder, annotate)])
        if is_default(entity, reorder, annotate):
            t["n_default"] += 1
            if t["default"] is None or cost < t["default"]:
                t["default"] = cost
    for key, t in tasks.items():
        default = "%.4f ms (%d trials)" % (t["default"] * 1e3, t["n_default"]) if t["default"] else "none measured"
        gain = t["default"] / t["best"][0] if t["default"] else float("nan")
        print("%s: best %.4f ms (%d trials), knobs at their first choice: %s, gain %.3fx; best's knobs %s"
              % (key, t["best"][0] * 1e3, t["n"], default, gain, t["best"][1]))


main()
