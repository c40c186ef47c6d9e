"""--join-growth: a unit already past 1/16 of the module may take its single-caller static
helpers (docs/splitter.md, units). The module: one large external function calling an
internal helper once, plus independent fillers; at 4 partitions the large function is over
a fair share, so without the option its helper is placed (and promoted) elsewhere."""
import json
import re
import subprocess

import splitlib as sl
from test_split_copies import chain
from test_split_ipo import partitions_ir


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


def test_pre_link_carries_bigger_comdats(tmp_path):
    """Before the pre-link pipeline a comdat a partition does not carry cannot be inlined
    there: --pre-link raises --dup-limit's default from 200 to 600 (docs/splitter.md, "The
    compile side"); an explicit --dup-limit still wins."""
    ll, bc = tmp_path / "m.ll", tmp_path / "m.bc"
    ll.write_text(dup_module_text(400))
    subprocess.run([sl.llvm_tool("llvm-as"), ll, "-o", bc], check=True)
    carriers = {}
    for name, extra in (("link", ()), ("pre-link", ("--pre-link",)),
                        ("pre-link-200", ("--pre-link", "--dup-limit", "200"))):
        out = tmp_path / name
        sl.split(bc, out, 2, "--no-seed", "--no-cache", "--no-ipo", *extra)
        plan = json.loads((out / "plan.json").read_text())
        assert owner(plan, "a") != owner(plan, "b")
        carriers[name] = sum(1 for text in partitions_ir(out)
                             if re.search(r"^define (?!available_externally)[^\n]*@tmpl\(", text, re.M))
        assert ("dup-limit=600" in plan["options"]) == (name == "pre-link"), plan["options"]
    assert carriers == {"link": 1, "pre-link": 2, "pre-link-200": 1}, carriers
