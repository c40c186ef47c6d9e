"""Tests of tests/slurm_cluster.py: a two-node Slurm cluster in network namespaces (root only)."""
import os
import pathlib
import re
import select
import subprocess
import sys
import time

import pytest

import slurm_cluster
from slurm_cluster import Cluster

pytestmark = pytest.mark.slurm
HERE = pathlib.Path(__file__).resolve().parent.parent   # tests/: slurm_cluster.py


def until(pred, timeout, what):
    deadline = time.monotonic() + timeout
    while not (v := pred()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.1)
    return v


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    reason = slurm_cluster.unavailable_reason()
    if reason:
        pytest.skip(reason)
    with Cluster(tmp_path_factory.mktemp("slurm"), nodes=2, cpus=1) as c:
        yield c


def salloc(cluster, *args):
    """Make an allocation without a shell; its job id."""
    r = cluster.run(["salloc", "--no-shell", *args], check=True)
    return int(re.search(r"Granted job allocation (\d+)", r.stderr).group(1))


def cancel(cluster, job):
    cluster.run(["scancel", str(job)], check=True)
    until(lambda: job not in cluster.squeue(), 20, f"job {job} to leave squeue")


def running_steps(cluster, job):
    r = cluster.run(["squeue", "-h", "-s", "-j", str(job), "-o", "%i"], check=True)
    return r.stdout.split()


def test_nodes_have_own_names_and_hostnames(cluster):
    r = cluster.run(["srun", "-N2", "-n2", "printenv", "SLURMD_NODENAME"], check=True)
    assert sorted(r.stdout.split()) == cluster.node_names() == ["n1", "n2"]
    r = cluster.run(["srun", "-N2", "-n2", "sh", "-c", 'echo "$SLURMD_NODENAME $(hostname)"'], check=True)
    assert sorted(r.stdout.splitlines()) == ["n1 n1", "n2 n2"]
    # Nothing of the cluster lives in (so nothing binds an address of) our network namespace.
    ours = os.readlink("/proc/self/ns/net")
    pids = list(cluster.state["pids"].values()) + [p for n in cluster.node_names() for p in cluster.node_pids(n)]
    assert pids and all(os.readlink(f"/proc/{p}/ns/net") != ours for p in pids)
    ports = subprocess.run(["ss", "-Htuln"], capture_output=True, text=True, check=True).stdout
    assert ":16817 " not in ports and ":16818 " not in ports


def test_allocation_runs_queued_steps_on_both_nodes(cluster):
    job = salloc(cluster, "-N2", "-n2")
    try:
        assert job in cluster.squeue()
        # Four one-task steps in a two-CPU allocation: two run, two wait for a free CPU.
        script = 'echo "$SLURMD_NODENAME $(date +%s.%N)"; sleep 0.5; date +%s.%N'
        steps = [cluster.popen(["srun", f"--jobid={job}", "-n1", "--exclusive", "sh", "-c", script])
                 for _ in range(4)]
        spans = {}
        for p in steps:
            out, err = p.communicate(timeout=30)
            assert p.returncode == 0, err
            node, start, end = out.split()
            spans.setdefault(node, []).append((float(start), float(end)))
        assert sorted(spans) == ["n1", "n2"]
        for node, s in spans.items():   # never two steps at once on a one-CPU node
            s.sort()
            assert all(a[1] <= b[0] for a, b in zip(s, s[1:])), (node, s)
    finally:
        cancel(cluster, job)
    assert cluster.squeue() == []


def test_killed_step_fails_srun(cluster):
    job = salloc(cluster, "-N1", "-n1")
    try:
        for how in ("scancel", "kill task"):
            srun = cluster.popen(["srun", f"--jobid={job}", "-n1", "sleep", "61"])
            step = until(lambda: running_steps(cluster, job), 10, "the step to start")[0]
            if how == "scancel":
                cluster.run(["scancel", step], check=True)
            else:
                task = until(lambda: [p for n in cluster.node_names() for p in cluster.node_pids(n)
                                      if pathlib.Path(f"/proc/{p}/cmdline").read_bytes().endswith(b"sleep\x0061\x00")],
                             10, "the task")
                os.kill(task[0], 9)
            _, err = srun.communicate(timeout=20)
            assert srun.returncode != 0, (how, err)
    finally:
        cancel(cluster, job)


def test_node_death_and_restart(cluster):
    job = salloc(cluster, "--no-kill", "-N2", "-n2")
    try:
        doomed = cluster.popen(["srun", f"--jobid={job}", "-n1", "-w", "n2", "-u",
                                "sh", "-c", "echo started; exec sleep 120"])
        # The step shows in squeue before its launch on n2 completes; a node killed in
        # between fails the launch ("Application launch failed") instead of the running
        # step. The task's first line reaching srun means the launch is complete.
        until(lambda: select.select([doomed.stdout], [], [], 0.5)[0], 20, "the step on n2 to start")
        assert doomed.stdout.readline() == "started\n"
        t0 = time.monotonic()
        cluster.kill_node("n2")
        assert cluster.node_pids("n2") == []
        # Before the controller notices, a new step still runs on the live node...
        r = cluster.run(["srun", f"--jobid={job}", "-n1", "printenv", "SLURMD_NODENAME"], check=True, timeout=20)
        assert r.stdout.split() == ["n1"]
        # ...and the dead node is reported down within the bound.
        cluster.wait_states(lambda s: s.startswith("down"), slurm_cluster.DEATH_BOUND, ["n2"])
        detected = time.monotonic() - t0
        # The srun whose node died returns, saying so; its exit status is 0 in Slurm 22.05 (!).
        _, err = doomed.communicate(timeout=20)
        assert "Node failure on n2" in err
        # --no-kill: the allocation lives on, shrunk to n1, and takes new steps.
        assert job in cluster.squeue()
        for _ in range(2):
            r = cluster.run(["srun", f"--jobid={job}", "-n1", "printenv", "SLURMD_NODENAME"], check=True)
            assert r.stdout.split() == ["n1"]
        cluster.restart_node("n2")
        print(f"node death seen after {detected:.1f} s; srun of the dead step returned {doomed.returncode}")
    finally:
        cancel(cluster, job)
    cluster.wait_states(lambda s: s == "idle", 20)


def test_down_leaves_nothing(tmp_path):
    reason = slurm_cluster.unavailable_reason()
    if reason:
        pytest.skip(reason)
    cli = [sys.executable, str(HERE / "slurm_cluster.py")]
    d = tmp_path / "c"
    r = subprocess.run(cli + ["up", str(d), "--nodes", "1"], capture_output=True, text=True, timeout=90)
    assert r.returncode == 0, r.stderr
    assert f"SLURM_CONF={d}/slurm.conf" in r.stdout
    c = Cluster(d)   # a fresh view from the recorded state, as the CLI's down has
    pids = list(c.state["pids"].values()) + c.node_pids("n1")
    namespaces = c.state["namespaces"]
    assert len(pids) >= 3 and len(namespaces) == 2
    assert c.run(["srun", "hostname"], check=True).stdout == "n1\n"
    for _ in range(2):   # idempotent
        subprocess.run(cli + ["down", str(d)], check=True, timeout=60)
    assert not [p for p in pids if slurm_cluster._alive(p)]
    assert not set(namespaces) & slurm_cluster._netns_list()

    # A failing up() cleans up after itself.
    c = Cluster(tmp_path / "partial", nodes=1)
    c._start_slurmd = lambda name: (_ for _ in ()).throw(OSError("no slurmd today"))
    with pytest.raises(RuntimeError, match="did not come up"):
        c.up()
    assert c.state["namespaces"] == [] and c.state["pids"] == {}
    assert not {ns for ns in slurm_cluster._netns_list() if ns.startswith(c.state["tag"])}
