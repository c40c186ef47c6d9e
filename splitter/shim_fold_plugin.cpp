// shim_fold_plugin.cpp: mtpc-fold.so, the pass plugin a plain compile's
// partitions load (clang -fpass-plugin=, mtpc-compile passes it). The C API
// gap it fills: running code of our own inside clang's pipeline, at its end
// and before code generation; the LLVM-C API can run pipelines it is given
// but cannot add a pass to the one clang builds. All it does is call
// mtpc_fold_marked() (fold.c, LLVM-C) on the module there; fold.h says why.
#include "fold.h"

#include <llvm/Config/llvm-config.h>
#include <llvm/IR/Module.h>
#include <llvm/Passes/PassBuilder.h>
#if LLVM_VERSION_MAJOR >= 22
#include <llvm/Plugins/PassPlugin.h>
#else
#include <llvm/Passes/PassPlugin.h>
#endif

using namespace llvm;

namespace {
struct FoldMarked : PassInfoMixin<FoldMarked> {
	PreservedAnalyses run(Module &M, ModuleAnalysisManager &)
	{
		return mtpc_fold_marked(wrap(&M)) ? PreservedAnalyses::none() : PreservedAnalyses::all();
	}
};
} // namespace

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo llvmGetPassPluginInfo()
{
	return {LLVM_PLUGIN_API_VERSION, "mtpc-fold", MTPC_VERSION, [](PassBuilder &PB) {
#if LLVM_VERSION_MAJOR >= 20
			PB.registerOptimizerLastEPCallback(
				[](ModulePassManager &MPM, OptimizationLevel, ThinOrFullLTOPhase) { MPM.addPass(FoldMarked()); });
#else
			PB.registerOptimizerLastEPCallback(
				[](ModulePassManager &MPM, OptimizationLevel) { MPM.addPass(FoldMarked()); });
#endif
		}};
}
