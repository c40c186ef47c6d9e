"""Incremental builds with debug info (issue #15): the source file's MD5 checksum, which every
DWARF 5 line table carries and every edit changes, stays out of the partitions (mtpc-split
--placeholder-checksums), and so do the line numbers of everything below an edit that adds a
line (mtpc-split --virtual-lines); the merge writes the real ones back. So an edit of one
function, inside a line or adding one, reruns only the slot of the partition that owns it, a
comment line added between functions reruns none, in -g and -gsplit-dwarf builds, and the
result is byte for byte what a full rebuild of the inner build produces, with the real
checksums and lines (llvm-dwarfdump) and working breakpoints (gdb).

Uses the sample tests/projects/debug (calc.c is split into several partitions)."""
import hashlib
import re
import shutil

import pytest

from conftest import llvm_tool, run
from test_build_debug import DEBUG, GDB, check_with_gdb, configure_debug, one_per_partition, plans
from test_build_integration import build

MARK = "n += lib_trace(1); /* MARK:calc_alpha */"
# name: (text, replacement, the function whose partition must rerun, or None: no slot)
EDITS = {
    # inside a line: no line moves
    "in-line": (MARK, "n += lib_trace(1) + 5; /* MARK:calc_alpha */", "calc_alpha"),
    # a statement on a new line: every function below calc_alpha moves down by one
    "new-line": (MARK, MARK + "\n\tn ^= 3;", "calc_alpha"),
    # a comment line above calc_beta: the code is the same, everything below it moves
    "comment": ("__attribute__((noinline)) int calc_beta(int n)",
                "/* a new comment line */\n__attribute__((noinline)) int calc_beta(int n)", None),
}


def new_log_entries(inner, before):
    lines = (inner / ".ninja_log").read_text().splitlines()[1:]
    return [l.split("\t")[3] for l in lines if l.count("\t") >= 4][before:]


def log_len(inner):
    return len((inner / ".ninja_log").read_text().splitlines()[1:])


def line_table_md5s(binary):
    """{file name: md5} of every file entry in the binary's DWARF 5 line tables."""
    text = run([llvm_tool("llvm-dwarfdump"), "--debug-line", binary]).stdout
    out = {}
    for m in re.finditer(r'name: "([^"]+)"\s+dir_index: \d+\s+md5_checksum: ([0-9a-f]{32})', text):
        out.setdefault(m.group(1), set()).add(m.group(2))
    return out


def owner(build_dir, module, function):
    for part in plans(build_dir)[module]["partitions"]:
        if function in part["owned"]:
            return part["index"]
    raise AssertionError(f"{function} is in no partition of {module}")


def inner_files(inner, suffixes):
    return {str(p.relative_to(inner)): p.read_bytes()
            for p in sorted(inner.rglob("*")) if p.is_file() and p.name.endswith(suffixes)}


@pytest.fixture(scope="module", params=[(f, e) for f in ("-g", "-gsplit-dwarf") for e in EDITS],
                ids=lambda p: f"{p[0]}-{p[1]}")
def edited(request, tmp_path_factory):
    """The debug sample built, then calc.c edited (EDITS) and built again:
    (flags, edit name, source dir, build dir, inner edges that the second build ran).
    Built once for the tests below, which run in file order for each edit: those that only
    read first, then test_breakpoints_after_the_edit (which removes the .dwp gdb cannot
    read), then test_incremental_result_equals_a_full_rebuild (which rebuilds the inner
    build from scratch, into the same bytes)."""
    flags, name = request.param
    old, new, _ = EDITS[name]
    tmp_path = tmp_path_factory.mktemp("edited")
    src = tmp_path / "src"
    shutil.copytree(DEBUG, src)
    b = tmp_path / "b"
    configure_debug_at(src, b, flags, tmp_path / "plans.sqlite")
    inner = b / "dbg.mtpc"
    assert len(plans(b)["calc.c.o"]["partitions"]) >= 3, "calc.c must be split"
    before = log_len(inner)
    text = (src / "calc.c").read_text()
    assert old in text
    (src / "calc.c").write_text(text.replace(old, new, 1))
    build(b)
    return f"{flags} {name}", name, src, b, new_log_entries(inner, before)


def configure_debug_at(src, b, flags, cache):
    """configure_debug() for a copy of the sample, with the plan cache outside the build dir
    (a rebuild from scratch then finds the same plans)."""
    from test_build_integration import configure
    configure(src, b, extra=["-DCMAKE_BUILD_TYPE=RelWithDebInfo", f"-DCMAKE_C_FLAGS={flags}",
                             f"-DMTPC_CACHE={cache}"])
    build(b)


def test_edit_reruns_only_the_owning_slot(edited):
    flags, name, src, b, ran = edited
    slots = sorted(p for p in ran if re.search(r"/p\d+\.o$", p))
    calc = [p for p in slots if "/calc.c.o-" in p]
    edited_function = EDITS[name][2]
    want = [str(owner(b, "calc.c.o", edited_function))] if edited_function else []
    assert [re.search(r"/p(\d+)\.o$", p).group(1) for p in calc] == want, \
        f"{flags}: slots of calc.c that reran: {calc} (want p{want})\nall: {ran}"
    # The merge reran: it puts the new checksum and lines in.
    assert [p for p in ran if "/calc.c.o-" in p and p.endswith("native.o")], ran
    # Modules that do not import calc_alpha's body recompile nothing.
    assert not [p for p in slots if "/lib.c.o-" in p], ran


def test_real_checksums_after_the_edit(edited):
    flags, _, src, b, _ = edited
    md5s = line_table_md5s(b / "dbg")
    for name in ("calc.c", "lib.c", "main.c"):
        real = hashlib.md5((src / name).read_bytes()).hexdigest()
        seen = {v for k, vs in md5s.items() if k.endswith(name) for v in vs}
        assert seen == {real}, f"{flags}: {name}: line tables say {seen}, the file's MD5 is {real}"


def assert_equals_full_rebuild(b, flags):
    inner = b / "dbg.mtpc"
    suffixes = (".dwo", "native.o")
    incremental = (b / "dbg").read_bytes(), inner_files(inner, suffixes)
    shutil.rmtree(inner)
    (b / "dbg").unlink()
    build(b)
    full = (b / "dbg").read_bytes(), inner_files(inner, suffixes)
    assert incremental[0] == full[0], f"{flags}: dbg differs from a full rebuild"
    assert incremental[1].keys() == full[1].keys()
    differ = [k for k in full[1] if incremental[1][k] != full[1][k]]
    assert not differ, f"{flags}: differ from a full rebuild: {differ}"


def test_declared_lines_after_the_edit(edited):
    """Every function's DW_AT_decl_line is its line in the edited source (virtual lines are
    all gone, and the real ones are right, not only consistent with a full rebuild)."""
    flags, _, src, b, _ = edited
    files = [b / "dbg"] + ([b / "dbg.dwp"] if (b / "dbg.dwp").exists() else [])
    text = run([llvm_tool("llvm-dwarfdump"), "--debug-info", *files]).stdout
    declared = {}
    for die in text.split("\n\n"):
        name = re.search(r'DW_AT_name\s+\("(\w+)"\)', die)
        line = re.search(r"DW_AT_decl_line\s+\((\d+)\)", die)
        if "DW_TAG_subprogram" in die and "DW_AT_declaration" not in die and name and line:
            declared.setdefault(name.group(1), set()).add(int(line.group(1)))
    assert declared, text[:2000]
    assert not [n for n, ls in declared.items() if max(ls) >= 1 << 30], declared
    for f in ("calc_alpha", "calc_beta", "calc_theta", "calc_all"):
        lines = (src / "calc.c").read_text().splitlines()
        want = next(n for n, l in enumerate(lines, 1) if re.search(rf"\bint {f}\(int n\)$", l))
        assert declared.get(f) == {want}, f"{flags}: {f} declared at {declared.get(f)}, is at {want}"
    lt = run([llvm_tool("llvm-dwarfdump"), "--debug-line", b / "dbg"]).stdout
    rows = [int(m.group(1)) for m in re.finditer(r"^0x[0-9a-f]{16}\s+(\d+)\s", lt, re.M)]
    assert rows and max(rows) < len((src / "calc.c").read_text().splitlines()) + 50, max(rows)


def test_breakpoints_after_the_edit(edited):
    flags, _, src, b, _ = edited
    if not GDB:
        pytest.skip("gdb not installed")
    if flags.startswith("-gsplit-dwarf"):
        # gdb 13 cannot read llvm-dwp's DWARF 5 .dwp (test_build_debug.py); the .dwo files.
        (b / "dbg.dwp").unlink(missing_ok=True)
    picks = one_per_partition(b)
    assert len({(m, i) for m, i, _ in picks}) >= 3, picks
    check_with_gdb(b / "dbg", [f for _, _, f in picks], src)


def test_incremental_result_equals_a_full_rebuild(edited):
    flags, _, src, b, _ = edited
    assert_equals_full_rebuild(b, flags)


def test_lines_that_cannot_be_restored_fall_back_to_the_unsplit_backend(tmp_path):
    """A map of virtual lines that does not cover a partition's lines (here: cut short) makes
    the merge warn and compile the module unsplit: the build still succeeds, and no virtual
    line reaches the output."""
    src = tmp_path / "src"
    shutil.copytree(DEBUG, src)
    b = tmp_path / "b"
    configure_debug_at(src, b, "-g", tmp_path / "plans.sqlite")
    expected = run([b / "dbg"]).stdout
    (lines,) = (b / "dbg.mtpc" / "mod").glob("calc.c.o-*/parts/lines.txt")
    text = lines.read_text()
    assert text.count("\n") > 2, text
    lines.write_text(text.splitlines(keepends=True)[0])
    # The inner build by itself: the merge, whose input changed, reruns.
    out = run(["ninja", "-C", b / "dbg.mtpc"])
    assert "debug info could not be restored; compiling it unsplit" in out.stdout + out.stderr
    assert run([b / "dbg"]).stdout == expected
    info = run([llvm_tool("llvm-dwarfdump"), "--debug-info", "--debug-line", b / "dbg"]).stdout
    big = [int(n) for n in re.findall(r"\b(\d{10})\b", info) if int(n) >= 1 << 30]
    assert not big, big[:5]


# Edits of lib.c for the relayed modules: (text, replacement, whether calc.c imports the
# edited function and so must recompile).
RELAY_EDITS = {
    # lib_scale (noinline) is never imported: calc.c's shard changes, its code does not
    "not-imported": ("s = s * 3 + i;", "s = s * 5 + i;", False),
    # lib_mix is imported into calc.c and inlined there
    "imported": ("return (a * 31) ^ (b + 7);", "return (a * 37) ^ (b + 7);", True),
}


@pytest.mark.parametrize("flags", ["-g", "-gsplit-dwarf"])
@pytest.mark.parametrize("edit", sorted(RELAY_EDITS))
def test_relayed_importer_recompiles_only_when_its_imports_change(tmp_path, flags, edit):
    """No module split, every module relayed (MTPC_RELAY_COST=0, MTPC_RELAY=always): an edit of lib.c changes the
    ThinLTO shard of calc.c, which imports from it, and the plain backend would recompile
    calc.c; relayed, calc.c's import step reruns and its one slot reruns only when the code it
    imports changed. The result is what a full rebuild gives, with lib.c's real checksum."""
    from test_build_integration import configure
    old, new, imported = RELAY_EDITS[edit]
    src = tmp_path / "src"
    shutil.copytree(DEBUG, src)
    b = tmp_path / "b"
    configure(src, b, extra=["-DCMAKE_BUILD_TYPE=RelWithDebInfo", f"-DCMAKE_C_FLAGS={flags}",
                             f"-DMTPC_CACHE={tmp_path / 'plans.sqlite'}",
                             "-DMTPC_SPLIT_THRESHOLD=", "-DMTPC_SPLIT_COST=1000000000",
                             "-DMTPC_RELAY_COST=0", "-DMTPC_RELAY=always"])
    build(b)
    inner = b / "dbg.mtpc"
    ninja = (inner / "build.ninja").read_text()
    for m in ("calc.c.o", "lib.c.o", "main.c.o"):
        assert re.search(rf"desc = MTPC split {re.escape(m)}-", ninja), f"{m} is not relayed"
    assert "--kmax 1 " in ninja and " p1.o" not in ninja
    before = log_len(inner)
    text = (src / "lib.c").read_text()
    assert old in text
    (src / "lib.c").write_text(text.replace(old, new, 1))
    build(b)
    ran = new_log_entries(inner, before)
    # calc.c's shard changed: its import step reran (a plain backend would have recompiled).
    assert [p for p in ran if "/calc.c.o-" in p and p.endswith("split.dd")], ran
    calc_slot = [p for p in ran if "/calc.c.o-" in p and p.endswith("/p0.o")]
    assert bool(calc_slot) == imported, f"{flags} {edit}: calc.c's slot reran: {calc_slot}\n{ran}"
    assert [p for p in ran if "/lib.c.o-" in p and p.endswith("/p0.o")], ran
    assert not [p for p in ran if "/main.c.o-" in p and p.endswith("/p0.o")], ran
    real = hashlib.md5((src / "lib.c").read_bytes()).hexdigest()
    seen = {v for k, vs in line_table_md5s(b / "dbg").items() if k.endswith("lib.c") for v in vs}
    assert seen == {real}, f"{flags}: lib.c: line tables say {seen}, the file's MD5 is {real}"
    assert_equals_full_rebuild(b, flags)
