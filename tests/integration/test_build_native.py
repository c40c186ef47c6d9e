"""mtpc-compile on a plain optimizing compile (issue 35: every build, not only ThinLTO): a
costly `clang -O2 -c` without -flto runs its frontend once, mtpc-split --native cuts the
module, each partition is optimized and compiled to native code by its own edge, and the
merge (ld.lld -r, the promoted symbols local again) writes one native object.

* meaning: every C and C++ hazard fixture, split (--cost-threshold 0, 4 partitions),
  behaves like the plain compile's program, exports the same symbols, and each object
  defines the same global symbols with the same binding, visibility and type (progdiff
  native mode), at -O2 and under the flags a plain compile can have (hidden visibility, -g
  -gz, -fPIC -shared, section GC, -fcommon, -fPIE, -fno-pic);
* exactness: what is not split (below the threshold, -O0, full LTO, -S, ASan, profiles,
  -gsplit-dwarf) writes the plain compile's bytes and says nothing;
* determinism, the fallback with one warning, the compiler's own errors, the depfile, one
  warning once, -Werror, an edit recompiling one partition, debug info that
  llvm-dwarfdump --verify accepts and gdb breaks in, -gz kept compressed;
* build systems: a Makefile with CC="mtpc-compile -- clang", ccache in front in both forms
  (CCACHE_PREFIX, and a launcher list ccache;mtpc-compile in CMake), CMake's
  mtpc_enable() on a target without LTO."""
import filecmp
import os
import pathlib
import re
import shutil

import pytest

import progdiff as pd
import splitlib as sl
from conftest import llvm_tool, run, tool
from test_build_compile import big_source, compile_cmd, failing_split_tool, mtpc_compile, \
    partition_runs

FIXTURES = [fx for fx in sl.all_fixtures() if fx.path.suffix != ".ll"]
FLAGGED = [fx for fx in FIXTURES if fx.name in
           ("cxx_eh_rtti", "comdats", "linkonce_odr", "tls", "alias_identity", "aliases_ifuncs",
            "debuginfo", "promoted_internals", "ctors_sections", "used_retain")]
CASES = ([("none", fx) for fx in FIXTURES] +
         [(fs, fx) for fs in ("hidden", "gz", "pic-shared", "gc-sections", "common", "pie",
                              "no-pic") for fx in FLAGGED])


def program_of(fx):
    split = [(src, sl.lang_flags(src)) for src in fx.modules]
    main = [(fx.main, sl.lang_flags(fx.main))] if fx.main else []
    return pd.Program(split, main, cxx=fx.is_cxx, cflags=fx.cflags, ldflags=fx.ldflags,
                      shared=fx.shared)


@pytest.mark.parametrize("flagset,fx", CASES, ids=[f"{fs}-{fx.name}" for fs, fx in CASES])
def test_native_split_means_the_same(flagset, fx, tmp_path):
    try:
        counts = pd.compare(program_of(fx), flagset, tmp_path, "plain", native=True)
    except pd.Skip as e:
        pytest.skip(str(e))
    except pd.Fail as e:
        pytest.fail(str(e), pytrace=False)
    compiled = counts[:len(fx.modules)]
    if any(f.startswith("-fsanitize=address") for f in fx.cflags):
        assert max(compiled) == 0, f"split under ASan: {compiled}"
        return
    assert max(compiled) >= min(2, fx.min_parts), \
        f"mtpc-compile split no module in {min(2, fx.min_parts)} or more: {compiled}"


UNSPLIT = [
    ("below the cost threshold", [], ()),
    ("-O0", ["-O0"], ("--cost-threshold", "0")),
    ("full LTO", ["-flto"], ("--cost-threshold", "0")),
    ("assembly", ["-S"], ("--cost-threshold", "0")),
    ("ASan", ["-fsanitize=address"], ("--cost-threshold", "0")),
    ("split DWARF", ["-g", "-gsplit-dwarf"], ("--cost-threshold", "0")),
    ("optimization records", ["-fsave-optimization-record"], ("--cost-threshold", "0")),
    ("one partition", [], ("--cost-threshold", "0", "--partitions", "1")),
]


@pytest.mark.parametrize("why,flags,opts", UNSPLIT, ids=[u[0] for u in UNSPLIT])
def test_unsplit_native_compiles_are_exact(why, flags, opts, tmp_path):
    src = big_source(tmp_path / "big.c")
    # one output name for both (-gsplit-dwarf names its .dwo after it)
    plain, mc = tmp_path / "plain.o", tmp_path / "mc.o"
    ref = run(compile_cmd(src, mc, *flags), cwd=tmp_path)
    mc.rename(plain)
    r = mtpc_compile(tmp_path, compile_cmd(src, mc, *flags), *opts, cwd=tmp_path)
    assert filecmp.cmp(plain, mc, shallow=False), f"{why}: not the plain compile's bytes"
    assert not pathlib.Path(f"{mc}.mtpc").exists(), f"{why}: split anyway"
    assert (r.stdout, r.stderr) == (ref.stdout, ref.stderr), r.stdout + r.stderr


def test_native_deterministic_and_runs(tmp_path):
    """The same compile in two directories (the second with other --jobs): byte-identical
    native objects, which a plain link takes; the program prints what the plain one does."""
    objs = []
    for d, jobs in (("a", "2"), ("b", "1")):
        (tmp_path / d).mkdir()
        big_source(tmp_path / d / "big.c")
        r = mtpc_compile(tmp_path / d, compile_cmd(pathlib.Path("big.c"), "big.o"),
                         "--cost-threshold", "0", "--jobs", jobs, cwd=tmp_path / d)
        assert re.search(r"big\.o: 4 partitions", r.stdout), r.stdout
        objs.append(tmp_path / d / "big.o")
    assert filecmp.cmp(*objs, shallow=False), "two directories, two objects"
    assert run([llvm_tool("llvm-readelf"), "-h", objs[0]]).stdout.count("REL (Relocatable file)")
    ref = tmp_path / "ref.o"
    run(compile_cmd(tmp_path / "a" / "big.c", ref))
    assert pd.object_symbols(ref) == pd.object_symbols(objs[0])
    for o, exe in ((objs[0], "prog"), (ref, "ref")):
        run([llvm_tool("clang"), "-fuse-ld=lld", o, "-o", tmp_path / exe])
    assert run([tmp_path / "prog"]).stdout == run([tmp_path / "ref"]).stdout


@pytest.mark.parametrize("when", ["-o", "slot"])
def test_native_failure_falls_back_with_one_warning(when, tmp_path):
    """A failing split, or a partition that does not compile: the plain compile's object,
    one warning naming the compile."""
    src = big_source(tmp_path / "big.c")
    plain, mc = tmp_path / "plain.o", tmp_path / "mc.o"
    run(compile_cmd(src, plain))
    if when == "slot":
        # a clang that fails on partition p1 and compiles the rest
        clang = tmp_path / "clang"
        clang.write_text(f"#!/bin/sh\nfor a; do case $a in */p1.bc) exit 1;; esac; done\n"
                         f"exec '{llvm_tool('clang')}' \"$@\"\n")
        clang.chmod(0o755)
        cmd = [clang, *compile_cmd(src, mc)[1:]]
        r = mtpc_compile(tmp_path, cmd, "--cost-threshold", "0")
    else:
        r = mtpc_compile(tmp_path, compile_cmd(src, mc), "--cost-threshold", "0",
                         "--split-tool", failing_split_tool(tmp_path, when))
    warnings = [ln for ln in (r.stdout + r.stderr).splitlines() if "warning" in ln]
    assert len(warnings) == 1 and "unsplit" in warnings[0], r.stdout + r.stderr
    assert "mc.o: unsplit (fallback)" in r.stdout, r.stdout
    assert filecmp.cmp(plain, mc, shallow=False)


def test_native_diagnostics_are_the_compiles(tmp_path):
    """A warning of the source shows once, as in the plain compile; with -Werror the
    compile fails as the plain one does, with no fallback and no object."""
    src = big_source(tmp_path / "big.c")
    src.write_text(src.read_text() + "int unused_var(void) { int u; return 3; }\n")
    ref = run(compile_cmd(src, tmp_path / "plain.o", "-Wall"), cwd=tmp_path)
    r = mtpc_compile(tmp_path, compile_cmd(src, tmp_path / "mc.o", "-Wall"),
                     "--cost-threshold", "0", "--quiet", cwd=tmp_path)
    assert ref.stderr.count("unused variable 'u'") == 1
    assert r.stderr == ref.stderr, r.stderr
    assert "4 partitions" in r.stdout
    bad = run(compile_cmd(src, tmp_path / "bad.o", "-Wall", "-Werror"), check=False, cwd=tmp_path)
    r = mtpc_compile(tmp_path, compile_cmd(src, tmp_path / "werr.o", "-Wall", "-Werror"),
                     "--cost-threshold", "0", check=False, cwd=tmp_path)
    assert r.returncode == bad.returncode != 0
    assert r.stderr == bad.stderr and "warning:" not in r.stdout
    assert not (tmp_path / "werr.o").exists()


def test_native_depfile_and_edit(tmp_path):
    """The depfile names the real output; an edit of one function recompiles one partition
    and the object changes."""
    (tmp_path / "inc.h").write_text("#define K 7\n")
    src = big_source(tmp_path / "big.c")
    src.write_text('#include "inc.h"\n' + src.read_text())
    obj = tmp_path / "big.o"
    mtpc_compile(tmp_path, compile_cmd(src, obj, "-MD", "-MF", tmp_path / "big.d"),
                 "--cost-threshold", "0")
    dep = (tmp_path / "big.d").read_text()
    assert dep.startswith(f"{obj}:") and "inc.h" in dep, dep
    first = partition_runs(obj)
    assert len(first) == 4, first
    before = obj.read_bytes()
    big_source(src, changed=5)
    src.write_text('#include "inc.h"\n' + src.read_text())
    r = mtpc_compile(tmp_path, compile_cmd(src, obj, "-MD", "-MF", tmp_path / "big.d"),
                     "--cost-threshold", "0")
    assert "4 partitions" in r.stdout, r.stdout
    again = partition_runs(obj)[len(first):]
    assert len(again) == 1, f"an edit of one function recompiled {again}"
    assert obj.read_bytes() != before


def test_native_common_symbols_stay_common(tmp_path):
    """-fcommon: tentative definitions used from several partitions are COMMON symbols of
    the merged object, as in the plain compile's."""
    src = big_source(tmp_path / "big.c")
    text = src.read_text().replace("return s + ", "return tent_a + tent_b[x & 3] + s + ")
    src.write_text("int tent_a; int tent_b[4];\n" + text)
    plain, mc = tmp_path / "plain.o", tmp_path / "mc.o"
    run(compile_cmd(src, plain, "-fcommon"))
    r = mtpc_compile(tmp_path, compile_cmd(src, mc, "-fcommon"), "--cost-threshold", "0")
    assert "4 partitions" in r.stdout, r.stdout
    syms = pd.object_symbols(mc)
    assert "tent_a OBJECT GLOBAL DEFAULT COMMON" in syms, syms
    assert syms == pd.object_symbols(plain)


def test_native_debug_info(tmp_path):
    """-O2 -g and -O2 -g -gz: llvm-dwarfdump --verify accepts the merged object; with -gz
    its debug sections are compressed, as the plain compile's are; gdb stops in a function
    of each partition on its MARK line."""
    from test_build_debug import DEBUG, GDB, MARKS, INLINED, check_with_gdb
    objs = {}
    for flags in (["-g"], ["-g", "-gz"]):
        tag = "".join(flags)
        for src in sorted(DEBUG.glob("*.c")):
            obj = tmp_path / f"{src.stem}{tag}.o"
            r = mtpc_compile(tmp_path, compile_cmd(src, obj, *flags), "--cost-threshold", "0")
            objs.setdefault(tag, []).append(obj)
            if src.stem == "lib":
                assert re.search(r"partitions", r.stdout), r.stdout
            v = run([llvm_tool("llvm-dwarfdump"), "--verify", obj], check=False)
            assert v.returncode == 0 and "No errors" in v.stdout, v.stdout[-2000:]
        lib_obj = tmp_path / f"lib{tag}.o"
        sections = run([llvm_tool("llvm-readelf"), "-SW", lib_obj]).stdout
        info = [ln for ln in sections.splitlines() if " .debug_info " in ln]
        assert info and (("C" in info[0].split()[-4]) == ("-gz" in flags)), sections
    exe = tmp_path / "dbg"
    run([llvm_tool("clang"), "-fuse-ld=lld", *objs["-g"], "-o", exe])
    if not GDB:
        pytest.skip("gdb not installed")
    import json
    plan = json.loads(next(pathlib.Path(f"{tmp_path / 'lib-g.o'}.mtpc").glob(
        "mod/*/parts/plan.json")).read_text())
    funcs = []
    for part in plan["partitions"]:
        owned = sorted(f for f in part["owned"] if f in MARKS and f not in INLINED)
        if owned:
            funcs.append(owned[0])
    assert len(funcs) >= 2, plan["partitions"]
    check_with_gdb(exe, funcs)


MAKEFILE = """CC = {cc}
CFLAGS = -O2
app: big.o main.o
\t{clang} -fuse-ld=lld big.o main.o -o app
%.o: %.c
\t$(CC) $(CFLAGS) -c $< -o $@
"""


def test_makefile_with_a_prefix(tmp_path):
    """make CC="mtpc-compile ... -- clang": the big source is split, main.c is compiled as
    given, the program prints what the plain build's prints."""
    big_source(tmp_path / "big.c")
    (tmp_path / "big.c").write_text((tmp_path / "big.c").read_text()
                                    .replace("int main(", "int big_main("))
    (tmp_path / "main.c").write_text("int big_main(int, char **);\n"
                                     "int main(int c, char **v) { return big_main(c, v) == 7; }\n")
    cc = (f"{tool('mtpc-compile')} --cost-threshold 40 --partitions 4 --cache "
          f"{tmp_path}/plans.sqlite -- {llvm_tool('clang')}")
    (tmp_path / "Makefile").write_text(MAKEFILE.format(cc=cc, clang=llvm_tool("clang")))
    r = run(["make", "-j2"], cwd=tmp_path, env=dict(os.environ, MAKEFLAGS=""))
    assert re.search(r"mtpc-compile: big\.o: 4 partitions", r.stdout), r.stdout
    assert "mtpc-compile: main.o" not in r.stdout
    ref = tmp_path / "ref"
    run([llvm_tool("clang"), "-O2", "-fuse-ld=lld", tmp_path / "big.c", tmp_path / "main.c",
         "-o", ref])
    assert run([tmp_path / "app"], check=False).returncode == run([ref], check=False).returncode
