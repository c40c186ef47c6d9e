"""bench/predict.py: .ninja_log parsing, ninja -t graph parsing, list-scheduling predictor."""
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import predict  # noqa: E402


def test_chain_is_serial_whatever_the_cores():
    d = {"a": 1.0, "b": 2.0, "c": 3.0}
    deps = {"b": {"a"}, "c": {"b"}}
    for p in (1, 4, 64):
        assert predict.list_schedule(d, deps, p)[0] == pytest.approx(6.0)
    assert predict.critical_path(d, deps) == (pytest.approx(6.0), ["a", "b", "c"])


def test_independent_equal_jobs_fill_cores():
    d = {f"j{i}": 1.0 for i in range(10)}
    assert predict.list_schedule(d, {}, 1)[0] == pytest.approx(10.0)
    assert predict.list_schedule(d, {}, 4)[0] == pytest.approx(3.0)    # ceil(10/4)
    assert predict.list_schedule(d, {}, 16)[0] == pytest.approx(1.0)


def test_split_fan_out_merge_shape():
    # import -> split -> 8 partitions of unequal cost -> merge: the MTPC inner graph
    parts = {f"p{i}": float(i + 1) for i in range(8)}
    d = {"import": 1.0, "split": 0.5, "merge": 0.25, **parts}
    deps = {"split": {"import"}, "merge": set(parts), **{p: {"split"} for p in parts}}
    m64, sched = predict.list_schedule(d, deps, 64)
    assert m64 == pytest.approx(1.0 + 0.5 + 8.0 + 0.25)
    assert sched["merge"][0] == pytest.approx(1.5 + 8.0)
    m1, _ = predict.list_schedule(d, deps, 1)
    assert m1 == pytest.approx(sum(d.values()))
    # 2 cores, longest first: (8,5,4,1)=18 ... LPT gives 18 on both cores
    m2, _ = predict.list_schedule(d, deps, 2)
    assert m2 == pytest.approx(1.5 + 18.0 + 0.25)


def test_priority_follows_longest_remaining_path():
    # with one core free at a time, the job heading the long chain must start first
    d = {"short": 1.0, "head": 1.0, "tail": 10.0}
    deps = {"tail": {"head"}}
    m, sched = predict.list_schedule(d, deps, 2)
    assert m == pytest.approx(11.0)
    assert sched["head"][0] == 0.0


def test_pools_local_jobs_serialize_while_remote_ones_spread():
    # 4 local jobs of 1 s on a 1-core pool, 4 remote jobs of 1 s on 8 cores
    d = {**{f"l{i}": 1.0 for i in range(4)}, **{f"r{i}": 1.0 for i in range(4)}}
    pools = {f"l{i}": "local" for i in range(4)}
    m, sched = predict.list_schedule(d, {}, 8, pools=pools, capacity={"local": 1})
    assert m == pytest.approx(4.0)
    assert sorted(sched[f"l{i}"][0] for i in range(4)) == pytest.approx([0.0, 1.0, 2.0, 3.0])
    assert all(sched[f"r{i}"][0] == 0.0 for i in range(4))
    # without the pool, 8 cores run all at once
    assert predict.list_schedule(d, {}, 8)[0] == pytest.approx(1.0)
    # the remote pool is the bottleneck the other way round
    m, _ = predict.list_schedule(d, {}, 1, pools=pools, capacity={"local": 4})
    assert m == pytest.approx(4.0)


def test_pools_do_not_lend_cores():
    # a free local core must not run a remote job, nor a free remote core a local one
    d = {"split": 2.0, **{f"p{i}": 1.0 for i in range(4)}, "merge": 0.5, "other": 3.0}
    deps = {**{f"p{i}": {"split"} for i in range(4)}, "merge": {f"p{i}" for i in range(4)}}
    pools = {"split": "local", "merge": "local", "other": "local"}
    m, sched = predict.list_schedule(d, deps, 2, pools=pools, capacity={"local": 1})
    # local core: split (0-2, highest bottom level), other (2-5), merge after it (5-5.5);
    # remote: p0..p3 on 2 cores from 2 to 4
    assert sched["split"] == (0.0, 2.0)
    assert sched["other"] == (2.0, 5.0)
    assert max(sched[f"p{i}"][1] for i in range(4)) == pytest.approx(4.0)
    assert sched["merge"] == (5.0, 5.5)
    assert m == pytest.approx(5.5)
    # two local cores: "other" runs beside split, merge right after the partitions
    m2, sched2 = predict.list_schedule(d, deps, 2, pools=pools, capacity={"local": 2})
    assert sched2["merge"] == (4.0, 4.5) and m2 == pytest.approx(4.5)


def test_pools_rejected_without_capacity():
    with pytest.raises(ValueError):
        predict.list_schedule({"a": 1.0}, {}, 2, pools={"a": "local"})
    with pytest.raises(ValueError):
        predict.list_schedule({"a": 1.0}, {}, 2, pools={"a": "local"}, capacity={"local": 0})


def test_cycle_and_unknown_dependency_rejected():
    with pytest.raises(ValueError):
        predict.list_schedule({"a": 1.0}, {"a": {"zz"}}, 2)
    with pytest.raises(ValueError):
        predict.list_schedule({"a": 1.0, "b": 1.0}, {"a": {"b"}, "b": {"a"}}, 2)


def test_parse_ninja_log_groups_multi_output_edges_and_keeps_latest():
    log = ("# ninja log v5\n"
           "0\t100\t1\ta.o\taaaa\n"
           "0\t100\t1\ta.d\taaaa\n"
           "100\t250\t2\tb.o\tbbbb\n"
           "300\t350\t3\tb.o\tcccc\n")       # b.o rebuilt later: this run wins
    edges = predict.parse_ninja_log(log)
    assert [(e.name, e.outputs, e.seconds) for e in edges] == [
        ("a.o", ["a.o", "a.d"], 0.1), ("b.o", ["b.o"], 0.05)]


@pytest.mark.skipif(shutil.which("ninja") is None, reason="ninja not installed")
def test_real_ninja_graph_with_dyndep(tmp_path):
    (tmp_path / "build.ninja").write_text(
        "rule cp\n  command = cp $in $out\n"
        "rule split\n  command = echo x > a.o && echo x > b.o && printf "
        "'ninja_dyndep_version = 1\\nbuild merged: dyndep | a.o b.o\\n' > $out\n"
        "build s.dd: split src\n"
        "build a.o: cp src || s.dd\n"
        "build b.o: cp src || s.dd\n"
        "build merged: cp src | s.dd || s.dd\n  dyndep = s.dd\n"
        "build all: phony merged\ndefault all\n")
    (tmp_path / "src").write_text("x\n")
    subprocess.run(["ninja", "-C", str(tmp_path)], check=True, capture_output=True)
    edges = predict.parse_ninja_log((tmp_path / ".ninja_log").read_text())
    inputs = predict.ninja_graph_inputs(tmp_path)
    deps = predict.edge_dependencies(edges, inputs)
    assert deps["merged"] == {"s.dd", "a.o", "b.o"}     # dyndep inputs seen
    assert deps["a.o"] == {"s.dd"}                      # order-only input seen
    assert deps["s.dd"] == set()
    summary = predict.predict(edges, deps, (1, 4))
    assert summary["edges"] == 4
    assert summary["critical_path_edges"][0] == "s.dd"
    assert summary["critical_path_edges"][-1] == "merged"
