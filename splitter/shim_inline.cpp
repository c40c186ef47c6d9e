// shim_inline.cpp: the join's inliner (mtpc_join_inline, called by join.c),
// which the LLVM-C API's textual pipelines cannot express; llvm_shim.h
// says why.
#include "llvm_shim.h"
#include "shim_int.h"

#include <llvm/IR/Module.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Passes/StandardInstrumentations.h>
#include <llvm/Transforms/IPO/Inliner.h>

#include <string>

using namespace llvm;

/* One SCC of the join's inliner: the inliner, then the clean-up of the
 * SCC's functions only when it inlined something there (it returns
 * PreservedAnalyses::all() otherwise), as the CGSCC pass manager would run
 * the two passes in sequence. */
namespace {
struct JoinInlineSCC : PassInfoMixin<JoinInlineSCC> {
	InlinerPass inliner;
	CGSCCToFunctionPassAdaptor cleanup;

	explicit JoinInlineSCC(CGSCCToFunctionPassAdaptor c) : cleanup(std::move(c)) {}

	PreservedAnalyses run(LazyCallGraph::SCC &C, CGSCCAnalysisManager &AM, LazyCallGraph &CG,
			      CGSCCUpdateResult &UR)
	{
		PreservedAnalyses pa = inliner.run(C, AM, CG, UR);
		if (pa.areAllPreserved())
			return pa;
		if (UR.InvalidatedSCCs.count(&C))
			return pa;
		LazyCallGraph::SCC *cur = UR.UpdatedC ? UR.UpdatedC : &C;
		AM.invalidate(*cur, pa);
		pa.intersect(cleanup.run(*cur, AM, CG, UR));
		return pa;
	}
};
} // namespace

extern "C" int mtpc_join_inline(LLVMModuleRef m, const char *cleanup, char **error)
{
	Module &M = *unwrap(m);
	LoopAnalysisManager LAM;
	FunctionAnalysisManager FAM;
	CGSCCAnalysisManager CGAM;
	ModuleAnalysisManager MAM;
	PassInstrumentationCallbacks PIC;
	StandardInstrumentations SI(M.getContext(), false);
	SI.registerCallbacks(PIC, &MAM);
	PassBuilder PB(nullptr, PipelineTuningOptions(), std::nullopt, &PIC);
	PB.registerModuleAnalyses(MAM);
	PB.registerCGSCCAnalyses(CGAM);
	PB.registerFunctionAnalyses(FAM);
	PB.registerLoopAnalyses(LAM);
	PB.crossRegisterProxies(LAM, FAM, CGAM, MAM);
	FunctionPassManager FPM;
	if (Error e = PB.parsePassPipeline(FPM, cleanup))
		return fail(error, "join inliner: " + toString(std::move(e)));
	ModulePassManager MPM;
	MPM.addPass(createModuleToPostOrderCGSCCPassAdaptor(
		JoinInlineSCC(createCGSCCToFunctionPassAdaptor(std::move(FPM)))));
	MPM.run(M, MAM);
	return 0;
}
