#!/usr/bin/env python3
"""Per shape, the best recorded cost of a network tuning run against a
one-by-one run (two records files): the ratio network/one-by-one, the
geometric mean, and how many shapes lie within 10%.
Usage: network_compare.py NETWORK.jsonl ROWS.jsonl"""
import math
import sys

import records_lib


def best_costs(path):
    best = {}
    for rec, cost, key in records_lib.successful(path):
        if key not in best or cost < best[key][0]:
            best[key] = (cost, rec["input"][1])
    return best


def main():
    net = best_costs(sys.argv[1])
    rows = best_costs(sys.argv[2])
    ratios = []
    print("%-60s %-18s %12s %12s %8s" % ("args", "template", "network ms", "per-row ms", "ratio"))
    for key in sorted(rows, key=lambda k: -rows[k][0]):
        if key not in net:
            print("%-60s missing from the network run" % key)
            continue
        ratio = net[key][0] / rows[key][0]
        ratios.append(ratio)
        print("%-60s %-18s %12.4f %12.4f %8.3f" % (key[:60], net[key][1], net[key][0] * 1e3, rows[key][0] * 1e3, ratio))
    if ratios:
        geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        within = sum(1 for r in ratios if r <= 1.10)
        print("shapes %d; network/per-row time: geometric mean %.3f, worst %.3f; within 10%%: %d of %d"
              % (len(ratios), geo, max(ratios), within, len(ratios)))


main()
