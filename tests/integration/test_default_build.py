"""What a default build gets (issue #14): the plan cache used by the one path rule, modules
chosen by estimated cost and measured history with the reasons in the link summary, one
warning per link for an unusable cache, and mtpc-link's option checking.

The sample project tests/projects/c is configured the way a new user would: no MTPC cache
variables except the cost threshold (the samples are far below the default) and the tools."""
import json
import os
import pathlib
import re
import shutil
import sqlite3

import pytest

from conftest import run, tool
from test_build_integration import CLANG, CLANGXX, PROJECTS, build, mtpc_config_dir
from conftest import llvm_tool


def configure_default(src, bdir, extra=()):
    """A user's configure: include(MTPC) + mtpc_enable() and nothing else set."""
    return run(["cmake", "-S", src, "-B", bdir, "-G", "Ninja",
                f"-DCMAKE_C_COMPILER={CLANG}", f"-DCMAKE_CXX_COMPILER={CLANGXX}",
                f"-DCMAKE_AR={llvm_tool('llvm-ar')}", "-DCMAKE_BUILD_TYPE=Release",
                "-DSAMPLE_MTPC=ON", f"-DMTPC_DIR={mtpc_config_dir()}",
                "-DMTPC_MAX_PARTITIONS=2", "-DMTPC_JOBS=2", *extra])


def user_env(tmp):
    """A user's environment: no MTPC_CACHE, a home of its own (XDG_CACHE_HOME unset)."""
    env = {k: v for k, v in os.environ.items() if k not in ("MTPC_CACHE", "XDG_CACHE_HOME")}
    env["HOME"] = str(tmp / "home")
    (tmp / "home").mkdir(exist_ok=True)
    return env


def summary_line(out, target="app"):
    lines = [l for l in out.splitlines() if l.startswith(f"mtpc-link: {target}:")]
    assert lines, out
    return lines[-1]


def module_costs(bdir):
    """{object name: summary instructions} of the sample's ThinLTO objects."""
    objs = sorted(str(p) for p in pathlib.Path(bdir).rglob("*.o") if ".mtpc" not in str(p))
    out = run([tool("mtpc-split"), "--print-cost", *objs]).stdout
    costs = {}
    for line in out.splitlines():
        insts, _, path = line.split(" ", 2)
        if insts != "-":
            costs[pathlib.Path(path).name] = int(insts)
    return costs


@pytest.fixture(scope="module")
def default_build(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("default")
    env = user_env(tmp)
    bdir = tmp / "b"
    configure_default(PROJECTS / "c", bdir, ["-DMTPC_SPLIT_COST=1"])
    out = run(["cmake", "--build", bdir], env=env).stdout
    return tmp, env, bdir, out


def test_default_cache_holds_plans_and_timings(default_build):
    """No MTPC_CACHE anywhere: the splits store their plans in ~/.cache/mtpc/plans.sqlite,
    where the slots record their times and `mtpc-cache` looks (one rule)."""
    tmp, env, bdir, out = default_build
    db = tmp / "home" / ".cache" / "mtpc" / "plans.sqlite"
    assert db.exists(), out
    path = run([tool("mtpc-cache"), "path"], env=env).stdout
    assert str(db) in path
    stats = json.loads(run([tool("mtpc-cache"), "stats", "--json"], env=env).stdout)
    text = json.dumps(stats)
    assert re.search(r'"plans": [1-9]', text), text
    con = sqlite3.connect(db)
    try:
        (timed,) = con.execute("SELECT count(*) FROM timings").fetchone()
        (mods,) = con.execute("SELECT count(*) FROM module_times").fetchone()
    finally:
        con.close()
    assert timed > 0, "the slots recorded no time"
    assert mods > 0, "no module history recorded"


def test_summary_says_why(default_build):
    _, _, _, out = default_build
    line = summary_line(out)
    assert "split by cost >= 1 instructions: " in line, line


def test_cost_threshold_chooses_modules(tmp_path):
    """A threshold between the largest module's cost and the next one's splits exactly the
    largest, and the summary names both with their costs."""
    env = user_env(tmp_path)
    bdir = tmp_path / "b"
    configure_default(PROJECTS / "c", bdir, ["-DMTPC_SPLIT_COST=1000000000"])
    out = run(["cmake", "--build", bdir], env=env).stdout
    assert re.search(r"mtpc-link: app: \d+ modules, 0 split", out), out
    costs = module_costs(bdir)
    ranked = sorted(costs.items(), key=lambda kv: -kv[1])
    (big, c1), (second, c2) = ranked[0], ranked[1]
    assert c1 > c2 > 0, ranked
    thr = (c1 + c2) // 2
    run(["cmake", f"-DMTPC_SPLIT_COST={thr}", bdir])
    out = run(["cmake", "--build", bdir], env=env).stdout
    line = summary_line(out)
    assert re.search(rf"1 split \({re.escape(big)}: \d partitions?\)", line), line
    assert f"split by cost >= " in line and f": {big} " in line, line
    if c2 * 4 >= thr:
        assert f"not split: {second} " in line, line


def test_relay_cost_chooses_relayed_modules(tmp_path):
    """No module split, MTPC_RELAY=always: those costing at least MTPC_RELAY_COST get the
    split's edges with one slot (relayed), the others the plain backend; the program is the
    same either way."""
    env = user_env(tmp_path)
    bdir = tmp_path / "b"
    configure_default(PROJECTS / "c", bdir, ["-DMTPC_SPLIT_COST=1000000000"])
    run(["cmake", "--build", bdir], env=env)
    expected = run([bdir / "app"]).stdout
    costs = {k: v for k, v in module_costs(bdir).items() if "shlib" not in k}
    ranked = sorted(costs, key=lambda k: -costs[k])
    assert len(ranked) >= 3 and costs[ranked[1]] > costs[ranked[2]], costs
    run(["cmake", f"-DMTPC_RELAY_COST={costs[ranked[1]]}", "-DMTPC_RELAY=always", bdir])
    out = run(["cmake", "--build", bdir], env=env).stdout
    ninja = (bdir / "app.mtpc" / "build.ninja").read_text()
    relayed = set(re.findall(r"desc = MTPC split (\S+?)-[0-9a-f]+\n", ninja))
    # (archive members are named <n>-<member>)
    plain = {re.sub(r"^\d+-", "", k)
             for k in re.findall(r"desc = MTPC backend (\S+?)-[0-9a-f]+\n", ninja)}
    assert relayed == set(ranked[:2]), (relayed, costs)
    assert set(ranked[2:]) <= plain, (plain, costs)
    assert len(re.findall(r"desc = MTPC slot ", ninja)) == 2, ninja
    assert re.search(r"mtpc-link: app: \d+ modules, 0 split", out), out
    assert run([bdir / "app"]).stdout == expected


def test_measured_history_overrides_estimate(tmp_path):
    """With measured times in the cache, a module far slower than its instruction count says
    is split (and named 'measured'); one far faster is not."""
    env = user_env(tmp_path)
    bdir = tmp_path / "b"
    configure_default(PROJECTS / "c", bdir, ["-DMTPC_SPLIT_COST=1"])
    first = run(["cmake", "--build", bdir], env=env)
    db = tmp_path / "home" / ".cache" / "mtpc" / "plans.sqlite"
    con = sqlite3.connect(db)
    paths = [p for (p,) in con.execute("SELECT module_path FROM module_times")]
    # The modules of app (shlib.c.o is linked alone) by their summary cost.
    out = run([tool("mtpc-split"), "--print-cost", *paths]).stdout
    costs = {path: int(insts) for insts, _, path in (l.split(" ", 2) for l in out.splitlines())
             if "shlib" not in path}
    assert len(costs) >= 3, (costs, first.stdout)
    ranked = sorted(costs, key=lambda p: -costs[p])
    big, small = ranked[0], ranked[-1]
    thr = costs[big] // 2
    # Every module measured at 1 s per 1000 instructions, except that the smallest takes as
    # long as the largest and the largest as long as the smallest.
    for p in paths:
        secs = costs.get(p, 1) / 1000.0
        if p == small:
            secs = costs[big] / 1000.0
        elif p == big:
            secs = costs[small] / 1000.0
        con.execute("UPDATE module_times SET seconds = ? WHERE module_path = ?", (secs, p))
    con.commit()
    con.close()
    run(["cmake", f"-DMTPC_SPLIT_COST={thr}", bdir])
    out = run(["cmake", "--build", bdir], env=env).stdout
    line = summary_line(out)
    bname, sname = pathlib.Path(big).name, pathlib.Path(small).name
    assert re.search(rf"{re.escape(sname)} \d+k? measured", line), line
    assert re.search(rf"1 split \({re.escape(sname)}: \d partitions?\)", line), line


@pytest.mark.parametrize("kind", ["garbage", "directory"])
def test_unusable_cache_warns_once_per_link(tmp_path, kind):
    """A plan cache that is not a database (or a directory): one warning for the link, not
    one per step, and the build succeeds."""
    env = user_env(tmp_path)
    bad = tmp_path / "plans.sqlite"
    if kind == "garbage":
        bad.write_bytes(b"this is not a SQLite database\n" * 200)
    else:
        bad.mkdir()
    env["MTPC_CACHE"] = str(bad)
    bdir = tmp_path / "b"
    configure_default(PROJECTS / "c", bdir, ["-DMTPC_SPLIT_COST=1"])
    r = run(["cmake", "--build", bdir], env=env)
    text = r.stdout + r.stderr
    warnings = [l for l in text.splitlines() if "plan cache" in l]
    links = len(re.findall(r"^mtpc-link: \w[^:]*: \d+ modules?", text, re.M))
    compiles = len(re.findall(r"^mtpc-compile: \S+: (\d+ partitions?|unsplit)", text, re.M))
    assert links >= 1, text
    assert len(warnings) == links + compiles, "\n".join(warnings)
    assert str(bad) in warnings[0]
    assert run([bdir / "app"]).returncode == 0


@pytest.mark.parametrize("args,opt", [
    (["--jobs", "abc"], "--jobs"), (["--min-cost", "1M"], "--min-cost"),
    (["--partitions", "-1"], "--partitions"), (["--threshold", "1x"], "--threshold"),
    (["--cost-threshold", ""], "--cost-threshold"), (["--relay-cost", "-5"], "--relay-cost"),
    (["--jobs"], "--jobs"),
    (["--no-such-option"], "--no-such-option")])
def test_link_rejects_bad_options(tmp_path, args, opt):
    """Bad numbers are errors naming the option (exit 2), and the link command never runs."""
    marker = tmp_path / "ran"
    r = run([tool("mtpc-link"), *args, "--", "touch", marker], check=False)
    assert r.returncode == 2, r
    assert opt in r.stderr, r.stderr
    assert not marker.exists()


def test_link_needs_separator(tmp_path):
    r = run([tool("mtpc-link"), "--jobs", "2", "true"], check=False)
    assert r.returncode == 2 and '"--"' in r.stderr, r


def test_print_cost(tmp_path):
    """mtpc-split --print-cost reads the summary: more code, more instructions; a file that
    is not bitcode is an error naming it."""
    small, big = tmp_path / "small.c", tmp_path / "big.c"
    small.write_text("int f(int x) { return x + 1; }\n")
    big.write_text("".join(f"int f{i}(int x) {{ return x * {i} + (x >> 3) - {i}; }}\n"
                           for i in range(200)))
    objs = []
    for src in (small, big):
        o = src.with_suffix(".o")
        run([llvm_tool("clang"), "-O2", "-flto=thin", "-c", src, "-o", o])
        objs.append(o)
    lines = run([tool("mtpc-split"), "--print-cost", *objs]).stdout.splitlines()
    (a, fa, _), (b, fb, _) = (l.split(" ", 2) for l in lines)
    assert int(fa) == 1 and int(fb) == 200
    assert 0 < int(a) < int(b)
    junk = tmp_path / "junk.o"
    junk.write_text("not bitcode")
    r = run([tool("mtpc-split"), "--print-cost", junk], check=False)
    assert r.returncode == 1 and "junk.o" in r.stderr


def test_relay_only_on_evidence(tmp_path):
    """MTPC_RELAY=auto (the default): a full build relays nothing (its first link of the
    program runs as plain ThinLTO); once edits of lib.c have forced calc.c, which imports from it,
    to be rebuilt twice while its own code stayed the same, the next link relays calc.c and
    not lib.c, whose rebuilds its own edits caused."""
    env = user_env(tmp_path)
    src = tmp_path / "src"
    shutil.copytree(PROJECTS / "debug", src)
    bdir = tmp_path / "b"
    configure_default(src, bdir, ["-DMTPC_SPLIT_COST=1000000000", "-DMTPC_RELAY_COST=0"])
    relayed = []
    for k in range(5):
        if k:  # lib_scale is never imported: calc.c's shard changes, its own code does not
            text = (src / "lib.c").read_text()
            old = f"s = s * {3 + 2 * (k - 1)} + i;"
            assert old in text
            (src / "lib.c").write_text(text.replace(old, f"s = s * {3 + 2 * k} + i;", 1))
        run(["cmake", "--build", bdir], env=env)
        inner = next(bdir.glob("*.mtpc"))
        if k == 0:
            # the first link of the program: plain ThinLTO, no history recorded
            assert not (inner / "build.ninja").exists()
            relayed.append([])
            continue
        ninja = (inner / "build.ninja").read_text()
        relayed.append(sorted(re.findall(r"desc = MTPC split (\S+?)-[0-9a-f]+\n", ninja)))
        assert not re.findall(r"desc = MTPC split (lib|main)\S+\n", ninja), ninja
    # links 1-4: no evidence yet (the full build's link records nothing: plain ThinLTO;
    # then the relinks record calc.c's first rebuild, one and two forced rebuilds); link 5
    # reads two forced rebuilds of three
    assert relayed == [[], [], [], [], ["calc.c.o"]], relayed


def edited_builds(tmp_path, edit, links):
    """The debug sample built through MTPC with calc.c costing half the split threshold (a
    quarter is the least a split for edits takes), then `links` times calc.c edited by
    edit(text, k) and rebuilt: (env, src, bdir, cost, [(summary line, slots run)])."""
    env = user_env(tmp_path)
    src = tmp_path / "src"
    shutil.copytree(PROJECTS / "debug", src)
    bdir = tmp_path / "b"
    configure_default(src, bdir, ["-DMTPC_SPLIT_COST=1000000000"])
    run(["cmake", "--build", bdir], env=env)
    cost = module_costs(bdir)["calc.c.o"]
    configure_default(src, bdir, [f"-DMTPC_SPLIT_COST={cost * 2}"])
    seen = []
    for k in range(1, links + 1):
        (src / "calc.c").write_text(edit((src / "calc.c").read_text(), k))
        out = run(["cmake", "--build", bdir], env=env).stdout
        seen.append((summary_line(out, "dbg"), len(re.findall(r"MTPC slot calc\.c\.o-[0-9a-f]+ p(\d+)", out))))
    return env, src, bdir, cost, seen


def replaced(text, old, new):
    assert old in text
    return text.replace(old, new, 1)


def test_split_for_edits(tmp_path):
    """A module below the split threshold that its own edits keep rebuilding (calc.c, costing
    half the threshold) is split for its edits once the history shows two of them: then an
    edit of one function recompiles one of its two partitions, not the module, and the
    program prints what a plain ThinLTO build of the same source prints. MTPC_RELAY=never
    turns it off."""
    env, src, bdir, cost, seen = edited_builds(tmp_path, lambda text, k: replaced(
        text, f"n += lib_trace(1){'' if k == 1 else f' + {k - 1}'};", f"n += lib_trace(1) + {k};"), 5)
    assert re.search(r"1 split \(calc\.c\.o: 2 partitions\)", seen[-1][0]), seen[-1][0]
    # links 1-3 record calc.c's rebuilds (the first has nothing to compare with: two
    # changes by link 3); link 4 splits it and runs both slots, link 5 only the edited one
    assert [("for its edits" in line, n) for line, n in seen] == \
        [(False, 0), (False, 0), (False, 0), (True, 2), (True, 1)], seen
    plain = tmp_path / "plain"
    run(["cmake", "-S", src, "-B", plain, "-G", "Ninja", f"-DCMAKE_C_COMPILER={CLANG}",
         f"-DCMAKE_AR={llvm_tool('llvm-ar')}", "-DCMAKE_BUILD_TYPE=Release", "-DSAMPLE_MTPC=OFF"])
    run(["cmake", "--build", plain])
    assert run([bdir / "dbg"]).stdout == run([plain / "dbg"]).stdout
    # MTPC_RELAY=never: no choice by history, the module is one plain backend again
    configure_default(src, bdir, [f"-DMTPC_SPLIT_COST={cost * 2}", "-DMTPC_RELAY=never"])
    (src / "calc.c").write_text((src / "calc.c").read_text().replace("lib_trace(1) + 5;", "lib_trace(1) + 6;"))
    out = run(["cmake", "--build", bdir], env=env).stdout
    assert "for its edits" not in summary_line(out, "dbg")
    assert not re.findall(r"MTPC slot calc\.c\.o", out)


def test_split_for_edits_wide(tmp_path):
    """A module split for its edits whose edits rewrite every partition (a change in the
    body every function shares) saves nothing split: after two such edits seen through its
    split it is one plain backend again, and the summary says why."""
    _, _, _, _, seen = edited_builds(tmp_path, lambda text, k: replaced(
        text, f"acc = lib_mix(acc, i) % {100003 + k - 1};", f"acc = lib_mix(acc, i) % {100003 + k};"), 7)
    # links 1-3 plain (the history builds up), link 4 the first split (nothing to compare
    # with), links 5 and 6 each rewrite both partitions, link 7 plain again
    assert [("for its edits" in line and "not for its edits" not in line, n) for line, n in seen] == \
        [(False, 0), (False, 0), (False, 0), (True, 2), (True, 2), (True, 2), (False, 0)], seen
    line = seen[-1][0]
    assert "calc.c.o" in line and "not for its edits: they rewrite most of its partitions" in line, line
