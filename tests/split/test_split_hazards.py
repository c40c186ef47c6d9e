"""Acceptance tests of mtpc-split on the hazard fixtures (tests/hazards/; the numbered
hazards are listed in docs/splitter.md, "Hazards").

For every fixture and N in {1, 2, 4, 8}: every partition verifies; the partition objects merge
with `ld.lld -r` and, after `llvm-objcopy --localize-symbols=localize.txt`, define exactly the
unsplit object's global symbols with no new undefined symbol; the program linked from them
prints what the unsplit build prints. Plus: N=1 reproduces the unsplit `.text` byte for byte,
and splitting is deterministic. See splitlib.py for fixture directives and MTPC_SPLIT_CMD.
"""
import os
import pathlib
import shutil

import pytest

import splitlib as sl
from conftest import llvm_tool, run, thinned, tool

FIXTURES = sl.all_fixtures()
NS = (1, 2, 4, 8)


@pytest.fixture(scope="session")
def builder(tmp_path_factory):
    return sl.Builder(tmp_path_factory.mktemp("hazards"))


def fresh(path):
    path = pathlib.Path(path)
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    return path


def test_fixtures_present():
    """Every numbered hazard of docs/splitter.md ("Hazards") has at least one fixture."""
    covered = set()
    for fx in FIXTURES:
        assert fx.hazards or fx.name == "scc_switch_varargs", f"{fx.path}: no HAZARD header"
        for nums, _ in fx.hazards:
            covered |= {int(x) for x in nums.replace(",", " ").split()}
    assert covered >= set(range(1, 17)), f"hazards without a fixture: {set(range(1, 17)) - covered}"


# Forced cuts (issue #13): every call-graph cycle cut into its functions, at a small and a
# large N, on every fixture.
FORCED = ("--scc-cut", "0.000001")


MATRIX = (thinned([(fx, n, ()) for fx in FIXTURES for n in NS], len(NS))
          + thinned([(fx, n, FORCED) for fx in FIXTURES for n in (2, 16)], 2))


@pytest.mark.parametrize("fx,n,extra", MATRIX,
                         ids=[f"{fx.name}-N{n}{'-cut' if extra else ''}" for fx, n, extra in MATRIX])
def test_split_matrix(builder, fx, n, extra):
    ref = builder.reference(fx)
    work = fresh(builder.fixture_dir(fx) / f"N{n}{'-cut' if extra else ''}")
    merged, problems = [], []
    for i, bc in enumerate(ref["bcs"]):
        out, plan, _, localize = sl.split_and_merge(bc, work / f"m{i}", n, fx.shared, extra)
        if n >= 2:
            want = min(fx.min_parts, n)
            assert len(plan["partitions"]) >= want, \
                f"module {i}: {len(plan['partitions'])} partition(s) for N={n} with " \
                f"--min-cost 0; this fixture has enough independent roots for {want}"
        problems += [f"module {i}: {p}"
                     for p in sl.check_symbols(ref["objs"][i], out, bc, localize)]
        problems += [f"module {i}: {p}" for p in sl.check_plan(plan, bc)]
        lost = sl.retained_sections(ref["objs"][i]) - sl.retained_sections(out)
        problems += [f"module {i}: section {s} lost SHF_GNU_RETAIN" for s in sorted(lost)]
        worse_tls = sl.tls_relocations(out) - sl.tls_relocations(ref["objs"][i])
        problems += [f"module {i}: TLS access degraded: new {r} relocations"
                     for r in sorted(worse_tls)]
        if i == 0 and fx.keep:
            have = set(sl.nm(out, "--defined-only"))
            problems += [f"{k} no longer defined" for k in fx.keep if k not in have]
        if "-g" in fx.cflags:
            r = run([llvm_tool("llvm-dwarfdump"), "--verify", out], check=False)
            if r.returncode != 0:
                problems.append(f"module {i}: llvm-dwarfdump --verify fails:\n"
                                f"{r.stdout[-2000:]}")
        merged.append(out)
    assert not problems, "\n".join(problems)

    cmd, lib = sl.link_program(fx, merged, work, ref["main_obj"])
    rc, out = sl.run_program(cmd)
    assert out == ref["out"], f"program output differs from the unsplit build\n" \
                              f"--- unsplit\n{ref['out']}--- split N={n} {extra}\n{out}"
    assert rc == ref["rc"]
    if lib:
        assert sl.dynamic_exports(lib) == ref["exports"], "shared library exports differ"


PLACED = [fx for fx in FIXTURES if fx.place]


@pytest.mark.parametrize("fx", PLACED, ids=[fx.name for fx in PLACED])
def test_forced_placement(builder, fx):
    """MTPC-PLACE: a seed plan asks for the functions that compare or access an object away
    from the object's names (and the names apart from each other). Whatever the splitter
    makes of it, the program prints what the unsplit one prints, comparison by comparison."""
    ref = builder.reference(fx)
    work = fresh(builder.fixture_dir(fx) / "forced")
    n = sl.seed_plan(fx.place, work / "seed.json")
    merged = []
    for i, bc in enumerate(ref["bcs"]):
        extra = ("--no-cache", "--seed-plan", str(work / "seed.json")) if i == 0 else ()
        out, plan, _, localize = sl.split_and_merge(bc, work / f"m{i}", n, fx.shared, extra)
        problems = sl.check_symbols(ref["objs"][i], out, bc, localize)
        assert not problems, "\n".join(problems)
        merged.append(out)
    cmd, lib = sl.link_program(fx, merged, work, ref["main_obj"])
    rc, out = sl.run_program(cmd)
    diff = [f"  unsplit: {a}\n  split:   {b}" for a, b in
            zip(ref["out"].splitlines(), out.splitlines()) if a != b]
    assert out == ref["out"] and rc == ref["rc"], \
        f"forced placement changes what the program prints:\n" + "\n".join(diff)


@pytest.mark.parametrize("fx", thinned(FIXTURES), ids=lambda f: f.name)
def test_one_partition_same_text(builder, fx):
    """N=1 must give the unsplit module back: same .text bytes after the backend."""
    ref = builder.reference(fx)
    work = fresh(builder.fixture_dir(fx) / "text")
    for i, bc in enumerate(ref["bcs"]):
        out = work / f"m{i}"
        sl.split(bc, out, 1)
        plan, parts, localize = sl.read_partitions(out, 1)
        assert len(parts) == 1
        obj = sl.compile_ir(parts[0], out / "p0.o", fx.shared)
        got = sl.dump_section(obj, ".text", out / "p0.text")
        want = sl.dump_section(ref["objs"][i], ".text", out / "unsplit.text")
        assert got == want, f"module {i}: .text of the N=1 partition differs from the " \
                            f"unsplit object ({len(got)} vs {len(want)} bytes)"


@pytest.mark.parametrize("fx", thinned(FIXTURES), ids=lambda f: f.name)
def test_deterministic(builder, fx):
    """Two runs (different directories, same relative paths) give identical bytes, and so
    does a third that builds the partitions in processes instead of threads (--emit-with);
    a re-run into the same directory leaves the files untouched; a smaller N removes stale
    p<i>.bc. The plan cache is an input too (an exact hit, or the previous plan of the same
    module path, "in.bc" in every fixture here): the runs have one of their own, empty at
    first, so that what else the suite ran (another worker's fixture) cannot seed them."""
    ref = builder.reference(fx)
    work = fresh(builder.fixture_dir(fx) / "det")
    bc = ref["bcs"][0]
    cache = ("--cache", str(work / "plans.sqlite"))
    trees = []
    for run_dir, emit_with in (("a", "threads"), ("b", "threads"), ("c", "processes")):
        d = work / run_dir
        d.mkdir()
        shutil.copyfile(bc, d / "in.bc")
        r = sl.split("in.bc", "out", 4, "--emit-with", emit_with, *cache, cwd=d)
        # b and c are exact hits of a's plan: never a warning that it does not fit (a
        # module with unnamed symbols, which no plan names, is split afresh quietly)
        assert "warning" not in r.stderr, r.stderr
        sl.read_partitions(d / "out", 4)
        trees.append(sl.tree_bytes(d / "out"))
    a = trees[0]
    for b, what in ((trees[1], "two identical runs"), (trees[2], "threads and processes")):
        assert sorted(a) == sorted(b), f"different files: {sorted(a)} vs {sorted(b)}"
        for name in a:
            if name == "plan.json":
                assert sl.normalized_plan(a[name]) == sl.normalized_plan(b[name]), \
                    f"plan.json differs between {what} (split_seconds ignored)"
            else:
                assert a[name] == b[name], f"{name} differs between {what}"

    # Re-run into the same directory: content-identical files are not rewritten.
    out = work / "a" / "out"
    before = {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in out.iterdir()
              if p.name.endswith(".bc") or p.name == "localize.txt"}
    sl.split("in.bc", "out", 4, *cache, cwd=work / "a")
    after = {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in out.iterdir()
             if p.name.endswith(".bc") or p.name == "localize.txt"}
    assert before == after, "an identical re-run rewrote unchanged outputs"

    # Shrinking: stale partitions from the earlier run disappear.
    sl.split("in.bc", "out", 1, *cache, cwd=work / "a")
    sl.read_partitions(out, 1)


# Preloaded into mtpc-split by test_verify_option: an LLVM verifier that rejects every
# module, as the real one rejects a partition the splitter got wrong.
REJECTING_VERIFIER = r"""
#include <string.h>
int LLVMVerifyModule(void *module, int action, char **message)
{
	(void)module;
	(void)action;
	if (message)
		*message = strdup("rejected by the test hook\nsecond line");
	return 1;
}
"""


def test_verify_option(builder, tmp_path):
    """The verifier runs on every partition unless --no-verify says otherwise. With
    LLVMVerifyModule replaced (LD_PRELOAD) by one that rejects every module: by default,
    with --verify, and with --verify after --no-verify, mtpc-split fails in one line naming
    the partition and writes nothing; with --no-verify it never asks the verifier and
    writes partitions (which the real verifier, in opt, accepts)."""
    fx = next(f for f in FIXTURES if f.name == "scc_switch_varargs")
    bc = builder.reference(fx)["bcs"][0]
    (tmp_path / "reject.c").write_text(REJECTING_VERIFIER)
    hook = tmp_path / "libreject.so"
    run([llvm_tool("clang"), "-shared", "-fPIC", "-o", hook, tmp_path / "reject.c"])
    env = dict(os.environ, LD_PRELOAD=str(hook))

    def split(out, *opts):
        return run([tool("mtpc-split"), bc, "-o", out, "--partitions", "2", "--min-cost", "0",
                    "--no-cache", *opts], check=False, env=env)

    for i, opts in enumerate([(), ("--verify",), ("--no-verify", "--verify")]):
        out = tmp_path / f"rejected{i}"
        r = split(out, *opts)
        assert r.returncode == 1, f"{opts}: the verifier did not run\n{r.stderr}"
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and "fails the LLVM verifier: rejected by the test hook" in lines[0] \
            and "partition" in lines[0], r.stderr
        assert not out.exists() or not any(out.iterdir()), f"{opts}: wrote {list(out.iterdir())}"
    out = tmp_path / "unverified"
    r = split(out, "--no-verify")
    assert r.returncode == 0, r.stderr
    _, parts, _ = sl.read_partitions(out, 2)
    assert len(parts) == 2
    for p in parts:
        sl.verify(p)


def test_help_lists_options():
    r = run(sl.split_cmd() + ["--help"], check=False)
    text = r.stdout + r.stderr
    assert r.returncode == 0, text
    for opt in ("--partitions", "--min-cost", "--verify", "-o"):
        assert opt in text, f"--help does not mention {opt}"


@pytest.mark.parametrize("fx", thinned(FIXTURES), ids=lambda f: f.name)
def test_shared_statics(builder, fx):
    """--local-dup-limit: small statics several partitions use are carried by each as a
    hidden linkonce_odr comdat instead of being promoted (off by default). Same symbols,
    same program, at N=4 with an unlimited budget."""
    ref = builder.reference(fx)
    work = fresh(builder.fixture_dir(fx) / "shared")
    merged, problems = [], []
    for i, bc in enumerate(ref["bcs"]):
        out, plan, _, localize = sl.split_and_merge(
            bc, work / f"m{i}", 4, fx.shared,
            extra=("--local-dup-limit", "150", "--local-dup-budget", "10"))
        problems += [f"module {i}: {p}"
                     for p in sl.check_symbols(ref["objs"][i], out, bc, localize)]
        merged.append(out)
    assert not problems, "\n".join(problems)
    cmd, lib = sl.link_program(fx, merged, work, ref["main_obj"])
    rc, out = sl.run_program(cmd)
    assert out == ref["out"] and rc == ref["rc"]
