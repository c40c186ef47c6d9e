/* db.c: opening the plan cache, its schema and migrations, and the small
 * SQLite helpers the other files share.
 *
 * Many processes open the database at once (one split per large module, one
 * record per partition slot), so: WAL mode (readers never wait for the
 * writer), a busy timeout, every write in a BEGIN IMMEDIATE transaction, and
 * the schema created or migrated inside one such transaction after
 * re-checking PRAGMA user_version, so two processes racing to create the
 * database cannot both run a migration. */
#define _POSIX_C_SOURCE 200809L
#include "cache_int.h"
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* migrations[v] brings a database from user_version v to v + 1. Append only:
 * never edit a released step, add the next one (and bump
 * CACHE_SCHEMA_VERSION). PRAGMAs cannot take bound parameters, hence the
 * version literals in the scripts. */
static const char *const migrations[CACHE_SCHEMA_VERSION] = {
	/* 0 -> 1 */
	"CREATE TABLE plans("
	"  id INTEGER PRIMARY KEY,"
	"  module_hash TEXT NOT NULL,"
	"  options_hash TEXT NOT NULL,"
	"  module_path TEXT NOT NULL,"
	"  plan_json TEXT NOT NULL,"
	"  partitions INTEGER NOT NULL,"
	"  functions INTEGER NOT NULL," /* owned definitions, all partitions */
	"  cost INTEGER NOT NULL,"      /* sum of the partitions' estimated cost */
	"  split_seconds REAL NOT NULL," /* of the split that made the plan */
	"  created REAL NOT NULL,"
	"  last_used REAL NOT NULL,"
	"  UNIQUE(module_hash, options_hash));"
	"CREATE INDEX plans_by_path ON plans(module_path, options_hash, last_used);"
	"CREATE INDEX plans_by_use ON plans(last_used);"
	"CREATE TABLE partitions("
	"  plan_id INTEGER NOT NULL REFERENCES plans(id) ON DELETE CASCADE,"
	"  idx INTEGER NOT NULL,"
	"  file TEXT,"
	"  cost INTEGER NOT NULL,"
	"  owned INTEGER NOT NULL,"
	"  copies INTEGER NOT NULL,"
	"  duplicated INTEGER NOT NULL,"
	"  PRIMARY KEY(plan_id, idx)) WITHOUT ROWID;"
	"CREATE TABLE functions("
	"  plan_id INTEGER NOT NULL REFERENCES plans(id) ON DELETE CASCADE,"
	"  kind INTEGER NOT NULL," /* 0 owned, 1 copy, 2 duplicated */
	"  name TEXT NOT NULL,"
	"  partition INTEGER NOT NULL);"
	"CREATE INDEX functions_by_plan ON functions(plan_id, kind, name);"
	"CREATE TABLE timings("
	"  module_hash TEXT NOT NULL,"
	"  options_hash TEXT NOT NULL,"
	"  partition INTEGER NOT NULL,"
	"  seconds REAL NOT NULL,"
	"  object_bytes INTEGER NOT NULL,"
	"  recorded REAL NOT NULL,"
	"  PRIMARY KEY(module_hash, options_hash, partition)) WITHOUT ROWID;"
	"CREATE TABLE builds("
	"  id INTEGER PRIMARY KEY,"
	"  time REAL NOT NULL,"
	"  module_path TEXT NOT NULL,"
	"  module_hash TEXT NOT NULL,"
	"  options_hash TEXT NOT NULL,"
	"  hit INTEGER NOT NULL,"
	"  split_seconds REAL NOT NULL,"
	"  saved_seconds REAL NOT NULL);" /* hit: the original split's time minus this one's */
	"CREATE INDEX builds_by_key ON builds(module_hash, options_hash);"
	"CREATE INDEX builds_by_time ON builds(time);"
	"PRAGMA application_id = 1297371203;" /* CACHE_APPLICATION_ID */
	"PRAGMA user_version = 1;",
	/* 1 -> 2: measured backend time per module path (mtpc-link chooses by it) */
	"CREATE TABLE module_times("
	"  module_path TEXT PRIMARY KEY,"
	"  seconds REAL NOT NULL,"   /* backend CPU, or the sum of the slots' */
	"  split INTEGER NOT NULL,"  /* 1: recorded by a merge (the module was split) */
	"  recorded REAL NOT NULL) WITHOUT ROWID;"
	"PRAGMA user_version = 2;",
	/* 2 -> 3: why a module's backend reran (mtpc-link relays a module only
	 * when other modules' changes keep forcing its recompile) */
	"CREATE TABLE module_rebuilds("
	"  module_path TEXT PRIMARY KEY,"
	"  module_hash TEXT NOT NULL," /* its own bitcode at its last rebuild */
	"  history INTEGER NOT NULL,"  /* bit i: the (i+1)-th latest rebuild found its own bitcode unchanged */
	"  runs INTEGER NOT NULL,"     /* rebuilds recorded, at most 8 */
	"  recorded REAL NOT NULL) WITHOUT ROWID;"
	"PRAGMA user_version = 3;",
	/* 3 -> 4: how many partitions a split for edits rewrote at each of its
	 * rebuilds (mtpc-link stops splitting a module for its edits when they
	 * rewrite nearly every partition anyway) */
	"ALTER TABLE module_rebuilds ADD COLUMN parts INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE module_rebuilds ADD COLUMN parted INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE module_rebuilds ADD COLUMN wide INTEGER NOT NULL DEFAULT 0;"
	"PRAGMA user_version = 4;",
};

double cache_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int cache_exec(sqlite3 *db, const char *sql)
{
	while (sql && *sql) {
		sqlite3_stmt *st;
		const char *tail;
		int rc = sqlite3_prepare_v2(db, sql, -1, &st, &tail);
		if (rc != SQLITE_OK)
			return rc;
		if (st) { /* NULL for trailing whitespace/comments */
			while ((rc = sqlite3_step(st)) == SQLITE_ROW)
				;
			sqlite3_finalize(st);
			if (rc != SQLITE_DONE)
				return rc;
		}
		sql = tail;
	}
	return SQLITE_OK;
}

sqlite3_stmt *cache_prepare(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		sqlite3_finalize(st);
		return NULL;
	}
	return st;
}

int cache_begin(mtpc_cache *c) { return cache_exec(c->db, "BEGIN IMMEDIATE"); }
int cache_commit(mtpc_cache *c) { return cache_exec(c->db, "COMMIT"); }

void cache_rollback(mtpc_cache *c)
{
	if (!sqlite3_get_autocommit(c->db))
		cache_exec(c->db, "ROLLBACK");
}

void cache_fail(mtpc_cache *c, const char *what)
{
	if (c->broken)
		return;
	/* Take the message before the rollback replaces it. */
	char *msg = xstrdup(sqlite3_errmsg(c->db));
	cache_rollback(c);
	if (!cache_quiet())
		mtpc_warn("plan cache %s: %s: %s; continuing without it", c->path, what, msg);
	free(msg);
	c->broken = 1;
}

int cache_unusable(const mtpc_cache *c) { return !c || c->broken; }

int cache_quiet(void)
{
	const char *v = getenv("MTPC_CACHE_QUIET");
	return v && *v && strcmp(v, "0") != 0;
}

static int busy_timeout_ms(void)
{
	const char *v = getenv("MTPC_CACHE_BUSY_TIMEOUT_MS");
	char *end;
	long ms;
	if (!v || !*v)
		return 5000;
	ms = strtol(v, &end, 10);
	return *end || ms < 0 || ms > 3600000 ? 5000 : (int)ms;
}

int cache_query_int(sqlite3 *db, const char *sql, long long *out)
{
	sqlite3_stmt *st = cache_prepare(db, sql);
	int rc;
	if (!st)
		return sqlite3_errcode(db);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*out = sqlite3_column_int64(st, 0);
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	return rc;
}

/* Describe a failure on db in words a user can act on. */
static char *describe(sqlite3 *db, int rc, const char *path)
{
	switch (rc & 0xff) {
	case SQLITE_NOTADB:
		return xasprintf("%s: not an MTPC plan cache (file is not a SQLite database)", path);
	case SQLITE_CORRUPT:
		return xasprintf("%s: corrupt plan cache (%s)", path, sqlite3_errmsg(db));
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return xasprintf("%s: database is locked by another process (gave up after %d ms)",
				 path, busy_timeout_ms());
	case SQLITE_READONLY:
		return xasprintf("%s: plan cache is not writable (%s)", path, sqlite3_errmsg(db));
	case SQLITE_CANTOPEN:
		return xasprintf("%s: cannot open plan cache (%s)", path, strerror(errno));
	default:
		return xasprintf("%s: %s", path, db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
	}
}

/* Check the header of an open database, creating or migrating the schema if
 * writable. Returns NULL or the error message. */
static char *check_schema(mtpc_cache *c)
{
	sqlite3 *db = c->db;
	long long app = 0, ver = 0, tables = 0;
	int rc;

	if ((rc = cache_query_int(db, "PRAGMA application_id", &app)) ||
	    (rc = cache_query_int(db, "PRAGMA user_version", &ver)))
		return describe(db, rc, c->path);
	if (app == CACHE_APPLICATION_ID && ver == CACHE_SCHEMA_VERSION)
		return NULL; /* the common case: no lock taken */
	if (app == CACHE_APPLICATION_ID && ver > CACHE_SCHEMA_VERSION)
		return xasprintf("%s: plan cache schema version %lld is newer than this MTPC "
				 "understands (%d)", c->path, ver, CACHE_SCHEMA_VERSION);
	if (c->readonly) {
		if (app == 0 && ver == 0 &&
		    cache_query_int(db, "SELECT count(*) FROM sqlite_schema", &tables) == SQLITE_OK &&
		    tables == 0)
			return xasprintf("%s: empty database, not an MTPC plan cache yet", c->path);
		if (app == CACHE_APPLICATION_ID)
			return xasprintf("%s: plan cache schema version %lld needs migrating; "
					 "open it read-write once (any build does)", c->path, ver);
		return xasprintf("%s: not an MTPC plan cache (wrong schema)", c->path);
	}

	/* auto_vacuum only takes effect before the first table exists; it lets
	 * gc give pages back with incremental_vacuum instead of a full VACUUM.
	 * journal_mode cannot change inside a transaction, so both come first;
	 * on an existing database both are harmless no-ops. */
	if ((rc = cache_exec(db, "PRAGMA auto_vacuum = INCREMENTAL")) ||
	    (rc = cache_exec(db, "PRAGMA journal_mode = WAL")) || (rc = cache_begin(c)))
		return describe(db, rc, c->path);
	/* Re-read under the write lock: another process may have won the race. */
	if ((rc = cache_query_int(db, "PRAGMA application_id", &app)) ||
	    (rc = cache_query_int(db, "PRAGMA user_version", &ver)) ||
	    (rc = cache_query_int(db, "SELECT count(*) FROM sqlite_schema", &tables)))
		goto fail;
	if (app != CACHE_APPLICATION_ID && (app != 0 || ver != 0 || tables != 0)) {
		cache_rollback(c);
		return xasprintf("%s: not an MTPC plan cache (wrong schema)", c->path);
	}
	if (ver > CACHE_SCHEMA_VERSION) {
		cache_rollback(c);
		return xasprintf("%s: plan cache schema version %lld is newer than this MTPC "
				 "understands (%d)", c->path, ver, CACHE_SCHEMA_VERSION);
	}
	for (; ver < CACHE_SCHEMA_VERSION; ver++)
		if ((rc = cache_exec(db, migrations[ver])))
			goto fail;
	if ((rc = cache_commit(c)))
		goto fail;
	return NULL;
fail:;
	char *msg = describe(db, rc, c->path);
	cache_rollback(c);
	return msg;
}

static char *parent_dir(const char *path)
{
	char *dir = xstrdup(path);
	char *slash = strrchr(dir, '/');
	if (!slash) {
		free(dir);
		return xstrdup(".");
	}
	if (slash == dir)
		slash[1] = 0;
	else
		*slash = 0;
	return dir;
}

mtpc_cache *mtpc_cache_open_ex(const char *path, int readonly, char **errmsg)
{
	mtpc_cache *c = xcalloc(1, sizeof *c);
	struct stat st;
	char *msg = NULL;
	int rc;

	c->path = xstrdup(path);
	c->readonly = readonly;
	/* Say "no such file" ourselves: SQLite's CANTOPEN does not say why, and a
	 * read-only command must not create the file to find out. */
	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			msg = xasprintf("%s: is a directory, not a plan cache", path);
			goto fail;
		}
	} else if (errno != ENOENT || readonly) {
		msg = errno == ENOENT ? xasprintf("%s: no plan cache here (no such file)", path)
				      : xasprintf("%s: %s", path, strerror(errno));
		goto fail;
	} else {
		char *dir = parent_dir(path);
		if (mtpc_mkdir_p(dir) < 0) {
			msg = xasprintf("%s: cannot create directory %s: %s", path, dir, strerror(errno));
			free(dir);
			goto fail;
		}
		/* Say why ourselves here too: when SQLite cannot create the file
		 * it retries read-only, and its errno is then ENOENT ("cannot open
		 * plan cache (No such file or directory)" for a directory the user
		 * may not write in; tests/integration/test_faults.py, cache as nobody). */
		if (access(dir, W_OK | X_OK) < 0) {
			msg = xasprintf("%s: cannot create the plan cache in %s: %s", path, dir,
					strerror(errno));
			free(dir);
			goto fail;
		}
		free(dir);
	}

	rc = sqlite3_open_v2(path, &c->db,
			     readonly ? SQLITE_OPEN_READONLY
				      : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
			     NULL);
	if (rc != SQLITE_OK) {
		msg = describe(c->db, rc, path);
		goto fail;
	}
	sqlite3_extended_result_codes(c->db, 1);
	sqlite3_busy_timeout(c->db, busy_timeout_ms());
	/* SQLite silently falls back to read-only when the file is not
	 * writable; the writer must know now, not at its first store. */
	if (!readonly && sqlite3_db_readonly(c->db, "main") == 1) {
		msg = xasprintf("%s: plan cache is not writable", path);
		goto fail;
	}
	if ((msg = check_schema(c)))
		goto fail;
	/* foreign_keys: plan deletes cascade to their rows. synchronous=NORMAL
	 * is the WAL setting SQLite recommends: still never corrupt, only the
	 * last commits may be lost on power failure, and a cache can afford
	 * that better than an fsync per partition slot. */
	if ((rc = cache_exec(c->db, "PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL"))) {
		msg = describe(c->db, rc, path);
		goto fail;
	}
	return c;

fail:
	if (errmsg) {
		*errmsg = msg;
	} else {
		if (!cache_quiet())
			mtpc_warn("plan cache %s; continuing without it", msg);
		free(msg);
	}
	mtpc_cache_close(c);
	return NULL;
}

mtpc_cache *mtpc_cache_open(const char *path, int readonly)
{
	return mtpc_cache_open_ex(path, readonly, NULL);
}

void mtpc_cache_close(mtpc_cache *c)
{
	if (!c)
		return;
	/* sqlite3_close_v2 tolerates unfinalized statements; we never leave any,
	 * but a close must not fail the build either way. */
	sqlite3_close_v2(c->db);
	free(c->path);
	free(c);
}
