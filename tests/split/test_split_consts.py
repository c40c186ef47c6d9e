"""Static constant tables read from several partitions (docs/splitter.md, "Roles").

A small one (<= --const-dup-limit bytes) is carried by every partition that reads it. A big
one is owned by one partition, promoted, and the other readers get an available_externally
copy: loads from it still fold, and the merged object holds its data once (found on expat,
whose character-class tables came out four times)."""
import re

import pytest

import splitlib as sl
from conftest import llvm_tool, run

FUNCS = 8

# Eight independent readers of both tables, each big enough that 4 partitions separate them.
SRC = """#include <stdio.h>
static const unsigned char big[1024] = {%(big)s};
static const int small[4] = {3, 1, 4, 1};
%(funcs)s
int main(int argc, char **argv) {
  (void)argv;
  unsigned s = 0;
%(calls)s
  printf("%%u\\n", s);
  return 0;
}
"""


def source():
    big = ", ".join(str((i * 37 + 11) % 251) for i in range(1024))
    funcs, calls = [], []
    for k in range(FUNCS):
        body = "\n".join(f"  for (unsigned i = 0; i < n; i++) x = x * {k + 3} + big[(x ^ i) & 1023]"
                         f" + small[(x >> {j % 5}) & 3];" for j in range(12))
        funcs.append(f"__attribute__((noinline)) unsigned f{k}(unsigned x, unsigned n) {{\n"
                     f"{body}\n  return x + big[3];\n}}")
        calls.append(f"  s += f{k}(argc + {k}, 100);")
    return SRC % {"big": big, "funcs": "\n".join(funcs), "calls": "\n".join(calls)}


def ir(bc):
    return run([llvm_tool("llvm-dis"), bc, "-o", "-"]).stdout


def table_line(text, name):
    lines = [l for l in text.splitlines() if re.match(rf"@{name}(\.mtpc\.[0-9a-f]+)? = ", l)]
    assert len(lines) <= 1, lines
    return lines[0] if lines else None


def rodata_bytes(obj):
    out = run([llvm_tool("llvm-readelf"), "-S", "-W", obj]).stdout
    total = 0
    for l in out.splitlines():
        m = re.search(r"\] (\.rodata\S*)\s+PROGBITS\s+\S+\s+\S+\s+([0-9a-f]+)", l)
        if m:
            total += int(m.group(2), 16)
    return total


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("consts")
    src = tmp / "t.c"
    src.write_text(source())
    bc = sl.to_bitcode(src, tmp / "t.bc")
    unsplit = sl.compile_ir(bc, tmp / "unsplit.o")
    return tmp, bc, unsplit


@pytest.mark.parametrize("limit", [None, "4096"])
def test_big_table_defined_once_small_table_carried(program, limit):
    tmp, bc, unsplit = program
    out = tmp / f"out-{limit}"
    extra = ["--const-dup-limit", limit] if limit else []
    merged, plan, _, _ = sl.split_and_merge(bc, out, 4, extra=extra)
    assert len(plan["partitions"]) == 4
    texts = [ir(p) for p in sorted(out.glob("p*.bc"))]
    bigs = [table_line(t, "big") for t in texts]
    readers = [b for b in bigs if b]
    assert len(readers) >= 2, bigs
    if limit is None:
        # owned once (hidden after the promotion), copied where it is read
        owned = [b for b in readers if "available_externally" not in b]
        assert len(owned) == 1 and "hidden" in owned[0], readers
        assert all("available_externally hidden" in b for b in readers if b is not owned[0])
        assert rodata_bytes(merged) < rodata_bytes(unsplit) + 256
    else:
        # --const-dup-limit 4096: the old behaviour, every reader carries it
        assert all(re.search(r"= internal unnamed_addr constant", b) for b in readers), readers
        assert rodata_bytes(merged) >= rodata_bytes(unsplit) + 1024
    for t in texts:
        s = table_line(t, "small")
        assert s is None or "internal" in s, s
    exe = tmp / f"split-{limit}"
    ref = tmp / "ref"
    run([llvm_tool("clang"), merged, "-o", exe])
    run([llvm_tool("clang"), unsplit, "-o", ref])
    assert run([exe, "a", "b"]).stdout == run([ref, "a", "b"]).stdout
