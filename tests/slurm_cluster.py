"""A throw-away Slurm cluster on one machine, for tests (stdlib only; needs root).

Topology of a cluster with tag T (e.g. ``mtpc1234c0``) and N nodes::

    netns T-ctl   bridge br0 10.250.K.1/24, munged, slurmctld, and every client
      |  veth v<i> (in T-ctl, enslaved to br0)  <->  eth0 (in T-n<i>)
    netns T-n<i>  eth0 10.250.K.(10+i)/24, slurmd -N n<i> under ``unshare --uts``
                  with hostname n<i>, and its slurmstepds and tasks

Everything lives in the cluster's own namespaces: there is no veth to the root
namespace, so nothing binds a non-loopback address on the host and two clusters
with the same K could not even collide (K is still picked unused).  munged is our
own (key, socket, pid, log, seed in DIR); pathname unix sockets are reachable
from every network namespace, so all daemons use DIR/munge.sock via
``AuthInfo=socket=...``.

Why clients (srun, salloc, sbatch, squeue, sinfo, scancel) must run in the ctl
namespace, via ``Cluster.cmd_prefix()`` or ``Cluster.run()``: the controller
address 10.250.K.1 only exists there, and slurmd connects *back* to srun (task
I/O, step completion) at the address srun's connection came from, which must be
routable from the node namespaces.

Node death (SlurmdTimeout=5): after kill_node, sinfo marks the node not
responding ("alloc*"/"idle*") after ~8 s and DOWN ("down*") after 14-16 s
(measured); DEATH_BOUND (30 s) bounds it.  Steps on the dead node end then: srun
prints "srun: error: Node failure on n2" and, for a step whose tasks all ran on
that node, exits 0 (Slurm 22.05), so callers must not trust its exit status
alone.  Without --no-kill the whole allocation is killed; with salloc --no-kill
it lives on, shrunk to the surviving nodes.  ReturnToService=2 returns a
restarted node to service (idle) within a second.

State (tag, namespaces, pids) is kept in DIR/cluster.json, so ``down DIR`` works
from a fresh process:

    python3 tests/slurm_cluster.py up DIR [--nodes N] [--cpus C]   # prints env
    python3 tests/slurm_cluster.py down DIR
"""
import argparse
import itertools
import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import time

SLURMD_TIMEOUT = 5
DEATH_BOUND = 30   # seconds until sinfo shows a killed node down (measured 14-16 s)
BINARIES = ("munged", "mungekey", "slurmctld", "slurmd", "srun", "salloc", "sinfo",
            "squeue", "scancel", "ip", "unshare")
_counter = itertools.count()


def _sh(argv, check=True, timeout=30):
    r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    if check and r.returncode:
        raise RuntimeError(f"{' '.join(argv)} failed ({r.returncode}): {r.stderr.strip()}")
    return r


def _netns_list():
    return {line.split()[0] for line in _sh(["ip", "netns", "list"]).stdout.splitlines() if line}


def _netns_pids(ns):
    r = _sh(["ip", "netns", "pids", ns], check=False)
    return [int(p) for p in r.stdout.split()] if r.returncode == 0 else []


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:   # a zombie is as good as dead
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


def _kill_all(pids, grace):
    """SIGTERM (unless grace == 0), wait up to grace s, then SIGKILL; wait up to 5 s more."""
    pids = [p for p in set(pids) if p != os.getpid()]
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5)):
        if sig == signal.SIGTERM and not grace:
            continue
        for p in pids:
            try:
                os.kill(p, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            pids = [p for p in pids if _alive(p)]
            if not pids:
                return
            time.sleep(0.05)


def unavailable_reason():
    """None if a cluster can be started here, else why not."""
    if os.geteuid() != 0:
        return "Slurm test cluster needs root (network namespaces, SlurmUser=root)"
    missing = [b for b in BINARIES if not shutil.which(b)]
    if missing:
        return "Slurm test cluster: missing " + ", ".join(missing)
    probe = f"mtpcprobe{os.getpid()}"
    r = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if r.returncode:
        return f"Slurm test cluster: `ip netns add` fails: {r.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


class Cluster:
    def __init__(self, dir, nodes=2, cpus=1):
        self.dir = pathlib.Path(dir).resolve()
        self.nodes, self.cpus = nodes, cpus
        self.conf = self.dir / "slurm.conf"
        self.state_file = self.dir / "cluster.json"
        self.state = json.loads(self.state_file.read_text()) if self.state_file.exists() else None

    # --- state ----------------------------------------------------------------
    def _save(self):
        self.state_file.write_text(json.dumps(self.state, indent=1))

    @property
    def ctl_ns(self):
        return self.state["tag"] + "-ctl"

    def _node_ns(self, name):
        if name not in self.node_names():
            raise ValueError(f"no node {name}")
        return f"{self.state['tag']}-{name}"

    def node_names(self):
        return [f"n{i}" for i in range(1, self.state["nodes"] + 1)]

    # --- clients ----------------------------------------------------------------
    def cmd_prefix(self):
        return ["ip", "netns", "exec", self.ctl_ns]

    def env(self):
        env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
        env["SLURM_CONF"] = str(self.conf)
        return env

    def run(self, argv, **kw):
        """subprocess.run(argv) in the ctl namespace; text output captured, 60 s timeout."""
        kw.setdefault("capture_output", True)
        kw.setdefault("text", True)
        kw.setdefault("timeout", 60)
        return subprocess.run(self.cmd_prefix() + list(argv), env=self.env(), **kw)

    def popen(self, argv, **kw):
        """subprocess.Popen(argv) in the ctl namespace (text pipes for stdout and stderr)."""
        kw.setdefault("stdout", subprocess.PIPE)
        kw.setdefault("stderr", subprocess.PIPE)
        kw.setdefault("text", True)
        return subprocess.Popen(self.cmd_prefix() + list(argv), env=self.env(), **kw)

    def node_pids(self, name):
        """Pids of every process in the node's namespace (slurmd, slurmstepds, tasks)."""
        return _netns_pids(self._node_ns(name))

    def squeue(self):
        """Job ids still pending or running (or completing)."""
        r = self.run(["squeue", "-h", "-o", "%i"], check=True)
        return [int(j) for j in r.stdout.split()]

    def node_states(self):
        """{node: sinfo compact state}, e.g. {'n1': 'idle', 'n2': 'down*'}."""
        r = self.run(["sinfo", "-h", "-N", "-o", "%N %t"], check=True)
        return dict(line.split() for line in r.stdout.splitlines())

    def wait_states(self, want, timeout, nodes=None):
        """Wait until every node in nodes (default all) has a state for which want(state) is true."""
        nodes = nodes or self.node_names()
        deadline = time.monotonic() + timeout
        while True:
            try:
                states = self.node_states()
            except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as e:
                states = {"error": getattr(e, "stderr", str(e))}
            if all(want(states.get(n, "")) for n in nodes):
                return states
            dead = [name for name, pid in self.state["pids"].items() if not _alive(pid)]
            if dead:
                raise RuntimeError(f"{', '.join(dead)} died\n" + self.log_tails())
            if time.monotonic() > deadline:
                raise TimeoutError(f"nodes {nodes} not as wanted after {timeout} s: {states}\n"
                                   + self.log_tails())
            time.sleep(0.2)

    def log_tails(self, lines=15):
        out = []
        for log in sorted(self.dir.glob("*.log")) + sorted(self.dir.glob("*.out")):
            tail = log.read_text(errors="replace").splitlines()[-lines:]
            out.append(f"--- {log.name}\n" + "\n".join(tail))
        return "\n".join(out)

    # --- lifecycle ------------------------------------------------------------
    def _spawn(self, name, argv):
        out = open(self.dir / f"{name}.out", "ab")
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                             env=self.env(), start_new_session=True)
        out.close()
        self.state["pids"][name] = p.pid
        self._save()
        return p

    def _pick_tag_and_subnet(self):
        existing = _netns_list()
        while True:
            tag = f"mtpc{os.getpid()}c{next(_counter)}"
            if not any(ns.startswith(tag + "-") for ns in existing):
                break
        used = set()
        for ns in existing:
            if ns.startswith("mtpc") and ns.endswith("-ctl"):
                r = _sh(["ip", "-n", ns, "-4", "-o", "addr", "show"], check=False)
                used |= {int(w.split(".")[2]) for w in r.stdout.split() if w.startswith("10.250.")}
        k = next(k for k in range(1, 255) if k not in used)
        return tag, k

    def _write_conf(self):
        d, k = self.dir, self.state["k"]
        n = self.state["nodes"]
        self.conf.write_text(f"""\
ClusterName=mtpc
SlurmctldHost={os.uname().nodename}(10.250.{k}.1)
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={d}/munge.sock
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool-%n
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd-%n.pid
SlurmctldLogFile={d}/slurmctld.log
SlurmdLogFile={d}/slurmd-%n.log
PlugStackConfig={d}/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
PropagateResourceLimits=NONE
# CPUs=C may exceed the hardware (config_overrides)
SlurmdParameters=config_overrides
ReturnToService=2
SlurmdTimeout={SLURMD_TIMEOUT}
MessageTimeout=5
KillWait=2
MinJobAge=2
InactiveLimit=0
SlurmctldDebug=info
SlurmdDebug=info
NodeName=n[1-{n}] NodeAddr=10.250.{k}.[11-{10 + n}] CPUs={self.state['cpus']} State=UNKNOWN
PartitionName=all Nodes=ALL Default=YES MaxTime=INFINITE State=UP
""")
        (d / "plugstack.conf").write_text("")
        # ip netns exec mounts a fresh /sys, without /sys/fs/cgroup: autodetection
        # would fail; cgroup/v1 only loads (nothing here uses cgroups).
        (d / "cgroup.conf").write_text("CgroupPlugin=cgroup/v1\nCgroupAutomount=no\n")

    def up(self, timeout=60):
        """Start munged, slurmctld and the slurmds; wait until all nodes are idle.
        On failure, tear down what was started (logs stay in DIR) and raise."""
        if self.state and self.state.get("namespaces"):
            raise RuntimeError(f"a cluster is already recorded in {self.state_file}; down() it first")
        if len(str(self.dir / "munge.sock")) > 100:
            raise ValueError(f"{self.dir} too long for a unix socket path")
        self.dir.mkdir(parents=True, exist_ok=True)
        for old in [*self.dir.glob("state"), *self.dir.glob("spool-*")]:   # a fresh cluster, no old jobs
            shutil.rmtree(old)
        for old in [*self.dir.glob("*.log"), *self.dir.glob("*.out")]:
            old.unlink()
        (self.dir / "state").mkdir()
        tag, k = self._pick_tag_and_subnet()
        self.state = {"tag": tag, "k": k, "nodes": self.nodes, "cpus": self.cpus,
                      "namespaces": [], "pids": {}}
        self._save()
        try:
            self._start(timeout)
        except BaseException as e:
            self.down()
            raise RuntimeError(f"Slurm test cluster in {self.dir} did not come up") from e
        return self

    def _ns_add(self, ns):
        self.state["namespaces"].append(ns)
        self._save()
        _sh(["ip", "netns", "add", ns])
        _sh(["ip", "-n", ns, "link", "set", "lo", "up"])

    def _start(self, timeout):
        deadline = time.monotonic() + timeout
        ctl, k = self.ctl_ns, self.state["k"]
        self._ns_add(ctl)
        _sh(["ip", "-n", ctl, "link", "add", "br0", "type", "bridge"])
        _sh(["ip", "-n", ctl, "addr", "add", f"10.250.{k}.1/24", "dev", "br0"])
        _sh(["ip", "-n", ctl, "link", "set", "br0", "up"])
        for i, name in enumerate(self.node_names(), 1):
            ns = self._node_ns(name)
            self._ns_add(ns)
            _sh(["ip", "-n", ctl, "link", "add", f"v{i}", "type", "veth",
                 "peer", "name", "eth0", "netns", ns])
            _sh(["ip", "-n", ctl, "link", "set", f"v{i}", "master", "br0", "up"])
            _sh(["ip", "-n", ns, "addr", "add", f"10.250.{k}.{10 + i}/24", "dev", "eth0"])
            _sh(["ip", "-n", ns, "link", "set", "eth0", "up"])
            (self.dir / f"spool-{name}").mkdir(exist_ok=True)
        self._write_conf()

        d = self.dir
        key = d / "munge.key"
        if not key.exists():
            _sh(["mungekey", "-c", "-k", str(key)])
        self._spawn("munged", self.cmd_prefix() + [
            "munged", "-F", "--force", f"--key-file={key}", f"--socket={d}/munge.sock",
            f"--pid-file={d}/munged.pid", f"--log-file={d}/munged.log", f"--seed-file={d}/munged.seed"])
        while not (d / "munge.sock").exists():
            if time.monotonic() > deadline:
                raise TimeoutError("munged did not create its socket")
            time.sleep(0.05)
        self._spawn("slurmctld", self.cmd_prefix() + ["slurmctld", "-D", "-i", "-f", str(self.conf)])
        for name in self.node_names():
            self._start_slurmd(name)
        self.wait_states(lambda s: s == "idle", max(1, deadline - time.monotonic()))

    def _start_slurmd(self, name):
        self._spawn(f"slurmd-{name}", ["ip", "netns", "exec", self._node_ns(name), "unshare", "--uts",
                                       "sh", "-c", f'hostname {name} && exec "$@"', "sh",
                                       "slurmd", "-D", "-N", name, "-f", str(self.conf)])

    def kill_node(self, name):
        """Simulate the death of a node: SIGKILL slurmd, slurmstepds and tasks in its namespace."""
        for _ in range(5):   # a dying slurmd may still be forking a step
            pids = self.node_pids(name)
            if not pids:
                break
            _kill_all(pids, grace=0)
        self.state["pids"].pop(f"slurmd-{name}", None)
        self._save()

    def restart_node(self, name, timeout=30):
        """Start the node's slurmd again (after kill_node) and wait until it is idle."""
        self._start_slurmd(name)
        self.wait_states(lambda s: s == "idle", timeout, [name])

    def down(self):
        """Stop every process of the cluster and delete its namespaces; idempotent."""
        if not self.state:
            return
        pids = []
        for ns in self.state["namespaces"]:
            pids += _netns_pids(ns)
        for p in self.state["pids"].values():   # only if still ours: pids get reused
            try:
                if f"{self.dir}/".encode() in pathlib.Path(f"/proc/{p}/cmdline").read_bytes():
                    pids.append(p)
            except OSError:
                pass
        _kill_all(pids, grace=5)
        existing = _netns_list()
        for ns in reversed(self.state["namespaces"]):
            if ns in existing:
                _sh(["ip", "netns", "del", ns], check=False)
        self.state["namespaces"], self.state["pids"] = [], {}
        self._save()

    def __enter__(self):
        return self.up()

    def __exit__(self, *exc):
        self.down()


def main(argv=None):
    ap = argparse.ArgumentParser(description="Start or stop a Slurm test cluster in network namespaces.")
    ap.add_argument("action", choices=("up", "down"))
    ap.add_argument("dir")
    ap.add_argument("--nodes", type=int, default=2)
    ap.add_argument("--cpus", type=int, default=1)
    a = ap.parse_args(argv)
    c = Cluster(a.dir, a.nodes, a.cpus)
    if a.action == "down":
        c.down()
        return 0
    reason = unavailable_reason()
    if reason:
        sys.exit(reason)
    c.up()
    print(f"export SLURM_CONF={c.conf}")
    print(f"export MTPC_SLURM_NETNS={c.ctl_ns}")
    print(f"# run Slurm clients as: ip netns exec {c.ctl_ns} srun ...   (nodes: {' '.join(c.node_names())})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
