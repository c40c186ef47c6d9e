/* emit.h: materialize partitions, in one of two ways. Each partition is
 * built either on its own thread in its own LLVMContext from the module's
 * bitcode (opened lazily from one shared read-only buffer: only the bodies it
 * keeps are loaded), or in its own forked process from the parsed module;
 * then transformed per the plan, cleaned with GlobalDCE, verified and
 * serialized to memory. No output is written here, so a failure leaves the
 * output directory as it was. */
#ifndef MTPC_EMIT_H
#define MTPC_EMIT_H

#include "analyze.h"
#include "partition.h"

#include <stddef.h>

/* LLVMContext diagnostic handler that keeps the first error's text in
 * *(char **)ctx (heap) instead of letting LLVM print it and exit. */
void emit_capture_error(LLVMDiagnosticInfoRef di, void *ctx);

struct emitted {
	char *data;     /* bitcode of the partition */
	size_t len;
	char *checksums; /* with EMIT_PLACEHOLDER_CHECKSUMS: its "<placeholder>
	                  * <real>" lines (mtpc_placeholder_checksums), else NULL */
	char *lines;     /* with EMIT_VIRTUAL_LINES: its map of virtual to real
	                  * lines (mtpc_virtual_lines), else NULL */
	double seconds; /* wall time to build it */
	double cpu_seconds; /* CPU time of the thread that built it: unlike
	                     * seconds, not stretched by waiting for a core
	                     * (mtpc-split --stats) */
};

/* What emit_partitions does to the debug info, so that a partition's
 * bitcode changes only when its code does (llvm_shim.h says why). */
enum {
	EMIT_PLACEHOLDER_CHECKSUMS = 1, /* source files get placeholder checksums */
	EMIT_VIRTUAL_LINES = 2,         /* source lines become virtual lines */
};

/* How emit_partitions or emit_partitions_forked ran (mtpc-split --stats). */
struct emit_run {
	int workers;         /* threads or processes at most at once */
	int processes;       /* 1: a process per partition, 0: threads */
	double serial_seconds; /* time in the emission that no core count
	                        * shortens: starting the processes one after
	                        * another, or serializing the module for the
	                        * threads (mtpc-split's emit() adds that) */
};

/* Build all plan->n partitions from the bitcode in (bc, len) with up to jobs
 * threads. verify: run the LLVM verifier on each; debug: EMIT_* flags.
 * Returns the number of threads that ran (>= 1), fills out[] (caller frees
 * each data, checksums and lines) and *run, or returns -1 with *error (heap)
 * describing the first failure. */
int emit_partitions(const char *bc, size_t len, const struct module_info *mi, const struct split_plan *plan,
		    int jobs, int verify, int debug, struct emitted *out, struct emit_run *run, char **error);

/* The same from the parsed module m itself: each partition is built in a
 * forked child process, up to jobs at once, from its copy-on-write view of m
 * (m's context is not thread-safe, and a process needs no bitcode to start
 * from), and comes back through an unlinked temporary file in tmpdir. Gives
 * byte-identical partitions; costs more CPU per partition, but the caller
 * need not serialize m first. m is not changed. Same return values. */
int emit_partitions_forked(LLVMModuleRef m, const struct module_info *mi, const struct split_plan *plan,
			   int jobs, int verify, int debug, const char *tmpdir, struct emitted *out,
			   struct emit_run *run, char **error);

#endif
