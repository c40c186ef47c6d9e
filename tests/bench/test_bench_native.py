"""bench/native_bench.py (issue 35: the plain compile split): the whole script on a small
synthetic TU (--quick), its tables, and the figures it derives: the merge ran, every slot,
the prediction bounded by the critical path and the work, the serial floor, an edit that
reran fewer slots than there are partitions, and the quality pair; --quality-only's two
columns."""
import json
import pathlib
import shutil
import subprocess
import sys

import pytest

from conftest import BUILD, ROOT

sys.path.insert(0, str(ROOT / "bench"))
import lib  # noqa: E402
import native_bench  # noqa: E402


def test_opt_of_takes_the_workloads_own_level():
    class W:
        cflags = ["-std=c++17", "-O3", "-DX"]
    assert native_bench.opt_of(W) == ["-O3"]
    W.cflags = ["-DX"]
    assert native_bench.opt_of(W) == ["-O2"]


@pytest.mark.skipif(not lib.mtpc_tool("mtpc-compile", BUILD), reason="MTPC tools not built")
@pytest.mark.skipif(not (shutil.which("taskset") and shutil.which("ninja")),
                    reason="taskset/ninja missing")
def test_quick_run(tmp_path):
    out = tmp_path / "native_bench.json"
    r = subprocess.run([sys.executable, str(ROOT / "bench" / "native_bench.py"), "--quick",
                        "--build-dir", str(BUILD), "--work", str(tmp_path / "w"),
                        "--json", str(out)], capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    for section in ("## synthetic: big.c", "Pinned to cpu1", "PREDICTED compile time",
                    "Serial floor", "Wall on ", "Edit -> object", "Quality:", "## Summary"):
        assert section in r.stdout, section
    (m,) = json.loads(out.read_text())["workloads"]
    mc = m["mtpc"]
    assert mc["split_into"] > 1 and not [s for s in mc["said"] if "warning" in s], mc["said"]
    kinds = {e["kind"] for e in mc["edges"]}
    assert {"split", "slot", "merge"} <= kinds and "join" not in kinds, kinds
    p = m["predicted"]
    for n in native_bench.CORES:
        ms = p["makespan"][str(n)]
        assert p["critical_path"] - 1e-9 <= ms <= p["work"] + 1e-9
    assert 0 < p["serial_floor"] < p["work"]
    assert 1 <= m["edit"]["mtpc"]["slots_run"] < mc["split_into"]
    assert m["quality"]["same_output"] and m["quality"]["text_ratio"] > 0


@pytest.mark.skipif(not lib.mtpc_tool("mtpc-compile", BUILD), reason="MTPC tools not built")
def test_quality_only_puts_two_splits_side_by_side(tmp_path):
    """Column B is the same build with a split option that changes the object (no small
    static carried by its callers' partitions): the table shows both, and their ratio."""
    out = tmp_path / "q.json"
    cmd = [sys.executable, str(ROOT / "bench" / "native_bench.py"), "--quick", "--quality-only",
           "--build-dir", str(BUILD), "--work", str(tmp_path / "w"), "--json", str(out),
           "--split-arg=--local-dup-limit=0"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "## Quality, A / B" in r.stdout and "--local-dup-limit=0" in r.stdout
    (m,) = json.loads(out.read_text())["workloads"]
    q = m["quality"]
    assert q["same_output_A"] and q["same_output_B"]
    assert q["A"]["text"] != q["B"]["text"], "the option should change the object"
    again = subprocess.run([sys.executable, str(ROOT / "bench" / "native_bench.py"),
                            "--from-json", str(out)], capture_output=True, text=True, timeout=60)
    assert again.returncode == 0 and "| synthetic | 4 |" in again.stdout, again.stdout
    bad = subprocess.run(cmd[:2] + ["--vs", str(BUILD)], capture_output=True, text=True,
                         timeout=60)
    assert bad.returncode == 2 and "--quality-only" in bad.stderr
