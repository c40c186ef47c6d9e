"""Split only where the machine has cores to give (issue 37, item 1: concurrent links and
compiles). Each mtpc-compile and each link's inner build posts a notice of its predicted work
on the work board (<pool>/work.<pid>, common/workboard.h); a split choice counts the others'
notices beside its own backends, with --busy auto (the default), and not with --busy ignore.

The other work is played by a process of the test's own that holds a notice, as an
mtpc-compile does; every test has a pool directory of its own."""
import os
import re
import shutil
import subprocess
import sys
import time

import pytest

from conftest import llvm_tool, run, tool
from test_build_compile import big_source, compile_cmd, mtpc_compile
from test_build_jobs import program

HOLDER = r"""
import fcntl, os, sys, time
path, work, secs, task = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
after = sys.argv[7] if len(sys.argv) > 7 else ""
if after:  # posted only once that file exists (60 s at most)
    print("waiting", flush=True)
    for _ in range(600):
        if os.path.exists(after):
            break
        time.sleep(0.1)
now = time.time()
tmp = path + ".tmp"
fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
os.write(fd, f"{now:.3f} {work:.3f} {now + secs:.3f} {task:.3f}\n".encode())
fcntl.flock(fd, fcntl.LOCK_SH)
os.rename(tmp, path)
held = []
for k in range(int(sys.argv[5]) if len(sys.argv) > 5 else 0):  # job tokens held, as running tasks do
    f = os.open(os.path.join(os.path.dirname(path), f"slot.{k}"), os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(f, fcntl.LOCK_EX)
    held.append(f)
print("posted", flush=True)
if held:
    time.sleep(float(sys.argv[6]))
    for f in held:
        os.close(f)
sys.stdin.read()  # until the test closes our stdin
"""


class Notice:
    """Another process's notice of `work` CPU seconds ending in `secs` seconds, its longest task
    `task` seconds, held (flocked) for as long as the context lasts, with `tokens` of the pool's
    job tokens held for the first `hold` seconds; posted at once, or once the file `after`
    exists; stopped by its pid, every wait bounded."""

    def __init__(self, pool, work, secs, task, tokens=0, hold=0, after=None):
        pool.mkdir(mode=0o700, exist_ok=True)
        self.p = subprocess.Popen([sys.executable, "-c", HOLDER, str(pool / "work.1"), str(work), str(secs),
                                   str(task), str(tokens), str(hold), str(after or "")],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.p.stdout.readline().strip() == ("waiting" if after else "posted")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.p.stdin.close()
        self.p.wait(timeout=10)


def env_with(pool, **more):
    return dict(os.environ, MTPC_JOBS_DIR=str(pool), MTPC_JOB_SLOTS="2", **more)


def compile_busy(tmp_path, env, *opts):
    src = big_source(tmp_path / "big.c", funcs=200)
    obj = tmp_path / "big.o"
    r = mtpc_compile(tmp_path, compile_cmd(src, obj), "--cost-threshold", "0", "--partitions", "2",
                     *opts, env=env)
    return r, obj


def plain_object(tmp_path):
    ref = tmp_path / "ref.o"
    run(compile_cmd(tmp_path / "big.c", ref))
    return ref.read_bytes()


# another link's backends: many short tasks on both lanes for long; one long task on one lane
BUSY = {"backends": dict(work=2000, secs=1000, task=1), "one long task": dict(work=1000, secs=1000, task=1000)}


@pytest.mark.parametrize("load", BUSY)
def test_compile_held_whole_while_the_cores_are_busy(load, tmp_path):
    """Beside other work that outlasts it either way (and would fill any lane a split
    frees), a split only adds its overhead: the compile runs as given, and says why."""
    pool = tmp_path / "pool"
    with Notice(pool, **BUSY[load]):
        r, obj = compile_busy(tmp_path, env_with(pool))
    assert re.search(r"big\.o: not split: the cores are busy with 1 other MTPC job "
                     r"\(predicted [\d.]+ s split vs [\d.]+ s unsplit\)", r.stdout), r.stdout
    assert "partitions" not in r.stdout, r.stdout
    # held whole: exactly the compile as given
    assert obj.read_bytes() == plain_object(tmp_path)
    assert not (tmp_path / "big.o.mtpc").exists()


def test_compile_split_when_the_board_says_nothing_or_is_ignored(tmp_path):
    pool = tmp_path / "pool"
    r, _ = compile_busy(tmp_path, env_with(pool))
    assert "big.o: 2 partitions" in r.stdout, r.stdout
    (tmp_path / "big.o").unlink()
    shutil.rmtree(tmp_path / "big.o.mtpc")
    with Notice(pool, **BUSY["backends"]):
        for how in (("--busy", "ignore"), ()):
            env = env_with(pool, MTPC_BUSY="ignore") if not how else env_with(pool)
            r, _ = compile_busy(tmp_path, env, *how)
            assert "big.o: 2 partitions" in r.stdout and "busy" not in r.stdout, (how, r.stdout)


def test_small_other_work_does_not_hold_a_split(tmp_path):
    """Another compile that ends soon leaves this one the long pole: split."""
    pool = tmp_path / "pool"
    with Notice(pool, work=0.01, secs=0.01, task=0.01):
        r, _ = compile_busy(tmp_path, env_with(pool))
    assert "big.o: 2 partitions" in r.stdout, r.stdout


def test_split_when_long_tasks_free_every_lane_together(tmp_path):
    """Two long tasks hold both job tokens (no token idle) and end soon: the compile would wait
    for a lane either way, and then both lanes are free: split, and its split step tells
    mtpc-split the lanes the load leaves it (--cores), which chooses the count."""
    pool = tmp_path / "pool"
    src = big_source(tmp_path / "big.c", funcs=1500)
    with Notice(pool, work=3, secs=1.5, task=1.5, tokens=2, hold=1.5):
        r = mtpc_compile(tmp_path, compile_cmd(src, tmp_path / "big.o"), "--cost-threshold", "0",
                         "--partitions", "4", env=env_with(pool))
    assert re.search(r"big\.o: \d partitions", r.stdout), r.stdout
    assert "--cores 1" in (tmp_path / "big.o.mtpc" / "build.ninja").read_text()
    plan = next((tmp_path / "big.o.mtpc").glob("mod/*/parts/plan.json")).read_text()
    assert '"partition_count"' in plan, plan[:400]


def test_notice_left_behind_is_removed(tmp_path):
    """A notice nobody holds (its writer was killed) counts for nothing, and goes."""
    pool = tmp_path / "pool"
    pool.mkdir(mode=0o700)
    now = time.time()
    (pool / "work.99999").write_text(f"{now:.3f} 5000 {now + 5000:.3f} 1\n")
    r, _ = compile_busy(tmp_path, env_with(pool))
    assert "big.o: 2 partitions" in r.stdout, r.stdout
    assert not (pool / "work.99999").exists()


SPY = """#!/bin/sh
for f in "$MTPC_JOBS_DIR"/work.*; do [ -e "$f" ] && echo "${f##*/} $(cat "$f")"; done >> "$SPY_OUT"
exec "$@"
"""


def spy(tmp_path):
    s = tmp_path / "spy.sh"
    s.write_text(SPY)
    s.chmod(0o755)
    return s


def one_notice_seen(out, pool):
    """The one notice a spy saw, checked; none is left on the board after."""
    seen = notices(out)
    assert len(seen) == 1, seen
    posted, work, end, task = next(iter(seen.values()))
    assert work > 0 and end > posted and 0 < task <= work, seen
    assert not list(pool.glob("work.*")), list(pool.iterdir())
    return work, end - posted, task


def notices(path):
    """{pid: (posted, work, end, task)} of the notices a spy saw."""
    seen = {}
    for line in path.read_text().splitlines():
        name, posted, work, end, task = line.split()
        seen[int(name.split(".")[1])] = (float(posted), float(work), float(end), float(task))
    return seen


def test_a_split_compile_posts_its_work_while_it_runs(tmp_path):
    """The compile's own notice is on the board while its partitions compile (a launcher
    of the partition compiles looks), and gone after."""
    pool = tmp_path / "pool"
    out = tmp_path / "seen.txt"
    r, _ = compile_busy(tmp_path, env_with(pool, SPY_OUT=str(out)), "--launcher", spy(tmp_path))
    n = int(re.search(r"big\.o: (\d+) partitions", r.stdout).group(1))
    work, _, task = one_notice_seen(out, pool)
    assert task < work  # its longest task: one partition
    assert len(out.read_text().splitlines()) == n


def test_busy_values_are_checked(tmp_path):
    src = big_source(tmp_path / "big.c")
    r = mtpc_compile(tmp_path, compile_cmd(src, tmp_path / "big.o"), "--busy", "sometimes", check=False)
    assert r.returncode == 2 and "--busy: expected auto or ignore, got 'sometimes'" in r.stderr, r.stderr
    r = mtpc_compile(tmp_path, compile_cmd(src, tmp_path / "big.o"), check=False,
                     env=dict(os.environ, MTPC_BUSY="x"))
    assert r.returncode == 2 and "MTPC_BUSY: expected auto or ignore, got 'x'" in r.stderr, r.stderr
    for t in ("mtpc-compile", "mtpc-link", "mtpc-distribute"):
        assert "--busy MODE" in run([tool(t), "--help"]).stdout, t


def link(tmp_path, pool, *objs, out, opts=(), env_more=None, driver_args=(), cwd=None):
    return run([tool("mtpc-link"), "--cost-threshold", "0", "--relay", "never", "--partitions", "2",
                "--jobs", "2", "--cache", tmp_path / "plans.sqlite", *opts, "--", llvm_tool("clang"), "-O2",
                "-flto=thin", "-fuse-ld=lld", *driver_args, "-rdynamic", *objs, "-o", out],
               env=env_with(pool, **(env_more or {})), cwd=cwd).stdout


def test_link_counts_the_other_jobs(tmp_path):
    """A link's one module is the long pole on an idle machine (split); beside another MTPC
    job's long work, the split has no idle core to gain: not split, and the line says why.
    --busy ignore decides by the link alone."""
    pool = tmp_path / "pool"
    one = program(tmp_path, "one")
    alone = link(tmp_path, pool, one, out=tmp_path / "a")
    assert re.search(r"1 module, 1 split \(one\.o: 2 partitions\)", alone), alone
    with Notice(pool, **BUSY["backends"]):
        busy = link(tmp_path, pool, one, out=tmp_path / "b")
        ignored = link(tmp_path, pool, one, out=tmp_path / "c", opts=("--busy", "ignore"))
    assert re.search(r"not split: one\.o \d+: the cores are busy with 0 other backends and 1 other MTPC job "
                     r"\(predicted [\d.]+ s split vs [\d.]+ s unsplit\)", busy), busy
    assert re.search(r"1 module, 1 split \(one\.o: 2 partitions\)", ignored), ignored
    # the same program either way
    for exe in ("a", "b", "c"):
        assert run([tmp_path / exe]).stdout == run([tmp_path / "a"]).stdout


def test_link_held_at_its_split_step_when_the_cores_filled_since(tmp_path):
    """The choice reads the board when the link starts, but the outer build often starts its
    next link a moment later. The split step makes the choice again after the thin link:
    beside another link's backends posted meanwhile, the module goes through its plain
    backend, and the line and the trace say why. The program is the same, and the link's
    own notice, which its split step sees as well, never holds it (alone: split)."""
    pool = tmp_path / "pool"
    one = program(tmp_path, "one")
    alone = link(tmp_path, pool, one, out=tmp_path / "a")
    assert re.search(r"1 module, 1 split \(one\.o: 2 partitions\)", alone), alone
    # the other link starts while this one's thin link runs (a linker that waits for it)
    go = tmp_path / "thin-link-started"
    ld = tmp_path / "ld-late"
    ld.write_text(f"""#!/bin/sh
case "$*" in *thinlto-index-only*)
  touch {go}; i=0
  while [ ! -e {pool}/work.1 ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done;;
esac
exec {llvm_tool("ld.lld")} "$@"
""")
    ld.chmod(0o755)
    with Notice(pool, **BUSY["backends"], after=go):
        late = link(tmp_path, pool, one, out=tmp_path / "b", driver_args=(f"--ld-path={ld}",))
    assert go.exists()
    assert re.search(r"1 module, 0 split, .*; not split: one\.o \d+k?: when its split step ran, the cores are "
                     r"busy with 0 other backends and 1 other MTPC job \(predicted [\d.]+ s split vs [\d.]+ s "
                     r"unsplit\)", late), late
    mod = next((tmp_path / "b.mtpc" / "mod").iterdir())
    assert (mod / "split.n").read_text().startswith("0 held: the cores are busy"), (mod / "split.n").read_text()
    assert not (mod / "p0.o").exists() and (mod / "backend.o").exists()
    trace = (tmp_path / "b.mtpc" / "trace.json").read_text()
    assert "not split: when its split step ran, the cores are busy" in trace
    assert run([tmp_path / "b"]).stdout == run([tmp_path / "a"]).stdout


def test_outer_build_log_of_the_last_run(tmp_path):
    """The board shows only work that has started; the outer build's .ninja_log says how busy
    it kept the other cores while this link ran last time (ninja-gen/graph/outer_log.h). With
    the other core busy all through that run and other work on the board now, the module is
    not split, and the line says why; with the board empty (the link relinked alone after
    an edit), or when this link was the build's tail last time, it is split as before."""
    pool = tmp_path / "pool"
    one = program(tmp_path, "one", funcs=2000)  # about 1.7 s of backend by its estimate
    now_ns = time.time_ns()

    def last_run(others):  # the link ran 10-20 s into the last build, beside `others`
        lines = [f"10000\t20000\t{now_ns - 3600 * 10**9 + 20000 * 10**6}\tapp\tabc\n"]
        lines += [f"{s}\t{e}\t{now_ns - 3600 * 10**9 + e * 10**6}\t{name}\tabc\n" for s, e, name in others]
        (tmp_path / ".ninja_log").write_text("# ninja log v5\n" + "".join(lines))

    last_run([(9000, 15000, "a.o"), (15000, 21000, "lib.so")])  # the other core: busy throughout
    # another short link running now, ending before the module would: alone it holds nothing
    with Notice(pool, work=0.05, secs=1.0, task=0.01):
        busy = link(tmp_path, pool, one, out="app", cwd=tmp_path)
    assert re.search(r"1 module, 0 split, .*; not split: one\.o \d+k: the cores are busy with 0 other backends "
                     r"and 1 other MTPC job and the outer build's other edges \(1\.0 core while it ran last "
                     r"time\) \(predicted [\d.]+ s split vs [\d.]+ s unsplit\)", busy), busy
    alone = link(tmp_path, pool, one, out="app", cwd=tmp_path)
    assert re.search(r"1 module, 1 split \(one\.o: 2 partitions\)", alone), alone
    last_run([(9000, 11000, "a.o")])  # the build's tail: the other core idle most of its run
    with Notice(pool, work=0.05, secs=1.0, task=0.01):
        tail = link(tmp_path, pool, one, out="app", cwd=tmp_path)
        ignored = link(tmp_path, pool, one, out="app2", cwd=tmp_path, opts=("--busy", "ignore"))
    assert re.search(r"1 module, 1 split \(one\.o: 2 partitions\)", tail), tail
    assert re.search(r"1 module, 1 split \(one\.o: 2 partitions\)", ignored), ignored
    assert run([tmp_path / "app"]).stdout == run([tmp_path / "app2"]).stdout


def test_a_link_posts_its_work_while_its_backends_run(tmp_path):
    pool = tmp_path / "pool"
    out = tmp_path / "seen.txt"
    link(tmp_path, pool, program(tmp_path, "one"), out=tmp_path / "app", opts=("--launcher", spy(tmp_path)),
         env_more={"SPY_OUT": str(out)})
    one_notice_seen(out, pool)


def test_a_plain_thinlto_link_posts_its_work(tmp_path):
    """A link that splits nothing runs as plain ThinLTO, lld's backends in-process: work the
    board must show as much as an inner build's (a linker wrapper looks while lld runs)."""
    pool = tmp_path / "pool"
    out = tmp_path / "seen.txt"
    ld = tmp_path / "ld-spy"
    ld.write_text(SPY.replace('exec "$@"', f'exec {llvm_tool("ld.lld")} "$@"'))
    ld.chmod(0o755)
    line = run([tool("mtpc-link"), "--cost-threshold", "100000000", "--cache", tmp_path / "plans.sqlite", "--",
                llvm_tool("clang"), "-O2", "-flto=thin", "-fuse-ld=lld", f"--ld-path={ld}",
                program(tmp_path, "one"), "-o", tmp_path / "app"],
               env=env_with(pool, SPY_OUT=str(out))).stdout
    assert "0 split" in line, line
    one_notice_seen(out, pool)


def test_cmake_busy_variable(tmp_path):
    """MTPC_BUSY reaches both options files' users (the split compiles' file and the links'
    options), a bad value stops the configure naming the variable."""
    from test_build_cmake_compat import configure
    src = tmp_path / "src"
    src.mkdir()
    big_source(src / "big.c", funcs=50)
    (src / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.20)\nproject(busy C)\nfind_package(MTPC REQUIRED)\n"
        "add_executable(app big.c)\nmtpc_enable(app)\n")
    b = tmp_path / "b"
    configure(src, b, ["-DMTPC_BUSY=ignore"])
    split_rsp = (b / "CMakeFiles" / "mtpc-compile-split.rsp").read_text()
    assert "--busy=ignore" in split_rsp, split_rsp
    assert "--busy=ignore" in (b / "build.ninja").read_text() + "".join(
        p.read_text() for p in (b / "CMakeFiles").glob("*.rsp"))
    run(["cmake", "--build", b])
    r = run(["cmake", "-DMTPC_BUSY=sometimes", b], check=False)
    assert r.returncode != 0 and 'MTPC_BUSY is "sometimes"; expected auto or ignore' in r.stdout + r.stderr
    r = run(["cmake", "-DMTPC_BUSY=auto", b])
    assert "--busy" not in (b / "CMakeFiles" / "mtpc-compile-split.rsp").read_text()
