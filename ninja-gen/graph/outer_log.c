/* outer_log.c: see outer_log.h. */
#include "outer_log.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One line of the log: "START\tEND\tMTIME\tPATH\tHASH". Returns 0 and the
 * fields (path: its length too, not terminated), or -1. The build's start
 * in milliseconds of the wall clock: MTIME (nanoseconds since 1.10, whole
 * seconds before) less END. */
struct entry {
	long long start, end;
	double build_ms;
	const char *path;
	size_t len;
};

static int parse_line(const char *line, const char *eol, struct entry *e)
{
	char *p;
	e->start = strtoll(line, &p, 10);
	if (*p != '\t')
		return -1;
	e->end = strtoll(p + 1, &p, 10);
	if (*p != '\t')
		return -1;
	long long mtime = strtoll(p + 1, &p, 10);
	if (*p != '\t' || e->end < e->start || mtime <= 0)
		return -1;
	e->path = p + 1;
	const char *tab = memchr(e->path, '\t', (size_t)(eol - e->path));
	if (!tab)
		return -1;
	e->len = (size_t)(tab - e->path);
	double mtime_ms = mtime > 1000000000000LL ? (double)mtime / 1e6 : (double)mtime * 1e3;
	e->build_ms = mtime_ms - (double)e->end;
	return 0;
}

/* Whether the entry names output (as given, or relative to dir). */
static int names(const struct entry *e, const char *output, const char *dir)
{
	size_t dl = strlen(dir);
	if (output[0] == '/' && !strncmp(output, dir, dl) && output[dl] == '/')
		output += dl + 1;
	while (!strncmp(output, "./", 2))
		output += 2;
	return strlen(output) == e->len && !memcmp(output, e->path, e->len);
}

double outer_log_others(const char *dir, const char *output)
{
	char *path = xasprintf("%s/.ninja_log", dir), *text = NULL;
	size_t len;
	int ok = mtpc_read_file(path, &text, &len) == 0;
	free(path);
	/* v5 (Ninja 1.10, 1.11) and v6 (1.12): the same five fields. */
	if (!ok || (strncmp(text, "# ninja log v5\n", 15) && strncmp(text, "# ninja log v6\n", 15))) {
		free(text);
		return -1;
	}
	/* The link's last entry: the log is appended to as edges end. */
	struct entry link = {0, 0, 0, NULL, 0}, e;
	const char *end = text + len;
	for (const char *l = text; l < end;) {
		const char *eol = memchr(l, '\n', (size_t)(end - l));
		if (!eol)
			break;
		if (*l != '#' && parse_line(l, eol, &e) == 0 && names(&e, output, dir))
			link = e;
		l = eol + 1;
	}
	double others = -1;
	if (link.path && link.end - link.start >= OUTER_LOG_MIN_MS) {
		double overlap = 0;
		for (const char *l = text; l < end;) {
			const char *eol = memchr(l, '\n', (size_t)(end - l));
			if (!eol)
				break;
			if (*l != '#' && parse_line(l, eol, &e) == 0 && e.path != link.path &&
			    e.build_ms > link.build_ms - OUTER_LOG_SAME_BUILD_MS &&
			    e.build_ms < link.build_ms + OUTER_LOG_SAME_BUILD_MS) {
				long long a = e.start > link.start ? e.start : link.start;
				long long b = e.end < link.end ? e.end : link.end;
				overlap += b > a ? (double)(b - a) : 0;
			}
			l = eol + 1;
		}
		others = overlap / (double)(link.end - link.start);
	}
	free(text);
	return others;
}
