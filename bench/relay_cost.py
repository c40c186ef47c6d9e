#!/usr/bin/env python3
"""What the import step costs, what a relay saves when one function of a library is
edited, and what splitting the edited module for its edits saves (issue 37, item 4: "an
edit reruns only what it changed, at the link too"; docs/performance-history.md, "What an
edit of a library reruns at the link").

A module's ThinLTO shard holds the hash of every module it imports from, so an edit of a
library every module imports from reruns every backend (lld's in-process ThinLTO, or MTPC's
plain backend edges). A *relayed* module (docs/build-integration.md, "Relayed modules") runs
the import as a step of its own, writes the post-import module only if it changed, and
compiles it only then. This measures both sides, on a real project built by
bench/link_costs.py (same wrappers, same builds: --work and --reuse-builds share them):

  (the MTPC build is configured back to MTPC_RELAY=auto and no MTPC_MAX_PARTITIONS after)
  configs   plain   lld's in-process ThinLTO (-Wl,--thinlto-jobs=1)
            never   MTPC's defaults with -DMTPC_RELAY=never and -DMTPC_MAX_PARTITIONS=2
                    (a reconfigure; the partitions of this machine's cores: pinned,
                    mtpc-link would see one core and neither split nor relay): every
                    module not split is one plain backend edge
            always  the same with -DMTPC_RELAY=always: every module not split that costs at
                    least the relay cost is relayed (what `auto` does once history shows
                    forced rebuilds)
            auto    the same with -DMTPC_RELAY=auto (the default): relays and splits for
                    edits by the plan cache's history, which takes a few edits to build
                    up (--edits 5: the fourth edit is the first whose module is split
                    for its edits)
  --configs chooses among them (default plain,never,always; plain is always run).
  per round, for each config in turn (interleaved rounds), everything pinned to one CPU,
  -j1, CPU of each inner edge from the process tree's cgroup (link_costs.CpuTimeline):
    1. the edit undone, the static libraries rebuilt (not measured);
    2. "scratch": the links phase from deleted outputs and a fresh plan cache;
    3. the edit made (one statement at the top of one function), the static libraries
       rebuilt (not measured);
    4. "edit": the links phase again (every link relinks: its library changed);
    3 and 4 again for each of --edits (default 1; the statement changes each time): the
       tables compare the last edit, and list each edit's links phase.

Printed: the links phase's CPU per config and step; for `always`, per relayed module, the
import step's CPU against the same module's plain backend in `never` (scratch), and what
the edit reran: how many relayed modules' import steps, slots (their post-import module
changed) and merges ran, against the plain backends `never` reran; per edit, how many
modules were split for their edits and how many slots ran; pinned, the links phase after
the last edit predicted on 2 and 16 cores (a prediction: the run's per-edge CPU
list-scheduled by bench/predict.py; plain's lld links, whose backends run inside one process,
modelled by the edges of MTPC's first relink of the same link, every module compiled once,
scaled to the plain link's measured CPU).

Usage:
  /usr/bin/python3 bench/relay_cost.py --work /tmp/lc --reuse-builds --json out.json
  /usr/bin/python3 bench/relay_cost.py --edit googletest/src/gtest.cc:'^bool UnitTestImpl::RunAllTests\\(\\) \\{$'
  /usr/bin/python3 bench/relay_cost.py --configs plain,auto --edits 5 --edit ...

Needs what bench/link_costs.py needs.
"""
import argparse
import datetime
import json
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import lib  # noqa: E402
import link_costs as lc  # noqa: E402
import predict  # noqa: E402
import wrap_sweep  # noqa: E402

# The default edit: googletest's Message::GetString, a small function every test module's
# assertions call (and may import): the case where a relay can save least.
DEFAULT_EDITS = {"googletest": r"googletest/src/gtest.cc:^std::string Message::GetString\(\) const \{$"}
# mtpc-link takes its settings from its command line (CMake's cache variables), not from the
# environment: each MTPC config is a reconfigure. Pinned to one CPU, mtpc-link would see one
# core and plan one partition, where nothing is split or relayed: MTPC_MAX_PARTITIONS=2
# plans as on this machine's two cores (with one job a split cannot shorten anything, so
# the large modules stay whole; relaying does not depend on the jobs).
CONFIGS = (("plain", "plain", []),
           ("never", "mtpc", ["-DMTPC_RELAY=never", "-DMTPC_MAX_PARTITIONS=2"]),
           ("always", "mtpc", ["-DMTPC_RELAY=always", "-DMTPC_MAX_PARTITIONS=2"]),
           ("auto", "mtpc", ["-DMTPC_RELAY=auto", "-DMTPC_MAX_PARTITIONS=2"]))
DEFAULT_CONFIGS = "plain,never,always"
CORES = 2   # this machine's: the builds' -j, and --wall's
PREDICT_CORES = (2, 16)  # the pinned run's edges list-scheduled on these many cores
DEFAULTS = ["-DMTPC_RELAY=auto", "-DMTPC_MAX_PARTITIONS="]   # restored at the end
MARK = "/* relay_cost.py edit */"


class Edit:
    """One statement inserted after the first line of FILE matching REGEX (a function's
    opening line), numbered so that each apply() changes the function again; undo()
    restores the file as it was."""

    def __init__(self, source, spec):
        path, sep, regex = spec.partition(":")
        if not sep:
            raise SystemExit(f"relay_cost: --edit wants FILE:REGEX, not {spec!r}")
        self.path = pathlib.Path(source) / path
        self.original = self.path.read_text()
        lines = self.original.split("\n")
        self.at = next((i for i, l in enumerate(lines) if re.search(regex, l)), None)
        if self.at is None:
            raise SystemExit(f"relay_cost: no line of {self.path} matches {regex!r}")
        self.lines, self.count = lines, 0

    def apply(self):
        self.count += 1
        stmt = (f"  {{ static volatile int relay_cost_edit; relay_cost_edit = {self.count}; }} "
                f"{MARK}")
        new = self.lines[:self.at + 1] + [stmt] + self.lines[self.at + 1:]
        self.path.write_text("\n".join(new))

    def undo(self):
        if self.path.read_text() != self.original:
            self.path.write_text(self.original)


def build_libraries(b):
    """The static libraries of the build (what an edit of a library source rebuilds before
    the links), not measured."""
    libs = [o for o, r in b.rules().items() if re.match(r"^(C|CXX)_STATIC_LIBRARY_LINKER__", r)]
    rc, out = wrap_sweep.run(["ninja", "-C", b.bdir, *libs])
    if rc:
        raise lib.BenchError(f"rebuilding the libraries of {b.bdir} failed: {out[-800:]}")


def configure_with(b, defs, pinned=True):
    """Reconfigure b's build (pinned link settings, or the defaults) with more cache
    variables."""
    saved = b.cmake_cmd
    b.cmake_cmd = saved + defs
    try:
        b.configure(pinned, b.bdir / "configure.log")
    finally:
        b.cmake_cmd = saved


def modules_of(run):
    """{link output / module key: {kind: CPU s}} of an MTPC links run."""
    res = {}
    for pl in run["accounting"].get("per_link", []):
        for key, kinds in pl.get("modules", {}).items():
            res[f"{pl['output']}/{key}"] = kinds
    return res


def edit_figures(run, metric="cpu"):
    """What one links run after an edit ran: its seconds (metric: cpu or wall), modules
    split for their edits (the summary lines' "(for its edits)") and slots."""
    split_for_edits = sum(l.count("(for its edits)") for l in run.get("summaries", []))
    slots = sum(1 for d in modules_of(run).values() if "slot" in d)
    return {"cpu": run[metric], "split_for_edits": split_for_edits, "slots": slots}


def link_graph(pl, jobs, deps, whole_seconds=None):
    """One link's edges as jobs (name: seconds) and deps (name: names it waits for), from
    its accounting (link_costs.account's per_link entry): mtpc-link's own time first (the
    link edge minus its inner edges: parsing, the cost estimate, starting ninja), the thin
    link, each module's plain backend or split, slots (its slot CPU shared evenly) and
    merge, then the final link. whole_seconds: the link as one lld would run it, taking
    that long: no own time, every module one backend of all its edges' CPU (lld compiles
    each module once), every job scaled so that they add up to whole_seconds."""
    name, kinds = pl["output"], pl.get("kinds", {})
    counts = pl.get("module_counts", {})
    thin_s = kinds.get("thinlink", {}).get("seconds", 0.0)
    link_s = kinds.get("link", {}).get("seconds", 0.0)
    mods = sum(sum(k.values()) for k in pl.get("modules", {}).values())
    whole, scale = whole_seconds is not None, 1.0
    if whole:
        total = thin_s + link_s + mods
        scale = whole_seconds / total if total > 0 else 0.0
    thin, ends = f"{name}|thinlink", []
    if whole:
        jobs[thin], deps[thin] = thin_s * scale, set()
    else:
        own = f"{name}|own"
        jobs[own], deps[own] = max(pl["seconds"] - thin_s - link_s - mods, 0.0) * scale, set()
        jobs[thin], deps[thin] = thin_s * scale, {own}
    for key, k in sorted(pl.get("modules", {}).items()):
        base = f"{name}|{key}"
        if whole or set(k) == {"backend"}:
            jobs[base], deps[base] = sum(k.values()) * scale, {thin}
            ends.append(base)
            continue
        prev = thin
        if "split" in k:
            jobs[base + "|split"], deps[base + "|split"] = k["split"] * scale, {thin}
            prev = base + "|split"
        n = counts.get(key, {}).get("slot", 1) if "slot" in k else 0
        slots = [f"{base}|slot{i}" for i in range(n)]
        for s in slots:
            jobs[s], deps[s] = k["slot"] / n * scale, {prev}
        if "merge" in k:
            jobs[base + "|merge"], deps[base + "|merge"] = k["merge"] * scale, set(slots) or {prev}
            ends.append(base + "|merge")
        else:
            ends.extend(slots or [prev])
        if "backend" in k:  # a failed split's fallback
            jobs[base + "|backend"], deps[base + "|backend"] = k["backend"] * scale, {prev}
            ends.append(base + "|backend")
    final = f"{name}|link"
    jobs[final], deps[final] = link_s * scale, set(ends) or {thin}


def predict_edit(plain_run, mtpc_run, ref_run, cores):
    """Predicted links phase after an edit on `cores` cores (predict.list_schedule of the
    pinned run's per-edge CPU): MTPC from its own edges; plain lld links, whose backends run
    inside one process, modelled by the edges of ref_run (MTPC's first relink, where every
    module was compiled once) scaled to each plain link's measured CPU. A link without such
    edges (it ran lld in-process in both) is one job; so are the other edges together.
    Returns {"plain": s, "mtpc": s, "ratio": mtpc / plain, "plain_unmodelled": links,
    "mtpc_unmodelled": links}."""
    out = {}
    ref = {pl["output"]: pl for pl in ref_run["accounting"].get("per_link", [])}
    for side, run in (("plain", plain_run), ("mtpc", mtpc_run)):
        acc, jobs, deps, unmodelled = run["accounting"], {}, {}, 0
        per_link = {pl["output"]: pl for pl in acc.get("per_link", [])}
        for link, secs in sorted(acc.get("links", {}).items()):
            pl = per_link.get(link) if side == "mtpc" else ref.get(link)
            if pl and pl.get("modules"):
                link_graph(pl, jobs, deps, None if side == "mtpc" else secs)
            else:
                jobs[link], deps[link] = secs, set()
                unmodelled += 1
        other = acc.get("outer", {}).get("other", {}).get("seconds", 0.0)
        if other > 0:
            jobs["|other"], deps["|other"] = other, set()
        out[side] = predict.list_schedule(jobs, deps, cores)[0]
        out[side + "_unmodelled"] = unmodelled
    out["ratio"] = lib.ratio(out["mtpc"], out["plain"])
    return out


def summarize(runs, metric="cpu"):
    """The tables' figures out of the runs of one round: per config the links phase from
    scratch and after the last edit (and after each edit), in CPU or wall seconds (metric;
    kept under "cpu"); with never and always, the relayed modules' costs and what the last
    edit reran."""
    s = {}
    for name in runs:
        s[name] = {step: runs[name][step][metric] for step in ("scratch", "edit")}
        edits = runs[name].get("edits", [runs[name]["edit"]])
        s[name]["edits"] = [edit_figures(r, metric) for r in edits]
        if metric == "cpu" and name != "plain" and "plain" in runs and \
                "links" in runs["plain"]["edit"].get("accounting", {}):
            s[name]["predicted"] = {str(c): predict_edit(runs["plain"]["edit"], edits[-1], edits[0], c)
                                    for c in PREDICT_CORES}
    if "never" not in runs or "always" not in runs:
        return s
    never, always = modules_of(runs["never"]["scratch"]), modules_of(runs["always"]["scratch"])
    ne, ae = modules_of(runs["never"]["edit"]), modules_of(runs["always"]["edit"])
    # A link of `never` that splits nothing takes the plain path from scratch (lld's
    # in-process ThinLTO: no per-module edges); its relink after the edit runs the inner
    # build (mtpc-link records the history of its larger modules), whose plain backends
    # compile the same modules with one statement more: those stand in.
    never = {**{k: d for k, d in ne.items() if "backend" in d},
             **{k: d for k, d in never.items() if "backend" in d}}
    # relayed: an import (split) step in `always` and a plain backend in `never` (a module
    # split in both has no plain backend in `never`)
    relayed = sorted(k for k, d in always.items() if "split" in d and "backend" in never.get(k, {}))
    sc = {"modules": len(relayed),
          "backend": sum(never[k]["backend"] for k in relayed),
          "import": sum(always[k].get("split", 0) for k in relayed),
          "slot": sum(always[k].get("slot", 0) for k in relayed),
          "merge": sum(always[k].get("merge", 0) for k in relayed)}
    s["scratch_relayed"] = sc
    s["edit_reran"] = {
        "never_backends": sum(1 for k in ne if k in relayed and "backend" in ne[k]),
        "never_backend_cpu": sum(ne[k].get("backend", 0) for k in ne if k in relayed),
        "always_imports": sum(1 for k in ae if k in relayed and "split" in ae[k]),
        "always_slots": sum(1 for k in ae if k in relayed and "slot" in ae[k]),
        "always_merges": sum(1 for k in ae if k in relayed and "merge" in ae[k]),
        "always_cpu": sum(sum(ae[k].values()) for k in ae if k in relayed),
        "always_import_cpu": sum(ae[k].get("split", 0) for k in ae if k in relayed)}
    return s


def report(res):
    f = lc.fmt
    names = [n for n, _, _ in CONFIGS if all(n in r for r in res["rounds"])]
    mtpc = [n for n in names if n != "plain"]
    lines = [f"## {res['project']}: edit of `{res['edit']}`, {len(res['rounds'])} round(s), "
             + (f"on {res['cores']} cores, -j{res['cores']} (wall seconds; modules' steps: their "
              "durations)" if res.get("wall") else f"pinned to cpu {res['cpu']}, -j1 (CPU seconds)"),
             "",
             "| links phase | " + " | ".join(n if n == "plain" else f"MTPC, relay {n}" for n in names)
             + "".join(f" | {n} / plain" for n in mtpc) + " |",
             "| --- |" + " ---: |" * (len(names) + len(mtpc))]
    nedits = max(len(r["plain"].get("edits", [None])) for r in res["rounds"])
    for step in ("scratch", "edit"):
        v = {n: lib.median([r[n][step] for r in res["rounds"]]) for n in names}
        label = step if step == "scratch" or nedits == 1 else f"edit {nedits} (last)"
        lines.append(f"| {label} | " + " | ".join(f(v[n]) for n in names) + "".join(
            f" | {f(lib.ratio(v[n], v['plain']), 3)}" for n in mtpc) + " |")
    for n in mtpc:
        preds = [r[n]["predicted"] for r in res["rounds"] if "predicted" in r.get(n, {})]
        if not preds:
            continue
        lines += ["", f"Predicted links phase after the last edit, {n} (a prediction: this run's "
                  "per-edge CPU list-scheduled on N cores; plain's lld links modelled by the "
                  "edges of MTPC's first relink, where every module compiled once, scaled to "
                  "each plain link's measured CPU), median of the rounds:", "",
                  "| cores | plain s | MTPC s | MTPC / plain |", "| ---: | ---: | ---: | ---: |"]
        for c in preds[0]:
            v = {k: lib.median([p[c][k] for p in preds]) for k in ("plain", "mtpc", "ratio")}
            lines.append(f"| {c} | {f(v['plain'])} | {f(v['mtpc'])} | {f(v['ratio'], 3)} |")
        um = max(p[c]["plain_unmodelled"] + p[c]["mtpc_unmodelled"] for p in preds for c in p)
        if um:
            lines.append(f"({um} links had no per-edge figures and count as one job each.)")
    for i, r in enumerate(res["rounds"]):
        if nedits > 1:
            lines += ["", f"Round {i + 1}, each edit: links phase {'wall' if res.get('wall') else 'CPU'} s "
                      "(modules split for their edits, slots run)", "",
                      "| edit | " + " | ".join(names) + "".join(f" | {n} / plain" for n in mtpc) + " |",
                      "| ---: |" + " ---: |" * (len(names) + len(mtpc))]
            for e in range(nedits):
                row = {n: r[n]["edits"][e] for n in names if e < len(r[n].get("edits", []))}
                if "plain" not in row:
                    continue
                lines.append(f"| {e + 1} | " + " | ".join(
                    f(row[n]["cpu"]) + (f" ({row[n]['split_for_edits']}, {row[n]['slots']})"
                                        if n != "plain" else "") if n in row else "-" for n in names)
                    + "".join(f" | {f(lib.ratio(row[n]['cpu'], row['plain']['cpu']), 3)}"
                              if n in row else " | -" for n in mtpc) + " |")
        if "scratch_relayed" not in r:
            continue
        sc, er = r["scratch_relayed"], r["edit_reran"]
        lines += ["", f"Round {i + 1}: {sc['modules']} relayed modules. From scratch: their plain "
                  f"backends {f(sc['backend'])} s; relayed: import {f(sc['import'])} s "
                  f"({f(lib.ratio(sc['import'], sc['backend']), 3)} of the backends), slot "
                  f"{f(sc['slot'])} s, merge {f(sc['merge'])} s; together "
                  f"{f(lib.ratio(sc['import'] + sc['slot'] + sc['merge'], sc['backend']), 3)}.",
                  f"After the edit: `never` reran {er['never_backends']} of their backends "
                  f"({f(er['never_backend_cpu'])} s); `always` reran {er['always_imports']} "
                  f"imports ({f(er['always_import_cpu'])} s), {er['always_slots']} slots (the "
                  f"post-import module changed) and {er['always_merges']} merges: "
                  f"{f(er['always_cpu'])} s, "
                  f"{f(lib.ratio(er['always_cpu'], er['never_backend_cpu']), 3)} of `never`'s."]
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--project", default="googletest",
                    help="a bench/link_costs.py project (default googletest, its unity build)")
    ap.add_argument("--edit", help="FILE:REGEX: the statement goes after the first line of "
                                   "FILE (relative to the source tree) matching REGEX "
                                   "(default for googletest: Message::GetString)")
    ap.add_argument("--rounds", type=int, default=1, help="interleaved rounds (default 1)")
    ap.add_argument("--configs", default=DEFAULT_CONFIGS,
                    help=f"configs to run, of {','.join(n for n, _, _ in CONFIGS)} (default "
                         f"{DEFAULT_CONFIGS}; plain is always run)")
    ap.add_argument("--edits", type=int, default=1,
                    help="successive edits after each scratch build, each measured (default 1)")
    ap.add_argument("--work", default=str(lib.ROOT / "bench" / "out" / "link_costs"),
                    help="bench/link_costs.py's work folder (sources and builds)")
    ap.add_argument("--mtpc-build", default=str(lib.BUILD),
                    help="the MTPC build whose tools are used (default build/)")
    ap.add_argument("--cpu", type=int, default=1, help="the CPU of every run (default 1)")
    ap.add_argument("--wall", action="store_true",
                    help=f"run the links unpinned at -j{CORES} and compare wall seconds")
    ap.add_argument("--reuse-builds", action="store_true",
                    help="keep link_costs.py's full builds made with the same command and tools")
    ap.add_argument("--json", help="write every measurement here")
    ap.add_argument("--from-json", metavar="FILE", help="print the tables of a JSON, and exit")
    args = ap.parse_args(argv)
    if args.from_json:
        print(report(json.loads(pathlib.Path(args.from_json).read_text())))
        return 0
    chosen = set(args.configs.split(",")) | {"plain"}
    unknown = chosen - {n for n, _, _ in CONFIGS}
    if unknown:
        ap.error(f"--configs: unknown {', '.join(sorted(unknown))}")
    if args.edits < 1 or args.rounds < 1:
        ap.error("--edits and --rounds want at least 1")
    name, spec = lc.project_spec(args.project)
    edit_spec = args.edit or DEFAULT_EDITS.get(name)
    if not edit_spec:
        ap.error(f"--edit is needed for {name}")
    work = pathlib.Path(args.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    lc.tools_ok()
    tc = wrap_sweep.Toolchain(pathlib.Path(args.mtpc_build).resolve())
    source = wrap_sweep.fetch_spec(name, spec, work / "src", work / "fetch.log")
    spec["source"] = str(source)
    builds = lc.make_builds(name, spec, source, tc, work, CORES)
    edit = Edit(source, edit_spec)
    head, dirty = lc.git_commit()
    res = {"date": datetime.datetime.now().isoformat(timespec="seconds"), "commit": head,
           "dirty_files": dirty, "argv": sys.argv, "llvm": tc.version, "project": name,
           "edit": edit_spec, "edits": args.edits, "cpu": args.cpu, "wall": args.wall,
           "cores": CORES, "rounds": []}
    try:
        for c in builds.values():
            lc.full_build(c, tc, args.reuse_builds, 7200)
        for i in range(args.rounds):
            runs = {}
            for cname, bname, defs in CONFIGS:
                if cname not in chosen:
                    continue
                b = builds[bname]
                if defs or args.wall:
                    configure_with(b, defs, not args.wall)
                edit.undo()
                build_libraries(b)
                tag = f"relay-{cname}-{i + 1}"
                lc.log(f"  {cname}: links from scratch, round {i + 1}")
                pinned = not args.wall
                scratch = b.links_run(pinned, tag, args.cpu)
                edits = []
                for e in range(args.edits):
                    edit.apply()
                    build_libraries(b)
                    lc.log(f"  {cname}: links after edit {e + 1}, round {i + 1}")
                    edits.append(b.links_run(pinned, f"{tag}-edit{e + 1}", args.cpu, clean=False,
                                             cache=b.bdir / f"plans-{tag}.sqlite"))
                runs[cname] = {"scratch": scratch, "edit": edits[-1], "edits": edits}
                lc.log(f"    CPU {scratch['cpu']:.2f} s from scratch, after the edits "
                       + ", ".join(f"{r['cpu']:.2f}" for r in edits) + " s")
            round_ = summarize(runs, "wall" if args.wall else "cpu")
            round_["runs"] = runs
            res["rounds"].append(round_)
            if args.json:
                pathlib.Path(args.json).write_text(json.dumps(res, indent=1, default=str) + "\n")
    except lib.BenchError as e:
        print(f"relay_cost: {e}", file=sys.stderr)
        return 1
    finally:
        edit.undo()
        configure_with(builds["mtpc"], DEFAULTS)
    print(report(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
