/* buf.h: growable byte strings and string vectors.
 *
 * mtpc-link builds command lines, Ninja files and dyndep files in memory
 * before writing them with mtpc_write_file(), so that unchanged content never
 * touches the file (Ninja's restat depends on that); proc.h captures a
 * child's stderr into one. */
#ifndef MTPC_BUF_H
#define MTPC_BUF_H

#include <stddef.h>

/* A NUL-terminated growable string; zero-initialize ({0}) before use. */
struct buf {
	char *s;
	size_t len, cap;
};

void buf_add(struct buf *b, const char *s);
void buf_addn(struct buf *b, const char *s, size_t n);
void buf_addc(struct buf *b, char c);
void buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void buf_free(struct buf *b);

/* A NULL-terminated vector of heap strings (usable as an argv). */
struct strv {
	char **v;
	size_t n, cap;
};

void strv_add(struct strv *sv, const char *s);     /* adds a copy */
void strv_addown(struct strv *sv, char *s);        /* takes ownership */
void strv_addv(struct strv *sv, const struct strv *other);
/* Adds copies of each argument up to a NULL: argv words in one statement. */
void strv_addl(struct strv *sv, ...);
void strv_free(struct strv *sv);

#endif
