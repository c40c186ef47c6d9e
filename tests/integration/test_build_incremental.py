"""Incremental builds through the real mtpc-split (issue #3 acceptance): after a
one-function edit of a large module, the split reruns, exactly the slots whose
partition bitcode changed rerun (the edited function's owner among them, most
others untouched), then the merge and the link; the program matches a plain
ThinLTO build of the same sources. Growing and shrinking the partition count
rebuilds correctly."""
import hashlib
import json
import os

import pytest

from conftest import run
from test_build_integration import (APP_MTPC_OR_THIN, configure, build, inner_log,
                                    mtpc_config_dir, splitter)

N_FUNCS = 48


def big_c(edit=None, n_funcs=N_FUNCS):
    """A module of distinct functions (a call chain with statics and a table),
    so one function can be edited without touching the others."""
    out = ["#include <stdio.h>", "unsigned run_big(unsigned);"]
    out += [f"unsigned f{i}(unsigned);" for i in range(n_funcs)]
    for i in range(n_funcs):
        body = f"x = x * {2 * i + 3}u + {i}u;"
        if edit == i:
            body = f"x = x * {2 * i + 3}u + {i + 1000}u;"
        callee = f"f{i + 1}(x ^ {i}u)" if i + 1 < n_funcs else "x"
        out.append(f"static unsigned s{i}(unsigned x) {{ for (int k = 0; k < 3 + {i % 5}; k++) {{ {body} }} return x; }}")
        out.append(f"__attribute__((noinline)) unsigned f{i}(unsigned x) {{ return s{i}(x) + (x & 1 ? {callee} : x); }}")
    out.append("unsigned (*const table[])(unsigned) = {" + ", ".join(f"f{i}" for i in range(0, n_funcs, 5)) + "};")
    out.append("unsigned run_big(unsigned n) { unsigned s = 0; for (unsigned i = 0; i < n; i++) "
               "s += table[i % (sizeof table / sizeof *table)](i) + f0(i); return s; }")
    return "\n".join(out) + "\n"


MAIN_C = '#include <stdio.h>\nunsigned run_big(unsigned);\nint main(void) { printf("%u\\n", run_big(2000)); return 0; }\n'

CMAKE = """cmake_minimum_required(VERSION 3.20)
project(incr C)
option(SAMPLE_MTPC "" ON)
add_executable(app main.c big.c)
""" + APP_MTPC_OR_THIN


def write_project(src, edit=None, n_funcs=N_FUNCS):
    src.mkdir(exist_ok=True)
    (src / "CMakeLists.txt").write_text(CMAKE)
    (src / "main.c").write_text(MAIN_C)
    (src / "big.c").write_text(big_c(edit, n_funcs))


def reference_output(tmp, edit, n_funcs=N_FUNCS):
    src, b = tmp / f"ref-src-{edit}", tmp / f"ref-{edit}"
    write_project(src, edit, n_funcs)
    configure(src, b, mtpc=False)
    build(b)
    return run([b / "app"]).stdout


def digests(parts):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(parts.glob("p*.bc"))}


@pytest.fixture
def project(tmp_path):
    if splitter() == splitter("fake"):
        pytest.fail("mtpc-split is not built")
    src, b = tmp_path / "src", tmp_path / "build"
    write_project(src)
    configure(src, b, split=splitter("real"))
    build(b)
    (moddir,) = (b / "app.mtpc" / "mod").glob("big.c.o-*")
    return src, b, moddir


def test_edit_reruns_only_changed_partitions(project, tmp_path):
    src, b, moddir = project
    inner = b / "app.mtpc"
    parts = moddir / "parts"
    plan = json.loads((parts / "plan.json").read_text())
    n = len(plan["partitions"])
    assert n == 4
    edited = 17
    (owner,) = [p["index"] for p in plan["partitions"] if f"f{edited}" in p["owned"]]
    before = digests(parts)
    seen = len(inner_log(inner))
    (src / "big.c").write_text(big_c(edit=edited))
    build(b)
    ran = inner_log(inner)[seen:]
    after = digests(parts)
    changed = {int(k[1:-3]) for k in after if after[k] != before.get(k)}
    rel = lambda f: str((moddir / f).relative_to(inner))
    assert rel("split.dd") in ran and rel("native.o") in ran
    rerun = {i for i in range(n) if rel(f"p{i}.o") in ran}
    assert owner in changed and rerun == changed, (owner, changed, rerun)
    assert len(rerun) < n, "a one-function edit must leave some partitions alone"
    assert run([b / "app"]).stdout == reference_output(tmp_path, edited)
    # and nothing more to do
    seen = len(inner_log(inner))
    build(b)
    assert inner_log(inner)[seen:] == []


@pytest.mark.parametrize("counts", [(4, 2, 3)])
def test_partition_count_changes(project, tmp_path, counts):
    src, b, moddir = project
    expected = reference_output(tmp_path, None)
    for k in counts:
        run(["cmake", f"-DMTPC_MAX_PARTITIONS={k}", b])
        build(b)
        plan = json.loads((moddir / "parts" / "plan.json").read_text())
        assert len(plan["partitions"]) == k
        assert sorted(p.name for p in (moddir / "parts").glob("p*.bc")) == [f"p{i}.bc" for i in range(k)]
        assert run([b / "app"]).stdout == expected


def test_new_splitter_reruns_the_split(tmp_path):
    """mtpc-split's binary is an input of the split edges: after an upgrade the split
    reruns; partitions that come out the same stop there (restat)."""
    import shutil
    tool = tmp_path / "bin" / "mtpc-split"
    tool.parent.mkdir()
    shutil.copy2(splitter("real"), tool)
    src, b = tmp_path / "src", tmp_path / "build"
    write_project(src)
    configure(src, b, split=tool)
    build(b)
    inner = b / "app.mtpc"
    (moddir,) = (inner / "mod").glob("big.c.o-*")
    rel = lambda f: str((moddir / f).relative_to(inner))
    seen = len(inner_log(inner))
    build(b)
    assert inner_log(inner)[seen:] == []
    import time
    later = time.time() + 60   # copy2 kept the old build's mtime: "upgrade" it
    os.utime(tool, (later, later))
    build(b)
    ran = inner_log(inner)[seen:]
    assert rel("split.dd") in ran
    assert not any(rel(f"p{i}.o") in ran for i in range(4)), ran
    assert run([b / "app"]).stdout == reference_output(tmp_path, None)


def test_split_args_reach_mtpc_split(tmp_path):
    """MTPC_SPLIT_ARGS passes options to mtpc-split; a wrong one makes the module fall
    back to the plain backend with a warning, and the build still succeeds."""
    src, b = tmp_path / "src", tmp_path / "build"
    write_project(src)
    configure(src, b, split=splitter("real"),
              extra=["-DMTPC_SPLIT_ARGS=--copy-budget;0.05;--join-growth;0.5"])
    build(b)
    (moddir,) = (b / "app.mtpc" / "mod").glob("big.c.o-*")
    opts = json.loads((moddir / "parts" / "plan.json").read_text())["options"]
    assert "copy-budget=0.05 " in opts and "join-growth=0.5 " in opts, opts
    want = reference_output(tmp_path, None)
    assert run([b / "app"]).stdout == want
    configure(src, b, split=splitter("real"), extra=["-DMTPC_SPLIT_ARGS=--no-such-option"])
    r = build(b)
    out = r.stdout + r.stderr
    assert "compiling it unsplit" in out and "--no-such-option" in out, out
    assert run([b / "app"]).stdout == want


def test_split_module_is_scheduled_first(tmp_path):
    """Ninja 1.11 starts ready edges in manifest order: the big module's split and slots
    (the critical path) are declared, and with one job run, before small modules' backends."""
    src, b = tmp_path / "src", tmp_path / "build"
    write_project(src)
    # main.c's bitcode is about 3 KB, big.c's about 9 KB: only big.c is split
    configure(src, b, split=splitter("real"),
              extra=["-DMTPC_SPLIT_THRESHOLD=6000", "-DMTPC_JOBS=1"])
    build(b)
    inner = b / "app.mtpc"
    manifest = (inner / "build.ninja").read_text()
    (moddir,) = (inner / "mod").glob("big.c.o-*")
    (maindir,) = (inner / "mod").glob("main.c.o-*")
    big_key, main_key = moddir.name, maindir.name
    assert manifest.index(f"mod/{big_key}/split.dd") < manifest.index(f"mod/{main_key}/native.o:")
    ran = [r for r in inner_log(inner) if r.startswith("mod/")]
    assert ran[0] == f"mod/{big_key}/split.dd", ran
    assert ran.index(f"mod/{main_key}/native.o") > ran.index(f"mod/{big_key}/p0.o"), ran
    assert run([b / "app"]).stdout == reference_output(tmp_path, None)


def test_partitions_sized_for_when_they_start(tmp_path):
    """On 2 cores the big module's split runs beside main.c's backend, so its second slot
    starts only when that backend ends: mtpc-link gives that partition less work
    (ninja-gen/sched.h), by an mtpc-split --weights the plan follows. MTPC_SPLIT_ARGS
    can still override it."""
    import re
    src, b = tmp_path / "src", tmp_path / "build"
    # big.c about 40 KB of bitcode, main.c about 3 KB: a module big enough next to the
    # backend beside it for shares to matter (sched.h), and the only one split
    write_project(src, n_funcs=200)
    configure(src, b, split=splitter("real"),
              extra=["-DMTPC_SPLIT_THRESHOLD=6000", "-DMTPC_MAX_PARTITIONS=2", "-DMTPC_JOBS=2"])
    build(b)
    inner = b / "app.mtpc"
    m = re.search(r"--split-arg --weights --split-arg (\d+),(\d+)", (inner / "build.ninja").read_text())
    assert m, "no --weights for the split module"
    w0, w1 = int(m.group(1)), int(m.group(2))
    assert w0 > w1 and w0 + w1 == 40, (w0, w1)
    (moddir,) = (inner / "mod").glob("big.c.o-*")
    plan = json.loads((moddir / "parts" / "plan.json").read_text())
    assert f"weights={w0},{w1}" in plan["options"], plan["options"]
    costs = [p["cost"] for p in plan["partitions"]]
    assert len(costs) == 2 and abs(costs[0] / sum(costs) - w0 / 40) < 0.1, (costs, w0, w1)
    want = reference_output(tmp_path, None, n_funcs=200)
    assert run([b / "app"]).stdout == want
    configure(src, b, split=splitter("real"),
              extra=["-DMTPC_SPLIT_THRESHOLD=6000", "-DMTPC_MAX_PARTITIONS=2", "-DMTPC_JOBS=2",
                     "-DMTPC_SPLIT_ARGS=--weights;1,1"])
    build(b)
    assert (f"--split-arg --weights --split-arg {w0},{w1} --split-arg --weights --split-arg 1,1"
            in (inner / "build.ninja").read_text())
    plan = json.loads((moddir / "parts" / "plan.json").read_text())
    assert plan["options"].endswith("weights=1,1"), plan["options"]
    costs = [p["cost"] for p in plan["partitions"]]
    assert abs(costs[0] / sum(costs) - 0.5) < 0.05, costs
    assert run([b / "app"]).stdout == want
