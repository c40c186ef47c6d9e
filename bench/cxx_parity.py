#!/usr/bin/env python3
"""Code-quality parity of MTPC's split builds against plain ThinLTO on large C++ programs
(issue #13 item 3): executed instructions (valgrind callgrind) and .text size.

For each workload the objects are compiled once (clang++ -O2 -flto=thin with the workload's
own flags, kept in WORK/<workload>/obj/ and reused while their command and source are
unchanged), then the program is linked
  plain:  clang++-19 -flto=thin -fuse-ld=lld -O2 <link flags> <objects> -o WORK/<w>/plain/<prog>
  MTPC:   <mtpc build>/ninja-gen/mtpc-link --partitions N --cache <fresh sqlite file> --
          <the same link command> -o WORK/<w>/mtpcN/<prog>        for each N of --partitions
(output, inner build <output>.mtpc/ and plan cache removed first, so everything reruns;
mtpc-link's default split rule applies: modules whose estimated backend cost is at least
50000 instructions are split). Every program must print the same output as the plain one
(native run, and again under callgrind); then callgrind counts the instructions it executes
(same arguments and environment for every build, in a fresh empty directory that is also
its TEST_TMPDIR; plain is run twice, to show the run-to-run noise), and llvm-size -A gives
its .text (and a few other sections). Goal (issue #13): instructions <= +0.1 % and .text
<= +0.5 % of plain ThinLTO's, per workload and N.

Workloads (sources fetched by their bench/get-*.sh, which this script runs; idempotent):
  json_unit   nlohmann/json's unit-element_access2.cpp + doctest's main (bench/get-cxx.sh,
              flags of bench/cxx/CMakeLists.txt)
  googletest  googletest's gtest_unittest.cc + gtest-all.cc + gtest_main.cc
              (bench/get-googletest.sh; death tests and thread tests left out: they fork or
              spin, and their instruction counts change from run to run)
  fmt         fmt's format-test.cc + format.cc, os.cc, fmt's test main, gtest-all.cc,
              gmock-all.cc (bench/get-fmt.sh; the 4 long double tests left out: valgrind
              emulates x87 long double with 64-bit doubles, so they fail under it)

MTPC's tools (mtpc-link, mtpc-split) are copied from --mtpc-build into WORK/tools/ first, so
a rebuild of that tree during the run cannot mix two versions; their SHA-256 is recorded.
Besides the table, a second one splits each count (callgrind_annotate) into the program's own
functions, exception unwinding (_Unwind_RaiseException + _Unwind_Resume, inclusive: json_unit
and format-test throw thousands of exceptions, and unwinding is most of what they execute) and
the rest (libc, libstdc++, ld.so); and for each N it lists the functions whose exclusive
instruction count and whose symbol size (llvm-nm -S) grew most against plain ThinLTO.

  /usr/bin/python3 bench/cxx_parity.py --json bench/out/cxx_parity.json
  /usr/bin/python3 bench/cxx_parity.py --workloads googletest --partitions 4
"""
import argparse
import datetime
import hashlib
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import callgrind  # noqa: E402
import lib  # noqa: E402

GOAL_INSTRUCTIONS = 1.001     # issue #13 item 3: <= +0.1 %
GOAL_TEXT = 1.005             # <= +0.5 %
SECTIONS = (".text", ".rodata", ".data.rel.ro", ".eh_frame", ".gcc_except_table")

# gtest's flags (googletest/cmake/internal_utils.cmake, cxx_default for Clang; Debian's
# 0001 patch makes GTEST_HAS_PTHREAD public, so every user of gtest compiles with it).
GTEST_FLAGS = ["-Wall", "-Wshadow", "-Wconversion", "-fexceptions", "-pthread",
               "-DGTEST_HAS_PTHREAD=1"]


def json_unit():
    common = ["-DNDEBUG", "-std=c++17", "-DDOCTEST_CONFIG_SUPER_FAST_ASSERTS",
              "-DJSON_TEST_KEEP_MACROS", "-DJSON_TEST_USING_MULTIPLE_HEADERS=0",
              "-Wno-deprecated", "-Wno-float-equal", "-Idoctest", "-Isingle_include", "-Isrc"]
    return {
        "fetch": "get-cxx.sh", "src": "cxx-src", "program": "json_unit",
        "what": "nlohmann-json3 (json.hpp + doctest): src/unit-element_access2.cpp, src/unit.cpp",
        "objects": [("src/unit.cpp", common), ("src/unit-element_access2.cpp", common)],
        "link_flags": ["-lm"],
        "args": [],                 # as Benchmark 3's callgrind rows
        "check_args": ["--success"],   # every assertion with its expanded values
    }


def googletest():
    flags = GTEST_FLAGS + ["-Igoogletest/include", "-Igoogletest"]
    return {
        "fetch": "get-googletest.sh", "src": "googletest-src", "program": "gtest_unittest",
        "what": "googletest: googletest/test/gtest_unittest.cc, src/gtest-all.cc, "
                "src/gtest_main.cc",
        "objects": [("googletest/test/gtest_unittest.cc", flags),
                    ("googletest/src/gtest-all.cc", flags),
                    ("googletest/src/gtest_main.cc", flags)],
        "link_flags": ["-pthread"],
        # death tests fork (and the parent's pipe reads vary), the thread tests spin:
        # their counts change from run to run; everything else is repeatable
        "args": ["--gtest_print_time=0",
                 "--gtest_filter=-*DeathTest*:TestResultPropertyTest.GetTestProperty"
                 ":*WithThreads*"],
    }


def fmt():
    gt, gm = "googletest/googletest", "googletest/googlemock"
    test = ["-pthread", "-DGTEST_HAS_PTHREAD=1", "-Iinclude", f"-I{gt}/include",
            f"-I{gm}/include"]
    return {
        "fetch": "get-fmt.sh", "src": "fmt-src", "program": "format-test",
        "what": "fmtlib (+ googletest): test/format-test.cc, src/format.cc, src/os.cc, "
                "test/{test-main,gtest-extra,util}.cc, gtest-all.cc, gmock-all.cc",
        "objects": [("test/format-test.cc", test),
                    ("test/test-main.cc", test), ("test/gtest-extra.cc", test),
                    ("test/util.cc", test),
                    ("src/format.cc", ["-Iinclude"]), ("src/os.cc", ["-Iinclude"]),
                    (f"{gm}/src/gmock-all.cc",
                     GTEST_FLAGS + [f"-I{gm}/include", f"-I{gm}", f"-I{gt}/include"]),
                    (f"{gt}/src/gtest-all.cc", GTEST_FLAGS + [f"-I{gt}/include", f"-I{gt}"])],
        "link_flags": ["-pthread"],
        # valgrind computes x87 long double in 64 bits: these 4 tests fail under it only
        "args": ["--gtest_print_time=0",
                 "--gtest_filter=-format_test.width:format_test.runtime_width"
                 ":format_test.precision:format_test.format_long_double"],
    }


WORKLOADS = {"json_unit": json_unit, "googletest": googletest, "fmt": fmt}


class Toolchain:
    """clang++, llvm-size, llvm-nm of the LLVM the MTPC build was made with."""

    def __init__(self, build):
        self.version = lib.llvm_version(build)
        self.bin = pathlib.Path(os.environ.get("MTPC_LLVM_BIN")
                                or f"/usr/lib/llvm-{self.version}/bin")
        self.clangxx = self.find("clang++")
        self.size = self.find("llvm-size")
        self.nm = self.find("llvm-nm")

    def find(self, name):
        p = shutil.which(f"{name}-{self.version}")
        if p:
            return p
        if (self.bin / name).exists():
            return str(self.bin / name)
        raise lib.BenchError(f"{name}-{self.version} not found (run scripts/install-deps.sh)")


def sha256(path):
    return hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest()


def snapshot_tools(build, dest):
    """Copy mtpc-link and mtpc-split (mtpc-link runs the mtpc-split next to it)."""
    dest.mkdir(parents=True, exist_ok=True)
    info = {}
    for name in ("mtpc-link", "mtpc-split"):
        src = lib.mtpc_tool(name, build)
        if src is None:
            raise lib.BenchError(f"{name} not built in {build} (scripts/build.sh {build})")
        tmp = dest / (name + ".tmp")
        shutil.copy2(src, tmp)
        os.replace(tmp, dest / name)
        info[name] = {"from": src, "sha256": sha256(dest / name)}
    return dest / "mtpc-link", info


def compile_objects(tc, wl, src, objdir, log):
    """Compile every object once; reuse it while its command and source are unchanged."""
    objdir.mkdir(parents=True, exist_ok=True)
    objs, cmds = [], []
    for rel, flags in wl["objects"]:
        obj = objdir / (pathlib.Path(rel).stem + ".o")
        cmd = [tc.clangxx, "-O2", "-flto=thin", *flags, "-c", str(src / rel), "-o", str(obj)]
        stamp = obj.with_suffix(".o.cmd")
        key = json.dumps(cmd[:-2])      # without "-o obj": a copied obj/ folder stays fresh
        fresh = (obj.exists() and stamp.exists() and stamp.read_text() == key
                 and obj.stat().st_mtime >= (src / rel).stat().st_mtime)
        if not fresh:
            m = lib.run_measured(cmd, cwd=src)
            lib.check_object(obj, rel)
            stamp.write_text(key)
            log(f"  compiled {rel}: {m.cpu:.1f} s CPU")
        objs.append(obj)
        cmds.append(cmd)
    return objs, cmds


def section_sizes(tc, exe):
    out = lib.run_measured([tc.size, "-A", exe]).stdout
    sizes = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 2 and f[0] in SECTIONS and f[1].isdigit():
            sizes[f[0]] = int(f[1])
    return sizes


def symbol_sizes(tc, exe):
    """Bytes of each defined function symbol (summed over same-named local symbols)."""
    out = lib.run_measured([tc.nm, "-S", "--defined-only", "--no-demangle", exe]).stdout
    sizes = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) == 4 and f[2] in "tTwW":
            sizes[f[3]] = sizes.get(f[3], 0) + int(f[1], 16)
    return sizes


ANNOTATE_LINE = re.compile(r"^\s*([\d,]+)\s+\([^)]*\)\s+(.*?)\s*$")


def function_costs(cg_file, inclusive=False):
    """Instructions per function (callgrind_annotate), exclusive or inclusive, keyed
    'function [object file name]'."""
    if not shutil.which("callgrind_annotate"):
        return {}
    r = subprocess.run(["callgrind_annotate", "--threshold=100",
                        f"--inclusive={'yes' if inclusive else 'no'}", str(cg_file)],
                       capture_output=True, text=True)
    costs, started = {}, False
    for line in r.stdout.splitlines():
        if "PROGRAM TOTALS" in line:
            started = True
            continue
        m = ANNOTATE_LINE.match(line) if started else None
        if m:
            name = m.group(2)
            name = name[4:] if name.startswith("???:") else name
            # the object by its file name: the program's path differs from build to build
            name = re.sub(r" \[/[^\]]*/([^/\]]+)\]$", r" [\1]", name)
            costs[name] = costs.get(name, 0) + int(m.group(1).replace(",", ""))
    return costs


UNWINDER = ("_Unwind_RaiseException [libgcc_s.so.1]", "_Unwind_Resume [libgcc_s.so.1]")


def unwinding(cg_file):
    """Instructions spent unwinding for C++ exceptions: _Unwind_RaiseException and
    _Unwind_Resume, inclusive (FDE search, CFI, the personality routine reading the
    call-site tables); the landing pads they jump to are not inside them."""
    inc = function_costs(cg_file, inclusive=True)
    return sum(inc.get(n, 0) for n in UNWINDER) if inc else None


def own_code(costs, program):
    """Instructions executed in the program's own functions (not in libc, libstdc++, ld.so):
    the code the split compiled. The rest moves too, a little, with the program's layout
    (e.g. libc's string functions take other paths when the heap, which starts after .bss,
    starts at another offset in its page)."""
    return sum(v for k, v in costs.items() if k.endswith(f" [{program}]")) or None


def top_growth(base, new, k):
    """The k names whose value grew most from base to new (missing = 0)."""
    delta = [(new.get(n, 0) - base.get(n, 0), n) for n in set(base) | set(new)]
    delta.sort(key=lambda x: (-x[0], x[1]))
    return [{"name": n, "delta": d, "base": base.get(n, 0), "new": new.get(n, 0)}
            for d, n in delta[:k] if d > 0]


def normalize(text):
    """gtest prints a test's time when a test turns --gtest_print_time back on."""
    return re.sub(r"\(\d+ ms( total)?\)", r"(N ms\1)", text)


def run_program(exe, args, rundir_parent, callgrind_keep=None):
    """Run exe natively (callgrind_keep None) or under callgrind in a fresh empty directory
    that is also TEST_TMPDIR. Returns (returncode or instructions, normalized stdout)."""
    rundir_parent.mkdir(parents=True, exist_ok=True)
    rundir = pathlib.Path(tempfile.mkdtemp(prefix="run", dir=rundir_parent))
    env = dict(os.environ, TEST_TMPDIR=f"{rundir}/")
    try:
        if callgrind_keep is None:
            m = lib.run_measured([exe, *args], cwd=rundir, env=env, check=False)
            return m.returncode, normalize(m.stdout)
        n, out = callgrind.instructions([exe, *args], cwd=rundir, keep=callgrind_keep,
                                        env=env)
        return n, normalize(out)
    finally:
        shutil.rmtree(rundir, ignore_errors=True)


def link(tc, mtpc_link, objs, wl, outdir, partitions, log):
    """Plain ThinLTO link (partitions None) or through mtpc-link; returns its record."""
    exe = outdir / wl["program"]
    outdir.mkdir(parents=True, exist_ok=True)
    exe.unlink(missing_ok=True)
    shutil.rmtree(str(exe) + ".mtpc", ignore_errors=True)
    cmd = [tc.clangxx, "-flto=thin", "-fuse-ld=lld", "-O2", *wl["link_flags"],
           *map(str, objs), "-o", str(exe)]
    rec = {"partitions": partitions}
    if partitions is not None:
        cache = outdir / "plans.sqlite"
        for f in outdir.glob("plans.sqlite*"):
            f.unlink()
        cmd = [str(mtpc_link), "--partitions", str(partitions), "--cache", str(cache),
               "--quiet", "--", *cmd]
    m = lib.run_measured(cmd, cwd=outdir)
    lib.check_object(exe, "link")
    rec.update(cmd=cmd, link_wall=m.wall, link_cpu=m.cpu)
    if partitions is not None:
        summary = [ln for ln in (m.stdout + m.stderr).splitlines()
                   if ln.startswith("mtpc-link:")]
        rec["mtpc_link"] = summary
        if not summary:
            raise lib.BenchError(f"mtpc-link printed no summary line:\n{m.stdout}{m.stderr}")
        warn = [ln for ln in (m.stdout + m.stderr).splitlines()
                if "warning" in ln.lower() or "fallback" in ln.lower()]
        if warn:
            rec["warnings"] = warn
            log("  WARNING from mtpc-link:\n    " + "\n    ".join(warn))
        log(f"  {summary[0]}")
    log(f"  link {m.wall:.1f} s wall, {m.cpu:.1f} s CPU")
    return exe, rec


def measure(tc, exe, wl, wdir, name, rec, reference, log, repeat=1):
    """Output check (native and under callgrind), instructions, section sizes."""
    check_args = wl.get("check_args", wl["args"])
    rc, out = run_program(exe, check_args, wdir / "runs")
    rec["exit_code"] = rc
    rec["sections"] = section_sizes(tc, exe)
    counts = []
    cg_out = None
    for i in range(repeat):
        keep = wdir / name / (f"callgrind.out.{i + 1}" if repeat > 1 else "callgrind.out")
        n, cg_out = run_program(exe, wl["args"], wdir / "runs", callgrind_keep=keep)
        counts.append(n)
        rec.setdefault("callgrind_files", []).append(str(keep))
    rec["instructions"] = counts[0]
    if repeat > 1:
        rec["instructions_runs"] = counts
    if reference is None:
        if rc != 0:
            raise lib.BenchError(f"{exe} {' '.join(check_args)} exited {rc}")
        rec["same_output"] = True
        reference = {"native": (rc, out), "callgrind": cg_out}
    else:
        rec["same_output"] = ((rc, out) == reference["native"]
                              and cg_out == reference["callgrind"])
        if not rec["same_output"]:
            log(f"  {name}: PROGRAM OUTPUT DIFFERS from plain ThinLTO's")
            (wdir / name / "output.txt").write_text(out)
    log(f"  {name}: {counts} instructions, .text {rec['sections'].get('.text')} bytes, "
        f"exit {rc}")
    return reference


def run_workload(tc, mtpc_link, key, parts, work, top, log):
    wl = WORKLOADS[key]()
    src = lib.ROOT / "bench" / "work" / wl["src"]
    log(f"{key}: fetch ({wl['fetch']})")
    lib.run_measured(["sh", lib.ROOT / "bench" / wl["fetch"]])
    version = (src / "VERSION").read_text().split()
    wdir = work / key
    log(f"{key}: compile (once)")
    objs, cmds = compile_objects(tc, wl, src, wdir / "obj", log)
    res = {"what": wl["what"], "source": str(src), "version": version,
           "compile": cmds, "args": wl["args"],
           "check_args": wl.get("check_args", wl["args"]), "builds": {}}
    log(f"{key}: plain ThinLTO")
    exe, rec = link(tc, mtpc_link, objs, wl, wdir / "plain", None, log)
    ref = measure(tc, exe, wl, wdir, "plain", rec, None, log, repeat=2)
    runs = rec["instructions_runs"]
    rec["noise"] = abs(runs[1] - runs[0]) / runs[0]
    res["builds"]["plain"] = rec
    base_syms = symbol_sizes(tc, exe)
    base_cost = function_costs(rec["callgrind_files"][0])
    rec["own_instructions"] = own_code(base_cost, wl["program"])
    rec["unwind_instructions"] = unwinding(rec["callgrind_files"][0])
    for n in parts:
        name = f"mtpc{n}"
        log(f"{key}: MTPC, --partitions {n}")
        exe_n, r = link(tc, mtpc_link, objs, wl, wdir / name, n, log)
        measure(tc, exe_n, wl, wdir, name, r, ref, log)
        r["instructions_ratio"] = r["instructions"] / rec["instructions"]
        r["text_ratio"] = r["sections"][".text"] / rec["sections"][".text"]
        r["section_ratios"] = {s: r["sections"][s] / rec["sections"][s]
                               for s in r["sections"] if rec["sections"].get(s)}
        r["meets_goal"] = {"instructions": r["instructions_ratio"] <= GOAL_INSTRUCTIONS,
                           "text": r["text_ratio"] <= GOAL_TEXT}
        r["top_symbol_growth"] = top_growth(base_syms, symbol_sizes(tc, exe_n), top)
        cost = function_costs(r["callgrind_files"][0])
        r["top_instruction_growth"] = top_growth(base_cost, cost, top)
        r["own_instructions"] = own_code(cost, wl["program"])
        r["unwind_instructions"] = unwinding(r["callgrind_files"][0])
        if rec["own_instructions"] and r["own_instructions"]:
            r["own_instructions_ratio"] = r["own_instructions"] / rec["own_instructions"]
        if rec["unwind_instructions"] and r["unwind_instructions"] is not None:
            r["unwind_instructions_ratio"] = (r["unwind_instructions"]
                                              / rec["unwind_instructions"])
        res["builds"][name] = r
    return res


def split_desc(summary):
    """'gtest_unittest.o: 2, gtest-all.o: 2' from mtpc-link's summary line."""
    m = re.search(r"split \((.*?)\)", summary[0]) if summary else None
    return m.group(1).replace(" partitions", "") if m else "none"


def print_table(results, top):
    print()
    print("| workload | N | split (partitions) | instructions plain | MTPC | ratio | "
          ".text plain | MTPC | ratio | same output |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for key, res in results["workloads"].items():
        base = res["builds"]["plain"]
        for name, r in res["builds"].items():
            if name == "plain":
                continue
            mi = "" if r["meets_goal"]["instructions"] else " (misses)"
            mt = "" if r["meets_goal"]["text"] else " (misses)"
            print(f"| {key} | {r['partitions']} | {split_desc(r['mtpc_link'])} | "
                  f"{base['instructions']:,} | {r['instructions']:,} | "
                  f"{r['instructions_ratio']:.5f}{mi} | {base['sections']['.text']:,} | "
                  f"{r['sections']['.text']:,} | {r['text_ratio']:.4f}{mt} | "
                  f"{'yes' if r['same_output'] else 'NO'} |")
    print("\nWhere the instructions are (callgrind_annotate): the program's own functions "
          "(exclusive), exception unwinding (_Unwind_RaiseException + _Unwind_Resume, "
          "inclusive), the rest (libc, libstdc++, ld.so outside unwinding)")
    print("| workload | N | own code: plain | MTPC | ratio | unwinding: plain | MTPC | ratio "
          "| rest: plain | MTPC | ratio |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for key, res in results["workloads"].items():
        base = res["builds"]["plain"]
        for name, r in res["builds"].items():
            if (name == "plain" or not r.get("own_instructions_ratio")
                    or not r.get("unwind_instructions_ratio")):
                continue
            rest_b = base["instructions"] - base["own_instructions"] - \
                base["unwind_instructions"]
            rest_n = r["instructions"] - r["own_instructions"] - r["unwind_instructions"]
            print(f"| {key} | {r['partitions']} | {base['own_instructions']:,} | "
                  f"{r['own_instructions']:,} | {r['own_instructions_ratio']:.5f} | "
                  f"{base['unwind_instructions']:,} | {r['unwind_instructions']:,} | "
                  f"{r['unwind_instructions_ratio']:.5f} | {rest_b:,} | {rest_n:,} | "
                  f"{rest_n / rest_b:.5f} |")
    print(f"\ngoals: instructions <= {GOAL_INSTRUCTIONS}, .text <= {GOAL_TEXT} of plain "
          "ThinLTO's; plain run-to-run noise: " +
          ", ".join(f"{k} {res['builds']['plain']['noise']:.6%}"
                    for k, res in results["workloads"].items()))
    if top:
        for key, res in results["workloads"].items():
            for name, r in res["builds"].items():
                if name == "plain":
                    continue
                print(f"\n{key} {name}: largest growth in exclusive instructions")
                for g in r["top_instruction_growth"]:
                    print(f"  +{g['delta']:,} ({g['base']:,} -> {g['new']:,})  {g['name']}")
                print(f"{key} {name}: largest growth in symbol size (bytes)")
                for g in r["top_symbol_growth"]:
                    print(f"  +{g['delta']:,} ({g['base']:,} -> {g['new']:,})  {g['name']}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mtpc-build", default=str(lib.ROOT / "build"),
                    help="MTPC build tree whose mtpc-link / mtpc-split are used "
                         "(default: build/ of this checkout)")
    ap.add_argument("--workloads", default=",".join(WORKLOADS),
                    help=f"comma list of {', '.join(WORKLOADS)} (default: all)")
    ap.add_argument("--partitions", default="2,4,8", help="comma list (default 2,4,8)")
    ap.add_argument("--work", default=str(lib.ROOT / "bench" / "out" / "cxx_parity"),
                    help="objects, programs, callgrind files (default bench/out/cxx_parity)")
    ap.add_argument("--top", type=int, default=5,
                    help="functions listed per build whose instructions / size grew most "
                         "(default 5; 0: none)")
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args(argv)
    keys = [k for k in args.workloads.split(",") if k]
    bad = [k for k in keys if k not in WORKLOADS]
    if bad:
        ap.error(f"unknown workload(s) {', '.join(bad)} (known: {', '.join(WORKLOADS)})")
    try:
        parts = [int(p) for p in args.partitions.split(",") if p]
    except ValueError:
        ap.error("--partitions: a comma list of integers")
    work = pathlib.Path(args.work).resolve()
    build = pathlib.Path(args.mtpc_build).resolve()

    def log(msg):
        print(msg, flush=True)

    try:
        tc = Toolchain(build)
        mtpc_link, tools = snapshot_tools(build, work / "tools")
        results = {"date": datetime.datetime.now().isoformat(timespec="seconds"),
                   "mtpc_build": str(build), "tools": tools, "llvm_version": tc.version,
                   "clangxx": tc.clangxx, "partitions": parts,
                   "goals": {"instructions": GOAL_INSTRUCTIONS, "text": GOAL_TEXT},
                   "workloads": {}}
        for key in keys:
            results["workloads"][key] = run_workload(tc, mtpc_link, key, parts, work,
                                                     args.top, log)
    except (lib.BenchError, callgrind.CallgrindError, OSError) as e:
        print(f"cxx_parity: {e}", file=sys.stderr)
        return 1
    print_table(results, args.top)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(results, indent=1) + "\n")
        print(f"wrote {args.json}")
    same = all(r["same_output"] for res in results["workloads"].values()
               for r in res["builds"].values())
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
