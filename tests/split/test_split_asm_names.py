"""Locals that asm names as text keep their exact name in every partition (issue #14).

Module asm and functions' inline asm name symbols by text, which the splitter cannot rewrite:
a promoted static they name is promoted under its own name (hidden), made local again by the
merge (localize.txt) and never renamed back (rename.txt has nothing for it). The hazard
fixtures (tests/hazards/asm_*.c, inline_asm_names.c) check the programs; this checks the
bookkeeping.
"""
import pathlib

import splitlib as sl
from conftest import ROOT

HAZARDS = ROOT / "tests" / "hazards"


def split_fixture(tmp_path, name, n=4):
    bc = sl.to_bitcode(HAZARDS / name, tmp_path / "m.bc")
    merged, plan, _, localize = sl.split_and_merge(bc, tmp_path / "out", n)
    renames = [line.split() for line in
               (tmp_path / "out" / "rename.txt").read_text().splitlines()]
    return bc, merged, plan, localize, renames


def test_asm_named_statics_promoted_under_own_name(tmp_path):
    _, merged, plan, localize, renames = split_fixture(tmp_path, "asm_static_used.c")
    promoted = {p["from"]: p["to"] for p in plan["promoted"]}
    for name in ("asm_counter", "asm_helper"):
        assert promoted.get(name) == name, f"{name}: promoted as {promoted.get(name)}"
        assert name in localize
        assert not [r for r in renames if name in r], f"rename.txt mentions {name}"
    syms = sl.nm(merged)
    assert syms.get("asm_counter") == "d" and syms.get("asm_helper") == "t", syms
    assert not [s for s in syms if s.startswith("asm_") and ".mtpc." in s], syms


def test_inline_asm_names_promoted_under_own_name(tmp_path):
    _, merged, plan, localize, _ = split_fixture(tmp_path, "inline_asm_names.c")
    promoted = {p["from"]: p["to"] for p in plan["promoted"]}
    for name in ("ia_helper", "ia_state"):
        assert promoted.get(name) == name, f"{name}: promoted as {promoted.get(name)}"
    # ia_table is named by ia_three's asm only: it goes where ia_three is, unpromoted
    owner = {n: p["index"] for p in plan["partitions"] for n in p["owned"]}
    assert "ia_table" not in promoted and owner["ia_table"] == owner["ia_three"], (promoted, owner)
    syms = sl.nm(merged)
    assert syms.get("ia_helper") == "t" and syms.get("ia_state") == "d", syms
    # functions whose inline asm names a static are never copied elsewhere
    copies = {c for p in plan["partitions"] for c in p["copies"]}
    assert not copies & {"call_helper", "state_addr"}, copies


def test_symver_name_localized(tmp_path):
    _, merged, plan, localize, _ = split_fixture(tmp_path, "asm_symver_static.c", 8)
    assert "s_ver@VERS_1" in localize and "sv_impl" in localize
    syms = sl.nm(merged)
    assert syms.get("s_ver@VERS_1") == "t" and syms.get("s_ver3@@VERS_3") == "t", syms
    # the `@@@` target leaves no name behind: its callers share its partition
    owner = {n: p["index"] for p in plan["partitions"] for n in p["owned"]}
    assert owner["sv_five"] == owner["sv_six"] == owner["sv3_impl"] == plan["asm_partition"]
