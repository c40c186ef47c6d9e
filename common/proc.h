/* proc.h: running a child command (no shell involved), the one fork/exec of
 * MTPC: mtpc-link's steps run compilers and linkers through it, mtpc-cache
 * runs Graphviz. */
#ifndef MTPC_PROC_H
#define MTPC_PROC_H

#include "buf.h"

#include <stddef.h>

/* What a child gets besides its argv; zero-initialize for the defaults. */
struct proc_io {
	const char *cwd;  /* run in this directory (NULL: ours) */
	char *const *env; /* extra "NAME=value" entries (NULL: none) */
	const char *in;   /* bytes fed to its stdin (NULL: stdin inherited) */
	size_t in_len;
	struct buf *out;  /* its stdout is captured here (NULL: inherited) */
	struct buf *err;  /* its stderr is captured here (NULL: inherited) */
	/* If non-NULL: called whenever more of the child's stdout arrived in
	 * out, while it runs (it may consume what it has read from out). */
	void (*on_out)(void *arg, struct buf *out);
	void *on_out_arg;
	double *cpu;      /* if non-NULL: set to the user + system CPU seconds of
	                   * the child and the descendants it waited for (steadier
	                   * than wall time on a loaded machine) */
};

/* Run argv (PATH searched) with io (NULL: all defaults) and wait for it.
 * Returns the exit status, 128+signal, or 127 when the program cannot be
 * started (the reason is then appended to io->err, or printed as an error
 * message without it). Input the child does not read is dropped (no
 * SIGPIPE here: its exit status tells). */
int proc_spawn(char *const *argv, const struct proc_io *io);

/* proc_spawn() with only cwd, env and err set (all may be NULL). */
int proc_run(char *const *argv, const char *cwd, char *const *env, struct buf *err);

/* Absolute path of this executable (from /proc/self/exe); heap string. */
char *proc_self_path(void);

/* Find prog on PATH (or return it if it contains '/'); heap string or NULL. */
char *proc_which(const char *prog);

#endif
