#!/usr/bin/env python3
"""MTPC benchmark runner: predictions from a Ninja build and the markdown + PNG report.

  bench/run.py predict BUILD_DIR [--cores 4,16,64] [--json OUT]
      Reads BUILD_DIR/.ninja_log (the last build's edge times) and the dependency graph
      (`ninja -t graph`, dyndep files included) and predicts the build's makespan at each
      core count by list scheduling (bench/predict.py). For MTPC, point it at an inner
      build (<target>.mtpc/) to see import + split + largest partition + merge.

  bench/run.py report --out DIR [--split JSON]... [--predict JSON]...
      Writes DIR/report.md with the tables, and PNG charts (gnuplot, pngcairo) of the
      per-partition compile CPU of each splitter and of the predicted speedups. Only the
      numbers in the given JSON files (split_bench.py --json, run.py predict/compare --json)
      appear: nothing is filled in. Also --compare JSON.

  bench/run.py compare synth|sqlite|cxx [--partitions 2,4,8,16] [--repeat R] [--json OUT]
      Issue #5's comparison: configures the project as plain ThinLTO and as MTPC with
      MTPC_MAX_PARTITIONS=k for each k, builds it, then relinks the measured target R times
      from the same objects (removing the output, MTPC's inner build and plan cache) and
      reports link wall time and total CPU (the whole process tree, via os.wait4) against
      plain ThinLTO, .text size, whether the program's output is identical, and for MTPC the
      critical path of the inner build and its predicted makespan at 4/16/64 cores.
      Heavy: at the default size each link is ~15 s of backend per configuration.
      Workloads: synth (bench/gen_synthetic.py), sqlite (the sqlite3 shell, bench/sqlite),
      cxx (nlohmann/json's unit test json_unit, bench/cxx, fetched by bench/get-cxx.sh).
"""
import argparse
import json
import pathlib
import shutil
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import lib  # noqa: E402
import predict  # noqa: E402


def cmd_predict(args):
    build = pathlib.Path(args.build_dir)
    log = build / ".ninja_log"
    if not log.exists():
        print(f"run.py: {log} not found: build first", file=sys.stderr)
        return 1
    edges = predict.parse_ninja_log(log.read_text())
    if args.no_graph:
        inputs = {}
    else:
        inputs = predict.ninja_graph_inputs(build)
    deps = predict.edge_dependencies(edges, inputs)
    cores = [int(c) for c in args.cores.split(",")]
    s = predict.predict(edges, deps, cores)
    s["build_dir"] = str(build.resolve())
    print(f"{build}: {s['edges']} edges, measured makespan {s['measured_makespan']:.2f} s, "
          f"work {s['work']:.2f} s, critical path {s['critical_path']:.2f} s")
    print("  critical path: " + " -> ".join(s["critical_path_edges"]))
    for p, v in s["predicted"].items():
        print(f"  {p:>3} cores: predicted makespan {v['makespan']:.2f} s, "
              f"speedup vs 1 core {v['speedup']:.2f}x")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(s, indent=1) + "\n")
    return 0

SQLITE_CHECK = ("select sqlite_version(), 6*7, (with recursive c(x) as (select 1 union all "
                "select x + 1 from c where x < 100) select sum(x) from c);")
PROJECTS = {
    # name: (CMake prefix, link target measured, arguments of the output check run)
    "synth": ("SYNTH", "synth", []),
    "sqlite": ("SQLITE", "sqlite3", [":memory:", SQLITE_CHECK]),
    # doctest --success: every assertion with its expanded values, not just the summary
    "cxx": ("CXX", "json_unit", ["--success"]),
}


def text_size(exe):
    """Bytes of .text in exe (llvm-size -A)."""
    r = lib.run_measured([lib.llvm_tool("llvm-size"), "-A", exe])
    for line in r.stdout.splitlines():
        f = line.split()
        if len(f) >= 2 and f[0] == ".text":
            return int(f[1])
    return None


def compare_source(args):
    if args.project == "synth":
        sys.path.insert(0, str(lib.ROOT / "bench"))
        import gen_synthetic
        src = pathlib.Path(args.source_dir or lib.ROOT / "bench" / "work") / \
            f"synth-s{args.seed}-l{args.lines}"
        gen_synthetic.generate(src, args.seed, args.lines)
        return src
    if args.project == "cxx":
        lib.run_measured([lib.ROOT / "bench" / "get-cxx.sh"])
        return lib.ROOT / "bench" / "cxx"
    lib.run_measured([lib.ROOT / "bench" / "get-sqlite.sh"])
    return lib.ROOT / "bench" / "sqlite"


def cmd_compare(args):
    """Plain ThinLTO vs MTPC at several partition counts: the link step of one target, from
    compiled objects, measured (wall and total CPU of the whole link, inner build included)."""
    prefix, target, check_args = PROJECTS[args.project]
    src = compare_source(args)
    out = pathlib.Path(args.work).resolve() / (src.name if args.project == "synth"
                                               else args.project)
    clang = lib.llvm_tool("clang")
    clangxx = lib.llvm_tool("clang++") if args.project == "cxx" else None
    configs = [("thin", None)] + [(f"mtpc-{k}", int(k)) for k in args.partitions.split(",")]
    results = {"project": args.project, "source": str(src), "target": target,
               "repeat": args.repeat, "configs": {}}
    if args.project == "synth":
        results["lines"], results["seed"] = args.lines, args.seed
    reference = None
    for name, k in configs:
        bld = out / name
        cfg = ["cmake", "-G", "Ninja", "-S", src, "-B", bld, f"-DCMAKE_C_COMPILER={clang}"]
        if args.project == "cxx":
            cfg.append(f"-DCMAKE_CXX_COMPILER={clangxx}")
        if k is not None:
            cfg += [f"-D{prefix}_USE_MTPC=ON", f"-DMTPC_DIR={lib.mtpc_dir()}",
                    f"-DMTPC_MAX_PARTITIONS={k}", f"-DMTPC_CACHE={bld / 'plans.sqlite'}",
                    f"-DMTPC_SPLIT_THRESHOLD={args.threshold}"]
        print(f"{name}: configure + build", flush=True)
        lib.run_measured(cfg)
        lib.run_measured(["ninja", "-C", bld, target])
        exe = bld / target
        runs = []
        for r in range(args.repeat):
            # relink from the same objects: remove the output, MTPC's inner build and its
            # plan cache (unless --warm-cache), so every backend / split / partition reruns
            exe.unlink()
            shutil.rmtree(bld / f"{target}.mtpc", ignore_errors=True)
            if not args.warm_cache:
                for f in bld.glob("plans.sqlite*"):
                    f.unlink()
            m = lib.run_measured(["ninja", "-C", bld, target])
            runs.append({"wall": m.wall, "cpu": m.cpu})
            if k is not None:
                # mtpc-link's one-line summary says what was split; a fallback (a module
                # compiled unsplit after a failed split) makes the figures meaningless
                summary = [ln for ln in (m.stdout + m.stderr).splitlines()
                           if ln.startswith("mtpc-link:")]
                runs[-1]["mtpc_link"] = summary
                if not (bld / f"{target}.mtpc").is_dir():
                    raise lib.BenchError(f"{name}: the link did not go through mtpc-link "
                                         f"(no {target}.mtpc/ in {bld})")
                if any("fallback" in ln or "warning" in ln for ln in summary):
                    print(f"  {name}: WARNING from mtpc-link:\n    " + "\n    ".join(summary),
                          file=sys.stderr)
            print(f"  {name} repeat {r + 1}: link {m.wall:.2f} s wall, {m.cpu:.2f} s CPU",
                  flush=True)
        res = {"partitions": k, "runs": runs,
               "link_wall": lib.median(x["wall"] for x in runs),
               "link_cpu": lib.median(x["cpu"] for x in runs),
               "text_bytes": text_size(exe)}
        outp = lib.run_measured([exe, *check_args]).stdout
        if reference is None:
            reference = outp
        res["same_output"] = outp == reference
        if not res["same_output"]:
            print(f"  {name}: PROGRAM OUTPUT DIFFERS from plain ThinLTO", file=sys.stderr)
        inner = bld / f"{target}.mtpc"
        if (inner / ".ninja_log").exists():
            edges = predict.parse_ninja_log((inner / ".ninja_log").read_text())
            deps = predict.edge_dependencies(edges, predict.ninja_graph_inputs(inner))
            res["inner_predict"] = predict.predict(edges, deps, (4, 16, 64))
        if args.callgrind:
            import callgrind
            res["instructions"], _ = callgrind.instructions(
                [exe, *(check_args if args.project == "sqlite" else [])])
        results["configs"][name] = res
    base = results["configs"]["thin"]
    print(f"\n{args.project} ({src}): link of {target}, medians of {args.repeat}")
    print(f"{'config':<10} {'link wall':>10} {'ratio':>7} {'link CPU':>10} {'ratio':>7} "
          f"{'.text':>10} {'same output':>12} {'crit. path':>11}")
    for name, r in results["configs"].items():
        cp = r.get("inner_predict", {}).get("critical_path")
        print(f"{name:<10} {r['link_wall']:>9.2f}s {r['link_wall'] / base['link_wall']:>7.3f} "
              f"{r['link_cpu']:>9.2f}s {r['link_cpu'] / base['link_cpu']:>7.3f} "
              f"{r['text_bytes'] or 0:>10} {str(r['same_output']):>12} "
              f"{(f'{cp:.2f}s' if cp is not None else '-'):>11}")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(results, indent=1) + "\n")
        print(f"wrote {args.json}")
    return 0 if all(r["same_output"] for r in results["configs"].values()) else 1


def gnuplot(script, cwd):
    if shutil.which("gnuplot") is None:
        print("run.py: gnuplot not found (scripts/install-deps.sh installs gnuplot-nox): "
              "no charts", file=sys.stderr)
        return False
    r = subprocess.run(["gnuplot"], input=script, text=True, cwd=cwd, capture_output=True)
    if r.returncode != 0:
        print(f"run.py: gnuplot failed: {r.stderr.strip()}", file=sys.stderr)
        return False
    return True


def split_section(i, data, out):
    lines = []
    name = pathlib.Path(data["input"]).name
    u = data["unsplit"]
    lines += [f"### Split benchmark {i + 1}: `{name}`, {data['partitions']} partitions, "
              f"{data['opt']}, medians of {data['repeat']}", "",
              f"Unsplit ThinLTO backend: {u['backend_wall']:.2f} s wall, "
              f"{u['backend_cpu']:.2f} s CPU; compile of the post-import module: "
              f"{u['compile_cpu']:.2f} s CPU.", "",
              "| splitter | partitions | sum CPU / unsplit (≤ 1.05) | slowest / mean (≤ 1.15) "
              "| split / backend (≤ 0.05) | critical path | predicted speedup |",
              "| --- | --- | --- | --- | --- | --- | --- |"]
    series = []
    for sp, d in data["splitters"].items():
        s = d["summary"]
        lines.append(f"| {sp} | {int(s['partitions'])} | {s['sum_cpu_over_unsplit']:.3f} | "
                     f"{s['slowest_over_mean']:.3f} | {s['split_over_backend']:.3f} | "
                     f"{s['critical_path']:.2f} s | {s['predicted_speedup']:.2f}x |")
        # per-partition CPU: median over repeats, partition by partition
        runs = d["runs"]
        n = min(len(r["part_cpu"]) for r in runs)
        per = [sorted(r["part_cpu"][k] for r in runs)[len(runs) // 2] for k in range(n)]
        series.append((sp, per))
    lines.append("")
    dat = out / f"split{i + 1}.dat"
    with dat.open("w") as f:
        width = max(len(p) for _, p in series)
        f.write("# partition " + " ".join(sp for sp, _ in series) + "\n")
        for k in range(width):
            f.write(f"{k} " + " ".join(f"{p[k]:.4f}" if k < len(p) else "NaN"
                                       for _, p in series) + "\n")
    png = f"split{i + 1}.png"
    plots = ", ".join(f"'{dat.name}' using {j + 2}:xtic(1) title '{sp}'"
                      for j, (sp, _) in enumerate(series))
    ok = gnuplot(f"""set terminal pngcairo noenhanced size 800,450
set output '{png}'
set title 'Partition compile CPU ({name}, {data["opt"]})'
set xlabel 'partition'
set ylabel 'CPU seconds'
set style data histograms
set style fill solid 0.8 border -1
set yrange [0:*]
set grid ytics
plot {plots}
""", out)
    if ok:
        lines += [f"![partition compile CPU]({png})", ""]
    return lines


def predict_section(preds, out):
    lines = ["### Predicted build makespan (list scheduling on the measured edge times)", "",
             "| build | edges | measured | work | critical path | "
             + " | ".join(f"{p} cores" for p in preds[0]["predicted"]) + " |",
             "| --- | --- | --- | --- | --- | " + " | ".join("---" for _ in preds[0]["predicted"])
             + " |"]
    for s in preds:
        lines.append(f"| `{s['build_dir']}` | {s['edges']} | {s['measured_makespan']:.2f} s | "
                     f"{s['work']:.2f} s | {s['critical_path']:.2f} s | "
                     + " | ".join(f"{v['makespan']:.2f} s ({v['speedup']:.2f}x)"
                                  for v in s["predicted"].values()) + " |")
    lines.append("")
    dat = out / "predict.dat"
    with dat.open("w") as f:
        for i, s in enumerate(preds):
            f.write(f"# {s['build_dir']}\n")
            for p, v in s["predicted"].items():
                f.write(f"{p} {v['speedup']:.4f}\n")
            f.write("\n\n")
    plots = ", ".join(f"'predict.dat' index {i} using 1:2 with linespoints title "
                      f"'{pathlib.Path(s['build_dir']).name}'" for i, s in enumerate(preds))
    ok = gnuplot(f"""set terminal pngcairo noenhanced size 800,450
set output 'predict.png'
set title 'Predicted speedup vs one core'
set xlabel 'cores'
set ylabel 'speedup'
set logscale x 2
set key left top
set grid
plot {plots}
""", out)
    if ok:
        lines += ["![predicted speedup](predict.png)", ""]
    return lines


def compare_section(i, data, out):
    base = data["configs"]["thin"]
    what = {"synth": f"synthetic, {data.get('lines')} lines, seed {data.get('seed')}",
            "sqlite": "SQLite", "cxx": "nlohmann/json unit test"}.get(data["project"],
                                                                      data["project"])
    lines = [f"### Whole link of `{data['target']}` ({what}), medians of {data['repeat']}", "",
             "| build | link wall | / plain | link CPU | / plain | .text bytes | same output "
             "| inner critical path | predicted 4 / 16 / 64 cores |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for name, r in data["configs"].items():
        p = r.get("inner_predict")
        pred = (" / ".join(f"{v['makespan']:.2f} s" for v in p["predicted"].values())
                if p else "—")
        cp = f"{p['critical_path']:.2f} s" if p else "—"
        lines.append(f"| {name} | {r['link_wall']:.2f} s | {r['link_wall'] / base['link_wall']:.3f}"
                     f" | {r['link_cpu']:.2f} s | {r['link_cpu'] / base['link_cpu']:.3f} | "
                     f"{r['text_bytes']} | {'yes' if r['same_output'] else 'NO'} | {cp} | {pred} |")
    lines.append("")
    dat = out / f"compare{i + 1}.dat"
    with dat.open("w") as f:
        f.write("# config link_wall link_cpu\n")
        for name, r in data["configs"].items():
            f.write(f"{name} {r['link_wall']:.4f} {r['link_cpu']:.4f}\n")
    png = f"compare{i + 1}.png"
    if gnuplot(f"""set terminal pngcairo noenhanced size 800,450
set output '{png}'
set title 'Link of {data["target"]} ({what})'
set ylabel 'seconds'
set style data histograms
set style fill solid 0.8 border -1
set yrange [0:*]
set grid ytics
plot '{dat.name}' using 2:xtic(1) title 'wall', '' using 3 title 'CPU'
""", out):
        lines += [f"![link time]({png})", ""]
    lines += speedup_chart(i, data, what, out)
    return lines


def speedup_chart(i, data, what, out):
    """Speedup of the link against the partition count, with the ideal line (speedup =
    partitions): measured on this machine, and predicted for 16 and 64 cores from the inner
    build's edge times. Plain ThinLTO's link is taken as its own makespan at any core count,
    which holds when one module's backend dominates it (all three workloads here)."""
    base = data["configs"]["thin"]["link_wall"]
    rows = []
    for r in data["configs"].values():
        p = r.get("inner_predict")
        if not r.get("partitions") or not p:
            continue
        pred = {int(k): v["makespan"] for k, v in p["predicted"].items()}
        rows.append((r["partitions"], base / r["link_wall"],
                     base / pred[16] if 16 in pred else 0, base / pred[64] if 64 in pred else 0))
    if len(rows) < 2:
        return []
    rows.sort()
    dat = out / f"speedup{i + 1}.dat"
    with dat.open("w") as f:
        f.write("# partitions measured predicted16 predicted64\n")
        for k, m, p16, p64 in rows:
            f.write(f"{k} {m:.4f} {p16:.4f} {p64:.4f}\n")
    png = f"speedup{i + 1}.png"
    if not gnuplot(f"""set terminal pngcairo noenhanced size 800,450
set output '{png}'
set title 'Link speedup over plain ThinLTO: {data["target"]} ({what})'
set xlabel 'partitions'
set ylabel 'speedup'
set logscale x 2
set xrange [1.5:{max(k for k, *_ in rows) * 1.3}]
set yrange [0:*]
set grid
set key left top
plot x title 'ideal (speedup = partitions)' with lines dashtype 2 lc rgb 'gray', \\
     '{dat.name}' using 1:2 title 'measured, 2 cores' with linespoints lw 2, \\
     '' using 1:3 title 'predicted, 16 cores' with linespoints, \\
     '' using 1:4 title 'predicted, 64 cores' with linespoints
""", out):
        return []
    return [f"![speedup against partitions]({png})", ""]


def cmd_report(args):
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    md = ["# MTPC benchmark report", "",
          "Generated by `bench/run.py report` from measured JSON files "
          "(see docs/performance.md for how each was produced).", ""]
    if not args.split and not args.predict and not args.compare:
        md += ["No measurements given.", ""]
    for i, path in enumerate(args.compare or []):
        md += compare_section(i, json.loads(pathlib.Path(path).read_text()), out)
    for i, path in enumerate(args.split or []):
        md += split_section(i, json.loads(pathlib.Path(path).read_text()), out)
    if args.predict:
        md += predict_section([json.loads(pathlib.Path(p).read_text()) for p in args.predict],
                              out)
    (out / "report.md").write_text("\n".join(md))
    print(f"wrote {out / 'report.md'}")
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("predict", help="predict a Ninja build's makespan at N cores")
    p.add_argument("build_dir")
    p.add_argument("--cores", default="4,16,64", help="comma list (default 4,16,64)")
    p.add_argument("--no-graph", action="store_true",
                   help="ignore dependencies (treat edges as independent)")
    p.add_argument("--json", help="write the prediction here")
    p.set_defaults(fn=cmd_predict)
    c = sub.add_parser("compare", help="plain ThinLTO vs MTPC at several partition counts "
                                       "(link of one target, from compiled objects)")
    c.add_argument("project", choices=sorted(PROJECTS))
    c.add_argument("--partitions", default="2,4,8,16", help="comma list (default 2,4,8,16)")
    c.add_argument("--lines", type=int, default=80000, help="synth: lines of big.c")
    c.add_argument("--seed", type=int, default=1, help="synth: seed")
    c.add_argument("--threshold", type=int, default=0,
                   help="MTPC_SPLIT_THRESHOLD (default 0: every module is split)")
    c.add_argument("-r", "--repeat", type=int, default=1, help="link repeats (default 1)")
    c.add_argument("--warm-cache", action="store_true",
                   help="keep MTPC's plan cache between repeats")
    c.add_argument("--callgrind", action="store_true",
                   help="also count the program's instructions under callgrind")
    c.add_argument("--work", default=str(lib.ROOT / "bench" / "out" / "compare"),
                   help="build folders (default bench/out/compare)")
    c.add_argument("--source-dir", help="synth: where to generate the project "
                                        "(default bench/work)")
    c.add_argument("--json", help="write the results here")
    c.set_defaults(fn=cmd_compare)
    r = sub.add_parser("report", help="markdown + PNG report from measured JSON files")
    r.add_argument("--out", required=True, help="report folder")
    r.add_argument("--split", action="append", help="split_bench.py --json output")
    r.add_argument("--predict", action="append", help="run.py predict --json output")
    r.add_argument("--compare", action="append", help="run.py compare --json output")
    r.set_defaults(fn=cmd_report)
    args = ap.parse_args(argv)
    return args.fn(args)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except lib.BenchError as e:
        print(f"run.py: {e}", file=sys.stderr)
        sys.exit(1)
