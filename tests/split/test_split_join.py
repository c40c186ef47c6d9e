"""--join-growth: a unit already past 1/16 of the module may take its single-caller static
helpers (docs/splitter.md, units). The module: one large external function calling an
internal helper once, plus independent fillers; at 4 partitions the large function is over
a fair share, so without the option its helper is placed (and promoted) elsewhere."""
import json
import re
import subprocess

import splitlib as sl
from test_split_copies import chain
from test_split_ipo import attr_groups, partitions_ir


def module_text():
    out = []
    body, last = chain(100)
    out += ["define internal i32 @helper(i32 %x) {", *body, f"  ret i32 {last}", "}"]
    body, last = chain(3000)
    out += ["define i32 @big(i32 %x) {", *body, f"  %h = call i32 @helper(i32 {last})",
            "  ret i32 %h", "}"]
    for i in range(40):
        body, last = chain(150)
        out += [f"define i32 @fill{i}(i32 %x) {{", *body, f"  ret i32 {last}", "}"]
    return "\n".join(out) + "\n"


def owner(plan, name):
    (p,) = [q["index"] for q in plan["partitions"] if name in q["owned"]]
    return p


def test_join_growth_keeps_helper_with_its_caller(tmp_path):
    ll, bc = tmp_path / "m.ll", tmp_path / "m.bc"
    ll.write_text(module_text())
    subprocess.run([sl.llvm_tool("llvm-as"), ll, "-o", bc], check=True)
    plans = {}
    for growth in ("0", "0.25"):
        out = tmp_path / f"g{growth}"
        sl.split(bc, out, 4, "--no-seed", "--join-growth", growth)
        plans[growth] = json.loads((out / "plan.json").read_text())
    apart, joined = plans["0"], plans["0.25"]
    assert owner(apart, "helper") != owner(apart, "big")
    assert [r["from"] for r in apart["promoted"]] == ["helper"]
    assert owner(joined, "helper") == owner(joined, "big")
    assert joined["promoted"] == []
    assert "join-growth=0.25" in joined["options"]
    # a growth too small for the helper changes nothing
    sl.split(bc, tmp_path / "small", 4, "--no-seed", "--join-growth", "0.01")
    small = json.loads((tmp_path / "small" / "plan.json").read_text())
    assert owner(small, "helper") != owner(small, "big")
    # and the joined split still links to the same symbols
    merged, _, _, localize = sl.split_and_merge(bc, tmp_path / "m", 4, extra=("--join-growth", "0.25"))
    unsplit = sl.compile_ir(bc, tmp_path / "unsplit.o")
    assert sl.check_symbols(unsplit, merged, bc, localize) == []


def dup_module_text(tmpl_cost):
    """Two large callers of one linkonce_odr comdat of about tmpl_cost instructions: at 2
    partitions the callers are apart."""
    out = ["$tmpl = comdat any"]
    body, last = chain(tmpl_cost)
    out += ["define linkonce_odr i32 @tmpl(i32 %x) comdat {", *body, f"  ret i32 {last}", "}"]
    for f in ("a", "b"):
        body, last = chain(2000)
        out += [f"define i32 @{f}(i32 %x) {{", *body, f"  %t = call i32 @tmpl(i32 {last})",
                "  ret i32 %t", "}"]
    return "\n".join(out) + "\n"


def split_two_callers(tmp_path, text, option, value, pattern):
    """Split the module `text` (two large callers a and b of one callee) in 2 as a link's
    module, with --pre-link, and with --pre-link plus `option value`; returns, per variant,
    how many partitions have a definition matching `pattern`, and the plan's options."""
    ll, bc = tmp_path / "m.ll", tmp_path / "m.bc"
    ll.write_text(text)
    subprocess.run([sl.llvm_tool("llvm-as"), ll, "-o", bc], check=True)
    res = {}
    for name, extra in (("link", ()), ("pre-link", ("--pre-link",)),
                        ("explicit", ("--pre-link", option, value))):
        out = tmp_path / name
        sl.split(bc, out, 2, "--no-seed", "--no-cache", "--no-ipo", *extra)
        plan = json.loads((out / "plan.json").read_text())
        assert owner(plan, "a") != owner(plan, "b")
        res[name] = (sum(1 for t in partitions_ir(out) if re.search(pattern, t, re.M)),
                     plan["options"])
    return res


def test_pre_link_carries_bigger_comdats(tmp_path):
    """Before the pre-link pipeline a comdat a partition does not carry cannot be inlined
    there: --pre-link raises --dup-limit's default from 200 to 600 (docs/splitter.md, "The
    compile side"); an explicit --dup-limit still wins."""
    res = split_two_callers(tmp_path, dup_module_text(400), "--dup-limit", "200",
                            r"^define (?!available_externally)[^\n]*@tmpl\(")
    for name, (_, opts) in res.items():
        assert ("dup-limit=600" in opts) == (name == "pre-link"), opts
    assert {k: n for k, (n, _) in res.items()} == {"link": 1, "pre-link": 2, "explicit": 1}


def inline_source(callers):
    """A small external function api() that the unsplit pre-link inliner inlines into every
    caller; large callers of it spread over the partitions; keep(), marked noinline by the
    program, which no inliner may touch; hot(), always_inline."""
    out = ["int api(int x) { return x * 3 + 1; }",
           "__attribute__((noinline)) int keep(int x) { return x ^ 5; }",
           "__attribute__((always_inline)) int hot(int x) { return x * x - 7; }"]
    for k in range(callers):
        stmts = "".join(f"  s = s * {31 + i} + api(s + {i}) - (s >> {i % 7 + 1});\n"
                        for i in range(60))
        out.append(f"int big{k}(int x) {{\n  int s = hot(x);\n{stmts}  return keep(s);\n}}")
    return "\n".join(out) + "\n"


def call_lines(ir, callee):
    return [l for l in ir.splitlines() if re.search(rf"\bcall\b.*@{callee}\(", l)]


def test_join_inlines_calls_no_partition_saw(tmp_path):
    """mtpc-split --join runs the inliner on the calls whose callee a partition had neither
    defined nor copied (docs/splitter.md, "The compile side"): with no copies allowed, the
    callers of api() outside its partition keep their calls after the partitions' pre-link
    pipelines; the join inlines them as the unsplit compile does (--no-join-inline shows
    they were there). The calls the partitions decided are left to the backend as they were:
    no call of the joined module carries the join's marks or a noinline of its making."""
    src = tmp_path / "m.c"
    src.write_text(inline_source(8))
    clang = sl.llvm_tool("clang")
    front, plain = tmp_path / "front.bc", tmp_path / "plain.o"
    subprocess.run([clang, "-O2", "-flto=thin", "-c", src, "-Xclang", "-disable-llvm-passes",
                    "-o", front], check=True)
    subprocess.run([clang, "-O2", "-flto=thin", "-c", src, "-o", plain], check=True)
    out = tmp_path / "parts"
    sl.split(front, out, 4, "--pre-link", "--no-seed", "--no-cache", "--no-ipo",
             "--copy-limit", "0")
    plan = json.loads((out / "plan.json").read_text())
    n = len(plan["partitions"])
    assert n >= 3 and len({owner(plan, f"big{k}") for k in range(8)} - {owner(plan, "api")})
    objs = []
    for p in range(n):
        o = tmp_path / f"P{p}.o"
        subprocess.run([clang, "-O2", "-flto=thin", "-c", "-x", "ir", out / f"p{p}.bc", "-o", o],
                       check=True)
        objs.append(o)

    def joined(name, *extra):
        obj = tmp_path / f"{name}.o"
        subprocess.run([*sl.split_cmd(), "--join", front, "--plan", out / "plan.json", *extra,
                        "-o", obj, *objs], check=True)
        ll = tmp_path / f"{name}.ll"
        subprocess.run([sl.llvm_tool("llvm-dis"), obj, "-o", ll], check=True)
        return ll.read_text()

    def dis(obj):
        ll = obj.with_suffix(".ll")
        subprocess.run([sl.llvm_tool("llvm-dis"), obj, "-o", ll], check=True)
        return ll.read_text()

    with_inliner, without = joined("joined"), joined("noinl", "--no-join-inline")
    plain_ir = dis(plain)
    assert call_lines(plain_ir, "api") == []
    assert len(call_lines(without, "api")) >= 60, "the partitions left no call to inline"
    assert call_lines(with_inliner, "api") == []
    # keep() stays a call from every caller, as in the plain compile
    assert len(call_lines(with_inliner, "keep")) == len(call_lines(plain_ir, "keep")) == 8
    # the calls of always_inline hot() no partition saw are left to the ThinLTO backend,
    # which inlines them and runs its whole pipeline on the caller (the join's short
    # clean-up would not); the backend's output has no call left
    assert call_lines(plain_ir, "hot") == []
    left = call_lines(with_inliner, "hot")
    assert left and len(left) == len(call_lines(without, "hot")), left
    main = tmp_path / "main.c"
    main.write_text("int big0(int); int big7(int);\n"
                    "int main(int c, char **v) { (void)v; return (big0(c) ^ big7(c)) & 1; }\n")
    exe = tmp_path / "prog"
    subprocess.run([clang, "-O2", "-flto=thin", "-fuse-ld=lld", main, tmp_path / "joined.o",
                    "-o", exe], check=True)
    asm = subprocess.run([sl.llvm_tool("llvm-objdump"), "-d", "--no-show-raw-insn", exe],
                         capture_output=True, text=True, check=True).stdout
    assert not re.search(r"call.*<hot>", asm)
    assert "mtpc-join-seen" not in with_inliner
    groups = attr_groups(with_inliner)
    marked = [l for l in with_inliner.splitlines() if re.search(r"\bcall\b", l)
              and any("noinline" in groups.get(g, "") for g in re.findall(r"(#\d+)\s*$", l))]
    assert marked == []
    # and the join is deterministic
    assert (tmp_path / "joined.o").read_bytes() == (joined("again") and
                                                    (tmp_path / "again.o").read_bytes())


def copy_module_text(callee_cost):
    """Two large callers of one external function of about callee_cost instructions: at 2
    partitions the callers are apart, and one of them has the callee only if copied."""
    body, last = chain(callee_cost)
    out = ["define i32 @callee(i32 %x) {", *body, f"  ret i32 {last}", "}"]
    for f in ("a", "b"):
        body, last = chain(2000)
        out += [f"define i32 @{f}(i32 %x) {{", *body, f"  %t = call i32 @callee(i32 {last})",
                "  ret i32 %t", "}"]
    return "\n".join(out) + "\n"


def test_pre_link_copies_bigger_callees(tmp_path):
    """Before the pre-link pipeline a callee a partition does not have is a declaration its
    inliner weighs as free: --pre-link raises the copy defaults (--copy-limit 60 -> 400,
    --copy-budget 0.10 -> 0.5, --critical-copy-budget 0.04 -> 0.3; docs/splitter.md, "The
    compile side"), so the partition without a 150-instruction callee gets a copy of it;
    explicit options still win."""
    res = split_two_callers(tmp_path, copy_module_text(150), "--copy-limit", "60",
                            r"^define available_externally [^\n]*@callee\(")
    opts = res["pre-link"][1]
    assert "copy-limit=400" in opts and "copy-budget=0.5" in opts, opts
    assert "critical-copy-budget=0.3" in opts, opts
    opts = res["link"][1]
    assert "copy-limit=60" in opts and "copy-budget=0.1" in opts, opts
    assert {k: n for k, (n, _) in res.items()} == {"link": 0, "pre-link": 1, "explicit": 0}
