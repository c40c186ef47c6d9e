// shim_ir.cpp: the IR edits of llvm_shim.h that the LLVM-C API lacks:
// dso_local, deleting a body, lazy materialization, erasing an alias, the
// order of the globals, the numbering of struct types, a global's GUID and
// cloning part of a module. llvm_shim.h says which gap each fills.
#include "llvm_shim.h"
#include "shim_int.h"

#include <llvm/Config/llvm-config.h>
#include <llvm/IR/DebugInfoMetadata.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalAlias.h>
#include <llvm/IR/GlobalValue.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/TypeFinder.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <algorithm>
#include <string>
#include <vector>

using namespace llvm;

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

extern "C" void mtpc_sort_globals(LLVMModuleRef module)
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
	vs.clear();
	for (GlobalVariable &G : M.globals())
		if (!G.isDeclaration() && G.hasPrivateLinkage())
			vs.push_back(&G);
	for (GlobalVariable *G : sorted_declarations(vs)) {
		M.removeGlobalVariable(G);
		M.insertGlobalVariable(G);
	}
}

extern "C" void mtpc_number_struct_types(LLVMModuleRef module)
{
	Module &M = *unwrap(module);
	TypeFinder types;
	types.run(M, true);
	// Apart first, so that no final name meets a name the module still uses.
	std::vector<std::string> base;
	for (size_t i = 0; i < types.size(); i++) {
		StringRef name = types[i]->getName();
		size_t end = name.size();
		while (end > 0 && name[end - 1] >= '0' && name[end - 1] <= '9')
			end--;
		if (end < name.size() && end > 1 && name[end - 1] == '.')
			name = name.take_front(end - 1);
		base.push_back(name.str());
		types[i]->setName("mtpc.struct.tmp." + std::to_string(i));
	}
	for (size_t i = 0; i < types.size(); i++)
		types[i]->setName(base[i] + ".mtpc" + std::to_string(i));
}

extern "C" uint64_t mtpc_global_guid(LLVMValueRef global)
{
	return cast<GlobalValue>(unwrap(global))->getGUID();
}

extern "C" LLVMModuleRef mtpc_clone_module(LLVMModuleRef module, int (*define)(LLVMValueRef global, void *arg),
					  void *arg)
{
	// Never freed: its value handles would be unregistered one by one, and
	// the caller (a child process that exits after one partition) has no
	// use for that.
	ValueToValueMapTy &vmap = *new ValueToValueMapTy;
#if LLVM_VERSION_MAJOR >= 21
	// Copying a block gives each key-instruction atom group a new number
	// (the same location may appear twice in a duplicated path). A copy of
	// the module moves the code instead: every group that a copied body
	// names is mapped to itself, so the copy's debug locations are those
	// of the original, as the bitcode of the module itself would give.
	// Without a compile unit there are no debug locations to walk for.
	bool debug = unwrap(module)->getNamedMetadata("llvm.dbg.cu") != nullptr;
	for (Function &f : *unwrap(module)) {
		if (!debug)
			break;
		if (f.isDeclaration() || !define(wrap(&f), arg))
			continue;
		for (const Instruction &i : instructions(f))
			if (const DILocation *dl = i.getDebugLoc().get())
				if (uint64_t group = dl->getAtomGroup())
					vmap.AtomMap.insert({{dl->getInlinedAt(), group}, group});
	}
#endif
	std::unique_ptr<Module> clone = CloneModule(*unwrap(module), vmap, [&](const GlobalValue *gv) {
		return define(wrap(const_cast<GlobalValue *>(gv)), arg) != 0;
	});
	return wrap(clone.release());
}
