"""The Slurm executor (issue #12) on a test cluster this module starts itself
(tests/slurm_cluster.py: munge, slurmctld and two one-CPU slurmd nodes, each in a network
namespace of its own). Every build runs its Slurm clients in the controller's namespace
(Cluster.cmd_prefix()).

What must hold: with MTPC_EXECUTOR=slurm / --executor slurm the outputs are byte-identical to a
local build's, the compiles ran on more than one node (edges.log records each one's node), a
step killed mid-compile and a node that dies are retried and the outputs stay the same, an
unreachable controller gives one warning and a local build, a real compile error is not
retried, Ctrl-C leaves no job behind, and a link killed outright has its allocation cancelled
by the next link. Marked `slurm` (scripts/test.sh -m slurm runs them alone); skipped with the
reason where network namespaces cannot be made."""
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import time

import pytest

from conftest import BUILD, LLVM_BIN, LLVM_VERSION, ROOT, llvm_tool, run, tool, versioned_driver

import slurm_cluster  # noqa: E402
from test_build_integration import PROJECTS, configure  # noqa: E402

pytestmark = pytest.mark.slurm

CLANG = versioned_driver("clang")
C_SOURCES = ["big.c", "main.c", "util.c"]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    reason = slurm_cluster.unavailable_reason()
    if reason:
        pytest.skip(reason)
    c = slurm_cluster.Cluster(tmp_path_factory.mktemp("cluster"), nodes=2, cpus=1)
    try:
        c.up()
        yield c
    finally:
        c.down()


def edges(inner):
    """The remote compiles of the last link: [(object, node, try, exit)]."""
    log = inner / "slurm" / "edges.log"
    if not log.exists():
        return []
    rows = [l.split() for l in log.read_text().splitlines() if l.strip()]
    assert all(len(r) == 9 and (float(r[8]) > 0) == (int(r[7]) >= 0) for r in rows), rows
    return [(r[0], r[1], int(r[2]), int(r[7])) for r in rows]


def no_jobs(cluster, timeout=30):
    """True once squeue shows no job (bounded)."""
    deadline = time.monotonic() + timeout
    while cluster.squeue():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


# ---- the C sample linked by mtpc-link directly: the fault cases --------------------------------

class Link:
    """The C sample's objects and the mtpc-link command of its app, in one directory."""

    def __init__(self, d):
        self.dir = d
        for f in PROJECTS.joinpath("c").iterdir():
            shutil.copy(f, d)
        for f in C_SOURCES:
            run([CLANG, "-O2", "-flto=thin", "-c", f, "-o", f[:-2] + ".o"], cwd=d)
        run([CLANG, "-O2", "-fPIC", "-c", "shlib.c", "-o", "shlib.o"], cwd=d)
        run([CLANG, "-shared", "-fuse-ld=lld", "shlib.o", "-o", "libshlib.so"], cwd=d)
        self.inner = d / "app.mtpc"
        # A launcher that announces its node on stderr and slows the compiles down, so that
        # a test can catch one running.
        self.launcher = d / "slow.sh"
        self.launcher.write_text('#!/bin/sh\necho "compile on ${SLURMD_NODENAME:-here}" >&2\n'
                                 'sleep "${SLOW:-0}"\nexec "$@"\n')
        self.launcher.chmod(0o755)

    def cmd(self, *opts, executor="slurm", mtpc_link=None):
        return [mtpc_link or tool("mtpc-link"), "--threshold=0", "--partitions=4", "--quiet",
                f"--executor={executor}", f"--launcher={self.launcher}", *opts, "--",
                CLANG, "-flto=thin", "-fuse-ld=lld", "big.o", "main.o", "util.o", "-L.",
                "-lshlib", f"-Wl,-rpath,{self.dir}", "-o", "app"]

    def outputs(self):
        """The app and every module's object, as bytes."""
        files = {"app": (self.dir / "app").read_bytes()}
        for n in sorted(self.inner.glob("mod/*/native.o")):
            files[n.parent.name] = n.read_bytes()
        return files

    def fresh(self):
        shutil.rmtree(self.inner, ignore_errors=True)
        (self.dir / "app").unlink(missing_ok=True)


@pytest.fixture(scope="module")
def link(tmp_path_factory):
    """The sample linked locally once: the reference outputs."""
    ln = Link(tmp_path_factory.mktemp("link"))
    run(ln.cmd(executor="local"), cwd=ln.dir)
    ln.reference = ln.outputs()
    ln.program = run([ln.dir / "app"]).stdout
    return ln


def remote_link(cluster, ln, *opts, slow=0, check=True, timeout=300):
    ln.fresh()
    env = dict(cluster.env(), SLOW=str(slow))
    r = subprocess.run(cluster.cmd_prefix() + ln.cmd(*opts), cwd=ln.dir, env=env,
                       capture_output=True, text=True, timeout=timeout)
    if check:
        assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout + r.stderr   # the edges' messages come through the inner Ninja's stdout


def start_link(cluster, ln, slow):
    """The link in the background, in a process group of its own (as a build tool runs it)."""
    ln.fresh()
    env = dict(cluster.env(), SLOW=str(slow))
    return subprocess.Popen(cluster.cmd_prefix() + ln.cmd(), cwd=ln.dir, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)


def running_steps(cluster):
    """[(step id, node)] of the job steps running now (the allocation's own are left out)."""
    r = cluster.run(["squeue", "-h", "-s", "-o", "%i %N"])
    steps = [l.split() for l in r.stdout.splitlines() if l.strip()]
    return [(s[0], s[1]) for s in steps if len(s) == 2 and re.fullmatch(r"\d+\.\d+", s[0])]


def started_node(inner):
    """The node of a remote compile that has started and not ended, or None."""
    for st in sorted((inner / "slurm").glob("st.*")):
        try:
            text = st.read_text()
        except FileNotFoundError:
            continue
        m = re.match(r"node=(\S+) start=", text)
        if m and " end=" not in text:
            return m.group(1)
    return None


def wait_for(pred, timeout, what):
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def test_outputs_identical_and_spread_over_nodes(cluster, link):
    out = remote_link(cluster, link)
    assert link.outputs() == link.reference
    e = edges(link.inner)
    # Every partition of the 3 split modules compiled on the cluster, once, on both nodes.
    assert len(e) >= 6 and all(x[2] == 1 and x[3] == 0 for x in e), e
    assert {x[1] for x in e} == set(cluster.node_names()), e
    # Each compile's stderr comes back into the link's output.
    assert len(re.findall(r"compile on n[12]\b", out)) == len(e), out
    assert "compile on here" not in out
    # The allocation is gone after the link; -j followed its 2 CPUs.
    assert no_jobs(cluster)
    assert run([link.dir / "app"]).stdout == link.program


def test_killed_step_is_retried(cluster, link):
    p = start_link(cluster, link, slow=3)
    try:
        step, node = wait_for(lambda: (running_steps(cluster) or [None])[0], 60, "a job step")
        cluster.run(["scancel", step], check=True)
        out, _ = p.communicate(timeout=300)
    finally:
        p.kill()
    assert p.returncode == 0, out
    assert "the Slurm step failed" in out and "trying again" in out, out
    e = edges(link.inner)
    retried = [x for x in e if x[2] == 2]
    assert len(retried) == 1 and retried[0][3] == 0, e
    assert link.outputs() == link.reference
    assert no_jobs(cluster)


def test_dead_node_is_retried_elsewhere(cluster, link):
    p = start_link(cluster, link, slow=3)
    node = None
    try:
        # A step shows in squeue before its launch completes; killed in between, the link
        # cannot know the node. Kill the node once a compile there has started (the node
        # step writes its status file first).
        node = wait_for(lambda: started_node(link.inner), 60, "a compile on a node")
        cluster.kill_node(node)
        out, _ = p.communicate(timeout=300)
    finally:
        p.kill()
        if node:   # back for the tests after this one
            cluster.restart_node(node, timeout=60)
    assert p.returncode == 0, out
    assert f"the Slurm step failed on node {node}" in out, out
    e = edges(link.inner)
    again = [x for x in e if x[2] == 2]
    assert again and all(x[1] != node and x[3] == 0 for x in again), e
    assert link.outputs() == link.reference
    assert no_jobs(cluster)


def test_compile_error_is_not_retried(cluster, link, tmp_path):
    # A launcher that fails one partition's compile: a real error, reported by the node.
    bad = tmp_path / "fail_p1.sh"
    bad.write_text('#!/bin/sh\ncase "$*" in *big.o*/parts/p1.bc*) echo "boom" >&2; exit 1;; esac\n'
                   'exec "$@"\n')
    bad.chmod(0o755)
    out = remote_link(cluster, link, f"--launcher={bad}")
    assert "boom" in out
    assert "the Slurm step failed" not in out, out
    failed = [x for x in edges(link.inner) if x[3] != 0]
    assert len(failed) == 1 and failed[0][2] == 1 and "/p1.o" in failed[0][0], failed
    # The slot's usual fallback: its module compiled unsplit, the program unchanged.
    assert "will be compiled unsplit" in out
    assert run([link.dir / "app"]).stdout == link.program


def test_unreachable_controller_builds_locally(cluster, link, tmp_path):
    conf = tmp_path / "slurm.conf"
    conf.write_text(re.sub(r"(?m)^SlurmctldPort=.*$", "SlurmctldPort=1",
                           cluster.conf.read_text()))
    link.fresh()
    env = dict(cluster.env(), SLURM_CONF=str(conf))
    t0 = time.monotonic()
    r = subprocess.run(cluster.cmd_prefix() + link.cmd("--slurm-wait=5"), cwd=link.dir, env=env,
                       capture_output=True, text=True, timeout=120)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    warnings = [l for l in out.splitlines() if "warning" in l]
    assert len(warnings) == 1 and "no allocation" in warnings[0] and "locally" in warnings[0], out
    assert time.monotonic() - t0 < 60
    assert "compile on here" in out and not edges(link.inner)
    assert link.outputs() == link.reference


def test_ctrl_c_cancels_the_allocation(cluster, link):
    p = start_link(cluster, link, slow=3)
    try:
        wait_for(lambda: running_steps(cluster), 60, "a job step")
        assert cluster.squeue()
        os.killpg(p.pid, signal.SIGINT)   # what a terminal's Ctrl-C does to the build
        out, _ = p.communicate(timeout=60)
    finally:
        p.kill()
    assert p.returncode != 0
    assert no_jobs(cluster), cluster.squeue()
    assert not any("--node-step" in c for c in ps_commands()), "orphaned node steps"
    # Nothing half-written is trusted: the next link, in the same inner directory, builds the
    # same outputs.
    r = subprocess.run(cluster.cmd_prefix() + link.cmd(), cwd=link.dir, env=cluster.env(),
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert link.outputs() == link.reference


def test_killed_link_allocation_cancelled_by_next_link(cluster, link):
    p = start_link(cluster, link, slow=3)
    try:
        wait_for(lambda: running_steps(cluster), 60, "a job step")
        jobs = cluster.squeue()
        os.killpg(p.pid, signal.SIGKILL)   # no chance to clean up
        p.communicate(timeout=60)
    finally:
        p.kill()
    assert jobs and cluster.squeue() == jobs, "the killed link's allocation should still be there"
    assert (link.inner / "slurm.job").read_text().strip() == str(jobs[0])
    r = subprocess.run(cluster.cmd_prefix() + link.cmd(), cwd=link.dir, env=cluster.env(),
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert no_jobs(cluster), cluster.squeue()
    assert link.outputs() == link.reference


def test_up_to_date_link_takes_no_allocation(cluster, link, tmp_path):
    """A link whose inner build has nothing to do takes no allocation (salloc costs 0.2 s on
    an idle cluster, and can wait in a busy one's queue); the link before it, which had work,
    took one. salloc is wrapped by a script that logs each call."""
    shim = tmp_path / "bin"
    shim.mkdir()
    log = tmp_path / "salloc.log"
    (shim / "salloc").write_text(f'#!/bin/sh\necho "$*" >> {log}\nexec {shutil.which("salloc")} "$@"\n')
    (shim / "salloc").chmod(0o755)
    env = dict(cluster.env(), PATH=f"{shim}:{os.environ['PATH']}")
    link.fresh()
    for k in range(2):
        r = subprocess.run(cluster.cmd_prefix() + link.cmd(), cwd=link.dir, env=env,
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stdout + r.stderr
        assert log.read_text().count("\n") == 1, (k, log.read_text())
        assert link.outputs() == link.reference
    assert no_jobs(cluster), cluster.squeue()


def test_sanitized_slurm_link(cluster, link, asan_build_dir):
    """mtpc-link built with ASan+UBSan (leaks included) as front end, step and node step: the
    link runs clean (a report makes a tool exit non-zero) and builds the same outputs."""
    link.fresh()
    env = dict(cluster.env(), ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:exitcode=99",
               UBSAN_OPTIONS="halt_on_error=1:exitcode=98")
    cmd = link.cmd(mtpc_link=tool("mtpc-link", asan_build_dir))
    r = subprocess.run(cluster.cmd_prefix() + cmd, cwd=link.dir, env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Sanitizer" not in r.stdout + r.stderr
    assert link.outputs() == link.reference
    assert {x[1] for x in edges(link.inner)} == set(cluster.node_names())


def ps_commands():
    r = run(["ps", "-eo", "args="])
    return r.stdout.splitlines()


# ---- the sample CMake projects (MTPC_EXECUTOR) -------------------------------------------------

SAMPLES = {"c": ["app", "libshlib.so"], "cxx": ["app", "libshapes.so"]}


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_cmake_sample_identical_to_local(cluster, name, tmp_path):
    """One build directory, built locally, then again (inner directories removed) with
    MTPC_EXECUTOR=slurm: byte-identical outputs, compiles on both nodes."""
    b = tmp_path / "build"
    configure(PROJECTS / name, b, extra=["-DMTPC_EXECUTOR=local"])
    run(["cmake", "--build", b])
    local = {f: (b / f).read_bytes() for f in SAMPLES[name]}
    objs = {p.relative_to(b): p.read_bytes() for p in b.glob("*.mtpc/mod/*/native.o")}
    configure(PROJECTS / name, b, extra=["-DMTPC_EXECUTOR=slurm"])
    for d in b.glob("*.mtpc"):
        shutil.rmtree(d)
    r = cluster.run(["cmake", "--build", b], timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "warning" not in r.stdout + r.stderr, r.stdout + r.stderr
    assert {f: (b / f).read_bytes() for f in SAMPLES[name]} == local
    assert {p.relative_to(b): p.read_bytes() for p in b.glob("*.mtpc/mod/*/native.o")} == objs
    nodes = {x[1] for d in b.glob("*.mtpc") for x in edges(d)}
    assert nodes == set(cluster.node_names()), nodes
    assert no_jobs(cluster)


@pytest.mark.parametrize("lto", ["ON", "OFF"])
def test_cmake_compile_split_on_the_cluster(cluster, lto, tmp_path):
    """The compile step split too (MTPC_SPLIT_COST=0: every compile of the C sample through
    mtpc-compile, split), in a ThinLTO build and in a plain one (MTPC_LTO=OFF: native
    partitions, merged): with MTPC_EXECUTOR=slurm its partitions run on the cluster's
    nodes like the link's slots, and every object and output is byte-identical to the
    local build's."""
    b = tmp_path / "build"
    # MTPC_BUSY=ignore: the local build's -j 2 compiles would see each other on the work board
    # (and may keep one whole), which the cluster's executor does not read
    extra = ["-DMTPC_SPLIT_COST=0", f"-DMTPC_LTO={lto}", "-DMTPC_BUSY=ignore"]
    configure(PROJECTS / "c", b, extra=["-DMTPC_EXECUTOR=local", *extra])
    said = run(["cmake", "--build", b]).stdout
    outs = SAMPLES["c"]

    def warnings(text):   # big.c defines ifuncs: mtpc-compile declines it with one warning
        return sorted(ln for ln in text.splitlines() if "warning" in ln)

    def objects():   # the compiles' objects, not their inner builds' partitions
        return {p.relative_to(b): p.read_bytes() for p in b.glob("CMakeFiles/**/*.o")
                if not any(d.endswith(".mtpc") for d in p.parts)}

    local, local_objs = {f: (b / f).read_bytes() for f in outs}, objects()
    compile_inner = list(b.glob("CMakeFiles/**/*.o.mtpc"))
    assert compile_inner, "mtpc-compile split no compile"
    configure(PROJECTS / "c", b, extra=["-DMTPC_EXECUTOR=slurm", *extra])
    for d in [*b.glob("*.mtpc"), *compile_inner]:
        shutil.rmtree(d)
    for o in local_objs:
        (b / o).unlink()
    r = cluster.run(["cmake", "--build", b], timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert warnings(r.stdout + r.stderr) == warnings(said), r.stdout + r.stderr
    assert objects() == local_objs
    assert {f: (b / f).read_bytes() for f in outs} == local
    # the pre-link partitions ran remotely, on both nodes
    remote = [x for d in b.glob("CMakeFiles/**/*.o.mtpc") for x in edges(d)]
    assert remote and {x[1] for x in remote} == set(cluster.node_names()), remote
    assert no_jobs(cluster)


def test_cmake_rejects_unknown_executor(tmp_path):
    r = configure(PROJECTS / "c", tmp_path / "b", extra=["-DMTPC_EXECUTOR=cloud"], check=False)
    assert r.returncode != 0
    assert 'MTPC_EXECUTOR is "cloud"; expected local or slurm' in r.stderr, r.stderr


def test_bad_executor_option():
    r = run([tool("mtpc-link"), "--executor=cloud", "--", "true"], check=False)
    assert r.returncode == 2 and "expected local or slurm, got 'cloud'" in r.stderr, r.stderr
    r = run([tool("mtpc-link"), "--slurm-tries=0", "--", "true"], check=False)
    assert r.returncode == 2 and "--slurm-tries" in r.stderr, r.stderr


# ---- mtpc-distribute (DTLTO, clang/lld >= 21): MTPC_EXECUTOR=slurm -----------------------------

def test_dtlto_distributor_on_the_cluster(cluster, tmp_path):
    if int(LLVM_VERSION) < 21:
        pytest.skip(f"DTLTO needs clang/lld >= 21; MTPC is built with LLVM {LLVM_VERSION} "
                    "(scripts/test.sh runs this file again with LLVM 22)")
    clang = llvm_tool("clang")
    for f in PROJECTS.joinpath("c").iterdir():
        shutil.copy(f, tmp_path)
    for f in C_SOURCES:
        run([clang, "-O2", "-flto=thin", "-c", f, "-o", f[:-2] + ".o"], cwd=tmp_path)
    run([clang, "-O2", "-fPIC", "-shared", "-fuse-ld=lld", "shlib.c", "-o", "libshlib.so"],
        cwd=tmp_path)
    cmd = [clang, "-flto=thin", "-fuse-ld=lld", f"-fthinlto-distributor={tool('mtpc-distribute')}",
           "-Xthinlto-distributor=--threshold=0", "-Xthinlto-distributor=--partitions=4",
           "big.o", "main.o", "util.o", "-L.", "-lshlib", f"-Wl,-rpath,{tmp_path}", "-o", "app"]
    run(cmd, cwd=tmp_path, env=dict(os.environ, MTPC_EXECUTOR="local"))
    local = (tmp_path / "app").read_bytes()
    shutil.rmtree(tmp_path / "app.mtpc")
    (tmp_path / "app").unlink()
    r = subprocess.run(cluster.cmd_prefix() + cmd, cwd=tmp_path, capture_output=True, text=True,
                       env=dict(cluster.env(), MTPC_EXECUTOR="slurm"), timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "warning" not in r.stderr, r.stderr
    assert (tmp_path / "app").read_bytes() == local
    e = edges(tmp_path / "app.mtpc")
    assert len(e) >= 6 and {x[1] for x in e} == set(cluster.node_names()), e
    assert no_jobs(cluster)


# ---- SQLite: the shell linked locally and on the cluster (slow) --------------------------------

@pytest.mark.slow
def test_sqlite_shell_identical_to_local(cluster, tmp_path):
    from test_sqlite_build import AMALGAMATION, shell_session
    srcs = [AMALGAMATION / f for f in ("sqlite3.c", "shell.c")]
    if not all(f.exists() for f in srcs):
        pytest.skip(f"SQLite amalgamation missing in {AMALGAMATION}: run bench/get-sqlite.sh")
    objs = []
    for f in srcs:
        obj = tmp_path / (f.stem + ".o")
        run([CLANG, "-O2", "-flto=thin", "-DSQLITE_ENABLE_FTS5", f"-I{AMALGAMATION}", "-c", f,
             "-o", obj])
        objs.append(obj)

    def link_cmd(executor):
        return [tool("mtpc-link"), "--threshold=0", "--partitions=4", "--quiet",
                f"--executor={executor}", "--", CLANG, "-flto=thin", "-fuse-ld=lld", *objs, "-lm",
                "-o", tmp_path / "sqlite3"]

    def outputs():
        files = {"sqlite3": (tmp_path / "sqlite3").read_bytes()}
        for n in sorted((tmp_path / "sqlite3.mtpc").glob("mod/*/native.o")):
            files[n.parent.name] = n.read_bytes()
        return files

    run(link_cmd("local"))
    local = outputs()
    session = shell_session(tmp_path / "sqlite3", tmp_path / "local.db")
    shutil.rmtree(tmp_path / "sqlite3.mtpc")
    (tmp_path / "sqlite3").unlink()
    r = cluster.run([str(c) for c in link_cmd("slurm")], timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "warning" not in r.stdout + r.stderr, r.stdout + r.stderr
    assert outputs() == local
    assert shell_session(tmp_path / "sqlite3", tmp_path / "slurm.db") == session
    e = edges(tmp_path / "sqlite3.mtpc")
    # sqlite3.c's and shell.c's partitions (4 + 4 at most, at least 2 each) on both nodes.
    assert len(e) >= 4 and all(x[3] == 0 for x in e), e
    assert {x[1] for x in e} == set(cluster.node_names()), e
    assert no_jobs(cluster)
