"""Value profiles: with IR PGO (-fprofile-generate / -fprofile-use) the
bitcode's indirect calls carry !prof "VP" metadata naming their hot targets by
GUID. mtpc-split recovers those targets as call-graph affinity, so the hot
target stays with its caller (where indirect-call promotion can inline it), and
the split program still behaves like the unsplit one."""
import json

import splitlib as sl
from conftest import ROOT, llvm_tool, run, tool

SRC = ROOT / "tests" / "pgo" / "indirect.c"


def owner(plan, name):
    return [p["index"] for p in plan["partitions"] if name in p["owned"]]


def test_value_profile_targets(tmp_path):
    clang = llvm_tool("clang")
    run([clang, "-O2", f"-fprofile-generate={tmp_path / 'raw'}", SRC, "-o", tmp_path / "gen"])
    run([tmp_path / "gen"])
    raws = sorted((tmp_path / "raw").glob("*.profraw"))
    run([llvm_tool("llvm-profdata"), "merge", *raws, "-o", tmp_path / "p.profdata"])
    bc = tmp_path / "m.bc"
    run([clang, "-O2", "-flto=thin", f"-fprofile-use={tmp_path / 'p.profdata'}", "-c", SRC, "-o", bc])
    out = tmp_path / "out"
    # Small statics are duplicated, not owned: keep hot owned to see where it goes.
    run([tool("mtpc-split"), bc, "-o", out, "--partitions", "2", "--local-dup-limit", "0"])
    plan = json.loads((out / "plan.json").read_text())
    assert plan["stats"]["value_profile_targets"] >= 1
    assert len(plan["partitions"]) == 2
    assert owner(plan, "hot") == owner(plan, "dispatch") != []

    objs = []
    for p in plan["partitions"]:
        o = tmp_path / f"p{p['index']}.o"
        sl.compile_ir(out / p["file"], o)
        objs.append(o)
    merged = tmp_path / "merged.o"
    run([llvm_tool("ld.lld"), "-r", *objs, "-o", merged])
    run([llvm_tool("llvm-objcopy"), f"--localize-symbols={out / 'localize.txt'}", merged])
    sl.compile_ir(bc, tmp_path / "unsplit.o")
    run([clang, merged, "-o", tmp_path / "split-prog"])
    run([clang, tmp_path / "unsplit.o", "-o", tmp_path / "ref-prog"])
    assert run([tmp_path / "split-prog"]).stdout == run([tmp_path / "ref-prog"]).stdout
