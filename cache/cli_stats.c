/* cli_stats.c: `mtpc-cache stats` (in the spirit of `ccache -s`) and
 * `mtpc-cache diff` (functions that moved between two plans of a module). */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Size of the database file plus its WAL (what the user sees on disk). */
static long long disk_bytes(const char *path)
{
	struct stat st;
	long long n = 0;
	char *wal = xasprintf("%s-wal", path);
	if (stat(path, &st) == 0)
		n += st.st_size;
	if (stat(wal, &st) == 0)
		n += st.st_size;
	free(wal);
	return n;
}

int cmd_stats(int argc, char **argv)
{
	const char *cache_opt = NULL, *pos[1];
	int json = 0, npos, rc;
	const struct cli_opt opts[] = {{"--json", NULL, &json}, {NULL, NULL, NULL}};
	mtpc_cache *c;
	sqlite3_stmt *st = NULL;
	json_t *largest = json_array(), *out = NULL;
	char b1[32], b2[32];

	if ((rc = cli_parse(argc, argv, opts, &cache_opt, pos, 0, &npos)))
		return json_decref(largest), rc < 0 ? 0 : rc;
	if (!(c = cli_open(cache_opt, 1)))
		return json_decref(largest), 1;
	rc = 1;
	/* One read transaction so that the numbers agree with each other while
	 * builds keep writing (WAL gives this reader a snapshot). */
	if (cache_exec(c->db, "BEGIN")) {
		cli_db_error(c, "cannot read statistics");
		goto out;
	}
	st = cache_prepare(c->db,
		"SELECT (SELECT count(*) FROM plans), (SELECT count(DISTINCT module_path) FROM plans),"
		" (SELECT count(*) FROM builds), (SELECT count(*) FROM builds WHERE hit),"
		" (SELECT total(split_seconds) FROM builds), (SELECT total(saved_seconds) FROM builds),"
		" (SELECT count(*) FROM timings), (SELECT total(seconds) FROM timings),"
		" (SELECT total(object_bytes) FROM timings), (SELECT min(time) FROM builds)");
	if (!st || sqlite3_step(st) != SQLITE_ROW) {
		cli_db_error(c, "cannot read statistics");
		goto out;
	}
	long long plans = sqlite3_column_int64(st, 0), modules = sqlite3_column_int64(st, 1);
	long long builds = sqlite3_column_int64(st, 2), hits = sqlite3_column_int64(st, 3);
	double spent = sqlite3_column_double(st, 4), saved = sqlite3_column_double(st, 5);
	long long measured = sqlite3_column_int64(st, 6);
	double compile = sqlite3_column_double(st, 7);
	long long objbytes = (long long)sqlite3_column_double(st, 8);
	double since = sqlite3_column_double(st, 9);
	int have_since = sqlite3_column_type(st, 9) != SQLITE_NULL;
	double rate = builds ? 100.0 * (double)hits / (double)builds : 0;
	sqlite3_finalize(st);

	/* Largest modules: each module's most recently used plan, by cost. */
	st = cache_prepare(c->db,
		"SELECT p.module_path, p.module_hash, p.partitions, p.functions, p.cost,"
		" (SELECT total(seconds) FROM timings t WHERE t.module_hash = p.module_hash"
		"  AND t.options_hash = p.options_hash) "
		"FROM plans p WHERE p.id = (SELECT q.id FROM plans q WHERE q.module_path = p.module_path"
		" ORDER BY q.last_used DESC, q.id DESC LIMIT 1) "
		"ORDER BY p.cost DESC, p.module_path LIMIT 5");
	if (!st) {
		cli_db_error(c, "cannot read statistics");
		goto out;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		json_array_append_new(largest,
			json_pack("{s:s, s:s, s:I, s:I, s:I, s:f}",
				  "module_path", (const char *)sqlite3_column_text(st, 0),
				  "module_hash", (const char *)sqlite3_column_text(st, 1),
				  "partitions", (json_int_t)sqlite3_column_int64(st, 2),
				  "functions", (json_int_t)sqlite3_column_int64(st, 3),
				  "cost", (json_int_t)sqlite3_column_int64(st, 4),
				  "measured_seconds", sqlite3_column_double(st, 5)));
	if (rc != SQLITE_DONE) {
		rc = cli_db_error(c, "cannot read statistics");
		goto out;
	}
	rc = 0;
	long long size = disk_bytes(c->path);

	if (json) {
		out = json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:f, s:f, s:I, s:f, s:I, s:o}",
				"database", c->path, "size_bytes", (json_int_t)size,
				"plans", (json_int_t)plans, "modules", (json_int_t)modules,
				"builds", (json_int_t)builds, "hits", (json_int_t)hits,
				"misses", (json_int_t)(builds - hits), "hit_rate", rate / 100,
				"split_seconds", spent, "saved_seconds", saved,
				"measured_partitions", (json_int_t)measured, "compile_seconds", compile,
				"object_bytes", (json_int_t)objbytes, "largest_modules", json_incref(largest));
		if (have_since)
			json_object_set_new(out, "since", json_real(since));
		cli_print_json(out);
		goto out;
	}
	printf("database                 %s\n", c->path);
	printf("size on disk             %s\n", cli_bytes(size, b1));
	if (have_since)
		printf("first build              %s\n", cli_time(since, b1));
	printf("plans                    %lld (%lld module%s)\n", plans, modules, modules == 1 ? "" : "s");
	printf("builds                   %lld\n", builds);
	if (builds)
		printf("  hits                   %lld (%.1f %%)\n", hits, rate);
	else
		printf("  hits                   0 (no builds yet)\n");
	printf("  misses                 %lld\n", builds - hits);
	printf("split time spent         %.2f s\n", spent);
	printf("split time saved         %.2f s\n", saved);
	printf("partitions measured      %lld (compile %.2f s, objects %s)\n", measured, compile,
	       cli_bytes(objbytes, b2));
	if (json_array_size(largest)) {
		size_t i;
		json_t *m;
		printf("largest modules (most recent plan, by estimated cost):\n");
		printf("  %10s  %6s  %5s  %10s  %s\n", "COST", "FUNCS", "PARTS", "MEASURED", "MODULE");
		json_array_foreach(largest, i, m) {
			snprintf(b1, sizeof b1, "%.2f s",
				 json_real_value(json_object_get(m, "measured_seconds")));
			printf("  %10lld  %6lld  %5lld  %10s  %s\n",
			       (long long)json_integer_value(json_object_get(m, "cost")),
			       (long long)json_integer_value(json_object_get(m, "functions")),
			       (long long)json_integer_value(json_object_get(m, "partitions")), b1,
			       json_string_value(json_object_get(m, "module_path")));
		}
	}
out:
	sqlite3_finalize(st);
	if (c && !sqlite3_get_autocommit(c->db))
		cache_exec(c->db, "COMMIT"); /* ends the read transaction */
	json_decref(largest);
	mtpc_cache_close(c);
	return rc;
}

/* The plan of the same module used before plan `id`: 0 if none (reported),
 * -1 on error. */
static long long previous_plan(mtpc_cache *c, long long id)
{
	sqlite3_stmt *st = cache_prepare(c->db,
		"SELECT q.id FROM plans p JOIN plans q ON q.module_path = p.module_path AND q.id <> p.id "
		"WHERE p.id = ?1 AND (q.last_used < p.last_used OR (q.last_used = p.last_used AND q.id < p.id)) "
		"ORDER BY q.last_used DESC, q.id DESC LIMIT 1");
	long long prev = 0;
	int rc;
	if (!st)
		return cli_db_error(c, "cannot look up plan"), -1;
	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		prev = sqlite3_column_int64(st, 0);
	else if (rc == SQLITE_DONE)
		mtpc_error("%s: only one plan of this module is cached; nothing to diff against", c->path);
	else
		prev = -1, cli_db_error(c, "cannot look up plan");
	sqlite3_finalize(st);
	return prev;
}

/* {module_path, module_hash, options_hash, last_used, partitions} of a plan. */
static json_t *plan_summary(mtpc_cache *c, long long id)
{
	sqlite3_stmt *st = cache_prepare(c->db, "SELECT module_path, module_hash, options_hash, last_used, "
						"partitions FROM plans WHERE id = ?1");
	json_t *j = NULL;
	if (st) {
		sqlite3_bind_int64(st, 1, id);
		if (sqlite3_step(st) == SQLITE_ROW)
			j = json_pack("{s:s, s:s, s:s, s:f, s:I}",
				      "module_path", (const char *)sqlite3_column_text(st, 0),
				      "module_hash", (const char *)sqlite3_column_text(st, 1),
				      "options_hash", (const char *)sqlite3_column_text(st, 2),
				      "last_used", sqlite3_column_double(st, 3),
				      "partitions", (json_int_t)sqlite3_column_int64(st, 4));
	}
	sqlite3_finalize(st);
	if (!j)
		cli_db_error(c, "cannot read plan");
	return j;
}

/* Rows (name, a, b) for functions owned in both plans but in different
 * partitions, owned only in the new one, owned only in the old one. */
static const char *const diff_queries[3] = {
	"SELECT a.name, a.partition, b.partition FROM functions a JOIN functions b "
	"ON b.plan_id = ?2 AND b.kind = 0 AND b.name = a.name "
	"WHERE a.plan_id = ?1 AND a.kind = 0 AND a.partition <> b.partition ORDER BY a.name",
	"SELECT b.name, NULL, b.partition FROM functions b WHERE b.plan_id = ?2 AND b.kind = 0 "
	"AND NOT EXISTS (SELECT 1 FROM functions a WHERE a.plan_id = ?1 AND a.kind = 0 "
	"AND a.name = b.name) ORDER BY b.name",
	"SELECT a.name, a.partition, NULL FROM functions a WHERE a.plan_id = ?1 AND a.kind = 0 "
	"AND NOT EXISTS (SELECT 1 FROM functions b WHERE b.plan_id = ?2 AND b.kind = 0 "
	"AND b.name = a.name) ORDER BY a.name",
};

int cmd_diff(int argc, char **argv)
{
	const char *cache_opt = NULL, *pos[2];
	int json = 0, npos, rc;
	const struct cli_opt opts[] = {{"--json", NULL, &json}, {NULL, NULL, NULL}};
	static const char *const keys[3] = {"moved", "added", "removed"};
	mtpc_cache *c;
	json_t *out = NULL, *lists[3] = {NULL, NULL, NULL};
	long long old_id, new_id, unchanged = 0;
	char tbuf[32];

	if ((rc = cli_parse(argc, argv, opts, &cache_opt, pos, 2, &npos)))
		return rc < 0 ? 0 : rc;
	if (npos < 1)
		return cli_usage_error("diff", "which module? give a module path or a module hash");
	if (!(c = cli_open(cache_opt, 1)))
		return 1;
	rc = 1;
	if (npos == 2) {
		if ((old_id = cli_find_plan(c, pos[0])) <= 0 || (new_id = cli_find_plan(c, pos[1])) <= 0)
			goto out;
	} else if ((new_id = cli_find_plan(c, pos[0])) <= 0 || (old_id = previous_plan(c, new_id)) <= 0)
		goto out;

	out = json_object();
	json_t *o = plan_summary(c, old_id), *n = plan_summary(c, new_id);
	json_object_set_new(out, "old", o ? o : json_null());
	json_object_set_new(out, "new", n ? n : json_null());
	if (!o || !n)
		goto out;
	for (int q = 0; q < 3; q++) {
		sqlite3_stmt *st = cache_prepare(c->db, diff_queries[q]);
		int r;
		lists[q] = json_array();
		if (!st) {
			cli_db_error(c, "cannot compare plans");
			goto out;
		}
		sqlite3_bind_int64(st, 1, old_id);
		sqlite3_bind_int64(st, 2, new_id);
		while ((r = sqlite3_step(st)) == SQLITE_ROW) {
			json_t *e = json_pack("{s:s}", "name", (const char *)sqlite3_column_text(st, 0));
			if (q != 1)
				json_object_set_new(e, q == 0 ? "from" : "partition",
						    json_integer(sqlite3_column_int64(st, 1)));
			if (q != 2)
				json_object_set_new(e, q == 0 ? "to" : "partition",
						    json_integer(sqlite3_column_int64(st, 2)));
			json_array_append_new(lists[q], e);
		}
		sqlite3_finalize(st);
		if (r != SQLITE_DONE) {
			cli_db_error(c, "cannot compare plans");
			goto out;
		}
	}
	{
		sqlite3_stmt *st = cache_prepare(c->db,
			"SELECT count(*) FROM functions a JOIN functions b ON b.plan_id = ?2 AND b.kind = 0 "
			"AND b.name = a.name AND b.partition = a.partition WHERE a.plan_id = ?1 AND a.kind = 0");
		if (!st) {
			cli_db_error(c, "cannot compare plans");
			goto out;
		}
		sqlite3_bind_int64(st, 1, old_id);
		sqlite3_bind_int64(st, 2, new_id);
		if (sqlite3_step(st) == SQLITE_ROW)
			unchanged = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	rc = 0;
	if (json) {
		for (int q = 0; q < 3; q++)
			json_object_set(out, keys[q], lists[q]);
		json_object_set_new(out, "unchanged", json_integer(unchanged));
		cli_print_json(out);
		out = NULL;
		goto out;
	}
	printf("module  %s\n", json_string_value(json_object_get(n, "module_path")));
	if (strcmp(json_string_value(json_object_get(o, "module_path")),
		   json_string_value(json_object_get(n, "module_path"))) != 0)
		printf("        (old plan is of %s)\n", json_string_value(json_object_get(o, "module_path")));
	printf("old     %.12s  options %.8s  %lld partitions  last used %s\n",
	       json_string_value(json_object_get(o, "module_hash")),
	       json_string_value(json_object_get(o, "options_hash")),
	       (long long)json_integer_value(json_object_get(o, "partitions")),
	       cli_time(json_real_value(json_object_get(o, "last_used")), tbuf));
	printf("new     %.12s  options %.8s  %lld partitions  last used %s\n",
	       json_string_value(json_object_get(n, "module_hash")),
	       json_string_value(json_object_get(n, "options_hash")),
	       (long long)json_integer_value(json_object_get(n, "partitions")),
	       cli_time(json_real_value(json_object_get(n, "last_used")), tbuf));
	for (int q = 0; q < 3; q++) {
		size_t i;
		json_t *e;
		json_array_foreach(lists[q], i, e) {
			const char *name = json_string_value(json_object_get(e, "name"));
			if (q == 0)
				printf("moved    %-40s p%lld -> p%lld\n", name,
				       (long long)json_integer_value(json_object_get(e, "from")),
				       (long long)json_integer_value(json_object_get(e, "to")));
			else
				printf("%-8s %-40s p%lld\n", q == 1 ? "added" : "removed", name,
				       (long long)json_integer_value(json_object_get(e, "partition")));
		}
	}
	printf("%zu moved, %zu added, %zu removed, %lld unchanged\n", json_array_size(lists[0]),
	       json_array_size(lists[1]), json_array_size(lists[2]), unchanged);
out:
	for (int q = 0; q < 3; q++)
		json_decref(lists[q]);
	json_decref(out);
	mtpc_cache_close(c);
	return rc;
}
