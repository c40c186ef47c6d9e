"""Critical-path and list-scheduling prediction from a Ninja build (.ninja_log).

A build's makespan on P cores is predicted from the measured duration of each edge and the
dependency graph between edges:

- parse_ninja_log(): the edges of the last build, with start/end times (ms);
- ninja_graph_inputs(): each output's direct inputs, from `ninja -t graph` (which also loads
  dyndep files that exist, so MTPC's merge edges see their partitions);
- edge_dependencies(): the edge → edges it waits for, through files produced by edges that
  are not in the log (phony edges, up-to-date edges);
- list_schedule(): greedy list scheduling, highest "bottom level" (longest remaining path)
  first, ties broken by name: deterministic, and within 2x of optimal (Graham); optionally
  with resource pools (jobs that may only run on a pool's cores: e.g. the steps that stay on
  the build machine while the compiles run on cluster nodes, bench/slurm_bench.py).
"""
import dataclasses
import heapq
import re
import subprocess


@dataclasses.dataclass
class Edge:
    name: str          # first output, in log order
    outputs: list
    start_ms: int
    end_ms: int

    @property
    def seconds(self):
        return (self.end_ms - self.start_ms) / 1000.0


def parse_ninja_log(text):
    """Edges of the most recent run of each output in a .ninja_log (v5 or v6 format).

    An edge with several outputs writes one line per output with the same start, end and
    command hash; later lines for an output replace earlier ones (a rebuild)."""
    latest = {}
    order = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        f = line.split("\t")
        if len(f) < 5:
            continue
        start, end, out, h = int(f[0]), int(f[1]), f[3], f[4]
        if out not in latest:
            order.append(out)
        latest[out] = (start, end, h)
    edges = {}
    for out in order:
        start, end, h = latest[out]
        key = (start, end, h)
        if key in edges:
            edges[key].outputs.append(out)
        else:
            edges[key] = Edge(out, [out], start, end)
    return list(edges.values())


_NODE = re.compile(r'^"(0x[0-9a-f]+)" \[label="((?:[^"\\]|\\.)*)"(, shape=ellipse)?\]$')
_ARROW = re.compile(r'^"(0x[0-9a-f]+)" -> "(0x[0-9a-f]+)"(?: \[(.*)\])?$')


def parse_ninja_graph(dot):
    """Direct inputs of each output file, from `ninja -t graph` text: {output: set(inputs)}.
    Order-only inputs (dotted arrows) count: the edge waits for them too."""
    files, rules = {}, set()
    arrows = []
    for line in dot.splitlines():
        m = _NODE.match(line)
        if m:
            if m.group(3):
                rules.add(m.group(1))
            else:
                files[m.group(1)] = m.group(2).replace('\\"', '"').replace("\\\\", "\\")
            continue
        m = _ARROW.match(line)
        if m:
            arrows.append((m.group(1), m.group(2)))
    edge_in, edge_out = {}, {}
    direct = {}
    for a, b in arrows:
        if b in rules:                      # input -> multi-in/out edge node
            edge_in.setdefault(b, set()).add(a)
        elif a in rules:                    # edge node -> output
            edge_out.setdefault(a, set()).add(b)
        else:                               # single input -> output
            direct.setdefault(b, set()).add(a)
    inputs = {}
    for e, outs in edge_out.items():
        for o in outs:
            inputs.setdefault(files[o], set()).update(files[i] for i in edge_in.get(e, ()))
    for o, ins in direct.items():
        inputs.setdefault(files[o], set()).update(files[i] for i in ins)
    return inputs


def ninja_graph_inputs(build_dir, ninja="ninja"):
    r = subprocess.run([ninja, "-C", str(build_dir), "-t", "graph"], capture_output=True,
                       text=True)
    if r.returncode != 0:
        raise RuntimeError(f"ninja -t graph failed in {build_dir}: {r.stderr.strip()}")
    return parse_ninja_graph(r.stdout)


def edge_dependencies(edges, inputs):
    """{edge name: set(edge names it waits for)}: through each input file's producer; files
    produced by edges absent from the log (phony, up to date) are looked through."""
    producer = {}
    for e in edges:
        for o in e.outputs:
            producer[o] = e.name
    deps = {}
    for e in edges:
        seen, found = set(), set()
        stack = [i for o in e.outputs for i in inputs.get(o, ())]
        while stack:
            f = stack.pop()
            if f in seen:
                continue
            seen.add(f)
            p = producer.get(f)
            if p is not None:
                if p != e.name:
                    found.add(p)
            else:
                stack.extend(inputs.get(f, ()))
        deps[e.name] = found
    return deps


def bottom_levels(durations, deps):
    """Longest path from each job to the end of the graph, including the job itself."""
    succ = {j: [] for j in durations}
    for j, ds in deps.items():
        for d in ds:
            succ[d].append(j)
    level = {}
    active = set()          # on the current DFS path: meeting one again means a cycle
    # iterative post-order (graphs can be deep: no recursion)
    for root in sorted(durations):
        if root in level:
            continue
        stack = [(root, False)]
        while stack:
            j, done = stack.pop()
            if done:
                active.discard(j)
                level[j] = durations[j] + max((level[s] for s in succ[j]), default=0.0)
                continue
            if j in level:
                continue
            if j in active:
                raise ValueError(f"dependency cycle through {j}")
            active.add(j)
            stack.append((j, True))
            for s in succ[j]:
                if s in active:
                    raise ValueError(f"dependency cycle through {s}")
                if s not in level:
                    stack.append((s, False))
    return level


def list_schedule(durations, deps, cores, pools=None, capacity=None):
    """Makespan of greedy list scheduling on `cores` identical cores.
    durations: {job: seconds}; deps: {job: set(jobs it waits for)}. Returns (makespan,
    {job: (start, end)}).

    Resource pools: pools maps a job to a pool name and capacity maps each pool name to its
    number of cores; a job runs only on a core of its pool (jobs without a pool: on the
    `cores` cores). E.g. a distributed build: compiles on `cores` remote nodes, the steps
    that must run on the build machine in pools={step: "local"}, capacity={"local": 2}.
    Each pool takes its ready jobs in the same priority order (bottom level, then name)."""
    pools = pools or {}
    capacity = dict(capacity or {})
    if cores < 1:
        raise ValueError("cores must be >= 1")
    for j, ds in deps.items():
        for d in ds:
            if d not in durations:
                raise ValueError(f"{j} depends on unknown job {d}")
    for j, p in pools.items():
        if p is None:
            continue
        if p not in capacity:
            raise ValueError(f"{j} is in pool {p!r}, which has no capacity")
        if capacity[p] < 1:
            raise ValueError(f"pool {p!r} must have >= 1 core")
    level = bottom_levels(durations, deps)
    waiting = {j: len(deps.get(j, ())) for j in durations}
    succ = {j: [] for j in durations}
    for j, ds in deps.items():
        for d in ds:
            succ[d].append(j)
    # None: the default pool of `cores` cores (a pool name is never None)
    free = {None: cores, **capacity}
    ready = {p: [] for p in free}

    def make_ready(j):
        heapq.heappush(ready[pools.get(j)], (-level[j], j))

    for j, n in waiting.items():
        if n == 0:
            make_ready(j)
    running = []            # (end, job)
    t = 0.0
    sched = {}
    order = sorted(free, key=lambda p: (p is not None, str(p)))   # deterministic
    while any(ready.values()) or running:
        for p in order:
            while free[p] and ready[p]:
                _, j = heapq.heappop(ready[p])
                sched[j] = (t, t + durations[j])
                heapq.heappush(running, (t + durations[j], j))
                free[p] -= 1
        if not running:
            break
        t, j = heapq.heappop(running)
        finished = [j]
        while running and running[0][0] == t:
            finished.append(heapq.heappop(running)[1])
        for f in finished:
            free[pools.get(f)] += 1
        for f in finished:
            for s in succ[f]:
                waiting[s] -= 1
                if waiting[s] == 0:
                    make_ready(s)
    if len(sched) != len(durations):
        raise ValueError("dependency cycle: not every job could be scheduled")
    return max((e for _, e in sched.values()), default=0.0), sched


def critical_path(durations, deps):
    """(length, [jobs along it]) of the longest dependency chain."""
    level = bottom_levels(durations, deps)
    if not level:
        return 0.0, []
    succ = {j: [] for j in durations}
    for j, ds in deps.items():
        for d in ds:
            succ[d].append(j)
    starts = [j for j in durations if not deps.get(j)]
    j = max(sorted(starts), key=lambda x: level[x])
    path = [j]
    while succ[j]:
        j = max(sorted(succ[j]), key=lambda x: level[x])
        path.append(j)
    return max(level[s] for s in starts), path


def predict(edges, deps, cores_list=(4, 16, 64)):
    """Summary for a build: measured makespan, total work, critical path, and the predicted
    makespan and speedup (vs one core) at each core count."""
    durations = {e.name: e.seconds for e in edges}
    work = sum(durations.values())
    cp, path = critical_path(durations, deps)
    measured = ((max(e.end_ms for e in edges) - min(e.start_ms for e in edges)) / 1000.0
                if edges else 0.0)
    preds = {}
    for p in cores_list:
        m, _ = list_schedule(durations, deps, p)
        preds[p] = {"makespan": m, "speedup": work / m if m else float("nan")}
    return {"edges": len(edges), "measured_makespan": measured, "work": work,
            "critical_path": cp, "critical_path_edges": path, "predicted": preds}
