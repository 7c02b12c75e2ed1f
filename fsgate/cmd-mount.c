/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * `fsgate mount`: mount the policy view at a directory for inspection and
 * serve it until SIGINT/SIGTERM or an external unmount. Without -f, the
 * process forks once the mount exists (before any thread is started); the
 * child serves and tells the parent over a pipe when it is ready, so the
 * parent returns only when scripts can use the mount.
 */
#include "config.h"

#include "common/fsg-util.h"
#include "fsgate/commands.h"
#include "fsgate/fs.h"
#include "policy/policy-cli.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#define EXAMPLE                                                                        \
  "Mounts the policy view at MOUNTPOINT (an empty directory) and serves it until\n"    \
  "SIGINT/SIGTERM or until it is unmounted. Every root appears at its real path\n"     \
  "below MOUNTPOINT; denials are recorded in the audit log.\n"                          \
  "\n"                                                                                 \
  "Example session:\n"                                                                 \
  "  $ mkdir /tmp/view\n"                                                              \
  "  $ fsgate mount --profile none --ro /usr --rw ~/proj \\\n"                        \
  "        --deny-read '~/proj/.env' --audit-log /tmp/audit.jsonl /tmp/view\n"         \
  "  $ ls /tmp/view/home/ann/proj\n"                                                   \
  "  $ cat /tmp/view/home/ann/proj/.env\n"                                             \
  "  cat: /tmp/view/home/ann/proj/.env: Permission denied\n"                           \
  "  $ tail -1 /tmp/audit.jsonl\n"                                                     \
  "  $ umount /tmp/view        # or: fusermount3 -u /tmp/view; or kill the daemon\n" \
  "\n"                                                                                 \
  "Note: in an inspection mount, absolute symlinks resolve on the host, outside\n"     \
  "the view (the kernel resolves them from the caller's root). Inside fsgate-run\n"   \
  "the view is '/', so they stay inside it. Relative symlinks stay in the view.\n"     \
  "\n"                                                                                 \
  "Exit status: 0 after a clean unmount, 2 for usage and policy errors, 125 when\n"   \
  "the mount cannot be set up.\n"

static int
usage_error (GOptionContext *ctx, const char *fmt, ...) G_GNUC_PRINTF (2, 3);

static int
usage_error (GOptionContext *ctx, const char *fmt, ...)
{
  va_list ap;
  g_autofree char *msg = NULL;

  va_start (ap, fmt);
  msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_printerr ("fsgate mount: %s\n", msg);
  g_printerr ("Try 'fsgate mount --help' for more information.\n");
  return FSG_EXIT_USAGE;
}

/* Check the mount point and return its canonical path, or print a one-line
 * error with the fix and set *out_status. */
static char *
check_mountpoint (const char *arg, int *out_status)
{
  struct statx stx;
  g_autofree char *real = NULL;
  DIR *dir;
  struct dirent *de;
  gboolean empty = TRUE;

  if (statx (AT_FDCWD, arg, 0, STATX_TYPE, &stx) < 0)
    {
      int errsv = errno;

      if (errsv == ENOENT)
        g_printerr ("fsgate mount: mountpoint '%s' does not exist (create it with: mkdir -p '%s')\n", arg, arg);
      else if (errsv == ENOTCONN)
        g_printerr ("fsgate mount: mountpoint '%s' is a dead FUSE mount (clean it up with: umount -l '%s')\n", arg, arg);
      else
        g_printerr ("fsgate mount: mountpoint '%s': %s\n", arg, g_strerror (errsv));
      *out_status = errsv == ENOENT ? FSG_EXIT_USAGE : FSG_EXIT_SETUP;
      return NULL;
    }
  if (!S_ISDIR (stx.stx_mode))
    {
      g_printerr ("fsgate mount: mountpoint '%s' is not a directory (use an empty directory)\n", arg);
      *out_status = FSG_EXIT_USAGE;
      return NULL;
    }
  if ((stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) && (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT))
    {
      g_printerr ("fsgate mount: mountpoint '%s' is busy: something is already mounted there (unmount it first: umount '%s')\n", arg, arg);
      *out_status = FSG_EXIT_SETUP;
      return NULL;
    }
  dir = opendir (arg);
  if (dir == NULL)
    {
      g_printerr ("fsgate mount: cannot read mountpoint '%s': %s\n", arg, g_strerror (errno));
      *out_status = FSG_EXIT_SETUP;
      return NULL;
    }
  while ((de = readdir (dir)) != NULL)
    if (strcmp (de->d_name, ".") != 0 && strcmp (de->d_name, "..") != 0)
      {
        empty = FALSE;
        break;
      }
  closedir (dir);
  if (!empty)
    {
      g_printerr ("fsgate mount: mountpoint '%s' is not empty (use an empty directory, e.g. mktemp -d)\n", arg);
      *out_status = FSG_EXIT_USAGE;
      return NULL;
    }
  real = realpath (arg, NULL);
  if (real == NULL)
    {
      g_printerr ("fsgate mount: mountpoint '%s': %s\n", arg, g_strerror (errno));
      *out_status = FSG_EXIT_SETUP;
      return NULL;
    }
  return g_steal_pointer (&real);
}

/* The descriptors above 2 that this process inherited. */
static GArray *
inherited_fds (void)
{
  GArray *fds = g_array_new (FALSE, FALSE, sizeof (int));
  DIR *dir = opendir ("/proc/self/fd");
  struct dirent *de;

  if (dir == NULL)
    return fds;
  while ((de = readdir (dir)) != NULL)
    {
      char *end;
      long fd = strtol (de->d_name, &end, 10);

      if (de->d_name[0] != '.' && *end == '\0' && fd > 2 && fd != dirfd (dir))
        {
          int v = (int) fd;
          g_array_append_val (fds, v);
        }
    }
  closedir (dir);
  return fds;
}

/* The daemon outlives the command that started it: it must not keep what
 * that command's caller gave it (a shell's pipe held as fd 251 keeps a
 * `$(fsgate mount ...)` waiting, a lock file stays locked). Closed once the
 * policy files (possibly /dev/fd/N) are read and the logs are open. */
static void
close_inherited_fds (GArray *fds)
{
  for (guint i = 0; i < fds->len; i++)
    close (g_array_index (fds, int, i));
}

static gboolean
check_dev_fuse (void)
{
  int fd = open ("/dev/fuse", O_RDWR | O_CLOEXEC);

  if (fd >= 0)
    {
      close (fd);
      return TRUE;
    }
  g_printerr ("fsgate mount: cannot open /dev/fuse: %s (load the module with 'modprobe fuse'; "
              "in a container, pass --device /dev/fuse)\n", g_strerror (errno));
  return FALSE;
}

/* Where --stats goes: a file fsgate opened (rewritten from offset 0, so it
 * always holds one table, the counts since the mount) or standard error
 * (appended to; never truncated, it may be the user's log). */
typedef struct
{
  int fd;
  gboolean own;
} StatsOut;

/* The per-operation table of --stats: written when the session is over,
 * and on SIGUSR1 while it runs. */
static void
write_stats (FsgFs *fs, const StatsOut *out, gint64 started)
{
  FsgFsStats stats;
  g_autofree char *table = NULL;
  g_autofree char *text = NULL;
  size_t len, off = 0;
  int r = 0;

  fsg_fs_get_stats (fs, &stats);
  table = fsg_fs_stats_format (&stats);
  text = g_strdup_printf ("fsgate mount: %" G_GUINT64_FORMAT " requests in %.3f s served, %" G_GUINT64_FORMAT
                          " denied; data path: %s; directory operations: %s\n%s",
                          stats.requests, (g_get_monotonic_time () - started) / 1e6, stats.denials,
                          stats.passthrough ? "kernel passthrough" : "through the daemon",
                          stats.parallel_dirops ? "parallel" : "one at a time per directory", table);
  len = strlen (text);
  if (!out->own)
    r = fsg_write_all (out->fd, text, len);
  else
    {
      /* Over the old table, then cut: a reader never sees an empty file. */
      while (r == 0 && off < len)
        {
          ssize_t n = pwrite (out->fd, text + off, len - off, (off_t) off);

          if (n < 0 && errno != EINTR)
            r = -errno;
          else if (n > 0)
            off += (size_t) n;
        }
      if (r == 0 && ftruncate (out->fd, (off_t) len) < 0)
        r = -errno;
    }
  if (r < 0)
    g_printerr ("fsgate mount: cannot write --stats: %s\n", g_strerror (-r));
}

/* Serve until a signal or the end of the session; returns the exit status. */
static int
serve (FsgFs *fs, int ready_fd, gboolean quiet, const StatsOut *stats)
{
  gint64 started = g_get_monotonic_time ();
  g_autoptr(GError) error = NULL;
  sigset_t set;
  fsg_autofd int sfd = -1;
  struct pollfd pfd[2];

  /* Block the stop signals before any thread exists, so that every worker
   * inherits the mask and only the signalfd sees them. */
  sigemptyset (&set);
  sigaddset (&set, SIGINT);
  sigaddset (&set, SIGTERM);
  sigaddset (&set, SIGHUP);
  sigaddset (&set, SIGUSR1);
  sigprocmask (SIG_BLOCK, &set, NULL);
  sfd = signalfd (-1, &set, SFD_CLOEXEC);
  if (sfd < 0)
    {
      g_printerr ("fsgate mount: signalfd: %s\n", g_strerror (errno));
      return FSG_EXIT_SETUP;
    }
  if (!fsg_fs_start (fs, &error))
    {
      g_printerr ("fsgate mount: %s\n", error->message);
      return FSG_EXIT_SETUP;
    }
  if (ready_fd >= 0)
    {
      (void) !write (ready_fd, "R", 1);
      close (ready_fd);
    }
  if (quiet)
    {
      int null = open ("/dev/null", O_RDWR | O_CLOEXEC);
      if (null >= 0)
        {
          dup2 (null, STDIN_FILENO);
          dup2 (null, STDOUT_FILENO);
          dup2 (null, STDERR_FILENO);
          close (null);
        }
    }

  pfd[0].fd = sfd;
  pfd[0].events = POLLIN;
  pfd[1].fd = fsg_fs_get_wait_fd (fs);
  pfd[1].events = POLLIN;
  for (;;)
    {
      struct signalfd_siginfo si;

      if (poll (pfd, 2, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          break;
        }
      if (pfd[1].revents != 0)
        break;
      if (FSG_RETRY (read (sfd, &si, sizeof si)) != sizeof si || si.ssi_signo != SIGUSR1)
        break;
      if (stats->fd >= 0)
        write_stats (fs, stats, started);
    }
  fsg_fs_stop (fs);
  if (stats->fd >= 0)
    write_stats (fs, stats, started);
  return 0;
}

int
fsg_cmd_mount (int argc, char **argv)
{
  g_autoptr(FsgPolicyOptions) popts = fsg_policy_options_new ();
  g_autoptr(GOptionContext) ctx = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(FsgPolicy) policy = NULL;
  g_autoptr(FsgFs) fs = NULL;
  g_autofree char *audit_log = NULL;
  g_autofree char *audit = NULL;
  g_autofree char *stats_file = NULL;
  g_autofree char *mountpoint = NULL;
  g_autofree char *description = NULL;
  g_autoptr(GArray) inherited = inherited_fds ();
  gboolean foreground = FALSE, debug = FALSE, xattr = FALSE, host_checks = FALSE;
  FsgFsOptions fopts = { 0 };
  fsg_autofd int audit_fd = -1;
  StatsOut stats = { -1, FALSE };
  fsg_autofd int stats_file_fd = -1;
  sigset_t usr1;
  int status = 0;
  int pipefd[2];
  pid_t pid;
  GOptionEntry entries[] = {
    { "audit-log", 0, 0, G_OPTION_ARG_FILENAME, &audit_log, "Append audit events as JSON Lines to FILE ('-': standard output)", "FILE" },
    { "audit", 0, 0, G_OPTION_ARG_STRING, &audit, "Record denials only (default) or all opens and changes too", "denied|all" },
    { "xattr", 0, 0, G_OPTION_ARG_NONE, &xattr, "Support user.* extended attributes (costs a round trip per write)", NULL },
    { "host-checks", 0, 0, G_OPTION_ARG_NONE, &host_checks,
      "No default_permissions: check permissions on the host with each caller's credentials (as fsgate-run does)", NULL },
    { "foreground", 'f', 0, G_OPTION_ARG_NONE, &foreground, "Stay in the foreground", NULL },
    { "debug", 'd', 0, G_OPTION_ARG_NONE, &debug, "Print every FUSE request (implies -f)", NULL },
    { "stats", 0, 0, G_OPTION_ARG_FILENAME, &stats_file,
      "At unmount and on SIGUSR1, write requests per operation and the daemon's CPU time in them to FILE "
      "('-': standard error, with -f)", "FILE" },
    { NULL },
  };

  g_set_prgname ("fsgate mount");
  ctx = g_option_context_new ("MOUNTPOINT - mount the policy view");
  g_option_context_set_main_group (ctx, fsg_policy_options_group_full (popts, FSG_POLICY_OPTIONS_MOUNT));
  g_option_context_add_main_entries (ctx, entries, NULL);
  description = g_strconcat (EXAMPLE, "\n", fsg_policy_options_help (), NULL);
  g_option_context_set_description (ctx, description);
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    return usage_error (ctx, "%s", error->message);
  if (argc < 2)
    return usage_error (ctx, "missing MOUNTPOINT");
  if (argc > 2)
    return usage_error (ctx, "unexpected argument '%s'", argv[2]);
  if (audit != NULL && strcmp (audit, "denied") != 0 && strcmp (audit, "all") != 0)
    return usage_error (ctx, "--audit must be 'denied' or 'all', not '%s'", audit);
  if (debug)
    foreground = TRUE;
  if (stats_file != NULL && strcmp (stats_file, "-") == 0 && !foreground)
    return usage_error (ctx, "--stats - needs -f: in the background, standard error is closed");

  policy = fsg_policy_options_build (popts, &error);
  if (policy == NULL)
    {
      g_printerr ("fsgate mount: %s\n", error->message);
      return FSG_EXIT_USAGE;
    }

  mountpoint = check_mountpoint (argv[1], &status);
  if (mountpoint == NULL)
    return status;
  if (!check_dev_fuse ())
    return FSG_EXIT_SETUP;

  if (audit_log != NULL && strcmp (audit_log, "-") == 0)
    {
      /* standard output, like --json - of fsgate-run; a copy, so it stays
       * the caller's stdout after the daemon detaches */
      audit_fd = fcntl (STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
      if (audit_fd < 0)
        {
          g_printerr ("fsgate mount: --audit-log -: standard output: %s\n", g_strerror (errno));
          return FSG_EXIT_SETUP;
        }
    }
  else if (audit_log != NULL)
    {
      audit_fd = open (audit_log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0600);
      if (audit_fd < 0)
        {
          g_printerr ("fsgate mount: cannot open audit log '%s': %s\n", audit_log, g_strerror (errno));
          return FSG_EXIT_SETUP;
        }
    }

  if (stats_file != NULL && strcmp (stats_file, "-") == 0)
    stats.fd = STDERR_FILENO;
  else if (stats_file != NULL)
    {
      stats.fd = stats_file_fd = open (stats_file, O_WRONLY | O_TRUNC | O_CREAT | O_CLOEXEC | O_NOCTTY, 0644);
      stats.own = TRUE;
    }
  if (stats_file != NULL && stats.fd < 0)
    {
      g_printerr ("fsgate mount: cannot open --stats file '%s': %s\n", stats_file, g_strerror (errno));
      return FSG_EXIT_SETUP;
    }

  close_inherited_fds (inherited);

  fopts.audit_level = (audit != NULL && strcmp (audit, "all") == 0) ? FSG_AUDIT_ALL : FSG_AUDIT_DENIED;
  fopts.audit_fd = audit_fd;
  fopts.debug = debug;
  fopts.user_xattrs = xattr;
  fopts.host_checks = host_checks;
  fopts.op_timing = stats.fd >= 0;
  fopts.inspection = TRUE;
  fs = fsg_fs_new (policy, &fopts, &error);
  if (fs == NULL)
    {
      g_printerr ("fsgate mount: %s\n", error->message);
      return FSG_EXIT_SETUP;
    }
  /* SIGUSR1 asks for --stats (serve() reads it from a signalfd); once the
   * view is mounted it must never kill the daemon. */
  sigemptyset (&usr1);
  sigaddset (&usr1, SIGUSR1);
  sigprocmask (SIG_BLOCK, &usr1, NULL);
  if (!fsg_fs_mount (fs, mountpoint, &error))
    {
      g_printerr ("fsgate mount: %s (is it busy or not permitted? as a normal user, fusermount3 must be installed)\n",
                  error->message);
      return FSG_EXIT_SETUP;
    }

  if (foreground)
    return serve (fs, -1, FALSE, &stats);

  /* Fork before any thread exists; the child serves. */
  if (pipe2 (pipefd, O_CLOEXEC) < 0)
    {
      g_printerr ("fsgate mount: pipe: %s\n", g_strerror (errno));
      return FSG_EXIT_SETUP;
    }
  pid = fork ();
  if (pid < 0)
    {
      g_printerr ("fsgate mount: fork: %s\n", g_strerror (errno));
      return FSG_EXIT_SETUP;
    }
  if (pid == 0)
    {
      close (pipefd[0]);
      setsid ();
      status = serve (fs, pipefd[1], TRUE, &stats);
      g_clear_pointer (&fs, fsg_fs_free);
      _exit (status);
    }
  close (pipefd[1]);
  {
    char c = 0;
    ssize_t n = FSG_RETRY (read (pipefd[0], &c, 1));

    close (pipefd[0]);
    if (n == 1 && c == 'R')
      {
        /* The child owns the session now; do not unmount it here. */
        fs = NULL;
        _exit (0);
      }
  }
  g_printerr ("fsgate mount: the serving process failed to start\n");
  fs = NULL;
  _exit (FSG_EXIT_SETUP);
}
