"""mtpc-split on random modules from llvm-stress-19 (a small fixed sample of seeds; the long
run is scripts/stress-split.sh). Each module links several llvm-stress functions, some made
internal and called from driver functions (so promotion happens). Checks: no crash, every
partition verifies, the partitions compile and merge, and the merged object defines exactly
the unsplit object's globals with no new undefined symbol."""
import pytest

import splitlib as sl

SEEDS = [1, 2, 3, 5, 8, 13, 21, 34, 55, 89]


@pytest.mark.parametrize("seed", SEEDS, ids=[f"seed{s}" for s in SEEDS])
def test_stress_split(seed, tmp_path):
    sl.stress_check(seed, tmp_path, ns=(3,) if seed % 2 else (8,), funcs=5, size=250)


def test_stress_big_module(tmp_path):
    """One larger module: many functions, bigger bodies."""
    sl.stress_check(1000, tmp_path, ns=(2, 8), funcs=16, size=800)
