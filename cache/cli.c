/* cli.c: mtpc-cache, inspecting the plan cache: command dispatch, help,
 * option parsing and the helpers the command files share. The commands
 * themselves live in cli_show.c (list, show), cli_stats.c (stats, diff) and
 * cli_admin.c (path, gc, export, record, store, lookup), cli_trace.c
 * (trace). */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "util.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
	const char *help; /* usage line(s), then details and options */
};

static const struct command commands[] = {
	{"list", cmd_list, "one line per cached plan",
	 "usage: mtpc-cache list [--json] [--cache FILE]\n"
	 "\n"
	 "One line per cached plan, grouped by module: module hash, options hash,\n"
	 "partitions, owned functions, estimated cost, builds and hits, last use.\n"
	 "\n"
	 "  --json        a JSON array of plan objects instead\n"},
	{"show", cmd_show, "one plan: partitions, costs, measured times",
	 "usage: mtpc-cache show <module|hash> [--json] [--functions] [--cache FILE]\n"
	 "       mtpc-cache show <module|hash> --dot [--render OUT.svg|OUT.png|OUT.pdf]\n"
	 "\n"
	 "Show the most recently used plan of a module (its path as the build gave\n"
	 "it, or a unique suffix of that path such as the file name) or the plan of\n"
	 "a module hash (any unique prefix).\n"
	 "\n"
	 "  --json        the plan as stored, with measured_seconds/object_bytes\n"
	 "                added per partition, inside an object with the cache's data\n"
	 "  --functions   also list the functions each partition owns\n"
	 "  --dot         Graphviz DOT of the partitions and cross-partition edges\n"
	 "  --render OUT  run Graphviz `dot` to write OUT (format from its extension)\n"},
	{"stats", cmd_stats, "hit rate, time saved, largest modules",
	 "usage: mtpc-cache stats [--json] [--cache FILE]\n"
	 "\n"
	 "Summary of the cache: size, plans, builds, hit rate, split time spent and\n"
	 "saved by hits, measured partition compile time, and the largest modules.\n"
	 "\n"
	 "  --json        the same numbers as a JSON object\n"},
	{"diff", cmd_diff, "which functions moved between two plans of a module",
	 "usage: mtpc-cache diff <module|hash> [--json] [--cache FILE]\n"
	 "       mtpc-cache diff <old module|hash> <new module|hash> [--json]\n"
	 "\n"
	 "Compare the owned functions of two plans: with one argument, the plan it\n"
	 "names and the plan of the same module used before it; with two, those\n"
	 "plans. Lists the functions that moved to another partition, appeared or\n"
	 "disappeared.\n"
	 "\n"
	 "  --json        {\"old\", \"new\", \"moved\", \"added\", \"removed\", \"unchanged\"}\n"},
	{"gc", cmd_gc, "remove old plans (by age or size)",
	 "usage: mtpc-cache gc [--max-age DAYS] [--max-size BYTES] [--cache FILE]\n"
	 "\n"
	 "Remove plans not used for more than DAYS days (and build log rows that\n"
	 "old), then least recently used plans until the data fits in BYTES (a\n"
	 "number with an optional K, M or G suffix, powers of 1024). At least one\n"
	 "of the two options is required.\n"},
	{"export", cmd_export, "the whole cache as JSON",
	 "usage: mtpc-cache export [--json] [--cache FILE]\n"
	 "\n"
	 "Write every plan (as stored, with timings merged in) and the build log as\n"
	 "one JSON object on stdout. JSON is the only format; --json is accepted\n"
	 "for symmetry with the other commands.\n"},
	{"path", cmd_path, "the database path and the rule that chose it",
	 "usage: mtpc-cache path [--cache FILE]\n"
	 "\n"
	 "Print the database path on the first line, then which rule chose it and\n"
	 "whether the file exists. The rules, as in the build: --cache FILE, else\n"
	 "$MTPC_CACHE, else $XDG_CACHE_HOME/mtpc/plans.sqlite, else\n"
	 "$HOME/.cache/mtpc/plans.sqlite.\n"},
	{"trace", cmd_trace, "where the last link's or split compile's time went",
	 "usage: mtpc-cache trace [PATH] [--cache FILE]\n"
	 "\n"
	 "Summarize the trace of an inner build (trace.json, Chrome trace-event\n"
	 "JSON: open it in Perfetto or chrome://tracing for the picture): per kind\n"
	 "of step (thinlink, split, slot, merge, join, backend, link, ...) how many\n"
	 "ran, their total and longest seconds; the critical path, from the step\n"
	 "that ended last back through the inputs that ended last; how busy the\n"
	 "lanes (the cores the build used) were; why each module was split or not.\n"
	 "PATH: a trace.json, an inner directory (<output>.mtpc), or a link's or\n"
	 "compile's output. Without PATH: the last trace any link or split compile\n"
	 "using this cache wrote (named in last-trace next to the database).\n"
	 "See docs/build-integration.md, \"Where the time went\".\n"},
	{"record", cmd_record, "record a partition's compile time (for scripts and tests)",
	 "usage: mtpc-cache record --module-hash H --options-hash O --partition I\n"
	 "                         --seconds S (--object-bytes B | --object FILE)\n"
	 "                         [--cache FILE]\n"
	 "\n"
	 "Record the measured compile time and object size of partition I of the\n"
	 "plan (H, O); a later split of an edited module balances with them. What\n"
	 "a slot's build edge does through the library. If the cache is unusable it\n"
	 "warns once and still exits 0, as the build does.\n"},
	{"store", cmd_store, "store a plan (for scripts and tests)",
	 "usage: mtpc-cache store --module PATH --module-hash H --options-hash O\n"
	 "                        --plan plan.json [--seconds S] [--hit] [--cache FILE]\n"
	 "\n"
	 "Store plan.json (version 1, as mtpc-split writes it) under (H, O) for\n"
	 "module PATH and log one build (--hit: the plan came from the cache; S:\n"
	 "seconds the split took). What mtpc-split does through the library. An\n"
	 "unusable cache or a refused plan gives one warning and exit status 0.\n"},
	{"lookup", cmd_lookup, "print a cached plan (for scripts and tests)",
	 "usage: mtpc-cache lookup --module-hash H --options-hash O [--cache FILE]\n"
	 "       mtpc-cache lookup --previous --module PATH --options-hash O\n"
	 "\n"
	 "Print the plan stored for (H, O) (an exact hit), or with --previous the\n"
	 "most recently used plan of module PATH with options O, with\n"
	 "measured_seconds and object_bytes added to each partition that has\n"
	 "them. Exit status 0 if found, 1 on a miss (also when the cache is missing\n"
	 "or unusable, after one warning). Never writes.\n"},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void main_help(FILE *out)
{
	fprintf(out, "usage: mtpc-cache [--cache FILE] <command> [options]\n"
		     "\n"
		     "Inspect and maintain the MTPC partition plan cache (SQLite).\n"
		     "\n"
		     "commands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\n"
		     "options:\n"
		     "  --cache FILE  the database (default: $MTPC_CACHE, else\n"
		     "                $XDG_CACHE_HOME/mtpc/plans.sqlite, else\n"
		     "                $HOME/.cache/mtpc/plans.sqlite; see `mtpc-cache path`)\n"
		     "  -h, --help    this help; `mtpc-cache <command> --help` for a command\n"
		     "  --version     print the version\n"
		     "\n"
		     "Read-only commands (list, show, stats, diff, export, lookup, path, trace)\n"
		     "never create or write the database. $MTPC_CACHE_BUSY_TIMEOUT_MS: how long\n"
		     "to wait for a lock (default 5000).\n");
}

void cli_help(const char *cmd, FILE *out)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (strcmp(commands[i].name, cmd) == 0) {
			fputs(commands[i].help, out);
			return;
		}
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	mtpc_error("%s: %s (see mtpc-cache %s --help)", cmd, msg, cmd);
	return 2;
}

int cli_parse(int argc, char **argv, const struct cli_opt *opts, const char **cache_opt,
	      const char **pos, int maxpos, int *npos)
{
	const char *cmd = argv[0];
	int only_pos = 0;
	*npos = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *eq, *val = NULL;
		size_t len;
		if (only_pos || a[0] != '-' || !a[1]) {
			if (*npos >= maxpos)
				return cli_usage_error(cmd, "unexpected argument '%s'", a);
			pos[(*npos)++] = a;
			continue;
		}
		if (strcmp(a, "--") == 0) {
			only_pos = 1;
			continue;
		}
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			cli_help(cmd, stdout);
			return -1;
		}
		eq = strchr(a, '=');
		len = eq ? (size_t)(eq - a) : strlen(a);
		const struct cli_opt *o = NULL;
		static const char *cache_dummy;
		struct cli_opt cache = {"--cache", cache_opt ? cache_opt : &cache_dummy, NULL};
		if (len == 7 && strncmp(a, "--cache", 7) == 0)
			o = &cache;
		for (const struct cli_opt *p = opts; !o && p && p->name; p++)
			if (strlen(p->name) == len && strncmp(a, p->name, len) == 0)
				o = p;
		if (!o)
			return cli_usage_error(cmd, "unknown option '%.*s'", (int)len, a);
		if (!o->value) {
			if (eq)
				return cli_usage_error(cmd, "option '%s' takes no value", o->name);
			*o->flag = 1;
			continue;
		}
		if (eq)
			val = eq + 1;
		else if (i + 1 < argc)
			val = argv[++i];
		else
			return cli_usage_error(cmd, "option '%s' needs a value", o->name);
		*o->value = val;
	}
	return 0;
}

mtpc_cache *cli_open(const char *cache_opt, int readonly)
{
	char *path = mtpc_cache_resolve_path(cache_opt, NULL), *err = NULL;
	mtpc_cache *c = mtpc_cache_open_ex(path, readonly, &err);
	if (!c) {
		mtpc_error("%s", err);
		free(err);
	}
	free(path);
	return c;
}

int cli_db_error(mtpc_cache *c, const char *what)
{
	mtpc_error("%s: %s: %s", c->path, what, sqlite3_errmsg(c->db));
	return 1;
}

static int is_hex(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!strchr("0123456789abcdef", *s))
			return 0;
	return 1;
}

long long cli_find_plan(mtpc_cache *c, const char *ident)
{
	/* Hash prefix first (a module path is rarely pure lowercase hex), then
	 * the exact path, then a path suffix at a '/' boundary. */
	static const char *const queries[] = {
		"SELECT id, module_hash FROM plans WHERE ?2 AND substr(module_hash, 1, length(?1)) = ?1 "
		"ORDER BY last_used DESC, id DESC",
		"SELECT id, module_path FROM plans WHERE module_path = ?1 ORDER BY last_used DESC, id DESC",
		"SELECT id, module_path FROM plans WHERE substr(module_path, -length(?1) - 1) = '/' || ?1 "
		"ORDER BY last_used DESC, id DESC",
	};
	static const char *const what[] = {"module hashes", "", "module paths"};
	for (int q = 0; q < 3; q++) {
		sqlite3_stmt *st = cache_prepare(c->db, queries[q]);
		long long id = 0;
		int rc;
		char *first = NULL;
		if (!st)
			return cli_db_error(c, "cannot look up plan"), -1;
		sqlite3_bind_text(st, 1, ident, -1, SQLITE_STATIC);
		if (q == 0)
			sqlite3_bind_int(st, 2, is_hex(ident));
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			const char *key = (const char *)sqlite3_column_text(st, 1);
			if (!first)
				first = xstrdup(key);
			else if (strcmp(first, key) != 0) {
				mtpc_error("%s: '%s' matches several %s (%s, %s, ...); say more", c->path,
					   ident, what[q], first, key);
				free(first);
				sqlite3_finalize(st);
				return -1;
			}
			if (!id)
				id = sqlite3_column_int64(st, 0);
		}
		free(first);
		if (rc != SQLITE_DONE) {
			cli_db_error(c, "cannot look up plan");
			sqlite3_finalize(st);
			return -1;
		}
		sqlite3_finalize(st);
		if (id)
			return id;
	}
	mtpc_error("%s: no plan for module or hash '%s' (see mtpc-cache list)", c->path, ident);
	return 0;
}

const char *cli_time(double t, char buf[32])
{
	time_t s = (time_t)t;
	struct tm tm;
	if (!localtime_r(&s, &tm) || !strftime(buf, 32, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(buf, 32, "%.0f", t);
	return buf;
}

const char *cli_bytes(long long n, char buf[32])
{
	static const char *const units[] = {"KiB", "MiB", "GiB", "TiB"};
	double v = (double)n;
	int u = -1;
	while (v >= 1024 && u < 3) {
		v /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, 32, "%lld B", n);
	else
		snprintf(buf, 32, "%.1f %s", v, units[u]);
	return buf;
}

json_t *cli_plan_json(mtpc_cache *c, long long id)
{
	sqlite3_stmt *st = cache_prepare(c->db, "SELECT plan_json, module_hash, options_hash FROM plans WHERE id = ?1");
	json_t *plan = NULL;
	json_error_t jerr;
	if (!st)
		return cli_db_error(c, "cannot read plan"), NULL;
	sqlite3_bind_int64(st, 1, id);
	if (sqlite3_step(st) != SQLITE_ROW) {
		cli_db_error(c, "cannot read plan");
		goto out;
	}
	plan = json_loads((const char *)sqlite3_column_text(st, 0), 0, &jerr);
	if (!json_is_object(plan)) {
		mtpc_error("%s: stored plan %lld is not valid JSON: %s", c->path, id, jerr.text);
		json_decref(plan);
		plan = NULL;
		goto out;
	}
	if (cache_add_timings(c, plan, (const char *)sqlite3_column_text(st, 1),
			      (const char *)sqlite3_column_text(st, 2))) {
		cli_db_error(c, "cannot read timings");
		json_decref(plan);
		plan = NULL;
	}
out:
	sqlite3_finalize(st);
	return plan;
}

void cli_print_json(json_t *j)
{
	json_dumpf(j, stdout, JSON_INDENT(2));
	putchar('\n');
	json_decref(j);
}

int main(int argc, char **argv)
{
	const char *cache_opt = NULL;
	int i;

	mtpc_set_progname(argv[0]);
	/* Options before the command: only --cache, --help and --version. */
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			main_help(stdout);
			return 0;
		} else if (strcmp(argv[i], "--version") == 0) {
			mtpc_print_version();
			return 0;
		} else if (strcmp(argv[i], "--cache") == 0 && i + 1 < argc) {
			cache_opt = argv[++i];
		} else if (strcmp(argv[i], "--cache") == 0) {
			mtpc_error("option '--cache' needs a value (see mtpc-cache --help)");
			return 2;
		} else if (strncmp(argv[i], "--cache=", 8) == 0) {
			cache_opt = argv[i] + 8;
		} else {
			mtpc_error("unknown option '%s' (see mtpc-cache --help)", argv[i]);
			return 2;
		}
	}
	if (i == argc) {
		main_help(stderr);
		return 2;
	}
	for (size_t k = 0; k < NCOMMANDS; k++) {
		if (strcmp(commands[k].name, argv[i]) != 0)
			continue;
		/* Hand a global --cache on to the command, which re-parses it
		 * (a --cache after the command wins). */
		int n = argc - i + (cache_opt ? 2 : 0);
		char **args = xcalloc((size_t)n + 1, sizeof *args);
		int j = 0;
		args[j++] = argv[i];
		if (cache_opt) {
			args[j++] = "--cache";
			args[j++] = (char *)cache_opt;
		}
		for (int a = i + 1; a < argc; a++)
			args[j++] = argv[a];
		int rc = commands[k].run(j, args);
		free(args);
		fflush(stdout);
		if (ferror(stdout)) {
			mtpc_error("cannot write the output");
			return 1;
		}
		return rc;
	}
	mtpc_error("unknown command '%s' (see mtpc-cache --help)", argv[i]);
	return 2;
}
