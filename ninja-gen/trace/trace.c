/* trace.c: see trace.h. The trace file (trace_write); its summary is
 * trace_summary.c. */
#define _POSIX_C_SOURCE 200809L
#include "trace.h"
#include "buf.h"
#include "inner_dir.h"
#include "util.h"

#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* One edge of build.ninja with an MTPC description. */
struct edge {
	char *desc;
	struct strv outs, ins; /* every output; every input (explicit, implicit, order-only) */
	int event;             /* its event in this build, or -1 */
};

/* An output path and the edge that writes it (sorted by path). */
struct out_ref {
	const char *path;
	size_t edge;
};

/* One edge that ran in this build. */
struct event {
	size_t edge;          /* SIZE_MAX: the front end's own step (trace_info.pre_kind) */
	long long start, end; /* ms since Ninja started */
	char *kind, *key;     /* from the description; key NULL for none */
	int part;             /* a slot's partition, else -1 */
	int lane;
	int critical;
};

struct manifest {
	struct edge *v;
	size_t n;
	struct out_ref *outs;
	size_t nouts;
};

char *trace_last_path(const char *db)
{
	const char *slash = strrchr(db, '/');
	return slash ? xasprintf("%.*s/" CACHE_LAST_TRACE, (int)(slash - db), db) : xstrdup(CACHE_LAST_TRACE);
}

void trace_mark(const char *dir, struct trace_mark *mark)
{
	char *log = xasprintf("%s/.ninja_log", dir);
	struct stat st;
	memset(mark, 0, sizeof *mark);
	if (stat(log, &st) == 0) {
		mark->exists = 1;
		mark->ino = st.st_ino;
		mark->size = (long long)st.st_size;
	}
	free(log);
}

/* The words of a build statement's line (after "build "), Ninja's escapes
 * undone ("$ ", "$:", "$$"): its outputs before the ':' (explicit and
 * implicit), its inputs after the rule name (explicit, implicit and
 * order-only; the '|' and '||' marks left out). */
static void build_words(const char *s, struct strv *outs, struct strv *ins)
{
	struct buf w = {0};
	int have = 0, colon = 0, rule = 0;
	for (;; s++) {
		char c = *s;
		if (c == '$' && s[1] && s[1] != '\n') {
			buf_addc(&w, *++s);
			have = 1;
			continue;
		}
		if (c == ' ' || c == ':' || c == '\n' || !c) {
			if (have && strcmp(w.s, "|") && strcmp(w.s, "||") && strcmp(w.s, "|@")) {
				if (!colon)
					strv_add(outs, w.s);
				else if (rule)
					strv_add(ins, w.s);
				else
					rule = 1;
			}
			have = 0;
			w.len = 0;
			if (w.s)
				w.s[0] = 0;
			colon |= c == ':';
			if (c == '\n' || !c)
				break;
			continue;
		}
		buf_addc(&w, c);
		have = 1;
	}
	buf_free(&w);
}

static int cmp_out_ref(const void *a, const void *b)
{
	return strcmp(((const struct out_ref *)a)->path, ((const struct out_ref *)b)->path);
}

/* The edges of the manifest text that have an MTPC description. */
static void read_manifest(char *text, struct manifest *mf)
{
	struct edge cur = {0};
	int in_build = 0;
	for (char *l = text; l && *l;) {
		char *nl = strchr(l, '\n');
		if (!strncmp(l, "build ", 6)) {
			if (in_build) {
				strv_free(&cur.outs);
				strv_free(&cur.ins);
			}
			memset(&cur, 0, sizeof cur);
			build_words(l + 6, &cur.outs, &cur.ins);
			in_build = 1;
		} else if (in_build && !strncmp(l, "  desc = MTPC ", 14)) {
			struct buf d = {0};
			for (const char *s = l + 9; *s && *s != '\n'; s++)
				buf_addc(&d, s[0] == '$' && s[1] == '$' ? *s++ : *s);
			cur.desc = d.s;
			cur.event = -1;
			mf->v = xrealloc(mf->v, (mf->n + 1) * sizeof *mf->v);
			mf->v[mf->n++] = cur;
			memset(&cur, 0, sizeof cur);
			in_build = 0;
		} else if (in_build && l[0] != ' ') {
			strv_free(&cur.outs); /* an edge of no MTPC step (phony) */
			strv_free(&cur.ins);
			in_build = 0;
		}
		l = nl ? nl + 1 : NULL;
	}
	if (in_build) {
		strv_free(&cur.outs);
		strv_free(&cur.ins);
	}
	for (size_t i = 0; i < mf->n; i++)
		for (size_t k = 0; k < mf->v[i].outs.n; k++) {
			mf->outs = xrealloc(mf->outs, (mf->nouts + 1) * sizeof *mf->outs);
			mf->outs[mf->nouts++] = (struct out_ref){mf->v[i].outs.v[k], i};
		}
	if (mf->nouts) /* (qsort wants a valid pointer even for none) */
		qsort(mf->outs, mf->nouts, sizeof *mf->outs, cmp_out_ref);
}

/* The edge that writes path, or -1. */
static long find_edge(const struct manifest *mf, const char *path)
{
	struct out_ref key = {path, 0};
	const struct out_ref *r = mf->nouts ? bsearch(&key, mf->outs, mf->nouts, sizeof key, cmp_out_ref) : NULL;
	return r ? (long)r->edge : -1;
}

static void free_manifest(struct manifest *mf)
{
	for (size_t i = 0; i < mf->n; i++) {
		free(mf->v[i].desc);
		strv_free(&mf->v[i].outs);
		strv_free(&mf->v[i].ins);
	}
	free(mf->v);
	free(mf->outs);
}

/* One line of .ninja_log: "start\tend\tmtime\tpath\thash". */
struct log_entry {
	long long start, end;
	char *path; /* points into the log's text */
};

/* The entries of the log text that this build wrote: those after the mark
 * when the log grew in place, else (recompacted by Ninja) its last entries
 * that end in order and name each output once. */
static size_t this_build(char *text, size_t len, const struct trace_mark *mark, const struct stat *now,
			 struct log_entry **out)
{
	size_t from = 0;
	int in_place = !mark->exists || (mark->ino == now->st_ino && mark->size <= (long long)len);
	if (mark->exists && in_place)
		from = (size_t)mark->size;
	struct log_entry *v = NULL;
	size_t n = 0;
	for (char *l = text + from; l < text + len && *l;) {
		char *nl = strchr(l, '\n');
		if (nl)
			*nl = 0;
		long long s, e;
		char *f = l, *path = NULL;
		if (*l != '#' && sscanf(l, "%lld\t%lld", &s, &e) == 2) {
			for (int k = 0; k < 3 && f; k++) {
				f = strchr(f, '\t');
				f = f ? f + 1 : NULL;
			}
			if (f) {
				path = f;
				char *tab = strchr(path, '\t');
				if (tab)
					*tab = 0;
			}
		}
		if (path) {
			v = xrealloc(v, (n + 1) * sizeof *v);
			v[n++] = (struct log_entry){s, e, path};
		}
		l = nl ? nl + 1 : text + len;
	}
	if (!in_place && n) {
		size_t first = n - 1;
		while (first > 0 && v[first - 1].end <= v[first].end) {
			int again = 0;
			for (size_t k = first; k < n && !again; k++)
				again = !strcmp(v[k].path, v[first - 1].path);
			if (again)
				break;
			first--;
		}
		memmove(v, v + first, (n - first) * sizeof *v);
		n -= first;
	}
	*out = v;
	return n;
}

/* The kind, module key and partition an edge's description names:
 * "MTPC thin link", "MTPC link", "MTPC slot <key> p<i>", "MTPC <kind> <key>". */
static void parse_desc(const char *desc, struct event *e)
{
	const char *s = desc + 5; /* after "MTPC " */
	e->part = -1;
	e->key = NULL;
	if (!strcmp(s, "thin link")) {
		e->kind = xstrdup("thinlink");
		return;
	}
	size_t k = strcspn(s, " ");
	e->kind = xasprintf("%.*s", (int)k, s);
	if (!s[k])
		return;
	const char *rest = s + k + 1;
	if (!strcmp(e->kind, "slot")) {
		const char *p = strrchr(rest, ' ');
		if (p && p[1] == 'p') {
			e->key = xasprintf("%.*s", (int)(p - rest), rest);
			e->part = atoi(p + 2);
			return;
		}
	}
	e->key = xstrdup(rest);
}

static const struct trace_module *module_of(const struct trace_info *info, const char *key)
{
	for (size_t i = 0; key && i < info->nmods; i++)
		if (!strcmp(info->mods[i].key, key))
			return &info->mods[i];
	return NULL;
}

static const struct manifest *sort_mf; /* for cmp_event (qsort has no context) */

/* By start, then end, then first output: the order of the file and of the
 * lanes' assignment, the same for the same log. */
static int cmp_event(const void *a, const void *b)
{
	const struct event *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return strcmp(sort_mf->v[x->edge].outs.v[0], sort_mf->v[y->edge].outs.v[0]);
}

/* Lay the events (sorted by start) on lanes: each on the lowest lane free
 * when it starts. Returns the number of lanes (the most edges that ran at
 * once). */
static int assign_lanes(struct event *ev, size_t n)
{
	long long *busy_until = NULL;
	int lanes = 0;
	for (size_t i = 0; i < n; i++) {
		int l = 0;
		while (l < lanes && busy_until[l] > ev[i].start)
			l++;
		if (l == lanes) {
			busy_until = xrealloc(busy_until, (size_t)(lanes + 1) * sizeof *busy_until);
			lanes++;
		}
		busy_until[l] = ev[i].end;
		ev[i].lane = l;
	}
	free(busy_until);
	return lanes;
}

/* Whether event p is an input of event e: it writes one of e's inputs, or
 * it is a slot of the module e merges or joins (the dyndep file adds the
 * slots' objects to those edges while the build runs). */
static int feeds(const struct manifest *mf, const struct event *ev, size_t p, size_t e)
{
	const struct edge *ed = &mf->v[ev[e].edge];
	for (size_t k = 0; k < ed->ins.n; k++) {
		long w = find_edge(mf, ed->ins.v[k]);
		if (w >= 0 && mf->v[w].event == (int)p)
			return 1;
	}
	return ev[e].key && ev[p].key && !strcmp(ev[p].kind, "slot") && !strcmp(ev[e].key, ev[p].key) &&
	       (!strcmp(ev[e].kind, "merge") || !strcmp(ev[e].kind, "join"));
}

/* Mark the critical path: from the event that ended last, back through the
 * input that ended last. Returns its length in ms (the events' own time). */
static long long mark_critical(const struct manifest *mf, struct event *ev, size_t n)
{
	if (!n)
		return 0;
	size_t cur = 0;
	for (size_t i = 1; i < n; i++)
		if (ev[i].end > ev[cur].end)
			cur = i;
	long long total = 0;
	for (;;) {
		ev[cur].critical = 1;
		total += ev[cur].end - ev[cur].start;
		long best = -1;
		for (size_t p = 0; p < n; p++)
			if (!ev[p].critical && ev[p].end <= ev[cur].start && feeds(mf, ev, p, cur) &&
			    (best < 0 || ev[p].end > ev[best].end))
				best = (long)p;
		if (best < 0)
			return total;
		cur = (size_t)best;
	}
}

static json_t *event_json(const struct manifest *mf, const struct event *e, const struct trace_info *info)
{
	const struct trace_module *m = module_of(info, e->key);
	const char *mod = m ? m->name : e->key;
	struct buf name = {0};
	buf_add(&name, e->kind);
	if (mod)
		buf_printf(&name, " %s", mod);
	if (e->part >= 0)
		buf_printf(&name, " p%d", e->part);
	json_t *args = json_object();
	json_object_set_new(args, "kind", json_string(e->kind));
	if (mod)
		json_object_set_new(args, "module", json_string(mod));
	if (e->part >= 0)
		json_object_set_new(args, "partition", json_integer(e->part));
	if (m && m->reason)
		json_object_set_new(args, "reason", json_string(m->reason));
	if (e->edge != SIZE_MAX)
		json_object_set_new(args, "output", json_string(mf->v[e->edge].outs.v[0]));
	if (e->critical)
		json_object_set_new(args, "critical", json_true());
	json_t *j = json_pack("{s:s, s:s, s:s, s:I, s:I, s:i, s:i, s:o}", "name", name.s, "cat", e->kind, "ph", "X",
			      "ts", (json_int_t)(e->start * 1000), "dur", (json_int_t)((e->end - e->start) * 1000),
			      "pid", 1, "tid", e->lane + 1, "args", args);
	buf_free(&name);
	return j;
}

/* The trace of the events (sorted, on lanes). */
static json_t *trace_json(const struct manifest *mf, const struct event *ev, size_t n, int lanes,
			  long long critical, const struct trace_info *info)
{
	json_t *events = json_array();
	char *title = xasprintf("%s %s", info->tool, mtpc_base_name(info->output));
	json_array_append_new(events, json_pack("{s:s, s:s, s:i, s:{s:s}}", "name", "process_name", "ph", "M",
						"pid", 1, "args", "name", title));
	free(title);
	for (int l = 0; l < lanes; l++) {
		char lane[32];
		snprintf(lane, sizeof lane, "lane %d", l + 1);
		json_array_append_new(events, json_pack("{s:s, s:s, s:i, s:i, s:{s:s}}", "name", "thread_name",
							"ph", "M", "pid", 1, "tid", l + 1, "args", "name", lane));
	}
	long long first = n ? ev[0].start : 0, last = 0;
	for (size_t i = 0; i < n; i++) {
		json_array_append_new(events, event_json(mf, &ev[i], info));
		if (ev[i].end > last)
			last = ev[i].end;
	}
	json_t *other = json_pack("{s:i, s:s, s:s, s:i, s:i, s:I, s:I}", "mtpc_trace", 1, "tool", info->tool,
				  "output", info->output, "jobs", info->jobs, "lanes", lanes, "wall_ms",
				  (json_int_t)(last - first), "critical_ms", (json_int_t)critical);
	return json_pack("{s:o, s:s, s:o}", "traceEvents", events, "displayTimeUnit", "ms", "otherData", other);
}

/* Name the trace in the file last (atomically: links write it side by side). */
static void write_last(const char *last, const char *trace)
{
	char *dir = xstrdup(last), *slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	char *line = xasprintf("%s\n", trace);
	if ((slash && mtpc_mkdir_p(dir) < 0) || mtpc_write_file(last, line, strlen(line), MTPC_WRITE_IF_CHANGED) < 0)
		mtpc_warn("cannot write %s: %s", last, strerror(errno));
	free(line);
	free(dir);
}

int trace_write(const char *dir, const char *manifest, const struct trace_mark *mark,
		const struct trace_info *info, const char *last)
{
	char *mpath = manifest ? xstrdup(manifest) : xasprintf("%s/build.ninja", dir);
	char *log = xasprintf("%s/.ninja_log", dir), *path = xasprintf("%s/" INNER_TRACE, dir);
	char *mtext = NULL, *ltext = NULL;
	size_t mlen, llen;
	struct stat st;
	struct manifest mf = {0};
	struct log_entry *ents = NULL;
	struct event *ev = NULL;
	size_t n = 0, nents = 0;
	int r = -1;
	if (mtpc_read_file(mpath, &mtext, &mlen) < 0) {
		mtpc_warn("no trace of this build: cannot read %s: %s", mpath, strerror(errno));
		goto out;
	}
	int have_log = stat(log, &st) == 0;
	if (!have_log && errno == ENOENT && !mark->exists) {
		/* no edge has ended yet in this directory's first build */
		memset(&st, 0, sizeof st);
		ltext = xstrdup("");
		llen = 0;
	} else if (!have_log || mtpc_read_file(log, &ltext, &llen) < 0) {
		mtpc_warn("no trace of this build: cannot read %s: %s", log, strerror(errno));
		goto out;
	}
	read_manifest(mtext, &mf);
	nents = this_build(ltext, llen, mark, &st, &ents);
	for (size_t i = 0; i < nents; i++) {
		long e = find_edge(&mf, ents[i].path);
		if (e < 0 || mf.v[e].event >= 0)
			continue; /* not an MTPC step, or another output of an edge seen */
		ev = xrealloc(ev, (n + 1) * sizeof *ev);
		ev[n] = (struct event){.edge = (size_t)e, .start = ents[i].start + info->start_ms,
				       .end = ents[i].end + info->start_ms};
		parse_desc(mf.v[e].desc, &ev[n]);
		mf.v[e].event = (int)n;
		n++;
	}
	sort_mf = &mf;
	if (n)
		qsort(ev, n, sizeof *ev, cmp_event);
	for (size_t i = 0; i < n; i++)
		mf.v[ev[i].edge].event = (int)i;
	long long critical = mark_critical(&mf, ev, n);
	if (info->pre_kind) {
		/* the front end's step: before every edge, on the critical path */
		ev = xrealloc(ev, (n + 1) * sizeof *ev);
		memmove(ev + 1, ev, n * sizeof *ev);
		ev[0] = (struct event){.edge = SIZE_MAX, .start = 0, .end = info->pre_end_ms,
				       .kind = xstrdup(info->pre_kind), .key = info->pre_key ? xstrdup(info->pre_key) : NULL,
				       .part = -1, .critical = 1};
		critical += info->pre_end_ms;
		n++;
	}
	int lanes = assign_lanes(ev, n);
	json_t *j = trace_json(&mf, ev, n, lanes, critical, info);
	char *text = json_dumps(j, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
	json_decref(j);
	if (!text || mtpc_write_file(path, text, strlen(text), 0) < 0)
		mtpc_warn("cannot write the trace %s: %s", path, strerror(errno));
	else
		r = 0;
	free(text);
	if (r == 0 && last)
		write_last(last, path);
out:
	for (size_t i = 0; i < n; i++) {
		free(ev[i].kind);
		free(ev[i].key);
	}
	free(ev);
	free(ents);
	free_manifest(&mf);
	free(mtext);
	free(ltext);
	free(mpath);
	free(log);
	free(path);
	return r;
}
