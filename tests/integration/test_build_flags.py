"""The flags real projects build with: every C and C++ hazard fixture (tests/hazards/, with
its main and peers) built as a program plain and through MTPC under each flag set of
progdiff.FLAG_SETS (-fwhole-program-vtables, CFI with hidden visibility, hidden visibility,
-fsplit-lto-unit, -fprofile-use from the program's own run, -gz, -fPIC -shared, section GC),
the reference with the same flags. Same exit status, same output (every address comparison
the fixtures print), same exported symbols. Through mtpc-link, and with Clang >= 21 through
mtpc-distribute as well. csmith programs under the same flag sets: tests/split/test_csmith.py."""
import pytest

import progdiff as pd
import splitlib as sl
from conftest import LLVM_VERSION, thinned

FIXTURES = [fx for fx in sl.all_fixtures() if fx.path.suffix != ".ll"]
MODES = ["link"] + (["distribute"] if int(LLVM_VERSION) >= 21 else [])
CASES = thinned([(fs, fx, mode) for mode in MODES for fs in pd.FLAG_SETS for fx in FIXTURES],
                 len(FIXTURES))


def program_of(fx):
    split = [(src, sl.lang_flags(src)) for src in fx.modules]
    main = [(fx.main, sl.lang_flags(fx.main))] if fx.main else []
    return pd.Program(split, main, cxx=fx.is_cxx, cflags=fx.cflags, ldflags=fx.ldflags,
                      shared=fx.shared)


@pytest.mark.parametrize("flagset,fx,mode", CASES,
                         ids=[f"{fs}-{fx.name}-{mode}" for fs, fx, mode in CASES])
def test_fixture_under_flags(flagset, fx, mode, tmp_path):
    try:
        counts = pd.compare(program_of(fx), flagset, tmp_path, mode)
    except pd.Skip as e:
        pytest.skip(str(e))
    except pd.Fail as e:
        pytest.fail(str(e), pytrace=False)
    assert counts and max(counts) >= min(2, fx.min_parts), \
        f"no module was split in {min(2, fx.min_parts)} or more: {counts}"


# A static whose address only a write-only global holds: under CFI its jump-table entry is
# defined by the thin link's regular LTO object with default visibility, and every
# reference the bitcode made hidden is optimized away. Plain ThinLTO keeps the entry local
# (the bitcode symbol table says hidden); a final link of native objects alone exported it.
CFI_WRITE_ONLY = """typedef unsigned (*fn)(unsigned);
static unsigned inst_0(unsigned x) { return x * 3 + 1; }
static unsigned inst_1(unsigned x) { return x ^ 7; }
fn sink[2];
void reg(void) { sink[0] = inst_0; sink[1] = inst_1; }
__attribute__((visibility("default"))) unsigned api(fn f, unsigned v) { reg(); return f(v); }
"""
CFI_MAIN = """#include <stdio.h>
typedef unsigned (*fn)(unsigned);
unsigned api(fn, unsigned);
static unsigned local_fn(unsigned x) { return x + 5; }
int main(void) { printf("%u\\n", api(local_fn, 4)); return 0; }
"""


@pytest.mark.parametrize("mode", MODES)
def test_cfi_jump_table_entries_stay_local(tmp_path, mode):
    (tmp_path / "lib.cpp").write_text(CFI_WRITE_ONLY)
    (tmp_path / "main.cpp").write_text(CFI_MAIN)
    prog = pd.Program([(tmp_path / "lib.cpp", [])], [(tmp_path / "main.cpp", [])], cxx=True,
                      shared=True)
    try:
        pd.compare(prog, "cfi", tmp_path / "w", mode)
    except pd.Fail as e:
        pytest.fail(str(e), pytrace=False)
