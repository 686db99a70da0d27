#!/usr/bin/env python3
"""Keeps README.md true (a meson test):

- every ```c block is a run of whole lines of one of the files given (the
  samples/readme_*.c that CI compiles as C and as C++), indentation aside;
- the block after "which prints" is what readme_vecadd prints;
- every command in the README that runs a built tool names one meson builds,
  and every repository file it names exists.

usage: check_readme.py README.md VECADD_PROGRAM BUILD_DIR FILE.c...
"""
import os
import re
import subprocess
import sys


def blocks(text, lang):
    return re.findall(r"^```" + lang + r"\n(.*?)^```\n", text, flags=re.M | re.S)


def lines_of(text):
    """The lines, each without its indentation and trailing space; blank lines kept."""
    return [line.strip() for line in text.rstrip("\n").split("\n")]


def quoted_in(block, files):
    want = lines_of(block)
    for path, have in files.items():
        for start in range(len(have) - len(want) + 1):
            if have[start:start + len(want)] == want:
                return path
    return None


def main():
    readme_path, vecadd, build_dir, sources = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    root = os.path.dirname(os.path.abspath(readme_path))
    readme = open(readme_path, encoding="utf-8").read()
    files = {path: lines_of(open(path, encoding="utf-8").read()) for path in sources}
    failures = 0

    for block in blocks(readme, "c"):
        where = quoted_in(block, files)
        if where:
            print("ok: a C snippet quoted from %s" % os.path.basename(where))
        else:
            failures += 1
            print("README.md: this C snippet is not a run of lines of %s:\n%s" % (", ".join(map(os.path.basename, sources)), block))

    printed = re.search(r"which prints\n\n```\n(.*?)^```\n", readme, flags=re.M | re.S)
    real = subprocess.run([vecadd], stdout=subprocess.PIPE, check=True, universal_newlines=True).stdout
    if not printed:
        failures += 1
        print("README.md: no block after 'which prints'")
    elif printed.group(1).rstrip("\n") != real.rstrip("\n"):
        failures += 1
        print("README.md: the block after 'which prints' is not what readme_vecadd prints, which is:\n" + real)
    else:
        print("ok: the printed output is readme_vecadd's")

    # commands: build/<dir>/<tool> must be something meson builds, files named must exist
    for tool in sorted(set(re.findall(r"\bbuild/((?:tools|bench|samples)/[\w.-]+)", readme))):
        if not os.path.exists(os.path.join(build_dir, tool)):
            failures += 1
            print("README.md: build/%s is not built by the main job" % tool)
    for path in sorted(set(re.findall(r"(?:--suite|--csv-in) ([\w./-]+)", readme))):
        if not os.path.exists(os.path.join(root, path)):
            failures += 1
            print("README.md: %s does not exist in a clone" % path)
    if "../shared" in readme:
        failures += 1
        print("README.md: names ../shared, which a clone does not have")
    print("%d problem%s" % (failures, "" if failures == 1 else "s"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
