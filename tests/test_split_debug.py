"""Every hazard fixture again, built with -g: debug info changes what the
bitcode reader does when a partition is loaded (UpgradeDebugInfo verifies the
module), so each partition must stay valid with it. Partitions verify, compile,
merge into an object with the unsplit object's global symbols and valid DWARF."""
import re

import pytest

import splitlib as sl
from conftest import llvm_tool, run


@pytest.mark.parametrize("fx", sl.all_fixtures(), ids=lambda f: f.name)
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
