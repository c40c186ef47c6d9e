"""mtpc-split itself under AddressSanitizer + UndefinedBehaviorSanitizer (the
build-asan tree scripts/test.sh makes): every hazard fixture split at N=4 with
threads, a repeated run (the up-to-date path), and a split with processes must
finish with no sanitizer report and no leak."""
import os

import pytest

import splitlib as sl
from conftest import run, thinned, tool

SAN_ENV = dict(os.environ,
               ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:exitcode=99",
               UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")


@pytest.mark.parametrize("fx", thinned(sl.all_fixtures()), ids=lambda f: f.name)
def test_split_sanitized(fx, tmp_path, asan_build_dir):
    split = tool("mtpc-split", asan_build_dir)
    for i, src in enumerate(fx.modules):
        bc = sl.to_bitcode(src, tmp_path / f"m{i}.bc", pic=fx.shared, cflags=fx.cflags)
        out = tmp_path / f"out{i}"
        # threads, the same again (up to date), then processes (--emit-with)
        for d, how in ((out, "threads"), (out, "threads"), (tmp_path / f"proc{i}", "processes")):
            r = run([split, bc, "-o", d, "--partitions", "4", "--stats", "--emit-with", how],
                    check=False, env=SAN_ENV)
            assert r.returncode == 0, r.stderr
            assert "Sanitizer" not in r.stderr and "runtime error" not in r.stderr, r.stderr


def test_thinlto_import_sanitized(tmp_path, asan_build_dir):
    """The in-process ThinLTO import (--thinlto-index), and the empty index of an archive
    member the link does not pull in (status 3), under the sanitizers too."""
    split = tool("mtpc-split", asan_build_dir)
    sl.thin_link_with_idle_member(tmp_path)
    for mod, status in (("main.o", 0), ("used.o", 0), ("idle.o", 3)):
        r = run([split, mod, "-o", f"out-{mod}", "--partitions", "2", "--thinlto-index",
                 f"{mod}.thinlto.bc", "--relocation-model", "pic"], check=False, env=SAN_ENV,
                cwd=tmp_path)
        assert r.returncode == status, r.stderr
        assert "Sanitizer" not in r.stderr and "runtime error" not in r.stderr, r.stderr


def test_join_sanitized(tmp_path, asan_build_dir):
    """--join (with its inliner: the shim's mtpc_join_inline) under the sanitizers: the
    pre-link partitions of a split joined with no sanitizer report and no leak."""
    import subprocess
    from test_split_join import inline_source
    split = tool("mtpc-split", asan_build_dir)
    src = tmp_path / "m.c"
    src.write_text(inline_source(6))
    clang = sl.llvm_tool("clang")
    front = tmp_path / "front.bc"
    subprocess.run([clang, "-O2", "-flto=thin", "-c", src, "-Xclang", "-disable-llvm-passes",
                    "-o", front], check=True)
    out = tmp_path / "parts"
    r = run([split, front, "-o", out, "--partitions", "3", "--pre-link", "--no-ipo",
             "--no-cache", "--copy-limit", "0"], check=False, env=SAN_ENV)
    assert r.returncode == 0, r.stderr
    objs = []
    for p in sorted(out.glob("p*.bc")):
        o = tmp_path / (p.stem + ".o")
        subprocess.run([clang, "-O2", "-flto=thin", "-c", "-x", "ir", p, "-o", o], check=True)
        objs.append(o)
    assert len(objs) >= 2
    r = run([split, "--join", front, "--plan", out / "plan.json", "-o", tmp_path / "j.o", *objs],
            check=False, env=SAN_ENV)
    assert r.returncode == 0, r.stderr
    assert "Sanitizer" not in r.stderr and "runtime error" not in r.stderr, r.stderr
