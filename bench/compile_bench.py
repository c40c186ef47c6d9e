#!/usr/bin/env python3
"""The compile step split (mtpc-compile): how much it shortens a huge translation unit's
critical path (its compile, then its ThinLTO backend), at what cost in total work and code
quality. Before mtpc-compile only the backend was split, so the compile (about 40% of the
path) stayed serial and capped the path's speedup at about 2.5x.

For each workload, one huge TU plus the few small sources of a program that runs it:
  sqlite   sqlite3.c (bench/get-sqlite.sh); program speedtest1 --size 5 --memdb --verify
  duktape  src/duktape.c (bench/get-duktape.sh); program duk (examples/cmdline) running a
           small JavaScript workload (JS_WORKLOAD below: Mandelbrot, sort, JSON, regexps)
  zstd     zstd.c, the Zstandard library amalgamated by its own combine.py
           (bench/get-zstd.sh); program roundtrip (bench/zstd/roundtrip.c: 1 MiB of the
           amalgamation's text compressed at 5 levels and streamed, decompressed, checked)
  cxx      a unit test of nlohmann json (bench/get-cxx.sh): src/unit-element_access2.cpp,
           bench/cxx/CMakeLists.txt's default (--cxx-unit for another), compiled with its
           settings; program json_unit (with doctest's main, src/unit.cpp)
  gtest    googletest's own unit test, googletest/test/gtest_unittest.cc
           (bench/get-googletest.sh; flags and test filter of bench/cxx_parity.py's
           googletest workload); program gtest_unittest (with gtest-all.cc, gtest_main.cc)
  rocksdb  a real unity build, not in the default set (about 40 minutes with --runs 1):
           RocksDB's library as its CMake project builds it with CMAKE_UNITY_BUILD=ON and a
           batch size of 0, 322 sources in one TU (bench/get-rocksdb.sh: CMake's unity
           source and its Release flags, -O3); program kvbench (bench/rocksdb/kvbench.cc:
           writes, flushes, a compaction, reads and scans; util/crc32c.cc, the source CMake
           keeps out of the unity source, with its own extra flags). No edit (section 4):
           the unity source has no function of its own; an edit is one of the files it
           includes. The same project whole, with its tests: wrap_sweep.py --projects rocksdb.
A workload whose sources are missing is skipped with a message naming its fetch script.

1. Total work, every process pinned to one CPU (taskset -c 1: the VM's cpus differ ~1.6x)
   and every edge after the other (--jobs 1, ninja -j1, -Wl,--thinlto-jobs=1):
   - the plain compile: clang -O2 -flto=thin -c TU;
   - mtpc-compile --jobs 1 --partitions P --cost-threshold 0: its frontend (not an edge of
     its inner build: the same command with -Xclang -disable-llvm-passes, run by itself)
     and each edge of OBJ.mtpc/.ninja_log (split, slots, join);
   - the link: plain ThinLTO (lld in-process) and mtpc-link --jobs 1 --partitions P
     --threshold 0 (each edge of OUT.mtpc/.ninja_log: thin link, splits, slots, merges,
     final link), both with the plain-compiled and with the mtpc-compiled object;
   - the program's other sources, compiled plain (the same in every config).
   An edge's seconds are its CPU: the pinned process tree runs in a cgroup of its own whose
   usage is sampled (link_costs.CpuTimeline), so another job sharing the CPU does not
   count; without a writable cgroup (not root) they are the edges' durations, and the
   tables say so. Whole processes' CPU comes from os.wait4 (lib.run_measured); a tool's
   "own" time is its process's CPU minus its edges' (and minus the frontend for
   mtpc-compile): parsing, writing the graph, mtpc-compile's cost estimate.
   The compile-side work ratio (mtpc-compile's whole process / the plain compile) is
   measured again in --pinned-runs interleaved pinned pairs, each from nothing (plain
   compile, then mtpc-compile with no object, inner directory or plan cache): the ratio of
   the medians, and each pair's. One pinned run on this VM moves by 10-20% with the
   moment; two runs a few seconds apart much less.
2. PREDICTED critical path on N = 2, 4, 8, 16 cores: greedy list scheduling
   (predict.list_schedule) of those edges: the compile side's (the program's sources, the
   TU's compile), then the link's. (a) plain ThinLTO: the plain compile, then the plain link
   as one serial job; (b) the backend split only: the plain compile, then mtpc-link's own
   time and edges; (c) mtpc-compile's own time, frontend and edges, then mtpc-link's;
   (c') (c) without mtpc-compile's own time (what its graph alone allows). Each split
   edge (the compile's and the link's) counts as its serial part and one parallel job per
   partition's emission (mtpc-split emits in threads), in the proportions of a
   `mtpc-split --stats` run of the same split. A prediction,
   not a measurement: no contention, identical cores, no scheduling overhead.
3. Wall on this machine's cores (unpinned, --jobs/--thinlto-jobs = cores): compile, and
   compile + link, plain against MTPC, --runs runs each interleaved (plain, mtpc, plain,
   ...), each from nothing (outputs, inner directories and plan caches deleted); medians
   and min..max. Then mtpc-compile once more with its object kept (inner directory and
   plan cache deleted): the cost then comes from the object's summary, not from the
   source's text.
4. Edit -> object: one constant in one function's body of the TU changed (the first line
   past the middle of the file matching the workload's pattern), the TU compiled again:
   plain, and mtpc-compile on its previous inner build (only the partitions whose bitcode
   changed rerun their slot: the number that ran is reported). Pinned CPU once, then wall
   --runs times interleaved (a new value each time). The source is restored afterwards.
5. Quality of the program: (i) plain compile + plain link, (b) plain compile + mtpc-link,
   (ii) mtpc-compile + plain link, (iii) mtpc-compile + mtpc-link: instructions executed
   (valgrind's callgrind, bench/callgrind.py) and .text bytes (llvm-size -A), as ratios to
   (i); the program's output must be the same in all four (speedtest1: its hash lines).
   And the thin link's imports (LLVM's -print-imports, a plain link of each object again):
   functions imported into the TU's module and from it, plain compile's object against
   mtpc-compile's (a pre-link inliner that inlines less leaves other calls to import).
   Goals (issue 29): instructions within +0.1%, .text within +0.5%; the path >= 5x shorter
   than plain at 16 cores (predicted); compile-side work <= 1.10 of the plain compile.

Usage:
  /usr/bin/python3 bench/compile_bench.py                      # every workload found
  /usr/bin/python3 bench/compile_bench.py --workloads sqlite --runs 5
  /usr/bin/python3 bench/compile_bench.py --quick              # small synthetic TU (tests)
Writes bench/out/compile_bench.json (--json); builds go to bench/out/compile_bench/<workload>
(--work). Needs taskset, valgrind, ninja, and clang/lld of MTPC's LLVM.
"""
import argparse
import dataclasses
import datetime
import json
import os
import pathlib
import platform
import re
import shlex
import shutil
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import callgrind  # noqa: E402
import gen_synthetic  # noqa: E402
import lib  # noqa: E402
import link_costs  # noqa: E402
import predict  # noqa: E402

ROOT = lib.ROOT
WORK = ROOT / "bench" / "work"
CORES = (2, 4, 8, 16)

# duk's workload: deterministic, a checksum per part; ~1 s natively at -O2.
JS_WORKLOAD = r"""
function mandel(w, h, iters) {
  var sum = 0;
  for (var y = 0; y < h; y++) for (var x = 0; x < w; x++) {
    var cr = x / w * 3 - 2, ci = y / h * 2 - 1, zr = 0, zi = 0, i = 0;
    while (i < iters && zr * zr + zi * zi < 4) {
      var t = zr * zr - zi * zi + cr; zi = 2 * zr * zi + ci; zr = t; i++;
    }
    sum = (sum * 31 + i) >>> 0;
  }
  return sum;
}
var m = mandel(120, 60, 200);
var a = [];
for (var i = 0; i < 30000; i++) a.push((i * 7919) % 10007);
a.sort(function (x, y) { return x - y; });
var o = {};
for (i = 0; i < 5000; i++) o['k' + i] = {v: i, s: 'x' + (i % 97), l: [i, i * 2]};
var s = JSON.stringify(o), p = JSON.parse(s);
var words = s.match(/x\d+/g).length;
var str = '';
for (i = 0; i < 2000; i++) str += String.fromCharCode(97 + i % 26);
print(m, a[100], a[29999], s.length, p.k4999.l[1], words, str.replace(/[aeiou]/g, '').length);
"""


@dataclasses.dataclass
class Workload:
    name: str
    fetch: str            # the script that fetches the sources
    dir: pathlib.Path
    tu: str               # the huge translation unit (relative to dir)
    others: list          # the program's other sources, compiled plain in every config
    cxx: bool
    cflags: list
    ldflags: list
    args: list            # the program's arguments
    edit_re: str          # a line with a constant (group 1) in one function's body
    program: str
    keep: str = None      # the output lines every build must print alike (None: all)
    patch: tuple = ()     # (old, new) replacements in the TU's copy, each applied once
    other_flags: dict = dataclasses.field(default_factory=dict)  # more flags of one other


def flag_file(path):
    """The flags of a file bench/get-rocksdb.sh wrote (one per line); none if missing (the
    workload is then skipped, its TU missing too)."""
    return path.read_text().split("\n")[:-1] if path.exists() else []


def workloads(work, cxx_unit="element_access2"):
    sq, dk, cx = WORK / "sqlite-amalgamation", WORK / "duktape-src", WORK / "cxx-src"
    gt, zs, rd = WORK / "googletest-src", WORK / "zstd-src", WORK / "rocksdb-src"
    extras = ["print-alert", "console", "logging", "module-duktape"]
    duk_defs = ["-DDUK_CMDLINE_PRINTALERT_SUPPORT", "-DDUK_CMDLINE_CONSOLE_SUPPORT",
                "-DDUK_CMDLINE_LOGGING_SUPPORT", "-DDUK_CMDLINE_MODULE_SUPPORT"]
    return {
        "sqlite": Workload(
            "sqlite", "bench/get-sqlite.sh", sq, "sqlite3.c", ["speedtest1.c"], False,
            ["-DSQLITE_ENABLE_MATH_FUNCTIONS"], ["-lm", "-lpthread", "-ldl"],
            ["--size", "5", "--memdb", "--verify"], r"^\s+return ([1-9]\d*);$",
            "speedtest1", keep=r"(?i)hash"),
        "duktape": Workload(
            "duktape", "bench/get-duktape.sh", dk, "src/duktape.c",
            ["examples/cmdline/duk_cmdline.c"] +
            [f"extras/{e}/duk_{e.replace('-', '_')}.c" for e in extras], False,
            ["-std=c99", *duk_defs, f"-I{dk}/src", f"-I{dk}/examples/cmdline"] +
            [f"-I{dk}/extras/{e}" for e in extras], ["-lm"],
            [str(work / "duktape" / "workload.js")], r"^\s+return ([1-9]\d*);$", "duk",
            # Duktape seeds its string hash with the heap's address, which moves with the
            # binary's layout, and its random numbers (Array.prototype.sort's pivots) with
            # the time of day: either moves the instruction count of one binary by up to
            # 4% from run to run, whatever the code. The builds compared here share fixed
            # seeds.
            patch=(("res->hash_seed = (duk_uint32_t) (duk_uintptr_t) res;",
                    "res->hash_seed = (duk_uint32_t) 0x12345678UL;"),
                   ("res->rnd_state[0] = (duk_uint64_t) duk_time_get_ecmascript_time("
                    "res->heap_thread);",
                    "res->rnd_state[0] = (duk_uint64_t) 0x12345678UL;"))),
        # bench/cxx/CMakeLists.txt's settings (upstream's test_main)
        "cxx": Workload(
            "cxx", "bench/get-cxx.sh", cx, f"src/unit-{cxx_unit}.cpp", ["src/unit.cpp"],
            True, ["-std=c++17", "-DDOCTEST_CONFIG_SUPER_FAST_ASSERTS",
                   "-DJSON_TEST_KEEP_MACROS", "-DJSON_TEST_USING_MULTIPLE_HEADERS=0",
                   "-Wno-deprecated", "-Wno-float-equal", f"-I{cx}/doctest",
                   f"-I{cx}/single_include", f"-I{cx}/src"], [], [],
            r"^\s+CHECK\(.* == (\d+)\);$", "json_unit"),
        # zstd amalgamated by its own script; the program round-trips the pristine
        # amalgamation's text (the TU's copy is what the edit changes)
        "zstd": Workload(
            "zstd", "bench/get-zstd.sh", zs, "zstd.c", ["roundtrip.c"], False,
            [f"-I{zs}"], [], [str(zs / "zstd.c")], r"^\s+return ([1-9]\d*);$", "roundtrip"),
        # googletest's own unit test (bench/cxx_parity.py's googletest workload, its flags)
        "gtest": Workload(
            "gtest", "bench/get-googletest.sh", gt, "googletest/test/gtest_unittest.cc",
            ["googletest/src/gtest-all.cc", "googletest/src/gtest_main.cc"], True,
            ["-Wall", "-Wshadow", "-Wconversion", "-fexceptions", "-pthread",
             "-DGTEST_HAS_PTHREAD=1", f"-I{gt}/googletest/include", f"-I{gt}/googletest"],
            ["-pthread"],
            # death tests fork and the thread tests spin: their counts change run to run
            ["--gtest_print_time=0",
             "--gtest_filter=-*DeathTest*:TestResultPropertyTest.GetTestProperty"
             ":*WithThreads*"],
            r"^\s+EXPECT_EQ\(([1-9]\d*), .*\);$", "gtest_unittest"),
        # a real unity build (CMake's unity source of RocksDB's library, its Release flags)
        "rocksdb": Workload(
            "rocksdb", "bench/get-rocksdb.sh", rd, "rocksdb_unity.cc",
            ["tree/util/crc32c.cc", "kvbench.cc"], True, flag_file(rd / "flags.txt"),
            ["-pthread"], [str(work / "rocksdb" / "kvdb")], None, "kvbench",
            other_flags={"tree/util/crc32c.cc": flag_file(rd / "crc32c.txt")}),
    }


def synthetic(work):
    """--quick: bench/gen_synthetic.py's project, small (a few seconds of builds)."""
    d = work / "synthetic-src"
    gen_synthetic.generate(d, 1, 6000)
    return Workload("synthetic", "bench/gen_synthetic.py", d, "big.c",
                    ["main.c", "mod_0.c", "mod_1.c", "mod_2.c"], False, [], [], [],
                    r"^\s+\w+ \+= \w+ \* (0x[0-9a-f]+)u;$", "synth")


@dataclasses.dataclass
class Tools:
    clang: str
    clangxx: str
    llvm_bin: pathlib.Path
    mtpc_compile: str
    mtpc_link: str
    mtpc_split: str


def find_tools(build):
    """The MTPC tools of `build` and the clang/lld of the LLVM it was built with."""
    ver = lib.llvm_version(build)
    llvm_bin = pathlib.Path(os.environ.get("MTPC_LLVM_BIN") or f"/usr/lib/llvm-{ver}/bin")
    tools = {t: lib.mtpc_tool(t, build) for t in ("mtpc-compile", "mtpc-link", "mtpc-split")}
    missing = [t for t, p in tools.items() if not p]
    if missing:
        raise lib.BenchError(f"{', '.join(missing)} not built in {build} (scripts/build.sh)")
    for t in ("clang", "clang++", "ld.lld", "llvm-size"):
        if not (llvm_bin / t).exists():
            raise lib.BenchError(f"{llvm_bin / t} missing (scripts/install-deps.sh)")
    for t in ("taskset", "ninja"):
        if not shutil.which(t):
            raise lib.BenchError(f"{t} not found")
    return Tools(str(llvm_bin / "clang"), str(llvm_bin / "clang++"), llvm_bin,
                 tools["mtpc-compile"], tools["mtpc-link"], tools["mtpc-split"])


def log(msg):
    print(msg, flush=True)


def fresh(*paths):
    """Delete outputs, inner build directories (<path>.mtpc) and plan caches."""
    for p in paths:
        p = pathlib.Path(p)
        shutil.rmtree(str(p) + ".mtpc", ignore_errors=True)
        if p.is_dir():
            shutil.rmtree(p)
        else:
            p.unlink(missing_ok=True)


# ---------------------------------------------------------------- measuring

def env_for(work, pinned):
    """MTPC's job budget in a pool of our own: the machine-wide pool is shared with the
    other benchmarks running here, whose tokens would make ours wait."""
    env = dict(os.environ)
    for k in ("MAKEFLAGS", "MFLAGS", "MTPC_JOB_SLOTS", "MTPC_JOBS_OFF", "MTPC_CACHE"):
        env.pop(k, None)
    env["MTPC_JOBS_DIR"] = str(work / "jobs")
    (work / "jobs").mkdir(parents=True, exist_ok=True)
    if pinned:
        env["MTPC_JOB_SLOTS"] = "1"
    return env


def read(p):
    try:
        return pathlib.Path(p).read_text(errors="replace")
    except OSError:
        return ""


def inner_edges(inner, before, timeline):
    """The edges an inner build ran in this run (its .ninja_log lines that were not there
    before: robust to Ninja recompacting the log), each with its kind (the rule of its
    output in build.ninja), seconds (CPU from the timeline, else duration) and the edges
    it waited for (ninja -t graph, dyndep files included)."""
    old = set(before.splitlines())
    text = "\n".join(ln for ln in read(inner / ".ninja_log").splitlines() if ln not in old)
    edges = predict.parse_ninja_log(text)
    rules = link_costs.build_rules(read(inner / "build.ninja"))
    deps = predict.edge_dependencies(edges, predict.ninja_graph_inputs(inner))
    off = link_costs.log_offset_ns(text) if timeline else None
    res = []
    for e in edges:
        cpu = (timeline.cpu_between(off + e.start_ms * 1_000_000, off + e.end_ms * 1_000_000)
               if timeline else None)
        res.append({"name": e.name, "kind": next((rules[o] for o in e.outputs if o in rules),
                                                  "other"),
                    "duration": e.seconds, "cpu": cpu,
                    "seconds": e.seconds if cpu is None else cpu,
                    "deps": sorted(deps[e.name])})
    return res


def run(cmd, env, cpu=None, inner=None, tag="run"):
    """One process: pinned to `cpu` (None: not pinned); with `inner` (the inner build
    directory it runs) also its edges, their CPU from a cgroup timeline when pinned."""
    cmd = [str(c) for c in cmd]
    before = read(inner / ".ninja_log") if inner else ""
    timeline = None
    if inner and cpu is not None:
        m, timeline = link_costs.run_pinned(cmd, env, cpu, f"compile-bench-{os.getpid()}")
    else:
        if cpu is not None:
            cmd = ["taskset", "-c", str(cpu), *cmd]
        m = lib.run_measured(cmd, env=env, check=False, new_session=True)
    if m.returncode:
        raise lib.BenchError(f"{tag} failed ({m.returncode}): {' '.join(cmd)}\n"
                             f"{(m.stdout + m.stderr)[-3000:]}")
    r = {"cmd": cmd, "wall": m.wall, "cpu": m.cpu,
         # mtpc-compile/mtpc-link summaries and any warning (a fallback is one)
         "said": [ln for ln in (m.stdout + m.stderr).splitlines()
                  if ln.startswith(("mtpc-compile:", "mtpc-link:")) or "warning" in ln]}
    if inner:
        r["edges"] = inner_edges(inner, before, timeline)
        r["edge_seconds"] = "cpu" if timeline else "duration"
        if timeline:
            r["cgroup_cpu"] = timeline.total()
    return r


SPLIT_STATS = re.compile(r"serial ([\d.]+) s \+ emit [\d.]+ s wall on \d+ threads?; "
                         r"emit CPU by partition \(s\): ([\d. ]+)")


def split_stats(text):
    """{'serial': s, 'emit': [s per partition]} from mtpc-split --stats, or None."""
    mt = SPLIT_STATS.search(text)
    if not mt:
        return None
    return {"serial": float(mt.group(1)), "emit": [float(x) for x in mt.group(2).split()]}


def link_split_commands(inner):
    """{split edge's output: mtpc-split's words} for the split edges of the inner link
    build in `inner`, from its build.ninja: the `--split-step` command's options, as
    ninja-gen/steps/split.c turns them into mtpc-split's (the link's module imported
    first), without the plan cache (a --stats run must not change the cache the measured
    link used)."""
    res, name = {}, None
    for ln in read(inner / "build.ninja").splitlines():
        if ln.startswith("build ") and ": split " in ln:
            name = ln[len("build "):].split()[0]
            continue
        if name and ln.strip().startswith("cmd = "):
            w = shlex.split(ln.strip()[len("cmd = "):])
            opt = {w[i]: w[i + 1] for i in range(len(w) - 1) if w[i].startswith("--")}
            cmd = [opt["--tool"], opt["--module"], "--partitions", opt["--kmax"], "--no-cache"]
            if "--index" in opt:
                cmd += ["--thinlto-index", str(inner / opt["--index"]), "--relocation-model",
                        opt.get("--reloc", "pic"), "--placeholder-checksums", "--virtual-lines"]
            if "--min-cost" in opt:
                cmd += ["--min-cost", opt["--min-cost"]]
            cmd += [w[i + 1] for i in range(len(w) - 1) if w[i] == "--split-arg"]
            res[name] = cmd
        name = None if not ln.startswith(" ") else name
    return res


def measure_link_split_stats(inner, pin, cpu):
    """{split edge: split_stats} of a finished inner link build: each split command run
    again, pinned, with --stats, into a scratch directory."""
    res = {}
    for name, cmd in link_split_commands(inner).items():
        with tempfile.TemporaryDirectory(prefix="mtpc-split-stats-") as d:
            st = lib.run_measured(["taskset", "-c", str(cpu), *cmd, "--stats", "-o", d],
                                  env=pin, check=True, cwd=str(inner))
        res[name] = split_stats(st.stdout + st.stderr)
    return res


def kinds(edges):
    """{kind: {'count', 'seconds', 'max'}} of inner edges."""
    res = {}
    for e in edges:
        k = res.setdefault(e["kind"], {"count": 0, "seconds": 0.0, "max": 0.0})
        k["count"] += 1
        k["seconds"] += e["seconds"]
        k["max"] = max(k["max"], e["seconds"])
    return res


def stats(values):
    values = list(values)
    return {"values": values, "median": lib.median(values), "min": min(values, default=0),
            "max": max(values, default=0)}


# ---------------------------------------------------------------- prediction

def own(r, *inside):
    """A tool's own CPU: its whole process tree's minus its inner edges' (and `inside`:
    the frontend, which mtpc-compile runs itself). Parsing, writing the graph, starting
    Ninja, mtpc-compile's cost estimate: serial, before the inner build's edges."""
    return max(0.0, r["cpu"] - sum(e["seconds"] for e in r["edges"]) - sum(inside))


def add_edge(durs, deps, prefix, e, first, ss):
    """One inner edge as the job `prefix:<output>` (waiting for `first` when it has no
    inner dependency). A split edge with its `mtpc-split --stats` proportions `ss` counts
    as its serial part, then one emission job per partition (mtpc-split emits in threads),
    then the edge itself as a zero-length job its dependents wait for; the same CPU."""
    n = f"{prefix}:{e['name']}"
    durs[n] = e["seconds"]
    deps[n] = {f"{prefix}:{d}" for d in e["deps"]} or {first}
    if e.get("kind") == "split" and ss and ss["emit"]:
        whole = ss["serial"] + sum(ss["emit"])
        durs[n + ":serial"] = e["seconds"] * ss["serial"] / whole
        deps[n + ":serial"] = deps[n]
        for i, x in enumerate(ss["emit"]):
            durs[f"{n}:emit{i}"] = e["seconds"] * x / whole
            deps[f"{n}:emit{i}"] = {n + ":serial"}
        durs[n] = 0.0
        deps[n] = {f"{n}:emit{i}" for i in range(len(ss["emit"]))}


def add_inner(durs, deps, prefix, r, after, own_s):
    """An inner build's edges as jobs `prefix:<output>`, behind `prefix:own` (the tool's
    own time, own_s), which waits for `after`; its split edges with the proportions of
    r["split_stats"] (by edge name), when measured."""
    durs[f"{prefix}:own"], deps[f"{prefix}:own"] = own_s, set(after)
    for e in r["edges"]:
        add_edge(durs, deps, prefix, e, f"{prefix}:own", r.get("split_stats", {}).get(e["name"]))


CONFIGS = {"a": "(a) plain ThinLTO", "b": "(b) backend split",
           "c": "(c) compile + backend split",
           "c0": "(c') (c) without mtpc-compile's own time"}


def graphs(m):
    """The job graphs (durations, deps) of section 2 from one workload's pinned
    measurements: a compile side, then a link side waiting for all of it. Every job is a
    process's CPU or an inner edge's, so a graph's work is the whole processes' CPU."""
    res = {}
    mc, L = m["mtpc_compile"], m["links"]
    for cfg in CONFIGS:
        durs = {f"other:{o}": s for o, s in m["others"].items()}
        deps = {n: set() for n in durs}
        if cfg.startswith("c"):
            # mtpc-compile's own time comes first (its cost estimate precedes the frontend)
            durs["compile:own"] = own(mc, m["frontend"]["cpu"]) if cfg == "c" else 0.0
            deps["compile:own"] = set()
            durs["compile:frontend"] = m["frontend"]["cpu"]
            deps["compile:frontend"] = {"compile:own"}
            for e in mc["edges"]:
                add_edge(durs, deps, "compile", e, "compile:frontend", m.get("split_stats"))
        else:
            durs["compile:clang"], deps["compile:clang"] = m["plain_compile"]["cpu"], set()
        compile_side = set(durs)
        if cfg == "a":
            durs["link:lld"], deps["link:lld"] = L["i"]["cpu"], compile_side
        else:
            r = L["b" if cfg == "b" else "iii"]
            add_inner(durs, deps, "link", r, compile_side, own(r))
        res[cfg] = (durs, deps)
    return res


def predictions(m):
    res = {}
    for cfg, (durs, deps) in graphs(m).items():
        cp, path = predict.critical_path(durs, deps)
        res[cfg] = {"work": sum(durs.values()), "critical_path": cp,
                    "critical_path_jobs": path, "jobs": len(durs),
                    "compile_work": sum(s for j, s in durs.items()
                                        if j.startswith("compile:")),
                    "compile_own": durs.get("compile:own", 0.0),
                    # str keys: the same in memory and in the JSON (--from-json)
                    "makespan": {str(n): predict.list_schedule(durs, deps, n)[0]
                                 for n in CORES}}
    return res


# ---------------------------------------------------------------- one workload

def find_edit(text, pattern, nth=0):
    """(line index, match) of the nth line matching the pattern, counting from the middle
    of the file on (deterministic: the same source gives the same function)."""
    lines = text.split("\n")
    rx = re.compile(pattern)
    for i in list(range(len(lines) // 2, len(lines))) + list(range(len(lines) // 2)):
        mt = rx.match(lines[i])
        if mt:
            if nth == 0:
                return i, mt
            nth -= 1
    raise lib.BenchError(f"no (more) lines match {pattern!r}: cannot edit a constant")


def edited(text, pattern, bump, nth=0):
    """The text with the edit's constant increased by bump (in its own base)."""
    lines = text.split("\n")
    i, mt = find_edit(text, pattern, nth)
    lit = mt.group(1)
    v = int(lit, 0) + bump
    new = hex(v) if lit.lower().startswith("0x") else str(v)
    lines[i] = lines[i][:mt.start(1)] + new + lines[i][mt.end(1):]
    return "\n".join(lines), i + 1


def prepare_workdir(w, wd):
    """Fresh obj/, wall/ and prog/ folders in wd, and the TU's copy wd/src/<name> that the
    edit changes (w.patch applied, each exactly once): (original path, copy, its text). The
    original's folder stays on the include path (the caller adds it)."""
    wd.mkdir(parents=True, exist_ok=True)
    for sub in ("obj", "wall", "prog"):
        shutil.rmtree(wd / sub, ignore_errors=True)
        (wd / sub).mkdir()
    orig = w.dir / w.tu
    src = wd / "src" / orig.name
    src.parent.mkdir(exist_ok=True)
    text = orig.read_text(errors="surrogateescape")
    for old, new in w.patch:
        if text.count(old) != 1:
            raise lib.BenchError(f"{orig}: expected one {old!r} to patch")
        text = text.replace(old, new)
    src.write_text(text, errors="surrogateescape")
    return orig, src, text


def first_edit(w, text, src, frontend, ref):
    """The first candidate edit of w.edit_re (one constant + 1) whose frontend bitcode
    differs from ref: a line the preprocessor drops, or a function never emitted, would
    change nothing. frontend() compiles src and returns its bitcode. Leaves the edit in src;
    returns (edited text, line, candidate)."""
    for nth in range(10):
        new, line = edited(text, w.edit_re, 1, nth)
        src.write_text(new, errors="surrogateescape")
        if frontend() != ref:
            return new, line, nth
    raise lib.BenchError(f"none of 10 edits of {w.edit_re!r} changes the bitcode")


def bench_workload(w, t, args, wd):
    P, cpu, cores = args.partitions, args.cpu, args.cores
    orig, src, text = prepare_workdir(w, wd)
    cflags = [*w.cflags, f"-I{orig.parent}"]
    drv = t.clangxx if w.cxx else t.clang
    pin, unpin = env_for(wd, True), env_for(wd, False)
    O = wd / "obj"

    def cc(source, obj, *extra):
        return [drv, "-O2", "-flto=thin", *cflags, "-c", source, "-o", obj, *extra]

    def mcc(obj, jobs, cache):
        return [t.mtpc_compile, "--jobs", jobs, "--partitions", P, "--cost-threshold", 0,
                "--cache", cache, "--quiet",
                *(w for a in args.compile_split_arg for w in ("--split-arg", a)),
                "--", *cc(src, obj)]

    def link(objs, out, jobs):
        return [drv, "-O2", "-flto=thin", "-fuse-ld=lld", f"-Wl,--thinlto-jobs={jobs}",
                *objs, *w.ldflags, "-o", out]

    def mlink(objs, out, jobs, cache):
        return [t.mtpc_link, "--threshold", 0, "--partitions", P, "--jobs", jobs,
                "--cache", cache, "--llvm-bin", t.llvm_bin, "--quiet", "--", drv, "-O2",
                "-flto=thin", "-fuse-ld=lld", *objs, *w.ldflags, "-o", out]

    m = {"workload": w.name, "tu": w.tu, "source": str(orig), "partitions": P,
         "compile_split_args": args.compile_split_arg,
         "cpu_pinned": cpu, "cores": cores, "program": [w.program, *w.args]}
    # 1. pinned, one after the other
    log(f"{w.name}: pinned to cpu{cpu}: compiles")
    others = []
    m["others"] = {}
    for i, o in enumerate(w.others):
        obj = O / f"other{i}_{pathlib.Path(o).stem}.o"
        m["others"][o] = run(cc(w.dir / o, obj, *w.other_flags.get(o, [])), pin, cpu,
                             tag=f"compile {o}")["cpu"]
        others.append(obj)
    m["plain_compile"] = run(cc(src, O / "plain.o"), pin, cpu, tag="plain compile")
    m["frontend"] = run(cc(src, O / "front.bc", "-Xclang", "-disable-llvm-passes"), pin, cpu,
                        tag="frontend")
    mc = m["mtpc_compile"] = run(mcc(O / "mtpc.o", 1, O / "compile-plans.sqlite"), pin, cpu,
                                 inner=O / "mtpc.o.mtpc", tag="mtpc-compile")
    mt = re.search(r"(\d+) partitions?", " ".join(mc["said"]))
    mc["split_into"] = int(mt.group(1)) if mt else 0
    log(f"  plain {m['plain_compile']['cpu']:.2f} s, frontend {m['frontend']['cpu']:.2f} s, "
        f"mtpc-compile {mc['cpu']:.2f} s ({mc['split_into']} partitions)")
    for s in mc["said"]:
        if "warning" in s:
            log(f"  mtpc-compile said: {s}")
    # the split's serial part and its partitions' emission (which mtpc-split runs in
    # threads, one per core): proportions from a --stats run of the split step's own
    # command on the frontend's module (for section 2)
    st = lib.run_measured(["taskset", "-c", str(cpu), t.mtpc_split, "--pre-link", "--no-ipo",
                           "--no-cache", "--stats", "-n", str(P), str(O / "front.bc"), "-o",
                           str(O / "split-stats")], env=pin, check=True)
    m["split_stats"] = split_stats(st.stdout + st.stderr)
    # 1b. the compile-side work again, pinned, interleaved pairs (plain, mtpc-compile from
    # nothing: no object, inner directory or plan cache): one pinned run of each moves by
    # 10-20% with the moment on this VM, pairs run close together much less
    pairs = []
    for r in range(args.pinned_runs):
        log(f"{w.name}: pinned pair {r + 1}/{args.pinned_runs}")
        WR = O / "work-runs"
        fresh(WR / "plain.o", WR / "mtpc.o", WR / "plans.sqlite")
        WR.mkdir(exist_ok=True)
        a = run(cc(src, WR / "plain.o"), pin, cpu, tag="plain compile (pair)")["cpu"]
        b = run(mcc(WR / "mtpc.o", 1, WR / "plans.sqlite"), pin, cpu,
                tag="mtpc-compile (pair)")["cpu"]
        pairs.append({"plain": a, "mtpc": b})
    m["work_pairs"] = pairs
    log(f"{w.name}: pinned links")
    P_ = wd / "prog"
    L = m["links"] = {}
    L["i"] = run(link([O / "plain.o", *others], P_ / "i", 1), pin, cpu, tag="plain link (i)")
    L["ii"] = run(link([O / "mtpc.o", *others], P_ / "ii", 1), pin, cpu, tag="plain link (ii)")
    L["b"] = run(mlink([O / "plain.o", *others], P_ / "b", 1, O / "link-b.sqlite"), pin, cpu,
                 inner=P_ / "b.mtpc", tag="mtpc-link (b)")
    L["iii"] = run(mlink([O / "mtpc.o", *others], P_ / "iii", 1, O / "link-iii.sqlite"), pin,
                   cpu, inner=P_ / "iii.mtpc", tag="mtpc-link (iii)")
    for k in ("b", "iii"):
        for s in L[k]["said"]:
            log(f"  ({k}) {s}")
        # the link's splits emit in threads too: their proportions, for section 2
        L[k]["split_stats"] = measure_link_split_stats(P_ / f"{k}.mtpc", pin, cpu)
    # 2. predictions from those edges
    m["predicted"] = predictions(m)
    # 5. quality (before the edit, which changes the source)
    log(f"{w.name}: quality")
    m["quality"] = quality(w, t, P_, wd, args.callgrind)
    # what the thin link imports into and from the TU's module, plain compile's object
    # against mtpc-compile's (unmeasured links, LLVM's -print-imports)
    m["imports"] = {}
    for k, obj in (("i", O / "plain.o"), ("ii", O / "mtpc.o")):
        r = lib.run_measured(link([obj, *others], P_ / f"imports-{k}", cores) +
                             ["-Wl,-mllvm,-print-imports"], env=unpin, check=True)
        m["imports"][k] = count_imports(r.stdout + r.stderr, pathlib.Path(src).name)
    # 3. wall on all cores, interleaved
    W = wd / "wall"
    walls = {"plain": {"compile": [], "path": []}, "mtpc": {"compile": [], "path": []},
             "mtpc_kept": {"compile": []}}
    for r in range(args.runs):
        log(f"{w.name}: wall run {r + 1}/{args.runs} on {cores} cores")
        fresh(W / "plain.o", W / "plain")
        a = run(cc(src, W / "plain.o"), unpin, tag="plain compile (wall)")
        b = run(link([W / "plain.o", *others], W / "plain", cores), unpin, tag="plain link")
        walls["plain"]["compile"].append(a["wall"])
        walls["plain"]["path"].append(a["wall"] + b["wall"])
        fresh(W / "mtpc.o", W / "mtpc", W / "c.sqlite", W / "l.sqlite")
        a = run(mcc(W / "mtpc.o", cores, W / "c.sqlite"), unpin, tag="mtpc-compile (wall)")
        b = run(mlink([W / "mtpc.o", *others], W / "mtpc", cores, W / "l.sqlite"), unpin,
                tag="mtpc-link (wall)")
        walls["mtpc"]["compile"].append(a["wall"])
        walls["mtpc"]["path"].append(a["wall"] + b["wall"])
        # again with the object kept (its inner build and plan cache deleted): mtpc-compile
        # then reads the cost from the object's summary instead of estimating it from the
        # source's text, as in a rebuild after a clean of its inner directory
        fresh(W / "c.sqlite")
        shutil.rmtree(W / "mtpc.o.mtpc")
        a = run(mcc(W / "mtpc.o", cores, W / "c.sqlite"), unpin, tag="mtpc-compile (kept)")
        walls["mtpc_kept"]["compile"].append(a["wall"])
    m["wall"] = {c: {k: stats(v) for k, v in d.items()} for c, d in walls.items()}
    # 4. edit -> object: pinned once, on the pinned build's inner directory; then wall
    # on the last wall run's
    if w.edit_re is None:
        m["edit"] = {"skipped": "no function of the TU's own to edit (a unity source)"}
        return m
    try:
        def frontend():
            run(cc(src, O / "edit-front.bc", "-Xclang", "-disable-llvm-passes"), unpin,
                tag="frontend (edit check)")
            return (O / "edit-front.bc").read_bytes()
        new, line, nth = first_edit(w, text, src, frontend, (O / "front.bc").read_bytes())
        m["edit"] = {"line": line, "candidate": nth,
                     "text": new.split("\n")[line - 1].strip()}
        log(f"{w.name}: edit line {line}: {m['edit']['text']}")
        m["edit"]["plain"] = run(cc(src, O / "edit-plain.o"), pin, cpu, tag="plain (edit)")
        e = m["edit"]["mtpc"] = run(mcc(O / "mtpc.o", 1, O / "compile-plans.sqlite"), pin,
                                    cpu, inner=O / "mtpc.o.mtpc", tag="mtpc-compile (edit)")
        e["slots_run"] = kinds(e["edges"]).get("slot", {}).get("count", 0)
        ew = {"plain": [], "mtpc": [], "slots_run": []}
        for r in range(args.runs):
            src.write_text(edited(text, w.edit_re, 2 + r, nth)[0], errors="surrogateescape")
            ew["plain"].append(run(cc(src, W / "plain.o"), unpin, tag="plain (edit)")["wall"])
            x = run(mcc(W / "mtpc.o", cores, W / "c.sqlite"), unpin, inner=W / "mtpc.o.mtpc",
                    tag="mtpc-compile (edit, wall)")
            ew["mtpc"].append(x["wall"])
            ew["slots_run"].append(kinds(x["edges"]).get("slot", {}).get("count", 0))
        m["edit"]["wall"] = {"plain": stats(ew["plain"]), "mtpc": stats(ew["mtpc"]),
                             "slots_run": ew["slots_run"]}
    finally:
        src.write_text(text, errors="surrogateescape")
    return m


IMPORT_RE = re.compile(r"^(\S+): Import (\S+) from (\S+)$", re.M)


def count_imports(text, tu):
    """{'into': functions the thin link imported into the module of source file `tu`,
    'from': functions it imported from that module into the others} (basenames compared),
    from LLVM's -print-imports lines '<module>: Import <function> from <module>'."""
    res = {"into": 0, "from": 0}
    for dst, _, src in IMPORT_RE.findall(text):
        res["into"] += pathlib.PurePath(dst).name == tu
        res["from"] += pathlib.PurePath(src).name == tu
    return res


def program_figures(w, t, exe, wd, use_callgrind, sized=None, tag=""):
    """{'text': .text bytes of sized (default exe), 'exit', 'output': the lines of the
    program's output the workload keeps, and unless off 'instructions' (callgrind)} of one
    build of the workload's program, run in wd. In an object, .text is every section named
    .text or .text.* (C++ inline functions' COMDAT sections, a split's folded statics;
    before 2026-11-29 only the one named .text was counted)."""
    out = lib.run_measured([t.llvm_bin / "llvm-size", "-A", sized or exe]).stdout
    text = sum(int(ln.split()[1]) for ln in out.splitlines()
               if ln.split()[:1] and (ln.split()[0] == ".text" or ln.startswith(".text.")))
    r = lib.run_measured([exe, *w.args], cwd=wd, check=False)
    lines = r.stdout.splitlines()
    if w.keep:
        lines = [ln for ln in lines if re.search(w.keep, ln)]
    res = {"text": text, "exit": r.returncode, "output": "\n".join(lines)}
    if use_callgrind:
        log(f"  callgrind ({tag}) {w.program} {' '.join(w.args)}")
        res["instructions"], _ = callgrind.instructions([exe, *w.args], cwd=wd)
    return res


def quality(w, t, progs, wd, use_callgrind):
    """.text, program output and (unless off) callgrind instructions of the four builds."""
    if w.name == "duktape":
        pathlib.Path(w.args[0]).write_text(JS_WORKLOAD)
    res = {k: program_figures(w, t, progs / k, wd, use_callgrind, tag=k)
           for k in ("i", "b", "ii", "iii")}
    for k in res:
        res[k]["same_output"] = (res[k]["output"] == res["i"]["output"] and
                                 res[k]["exit"] == res["i"]["exit"])
        res[k]["text_ratio"] = lib.ratio(res[k]["text"], res["i"]["text"])
        if "instructions" in res[k]:
            res[k]["instr_ratio"] = lib.ratio(res[k]["instructions"],
                                              res["i"]["instructions"])
    return res


# ---------------------------------------------------------------- report

def f2(x):
    return "n/a" if x != x else f"{x:.2f}"


def spread(s):
    return f"{f2(s['median'])} [{f2(s['min'])}–{f2(s['max'])}]"


def report_workload(m):
    L, p, q = m["links"], m["predicted"], m["quality"]
    mc = m["mtpc_compile"]
    unit = "CPU s" if mc.get("edge_seconds") == "cpu" else "s (durations: no cgroup)"
    ck, lb, lc = kinds(mc["edges"]), kinds(L["b"]["edges"]), kinds(L["iii"]["edges"])
    out = [f"## {m['workload']}: {m['tu']} ({mc['split_into']} partitions of at most "
           f"{m['partitions']}; program {' '.join(m['program'])})", ""]
    if m.get("compile_split_args"):
        out += [f"mtpc-compile with --split-arg {' --split-arg '.join(m['compile_split_args'])}",
                ""]
    out.append(f"Pinned to cpu{m['cpu_pinned']}, one edge after another ({unit}):")
    out.append("")
    out.append("| step | (a) plain ThinLTO | (b) backend split | (c) compile + backend split |")
    out.append("| --- | ---: | ---: | ---: |")
    oth = sum(m["others"].values())
    out.append(f"| other sources ({len(m['others'])}) | {f2(oth)} | {f2(oth)} | {f2(oth)} |")
    pc = f2(m["plain_compile"]["cpu"])
    out.append(f"| compile: clang -c (plain) | {pc} | {pc} | |")
    out.append(f"| compile: mtpc-compile's own (outside frontend and edges) | | | "
               f"{f2(p['c']['compile_own'])} |")
    out.append(f"| compile: frontend (passes off) | | | {f2(m['frontend']['cpu'])} |")

    def row(label, kind, cols):
        """One kind of edge; cols: {column: kinds of that config's edges}."""
        cells = ["", "", ""]
        for col, ks in cols.items():
            k = ks.get(kind)
            if k:
                cells[col] = f2(k["seconds"]) + (
                    f" ({k['count']}, max {f2(k['max'])})" if kind == "slot" else
                    f" ({k['count']})" if k["count"] > 1 else "")
        if any(cells):
            out.append(f"| {label} | {' | '.join(cells)} |")

    for kind, label in (("split", "split"), ("slot", "slots (n, max)"), ("join", "join")):
        row(f"compile: {label}", kind, {2: ck})
    out.append(f"| link: lld, thin link + backends + final link | {f2(L['i']['cpu'])} | | |")
    for kind, label in (("thinlink", "thin link"), ("split", "splits (n)"),
                        ("slot", "slots (n, max)"), ("merge", "merges (n)"),
                        ("backend", "unsplit backends"), ("link", "final link")):
        row(f"link: {label}", kind, {1: lb, 2: lc})
    out.append(f"| link: mtpc-link's own (outside its edges) | | {f2(own(L['b']))} | "
               f"{f2(own(L['iii']))} |")
    out.append(f"| **total work** | {f2(p['a']['work'])} | {f2(p['b']['work'])} | "
               f"{f2(p['c']['work'])} |")
    out.append(f"| total / (a) | 1.000 | {lib.ratio(p['b']['work'], p['a']['work']):.3f} | "
               f"{lib.ratio(p['c']['work'], p['a']['work']):.3f} |")
    cw, cwe = compile_work(m)
    pairs = m.get("work_pairs")
    how = (f"ratio of the medians of {len(pairs)} interleaved pinned pairs (plain "
           f"{spread(stats(x['plain'] for x in pairs))} s, mtpc-compile "
           f"{spread(stats(x['mtpc'] for x in pairs))} s; each pair "
           f"{', '.join(format(lib.ratio(x['mtpc'], x['plain']), '.3f') for x in pairs)})"
           if pairs else "one pinned run of each, the table's")
    out += ["", f"Compile-side total work, mtpc-compile / plain compile: whole process "
                f"{lib.fmt_r(cw, 1.10)} ({how}); frontend + edges only, the table's run, "
                f"{cwe:.3f}", ""]
    out.append("PREDICTED critical path (list scheduling of the measured edges; s):")
    ss = m.get("split_stats")
    if ss:
        out.append(f"(mtpc-split emits its partitions in threads, one per core: each split "
                   f"edge counts as a serial part and one parallel emission per partition, "
                   f"in the proportions of a `mtpc-split --stats` run of the same split; "
                   f"the compile's: serial {ss['serial']:.2f} s, emission "
                   f"{sum(ss['emit']):.2f} s in all.)")
        for k in ("b", "iii"):
            for name, ls in (m["links"][k].get("split_stats") or {}).items():
                if ls:
                    out.append(f"({k}) link's {name}: serial {ls['serial']:.2f} s, emission "
                               f"{sum(ls['emit']):.2f} s.")
    out.append("")
    out.append("| cores | (a) plain | (b) backend split | (c) compile + backend split | "
               "(c') (c) w/o mtpc-compile's own | a/b | a/c | a/c' | b/c |")
    out.append("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")

    def prow(label, a, b, c, c0):
        out.append(f"| {label} | {f2(a)} | {f2(b)} | {f2(c)} | {f2(c0)} | "
                   f"{lib.ratio(a, b):.2f} | **{lib.ratio(a, c):.2f}** | "
                   f"{lib.ratio(a, c0):.2f} | {lib.ratio(b, c):.2f} |")

    for n in CORES:
        prow(n, *(p[x]["makespan"][str(n)] for x in CONFIGS))
    prow("∞ (critical path)", *(p[x]["critical_path"] for x in CONFIGS))
    out.append("")
    path = " → ".join(short(j) for j in p["c"]["critical_path_jobs"])
    out.append(f"Critical path of (c): {path}")
    out.append("")
    wl = m["wall"]
    n = len(wl["plain"]["compile"]["values"])
    out.append(f"Wall on {m['cores']} cores, median [min–max] of {n} interleaved runs (s):")
    out.append("")
    out.append("| | plain | MTPC | MTPC / plain |")
    out.append("| --- | ---: | ---: | ---: |")
    for k, label in (("compile", "compile"), ("path", "compile + link")):
        out.append(f"| {label} | {spread(wl['plain'][k])} | {spread(wl['mtpc'][k])} | "
                   f"{lib.ratio(wl['mtpc'][k]['median'], wl['plain'][k]['median']):.3f} |")
    if "mtpc_kept" in wl:
        k, pl = wl["mtpc_kept"]["compile"], wl["plain"]["compile"]
        out.append(f"| compile, the previous object kept (cost from its summary) | | "
                   f"{spread(k)} | {lib.ratio(k['median'], pl['median']):.3f} |")
    e = m.get("edit")
    if e and "skipped" in e:
        out += ["", f"Edit -> object: not measured: {e['skipped']}"]
    if e and "mtpc" in e:
        out += ["", f"Edit -> object (line {e['line']}: `{e['text'][:70]}`):", "",
                "| | plain | mtpc-compile | MTPC / plain |", "| --- | ---: | ---: | ---: |",
                f"| pinned CPU, s | {f2(e['plain']['cpu'])} | {f2(e['mtpc']['cpu'])} | "
                f"{lib.ratio(e['mtpc']['cpu'], e['plain']['cpu']):.3f} |",
                f"| wall on {m['cores']} cores, s | {spread(e['wall']['plain'])} | "
                f"{spread(e['wall']['mtpc'])} | "
                f"{lib.ratio(e['wall']['mtpc']['median'], e['wall']['plain']['median']):.3f} |",
                f"| slot edges that ran | | {e['mtpc']['slots_run']} of {mc['split_into']} "
                f"(wall runs: {', '.join(map(str, e['wall']['slots_run']))}) | |"]
    out += ["", "Quality of the program (ratios to (i)):", "",
            "| build | instructions | ratio | .text bytes | ratio | same output |",
            "| --- | ---: | ---: | ---: | ---: | --- |"]
    names = {"i": "(i) plain compile + plain link", "b": "(b) plain compile + mtpc-link",
             "ii": "(ii) mtpc-compile + plain link", "iii": "(iii) mtpc-compile + mtpc-link"}
    for k, label in names.items():
        r = q[k]
        ins = r.get("instructions")
        ic = f"{ins} | {r['instr_ratio']:.4f}" if ins else "n/a | n/a"
        out.append(f"| {label} | {ic} | {r['text']} | {r['text_ratio']:.4f} | "
                   f"{'yes' if r['same_output'] else 'NO'} |")
    im = m.get("imports")
    if im:
        out += ["", f"The thin link's imports (LLVM's -print-imports), plain compile's object "
                    f"(i) / mtpc-compile's (ii): functions into {m['tu']}'s module "
                    f"{im['i']['into']} / {im['ii']['into']}; from it into the other modules "
                    f"{im['i']['from']} / {im['ii']['from']}"]
    said = [s for s in mc["said"] + L["b"]["said"] + L["iii"]["said"] if "warning" in s]
    if said:
        out += ["", "Warnings: " + "; ".join(said[:5])]
    return "\n".join(out)


def compile_work(m):
    """mtpc-compile's CPU / the plain compile's: (whole process, frontend + edges only),
    from section 1's single pinned run of each; the whole process's ratio is the ratio of
    the medians of the interleaved pairs instead when --pinned-runs measured some."""
    mc, plain = m["mtpc_compile"], m["plain_compile"]["cpu"]
    edges = m["frontend"]["cpu"] + sum(e["seconds"] for e in mc["edges"])
    pairs = m.get("work_pairs")
    whole = (lib.ratio(lib.median([x["mtpc"] for x in pairs]),
                       lib.median([x["plain"] for x in pairs])) if pairs
             else lib.ratio(mc["cpu"], plain))
    return whole, lib.ratio(edges, plain)


def short(job):
    """'compile:mod/front.bc-1234/p3.o' -> 'compile:p3.o'."""
    side, _, name = job.partition(":")
    return f"{side}:{pathlib.PurePath(name).name}"


def summary(results):
    out = ["## Summary", "",
           "| workload | a/b at 16 (predicted) | a/c at 16 (predicted, ≥ 5) | a/c' at 16 | "
           "compile work × (≤ 1.10) | total work (c)/(a) | 2-core compile wall MTPC/plain | "
           "instructions (iii)/(i) (≤ 1.001) | .text (iii)/(i) (≤ 1.005) |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for m in results:
        if "error" in m or "skipped" in m:
            out.append(f"| {m['workload']} | {m.get('skipped') or 'error: ' + m['error'][:80]}"
                       " | | | | | | | |")
            continue
        p, q, wl = m["predicted"], m["quality"]["iii"], m["wall"]
        wc = lib.ratio(wl["mtpc"]["compile"]["median"], wl["plain"]["compile"]["median"])
        a, b, c, c0 = (p[x]["makespan"]["16"] for x in CONFIGS)
        cw, _ = compile_work(m)
        ir = q.get("instr_ratio")
        out.append(f"| {m['workload']} | {lib.ratio(a, b):.2f} | **{lib.ratio(a, c):.2f}** | "
                   f"{lib.ratio(a, c0):.2f} | "
                   f"{cw:.3f} | {lib.ratio(p['c']['work'], p['a']['work']):.3f} | "
                   f"{wc:.3f} | "
                   f"{f'{ir:.4f}' if ir else 'n/a'} | {q['text_ratio']:.4f} |")
    return "\n".join(out)


def report(results):
    parts = []
    for m in results:
        if "skipped" in m:
            parts.append(f"## {m['workload']}: skipped: {m['skipped']}")
        elif "error" in m:
            parts.append(f"## {m['workload']}: not measured: {m['error']}")
        else:
            parts.append(report_workload(m))
    parts.append(summary(results))
    return "\n\n".join(parts)


# ---------------------------------------------------------------- main

def run_workloads(chosen, measure, data, json_path):
    """measure(w) of each workload into data["workloads"] (a missing source is skipped with
    a message naming its fetch script; an error is recorded and the run goes on), the JSON
    written after each when json_path. Returns 0, or 1 if a workload failed."""
    status = 0
    for w in chosen:
        if not (w.dir / w.tu).exists():
            msg = f"{w.dir / w.tu} missing: run {w.fetch}"
            log(f"{w.name}: skipped: {msg}")
            data["workloads"].append({"workload": w.name, "skipped": msg})
            continue
        try:
            data["workloads"].append(measure(w))
        except (lib.BenchError, callgrind.CallgrindError, OSError, ValueError) as e:
            log(f"{w.name}: {e}")
            data["workloads"].append({"workload": w.name, "error": str(e)})
            status = 1
        if json_path:
            pathlib.Path(json_path).parent.mkdir(parents=True, exist_ok=True)
            pathlib.Path(json_path).write_text(json.dumps(data, indent=1, default=str) + "\n")
    return status


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workloads", default="sqlite,duktape,zstd,cxx,gtest",
                    help="comma-separated: sqlite, duktape, zstd, cxx, gtest, rocksdb "
                         "(default all but rocksdb, the real unity build: long)")
    ap.add_argument("--cxx-unit", default="element_access2",
                    help="the cxx workload's unit test: src/unit-<NAME>.cpp (default "
                         "element_access2)")
    ap.add_argument("--partitions", type=int, default=None,
                    help="mtpc-compile's and mtpc-link's --partitions (default 16; 4 --quick)")
    ap.add_argument("--runs", type=int, default=None,
                    help="interleaved wall runs of each config (default 3; 2 --quick)")
    ap.add_argument("--build-dir", default=str(lib.BUILD),
                    help="the MTPC build whose tools run (default $MTPC_BUILD_DIR or build/)")
    ap.add_argument("--work", default=None,
                    help="builds (default bench/out/compile_bench; a temp dir with --quick)")
    ap.add_argument("--pinned-runs", type=int, default=None,
                    help="interleaved pinned pairs (plain compile, mtpc-compile from "
                         "nothing) for the compile-side work ratio (default 3; 1 with "
                         "--quick; 0: the one run of section 1)")
    ap.add_argument("--compile-split-arg", action="append", default=[], metavar="WORD",
                    help="pass WORD to mtpc-compile's --split-arg (repeat for several): "
                         "e.g. --no-join-inline, to measure what the join's inliner costs")
    ap.add_argument("--cpu", type=int, default=1,
                    help="the CPU of the pinned runs (default 1: the VM's faster one)")
    ap.add_argument("--cores", type=int, default=os.cpu_count() or 2,
                    help="--jobs / --thinlto-jobs of the wall runs (default: the cores)")
    ap.add_argument("--no-callgrind", dest="callgrind", action="store_false",
                    help="no instruction counts (sizes and output checks only)")
    ap.add_argument("--quick", action="store_true",
                    help="a small synthetic TU (bench/gen_synthetic.py), no callgrind: a "
                         "check of this script, not a measurement")
    ap.add_argument("--json", default=None,
                    help="write every measurement here (default "
                         "bench/out/compile_bench.json; none with --quick)")
    ap.add_argument("--from-json", metavar="FILE", help="print the tables of a JSON, and exit")
    args = ap.parse_args(argv)
    if args.from_json:
        results = json.loads(pathlib.Path(args.from_json).read_text())["workloads"]
        for m in results:       # with this version's graphs
            if "predicted" in m:
                m["predicted"] = predictions(m)
        print(report(results))
        return 0
    args.partitions = args.partitions or (4 if args.quick else 16)
    args.runs = args.runs or (2 if args.quick else 3)
    if args.pinned_runs is None:
        args.pinned_runs = 1 if args.quick else 3
    if args.quick:
        args.callgrind = False
    elif args.json is None:
        args.json = str(ROOT / "bench" / "out" / "compile_bench.json")
    tmp = tempfile.mkdtemp(prefix="compile-bench-") if args.quick and not args.work else None
    work = pathlib.Path(args.work or tmp or ROOT / "bench" / "out" / "compile_bench").resolve()
    work.mkdir(parents=True, exist_ok=True)
    try:
        t = find_tools(pathlib.Path(args.build_dir).resolve())
    except lib.BenchError as e:
        print(f"compile_bench: {e}", file=sys.stderr)
        return 2
    if args.callgrind and not shutil.which("valgrind"):
        print("compile_bench: valgrind not found: --no-callgrind, or install it",
              file=sys.stderr)
        return 2
    data = {"date": datetime.datetime.now().isoformat(timespec="seconds"),
            "commit": link_costs.git_commit()[0], "argv": sys.argv, "build_dir": args.build_dir,
            "tools": {"mtpc-compile": t.mtpc_compile, "mtpc-link": t.mtpc_link,
                      "clang": t.clang}, "machine": platform.node(), "load_before":
            os.getloadavg(), "workloads": []}
    known = workloads(work, args.cxx_unit)
    names = [n.strip() for n in args.workloads.split(",") if n.strip()]
    if set(names) - set(known):
        ap.error(f"unknown workload(s) {', '.join(sorted(set(names) - set(known)))}; "
                 f"known: {', '.join(known)}")
    chosen = [synthetic(work)] if args.quick else [known[n] for n in names]
    status = run_workloads(chosen, lambda w: bench_workload(w, t, args, work / w.name), data,
                           args.json)
    data["load_after"] = os.getloadavg()
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(data, indent=1, default=str) + "\n")
    print()
    print(report(data["workloads"]))
    print(f"\n(load average before {data['load_before'][0]:.1f}, after "
          f"{data['load_after'][0]:.1f}; commit {data['commit']}; {data['date']})")
    if tmp:
        shutil.rmtree(tmp, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
