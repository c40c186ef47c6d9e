"""SQLite through MTPC (issue #3 acceptance): bench/sqlite (amalgamation + shell + speedtest1 +
libsqlite3.so) built as a CMake project with include(MTPC) and forced splitting
(MTPC_SPLIT_THRESHOLD=0, MTPC_MAX_PARTITIONS=4), and again with plain ThinLTO. The two builds
must give the same shell output on a scripted session, the same speedtest1 verification hash,
the same results through libsqlite3.so, and the same exported symbols; the sqlite3.c module
must really have been split in every link.

Needs the amalgamation: runs bench/get-sqlite.sh when it is missing (skipped if that fails;
SQLITE_AMALGAMATION_DIR=<dir> uses another folder and never fetches). Takes minutes: marked
`slow` (deselect with -m "not slow"). With MTPC_SQLITE_TEST_DIR=<dir> the two builds are kept in
<dir>/thin and <dir>/mtpc and reused (incremental) by the next run."""
import os
import pathlib
import re
import subprocess
import sys
import time

import pytest

from conftest import BUILD, LLVM_BIN, ROOT, run, versioned_driver

pytestmark = pytest.mark.slow

PROJECT = ROOT / "bench" / "sqlite"
AMALGAMATION = pathlib.Path(os.environ.get("SQLITE_AMALGAMATION_DIR",
                                           ROOT / "bench" / "work" / "sqlite-amalgamation"))
CLANG = versioned_driver("clang")
PARTITIONS = 4
# What each MTPC-linked output is called, and the name of its inner build directory.
OUTPUTS = {"sqlite3": "sqlite3.mtpc", "speedtest1": "speedtest1.mtpc",
           "libsqlite3.so": "libsqlite3.so.mtpc"}
TIMINGS = {}


def configure(build, mtpc):
    cfg = BUILD / "cmake" / "MTPCConfig.cmake"
    if not cfg.exists():
        pytest.fail(f"MTPC not built in {BUILD} (run scripts/build.sh)")
    cmd = ["cmake", "-S", PROJECT, "-B", build, "-G", "Ninja",
           f"-DCMAKE_C_COMPILER={CLANG}", f"-DSQLITE_AMALGAMATION_DIR={AMALGAMATION}",
           "-DSQLITE_SHARED=ON", "-DCMAKE_C_FLAGS=-DSQLITE_ENABLE_FTS5"]
    if mtpc:
        cmd += ["-DSQLITE_USE_MTPC=ON", f"-DMTPC_DIR={cfg.parent}",
                "-DMTPC_SPLIT_THRESHOLD=0", f"-DMTPC_MAX_PARTITIONS={PARTITIONS}",
                "-DMTPC_JOBS=2", f"-DMTPC_CACHE={build / 'plans.sqlite'}",
                f"-DMTPC_SPLIT_EXECUTABLE={BUILD / 'splitter' / 'mtpc-split'}"]
    run(cmd)


def cmake_build(build):
    t0 = time.time()
    r = run(["cmake", "--build", build, "-j", "2"])
    return r.stdout + r.stderr, time.time() - t0


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    files = [AMALGAMATION / f for f in ("sqlite3.c", "sqlite3.h", "shell.c", "speedtest1.c")]
    if not all(f.exists() for f in files) and "SQLITE_AMALGAMATION_DIR" not in os.environ:
        # The documented way to get it (Debian source package; idempotent).
        r = run([ROOT / "bench" / "get-sqlite.sh"], check=False)
        if r.returncode != 0:
            pytest.skip("bench/get-sqlite.sh failed:\n" + (r.stdout + r.stderr)[-2000:])
    for f in files:
        if not f.exists():
            pytest.skip(f"{f} missing: run bench/get-sqlite.sh")
    keep = os.environ.get("MTPC_SQLITE_TEST_DIR")
    tmp = pathlib.Path(keep).resolve() if keep else tmp_path_factory.mktemp("sqlite")
    thin, mt = tmp / "thin", tmp / "mtpc"
    for output in OUTPUTS:  # a kept build: relink, so that mtpc-link reports on every link
        (mt / output).unlink(missing_ok=True)
    configure(thin, mtpc=False)
    configure(mt, mtpc=True)
    _, TIMINGS["thin"] = cmake_build(thin)
    out, TIMINGS["mtpc"] = cmake_build(mt)
    sys.stderr.write(f"\nsqlite builds: plain ThinLTO {TIMINGS['thin']:.0f} s, "
                     f"MTPC {TIMINGS['mtpc']:.0f} s\n")
    return thin, mt, out


def sqlite_moddir(inner):
    (d,) = (inner / "mod").glob("sqlite3.c.o-*")
    return d


def test_sqlite_module_was_split(builds):
    thin, mt, out = builds
    for output, inner in OUTPUTS.items():
        assert (mt / output).exists(), output
        assert not (thin / inner).exists()
        assert re.search(rf"mtpc-link: {re.escape(output)}: \d+ modules?, \d+ split \(", out), out
        d = sqlite_moddir(mt / inner)
        n = int((d / "split.n").read_text())
        assert 2 <= n <= PARTITIONS, (inner, n)
        assert sorted(p.name for p in (d / "parts").glob("p*.bc")) == \
            [f"p{i}.bc" for i in range(n)]
        for i in range(n):
            assert (d / f"p{i}.o").stat().st_size > 0
        assert (d / "native.o").stat().st_size > 0
    assert "fallback" not in out and "warning" not in out.lower(), out


SESSION = r"""
.headers on
.mode list
CREATE TABLE dept(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, budget REAL);
CREATE TABLE emp(id INTEGER PRIMARY KEY, name TEXT, dept INTEGER REFERENCES dept(id),
                 salary INTEGER, hired TEXT, info TEXT);
CREATE INDEX emp_dept ON emp(dept, salary DESC);
INSERT INTO dept(name, budget) VALUES ('eng', 1.5e6), ('ops', 4.25e5), ('sales', 7.5e5),
                                      ('empty', 0);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500)
INSERT INTO emp(name, dept, salary, hired, info)
  SELECT 'e' || i, 1 + i % 3, 40000 + (i * 7919) % 60000,
         date('2020-01-01', '+' || (i * 13 % 1000) || ' days'),
         json_object('level', i % 5, 'tags', json_array('t' || (i % 7), 't' || (i % 11)),
                     'score', round(i * 1.37 % 100, 2))
  FROM n;
SELECT d.name, count(e.id) AS n, sum(e.salary), min(e.salary), max(e.salary),
       round(avg(e.salary), 3) AS avg
  FROM dept d LEFT JOIN emp e ON e.dept = d.id GROUP BY d.id ORDER BY d.name;
SELECT name, salary, rank() OVER (PARTITION BY dept ORDER BY salary DESC, id) AS r
  FROM emp WHERE id % 37 = 0 ORDER BY dept, r;
SELECT strftime('%Y-%m', hired) AS month, count(*), group_concat(id, ',')
  FROM emp WHERE id < 60 GROUP BY month ORDER BY month;
SELECT json_extract(info, '$.level') AS level, count(*),
       sum(json_extract(info, '$.score')) FROM emp GROUP BY level ORDER BY level;
SELECT e.id, j.value FROM emp e, json_each(e.info, '$.tags') j WHERE e.id <= 3;
SELECT json_group_array(name) FROM (SELECT name FROM emp ORDER BY salary DESC, id LIMIT 5);
SELECT json_patch('{"a":1,"b":{"c":2}}', '{"b":{"d":3},"e":[1,2]}'), json_valid('{x'),
       json_type('[1,2.5,"s",null]', '$[1]');
SELECT printf('%08.3f|%-6s|%x|%e', 3.14159, 'ab', 255, 12345.678), upper('straße'),
       length(zeroblob(1000)), length(randomblob(16)), quote(x'00ff'), substr('abcdef', -3, 2),
       replace('a.b.c', '.', '::'), instr('hello', 'll'), unicode('é'), char(72, 105);
SELECT sqrt(2), pow(2, 10), floor(-1.5), ceil(-1.5), ln(exp(1)), 7 / 2, 7 % 3, 7.0 / 2,
       cast('12abc' AS INTEGER), typeof(1e400), abs(-9223372036854775807);
WITH RECURSIVE fib(a, b, k) AS (SELECT 0, 1, 0 UNION ALL SELECT b, a + b, k + 1 FROM fib
                                WHERE k < 80)
SELECT max(a), sum(a % 1000) FROM fib;
CREATE VIRTUAL TABLE docs USING fts5(title, body);
INSERT INTO docs SELECT 'doc' || id, 'the ' || name || ' works in ' ||
       (SELECT name FROM dept WHERE id = emp.dept) || CASE WHEN id % 4 = 0
       THEN ' with databases and indexes' ELSE ' on other things' END FROM emp WHERE id <= 120;
SELECT count(*) FROM docs WHERE docs MATCH 'databases AND eng';
SELECT title, snippet(docs, 1, '[', ']', '...', 4) FROM docs WHERE docs MATCH 'sales'
  ORDER BY rank, title LIMIT 5;
SELECT title, round(bm25(docs), 6) FROM docs WHERE docs MATCH 'indexes OR ops'
  ORDER BY bm25(docs), title LIMIT 4;
BEGIN;
UPDATE emp SET salary = salary + 1000 WHERE dept = 2;
DELETE FROM emp WHERE id % 10 = 0;
SAVEPOINT s1;
DELETE FROM emp;
ROLLBACK TO s1;
COMMIT;
SELECT count(*), sum(salary) FROM emp;
CREATE VIEW rich AS SELECT * FROM emp WHERE salary > 95000;
CREATE TRIGGER emp_log AFTER UPDATE ON emp BEGIN
  INSERT INTO dept(name, budget) VALUES ('log' || new.id, new.salary); END;
UPDATE emp SET salary = 1 WHERE id IN (SELECT id FROM rich ORDER BY id LIMIT 2);
SELECT * FROM dept ORDER BY id;
SELECT * FROM emp WHERE id IN (1, 2, 3) ORDER BY id;
EXPLAIN QUERY PLAN SELECT * FROM emp WHERE dept = 2 AND salary > 50000;
PRAGMA integrity_check;
.mode box
SELECT id, name, salary FROM emp ORDER BY salary DESC, id LIMIT 3;
.mode list
SELECT nosuchfunc(1);
.dump dept emp
"""


def shell_session(shell, db):
    """SESSION through the sqlite3 shell into a new database db, then the file it wrote
    checked (integrity, content): [(status, stdout, stderr) of each], db's name masked."""
    r = subprocess.run([shell, "-batch", db], input=SESSION, capture_output=True, text=True,
                       timeout=120)
    chk = subprocess.run([shell, db, "PRAGMA integrity_check; SELECT count(*), sum(salary), "
                          "group_concat(name) FROM emp;"], capture_output=True, text=True,
                         timeout=60)
    return [(r.returncode, r.stdout, r.stderr.replace(str(db), "DB")),
            (chk.returncode, chk.stdout, chk.stderr)]


def test_shell_session_same_output(builds, tmp_path):
    thin, mt, _ = builds
    outs = shell_session(thin / "sqlite3", tmp_path / "thin.db") + \
        shell_session(mt / "sqlite3", tmp_path / "mtpc.db")
    assert outs[2] == outs[0] and outs[3] == outs[1]
    rc, out, err = outs[0]
    # The session really ran the interesting parts (not an early error in both).
    assert "no such function: nosuchfunc" in err, err
    assert "CREATE VIRTUAL TABLE docs USING fts5" not in out  # .dump named tables only
    assert "INSERT INTO emp VALUES(499," in out
    assert "\neng|166|11695777|40336|99793|70456.488\n" in out, out[:2000]
    assert "23416728348467685|" in out  # fib(80)
    assert out.count("ok\n") >= 1 and outs[1][1].startswith("ok\n")


def speedtest_hash(exe):
    r = run([exe, "--size", "5", "--memdb", "--verify"], timeout=600)
    lines = [l for l in r.stdout.splitlines() if "Verification Hash" in l]
    assert len(lines) == 1, r.stdout
    return lines[0].split(":", 1)[1].strip()


def test_speedtest1_same_verification_hash(builds):
    thin, mt, _ = builds
    h = speedtest_hash(mt / "speedtest1")
    assert re.fullmatch(r"\d+ [0-9a-f]{32,}", h), h  # row count, hash
    assert h == speedtest_hash(thin / "speedtest1")


# Uses the library through ctypes in a fresh interpreter (not the one whose sqlite3 module
# may already have loaded the system library).
LIB_PROBE = r"""
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
CB = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int,
                      ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_char_p))
rows = []
def cb(_, n, vals, names):
    rows.append("|".join((vals[i] or b"NULL").decode() for i in range(n)))
    return 0
cb = CB(cb)
lib.sqlite3_libversion.restype = ctypes.c_char_p
lib.sqlite3_sourceid.restype = ctypes.c_char_p
db = ctypes.c_void_p()
assert lib.sqlite3_open(b":memory:", ctypes.byref(db)) == 0
err = ctypes.c_char_p()
sql = b'''
CREATE TABLE t(a INTEGER, b TEXT);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
INSERT INTO t SELECT i, hex(i * 2654435761 % 1000003) FROM n;
SELECT count(*), sum(a), max(b), min(length(b)) FROM t;
SELECT b, count(*) FROM t GROUP BY substr(b, 1, 1) ORDER BY 2 DESC, 1 LIMIT 5;
SELECT json_object('n', count(*), 'avg', avg(a)) FROM t WHERE a % 3 = 0;
CREATE VIRTUAL TABLE f USING fts5(x);
INSERT INTO f SELECT 'word' || (a % 17) || ' other' || (a % 5) FROM t;
SELECT count(*) FROM f WHERE f MATCH 'word3 AND other1';
'''
rc = lib.sqlite3_exec(db, sql, cb, None, ctypes.byref(err))
print(lib.sqlite3_libversion().decode(), lib.sqlite3_sourceid().decode(), rc, err.value)
print("\n".join(rows))
lib.sqlite3_close(db)
"""


def test_shared_library_same_results(builds):
    thin, mt, _ = builds
    outs = [run(["/usr/bin/python3", "-c", LIB_PROBE, b / "libsqlite3.so"]).stdout
            for b in (thin, mt)]
    assert outs[0] == outs[1]
    assert " 0 None\n" in outs[0] and "2000|2001000|" in outs[0], outs[0]


def dynamic_exports(path):
    out = run([LLVM_BIN / "llvm-nm", "-D", "--defined-only", path]).stdout
    return sorted(" ".join(l.split()[1:]) for l in out.splitlines() if l.strip())


def static_globals(path):
    out = run([LLVM_BIN / "llvm-nm", "--extern-only", "--defined-only", path]).stdout
    return sorted(" ".join(l.split()[1:]) for l in out.splitlines() if l.strip())


@pytest.mark.parametrize("output", ["libsqlite3.so", "sqlite3", "speedtest1"])
def test_same_exported_symbols(builds, output):
    thin, mt, _ = builds
    exp = dynamic_exports(mt / output)
    assert exp == dynamic_exports(thin / output)
    assert static_globals(mt / output) == static_globals(thin / output)
    if output == "libsqlite3.so":
        names = {e.split()[-1] for e in exp}
        assert {"sqlite3_open_v2", "sqlite3_exec", "sqlite3_prepare_v2"} <= names
    # No promoted helper leaks into any global symbol table.
    assert not [s for s in exp + static_globals(mt / output) if ".mtpc" in s or ".llvm." in s]
