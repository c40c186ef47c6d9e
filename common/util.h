/* util.h: small helpers shared by every MTPC tool.
 *
 * Errors are reported as one line "<prog>: <message>" on stderr; the program
 * name is set once by mtpc_set_progname(). Files that another build step reads
 * are always written through mtpc_write_file(), which is atomic (temp file in
 * the same directory + rename) and can skip the write when the content is
 * unchanged, so that Ninja's restat sees an unchanged mtime. */
#ifndef MTPC_UTIL_H
#define MTPC_UTIL_H

#include <stddef.h>
#include <stdarg.h>

void mtpc_set_progname(const char *argv0);
const char *mtpc_progname(void);

/* Print "<progname> <MTPC version> (LLVM <major>)" on stdout: every tool's
 * --version. */
void mtpc_print_version(void);

/* Print "<prog>: warning: ..." / "<prog>: error: ..." and a newline. */
void mtpc_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void mtpc_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* mtpc_error() then exit(1). */
_Noreturn void mtpc_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Allocation that never returns NULL (exits on out-of-memory). */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
/* printf into a fresh heap string. */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Read a whole file. Returns 0 and sets *data (NUL-terminated, caller frees)
 * and *len, or -1 with errno set. */
int mtpc_read_file(const char *path, char **data, size_t *len);

/* Flags for mtpc_write_file(). */
enum {
	MTPC_WRITE_IF_CHANGED = 1, /* leave the file alone if it already holds data */
};

/* Atomically replace path with data. Returns 1 if the file was written, 0 if
 * MTPC_WRITE_IF_CHANGED found it identical, -1 with errno set on failure (the
 * old file, if any, is then untouched and no temp file is left behind). */
int mtpc_write_file(const char *path, const void *data, size_t len, int flags);

/* Copy from to to with mtpc_write_file(flags): atomic, and with
 * MTPC_WRITE_IF_CHANGED left alone when identical. Returns 0, or -1 after
 * one error message naming the file that could not be read or written. */
int mtpc_copy_file(const char *from, const char *to, int flags);

/* mkdir -p. Returns 0 or -1 with errno set. */
int mtpc_mkdir_p(const char *path);

/* Parse a whole decimal integer in [lo, hi] into *out. Returns 0, or -1
 * after one error "<opt>: expected an integer in [lo, hi], got 'S'" (no
 * suffixes, no trailing text: "1M" and "abc" are errors, not 1 and 0). */
int mtpc_parse_ll(const char *opt, const char *s, long long lo, long long hi, long long *out);

/* The part of path after its last '/' (path itself without one). */
const char *mtpc_base_name(const char *path);

/* Seconds from a monotonic clock, and CPU seconds of this process. */
double mtpc_now(void);
double mtpc_cpu_time(void);

#endif
