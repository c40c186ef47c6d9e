/* emit_threads.c: see emit_threads.h. */
#define _POSIX_C_SOURCE 200809L /* CLOCK_THREAD_CPUTIME_ID */
#include "emit_threads.h"
#include "util.h"

#include <llvm-c/BitReader.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* What the threads share: the input, read-only, and the next partition to
 * build, under lock. */
struct shared {
	const char *bc;
	size_t len;
	const struct emit_job *job;
	struct emitted *out;
	char **errors; /* per partition */
	int next;
	pthread_mutex_t lock;
};

/* CPU seconds of the calling thread: unlike wall time, not stretched by
 * the other threads (or processes) that share the cores. */
static double thread_cpu_now(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) < 0)
		return 0;
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Partition p on the calling thread, in a context of its own, from the
 * shared bitcode. Returns NULL or an error (heap). */
static char *build_partition(struct shared *sh, int p, struct emitted *out)
{
	double t0 = mtpc_now(), c0 = thread_cpu_now();
	char *diag = NULL, *err = NULL;
	LLVMContextRef ctx = LLVMContextCreate();
	LLVMContextSetDiagnosticHandler(ctx, emit_capture_error, &diag);
	LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRange(sh->bc, sh->len, "input", 0);
	LLVMModuleRef m = NULL;
	/* The lazy module takes the (non-owning) buffer object over. */
	if (LLVMGetBitcodeModuleInContext2(ctx, buf, &m)) {
		err = xasprintf("cannot re-read the module: %s", diag ? diag : "unknown error");
		LLVMDisposeMemoryBuffer(buf);
		goto done;
	}
	err = emit_partition(m, sh->job, p, out);
done:
	if (m)
		LLVMDisposeModule(m);
	LLVMContextDispose(ctx);
	free(diag);
	out->seconds = mtpc_now() - t0;
	out->cpu_seconds = thread_cpu_now() - c0;
	return err;
}

/* A thread: takes the next partition until none is left. */
static void *worker(void *arg)
{
	struct shared *sh = arg;
	for (;;) {
		pthread_mutex_lock(&sh->lock);
		int p = sh->next++;
		pthread_mutex_unlock(&sh->lock);
		if (p >= sh->job->plan->n)
			return NULL;
		sh->errors[p] = build_partition(sh, p, &sh->out[p]);
	}
}

int emit_partitions_threaded(const char *bc, size_t len, const struct emit_job *job, int jobs, struct emitted *out,
			     struct emit_run *run, char **error)
{
	int n = job->plan->n;
	struct shared sh = {bc, len, job, out, xcalloc(n, sizeof(char *)), 0, PTHREAD_MUTEX_INITIALIZER};
	memset(out, 0, n * sizeof *out);
	if (jobs < 1)
		jobs = 1;
	if (jobs > n)
		jobs = n;
	pthread_t *th = xmalloc(jobs * sizeof *th);
	int started = 0;
	for (int t = 1; t < jobs; t++)
		if (pthread_create(&th[t], NULL, worker, &sh) == 0)
			started = t;
		else
			break;
	worker(&sh);
	for (int t = 1; t <= started; t++)
		pthread_join(th[t], NULL);
	free(th);
	*run = (struct emit_run){started + 1, 0, 0};
	return emit_finish_run(sh.errors, out, n, started + 1, error);
}

