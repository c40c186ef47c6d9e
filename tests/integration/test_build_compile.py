"""mtpc-compile (issue: split the compile step): a costly ThinLTO compile runs LLVM's pre-link
pipeline in partitions and joins them into one ThinLTO object; every other compile runs
exactly as given.

* meaning: every C and C++ hazard fixture (tests/hazards/, with its main and peers) compiled
  through mtpc-compile with every compile split (--cost-threshold 0, 4 partitions) behaves
  like the plain ThinLTO build and exports the same symbols, linked plainly, through
  mtpc-link and (Clang >= 21) through lld's DTLTO with mtpc-distribute, under the flag sets that can be split (progdiff.FLAG_SETS); those that cannot
  (CFI, -fwhole-program-vtables, -fsplit-lto-unit, profiles, pipeline sanitizers) compile as
  given, byte for byte;
* exactness: a compile that is not split writes the bytes the plain compile writes;
* determinism: the same compile in two directories writes byte-identical objects;
* failures: a failing split or join falls back to the plain compile with one warning; a
  compiler error is the compile's own (no fallback, no warning);
* the depfile names the real output; an edit of one function recompiles only its partition;
* concurrent split compiles stay within the machine's job budget;
* CMake: mtpc_enable() sets mtpc-compile as the compiler launcher (MTPC_SPLIT_COMPILE)."""
import filecmp
import os
import pathlib
import re
import subprocess

import pytest

import progdiff as pd
import splitlib as sl
from conftest import BUILD, LLVM_VERSION, llvm_tool, run, thinned, tool
from test_build_jobs import max_concurrency

FIXTURES = [fx for fx in sl.all_fixtures() if fx.path.suffix != ".ll"]
# The fixtures the other flag sets run on: the C++ ones, address identity, TLS, debug info.
FLAGGED = [fx for fx in FIXTURES if fx.name in
           ("cxx_eh_rtti", "comdats", "linkonce_odr", "tls", "alias_identity", "aliases_ifuncs",
            "debuginfo", "promoted_internals")]
# With Clang >= 21 also through lld's DTLTO and mtpc-distribute: both halves split there too.
MODES = ("plain", "link") + (("distribute",) if int(LLVM_VERSION) >= 21 else ())
CASES = (thinned([("none", fx, mode) for mode in MODES for fx in FIXTURES], len(FIXTURES))
         + thinned([(fs, fx, "plain") for fs in ("hidden", "gz", "pic-shared", "gc-sections")
                    for fx in FLAGGED], len(FLAGGED)))


def program_of(fx):
    split = [(src, sl.lang_flags(src)) for src in fx.modules]
    main = [(fx.main, sl.lang_flags(fx.main))] if fx.main else []
    return pd.Program(split, main, cxx=fx.is_cxx, cflags=fx.cflags, ldflags=fx.ldflags,
                      shared=fx.shared)


def declines(fx):
    """Why mtpc-compile does not split the fixture's modules, or None: a sanitizer that
    instruments in LLVM's pipeline, or ifuncs (the thin link crashes on some summaries of
    split ifunc users)."""
    if any(f.startswith("-fsanitize=address") for f in fx.cflags):
        return "sanitizer"
    if any("ifunc" in m.read_text() for m in fx.modules):
        return "ifunc"
    return None


@pytest.mark.parametrize("flagset,fx,mode", CASES,
                         ids=[f"{fs}-{fx.name}-{mode}" for fs, fx, mode in CASES])
def test_split_compile_means_the_same(flagset, fx, mode, tmp_path):
    why = declines(fx)
    try:
        counts = pd.compare(program_of(fx), flagset, tmp_path, mode, split_compile=True)
    except pd.Skip as e:
        pytest.skip(str(e))
    except pd.Fail as e:
        if why == "ifunc" and "defines ifuncs" in str(e) and "compiling it unsplit" in str(e):
            return  # declined with one warning, as it must
        pytest.fail(str(e), pytrace=False)
    compiled = counts[:len(fx.modules)]
    if why:
        assert why == "sanitizer" and max(compiled) == 0, f"{why}: split anyway: {compiled}"
        return
    assert max(compiled) >= min(2, fx.min_parts), \
        f"mtpc-compile split no module in {min(2, fx.min_parts)} or more: {compiled}"


def compile_cmd(src, obj, *flags):
    driver = llvm_tool("clang++" if src.suffix == ".cpp" else "clang")
    return [driver, "-O2", *flags, "-c", src, "-o", obj]


def mtpc_compile(tmp_path, cmd, *opts, check=True, env=None, cwd=None):
    return run([tool("mtpc-compile"), "--cache", tmp_path / "plans.sqlite", "--partitions", "4",
                "--jobs", "2", *opts, "--", *cmd], check=check, env=env, cwd=cwd)


def big_source(path, funcs=24, changed=-1):
    """A C program of `funcs` independent functions (function `changed` edited)."""
    body = "".join(f"int f{i}(int x) {{ int s = 0; for (int k = 0; k < x; k++) "
                   f"s += (k * {i + 3 + (i == changed)}) ^ (s >> 2); return s + {i}; }}\n"
                   for i in range(funcs))
    calls = " + ".join(f"f{i}(argc + {i})" for i in range(funcs))
    path.write_text(f"#include <stdio.h>\n{body}int main(int argc, char **argv) "
                    f"{{ (void)argv; printf(\"%d\\n\", {calls}); return 0; }}\n")
    return path


UNSPLIT = [
    ("below the cost threshold", [], ()),
    ("full LTO", ["-flto"], ("--cost-threshold", "0")),
    ("CFI", ["-flto=thin", "-fsanitize=cfi", "-fvisibility=hidden"], ("--cost-threshold", "0")),
    ("WPD", ["-flto=thin", "-fwhole-program-vtables"], ("--cost-threshold", "0")),
    ("split LTO unit", ["-flto=thin", "-fsplit-lto-unit"], ("--cost-threshold", "0")),
    ("IR instrumentation", ["-flto=thin", "-fprofile-generate"], ("--cost-threshold", "0")),
    ("ASan", ["-flto=thin", "-fsanitize=address"], ("--cost-threshold", "0")),
    ("assembly", ["-flto=thin", "-S"], ("--cost-threshold", "0")),
    ("one partition", ["-flto=thin"], ("--cost-threshold", "0", "--partitions", "1")),
]


@pytest.mark.parametrize("why,flags,opts", UNSPLIT, ids=[u[0] for u in UNSPLIT])
def test_unsplit_compiles_are_exact(why, flags, opts, tmp_path):
    src = big_source(tmp_path / "big.c")
    if why == "below the cost threshold":
        flags = ["-flto=thin"]
    plain, mc = tmp_path / "plain.o", tmp_path / "mc.o"
    ref = run(compile_cmd(src, plain, *flags))
    r = mtpc_compile(tmp_path, compile_cmd(src, mc, *flags), *opts)
    assert filecmp.cmp(plain, mc, shallow=False), f"{why}: not the plain compile's bytes"
    assert not pathlib.Path(f"{mc}.mtpc").exists(), f"{why}: split anyway"
    # nothing of MTPC's own: the compiler's messages (clang 22 warns that -S leaves -c unused)
    assert (r.stdout, r.stderr) == (ref.stdout, ref.stderr), r.stdout + r.stderr


@pytest.mark.parametrize("line,split", [
    ('#include "part.c"', True),
    ('  #  include  "part.c"  // a unity file\'s include', True),
    ('#include "part.h"', False),          # headers are not counted
    ('#include <part.c>', False),          # only quoted paths
    ('// #include "part.c"', False),
])
def test_first_compile_estimate(line, split, tmp_path):
    """With no object yet, the cost is estimated from the source's bytes and those of the
    C/C++ files it includes by a quoted path (a unity build), 40 bytes an instruction:
    a 100 KB part.c (mostly a comment) puts unity.c over --cost-threshold 2000."""
    part = big_source(tmp_path / "part.c")
    part.write_text("/*" + "x" * 100_000 + "*/\n" + part.read_text())
    (tmp_path / "part.h").write_text(part.read_text())
    src = tmp_path / "unity.c"
    src.write_text(line + "\n")
    obj = tmp_path / "unity.o"
    mtpc_compile(tmp_path, compile_cmd(src, obj, "-flto=thin", f"-I{tmp_path}"),
                 "--cost-threshold", "2000")
    assert pathlib.Path(f"{obj}.mtpc").exists() == split, line


def test_deterministic_and_runs(tmp_path):
    """The same compile (relative paths) in two directories, the second with other --jobs."""
    objs = []
    for d, jobs in (("a", "2"), ("b", "1")):
        (tmp_path / d).mkdir()
        big_source(tmp_path / d / "big.c")
        r = mtpc_compile(tmp_path / d, compile_cmd(pathlib.Path("big.c"), "big.o", "-flto=thin"),
                         "--cost-threshold", "0", "--jobs", jobs, cwd=tmp_path / d)
        assert re.search(r"big\.o: 4 partitions", r.stdout), r.stdout
        objs.append(tmp_path / d / "big.o")
    assert filecmp.cmp(*objs, shallow=False), "two directories, two objects"
    # a ThinLTO object with its summary, which a plain ThinLTO link takes
    prog = tmp_path / "prog"
    run([llvm_tool("clang"), "-O2", "-flto=thin", "-fuse-ld=lld", objs[0], "-o", prog])
    ref = tmp_path / "ref.o"
    run(compile_cmd(tmp_path / "a" / "big.c", ref, "-flto=thin"))
    run([llvm_tool("clang"), "-O2", "-flto=thin", "-fuse-ld=lld", ref, "-o", tmp_path / "ref"])
    assert run([prog]).stdout == run([tmp_path / "ref"]).stdout


def test_split_args_reach_the_join(tmp_path):
    """--split-arg words go to the join too: --no-join-inline leaves the calls no partition
    saw (docs/splitter.md, "The join's inliner"); without it they are inlined, as in the
    plain compile."""
    from test_split_join import call_lines, inline_source
    src = tmp_path / "m.c"
    src.write_text(inline_source(8))
    texts = {}
    for name, extra in (("inline", ()), ("no-inline", ("--split-arg", "--no-join-inline"))):
        obj = tmp_path / f"{name}.o"
        r = mtpc_compile(tmp_path, compile_cmd(src, obj, "-flto=thin"), "--cost-threshold", "0",
                         "--split-arg", "--copy-limit=0", *extra)
        assert re.search(r"\.o: [34] partitions", r.stdout), r.stdout
        ll = tmp_path / f"{name}.ll"
        run([llvm_tool("llvm-dis"), obj, "-o", ll])
        texts[name] = ll.read_text()
    assert call_lines(texts["inline"], "api") == []
    assert len(call_lines(texts["no-inline"], "api")) >= 60


def failing_split_tool(tmp_path, when):
    """mtpc-split, except that it fails when one of its arguments is `when`."""
    p = tmp_path / "split.sh"
    p.write_text(f"#!/bin/sh\nfor a; do [ \"$a\" = '{when}' ] && {{ echo broken >&2; exit 1; }}; done\n"
                 f"exec '{tool('mtpc-split')}' \"$@\"\n")
    p.chmod(0o755)
    return p


@pytest.mark.parametrize("when", ["-o", "--join"])
def test_failure_falls_back_with_one_warning(when, tmp_path):
    src = big_source(tmp_path / "big.c")
    plain, mc = tmp_path / "plain.o", tmp_path / "mc.o"
    run(compile_cmd(src, plain, "-flto=thin"))
    r = mtpc_compile(tmp_path, compile_cmd(src, mc, "-flto=thin"), "--cost-threshold", "0",
                     "--split-tool", failing_split_tool(tmp_path, when))
    # the inner build's messages come on stdout, as Ninja shows a step's output
    warnings = [l for l in (r.stdout + r.stderr).splitlines() if "warning" in l]
    assert len(warnings) == 1 and "mc.o" in warnings[0] and "unsplit" in warnings[0], r.stdout + r.stderr
    assert "mc.o: unsplit (fallback)" in r.stdout
    if when == "-o":  # nothing of the split is used: the plain compile's bytes
        assert filecmp.cmp(plain, mc, shallow=False)
    run([llvm_tool("clang"), "-flto=thin", "-fuse-ld=lld", mc, "-o", tmp_path / "prog"])


def test_compiler_error_is_the_compiles_own(tmp_path):
    src = tmp_path / "bad.c"
    src.write_text("int f(void) { return undeclared; }\n")
    r = mtpc_compile(tmp_path, compile_cmd(src, tmp_path / "bad.o", "-flto=thin"),
                     "--cost-threshold", "0", check=False)
    assert r.returncode != 0
    assert r.stderr.count("use of undeclared identifier") == 1, r.stderr
    assert "warning" not in r.stdout + r.stderr and not (tmp_path / "bad.o").exists()


def test_depfile_names_the_output(tmp_path):
    (tmp_path / "inc.h").write_text("#define K 7\n")
    src = big_source(tmp_path / "big.c")
    src.write_text('#include "inc.h"\n' + src.read_text())
    obj = tmp_path / "out" / "big.o"
    obj.parent.mkdir()
    mtpc_compile(tmp_path, compile_cmd(src, obj, "-flto=thin", "-MD", "-MF", tmp_path / "big.d"),
                 "--cost-threshold", "0")
    dep = (tmp_path / "big.d").read_text()
    assert dep.startswith(f"{obj}:"), dep
    assert "inc.h" in dep and "big.c" in dep
    assert pathlib.Path(f"{obj}.mtpc").is_dir()


def partition_runs(obj):
    """The partition compiles (pN.o) the inner build of obj has run, from its .ninja_log."""
    log = pathlib.Path(f"{obj}.mtpc") / ".ninja_log"
    return [l.split("\t")[3] for l in log.read_text().splitlines()[1:]
            if re.search(r"/p\d+\.o$", l.split("\t")[3])]


def test_edit_recompiles_one_partition(tmp_path):
    src, obj = tmp_path / "big.c", tmp_path / "big.o"
    big_source(src)
    mtpc_compile(tmp_path, compile_cmd(src, obj, "-flto=thin"), "--cost-threshold", "0")
    first = partition_runs(obj)
    assert len(first) == 4, first
    before = obj.read_bytes()
    big_source(src, changed=5)
    r = mtpc_compile(tmp_path, compile_cmd(src, obj, "-flto=thin"), "--cost-threshold", "0")
    assert "4 partitions" in r.stdout, r.stdout
    again = partition_runs(obj)[len(first):]
    assert len(again) == 1, f"an edit of one function recompiled {again}"
    assert obj.read_bytes() != before
    # the next compile measures the cost from the previous output's summary
    assert "(measured)" in r.stdout, r.stdout


LOGCLANG = """#!/bin/sh
echo "start $(date +%s.%N)" >> "$MTPC_TEST_LOG"
sleep 0.3
"{clang}" "$@"; rc=$?
echo "end $(date +%s.%N)" >> "$MTPC_TEST_LOG"
exit $rc
"""


def test_concurrent_compiles_share_the_budget(tmp_path):
    """Three split compiles at once with --jobs 4 each and a budget of 2 slots: their frontends
    and partition compiles (through a clang that logs) never run more than 2 at once."""
    clang = tmp_path / "clang"
    clang.write_text(LOGCLANG.format(clang=llvm_tool("clang")))
    clang.chmod(0o755)
    # every compile split (the board would hold some whole: test_build_busy.py)
    env = dict(os.environ, MTPC_TEST_LOG=str(tmp_path / "compiles.log"),
               MTPC_JOBS_DIR=str(tmp_path / "jobs"), MTPC_JOB_SLOTS="2", MTPC_BUSY="ignore")
    env.pop("MAKEFLAGS", None)
    procs = []
    for k in range(3):
        src = big_source(tmp_path / f"m{k}.c")
        cmd = [tool("mtpc-compile"), "--cost-threshold", "0", "--partitions", "4", "--jobs", "4",
               "--cache", tmp_path / "plans.sqlite", "--", clang, "-O2", "-flto=thin", "-c", src,
               "-o", tmp_path / f"m{k}.o"]
        procs.append(subprocess.Popen([str(w) for w in cmd], env=env, text=True,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0 and "4 partitions" in out, out + err
    peak, n = max_concurrency(tmp_path / "compiles.log")
    assert n == 3 * 5, f"{n} compiles (3 frontends, 12 partitions)"
    assert peak <= 2, f"{peak} compiles at once with a budget of 2"


def test_shared_literals_stay_private(tmp_path):
    """A long string literal that functions in several partitions read is promoted for the
    pre-link pipelines under an edit-stable name (.str.k<hash of its bytes>); the join makes
    it private again. Two TUs with the same literal then link together (left hidden and
    global, both objects defined .str.k<hash>: pugixml's and double-conversion's tests
    through the compile split failed to link), and neither object names it."""
    lit = "x" * 300
    objs = []
    for t in ("one", "two"):
        funcs = "".join(f"int {t}_f{i}(int x) {{ int s = x; for (int k = 0; k < x; k++) "
                        f"s = s * {i + 3} + k; return s + (int)strlen(LIT) + LIT[x & 7]; }}\n"
                        for i in range(24))
        src = tmp_path / f"{t}.c"
        src.write_text(f"#include <string.h>\n#define LIT \"{lit}\"\n{funcs}")
        obj = tmp_path / f"{t}.o"
        r = mtpc_compile(tmp_path, compile_cmd(src, obj, "-flto=thin"), "--cost-threshold", "0")
        assert "4 partitions" in r.stdout, r.stdout + r.stderr
        plan = next((tmp_path / f"{t}.o.mtpc").glob("mod/*/parts/plan.json")).read_text()
        assert ".str.k" in plan, "the literal was not promoted: the test tests nothing"
        syms = run([llvm_tool("llvm-nm"), obj]).stdout
        assert ".str" not in syms, syms
        objs.append(obj)
    main = tmp_path / "main.c"
    main.write_text("int one_f3(int); int two_f5(int);\n"
                    "int main(int c, char **v) { (void)v; return (one_f3(c) + two_f5(c)) & 1; }\n")
    exe = tmp_path / "prog"
    run([llvm_tool("clang"), "-O2", "-flto=thin", "-fuse-ld=lld", main, *objs, "-o", exe])
    assert run([exe], check=False).returncode in (0, 1)


def cxx_initializers(path, extra, n=64):
    """A C++ file whose class template Holder has one instance per chunk, each with a
    static array (a dynamic initializer, clang's __cxx_global_var_init.<n>, and a
    destructor registered with atexit, __cxx_global_array_dtor.<n>) and a function using
    it; `extra` adds at the top one more instance and static array, used by f0."""
    out = ["extern void touch(void *, int);",
           "template <class T> struct Holder { T v; int n;",
           "  Holder() : v(), n(sizeof(T)) { touch(this, n); }",
           "  ~Holder() { touch(this, -n); } };"]
    if extra:
        out += ["struct Extra { char c[3]; };", "static Holder<Extra> hx[2];"]
    for i in range(n):
        use = "Holder<Extra> e; s += e.n + hx[0].n; " if extra and i == 0 else ""
        out += [f"struct A{i} {{ int a[{i + 1}]; }};", f"static Holder<A{i}> h{i}[2];",
                f"__attribute__((noinline)) int f{i}(int x) {{ Holder<A{i}> l; int s = x; {use}",
                f"  for (int k = 0; k < x; k++) s = s * {i + 3} + k + l.n;",
                f"  return s + h{i}[1].n; }}"]
    path.write_text("\n".join(out) + "\n")


def test_cxx_edit_keeps_other_partitions(tmp_path):
    """A C++ edit that adds a class template instance and a static array early in the file
    renumbers, for the whole module, clang's struct types of one name
    (`struct.Holder.<n>`) and its static initializers and destructors
    (`__cxx_global_var_init.<n>`, `__cxx_global_array_dtor.<n>`); the partitions name them
    by their own content and order, so the partitions without new code stay as they were
    (here 3 of 8 change; 8 of 8 before; googletest's unit test with a test added: 4 of 16,
    before 16 of 16). The object has clang's names back: the same local functions as the
    plain compile's (the array destructors, whose addresses atexit takes, stay
    functions)."""
    src, obj = tmp_path / "big.cpp", tmp_path / "big.o"
    before = {}
    for extra in (False, True):
        cxx_initializers(src, extra)
        r = mtpc_compile(tmp_path, compile_cmd(src, obj, "-flto=thin"), "--cost-threshold", "0",
                         "--partitions", "8")
        assert "8 partitions" in r.stdout, r.stdout + r.stderr
        parts = sorted((tmp_path / "big.o.mtpc").glob("mod/*/parts/p*.bc"))
        assert len(parts) == 8
        now = {p.name: p.read_bytes() for p in parts}
        if not extra:
            before = now
            ir = run([llvm_tool("llvm-dis"), "-o", "-", parts[0]]).stdout
            assert "__cxx_global_" in ir and ".k" in ir, ir[:3000]
    changed = [n for n in now if now[n] != before[n]]
    assert 1 <= len(changed) <= 3, changed
    plain = tmp_path / "plain.o"
    run(compile_cmd(src, plain, "-flto=thin"))

    def local_functions(o):
        return sorted(line.split()[-1] for line in run([llvm_tool("llvm-nm"), o]).stdout.splitlines()
                      if line.split()[-2:-1] == ["t"])
    names = local_functions(obj)
    assert any(n.startswith("__cxx_global_array_dtor.") for n in names), names
    assert not any(".k" in n or ".mtpc" in n for n in names), names
    assert names == local_functions(plain)


# ---- CMake ----

CMAKE_PROJECT = """cmake_minimum_required(VERSION 3.20)
project(mc C)
find_package(MTPC REQUIRED)
add_executable(app big.c small.c)
add_executable(cached small.c main2.c)
set_property(TARGET cached PROPERTY C_COMPILER_LAUNCHER env)
mtpc_enable(app)
mtpc_enable(cached)
"""


def test_cmake_sets_the_compiler_launcher(tmp_path):
    from test_build_cmake_compat import configure, build
    src = tmp_path / "src"
    src.mkdir()
    big_source(src / "big.c", funcs=400)
    (src / "small.c").write_text("int small_one(int x) { return x + 1; }\n")
    (src / "main2.c").write_text("int small_one(int); int main(void) { return small_one(-1); }\n")
    (src / "CMakeLists.txt").write_text(CMAKE_PROJECT)
    # big.c estimates at about 2000 instructions from its bytes, small.c at 1
    r = configure(src, tmp_path / "b", ["-DMTPC_SPLIT_COST=1000"])
    assert re.search(r"cached keeps its C compiler launcher \(env\)", r.stdout), r.stdout
    out = build(tmp_path / "b")
    assert re.search(r"mtpc-compile: big\.c\.o: \d+ partitions", out), out
    assert "mtpc-compile: small.c.o" not in out
    assert run([tmp_path / "b" / "app"]).stdout.strip()
    assert run([tmp_path / "b" / "cached"], check=False).returncode == 0
    # MTPC_JOBS does not change an object: changing it recompiles nothing
    run(["cmake", "-DMTPC_JOBS=1", tmp_path / "b"])
    again = build(tmp_path / "b")
    assert "mtpc-compile:" not in again and "Building C object" not in again, again
    assert "--jobs=1" in (tmp_path / "b" / "CMakeFiles" / "mtpc-compile.rsp").read_text()
    # the small source was compiled as given: the same object as without MTPC_SPLIT_COMPILE
    configure(src, tmp_path / "off", ["-DMTPC_SPLIT_COST=1000", "-DMTPC_SPLIT_COMPILE=OFF"])
    build(tmp_path / "off")
    rel = "CMakeFiles/app.dir/small.c.o"
    assert filecmp.cmp(tmp_path / "b" / rel, tmp_path / "off" / rel, shallow=False)
    assert "mtpc-compile" not in (tmp_path / "off" / "build.ninja").read_text()


def compiles_run(bdir):
    """Build bdir with `ninja -d explain`; the objects it compiled (from Ninja's explanations
    of the edges it ran, CMake's Building lines) and its output."""
    r = run(["ninja", "-C", bdir, "-d", "explain"])
    out = r.stdout + r.stderr
    return sorted(set(re.findall(r"Building C object (\S+)", out))), out


def test_cmake_tuning_reruns_only_the_compiles_it_changes(tmp_path):
    """Issue 37, item 5: MTPC's cache variables live in options files, not on the compile
    rule's command line, and a split compile (or one held whole only by
    MTPC_MAX_PARTITIONS=1) names the file of the options that decide its split in its
    depfile. Changing MTPC_MAX_PARTITIONS or MTPC_SPLIT_COST reruns that compile, never the
    small one; changing MTPC_JOBS reruns nothing."""
    from test_build_cmake_compat import configure
    src = tmp_path / "src"
    src.mkdir()
    big_source(src / "big.c", funcs=400)
    (src / "small.c").write_text("int small_one(int x) { return x + 1; }\n")
    (src / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.20)\nproject(tune C)\nfind_package(MTPC REQUIRED)\n"
        "add_executable(app big.c small.c)\nmtpc_enable(app)\n")
    b = tmp_path / "b"
    configure(src, b, ["-DMTPC_SPLIT_COST=1000", "-DMTPC_MAX_PARTITIONS="])
    big, small = "CMakeFiles/app.dir/big.c.o", "CMakeFiles/app.dir/small.c.o"
    ran, out = compiles_run(b)
    assert ran == [big, small], out
    assert re.search(r"mtpc-compile: big\.c\.o: \d+ partitions", out), out
    rules = (b / "build.ninja").read_text()
    assert "--partitions" not in rules and "--cost-threshold" not in rules
    split_rsp = b / "CMakeFiles" / "mtpc-compile-split.rsp"
    deps = run(["ninja", "-C", b, "-t", "deps", big]).stdout
    assert str(split_rsp) in deps, deps
    assert str(split_rsp) not in run(["ninja", "-C", b, "-t", "deps", small]).stdout

    def retune(*defs):
        before = split_rsp.stat().st_mtime_ns
        run(["cmake", *defs, b])
        return split_rsp.stat().st_mtime_ns != before

    # a value of no compile's object: no options file of the split changes, nothing reruns
    assert not retune("-DMTPC_JOBS=1")
    ran, out = compiles_run(b)
    assert ran == [] and "mtpc-compile:" not in out, out
    # more partitions: only the split compile reruns, with them
    assert retune("-DMTPC_MAX_PARTITIONS=3")
    ran, out = compiles_run(b)
    assert ran == [big], out
    assert "mtpc-compile: big.c.o: 3 partitions" in out, out
    # splitting off: it reruns whole; back on: it is split again (its cost still counts)
    assert retune("-DMTPC_MAX_PARTITIONS=1")
    ran, out = compiles_run(b)
    assert ran == [big] and "mtpc-compile:" not in out, out
    assert retune("-DMTPC_MAX_PARTITIONS=2")
    ran, out = compiles_run(b)
    assert ran == [big] and "mtpc-compile: big.c.o: 2 partitions" in out, out
    # a threshold above its cost: it reruns unsplit, and from then on depends on nothing of MTPC
    assert retune("-DMTPC_SPLIT_COST=100000000")
    ran, out = compiles_run(b)
    assert ran == [big] and "mtpc-compile:" not in out, out
    assert str(split_rsp) not in run(["ninja", "-C", b, "-t", "deps", big]).stdout
    assert retune("-DMTPC_MAX_PARTITIONS=3")
    ran, out = compiles_run(b)
    assert ran == [], out
    # the objects are those of the plain compile now: what a fresh build of these options writes
    fresh = tmp_path / "fresh"
    configure(src, fresh, ["-DMTPC_SPLIT_COST=100000000", "-DMTPC_MAX_PARTITIONS=3"])
    compiles_run(fresh)
    assert filecmp.cmp(b / big, fresh / big, shallow=False)


FULL_BUILD_PROJECT = """cmake_minimum_required(VERSION 3.20)
project(fb C)
find_package(MTPC REQUIRED)
add_executable(app1 big0.c big1.c main1.c)
add_executable(app2 big2.c main2.c)
mtpc_enable(app1)
mtpc_enable(app2)
"""


def test_full_build_stays_within_cores_plus_one(tmp_path):
    """A whole CMake project at -j cores (2) with three huge TUs in two enabled executables:
    every compile split (MTPC_SPLIT_COST=0) and every module of both links split, the
    machine's budget at its default (the cores). Through a clang that logs when it starts
    and ends, the outer build's compiles, mtpc-compile's frontends and pre-link partitions
    and the links' thin links, partitions and final links never run more than cores + 1 at
    once (the issue's bound; the budget alone allows the cores)."""
    from test_build_cmake_compat import configure
    cores = 2
    src = tmp_path / "src"
    src.mkdir()
    for k in range(3):
        body = big_source(tmp_path / "tmp.c", funcs=60).read_text()
        # one main per executable: the big TUs' own mains renamed away
        (src / f"big{k}.c").write_text(body.replace("int main(", f"int big{k}_main(")
                                       .replace("\nint f", "\nstatic int f"))
    (src / "main1.c").write_text("int big0_main(int, char **); int big1_main(int, char **);\n"
                                 "int main(int c, char **v) { return big0_main(c, v) + big1_main(c, v) == 7; }\n")
    (src / "main2.c").write_text("int big2_main(int, char **);\n"
                                 "int main(int c, char **v) { return big2_main(c, v) == 7; }\n")
    (src / "CMakeLists.txt").write_text(FULL_BUILD_PROJECT)
    wrap = tmp_path / "bin" / "clang"
    wrap.parent.mkdir()
    wrap.write_text(LOGCLANG.replace('echo "start', '[ -z "$MTPC_TEST_LOG" ] || echo "start')
                    .replace('echo "end', '[ -z "$MTPC_TEST_LOG" ] || echo "end')
                    .format(clang=llvm_tool("clang")))
    wrap.chmod(0o755)
    b = tmp_path / "b"
    configure(src, b, [f"-DCMAKE_C_COMPILER={wrap}", "-DMTPC_SPLIT_COST=0",
                       "-DMTPC_MAX_PARTITIONS=4", "-DMTPC_JOBS=0", "-DMTPC_BUSY=ignore"])
    env = dict(os.environ, MTPC_TEST_LOG=str(tmp_path / "compiles.log"),
               MTPC_JOBS_DIR=str(tmp_path / "jobs"), MTPC_JOB_SLOTS=str(cores))
    env.pop("MAKEFLAGS", None)
    r = run(["cmake", "--build", b, "-j", str(cores)], env=env)
    out = r.stdout + r.stderr
    assert len(re.findall(r"^mtpc-compile: big\d\.c\.o: 4 partitions", out, re.M)) == 3, out
    assert len(re.findall(r"^mtpc-link: app\d: ", out, re.M)) == 2, out
    peak, n = max_concurrency(tmp_path / "compiles.log")
    # 5 compiles (3 split: frontend + 4 partitions each), 2 links (thin link, partitions,
    # final link): dozens of compiler processes
    assert n >= 3 * 5 + 2 + 2 * 3, n
    assert peak <= cores + 1, f"{peak} compiler processes at once at -j {cores}"
    for app in ("app1", "app2"):
        assert run([b / app], check=False).returncode in (0, 1)
