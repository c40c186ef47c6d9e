/* analyze.h: what the splitter knows about one module before partitioning.
 *
 * Every global value (functions, then variables, then aliases, then ifuncs, in
 * module order) gets an index. The same enumeration is redone on each thread's
 * private copy of the module (sym_enumerate), so an index names the same
 * global everywhere without pointers crossing LLVMContexts.
 *
 * analyze_module() fills a module_info in steps, each in its own file:
 * the symbol table and references (analyze.c: instruction operands,
 * constant expressions, initializers, aliasees, resolvers, personalities,
 * value-profile targets), the names asm text uses (asm_names.h), edit-stable
 * names (stable_names.h), the alias-name rule, the roles and liveness
 * (analyze.c), and the units with their affinity edges (units.h). The
 * result depends on the module and the options alone, never on pointer
 * values or hash-table order. */
#ifndef MTPC_ANALYZE_H
#define MTPC_ANALYZE_H

#include <llvm-c/Core.h>
#include <stddef.h>

enum sym_kind { SYM_FUNC, SYM_VAR, SYM_ALIAS, SYM_IFUNC };

/* How a symbol is placed. Decided once per module. */
enum sym_role {
	ROLE_DECL,     /* declaration in the input: declared wherever referenced */
	ROLE_IMPORTED, /* available_externally in the input (ThinLTO import): every
	                  partition that reaches it carries the body for inlining */
	ROLE_DUP,      /* may exist once per partition without changing behaviour
	                  (small linkonce_odr comdat; local unnamed_addr constant;
	                  small static function, which partitions sharing it carry
	                  as a hidden linkonce_odr comdat of its own); the linker
	                  keeps one copy or the copies are local */
	ROLE_OWNED,    /* defined by exactly one partition, the owner of its unit */
	ROLE_SPECIAL,  /* llvm.used, llvm.global_ctors, ...: rebuilt per partition */
	ROLE_DEAD,     /* discardable and unreachable from any root: in no partition
	                  (GlobalDCE would delete it from the unsplit module too) */
};

enum {
	SF_LOCAL = 1 << 0,        /* internal or private linkage */
	SF_NOINLINE = 1 << 1,     /* noinline / optnone / naked / vararg: never copied */
	SF_BLOCKADDR = 1 << 2,    /* involved in a blockaddress: never duplicated */
	SF_IN_ASM = 1 << 3,       /* named by module inline asm */
	SF_CTOR = 1 << 4,         /* in llvm.global_ctors/dtors (function or key) */
	SF_USED = 1 << 5,         /* in llvm.used / llvm.compiler.used */
	SF_ALIASEE = 1 << 6,      /* base object of an alias or resolver of an ifunc */
	SF_INTERPOSABLE = 1 << 7, /* weak, linkonce, common, extern_weak: never copied */
	SF_CONST = 1 << 8,        /* constant variable */
	SF_SECTION = 1 << 9,      /* explicit section */
	SF_ASM_NAME = 1 << 10,    /* named as text by module asm or a function's inline
	                             asm: keeps its exact name in every partition (never
	                             renamed, never duplicated; promoted under its own
	                             name, see partition.c) */
	SF_INLINE_ASM = 1 << 11,  /* function whose inline asm names a symbol of the
	                             module: never copied to another partition */
	SF_ASM_SECTION = 1 << 12, /* in a section module asm names (by name or through
	                             __start_/__stop_): stays with the asm */
	SF_ALIAS_NAME = 1 << 13,  /* one of several names of one object (an alias or
	                             its base object) whose addresses code outside them
	                             takes under two or more names */
	SF_ALIAS_ADDR = 1 << 14,  /* takes the address of an SF_ALIAS_NAME: lives with
	                             the names, never copied or duplicated, and (when
	                             imported) carried only where the names are
	                             defined, so no partition sees two of the names as
	                             distinct declarations */
	SF_ALWAYS_INLINE = 1 << 15, /* alwaysinline (and not SF_NOINLINE): copied
	                             into every partition that calls it when
	                             partition_opts.always_inline_copies */
	SF_STABLE_LOCAL = 1 << 16, /* a numbered internal function renamed
	                             edit-stably (stabilize_local_names): name is
	                             the partitions', orig_name the object's */
};

struct sym {
	LLVMValueRef v;      /* in the analysis module */
	char *name;          /* as in the module ("" if unnamed), except the module's
	                        own ThinLTO promotions: see orig_name */
	char *orig_name;     /* NULL, or for `f.llvm.<module hash>` (ThinLTO's names
	                        for the module's own promoted locals, which change
	                        with every edit) the real name, while name is the
	                        edit-stable `f.llvm.mtpc` the partitions use */
	enum sym_kind kind;
	enum sym_role role;
	LLVMLinkage linkage;
	unsigned flags;
	int comdat;          /* index in module's comdat table, or -1 */
	long cost;           /* estimated compile cost (instructions) */
	int *refs, nrefs;    /* distinct referenced symbols, ascending */
	int *calls, ncalls;  /* distinct direct callees, ascending (subset of refs) */
	int *addr, naddr;    /* distinct symbols whose address it uses as a value:
	                        every reference but a call's callee (operands,
	                        initializers, aliasees), ascending (subset of refs) */
	int *vp, nvp;        /* indirect-call targets named by !prof value profiles */
	int unit;            /* ROLE_OWNED: its unit; else -1 */
	int base;            /* alias/ifunc: symbol of the aliasee/resolver, else -1 */
};

/* An indivisible group of owned symbols (an SCC, a comdat, an alias with its
 * aliasee, blockaddress users with their function, all symbols named by module
 * asm, all constructors, one __start_/__stop_ section). */
struct unit {
	int *syms, nsyms;   /* ascending */
	long cost;
	int *adj, nadj;     /* neighbour units, ascending */
	long *adjw;         /* edge weights (units.c, link_units, says why each) */
	int has_asm;        /* holds the symbols module asm names (or its sections) */
};

struct module_info {
	LLVMModuleRef mod;
	struct sym *syms;
	int nsyms;
	struct unit *units;
	int nunits;
	long total_cost;     /* owned units only */
	int nfuncs_defined;
	int ndead;             /* definitions found dead */
	int nvp_targets;      /* indirect-call targets recovered from value profiles */
	char *source_file;
	char *module_id;
	int has_asm;
	int nstable;          /* symbols given edit-stable names */
	int ncut_sccs;        /* SCCs cut by analyze_opts.scc_cut */
	int *tied;            /* per symbol: its union-find parent after the ties
	                         that hold whatever the count (comdats, aliases,
	                         sections, blockaddress, asm), before the SCCs
	                         (units.c, rebuild_units) */
	long scc_limit;       /* the SCC cut limit the units were built with */
	int nalias_users;     /* symbols kept with an object's names (SF_ALIAS_ADDR) */
	/* `.symver target, name@V` directives of module asm (asm_names.c): the
	 * versioned symbol takes the binding of its target, so when the target
	 * is promoted the versioned name must be made local again at the merge
	 * too. */
	struct asm_symver {
		int sym;      /* the target */
		char *name;   /* the versioned name as the object file holds it */
		int removes;  /* `@@@`: the assembler drops the target's own name */
	} *symvers;
	int nsymvers;
};

/* Enumerate the module's globals in the canonical order into *vals (heap
 * array, caller frees); returns the count. */
int sym_enumerate(LLVMModuleRef m, LLVMValueRef **vals);

/* Options of the analysis that change the result (part of the plan key). */
struct analyze_opts {
	long dup_limit;  /* largest linkonce_odr comdat (instructions) duplicated per partition */
	long join_limit; /* largest single-caller local function folded into its caller's unit */
	long local_dup_limit; /* largest static function carried by every partition that calls it */
	double join_growth; /* a unit past 1/16 of the module still takes single-caller
	                       statics up to this fraction of its own cost */
	long const_dup_limit; /* largest local constant (bytes) carried by every partition
	                         reading it; bigger ones are owned once and copied
	                         available_externally (partition.c) */
	double scc_cut;       /* a call-graph SCC costing more than scc_cut x (module cost /
	                         partitions) is not kept whole: its functions become units
	                         of their own, still tied by affinity edges (0: never) */
	int partitions;       /* the N that scc_cut divides by */
	const char *module_suffixes; /* "<suffix> <module path>" lines of the ThinLTO
	                                index (mtpc_index_suffixes), or NULL: names
	                                other modules' promoted locals stably */
	int stable_local_names; /* numbered internal functions get edit-stable names
	                           (stabilize_local_names): a compile's split only,
	                           whose join gives the names back */
	int always_inline_dup;  /* every partition calling a static alwaysinline
	                           function carries it, whatever its size (a plain
	                           compile's split: no inliner runs after the
	                           partitions', and the function's own static
	                           callees may not be copied elsewhere) */
};

/* The global value under constant casts (aliasees, llvm.used and ctor
 * entries), or NULL. */
LLVMValueRef strip_to_global(LLVMValueRef c);

/* Analyse m (owned by the caller, must outlive the info). */
void analyze_module(LLVMModuleRef m, const struct analyze_opts *opt, struct module_info *out);
void module_info_free(struct module_info *mi);

/* Display name of symbol i, as in the final object ("<name>", the real
 * `.llvm.<hash>` name, or "<anon-var-12>"; a private constant by its
 * edit-stable `<name>.k<hash>`, as the partitions hold it): heap string. */
char *sym_display_name(const struct module_info *mi, int i);

#endif
