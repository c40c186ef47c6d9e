#!/usr/bin/python3
"""Validation-only adapter: makes `llvm-split-19` look like `mtpc-split`.

NOT a test of llvm-split and not used by the suite unless you ask for it:

    MTPC_SPLIT_CMD="/usr/bin/python3 tests/hazards/llvm_split_adapter.py" \
        /usr/bin/python3 -m pytest tests/split/test_split_hazards.py

It exists so the hazard harness can be checked against a splitter known to get some hazards
wrong (ifuncs, module asm, ...) before mtpc-split lands. Usage mirrors mtpc-split:
    llvm_split_adapter.py INPUT.bc -o OUTDIR --partitions N [--min-cost C] [--verify]
Output layout: OUTDIR/p<i>.bc, OUTDIR/plan.json (version 1, partial), OUTDIR/localize.txt
(the input's local symbols, which llvm-split externalizes as hidden without renaming).
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile

# The LLVM of the MTPC under test (tests/conftest.py exports MTPC_LLVM_BIN).
BIN = os.environ.get("MTPC_LLVM_BIN", "/usr/lib/llvm-19/bin")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("input")
    ap.add_argument("-o", dest="out", required=True)
    ap.add_argument("--partitions", type=int, required=True)
    ap.add_argument("--min-cost", type=int, default=0)
    ap.add_argument("--verify", action="store_true")
    a = ap.parse_args()
    inp = pathlib.Path(a.input)
    if not inp.is_file():
        sys.exit(f"mtpc-split: error: {a.input}: no such file")
    out = pathlib.Path(a.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        sys.exit(f"mtpc-split: error: {a.out}: {e.strerror}")
    with tempfile.TemporaryDirectory(dir=out) as tmp:
        r = subprocess.run([f"{BIN}/llvm-split", "-j", str(a.partitions), "-o",
                            f"{tmp}/p", str(inp)], capture_output=True, text=True)
        if r.returncode != 0:
            msg = (r.stderr.strip().splitlines() or ["failed"])[0]
            sys.exit(f"mtpc-split: error: {a.input}: {msg}")
        def names(path, *flags):
            out = subprocess.run([f"{BIN}/llvm-nm", "--defined-only", *flags, str(path)],
                                 capture_output=True, text=True, check=True).stdout
            return {ln.split()[-1] for ln in out.splitlines() if ln.split()}
        exported = names(inp, "--extern-only")
        parts = []
        for i in range(a.partitions):
            src = pathlib.Path(f"{tmp}/p{i}")
            if not src.exists():
                break
            if a.verify:
                subprocess.run([f"{BIN}/opt", "-passes=verify", "-disable-output", str(src)],
                               check=True)
            os.replace(src, out / f"p{i}.bc")
            parts.append({"index": i, "file": f"p{i}.bc"})
        for stale in out.glob("p*.bc"):
            if stale.stem[1:].isdigit() and int(stale.stem[1:]) >= len(parts):
                stale.unlink()
        local = set()
        for p in parts:
            local |= names(out / p["file"], "--extern-only") - exported
        local = sorted(local)
        (out / "localize.txt").write_text("".join(s + "\n" for s in local))
        (out / "plan.json").write_text(json.dumps(
            {"version": 1, "module": str(inp), "partitions": parts, "localize": local},
            indent=1) + "\n")


if __name__ == "__main__":
    main()
