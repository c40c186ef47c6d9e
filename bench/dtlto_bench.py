#!/usr/bin/env python3
"""Issue #11's benchmark: DTLTO with mtpc-distribute against clang's in-process ThinLTO.

One program's -O2 -flto=thin objects (compiled once) are linked with clang and lld (LLVM 22
by default: DTLTO needs lld >= 21) in three ways, side by side, repeats interleaved (the order
rotates each repeat):

  A   in-process ThinLTO, -Wl,--thinlto-jobs=J                              (the baseline)
  B   DTLTO, bench/dtlto_plain.py: one backend job per module, J at a time
  C   DTLTO, mtpc-distribute with its default settings (and --jobs=J): each repeat removes
      <output>.mtpc/ and gives it a new, empty plan cache (MTPC_CACHE), so every split,
      slot and merge runs
  Cw  "C warm": the same with the inner directory removed but a warm plan cache (warmed by
      one C link before the repeats); --no-warm leaves it out

Reported per variant: link wall (median, min-max), total CPU (user+sys of the whole link
process tree: clang -> ld.lld -> distributor -> ninja -> compilers, os.wait4) and their
ratios to A; .text of the output (llvm-size) / A's; and, with valgrind, the instructions a
second program (default: speedtest1 --size 5 --memdb --verify, linked the same three ways)
executes under callgrind, C / A. Issue #11's goals are printed beside the ratios: link wall
<= 0.62 of in-process, total CPU <= 1.05, .text <= 1.005, instructions <= +0.1%.

Where the time goes (B and C): the distributor is started through a small bash wrapper
(bench/out/.../wrap-*.sh) that takes bash's $EPOCHREALTIME before and after it (no fork; its
own cost is measured and printed), so each link splits into: thin link (link start to
distributor start: clang driver, lld's input reading and thin link, the job list), the
distributor, and the final link (distributor exit to link end). For C, the inner build's
.ninja_log (edge start/end in ms from ninja's start; ninja's start in wall-clock time is the
log file's mtime minus the last edge's end, the log being written as each edge ends) splits
the distributor into: before the first inner edge starts (reading the job list, the cost
estimate, writing the graph, starting ninja), the inner build, and after the last edge ends
(delivering the objects, the summary line). Also printed: the partition shares each split
module got (mtpc-split --weights) and the cores left idle at the end of the inner build (the
other cores' wait for the last compile edge), and the schedule of the median C links.

Floor: what C could reach on J cores of an idle machine, from CPU times (like
split_bench.py's floor): the serial steps as they ran (thin link, distributor before and
after its inner build, the split, the merge, final link: wall), plus the partitions' CPU and
what is left of the unsplit backends' CPU (the other J-1 cores can run them during the split
and the merge) shared by J cores, at least the slowest partition. The CPU of each slot and
unsplit backend is what mtpc-distribute records in the plan cache (its --slot-step and
backend steps measure their compiler's CPU), else the edge's wall time. Printed over A's
measured wall and over A's own CPU-based estimate (A's CPU minus the other modules'
backends, at least CPU / J): when the machine is shared, the wall ratio can miss a goal that
the floor says is within reach, or the floor can say that no schedule reaches it.

Default workload: SQLite's sqlite3 shell (shell.c + sqlite3.c from bench/get-sqlite.sh) and
speedtest1 (speedtest1.c + the same sqlite3.o). --sources/--runtime-sources take any C files.
"""
import argparse
import json
import os
import pathlib
import re
import shlex
import shutil
import sqlite3
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import lib  # noqa: E402
import predict  # noqa: E402

VARIANTS = ("A", "B", "C", "Cw")
LABELS = {"A": "A in-process ThinLTO", "B": "B DTLTO, plain distributor",
          "C": "C DTLTO + mtpc-distribute", "Cw": "C warm plan cache"}
GOALS = {"wall": 0.62, "cpu": 1.05, "text": 1.005, "instr": 1.001}
SQLITE_CHECK = ("select sqlite_version(), 6*7, (with recursive c(x) as (select 1 union all "
                "select x + 1 from c where x < 100) select sum(x) from c);")
# the MTPC_* variables that change mtpc-distribute's settings: C runs with its defaults
MTPC_SETTINGS = ("MTPC_SPLIT_THRESHOLD", "MTPC_SPLIT_COST", "MTPC_MAX_PARTITIONS", "MTPC_JOBS",
                 "MTPC_LAUNCHER", "MTPC_SPLIT_ARGS", "MTPC_CACHE")
WRAPPER = """#!/bin/bash
# dtlto_bench.py: the distributor's start and end, wall clock ($EPOCHREALTIME: no fork)
printf 'start %s\\n' "$EPOCHREALTIME" > {stamps}
{real} "$@"
rc=$?
printf 'end %s\\n' "$EPOCHREALTIME" >> {stamps}
exit $rc
"""


def cmake_llvm_version(build):
    try:
        text = (pathlib.Path(build) / "CMakeCache.txt").read_text()
    except OSError:
        return None
    m = re.search(r"^MTPC_LLVM_VERSION:\w+=(\d+)", text, re.M)
    return m.group(1) if m else None


def find_distribute(version):
    """mtpc-distribute of an MTPC build made with LLVM `version`: $MTPC_BUILD_DIR, then
    build-llvm<version>/, build/, then any other build*/ of the tree. None if there is none."""
    cands = [os.environ.get("MTPC_BUILD_DIR"), lib.ROOT / f"build-llvm{version}",
             lib.ROOT / "build", *sorted(lib.ROOT.glob("build*"))]
    for b in cands:
        if b and cmake_llvm_version(b) == str(version):
            p = pathlib.Path(b) / "ninja-gen" / "mtpc-distribute"
            if p.is_file() and os.access(p, os.X_OK):
                return str(p)
    return None


def find_clang(version):
    p = shutil.which(f"clang-{version}")
    if p:
        return p
    p = pathlib.Path(f"/usr/lib/llvm-{version}/bin/clang")
    return str(p) if p.exists() else None


def llvm_bin_tool(clang, name):
    """An LLVM tool next to clang (after symlinks), else name-<version> on PATH."""
    p = pathlib.Path(os.path.realpath(clang)).parent / name
    if p.exists():
        return str(p)
    m = re.search(r"-(\d+)$", clang)
    alt = shutil.which(f"{name}-{m.group(1)}") if m else None
    if alt:
        return alt
    raise lib.BenchError(f"{name} not found next to {clang}")


def text_size(size_tool, exe):
    """Bytes of .text in exe (llvm-size -A)."""
    for line in lib.run_measured([size_tool, "-A", exe]).stdout.splitlines():
        f = line.split()
        if len(f) >= 2 and f[0] == ".text":
            return int(f[1])
    return None


def spread(values):
    """(median, min, max) of a list."""
    values = list(values)
    if not values:
        return (float("nan"),) * 3
    return lib.median(values), min(values), max(values)


def fmt_spread(values, unit=" s", digits=2):
    med, lo, hi = spread(values)
    if med != med:
        return "n/a"
    return f"{med:.{digits}f}{unit} ({lo:.{digits}f}–{hi:.{digits}f})"


def goal_text(x, goal):
    if x != x:
        return "n/a"
    return f"{'met' if x <= goal else 'MISSED'} (≤ {goal})"


# ---------------------------------------------------------------------------------------------
# the inner build of mtpc-distribute: its .ninja_log and what the plan cache recorded


def read_stamps(path):
    """{'start': t, 'end': t} from a wrapper's stamp file (wall clock seconds)."""
    out = {}
    try:
        for line in path.read_text().splitlines():
            k, _, v = line.partition(" ")
            out[k] = float(v.replace(",", "."))   # $EPOCHREALTIME follows LC_NUMERIC
    except (OSError, ValueError):
        pass
    return out


def classify(edges):
    """The inner build's edges as (kind, module, name, start_s, end_s), kind one of split,
    slot, merge, backend, job; sorted by start."""
    split_dirs = {pathlib.Path(o).parent for e in edges for o in e.outputs
                  if pathlib.Path(o).name == "split.dd"}
    rows = []
    for e in edges:
        p = pathlib.Path(e.name)
        mod = re.sub(r"-[0-9a-f]{8}$", "", p.parent.name)
        if any(pathlib.Path(o).name == "split.dd" for o in e.outputs):
            kind, name = "split", f"split {mod}"
        elif re.fullmatch(r"p\d+\.o", p.name):
            kind, name = "slot", f"slot {mod} {p.stem}"
        elif p.name == "native.o" and p.parent in split_dirs:
            kind, name = "merge", f"merge {mod}"
        elif p.name in ("native.o", "backend.o"):
            kind, name = "backend", f"backend {mod}" + (" (fallback)" if p.name == "backend.o"
                                                         else "")
        else:
            kind, mod, name = "job", "", f"job {p.name}"
        rows.append((kind, mod, name, e.start_ms / 1000, e.end_ms / 1000))
    return sorted(rows, key=lambda r: (r[3], r[4], r[2]))


def cache_cpu(cache):
    """CPU seconds mtpc-distribute's steps recorded in the plan cache: {module: [slot CPU by
    partition]} for split modules and {module: CPU} for unsplit backends; modules by file name
    without .o. Empty when the cache cannot be read (then edge walls stand in)."""
    slots, backends = {}, {}
    if not cache or not pathlib.Path(cache).exists():
        return slots, backends
    try:
        db = sqlite3.connect(f"file:{cache}?mode=ro", uri=True)
        try:
            for path, part, secs in db.execute(
                    "select p.module_path, t.partition, t.seconds from timings t join plans p "
                    "on p.module_hash = t.module_hash and p.options_hash = t.options_hash "
                    "order by t.recorded"):
                mod = pathlib.Path(path).name
                slots.setdefault(mod, {})[part] = secs
            for path, secs, split in db.execute(
                    "select module_path, seconds, split from module_times"):
                if not split:
                    backends[pathlib.Path(path).name] = secs
        finally:
            db.close()
    except sqlite3.Error as e:
        lib.eprint(f"dtlto_bench: cannot read the plan cache {cache}: {e} (edge walls used)")
        return {}, {}
    return {m: [v[k] for k in sorted(v)] for m, v in slots.items()}, backends


def inner_profile(inner, cache, dist, jobs):
    """Timeline and floor of one mtpc-distribute link from its inner dir, its plan cache and
    the wrapper's stamps (dist: {'start','end'}). Times in seconds."""
    log = inner / ".ninja_log"
    if not log.exists():
        return None
    edges = predict.parse_ninja_log(log.read_text())
    if not edges:
        return None
    rows = classify(edges)
    first = min(r[3] for r in rows)
    last = max(r[4] for r in rows)
    ninja_start = log.stat().st_mtime - last     # the log is written as each edge ends
    res = {"edges": [list(r) for r in rows], "first_start": first, "last_end": last,
           "inner_span": last - first}
    manifest = inner / "build.ninja"
    if "start" in dist and "end" in dist:
        t0 = dist["start"]
        res["pre"] = ninja_start + first - t0
        res["post"] = dist["end"] - (ninja_start + last)
        res["ninja_start"] = ninja_start - t0
        if manifest.exists():
            res["graph_written"] = manifest.stat().st_mtime - t0
    slot_cpu, backend_cpu = cache_cpu(cache)
    splits, merges, slots, backends, slot_order = {}, {}, {}, [], []
    for kind, mod, name, a, b in rows:
        if kind == "split":
            splits[mod] = b - a
        elif kind == "merge":
            merges[mod] = b - a
        elif kind == "slot":
            k = int(name.rsplit(" p", 1)[1])
            cpu = slot_cpu.get(mod, [])
            slots.setdefault(mod, []).append(cpu[k] if k < len(cpu) else b - a)
            slot_order.append(slots[mod][-1])
        else:
            backends.append(backend_cpu.get(mod, b - a))
    # A lower bound on J cores: every split module's chain (split, its slowest slot, merge)
    # and every backend; and the work: before the first slot can start the first split must
    # end, after the last slot a merge runs, and only splits, merges and backends can keep
    # the other cores busy meanwhile; the rest is shared by the J cores.
    crit = max([max(backends, default=0.0)] +
               [splits.get(m, 0.0) + max(v) + merges.get(m, 0.0) for m, v in slots.items()])
    all_slots = [x for v in slots.values() for x in v]
    S = min(splits.values(), default=0.0) if all_slots else 0.0
    M = min(merges.values(), default=0.0) if all_slots else 0.0
    nonslot = sum(splits.values()) + sum(merges.values()) + sum(backends)
    work = nonslot + sum(all_slots)
    inner_floor = max(crit, S + M + max(0.0, work - min(jobs * (S + M), nonslot)) / jobs)
    # the cores left idle at the end: the last J compile edges (not merges) should end
    # together; core-seconds between the last end and each of the others
    ends = sorted((r[4] for r in rows if r[0] != "merge"), reverse=True)[:jobs]
    res["tail_idle"] = sum(ends[0] - e for e in ends)
    # the partition shares mtpc-distribute gave each split module (mtpc-split --weights)
    res["weights"] = {}
    for plan in sorted(inner.glob("mod/*/parts/plan.json")):
        try:
            opts = json.loads(plan.read_text()).get("options", "")
        except (OSError, ValueError):
            continue
        m = re.search(r"\bweights=(\S+)", opts)
        mod = re.sub(r"-[0-9a-f]{8}$", "", plan.parent.parent.name)
        res["weights"][mod] = m.group(1) if m else "equal"
    res.update({"split_wall": max(splits.values(), default=0.0),
                "merge_wall": max(merges.values(), default=0.0),
                "slot_cpu": slot_order,
                "backend_cpu": backends, "inner_floor": inner_floor})
    return res


# ---------------------------------------------------------------------------------------------


class Bench:
    def __init__(self, args, clang, distribute):
        self.args = args
        self.clang = clang
        self.distribute = distribute
        self.work = pathlib.Path(args.work).resolve()
        self.jobs = args.jobs
        self.opt = args.opt
        self.cflags = shlex.split(args.cflags)
        self.ldflags = shlex.split(args.ldflags)
        self.wrappers = {}
        base_env = {k: v for k, v in os.environ.items() if k not in MTPC_SETTINGS}
        self.base_env = base_env
        self.warm_cache = self.work / "caches" / "warm.sqlite"

    def wrapper(self, name, real):
        """A bash script that stamps the distributor's start and end and runs it."""
        path = self.work / f"wrap-{name}.sh"
        stamps = self.work / f"wrap-{name}.times"
        path.write_text(WRAPPER.format(stamps=shlex.quote(str(stamps)),
                                       real=shlex.quote(str(real))))
        path.chmod(0o755)
        self.wrappers[name] = (path, stamps)
        return path, stamps

    def compile(self, sources):
        """-O<n> -flto=thin objects of the sources, compiled once (reused by mtime)."""
        objdir = self.work / "obj"
        objdir.mkdir(parents=True, exist_ok=True)
        objs = []
        for src in sources:
            src = pathlib.Path(src).resolve()
            obj = objdir / (src.stem + ".o")
            if not obj.exists() or obj.stat().st_mtime < src.stat().st_mtime:
                print(f"  compile {src.name} ({self.opt} -flto=thin)", flush=True)
                lib.run_measured([self.clang, self.opt, *self.cflags, "-flto=thin", "-c", src,
                                  "-o", obj])
            objs.append(obj)
        return objs

    def link_cmd(self, variant, objs, out):
        cmd = [self.clang, self.opt, "-flto=thin", "-fuse-ld=lld"]
        if variant == "A":
            cmd.append(f"-Wl,--thinlto-jobs={self.jobs}")
        elif variant == "B":
            cmd += [f"-fthinlto-distributor={self.wrappers['B'][0]}",
                    f"-Xthinlto-distributor=--jobs={self.jobs}"]
        else:
            cmd += [f"-fthinlto-distributor={self.wrappers['C'][0]}",
                    f"-Xthinlto-distributor=--jobs={self.jobs}",
                    *(f"-Xthinlto-distributor={a}" for a in self.args.mtpc_arg)]
        return cmd + [*objs, *self.ldflags, "-o", out]

    def link(self, variant, objs, out, cache=None):
        """One measured link. Returns its record (times in seconds)."""
        out = pathlib.Path(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.unlink(missing_ok=True)
        inner = pathlib.Path(str(out) + ".mtpc")
        shutil.rmtree(inner, ignore_errors=True)
        env = dict(self.base_env)
        stamps = None
        if variant != "A":
            stamps = self.wrappers["B" if variant == "B" else "C"][1]
            stamps.unlink(missing_ok=True)
        if variant in ("C", "Cw"):
            env["MTPC_CACHE"] = str(cache)
        load = os.getloadavg()[0]
        t0 = time.time()
        m = lib.run_measured(self.link_cmd(variant, objs, out), cwd=out.parent, env=env)
        lib.check_object(out, f"{variant} link")
        rec = {"wall": m.wall, "cpu": m.cpu, "load1": load}
        if stamps:
            d = read_stamps(stamps)
            if "start" in d and "end" in d:
                rec["thin_link"] = d["start"] - t0
                rec["distributor"] = d["end"] - d["start"]
                rec["final_link"] = t0 + m.wall - d["end"]
            if variant in ("C", "Cw"):
                rec["summary"] = [ln for ln in m.stderr.splitlines()
                                  if ln.startswith("mtpc-distribute:")]
                prof = inner_profile(inner, cache, d, self.jobs)
                if prof:
                    rec["inner"] = prof
                    if "thin_link" in rec and "pre" in prof:
                        rec["floor"] = (rec["thin_link"] + prof["pre"] + prof["inner_floor"]
                                        + prof["post"] + rec["final_link"])
        return rec

    def wrapper_cost(self, n=15):
        """Median extra wall of the wrapper around /bin/true over /bin/true itself."""
        path = self.work / "wrap-true.sh"
        stamps = self.work / "wrap-true.times"
        path.write_text(WRAPPER.format(stamps=shlex.quote(str(stamps)), real="/bin/true"))
        path.chmod(0o755)
        direct, wrapped = [], []
        for _ in range(n):
            direct.append(lib.run_measured(["/bin/true"]).wall)
            wrapped.append(lib.run_measured([path]).wall)
        return max(0.0, lib.median(wrapped) - lib.median(direct))


def program_output(exe, args):
    """What a correct build must print alike: the lines naming a hash (speedtest1 --verify),
    else the whole output."""
    r = lib.run_measured([exe, *args], check=False)
    lines = [ln for ln in r.stdout.splitlines() if re.search(r"hash", ln, re.I)]
    return r.returncode, "\n".join(lines) if lines else r.stdout


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-r", "--repeats", type=int, default=5,
                    help="interleaved repeats of every link (default 5)")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count(),
                    help="backends at a time: --thinlto-jobs for A, --jobs for the "
                         "distributors (default: %(default)s, the cores)")
    ap.add_argument("--llvm", default="22", help="LLVM major version (>= 21; default 22)")
    ap.add_argument("--mtpc-distribute", help="mtpc-distribute to measure (default: an MTPC "
                    "build of that LLVM: $MTPC_BUILD_DIR, build-llvm22/, build/, build*/)")
    ap.add_argument("--mtpc-arg", action="append", default=[], metavar="OPT",
                    help="an option for mtpc-distribute (-Xthinlto-distributor=OPT), e.g. "
                         "--mtpc-arg=--threshold=0; default: none (its defaults)")
    ap.add_argument("--sources", nargs="+", metavar="FILE",
                    help="C sources of the linked program (default: SQLite's shell.c "
                         "sqlite3.c)")
    ap.add_argument("--runtime-sources", nargs="+", metavar="FILE",
                    help="C sources of the program run under callgrind (default: "
                         "speedtest1.c sqlite3.c); objects of sources in both are shared")
    ap.add_argument("--runtime-args", help="its arguments (default: --size 5 --memdb "
                    "--verify for speedtest1, none otherwise)")
    ap.add_argument("--check-args", help="arguments of the linked program for the output "
                    "check (default: a query for the sqlite3 shell, none otherwise)")
    ap.add_argument("--no-callgrind", action="store_true", help="skip the runtime program")
    ap.add_argument("--no-warm", action="store_true", help="skip the 'C warm' variant")
    ap.add_argument("--opt", default="-O2", help="optimization level (default -O2)")
    ap.add_argument("--cflags", default=None, help="extra compile flags (default for "
                    "SQLite: -DSQLITE_ENABLE_MATH_FUNCTIONS)")
    ap.add_argument("--ldflags", default="-lm -lpthread -ldl",
                    help="libraries for the links (default: %(default)s)")
    ap.add_argument("--work", default=str(lib.ROOT / "bench" / "out" / "dtlto_bench"),
                    help="scratch folder (default bench/out/dtlto_bench)")
    ap.add_argument("--json", help="write all measurements and summaries to this file")
    args = ap.parse_args(argv)
    if args.repeats < 1 or args.jobs < 1:
        ap.error("--repeats and --jobs must be at least 1")
    args.clang = find_clang(args.llvm)
    if not args.clang:
        ap.error(f"clang-{args.llvm} not found (scripts/install-deps.sh installs LLVM 22)")
    d = args.mtpc_distribute or find_distribute(args.llvm)
    args.mtpc_distribute = os.path.abspath(d) if d else None
    if not d or not os.access(args.mtpc_distribute, os.X_OK):
        ap.error(f"no mtpc-distribute built with LLVM {args.llvm}: run "
                 f"MTPC_LLVM_VERSION={args.llvm} scripts/build.sh build-llvm{args.llvm} "
                 "(or give --mtpc-distribute)")
    if not args.sources:
        amal = lib.ROOT / "bench" / "work" / "sqlite-amalgamation"
        if not (amal / "sqlite3.c").exists():
            ap.error(f"{amal}/sqlite3.c missing: run bench/get-sqlite.sh (or give --sources)")
        args.sources = [amal / "shell.c", amal / "sqlite3.c"]
        if args.runtime_sources is None:
            args.runtime_sources = [amal / "speedtest1.c", amal / "sqlite3.c"]
        if args.runtime_args is None:
            args.runtime_args = "--size 5 --memdb --verify"
        if args.check_args is None:
            args.check_args = shlex.join([":memory:", SQLITE_CHECK])
        if args.cflags is None:
            args.cflags = "-DSQLITE_ENABLE_MATH_FUNCTIONS"
    args.cflags = args.cflags or ""
    if not args.no_callgrind and args.runtime_sources and shutil.which("valgrind") is None:
        lib.eprint("dtlto_bench: valgrind not found: no instruction counts")
        args.no_callgrind = True
    return args


def progress_line(r, repeats, v, rec):
    extra = ""
    if "inner" in rec and "pre" in rec["inner"]:
        i = rec["inner"]
        extra = (f"; thin link {rec['thin_link']:.2f} s, distributor {rec['distributor']:.2f} s "
                 f"(before 1st edge {i['pre']:.3f} s, inner {i['inner_span']:.2f} s, after "
                 f"{i['post']:.3f} s), floor {rec.get('floor', float('nan')):.2f} s")
    elif "thin_link" in rec:
        extra = f"; thin link {rec['thin_link']:.2f} s, distributor {rec['distributor']:.2f} s"
    return (f"repeat {r + 1}/{repeats}: {v:<2} link {rec['wall']:6.2f} s wall, "
            f"{rec['cpu']:6.2f} s CPU, load {rec['load1']:.2f}{extra}")


def measure(bench, objs, variants, repeats):
    """The interleaved repeats: {variant: [link records]}. The order rotates every repeat."""
    runs = {v: [] for v in variants}
    for r in range(repeats):
        order = variants[r % len(variants):] + variants[:r % len(variants)]
        for v in order:
            cache = (bench.work / "caches" / f"cold-{r + 1}.sqlite" if v == "C" else
                     bench.warm_cache if v == "Cw" else None)
            rec = bench.link(v, objs, bench.work / v / "app", cache)
            runs[v].append(rec)
            print(progress_line(r, repeats, v, rec), flush=True)
    return runs


def runtime_counts(bench, args):
    """The runtime program linked A, B and C (a cold plan cache), run under callgrind:
    ({variant: instructions}, whether all printed the same)."""
    import callgrind
    objs = bench.compile(args.runtime_sources)
    instr, outs = {}, {}
    for v in ("A", "B", "C"):
        print(f"runtime program: link {v}, run under callgrind", flush=True)
        exe = bench.work / "runtime" / v / "prog"
        bench.link(v, objs, exe, bench.work / "caches" / "runtime-cold.sqlite")
        instr[v], out = callgrind.instructions([exe, *shlex.split(args.runtime_args or "")])
        lines = [ln for ln in out.splitlines() if re.search(r"hash", ln, re.I)]
        outs[v] = "\n".join(lines) if lines else out
    return instr, all(outs[v] == outs["A"] for v in outs)


def summarize(runs, text, instr, jobs):
    """Per variant: spreads, ratios of medians to A, per-repeat (paired) ratios."""
    med = {v: {k: lib.median(x[k] for x in runs[v]) for k in ("wall", "cpu")} for v in runs}
    a = med["A"]
    out = {}
    for v, rs in runs.items():
        s = {"wall": spread(x["wall"] for x in rs), "cpu": spread(x["cpu"] for x in rs),
             "wall_ratio": lib.ratio(med[v]["wall"], a["wall"]),
             "cpu_ratio": lib.ratio(med[v]["cpu"], a["cpu"]),
             "paired_wall_ratios": [x["wall"] / y["wall"] for x, y in zip(rs, runs["A"])],
             "paired_cpu_ratios": [x["cpu"] / y["cpu"] for x, y in zip(rs, runs["A"])],
             "text": text[v], "text_ratio": lib.ratio(text[v] or 0, text["A"] or 0),
             "load1": spread(x["load1"] for x in rs)}
        if v in instr:
            s["instructions"] = instr[v]
            s["instr_ratio"] = instr[v] / instr["A"]
        for k in ("thin_link", "distributor", "final_link", "floor"):
            vals = [x[k] for x in rs if k in x]
            if vals:
                s[k] = spread(vals)
        inners = [x["inner"] for x in rs if "inner" in x and "pre" in x["inner"]]
        for k in ("pre", "post", "inner_span", "graph_written", "ninja_start", "split_wall",
                  "merge_wall", "inner_floor", "tail_idle"):
            vals = [i[k] for i in inners if k in i]
            if vals:
                s[k if k.startswith("inner") else "inner_" + k] = spread(vals)
        if inners:
            s["slot_cpu_sum"] = spread(sum(i["slot_cpu"]) for i in inners)
            s["backend_cpu_sum"] = spread(sum(i["backend_cpu"]) for i in inners)
        out[v] = s
    # A on an idle machine, from its CPU: at least CPU / J, and at least its CPU minus the
    # other modules' backends (C's unsplit backends), which run beside the largest one
    c_inner = [x["inner"] for x in runs.get("C", []) if "inner" in x]
    other = lib.median(sum(i["backend_cpu"]) for i in c_inner) if c_inner else 0.0
    return out, {"a_wall": a["wall"], "a_cpu": a["cpu"], "other_backends": other,
                 "a_estimate": max(a["cpu"] / jobs, a["cpu"] - other)}


def print_schedule(label, rec, out):
    """One mtpc-distribute link edge by edge, in seconds from the link's start."""
    i = rec.get("inner")
    if not i or "thin_link" not in rec or "pre" not in i:
        return
    t0 = rec["thin_link"] + i["ninja_start"]
    out(f"\nschedule of the median {label} link ({rec['wall']:.2f} s; seconds from the link's "
        "start; CPU as the plan cache recorded it):")
    out(f"  {0:7.2f} {rec['thin_link']:7.2f}  clang + lld: thin link, job list")
    out(f"  {rec['thin_link']:7.2f} {rec['thin_link'] + i['pre']:7.2f}  mtpc-distribute before "
        "its first edge")
    slots, backs = iter(i["slot_cpu"]), iter(i["backend_cpu"])
    for kind, _, name, a0, b0 in i["edges"]:
        cpu = (next(slots) if kind == "slot" else
               next(backs) if kind in ("backend", "job") else None)
        out(f"  {t0 + a0:7.2f} {t0 + b0:7.2f}  {name}"
            + (f"  ({cpu:.2f} s CPU)" if cpu is not None else ""))
    end = rec["thin_link"] + rec["distributor"]
    out(f"  {t0 + i['last_end']:7.2f} {end:7.2f}  mtpc-distribute after its last edge")
    out(f"  {end:7.2f} {rec['wall']:7.2f}  lld: final link")
    for ln in rec.get("summary", []):
        out(f"  {ln}")
    if i.get("weights"):
        out("  partition shares (mtpc-split --weights): " +
            ", ".join(f"{m} {w}" for m, w in i["weights"].items()))


def report(res, runs, args, out=print):
    sm, est = res["summary"], res["a"]
    variants = list(runs)
    ls, le = res["loadavg_start"], res["loadavg_end"]
    names = ", ".join(pathlib.Path(s).name for s in args.sources)
    out(f"\n{len(args.sources)}-module link ({names}), {pathlib.Path(args.clang).name} "
        f"{args.opt} -flto=thin, {args.jobs} jobs on {os.cpu_count()} cores; medians of "
        f"{args.repeats} interleaved repeats (min–max)")
    out(f"load average (1, 5, 15 min): {ls[0]:.2f} {ls[1]:.2f} {ls[2]:.2f} at the start, "
        f"{le[0]:.2f} {le[1]:.2f} {le[2]:.2f} at the end (other work on the machine inflates "
        "wall times)")
    w = max(len(LABELS[v]) for v in variants)
    out(f"\n{'variant':<{w}}  {'link wall':>22}  {'/ A':>6}  {'total CPU':>22}  {'/ A':>6}  "
        f"{'.text / A':>9}  {'instr. / A':>10}")
    for v in variants:
        s = sm[v]
        ir = f"{s['instr_ratio']:.5f}" if "instr_ratio" in s else "-"
        out(f"{LABELS[v]:<{w}}  {fmt_spread(x['wall'] for x in runs[v]):>22}  "
            f"{s['wall_ratio']:>6.3f}  {fmt_spread(x['cpu'] for x in runs[v]):>22}  "
            f"{s['cpu_ratio']:>6.3f}  {s['text_ratio']:>9.4f}  {ir:>10}")
    rt = res["runtime_same_output"]
    out(f"(.text of A: {sm['A']['text']} bytes; program output "
        f"{'identical' if res['same_output'] else 'DIFFERS'} across variants"
        + ("" if rt is None else f"; runtime program output {'identical' if rt else 'DIFFERS'}")
        + ")")

    c = sm["C"]
    out("\nissue #11's goals, C (mtpc-distribute, cold) against A:")
    rows = [("link wall / in-process", c["wall_ratio"], GOALS["wall"], c["paired_wall_ratios"]),
            ("total CPU / in-process", c["cpu_ratio"], GOALS["cpu"], c["paired_cpu_ratios"]),
            (".text / in-process", c["text_ratio"], GOALS["text"], None)]
    if "instr_ratio" in c:
        rows.append(("instructions / in-process", c["instr_ratio"], GOALS["instr"], None))
    for name, x, goal, paired in rows:
        pr = f"   per repeat: {', '.join(f'{p:.3f}' for p in paired)}" if paired else ""
        out(f"  {name:<26} {x:.4f}  {goal_text(x, goal)}{pr}")
    if "Cw" in sm:
        cw = sm["Cw"]
        out(f"  C warm: wall {cw['wall_ratio']:.3f} ({goal_text(cw['wall_ratio'], GOALS['wall'])}"
            f"), CPU {cw['cpu_ratio']:.3f} ({goal_text(cw['cpu_ratio'], GOALS['cpu'])}); per "
            f"repeat wall {', '.join(f'{p:.3f}' for p in cw['paired_wall_ratios'])}")

    out("\nwhere the link time goes (medians, min–max; the distributor's start and end stamped "
        "by the wrapper):")
    for v in variants:
        s = sm[v]
        if "thin_link" not in s:
            continue

        def sp(key, inner=False, total=False):
            return fmt_spread((sum(x["inner"][key]) if total else x["inner"][key]) if inner
                              else x[key] for x in runs[v]
                              if (("inner" in x and key in x["inner"]) if inner else key in x))
        out(f"  {LABELS[v]:<{w}}  thin link {sp('thin_link')}, distributor "
            f"{sp('distributor')}, final link {sp('final_link')}")
        if "inner_pre" in s:
            ms = lambda t: f"{t[0] * 1000:.0f} ms ({t[1] * 1000:.0f}–{t[2] * 1000:.0f})"  # noqa
            out(f"  {'':<{w}}  distributor = before the 1st inner edge {ms(s['inner_pre'])} "
                f"[graph written at {s['inner_graph_written'][0] * 1000:.0f} ms, ninja started "
                f"at {s['inner_ninja_start'][0] * 1000:.0f} ms] + inner build "
                f"{sp('inner_span', True)} + after the last edge {ms(s['inner_post'])}")
            out(f"  {'':<{w}}  inner: split {sp('split_wall', True)} wall, partitions "
                f"{sp('slot_cpu', True, True)} CPU, unsplit backends "
                f"{sp('backend_cpu', True, True)} CPU, merge {sp('merge_wall', True)} wall; "
                f"cores idle at the end (last compile to the other cores' last) "
                f"{sp('tail_idle', True)}")

    if "floor" in c:
        fl = c["floor"][0]
        out(f"\nfloor on {args.jobs} cores (C, CPU-based, medians): {fl:.2f} s "
            f"({c['floor'][1]:.2f}–{c['floor'][2]:.2f}) = thin link + distributor before/after "
            f"its inner build + the inner build at best (split + merge + (partitions' CPU + "
            f"what the unsplit backends leave after filling the other cores during split and "
            f"merge) / {args.jobs}, at least split + slowest partition + merge) + final link: "
            "a perfect schedule on an idle machine")
        out(f"  floor / A's measured wall        {fl / est['a_wall']:.3f}  (goal ≤ "
            f"{GOALS['wall']}: "
            f"{'within reach' if fl / est['a_wall'] <= GOALS['wall'] else 'out of reach'} "
            "against A as measured)")
        out(f"  floor / A's CPU-based estimate   {fl / est['a_estimate']:.3f}  (goal ≤ "
            f"{GOALS['wall']}: "
            f"{'within reach' if fl / est['a_estimate'] <= GOALS['wall'] else 'out of reach'} "
            f"on an idle machine; A there: {est['a_estimate']:.2f} s = A's CPU "
            f"{est['a_cpu']:.2f} s minus the other modules' backends "
            f"{est['other_backends']:.2f} s, at least CPU / {args.jobs})")
    for v in ("C", "Cw"):
        if v in runs:
            rec = sorted(runs[v], key=lambda x: x["wall"])[len(runs[v]) // 2]
            print_schedule(LABELS[v], rec, out)


def main(argv=None):
    args = parse_args(argv)
    bench = Bench(args, args.clang, args.mtpc_distribute)
    work = bench.work
    (work / "caches").mkdir(parents=True, exist_ok=True)
    for f in (work / "caches").glob("*.sqlite*"):
        f.unlink()
    bench.wrapper("B", lib.ROOT / "bench" / "dtlto_plain.py")
    bench.wrapper("C", args.mtpc_distribute)
    variants = [v for v in VARIANTS if not (v == "Cw" and args.no_warm)]

    print(f"clang: {args.clang}; mtpc-distribute: {args.mtpc_distribute}; {args.jobs} jobs; "
          f"{os.cpu_count()} cores", flush=True)
    objs = bench.compile(args.sources)
    wcost = bench.wrapper_cost()
    print(f"stamp wrapper's own cost: {wcost * 1000:.1f} ms per link (bash start, two "
          "$EPOCHREALTIME stamps)", flush=True)
    if "Cw" in variants:
        print("warming the plan cache (one C link, not counted)", flush=True)
        bench.link("Cw", objs, work / "Cw" / "app", bench.warm_cache)
    load_start = os.getloadavg()
    runs = measure(bench, objs, variants, args.repeats)
    load_end = os.getloadavg()

    size_tool = llvm_bin_tool(args.clang, "llvm-size")
    check_args = shlex.split(args.check_args or "")
    text = {v: text_size(size_tool, work / v / "app") for v in variants}
    outputs = {v: program_output(work / v / "app", check_args) for v in variants}
    instr, rt_same = ({}, None) if args.no_callgrind or not args.runtime_sources else \
        runtime_counts(bench, args)
    summary, a_est = summarize(runs, text, instr, args.jobs)
    res = {"summary": summary, "a": a_est, "goals": GOALS, "repeats": args.repeats,
           "jobs": args.jobs, "clang": args.clang, "mtpc_distribute": args.mtpc_distribute,
           "mtpc_args": args.mtpc_arg, "sources": [str(s) for s in args.sources],
           "wrapper_cost": wcost, "loadavg_start": load_start, "loadavg_end": load_end,
           "same_output": all(outputs[v] == outputs["A"] for v in variants),
           "runtime_same_output": rt_same, "runs": runs}
    report(res, runs, args)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(res, indent=1) + "\n")
        print(f"\nwrote {args.json}")
    return 0 if res["same_output"] and rt_same is not False else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except lib.BenchError as e:
        lib.eprint(f"dtlto_bench: {e}")
        sys.exit(1)
