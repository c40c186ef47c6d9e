"""Differential testing with csmith (issue #3 acceptance): random UB-free C programs built
through the whole MTPC pipeline (clang -flto=thin -c, then mtpc-link with forced splitting:
thin link, mtpc-split, one compile per partition, ld.lld -r merge, localize, final link) and
with plain ThinLTO (clang -flto=thin -fuse-ld=lld, same flags; see VARIANTS) must print the
same checksums (csmith's `prog 1` mode prints every global's value, not only the final hash)
and export the same global symbols. A second MTPC link with the same plan cache (a hit) must
give the same plans and the same program.

A seed whose program times out or crashes at -O0 is skipped (csmith programs may loop for a
long time). The suite runs a few fixed seeds; scripts/csmith-diff.sh runs a larger sample with
the same code (check_seed below).

Environment: MTPC_BUILD_DIR (the MTPC build with ninja-gen/mtpc-link and splitter/mtpc-split).
check_seed(..., mode="distribute") links through lld's DTLTO with mtpc-distribute instead of
mtpc-link (tests/distribute/test_distribute_equiv.py; Clang >= 21).

test_csmith_under_flags: one program under each flag set real projects build with
(progdiff.FLAG_SETS: WPD, CFI, hidden visibility, split LTO unit, PGO from the program's own
run, -gz, -fPIC -shared, section GC), through mtpc-link and, with Clang >= 21,
mtpc-distribute.
"""
import os
import pathlib
import shutil
import subprocess

import pytest

import progdiff as pd
from conftest import LLVM_BIN, LLVM_VERSION, thinned
from progdiff import mtpc_link_cmd, mtpc_tools

CLANG = str(LLVM_BIN / "clang")
CSMITH = shutil.which("csmith") or "/usr/bin/csmith"
CSMITH_INCLUDE = "/usr/include/csmith"
RUN_TIMEOUT = 10          # seconds a program may run
PARTITIONS = pd.PARTITIONS
# Small enough to build in about a second each, big enough that the splitter has several
# call-graph roots to spread over the partitions.
CSMITH_OPTS = ["--max-funcs", "12"]
SEEDS = [1, 2, 3, 4, 7, 12]
# Build variants (name, compile flags, link-only flags), cycled over the seeds so that the
# optimization level, the relocation model / link mode and debug info all vary.
VARIANTS = [
    ("O2", ["-O2"], []),
    ("O3", ["-O3"], []),
    ("O1-nopie", ["-O1", "-fno-pic"], ["-no-pie"]),
    ("Os", ["-Os"], []),
    ("O2-static", ["-O2", "-fno-pic"], ["-static"]),
    ("O2-g", ["-O2", "-g"], []),
]


def variant_of(seed):
    return VARIANTS[seed % len(VARIANTS)]


def seed_variant(seed):
    """The variant test_csmith_same_output_as_thinlto builds SEEDS[i] with: VARIANTS[i]."""
    return VARIANTS[SEEDS.index(seed) % len(VARIANTS)]


class Skip(Exception):
    """The seed says nothing about MTPC (program loops or crashes at -O0)."""


class Fail(Exception):
    """MTPC and plain ThinLTO disagree, or the MTPC pipeline failed."""


def _run(cmd, timeout=None, cwd=None, env=None):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd, env=env)


def _must(cmd, what, **kw):
    r = _run(cmd, **kw)
    if r.returncode != 0:
        raise Fail(f"{what} failed ({r.returncode}): {' '.join(map(str, cmd))}\n"
                   f"{r.stdout}{r.stderr}")
    return r


def _execute(exe):
    """(status, stdout) of running exe with csmith's print-every-global argument;
    status is 'ok', 'timeout' or 'crash <rc>'."""
    try:
        r = _run([exe, "1"], timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        return "timeout", ""
    return ("ok" if r.returncode == 0 else f"crash {r.returncode}"), r.stdout


def check_seed(seed, work, csmith_opts=CSMITH_OPTS, partitions=PARTITIONS, build=None,
               variant=None, extra_seeds=(), mode="link"):
    """Generate csmith program `seed` in `work` and compare MTPC with plain ThinLTO, both
    built with `variant` (default variant_of(seed)). With extra_seeds, one program per seed
    is generated, each its own module with main renamed, plus a driver calling them in turn:
    several split modules holding same-named internal symbols (func_1, g_2, ...) in one link.
    mode: how MTPC links, see mtpc_link_cmd. Returns a dict of facts (fewest partitions of a
    csmith module, checksum line, variant); raises Skip or Fail."""
    vname, vcompile, vlink = variant or variant_of(seed)
    opt = vcompile[0]
    work = pathlib.Path(work)
    work.mkdir(parents=True, exist_ok=True)
    seeds = (seed, *extra_seeds)
    cflags = ["-w", "-I", CSMITH_INCLUDE]
    sources = []  # (source, extra flags)
    for k, s in enumerate(seeds):
        src = work / f"csmith{s}.c"
        # csmith writes platform.info into its working directory: keep it in work.
        _must([CSMITH, "--seed", s, *csmith_opts, "-o", src], "csmith", cwd=work)
        sources.append((src, [f"-Dmain=csmith_main_{k}"] if len(seeds) > 1 else []))
    if len(seeds) > 1:
        driver = work / "driver.c"
        decls = "".join(f"int csmith_main_{k}(int, char **);\n" for k in range(len(seeds)))
        calls = "".join(f"  csmith_main_{k}(argc, argv);\n" for k in range(len(seeds)))
        driver.write_text(f"{decls}int main(int argc, char **argv) {{\n{calls}  return 0;\n}}\n")
        sources.append((driver, []))

    def compile_all(flags, suffix):
        objs = []
        for src, extra in sources:
            obj = work / f"{src.stem}{suffix}"
            _must([CLANG, *flags, *cflags, *extra, "-c", src, "-o", obj], f"clang {flags}")
            objs.append(obj)
        return objs

    # Reference behaviour at -O0: decides whether the seed is usable at all.
    o0 = work / "prog.O0"
    _must([CLANG, "-O0", *compile_all(["-O0"], ".O0.o"), "-o", o0], "clang -O0 link")
    status, _ = _execute(o0)
    if status != "ok":
        raise Skip(f"seed {seed}: the -O0 program does not finish cleanly ({status})")

    objs = compile_all([*vcompile, "-flto=thin"], ".o")
    link_cmd = [CLANG, "-flto=thin", "-fuse-ld=lld", opt, *vlink, *objs, "-o"]
    thin = work / "prog.thin"
    _must([*link_cmd, thin], "plain ThinLTO link")
    mt = work / "prog.mtpc"
    r = _must(mtpc_link_cmd(mode, link_cmd, mt, work / "plans.sqlite", partitions, build),
              f"MTPC link ({mode})")
    if "unsplit (fallback)" in r.stdout + r.stderr or "warning" in r.stderr:
        raise Fail(f"seed {seed}: the split fell back or warned:\n{r.stdout}{r.stderr}")

    # The split really happened: every csmith module has 1..partitions partitions, their
    # bitcode and non-empty objects.
    inner = work / "prog.mtpc.mtpc"
    counts = []
    for s in seeds:
        (moddir,) = (inner / "mod").glob(f"csmith{s}.o-*")
        n = int((moddir / "split.n").read_text())
        parts = sorted((moddir / "parts").glob("p*.bc"))
        if not 1 <= n <= partitions or len(parts) != n:
            raise Fail(f"seed {s}: split.n={n}, partitions on disk {[p.name for p in parts]}")
        for i in range(n):
            if not (moddir / f"p{i}.o").stat().st_size:
                raise Fail(f"seed {s}: empty partition object p{i}.o")
        counts.append(n)
    n = min(counts)

    st_thin, out_thin = _execute(thin)
    st_mt, out_mt = _execute(mt)
    if st_thin != "ok":
        # ThinLTO itself misbehaves where -O0 did not: a clang problem, not MTPC's,
        # but MTPC must then still behave like ThinLTO.
        if st_mt != st_thin:
            raise Fail(f"seed {seed}: ThinLTO program {st_thin}, MTPC program {st_mt}")
        raise Skip(f"seed {seed}: the plain ThinLTO program does not finish ({st_thin})")
    if st_mt != "ok":
        raise Fail(f"seed {seed}: MTPC program {st_mt} (plain ThinLTO: ok)\n"
                   f"repro: {work}")
    if out_mt != out_thin:
        diff = [f"  thin: {a}\n  mtpc: {b}" for a, b in
                zip(out_thin.splitlines(), out_mt.splitlines()) if a != b][:5]
        raise Fail(f"seed {seed}: output differs from plain ThinLTO:\n" + "\n".join(diff))
    if pd.exported(mt) != pd.exported(thin):
        raise Fail(f"seed {seed}: exported symbols differ:\n"
                   f"thin: {pd.exported(thin)}\nmtpc: {pd.exported(mt)}")
    # Link again with the same plan cache (now a hit): the same plans and the same program.
    mt2 = work / "prog.mtpc2"
    _must(mtpc_link_cmd(mode, link_cmd, mt2, work / "plans.sqlite", partitions, build),
          f"MTPC link ({mode}, cache hit)")
    for s in seeds:
        plans = [next((d / "mod").glob(f"csmith{s}.o-*")) / "parts" / "plan.json"
                 for d in (inner, work / "prog.mtpc2.mtpc")]
        if plans[0].read_bytes() != plans[1].read_bytes():
            raise Fail(f"seed {s}: plan.json differs between a cache miss and a hit: {plans}")
    if _execute(mt2) != (st_mt, out_mt):
        raise Fail(f"seed {seed}: the program linked with cached plans behaves differently")
    checksum = next((l for l in out_mt.splitlines() if l.startswith("checksum")), "")
    return {"partitions": n, "checksum": checksum, "variant": vname}


@pytest.fixture(scope="module", autouse=True)
def _require_tools():
    if not os.path.exists(CSMITH) or not os.path.isdir(CSMITH_INCLUDE):
        pytest.skip("csmith / libcsmith-dev not installed (scripts/install-deps.sh)")
    try:
        mtpc_tools()
    except FileNotFoundError as e:
        pytest.fail(str(e))


SAME_OUTPUT_SEEDS = thinned(SEEDS)


@pytest.mark.parametrize("seed", SAME_OUTPUT_SEEDS, ids=[
    f"seed{s}-{seed_variant(s)[0]}" for s in SAME_OUTPUT_SEEDS])
def test_csmith_same_output_as_thinlto(seed, tmp_path):
    try:
        facts = check_seed(seed, tmp_path, variant=seed_variant(seed))
    except Skip as e:
        pytest.skip(str(e))
    except Fail as e:
        pytest.fail(str(e), pytrace=False)
    # These seeds are chosen so that the module really is split.
    assert facts["partitions"] >= 2, facts
    assert facts["checksum"].startswith("checksum = "), facts


def test_csmith_several_modules_in_one_link(tmp_path):
    """Three csmith programs as three split modules of one link (plus a driver): the same
    internal names (func_1, g_2, ...) are promoted in each module and must not collide."""
    try:
        facts = check_seed(8, tmp_path, variant=VARIANTS[0], extra_seeds=(9, 10))
    except Skip as e:
        pytest.skip(str(e))
    except Fail as e:
        pytest.fail(str(e), pytrace=False)
    assert facts["partitions"] >= 2, facts
    assert len(facts["checksum"]) > 0


def test_csmith_skips_looping_program(tmp_path):
    """Seed 11 (with CSMITH_OPTS) loops for longer than RUN_TIMEOUT at -O0: skipped, not failed."""
    with pytest.raises(Skip):
        check_seed(11, tmp_path)


FLAG_SEED = 2  # splits in 2+ partitions under every flag set
FLAG_MODES = ["link"] + (["distribute"] if int(LLVM_VERSION) >= 21 else [])
FLAG_CASES = thinned([(fs, m) for m in FLAG_MODES for fs in pd.FLAG_SETS], len(pd.FLAG_SETS))


@pytest.mark.parametrize("flagset,mode", FLAG_CASES, ids=[f"{fs}-{m}" for fs, m in FLAG_CASES])
def test_csmith_under_flags(flagset, mode, tmp_path):
    src = tmp_path / f"csmith{FLAG_SEED}.c"
    _must([CSMITH, "--seed", FLAG_SEED, *CSMITH_OPTS, "-o", src], "csmith", cwd=tmp_path)
    prog = pd.Program([(src, ["-w", "-I", CSMITH_INCLUDE])], args=["1"])
    try:
        counts = pd.compare(prog, flagset, tmp_path / "w", mode)
    except pd.Skip as e:
        pytest.skip(str(e))
    except pd.Fail as e:
        pytest.fail(str(e), pytrace=False)
    assert counts and max(counts) >= 2, counts


COMPILE_CASES = thinned([(s, m) for s in SEEDS for m in ("plain", "link")], 2)


@pytest.mark.parametrize("seed,mode", COMPILE_CASES, ids=[f"{s}-{m}" for s, m in COMPILE_CASES])
def test_csmith_split_compile(seed, mode, tmp_path):
    """The compile step split too (mtpc-compile, every compile split in up to 4 partitions):
    the program linked plainly, and through mtpc-link, prints what plain ThinLTO's prints and
    exports the same symbols."""
    src = tmp_path / f"csmith{seed}.c"
    _must([CSMITH, "--seed", seed, *CSMITH_OPTS, "-o", src], "csmith", cwd=tmp_path)
    prog = pd.Program([(src, ["-w", "-I", CSMITH_INCLUDE])], args=["1"])
    try:
        counts = pd.compare(prog, "none", tmp_path / "w", mode, split_compile=True)
    except pd.Skip as e:
        pytest.skip(str(e))
    except pd.Fail as e:
        pytest.fail(str(e), pytrace=False)
    assert counts[0] >= 2, f"mtpc-compile did not split the program: {counts}"


# Every seed at -O2, and one under the flag sets a plain compile can have (not those of LTO).
NATIVE_CASES = (thinned([(s, "none") for s in SEEDS]) +
                thinned([(FLAG_SEED, fs) for fs in ("hidden", "gz", "pic-shared", "gc-sections",
                                                    "pgo")]))


@pytest.mark.parametrize("seed,flagset", NATIVE_CASES, ids=[f"{s}-{f}" for s, f in NATIVE_CASES])
def test_csmith_native_compile(seed, flagset, tmp_path):
    """A plain -O2 compile split (mtpc-compile, no LTO: partitions optimized and compiled to
    native code, merged with ld -r): the program prints what the plain compile's prints,
    exports the same symbols, and its object defines the same global symbols. Under PGO
    (-fprofile-use) the compile runs as given (a profile is applied in LLVM's pipeline)."""
    src = tmp_path / f"csmith{seed}.c"
    _must([CSMITH, "--seed", seed, *CSMITH_OPTS, "-o", src], "csmith", cwd=tmp_path)
    prog = pd.Program([(src, ["-w", "-I", CSMITH_INCLUDE])], args=["1"])
    try:
        counts = pd.compare(prog, flagset, tmp_path / "w", "plain", native=True)
    except pd.Skip as e:
        pytest.skip(str(e))
    except pd.Fail as e:
        pytest.fail(str(e), pytrace=False)
    if flagset == "pgo":
        assert counts[0] == 0, f"split under -fprofile-use: {counts}"
    else:
        assert counts[0] >= 2, f"mtpc-compile did not split the program: {counts}"
