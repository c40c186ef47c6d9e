/* emit.c: see emit.h. */
#define _POSIX_C_SOURCE 200809L /* CLOCK_THREAD_CPUTIME_ID, mkstemp */
#include "emit.h"
#include "buf.h"
#include "llvm_shim.h"
#include "ptrmap.h"
#include "util.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/BitReader.h>
#include <llvm-c/BitWriter.h>
#include <llvm-c/Comdat.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct shared {
	const char *bc;
	size_t len;
	const struct module_info *mi;
	const struct split_plan *plan;
	int verify;
	int debug; /* EMIT_* */
	struct emitted *out;
	char **errors; /* per partition */
	int next;
	pthread_mutex_t lock;
};

void emit_capture_error(LLVMDiagnosticInfoRef di, void *ctx)
{
	char **msg = ctx;
	if (LLVMGetDiagInfoSeverity(di) != LLVMDSError || *msg)
		return;
	char *d = LLVMGetDiagInfoDescription(di);
	*msg = xstrdup(d);
	LLVMDisposeMessage(d);
}

static void make_hidden_local_def(LLVMValueRef v)
{
	LLVMSetLinkage(v, LLVMExternalLinkage);
	LLVMSetVisibility(v, LLVMHiddenVisibility);
	mtpc_set_dso_local(v, 1);
}

/* Replace an alias or ifunc that this partition does not define by a plain
 * declaration of the same name, and erase the original at once: the module
 * must stay valid at every step, because loading the rest of a lazily read
 * module with debug info runs the verifier (UpgradeDebugInfo) and aborts on a
 * broken one. */
static void erase_alias_or_ifunc(LLVMValueRef g, int is_ifunc)
{
	if (is_ifunc)
		LLVMEraseGlobalIFunc(g);
	else
		mtpc_erase_alias(g);
}

static LLVMValueRef replace_with_declaration(LLVMModuleRef m, LLVMValueRef g, int is_ifunc)
{
	size_t len;
	char *name = xstrdup(LLVMGetValueName2(g, &len));
	LLVMTypeRef vt = LLVMGlobalGetValueType(g);
	LLVMVisibility vis = LLVMGetVisibility(g);
	int dso = mtpc_is_dso_local(g);
	int tls = !is_ifunc && LLVMGetTypeKind(vt) != LLVMFunctionTypeKind && LLVMIsThreadLocal(g);
	LLVMSetValueName2(g, "", 0);
	LLVMValueRef d;
	if (LLVMGetTypeKind(vt) == LLVMFunctionTypeKind) {
		d = LLVMAddFunction(m, name, vt);
	} else {
		d = LLVMAddGlobalInAddressSpace(m, vt, name, LLVMGetPointerAddressSpace(LLVMTypeOf(g)));
		if (tls)
			LLVMSetThreadLocal(d, 1);
	}
	LLVMSetVisibility(d, vis);
	mtpc_set_dso_local(d, dso);
	LLVMReplaceAllUsesWith(g, d);
	erase_alias_or_ifunc(g, is_ifunc);
	free(name);
	return d;
}

/* A definition another object may replace at link time (weak, linkonce,
 * common) is interposable to LLVM, which then never decides that its
 * address differs from another global's. A plain declaration of it would be
 * a distinct, non-interposable object, a fact the unsplit module does not
 * have. extern_weak is the one declaration linkage LLVM treats as
 * interposable; it also lets the address be null, which is a fact less,
 * never one more (the merged object defines the symbol). */
static LLVMValueRef keep_interposable(const struct sym *s, LLVMValueRef d)
{
	if (s->flags & SF_INTERPOSABLE)
		LLVMSetLinkage(d, LLVMExternalWeakLinkage);
	return d;
}

/* Returns the value that now carries the symbol's name. */
static LLVMValueRef make_declaration(LLVMModuleRef m, const struct sym *s, LLVMValueRef v)
{
	switch (s->kind) {
	case SYM_FUNC:
		mtpc_delete_body(v);
		LLVMSetComdat(v, NULL);
		break;
	case SYM_VAR:
		LLVMSetInitializer(v, NULL);
		LLVMSetComdat(v, NULL);
		LLVMGlobalClearMetadata(v);
		LLVMSetLinkage(v, LLVMExternalLinkage);
		break;
	case SYM_ALIAS:
	case SYM_IFUNC:
		return keep_interposable(s, replace_with_declaration(m, v, s->kind == SYM_IFUNC));
	}
	return keep_interposable(s, v);
}

/* Keep the entries of an llvm.used-style array (or ctor/dtor array, whose
 * entries are {priority, function, key}) whose symbol this partition defines,
 * in their original order. */
static void filter_special_array(LLVMModuleRef m, const char *name, int ctor, const ptrmap *index,
				 const unsigned char *member)
{
	LLVMValueRef g = LLVMGetNamedGlobal(m, name);
	if (!g || LLVMIsDeclaration(g))
		return;
	LLVMValueRef init = LLVMGetInitializer(g);
	int n = LLVMGetNumOperands(init);
	LLVMValueRef *keep = xmalloc((n + 1) * sizeof *keep);
	int k = 0;
	for (int i = 0; i < n; i++) {
		LLVMValueRef e = LLVMGetOperand(init, i);
		LLVMValueRef gv = strip_to_global(ctor ? LLVMGetOperand(e, 1) : e);
		int s = gv ? ptrmap_get(index, gv, -1) : -1;
		if (s >= 0 && (ctor ? member[s] == M_OWN : member[s] >= M_CARRY && member[s] != M_COPY))
			keep[k++] = e;
	}
	if (k == n) {
		free(keep);
		return;
	}
	LLVMTypeRef elt = LLVMGetElementType(LLVMTypeOf(init));
	char *section = xstrdup(LLVMGetSection(g) ? LLVMGetSection(g) : "");
	LLVMDeleteGlobal(g);
	if (k) {
		LLVMValueRef arr = LLVMConstArray2(elt, keep, k);
		LLVMValueRef ng = LLVMAddGlobal(m, LLVMTypeOf(arr), name);
		LLVMSetInitializer(ng, arr);
		LLVMSetLinkage(ng, LLVMAppendingLinkage);
		if (*section)
			LLVMSetSection(ng, section);
	}
	free(section);
	free(keep);
}

/* Module asm belongs to one partition, but for its `.lto_set_conditional`
 * lines (asm_set_line), which every partition keeps. */
static void keep_asm_set_lines(LLVMModuleRef m)
{
	size_t len;
	const char *s = LLVMGetModuleInlineAsm(m, &len);
	struct buf keep = {0};
	for (size_t line = 0, end; s && line < len; line = end + 1) {
		const char *nl = memchr(s + line, '\n', len - line);
		end = nl ? (size_t)(nl - s) : len;
		if (asm_set_line(s + line, end - line))
			buf_printf(&keep, "%.*s\n", (int)(end - line), s + line);
	}
	LLVMSetModuleInlineAsm2(m, keep.s ? keep.s : "", keep.len);
	buf_free(&keep);
}

/* Turn the full module m into partition p. Returns NULL or an error (heap). */
static char *transform(LLVMModuleRef m, const struct module_info *mi, const struct split_plan *plan, int p)
{
	LLVMValueRef *vals;
	int n = sym_enumerate(m, &vals);
	if (n != mi->nsyms) {
		free(vals);
		return xasprintf("module enumerates differently (%d vs %d globals)", n, mi->nsyms);
	}
	for (int i = 0; i < n; i++) {
		size_t len;
		const char *nm = LLVMGetValueName2(vals[i], &len);
		const char *want = mi->syms[i].orig_name ? mi->syms[i].orig_name : mi->syms[i].name;
		if (strcmp(nm ? nm : "", want) != 0) {
			free(vals);
			return xasprintf("module enumerates differently at global %d ('%s' vs '%s')", i,
					 nm ? nm : "", want);
		}
	}
	for (int i = 0; i < n; i++)
		if (mi->syms[i].orig_name)
			LLVMSetValueName2(vals[i], mi->syms[i].name, strlen(mi->syms[i].name));
	const unsigned char *member = plan->member[p];
	/* The module was opened lazily: load the bodies this partition keeps
	 * before anything is replaced, so their references resolve to the
	 * original globals. Bodies it drops are never read. */
	for (int i = 0; i < n; i++) {
		const struct sym *s = &mi->syms[i];
		char *err = NULL;
		if (s->kind == SYM_FUNC && s->role != ROLE_DECL && member[i] >= M_CARRY &&
		    mtpc_materialize(vals[i], &err) < 0) {
			char *r = xasprintf("cannot load %s: %s", s->name, err);
			free(err);
			free(vals);
			return r;
		}
	}
	/* Debug info of the variables this partition defines, before any of
	 * them becomes a declaration (which drops its !dbg). */
	LLVMValueRef *defs = xmalloc((n + 1) * sizeof *defs);
	unsigned ndefs = 0;
	for (int i = 0; i < n; i++)
		if (mi->syms[i].kind == SYM_VAR && mi->syms[i].role != ROLE_DECL &&
		    (member[i] == M_OWN || member[i] == M_CARRY))
			defs[ndefs++] = vals[i];
	mtpc_restrict_cu_lists(m, defs, ndefs, p == 0);
	free(defs);
	ptrmap index;
	ptrmap_init(&index);
	for (int i = 0; i < n; i++)
		ptrmap_put(&index, vals[i], i);
	/* Special arrays first, while every symbol still has its index. */
	filter_special_array(m, "llvm.used", 0, &index, member);
	filter_special_array(m, "llvm.compiler.used", 0, &index, member);
	filter_special_array(m, "llvm.global_ctors", 1, &index, member);
	filter_special_array(m, "llvm.global_dtors", 1, &index, member);
	ptrmap_free(&index);
	for (int i = 0; i < n; i++) {
		const struct sym *s = &mi->syms[i];
		LLVMValueRef v = vals[i];
		if (s->role == ROLE_SPECIAL) {
			/* Other llvm.* globals (annotations, embedded bitcode): partition 0 only. */
			if (p != 0 && strcmp(s->name, "llvm.used") && strcmp(s->name, "llvm.compiler.used") &&
			    strcmp(s->name, "llvm.global_ctors") && strcmp(s->name, "llvm.global_dtors") &&
			    LLVMGetNamedGlobal(m, s->name) == v)
				LLVMDeleteGlobal(v);
			continue;
		}
		if (s->role == ROLE_DECL)
			continue;
		const char *promoted = plan->new_name[i];
		if (promoted)
			LLVMSetValueName2(v, promoted, strlen(promoted));
		switch ((enum member)member[i]) {
		case M_OWN:
			if (promoted)
				make_hidden_local_def(v);
			else if (plan->keep[i] && s->linkage == LLVMLinkOnceODRLinkage)
				LLVMSetLinkage(v, LLVMWeakODRLinkage);
			else if (plan->keep[i] && s->linkage == LLVMLinkOnceAnyLinkage)
				LLVMSetLinkage(v, LLVMWeakAnyLinkage);
			break;
		case M_CARRY:
			if (promoted && s->kind == SYM_FUNC) {
				/* A static several partitions carry (partition.c). */
				LLVMSetLinkage(v, LLVMLinkOnceODRLinkage);
				LLVMSetVisibility(v, LLVMHiddenVisibility);
				mtpc_set_dso_local(v, 1);
				LLVMSetComdat(v, LLVMGetOrInsertComdat(m, promoted));
			}
			break;
		case M_COPY:
			LLVMSetLinkage(v, LLVMAvailableExternallyLinkage);
			LLVMSetComdat(v, NULL);
			if (promoted) {
				LLVMSetVisibility(v, LLVMHiddenVisibility);
				mtpc_set_dso_local(v, 1);
			}
			break;
		case M_DECL:
			v = make_declaration(m, s, v);
			if (promoted) {
				LLVMSetVisibility(v, LLVMHiddenVisibility);
				mtpc_set_dso_local(v, 1);
			}
			break;
		case M_NONE:
			if (s->kind == SYM_ALIAS || s->kind == SYM_IFUNC) {
				if (LLVMGetFirstUse(v))
					keep_interposable(s, replace_with_declaration(m, v, s->kind == SYM_IFUNC));
				else
					erase_alias_or_ifunc(v, s->kind == SYM_IFUNC);
			} else {
				make_declaration(m, s, v);
			}
			break;
		}
	}
	free(vals);
	char *merr = NULL;
	if (mtpc_materialize_all(m, &merr) < 0) {
		char *r = xasprintf("cannot load the module: %s", merr);
		free(merr);
		return r;
	}
	if (p != plan->asm_partition)
		keep_asm_set_lines(m);
	LLVMPassBuilderOptionsRef pbo = LLVMCreatePassBuilderOptions();
	LLVMErrorRef err = LLVMRunPasses(m, "globaldce", NULL, pbo);
	LLVMDisposePassBuilderOptions(pbo);
	if (err) {
		char *msg = LLVMGetErrorMessage(err);
		char *r = xasprintf("globaldce: %s", msg);
		LLVMDisposeErrorMessage(msg);
		return r;
	}
	mtpc_sort_declarations(m);
	return NULL;
}

/* CPU seconds of the calling thread: unlike wall time, not stretched by
 * the other threads (or processes) that share the cores. */
static double thread_cpu_now(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) < 0)
		return 0;
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* After transform(): verify m, take the debug-info maps EMIT_* asks for, and
 * serialize it into out. Returns NULL or an error (heap). */
static char *finish_partition(LLVMModuleRef m, int p, int verify, int debug, struct emitted *out)
{
	if (verify) {
		char *msg = NULL, *err = NULL;
		if (LLVMVerifyModule(m, LLVMReturnStatusAction, &msg)) {
			char *nl = strchr(msg, '\n');
			if (nl)
				*nl = 0;
			err = xasprintf("partition %d fails the LLVM verifier: %s", p, msg);
		}
		LLVMDisposeMessage(msg);
		if (err)
			return err;
	}
	if (debug & EMIT_PLACEHOLDER_CHECKSUMS) {
		char *e = NULL;
		out->checksums = mtpc_placeholder_checksums(m, &e);
		if (!out->checksums) {
			char *r = xasprintf("partition %d: placeholder checksums: %s", p, e ? e : "failed");
			free(e);
			return r;
		}
	}
	if (debug & EMIT_VIRTUAL_LINES) {
		char *e = NULL;
		out->lines = mtpc_virtual_lines(m, &e);
		if (!out->lines) {
			char *r = xasprintf("partition %d: virtual lines: %s", p, e ? e : "failed");
			free(e);
			return r;
		}
	}
	LLVMMemoryBufferRef ob = LLVMWriteBitcodeToMemoryBuffer(m);
	out->len = LLVMGetBufferSize(ob);
	out->data = xmalloc(out->len);
	memcpy(out->data, LLVMGetBufferStart(ob), out->len);
	LLVMDisposeMemoryBuffer(ob);
	return NULL;
}

static char *build_partition(struct shared *sh, int p, struct emitted *out)
{
	double t0 = mtpc_now(), c0 = thread_cpu_now();
	char *diag = NULL, *err = NULL;
	LLVMContextRef ctx = LLVMContextCreate();
	LLVMContextSetDiagnosticHandler(ctx, emit_capture_error, &diag);
	LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRange(sh->bc, sh->len, "input", 0);
	LLVMModuleRef m = NULL;
	/* The lazy module takes the (non-owning) buffer object over. */
	if (LLVMGetBitcodeModuleInContext2(ctx, buf, &m)) {
		err = xasprintf("cannot re-read the module: %s", diag ? diag : "unknown error");
		LLVMDisposeMemoryBuffer(buf);
		goto done;
	}
	err = transform(m, sh->mi, sh->plan, p);
	if (!err)
		err = finish_partition(m, p, sh->verify, sh->debug, out);
done:
	if (m)
		LLVMDisposeModule(m);
	LLVMContextDispose(ctx);
	free(diag);
	out->seconds = mtpc_now() - t0;
	out->cpu_seconds = thread_cpu_now() - c0;
	return err;
}

static void *worker(void *arg)
{
	struct shared *sh = arg;
	for (;;) {
		pthread_mutex_lock(&sh->lock);
		int p = sh->next++;
		pthread_mutex_unlock(&sh->lock);
		if (p >= sh->plan->n)
			return NULL;
		sh->errors[p] = build_partition(sh, p, &sh->out[p]);
	}
}

/* The end of either emission: *error = the first partition's error, if any
 * (the others freed, with errors itself), and then nothing of out[] kept.
 * Returns rc, or -1 after an error. */
static int finish_emission(char **errors, struct emitted *out, int n, int rc, char **error)
{
	*error = NULL;
	for (int p = 0; p < n; p++) {
		if (errors[p] && !*error)
			*error = errors[p];
		else
			free(errors[p]);
	}
	free(errors);
	if (!*error)
		return rc;
	for (int p = 0; p < n; p++) {
		free(out[p].data);
		free(out[p].checksums);
		free(out[p].lines);
		out[p].data = out[p].checksums = out[p].lines = NULL;
	}
	return -1;
}

int emit_partitions(const char *bc, size_t len, const struct module_info *mi, const struct split_plan *plan,
		    int jobs, int verify, int debug, struct emitted *out, struct emit_run *run, char **error)
{
	struct shared sh = {bc, len, mi, plan, verify, debug, out,
			    xcalloc(plan->n, sizeof(char *)), 0, PTHREAD_MUTEX_INITIALIZER};
	memset(out, 0, plan->n * sizeof *out);
	if (jobs < 1)
		jobs = 1;
	if (jobs > plan->n)
		jobs = plan->n;
	pthread_t *th = xmalloc(jobs * sizeof *th);
	int started = 0;
	for (int t = 1; t < jobs; t++)
		if (pthread_create(&th[t], NULL, worker, &sh) == 0)
			started = t;
		else
			break;
	worker(&sh);
	for (int t = 1; t <= started; t++)
		pthread_join(th[t], NULL);
	free(th);
	*run = (struct emit_run){started + 1, 0, 0};
	return finish_emission(sh.errors, out, plan->n, started + 1, error);
}

/* A partition built in a child process: the record the child leaves at the
 * start of its temporary file, followed by the bytes it counts. */
struct child_record {
	size_t len, checksums_len, lines_len, error_len;
};

static int write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t w = write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

static char *read_bytes(FILE *f, size_t n)
{
	char *s = xmalloc(n + 1);
	if (fread(s, 1, n, f) != n) {
		free(s);
		return NULL;
	}
	s[n] = 0;
	return s;
}

/* What a child copies as definitions (clone_defines). */
struct clone_filter {
	const struct module_info *mi;
	const unsigned char *member; /* the partition's plan->member[p] */
	ptrmap index;                /* global of m -> its symbol index */
};

/* mtpc_clone_module's filter: what the partition defines, carries or copies,
 * and every alias, ifunc and llvm.* array (transform() decides about those,
 * and they must keep their place in the module's order). */
static int clone_defines(LLVMValueRef g, void *arg)
{
	struct clone_filter *cf = arg;
	int i = ptrmap_get(&cf->index, g, -1);
	if (i < 0)
		return 1;
	const struct sym *s = &cf->mi->syms[i];
	if (s->kind == SYM_ALIAS || s->kind == SYM_IFUNC || s->role == ROLE_SPECIAL)
		return 1;
	return cf->member[i] >= M_CARRY;
}

/* In the child: copy from m what partition p defines or copies (the rest
 * become declarations), make that partition of the copy and leave the
 * record in fd. Copying a part touches far fewer of the pages the child
 * shares with the parent than deleting the rest of m would, and each page
 * written is a page copied. Never returns: _exit runs no destructor or
 * atexit handler, which are the parent's business (and would free, page by
 * page, what the child's exit drops at once). */
static void child_build(LLVMModuleRef m, const struct module_info *mi, const struct split_plan *plan, int p,
			int verify, int debug, int fd)
{
	struct emitted out = {0};
	struct clone_filter cf = {mi, plan->member[p], {0}};
	LLVMValueRef *vals;
	int n = sym_enumerate(m, &vals);
	ptrmap_init(&cf.index);
	for (int i = 0; i < n; i++)
		ptrmap_put(&cf.index, vals[i], i);
	LLVMModuleRef part = mtpc_clone_module(m, clone_defines, &cf);
	char *err = transform(part, mi, plan, p);
	if (!err)
		err = finish_partition(part, p, verify, debug, &out);
	if (err)
		out.len = 0;
	struct child_record r = {out.len, out.checksums ? strlen(out.checksums) : 0,
				 out.lines ? strlen(out.lines) : 0, err ? strlen(err) : 0};
	int bad = write_all(fd, &r, sizeof r) < 0 || write_all(fd, out.data, r.len) < 0 ||
		  write_all(fd, out.checksums, r.checksums_len) < 0 || write_all(fd, out.lines, r.lines_len) < 0 ||
		  write_all(fd, err, r.error_len) < 0;
	_exit(bad ? 2 : 0);
}

/* In the parent: read what the child of partition p left in f (its exit
 * status: wstatus). Returns NULL or an error (heap). */
static char *collect_child(FILE *f, int wstatus, int p, int debug, struct emitted *out)
{
	if (!WIFEXITED(wstatus))
		return xasprintf("partition %d: its process died of signal %d", p, WTERMSIG(wstatus));
	struct child_record r;
	rewind(f);
	if (WEXITSTATUS(wstatus) != 0 || fread(&r, sizeof r, 1, f) != 1)
		return xasprintf("partition %d: its process could not write its result (exit status %d)", p,
				 WEXITSTATUS(wstatus));
	out->len = r.len;
	out->data = read_bytes(f, r.len);
	if (debug & EMIT_PLACEHOLDER_CHECKSUMS)
		out->checksums = read_bytes(f, r.checksums_len);
	else
		fseek(f, (long)r.checksums_len, SEEK_CUR);
	if (debug & EMIT_VIRTUAL_LINES)
		out->lines = read_bytes(f, r.lines_len);
	else
		fseek(f, (long)r.lines_len, SEEK_CUR);
	char *err = read_bytes(f, r.error_len);
	if (!err)
		return xasprintf("partition %d: its result is truncated", p);
	if (r.error_len)
		return err;
	free(err);
	if (!out->data || ((debug & EMIT_PLACEHOLDER_CHECKSUMS) && !out->checksums) ||
	    ((debug & EMIT_VIRTUAL_LINES) && !out->lines))
		return xasprintf("partition %d: its result is truncated", p);
	return NULL;
}

/* User + system CPU seconds of the children reaped so far. */
static double children_cpu(void)
{
	struct rusage ru;
	if (getrusage(RUSAGE_CHILDREN, &ru) < 0)
		return 0;
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
}

/* A temporary file in dir, already unlinked (the disk of the outputs, not
 * /tmp's); NULL with errno set on failure. */
static FILE *unlinked_temp(const char *dir)
{
	char *path = xasprintf("%s/.emit-XXXXXX", dir);
	int fd = mkstemp(path);
	FILE *f = NULL;
	if (fd >= 0) {
		unlink(path);
		f = fdopen(fd, "w+b");
		if (!f)
			close(fd);
	}
	free(path);
	return f;
}

int emit_partitions_forked(LLVMModuleRef m, const struct module_info *mi, const struct split_plan *plan,
			   int jobs, int verify, int debug, const char *tmpdir, struct emitted *out,
			   struct emit_run *run, char **error)
{
	int n = plan->n;
	memset(out, 0, n * sizeof *out);
	if (jobs < 1)
		jobs = 1;
	if (jobs > n)
		jobs = n;
	*run = (struct emit_run){jobs, 1, 0};
	FILE **files = xcalloc(n, sizeof *files);
	pid_t *pids = xcalloc(n, sizeof *pids);
	double *started = xcalloc(n, sizeof *started);
	char **errors = xcalloc(n, sizeof *errors);
	fflush(NULL); /* nothing buffered is written twice */
	int next = 0, running = 0;
	double reaped_cpu = children_cpu();
	while (next < n || running) {
		while (next < n && running < jobs) {
			int p = next++;
			files[p] = unlinked_temp(tmpdir);
			if (!files[p]) {
				errors[p] = xasprintf("partition %d: cannot create a temporary file: %s", p,
						      strerror(errno));
				continue;
			}
			started[p] = mtpc_now();
			double f0 = mtpc_now();
			pids[p] = fork();
			if (pids[p] > 0)
				run->serial_seconds += mtpc_now() - f0;
			if (pids[p] == 0)
				child_build(m, mi, plan, p, verify, debug, fileno(files[p]));
			if (pids[p] < 0) {
				int e = errno;
				if (running > 0 && (e == EAGAIN || e == ENOMEM)) {
					/* Out of processes or memory for now (a pids
					 * limit, say): this partition waits for a
					 * running one to end, and fewer run at once. */
					fclose(files[p]);
					files[p] = NULL;
					next--;
					jobs = running;
					break;
				}
				errors[p] = xasprintf("partition %d: cannot fork: %s", p, strerror(e));
				continue;
			}
			running++;
		}
		if (!running)
			break;
		int ws;
		pid_t pid = waitpid(-1, &ws, 0);
		if (pid < 0) {
			if (errno == EINTR)
				continue;
			break; /* no child left: cannot happen while running > 0 */
		}
		int p = 0;
		while (p < n && pids[p] != pid)
			p++;
		if (p == n)
			continue; /* not ours */
		running--;
		out[p].seconds = mtpc_now() - started[p];
		/* The children reaped so far, less those before: this one. */
		double c = children_cpu();
		out[p].cpu_seconds = c - reaped_cpu;
		reaped_cpu = c;
		errors[p] = collect_child(files[p], ws, p, debug, &out[p]);
	}
	for (int p = 0; p < n; p++)
		if (files[p])
			fclose(files[p]);
	free(files);
	free(pids);
	free(started);
	return finish_emission(errors, out, n, jobs, error);
}
