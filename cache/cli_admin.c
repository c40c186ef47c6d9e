/* cli_admin.c: `mtpc-cache path`, `gc`, `export`, and `record`, `store` and
 * `lookup` for scripts and tests (the build itself records, stores and looks
 * up through libmtpc_cache: mtpc-split and mtpc-link --slot-step). */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int cmd_path(int argc, char **argv)
{
	const char *cache_opt = NULL, *pos[1], *source;
	int npos, rc;
	struct stat st;
	char b[32];

	if ((rc = cli_parse(argc, argv, NULL, &cache_opt, pos, 0, &npos)))
		return rc < 0 ? 0 : rc;
	char *path = mtpc_cache_resolve_path(cache_opt, &source);
	printf("%s\n", path);
	if (strcmp(source, "option") == 0)
		printf("chosen by: --cache option\n");
	else if (strcmp(source, "MTPC_CACHE") == 0)
		printf("chosen by: $MTPC_CACHE\n");
	else if (strcmp(source, "XDG_CACHE_HOME") == 0)
		printf("chosen by: $XDG_CACHE_HOME/mtpc/plans.sqlite (no --cache, $MTPC_CACHE unset)\n");
	else
		printf("chosen by: $HOME/.cache/mtpc/plans.sqlite (no --cache; $MTPC_CACHE and "
		       "$XDG_CACHE_HOME unset)\n");
	if (stat(path, &st) == 0)
		printf("exists: yes (%s)\n", cli_bytes(st.st_size, b));
	else
		printf("exists: no (the first build creates it)\n");
	free(path);
	return 0;
}

/* Strict number parsing: the whole string, no overflow. */
static int parse_double(const char *s, double *out)
{
	char *end;
	if (!s || !*s)
		return -1;
	errno = 0;
	*out = strtod(s, &end);
	return *end || errno ? -1 : 0;
}

static int parse_ll(const char *s, long long *out)
{
	char *end;
	if (!s || !*s)
		return -1;
	errno = 0;
	*out = strtoll(s, &end, 10);
	return *end || errno ? -1 : 0;
}

/* BYTES with an optional K/M/G suffix (powers of 1024). */
static int parse_size(const char *s, long long *out)
{
	char *end;
	long long mult = 1;
	if (!s || !*s)
		return -1;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || v < 0)
		return -1;
	switch (*end) {
	case 'k': case 'K': mult = 1LL << 10; break;
	case 'm': case 'M': mult = 1LL << 20; break;
	case 'g': case 'G': mult = 1LL << 30; break;
	}
	if (mult > 1 && *++end == 'i')
		end++; /* 10MiB */
	if (*end == 'B')
		end++; /* 10MB, 4096B */
	if (*end || v * (double)mult > 9e18)
		return -1;
	*out = (long long)(v * (double)mult);
	return 0;
}

int cmd_record(int argc, char **argv)
{
	const char *cache_opt = NULL, *pos[1], *mh = NULL, *oh = NULL, *part = NULL, *secs = NULL;
	const char *bytes = NULL, *object = NULL;
	const struct cli_opt opts[] = {{"--module-hash", &mh, NULL},
				       {"--options-hash", &oh, NULL},
				       {"--partition", &part, NULL},
				       {"--seconds", &secs, NULL},
				       {"--object-bytes", &bytes, NULL},
				       {"--object", &object, NULL},
				       {NULL, NULL, NULL}};
	int npos, rc;
	long long partition, nbytes = 0;
	double seconds;

	/* Bad usage is a bug in the build generator: fail loudly (exit 2). Only
	 * problems with the cache itself are downgraded to a warning. */
	if ((rc = cli_parse(argc, argv, opts, &cache_opt, pos, 0, &npos)))
		return rc < 0 ? 0 : rc;
	if (!mh || !*mh || !oh || !*oh)
		return cli_usage_error("record", "--module-hash and --options-hash are required");
	if (parse_ll(part, &partition) < 0 || partition < 0 || partition > 1000000)
		return cli_usage_error("record", "--partition needs a partition index, not '%s'",
				       part ? part : "");
	if (parse_double(secs, &seconds) < 0 || seconds < 0)
		return cli_usage_error("record", "--seconds needs a non-negative number, not '%s'",
				       secs ? secs : "");
	if (!bytes == !object)
		return cli_usage_error("record", "give exactly one of --object-bytes and --object");
	if (bytes && (parse_ll(bytes, &nbytes) < 0 || nbytes < 0))
		return cli_usage_error("record", "--object-bytes needs a byte count, not '%s'", bytes);
	if (object) {
		struct stat st;
		if (stat(object, &st) < 0) {
			mtpc_warn("cannot record partition %lld: %s: %s", partition, object, strerror(errno));
			return 0;
		}
		nbytes = st.st_size;
	}
	char *path = mtpc_cache_resolve_path(cache_opt, NULL);
	mtpc_cache *c = mtpc_cache_open(path, 0); /* warns once on failure */
	mtpc_cache_record_partition(c, mh, oh, (int)partition, seconds, nbytes);
	mtpc_cache_close(c);
	free(path);
	return 0;
}

int cmd_gc(int argc, char **argv)
{
	const char *cache_opt = NULL, *pos[1], *age = NULL, *size = NULL;
	const struct cli_opt opts[] = {{"--max-age", &age, NULL}, {"--max-size", &size, NULL}, {NULL, NULL, NULL}};
	int npos, rc, removed = 0;
	double days = -1;
	long long max_bytes = -1;
	char b1[32], b2[32];

	if ((rc = cli_parse(argc, argv, opts, &cache_opt, pos, 0, &npos)))
		return rc < 0 ? 0 : rc;
	if (!age && !size)
		return cli_usage_error("gc", "give --max-age DAYS and/or --max-size BYTES");
	if (age && (parse_double(age, &days) < 0 || days < 0))
		return cli_usage_error("gc", "--max-age needs a number of days, not '%s'", age);
	if (size && parse_size(size, &max_bytes) < 0)
		return cli_usage_error("gc", "--max-size needs a byte count (e.g. 100M), not '%s'", size);
	mtpc_cache *c = cli_open(cache_opt, 0);
	if (!c)
		return 1;
	/* disk_bytes-like: the main file and its WAL. */
	char *wal = xasprintf("%s-wal", c->path);
	struct stat st;
	long long before = 0, after = 0;
	if (stat(c->path, &st) == 0)
		before += st.st_size;
	if (stat(wal, &st) == 0)
		before += st.st_size;
	/* Errors as errors here, not the library's "continuing" warning. */
	if (cache_begin(c)) {
		rc = cli_db_error(c, "cannot collect garbage");
		goto out;
	}
	cache_rollback(c);
	if (mtpc_cache_gc(c, days, max_bytes, &removed) < 0) {
		mtpc_error("%s: garbage collection failed", c->path);
		rc = 1;
		goto out;
	}
	if (stat(c->path, &st) == 0)
		after += st.st_size;
	if (stat(wal, &st) == 0)
		after += st.st_size;
	printf("removed %d plan%s; %s: %s -> %s\n", removed, removed == 1 ? "" : "s", c->path,
	       cli_bytes(before, b1), cli_bytes(after, b2));
	rc = 0;
out:
	free(wal);
	mtpc_cache_close(c);
	return rc;
}

int cmd_export(int argc, char **argv)
{
	const char *cache_opt = NULL, *pos[1];
	int json = 0, npos, rc;
	const struct cli_opt opts[] = {{"--json", NULL, &json}, {NULL, NULL, NULL}};
	mtpc_cache *c;
	sqlite3_stmt *st = NULL;
	json_t *out = NULL, *plans, *builds;

	if ((rc = cli_parse(argc, argv, opts, &cache_opt, pos, 0, &npos)))
		return rc < 0 ? 0 : rc;
	if (!(c = cli_open(cache_opt, 1)))
		return 1;
	rc = 1;
	if (cache_exec(c->db, "BEGIN")) { /* one consistent snapshot */
		cli_db_error(c, "cannot export");
		goto out;
	}
	out = json_pack("{s:s, s:i, s:s, s:[], s:[]}", "format", "mtpc-cache-export",
			"schema_version", CACHE_SCHEMA_VERSION, "database", c->path, "plans", "builds");
	plans = json_object_get(out, "plans");
	builds = json_object_get(out, "builds");
	st = cache_prepare(c->db, "SELECT id, module_path, module_hash, options_hash, split_seconds, "
				  "created, last_used FROM plans ORDER BY module_path, last_used, id");
	if (!st) {
		cli_db_error(c, "cannot export");
		goto out;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		json_t *plan = cli_plan_json(c, sqlite3_column_int64(st, 0));
		if (!plan) {
			rc = SQLITE_ERROR;
			goto out;
		}
		json_array_append_new(plans,
			json_pack("{s:s, s:s, s:s, s:f, s:f, s:f, s:o}",
				  "module_path", (const char *)sqlite3_column_text(st, 1),
				  "module_hash", (const char *)sqlite3_column_text(st, 2),
				  "options_hash", (const char *)sqlite3_column_text(st, 3),
				  "split_seconds", sqlite3_column_double(st, 4),
				  "created", sqlite3_column_double(st, 5),
				  "last_used", sqlite3_column_double(st, 6), "plan", plan));
	}
	if (rc != SQLITE_DONE) {
		rc = cli_db_error(c, "cannot export");
		goto out;
	}
	sqlite3_finalize(st);
	st = cache_prepare(c->db, "SELECT time, module_path, module_hash, options_hash, hit, "
				  "split_seconds, saved_seconds FROM builds ORDER BY time, id");
	if (!st) {
		rc = cli_db_error(c, "cannot export");
		goto out;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		json_array_append_new(builds,
			json_pack("{s:f, s:s, s:s, s:s, s:b, s:f, s:f}",
				  "time", sqlite3_column_double(st, 0),
				  "module_path", (const char *)sqlite3_column_text(st, 1),
				  "module_hash", (const char *)sqlite3_column_text(st, 2),
				  "options_hash", (const char *)sqlite3_column_text(st, 3),
				  "hit", sqlite3_column_int(st, 4),
				  "split_seconds", sqlite3_column_double(st, 5),
				  "saved_seconds", sqlite3_column_double(st, 6)));
	if (rc != SQLITE_DONE) {
		rc = cli_db_error(c, "cannot export");
		goto out;
	}
	cli_print_json(out);
	out = NULL;
	rc = 0;
out:
	sqlite3_finalize(st);
	json_decref(out);
	if (!sqlite3_get_autocommit(c->db))
		cache_exec(c->db, "COMMIT");
	mtpc_cache_close(c);
	return rc;
}

int cmd_store(int argc, char **argv)
{
	const char *cache_opt = NULL, *pos[1], *module = NULL, *mh = NULL, *oh = NULL, *planf = NULL;
	const char *secs = "0";
	int hit = 0, npos, rc;
	const struct cli_opt opts[] = {{"--module", &module, NULL},
				       {"--module-hash", &mh, NULL},
				       {"--options-hash", &oh, NULL},
				       {"--plan", &planf, NULL},
				       {"--seconds", &secs, NULL},
				       {"--hit", NULL, &hit},
				       {NULL, NULL, NULL}};
	double seconds;
	char *text;
	size_t len;

	if ((rc = cli_parse(argc, argv, opts, &cache_opt, pos, 0, &npos)))
		return rc < 0 ? 0 : rc;
	if (!module || !*module || !mh || !*mh || !oh || !*oh || !planf)
		return cli_usage_error("store", "--module, --module-hash, --options-hash and --plan are required");
	if (parse_double(secs, &seconds) < 0 || seconds < 0)
		return cli_usage_error("store", "--seconds needs a non-negative number, not '%s'", secs);
	if (mtpc_read_file(planf, &text, &len) < 0) {
		mtpc_error("%s: %s", planf, strerror(errno));
		return 1;
	}
	char *path = mtpc_cache_resolve_path(cache_opt, NULL);
	mtpc_cache *c = mtpc_cache_open(path, 0);
	rc = mtpc_cache_store(c, module, mh, oh, text, seconds, hit);
	mtpc_cache_close(c);
	free(path);
	free(text);
	/* Like record: an unusable cache was warned about and is not fatal. A
	 * plan the cache refused (not JSON) is reported the same way. */
	(void)rc;
	return 0;
}

int cmd_lookup(int argc, char **argv)
{
	const char *cache_opt = NULL, *pos[1], *module = NULL, *mh = NULL, *oh = NULL;
	int previous = 0, npos, rc;
	const struct cli_opt opts[] = {{"--module", &module, NULL},
				       {"--module-hash", &mh, NULL},
				       {"--options-hash", &oh, NULL},
				       {"--previous", NULL, &previous},
				       {NULL, NULL, NULL}};
	char *plan = NULL;

	if ((rc = cli_parse(argc, argv, opts, &cache_opt, pos, 0, &npos)))
		return rc < 0 ? 0 : rc;
	if (!oh || !*oh || (previous ? !module || !*module : !mh || !*mh))
		return cli_usage_error("lookup", "give --module-hash H --options-hash O, or "
						 "--previous --module PATH --options-hash O");
	char *path = mtpc_cache_resolve_path(cache_opt, NULL);
	struct stat st;
	/* A missing cache is a plain miss: the first build has not run yet. */
	if (stat(path, &st) == 0) {
		mtpc_cache *c = mtpc_cache_open(path, 1);
		plan = previous ? mtpc_cache_lookup_previous(c, module, oh) : mtpc_cache_lookup(c, mh, oh);
		mtpc_cache_close(c);
	}
	free(path);
	if (!plan)
		return 1;
	/* As stored; only add the newline a plan file may lack. */
	fputs(plan, stdout);
	if (!*plan || plan[strlen(plan) - 1] != '\n')
		putchar('\n');
	free(plan);
	return 0;
}
