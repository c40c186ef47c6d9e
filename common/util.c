/* util.c: see util.h. */
#define _POSIX_C_SOURCE 200809L
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *progname = "mtpc";

void mtpc_set_progname(const char *argv0)
{
	const char *slash = argv0 ? strrchr(argv0, '/') : NULL;
	if (argv0)
		progname = slash ? slash + 1 : argv0;
}

const char *mtpc_progname(void) { return progname; }

static void vreport(const char *kind, const char *fmt, va_list ap)
{
	/* Build the line first so concurrent writers do not interleave. */
	char buf[4096];
	int n = snprintf(buf, sizeof buf, "%s: %s", progname, kind);
	if (n < 0)
		n = 0;
	if ((size_t)n < sizeof buf)
		vsnprintf(buf + n, sizeof buf - n, fmt, ap);
	fprintf(stderr, "%s\n", buf);
}

void mtpc_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport("warning: ", fmt, ap);
	va_end(ap);
}

void mtpc_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport("error: ", fmt, ap);
	va_end(ap);
}

void mtpc_fatal(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport("error: ", fmt, ap);
	va_end(ap);
	exit(1);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		mtpc_fatal("out of memory");
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		mtpc_fatal("out of memory");
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		mtpc_fatal("out of memory");
	return p;
}

char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	return memcpy(xmalloc(n), s, n);
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap, ap2;
	va_start(ap, fmt);
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *s = xmalloc((size_t)n + 1);
	vsnprintf(s, (size_t)n + 1, fmt, ap2);
	va_end(ap2);
	return s;
}

int mtpc_read_file(const char *path, char **data, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		errno = EISDIR;
		return -1;
	}
	size_t cap = st.st_size > 0 ? (size_t)st.st_size + 1 : 4096, n = 0;
	char *buf = xmalloc(cap);
	for (;;) {
		if (n + 1 >= cap)
			buf = xrealloc(buf, cap *= 2);
		ssize_t r = read(fd, buf + n, cap - n - 1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			free(buf);
			close(fd);
			errno = e;
			return -1;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = 0;
	*data = buf;
	*len = n;
	return 0;
}

static int same_content(const char *path, const void *data, size_t len)
{
	char *old;
	size_t oldlen;
	if (mtpc_read_file(path, &old, &oldlen) < 0)
		return 0;
	int same = oldlen == len && memcmp(old, data, len) == 0;
	free(old);
	return same;
}

int mtpc_write_file(const char *path, const void *data, size_t len, int flags)
{
	if ((flags & MTPC_WRITE_IF_CHANGED) && same_content(path, data, len))
		return 0;
	char *tmp = xasprintf("%s.tmp.XXXXXX", path);
	int fd = mkstemp(tmp);
	if (fd < 0) {
		free(tmp);
		return -1;
	}
	const char *p = data;
	size_t left = len;
	while (left) {
		ssize_t w = write(fd, p, left);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			goto fail;
		}
		p += w;
		left -= (size_t)w;
	}
	/* mkstemp creates 0600; give the file the usual 0644 (minus umask). */
	mode_t mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask) < 0)
		goto fail;
	if (close(fd) < 0) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	if (rename(tmp, path) < 0)
		goto fail;
	free(tmp);
	return 1;
fail:;
	int e = errno;
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	free(tmp);
	errno = e;
	return -1;
}

int mtpc_mkdir_p(const char *path)
{
	char *p = xstrdup(path);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = 0;
		if (mkdir(p, 0777) < 0 && errno != EEXIST) {
			int e = errno;
			free(p);
			errno = e;
			return -1;
		}
		*s = '/';
	}
	int r = mkdir(p, 0777);
	if (r < 0 && errno == EEXIST) {
		struct stat st;
		r = stat(p, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : (errno = ENOTDIR, -1);
	}
	int e = errno;
	free(p);
	errno = e;
	return r;
}

int mtpc_parse_ll(const char *opt, const char *s, long long lo, long long hi, long long *out)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi) {
		mtpc_error("%s: expected an integer in [%lld, %lld], got '%s'", opt, lo, hi, s);
		return -1;
	}
	*out = v;
	return 0;
}

double mtpc_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

double mtpc_cpu_time(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

const char *mtpc_base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

int mtpc_copy_file(const char *from, const char *to, int flags)
{
	char *data;
	size_t len;
	if (mtpc_read_file(from, &data, &len) < 0) {
		mtpc_error("cannot read %s: %s", from, strerror(errno));
		return -1;
	}
	int r = mtpc_write_file(to, data, len, flags);
	if (r < 0)
		mtpc_error("cannot write %s: %s", to, strerror(errno));
	free(data);
	return r < 0 ? -1 : 0;
}

void mtpc_print_version(void)
{
	printf("%s %s (LLVM %d)\n", mtpc_progname(), MTPC_VERSION, MTPC_LLVM_MAJOR);
}
