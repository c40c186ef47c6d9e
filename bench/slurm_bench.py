#!/usr/bin/env python3
"""Issue #12's benchmark: mtpc-link --executor=slurm, its dispatch overhead, and the link's
makespan predicted on 4, 16 and 64 one-core nodes.

Method
------
1. Starts the test cluster of tests/slurm_cluster.py (munged, slurmctld and --cluster-nodes
   one-CPU slurmd nodes, default 2, each in a network namespace of its own on this machine)
   and runs every Slurm client (mtpc-link and the srun/salloc it starts) in the controller's
   namespace. The cluster is always taken down at the end, also after an error or Ctrl-C.
2. Workloads (--workloads): `sqlite`, the sqlite3 shell (shell.c + sqlite3.c from
   bench/get-sqlite.sh, -DSQLITE_ENABLE_MATH_FUNCTIONS, linked with -lm -lpthread -ldl), and
   `synth`, the program of bench/gen_synthetic.py (--seed, --lines: big.c, mod_*.c, main.c).
   Their bitcode objects are compiled once (clang of MTPC's LLVM, -O2 -flto=thin; reused when
   up to date). The large module (sqlite3.o, big.o) is the only one split: --threshold is the
   bitcode size of the largest other object (mtpc-link splits modules with more bytes).
3. Per repeat (--repeat, interleaved: the order of the links rotates each repeat), for each
   workload:
   - plain: the plain ThinLTO backend of the large module: mtpc-link --executor=slurm
     --partitions=1 (nothing split), that module's backend compile on a node;
   - K in --partitions: mtpc-link --executor=slurm --partitions=K --threshold=T in the
     cluster's namespace; its wall (the link on this cluster, salloc and scancel included).
   Every Slurm link takes a one-CPU allocation (--slurm-arg=--ntasks=1): the edges run one at
   a time, so that no compile shares this machine's two cores with another and each edge's
   time is its own (the plan is still made for 16 CPUs, mtpc-link's Slurm default).
   Every link starts from nothing: the inner directory <output>.mtpc/, the output and the
   plan cache (--cache, one per link) are removed first, so the thin link, split, every
   compile and merge run. Each program's output is compared with the plain link's.
4. Dispatch overhead, from each Slurm link's <inner>/slurm/edges.log (one line per remote
   compile: ready = the step asked srun, start/end = the compile on the node, back = srun
   returned): out = start - ready, back = back - end, and out + back. Median and p95 (nearest
   rank) over every successful remote compile of every link of the run. Issue #12's goal:
   median <= 0.1 s.
5. Predicted makespan of each Slurm link on N one-core nodes (--predict-nodes, default
   4,16,64), by list scheduling (bench/predict.py) over the inner build's dependency graph
   (`ninja -t graph`, dyndep included: predict.ninja_graph_inputs, edge_dependencies):
   - a remote edge (a backend or slot compile in edges.log) lasts its compile's CPU seconds
     on the node (edges.log, its successful try) plus the run's median out + back, and runs
     on any of the N nodes; the plain backend is measured the same way;
   - a local edge (thin link, split, merge, final link) keeps its .ninja_log duration and
     runs in a pool of --local-cores cores (default 2: this machine).
   Reported per workload and K: median (min-max) over the repeats of each prediction, the
   critical path split into thin link / split / compiles / merge / final link, and the ratio
   plain backend time / predicted link makespan at 16 nodes (issue #12's goal for synth, 16
   partitions, 16 nodes: >= 8x). As a check of the model, the same prediction for the one
   CPU each link had, beside the measured inner build.

Limits: the test cluster's nodes are namespaces of this machine (the link's wall here, one
edge at a time, is no prediction of a real cluster); the overhead is that of a cluster on one
host (no network, no shared-filesystem latency).

  bench/slurm_bench.py [--workloads sqlite,synth] [--partitions 16,64] [--repeat 3]
                       [--lines 80000] [--json OUT]
Needs root (network namespaces) and slurmctld, slurmd, munged, srun (scripts/install-deps.sh).
"""
import argparse
import json
import math
import os
import pathlib
import re
import shutil
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))
import lib  # noqa: E402
import predict  # noqa: E402
import slurm_cluster  # noqa: E402

SQLITE_CHECK = ("select sqlite_version(), 6*7, (with recursive c(x) as (select 1 union all "
                "select x + 1 from c where x < 100) select sum(x) from c);")
# srun's messages when it waits for free CPUs of the allocation, and the controller's
WAIT_MESSAGES = re.compile(r"Job step creation temporarily disabled|Requested nodes are busy"
                           r"|step creation temporarily disabled|Job step created")
CTL_WAIT = re.compile(r"temporarily disabled|Requested nodes are busy|Resource temporarily "
                      r"unavailable")


def log(msg):
    print(msg, flush=True)


# ---- statistics ----------------------------------------------------------------------------

def p95(values):
    """95th percentile, nearest rank."""
    v = sorted(values)
    if not v:
        return float("nan")
    return v[max(0, math.ceil(0.95 * len(v)) - 1)]


def stats(values):
    v = list(values)
    if not v:
        return {"n": 0, "median": float("nan"), "p95": float("nan"), "min": float("nan"),
                "max": float("nan")}
    return {"n": len(v), "median": lib.median(v), "p95": p95(v), "min": min(v), "max": max(v)}


def spread(values):
    v = list(values)
    return {"median": lib.median(v), "min": min(v) if v else float("nan"),
            "max": max(v) if v else float("nan"), "values": v}


# ---- workloads -------------------------------------------------------------------------------

class Workload:
    """Bitcode objects of one program, the large module among them and its link command."""

    def __init__(self, name, sources, large, cflags, ldflags, check_args, workdir):
        self.name, self.sources, self.cflags = name, sources, cflags
        self.ldflags, self.check_args = ldflags, check_args
        self.dir = workdir
        self.objs = [workdir / "obj" / (s.stem + ".o") for s in sources]
        self.large = workdir / "obj" / (large.stem + ".o")
        self.threshold = None

    def compile(self, clang):
        (self.dir / "obj").mkdir(parents=True, exist_ok=True)
        for src, obj in zip(self.sources, self.objs):
            cmd = [clang, "-O2", "-flto=thin", *self.cflags, "-c", str(src), "-o", str(obj)]
            stamp = obj.with_suffix(".cmd")
            if (obj.exists() and stamp.exists() and stamp.read_text() == " ".join(cmd)
                    and obj.stat().st_mtime >= src.stat().st_mtime):
                continue
            log(f"  compile {src.name} (-O2 -flto=thin)")
            lib.run_measured(cmd)
            stamp.write_text(" ".join(cmd))
        sizes = {o: o.stat().st_size for o in self.objs}
        others = [s for o, s in sizes.items() if o != self.large]
        self.threshold = max(others, default=0)
        if sizes[self.large] <= self.threshold:
            raise lib.BenchError(f"{self.large.name} is not the largest bitcode object: {sizes}")
        log(f"  {self.name}: {self.large.name} {sizes[self.large]} bytes of bitcode, the others "
            f"at most {self.threshold}: --threshold={self.threshold}")

    def link_cmd(self, clang, out):
        return [clang, "-O2", "-flto=thin", "-fuse-ld=lld", *map(str, self.objs), "-o", str(out),
                *self.ldflags]


def make_workloads(args):
    work = pathlib.Path(args.work).resolve()
    out = []
    for w in args.workloads:
        if w == "sqlite":
            amal = lib.ROOT / "bench" / "work" / "sqlite-amalgamation"
            if not (amal / "sqlite3.c").exists():
                log("sqlite: bench/get-sqlite.sh")
                lib.run_measured([lib.ROOT / "bench" / "get-sqlite.sh"])
            out.append(Workload("sqlite", [amal / "shell.c", amal / "sqlite3.c"],
                                amal / "sqlite3.c",
                                ["-DSQLITE_ENABLE_MATH_FUNCTIONS", f"-I{amal}"],
                                ["-lm", "-lpthread", "-ldl"], [":memory:", SQLITE_CHECK],
                                work / "sqlite"))
        elif w == "synth":
            import gen_synthetic
            src = work / f"synth-s{args.seed}-l{args.lines}" / "src"
            files = gen_synthetic.generate(src, args.seed, args.lines)
            cs = ["big.c"] + sorted(f for f in files if f.startswith("mod_")) + ["main.c"]
            out.append(Workload("synth", [src / f for f in cs], src / "big.c", [], [], [],
                                src.parent))
        else:
            raise lib.BenchError(f"unknown workload {w}")
    return out


# ---- one link ------------------------------------------------------------------------------

def fresh(out, cache):
    shutil.rmtree(str(out) + ".mtpc", ignore_errors=True)
    out.unlink(missing_ok=True)
    for f in cache.parent.glob(cache.name + "*"):
        f.unlink()


def program_output(w, exe):
    r = lib.run_measured([exe, *w.check_args], check=False)
    return f"{r.returncode}\n{r.stdout}"


def ninja_edges(inner):
    edges = predict.parse_ninja_log((inner / ".ninja_log").read_text())
    deps = predict.edge_dependencies(edges, predict.ninja_graph_inputs(inner))
    return edges, deps


def module_edge(edges, large):
    """The edge whose output is the large module's native object (backend or merge)."""
    pat = re.compile(r"^mod/" + re.escape(large.name) + r"-[0-9a-f]+/native\.o$")
    found = [e for e in edges if any(pat.match(o) for o in e.outputs)]
    if len(found) != 1:
        raise lib.BenchError(f"no single native.o edge of {large.name} in the inner build: "
                             f"{[e.name for e in edges]}")
    return found[0]


def plain_link(w, clang, mtpc_link, cluster, d):
    """The large module's plain ThinLTO backend: a Slurm link with one partition (nothing
    split), measured like the partitions, as CPU seconds on the node: (result, output)."""
    res, output = slurm_link(w, 1, clang, mtpc_link, cluster, d)
    inner = pathlib.Path(str(d / "prog") + ".mtpc")
    edges, _ = ninja_edges(inner)
    e = module_edge(edges, w.large)
    cpu = next(x["remote_compile"] for x in res["edges"] if x["name"] == e.name)
    if cpu is None:
        raise lib.BenchError(f"the backend of {w.large.name} did not run on the cluster")
    return {"backend": cpu, "wall": res["wall"], "edge": e.name}, output


def read_edges_log(inner):
    rows = []
    path = inner / "slurm" / "edges.log"
    if not path.exists():
        return rows
    for line in path.read_text().splitlines():
        f = line.split()
        if len(f) != 9:
            continue
        rows.append({"object": f[0], "node": f[1], "try": int(f[2]), "ready": float(f[3]),
                     "start": float(f[4]), "end": float(f[5]), "back": float(f[6]),
                     "exit": int(f[7]), "cpu": float(f[8])})
    return rows


def ctl_wait_lines(cluster):
    try:
        text = (cluster.dir / "slurmctld.log").read_text(errors="replace")
    except OSError:
        return 0
    return sum(1 for line in text.splitlines() if CTL_WAIT.search(line))


def kind(edge, remote):
    """thinlink, split, slot, backend, merge or link (final link, dwp): from the outputs."""
    outs = edge.outputs
    if any(o.startswith("index/") or o == "regular-lto.o" for o in outs):
        return "thinlink"
    if any(o.endswith("/split.dd") for o in outs):
        return "split"
    if any(re.search(r"/p\d+\.o$", o) for o in outs):
        return "slot"
    if any(o.endswith("/native.o") for o in outs):
        return "backend" if edge.name in remote else "merge"
    return "link"


def slurm_link(w, k, clang, mtpc_link, cluster, d):
    """One mtpc-link --executor=slurm: its wall, the remote edges and the local ones."""
    d.mkdir(parents=True, exist_ok=True)
    out, cache = d / "prog", d / "plans.sqlite"
    fresh(out, cache)
    inner = pathlib.Path(str(out) + ".mtpc")
    waits0 = ctl_wait_lines(cluster)
    m = lib.run_measured(cluster.cmd_prefix() + [
        # --ntasks=1: one compile at a time, so that no compile shares this machine's cores
        # with another and each edge's time is its own (the plan still assumes 16 CPUs).
        mtpc_link, "--executor=slurm", "--slurm-arg=--ntasks=1", f"--partitions={k}",
        f"--threshold={w.threshold}",
        "--quiet", "--cache", cache, "--", *w.link_cmd(clang, out)], env=cluster.env())
    text = m.stdout + m.stderr
    if "building locally" in text:
        raise lib.BenchError(f"mtpc-link did not get a Slurm allocation:\n{text[-2000:]}")
    summary = re.search(r"\((?:[^()]*, )?" + re.escape(w.large.name) + r": (\d+) partitions",
                        text)
    edges, deps = ninja_edges(inner)
    names = {o: e.name for e in edges for o in e.outputs}
    rows = read_edges_log(inner)
    if not rows:
        raise lib.BenchError(f"{inner}/slurm/edges.log is empty: nothing ran on the cluster")
    remote = {}
    for r in rows:
        if r["exit"] >= 0:
            r["out"] = r["start"] - r["ready"]
            r["back_s"] = r["back"] - r["end"]
            r["compile_wall"] = r["end"] - r["start"]
            r["compile"] = r["cpu"]   # CPU seconds on the node: what the prediction uses
            name = names.get(r["object"])
            if name is None:
                raise lib.BenchError(f"edges.log object {r['object']} not in {inner}/.ninja_log")
            remote[name] = r["compile"]
    ok = [r for r in rows if r["exit"] >= 0]
    inner_span = (max(e.end_ms for e in edges) - min(e.start_ms for e in edges)) / 1000.0
    return {
        "wall": m.wall,
        "inner_makespan": inner_span,
        "partitions": int(summary.group(1)) if summary else None,
        "summary": next((l for l in text.splitlines() if l.startswith("mtpc-link:")), ""),
        "remote_edges": rows,
        "nodes_used": sorted({r["node"] for r in ok}),
        "retries": sum(1 for r in rows if r["try"] > 1),
        "failed_tries": sum(1 for r in rows if r["exit"] < 0),
        "srun_wait_messages": len(WAIT_MESSAGES.findall(text)),
        "ctl_wait_lines": ctl_wait_lines(cluster) - waits0,
        "edges": [{"name": e.name, "outputs": e.outputs, "seconds": e.seconds,
                   "kind": kind(e, remote), "remote_compile": remote.get(e.name),
                   "deps": sorted(deps.get(e.name, ()))} for e in edges],
    }, program_output(w, out)


# ---- prediction ----------------------------------------------------------------------------

def predict_link(link, overhead, nodes_list, local_cores):
    """Predicted makespans of one Slurm link on each node count, and its critical path."""
    durations, pools, deps, kinds = {}, {}, {}, {}
    for e in link["edges"]:
        if e["remote_compile"] is not None:
            durations[e["name"]] = e["remote_compile"] + overhead
        else:
            durations[e["name"]] = e["seconds"]
            pools[e["name"]] = "local"
        deps[e["name"]] = set(e["deps"])
        kinds[e["name"]] = e["kind"]
    preds = {}
    for n in nodes_list:
        m, _ = predict.list_schedule(durations, deps, n, pools=pools,
                                     capacity={"local": local_cores})
        preds[str(n)] = m
    cp, path = predict.critical_path(durations, deps)
    parts = {}
    for j in path:
        parts[kinds[j]] = parts.get(kinds[j], 0.0) + durations[j]
    return preds, {"length": cp, "edges": path, "by_kind": parts,
                   "remote_work": sum(d for j, d in durations.items() if j not in pools),
                   "local_work": sum(d for j, d in durations.items() if j in pools)}


# ---- the run -------------------------------------------------------------------------------

def run(args):
    clang = lib.versioned_driver("clang")
    mtpc_link = lib.mtpc_tool("mtpc-link")
    if not mtpc_link:
        raise lib.BenchError(f"mtpc-link not built in {lib.BUILD} (scripts/build.sh)")
    reason = slurm_cluster.unavailable_reason()
    if reason:
        raise lib.BenchError(reason)
    work = pathlib.Path(args.work).resolve()
    workloads = make_workloads(args)
    log("compile the bitcode objects")
    for w in workloads:
        w.compile(clang)
    ks = [int(k) for k in args.partitions]
    data = {"settings": {"workloads": args.workloads, "partitions": ks, "repeat": args.repeat,
                         "lines": args.lines, "seed": args.seed,
                         "cluster_nodes": args.cluster_nodes,
                         "predict_nodes": args.predict_nodes, "local_cores": args.local_cores,
                         "clang": clang, "mtpc_link": mtpc_link,
                         "host_cpus": os.cpu_count(),
                         "plain": "mtpc-link --executor=slurm --partitions=1: CPU seconds of "
                                  "the large module's backend on the node (edges.log)"},
            "workloads": {}}
    for w in workloads:
        data["workloads"][w.name] = {"large": w.large.name, "threshold": w.threshold,
                                     "objects": [o.name for o in w.objs], "plain": [],
                                     "links": {str(k): {"runs": []} for k in ks}}
    cdir = pathlib.Path(args.cluster_dir) if args.cluster_dir else \
        pathlib.Path(tempfile.mkdtemp(prefix="mtpcsb", dir="/tmp"))
    cluster = slurm_cluster.Cluster(cdir, nodes=args.cluster_nodes, cpus=1)
    try:
        log(f"start the test cluster ({args.cluster_nodes} one-CPU nodes) in {cdir}")
        cluster.up()
        configs = ["plain"] + ks
        for r in range(args.repeat):
            order = configs[r % len(configs):] + configs[:r % len(configs)]
            for w in workloads:
                wd = data["workloads"][w.name]
                outputs = {}
                for c in order:
                    d = work / "links" / w.name / str(c)
                    if c == "plain":
                        res, outputs[c] = plain_link(w, clang, mtpc_link, cluster, d)
                        wd["plain"].append(res)
                        log(f"[{r + 1}/{args.repeat}] {w.name} plain: backend of "
                            f"{w.large.name} {res['backend']:.2f} s")
                    else:
                        res, outputs[c] = slurm_link(w, c, clang, mtpc_link, cluster, d)
                        wd["links"][str(c)]["runs"].append(res)
                        log(f"[{r + 1}/{args.repeat}] {w.name} slurm K={c}: wall "
                            f"{res['wall']:.2f} s, {len(res['remote_edges'])} remote compiles "
                            f"on {','.join(res['nodes_used'])}, {res['partitions']} partitions")
                reference = outputs["plain"]
                for c in ks:
                    wd["links"][str(c)]["runs"][-1]["output_matches_plain"] = \
                        outputs[c] == reference
    except BaseException:
        if cluster.state:
            sys.stderr.write(cluster.log_tails() + "\n")
        raise
    finally:
        cluster.down()
        if not args.cluster_dir:
            shutil.rmtree(cdir, ignore_errors=True)
    analyse(data, args)
    return data


def analyse(data, args):
    ok = [e for wd in data["workloads"].values() for link in wd["links"].values()
          for run in link["runs"] for e in run["remote_edges"] if e["exit"] >= 0]
    over = {"edges": len(ok), "out": stats(e["out"] for e in ok),
            "back": stats(e["back_s"] for e in ok),
            "sum": stats(e["out"] + e["back_s"] for e in ok),
            "goal_median": 0.1}
    data["overhead"] = over
    o = over["sum"]["median"]
    for wd in data["workloads"].values():
        wd["plain_backend"] = spread(p["backend"] for p in wd["plain"])
        for k, link in wd["links"].items():
            runs = link["runs"]
            per = {str(n): [] for n in args.predict_nodes}
            check = []
            for run in runs:
                preds, cp = predict_link(run, o, args.predict_nodes, args.local_cores)
                run["predicted"], run["critical_path"] = preds, cp
                for n in per:
                    per[str(n)].append(preds[str(n)])
                # The links ran on one-CPU allocations, one edge at a time: model that.
                m, _ = predict_link(run, o, [1], 1)
                run["predicted_here"] = m["1"]
                check.append(run["predicted_here"])
            link["predicted"] = {n: spread(v) for n, v in per.items()}
            link["predicted_here"] = spread(check)
            link["wall"] = spread(r["wall"] for r in runs)
            link["inner_makespan"] = spread(r["inner_makespan"] for r in runs)
            link["partitions"] = sorted({r["partitions"] for r in runs if r["partitions"]})
            link["nodes_used"] = sorted({n for r in runs for n in r["nodes_used"]})
            link["retries"] = sum(r["retries"] for r in runs)
            link["srun_wait_messages"] = sum(r["srun_wait_messages"] for r in runs)
            link["ctl_wait_lines"] = sum(r["ctl_wait_lines"] for r in runs)
            link["outputs_match_plain"] = all(r.get("output_matches_plain") for r in runs)
            link["overhead_sum"] = stats(e["out"] + e["back_s"] for r in runs
                                         for e in r["remote_edges"] if e["exit"] >= 0)
            # the median run's critical path (by its 16-node or largest prediction)
            key = "16" if "16" in per else str(args.predict_nodes[-1])
            mid = sorted(runs, key=lambda r: r["predicted"][key])[len(runs) // 2]
            link["critical_path"] = mid["critical_path"]
            plain = wd["plain_backend"]["median"]
            link["ratio_plain_over_predicted"] = {
                n: lib.ratio(plain, link["predicted"][n]["median"]) for n in per}


def fmt(s, unit="s"):
    if s["min"] == s["max"]:
        return f"{s['median']:.2f}"
    return f"{s['median']:.2f} ({s['min']:.2f}-{s['max']:.2f})"


def report(data, args):
    o = data["overhead"]
    log("")
    log(f"Dispatch overhead per remote compile ({o['edges']} compiles, every Slurm link of the "
        f"run; measured on the {args.cluster_nodes}-node test cluster):")
    log(f"  {'':12} {'median':>8} {'p95':>8} {'max':>8}")
    for key, label in (("out", "out"), ("back", "back"), ("sum", "out+back")):
        s = o[key]
        log(f"  {label:12} {s['median']:8.3f} {s['p95']:8.3f} {s['max']:8.3f}   s")
    verdict = "met" if o["sum"]["median"] <= o["goal_median"] else "NOT met"
    log(f"  goal: median out+back <= {o['goal_median']} s: {verdict}")
    nodes = [str(n) for n in args.predict_nodes]
    for name, wd in data["workloads"].items():
        log("")
        log(f"{name}: plain ThinLTO backend of {wd['large']} (measured here, local, alone): "
            f"{fmt(wd['plain_backend'])} s")
        head = (f"  {'K':>3} {'parts':>5} {'wall here':>18} {'inner here':>18} "
                f"{'model here':>11} " + " ".join(f"{'PREDICTED ' + n + ' nodes':>26}"
                                                   for n in nodes))
        log(head)
        for k, link in wd["links"].items():
            parts = ",".join(map(str, link["partitions"])) or "?"
            log(f"  {k:>3} {parts:>5} {fmt(link['wall']):>18} {fmt(link['inner_makespan']):>18} "
                f"{link['predicted_here']['median']:11.2f} "
                + " ".join(f"{fmt(link['predicted'][n]):>26}" for n in nodes))
        for k, link in wd["links"].items():
            r = link["ratio_plain_over_predicted"]
            cp = link["critical_path"]
            by = ", ".join(f"{kd} {v:.2f}" for kd, v in cp["by_kind"].items())
            ratios = ", ".join(f"{n} nodes {r[n]:.2f}x" for n in nodes)
            log(f"  K={k}: plain backend / predicted link makespan: {ratios}")
            log(f"         critical path {cp['length']:.2f} s ({by}); remote work "
                f"{cp['remote_work']:.1f} s, local work {cp['local_work']:.1f} s; "
                f"nodes used here {','.join(link['nodes_used'])}; retries {link['retries']}; "
                f"out+back median {link['overhead_sum']['median']:.3f} s; "
                f"output = plain's: {link['outputs_match_plain']}")
            if link["srun_wait_messages"] or link["ctl_wait_lines"]:
                log(f"         srun waited for CPUs: {link['srun_wait_messages']} messages, "
                    f"{link['ctl_wait_lines']} controller log lines")
    if "synth" in data["workloads"] and "16" in data["workloads"]["synth"]["links"] \
            and "16" in nodes:
        r = data["workloads"]["synth"]["links"]["16"]["ratio_plain_over_predicted"]["16"]
        log("")
        log(f"issue #12 goal, synth at 16 partitions on 16 nodes: plain backend / predicted "
            f"link makespan = {r:.2f}x (goal >= 8x: {'met' if r >= 8 else 'NOT met'})")
    log("")
    log("wall here / inner here: measured on the test cluster (its nodes share this machine's "
        f"{os.cpu_count()} cores), one edge at a time; model here: the same prediction for "
        f"that one CPU; PREDICTED: list scheduling, local steps on "
        f"{args.local_cores} local cores, compiles on N one-core nodes, each + the median "
        f"out+back ({o['sum']['median']:.3f} s). Median (min-max) over {args.repeat} repeats.")


def csv_ints(s):
    try:
        v = [int(x) for x in s.split(",") if x]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a comma-separated list of integers: {s}")
    if not v or min(v) < 1:
        raise argparse.ArgumentTypeError(f"need positive integers: {s}")
    return v


def csv_workloads(s):
    v = [x for x in s.split(",") if x]
    bad = [x for x in v if x not in ("sqlite", "synth")]
    if bad or not v:
        raise argparse.ArgumentTypeError(f"workloads are sqlite and synth, not {s}")
    return v


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workloads", type=csv_workloads, default=["sqlite", "synth"],
                    help="comma-separated: sqlite, synth (default both)")
    ap.add_argument("--partitions", type=csv_ints, default=[16, 64],
                    help="partition counts K of the Slurm links (default 16,64)")
    ap.add_argument("--repeat", type=int, default=3, help="repeats, interleaved (default 3)")
    ap.add_argument("--lines", type=int, default=80000, help="synth: lines of big.c "
                    "(default 80000)")
    ap.add_argument("--seed", type=int, default=1, help="synth: seed (default 1)")
    ap.add_argument("--predict-nodes", type=csv_ints, default=[4, 16, 64],
                    help="node counts of the predictions (default 4,16,64)")
    ap.add_argument("--local-cores", type=int, default=2,
                    help="cores for the local steps in the predictions (default 2: this "
                         "machine)")
    ap.add_argument("--cluster-nodes", type=int, default=2,
                    help="one-CPU nodes of the test cluster (default 2)")
    ap.add_argument("--cluster-dir", help="the test cluster's directory (default: a new one "
                    "in /tmp, removed at the end; the path must be short: unix sockets)")
    ap.add_argument("--work", default=str(lib.ROOT / "bench" / "out" / "slurm_bench"),
                    help="objects and links (default bench/out/slurm_bench)")
    ap.add_argument("--json", help="write every number (and every edge) to this file")
    args = ap.parse_args(argv)
    if args.repeat < 1 or args.local_cores < 1 or args.cluster_nodes < 1:
        ap.error("--repeat, --local-cores and --cluster-nodes must be >= 1")
    try:
        data = run(args)
    except lib.BenchError as e:
        print(f"slurm_bench.py: {e}", file=sys.stderr)
        return 1
    report(data, args)
    if args.json:
        p = pathlib.Path(args.json)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps(data, indent=1) + "\n")
        log(f"wrote {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
