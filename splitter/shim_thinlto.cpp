// shim_thinlto.cpp: the ThinLTO of llvm_shim.h that the LLVM-C API lacks:
// the backend's import step in-process, reading a per-module index (module
// hashes, promotion suffixes), a bitcode file's summary and symbol table,
// and bitcode written with its summary. llvm_shim.h says which gap each
// fills.
#include "llvm_shim.h"
#include "shim_int.h"

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/ModuleSummaryIndex.h>
#include <llvm/LTO/Config.h>
#include <llvm/LTO/LTO.h>
#include <llvm/LTO/LTOBackend.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Transforms/IPO/LowerTypeTests.h>
#include <llvm/Transforms/IPO/ThinLTOBitcodeWriter.h>
#include <llvm/Transforms/IPO/WholeProgramDevirt.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

using namespace llvm;

/* Run the module passes of MPM on M with the analyses a PassBuilder
 * registers (what opt does for a pipeline of module passes). */
static void run_module_passes(Module &M, ModulePassManager &MPM)
{
	LoopAnalysisManager LAM;
	FunctionAnalysisManager FAM;
	CGSCCAnalysisManager CGAM;
	ModuleAnalysisManager MAM;
	PassBuilder PB;
	PB.registerModuleAnalyses(MAM);
	PB.registerCGSCCAnalyses(CGAM);
	PB.registerFunctionAnalyses(FAM);
	PB.registerLoopAnalyses(LAM);
	PB.crossRegisterProxies(LAM, FAM, CGAM, MAM);
	MPM.run(M, MAM);
}

/* The thin link's whole-program devirtualization and type-test (CFI)
 * resolutions are applied by the first passes of the backend's optimization
 * pipeline (PassBuilder::buildThinLTODefaultPipeline), after the post-import
 * hook. The partitions are optimized by a plain -O2 compile that has no
 * summary, so apply them here, as that pipeline does; then drop the type
 * tests left for assumes. Without this, CFI modules crash the partition
 * compiles and devirtualization is lost. */
static void apply_type_resolutions(Module &M, const ModuleSummaryIndex &index)
{
	ModulePassManager MPM;
	MPM.addPass(WholeProgramDevirtPass(nullptr, &index));
	MPM.addPass(LowerTypeTestsPass(nullptr, &index));
#if LLVM_VERSION_MAJOR >= 20
	// LLVM 20 split the flag: All is what `true` did (drop every type test and its assumes).
	MPM.addPass(LowerTypeTestsPass(nullptr, nullptr, lowertypetests::DropTestKind::All));
#else
	MPM.addPass(LowerTypeTestsPass(nullptr, nullptr, /*DropTypeTests=*/true));
#endif
	run_module_passes(M, MPM);
}

// The targets the import's backend configuration and a summary's module-asm
// symbols (ModuleSymbolTable parses inline asm with the target's asm parser,
// and crashes without one) need; once per process.
static void init_targets()
{
	static std::once_flag targets_once;
	std::call_once(targets_once, [] {
		InitializeAllTargetInfos();
		InitializeAllTargets();
		InitializeAllTargetMCs();
		InitializeAllAsmParsers();
	});
}

extern "C" int mtpc_thin_import(LLVMContextRef ctx, const char *path, const char *index_path, int pic,
				LLVMModuleRef *out, char **error)
{
	init_targets();
	LLVMContext &C = *unwrap(ctx);
	// clang's backend context uniques ODR debug types; the importer relies on it.
	C.enableDebugTypeODRUniquing();

	auto mb = MemoryBuffer::getFile(path);
	if (!mb)
		return fail(error, std::string(path) + ": " + mb.getError().message());
	Expected<BitcodeModule> bm = lto::findThinLTOModule((*mb)->getMemBufferRef());
	if (!bm)
		return fail(error, std::string(path) + ": " + toString(bm.takeError()));
	Expected<std::unique_ptr<Module>> mod = bm->parseModule(C);
	if (!mod)
		return fail(error, std::string(path) + ": " + toString(mod.takeError()));
	Module &M = **mod;
	M.setOwnedMemoryBuffer(std::move(*mb));

	Expected<std::unique_ptr<ModuleSummaryIndex>> index =
		getModuleSummaryIndexForFile(index_path, /*IgnoreEmptyThinLTOIndexFile=*/true);
	if (!index)
		return fail(error, std::string(index_path) + ": " + toString(index.takeError()));
	if (*index && (*index)->modulePaths().empty())
		return 1;
	if (*index && !(*index)->modulePaths().count(M.getModuleIdentifier()))
		// The index names modules by the paths the thin link saw; any other
		// spelling would silently import and internalize nothing.
		return fail(error, std::string(index_path) + ": no module '" + M.getModuleIdentifier() +
					   "' in this index (give the input as the thin link saw it)");
	if (*index) {
		// As clang's runThinLTOBackend: import what the per-module index names.
#if LLVM_VERSION_MAJOR >= 20
		// LLVM 20: an import list refers to entries of a table it does not own.
		FunctionImporter::ImportIDTable import_ids;
		FunctionImporter::ImportMapTy imports(import_ids);
#else
		FunctionImporter::ImportMapTy imports;
#endif
		if (!lto::initImportList(M, **index, imports))
			return fail(error, std::string(index_path) + ": cannot read the import list");
		DenseMap<StringRef, GVSummaryMapTy> defined;
		(*index)->collectDefinedGVSummariesPerModule(defined);

		lto::Config conf;
		conf.RelocModel = pic ? Reloc::PIC_ : Reloc::Static;
		conf.PostImportModuleHook = [](unsigned, const Module &) { return false; };
		auto no_stream = [](size_t, const Twine &) -> Expected<std::unique_ptr<CachedFileStream>> {
			return createStringError(inconvertibleErrorCode(), "no output expected");
		};
		if (Error e = lto::thinBackend(conf, 0, no_stream, M, **index, imports,
					       defined[M.getModuleIdentifier()], /*ModuleMap=*/nullptr
#if LLVM_VERSION_MAJOR >= 20 // added CodeGenOnly; the hook stops before optimization anyway
					       , /*CodeGenOnly=*/false
#endif
					       ))
			return fail(error, std::string(path) + ": ThinLTO import failed: " + toString(std::move(e)));
		apply_type_resolutions(M, **index);
	}
	*out = wrap(mod->release());
	return 0;
}

extern "C" char *mtpc_index_suffixes(const char *index_path, char **error)
{
	Expected<std::unique_ptr<ModuleSummaryIndex>> index =
		getModuleSummaryIndexForFile(index_path, /*IgnoreEmptyThinLTOIndexFile=*/true);
	if (!index) {
		*error = dup_message(std::string(index_path) + ": " + toString(index.takeError()));
		return nullptr;
	}
	std::vector<std::string> lines;
	if (*index)
		for (const auto &e : (*index)->modulePaths()) {
			// As ModuleSummaryIndex::getGlobalNameForLocal: the hash's first 64 bits.
			const ModuleHash &h = e.second;
			lines.push_back(utostr((uint64_t(h[0]) << 32) | h[1]) + " " + e.first().str() + "\n");
		}
	std::sort(lines.begin(), lines.end());
	std::string text;
	for (const std::string &l : lines)
		text += l;
	return dup_message(text);
}

extern "C" int mtpc_index_unhashed_modules(const char *index_path, char ***paths, char **error)
{
	*paths = nullptr;
	Expected<std::unique_ptr<ModuleSummaryIndex>> index =
		getModuleSummaryIndexForFile(index_path, /*IgnoreEmptyThinLTOIndexFile=*/true);
	if (!index)
		return fail(error, std::string(index_path) + ": " + toString(index.takeError()));
	std::vector<std::string> unhashed;
	if (*index)
		for (const auto &e : (*index)->modulePaths())
			if (e.second == ModuleHash{{0}})
				unhashed.push_back(e.first().str());
	std::sort(unhashed.begin(), unhashed.end()); // a StringMap's order is its hash table's
	*paths = static_cast<char **>(calloc(unhashed.size() + 1, sizeof(char *)));
	for (size_t i = 0; i < unhashed.size(); i++)
		(*paths)[i] = strdup(unhashed[i].c_str());
	return (int)unhashed.size();
}

extern "C" int mtpc_summary_cost(const char *path, long long *insts, long long *functions,
				 char **error)
{
	auto buf = MemoryBuffer::getFile(path);
	if (!buf) {
		*error = dup_message(std::string(path) + ": " + buf.getError().message());
		return -1;
	}
	auto mods = getBitcodeModuleList(**buf);
	if (!mods) {
		*error = dup_message(std::string(path) + ": " + toString(mods.takeError()));
		return -1;
	}
	long long n = 0, f = 0;
	int any = 0;
	for (BitcodeModule &bm : *mods) {
		auto summary = bm.getSummary();
		if (!summary) {
			consumeError(summary.takeError());
			continue;
		}
		if (!*summary)
			continue;
		any = 1;
		for (const auto &entry : **summary)
			for (const auto &gvs : (*summary)->getValueInfo(entry).getSummaryList())
				if (const auto *fs = dyn_cast<FunctionSummary>(gvs.get())) {
					n += fs->instCount();
					f++;
				}
	}
	*insts = n;
	*functions = f;
	return any ? 0 : 1;
}

extern "C" int mtpc_bitcode_visibility(const char *path, mtpc_visibility_fn fn, void *arg, char **error)
{
	auto buf = MemoryBuffer::getFile(path);
	if (!buf) {
		*error = dup_message(std::string(path) + ": " + buf.getError().message());
		return -1;
	}
	auto in = lto::InputFile::create((*buf)->getMemBufferRef());
	if (!in) {
		*error = dup_message(std::string(path) + ": " + toString(in.takeError()));
		return -1;
	}
	for (const lto::InputFile::Symbol &sym : (*in)->symbols()) {
		int vis = sym.getVisibility() == GlobalValue::HiddenVisibility	   ? 1
			  : sym.getVisibility() == GlobalValue::ProtectedVisibility ? 2
										    : 0;
		if (vis)
			fn(arg, sym.getName().data(), sym.getName().size(), vis);
	}
	return 0;
}

// The LLVM-C API writes bitcode without a ThinLTO summary; clang's ThinLTO
// compile writes it through ThinLTOBitcodeWriterPass (the summary, and the
// two modules of -fsplit-lto-unit). The join writes the joined module the
// same way, so that the thin link reads it as clang's own object.
extern "C" char *mtpc_thinlto_bitcode(LLVMModuleRef module, size_t *len, char **error)
{
	init_targets();
	Module &M = *unwrap(module);
	std::string bytes;
	raw_string_ostream os(bytes);
	ModulePassManager MPM;
	MPM.addPass(ThinLTOBitcodeWriterPass(os, nullptr));
	run_module_passes(M, MPM);
	os.flush();
	char *out = static_cast<char *>(malloc(bytes.size() + 1));
	if (!out) {
		*error = dup_message("out of memory");
		return nullptr;
	}
	memcpy(out, bytes.data(), bytes.size());
	*len = bytes.size();
	return out;
}
