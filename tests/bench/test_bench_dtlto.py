"""bench/dtlto_bench.py smoke test: --help, the .ninja_log / stamp parsing, and one repeat
of the three links (in-process ThinLTO, the plain DTLTO distributor, mtpc-distribute) on a
tiny 2-file program. Needs clang-22 (DTLTO: lld >= 21) and an MTPC build made with LLVM 22
(skipped otherwise). Quick (a few seconds)."""
import json
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import dtlto_bench  # noqa: E402
import predict  # noqa: E402

SCRIPT = ROOT / "bench" / "dtlto_bench.py"

BIG_C = """
static unsigned mix(unsigned x) { return x * 2654435761u ^ (x >> 13); }
unsigned f0(unsigned x) { for (int i = 0; i < 50; i++) x = mix(x + i); return x; }
unsigned f1(unsigned x) { for (int i = 0; i < 60; i++) x = mix(x ^ i) + f0(i); return x; }
unsigned f2(unsigned x) { switch (x % 4) { case 0: return f0(x); case 1: return f1(x);
                          default: return mix(x); } }
unsigned f3(unsigned x) { unsigned s = 0; for (unsigned i = 0; i < x % 100; i++) s += f2(i);
                          return s; }
"""
MAIN_C = """
#include <stdio.h>
unsigned f3(unsigned);
int main(void) { unsigned s = 0; for (unsigned i = 0; i < 200; i++) s += f3(i);
                 printf("checksum %08x\\n", s); return 0; }
"""


def test_help():
    r = subprocess.run([sys.executable, str(SCRIPT), "--help"], capture_output=True, text=True)
    assert r.returncode == 0
    for word in ("--repeats", "--jobs", "mtpc-distribute", "0.62", "1.005"):
        assert word in r.stdout


def test_classify_inner_edges_and_stamps(tmp_path):
    d = "/x/app.mtpc/mod"
    log = "\n".join(["# ninja log v5",
                     f"0\t1800\t1\t{d}/big.o-1234abcd/split.dd\tc1",
                     f"0\t1800\t1\t{d}/big.o-1234abcd/split.n\tc1",
                     f"0\t5000\t1\t{d}/main.o-89abcdef/native.o\tc2",
                     f"1800\t9000\t1\t{d}/big.o-1234abcd/p0.o\tc3",
                     f"5000\t9500\t1\t{d}/big.o-1234abcd/p1.o\tc4",
                     f"9500\t9560\t1\t{d}/big.o-1234abcd/native.o\tc5"]) + "\n"
    rows = dtlto_bench.classify(predict.parse_ninja_log(log))
    assert [(r[0], r[2]) for r in rows] == [
        ("split", "split big.o"), ("backend", "backend main.o"), ("slot", "slot big.o p0"),
        ("slot", "slot big.o p1"), ("merge", "merge big.o")]
    assert rows[-1][3:] == (9.5, 9.56)
    st = tmp_path / "t"
    st.write_text("start 100,25\nend 112.5\n")           # LC_NUMERIC with a comma
    assert dtlto_bench.read_stamps(st) == {"start": 100.25, "end": 112.5}


def test_tiny_program_one_repeat(tmp_path):
    if dtlto_bench.find_clang("22") is None:
        pytest.skip("clang-22 not installed (scripts/install-deps.sh)")
    if dtlto_bench.find_distribute("22") is None:
        pytest.skip("no MTPC build made with LLVM 22 (MTPC_LLVM_VERSION=22 scripts/build.sh "
                    "build-llvm22)")
    if shutil.which("ninja") is None:
        pytest.skip("ninja not installed")
    src = tmp_path / "src"
    src.mkdir()
    (src / "big.c").write_text(BIG_C)
    (src / "main.c").write_text(MAIN_C)
    srcs = [str(src / "big.c"), str(src / "main.c")]
    out = tmp_path / "r.json"
    argv = ["-r", "1", "-j", "2", "--sources", *srcs, "--mtpc-arg=--threshold=0",
            "--work", str(tmp_path / "w"), "--json", str(out)]
    argv += (["--runtime-sources", *srcs] if shutil.which("valgrind") else ["--no-callgrind"])
    assert dtlto_bench.main(argv) == 0
    data = json.loads(out.read_text())
    assert set(data["summary"]) == set(data["runs"]) == {"A", "B", "C", "Cw"}
    assert data["same_output"]
    a, c = data["summary"]["A"], data["summary"]["C"]
    assert a["wall_ratio"] == 1 and a["text"] > 0
    run = data["runs"]["C"][0]
    # mtpc-distribute ran (its summary line) and split the modules (--threshold=0)
    assert run["summary"] and "split" in run["summary"][0]
    inner = run["inner"]
    assert {e[0] for e in inner["edges"]} >= {"split", "slot", "merge"}
    assert inner["tail_idle"] >= 0 and set(inner["weights"]) == {"big.o", "main.o"}
    # the timeline adds up: thin link + distributor + final link = the link's wall
    assert run["thin_link"] + run["distributor"] + run["final_link"] == pytest.approx(
        run["wall"], abs=0.01)
    assert -0.02 < inner["pre"] < run["distributor"] and -0.02 < inner["post"] < 1
    assert 0 < run["floor"] and c["text_ratio"] > 0.9
    if shutil.which("valgrind"):
        assert data["runtime_same_output"] and c["instructions"] > 0
