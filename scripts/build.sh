#!/bin/sh
# Configure and build MTPC with CMake + Ninja into the given directory.
# Usage: scripts/build.sh [BUILD_DIR]   (MTPC_SANITIZE=ON for ASan+UBSan; warnings are
#   errors unless MTPC_WERROR=OFF;
#   MTPC_LLVM_VERSION=19 or 22: the LLVM to build against and its clang as compiler, default 19)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-build}
ver=${MTPC_LLVM_VERSION:-19}
case "$dir" in /*) ;; *) dir="$top/$dir" ;; esac
cmake -S "$top" -B "$dir" -G Ninja \
  -DCMAKE_C_COMPILER="clang-$ver" -DCMAKE_CXX_COMPILER="clang++-$ver" \
  -DMTPC_LLVM_VERSION="$ver" \
  -DMTPC_SANITIZE="${MTPC_SANITIZE:-OFF}" -DMTPC_WERROR="${MTPC_WERROR:-ON}" >/dev/null
cmake --build "$dir"
