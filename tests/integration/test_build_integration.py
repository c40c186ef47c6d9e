"""Build integration (issue #3): mtpc-link + the inner Ninja graph + MTPC.cmake,
exercised through the sample CMake projects in tests/projects/.

The sample builds use the real mtpc-split when it is built (override with
MTPC_TEST_SPLITTER=fake|real); the incremental tests always use the stand-in
tests/projects/fake_split.py, whose partition count they control."""
import os
import pathlib
import re
import shutil
import subprocess

import pytest

from conftest import BUILD, LLVM_VERSION, ROOT, llvm_tool, run, versioned_driver

PROJECTS = ROOT / "tests" / "projects"
FAKE_SPLIT = PROJECTS / "fake_split.py"
CLANG = versioned_driver("clang")      # /usr/bin/clang-19 for an MTPC built with LLVM 19
CLANGXX = versioned_driver("clang++")


def mtpc_config_dir():
    cfg = BUILD / "cmake" / "MTPCConfig.cmake"
    if not cfg.exists() or not (BUILD / "ninja-gen" / "mtpc-link").exists():
        pytest.fail(f"MTPC not built in {BUILD} (run scripts/build.sh)")
    return cfg.parent


def splitter(kind=None):
    kind = kind or os.environ.get("MTPC_TEST_SPLITTER")
    real = BUILD / "splitter" / "mtpc-split"
    if kind == "real" or (kind is None and real.exists()):
        return real
    return FAKE_SPLIT


def configure(src, build, mtpc=True, generator="Ninja", extra=(), split=None, check=True):
    cmd = ["cmake", "-S", src, "-B", build, "-G", generator,
           f"-DCMAKE_C_COMPILER={CLANG}", f"-DCMAKE_CXX_COMPILER={CLANGXX}",
           f"-DCMAKE_AR={llvm_tool('llvm-ar')}", "-DCMAKE_BUILD_TYPE=Release",
           f"-DSAMPLE_MTPC={'ON' if mtpc else 'OFF'}"]
    if mtpc:
        cmd += [f"-DMTPC_DIR={mtpc_config_dir()}", "-DMTPC_SPLIT_THRESHOLD=0",
                "-DMTPC_MAX_PARTITIONS=4", "-DMTPC_JOBS=2",
                f"-DMTPC_CACHE={pathlib.Path(build) / 'plans.sqlite'}",
                f"-DMTPC_SPLIT_EXECUTABLE={split or splitter()}"]
    return run(cmd + list(extra), check=check)


def build(build_dir, env=None, check=True):
    return run(["cmake", "--build", build_dir], env=env, check=check)


def exported(path):
    out = run([llvm_tool("llvm-nm"), "--extern-only", "--defined-only", path]).stdout
    return sorted(" ".join(l.split()[1:]) for l in out.splitlines() if l.strip())


SAMPLES = {"c": ["app", "libshlib.so"], "cxx": ["app", "libshapes.so"]}


@pytest.fixture(scope="module", params=sorted(SAMPLES))
def sample(request, tmp_path_factory):
    name = request.param
    tmp = tmp_path_factory.mktemp(f"sample-{name}")
    ref, mt = tmp / "thinlto", tmp / "mtpc"
    configure(PROJECTS / name, ref, mtpc=False)
    build(ref)
    configure(PROJECTS / name, mt)
    out = build(mt).stdout
    return name, ref, mt, out


def test_sample_same_output_and_exports(sample):
    name, ref, mt, out = sample
    assert re.search(r"mtpc-link: app: \d+ modules?, \d+ split \(", out), out
    exe = "app"
    assert run([mt / exe]).stdout == run([ref / exe]).stdout
    for f in SAMPLES[name]:
        assert exported(mt / f) == exported(ref / f), f
    # Every module was split (threshold 0) into at most 4 partitions.
    for n in (mt / "app.mtpc" / "mod").glob("*/split.n"):
        assert 1 <= int(n.read_text()) <= 4, n
    if name == "c":
        # big.c is an enabled OBJECT library's: its object reached the link as bitcode
        assert re.search(r"big\.c\.o: [234] partitions", out), out
    assert "native" not in out, out


def test_sample_noop_rebuild(sample):
    _, _, mt, _ = sample
    assert "no work to do" in run(["ninja", "-C", mt, "-n", "-d", "explain"]).stdout
    r = run(["ninja", "-C", mt / "app.mtpc", "-n", "-d", "explain"])
    assert "no work to do" in r.stdout, r.stdout + r.stderr


# ---- incremental behaviour (fake splitter: controlled partition counts) ----

def inner_log(inner):
    """Outputs recorded in the inner .ninja_log, in order."""
    lines = (inner / ".ninja_log").read_text().splitlines()[1:]
    return [l.split("\t")[3] for l in lines if l.count("\t") >= 4]


class Project:
    def __init__(self, tmp):
        self.src = tmp / "src"
        shutil.copytree(PROJECTS / "c", self.src)
        self.build = tmp / "build"
        configure(self.src, self.build, split=FAKE_SPLIT)
        self.inner = self.build / "app.mtpc"

    def run_build(self, **env):
        before = len(inner_log(self.inner)) if (self.inner / ".ninja_log").exists() else 0
        r = build(self.build, env=dict(os.environ, **env))
        return r.stdout + r.stderr, inner_log(self.inner)[before:]

    def moddir(self, name):
        (d,) = (self.inner / "mod").glob(name + "-*")
        return d

    def edit_big(self, old, new):
        p = self.src / "big.c"
        text = p.read_text()
        assert old in text
        p.write_text(text.replace(old, new, 1))

    def output(self):
        return run([self.build / "app"]).stdout


@pytest.fixture
def project(tmp_path):
    p = Project(tmp_path)
    p.run_build()
    return p


def test_noop_and_touch_stop_at_thinlink(project):
    out, ran = project.run_build()
    assert ran == [], ran
    (project.src / "big.c").touch()
    out, ran = project.run_build()
    # The recompiled object is identical: only the thin link runs, its
    # shards are unchanged (restat), nothing downstream reruns.
    assert ran and all(r.startswith("index/") or r == "regular-lto.o" for r in ran), ran
    out, ran = project.run_build()
    assert ran == [], ran
    assert "no work to do" in run(["ninja", "-C", project.build, "-n"]).stdout


def test_edit_one_function_reruns_only_what_changed(project):
    expected_before = project.output()
    big, util = project.moddir("big.c.o"), project.moddir("0-util.c.o")
    project.edit_big("s += (i * n) ^ (x + i);", "s += (i * n) ^ (x + 2 * i);")
    out, ran = project.run_build()
    rel = lambda d, f: f"{d.relative_to(project.inner)}/{f}"
    assert rel(big, "split.dd") in ran
    assert rel(big, "p0.o") in ran and rel(big, "native.o") in ran, "\n".join(ran)
    # The filler partitions' bitcode is unchanged: their slots do not run.
    for i in (1, 2, 3):
        assert rel(big, f"p{i}.o") not in ran
    assert rel(util, "split.dd") not in ran  # util imports nothing from big.c
    assert str(project.build / "app") in ran
    assert project.output() != expected_before


def filler_symbols(obj):
    out = run([llvm_tool("llvm-nm"), obj]).stdout
    return sorted(int(m) for m in re.findall(r"mtpc_filler_(\d+)", out))


def test_partition_count_shrinks_and_grows(project):
    big = project.moddir("big.c.o")
    assert filler_symbols(big / "native.o") == [1, 2, 3]
    project.edit_big("% 1000 + n", "% 1001 + n")
    out, ran = project.run_build(FAKE_SPLIT_N="2")
    assert (big / "split.n").read_text().strip() == "2"
    assert filler_symbols(big / "native.o") == [1]
    assert not (big / "parts" / "p2.bc").exists()
    assert "mtpc-link: app:" in out and "big.c.o: 2 partitions" in out
    expected = project.output()
    out, ran = project.run_build(FAKE_SPLIT_N="2")
    assert ran == []
    project.edit_big("% 1001 + n", "% 1002 + n")
    project.run_build(FAKE_SPLIT_N="3")
    assert filler_symbols(big / "native.o") == [1, 2]
    project.edit_big("% 1002 + n", "% 1001 + n")
    out, ran = project.run_build(FAKE_SPLIT_N="4")
    assert filler_symbols(big / "native.o") == [1, 2, 3]
    assert project.output() == expected


def test_split_failure_falls_back_to_plain_backend(project):
    # The output of the edited program when split, then the same edit again
    # with a failing splitter must give the same program.
    project.edit_big("% 1000 + n", "% 999 + n")
    project.run_build()
    expected = project.output()
    project.edit_big("% 999 + n", "% 1000 + n")
    project.run_build()
    project.edit_big("% 1000 + n", "% 999 + n")
    big = project.moddir("big.c.o")
    out, ran = project.run_build(FAKE_SPLIT_FAIL="1")
    assert re.search(r"warning: splitting \S*big\.c\.o failed .*compiling it unsplit", out), out
    assert (big / "split.n").read_text().strip() == "0"
    assert "big.c.o: unsplit (fallback)" in out
    assert filler_symbols(big / "native.o") == []
    assert project.output() == expected


# ---- configuration problems: one clear message, the build still works ----

def test_non_ninja_generator_warns_once_and_builds(tmp_path):
    """Without a Ninja generator MTPC_MODE=auto takes the DTLTO mode when Clang is 21 or newer
    (test_dtlto_mode_matches_plain_thinlto); older Clang gets one warning and the project
    builds without MTPC."""
    if int(LLVM_VERSION) >= 21:
        pytest.skip("Clang >= 21 links through mtpc-distribute with any generator")
    r = configure(PROJECTS / "c", tmp_path / "b", generator="Unix Makefiles")
    assert r.stderr.count("MTPC needs the Ninja generator, or Clang >= 21") == 1, r.stderr
    build(tmp_path / "b")
    assert "ctors 1 2" in run([tmp_path / "b" / "app"]).stdout
    assert not (tmp_path / "b" / "app.mtpc").exists()


def test_dtlto_mode_needs_clang_21(tmp_path):
    if int(LLVM_VERSION) >= 21:
        pytest.skip(f"Clang {LLVM_VERSION} has DTLTO")
    r = configure(PROJECTS / "c", tmp_path / "b", extra=["-DMTPC_MODE=dtlto"])
    assert r.stderr.count("MTPC_MODE=dtlto needs Clang >= 21") == 1, r.stderr
    build(tmp_path / "b")
    assert "ctors 1 2" in run([tmp_path / "b" / "app"]).stdout


def test_bad_mode_is_a_configure_error(tmp_path):
    r = configure(PROJECTS / "c", tmp_path / "b", extra=["-DMTPC_MODE=remote"], check=False)
    assert r.returncode != 0
    assert 'MTPC_MODE is "remote"; expected auto, launcher or dtlto' in " ".join(r.stderr.split())


@pytest.mark.parametrize("generator,mode", [("Unix Makefiles", "auto"), ("Ninja", "dtlto")])
@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_dtlto_mode_matches_plain_thinlto(tmp_path, name, generator, mode):
    """MTPC_MODE=dtlto (the default without a Ninja generator on Clang >= 21): lld's DTLTO runs
    mtpc-distribute, with only link options; every module splits (threshold 0) and the
    programs and libraries match plain ThinLTO's."""
    if int(LLVM_VERSION) < 21:
        pytest.skip("DTLTO needs Clang >= 21; runs in the LLVM 22 pass of scripts/test.sh")
    ref, mt = tmp_path / "ref", tmp_path / "mt"
    configure(PROJECTS / name, ref, mtpc=False, generator=generator)
    build(ref)
    configure(PROJECTS / name, mt, generator=generator, extra=[f"-DMTPC_MODE={mode}"])
    r = build(mt)
    err = r.stdout + r.stderr
    assert re.search(r"mtpc-distribute: app: \d+ modules?, \d+ split \(", err), err
    assert "mtpc-link" not in err and "warning" not in err, err
    assert run([mt / "app"]).stdout == run([ref / "app"]).stdout
    for f in SAMPLES[name]:
        assert exported(mt / f) == exported(ref / f), f
    assert list((mt / "app.mtpc" / "mod").glob("*/split.n")), "no module was split"
    # A second build with nothing changed relinks nothing.
    again = build(mt)
    assert "mtpc-distribute" not in again.stdout + again.stderr


def test_missing_lld_warns_once_and_builds(tmp_path):
    r = configure(PROJECTS / "c", tmp_path / "b",
                  extra=["-DMTPC_LLD_EXECUTABLE=/nonexistent/ld.lld"])
    assert r.stderr.count("MTPC needs lld") == 1, r.stderr
    build(tmp_path / "b")
    assert "ctors 1 2" in run([tmp_path / "b" / "app"]).stdout
    assert not (tmp_path / "b" / "app.mtpc").exists()


@pytest.mark.parametrize("other", ["19", "22"])
@pytest.mark.parametrize("mtpc_from", ["build tree", "install"])
def test_other_clang_major_warns_once_and_builds(tmp_path, other, mtpc_from):
    """mtpc-split reads the project's bitcode with the LLVM MTPC is built with, and the
    project's clang compiles the partitions it writes: with a newer clang (bitcode that LLVM
    cannot read) or an older one (cannot read the partitions), the project gets one message at
    configure time, from the build tree's package config or an installed MTPC alike, and
    builds without MTPC: never a failed link."""
    if other == LLVM_VERSION:
        pytest.skip(f"MTPC is built with LLVM {other}")
    clang, clangxx = shutil.which(f"clang-{other}"), shutil.which(f"clang++-{other}")
    assert clang and clangxx, f"clang-{other} missing (scripts/install-deps.sh installs it)"
    b = tmp_path / "b"
    compilers = [f"-DCMAKE_C_COMPILER={clang}", f"-DCMAKE_CXX_COMPILER={clangxx}"]
    if mtpc_from == "build tree":
        r = configure(PROJECTS / "c", b, split=FAKE_SPLIT, extra=compilers)
    else:
        prefix = tmp_path / "prefix"
        run(["cmake", "--install", BUILD, "--prefix", prefix])
        assert (prefix / "share/mtpc/cmake/MTPCLLVMVersion.cmake").exists()
        r = run(["cmake", "-S", PROJECTS / "c", "-B", b, "-G", "Ninja", *compilers,
                 f"-DCMAKE_PREFIX_PATH={prefix}", "-DMTPC_SPLIT_THRESHOLD=0"])
    err = " ".join(r.stderr.split())  # CMake wraps warnings
    problem = ("cannot read the bitcode of" if int(other) > int(LLVM_VERSION)
               else "its partitions cannot be compiled by")
    assert err.count(f"MTPC is built with LLVM {LLVM_VERSION}") == 1, r.stderr
    assert f"{problem} this project's Clang {other}" in err, r.stderr
    assert f"use clang-{LLVM_VERSION}, or an MTPC built with -DMTPC_LLVM_VERSION={other}" in err
    build(b)
    assert "ctors 1 2" in run([b / "app"]).stdout
    assert not (b / "app.mtpc").exists()


MIXED_CMAKE = """cmake_minimum_required(VERSION 3.20)
project(mixed C CXX)
find_package(MTPC REQUIRED)
add_executable(capp main.c)
add_executable(cxxapp main.cpp)
mtpc_enable(capp)
mtpc_enable(cxxapp)
"""


NATIVE_CMAKE = """cmake_minimum_required(VERSION 3.20)
project(native C)
find_package(MTPC REQUIRED)
add_library(bigobj OBJECT big.c)     # not enabled: native code
add_library(helpers STATIC util.c)   # not enabled: a native archive
add_executable(app main.c)
target_link_libraries(app PRIVATE bigobj helpers)
mtpc_enable(app)
"""


def test_summary_counts_what_passes_through_unsplit(tmp_path):
    """Libraries that are not enabled hold native code: the link passes it through and the
    summary line says so, so a large source compiled without -flto=thin does not go
    unnoticed. Enabling the OBJECT library makes its object a split module."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "CMakeLists.txt").write_text(NATIVE_CMAKE)
    (src / "big.c").write_text("int big(int x) { return x * 3; }\n")
    (src / "util.c").write_text("int util(int x) { return x + 1; }\n")
    (src / "main.c").write_text('#include <stdio.h>\nint big(int); int util(int);\n'
                                'int main(void) { printf("%d\\n", big(util(1))); return 0; }\n')
    b = tmp_path / "b"
    configure(src, b, split=FAKE_SPLIT)
    out = build(b).stdout
    assert re.search(r"mtpc-link: app: 1 module, 1 split \(main\.c\.o: \d partitions?\), "
                     r"1 native object, 1 native archive, [\d.]+ s", out), out
    assert run([b / "app"]).stdout == "6\n"
    (src / "CMakeLists.txt").write_text(NATIVE_CMAKE.replace(
        "mtpc_enable(app)", "mtpc_enable(app)\nmtpc_enable(bigobj)\nmtpc_enable(helpers)"))
    out = build(b).stdout
    assert re.search(r"mtpc-link: app: 3 modules, 3 split \(", out), out
    assert "native" not in out and run([b / "app"]).stdout == "6\n"


def test_unused_archive_members_are_not_fallbacks(tmp_path):
    """lld's index-only thin link writes an empty index for an archive member it does not
    pull in; mtpc-split says so (status 3) and the member takes the plain backend route (an
    empty object the lazy link ignores) without a fallback warning."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "CMakeLists.txt").write_text("""cmake_minimum_required(VERSION 3.20)
project(lazy C)
find_package(MTPC REQUIRED)
add_library(l STATIC used.c unused.c)
add_executable(app main.c)
target_link_libraries(app PRIVATE l)
mtpc_enable(l)
mtpc_enable(app)
""")
    (src / "used.c").write_text("int used(int x) { return x * 7; }\n")
    (src / "unused.c").write_text("int unused(int x) { return x - 7; }\n")
    (src / "main.c").write_text('#include <stdio.h>\nint used(int);\n'
                                'int main(void) { printf("%d\\n", used(6)); return 0; }\n')
    b = tmp_path / "b"
    configure(src, b, split=splitter("real"))
    r = build(b)
    out = r.stdout + r.stderr
    assert "warning" not in out and "fallback" not in out, out
    assert re.search(r"mtpc-link: app: 3 modules, 2 split \(main\.c\.o: \d partitions?, "
                     r"0-used\.c\.o: \d partitions?\), 1 unused, [\d.]+ s", out), out
    assert run([b / "app"]).stdout == "42\n"
    (unused_dir,) = (b / "app.mtpc" / "mod").glob("1-unused.c.o-*")
    assert (unused_dir / "split.n").read_text() == "0 unused\n"
    assert "no work to do" in run(["ninja", "-C", b / "app.mtpc", "-n"]).stdout


def test_compilers_are_checked_per_target(tmp_path):
    """Clang for C, GCC for C++: the C target goes through MTPC, the C++ target builds as
    before with one warning naming it (MTPC only looks at the languages a target uses)."""
    gxx = shutil.which("g++")
    assert gxx, "g++ missing (scripts/install-deps.sh installs it)"
    src = tmp_path / "src"
    src.mkdir()
    (src / "CMakeLists.txt").write_text(MIXED_CMAKE)
    (src / "main.c").write_text('#include <stdio.h>\nint main(void) { puts("c"); return 0; }\n')
    (src / "main.cpp").write_text('#include <cstdio>\nint main() { std::puts("cxx"); }\n')
    b = tmp_path / "b"
    r = run(["cmake", "-S", src, "-B", b, "-G", "Ninja", f"-DCMAKE_C_COMPILER={CLANG}",
             f"-DCMAKE_CXX_COMPILER={gxx}", f"-DMTPC_DIR={mtpc_config_dir()}",
             "-DMTPC_SPLIT_THRESHOLD=0", f"-DMTPC_SPLIT_EXECUTABLE={splitter()}"])
    assert r.stderr.count("MTPC needs Clang") == 0, r.stderr
    assert r.stderr.count("mtpc_enable(cxxapp): its CXX sources are compiled by GNU") == 1, r.stderr
    assert "mtpc_enable(capp)" not in r.stderr
    out = build(b).stdout
    assert "mtpc-link: capp:" in out and "mtpc-link: cxxapp" not in out, out
    assert run([b / "capp"]).stdout == "c\n" and run([b / "cxxapp"]).stdout == "cxx\n"
    assert (b / "capp.mtpc").is_dir() and not (b / "cxxapp.mtpc").exists()


def test_build_dir_with_spaces_and_dollar(tmp_path):
    b = tmp_path / "my build $dir"  # no ":": it would break the RPATH of any build
    configure(PROJECTS / "c", b, split=FAKE_SPLIT)
    out = build(b).stdout
    assert "mtpc-link: app:" in out
    assert "asm 42" in run([b / "app"]).stdout
    assert "no work to do" in run(["ninja", "-C", b / "app.mtpc", "-n"]).stdout


def test_install_and_find_package(tmp_path):
    prefix = tmp_path / "prefix"
    run(["cmake", "--install", BUILD, "--prefix", prefix])
    for f in ("bin/mtpc-link", "bin/mtpc-split", "bin/mtpc-fold.so", "share/mtpc/cmake/MTPC.cmake",
              "share/mtpc/cmake/MTPCConfig.cmake"):
        assert (prefix / f).exists(), f
    b = tmp_path / "b"
    run(["cmake", "-S", PROJECTS / "c", "-B", b, "-G", "Ninja", f"-DCMAKE_C_COMPILER={CLANG}",
         f"-DCMAKE_AR={llvm_tool('llvm-ar')}", f"-DCMAKE_PREFIX_PATH={prefix}",
         "-DMTPC_SPLIT_THRESHOLD=0", "-DMTPC_MAX_PARTITIONS=2",
         f"-DMTPC_CACHE={tmp_path / 'plans.sqlite'}", f"-DMTPC_SPLIT_EXECUTABLE={FAKE_SPLIT}"])
    cache = (b / "CMakeCache.txt").read_text()
    assert f"MTPC_LINK_EXECUTABLE:FILEPATH={prefix}/bin/mtpc-link" in cache
    out = build(b).stdout
    assert "mtpc-link: app:" in out
    assert "big 17283" in run([b / "app"]).stdout


# ---- step modes ----

def test_backend_step_rejects_silent_backend_failures(tmp_path):
    link = BUILD / "ninja-gen" / "mtpc-link"
    out = tmp_path / "x.o"
    r = run([link, "--backend-step", "--out", out, "--", "sh", "-c", f": > '{out}.tmp'"], check=False)
    assert r.returncode != 0 and not out.exists()
    r = run([link, "--backend-step", "--out", out, "--", "sh", "-c",
             f"echo obj > '{out}.tmp'; echo 'Error running ThinLTO backend: x' >&2"], check=False)
    assert r.returncode != 0 and not out.exists()
    r = run([link, "--backend-step", "--out", out, "--", "sh", "-c", f"echo obj > '{out}.tmp'"])
    assert out.read_text() == "obj\n"


def test_help_documents_every_option():
    """Every long option mtpc-link accepts (the launchers' longopts[] in launcher/inner.c's
    inner_parse_launcher and INNER_LONGOPTS, shared with mtpc-distribute, in
    launcher/inner.h) is in --help; so is every option mtpc-compile takes, but the link's
    own it refuses; mtpc-compile's own (--merge-dwo) the link refuses."""
    r = run([BUILD / "ninja-gen" / "mtpc-link", "--help"])
    src = ROOT / "ninja-gen"
    launcher = (src / "launcher" / "inner.c").read_text().split("int inner_parse_launcher(", 1)[1]
    table = launcher.split("longopts[] = {", 1)[1].split("};", 1)[0]
    shared = (src / "launcher" / "inner.h").read_text().split("#define INNER_LONGOPTS", 1)[1].split("\n\n", 1)[0]
    names = re.findall(r'\{"([a-z][a-z-]*)",\s*(?:required|no)_argument', table + shared)
    assert len(names) >= 14, names
    compile_only = {"merge-dwo"}
    for name in names:
        if name in compile_only:
            bad = run([BUILD / "ninja-gen" / "mtpc-link", f"--{name}", "--", "true"], check=False)
            assert bad.returncode == 2 and "not an option of mtpc-link" in bad.stderr, (name, bad.stderr)
        else:
            assert re.search(rf"(^|\s)--{re.escape(name)}\b", r.stdout, re.M), name
    compile_help = run([BUILD / "ninja-gen" / "mtpc-compile", "--help"]).stdout
    refused = {"threshold", "relay-cost", "relay", "min-cost", "llvm-bin", "dir", "no-type-units"}
    for name in names:
        if name not in refused:
            assert re.search(rf"(^|\s)--{re.escape(name)}\b", compile_help, re.M), name
        else:
            r = run([BUILD / "ninja-gen" / "mtpc-compile", f"--{name}", "1", "--", "true"], check=False)
            assert r.returncode == 2 and "not an option of mtpc-compile" in r.stderr, (name, r.stderr)


def test_launcher_prefixes_partition_compiles(tmp_path):
    log = tmp_path / "launched.log"
    launcher = tmp_path / "launch.sh"
    launcher.write_text(f"#!/bin/sh\necho \"$@\" >> '{log}'\nexec \"$@\"\n")
    launcher.chmod(0o755)
    b = tmp_path / "b"
    configure(PROJECTS / "c", b, split=FAKE_SPLIT, extra=[f"-DMTPC_LAUNCHER={launcher}"])
    build(b)
    lines = log.read_text().splitlines()
    # the slot compiles its partition as a ThinLTO backend whose import is done
    slot = re.compile(r"-x ir (\S*parts/p0\.bc) -fthinlto-index=\1 -mllvm -thinlto-assume-merged ")
    assert any(slot.search(l) for l in lines), lines
    assert not any("fake_split" in l for l in lines)  # the split itself runs locally
    assert "big 17283" in run([b / "app"]).stdout


def test_failing_partition_compile_falls_back(tmp_path):
    """A partition that does not compile (here: the launcher fails it, as a compiler crash
    would) does not break the build: its module is compiled unsplit, with one warning."""
    flag = tmp_path / "fail-p1"
    launcher = tmp_path / "launch.sh"
    launcher.write_text("#!/bin/sh\n"
                        f"case \"$*\" in *parts/p1.bc*) [ -e '{flag}' ] && exit 3;; esac\n"
                        "exec \"$@\"\n")
    launcher.chmod(0o755)
    flag.touch()
    b = tmp_path / "b"
    configure(PROJECTS / "c", b, split=splitter("real"), extra=[f"-DMTPC_LAUNCHER={launcher}"])
    r = build(b)
    out = r.stdout + r.stderr
    assert "compiling partition" in out and "compiling it unsplit" in out, out
    assert "big 17283" in run([b / "app"]).stdout
    (inner,) = [d for d in b.glob("app.mtpc")]
    seen = len(inner_log(inner))
    build(b)
    assert inner_log(inner)[seen:] == []
    # once the partition compiles again (and changes), the split object is used again
    flag.unlink()
    (moddir,) = [d for d in (inner / "mod").glob("big.c.o-*")]
    (moddir / "parts" / "p1.bc").touch()
    r = run(["ninja", "-C", inner])  # the outer build has no reason to relink
    assert "compiling it unsplit" not in r.stdout + r.stderr
    assert str((moddir / "native.o").relative_to(inner)) in inner_log(inner)[seen:]
    assert (moddir / "p1.o").stat().st_size > 0
    assert "big 17283" in run([b / "app"]).stdout


def test_debug_info_survives_the_split(tmp_path):
    b = tmp_path / "b"
    configure(PROJECTS / "c", b, extra=["-DCMAKE_BUILD_TYPE=RelWithDebInfo"])
    build(b)
    info = run([llvm_tool("llvm-dwarfdump"), "--debug-info", b / "app"]).stdout
    assert re.search(r'DW_AT_name\s+\("[^"]*big\.c"\)', info)
    assert re.search(r'DW_AT_name\s+\("big_entry"\)', info)
    assert "big 17283" in run([b / "app"]).stdout


# The tail of the test projects' CMakeLists.txt: target `app` through MTPC, or plain
# ThinLTO with -DSAMPLE_MTPC=OFF (what configure() sets).
APP_MTPC_OR_THIN = """if(SAMPLE_MTPC)
  find_package(MTPC REQUIRED)
  mtpc_enable(app)
else()
  target_compile_options(app PRIVATE -flto=thin)
  target_link_options(app PRIVATE -flto=thin -fuse-ld=lld)
endif()
"""

WPD_CMAKE = """cmake_minimum_required(VERSION 3.20)
project(wpd CXX)
option(SAMPLE_MTPC "" ON)
set(FLAGS "" CACHE STRING "")
add_executable(app a.cpp b.cpp)
target_compile_options(app PRIVATE ${FLAGS} -fvisibility=hidden)
target_link_options(app PRIVATE ${FLAGS})
""" + APP_MTPC_OR_THIN
WPD_A = """#include <cstdio>
struct Base { virtual int f(int) = 0; virtual ~Base() {} };
struct A final : Base { int f(int x) override { return x * 3 + 1; } };
struct B final : Base { int f(int x) override { return x ^ 0x55; } };
struct Other { virtual int g(int x) { return x; } virtual ~Other() {} };
Base *make(int k) { if (k) return new B; return new A; }
__attribute__((noinline)) int run(Base *b, int n) { int s = 0; for (int i = 0; i < n; i++) s += b->f(i); return s; }
int helper(int);
int main(int argc, char **) {
  Base *a = make(0), *b = make(1);
  printf("%d %d %d\\n", run(a, 1000), run(b, 1000), helper(7));
  fflush(stdout);
  if (argc > 1) /* a call through the wrong type: CFI must stop it */
    printf("%d\\n", run(reinterpret_cast<Base *>(new Other), 1));
  delete a; delete b;
}
"""
WPD_B = """struct Base { virtual int f(int) = 0; virtual ~Base() {} };
struct C final : Base { int f(int x) override { return x + 100; } };
int helper(int x) { Base *c = new C; int r = c->f(x); delete c; return r; }
"""


@pytest.mark.parametrize("flags", ["-fwhole-program-vtables", "-fsanitize=cfi"])
def test_type_metadata_builds(tmp_path, flags):
    """-fwhole-program-vtables and CFI put vtables and type metadata in a second,
    regular-LTO module of each ThinLTO object: the thin link's regular LTO object must
    reach the final link (without it the vtables are undefined, as in any distributed
    ThinLTO build), and the split step must apply the index's devirtualization and
    type-test resolutions (without them the partition compiles of a CFI module crash).
    The split build behaves like plain ThinLTO, CFI trap included."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "CMakeLists.txt").write_text(WPD_CMAKE)
    (src / "a.cpp").write_text(WPD_A)
    (src / "b.cpp").write_text(WPD_B)
    outs, bad = {}, {}
    for mtpc in (False, True):
        b = tmp_path / ("mtpc" if mtpc else "plain")
        configure(src, b, mtpc=mtpc, split=splitter("real") if mtpc else None,
                  extra=[f"-DFLAGS={flags}"])
        r = build(b)
        if mtpc:
            assert "compiling it unsplit" not in r.stdout + r.stderr
        outs[mtpc] = run([b / "app"]).stdout
        bad[mtpc] = run([b / "app", "x"], check=False).returncode
    assert outs[True] == outs[False] == "1499500 501164 107\n"
    if "cfi" in flags:  # without CFI the bad call is undefined behaviour: not compared
        assert bad[True] != 0 and bad[False] != 0, "CFI must stop the bad call"
    inner = tmp_path / "mtpc" / "app.mtpc"
    assert (inner / "regular-lto.o").stat().st_size > 0
    for part in inner.glob("mod/*/parts/p*.bc"):
        ir = run([llvm_tool("llvm-dis"), part, "-o", "-"]).stdout
        assert "@llvm.type.test" not in ir, part
    # a no-op rebuild stays a no-op
    seen = len(inner_log(inner))
    build(tmp_path / "mtpc")
    assert inner_log(inner)[seen:] == []


IFUNC_CRASH_C = """void *resolve_a(void) { return 0; }
int ifunc_a(int) __attribute__((ifunc("resolve_a")));
int (*get_a(void))(int) { return ifunc_a; }
int main(void) { return 0; }
"""


def test_thin_link_crash_runs_the_link_as_is(tmp_path):
    """lld 19 and 22 crash on an index-only thin link of this program (an ifunc with an external
    resolver whose address an unused function takes), which their in-process ThinLTO links
    fine: mtpc-link must not turn that into a failed build. It warns once and runs the
    original link command."""
    (tmp_path / "o.c").write_text(IFUNC_CRASH_C)
    run([CLANG, "-O2", "-flto=thin", "-c", "o.c"], cwd=tmp_path)
    crash = run([CLANG, "-fuse-ld=lld", "-flto=thin", "-Wl,--thinlto-index-only", "o.o",
                 "-o", "idx"], cwd=tmp_path, check=False)
    # split (--threshold 0): the inner build's index-only thin link crashes
    r = run([BUILD / "ninja-gen" / "mtpc-link", "--threshold", "0", "--", CLANG, "-fuse-ld=lld",
             "-flto=thin", "o.o", "-o", "app"], cwd=tmp_path, check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    assert run([tmp_path / "app"]).returncode == 0
    if crash.returncode != 0:
        assert r.stderr.count("linking app without MTPC (its thin link crashed the linker)") == 1, \
            r.stderr
    # nothing to split: the plain ThinLTO link, whose cache key crashes the same linkers
    (tmp_path / "app").unlink()
    r = run([BUILD / "ninja-gen" / "mtpc-link", "--", CLANG, "-fuse-ld=lld", "-flto=thin", "o.o",
             "-o", "app"], cwd=tmp_path, check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    assert run([tmp_path / "app"]).returncode == 0
    assert r.stderr.count("warning") <= 1, r.stderr
