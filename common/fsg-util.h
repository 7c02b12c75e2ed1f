/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Small helpers shared by every module: fd cleanup, GError from errno, the
 * exit statuses the tools promise, retry-on-EINTR, and a process's command
 * name. Nothing here allocates on behalf of the caller except the GError
 * helpers and fsg_read_comm().
 */
#pragma once

#include <errno.h>
#include <glib.h>
#include <sys/types.h>
#include <unistd.h>

G_BEGIN_DECLS

/* Exit statuses shared by fsgate and fsgate-run (documented in the man pages). */
#define FSG_EXIT_USAGE 2          /* bad command line or policy */
#define FSG_EXIT_TIMEOUT 124      /* the command ran out of time */
#define FSG_EXIT_SETUP 125        /* the sandbox could not be set up */
#define FSG_EXIT_NOEXEC 126       /* the command was found but is not executable */
#define FSG_EXIT_NOTFOUND 127     /* the command was not found */

#define FSG_RETRY(expr)                    \
  ({                                       \
    long _r;                               \
    do                                     \
      _r = (long) (expr);                  \
    while (_r == -1 && errno == EINTR);    \
    _r;                                    \
  })

static inline void
fsg_close_fdp (int *fdp)
{
  int errsv = errno;
  int fd = g_steal_fd (fdp);

  if (fd >= 0 && close (fd) < 0)
    g_assert (errno != EBADF);
  errno = errsv;
}
#define fsg_autofd __attribute__ ((cleanup (fsg_close_fdp)))

/* Set @error from errno with a printf-style prefix; always returns FALSE so
 * callers can write `return fsg_throw_errno (error, "open '%s'", p);`. */
gboolean fsg_throw_errno (GError **error, const char *fmt, ...) G_GNUC_PRINTF (2, 3);
/* Same with an explicit errno value (positive). */
gboolean fsg_throw_errno_value (GError **error, int errsv, const char *fmt, ...) G_GNUC_PRINTF (3, 4);
/* A G_FILE_ERROR_FAILED error with a message; returns FALSE. */
gboolean fsg_throw (GError **error, const char *fmt, ...) G_GNUC_PRINTF (2, 3);

/* Write @text to the existing file @path (a /proc file such as uid_map);
 * async-signal-safe. Returns 0 or -errno. */
int fsg_write_file_async_signal_safe (const char *path, const char *text);

/* Write all of @len bytes, retrying on EINTR and short writes. Returns 0 or -errno. */
int fsg_write_all (int fd, const void *buf, size_t len);

/* The command name of process @pid (/proc/PID/comm, without the newline),
 * or NULL when @pid is not positive or the process is gone. For audit
 * records: the daemon's and the runner's both come from here. (transfer full) */
char *fsg_read_comm (pid_t pid);

/* Start-up tracing for profiling fsgate-run (FSGATE_TRACE_START=1): each
 * process of a run writes "fsgate-trace: +MS.mmm WHO WHAT" to its stderr at
 * the points of its start, with one clock for all (set by
 * fsg_trace_start() in R and inherited across fork). Async-signal-safe;
 * one branch when off. */
void fsg_trace_start (void);
void fsg_trace (const char *who, const char *what);

/* "procfs", "sysfs", "debugfs", "tracefs", "securityfs" or "bpf" when @fd is
 * on such a kernel pseudo file system (they describe the host's processes
 * and kernel, never files), else NULL. */
const char *fsg_pseudo_fs_name (int fd);

G_END_DECLS
