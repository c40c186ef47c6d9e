"""How a slot compiles its partition (docs/build-integration.md, "Slots").

A partition is a piece of a post-import module: its import, internalization and type
resolutions are done. The slot compiles it as a ThinLTO backend told so
(`-fthinlto-index=<the partition itself> -mllvm -thinlto-assume-merged`): clang then runs the
post-link pipeline the unsplit backend runs, with the backend's code generation options. A
plain `clang -c -x ir` would run the pre-link pipeline instead (its early cleanup passes over
every function again: a few percent of the compile for nothing). The partition carries no
ThinLTO summary: with -thinlto-assume-merged clang takes a one-module bitcode file as the
backend's module anyway; without that flag it would compile an empty module, silently."""
import pytest

import splitlib as sl
from conftest import llvm_tool, run

SRC = """#include <stdio.h>
int g(int);
static int h(int x) { return x * 7; }
__attribute__((noinline)) int f(int x) { return g(x) + h(x); }
__attribute__((noinline)) int k(int x) { int s = 0; for (int i = 0; i < x; i++) s += h(i) ^ i; return s; }
int main(int c, char **v) { (void)v; printf("%d %d\\n", f(c), k(c + 40)); return 0; }
"""


@pytest.fixture(scope="module")
def thin(tmp_path_factory):
    """a.o (split) and b.o (its import source), thin-linked index-only."""
    d = tmp_path_factory.mktemp("slot")
    (d / "a.c").write_text(SRC)
    (d / "b.c").write_text("int g(int x) { return x ^ 0x5a; }\n")
    clang = llvm_tool("clang")
    for s in ("a", "b"):
        run([clang, "-O2", "-flto=thin", "-c", f"{s}.c", "-o", f"{s}.o"], cwd=d)
    run([clang, "-flto=thin", "-fuse-ld=lld", "a.o", "b.o", "-Wl,--thinlto-index-only",
         "-o", "unused"], cwd=d)
    return d


def split(thin, n):
    out = thin / f"out{n}"
    sl.split("a.o", out, n, "--thinlto-index", "a.o.thinlto.bc", cwd=thin)
    return sorted(out.glob("p*.bc"))


def test_slot_compiles_the_whole_partition(thin):
    parts = split(thin, 2)
    assert len(parts) == 2
    for p in parts:
        run(sl.slot_cmd(p, p.with_suffix(".slot.o")))
        run([llvm_tool("clang"), "-O2", "-c", "-x", "ir", p, "-o", p.with_suffix(".plain.o")])
        slot = sl.global_defined(p.with_suffix(".slot.o"))
        assert slot and slot == sl.global_defined(p.with_suffix(".plain.o")), p
    # the flag matters: without it the summary-less partition is compiled as an empty module
    p = parts[0]
    cmd = [a for a in sl.slot_cmd(p, thin / "noflag.o") if a not in ("-mllvm", "-thinlto-assume-merged")]
    run(cmd)
    assert not sl.global_defined(thin / "noflag.o")


def passes(cmd):
    """The new pass manager's passes a clang compile runs (-fdebug-pass-manager)."""
    r = run([*cmd, "-Xclang", "-fdebug-pass-manager"])
    return {l.split()[2] for l in r.stderr.splitlines() if l.startswith("Running pass: ")}


def test_slot_runs_the_post_link_pipeline(thin):
    p0 = split(thin, 2)[0]
    clang = llvm_tool("clang")
    slot = passes(sl.slot_cmd(p0, thin / "slot.o"))
    plain = passes([clang, "-O2", "-c", "-x", "ir", p0, "-o", thin / "plain.o"])
    # the pre-link pipeline's first passes run only in the plain compile ...
    for pre_link_only in ("Annotation2MetadataPass", "ForceFunctionAttrsPass",
                          "EntryExitInstrumenterPass"):
        assert pre_link_only in plain and pre_link_only not in slot, pre_link_only
    # ... and the rest is the same optimization pipeline
    assert {"InlinerPass", "GVNPass", "LoopVectorizePass", "VerifierPass"} <= slot


def test_one_partition_compiles_like_the_unsplit_backend(thin):
    """One partition holds the whole post-import module: its slot object has the unsplit
    ThinLTO backend's code, byte for byte."""
    (p0,) = split(thin, 1)
    clang = llvm_tool("clang")
    sl.compile_ir(p0, thin / "p0.o")
    run([clang, "-O2", "-c", "-x", "ir", "a.o", "-fthinlto-index=a.o.thinlto.bc",
         "-o", "backend.o"], cwd=thin)

    def code(obj):
        return run([llvm_tool("llvm-objdump"), "-d", "--no-show-raw-insn", "--no-addresses",
                    obj]).stdout.split("\n\n", 1)[1]
    assert code(thin / "p0.o") == code(thin / "backend.o")
