#!/usr/bin/python3
"""Stand-in for mtpc-split used by the build-integration tests, following the
CLI contract of docs/architecture.md:
  fake_split.py INPUT.bc -o OUTDIR --partitions N --thinlto-index IDX
                --relocation-model static|pic [--min-cost C]
It runs the real ThinLTO import (clang -save-temps=obj leaves the post-import
module X.3.import.bc) and writes it as p0.bc; p1..p<n-1> are tiny filler
modules, with n = min(N, $FAKE_SPLIT_N or N). FAKE_SPLIT_FAIL=1 makes it fail,
to exercise the fallback. Files are written only if changed, like mtpc-split."""
import json
import os
import pathlib
import subprocess
import sys
import tempfile

# The LLVM of the MTPC under test (tests/conftest.py exports MTPC_LLVM_BIN).
CLANG = os.path.join(os.environ.get("MTPC_LLVM_BIN", "/usr/lib/llvm-19/bin"), "clang")


def write_if_changed(path, data):
    path = pathlib.Path(path)
    if path.exists() and path.read_bytes() == data:
        return
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


# mtpc-split options without a value (the steps pass them).
FLAGS = {"--placeholder-checksums", "--virtual-lines"}


def main(argv):
    args = {"--partitions": "1", "--relocation-model": "pic"}
    inp = None
    i = 0
    while i < len(argv):
        if argv[i] in FLAGS:
            args[argv[i]] = "1"
            i += 1
        elif argv[i].startswith("-"):
            args[argv[i]] = argv[i + 1]
            i += 2
        else:
            inp = argv[i]
            i += 1
    if os.environ.get("FAKE_SPLIT_FAIL"):
        print(f"fake_split: {inp}: failing on purpose", file=sys.stderr)
        return 1
    out = pathlib.Path(args["-o"])
    out.mkdir(parents=True, exist_ok=True)
    n = int(args["--partitions"])
    if os.environ.get("FAKE_SPLIT_N"):
        n = max(1, min(n, int(os.environ["FAKE_SPLIT_N"])))
    with tempfile.TemporaryDirectory() as tmp:
        obj = pathlib.Path(tmp) / "m.o"
        pic = "-fPIC" if args["--relocation-model"] == "pic" else "-fno-pic"
        subprocess.run([CLANG, "-c", "-x", "ir", os.path.abspath(inp),
                        "-fthinlto-index=" + os.path.abspath(args["--thinlto-index"]),
                        "-O2", pic, "-save-temps=obj", "-o", str(obj)], check=True, cwd=tmp)
        imported = next(pathlib.Path(tmp).glob("*.3.import.bc"))
        write_if_changed(out / "p0.bc", imported.read_bytes())
        for k in range(1, n):
            src = pathlib.Path(tmp) / f"f{k}.c"  # compiled by relative name: deterministic
            # Defines nothing global: it must not collide across modules.
            # A local symbol only (must not collide across modules), kept so
            # tests can see which partitions a merged object holds.
            src.write_text(f"__attribute__((used)) static int mtpc_filler_{k}(void) "
                           f"{{ return {k}; }}\n")
            bc = pathlib.Path(tmp) / f"f{k}.bc"
            subprocess.run([CLANG, "-c", "-emit-llvm", "-O0", src.name, "-o", bc.name],
                           check=True, cwd=tmp)
            write_if_changed(out / f"p{k}.bc", bc.read_bytes())
    k = n
    while (out / f"p{k}.bc").exists():
        (out / f"p{k}.bc").unlink()
        k += 1
    plan = {"version": 1, "module": inp, "source_file": inp, "input_hash": "0" * 64,
            "options_hash": "1" * 64,
            "partitions": [{"index": k, "file": f"p{k}.bc", "cost": 1, "owned": [],
                            "copies": [], "duplicated": []} for k in range(n)],
            "promoted": [], "localize": [], "edges": [], "stats": {}}
    write_if_changed(out / "plan.json", json.dumps(plan, indent=1).encode())
    write_if_changed(out / "localize.txt", b"")
    write_if_changed(out / "rename.txt", b"")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
