#!/bin/sh
# The demo: installs MTPC's dependencies, builds MTPC, generates the embedded
# synthetic project (one huge module, no network needed) and builds it with
# plain ThinLTO and with MTPC at 2 and 4 partitions, then prints the comparison
# (link wall time, total CPU, critical path, .text size, identical output).
# Usage: scripts/demo.sh [extra arguments for bench/run.py compare]
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
scripts/install-deps.sh
scripts/build.sh build
# Only the one large module is split (the small ones stay plain backends), as
# MTPC_SPLIT_THRESHOLD would do in a real build.
exec /usr/bin/python3 bench/run.py compare synth --partitions 2,4 --lines 40000 --threshold 100000 \
  --repeat 1 "$@"
