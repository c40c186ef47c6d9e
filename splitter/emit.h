/* emit.h: materialize partitions. Each partition is built on its own thread
 * in its own LLVMContext from the input bitcode (opened lazily from one
 * shared read-only buffer: only the bodies it keeps are loaded), transformed per the plan, cleaned with GlobalDCE,
 * verified and serialized to memory. Nothing touches the disk here, so a
 * failure leaves the output directory as it was. */
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

/* Build all plan->n partitions from the bitcode in (bc, len) with up to jobs
 * threads. verify: run the LLVM verifier on each; debug: EMIT_* flags.
 * Returns the number of threads that ran (>= 1) and fills out[] (caller
 * frees each data, checksums and lines), or -1 with *error (heap)
 * describing the first failure. */
int emit_partitions(const char *bc, size_t len, const struct module_info *mi, const struct split_plan *plan,
		    int jobs, int verify, int debug, struct emitted *out, char **error);

#endif
