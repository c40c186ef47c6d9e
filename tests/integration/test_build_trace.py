"""Where the time went (issue 37, item 3): a split link and a split compile each write the
trace of their inner build (<inner>/trace.json, Chrome trace-event JSON): one complete
event per edge that ran, with its kind, module, partition and the reason the module was
split, on lanes where no two events overlap; `mtpc-cache trace` summarizes the last one."""
import json
import re

from conftest import llvm_tool, run, tool
from test_build_compile import big_source, compile_cmd, mtpc_compile
from test_build_jobs import program


def complete_events(trace_path):
    """The trace's complete events, after checking what holds for every trace: valid JSON of
    the trace-event format, no two events overlapping on one lane."""
    trace = json.loads(trace_path.read_text())
    events = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    for e in events:
        assert {"name", "ts", "dur", "pid", "tid", "args"} <= e.keys(), e
        assert e["dur"] >= 0 and e["args"]["kind"], e
    by_lane = {}
    for e in events:
        by_lane.setdefault(e["tid"], []).append((e["ts"], e["ts"] + e["dur"], e["name"]))
    for lane, spans in by_lane.items():
        spans.sort()
        for (s0, e0, n0), (s1, e1, n1) in zip(spans, spans[1:]):
            assert e0 <= s1, f"lane {lane}: {n0} ({s0}-{e0}) overlaps {n1} ({s1}-{e1})"
    assert trace["otherData"]["lanes"] == len(by_lane)
    return events


def kinds(events):
    out = {}
    for e in events:
        out[e["args"]["kind"]] = out.get(e["args"]["kind"], 0) + 1
    return out


def test_split_compile_writes_a_trace(tmp_path):
    src = big_source(tmp_path / "big.c", funcs=200)
    obj = tmp_path / "big.o"
    r = mtpc_compile(tmp_path, compile_cmd(src, obj, "-flto=thin"), "--cost-threshold", "0")
    n = int(re.search(r"big\.o: (\d+) partitions", r.stdout).group(1))
    events = complete_events(tmp_path / "big.o.mtpc" / "trace.json")
    assert kinds(events) == {"frontend": 1, "split": 1, "slot": n, "join": 1}, events
    assert events[0]["args"]["kind"] == "frontend" and events[0]["ts"] == 0
    slots = sorted(e["args"]["partition"] for e in events if e["args"]["kind"] == "slot")
    assert slots == list(range(n))
    assert all(e["args"]["module"] == "big.o" for e in events)
    assert all(e["args"]["reason"].startswith("split: cost ") for e in events)
    # the critical path: the frontend, the split, one slot, the join
    assert [e["args"]["kind"] for e in events if e["args"].get("critical")] == \
        ["frontend", "split", "slot", "join"]
    # the summary of the last trace of this cache
    s = run([tool("mtpc-cache"), "--cache", tmp_path / "plans.sqlite", "trace"]).stdout
    assert f"mtpc-compile big.o: {n + 3} steps on " in s, s
    assert re.search(rf"\n  slot +{n} +[\d.]+ +[\d.]+\n", s), s
    assert "critical path: " in s and "lanes busy: " in s and "big.o: split: cost " in s, s
    # the same through the output's name
    assert run([tool("mtpc-cache"), "trace", obj]).stdout == s


def test_split_link_writes_a_trace(tmp_path):
    lib = big_source(tmp_path / "two.c", funcs=16)
    lib.write_text(lib.read_text().replace("int main(", "int two_main("))
    run([llvm_tool("clang"), "-O2", "-flto=thin", "-c", lib, "-o", tmp_path / "two.o"])
    objs = [program(tmp_path, "one"), tmp_path / "two.o"]
    out = tmp_path / "app"
    cache = tmp_path / "plans.sqlite"
    r = run([tool("mtpc-link"), "--threshold", "0", "--partitions", "4", "--jobs", "2", "--min-cost", "0",
             "--cache", cache, "--", llvm_tool("clang"), "-O2", "-flto=thin", "-fuse-ld=lld", "-rdynamic",
             *objs, "-o", out])
    assert "2 split" in r.stdout, r.stdout
    events = complete_events(tmp_path / "app.mtpc" / "trace.json")
    k = kinds(events)
    assert k["thinlink"] == 1 and k["split"] == 2 and k["merge"] == 2 and k["link"] == 1, k
    assert k["slot"] >= 4, k
    assert {e["args"].get("module") for e in events if e["args"]["kind"] == "slot"} == {"one.o", "two.o"}
    assert all(re.match(r"split(: | in \d)", e["args"]["reason"]) for e in events if "module" in e["args"])
    critical = [e["args"]["kind"] for e in events if e["args"].get("critical")]
    assert critical[0] == "thinlink" and critical[-1] == "link" and "slot" in critical, critical
    s = run([tool("mtpc-cache"), "--cache", cache, "trace"]).stdout
    assert f"mtpc-link app: {len(events)} steps on " in s, s
    # A relink with nothing to do writes a trace of nothing; the summary says so.
    run([tool("mtpc-link"), "--threshold", "0", "--partitions", "4", "--jobs", "2", "--min-cost", "0",
         "--cache", cache, "--", llvm_tool("clang"), "-O2", "-flto=thin", "-fuse-ld=lld", "-rdynamic",
         *objs, "-o", out])
    assert complete_events(tmp_path / "app.mtpc" / "trace.json") == []
    s = run([tool("mtpc-cache"), "trace", tmp_path / "app.mtpc"]).stdout
    assert "0 steps on 0 lanes" in s and "nothing ran" in s, s


def test_link_splits_only_where_it_pays(tmp_path):
    """Issue 37, item 1 at the link: by cost, a module is split only when that shortens the
    predicted makespan of the link's backends. On 2 jobs, beside the larger module split in 2,
    the smaller one has no idle core to gain: not split, and the summary line and the trace
    say why. Alone, the same smaller module is the long pole and is split."""
    lib = big_source(tmp_path / "two.c", funcs=40)
    lib.write_text(lib.read_text().replace("int main(", "int two_main("))
    run([llvm_tool("clang"), "-O2", "-flto=thin", "-c", lib, "-o", tmp_path / "two.o"])
    one = program(tmp_path, "one")
    costs = dict(reversed(l.split(" ", 2)[::2]) for l in run(
        [tool("mtpc-split"), "--print-cost", one, tmp_path / "two.o"]).stdout.splitlines())
    assert int(costs[str(tmp_path / "two.o")]) > 2 * int(costs[str(one)]), costs

    def link(*objs, out):
        return run([tool("mtpc-link"), "--cost-threshold", "0", "--relay", "never", "--partitions", "2",
                    "--jobs", "2", "--cache", tmp_path / "plans.sqlite", "--", llvm_tool("clang"), "-O2",
                    "-flto=thin", "-fuse-ld=lld", "-rdynamic", *objs, "-o", out]).stdout

    line = link(one, tmp_path / "two.o", out=tmp_path / "both")
    assert re.search(r"2 modules, 1 split \(two\.o: 2 partitions\)", line), line
    assert re.search(r"not split: one\.o \d+: the cores are busy with 1 other backend "
                     r"\(predicted [\d.]+ s split vs [\d.]+ s unsplit\)", line), line
    events = complete_events(tmp_path / "both.mtpc" / "trace.json")
    why = {e["args"]["module"]: e["args"]["reason"] for e in events if "module" in e["args"]}
    assert why["one.o"].startswith("not split: the cores are busy with 1 other backend"), why
    assert why["two.o"].startswith("split in 2: predicted "), why
    alone = link(one, out=tmp_path / "alone")
    assert re.search(r"1 module, 1 split \(one\.o: 2 partitions\)", alone), alone


def test_trace_of_nothing_is_an_error_naming_the_file(tmp_path):
    r = run([tool("mtpc-cache"), "--cache", tmp_path / "none" / "plans.sqlite", "trace"], check=False)
    assert r.returncode == 1 and str(tmp_path / "none" / "last-trace") in r.stderr, r.stderr
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    r = run([tool("mtpc-cache"), "trace", bad], check=False)
    assert r.returncode == 1 and f"{bad}: not a trace" in r.stderr, r.stderr
