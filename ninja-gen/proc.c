/* proc.c: see proc.h. */
#define _POSIX_C_SOURCE 200809L
#include "proc.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

int proc_run(char *const *argv, const char *cwd, char *const *env, struct buf *err)
{
	int fds[2] = {-1, -1};
	if (err && pipe(fds) < 0) {
		mtpc_error("pipe: %s", strerror(errno));
		return 127;
	}
	/* The child reports a failed exec through this pipe (close-on-exec). */
	int ex[2];
	if (pipe(ex) < 0) {
		mtpc_error("pipe: %s", strerror(errno));
		if (err) {
			close(fds[0]);
			close(fds[1]);
		}
		return 127;
	}
	fcntl(ex[0], F_SETFD, FD_CLOEXEC);
	fcntl(ex[1], F_SETFD, FD_CLOEXEC);
	pid_t pid = fork();
	if (pid < 0) {
		mtpc_error("fork: %s", strerror(errno));
		close(ex[0]);
		close(ex[1]);
		if (err) {
			close(fds[0]);
			close(fds[1]);
		}
		return 127;
	}
	if (pid == 0) {
		close(ex[0]);
		if (err) {
			dup2(fds[1], 2);
			close(fds[0]);
			close(fds[1]);
		}
		for (size_t i = 0; env && env[i]; i++)
			putenv(env[i]);
		int e = 0;
		if (cwd && chdir(cwd) < 0)
			e = errno;
		else {
			execvp(argv[0], argv);
			e = errno;
		}
		ssize_t w = write(ex[1], &e, sizeof e);
		(void)w;
		_exit(127);
	}
	close(ex[1]);
	if (err) {
		close(fds[1]);
		char chunk[4096];
		ssize_t n;
		while ((n = read(fds[0], chunk, sizeof chunk)) != 0) {
			if (n < 0) {
				if (errno == EINTR)
					continue;
				break;
			}
			buf_addn(err, chunk, (size_t)n);
		}
		close(fds[0]);
	}
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	int e = 0;
	ssize_t n = read(ex[0], &e, sizeof e);
	close(ex[0]);
	if (n == (ssize_t)sizeof e && e) {
		/* With a capture buffer the caller reports it (in one line). */
		if (err)
			buf_printf(err, "cannot run %s: %s\n", argv[0], strerror(e));
		else
			mtpc_error("cannot run %s: %s", argv[0], strerror(e));
		return 127;
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

char *proc_self_path(void)
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
	if (n <= 0)
		return NULL;
	buf[n] = 0;
	return xstrdup(buf);
}

char *proc_which(const char *prog)
{
	if (strchr(prog, '/'))
		return xstrdup(prog);
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/bin:/bin";
	char *copy = xstrdup(path), *save = NULL;
	for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		char *p = xasprintf("%s/%s", *d ? d : ".", prog);
		if (access(p, X_OK) == 0) {
			free(copy);
			return p;
		}
		free(p);
	}
	free(copy);
	return NULL;
}
