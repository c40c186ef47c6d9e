/* cli.h: what the files of the mtpc-cache CLI share (not a library API).
 *
 * Every command is a function taking its own arguments (argv[0] is the
 * command name) and returning the exit status: 0 success, 1 an error that was
 * reported (missing/corrupt/locked database, unknown plan...), 2 bad usage. */
#ifndef MTPC_CACHE_CLI_H
#define MTPC_CACHE_CLI_H

#include "cache_int.h"

#include <stdio.h>

/* One option of a command: "--name" with (value != NULL) or without (flag)
 * an argument. */
struct cli_opt {
	const char *name;
	const char **value;
	int *flag;
};

/* Parse argv[1..] of a command against opts; positional arguments go to
 * pos[0..*npos) (at most maxpos). "--cache FILE" is accepted by every command
 * and stored in *cache_opt. Returns 0, or the exit status to return at once:
 * -1 after printing the help (exit 0), 2 after a usage error. */
int cli_parse(int argc, char **argv, const struct cli_opt *opts, const char **cache_opt,
	      const char **pos, int maxpos, int *npos);

/* Print a command's help ("mtpc-cache CMD --help"). */
void cli_help(const char *cmd, FILE *out);
/* "error: CMD: msg (see mtpc-cache CMD --help)" and return 2. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The database path (--cache, $MTPC_CACHE or the default) and open it; on
 * failure print one "error: <path>: <problem>" line and return NULL. */
mtpc_cache *cli_open(const char *cache_opt, int readonly);

/* Find a plan by module hash (unique prefix) or module path (exact, or
 * unique path suffix such as a file name); of several plans of one module,
 * the most recently used. Returns the plan id, 0 if there is none (after an
 * error naming ident), -1 on a database error or ambiguity (reported). */
long long cli_find_plan(mtpc_cache *c, const char *ident);

/* Report a database error during a command; returns 1. */
int cli_db_error(mtpc_cache *c, const char *what);

/* Local date and time "YYYY-MM-DD HH:MM:SS", and a byte count "12.3 KiB",
 * into buf. */
const char *cli_time(double t, char buf[32]);
const char *cli_bytes(long long n, char buf[32]);

/* Parse a plan's stored JSON with timings merged in (the form show --json,
 * export and --dot use). NULL (reported) on error. */
json_t *cli_plan_json(mtpc_cache *c, long long id);

/* Print j to stdout, indented, with a final newline; decrefs j. */
void cli_print_json(json_t *j);

int cmd_list(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_gc(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_path(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_store(int argc, char **argv);
int cmd_lookup(int argc, char **argv);
int cmd_trace(int argc, char **argv);

#endif
