"""Smoke test of the large C++ workload (bench/cxx: nlohmann/json's unit test
unit-element_access2.cpp with doctest's main, from Debian's nlohmann-json3): built as plain
ThinLTO and through MTPC with forced splitting (MTPC_SPLIT_THRESHOLD=0,
MTPC_MAX_PARTITIONS=4), both programs must print the same doctest report with every assertion
(`--success`) and pass, and the template-heavy module must really have been split.

Skipped when the sources are not there: run bench/get-cxx.sh first (it needs Debian's
archive; CXX_SOURCE_DIR=<dir> uses another folder). Takes minutes (two ~20 s CPU ThinLTO
backends on top of the compiles): marked `slow`. With MTPC_CXX_TEST_DIR=<dir> the two builds
are kept in <dir>/thin and <dir>/mtpc and reused by the next run."""
import os
import pathlib
import re

import pytest

from conftest import BUILD, LLVM_BIN, ROOT, run

pytestmark = pytest.mark.slow

PROJECT = ROOT / "bench" / "cxx"
SOURCES = pathlib.Path(os.environ.get("CXX_SOURCE_DIR", ROOT / "bench" / "work" / "cxx-src"))
PARTITIONS = 4
TARGET = "json_unit"
BIG_MODULE = "unit-element_access2.cpp.o"


def configure(build, mtpc):
    cmd = ["cmake", "-S", PROJECT, "-B", build, "-G", "Ninja",
           f"-DCMAKE_C_COMPILER={LLVM_BIN / 'clang'}",
           f"-DCMAKE_CXX_COMPILER={LLVM_BIN / 'clang++'}", f"-DCXX_SOURCE_DIR={SOURCES}"]
    if mtpc:
        cfg = BUILD / "cmake" / "MTPCConfig.cmake"
        if not cfg.exists():
            pytest.fail(f"MTPC not built in {BUILD} (run scripts/build.sh)")
        cmd += ["-DCXX_USE_MTPC=ON", f"-DMTPC_DIR={cfg.parent}",
                "-DMTPC_SPLIT_THRESHOLD=0", f"-DMTPC_MAX_PARTITIONS={PARTITIONS}",
                "-DMTPC_JOBS=2", f"-DMTPC_CACHE={build / 'plans.sqlite'}",
                f"-DMTPC_SPLIT_EXECUTABLE={BUILD / 'splitter' / 'mtpc-split'}"]
    run(cmd)


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    for f in ("single_include/nlohmann/json.hpp", "doctest/doctest.h", "src/unit.cpp",
              "src/unit-element_access2.cpp"):
        if not (SOURCES / f).exists():
            pytest.skip(f"{SOURCES / f} missing: run bench/get-cxx.sh")
    if not (LLVM_BIN / "clang++").exists():
        pytest.skip("clang++ 19 not installed (run scripts/install-deps.sh)")
    keep = os.environ.get("MTPC_CXX_TEST_DIR")
    tmp = pathlib.Path(keep).resolve() if keep else tmp_path_factory.mktemp("cxx")
    thin, mt = tmp / "thin", tmp / "mtpc"
    (mt / TARGET).unlink(missing_ok=True)  # a kept build: relink, so mtpc-link reports
    configure(thin, mtpc=False)
    configure(mt, mtpc=True)
    run(["cmake", "--build", thin, "-j", "2"])
    r = run(["cmake", "--build", mt, "-j", "2"])
    return thin, mt, r.stdout + r.stderr


def test_module_was_split(builds):
    thin, mt, out = builds
    assert not (thin / f"{TARGET}.mtpc").exists()
    m = re.search(rf"mtpc-link: {TARGET}: .*{re.escape(BIG_MODULE)}: (\d+) partitions", out)
    assert m, out
    assert 2 <= int(m.group(1)) <= PARTITIONS
    (d,) = (mt / f"{TARGET}.mtpc" / "mod").glob(f"{BIG_MODULE}-*")
    n = int((d / "split.n").read_text())
    assert n == int(m.group(1))
    for i in range(n):
        assert (d / f"p{i}.o").stat().st_size > 0
    assert "fallback" not in out and "warning" not in out.lower(), out


def test_same_output(builds):
    thin, mt, _ = builds
    outs = [run([b / TARGET, "--success"], timeout=300) for b in (thin, mt)]
    assert outs[0].stdout == outs[1].stdout
    assert outs[0].stderr == outs[1].stderr
    text = outs[0].stdout
    assert "[doctest] Status: SUCCESS!" in text, text[-2000:]
    m = re.search(r"assertions: +(\d+) \| +(\d+) passed \| +0 failed", text)
    assert m and int(m.group(1)) == int(m.group(2)) > 1000, text[-2000:]
    # doctest's exception paths ran too: json's out_of_range / type_error messages
    assert "[json.exception.out_of_range." in text and "[json.exception.type_error." in text


def test_same_rtti(builds):
    """Type identity across partitions: the same typeinfo objects (names) in both programs,
    one definition each (vtables of local classes may be duplicated, see docs/splitter.md)."""
    thin, mt, _ = builds
    nm = LLVM_BIN / "llvm-nm"
    syms = []
    for b in (thin, mt):
        lines = run([nm, "--defined-only", b / TARGET]).stdout.splitlines()
        names = [ln.split()[-1] for ln in lines if " _ZTI" in ln or " _ZTS" in ln]
        syms.append(sorted(names))
    assert syms[0] == syms[1]
    assert len(syms[1]) == len(set(syms[1]))
    assert any("out_of_range" in s for s in syms[0])
