/* ipo.c: whole-module interprocedural passes before the split (ipo.h). */
#include "ipo.h"

#include <llvm-c/Error.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "util.h"

/* What the module simplification pipeline of the ThinLTO backend runs on
 * the whole module before its inliner, minus function specialization
 * (ipsccp<no-func-spec>): clones would be new symbols, and the slots'
 * own IPSCCP specializes within each partition as the -O level asks. */
const char ipo_pipeline[] = "ipsccp<no-func-spec>,called-value-propagation,globalopt,deadargelim,"
			    "cgscc(function-attrs),rpo-function-attrs";

int ipo_run(LLVMModuleRef m, char **error)
{
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
