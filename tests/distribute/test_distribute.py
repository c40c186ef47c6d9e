"""mtpc-distribute, MTPC's DTLTO distributor (ninja-gen/distribute/mtpc_distribute.c), with clang/lld >= 21:

    clang -flto=thin -fuse-ld=lld -fthinlto-distributor=mtpc-distribute \
          [-Xthinlto-distributor=--partitions=3 ...] objs -o app

lld does the thin link, writes a JSON job list and runs mtpc-distribute on it. Every link
here is compared with the same link through clang's in-process ThinLTO (no distributor):
same program output, same defined global symbols (same dynamic exports for a .so).
Splitting is forced (--threshold=0 / MTPC_SPLIT_THRESHOLD=0) and big.c has twelve
independent functions, so that its module really gets 2 or 3 partitions."""
import json
import os
import pathlib
import re
import shutil

import pytest

from conftest import LLVM_VERSION, ROOT, llvm_tool, run, tool

if int(LLVM_VERSION) < 21:
    pytest.skip(f"DTLTO needs lld >= 21 (this run uses LLVM {LLVM_VERSION}); these tests run "
                "in the LLVM 22 pass of scripts/test.sh", allow_module_level=True)

SOURCE = ROOT / "ninja-gen" / "distribute" / "mtpc_distribute.c"

# Twelve independent functions (noinline: each stays a unit of its own) and one caller:
# big.c's module is worth several partitions even when tiny. F(n, k): k is what an edit
# changes, without changing what the function calls or its attributes.
BIG_C = r"""
#define F(n, k) __attribute__((noinline)) long f##n(long x) { long s = 0; \
    for (long i = 0; i < x; i++) { s += (i * n) ^ (s >> 3); if (s % k == n % k) s += n; } \
    return s; }
F(1, 7) F(2, 7) F(3, 7) F(4, 7) F(5, 7) F(6, 7) F(7, 7) F(8, 7) F(9, 7) F(10, 7) F(11, 7) F(12, 7)
long big_all(long x) { return f1(x) + f2(x) + f3(x) + f4(x) + f5(x) + f6(x) + f7(x) + f8(x)
                       + f9(x) + f10(x) + f11(x) + f12(x); }
"""
MAIN_C = r"""
#include <stdio.h>
long big_all(long);
long f3(long);
int main(void) { printf("result %ld %ld\n", big_all(1000), f3(77)); return 0; }
"""
SHAPES_CPP = r"""
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>
struct Shape { virtual ~Shape() {} virtual long area() const = 0; virtual std::string name() const = 0; };
struct Sq : Shape { long s; Sq(long s) : s(s) {}
  long area() const override { if (s < 0) throw std::invalid_argument("negative side"); return s * s; }
  std::string name() const override { return "square"; } };
struct Rect : Shape { long w, h; Rect(long w, long h) : w(w), h(h) {}
  long area() const override { return w * h; } std::string name() const override { return "rect"; } };
struct Tri : Shape { long b, h; Tri(long b, long h) : b(b), h(h) {}
  long area() const override { return b * h / 2; } std::string name() const override { return "tri"; } };
std::unique_ptr<Shape> make(int k, long v) {
  switch (k % 3) { case 0: return std::make_unique<Sq>(v); case 1: return std::make_unique<Rect>(v, v + 1);
                   default: return std::make_unique<Tri>(v, v + 2); } }
long total(const std::vector<long>& v) {
  long t = 0;
  for (size_t i = 0; i < v.size(); i++) {
    try { t += make((int)i, v[i])->area(); }
    catch (const std::exception& e) { t -= (long)std::string(e.what()).size(); }
  }
  return t;
}
"""
CPPMAIN_CPP = r"""
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>
struct Shape { virtual ~Shape() {} virtual long area() const = 0; virtual std::string name() const = 0; };
std::unique_ptr<Shape> make(int k, long v);
long total(const std::vector<long>& v);
int main() {
  std::vector<long> v{3, 4, 5, -6, 7, 8};
  std::printf("total %ld\n", total(v));
  auto s = make(0, -1);
  try { s->area(); } catch (const std::invalid_argument& e) { std::printf("caught %s in %s\n", e.what(), s->name().c_str()); }
  return 0;
}
"""
# A program using the shared library's exports (linked without LTO).
USE_SO_C = r"""
#include <stdio.h>
long big_all(long); long f12(long);
int main(void) { printf("so %ld %ld\n", big_all(321), f12(5)); return 0; }
"""

SPLIT = ["--threshold=0", "--partitions=3"]
# The MTPC_* variables mtpc-distribute reads; the tests set the ones they mean.
DIST_VARS = ("MTPC_SPLIT_THRESHOLD", "MTPC_SPLIT_COST", "MTPC_RELAY_COST", "MTPC_MAX_PARTITIONS",
             "MTPC_TYPE_UNITS",
             "MTPC_JOBS", "MTPC_LAUNCHER", "MTPC_SPLIT_ARGS")
SUMMARY = re.compile(r"^mtpc-distribute: (\S+): (\d+) modules?, (\d+) split.*$", re.M)


@pytest.fixture(scope="module")
def dist():
    return tool("mtpc-distribute")


def clang():
    return llvm_tool("clang")


def clangxx():
    return llvm_tool("clang++")


def env(**kw):
    e = {k: v for k, v in os.environ.items() if k not in DIST_VARS}
    e.update(kw)
    return e


def write(path, text, mode=None):
    path = pathlib.Path(path)
    path.write_text(text)
    if mode:
        path.chmod(mode)
    return path


def cc(d, src, obj=None, flags=(), cxx=False):
    """Compile d/src to bitcode (-flto=thin -O2); returns the object's path."""
    d = pathlib.Path(d)
    obj = d / (obj or (pathlib.Path(src).stem + ".o"))
    run([clangxx() if cxx else clang(), "-flto=thin", "-O2", *flags, "-c", d / src, "-o", obj])
    return obj


def dist_flags(dist_path, opts=()):
    return ["-fuse-ld=lld", f"-fthinlto-distributor={dist_path}",
            *[f"-Xthinlto-distributor={o}" for o in opts]]


def link(dist_path, objs, out, opts=SPLIT, flags=(), cxx=False, check=True, cwd=None, **envkw):
    """The link through mtpc-distribute (dist_path None: in-process ThinLTO)."""
    cmd = [clangxx() if cxx else clang(), "-flto=thin", "-fuse-ld=lld", *flags]
    if dist_path:
        cmd += dist_flags(dist_path, opts)
    return run(cmd + [*objs, "-o", out], check=check, cwd=cwd, env=env(**envkw))


def summary(stderr):
    """The one summary line of a link (asserts there is exactly one)."""
    lines = SUMMARY.findall(stderr)
    assert len(lines) == 1, f"expected one summary line:\n{stderr}"
    return SUMMARY.search(stderr).group(0)


def partitions(line, module):
    """N of '<module>: N partitions' in a summary line, or None."""
    m = re.search(re.escape(module) + r": (\d+) partitions?\b", line)
    return int(m.group(1)) if m else None


def output(exe, **envkw):
    return run([exe], env=env(**envkw)).stdout


def globals_defined(path):
    out = run([llvm_tool("llvm-nm"), "--extern-only", "--defined-only", path]).stdout
    return sorted(" ".join(l.split()[1:]) for l in out.splitlines() if l.strip())


def exports(path):
    out = run([llvm_tool("llvm-nm"), "-D", "--defined-only", path]).stdout
    return sorted(" ".join(l.split()[1:]) for l in out.splitlines() if l.strip())


def elf_type(path):
    return int.from_bytes(pathlib.Path(path).read_bytes()[16:18], "little")


def assert_same_program(app, ref):
    assert output(app) == output(ref)
    assert globals_defined(app) == globals_defined(ref)


def module_dir(inner, name):
    """<inner>/mod/<name>-<hash>: the inner build's directory of one module."""
    found = [p for p in (pathlib.Path(inner) / "mod").iterdir()
             if p.name.rsplit("-", 1)[0] == name]
    assert len(found) == 1, (name, list((pathlib.Path(inner) / "mod").iterdir()))
    return found[0]


def ninja_log(inner):
    """Output paths of the inner .ninja_log's entries, in order."""
    lines = (pathlib.Path(inner) / ".ninja_log").read_text().splitlines()
    return [l.split("\t")[3] for l in lines if not l.startswith("#")]


@pytest.fixture(scope="module")
def cprog(tmp_path_factory):
    """big.c + main.c compiled once; the in-process ThinLTO link as reference."""
    d = tmp_path_factory.mktemp("cprog")
    write(d / "big.c", BIG_C)
    write(d / "main.c", MAIN_C)
    objs = [cc(d, "big.c"), cc(d, "main.c")]
    link(None, objs, d / "ref")
    return d, objs, d / "ref"


# ---- 1. the plain command line ----

def test_plain_link_splits_and_matches_in_process(dist, cprog, tmp_path):
    d, objs, ref = cprog
    r = link(dist, objs, tmp_path / "app")
    line = summary(r.stderr)
    assert line.startswith("mtpc-distribute: app: 2 modules, 2 split ("), line
    assert partitions(line, "big.o") == 3, line
    assert partitions(line, "main.o") == 1, line
    assert "split by size: more than 0 bitcode bytes" in line, line
    # The stderr is the summary alone: quiet inner build, no warnings.
    assert r.stderr.strip() == line, r.stderr
    big = module_dir(tmp_path / "app.mtpc", "big.o")
    assert (big / "split.n").read_text().split()[0] == "3"
    assert sorted(p.name for p in big.glob("p*.o")) == ["p0.o", "p1.o", "p2.o"]
    assert_same_program(tmp_path / "app", ref)


def test_help_documents_every_option(dist):
    r = run([dist, "--help"])
    assert r.returncode == 0
    assert r.stdout.startswith("usage: mtpc-distribute"), r.stdout
    # Its own options (distribute.c's longopts[]) and those it shares with mtpc-link
    # (INNER_LONGOPTS in inner.h).
    table = SOURCE.read_text().split("longopts[] = {", 1)[1].split("};", 1)[0]
    shared = (SOURCE.parent.parent / "launcher" / "inner.h").read_text().split("#define INNER_LONGOPTS", 1)[1]
    shared = shared.split("\n\n", 1)[0]
    assert "INNER_LONGOPTS" in table
    names = re.findall(r'\{"([a-z][a-z-]*)",\s*(?:required|no)_argument', table + shared)
    assert len(names) >= 15, names
    # mtpc-compile's own, which mtpc-distribute refuses
    names = [n for n in names if n != "merge-dwo"]
    missing = [n for n in names if not re.search(rf"(^|\s)--{re.escape(n)}\b", r.stdout, re.M)]
    assert not missing, f"--help does not document {missing}:\n{r.stdout}"
    for var in DIST_VARS + ("MTPC_CACHE",):
        assert var in r.stdout, var


# ---- 2. a Makefile project ----

MAKEFILE = """\
CC = {cc}
CFLAGS = -O2 -flto=thin
LDFLAGS = -fuse-ld=lld
DIST = -fthinlto-distributor={dist} -Xthinlto-distributor=--threshold=0 \\
       -Xthinlto-distributor=--partitions=2

all: app app_ref

app: big.o main.o
\t$(CC) $(CFLAGS) $(LDFLAGS) $(DIST) $^ -o $@

app_ref: big.o main.o
\t$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@
"""


def test_makefile_project(dist, tmp_path):
    write(tmp_path / "big.c", BIG_C)
    write(tmp_path / "main.c", MAIN_C)
    write(tmp_path / "Makefile", MAKEFILE.format(cc=clang(), dist=dist))
    r = run(["make", "-C", tmp_path], env=env())
    line = summary(r.stderr)
    assert partitions(line, "big.o") == 2, line
    assert_same_program(tmp_path / "app", tmp_path / "app_ref")


# ---- 3. a CMake project that knows nothing of MTPC ----

CMAKELISTS = """\
cmake_minimum_required(VERSION 3.16)
project(plain C)
add_executable(app big.c main.c)
"""


@pytest.mark.parametrize("generator", ["Unix Makefiles", "Ninja"])
def test_cmake_project_without_mtpc_module(dist, cprog, tmp_path, generator):
    src, b = tmp_path / "src", tmp_path / "b"
    src.mkdir()
    write(src / "big.c", BIG_C)
    write(src / "main.c", MAIN_C)
    write(src / "CMakeLists.txt", CMAKELISTS)
    run(["cmake", "-S", src, "-B", b, "-G", generator, f"-DCMAKE_C_COMPILER={clang()}",
         "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_C_FLAGS=-flto=thin",
         f"-DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld -fthinlto-distributor={dist}"], env=env())
    # Nothing but the environment asks for splitting.
    r = run(["cmake", "--build", b], env=env(MTPC_SPLIT_THRESHOLD="0", MTPC_MAX_PARTITIONS="2"))
    line = summary(r.stdout + r.stderr)
    assert partitions(line, "big.c.o") == 2, line
    assert (module_dir(b / "app.mtpc", "big.c.o") / "split.n").read_text().split()[0] == "2"
    # The reference: CMake's objects through in-process ThinLTO.
    objs = sorted(b.glob("CMakeFiles/app.dir/*.c.o"))
    assert len(objs) == 2, objs
    link(None, objs, tmp_path / "ref")
    assert_same_program(b / "app", tmp_path / "ref")
    assert output(b / "app") == output(cprog[2])


# ---- 4. archives, -shared, -pie / -no-pie, C++, debug info ----

@pytest.mark.parametrize("kind", ["regular", "thin"])
def test_archive_of_bitcode(dist, cprog, tmp_path, kind):
    d, (big, main), ref = cprog
    lib = tmp_path / "libbig.a"
    shutil.copy(big, tmp_path / "big.o")
    run([llvm_tool("llvm-ar"), "rcsT" if kind == "thin" else "rcs", lib, tmp_path / "big.o"])
    r = link(dist, [main, lib], tmp_path / "app")
    line = summary(r.stderr)
    # A regular archive's member is named as lld names it (without its per-link suffix),
    # a thin archive's member is its own file.
    member = "libbig.a(big.o at " if kind == "regular" else "big.o"
    assert re.search(re.escape(member) + r"\d*\)?: 3 partitions", line), line
    link(None, [main, lib], tmp_path / "ref")
    assert_same_program(tmp_path / "app", tmp_path / "ref")
    assert output(tmp_path / "app") == output(ref)


def test_archive_relink_without_changes_compiles_nothing(dist, cprog, tmp_path):
    """lld hands a regular archive's members to the jobs as "libbig.a(big.o at N).<task>.<pid>.o",
    a new name at every link, and that name is in the index shards (docs/dtlto.md, Limits): an
    unchanged relink re-runs the split of the member and of its importers and the member's
    merge, but their partitions come out the same, so no slot and no backend compiles again."""
    d, (big, main), ref = cprog
    lib = tmp_path / "libbig.a"
    run([llvm_tool("llvm-ar"), "rcs", lib, big])
    link(dist, [main, lib], tmp_path / "app")
    before = ninja_log(tmp_path / "app.mtpc")
    link(dist, [main, lib], tmp_path / "app")
    new = ninja_log(tmp_path / "app.mtpc")[len(before):]
    assert not [p for p in new if re.search(r"/(p\d+|backend)\.o$", p)], new
    assert all(re.search(r"/(split\.dd|split\.n|checksums\.txt|lines\.txt|native\.o)$", p) for p in new), new
    assert output(tmp_path / "app") == output(ref)


def test_shared_library_exports(dist, tmp_path):
    write(tmp_path / "big.c", BIG_C)
    write(tmp_path / "use.c", USE_SO_C)
    obj = cc(tmp_path, "big.c", flags=["-fPIC"])
    r = link(dist, [obj], tmp_path / "libbig.so", flags=["-shared"])
    assert partitions(summary(r.stderr), "big.o") == 3
    link(None, [obj], tmp_path / "libref.so", flags=["-shared"])
    assert exports(tmp_path / "libbig.so") == exports(tmp_path / "libref.so")
    assert "T big_all" in exports(tmp_path / "libbig.so")
    outs = []
    for lib in ("libbig.so", "libref.so"):
        exe = tmp_path / f"use-{lib}"
        run([clang(), "-fuse-ld=lld", tmp_path / "use.c", tmp_path / lib,
             f"-Wl,-rpath,{tmp_path}", "-o", exe])
        outs.append(output(exe))
    assert outs[0] == outs[1] and outs[0].startswith("so ")


@pytest.mark.parametrize("pie", ["-pie", "-no-pie"])
def test_pie_and_no_pie(dist, tmp_path, pie):
    write(tmp_path / "big.c", BIG_C)
    write(tmp_path / "main.c", MAIN_C)
    pic = ["-fPIE"] if pie == "-pie" else ["-fno-pic"]
    objs = [cc(tmp_path, "big.c", flags=pic), cc(tmp_path, "main.c", flags=pic)]
    r = link(dist, objs, tmp_path / "app", flags=[pie])
    assert partitions(summary(r.stderr), "big.o") == 3
    link(None, objs, tmp_path / "ref", flags=[pie])
    assert elf_type(tmp_path / "app") == elf_type(tmp_path / "ref") == (3 if pie == "-pie" else 2)
    # The partitions are compiled with the relocation model lld asked for.
    ninja = (tmp_path / "app.mtpc" / "build.ninja").read_text()
    assert f"--reloc {'pic' if pie == '-pie' else 'static'}" in ninja
    assert_same_program(tmp_path / "app", tmp_path / "ref")


def test_cxx_exceptions_and_vtables(dist, tmp_path):
    write(tmp_path / "shapes.cpp", SHAPES_CPP)
    write(tmp_path / "main.cpp", CPPMAIN_CPP)
    objs = [cc(tmp_path, "shapes.cpp", cxx=True), cc(tmp_path, "main.cpp", cxx=True)]
    r = link(dist, objs, tmp_path / "app", cxx=True)
    assert partitions(summary(r.stderr), "shapes.o") in (2, 3), r.stderr
    link(None, objs, tmp_path / "ref", cxx=True)
    assert "caught negative side in square" in output(tmp_path / "app")
    assert_same_program(tmp_path / "app", tmp_path / "ref")


def test_debug_info(dist, tmp_path):
    write(tmp_path / "big.c", BIG_C)
    write(tmp_path / "main.c", MAIN_C)
    objs = [cc(tmp_path, "big.c", flags=["-g"]), cc(tmp_path, "main.c", flags=["-g"])]
    r = link(dist, objs, tmp_path / "app", flags=["-g"])
    assert partitions(summary(r.stderr), "big.o") == 3
    dd = llvm_tool("llvm-dwarfdump")
    v = run([dd, "--verify", tmp_path / "app"])
    assert "No errors." in v.stdout, v.stdout
    info = run([dd, "--debug-info", tmp_path / "app"]).stdout
    names = set(re.findall(r'DW_AT_name\s+\("([^"]+)"\)', info))
    # Every function of the split module, whichever partition compiled it.
    assert {f"f{i}" for i in range(1, 13)} | {"big_all", "main"} <= names
    link(None, objs, tmp_path / "ref", flags=["-g"])
    assert_same_program(tmp_path / "app", tmp_path / "ref")


def test_split_dwarf_link(dist, tmp_path):
    """-gsplit-dwarf at the link: in-process ThinLTO writes <out>-dwo/<n>.dwo and skeleton
    units (clang passes -plugin-opt=dwo_dir=<out>-dwo). lld 22's DTLTO ignores dwo_dir: the
    job list carries no split-DWARF option, so the backends (and mtpc-distribute's slots)
    emit full DWARF into the objects and the executable has ordinary compile units, no
    .dwo file anywhere (observed with clang/lld 22). The link must still succeed and the
    program behave the same."""
    write(tmp_path / "big.c", BIG_C)
    write(tmp_path / "main.c", MAIN_C)
    g = ["-g", "-gsplit-dwarf"]
    objs = [cc(tmp_path, "big.c", flags=g), cc(tmp_path, "main.c", flags=g)]
    r = link(dist, objs, tmp_path / "app", flags=g)
    assert partitions(summary(r.stderr), "big.o") == 3
    link(None, objs, tmp_path / "ref", flags=g)
    assert_same_program(tmp_path / "app", tmp_path / "ref")
    v = run([llvm_tool("llvm-dwarfdump"), "--verify", tmp_path / "app"])
    assert "No errors." in v.stdout, v.stdout


# ---- 5. lld's ThinLTO cache ----

def test_thinlto_cache_skips_the_distributor(dist, cprog, tmp_path):
    d, objs, ref = cprog
    calls = tmp_path / "calls"
    wrapper = write(tmp_path / "dist.sh",
                    f'#!/bin/sh\necho "$@" >> "{calls}"\nexec "{dist}" "$@"\n', 0o755)
    cache = ["-Wl,--thinlto-cache-dir=" + str(tmp_path / "ltocache")]
    r1 = link(wrapper, objs, tmp_path / "app", flags=cache)
    assert partitions(summary(r1.stderr), "big.o") == 3
    assert len(calls.read_text().splitlines()) == 1
    assert output(tmp_path / "app") == output(ref)
    (tmp_path / "app").unlink()
    r2 = link(wrapper, objs, tmp_path / "app", flags=cache)
    # Warm cache: lld takes every object from its cache, no job list, no distributor.
    assert len(calls.read_text().splitlines()) == 1, calls.read_text()
    assert not SUMMARY.search(r2.stderr), r2.stderr
    assert_same_program(tmp_path / "app", ref)


# ---- 6. incremental links ----

def test_incremental_relink(dist, tmp_path):
    write(tmp_path / "big.c", BIG_C)
    write(tmp_path / "main.c", MAIN_C)
    objs = [cc(tmp_path, "big.c"), cc(tmp_path, "main.c")]
    inner = tmp_path / "app.mtpc"
    line = summary(link(dist, objs, tmp_path / "app").stderr)
    assert partitions(line, "big.o") == 3, line
    first = ninja_log(inner)
    big = module_dir(inner, "big.o")
    slots = [str(big / f"p{i}.o") for i in range(3)]
    assert set(slots) <= set(first)

    # Unchanged: the summary again (same split), not one inner edge run.
    line = summary(link(dist, objs, tmp_path / "app").stderr)
    assert partitions(line, "big.o") == 3, line
    second = ninja_log(inner)
    assert second == first, f"an unchanged relink ran: {second[len(first):]}"
    link(None, objs, tmp_path / "ref")
    assert_same_program(tmp_path / "app", tmp_path / "ref")

    # One function of the split module edited: some slots again, not all.
    write(tmp_path / "big.c", BIG_C.replace("F(7, 7)", "F(7, 5)"))
    cc(tmp_path, "big.c")
    line = summary(link(dist, objs, tmp_path / "app").stderr)
    assert partitions(line, "big.o") == 3, line
    new = ninja_log(inner)[len(second):]
    rerun = [p for p in new if p in slots]
    assert 1 <= len(rerun) < 3, new
    link(None, objs, tmp_path / "ref")
    assert_same_program(tmp_path / "app", tmp_path / "ref")


# ---- 7. the environment and the options ----

def test_max_partitions_1_disables_splitting(dist, cprog, tmp_path):
    d, objs, ref = cprog
    r = link(dist, objs, tmp_path / "app", opts=["--threshold=0"], MTPC_MAX_PARTITIONS="1")
    line = summary(r.stderr)
    assert ", 0 split," in line and "splitting off" in line, line
    assert_same_program(tmp_path / "app", ref)


def test_env_and_option_precedence(dist, cprog, tmp_path):
    d, objs, ref = cprog
    r = link(dist, objs, tmp_path / "env", opts=[], MTPC_SPLIT_THRESHOLD="0",
             MTPC_MAX_PARTITIONS="2")
    assert partitions(summary(r.stderr), "big.o") == 2, r.stderr
    r = link(dist, objs, tmp_path / "opt", opts=["--partitions=3"], MTPC_SPLIT_THRESHOLD="0",
             MTPC_MAX_PARTITIONS="2")
    assert partitions(summary(r.stderr), "big.o") == 3, r.stderr
    assert_same_program(tmp_path / "opt", ref)
    assert_same_program(tmp_path / "env", ref)


@pytest.mark.parametrize("how", ["env", "option"])
def test_bad_jobs_value_fails_the_link(dist, cprog, tmp_path, how):
    d, objs, ref = cprog
    name = "MTPC_JOBS" if how == "env" else "--jobs"
    kw = {"MTPC_JOBS": "abc"} if how == "env" else {}
    opts = SPLIT + (["--jobs=abc"] if how == "option" else [])
    r = link(dist, objs, tmp_path / "app", opts=opts, check=False, **kw)
    assert r.returncode != 0
    assert re.search(rf"mtpc-distribute: error: {name}\b.*'abc'", r.stderr), r.stderr
    assert "distributor execution failed" in r.stderr, r.stderr
    assert not (tmp_path / "app").exists()
    # mtpc-distribute itself: exit status 2 for a bad option, before reading the list.
    json_path = write(tmp_path / "jobs.json", "{}")
    direct = run([dist, *(["--jobs=abc"] if how == "option" else []), json_path],
                 check=False, env=env(**kw))
    assert direct.returncode == 2, direct
    assert name in direct.stderr


# ---- 8. errors on a job list given by hand ----

CAPTURE = """#!/usr/bin/python3
# Copies lld's job list and the files it names (lld deletes them after the link), then
# runs the real distributor.
import json, os, shutil, sys
cap, js = {cap!r}, sys.argv[-1]
os.makedirs(cap, exist_ok=True)
for job in json.load(open(js))["jobs"]:
    for f in job["inputs"]:
        shutil.copy(f, os.path.join(cap, os.path.basename(f)))
shutil.copy(js, os.path.join(cap, "jobs.json"))
os.execv({dist!r}, [{dist!r}] + sys.argv[1:])
"""


@pytest.fixture(scope="module")
def captured(dist, tmp_path_factory):
    """A real job list of big.o + main.o and the files it names, all in one directory."""
    d = tmp_path_factory.mktemp("captured")
    write(d / "big.c", BIG_C)
    write(d / "main.c", MAIN_C)
    cc(d, "big.c")
    cc(d, "main.c")
    cap = d / "cap"
    script = write(d / "capture.py", CAPTURE.format(cap=str(cap), dist=dist), 0o755)
    link(script, ["big.o", "main.o"], "app", opts=[], cwd=d)
    jobs = json.loads((cap / "jobs.json").read_text())
    assert len(jobs["jobs"]) == 2, jobs
    for f in ("big.o", "main.o"):
        shutil.copy(d / f, cap / f)
    return cap


def job_list(captured, tmp_path, edit=None, name="jobs.json"):
    """A copy of the captured files in tmp_path/w, the job list edited by edit(jobs)."""
    w = tmp_path / "w"
    if not w.exists():
        shutil.copytree(captured, w)
    jobs = json.loads((captured / "jobs.json").read_text())
    if edit:
        edit(jobs)
    (w / name).write_text(json.dumps(jobs, indent=1))
    return w, jobs


def set_output(job, path):
    job["outputs"][0] = path
    job["args"][job["args"].index("-o") + 1] = path


def set_module(job, path):
    job["args"][0] = job["inputs"][0] = path


def outputs(jobs):
    return [o for j in jobs["jobs"] for o in j["outputs"]]


def mtpc_lines(stderr, kind):
    return [l for l in stderr.splitlines() if l.startswith(f"mtpc-distribute: {kind}:")]


def test_captured_job_list_runs_by_hand(dist, captured, tmp_path):
    w, jobs = job_list(captured, tmp_path)
    r = run([dist, *SPLIT, "jobs.json"], cwd=w, env=env())
    assert partitions(summary(r.stderr), "big.o") == 3, r.stderr
    for o in outputs(jobs):
        assert (w / o).stat().st_size > 0


def test_invalid_json_names_file_and_line(dist, captured, tmp_path):
    w, _ = job_list(captured, tmp_path)
    write(w / "bad.json", '{\n "common": {\n  "args": ["clang"],\n }\n}\n')
    r = run([dist, "bad.json"], cwd=w, check=False, env=env())
    assert r.returncode == 1, r
    errs = mtpc_lines(r.stderr, "error")
    assert len(errs) == 1 and errs[0].startswith("mtpc-distribute: error: bad.json:4: "), r.stderr
    # Valid JSON, not a job list: the member named.
    _, jobs = job_list(captured, tmp_path, lambda j: j["jobs"][1].pop("outputs"), "shape.json")
    r = run([dist, "shape.json"], cwd=w, check=False, env=env())
    assert r.returncode == 1, r
    errs = mtpc_lines(r.stderr, "error")
    assert len(errs) == 1 and "shape.json: jobs[1].outputs" in errs[0], r.stderr
    assert not list(w.glob("*.mtpc")), "nothing may run"
    assert not [o for j in jobs["jobs"] for o in j.get("outputs", []) if (w / o).exists()]


def test_missing_input_runs_nothing(dist, captured, tmp_path):
    w, jobs = job_list(captured, tmp_path, lambda j: set_module(j["jobs"][1], "nosuch.o"))
    r = run([dist, *SPLIT, "jobs.json"], cwd=w, check=False, env=env())
    assert r.returncode == 1, r
    errs = mtpc_lines(r.stderr, "error")
    assert len(errs) == 1 and "nosuch.o" in errs[0] and "jobs.json" in errs[0], r.stderr
    assert not list(w.glob("*.mtpc")), "nothing may run"
    assert not [o for o in outputs(jobs) if (w / o).exists()]


@pytest.mark.parametrize("blocker", ["parent is a file", "mode 555"])
def test_unwritable_output_directory_runs_nothing(dist, captured, tmp_path, blocker):
    if blocker == "mode 555" and os.geteuid() == 0:
        pytest.skip("root writes into a mode 555 directory (the 'parent is a file' case "
                    "covers an unwritable output directory when running as root)")
    blocked = "blocked" if blocker == "parent is a file" else "blocked/sub"
    w, jobs = job_list(captured, tmp_path,
                       lambda j: set_output(j["jobs"][1], f"{blocked}/out.native.o"))
    if blocker == "parent is a file":
        write(w / "blocked", "a file, not a directory\n")
    else:
        (w / "blocked/sub").mkdir(parents=True)
        (w / "blocked/sub").chmod(0o555)
    r = run([dist, *SPLIT, "jobs.json"], cwd=w, check=False, env=env())
    assert r.returncode == 1, r
    errs = mtpc_lines(r.stderr, "error")
    assert len(errs) == 1 and f"{blocked}/out.native.o" in errs[0], r.stderr
    assert "jobs.json" in errs[0], errs
    assert not SUMMARY.search(r.stderr)
    assert not list(w.glob("*.mtpc")), "nothing may run before the outputs are checked"
    assert not [o for o in outputs(jobs) if (w / o).exists()]


# Partition compiles (and only they) wait, so that when the other module's backend fails,
# the split module is still being compiled, deterministically.
SLOW_SLOTS = '#!/bin/sh\ncase "$*" in */parts/p*.bc*) sleep 1 ;; esac\nexec "$@"\n'


@pytest.mark.parametrize("fault", ["corrupt module", "bad flag"])
def test_failing_backend_names_the_module(dist, captured, tmp_path, fault):
    def edit(jobs):
        if fault == "bad flag":
            jobs["common"]["args"].append("-fno-such-flag")
        else:
            main = next(j for j in jobs["jobs"] if j["inputs"][0] == "main.o")
            set_module(main, "maincopy.o")
    w, jobs = job_list(captured, tmp_path, edit)
    (w / "maincopy.o").write_bytes((w / "main.o").read_bytes()[:1500])
    slow = write(tmp_path / "slow.sh", SLOW_SLOTS, 0o755)
    r = run([dist, *SPLIT, "--jobs=2", f"--launcher={slow}", "jobs.json"], cwd=w,
            check=False, env=env())
    assert r.returncode == 1, r
    errs = mtpc_lines(r.stderr, "error")
    assert len(errs) == 1, r.stderr
    if fault == "bad flag":
        # Every compile fails: both modules are named.
        assert "big.o" in errs[0] and "main.o" in errs[0], errs
    else:
        # Only maincopy.o (a truncated copy of main.o) fails; big.o compiles fine.
        assert re.search(r"the backend of maincopy\.o failed", errs[0]), errs
        assert "big.o" not in errs[0], f"names a module that did not fail: {errs[0]}"
    assert not SUMMARY.search(r.stderr)
    # No object, whole or half-written, where lld would look.
    left = [o for o in outputs(jobs) if (w / o).exists() or (w / (o + ".mtpc-tmp")).exists()]
    assert not left, left


# ---- 9. a module the splitter cannot handle ----

def failing_splitter(tmp_path):
    real = tool("mtpc-split")
    return write(tmp_path / "split.sh",
                 '#!/bin/sh\ncase "$*" in *big.o*) echo "split.sh: cannot split $1" >&2; '
                 f'exit 1 ;; esac\nexec "{real}" "$@"\n', 0o755)


@pytest.mark.parametrize("how", ["split-tool", "MTPC_SPLIT_ARGS"])
def test_split_failure_falls_back_with_one_warning(dist, cprog, tmp_path, how):
    d, objs, ref = cprog
    if how == "split-tool":
        # Fails on big.o only (main.o is split by the real mtpc-split).
        opts, kw = SPLIT + [f"--split-tool={failing_splitter(tmp_path)}"], {}
    else:
        # An option mtpc-split rejects; only big.o is over the threshold.
        opts = [f"--threshold={objs[1].stat().st_size}", "--partitions=3"]
        kw = {"MTPC_SPLIT_ARGS": "--no-such-split-option"}
    r = link(dist, objs, tmp_path / "app", opts=opts, **kw)
    warns = mtpc_lines(r.stderr, "warning")
    assert len(warns) == 1, r.stderr
    assert re.search(r"splitting \S*big\.o failed .*compiling it unsplit", warns[0]), warns
    line = summary(r.stderr)
    assert "big.o: unsplit (fallback)" in line, line
    assert (module_dir(tmp_path / "app.mtpc", "big.o") / "split.n").read_text().split()[0] == "0"
    assert_same_program(tmp_path / "app", ref)


def test_remote_compiler_and_its_prepend_args(dist, cprog, tmp_path):
    """lld writes [remote compiler, prepend args..., -c, options...] in common.args: the
    prepend args must stay right after the compiler in every backend and slot compile (here
    a wrapper as the remote compiler and clang as its first argument)."""
    d, (big, main), ref = cprog
    log = tmp_path / "wrapped.log"
    wrapper = tmp_path / "cc-wrapper.sh"
    write(wrapper, f'#!/bin/sh\necho "$1" >> {log}\nexec "$@"\n', mode=0o755)
    r = link(dist, [main, big], tmp_path / "app",
             flags=[f"-Wl,--thinlto-remote-compiler={wrapper}",
                    f"-Wl,--thinlto-remote-compiler-prepend-arg={clang()}"])
    assert partitions(summary(r.stderr), "big.o") == 3
    lines = log.read_text().splitlines()
    assert len(lines) >= 4 and set(lines) == {clang()}, lines  # 3 slots + main's backend
    assert output(tmp_path / "app") == output(ref)


@pytest.mark.parametrize("case", ["split link", "bad json"])
def test_sanitized_distribute(asan_build_dir, cprog, tmp_path, case):
    """mtpc-distribute built with AddressSanitizer and UndefinedBehaviorSanitizer (leaks
    included): a split link and an error path run clean (a report makes the tool exit
    non-zero, which fails the link or changes the exit status)."""
    san = tool("mtpc-distribute", asan_build_dir)
    envkw = {"ASAN_OPTIONS": "detect_leaks=1:abort_on_error=0:exitcode=99",
             "UBSAN_OPTIONS": "halt_on_error=1:exitcode=98"}
    if case == "bad json":
        bad = tmp_path / "bad.json"
        write(bad, '{"common": {"args": ["clang"]}, "jobs": [{"args": 1}]}\n')
        r = run([san, bad], check=False, env=env(**envkw))
        assert r.returncode == 1 and "jobs[0].args" in r.stderr, r.stderr
        return
    d, (big, main), ref = cprog
    r = link(san, [main, big], tmp_path / "app", **envkw)
    assert partitions(summary(r.stderr), "big.o") == 3
    assert output(tmp_path / "app") == output(ref)
