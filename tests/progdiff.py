"""One program built twice with the same flags, with plain ThinLTO and through MTPC, and
compared: exit status, everything it prints, and the global symbols it exports.

MTPC links in one of two modes (mtpc_link_cmd): "link" wraps the link command in mtpc-link,
"distribute" hands lld's DTLTO jobs to mtpc-distribute (Clang/lld >= 21). Both split every
module (--threshold 0) into up to 4 partitions.

FLAG_SETS are the flags real projects build with (issue: a split program must mean what the
unsplit one means, under each of them); each applies to compile and link alike, and the
reference is built with the same flags. "pgo" first builds the program instrumented, runs it
and merges its profile (-fprofile-use then reads the program's own run); "pic-shared" puts
the split modules in a shared library that a small executable links.

Used by tests/integration/test_build_flags.py (hazard fixtures) and tests/split/test_csmith.py (random
programs)."""
import pathlib
import subprocess

from conftest import BUILD, LLVM_BIN

PARTITIONS = 4


class Skip(Exception):
    """The combination says nothing about MTPC (the plain build itself fails)."""


class Fail(Exception):
    """MTPC and plain ThinLTO disagree, or the MTPC link failed."""


# name: (compile and link flags, link-only flags, shared library, profile-guided)
FLAG_SETS = {
    "wpd": (["-fwhole-program-vtables"], [], False, False),
    "cfi": (["-fsanitize=cfi", "-fvisibility=hidden"], [], False, False),
    "hidden": (["-fvisibility=hidden"], [], False, False),
    "split-lto-unit": (["-fsplit-lto-unit"], [], False, False),
    "pgo": ([], [], False, True),
    "gz": (["-g", "-gz"], [], False, False),
    "pic-shared": (["-fPIC"], [], True, False),
    "gc-sections": (["-ffunction-sections", "-fdata-sections"], ["-Wl,--gc-sections"], False, False),
}


# Flags that are not a flag set of their own: -O2 only (tests/integration/test_build_compile.py).
NO_FLAGS = {"none": ([], [], False, False)}
# Code generation flags that only a native compile decides (the plain compile split,
# tests/integration/test_build_native.py): common symbols, PIE and non-PIC code.
NATIVE_FLAG_SETS = {
    "common": (["-fcommon"], [], False, False),
    "pie": (["-fPIE"], ["-pie"], False, False),
    "no-pic": (["-fno-pic"], ["-no-pie"], False, False),
}


def run(cmd, timeout=120, cwd=None, env=None):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd, env=env)


def must(cmd, what, **kw):
    r = run(cmd, **kw)
    if r.returncode != 0:
        raise Fail(f"{what} failed ({r.returncode}): {' '.join(map(str, cmd))}\n"
                   f"{r.stdout}{r.stderr}")
    return r


def mtpc_tools(build=None):
    build = pathlib.Path(build or BUILD)
    link = build / "ninja-gen" / "mtpc-link"
    split = build / "splitter" / "mtpc-split"
    for t in (link, split):
        if not t.exists():
            raise FileNotFoundError(f"{t} not built (run scripts/build.sh)")
    return link, split


def mtpc_link_cmd(mode, link_cmd, out, cache, partitions=PARTITIONS, build=None):
    """The command linking `out` through MTPC with forced splitting: mtpc-link around the plain
    link command (mode "link"), or the plain link command with mtpc-distribute as lld's DTLTO
    distributor (mode "distribute"). Both keep their inner build in <out>.mtpc."""
    link, split = mtpc_tools(build)
    opts = ["--threshold", "0", "--partitions", partitions, "--jobs", "2", "--cache", cache,
            "--split-tool", split, "--llvm-bin", LLVM_BIN]
    if mode == "link":
        return [link, *opts, "--", *link_cmd, out]
    assert mode == "distribute", mode
    dist = link.parent / "mtpc-distribute"
    xopts = [f"-Xthinlto-distributor={o}={v}" for o, v in zip(opts[::2], opts[1::2])]
    return [*link_cmd, out, f"-fthinlto-distributor={dist}", *xopts]


def exported(path, dynamic=False):
    """Sorted 'TYPE NAME' of the defined global symbols (-D: of the dynamic table)."""
    r = must([LLVM_BIN / "llvm-nm", *(["-D"] if dynamic else []), "--extern-only",
              "--defined-only", path], "llvm-nm")
    return sorted(" ".join(l.split()[1:]) for l in r.stdout.splitlines() if l.strip())


def object_symbols(path):
    """Sorted 'NAME TYPE BINDING VISIBILITY [COMMON]' of an object's defined global (and
    weak) symbols: what a link can take from it. Not the undefined ones (which library
    calls code makes, memcpy or a loop, is the optimizer's choice), nor the hidden COMDAT
    reference to the C++ personality routine (DW.ref.__gxx_personality_v0), which every
    object with a landing pad defines and the link keeps once: a partition that keeps a
    landing pad the whole module's optimizer removed (its callee's body elsewhere) has it."""
    r = must([LLVM_BIN / "llvm-readelf", "-sW", path], "llvm-readelf")
    out = set()
    for line in r.stdout.splitlines():
        f = line.split()
        if (len(f) < 8 or not f[0].endswith(":") or f[4] == "LOCAL" or f[6] == "UND"
                or f[7].startswith("DW.ref.")):
            continue
        out.add(f"{f[7]} {f[3]} {f[4]} {f[5]}" + (" COMMON" if f[6] == "COM" else ""))
    return sorted(out)


def execute(cmd, timeout=10):
    """(status, stdout): status 'ok', 'timeout' or 'exit N'."""
    try:
        r = run(cmd, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", ""
    return ("ok" if r.returncode == 0 else f"exit {r.returncode}"), r.stdout


def split_counts(out):
    """Partitions of each module MTPC split for `out` (its inner build <out>.mtpc)."""
    inner = pathlib.Path(f"{out}.mtpc")
    return sorted(int(p.read_text()) for p in inner.glob("mod/*/split.n"))


class Program:
    """A program: `split_srcs` (the modules MTPC splits; each (source, extra compile flags)),
    optional `main_srcs` linked with them (also ThinLTO), the driver (clang or clang++),
    extra flags of the program itself, the arguments it runs with, and whether the split
    modules are a shared library whatever the flag set."""

    def __init__(self, split_srcs, main_srcs=(), cxx=False, cflags=(), ldflags=(), args=(),
                 shared=False):
        self.shared = shared  # the split modules always form a shared library
        self.split_srcs = [(pathlib.Path(s), list(f)) for s, f in split_srcs]
        self.main_srcs = [(pathlib.Path(s), list(f)) for s, f in main_srcs]
        self.driver = str(LLVM_BIN / ("clang++" if cxx else "clang"))
        self.cflags = list(cflags)
        self.ldflags = list(ldflags)
        self.args = list(args)


def _why(stderr):
    """The first error line of a tool's output (or its last line)."""
    lines = [l for l in stderr.splitlines() if l.strip()]
    err = [l for l in lines if "error" in l]
    return (err or lines or ["(no output)"])[0][:300]


def _compile(prog, srcs, flags, work, suffix, launcher=()):
    objs = []
    for k, (src, extra) in enumerate(srcs):
        obj = work / f"{src.stem}.{k}{suffix}"
        r = run([*launcher, prog.driver, *flags, *prog.cflags, *extra, "-c", src, "-o", obj])
        if r.returncode != 0 and launcher:
            raise Fail(f"mtpc-compile of {src.name} failed ({r.returncode}):\n{r.stdout}{r.stderr}")
        if r.returncode != 0:
            raise Skip(f"{src.name} does not compile with {flags}: {_why(r.stderr)}")
        if launcher and ("warning" in r.stdout + r.stderr or "fallback" in r.stdout):
            raise Fail(f"mtpc-compile of {src.name} fell back or warned:\n{r.stdout}{r.stderr}")
        objs.append(obj)
    return objs


def mtpc_compile_cmd(work, partitions=PARTITIONS, build=None, split_args=()):
    """The prefix that compiles through mtpc-compile, splitting every compile it can
    (--cost-threshold 0) into up to `partitions`, with more mtpc-split options."""
    _, split = mtpc_tools(build)
    return [split.parent.parent / "ninja-gen" / "mtpc-compile", "--cost-threshold", "0",
            "--partitions", partitions, "--jobs", "2", "--cache", pathlib.Path(work) / "plans.sqlite",
            "--split-tool", split, "--quiet", *(f"--split-arg={a}" for a in split_args), "--"]


def compile_splits(objs):
    """Partitions of each compile mtpc-compile split for the objects (their inner builds
    <obj>.mtpc); 0 for one it compiled as given."""
    return [int(next(pathlib.Path(f"{o}.mtpc").glob("mod/*/split.n")).read_text())
            if pathlib.Path(f"{o}.mtpc").is_dir() else 0 for o in objs]


def _link(prog, link, split_objs, main_objs, d, shared, how, mtpc=None):
    """Link the program into directory d: an executable, or with shared the split modules
    as d/libprog.so and an executable against it. mtpc(cmd, target) links the target
    through MTPC instead. Returns (executable, the split modules' target)."""
    d.mkdir(exist_ok=True)
    target = d / ("libprog.so" if shared else "prog")
    cmd = [*link, *(["-shared"] if shared else []), *split_objs,
           *([] if shared else main_objs), "-o"]
    if mtpc:
        mtpc(cmd, target)
    else:
        r = run([*cmd, target])
        if r.returncode != 0:
            raise Skip(f"{how} link fails: {_why(r.stderr)}")
    if not shared:
        return target, target
    exe = d / "prog"  # the rest of the program, linked the same way against the library
    stub = main_objs or _compile(prog, [(_stub(prog, d), [])], ["-O2"], d, ".stub.o")
    r = run([*link, *stub, "-o", exe, "-L", d, "-lprog", f"-Wl,-rpath,{d}"])
    if r.returncode != 0 and not mtpc:
        raise Skip(f"the executable does not link against the {how} library: {_why(r.stderr)}")
    if r.returncode != 0:
        raise Fail(f"the executable does not link against MTPC's library:\n{r.stderr}")
    return exe, target


def _profile(prog, work, shared):
    """-fprofile-use flags from an instrumented run of the program itself (the same shape:
    with shared, a library and an executable)."""
    raw = work / "raw"
    flags = ["-O2", "-fprofile-generate=" + str(raw), *(["-fPIC"] if shared else [])]
    split_objs = _compile(prog, prog.split_srcs, flags, work, ".gen.o")
    main_objs = _compile(prog, prog.main_srcs, flags, work, ".gen.o")
    exe, _ = _link(prog, [prog.driver, *flags, *prog.ldflags], split_objs, main_objs,
                   work / "gen", shared, "instrumented")
    execute([exe, *prog.args])
    profraw = sorted(raw.glob("*.profraw"))
    if not profraw:
        raise Skip("the instrumented program wrote no profile")
    prof = work / "prog.profdata"
    must([LLVM_BIN / "llvm-profdata", "merge", "-o", prof, *profraw], "llvm-profdata merge")
    return [f"-fprofile-use={prof}", "-Wno-profile-instr-unprofiled",
            "-Wno-profile-instr-out-of-date", "-Wno-backend-plugin"]


def compare(prog, flagset, work, mode="link", build=None, split_compile=False, native=False,
            split_args=()):
    """Build prog plain and through MTPC with FLAG_SETS[flagset], run both, compare. Returns the
    partition counts of the split modules; raises Skip or Fail. mode "plain" links the MTPC
    build as plain ThinLTO does. split_compile: the MTPC build's objects are compiled through
    mtpc-compile (the counts are then those of its compiles, see compile_splits, followed by
    the link's). native: no LTO at all, the plain optimizing compile (mtpc-compile splits it
    into native partitions merged with ld -r) and a plain link, mode "plain"; the objects'
    defined global symbols must then be the plain compile's too (binding, visibility, type:
    object_symbols)."""
    work = pathlib.Path(work)
    work.mkdir(parents=True, exist_ok=True)
    flags, link_only, shared, pgo = {**NO_FLAGS, **NATIVE_FLAG_SETS, **FLAG_SETS}[flagset]
    shared = shared or prog.shared
    flags = ["-O2", *flags, *(["-fPIC"] if prog.shared else [])]
    if pgo:
        flags += _profile(prog, work, shared)
    lto = [] if native else ["-flto=thin"]
    split_compile = split_compile or native
    assert mode == "plain" or not native, mode
    split_objs = _compile(prog, prog.split_srcs, [*flags, *lto], work, ".o")
    main_objs = _compile(prog, prog.main_srcs, [*flags, *lto], work, ".o")
    mt_split_objs, mt_main_objs, compiled = split_objs, main_objs, []
    if split_compile:
        wrap = mtpc_compile_cmd(work, build=build, split_args=split_args)
        mt_split_objs = _compile(prog, prog.split_srcs, [*flags, *lto], work, ".mc.o", wrap)
        mt_main_objs = _compile(prog, prog.main_srcs, [*flags, *lto], work, ".mc.o", wrap)
        compiled = compile_splits(mt_split_objs + mt_main_objs)
    if native:
        for a, b in zip(split_objs + main_objs, mt_split_objs + mt_main_objs):
            if object_symbols(a) != object_symbols(b):
                x, y = set(object_symbols(a)), set(object_symbols(b))
                raise Fail(f"{flagset}: {b.name} defines other global symbols than the plain "
                           f"compile's object:\nonly plain: {sorted(x - y)[:10]}\n"
                           f"only MTPC: {sorted(y - x)[:10]}")
    link = [prog.driver, *flags, *lto, "-fuse-ld=lld", *link_only, *prog.ldflags]

    def mtpc(cmd, target):
        r = run(mtpc_link_cmd(mode, cmd, target, work / "plans.sqlite", build=build))
        if r.returncode != 0 and mode == "distribute" and not pathlib.Path(f"{target}.mtpc").exists():
            # lld 22 crashes writing the index shards of some inputs (BitcodeWriter::
            # writeIndex, an ifunc whose resolver is external) before it runs the distributor
            raise Skip(f"lld failed before running mtpc-distribute: {_why(r.stderr)}")
        if r.returncode != 0:
            raise Fail(f"MTPC link ({mode}) failed ({r.returncode}):\n{r.stdout}{r.stderr}")
        if "its thin link crashed the linker" in r.stderr:
            # lld 19 and 22 crash on the index-only thin link of some inputs that their
            # in-process ThinLTO links (docs/build-integration.md): MTPC then links them
            # as plain ThinLTO does, so the comparison says nothing about the split.
            raise Skip("lld's index-only thin link crashes here; MTPC linked without splitting")
        if "fallback" in r.stdout + r.stderr or "warning" in r.stderr:
            raise Fail(f"the MTPC link fell back or warned:\n{r.stdout}{r.stderr}")

    def plain_link(cmd, target):  # mode "plain": the objects of mtpc-compile, linked as given
        must([*cmd, target], "the plain link of mtpc-compile's objects")

    outs = {}
    for how in ("plain", "mtpc"):
        mt = how == "mtpc"
        exe, target = _link(prog, link, mt_split_objs if mt else split_objs,
                            mt_main_objs if mt else main_objs, work / how, shared, how,
                            None if not mt else mtpc if mode != "plain" else plain_link)
        # What the program exports: the dynamic symbols of the executable and of the
        # library. Also the global symbols of their static tables, except with section GC:
        # there lld drops from the static table of an executable the symbols that bitcode
        # defines and no regular object references, and MTPC's final link sees only
        # regular (native) objects. Nor with split_compile: the pre-link pipeline of a
        # partition inlines less across partitions, so the thin link exports (keeps global,
        # hidden from the dynamic table) functions for import that the unsplit compile had
        # inlined and the thin link internalized: the static table names them, as it would
        # after any other change of the pre-link inliner's decisions.
        # (native: the objects' own global symbols are compared above, and the static
        # table too except with section GC, where which sections survive is the code's.)
        static = ([] if "--gc-sections" in " ".join(link_only) or (split_compile and not native)
                  else [exported(exe)])
        if shared and static:
            static.append(exported(target))
        outs[how] = (execute([exe, *prog.args]),
                     [exported(exe, dynamic=True), *static],
                     exported(target, dynamic=True) if shared else None)
    (plain_run, plain_exe, plain_dyn), (mt_run, mt_exe, mt_dyn) = outs["plain"], outs["mtpc"]
    if mt_run != plain_run:
        diff = [f"  plain: {a}\n  mtpc:  {b}" for a, b in
                zip(plain_run[1].splitlines(), mt_run[1].splitlines()) if a != b][:8]
        raise Fail(f"{flagset}: the program behaves differently (plain {plain_run[0]}, "
                   f"MTPC {mt_run[0]}):\n" + "\n".join(diff) + f"\nrepro: {work}")
    if mt_exe != plain_exe or mt_dyn != plain_dyn:
        def delta(a, b):
            return f"only plain: {sorted(set(a) - set(b))}\nonly MTPC: {sorted(set(b) - set(a))}\n"
        raise Fail(f"{flagset}: exported symbols differ\n"
                   + "".join(delta(a, b) for a, b in zip(plain_exe, mt_exe) if a != b)
                   + (delta(plain_dyn or [], mt_dyn or []) if mt_dyn != plain_dyn else ""))
    target = work / "mtpc" / ("libprog.so" if shared else "prog")
    return compiled + split_counts(target)


def _stub(prog, work):
    """An executable needs an object of its own; main itself comes from the library."""
    stub = work / ("stub.cpp" if prog.driver.endswith("++") else "stub.c")
    stub.write_text("void mtpc_progdiff_stub(void) {}\n")
    return stub
