/* ar.c: see ar.h. */
#define _POSIX_C_SOURCE 200809L
#include "ar.h"
#include "bitcode.h"
#include "linkcmd.h"
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define AR_HDR 60

/* Trim trailing spaces of a fixed-width header field into a fresh string. */
static char *field(const char *p, size_t w)
{
	while (w && p[w - 1] == ' ')
		w--;
	char *s = xmalloc(w + 1);
	memcpy(s, p, w);
	s[w] = 0;
	return s;
}

/* Member names become file names: keep only the last path component and
 * replace anything odd, the index prefix keeps duplicates apart. */
static char *safe_name(const char *name)
{
	const char *slash = strrchr(name, '/');
	char *s = xstrdup(slash ? slash + 1 : name);
	for (char *p = s; *p; p++)
		if (*p == '/' || *p == '\n' || *p == '\r')
			*p = '_';
	return s;
}

int ar_extract(const char *archive, const char *destdir, struct strv *members, int *bitcode)
{
	char *data;
	size_t len;
	*bitcode = 0;
	if (mtpc_read_file(archive, &data, &len) < 0) {
		mtpc_error("cannot read archive %s: %s", archive, strerror(errno));
		return -1;
	}
	int thin = len >= 8 && !memcmp(data, "!<thin>\n", 8);
	if (len < 8 || (!thin && memcmp(data, "!<arch>\n", 8))) {
		mtpc_error("%s: not an archive", archive);
		free(data);
		return -1;
	}
	char *dir = NULL; /* thin members are relative to the archive */
	if (thin) {
		const char *slash = strrchr(archive, '/');
		dir = slash ? xasprintf("%.*s", (int)(slash - archive + 1), archive) : xstrdup("");
	} else if (mtpc_mkdir_p(destdir) < 0) {
		mtpc_error("cannot create %s: %s", destdir, strerror(errno));
		free(data);
		return -1;
	}
	const char *longnames = NULL;
	size_t longlen = 0, pos = 8;
	int index = 0, ret = 0;
	while (pos + AR_HDR <= len) {
		const char *h = data + pos;
		if (h[58] != '`' || h[59] != '\n') {
			mtpc_error("%s: corrupt archive header at offset %zu", archive, pos);
			ret = -1;
			break;
		}
		char *sz = field(h + 48, 10);
		size_t size = strtoull(sz, NULL, 10);
		free(sz);
		char *raw = field(h, 16);
		const char *body = h + AR_HDR;
		size_t bodylen = size;
		char *name = NULL;
		int special = 0;
		if (!strcmp(raw, "/") || !strcmp(raw, "/SYM64/") || !strcmp(raw, "__.SYMDEF") ||
		    !strcmp(raw, "__.SYMDEF SORTED")) {
			special = 1;
		} else if (!strcmp(raw, "//")) {
			longnames = body;
			longlen = size;
			special = 1;
		} else if (raw[0] == '/' && raw[1] >= '0' && raw[1] <= '9') {
			size_t off = strtoull(raw + 1, NULL, 10);
			if (!longnames || off >= longlen) {
				mtpc_error("%s: bad long member name %s", archive, raw);
				free(raw);
				ret = -1;
				break;
			}
			const char *e = longnames + off;
			while (e < longnames + longlen && *e != '\n')
				e++;
			size_t nl = (size_t)(e - (longnames + off));
			if (nl && longnames[off + nl - 1] == '/')
				nl--;
			name = xasprintf("%.*s", (int)nl, longnames + off);
		} else if (!strncmp(raw, "#1/", 3)) {
			size_t nl = strtoull(raw + 3, NULL, 10);
			if (nl > size) {
				mtpc_error("%s: bad BSD member name", archive);
				free(raw);
				ret = -1;
				break;
			}
			name = xasprintf("%.*s", (int)strnlen(body, nl), body);
			body += nl;
			bodylen -= nl;
		} else {
			size_t nl = strlen(raw);
			if (nl && raw[nl - 1] == '/')
				nl--;
			name = xasprintf("%.*s", (int)nl, raw);
		}
		free(raw);
		/* Thin archives store no member data (except the tables). */
		size_t stored = thin && !special ? 0 : size;
		if (pos + AR_HDR + stored > len) {
			mtpc_error("%s: truncated archive", archive);
			free(name);
			ret = -1;
			break;
		}
		if (!special) {
			if (thin) {
				char *path = name[0] == '/' ? xstrdup(name) : xasprintf("%s%s", dir, name);
				if (linkcmd_file_kind(path) == IN_BITCODE)
					*bitcode = 1;
				strv_addown(members, path);
			} else {
				char *base = safe_name(name);
				char *path = xasprintf("%s/%d-%s", destdir, index, base);
				free(base);
				if (mtpc_is_bitcode(body, bodylen))
					*bitcode = 1;
				if (mtpc_write_file(path, body, bodylen, MTPC_WRITE_IF_CHANGED) < 0) {
					mtpc_error("cannot write %s: %s", path, strerror(errno));
					free(path);
					free(name);
					ret = -1;
					break;
				}
				strv_addown(members, path);
			}
			index++;
		}
		free(name);
		pos += AR_HDR + stored + (stored & 1);
	}
	if (ret == 0 && pos < len && strspn(data + pos, "\n") < len - pos) {
		mtpc_error("%s: truncated archive", archive);
		ret = -1;
	}
	free(dir);
	free(data);
	return ret;
}
