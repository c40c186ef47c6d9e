/* emit_processes.h: build the partitions in forked processes.
 *
 * Each partition is built in a child process from its copy-on-write view
 * of the parsed module: m's context is not thread-safe, and a process
 * needs no bitcode to start from. The child copies what its partition
 * defines or copies (touching far fewer of the shared pages than deleting
 * the rest would), builds the partition and hands it back through an
 * unlinked temporary file. Gives the same bytes as emit_threads.h; costs
 * more CPU per partition, but the caller need not serialize m first. */
#ifndef MTPC_EMIT_PROCESSES_H
#define MTPC_EMIT_PROCESSES_H

#include "emit.h"

/* Build all job->plan->n partitions of the parsed module m (which job->mi
 * describes) in forked children, up to jobs at once (fewer while the
 * system refuses more processes), each handing its result back through an
 * unlinked temporary file in tmpdir (the outputs' disk, not /tmp's). m is
 * not changed. out, *run and *error as for emit_partitions_threaded.
 * Returns how many processes it let run at once in the end (>= 1), or -1. */
int emit_partitions_forked(LLVMModuleRef m, const struct emit_job *job, int jobs, const char *tmpdir,
			   struct emitted *out, struct emit_run *run, char **error);

#endif
