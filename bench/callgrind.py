#!/usr/bin/env python3
"""Instructions executed by a program, counted by valgrind's callgrind.

`perf stat` cannot count instructions on these VMs (it reports them as "not supported"); callgrind's count is
repeatable, so it is the runtime figure for comparing two builds of one program (e.g.
speedtest1 built with plain ThinLTO and with MTPC).

  bench/callgrind.py -- ./speedtest1 --size 5
  bench/callgrind.py --compare build-thin/speedtest1 build-mtpc/speedtest1 -- --size 5

The count is callgrind's "Collected" total (the Ir event), read from valgrind's summary on
stderr, or from the "summary:"/"totals:" line of the callgrind output file as a fallback.
"""
import argparse
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

COLLECTED = re.compile(r"^==\d+==\s+Collected\s*:\s*(\d+)", re.M)
SUMMARY = re.compile(r"^(?:summary|totals):\s*(\d+)", re.M)


class CallgrindError(RuntimeError):
    pass


def parse_collected(stderr, outfile_text=""):
    """Instruction count from valgrind's stderr, else from the callgrind.out text."""
    m = COLLECTED.search(stderr)
    if m:
        return int(m.group(1))
    m = SUMMARY.search(outfile_text)
    if m:
        return int(m.group(1))
    raise CallgrindError("no 'Collected' line in valgrind's output nor a summary line in "
                         "the callgrind output file")


def instructions(cmd, cwd=None, valgrind="valgrind", keep=None, env=None):
    """Run cmd under callgrind; returns (instructions, program stdout). `keep`: path to
    keep the callgrind.out file at (for callgrind_annotate), else it is deleted. `env`:
    the program's environment (default: this process's)."""
    if shutil.which(valgrind) is None:
        raise CallgrindError(f"{valgrind} not found (run scripts/install-deps.sh)")
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(keep) if keep else pathlib.Path(tmp) / "callgrind.out"
        r = subprocess.run([valgrind, "--tool=callgrind", f"--callgrind-out-file={out}",
                            *map(str, cmd)], cwd=cwd, env=env, capture_output=True,
                           text=True)
        if r.returncode != 0:
            raise CallgrindError(f"{' '.join(map(str, cmd))} exited {r.returncode} under "
                                 f"valgrind:\n{r.stderr[-3000:]}")
        text = out.read_text(errors="replace") if out.exists() else ""
        return parse_collected(r.stderr, text), r.stdout


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--compare", nargs=2, metavar=("BASE", "NEW"),
                    help="run two programs with the same arguments (given after --) and "
                         "print NEW/BASE")
    ap.add_argument("--keep", help="keep the callgrind output file here (single run)")
    ap.add_argument("--json", action="store_true", help="print JSON")
    ap.add_argument("cmd", nargs=argparse.REMAINDER,
                    help="-- PROGRAM ARGS... (with --compare: -- ARGS...)")
    args = ap.parse_args(argv)
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    try:
        if args.compare:
            base, new = (os.path.abspath(p) for p in args.compare)
            ib, _ = instructions([base, *cmd])
            inew, _ = instructions([new, *cmd])
            res = {"base": base, "new": new, "args": cmd, "base_instructions": ib,
                   "new_instructions": inew, "ratio": inew / ib}
            if args.json:
                print(json.dumps(res))
            else:
                print(f"{ib}\t{base}\n{inew}\t{new}\nratio new/base {inew / ib:.4f}")
        else:
            if not cmd:
                ap.error("give the program to run after --")
            n, _ = instructions(cmd, keep=args.keep)
            print(json.dumps({"cmd": cmd, "instructions": n}) if args.json else n)
    except CallgrindError as e:
        print(f"callgrind: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
