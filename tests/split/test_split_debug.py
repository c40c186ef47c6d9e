"""Every hazard fixture again, built with -g: debug info changes what the
bitcode reader does when a partition is loaded (UpgradeDebugInfo verifies the
module), so each partition must stay valid with it. Partitions verify, compile,
merge into an object with the unsplit object's global symbols and valid DWARF."""
import json
import re
import shutil
import subprocess

import pytest

import splitlib as sl
from conftest import LLVM_BIN, llvm_tool, run, thinned, tool


@pytest.mark.parametrize("fx", thinned(sl.all_fixtures()), ids=lambda f: f.name)
def test_split_with_debug_info(fx, tmp_path):
    if fx.path.suffix == ".ll":
        pytest.skip("hand-written IR has no debug info")
    for i, src in enumerate(fx.modules):
        bc = sl.to_bitcode(src, tmp_path / f"m{i}.bc", pic=fx.shared, cflags=[*fx.cflags, "-g"])
        unsplit = sl.compile_ir(bc, tmp_path / f"m{i}.o", pic=fx.shared)
        merged, plan, _, localize = sl.split_and_merge(bc, tmp_path / f"out{i}", 4, pic=fx.shared)
        if len(fx.modules) == 1 or i == 0:
            assert len(plan["partitions"]) >= min(2, fx.min_parts)
        assert not sl.check_symbols(unsplit, merged, bc, localize)
        assert not dwarf_errors(merged), dwarf_errors(merged)


# Duplicated linkonce_odr functions (every partition carries its own, the linker
# keeps one comdat) leave the discarded copy's DWARF at address 0, exactly as
# in any C++ program of several translation units (a two-file program with one
# non-inlined inline member function reports the same two categories).
TOLERATED = ("DIEs have overlapping address ranges", "DIE has overlapping DW_AT_ranges")


def dwarf_errors(obj):
    out = run([llvm_tool("llvm-dwarfdump"), "--verify", obj], check=False).stdout
    kinds = re.findall(r"^error: (.*?) occurred \d+ time\(s\)\.$", out, re.M)
    bad = [k for k in kinds if k not in TOLERATED]
    if "Errors detected" in out and not kinds:
        bad.append(out[-2000:])
    return bad


# A module whose globals (with their debug info) come last: a line added above them, below
# every function, moves only what the partition owning the globals describes.
SHIFT_SRC = r"""
extern int tail_counter;
#define BODY(k) int a = n; for (int i = 0; i < 8; i++) { a = a * 31 + i * k + tail_counter; \
    if (a % (k + 3) == 0) a ^= i; else a -= k; } return a % 10007
__attribute__((noinline)) int f1(int n) { BODY(1); }
__attribute__((noinline)) int f2(int n) { BODY(2); }
__attribute__((noinline)) int f3(int n) { BODY(3); }
__attribute__((noinline)) int f4(int n) { BODY(4); }
__attribute__((noinline)) int f5(int n) { BODY(5); }
__attribute__((noinline)) int f6(int n) { BODY(6); }
enum tail_kind { TAIL_A = 1, TAIL_B = 2 };
/*SHIFT*/
int tail_counter = 5;
static int tail_static = 7;
int tail_use(int x) { tail_static += x; return tail_static + tail_counter + TAIL_B; }
"""


def test_line_shift_below_a_partition_leaves_it_unchanged(tmp_path):
    """Each compile unit of a partition lists only the global variables it defines (and the
    unit's enums once, in partition 0): before, every partition carried the whole file's
    list, so a line added above any global changed every partition, and the merged object
    described each global once per partition."""
    parts = {}
    for name, src in (("a", SHIFT_SRC), ("b", SHIFT_SRC.replace("/*SHIFT*/", "\n"))):
        (tmp_path / "shift.c").write_text(src)   # one file, edited: same name, same directory
        bc = sl.to_bitcode(tmp_path / "shift.c", tmp_path / f"{name}.bc", cflags=["-g"])
        merged, plan, _, _ = sl.split_and_merge(bc, tmp_path / name, 4,
                                                extra=["--placeholder-checksums"])
        parts[name] = plan["partitions"]
        assert not dwarf_errors(merged), dwarf_errors(merged)
        # Each global is described once, with its location, where it is defined.
        info = run([llvm_tool("llvm-dwarfdump"), "--debug-info", merged]).stdout
        for g in ("tail_counter", "tail_static"):
            assert info.count(f'DW_AT_name\t("{g}")') == 1, g
        assert info.count('DW_AT_name\t("tail_kind")') == 1
    assert [p["owned"] for p in parts["a"]] == [p["owned"] for p in parts["b"]]
    moved = {"tail_counter", "tail_static", "tail_use"}
    same = [i for i, p in enumerate(parts["a"]) if not moved & set(p["owned"])]
    assert same and len(same) < len(parts["a"]), parts["a"]
    for i in range(len(parts["a"])):
        a, b = (tmp_path / n / f"p{i}.bc" for n in "ab")
        assert (a.read_bytes() == b.read_bytes()) == (i in same), (i, parts["a"][i]["owned"])


def line_rows(obj):
    """The rows of an object's line tables (address, line, column, file, flags...) and its
    file entries (names, MD5s): everything but the encoding."""
    out = run([llvm_tool("llvm-dwarfdump"), "--debug-line", obj]).stdout
    rows = re.findall(r"^0x[0-9a-f]{16} .*$", out, re.M)
    files = re.findall(r'^\s+(?:name|md5_checksum): .*$', out, re.M)
    return rows, files


def die_lines(obj):
    """Each DIE's tag, name and stated lines, in order."""
    out = run([llvm_tool("llvm-dwarfdump"), "--debug-info", obj]).stdout
    return re.findall(r"DW_TAG_\w+|DW_AT_(?:name|decl_line|call_line)\s+\(.*\)", out)


@pytest.mark.parametrize("fx", thinned(sl.all_fixtures()), ids=lambda f: f.name)
def test_virtual_lines_are_put_back_exactly(fx, tmp_path):
    """Every hazard fixture with -g, split with and without --virtual-lines (and placeholder
    checksums): once the merge step (mtpc-link's, the one the build runs) has put the real
    lines and checksums back, the line tables and every DIE's lines are those of the split
    compiled with the real ones."""
    if fx.path.suffix == ".ll":
        pytest.skip("hand-written IR has no debug info")
    bc = sl.to_bitcode(fx.modules[0], tmp_path / "m.bc", pic=fx.shared, cflags=[*fx.cflags, "-g"])
    real, plan, _, _ = sl.split_and_merge(bc, tmp_path / "real", 4, pic=fx.shared,
                                          extra=["--no-cache"])
    d = tmp_path / "virtual"
    parts = d / "parts"
    sl.split(bc, parts, 4, "--min-cost", "0", "--no-cache", "--virtual-lines",
             "--placeholder-checksums")
    vplan = json.loads((parts / "plan.json").read_text())
    assert [p.get("owned") for p in vplan["partitions"]] == [p.get("owned") for p in plan["partitions"]]
    n = len(vplan["partitions"])
    for i in range(n):
        sl.compile_ir(parts / f"p{i}.bc", d / f"p{i}.o", fx.shared)
    (d / "split.n").write_text(f"{n}\n")
    if n > 1 and (parts / "lines.txt").read_text():
        # Without the merge the partitions hold virtual lines only.
        assert max(int(l) for r in line_rows(d / "p0.o")[0] for l in r.split()[1:2]) >= 1 << 30
    run([tool("mtpc-link"), "--merge-step", "--dir", d, "--out", d / "native.o",
         "--llvm-bin", LLVM_BIN, "--"])
    assert line_rows(d / "native.o") == line_rows(real)
    assert die_lines(d / "native.o") == die_lines(real)
    assert not dwarf_errors(d / "native.o"), dwarf_errors(d / "native.o")


# A C++ file whose compile unit lists using-declarations (<cstdlib> and <cmath> bring in
# `using ::abs;`, `using std::sqrt;`... as DW_TAG_imported_declaration).
IMPORTS_SRC = r"""
#include <cmath>
#include <cstdlib>
#define F(k) __attribute__((noinline)) double f##k(double x) { \
    for (int i = 0; i < 6; i++) x = std::sqrt(std::abs(x * k + i)) + std::atoi("7"); return x; }
F(1) F(2) F(3) F(4) F(5) F(6) F(7) F(8)
"""


def cu_imports(bc):
    """The imports: list of the DICompileUnit in bitcode bc ("" when it has none)."""
    text = run([llvm_tool("llvm-dis"), bc, "-o", "-"]).stdout
    cu = re.search(r"^!\d+ = distinct !DICompileUnit\((.*)\)$", text, re.M).group(1)
    m = re.search(r"imports: (![0-9]+)", cu)
    if not m:
        return ""
    return re.search(rf"^{m.group(1)} = !\{{(.*)\}}$", text, re.M).group(1)


def test_cu_imports_in_the_first_partition_only(tmp_path):
    """The compile unit's imported entities (using-declarations) are described once, by
    partition 0, as the unsplit module describes them once: every partition repeating them
    was a quarter of the growth of a split C++ module's debug info."""
    src = tmp_path / "imports.cpp"
    src.write_text(IMPORTS_SRC)
    bc = sl.to_bitcode(src, tmp_path / "imports.bc", cflags=["-g"])
    assert cu_imports(bc).count("!") > 20
    merged, plan, _, _ = sl.split_and_merge(bc, tmp_path / "out", 4)
    parts = [tmp_path / "out" / f"p{i}.bc" for i in range(len(plan["partitions"]))]
    assert len(parts) == 4
    assert cu_imports(parts[0]) == cu_imports(bc)
    assert [cu_imports(p) for p in parts[1:]] == ["", "", ""]
    assert not dwarf_errors(merged)
    unsplit = sl.compile_ir(bc, tmp_path / "unsplit.o")
    count = lambda o: run([llvm_tool("llvm-dwarfdump"), "--debug-info", o]).stdout.count(  # noqa: E731
        "DW_TAG_imported_declaration")
    assert count(merged) == count(unsplit) > 20


# Three partitions' worth of C++ sharing types: each gives every type a type unit of its
# own (-fdebug-types-section), and the string offsets table of each object lists the
# strings of all of them.
TU_HEADER = r"""
#include <map>
#include <string>
#include <vector>
struct Shape { virtual ~Shape() {} virtual double area() const = 0; std::string name; };
struct Box : Shape { double w = 1, h = 2; double area() const override { return w * h; } };
template <class T> struct Bag { std::vector<T> items; std::map<std::string, T> by_name; };
"""
TU_PART = r"""
#include "shapes.h"
struct Own{k} {{ int only_in_{k}; long also_in_{k}; }};
__attribute__((noinline)) double part{k}(Bag<Box> &b, Own{k} *o) {{
    double s = o->only_in_{k} + o->also_in_{k};
    for (auto &x : b.items) s += x.area() * {k};
    return s + b.by_name.size();
}}
"""


def section_size(obj, name):
    out = run([llvm_tool("llvm-size"), "-A", obj]).stdout
    return sum(int(f[1]) for f in (l.split() for l in out.splitlines())
               if len(f) >= 2 and f[0] == name and f[1].isdigit())


def merge_parts(tmp_path, flags, merge_args=()):
    """p0..p2.o compiled from TU_PART with flags, merged by mtpc-link's merge step
    (native.o; merge_args: its extra options), and the same objects put together by a plain
    `ld.lld -r` (plain.o)."""
    d = tmp_path / "m"
    (d / "parts").mkdir(parents=True)
    (d / "shapes.h").write_text(TU_HEADER)
    for name in ("localize.txt", "rename.txt", "checksums.txt", "lines.txt"):
        (d / "parts" / name).write_text("")
    objs = []
    for k in range(3):
        src = d / f"part{k}.cpp"
        src.write_text(TU_PART.format(k=k))
        objs.append(d / f"p{k}.o")
        run([llvm_tool("clang++"), "-O2", "-c", *flags, src, "-o", objs[-1]])
    (d / "split.n").write_text("3\n")
    run([tool("mtpc-link"), "--merge-step", "--dir", d, "--out", d / "native.o",
         "--llvm-bin", LLVM_BIN, *merge_args, "--"])
    run([LLVM_BIN / "ld.lld", "-r", *objs, "-o", d / "plain.o"])
    return d / "native.o", d / "plain.o"


def die_text(obj):
    """The DIEs as llvm-dwarfdump prints them (strings read through the string offsets),
    without the line naming the file and the units' string offsets bases, which move."""
    out = run([llvm_tool("llvm-dwarfdump"), "--debug-info", obj]).stdout
    return re.sub(r"DW_AT_str_offsets_base\s+\(0x[0-9a-f]+\)", "", out.split("\n", 1)[1])


def test_merge_drops_string_offsets_of_discarded_type_units(tmp_path):
    """The merge keeps each type unit of a module once (COMDAT groups), and drops from each
    partition's string offsets table the entries only its discarded type units used: every
    kept DIE reads the same strings as in a plain `ld.lld -r` of the same objects, the
    DWARF verifies, and the table is smaller."""
    native, plain = merge_parts(tmp_path, ["-g", "-fdebug-types-section"])
    assert die_text(native) == die_text(plain)
    assert die_text(native).count("DW_TAG_type_unit") > 10
    assert not dwarf_errors(native), dwarf_errors(native)
    assert section_size(native, ".debug_str_offsets") < 0.9 * section_size(plain, ".debug_str_offsets")


@pytest.mark.parametrize("flags", [["-g"], ["-g", "-gdwarf-4", "-fdebug-types-section"]],
                         ids=["no-type-units", "dwarf4"])
def test_merge_keeps_string_offsets_without_dwarf5_type_units(tmp_path, flags):
    """Without type units (nothing discarded) or with DWARF 4 (no string offsets table) the
    merge leaves the objects' debug info as a plain `ld.lld -r` has it."""
    native, plain = merge_parts(tmp_path, flags)
    assert die_text(native) == die_text(plain)
    assert section_size(native, ".debug_str_offsets") == section_size(plain, ".debug_str_offsets")
    assert not dwarf_errors(native), dwarf_errors(native)


def gnu_names(obj, section):
    """The entries of a GNU name list (.debug_gnu_pubnames or pubtypes) as (kind, linkage, name)."""
    out = run([llvm_tool("llvm-dwarfdump"), f"--{section.lstrip('.').replace('_', '-')}", obj]).stdout
    return [m.groups() for m in re.finditer(r'^0x[0-9a-f]+\s+(\w+)\s+(\w+)\s+"(.*)"$', out, re.M)]


@pytest.mark.parametrize("flags", [["-g", "-ggnu-pubnames", "-fdebug-types-section"],
                                   ["-g", "-ggnu-pubnames"]], ids=["type-units", "no-type-units"])
def test_merge_lists_each_type_of_a_module_once(tmp_path, flags):
    """Every partition's GNU name lists name the types and namespaces it uses; the merge
    keeps the first partition's entry of each and every function and variable entry. The
    names are the plain `ld.lld -r`'s, without repeats, and gdb, reading the lists through
    lld's --gdb-index, finds the same types, functions and namespaces in both programs."""
    native, plain = merge_parts(tmp_path, flags)
    types_n, types_p = gnu_names(native, ".debug_gnu_pubtypes"), gnu_names(plain, ".debug_gnu_pubtypes")
    assert len(types_p) > len(set(types_p)) + 20  # each partition repeats the shared types
    assert sorted(types_n) == sorted(set(types_p))
    names_n, names_p = gnu_names(native, ".debug_gnu_pubnames"), gnu_names(plain, ".debug_gnu_pubnames")
    assert sorted(set(names_n)) == sorted(set(names_p))
    code = lambda names: sorted(n for n in names if n[1] != "TYPE")  # noqa: E731
    assert code(names_n) == code(names_p) and any(n[1] == "FUNCTION" for n in names_n)
    assert len([n for n in names_n if n[1] == "TYPE"]) == len({n for n in names_p if n[1] == "TYPE"})
    assert section_size(native, ".debug_gnu_pubtypes") < 0.7 * section_size(plain, ".debug_gnu_pubtypes")
    assert die_text(native) == die_text(plain)
    assert not dwarf_errors(native), dwarf_errors(native)
    # gdb's check: lld's --gdb-index does not index DWARF 5 type units (gdb then finds
    # no type of the program in either link; mtpc-link compiles without type units when
    # the link asks for an index).
    if not shutil.which("gdb") or "-fdebug-types-section" in flags:
        return
    outs = gdb_both(native, plain, ["-Wl,--gdb-index"], GDB_TYPES + ["break part2", "info scope part1"])
    assert "only_in_2" in outs[0] and "by_name" in outs[0] and "No symbol" not in outs[0], outs[0]
    assert "std::map<std::__cxx11::basic_string" in outs[0], outs[0]
    assert outs[0] == outs[1]


GDB_TYPES = ["ptype Own1", "ptype Own2", "ptype Bag<Box>", "info types Own", "info functions part"]


def gdb_both(native, plain, ldflags, commands):
    """gdb's output (addresses masked) for each of merge_parts' two objects, linked with a
    main that calls every part: [native's, plain's]."""
    d = native.parent
    (d / "main.cpp").write_text('#include "shapes.h"\n' + "".join(
        f"struct Own{k} {{ int only_in_{k}; long also_in_{k}; }};\ndouble part{k}(Bag<Box> &, Own{k} *);\n"
        for k in range(3)) + "int main() { Bag<Box> b; Own0 a{}; Own1 c{}; Own2 e{};\n"
        "  return (int)(part0(b, &a) + part1(b, &c) + part2(b, &e)); }\n")
    outs = []
    for obj in (native, plain):
        exe = d / f"{obj.stem}.exe"
        run([llvm_tool("clang++"), "-O2", "-g", "-fuse-ld=lld", *ldflags, d / "main.cpp", obj, "-o", exe])
        assert (section_size(exe, ".gdb_index") > 0) == ("-Wl,--gdb-index" in ldflags)
        r = run(["gdb", "-batch", "-nx", *[w for c in commands for w in ("-ex", c)], exe], check=False)
        outs.append(re.sub(r"0x[0-9a-f]+", "ADDR", r.stdout + r.stderr).replace(exe.name, "EXE"))
    return outs


def test_merge_lists_each_name_once_for_a_link_without_gdb_index(tmp_path):
    """With --names once (what mtpc-link asks when the final link builds no .gdb_index, the
    one reader of the GNU name lists) the merge keeps the first partition's entry of every
    name, functions and variables too: each name once per module, as the unsplit module's
    one unit lists it. The DIEs are untouched, and gdb, which then indexes the DWARF itself,
    finds the same types and every inlined instance in both programs."""
    flags = ["-g", "-ggnu-pubnames", "-fdebug-types-section"]
    native, plain = merge_parts(tmp_path, flags, ["--names", "once"])
    names_n, names_p = gnu_names(native, ".debug_gnu_pubnames"), gnu_names(plain, ".debug_gnu_pubnames")
    funcs_p = [n for n in names_p if n[1] == "FUNCTION"]
    assert len(funcs_p) > len(set(funcs_p)) + 5  # functions inlined in several partitions
    assert sorted(names_n) == sorted(set(names_p))
    types_p = gnu_names(plain, ".debug_gnu_pubtypes")
    assert sorted(gnu_names(native, ".debug_gnu_pubtypes")) == sorted(set(types_p))
    assert die_text(native) == die_text(plain)
    assert not dwarf_errors(native), dwarf_errors(native)
    r = subprocess.run([tool("mtpc-link"), "--merge-step", "--dir", native.parent, "--out",
                        native.parent / "x.o", "--names", "twice", "--"], capture_output=True, text=True)
    assert r.returncode == 2 and "--names takes 'once'" in r.stderr, r.stderr
    if not shutil.which("gdb"):
        return
    begin = "std::vector<Box, std::allocator<Box> >::begin"  # inlined in every partition
    outs = gdb_both(native, plain, [], GDB_TYPES + [f"break {begin}", "info scope part1"])
    assert "only_in_2" in outs[0] and "No symbol" not in outs[0], outs[0]
    assert f"Breakpoint 1 at ADDR: {begin}. (3 locations)" in outs[0], outs[0]
    assert outs[0] == outs[1]
