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
      numbers in the given JSON files (from split_bench.py --json and run.py predict --json)
      appear: nothing is filled in.

The full comparison of issue #5 (MTPC at 2/4/8/16 partitions against plain ThinLTO on the
synthetic project and SQLite) is not automated yet; see docs/performance.md.
"""
import argparse
import json
import pathlib
import shutil
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
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


def cmd_report(args):
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    md = ["# MTPC benchmark report", "",
          "Generated by `bench/run.py report` from measured JSON files "
          "(see docs/performance.md for how each was produced).", ""]
    if not args.split and not args.predict:
        md += ["No measurements given.", ""]
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
    r = sub.add_parser("report", help="markdown + PNG report from measured JSON files")
    r.add_argument("--out", required=True, help="report folder")
    r.add_argument("--split", action="append", help="split_bench.py --json output")
    r.add_argument("--predict", action="append", help="run.py predict --json output")
    r.set_defaults(fn=cmd_report)
    args = ap.parse_args(argv)
    return args.fn(args)


if __name__ == "__main__":
    sys.exit(main())
