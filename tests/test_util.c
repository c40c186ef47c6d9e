/* Unit tests for common/util.c and common/hash.c. Prints "N passed, N failed". */
#include "hash.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "check.h"


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
	return CHECK_REPORT();
}
