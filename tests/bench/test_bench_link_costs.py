"""bench/link_costs.py: its parsing and accounting on synthetic logs, then its links phase on
the small C sample (tests/projects/c) built plain and through MTPC: pinned and on all cores,
every edge accounted for. Quick: a few seconds of builds."""
import shutil
import sys

import pytest

from conftest import BUILD, ROOT

sys.path.insert(0, str(ROOT / "bench"))
import lib  # noqa: E402
import link_costs  # noqa: E402

INNER_NINJA = """rule thinlink
  command = $cmd
build index/x/a$ b.o.thinlto.bc index/x/m.o.thinlto.bc | regular-lto.o: thinlink $
    thinlink.rsp
  cmd = true
build mod/m.o-1/split.dd mod/m.o-1/split.n: split index/x/m.o.thinlto.bc
build mod/m.o-1/p0.o: slot || mod/m.o-1/split.dd
build mod/m.o-1/p1.o: slot || mod/m.o-1/split.dd
build mod/m.o-1/native.o: merge | mod/m.o-1/split.dd
build mod/a$ b.o-2/native.o: backend index/x/a$ b.o.thinlto.bc
build mod/c$:d.o-3/native.o: backend x
build /abs/app: link mod/m.o-1/native.o
"""

INNER_LOG = """# ninja log v5
0\t100\t1\tindex/x/a b.o.thinlto.bc\taa
0\t100\t1\tindex/x/m.o.thinlto.bc\taa
0\t100\t1\tregular-lto.o\taa
100\t300\t1\tmod/m.o-1/split.dd\tbb
100\t300\t1\tmod/m.o-1/split.n\tbb
300\t1300\t1\tmod/m.o-1/p0.o\tcc
1300\t2100\t1\tmod/m.o-1/p1.o\tdd
2100\t2200\t1\tmod/m.o-1/native.o\tee
2200\t2700\t1\tmod/a b.o-2/native.o\tff
2700\t2900\t1\tmod/c:d.o-3/native.o\tf0
2900\t3000\t1\t/abs/app\t11
"""


def test_build_rules_and_log_edges():
    rules = link_costs.build_rules(INNER_NINJA)
    assert rules["index/x/a b.o.thinlto.bc"] == "thinlink"
    assert rules["regular-lto.o"] == "thinlink"
    assert rules["mod/c:d.o-3/native.o"] == "backend"
    assert rules["mod/m.o-1/native.o"] == "merge"
    edges = link_costs.log_edges(INNER_LOG)
    assert len(edges) == 8 and edges[0]["outputs"] == ["index/x/a b.o.thinlto.bc",
                                                       "index/x/m.o.thinlto.bc",
                                                       "regular-lto.o"]
    kinds = link_costs.kinds_of(edges, rules, link_costs.inner_kind)
    assert {k: (d["count"], round(d["seconds"], 3)) for k, d in kinds.items()} == {
        "thinlink": (1, 0.1), "split": (1, 0.2), "slot": (2, 1.8), "merge": (1, 0.1),
        "backend": (2, 0.7), "link": (1, 0.1)}
    # a later entry of an output replaces the earlier one (an edge run again)
    again = link_costs.log_edges(INNER_LOG + "5000\t5500\t1\t/abs/app\t12\n")
    assert [e["seconds"] for e in again if e["outputs"] == ["/abs/app"]] == [0.5]


def test_account_splits_link_edges_into_inner_kinds(tmp_path):
    """The outer log of a links run: two link edges (one with an inner build) and a symlink;
    mtpc-link's own = the link edge minus its inner edges; rest = CPU minus every edge."""
    (tmp_path / "bin").mkdir()
    inner = tmp_path / "bin" / "app.mtpc"
    inner.mkdir()
    (inner / "build.ninja").write_text(INNER_NINJA)
    (inner / ".ninja_log").write_text(INNER_LOG)
    outer_rules = {"bin/app": "C_EXECUTABLE_LINKER__app_Release",
                   "lib/libs.so.1": "C_SHARED_LIBRARY_LINKER__s_Release",
                   "lib/libs.so": "CMAKE_SYMLINK_LIBRARY", "x.o": "C_COMPILER__x_Release"}
    assert link_costs.link_outputs(outer_rules) == ["bin/app", "lib/libs.so.1"]
    outer_log = ("0\t3500\t1\tbin/app\t1\n3500\t4000\t1\tlib/libs.so.1\t2\n"
                 "4000\t4010\t1\tlib/libs.so\t3\n")
    acc = link_costs.account(outer_log, outer_rules, tmp_path, 4.5, "mtpc")
    assert acc["outer"]["link"] == {"count": 2, "seconds": 4.0}
    assert acc["outer"]["symlink"]["count"] == 1
    assert acc["inner"]["slot"] == {"count": 2, "seconds": pytest.approx(1.8)}
    assert acc["mtpc_link_own"] == pytest.approx(3.5 - 3.0 + 0.5)   # no inner dir: all own
    assert acc["rest"] == pytest.approx(4.5 - 4.01)
    assert acc["other_edges"] == []
    # each module's edges by kind (mod/<key>/...; the thin link and final link are no module's)
    assert acc["per_link"][0]["modules"] == {
        "m.o-1": {"split": pytest.approx(0.2), "slot": pytest.approx(1.8),
                  "merge": pytest.approx(0.1)},
        "a b.o-2": {"backend": pytest.approx(0.5)}, "c:d.o-3": {"backend": pytest.approx(0.2)}}
    plain = link_costs.account(outer_log + "4010\t4100\t1\tx.o\t4\n", outer_rules, tmp_path,
                               4.5, "plain")
    assert "inner" not in plain and plain["other_edges"] == ["x.o"]


@pytest.mark.skipif(not lib.mtpc_tool("mtpc-link"), reason="MTPC tools not built")
@pytest.mark.skipif(not (shutil.which("cmake") and shutil.which("ninja") and
                         shutil.which("taskset")), reason="cmake/ninja/taskset missing")
def sample_builds(tmp_path, defs):
    """The C sample configured plain and through MTPC (cache variables defs), pinned link
    settings, built."""
    clang = lib.versioned_driver("clang")
    builds = {}
    for config in link_costs.CONFIGS:
        bdir = tmp_path / config
        cmd = ["cmake", "-G", "Ninja", "-S", ROOT / "tests" / "projects" / "c", "-B", bdir,
               f"-DSAMPLE_MTPC={'ON' if config == 'mtpc' else 'OFF'}",
               f"-DCMAKE_C_COMPILER={clang}", f"-DMTPC_DIR={BUILD / 'cmake'}", *defs]
        b = builds[config] = link_costs.Build(bdir, config, cmd, tmp_path, 2)
        b.configure(None, tmp_path / f"{config}-configure.log")
        b.configure(True, tmp_path / f"{config}-configure.log")
        lib.run_measured(["ninja", "-C", bdir], new_session=True)
    return builds


def test_links_phase_of_the_c_sample(tmp_path):
    """Both configs of the C sample (an executable and a shared library), every module split
    (so that every inner edge kind shows): a pinned and a default links run each, every link
    rerun and accounted for, and the table printed."""
    builds = sample_builds(tmp_path, ["-DMTPC_SPLIT_THRESHOLD=0", "-DMTPC_MAX_PARTITIONS=2"])
    r = {"project": "c-sample", "source": "tests/projects/c", "defs": [], "cores": 2,
         "pinned": {}, "wall_runs": {}}
    for config, b in builds.items():
        r["pinned"][config] = p = b.links_run(True, "pinned")
        assert p["links"] == 2 and p["accounting"]["outer"]["link"]["count"] == 2
        assert p["accounting"]["other_edges"] == []
        b.configure(False, tmp_path / f"{config}-configure.log")
        r["wall_runs"][config] = [b.links_run(False, "wall1")]
    m = r["pinned"]["mtpc"]
    assert m["env"] == {"MTPC_JOB_SLOTS": "1"}
    t = m["cmd"].index("taskset")
    assert m["cmd"][t:t + 5] == ["taskset", "-c", "1", "ninja", "-C"]
    for c in link_costs.CONFIGS:
        acc = r["pinned"][c]["accounting"]
        if acc["edge_seconds"] == "cpu":      # a cgroup of our own (root): CPU by edge
            assert acc["cgroup_cpu"] == pytest.approx(r["pinned"][c]["cpu"], rel=0.1, abs=0.05)
    assert r["pinned"]["plain"]["link_settings"][0].endswith("--thinlto-jobs=1")
    inner = m["accounting"]["inner"]
    assert inner["thinlink"]["count"] == 2 and inner["link"]["count"] == 2
    assert inner["split"]["count"] == inner["merge"]["count"] >= 3
    assert inner["slot"]["count"] >= inner["split"]["count"]
    assert m["modules"] >= 4 and m["split"] == inner["split"]["count"]
    # the inner edges ran inside the link edges, one after the other
    for link in m["accounting"]["per_link"]:
        assert 0 < link["inner_seconds"] <= link["seconds"] + 0.02
    for c in link_costs.CONFIGS:
        acc = r["pinned"][c]["accounting"]
        assert 0 < acc["outer_seconds"] <= r["pinned"][c]["cpu"] + 0.05
        assert 0 < acc["outer_durations"] <= r["pinned"][c]["wall"]
    r["wall"] = {c: link_costs.stats(w["wall"] for w in r["wall_runs"][c])
                 for c in link_costs.CONFIGS}
    r["wall_cpu"] = {c: link_costs.stats(w["cpu"] for w in r["wall_runs"][c])
                     for c in link_costs.CONFIGS}
    r["cpu_ratio_pinned"] = lib.ratio(m["cpu"], r["pinned"]["plain"]["cpu"])
    r["wall_ratio"] = lib.ratio(r["wall"]["mtpc"]["median"], r["wall"]["plain"]["median"])
    text = link_costs.report([r])
    assert "| slots (partition compiles) | | | " in text
    assert "| total CPU, pinned to one CPU, -j1 |" in text


def test_fixed_cost_rounds_of_one_link(tmp_path):
    """--fixed-cost: one link's command of each build, pinned, rounds interleaved; --vs puts
    another MTPC build's tools into the MTPC command (here the same build: the command differs
    only where the tools are named). Every run relinks (the output is deleted before it)."""
    builds = sample_builds(tmp_path, [])
    out = sorted(link_costs.link_outputs(builds["mtpc"].rules()))[0]
    args = type("A", (), {"fixed_cost": out, "fixed_rounds": 2, "cpu": 1, "vs": str(BUILD)})

    class TC:
        build = BUILD.resolve()
    r = link_costs.fixed_cost(builds, TC, args)
    assert set(r["seconds"]) == {"plain", "mtpc", "vs"}
    assert "mtpc-link" in r["commands"]["mtpc"] and "mtpc-link" not in r["commands"]["plain"]
    assert "--thinlto-jobs=1" in r["commands"]["plain"]
    for c in r["seconds"]:
        assert len(r["seconds"][c]["values"]) == 2 and r["seconds"][c]["min"] > 0
    assert len(r["mtpc_vs_plain"]["pairs"]) == 2 and r["mtpc_vs_vs"] > 0
    assert (builds["mtpc"].bdir / out).exists()
    r["project"] = "c-sample"
    text = link_costs.report_fixed(r)
    assert "the fixed cost of one link" in text and "| vs |" in text


def test_relink_counts_only_its_own_inner_entries(tmp_path):
    """A relink appends to its inner .ninja_log: the earlier link's entries (another ninja's
    clock) are not this run's edges; inner_log_offsets says where this run's start, and a log
    shorter than that (rewritten) is read whole."""
    (tmp_path / "bin").mkdir()
    inner = tmp_path / "bin" / "app.mtpc"
    inner.mkdir()
    (inner / "build.ninja").write_text(INNER_NINJA)
    (inner / ".ninja_log").write_text(INNER_LOG)
    offsets = link_costs.inner_log_offsets(tmp_path, ["bin/app", "lib/none.so"])
    assert list(offsets) == ["bin/app"] and offsets["bin/app"] > 0
    # the relink reran one slot and the merge
    with open(inner / ".ninja_log", "a") as f:
        f.write("100\t1300\t1\tmod/m.o-1/p0.o\t7\n1300\t1400\t1\tmod/m.o-1/native.o\t8\n")
    kinds, total, edges = link_costs.inner_costs(inner, offset=offsets["bin/app"])
    assert {k: d["count"] for k, d in kinds.items()} == {"slot": 1, "merge": 1}
    assert total == pytest.approx(1.3)
    whole = link_costs.inner_costs(inner, offset=10 ** 9)[0]
    assert whole["slot"]["count"] == 2


def test_log_clock_from_outputs_written_in_the_run():
    """An inner .ninja_log's clock is placed on the wall clock by its entries' output mtimes:
    after an edit most outputs keep an older mtime (restat), which would move the clock and
    give the edges another interval's CPU; only mtimes inside the run count."""
    start = 1_700_000_000 * 10**9          # the ninja started here
    run = (start, start + 60 * 10**9)
    lines = ["# ninja log v5"]
    # two edges that wrote their outputs at their end (ms 1000 and 3000)
    lines.append(f"0\t1000\t{start + 1000 * 10**6}\tmod/a/p0.o\tx")
    lines.append(f"1000\t3000\t{start + 3000 * 10**6}\tlink.out\ty")
    # three restat edges whose outputs kept last week's mtime
    for i in range(3):
        lines.append(f"3000\t3100\t{start - 7 * 86400 * 10**9}\tmod/b/p{i}.bc\tz{i}")
    text = "\n".join(lines) + "\n"
    assert link_costs.log_offset_ns(text, run) == start
    assert link_costs.log_offset_ns(text) != start   # the old rule: the median is an old mtime


def test_interleaved_runs_alternate_abba():
    assert [c for i in range(4) for c in link_costs.abba(i)] == \
        ["plain", "mtpc", "mtpc", "plain", "plain", "mtpc", "mtpc", "plain"]
