"""One budget of jobs for the machine (common/jobs.h, docs/build-integration.md): the
compiles of concurrent links never run more at once than the budget, and links do not queue
behind each other. Each compile goes through a launcher that logs when it starts and ends
(and lasts at least 0.3 s, so that overlaps show); the test counts how many ran at once."""
import os
import pathlib
import subprocess

import pytest

from conftest import llvm_tool, run, tool

LOGCC = """#!/bin/sh
echo "start $(date +%s.%N) $1" >> "$MTPC_TEST_LOG"
sleep 0.3
"$@"; rc=$?
echo "end $(date +%s.%N)" >> "$MTPC_TEST_LOG"
exit $rc
"""


def program(d, name, funcs=8):
    """A module with `funcs` independent roots (exported with -rdynamic, so that the thin
    link keeps them apart from main): it splits into 4 partitions."""
    body = "".join(f"__attribute__((noinline)) int {name}_f{i}(int x) {{ int s = x; for (int k = 0; k < x; k++) "
                   f"s = s * {i + 3} + k; return s; }}\n" for i in range(funcs))
    calls = " + ".join(f"{name}_f{i}(argc + {i})" for i in range(funcs))
    src = d / f"{name}.c"
    src.write_text(f"#include <stdio.h>\n{body}int main(int argc, char **argv) "
                   f"{{ (void)argv; printf(\"%d\\n\", {calls}); return 0; }}\n")
    obj = d / f"{name}.o"
    run([llvm_tool("clang"), "-O2", "-flto=thin", "-c", src, "-o", obj])
    return obj


def max_concurrency(log):
    events = []
    for line in pathlib.Path(log).read_text().splitlines():
        kind, t = line.split()[:2]
        events.append((float(t), 1 if kind == "start" else -1))
    events.sort(key=lambda e: (e[0], e[1]))  # an end before a start at the same instant
    level = peak = 0
    for _, step in events:
        level += step
        peak = max(peak, level)
    return peak, sum(1 for _, s in events if s > 0)


@pytest.fixture
def setup(tmp_path):
    logcc = tmp_path / "logcc.sh"
    logcc.write_text(LOGCC)
    logcc.chmod(0o755)
    objs = [program(tmp_path, n) for n in ("one", "two")]
    env = dict(os.environ, MTPC_TEST_LOG=str(tmp_path / "compiles.log"),
               MTPC_JOBS_DIR=str(tmp_path / "jobs"), MTPC_JOB_SLOTS="2")
    env.pop("MAKEFLAGS", None)
    return tmp_path, logcc, objs, env


def link_cmd(tmp_path, logcc, obj, out):
    return [tool("mtpc-link"), "--threshold", "0", "--partitions", "4", "--jobs", "4",
            "--min-cost", "0", "--cache", tmp_path / "plans.sqlite", "--launcher", logcc, "--",
            llvm_tool("clang"), "-O2", "-flto=thin", "-fuse-ld=lld", "-rdynamic", obj, "-o", out]


def two_links(tmp_path, logcc, objs, env):
    procs = [subprocess.Popen([str(w) for w in link_cmd(tmp_path, logcc, obj, tmp_path / obj.stem)],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for obj in objs]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        assert "4 partitions" in out, out
    return max_concurrency(tmp_path / "compiles.log")


def test_two_links_share_the_budget(setup):
    tmp_path, logcc, objs, env = setup
    peak, n = two_links(tmp_path, logcc, objs, env)
    assert n == 8, f"{n} compiles (two links of 4 partitions)"
    assert peak == 2, f"{peak} compiles at once with a budget of 2"


def test_without_the_budget_they_oversubscribe(setup):
    """The control: the same links with MTPC_JOBS_OFF=1 run more compiles at once than
    there are slots, so the test above can fail."""
    tmp_path, logcc, objs, env = setup
    peak, n = two_links(tmp_path, logcc, objs, dict(env, MTPC_JOBS_OFF="1"))
    assert n == 8 and peak > 2, peak


MAKEFILE = """all: one two
one:
\t+{cmd_one}
two:
\t+{cmd_two}
"""


def test_make_jobserver(setup):
    """Under GNU make -j2 (its jobserver reaches a `+` recipe), each link's own token serves
    one compile at a time and the rest come from make: with both links running, make has
    no token left, so they run one compile each, 2 at once, though the pool would allow 8,
    and neither waits forever for a token."""
    tmp_path, logcc, objs, env = setup
    cmds = {o.stem: " ".join(f"'{w}'" for w in link_cmd(tmp_path, logcc, o, tmp_path / o.stem))
            for o in objs}
    (tmp_path / "Makefile").write_text(MAKEFILE.format(cmd_one=cmds["one"], cmd_two=cmds["two"]))
    r = subprocess.run(["make", "-j2", "-C", str(tmp_path)], env=dict(env, MTPC_JOB_SLOTS="8"),
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    peak, n = max_concurrency(tmp_path / "compiles.log")
    assert n == 8
    assert peak == 2, f"{peak} compiles at once under make -j2"
