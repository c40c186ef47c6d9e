"""The key mtpc-split stores in plan.json (input_hash) and compares before doing anything
else: the input's bytes and, with --thinlto-index, the index's bytes, whose module table
holds the content hash of every module the import reads, plus the bytes of any module
listed without one. Outputs count as current exactly when that key and the options are
the same, and a current split reads no other module at all."""
import re

from conftest import llvm_tool, run, tool

MAIN = "int f(int);\nint main(int argc, char **argv) { (void)argv; return f(argc) == 42 ? 0 : 1; }\n"
LIB = "int f(int x) { return x + %d; }\n"


def build(d, k, hashed):
    """a.o (calls f) and b.o (defines f as x + k), then an index-only thin link. hashed:
    clang -flto=thin objects, which carry a module hash; else `opt -module-summary`, whose
    objects carry none (the index lists them with hash 0)."""
    (d / "a.c").write_text(MAIN)
    (d / "b.c").write_text(LIB % k)
    for m in ("a", "b"):
        if hashed:
            run([llvm_tool("clang"), "-O2", "-flto=thin", "-c", f"{m}.c", "-o", f"{m}.o"], cwd=d)
        else:
            run([llvm_tool("clang"), "-O2", "-c", "-emit-llvm", f"{m}.c", "-o", f"{m}.bc"], cwd=d)
            run([llvm_tool("opt"), "-module-summary", f"{m}.bc", "-o", f"{m}.o"], cwd=d)
    run([llvm_tool("clang"), "-flto=thin", "-fuse-ld=lld", "a.o", "b.o",
         "-Wl,--thinlto-index-only", "-o", "prog"], cwd=d)
    return (d / "a.o.thinlto.bc").read_bytes()


def split_a(d, check=True):
    return run([tool("mtpc-split"), "a.o", "--thinlto-index", "a.o.thinlto.bc", "-n", "2",
                "-o", "out", "--no-cache", "--stats"], cwd=d, check=check)


def imported_body(d):
    """The text of f's available_externally copy in the partitions."""
    text = ""
    for p in sorted((d / "out").glob("p*.bc")):
        text += run([llvm_tool("llvm-dis"), p, "-o", "-"]).stdout
    m = re.search(r"^define available_externally [^\n]*@f\(.*?^\}", text, re.S | re.M)
    assert m, text
    return m.group(0)


def test_unhashed_import_changes_the_key(tmp_path):
    """A module listed with hash 0 goes into the key by its bytes: changing f's body (the
    summary, and so the index, stays byte for byte the same) must not leave the old
    partitions in place as current."""
    old_index = build(tmp_path, 41, hashed=False)
    split_a(tmp_path)
    assert "add nsw i32 %0, 41" in imported_body(tmp_path)
    assert build(tmp_path, 40, hashed=False) == old_index, \
        "precondition: the index must not change, or this tests nothing"
    r = split_a(tmp_path)
    assert "up to date" not in r.stderr, r.stderr
    assert "add nsw i32 %0, 40" in imported_body(tmp_path)


def test_hashed_import_change_resplits(tmp_path):
    """With module hashes the index itself changes with b.o, and so does the key."""
    old_index = build(tmp_path, 41, hashed=True)
    split_a(tmp_path)
    old_key = (tmp_path / "out" / "plan.json").read_text()
    assert build(tmp_path, 40, hashed=True) != old_index
    r = split_a(tmp_path)
    assert "up to date" not in r.stderr, r.stderr
    assert "add nsw i32 %0, 40" in imported_body(tmp_path)
    assert (tmp_path / "out" / "plan.json").read_text() != old_key


def test_current_split_reads_no_module(tmp_path):
    """A rerun on the same input and index stops at the key: it no longer needs the
    modules the import would read (b.o is gone) and rewrites nothing; with another option
    it must import again, and says which file it cannot read."""
    build(tmp_path, 41, hashed=True)
    split_a(tmp_path)
    out = tmp_path / "out"
    before = {p.name: p.stat().st_mtime_ns for p in out.iterdir()}
    (tmp_path / "b.o").unlink()
    r = split_a(tmp_path)
    assert "outputs up to date" in r.stderr, r.stderr
    assert {p.name: p.stat().st_mtime_ns for p in out.iterdir()} == before
    r = run([tool("mtpc-split"), "a.o", "--thinlto-index", "a.o.thinlto.bc", "-n", "3",
             "-o", "out", "--no-cache"], cwd=tmp_path, check=False)
    assert r.returncode == 1 and "b.o" in r.stderr, r.stderr
    assert {p.name: p.stat().st_mtime_ns for p in out.iterdir()} == before
