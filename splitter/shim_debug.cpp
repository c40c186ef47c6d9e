// shim_debug.cpp: the debug-info edits of llvm_shim.h that the LLVM-C API
// lacks: placeholder checksums, the compile units' lists restricted to a
// partition, virtual lines, and a subprogram copied for a new function. llvm_shim.h says which gap each fills and
// why a partition's debug info is edited at all.
#include "llvm_shim.h"
#include "shim_int.h"
#include "virtual_lines.h"

#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/ADT/SmallString.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/IR/DebugInfoMetadata.h>
#include <llvm/IR/DebugProgramInstruction.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/MD5.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

using namespace llvm;

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
	// A global's getAllMetadata appends to mds (and sorts all of it) and
	// leaves it alone when there is none: clear it each time, or a module
	// with 255k debug-described globals takes minutes.
	for (GlobalVariable &gv : M.globals()) {
		mds.clear();
		gv.getAllMetadata(mds);
		for (auto &p : mds)
			visit(p.second);
	}
	for (Function &f : M) {
		mds.clear();
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
			if (!cu->getImportedEntities().empty())
				cu->replaceImportedEntities(nullptr);
		}
	}
}

// Debug info: virtual lines ---------------------------------------------------
//
// Lines of one source file that a partition refers to are grouped into spans:
// a function body (its own lines and those of its scopes, locations,
// variables and labels, in that file) is one span, so distances inside a
// function stay as they were; every other line (a type, a member, a global,
// a declaration) is a span of its own. Overlapping spans merge. The spans of
// all files, files in name order, are then numbered consecutively from
// MTPC_VIRTUAL_LINE_BASE (virtual_lines.h). The numbering is strictly increasing within a file,
// so every comparison of two lines of one file keeps its answer, and it
// depends only on the spans' lengths and order: lines added or removed
// outside the partition's spans do not change it.

namespace {
struct line_use {
	const DIFile *file;
	unsigned line;
	const MDNode *body; // the function body the line belongs to, or null
};

struct file_spans {
	std::vector<std::pair<unsigned, unsigned>> span; // [first, last], disjoint, sorted
	std::vector<unsigned> virt;                       // virtual number of span[k].first
};
} // namespace

static const DISubprogram *body_of(const Metadata *scope)
{
	if (auto *s = dyn_cast_or_null<DILocalScope>(scope))
		return s->getSubprogram();
	return nullptr;
}

// The source lines node n states, with their files (0 means "no line").
static void line_uses(const MDNode *n, std::vector<line_use> &out)
{
	auto add = [&](const DIFile *f, unsigned line, const MDNode *body) {
		if (line)
			out.push_back({f, line, body});
	};
	if (auto *l = dyn_cast<DILocation>(n)) {
		add(l->getFile(), l->getLine(), body_of(l->getRawScope()));
	} else if (auto *b = dyn_cast<DILexicalBlock>(n)) {
		add(b->getFile(), b->getLine(), b->getSubprogram());
	} else if (auto *v = dyn_cast<DILocalVariable>(n)) {
		add(v->getFile(), v->getLine(), body_of(v->getRawScope()));
	} else if (auto *lb = dyn_cast<DILabel>(n)) {
		add(lb->getFile(), lb->getLine(), body_of(lb->getRawScope()));
	} else if (auto *sp = dyn_cast<DISubprogram>(n)) {
		const MDNode *body = sp->isDefinition() ? sp : nullptr;
		add(sp->getFile(), sp->getLine(), body);
		add(sp->getFile(), sp->getScopeLine(), body);
	} else if (auto *gv = dyn_cast<DIGlobalVariable>(n)) {
		add(gv->getFile(), gv->getLine(), nullptr);
	} else if (auto *t = dyn_cast<DIDerivedType>(n)) {
		add(t->getFile(), t->getLine(), nullptr);
	} else if (auto *c = dyn_cast<DICompositeType>(n)) {
		add(c->getFile(), c->getLine(), nullptr);
	} else if (auto *ie = dyn_cast<DIImportedEntity>(n)) {
		add(ie->getFile(), ie->getLine(), nullptr);
	}
}

static std::string file_key(const DIFile *f)
{
	if (!f)
		return std::string();
	std::string k = f->getDirectory().str();
	k.push_back('\0');
	return k + f->getFilename().str();
}

// n with its lines renumbered by v (and, from LLVM 22, a location's atom
// group by atom), as a temporary (null if nothing changes). The argument
// lists are those of each class's cloneImpl.
template <class V, class A> static TempMDNode relined(MDNode *n, V v, [[maybe_unused]] A atom)
{
	LLVMContext &c = n->getContext();
	if (auto *l = dyn_cast<DILocation>(n)) {
		unsigned line = v(l->getFile(), l->getLine());
#if LLVM_VERSION_MAJOR >= 22
		uint64_t group = atom(l->getAtomGroup());
		if (line == l->getLine() && group == l->getAtomGroup())
			return nullptr;
		return DILocation::getTemporary(c, line, l->getColumn(), l->getRawScope(),
						l->getRawInlinedAt(), l->isImplicitCode(), group,
						l->getAtomRank());
#else
		if (line == l->getLine())
			return nullptr;
		return DILocation::getTemporary(c, line, l->getColumn(), l->getRawScope(),
						l->getRawInlinedAt(), l->isImplicitCode());
#endif
	}
	if (auto *b = dyn_cast<DILexicalBlock>(n)) {
		unsigned line = v(b->getFile(), b->getLine());
		if (line == b->getLine())
			return nullptr;
		return DILexicalBlock::getTemporary(c, b->getScope(), b->getFile(), line, b->getColumn());
	}
	if (auto *x = dyn_cast<DILocalVariable>(n)) {
		unsigned line = v(x->getFile(), x->getLine());
		if (line == x->getLine())
			return nullptr;
		return DILocalVariable::getTemporary(c, x->getScope(), x->getName(), x->getFile(), line,
						     x->getType(), x->getArg(), x->getFlags(),
						     x->getAlignInBits(), x->getAnnotations());
	}
	if (auto *x = dyn_cast<DILabel>(n)) {
		unsigned line = v(x->getFile(), x->getLine());
		if (line == x->getLine())
			return nullptr;
#if LLVM_VERSION_MAJOR >= 22
		return DILabel::getTemporary(c, x->getScope(), x->getName(), x->getFile(), line,
					     x->getColumn(), x->isArtificial(), x->getCoroSuspendIdx());
#else
		return DILabel::getTemporary(c, x->getScope(), x->getName(), x->getFile(), line);
#endif
	}
	if (auto *x = dyn_cast<DISubprogram>(n)) {
		unsigned line = v(x->getFile(), x->getLine()), sl = v(x->getFile(), x->getScopeLine());
		if (line == x->getLine() && sl == x->getScopeLine())
			return nullptr;
		return DISubprogram::getTemporary(
			c, x->getScope(), x->getName(), x->getLinkageName(), x->getFile(), line, x->getType(), sl,
			x->getContainingType(), x->getVirtualIndex(), x->getThisAdjustment(), x->getFlags(),
			x->getSPFlags(), x->getUnit(), x->getTemplateParams(), x->getDeclaration(),
			x->getRetainedNodes(), x->getThrownTypes(), x->getAnnotations(), x->getTargetFuncName()
#if LLVM_VERSION_MAJOR >= 22
				,
			x->getKeyInstructionsEnabled()
#endif
		);
	}
	if (auto *x = dyn_cast<DIGlobalVariable>(n)) {
		unsigned line = v(x->getFile(), x->getLine());
		if (line == x->getLine())
			return nullptr;
		return DIGlobalVariable::getTemporary(c, x->getScope(), x->getName(), x->getLinkageName(),
						      x->getFile(), line, x->getType(), x->isLocalToUnit(),
						      x->isDefinition(), x->getStaticDataMemberDeclaration(),
						      x->getTemplateParams(), x->getAlignInBits(),
						      x->getAnnotations());
	}
	if (auto *x = dyn_cast<DIDerivedType>(n)) {
		unsigned line = v(x->getFile(), x->getLine());
		if (line == x->getLine())
			return nullptr;
#if LLVM_VERSION_MAJOR >= 22
		return DIDerivedType::getTemporary(c, x->getTag(), x->getRawName(), x->getFile(), line,
						   x->getScope(), x->getBaseType(), x->getRawSizeInBits(),
						   x->getAlignInBits(), x->getRawOffsetInBits(),
						   x->getDWARFAddressSpace(), x->getPtrAuthData(), x->getFlags(),
						   x->getExtraData(), x->getRawAnnotations());
#else
		return DIDerivedType::getTemporary(c, x->getTag(), x->getName(), x->getFile(), line,
						   x->getScope(), x->getBaseType(), x->getSizeInBits(),
						   x->getAlignInBits(), x->getOffsetInBits(),
						   x->getDWARFAddressSpace(), x->getPtrAuthData(), x->getFlags(),
						   x->getExtraData(), x->getAnnotations());
#endif
	}
	if (auto *x = dyn_cast<DICompositeType>(n)) {
		unsigned line = v(x->getFile(), x->getLine());
		if (line == x->getLine())
			return nullptr;
#if LLVM_VERSION_MAJOR >= 22
		return DICompositeType::getTemporary(
			c, x->getTag(), x->getRawName(), x->getFile(), line, x->getScope(), x->getBaseType(),
			x->getRawSizeInBits(), x->getAlignInBits(), x->getRawOffsetInBits(), x->getFlags(),
			x->getRawElements(), x->getRuntimeLang(), x->getEnumKind(), x->getVTableHolder(),
			x->getRawTemplateParams(), x->getRawIdentifier(), x->getDiscriminator(),
			x->getRawDataLocation(), x->getRawAssociated(), x->getRawAllocated(), x->getRawRank(),
			x->getRawAnnotations(), x->getSpecification(), x->getNumExtraInhabitants(),
			x->getRawBitStride());
#else
		return DICompositeType::getTemporary(
			c, x->getTag(), x->getName(), x->getFile(), line, x->getScope(), x->getBaseType(),
			x->getSizeInBits(), x->getAlignInBits(), x->getOffsetInBits(), x->getFlags(),
			x->getElements(), x->getRuntimeLang(), x->getVTableHolder(), x->getTemplateParams(),
			x->getIdentifier(), x->getDiscriminator(), x->getRawDataLocation(),
			x->getRawAssociated(), x->getRawAllocated(), x->getRawRank(), x->getAnnotations());
#endif
	}
	if (auto *x = dyn_cast<DIImportedEntity>(n)) {
		unsigned line = v(x->getFile(), x->getLine());
		if (line == x->getLine())
			return nullptr;
		return DIImportedEntity::getTemporary(c, x->getTag(), x->getScope(), x->getEntity(), x->getFile(),
						      line, x->getName(), x->getElements());
	}
	return nullptr;
}

// Point every use of an old node in the module outside metadata (named
// metadata, attachments, debug records, debug intrinsics' arguments) at its
// new node. Uses inside metadata are redirected by the caller.
template <class Sub> static void redirect_uses(Module &M, Sub sub)
{
	SmallVector<std::pair<unsigned, MDNode *>, 8> mds;
	for (NamedMDNode &nmd : M.named_metadata())
		for (unsigned i = 0; i < nmd.getNumOperands(); i++)
			if (MDNode *r = sub(nmd.getOperand(i)))
				nmd.setOperand(i, r);
	auto object = [&](GlobalObject &g) {
		mds.clear(); // getAllMetadata leaves mds alone when there is none
		g.getAllMetadata(mds);
		bool any = false;
		for (auto &p : mds)
			any |= sub(p.second) != nullptr;
		if (!any)
			return;
		g.clearMetadata();
		for (auto &p : mds) {
			MDNode *r = sub(p.second);
			g.addMetadata(p.first, r ? *r : *p.second);
		}
	};
	for (GlobalVariable &gv : M.globals())
		object(gv);
	for (Function &f : M) {
		object(f);
		for (Instruction &i : instructions(f)) {
			mds.clear();
			i.getAllMetadata(mds);
			for (auto &p : mds)
				if (MDNode *r = sub(p.second))
					i.setMetadata(p.first, r);
			for (DbgRecord &r : i.getDbgRecordRange()) {
				if (MDNode *d = sub(r.getDebugLoc().getAsMDNode()))
					r.setDebugLoc(DebugLoc(cast<DILocation>(d)));
				if (auto *v = dyn_cast<DbgVariableRecord>(&r)) {
					if (MDNode *d = sub(v->getRawVariable()))
						v->setVariable(cast<DILocalVariable>(d));
				} else if (auto *l = dyn_cast<DbgLabelRecord>(&r)) {
					if (MDNode *d = sub(l->getRawLabel()))
						l->setLabel(cast<DILabel>(d));
				}
			}
			if (auto *call = dyn_cast<CallBase>(&i))
				for (unsigned a = 0; a < call->arg_size(); a++)
					if (auto *mav = dyn_cast<MetadataAsValue>(call->getArgOperand(a)))
						if (MDNode *d = sub(mav->getMetadata()))
							call->setArgOperand(a, MetadataAsValue::get(M.getContext(), d));
		}
	}
}

extern "C" char *mtpc_virtual_lines(LLVMModuleRef module, char **error)
{
	Module &M = *unwrap(module);
	if (Error e = M.materializeAll()) {
		*error = dup_message(toString(std::move(e)));
		return nullptr;
	}
	std::vector<MDNode *> nodes = reachable_metadata(M);

	// Spans: one per function body and file, one per other line.
	// Files by name (two DIFiles may name one file); each DIFile's entry
	// looked up once.
	std::map<std::string, file_spans> files;
	DenseMap<const DIFile *, file_spans *> file_of;
	auto spans_of = [&](const DIFile *f) -> file_spans * {
		auto it = file_of.find(f);
		if (it != file_of.end())
			return it->second;
		return file_of[f] = &files[file_key(f)];
	};
	DenseMap<std::pair<const MDNode *, file_spans *>, std::pair<unsigned, unsigned>> bodies;
	std::vector<line_use> uses;
	for (MDNode *n : nodes) {
		uses.clear();
		line_uses(n, uses);
		for (const line_use &u : uses) {
			if (u.line >= MTPC_VIRTUAL_LINE_BASE)
				return dup_message(""); // real lines this large: leave them all
			file_spans *fs = spans_of(u.file);
			if (!u.body) {
				fs->span.push_back({u.line, u.line});
				continue;
			}
			auto it = bodies.insert({{u.body, fs}, {u.line, u.line}}).first;
			it->second.first = std::min(it->second.first, u.line);
			it->second.second = std::max(it->second.second, u.line);
		}
	}
	for (auto &b : bodies) // in any order: each file's spans are sorted next
		b.first.second->span.push_back(b.second);
	std::string text;
	uint64_t next = MTPC_VIRTUAL_LINE_BASE;
	for (auto &f : files) {
		auto &s = f.second.span;
		std::sort(s.begin(), s.end());
		size_t k = 0;
		for (size_t i = 0; i < s.size(); i++) {
			if (k && s[i].first <= s[k - 1].second)
				s[k - 1].second = std::max(s[k - 1].second, s[i].second);
			else
				s[k++] = s[i];
		}
		s.resize(k);
		for (auto &sp : s) {
			f.second.virt.push_back(unsigned(next));
			text += std::to_string(next) + " " + std::to_string(sp.first) + " " +
				std::to_string(sp.second - sp.first + 1) + "\n";
			next += sp.second - sp.first + 1;
		}
	}
	if (next >= 2ull * MTPC_VIRTUAL_LINE_BASE)
		return dup_message(""); // cannot happen with lines below 2^30 in practice
	auto virt = [&](const DIFile *f, unsigned line) -> unsigned {
		if (!line)
			return 0;
		const file_spans *fs = spans_of(f);
		const auto &s = fs->span;
		auto k = std::upper_bound(s.begin(), s.end(), std::make_pair(line, ~0u)) - s.begin();
		if (k == 0 || line > s[k - 1].second)
			return line;
		return fs->virt[k - 1] + (line - s[k - 1].first);
	};

	// Key instructions (LLVM 22): clang numbers the statements' atom groups
	// across the whole file, so a statement added anywhere renumbers every
	// group after it. Only their identity within a function matters; number
	// them anew in the order the partition first uses them.
	DenseMap<uint64_t, uint64_t> groups;
#if LLVM_VERSION_MAJOR >= 22
	for (MDNode *n : nodes)
		if (auto *l = dyn_cast<DILocation>(n))
			if (l->getAtomGroup())
				groups.insert({l->getAtomGroup(), groups.size() + 1});
#endif
	auto atom = [&](uint64_t g) -> uint64_t { return g ? groups.lookup(g) : 0; };

	// New nodes: temporaries first, so that cycles among them close.
	DenseMap<Metadata *, TempMDNode> temp;
	for (MDNode *n : nodes)
		if (TempMDNode t = relined(n, virt, atom))
			temp[n] = std::move(t);
	for (auto &p : temp)
		for (unsigned i = 0; i < p.second->getNumOperands(); i++) {
			auto it = temp.find(p.second->getOperand(i).get());
			if (it != temp.end())
				p.second->replaceOperandWith(i, it->second.get());
		}
	DenseMap<Metadata *, TrackingMDRef> done;
	for (MDNode *n : nodes) {
		auto it = temp.find(n);
		if (it == temp.end())
			continue;
		MDNode *f = n->isDistinct() ? MDNode::replaceWithDistinct(std::move(it->second))
					    : MDNode::replaceWithUniqued(std::move(it->second));
		done[n].reset(f);
	}
	for (auto &p : done)
		if (auto *n = dyn_cast_or_null<MDNode>(p.second.get()))
			if (!n->isResolved())
				n->resolveCycles();
	auto sub = [&](Metadata *md) -> MDNode * {
		auto it = done.find(md);
		return it == done.end() ? nullptr : cast_or_null<MDNode>(it->second.get());
	};
	// The old nodes that stay (tuples, units, expressions...) now point at
	// the new ones; a uniqued one is re-uniqued in place.
	for (MDNode *n : nodes)
		if (!done.count(n))
			for (unsigned i = 0; i < n->getNumOperands(); i++)
				if (MDNode *r = sub(n->getOperand(i).get()))
					n->replaceOperandWith(i, r);
	redirect_uses(M, sub);
	return dup_message(text);
}

extern "C" LLVMMetadataRef mtpc_copy_subprogram(LLVMValueRef from, LLVMValueRef to, const char *name)
{
	DISubprogram *sp = unwrap<Function>(from)->getSubprogram();
	if (!sp)
		return nullptr;
	LLVMContext &ctx = sp->getContext();
	TempDISubprogram tmp = sp->clone();
	// DISubprogram's operands: 2 name, 3 linkage name, 7 retained nodes.
	tmp->replaceOperandWith(2, MDString::get(ctx, name));
	tmp->replaceOperandWith(3, nullptr);
	tmp->replaceOperandWith(7, nullptr);
	DISubprogram *copy = MDNode::replaceWithDistinct(std::move(tmp));
	unwrap<Function>(to)->setSubprogram(copy);
	return wrap(copy);
}
