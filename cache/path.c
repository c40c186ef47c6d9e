/* path.c: where the plan cache lives. One rule for the build and the CLI, so
 * that `mtpc-cache` inspects the database the build actually writes. */
#define _POSIX_C_SOURCE 200809L
#include "mtpc_cache.h"
#include "util.h"

#include <pwd.h>
#include <stdlib.h>
#include <unistd.h>

char *mtpc_cache_resolve_path(const char *explicit_path, const char **source)
{
	const char *src, *v;
	char *path;

	if (explicit_path && *explicit_path) {
		src = "option";
		path = xstrdup(explicit_path);
	} else if ((v = getenv("MTPC_CACHE")) && *v) {
		src = "MTPC_CACHE";
		path = xstrdup(v);
	} else if ((v = getenv("XDG_CACHE_HOME")) && *v) {
		src = "XDG_CACHE_HOME";
		path = xasprintf("%s/mtpc/plans.sqlite", v);
	} else {
		/* No $HOME (some build sandboxes): fall back to the password
		 * database, which is what $HOME would normally say. */
		const struct passwd *pw;
		src = "HOME";
		if (!(v = getenv("HOME")) || !*v)
			v = (pw = getpwuid(getuid())) && pw->pw_dir ? pw->pw_dir : "/tmp";
		path = xasprintf("%s/.cache/mtpc/plans.sqlite", v);
	}
	if (source)
		*source = src;
	return path;
}
