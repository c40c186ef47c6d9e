#!/usr/bin/env python3
"""Issue #4's benchmark: edit stability, incremental backend rebuild, and timing feedback.

One run measures, side by side:

1. Edit stability. The post-import module of the original program is split into N
   partitions; then one function of the split module's source is edited *in place on one line*
   (an `__asm__ volatile("# mtpc-edit K");` appended to the line that opens its body, so no
   line number moves: SQLite's error codes use __LINE__), the program goes through the
   ThinLTO steps again and the new post-import module is split again:
     mtpc-split (seed)    into the SAME output directory (seeded from OUTDIR/plan.json)
     mtpc-split (cache)   into a fresh directory, seeded from the plan cache (--cache FILE)
     mtpc-split (no seed) control: a fresh split of the edited module (--no-seed)
     llvm-split           llvm-split -jN of both modules (no stability mechanism)
   Reported: partition files byte-identical to the previous build's (fraction, goal >= 0.90;
   at most (N-1)/N is possible since the edited function's partition must change), which
   partitions changed, and whether they are exactly the partitions that contain the edited
   code (the marker found by llvm-dis: the owner, plus partitions that carry a copy of the
   function or a caller it was inlined into before the split) and, for mtpc-split, the
   owner of the edited function according to plan.json. Several functions: --edits K
   (chosen deterministically: mid-sized functions the split owns, evenly spaced in the file).

2. Incremental backend rebuild after the edit, what the inner Ninja build does:
   import + split (`mtpc-split m.o --thinlto-index ...` into the previous build's directory),
   recompiling only the partition files that changed (clang -O2 -c -x ir; one after the other
   and with 2 jobs), `ld.lld -r` merge and `llvm-objcopy` (localize + rename), against the
   plain ThinLTO backend of the edited module (clang -c -x ir m.o -fthinlto-index=...).
   Goal: incremental / backend <= 0.35. Wall and CPU (os.wait4, robust on a shared machine).

3. Feedback. With a plan cache, the original module's split is compiled, every partition's
   compile CPU time is recorded (`mtpc-cache record`: what the slot edges do through the
   library), and the edited module is split again from that cache; its partitions are
   compiled and slowest/mean partition compile CPU is compared with the split of the same
   edited module seeded from a cache holding the same plan but no timings.

Medians of --repeat runs (timings; stability is deterministic and measured once per edit).

Inputs: default SQLite (bench/work/sqlite-amalgamation/sqlite3.c linked with shell.c; run
bench/get-sqlite.sh), or --sources a.c b.c ... (the edited and split module is --module).
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import pathlib
import re
import shutil
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import lib  # noqa: E402
from split_bench import partition_files  # noqa: E402

MARKER = "mtpc-edit"


# ---------------------------------------------------------------- choosing and applying edits

def base_name(sym):
    """Source name of a symbol: without ThinLTO's .llvm.<hash> or MTPC's .mtpc.<hash>."""
    return re.sub(r"\.(llvm|mtpc)\.[0-9a-fA-F]+$", "", sym)


def find_definitions(lines):
    """{name: (header line, body-open line, body-close line)} for C function definitions
    whose header starts in column 0 and whose body ends with a '}' alone in column 0."""
    defs = {}
    i = 0
    n = len(lines)
    hdr = re.compile(r"^[A-Za-z_].*?\b([A-Za-z_]\w*)\s*\(")
    while i < n:
        line = lines[i]
        m = hdr.match(line)
        if not m or line.startswith(("typedef", "struct", "union", "enum", "#")) \
                or line.rstrip().endswith(";"):
            i += 1
            continue
        name = m.group(1)
        open_line = None
        for j in range(i, min(i + 40, n)):
            s = lines[j].rstrip()
            if j > i and (s.endswith(";") or s.startswith("#") or s == "}"):
                break
            if s.endswith("{"):
                open_line = j
                break
        if open_line is None or "=" in lines[i].split("(")[0]:
            i += 1
            continue
        close = None
        for j in range(open_line + 1, n):
            if lines[j].rstrip() == "}":
                close = j
                break
            if hdr.match(lines[j]) and lines[j].rstrip().endswith("{"):
                break       # next definition before a closing brace: not a function body
        if close is None:
            i = open_line + 1
            continue
        defs.setdefault(name, (i, open_line, close))
        i = close + 1
    return defs


LITERAL = re.compile(r"(?<![\w.])([1-9][0-9]*)(?![\w.])")


def literal_line(lines, d):
    """First body line of definition d with a decimal literal outside strings and comments."""
    for j in range(d[1] + 1, d[2]):
        t = lines[j]
        if t.lstrip().startswith("#") or any(c in t for c in ("\"", "'", "/*", "*/", "//")):
            continue
        if LITERAL.search(t):
            return j
    return None


def edit_text(lines, d, k, kind):
    """The source with ONE line of definition d changed in place (no line added or removed):
    kind 'const' adds 1 to the first decimal literal of the body; kind 'asm' appends a no-op
    `__asm__ volatile("# mtpc-edit K");` to the line that opens the body (this also changes
    the function's inferred attributes, e.g. memory effects, which callers' declarations in
    other partitions carry); kind 'line' is 'const' plus an empty line added after the edited
    one, so that every line below it moves. None if the function has no suitable line."""
    out = list(lines)
    if kind == "asm":
        out[d[1]] = lines[d[1]].rstrip("\n").rstrip() + \
            f' __asm__ volatile("# {MARKER} {k}");\n'
        return "".join(out), d[1]
    j = literal_line(lines, d)
    if j is None:
        return None, None
    m = LITERAL.search(lines[j])
    out[j] = lines[j][:m.start()] + str(int(m.group(1)) + 1) + lines[j][m.end():]
    if kind == "line":
        out[j] += "\n"
    return "".join(out), j


def preprocessed(clang, cflags, text, tmp):
    """The preprocessor's output of a source text, without line markers."""
    probe = tmp / "probe.c"
    probe.write_text(text, errors="surrogateescape")
    r = lib.run_measured([clang, "-E", "-P", *cflags, probe, "-o", tmp / "probe.i"],
                         check=False)
    out = (tmp / "probe.i").read_text(errors="replace") if r.returncode == 0 else None
    for f in ("probe.c", "probe.i"):
        (tmp / f).unlink(missing_ok=True)
    return out


def choose_edits(src_lines, owned, k, kind, clang, cflags, tmp, log):
    """k functions: owned by the split, mid-sized (between the median and the 90th percentile
    of body lengths), evenly spaced through the file; each edit must change the preprocessed
    source (not #if'd out, not inside a disabled assert())."""
    defs = find_definitions(src_lines)
    cands = [(name, d) for name, d in defs.items() if name in owned]
    if not cands:
        raise lib.BenchError("no function of the split found in the source")
    sizes = sorted(d[2] - d[1] for _, d in cands)
    lo = sizes[len(sizes) // 2]
    hi = sizes[min(len(sizes) - 1, (len(sizes) * 9) // 10)]
    mid = sorted(((d[1], name, d) for name, d in cands if lo <= d[2] - d[1] <= hi))
    log(f"  {len(defs)} definitions found, {len(cands)} owned by the split, {len(mid)} "
        f"mid-sized ({lo}-{hi} lines)")
    orig_pp = preprocessed(clang, cflags, "".join(src_lines), tmp)
    chosen = []
    tried = set()
    for slot in range(k):
        start = (len(mid) * (2 * slot + 1)) // (2 * k)
        for idx in list(range(start, len(mid))) + list(range(0, start)):
            if idx in tried or len(tried) > 200:
                continue
            tried.add(idx)
            _, name, d = mid[idx]
            text, line = edit_text(src_lines, d, len(chosen) + 1, kind)
            if text is None or "assert(" in src_lines[line]:
                continue
            pp = preprocessed(clang, cflags, text, tmp)
            if pp is not None and pp != orig_pp:
                chosen.append({"function": name, "line": line + 1, "kind": kind,
                               "old": src_lines[line].strip(),
                               "new": text.splitlines()[line].strip(),
                               "body_lines": d[2] - d[1], "k": len(chosen) + 1,
                               "text": text})
                break
    if len(chosen) < k:
        log(f"  only {len(chosen)} usable edits found (asked {k})")
    return chosen


# ---------------------------------------------------------------- what an edit changed

def disassemble(path, llvm_dis):
    """Disassembly with what changes with ANY edit of the module normalized away: the
    ModuleID line and ThinLTO's promoted-name suffixes (.llvm.<module hash>)."""
    text = lib.run_measured([llvm_dis, "-o", "-", path]).stdout
    text = text.split("\n", 1)[1] if text.startswith("; ModuleID") else text
    return re.sub(r"\.llvm\.[0-9]+", ".llvm.H", text)


def function_bodies(text):
    """{function name: body} of the definitions in a disassembly, with attribute group and
    metadata numbers normalized (they shift when anything else in the module changes)."""
    defs, cur, name = {}, None, None
    for line in text.splitlines():
        if line.startswith("define "):
            m = re.search(r'@("[^"]+"|[\w.$]+)\(', line)
            name, cur = (m.group(1) if m else line), [line]
        elif cur is not None:
            cur.append(line)
            if line == "}":
                defs[name] = re.sub(r"(#|!)[0-9]+", r"\1N", "\n".join(cur))
                cur = None
    return defs


def edited_functions(old_bc, new_bc, llvm_dis):
    """Functions whose body differs between two post-import modules: the edited function and
    any function it was inlined into before the split."""
    a = function_bodies(disassemble(old_bc, llvm_dis))
    b = function_bodies(disassemble(new_bc, llvm_dis))
    return sorted(n for n in b if a.get(n) != b[n])


# ---------------------------------------------------------------- variants of the program

class Program:
    """The program's ThinLTO state at fixed paths (so module identifiers, source file names
    and ThinLTO's promoted names are what a real rebuild sees); each variant (original,
    edit k) is prepared once and stashed, and `activate` copies it back into place."""

    def __init__(self, sources, module, work, opt, cflags, ldflags, log):
        self.sources = [pathlib.Path(s).resolve() for s in sources]
        self.module = module
        self.work = work
        self.opt = opt
        self.cflags = list(cflags) + [f"-I{self.sources[module].parent}"]
        self.ldflags = ldflags
        self.log = log
        self.src = work / "src" / self.sources[module].name
        self.src.parent.mkdir(parents=True, exist_ok=True)
        self.thin = work / "thin"
        self.orig_lines = self.sources[module].read_text(errors="surrogateescape") \
            .splitlines(keepends=True)
        self.pi = None

    def prepare(self, name, text):
        """Compile + thin link + post-import module of the program with the module's source
        `text`; stashed in work/variants/<name>/ (reused while the inputs are the same)."""
        key = hashlib.sha256("\0".join([text, self.opt, *self.cflags, *self.ldflags,
                                        *map(str, self.sources)]).encode(
                                            "utf-8", "surrogateescape")).hexdigest()
        stash = self.work / "variants" / name
        if (stash / "key").exists() and (stash / "key").read_text() == key:
            return stash
        self.log(f"  preparing variant {name}")
        self.src.write_text(text, errors="surrogateescape")
        srcs = list(self.sources)
        srcs[self.module] = self.src
        pi = lib.thin_post_import(srcs, self.thin, self.opt, self.cflags, self.ldflags,
                                  self.module, log=lambda s: self.log("  " + s))
        self.pi = pi
        shutil.rmtree(stash, ignore_errors=True)
        stash.mkdir(parents=True)
        for f in (pi.module_obj, pi.index, pi.import_bc):
            shutil.copy2(f, stash / f.name)
        (stash / "backend_cmd.json").write_text(json.dumps([str(c) for c in pi.backend_cmd]))
        (stash / "paths.json").write_text(json.dumps(
            {"obj": str(pi.module_obj), "index": str(pi.index), "import": str(pi.import_bc)}))
        (stash / "key").write_text(key)
        return stash

    def activate(self, stash):
        """Put a variant's object, index and post-import module at the canonical paths."""
        paths = json.loads((stash / "paths.json").read_text())
        for p in paths.values():
            p = pathlib.Path(p)
            tmp = p.with_name(p.name + ".tmp")
            shutil.copyfile(stash / p.name, tmp)
            os.replace(tmp, p)
        return {k: pathlib.Path(v) for k, v in paths.items()}, \
            json.loads((stash / "backend_cmd.json").read_text())


# ---------------------------------------------------------------- comparing splits

def file_hashes(d):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in partition_files(d)}


def part_index(name):
    return int(name.removesuffix(".bc")[1:])


def fn_key(name):
    """A function's name without quotes and promoted-name suffixes (ThinLTO's .llvm.<hash>,
    MTPC's .mtpc.<hash>), to match functions across the module and its partitions."""
    return re.sub(r"\.(llvm|mtpc)\.\w+$", "", name.strip('"'))


def outside_bodies(text):
    """Lines outside function bodies (declarations, globals, attribute groups), numbers of
    attribute groups and metadata normalized."""
    out, inside = set(), False
    for line in text.splitlines():
        if line.startswith("define "):
            inside = True
        elif inside and line == "}":
            inside = False
        elif not inside:
            out.add(re.sub(r"(#|!)[0-9]+", r"\1N", line))
    return out


def compare(old_dir, new_dir, llvm_dis, edited, plan=None, function=None):
    """Partition files of two splits: identical ones, changed ones, which of those define (own
    or copy) a function the edit changed, and for the others what differs. Also how many
    would be identical if ThinLTO's promoted names (.llvm.<module hash>) were stable."""
    old, new = file_hashes(old_dir), file_hashes(new_dir)
    changed = sorted(part_index(n) for n, h in new.items() if old.get(n) != h)
    edited_keys = {fn_key(f) for f in edited}
    with_edit, changed_norm, detail = [], [], {}
    for i in changed:
        name = next(n for n in new if part_index(n) == i)
        tn = disassemble(new_dir / name, llvm_dis)
        bn = function_bodies(tn)
        if edited_keys & {fn_key(f) for f in bn}:
            with_edit.append(i)
        if name not in old:
            changed_norm.append(i)
            continue
        to = disassemble(old_dir / name, llvm_dis)
        if to != tn:
            changed_norm.append(i)
        bo = function_bodies(to)
        oo, on = outside_bodies(to), outside_bodies(tn)
        detail[i] = {"bodies_differ": sorted(f for f in set(bo) | set(bn)
                                             if bo.get(f) != bn.get(f))[:20],
                     "other_lines_differ": len(oo ^ on),
                     "examples": sorted(oo ^ on)[:4],
                     "only_llvm_hash_names": to == tn}
    identical = len(new) - len(changed)
    r = {"partitions": len(new), "previous_partitions": len(old), "identical": identical,
         "fraction": lib.ratio(identical, len(new)), "changed": changed,
         "with_edit": with_edit, "collateral": sorted(set(changed) - set(with_edit)),
         "exact": changed == with_edit,
         "changed_modulo_llvm_hash": changed_norm,
         "fraction_modulo_llvm_hash": lib.ratio(len(new) - len(changed_norm), len(new)),
         "collateral_detail": {i: detail[i] for i in sorted(set(changed) - set(with_edit))
                               if i in detail}}
    if plan is not None and function:
        owners, copies = [], []
        for p in plan["partitions"]:
            if any(base_name(s) == function for s in p["owned"]):
                owners.append(p["index"])
            if any(base_name(s) == function for s in p.get("copies", []) + p.get(
                    "duplicated", [])):
                copies.append(p["index"])
        r["owner"] = owners
        r["copies_of_function"] = copies
        r["changed_is_owner"] = changed == sorted(owners)
    return r


# ---------------------------------------------------------------- compiling partitions

def compile_parts(clang, opt, parts, jobs=1):
    """Compile partition files as MTPC's slots do (lib.slot_compile_cmd); returns (wall of the whole set, list of
    (name, cpu, wall, object bytes))."""
    def one(p):
        obj = p.with_name(p.name.removesuffix(".bc") + ".o")
        m = lib.run_measured(lib.slot_compile_cmd(clang, [opt], p, obj))
        lib.check_object(obj, f"partition {p.name}")
        return (p.name, m.cpu, m.wall, obj.stat().st_size)
    t0 = time.perf_counter()
    if jobs <= 1 or len(parts) <= 1:
        res = [one(p) for p in parts]
    else:
        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as ex:
            res = list(ex.map(one, parts))
    return time.perf_counter() - t0, res


def merge(outdir, lld, objcopy):
    objs = [p.with_name(p.name.removesuffix(".bc") + ".o") for p in partition_files(outdir)]
    merged = outdir / "merged.o"
    m1 = lib.run_measured([lld, "-r", *objs, "-o", merged])
    wall, cpu = m1.wall, m1.cpu
    args = []
    for f, opt in (("localize.txt", "--localize-symbols"), ("rename.txt", "--redefine-syms")):
        if (outdir / f).exists() and (outdir / f).stat().st_size:
            args.append(f"{opt}={outdir / f}")
    if args:
        m2 = lib.run_measured([objcopy, *args, merged])
        wall, cpu = wall + m2.wall, cpu + m2.cpu
    lib.check_object(merged, "merged object")
    return wall, cpu


# ---------------------------------------------------------------- the three measurements

def stability(prog, variants, edits, n, tools, work, log):
    """Per edit: the partitions that stay byte-identical, for each splitter."""
    split, llvm_split, llvm_dis = tools["mtpc-split"], tools["llvm-split"], tools["llvm-dis"]
    out = {"mtpc-split (seed)": [], "mtpc-split (cache)": [], "mtpc-split (no seed)": [],
           "llvm-split": []}
    d = work / f"stab-{n}"
    for e in edits:
        log(f"  stability, {n} partitions, edit {e['k']} ({e['function']})")
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
        cache = d / "plans.sqlite"
        common = ["-n", n]
        mp = ["--module-path", prog.src.name]
        paths, _ = prog.activate(variants["orig"])
        imp = paths["import"]
        lib.run_measured([split, imp, "-o", d / "seed", *common])
        shutil.copytree(d / "seed", d / "seed0")     # the previous build, for comparisons
        lib.run_measured([split, imp, "-o", d / "cache0", *common, "--cache", cache, *mp])
        (d / "llvm0").mkdir()
        lib.run_measured([llvm_split, f"-j{n}", "-o", d / "llvm0" / "p", imp])
        paths, _ = prog.activate(variants[f"edit{e['k']}"])
        fn, ed = e["function"], e["edited_functions"]
        lib.run_measured([split, imp, "-o", d / "seed", *common])
        plan = json.loads((d / "seed" / "plan.json").read_text())
        out["mtpc-split (seed)"].append(compare(d / "seed0", d / "seed", llvm_dis, ed, plan, fn))
        lib.run_measured([split, imp, "-o", d / "cache1", *common, "--cache", cache, *mp])
        plan = json.loads((d / "cache1" / "plan.json").read_text())
        out["mtpc-split (cache)"].append(compare(d / "cache0", d / "cache1", llvm_dis, ed,
                                                 plan, fn))
        lib.run_measured([split, imp, "-o", d / "noseed", *common, "--no-seed"])
        plan = json.loads((d / "noseed" / "plan.json").read_text())
        out["mtpc-split (no seed)"].append(compare(d / "seed0", d / "noseed", llvm_dis, ed,
                                                   plan, fn))
        (d / "llvm1").mkdir()
        lib.run_measured([llvm_split, f"-j{n}", "-o", d / "llvm1" / "p", imp])
        out["llvm-split"].append(compare(d / "llvm0", d / "llvm1", llvm_dis, ed))
    summary = {}
    for name, rs in out.items():
        summary[name] = {
            "fraction_median": lib.median(r["fraction"] for r in rs),
            "fraction_min": min((r["fraction"] for r in rs), default=float("nan")),
            "changed_median": lib.median(len(r["changed"]) for r in rs),
            "fraction_modulo_llvm_hash_median": lib.median(
                r["fraction_modulo_llvm_hash"] for r in rs),
            "all_exact": all(r["exact"] for r in rs),
            "all_changed_is_owner": all(r.get("changed_is_owner", False) for r in rs)
            if name.startswith("mtpc") else None,
        }
    return {"per_edit": out, "summary": summary}


def incremental(prog, variants, edits, n, tools, work, repeat, base_backend, log):
    """Per edit and repeat: import + split into the previous build's directory, recompile the
    changed partitions, merge; against the plain ThinLTO backend of the edited module."""
    split, clang, opt = tools["mtpc-split"], tools["clang"], prog.opt
    base = work / f"inc-{n}" / "base"
    paths, _ = prog.activate(variants["orig"])
    fused = ["--thinlto-index", paths["index"], "--relocation-model", tools["reloc"],
             "-n", n]
    log(f"  incremental, {n} partitions: full build of the original")
    shutil.rmtree(base.parent, ignore_errors=True)
    base.mkdir(parents=True)
    lib.run_measured([split, paths["obj"], "-o", base, *fused])
    compile_parts(clang, opt, partition_files(base), jobs=1)
    merge(base, tools["ld.lld"], tools["llvm-objcopy"])
    h0 = file_hashes(base)
    runs = {e["k"]: [] for e in edits}
    for r in range(repeat):
        for e in edits:
            log(f"  incremental, {n} partitions, edit {e['k']}, repeat {r + 1}/{repeat}")
            paths, _ = prog.activate(variants[f"edit{e['k']}"])
            res = {}
            for jobs in (1, 2):
                d = work / f"inc-{n}" / f"e{e['k']}-j{jobs}"
                shutil.rmtree(d, ignore_errors=True)
                shutil.copytree(base, d)
                s = lib.run_measured([split, paths["obj"], "-o", d, *fused])
                h1 = file_hashes(d)
                changed = [d / name for name, h in sorted(h1.items()) if h0.get(name) != h]
                cw, parts = compile_parts(clang, opt, changed, jobs)
                mw, mc = merge(d, tools["ld.lld"], tools["llvm-objcopy"])
                pc = sum(p[1] for p in parts)
                res[f"j{jobs}"] = {
                    "split_wall": s.wall, "split_cpu": s.cpu, "changed": len(changed),
                    "partitions": len(h1), "compile_wall": cw, "compile_cpu": pc,
                    "merge_wall": mw, "merge_cpu": mc,
                    "total_wall": s.wall + cw + mw, "total_cpu": s.cpu + pc + mc}
            b = base_backend[e["k"]][r]
            res["backend_wall"], res["backend_cpu"] = b["wall"], b["cpu"]
            runs[e["k"]].append(res)
    per_edit = {}
    for k, rs in runs.items():
        s = {}
        for j in ("j1", "j2"):
            for f in ("split_wall", "split_cpu", "compile_wall", "compile_cpu", "merge_wall",
                      "merge_cpu", "total_wall", "total_cpu", "changed", "partitions"):
                s[f"{j}_{f}"] = lib.median(x[j][f] for x in rs)
            s[f"{j}_wall_over_backend"] = lib.median(
                x[j]["total_wall"] / x["backend_wall"] for x in rs)
            s[f"{j}_cpu_over_backend"] = lib.median(
                x[j]["total_cpu"] / x["backend_cpu"] for x in rs)
        s["backend_wall"] = lib.median(x["backend_wall"] for x in rs)
        s["backend_cpu"] = lib.median(x["backend_cpu"] for x in rs)
        per_edit[k] = {"summary": s, "runs": rs}
    return per_edit


def feedback(prog, variants, edit, n, tools, work, repeat, log):
    """Slowest/mean partition compile CPU of the edited module, split from a cache holding
    the original's plan without timings ('before') and with measured timings ('after')."""
    split, clang, cachecli = tools["mtpc-split"], tools["clang"], tools["mtpc-cache"]
    d = work / f"fb-{n}"
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    mp = ["--module-path", prog.src.name, "-n", n]

    def measure(outdir, label):
        per = {}
        for r in range(repeat):
            log(f"  feedback, {n} partitions: compile {label} ({r + 1}/{repeat})")
            _, res = compile_parts(clang, prog.opt, partition_files(outdir), jobs=1)
            for name, cpu, _, size in res:
                per.setdefault(name, []).append((cpu, size))
        cpus = {name: lib.median(c for c, _ in v) for name, v in per.items()}
        sizes = {name: v[-1][1] for name, v in per.items()}
        plan = json.loads((outdir / "plan.json").read_text())
        mean = sum(cpus.values()) / len(cpus)
        return {"cpu": [cpus[k] for k in sorted(cpus, key=part_index)],
                "cost": [p["cost"] for p in plan["partitions"]],
                "slowest": max(cpus.values()), "mean": mean,
                "sum": sum(cpus.values()),
                "slowest_over_mean": lib.ratio(max(cpus.values()), mean)}, cpus, sizes, plan

    paths, _ = prog.activate(variants["orig"])
    imp = paths["import"]
    lib.run_measured([split, imp, "-o", d / "orig", "--cache", d / "fb.sqlite", *mp])
    lib.run_measured([split, imp, "-o", d / "orig-nofb", "--cache", d / "nofb.sqlite", *mp])
    orig, cpus, sizes, plan0 = measure(d / "orig", "original")
    for name, cpu in cpus.items():
        lib.run_measured([cachecli, "--cache", d / "fb.sqlite", "record",
                          "--module-hash", plan0["input_hash"],
                          "--options-hash", plan0["options_hash"],
                          "--partition", part_index(name), "--seconds", f"{cpu:.4f}",
                          "--object-bytes", sizes[name]])
    paths, _ = prog.activate(variants[f"edit{edit['k']}"])
    s_b = lib.run_measured([split, imp, "-o", d / "before", "--cache", d / "nofb.sqlite", *mp])
    s_a = lib.run_measured([split, imp, "-o", d / "after", "--cache", d / "fb.sqlite", *mp])
    before, _, _, plan_b = measure(d / "before", "edited, cache without timings")
    after, _, _, plan_a = measure(d / "after", "edited, cache with measured timings")
    own_b = {base_name(s): p["index"] for p in plan_b["partitions"] for s in p["owned"]}
    own_a = {base_name(s): p["index"] for p in plan_a["partitions"] for s in p["owned"]}
    moved = sum(1 for f, i in own_a.items() if own_b.get(f) != i)
    return {"edit": edit["k"], "original": orig, "before": before, "after": after,
            "functions_moved_by_feedback": moved, "split_cpu_before": s_b.cpu,
            "split_cpu_after": s_a.cpu,
            "after_stderr": s_a.stderr.strip()[-2000:]}


# ---------------------------------------------------------------- report

# ---------------------------------------------------------------- 4. the real flow

def real_flow(edits, n, work, log, build_type="Release"):
    """What a user sees: bench/sqlite configured twice (plain ThinLTO; MTPC with default
    settings except MTPC_MAX_PARTITIONS=n, its own plan cache as a user's default one),
    each fully built, then each edit written into the project's sqlite3.c in turn (each on
    the original text) and `ninja sqlite3` rebuilt in both: slots re-run (from the inner
    build's output) and the incremental link's wall and CPU, the edited object compiled
    first, untimed, in both."""
    root = work / "real"
    shutil.rmtree(root, ignore_errors=True)
    src = root / "src"
    src.mkdir(parents=True)
    amal = lib.ROOT / "bench" / "work" / "sqlite-amalgamation"
    for f in amal.iterdir():
        shutil.copy(f, src / f.name)
    orig = (src / "sqlite3.c").read_text(errors="surrogateescape")
    env = dict(os.environ, XDG_CACHE_HOME=str(root / "xdg"))
    env.pop("MTPC_CACHE", None)
    cc = lib.llvm_tool("clang")
    builds = {"thin": root / "thin", "mtpc": root / "mtpc"}
    for name, b in builds.items():
        cmd = ["cmake", "-G", "Ninja", "-S", lib.ROOT / "bench" / "sqlite", "-B", b,
               f"-DCMAKE_C_COMPILER={cc}", f"-DSQLITE_AMALGAMATION_DIR={src}",
               f"-DCMAKE_BUILD_TYPE={build_type}"]
        if name == "mtpc":
            cmd += ["-DSQLITE_USE_MTPC=ON", f"-DMTPC_DIR={lib.mtpc_dir()}",
                    f"-DMTPC_MAX_PARTITIONS={n}"]
        lib.run_measured(cmd, env=env)
        log(f"  real flow: full build ({name})")
        lib.run_measured(["ninja", "-C", b, "sqlite3"], env=env)
    out = []
    for e in edits:
        (src / "sqlite3.c").write_text(e["text"], errors="surrogateescape")
        row = {"edit": e["k"], "function": e["function"]}
        for name, b in builds.items():
            lib.run_measured(["ninja", "-C", b, "sqlite3_obj"], env=env)
            m = lib.run_measured(["ninja", "-C", b, "sqlite3"], env=env)
            row[f"{name}_wall"], row[f"{name}_cpu"] = m.wall, m.cpu
            if name == "mtpc":
                row["slots_rerun"] = len(re.findall(r"MTPC slot \S*sqlite3\.c\S* p\d+",
                                                    m.stdout))
                parts = re.search(r"sqlite3\.c\.o: (\d+) partitions?", m.stdout)
                row["partitions"] = int(parts.group(1)) if parts else 0
                row["summary"] = next((l for l in m.stdout.splitlines()
                                       if l.startswith("mtpc-link:")), "")
        row["link_wall_ratio"] = row["mtpc_wall"] / row["thin_wall"]
        log(f"  real flow: edit {e['k']} ({e['function']}): {row['slots_rerun']}/"
            f"{row['partitions']} slots re-run, link {row['mtpc_wall']:.2f} s vs "
            f"{row['thin_wall']:.2f} s")
        out.append(row)
    (src / "sqlite3.c").write_text(orig, errors="surrogateescape")
    return out


def fr(x):
    return "n/a" if x != x else f"{x:.3f}"


def report(res, out=print):
    out(f"\nedits ({res['source']}):")
    for e in res["edits"]:
        out(f"  edit {e['k']}: {e['function']} ({e['body_lines']} lines), line {e['line']}: "
            f"{e['old']!r} -> {e['new']!r}; functions changed in the post-import module: "
            f"{', '.join(e['edited_functions'])}")
    for n, st in res["stability"].items():
        out(f"\nEdit stability, {n} partitions (goal >= 0.90 identical; at most "
            f"{(int(n) - 1) / int(n):.3f} possible)")
        out(f"  {'splitter':22} {'identical (median, min)':>24} {'changed (median)':>17}"
            f"  per edit: changed / defining an edited function / owner")
        for name, s in st["summary"].items():
            per = "; ".join(
                f"e{e['k']}: {r['changed']}/{r['with_edit']}"
                + (f"/{r['owner']}" if "owner" in r else "")
                for e, r in zip(res["edits"], st["per_edit"][name]))
            out(f"  {name:22} {fr(s['fraction_median']):>12} {fr(s['fraction_min']):>10} "
                f"{s['changed_median']:>17}  {per}")
            notes = []
            notes.append("only partitions containing the edit changed" if s["all_exact"]
                         else "OTHER partitions changed too")
            if s["all_changed_is_owner"] is not None:
                notes.append("changed = owner of the edited function" if
                             s["all_changed_is_owner"] else "changed != owner for some edit")
            notes.append("identical if ThinLTO's .llvm.<hash> names were stable: "
                         + fr(s["fraction_modulo_llvm_hash_median"]) + " (median)")
            out(f"  {'':22} {', '.join(notes)}")
    for n, inc in res["incremental"].items():
        out(f"\nIncremental backend rebuild after the edit, {n} partitions (goal <= 0.35; "
            f"medians of {res['repeat']})")
        out(f"  {'edit':6} {'changed':>8} {'backend wall/CPU':>18} {'1 job wall/CPU':>18} "
            f"{'ratio wall':>10} {'ratio CPU':>9} {'2 jobs wall':>11} {'ratio wall':>10}")
        for k, v in inc.items():
            s = v["summary"]
            out(f"  {k:<6} {s['j1_changed']:>3.0f}/{s['j1_partitions']:<4.0f} "
                f"{s['backend_wall']:>8.2f}/{s['backend_cpu']:<6.2f}s  "
                f"{s['j1_total_wall']:>7.2f}/{s['j1_total_cpu']:<6.2f}s "
                f"{fr(s['j1_wall_over_backend']):>10} {fr(s['j1_cpu_over_backend']):>9} "
                f"{s['j2_total_wall']:>9.2f} s {fr(s['j2_wall_over_backend']):>10}")
            out(f"  {'':6} 1 job: import+split {s['j1_split_wall']:.2f} s wall "
                f"({s['j1_split_cpu']:.2f} s CPU), compile {s['j1_compile_wall']:.2f} s, "
                f"merge+objcopy {s['j1_merge_wall']:.2f} s")
    for n, fb in res["feedback"].items():
        out(f"\nFeedback, {n} partitions, edit {fb['edit']} (partition compile CPU, medians "
            f"of {res['repeat']}):")
        for label in ("original", "before", "after"):
            s = fb[label]
            what = {"original": "original module (times recorded)",
                    "before": "edited, cache without timings",
                    "after": "edited, cache with measured timings"}[label]
            out(f"  {what:38} slowest {s['slowest']:.2f} s, mean {s['mean']:.2f} s, "
                f"slowest/mean {fr(s['slowest_over_mean'])}, sum {s['sum']:.2f} s")
            out(f"  {'':38} per partition: " + " ".join(f"{c:.2f}" for c in s["cpu"]))
        out(f"  functions placed differently because of the feedback: "
            f"{fb['functions_moved_by_feedback']}")
    for n, rows in res.get("real_flow", {}).items():
        out(f"\nReal flow, bench/sqlite target sqlite3, CMAKE_BUILD_TYPE="
            f"{res.get('build_type', 'Release')}, MTPC_MAX_PARTITIONS={n}, default "
            "settings otherwise: full build, then each edit (first edit first)")
        out(f"  {'edit':6} {'slots re-run':>13} {'MTPC link':>10} {'ThinLTO link':>13} "
            f"{'ratio':>6}")
        for r in rows:
            out(f"  {r['edit']:<6} {r['slots_rerun']:>6}/{r['partitions']:<6} "
                f"{r['mtpc_wall']:>8.2f} s {r['thin_wall']:>11.2f} s "
                f"{fr(r['link_wall_ratio']):>6}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sources", nargs="+", metavar="FILE",
                    help="C sources of a program (default: SQLite's sqlite3.c + shell.c)")
    ap.add_argument("--module", type=int, default=0,
                    help="index in --sources of the module to edit and split (default 0)")
    ap.add_argument("--ldflags", default="-lm -lpthread -ldl",
                    help="libraries/flags for the thin link (default: %(default)s)")
    ap.add_argument("--cflags", default="", help="extra flags for every compile")
    ap.add_argument("--opt", default="-O2", help="optimization level (default -O2)")
    ap.add_argument("-n", "--partitions", default="8,16",
                    help="comma list of partition counts (default 8,16)")
    ap.add_argument("--edits", type=int, default=3,
                    help="number of one-function edits, each to a different function, "
                    "each measured on its own (default 3)")
    ap.add_argument("--edit-kind", choices=("const", "asm", "line"), default="const",
                    help="const: add 1 to the first decimal literal of the function body "
                    "(default); asm: append a no-op asm statement to the line opening the body "
                    "(also changes the function's inferred attributes); line: const plus an "
                    "empty line after it (every line below moves)")
    ap.add_argument("-r", "--repeat", type=int, default=3, help="repeats (default 3)")
    ap.add_argument("--no-feedback", action="store_true", help="skip measurement 3")
    ap.add_argument("--no-incremental", action="store_true", help="skip measurement 2")
    ap.add_argument("--real-flow", action="store_true",
                    help="measurement 4: the SQLite CMake project (bench/sqlite) as a user "
                    "builds it, full build then the edits (SQLite sources only)")
    ap.add_argument("--build-type", default="Release",
                    help="CMAKE_BUILD_TYPE of the real flow's builds (RelWithDebInfo: -g; "
                         "default Release)")
    ap.add_argument("--only-real-flow", action="store_true",
                    help="measurement 4 alone (skips 1-3)")
    ap.add_argument("--relocation-model", default="pic", choices=("pic", "static"),
                    help="for the in-process import: pic (clang's default PIE; default)")
    ap.add_argument("--work", default=str(lib.ROOT / "bench" / "out" / "edit_bench"),
                    help="scratch folder (default bench/out/edit_bench)")
    ap.add_argument("--json", help="write all measurements and summaries to this file")
    ap.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    args = ap.parse_args(argv)
    log = (lambda s: None) if args.quiet else (lambda s: print(s, flush=True))

    work = pathlib.Path(args.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    tools = {t: lib.llvm_tool(t) for t in ("clang", "ld.lld", "llvm-objcopy", "llvm-split",
                                           "llvm-dis")}
    for t in ("mtpc-split", "mtpc-cache"):
        tools[t] = lib.mtpc_tool(t)
        if not tools[t]:
            ap.error(f"{t} is not built (expected under {lib.BUILD}; run scripts/build.sh)")
    tools["reloc"] = args.relocation_model
    ns = [int(x) for x in args.partitions.split(",")]
    cflags = args.cflags.split()

    if args.sources:
        sources = args.sources
    else:
        amal = lib.ROOT / "bench" / "work" / "sqlite-amalgamation"
        if not (amal / "sqlite3.c").exists():
            ap.error(f"{amal}/sqlite3.c missing: run bench/get-sqlite.sh (or give --sources)")
        sources = [amal / "sqlite3.c", amal / "shell.c"]

    t_start = time.time()
    prog = Program(sources, args.module, work, args.opt, cflags, args.ldflags.split(), log)
    log(f"preparing the original program ({prog.src.name})")
    variants = {"orig": prog.prepare("orig", "".join(prog.orig_lines))}
    paths, _ = prog.activate(variants["orig"])
    sel = work / "select"
    shutil.rmtree(sel, ignore_errors=True)
    lib.run_measured([tools["mtpc-split"], paths["import"], "-o", sel, "-n", ns[0]])
    plan = json.loads((sel / "plan.json").read_text())
    owned = {base_name(s) for p in plan["partitions"] for s in p["owned"]}
    log("choosing the edits")
    edits = choose_edits(prog.orig_lines, owned, args.edits, args.edit_kind, tools["clang"],
                         prog.cflags, work, log)
    if not edits:
        raise lib.BenchError("no usable edit found")
    if args.only_real_flow:
        # No ThinLTO runs of the variants: the real flow builds them itself.
        for e in edits:
            e["edited_functions"] = [e["function"]]
    else:
        orig_import = work / "orig.import.bc"
        shutil.copyfile(paths["import"], orig_import)
        for e in edits:
            log(f"  edit {e['k']}: {e['function']} line {e['line']}: {e['old']!r} -> {e['new']!r}")
            variants[f"edit{e['k']}"] = prog.prepare(f"edit{e['k']}", e["text"])
            p, _ = prog.activate(variants[f"edit{e['k']}"])
            e["edited_functions"] = edited_functions(orig_import, p["import"], tools["llvm-dis"])
            log(f"    functions changed in the post-import module: {e['edited_functions']}")
            if not e["edited_functions"]:
                log(f"  warning: edit {e['k']} ({e['function']}) changed no function of the "
                    "post-import module: dropped")
        edits = [e for e in edits if e["edited_functions"]]
        if not edits:
            raise lib.BenchError("no edit changed the post-import module")

    res = {"source": str(pathlib.Path(sources[args.module])), "partitions": ns,
           "repeat": args.repeat, "opt": args.opt, "edits": edits,
           "stability": {}, "incremental": {}, "feedback": {}, "backend": {}}
    if args.real_flow or args.only_real_flow:
        if args.sources:
            ap.error("--real-flow builds bench/sqlite: SQLite sources only")
        res["real_flow"] = {}
        res["build_type"] = args.build_type
        for n in ns:
            res["real_flow"][str(n)] = real_flow(edits, n, work, log, args.build_type)
    for e in edits:
        e.pop("text", None)
    if args.only_real_flow:
        args.no_incremental = args.no_feedback = True
        ns_stability = []
    else:
        ns_stability = ns
    log("stability")
    for n in ns_stability:
        res["stability"][str(n)] = stability(prog, variants, edits, n, tools, work, log)
    if not args.no_incremental:
        # the plain ThinLTO backend of each edited module, measured once per repeat (it does
        # not depend on N), interleaved with the incremental runs' repeats
        base_backend = {e["k"]: [] for e in edits}
        for r in range(args.repeat):
            for e in edits:
                log(f"  plain ThinLTO backend, edit {e['k']}, repeat {r + 1}/{args.repeat}")
                _, cmd = prog.activate(variants[f"edit{e['k']}"])
                out = work / "backend.o"
                m = lib.run_measured(cmd + ["-o", out])
                lib.check_object(out, "plain ThinLTO backend")
                base_backend[e["k"]].append({"wall": m.wall, "cpu": m.cpu})
        res["backend"] = base_backend
        for n in ns:
            res["incremental"][str(n)] = incremental(prog, variants, edits, n, tools, work,
                                                     args.repeat, base_backend, log)
    if not args.no_feedback:
        for n in ns:
            res["feedback"][str(n)] = feedback(prog, variants, edits[0], n, tools, work,
                                               args.repeat, log)
    res["seconds"] = time.time() - t_start
    res["date"] = time.strftime("%Y-%m-%d %H:%M:%S %z")
    res["loadavg_end"] = os.getloadavg()
    report(res)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(res, indent=1) + "\n")
        print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except lib.BenchError as e:
        lib.eprint(f"edit_bench: {e}")
        sys.exit(1)
