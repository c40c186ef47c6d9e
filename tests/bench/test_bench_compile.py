"""bench/compile_bench.py: its edit and graph helpers on small inputs, then the whole script
with --quick (a small synthetic TU: every measurement, no callgrind) against the build
($MTPC_BUILD_DIR): the sections are printed and the numbers are sane. About 30 s."""
import json
import shutil
import subprocess
import sys

import pytest

from conftest import BUILD, ROOT

sys.path.insert(0, str(ROOT / "bench"))
import compile_bench  # noqa: E402
import lib  # noqa: E402


def test_edit_changes_one_constant_past_the_middle():
    text = "int f(void)\n{\n    return 7;\n}\nint g(void)\n{\n    return 0x10;\n}\n"
    new, line = compile_bench.edited(text, r"^\s+return ((?:0x)?[1-9][0-9a-f]*);$", 2)
    assert line == 7 and new.split("\n")[6] == "    return 0x12;"
    assert new.count("\n") == text.count("\n")
    # the same source gives the same line (deterministic)
    assert compile_bench.edited(text, r"^\s+return ([1-9]\d*);$", 1)[1] == 3
    with pytest.raises(lib.BenchError):
        compile_bench.edited(text, r"^\s+CHECK\((\d+)\);$", 1)


def test_rocksdb_workload_reads_its_flags(tmp_path, monkeypatch):
    """The real unity build's workload takes CMake's flags from bench/get-rocksdb.sh's files
    (none when not fetched: the workload is then skipped, its TU missing), crc32c.cc's extra
    ones for that source only, and has no edit (its TU only includes other files)."""
    rd = tmp_path / "rocksdb-src"
    rd.mkdir()
    (rd / "flags.txt").write_text("-DOS_LINUX\n-I/x/include\n-O3\n")
    (rd / "crc32c.txt").write_text("-msse4.2\n-mpclmul\n")
    monkeypatch.setattr(compile_bench, "WORK", tmp_path)
    w = compile_bench.workloads(tmp_path / "out")["rocksdb"]
    assert w.cflags == ["-DOS_LINUX", "-I/x/include", "-O3"] and w.cxx
    assert w.other_flags == {"tree/util/crc32c.cc": ["-msse4.2", "-mpclmul"]}
    assert w.edit_re is None and w.tu == "rocksdb_unity.cc"
    assert compile_bench.flag_file(tmp_path / "missing.txt") == []


def test_graphs_put_the_link_after_the_compile_side():
    edge = lambda n, s, deps=(): {"name": n, "seconds": s, "deps": list(deps)}  # noqa: E731
    m = {"others": {"main.c": 1.0}, "plain_compile": {"cpu": 10.0},
         "frontend": {"cpu": 2.0},
         # mtpc-compile: 3 s of its own (outside its frontend and edges)
         "mtpc_compile": {"cpu": 2.0 + 10.0 + 3.0, "edges": [edge("split.dd", 1.0), edge("p0.o", 4.0, ["split.dd"]),
                                    edge("p1.o", 4.0, ["split.dd"]),
                                    edge("native.o", 1.0, ["p0.o", "p1.o"])]},
         "links": {"i": {"cpu": 20.0},
                   "b": {"cpu": 20.0, "edges": [edge("idx", 1.0), edge("p0.o", 9.0, ["idx"]),
                                   edge("p1.o", 9.0, ["idx"]),
                                   edge("app", 1.0, ["p0.o", "p1.o"])]}}}
    m["links"]["iii"] = m["links"]["b"]
    p = compile_bench.predictions(m)
    assert p["a"]["critical_path"] == 30.0 and p["a"]["work"] == 31.0
    assert p["b"]["critical_path"] == 10.0 + 1 + 9 + 1
    assert p["c"]["critical_path"] == 3.0 + 2 + 1 + 4 + 1 + 1 + 9 + 1
    assert p["c"]["makespan"]["2"] == p["c"]["critical_path"]
    assert p["c"]["compile_work"] == 3.0 + 2 + 1 + 4 + 4 + 1 and p["c"]["compile_own"] == 3.0
    assert p["c0"]["critical_path"] == p["c"]["critical_path"] - 3.0
    assert p["c"]["work"] == 1.0 + 15.0 + 20.0       # the whole processes' CPU
    # the split's emission in threads: its 1 s as 0.2 serial + two parallel 0.4 s
    m["mtpc_compile"]["edges"][0]["kind"] = "split"
    m["split_stats"] = {"serial": 0.1, "emit": [0.2, 0.2]}
    q = compile_bench.predictions(m)
    assert q["c"]["critical_path"] == pytest.approx(p["c"]["critical_path"] - 0.4)
    assert q["c"]["work"] == p["c"]["work"] and q["c"]["compile_work"] == p["c"]["compile_work"]
    assert q["b"] == p["b"]
    # the link's split edges emit in threads too, by their own proportions
    b = dict(m["links"]["b"], edges=[dict(e) for e in m["links"]["b"]["edges"]])
    b["edges"][0]["kind"] = "split"
    b["split_stats"] = {"idx": {"serial": 0.5, "emit": [0.25, 0.25]}}
    m["links"]["b"] = m["links"]["iii"] = b
    r = compile_bench.predictions(m)
    assert r["b"]["critical_path"] == pytest.approx(q["b"]["critical_path"] - 0.25)
    assert r["c"]["critical_path"] == pytest.approx(q["c"]["critical_path"] - 0.25)
    assert r["b"]["work"] == q["b"]["work"]


def test_count_imports():
    text = ("main.c: Import g from /src/big.c\n/src/big.c: Import h from util.c\n"
            "big.c: Import k from big2.c\nutil.c: Import g2 from big.c\nunrelated line\n")
    assert compile_bench.count_imports(text, "big.c") == {"into": 2, "from": 2}


def test_split_stats_parse():
    line = ("mtpc-split: front.bc: serial 0.3565 s + emit 0.9839 s wall on 2 threads; emit CPU "
            "by partition (s): 0.0609 0.0622 0.0523\n")
    assert compile_bench.split_stats(line) == {"serial": 0.3565, "emit": [0.0609, 0.0622, 0.0523]}
    assert compile_bench.split_stats("mtpc-split: 2 partitions") is None


@pytest.mark.skipif(not (lib.mtpc_tool("mtpc-compile", BUILD) and
                         lib.mtpc_tool("mtpc-link", BUILD)), reason="MTPC tools not built")
@pytest.mark.skipif(not (shutil.which("taskset") and shutil.which("ninja")),
                    reason="taskset/ninja missing")
def test_quick_run(tmp_path):
    out = tmp_path / "compile_bench.json"
    r = subprocess.run([sys.executable, str(ROOT / "bench" / "compile_bench.py"), "--quick",
                        "--build-dir", str(BUILD), "--work", str(tmp_path / "w"),
                        "--json", str(out)], capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    text = r.stdout
    for section in ("## synthetic: big.c", "Pinned to cpu1, one edge after another",
                    "| compile: slots (n, max) |", "| link: slots (n, max) |",
                    "PREDICTED critical path", "Wall on ", "Edit -> object",
                    "Quality of the program", "## Summary"):
        assert section in text, section
    (m,) = json.loads(out.read_text())["workloads"]
    mc = m["mtpc_compile"]
    assert mc["split_into"] > 1, mc["said"]
    assert not [s for s in mc["said"] if "warning" in s]
    kinds = compile_bench.kinds(mc["edges"])
    assert kinds["split"]["count"] == kinds["join"]["count"] == 1
    assert kinds["slot"]["count"] == mc["split_into"]
    # the compile-side work from an interleaved pinned pair, as the summary reports it
    (pair,) = m["work_pairs"]
    assert pair["plain"] > 0 and pair["mtpc"] > 0
    assert compile_bench.compile_work(m)[0] == pytest.approx(pair["mtpc"] / pair["plain"])
    # the thin link's imports counted for both objects
    assert set(m["imports"]) == {"i", "ii"} and all(set(v) == {"into", "from"}
                                                    for v in m["imports"].values())
    # every split edge of the links has its --stats proportions, one emission a partition
    for k in ("b", "iii"):
        split_edges = {e["name"] for e in m["links"][k]["edges"] if e["kind"] == "split"}
        ls = m["links"][k]["split_stats"]
        assert split_edges and set(ls) == split_edges, (split_edges, ls)
        assert all(v and len(v["emit"]) > 1 for v in ls.values()), ls
    p = m["predicted"]
    # Which configuration is faster is the benchmark's finding (timed, on this tiny input it
    # moves with the machine); the test checks the arithmetic: the split configuration has
    # edges that can run side by side, so its critical path is below its work
    assert p["c"]["critical_path"] < p["c"]["work"]
    for cfg in "abc":     # the critical path and the work bound every makespan
        for n in compile_bench.CORES:
            ms = p[cfg]["makespan"][str(n)]
            assert p[cfg]["critical_path"] - 1e-9 <= ms <= p[cfg]["work"] + 1e-9
    # the edit reran the split and fewer slots than it has partitions
    assert 1 <= m["edit"]["mtpc"]["slots_run"] < mc["split_into"]
    q = m["quality"]
    assert all(q[k]["same_output"] and q[k]["exit"] == 0 for k in ("i", "b", "ii", "iii"))
    assert all(0.8 < q[k]["text_ratio"] < 1.2 for k in q)
    for c in ("plain", "mtpc", "mtpc_kept"):
        assert len(m["wall"][c]["compile"]["values"]) == 2
    for c in ("plain", "mtpc"):
        assert m["wall"][c]["compile"]["median"] <= m["wall"][c]["path"]["median"]
