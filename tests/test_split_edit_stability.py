"""Edit stability through ThinLTO's own renames: the module's promoted locals
(`f.llvm.<hash of the module>`) change name with any edit. Partitions use
edit-stable names, the merge restores the real ones, and the seed finds every
unit again (tests/repro/seed_llvm_hash.sh exits 0 when that holds)."""
from conftest import BUILD, ROOT, run


def test_thinlto_promoted_names_do_not_break_stability():
    r = run(["sh", ROOT / "tests" / "repro" / "seed_llvm_hash.sh", BUILD], check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "partition files changed: 1" in r.stdout, r.stdout


def _module(edit):
    """Functions that each print their own string literals and call their own external
    helper; the edit adds a literal and a call to a new function early in the file."""
    import textwrap
    out = ["#include <stdio.h>", "void helper(int);", "void extra_log(const char *);"]
    for i in range(24):
        extra = '  extra_log("edited here");\n' if edit and i == 2 else ""
        out.append(textwrap.dedent(f"""\
            __attribute__((noinline)) int f{i}(int x) {{
            {extra}  for (int k = 0; k < x % {i + 3}; k++) printf("f{i} step %d of %d\\n", k, x);
              if (x > {i * 7}) puts("f{i} is done with a rather long message number {i}");
              helper({i});
              return x * {i + 1};
            }}"""))
    return "\n".join(out) + "\n"


def test_new_literal_and_declaration_change_one_partition(tmp_path):
    """clang numbers string literals (`.str.<n>`) and orders declarations by first use,
    module-wide: an edit adding a literal and a call early in the file renumbers and
    reorders them for the whole module. Partitions name private constants by content and
    sort their declarations, so only the edited function's partition changes."""
    import splitlib as sl
    src = tmp_path / "m.c"
    out = tmp_path / "out"
    before = {}
    for edit in (False, True):
        src.write_text(_module(edit))
        bc = sl.to_bitcode(src, tmp_path / f"m{int(edit)}.bc")
        sl.split(bc, out, 4)  # the second run is seeded by out/plan.json
        files = sorted(out.glob("p*.bc"))
        assert len(files) == 4
        if not edit:
            before = {p.name: p.read_bytes() for p in files}
            ir = run([sl.llvm_tool("llvm-dis"), files[0], "-o", "-"]).stdout
            assert ".str.k" in ir and ".str.1 " not in ir, ir[:2000]
    changed = [p.name for p in sorted(out.glob("p*.bc")) if p.read_bytes() != before[p.name]]
    assert len(changed) == 1, changed
    for p in sorted(out.glob("p*.bc")):
        sl.verify(p)
