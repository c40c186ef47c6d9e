// llvm_shim.cpp: see llvm_shim.h. Kept tiny on purpose: each function fills one
// gap of the LLVM-C API and is called from C.
#include "llvm_shim.h"

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/IR/DebugInfoMetadata.h>
#include <llvm/IR/DebugProgramInstruction.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/GlobalAlias.h>
#include <llvm/IR/GlobalValue.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/ModuleSummaryIndex.h>
#include <llvm/LTO/Config.h>
#include <llvm/LTO/LTOBackend.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Transforms/IPO/LowerTypeTests.h>
#include <llvm/Transforms/IPO/WholeProgramDevirt.h>
#include <llvm/Support/MD5.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <mutex>
#include <string>

using namespace llvm;

static char *dup_message(const std::string &s)
{
	char *p = static_cast<char *>(std::malloc(s.size() + 1));
	if (p)
		std::memcpy(p, s.c_str(), s.size() + 1);
	return p;
}

extern "C" int mtpc_is_dso_local(LLVMValueRef global)
{
	return cast<GlobalValue>(unwrap(global))->isDSOLocal();
}

extern "C" void mtpc_set_dso_local(LLVMValueRef global, int dso_local)
{
	cast<GlobalValue>(unwrap(global))->setDSOLocal(dso_local != 0);
}

extern "C" void mtpc_delete_body(LLVMValueRef function)
{
	cast<Function>(unwrap(function))->deleteBody();
}

// By name, then by former position (unnamed ones), so the order is total.
template <class G> static std::vector<G *> sorted_declarations(std::vector<G *> v)
{
	std::vector<std::pair<G *, size_t>> k;
	for (size_t i = 0; i < v.size(); i++)
		k.emplace_back(v[i], i);
	std::sort(k.begin(), k.end(), [](const auto &a, const auto &b) {
		int c = a.first->getName().compare(b.first->getName());
		return c != 0 ? c < 0 : a.second < b.second;
	});
	for (size_t i = 0; i < k.size(); i++)
		v[i] = k[i].first;
	return v;
}

extern "C" void mtpc_sort_declarations(LLVMModuleRef module)
{
	Module &M = *unwrap(module);
	std::vector<Function *> fs;
	for (Function &F : M)
		if (F.isDeclaration())
			fs.push_back(&F);
	for (Function *F : sorted_declarations(fs)) {
		F->removeFromParent();
		M.getFunctionList().push_back(F);
	}
	std::vector<GlobalVariable *> vs;
	for (GlobalVariable &G : M.globals())
		if (G.isDeclaration())
			vs.push_back(&G);
	for (GlobalVariable *G : sorted_declarations(vs)) {
		M.removeGlobalVariable(G);
		M.insertGlobalVariable(G);
	}
}

extern "C" int mtpc_materialize(LLVMValueRef global, char **error)
{
	if (Error e = cast<GlobalValue>(unwrap(global))->materialize()) {
		*error = dup_message(toString(std::move(e)));
		return -1;
	}
	return 0;
}

extern "C" int mtpc_materialize_all(LLVMModuleRef module, char **error)
{
	if (Error e = unwrap(module)->materializeAll()) {
		*error = dup_message(toString(std::move(e)));
		return -1;
	}
	return 0;
}

extern "C" void mtpc_erase_alias(LLVMValueRef alias)
{
	cast<GlobalAlias>(unwrap(alias))->eraseFromParent();
}

extern "C" uint64_t mtpc_global_guid(LLVMValueRef global)
{
	return cast<GlobalValue>(unwrap(global))->getGUID();
}

static int fail(char **error, const std::string &msg)
{
	*error = dup_message(msg);
	return -1;
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
	ModulePassManager MPM;
	MPM.addPass(WholeProgramDevirtPass(nullptr, &index));
	MPM.addPass(LowerTypeTestsPass(nullptr, &index));
#if LLVM_VERSION_MAJOR >= 20
	// LLVM 20 split the flag: All is what `true` did (drop every type test and its assumes).
	MPM.addPass(LowerTypeTestsPass(nullptr, nullptr, lowertypetests::DropTestKind::All));
#else
	MPM.addPass(LowerTypeTestsPass(nullptr, nullptr, /*DropTypeTests=*/true));
#endif
	MPM.run(M, MAM);
}


extern "C" int mtpc_thin_import(LLVMContextRef ctx, const char *path, const char *index_path, int pic,
				LLVMModuleRef *out, char **error)
{
	static std::once_flag targets_once;
	std::call_once(targets_once, [] {
		InitializeAllTargetInfos();
		InitializeAllTargets();
		InitializeAllTargetMCs();
	});
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

// Every metadata node reachable from the module: named metadata, global and
// function attachments, instructions' attachments (!dbg included), debug
// records and the metadata arguments of debug intrinsics.
static std::vector<MDNode *> reachable_metadata(Module &M)
{
	SmallPtrSet<MDNode *, 32> seen;
	std::vector<MDNode *> nodes, work;
	auto visit = [&](Metadata *md) {
		if (auto *n = dyn_cast_or_null<MDNode>(md))
			if (seen.insert(n).second)
				work.push_back(n);
	};
	SmallVector<std::pair<unsigned, MDNode *>, 8> mds;
	for (NamedMDNode &nmd : M.named_metadata())
		for (MDNode *op : nmd.operands())
			visit(op);
	for (GlobalVariable &gv : M.globals()) {
		gv.getAllMetadata(mds);
		for (auto &p : mds)
			visit(p.second);
	}
	for (Function &f : M) {
		f.getAllMetadata(mds);
		for (auto &p : mds)
			visit(p.second);
		for (Instruction &i : instructions(f)) {
			i.getAllMetadata(mds);
			for (auto &p : mds)
				visit(p.second);
			for (DbgRecord &r : i.getDbgRecordRange()) {
				visit(r.getDebugLoc().getAsMDNode());
				if (auto *v = dyn_cast<DbgVariableRecord>(&r)) {
					visit(v->getRawVariable());
					visit(v->getRawExpression());
				} else if (auto *l = dyn_cast<DbgLabelRecord>(&r)) {
					visit(l->getRawLabel());
				}
			}
			if (auto *call = dyn_cast<CallBase>(&i))
				for (Value *arg : call->args())
					if (auto *mav = dyn_cast<MetadataAsValue>(arg))
						visit(mav->getMetadata());
		}
	}
	while (!work.empty()) {
		MDNode *n = work.back();
		work.pop_back();
		nodes.push_back(n);
		for (const MDOperand &op : n->operands())
			visit(op.get());
	}
	return nodes;
}

extern "C" char *mtpc_placeholder_checksums(LLVMModuleRef module, char **error)
{
	Module &M = *unwrap(module);
	if (Error e = M.materializeAll()) {
		*error = dup_message(toString(std::move(e)));
		return nullptr;
	}
	std::vector<MDNode *> nodes = reachable_metadata(M);
	DenseMap<Metadata *, Metadata *> replace;
	std::vector<std::string> lines;
	for (MDNode *n : nodes) {
		auto *f = dyn_cast<DIFile>(n);
		if (!f || !f->getChecksum() || f->getChecksum()->Kind != DIFile::CSK_MD5)
			continue;
		MD5 h;
		h.update("mtpc checksum placeholder");
		h.update(f->getDirectory());
		h.update(StringRef("\0", 1));
		h.update(f->getFilename());
		MD5::MD5Result r;
		h.final(r);
		SmallString<32> hex = r.digest();
		if (hex == f->getChecksum()->Value)
			continue;
		DIFile *to = DIFile::get(M.getContext(), f->getFilename(), f->getDirectory(),
					 DIFile::ChecksumInfo<StringRef>(DIFile::CSK_MD5, hex),
					 f->getSource());
		replace[f] = to;
		lines.push_back(std::string(hex.str()) + " " + f->getChecksum()->Value.str() + "\n");
	}
	// Redirect every user's operand; a uniqued user is re-uniqued in place.
	for (MDNode *n : nodes)
		for (unsigned i = 0; i < n->getNumOperands(); i++) {
			auto it = replace.find(n->getOperand(i).get());
			if (it != replace.end())
				n->replaceOperandWith(i, it->second);
		}
	std::sort(lines.begin(), lines.end());
	lines.erase(std::unique(lines.begin(), lines.end()), lines.end());
	std::string text;
	for (const std::string &l : lines)
		text += l;
	return dup_message(text);
}

extern "C" void mtpc_restrict_cu_lists(LLVMModuleRef module, LLVMValueRef *defined, unsigned n,
				       int first)
{
	Module &M = *unwrap(module);
	SmallPtrSet<const Metadata *, 32> here, attached;
	SmallVector<DIGlobalVariableExpression *, 1> gves;
	for (GlobalVariable &gv : M.globals()) {
		gves.clear();
		gv.getDebugInfo(gves);
		attached.insert(gves.begin(), gves.end());
	}
	for (unsigned i = 0; i < n; i++) {
		gves.clear();
		cast<GlobalVariable>(unwrap(defined[i]))->getDebugInfo(gves);
		here.insert(gves.begin(), gves.end());
	}
	LLVMContext &ctx = M.getContext();
	for (DICompileUnit *cu : M.debug_compile_units()) {
		SmallVector<Metadata *, 16> keep;
		DIGlobalVariableExpressionArray all = cu->getGlobalVariables();
		for (DIGlobalVariableExpression *e : all)
			if (here.count(e) || (first && !attached.count(e)))
				keep.push_back(e);
		if (keep.size() != all.size())
			cu->replaceGlobalVariables(keep.empty() ? nullptr : MDTuple::get(ctx, keep));
		if (!first) {
			if (!cu->getEnumTypes().empty())
				cu->replaceEnumTypes(nullptr);
			if (!cu->getRetainedTypes().empty())
				cu->replaceRetainedTypes(nullptr);
		}
	}
}
