/* emit.c: see emit.h. */
#define _POSIX_C_SOURCE 200809L /* CLOCK_THREAD_CPUTIME_ID */
#include "emit.h"
#include "llvm_shim.h"
#include "ptrmap.h"
#include "util.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/BitReader.h>
#include <llvm-c/BitWriter.h>
#include <llvm-c/Comdat.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
		return replace_with_declaration(m, v, s->kind == SYM_IFUNC);
	}
	return v;
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
					replace_with_declaration(m, v, s->kind == SYM_IFUNC);
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
		LLVMSetModuleInlineAsm2(m, "", 0);
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
	if (err)
		goto done;
	if (sh->verify) {
		char *msg = NULL;
		if (LLVMVerifyModule(m, LLVMReturnStatusAction, &msg)) {
			char *nl = strchr(msg, '\n');
			if (nl)
				*nl = 0;
			err = xasprintf("partition %d fails the LLVM verifier: %s", p, msg);
		}
		LLVMDisposeMessage(msg);
		if (err)
			goto done;
	}
	if (sh->debug & EMIT_PLACEHOLDER_CHECKSUMS) {
		char *e = NULL;
		out->checksums = mtpc_placeholder_checksums(m, &e);
		if (!out->checksums) {
			err = xasprintf("partition %d: placeholder checksums: %s", p, e ? e : "failed");
			free(e);
			goto done;
		}
	}
	if (sh->debug & EMIT_VIRTUAL_LINES) {
		char *e = NULL;
		out->lines = mtpc_virtual_lines(m, &e);
		if (!out->lines) {
			err = xasprintf("partition %d: virtual lines: %s", p, e ? e : "failed");
			free(e);
			goto done;
		}
	}
	LLVMMemoryBufferRef ob = LLVMWriteBitcodeToMemoryBuffer(m);
	out->len = LLVMGetBufferSize(ob);
	out->data = xmalloc(out->len);
	memcpy(out->data, LLVMGetBufferStart(ob), out->len);
	LLVMDisposeMemoryBuffer(ob);
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

int emit_partitions(const char *bc, size_t len, const struct module_info *mi, const struct split_plan *plan,
		    int jobs, int verify, int debug, struct emitted *out, char **error)
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
	int rc = started + 1;
	*error = NULL;
	for (int p = 0; p < plan->n; p++) {
		if (sh.errors[p] && !*error) {
			*error = sh.errors[p];
			rc = -1;
		} else {
			free(sh.errors[p]);
		}
	}
	free(sh.errors);
	if (rc < 0)
		for (int p = 0; p < plan->n; p++) {
			free(out[p].data);
			free(out[p].checksums);
			free(out[p].lines);
			out[p].data = NULL;
			out[p].checksums = NULL;
			out[p].lines = NULL;
		}
	return rc;
}
