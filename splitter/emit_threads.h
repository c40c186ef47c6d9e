/* emit_threads.h: build the partitions on threads.
 *
 * Each partition is built on its own thread, in its own LLVMContext (a
 * context is not thread-safe), from the module's bitcode: every thread
 * opens it lazily from one shared read-only buffer, so it loads only the
 * bodies its partition keeps. Costs the least CPU; the one serialization
 * of the module before it (the caller's) is serial time every thread
 * waits for. */
#ifndef MTPC_EMIT_THREADS_H
#define MTPC_EMIT_THREADS_H

#include "emit.h"

/* Build all job->plan->n partitions from the bitcode in (bc, len) of the
 * module job->mi describes, with up to jobs threads (the caller's among
 * them). Returns the number of threads that ran (>= 1), fills out[] (caller
 * frees each data, checksums and lines) and *run, or returns -1 with *error
 * (heap) describing the first failure. */
int emit_partitions_threaded(const char *bc, size_t len, const struct emit_job *job, int jobs, struct emitted *out,
			     struct emit_run *run, char **error);

#endif
