/* Unit tests for common/: util.c, hash.c, proc.c, bitcode.c. Prints "N passed,
 * N failed". */
#include "bitcode.h"
#include "hash.h"
#include "proc.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "check.h"

/* Run `sh -c script` through proc_spawn with stdin from in (may be NULL) and
 * stderr into err. */
static int sh(const char *script, const char *cwd, char *const *env, const char *in, size_t in_len,
	      struct buf *err)
{
	char *argv[] = {"sh", "-c", (char *)script, NULL};
	struct proc_io io = {.cwd = cwd, .env = env, .in = in, .in_len = in_len, .err = err};
	return proc_spawn(argv, &io);
}

static void test_proc(const char *dir)
{
	struct buf err = {0};
	/* Exit status and stderr capture. */
	CHECK(sh("echo oops >&2; exit 3", NULL, NULL, NULL, 0, &err) == 3);
	CHECK(err.s && strcmp(err.s, "oops\n") == 0);
	buf_free(&err);
	/* Death by a signal: 128 + its number, as a shell says. */
	CHECK(sh("kill -TERM $$", NULL, NULL, NULL, 0, NULL) == 128 + 15);
	/* A program that cannot start: 127, the reason in the capture. */
	char *missing[] = {"/nonexistent/mtpc-no-such-tool", NULL};
	CHECK(proc_run(missing, NULL, NULL, &err) == 127);
	CHECK(err.s && strstr(err.s, "cannot run /nonexistent/mtpc-no-such-tool"));
	buf_free(&err);
	/* cwd and extra environment. */
	char *env[] = {"MTPC_PROC_TEST=yes", xasprintf("MTPC_PROC_DIR=%s", dir), NULL};
	CHECK(sh("test \"$MTPC_PROC_TEST\" = yes && test \"$(pwd -P)\" = \"$(cd \"$MTPC_PROC_DIR\" && pwd -P)\"",
		 dir, env, NULL, 0, NULL) == 0);
	free(env[1]);
	CHECK(getenv("MTPC_PROC_TEST") == NULL); /* only the child's */
	/* stdin: more than a pipe holds, while the child fills its stderr pipe
	 * before reading any of it (must not deadlock). */
	size_t n = 300000;
	char *in = xmalloc(n);
	memset(in, 'x', n);
	CHECK(sh("head -c 300000 /dev/zero >&2; wc -c >&2", NULL, NULL, in, n, &err) == 0);
	CHECK(err.len > n && strstr(err.s + n, "300000"));
	buf_free(&err);
	/* A child that reads none of its input: its status, no SIGPIPE here. */
	CHECK(sh("exit 0", NULL, NULL, in, n, NULL) == 0);
	/* Empty input: the child sees end of file at once. */
	CHECK(sh("test \"$(wc -c)\" -eq 0", NULL, NULL, "", 0, NULL) == 0);
	free(in);
	char *self = proc_self_path();
	CHECK(self && self[0] == '/');
	free(self);
	char *w = proc_which("sh");
	CHECK(w && w[0] == '/' && strstr(w, "/sh"));
	free(w);
	CHECK(proc_which("mtpc-no-such-tool") == NULL);
}

static void test_bitcode(void)
{
	CHECK(mtpc_is_bitcode("BC\xC0\xDE\x35\x14", 6));
	CHECK(mtpc_is_bitcode("\xDE\xC0\x17\x0B\0\0\0\0", 8)); /* wrapper, little endian */
	CHECK(!mtpc_is_bitcode("BC\xC0", 3));                         /* too short */
	CHECK(!mtpc_is_bitcode("\x7f" "ELF\2\1", 6));
	CHECK(!mtpc_is_bitcode("!<arch>\n", 8));
	CHECK(!mtpc_is_bitcode("", 0));
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "/tmp";
	char *path = xasprintf("%s/util_test_%d", dir, (int)getpid());
	struct stat st1, st2;

	CHECK(mtpc_write_file(path, "abc", 3, 0) == 1);
	CHECK(stat(path, &st1) == 0);
	CHECK(mtpc_write_file(path, "abc", 3, MTPC_WRITE_IF_CHANGED) == 0);
	CHECK(stat(path, &st2) == 0 && st1.st_ino == st2.st_ino);
	CHECK(mtpc_write_file(path, "abcd", 4, MTPC_WRITE_IF_CHANGED) == 1);
	char *data;
	size_t len;
	CHECK(mtpc_read_file(path, &data, &len) == 0 && len == 4 && memcmp(data, "abcd", 4) == 0);
	free(data);
	/* A failed write leaves the old content. */
	char *bad = xasprintf("%s/no/such/dir/file", dir);
	CHECK(mtpc_write_file(bad, "x", 1, 0) == -1 && errno == ENOENT);
	CHECK(mtpc_read_file(bad, &data, &len) == -1);
	free(bad);
	unlink(path);

	char *nested = xasprintf("%s/util_test_dir_%d/a/b", dir, (int)getpid());
	CHECK(mtpc_mkdir_p(nested) == 0);
	CHECK(mtpc_mkdir_p(nested) == 0);
	CHECK(mtpc_mkdir_p(path) == 0);
	CHECK(mtpc_write_file(path, "x", 1, 0) == -1 && errno == EISDIR);
	rmdir(path);
	free(nested);

	char h1[MTPC_HASH_HEX_LEN + 1], h2[MTPC_HASH_HEX_LEN + 1];
	mtpc_hash_hex("", 0, h1);
	/* BLAKE3 of the empty input (published test vector). */
	CHECK(strcmp(h1, "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262") == 0);
	mtpc_hasher *h = mtpc_hasher_new();
	mtpc_hasher_update(h, "ab", 2);
	mtpc_hasher_update(h, "c", 1);
	mtpc_hasher_finish(h, h2);
	mtpc_hash_hex("abc", 3, h1);
	CHECK(strcmp(h1, h2) == 0);

	char *s = xasprintf("%d-%s", 42, "x");
	CHECK(strcmp(s, "42-x") == 0);
	free(s);
	free(path);

	test_proc(dir);
	test_bitcode();
	return CHECK_REPORT();
}
