/* ninja_write.c: see ninja_write.h. */
#include "ninja_write.h"

#include <string.h>

int nw_path(struct buf *b, const char *s)
{
	for (; *s; s++) {
		if (*s == '\n' || *s == '\r')
			return -1;
		if (*s == '$' || *s == ' ' || *s == ':')
			buf_addc(b, '$');
		buf_addc(b, *s);
	}
	return 0;
}

/* Characters that never need shell quoting. */
static int shell_safe(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			    "0123456789_-+=/.,:@%^", *s))
			return 0;
	return 1;
}

int nw_shell_word(struct buf *b, const char *s)
{
	if (strpbrk(s, "\n\r"))
		return -1;
	if (shell_safe(s)) {
		buf_add(b, s);
		return 0;
	}
	buf_addc(b, '\'');
	for (; *s; s++) {
		if (*s == '\'')
			buf_add(b, "'\\''");
		else
			buf_addc(b, *s);
	}
	buf_addc(b, '\'');
	return 0;
}

int nw_value(struct buf *b, const char *s)
{
	for (; *s; s++) {
		if (*s == '\n' || *s == '\r')
			return -1;
		if (*s == '$')
			buf_addc(b, '$');
		buf_addc(b, *s);
	}
	return 0;
}

int nw_cmd_word(struct buf *b, const char *s)
{
	struct buf q = {0};
	int r = nw_shell_word(&q, s);
	if (r == 0)
		r = nw_value(b, q.s);
	buf_free(&q);
	return r;
}

int nw_cmd_words(struct buf *b, char *const *argv)
{
	for (size_t i = 0; argv[i]; i++) {
		if (i)
			buf_addc(b, ' ');
		if (nw_cmd_word(b, argv[i]) < 0)
			return -1;
	}
	return 0;
}

int nw_build2(struct buf *b, char *const *outs, char *const *iouts, const char *rule,
		       char *const *ins, char *const *implicit, char *const *order)
{
	int r = 0;
	buf_add(b, "build");
	for (size_t i = 0; outs && outs[i]; i++) {
		buf_addc(b, ' ');
		r |= nw_path(b, outs[i]);
	}
	if (iouts && iouts[0]) {
		buf_add(b, " |");
		for (size_t i = 0; iouts[i]; i++) {
			buf_addc(b, ' ');
			r |= nw_path(b, iouts[i]);
		}
	}
	buf_printf(b, ": %s", rule);
	for (size_t i = 0; ins && ins[i]; i++) {
		buf_addc(b, ' ');
		r |= nw_path(b, ins[i]);
	}
	if (implicit && implicit[0]) {
		buf_add(b, " |");
		for (size_t i = 0; implicit[i]; i++) {
			buf_addc(b, ' ');
			r |= nw_path(b, implicit[i]);
		}
	}
	if (order && order[0]) {
		buf_add(b, " ||");
		for (size_t i = 0; order[i]; i++) {
			buf_addc(b, ' ');
			r |= nw_path(b, order[i]);
		}
	}
	buf_addc(b, '\n');
	return r;
}

int nw_build(struct buf *b, char *const *outs, const char *rule, char *const *ins,
		      char *const *implicit, char *const *order)
{
	return nw_build2(b, outs, NULL, rule, ins, implicit, order);
}

int nw_cmd_var(struct buf *b, const char *name, char *const *argv)
{
	buf_printf(b, "  %s = ", name);
	int r = nw_cmd_words(b, argv);
	buf_addc(b, '\n');
	return r;
}
