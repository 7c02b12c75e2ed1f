/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * GError helpers built on errno, a short-write-safe write loop, a
 * process's command name, and kernel pseudo file systems.
 */
#include "config.h"

#include "common/fsg-util.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/statfs.h>
#include <time.h>

static gboolean
throw_errno_va (GError **error, int errsv, const char *fmt, va_list ap)
{
  g_autofree char *prefix = g_strdup_vprintf (fmt, ap);

  g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (errsv),
               "%s: %s", prefix, g_strerror (errsv));
  return FALSE;
}

gboolean
fsg_throw_errno (GError **error, const char *fmt, ...)
{
  int errsv = errno;
  va_list ap;

  va_start (ap, fmt);
  throw_errno_va (error, errsv, fmt, ap);
  va_end (ap);
  errno = errsv;
  return FALSE;
}

gboolean
fsg_throw_errno_value (GError **error, int errsv, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  throw_errno_va (error, errsv, fmt, ap);
  va_end (ap);
  return FALSE;
}

gboolean
fsg_throw (GError **error, const char *fmt, ...)
{
  va_list ap;
  g_autofree char *msg = NULL;

  va_start (ap, fmt);
  msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_set_error_literal (error, G_FILE_ERROR, G_FILE_ERROR_FAILED, msg);
  return FALSE;
}

int
fsg_write_file_async_signal_safe (const char *path, const char *text)
{
  int fd = open (path, O_WRONLY | O_CLOEXEC);
  int r;

  if (fd < 0)
    return -errno;
  r = fsg_write_all (fd, text, strlen (text));
  close (fd);
  return r;
}

int
fsg_write_all (int fd, const void *buf, size_t len)
{
  const char *p = buf;

  while (len > 0)
    {
      ssize_t n = write (fd, p, len);
      if (n < 0)
        {
          if (errno == EINTR)
            continue;
          return -errno;
        }
      p += n;
      len -= (size_t) n;
    }
  return 0;
}

char *
fsg_read_comm (pid_t pid)
{
  char path[64];
  char buf[64];
  fsg_autofd int fd = -1;
  ssize_t n;

  if (pid <= 0)
    return NULL;
  snprintf (path, sizeof path, "/proc/%d/comm", (int) pid);
  fd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return NULL;
  n = FSG_RETRY (read (fd, buf, sizeof buf - 1));
  if (n <= 0)
    return NULL;
  buf[n] = '\0';
  if (buf[n - 1] == '\n')
    buf[n - 1] = '\0';
  return g_strdup (buf);
}

#ifndef TRACEFS_MAGIC
# define TRACEFS_MAGIC 0x74726163
#endif
#ifndef BPF_FS_MAGIC
# define BPF_FS_MAGIC 0xcafe4a11
#endif

const char *
fsg_pseudo_fs_name (int fd)
{
  struct statfs sfs;

  if (fstatfs (fd, &sfs) < 0)
    return NULL;
  switch ((unsigned long) sfs.f_type)
    {
    case PROC_SUPER_MAGIC: return "procfs";
    case SYSFS_MAGIC: return "sysfs";
    case DEBUGFS_MAGIC: return "debugfs";
    case TRACEFS_MAGIC: return "tracefs";
    case SECURITYFS_MAGIC: return "securityfs";
    case BPF_FS_MAGIC: return "bpf";
    default: return NULL;
    }
}

static gboolean trace_on;
static struct timespec trace_t0;

void
fsg_trace_start (void)
{
  const char *v = g_getenv ("FSGATE_TRACE_START");

  trace_on = v != NULL && strcmp (v, "1") == 0;
  clock_gettime (CLOCK_MONOTONIC, &trace_t0);
}

void
fsg_trace (const char *who, const char *what)
{
  struct timespec now;
  char buf[160], num[24];
  gsize n = 0, k = 0;
  gint64 us;
  int errsv = errno;

  if (!trace_on)
    return;
  clock_gettime (CLOCK_MONOTONIC, &now);
  us = (now.tv_sec - trace_t0.tv_sec) * G_USEC_PER_SEC + (now.tv_nsec - trace_t0.tv_nsec) / 1000;
  /* "+MS.mmm": no printf here (async-signal-safe) */
  do
    num[k++] = (char) ('0' + us % 10);
  while ((us /= 10) > 0 || k < 4);
#define PUT(c) do { if (n < sizeof buf - 1) buf[n++] = (c); } while (0)
  for (const char *p = "fsgate-trace: +"; *p; p++)
    PUT (*p);
  while (k > 3)
    PUT (num[--k]);
  PUT ('.');
  while (k > 0)
    PUT (num[--k]);
  PUT (' ');
  for (const char *p = who; *p; p++)
    PUT (*p);
  PUT (' ');
  for (const char *p = what; *p; p++)
    PUT (*p);
  PUT ('\n');
#undef PUT
  (void) fsg_write_all (2, buf, n);
  errno = errsv;
}
