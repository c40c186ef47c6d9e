/* trace_summary.c: the summary of a trace file (trace.h), what
 * `mtpc-cache trace` prints: per kind of step how many ran and how long,
 * the critical path, how busy the lanes were, and why each module was
 * split or not. */
#define _POSIX_C_SOURCE 200809L
#include "trace.h"
#include "util.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* The totals of one kind of step, in the order the kinds first ran. */
struct kind_total {
	const char *kind;
	int count;
	double total, max;
};

static const char *str_arg(json_t *args, const char *name)
{
	return json_string_value(json_object_get(args, name));
}

int trace_summary(const char *path, FILE *out)
{
	json_error_t err;
	json_t *root = json_load_file(path, 0, &err);
	json_t *events = root ? json_object_get(root, "traceEvents") : NULL;
	if (!json_is_array(events)) {
		if (root)
			mtpc_error("%s: not a trace (no traceEvents)", path);
		else
			mtpc_error("%s: %s", path, err.text);
		json_decref(root);
		return -1;
	}
	json_t *other = json_object_get(root, "otherData");
	struct kind_total *kinds = NULL;
	size_t nkinds = 0, nev = 0, i;
	double first = -1, last = 0, busy = 0, critical = 0;
	int lanes = 0;
	json_t *e;
	json_array_foreach(events, i, e) {
		const char *ph = json_string_value(json_object_get(e, "ph"));
		if (!ph || strcmp(ph, "X"))
			continue;
		json_t *args = json_object_get(e, "args");
		const char *kind = str_arg(args, "kind");
		double ts = json_number_value(json_object_get(e, "ts")) / 1e6;
		double dur = json_number_value(json_object_get(e, "dur")) / 1e6;
		int tid = (int)json_integer_value(json_object_get(e, "tid"));
		kind = kind ? kind : "?";
		size_t k = 0;
		while (k < nkinds && strcmp(kinds[k].kind, kind))
			k++;
		if (k == nkinds) {
			kinds = xrealloc(kinds, (nkinds + 1) * sizeof *kinds);
			kinds[nkinds++] = (struct kind_total){kind, 0, 0, 0};
		}
		kinds[k].count++;
		kinds[k].total += dur;
		if (dur > kinds[k].max)
			kinds[k].max = dur;
		if (first < 0 || ts < first)
			first = ts;
		if (ts + dur > last)
			last = ts + dur;
		if (tid > lanes)
			lanes = tid;
		busy += dur;
		if (json_is_true(json_object_get(args, "critical")))
			critical += dur;
		nev++;
	}
	double wall = nev ? last - first : 0;
	const char *tool = str_arg(other, "tool"), *output = str_arg(other, "output");
	fprintf(out, "%s: %s %s: %zu step%s on %d lane%s in %.2f s", path, tool ? tool : "?",
		output ? mtpc_base_name(output) : "?", nev, nev == 1 ? "" : "s", lanes, lanes == 1 ? "" : "s", wall);
	json_int_t jobs = json_integer_value(json_object_get(other, "jobs"));
	if (jobs > 0)
		fprintf(out, " (-j %lld)", (long long)jobs);
	fputc('\n', out);
	if (!nev) {
		fprintf(out, "nothing ran: the inner build was up to date\n");
		free(kinds);
		json_decref(root);
		return 0;
	}
	fprintf(out, "  %-10s %6s %9s %8s\n", "step", "count", "total s", "max s");
	for (size_t k = 0; k < nkinds; k++)
		fprintf(out, "  %-10s %6d %9.2f %8.2f\n", kinds[k].kind, kinds[k].count, kinds[k].total, kinds[k].max);
	fprintf(out, "critical path: %.2f s of the %.2f s\n", critical, wall);
	/* Its events in the order they ran (the file is sorted by start), and
	 * how long each waited after the one before (for a core, or for an
	 * input off the path). */
	double prev_end = first;
	json_array_foreach(events, i, e) {
		json_t *args = json_object_get(e, "args");
		if (!json_is_true(json_object_get(args, "critical")))
			continue;
		double ts = json_number_value(json_object_get(e, "ts")) / 1e6;
		double dur = json_number_value(json_object_get(e, "dur")) / 1e6;
		fprintf(out, "  %8.2f s  %-40s %8.2f s", ts - first, json_string_value(json_object_get(e, "name")), dur);
		if (ts - prev_end >= 0.005)
			fprintf(out, "  (after %.2f s waiting)", ts - prev_end);
		fputc('\n', out);
		prev_end = ts + dur;
	}
	fprintf(out, "lanes busy: %.0f%% (%.2f of %.2f lane-seconds)\n",
		wall > 0 && lanes ? 100 * busy / (wall * lanes) : 0, busy, wall * lanes);
	/* Each module's reason once, in the order its steps first ran. */
	const char **seen = NULL;
	size_t nseen = 0;
	json_array_foreach(events, i, e) {
		json_t *args = json_object_get(e, "args");
		const char *mod = str_arg(args, "module"), *why = str_arg(args, "reason");
		if (!mod || !why)
			continue;
		size_t k = 0;
		while (k < nseen && strcmp(seen[k], mod))
			k++;
		if (k < nseen)
			continue;
		if (!nseen)
			fprintf(out, "modules:\n");
		seen = xrealloc(seen, (nseen + 1) * sizeof *seen);
		seen[nseen++] = mod;
		fprintf(out, "  %s: %s\n", mod, why);
	}
	free(seen);
	free(kinds);
	json_decref(root);
	return 0;
}
