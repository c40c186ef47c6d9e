/* cli_show.c: `mtpc-cache list` and `mtpc-cache show` (text, JSON, DOT and
 * rendering the DOT through Graphviz). */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "proc.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

/* Columns shared by list and show; the builds/hits/measured numbers come from
 * the builds and timings tables, joined on the plan key. */
#define PLAN_COLUMNS                                                                              \
	"p.id, p.module_path, p.module_hash, p.options_hash, p.partitions, p.functions, p.cost, " \
	"p.split_seconds, p.created, p.last_used, "                                              \
	"(SELECT count(*) FROM builds b WHERE b.module_hash = p.module_hash "                   \
	" AND b.options_hash = p.options_hash), "                                                \
	"(SELECT count(*) FROM builds b WHERE b.module_hash = p.module_hash "                   \
	" AND b.options_hash = p.options_hash AND b.hit), "                                      \
	"(SELECT count(*) FROM timings t WHERE t.module_hash = p.module_hash "                  \
	" AND t.options_hash = p.options_hash), "                                                \
	"(SELECT total(seconds) FROM timings t WHERE t.module_hash = p.module_hash "            \
	" AND t.options_hash = p.options_hash) "

enum { C_ID, C_PATH, C_HASH, C_OPTS, C_PARTS, C_FUNCS, C_COST, C_SPLIT, C_CREATED, C_USED,
       C_BUILDS, C_HITS, C_MEASURED, C_MEASURED_SECONDS };

#define COL_TEXT(st, i) ((const char *)sqlite3_column_text(st, i))

/* The cache's data about one plan row, as a JSON object. */
static json_t *plan_row_json(sqlite3_stmt *st)
{
	return json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:f, s:f, s:f, s:I, s:I, s:I, s:f}",
			 "module_path", COL_TEXT(st, C_PATH), "module_hash", COL_TEXT(st, C_HASH),
			 "options_hash", COL_TEXT(st, C_OPTS),
			 "partitions", (json_int_t)sqlite3_column_int64(st, C_PARTS),
			 "functions", (json_int_t)sqlite3_column_int64(st, C_FUNCS),
			 "cost", (json_int_t)sqlite3_column_int64(st, C_COST),
			 "split_seconds", sqlite3_column_double(st, C_SPLIT),
			 "created", sqlite3_column_double(st, C_CREATED),
			 "last_used", sqlite3_column_double(st, C_USED),
			 "builds", (json_int_t)sqlite3_column_int64(st, C_BUILDS),
			 "hits", (json_int_t)sqlite3_column_int64(st, C_HITS),
			 "measured_partitions", (json_int_t)sqlite3_column_int64(st, C_MEASURED),
			 "measured_seconds", sqlite3_column_double(st, C_MEASURED_SECONDS));
}

int cmd_list(int argc, char **argv)
{
	const char *cache_opt = NULL, *pos[1];
	int json = 0, npos, rc, n = 0;
	const struct cli_opt opts[] = {{"--json", NULL, &json}, {NULL, NULL, NULL}};
	mtpc_cache *c;
	sqlite3_stmt *st;
	json_t *arr;
	char tbuf[32];

	if ((rc = cli_parse(argc, argv, opts, &cache_opt, pos, 0, &npos)))
		return rc < 0 ? 0 : rc;
	if (!(c = cli_open(cache_opt, 1)))
		return 1;
	st = cache_prepare(c->db, "SELECT " PLAN_COLUMNS "FROM plans p ORDER BY p.module_path, p.last_used DESC, p.id DESC");
	if (!st) {
		rc = cli_db_error(c, "cannot list plans");
		mtpc_cache_close(c);
		return rc;
	}
	arr = json_array();
	if (!json)
		printf("%-12s  %-8s  %5s  %6s  %10s  %6s  %5s  %-19s  %s\n", "HASH", "OPTIONS", "PARTS",
		       "FUNCS", "COST", "BUILDS", "HITS", "LAST USED", "MODULE");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		n++;
		if (json) {
			json_array_append_new(arr, plan_row_json(st));
			continue;
		}
		printf("%-12.12s  %-8.8s  %5lld  %6lld  %10lld  %6lld  %5lld  %-19s  %s\n",
		       COL_TEXT(st, C_HASH), COL_TEXT(st, C_OPTS), sqlite3_column_int64(st, C_PARTS),
		       sqlite3_column_int64(st, C_FUNCS), sqlite3_column_int64(st, C_COST),
		       sqlite3_column_int64(st, C_BUILDS), sqlite3_column_int64(st, C_HITS),
		       cli_time(sqlite3_column_double(st, C_USED), tbuf), COL_TEXT(st, C_PATH));
	}
	if (rc != SQLITE_DONE) {
		rc = cli_db_error(c, "cannot list plans");
		json_decref(arr);
	} else {
		rc = 0;
		if (json)
			cli_print_json(arr);
		else {
			json_decref(arr);
			printf("%d plan%s in %s\n", n, n == 1 ? "" : "s", c->path);
		}
	}
	sqlite3_finalize(st);
	mtpc_cache_close(c);
	return rc;
}

/* A DOT string literal. */
static void dot_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

/* Partitions as boxes (cost, owned/copies counts, measured time and size
 * when known), cross-partition edges labelled with their reference count
 * and drawn thicker the more references they carry. */
static void write_dot(FILE *f, const char *module_path, json_t *plan)
{
	json_t *parts = json_object_get(plan, "partitions"), *p, *e;
	size_t i;
	char b[32];

	fputs("digraph ", f);
	dot_string(f, module_path);
	fputs(" {\n  rankdir=LR;\n  node [shape=box, fontname=\"monospace\"];\n  label=", f);
	dot_string(f, module_path);
	fputs(";\n", f);
	json_array_foreach(parts, i, p) {
		json_int_t idx = json_integer_value(json_object_get(p, "index"));
		char *label = xasprintf("p%lld\ncost %lld\n%zu owned, %zu copies",
					(long long)idx, (long long)json_integer_value(json_object_get(p, "cost")),
					json_array_size(json_object_get(p, "owned")),
					json_array_size(json_object_get(p, "copies")));
		if (json_object_get(p, "measured_seconds")) {
			char *l2 = xasprintf("%s\n%.2f s, %s", label,
					     json_number_value(json_object_get(p, "measured_seconds")),
					     cli_bytes(json_integer_value(json_object_get(p, "object_bytes")), b));
			free(label);
			label = l2;
		}
		fprintf(f, "  p%lld [label=", (long long)idx);
		dot_string(f, label);
		fputs("];\n", f);
		free(label);
	}
	json_array_foreach(json_object_get(plan, "edges"), i, e) {
		json_int_t from = json_integer_value(json_array_get(e, 0));
		json_int_t to = json_integer_value(json_array_get(e, 1));
		json_int_t count = json_integer_value(json_array_get(e, 2));
		int width = 1;
		for (json_int_t k = count; k >= 10 && width < 6; k /= 10)
			width++;
		fprintf(f, "  p%lld -> p%lld [label=\"%lld\", penwidth=%d];\n", (long long)from,
			(long long)to, (long long)count, width);
	}
	fputs("}\n", f);
}

/* Feed the DOT text to `dot -T<fmt> -o out`. */
static int render(const char *out, const char *dot_text, size_t len)
{
	const char *ext = strrchr(out, '.'), *fmt = NULL;
	char *dot;

	if (ext && (strcmp(ext, ".svg") == 0 || strcmp(ext, ".png") == 0 || strcmp(ext, ".pdf") == 0))
		fmt = ext + 1;
	if (!fmt)
		return cli_usage_error("show", "cannot render '%s': use a .svg, .png or .pdf file name", out);
	if (!(dot = proc_which("dot"))) {
		mtpc_error("cannot render %s: Graphviz 'dot' is not installed (apt-get install graphviz), "
			   "or use --dot for the DOT text", out);
		return 1;
	}
	char *tflag = xasprintf("-T%s", fmt);
	char *argv[] = {dot, tflag, "-o", (char *)out, NULL};
	struct proc_io io = {.in = dot_text, .in_len = len};
	int st = proc_spawn(argv, &io);
	free(tflag);
	/* 127: proc_spawn already said why dot could not start. */
	if (st != 0 && st != 127)
		mtpc_error("cannot render %s: %s failed (%s %d)", out, dot,
			   st > 128 ? "signal" : "exit status", st > 128 ? st - 128 : st);
	free(dot);
	return st != 0;
}

static void show_text(sqlite3_stmt *row, json_t *plan, int functions)
{
	json_t *parts = json_object_get(plan, "partitions"), *p, *e;
	size_t i, j, nedges = 0;
	long long refs = 0;
	char b1[32], b2[32];

	printf("module        %s\n", COL_TEXT(row, C_PATH));
	printf("module hash   %s\n", COL_TEXT(row, C_HASH));
	printf("options hash  %s\n", COL_TEXT(row, C_OPTS));
	printf("created       %s\n", cli_time(sqlite3_column_double(row, C_CREATED), b1));
	printf("last used     %s\n", cli_time(sqlite3_column_double(row, C_USED), b1));
	printf("split time    %.3f s\n", sqlite3_column_double(row, C_SPLIT));
	printf("builds        %lld (%lld hits)\n", sqlite3_column_int64(row, C_BUILDS),
	       sqlite3_column_int64(row, C_HITS));
	printf("partitions    %lld, %lld owned functions, cost %lld\n", sqlite3_column_int64(row, C_PARTS),
	       sqlite3_column_int64(row, C_FUNCS), sqlite3_column_int64(row, C_COST));
	printf("\n%4s  %-12s  %10s  %6s  %6s  %5s  %10s  %10s\n", "PART", "FILE", "COST", "OWNED",
	       "COPIES", "DUP", "MEASURED", "OBJECT");
	json_array_foreach(parts, i, p) {
		json_t *ms = json_object_get(p, "measured_seconds");
		if (ms)
			snprintf(b1, sizeof b1, "%.3f s", json_number_value(ms));
		printf("%4lld  %-12s  %10lld  %6zu  %6zu  %5zu  %10s  %10s\n",
		       (long long)json_integer_value(json_object_get(p, "index")),
		       json_is_string(json_object_get(p, "file")) ? json_string_value(json_object_get(p, "file")) : "-",
		       (long long)json_integer_value(json_object_get(p, "cost")),
		       json_array_size(json_object_get(p, "owned")), json_array_size(json_object_get(p, "copies")),
		       json_array_size(json_object_get(p, "duplicated")), ms ? b1 : "-",
		       ms ? cli_bytes(json_integer_value(json_object_get(p, "object_bytes")), b2) : "-");
	}
	json_array_foreach(json_object_get(plan, "edges"), i, e) {
		nedges++;
		refs += json_integer_value(json_array_get(e, 2));
	}
	printf("\ncross-partition edges: %zu (%lld references)\n", nedges, refs);
	if (!functions)
		return;
	json_array_foreach(parts, i, p) {
		json_t *name;
		printf("\np%lld owns:", (long long)json_integer_value(json_object_get(p, "index")));
		json_array_foreach(json_object_get(p, "owned"), j, name)
			printf(" %s", json_string_value(name));
		putchar('\n');
	}
}

int cmd_show(int argc, char **argv)
{
	const char *cache_opt = NULL, *pos[1], *render_out = NULL;
	int json = 0, dot = 0, functions = 0, npos, rc;
	const struct cli_opt opts[] = {{"--json", NULL, &json},
				       {"--dot", NULL, &dot},
				       {"--functions", NULL, &functions},
				       {"--render", &render_out, NULL},
				       {NULL, NULL, NULL}};
	mtpc_cache *c;
	sqlite3_stmt *st = NULL;
	json_t *plan = NULL;
	long long id;

	if ((rc = cli_parse(argc, argv, opts, &cache_opt, pos, 1, &npos)))
		return rc < 0 ? 0 : rc;
	if (npos != 1)
		return cli_usage_error("show", "which plan? give a module path or a module hash");
	if (json + dot > 1)
		return cli_usage_error("show", "--json and --dot are exclusive");
	if (render_out && json)
		return cli_usage_error("show", "--render draws the DOT graph; it does not go with --json");
	if (!(c = cli_open(cache_opt, 1)))
		return 1;
	rc = 1;
	if ((id = cli_find_plan(c, pos[0])) <= 0)
		goto out;
	if (!(plan = cli_plan_json(c, id)))
		goto out;
	st = cache_prepare(c->db, "SELECT " PLAN_COLUMNS "FROM plans p WHERE p.id = ?1");
	if (!st) {
		cli_db_error(c, "cannot read plan");
		goto out;
	}
	sqlite3_bind_int64(st, 1, id);
	if (sqlite3_step(st) != SQLITE_ROW) {
		cli_db_error(c, "cannot read plan");
		goto out;
	}
	if (json) {
		json_t *o = plan_row_json(st);
		json_object_set(o, "plan", plan);
		cli_print_json(o);
	} else if (dot || render_out) {
		char *text = NULL;
		size_t len = 0;
		FILE *mem = open_memstream(&text, &len);
		if (!mem)
			mtpc_fatal("out of memory");
		write_dot(mem, COL_TEXT(st, C_PATH), plan);
		fclose(mem);
		if (render_out) {
			int r = render(render_out, text, len);
			free(text);
			rc = r;
			goto out;
		}
		fwrite(text, 1, len, stdout);
		free(text);
	} else
		show_text(st, plan, functions);
	rc = 0;
out:
	sqlite3_finalize(st);
	json_decref(plan);
	mtpc_cache_close(c);
	return rc;
}
