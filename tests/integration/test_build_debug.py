"""Debug info through MTPC (issue #3): -g and -gsplit-dwarf builds of the
sample tests/projects/debug, checked with gdb on functions that the split put
in different partitions (read from the plans in <target>.mtpc/mod/*/parts).

Expected lines come from the "MARK:<function>" comments in the sources: a
breakpoint on a function must stop on its MARK line, `info line` on it must
name its opening brace (the line before; the MARK line itself for a function
without prologue), `list` must show the MARK line with
its number. gdb 13 crashes on any DWARF 5 .dwp written by llvm-dwp 19 (plain
ThinLTO too), so gdb reads the .dwp in a -gdwarf-4 build, and the default
DWARF 5 .dwp is checked with llvm-dwarfdump and llvm-symbolizer instead."""
import json
import os
import pathlib
import re
import shutil

import pytest

from conftest import llvm_tool, run
from test_build_integration import PROJECTS, build, configure

DEBUG = PROJECTS / "debug"
GDB = shutil.which("gdb")


def marks(src_dir=DEBUG):
    """{function: (file name, MARK line)} from the sample's sources."""
    out = {}
    for src in sorted(src_dir.glob("*.c")):
        for n, line in enumerate(src.read_text().splitlines(), 1):
            m = re.search(r"MARK:(\w+) \*/", line)
            if m:
                out[m.group(1)] = (src.name, n)
    return out


MARKS = marks()
# Inlined into every caller: a breakpoint on it would not stop "in" it.
INLINED = {"lib_mix"}


def plans(build_dir):
    """{module file name: plan.json} of the split modules of dbg."""
    out = {}
    for p in (build_dir / "dbg.mtpc" / "mod").glob("*/parts/plan.json"):
        out[p.parent.parent.name.rsplit("-", 1)[0]] = json.loads(p.read_text())
    return out


def one_per_partition(build_dir):
    """One function with a MARK line per partition of every split module
    (module, partition index, function)."""
    picks = []
    for mod, plan in sorted(plans(build_dir).items()):
        for part in plan["partitions"]:
            owned = [f for f in part["owned"] if f in MARKS and f not in INLINED]
            if owned:
                picks.append((mod, part["index"], sorted(owned)[0]))
    return picks


def configure_debug(build_dir, flags, mtpc=True, extra=()):
    configure(DEBUG, build_dir, mtpc=mtpc,
              extra=["-DCMAKE_BUILD_TYPE=RelWithDebInfo", f"-DCMAKE_C_FLAGS={flags}", *extra])
    return build(build_dir).stdout


def gdb(exe, *commands):
    cmd = [GDB, "-batch", "-nx"]
    for c in commands:
        cmd += ["-ex", c]
    r = run(cmd + [exe], check=False, cwd=pathlib.Path(exe).parent)
    out = r.stdout + r.stderr
    assert "Fatal signal" not in out and "internal to GDB" not in out, out
    return out


def check_with_gdb(exe, funcs, src_dir=DEBUG):
    """Breakpoints on funcs stop on their MARK lines; `info line` and `list`
    agree with the source (the sample's, or an edited copy in src_dir)."""
    marks_now = marks(src_dir)
    cmds = [f"tbreak {f}" for f in funcs] + ["run"] + ["continue"] * (len(funcs) - 1)
    for f in funcs:
        cmds += [f"info line {f}", f"list {f}"]
    out = gdb(exe, *cmds)
    hits = {m.group(1): (pathlib.Path(m.group(2)).name, int(m.group(3))) for m in re.finditer(
        r"^Temporary breakpoint \d+, (\w+) \(.*\) at (\S+):(\d+)$", out, re.M)}
    for f in funcs:
        assert hits.get(f) == marks_now[f], f"{f}: stopped at {hits.get(f)}, MARK is {marks_now[f]}\n{out}"
        file, line = marks_now[f]
        brace = line - 1
        assert (src_dir / file).read_text().splitlines()[brace - 1].strip() == "{", f
        # The entry belongs to the brace's line, or to the MARK line when
        # the function has no prologue (lib_trace).
        assert re.search(rf'^Line ({brace}|{line}) of "\S*/{re.escape(file)}" starts at '
                         rf'address 0x[0-9a-f]+ <{f}(\+\d+)?>', out, re.M), f"info line {f}\n{out}"
        assert re.search(rf"^{line}\s.*MARK:{f} \*/$", out, re.M), f"list {f}\n{out}"
    return out


def require_gdb():
    if not GDB:
        pytest.skip("gdb not installed")


def dwarfdump(*args):
    return run([llvm_tool("llvm-dwarfdump"), *args]).stdout


def skeletons(obj):
    """[(DWO id, dwo name)] of the skeleton CUs of an object or executable
    (DWARF 5: DW_UT_skeleton units; DWARF 4: DW_AT_GNU_dwo_* attributes)."""
    text = dwarfdump("--debug-info", obj)
    out = []
    for unit in text.split("Compile Unit:")[1:]:
        name = re.search(r'DW_AT_(?:GNU_)?dwo_name\s+\("([^"]*)"\)', unit)
        if not name:
            continue
        dwo_id = re.search(r"DWO_id = (0x[0-9a-f]+)|DW_AT_GNU_dwo_id\s+\((0x[0-9a-f]+)\)", unit)
        out.append((dwo_id.group(1) or dwo_id.group(2), name.group(1)))
    return out


def split_ids(dwp):
    """DWO ids of the split CUs in a .dwp (DWARF 5 or 4)."""
    text = dwarfdump("--debug-info", dwp)
    v5 = re.findall(r"unit_type = DW_UT_split_compile.*DWO_id = (0x[0-9a-f]+)", text)
    v4 = re.findall(r"DW_AT_GNU_dwo_id\s+\((0x[0-9a-f]+)\)", text)
    return sorted(v5 + v4)


class moved_away:
    """Rename the inner build dir for a while, so that only the .dwp (not the
    .dwo files it holds) can give a debugger the split debug info."""

    def __init__(self, d):
        self.d, self.away = d, d.with_name(d.name + ".away")

    def __enter__(self):
        self.d.rename(self.away)

    def __exit__(self, *exc):
        self.away.rename(self.d)


# ---- -g ----

@pytest.fixture(scope="module")
def g_build(tmp_path_factory):
    b = tmp_path_factory.mktemp("debug-g") / "b"
    out = configure_debug(b, "")
    return b, out


def test_g_sample_is_split_across_partitions(g_build):
    b, out = g_build
    assert "calc.c.o: 4 partitions" in out, out
    picks = one_per_partition(b)
    calc = [p for p in picks if p[0] == "calc.c.o"]
    assert len(calc) >= 3, picks


def test_g_each_partition_object_keeps_its_debug_info(g_build):
    b, _ = g_build
    (moddir,) = (b / "dbg.mtpc" / "mod").glob("calc.c.o-*")
    plan = plans(b)["calc.c.o"]
    for part in plan["partitions"]:
        info = dwarfdump("--debug-info", moddir / f"p{part['index']}.o")
        assert re.search(r'DW_AT_name\s+\("[^"]*calc\.c"\)', info)
        for f in part["owned"]:
            assert re.search(rf'DW_AT_name\s+\("{f}"\)', info), (part["index"], f)
    merged = dwarfdump("--debug-info", moddir / "native.o")
    for f in MARKS:
        if f.startswith("calc_"):
            assert re.search(rf'DW_AT_name\s+\("{f}"\)', merged), f


def test_g_gdb_breakpoints_in_every_partition(g_build):
    require_gdb()
    b, _ = g_build
    funcs = [f for _, _, f in one_per_partition(b)]
    check_with_gdb(b / "dbg", funcs)


# ---- -gsplit-dwarf ----

def check_split_build(b, dwarf4):
    inner = b / "dbg.mtpc"
    mods = inner / "mod"
    exe_skel = skeletons(b / "dbg")
    assert exe_skel, "no skeleton CUs in dbg"
    for mod, plan in plans(b).items():
        (d,) = mods.glob(mod + "-*")
        for part in plan["partitions"]:
            i = part["index"]
            dwo = d / f"p{i}.dwo"
            assert dwo.stat().st_size > 0, dwo
            # The skeleton of each partition names its own .dwo (absolute).
            names = {n for _, n in skeletons(d / f"p{i}.o")}
            assert names == {str(dwo)}, (names, dwo)
    names = {n for _, n in exe_skel}
    assert all(pathlib.Path(n).is_file() for n in names), names
    dwp = b / "dbg.dwp"
    assert dwp.stat().st_size > 0
    assert split_ids(dwp) == sorted(i for i, _ in exe_skel)
    version = dwarfdump("--debug-info", dwp).count("version = 0x0004")
    assert bool(version) == dwarf4
    # No plain-ThinLTO leftovers: the final link does no LTO, so no dbg_dwo/.
    assert not (b / "dbg_dwo").exists()
    r = run(["ninja", "-C", inner, "-n", "-d", "explain"])
    assert "no work to do" in r.stdout, r.stdout + r.stderr


@pytest.fixture(scope="module")
def split4_build(tmp_path_factory):
    b = tmp_path_factory.mktemp("debug-split4") / "b"
    out = configure_debug(b, "-gsplit-dwarf -gdwarf-4")
    return b, out


def test_split_dwarf4_dwo_per_partition_and_dwp(split4_build):
    b, out = split4_build
    assert "calc.c.o: 4 partitions" in out, out
    check_split_build(b, dwarf4=True)


def test_split_dwarf4_gdb_reads_the_dwp(split4_build):
    require_gdb()
    b, _ = split4_build
    funcs = [f for _, _, f in one_per_partition(b)]
    with moved_away(b / "dbg.mtpc"):
        check_with_gdb(b / "dbg", funcs)


@pytest.fixture(scope="module")
def split5_build(tmp_path_factory):
    b = tmp_path_factory.mktemp("debug-split5") / "b"
    out = configure_debug(b, "-gsplit-dwarf")
    return b, out


def test_split_dwarf5_dwo_per_partition_and_dwp(split5_build):
    b, out = split5_build
    assert "calc.c.o: 4 partitions" in out, out
    check_split_build(b, dwarf4=False)


def test_split_dwarf5_gdb_reads_the_dwo_files(split5_build):
    require_gdb()
    b, _ = split5_build
    funcs = [f for _, _, f in one_per_partition(b)]
    dwp = b / "dbg.dwp"
    hidden = dwp.with_name("dbg.dwp.hidden")
    dwp.rename(hidden)  # gdb 13 crashes on DWARF 5 packages (see the top)
    try:
        check_with_gdb(b / "dbg", funcs)
    finally:
        hidden.rename(dwp)


def test_split_dwarf5_symbolizer_reads_the_dwp(split5_build):
    b, _ = split5_build
    nm = run([llvm_tool("llvm-nm"), "--defined-only", b / "dbg"]).stdout
    # Functions the split promoted keep a local ".mtpc.<hash>" symbol.
    addr = {l.split()[2].split(".mtpc.")[0]: l.split()[0]
            for l in nm.splitlines() if len(l.split()) == 3}
    funcs = [f for _, _, f in one_per_partition(b)]
    with moved_away(b / "dbg.mtpc"):
        out = run([llvm_tool("llvm-symbolizer"), "--obj", b / "dbg"] +
                  [f"0x{addr[f]}" for f in funcs]).stdout
    blocks = [blk.split("\n") for blk in out.strip().split("\n\n")]
    assert len(blocks) == len(funcs), out
    for f, blk in zip(funcs, blocks):
        file, line = MARKS[f]
        # The name comes from the symbol table: a promoted function keeps
        # its ".mtpc.<hash>" suffix there (see docs/build-integration.md).
        assert blk[0].split(".mtpc.")[0] == f, out
        # The entry address belongs to the brace's line (or the MARK line).
        assert re.fullmatch(rf"\S*/{re.escape(file)}:({line - 1}|{line}):\d+", blk[1]), (f, blk)


def test_split_dwarf_edit_updates_dwo_and_dwp(tmp_path):
    """An edit of one function recompiles its partition, whose .dwo and the
    .dwp change; the other partitions' .dwo files are not rewritten."""
    src = tmp_path / "src"
    shutil.copytree(DEBUG, src)
    b = tmp_path / "b"
    configure(src, b, extra=["-DCMAKE_BUILD_TYPE=RelWithDebInfo", "-DCMAKE_C_FLAGS=-gsplit-dwarf"])
    build(b)
    (d,) = (b / "dbg.mtpc" / "mod").glob("calc.c.o-*")
    before = {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in d.glob("p*.dwo")}
    dwp = b / "dbg.dwp"
    dwp_before = dwp.read_bytes()
    calc = src / "calc.c"
    text = calc.read_text()
    # A new local variable on the same line: the function's debug info changes (a
    # constant would change only code; -g puts the source's MD5 in every partition's
    # line table, so every .o changes anyway, but only this partition's .dwo).
    calc.write_text(text.replace("n += lib_trace(8); /* MARK:calc_theta */",
                                 "{ volatile int t8 = 8; n += lib_trace(t8); } /* MARK:calc_theta */"))
    build(b)
    after = {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in d.glob("p*.dwo")}
    changed = sorted(n for n in after if after[n][1] != before[n][1])
    touched = sorted(n for n in after if after[n][0] != before[n][0])
    assert changed and changed == touched, (changed, touched)
    assert dwp.read_bytes() != dwp_before
    assert split_ids(dwp) == sorted(i for i, _ in skeletons(b / "dbg"))


@pytest.mark.parametrize("name", ["c", "cxx"])
def test_split_dwarf_samples_get_a_complete_dwp(tmp_path, name):
    """Archives, shared libraries and C++ (comdats, vtables, aliases) with debug info
    are split (no fallback to an unsplit backend) and leave a .dwp holding every .dwo
    the output names."""
    b = tmp_path / "b"
    configure(PROJECTS / name, b, extra=["-DCMAKE_BUILD_TYPE=RelWithDebInfo",
                                         "-DCMAKE_C_FLAGS=-gsplit-dwarf",
                                         "-DCMAKE_CXX_FLAGS=-gsplit-dwarf"])
    r = build(b)
    assert "compiling it unsplit" not in r.stdout + r.stderr, r.stdout + r.stderr
    assert "unsplit (fallback)" not in r.stdout + r.stderr
    outputs = ["app"] + [p.name for p in b.glob("lib*.so")]
    assert len(outputs) == 2, outputs
    for o in outputs:
        skel = skeletons(b / o)
        assert skel, o
        assert all(pathlib.Path(n).is_file() for _, n in skel), o
        assert split_ids(b / f"{o}.dwp") == sorted(i for i, _ in skel), o
        # The package reads as llvm-dwp's own (every DIE the same strings), minus the
        # string offsets of the type units llvm-dwp dropped (debugfix_package).
        ref = tmp_path / f"{o}.ref.dwp"
        run([llvm_tool("llvm-dwp"), "-e", b / o, "-o", ref])
        assert dwarfdump("--debug-info", b / f"{o}.dwp").split("\n", 1)[1] == \
            dwarfdump("--debug-info", ref).split("\n", 1)[1], o
        assert "No errors." in dwarfdump("--verify", b / f"{o}.dwp"), o
        trimmed, whole = (debug_bytes(f, ".debug_str_offsets.dwo") for f in (b / f"{o}.dwp", ref))
        if name == "cxx" and o == "app":  # 2 modules in 4 partitions: type units dropped
            assert trimmed < 0.6 * whole, (trimmed, whole)
        else:
            assert trimmed <= whole
    assert run([b / "app"], cwd=b, env=dict(os.environ, LD_LIBRARY_PATH=str(b))).returncode == 0


def test_split_dwarf_without_debug_info(tmp_path):
    """-gsplit-dwarf without -g: no skeleton in the output, llvm-dwp writes
    nothing (it only warns), the build still succeeds and stays up to date."""
    b = tmp_path / "b"
    configure(DEBUG, b, extra=["-DCMAKE_C_FLAGS=-gsplit-dwarf"])  # Release: no -g
    build(b)
    assert skeletons(b / "dbg") == []
    assert (b / "dbg.dwp").stat().st_size == 0
    assert run([b / "dbg"]).stdout.startswith("dbg ")
    r = run(["ninja", "-C", b / "dbg.mtpc", "-n", "-d", "explain"])
    assert "no work to do" in r.stdout, r.stdout + r.stderr


# ---- C++ types: DWARF type units, kept once by the final link ----

def debug_bytes(path, section=".debug"):
    """Bytes of the .debug_* sections (or of the one named section) of an object or executable."""
    out = run([llvm_tool("llvm-size"), "-A", path]).stdout
    rows = [l.split() for l in out.splitlines() if l.startswith(".debug")]
    return sum(int(f[1]) for f in rows if section == ".debug" or f[0] == section)


def units(path):
    """(type signatures of the type units, compile units, DW_TAG_imported_declaration
    DIEs) in the .debug_info of path."""
    text = dwarfdump("--debug-info", path)
    sigs = re.findall(r"^0x[0-9a-f]+: Type Unit: .*type_signature = (0x[0-9a-f]+)", text, re.M)
    cus = len(re.findall(r"^0x[0-9a-f]+: Compile Unit:", text, re.M))
    return sigs, cus, text.count("DW_TAG_imported_declaration")


@pytest.fixture(scope="module")
def cxx_g_builds(tmp_path_factory):
    """The C++ sample with -g: plain ThinLTO, MTPC (type units, the default), MTPC
    with MTPC_TYPE_UNITS=OFF, and MTPC linking with lld's --gdb-index; every module
    split into 4 partitions."""
    tmp = tmp_path_factory.mktemp("cxx-g")
    out = {}
    for name, mtpc, extra in (("thin", False, []), ("tu", True, []),
                              ("no-tu", True, ["-DMTPC_TYPE_UNITS=OFF"]),
                              ("gdb-index", True, ["-DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld -Wl,--gdb-index"])):
        b = tmp / name
        configure(PROJECTS / "cxx", b, mtpc=mtpc, extra=["-DCMAKE_BUILD_TYPE=RelWithDebInfo", *extra])
        r = build(b)
        if mtpc:
            assert "app: 2 modules, 2 split" in r.stdout, r.stdout
        out[name] = b
    return out


def test_cxx_types_are_kept_once_across_partitions(cxx_g_builds):
    thin, tu, no_tu = (cxx_g_builds[k] / "app" for k in ("thin", "tu", "no-tu"))
    sigs, cus, imports = units(tu)
    # Each C++ type is one type unit in the program, whichever partitions use it.
    assert len(sigs) > 20 and len(sigs) == len(set(sigs)), sigs
    assert cus == units(thin)[1] + 2 * 3    # 2 modules in 4 partitions each
    # The compile unit's using-declarations (<cstdlib>'s `using ::abs;`...) are
    # described by one partition of each module, as the unsplit module does once.
    assert imports == units(thin)[2] > 0
    assert units(no_tu)[0] == []
    assert "-fdebug-types-section" not in (no_tu.parent / "app.mtpc" / "build.ninja").read_text()
    size = {k: debug_bytes(v) for k, v in (("thin", thin), ("tu", tu), ("no-tu", no_tu))}
    assert size["tu"] < 0.85 * size["no-tu"], size
    assert size["tu"] < 1.45 * size["thin"], size


def test_cxx_no_type_units_with_a_gdb_index(cxx_g_builds):
    """lld's --gdb-index is built from the GNU name lists, which do not reach DWARF 5
    type units: gdb would find no C++ type of the program. So a link with it compiles
    its partitions without type units, and the index names every type. The merge keeps
    every function entry of the name lists there (the index must name each unit that has an
    inlined instance); without an index it keeps each name once per module."""
    b = cxx_g_builds["gdb-index"]
    assert "-fdebug-types-section" not in (b / "app.mtpc" / "build.ninja").read_text()
    assert "--names once" not in (b / "app.mtpc" / "build.ninja").read_text()
    assert "--names once" in (cxx_g_builds["tu"] / "app.mtpc" / "build.ninja").read_text()
    assert units(b / "app")[0] == []
    assert run([llvm_tool("llvm-readelf"), "-S", b / "app"]).stdout.count(".gdb_index") == 1
    if GDB:  # with no frame to start from, gdb looks the type up in the index
        out = gdb(b / "app", "ptype Animal")
        assert re.search(r"^type = struct Animal \{\n.*virtual std::string speak", out, re.M | re.S), out


def test_cxx_gdb_reads_types_from_type_units(cxx_g_builds):
    require_gdb()
    for name in ("tu", "thin", "gdb-index"):
        exe = cxx_g_builds[name] / "app"
        out = gdb(exe, "break (anonymous namespace)::Cat::speak", "run", "print *this",
                  "ptype Animal", "ptype *this")
        assert re.search(r"^Breakpoint 1, \(anonymous namespace\)::Cat::speak\b.*zoo\.cpp:10$", out,
                         re.M), out
        # Clang 21+ also describes a `static _vtable$` member (printed after
        # each class's fields); the rest is the same on 19 and 22.
        assert re.search(r"^\$1 = \{<Animal> = \{.*_vptr.Animal = .*\}, lives = 9(, static _vtable\$ = .*)?\}$",
                         out, re.M), out
        assert re.search(r"^type = struct Animal \{\n.*virtual std::string speak\(void\) const",
                         out, re.M | re.S), out
        assert re.search(r"^type = const struct \(anonymous namespace\)::Cat : public Animal \{\n(\s+public:\n)?\s+int lives;",
                         out, re.M), out


# ---- the compile step split too (mtpc-compile) ----

def compile_plans(build_dir):
    """{object file name: plan.json} of the compiles mtpc-compile split (their inner
    builds, <object>.mtpc, hold the pre-link split's plan)."""
    out = {}
    for p in build_dir.glob("CMakeFiles/**/*.o.mtpc/mod/*/parts/plan.json"):
        out[p.parent.parent.parent.parent.name[:-len(".mtpc")]] = json.loads(p.read_text())
    return out


@pytest.fixture(scope="module", params=["-g", "-gsplit-dwarf -gdwarf-4"], ids=["g", "split-dwarf4"])
def compile_split_build(request, tmp_path_factory):
    """The sample with every compile split too (MTPC_SPLIT_COST=0: mtpc-compile splits
    calc.c's pre-link pipeline into partitions and joins them), then the link split."""
    b = tmp_path_factory.mktemp("debug-compile-split") / "b"
    out = configure_debug(b, request.param, extra=["-DMTPC_SPLIT_COST=0"])
    return b, out, request.param


def test_compile_split_debug_info_verifies(compile_split_build):
    b, out, flags = compile_split_build
    plan = compile_plans(b).get("calc.c.o")
    assert plan and len(plan["partitions"]) >= 2, (sorted(compile_plans(b)), out)
    assert "calc.c.o: 4 partitions" in out, out
    assert "No errors." in dwarfdump("--verify", b / "dbg")
    if "-gsplit-dwarf" in flags:
        check_split_build(b, dwarf4=True)
        assert "No errors." in dwarfdump("--verify", b / "dbg.dwp")


def test_compile_split_gdb_breakpoints_in_every_partition(compile_split_build):
    """A breakpoint on one function of each pre-link partition, and of each backend
    partition, stops on its MARK line; `info line` and `list` agree with the source."""
    require_gdb()
    b, _, _ = compile_split_build
    funcs = set(f for _, _, f in one_per_partition(b))
    for mod, plan in compile_plans(b).items():
        for part in plan["partitions"]:
            owned = sorted(f for f in part["owned"] if f in MARKS and f not in INLINED)
            if owned:
                funcs.add(owned[0])
    assert len(funcs) >= 3, funcs
    check_with_gdb(b / "dbg", sorted(funcs))
