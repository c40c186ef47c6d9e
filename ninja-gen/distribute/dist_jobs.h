/* dist_jobs.h: lld's DTLTO job list (the JSON file lld hands its
 * distributor: common.args, common.linker_output, and per job args, inputs
 * and outputs), read and checked before mtpc-distribute builds anything. */
#ifndef MTPC_NG_DIST_JOBS_H
#define MTPC_NG_DIST_JOBS_H

#include "buf.h"

#include <stddef.h>

/* One job of lld's list. */
struct job {
	struct strv args;    /* its part of the command (after common.args) */
	struct strv inputs;  /* [0]: the module, [1]: its index shard, then the
	                      * modules its imports come from */
	struct strv outputs; /* [0]: the object lld links */
	long mod;            /* index of its module in the graph, -1: run as lld
	                      * wrote it */
};

struct jobs {
	struct strv common;  /* common.args: the compiler, then its options */
	char *linker_output; /* common.linker_output, or NULL */
	struct job *v;
	size_t n;
};

/* Read lld's job list at path into js. Returns 0, or -1 after one error
 * naming the file and the member (e.g. "jobs[2].outputs"). */
int read_jobs(const char *path, struct jobs *js);

/* Every input exists and every output's directory is writable: checked
 * before anything runs, so that a bad list leaves nothing behind. Returns
 * 0, or -1 after one error naming path and the job. */
int check_files(const char *path, const struct jobs *js);

void jobs_free(struct jobs *js);

#endif
