"""bench/relay_cost.py: its edit of a source file (applied, changed again, undone byte for
byte) and its summary of what the relayed modules cost from scratch and after an edit, on
synthetic per-module accounting. The benchmark itself needs a real project (minutes)."""
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import relay_cost  # noqa: E402


def test_edit_applies_a_new_statement_each_time_and_undoes(tmp_path):
    src = tmp_path / "lib"
    src.mkdir()
    f = src / "x.cc"
    text = "int a() {\n  return 1;\n}\n\nint f(int v) {\n  return v;\n}\n"
    f.write_text(text)
    e = relay_cost.Edit(src, r"x.cc:^int f\(int v\) \{$")
    e.apply()
    first = f.read_text()
    assert first.split("\n")[5].startswith("  { static volatile int relay_cost_edit;")
    assert first.split("\n")[4] == "int f(int v) {" and "= 1;" in first
    e.apply()
    second = f.read_text()
    assert second != first and "= 2;" in second and second.count(relay_cost.MARK) == 1
    e.undo()
    assert f.read_text() == text
    with pytest.raises(SystemExit):
        relay_cost.Edit(src, "x.cc:^nothing matches$")
    with pytest.raises(SystemExit):
        relay_cost.Edit(src, "no-colon")


def run(cpu, modules):
    return {"cpu": cpu, "accounting": {"per_link": [{"output": "bin/t", "modules": modules}]}}


def test_summary_of_relayed_modules():
    """m1, m2 relayed in `always` (plain backends in `never`); big split in both (no plain
    backend in `never`: not counted). After the edit, `never` reran both backends; `always`
    reran both imports and the slot of m2 only."""
    runs = {
        "plain": {"scratch": run(10.0, {}), "edit": run(9.0, {})},
        "never": {"scratch": run(10.5, {"m1": {"backend": 2.0}, "m2": {"backend": 4.0},
                                        "big": {"split": 1.0, "slot": 5.0, "merge": 0.2}}),
                  "edit": run(9.2, {"m1": {"backend": 2.0}, "m2": {"backend": 4.0}})},
        "always": {"scratch": run(12.0, {"m1": {"split": 0.8, "slot": 1.9, "merge": 0.1},
                                         "m2": {"split": 1.2, "slot": 3.8, "merge": 0.1},
                                         "big": {"split": 1.0, "slot": 5.0, "merge": 0.2}}),
                   "edit": run(6.0, {"m1": {"split": 0.8},
                                     "m2": {"split": 1.2, "slot": 3.8, "merge": 0.1}})},
    }
    s = relay_cost.summarize(runs)
    assert (s["plain"]["scratch"], s["plain"]["edit"]) == (10.0, 9.0)
    sc = s["scratch_relayed"]
    assert sc["modules"] == 2 and sc["backend"] == 6.0
    assert sc["import"] == pytest.approx(2.0) and sc["slot"] == pytest.approx(5.7)
    er = s["edit_reran"]
    assert (er["never_backends"], er["always_imports"], er["always_slots"],
            er["always_merges"]) == (2, 2, 1, 1)
    assert er["never_backend_cpu"] == 6.0 and er["always_cpu"] == pytest.approx(5.9)
    text = relay_cost.report({"project": "p", "edit": "x.cc:f", "cpu": 1,
                              "rounds": [s]})
    assert "| edit | 9.00 | 9.20 | 6.00 | 1.022 | 0.667 |" in text
    assert "2 relayed modules" in text and "1 slots" in text


def test_plain_path_links_use_the_relink_backends():
    """A `never` link that split nothing ran lld in-process from scratch (no per-module
    edges): the plain backends of its relink after the edit stand in for the import's
    comparison, and a module `never` never ran as a backend is not counted."""
    runs = {
        "plain": {"scratch": run(10.0, {}), "edit": run(9.0, {})},
        "never": {"scratch": run(10.5, {}),
                  "edit": run(9.2, {"m1": {"backend": 2.5}, "m2": {"backend": 4.0}})},
        "always": {"scratch": run(12.0, {"m1": {"split": 0.8, "slot": 1.9, "merge": 0.1},
                                         "m2": {"split": 1.2, "slot": 3.8, "merge": 0.1},
                                         "m3": {"split": 0.3, "slot": 1.0, "merge": 0.1}}),
                   "edit": run(6.0, {"m1": {"split": 0.8}})},
    }
    sc = relay_cost.summarize(runs)["scratch_relayed"]
    assert sc["modules"] == 2 and sc["backend"] == 6.5
    assert sc["import"] == pytest.approx(2.0)


def test_successive_edits_and_configs():
    """--configs plain,auto --edits 3: each edit's links phase, the modules split for their
    edits (from the summary lines) and the slots that ran; no relay comparison without
    never and always; the table compares the last edit."""
    def edit_run(cpu, split, slots):
        r = run(cpu, {f"m{i}": {"split": 0.1, "slot": 1.0} for i in range(slots)})
        r["summaries"] = ["mtpc-link: t: 2 modules, 1 split (a.o: 2 partitions), 1 s; split by "
                          "cost >= 100k instructions: a.o 69k (for its edits)"] * split
        return r
    plain_edits = [run(9.0, {}), run(9.2, {}), run(9.1, {})]
    auto_edits = [edit_run(9.5, 0, 0), edit_run(9.4, 0, 0), edit_run(5.0, 2, 1)]
    runs = {"plain": {"scratch": run(10.0, {}), "edit": plain_edits[-1], "edits": plain_edits},
            "auto": {"scratch": run(10.4, {}), "edit": auto_edits[-1], "edits": auto_edits}}
    s = relay_cost.summarize(runs)
    assert "scratch_relayed" not in s
    assert [e["cpu"] for e in s["auto"]["edits"]] == [9.5, 9.4, 5.0]
    assert s["auto"]["edits"][2] == {"cpu": 5.0, "split_for_edits": 2, "slots": 1}
    assert s["auto"]["edit"] == 5.0
    text = relay_cost.report({"project": "p", "edit": "x.cc:f", "cpu": 1, "rounds": [s]})
    assert "| edit 3 (last) | 9.10 | 5.00 | 0.549 |" in text, text
    assert "| 3 | 9.10 | 5.00 (2, 1) | 0.549 |" in text, text
    assert "relayed modules" not in text


def link(output, seconds, modules, counts=None, thin=0.5, final=0.5):
    inner = sum(sum(k.values()) for k in modules.values()) + thin + final
    return {"output": output, "seconds": seconds, "inner_seconds": inner,
            "kinds": {"thinlink": {"count": 1, "seconds": thin}, "link": {"count": 1, "seconds": final}},
            "modules": modules, "module_counts": counts or {}}


def acc_run(cpu, links, per_link=None):
    return {"cpu": cpu, "accounting": {"links": links, "per_link": per_link or []}}


def test_predicted_edit_schedules_each_edge():
    """Two links, each a 4 s library module and a 1 s test module. Plain (lld in-process,
    4 s + 1 s + 1 s of thin and final link per link, 6 s each) is modelled by MTPC's first
    relink; after the last edit MTPC reran only one 1 s slot of the library (split in two)
    and its merge (0.2 s of mtpc-link's own). On 1 core the prediction is the total work;
    on 16, each link's chain."""
    first = acc_run(12.4, {"a": 6.2, "b": 6.2}, [
        link("a", 6.2, {"lib": {"backend": 4.0}, "t": {"backend": 1.0}}),
        link("b", 6.2, {"lib": {"backend": 4.0}, "t": {"backend": 1.0}})])
    last = acc_run(8.0, {"a": 4.0, "b": 4.0}, [
        link("a", 4.0, {"lib": {"split": 0.6, "slot": 1.0, "merge": 0.2}, "t": {"backend": 1.0}},
             {"lib": {"split": 1, "slot": 1, "merge": 1}, "t": {"backend": 1}}),
        link("b", 4.0, {"lib": {"split": 0.6, "slot": 1.0, "merge": 0.2}, "t": {"backend": 1.0}},
             {"lib": {"split": 1, "slot": 1, "merge": 1}, "t": {"backend": 1}})])
    plain = acc_run(12.0, {"a": 6.0, "b": 6.0})
    p1 = relay_cost.predict_edit(plain, last, first, 1)
    assert p1["plain"] == pytest.approx(12.0) and p1["mtpc"] == pytest.approx(8.0)
    p16 = relay_cost.predict_edit(plain, last, first, 16)
    # plain: thin 0.5 -> lib 4.0 -> link 0.5, scaled by 6.0 / 6.0 (own time not modelled)
    assert p16["plain"] == pytest.approx(5.0)
    # MTPC: own 0.2 -> thin 0.5 -> split 0.6 -> slot 1.0 -> merge 0.2 -> link 0.5
    assert p16["mtpc"] == pytest.approx(3.0) and p16["ratio"] == pytest.approx(0.6)
    assert p16["plain_unmodelled"] == 0 and p16["mtpc_unmodelled"] == 0
    runs = {"plain": {"scratch": plain, "edit": plain, "edits": [plain, plain]},
            "auto": {"scratch": first, "edit": last, "edits": [first, last]}}
    s = relay_cost.summarize(runs)
    assert s["auto"]["predicted"]["16"]["ratio"] == pytest.approx(0.6)
    text = relay_cost.report({"project": "p", "edit": "x.cc:f", "cpu": 1, "rounds": [s]})
    assert "| 16 | 5.00 | 3.00 | 0.600 |" in text
