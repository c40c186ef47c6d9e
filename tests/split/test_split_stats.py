"""`mtpc-split --stats`: the emission line a script predicts the split's wall time from
(bench/split_bench.py, predict_split): the serial time, the emission's wall time and
threads, and one emission CPU time per partition written, each from the CPU clock of the
thread that built the partition."""
import os

import pytest

import lib  # bench/lib.py (conftest puts bench/ on the path): os.wait4 CPU of a child
import split_bench
import splitlib as sl
from conftest import llvm_tool, run, tool


@pytest.fixture(scope="module")
def stress_bc(tmp_path_factory):
    """A module whose emission takes measurable CPU per partition."""
    return sl.stress_module(7, tmp_path_factory.mktemp("stats") / "m.bc", funcs=8, size=1500)


def split_stats(bc, out, n, *extra):
    """Split with --stats; returns (parsed emission line, first line, process CPU)."""
    m = lib.run_measured([tool("mtpc-split"), bc, "-o", out, "--partitions", n, "--no-cache",
                          "--no-seed", "--stats", *extra])
    lines = m.stderr.splitlines()
    assert len(lines) == 2, m.stderr
    st = split_bench.parse_emit_stats(m.stderr)
    assert st, m.stderr
    st["line"] = lines[1]
    return st, lines[0], m.cpu


@pytest.mark.parametrize("jobs,how", [(1, "threads"), (2, "threads"), (2, "processes")])
def test_emit_cpu_per_partition(stress_bc, tmp_path, jobs, how):
    out = tmp_path / "out"
    st, first, cpu = split_stats(stress_bc, out, 4, "-j", str(jobs), "--emit-with", how)
    assert f"wall on {st['emit_threads']} {how};" in st["line"]
    written = sorted(out.glob("p*.bc"))
    assert len(written) >= 2, first
    assert f"{len(written)} partitions" in first      # the first line is as it was
    assert len(st["emit_cpu"]) == len(written)        # one figure per partition written
    assert all(c >= 0 for c in st["emit_cpu"]), st
    assert 1 <= st["emit_threads"] <= min(jobs, len(written)), st
    assert st["serial"] > 0 and st["emit_wall"] > 0, st
    total = sum(st["emit_cpu"])
    assert total > 0, st
    # Each thread's (or process slot's) partitions are built one after another inside the
    # emit phase, and a thread's CPU time never exceeds its wall time: a process-wide clock
    # (which counts the other threads' work too) or a clock around more than the emission
    # breaks this.
    # Tolerance: the 4-decimal rounding and clock granularity.
    assert total <= st["emit_wall"] * st["emit_threads"] + 1e-3 * len(written), st
    # The emission's CPU is part of the process's CPU (os.wait4 of the child, which counts
    # the processes it waited for).
    assert total <= cpu + 1e-3 * len(written), (st, cpu)


def test_emit_stats_one_partition(stress_bc, tmp_path):
    """-n 1: the module itself is the partition (no emission thread), still one figure."""
    st, first, _ = split_stats(stress_bc, tmp_path / "out", 1)
    assert "1 partitions" in first
    assert st["emit_threads"] == 0 and st["emit_cpu"] == [0.0], st


def test_up_to_date_split_prints_no_emission(stress_bc, tmp_path):
    """A split whose outputs are current emits nothing, and says so instead."""
    out = tmp_path / "out"
    split_stats(stress_bc, out, 2)
    m = lib.run_measured([tool("mtpc-split"), stress_bc, "-o", out, "--partitions", 2,
                          "--no-cache", "--stats"])
    assert "outputs up to date" in m.stderr and split_bench.parse_emit_stats(m.stderr) is None


def test_processes_fall_back_to_threads_for_a_blockaddress(tmp_path):
    """--emit-with processes builds a module that takes a blockaddress with threads (a copy
    numbers that constant differently, and a partition's bytes must not depend on -j); the
    stats line says which way ran."""
    bc = sl.to_bitcode(sl.HAZARDS / "blockaddress.c", tmp_path / "m.bc")
    st, _, _ = split_stats(bc, tmp_path / "out", 4, "-j", "4", "--emit-with", "processes")
    assert " threads;" in st["line"], st["line"]
    plain = sl.stress_module(3, tmp_path / "s.bc", funcs=4, size=200)
    st, _, _ = split_stats(plain, tmp_path / "out2", 4, "-j", "4")
    assert " processes;" in st["line"], st["line"]  # auto: processes from -j 4 on


# fork() replaced (LD_PRELOAD) by one that fails with EAGAIN: MTPC_TEST_FORK_FAIL=once
# fails the second call only (one child is running then), =always fails every call.
FAILING_FORK = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
pid_t fork(void)
{
	static int calls;
	const char *how = getenv("MTPC_TEST_FORK_FAIL");
	calls++;
	if (how && (strcmp(how, "always") == 0 || (strcmp(how, "once") == 0 && calls == 2))) {
		errno = EAGAIN;
		return -1;
	}
	pid_t (*real)(void) = (pid_t (*)(void))dlsym(RTLD_NEXT, "fork");
	return real();
}
"""


def test_processes_wait_when_fork_fails(stress_bc, tmp_path):
    """Out of processes (fork fails with EAGAIN, as under a pids limit): while a partition's
    process runs, the next partition waits for it and the split completes with the same bytes
    as threads; with no process running to wait for, the split fails in one line naming the
    partition and writes nothing (mtpc-link then builds the module unsplit)."""
    (tmp_path / "fork.c").write_text(FAILING_FORK)
    hook = tmp_path / "libfork.so"
    run([llvm_tool("clang"), "-shared", "-fPIC", "-o", hook, tmp_path / "fork.c", "-ldl"])
    ref = tmp_path / "threads"
    split_stats(stress_bc, ref, 4, "-j", "4", "--emit-with", "threads")

    def split(out, how):
        env = dict(os.environ, LD_PRELOAD=str(hook), MTPC_TEST_FORK_FAIL=how)
        return run([tool("mtpc-split"), stress_bc, "-o", out, "--partitions", "4", "-j", "4",
                    "--no-cache", "--no-seed", "--emit-with", "processes"], check=False, env=env)

    r = split(tmp_path / "once", "once")
    assert r.returncode == 0, r.stderr
    names = sorted(p.name for p in ref.glob("p*.bc"))
    assert len(names) == 4 and names == sorted(p.name for p in (tmp_path / "once").glob("p*.bc"))
    for n in names:
        assert (ref / n).read_bytes() == (tmp_path / "once" / n).read_bytes(), n
    out = tmp_path / "always"
    r = split(out, "always")
    assert r.returncode == 1, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "partition 0: cannot fork: Resource temporarily unavailable" \
        in lines[0], r.stderr
    assert not out.exists() or not any(out.glob("*.bc")), list(out.iterdir())
