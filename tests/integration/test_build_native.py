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
  -gsplit-dwarf without --merge-dwo, and with it DWARF 4, =single or -gz) writes the plain
  compile's bytes and says nothing;
* determinism, the fallback with one warning, the compiler's own errors, the depfile, one
  warning once, -Werror, an edit recompiling one partition, debug info that
  llvm-dwarfdump --verify accepts and gdb breaks in, -gz kept compressed, -gsplit-dwarf
  with --merge-dwo: the partitions' units merged into the one .dwo;
* build systems: a Makefile with CC="mtpc-compile -- clang", ccache in front in both forms
  (CCACHE_PREFIX, and a launcher list ccache;mtpc-compile in CMake), CMake's
  mtpc_enable() on a target without LTO."""
import filecmp
import json
import os
import pathlib
import re
import shutil

import pytest

import progdiff as pd
import splitlib as sl
from conftest import llvm_tool, run, thinned, tool
from test_build_compile import big_source, compile_cmd, failing_split_tool, mtpc_compile, \
    partition_runs

FIXTURES = [fx for fx in sl.all_fixtures() if fx.path.suffix != ".ll"]
FLAGGED = [fx for fx in FIXTURES if fx.name in
           ("cxx_eh_rtti", "comdats", "linkonce_odr", "tls", "alias_identity", "aliases_ifuncs",
            "debuginfo", "promoted_internals", "ctors_sections", "used_retain")]
CASES = (thinned([("none", fx) for fx in FIXTURES]) +
         thinned([(fs, fx) for fs in ("hidden", "gz", "pic-shared", "gc-sections", "common",
                                      "pie", "no-pic") for fx in FLAGGED], len(FLAGGED)))


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


SHARED = [fx for fx in FIXTURES if not any(f.startswith("-fsanitize=address") for f in fx.cflags)]


@pytest.mark.parametrize("fx", SHARED, ids=[fx.name for fx in SHARED])
def test_native_shared_statics(fx, tmp_path):
    """With --local-dup-limit a static function several partitions call is carried by each
    as its own internal copy (a plain compile's split), or, when code takes its address,
    as one linkonce_odr copy the link keeps once: the same program and symbols."""
    try:
        pd.compare(program_of(fx), "none", tmp_path, "plain", native=True,
                   split_args=("--local-dup-limit=150", "--local-dup-budget=10"))
    except pd.Skip as e:
        pytest.skip(str(e))
    except pd.Fail as e:
        pytest.fail(str(e), pytrace=False)


ADDRESS_IDENTITY = """#include <stdio.h>
typedef int (*fn)(int);
static int helper(int x) { return x * 3 + 1; }
static int other(int x) { return x * 3 + 1; }
%s
int main(int argc, char **argv) {
  (void)argv;
  int same = 0, sum = 0;
%s
  printf("%%d %%d %%d\\n", same, sum, get0() == other);
  return 0;
}
"""


def test_native_static_address_stays_one(tmp_path):
    """A small static function that functions in every partition call and whose address
    they return: carried by each partition (--local-dup-limit), its address is still one
    address, as in the plain compile (a copy per partition would make them differ)."""
    funcs = "".join(f"int use{i}(int x) {{ int s = 0; for (int k = 0; k < x; k++) s += helper(k ^ {i}); return s; }}\n"
                    f"__attribute__((noinline)) fn get{i}(void) {{ return helper; }}\n"
                    for i in range(32))
    body = "".join(f"  same += get{i}() == get{(i * 7 + 3) % 32}(); sum += use{i}(argc + {i});\n"
                   for i in range(32))
    src = tmp_path / "addr.c"
    src.write_text(ADDRESS_IDENTITY % (funcs, body))
    prog = pd.Program([(src, [])])
    counts = pd.compare(prog, "none", tmp_path / "w", "plain", native=True,
                        split_args=("--local-dup-limit=150", "--local-dup-budget=10"))
    assert counts[0] >= 2, counts
    plan = json.loads(next((tmp_path / "w").glob("addr.*.mc.o.mtpc/mod/*/parts/plan.json")).read_text())
    carriers = sum("helper" in p["duplicated"] for p in plan["partitions"])
    assert carriers >= 2, "helper is not carried by several partitions: the test tests nothing"
    out = run([tmp_path / "w" / "mtpc" / "prog"]).stdout.split()
    assert out[0] == "32", out



SAME_NAME_STATIC = """#include <stdio.h>
typedef void (*cb_t)(int *);
void walk(cb_t cb, int *v);
static void close_walk_cb(int *v) { *v += %d; printf("%s %%d\\n", *v); }
%s"""


def test_native_same_static_in_two_objects(tmp_path):
    """Two sources, each with its own static close_walk_cb whose address functions in every
    partition pass on (libuv's benchmarks): each split carries it as one linkonce_odr copy
    in a COMDAT group, for its own ld -r. After the merge the group must not stay a COMDAT
    under the static's plain name, or the final link keeps one object's function for both
    (lld: "relocation refers to a symbol in a discarded section")."""
    srcs = []
    for t, inc in (("a", 7), ("b", 1000)):
        funcs = "".join(f"int f{t}{i}(int x) {{ int v = x * {i}; for (int k = 0; k < x; k++) {{ "
                        f"v = v * 31 + (k ^ {i}); if (v % 7 == {i}) v += x; }} "
                        f"walk(close_walk_cb, &v); return v; }}\n" for i in range(8))
        src = tmp_path / f"{t}.c"
        src.write_text(SAME_NAME_STATIC % (inc, t, funcs))
        srcs.append((src, []))
    main = tmp_path / "main.c"
    main.write_text("typedef void (*cb_t)(int *);\nvoid walk(cb_t cb, int *v) { cb(v); }\n"
                    + "".join(f"int f{t}{i}(int);\n" for t in "ab" for i in range(8))
                    + "int main(void) { int s = 0;\n"
                    + "".join(f"  s += f{t}{i}({i + 1});\n" for t in "ab" for i in range(8))
                    + "  return s & 1; }\n")
    prog = pd.Program(srcs, [(main, [])])
    counts = pd.compare(prog, "none", tmp_path / "w", "plain", native=True)
    assert min(counts[:2]) >= 2, counts
    for t in "ab":
        plan = json.loads(next((tmp_path / "w").glob(f"{t}.*.mc.o.mtpc/mod/*/parts/plan.json"))
                          .read_text())
        carriers = sum("close_walk_cb" in p["duplicated"] for p in plan["partitions"])
        assert carriers >= 2, f"{t}.c: close_walk_cb is not carried by several partitions"
        obj = next((tmp_path / "w").glob(f"{t}.*.mc.o"))
        groups = run([llvm_tool("llvm-readelf"), "--section-groups", obj]).stdout
        assert "close_walk_cb" in groups and "COMDAT group" not in groups, groups
    out = run([tmp_path / "w" / "mtpc" / "prog"], check=False).stdout
    assert out.count("a ") == 8 and out.count("b ") == 8, out


FOLD = """#include <stdio.h>
__attribute__((cold)) static int report(int x, const char *what) {
  int s = 0;
  for (int k = 0; k < x %% 64; k++) s += (k * 7) ^ x;
  printf("%%s %%d\\n", what, s);
  return s & 1;
}
%s
int main(int argc, char **argv) {
  (void)argv;
  long s = 0;
%s  printf("%%ld\\n", s);
  return 0;
}
"""


def defined(obj, name):
    """How many times obj defines a function called name (its symbol table)."""
    out = run([llvm_tool("llvm-nm"), "--defined-only", obj]).stdout.split("\n")
    return sum(1 for ln in out if ln.split()[-1:] == [name] and ln.split()[1] in "tT")


def test_native_equal_copies_of_a_static_fold(tmp_path):
    """A small cold static that functions in every partition call and none inlines: each
    partition carries its own copy and keeps it out of line. The pass plugin (mtpc-fold.so)
    gives equal copies one body, the merge names it as the source does, local, in no COMDAT
    group: the object defines it once, as the plain compile's does, and the program is the
    same, with -g too. Without the plugin (a split tool in a directory without it), every
    copy stays."""
    funcs = "".join(f"long work{i}(int x) {{\n  long v = x;\n"
                    + "".join(f"  v = v * {k + 3} + (v >> {k % 7 + 1}) + x;\n" for k in range(60))
                    + f"  if (v % 1000 == {i}) return report((int)v, \"w{i}\");\n  return v;\n}}\n"
                    for i in range(8))
    body = "".join(f"  s += work{i}(argc + {i});\n" for i in range(8))
    src = tmp_path / "fold.c"
    src.write_text(FOLD % (funcs, body))
    prog = pd.Program([(src, [])])
    counts = pd.compare(prog, "none", tmp_path / "w", "plain", native=True)
    assert counts[0] >= 2, counts
    plan = json.loads(next((tmp_path / "w").glob("fold.*.mc.o.mtpc/mod/*/parts/plan.json")).read_text())
    carriers = sum("report" in p["duplicated"] for p in plan["partitions"])
    assert carriers >= 2, "report is not carried by several partitions: the test tests nothing"
    obj = next((tmp_path / "w").glob("fold.*.mc.o"))
    assert defined(obj, "report") == 1
    syms = run([llvm_tool("llvm-nm"), obj]).stdout
    assert ".mtpc.f" not in syms, syms
    assert "COMDAT" not in run([llvm_tool("llvm-readelf"), "--section-groups", obj]).stdout
    assert ".mtpc.f" not in run([llvm_tool("llvm-readelf"), "-S", obj]).stdout
    # with -g too: the dropped copies' subprograms are marked dead, and the debug info verifies
    mtpc_compile(tmp_path, compile_cmd(src, tmp_path / "g.o", "-g"), "--cost-threshold", "0")
    assert defined(tmp_path / "g.o", "report") == 1
    assert "No errors." in run([llvm_tool("llvm-dwarfdump"), "--verify", tmp_path / "g.o"]).stdout
    assert "dead code" in run([llvm_tool("llvm-dwarfdump"), "--debug-info", tmp_path / "g.o"]).stdout
    # without the plugin: one body per carrier
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(tool("mtpc-split"), alone / "mtpc-split")
    mtpc_compile(tmp_path, compile_cmd(src, tmp_path / "nofold.o"), "--cost-threshold", "0",
                 "--split-tool", alone / "mtpc-split")
    assert defined(tmp_path / "nofold.o", "report") >= 2


UNSPLIT = [
    ("below the cost threshold", [], ()),
    ("-O0", ["-O0"], ("--cost-threshold", "0")),
    ("full LTO", ["-flto"], ("--cost-threshold", "0")),
    ("assembly", ["-S"], ("--cost-threshold", "0")),
    ("ASan", ["-fsanitize=address"], ("--cost-threshold", "0")),
    ("split DWARF", ["-g", "-gsplit-dwarf"], ("--cost-threshold", "0")),
    ("split DWARF 4", ["-g", "-gdwarf-4", "-gsplit-dwarf"], ("--cost-threshold", "0", "--merge-dwo")),
    ("split DWARF in the object", ["-g", "-gsplit-dwarf=single"], ("--cost-threshold", "0", "--merge-dwo")),
    ("compressed split DWARF", ["-g", "-gz", "-gsplit-dwarf"], ("--cost-threshold", "0", "--merge-dwo")),
    ("split DWARF with macros", ["-g3", "-gsplit-dwarf"], ("--cost-threshold", "0", "--merge-dwo")),
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


def marked_function_per_partition(obj):
    """A function with a MARK line (tests/projects/debug) owned by each partition of obj's
    split that owns one, not inlined away: where gdb must stop. At least two."""
    from test_build_debug import MARKS, INLINED
    plan = json.loads(next(pathlib.Path(f"{obj}.mtpc").glob("mod/*/parts/plan.json")).read_text())
    funcs = []
    for part in plan["partitions"]:
        owned = sorted(f for f in part["owned"] if f in MARKS and f not in INLINED)
        if owned:
            funcs.append(owned[0])
    assert len(funcs) >= 2, plan["partitions"]
    return funcs


def test_native_debug_info(tmp_path):
    """-O2 -g and -O2 -g -gz: llvm-dwarfdump --verify accepts the merged object; with -gz
    its debug sections are compressed, as the plain compile's are; gdb stops in a function
    of each partition on its MARK line."""
    from test_build_debug import DEBUG, GDB, check_with_gdb
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
    check_with_gdb(exe, marked_function_per_partition(tmp_path / "lib-g.o"))


CTORS = """#include <cstdio>
#include <string>
#include <vector>
static std::vector<std::string> &order() { static std::vector<std::string> v; return v; }
struct Reg {
  std::string name;
  explicit Reg(const char *n) : name(n) { order().push_back(name + "/" + std::to_string(order().size())); }
};
%s
int main() {
  for (const auto &n : order()) std::printf("%%s\\n", n.c_str());
  return 0;
}
"""


def ctor_source(path, names):
    path.write_text(CTORS % "".join(f'static Reg r_{n}("{n}");\n' for n in names))


def chunks_of(obj):
    syms = run([llvm_tool("llvm-nm"), obj]).stdout
    return set(re.findall(r"_GLOBAL__sub_I_\S+?\.c[0-9a-f]{8}\S*", syms))


def startup_bytes(obj):
    sections = run([llvm_tool("llvm-readelf"), "-SW", obj]).stdout
    return sum(int(ln.split()[-6], 16) for ln in sections.splitlines() if " .text.startup " in ln)


def test_native_module_constructor_in_chunks(tmp_path):
    """A C++ source with many namespace-scope objects: its one constructor calls an
    initializer per object, which the plain compile inlines into it. Split, the
    constructor's calls go in order into chunks (ctor_chunks.h), each owned whole by one
    partition: the objects are built in the plain order, .text.startup is smaller than with
    the constructor whole (--no-ctor-chunks) and near the plain compile's, and adding one
    object renames at most the chunks around it; with -g too, each chunk with a subprogram
    of its own that llvm-dwarfdump --verify accepts."""
    names = [f"o{i}" for i in range(600)]
    src = tmp_path / "ctors.cpp"
    ctor_source(src, names)
    obj, plain = tmp_path / "ctors.o", tmp_path / "plain.o"
    mtpc_compile(tmp_path, compile_cmd(src, obj), "--cost-threshold", "0")
    run(compile_cmd(src, plain))
    assert len(partition_runs(obj)) >= 2
    first = chunks_of(obj)
    assert len(first) >= 4, first
    whole = tmp_path / "whole.o"
    mtpc_compile(tmp_path, compile_cmd(src, whole), "--cost-threshold", "0", "--split-arg", "--no-ctor-chunks")
    assert not chunks_of(whole)
    # each chunk sets up what the plain constructor set up once (600 objects in 32 chunks:
    # +5%); the initializers apart cost more
    assert startup_bytes(obj) <= startup_bytes(plain) * 1.10, (startup_bytes(obj), startup_bytes(plain))
    assert startup_bytes(obj) < startup_bytes(whole), (startup_bytes(obj), startup_bytes(whole))
    outs = {}
    for o in (obj, plain, whole):
        exe = tmp_path / f"{o.stem}.exe"
        run([llvm_tool("clang++"), "-fuse-ld=lld", o, "-o", exe])
        outs[o.stem] = run([exe]).stdout
    assert outs["ctors"] == outs["plain"] == outs["whole"] and outs["ctors"].count("\n") == 600
    # one object more, in the middle: the other chunks keep their names
    ctor_source(src, names[:300] + ["added"] + names[300:])
    mtpc_compile(tmp_path, compile_cmd(src, obj), "--cost-threshold", "0")
    second = chunks_of(obj)
    assert len(first - second) <= 2 and len(second - first) <= 2, (first ^ second)
    exe = tmp_path / "edited.exe"
    run([llvm_tool("clang++"), "-fuse-ld=lld", obj, "-o", exe])
    assert "added/300" in run([exe]).stdout
    # with debug info too: each chunk its own subprogram, the calls their lines
    gobj = tmp_path / "g.o"
    ctor_source(src, names)
    mtpc_compile(tmp_path, compile_cmd(src, gobj, "-g"), "--cost-threshold", "0")
    assert len(chunks_of(gobj)) >= 4
    run([llvm_tool("clang++"), "-fuse-ld=lld", gobj, "-o", tmp_path / "g.exe"])
    assert run([tmp_path / "g.exe"]).stdout == outs["plain"]
    for f in (gobj, tmp_path / "g.exe"):
        v = run([llvm_tool("llvm-dwarfdump"), "--verify", f], check=False)
        assert v.returncode == 0 and "No errors" in v.stdout, v.stdout[-2000:]
    info = run([llvm_tool("llvm-dwarfdump"), "--debug-info", gobj]).stdout
    assert re.search(r'DW_AT_name\s.*"_GLOBAL__sub_I_ctors\.cpp\.c[0-9a-f]{8}"', info)


DROPPED_COPIES = {
    "c": """#include <stdio.h>
typedef int (*fn)(int);
%s
%s
int main(int argc, char **argv) {
  (void)argv;
  long sum = 0;
%s
  printf("%%ld\\n", sum);
  return 0;
}
""",
    "cpp": """#include <cstdio>
%s
%s
int main(int argc, char **argv) {
  (void)argv;
  long sum = 0;
%s
  std::printf("%%ld\\n", sum);
  return 0;
}
"""}


@pytest.mark.parametrize("lang,gz", [("c", []), ("cpp", []), ("c", ["-gz"]), ("cpp", ["-gz=zstd"])])
def test_native_debug_info_of_dropped_copies(lang, gz, tmp_path):
    """Copies the merge's ld -r drops leave no DIE at address 0. Several partitions carry
    one COMDAT copy each of a function (C: a static whose address they take; C++: an
    inline function), the link keeps the first: the debug info of the others is marked
    dead (the tombstone, all ones), so llvm-dwarfdump --verify accepts the object and the
    program (two dropped copies in one unit at address 0 overlap, which it rejects), and
    gdb stops once in each function, in the kept copy. With -gz too: the partitions write
    their debug sections plain for the merge to mark, and its ld -r compresses them."""
    if lang == "c":
        helpers = "".join(f"static int h{j}(int x) {{ return x * {j + 3} + {j}; }}\n" for j in range(4))
        take = "fn"
    else:
        helpers = "".join(f"__attribute__((noinline)) inline int h{j}(int x) {{ return x * {j + 3} + {j}; }}\n"
                          for j in range(4))
        take = "int (*)(int)"
    funcs = "".join(f"__attribute__((noinline)) long use{i}(int x) {{ {take} f[] = {{h0, h1, h2, h3}}; "
                    f"long s = 0; for (int k = 0; k < x; k++) s += f[(k + {i}) & 3](k) + h{i % 4}(k); "
                    f"return s; }}\n" for i in range(32))
    if lang == "cpp":
        funcs = funcs.replace(f"{take} f[]", "int (*f[])(int)")
    body = "".join(f"  sum += use{i}(argc + {i});\n" for i in range(32))
    src = tmp_path / f"copies.{lang}"
    src.write_text(DROPPED_COPIES[lang] % (helpers, funcs, body))
    obj, plain = tmp_path / "copies.o", tmp_path / "plain.o"
    mtpc_compile(tmp_path, compile_cmd(src, obj, "-g", *gz), "--cost-threshold", "0")
    run(compile_cmd(src, plain, "-g", *gz))
    assert len(partition_runs(obj)) >= 2
    parts = sorted(pathlib.Path(f"{obj}.mtpc").glob("mod/*/p*.o"))
    groups = [set(re.findall(r"\[((?:_Z2)?h\d\S*)\]", run([llvm_tool("llvm-readelf"), "-g", p]).stdout))
              for p in parts]
    dropped = [g for i, gs in enumerate(groups) for g in gs if any(g in e for e in groups[:i])]
    assert len(dropped) >= 2, f"no partition carries a copy the link drops: {groups}"
    exe = tmp_path / "prog"
    driver = llvm_tool("clang++" if lang == "cpp" else "clang")
    run([driver, "-fuse-ld=lld", obj, "-o", exe])
    for f in (obj, exe):
        v = run([llvm_tool("llvm-dwarfdump"), "--verify", f], check=False)
        assert v.returncode == 0 and "No errors" in v.stdout, v.stdout[-2000:]
    info = run([llvm_tool("llvm-dwarfdump"), "--debug-info", obj]).stdout
    assert "dead code" in info
    sections = run([llvm_tool("llvm-readelf"), "-SW", obj]).stdout
    debug_info = [ln for ln in sections.splitlines() if " .debug_info " in ln]
    assert debug_info and ("C" in debug_info[0].split()[-4]) == bool(gz), sections
    run([driver, "-fuse-ld=lld", plain, "-o", tmp_path / "plainprog"])
    assert run([exe]).stdout == run([tmp_path / "plainprog"]).stdout
    from test_build_debug import GDB
    if not GDB:
        pytest.skip("gdb not installed")
    for j in range(4):
        name = f"h{j}" if lang == "c" else f"h{j}(int)"
        g = run(["gdb", "-batch", "-ex", f"break {name}", "-ex", "info breakpoints", exe],
                check=False).stdout
        line = j + 3 if lang == "c" else j + 2
        assert re.search(rf"Breakpoint 1 at 0x[0-9a-f]+: file .*copies\.{lang}, line {line}\.", g), g


def test_native_split_dwarf_merged(tmp_path):
    """-g -gsplit-dwarf with --merge-dwo: one skeleton unit per partition in the object, all
    naming the one .dwo the plain compile writes, which holds their split units (one string
    offsets table and one list table each, shared: what gdb reads). llvm-dwarfdump --verify
    accepts both; every skeleton's DWO id is in the .dwo; no other .dwo appears beside the
    object; gdb stops in a function of each partition on its MARK line and lists its
    parameters and locals from the unit's own strings and location lists; llvm-dwp given
    the .dwo files indexes every unit; the same compile from nothing writes the same .dwo."""
    from test_build_debug import DEBUG, GDB, check_with_gdb, gdb, skeletons, split_ids
    flags = ["-g", "-gsplit-dwarf"]
    w = tmp_path / "w"
    w.mkdir()
    for f in [*DEBUG.glob("*.c"), *DEBUG.glob("*.h")]:
        shutil.copy(f, w)
    dwos = []
    for again in (0, 1):
        if again:  # from nothing again: the same bytes
            shutil.rmtree(w / "lib.o.mtpc")
            (w / "plans.sqlite").unlink()
        objs = []
        for src in sorted(w.glob("*.c")):
            obj = pathlib.Path(f"{src.stem}.o")
            r = mtpc_compile(w, compile_cmd(src, obj, *flags), "--cost-threshold", "0", "--merge-dwo", cwd=w)
            objs.append(w / obj)
            if src.stem == "lib":
                assert re.search(r"lib\.o: [2-9] partitions", r.stdout), r.stdout
        dwos.append((w / "lib.dwo").read_bytes())
    assert dwos[0] == dwos[1], "the same compile, another .dwo"
    assert sorted(p.name for p in w.glob("*.dwo")) == ["calc.dwo", "lib.dwo", "main.dwo"]
    skel = skeletons(w / "lib.o")
    assert len(skel) >= 2 and {name for _, name in skel} == {"lib.dwo"}, skel
    for f in (w / "lib.o", w / "lib.dwo"):
        v = run([llvm_tool("llvm-dwarfdump"), "--verify", f], check=False)
        assert v.returncode == 0 and "No errors" in v.stdout, v.stdout[-2000:]
    assert split_ids(w / "lib.dwo") == sorted(i for i, _ in skel)
    dwp = w / "all.dwp"
    run([llvm_tool("llvm-dwp"), *sorted(w.glob("*.dwo")), "-o", dwp])
    index = run([llvm_tool("llvm-dwarfdump"), "--debug-cu-index", dwp]).stdout
    assert all(i in index for i, _ in skel), index
    exe = w / "dbg"
    run([llvm_tool("clang"), "-fuse-ld=lld", *objs, "-o", exe])
    if not GDB:
        pytest.skip("gdb not installed")
    funcs = marked_function_per_partition(w / "lib.o")
    check_with_gdb(exe, funcs, src_dir=w)
    for f in funcs:
        out = gdb(exe, f"info scope {f}")
        assert re.search(r"Symbol \w+ is", out), f"{f}: no parameters or locals\n{out}"
        assert "out of range" not in out and "Dwarf Error" not in out, out


def test_native_split_dwarf_merge_falls_back(tmp_path):
    """A partition's .dwo the merge cannot take (DWARF 4 units, which a clang wrapper puts
    in place of p1's): one warning, and the plain compile's object and .dwo, byte for
    byte."""
    src = big_source(tmp_path / "big.c")
    flags = ["-g", "-gsplit-dwarf"]
    run(compile_cmd(src, pathlib.Path("mc.o"), *flags), cwd=tmp_path)
    plain = {x: (tmp_path / f"mc.{x}").read_bytes() for x in ("o", "dwo")}
    for x in ("o", "dwo"):
        (tmp_path / f"mc.{x}").unlink()
    # DWARF 4 split units, which p1's compile writes in place of its own
    (tmp_path / "v4.c").write_text("int v4(int x) { return x * 3; }\n")
    run([llvm_tool("clang"), "-O2", "-g", "-gdwarf-4", "-gsplit-dwarf", "-c", "v4.c", "-o", "v4.o"],
        cwd=tmp_path)
    clang = tmp_path / "clang"
    clang.write_text(f"""#!/bin/sh
'{llvm_tool('clang')}' "$@" || exit
p1=; a1=; a2=
for a; do
  case $a in */p1.bc) p1=1;; esac
  [ "$a2" = -split-dwarf-output ] && dwo=$a
  a2=$a1; a1=$a
done
[ -n "$p1" ] && cp '{tmp_path / "v4.dwo"}' "$dwo"
exit 0
""")
    clang.chmod(0o755)
    cmd = [clang, *compile_cmd(src, pathlib.Path("mc.o"), *flags)[1:]]
    r = mtpc_compile(tmp_path, cmd, "--cost-threshold", "0", "--merge-dwo", cwd=tmp_path)
    warnings = [ln for ln in (r.stdout + r.stderr).splitlines() if "warning" in ln]
    assert len(warnings) == 1 and "split DWARF could not be merged" in warnings[0] and \
        "p1.dwo: it is not DWARF 5" in warnings[0], r.stdout + r.stderr
    assert "error" not in r.stdout + r.stderr, r.stdout + r.stderr
    for x in ("o", "dwo"):
        assert (tmp_path / f"mc.{x}").read_bytes() == plain[x], f"mc.{x} is not the plain compile's"


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
    # --busy ignore: with -j2, main.c's compile may be on the work board when big.c's
    # decides, which then splits it in fewer partitions (test_build_busy.py tests that)
    cc = (f"{tool('mtpc-compile')} --cost-threshold 40 --partitions 4 --busy ignore --cache "
          f"{tmp_path}/plans.sqlite -- {llvm_tool('clang')}")
    (tmp_path / "Makefile").write_text(MAKEFILE.format(cc=cc, clang=llvm_tool("clang")))
    r = run(["make", "-j2"], cwd=tmp_path, env=dict(os.environ, MAKEFLAGS=""))
    assert re.search(r"mtpc-compile: big\.o: 4 partitions", r.stdout), r.stdout
    assert "mtpc-compile: main.o" not in r.stdout
    ref = tmp_path / "ref"
    run([llvm_tool("clang"), "-O2", "-fuse-ld=lld", tmp_path / "big.c", tmp_path / "main.c",
         "-o", ref])
    assert run([tmp_path / "app"], check=False).returncode == run([ref], check=False).returncode


def ccache_env(tmp_path, **more):
    ccache = shutil.which("ccache")
    if not ccache:
        pytest.skip("ccache not installed (scripts/install-deps.sh)")
    env = dict(os.environ, CCACHE_DIR=str(tmp_path / "ccache"), CCACHE_NOHASHDIR="1",
               CCACHE_BASEDIR=str(tmp_path), **more)
    for k in ("CCACHE_PREFIX", "MTPC_COMPILE_OPTIONS", "CCACHE_DISABLE"):
        env.pop(k, None) if k not in more else None
    env.pop("MAKEFLAGS", None)
    return ccache, env


def ccache_stats(ccache, env):
    """(hits, misses) of ccache's statistics (direct and preprocessed hits together)."""
    out = run([ccache, "--print-stats"], env=env).stdout
    stat = dict(ln.split("\t", 1) for ln in out.splitlines() if "\t" in ln)
    hits = int(stat.get("direct_cache_hit", 0)) + int(stat.get("preprocessed_cache_hit", 0))
    return hits, int(stat.get("cache_miss", 0))


def split_into(obj):
    """Partitions of the last split of obj's compile (its inner build), None if never."""
    n = list(pathlib.Path(f"{obj}.mtpc").glob("mod/*/split.n"))
    return int(n[0].read_text().split()[0]) if n else None


def test_ccache_prefix(tmp_path):
    """CCACHE_PREFIX=mtpc-compile (its options from MTPC_COMPILE_OPTIONS and MTPC_*): a
    miss runs the split; a hit runs nothing of MTPC and gives the same object. Under
    ccache, which replays a compile's output on every hit, mtpc-compile prints nothing of
    its own: the compile's messages only."""
    ccache, env = ccache_env(tmp_path, CCACHE_PREFIX=tool("mtpc-compile"),
                             MTPC_COMPILE_OPTIONS=f"--cache={tmp_path}/plans.sqlite --partitions=4",
                             MTPC_SPLIT_COST="0")
    src = big_source(tmp_path / "big.c")
    obj = tmp_path / "big.o"
    r = run([ccache, *compile_cmd(src, obj)], env=env)
    assert split_into(obj) == 4 and "mtpc" not in r.stdout + r.stderr, r.stdout + r.stderr
    first = obj.read_bytes()
    obj.unlink()
    log = pathlib.Path(f"{obj}.mtpc") / ".ninja_log"
    before = log.stat().st_mtime_ns
    run([ccache, *compile_cmd(src, obj)], env=env)
    assert obj.read_bytes() == first and log.stat().st_mtime_ns == before
    assert ccache_stats(ccache, env) == (1, 1)


CCACHE_PROJECT = """cmake_minimum_required(VERSION 3.20)
project(cc C)
find_package(MTPC REQUIRED)
add_executable(app big.c small.c)
mtpc_enable(app NO_LTO)
"""


def test_thinlto_link_packs_a_merged_dwo(tmp_path):
    """A -gsplit-dwarf ThinLTO link through mtpc-link that takes a plain compile's object
    split with --merge-dwo: llvm-dwp -e would stop at that .dwo's second unit (it reads
    the file once per skeleton naming it); the dwp step lists each .dwo once, and the
    package holds every unit the program's skeletons name."""
    from test_build_debug import skeletons, split_ids
    (tmp_path / "main.c").write_text("int f0(int);\nint main(int argc, char **argv) "
                                     "{ (void)argv; return f0(argc) & 1; }\n")
    big_source(tmp_path / "lib.c")
    lib = tmp_path / "lib.c"
    lib.write_text(lib.read_text().replace("int main(", "int lib_main("))
    r = mtpc_compile(tmp_path, compile_cmd(pathlib.Path("lib.c"), "lib.o", "-g", "-gsplit-dwarf"),
                     "--cost-threshold", "0", "--merge-dwo", cwd=tmp_path)
    assert "lib.o: 4 partitions" in r.stdout, r.stdout
    run([llvm_tool("clang"), "-O2", "-g", "-gsplit-dwarf", "-flto=thin", "-c", "main.c", "-o", "main.o"],
        cwd=tmp_path)
    run([tool("mtpc-link"), "--cache", tmp_path / "plans.sqlite", "--", llvm_tool("clang"), "-O2",
         "-flto=thin", "-fuse-ld=lld", "-gsplit-dwarf", "main.o", "lib.o", "-o", "app"], cwd=tmp_path)
    skel = skeletons(tmp_path / "app")
    assert len(skel) >= 5 and sum(n == "lib.dwo" for _, n in skel) == 4, skel
    assert split_ids(tmp_path / "app.dwp") == sorted(i for i, _ in skel)


def two_source_project(src):
    """CCACHE_PROJECT in src: big.c (400 functions, costly) and small.c."""
    src.mkdir()
    big_source(src / "big.c", funcs=400)
    (src / "big.c").write_text((src / "big.c").read_text().replace("int main(", "int big_main("))
    (src / "small.c").write_text("int big_main(int, char **);\n"
                                 "int main(int c, char **v) { return big_main(c, v) == 7; }\n")
    (src / "CMakeLists.txt").write_text(CCACHE_PROJECT)
    return src


@pytest.mark.parametrize("launcher", ["ccache;{mtpc}", "ccache", None])
def test_cmake_no_lto_and_ccache(launcher, tmp_path):
    """mtpc_enable(app NO_LTO): the target keeps its plain compiles and its own link; its
    costly compile is split into native partitions. With ccache as its launcher (alone or
    as "ccache;mtpc-compile"), ccache runs first and mtpc-compile behind it: a rebuild
    from a clean tree hits for every compile as the plain build's does, and runs no
    split."""
    from test_build_cmake_compat import configure
    src = two_source_project(tmp_path / "src")
    extra = ["-DMTPC_SPLIT_COST=1000"]
    env = None
    if launcher:
        ccache, env = ccache_env(tmp_path)
        extra.append("-DCMAKE_C_COMPILER_LAUNCHER=" + launcher.format(mtpc=tool("mtpc-compile")))
    b = tmp_path / "b"
    r = configure(src, b, extra)
    assert "keeps its C compiler launcher" not in r.stdout, r.stdout
    out = run(["cmake", "--build", b], env=env)
    log = out.stdout + out.stderr
    obj = b / "CMakeFiles" / "app.dir" / "big.c.o"
    assert split_into(obj) == 2, log
    assert split_into(b / "CMakeFiles" / "app.dir" / "small.c.o") is None, log
    assert "mtpc-link" not in log and ("partitions" in log) == (launcher is None), log
    assert not obj.read_bytes().startswith(b"BC"), "a bitcode object without LTO"
    assert run([b / "app"], check=False).returncode in (0, 1)
    if not launcher:
        return
    assert ccache_stats(ccache, env) == (0, 2)
    run(["cmake", "--build", b, "--target", "clean"], env=env)
    inner_log = pathlib.Path(f"{obj}.mtpc") / ".ninja_log"
    before = inner_log.stat().st_mtime_ns
    run(["cmake", "--build", b], env=env)
    assert ccache_stats(ccache, env) == (2, 2)
    assert inner_log.stat().st_mtime_ns == before, "a hit ran the split"


def test_cmake_merge_dwo(tmp_path):
    """mtpc_enable(app NO_LTO) with -gsplit-dwarf: not split by default; with
    MTPC_MERGE_DWO=ON (set after the first build) the big compile is split, and only it
    reruns, its one .dwo holding a unit per partition, as its skeletons say; the program
    runs as before."""
    from test_build_cmake_compat import configure
    from test_build_debug import skeletons, split_ids
    src = two_source_project(tmp_path / "src")
    b = tmp_path / "b"
    flags = ["-DMTPC_SPLIT_COST=1000", "-DCMAKE_C_FLAGS=-g -gsplit-dwarf", "-DMTPC_MAX_PARTITIONS=3"]
    configure(src, b, flags)
    log = run(["cmake", "--build", b]).stdout
    obj = b / "CMakeFiles" / "app.dir" / "big.c.o"
    dwo = obj.with_suffix(".dwo")
    assert split_into(obj) is None and dwo.exists(), log
    assert len(skeletons(obj)) == 1
    configure(src, b, [*flags, "-DMTPC_MERGE_DWO=ON"])
    log = run(["cmake", "--build", b, "-v"]).stdout
    assert split_into(obj) == 3, log
    assert not re.search(r"-c \S*small\.c\b", log) and re.search(r"-c \S*big\.c\b", log), \
        f"not only the compile the option concerns reran:\n{log}"
    skel = skeletons(obj)
    assert len(skel) == 3 and {n for _, n in skel} == {str(dwo.relative_to(b))}, skel
    assert split_ids(dwo) == sorted(i for i, _ in skel)
    assert run([b / "app"], check=False).returncode in (0, 1)


PCH_PROJECT = """cmake_minimum_required(VERSION 3.20)
project(pch CXX)
find_package(MTPC REQUIRED)
add_executable(app {sources} main.cpp)
target_precompile_headers(app PRIVATE common.h)
set_target_properties(app PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 0)
{enable}
"""


def pch_sources(src, n=6):
    """A C++ program of n sources whose common header is the precompiled one: templates,
    strings and maps, each source a namespace of functions over them."""
    (src / "common.h").write_text(
        "#pragma once\n#include <map>\n#include <string>\n#include <vector>\n#include <cstdio>\n"
        "template <class T> struct Fold { T z; void add(T x) { z = z * 31 + x; } };\n"
        "inline int fold(const std::vector<int> &v, int z) { Fold<int> f{z}; "
        "for (int x : v) f.add(x); return f.z; }\n")
    for k in range(n):
        body = "".join(
            f"int g{i}(int x) {{ std::vector<int> v; std::map<std::string, int> m; "
            f"for (int j = 0; j < x % 50 + {i}; j++) {{ v.push_back(j * {k + i + 2}); "
            f"m[std::to_string(j % {i + 3})] += j; }} return fold(v, {i}) + (int)m.size(); }}\n"
            for i in range(30))
        (src / f"s{k}.cpp").write_text(f'#include "common.h"\nnamespace n{k} {{\n{body}}}\n'
                                       f"int s{k}_all(int x) {{ int t = 0; "
                                       + " ".join(f"t += n{k}::g{i}(x + t);" for i in range(30))
                                       + " return t; }\n")
    decl = "".join(f"int s{k}_all(int);\n" for k in range(n))
    calls = " + ".join(f"s{k}_all(argc + {k})" for k in range(n))
    (src / "main.cpp").write_text(f'#include "common.h"\n{decl}int main(int argc, char **) '
                                  f'{{ std::printf("%d\\n", {calls}); return 0; }}\n')
    return " ".join(f"s{k}.cpp" for k in range(n))


@pytest.mark.parametrize("mode", ["NO_LTO", "LTO"])
def test_unity_build_with_pch_is_split(mode, tmp_path):
    """A unity build with a precompiled header (target_precompile_headers: -Xclang
    -include-pch), as real C++ projects build: the unity compile is split (the PCH is an
    input of the frontend step only), in both modes, and the program prints what the
    build without MTPC prints."""
    from test_build_cmake_compat import configure
    src = tmp_path / "src"
    src.mkdir()
    sources = pch_sources(src)
    outs = {}
    for name, enable in (("plain", ""), ("mtpc", f"mtpc_enable(app {mode})")):
        (src / "CMakeLists.txt").write_text(PCH_PROJECT.format(sources=sources, enable=enable))
        b = tmp_path / name
        configure(src, b, ["-DMTPC_SPLIT_COST=300", "-DMTPC_MAX_PARTITIONS=4"])
        log = run(["cmake", "--build", b]).stdout
        unity = next((b / "CMakeFiles" / "app.dir").rglob("unity_*_cxx.cxx.o"))
        assert "-include-pch" in (b / "build.ninja").read_text()
        if name == "mtpc":
            assert split_into(unity) == 4, log
            assert re.search(r"mtpc-compile: unity_\d+_cxx\.cxx\.o: 4 partitions", log), log
        outs[name] = run([b / "app"]).stdout
    assert outs["mtpc"] == outs["plain"]


def test_native_cost_measured_from_the_previous_object(tmp_path):
    """A plain compile's first cost is estimated from its source's bytes; the next compile's
    is measured from the previous object's code bytes (a header-heavy source is estimated
    low and measured high), and a threshold between the two splits only the second."""
    src = tmp_path / "big.cpp"
    (tmp_path / "heavy.h").write_text("".join(
        f"template <int N> inline int h{i}(int x) {{ int s = x; for (int k = 0; k < x; k++) "
        f"s = s * (N + {i}) + k; return s; }}\n" for i in range(200)))
    src.write_text('#include "heavy.h"\n' + "".join(
        f"int f{i}(int x) {{ return h{i}<{i}>(x) + h{(i + 1) % 200}<{i}>(x); }}\n" for i in range(200)))
    obj = tmp_path / "big.o"
    r1 = mtpc_compile(tmp_path, compile_cmd(src, obj), "--cost-threshold", "3000")
    assert "mtpc-compile" not in r1.stdout and not pathlib.Path(f"{obj}.mtpc").exists(), r1.stdout
    r2 = mtpc_compile(tmp_path, compile_cmd(src, obj), "--cost-threshold", "3000")
    assert re.search(r"big\.o: 4 partitions, cost \d+ instructions \(measured\)", r2.stdout), r2.stdout
