/* trace.h: where the time of an inner build went, as a Chrome trace-event
 * file (INNER_TRACE, <inner dir>/trace.json) that Perfetto and
 * chrome://tracing open, and its summary (mtpc-cache trace).
 *
 * Each edge the inner build ran becomes one complete event ("ph": "X"):
 * its start and duration from the build's .ninja_log (Ninja writes each
 * output's start and end, in ms since it started, when the edge ends), its
 * kind (thinlink, split, slot, merge, join, backend, link, dwp, job) and
 * module from the edge's description in build.ninja ("MTPC slot <key> p3"),
 * the partition of a slot, and the reason the front end gave for splitting
 * the module or not. Events are laid on lanes ("tid") so that no two that
 * overlap share one: the lanes show how many cores the build kept busy.
 * The events on the critical path (from the edge that ended last back
 * through the inputs that ended last) say so in their args.
 *
 * Plain C and jansson, no LLVM: the front ends write it after their inner
 * build, mtpc-cache reads it. */
#ifndef MTPC_TRACE_H
#define MTPC_TRACE_H

#include <stdio.h>
#include <sys/types.h>

/* The inner build's .ninja_log before the build ran (trace_mark): the
 * entries after it are this build's. */
struct trace_mark {
	int exists;
	ino_t ino;
	long long size;
};

/* One module of the inner build: its key (build.ninja's descriptions name
 * it), a name for people, and why it was split or not (NULL: none given). */
struct trace_module {
	const char *key, *name, *reason;
};

/* What the trace says about the build as a whole. */
struct trace_info {
	const char *tool;   /* "mtpc-link", "mtpc-compile", "mtpc-distribute" */
	const char *output; /* the link's or compile's output */
	int jobs;           /* -j of the inner build */
	const struct trace_module *mods;
	size_t nmods;
	/* A step of the front end's own before the build (mtpc-compile's
	 * frontend): its kind (NULL: none), its module's key, and its end in ms
	 * from its start; the build started start_ms after it started. It comes
	 * first in the trace and on the critical path (every edge follows it). */
	const char *pre_kind, *pre_key;
	long long pre_end_ms, start_ms;
};

/* The file that names the last trace, next to the plan cache's database at
 * db (CACHE_LAST_TRACE); heap string. */
char *trace_last_path(const char *db);

/* Remember the state of <dir>/.ninja_log before an inner build runs. */
void trace_mark(const char *dir, struct trace_mark *mark);

/* Write <dir>/trace.json (atomically) for the inner build that ran since
 * mark, whose manifest is at manifest (NULL: <dir>/build.ninja), and name it
 * in last (the file `mtpc-cache trace` reads without a path; NULL: none).
 * When Ninja recompacted its log during the build, this build's entries are
 * told from older ones by their order (each ends no earlier than the one
 * before). Returns 0, or -1 after one warning naming the file: a trace
 * never fails a build. */
int trace_write(const char *dir, const char *manifest, const struct trace_mark *mark,
		const struct trace_info *info, const char *last);

/* Print the summary of the trace at path on out: per kind the count, total
 * and longest seconds; the critical path; how busy the lanes were. Returns
 * 0, or -1 after one error naming the file. */
int trace_summary(const char *path, FILE *out);

#endif
