#!/bin/sh
# Installs everything MTPC needs to build, test and benchmark on Debian 12.
# This is the single list of system packages: README, .ci/run and bench/ all call it.
# LLVM 19 and LLVM 22: MTPC builds against either (scripts/build.sh, MTPC_LLVM_VERSION).
set -eu

PACKAGES="
  clang-19 lld-19 llvm-19 llvm-19-dev llvm-19-tools libclang-rt-19-dev libstdc++-12-dev
  clang-22 lld-22 llvm-22 llvm-22-dev llvm-22-tools libclang-rt-22-dev
  clang-14
  cmake ninja-build pkg-config
  libsqlite3-dev libjansson-dev zlib1g-dev libzstd-dev
  python3 python3-pytest python3-pytest-xdist
  csmith libcsmith-dev
  gdb valgrind binutils g++ make ccache
  gnuplot-nox graphviz
  tcl dpkg-dev nasm
  slurmctld slurmd slurm-client munge iproute2
"

missing=""
for p in $PACKAGES; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done

if [ -n "$missing" ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "install-deps: installing:$missing"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
echo "install-deps: all packages present"
