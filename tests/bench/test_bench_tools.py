"""bench/ helpers: measured runs, callgrind parsing, partition listing, report writer.
Quick: no large compile."""
import json
import shutil
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import callgrind  # noqa: E402
import lib  # noqa: E402
import run as bench_run  # noqa: E402
import split_bench  # noqa: E402


def test_run_measured_counts_child_cpu():
    m = lib.run_measured([sys.executable, "-c", "sum(i * i for i in range(3_000_000))"])
    assert m.returncode == 0 and m.cpu > 0.05 and m.wall >= m.cpu * 0.5
    with pytest.raises(lib.BenchError, match="command failed"):
        lib.run_measured([sys.executable, "-c", "import sys; sys.exit(3)"])


def test_callgrind_parse():
    err = "==12== Events    : Ir\n==12== Collected : 129391\n==12==\n"
    assert callgrind.parse_collected(err) == 129391
    assert callgrind.parse_collected("", "events: Ir\nsummary: 4242\n") == 4242
    with pytest.raises(callgrind.CallgrindError):
        callgrind.parse_collected("nothing", "")


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind not installed")
def test_callgrind_counts_a_real_program():
    n, out = callgrind.instructions(["/bin/echo", "hi"])
    assert out == "hi\n" and n > 1000


def test_partition_files_orders_both_naming_schemes(tmp_path):
    for name in ("p10.bc", "p2.bc", "p0.bc", "plan.json", "localize.txt", "p1"):
        (tmp_path / name).write_text("")
    assert [p.name for p in split_bench.partition_files(tmp_path)] == [
        "p0.bc", "p1", "p2.bc", "p10.bc"]


def test_makespan_longest_first():
    """Longest first onto the least-loaded thread: 5,4,3,3,3 on 2 threads is 5+3 | 4+3+3,
    makespan 10 (a heuristic: 5+4 | 3+3+3 would be 9), within LPT's bounds."""
    assert split_bench.makespan([3, 5, 3, 4, 3], 2) == 10
    assert split_bench.makespan([3, 5, 3, 4, 3], 16) == 5       # one thread each: the longest
    assert split_bench.makespan([3, 5, 3, 4, 3], 1) == 18       # all in a row
    assert split_bench.makespan([], 4) == 0.0
    assert split_bench.makespan([0.5, 0.25], 0) == 0.75         # no thread: treated as one
    times = [0.031, 0.027, 0.044, 0.029, 0.030, 0.026, 0.041, 0.028]
    for j in (1, 2, 3, 8):
        m = split_bench.makespan(times, j)
        assert max(max(times), sum(times) / j) <= m <= sum(times) / j + max(times)


def test_parse_emit_stats_and_predict_split():
    err = ("mtpc-split: /x/m o.o: 3 partitions, 9 functions (0 dead), ... 0.84 s (key 0.00,"
           " load 0.16, ipo 0.18, cache 0.00, plan 0.02, emit 0.47, write 0.01)\n"
           "mtpc-split: /x/m o.o: serial 0.3758 s + emit 0.4669 s wall on 2 threads; "
           "emit CPU by partition (s): 0.2000 0.1500 0.1000\n")
    st = split_bench.parse_emit_stats(err)
    assert st == {"serial": 0.3758, "emit_wall": 0.4669, "emit_threads": 2,
                  "emit_cpu": [0.2, 0.15, 0.1]}
    assert split_bench.parse_emit_stats("mtpc-split: m.o: outputs up to date\n") is None
    procs = split_bench.parse_emit_stats(err.replace("2 threads", "16 processes"))
    assert procs == dict(st, emit_threads=16)
    pipe = {"split_wall": 0.9, "split_stats": st}
    # the process's wall without the emission, plus the emission's makespan
    assert split_bench.predict_split(pipe, 16) == pytest.approx(0.9 - 0.4669 + 0.2)
    assert split_bench.predict_split(pipe, 2) == pytest.approx(0.9 - 0.4669 + 0.25)
    assert split_bench.predict_split({"split_wall": 0.9}, 16) is None


def test_report_from_measured_json(tmp_path):
    runs = [{"part_cpu": [1.0, 2.0], "partitions": 2}]
    split = {"input": "/x/m.import.bc", "partitions": 2, "repeat": 1, "opt": "-O2",
             "unsplit": {"backend_wall": 3.0, "backend_cpu": 2.9, "compile_wall": 2.9,
                         "compile_cpu": 2.8},
             "splitters": {"llvm-split": {"runs": runs, "summary": {
                 "partitions": 2, "sum_cpu_over_unsplit": 1.07, "slowest_over_mean": 1.33,
                 "split_over_backend": 0.04, "critical_path": 2.3,
                 "predicted_speedup": 1.3}}}}
    pred = {"build_dir": "/b/synth.mtpc", "edges": 3, "measured_makespan": 5.0,
            "work": 8.0, "critical_path": 4.0, "critical_path_edges": ["a", "b"],
            "predicted": {"4": {"makespan": 4.0, "speedup": 2.0}}}
    (tmp_path / "s.json").write_text(json.dumps(split))
    (tmp_path / "p.json").write_text(json.dumps(pred))
    out = tmp_path / "rep"
    assert bench_run.main(["report", "--out", str(out), "--split", str(tmp_path / "s.json"),
                           "--predict", str(tmp_path / "p.json")]) == 0
    md = (out / "report.md").read_text()
    assert "| llvm-split | 2 | 1.070 | 1.330 | 0.040 | 2.30 s | 1.30x |" in md
    assert "4.00 s (2.00x)" in md
    if shutil.which("gnuplot"):
        assert (out / "split1.png").stat().st_size > 0
        assert (out / "predict.png").stat().st_size > 0


def test_compare_small_synthetic_plain_vs_mtpc(tmp_path):
    """run.py compare end to end on a tiny synthetic project: the MTPC build must go through
    mtpc-link and print the same checksum as plain ThinLTO (exit 0 means same output)."""
    if not (lib.mtpc_tool("mtpc-link") and lib.mtpc_tool("mtpc-split")):
        pytest.skip("MTPC tools not built (scripts/build.sh)")
    if shutil.which("cmake") is None or shutil.which("ninja") is None:
        pytest.skip("cmake/ninja not installed")
    out = tmp_path / "cmp.json"
    rc = bench_run.main(["compare", "synth", "--lines", "1500", "--seed", "5",
                         "--partitions", "2", "--work", str(tmp_path / "w"),
                         "--source-dir", str(tmp_path / "src"),
                         "--json", str(out)])
    data = json.loads(out.read_text())
    assert rc == 0, data
    assert set(data["configs"]) == {"thin", "mtpc-2"}
    assert all(c["same_output"] for c in data["configs"].values())
    assert data["configs"]["mtpc-2"]["inner_predict"]["edges"] > 0
    assert data["configs"]["mtpc-2"]["runs"][0]["mtpc_link"]
    rep = tmp_path / "rep"
    assert bench_run.main(["report", "--out", str(rep), "--compare", str(out)]) == 0
    assert "| mtpc-2 |" in (rep / "report.md").read_text()


def test_split_bench_unit_and_pipeline(tmp_path):
    """split_bench on a module whose largest unit is bigger than a fair share: it measures
    that unit alone (without its partition's copies) and the backend on 2 cores."""
    import test_split_copies as tc
    if not lib.mtpc_tool("mtpc-split"):
        pytest.skip("mtpc-split not built")
    ll, bc = tmp_path / "m.ll", tmp_path / "m.bc"
    ll.write_text(tc.module_text())
    lib.run_measured([lib.llvm_tool("llvm-as"), ll, "-o", bc])
    out = tmp_path / "sb.json"
    assert split_bench.main(["--input", str(bc), "-n", "4", "-r", "1", "-j", "2",
                             "--mtpc-split-args=--scc-cut 0",   # keep the oversized SCC whole
                             "--work", str(tmp_path / "w"), "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    mtpc = data["splitters"]["mtpc-split"]
    s, run = mtpc["summary"], mtpc["runs"][0]
    assert 0.25 < run["unit_share"] < 0.5 and run["unit_cpu"] > 0
    assert s["slowest_over_unit"] == run["max_cpu"] / run["unit_cpu"]
    # the unit alone is the SCC's partition with its copies made declarations
    unit_ir = lib.run_measured([lib.llvm_tool("llvm-dis"), tmp_path / "w" / "mtpc-split" /
                                "unit.bc", "-o", "-"]).stdout
    assert "define i32 @big0(" in unit_ir and "declare i32 @h8(" in unit_ir
    assert "available_externally" not in unit_ir
    for name in ("mtpc-split", "llvm-split"):
        p = data["splitters"][name]["runs"][0]["pipeline"]
        assert p["partitions"] == 4 and p["wall"] > 0 and p["cpu"] > 0
        s = data["splitters"][name]["summary"]
        assert s["pipeline_over_backend"] > 0
        # the floor: serial split + the partitions' CPU shared by 2 cores + merge
        assert 0 < p["split_cpu"] <= p["cpu"] and 0 < p["split_wall"] <= p["wall"]
        assert s["pipeline_floor"] == pytest.approx(
            (s["pipeline_split_wall"] + s["sum_cpu"] / 2 + s["merge_cpu"])
            / data["unsplit"]["backend_cpu"])
    # mtpc-split's pipeline split ran with --stats: the split predicted with one emission
    # thread per partition (the emission's makespan is then its largest partition)
    s, run = mtpc["summary"], mtpc["runs"][0]
    st = run["pipeline"]["split_stats"]
    assert len(st["emit_cpu"]) == 4 and min(st["emit_cpu"]) >= 0
    assert s["predict_threads"] == 4
    assert s["split_wall_predicted"] == pytest.approx(
        run["pipeline"]["split_wall"] - st["emit_wall"] + max(st["emit_cpu"]))
    assert s["serial_over_backend_cpu_predicted"] == pytest.approx(
        (s["split_wall_predicted"] + run["merge_wall"]) / data["unsplit"]["backend_cpu"])
    assert s["predicted_speedup_n_cores_split_threads"] == pytest.approx(
        data["unsplit"]["backend_cpu"]
        / (s["split_wall_predicted"] + run["merge_wall"] + run["max_cpu"]))
    assert "split_stats" not in data["splitters"]["llvm-split"]["runs"][0]["pipeline"]


def test_wrap_sweep_counts_dwarf_errors_only_mtpc_adds():
    import wrap_sweep
    off = "error: DIE 0x0000beef has a bad DW_AT_ranges\nerror: line table 0x10 is unsorted\n"
    on_same = "error: DIE 0x0000cafe has a bad DW_AT_ranges\nerror: line table 0x20 is unsorted\n"
    assert wrap_sweep.verify_errors_only_on(off, on_same) == []
    assert wrap_sweep.verify_errors_only_on(off, on_same + "error: DIE 0x1 has no name\n") == \
        ["error: DIE 0x_ has no name"]
    assert wrap_sweep.verify_errors_only_on("", "") == []


def test_wrap_sweep_split_args_reach_only_the_mtpc_build(tmp_path, monkeypatch):
    """--split-args becomes MTPC_SPLIT_ARGS (a ;-list) of the MTPC build's configure, and is
    not passed to the plain build, whose command would otherwise differ from an earlier run's."""
    import types

    import wrap_sweep
    seen = {}

    def fake_run(cmd, timeout=None, out=None):
        seen[cmd[cmd.index("-B") + 1].name] = [str(c) for c in cmd]
        return 1, ""  # configure "fails": nothing is built

    monkeypatch.setattr(wrap_sweep, "run", fake_run)
    tc = types.SimpleNamespace(cc="clang-19", cxx="clang++-19", build=tmp_path / "mtpc",
                               tools={}, sha256={})
    args = types.SimpleNamespace(partitions=0, build_type="Release", jobs=2, timeout=5,
                                 reuse_builds=False, split_args="--emit-with processes",
                                 split_compile=True, native=False)
    for mode in ("OFF", "ON"):
        r = wrap_sweep.configure_and_build("tinyxml2", mode, tmp_path / "src",
                                           tmp_path / mode.lower(), tc, args)
        assert r["configure_rc"] == 1 and not r["ok"]
    assert "-DMTPC_SPLIT_ARGS=--emit-with;processes" in seen["on"]
    assert not any(a.startswith("-DMTPC_SPLIT_ARGS") for a in seen["off"])
    # --split-compile: every compile of the MTPC build split too, none of the plain build's
    assert "-DMTPC_SPLIT_COST=0" in seen["on"] and "-DMTPC_SPLIT_COST=0" not in seen["off"]
    assert not any(a.startswith("-DWRAP_LTO") for a in seen["on"] + seen["off"])
    # --native: both builds without LTO, every compile of the MTPC build split
    args.split_compile, args.native = False, True
    for mode in ("OFF", "ON"):
        wrap_sweep.configure_and_build("tinyxml2", mode, tmp_path / "src",
                                       tmp_path / mode.lower(), tc, args)
    assert "-DWRAP_LTO=OFF" in seen["on"] and "-DWRAP_LTO=OFF" in seen["off"]
    assert "-DMTPC_SPLIT_COST=0" in seen["on"] and "-DMTPC_SPLIT_COST=0" not in seen["off"]


def test_wrap_sweep_rocksdb_is_a_unity_build_of_its_tests(tmp_path, monkeypatch):
    """rocksdb (the real unity build): configured as Debug with -O2 whatever --build-type
    says (its CMake builds tests only as Debug), with CMAKE_UNITY_BUILD and a batch size of
    0 (the library in one TU), in both builds."""
    import types

    import wrap_sweep
    seen = {}

    def fake_run(cmd, timeout=None, out=None):
        seen[cmd[cmd.index("-B") + 1].name] = [str(c) for c in cmd]
        return 1, ""

    monkeypatch.setattr(wrap_sweep, "run", fake_run)
    tc = types.SimpleNamespace(cc="clang-19", cxx="clang++-19", build=tmp_path / "mtpc",
                               tools={}, sha256={})
    args = types.SimpleNamespace(partitions=0, build_type="RelWithDebInfo", jobs=2,
                                 timeout=5, reuse_builds=False, split_args="",
                                 split_compile=False, native=False)
    for mode in ("OFF", "ON"):
        wrap_sweep.configure_and_build("rocksdb", mode, tmp_path / "src",
                                       tmp_path / mode.lower(), tc, args)
        cmd = seen[mode.lower()]
        assert "-DCMAKE_BUILD_TYPE=Debug" in cmd
        assert not any(a == "-DCMAKE_BUILD_TYPE=RelWithDebInfo" for a in cmd)
        for d in ("-DCMAKE_CXX_FLAGS_DEBUG=-O2", "-DCMAKE_UNITY_BUILD=ON",
                  "-DCMAKE_UNITY_BUILD_BATCH_SIZE=0"):
            assert d in cmd
    assert (wrap_sweep.WRAP / "rocksdb" / "CMakeLists.txt").is_file()


def test_wrap_sweep_test_keys_ignore_addresses():
    """A googletest name with a pointer parameter's value (different in each build) is
    compared without it; two such names that become one are numbered in order."""
    import wrap_sweep
    names = ["MockEnv/EnvBasicTestWithParam.Misc/0x5567d4fff4f0",
             "DefaultEnv/EnvBasicTestWithParam.Misc/0x5567d4fff4a8",
             "MockEnv/EnvBasicTestWithParam.Misc/0x7f00aa001000", "DBBasicTest.OpenWhenOpen",
             "Checksum/0x1f"]
    assert list(wrap_sweep.stable_keys(names).values()) == [
        "MockEnv/EnvBasicTestWithParam.Misc/0x…", "DefaultEnv/EnvBasicTestWithParam.Misc/0x…",
        "MockEnv/EnvBasicTestWithParam.Misc/0x… #2", "DBBasicTest.OpenWhenOpen",
        "Checksum/0x1f"]
    # the other build's run, other addresses: the same keys
    other = [n.replace("5567d4ff", "55d0c1ee").replace("7f00aa00", "7f11bb00") for n in names]
    assert list(wrap_sweep.stable_keys(other).values()) == \
        list(wrap_sweep.stable_keys(names).values())


def test_wrap_sweep_log_counts_split_compiles(tmp_path):
    import wrap_sweep
    log = tmp_path / "build.log"
    log.write_text("[1/9] Building C object x.c.o\n"
                   "mtpc-compile: x.c.o: 4 partitions, cost 120 instructions (estimated), 0.20 s\n"
                   "mtpc-compile: y.c.o: 1 partition, cost 3 instructions (estimated), 0.01 s\n"
                   "mtpc-compile: z.c.o: 2 partitions, cost 99 instructions (measured), 0.10 s\n"
                   "mtpc-compile: warning: w.c.o: the join failed (...); compiling it unsplit\n")
    lg = wrap_sweep.scan_log(log)
    assert (lg["compiles_split"], lg["compile_partitions"]) == (2, 6)
    assert lg["fallbacks"] == ["mtpc-compile: warning: w.c.o: the join failed (...); "
                               "compiling it unsplit"]


def test_wrap_sweep_exports_weak_only(tmp_path, monkeypatch):
    """Exports that differ only in weak definitions (inline functions a library emits out
    of line) are marked weak_only; a strong symbol makes the difference a real one."""
    import wrap_sweep
    syms = {"off/a.so": ["T f", "W _Z1gv", "W _Z1hv"], "on/a.so": ["T f", "W _Z1gv", "W _Z1kv"],
            "off/b.so": ["T f", "T x"], "on/b.so": ["T f"]}
    monkeypatch.setattr(wrap_sweep, "shared_libraries",
                        lambda d: {n: f"{d.name}/{n}" for n in ("a.so", "b.so")})
    monkeypatch.setattr(wrap_sweep, "exports", lambda nm, path: syms[path])
    libs = wrap_sweep.compare_exports("nm", tmp_path / "off", tmp_path / "on")
    a, b = libs
    assert not a["identical"] and a["weak_only"] and a["only_off"] == ["W _Z1hv"]
    assert not b["identical"] and not b["weak_only"]
    assert wrap_sweep.exports_cell({"exports": [a]}).startswith("weak only")
    assert wrap_sweep.exports_cell({"exports": [a, b]}).startswith("DIFFER")
