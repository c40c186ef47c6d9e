#!/bin/sh
# Differential csmith run (larger sample than tests/split/test_csmith.py, same check): each seed's
# program is built through mtpc-link with forced splitting (threshold 0, PARTITIONS
# partitions) and with plain ThinLTO; both must print the same checksums and export the same
# symbols; a relink with the plan cache hit must give the same plans and program. Seeds whose
# program loops or crashes at -O0 are skipped. The build variant (optimization level,
# -no-pie/-static, -g) cycles from run to run (tests/split/test_csmith.py VARIANTS).
#
# Usage: scripts/csmith-diff.sh [COUNT [FIRST_SEED [MAX_FUNCS [PARTITIONS [MODULES]]]]]
#   COUNT (50) runs starting at FIRST_SEED (1000); csmith --max-funcs MAX_FUNCS (20);
#   PARTITIONS (4); MODULES (1) csmith programs per link (seeds s, s+1, ..., each its own
#   split module with main renamed, plus a driver calling them; run i uses seed
#   FIRST_SEED + i * MODULES).
# Environment: MTPC_BUILD_DIR (default build/), CSMITH_KEEP=dir keeps the work folder of
#   failing seeds there (default /tmp/mtpc-csmith-fail).
# Prints one line per seed and "N passed, N failed, N skipped"; exit 1 if any seed failed.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
count=${1:-50}
first=${2:-1000}
funcs=${3:-20}
parts=${4:-4}
modules=${5:-1}
keep=${CSMITH_KEEP:-/tmp/mtpc-csmith-fail}
export MTPC_BUILD_DIR="${MTPC_BUILD_DIR:-$top/build}"
cd "$top/tests"
exec /usr/bin/python3 - "$count" "$first" "$funcs" "$parts" "$modules" "$keep" <<'PY'
import pathlib, shutil, sys, tempfile, time
import test_csmith as tc
count, first, funcs, parts, modules = map(int, sys.argv[1:6])
keep = pathlib.Path(sys.argv[6])
passed, failed, skipped = [], [], []
t0 = time.time()
for run_index, seed in enumerate(range(first, first + count * modules, modules)):
    with tempfile.TemporaryDirectory(prefix=f"csmith{seed}-") as d:
        try:
            facts = tc.check_seed(seed, d, csmith_opts=["--max-funcs", str(funcs)],
                                  partitions=parts,
                                  extra_seeds=range(seed + 1, seed + modules),
                                  variant=tc.VARIANTS[(first + run_index) % len(tc.VARIANTS)])
            passed.append(seed)
            print(f"seed {seed}: ok ({facts['variant']}, {facts['partitions']} partitions, "
                  f"{facts['checksum']})",
                  flush=True)
        except tc.Skip as e:
            skipped.append(seed)
            print(f"seed {seed}: skipped ({e})", flush=True)
        except (tc.Fail, Exception) as e:
            failed.append(seed)
            dest = keep / f"seed{seed}"
            shutil.rmtree(dest, ignore_errors=True)
            shutil.copytree(d, dest, symlinks=True)
            msg = str(e).strip().splitlines()
            print(f"seed {seed}: FAIL ({msg[0] if msg else type(e).__name__}); kept in {dest}",
                  flush=True)
            for line in msg[1:8]:
                print(f"    {line}", flush=True)
print(f"{len(passed)} passed, {len(failed)} failed, {len(skipped)} skipped "
      f"({time.time() - t0:.0f} s)")
if failed:
    print("failing seeds:", " ".join(map(str, failed)))
sys.exit(1 if failed else 0)
PY
