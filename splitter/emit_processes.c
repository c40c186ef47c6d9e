/* emit_processes.c: see emit_processes.h. */
#define _POSIX_C_SOURCE 200809L /* mkstemp */
#include "emit_processes.h"
#include "llvm_shim.h"
#include "ptrmap.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

/* A partition built in a child process: the record the child leaves at the
 * start of its temporary file, followed by the bytes it counts. */
struct child_record {
	size_t len, checksums_len, lines_len, error_len;
};

static int write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t w = write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

static char *read_bytes(FILE *f, size_t n)
{
	char *s = xmalloc(n + 1);
	if (fread(s, 1, n, f) != n) {
		free(s);
		return NULL;
	}
	s[n] = 0;
	return s;
}

/* What a child copies as definitions (clone_defines). */
struct clone_filter {
	const struct module_info *mi;
	const unsigned char *member; /* the partition's plan->member[p] */
	ptrmap index;                /* global of m -> its symbol index */
};

/* mtpc_clone_module's filter: what the partition defines, carries or copies,
 * and every alias, ifunc and llvm.* array (emit_transform decides about those,
 * and they must keep their place in the module's order). */
static int clone_defines(LLVMValueRef g, void *arg)
{
	struct clone_filter *cf = arg;
	int i = ptrmap_get(&cf->index, g, -1);
	if (i < 0)
		return 1;
	const struct sym *s = &cf->mi->syms[i];
	if (s->kind == SYM_ALIAS || s->kind == SYM_IFUNC || s->role == ROLE_SPECIAL)
		return 1;
	return cf->member[i] >= M_CARRY;
}

/* In the child: copy from m what partition p defines or copies (the rest
 * become declarations), make that partition of the copy and leave the
 * record in fd. Copying a part touches far fewer of the pages the child
 * shares with the parent than deleting the rest of m would, and each page
 * written is a page copied. Never returns: _exit runs no destructor or
 * atexit handler, which are the parent's business (and would free, page by
 * page, what the child's exit drops at once). */
static void child_build(LLVMModuleRef m, const struct emit_job *job, int p, int fd)
{
	struct emitted out = {0};
	struct clone_filter cf = {job->mi, job->plan->member[p], {0}};
	LLVMValueRef *vals;
	int n = sym_enumerate(m, &vals);
	ptrmap_init(&cf.index);
	for (int i = 0; i < n; i++)
		ptrmap_put(&cf.index, vals[i], i);
	LLVMModuleRef part = mtpc_clone_module(m, clone_defines, &cf);
	char *err = emit_partition(part, job, p, &out);
	if (err)
		out.len = 0;
	struct child_record r = {out.len, out.checksums ? strlen(out.checksums) : 0,
				 out.lines ? strlen(out.lines) : 0, err ? strlen(err) : 0};
	int bad = write_all(fd, &r, sizeof r) < 0 || write_all(fd, out.data, r.len) < 0 ||
		  write_all(fd, out.checksums, r.checksums_len) < 0 || write_all(fd, out.lines, r.lines_len) < 0 ||
		  write_all(fd, err, r.error_len) < 0;
	_exit(bad ? 2 : 0);
}

/* In the parent: read what the child of partition p left in f (its exit
 * status: wstatus). Returns NULL or an error (heap). */
static char *collect_child(FILE *f, int wstatus, int p, int debug, struct emitted *out)
{
	if (!WIFEXITED(wstatus))
		return xasprintf("partition %d: its process died of signal %d", p, WTERMSIG(wstatus));
	struct child_record r;
	rewind(f);
	if (WEXITSTATUS(wstatus) != 0 || fread(&r, sizeof r, 1, f) != 1)
		return xasprintf("partition %d: its process could not write its result (exit status %d)", p,
				 WEXITSTATUS(wstatus));
	out->len = r.len;
	out->data = read_bytes(f, r.len);
	if (debug & EMIT_PLACEHOLDER_CHECKSUMS)
		out->checksums = read_bytes(f, r.checksums_len);
	else
		fseek(f, (long)r.checksums_len, SEEK_CUR);
	if (debug & EMIT_VIRTUAL_LINES)
		out->lines = read_bytes(f, r.lines_len);
	else
		fseek(f, (long)r.lines_len, SEEK_CUR);
	char *err = read_bytes(f, r.error_len);
	if (!err)
		return xasprintf("partition %d: its result is truncated", p);
	if (r.error_len)
		return err;
	free(err);
	if (!out->data || ((debug & EMIT_PLACEHOLDER_CHECKSUMS) && !out->checksums) ||
	    ((debug & EMIT_VIRTUAL_LINES) && !out->lines))
		return xasprintf("partition %d: its result is truncated", p);
	return NULL;
}

/* User + system CPU seconds of the children reaped so far. */
static double children_cpu(void)
{
	struct rusage ru;
	if (getrusage(RUSAGE_CHILDREN, &ru) < 0)
		return 0;
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
}

/* A temporary file in dir, already unlinked (the disk of the outputs, not
 * /tmp's); NULL with errno set on failure. */
static FILE *unlinked_temp(const char *dir)
{
	char *path = xasprintf("%s/.emit-XXXXXX", dir);
	int fd = mkstemp(path);
	FILE *f = NULL;
	if (fd >= 0) {
		unlink(path);
		f = fdopen(fd, "w+b");
		if (!f)
			close(fd);
	}
	free(path);
	return f;
}

/* The forked emission: what one partition's child needs, and where the
 * children stand. */
struct children {
	LLVMModuleRef m;
	const struct emit_job *job;
	const char *tmpdir;
	int n;             /* partitions */
	int jobs;          /* children at most at once (lowered when fork is refused) */
	int next;          /* the next partition to start */
	int running;       /* children not reaped yet */
	FILE **files;      /* per partition: the child's result */
	pid_t *pids;       /* per partition: its child */
	double *started;   /* per partition: when its child started */
	char **errors;     /* per partition: its error (heap) or NULL */
	double reaped_cpu; /* CPU seconds of the children reaped so far */
};

/* Start the child of partition c->next. Returns 1 when that partition is
 * done with (its child runs, or its error is set), 0 when the system has
 * no room for another process now: then the partition waits for a running
 * child to end, and fewer run at once from then on. */
static int start_child(struct children *c, struct emit_run *run)
{
	int p = c->next++;
	c->files[p] = unlinked_temp(c->tmpdir);
	if (!c->files[p]) {
		c->errors[p] = xasprintf("partition %d: cannot create a temporary file: %s", p, strerror(errno));
		return 1;
	}
	c->started[p] = mtpc_now();
	double f0 = mtpc_now();
	c->pids[p] = fork();
	if (c->pids[p] > 0)
		run->serial_seconds += mtpc_now() - f0;
	if (c->pids[p] == 0)
		child_build(c->m, c->job, p, fileno(c->files[p]));
	if (c->pids[p] < 0) {
		int e = errno;
		if (c->running > 0 && (e == EAGAIN || e == ENOMEM)) {
			/* Out of processes or memory for now (a pids limit, say). */
			fclose(c->files[p]);
			c->files[p] = NULL;
			c->next--;
			c->jobs = c->running;
			return 0;
		}
		c->errors[p] = xasprintf("partition %d: cannot fork: %s", p, strerror(e));
		return 1;
	}
	c->running++;
	return 1;
}

/* Wait for a child to end and collect its partition into out. Returns -1
 * when there is no child to wait for (cannot happen while running > 0),
 * else 0. */
static int reap_child(struct children *c, struct emitted *out)
{
	int ws;
	pid_t pid = waitpid(-1, &ws, 0);
	if (pid < 0)
		return errno == EINTR ? 0 : -1;
	int p = 0;
	while (p < c->n && c->pids[p] != pid)
		p++;
	if (p == c->n)
		return 0; /* not ours */
	c->running--;
	out[p].seconds = mtpc_now() - c->started[p];
	/* The children reaped so far, less those before: this one. */
	double cpu = children_cpu();
	out[p].cpu_seconds = cpu - c->reaped_cpu;
	c->reaped_cpu = cpu;
	c->errors[p] = collect_child(c->files[p], ws, p, c->job->debug, &out[p]);
	return 0;
}

int emit_partitions_forked(LLVMModuleRef m, const struct emit_job *job, int jobs, const char *tmpdir,
			   struct emitted *out, struct emit_run *run, char **error)
{
	int n = job->plan->n;
	memset(out, 0, n * sizeof *out);
	if (jobs < 1)
		jobs = 1;
	if (jobs > n)
		jobs = n;
	*run = (struct emit_run){jobs, 1, 0};
	struct children c = {m, job, tmpdir, n, jobs, 0, 0,
			     xcalloc(n, sizeof *c.files), xcalloc(n, sizeof *c.pids),
			     xcalloc(n, sizeof *c.started), xcalloc(n, sizeof *c.errors), 0};
	fflush(NULL); /* nothing buffered is written twice */
	c.reaped_cpu = children_cpu();
	while (c.next < n || c.running) {
		while (c.next < n && c.running < c.jobs && start_child(&c, run))
			;
		if (!c.running || reap_child(&c, out) < 0)
			break;
	}
	for (int p = 0; p < n; p++)
		if (c.files[p])
			fclose(c.files[p]);
	free(c.files);
	free(c.pids);
	free(c.started);
	return emit_finish_run(c.errors, out, n, c.jobs, error);
}
