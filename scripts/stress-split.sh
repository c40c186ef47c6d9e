#!/bin/sh
# Long random test of mtpc-split: modules built from llvm-stress-19 output (see
# tests/splitlib.py stress_module), split for several N, every partition verified, compiled,
# merged with ld.lld -r, localized, and its global symbols compared with the unsplit object.
#
# Usage: scripts/stress-split.sh [COUNT [FIRST_SEED [FUNCS [SIZE]]]]
#   COUNT (200) seeds starting at FIRST_SEED (100); FUNCS (8) functions of SIZE (400) each.
# Environment: MTPC_BUILD_DIR (default build/), MTPC_SPLIT_CMD (see tests/splitlib.py),
#   STRESS_KEEP=dir keeps the modules of failing seeds there (default /tmp/mtpc-stress-fail).
# Exit status: 0 if every seed passed; 1 otherwise (failing seeds are listed).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
count=${1:-200}
first=${2:-100}
funcs=${3:-8}
size=${4:-400}
keep=${STRESS_KEEP:-/tmp/mtpc-stress-fail}
export MTPC_BUILD_DIR="${MTPC_BUILD_DIR:-$top/build}"
cd "$top/tests"
exec /usr/bin/python3 - "$count" "$first" "$funcs" "$size" "$keep" <<'PY'
import pathlib, shutil, sys, tempfile
import splitlib as sl
count, first, funcs, size = map(int, sys.argv[1:5])
keep = pathlib.Path(sys.argv[5])
failed = []
for seed in range(first, first + count):
    with tempfile.TemporaryDirectory(prefix=f"stress{seed}-") as d:
        try:
            sl.stress_check(seed, d, ns=(2, 4, 8), funcs=funcs, size=size)
            print(f"seed {seed}: ok", flush=True)
        except BaseException as e:  # pytest.fail/skip raise BaseException subclasses
            if isinstance(e, KeyboardInterrupt):
                raise
            failed.append(seed)
            dest = keep / f"seed{seed}"
            shutil.rmtree(dest, ignore_errors=True)
            shutil.copytree(d, dest)
            msg = str(e).strip().splitlines()
            print(f"seed {seed}: FAIL ({msg[0] if msg else type(e).__name__}); kept in {dest}",
                  flush=True)
print(f"{count - len(failed)} passed, {len(failed)} failed")
if failed:
    print("failing seeds:", " ".join(map(str, failed)))
sys.exit(1 if failed else 0)
PY
