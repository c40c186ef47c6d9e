/* buf.c: see buf.h. */
#include "buf.h"
#include "util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void grow(struct buf *b, size_t extra)
{
	if (b->len + extra + 1 <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 64;
	while (cap < b->len + extra + 1)
		cap *= 2;
	b->s = xrealloc(b->s, cap);
	b->cap = cap;
}

void buf_addn(struct buf *b, const char *s, size_t n)
{
	grow(b, n);
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = 0;
}

void buf_add(struct buf *b, const char *s) { buf_addn(b, s, strlen(s)); }

void buf_addc(struct buf *b, char c) { buf_addn(b, &c, 1); }

void buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap, ap2;
	va_start(ap, fmt);
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	grow(b, (size_t)n);
	vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap2);
	va_end(ap2);
	b->len += (size_t)n;
}

void buf_free(struct buf *b)
{
	free(b->s);
	b->s = NULL;
	b->len = b->cap = 0;
}

void strv_addown(struct strv *sv, char *s)
{
	if (sv->n + 2 > sv->cap) {
		sv->cap = sv->cap ? sv->cap * 2 : 16;
		sv->v = xrealloc(sv->v, sv->cap * sizeof *sv->v);
	}
	sv->v[sv->n++] = s;
	sv->v[sv->n] = NULL;
}

void strv_add(struct strv *sv, const char *s) { strv_addown(sv, xstrdup(s)); }

void strv_addl(struct strv *sv, ...)
{
	va_list ap;
	va_start(ap, sv);
	for (const char *s; (s = va_arg(ap, const char *));)
		strv_add(sv, s);
	va_end(ap);
}

void strv_addv(struct strv *sv, const struct strv *other)
{
	for (size_t i = 0; i < other->n; i++)
		strv_add(sv, other->v[i]);
}

void strv_free(struct strv *sv)
{
	for (size_t i = 0; i < sv->n; i++)
		free(sv->v[i]);
	free(sv->v);
	sv->v = NULL;
	sv->n = sv->cap = 0;
}
