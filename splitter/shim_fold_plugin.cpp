// shim_fold_plugin.cpp: mtpc-fold.so, the pass plugin a plain compile's
// partitions load (clang -fpass-plugin=, mtpc-compile passes it). The C API
// gap it fills: running code of our own inside clang's pipeline, at its end
// and before code generation; the LLVM-C API can run pipelines it is given
// but cannot add a pass to the one clang builds. All it does is call
// mtpc_fold_marked() (fold.c, LLVM-C) on the module there; fold.h says why.
// A second gap: LLVMPrintValueToString numbers the whole module's metadata
// at each call (with -g, every type and subprogram of the compile unit,
// for each function printed); print_shared() prints with one slot tracker
// for the module, which numbers it once.
#include "fold.h"

#include <llvm/Config/llvm-config.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/ModuleSlotTracker.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Passes/PassBuilder.h>
#if LLVM_VERSION_MAJOR >= 22
#include <llvm/Plugins/PassPlugin.h>
#else
#include <llvm/Passes/PassPlugin.h>
#endif

using namespace llvm;

namespace {
// v printed as LLVMPrintValueToString prints it, with the module's one
// slot tracker (arg).
char *print_shared(LLVMValueRef v, void *arg)
{
	std::string s;
	raw_string_ostream os(s);
	unwrap(v)->print(os, *static_cast<ModuleSlotTracker *>(arg));
	os.flush();
	return LLVMCreateMessage(s.c_str());
}

struct FoldMarked : PassInfoMixin<FoldMarked> {
	PreservedAnalyses run(Module &M, ModuleAnalysisManager &)
	{
		ModuleSlotTracker mst(&M, false);
		return mtpc_fold_marked(wrap(&M), print_shared, &mst) ? PreservedAnalyses::none()
								       : PreservedAnalyses::all();
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
