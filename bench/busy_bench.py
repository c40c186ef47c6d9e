#!/usr/bin/env python3
"""Two huge links (or compiles) at once on this machine: does a split still pay? (Issue 37,
item 1: "split only where it pays", the work board of common/workboard.h.)

Each run starts job A, then job B `--stagger` seconds later (as an outer build starts its
edges as their inputs get ready), and waits for both. Configs, interleaved (A B C C B A ...):
  plain   the job as given: lld's in-process ThinLTO (-Wl,--thinlto-jobs=<cores>) for a link,
          the plain clang compile for a compile;
  auto    through MTPC with its defaults: the second job sees the first's notice on the work
          board and keeps its module whole when a split would only share busy cores;
  ignore  through MTPC with --busy ignore: each job splits as if it were alone (MTPC before
          the board).
And, for the gain to keep: one job alone, plain against auto (the split pays there).

Jobs (--jobs-kind):
  link     two links of SQLite's shell (sqlite3.c + shell.c as ThinLTO objects, -O2), each
           to its own output; sqlite3.c (221k instructions) is each link's long pole;
  many     two links of SQLite's shell with 28 more modules each (generated, 5.4k instructions
           apiece, exported with --export-dynamic): alone, sqlite3.c is its link's long pole and
           is split; beside the other link's backends, a split only adds its overhead;
  compile  two plain -O2 compiles of sqlite3.c to two objects (mtpc-compile's native mode).

Figures: wall of the pair (from A's start to the last end), CPU of the pair (user + sys of
both process trees, os.wait4), medians over --runs runs, min-max spread, ratios of the
medians against plain. Each run starts from deleted outputs, inner directories, a fresh plan
cache and a fresh job pool. The 2 vCPUs of this machine differ and drift: the wall ratios are
the machine's as much as MTPC's; CPU is the steadier figure.

Usage:
  /usr/bin/python3 bench/busy_bench.py --jobs-kind link --runs 3
  /usr/bin/python3 bench/busy_bench.py --jobs-kind many --runs 3
  /usr/bin/python3 bench/busy_bench.py --jobs-kind compile --runs 3 --json bench/out/busy.json
"""
import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from lib import BenchError, eprint, fmt_r, fmt_s, median, mtpc_tool, ratio, versioned_driver  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
SQLITE = ROOT / "bench" / "work" / "sqlite-amalgamation"
CORES = os.cpu_count() or 1


def start(cmd, env, cwd):
    return subprocess.Popen([str(c) for c in cmd], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)


def finish(p):
    """Wait for p: (CPU seconds of its tree, its output); raises on failure."""
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    out = p.stdout.read()
    p.stdout.close()
    if p.returncode != 0:
        raise BenchError(f"{' '.join(p.args)} failed ({p.returncode}):\n{out[-3000:]}")
    return ru.ru_utime + ru.ru_stime, out


class Jobs:
    """The two jobs' commands for a config, and the files a run must start without."""

    def __init__(self, kind, work):
        self.kind, self.work = kind, work
        clang = versioned_driver("clang")
        self.clang = clang
        if kind in ("link", "many"):
            for src in ("sqlite3.c", "shell.c"):
                obj = work / (src + ".o")
                if not obj.exists():
                    subprocess.run([clang, "-O2", "-flto=thin", "-DSQLITE_THREADSAFE=0", "-c", SQLITE / src,
                                    "-I", SQLITE, "-o", obj], check=True)
            self.inputs = [work / "sqlite3.c.o", work / "shell.c.o"]
            for i in range(28 if kind == "many" else 0):
                obj = work / f"m{i}.o"
                if not obj.exists():
                    src = work / f"m{i}.c"
                    src.write_text("".join(
                        f"int m{i}_f{k}(int x) {{ int s = x; for (int j = 0; j < x; j++) "
                        f"s = s * {k + 3} + j * (s >> 3); return s; }}\n" for k in range(200)))
                    subprocess.run([clang, "-O2", "-flto=thin", "-c", src, "-o", obj], check=True)
                self.inputs.append(obj)

    def outputs(self, i):
        return self.work / (f"sqlite3.{i}.o" if self.kind == "compile" else f"out{i}")

    def cmd(self, config, i):
        out = self.outputs(i)
        if self.kind in ("link", "many"):
            export = ["-Wl,--export-dynamic"] if self.kind == "many" else []
            base = [self.clang, "-O2", "-flto=thin", "-fuse-ld=lld", *export, *self.inputs, "-o", out]
            if config == "plain":
                return base + [f"-Wl,--thinlto-jobs={CORES}", "-lm"]
            return [mtpc_tool("mtpc-link"), "--cache", self.work / "plans.sqlite",
                    *(["--busy", "ignore"] if config == "ignore" else []), "--", *base, "-lm"]
        base = [self.clang, "-O2", "-DSQLITE_THREADSAFE=0", "-c", SQLITE / "sqlite3.c", "-o", out]
        if config == "plain":
            return base
        return [mtpc_tool("mtpc-compile"), "--cache", self.work / "plans.sqlite",
                *(["--busy", "ignore"] if config == "ignore" else []), "--", *base]

    def clean(self):
        for i in (0, 1):
            out = self.outputs(i)
            out.unlink(missing_ok=True)
            shutil.rmtree(f"{out}.mtpc", ignore_errors=True)
        (self.work / "plans.sqlite").unlink(missing_ok=True)
        shutil.rmtree(self.work / "pool", ignore_errors=True)


def one_run(jobs, config, pair, stagger):
    jobs.clean()
    env = dict(os.environ, MTPC_JOBS_DIR=str(jobs.work / "pool"))
    t0 = time.perf_counter()
    procs = [start(jobs.cmd(config, 0), env, jobs.work)]
    if pair:
        time.sleep(stagger)
        procs.append(start(jobs.cmd(config, 1), env, jobs.work))
    cpu, outs = 0.0, []
    for p in procs:
        c, o = finish(p)
        cpu += c
        outs.append(o)
    return time.perf_counter() - t0, cpu, outs


def summary_lines(outs):
    return [l for o in outs for l in o.splitlines() if l.startswith(("mtpc-link", "mtpc-compile"))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs-kind", choices=["link", "many", "compile"], default="link")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--stagger", type=float, default=1.0,
                    help="seconds between the two jobs' starts (1: B starts during A's frontend or thin link; "
                         "4: during A's partitions)")
    ap.add_argument("--work", type=pathlib.Path, default=None, help="scratch directory (default: a temp dir)")
    ap.add_argument("--json", type=pathlib.Path, default=None)
    a = ap.parse_args()
    if not (SQLITE / "sqlite3.c").exists():
        raise SystemExit(f"{SQLITE}/sqlite3.c missing: run bench/get-sqlite.sh")
    work = a.work or pathlib.Path(tempfile.mkdtemp(prefix="mtpc-busy-"))
    work.mkdir(parents=True, exist_ok=True)
    jobs = Jobs(a.jobs_kind, work)
    sections = {"pair": ["plain", "auto", "ignore"], "alone": ["plain", "auto"]}
    results = {}
    for name, configs in sections.items():
        rows = {c: [] for c in configs}
        lines = {}
        for r in range(a.runs):
            order = configs if r % 2 == 0 else list(reversed(configs))
            for c in order:
                wall, cpu, outs = one_run(jobs, c, name == "pair", a.stagger)
                rows[c].append((wall, cpu))
                lines[c] = summary_lines(outs)
                eprint(f"{name} run {r + 1} {c}: wall {fmt_s(wall)} cpu {fmt_s(cpu)}")
        results[name] = {c: {"wall": [w for w, _ in v], "cpu": [u for _, u in v], "last_lines": lines[c]}
                         for c, v in rows.items()}
    what = {"link": "links of SQLite's shell", "many": "links of SQLite's shell + 28 modules",
            "compile": "plain compiles of sqlite3.c"}[a.jobs_kind]
    print(f"# two {what} on {CORES} cores, {a.runs} interleaved runs, stagger {a.stagger} s")
    for name, res in results.items():
        print(f"\n## {'two at once' if name == 'pair' else 'one alone'}")
        print("| config | wall median (min-max) | CPU median (min-max) | wall / plain | CPU / plain |")
        print("| --- | --- | --- | --- | --- |")
        pw, pc = median(res["plain"]["wall"]), median(res["plain"]["cpu"])
        for c, v in res.items():
            w, u = median(v["wall"]), median(v["cpu"])
            print(f"| {c} | {fmt_s(w)} ({fmt_s(min(v['wall']))}-{fmt_s(max(v['wall']))}) | {fmt_s(u)} "
                  f"({fmt_s(min(v['cpu']))}-{fmt_s(max(v['cpu']))}) | {fmt_r(ratio(w, pw))} | {fmt_r(ratio(u, pc))} |")
        for c, v in res.items():
            for l in v["last_lines"]:
                print(f"    {c}: {l}")
    if a.json:
        a.json.parent.mkdir(parents=True, exist_ok=True)
        a.json.write_text(json.dumps({"kind": a.jobs_kind, "runs": a.runs, "cores": CORES,
                                      "stagger": a.stagger, "results": results}, indent=1))
    if not a.work:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    try:
        main()
    except BenchError as e:
        raise SystemExit(f"busy_bench: {e}")
