/* dist_jobs.c: see dist_jobs.h. */
#include "dist_jobs.h"
#include "util.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void jobs_free(struct jobs *js)
{
	for (size_t i = 0; i < js->n; i++) {
		strv_free(&js->v[i].args);
		strv_free(&js->v[i].inputs);
		strv_free(&js->v[i].outputs);
	}
	free(js->v);
	strv_free(&js->common);
	free(js->linker_output);
}

/* obj[key] as strings into v. Returns 0, or -1 after an error naming path
 * and what (e.g. "jobs[2].outputs"): a missing or non-array member, or one
 * that is not a string. need: the least number of strings. */
static int json_strings(const char *path, json_t *obj, const char *key, const char *what,
			size_t need, struct strv *v)
{
	json_t *a = json_object_get(obj, key);
	if (!json_is_array(a) || json_array_size(a) < need) {
		mtpc_error("%s: %s: expected an array of at least %zu string%s", path, what, need,
			   need == 1 ? "" : "s");
		return -1;
	}
	for (size_t i = 0; i < json_array_size(a); i++) {
		const char *s = json_string_value(json_array_get(a, i));
		if (!s || !*s) {
			mtpc_error("%s: %s[%zu]: expected a non-empty string", path, what, i);
			return -1;
		}
		strv_add(v, s);
	}
	return 0;
}

int read_jobs(const char *path, struct jobs *js)
{
	memset(js, 0, sizeof *js);
	json_error_t e;
	json_t *root = json_load_file(path, 0, &e);
	if (!root) {
		mtpc_error("%s:%d: not a valid job list: %s", path, e.line, e.text);
		return -1;
	}
	int r = -1;
	json_t *common = json_object_get(root, "common"), *jobs = json_object_get(root, "jobs");
	if (!json_is_object(common) || !json_is_array(jobs)) {
		mtpc_error("%s: not a DTLTO job list (no \"common\" object or \"jobs\" array)", path);
		goto out;
	}
	if (json_strings(path, common, "args", "common.args", 1, &js->common) < 0)
		goto out;
	const char *lo = json_string_value(json_object_get(common, "linker_output"));
	js->linker_output = lo && *lo ? xstrdup(lo) : NULL;
	js->n = json_array_size(jobs);
	js->v = xcalloc(js->n + 1, sizeof *js->v);
	for (size_t i = 0; i < js->n; i++)
		js->v[i].mod = -1;
	for (size_t i = 0; i < js->n; i++) {
		json_t *j = json_array_get(jobs, i);
		char what[64];
		if (!json_is_object(j)) {
			mtpc_error("%s: jobs[%zu]: expected an object", path, i);
			goto out;
		}
		snprintf(what, sizeof what, "jobs[%zu].args", i);
		if (json_strings(path, j, "args", what, 1, &js->v[i].args) < 0)
			goto out;
		snprintf(what, sizeof what, "jobs[%zu].inputs", i);
		if (json_strings(path, j, "inputs", what, 1, &js->v[i].inputs) < 0)
			goto out;
		snprintf(what, sizeof what, "jobs[%zu].outputs", i);
		if (json_strings(path, j, "outputs", what, 1, &js->v[i].outputs) < 0)
			goto out;
	}
	r = 0;
out:
	json_decref(root);
	return r;
}

int check_files(const char *path, const struct jobs *js)
{
	for (size_t i = 0; i < js->n; i++) {
		const struct job *j = &js->v[i];
		for (size_t k = 0; k < j->inputs.n; k++)
			if (access(j->inputs.v[k], R_OK) < 0) {
				mtpc_error("%s: jobs[%zu]: cannot read input %s: %s", path, i,
					   j->inputs.v[k], strerror(errno));
				return -1;
			}
		for (size_t k = 0; k < j->outputs.n; k++) {
			char *d = xstrdup(j->outputs.v[k]), *slash = strrchr(d, '/');
			if (slash)
				*slash = 0;
			/* "<dir>/.": access() on the directory itself succeeds
			 * when it is a regular file (ENOTDIR only this way). */
			char *dot = xasprintf("%s/.", slash ? d : ".");
			int ok = access(dot, W_OK) == 0;
			int e = errno;
			free(dot);
			free(d);
			if (!ok) {
				mtpc_error("%s: jobs[%zu]: cannot write output %s: %s", path, i,
					   j->outputs.v[k], strerror(e));
				return -1;
			}
		}
	}
	return 0;
}
