"""mtpc-split on bad input and unusable output directories.

Contract (docs/architecture.md): non-zero exit with a one-line error naming the file; no
p*.bc / plan.json / localize.txt left behind looking valid; an OUTDIR holding a valid earlier
split is left exactly as it was (never half-overwritten).
"""
import os
import pathlib
import shutil
import subprocess

import pytest

import splitlib as sl
from conftest import llvm_tool, run

SRC = """
static int helper(int x) { return x * 3 + 1; }
int f(int x) { return helper(x) + 2; }
int g(int x) { return helper(x) - f(x); }
int h(int x) { return g(x) * f(x); }
"""


@pytest.fixture(scope="module")
def good_bc(tmp_path_factory):
    d = tmp_path_factory.mktemp("errgood")
    (d / "good.c").write_text(SRC)
    return sl.to_bitcode(d / "good.c", d / "good.bc")


def epoch_broken(good, out):
    """good bitcode with one bit of the IDENTIFICATION block's epoch flipped: what a file from
    an incompatible LLVM looks like ("Incompatible epoch"). Found by search so it does not
    depend on the exact layout."""
    data = good.read_bytes()
    for bit in range(32, 8 * 96):
        d = bytearray(data)
        d[bit // 8] ^= 1 << (bit % 8)
        out.write_bytes(bytes(d))
        r = run([llvm_tool("llvm-dis"), out, "-o", os.devnull], check=False)
        if "epoch" in r.stderr.lower():
            return out
    pytest.fail("could not make an incompatible-epoch bitcode file")


def make_bad(kind, good, d):
    p = d / f"bad-{kind}.bc"
    if kind == "missing":
        return d / "no-such-input.bc"
    if kind == "not-bitcode":
        p.write_text("int main(void) { return 0; }\n")
    elif kind == "empty":
        p.write_bytes(b"")
    elif kind == "truncated":
        p.write_bytes(good.read_bytes()[: len(good.read_bytes()) // 2])
    elif kind == "garbage-after-magic":
        p.write_bytes(b"BC\xc0\xde" + bytes(range(7, 250)) * 4)
    elif kind == "bad-wrapper":  # bitcode wrapper header pointing past the end of the file
        import struct
        body = good.read_bytes()
        p.write_bytes(struct.pack("<5I", 0x0B17C0DE, 0, 20, len(body) + 4096, 7) + body)
    elif kind == "incompatible-epoch":
        epoch_broken(good, p)
    elif kind == "directory":
        p.mkdir()
    return p


BAD_KINDS = ["missing", "not-bitcode", "empty", "truncated", "garbage-after-magic",
             "bad-wrapper", "incompatible-epoch", "directory"]


def outputs(outdir):
    outdir = pathlib.Path(outdir)
    if not outdir.exists():
        return []
    return sorted(p.name for p in outdir.iterdir())


def assert_clean_failure(r, name):
    assert r.returncode != 0, f"exit 0 on bad input {name}:\n{r.stdout}{r.stderr}"
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, f"expected a one-line error, got:\n{r.stderr}"
    assert name in lines[0], f"error does not name {name}: {lines[0]}"


@pytest.mark.parametrize("kind", BAD_KINDS)
def test_bad_input_fresh_outdir(kind, good_bc, tmp_path):
    bad = make_bad(kind, good_bc, tmp_path)
    out = tmp_path / "out"
    r = sl.split(bad, out, 4, check=False)
    assert_clean_failure(r, bad.name)
    assert outputs(out) == [], f"files left in OUTDIR after failure: {outputs(out)}"


@pytest.mark.parametrize("kind", BAD_KINDS)
def test_bad_input_keeps_previous_split(kind, good_bc, tmp_path):
    out = tmp_path / "out"
    sl.split(good_bc, out, 4)
    sl.read_partitions(out, 4)
    before = {n: (out / n).read_bytes() for n in outputs(out)}
    bad = make_bad(kind, good_bc, tmp_path)
    r = sl.split(bad, out, 2, check=False)
    assert_clean_failure(r, bad.name)
    after = {n: (out / n).read_bytes() for n in outputs(out)}
    assert sorted(after) == sorted(before), f"files changed: {sorted(before)} -> {sorted(after)}"
    for n in before:
        assert after[n] == before[n], f"{n} was modified by a failed run"


def test_outdir_is_a_file(good_bc, tmp_path):
    f = tmp_path / "plainfile"
    f.write_text("x")
    r = sl.split(good_bc, f, 2, check=False)
    assert_clean_failure(r, "plainfile")
    assert f.read_text() == "x"


def test_outdir_under_a_file(good_bc, tmp_path):
    """Unwritable output (we run as root, so permissions do not stop writes: a path below a
    regular file does)."""
    f = tmp_path / "plainfile"
    f.write_text("x")
    r = sl.split(good_bc, f / "out", 2, check=False)
    assert_clean_failure(r, "plainfile")


def test_output_file_blocked_keeps_state(good_bc, tmp_path):
    """A partition file that cannot be replaced (a directory in its place) fails cleanly and
    plan.json never describes files that were not written."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "p1.bc").mkdir()
    (out / "p1.bc" / "keep").write_text("x")
    r = sl.split(good_bc, out, 4, check=False)
    if r.returncode == 0:  # the splitter chose fewer partitions or removed the directory
        sl.read_partitions(out, 4)
        return
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, r.stderr
    assert not (out / "plan.json").exists(), "plan.json written although the split failed"


def test_missing_arguments(good_bc, tmp_path):
    for args in ([], [str(good_bc)],
                 [str(good_bc), "-o", str(tmp_path / "o"), "--partitions", "0"],
                 [str(good_bc), "-o", str(tmp_path / "o"), "--partitions", "x"]):
        r = run(sl.split_cmd() + args, check=False)
        assert r.returncode != 0, f"accepted {args}"
        assert outputs(tmp_path / "o") == []


def test_older_llvm_bitcode_accepted(tmp_path):
    """Bitcode from clang-14 (Debian 12's default clang, in scripts/install-deps.sh) is
    readable by a newer LLVM, which reads older bitcode by design: it must split, and every
    partition must verify."""
    clang14 = shutil.which("clang-14")
    assert clang14, "clang-14 not found: run scripts/install-deps.sh"
    (tmp_path / "old.c").write_text(SRC)
    subprocess.run([clang14, "-O2", "-c", "-emit-llvm", tmp_path / "old.c", "-o",
                    tmp_path / "old.bc"], check=True)
    out = tmp_path / "out"
    sl.split(tmp_path / "old.bc", out, 2, "--min-cost", "0")
    _, parts, _ = sl.read_partitions(out, 2)
    assert len(parts) == 2
    for p in parts:
        sl.verify(p)


def test_thinlto_import_and_module_path_mismatch(tmp_path):
    """--thinlto-index imports in-process (the result equals a plain ThinLTO
    link); a module spelled differently from the thin link's view is an error,
    never a silent split without imports."""
    a, b = tmp_path / "a.c", tmp_path / "b.c"
    a.write_text('#include <stdio.h>\nint g(int);\nstatic int h(int x) { return x * 7; }\n'
                 'int f(int x) { return g(x) + h(x); }\n'
                 'int main(int c, char **v) { (void)v; printf("%d\\n", f(c) + h(c + 1)); return 0; }\n')
    b.write_text("int g(int x) { return x ^ 0x5a; }\n")
    clang = llvm_tool("clang")
    for s in (a, b):
        run([clang, "-O2", "-flto=thin", "-c", s.name, "-o", s.stem + ".o"], cwd=tmp_path)
    run([clang, "-flto=thin", "-fuse-ld=lld", "a.o", "b.o", "-Wl,--thinlto-index-only=idx.txt",
         "-Wl,--thinlto-emit-imports-files", "-o", "unused"], cwd=tmp_path)
    r = sl.split("./a.o", tmp_path / "bad", 2, "--thinlto-index", "a.o.thinlto.bc",
                 check=False, cwd=tmp_path)
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1
    assert "a.o.thinlto.bc" in r.stderr and "./a.o" in r.stderr
    assert not (tmp_path / "bad" / "plan.json").exists()
    sl.split("a.o", tmp_path / "out", 2, "--thinlto-index", "a.o.thinlto.bc",
             "--emit-imported", "a.imported.bc", cwd=tmp_path)
    imported = run([llvm_tool("opt"), "-S", tmp_path / "a.imported.bc", "-o", "-"]).stdout
    assert "define available_externally" in imported and "@g(" in imported
    parts = sorted((tmp_path / "out").glob("p*.bc"))
    objs = [sl.compile_ir(p, p.with_suffix(".o")) for p in parts]
    run([llvm_tool("ld.lld"), "-r", *objs, "-o", tmp_path / "m.o"])
    run([llvm_tool("llvm-objcopy"), f"--localize-symbols={tmp_path / 'out' / 'localize.txt'}",
         tmp_path / "m.o"])
    run([clang, "-c", "-x", "ir", "b.o", "-fthinlto-index=b.o.thinlto.bc", "-O2", "-o", "bn.o"],
        cwd=tmp_path)
    run([clang, "m.o", "bn.o", "-o", "split"], cwd=tmp_path)
    run([clang, "-flto=thin", "-fuse-ld=lld", "-O2", "a.o", "b.o", "-o", "ref"], cwd=tmp_path)
    assert run([tmp_path / "split", "x"]).stdout == run([tmp_path / "ref", "x"]).stdout


def test_empty_index_means_unused_module(tmp_path):
    """An archive member the thin link does not pull in gets an empty index from lld:
    mtpc-split exits with status 3 (nothing to split, one line saying so) and leaves the
    output directory as it was."""
    sl.thin_link_with_idle_member(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / "plan.json").write_text("earlier\n")
    r = sl.split("idle.o", out, 2, "--thinlto-index", "idle.o.thinlto.bc", check=False,
                 cwd=tmp_path)
    assert r.returncode == 3, r.stderr
    assert r.stderr.strip().splitlines() == [
        "mtpc-split: idle.o: not used by the link (idle.o.thinlto.bc holds no module); "
        "nothing written"]
    assert outputs(out) == ["plan.json"] and (out / "plan.json").read_text() == "earlier\n"
    # the member the link uses splits as usual
    sl.split("used.o", tmp_path / "u", 2, "--thinlto-index", "used.o.thinlto.bc", cwd=tmp_path)
    assert (tmp_path / "u" / "plan.json").exists()
