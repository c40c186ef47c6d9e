"""mtpc-cache: every subcommand's output, hit/miss/previous behaviour, many
processes writing at once, and each failure mode (missing, unwritable, locked,
corrupt database)."""
import hashlib
import json
import os
import shutil
import sqlite3
import stat
import subprocess

import pytest

from conftest import run, tool

COMMANDS = ["list", "show", "stats", "diff", "gc", "export", "path", "record", "store", "lookup"]
READ_ONLY = [["list"], ["show", "m.o"], ["stats"], ["diff", "m.o"], ["export"]]


def plan(parts, edges=(), module="m.o"):
    """A version 1 plan.json: parts maps partition index -> owned names."""
    return {
        "version": 1, "module": module, "source_file": "m.c",
        "input_hash": "x", "options_hash": "y",
        "partitions": [{"index": i, "file": f"p{i}.bc", "cost": 10 * len(owned) + i,
                        "owned": owned, "copies": [], "duplicated": []}
                       for i, owned in sorted(parts.items())],
        "promoted": [], "localize": [], "edges": [list(e) for e in edges],
        "stats": {"functions": sum(map(len, parts.values())), "units": 0,
                  "largest_unit_cost": 0, "split_seconds": 0.0},
    }


PLAN_A = plan({0: ["f", "g"], 1: ["h"]}, [(0, 1, 3)])
PLAN_B = plan({0: ["f", "k"], 1: ["g", "h"]}, [(1, 0, 5), (0, 1, 1)])
HASH_A = "a1" * 32
HASH_B = "b2" * 32
OPTS = "0f" * 32


@pytest.fixture
def env(tmp_path):
    """An environment that cannot reach the user's real cache."""
    e = {k: v for k, v in os.environ.items()
         if k not in ("MTPC_CACHE", "XDG_CACHE_HOME", "MTPC_CACHE_BUSY_TIMEOUT_MS")}
    e["HOME"] = str(tmp_path / "home")
    return e


@pytest.fixture
def db(tmp_path):
    return tmp_path / "cache" / "plans.sqlite"


def mc(*args, check=True, env=None, **kw):
    return run([tool("mtpc-cache"), *args], check=check, env=env, **kw)


def store(db, env, p, module_hash, module="build/m.o", seconds=2.0, hit=False, options=OPTS):
    f = db.parent.parent / f"plan-{module_hash[:8]}.json"
    f.write_text(json.dumps(p))
    args = ["store", "--cache", db, "--module", module, "--module-hash", module_hash,
            "--options-hash", options, "--plan", f, "--seconds", seconds]
    r = mc(*args, *(["--hit"] if hit else []), env=env)
    assert r.stderr == ""
    return r


def record(db, env, module_hash, part, seconds, nbytes, **kw):
    return mc("record", "--cache", db, "--module-hash", module_hash, "--options-hash", OPTS,
              "--partition", part, "--seconds", seconds, "--object-bytes", nbytes, env=env, **kw)


@pytest.fixture
def filled(db, env):
    """Two plans of build/m.o (A then its edit B), a hit on A, timings of A."""
    store(db, env, PLAN_A, HASH_A, seconds=2.0)
    record(db, env, HASH_A, 0, 1.5, 12345)
    record(db, env, HASH_A, 1, 0.5, 2048)
    store(db, env, PLAN_A, HASH_A, seconds=0.25, hit=True)
    store(db, env, PLAN_B, HASH_B, seconds=3.0)
    return db


def sql(db, query, *args):
    con = sqlite3.connect(db)
    try:
        return con.execute(query, args).fetchall()
    finally:
        con.close()


def disk_size(db):
    return sum(os.path.getsize(p) for p in (db, f"{db}-wal") if os.path.exists(p))


def digest(*paths):
    h = hashlib.sha256()
    for p in paths:
        if os.path.exists(p):
            h.update(open(p, "rb").read())
    return h.hexdigest()


# ---- help and usage -------------------------------------------------------

def test_help_lists_every_command(env):
    r = mc("--help", env=env)
    assert r.stdout.startswith("usage: mtpc-cache")
    for cmd in COMMANDS:
        assert f"  {cmd} " in r.stdout


@pytest.mark.parametrize("cmd", COMMANDS)
def test_subcommand_help(cmd, env):
    for flag in ("--help", "-h"):
        r = mc(cmd, flag, env=env)
        assert r.stdout.startswith(f"usage: mtpc-cache {cmd}"), r.stdout
        assert r.stderr == ""


def test_usage_errors(env, db):
    r = mc(env=env, check=False)
    assert r.returncode == 2 and "usage:" in r.stderr
    r = mc("frobnicate", env=env, check=False)
    assert r.returncode == 2 and "unknown command 'frobnicate'" in r.stderr
    r = mc("list", "--bogus", "--cache", db, env=env, check=False)
    assert r.returncode == 2 and "unknown option '--bogus'" in r.stderr
    assert "mtpc-cache list --help" in r.stderr
    r = mc("show", "--cache", db, env=env, check=False)
    assert r.returncode == 2 and "which plan" in r.stderr
    r = mc("record", "--cache", db, "--module-hash", "h", env=env, check=False)
    assert r.returncode == 2
    r = mc("gc", "--cache", db, env=env, check=False)
    assert r.returncode == 2 and "--max-age" in r.stderr
    assert not db.exists()


# ---- path -------------------------------------------------------------------

def test_path_rules(env, tmp_path, db):
    r = mc("path", "--cache", db, env=env)
    lines = r.stdout.splitlines()
    assert lines[0] == str(db) and "--cache option" in lines[1] and "exists: no" in lines[2]
    r = mc("--cache", db, "path", env=env)  # global form
    assert r.stdout.splitlines()[0] == str(db)
    e = dict(env, MTPC_CACHE=str(tmp_path / "env.sqlite"), XDG_CACHE_HOME=str(tmp_path / "xdg"))
    r = mc("path", env=e)
    assert r.stdout.splitlines()[0] == str(tmp_path / "env.sqlite")
    assert "$MTPC_CACHE" in r.stdout.splitlines()[1]
    del e["MTPC_CACHE"]
    r = mc("path", env=e)
    assert r.stdout.splitlines()[0] == str(tmp_path / "xdg/mtpc/plans.sqlite")
    assert "XDG_CACHE_HOME" in r.stdout.splitlines()[1]
    r = mc("path", env=env)
    assert r.stdout.splitlines()[0] == str(tmp_path / "home/.cache/mtpc/plans.sqlite")
    assert "$HOME" in r.stdout.splitlines()[1]
    assert not (tmp_path / "home").exists()  # path never creates anything


def test_env_var_is_what_the_build_uses(env, tmp_path):
    """store (as the build does) and list find the same database via MTPC_CACHE."""
    e = dict(env, MTPC_CACHE=str(tmp_path / "via-env.sqlite"))
    f = tmp_path / "p.json"
    f.write_text(json.dumps(PLAN_A))
    mc("store", "--module", "m.o", "--module-hash", HASH_A, "--options-hash", OPTS,
       "--plan", f, env=e)
    assert (tmp_path / "via-env.sqlite").exists()
    assert HASH_A[:12] in mc("list", env=e).stdout


# ---- hit, miss, previous ----------------------------------------------------

def test_hit_miss_previous(db, env):
    lk = ["lookup", "--cache", db, "--options-hash", OPTS]
    r = mc(*lk, "--module-hash", HASH_A, env=env, check=False)
    assert r.returncode == 1 and r.stdout == "" and r.stderr == ""  # no cache yet: a miss
    assert not db.exists()
    store(db, env, PLAN_A, HASH_A)
    r = mc(*lk, "--module-hash", HASH_A, env=env)
    assert json.loads(r.stdout) == PLAN_A  # exact hit: the plan as stored
    r = mc("lookup", "--cache", db, "--options-hash", "other", "--module-hash", HASH_A,
           env=env, check=False)
    assert r.returncode == 1  # other options: miss
    record(db, env, HASH_A, 1, 0.75, 4096)
    # Edit: the new module hash misses; the previous plan of the path seeds it,
    # with the measured numbers of the partitions that have them.
    assert mc(*lk, "--module-hash", HASH_B, env=env, check=False).returncode == 1
    r = mc(*lk, "--previous", "--module", "build/m.o", env=env)
    prev = json.loads(r.stdout)
    assert [p["owned"] for p in prev["partitions"]] == [["f", "g"], ["h"]]
    assert "measured_seconds" not in prev["partitions"][0]
    assert prev["partitions"][1]["measured_seconds"] == 0.75
    assert prev["partitions"][1]["object_bytes"] == 4096
    assert mc(*lk, "--previous", "--module", "other.o", env=env, check=False).returncode == 1
    # Once B is stored it is the previous plan.
    store(db, env, PLAN_B, HASH_B)
    r = mc(*lk, "--previous", "--module", "build/m.o", env=env)
    assert [p["owned"] for p in json.loads(r.stdout)["partitions"]] == [["f", "k"], ["g", "h"]]
    # A hit re-stores A: it becomes the most recently used plan again.
    store(db, env, PLAN_A, HASH_A, seconds=0.1, hit=True)
    r = mc(*lk, "--previous", "--module", "build/m.o", env=env)
    assert json.loads(r.stdout)["partitions"][1]["measured_seconds"] == 0.75
    assert sql(db, "SELECT count(*), sum(hit) FROM builds") == [(3, 1)]


def test_store_refuses_bad_plan_with_one_warning(db, env, tmp_path):
    f = tmp_path / "bad.json"
    f.write_text("{not json")
    r = mc("store", "--cache", db, "--module", "m.o", "--module-hash", HASH_A,
           "--options-hash", OPTS, "--plan", f, env=env)
    assert len(r.stderr.splitlines()) == 1 and "warning" in r.stderr
    assert sql(db, "SELECT count(*) FROM plans") == [(0,)]


# ---- list / show ------------------------------------------------------------

def test_list(filled, env):
    r = mc("list", "--cache", filled, env=env)
    lines = r.stdout.splitlines()
    assert lines[0].split()[:3] == ["HASH", "OPTIONS", "PARTS"]
    assert len(lines) == 4 and lines[-1] == f"2 plans in {filled}"
    a = next(l for l in lines if l.startswith(HASH_A[:12]))
    assert a.endswith("build/m.o")
    assert a.split()[2:7] == ["2", "3", "31", "2", "1"]  # parts, funcs, cost, builds, hits
    j = json.loads(mc("list", "--cache", filled, "--json", env=env).stdout)
    assert {p["module_hash"] for p in j} == {HASH_A, HASH_B}
    a = next(p for p in j if p["module_hash"] == HASH_A)
    assert (a["builds"], a["hits"], a["partitions"], a["functions"]) == (2, 1, 2, 3)
    assert a["measured_partitions"] == 2 and a["measured_seconds"] == 2.0
    assert a["module_path"] == "build/m.o" and a["options_hash"] == OPTS


def test_list_empty(db, env):
    store(db, env, PLAN_A, HASH_A)
    mc("gc", "--cache", db, "--max-size", "0", env=env)
    assert mc("list", "--cache", db, env=env).stdout.splitlines()[-1] == f"0 plans in {db}"
    assert json.loads(mc("list", "--cache", db, "--json", env=env).stdout) == []


def test_show(filled, env):
    r = mc("show", "--cache", filled, "build/m.o", env=env)  # most recent plan: B
    assert f"module hash   {HASH_B}" in r.stdout
    r = mc("show", "--cache", filled, HASH_A[:6], env=env)
    out = r.stdout
    assert "module        build/m.o" in out and f"options hash  {OPTS}" in out
    assert "builds        2 (1 hits)" in out
    rows = [l.split() for l in out.splitlines() if l.strip().startswith(("0 ", "1 "))]
    assert rows[0][:5] == ["0", "p0.bc", "20", "2", "0"] and rows[0][-4:] == ["1.500", "s", "12.1", "KiB"]
    assert rows[1][-4:] == ["0.500", "s", "2.0", "KiB"]
    assert "cross-partition edges: 1 (3 references)" in out
    assert "owns" not in out
    r = mc("show", "--cache", filled, HASH_A, "--functions", env=env)
    assert "p0 owns: f g" in r.stdout and "p1 owns: h" in r.stdout
    # The file name alone (a unique path suffix) finds the module too.
    assert HASH_B in mc("show", "--cache", filled, "m.o", env=env).stdout


def test_show_json(filled, env):
    j = json.loads(mc("show", "--cache", filled, HASH_A, "--json", env=env).stdout)
    assert j["module_hash"] == HASH_A and j["hits"] == 1
    p = j["plan"]
    assert p["edges"] == [[0, 1, 3]] and p["version"] == 1
    assert p["partitions"][0]["measured_seconds"] == 1.5
    assert p["partitions"][0]["object_bytes"] == 12345
    assert p["partitions"][0]["owned"] == ["f", "g"]


def test_show_unknown_and_ambiguous(filled, env, db):
    r = mc("show", "--cache", filled, "nosuch.o", env=env, check=False)
    assert r.returncode == 1 and "no plan for module or hash 'nosuch.o'" in r.stderr
    assert str(filled) in r.stderr
    store(db, env, PLAN_B, "a1ff" + "0" * 60, module="build/n.o")
    r = mc("show", "--cache", filled, "a1", env=env, check=False)
    assert r.returncode == 1 and "matches several" in r.stderr


def test_show_dot(filled, env):
    r = mc("show", "--cache", filled, HASH_B, "--dot", env=env)
    dot = r.stdout
    assert dot.startswith('digraph "build/m.o" {') and dot.rstrip().endswith("}")
    assert 'p1 -> p0 [label="5"' in dot and 'p0 -> p1 [label="1"' in dot
    assert "p0 [label=" in dot and "p1 [label=" in dot
    r = mc("show", "--cache", filled, HASH_A, "--dot", env=env)
    assert "1.50 s" in r.stdout  # measured time in the node label
    if shutil.which("dot"):
        subprocess.run(["dot", "-Tsvg"], input=dot, text=True, check=True, capture_output=True)


def test_show_render_with_fake_dot(filled, env, tmp_path):
    """--render runs `dot -T<fmt> -o OUT` with the DOT text on stdin."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    fake = bindir / "dot"
    fake.write_text('#!/bin/sh\n{ echo "$@"; cat; } > "$3"\n')
    fake.chmod(0o755)
    out = tmp_path / "plan.svg"
    e = dict(env, PATH=f"{bindir}:{env['PATH']}")
    r = mc("show", "--cache", filled, HASH_B, "--render", out, env=e)
    assert r.stdout == "" and r.stderr == ""
    text = out.read_text()
    assert text.startswith(f"-Tsvg -o {out}\n") and "digraph" in text
    r = mc("show", "--cache", filled, HASH_B, "--dot", "--render", tmp_path / "x.png", env=e)
    assert (tmp_path / "x.png").read_text().startswith("-Tpng")
    # A failing dot is an error naming the output.
    fake.write_text("#!/bin/sh\nexit 3\n")
    r = mc("show", "--cache", filled, HASH_B, "--render", out, env=e, check=False)
    assert r.returncode == 1 and str(out) in r.stderr and "exit status 3" in r.stderr


def test_show_render_without_dot(filled, env, tmp_path):
    e = dict(env, PATH=str(tmp_path / "empty"))
    out = tmp_path / "plan.svg"
    r = run([tool("mtpc-cache"), "show", "--cache", filled, HASH_B, "--render", out],
            env=e, check=False)
    assert r.returncode == 1 and "dot" in r.stderr and "not installed" in r.stderr
    assert len(r.stderr.splitlines()) == 1 and not out.exists()
    r = mc("show", "--cache", filled, HASH_B, "--render", tmp_path / "plan.txt", env=e, check=False)
    assert r.returncode == 2 and ".svg" in r.stderr


@pytest.mark.skipif(not shutil.which("dot"), reason="Graphviz not installed")
def test_show_render_real_dot(filled, env, tmp_path):
    out = tmp_path / "plan.svg"
    mc("show", "--cache", filled, HASH_B, "--render", out, env=env)
    assert "<svg" in out.read_text()


# ---- stats / diff -----------------------------------------------------------

def test_stats(filled, env, db):
    store(db, env, plan({0: ["x"]}), "c3" * 32, module="build/small.o", seconds=1.0)
    out = mc("stats", "--cache", filled, env=env).stdout
    assert f"database                 {filled}" in out
    assert "plans                    3 (2 modules)" in out
    assert "builds                   4" in out
    assert "hits                   1 (25.0 %)" in out and "misses                 3" in out
    assert "split time spent         6.25 s" in out
    assert "split time saved         1.75 s" in out  # 2.0 s split avoided, 0.25 s spent
    assert "partitions measured      2 (compile 2.00 s" in out
    largest = out[out.index("largest modules"):].splitlines()
    assert largest[2].endswith("build/m.o") and largest[3].endswith("build/small.o")
    j = json.loads(mc("stats", "--cache", filled, "--json", env=env).stdout)
    assert (j["plans"], j["modules"], j["builds"], j["hits"], j["misses"]) == (3, 2, 4, 1, 3)
    assert j["hit_rate"] == 0.25 and j["saved_seconds"] == 1.75
    assert j["size_bytes"] > 0 and j["database"] == str(filled)
    assert [m["module_path"] for m in j["largest_modules"]] == ["build/m.o", "build/small.o"]


def test_stats_empty(db, env):
    store(db, env, PLAN_A, HASH_A)
    mc("gc", "--cache", db, "--max-size", "0", env=env)
    out = mc("stats", "--cache", db, env=env).stdout
    assert "builds                   0" in out and "no builds yet" in out


def test_diff(filled, env):
    out = mc("diff", "--cache", filled, "build/m.o", env=env).stdout.splitlines()
    assert out[0] == "module  build/m.o"
    assert out[1].startswith(f"old     {HASH_A[:12]}") and out[2].startswith(f"new     {HASH_B[:12]}")
    assert out[3].split() == ["moved", "g", "p0", "->", "p1"]
    assert out[4].split() == ["added", "k", "p0"]
    assert out[-1] == "1 moved, 1 added, 0 removed, 2 unchanged"
    # Two plans named explicitly, the other way round.
    j = json.loads(mc("diff", "--cache", filled, HASH_B, HASH_A, "--json", env=env).stdout)
    assert j["old"]["module_hash"] == HASH_B and j["new"]["module_hash"] == HASH_A
    assert j["moved"] == [{"name": "g", "from": 1, "to": 0}]
    assert j["added"] == [] and j["removed"] == [{"name": "k", "partition": 0}]
    assert j["unchanged"] == 2


def test_diff_needs_two_plans(db, env):
    store(db, env, PLAN_A, HASH_A)
    r = mc("diff", "--cache", db, "build/m.o", env=env, check=False)
    assert r.returncode == 1 and "only one plan" in r.stderr


# ---- gc / export ------------------------------------------------------------

def test_gc_by_age(filled, env):
    con = sqlite3.connect(filled)
    con.execute("UPDATE plans SET last_used = last_used - 10 * 86400 WHERE module_hash = ?", (HASH_A,))
    con.execute("UPDATE builds SET time = time - 10 * 86400 WHERE module_hash = ?", (HASH_A,))
    con.execute("UPDATE timings SET recorded = recorded - 10 * 86400")
    con.commit()
    con.close()
    r = mc("gc", "--cache", filled, "--max-age", "30", env=env)
    assert r.stdout.startswith("removed 0 plans")
    r = mc("gc", "--cache", filled, "--max-age", "5", env=env)
    assert r.stdout.startswith("removed 1 plan;") and str(filled) in r.stdout
    assert sql(filled, "SELECT module_hash FROM plans") == [(HASH_B,)]
    assert sql(filled, "SELECT count(*) FROM builds") == [(1,)]
    assert sql(filled, "SELECT count(*) FROM timings") == [(0,)]
    assert sql(filled, "SELECT count(*) FROM functions") == [(4,)]


def test_gc_by_size(db, env):
    big = plan({i: [f"function_with_a_long_name_{i}_{k}" for k in range(200)] for i in range(4)})
    for n in range(6):
        store(db, env, big, f"{n:02d}" * 32)
    size = disk_size(db)
    r = mc("gc", "--cache", db, "--max-size", "10G", env=env)
    assert r.stdout.startswith("removed 0 plans")
    r = mc("gc", "--cache", db, "--max-size", str(size // 2), env=env)
    left = sql(db, "SELECT module_hash FROM plans ORDER BY last_used")
    assert 0 < len(left) < 6
    assert left[-1] == ("05" * 32,)  # the most recently used survive
    assert disk_size(db) < size
    r = mc("gc", "--cache", db, "--max-size", "0", env=env)
    assert sql(db, "SELECT count(*) FROM plans") == [(0,)]
    r = mc("gc", "--cache", db, "--max-size", "12X", env=env, check=False)
    assert r.returncode == 2


def test_export(filled, env):
    j = json.loads(mc("export", "--cache", filled, "--json", env=env).stdout)
    assert j["format"] == "mtpc-cache-export" and j["schema_version"] == 4
    assert [p["module_hash"] for p in j["plans"]] == [HASH_A, HASH_B]
    a = j["plans"][0]
    assert a["plan"]["partitions"][0]["measured_seconds"] == 1.5
    assert a["module_path"] == "build/m.o" and a["split_seconds"] == 2.0
    assert [b["hit"] for b in j["builds"]] == [False, True, False]
    assert json.loads(mc("export", "--cache", filled, env=env).stdout) == j


# ---- read-only commands never write -----------------------------------------

def test_read_only_commands_do_not_write(filled, env):
    mc("gc", "--cache", filled, "--max-age", "1000", env=env)  # checkpoint the WAL
    before = digest(filled, f"{filled}-wal")
    mtime = os.stat(filled).st_mtime_ns
    for args in READ_ONLY + [["show", HASH_A, "--json"], ["show", HASH_A, "--dot"],
                             ["diff", HASH_A, HASH_B, "--json"], ["stats", "--json"],
                             ["list", "--json"], ["path"],
                             ["lookup", "--module-hash", HASH_A, "--options-hash", OPTS]]:
        mc(args[0], "--cache", filled, *args[1:], env=env)
    assert digest(filled, f"{filled}-wal") == before
    assert os.stat(filled).st_mtime_ns == mtime


@pytest.mark.parametrize("args", READ_ONLY, ids=lambda a: a[0])
def test_missing_database(args, db, env):
    r = mc(args[0], "--cache", db, *args[1:], env=env, check=False)
    assert r.returncode == 1
    assert r.stderr.splitlines() == [f"mtpc-cache: error: {db}: no plan cache here (no such file)"]
    assert not db.parent.exists()  # nothing created, not even the directory


# ---- many writers at once ---------------------------------------------------

def test_concurrent_records(db, env):
    """8 processes x 50 records on a database none of them has created yet."""
    exe = tool("mtpc-cache")
    script = ('i=0; while [ $i -lt 50 ]; do "$0" record --cache "$1" --module-hash "h$2" '
              '--options-hash o --partition $i --seconds 0.$i --object-bytes $i || exit 1; '
              'i=$((i+1)); done')
    procs = [subprocess.Popen(["sh", "-c", script, exe, str(db), str(p)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for p in range(8)]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0 and err == "", err
    assert sql(db, "SELECT count(*), count(DISTINCT module_hash) FROM timings") == [(400, 8)]
    assert sql(db, "SELECT sum(object_bytes) FROM timings") == [(8 * sum(range(50)),)]


def test_concurrent_stores_and_records(db, env, tmp_path):
    """Splits storing plans while slots record timings and a user runs stats."""
    exe = tool("mtpc-cache")
    f = tmp_path / "p.json"
    f.write_text(json.dumps(PLAN_A))
    store_sh = ('i=0; while [ $i -lt 20 ]; do "$0" store --cache "$1" --module "m$2.o" '
                '--module-hash "h$2_$i" --options-hash o --plan "$3" --seconds 1 || exit 1; '
                'i=$((i+1)); done')
    record_sh = ('i=0; while [ $i -lt 20 ]; do "$0" record --cache "$1" --module-hash "h$2_$i" '
                 '--options-hash o --partition 0 --seconds 1 --object-bytes 1 || exit 1; '
                 'i=$((i+1)); done')
    stats_sh = ('i=0; while [ $i -lt 10 ]; do "$0" stats --cache "$1" >/dev/null 2>&1; '
                'i=$((i+1)); done')
    procs = [subprocess.Popen(["sh", "-c", sh, exe, str(db), str(p), str(f)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for p in range(3) for sh in (store_sh, record_sh)]
    procs.append(subprocess.Popen(["sh", "-c", stats_sh, exe, str(db)], env=env))
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0 and not err, err
    assert sql(db, "SELECT count(*) FROM plans") == [(60,)]
    assert sql(db, "SELECT count(*) FROM builds") == [(60,)]
    assert sql(db, "SELECT count(*) FROM timings") == [(60,)]
    assert sql(db, "SELECT count(*) FROM functions") == [(60 * 3,)]


# ---- failure modes: one warning for the build, a clear error for the user ----

def test_record_object_file(db, env, tmp_path):
    obj = tmp_path / "p0.o"
    obj.write_bytes(b"x" * 777)
    mc("record", "--cache", db, "--module-hash", "h", "--options-hash", "o", "--partition", "0",
       "--seconds", "1.25", "--object", obj, env=env)
    assert sql(db, "SELECT seconds, object_bytes FROM timings") == [(1.25, 777)]


def test_unwritable_location(tmp_path, env):
    """The parent of the database is a regular file (as root, permissions
    alone would not stop a write)."""
    blocker = tmp_path / "file"
    blocker.write_text("x")
    db = blocker / "plans.sqlite"
    r = record(db, env, HASH_A, 0, 1.0, 1)
    assert r.returncode == 0
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and "warning" in lines[0] and str(db) in lines[0]
    r = store_raw(db, env, tmp_path)
    assert r.returncode == 0 and len(r.stderr.splitlines()) == 1
    r = mc("gc", "--cache", db, "--max-age", "1", env=env, check=False)
    assert r.returncode == 1 and len(r.stderr.splitlines()) == 1 and str(db) in r.stderr


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores directory permissions")
def test_unwritable_directory(tmp_path, env):
    d = tmp_path / "ro"
    d.mkdir()
    d.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        r = record(d / "plans.sqlite", env, HASH_A, 0, 1.0, 1)
        assert r.returncode == 0 and len(r.stderr.splitlines()) == 1
        assert str(d / "plans.sqlite") in r.stderr
    finally:
        d.chmod(0o755)


def store_raw(db, env, tmp_path):
    """mc store, without asserting success (the cache may be unusable)."""
    f = tmp_path / "plan-raw.json"
    f.write_text(json.dumps(PLAN_A))
    return mc("store", "--cache", db, "--module", "m.o", "--module-hash", HASH_A,
              "--options-hash", OPTS, "--plan", f, env=env, check=False)


def test_corrupt_database(tmp_path, env):
    db = tmp_path / "plans.sqlite"
    junk = os.urandom(16384)
    db.write_bytes(junk)
    for args in READ_ONLY + [["gc", "--max-age", "1"]]:
        r = mc(args[0], "--cache", db, *args[1:], env=env, check=False)
        assert r.returncode == 1
        assert r.stderr.splitlines() == [
            f"mtpc-cache: error: {db}: not an MTPC plan cache (file is not a SQLite database)"]
    r = record(db, env, HASH_A, 0, 1.0, 1)
    assert r.returncode == 0 and len(r.stderr.splitlines()) == 1 and "warning" in r.stderr
    r = store_raw(db, env, tmp_path)
    assert r.returncode == 0 and len(r.stderr.splitlines()) == 1
    r = mc("lookup", "--cache", db, "--module-hash", HASH_A, "--options-hash", OPTS,
           env=env, check=False)
    assert r.returncode == 1 and len(r.stderr.splitlines()) == 1
    assert db.read_bytes() == junk  # never "repaired" behind the user's back


def test_wrong_schema(tmp_path, env, db):
    other = tmp_path / "other.sqlite"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE t(x)")
    con.commit()
    con.close()
    r = mc("list", "--cache", other, env=env, check=False)
    assert r.returncode == 1 and r.stderr.strip().endswith(f"{other}: not an MTPC plan cache (wrong schema)")
    r = record(other, env, HASH_A, 0, 1.0, 1)
    assert r.returncode == 0 and "wrong schema" in r.stderr
    assert sql(other, "SELECT name FROM sqlite_master") == [("t",)]
    # A cache written by a newer MTPC is left alone too.
    store(db, env, PLAN_A, HASH_A)
    con = sqlite3.connect(db)
    con.execute("PRAGMA user_version = 42")
    con.close()
    r = mc("stats", "--cache", db, env=env, check=False)
    assert r.returncode == 1 and "schema version 42 is newer" in r.stderr and str(db) in r.stderr


def test_locked_database(filled, env, tmp_path):
    """Another process holds the write lock (BEGIN EXCLUSIVE): a slot's record
    warns once and exits 0, gc fails with a clear error, readers carry on
    (WAL)."""
    e = dict(env, MTPC_CACHE_BUSY_TIMEOUT_MS="200")
    con = sqlite3.connect(filled, isolation_level=None)
    con.execute("BEGIN EXCLUSIVE")
    con.execute("DELETE FROM builds")
    try:
        r = record(filled, e, HASH_A, 0, 9.0, 9)
        assert r.returncode == 0
        lines = r.stderr.splitlines()
        assert len(lines) == 1 and "locked" in lines[0] and str(filled) in lines[0]
        r = store_raw(filled, e, tmp_path)
        assert r.returncode == 0 and len(r.stderr.splitlines()) == 1 and "locked" in r.stderr
        r = mc("gc", "--cache", filled, "--max-age", "1", env=e, check=False)
        assert r.returncode == 1 and len(r.stderr.splitlines()) == 1
        assert "locked" in r.stderr and str(filled) in r.stderr
        r = mc("list", "--cache", filled, env=e)
        assert HASH_A[:12] in r.stdout
    finally:
        con.execute("ROLLBACK")
        con.close()
    assert sql(filled, "SELECT seconds FROM timings WHERE partition = 0") == [(1.5,)]


def test_exclusively_locked_database(filled, env):
    """With locking_mode=EXCLUSIVE even readers are locked out: clear error."""
    e = dict(env, MTPC_CACHE_BUSY_TIMEOUT_MS="200")
    con = sqlite3.connect(filled, isolation_level=None)
    con.execute("PRAGMA locking_mode = EXCLUSIVE")
    con.execute("BEGIN EXCLUSIVE")
    con.execute("DELETE FROM builds")
    try:
        for args in READ_ONLY:
            r = mc(args[0], "--cache", filled, *args[1:], env=e, check=False)
            assert r.returncode == 1, args
            assert len(r.stderr.splitlines()) == 1
            assert "locked" in r.stderr and str(filled) in r.stderr
        r = record(filled, e, HASH_A, 0, 9.0, 9)
        assert r.returncode == 0 and len(r.stderr.splitlines()) == 1 and "locked" in r.stderr
    finally:
        con.execute("ROLLBACK")
        con.close()
