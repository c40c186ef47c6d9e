"""Runs every C unit test executable (tests/units/test_*.c → build/tests/test_*),
in the normal build and in the ASan + UBSan build. Each prints "N passed, N failed"."""
import os
import re

import pytest

from conftest import ASAN_BUILD, BUILD, ROOT, run

C_TESTS = sorted(p.stem for p in (ROOT / "tests" / "units").glob("test_*.c"))


def _check(build, name, tmp_path):
    exe = build / "tests" / name
    if not exe.exists():
        pytest.fail(f"{exe} not built")
    env = dict(os.environ,
               ASAN_OPTIONS="detect_leaks=1:abort_on_error=0",
               UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")
    r = run([exe, tmp_path], check=False, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    m = re.search(r"(\d+) passed, (\d+) failed", r.stdout)
    assert m and int(m.group(1)) > 0 and m.group(2) == "0", r.stdout


@pytest.mark.parametrize("name", C_TESTS)
def test_c_unit(name, tmp_path):
    _check(BUILD, name, tmp_path)


@pytest.mark.parametrize("name", C_TESTS)
def test_c_unit_sanitized(name, tmp_path, asan_build_dir):
    _check(asan_build_dir, name, tmp_path)
