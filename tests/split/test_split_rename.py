"""Promoted statics get their own names back after the merge: localized, then
renamed with rename.txt (llvm-objcopy --redefine-syms), so the merged object's
symbol table shows what the unsplit object shows to profilers and symbolizers."""
import splitlib as sl
from conftest import ROOT


def test_promoted_statics_keep_their_names(tmp_path):
    src = ROOT / "tests" / "hazards" / "promoted_internals.c"
    bc = sl.to_bitcode(src, tmp_path / "m.bc")
    merged, plan, _, localize = sl.split_and_merge(bc, tmp_path / "out", 4)
    pairs = [line.split() for line in (tmp_path / "out" / "rename.txt").read_text().splitlines()]
    assert pairs, "the fixture promotes statics across partitions"
    assert {new for new, _ in pairs} <= set(localize)
    syms = sl.nm(merged)
    for new, old in pairs:
        assert new not in syms, f"{new} still in the merged object"
        assert old in syms and syms[old] in "tdbr", f"{old}: {syms.get(old)}"
    unsplit = sl.nm(sl.compile_ir(bc, tmp_path / "unsplit.o"))
    assert not [n for n in syms if ".mtpc." in n and n.split(".mtpc.")[0] in unsplit]
