/* cli_trace.c: mtpc-cache trace, the summary of an inner build's trace
 * (ninja-gen/trace/trace.h): of the last link or split compile, or of the
 * one PATH names. */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "inner_dir.h"
#include "trace.h"
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The trace file PATH means: the file itself, the trace.json of an inner
 * directory, or that of the inner directory <PATH>.mtpc of a link's or
 * compile's output; heap string. */
static char *trace_of(const char *path)
{
	struct stat st;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return xasprintf("%s/" INNER_TRACE, path);
	char *inner = xasprintf("%s.mtpc/" INNER_TRACE, path);
	if (access(inner, F_OK) == 0)
		return inner;
	free(inner);
	return xstrdup(path);
}

/* The trace the last inner build wrote, from the file next to the cache's
 * database (CACHE_LAST_TRACE); NULL after an error naming it. */
static char *last_trace(const char *cache_opt)
{
	char *db = mtpc_cache_resolve_path(cache_opt, NULL), *last = trace_last_path(db), *text = NULL;
	size_t len;
	char *path = NULL;
	if (mtpc_read_file(last, &text, &len) < 0)
		mtpc_error("%s: %s (no link or split compile has written a trace with this cache yet)", last,
			   strerror(errno));
	else
		path = xasprintf("%.*s", (int)strcspn(text, "\n"), text);
	free(text);
	free(last);
	free(db);
	return path;
}

int cmd_trace(int argc, char **argv)
{
	const char *cache_opt = NULL, *pos[1];
	int npos, rc;
	if ((rc = cli_parse(argc, argv, NULL, &cache_opt, pos, 1, &npos)))
		return rc < 0 ? 0 : rc;
	char *path = npos ? trace_of(pos[0]) : last_trace(cache_opt);
	if (!path)
		return 1;
	rc = trace_summary(path, stdout) < 0 ? 1 : 0;
	free(path);
	return rc;
}
