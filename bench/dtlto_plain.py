#!/usr/bin/env python3
"""A plain DTLTO distributor: one compile per ThinLTO backend job, run locally.

lld (>= 21, Distributed ThinLTO) does the thin link, writes its backend jobs to a JSON file
and runs the distributor on it:

  clang -flto=thin -fuse-ld=lld -fthinlto-distributor=bench/dtlto_plain.py \\
        [-Xthinlto-distributor=--jobs=2] objects... -o app

The JSON is {"common": {"args": [...]}, "jobs": [{"args": [...], "inputs": [...],
"outputs": [...]}, ...]}; each job's command is common.args + job.args. This runs them with
a pool of --jobs processes (default: the cores), like LLVM's llvm/utils/dtlto/local.py (not
shipped by Debian's LLVM packages), and exits 1 if a job fails or leaves an output missing or
empty. It is the "one job per module" baseline of bench/dtlto_bench.py.
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", "-j", type=int, default=os.cpu_count(),
                    help="jobs run at a time (default: %(default)s, the cores)")
    ap.add_argument("json", help="lld's job list")
    args = ap.parse_args(argv)
    with open(args.json) as f:
        data = json.load(f)
    common = data["common"]["args"]
    jobs = data["jobs"]

    def run(job):
        return subprocess.run(common + job["args"], stdin=subprocess.DEVNULL).returncode

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        codes = list(pool.map(run, jobs))
    status = 0
    for job, code in zip(jobs, codes):
        bad = [o for o in job["outputs"] if not os.path.isfile(o) or not os.path.getsize(o)]
        if code or bad:
            print(f"dtlto_plain: the backend of {job['inputs'][0]} failed (exit status "
                  f"{code}{', no ' + ' '.join(bad) if bad else ''})", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
