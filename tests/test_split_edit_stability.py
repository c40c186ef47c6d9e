"""Edit stability through ThinLTO's own renames: the module's promoted locals
(`f.llvm.<hash of the module>`) change name with any edit. Partitions use
edit-stable names, the merge restores the real ones, and the seed finds every
unit again (tests/repro/seed_llvm_hash.sh exits 0 when that holds)."""
from conftest import BUILD, ROOT, run


def test_thinlto_promoted_names_do_not_break_stability():
    r = run(["sh", ROOT / "tests" / "repro" / "seed_llvm_hash.sh", BUILD], check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "partition files changed: 1" in r.stdout, r.stdout
