#!/usr/bin/env python3
"""Partition shares (ninja-gen/graph/sched.h) against equal partitions, on the SQLite shell link.

Three builds of bench/sqlite (sqlite3.c + shell.c): plain ThinLTO, MTPC with 2 partitions
(mtpc-link's shares: on 2 cores sqlite3.c's second slot starts behind shell.c's backend and
gets less work), and MTPC with 2 equal partitions (MTPC_SPLIT_ARGS=--weights;1,1, which
overrides the shares). Each repeat relinks all three from the same objects, interleaved,
removing the output, the inner build and the plan cache first. Prints per build the link
wall time, its ratio to plain ThinLTO (medians of the per-repeat ratios) and, from the inner
.ninja_log, how long sqlite3.c's backend took (split start to merge end) and when its slots
started and ended.

Run bench/get-sqlite.sh first. Uses MTPC from this checkout (build/).
"""
import argparse
import pathlib
import shutil
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import lib  # noqa: E402

CONFIGS = {"thin": [], "shares": ["-DSQLITE_USE_MTPC=ON"],
           "equal": ["-DSQLITE_USE_MTPC=ON", "-DMTPC_SPLIT_ARGS=--weights;1,1"]}


def backend_span(inner):
    """sqlite3.c's split start to merge end, and its slots' (start, end), in seconds."""
    log = inner / ".ninja_log"
    if not log.exists():
        return None, []
    rows = [ln.split("\t") for ln in log.read_text().splitlines()[1:] if ln.count("\t") >= 4]
    mine = [r for r in rows if "/sqlite3.c.o-" in r[3]]
    split = [int(r[0]) for r in mine if r[3].endswith("split.dd")]
    merge = [int(r[1]) for r in mine if r[3].endswith("native.o")]
    slots = sorted((r[3].rsplit("/", 1)[1], int(r[0]) / 1000, int(r[1]) / 1000) for r in mine
                   if r[3].rsplit("/", 1)[1].startswith("p") and r[3].endswith(".o"))
    span = (merge[0] - split[0]) / 1000 if split and merge else None
    return span, slots


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-r", "--repeat", type=int, default=5, help="repeats (default 5)")
    ap.add_argument("--work", default=str(lib.ROOT / "bench" / "out" / "shares_ab"),
                    help="build trees (default bench/out/shares_ab)")
    args = ap.parse_args(argv)
    amal = lib.ROOT / "bench" / "work" / "sqlite-amalgamation"
    if not (amal / "sqlite3.c").exists():
        ap.error(f"{amal}/sqlite3.c missing: run bench/get-sqlite.sh")
    work = pathlib.Path(args.work).resolve()
    clang = lib.llvm_tool("clang")
    for name, extra in CONFIGS.items():
        bld = work / name
        print(f"{name}: configure + build", flush=True)
        lib.run_measured(["cmake", "-G", "Ninja", "-S", lib.ROOT / "bench" / "sqlite", "-B", bld,
                          f"-DCMAKE_C_COMPILER={clang}", f"-DSQLITE_AMALGAMATION_DIR={amal}",
                          f"-DMTPC_DIR={lib.mtpc_dir()}", "-DMTPC_MAX_PARTITIONS=2",
                          f"-DMTPC_CACHE={bld / 'plans.sqlite'}", *extra])
        lib.run_measured(["ninja", "-C", bld, "sqlite3"])
    walls = {n: [] for n in CONFIGS}
    spans = {n: [] for n in CONFIGS}
    for r in range(args.repeat):
        for name in CONFIGS:
            bld = work / name
            (bld / "sqlite3").unlink()
            shutil.rmtree(bld / "sqlite3.mtpc", ignore_errors=True)
            for f in bld.glob("plans.sqlite*"):
                f.unlink()
            m = lib.run_measured(["ninja", "-C", bld, "sqlite3"])
            walls[name].append(m.wall)
            span, slots = backend_span(bld / "sqlite3.mtpc")
            if span is not None:
                spans[name].append(span)
            detail = (f"; sqlite3.c backend {span:.2f} s, slots " +
                      ", ".join(f"{p} {a:.1f}-{b:.1f} s" for p, a, b in slots)) if span else ""
            print(f"repeat {r + 1}: {name:<6} link {m.wall:.2f} s{detail}", flush=True)
    print(f"\nSQLite shell link on this machine, medians of {args.repeat}:")
    for name in CONFIGS:
        ratio = lib.median(a / b for a, b in zip(walls[name], walls["thin"]))
        sp = f", sqlite3.c backend {lib.median(spans[name]):.2f} s" if spans[name] else ""
        print(f"  {name:<6} link {lib.median(walls[name]):.2f} s, {ratio:.3f} of plain ThinLTO{sp}")
    print("  shares / equal per repeat: " +
          ", ".join(f"{a / b:.3f}" for a, b in zip(walls["shares"], walls["equal"])))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except lib.BenchError as e:
        lib.eprint(f"shares_ab: {e}")
        sys.exit(1)
