"""Differential tests of mtpc-distribute (lld's DTLTO distributor, ninja-gen/distribute/mtpc_distribute.c): a
program linked with `clang -flto=thin -fuse-ld=lld -fthinlto-distributor=mtpc-distribute`, its
modules split, must behave exactly like the same program linked with clang's in-process ThinLTO
and export the same symbols. The in-process link is always the reference (never fixed output).

(a) the hazard fixtures (tests/hazards, see splitlib.py), every module split into at most
    N = 2 and 4 partitions (--threshold=0: forced): program output, exit status, global symbols
    of the program, dynamic exports of the shared fixtures' library, and the summary line
    naming every fixture module as split. The .ll fixtures are included (`clang -flto=thin -c`
    on the IR). aliases_ifuncs xfails while lld itself crashes writing its index shards
    (lld_crash_without_distributor: an LLVM bug, whatever the distributor);
(b) the sample CMake projects tests/projects/c and cxx configured without MTPC (plain
    ThinLTO), once more with only linker flags naming mtpc-distribute and MTPC_SPLIT_THRESHOLD=0
    MTPC_MAX_PARTITIONS=4 in the environment: same program output, same exports of app and
    of the shared library;
(c) csmith programs through test_csmith.check_seed(mode="distribute");
(d) SQLite (bench/work/sqlite-amalgamation, from bench/get-sqlite.sh; skipped when absent): the
    shell and speedtest1 at -O2, mtpc-distribute with its default cost threshold (sqlite3.c is
    above it) and MTPC_MAX_PARTITIONS=2: speedtest1's report without timings, a scripted
    shell session, exported globals. About 100 s on 2 cores: marked slow.

DTLTO needs lld >= 21: the module skips under LLVM 19 and runs in the LLVM 22 pass of
scripts/test.sh. Every link uses a plan cache of this module's own (MTPC_CACHE)."""
import contextlib
import os
import pathlib
import re
import time

import pytest

from conftest import BUILD, LLVM_VERSION, ROOT, llvm_tool, run, tool, versioned_driver

if int(LLVM_VERSION) < 21:
    pytest.skip("DTLTO needs lld >= 21; runs in the LLVM 22 pass of scripts/test.sh",
                allow_module_level=True)

import splitlib as sl  # noqa: E402
import test_build_integration as bi  # noqa: E402
import test_csmith as cs  # noqa: E402

# "mtpc-distribute: app: 3 modules, 2 split (big.c.o: 4 partitions, libutil.a(util.c.o at
# 116): 3 partitions), 0.54 s; ...": module names may hold parentheses, the time ends the list.
SUMMARY = re.compile(r"^mtpc-distribute: (?P<out>\S+): (?P<mods>\d+) modules?, "
                     r"(?P<split>\d+) split(?: \((?P<list>.*?)\))?"
                     r"(?=(?:, \d+ [a-z ]+?)*, \d+\.\d+ s\b)", re.M)
TIMES = {}


@pytest.fixture(scope="module", autouse=True)
def plan_cache(tmp_path_factory):
    """A plan cache of this module's own for every link (restored afterwards)."""
    old = os.environ.get("MTPC_CACHE")
    path = tmp_path_factory.mktemp("distribute-cache") / "plans.sqlite"
    os.environ["MTPC_CACHE"] = str(path)
    yield path
    if old is None:
        os.environ.pop("MTPC_CACHE", None)
    else:
        os.environ["MTPC_CACHE"] = old


def distributor():
    return tool("mtpc-distribute")


def dtlto_flags(*opts):
    """Driver flags linking through mtpc-distribute with the given distributor options."""
    return [f"-fthinlto-distributor={distributor()}",
            *(f"-Xthinlto-distributor={o}" for o in opts)]


def summaries(text):
    """{output name: (modules, split, {module: partitions})} from the summary lines in text."""
    found = {}
    for m in SUMMARY.finditer(text):
        parts = {}
        for item in filter(None, (m.group("list") or "").split(", ")):
            name, _, what = item.rpartition(": ")
            k = re.match(r"(\d+) partitions?$", what)
            parts[name] = int(k.group(1)) if k else what
        found[m.group("out")] = (int(m.group("mods")), int(m.group("split")), parts)
    return found


def exported(path):
    """Defined global symbols (name and type) of a program or library."""
    return bi.exported(path)


def dynamic_exports(path):
    return sorted(f"{t} {n}" for n, t in sl.dynamic_exports(path).items())


@contextlib.contextmanager
def timed(part):
    """Adds the wall time of the block to TIMES[part] (printed at the end of the module, -s)."""
    t0 = time.time()
    try:
        yield
    finally:
        TIMES[part] = TIMES.get(part, 0.0) + time.time() - t0


@pytest.fixture(scope="module", autouse=True)
def report_times():
    yield
    if TIMES:
        print("\ntest_distribute_equiv wall times: " +
              ", ".join(f"{k} {v:.0f} s" for k, v in TIMES.items()))


# ---------------------------------------------------------------- (a) hazard fixtures

FIXTURES = sl.all_fixtures()
NS = (2, 4)


class HazardBuild:
    """Per fixture: its ThinLTO objects, the native main, the in-process ThinLTO reference."""

    def __init__(self, root):
        self.root = pathlib.Path(root)
        self.refs = {}

    def linker(self, fx):
        return [llvm_tool("clang++" if fx.is_cxx else "clang"), "-fuse-ld=lld", "-flto=thin",
                "-O2"]

    def compile(self, fx, d):
        objs = []
        for i, src in enumerate(fx.modules):
            obj = d / f"{fx.name}_m{i}.o"
            if src.suffix == ".ll":
                # Hand-written IR: made a ThinLTO object without optimizing it (as splitlib
                # gives it to mtpc-split through llvm-as), the summary added by -flto=thin.
                run([llvm_tool("clang"), "-flto=thin", "-c", src, "-o", obj])
            else:
                run([sl.compiler(src), *sl.lang_flags(src), "-O2", "-flto=thin", "-c",
                     *(["-fPIC"] if fx.shared else []), *fx.cflags, src, "-o", obj])
            objs.append(obj)
        main = sl.compile_main(fx.main, d / "main.o") if fx.main else None
        return objs, main

    def link(self, fx, d, objs, main, extra=()):
        """Links the program in d (extra: more link flags, e.g. the distributor).
        Returns (program, shared library or None, the links' stderr)."""
        d.mkdir(parents=True, exist_ok=True)
        exe = d / "prog"
        if fx.shared:
            lib = d / "libfixture.so"
            r = run([*self.linker(fx), *extra, "-shared", "-fPIC", *objs, "-o", lib,
                     *fx.ldflags])
            r2 = run([*self.linker(fx), *extra, main, "-o", exe, "-L", d, "-lfixture",
                      f"-Wl,-rpath,{d}", *fx.ldflags])
            return exe, lib, r.stderr + r2.stderr
        r = run([*self.linker(fx), *extra, *objs, *([main] if main else []), "-o", exe,
                 *fx.ldflags])
        return exe, None, r.stderr

    def facts(self, exe, lib):
        rc, out = sl.run_program([exe])
        return dict(rc=rc, out=out, exe_globals=exported(exe),
                    exe_dynamic=dynamic_exports(exe),
                    lib_dynamic=dynamic_exports(lib) if lib else None,
                    lib_globals=exported(lib) if lib else None)

    def reference(self, fx):
        if fx.name not in self.refs:
            d = self.root / fx.name
            d.mkdir(parents=True, exist_ok=True)
            objs, main = self.compile(fx, d)
            exe, lib, _ = self.link(fx, d / "inprocess", objs, main)
            ref = self.facts(exe, lib)
            assert ref["rc"] == 0 and ref["out"], \
                f"in-process ThinLTO {fx.name} failed or printed nothing: {ref}"
            self.refs[fx.name] = dict(objs=objs, main=main, **ref)
        return self.refs[fx.name]


def lld_crash_without_distributor(hb, fx, d, ref):
    """After a failed DTLTO link: xfail when lld itself crashes writing the index shards, before
    any distributor runs (the same link with /bin/true as distributor crashes the same way).
    LLVM 19 and 22 do this (BitcodeWriter::writeIndex) for aliases_ifuncs.c: an ifunc whose
    address is taken; lld --thinlto-index-only, mtpc-link's thin link, crashes as well."""
    try:
        hb.link(fx, d, ref["objs"], ref["main"], ["-fthinlto-distributor=/bin/true"])
    except AssertionError as e:
        if "writeIndex" in str(e):
            pytest.xfail("lld crashes in BitcodeWriter::writeIndex (an LLVM bug: the index "
                         "shards of this module cannot be written, whatever the distributor); "
                         "in-process ThinLTO links it")


@pytest.fixture(scope="module")
def hazard_build(tmp_path_factory):
    return HazardBuild(tmp_path_factory.mktemp("dist-hazards"))


@pytest.mark.parametrize("fx,n", [(fx, n) for fx in FIXTURES for n in NS],
                         ids=[f"{fx.name}-N{n}" for fx in FIXTURES for n in NS])
def test_hazard_fixture_same_as_inprocess(hazard_build, fx, n):
    """The fixture's modules (ThinLTO objects) linked through mtpc-distribute, every module
    split into at most n partitions, against the same objects linked in-process."""
    with timed("hazards"):
        ref = hazard_build.reference(fx)
        d = hazard_build.root / fx.name / f"dtlto-N{n}"
        try:
            exe, lib, err = hazard_build.link(fx, d, ref["objs"], ref["main"],
                                              dtlto_flags("--threshold=0", f"--partitions={n}"))
        except AssertionError:
            lld_crash_without_distributor(hazard_build, fx, d.with_name(f"{d.name}-noop"), ref)
            raise
        got = hazard_build.facts(exe, lib)

    # The summary line of the link of the fixture's modules: every one of them split into
    # 1..n partitions. mtpc-split is given no --min-cost here, so as in the hazard matrix
    # (test_split_hazards.py, --min-cost 0) each fixture has enough roots for min_parts.
    out_name = (lib or exe).name
    sums = summaries(err)
    assert out_name in sums, f"no summary line for {out_name}:\n{err}"
    mods, nsplit, parts = sums[out_name]
    assert "warning" not in err and "fallback" not in err, err
    assert mods == len(fx.modules), err  # main (if separate) is a native object
    assert nsplit == mods and nsplit >= 1, err
    for obj in ref["objs"]:
        k = parts.get(obj.name)
        assert isinstance(k, int) and min(fx.min_parts, n) <= k <= n, \
            f"{obj.name}: {k!r} partitions for --partitions={n}:\n{err}"

    assert got["out"] == ref["out"], \
        f"program output differs from in-process ThinLTO\n--- in-process\n{ref['out']}" \
        f"--- mtpc-distribute N={n}\n{got['out']}"
    assert got["rc"] == ref["rc"]
    for key in ("exe_globals", "exe_dynamic", "lib_dynamic", "lib_globals"):
        assert got[key] == ref[key], f"{key} differ from in-process ThinLTO"


# ---------------------------------------------------------------- (b) sample CMake projects

@pytest.mark.parametrize("name", sorted(bi.SAMPLES))
def test_sample_project_same_as_inprocess(name, tmp_path):
    """The sample configured without MTPC (plain ThinLTO, SAMPLE_MTPC=OFF), and again with only
    the linker flags naming mtpc-distribute; forced splitting through the environment."""
    with timed("samples"):
        src = bi.PROJECTS / name
        ref, dt = tmp_path / "inprocess", tmp_path / "dtlto"
        bi.configure(src, ref, mtpc=False)
        bi.build(ref)
        flags = " ".join(dtlto_flags())
        bi.configure(src, dt, mtpc=False, extra=[f"-DCMAKE_EXE_LINKER_FLAGS={flags}",
                                                 f"-DCMAKE_SHARED_LINKER_FLAGS={flags}"])
        r = bi.build(dt, env=dict(os.environ, MTPC_SPLIT_THRESHOLD="0", MTPC_MAX_PARTITIONS="4"))
        out = r.stdout + r.stderr
        got = [run([b / "app"]) for b in (ref, dt)]

    sums = summaries(out)
    for f in bi.SAMPLES[name]:  # app and the shared library: each linked through DTLTO
        assert f in sums, f"no mtpc-distribute summary for {f}:\n{out}"
        mods, nsplit, parts = sums[f]
        assert nsplit == mods >= 1, f"{f}: not every module split with threshold 0:\n{out}"
        assert all(isinstance(k, int) and 1 <= k <= 4 for k in parts.values()), out
    assert max(k for s in sums.values() for k in s[2].values()) >= 2, out
    assert "warning" not in out and "fallback" not in out and "mtpc-link" not in out, out
    assert (dt / "app.mtpc").is_dir() and not (ref / "app.mtpc").exists()

    assert got[1].stdout == got[0].stdout and got[0].stdout
    for f in bi.SAMPLES[name]:
        assert exported(dt / f) == exported(ref / f), f"{f}: exported symbols differ"
        assert dynamic_exports(dt / f) == dynamic_exports(ref / f), \
            f"{f}: dynamic exports differ"


# ---------------------------------------------------------------- (c) csmith

# (seed, variant) pairs of test_csmith.py, known to split: -O2 PIE, -O1 -fno-pic -no-pie, static
CSMITH_CASES = [(1, "O2"), (3, "O1-nopie"), (7, "O2-static")]


def need_csmith():
    if not os.path.exists(cs.CSMITH) or not os.path.isdir(cs.CSMITH_INCLUDE):
        pytest.skip("csmith / libcsmith-dev not installed (scripts/install-deps.sh)")


@pytest.mark.parametrize("seed,vname", CSMITH_CASES, ids=[f"seed{s}-{v}" for s, v in CSMITH_CASES])
def test_csmith_same_as_inprocess(seed, vname, tmp_path):
    """check_seed in DTLTO mode: forced splitting into at most 4 partitions; same checksums and
    exported globals as in-process ThinLTO, and a second link (plan cache hit) the same."""
    need_csmith()
    variant = next(v for v in cs.VARIANTS if v[0] == vname)
    with timed("csmith"):
        try:
            facts = cs.check_seed(seed, tmp_path, variant=variant, build=BUILD,
                                  mode="distribute")
        except cs.Skip as e:
            pytest.skip(str(e))
        except cs.Fail as e:
            pytest.fail(str(e), pytrace=False)
    assert facts["partitions"] >= 2, facts
    assert facts["checksum"].startswith("checksum = "), facts


def test_csmith_several_modules_same_as_inprocess(tmp_path):
    """Three csmith programs as three split modules of one DTLTO link (same internal names)."""
    need_csmith()
    with timed("csmith"):
        try:
            facts = cs.check_seed(8, tmp_path, variant=cs.VARIANTS[0], extra_seeds=(9, 10),
                                  build=BUILD, mode="distribute")
        except cs.Skip as e:
            pytest.skip(str(e))
        except cs.Fail as e:
            pytest.fail(str(e), pytrace=False)
    assert facts["partitions"] >= 2, facts


# ---------------------------------------------------------------- (d) SQLite

SQLITE_DIR = pathlib.Path(os.environ.get("SQLITE_AMALGAMATION_DIR",
                                         ROOT / "bench" / "work" / "sqlite-amalgamation"))
SQLITE_CFLAGS = ["-O2", "-flto=thin", "-DSQLITE_ENABLE_MATH_FUNCTIONS", "-DSQLITE_ENABLE_FTS5",
                 "-I", SQLITE_DIR]
SQLITE_PROGRAMS = {"sqlite3": "shell", "speedtest1": "speedtest1"}


def speedtest_lines(exe):
    """speedtest1's report without its timing column (one line per test, then the
    verification hash)."""
    r = run([exe, "--size", "5", "--memdb", "--verify"], timeout=600)
    lines = [re.sub(r"\s+\d+\.\d+s$", "", l) for l in r.stdout.splitlines()]
    return r.returncode, lines, r.stderr


@pytest.fixture(scope="module")
def sqlite_builds(tmp_path_factory):
    """The shell and speedtest1 linked in-process (d/inprocess) and through mtpc-distribute with
    its default cost threshold and MTPC_MAX_PARTITIONS=2 (d/dtlto); the links' stderr."""
    srcs = [SQLITE_DIR / f for f in ("sqlite3.c", "shell.c", "speedtest1.c")]
    missing = [str(f) for f in srcs if not f.exists()]
    if missing:
        pytest.skip(f"{', '.join(missing)} missing: run bench/get-sqlite.sh "
                    "(or set SQLITE_AMALGAMATION_DIR)")
    d = tmp_path_factory.mktemp("dist-sqlite")
    t0 = time.time()
    clang = versioned_driver("clang")
    sl.pmap(lambda s: run([clang, *SQLITE_CFLAGS, "-c", s, "-o", d / f"{s.stem}.o"]), srcs)
    env = {k: v for k, v in os.environ.items()
           if k not in ("MTPC_SPLIT_THRESHOLD", "MTPC_SPLIT_COST", "MTPC_SPLIT_ARGS")}
    env["MTPC_MAX_PARTITIONS"] = "2"

    def link(job):
        prog, mode = job
        out = d / mode / prog
        out.parent.mkdir(exist_ok=True)
        extra = dtlto_flags() if mode == "dtlto" else []
        r = run([clang, "-O2", "-flto=thin", "-fuse-ld=lld", *extra, d / "sqlite3.o",
                 d / f"{SQLITE_PROGRAMS[prog]}.o", "-o", out, "-lpthread", "-ldl", "-lm"],
                env=env)
        return r.stderr

    jobs = [(p, m) for m in ("inprocess", "dtlto") for p in SQLITE_PROGRAMS]
    errs = dict(zip(jobs, sl.pmap(link, jobs)))
    TIMES["sqlite"] = TIMES.get("sqlite", 0.0) + time.time() - t0
    return d / "inprocess", d / "dtlto", errs


# The SQLite part takes about 100 s on 2 cores (sqlite3.c compiled once, its backend in each of
# four links): slow, so scripts/test.sh runs it in a second step of its LLVM 22 pass
# (-m slow on this file), after the "not slow" selection.
@pytest.mark.slow
def test_sqlite_split_by_default_cost(sqlite_builds):
    _, dt, errs = sqlite_builds
    for prog in SQLITE_PROGRAMS:
        err = errs[(prog, "dtlto")]
        sums = summaries(err)
        assert prog in sums, f"no mtpc-distribute summary for {prog}:\n{err}"
        mods, nsplit, parts = sums[prog]
        # default cost threshold: sqlite3.c (about 221k instructions) alone is worth splitting
        assert mods == 2 and nsplit == 1 and parts == {"sqlite3.o": 2}, err
        assert "split by cost >= " in err and "warning" not in err, err
        assert (dt / f"{prog}.mtpc").is_dir()


@pytest.mark.slow
def test_sqlite_speedtest1_same_as_inprocess(sqlite_builds):
    ref, dt, _ = sqlite_builds
    want, got = speedtest_lines(ref / "speedtest1"), speedtest_lines(dt / "speedtest1")
    assert got == want
    assert want[0] == 0 and len(want[1]) > 20, want
    assert any("Verification Hash" in l for l in want[1]), want[1]


@pytest.mark.slow
def test_sqlite_shell_same_as_inprocess(sqlite_builds, tmp_path):
    import test_sqlite_build as ts  # its scripted session (JSON, FTS5, window functions, ...)
    ref, dt = sqlite_builds[:2]
    outs = ts.shell_session(ref / "sqlite3", tmp_path / "ref.db") + \
        ts.shell_session(dt / "sqlite3", tmp_path / "dt.db")
    assert outs[2] == outs[0] and outs[3] == outs[1]
    assert "INSERT INTO emp VALUES(499," in outs[0][1] and outs[1][1].startswith("ok\n")


@pytest.mark.slow
@pytest.mark.parametrize("prog", sorted(SQLITE_PROGRAMS))
def test_sqlite_same_exported_globals(sqlite_builds, prog):
    ref, dt, _ = sqlite_builds
    assert exported(dt / prog) == exported(ref / prog)
    assert dynamic_exports(dt / prog) == dynamic_exports(ref / prog)
