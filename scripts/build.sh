#!/bin/sh
# Configure and build MTPC with CMake + Ninja into the given directory.
# Usage: scripts/build.sh [BUILD_DIR]   (MTPC_SANITIZE=ON for ASan+UBSan)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-build}
case "$dir" in /*) ;; *) dir="$top/$dir" ;; esac
cmake -S "$top" -B "$dir" -G Ninja \
  -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
  -DMTPC_SANITIZE="${MTPC_SANITIZE:-OFF}" >/dev/null
cmake --build "$dir"
