/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Integration and security tests of the FUSE policy view: `fsgate mount`
 * over a host tree in a temporary directory, then real syscalls through the
 * mount with exact errnos for the allowed and the refused case of each
 * operation, readdir contents, structural escapes, symlink escapes, a
 * swap race, a real workload, signals and the audit log.
 *
 * Needs root and /dev/fuse (skips with a reason otherwise).
 */
#include "config.h"

#include "tests/fs/fs-test-util.h"
#include "tests/lib/testlib.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <json-glib/json-glib.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#ifndef RENAME_NOREPLACE
# define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
# define RENAME_EXCHANGE (1 << 1)
#endif

static void
check_errno (const char *what, int got, int want, int line)
{
  if (got == want)
    return;
  g_printerr ("line %d: %s: got %s (%d), want %s (%d)\n", line, what,
              got ? g_strerror (got) : "success", got, want ? g_strerror (want) : "success", want);
  g_test_fail ();
}
#define CHECK(expr, want) check_errno (#expr, (expr) < 0 ? errno : 0, (want), __LINE__)

static int
open_errno (const char *path, int flags)
{
  int fd = open (path, flags | O_CLOEXEC, 0644);

  if (fd < 0)
    return -1;
  close (fd);
  return 0;
}

static char *
slurp (const char *path)
{
  char *contents = NULL;

  if (!g_file_get_contents (path, &contents, NULL, NULL))
    return NULL;
  return contents;
}

static void
put (FsgView *v, const char *rel, const char *contents)
{
  fsg_test_write_file (v->host, rel, contents);
}

/* The standard tree and its policy. */
static FsgView *
standard_view (const char *tag, const char *const *extra)
{
  FsgView *v = fsg_view_new (tag);
  g_autoptr(GPtrArray) flags = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *privfile = NULL;
  g_autofree char *hl = NULL;

  put (v, "rw/a.txt", "alpha");
  put (v, "rw/sub/b.txt", "beta");
  put (v, "rw/secret1", "TOPSECRET-glob");
  put (v, "rw/private/key", "TOPSECRET-literal");
  put (v, "rw/privfile", "TOPSECRET-file");
  put (v, "rw/locked/l.txt", "locked");
  put (v, "rw/nested/n.txt", "nested");
  put (v, "rw/d/inner/key", "TOPSECRET-anchored");
  put (v, "rw/d/other.txt", "other");
  put (v, "rw/g/x/token", "TOPSECRET-token");
  put (v, "rw/g2/a/b/token", "TOPSECRET-deep");
  put (v, "rw/free/b/token", "free");
  put (v, "ro/r.txt", "readonly");
  put (v, "ro/wr/w.txt", "writable-in-ro");
  put (v, "outside/o.txt", "outside");
  /* A host hard link to a literal deny-read file, made before mounting. */
  privfile = fsg_view_h (v, "rw/privfile");
  hl = fsg_view_h (v, "rw/sub/hardlink");
  g_assert_no_errno (link (privfile, hl));

#define H(rel) g_build_filename (v->host, rel, NULL)
  g_ptr_array_add (flags, g_strdup ("--profile"));
  g_ptr_array_add (flags, g_strdup ("none"));
  g_ptr_array_add (flags, g_strdup ("--rw"));
  g_ptr_array_add (flags, H ("rw"));
  g_ptr_array_add (flags, g_strdup ("--ro"));
  g_ptr_array_add (flags, H ("ro"));
  g_ptr_array_add (flags, g_strdup ("--rw"));
  g_ptr_array_add (flags, H ("ro/wr"));
  g_ptr_array_add (flags, g_strdup ("--ro"));
  g_ptr_array_add (flags, H ("rw/nested"));
  g_ptr_array_add (flags, g_strdup ("--deny-read"));
  g_ptr_array_add (flags, g_strdup ("secret*"));
  g_ptr_array_add (flags, g_strdup ("--deny-read"));
  g_ptr_array_add (flags, H ("rw/private"));
  g_ptr_array_add (flags, g_strdup ("--deny-read"));
  g_ptr_array_add (flags, H ("rw/privfile"));
  g_ptr_array_add (flags, g_strdup ("--deny-read"));
  g_ptr_array_add (flags, H ("rw/d/inner/key"));
  g_ptr_array_add (flags, g_strdup ("--deny-read"));
  g_ptr_array_add (flags, H ("rw/g/*/token"));
  g_ptr_array_add (flags, g_strdup ("--deny-read"));
  g_ptr_array_add (flags, H ("rw/g2/**/token"));
  g_ptr_array_add (flags, g_strdup ("--deny-write"));
  g_ptr_array_add (flags, H ("rw/locked"));
#undef H
  for (guint i = 0; extra != NULL && extra[i] != NULL; i++)
    g_ptr_array_add (flags, g_strdup (extra[i]));
  g_ptr_array_add (flags, NULL);
  if (!fsg_view_mount (v, (const char *const *) flags->pdata))
    {
      fsg_view_free (v);
      return NULL;
    }
  return v;
}

static gboolean
require (void)
{
  return fsg_test_require_root () && fsg_test_require_fuse ();
}

static int
cmp_str (gconstpointer a, gconstpointer b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

static char *
listing (const char *path)
{
  DIR *d = opendir (path);
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  GString *out = g_string_new (NULL);
  struct dirent *de;

  if (d == NULL)
    {
      g_string_printf (out, "<%s>", g_strerror (errno));
      return g_string_free (out, FALSE);
    }
  while ((de = readdir (d)) != NULL)
    if (strcmp (de->d_name, ".") != 0 && strcmp (de->d_name, "..") != 0)
      g_ptr_array_add (names, g_strdup (de->d_name));
  closedir (d);
  g_ptr_array_sort (names, cmp_str);
  for (guint i = 0; i < names->len; i++)
    {
      if (i > 0)
        g_string_append_c (out, ' ');
      g_string_append (out, names->pdata[i]);
    }
  return g_string_free (out, FALSE);
}

/* ---- lookup and readdir ------------------------------------------------ */

static void
test_lookup (void)
{
  g_autoptr(FsgView) v = NULL;
  struct stat st;
  g_autofree char *a = NULL, *o = NULL, *s = NULL, *p = NULL, *pk = NULL, *pf = NULL;
  g_autofree char *r = NULL, *n = NULL, *hl = NULL, *root = NULL, *content = NULL;
  g_autofree char *first = NULL, *top = NULL;

  if (!require () || (v = standard_view ("lookup", NULL)) == NULL)
    return;
  a = fsg_view_v (v, "rw/a.txt");
  o = g_build_filename (v->mnt, v->host, "outside", "o.txt", NULL);
  s = fsg_view_v (v, "rw/secret1");
  p = fsg_view_v (v, "rw/private");
  pk = fsg_view_v (v, "rw/private/key");
  pf = fsg_view_v (v, "rw/privfile");
  r = fsg_view_v (v, "ro/r.txt");
  n = fsg_view_v (v, "rw/nested/n.txt");
  hl = fsg_view_v (v, "rw/sub/hardlink");

  CHECK (lstat (a, &st), 0);
  CHECK (lstat (r, &st), 0);
  CHECK (lstat (n, &st), 0);
  CHECK (lstat (o, &st), ENOENT);
  CHECK (lstat (s, &st), EACCES);
  CHECK (lstat (p, &st), EACCES);
  CHECK (lstat (pk, &st), EACCES);
  CHECK (lstat (pf, &st), EACCES);
  /* Denied by identity: another name of a literal deny-read file. */
  CHECK (lstat (hl, &st), EACCES);
  CHECK (open_errno (hl, O_RDONLY), EACCES);

  content = slurp (a);
  g_assert_cmpstr (content, ==, "alpha");

  /* The synthetic root lists only the way to the roots. */
  first = g_strndup (v->host + 1, strcspn (v->host + 1, "/"));
  root = listing (v->mnt);
  g_assert_cmpstr (root, ==, first);
  top = g_build_filename (v->mnt, v->host, NULL);
  g_free (root);
  root = listing (top);
  g_assert_cmpstr (root, ==, "ro rw");
  /* Synthetic directories are read-only. */
  {
    g_autofree char *nd = g_build_filename (top, "newdir", NULL);
    CHECK (mkdir (nd, 0755), EROFS);
  }
}

static void
test_readdir (void)
{
  g_autoptr(FsgView) v = NULL;
  g_autofree char *rw = NULL, *ls = NULL, *ro = NULL, *sub = NULL;

  if (!require () || (v = standard_view ("readdir", NULL)) == NULL)
    return;
  rw = fsg_view_v (v, "rw");
  ls = listing (rw);
  /* Denied names are listed (hide-denied is off) but cannot be opened. */
  g_assert_cmpstr (ls, ==, "a.txt d free g g2 locked nested private privfile secret1 sub");
  g_free (ls);
  sub = fsg_view_v (v, "rw/sub");
  ls = listing (sub);
  g_assert_cmpstr (ls, ==, "b.txt hardlink");
  g_free (ls);
  ro = fsg_view_v (v, "ro");
  ls = listing (ro);
  g_assert_cmpstr (ls, ==, "r.txt wr");
  g_free (ls);
  {
    g_autofree char *priv = fsg_view_v (v, "rw/private");
    ls = listing (priv);
    g_assert_cmpstr (ls, ==, "<Permission denied>");
  }
}

static void
test_hide_denied (void)
{
  const char *extra[] = { "--hide-denied", NULL };
  g_autoptr(FsgView) v = NULL;
  g_autofree char *rw = NULL, *ls = NULL, *s = NULL, *hl = NULL, *sub = NULL;
  struct stat st;

  if (!require () || (v = standard_view ("hide", extra)) == NULL)
    return;
  rw = fsg_view_v (v, "rw");
  ls = listing (rw);
  g_assert_cmpstr (ls, ==, "a.txt d free g g2 locked nested sub");
  s = fsg_view_v (v, "rw/secret1");
  CHECK (lstat (s, &st), ENOENT);
  hl = fsg_view_v (v, "rw/sub/hardlink");
  CHECK (lstat (hl, &st), ENOENT);
  sub = fsg_view_v (v, "rw/sub");
  g_free (ls);
  ls = listing (sub);
  g_assert_cmpstr (ls, ==, "b.txt");
}

/* ---- files --------------------------------------------------------------- */

static void
test_read_write (void)
{
  g_autoptr(FsgView) v = NULL;
  g_autofree char *a = NULL, *r = NULL, *s = NULL, *l = NULL, *newf = NULL, *newro = NULL;
  g_autofree char *news = NULL, *newl = NULL, *newn = NULL, *neww = NULL, *host_a = NULL, *c = NULL;
  int fd;

  if (!require () || (v = standard_view ("rdwr", NULL)) == NULL)
    return;
  a = fsg_view_v (v, "rw/a.txt");
  r = fsg_view_v (v, "ro/r.txt");
  s = fsg_view_v (v, "rw/secret1");
  l = fsg_view_v (v, "rw/locked/l.txt");

  CHECK (open_errno (r, O_RDONLY), 0);
  CHECK (open_errno (r, O_WRONLY), EROFS);
  CHECK (open_errno (r, O_RDWR), EROFS);
  CHECK (open_errno (r, O_RDONLY | O_TRUNC), EROFS);
  CHECK (open_errno (l, O_RDONLY), 0);
  CHECK (open_errno (l, O_WRONLY), EROFS);
  CHECK (open_errno (s, O_RDONLY), EACCES);

  fd = open (a, O_WRONLY | O_TRUNC | O_CLOEXEC);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (write (fd, "new", 3), ==, 3);
  close (fd);
  host_a = fsg_view_h (v, "rw/a.txt");
  c = slurp (host_a);
  g_assert_cmpstr (c, ==, "new");
  g_free (c);
  /* O_APPEND and a write-only fd with the writeback cache. */
  fd = open (a, O_WRONLY | O_APPEND | O_CLOEXEC);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (write (fd, "er", 2), ==, 2);
  close (fd);
  c = slurp (a);
  g_assert_cmpstr (c, ==, "newer");

  newf = fsg_view_v (v, "rw/new.txt");
  CHECK (open_errno (newf, O_WRONLY | O_CREAT | O_EXCL), 0);
  CHECK (open_errno (newf, O_WRONLY | O_CREAT | O_EXCL), EEXIST);
  newro = fsg_view_v (v, "ro/new.txt");
  CHECK (open_errno (newro, O_WRONLY | O_CREAT), EROFS);
  news = fsg_view_v (v, "rw/secret-new");
  CHECK (open_errno (news, O_WRONLY | O_CREAT), EACCES);
  newl = fsg_view_v (v, "rw/locked/new");
  CHECK (open_errno (newl, O_WRONLY | O_CREAT), EROFS);
  newn = fsg_view_v (v, "rw/nested/new");
  CHECK (open_errno (newn, O_WRONLY | O_CREAT), EROFS);
  neww = fsg_view_v (v, "ro/wr/new");
  CHECK (open_errno (neww, O_WRONLY | O_CREAT), 0);
  {
    g_autofree char *hw = fsg_view_h (v, "ro/wr/new");
    struct stat st;
    CHECK (lstat (hw, &st), 0);
  }
}

static void
test_mutations (void)
{
  g_autoptr(FsgView) v = NULL;
  struct timespec ts[2] = { { 0, UTIME_NOW }, { 0, UTIME_NOW } };
  char buf[64];
  ssize_t n;

  if (!require () || (v = standard_view ("mut", NULL)) == NULL)
    return;
  g_autofree char *m = fsg_view_v (v, "rw/m");
  g_autofree char *rom = fsg_view_v (v, "ro/m");
  g_autofree char *sm = fsg_view_v (v, "rw/secretdir");
  g_autofree char *rowr = fsg_view_v (v, "ro/wr");
  g_autofree char *b = fsg_view_v (v, "rw/sub/b.txt");
  g_autofree char *r = fsg_view_v (v, "ro/r.txt");
  g_autofree char *s = fsg_view_v (v, "rw/secret1");
  g_autofree char *l = fsg_view_v (v, "rw/locked/l.txt");
  g_autofree char *ln = fsg_view_v (v, "rw/ln");
  g_autofree char *roln = fsg_view_v (v, "ro/ln");
  g_autofree char *sln = fsg_view_v (v, "rw/secretln");
  g_autofree char *a = fsg_view_v (v, "rw/a.txt");
  g_autofree char *a2 = fsg_view_v (v, "rw/a2");
  g_autofree char *r2 = fsg_view_v (v, "rw/r2");
  g_autofree char *slink = fsg_view_v (v, "rw/secretlink");
  g_autofree char *nn = fsg_view_v (v, "rw/nested/n.txt");
  g_autofree char *n2 = fsg_view_v (v, "rw/n2");
  g_autofree char *fifo = fsg_view_v (v, "rw/fifo");
  g_autofree char *dev = fsg_view_v (v, "rw/dev");
  g_autofree char *rofifo = fsg_view_v (v, "ro/fifo");

  CHECK (mkdir (m, 0755), 0);
  CHECK (mkdir (rom, 0755), EROFS);
  CHECK (mkdir (sm, 0755), EACCES);
  CHECK (rmdir (m), 0);
  CHECK (rmdir (rowr), EROFS);
  CHECK (unlink (b), 0);
  CHECK (unlink (r), EROFS);
  CHECK (unlink (s), EACCES);
  CHECK (unlink (l), EROFS);

  CHECK (symlink ("a.txt", ln), 0);
  n = readlink (ln, buf, sizeof buf - 1);
  g_assert_cmpint (n, ==, 5);
  buf[n] = '\0';
  g_assert_cmpstr (buf, ==, "a.txt");
  CHECK (symlink ("a.txt", roln), EROFS);
  CHECK (symlink ("a.txt", sln), EACCES);

  CHECK (link (a, a2), 0);
  CHECK (link (r, r2), EROFS);
  CHECK (link (a, slink), EACCES);
  CHECK (link (nn, n2), EROFS);

  CHECK (mkfifo (fifo, 0644), 0);
  CHECK (mknod (dev, S_IFCHR | 0644, makedev (1, 3)), EPERM);
  CHECK (mkfifo (rofifo, 0644), EROFS);

  CHECK (chmod (a, 0600), 0);
  CHECK (chmod (r, 0600), EROFS);
  CHECK (truncate (a, 1), 0);
  CHECK (truncate (r, 1), EROFS);
  CHECK (utimensat (AT_FDCWD, a, ts, 0), 0);
  CHECK (utimensat (AT_FDCWD, r, ts, 0), EROFS);
  CHECK (chown (a, 1, 1), 0);
  CHECK (chown (r, 1, 1), EROFS);
  {
    struct stat st;
    g_autofree char *ha = fsg_view_h (v, "rw/a.txt");
    CHECK (lstat (ha, &st), 0);
    g_assert_cmpint (st.st_uid, ==, 1);
    g_assert_cmpint (st.st_size, ==, 1);
    g_assert_cmpint (st.st_mode & 07777, ==, 0600);
  }
}

/* ---- structural escapes ------------------------------------------------- */

static int
rename2 (const char *a, const char *b, unsigned flags)
{
  return (int) syscall (SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, flags);
}

static void
test_structural (void)
{
  g_autoptr(FsgView) v = NULL;
  struct stat st;

  if (!require () || (v = standard_view ("struct", NULL)) == NULL)
    return;
  g_autofree char *d = fsg_view_v (v, "rw/d");
  g_autofree char *d2 = fsg_view_v (v, "rw/d2");
  g_autofree char *inner = fsg_view_v (v, "rw/d/inner");
  g_autofree char *inner2 = fsg_view_v (v, "rw/inner2");
  g_autofree char *s = fsg_view_v (v, "rw/secret1");
  g_autofree char *plain = fsg_view_v (v, "rw/plain");
  g_autofree char *a = fsg_view_v (v, "rw/a.txt");
  g_autofree char *s9 = fsg_view_v (v, "rw/secret9");
  g_autofree char *roa = fsg_view_v (v, "ro/a.txt");
  g_autofree char *r = fsg_view_v (v, "ro/r.txt");
  g_autofree char *rwr = fsg_view_v (v, "rw/r.txt");
  g_autofree char *nested = fsg_view_v (v, "rw/nested");
  g_autofree char *nested2 = fsg_view_v (v, "rw/nested2");
  g_autofree char *wr = fsg_view_v (v, "ro/wr");
  g_autofree char *wr2 = fsg_view_v (v, "ro/wr2");
  g_autofree char *suba = fsg_view_v (v, "rw/sub/a.txt");
  g_autofree char *b = fsg_view_v (v, "rw/sub/b.txt");
  g_autofree char *l = fsg_view_v (v, "rw/locked/l.txt");
  g_autofree char *pf = fsg_view_v (v, "rw/privfile");
  g_autofree char *gx = fsg_view_v (v, "rw/g/x");
  g_autofree char *gtoken = fsg_view_v (v, "rw/g/x/token");
  g_autofree char *moved = fsg_view_v (v, "rw/moved");
  g_autofree char *moved_token = fsg_view_v (v, "rw/moved/token");
  g_autofree char *nd = fsg_view_v (v, "rw/newdir");
  g_autofree char *nd_token = fsg_view_v (v, "rw/newdir/token");
  g_autofree char *gy = fsg_view_v (v, "rw/g/y");
  g_autofree char *sub = fsg_view_v (v, "rw/sub");
  g_autofree char *sub2 = fsg_view_v (v, "rw/sub2");
  g_autofree char *other = fsg_view_v (v, "rw/d/other.txt");

  /* Ancestors of a deny rule cannot be renamed or removed. */
  CHECK (rename (d, d2), EPERM);
  CHECK (rename (inner, inner2), EPERM);
  CHECK (rmdir (inner), EPERM);
  CHECK (rmdir (d), EPERM);
  /* ...but their other contents can. */
  CHECK (unlink (other), 0);
  /* Names matching a deny rule cannot be renamed away or created. */
  CHECK (rename (s, plain), EACCES);
  CHECK (rename (a, s9), EACCES);
  CHECK (rename (a, pf), EACCES);
  /* Into and out of read-only places. */
  CHECK (rename (a, roa), EROFS);
  CHECK (rename (r, rwr), EROFS);
  CHECK (rename (a, l), EROFS);
  /* Roots. */
  CHECK (rename (nested, nested2), EROFS);
  CHECK (rename (wr, wr2), EROFS);
  /* A directory may not carry a path out of an anchored glob deny... */
  {
    int e = rename (gx, moved) < 0 ? errno : 0;
    if (e != EXDEV && e != EPERM)
      {
        g_printerr ("rename out of a glob scope: %s\n", e ? g_strerror (e) : "success");
        g_test_fail ();
      }
    CHECK (lstat (gtoken, &st), EACCES);
    CHECK (open_errno (moved_token, O_RDONLY), ENOENT);
  }
  /* ...or into one. */
  CHECK (mkdir (nd, 0755), 0);
  CHECK (open_errno (nd_token, O_WRONLY | O_CREAT), 0);
  {
    int e = rename (nd, gy) < 0 ? errno : 0;
    if (e != EXDEV && e != EPERM)
      {
        g_printerr ("rename into a glob scope: %s\n", e ? g_strerror (e) : "success");
        g_test_fail ();
      }
  }
  /* Below a recursive glob nothing is protected, but a directory still may
   * not leave or enter the glob's scope (EXDEV: mv copies file by file). */
  {
    g_autofree char *g2a = fsg_view_v (v, "rw/g2/a");
    g_autofree char *g2c = fsg_view_v (v, "rw/g2/c");
    g_autofree char *g2c_token = fsg_view_v (v, "rw/g2/c/b/token");
    g_autofree char *out = fsg_view_v (v, "rw/out");
    g_autofree char *out_token = fsg_view_v (v, "rw/out/b/token");
    g_autofree char *fr = fsg_view_v (v, "rw/free");
    g_autofree char *g2free = fsg_view_v (v, "rw/g2/free");
    g_autofree char *fr2 = fsg_view_v (v, "rw/free2");

    CHECK (rename (g2a, out), EXDEV);
    CHECK (open_errno (out_token, O_RDONLY), ENOENT);
    CHECK (rename (fr, g2free), EXDEV);
    CHECK (rename (g2a, g2c), 0);
    CHECK (open_errno (g2c_token, O_RDONLY), EACCES);
    CHECK (rename (fr, fr2), 0);
  }
  /* Ordinary renames work, with the renameat2 flags. */
  CHECK (rename (a, suba), 0);
  CHECK (rename2 (suba, b, RENAME_NOREPLACE), EEXIST);
  CHECK (rename2 (suba, b, RENAME_EXCHANGE), 0);
  CHECK (rename2 (b, l, RENAME_EXCHANGE), EROFS);
  CHECK (rename (sub, sub2), 0);
  {
    g_autofree char *c = NULL;
    g_autofree char *moved_b = fsg_view_v (v, "rw/sub2/b.txt");
    c = slurp (moved_b);
    g_assert_cmpstr (c, ==, "alpha");
  }
}

static void
test_link_denied (void)
{
  g_autoptr(FsgView) v = NULL;

  if (!require () || (v = standard_view ("link", NULL)) == NULL)
    return;
  g_autofree char *pf = fsg_view_v (v, "rw/privfile");
  g_autofree char *s = fsg_view_v (v, "rw/secret1");
  g_autofree char *pk = fsg_view_v (v, "rw/private/key");
  g_autofree char *x = fsg_view_v (v, "rw/x");
  g_autofree char *hl = fsg_view_v (v, "rw/sub/hardlink");
  g_autofree char *y = fsg_view_v (v, "rw/y");

  CHECK (link (pf, x), EACCES);
  CHECK (link (s, x), EACCES);
  CHECK (link (pk, x), EACCES);
  CHECK (link (hl, y), EACCES);
  CHECK (open_errno (x, O_RDONLY), ENOENT);
}

/* ---- symlinks ------------------------------------------------------------ */

static void
test_symlink_escape (void)
{
  g_autoptr(FsgView) v = NULL;

  if (!require () || (v = fsg_view_new ("symlink")) == NULL)
    return;
  {
    g_autofree char *host_rel = NULL, *host_dir = NULL, *host_chain = NULL;
    put (v, "rw/secret1", "TOPSECRET");
    put (v, "rw/private/key", "TOPSECRET");
    put (v, "outside/o.txt", "outside");
    host_rel = fsg_view_h (v, "rw/hostlink");
    g_assert_no_errno (symlink ("secret1", host_rel));
    host_dir = fsg_view_h (v, "rw/dirlink");
    g_assert_no_errno (symlink ("private", host_dir));
    host_chain = fsg_view_h (v, "rw/chain");
    g_assert_no_errno (symlink ("../rw/../rw/private/key", host_chain));
  }
  {
    g_autofree char *rw = fsg_view_h (v, "rw");
    g_autofree char *priv = fsg_view_h (v, "rw/private");
    const char *flags[] = { "--profile", "none", "--rw", rw, "--deny-read", "secret*",
                            "--deny-read", priv, NULL };
    if (!fsg_view_mount (v, flags))
      return;
  }
  g_autofree char *hostlink = fsg_view_v (v, "rw/hostlink");
  g_autofree char *dirlink = fsg_view_v (v, "rw/dirlink/key");
  g_autofree char *chain = fsg_view_v (v, "rw/chain");
  g_autofree char *l2 = fsg_view_v (v, "rw/l2");
  g_autofree char *l3 = fsg_view_v (v, "rw/l3");
  g_autofree char *l4 = fsg_view_v (v, "rw/l4");
  g_autofree char *loop1 = fsg_view_v (v, "rw/loop1");
  g_autofree char *loop2 = fsg_view_v (v, "rw/loop2");
  g_autofree char *via = fsg_view_v (v, "rw/l4/key");

  /* Links planted on the host are resolved by the kernel inside the view. */
  CHECK (open_errno (hostlink, O_RDONLY), EACCES);
  CHECK (open_errno (dirlink, O_RDONLY), EACCES);
  CHECK (open_errno (chain, O_RDONLY), EACCES);
  /* Links made through the view, to a denied file, out of every root, and loops. */
  CHECK (symlink ("secret1", l2), 0);
  CHECK (open_errno (l2, O_RDONLY), EACCES);
  CHECK (symlink ("../outside/o.txt", l3), 0);
  CHECK (open_errno (l3, O_RDONLY), ENOENT);
  CHECK (symlink ("../../../rw/private", l4), 0);
  CHECK (open_errno (via, O_RDONLY), ENOENT);
  CHECK (symlink ("loop2", loop1), 0);
  CHECK (symlink ("loop1", loop2), 0);
  CHECK (open_errno (loop1, O_RDONLY), ELOOP);
  /* A symlink planted on the host behind a cached negative entry: the
   * kernel sends CREATE, and the daemon must not follow the link. */
  {
    g_autofree char *plant = fsg_view_v (v, "rw/plant");
    g_autofree char *hplant = fsg_view_h (v, "rw/plant");
    g_autofree char *target = fsg_view_h (v, "outside/escaped");
    struct stat st;

    CHECK (lstat (plant, &st), ENOENT);
    g_assert_no_errno (symlink (target, hplant));
    (void) open_errno (plant, O_WRONLY | O_CREAT);
    CHECK (lstat (target, &st), ENOENT);
  }
  /* A create through a dangling link is not followed by the daemon. */
  {
    g_autofree char *dangling = fsg_view_v (v, "rw/dangling");
    g_autofree char *target = fsg_view_h (v, "outside/created-by-escape");
    struct stat st;

    CHECK (symlink (target, dangling), 0);
    (void) open_errno (dangling, O_WRONLY | O_CREAT | O_NOFOLLOW);
    CHECK (lstat (target, &st), ENOENT);
  }
}

/* ---- race: a directory swapped for a symlink while others read through it - */

typedef struct
{
  FsgView *v;
  volatile gboolean stop;
  gint ok_reads;
  gint leaks;
  gint swaps;
} RaceData;

static gpointer
race_swapper (gpointer p)
{
  RaceData *rd = p;
  g_autofree char *a = fsg_view_h (rd->v, "rw/swap");
  g_autofree char *b = fsg_view_h (rd->v, "rw/swap.alt");

  for (guint n = 0; !rd->stop; n++)
    {
      /* Atomically exchange the real directory and the symlink on the host. */
      if (syscall (SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) == 0)
        g_atomic_int_inc (&rd->swaps);
      /* On 2 loaded cores a swapper that never sleeps can starve the
       * readers and the daemon; the race stays tens of thousands of swaps
       * a second. */
      if (n % 64 == 63)
        g_usleep (100);
    }
  return NULL;
}

static gpointer
race_reader (gpointer p)
{
  RaceData *rd = p;
  g_autofree char *data = fsg_view_v (rd->v, "rw/swap/data");
  g_autofree char *dir = fsg_view_v (rd->v, "rw/swap");

  while (!rd->stop)
    {
      char buf[64] = { 0 };
      int fd = open (data, O_RDONLY | O_CLOEXEC);
      int dfd;

      if (fd >= 0)
        {
          ssize_t n = read (fd, buf, sizeof buf - 1);
          if (n > 0 && strstr (buf, "TOPSECRET") != NULL)
            g_atomic_int_inc (&rd->leaks);
          else if (n > 0)
            g_atomic_int_inc (&rd->ok_reads);
          close (fd);
        }
      /* Through a directory fd that stays open across the swaps. */
      dfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (dfd >= 0)
        {
          for (int i = 0; i < 20; i++)
            {
              fd = openat (dfd, "data", O_RDONLY | O_CLOEXEC);
              if (fd >= 0)
                {
                  ssize_t n = read (fd, buf, sizeof buf - 1);
                  if (n > 0 && strstr (buf, "TOPSECRET") != NULL)
                    g_atomic_int_inc (&rd->leaks);
                  close (fd);
                }
            }
          close (dfd);
        }
    }
  return NULL;
}

static void
test_race (void)
{
  g_autoptr(FsgView) v = NULL;
  RaceData rd = { 0 };
  GThread *threads[4];

  if (!require () || (v = fsg_view_new ("race")) == NULL)
    return;
  put (v, "rw/swap/data", "public");
  put (v, "rw/private/data", "TOPSECRET");
  {
    g_autofree char *alt = fsg_view_h (v, "rw/swap.alt");
    g_assert_no_errno (symlink ("private", alt));
  }
  {
    g_autofree char *rw = fsg_view_h (v, "rw");
    g_autofree char *priv = fsg_view_h (v, "rw/private");
    const char *flags[] = { "--profile", "none", "--rw", rw, "--deny-read", priv, NULL };
    if (!fsg_view_mount (v, flags))
      return;
  }
  rd.v = v;
  threads[0] = g_thread_new ("swapper", race_swapper, &rd);
  for (int i = 1; i < 4; i++)
    threads[i] = g_thread_new ("reader", race_reader, &rd);
  /* At least 4 s; then until a reader got through at least once (whether
   * "swap" is the directory or the symlink is decided at each lookup, about
   * once a second, so a short run can see only the symlink), 12 s at most. */
  for (gint64 start = g_get_monotonic_time ();;)
    {
      gint64 elapsed = g_get_monotonic_time () - start;
      if ((elapsed >= 4 * G_USEC_PER_SEC && g_atomic_int_get (&rd.ok_reads) > 0) ||
          elapsed >= 12 * G_USEC_PER_SEC)
        break;
      g_usleep (G_USEC_PER_SEC / 10);
    }
  rd.stop = TRUE;
  for (int i = 0; i < 4; i++)
    g_thread_join (threads[i]);
  g_test_message ("race: %d swaps, %d good reads, %d leaks", rd.swaps, rd.ok_reads, rd.leaks);
  g_assert_cmpint (rd.leaks, ==, 0);
  g_assert_cmpint (rd.swaps, >, 100);
  g_assert_cmpint (rd.ok_reads, >, 0);
}

/* ---- a real workload on a writable root -------------------------------- */

static gboolean
run_in (const char *dir, const char *cmd)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL, *err = NULL;
  const char *argv[] = { "/bin/sh", "-ec", cmd, NULL };
  int status = 0;

  if (!g_spawn_sync (dir, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, &error))
    {
      g_printerr ("%s: %s\n", cmd, error->message);
      return FALSE;
    }
  if (!g_spawn_check_wait_status (status, NULL))
    {
      g_printerr ("'%s' failed:\n%s%s\n", cmd, out, err);
      return FALSE;
    }
  return TRUE;
}

static void
test_workload (void)
{
  g_autoptr(FsgView) v = NULL;
  g_autofree char *gcc = g_find_program_in_path ("gcc");
  g_autofree char *git = g_find_program_in_path ("git");
  g_autofree char *tar = g_find_program_in_path ("tar");

  if (!require ())
    return;
  if (gcc == NULL || git == NULL || tar == NULL)
    {
      fsg_test_skip_or_fail ("needs gcc, git and tar");
      return;
    }
  v = fsg_view_new ("work");
  put (v, "rw/.keep", "");
  for (int i = 0; i < 200; i++)
    {
      g_autofree char *rel = g_strdup_printf ("src/d%d/f%d.txt", i % 10, i);
      g_autofree char *body = g_strdup_printf ("file %d\n", i);
      put (v, rel, body);
    }
  {
    g_autofree char *cmd = g_strdup_printf ("tar -C '%s' -cf '%s/src.tar' src", v->host, v->tmp);
    g_assert_true (run_in ("/", cmd));
  }
  {
    g_autofree char *rw = fsg_view_h (v, "rw");
    const char *flags[] = { "--profile", "none", "--rw", rw, "--ro", "/usr", "--ro", "/etc", NULL };
    if (!fsg_view_mount (v, flags))
      return;
  }
  g_autofree char *w = fsg_view_v (v, "rw");
  g_autofree char *untar = g_strdup_printf ("tar -xf '%s/src.tar' && diff -r src '%s/src' >/dev/null", v->tmp, v->host);
  g_assert_true (run_in (w, untar));
  g_assert_true (run_in (w, "printf '#include <stdio.h>\\nint main(void){puts(\"hello\");return 0;}\\n' > hello.c && "
                            "gcc -O1 -o hello hello.c && ./hello | grep -qx hello"));
  g_assert_true (run_in (w, "mkdir repo && cd repo && git init -q && cp ../hello.c . && git add hello.c && "
                            "git -c user.name=t -c user.email=t@example.org commit -qm init && "
                            "git log --oneline | grep -q init && git status --porcelain | wc -l | grep -qx 0"));
  g_assert_true (run_in (w, "rm -rf src repo && test ! -e src"));
}

/* ---- signals and lifetime --------------------------------------------- */

static void
test_sigterm (void)
{
  g_autoptr(FsgView) v = NULL;
  int status = 0;
  gboolean exited = FALSE;

  if (!require () || (v = fsg_view_new ("term")) == NULL)
    return;
  put (v, "ro/f", "x");
  {
    g_autofree char *ro = fsg_view_h (v, "ro");
    const char *flags[] = { "--profile", "none", "--ro", ro, NULL };
    if (!fsg_view_mount (v, flags))
      return;
  }
  g_assert_true (fsg_view_is_mounted (v->mnt));
  kill (v->pid, SIGTERM);
  for (int i = 0; i < 500 && !exited; i++)
    {
      if (waitpid (v->pid, &status, WNOHANG) == v->pid)
        exited = TRUE;
      else
        g_usleep (10000);
    }
  g_assert_true (exited);
  v->pid = 0;
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 0);
  g_assert_false (fsg_view_is_mounted (v->mnt));
}

static void
test_sigkill (void)
{
  g_autoptr(FsgView) v = NULL;
  int status = 0;
  pid_t child;

  if (!require () || (v = fsg_view_new ("kill")) == NULL)
    return;
  put (v, "ro/f", "x");
  {
    g_autofree char *ro = fsg_view_h (v, "ro");
    const char *flags[] = { "--profile", "none", "--ro", ro, NULL };
    if (!fsg_view_mount (v, flags))
      return;
  }
  kill (v->pid, SIGKILL);
  waitpid (v->pid, &status, 0);
  v->pid = 0;
  /* In a child with an alarm, so that a hang fails instead of blocking. */
  child = fork ();
  g_assert_cmpint (child, >=, 0);
  if (child == 0)
    {
      g_autofree char *f = fsg_view_v (v, "ro/f");
      struct stat st;
      alarm (10);
      if (stat (f, &st) == 0)
        _exit (1);
      _exit (errno == ENOTCONN ? 0 : 2);
    }
  waitpid (child, &status, 0);
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 0);
  g_assert_no_errno (umount2 (v->mnt, MNT_DETACH));
}

static pid_t
find_daemon (const char *mnt)
{
  GDir *d = g_dir_open ("/proc", 0, NULL);
  const char *name;
  pid_t found = 0;

  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *path = NULL, *cmd = NULL;
      gsize len = 0;

      if (!g_ascii_isdigit (name[0]))
        continue;
      path = g_strdup_printf ("/proc/%s/cmdline", name);
      if (!g_file_get_contents (path, &cmd, &len, NULL) || len == 0)
        continue;
      for (gsize i = 0; i + 1 < len; i++)
        if (cmd[i] == '\0')
          cmd[i] = ' ';
      if (strstr (cmd, "fsgate mount") != NULL && strstr (cmd, mnt) != NULL)
        found = atoi (name);
    }
  if (d)
    g_dir_close (d);
  return found;
}

static void
test_background (void)
{
  g_autoptr(FsgView) v = NULL;
  g_autofree char *out = NULL, *err = NULL;
  int status = 0;
  pid_t daemon;

  if (!require () || (v = fsg_view_new ("bg")) == NULL)
    return;
  put (v, "ro/f", "content");
  {
    g_autofree char *ro = fsg_view_h (v, "ro");
    const char *argv[] = { fsg_view_fsgate (), "mount", "--profile", "none", "--ro", ro, v->mnt, NULL };
    g_autofree char *f = NULL, *c = NULL;

    g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, NULL));
    g_assert_true (WIFEXITED (status));
    g_assert_cmpint (WEXITSTATUS (status), ==, 0);
    /* Usable as soon as the command returns. */
    f = fsg_view_v (v, "ro/f");
    c = slurp (f);
    g_assert_cmpstr (c, ==, "content");
  }
  daemon = find_daemon (v->mnt);
  g_assert_cmpint (daemon, >, 0);
  v->pid = 0;
  /* An external unmount ends the daemon. */
  g_assert_no_errno (umount2 (v->mnt, 0));
  for (int i = 0; i < 300 && kill (daemon, 0) == 0; i++)
    g_usleep (10000);
  if (kill (daemon, 0) == 0)
    {
      kill (daemon, SIGKILL);
      g_test_fail_printf ("daemon %d still running after unmount", daemon);
    }
}

/* ---- command line errors ------------------------------------------------ */

static int
run_fsgate (const char *const *args)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  int status = 0;

  g_ptr_array_add (argv, (gpointer) fsg_view_fsgate ());
  g_ptr_array_add (argv, (gpointer) "mount");
  for (guint i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, (gpointer) args[i]);
  g_ptr_array_add (argv, NULL);
  g_assert_true (g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL,
                               NULL, NULL, NULL, NULL, &status, NULL));
  return WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
}

static void
test_cli_errors (void)
{
  g_autoptr(FsgView) v = NULL;

  if (!require () || (v = fsg_view_new ("cli")) == NULL)
    return;
  put (v, "ro/f", "x");
  g_autofree char *ro = fsg_view_h (v, "ro");
  g_autofree char *missing = g_build_filename (v->tmp, "missing", NULL);
  g_autofree char *file = fsg_view_h (v, "ro/f");
  {
    const char *a[] = { "--profile", "none", "--ro", ro, NULL };
    g_assert_cmpint (run_fsgate (a), ==, 2);
  }
  {
    const char *a[] = { "--profile", "none", "--ro", ro, missing, NULL };
    g_assert_cmpint (run_fsgate (a), ==, 2);
  }
  {
    const char *a[] = { "--profile", "none", "--ro", ro, file, NULL };
    g_assert_cmpint (run_fsgate (a), ==, 2);
  }
  {
    const char *a[] = { "--profile", "none", "--ro", ro, ro, NULL };
    g_assert_cmpint (run_fsgate (a), ==, 2); /* not empty */
  }
  {
    const char *a[] = { "--profile", "none", "--ro", ro, "--audit", "bogus", v->mnt, NULL };
    g_assert_cmpint (run_fsgate (a), ==, 2);
  }
  {
    const char *a[] = { "--profile", "none", "--ro", missing, v->mnt, NULL };
    g_assert_cmpint (run_fsgate (a), ==, 2);
  }
  {
    const char *flags[] = { "--profile", "none", "--ro", ro, NULL };
    const char *a[] = { "--profile", "none", "--ro", ro, v->mnt, NULL };
    if (!fsg_view_mount (v, flags))
      return;
    g_assert_cmpint (run_fsgate (a), ==, 125); /* busy */
  }
}

/* ---- objects are created as the caller, without set-id bits ------------ */

static void
test_caller_identity (void)
{
  g_autoptr(FsgView) v = NULL;
  int status = 0;
  pid_t child;

  if (!require () || (v = fsg_view_new ("owner")) == NULL)
    return;
  put (v, "rw/.keep", "");
  {
    g_autofree char *rw = fsg_view_h (v, "rw");
    const char *flags[] = { "--profile", "none", "--rw", rw, NULL };
    g_assert_no_errno (chmod (rw, 01777));
    g_assert_no_errno (chmod (v->tmp, 0755));
    if (!fsg_view_mount (v, flags))
      return;
  }
  child = fork ();
  g_assert_cmpint (child, >=, 0);
  if (child == 0)
    {
      g_autofree char *f = fsg_view_v (v, "rw/file");
      g_autofree char *d = fsg_view_v (v, "rw/dir");
      g_autofree char *l = fsg_view_v (v, "rw/link");
      g_autofree char *s = fsg_view_v (v, "rw/suid");
      gid_t none[1] = { 65534 };

      alarm (10);
      if (setgroups (1, none) < 0 || setresgid (65534, 65534, 65534) < 0 || setresuid (65534, 65534, 65534) < 0)
        _exit (10);
      if (open_errno (f, O_WRONLY | O_CREAT | O_EXCL) < 0 || mkdir (d, 0755) < 0 || symlink ("file", l) < 0)
        _exit (11);
      if (open_errno (s, O_WRONLY | O_CREAT | O_EXCL) < 0 || chmod (s, 06755) < 0)
        _exit (12);
      _exit (0);
    }
  waitpid (child, &status, 0);
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 0);
  {
    const char *names[] = { "rw/file", "rw/dir", "rw/link", "rw/suid" };
    for (guint i = 0; i < G_N_ELEMENTS (names); i++)
      {
        g_autofree char *h = fsg_view_h (v, names[i]);
        struct stat st;
        g_assert_no_errno (lstat (h, &st));
        g_assert_cmpint (st.st_uid, ==, 65534);
        g_assert_cmpint (st.st_gid, ==, 65534);
        g_assert_cmpint (st.st_mode & (S_ISUID | S_ISGID), ==, 0);
      }
  }
}

/* ---- a view that contains its own mount point ---------------------------- */

static void
test_own_mountpoint (void)
{
  g_autoptr(FsgView) v = NULL;
  int status = 0;
  pid_t child;

  if (!require () || (v = fsg_view_new ("self")) == NULL)
    return;
  put (v, "f", "x");
  {
    const char *flags[] = { "--profile", "none", "--ro", v->tmp, NULL };
    if (!fsg_view_mount (v, flags))
      return;
  }
  child = fork ();
  g_assert_cmpint (child, >=, 0);
  if (child == 0)
    {
      g_autofree char *top = g_build_filename (v->mnt, v->tmp, NULL);
      g_autofree char *self = g_build_filename (v->mnt, v->mnt, NULL);
      g_autofree char *deeper = g_build_filename (v->mnt, v->mnt, v->tmp, NULL);
      g_autofree char *l1 = NULL, *l2 = NULL;
      struct stat st;

      alarm (10);
      l1 = listing (top);
      if (strstr (l1, "mnt") == NULL || strstr (l1, "host") == NULL)
        _exit (3);
      l2 = listing (self);
      if (strcmp (l2, "") != 0)
        _exit (4);
      if (stat (deeper, &st) == 0 || errno != ENOENT)
        _exit (5);
      _exit (0);
    }
  waitpid (child, &status, 0);
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 0);
}

/* ---- audit --------------------------------------------------------------- */

static JsonObject *
find_event (const char *file, const char *op, const char *path, const char *decision, JsonParser **keep)
{
  g_autofree char *contents = slurp (file);
  g_auto(GStrv) lines = NULL;

  if (contents == NULL)
    return NULL;
  lines = g_strsplit (contents, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      JsonParser *parser;
      JsonObject *o;

      if (lines[i][0] == '\0')
        continue;
      parser = json_parser_new ();
      if (!json_parser_load_from_data (parser, lines[i], -1, NULL))
        {
          g_printerr ("audit line is not JSON: %s\n", lines[i]);
          g_test_fail ();
          g_object_unref (parser);
          continue;
        }
      o = json_node_get_object (json_parser_get_root (parser));
      if (g_strcmp0 (json_object_get_string_member (o, "op"), op) == 0 &&
          g_strcmp0 (json_object_get_string_member (o, "path"), path) == 0 &&
          g_strcmp0 (json_object_get_string_member (o, "decision"), decision) == 0)
        {
          *keep = parser;
          return o;
        }
      g_object_unref (parser);
    }
  return NULL;
}

static void
test_audit (void)
{
  const char *extra[] = { "--audit", "all", NULL };
  g_autoptr(FsgView) v = NULL;
  g_autoptr(JsonParser) p1 = NULL;
  g_autoptr(JsonParser) p2 = NULL;
  JsonObject *o;

  if (!require () || (v = standard_view ("audit", extra)) == NULL)
    return;
  g_autofree char *s = fsg_view_v (v, "rw/secret1");
  g_autofree char *nf = fsg_view_v (v, "rw/created");
  g_autofree char *spath = fsg_view_h (v, "rw/secret1");
  g_autofree char *npath = fsg_view_h (v, "rw/created");

  CHECK (open_errno (s, O_RDONLY), EACCES);
  CHECK (open_errno (nf, O_WRONLY | O_CREAT), 0);

  o = find_event (v->audit, "lookup", spath, "deny", &p1);
  g_assert_nonnull (o);
  g_assert_cmpint (json_object_get_int_member (o, "errno"), ==, EACCES);
  g_assert_cmpint (json_object_get_int_member (o, "pid"), >, 0);
  g_assert_nonnull (json_object_get_string_member (o, "comm"));
  g_assert_nonnull (strstr (json_object_get_string_member (o, "rule"), "secret*"));
  g_assert_true (json_object_has_member (o, "time"));

  o = find_event (v->audit, "create", npath, "allow", &p2);
  g_assert_nonnull (o);
  g_assert_cmpstr (json_object_get_string_member (o, "mode"), ==, "w");
}

/* ---- xattrs ---------------------------------------------------------------- */

static void
test_xattr (void)
{
  const char *extra[] = { "--xattr", NULL };
  char buf[64];

  if (!require ())
    return;
  {
    g_autoptr(FsgView) v = standard_view ("noxattr", NULL);
    if (v == NULL)
      return;
    g_autofree char *a = fsg_view_v (v, "rw/a.txt");
    CHECK (setxattr (a, "user.x", "1", 1, 0), EOPNOTSUPP);
    CHECK (getxattr (a, "user.x", buf, sizeof buf), EOPNOTSUPP);
    CHECK (setxattr (a, "security.fsgate", "1", 1, 0), EOPNOTSUPP);
  }
  {
    g_autoptr(FsgView) v = standard_view ("xattr", extra);
    if (v == NULL)
      return;
    g_autofree char *a = fsg_view_v (v, "rw/a.txt");
    g_autofree char *r = fsg_view_v (v, "ro/r.txt");
    ssize_t n;

    CHECK (setxattr (a, "user.x", "val", 3, 0), 0);
    n = getxattr (a, "user.x", buf, sizeof buf);
    g_assert_cmpint (n, ==, 3);
    g_assert_cmpmem (buf, 3, "val", 3);
    n = listxattr (a, buf, sizeof buf);
    g_assert_cmpint (n, >=, 7);
    g_assert_cmpstr (buf, ==, "user.x");
    CHECK (setxattr (r, "user.x", "1", 1, 0), EROFS);
    CHECK (setxattr (a, "trusted.x", "1", 1, 0), EPERM);
    CHECK (setxattr (a, "security.evil", "1", 1, 0), EPERM);
    CHECK (getxattr (a, "security.capability", buf, sizeof buf), ENODATA);
    CHECK (removexattr (a, "user.x"), 0);
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  fsg_view_init (&argc, &argv);

  g_test_add_func ("/fs/lookup", test_lookup);
  g_test_add_func ("/fs/readdir", test_readdir);
  g_test_add_func ("/fs/hide-denied", test_hide_denied);
  g_test_add_func ("/fs/read-write", test_read_write);
  g_test_add_func ("/fs/mutations", test_mutations);
  g_test_add_func ("/fs/xattr", test_xattr);
  g_test_add_func ("/fs/audit", test_audit);
  g_test_add_func ("/fs/cli-errors", test_cli_errors);
  g_test_add_func ("/fs/background", test_background);
  g_test_add_func ("/fs/sigterm", test_sigterm);
  g_test_add_func ("/fs/sigkill", test_sigkill);
  g_test_add_func ("/fs/own-mountpoint", test_own_mountpoint);
  g_test_add_func ("/fs/caller-identity", test_caller_identity);
  g_test_add_func ("/fs/workload", test_workload);
  g_test_add_func ("/security/structural", test_structural);
  g_test_add_func ("/security/link-denied", test_link_denied);
  g_test_add_func ("/security/symlink-escape", test_symlink_escape);
  g_test_add_func ("/security/race", test_race);
  return g_test_run ();
}
