"""mtpc-split --cores C: the partition count chosen from the predicted span of each candidate
plan on C cores, duplicated code counted (docs/splitter.md, "How many partitions: --cores").
Fewer partitions where the copies and duplicates of more cost more than they gain; -n's
plan where there are cores enough; deterministic; a seeded plan keeps its count unless the
fresh prediction at that count is clearly worse."""
import json

import splitlib as sl
from conftest import llvm_tool, run

SPLIT = ("--pre-link", "--no-ipo", "--no-cache")  # a compile's frontend module, as mtpc-compile splits it


def cxx_source(edit=False, users=48, helpers=40):
    """Every function calls half of 40 inline helpers, each instantiating a class template:
    linkonce_odr code that every partition using it carries (--dup-limit)."""
    out = ["template <int I> struct Acc {",
           "  int v[8];",
           "  Acc() { for (int k = 0; k < 8; k++) v[k] = k * I; }",
           "  int mix(int x) const { int s = x; for (int k = 0; k < 8; k++) "
           "s = s * 31 + (v[k] ^ (s >> 3)); return s; }",
           "};"]
    for h in range(helpers):
        out.append(f"inline int h{h}(int x) {{ Acc<{h}> a; int s = a.mix(x); if (s & {h + 1}) "
                   f"s += a.mix(s); for (int k = 0; k < (x & 7); k++) s ^= a.mix(s + k); return s; }}")
    for u in range(users):
        c = u + 1 + (1 if edit and u == 5 else 0)
        calls = " + ".join(f"h{(u * 7 + j) % helpers}(x + {j})" for j in range(helpers // 2))
        out.append(f"int use{u}(int x) {{ int s = {calls}; return s * {c}; }}")
    return "\n".join(out) + "\n"


def c_source(funcs=32):
    """Independent functions: next to nothing to copy or duplicate."""
    return "".join(f"int f{i}(int x) {{ int s = 0; for (int k = 0; k < x; k++) "
                   f"s += (k * {i + 3}) ^ (s >> 2); return s + {i}; }}\n" for i in range(funcs))


def frontend_bc(tmp_path, name, text):
    src = tmp_path / name
    src.write_text(text)
    bc = src.with_suffix(".bc")
    clang = llvm_tool("clang++" if name.endswith(".cpp") else "clang")
    run([clang, "-O2", "-c", "-emit-llvm", "-Xclang", "-disable-llvm-passes", src, "-o", bc])
    return bc


def plan(outdir):
    return json.loads((outdir / "plan.json").read_text())


def parts(outdir):
    return {p.name: p.read_bytes() for p in sorted(outdir.glob("p*.bc"))}


def test_heavy_duplication_plans_fewer_partitions(tmp_path):
    """C++ whose partitions each carry most of the inline code: 8 partitions on 2 cores are
    predicted slower than fewer; the plan says which count was chosen and why, and the
    partitions are those of -n <chosen>."""
    bc = frontend_bc(tmp_path, "m.cpp", cxx_source())
    out = tmp_path / "out"
    r = sl.split(bc, out, 8, "--cores", "2", "--no-seed", "--stats", *SPLIT)
    pc = plan(out)["partition_count"]
    assert pc["cores"] == 2 and pc["seed"] is None
    assert 2 <= pc["chosen"] < 8, pc
    assert len(plan(out)["partitions"]) == len(parts(out)) == pc["chosen"]
    by_count = {c["partitions"]: c for c in pc["candidates"]}
    assert pc["candidates"][0]["partitions"] == 8 and pc["chosen"] in by_count
    best = min(c["span"] for c in pc["candidates"])
    assert by_count[8]["span"] * 100 > best * 103, pc
    assert by_count[pc["chosen"]]["span"] * 100 <= best * 103
    # the fewest within the slack
    assert all(c["span"] * 100 > best * 103 for c in pc["candidates"] if c["partitions"] < pc["chosen"])
    # duplication counted: 8 partitions carry far more than the chosen count
    assert by_count[8]["duplication"] > 1.5 * by_count[pc["chosen"]]["duplication"] > 1.5, pc
    assert by_count[8]["work"] > by_count[pc["chosen"]]["work"]
    assert f"--cores 2: {pc['chosen']} partitions" in r.stderr, r.stderr
    # the chosen count's plan is -n's own at that count
    ref = tmp_path / "ref"
    sl.split(bc, ref, pc["chosen"], "--no-seed", *SPLIT)
    assert parts(ref) == parts(out)
    assert (ref / "localize.txt").read_bytes() == (out / "localize.txt").read_bytes()


def test_few_copies_and_enough_cores_keep_n(tmp_path):
    """C with little to copy and a core for each partition: -n's plan exactly; only the key
    (options, options_hash) and the reason (partition_count) differ."""
    bc = frontend_bc(tmp_path, "m.c", c_source())
    a, b = tmp_path / "a", tmp_path / "b"
    sl.split(bc, a, 4, "--no-seed", *SPLIT)
    sl.split(bc, b, 4, "--cores", "4", "--no-seed", *SPLIT)
    assert len(parts(a)) == 4 and parts(a) == parts(b)
    for f in ("localize.txt", "rename.txt"):
        assert (a / f).read_bytes() == (b / f).read_bytes(), f
    pa, pb = plan(a), plan(b)
    assert "partition_count" not in pa
    assert pb["partition_count"]["chosen"] == 4
    assert pb["options"] == pa["options"] + " cores=4" and pb["options_hash"] != pa["options_hash"]
    for p in (pa, pb):
        for k in ("options", "options_hash", "partition_count"):
            p.pop(k, None)
    assert pa == pb


def test_cores_zero_is_no_cores(tmp_path):
    """--cores 0 is today's split byte for byte, plan.json included."""
    bc = frontend_bc(tmp_path, "m.cpp", cxx_source())
    a, b = tmp_path / "a", tmp_path / "b"
    sl.split(bc, a, 8, "--no-seed", *SPLIT)
    sl.split(bc, b, 8, "--cores", "0", "--no-seed", *SPLIT)
    assert sl.tree_bytes(a) == sl.tree_bytes(b)
    assert len(parts(a)) == 8


def test_deterministic(tmp_path):
    """Two fresh runs: byte-identical partitions and plan."""
    bc = frontend_bc(tmp_path, "m.cpp", cxx_source())
    a, b = tmp_path / "a", tmp_path / "b"
    for d in (a, b):
        sl.split(bc, d, 8, "--cores", "2", "--no-seed", *SPLIT)
    assert sl.tree_bytes(a) == sl.tree_bytes(b)
    assert plan(a)["partition_count"]["chosen"] < 8


def test_changed_cores_replans(tmp_path):
    """--cores is in the plan's key: outputs made with other cores are not current."""
    bc = frontend_bc(tmp_path, "m.cpp", cxx_source())
    out = tmp_path / "out"
    sl.split(bc, out, 8, "--cores", "2", *SPLIT)
    r = sl.split(bc, out, 8, "--cores", "2", "--stats", *SPLIT)
    assert "up to date" in r.stderr
    r = sl.split(bc, out, 8, "--cores", "8", "--stats", *SPLIT)
    assert "up to date" not in r.stderr
    assert plan(out)["partition_count"]["cores"] == 8 and len(parts(out)) == 8


def test_edit_keeps_the_seeded_count(tmp_path):
    """After an edit of one function the split is seeded with OUTDIR/plan.json: same count,
    the seed's count named in the plan, and only the edited function's partition changed."""
    out = tmp_path / "out"
    bc = frontend_bc(tmp_path, "m.cpp", cxx_source())
    sl.split(bc, out, 8, "--cores", "2", *SPLIT)
    before, k = parts(out), plan(out)["partition_count"]["chosen"]
    bc = frontend_bc(tmp_path, "m.cpp", cxx_source(edit=True))
    sl.split(bc, out, 8, "--cores", "2", *SPLIT)
    pc = plan(out)["partition_count"]
    assert pc["chosen"] == k and pc["seed"] == k, pc
    after = parts(out)
    assert len(after) == k
    assert sum(before[p] != after[p] for p in after) == 1


def test_seed_count_kept_within_margin_dropped_beyond(tmp_path):
    """A seed whose count the fresh prediction puts within 10% of the best span keeps its
    count (an edit must not flip it); one far worse does not."""
    bc = frontend_bc(tmp_path, "m.cpp", cxx_source())
    fresh = tmp_path / "fresh"
    sl.split(bc, fresh, 8, "--cores", "4", "--no-seed", *SPLIT)
    pc = plan(fresh)["partition_count"]
    best = min(c["span"] for c in pc["candidates"])
    near = [c["partitions"] for c in pc["candidates"]
            if best * 103 < c["span"] * 100 <= best * 110 and c["partitions"] != pc["chosen"]]
    far = [c["partitions"] for c in pc["candidates"] if c["span"] * 100 > best * 110]
    assert near and far, f"precondition: a count within 10% and one beyond: {pc}"
    edited = frontend_bc(tmp_path, "e.cpp", cxx_source(edit=True))
    for count, expect in ((near[0], near[0]), (far[0], pc["chosen"])):
        seed = tmp_path / f"seed{count}"
        sl.split(bc, seed, count, "--no-seed", *SPLIT)
        out = tmp_path / f"out{count}"
        sl.split(edited, out, 8, "--cores", "4", "--seed-plan", seed / "plan.json", *SPLIT)
        got = plan(out)["partition_count"]
        assert got["seed"] == count and got["fresh"] == pc["chosen"], got
        assert got["chosen"] == expect and len(parts(out)) == expect, got
