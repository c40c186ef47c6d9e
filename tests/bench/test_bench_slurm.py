"""bench/slurm_bench.py (issue #12's benchmark) at a tiny size, on the test cluster it starts
itself (tests/slurm_cluster.py): the synthetic program with 1,500 lines, 4 partitions, one
repeat. What must hold: the JSON has the dispatch overhead (out, back, out+back: median and
p95 > 0), predictions for 4, 16 and 64 nodes that do not grow with more nodes, the remote
compiles ran on both nodes, and the program is the plain link's. Marked `slurm`; skipped
where the cluster cannot be started."""
import json
import subprocess
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "tests"))
import slurm_cluster  # noqa: E402

pytestmark = pytest.mark.slurm


def test_slurm_bench_smoke(tmp_path):
    reason = slurm_cluster.unavailable_reason()
    if reason:
        pytest.skip(reason)
    out = tmp_path / "bench.json"
    r = subprocess.run([sys.executable, str(ROOT / "bench" / "slurm_bench.py"),
                        "--workloads", "synth", "--lines", "1500", "--partitions", "4",
                        "--repeat", "1", "--work", str(tmp_path / "work"), "--json", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "PREDICTED 16 nodes" in r.stdout and "Dispatch overhead" in r.stdout, r.stdout
    data = json.loads(out.read_text())

    o = data["overhead"]
    assert o["edges"] >= 5, o      # 4 slots + the small modules' backends
    for key in ("out", "back", "sum"):
        assert o[key]["median"] > 0 and o[key]["p95"] > 0, o
        assert o[key]["p95"] >= o[key]["median"]

    wd = data["workloads"]["synth"]
    assert wd["large"] == "big.o"
    assert wd["plain_backend"]["median"] > 0
    link = wd["links"]["4"]
    assert link["partitions"] == [4], link["partitions"]
    p = {n: link["predicted"][n]["median"] for n in ("4", "16", "64")}
    assert all(v > 0 for v in p.values()), p
    assert p["4"] >= p["16"] >= p["64"], p
    # the critical path bounds every prediction from below
    assert p["64"] >= link["critical_path"]["length"] - 1e-9
    # one-CPU allocations (one compile at a time): one node or the other, never this machine
    assert link["nodes_used"] and set(link["nodes_used"]) <= {"n1", "n2"}, link["nodes_used"]
    run = link["runs"][0]
    assert {e["node"] for e in run["remote_edges"]} <= {"n1", "n2"}
    assert all(e["cpu"] > 0 for e in run["remote_edges"])
    assert all(e["exit"] == 0 for e in run["remote_edges"])
    # every remote compile is an edge of the inner build, and so are the local steps
    kinds = {e["kind"] for e in run["edges"]}
    assert {"thinlink", "split", "slot", "merge", "link"} <= kinds, kinds
    assert sum(e["remote_compile"] is not None for e in run["edges"]) == len(run["remote_edges"])
    assert link["outputs_match_plain"]
    assert run["wall"] > 0 and link["ratio_plain_over_predicted"]["16"] > 0
