/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Mount helpers for the policy-view tests. Every mount is registered so
 * that an abort (failed assertion), a signal or a normal exit unmounts it
 * and kills its daemon: tests never leave mounts or processes behind.
 */
#include "config.h"

#include "tests/fs/fs-test-util.h"
#include "tests/lib/testlib.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_VIEWS 16

/* Registered for the emergency cleanup; written before fork/mount. */
static char emergency_mnt[MAX_VIEWS][PATH_MAX];
static volatile pid_t emergency_pid[MAX_VIEWS];
static char *fsgate_path;

static void
emergency_cleanup (void)
{
  for (int i = 0; i < MAX_VIEWS; i++)
    {
      if (emergency_pid[i] > 0)
        kill (emergency_pid[i], SIGKILL);
      if (emergency_mnt[i][0] != '\0')
        umount2 (emergency_mnt[i], MNT_DETACH);
    }
  /* every view's directory lives in the scratch directory; with the mounts
   * gone it can be removed whole */
  fsg_test_scratch_cleanup ();
}

static void
on_fatal_signal (int sig)
{
  emergency_cleanup ();
  signal (sig, SIG_DFL);
  raise (sig);
}

void
fsg_view_init (int *argc, char ***argv)
{
  const char *builddir = g_getenv ("FSGATE_BUILDDIR");

  if (builddir != NULL)
    fsgate_path = g_build_filename (builddir, "fsgate", "fsgate", NULL);
  else
    fsgate_path = g_strdup ("fsgate");
  /* Create the scratch directory first: its own handlers are replaced by
   * ours, which unmount before removing it. */
  /* other uids run commands in the views (caller-identity tests) */
  g_assert_no_errno (chmod (fsg_test_scratch_dir ("fs"), 0755));
  atexit (emergency_cleanup);
  signal (SIGABRT, on_fatal_signal);
  signal (SIGSEGV, on_fatal_signal);
  signal (SIGTERM, on_fatal_signal);
  signal (SIGINT, on_fatal_signal);
  signal (SIGALRM, on_fatal_signal);
  signal (SIGPIPE, on_fatal_signal);
}

const char *
fsg_view_fsgate (void)
{
  return fsgate_path;
}

FsgView *
fsg_view_new (const char *tag)
{
  FsgView *v = g_new0 (FsgView, 1);
  g_autofree char *tmpl = g_strdup_printf ("%s/%s-XXXXXX", fsg_test_scratch_dir ("fs"), tag);
  char *tmp = g_mkdtemp (tmpl);

  g_assert_nonnull (tmp);
  v->tmp = realpath (tmp, NULL);
  g_assert_nonnull (v->tmp);
  v->host = g_build_filename (v->tmp, "host", NULL);
  v->mnt = g_build_filename (v->tmp, "mnt", NULL);
  v->audit = g_build_filename (v->tmp, "audit.jsonl", NULL);
  g_assert_no_errno (mkdir (v->host, 0755));
  g_assert_no_errno (mkdir (v->mnt, 0755));
  return v;
}

gboolean
fsg_view_is_mounted (const char *path)
{
  g_autofree char *info = NULL;
  g_auto(GStrv) lines = NULL;

  if (!g_file_get_contents ("/proc/self/mountinfo", &info, NULL, NULL))
    return FALSE;
  lines = g_strsplit (info, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_auto(GStrv) f = g_strsplit (lines[i], " ", 6);
      if (g_strv_length (f) >= 5 && strcmp (f[4], path) == 0)
        return TRUE;
    }
  return FALSE;
}

static void
child_setup (gpointer data)
{
  /* The daemon dies with the test. */
  prctl (PR_SET_PDEATHSIG, SIGTERM);
}

static int
register_slot (const char *mnt)
{
  for (int i = 0; i < MAX_VIEWS; i++)
    if (emergency_mnt[i][0] == '\0')
      {
        g_strlcpy (emergency_mnt[i], mnt, PATH_MAX);
        return i;
      }
  g_assert_not_reached ();
}

gboolean
fsg_view_mount (FsgView *v, const char *const *flags)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GError) error = NULL;
  int slot = register_slot (v->mnt);

  g_ptr_array_add (argv, (gpointer) fsgate_path);
  g_ptr_array_add (argv, (gpointer) "mount");
  for (guint i = 0; flags != NULL && flags[i] != NULL; i++)
    g_ptr_array_add (argv, (gpointer) flags[i]);
  g_ptr_array_add (argv, (gpointer) "--audit-log");
  g_ptr_array_add (argv, v->audit);
  g_ptr_array_add (argv, (gpointer) "-f");
  g_ptr_array_add (argv, v->mnt);
  g_ptr_array_add (argv, NULL);

  if (!g_spawn_async (NULL, (char **) argv->pdata, NULL, G_SPAWN_DO_NOT_REAP_CHILD,
                      child_setup, NULL, &v->pid, &error))
    {
      g_test_fail_printf ("cannot start fsgate: %s", error->message);
      return FALSE;
    }
  emergency_pid[slot] = v->pid;
  for (int i = 0; i < 400; i++)
    {
      int status;

      if (fsg_view_is_mounted (v->mnt))
        return TRUE;
      if (waitpid (v->pid, &status, WNOHANG) == v->pid)
        {
          v->pid = 0;
          emergency_pid[slot] = 0;
          g_test_fail_printf ("fsgate mount exited with status %d before mounting", status);
          return FALSE;
        }
      g_usleep (10000);
    }
  g_test_fail_printf ("fsgate mount did not mount '%s' within 4 s", v->mnt);
  return FALSE;
}

char *
fsg_view_h (FsgView *v, const char *rel)
{
  return rel ? g_build_filename (v->host, rel, NULL) : g_strdup (v->host);
}

char *
fsg_view_v (FsgView *v, const char *rel)
{
  return g_build_filename (v->mnt, v->host, rel, NULL);
}

void
fsg_view_free (FsgView *v)
{
  if (v == NULL)
    return;
  if (v->pid > 0)
    {
      int status = 0;

      kill (v->pid, SIGTERM);
      for (int i = 0; i < 300; i++)
        {
          if (waitpid (v->pid, &status, WNOHANG) == v->pid)
            {
              v->pid = 0;
              break;
            }
          g_usleep (10000);
        }
      if (v->pid > 0)
        {
          kill (v->pid, SIGKILL);
          waitpid (v->pid, &status, 0);
        }
    }
  if (fsg_view_is_mounted (v->mnt))
    umount2 (v->mnt, MNT_DETACH);
  for (int i = 0; i < MAX_VIEWS; i++)
    if (strcmp (emergency_mnt[i], v->mnt) == 0)
      {
        emergency_mnt[i][0] = '\0';
        emergency_pid[i] = 0;
      }
  fsg_test_rm_rf (v->tmp);
  g_free (v->tmp);
  g_free (v->host);
  g_free (v->mnt);
  g_free (v->audit);
  g_free (v);
}
