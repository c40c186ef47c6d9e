/* outer_log.h: what the outer build's last run says about the cores while
 * a link ran.
 *
 * The work board (workboard.h) shows the work that has started; it cannot
 * show the outer build's edges that have not, and on a busy build those
 * fill a lane as soon as another edge frees it: a link whose board shows
 * one other link with a few seconds left splits its large module, and the
 * outer build's next links then share the cores with its partitions, which
 * costs the split's overhead and shortens nothing. Ninja's own log
 * (<build dir>/.ninja_log) holds, for every output, when its edge last ran
 * (start and end in milliseconds from the start of that build) and the
 * output's mtime then. The edges of that same build are those whose
 * mtime less their end gives the same build start; those whose run
 * overlapped the link's tell how many lanes the outer build kept busy
 * beside it. Built the same way again (a rebuild from scratch, the same
 * graph and -j), the outer build keeps about as many busy again. A link
 * that was the build's tail saw none beside it, and is split as before;
 * with no log (a first build, another build tool), nothing is known. */
#ifndef MTPC_NG_OUTER_LOG_H
#define MTPC_NG_OUTER_LOG_H

/* How many of the outer build's other edges ran, on average, while output
 * ran in the last build that ran it, by dir/.ninja_log (dir: the directory
 * the outer Ninja runs its edges in, the link's own; output: as the link
 * command names it, relative to dir or absolute). -1 when the log does not
 * say: none, an unknown format, no entry for output, or a run too short
 * to tell (under OUTER_LOG_MIN_MS). */
double outer_log_others(const char *dir, const char *output);

/* Entries of one build: their mtime less their end within this many
 * milliseconds of the link's (an output's mtime is taken when its edge
 * ends; a restat edge that left its output alone keeps an older one and
 * is not counted). */
#define OUTER_LOG_SAME_BUILD_MS 2000
#define OUTER_LOG_MIN_MS 100

#endif
