#!/usr/bin/env python3
"""Whether record lines are lines AutoTVM's reader accepts, checked the way
autotvm.record.decode reads a version 0.2 line (TVM not needed):

    row = json.loads(line)
    tgt, task_name, task_args, task_kwargs = row["input"]
    tgt = Target(str(tgt))            # the kind, then -key=value options
    ConfigEntity.from_json_dict(row["config"])   # index, code_hash, entity
    MeasureResult(*row["result"])     # costs, error_no, all_cost, timestamp
    np.mean(costs)                    # the config's cost

usage: check_autotvm_lines.py FILE...  (exit 0: every line accepted;
1: a line is not, each such line named with why)."""
import json
import math
import sys

# TVM's target kinds a record may name (tecomp writes cuda).
KINDS = {"cuda", "nvptx", "llvm", "c", "rocm", "opencl", "vulkan", "metal", "hexagon", "webgpu"}


def check_target(text):
    """TVM's Target(str): the kind, then options that each start with a dash,
    key=value with no space inside (Target splits its text at spaces)."""
    words = text.split(" ")
    if words[0] not in KINDS:
        return "target kind %r is not one of TVM's" % words[0]
    for word in words[1:]:
        if not word.startswith("-") or word == "-":
            return "target option %r does not start with a dash (a value with a space?)" % word
        key = word.lstrip("-").split("=", 1)[0]
        if not key or not all(c.isalnum() or c == "_" for c in key):
            return "target option %r has no key" % word
    return None


def check_entity(entity):
    """ConfigEntity.from_json_dict: each item [key, knob_type, knob_args]."""
    if not isinstance(entity, list):
        return "config.entity is not a list"
    for item in entity:
        if not isinstance(item, list) or len(item) != 3:
            return "entity item %r is not [name, kind, value]" % (item,)
        name, kind, value = item
        if not isinstance(name, str):
            return "entity name %r is not a string" % (name,)
        if kind == "sp":
            if not isinstance(value, list) or not all(isinstance(v, int) for v in value):
                return "split %s's sizes %r are not integers" % (name, value)
        elif kind == "re":
            if not isinstance(value, list) or sorted(value) != list(range(len(value))):
                return "reorder %s's %r is not a permutation" % (name, value)
        elif kind == "an":
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                return "annotate %s's %r are not names" % (name, value)
        elif kind != "ot":
            return "knob %s's kind %r is not sp, re, an or ot (Invalid config knob type)" % (name, kind)
    return None


def check_line(line):
    try:
        row = json.loads(line)
    except ValueError as e:
        return "not JSON: %s" % e
    if "v" in row and row["v"] == 0.1:
        return None  # the reader skips version 0.1 lines with a warning
    try:
        tgt, task_name, task_args, task_kwargs = row["input"]
    except (KeyError, TypeError, ValueError):
        return "input is not [target, task, args, kwargs]"
    if not isinstance(tgt, str):
        return "the target is not a string"
    why = check_target(tgt)
    if why:
        return why
    if not isinstance(task_name, str) or not isinstance(task_args, list) or not isinstance(task_kwargs, dict):
        return "task name, args or kwargs of the wrong type"
    config = row.get("config")
    if not isinstance(config, dict) or "index" not in config or "code_hash" not in config or "entity" not in config:
        return "config lacks index, code_hash or entity"
    if not isinstance(config["index"], int) or config["index"] < 0:
        return "config.index %r is not a non-negative integer" % (config["index"],)
    why = check_entity(config["entity"])
    if why:
        return why
    result = row.get("result")
    if not isinstance(result, list) or len(result) != 4:
        return "result is not [costs, error_no, all_cost, timestamp] (MeasureResult takes four)"
    costs, error_no, all_cost, timestamp = result
    if not isinstance(costs, list) or not costs or not all(isinstance(c, (int, float)) and math.isfinite(c) for c in costs):
        return "costs %r: their mean is no number" % (costs,)
    if not isinstance(error_no, int) or not 0 <= error_no <= 8:
        return "error_no %r is not one of TVM's MeasureErrorNo (0 to 8)" % (error_no,)
    if error_no != 0 and costs != [1e9]:
        return "a failed trial's costs are %r, not AutoTVM's [1e9]" % (costs,)
    if not all(isinstance(v, (int, float)) for v in (all_cost, timestamp)):
        return "all_cost or timestamp is not a number"
    return None


def main(paths):
    bad = lines = 0
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                if not line.strip() or line.startswith("#"):
                    continue
                lines += 1
                why = check_line(line)
                if why:
                    bad += 1
                    print("%s:%d: AutoTVM's reader would refuse it: %s" % (path, number, why))
    print("%d lines, %d refused" % (lines, bad))
    return 1 if bad or not lines else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
