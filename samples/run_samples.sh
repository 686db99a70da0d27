#!/bin/sh
# Run each sample given on the command line; stop at the first failure.
set -e
for sample in "$@"; do
    echo "### $(basename "$sample")"
    "$sample"
    echo
done
