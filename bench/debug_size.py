#!/usr/bin/env python3
"""Debug-info size of an MTPC build against plain ThinLTO, side by side.

Builds the same CMake project twice, side by side, with -g (CMAKE_BUILD_TYPE
RelWithDebInfo) and optionally -gsplit-dwarf: once with plain ThinLTO, once
through MTPC (every module split: MTPC_SPLIT_THRESHOLD=0, --partitions N), then
prints the bytes of the .debug_* sections of the linked binary (llvm-size -A)
and, with -gsplit-dwarf, of the .dwo files its skeleton CUs name and of the
.dwp packing them (MTPC writes <binary>.dwp; for ThinLTO this script runs
llvm-dwp -e on the binary), with the ratio MTPC / ThinLTO.

Projects: a sample of tests/projects (c, cxx, debug; option SAMPLE_MTPC),
nlohmann/json's unit test (--project json: bench/cxx, after bench/get-cxx.sh) or
the generated synthetic project (--synthetic LINES, bench/gen_synthetic.py;
options SYNTH_*). Standard library only; MTPC must be built (scripts/build.sh).

  bench/debug_size.py --project debug --split-dwarf
  bench/debug_size.py --synthetic 20000 --partitions 4 --split-dwarf
"""
import argparse
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import lib  # noqa: E402  (the LLVM of the MTPC build: $MTPC_LLVM_VERSION or MTPC_BUILD_DIR's)
LLVM_BIN = lib.LLVM_BIN


def tool(name):
    p = LLVM_BIN / name
    if not p.exists():
        sys.exit(f"debug_size: {p} not found (run scripts/install-deps.sh)")
    return str(p)


def run(cmd, **kw):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    if r.returncode:
        sys.exit(f"debug_size: command failed ({r.returncode}): {' '.join(map(str, cmd))}\n"
                 f"{r.stdout}{r.stderr}")
    return r.stdout


def debug_bytes(path):
    """Sum of the .debug_* sections (.dwo variants included) of an ELF file."""
    total = 0
    for line in run([tool("llvm-size"), "-A", path]).splitlines():
        f = line.split()
        if len(f) >= 2 and f[0].startswith(".debug_") and f[1].isdigit():
            total += int(f[1])
    return total


def dwo_files(binary):
    """The .dwo files the skeleton CUs of binary name (relative names are
    resolved against DW_AT_comp_dir, as debuggers do)."""
    text = run([tool("llvm-dwarfdump"), "--debug-info", binary])
    out = []
    for unit in text.split("Compile Unit:")[1:]:
        name = re.search(r'DW_AT_(?:GNU_)?dwo_name\s+\("([^"]*)"\)', unit)
        if not name:
            continue
        comp = re.search(r'DW_AT_comp_dir\s+\("([^"]*)"\)', unit)
        p = pathlib.Path(name.group(1))
        if not p.is_absolute() and comp:
            p = pathlib.Path(comp.group(1)) / p
        out.append(p)
    return sorted(set(out))


def configure_and_build(args, src, bdir, mtpc, flags):
    cmd = ["cmake", "-S", src, "-B", bdir, "-G", "Ninja",
           f"-DCMAKE_C_COMPILER={lib.versioned_driver('clang')}",
           f"-DCMAKE_CXX_COMPILER={lib.versioned_driver('clang++')}",
           f"-DCMAKE_AR={tool('llvm-ar')}", "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
           f"-DCMAKE_C_FLAGS={flags}", f"-DCMAKE_CXX_FLAGS={flags}",
           "-DMTPC_SPLIT_THRESHOLD=0", f"-DMTPC_MAX_PARTITIONS={args.partitions}",
           f"-DMTPC_JOBS={args.jobs}", f"-DMTPC_CACHE={bdir / 'plans.sqlite'}"]
    if args.project == "json":
        cmd += [f"-DCXX_USE_MTPC={'ON' if mtpc else 'OFF'}", "-DCXX_LTO=thin",
                f"-DCXX_MTPC_PARTITIONS={args.partitions}", f"-DMTPC_DIR={args.mtpc_build}"]
    elif args.synthetic:
        cmd += ["-DSYNTH_LTO=thin", f"-DSYNTH_USE_MTPC={'ON' if mtpc else 'OFF'}",
                f"-DSYNTH_MTPC_PARTITIONS={args.partitions}", f"-DMTPC_DIR={args.mtpc_build}"]
    else:
        cmd += [f"-DSAMPLE_MTPC={'ON' if mtpc else 'OFF'}",
                f"-DMTPC_DIR={args.mtpc_build / 'cmake'}"]
    run(cmd + ["-Wno-dev"])
    return run(["cmake", "--build", bdir, "--", f"-j{args.jobs}"])


def measure(args, src, bdir, mtpc, split):
    flags = "-gsplit-dwarf" if split else ""
    out = configure_and_build(args, src, bdir, mtpc, flags)
    summary = [l for l in out.splitlines() if l.startswith("mtpc-link: ")]
    binary = bdir / args.target
    m = {"binary": debug_bytes(binary), "summary": summary}
    if split:
        dwos = dwo_files(binary)
        missing = [str(p) for p in dwos if not p.exists()]
        if missing:
            sys.exit(f"debug_size: .dwo files named by {binary} are missing: {missing}")
        m["dwo"] = sum(debug_bytes(p) for p in dwos)
        m["ndwo"] = len(dwos)
        dwp = binary.with_name(binary.name + ".dwp")
        if not mtpc:
            run([tool("llvm-dwp"), "-e", binary, "-o", dwp])
        m["dwp"] = debug_bytes(dwp)
        m["total"] = m["binary"] + m["dwp"]
    return m


def row(label, a, b):
    ratio = f"{b / a:.2f}" if a else "-"
    return f"| {label} | {a} | {b} | {ratio} |"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    what = ap.add_mutually_exclusive_group()
    what.add_argument("--project", default="debug",
                      help="sample under tests/projects (c, cxx, debug; default debug), or "
                      "json: bench/cxx, nlohmann/json's unit test (bench/get-cxx.sh first)")
    what.add_argument("--synthetic", type=int, metavar="LINES",
                      help="generate the synthetic project with LINES lines in big.c instead")
    ap.add_argument("--target", help="binary to measure (default: dbg, app or synth)")
    ap.add_argument("--partitions", type=int, default=4, help="partitions per module (default 4)")
    ap.add_argument("--jobs", type=int, default=2, help="build parallelism (default 2)")
    ap.add_argument("--split-dwarf", action="store_true",
                    help="also measure -gsplit-dwarf (.dwo files and .dwp)")
    ap.add_argument("--mtpc-build", type=pathlib.Path,
                    default=pathlib.Path(os.environ.get("MTPC_BUILD_DIR", ROOT / "build")),
                    help="MTPC build tree (default $MTPC_BUILD_DIR or build/)")
    ap.add_argument("--work", type=pathlib.Path,
                    help="work directory (default: a temporary one, removed afterwards)")
    args = ap.parse_args(argv)
    args.mtpc_build = args.mtpc_build.resolve()
    if not (args.mtpc_build / "cmake" / "MTPCConfig.cmake").exists():
        sys.exit(f"debug_size: no MTPC build in {args.mtpc_build} (run scripts/build.sh)")

    work = args.work or pathlib.Path(tempfile.mkdtemp(prefix="mtpc-debug-size-"))
    work = work.resolve()
    try:
        if args.synthetic:
            src = work / "src"
            run([sys.executable, ROOT / "bench" / "gen_synthetic.py", "-o", src,
                 "--lines", str(args.synthetic)])
            args.target = args.target or "synth"
            name = f"synthetic --lines {args.synthetic}"
        elif args.project == "json":
            src = ROOT / "bench" / "cxx"
            args.target = args.target or "json_unit"
            name = "bench/cxx (nlohmann/json's unit test)"
        else:
            src = ROOT / "tests" / "projects" / args.project
            args.target = args.target or ("dbg" if args.project == "debug" else "app")
            name = f"tests/projects/{args.project}"
        print(f"# debug-info size: {name}, target {args.target}, "
              f"MTPC with {args.partitions} partitions per module (threshold 0)")
        print("# command: " + " ".join(["bench/debug_size.py"] + (argv or sys.argv[1:])))
        for split in ([False, True] if args.split_dwarf else [False]):
            tag = "gsplit" if split else "g"
            ref = measure(args, src, work / f"thinlto-{tag}", False, split)
            mt = measure(args, src, work / f"mtpc-{tag}", True, split)
            print()
            print(f"## -O2 -g{' -gsplit-dwarf' if split else ''}")
            for s in mt["summary"]:
                print(f"# {s}")
            print("| bytes of .debug_* | ThinLTO | MTPC | MTPC / ThinLTO |")
            print("| --- | ---: | ---: | ---: |")
            print(row("binary" + (" (skeletons)" if split else ""), ref["binary"], mt["binary"]))
            if split:
                print(row(f".dwo files (ThinLTO {ref['ndwo']}, MTPC {mt['ndwo']})",
                          ref["dwo"], mt["dwo"]))
                print(row(".dwp", ref["dwp"], mt["dwp"]))
                print(row("binary + .dwp", ref["total"], mt["total"]))
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
