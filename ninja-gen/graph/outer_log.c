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

/* output as the log names it: relative to dir, without "./". */
static const char *as_logged(const char *dir, const char *output)
{
	size_t dl = strlen(dir);
	if (output[0] == '/' && !strncmp(output, dir, dl) && output[dl] == '/')
		output += dl + 1;
	while (!strncmp(output, "./", 2))
		output += 2;
	return output;
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
	/* Every entry, in order; the link's is its last one (the log is
	 * appended to as edges end). */
	const char *name = as_logged(dir, output), *end = text + len;
	size_t nlen = strlen(name), n = 0, cap = 0;
	struct entry *v = NULL;
	long link = -1;
	for (const char *l = text; l < end;) {
		const char *eol = memchr(l, '\n', (size_t)(end - l));
		if (!eol)
			break;
		if (n == cap)
			v = xrealloc(v, (cap = cap ? 2 * cap : 256) * sizeof *v);
		if (*l != '#' && parse_line(l, eol, &v[n]) == 0) {
			if (v[n].len == nlen && !memcmp(v[n].path, name, nlen))
				link = (long)n;
			n++;
		}
		l = eol + 1;
	}
	double others = -1;
	const struct entry *k = link >= 0 ? &v[link] : NULL;
	if (k && k->end - k->start >= OUTER_LOG_MIN_MS) {
		double overlap = 0;
		for (size_t i = 0; i < n; i++) {
			const struct entry *e = &v[i];
			if (e == k || e->build_ms <= k->build_ms - OUTER_LOG_SAME_BUILD_MS ||
			    e->build_ms >= k->build_ms + OUTER_LOG_SAME_BUILD_MS)
				continue;
			long long a = e->start > k->start ? e->start : k->start;
			long long b = e->end < k->end ? e->end : k->end;
			overlap += b > a ? (double)(b - a) : 0;
		}
		others = overlap / (double)(k->end - k->start);
	}
	free(v);
	free(text);
	return others;
}
