/* steps.c: see steps.h. */
#define _POSIX_C_SOURCE 200809L
#include "steps.h"
#include "debugfix.h"
#include "graph.h"
#include "hash.h"
#include "jobs.h"
#include "ninja_write.h"
#include "proc.h"
#include "slurm.h"
#include "util.h"
#ifdef MTPC_HAVE_CACHE
#include "mtpc_cache.h"
#endif

#include <errno.h>
#include <stdint.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct step {
	const char *name;
	const char *cwd, *out, *dir, *tool, *module, *index, *plan, *part, *cache;
	const char *kmax, *reloc, *min_cost, *llvm_bin, *dwo, *status;
	const char *record_module; /* record the module's backend time under this path */
	const char *names;         /* --names once: debugfix_earlier's names_once */
	char **cmd; /* after "--", NULL-terminated (argv's own terminator) */
	struct strv split_args; /* --split-arg words, for mtpc-split */
};

static const char *const step_names[] = {
	"--thinlink-step", "--backend-step", "--slot-step", "--split-step",
	"--merge-step",    "--run-step",     "--dwp-step",   "--node-step", NULL,
};

int steps_is_step(const char *arg)
{
	for (int i = 0; step_names[i]; i++)
		if (!strcmp(arg, step_names[i]))
			return 1;
	return 0;
}

static int parse(struct step *s, int argc, char **argv)
{
	memset(s, 0, sizeof *s);
	s->name = argv[1];
	static const struct {
		const char *opt;
		size_t off;
	} opts[] = {
#define O(n) {"--" #n, offsetof(struct step, n)}
		O(cwd), O(out), O(dir), O(tool), O(module), O(index), O(plan), O(part),
		O(cache), O(kmax), O(reloc), O(dwo), O(status), {"--min-cost", offsetof(struct step, min_cost)},
		{"--llvm-bin", offsetof(struct step, llvm_bin)},
		{"--record-module", offsetof(struct step, record_module)},
		{"--names", offsetof(struct step, names)},
#undef O
	};
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			s->cmd = argv + i + 1;
			return 0;
		}
		if (!strcmp(argv[i], "--split-arg") && i + 1 < argc) {
			strv_add(&s->split_args, argv[++i]);
			continue;
		}
		size_t k;
		for (k = 0; k < sizeof opts / sizeof opts[0]; k++)
			if (!strcmp(argv[i], opts[k].opt))
				break;
		if (k == sizeof opts / sizeof opts[0] || i + 1 >= argc) {
			mtpc_error("%s: bad argument %s", s->name, argv[i]);
			return -1;
		}
		*(const char **)((char *)s + opts[k].off) = argv[++i];
	}
	return 0;
}

static int need(const struct step *s, const char *v, const char *opt)
{
	if (!v)
		mtpc_error("%s needs %s", s->name, opt);
	return v != NULL;
}

static long long file_size(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 ? (long long)st.st_size : -1;
}

/* Move tmp to path only if the content differs (so restat can stop the
 * rebuild there). Returns 0 or -1 after an error message. */
static int move_if_changed(const char *tmp, const char *path)
{
	int r = mtpc_copy_file(tmp, path, MTPC_WRITE_IF_CHANGED);
	unlink(tmp);
	return r;
}

/* Move the .dwo a -gsplit-dwarf compile wrote to dwo.tmp in, only if
 * changed. clang 19 writes one even for a module without debug info; should
 * a compile (or a launcher) leave none, the edge still declares it: write it
 * empty (no skeleton refers to it). */
static int take_dwo(const char *dwo)
{
	char *tmp = xasprintf("%s.tmp", dwo);
	int r;
	if (file_size(tmp) >= 0) {
		r = move_if_changed(tmp, dwo);
	} else {
		r = mtpc_write_file(dwo, "", 0, MTPC_WRITE_IF_CHANGED);
		if (r < 0)
			mtpc_error("cannot write %s: %s", dwo, strerror(errno));
	}
	free(tmp);
	return r < 0 ? -1 : 0;
}

/* A failure of the machine, not of the input: the disk or the quota is full.
 * The fallbacks below (an empty partition object that makes the merge compile
 * the module unsplit, a fallback dyndep) are recorded by Ninja as a step that
 * succeeded, and would be trusted by every later build until the module
 * changes; a full disk must instead fail the step, so that the next build,
 * with space again, retries it (tests/test_faults.py, full filesystem). */
static const char *out_of_space(const char *msg)
{
	static const int codes[] = {ENOSPC, EDQUOT};
	for (size_t i = 0; msg && i < sizeof codes / sizeof codes[0]; i++)
		if (strstr(msg, strerror(codes[i])))
			return strerror(codes[i]);
	return NULL;
}

/* A partition's map of virtual lines (--plan P --part I: from lines.txt
 * beside P); empty when there is none. */
static void slot_lines(const struct step *s, struct line_map *map)
{
	map->span = NULL;
	map->n = 0;
	if (!s->plan || !s->part)
		return;
	const char *slash = strrchr(s->plan, '/');
	char *path = slash ? xasprintf("%.*s/" STEPS_LINES, (int)(slash - s->plan), s->plan)
			   : xstrdup(STEPS_LINES);
	char *text;
	size_t len;
	if (mtpc_read_file(path, &text, &len) == 0) {
		debugfix_parse_lines(text, atoi(s->part), map);
		free(text);
	}
	free(path);
}

/* The compiler's messages, with real lines where a partition's have
 * virtual ones (a backend warning or remark names its source line). */
static void print_messages(const struct step *s, const char *text)
{
	struct line_map map;
	slot_lines(s, &map);
	char *real = debugfix_text(text, &map);
	fputs(real, stderr);
	free(real);
	debugfix_free_lines(&map);
}

/* Shared by the backend and slot steps. *machine is set when the failure is
 * not the compiler's (out of space, or our own write of the object failed):
 * then a slot must fail rather than fall back. */
static int compile_checked(const struct step *s, double *seconds, long long *bytes, int *machine)
{
	if (!need(s, s->out, "--out") || !s->cmd || !s->cmd[0])
		return 2;
	char *tmp = xasprintf("%s.tmp", s->out);
	unlink(tmp);
	struct buf err = {0};
	/* CPU seconds, not wall: what the compile costs, whatever else the
	 * machine runs meanwhile (the plan cache and mtpc-link's choice of
	 * modules compare these times across builds). */
	struct proc_io io = {.err = &err, .cpu = seconds};
	int st = slurm_run(s->cmd, &io, s->out); /* here, or on the Slurm allocation */
	if (err.len)
		print_messages(s, err.s);
	long long size = file_size(tmp);
	int bad = st != 0 || (err.s && strstr(err.s, "Error running ThinLTO backend")) || size <= 0;
	if (bad && s->dwo) {
		char *dt = xasprintf("%s.tmp", s->dwo);
		unlink(dt);
		free(dt);
	}
	if (bad) {
		const char *full = out_of_space(err.s);
		*machine = full != NULL;
		if (full)
			mtpc_error("compiling %s failed: %s (the next build retries it)", s->out, full);
		else if (st == 0)
			mtpc_error("compiling %s failed: %s", s->out,
				   size <= 0 ? "empty or missing object (ThinLTO backend error?)"
					     : "\"Error running ThinLTO backend\"");
		unlink(tmp);
		buf_free(&err);
		free(tmp);
		return st ? st : 1;
	}
	buf_free(&err);
	int r = move_if_changed(tmp, s->out);
	free(tmp);
	if (r == 0 && s->dwo)
		r = take_dwo(s->dwo);
	*bytes = size;
	*machine = r < 0; /* the compile worked, writing its result did not */
	return r < 0 ? 1 : 0;
}

int steps_plan_partitions(const char *text)
{
	json_error_t e;
	json_t *root = json_loads(text, 0, &e);
	if (!root)
		return -1;
	json_t *parts = json_object_get(root, "partitions");
	int n = json_is_array(parts) ? (int)json_array_size(parts) : -1;
	json_decref(root);
	return n;
}

#ifdef MTPC_HAVE_CACHE
static mtpc_cache *open_cache(const struct step *s)
{
	char *path = mtpc_cache_resolve_path(s->cache, NULL);
	mtpc_cache *c = mtpc_cache_open(path, 0); /* NULL after (at most) one warning */
	free(path);
	return c;
}

/* The plan key (input and options hash) of a plan.json; NULL if unreadable. */
static json_t *plan_key(const char *plan, const char **mh, const char **oh)
{
	char *text;
	size_t len;
	if (mtpc_read_file(plan, &text, &len) < 0)
		return NULL;
	json_t *root = json_loads(text, 0, NULL);
	free(text);
	*mh = json_string_value(json_object_get(root, "input_hash"));
	*oh = json_string_value(json_object_get(root, "options_hash"));
	if (!*mh || !*oh) {
		json_decref(root);
		return NULL;
	}
	return root;
}
#endif

/* A slot's compile time and object size, under its plan's key. */
static void record_timing(const struct step *s, double seconds, long long bytes)
{
#ifdef MTPC_HAVE_CACHE
	const char *mh, *oh;
	json_t *root = s->plan && s->part ? plan_key(s->plan, &mh, &oh) : NULL;
	if (root) {
		mtpc_cache *c = open_cache(s);
		mtpc_cache_record_partition(c, mh, oh, atoi(s->part), seconds, bytes);
		mtpc_cache_close(c);
		json_decref(root);
	}
#else
	(void)s;
	(void)seconds;
	(void)bytes;
#endif
}

/* With --record-module: the module's backend seconds for mtpc-link's choice
 * of modules to split. A merge passes seconds < 0: the sum of its n slots'
 * recorded times (nothing when one is missing). */
static void record_module(const struct step *s, double seconds, int n)
{
#ifdef MTPC_HAVE_CACHE
	if (!s->record_module)
		return;
	mtpc_cache *c = open_cache(s);
	if (seconds < 0) {
		char *plan = xasprintf("%s/parts/plan.json", s->dir);
		const char *mh, *oh;
		json_t *root = plan_key(plan, &mh, &oh);
		if (root)
			seconds = mtpc_cache_plan_seconds(c, mh, oh, n);
		json_decref(root);
		free(plan);
	}
	if (seconds >= 0)
		mtpc_cache_record_module(c, s->record_module, seconds, n > 1);
	mtpc_cache_close(c);
#else
	(void)s;
	(void)seconds;
	(void)n;
#endif
}

/* With --record-module and --module: one rebuild of the module (its
 * backend or a relay's import ran), and whether its own bitcode had
 * changed since the last one (mtpc-link relays a module that other modules'
 * changes keep rebuilding, graph.h). */
static void record_rebuild(const struct step *s)
{
#ifdef MTPC_HAVE_CACHE
	if (!s->record_module || !s->module)
		return;
	char *data;
	size_t len;
	if (mtpc_read_file(s->module, &data, &len) < 0)
		return;
	char hex[MTPC_HASH_HEX_LEN + 1];
	mtpc_hash_hex(data, len, hex);
	free(data);
	mtpc_cache *c = open_cache(s);
	mtpc_cache_record_rebuild(c, s->record_module, hex);
	mtpc_cache_close(c);
#else
	(void)s;
#endif
}

void steps_dyndep(struct buf *b, const char *dir, int kmax, int n)
{
	buf_add(b, "ninja_dyndep_version = 1\n");
	for (int i = 0; i < kmax; i++) {
		char *obj = xasprintf("%s/p%d.o", dir, i);
		buf_add(b, "build ");
		nw_path(b, obj);
		buf_add(b, ": dyndep");
		if (i < n) {
			char *bc = xasprintf("%s/parts/p%d.bc", dir, i);
			buf_add(b, " | ");
			nw_path(b, bc);
			free(bc);
		}
		buf_add(b, "\n  restat = 1\n");
		free(obj);
	}
	char *native = xasprintf("%s/native.o", dir);
	buf_add(b, "build ");
	nw_path(b, native);
	buf_add(b, ": dyndep |");
	if (n == 0) {
		char *bk = xasprintf("%s/backend.o", dir);
		buf_addc(b, ' ');
		nw_path(b, bk);
		free(bk);
	}
	for (int i = 0; i < n; i++) {
		char *obj = xasprintf("%s/p%d.o", dir, i);
		buf_addc(b, ' ');
		nw_path(b, obj);
		free(obj);
	}
	if (n > 0) {
		char *loc = xasprintf("%s/parts/localize.txt", dir);
		char *ren = xasprintf("%s/parts/rename.txt", dir);
		buf_addc(b, ' ');
		nw_path(b, loc);
		buf_addc(b, ' ');
		nw_path(b, ren);
		free(loc);
		free(ren);
	}
	buf_add(b, "\n  restat = 1\n");
	free(native);
}

/* Run mtpc-split and check what it produced; returns n, -1 with *why set, or
 * SPLIT_UNUSED when the link does not use the module (mtpc-split's status 3:
 * lld wrote an empty index for an archive member it did not pull in). */
#define SPLIT_UNUSED (-2)
static int run_split(const struct step *s, int kmax, char **why)
{
	char *parts = xasprintf("%s/parts", s->dir);
	struct strv cmd = {0};
	/* Placeholder checksums and virtual lines: a partition changes only
	 * with its code, not with every edit of its source file (the merge
	 * puts the real ones back). */
	strv_addl(&cmd, s->tool, s->module, "-o", parts, "--partitions", s->kmax,
		  "--thinlto-index", s->index, "--relocation-model", s->reloc ? s->reloc : "pic",
		  "--placeholder-checksums", "--virtual-lines", NULL);
	if (s->min_cost) {
		strv_add(&cmd, "--min-cost");
		strv_add(&cmd, s->min_cost);
	}
	strv_addv(&cmd, &s->split_args);
	char *env[2] = {s->cache ? xasprintf("MTPC_CACHE=%s", s->cache) : NULL, NULL};
	struct buf err = {0};
	int st = proc_run(cmd.v, NULL, env[0] ? env : NULL, &err);
	int n = -1;
	if (st == 3) {
		n = SPLIT_UNUSED;
	} else if (st != 0) {
		/* First line of its message, for the one-line warning. */
		const char *msg = err.s ? err.s : "";
		size_t l = strcspn(msg, "\n");
		*why = l ? xasprintf("mtpc-split exited with %d: %.*s", st, (int)l, msg)
			 : xasprintf("mtpc-split exited with %d", st);
	} else {
		if (err.len)
			fputs(err.s, stderr);
		char *plan = xasprintf("%s/plan.json", parts), *text;
		size_t len;
		if (mtpc_read_file(plan, &text, &len) < 0) {
			*why = xasprintf("cannot read %s", plan);
		} else {
			n = steps_plan_partitions(text);
			free(text);
			if (n < 1 || n > kmax) {
				*why = xasprintf("%s: %d partitions (want 1..%d)", plan, n, kmax);
				n = -1;
			}
			for (int i = 0; n > 0 && i < n; i++) {
				char *bc = xasprintf("%s/p%d.bc", parts, i);
				if (file_size(bc) <= 0) {
					*why = xasprintf("%s missing or empty", bc);
					n = -1;
				}
				free(bc);
			}
		}
		free(plan);
	}
	buf_free(&err);
	free(env[0]);
	strv_free(&cmd);
	free(parts);
	return n;
}

static int split_step(const struct step *s)
{
	if (!need(s, s->tool, "--tool") || !need(s, s->module, "--module") ||
	    !need(s, s->index, "--index") || !need(s, s->dir, "--dir") || !need(s, s->kmax, "--kmax"))
		return 2;
	int kmax = atoi(s->kmax);
	char *why = NULL;
	record_rebuild(s); /* a relayed module's */
	int n = kmax >= 1 ? run_split(s, kmax, &why) : -1, unused = n == SPLIT_UNUSED;
	if (n < 0 && why && out_of_space(why)) {
		/* No fallback dyndep: it would stay trusted (see out_of_space). */
		mtpc_error("splitting %s failed (%s)", s->module, why);
		free(why);
		return 1;
	}
	if (unused) {
		/* No warning: the plain backend turns it into the empty object
		 * that distributed ThinLTO gives such a member, and the link,
		 * which takes it lazily, ignores it as it did in the thin link. */
		n = 0;
	} else if (n < 0) {
		mtpc_warn("splitting %s failed (%s); compiling it unsplit", s->module,
			  why ? why : "bad --kmax");
		n = 0;
	}
	free(why);
	struct buf dd = {0}, nb = {0};
	steps_dyndep(&dd, s->dir, kmax, n);
	buf_printf(&nb, "%d%s\n", n, unused ? " unused" : "");
	char *ddp = xasprintf("%s/split.dd", s->dir), *np = xasprintf("%s/split.n", s->dir);
	char *cp = xasprintf("%s/parts/" STEPS_CHECKSUMS, s->dir);
	char *lp = xasprintf("%s/parts/" STEPS_LINES, s->dir);
	int r = 0;
	/* The debug-info maps are outputs of the edge: there must be one of
	 * each, empty when the splitter wrote none (a failed split, another
	 * splitter). */
	if ((access(cp, F_OK) < 0 && mtpc_write_file(cp, "", 0, 0) < 0) ||
	    (access(lp, F_OK) < 0 && mtpc_write_file(lp, "", 0, 0) < 0) ||
	    mtpc_write_file(np, nb.s, nb.len, MTPC_WRITE_IF_CHANGED) < 0 ||
	    mtpc_write_file(ddp, dd.s, dd.len, MTPC_WRITE_IF_CHANGED) < 0) {
		mtpc_error("cannot write %s: %s", ddp, strerror(errno));
		r = 1;
	}
	free(cp);
	free(lp);
	free(ddp);
	free(np);
	buf_free(&dd);
	buf_free(&nb);
	return r;
}

/* The module's unsplit backend object as the merged object. */
static int take_backend(const struct step *s)
{
	char *bk = xasprintf("%s/backend.o", s->dir);
	int r = mtpc_copy_file(bk, s->out, MTPC_WRITE_IF_CHANGED) < 0;
	free(bk);
	return r;
}

/* The real checksums and lines back into each partition's object (into
 * D/p<i>.fix.o, which the merge links instead; *fixed says so) and .dwo
 * (D/p<i>.ph.dwo, as compiled, into the D/p<i>.dwo its skeleton names). */
static int fix_partitions(const struct step *s, int n, int *fixed)
{
	char *cp = xasprintf("%s/parts/" STEPS_CHECKSUMS, s->dir), *sums = NULL;
	char *lp = xasprintf("%s/parts/" STEPS_LINES, s->dir), *lines = NULL;
	size_t len;
	if (mtpc_read_file(cp, &sums, &len) < 0)
		sums = NULL; /* no map: nothing to restore */
	if (mtpc_read_file(lp, &lines, &len) < 0)
		lines = NULL;
	int r = 0;
	/* What p0 .. p<i-1> provide. */
	struct debugfix_earlier earlier = {.names_once = s->names && !strcmp(s->names, "once")};
	for (int i = 0; i < n && r == 0; i++) {
		struct line_map map = {NULL, 0};
		if (lines && debugfix_parse_lines(lines, i, &map) < 0) {
			mtpc_error("%s: malformed", lp);
			r = -1;
			break;
		}
		char *o = xasprintf("%s/p%d.o", s->dir, i), *fo = xasprintf("%s/p%d.fix.o", s->dir, i);
		char *ph = xasprintf("%s/p%d.ph.dwo", s->dir, i), *dwo = xasprintf("%s/p%d.dwo", s->dir, i);
		/* Every object is read for what makes later ones redundant
		 * (debugfix.h); the ones nothing changes in are linked as
		 * they are. */
		r = debugfix_copy(o, fo, sums, &map, &earlier, 1);
		fixed[i] = r == 1;
		if (r >= 0 && access(ph, F_OK) == 0)
			r = debugfix_copy(ph, dwo, sums, &map, NULL, 0);
		r = r < 0 ? -1 : 0;
		debugfix_free_lines(&map);
		free(o);
		free(fo);
		free(ph);
		free(dwo);
	}
	debugfix_earlier_free(&earlier);
	free(cp);
	free(lp);
	free(sums);
	free(lines);
	return r;
}

/* The module compiled unsplit (the command after "--") as the merged
 * object, after a partition could not be compiled or fixed. */
static int merge_unsplit(const struct step *s, const char *why)
{
	if (!s->cmd || !s->cmd[0]) {
		mtpc_error("%s: %s and there is no backend command", s->dir, why);
		return 1;
	}
	mtpc_warn("%s: %s; compiling it unsplit", s->dir, why);
	int st = proc_run(s->cmd, NULL, NULL, NULL);
	return st ? st : take_backend(s);
}

static int merge_step(const struct step *s)
{
	if (!need(s, s->dir, "--dir") || !need(s, s->out, "--out"))
		return 2;
	if (s->names && strcmp(s->names, "once")) {
		mtpc_error("%s: --names takes 'once', not '%s'", s->name, s->names);
		return 2;
	}
	char *np = xasprintf("%s/split.n", s->dir), *text = NULL;
	size_t len;
	int n = -1, r = 1;
	if (mtpc_read_file(np, &text, &len) == 0)
		n = atoi(text);
	free(text);
	free(np);
	if (n <= 0)
		return take_backend(s); /* the split failed: backend.o was built */
	/* A partition that failed to compile left an empty object (slot_step):
	 * the module is compiled unsplit by the command after "--". */
	for (int i = 0; i < n; i++) {
		char *p = xasprintf("%s/p%d.o", s->dir, i);
		long long size = file_size(p);
		free(p);
		if (size <= 0)
			return merge_unsplit(s, "a partition failed to compile");
	}
	int *fixed = xcalloc((size_t)n, sizeof *fixed);
	if (fix_partitions(s, n, fixed) < 0) {
		free(fixed);
		return merge_unsplit(s, "a partition's debug info could not be restored");
	}
	const char *bin = s->llvm_bin ? s->llvm_bin : MTPC_LLVM_BIN_DIR;
	char *tmp1 = xasprintf("%s.r.tmp", s->out), *tmp2 = xasprintf("%s.tmp", s->out);
	char *loc = xasprintf("%s/parts/localize.txt", s->dir), *ren = xasprintf("%s/parts/rename.txt", s->dir);
	/* What the merge must do and no more: ld -r only for several objects,
	 * llvm-objcopy only when the splitter promoted or renamed something. */
	int rewrite = file_size(loc) > 0 || file_size(ren) > 0, st = 0;
	char *merged = n == 1 ? xasprintf("%s/p0%s.o", s->dir, fixed[0] ? ".fix" : "") : xstrdup(tmp1);
	struct strv cmd = {0};
	if (n > 1) {
		strv_addown(&cmd, xasprintf("%s/ld.lld", bin));
		strv_add(&cmd, "-r");
		for (int i = 0; i < n; i++)
			strv_addown(&cmd, xasprintf("%s/p%d%s.o", s->dir, i, fixed[i] ? ".fix" : ""));
		strv_add(&cmd, "-o");
		strv_add(&cmd, tmp1);
		st = proc_run(cmd.v, NULL, NULL, NULL);
		strv_free(&cmd);
	}
	if (st == 0 && rewrite) {
		/* Re-localize only the symbols the splitter promoted... */
		strv_addown(&cmd, xasprintf("%s/llvm-objcopy", bin));
		strv_addown(&cmd, xasprintf("--localize-symbols=%s", loc));
		/* ...and give them back their own names, as in the unsplit object. */
		strv_addown(&cmd, xasprintf("--redefine-syms=%s", ren));
		strv_add(&cmd, merged);
		strv_add(&cmd, tmp2);
		st = proc_run(cmd.v, NULL, NULL, NULL);
		strv_free(&cmd);
		if (st == 0)
			debugfix_group_flags(merged, tmp2);
	}
	if (st == 0) {
		/* The one partition's object is kept: copied, not moved. */
		const char *result = rewrite ? tmp2 : merged;
		r = (n == 1 && !rewrite ? mtpc_copy_file(result, s->out, MTPC_WRITE_IF_CHANGED)
					: move_if_changed(result, s->out)) < 0;
		if (r)
			mtpc_error("cannot write %s: %s", s->out, strerror(errno));
	} else
		mtpc_error("merging the partitions of %s failed", s->dir);
	for (int i = 0; i < n; i++)
		if (fixed[i]) {
			char *fo = xasprintf("%s/p%d.fix.o", s->dir, i);
			unlink(fo);
			free(fo);
		}
	free(fixed);
	if (r == 0)
		record_module(s, -1, n);
	unlink(tmp1);
	unlink(tmp2);
	free(tmp1);
	free(tmp2);
	free(merged);
	free(loc);
	free(ren);
	return r;
}

/* llvm-dwp of every .dwo the link output names (its skeleton CUs give the
 * paths: ours are absolute, those of native objects relative to their
 * DW_AT_comp_dir) into the .dwp, without the string offsets no unit reads
 * (debugfix_package), written only if changed. */
static int dwp_step(const struct step *s)
{
	if (!need(s, s->out, "--out") || !s->cmd || !s->cmd[0])
		return 2;
	const char *bin = s->llvm_bin ? s->llvm_bin : MTPC_LLVM_BIN_DIR;
	char *tmp = xasprintf("%s.tmp", s->out);
	struct strv cmd = {0};
	strv_addown(&cmd, xasprintf("%s/llvm-dwp", bin));
	strv_addl(&cmd, "-e", s->cmd[0], "-o", tmp, NULL);
	unlink(tmp);
	int st = proc_run(cmd.v, NULL, NULL, NULL);
	strv_free(&cmd);
	int r = 1;
	if (st != 0) {
		mtpc_error("llvm-dwp could not pack the .dwo files of %s into %s", s->cmd[0], s->out);
	} else if (file_size(tmp) < 0) {
		/* No skeleton in the output (no -g): llvm-dwp warns, exits 0 and
		 * writes nothing. An empty package keeps the edge up to date, and
		 * a debugger never opens it without a skeleton that needs it. */
		r = mtpc_write_file(s->out, "", 0, MTPC_WRITE_IF_CHANGED) < 0;
		if (r)
			mtpc_error("cannot write %s: %s", s->out, strerror(errno));
	} else if (debugfix_package(tmp) == 0) {
		r = move_if_changed(tmp, s->out) < 0;
	}
	unlink(tmp);
	free(tmp);
	return r;
}

/* Copy the staged shards and imports files of every module to index/,
 * only if changed. */
static int cmp_cstr(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A linker resolving bitcode gives each symbol the most constraining
 * visibility of all its bitcode definitions and references; the final link
 * here sees native objects only. The thin link's regular LTO object may
 * define with default visibility what the bitcode keeps hidden: CFI's jump
 * table entries for promoted statics, which LowerTypeTests declares without
 * the visibility the bitcode gave them. Plain ThinLTO makes them local;
 * linked as they are, they would be exported from a shared library. So give
 * obj's definitions the visibility the modules' symbol tables give them
 * (mtpc-split --print-visibility), only read when obj defines anything with
 * default or protected visibility. A failure costs one warning and leaves
 * obj as lld wrote it. */
static void restore_visibility(const struct step *s, const char *obj)
{
	struct strv defs = {0};
	if (elf_exported_definitions(obj, &defs) < 0 || defs.n == 0 || !s->tool) {
		strv_free(&defs);
		return;
	}
	qsort(defs.v, defs.n, sizeof *defs.v, cmp_cstr);
	char *list = xasprintf("%s/stage/visibility.txt", s->dir);
	char *modules = xasprintf("@%s/modules.list", s->dir);
	struct strv cmd = {0};
	strv_addl(&cmd, s->tool, "--print-visibility", modules, "-o", list, NULL);
	struct buf err = {0}, want[2] = {{0}, {0}}; /* hidden, protected */
	char *text = NULL;
	size_t len;
	int st = proc_run(cmd.v, NULL, NULL, &err);
	strv_free(&cmd);
	if (st != 0 || mtpc_read_file(list, &text, &len) < 0) {
		size_t l = err.s ? strcspn(err.s, "\n") : 0;
		mtpc_warn("cannot read the modules' symbol visibilities (%s exited with %d%s%.*s); "
			  "%s keeps the visibilities lld gave it", s->tool, st, l ? ": " : "", (int)l,
			  l ? err.s : "", REGULAR_LTO_OBJ);
	}
	for (char *line = text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		char *name = strchr(line, ' ');
		if (!name++)
			continue;
		int k = !strncmp(line, "hidden ", 7) ? 0 : !strncmp(line, "protected ", 10) ? 1 : -1;
		if (k >= 0 && bsearch(&name, defs.v, defs.n, sizeof *defs.v, cmp_cstr))
			buf_printf(&want[k], "%s\n", name);
	}
	if (want[0].len || want[1].len) {
		const char *bin = s->llvm_bin ? s->llvm_bin : MTPC_LLVM_BIN_DIR;
		strv_addown(&cmd, xasprintf("%s/llvm-objcopy", bin));
		for (int k = 0; k < 2; k++) {
			if (!want[k].len)
				continue;
			char *f = xasprintf("%s/stage/%s.txt", s->dir, k ? "protected" : "hidden");
			if (mtpc_write_file(f, want[k].s, want[k].len, 0) < 0)
				mtpc_warn("cannot write %s: %s", f, strerror(errno));
			strv_addown(&cmd, xasprintf("--set-symbols-visibility=%s=%s", f, k ? "protected" : "hidden"));
			free(f);
		}
		strv_add(&cmd, obj);
		buf_free(&err);
		if (proc_run(cmd.v, NULL, NULL, &err) != 0)
			mtpc_warn("cannot set the visibilities of %s: %s", obj, err.s ? err.s : "llvm-objcopy failed");
		strv_free(&cmd);
	}
	buf_free(&want[0]);
	buf_free(&want[1]);
	buf_free(&err);
	free(text);
	free(list);
	free(modules);
	strv_free(&defs);
}

static int thinlink_step(const struct step *s)
{
	if (!need(s, s->dir, "--dir") || !s->cmd || !s->cmd[0])
		return 2;
	char *list = xasprintf("%s/modules.list", s->dir), *text;
	size_t len;
	if (mtpc_read_file(list, &text, &len) < 0) {
		mtpc_error("cannot read %s: %s", list, strerror(errno));
		free(list);
		return 1;
	}
	free(list);
	/* lld does not create the directories --thinlto-prefix-replace implies. */
	char *copy = xstrdup(text), *save = NULL;
	for (char *m = strtok_r(copy, "\n", &save); m; m = strtok_r(NULL, "\n", &save)) {
		char *d = xasprintf("%s/stage%s", s->dir, m);
		*strrchr(d, '/') = 0;
		mtpc_mkdir_p(d);
		free(d);
	}
	free(copy);
	char *crashed = xasprintf("%s/" STEPS_THINLINK_CRASHED, s->dir);
	unlink(crashed);
	struct buf err = {0};
	int st = proc_run(s->cmd, s->cwd, NULL, &err);
	/* lld itself may crash on an index-only thin link of inputs its
	 * in-process ThinLTO links fine (lld 19 and 22: an ifunc whose
	 * resolver is external and whose address an unused function takes):
	 * leave a marker, and mtpc-link runs the original link instead. An
	 * ordinary error (an undefined symbol) is the link's own: shown as is. */
	if (st && err.s && (strstr(err.s, "due to signal") || strstr(err.s, "PLEASE submit a bug report"))) {
		mtpc_write_file(crashed, "", 0, 0);
		size_t l = strcspn(err.s, "\n");
		mtpc_warn("the thin link crashed (%.*s)", (int)l, err.s);
	} else if (err.len) {
		fputs(err.s, stderr);
	}
	buf_free(&err);
	free(crashed);
	if (st) {
		free(text);
		return st;
	}
	int r = 0;
	save = NULL;
	for (char *m = strtok_r(text, "\n", &save); m && !r; m = strtok_r(NULL, "\n", &save)) {
		static const char *const ext[] = {".thinlto.bc", ".imports"};
		for (int k = 0; k < 2 && !r; k++) {
			char *from = xasprintf("%s/stage%s%s", s->dir, m, ext[k]);
			char *to = xasprintf("%s/index%s%s", s->dir, m, ext[k]);
			char *d = xstrdup(to);
			*strrchr(d, '/') = 0;
			if (mtpc_mkdir_p(d) < 0) {
				mtpc_error("cannot create %s: %s", d, strerror(errno));
				r = 1;
			} else if (move_if_changed(from, to) < 0) {
				r = 1;
			}
			free(d);
			free(from);
			free(to);
		}
	}
	free(text);
	if (r == 0) {
		char *from = xasprintf("%s/stage/" REGULAR_LTO_OBJ, s->dir);
		char *to = xasprintf("%s/" REGULAR_LTO_OBJ, s->dir);
		if (access(from, F_OK) != 0) {
			mtpc_error("the thin link wrote no %s (ld.lld 19 --lto-obj-path)", from);
			r = 1;
		} else if (restore_visibility(s, from), move_if_changed(from, to) < 0) {
			r = 1;
		}
		free(from);
		free(to);
	}
	return r;
}

static int run_step(struct step *s)
{
	if (!strcmp(s->name, "--split-step"))
		return split_step(s);
	if (!strcmp(s->name, "--merge-step"))
		return merge_step(s);
	if (!strcmp(s->name, "--thinlink-step"))
		return thinlink_step(s);
	if (!strcmp(s->name, "--dwp-step"))
		return dwp_step(s);
	if (!strcmp(s->name, "--node-step"))
		return slurm_node_step(s->status, s->cmd);
	if (!strcmp(s->name, "--run-step")) {
		if (!s->cmd || !s->cmd[0])
			return 2;
		return proc_run(s->cmd, s->cwd, NULL, NULL);
	}
	double sec = 0;
	long long bytes = 0;
	int machine = 0;
	int r = compile_checked(s, &sec, &bytes, &machine);
	if (r == 0 && !strcmp(s->name, "--backend-step")) {
		record_module(s, sec, 0);
		record_rebuild(s);
	}
	if (strcmp(s->name, "--slot-step") || !s->out || !s->cmd || !s->cmd[0])
		return r;
	if (r == 0) {
		record_timing(s, sec, bytes);
		return 0;
	}
	if (machine)
		return r; /* not the partition's fault: no fallback, rerun next time */
	/* The build must not break because of MTPC: leave an empty object (and
	 * .dwo) that tells the merge to compile the module unsplit. */
	mtpc_warn("compiling partition %s failed; its module will be compiled unsplit", s->out);
	int w = mtpc_write_file(s->out, "", 0, MTPC_WRITE_IF_CHANGED);
	if (w == 0 && s->dwo)
		w = mtpc_write_file(s->dwo, "", 0, MTPC_WRITE_IF_CHANGED);
	return w < 0 ? 1 : 0;
}

/* Does step s run its work on this machine? Everything but a node step
 * (already on its node) and a compile that goes to the Slurm allocation
 * (slurm_run takes a token itself when it falls back to a local compile). */
static int runs_here(const struct step *s)
{
	if (!strcmp(s->name, "--node-step"))
		return 0;
	if (!strcmp(s->name, "--backend-step") || !strcmp(s->name, "--slot-step"))
		return !slurm_active();
	return 1;
}

int steps_main(int argc, char **argv)
{
	struct step s;
	if (parse(&s, argc, argv) < 0) {
		strv_free(&s.split_args);
		return 2;
	}
	/* One machine-wide budget of jobs for every link (and compile
	 * launcher) running at once (jobs.h). */
	struct job_token token = {.fd = -1};
	if (runs_here(&s))
		jobs_acquire(&token);
	int r = run_step(&s);
	jobs_release(&token);
	strv_free(&s.split_args);
	return r;
}
