"""Shared helpers for the mtpc-split acceptance tests (test_split_hazards/stress/errors).

What they do: compile a hazard fixture (tests/hazards/*.c|*.cpp|*.ll) to the bitcode mtpc-split
gets (`clang -O2 -flto=thin -c`, or `llvm-as` for .ll; tools of the LLVM MTPC is built with,
conftest.LLVM_BIN), build the unsplit reference object (`clang -O2 -c -x ir`), split, verify,
compile each partition, merge with `ld.lld -r`,
localize with `llvm-objcopy --localize-symbols=localize.txt`, compare symbol tables, link and
run programs.

Fixture header directives (comment lines anywhere in the first 40 lines, `//` or `;`):
    HAZARD <n>[,<m>]: <text>    which hazards (docs/splitter.md) the fixture covers (documentation)
    MTPC-MAIN: support/x.c      program main in a separate file, compiled normally (not split);
                                without it the fixture contains main itself
    MTPC-PEER: support/y.c      another module, split the same way and linked into the program
    MTPC-SHARED                 -fPIC; the split modules form libfixture.so, main links to it
    MTPC-CFLAGS: -g             extra flags for the fixture (and peers) compile
    MTPC-LDFLAGS: -ldl          extra flags for the final link
    MTPC-MIN-PARTS: 1           least partition count expected for N >= 2 (default 2)
    MTPC-KEEP: a b              symbols (local or global) the merged object must still define
    MTPC-PLACE: 0=f,g 1=h       a forced plan for the fixture's module (test_forced_placement):
                                owned symbols by partition, handed to mtpc-split as --seed-plan

Which splitter runs: `tool('mtpc-split')` from the build. For validating the harness before
mtpc-split exists (or against another splitter) set MTPC_SPLIT_CMD to a command prefix that
takes the same arguments, e.g.
    MTPC_SPLIT_CMD="/usr/bin/python3 tests/hazards/llvm_split_adapter.py"
which wraps llvm-split-19 (known to get ifuncs, module asm, ... wrong). This variable is for that
purpose only; CI never sets it.
"""
import concurrent.futures
import json
import os
import pathlib
import re
import shlex

from conftest import ROOT, llvm_tool, run, tool

HAZARDS = ROOT / "tests" / "hazards"
FIXTURE_EXTS = (".c", ".cpp", ".ll")
JOBS = 2  # the machine has 2 shared cores


def split_cmd():
    env = os.environ.get("MTPC_SPLIT_CMD")
    if env:  # relative paths in it are taken relative to the repository root
        return [str(ROOT / w) if not os.path.isabs(w) and (ROOT / w).exists() else w
                for w in shlex.split(env)]
    return [tool("mtpc-split")]


def split(inp, outdir, n, *extra, check=True, cwd=None):
    """Run the splitter; returns the CompletedProcess."""
    cmd = split_cmd() + [str(inp), "-o", str(outdir), "--partitions", str(n), *extra]
    return run(cmd, check=check, cwd=cwd, timeout=300)


# ---------------------------------------------------------------- fixtures

class Fixture:
    def __init__(self, path):
        self.path = pathlib.Path(path)
        self.name = self.path.stem
        head = self.path.read_text().splitlines()[:40]
        self.hazards = []
        self.main = None
        self.peers = []
        self.shared = False
        self.cflags = []
        self.ldflags = []
        self.min_parts = 2
        self.keep = []
        self.place = {}
        for line in head:
            s = re.sub(r"^\s*(//+|;+)\s?", "", line).strip()
            if m := re.match(r"HAZARD\s*([\d, ]*\d)[^:]*:\s*(.*)", s):
                self.hazards.append((m.group(1).strip(), m.group(2)))
            elif m := re.match(r"MTPC-MAIN:\s*(\S+)", s):
                self.main = HAZARDS / m.group(1)
            elif m := re.match(r"MTPC-PEER:\s*(\S+)", s):
                self.peers.append(HAZARDS / m.group(1))
            elif s == "MTPC-SHARED":
                self.shared = True
            elif m := re.match(r"MTPC-CFLAGS:\s*(.*)", s):
                self.cflags += shlex.split(m.group(1))
            elif m := re.match(r"MTPC-LDFLAGS:\s*(.*)", s):
                self.ldflags += shlex.split(m.group(1))
            elif m := re.match(r"MTPC-KEEP:\s*(.*)", s):
                self.keep += m.group(1).split()
            elif m := re.match(r"MTPC-MIN-PARTS:\s*(\d+)", s):
                self.min_parts = int(m.group(1))
            elif m := re.match(r"MTPC-PLACE:\s*(.*)", s):
                for item in m.group(1).split():
                    p, names = item.split("=", 1)
                    self.place[int(p)] = names.split(",")

    @property
    def modules(self):
        """Source files that are split (the fixture first, then its peers)."""
        return [self.path] + self.peers

    @property
    def is_cxx(self):
        return any(p.suffix == ".cpp" for p in self.modules + [self.main] if p) \
            or "-lstdc++" in self.ldflags

    def __repr__(self):
        return f"Fixture({self.name})"


def all_fixtures():
    return [Fixture(p) for p in sorted(HAZARDS.iterdir())
            if p.suffix in FIXTURE_EXTS and p.is_file()]


def compiler(src):
    return llvm_tool("clang++" if pathlib.Path(src).suffix == ".cpp" else "clang")


def lang_flags(src):
    return ["-std=gnu++17"] if pathlib.Path(src).suffix == ".cpp" else ["-std=gnu11"]


def to_bitcode(src, out, pic=False, cflags=()):
    """The bitcode mtpc-split gets for this source."""
    src = pathlib.Path(src)
    if src.suffix == ".ll":
        run([llvm_tool("llvm-as"), src, "-o", out])
    else:
        run([compiler(src), *lang_flags(src), "-O2", "-flto=thin", "-c",
             *(["-fPIC"] if pic else []), *cflags, src, "-o", out])
    return out


def thin_link_with_idle_member(d):
    """In d: ThinLTO objects main.o, used.o and idle.o, and the shards of an index-only thin
    link that takes used.o and idle.o lazily (--start-lib): main uses used, so idle.o is
    not pulled in and lld writes it an empty index (idle.o.thinlto.bc)."""
    (d / "main.c").write_text("int used(int);\nstatic int k(int x) { return x + 1; }\n"
                              "int main(int c, char **v) { (void)v; return used(k(c)) - 7; }\n")
    (d / "used.c").write_text("int used(int x) { return x * 7; }\n")
    (d / "idle.c").write_text("int idle(int x) { return x * 3; }\n")
    clang = llvm_tool("clang")
    for s in ("main", "used", "idle"):
        run([clang, "-O2", "-flto=thin", "-c", f"{s}.c", "-o", f"{s}.o"], cwd=d)
    run([clang, "-flto=thin", "-fuse-ld=lld", "main.o", "-Wl,--start-lib", "used.o", "idle.o",
         "-Wl,--end-lib", "-Wl,--thinlto-index-only", "-o", "unused"], cwd=d)


def slot_cmd(bc, out, pic=False):
    """The compile of a (partition) bitcode file as the inner build's slots run it: a ThinLTO
    backend whose import is already done (the post-link pipeline)."""
    return [llvm_tool("clang"), "-O2", "-c", "-x", "ir", *(["-fPIC"] if pic else []), bc,
            f"-fthinlto-index={bc}", "-mllvm", "-thinlto-assume-merged", "-o", out]


def compile_ir(bc, out, pic=False):
    """Backend compile of a (partition) bitcode file, as the inner build's slots do it."""
    run(slot_cmd(bc, out, pic))
    return out


def compile_main(src, out, pic=False):
    run([compiler(src), *lang_flags(src), "-O2", "-c", *(["-fPIC"] if pic else []),
         src, "-o", out])
    return out


def pmap(fn, items):
    with concurrent.futures.ThreadPoolExecutor(JOBS) as ex:
        return list(ex.map(fn, items))


# ---------------------------------------------------------------- symbols

def nm(obj, *flags):
    """{name: type letter} from llvm-nm-19 with the given flags."""
    out = run([llvm_tool("llvm-nm"), "--no-sort", *flags, obj]).stdout
    syms = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 2 and len(parts[-2]) == 1:
            syms[parts[-1]] = parts[-2]
    return syms


def global_defined(obj):
    return nm(obj, "--defined-only", "--extern-only")


def undefined(obj):
    return set(nm(obj, "--undefined-only"))


def dump_section(obj, section, out):
    run([llvm_tool("llvm-objcopy"), f"--dump-section={section}={out}", obj, os.devnull])
    return pathlib.Path(out).read_bytes()


# ---------------------------------------------------------------- split results

def read_partitions(outdir, n_max):
    """Partition files named by plan.json; checks plan/glob/localize consistency."""
    outdir = pathlib.Path(outdir)
    plan = json.loads((outdir / "plan.json").read_text())
    assert plan.get("version") == 1, plan
    parts = plan["partitions"]
    n = len(parts)
    assert 1 <= n <= n_max, f"{n} partitions for --partitions {n_max}"
    assert [p["index"] for p in parts] == list(range(n)), parts
    assert [p["file"] for p in parts] == [f"p{i}.bc" for i in range(n)], parts
    on_disk = sorted(p.name for p in outdir.glob("p*.bc"))
    assert on_disk == sorted(f"p{i}.bc" for i in range(n)), \
        f"files {on_disk} do not match plan.json's {n} partitions"
    localize = (outdir / "localize.txt").read_text().split()
    if "localize" in plan:
        assert sorted(plan["localize"]) == sorted(localize), \
            "plan.json 'localize' differs from localize.txt"
    assert len(set(localize)) == len(localize), "duplicate names in localize.txt"
    return plan, [outdir / f"p{i}.bc" for i in range(n)], localize


def verify(bc):
    r = run([llvm_tool("opt"), "-passes=verify", "-disable-output", bc], check=False)
    assert r.returncode == 0, f"{bc} fails the LLVM verifier:\n{r.stderr[-4000:]}"


def split_and_merge(bc, outdir, n, pic=False, extra=()):
    """Split (extra: more mtpc-split options), verify, compile, merge, localize.
    Returns (merged+localized .o, plan, partition objects, localize names)."""
    outdir = pathlib.Path(outdir)
    split(bc, outdir, n, "--min-cost", "0", *extra)
    plan, parts, localize = read_partitions(outdir, n)
    pmap(verify, parts)
    objs = pmap(lambda p: compile_ir(p, p.with_suffix(".o"), pic), parts)
    merged = outdir / "merged.o"
    r = run([llvm_tool("ld.lld"), "-r", *objs, "-o", merged], check=False)
    assert r.returncode == 0, f"ld.lld -r of the partitions failed:\n{r.stderr[-4000:]}"
    final = outdir / "merged.localized.o"
    run([llvm_tool("llvm-objcopy"), f"--localize-symbols={outdir / 'localize.txt'}",
         f"--redefine-syms={outdir / 'rename.txt'}", merged, final])
    return final, plan, objs, localize


def check_plan(plan, input_bc):
    """plan.json bookkeeping: every strong external definition of the input is owned by exactly
    one partition and is never listed as a copy. Skipped for plans without 'owned' lists."""
    parts = plan["partitions"]
    if not all("owned" in p for p in parts):
        return []
    problems = []
    # opt -S, not llvm-dis: llvm-dis-19 crashes printing the ThinLTO summary of modules with
    # ifuncs (ModuleSummaryIndex::print).
    ir = run([llvm_tool("opt"), "-S", input_bc, "-o", "-"]).stdout
    ident = r'@("[^"]+"|[-\w.$]+)'
    ir_defs = set(re.findall(r"^define [^@\n]*" + ident + r"\(", ir, re.M))
    ir_defs |= set(re.findall(r"^" + ident + r" = (?![^\n]*\bexternal\b)[^\n]*?"
                              r"\b(?:global|constant)\b", ir, re.M))
    ir_defs = {n.strip('"') for n in ir_defs}
    # aliases, ifuncs and asm-defined symbols are left out: the plan may list them either way
    strong = {n for n, t in nm(input_bc, "--defined-only", "--extern-only").items()
              if t in "TDBR" and n in ir_defs}
    owners = {}
    for p in parts:
        for name in p["owned"]:
            owners.setdefault(name, []).append(p["index"])
        for name in p.get("copies", []):
            if name in strong and name in p["owned"]:
                problems.append(f"plan: {name} both owned and copied in p{p['index']}")
    for name in sorted(strong):
        if len(owners.get(name, [])) != 1:
            problems.append(f"plan: {name} owned by partitions {owners.get(name, [])}")
    return problems


def check_symbols(unsplit_obj, merged_obj, input_bc, localize):
    """The acceptance symbol checks. Returns a list of problems (empty when fine)."""
    problems = []
    want = global_defined(unsplit_obj)
    got = global_defined(merged_obj)
    # An inlined-away linkonce_odr owner may be kept as a weak definition (hazard 4, docs/splitter.md),
    # so a weak global that the input itself defines is tolerated; anything else must match.
    input_defs = nm(input_bc, "--defined-only")
    for name in sorted(set(got) - set(want)):
        if got[name] in "WV" and name in input_defs and input_defs[name] in "WV":
            continue
        problems.append(f"extra global definition {name} ({got[name]})")
    for name in sorted(set(want) - set(got)):
        problems.append(f"missing global definition {name} ({want[name]})")
    for name in sorted(set(want) & set(got)):
        if want[name] != got[name]:
            problems.append(f"{name}: type {got[name]} instead of {want[name]}")
    allowed_undef = undefined(unsplit_obj)
    for name in sorted(undefined(merged_obj) - allowed_undef):
        problems.append(f"new undefined symbol {name}")
    for name in localize:
        if name in want:
            problems.append(f"localize.txt names {name}, a global of the unsplit object")
    return problems


# ---------------------------------------------------------------- programs

def link_program(fx, module_objs, workdir, main_obj=None):
    """Link the fixture's program from per-module objects. Returns the command to run it."""
    workdir = pathlib.Path(workdir)
    linker = [llvm_tool("clang++" if fx.is_cxx else "clang"), "-fuse-ld=lld"]
    if fx.shared:
        lib = workdir / "libfixture.so"
        run([*linker, "-shared", "-fPIC", *module_objs, "-o", lib, *fx.ldflags])
        exe = workdir / "prog"
        run([*linker, main_obj, "-o", exe, "-L", workdir, "-lfixture",
             f"-Wl,-rpath,{workdir}", *fx.ldflags])
        return [exe], lib
    exe = workdir / "prog"
    run([*linker, *module_objs, *([main_obj] if main_obj else []), "-o", exe, *fx.ldflags])
    return [exe], None


def run_program(cmd):
    r = run(cmd, check=False, timeout=60)
    return r.returncode, r.stdout


def retained_sections(obj):
    """Names of sections carrying SHF_GNU_RETAIN (flag R in llvm-readelf -S)."""
    out = run([llvm_tool("llvm-readelf"), "-S", "-W", obj]).stdout
    names = set()
    for line in out.splitlines():
        m = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+([A-Za-z]*)\s+\d", line)
        if m and "R" in m.group(2):
            names.add(m.group(1))
    return names


def tls_relocations(obj):
    """Set of TLS relocation types (TPOFF, GOTTPOFF, TLSGD, ...) used by obj: promoting a
    thread-local internal with default visibility degrades local-exec to initial-exec or
    general-dynamic, which shows here."""
    out = run([llvm_tool("llvm-readelf"), "-r", "-W", obj]).stdout
    return set(re.findall(r"R_X86_64_(?:\w*TPOFF\w*|TLS\w+|DTPMOD\w*|GOTPC32_TLSDESC)", out))


def dynamic_exports(lib):
    return nm(lib, "-D", "--defined-only")


class Builder:
    """Session cache: bitcode, unsplit objects and the reference program run per fixture."""

    def __init__(self, root):
        self.root = pathlib.Path(root)
        self._ref = {}

    def fixture_dir(self, fx):
        d = self.root / fx.name
        d.mkdir(parents=True, exist_ok=True)
        return d

    def reference(self, fx):
        """dict: bitcode per module, unsplit object per module, main object, run result."""
        if fx.name in self._ref:
            return self._ref[fx.name]
        d = self.fixture_dir(fx) / "ref"
        d.mkdir(exist_ok=True)
        bcs, objs = [], []
        for i, src in enumerate(fx.modules):
            bc = to_bitcode(src, d / f"m{i}.bc", fx.shared, fx.cflags)
            bcs.append(bc)
            objs.append(compile_ir(bc, d / f"m{i}.o", fx.shared))
        main_obj = compile_main(fx.main, d / "main.o") if fx.main else None
        cmd, lib = link_program(fx, objs, d, main_obj)
        rc, out = run_program(cmd)
        assert rc == 0 and out, f"unsplit {fx.name} program failed or printed nothing ({rc})"
        ref = dict(bcs=bcs, objs=objs, main_obj=main_obj, rc=rc, out=out,
                   exports=dynamic_exports(lib) if lib else None)
        self._ref[fx.name] = ref
        return ref


def seed_plan(place, path):
    """Write a plan that mtpc-split --seed-plan reads as the previous placement: the owned
    symbols of each partition from a fixture's MTPC-PLACE (partitions it does not name own
    nothing). Returns the partition count it asks for."""
    n = max(place) + 2
    parts = [{"index": p, "file": f"p{p}.bc", "cost": 1, "owned": place.get(p, [])}
             for p in range(n)]
    pathlib.Path(path).write_text(json.dumps({"version": 1, "input_hash": "forced",
                                              "options_hash": "forced", "partitions": parts}))
    return n


def tree_bytes(outdir, names=None):
    """{file name: bytes} of the split outputs in outdir."""
    outdir = pathlib.Path(outdir)
    files = names or sorted([p.name for p in outdir.glob("p*.bc")] +
                            [n for n in ("plan.json", "localize.txt")
                             if (outdir / n).exists()])
    return {n: (outdir / n).read_bytes() for n in files}


def normalized_plan(data):
    """plan.json bytes with stats.split_seconds (a timing) zeroed; the rest must be stable."""
    plan = json.loads(data)
    if isinstance(plan.get("stats"), dict) and "split_seconds" in plan["stats"]:
        plan["stats"]["split_seconds"] = 0
    return plan


# ---------------------------------------------------------------- random modules

def stress_module(seed, out_bc, funcs=6, size=300):
    """A module linked from `funcs` llvm-stress functions (seeds seed*1000+k). Every other
    function is made internal and called from two external driver functions, so a splitter
    sees shared internal callees (promotion) as well as independent roots."""
    out_bc = pathlib.Path(out_bc)
    work = out_bc.with_suffix(".d")
    work.mkdir(parents=True, exist_ok=True)
    parts, internal, public = [], [], []
    for k in range(funcs):
        s = seed * 1000 + k
        ll = work / f"s{s}.ll"
        run([llvm_tool("llvm-stress"), f"-seed={s}", f"-size={size}", "-o", ll])
        parts.append(ll)
        (internal if k % 2 else public).append(f"autogen_SD{s}")
    sig = "(ptr, ptr, ptr, i32, i64, i8)"
    drv = [f"declare void @{name}{sig}" for name in internal]
    for d in range(max(2, len(internal))):
        public.append(f"stress_driver{d}")
        drv.append(f"define void @stress_driver{d}(ptr %p, i32 %x, i64 %y, i8 %z) {{")
        for name in ((internal[d % len(internal)], internal[(d + 1) % len(internal)])
                     if internal else ()):
            drv.append(f"  call void @{name}(ptr %p, ptr %p, ptr %p, i32 %x, i64 %y, i8 %z)")
        drv.append("  ret void\n}")
    (work / "driver.ll").write_text("\n".join(drv) + "\n")
    run([llvm_tool("llvm-link"), *parts, work / "driver.ll", "-o", work / "linked.bc"])
    run([llvm_tool("opt"), "-passes=internalize",
         f"-internalize-public-api-list={','.join(public)}", work / "linked.bc", "-o", out_bc])
    return out_bc


def stress_check(seed, workdir, ns=(3, 8), funcs=6, size=300):
    """Build the stress module for `seed` in workdir, split it for each N, verify, compile,
    merge and compare symbols. Raises AssertionError on the first problem."""
    workdir = pathlib.Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    bc = stress_module(seed, workdir / "m.bc", funcs=funcs, size=size)
    unsplit = compile_ir(bc, workdir / "unsplit.o")
    for n in ns:
        merged, _, _, localize = split_and_merge(bc, workdir / f"N{n}", n)
        problems = check_symbols(unsplit, merged, bc, localize)
        assert not problems, f"seed {seed} N={n}: " + "\n".join(problems)
    return bc
