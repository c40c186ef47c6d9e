/* emit.h: materialize partitions: what both ways of building them share.
 *
 * A partition is built from a whole copy of the module (emit_partition): it
 * becomes partition p per the plan (each symbol defined, copied, carried,
 * declared or dropped, promoted names given, then GlobalDCE), is verified,
 * gives its debug-info maps and is serialized to memory. Where the copy
 * comes from is the way of
 * building: a thread reads it lazily from the module's bitcode
 * (emit_threads.h: least CPU), or a forked process copies its part of the
 * parsed module (emit_processes.h: nothing serial); both give the same
 * bytes. No output is written here, so a failure leaves the output
 * directory as it was. */
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

/* What the emission does to the debug info, so that a partition's
 * bitcode changes only when its code does (llvm_shim.h says why). */
enum {
	EMIT_PLACEHOLDER_CHECKSUMS = 1, /* source files get placeholder checksums */
	EMIT_VIRTUAL_LINES = 2,         /* source lines become virtual lines */
};

/* How an emission ran (mtpc-split --stats). */
struct emit_run {
	int workers;         /* threads or processes at most at once */
	int processes;       /* 1: a process per partition, 0: threads */
	double serial_seconds; /* time in the emission that no core count
	                        * shortens: starting the processes one after
	                        * another, or serializing the module for the
	                        * threads (mtpc-split's emit() adds that) */
};

/* What building any partition of one split needs. */
struct emit_job {
	const struct module_info *mi;  /* the analysed module */
	const struct split_plan *plan;
	int verify;                    /* run the LLVM verifier on each partition */
	int debug;                     /* EMIT_* flags */
};

/* The common entry of both ways: turn m, a whole copy of the analysed
 * module whose globals enumerate the same (checked: else an error), into
 * partition p of job->plan, then verify it (job->verify), take the
 * debug-info maps job->debug asks for, and serialize it into out (data,
 * len, checksums, lines). m may be opened lazily: only the bodies p keeps
 * are loaded before the rest is dropped. Returns NULL or an error (heap). */
char *emit_partition(LLVMModuleRef m, const struct emit_job *job, int p, struct emitted *out);

/* The end of an emission of n partitions, either way: *error = the first
 * partition's error, if any (the others freed, with errors itself), and
 * then nothing of out[] kept. Returns rc, or -1 after an error. */
int emit_finish_run(char **errors, struct emitted *out, int n, int rc, char **error);

#endif
