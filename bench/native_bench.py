#!/usr/bin/env python3
"""mtpc-compile on a plain optimizing compile (no LTO): a huge TU's `clang -O2 -c` split
into partitions that are each optimized and compiled to native code, merged into one
object with `ld.lld -r` (docs/build-integration.md, "Plain compiles"). Against the plain
compile of the same source with the same flags, side by side in one run:

1. Total work, every process pinned to one CPU (--cpu) and every edge after the other
   (mtpc-compile --jobs 1): the plain compile, and mtpc-compile from nothing (no object,
   inner directory or plan cache) with --partitions P --cost-threshold 0: its frontend (the
   same command with -Xclang -disable-llvm-passes -emit-llvm, run by itself, as
   mtpc-compile runs it) and each edge of OBJ.mtpc/.ninja_log (split, slots, merge), their
   CPU from a cgroup timeline (compile_bench.run). The work ratio is the ratio of the
   medians of --pinned-runs interleaved pinned pairs (plain, mtpc-compile).
2. PREDICTED time of the compile on N = 2, 4, 8, 16 cores: list scheduling of those pinned
   edges (mtpc-compile's own time, the frontend, the split as its serial part and one
   emission per partition in the proportions of a `mtpc-split --stats` run, the slots, the
   merge), against the plain compile's CPU. The serial floor: everything but the slots and
   the split's emission. A prediction, not a measurement.
3. Wall on this machine's cores, MTPC's defaults (mtpc-compile without --partitions or
   --cost-threshold: a partition per core, its own cost threshold), --runs interleaved runs
   from nothing (plain, mtpc, plain, ...): medians and min..max, per flag variant (-O2, and
   -O2 -g with --debug).
4. Edit -> object: one constant of one function changed (compile_bench's edit), the TU
   compiled again: plain, and mtpc-compile on its previous inner build (only the partitions
   whose bitcode changed rerun; the slots that ran are counted). Pinned once.
5. Quality: the program (compile_bench's workloads: speedtest1, duk, roundtrip, json_unit,
   gtest_unittest, kvbench) linked from the plain objects, and from the same with the TU's
   object from mtpc-compile (P partitions): executed instructions (callgrind) and .text, as
   ratios; the output must be the same.
   With --quality-only, section 5 alone (the TU compiled once by mtpc-compile, --jobs 1,
   --partitions P, --cost-threshold 0, not timed), for the build --build-dir and, with
   --vs BUILD, a second MTPC build (its tools, the same plain objects) and/or --split-arg
   words given to the first build's mtpc-compile as a second column: before / after a
   change of the splitter, side by side in one run.
6. With --project: the whole SQLite project (bench/sqlite: sqlite3.c, shell.c, speedtest1.c)
   built without LTO from nothing at -j cores, plain against mtpc_enable(<target> NO_LTO)
   with MTPC's defaults, --runs interleaved runs: build wall, and speedtest1's hash.
Goals (issue 35): predicted at 16 cores >= 4x shorter on sqlite, duktape, zstd (>= 2x on
rocksdb); work <= 1.15x for C, <= 1.30x for C++; 2-core wall of sqlite3.c <= 0.65x (-O2 and
-O2 -g) and no workload slower than plain with the defaults; edit <= 0.35x on sqlite;
instructions within +0.1%, .text within +1%.

Usage:
  /usr/bin/python3 bench/native_bench.py                       # sqlite, duktape, zstd, gtest
  /usr/bin/python3 bench/native_bench.py --workloads sqlite --runs 5 --debug
  /usr/bin/python3 bench/native_bench.py --quick               # small synthetic TU (tests)
  /usr/bin/python3 bench/native_bench.py --quality-only --vs build-before  # A/B quality
  /usr/bin/python3 bench/native_bench.py --quality-only --split-arg=--join-limit=1000
Writes bench/out/native_bench.json (--json).
"""
import argparse
import datetime
import json
import os
import pathlib
import platform
import re
import shutil
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import compile_bench as cb  # noqa: E402
import lib  # noqa: E402
import link_costs  # noqa: E402
import predict  # noqa: E402

CORES = (2, 4, 8, 16)
log = cb.log


def opt_of(w):
    """The workload's optimization level: its own flags' (rocksdb: -O3), else -O2."""
    return [f for f in w.cflags if re.fullmatch(r"-O[0-3sz]|-Ofast", f)][-1:] or ["-O2"]


def bench_workload(w, t, args, wd):
    P, cpu = args.partitions, args.cpu
    orig, src, text = cb.prepare_workdir(w, wd)
    flags = [*opt_of(w), *[f for f in w.cflags if f not in opt_of(w)], f"-I{orig.parent}"]
    drv = t.clangxx if w.cxx else t.clang
    pin, unpin = cb.env_for(wd, True), cb.env_for(wd, False)
    O = wd / "obj"

    def cc(source, obj, *extra):
        return [drv, *flags, *extra, "-c", source, "-o", obj]

    def mcc(obj, cache, *extra, jobs=None, partitions=P, threshold=0):
        opts = (["--jobs", jobs] if jobs else []) + \
               (["--partitions", partitions] if partitions else []) + \
               (["--cost-threshold", threshold] if threshold is not None else [])
        return [t.mtpc_compile, *opts, "--cache", cache, "--quiet", "--", *cc(src, obj, *extra)]

    m = {"workload": w.name, "tu": w.tu, "partitions": P, "cpu_pinned": cpu,
         "cores": args.cores, "flags": [str(f) for f in flags]}
    # 1. pinned work
    log(f"{w.name}: pinned to cpu{cpu}")
    m["plain"] = cb.run(cc(src, O / "plain.o"), pin, cpu, tag="plain compile")
    m["frontend"] = cb.run(cc(src, O / "front.bc", "-Xclang", "-disable-llvm-passes",
                              "-emit-llvm"), pin, cpu, tag="frontend")
    mc = m["mtpc"] = cb.run(mcc(O / "mtpc.o", O / "plans.sqlite", jobs=1), pin, cpu,
                            inner=O / "mtpc.o.mtpc", tag="mtpc-compile")
    mt = re.search(r"(\d+) partitions?", " ".join(mc["said"]))
    mc["split_into"] = int(mt.group(1)) if mt else 0
    for s in mc["said"]:
        if "warning" in s:
            log(f"  mtpc-compile said: {s}")
    st = lib.run_measured(["taskset", "-c", str(cpu), t.mtpc_split, "--native", "--no-ipo",
                           "--no-cache", "--stats", "-n", str(P), str(O / "front.bc"), "-o",
                           str(O / "split-stats")], env=pin, check=True)
    m["split_stats"] = cb.split_stats(st.stdout + st.stderr)
    pairs = []
    for r in range(args.pinned_runs):
        WR = O / "pairs"
        cb.fresh(WR / "plain.o", WR / "mtpc.o", WR / "plans.sqlite")
        WR.mkdir(exist_ok=True)
        a = cb.run(cc(src, WR / "plain.o"), pin, cpu, tag="plain (pair)")["cpu"]
        b = cb.run(mcc(WR / "mtpc.o", WR / "plans.sqlite", jobs=1), pin, cpu,
                   tag="mtpc-compile (pair)")["cpu"]
        pairs.append({"plain": a, "mtpc": b})
    m["work_pairs"] = pairs
    log(f"  plain {m['plain']['cpu']:.2f} s, frontend {m['frontend']['cpu']:.2f} s, "
        f"mtpc-compile {mc['cpu']:.2f} s ({mc['split_into']} partitions)")
    # 2. prediction
    m["predicted"] = prediction(m)
    # 5. quality
    log(f"{w.name}: quality")
    m["quality"] = quality(w, t, wd, cc, O, args.callgrind)
    # 3. wall, defaults, interleaved
    m["wall"] = {}
    for variant, extra in (("-O2", []), ("-O2 -g", ["-g"]))[:(2 if args.debug else 1)
                                                             if args.runs else 0]:
        W = wd / "wall"
        walls = {"plain": [], "mtpc": []}
        for r in range(args.runs):
            log(f"{w.name}: wall {variant} run {r + 1}/{args.runs}")
            cb.fresh(W / "plain.o")
            walls["plain"].append(cb.run(cc(src, W / "plain.o", *extra), unpin,
                                         tag="plain (wall)")["wall"])
            cb.fresh(W / "mtpc.o", W / "plans.sqlite")
            x = cb.run(mcc(W / "mtpc.o", W / "plans.sqlite", *extra, partitions=None,
                           threshold=None), unpin, tag="mtpc-compile (wall)")
            walls["mtpc"].append(x["wall"])
            m.setdefault("wall_said", x["said"])
        m["wall"][variant] = {k: cb.stats(v) for k, v in walls.items()}
    # 4. edit -> object
    if w.edit_re is None:
        m["edit"] = {"skipped": "no function of the TU's own to edit (a unity source)"}
        return m
    try:
        def frontend():
            cb.run(cc(src, O / "edit-front.bc", "-Xclang", "-disable-llvm-passes",
                      "-emit-llvm"), unpin, tag="frontend (edit check)")
            return (O / "edit-front.bc").read_bytes()
        new, line, _ = cb.first_edit(w, text, src, frontend, (O / "front.bc").read_bytes())
        m["edit"] = {"line": line, "text": new.split("\n")[line - 1].strip(),
                     "plain": cb.run(cc(src, O / "edit-plain.o"), pin, cpu, tag="plain (edit)")}
        e = m["edit"]["mtpc"] = cb.run(mcc(O / "mtpc.o", O / "plans.sqlite", jobs=1), pin, cpu,
                                       inner=O / "mtpc.o.mtpc", tag="mtpc-compile (edit)")
        e["slots_run"] = cb.kinds(e["edges"]).get("slot", {}).get("count", 0)
        # its path at 16 cores, predicted from the edges that ran
        m["edit"]["predicted16"] = predicted_compile(m, e)["makespan"]["16"]
    finally:
        src.write_text(text, errors="surrogateescape")
    return m


def project_builds(t, args, work):
    """Section 6: the whole SQLite project of bench/sqlite (sqlite3.c, shell.c,
    speedtest1.c; two programs) built without LTO from nothing at -j cores, the plain build
    against mtpc_enable(<target> NO_LTO) with MTPC's defaults, --runs interleaved runs
    (plain, mtpc, ...): the build's wall (configure excluded), and speedtest1's verification
    hash of both builds, which must be the same."""
    src = lib.ROOT / "bench" / "sqlite"
    if not (cb.WORK / "sqlite-amalgamation" / "sqlite3.c").exists():
        return {"skipped": "bench/work/sqlite-amalgamation missing: run bench/get-sqlite.sh"}
    res = {"plain": [], "mtpc": [], "same_output": True}
    hashes = {}
    env = cb.env_for(work, False)
    for r in range(args.runs):
        for mode in ("plain", "mtpc"):
            log(f"project: {mode} build {r + 1}/{args.runs} at -j {args.cores}")
            b = work / f"project-{mode}"
            shutil.rmtree(b, ignore_errors=True)
            cfg = ["cmake", "-G", "Ninja", "-S", src, "-B", b, f"-DCMAKE_C_COMPILER={t.clang}",
                   "-DSQLITE_LTO=OFF", "-DCMAKE_BUILD_TYPE=Release"]
            if mode == "mtpc":
                cfg += ["-DSQLITE_USE_MTPC=ON", f"-DMTPC_DIR={args.build_dir}",
                        f"-DMTPC_CACHE={b / 'plans.sqlite'}"]
            lib.run_measured(cfg, env=env, check=True)
            m = lib.run_measured(["ninja", "-C", b, f"-j{args.cores}"], env=env, check=True)
            res[mode].append(m.wall)
            out = lib.run_measured([b / "speedtest1", "--size", "5", "--memdb", "--verify"],
                                   check=False)
            h = [ln for ln in out.stdout.splitlines() if "hash" in ln.lower()]
            hashes.setdefault(mode, h)
            res["same_output"] &= bool(h) and h == hashes.get("plain", h)
    res["plain"], res["mtpc"] = cb.stats(res["plain"]), cb.stats(res["mtpc"])
    return res


def predicted_compile(m, r):
    """{'work', 'critical_path', 'serial_floor', 'makespan': {str(N): s}} of one pinned
    mtpc-compile run r (its own time, the frontend, its inner edges)."""
    durs, deps = {}, {}
    front = m["frontend"]["cpu"]
    durs["own"], deps["own"] = cb.own(r, front), set()
    durs["frontend"], deps["frontend"] = front, {"own"}
    for e in r["edges"]:
        cb.add_edge(durs, deps, "compile", e, "frontend", m.get("split_stats"))
    cp, path = predict.critical_path(durs, deps)
    slots = {f"compile:{e['name']}" for e in r["edges"] if e["kind"] == "slot"}
    parallel = sum(s for j, s in durs.items() if ":emit" in j or j in slots)
    return {"work": sum(durs.values()), "critical_path": cp, "path_jobs": path,
            "serial_floor": sum(durs.values()) - parallel,
            "makespan": {str(n): predict.list_schedule(durs, deps, n)[0] for n in CORES}}


def prediction(m):
    p = predicted_compile(m, m["mtpc"])
    p["plain"] = m["plain"]["cpu"]
    return p


def quality(w, t, wd, cc, O, use_callgrind, columns=(("mtpc", None),)):
    """The program from plain objects and from the same with mtpc-compile's TU object.
    columns: (name, object) pairs beside plain; each object already compiled."""
    if w.name == "duktape":
        pathlib.Path(w.args[0]).write_text(cb.JS_WORKLOAD)
    drv = t.clangxx if w.cxx else t.clang
    others = []
    for i, o in enumerate(w.others):
        obj = O / f"other{i}_{pathlib.Path(o).stem}.o"
        lib.run_measured(cc(w.dir / o, obj, *w.other_flags.get(o, [])), check=True)
        others.append(obj)
    res = {}
    for k, tu in (("plain", O / "plain.o"),
                  *((name, obj or O / f"{name}.o") for name, obj in columns)):
        exe = wd / "prog" / k
        exe.parent.mkdir(parents=True, exist_ok=True)
        lib.run_measured([drv, "-fuse-ld=lld", tu, *others, *w.ldflags, "-o", exe], check=True)
        res[k] = cb.program_figures(w, t, exe, wd, use_callgrind, sized=tu, tag=k)
    for name, _ in columns:
        sfx = "" if name == "mtpc" else f"_{name}"
        res["same_output" + sfx] = (res["plain"]["output"], res["plain"]["exit"]) == \
            (res[name]["output"], res[name]["exit"])
        res["text_ratio" + sfx] = lib.ratio(res[name]["text"], res["plain"]["text"])
        if use_callgrind:
            res["instr_ratio" + sfx] = lib.ratio(res[name]["instructions"],
                                                 res["plain"]["instructions"])
    return res


def quality_only(w, t, args, wd):
    """Section 5 alone: plain, the first build's mtpc-compile (column A), and column B
    (--vs's build and/or --split-arg), each compiled once, not timed."""
    orig, src, text = cb.prepare_workdir(w, wd)
    flags = [*opt_of(w), *[f for f in w.cflags if f not in opt_of(w)], f"-I{orig.parent}"]
    drv = t.clangxx if w.cxx else t.clang
    O = wd / "obj"
    O.mkdir(parents=True, exist_ok=True)

    def cc(source, obj, *extra):
        return [drv, *flags, *extra, "-c", source, "-o", obj]

    lib.run_measured(cc(src, O / "plain.o"), check=True)
    cols = [("A", t, [])]
    if args.vs or args.split_arg:
        tb = cb.find_tools(pathlib.Path(args.vs).resolve()) if args.vs else t
        cols.append(("B", tb, [a for x in args.split_arg for a in ("--split-arg", x)]))
    m = {"workload": w.name, "tu": w.tu, "partitions": args.partitions,
         "flags": [str(f) for f in flags],
         "columns": {"A": str(t.mtpc_compile), "B": str(cols[1][1].mtpc_compile) if len(cols) > 1
                     else None, "B_split_args": args.split_arg}}
    for name, tools, extra in cols:
        log(f"{w.name}: mtpc-compile {name}")
        cb.fresh(O / f"{name}.o", O / f"plans{name}.sqlite")
        r = lib.run_measured([tools.mtpc_compile, "--jobs", "1", "--partitions", args.partitions,
                              "--cost-threshold", "0", "--cache", O / f"plans{name}.sqlite",
                              *extra, "--", *cc(src, O / f"{name}.o")], check=True)
        m.setdefault("said", {})[name] = [x for x in (r.stdout + r.stderr).splitlines() if x]
    log(f"{w.name}: quality")
    m["quality"] = quality(w, t, wd, cc, O, args.callgrind,
                           columns=tuple((name, None) for name, _, _ in cols))
    return m


def report_quality_only(results):
    has_b = any("B" in m.get("quality", {}) for m in results)
    out = ["## Quality, A / B (instructions and .text of the TU's object against the plain "
           "compile's)", ""]
    if results and "columns" in results[0]:
        c = results[0]["columns"]
        out += [f"A: {c['A']}", ""] + ([f"B: {c['B']} {' '.join(c['B_split_args'] or [])}", ""]
                                       if has_b else [])
    out += ["| workload | partitions | instructions A | .text A | same output A"
            + (" | instructions B | .text B | same output B | B / A instructions | B / A .text |"
               if has_b else " |"),
            "| --- | ---: | ---: | ---: | --- |" + (" ---: | ---: | --- | ---: | ---: |" if has_b
                                                    else "")]
    for m in results:
        if "quality" not in m:
            out.append(f"| {m['workload']} | {m.get('skipped') or 'error: ' + m.get('error', '')[:80]} |")
            continue
        q = m["quality"]

        def cells(sfx):
            ins = q.get("instr_ratio" + sfx)
            return (f"{'n/a' if ins is None else format(ins, '.4f')} | "
                    f"{q['text_ratio' + sfx]:.4f} | {'yes' if q['same_output' + sfx] else 'NO'}")
        row = f"| {m['workload']} | {m['partitions']} | {cells('_A')}"
        if "B" in q:
            ia, ib = q["A"].get("instructions"), q["B"].get("instructions")
            row += (f" | {cells('_B')} | "
                    f"{format(lib.ratio(ib, ia), '.4f') if ia and ib else 'n/a'} | "
                    f"{lib.ratio(q['B']['text'], q['A']['text']):.4f}")
        out.append(row + " |")
    return "\n".join(out)


def f2(x):
    return "n/a" if x is None or x != x else f"{x:.2f}"


def report_workload(m):
    p, q, mc = m["predicted"], m["quality"], m["mtpc"]
    k = cb.kinds(mc["edges"])
    pairs = m["work_pairs"]
    work = (lib.ratio(lib.median([x["mtpc"] for x in pairs]),
                      lib.median([x["plain"] for x in pairs])) if pairs
            else lib.ratio(mc["cpu"], m["plain"]["cpu"]))
    out = [f"## {m['workload']}: {m['tu']} ({mc['split_into']} partitions of at most "
           f"{m['partitions']}; {' '.join(m['flags'][:3])} ...)", "",
           f"Pinned to cpu{m['cpu_pinned']}, one edge after another (CPU s): plain compile "
           f"{f2(m['plain']['cpu'])}; mtpc-compile {f2(mc['cpu'])}: own "
           f"{f2(p['work'] - m['frontend']['cpu'] - sum(e['seconds'] for e in mc['edges']))}, "
           f"frontend {f2(m['frontend']['cpu'])}, "
           + ", ".join(f"{kind} {f2(v['seconds'])} ({v['count']}, max {f2(v['max'])})"
                       for kind, v in sorted(k.items())), "",
           f"Work, mtpc-compile / plain: **{work:.3f}** (ratio of the medians of "
           f"{len(pairs)} interleaved pinned pairs: "
           f"{', '.join(format(lib.ratio(x['mtpc'], x['plain']), '.3f') for x in pairs)})", "",
           "PREDICTED compile time (list scheduling of the pinned edges, s):", "",
           "| cores | plain | mtpc-compile | plain / mtpc |", "| ---: | ---: | ---: | ---: |"]
    for n in CORES:
        s = p["makespan"][str(n)]
        out.append(f"| {n} | {f2(p['plain'])} | {f2(s)} | {lib.ratio(p['plain'], s):.2f} |")
    out += [f"| ∞ | {f2(p['plain'])} | {f2(p['critical_path'])} | "
            f"{lib.ratio(p['plain'], p['critical_path']):.2f} |", "",
            f"Serial floor (all but the slots and the split's emission): "
            f"{f2(p['serial_floor'])} s, at most {lib.ratio(p['plain'], p['serial_floor']):.2f}x",
            ""]
    for variant, wl in m["wall"].items():
        out.append(f"Wall on {m['cores']} cores, {variant}, MTPC's defaults, median [min–max] of "
                   f"{len(wl['plain']['values'])} interleaved runs: plain {cb.spread(wl['plain'])}"
                   f" s, mtpc-compile {cb.spread(wl['mtpc'])} s: **"
                   f"{lib.ratio(wl['mtpc']['median'], wl['plain']['median']):.3f}**")
    if m.get("wall_said"):
        out.append(f"(mtpc-compile said: {'; '.join(m['wall_said'])[:200]})")
    e = m.get("edit", {})
    if "skipped" in e:
        out += ["", f"Edit -> object: not measured: {e['skipped']}"]
    elif "mtpc" in e:
        out += ["", f"Edit -> object (line {e['line']}), pinned CPU: plain "
                    f"{f2(e['plain']['cpu'])} s, mtpc-compile {f2(e['mtpc']['cpu'])} s "
                    f"({lib.ratio(e['mtpc']['cpu'], e['plain']['cpu']):.3f}); slots that ran: "
                    f"{e['mtpc']['slots_run']} of {mc['split_into']}; predicted at 16 cores "
                    f"{f2(e['predicted16'])} s: **"
                    f"{lib.ratio(e['predicted16'], e['plain']['cpu']):.3f}** of plain"]
    ins = f"{q['instr_ratio']:.4f}" if "instr_ratio" in q else "n/a"
    out += ["", f"Quality: instructions mtpc/plain **{ins}**, .text of the TU's object "
                f"**{q['text_ratio']:.4f}** ({q['mtpc']['text']} / {q['plain']['text']} bytes), "
                f"same output: {'yes' if q['same_output'] else 'NO'}"]
    return "\n".join(out)


def report_project(pr, cores):
    if "skipped" in pr:
        return f"## The whole project: skipped: {pr['skipped']}"
    return (f"## The whole project (bench/sqlite without LTO, from nothing, -j {cores})\n\n"
            f"Build wall, median [min–max] of {len(pr['plain']['values'])} interleaved runs: "
            f"plain {cb.spread(pr['plain'])} s, MTPC (NO_LTO, defaults) {cb.spread(pr['mtpc'])} "
            f"s: **{lib.ratio(pr['mtpc']['median'], pr['plain']['median']):.3f}**; speedtest1's "
            f"verification hash the same: {'yes' if pr['same_output'] else 'NO'}")


def summary(results):
    out = ["## Summary", "",
           "| workload | predicted 16 cores (≥ 4; rocksdb ≥ 2) | serial floor × | work × "
           "(C ≤ 1.15, C++ ≤ 1.30) | 2-core wall -O2 (defaults) | 2-core wall -O2 -g | "
           "edit, predicted 16 / plain (≤ 0.35) | instructions (≤ 1.001) | .text (≤ 1.01) |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for m in results:
        if "error" in m or "skipped" in m:
            out.append(f"| {m['workload']} | {m.get('skipped') or 'error: ' + m['error'][:80]}"
                       " | | | | | | | |")
            continue
        p, q, pairs = m["predicted"], m["quality"], m["work_pairs"]
        work = (lib.ratio(lib.median([x["mtpc"] for x in pairs]),
                          lib.median([x["plain"] for x in pairs])) if pairs
                else lib.ratio(m["mtpc"]["cpu"], m["plain"]["cpu"]))
        walls = [lib.ratio(m["wall"][v]["mtpc"]["median"], m["wall"][v]["plain"]["median"])
                 if v in m["wall"] else None for v in ("-O2", "-O2 -g")]
        e = m.get("edit", {})
        edit = (f"{lib.ratio(e['predicted16'], e['plain']['cpu']):.3f}" if "mtpc" in e
                else "n/a")
        out.append(f"| {m['workload']} | {lib.ratio(p['plain'], p['makespan']['16']):.2f} | "
                   f"{lib.ratio(p['plain'], p['serial_floor']):.2f} | {work:.3f} | "
                   + " | ".join("n/a" if x is None else f"{x:.3f}" for x in walls) +
                   f" | {edit} | {q.get('instr_ratio', float('nan')):.4f} | "
                   f"{q['text_ratio']:.4f} |")
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workloads", default="sqlite,duktape,zstd,gtest",
                    help="comma-separated, compile_bench's: sqlite, duktape, zstd, cxx, gtest, "
                         "rocksdb (default sqlite,duktape,zstd,gtest)")
    ap.add_argument("--partitions", type=int, default=None,
                    help="mtpc-compile --partitions of sections 1, 2, 4, 5 (default 16; 4 "
                         "--quick); section 3 runs MTPC's defaults")
    ap.add_argument("--runs", type=int, default=None, help="interleaved wall runs (default 3; 0: no section 3)")
    ap.add_argument("--pinned-runs", type=int, default=None,
                    help="interleaved pinned pairs for the work ratio (default 3; 1 --quick)")
    ap.add_argument("--debug", action="store_true", help="section 3 with -O2 -g too")
    ap.add_argument("--project", action="store_true",
                    help="section 6 too: bench/sqlite built whole without LTO, plain against "
                         "mtpc_enable(NO_LTO), interleaved --runs (the project alone with "
                         "--workloads '')")
    ap.add_argument("--build-dir", default=str(lib.BUILD),
                    help="the MTPC build whose tools run (default $MTPC_BUILD_DIR or build/)")
    ap.add_argument("--work", default=None, help="builds (default bench/out/native_bench)")
    ap.add_argument("--cpu", type=int, default=1, help="the CPU of the pinned runs (default 1)")
    ap.add_argument("--cores", type=int, default=os.cpu_count() or 2,
                    help="the cores of the wall runs (default: all)")
    ap.add_argument("--no-callgrind", dest="callgrind", action="store_false",
                    help="no instruction counts")
    ap.add_argument("--quick", action="store_true",
                    help="a small synthetic TU, no callgrind: a check of this script")
    ap.add_argument("--json", default=None,
                    help="write the measurements here (default bench/out/native_bench.json; "
                         "none with --quick)")
    ap.add_argument("--from-json", metavar="FILE", help="print the tables of a JSON, and exit")
    ap.add_argument("--quality-only", action="store_true",
                    help="section 5 alone, for --build-dir (A) and, with --vs or --split-arg, "
                         "a second column (B); nothing timed")
    ap.add_argument("--vs", metavar="BUILD",
                    help="with --quality-only: column B from this MTPC build's mtpc-compile")
    ap.add_argument("--split-arg", action="append", default=[], metavar="WORD",
                    help="with --quality-only: column B passes --split-arg WORD to mtpc-compile "
                         "(repeat; use --split-arg=--opt for a word that starts with -)")
    args = ap.parse_args(argv)
    if (args.vs or args.split_arg) and not args.quality_only:
        ap.error("--vs and --split-arg go with --quality-only")
    if args.from_json:
        ws = json.loads(pathlib.Path(args.from_json).read_text())["workloads"]
        if any("columns" in m for m in ws):
            print(report_quality_only(ws))
        else:
            print("\n\n".join(report_workload(m) for m in ws if "predicted" in m))
        return 0
    args.partitions = args.partitions or (4 if args.quick else 16)
    if args.runs is None:
        args.runs = 1 if args.quick else 3
    if args.pinned_runs is None:
        args.pinned_runs = 1 if args.quick else 3
    if args.quick:
        args.callgrind = False
    elif args.json is None:
        args.json = str(lib.ROOT / "bench" / "out" / "native_bench.json")
    tmp = tempfile.mkdtemp(prefix="native-bench-") if args.quick and not args.work else None
    work = pathlib.Path(args.work or tmp or lib.ROOT / "bench" / "out" / "native_bench").resolve()
    work.mkdir(parents=True, exist_ok=True)
    try:
        t = cb.find_tools(pathlib.Path(args.build_dir).resolve())
    except lib.BenchError as e:
        print(f"native_bench: {e}", file=sys.stderr)
        return 2
    if args.callgrind and not shutil.which("valgrind"):
        print("native_bench: valgrind not found: --no-callgrind, or install it", file=sys.stderr)
        return 2
    known = cb.workloads(work)
    names = [n.strip() for n in args.workloads.split(",") if n.strip()]
    if set(names) - set(known):
        ap.error(f"unknown workload(s) {', '.join(sorted(set(names) - set(known)))}")
    chosen = [cb.synthetic(work)] if args.quick else [known[n] for n in names]
    data = {"date": datetime.datetime.now().isoformat(timespec="seconds"),
            "commit": link_costs.git_commit()[0], "argv": sys.argv, "machine": platform.node(),
            "workloads": []}
    one = quality_only if args.quality_only else bench_workload
    status = cb.run_workloads(chosen, lambda w: one(w, t, args, work / w.name), data, args.json)
    if args.quality_only:
        print("\n" + report_quality_only(data["workloads"]))
        print(f"\n(commit {data['commit']}; {data['date']})")
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
        return status
    if args.project:
        data["project"] = project_builds(t, args, work)
        if args.json:
            pathlib.Path(args.json).write_text(json.dumps(data, indent=1, default=str) + "\n")
    print()
    for m in data["workloads"]:
        if "predicted" in m:
            print(report_workload(m), end="\n\n")
    print(summary(data["workloads"]))
    if "project" in data:
        print("\n" + report_project(data["project"], args.cores))
    print(f"\n(commit {data['commit']}; {data['date']})")
    if tmp:
        shutil.rmtree(tmp, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
