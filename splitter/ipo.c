/* ipo.c: whole-module interprocedural passes before the split (ipo.h). */
#include "ipo.h"

#include <stdlib.h>
#include <string.h>

#include <llvm-c/Error.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "util.h"

/* From the ThinLTO backend's module simplification: GlobalOpt, DeadArgElim
 * and FunctionAttrs (together about 0.1 s on SQLite's module). Not IPSCCP
 * (0.26 s there) nor called-value propagation (0.17 s): the one IPSCCP
 * result the partitions measurably lose is done by const_args() below, in
 * a few milliseconds. */
const char ipo_pipeline[] = "globalopt,deadargelim,cgscc(function-attrs),rpo-function-attrs";

static int has_attr(LLVMValueRef f, unsigned index, const char *name)
{
	unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
	return LLVMGetEnumAttributeAtIndex(f, index, kind) != NULL;
}

/* Whether parameter i of f may be replaced by the value its callers pass:
 * not when the callee sees a copy (byval, inalloca, preallocated) or the
 * value has rules of its own (swifterror). */
static int param_replaceable(LLVMValueRef f, unsigned i)
{
	static const char *const copies[] = {"byval", "inalloca", "preallocated", "swifterror"};
	for (size_t k = 0; k < sizeof copies / sizeof *copies; k++)
		if (has_attr(f, i + 1, copies[k]))
			return 0;
	return 1;
}

/* A parameter of an internal function that receives the same constant at
 * every call site becomes that constant in the body: IPSCCP's main result,
 * e.g. a helper always called with one string literal, whose strlen and
 * slow path then fold, so its inline cost fits where the callers are. Only
 * functions every use of which is a direct call or invoke: an address taken
 * lets unknown callers pass anything. */
static void const_args(LLVMModuleRef m)
{
	LLVMValueRef bad = (LLVMValueRef)&bad; /* "callers disagree" marker */
	for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
		LLVMLinkage l = LLVMGetLinkage(f);
		unsigned n = LLVMCountParams(f);
		if (LLVMIsDeclaration(f) || (l != LLVMInternalLinkage && l != LLVMPrivateLinkage) || !n ||
		    LLVMIsFunctionVarArg(LLVMGlobalGetValueType(f)) ||
		    has_attr(f, LLVMAttributeFunctionIndex, "naked") ||
		    has_attr(f, LLVMAttributeFunctionIndex, "optnone") || !LLVMGetFirstUse(f))
			continue;
		LLVMValueRef *seen = xcalloc(n, sizeof *seen);
		int direct = 1;
		for (LLVMUseRef u = LLVMGetFirstUse(f); u && direct; u = LLVMGetNextUse(u)) {
			LLVMValueRef call = LLVMGetUser(u);
			if (!(LLVMIsACallInst(call) || LLVMIsAInvokeInst(call)) || LLVMGetCalledValue(call) != f ||
			    LLVMGetNumArgOperands(call) != n) {
				direct = 0;
				break;
			}
			for (unsigned i = 0; i < n; i++) {
				LLVMValueRef a = LLVMGetOperand(call, i);
				if (a == f) /* f passed to itself: an address use */
					direct = 0;
				else if (!seen[i])
					seen[i] = a;
				else if (seen[i] != a)
					seen[i] = bad;
			}
		}
		for (unsigned i = 0; direct && i < n; i++) {
			LLVMValueRef p = LLVMGetParam(f, i), k = seen[i];
			if (k && k != bad && LLVMIsConstant(k) && !LLVMIsUndef(k) && !LLVMIsPoison(k) &&
			    LLVMTypeOf(k) == LLVMTypeOf(p) && param_replaceable(f, i))
				LLVMReplaceAllUsesWith(p, k);
		}
		free(seen);
	}
}

int ipo_run(LLVMModuleRef m, char **error)
{
	const_args(m);
	LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
	LLVMErrorRef e = LLVMRunPasses(m, ipo_pipeline, NULL, po);
	LLVMDisposePassBuilderOptions(po);
	if (e) {
		char *msg = LLVMGetErrorMessage(e);
		*error = xasprintf("interprocedural passes failed: %s", msg);
		LLVMDisposeErrorMessage(msg);
		return -1;
	}
	return 0;
}
