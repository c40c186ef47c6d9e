"""Shared helpers for MTPC's benchmarks (standard library only).

- tools: where clang, lld, llvm-split (of LLVM_VERSION: the LLVM MTPC is built with) and the
  built MTPC tools are;
- run_measured(): one process, its wall time and its own CPU time (os.wait4 rusage);
- thin_post_import(): build a program with ThinLTO up to the thin link and get the
  post-import module of one of its modules (-save-temps=obj leaves
  <out>.3.import.bc; docs/build-integration.md, "lld, clang and Ninja behaviour"), timing its real ThinLTO backend on the way;
- statistics (median) and small formatting helpers.
"""
import dataclasses
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
BUILD = pathlib.Path(os.environ.get("MTPC_BUILD_DIR", ROOT / "build"))


def llvm_version(build=None):
    """The LLVM major version benchmarks and tests use: $MTPC_LLVM_VERSION, else the one the
    MTPC in build (default $MTPC_BUILD_DIR or build/) was built with (MTPC_LLVM_VERSION in its
    CMakeCache.txt), else 19. mtpc-split reads and writes bitcode of that LLVM only, so clang,
    lld and the LLVM tools must be of that version too."""
    v = os.environ.get("MTPC_LLVM_VERSION")
    if v:
        return v
    try:
        text = (pathlib.Path(build or BUILD) / "CMakeCache.txt").read_text()
    except OSError:
        text = ""
    for line in text.splitlines():
        if line.startswith("MTPC_LLVM_VERSION:"):
            return line.split("=", 1)[1].strip()
    return "19"


LLVM_VERSION = llvm_version()
# The one place that says where the LLVM tools are ($MTPC_LLVM_BIN overrides).
LLVM_BIN = pathlib.Path(os.environ.get("MTPC_LLVM_BIN") or f"/usr/lib/llvm-{LLVM_VERSION}/bin")


def versioned_driver(name):
    """clang or clang++ as Debian names it on PATH (/usr/bin/clang-19), else from LLVM_BIN."""
    p = shutil.which(f"{name}-{LLVM_VERSION}")
    return p if p else str(LLVM_BIN / name)


class BenchError(RuntimeError):
    """A step of a benchmark failed; the message says which command and why."""


def llvm_tool(name):
    """Path of an LLVM tool (clang, ld.lld, llvm-split...) of LLVM_VERSION; BenchError if missing."""
    p = LLVM_BIN / name
    if p.exists():
        return str(p)
    alt = shutil.which(f"{name}-{LLVM_VERSION}")
    if alt:
        return alt
    raise BenchError(f"{name} not found in {LLVM_BIN} (run scripts/install-deps.sh)")


def mtpc_dir():
    """MTPC_DIR for a benchmark project: the package config of the MTPC build (BUILD/cmake:
    its tools and its LLVM version), else the source tree (MTPC.cmake finds <tree>/build)."""
    return BUILD / "cmake" if (BUILD / "cmake" / "MTPCConfig.cmake").exists() else ROOT


def mtpc_tool(name, build=None):
    """Path of a built MTPC tool (e.g. 'mtpc-split'), or None when it is not built yet."""
    build = pathlib.Path(build or BUILD)
    for sub in ("splitter", "ninja-gen", "cache", "."):
        p = build / sub / name
        if p.is_file() and os.access(p, os.X_OK):
            return str(p)
    return None


@dataclasses.dataclass
class Measurement:
    """One finished process: wall seconds, CPU seconds (user + system) of the process and
    of the children it waited for, exit code and its output (kept on disk if large)."""
    cmd: list
    wall: float
    user: float
    sys: float
    returncode: int
    stdout: str
    stderr: str

    @property
    def cpu(self):
        return self.user + self.sys


def run_measured(cmd, cwd=None, env=None, check=True, new_session=False):
    """Run cmd and measure it with os.wait4: CPU is exactly this child's (and its waited-for
    descendants'), so concurrent work of other processes on a shared machine does not leak
    in. Output goes through temporary files, so a chatty tool cannot block on a pipe.
    new_session: in a session of its own, without a controlling terminal (mtpc-link then
    writes no progress lines to /dev/tty)."""
    cmd = [str(c) for c in cmd]
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        try:
            p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=err,
                                 stdin=subprocess.DEVNULL, start_new_session=new_session)
        except OSError as e:
            raise BenchError(f"cannot run {cmd[0]}: {e}") from e
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)   # Popen must not wait again
        out.seek(0)
        err.seek(0)
        m = Measurement(cmd, wall, ru.ru_utime, ru.ru_stime, p.returncode, out.read(),
                        err.read())
    if check and m.returncode != 0:
        raise BenchError(f"command failed ({m.returncode}): {' '.join(cmd)}\n"
                         f"{m.stderr[-4000:]}")
    return m


def slot_compile_cmd(clang, flags, bc, obj):
    """A partition (or post-import module) compiled as MTPC's slots compile it: a ThinLTO
    backend whose import is done, so the post-link pipeline (docs/build-integration.md,
    "Slots")."""
    return [clang, *flags, "-c", "-x", "ir", bc, f"-fthinlto-index={bc}", "-mllvm",
            "-thinlto-assume-merged", "-o", obj]


def check_object(path, what):
    """A backend that fails to load an import may exit 0 with a 0-byte object
    (llvm issue 75441): treat an empty or missing output as failure."""
    p = pathlib.Path(path)
    if not p.is_file() or p.stat().st_size == 0:
        raise BenchError(f"{what}: {p} missing or empty")


def median(values):
    values = list(values)
    return statistics.median(values) if values else float("nan")


def ratio(a, b):
    return a / b if b else float("nan")


@dataclasses.dataclass
class PostImport:
    """Result of thin_post_import()."""
    module_obj: pathlib.Path       # the ThinLTO bitcode object of the chosen module
    index: pathlib.Path            # its .thinlto.bc index shard
    import_bc: pathlib.Path        # the post-import module
    backend_cmd: list              # the ThinLTO backend command for the module (unsplit)
    thinlink_wall: float


def thin_post_import(sources, workdir, opt="-O2", cflags=(), ldflags=(), module=0,
                     log=print):
    """Compile `sources` (C files or ThinLTO objects) with -flto=thin, run an index-only thin
    link, then run the ThinLTO backend of sources[module] once with -save-temps=obj to get
    its post-import module. Work already done in `workdir` is reused (by mtime)."""
    clang = llvm_tool("clang")
    workdir = pathlib.Path(workdir).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    objs = []
    for i, src in enumerate(sources):
        src = pathlib.Path(src).resolve()
        if src.suffix in (".o", ".bc"):
            objs.append(src)
            continue
        obj = workdir / f"{i}_{src.stem}.o"
        if not obj.exists() or obj.stat().st_mtime < src.stat().st_mtime:
            log(f"  compile {src.name} (-flto=thin)")
            run_measured([clang, opt, *cflags, "-flto=thin", "-c", src, "-o", obj])
        objs.append(obj)
    mod = objs[module]
    index = pathlib.Path(str(mod) + ".thinlto.bc")
    t0 = time.perf_counter()
    if not index.exists() or index.stat().st_mtime < max(o.stat().st_mtime for o in objs):
        log("  thin link (index only)")
        run_measured([clang, opt, "-flto=thin", "-fuse-ld=lld",
                      f"-Wl,--thinlto-index-only={workdir / 'index-files.txt'}",
                      "-Wl,--thinlto-emit-imports-files", *objs, "-o",
                      workdir / "program.unused", *ldflags])
    thinlink_wall = time.perf_counter() - t0
    if not index.exists():
        raise BenchError(f"thin link wrote no index shard {index}")
    backend_cmd = [clang, opt, *cflags, "-c", "-x", "ir", mod, f"-fthinlto-index={index}"]
    tmp = workdir / "save-temps"
    import_bc = workdir / (mod.stem + ".import.bc")
    if not import_bc.exists() or import_bc.stat().st_mtime < index.stat().st_mtime:
        log(f"  ThinLTO backend of {mod.name} with -save-temps=obj (post-import module)")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        run_measured(backend_cmd + ["-o", tmp / "backend.o", "-save-temps=obj"], cwd=tmp)
        found = sorted(tmp.glob("*.3.import.bc"))
        if not found:
            raise BenchError(f"-save-temps=obj left no *.3.import.bc in {tmp}")
        os.replace(found[0], import_bc)
        shutil.rmtree(tmp, ignore_errors=True)
    return PostImport(mod, index, import_bc, backend_cmd, thinlink_wall)


def fmt_s(x):
    return "n/a" if x != x else f"{x:.2f} s"


def fmt_r(x, goal=None, lower_is_better=True):
    if x != x:
        return "n/a"
    s = f"{x:.3f}"
    if goal is not None:
        ok = x <= goal if lower_is_better else x >= goal
        s += f" ({'meets' if ok else 'misses'} goal {'≤' if lower_is_better else '≥'} {goal})"
    return s


def eprint(*a):
    print(*a, file=sys.stderr, flush=True)
