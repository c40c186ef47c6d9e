"""bench/edit_bench.py smoke test: a small synthetic program, one in-place edit, 4
partitions, 1 repeat. Checks the structure of the JSON output and that the seeded split keeps
partition files byte-identical. Quick (a few seconds)."""
import json
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import edit_bench  # noqa: E402
import lib  # noqa: E402

SPLITTERS = {"mtpc-split (seed)", "mtpc-split (cache)", "mtpc-split (no seed)", "llvm-split"}


def test_find_definitions_and_in_place_edit():
    src = ["static int f(int x){\n", "  int y = x + 41;\n", "  return y;\n", "}\n",
           "int g(\n", "  int a\n", "){\n", "  return f(a) * 3;\n", "}\n",
           "int h(int);\n", "int k(void)\n", "{\n", "    return 7;\n", "}\n"]
    defs = edit_bench.find_definitions(src)
    assert defs == {"f": (0, 0, 3), "g": (4, 6, 8), "k": (10, 11, 13)}
    text, line = edit_bench.edit_text(src, defs["f"], 1, "const")
    assert line == 1 and text.splitlines()[1] == "  int y = x + 42;"
    assert len(text.splitlines()) == len(src)              # no line number moves
    text, line = edit_bench.edit_text(src, defs["g"], 2, "asm")
    assert line == 6 and text.splitlines()[6].startswith('){ __asm__ volatile("# mtpc-edit 2")')
    assert edit_bench.fn_key('"s_f_1.llvm.123"') == "s_f_1" == edit_bench.fn_key("s_f_1.mtpc.ab")


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    if not (lib.mtpc_tool("mtpc-split") and lib.mtpc_tool("mtpc-cache")):
        pytest.skip("MTPC tools not built (scripts/build.sh)")
    tmp = tmp_path_factory.mktemp("edit_bench")
    subprocess.run([sys.executable, str(ROOT / "bench" / "gen_synthetic.py"), "-o",
                    str(tmp / "src"), "--seed", "5", "--lines", "1500"], check=True,
                   capture_output=True)
    s = tmp / "src"
    out = tmp / "edit.json"
    rc = edit_bench.main(["--sources", str(s / "big.c"), *map(str, sorted(s.glob("mod_*.c"))),
                          str(s / "main.c"), "-n", "4", "--edits", "1", "-r", "1",
                          "--work", str(tmp / "w"), "--json", str(out), "-q"])
    assert rc == 0
    return json.loads(out.read_text())


def test_output_structure(result):
    assert result["partitions"] == [4] and result["repeat"] == 1
    (e,) = result["edits"]
    assert e["function"] and e["edited_functions"] and e["old"] != e["new"]
    st = result["stability"]["4"]
    assert set(st["per_edit"]) == set(st["summary"]) == SPLITTERS
    for name, (r,) in st["per_edit"].items():
        assert 1 <= r["partitions"] <= 4
        assert r["identical"] + len(r["changed"]) == r["partitions"]
        assert r["with_edit"], name          # some partition must carry the edited code
        assert set(r["with_edit"]) <= set(r["changed"])
        if name.startswith("mtpc"):
            assert r["owner"], name
    inc = result["incremental"]["4"][str(e["k"])]["summary"]
    for j in ("j1", "j2"):
        assert 1 <= inc[f"{j}_changed"] <= inc[f"{j}_partitions"]
        assert inc[f"{j}_total_cpu"] > 0 and inc[f"{j}_wall_over_backend"] > 0
    assert inc["backend_cpu"] > 0
    fb = result["feedback"]["4"]
    for k in ("original", "before", "after"):
        assert len(fb[k]["cpu"]) == len(fb[k]["cost"]) and fb[k]["slowest_over_mean"] >= 1


def test_unchanged_partitions_modulo_thinlto_names(result):
    """What the splitter controls: apart from ThinLTO's .llvm.<module hash> suffixes, some
    partition of the seeded split is unchanged by a one-function edit."""
    (r,) = result["stability"]["4"]["per_edit"]["mtpc-split (seed)"]
    assert r["fraction_modulo_llvm_hash"] > 0


def test_some_partition_file_stays_identical(result):
    (r,) = result["stability"]["4"]["per_edit"]["mtpc-split (seed)"]
    assert r["identical"] >= 1
