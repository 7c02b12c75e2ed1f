/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Facility gates and temporary trees for the GLib tests.
 */
#include "config.h"

#include "tests/lib/testlib.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <string.h>
#include <unistd.h>

void
fsg_test_skip_or_fail (const char *reason)
{
  if (g_getenv ("FSGATE_TESTS_MUST_RUN") != NULL)
    g_test_fail_printf ("%s, and FSGATE_TESTS_MUST_RUN is set", reason);
  else
    g_test_skip (reason);
}

gboolean
fsg_test_require_root (void)
{
  if (geteuid () == 0)
    return TRUE;
  fsg_test_skip_or_fail ("needs root");
  return FALSE;
}

gboolean
fsg_test_require_fuse (void)
{
  int fd = open ("/dev/fuse", O_RDWR | O_CLOEXEC);

  if (fd >= 0)
    {
      close (fd);
      return TRUE;
    }
  {
    g_autofree char *why = g_strdup_printf ("needs /dev/fuse (%s)", g_strerror (errno));
    fsg_test_skip_or_fail (why);
  }
  return FALSE;
}

gboolean
fsg_test_require_userns (void)
{
  pid_t pid = fork ();
  int status = 0;

  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    _exit (unshare (CLONE_NEWUSER) == 0 ? 0 : 1);
  while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
    ;
  if (WIFEXITED (status) && WEXITSTATUS (status) == 0)
    return TRUE;
  fsg_test_skip_or_fail ("needs unprivileged user namespaces (unshare(CLONE_NEWUSER) failed)");
  return FALSE;
}

char *
fsg_test_tmpdir_new (const char *tag)
{
  g_autofree char *tmpl = g_strdup_printf ("fsgate-test-%s-XXXXXX", tag ? tag : "t");
  g_autoptr(GError) error = NULL;
  char *dir = g_dir_make_tmp (tmpl, &error);

  g_assert_no_error (error);
  return dir;
}

/* Trusted directories outside $TMPDIR (under /var/lib or /run) still in
 * use, removed at exit and on a fatal signal like the scratch directory. */
static char *outside_dirs[8];
static void install_cleanup (void);

/* TRUE when @dir and every directory above it are root-owned and not
 * group/other-writable; else FALSE with the first one that is not in @why. */
static gboolean
chain_is_trusted (const char *dir, char **why)
{
  g_autofree char *p = g_strdup (dir);

  for (;;)
    {
      struct stat st;
      char *slash;

      if (lstat (p, &st) < 0 || st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
        {
          *why = g_strdup_printf ("%s is not root-owned or is group/other-writable", p);
          return FALSE;
        }
      slash = strrchr (p, '/');
      if (slash == NULL || slash == p)
        return TRUE;
      *slash = '\0';
    }
}

char *
fsg_test_trusted_tmpdir_new (const char *tag)
{
  /* The build tree first; a clone under /tmp or /var/tmp (mode 1777) is not
   * on the trusted chain, so fall back to root's own directories. */
  const char *const candidates[] = { g_getenv ("FSGATE_BUILDDIR"), "/var/lib", "/run", NULL };
  g_autoptr (GString) whys = g_string_new (NULL);

  if (getuid () != 0)
    {
      fsg_test_skip_or_fail ("needs root: symlinks are trusted only on a root-owned chain");
      return NULL;
    }
  for (guint i = 0; i < G_N_ELEMENTS (candidates); i++)
    {
      g_autofree char *real = NULL;
      g_autofree char *tmpl = NULL;
      g_autofree char *why = NULL;
      char *dir;

      if (candidates[i] == NULL || (real = realpath (candidates[i], NULL)) == NULL)
        continue;
      if (!chain_is_trusted (real, &why))
        {
          g_string_append_printf (whys, "%s%s", whys->len ? "; " : "", why);
          continue;
        }
      tmpl = g_strdup_printf ("%s/fsgate-%s-trusted-XXXXXX", real, tag ? tag : "t");
      if (g_mkdtemp_full (tmpl, 0755) == NULL)
        {
          g_string_append_printf (whys, "%scannot create a directory in %s (%s)", whys->len ? "; " : "",
                                  real, g_strerror (errno));
          continue;
        }
      dir = realpath (tmpl, NULL);
      g_assert_nonnull (dir);
      for (guint j = 0; j < G_N_ELEMENTS (outside_dirs); j++)
        if (outside_dirs[j] == NULL)
          {
            outside_dirs[j] = dir;
            break;
          }
      install_cleanup ();
      return dir;
    }
  {
    g_autofree char *reason = g_strdup_printf ("a root-owned tree where symlinks are trusted (%s)", whys->str);
    fsg_test_skip_or_fail (reason);
  }
  return NULL;
}

static void
rm_rf_at (int dfd, const char *name, dev_t dev)
{
  struct stat st;

  if (fstatat (dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return;
  if (S_ISDIR (st.st_mode))
    {
      int fd;
      DIR *d;
      struct dirent *de;

      if (st.st_dev != dev)
        return; /* never descend into a mount left behind */
      fd = openat (dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0)
        return;
      fchmod (fd, 0700);
      d = fdopendir (fd);
      if (d == NULL)
        {
          close (fd);
          return;
        }
      while ((de = readdir (d)) != NULL)
        {
          if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
            continue;
          rm_rf_at (dirfd (d), de->d_name, dev);
        }
      closedir (d);
      unlinkat (dfd, name, AT_REMOVEDIR);
    }
  else
    unlinkat (dfd, name, 0);
}

void
fsg_test_rm_rf (const char *path)
{
  struct stat st;

  if (path == NULL || lstat (path, &st) < 0)
    return;
  rm_rf_at (AT_FDCWD, path, st.st_dev);
}

void
fsg_test_tmpdir_free (char *path)
{
  if (path == NULL)
    return;
  for (guint i = 0; i < G_N_ELEMENTS (outside_dirs); i++)
    if (outside_dirs[i] == path)
      outside_dirs[i] = NULL;
  fsg_test_rm_rf (path);
  g_free (path);
}

void
fsg_test_mkdir (const char *dir, const char *relpath)
{
  g_autofree char *p = g_build_filename (dir, relpath, NULL);

  g_assert_cmpint (g_mkdir_with_parents (p, 0755), ==, 0);
}

void
fsg_test_write_file (const char *dir, const char *relpath, const char *contents)
{
  g_autofree char *p = g_build_filename (dir, relpath, NULL);
  g_autofree char *parent = g_path_get_dirname (p);
  g_autoptr(GError) error = NULL;

  g_assert_cmpint (g_mkdir_with_parents (parent, 0755), ==, 0);
  g_file_set_contents (p, contents, -1, &error);
  g_assert_no_error (error);
}

static char *scratch_dir;

void
fsg_test_scratch_cleanup (void)
{
  if (scratch_dir == NULL)
    return;
  fsg_test_rm_rf (scratch_dir);
  g_clear_pointer (&scratch_dir, g_free);
}

static pid_t cleanup_owner;

static void
cleanup_all (void)
{
  if (getpid () != cleanup_owner)
    return; /* a forked child that called exit() */
  fsg_test_scratch_cleanup ();
  for (guint i = 0; i < G_N_ELEMENTS (outside_dirs); i++)
    if (outside_dirs[i] != NULL)
      fsg_test_rm_rf (outside_dirs[i]);
}

static void
cleanup_on_fatal_signal (int sig)
{
  cleanup_all ();
  signal (sig, SIG_DFL);
  raise (sig);
}

static void
install_cleanup (void)
{
  static const int signals[] = { SIGABRT, SIGSEGV, SIGPIPE, SIGINT, SIGTERM };
  static gboolean installed;

  if (installed)
    return;
  installed = TRUE;
  cleanup_owner = getpid ();
  atexit (cleanup_all);
  for (guint i = 0; i < G_N_ELEMENTS (signals); i++)
    signal (signals[i], cleanup_on_fatal_signal);
}

const char *
fsg_test_scratch_dir (const char *tag)
{
  g_autofree char *made = NULL;

  if (scratch_dir != NULL)
    return scratch_dir;
  made = fsg_test_tmpdir_new (tag);
  scratch_dir = realpath (made, NULL);
  g_assert_nonnull (scratch_dir);
  install_cleanup ();
  return scratch_dir;
}
