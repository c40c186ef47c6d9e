/* proc.h: running a child command (no shell involved). */
#ifndef MTPC_NG_PROC_H
#define MTPC_NG_PROC_H

#include "buf.h"

/* Run argv (PATH searched) in directory cwd (NULL: ours) with extra
 * environment entries env ("NAME=value", may be NULL). If err is non-NULL
 * the child's stderr is captured into it (the caller decides whether to show
 * it); otherwise it is inherited. Returns the exit status, 128+signal, or 127
 * when the program cannot be started (the reason is then appended to err, or
 * printed as an error message without err). */
int proc_run(char *const *argv, const char *cwd, char *const *env, struct buf *err);

/* Absolute path of this executable (from /proc/self/exe); heap string. */
char *proc_self_path(void);

/* Find prog on PATH (or return it if it contains '/'); heap string or NULL. */
char *proc_which(const char *prog);

#endif
