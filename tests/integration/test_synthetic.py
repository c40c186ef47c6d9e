"""bench/gen_synthetic.py: the generated project is valid, UB-free C with a stable checksum.

Small sizes only (a few thousand lines): each build takes about a second."""
import pathlib
import re
import shutil
import sys

import pytest

from conftest import ROOT, llvm_tool, run

sys.path.insert(0, str(ROOT / "bench"))
import gen_synthetic  # noqa: E402

LINES = 2500


def _generate(out, seed, lines=LINES):
    run([sys.executable, ROOT / "bench" / "gen_synthetic.py", "-o", out,
         "--seed", seed, "--lines", lines])
    return pathlib.Path(out)


def _build_and_run(cc, opt, src, exe, extra=()):
    sources = sorted(str(p) for p in src.glob("*.c"))
    run([cc, opt, "-std=c99", "-Wall", "-Wextra", "-Werror", *extra, "-o", exe, *sources])
    r = run([exe])
    m = re.fullmatch(r"synth checksum ([0-9a-f]{8})\n", r.stdout)
    assert m, r.stdout
    return m.group(1)


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    return _generate(tmp_path_factory.mktemp("synth") / "s7", 7)


def test_layout_and_size(project):
    names = {p.name for p in project.iterdir()}
    assert {"big.c", "synth.h", "main.c", "mod_0.c", "mod_1.c", "mod_2.c",
            "CMakeLists.txt", "cmake"} <= names
    big = (project / "big.c").read_text()
    n = big.count("\n")
    assert abs(n - LINES) <= 0.05 * LINES, n
    # the ingredients the benchmark relies on
    assert "static u32 (*const tab_" in big          # function-pointer tables
    assert "switch (op[0])" in big                   # giant interpreter functions
    assert re.search(r"^static u32 s_f_\d+\(u32 x, u32 d\)$", big, re.M)   # static helpers
    assert "static u32 c0_state[16];" in big         # static state
    assert "include(BenchOptions)" in (project / "CMakeLists.txt").read_text()
    assert (project / "cmake" / "BenchOptions.cmake").is_file()


def test_giants_are_much_larger_than_median(project):
    big = (project / "big.c").read_text().split("\n")
    sizes, start = {}, None
    for i, line in enumerate(big):
        m = re.match(r"^(?:static )?u32 (\w+)\(u32 x, u32 d\)$", line)
        if m:
            start = (m.group(1), i)
        elif line == "}" and start:
            sizes[start[0]] = i - start[1]
            start = None
    ordinary = sorted(v for k, v in sizes.items() if "exec" not in k and "drive" not in k)
    giants = [v for k, v in sizes.items() if "exec" in k]
    median = ordinary[len(ordinary) // 2]
    assert len(giants) == 3
    assert max(giants) > 4 * median


def test_scc_groups_exist():
    g = gen_synthetic.Generator(3, 5000, 3, 3)
    g.plan()
    groups = {f.scc for f in g.funcs if f.scc}
    assert len(groups) >= 10
    # calls outside the SCC groups only go downwards: no accidental giant SCC
    for f in g.funcs:
        end = f.scc[1] if f.scc else f.index
        assert all(j > end for j in f.callees)


def test_same_checksum_gcc_clang_O0_O2(project, tmp_path):
    clang = llvm_tool("clang")
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("gcc not installed")
    sums = {}
    for cc in (gcc, clang):
        for opt in ("-O0", "-O2"):
            sums[(pathlib.Path(cc).name, opt)] = _build_and_run(
                cc, opt, project, tmp_path / ("t_%s%s" % (pathlib.Path(cc).name, opt)))
    assert len(set(sums.values())) == 1, sums


def test_no_undefined_behaviour(project, tmp_path):
    clang = llvm_tool("clang")
    ref = _build_and_run(clang, "-O0", project, tmp_path / "ref")
    got = _build_and_run(clang, "-O1", project, tmp_path / "ubsan",
                         ("-g", "-fsanitize=undefined,address",
                          "-fno-sanitize-recover=all"))
    assert got == ref


def test_thinlto_build_same_checksum(project, tmp_path):
    clang = llvm_tool("clang")
    ref = _build_and_run(clang, "-O0", project, tmp_path / "ref")
    got = _build_and_run(clang, "-O2", project, tmp_path / "thin",
                         ("-flto=thin", "-fuse-ld=lld"))
    assert got == ref


def test_deterministic_for_seed(tmp_path):
    a = _generate(tmp_path / "a", 11, 1500)
    b = _generate(tmp_path / "b", 11, 1500)
    c = _generate(tmp_path / "c", 12, 1500)
    for name in ("big.c", "synth.h", "main.c", "mod_0.c", "CMakeLists.txt"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    assert (a / "big.c").read_bytes() != (c / "big.c").read_bytes()
    clang = llvm_tool("clang")
    sa = _build_and_run(clang, "-O2", a, tmp_path / "ta")
    sc = _build_and_run(clang, "-O2", c, tmp_path / "tc")
    assert sa != sc


def test_cmake_project_builds(project, tmp_path):
    if not shutil.which("cmake") or not shutil.which("ninja"):
        pytest.skip("cmake/ninja not installed")
    clang = llvm_tool("clang")
    bld = tmp_path / "build"
    run(["cmake", "-G", "Ninja", "-S", project, "-B", bld, f"-DCMAKE_C_COMPILER={clang}"])
    run(["cmake", "--build", bld])
    ninja_cmds = run(["ninja", "-C", bld, "-t", "commands"]).stdout
    assert "-flto=thin" in ninja_cmds and "-fuse-ld=lld" in ninja_cmds
    r = run([bld / "synth"])
    assert r.stdout == "synth checksum %s\n" % _build_and_run(clang, "-O0", project,
                                                               tmp_path / "ref")


def test_cmake_mtpc_switch_fails_clearly_without_module(project, tmp_path):
    if not shutil.which("cmake"):
        pytest.skip("cmake not installed")
    clang = llvm_tool("clang")
    r = run(["cmake", "-G", "Ninja", "-S", project, "-B", tmp_path / "b",
             f"-DCMAKE_C_COMPILER={clang}", "-DSYNTH_USE_MTPC=ON",
             f"-DMTPC_DIR={tmp_path / 'nowhere'}"], check=False)
    assert r.returncode != 0
    assert "MTPC.cmake was not found" in r.stderr
