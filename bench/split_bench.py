#!/usr/bin/env python3
"""Issue #2's split benchmark: how well does a splitter cut one large post-import module?

For each splitter (mtpc-split, and llvm-split as the peer) the post-import module is split
into N partitions, each partition is compiled by itself with `clang -O2 -c -x ir` (one after
the other, so CPU figures are not disturbed by the partitions competing for 2 cores), and the
partition objects are merged with `ld.lld -r`. Every step is repeated --repeat times,
interleaved with the unsplit baseline, and medians are reported:

  sum CPU / unsplit     sum of partition compile CPU / CPU of compiling the unsplit module
                        (goal <= 1.05: splitting must not add much total work)
  slowest / mean        slowest partition compile / mean partition compile, CPU
                        (goal <= 1.15: balanced partitions)
  split / backend       splitter wall time / unsplit ThinLTO backend wall time
                        (goal <= 0.05: the split is a serial step)
  slowest / unit        slowest partition / the largest indivisible unit (SCC, comdat...)
                        compiled alone, without the available_externally copies its
                        partition gets (mtpc-split; goal <= 1.05, the alternative goal
                        when that unit is bigger than a fair share of the module)
  slowest / function    slowest partition / the module's largest single function (by
                        instruction count, or --unit-func) extracted with llvm-extract and
                        compiled alone (issue #13's goal <= 1.3)
  slowest without copies  the slowest partition compiled again with its
                        available_externally function bodies made declarations: how much
                        of the critical partition is copies and how much its own code
  critical path         split + slowest partition + merge (wall), and the backend speedup it
                        predicts with >= N cores (import step not included); the same
                        figures from CPU times are printed too (robust to a busy machine)
  on >= N cores         a prediction: the serial steps as they ran (import + split of the
                        pipeline run below, and the merge; wall) + the slowest partition's
                        CPU, over the unsplit backend's CPU (issue #13's goals: speedup >= 8
                        and serial steps <= 0.02 of the backend's CPU, at 16 partitions)
  split on N threads    (mtpc-split) a prediction: the pipeline's split ran its emission
                        on this machine's few threads. From its --stats: the split's wall
                        without the emission phase (serial: load, import, passes, plan,
                        write, start and exit), plus the per-partition emission CPU times
                        (each thread's CPU clock) scheduled on N threads, longest first onto
                        the least-loaded thread. The on >= N cores speedup and serial /
                        backend figures are given again with that split time
  backend on J cores    the module's whole backend as the pipeline runs it on this machine:
                        import + split (mtpc-split --thinlto-index), the partitions compiled
                        J at a time (--jobs, default: the machine's cores), merge; wall /
                        unsplit ThinLTO backend wall (issue #3's goal <= 0.53 on 2 cores).
                        llvm-split gets the post-import module (its import is not counted)
  floor                 what the backend on J cores could reach at best, estimated from the
                        serial split (wall; with the import for mtpc-split), the partitions'
                        CPU shared perfectly among J cores and the merge, over the unsplit
                        backend's CPU

CPU is each process's own user+system time (os.wait4), robust on a shared machine; wall
times are printed too but are noisy when others use the cores. mtpc-split runs with
--no-cache: every split is a fresh one, as on a first build. --mtpc-split-args may be given
more than once: each is one mtpc-split configuration, measured interleaved with the others.

Inputs (one of):
  default          SQLite's sqlite3.c, linked with shell.c (run bench/get-sqlite.sh first)
  --sources a.c..  a program; the module measured is --module (default the first source)
  --input M.bc     an already post-import module (the unsplit "backend" is then its compile)
"""
import argparse
import concurrent.futures
import heapq
import json
import os
import re
import pathlib
import shutil
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import lib  # noqa: E402


def partition_files(outdir):
    """Partition bitcode files in outdir, in index order (p0.bc… or llvm-split's p0…)."""
    files = []
    for p in outdir.iterdir():
        stem = p.name[:-3] if p.name.endswith(".bc") else p.name
        if stem.startswith("p") and stem[1:].isdigit():
            files.append((int(stem[1:]), p))
    return [p for _, p in sorted(files)]


class Splitter:
    def __init__(self, name, argv_fn, kind=None):
        self.name = name
        self.kind = kind or name    # "mtpc-split" or "llvm-split"
        self.argv_fn = argv_fn      # (input, outdir, n) -> argv
        self.runs = []              # one dict per repeat


def ir_compile(clang, compile_args, bc, obj):
    """The compile of a post-import module or partition. compile_args[0] says how: "slot"
    as MTPC's slots do it (a ThinLTO backend whose import is done: the post-link
    pipeline), "plain" as a plain `clang -c -x ir` (the pre-link per-module pipeline)."""
    how, *flags = compile_args
    if how == "slot":
        return lib.slot_compile_cmd(clang, flags, bc, obj)
    return [clang, *flags, "-c", "-x", "ir", bc, "-o", obj]


def run_splitter(sp, import_bc, outdir, n, clang, lld, objcopy, compile_args):
    shutil.rmtree(outdir, ignore_errors=True)
    outdir.mkdir(parents=True)
    split = lib.run_measured(sp.argv_fn(import_bc, outdir, n))
    parts = partition_files(outdir)
    if not parts:
        raise lib.BenchError(f"{sp.name} wrote no partitions in {outdir}")
    comp = []
    objs = []
    for p in parts:
        obj = p.with_name(p.name.removesuffix(".bc") + ".o")
        m = lib.run_measured(ir_compile(clang, compile_args, p, obj))
        lib.check_object(obj, f"{sp.name} partition {p.name}")
        comp.append(m)
        objs.append(obj)
    merged = outdir / "merged.o"
    t0 = time.perf_counter()
    merge_cpu = lib.run_measured([lld, "-r", *objs, "-o", merged]).cpu
    localize = outdir / "localize.txt"
    if localize.exists() and localize.stat().st_size:
        merge_cpu += lib.run_measured([objcopy, f"--localize-symbols={localize}",
                                       merged]).cpu
    merge_wall = time.perf_counter() - t0
    cpus = [m.cpu for m in comp]
    walls = [m.wall for m in comp]
    return {
        "partitions": len(parts),
        "split_wall": split.wall, "split_cpu": split.cpu,
        "part_cpu": cpus, "part_wall": walls,
        "sum_cpu": sum(cpus), "max_cpu": max(cpus), "mean_cpu": sum(cpus) / len(cpus),
        "max_wall": max(walls),
        "merge_wall": merge_wall, "merge_cpu": merge_cpu,
        "merged_bytes": merged.stat().st_size,
    }


def unit_alone(outdir, clang, extract, compile_args):
    """Compile the partition that holds the module's largest unit (mtpc-split's plan says
    which) with its available_externally copies made declarations: the unit by itself.
    Returns (cpu seconds, the unit's share of the module's cost), or None when the unit
    shares its partition with other code (then it is not bigger than a fair share)."""
    plan = json.loads((outdir / "plan.json").read_text())
    stats = plan["stats"]
    big = stats["largest_unit_cost"]
    holder = [q for q in plan["partitions"] if q["cost"] == big]
    if not holder:
        return None
    q = holder[0]
    # Inside the partitions, promoted locals carry their promoted name and ThinLTO's
    # `.llvm.<hash>` names are `.llvm.mtpc`; constant copies (variables) stay.
    rename = {r["from"]: r["to"] for r in plan["promoted"]}
    wanted = {re.sub(r"\.llvm\.\d+$", ".llvm.mtpc", rename.get(c, c)) for c in q["copies"]}
    src = outdir / q["file"]
    ir = lib.run_measured([lib.llvm_tool("llvm-dis"), src, "-o", "-"]).stdout
    defined = re.findall(r'^define available_externally [^@\n]*@("[^"]+"|[-\w.$]+)\(', ir, re.M)
    names = sorted(n.strip('"') for n in defined if n.strip('"') in wanted)
    unit_bc = outdir / "unit.bc"
    if names:
        lib.run_measured([extract, "--delete", *[f"--func={n}" for n in names], src,
                          "-o", unit_bc])
    else:
        shutil.copyfile(src, unit_bc)
    obj = outdir / "unit.o"
    m = lib.run_measured(ir_compile(clang, compile_args, unit_bc, obj))
    lib.check_object(obj, "largest unit alone")
    return m.cpu, big / stats["total_cost"]


def largest_function(bc):
    """(name, instructions, share of the module's instructions) of the module's largest
    defined function (available_externally bodies not counted), by llvm-dis line count."""
    ir = lib.run_measured([lib.llvm_tool("llvm-dis"), bc, "-o", "-"]).stdout
    counts, cur = {}, None
    for line in ir.splitlines():
        if line.startswith("define "):
            m = re.search(r'@("[^"]+"|[-\w.$]+)\(', line)
            cur = None if "available_externally" in line.split("@")[0] else m.group(1)
            if cur:
                counts[cur] = 0
        elif line.startswith("}"):
            cur = None
        elif cur and line.startswith("  "):
            counts[cur] += 1
    if not counts:
        raise lib.BenchError(f"no function defined in {bc}")
    name = max(counts, key=lambda k: (counts[k], k))
    return name.strip('"'), counts[name], counts[name] / sum(counts.values())


def function_alone(bc, name, workdir, clang, extract, compile_args):
    """CPU seconds of one function extracted from bc (everything else a declaration) and
    compiled by itself as the slots compile."""
    fbc, obj = workdir / "function.bc", workdir / "function.o"
    lib.run_measured([extract, f"--func={name}", bc, "-o", fbc])
    m = lib.run_measured(ir_compile(clang, compile_args, fbc, obj))
    lib.check_object(obj, f"{name} alone")
    return m.cpu


def without_copies(part, clang, extract, compile_args):
    """Compile partition `part` with all its available_externally function bodies made
    declarations: (CPU seconds, number of bodies removed)."""
    ir = lib.run_measured([lib.llvm_tool("llvm-dis"), part, "-o", "-"]).stdout
    names = sorted(n.strip('"') for n in re.findall(
        r'^define available_externally [^@\n]*@("[^"]+"|[-\w.$]+)\(', ir, re.M))
    own = part.with_name("own.bc")
    if names:
        lib.run_measured([extract, "--delete", *[f"--func={n}" for n in names], part,
                          "-o", own])
    else:
        shutil.copyfile(part, own)
    obj = own.with_suffix(".o")
    m = lib.run_measured(ir_compile(clang, compile_args, own, obj))
    lib.check_object(obj, f"{part.name} without copies")
    return m.cpu, len(names)


# mtpc-split --stats, second line (splitter/main.c, print_emit_stats).
EMIT_STATS = re.compile(r"serial ([\d.]+) s \+ emit ([\d.]+) s wall on (\d+) (?:threads|processes); "
                        r"emit CPU by partition \(s\):((?: [\d.]+)*)$", re.M)


def parse_emit_stats(stderr):
    """The emission figures of `mtpc-split --stats` output: {"serial": wall seconds of all
    but the emission (inside the process), "emit_wall", "emit_threads", "emit_cpu": CPU
    seconds of each partition's emission, by index}, or None when the line is absent."""
    m = EMIT_STATS.search(stderr)
    if not m:
        return None
    return {"serial": float(m.group(1)), "emit_wall": float(m.group(2)),
            "emit_threads": int(m.group(3)), "emit_cpu": [float(x) for x in m.group(4).split()]}


def makespan(times, threads):
    """Wall time of running the jobs `times` (seconds each) on `threads` threads, longest
    first, each onto the least-loaded thread (LPT list scheduling; the emission itself
    takes partitions in index order, which is the same once threads >= len(times))."""
    if not times:
        return 0.0
    loads = [0.0] * max(1, min(threads, len(times)))
    for t in sorted(times, reverse=True):
        heapq.heapreplace(loads, loads[0] + t)
    return max(loads)


def run_pipeline(split_argv, outdir, jobs, clang, lld, objcopy, compile_args):
    """The backend of one module as MTPC's inner build runs it on `jobs` cores: split,
    the partitions compiled `jobs` at a time (in index order, as Ninja starts ready
    slots), merge. Returns wall and total CPU of the whole, and under "split_stats" the
    split's emission figures (parse_emit_stats) when split_argv asks mtpc-split for
    --stats."""
    shutil.rmtree(outdir, ignore_errors=True)
    outdir.mkdir(parents=True)
    t0 = time.perf_counter()
    split = lib.run_measured(split_argv)
    split_wall = time.perf_counter() - t0
    split_cpu = split.cpu
    emit = parse_emit_stats(split.stderr)
    cpu = split_cpu
    parts = partition_files(outdir)
    if not parts:
        raise lib.BenchError(f"{split_argv[0]} wrote no partitions in {outdir}")
    objs = [p.with_name(p.name.removesuffix(".bc") + ".o") for p in parts]
    cmds = [ir_compile(clang, compile_args, p, o) for p, o in zip(parts, objs)]
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        cpu += sum(m.cpu for m in pool.map(lib.run_measured, cmds))
    for o in objs:
        lib.check_object(o, "partition object")
    merged = outdir / "merged.o"
    cpu += lib.run_measured([lld, "-r", *objs, "-o", merged]).cpu
    localize = outdir / "localize.txt"
    if localize.exists() and localize.stat().st_size:
        cpu += lib.run_measured([objcopy, f"--localize-symbols={localize}", merged]).cpu
    r = {"wall": time.perf_counter() - t0, "cpu": cpu, "partitions": len(parts),
         "split_wall": split_wall, "split_cpu": split_cpu}
    if emit:
        if len(emit["emit_cpu"]) != len(parts):
            raise lib.BenchError(f"{split_argv[0]} --stats gives {len(emit['emit_cpu'])} "
                                 f"emission times for {len(parts)} partitions")
        r["split_stats"] = emit
    return r


def predict_split(pipe, threads):
    """The pipeline's split step on `threads` threads, predicted (see the docstring, "split
    on N threads"): its measured wall without the emission phase, plus the emission's
    per-partition CPU times scheduled on `threads`. None without the --stats figures."""
    st = pipe.get("split_stats")
    if not st:
        return None
    return pipe["split_wall"] - st["emit_wall"] + makespan(st["emit_cpu"], threads)


def summarize(runs, base, jobs=0):
    med = lambda k: lib.median(r[k] for r in runs)  # noqa: E731
    s = {k: med(k) for k in ("split_wall", "split_cpu", "sum_cpu", "max_cpu", "mean_cpu",
                             "max_wall", "merge_wall", "partitions")}
    s["sum_cpu_over_unsplit"] = lib.ratio(s["sum_cpu"], base["compile_cpu"])
    s["slowest_over_mean"] = lib.median(r["max_cpu"] / r["mean_cpu"] for r in runs)
    s["per_repeat_sum_cpu_over_unsplit"] = [r["sum_cpu"] / b["compile_cpu"]
                                            for r, b in zip(runs, base["runs"])]
    s["split_over_backend"] = lib.ratio(s["split_wall"], base["backend_wall"])
    s["critical_path"] = s["split_wall"] + s["max_wall"] + s["merge_wall"]
    s["predicted_speedup"] = lib.ratio(base["backend_wall"], s["critical_path"])
    # the same from CPU times: what the wall figures would be on an idle machine
    s["merge_cpu"] = med("merge_cpu")
    s["split_over_backend_cpu"] = lib.ratio(s["split_cpu"], base["backend_cpu"])
    s["critical_path_cpu"] = s["split_cpu"] + s["max_cpu"] + s["merge_cpu"]
    s["predicted_speedup_cpu"] = lib.ratio(base["backend_cpu"], s["critical_path_cpu"])
    units = [r for r in runs if r.get("unit_cpu")]
    if units:
        s["unit_cpu"] = lib.median(r["unit_cpu"] for r in units)
        s["unit_share"] = units[0]["unit_share"]
        s["slowest_over_unit"] = lib.median(r["max_cpu"] / r["unit_cpu"] for r in units)
    funcs = [(r, b) for r, b in zip(runs, base["runs"]) if b.get("function_cpu")]
    if funcs:
        s["per_repeat_slowest_over_function"] = [r["max_cpu"] / b["function_cpu"]
                                                 for r, b in funcs]
        s["slowest_over_function"] = lib.median(s["per_repeat_slowest_over_function"])
    owns = [r for r in runs if r.get("slowest_own_cpu")]
    if owns:
        s["slowest_own_cpu"] = lib.median(r["slowest_own_cpu"] for r in owns)
        s["slowest_copies_share"] = lib.median(1 - r["slowest_own_cpu"] / r["max_cpu"]
                                               for r in owns)
        s["per_repeat_slowest_index"] = [r["part_cpu"].index(r["max_cpu"]) for r in owns]
    pipes = [r["pipeline"] for r in runs if r.get("pipeline")]
    if pipes:
        # Prediction on >= N cores, each partition on a core of its own: the serial steps
        # as they ran (the pipeline's import + split, the merge; wall) plus the slowest
        # partition's CPU, over the same repeat's unsplit backend CPU.
        both = [(r, b) for r, b in zip(runs, base["runs"]) if r.get("pipeline")]
        serial = [r["pipeline"]["split_wall"] + r["merge_wall"] for r, _ in both]
        crit = [t + r["max_cpu"] for t, (r, _) in zip(serial, both)]
        bcpu = [b["backend_cpu"] for _, b in both]
        s["per_repeat_serial_over_backend_cpu"] = [t / b for t, b in zip(serial, bcpu)]
        s["per_repeat_speedup_n_cores"] = [b / c for c, b in zip(crit, bcpu)]
        s["serial_wall"] = lib.median(serial)
        s["critical_path_n_cores"] = lib.median(crit)
        s["serial_over_backend_cpu"] = lib.median(s["per_repeat_serial_over_backend_cpu"])
        s["predicted_speedup_n_cores"] = lib.median(s["per_repeat_speedup_n_cores"])
        s["serial_has_import"] = all(p.get("with_import") for p in pipes)
        s["pipeline_wall"] = lib.median(p["wall"] for p in pipes)
        s["pipeline_cpu"] = lib.median(p["cpu"] for p in pipes)
        s["pipeline_over_backend"] = lib.median(
            p["wall"] / b for p, b in zip(pipes, base["backend_walls"]))
        s["pipeline_cpu_over_backend"] = lib.ratio(s["pipeline_cpu"], base["backend_cpu"])
        # What a schedule on `jobs` cores could reach at best: the serial step as it ran
        # (the pipeline's own split, with the import for mtpc-split; wall, because its
        # writer threads overlap), then the partitions' CPU (compiled one at a time, so
        # not slowed by each other) shared perfectly among the cores, then the merge.
        # An estimate: CPU times of the same work vary by several percent between runs.
        s["pipeline_split_wall"] = lib.median(p["split_wall"] for p in pipes)
        # The same prediction with the split's emission on one thread per partition too
        # (a 16-core machine runs 16 writer threads): from per-thread CPU, not measured.
        preds = [(r, b, predict_split(r["pipeline"], int(s["partitions"]))) for r, b in both]
        preds = [(r, b, t) for r, b, t in preds if t is not None]
        if preds:
            s["predict_threads"] = int(s["partitions"])
            ser = [t + r["merge_wall"] for r, _, t in preds]
            s["per_repeat_split_wall_predicted"] = [t for _, _, t in preds]
            s["per_repeat_serial_over_backend_cpu_predicted"] = [
                x / b["backend_cpu"] for x, (_, b, _) in zip(ser, preds)]
            s["per_repeat_speedup_n_cores_predicted"] = [
                b["backend_cpu"] / (x + r["max_cpu"]) for x, (r, b, _) in zip(ser, preds)]
            st = [(r["pipeline"], r["pipeline"]["split_stats"]) for r, _, _ in preds]
            s["split_serial_wall"] = lib.median(p["split_wall"] - e["emit_wall"] for p, e in st)
            s["emit_wall"] = lib.median(e["emit_wall"] for _, e in st)
            s["emit_threads"] = lib.median(e["emit_threads"] for _, e in st)
            s["emit_cpu_sum"] = lib.median(sum(e["emit_cpu"]) for _, e in st)
            s["emit_cpu_max"] = lib.median(max(e["emit_cpu"]) for _, e in st)
            s["split_wall_predicted"] = lib.median(s["per_repeat_split_wall_predicted"])
            s["serial_wall_predicted"] = lib.median(ser)
            s["serial_over_backend_cpu_predicted"] = lib.median(
                s["per_repeat_serial_over_backend_cpu_predicted"])
            s["predicted_speedup_n_cores_split_threads"] = lib.median(
                s["per_repeat_speedup_n_cores_predicted"])
        s["pipeline_floor"] = lib.ratio(
            s["pipeline_split_wall"] + s["sum_cpu"] / min(jobs, s["partitions"])
            + s["merge_cpu"], base["backend_cpu"])
    return s


def report(base, results, n, repeat, jobs=None, out=print):
    out(f"unsplit: ThinLTO backend {lib.fmt_s(base['backend_wall'])} wall, "
        f"{lib.fmt_s(base['backend_cpu'])} CPU; compile of the post-import module "
        f"{lib.fmt_s(base['compile_wall'])} wall, {lib.fmt_s(base['compile_cpu'])} CPU "
        f"(medians of {repeat})")
    if base.get("function"):
        share = base["function_share"]
        out(f"largest function alone: {base['function']} "
            + (f"({100 * share:.1f}% of the module's instructions), " if share == share
               else "") + f"{lib.fmt_s(base['function_cpu'])} CPU")
    for name, s in results.items():
        out(f"\n{name}: {int(s['partitions'])} partitions (asked {n})")
        out(f"  sum CPU / unsplit CPU   {lib.fmt_r(s['sum_cpu_over_unsplit'], 1.05)}")
        out(f"  slowest / mean (CPU)    {lib.fmt_r(s['slowest_over_mean'], 1.15)}")
        if "slowest_over_unit" in s:
            out(f"  slowest / largest unit  {lib.fmt_r(s['slowest_over_unit'], 1.05)}"
                f"   [the unit alone, no copies: {lib.fmt_s(s['unit_cpu'])} CPU, "
                f"{100 * s['unit_share']:.1f}% of the module's estimated cost]")
        if "slowest_over_function" in s:
            out(f"  slowest / function      {lib.fmt_r(s['slowest_over_function'], 1.3)}"
                "   [per repeat " + ", ".join(
                    f"{x:.2f}" for x in s["per_repeat_slowest_over_function"]) + "]")
        if "slowest_own_cpu" in s:
            out(f"  slowest without copies  {lib.fmt_s(s['slowest_own_cpu'])} CPU: copies "
                f"{100 * s['slowest_copies_share']:.0f}% of the slowest partition   "
                "[slowest partition per repeat: " + ", ".join(
                    f"p{i}" for i in s["per_repeat_slowest_index"]) + "]")
        out(f"  split / backend (wall)  {lib.fmt_r(s['split_over_backend'], 0.05)}"
            f"   [split {lib.fmt_s(s['split_wall'])}]")
        out(f"  critical path (wall)    {lib.fmt_s(s['critical_path'])} = split + slowest "
            f"partition {lib.fmt_s(s['max_wall'])} + merge {lib.fmt_s(s['merge_wall'])}; "
            f"predicted backend speedup {s['predicted_speedup']:.2f}x")
        out(f"  same from CPU times     split / backend {s['split_over_backend_cpu']:.3f}; "
            f"critical path {lib.fmt_s(s['critical_path_cpu'])}, predicted backend speedup "
            f"{s['predicted_speedup_cpu']:.2f}x (wall figures are noisy on a shared machine)")
        if "predicted_speedup_n_cores" in s:
            imp = "import + " if s["serial_has_import"] else ""
            out(f"  on >= {int(s['partitions'])} cores (predicted) speedup "
                f"{lib.fmt_r(s['predicted_speedup_n_cores'], 8, lower_is_better=False)}"
                f" = backend CPU / ({imp}split + merge, wall: {lib.fmt_s(s['serial_wall'])}"
                f" + slowest partition CPU {lib.fmt_s(s['max_cpu'])})   [per repeat "
                + ", ".join(f"{x:.2f}x" for x in s["per_repeat_speedup_n_cores"]) + "]")
            out(f"  serial / backend CPU    "
                f"{lib.fmt_r(s['serial_over_backend_cpu'], 0.02)}   [per repeat "
                + ", ".join(f"{x:.3f}" for x in s["per_repeat_serial_over_backend_cpu"])
                + "]")
        if "split_wall_predicted" in s:
            k = s["predict_threads"]
            imp = "import + " if s["serial_has_import"] else ""
            out(f"  split on {k} threads (predicted from per-thread CPU) "
                f"{lib.fmt_s(s['split_wall_predicted'])} = serial part "
                f"{lib.fmt_s(s['split_serial_wall'])} (wall) + emission makespan of the "
                f"partitions' emit CPU on {k} threads   [measured here: split "
                f"{lib.fmt_s(s['pipeline_split_wall'])}, emission "
                f"{lib.fmt_s(s['emit_wall'])} wall on {int(s['emit_threads'])} threads, "
                f"emit CPU sum {lib.fmt_s(s['emit_cpu_sum'])}, largest "
                f"{lib.fmt_s(s['emit_cpu_max'])}]")
            sp_k = s["predicted_speedup_n_cores_split_threads"]
            out(f"  on >= {k} cores, split on {k} threads (predicted) speedup "
                f"{lib.fmt_r(sp_k, 8, lower_is_better=False)}"
                f" = backend CPU / ({imp}split predicted + merge: "
                f"{lib.fmt_s(s['serial_wall_predicted'])} + slowest partition CPU)   "
                "[per repeat " + ", ".join(
                    f"{x:.2f}x" for x in s["per_repeat_speedup_n_cores_predicted"]) + "]")
            out(f"  serial / backend CPU, split on {k} threads (predicted) "
                f"{lib.fmt_r(s['serial_over_backend_cpu_predicted'], 0.02)}   [per repeat "
                + ", ".join(f"{x:.3f}" for x in
                            s["per_repeat_serial_over_backend_cpu_predicted"]) + "]")
        if "pipeline_wall" in s:
            out(f"  backend on {jobs} cores      {lib.fmt_r(s['pipeline_over_backend'], 0.53)}"
                f" of the unsplit backend's wall   [{lib.fmt_s(s['pipeline_wall'])} wall, "
                f"CPU {s['pipeline_cpu_over_backend']:.3f} of the backend's; "
                f"{'import + ' if s['serial_has_import'] else ''}split, "
                f"{jobs} partitions at a time, merge]")
            out(f"  floor on {jobs} cores       {s['pipeline_floor']:.3f} = (serial split "
                f"{lib.fmt_s(s['pipeline_split_wall'])} + partitions' CPU / "
                f"{min(jobs, int(s['partitions']))} + merge) / backend CPU: perfect balance, "
                "no slowdown from sharing the machine (an estimate from medians)")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    src = ap.add_mutually_exclusive_group()
    src.add_argument("--sources", nargs="+", metavar="FILE",
                     help="C sources (or ThinLTO objects) of a program")
    src.add_argument("--input", metavar="M.bc", help="a post-import bitcode module")
    ap.add_argument("--module", type=int, default=0,
                    help="index in --sources of the module to split (default 0)")
    ap.add_argument("--ldflags", default="-lm -lpthread -ldl",
                    help="libraries/flags for the thin link (default: %(default)s)")
    ap.add_argument("--cflags", default="", help="extra flags for every compile")
    ap.add_argument("--plain-compile", action="store_true",
                    help="compile partitions and the post-import module with a plain "
                         "`clang -c -x ir` (pre-link pipeline) instead of as MTPC's slots do "
                         "(a ThinLTO backend with -thinlto-assume-merged)")
    ap.add_argument("--opt", default="-O2", help="optimization level (default -O2)")
    ap.add_argument("-n", "--partitions", type=int, default=8, help="partitions (default 8)")
    ap.add_argument("-r", "--repeat", type=int, default=3, help="repeats (default 3)")
    ap.add_argument("--splitters", default="mtpc-split,llvm-split",
                    help="comma list among mtpc-split, llvm-split (default: both)")
    ap.add_argument("--mtpc-split", help="mtpc-split binary (default: build/splitter/)")
    ap.add_argument("--mtpc-split-args", action="append",
                    help="extra mtpc-split arguments; give it several times to measure "
                         "several configurations, interleaved (e.g. "
                         "--mtpc-split-args= --mtpc-split-args='--scc-cut 0')")
    ap.add_argument("--unit-func", default="",
                    help="the function compiled alone for 'slowest / function' (default: "
                         "the module's largest, by instructions; 'none' skips it)")
    ap.add_argument("--llvm-split-args", default="",
                    help="extra llvm-split arguments (e.g. --preserve-locals)")
    ap.add_argument("--work", default=str(lib.ROOT / "bench" / "out" / "split_bench"),
                    help="scratch folder (default bench/out/split_bench)")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count(),
                    help="partitions compiled at a time in the backend-on-this-machine "
                         "run (default: %(default)s, the cores); 0 skips that run")
    ap.add_argument("--json", help="write all measurements and summaries to this file")
    args = ap.parse_args(argv)

    work = pathlib.Path(args.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    cflags = args.cflags.split()
    clang = lib.llvm_tool("clang")
    lld = lib.llvm_tool("ld.lld")
    objcopy = lib.llvm_tool("llvm-objcopy")
    extract = lib.llvm_tool("llvm-extract")
    compile_args = ["plain" if args.plain_compile else "slot", args.opt, *cflags]

    splitters = []
    for name in args.splitters.split(","):
        name = name.strip()
        if name == "mtpc-split":
            exe = args.mtpc_split or lib.mtpc_tool("mtpc-split")
            if not exe:
                lib.eprint("split_bench: mtpc-split is not built (expected in "
                           f"{lib.BUILD}/splitter/; run scripts/build.sh): skipping it")
                continue
            configs = args.mtpc_split_args or [""]
            for conf in configs:
                label = name if len(configs) == 1 else f"{name} {conf.strip()}".strip()
                if any(sp.name == label for sp in splitters):
                    ap.error(f"--mtpc-split-args {conf!r} given twice")
                extra = conf.split()
                splitters.append(Splitter(label, lambda i, o, n, exe=exe, extra=extra: [
                    exe, i, "-o", o, "--partitions", n, "--no-cache", *extra], name))
        elif name == "llvm-split":
            exe = lib.llvm_tool("llvm-split")
            extra = args.llvm_split_args.split()
            splitters.append(Splitter(name, lambda i, o, n, exe=exe, extra=extra: [
                exe, f"-j{n}", *extra, "-o", o / "p", i]))
        else:
            ap.error(f"unknown splitter {name!r}")
    if not splitters:
        ap.error("no splitter to measure")

    # 1. the post-import module and the unsplit backend command
    backend_cmd = None
    if args.input:
        import_bc = pathlib.Path(args.input).resolve()
    else:
        if args.sources:
            sources = args.sources
        else:
            amal = lib.ROOT / "bench" / "work" / "sqlite-amalgamation"
            if not (amal / "sqlite3.c").exists():
                ap.error(f"{amal}/sqlite3.c missing: run bench/get-sqlite.sh "
                         "(or give --sources / --input)")
            sources = [amal / "sqlite3.c", amal / "shell.c"]
        print(f"preparing the post-import module of {pathlib.Path(sources[args.module]).name}")
        pi = lib.thin_post_import(sources, work / "thin", args.opt, cflags,
                                  args.ldflags.split(), args.module)
        import_bc = pi.import_bc
        backend_cmd = pi.backend_cmd
        module_obj, index = pi.module_obj, pi.index
    print(f"post-import module: {import_bc} ({import_bc.stat().st_size} bytes)")
    func = None
    if args.unit_func != "none":
        if args.unit_func:
            func = (args.unit_func, 0, float("nan"))
        else:
            func = largest_function(import_bc)
        print(f"largest function: {func[0]}")

    # 2. repeats, interleaved so that drift in the machine's load hits all alike
    base_runs = []
    for r in range(args.repeat):
        print(f"repeat {r + 1}/{args.repeat}: unsplit", flush=True)
        b = {}
        if backend_cmd:
            m = lib.run_measured(backend_cmd + ["-o", work / "unsplit.backend.o"])
            lib.check_object(work / "unsplit.backend.o", "unsplit ThinLTO backend")
            b["backend_wall"], b["backend_cpu"] = m.wall, m.cpu
        m = lib.run_measured(ir_compile(clang, compile_args, import_bc, work / "unsplit.o"))
        lib.check_object(work / "unsplit.o", "unsplit compile")
        b["compile_wall"], b["compile_cpu"] = m.wall, m.cpu
        if not backend_cmd:
            b["backend_wall"], b["backend_cpu"] = m.wall, m.cpu
        if func:
            b["function_cpu"] = function_alone(import_bc, func[0], work, clang, extract,
                                               compile_args)
        base_runs.append(b)
        for sp in splitters:
            print(f"repeat {r + 1}/{args.repeat}: {sp.name}", flush=True)
            run = run_splitter(sp, import_bc, work / sp.name, args.partitions,
                               clang, lld, objcopy, compile_args)
            if sp.kind == "mtpc-split":
                u = unit_alone(work / sp.name, clang, extract, compile_args)
                if u:
                    run["unit_cpu"], run["unit_share"] = u
                slowest = partition_files(work / sp.name)[run["part_cpu"].index(
                    run["max_cpu"])]
                run["slowest_own_cpu"], run["slowest_copies"] = without_copies(
                    slowest, clang, extract, compile_args)
            if args.jobs > 0:
                print(f"repeat {r + 1}/{args.repeat}: {sp.name}, backend on {args.jobs} "
                      "cores", flush=True)
                outdir = work / (sp.name + "-pipeline")
                with_import = bool(sp.kind == "mtpc-split" and backend_cmd)
                if with_import:
                    # the pipeline's split step: ThinLTO import fused with the split
                    argv = sp.argv_fn(module_obj, outdir, args.partitions) + [
                        "--thinlto-index", index, "--relocation-model", "pic"]
                else:
                    argv = sp.argv_fn(import_bc, outdir, args.partitions)
                if sp.kind == "mtpc-split":
                    argv.append("--stats")   # per-partition emission CPU: predict_split
                run["pipeline"] = run_pipeline(argv, outdir, args.jobs, clang, lld, objcopy,
                                               compile_args)
                run["pipeline"]["with_import"] = with_import
            sp.runs.append(run)
    base = {k: lib.median(b[k] for b in base_runs) for k in base_runs[0]}
    base["backend_walls"] = [b["backend_wall"] for b in base_runs]
    base["runs"] = base_runs
    if func:
        base["function"], base["function_instructions"], base["function_share"] = func
    results = {sp.name: dict(summarize(sp.runs, base, args.jobs), kind=sp.kind)
               for sp in splitters}
    print()
    report(base, results, args.partitions, args.repeat, args.jobs)
    if args.json:
        data = {"input": str(import_bc), "partitions": args.partitions,
                "repeat": args.repeat, "opt": args.opt, "cflags": cflags,
                "unsplit": {k: v for k, v in base.items() if k != "runs"},
                "unsplit_runs": base_runs,
                "splitters": {sp.name: {"summary": results[sp.name], "runs": sp.runs}
                              for sp in splitters}}
        pathlib.Path(args.json).write_text(json.dumps(data, indent=1) + "\n")
        print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except lib.BenchError as e:
        lib.eprint(f"split_bench: {e}")
        sys.exit(1)
