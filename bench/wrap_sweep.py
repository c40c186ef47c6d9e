#!/usr/bin/env python3
"""Real Debian source packages built through MTPC (every module split) and through plain
ThinLTO, their test suites and exports compared (docs/performance-history.md, "A project MTPC was not
written for" and "Eleven more Debian source packages, every module split": the by-hand check,
automated).

For each project (a wrapper bench/wrap/<project>/CMakeLists.txt, which add_subdirectory()s the
unmodified upstream CMake project and enables its targets through bench/wrap/wrap.cmake):
  1. the source: WORK/src/<source package>-<version>/, fetched with `apt-get source` when
     missing (bench/debsrc.sh: a deb-src entry is added if there is none; when the newest
     version cannot be downloaded, e.g. a security update missing from the mirror, the
     older versions `apt-cache showsrc` lists are tried, newest first);
  2. two fresh builds, WORK/<project>/<build type>/{off,on}/:
       cmake -G Ninja -S bench/wrap/<project> -DUSE_MTPC=OFF|ON -DCMAKE_BUILD_TYPE=<type>
             -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19
             -DMTPC_DIR=<mtpc build>/cmake -DCMAKE_MODULE_PATH=<this checkout>/cmake
             -DMTPC_{LINK,SPLIT,CACHE,DISTRIBUTE}_EXECUTABLE=<the tools of the mtpc build>
             -DMTPC_SPLIT_THRESHOLD=0 -DMTPC_MAX_PARTITIONS=4 (2 for jansson and snappy)
             -DMTPC_JOBS=<--jobs> -DMTPC_CACHE=<a fresh plan cache in the build dir>
             [-DMTPC_SPLIT_ARGS=<--split-args>, the MTPC build only]
             [-DMTPC_SPLIT_COST=0 with --split-compile, the MTPC build only: every
              compile split too, by mtpc-compile]
             [-DWRAP_LTO=OFF with --native, both builds: no LTO, the plain optimizing
              build; the MTPC build mtpc_enable(<target> NO_LTO) with MTPC_SPLIT_COST=0,
              every compile split into native partitions]
             -D<the wrapper's source variable>=<the source tree>
             (-DBUILD_SHARED_LIBS=ON for pugixml, tinyxml2, double-conversion, so that
             their exports are compared)
       ninja -j <--jobs> -l <--jobs> [zstd]    (configure.log, build.log in the build dir)
     (clang/lld of the MTPC build's LLVM version; the threshold 0 splits every module);
  3. the project's ctest in both builds (every top test directory under the build: most
     wrappers leave enable_testing() to the upstream project), per test passed / failed; a
     test that fails only in the MTPC build is run once more in both, and one that then
     passes is reported as flaky, not as a difference; some projects have an extra check
     (zstd: its tests are off, so compressed outputs at several levels are compared; pcre2's
     tests get srcdir=<source> to find their data; libuv's two ctest tests are whole suites,
     run with UV_RUN_AS_ROOT=1, whose TAP lines are compared subtest by subtest, a subtest
     failing only in the MTPC build being rerun with its suite in both builds);
  4. the dynamic exports of every shared library (lib*.so*) of both builds:
     `llvm-nm-19 -D --defined-only` (type, name and version, without addresses);
  5. the MTPC build's log: mtpc-link's one summary line per link (modules split,
     partitions), and every fallback: an `mtpc-*: warning:` / `error:` line, a module
     "unsplit (fallback)", a crash (stack dump) of a tool;
  6. with --build-type RelWithDebInfo (-g: the merge's debug-info fix-up runs), the debug
     info of every program and library of the MTPC build against the plain one's:
     `llvm-dwarfdump --verify`, no virtual line number (>= 2^30, common/virtual_lines.h)
     left in the line tables or in DW_AT_decl_line / DW_AT_call_line, no line past the end
     of its source file, the line tables' file MD5s the real ones (not the placeholders of
     --placeholder-checksums); the (file, line) pairs of both line tables are counted
     (informational: the whole-module passes may change a few).

A project "differs" when its MTPC build fails but the plain one builds, a test passes in
the plain build and fails (or is missing) in the MTPC build, the exports differ (with
--native, not when only weak definitions differ: which inline functions a library emits
out of line depends on inlining, which a plain compile's split changes; reported), an extra
check's outputs differ, or (RelWithDebInfo) its debug info fails one of the checks above
where the plain build's passes. Exit status: 0 no project differs; 1 some project differs (or, with
--strict, had a fallback); 2 a usage error, or a project that could not be compared (no
source, plain build failed) and none differs.

Usage:
  /usr/bin/python3 bench/wrap_sweep.py --mtpc-build /tmp/build-sweep --json out.json
  /usr/bin/python3 bench/wrap_sweep.py --projects tinyxml2,expat --build-type RelWithDebInfo
  /usr/bin/python3 bench/wrap_sweep.py --list

Needs: clang/lld/llvm-nm/llvm-dwarfdump of MTPC's LLVM, cmake, ninja, dpkg-dev (apt-get
source) and a network for the first fetch (scripts/install-deps.sh); nasm for
libjpeg-turbo's SIMD code (without it the project builds without SIMD); libgtest-dev and
libgmock-dev for fmtlib. Builds are removed and redone on
every run (--reuse-builds keeps finished ones); sources are kept.
"""
import argparse
import datetime
import functools
import hashlib
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import lib  # noqa: E402

ROOT = lib.ROOT
WRAP = ROOT / "bench" / "wrap"


# The projects, in the order a short sweep should take them (most value first). src: the
# Debian source package (its tree is <src>-<version>); var: the wrapper's source variable;
# sub: the folder of the tree that variable names; need: a file that tree must hold;
# partitions: MTPC_MAX_PARTITIONS (docs/performance.md); ctest_jobs: 1 for suites that do not
# take parallel runs (jsoncpp's two readerwriter tests write the same files in the source
# tree's test/data, so run together they fail at random; libuv's network tests); defs: more cache variables (shared libraries where the project builds
# static ones by default, so that their exports are compared, as in the by-hand check);
# targets: what to build (default all; zstd's wrapper enables libzstd_static and zstd only, and
# its other programs, e.g. zstd-frugal, cannot link the bitcode archive with the system ld);
# test_env: environment of its tests ({source}: the source tree; pcre2's RunTest and
# RunGrepTest find testdata/ through $srcdir, as under autotools; libuv's runner refuses root
# without UV_RUN_AS_ROOT); tap: its ctest tests are whole suites printing TAP ("ok N - name",
# "not ok N - name"), compared test by test too; extra: a check of its own (below);
# build_type: the CMAKE_BUILD_TYPE it is configured with, whatever --build-type says (rocksdb
# builds its tests only as Debug, so its defs give Debug the flags -O2).
SHARED = ["-DBUILD_SHARED_LIBS=ON"]
PROJECTS = {
    "pugixml": {"src": "pugixml", "var": "PUGIXML_SOURCE_DIR", "need": "CMakeLists.txt",
                "defs": SHARED},
    "expat": {"src": "expat", "var": "EXPAT_SOURCE_DIR", "sub": "expat",
              "need": "expat/CMakeLists.txt"},
    "tinyxml2": {"src": "tinyxml2", "var": "TX2_SOURCE_DIR", "need": "CMakeLists.txt",
                 "defs": SHARED},
    "double-conversion": {"src": "double-conversion", "var": "DC_SOURCE_DIR",
                          "need": "CMakeLists.txt", "defs": SHARED},
    "jansson": {"src": "jansson", "var": "SRC_DIR", "need": "CMakeLists.txt", "partitions": 2},
    # snappy adds -Werror for clang unless CMAKE_CXX_FLAGS already holds it; clang 22's new
    # -Wuninitialized-const-pointer then stops its snappy-test.cc, with or without MTPC
    "snappy": {"src": "snappy", "var": "SRC_DIR", "need": "CMakeLists.txt", "partitions": 2,
               "defs": ["-DCMAKE_CXX_FLAGS=-Werror -Wno-error"]},
    "brotli": {"src": "brotli", "var": "BROTLI_SOURCE_DIR", "need": "CMakeLists.txt"},
    "pcre2": {"src": "pcre2", "var": "PCRE2_SOURCE_DIR", "need": "CMakeLists.txt",
              "test_env": {"srcdir": "{source}"}},
    "zstd": {"src": "libzstd", "var": "ZSTD_SOURCE_DIR", "need": "build/cmake/CMakeLists.txt",
             "extra": "zstd_roundtrip", "targets": ["zstd"]},
    "jsoncpp": {"src": "libjsoncpp", "var": "JSONCPP_SOURCE_DIR", "need": "CMakeLists.txt",
                "ctest_jobs": 1},
    "libjpeg-turbo": {"src": "libjpeg-turbo", "var": "SRC_DIR", "need": "CMakeLists.txt"},
    "libuv1": {"src": "libuv1", "var": "SRC_DIR", "need": "CMakeLists.txt", "ctest_jobs": 1,
               "test_env": {"UV_RUN_AS_ROOT": "1"}, "tap": True},
    "fmtlib": {"src": "fmtlib", "var": "SRC_DIR", "need": "CMakeLists.txt"},
    # a real unity build: the library's 322 sources in one TU (bench/wrap/rocksdb/)
    "rocksdb": {"src": "rocksdb", "var": "SRC_DIR", "need": "CMakeLists.txt",
                "build_type": "Debug",
                "defs": ["-DCMAKE_CXX_FLAGS_DEBUG=-O2", "-DCMAKE_C_FLAGS_DEBUG=-O2",
                         "-DCMAKE_UNITY_BUILD=ON", "-DCMAKE_UNITY_BUILD_BATCH_SIZE=0"]},
}
ALIASES = {"fmt": "fmtlib", "libuv": "libuv1", "jpeg": "libjpeg-turbo",
           "libjpeg": "libjpeg-turbo", "dc": "double-conversion"}
BUILD_TYPES = ("Release", "RelWithDebInfo")

COMPILE_RE = re.compile(r"^mtpc-compile: [^:]+: (\d+) partitions?")
SUMMARY_RE = re.compile(r"^mtpc-link: (?P<out>[^:]+): (?P<mods>\d+) modules?, "
                        r"(?P<split>\d+) split(?: \((?P<list>.*?)\))?"
                        r"(?:, (?P<unused>\d+) unused)?(?:,|$)")
WARN_RE = re.compile(r"^mtpc-[a-z]+: (warning|error): ")
CRASH_RE = re.compile(r"PLEASE submit a bug report|Stack dump:|Segmentation fault|"
                      r"core dumped|Assertion .* failed")


class SweepError(RuntimeError):
    """A step could not run (missing tool, fetch failed); the message says which."""


def log(msg):
    print(msg, flush=True)


def run(cmd, cwd=None, timeout=None, out=None, env=None):
    """Run cmd; its output (stdout and stderr together) goes to the file `out` (appended)
    or is returned. Returns (exit code, output or ''); exit code 124 on timeout."""
    cmd = [str(c) for c in cmd]
    try:
        if out is not None:
            with open(out, "a") as f:
                f.write(f"$ {' '.join(cmd)}\n")
                f.flush()
                p = subprocess.run(cmd, cwd=cwd, stdout=f, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, timeout=timeout, env=env)
            return p.returncode, ""
        p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           stdin=subprocess.DEVNULL, timeout=timeout, text=True, env=env,
                           errors="replace")
        return p.returncode, p.stdout
    except subprocess.TimeoutExpired:
        if out is not None:
            with open(out, "a") as f:
                f.write(f"\n*** timed out after {timeout} s\n")
        return 124, ""
    except OSError as e:
        raise SweepError(f"cannot run {cmd[0]}: {e}") from e


class Toolchain:
    """clang, clang++, llvm-nm of the MTPC build's LLVM, and the MTPC tools of that build."""

    def __init__(self, build):
        self.build = build
        if not (build / "cmake" / "MTPCConfig.cmake").is_file():
            raise SweepError(f"{build} is not an MTPC build (no cmake/MTPCConfig.cmake; "
                             f"run scripts/build.sh {build})")
        self.version = lib.llvm_version(build)
        self.cc = self._which(f"clang-{self.version}", "clang")
        self.cxx = self._which(f"clang++-{self.version}", "clang++")
        self.nm = self._which(f"llvm-nm-{self.version}", "llvm-nm")
        self.dwarfdump = self._which(f"llvm-dwarfdump-{self.version}", "llvm-dwarfdump")
        self.tools = {}
        for var, name in (("MTPC_LINK_EXECUTABLE", "mtpc-link"),
                          ("MTPC_COMPILE_EXECUTABLE", "mtpc-compile"),
                          ("MTPC_SPLIT_EXECUTABLE", "mtpc-split"),
                          ("MTPC_CACHE_EXECUTABLE", "mtpc-cache"),
                          ("MTPC_DISTRIBUTE_EXECUTABLE", "mtpc-distribute")):
            p = lib.mtpc_tool(name, build)
            if p is None:
                raise SweepError(f"{name} not built in {build} (scripts/build.sh {build})")
            self.tools[var] = p
        # The binaries' contents: what a reused build (--reuse-builds) must have been made
        # with, and what the JSON records (the checkout's HEAD may be newer than the build).
        self.sha256 = {var: hashlib.sha256(pathlib.Path(p).read_bytes()).hexdigest()
                       for var, p in self.tools.items()}
        for t in ("cmake", "ninja", "ctest"):
            if not shutil.which(t):
                raise SweepError(f"{t} not found on PATH (scripts/install-deps.sh)")

    def _which(self, versioned, plain):
        p = shutil.which(versioned)
        if p:
            return p
        p = pathlib.Path(f"/usr/lib/llvm-{self.version}/bin/{plain}")
        if p.exists():
            return str(p)
        raise SweepError(f"{versioned} not found (scripts/install-deps.sh)")


# ---------------------------------------------------------------- sources

def find_tree(srcdir, pkg, need):
    """The newest srcdir/<pkg>-<version> tree holding `need`, or None."""
    trees = sorted(p for p in srcdir.glob(f"{pkg}-[0-9]*") if p.is_dir())
    trees = [t for t in trees if (t / need).is_file()]
    return trees[-1] if trees else None


def deb_versions(pkg):
    """The versions of source package pkg that apt knows, newest first."""
    rc, out = run(["apt-cache", "showsrc", "--only-source", pkg], timeout=120)
    if rc:
        return []
    vs, current = [], None
    for line in out.splitlines():
        if line.startswith("Package:"):
            current = line.split(":", 1)[1].strip()
        elif line.startswith("Version:") and current == pkg:
            v = line.split(":", 1)[1].strip()
            if v not in vs:
                vs.append(v)

    def cmp(a, b):
        if a == b:
            return 0
        return 1 if run(["dpkg", "--compare-versions", a, "gt", b])[0] == 0 else -1
    return sorted(vs, key=functools.cmp_to_key(cmp), reverse=True)


def fetch(project, srcdir, logfile):
    """The source tree of a project, fetched with apt-get source when missing."""
    return fetch_spec(project, PROJECTS[project], srcdir, logfile)


def fetch_spec(project, spec, srcdir, logfile):
    """fetch() of a project described by spec (src, need, sub: as in PROJECTS)."""
    pkg, need = spec["src"], spec["need"]
    tree = find_tree(srcdir, pkg, need)
    if tree is None:
        srcdir.mkdir(parents=True, exist_ok=True)
        log(f"  apt-get source {pkg} (into {srcdir})")
        # bench/debsrc.sh: the deb-src entry, then its fetch_source (apt-get source PKG).
        script = ('. "$1/bench/debsrc.sh"; ensure_deb_src wrap_sweep "$2"; '
                  'fetch_source wrap_sweep "$2" "$3" "$4"')
        rc, _ = run(["sh", "-c", script, "sh", ROOT, pkg, srcdir, need], timeout=900,
                    out=logfile)
        tree = find_tree(srcdir, pkg, need)
        if tree is None:
            # the newest version may be missing from the mirror (a security update): try
            # the older versions apt lists
            for v in deb_versions(pkg)[1:]:
                log(f"  apt-get source --only-source {pkg}={v}")
                run(["apt-get", "source", "-qq", "--only-source", f"{pkg}={v}"], cwd=srcdir,
                    timeout=900, out=logfile)
                tree = find_tree(srcdir, pkg, need)
                if tree is not None:
                    break
    if tree is None:
        raise SweepError(f"{project}: apt-get source {pkg} gave no tree with {need} "
                         f"(see {logfile})")
    return tree / spec["sub"] if spec.get("sub") else tree


# ---------------------------------------------------------------- build

def configure_and_build(project, mode, source, bdir, tc, args):
    """A fresh build of the wrapper; returns a dict with ok, times and the log path."""
    spec = PROJECTS[project]
    conf_log, build_log = bdir / "configure.log", bdir / "build.log"
    parts = args.partitions or spec.get("partitions", 4)
    cmd = ["cmake", "-G", "Ninja", "-S", WRAP / project, "-B", bdir,
           f"-DUSE_MTPC={mode}",
           f"-DCMAKE_BUILD_TYPE={spec.get('build_type', args.build_type)}",
           f"-DCMAKE_C_COMPILER={tc.cc}", f"-DCMAKE_CXX_COMPILER={tc.cxx}",
           f"-DMTPC_DIR={tc.build / 'cmake'}", f"-DCMAKE_MODULE_PATH={ROOT / 'cmake'}",
           *(f"-D{k}={v}" for k, v in tc.tools.items()),
           "-DMTPC_SPLIT_THRESHOLD=0", f"-DMTPC_MAX_PARTITIONS={parts}",
           f"-DMTPC_JOBS={args.jobs}", f"-DMTPC_CACHE={bdir / 'plans.sqlite'}",
           f"-D{spec['var']}={source}", *spec.get("defs", [])]
    if mode == "ON" and args.split_args:
        cmd.append(f"-DMTPC_SPLIT_ARGS={';'.join(args.split_args.split())}")
    if mode == "ON" and (args.split_compile or args.native):
        cmd.append("-DMTPC_SPLIT_COST=0")
    if args.native:
        cmd.append("-DWRAP_LTO=OFF")
    res = {"dir": str(bdir), "partitions": parts, "configure_log": str(conf_log),
           "build_log": str(build_log)}
    stamp = bdir / "build.cmd"
    # the tools' contents too: a rebuilt MTPC in the same folder must not reuse a build
    key = json.dumps([str(c) for c in cmd] + spec.get("targets", []) +
                     (sorted(tc.sha256.items()) if mode == "ON" else []))
    if args.reuse_builds and stamp.exists() and stamp.read_text() == key:
        res.update(ok=True, reused=True, seconds=0.0, configure_rc=0, build_rc=0)
        if mode == "ON":
            res["mtpc_link"] = cache_value(bdir, "MTPC_LINK_EXECUTABLE")
        return res
    if bdir.exists():
        shutil.rmtree(bdir)
    bdir.mkdir(parents=True)
    t0 = time.monotonic()
    rc, _ = run(cmd, timeout=args.timeout, out=conf_log)
    res["configure_rc"] = rc
    if rc == 0:
        rc, _ = run(["ninja", "-C", bdir, "-j", str(args.jobs), "-l", str(args.jobs),
                     *spec.get("targets", [])], timeout=args.timeout, out=build_log)
        res["build_rc"] = rc
    res["ok"] = rc == 0
    res["seconds"] = round(time.monotonic() - t0, 1)
    if res["ok"]:
        stamp.write_text(key)
    if not res["ok"]:
        res["error"] = tail(conf_log if res.get("build_rc") is None else build_log, 15)
    if mode == "ON" and res.get("configure_rc") == 0:
        res["mtpc_link"] = cache_value(bdir, "MTPC_LINK_EXECUTABLE")
    return res


def tail(path, n):
    try:
        return "\n".join(pathlib.Path(path).read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return ""


def cache_value(bdir, var):
    try:
        for line in (bdir / "CMakeCache.txt").read_text().splitlines():
            if line.startswith(var + ":"):
                return line.split("=", 1)[1]
    except OSError:
        pass
    return None


def scan_log(path):
    """mtpc-link's summary lines and every fallback / crash line of a build log."""
    links, modules, split, partitions, unused = 0, 0, 0, 0, 0
    compiles, compile_partitions = 0, 0
    fallbacks, crashes, summaries = [], [], []
    try:
        text = pathlib.Path(path).read_text(errors="replace")
    except OSError:
        text = ""
    for line in text.splitlines():
        cm = COMPILE_RE.match(line)
        if cm and int(cm.group(1)) > 1:
            compiles += 1
            compile_partitions += int(cm.group(1))
        m = SUMMARY_RE.match(line)
        if m:
            links += 1
            modules += int(m["mods"])
            split += int(m["split"])
            unused += int(m["unused"] or 0)
            summaries.append(line)
            for item in (m["list"] or "").split(", "):
                pm = re.search(r": (\d+) partitions?$", item)
                if pm:
                    partitions += int(pm.group(1))
                elif item.endswith("unsplit (fallback)"):
                    fallbacks.append(f"{m['out']}: {item}")
        if WARN_RE.match(line):
            fallbacks.append(line.strip())
        elif CRASH_RE.search(line):
            crashes.append(line.strip())
    return {"links": links, "modules": modules, "split": split, "partitions": partitions,
            "unused": unused, "compiles_split": compiles, "compile_partitions": compile_partitions,
            "fallbacks": fallbacks, "crashes": crashes, "summaries": summaries}


# ---------------------------------------------------------------- tests

def test_dirs(bdir):
    """The top test directories of a build: the build dir when it has a CTestTestfile.cmake,
    else the shallowest ones below it (a wrapper without enable_testing() of its own)."""
    files = sorted(bdir.rglob("CTestTestfile.cmake"), key=lambda p: (len(p.parts), p))
    tops = []
    for f in files:
        d = f.parent
        if not any(t == d or t in d.parents for t in tops):
            tops.append(d)
    return tops


def junit_results(path, outputs=None):
    """{test name: 'passed' | 'failed' | 'skipped'} from ctest's --output-junit file; each
    test's output into `outputs` when given."""
    res = {}
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return res
    for tc in root.iter("testcase"):
        name = tc.get("name")
        status = tc.get("status", "")
        if tc.find("failure") is not None or tc.find("error") is not None or status == "fail":
            res[name] = "failed"
        elif tc.find("skipped") is not None or status in ("disabled", "notrun"):
            res[name] = "skipped"
        else:
            res[name] = "passed"
        if outputs is not None:
            out = tc.find("system-out")
            outputs[name] = out.text or "" if out is not None else ""
    return res


TAP_RE = re.compile(r"^(not ok|ok) \d+ - (.+?)(?:\s+#\s*(.*))?$")


def tap_results(text):
    """{subtest: 'passed' | 'failed' | 'skipped'} of TAP output."""
    res = {}
    for line in text.splitlines():
        m = TAP_RE.match(line.strip())
        if m:
            skip = (m.group(3) or "").upper().startswith(("SKIP", "TODO"))
            res[m.group(2)] = "skipped" if skip else (
                "passed" if m.group(1) == "ok" else "failed")
    return res


ADDRESS_RE = re.compile(r"0x[0-9a-fA-F]{8,}")


def stable_keys(names):
    """{test name: key}: the name with every address in it written 0x… (googletest names a
    test with a pointer parameter by the pointer's value, e.g. RocksDB's
    MockEnv/EnvBasicTestWithParam.Misc/0x5567d4fff4f0, which moves from build to build and
    from run to run), numbered " #2", " #3"... in the order given when that makes two names
    one; other names are their own key."""
    keys, seen = {}, {}
    for n in names:
        k = ADDRESS_RE.sub("0x…", n)
        if k != n:
            seen[k] = seen.get(k, 0) + 1
            if seen[k] > 1:
                k += f" #{seen[k]}"
        keys[n] = k
    return keys


def ctest(bdir, tdirs, jobs, timeout, tag, regex=None, env=None, outputs=None):
    """Run ctest in each test directory; {key: (status, test dir, test name)}, key the test's
    stable_keys() name, prefixed with its directory ("dir: name") when that is not the build
    dir; each test's output into `outputs` (by key) when given."""
    res = {}
    for i, d in enumerate(tdirs):
        junit = bdir / f"ctest-{tag}-{i}.xml"
        junit.unlink(missing_ok=True)
        cmd = ["ctest", "--test-dir", d, "--output-junit", junit, "-j", str(jobs),
               "--timeout", str(timeout), "--output-on-failure",
               "--test-output-size-passed", "10000000", "--test-output-size-failed", "10000000"]
        if regex:
            cmd += ["-R", regex]
        run(cmd, timeout=timeout * 20 + 600, out=bdir / f"ctest-{tag}.log", env=env)
        prefix = "" if d == bdir else f"{d.relative_to(bdir)}: "
        outs = {}
        results = junit_results(junit, outs)
        keys = stable_keys(results)
        for name, st in results.items():
            res[prefix + keys[name]] = (st, d, name)
            if outputs is not None:
                outputs[prefix + keys[name]] = outs.get(name, "")
    return res


def ctest_regex(names):
    """A ctest -R regex matching exactly these test names (ctest's regex syntax)."""
    return "^(" + "|".join(re.sub(r"([][.*+?^$(){}|\\])", r"\\\1", n) for n in names) + ")$"


def rerun(bdir, found, keys, timeout, tag, env=None):
    """Run the tests `keys` (of `found`, ctest()'s result) once more, one at a time;
    {key: status}."""
    by_dir = {}
    for k in keys:
        if k in found:
            _, d, name = found[k]
            by_dir.setdefault(d, []).append((k, name))
    res = {}
    for d, items in by_dir.items():
        got = ctest(bdir, [d], 1, timeout, tag, ctest_regex([n for _, n in items]), env)
        by_name = {name: st for st, _, name in got.values()}
        for k, name in items:
            res[k] = by_name.get(name, "missing")
    return res


# ---------------------------------------------------------------- exports

ET_EXEC, ET_DYN = 2, 3


def elf_files(bdir, pattern, types, skip=()):
    """{relative path: path} of the regular files under bdir matching pattern that are ELF
    files of one of the types (e_type), outside MTPC's inner builds (*.mtpc) and the
    directories named in skip."""
    out = {}
    for p in sorted(bdir.rglob(pattern)):
        rel = p.relative_to(bdir)
        if (p.is_symlink() or not p.is_file() or any(part in skip for part in rel.parts)
                or any(part.endswith(".mtpc") for part in rel.parts)):
            continue
        try:
            with open(p, "rb") as f:
                head = f.read(18)
        except OSError:
            continue
        if head[:4] == b"\x7fELF" and int.from_bytes(head[16:18], "little") in types:
            out[str(rel)] = p
    return out


def shared_libraries(bdir):
    """{relative path: path} of the ELF shared libraries (lib*.so*, not symlinks)."""
    return elf_files(bdir, "lib*.so*", (ET_DYN,))


def exports(nm, path):
    """Sorted 'T name@@VERSION' lines of a library's defined dynamic symbols."""
    rc, out = run([nm, "-D", "--defined-only", path], timeout=300)
    if rc:
        raise SweepError(f"{nm} -D failed on {path}: {out[-500:]}")
    syms = []
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 3:
            syms.append(f"{f[1]} {' '.join(f[2:])}")
        elif len(f) == 2:
            syms.append(" ".join(f))
    return sorted(syms)


def compare_exports(nm, off_dir, on_dir):
    off, on = shared_libraries(off_dir), shared_libraries(on_dir)
    libs = []
    for rel in sorted(set(off) | set(on)):
        r = {"library": rel}
        if rel not in on or rel not in off:
            r["identical"] = False
            r["missing_in"] = "on" if rel not in on else "off"
        else:
            a, b = exports(nm, off[rel]), exports(nm, on[rel])
            r["count"] = len(a)
            r["identical"] = a == b
            if a != b:
                only = (set(a) - set(b)) | (set(b) - set(a))
                r["only_off"] = sorted(set(a) - set(b))[:50]
                r["only_on"] = sorted(set(b) - set(a))[:50]
                # weak definitions only (C++ inline functions and template instances a
                # library happens to emit out of line): which ones depends on inlining
                r["weak_only"] = all(x.startswith("W ") for x in only)
        libs.append(r)
    return libs


# ---------------------------------------------------------------- debug info

VIRTUAL_LINE_BASE = 1 << 30        # common/virtual_lines.h
ROW_RE = re.compile(r"^0x[0-9a-f]+\s+(\d+)\s+\d+\s+(\d+)\s")
ATTR_LINE_RE = re.compile(r"(DW_AT_(?:decl|call)_line)\s+\((\d+)\)")


def linked_elfs(bdir):
    """{relative path: path} of the executables and shared libraries of a build (ELF type
    EXEC or DYN; not the objects of MTPC's inner builds)."""
    return elf_files(bdir, "*", (ET_EXEC, ET_DYN), skip=("CMakeFiles",))


def line_tables(dwarfdump, path):
    """{(file, line)} of an ELF file's line tables, and the file entries whose MD5 differs
    from the file on disk [(file, md5 in DWARF, md5 of the file)]."""
    rc, text = run([dwarfdump, "--debug-line", path], timeout=600)
    rows, bad_md5 = set(), []
    dirs, files, cur = {}, {}, None
    md5_cache = {}
    for line in text.splitlines():
        m = re.match(r'include_directories\[\s*(\d+)\] = "(.*)"', line)
        if m:
            if m.group(1) == "0":
                dirs, files = {}, {}
            dirs[int(m.group(1))] = m.group(2)
            continue
        m = re.match(r"file_names\[\s*(\d+)\]:", line)
        if m:
            cur = int(m.group(1))
            files[cur] = {"name": "", "dir": 0, "md5": None}
            continue
        m = re.match(r'\s+(name|dir_index|md5_checksum): "?([^"]*)"?$', line)
        if m and cur is not None:
            k = {"name": "name", "dir_index": "dir", "md5_checksum": "md5"}[m.group(1)]
            files[cur][k] = int(m.group(2)) if k == "dir" else m.group(2)
            continue
        m = ROW_RE.match(line)
        if m:
            ln, fi = int(m.group(1)), int(m.group(2))
            f = files.get(fi)
            if f is None:
                rows.add(("?", ln))
                continue
            name = f["name"]
            full = name if name.startswith("/") else os.path.join(dirs.get(f["dir"], ""), name)
            full = os.path.normpath(full)
            rows.add((full, ln))
            if f["md5"] and full not in md5_cache:
                try:
                    md5_cache[full] = hashlib.md5(pathlib.Path(full).read_bytes()).hexdigest()
                except OSError:
                    md5_cache[full] = None
                if md5_cache[full] and md5_cache[full] != f["md5"]:
                    bad_md5.append((full, f["md5"], md5_cache[full]))
    return rows, bad_md5


def file_lines(path, cache={}):
    if path not in cache:
        try:
            cache[path] = pathlib.Path(path).read_bytes().count(b"\n") + 1
        except OSError:
            cache[path] = None
    return cache[path]


HEX_RE = re.compile(r"0x[0-9a-fA-F]+")


def verify_errors_only_on(off, on):
    """The error lines of `llvm-dwarfdump --verify` on the MTPC build (on) that the plain
    build's (off) lack, offsets and addresses left out, sorted. Both may fail (GNU ld's
    output of a non-LTO program can): then only the kinds of error MTPC adds count."""
    def kinds(text):
        return {HEX_RE.sub("0x_", ln.strip()) for ln in text.splitlines() if ln.strip()}
    return sorted(kinds(on) - kinds(off))


def dwarf_check(tc, off_dir, on_dir):
    """Debug info of each program and library of the MTPC build against the plain one:
    llvm-dwarfdump --verify, no virtual line (>= 2^30) left in line tables nor in
    DW_AT_decl_line / DW_AT_call_line, no line past the end of its file, the file MD5s of the
    line tables the real ones (not mtpc-split's placeholders), and the (file, line) pairs of
    the line tables (informational: whole-module passes may change a few)."""
    off, on = linked_elfs(off_dir), linked_elfs(on_dir)
    res = []
    for rel in sorted(set(off) & set(on)):
        r = {"file": rel, "problems": []}
        errs = {}
        for mode, path in (("OFF", off[rel]), ("ON", on[rel])):
            rc, text = run([tc.dwarfdump, "--verify", path], timeout=900)
            errs[mode] = "" if rc == 0 else "\n".join(
                ln for ln in text.splitlines() if "error" in ln.lower())[:2000]
        r["verify"] = {m: ("ok" if not e else e) for m, e in errs.items()}
        only_on = verify_errors_only_on(errs["OFF"], errs["ON"])
        if only_on:
            r["problems"].append(f"llvm-dwarfdump --verify fails only in the MTPC build: "
                                 f"{' | '.join(only_on)[:500]}")
        rows_off, md5_off = line_tables(tc.dwarfdump, off[rel])
        rows_on, md5_on = line_tables(tc.dwarfdump, on[rel])
        norm_on = {(f.replace(str(on_dir), "<build>"), ln) for f, ln in rows_on}
        norm_off = {(f.replace(str(off_dir), "<build>"), ln) for f, ln in rows_off}
        r["line_rows"] = {"OFF": len(norm_off), "ON": len(norm_on),
                          "only_off": len(norm_off - norm_on),
                          "only_on": len(norm_on - norm_off)}
        r["only_on_sample"] = sorted(norm_on - norm_off)[:10]
        virt = sorted(x for x in rows_on if x[1] >= VIRTUAL_LINE_BASE)
        if virt:
            r["problems"].append(f"{len(virt)} virtual line(s) left in the line table, "
                                 f"e.g. {virt[:3]}")
        past = sorted((f, ln) for f, ln in rows_on - rows_off
                      if ln < VIRTUAL_LINE_BASE and file_lines(f) and ln > file_lines(f))
        if past:
            r["problems"].append(f"{len(past)} line(s) past the end of their file, "
                                 f"e.g. {past[:3]}")
        if md5_on and not md5_off:
            r["problems"].append(f"{len(md5_on)} file entries whose MD5 is not the file's, "
                                 f"e.g. {md5_on[:2]}")
        rc, text = run([tc.dwarfdump, "--debug-info", on[rel]], timeout=900)
        big = [m.group(0) for m in ATTR_LINE_RE.finditer(text)
               if int(m.group(2)) >= VIRTUAL_LINE_BASE]
        if big:
            r["problems"].append(f"{len(big)} DW_AT_decl_line/call_line with a virtual "
                                 f"line, e.g. {big[:3]}")
        res.append(r)
    return res


# ---------------------------------------------------------------- extra checks

def zstd_roundtrip(bdir, work):
    """zstd's own tests are off in its wrapper: compress an input (the concatenated sources of
    zstd's lib/) at several levels, decompress it again; {check: sha256 of the output or
    'failed: ...'}. The two builds' outputs must be byte-identical."""
    exe = bdir / "zstd" / "programs" / "zstd"
    inp = work / "zstd-input.bin"
    if not inp.exists():
        src = pathlib.Path(cache_value(bdir, "ZSTD_SOURCE_DIR") or "") / "lib"
        data = b"".join(p.read_bytes() for p in sorted(src.rglob("*.[ch]")))
        inp.write_bytes(data)
    res = {}
    for level in ("-1", "-3", "-9", "-19", "--ultra -22 --long=27"):
        out = bdir / "zstd-out.zst"
        back = bdir / "zstd-out.bin"
        name = f"zstd {level}"
        rc, msg = run([exe, "-q", "-f", *level.split(), inp, "-o", out], timeout=600)
        if rc:
            res[name] = f"failed: compress exited {rc}: {msg[-200:]}"
            continue
        rc, msg = run([exe, "-q", "-f", "-d", "--long=27", out, "-o", back], timeout=600)
        if rc or back.read_bytes() != inp.read_bytes():
            res[name] = f"failed: round trip ({rc}) {msg[-200:]}"
            continue
        res[name] = hashlib.sha256(out.read_bytes()).hexdigest()
    return res


EXTRA = {"zstd_roundtrip": zstd_roundtrip}


def tap_all(outputs):
    """{(ctest test key, subtest): status} of every test's TAP output."""
    return {(k, n): st for k, text in outputs.items() for n, st in tap_results(text).items()}


def compare_tap(r, found, outputs, on_dir, off_dir, timeout, env):
    """The subtests of TAP suites, compared like tests: one passing in the plain build and
    failing in the MTPC build is a difference if it fails again when its suite reruns."""
    sub = {mode: tap_all(outputs[mode]) for mode in ("OFF", "ON")}
    r["subtests"] = {mode: {s: sum(1 for v in t.values() if v == s)
                            for s in ("passed", "failed", "skipped")}
                     for mode, t in sub.items()}
    bad = sorted(k for k, st in sub["OFF"].items()
                 if st == "passed" and sub["ON"].get(k) != "passed")
    if bad:
        suites = sorted({k for k, _ in bad})
        log(f"  {len(bad)} subtest(s) fail only in the MTPC build: rerunning "
            f"{', '.join(suites)} once in both builds")
        again = {}
        for mode, bdir in (("ON", on_dir), ("OFF", off_dir)):
            outs = {}
            for suite in suites:
                if suite not in found[mode]:
                    continue
                _, d, name = found[mode][suite]
                o = {}
                ctest(bdir, [d], 1, timeout, "rerun-tap", ctest_regex([name]), env, o)
                outs[suite] = next(iter(o.values()), "")
            again[mode] = tap_all(outs)
        for k in bad:
            st_on, st_off = again["ON"].get(k), again["OFF"].get(k)
            if st_on == "passed":
                r.setdefault("flaky", []).append(f"{k[0]}: {k[1]}")
            elif st_off != "passed":
                r.setdefault("flaky", []).append(f"{k[0]}: {k[1]} (fails in the plain build "
                                                 "on rerun too)")
            else:
                r["differs"] = True
                r["problems"].append(f"subtest {k[0]}: {k[1]}: passes in plain ThinLTO, "
                                     f"{sub['ON'].get(k, 'missing')} in the MTPC build "
                                     f"(and again on rerun)")
    r["subtests_failed_both"] = sorted(f"{k[0]}: {k[1]}" for k, st in sub["OFF"].items()
                                       if st == "failed" and sub["ON"].get(k) == "failed")


# ---------------------------------------------------------------- one project

def sweep_project(project, tc, args, work):
    spec = PROJECTS[project]
    build_type = spec.get("build_type", args.build_type)
    pdir = work / project / args.build_type
    pdir.mkdir(parents=True, exist_ok=True)
    r = {"project": project, "build_type": build_type, "differs": False,
         "problems": [], "error": None}
    try:
        source = fetch(project, work / "src", pdir / "fetch.log")
    except SweepError as e:
        r["error"] = str(e)
        return r
    r["source"] = str(source)
    builds = {}
    for mode in ("OFF", "ON"):
        log(f"  {project} {build_type} USE_MTPC={mode}: configure and build")
        b = configure_and_build(project, mode, source, pdir / mode.lower(), tc, args)
        builds[mode] = b
        log(f"    {'reused' if b.get('reused') else 'built' if b['ok'] else 'FAILED'}"
            f" in {b['seconds']} s")
    r["builds"] = builds
    on, off = builds["ON"], builds["OFF"]
    r["log"] = scan_log(on["build_log"])
    if on.get("mtpc_link") and on["mtpc_link"] != tc.tools["MTPC_LINK_EXECUTABLE"]:
        r["problems"].append(f"MTPC build used {on['mtpc_link']}, not "
                             f"{tc.tools['MTPC_LINK_EXECUTABLE']}")
    if not off["ok"]:
        r["error"] = f"the plain ThinLTO build failed ({off['build_log']})"
        if not on["ok"]:
            return r
    if not on["ok"]:
        r["differs"] = True
        r["problems"].append(f"the MTPC build failed ({on['build_log']}):\n{on['error']}")
        return r
    if r["log"]["links"] == 0 and not args.native:  # (--native: the links are the project's)
        r["problems"].append("no mtpc-link summary line in the MTPC build's log")
    if (args.split_compile or args.native) and r["log"]["compiles_split"] == 0:
        r["problems"].append("mtpc-compile split no compile")
    for m in r["log"]["crashes"]:
        r["problems"].append(f"crash in the MTPC build: {m}")

    # tests
    jobs = spec.get("ctest_jobs", args.jobs)
    env = dict(os.environ)
    env.update({k: v.replace("{source}", str(source))
                for k, v in spec.get("test_env", {}).items()})
    found, tests, outputs = {}, {}, {"OFF": {}, "ON": {}}
    for mode, b in builds.items():
        bdir = pathlib.Path(b["dir"])
        tdirs = test_dirs(bdir)
        b["test_dirs"] = [str(d) for d in tdirs]
        log(f"  {project} USE_MTPC={mode}: ctest ({len(tdirs)} test folder(s))")
        found[mode] = ctest(bdir, tdirs, jobs, args.test_timeout, "all", env=env,
                            outputs=outputs[mode])
        tests[mode] = {k: v[0] for k, v in found[mode].items()}
    r["tests"] = {mode: {s: sum(1 for v in t.values() if v == s)
                         for s in ("passed", "failed", "skipped")}
                  for mode, t in tests.items()}
    bad = sorted(k for k, st in tests["OFF"].items()
                 if st == "passed" and tests["ON"].get(k) != "passed")
    r["flaky"] = []
    if bad:
        log(f"  {len(bad)} test(s) fail only in the MTPC build: rerunning them once")
        again_on = rerun(pathlib.Path(on["dir"]), found["ON"], bad, args.test_timeout, "rerun",
                         env)
        again_off = rerun(pathlib.Path(off["dir"]), found["OFF"], bad, args.test_timeout,
                          "rerun", env)
        for k in bad:
            if k not in tests["ON"]:
                r["differs"] = True
                r["problems"].append(f"test {k}: passes in plain ThinLTO, missing in the "
                                     "MTPC build")
            elif again_on.get(k) == "passed":
                r["flaky"].append(k)
            elif again_off.get(k) != "passed":
                r["flaky"].append(k + " (fails in the plain build on rerun too)")
            else:
                r["differs"] = True
                r["problems"].append(f"test {k}: passes in plain ThinLTO, {tests['ON'][k]} "
                                     "in the MTPC build (and again on rerun)")
    r["failed_both"] = sorted(k for k, st in tests["OFF"].items()
                              if st == "failed" and tests["ON"].get(k) == "failed")
    r["test_results"] = tests
    if spec.get("tap"):
        compare_tap(r, found, outputs, pathlib.Path(on["dir"]), pathlib.Path(off["dir"]),
                    args.test_timeout, env)

    # exports
    r["exports"] = compare_exports(tc.nm, pathlib.Path(off["dir"]), pathlib.Path(on["dir"]))
    for e in r["exports"]:
        if not e["identical"] and args.native and e.get("weak_only"):
            # A plain compile's split inlines differently from the plain compile, so the
            # weak inline functions a library emits (and exports) can differ, as between
            # -O levels (docs/build-integration.md, "Plain compiles"): reported, not a
            # difference. With ThinLTO both builds share the thin link's decisions.
            r.setdefault("notes", []).append(
                f"weak inline-function exports of {e['library']} differ (plain mode): only "
                f"plain {len(set(e['only_off']))}, only MTPC {len(set(e['only_on']))}")
        elif not e["identical"]:
            r["differs"] = True
            r["problems"].append(f"exports of {e['library']} differ: "
                                 + (f"missing in the {e['missing_in'].upper()} build"
                                    if "missing_in" in e else
                                    f"only plain: {e['only_off'][:5]}, only MTPC: "
                                    f"{e['only_on'][:5]}"))

    # debug info
    if build_type == "RelWithDebInfo":
        log(f"  {project}: debug info of {len(linked_elfs(pathlib.Path(on['dir'])))} "
            "programs and libraries")
        r["dwarf"] = dwarf_check(tc, pathlib.Path(off["dir"]), pathlib.Path(on["dir"]))
        for d in r["dwarf"]:
            for prob in d["problems"]:
                r["differs"] = True
                r["problems"].append(f"debug info of {d['file']}: {prob}")

    # extra check
    if spec.get("extra"):
        fn = EXTRA[spec["extra"]]
        ex = {mode: fn(pathlib.Path(b["dir"]), pdir) for mode, b in builds.items()}
        r["extra"] = {"check": spec["extra"], "results": ex,
                      "identical": ex["ON"] == ex["OFF"]}
        for name, v in ex["OFF"].items():
            w = ex["ON"].get(name)
            if w != v:
                r["differs"] = True
                r["problems"].append(f"{spec['extra']} {name}: plain {v[:16]}, MTPC "
                                     f"{(w or 'missing')[:80]}")
    return r


# ---------------------------------------------------------------- report

def exports_cell(r):
    ex = r.get("exports")
    if ex is None:
        return "n/a"
    if not ex:
        return "no shared library"
    same = all(e["identical"] for e in ex)
    weak = not same and all(e["identical"] or e.get("weak_only") for e in ex)
    counts = ", ".join(str(e.get("count", "?")) for e in ex)
    what = "identical" if same else "weak only" if weak else "DIFFER"
    return f"{what} ({len(ex)} lib{'s' if len(ex) > 1 else ''}: {counts})"


def print_table(results):
    print("\nmodules: split / linked (archive members left unused by the link) "
          "[partitions]; tests: ctest's, passed/failed")
    print("| project | build type | links | modules | tests OFF | tests ON "
          "| exports | fallbacks | verdict |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in results:
        lg = r.get("log") or {}
        t = r.get("tests") or {}

        def cell(mode):
            s = t.get(mode)
            sub = (r.get("subtests") or {}).get(mode)
            c = f"{s['passed']}/{s['failed']}" if s else "n/a"
            return c + (f" (TAP {sub['passed']}/{sub['failed']})" if sub else "")
        extra = ""
        if r.get("extra"):
            extra = f"; {r['extra']['check']} {'identical' if r['extra']['identical'] else 'DIFFER'}"
        nfb = len(lg.get("fallbacks", [])) + len(lg.get("crashes", []))
        verdict = ("DIFFERS" if r["differs"] else "error" if r.get("error") else "same")
        print(f"| {r['project']} | {r['build_type']} | {lg.get('links', 'n/a')} | "
              f"{lg.get('split', 'n/a')}/{lg.get('modules', 'n/a')} "
              f"{'(' + str(lg['unused']) + ' unused) ' if lg.get('unused') else ''}"
              f"[{lg.get('partitions', 'n/a')}]"
              f"{'; compiles split ' + str(lg['compiles_split']) + ' [' + str(lg['compile_partitions']) + ']' if lg.get('compiles_split') else ''}"
              f" | {cell('OFF')} | {cell('ON')} | "
              f"{exports_cell(r)}{extra} | {nfb} | {verdict} |")
    for r in results:
        lg = r.get("log") or {}
        notes = []
        if r.get("error"):
            notes.append(f"error: {r['error']}")
        notes += r.get("problems", [])
        notes += r.get("notes", [])
        notes += [f"fallback: {f}" for f in lg.get("fallbacks", [])]
        notes += [f"flaky (failed once in the MTPC build, passed on rerun): {f}"
                  for f in r.get("flaky", [])]
        if r.get("failed_both"):
            notes.append(f"failing in both builds: {', '.join(r['failed_both'][:10])}")
        if r.get("subtests_failed_both"):
            notes.append(f"subtests failing in both builds: "
                         f"{', '.join(r['subtests_failed_both'][:20])}")
        if notes:
            print(f"\n{r['project']} ({r['build_type']}):")
            for n in notes:
                print("  " + n.replace("\n", "\n    "))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--projects", default="",
                    help="comma list of bench/wrap projects (default: all, in the order of "
                         "--list)")
    ap.add_argument("--build-type", default="Release", choices=BUILD_TYPES,
                    help="CMAKE_BUILD_TYPE (RelWithDebInfo: -g, so the merge's debug-info "
                         "fix-up runs); default Release")
    ap.add_argument("--mtpc-build", default=str(ROOT / "build"),
                    help="MTPC build tree whose tools are used (default: build/ of this "
                         "checkout)")
    ap.add_argument("--work", default=str(ROOT / "bench" / "out" / "wrap_sweep"),
                    help="sources (WORK/src) and builds (default bench/out/wrap_sweep)")
    ap.add_argument("--jobs", type=int, default=2,
                    help="ninja -j and -l, MTPC_JOBS, ctest -j (default 2)")
    ap.add_argument("--partitions", type=int, default=0,
                    help="MTPC_MAX_PARTITIONS for every project (default: 4, 2 for jansson "
                         "and snappy)")
    ap.add_argument("--split-args", default="",
                    help="more mtpc-split options for the MTPC build (MTPC_SPLIT_ARGS; "
                         "words split at spaces), e.g. '--emit-with processes' to build "
                         "the partitions in processes below 4 jobs too")
    ap.add_argument("--native", action="store_true",
                    help="plain optimizing builds, no LTO in either: the MTPC build is "
                         "mtpc_enable(<target> NO_LTO) with every compile split "
                         "(MTPC_SPLIT_COST=0; partitions optimized and compiled, merged "
                         "with ld -r), against the project's own build")
    ap.add_argument("--split-compile", action="store_true",
                    help="split every compile of the MTPC build too (MTPC_SPLIT_COST=0: "
                         "mtpc-compile runs each ThinLTO compile's pre-link pipeline in "
                         "partitions); the table counts the compiles split [partitions]")
    ap.add_argument("--timeout", type=int, default=3600,
                    help="seconds for each configure and each build (default 3600)")
    ap.add_argument("--test-timeout", type=int, default=600,
                    help="ctest --timeout per test, seconds (default 600)")
    ap.add_argument("--reuse-builds", action="store_true",
                    help="keep a build that finished with the same configure command and "
                         "targets in an earlier run (default: every build is redone)")
    ap.add_argument("--strict", action="store_true",
                    help="a fallback (mtpc warning, unsplit module, crash) counts as a "
                         "difference")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--list", action="store_true", help="list the projects and exit")
    args = ap.parse_args(argv)

    wrappers = sorted(p.name for p in WRAP.iterdir() if (p / "CMakeLists.txt").is_file())
    known = [p for p in PROJECTS if p in wrappers]
    if args.list:
        for p in known:
            s = PROJECTS[p]
            print(f"{p:18} source package {s['src']}, -D{s['var']}"
                  f"{', ' + str(s['partitions']) + ' partitions' if 'partitions' in s else ''}")
        for p in wrappers:
            if p not in PROJECTS:
                print(f"{p:18} (wrapper without a recipe in {pathlib.Path(__file__).name})")
        return 0
    if args.jobs < 1:
        ap.error("--jobs must be at least 1")
    if args.projects:
        projects = [ALIASES.get(p.strip(), p.strip()) for p in args.projects.split(",")
                    if p.strip()]
    else:
        projects = known
    bad = [p for p in projects if p not in PROJECTS or p not in wrappers]
    if bad:
        ap.error(f"unknown project(s) {', '.join(bad)} (known: {', '.join(known)})")

    work = pathlib.Path(args.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    try:
        tc = Toolchain(pathlib.Path(args.mtpc_build).resolve())
    except SweepError as e:
        print(f"wrap_sweep: {e}", file=sys.stderr)
        return 2
    rc_git, head = run(["git", "-C", ROOT, "rev-parse", "HEAD"])
    results = []
    # the checkout's commit when the sweep started, which the build may predate: the
    # tools' SHA-256 say which binaries ran
    meta = {"date": datetime.datetime.now().isoformat(timespec="seconds"),
            "mtpc_build": str(tc.build), "checkout_commit": head.strip() if rc_git == 0 else None,
            "tools": {v: {"path": p, "sha256": tc.sha256[v]} for v, p in tc.tools.items()},
            "llvm_version": tc.version, "cc": tc.cc, "cxx": tc.cxx,
            "build_type": args.build_type, "jobs": args.jobs, "split_args": args.split_args,
            "split_compile": args.split_compile, "native": args.native,
            "results": results}

    def dump():
        if args.json:
            pathlib.Path(args.json).write_text(json.dumps(meta, indent=1) + "\n")

    for p in projects:
        log(f"== {p} ({PROJECTS[p].get('build_type', args.build_type)})")
        t0 = time.monotonic()
        try:
            r = sweep_project(p, tc, args, work)
        except SweepError as e:
            r = {"project": p, "build_type": args.build_type, "differs": False,
                 "problems": [], "error": str(e)}
        if args.strict and r.get("log") and (r["log"]["fallbacks"] or r["log"]["crashes"]):
            r["differs"] = True
        r["seconds"] = round(time.monotonic() - t0, 1)
        results.append(r)
        lg = r.get("log") or {}
        log(f"   {p}: {'DIFFERS' if r['differs'] else 'error' if r.get('error') else 'same'}"
            f", {lg.get('split', 0)} modules split, "
            f"{len(lg.get('fallbacks', []))} fallbacks, {r['seconds']} s")
        dump()
    print_table(results)
    dump()
    if args.json:
        print(f"\nwrote {args.json}")
    if any(r["differs"] for r in results):
        return 1
    return 2 if any(r.get("error") for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
