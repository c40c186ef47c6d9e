/* Unit tests for ninja-gen/trace: an inner build's trace from its
 * build.ninja and .ninja_log (this build's entries only, one event per
 * edge, lanes without overlaps, kinds, partitions and reasons, the critical
 * path), after a recompacted log too, and its summary. argv[1]: a temporary
 * directory. Prints "N passed, N failed". */
#define _POSIX_C_SOURCE 200809L
#include "buf.h"
#include "trace.h"
#include "util.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"

/* A link's inner graph in the form graph/emit.c writes it: thin link, one
 * module split in 3 (slots bound by the dyndep file), one plain backend,
 * the final link; a path with an escaped space. */
static const char manifest[] =
	"rule backend\n  command = $cmd\n  description = $desc\n\n"
	"build index/a.o.thinlto.bc index/b$ x.o.thinlto.bc: thinlink /src/a.o\n"
	"  cmd = true\n  desc = MTPC thin link\n"
	"build mod/a-1/split.dd mod/a-1/split.n: split index/a.o.thinlto.bc\n"
	"  cmd = true\n  desc = MTPC split a-1\n"
	"build mod/a-1/p0.o: slot || mod/a-1/split.dd\n  dyndep = mod/a-1/split.dd\n"
	"  cmd = true\n  desc = MTPC slot a-1 p0\n"
	"build mod/a-1/p1.o: slot || mod/a-1/split.dd\n  dyndep = mod/a-1/split.dd\n"
	"  cmd = true\n  desc = MTPC slot a-1 p1\n"
	"build mod/a-1/p2.o: slot || mod/a-1/split.dd\n  dyndep = mod/a-1/split.dd\n"
	"  cmd = true\n  desc = MTPC slot a-1 p2\n"
	"build mod/a-1/native.o: merge | mod/a-1/split.dd mod/a-1/split.n\n  dyndep = mod/a-1/split.dd\n"
	"  cmd = true\n  desc = MTPC merge a-1\n"
	"build mod/b-2/native.o: backend index/b$ x.o.thinlto.bc\n"
	"  cmd = true\n  desc = MTPC backend b-2\n"
	"build /out/app: link mod/a-1/native.o mod/b-2/native.o\n"
	"  cmd = true\n  desc = MTPC link\n"
	"build all: phony /out/app\n";

/* This build's log entries (start, end, output), in the order Ninja writes
 * them (as edges end); two outputs for the thin link and the split. */
static const char this_log[] =
	"0\t100\t0\tindex/a.o.thinlto.bc\tabc\n"
	"0\t100\t0\tindex/b x.o.thinlto.bc\tabc\n"
	"100\t150\t0\tmod/a-1/split.dd\tabc\n"
	"100\t150\t0\tmod/a-1/split.n\tabc\n"
	"150\t400\t0\tmod/a-1/p0.o\tabc\n"
	"100\t420\t0\tmod/b-2/native.o\tabc\n"
	"400\t700\t0\tmod/a-1/p2.o\tabc\n"
	"410\t900\t0\tmod/a-1/p1.o\tabc\n"
	"900\t950\t0\tmod/a-1/native.o\tabc\n"
	"950\t1000\t0\t/out/app\tabc\n";

static void put(const char *path, const char *text, int append)
{
	FILE *f = fopen(path, append ? "a" : "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static json_t *events_of(const char *dir)
{
	char *p = xasprintf("%s/trace.json", dir);
	json_t *j = json_load_file(p, 0, NULL);
	free(p);
	json_t *events = j ? json_incref(json_object_get(j, "traceEvents")) : NULL;
	json_decref(j);
	return events;
}

/* The complete events of the trace in dir, and checks that hold for any:
 * no two overlapping events on one lane, each with a kind. */
static size_t check_events(json_t *events, json_t **x, size_t cap)
{
	size_t n = 0, i;
	json_t *e;
	json_array_foreach(events, i, e) {
		if (strcmp(json_string_value(json_object_get(e, "ph")), "X") || n == cap)
			continue;
		x[n++] = e;
	}
	for (size_t a = 0; a < n; a++)
		for (size_t b = a + 1; b < n; b++) {
			json_int_t ta = json_integer_value(json_object_get(x[a], "ts"));
			json_int_t tb = json_integer_value(json_object_get(x[b], "ts"));
			json_int_t ea = ta + json_integer_value(json_object_get(x[a], "dur"));
			json_int_t eb = tb + json_integer_value(json_object_get(x[b], "dur"));
			int same = json_integer_value(json_object_get(x[a], "tid")) ==
				   json_integer_value(json_object_get(x[b], "tid"));
			CHECK(!(same && ta < eb && tb < ea));
		}
	return n;
}

static const char *arg(json_t *e, const char *name)
{
	return json_string_value(json_object_get(json_object_get(e, "args"), name));
}

static void test_trace(const char *tmp)
{
	char *dir = xasprintf("%s/inner", tmp), *log = xasprintf("%s/.ninja_log", dir);
	char *mf = xasprintf("%s/build.ninja", dir), *last = xasprintf("%s/cache/last-trace", tmp);
	mtpc_mkdir_p(dir);
	put(mf, manifest, 0);
	/* an earlier build's entries come before the mark */
	put(log, "# ninja log v5\n0\t5000\t0\tmod/a-1/p0.o\tabc\n0\t6000\t0\t/out/app\tabc\n", 0);
	struct trace_mark mark;
	trace_mark(dir, &mark);
	CHECK(mark.exists);
	put(log, this_log, 1);
	struct trace_module mods[] = {{"a-1", "a.o", "split: cost 221348 instructions >= 100000"},
				      {"b-2", "b x.o", "not split: cost 500 instructions < 100000"}};
	struct trace_info info = {.tool = "mtpc-link", .output = "/out/app", .jobs = 2, .mods = mods, .nmods = 2};
	CHECK(trace_write(dir, NULL, &mark, &info, last) == 0);
	char *named;
	size_t len;
	CHECK(mtpc_read_file(last, &named, &len) == 0 && strstr(named, "inner/trace.json\n"));
	free(named);

	json_t *events = events_of(dir), *x[32];
	CHECK(events != NULL);
	size_t n = events ? check_events(events, x, 32) : 0;
	CHECK(n == 8); /* one per edge, the earlier build's left out */
	int lanes = 0, critical = 0;
	for (size_t i = 0; i < n; i++) {
		int tid = (int)json_integer_value(json_object_get(x[i], "tid"));
		lanes = tid > lanes ? tid : lanes;
		critical += json_is_true(json_object_get(json_object_get(x[i], "args"), "critical"));
	}
	CHECK(lanes == 3); /* p0, p1 and b's backend ran at once */
	if (n == 8) {
		/* sorted by start: thinlink first, the link last */
		CHECK(!strcmp(arg(x[0], "kind"), "thinlink") && json_integer_value(json_object_get(x[0], "dur")) == 100000);
		CHECK(!strcmp(arg(x[7], "kind"), "link") && json_integer_value(json_object_get(x[7], "ts")) == 950000);
		json_t *b = NULL, *p1 = NULL;
		for (size_t i = 0; i < n; i++) {
			if (!strcmp(json_string_value(json_object_get(x[i], "name")), "backend b x.o"))
				b = x[i];
			if (!strcmp(json_string_value(json_object_get(x[i], "name")), "slot a.o p1"))
				p1 = x[i];
		}
		CHECK(b && !strcmp(arg(b, "reason"), "not split: cost 500 instructions < 100000"));
		CHECK(b && !strcmp(arg(b, "output"), "mod/b-2/native.o"));
		CHECK(p1 && json_integer_value(json_object_get(json_object_get(p1, "args"), "partition")) == 1);
		CHECK(p1 && !strcmp(arg(p1, "module"), "a.o"));
		/* thinlink -> split -> p1 (ended last of the slots) -> merge -> link */
		CHECK(p1 && json_is_true(json_object_get(json_object_get(p1, "args"), "critical")));
		CHECK(b && !json_object_get(json_object_get(b, "args"), "critical"));
	}
	CHECK(critical == 5);
	json_decref(events);

	/* Its summary. */
	char *sum = xasprintf("%s/summary.txt", tmp);
	FILE *f = fopen(sum, "w");
	char *trace = xasprintf("%s/trace.json", dir);
	CHECK(f && trace_summary(trace, f) == 0);
	if (f)
		fclose(f);
	char *text = NULL;
	CHECK(mtpc_read_file(sum, &text, &len) == 0);
	if (text) {
		CHECK(strstr(text, "mtpc-link app: 8 steps on 3 lanes in 1.00 s (-j 2)") != NULL);
		CHECK(strstr(text, "  slot            3      1.04     0.49\n") != NULL);
		CHECK(strstr(text, "critical path: 0.74 s of the 1.00 s") != NULL);
		CHECK(strstr(text, "slot a.o p1") && strstr(text, "(after 0.26 s waiting)"));
		CHECK(strstr(text, "lanes busy: 54% (1.61 of 3.00 lane-seconds)") != NULL);
		CHECK(strstr(text, "  a.o: split: cost 221348") != NULL);
		if (!strstr(text, "lanes busy: 54%"))
			fputs(text, stderr);
	}
	free(text);
	CHECK(trace_summary(mf, stderr) == -1); /* not JSON: an error naming it */

	/* Ninja recompacted the log as this build started (a new file: one
	 * entry per output, older first): this build's entries are the last
	 * ones that end in order. */
	trace_mark(dir, &mark);
	unlink(log);
	put(log, "# ninja log v5\n0\t5000\t0\tmod/a-1/p0.o\tabc\n0\t700\t0\tmod/a-1/p2.o\tabc\n", 0);
	put(log, "0\t40\t0\tmod/b-2/native.o\tabc\n50\t90\t0\t/out/app\tabc\n", 1);
	mark.ino++; /* the file Ninja renamed in place is a new one */
	CHECK(trace_write(dir, NULL, &mark, &info, NULL) == 0);
	events = events_of(dir);
	n = events ? check_events(events, x, 32) : 0;
	CHECK(n == 2);
	json_decref(events);
	/* Nothing ran: a trace without events, and its summary says so. */
	trace_mark(dir, &mark);
	CHECK(trace_write(dir, NULL, &mark, &info, NULL) == 0);
	events = events_of(dir);
	CHECK(events && check_events(events, x, 32) == 0);
	json_decref(events);
	/* No log: one warning, no trace. */
	unlink(log);
	unlink(trace);
	CHECK(trace_write(dir, NULL, &mark, &info, NULL) == -1 && access(trace, F_OK) < 0);
	free(sum);
	free(trace);
	free(dir);
	free(log);
	free(mf);
	free(last);
}

int main(int argc, char **argv)
{
	const char *tmp = argc > 1 ? argv[1] : "/tmp";
	char *dir = xasprintf("%s/trace_test_%d", tmp, (int)getpid());
	mtpc_mkdir_p(dir);
	test_trace(dir);
	free(dir);
	return CHECK_REPORT();
}
