/* Unit tests for cache/ (the SQLite plan cache). Usage: test_cache TMPDIR.
 * Prints "N passed, N failed". */
#define _POSIX_C_SOURCE 200809L
#include "mtpc_cache.h"
#include "util.h"

#include <fcntl.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "check.h"


static const char *tmpdir;

static const char plan_a[] =
	"{\"version\":1,\"module\":\"m.o\",\"input_hash\":\"h1\",\"options_hash\":\"o1\","
	"\"partitions\":["
	"{\"index\":0,\"file\":\"p0.bc\",\"cost\":100,\"owned\":[\"f\",\"g\"],\"copies\":[\"h\"],\"duplicated\":[]},"
	"{\"index\":1,\"file\":\"p1.bc\",\"cost\":50,\"owned\":[\"h\"],\"copies\":[],\"duplicated\":[\"d\"]}],"
	"\"promoted\":[],\"localize\":[],\"edges\":[[0,1,2]],"
	"\"stats\":{\"functions\":3,\"units\":3,\"largest_unit_cost\":60,\"split_seconds\":0.5}}";
static const char plan_b[] =
	"{\"version\":1,\"module\":\"m.o\",\"partitions\":["
	"{\"index\":0,\"file\":\"p0.bc\",\"cost\":80,\"owned\":[\"f\"],\"copies\":[],\"duplicated\":[]},"
	"{\"index\":1,\"file\":\"p1.bc\",\"cost\":70,\"owned\":[\"g\",\"h\"],\"copies\":[],\"duplicated\":[]}],"
	"\"edges\":[]}";

static char *tpath(const char *name) { return xasprintf("%s/%s", tmpdir, name); }

/* One integer from SQL run on the database directly (not through the API). */
static long long sql_int(const char *path, const char *sql)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	long long v = -1;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			v = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
	return v;
}

static int sql_run(const char *path, const char *sql)
{
	sqlite3 *db;
	int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	sqlite3_close(db);
	return rc;
}

/* Capture stderr in a file while a test runs, to count warnings. */
static int saved_stderr = -1;
static char *capture_path;
static void capture_begin(void)
{
	fflush(stderr);
	capture_path = tpath("stderr.txt");
	int fd = open(capture_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	saved_stderr = dup(2);
	dup2(fd, 2);
	close(fd);
}
/* Returns the number of lines written to stderr since capture_begin(); shows
 * them if that is not the expected number. */
static int capture_end_n(int expect)
{
	char *data;
	size_t len;
	int lines = 0;
	fflush(stderr);
	dup2(saved_stderr, 2);
	close(saved_stderr);
	if (mtpc_read_file(capture_path, &data, &len) == 0) {
		for (size_t i = 0; i < len; i++)
			lines += data[i] == '\n';
		if (lines != expect)
			fprintf(stderr, "captured stderr:\n%s", data);
		free(data);
	}
	unlink(capture_path);
	free(capture_path);
	return lines;
}
static int capture_end(void) { return capture_end_n(1); }

static void test_resolve_path(void)
{
	const char *src;
	char *p;
	unsetenv("MTPC_CACHE");
	unsetenv("XDG_CACHE_HOME");
	setenv("HOME", "/home/u", 1);
	p = mtpc_cache_resolve_path("/x/c.sqlite", &src);
	CHECK(strcmp(p, "/x/c.sqlite") == 0 && strcmp(src, "option") == 0);
	free(p);
	p = mtpc_cache_resolve_path("", &src);
	CHECK(strcmp(p, "/home/u/.cache/mtpc/plans.sqlite") == 0 && strcmp(src, "HOME") == 0);
	free(p);
	setenv("XDG_CACHE_HOME", "/xdg", 1);
	p = mtpc_cache_resolve_path(NULL, &src);
	CHECK(strcmp(p, "/xdg/mtpc/plans.sqlite") == 0 && strcmp(src, "XDG_CACHE_HOME") == 0);
	free(p);
	setenv("MTPC_CACHE", "/env/c.sqlite", 1);
	p = mtpc_cache_resolve_path(NULL, &src);
	CHECK(strcmp(p, "/env/c.sqlite") == 0 && strcmp(src, "MTPC_CACHE") == 0);
	free(p);
	p = mtpc_cache_resolve_path("opt.sqlite", NULL);
	CHECK(strcmp(p, "opt.sqlite") == 0);
	free(p);
	unsetenv("MTPC_CACHE");
	unsetenv("XDG_CACHE_HOME");
}

static void test_store_lookup(void)
{
	char *path = tpath("a/b/plans.sqlite"); /* parent directories are created */
	mtpc_cache *c = mtpc_cache_open(path, 0);
	char *s;
	CHECK(c != NULL);
	CHECK(sql_int(path, "PRAGMA user_version") == 4); /* schema v4: module_rebuilds.parts, parted, wide */
	CHECK(sql_int(path, "SELECT journal_mode = 'wal' FROM pragma_journal_mode()") == 1);
	CHECK(mtpc_cache_lookup(c, "h1", "o1") == NULL);
	CHECK(mtpc_cache_lookup_previous(c, "m.o", "o1") == NULL);

	/* Miss, then exact hit returns the text byte for byte. */
	CHECK(mtpc_cache_store(c, "m.o", "h1", "o1", plan_a, 2.0, 0) == 0);
	s = mtpc_cache_lookup(c, "h1", "o1");
	CHECK(s && strcmp(s, plan_a) == 0);
	free(s);
	CHECK(mtpc_cache_lookup(c, "h1", "o2") == NULL);
	CHECK(mtpc_cache_lookup(c, "h2", "o1") == NULL);
	CHECK(sql_int(path, "SELECT count(*) FROM partitions") == 2);
	CHECK(sql_int(path, "SELECT count(*) FROM functions WHERE kind = 0") == 3);
	CHECK(sql_int(path, "SELECT functions * 1000 + cost FROM plans") == 3150);

	/* Timings, then a hit keeps them and logs the time saved. */
	CHECK(mtpc_cache_record_partition(c, "h1", "o1", 0, 1.5, 4096) == 0);
	CHECK(mtpc_cache_record_partition(c, "h1", "o1", 0, 1.25, 4000) == 0); /* replaces */
	CHECK(mtpc_cache_store(c, "m.o", "h1", "o1", plan_a, 0.5, 1) == 0);
	CHECK(sql_int(path, "SELECT count(*) FROM timings") == 1);
	CHECK(sql_int(path, "SELECT object_bytes FROM timings") == 4000);
	CHECK(sql_int(path, "SELECT count(*) FROM builds") == 2);
	CHECK(sql_int(path, "SELECT sum(hit) FROM builds") == 1);
	CHECK(sql_int(path, "SELECT round(sum(saved_seconds) * 10) FROM builds") == 15);

	/* Edit: a new module hash misses, and the previous plan of the same
	 * path comes back with the measurements of partition 0 only. */
	CHECK(mtpc_cache_lookup(c, "h2", "o1") == NULL);
	s = mtpc_cache_lookup_previous(c, "m.o", "o1");
	CHECK(s != NULL);
	if (s) {
		json_t *j = json_loads(s, 0, NULL), *p0, *p1;
		p0 = json_array_get(json_object_get(j, "partitions"), 0);
		p1 = json_array_get(json_object_get(j, "partitions"), 1);
		CHECK(json_real_value(json_object_get(p0, "measured_seconds")) == 1.25);
		CHECK(json_integer_value(json_object_get(p0, "object_bytes")) == 4000);
		CHECK(json_object_get(p1, "measured_seconds") == NULL);
		CHECK(json_is_array(json_object_get(p0, "owned")));
		CHECK(json_integer_value(json_object_get(j, "version")) == 1);
		json_decref(j);
	}
	free(s);
	CHECK(mtpc_cache_lookup_previous(c, "m.o", "o2") == NULL);
	CHECK(mtpc_cache_lookup_previous(c, "other.o", "o1") == NULL);

	/* The edited module's plan becomes the previous one. */
	CHECK(mtpc_cache_store(c, "m.o", "h2", "o1", plan_b, 1.0, 0) == 0);
	s = mtpc_cache_lookup_previous(c, "m.o", "o1");
	CHECK(s && strstr(s, "\"cost\":80") && !strstr(s, "measured_seconds"));
	free(s);

	/* Same key, different plan (new splitter): rows and timings replaced. */
	CHECK(mtpc_cache_store(c, "m.o", "h1", "o1", plan_b, 1.0, 0) == 0);
	CHECK(sql_int(path, "SELECT count(*) FROM timings") == 0);
	CHECK(sql_int(path, "SELECT count(*) FROM plans") == 2);
	CHECK(sql_int(path, "SELECT count(*) FROM partitions") == 4);
	CHECK(sql_int(path, "SELECT count(*) FROM functions") == 6);

	/* A bad plan warns once and leaves the handle usable. */
	capture_begin();
	CHECK(mtpc_cache_store(c, "m.o", "h3", "o1", "{not json", 1.0, 0) == -1);
	CHECK(mtpc_cache_store(c, "m.o", "h3", "o1", "{\"version\":1}", 1.0, 0) == -1);
	CHECK(mtpc_cache_record_partition(c, "h3", "o1", -1, 1.0, 1) == -1);
	CHECK(capture_end_n(3) == 3);
	CHECK(mtpc_cache_store(c, "m.o", "h3", "o1", plan_a, 1.0, 0) == 0);
	mtpc_cache_close(c);

	/* Read-only handle: lookups work, writes refuse. */
	c = mtpc_cache_open(path, 1);
	CHECK(c != NULL);
	s = mtpc_cache_lookup(c, "h3", "o1");
	CHECK(s && strcmp(s, plan_a) == 0);
	free(s);
	capture_begin();
	CHECK(mtpc_cache_store(c, "m.o", "h4", "o1", plan_a, 1.0, 0) == -1);
	CHECK(mtpc_cache_record_partition(c, "h4", "o1", 0, 1.0, 1) == -1);
	CHECK(capture_end() == 1);
	mtpc_cache_close(c);

	/* NULL handle: silent no-ops. */
	CHECK(mtpc_cache_lookup(NULL, "h1", "o1") == NULL);
	CHECK(mtpc_cache_lookup_previous(NULL, "m.o", "o1") == NULL);
	CHECK(mtpc_cache_store(NULL, "m.o", "h1", "o1", plan_a, 1.0, 0) == -1);
	CHECK(mtpc_cache_record_partition(NULL, "h1", "o1", 0, 1.0, 1) == -1);
	CHECK(mtpc_cache_gc(NULL, 1, -1, NULL) == -1);
	mtpc_cache_close(NULL);
	free(path);
}

static void test_gc(void)
{
	char *path = tpath("gc.sqlite");
	mtpc_cache *c = mtpc_cache_open(path, 0);
	int removed = -1;
	CHECK(c != NULL);
	CHECK(mtpc_cache_store(c, "m.o", "h1", "o1", plan_a, 1.0, 0) == 0);
	CHECK(mtpc_cache_store(c, "n.o", "h2", "o1", plan_b, 1.0, 0) == 0);
	CHECK(mtpc_cache_record_partition(c, "h1", "o1", 0, 1.0, 10) == 0);
	/* Age h1's plan by ten days. */
	CHECK(sql_run(path, "UPDATE plans SET last_used = last_used - 10 * 86400 WHERE module_hash = 'h1';"
			    "UPDATE timings SET recorded = recorded - 10 * 86400") == SQLITE_OK);
	CHECK(mtpc_cache_gc(c, 30, -1, &removed) == 0 && removed == 0);
	CHECK(mtpc_cache_gc(c, 5, -1, &removed) == 0 && removed == 1);
	CHECK(sql_int(path, "SELECT count(*) FROM plans") == 1);
	CHECK(sql_int(path, "SELECT count(*) FROM partitions") == 2); /* cascaded */
	CHECK(sql_int(path, "SELECT count(*) FROM functions") == 3);
	CHECK(sql_int(path, "SELECT count(*) FROM timings") == 0);
	char *kept = mtpc_cache_lookup(c, "h2", "o1");
	CHECK(kept != NULL);
	free(kept);
	/* By size: a generous limit keeps everything, 0 removes every plan. */
	CHECK(mtpc_cache_gc(c, -1, 1LL << 40, &removed) == 0 && removed == 0);
	CHECK(mtpc_cache_gc(c, -1, 0, &removed) == 0 && removed == 1);
	CHECK(sql_int(path, "SELECT count(*) FROM plans") == 0);
	CHECK(sql_int(path, "SELECT count(*) FROM builds") == 0);
	mtpc_cache_close(c);
	free(path);
}

static void test_failures(void)
{
	char *path, *err = NULL;
	mtpc_cache *c;

	/* Unwritable: the parent "directory" is a file (the tests run as root,
	 * so permissions alone would not stop the write). */
	char *file = tpath("plainfile");
	CHECK(mtpc_write_file(file, "x", 1, 0) == 1);
	path = xasprintf("%s/sub/plans.sqlite", file);
	capture_begin();
	c = mtpc_cache_open(path, 0);
	CHECK(capture_end() == 1);
	CHECK(c == NULL);
	CHECK(mtpc_cache_lookup(c, "h", "o") == NULL);
	free(path);
	free(file);
	if (geteuid() != 0) {
		char *dir = tpath("ro");
		mkdir(dir, 0555);
		path = xasprintf("%s/plans.sqlite", dir);
		c = mtpc_cache_open_ex(path, 0, &err);
		CHECK(c == NULL && err && strstr(err, path));
		free(err);
		free(path);
		free(dir);
	}

	/* Corrupt: not a SQLite file at all. */
	path = tpath("corrupt.sqlite");
	char junk[8192];
	memset(junk, 'z', sizeof junk);
	CHECK(mtpc_write_file(path, junk, sizeof junk, 0) == 1);
	c = mtpc_cache_open_ex(path, 0, &err);
	CHECK(c == NULL && err && strstr(err, path) && strstr(err, "not a SQLite database"));
	free(err);
	err = NULL;
	c = mtpc_cache_open_ex(path, 1, &err);
	CHECK(c == NULL && err && strstr(err, "not a SQLite database"));
	free(err);
	err = NULL;
	capture_begin();
	CHECK(mtpc_cache_open(path, 0) == NULL);
	CHECK(capture_end() == 1);
	free(path);

	/* A SQLite database that is not ours is left alone. */
	path = tpath("foreign.sqlite");
	CHECK(sql_run(path, "CREATE TABLE t(x); INSERT INTO t VALUES(1)") == SQLITE_OK);
	c = mtpc_cache_open_ex(path, 0, &err);
	CHECK(c == NULL && err && strstr(err, "wrong schema"));
	free(err);
	err = NULL;
	CHECK(sql_int(path, "SELECT count(*) FROM t") == 1);
	free(path);

	/* Newer schema than we know. */
	path = tpath("newer.sqlite");
	mtpc_cache_close(mtpc_cache_open(path, 0));
	CHECK(sql_run(path, "PRAGMA user_version = 99") == SQLITE_OK);
	c = mtpc_cache_open_ex(path, 0, &err);
	CHECK(c == NULL && err && strstr(err, "newer"));
	free(err);
	err = NULL;
	free(path);

	/* Missing, read-only: an error, and the file is not created. */
	path = tpath("missing.sqlite");
	c = mtpc_cache_open_ex(path, 1, &err);
	CHECK(c == NULL && err && strstr(err, "no such file"));
	CHECK(access(path, F_OK) != 0);
	free(err);
	err = NULL;
	free(path);

	/* Locked: another connection holds the database exclusively. */
	path = tpath("locked.sqlite");
	c = mtpc_cache_open(path, 0);
	CHECK(c && mtpc_cache_store(c, "m.o", "h1", "o1", plan_a, 1.0, 0) == 0);
	sqlite3 *holder;
	static const char insert_build[] =
		"INSERT INTO builds(time, module_path, module_hash, options_hash, hit, "
		"split_seconds, saved_seconds) VALUES(0, 'x', 'x', 'x', 0, 0, 0)";
	CHECK(sqlite3_open(path, &holder) == SQLITE_OK);
	/* In WAL mode BEGIN EXCLUSIVE keeps writers out (readers go on). */
	CHECK(sqlite3_exec(holder, "BEGIN EXCLUSIVE", NULL, NULL, NULL) == SQLITE_OK);
	CHECK(sqlite3_exec(holder, insert_build, NULL, NULL, NULL) == SQLITE_OK);
	setenv("MTPC_CACHE_BUSY_TIMEOUT_MS", "50", 1);
	/* An open handle: the first write warns, everything after is silent. */
	capture_begin();
	CHECK(mtpc_cache_record_partition(c, "h1", "o1", 0, 1.0, 1) == -1);
	CHECK(mtpc_cache_store(c, "m.o", "h1", "o1", plan_a, 1.0, 1) == -1);
	CHECK(mtpc_cache_lookup(c, "h1", "o1") == NULL);
	CHECK(capture_end() == 1);
	mtpc_cache_close(c);
	/* A new handle opens (the schema check only reads) and its first
	 * write warns once. */
	capture_begin();
	c = mtpc_cache_open(path, 0);
	CHECK(c != NULL);
	char *s = mtpc_cache_lookup(c, "h1", "o1");
	CHECK(s != NULL);
	free(s);
	CHECK(mtpc_cache_store(c, "m.o", "h1", "o1", plan_a, 1.0, 1) == -1);
	CHECK(capture_end() == 1);
	mtpc_cache_close(c);
	CHECK(sqlite3_exec(holder, "ROLLBACK", NULL, NULL, NULL) == SQLITE_OK);
	/* Exclusive locking mode keeps readers out too: open itself fails. */
	CHECK(sqlite3_exec(holder, "PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE", NULL, NULL,
			   NULL) == SQLITE_OK);
	CHECK(sqlite3_exec(holder, insert_build, NULL, NULL, NULL) == SQLITE_OK);
	capture_begin();
	c = mtpc_cache_open(path, 0);
	CHECK(c == NULL);
	CHECK(capture_end() == 1);
	c = mtpc_cache_open_ex(path, 1, &err);
	CHECK(c == NULL && err && strstr(err, "locked") && strstr(err, path));
	free(err);
	sqlite3_exec(holder, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_close(holder);
	unsetenv("MTPC_CACHE_BUSY_TIMEOUT_MS");
	c = mtpc_cache_open(path, 0);
	CHECK(c && mtpc_cache_record_partition(c, "h1", "o1", 0, 1.0, 1) == 0);
	mtpc_cache_close(c);
	free(path);
}

/* Many processes creating and writing one database at once. */
static void test_concurrency(void)
{
	enum { PROCS = 8, WRITES = 25 };
	char *path = tpath("concurrent.sqlite");
	pid_t pids[PROCS];
	int ok = 1;

	fflush(stdout);
	fflush(stderr);
	for (int i = 0; i < PROCS; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			mtpc_cache *c = mtpc_cache_open(path, 0);
			int bad = c == NULL;
			for (int j = 0; j < WRITES && c; j++) {
				char h[32];
				snprintf(h, sizeof h, "h%d_%d", i, j);
				bad |= mtpc_cache_store(c, "m.o", h, "o1", plan_a, 1.0, 0) != 0;
				bad |= mtpc_cache_record_partition(c, h, "o1", 0, 1.0, 1) != 0;
				char *s = mtpc_cache_lookup_previous(c, "m.o", "o1");
				bad |= s == NULL;
				free(s);
			}
			mtpc_cache_close(c);
			exit(bad);
		}
	}
	for (int i = 0; i < PROCS; i++) {
		int status;
		ok &= waitpid(pids[i], &status, 0) == pids[i] && WIFEXITED(status) &&
		      WEXITSTATUS(status) == 0;
	}
	CHECK(ok);
	CHECK(sql_int(path, "SELECT count(*) FROM plans") == PROCS * WRITES);
	CHECK(sql_int(path, "SELECT count(*) FROM timings") == PROCS * WRITES);
	CHECK(sql_int(path, "SELECT count(*) FROM builds") == PROCS * WRITES);
	CHECK(sql_int(path, "SELECT count(*) FROM partitions") == 2 * PROCS * WRITES);
	free(path);
}

/* Rebuild history: a rebuild with the module's own bitcode unchanged was
 * forced by another module; only the last 8 count. */
static void test_rebuilds(void)
{
	char *path = tpath("rebuilds.sqlite");
	mtpc_cache *c = mtpc_cache_open(path, 0);
	struct mtpc_rebuilds r;
	CHECK(mtpc_cache_module_rebuilds(c, "m.o", &r) == 0 && r.forced == 0);
	CHECK(mtpc_cache_record_rebuild(c, "m.o", "h1", 0, 0) == 0); /* the first: not forced */
	CHECK(mtpc_cache_module_rebuilds(c, "m.o", &r) == 1 && r.forced == 0);
	CHECK(mtpc_cache_record_rebuild(c, "m.o", "h1", 0, 0) == 0); /* same bitcode: forced */
	CHECK(mtpc_cache_record_rebuild(c, "m.o", "h2", 0, 0) == 0); /* its own edit */
	CHECK(mtpc_cache_record_rebuild(c, "m.o", "h2", 0, 0) == 0); /* forced */
	CHECK(mtpc_cache_module_rebuilds(c, "m.o", &r) == 4 && r.forced == 2 && r.parted == 0);
	for (int i = 0; i < 8; i++)
		CHECK(mtpc_cache_record_rebuild(c, "m.o", i % 2 ? "h3" : "h4", 0, 0) == 0); /* all own edits */
	CHECK(mtpc_cache_module_rebuilds(c, "m.o", &r) == 8 && r.forced == 0);
	CHECK(mtpc_cache_module_rebuilds(c, "other.o", &r) == 0 && r.forced == 0);
	CHECK(mtpc_cache_record_rebuild(c, "", "h", 0, 0) == -1);
	mtpc_cache_close(c);
	free(path);
}

/* Edits seen through a split: only an own change through a split of as many
 * partitions as the rebuild before counts (the first split compares with
 * nothing); a wide one rewrote at least 3 in 4 of them; both age out. */
static void test_rebuild_parts(void)
{
	char *path = tpath("rebuild_parts.sqlite");
	mtpc_cache *c = mtpc_cache_open(path, 0);
	struct mtpc_rebuilds r;
	CHECK(mtpc_cache_record_rebuild(c, "m.o", "h1", 0, 0) == 0);
	CHECK(mtpc_cache_record_rebuild(c, "m.o", "h2", 4, 4) == 0); /* first split: no observation */
	CHECK(mtpc_cache_module_rebuilds(c, "m.o", &r) == 2 && r.parted == 0 && r.wide == 0);
	CHECK(mtpc_cache_record_rebuild(c, "m.o", "h3", 4, 1) == 0); /* narrow */
	CHECK(mtpc_cache_record_rebuild(c, "m.o", "h4", 4, 3) == 0); /* wide: 3 of 4 */
	CHECK(mtpc_cache_record_rebuild(c, "m.o", "h4", 4, 4) == 0); /* forced: not an edit */
	CHECK(mtpc_cache_module_rebuilds(c, "m.o", &r) == 5 && r.parted == 2 && r.wide == 1 && r.forced == 1);
	CHECK(mtpc_cache_record_rebuild(c, "m.o", "h5", 2, 2) == 0); /* another count: no observation */
	CHECK(mtpc_cache_record_rebuild(c, "m.o", "h6", 2, 2) == 0); /* wide */
	CHECK(mtpc_cache_module_rebuilds(c, "m.o", &r) == 7 && r.parted == 3 && r.wide == 2);
	for (int i = 0; i < 6; i++) /* compiled whole: the observations age out */
		CHECK(mtpc_cache_record_rebuild(c, "m.o", i % 2 ? "h7" : "h8", 0, 0) == 0);
	CHECK(mtpc_cache_module_rebuilds(c, "m.o", &r) == 8 && r.parted == 1 && r.wide == 1);
	CHECK(mtpc_cache_record_rebuild(c, "m.o", "h9", 2, 1) == 0); /* after a whole one: no observation */
	CHECK(mtpc_cache_module_rebuilds(c, "m.o", &r) == 8 && r.parted == 1 && r.wide == 1); /* h6: the oldest kept */
	CHECK(mtpc_cache_record_rebuild(c, "m.o", "h10", 2, 1) == 0); /* narrow; h6 out */
	CHECK(mtpc_cache_module_rebuilds(c, "m.o", &r) == 8 && r.parted == 1 && r.wide == 0);
	mtpc_cache_close(c);
	free(path);
}

/* A version 3 cache (before module_rebuilds.parts, parted, wide) is
 * migrated on open, and its rebuild history kept. */
static void test_migrate_v3(void)
{
	char *path = tpath("v3.sqlite");
	mtpc_cache *c = mtpc_cache_open(path, 0);
	CHECK(mtpc_cache_record_rebuild(c, "m.o", "h1", 0, 0) == 0);
	CHECK(mtpc_cache_record_rebuild(c, "m.o", "h1", 0, 0) == 0);
	mtpc_cache_close(c);
	CHECK(sql_run(path, "ALTER TABLE module_rebuilds DROP COLUMN parts; ALTER TABLE module_rebuilds DROP COLUMN "
			    "parted; ALTER TABLE module_rebuilds DROP COLUMN wide; PRAGMA user_version = 3;") == SQLITE_OK);
	c = mtpc_cache_open(path, 0);
	CHECK(sql_int(path, "PRAGMA user_version") == 4);
	struct mtpc_rebuilds r;
	CHECK(mtpc_cache_module_rebuilds(c, "m.o", &r) == 2 && r.forced == 1 && r.parted == 0);
	CHECK(mtpc_cache_record_rebuild(c, "m.o", "h2", 2, 1) == 0);
	CHECK(mtpc_cache_record_rebuild(c, "m.o", "h3", 2, 2) == 0);
	CHECK(mtpc_cache_module_rebuilds(c, "m.o", &r) == 4 && r.parted == 1 && r.wide == 1);
	mtpc_cache_close(c);
	free(path);
}

int main(int argc, char **argv)
{
	tmpdir = argc > 1 ? argv[1] : "/tmp";
	mtpc_set_progname("test_cache");
	test_resolve_path();
	test_store_lookup();
	test_gc();
	test_rebuilds();
	test_rebuild_parts();
	test_migrate_v3();
	test_failures();
	test_concurrency();
	return CHECK_REPORT();
}
