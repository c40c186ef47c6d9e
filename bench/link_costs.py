#!/usr/bin/env python3
"""Every edge of the links of a whole project, MTPC against plain ThinLTO (issue 30, "Never
slower than plain ThinLTO": its item 1 and its goal; docs/performance-history.md, "Links of a whole
project against plain ThinLTO").

For each project (a wrapper bench/wrap/<wrap>/CMakeLists.txt around an unmodified Debian
source package, as in bench/wrap_sweep.py), two builds side by side:
  plain  -flto=thin -fuse-ld=lld (lld's in-process ThinLTO);
  mtpc   mtpc_enable() with MTPC's defaults: split by cost (100k instructions), relay auto,
         partitions = cores, the job budget (no MTPC_SPLIT_* / MTPC_MAX_PARTITIONS given).
Both are Release builds with clang/lld of MTPC's LLVM (`cmake -G Ninja -S bench/wrap/<wrap>
-DUSE_MTPC=OFF|ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=clang-19 ...`).

  1. the whole build (objects and links) of both, ninja -j <cores>;
  2. total work of the links phase, one config after the other: the link outputs (the
     outputs of CMake's executable, shared and module library link edges), MTPC's
     <output>.mtpc inner directories deleted, a fresh plan cache ($MTPC_CACHE), then
       taskset -c <cpu> ninja -j1
     with MTPC_JOBS=1 (`-DMTPC_JOBS=1`) and MTPC_JOB_SLOTS=1 for MTPC, and
     `-Wl,--thinlto-jobs=1` (CMAKE_{EXE,SHARED,MODULE}_LINKER_FLAGS) for plain, so that every
     edge runs after the other on one CPU (the VM's cpu0 is ~1.6x slower than cpu1: one CPU,
     the same for both). CPU = user + sys of the whole process tree (os.wait4 rusage of the
     ninja process). --pinned-runs runs of each config, interleaved A B B A (plain, mtpc, mtpc,
     ...): ratio of the medians MTPC / plain (and each pair's), goal <= 1.05;
  3. per-edge accounting of that run (of the run of median CPU). MTPC: each inner build's .ninja_log (edges by the rule
     its build.ninja gives their outputs: thin link, import + split, slot, merge, plain
     backend, final link) and mtpc-link's own time (each outer link edge's duration minus
     the inner edges it ran: parsing, archive extraction, the cost estimate, writing the
     graph, starting the inner ninja); plain: the lld process of each link edge (outer
     .ninja_log). The rest = the total CPU minus every edge (the outer ninja, process
     start-up the edges do not see). With -j1 on one CPU an edge's duration is about its
     CPU time (the wall of the whole run is printed beside the CPU to show how close);
  4. the links phase's wall on the machine's cores: ninja -j <cores>, MTPC's defaults,
     plain with `-Wl,--thinlto-jobs=<cores>`; --runs runs of each config interleaved
     A B B A (plain, mtpc, mtpc, plain, ...), each from deleted outputs and a fresh plan cache;
     medians, min and max, ratio of the medians (goal: MTPC <= plain);
  5. the project's ctest in both builds (after the last run: the outputs of the defaults).
Nothing here is a prediction: every figure is measured in this run. A CMake reconfigure
switches between the pinned and the default link settings (only link commands change: the
outer .ninja_log of each run is checked to hold nothing but link edges and CMake's library
symlinks).

Projects (--projects, comma separated; default the first three): libuv1 (the wrap_sweep
project whose links hold the most ThinLTO modules: the test and benchmark runners link every
test file, ~470 modules in 4 links, against libjpeg-turbo's ~370 in 18), googletest (its own
tests, -Dgtest_build_tests=ON, as a unity build: -DCMAKE_UNITY_BUILD=ON; ~50 links, each with
gtest-all.cc), pcre2-unity (PCRE2's 8-, 16- and 32-bit libraries unity-built: 8 links at
once, 52 modules, the 111k-instruction JIT+matcher module in six of them), or any other
wrap_sweep project.

With --fixed-cost OUTPUT, only a small link's fixed cost instead of 1-5 (after the builds):
the link edge of OUTPUT (its path as build.ninja names it) of each build, the command
`ninja -t commands` gives with the pinned link settings, run by itself pinned to --cpu,
--fixed-rounds rounds interleaved A B B A (the output and its inner directory deleted before
each run; each config keeps one plan cache across its rounds, as a build does); with --vs
BUILD a third config, the same MTPC command with that MTPC build's mtpc-link and mtpc-split
(before / after a change, side by side). CPU = user + sys of the link's process tree.

Usage:
  /usr/bin/python3 bench/link_costs.py --json bench/out/link_costs.json
  /usr/bin/python3 bench/link_costs.py --projects googletest --reuse-builds \
      --fixed-cost googletest/googletest/gtest_environment_test --fixed-rounds 10 --vs build-old
  /usr/bin/python3 bench/link_costs.py --projects googletest --runs 3 --work /tmp/lc

Needs what wrap_sweep.py needs (scripts/install-deps.sh: clang/lld 19, cmake, ninja,
dpkg-dev for apt-get source, a deb-src entry: bench/debsrc.sh) and taskset (util-linux).
Sources go to WORK/src (fetched once); builds to WORK/<project>/{plain,mtpc} (redone unless
--reuse-builds finds them made with the same command and tools).
"""
import argparse
import datetime
import json
import os
import pathlib
import platform
import re
import shutil
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import lib  # noqa: E402
import wrap_sweep  # noqa: E402

ROOT = lib.ROOT
WRAP = ROOT / "bench" / "wrap"
CONFIGS = ("plain", "mtpc")

# The projects beyond wrap_sweep's: wrap = the bench/wrap folder; the rest as in
# wrap_sweep.PROJECTS (src: Debian source package, var: the wrapper's source variable,
# need: a file the tree must hold, defs: more cache variables, test_env, tap).
EXTRA_PROJECTS = {
    "googletest": {"wrap": "googletest", "src": "googletest", "var": "SRC_DIR",
                   "need": "googletest/CMakeLists.txt", "defs": ["-DCMAKE_UNITY_BUILD=ON"]},
    # PCRE2 as Debian builds it (the 8-, 16- and 32-bit libraries, shared and static, JIT)
    # with unity-built libraries: each width's library is 4 unity modules (one of them
    # holds the JIT compiler and the matcher); pcre2test and pcre2_jit_test link all three
    # static ones, the other programs and the shared libraries link at the same time.
    # pcre2_jit_test fails 4 patterns of its 16- and 32-bit modes in every unity build of
    # PCRE2 10.42, with or without LTO (it passes built without unity): the same in both.
    "pcre2-unity": {"wrap": "pcre2", "src": "pcre2", "var": "PCRE2_SOURCE_DIR",
                    "need": "CMakeLists.txt", "test_env": {"srcdir": "{source}"},
                    "defs": ["-DCMAKE_UNITY_BUILD=ON", "-DPCRE2_BUILD_PCRE2_16=ON",
                             "-DPCRE2_BUILD_PCRE2_32=ON"]},
}
ALIASES = {"gtest": "googletest", "googletest-unity": "googletest", "pcre-unity": "pcre2-unity"}
DEFAULT_PROJECTS = "libuv1,googletest,pcre2-unity"

# CMake's Ninja rules: the link edges of executables, shared and module libraries (static
# libraries are archives: the same in both configs, not relinked) and their symlinks.
LINK_RULE_RE = re.compile(r"^(C|CXX)_(EXECUTABLE|SHARED_LIBRARY|MODULE_LIBRARY)_LINKER__")
SYMLINK_RULE_RE = re.compile(r"^CMAKE_SYMLINK_")

# Edge kinds of an inner build (the rules of ninja-gen/graph.c), in the table's order.
INNER_KINDS = (("thinlink", "thin link (index only)"), ("split", "import + split"),
               ("slot", "slots (partition compiles)"), ("merge", "merges"),
               ("backend", "plain backends"), ("link", "final link"), ("dwp", "dwp"),
               ("job", "DTLTO jobs"))


def log(msg):
    print(msg, flush=True)


def abba(i):
    """The configs in the order of round i of interleaved runs: plain, mtpc, then mtpc,
    plain, ... (A B B A)."""
    return CONFIGS if i % 2 == 0 else CONFIGS[::-1]


def project_spec(name):
    name = ALIASES.get(name, wrap_sweep.ALIASES.get(name, name))
    if name in EXTRA_PROJECTS:
        return name, dict(EXTRA_PROJECTS[name])
    if name in wrap_sweep.PROJECTS:
        return name, dict(wrap_sweep.PROJECTS[name], wrap=name)
    raise SystemExit(f"link_costs: unknown project {name!r}; known: "
                     f"{', '.join(sorted(set(EXTRA_PROJECTS) | set(wrap_sweep.PROJECTS)))}")


# ---------------------------------------------------------------- parsing

def unescape_ninja(tok):
    """A path of a build.ninja statement without Ninja's escapes ($ , $:, $$)."""
    return re.sub(r"\$([ :$])", r"\1", tok)


def build_rules(text):
    """{output: rule} of every build statement of a build.ninja text (explicit and implicit
    outputs; $-continued lines joined)."""
    text = re.sub(r"\$\n\s*", "", text)
    rules = {}
    for line in text.splitlines():
        if not line.startswith("build "):
            continue
        # the outputs end at the first ':' not escaped as '$:'
        m = re.match(r"build ((?:[^:$]|\$.)*):\s*(\S+)", line)
        if not m:
            continue
        outs = [unescape_ninja(t) for t in re.split(r"(?<!\$) +", m.group(1).strip())
                if t and t != "|"]
        for o in outs:
            rules[o] = m.group(2)
    return rules


def log_edges(text):
    """The edges of a .ninja_log text (v5: start, end, mtime, output, command hash per
    output): [{'start': s, 'end': s, 'seconds': s, 'outputs': [...]}], one per edge (its
    outputs' lines share start, end and hash), in start order. Later entries of an output
    replace earlier ones (as Ninja reads its log)."""
    latest = {}
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        f = line.split("\t")
        if len(f) != 5:
            continue
        try:
            start, end = int(f[0]), int(f[1])
        except ValueError:
            continue
        latest[f[3]] = (start, end, f[4])
    edges = {}
    for out, (start, end, h) in latest.items():
        e = edges.setdefault((start, end, h), {"start": start / 1000, "end": end / 1000,
                                               "seconds": (end - start) / 1000,
                                               "outputs": []})
        e["outputs"].append(out)
    return sorted(edges.values(), key=lambda e: (e["start"], e["end"], e["outputs"]))


def kinds_of(edges, rules, classify):
    """{kind: {'count': n, 'seconds': s}} of edges; an edge's kind is classify(rule of its
    first output that has one)."""
    res = {}
    for e in edges:
        rule = next((rules[o] for o in e["outputs"] if o in rules), None)
        k = classify(rule)
        d = res.setdefault(k, {"count": 0, "seconds": 0.0})
        d["count"] += 1
        d["seconds"] += e["seconds"]
    return res


def outer_kind(rule):
    if rule and LINK_RULE_RE.match(rule):
        return "link"
    if rule and SYMLINK_RULE_RE.match(rule):
        return "symlink"
    return "other"


def inner_kind(rule):
    return rule if rule in dict(INNER_KINDS) else "other"


MODULE_DIR_RE = re.compile(r"^mod/([^/]+)/")


def inner_costs(inner_dir, timeline=None, offset=0):
    """(kinds, total seconds, edges) of the inner build of one MTPC link; seconds are CPU
    when a timeline is given, else durations. Each edge gets its 'kind' and, for a module's
    edge (an output under mod/<key>/), that 'module' key. offset: where this run's entries
    of the inner .ninja_log start (a relink appends to the log of the earlier links, whose
    entries keep their times on another ninja's clock: counted, they would take this run's
    CPU for edges that did not rerun)."""
    inner_dir = pathlib.Path(inner_dir)
    try:
        rules = build_rules((inner_dir / "build.ninja").read_text(errors="replace"))
        with open(inner_dir / ".ninja_log", "rb") as f:
            data = f.read()
        # a log shorter than the offset was rewritten (compacted): all of it, then
        text = data[offset if offset <= len(data) else 0:].decode(errors="replace")
    except OSError:
        return {}, 0.0, []
    edges = add_cpu(log_edges(text), text, timeline)
    for e in edges:
        e["kind"] = inner_kind(next((rules[o] for o in e["outputs"] if o in rules), None))
        m = next((MODULE_DIR_RE.match(o) for o in e["outputs"] if MODULE_DIR_RE.match(o)), None)
        e["module"] = m.group(1) if m else None
    return kinds_of(edges, rules, inner_kind), sum(e["seconds"] for e in edges), edges


def inner_log_offsets(bdir, outputs):
    """{link output: size of its inner .ninja_log} before a run (what the run appends starts
    there), each log recompacted first so that its ninja does not compact it at start."""
    res = {}
    for o in outputs:
        inner = pathlib.Path(bdir) / (o + ".mtpc")
        log = inner / ".ninja_log"
        if log.exists() and (inner / "build.ninja").exists():
            subprocess.run(["ninja", "-C", str(inner), "-t", "recompact"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
            res[o] = log.stat().st_size
    return res


def module_costs(edges):
    """{module key: {kind: seconds}} of the module edges among an inner build's edges."""
    res = {}
    for e in edges:
        if e.get("module"):
            d = res.setdefault(e["module"], {})
            d[e["kind"]] = d.get(e["kind"], 0.0) + e["seconds"]
    return res


def module_counts(edges):
    """{module key: {kind: edges}}: how many edges of each kind each module ran (a split
    module's slots)."""
    res = {}
    for e in edges:
        if e.get("module"):
            d = res.setdefault(e["module"], {})
            d[e["kind"]] = d.get(e["kind"], 0) + 1
    return res


def link_outputs(rules):
    """The outputs of the link edges among {output: rule} (the first output of each)."""
    return sorted(o for o, r in rules.items() if LINK_RULE_RE.match(r))


def account(outer_log_text, outer_rules, bdir, cpu, config, timeline=None, inner_offsets=None):
    """The per-edge accounting of one links run: outer edges by kind, and for MTPC the inner
    edges of every link by kind and mtpc-link's own time (link edge minus its inner edges);
    rest = cpu - every outer edge. An edge's seconds are its CPU from the timeline when one
    is given (a serial run), else its duration. inner_offsets: {link output: where this
    run's entries of its inner .ninja_log start} (inner_log_offsets before the run)."""
    bdir = pathlib.Path(bdir)
    edges = add_cpu(log_edges(outer_log_text), outer_log_text, timeline)
    outer = kinds_of(edges, outer_rules, outer_kind)
    res = {"outer": outer, "outer_seconds": sum(e["seconds"] for e in edges),
           "links": {e["outputs"][0]: e["seconds"] for e in edges
                     if outer_kind(outer_rules.get(e["outputs"][0])) == "link"},
           "edge_seconds": "cpu" if timeline is not None else "duration",
           "outer_durations": sum(e["duration"] for e in edges),
           "other_edges": [e["outputs"][0] for e in edges
                           if outer_kind(next((outer_rules[o] for o in e["outputs"]
                                               if o in outer_rules), None)) == "other"]}
    if config == "mtpc":
        inner, own, per_link = {}, 0.0, []
        for e in edges:
            out = e["outputs"][0]
            if outer_kind(outer_rules.get(out)) != "link":
                continue
            k, total, iedges = inner_costs(bdir / (out + ".mtpc"), timeline,
                                           (inner_offsets or {}).get(out, 0))
            for kind, d in k.items():
                t = inner.setdefault(kind, {"count": 0, "seconds": 0.0})
                t["count"] += d["count"]
                t["seconds"] += d["seconds"]
            own += e["seconds"] - total
            per_link.append({"output": out, "seconds": e["seconds"], "inner_seconds": total,
                             "kinds": k, "modules": module_costs(iedges),
                             "module_counts": module_counts(iedges)})
        res.update(inner=inner, mtpc_link_own=own, per_link=per_link)
    res["rest"] = cpu - res["outer_seconds"]
    return res


# ---------------------------------------------------------------- CPU by edge

class CpuTimeline:
    """The CPU used by one process tree over time: the tree runs in a cgroup of its own
    (cgroup v1 cpuacct.usage, ns; or v2 cpu.stat usage_usec) and a thread samples the
    group's usage every few milliseconds (from the other CPUs). cpu_between(t0, t1) is then
    the tree's CPU in that wall interval (times: time.time_ns()), interpolated: with -j1 on
    one CPU, an edge's interval holds its CPU alone, whatever else ran on that CPU meanwhile.
    Needs a writable cgroup hierarchy (root); else available is False and edges are counted
    by their durations."""

    def __init__(self, name, avoid_cpu=None):
        self.dir, self.read, self.samples = None, None, []
        self.avoid_cpu = avoid_cpu
        for base, reader in ((pathlib.Path("/sys/fs/cgroup/cpuacct"), self._v1),
                             (pathlib.Path("/sys/fs/cgroup"), self._v2)):
            probe = base / ("cpuacct.usage" if reader == self._v1 else "cgroup.controllers")
            if not probe.exists():
                continue
            d = base / name
            try:
                d.mkdir(exist_ok=True)
                reader(d)
            except OSError:
                continue
            self.dir, self.read = d, reader
            break

    @property
    def available(self):
        return self.dir is not None

    @staticmethod
    def _v1(d):
        return int((d / "cpuacct.usage").read_text())

    @staticmethod
    def _v2(d):
        for line in (d / "cpu.stat").read_text().splitlines():
            if line.startswith("usage_usec "):
                return int(line.split()[1]) * 1000
        raise OSError("no usage_usec")

    def wrap(self, cmd):
        """cmd run inside the group (a shell moves itself in, then execs cmd)."""
        if not self.available:
            return cmd
        return ["sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', str(self.dir),
                *[str(c) for c in cmd]]

    def start(self):
        import threading
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self):
        import time
        try:
            cpus = os.sched_getaffinity(0) - {self.avoid_cpu}
            if cpus:
                os.sched_setaffinity(0, cpus)     # this thread only
        except OSError:
            pass
        while not self._stop.is_set():
            self.samples.append((time.time_ns(), self.read(self.dir)))
            time.sleep(0.002)
        self.samples.append((time.time_ns(), self.read(self.dir)))

    def stop(self):
        self._stop.set()
        self._thread.join()
        try:
            self.dir.rmdir()
        except OSError:
            pass

    def total(self):
        return (self.samples[-1][1] - self.samples[0][1]) / 1e9 if self.samples else 0.0

    def usage_at(self, t):
        s = self.samples
        if not s:
            return 0
        import bisect
        i = bisect.bisect_left(s, (t, -1))
        if i == 0:
            return s[0][1]
        if i >= len(s):
            return s[-1][1]
        (t0, u0), (t1, u1) = s[i - 1], s[i]
        return u0 + (u1 - u0) * (t - t0) / (t1 - t0) if t1 > t0 else u1

    def cpu_between(self, t0, t1):
        return max(0.0, (self.usage_at(t1) - self.usage_at(t0)) / 1e9)


def run_pinned(cmd, env, cpu, name):
    """cmd pinned to `cpu`, its process tree's CPU sampled in a cgroup of its own (a
    CpuTimeline named `name`) when one can be made: (lib.run_measured's result, the stopped
    timeline or None)."""
    cmd = ["taskset", "-c", str(cpu), *(str(c) for c in cmd)]
    timeline = CpuTimeline(name, cpu)
    if timeline.available:
        cmd = timeline.wrap(cmd)
        timeline.start()
    else:
        timeline = None
    try:
        m = lib.run_measured(cmd, env=env, check=False, new_session=True)
    finally:
        if timeline is not None:
            timeline.stop()
    return m, timeline


def log_offset_ns(text, window=None):
    """Where a .ninja_log's clock (ms since that ninja started) lies on the wall clock: the
    median over its entries of mtime - end. Ninja records an output's mtime after the edge
    ends for restat rules (every inner rule but the final link), and the outputs of links
    are written at their end, so most entries give the end of their edge. window: (first,
    last) wall ns of the run: an entry whose output kept an older mtime (restat: a relink's
    unchanged partitions, merges, shards; most entries after an edit) says nothing about
    this run's clock and is left out."""
    d = []
    for line in text.splitlines():
        f = line.split("\t")
        if len(f) == 5 and not line.startswith("#"):
            try:
                mtime, end = int(f[2]), int(f[1])
            except ValueError:
                continue
            if window and not window[0] <= mtime <= window[1]:
                continue
            d.append(mtime - end * 1_000_000)
    return int(lib.median(d)) if d else None


def add_cpu(edges, text, timeline):
    """Each edge's 'cpu' (from the timeline; else its duration), 'seconds' set to it."""
    off = None
    if timeline is not None and timeline.samples:
        off = log_offset_ns(text, (timeline.samples[0][0], timeline.samples[-1][0] + 1_000_000_000))
    for e in edges:
        e["duration"] = e["seconds"]
        if off is not None:
            e["seconds"] = timeline.cpu_between(off + int(e["start"] * 1e9),
                                                off + int(e["end"] * 1e9))
    return edges


# ---------------------------------------------------------------- builds

class Build:
    """One configured build (plain or mtpc) of a project."""

    def __init__(self, bdir, config, cmake_cmd, work, cores):
        self.bdir = pathlib.Path(bdir)
        self.config = config
        self.cmake_cmd = [str(c) for c in cmake_cmd]   # without the link settings
        self.work = pathlib.Path(work)
        self.cores = cores

    def settings(self, pinned):
        """(cache variables, environment) of the links: pinned (one job) or the defaults."""
        env = dict(os.environ)
        for k in ("MAKEFLAGS", "MFLAGS", "MTPC_JOB_SLOTS", "MTPC_JOBS_OFF", "MTPC_CACHE"):
            env.pop(k, None)
        env["MTPC_JOBS_DIR"] = str(self.work / "jobs")     # a pool of our own
        if self.config == "plain":
            flag = f"-Wl,--thinlto-jobs={1 if pinned else self.cores}"
            defs = [f"-DCMAKE_{k}_LINKER_FLAGS={flag}" for k in ("EXE", "SHARED", "MODULE")]
        else:
            defs = [f"-DMTPC_JOBS={1 if pinned else 0}"]
            if pinned:
                env["MTPC_JOB_SLOTS"] = "1"
        return defs, env

    def configure(self, pinned, logfile):
        """Configure with the pinned (True) or default (False) link settings; None: without
        them (the first configure: CMake's compiler checks link with the system's ld, which
        knows no --thinlto-jobs; a reconfigure does not run them again)."""
        defs = self.settings(pinned)[0] if pinned is not None else []
        rc, _ = wrap_sweep.run(self.cmake_cmd + defs, out=logfile)
        if rc:
            raise lib.BenchError(f"configure failed in {self.bdir} (see {logfile})")

    def rules(self):
        rc, out = wrap_sweep.run(["ninja", "-C", self.bdir, "-t", "targets", "all"])
        if rc:
            raise lib.BenchError(f"ninja -t targets failed in {self.bdir}: {out[-500:]}")
        rules = {}
        for line in out.splitlines():
            path, sep, rule = line.rpartition(": ")
            if sep:
                rules[path] = rule.strip()
        return rules

    def clean_links(self, outputs, cache):
        for o in outputs:
            p = self.bdir / o
            p.unlink(missing_ok=True)
            shutil.rmtree(str(p) + ".mtpc", ignore_errors=True)
        pathlib.Path(cache).unlink(missing_ok=True)

    def links_run(self, pinned, tag, cpu=1, clean=True, cache=None):
        """Delete the link outputs (unless not clean) and run the links phase; returns its
        measurements and accounting. cache: the plan cache (default: a fresh one per tag;
        bench/relay_cost.py keeps one across an edit)."""
        defs, env = self.settings(pinned)
        rules = self.rules()
        outputs = link_outputs(rules)
        cache = pathlib.Path(cache) if cache else self.bdir / f"plans-{tag}.sqlite"
        env["MTPC_CACHE"] = str(cache)
        if clean:
            self.clean_links(outputs, cache)
        (self.work / "jobs").mkdir(parents=True, exist_ok=True)
        # a compacted log gets no compaction at the next start: what this run appends
        # starts at the current end
        wrap_sweep.run(["ninja", "-C", self.bdir, "-t", "recompact"])
        log_path = self.bdir / ".ninja_log"
        offset = log_path.stat().st_size if log_path.exists() else 0
        inner_offsets = inner_log_offsets(self.bdir, outputs) if self.config == "mtpc" else {}
        jobs = 1 if pinned else self.cores
        cmd = ["ninja", "-C", self.bdir, "-j", str(jobs)]
        if pinned:
            m, timeline = run_pinned(cmd, env, cpu, f"mtpc-link-costs-{os.getpid()}")
        else:
            m, timeline = lib.run_measured(cmd, env=env, check=False, new_session=True), None
        out_log = self.bdir / f"links-{tag}.log"
        out_log.write_text(m.stdout + m.stderr)
        if m.returncode:
            raise lib.BenchError(f"links of {self.bdir} failed ({m.returncode}); see {out_log}")
        text = log_path.read_text(errors="replace")[offset:]
        acc = account(text, rules, self.bdir, m.cpu, self.config, timeline, inner_offsets)
        if timeline is not None:
            acc["cgroup_cpu"] = timeline.total()
        scan = wrap_sweep.scan_log(out_log)
        return {"tag": tag, "pinned": pinned, "jobs": jobs, "cmd": m.cmd, "link_settings": defs,
                "env": {k: env[k] for k in ("MTPC_JOB_SLOTS",) if k in env},
                "wall": m.wall, "cpu": m.cpu, "user": m.user, "sys": m.sys,
                "links": len(outputs), "accounting": acc,
                "summaries": scan["summaries"], "modules": scan["modules"],
                "split": scan["split"], "partitions": scan["partitions"],
                "fallbacks": scan["fallbacks"]}


def tools_ok():
    if not shutil.which("taskset"):
        raise SystemExit("link_costs: taskset not found (util-linux)")


def make_builds(project, spec, source, tc, work, cores):
    builds = {}
    for config in CONFIGS:
        bdir = work / project / config
        cmd = ["cmake", "-G", "Ninja", "-S", WRAP / spec["wrap"], "-B", bdir,
               f"-DUSE_MTPC={'ON' if config == 'mtpc' else 'OFF'}",
               "-DCMAKE_BUILD_TYPE=Release",
               f"-DCMAKE_C_COMPILER={tc.cc}", f"-DCMAKE_CXX_COMPILER={tc.cxx}",
               f"-DMTPC_DIR={tc.build / 'cmake'}", f"-DCMAKE_MODULE_PATH={ROOT / 'cmake'}",
               *(f"-D{k}={v}" for k, v in tc.tools.items()),
               f"-D{spec['var']}={source}", *spec.get("defs", [])]
        builds[config] = Build(bdir, config, cmd, work, cores)
    return builds


def full_build(b, tc, reuse, timeout):
    """Configure (pinned link settings) and build everything; reused when --reuse-builds
    finds a build made by the same command with the same tools."""
    stamp = b.bdir / "link_costs.stamp"
    key = json.dumps(b.cmake_cmd + (sorted(tc.sha256.items()) if b.config == "mtpc" else []))
    if reuse and stamp.exists() and stamp.read_text() == key:
        log(f"  {b.config}: reusing {b.bdir}")
        b.configure(True, b.bdir / "configure.log")
        return {"reused": True}
    if b.bdir.exists():
        shutil.rmtree(b.bdir)
    b.bdir.mkdir(parents=True)
    log(f"  {b.config}: configure and build everything (ninja -j {b.cores})")
    b.configure(None, b.bdir / "configure.log")
    b.configure(True, b.bdir / "configure.log")
    _, env = b.settings(False)
    env["MTPC_CACHE"] = str(b.bdir / "plans-build.sqlite")
    (b.work / "jobs").mkdir(parents=True, exist_ok=True)
    m = lib.run_measured(["ninja", "-C", b.bdir, "-j", str(b.cores)], env=env, check=False,
                         new_session=True)
    (b.bdir / "build.log").write_text(m.stdout + m.stderr)
    if m.returncode:
        raise lib.BenchError(f"build of {b.bdir} failed; see {b.bdir / 'build.log'}")
    stamp.write_text(key)
    return {"reused": False, "wall": m.wall, "cpu": m.cpu}


def run_ctest(b, spec, timeout):
    tdirs = wrap_sweep.test_dirs(b.bdir)
    env = dict(os.environ)
    for k, v in spec.get("test_env", {}).items():
        env[k] = v.format(source=spec.get("source", ""))
    outputs = {}
    found = wrap_sweep.ctest(b.bdir, tdirs, spec.get("ctest_jobs", b.cores), timeout,
                             "link_costs", env=env, outputs=outputs)
    res = {s: sorted(k for k, v in found.items() if v[0] == s)
           for s in ("passed", "failed", "skipped")}
    res["counts"] = {s: len(v) for s, v in res.items()}
    if spec.get("tap"):
        sub = wrap_sweep.tap_all(outputs)
        res["subtests"] = {s: sum(1 for v in sub.values() if v == s)
                           for s in ("passed", "failed", "skipped")}
        res["subtests_failed"] = sorted(f"{k}: {n}" for (k, n), v in sub.items()
                                        if v == "failed")
    return res


# ---------------------------------------------------------------- one project

def stats(values):
    values = list(values)
    return {"median": lib.median(values), "min": min(values) if values else float("nan"),
            "max": max(values) if values else float("nan"), "values": values}


def bench_project(name, spec, tc, args, work):
    r = {"project": name, "wrap": spec["wrap"], "defs": spec.get("defs", [])}
    source = wrap_sweep.fetch_spec(name, spec, work / "src", work / "fetch.log")
    spec["source"] = str(source)
    r["source"] = source.name if not spec.get("sub") else source.parent.name
    log(f"{name}: {source}")
    builds = make_builds(name, spec, source, tc, work, args.cores)
    r["full_build"] = {c: full_build(b, tc, args.reuse_builds, args.timeout)
                       for c, b in builds.items()}
    if args.fixed_cost:
        r["fixed"] = fixed_cost(builds, tc, args)
        r["fixed"]["project"] = name
        return r
    # 1-3: the pinned links phase, --pinned-runs times interleaved A B B A (abba: a drift of
    # the machine in time weighs on both configs alike); the accounting table is the run of
    # median CPU of each config
    runs = {c: [] for c in CONFIGS}
    for i in range(args.pinned_runs):
        for c in abba(i):
            log(f"  {c}: links phase pinned to cpu {args.cpu}, -j1, run {i + 1}")
            p = builds[c].links_run(True, f"pinned{i + 1}", args.cpu)
            runs[c].append(p)
            log(f"    {p['links']} links, CPU {p['cpu']:.2f} s, wall {p['wall']:.2f} s")
    r["pinned_cpu"] = {c: stats(p["cpu"] for p in runs[c]) for c in CONFIGS}
    r["pinned_pair_ratios"] = [lib.ratio(m["cpu"], p["cpu"])
                               for p, m in zip(runs["plain"], runs["mtpc"])]
    r["pinned"] = {c: sorted(runs[c], key=lambda p: p["cpu"])[(len(runs[c]) - 1) // 2]
                   for c in CONFIGS}
    r["pinned_runs"] = {c: [p for p in runs[c] if p is not r["pinned"][c]] for c in CONFIGS}
    # 4: the links phase on all cores, interleaved
    for c in CONFIGS:
        builds[c].configure(False, builds[c].bdir / "configure.log")
    r["wall_runs"] = {c: [] for c in CONFIGS}
    for i in range(args.runs):
        for c in abba(i):
            w = builds[c].links_run(False, f"wall{i + 1}")
            r["wall_runs"][c].append(w)
            log(f"  {c}: links phase -j{args.cores}, run {i + 1}: wall {w['wall']:.2f} s, "
                f"CPU {w['cpu']:.2f} s")
    r["wall"] = {c: stats(w["wall"] for w in r["wall_runs"][c]) for c in CONFIGS}
    r["wall_cpu"] = {c: stats(w["cpu"] for w in r["wall_runs"][c]) for c in CONFIGS}
    r["cpu_ratio_pinned"] = lib.ratio(r["pinned_cpu"]["mtpc"]["median"],
                                      r["pinned_cpu"]["plain"]["median"])
    r["wall_ratio"] = lib.ratio(r["wall"]["mtpc"]["median"], r["wall"]["plain"]["median"])
    # 5: the project's tests, both builds
    if not args.no_tests:
        log("  ctest in both builds")
        r["ctest"] = {c: run_ctest(builds[c], spec, args.test_timeout) for c in CONFIGS}
    return r


def link_command(b, output):
    """The shell command of OUTPUT's edge in build b (its last line of `ninja -t commands`)."""
    rc, out = wrap_sweep.run(["ninja", "-C", b.bdir, "-t", "commands", output])
    lines = [l for l in out.splitlines() if l.strip()]
    if rc or not lines:
        raise lib.BenchError(f"no edge builds {output} in {b.bdir}: {out[-300:]}")
    return lines[-1]


def fixed_cost(builds, tc, args):
    """One link's fixed cost: its command alone, pinned, --fixed-rounds interleaved rounds of
    plain, mtpc and (with --vs) the other MTPC build's mtpc ('vs')."""
    out = args.fixed_cost
    cmds = {c: (b, link_command(b, out)) for c, b in builds.items()}
    if "mtpc-link" not in cmds["mtpc"][1]:
        raise lib.BenchError(f"{out}'s edge in the mtpc build does not run mtpc-link")
    if args.vs:
        vs = wrap_sweep.Toolchain(pathlib.Path(args.vs).resolve())
        cmd = cmds["mtpc"][1]
        for t in ("mtpc-link", "mtpc-split"):
            mine, theirs = lib.mtpc_tool(t, tc.build), lib.mtpc_tool(t, vs.build)
            if not (mine and theirs):
                raise lib.BenchError(f"{t} not found in {tc.build} or {vs.build}")
            cmd = cmd.replace(str(mine), str(theirs))
        cmds["vs"] = (builds["mtpc"], cmd)
    order = list(cmds)
    res = {c: [] for c in order}

    def once(c):
        b, cmd = cmds[c]
        env = b.settings(True)[1]
        env["MTPC_CACHE"] = str(b.bdir / f"plans-fixed-{c}.sqlite")
        (b.work / "jobs").mkdir(parents=True, exist_ok=True)
        p = b.bdir / out
        p.unlink(missing_ok=True)
        shutil.rmtree(str(p) + ".mtpc", ignore_errors=True)
        m = lib.run_measured(["taskset", "-c", str(args.cpu), "sh", "-c", cmd], cwd=b.bdir,
                             env=env, check=False, new_session=True)
        if m.returncode:
            raise lib.BenchError(f"{c}: the link of {out} failed: {m.stderr[-800:]}")
        return m.cpu

    for c in order:
        pathlib.Path(cmds[c][0].bdir / f"plans-fixed-{c}.sqlite").unlink(missing_ok=True)
        once(c)                       # warm: the page cache, the plan cache's history
    for i in range(args.fixed_rounds):
        for c in (order if i % 2 == 0 else order[::-1]):
            res[c].append(once(c))
    r = {"output": out, "rounds": args.fixed_rounds, "cpu": args.cpu,
         "commands": {c: v[1] for c, v in cmds.items()},
         "seconds": {c: stats(v) for c, v in res.items()}}
    for c in order[1:]:
        pairs = [lib.ratio(x, y) for x, y in zip(res[c], res["plain"])]
        r[f"{c}_vs_plain"] = {"median_of_pairs": lib.median(pairs), "pairs": pairs,
                              "ratio_of_medians": lib.ratio(r["seconds"][c]["median"],
                                                            r["seconds"]["plain"]["median"])}
    if "vs" in res:
        r["mtpc_vs_vs"] = lib.median([lib.ratio(x, y) for x, y in zip(res["mtpc"], res["vs"])])
    return r


def report_fixed(r):
    s = r["seconds"]
    out = [f"### {r['project']}: the fixed cost of one link ({r['output']}), pinned to cpu"
           f"{r['cpu']}, {r['rounds']} interleaved rounds", "",
           "| config | CPU median (s) | min–max | / plain: median of pairs | pairs min–max |",
           "| --- | ---: | ---: | ---: | ---: |"]
    for c in s:
        v = r.get(f"{c}_vs_plain")
        out.append(f"| {c} | {fmt(s[c]['median'], 3)} | {fmt(s[c]['min'], 3)}–"
                   f"{fmt(s[c]['max'], 3)} | "
                   + (f"**{fmt(v['median_of_pairs'], 4)}** | {fmt(min(v['pairs']), 3)}–"
                      f"{fmt(max(v['pairs']), 3)}" if v else "— | —") + " |")
    if "mtpc_vs_vs" in r:
        out += ["", f"mtpc / vs (this build against --vs), median of pairs: "
                    f"**{fmt(r['mtpc_vs_vs'], 4)}**"]
    return "\n".join(out)


# ---------------------------------------------------------------- output

def fmt(x, digits=2):
    return "—" if x is None or x != x else f"{x:.{digits}f}"


def edge_table(r):
    """Markdown rows of the per-edge table of a project's pinned runs."""
    p, m = r["pinned"]["plain"], r["pinned"]["mtpc"]
    pa, ma = p["accounting"], m["accounting"]
    what = "CPU s" if ma.get("edge_seconds") == "cpu" else "s (duration)"
    rows = [f"| edge kind (pinned, -j1) | plain: count | plain: {what} | MTPC: count | "
            f"MTPC: {what} |",
            "| --- | ---: | ---: | ---: | ---: |"]
    pl = pa["outer"].get("link", {"count": 0, "seconds": 0.0})
    rows.append(f"| link edge: lld with in-process ThinLTO (thin link, backends, link) | "
                f"{pl['count']} | {fmt(pl['seconds'])} | | |")
    for kind, label in INNER_KINDS + (("other", "other inner edges"),):
        d = ma.get("inner", {}).get(kind)
        if d:
            rows.append(f"| {label} | | | {d['count']} | {fmt(d['seconds'])} |")
    ml = ma["outer"].get("link", {"count": 0, "seconds": 0.0})
    rows.append(f"| mtpc-link's own (link edge minus its inner edges) | | | {ml['count']} | "
                f"{fmt(ma.get('mtpc_link_own'))} |")
    for kind, label in (("symlink", "CMake library symlinks"), ("other", "other outer edges")):
        a, b = pa["outer"].get(kind), ma["outer"].get(kind)
        if a or b:
            rows.append(f"| {label} | {a['count'] if a else 0} | {fmt(a['seconds'] if a else 0)}"
                        f" | {b['count'] if b else 0} | {fmt(b['seconds'] if b else 0)} |")
    rows.append(f"| rest: total CPU minus the edges (ninja, process start) | | "
                f"{fmt(pa['rest'])} | | {fmt(ma['rest'])} |")
    rows.append(f"| **total CPU** | | **{fmt(p['cpu'])}** | | **{fmt(m['cpu'])}** |")
    rows.append(f"| wall of the run; wall minus CPU (waiting: I/O, other processes on the CPU)"
                f" | | {fmt(p['wall'])}; {fmt(p['wall'] - p['cpu'])} | | {fmt(m['wall'])}; "
                f"{fmt(m['wall'] - m['cpu'])} |")
    return rows


def report(results):
    lines = []
    for r in results:
        if "error" in r:
            lines.append(f"## {r['project']}: not measured: {r['error']}\n")
            continue
        if "fixed" in r:
            lines.append(report_fixed(r["fixed"]) + "\n")
            continue
        m = r["pinned"]["mtpc"]
        defs = f", {' '.join(r['defs'])}" if r["defs"] else ""
        lines.append(f"## {r['project']} ({r['source']}{defs})")
        lines.append(f"{m['links']} links, {m['modules']} ThinLTO modules in them, "
                     f"{m['split']} split ({m['partitions']} partitions) by MTPC's defaults")
        lines.append("")
        lines.extend(edge_table(r))
        lines.append("")
        w, wc = r["wall"], r["wall_cpu"]
        n = len(w["plain"]["values"])
        lines.append("| links phase | plain | MTPC | MTPC / plain | goal |")
        lines.append("| --- | ---: | ---: | ---: | --- |")
        pc = r.get("pinned_cpu")
        if pc and len(pc["plain"]["values"]) > 1:
            k = len(pc["plain"]["values"])
            pairs = ", ".join(fmt(x, 3) for x in r["pinned_pair_ratios"])
            lines.append(f"| total CPU, pinned to one CPU, -j1, median of {k} interleaved "
                         f"[min–max] | {fmt(pc['plain']['median'])} s [{fmt(pc['plain']['min'])}–"
                         f"{fmt(pc['plain']['max'])}] | {fmt(pc['mtpc']['median'])} s "
                         f"[{fmt(pc['mtpc']['min'])}–{fmt(pc['mtpc']['max'])}] | "
                         f"**{fmt(r['cpu_ratio_pinned'], 3)}** (pairs: {pairs}) | ≤ 1.05 |")
        else:
            lines.append(f"| total CPU, pinned to one CPU, -j1 | "
                         f"{fmt(r['pinned']['plain']['cpu'])} s | {fmt(m['cpu'])} s | "
                         f"**{fmt(r['cpu_ratio_pinned'], 3)}** | ≤ 1.05 |")
        lines.append(f"| wall on {r.get('cores', 2)} cores, median of {n} interleaved "
                     f"[min–max] | {fmt(w['plain']['median'])} s [{fmt(w['plain']['min'])}–"
                     f"{fmt(w['plain']['max'])}] | {fmt(w['mtpc']['median'])} s "
                     f"[{fmt(w['mtpc']['min'])}–{fmt(w['mtpc']['max'])}] | "
                     f"**{fmt(r['wall_ratio'], 3)}** | ≤ 1 |")
        lines.append(f"| CPU of those runs, median | {fmt(wc['plain']['median'])} s | "
                     f"{fmt(wc['mtpc']['median'])} s | "
                     f"{fmt(lib.ratio(wc['mtpc']['median'], wc['plain']['median']), 3)} | |")
        if "ctest" in r:
            def cell(c):
                t = r["ctest"][c]
                s = f"{t['counts']['passed']} passed, {t['counts']['failed']} failed"
                if "subtests" in t:
                    s += (f" (subtests {t['subtests']['passed']} ok, "
                          f"{t['subtests']['failed']} not ok)")
                return s
            lines.append(f"| ctest | {cell('plain')} | {cell('mtpc')} | | both pass |")
        others = [f"{c} {run['tag']}: {', '.join(run['accounting']['other_edges'][:10])}"
                  for c in CONFIGS
                  for run in ([r["pinned"][c]] + r.get("pinned_runs", {}).get(c, [])
                              + r.get("wall_runs", {}).get(c, []))
                  if run["accounting"]["other_edges"]]
        if others:
            lines.append(f"\nedges other than links that ran in a links phase: "
                         f"{'; '.join(others)}")
        if m["fallbacks"]:
            lines.append(f"\nMTPC fallbacks/warnings: {'; '.join(m['fallbacks'][:5])}")
        lines.append("")
    return "\n".join(lines)


def git_commit():
    try:
        head = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True,
                              text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.split("\n")
        return head, [l[3:] for l in dirty if l.strip()]
    except OSError:
        return None, []


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--projects", default=DEFAULT_PROJECTS,
                    help=f"comma-separated projects (default {DEFAULT_PROJECTS}; any "
                         f"wrap_sweep project too)")
    ap.add_argument("--runs", type=int, default=3,
                    help="interleaved runs of each config on all cores (default 3)")
    ap.add_argument("--pinned-runs", type=int, default=1,
                    help="interleaved runs of each config pinned to one CPU (default 1); the "
                         "ratio is of the medians, the edge table shows the median run")
    ap.add_argument("--work", default=str(ROOT / "bench" / "out" / "link_costs"),
                    help="sources and builds (default bench/out/link_costs)")
    ap.add_argument("--json", help="write every measurement here")
    ap.add_argument("--mtpc-build", default=str(lib.BUILD),
                    help="the MTPC build whose tools are used (default build/)")
    ap.add_argument("--cpu", type=int, default=1,
                    help="the CPU of the pinned runs (default 1: the VM's faster one)")
    ap.add_argument("--cores", type=int, default=os.cpu_count() or 2,
                    help="-j of the full build and of the wall runs (default: the cores)")
    ap.add_argument("--reuse-builds", action="store_true",
                    help="keep a full build made with the same command and tools")
    ap.add_argument("--no-tests", action="store_true", help="skip ctest")
    ap.add_argument("--from-json", metavar="FILE",
                    help="print the tables of a JSON this script wrote, and exit")
    ap.add_argument("--fixed-cost", metavar="OUTPUT",
                    help="only the fixed cost of the link of OUTPUT (build.ninja's path), "
                         "pinned rounds after the builds (see above)")
    ap.add_argument("--fixed-rounds", type=int, default=10,
                    help="interleaved rounds of --fixed-cost (default 10)")
    ap.add_argument("--vs", metavar="BUILD",
                    help="with --fixed-cost: a third config, another MTPC build's tools")
    ap.add_argument("--timeout", type=int, default=7200, help=argparse.SUPPRESS)
    ap.add_argument("--test-timeout", type=int, default=900,
                    help="ctest's --timeout per test (default 900 s)")
    args = ap.parse_args(argv)
    if args.vs and not args.fixed_cost:
        ap.error("--vs goes with --fixed-cost")
    if args.from_json:
        data = json.loads(pathlib.Path(args.from_json).read_text())
        print(report(data["projects"]))
        print(f"(commit {data['commit']}; {data['date']})")
        return 0
    work = pathlib.Path(args.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    try:
        tc = wrap_sweep.Toolchain(pathlib.Path(args.mtpc_build).resolve())
    except wrap_sweep.SweepError as e:
        print(f"link_costs: {e}", file=sys.stderr)
        return 2
    tools_ok()
    head, dirty = git_commit()
    data = {"date": datetime.datetime.now().isoformat(timespec="seconds"), "commit": head,
            "dirty_files": dirty, "argv": sys.argv, "tools_sha256": tc.sha256,
            "llvm": tc.version, "cores": args.cores, "pinned_cpu": args.cpu,
            "machine": platform.node(), "projects": []}

    def dump():
        if args.json:
            pathlib.Path(args.json).write_text(json.dumps(data, indent=1, default=str) + "\n")

    status = 0
    for name in [p.strip() for p in args.projects.split(",") if p.strip()]:
        name, spec = project_spec(name)
        try:
            r = bench_project(name, spec, tc, args, work)
            r["cores"] = args.cores
        except (lib.BenchError, wrap_sweep.SweepError) as e:
            log(f"{name}: {e}")
            r = {"project": name, "error": str(e)}
            status = 1
        data["projects"].append(r)
        dump()
    # the tools must be the same from the first run to the last (another build of build/)
    after = wrap_sweep.Toolchain(pathlib.Path(args.mtpc_build).resolve()).sha256
    if after != tc.sha256:
        data["tools_changed_during_run"] = after
        dump()
        log("link_costs: warning: the MTPC tools changed during the run (see the JSON)")
        status = 1
    print()
    print(report(data["projects"]))
    print(f"(commit {head}{', with local changes to ' + ', '.join(dirty) if dirty else ''}; "
          f"{data['date']})")
    return status


if __name__ == "__main__":
    sys.exit(main())
