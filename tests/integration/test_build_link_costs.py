"""What a link through mtpc-link costs beyond plain ThinLTO (docs/build-integration.md): a
merge runs only the processes it needs, modules are named apart in the summary line, and
the inner build's progress reaches the terminal while the link runs, without Ninja's
"Entering directory" line among the link's output."""
import os
import pathlib
import re
import shutil
import subprocess

from conftest import llvm_tool, run, tool


def objects(d, sources):
    """ThinLTO objects of {relative path: C text} in d."""
    objs = []
    for rel, text in sources.items():
        src = d / rel
        src.parent.mkdir(parents=True, exist_ok=True)
        src.write_text(text)
        obj = src.with_suffix(".o")
        run([llvm_tool("clang"), "-O2", "-flto=thin", "-c", src, "-o", obj])
        objs.append(obj)
    return objs


FUNCS = "".join(f"__attribute__((noinline)) int f{i}(int x) {{ int s = x; for (int k = 0; k < x; "
                f"k++) s = s * {i + 3} + k; return s; }}\n" for i in range(6))
MAIN = ("#include <stdio.h>\nint f0(int), f1(int), f2(int), f3(int), f4(int), f5(int);\n"
        "int main(int c, char **v) { (void)v; printf(\"%d\\n\", f0(c) + f1(c) + f2(c) + f3(c) "
        "+ f4(c) + f5(c)); return 0; }\n")


def link(d, objs, out, *opts, env=None):
    return run([tool("mtpc-link"), "--threshold", "0", "--min-cost", "0", "--jobs", "2",
                "--cache", d / "plans.sqlite", *opts, "--", llvm_tool("clang"), "-O2",
                "-flto=thin", "-fuse-ld=lld", "-rdynamic", *objs, "-o", out], env=env)


def merge_commands(inner, module):
    """The commands the merge step of module ran (strace of the inner build)."""
    return [l for l in (inner / "merge.trace").read_text().splitlines() if module in l]


def test_one_partition_is_the_native_object(tmp_path):
    """A module split into one partition with nothing promoted or renamed (N = 1 writes the
    module unchanged) needs no ld.lld -r and no llvm-objcopy: its native object is the
    partition's object, byte for byte. With two partitions both run."""
    objs = objects(tmp_path, {"lib.c": FUNCS, "main.c": MAIN})
    out = tmp_path / "one"
    link(tmp_path, objs, out, "--partitions", "2", "--split-arg", "--partitions",
         "--split-arg", "1")
    inner = tmp_path / "one.mtpc"
    mod = next((inner / "mod").glob("lib.o-*"))
    assert (mod / "split.n").read_text().strip() == "1"
    assert (mod / "native.o").read_bytes() == (mod / "p0.o").read_bytes()
    want = run([out]).stdout
    out2 = tmp_path / "two"
    link(tmp_path, objs, out2, "--partitions", "2")
    mod2 = next((tmp_path / "two.mtpc" / "mod").glob("lib.o-*"))
    assert (mod2 / "split.n").read_text().strip() == "2"
    assert (mod2 / "native.o").read_bytes() != (mod2 / "p0.o").read_bytes()
    assert run([out2]).stdout == want


def test_merge_runs_only_what_it_needs(tmp_path):
    """The merge step traced (strace): with one partition neither ld.lld nor llvm-objcopy
    runs; with two partitions and nothing promoted (every function external) ld.lld -r runs
    but not llvm-objcopy."""
    if not shutil.which("strace"):
        import pytest
        pytest.skip("strace not installed")
    objs = objects(tmp_path, {"lib.c": FUNCS, "main.c": MAIN})
    for parts, want in ((1, set()), (2, {"ld.lld"})):
        out = tmp_path / f"p{parts}"
        link(tmp_path, objs, out, "--partitions", "2", "--split-arg", "--partitions",
             "--split-arg", str(parts))
        inner = pathlib.Path(f"{out}.mtpc")
        assert not (next((inner / "mod").glob("lib.o-*")) / "parts" / "localize.txt").read_text()
        # the merge's command as build.ninja has it, run again under strace
        cmd = re.search(r"build mod/lib\.o-[0-9a-f]+/native\.o: merge[^\n]*\n(?:  [^\n]*\n)*?"
                        r"  cmd = ([^\n]*)\n", (inner / "build.ninja").read_text()).group(1)
        trace = tmp_path / f"trace{parts}"
        run(["strace", "-f", "-qq", "-e", "trace=execve", "-o", trace, "sh", "-c", cmd], cwd=inner)
        ran = {pathlib.Path(m).name for m in re.findall(r'execve\("([^"]+)"', trace.read_text())}
        assert ran & {"ld.lld", "llvm-objcopy"} == want, (parts, ran)


def test_modules_of_one_name_are_told_apart(tmp_path):
    """Two modules named unity_0_c.c.o in different directories (as a unity build makes
    them): the summary line names each by as much of its path as tells them apart."""
    objs = objects(tmp_path, {"a/Unity/unity_0_c.c": FUNCS,
                              "b/Unity/unity_0_c.c": MAIN})
    r = link(tmp_path, objs, tmp_path / "app", "--partitions", "2")
    line = [l for l in r.stdout.splitlines() if l.startswith("mtpc-link: app:")][0]
    assert "a/Unity/unity_0_c.o" in line and "b/Unity/unity_0_c.o" in line, line


def test_progress_reaches_the_terminal(tmp_path):
    """With stdout captured (as by the outer Ninja) and a terminal: the progress lines go to
    the terminal while the link runs, the summary to stdout; no "Entering directory"."""
    if not shutil.which("script"):
        import pytest
        pytest.skip("script (util-linux) not installed")
    objs = objects(tmp_path, {"lib.c": FUNCS, "main.c": MAIN})
    captured = tmp_path / "captured.txt"
    cmd = " ".join(f"'{w}'" for w in [
        tool("mtpc-link"), "--threshold", "0", "--min-cost", "0", "--partitions", "2",
        "--cache", tmp_path / "plans.sqlite", "--", llvm_tool("clang"), "-O2", "-flto=thin",
        "-fuse-ld=lld", "-rdynamic", *objs, "-o", tmp_path / "app"])
    typescript = tmp_path / "typescript"
    subprocess.run(["script", "-qec", f"{cmd} > {captured}", str(typescript)], check=True,
                   stdout=subprocess.DEVNULL, timeout=300)
    tty = typescript.read_text(errors="replace")
    out = captured.read_text()
    assert re.search(r"\[app \d+/\d+\] MTPC slot lib\.o-[0-9a-f]+ p1", tty), tty
    assert "MTPC slot" not in out and "Entering directory" not in out + tty, out
    assert re.search(r"^mtpc-link: app: 2 modules", out, re.M), out


def test_first_link_runs_plain_then_learns(tmp_path):
    """A module that could be split once its history is known (here: over half of the cost
    threshold) makes a relink run its inner build, whose edges record that history; the
    first link of an output runs as plain ThinLTO (a full build pays nothing for history)."""
    objs = objects(tmp_path, {"lib.c": FUNCS, "main.c": MAIN})
    cost = int(run([tool("mtpc-split"), "--print-cost", objs[0]]).stdout.split()[0])
    out = tmp_path / "app"
    inner = tmp_path / "app.mtpc"

    def mtpc_link():
        return run([tool("mtpc-link"), "--cost-threshold", str(cost * 3 // 2), "--relay", "never",
                    "--jobs", "2", "--cache", tmp_path / "plans.sqlite", "--",
                    llvm_tool("clang"), "-O2", "-flto=thin", "-fuse-ld=lld", *objs, "-o", out])

    r = mtpc_link()
    assert not (inner / "build.ninja").exists(), r.stdout   # plain ThinLTO, as given:
    assert not (inner / "thinlto-cache").exists()           # no cache on a first link
    first = run([out, "x"]).stdout
    out.unlink()
    r = mtpc_link()
    assert (inner / "build.ninja").exists(), r.stdout       # watched: the inner build
    assert run([out, "x"]).stdout == first


def test_plain_relink_uses_lld_cache(tmp_path):
    """A link with nothing to split or watch runs as plain ThinLTO: exactly the command as
    given the first time; from the first relink on (its <output>.mtpc/ is there) with lld's
    ThinLTO cache in it, so that the relinks after are incremental."""
    objs = objects(tmp_path, {"lib.c": FUNCS, "main.c": MAIN})
    out, inner = tmp_path / "app", tmp_path / "app.mtpc"

    def mtpc_link():
        return run([tool("mtpc-link"), "--cost-threshold", "100000000", "--relay", "never",
                    "--jobs", "2", "--cache", tmp_path / "plans.sqlite", "--",
                    llvm_tool("clang"), "-O2", "-flto=thin", "-fuse-ld=lld", *objs, "-o", out])

    mtpc_link()
    assert inner.is_dir() and not (inner / "thinlto-cache").exists()
    first = run([out, "x"]).stdout
    for _ in range(2):
        out.unlink()
        mtpc_link()
        assert not (inner / "build.ninja").exists()
        assert any((inner / "thinlto-cache").iterdir())
        assert run([out, "x"]).stdout == first
