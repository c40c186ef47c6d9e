"""Shared pytest fixtures: where the built tools are, and the tools of the LLVM they are built with."""
import atexit
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent

# The plan cache is on by default (mtpc-split, mtpc-link: $MTPC_CACHE, else
# $XDG_CACHE_HOME/mtpc/plans.sqlite, else ~/.cache/mtpc). The suite keeps its
# own: one per run, never the user's, and tests that need a cache of their
# own still set MTPC_CACHE or --cache.
if "MTPC_CACHE" not in os.environ:
    os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="mtpc-test-cache-")
    # Removed when the run ends, so repeated runs do not fill /tmp.
    atexit.register(shutil.rmtree, os.environ["XDG_CACHE_HOME"], ignore_errors=True)
# The job pool and its work board (common/jobs.h, common/workboard.h) are the machine's: the
# suite keeps its own, so that what else runs on the machine (another build, another run of the
# suite) neither takes its tokens nor holds its splits whole.
# Under pytest-xdist (scripts/test.sh runs the suite in two workers) each worker keeps a pool of
# its own too: a worker's tests are a build of their own, and a notice the other worker's split
# posted would hold this worker's splits whole (--busy auto) and change what its tests see. A
# pool the user gave (MTPC_JOBS_DIR set before pytest started) is kept.
_POOL_OWNER = os.environ.get("PYTEST_XDIST_WORKER", "main")
if "MTPC_JOBS_DIR" not in os.environ or \
        os.environ.get("MTPC_TEST_POOL_OWNER", _POOL_OWNER) != _POOL_OWNER:
    os.environ["MTPC_JOBS_DIR"] = tempfile.mkdtemp(prefix="mtpc-test-jobs-")
    os.environ["MTPC_TEST_POOL_OWNER"] = _POOL_OWNER
    atexit.register(shutil.rmtree, os.environ["MTPC_JOBS_DIR"], ignore_errors=True)
BUILD = pathlib.Path(os.environ.get("MTPC_BUILD_DIR", ROOT / "build"))
ASAN_BUILD = pathlib.Path(os.environ.get("MTPC_ASAN_BUILD_DIR", ROOT / "build-asan"))

# The LLVM the suite runs against: the one MTPC in BUILD was built with (or $MTPC_LLVM_VERSION),
# chosen in one place, bench/lib.py, which the benchmark tests use as well. Its subprocesses
# (tests/projects/fake_split.py, tests/hazards/llvm_split_adapter.py) read it from the environment.
sys.path.insert(0, str(ROOT / "bench"))
# The tests live in one folder per part (split, integration, distribute, slurm, cache,
# bench, units); the shared helpers (this file, splitlib, progdiff, slurm_cluster) and the fixtures
# stay here. Every folder is on the path, so a test module can use another's helpers.
TESTS = pathlib.Path(__file__).resolve().parent
for _d in [TESTS, *sorted(p for p in TESTS.iterdir() if p.is_dir() and any(p.glob("test_*.py")))]:
    if str(_d) not in sys.path:
        sys.path.insert(1, str(_d))
from lib import LLVM_BIN, LLVM_VERSION, versioned_driver  # noqa: E402,F401
os.environ["MTPC_LLVM_VERSION"] = LLVM_VERSION
os.environ["MTPC_LLVM_BIN"] = str(LLVM_BIN)


# The big matrices (hazard fixture x flag set x link mode, fixture x partition count, csmith
# seeds) run whole by default. MTPC_TEST_THIN=K:R runs one case in K of each, those on the
# diagonal residue R (0 <= R < K; K alone means K:0): case j of row i is kept when
# (i + j) mod K = R, so every row (a fixture, a seed) with K or more cases still runs, each under
# a different 1/K of the columns (flag sets, partition counts), and the K residues together are
# the whole matrix. scripts/test.sh runs 2:0 against LLVM 19 and 2:1 against LLVM 22: every
# case once, every row of two or more cases on both (the items of a plain list take turns).
def _thin():
    k, _, r = os.environ.get("MTPC_TEST_THIN", "1").partition(":")
    k, r = max(1, int(k or 1)), int(r or 0)
    if not 0 <= r < k:
        raise ValueError(f"MTPC_TEST_THIN={k}:{r}: the residue must be below {k}")
    return k, r


THIN = _thin()


def thinned(cases, row=None):
    """The cases of a matrix listed row by row (row: the length of a row, the innermost
    dimension; None for a plain list) that this run keeps under MTPC_TEST_THIN."""
    cases = list(cases)
    row = row or max(1, len(cases))
    k, r = THIN
    return [c for j, c in enumerate(cases) if (j // row + j % row) % k == r]


def llvm_tool(name):
    """Path of a tool of LLVM_VERSION (clang, ld.lld, llvm-nm, ...)."""
    p = LLVM_BIN / name
    if not p.exists():
        pytest.skip(f"{p} not installed (run scripts/install-deps.sh)")
    return str(p)


def tool(name, build=None):
    """Path of a built MTPC tool, e.g. tool('mtpc-split')."""
    build = build or BUILD
    for sub in ("splitter", "ninja-gen", "cache", "tests", "."):
        p = build / sub / name
        if p.exists():
            return str(p)
    pytest.fail(f"{name} not built in {build} (run scripts/build.sh)")


def run(cmd, check=True, **kw):
    """subprocess.run with text output captured; on failure the message shows both streams."""
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    r = subprocess.run([str(c) for c in cmd], **kw)
    if check and r.returncode != 0:
        raise AssertionError(
            f"command failed ({r.returncode}): {' '.join(map(str, cmd))}\n"
            f"stdout:\n{r.stdout}\nstderr:\n{r.stderr}")
    return r


@pytest.fixture(scope="session")
def build_dir():
    return BUILD


@pytest.fixture(scope="session")
def asan_build_dir():
    if not (ASAN_BUILD / "build.ninja").exists():
        pytest.skip("no sanitizer build (scripts/test.sh makes one)")
    return ASAN_BUILD


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist's --dist loadgroup (scripts/test.sh): the tests of a module that use a
    module-scoped fixture (a project or workload built once, a Slurm cluster) run on one worker,
    so that the fixture is made once; every other test is spread on its own. First, so that
    xdist's own hook (which turns the mark into the group) sees the mark."""
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        if info is not None and any(defs and defs[-1].scope == "module"
                                    for defs in info.name2fixturedefs.values()):
            item.add_marker(pytest.mark.xdist_group(item.module.__name__))


def pytest_configure(config):
    # Tests that take minutes (SQLite built twice, tests/integration/test_sqlite_build.py): still in the
    # default run, skipped with -m "not slow".
    config.addinivalue_line("markers", "slow: takes minutes; deselect with -m \"not slow\"")
    config.addinivalue_line("markers", "slurm: needs the Slurm test cluster (tests/slurm_cluster.py: "
                            "root, network namespaces); run alone with scripts/test.sh -m slurm")
