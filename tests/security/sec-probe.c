/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * sec-probe: attacks that shell and python cannot make, for the security
 * suite. Prints "OK" or the errno name (as try-syscall does), or, for the
 * race, counters. Built without sanitizers (their runtimes make syscalls of
 * their own and would trip the seccomp filter).
 *
 *   sec-probe race A B DATA SECONDS NSWAP NREAD
 *       NSWAP threads exchange A and B (renameat2 RENAME_EXCHANGE) while
 *       NREAD threads read DATA (and DATA's name relative to a directory fd
 *       of A's parent kept open); prints "swaps=N reads=N leaks=N" where a
 *       leak is a read that returned bytes containing "TOPSECRET".
 *   sec-probe process_vm_readv PID | pidfd_open PID | pidfd_getfd PID FD
 *   sec-probe move_mount | fsconfig | fspick | mount_setattr
 */
#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#ifndef RENAME_EXCHANGE
# define RENAME_EXCHANGE (1 << 1)
#endif
#ifndef SYS_pidfd_open
# define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
# define SYS_pidfd_getfd 438
#endif
#ifndef SYS_move_mount
# define SYS_move_mount 429
#endif
#ifndef SYS_fsconfig
# define SYS_fsconfig 431
#endif
#ifndef SYS_fspick
# define SYS_fspick 433
#endif
#ifndef SYS_mount_setattr
# define SYS_mount_setattr 442
#endif

static const char *
errname (int e)
{
  static char buf[32];

  switch (e)
    {
    case 0: return "OK";
    case EPERM: return "EPERM";
    case ENOENT: return "ENOENT";
    case ESRCH: return "ESRCH";
    case EACCES: return "EACCES";
    case EBADF: return "EBADF";
    case EINVAL: return "EINVAL";
    case ENOSYS: return "ENOSYS";
    case EFAULT: return "EFAULT";
    default:
      snprintf (buf, sizeof buf, "E%d", e);
      return buf;
    }
}

static int
report (long r)
{
  puts (errname (r < 0 ? errno : 0));
  return 0;
}

/* ---- race ------------------------------------------------------------------ */

static const char *ra, *rb, *rdata;
static volatile int stop;
static long swaps, reads, leaks;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *
swapper (void *p)
{
  long n = 0;

  (void) p;
  while (!stop)
    if (syscall (SYS_renameat2, AT_FDCWD, ra, AT_FDCWD, rb, RENAME_EXCHANGE) == 0)
      n++;
  pthread_mutex_lock (&lock);
  swaps += n;
  pthread_mutex_unlock (&lock);
  return NULL;
}

static int
read_one (int dfd, const char *name, long *nr, long *nl)
{
  char buf[256];
  int fd = openat (dfd, name, O_RDONLY | O_CLOEXEC);
  ssize_t n;

  if (fd < 0)
    return -1;
  n = read (fd, buf, sizeof buf - 1);
  close (fd);
  if (n > 0)
    {
      buf[n] = '\0';
      if (strstr (buf, "TOPSECRET") != NULL)
        (*nl)++;
      else
        (*nr)++;
    }
  return 0;
}

static void *
reader (void *p)
{
  long nr = 0, nl = 0;
  const char *base = strrchr (rdata, '/');

  (void) p;
  while (!stop)
    {
      read_one (AT_FDCWD, rdata, &nr, &nl);
      /* through a directory fd that stays open across the swaps */
      int dfd = open (ra, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (dfd >= 0)
        {
          for (int i = 0; i < 10; i++)
            read_one (dfd, base ? base + 1 : rdata, &nr, &nl);
          close (dfd);
        }
    }
  pthread_mutex_lock (&lock);
  reads += nr;
  leaks += nl;
  pthread_mutex_unlock (&lock);
  return NULL;
}

static int
race (char **argv)
{
  int secs = atoi (argv[3]), nswap = atoi (argv[4]), nread = atoi (argv[5]);
  pthread_t t[64];
  int n = 0;

  ra = argv[0];
  rb = argv[1];
  rdata = argv[2];
  for (int i = 0; i < nswap && n < 64; i++)
    pthread_create (&t[n++], NULL, swapper, NULL);
  for (int i = 0; i < nread && n < 64; i++)
    pthread_create (&t[n++], NULL, reader, NULL);
  sleep (secs);
  stop = 1;
  for (int i = 0; i < n; i++)
    pthread_join (t[i], NULL);
  printf ("swaps=%ld reads=%ld leaks=%ld\n", swaps, reads, leaks);
  return 0;
}

int
main (int argc, char **argv)
{
  const char *c = argc > 1 ? argv[1] : "";
  const char *arg = argc > 2 ? argv[2] : NULL;

  if (strcmp (c, "race") == 0 && argc == 8)
    return race (argv + 2);
  if (strcmp (c, "process_vm_readv") == 0 && arg)
    {
      char buf[16];
      struct iovec local = { buf, sizeof buf }, remote = { (void *) 0x400000, sizeof buf };
      return report (process_vm_readv (atoi (arg), &local, 1, &remote, 1, 0));
    }
  if (strcmp (c, "pidfd_open") == 0 && arg)
    return report (syscall (SYS_pidfd_open, atoi (arg), 0));
  if (strcmp (c, "pidfd_getfd") == 0 && arg && argc > 3)
    {
      long pfd = syscall (SYS_pidfd_open, atoi (arg), 0);
      if (pfd < 0)
        return report (pfd);
      return report (syscall (SYS_pidfd_getfd, (int) pfd, atoi (argv[3]), 0));
    }
  if (strcmp (c, "move_mount") == 0)
    return report (syscall (SYS_move_mount, AT_FDCWD, "/tmp", AT_FDCWD, "/", 0));
  if (strcmp (c, "fsconfig") == 0)
    return report (syscall (SYS_fsconfig, 0, 6 /* FSCONFIG_CMD_CREATE */, NULL, NULL, 0));
  if (strcmp (c, "fspick") == 0)
    return report (syscall (SYS_fspick, AT_FDCWD, "/", 0));
  if (strcmp (c, "mount_setattr") == 0)
    {
      unsigned long long attr[4] = { 0, 1 /* MOUNT_ATTR_RDONLY clear */, 0, 0 };
      return report (syscall (SYS_mount_setattr, AT_FDCWD, "/", 0, attr, sizeof attr));
    }
  fprintf (stderr, "sec-probe: unknown case '%s'\n", c);
  return 2;
}
