"""Whole-module interprocedural passes before the split (splitter/ipo.c, docs/splitter.md,
"Load"): the partitions get what the unsplit backend derives from every caller or callee of a
function, which no single partition could find.

The module: two large external functions `a` and `b` (each over a partition's share, so
they land in different partitions) both call the internal `scale(x, 7)` and the external
`pure(x)`, which has no attributes in the input. With the passes, the constant-argument step
puts 7 into `scale`'s body wherever it is defined, and FunctionAttrs marks `pure` nounwind and
memory(none), in its definition and in every partition's declaration or copy of it. With
--no-ipo, neither happens: the tests below fail on a splitter that does not run them."""
import json
import re
import subprocess

import splitlib as sl
from conftest import LLVM_BIN, run
from test_split_copies import chain
from progdiff import mtpc_link_cmd


def module_text():
    out = []
    body, last = chain(80)
    out += ["define internal i32 @scale(i32 %x, i32 %k) {", *body,
            f"  %m = mul i32 {last}, %k", "  ret i32 %m", "}"]
    out += ["define i32 @pure(i32 %x) {", "  %y = mul i32 %x, 3", "  %z = add i32 %y, 1",
            "  ret i32 %z", "}"]
    for f in ("a", "b"):
        body, last = chain(3000)
        out += [f"define i32 @{f}(i32 %x) {{", *body,
                f"  %s = call i32 @scale(i32 {last}, i32 7)",
                "  %p = call i32 @pure(i32 %s)", "  ret i32 %p", "}"]
    for i in range(20):
        body, last = chain(150)
        out += [f"define i32 @fill{i}(i32 %x) {{", *body, f"  ret i32 {last}", "}"]
    return "\n".join(out) + "\n"


def partitions_ir(outdir):
    n = len(json.loads((outdir / "plan.json").read_text())["partitions"])
    texts = []
    for p in range(n):
        ll = outdir / f"p{p}.ll"
        run([sl.llvm_tool("llvm-dis"), outdir / f"p{p}.bc", "-o", ll])
        texts.append(ll.read_text())
    return texts


def function_lines(text, name):
    """The define/declare lines of @name (promoted names start with it)."""
    return [l for l in text.splitlines()
            if l.startswith(("define", "declare")) and re.search(rf"@{name}[.(]", l)]


def attr_groups(text):
    return dict(re.findall(r"^attributes (#\d+) = \{(.*)\}$", text, re.M))


def facts(outdir):
    """Per partition: does scale's body (where defined) use the constant, and is every
    declaration or definition of pure nounwind?"""
    out = []
    for text in partitions_ir(outdir):
        groups = attr_groups(text)
        body = re.search(r"^define [^\n]*@scale[.(][^\n]*\{\n(.*?)^\}", text, re.M | re.S)
        const = None if body is None else bool(re.search(r"mul i32 %\S+, 7\b", body.group(1)))
        pure = []
        for line in function_lines(text, "pure"):
            attrs = " ".join(groups.get(g, "") for g in re.findall(r"#\d+", line)) + " " + line
            pure.append("nounwind" in attrs and "memory(none)" in attrs)
        out.append((const, pure))
    return out


def test_constants_and_attributes_reach_every_partition(tmp_path):
    ll, bc = tmp_path / "m.ll", tmp_path / "m.bc"
    ll.write_text(module_text())
    run([sl.llvm_tool("llvm-as"), ll, "-o", bc])
    got = {}
    for name, extra in (("ipo", ()), ("no-ipo", ("--no-ipo",))):
        out = tmp_path / name
        sl.split(bc, out, 4, "--no-seed", "--no-cache", *extra)
        plan = json.loads((out / "plan.json").read_text())
        owners = {f: [q["index"] for q in plan["partitions"] if f in q["owned"]] for f in "ab"}
        assert len(owners["a"]) == 1 and owners["a"] != owners["b"], owners
        assert ("ipo=0" in plan["options"]) == bool(extra), plan["options"]
        got[name] = facts(out)
    with_ipo = got["ipo"]
    assert [c for c, _ in with_ipo if c is not None] and all(c for c, _ in with_ipo if c is not None)
    assert sum(len(p) for _, p in with_ipo) >= 2       # defined once, declared or copied elsewhere
    assert all(all(p) for _, p in with_ipo), with_ipo
    without = got["no-ipo"]
    assert not any(c for c, _ in without if c is not None), without
    assert not any(any(p) for _, p in without), without
    # the split is still the same program
    merged, _, _, localize = sl.split_and_merge(bc, tmp_path / "m", 4)
    unsplit = sl.compile_ir(bc, tmp_path / "unsplit.o")
    assert sl.check_symbols(unsplit, merged, bc, localize) == []


def test_link_at_O0_splits_without_the_passes(tmp_path):
    (tmp_path / "main.c").write_text(
        "static int twice(int x) { return 2 * x; }\n"
        "int main(int c, char **v) { (void)v; return twice(c) - 2; }\n")
    clang = sl.llvm_tool("clang")
    for opt in ("-O0", "-O2"):
        d = tmp_path / opt
        d.mkdir()
        run([clang, opt, "-flto=thin", "-c", tmp_path / "main.c", "-o", d / "main.o"])
        link = [clang, opt, "-flto=thin", "-fuse-ld=lld", d / "main.o", "-o"]
        run(mtpc_link_cmd("link", [str(w) for w in link], str(d / "app"), str(d / "cache.sqlite")))
        ninja = (d / "app.mtpc" / "build.ninja").read_text()
        assert "mtpc-split" in ninja
        assert ("--split-arg --no-ipo" in ninja) == (opt == "-O0"), opt
        assert subprocess.run([d / "app"]).returncode == 0


EDGES = """
@g = global i32 5
@fp = global ptr @k_addr
define internal i32 @k_same(i32 %x, i32 %k) noinline {
  %m = mul i32 %x, %k
  ret i32 %m
}
define internal i32 @k_diff(i32 %x, i32 %k) noinline {
  %m = mul i32 %x, %k
  ret i32 %m
}
define internal i32 @k_addr(i32 %x, i32 %k) noinline {
  %m = mul i32 %x, %k
  ret i32 %m
}
define internal i32 @k_byval(ptr byval(i32) %p) noinline {
  store i32 1, ptr %p
  %v = load i32, ptr %p
  ret i32 %v
}
define i32 @entry(i32 %x) {
  %a = call i32 @k_same(i32 %x, i32 7)
  %b = call i32 @k_same(i32 %a, i32 7)
  %c = call i32 @k_diff(i32 %b, i32 7)
  %d = call i32 @k_diff(i32 %c, i32 8)
  %e = call i32 @k_addr(i32 %d, i32 7)
  %f = call i32 @k_byval(ptr byval(i32) @g)
  %h = call i32 @k_byval(ptr byval(i32) @g)
  %s = add i32 %e, %f
  %t = add i32 %s, %h
  ret i32 %t
}
"""


def test_constant_arguments_only_where_every_caller_agrees(tmp_path):
    """A parameter becomes the constant only when every use of the function is a direct
    call passing that constant, and the callee does not get a copy of it (byval)."""
    ll, bc = tmp_path / "e.ll", tmp_path / "e.bc"
    ll.write_text(EDGES)
    run([sl.llvm_tool("llvm-as"), ll, "-o", bc])
    sl.split(bc, tmp_path / "out", 1, "--no-seed", "--no-cache")
    (text,) = partitions_ir(tmp_path / "out")

    def body(name):
        m = re.search(rf"^define [^\n]*@{name}[.(][^\n]*\{{\n(.*?)^\}}", text, re.M | re.S)
        assert m, (name, text)
        return m.group(1)
    assert re.search(r"mul i32 %\S+, 7\b", body("k_same"))
    assert re.search(r"mul i32 %\S+, %\S+", body("k_diff"))
    assert re.search(r"mul i32 %\S+, %\S+", body("k_addr"))
    assert "store i32 1, ptr %" in body("k_byval")  # writes its own copy, not @g
    assert "@g" not in body("k_byval")
    sl.verify(tmp_path / "out" / "p0.bc")
