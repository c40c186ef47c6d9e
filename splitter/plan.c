/* plan.c: see plan.h. */
#include "plan.h"
#include "stable_names.h"
#include "util.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static json_t *name_list(const struct module_info *mi, const unsigned char *member, int want)
{
	json_t *a = json_array();
	for (int i = 0; i < mi->nsyms; i++)
		if (member[i] == want) {
			char *nm = sym_display_name(mi, i);
			json_array_append_new(a, json_string(nm));
			free(nm);
		}
	return a;
}

/* plan.json's partition_count: the count --cores chose and the candidates'
 * predictions it chose from (count.h). Duplication is a candidate's work
 * over the unsplit module's, both counted in instructions. */
static json_t *count_json(const struct count_choice *c)
{
	json_t *o = json_object();
	json_object_set_new(o, "cores", json_integer(c->cores));
	json_object_set_new(o, "chosen", json_integer(c->chosen));
	json_object_set_new(o, "fresh", json_integer(c->fresh));
	json_object_set_new(o, "seed", c->seed_count ? json_integer(c->seed_count) : json_null());
	char *rule = xasprintf("the fewest partitions whose span, max(largest, ceil(work / cores)), is within "
			       "%d%% of the best; a seeded plan keeps its count within %d%%",
			       COUNT_SLACK_PCT, COUNT_SEED_PCT);
	json_object_set_new(o, "rule", json_string(rule));
	free(rule);
	json_object_set_new(o, "unsplit_work", json_integer(c->unsplit));
	json_t *a = json_array();
	for (int i = 0; i < c->ncand; i++) {
		const struct count_candidate *k = &c->cand[i];
		json_t *e = json_object();
		json_object_set_new(e, "partitions", json_integer(k->partitions));
		json_object_set_new(e, "span", json_integer(k->span));
		json_object_set_new(e, "largest", json_integer(k->largest));
		json_object_set_new(e, "work", json_integer(k->work));
		json_object_set_new(e, "duplication", json_real(c->unsplit ? (double)k->work / c->unsplit : 0.0));
		json_array_append_new(a, e);
	}
	json_object_set_new(o, "candidates", a);
	return o;
}

char *plan_to_json(const struct module_info *mi, const struct split_plan *P, const struct plan_meta *meta)
{
	json_t *root = json_object();
	json_object_set_new(root, "version", json_integer(1));
	json_object_set_new(root, "module", json_string(mi->module_id));
	json_object_set_new(root, "source_file", json_string(mi->source_file));
	json_object_set_new(root, "input_hash", json_string(meta->input_hash));
	json_object_set_new(root, "options_hash", json_string(meta->options_hash));
	json_object_set_new(root, "options", json_string(meta->options_text));
	if (meta->count)
		json_object_set_new(root, "partition_count", count_json(meta->count));
	json_t *parts = json_array();
	for (int p = 0; p < P->n; p++) {
		json_t *o = json_object();
		char *file = xasprintf("p%d.bc", p);
		json_object_set_new(o, "index", json_integer(p));
		json_object_set_new(o, "file", json_string(file));
		free(file);
		json_object_set_new(o, "cost", json_integer(P->cost[p]));
		json_object_set_new(o, "copy_cost", json_integer(P->copy_cost[p]));
		json_object_set_new(o, "owned", name_list(mi, P->member[p], M_OWN));
		json_object_set_new(o, "copies", name_list(mi, P->member[p], M_COPY));
		json_t *dup = json_array();
		for (int i = 0; i < mi->nsyms; i++)
			if (P->member[p][i] == M_CARRY && mi->syms[i].role == ROLE_DUP && mi->syms[i].kind == SYM_FUNC) {
				char *nm = sym_display_name(mi, i);
				json_array_append_new(dup, json_string(nm));
				free(nm);
			}
		json_object_set_new(o, "duplicated", dup);
		json_array_append_new(parts, o);
	}
	json_object_set_new(root, "partitions", parts);
	/* Symbols defined by module asm belong to the partition that carries it. */
	json_object_set_new(root, "asm_partition", mi->has_asm ? json_integer(P->asm_partition) : json_null());
	json_t *prom = json_array();
	json_t *loc = json_array();
	for (int i = 0; i < mi->nsyms; i++)
		if (P->new_name[i]) {
			json_t *o = json_object();
			char *nm = sym_display_name(mi, i);
			json_object_set_new(o, "from", json_string(nm));
			json_object_set_new(o, "to", json_string(P->new_name[i]));
			/* The original's own name where "from" is not it: a private
			 * constant's or a numbered local function's edit-stable one
			 * (stable_names.h), or none (an unnamed global): a compile's
			 * join gives the symbol back the original's linkage by it,
			 * and a function its name (join.c). */
			const struct sym *s = &mi->syms[i];
			if (s->orig_name && (s->linkage == LLVMPrivateLinkage || (s->flags & SF_STABLE_LOCAL)))
				json_object_set_new(o, "original", json_string(s->orig_name));
			else if (!s->name[0])
				json_object_set_new(o, "original", json_string(""));
			free(nm);
			json_array_append_new(prom, o);
			json_array_append_new(loc, json_string(P->new_name[i]));
		}
	for (int k = 0; k < P->nlocal_extra; k++)
		json_array_append_new(loc, json_string(P->local_extra[k]));
	json_object_set_new(root, "promoted", prom);
	json_object_set_new(root, "localize", loc);
	/* Numbered local functions under edit-stable names that stay local (the
	 * promoted ones are above): a compile's join renames them back. */
	json_t *ren = json_array();
	for (int i = 0; i < mi->nsyms; i++) {
		const struct sym *s = &mi->syms[i];
		if ((s->flags & SF_STABLE_LOCAL) && !P->new_name[i]) {
			json_t *o = json_object();
			json_object_set_new(o, "to", json_string(s->name));
			json_object_set_new(o, "original", json_string(s->orig_name));
			json_array_append_new(ren, o);
		}
	}
	json_object_set_new(root, "renamed", ren);
	/* Cross-partition references: [from, to, count]. */
	long *cnt = xcalloc((size_t)P->n * P->n, sizeof *cnt);
	for (int i = 0; i < mi->nsyms; i++) {
		const struct sym *s = &mi->syms[i];
		if (s->unit < 0)
			continue;
		int from = P->owner[s->unit];
		for (int k = 0; k < s->nrefs; k++) {
			int t = mi->syms[s->refs[k]].unit;
			if (t >= 0 && P->owner[t] != from)
				cnt[from * P->n + P->owner[t]]++;
		}
	}
	json_t *edges = json_array();
	for (int a = 0; a < P->n; a++)
		for (int b = 0; b < P->n; b++)
			if (cnt[a * P->n + b])
				json_array_append_new(edges, json_pack("[i,i,I]", a, b, (json_int_t)cnt[a * P->n + b]));
	free(cnt);
	json_object_set_new(root, "edges", edges);
	json_t *st = json_object();
	json_object_set_new(st, "globals", json_integer(mi->nsyms));
	json_object_set_new(st, "functions", json_integer(mi->nfuncs_defined));
	json_object_set_new(st, "units", json_integer(mi->nunits));
	json_object_set_new(st, "dead", json_integer(mi->ndead));
	json_object_set_new(st, "total_cost", json_integer(mi->total_cost));
	json_object_set_new(st, "largest_unit_cost", json_integer(P->largest_unit));
	json_object_set_new(st, "value_profile_targets", json_integer(mi->nvp_targets));
	json_object_set_new(st, "alias_users", json_integer(mi->nalias_users));
	json_object_set_new(st, "promoted", json_integer(P->npromoted));
	json_object_set_new(st, "copies", json_integer(P->ncopies));
	json_object_set_new(st, "shared_static_duplicates", json_integer(P->nshared_dups));
	json_object_set_new(root, "stats", st);
	/* (4 digits: the duplication ratios, the plan's only reals) */
	char *s = json_dumps(root, JSON_INDENT(1) | JSON_REAL_PRECISION(4));
	json_decref(root);
	char *out = xasprintf("%s\n", s);
	free(s);
	return out;
}

/* Appends name and a newline at *q (or only counts, with q NULL). */
static void put_line(char **q, size_t *len, const char *name)
{
	size_t l = strlen(name);
	if (*q) {
		memcpy(*q, name, l);
		(*q)[l] = '\n';
		*q += l + 1;
	}
	*len += l + 1;
}

char *plan_localize_list(const struct module_info *mi, const struct split_plan *P)
{
	size_t len = 0;
	char *s = NULL;
	for (int pass = 0; pass < 2; pass++) {
		char *q = s;
		for (int i = 0; i < mi->nsyms; i++)
			if (P->new_name[i])
				put_line(&q, &len, P->new_name[i]);
		for (int k = 0; k < P->nlocal_extra; k++)
			put_line(&q, &len, P->local_extra[k]);
		if (pass)
			*q = 0;
		else
			s = xmalloc(len + 1);
	}
	return s;
}

char *plan_rename_list(const struct module_info *mi, const struct split_plan *P, int verbatim)
{
	size_t len = 0;
	for (int pass = 0; pass < 2; pass++) {
		char *out = pass ? xmalloc(len + 1) : NULL, *q = out;
		for (int i = 0; i < mi->nsyms; i++) {
			const struct sym *s = &mi->syms[i];
			const char *from = P->new_name[i];
			const char *to = s->flags & SF_STABLE_LOCAL ? s->orig_name : s->name;
			/* A numbered local function under its edit-stable name and
			 * not promoted: its number back (a plain compile's merge;
			 * a ThinLTO compile's join reads plan.json instead). */
			if (!from && (s->flags & SF_STABLE_LOCAL))
				from = s->name;
			if (s->orig_name && !verbatim && s->linkage != LLVMPrivateLinkage &&
			    !(s->flags & SF_STABLE_LOCAL)) {
				from = s->name;
				to = s->orig_name;
			} else if (!from || !s->name[0] || s->linkage != LLVMInternalLinkage || !strcmp(from, to)) {
				continue; /* (promoted under its own name: nothing to rename back) */
			}
			size_t a = strlen(from), b = strlen(to);
			if (pass) {
				memcpy(q, from, a);
				q[a] = ' ';
				memcpy(q + a + 1, to, b);
				q[a + 1 + b] = '\n';
				q += a + b + 2;
			} else {
				len += a + b + 2;
			}
		}
		if (pass) {
			*q = 0;
			return out;
		}
	}
	return NULL;
}

struct seed_entry {
	char *name;
	int part;
};

static int cmp_entry(const void *a, const void *b)
{
	const struct seed_entry *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : (x->part > y->part) - (x->part < y->part);
}

/* The name the analysis uses for a plan's name: ThinLTO's `.llvm.<hash>`
 * changes with every edit, so match the edit-stable name (analyze.h). */
static char *seed_name(const char *nm)
{
	const char *x = llvm_suffix(nm);
	return x ? xasprintf("%.*smtpc", (int)(x - nm), nm) : xstrdup(nm);
}

/* The names of one kind ("owned", "copies") of every partition, sorted. */
static struct seed_entry *seed_entries(json_t *parts, const char *kind, int *count)
{
	size_t total = 0;
	for (size_t p = 0; p < json_array_size(parts); p++)
		total += json_array_size(json_object_get(json_array_get(parts, p), kind));
	struct seed_entry *e = xmalloc((total + 1) * sizeof *e);
	int n = 0;
	for (size_t p = 0; p < json_array_size(parts); p++) {
		json_t *names = json_object_get(json_array_get(parts, p), kind);
		for (size_t k = 0; k < json_array_size(names); k++) {
			const char *nm = json_string_value(json_array_get(names, k));
			if (nm)
				e[n++] = (struct seed_entry){seed_name(nm), (int)p};
		}
	}
	if (n)
		qsort(e, n, sizeof *e, cmp_entry);
	*count = n;
	return e;
}

int plan_seed_parse(const char *text, struct plan_seed *seed, char **error)
{
	memset(seed, 0, sizeof *seed);
	json_error_t jerr;
	json_t *root = json_loads(text, 0, &jerr);
	if (!root) {
		*error = xasprintf("not JSON (line %d: %s)", jerr.line, jerr.text);
		return -1;
	}
	json_t *parts = json_object_get(root, "partitions");
	const char *ih = json_string_value(json_object_get(root, "input_hash"));
	const char *oh = json_string_value(json_object_get(root, "options_hash"));
	if (json_integer_value(json_object_get(root, "version")) != 1 || !json_is_array(parts) || !ih || !oh) {
		json_decref(root);
		*error = xstrdup("not an MTPC plan (version 1)");
		return -1;
	}
	seed->input_hash = xstrdup(ih);
	seed->options_hash = xstrdup(oh);
	seed->npartitions = (int)json_array_size(parts);
	seed->measured = xmalloc((seed->npartitions + 1) * sizeof *seed->measured);
	seed->cost = xcalloc(seed->npartitions + 1, sizeof *seed->cost);
	for (size_t p = 0; p < json_array_size(parts); p++) {
		json_t *o = json_array_get(parts, p);
		json_t *ms = json_object_get(o, "measured_seconds");
		seed->measured[p] = json_is_number(ms) ? json_number_value(ms) : -1;
		seed->cost[p] = (long)json_integer_value(json_object_get(o, "cost"));
	}
	int n;
	struct seed_entry *e = seed_entries(parts, "owned", &n);
	seed->names = xmalloc((n + 1) * sizeof *seed->names);
	seed->parts = xmalloc((n + 1) * sizeof *seed->parts);
	for (int i = 0; i < n; i++) {
		seed->names[i] = e[i].name;
		seed->parts[i] = e[i].part;
	}
	seed->n = n;
	free(e);
	e = seed_entries(parts, "copies", &n);
	seed->copy_names = xmalloc((n + 1) * sizeof *seed->copy_names);
	seed->copy_parts = xmalloc((n + 1) * sizeof *seed->copy_parts);
	for (int i = 0; i < n; i++) {
		seed->copy_names[i] = e[i].name;
		seed->copy_parts[i] = e[i].part;
	}
	seed->ncopies = n;
	free(e);
	json_decref(root);
	plan_seed_weigh(seed, NULL, 0);
	return 0;
}

void plan_seed_weigh(struct plan_seed *seed, const double *weights, int nweights)
{
	int n = seed->npartitions;
	double wsum = 0;
	for (int p = 0; weights && nweights >= n && p < n; p++)
		wsum += weights[p];
	/* Short or even compile times are noise: rebalancing on them would move
	 * units (and change partitions) on every build. */
	double max = 0, sum = 0, rmax = 0;
	int measured = n > 0;
	for (int p = 0; p < n; p++) {
		if (seed->measured[p] <= 0)
			measured = 0;
		double r = seed->measured[p] * (wsum > 0 ? wsum / (n * weights[p]) : 1.0);
		sum += r;
		if (r > rmax)
			rmax = r;
		if (seed->measured[p] > max)
			max = seed->measured[p];
	}
	seed->rebalance = measured && max > 2.0 && rmax * n > 1.2 * sum;
}

static int seed_find(const struct plan_seed *s, const char *name)
{
	int lo = 0, hi = s->n;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		int c = strcmp(s->names[mid], name);
		if (c == 0)
			return mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

int plan_seed_lookup(void *ctx, const char *name)
{
	struct plan_seed *s = ctx;
	int i = seed_find(s, name);
	return i < 0 ? -1 : s->parts[i];
}

double plan_seed_scale(void *ctx, const char *name)
{
	struct plan_seed *s = ctx;
	int i = seed_find(s, name);
	if (i < 0 || !s->measured)
		return 1.0;
	/* Seconds per cost unit of this symbol's old partition, relative to the
	 * module-wide average: > 1 where the estimate was too low. */
	double sec = 0, cost = 0;
	for (int p = 0; p < s->npartitions; p++)
		if (s->measured[p] > 0 && s->cost[p] > 0) {
			sec += s->measured[p];
			cost += s->cost[p];
		}
	int p = s->parts[i];
	if (sec <= 0 || s->measured[p] <= 0 || s->cost[p] <= 0)
		return 1.0;
	double r = (s->measured[p] / s->cost[p]) / (sec / cost);
	return r < 0.25 ? 0.25 : r > 4 ? 4 : r;
}

int plan_seed_had_copy(void *ctx, const char *name, int p)
{
	const struct plan_seed *s = ctx;
	int lo = 0, hi = s->ncopies;
	while (lo < hi) { /* first entry >= (name, p) */
		int mid = (lo + hi) / 2;
		int c = strcmp(s->copy_names[mid], name);
		if (c < 0 || (c == 0 && s->copy_parts[mid] < p))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->ncopies && !strcmp(s->copy_names[lo], name) && s->copy_parts[lo] == p;
}

void plan_seed_free(struct plan_seed *s)
{
	for (int i = 0; i < s->n; i++)
		free(s->names[i]);
	for (int i = 0; i < s->ncopies; i++)
		free(s->copy_names[i]);
	free(s->copy_names);
	free(s->copy_parts);
	free(s->names);
	free(s->parts);
	free(s->measured);
	free(s->cost);
	free(s->input_hash);
	free(s->options_hash);
	memset(s, 0, sizeof *s);
}
