/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Inode identity of the policy view (issue 13 items 1 and 5), with the
 * daemon in-process so that the tests can set its fd budget and read its
 * statistics:
 *
 *  - hard links: the same sequence of writes through two names of one file
 *    natively and through the view (without kernel passthrough, where the
 *    kernel's page cache of each view inode matters) must leave the same
 *    bytes on the host, and both names must agree on st_ino and st_nlink;
 *  - a read-only name and a writable name of one file: neither is written
 *    in place (issue 14 item 2), replacing the writable one works;
 *  - reopening evicted inodes (a 4-fd budget): after a chain of renames in
 *    the view, and after a `mv` on the host, *at() calls relative to a
 *    directory fd still reach the right file; with file handles (skipped
 *    where this process cannot use them either) and without
 *    (FSGATE_FILE_HANDLES=0: an O_PATH directory fd and the cwd moved on
 *    the host then give the documented ESTALE).
 *
 * Needs root and /dev/fuse (skips with a reason otherwise).
 */
#include "config.h"

#include "common/fsg-util.h"
#include "fsgate/fs.h"
#include "tests/lib/testlib.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

static char cleanup_mnt[PATH_MAX];

static void
on_abort (int sig)
{
  if (cleanup_mnt[0] != '\0')
    umount2 (cleanup_mnt, MNT_DETACH);
  fsg_test_scratch_cleanup ();
  signal (sig, SIG_DFL);
  raise (sig);
}

typedef struct
{
  char *tmp;   /* canonical scratch directory */
  char *host;  /* tmp/host: the host tree */
  char *mnt;   /* tmp/mnt */
  char *view;  /* mnt + host: the host tree seen through the view */
  FsgPolicy *policy;
  FsgFs *fs;
} View;

/* Let a root daemon use kernel passthrough where the kernel has it (the
 * tests about page caches turn it off; their /passthrough variants not). */
static gboolean allow_passthrough;

static View *
view_new (const char *tag)
{
  View *v = g_new0 (View, 1);
  g_autofree char *tmpl = g_strdup_printf ("%s/%s-XXXXXX", fsg_test_scratch_dir ("fs-identity"), tag);
  char *dir = g_mkdtemp (tmpl);

  g_assert_nonnull (dir);
  v->tmp = realpath (dir, NULL);
  v->host = g_build_filename (v->tmp, "host", NULL);
  v->mnt = g_build_filename (v->tmp, "mnt", NULL);
  v->view = g_strconcat (v->mnt, v->host, NULL);
  fsg_test_mkdir (v->tmp, "host");
  fsg_test_mkdir (v->tmp, "mnt");
  return v;
}

/* Mount with --rw host plus @ro (relative to host, or NULL) read-only. */
static void
view_mount (View *v, const char *ro, guint fd_budget)
{
  g_autoptr(FsgPolicyBuilder) b = fsg_policy_builder_new ("/", "/root", NULL);
  g_autoptr(GError) error = NULL;
  FsgFsOptions opts = { 0 };

  g_assert_true (fsg_policy_builder_set_profile (b, "none", &error));
  g_assert_true (fsg_policy_builder_add_rule (b, FSG_RULE_WRITABLE, v->host, "--rw", &error));
  if (ro != NULL)
    {
      g_autofree char *path = g_build_filename (v->host, ro, NULL);
      g_assert_true (fsg_policy_builder_add_rule (b, FSG_RULE_READONLY, path, "--ro", &error));
    }
  v->policy = fsg_policy_builder_finish (b, &error);
  g_assert_no_error (error);

  opts.audit_fd = -1;
  opts.fd_budget = fd_budget;
  /* The page cache of each view inode is what item 1 is about; kernel
   * passthrough (root daemon) would hide it. */
  opts.no_passthrough = !allow_passthrough;
  v->fs = fsg_fs_new (v->policy, &opts, &error);
  g_assert_no_error (error);
  g_strlcpy (cleanup_mnt, v->mnt, sizeof cleanup_mnt);
  g_assert_true (fsg_fs_mount (v->fs, v->mnt, &error));
  g_assert_no_error (error);
  g_assert_true (fsg_fs_start (v->fs, &error));
}

/* Wait until the kernel's asynchronous RELEASEDIR requests for every
 * directory opened so far are served (a session stopped before would not
 * free them; every OPENDIR here succeeds). */
static void
view_settle (View *v)
{
  gint64 deadline = g_get_monotonic_time () + 10 * G_TIME_SPAN_SECOND;

  while (g_get_monotonic_time () < deadline)
    {
      FsgFsStats st;

      fsg_fs_get_stats (v->fs, &st);
      if (st.op_requests[FSG_FS_OP_RELEASEDIR] == st.op_requests[FSG_FS_OP_OPENDIR])
        return;
      g_usleep (1000);
    }
  g_test_fail_printf ("RELEASEDIR requests still missing after 10 s");
}

static void
view_free (View *v)
{
  if (v->fs != NULL)
    {
      FsgFsStats st;

      view_settle (v);
      fsg_fs_get_stats (v->fs, &st);
      g_test_message ("data path: %s", st.passthrough ? "kernel passthrough" : "through the daemon");
      fsg_fs_stop (v->fs);
      g_clear_pointer (&v->fs, fsg_fs_free);
    }
  cleanup_mnt[0] = '\0';
  g_clear_pointer (&v->policy, fsg_policy_free);
  fsg_test_rm_rf (v->tmp);
  g_free (v->tmp);
  g_free (v->host);
  g_free (v->mnt);
  g_free (v->view);
  g_free (v);
}

static void
write_path (const char *path, const char *text, int flags)
{
  int fd = open (path, O_WRONLY | O_CREAT | O_CLOEXEC | flags, 0644);

  g_assert_no_errno (fd);
  g_assert_cmpint (write (fd, text, strlen (text)), ==, (ssize_t) strlen (text));
  g_assert_no_errno (close (fd));
}

static char *
read_path (const char *path)
{
  char *contents = NULL;
  g_autoptr(GError) error = NULL;

  if (!g_file_get_contents (path, &contents, NULL, &error))
    return g_strdup_printf ("<%s>", error->message);
  return contents;
}

/* Read all of @name relative to @dirfd. */
static char *
read_at (int dirfd, const char *name)
{
  char buf[256];
  ssize_t n;
  int fd = openat (dirfd, name, O_RDONLY | O_CLOEXEC);

  if (fd < 0)
    return g_strdup_printf ("<openat: %s>", g_strerror (errno));
  n = read (fd, buf, sizeof buf - 1);
  close (fd);
  if (n < 0)
    return g_strdup_printf ("<read: %s>", g_strerror (errno));
  buf[n] = '\0';
  return g_strdup (buf);
}

static char *
in (const char *base, const char *rel)
{
  return g_build_filename (base, rel, NULL);
}

/* The sequence under @base: what the names read, and whether they
 * agree on identity and link count. */
static char *
hardlink_sequence (const char *base)
{
  g_autofree char *f = in (base, "hl/sub/f");
  g_autofree char *g = in (base, "hl/g");
  g_autofree char *sub = in (base, "hl/sub");
  g_autofree char *first = NULL, *via_f = NULL, *via_g = NULL, *linked = NULL;
  struct stat sf, sg;

  g_assert_no_errno (g_mkdir_with_parents (sub, 0755));
  write_path (f, "aaaa\n", O_TRUNC);
  g_assert_no_errno (link (f, g));
  g_assert_no_errno (stat (f, &sf));
  g_assert_no_errno (stat (g, &sg));
  linked = g_strdup_printf ("%d,%d", (int) sf.st_nlink, (int) sg.st_nlink);
  first = read_path (g);                /* caches hl/g's pages */
  write_path (f, "bbbb\n", O_TRUNC);    /* rewrites through hl/sub/f */
  write_path (g, "cc\n", O_APPEND);     /* appends through hl/g */
  via_f = read_path (f);
  via_g = read_path (g);
  g_assert_no_errno (stat (f, &sf));
  g_assert_no_errno (stat (g, &sg));
  return g_strdup_printf ("linked=%s first=%s f=%s g=%s nlink=%d,%d same-ino=%d size=%d,%d", linked,
                          first, via_f, via_g, (int) sf.st_nlink, (int) sg.st_nlink, sf.st_ino == sg.st_ino,
                          (int) sf.st_size, (int) sg.st_size);
}

static void
test_hardlink_writes (gconstpointer data)
{
  g_autofree char *native_base = NULL;
  g_autofree char *native = NULL, *viewed = NULL, *host = NULL, *hostfile = NULL;
  View *v;

  if (!fsg_test_require_root () || !fsg_test_require_fuse ())
    return;
  allow_passthrough = GPOINTER_TO_INT (data);
  v = view_new ("hardlink");
  /* Positive control: the host filesystem itself. */
  native_base = in (v->tmp, "native");
  native = hardlink_sequence (native_base);
  g_assert_cmpstr (native, ==, "linked=2,2 first=aaaa\n f=bbbb\ncc\n g=bbbb\ncc\n nlink=2,2 same-ino=1 size=8,8");

  view_mount (v, NULL, 0);
  viewed = hardlink_sequence (v->view);
  g_assert_cmpstr (viewed, ==, native);
  /* What matters most: the bytes on the host. */
  hostfile = in (v->host, "hl/sub/f");
  host = read_path (hostfile);
  g_assert_cmpstr (host, ==, "bbbb\ncc\n");
  view_free (v);
  allow_passthrough = FALSE;
}

/* Two names made on the host before mounting, at different depths, looked
 * up separately (pjdfstest link/03). */
static void
test_hardlink_depths (void)
{
  g_autofree char *deep = NULL, *shallow = NULL, *vdeep = NULL, *vshallow = NULL;
  g_autofree char *got = NULL;
  struct stat sd, ss;
  View *v;

  if (!fsg_test_require_root () || !fsg_test_require_fuse ())
    return;
  v = view_new ("depths");
  fsg_test_write_file (v->host, "a/b/c/f", "one\n");
  deep = in (v->host, "a/b/c/f");
  shallow = in (v->host, "g");
  g_assert_no_errno (link (deep, shallow));
  view_mount (v, NULL, 0);
  vdeep = in (v->view, "a/b/c/f");
  vshallow = in (v->view, "g");

  g_assert_no_errno (stat (vdeep, &sd));
  g_assert_no_errno (stat (vshallow, &ss));
  g_assert_cmpuint (sd.st_ino, ==, ss.st_ino);
  g_assert_cmpuint (sd.st_nlink, ==, 2);
  g_assert_cmpuint (ss.st_nlink, ==, 2);
  g_free (read_path (vshallow));
  write_path (vdeep, "two\n", O_APPEND);
  got = read_path (vshallow);
  g_assert_cmpstr (got, ==, "one\ntwo\n");
  /* A third name through the view: every name sees the new count. */
  {
    g_autofree char *third = in (v->view, "a/third");
    g_assert_no_errno (link (vshallow, third));
    g_assert_no_errno (stat (vdeep, &sd));
    g_assert_no_errno (stat (vshallow, &ss));
    g_assert_cmpuint (sd.st_nlink, ==, 3);
    g_assert_cmpuint (ss.st_nlink, ==, 3);
  }
  view_free (v);
}

/* One host file, read-only under one name and writable under another: two
 * view inodes (neither inherits the other's rights). Since issue 14 item 2
 * the writable name is not written in place either: the read-only name is
 * another link, which such a write would change (EACCES); the caches of the
 * two names therefore never see a write through the view. Replacing the
 * writable name (a new file renamed over it) works and leaves the read-only
 * name alone. */
static void
test_ro_rw_names (gconstpointer data)
{
  g_autofree char *hro = NULL, *hrw = NULL, *vro = NULL, *vrw = NULL, *vtmp = NULL;
  g_autofree char *got = NULL;
  struct stat sr, sw;
  View *v;

  if (!fsg_test_require_root () || !fsg_test_require_fuse ())
    return;
  allow_passthrough = GPOINTER_TO_INT (data);
  v = view_new ("ro-rw");
  fsg_test_write_file (v->host, "ro/f", "aaaa\n");
  hro = in (v->host, "ro/f");
  hrw = in (v->host, "g");
  g_assert_no_errno (link (hro, hrw));
  view_mount (v, "ro", 0);
  vro = in (v->view, "ro/f");
  vrw = in (v->view, "g");

  got = read_path (vro);
  g_assert_cmpstr (got, ==, "aaaa\n");
  g_clear_pointer (&got, g_free);
  got = read_path (vrw);
  g_assert_cmpstr (got, ==, "aaaa\n");
  g_clear_pointer (&got, g_free);
  g_assert_no_errno (stat (vro, &sr));
  g_assert_no_errno (stat (vrw, &sw));
  g_assert_cmpint (sr.st_size, ==, 5);
  g_assert_cmpuint (sr.st_ino, ==, sw.st_ino);
  g_assert_cmpint (sw.st_nlink, ==, 2);

  /* Not in place through the writable name, not at all through the other. */
  g_assert_cmpint (open (vrw, O_WRONLY | O_APPEND | O_CLOEXEC), ==, -1);
  g_assert_cmpint (errno, ==, EACCES);
  g_assert_cmpint (open (vrw, O_WRONLY | O_TRUNC | O_CLOEXEC), ==, -1);
  g_assert_cmpint (errno, ==, EACCES);
  g_assert_cmpint (truncate (vrw, 0), ==, -1);
  g_assert_cmpint (errno, ==, EACCES);
  g_assert_cmpint (chmod (vrw, 0600), ==, -1);
  g_assert_cmpint (errno, ==, EACCES);
  g_assert_cmpint (open (vro, O_WRONLY | O_CLOEXEC), ==, -1);
  g_assert_cmpint (errno, ==, EROFS);

  vtmp = in (v->view, "g.new");
  write_path (vtmp, "y\n", O_TRUNC);
  g_assert_no_errno (rename (vtmp, vrw));
  got = read_path (hrw);
  g_assert_cmpstr (got, ==, "y\n");
  g_clear_pointer (&got, g_free);
  got = read_path (vrw);
  g_assert_cmpstr (got, ==, "y\n");
  g_clear_pointer (&got, g_free);
  got = read_path (hro);
  g_assert_cmpstr (got, ==, "aaaa\n");
  g_clear_pointer (&got, g_free);
  got = read_path (vro);
  g_assert_cmpstr (got, ==, "aaaa\n");
  /* and now that it has one link, the new file is written in place */
  write_path (vrw, "z\n", O_APPEND);
  g_clear_pointer (&got, g_free);
  got = read_path (hrw);
  g_assert_cmpstr (got, ==, "y\nz\n");
  view_free (v);
  allow_passthrough = FALSE;
}

/* Stat enough other files to push every unpinned fd out of a 4-fd budget. */
static void
evict (View *v)
{
  for (int i = 0; i < 40; i++)
    {
      g_autofree char *rel = g_strdup_printf ("filler/%d", i);
      g_autofree char *p = in (v->view, rel);
      struct stat st;

      g_assert_no_errno (stat (p, &st));
    }
}

static void
make_fillers (View *v)
{
  for (int i = 0; i < 40; i++)
    {
      g_autofree char *rel = g_strdup_printf ("filler/%d", i);
      fsg_test_write_file (v->host, rel, "");
    }
}

static void
use_handles (gboolean on)
{
  if (on)
    g_unsetenv ("FSGATE_FILE_HANDLES");
  else
    g_setenv ("FSGATE_FILE_HANDLES", "0", TRUE);
}

/* Whether the daemon of @v reopens by file handle. If not: a skip with the
 * reason when this process cannot use handles on the host tree either (no
 * CAP_DAC_READ_SEARCH, or a filesystem without them, such as overlayfs in
 * a container); a failure when it can, where the daemon should too. */
static gboolean
handles_or_skip (View *v)
{
  union
  {
    struct file_handle fh;
    unsigned char bytes[sizeof (struct file_handle) + MAX_HANDLE_SZ];
  } buf;
  fsg_autofd int mfd = -1, fd = -1;
  FsgFsStats st;
  int mount_id;

  fsg_fs_get_stats (v->fs, &st);
  if (st.file_handles)
    return TRUE;
  buf.fh.handle_bytes = MAX_HANDLE_SZ;
  if (name_to_handle_at (AT_FDCWD, v->host, &buf.fh, &mount_id, 0) < 0)
    {
      g_autofree char *why = g_strdup_printf ("no file handles on %s: name_to_handle_at: %s",
                                              v->host, g_strerror (errno));
      g_test_skip (why);
      return FALSE;
    }
  mfd = open (v->host, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  g_assert_no_errno (mfd);
  fd = open_by_handle_at (mfd, &buf.fh, O_PATH | O_CLOEXEC);
  if (fd < 0)
    {
      g_autofree char *why = g_strdup_printf ("no file handles on %s: open_by_handle_at: %s",
                                              v->host, g_strerror (errno));
      g_test_skip (why);
      return FALSE;
    }
  g_test_fail_printf ("this process can reopen %s by file handle, the daemon does not", v->host);
  return FALSE;
}

/* mkdir -p a/D/sub; mv a/D D; mv D/sub D/sub2; evict; openat (D, "sub2/file"). */
static void
reopen_after_view_renames (gconstpointer data)
{
  gboolean handles = GPOINTER_TO_INT (data);
  g_autofree char *got = NULL, *got2 = NULL, *got3 = NULL;
  FsgFsStats before, after;
  int dirfd, pathfd;
  View *v;

  if (!fsg_test_require_root () || !fsg_test_require_fuse ())
    return;
  v = view_new ("renames");
  make_fillers (v);
  use_handles (handles);
  view_mount (v, NULL, 4);
  use_handles (TRUE);
  if (handles && !handles_or_skip (v))
    {
      view_free (v);
      return;
    }
  {
    g_autofree char *sub = in (v->view, "a/D/sub");
    g_autofree char *file = in (v->view, "a/D/sub/file");
    g_autofree char *aD = in (v->view, "a/D");
    g_autofree char *D = in (v->view, "D");
    g_autofree char *Dsub = in (v->view, "D/sub");
    g_autofree char *Dsub2 = in (v->view, "D/sub2");

    g_assert_no_errno (g_mkdir_with_parents (sub, 0755));
    write_path (file, "right content", O_TRUNC);
    g_assert_no_errno (rename (aD, D));
    g_assert_no_errno (rename (Dsub, Dsub2));
    dirfd = open (D, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    g_assert_no_errno (dirfd);
    pathfd = open (Dsub2, O_PATH | O_DIRECTORY | O_CLOEXEC);
    g_assert_no_errno (pathfd);
  }
  fsg_fs_get_stats (v->fs, &before);
  evict (v);
  got = read_at (dirfd, "sub2/file");
  evict (v);
  got2 = read_at (pathfd, "file");
  fsg_fs_get_stats (v->fs, &after);
  g_test_message ("evictions %" G_GUINT64_FORMAT ", reopens %" G_GUINT64_FORMAT " (%" G_GUINT64_FORMAT " by handle)",
                  after.fd_evictions, after.fd_reopens - before.fd_reopens,
                  after.fd_handle_reopens - before.fd_handle_reopens);
  g_assert_cmpstr (got, ==, "right content");
  g_assert_cmpstr (got2, ==, "right content");
  /* Eviction really happened and the inodes were reopened, the way asked. */
  g_assert_cmpuint (after.fd_reopens, >, before.fd_reopens);
  if (handles)
    g_assert_cmpuint (after.fd_handle_reopens, >, before.fd_handle_reopens);
  else
    g_assert_cmpuint (after.fd_handle_reopens, ==, 0);

  /* The old names are gone, as natively. */
  {
    g_autofree char *old = in (v->view, "a/D/sub/file");
    g_autofree char *old2 = in (v->view, "D/sub/file");
    g_assert_cmpint (access (old, F_OK), ==, -1);
    g_assert_cmpint (errno, ==, ENOENT);
    g_assert_cmpint (access (old2, F_OK), ==, -1);
    g_assert_cmpint (errno, ==, ENOENT);
  }
  /* And the renamed file can be renamed again and reopened. */
  g_assert_no_errno (renameat (dirfd, "sub2/file", dirfd, "moved"));
  evict (v);
  got3 = read_at (dirfd, "moved");
  g_assert_cmpstr (got3, ==, "right content");
  close (dirfd);
  close (pathfd);
  view_free (v);
}

/* Open @name relative to @dirfd and read it: the text, or NULL with
 * errno set (ESTALE expected where the view lost the object). */
static char *
try_read_at (int dirfd, const char *name)
{
  int fd = openat (dirfd, name, O_RDONLY | O_CLOEXEC);
  char buf[256];
  ssize_t n;

  if (fd < 0)
    return NULL;
  n = read (fd, buf, sizeof buf - 1);
  close (fd);
  if (n < 0)
    return NULL;
  return g_strndup (buf, n);
}

/* Directories known to the view are moved on the host (their parent
 * renamed); after an eviction: D, held open (OPENDIR pins it, the fd is
 * never evicted), still works; E, reached through an O_PATH fd (no
 * OPENDIR), and F, the cwd, follow the move by file handle only: without
 * handles the view cannot find them again and says ESTALE (documented in
 * docs/security.md and docs/architecture.md). */
static void
reopen_after_host_mv (gconstpointer data)
{
  gboolean handles = GPOINTER_TO_INT (data);
  g_autofree char *got = NULL, *got_e = NULL, *got_f = NULL;
  int err_e = 0, err_f = 0;
  FsgFsStats st;
  int dirfd, pathfd;
  View *v;

  if (!fsg_test_require_root () || !fsg_test_require_fuse ())
    return;
  v = view_new ("host-mv");
  make_fillers (v);
  fsg_test_write_file (v->host, "x/D/f", "moved on the host");
  fsg_test_write_file (v->host, "x/E/f", "moved on the host too");
  fsg_test_write_file (v->host, "x/F/f", "the cwd moved on the host");
  use_handles (handles);
  view_mount (v, NULL, 4);
  use_handles (TRUE);
  if (handles && !handles_or_skip (v))
    {
      view_free (v);
      return;
    }
  {
    g_autofree char *D = in (v->view, "x/D");
    g_autofree char *E = in (v->view, "x/E");
    g_autofree char *F = in (v->view, "x/F");
    g_autofree char *f = in (v->view, "x/D/f");
    g_autofree char *ef = in (v->view, "x/E/f");
    g_autofree char *ff = in (v->view, "x/F/f");
    g_autofree char *hx = in (v->host, "x");
    g_autofree char *hy = in (v->host, "y");
    struct stat s;

    dirfd = open (D, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    g_assert_no_errno (dirfd);
    g_assert_no_errno (stat (f, &s)); /* the kernel caches the entry */
    /* An O_PATH fd and a cwd make no OPENDIR: nothing keeps their fds
     * open in the daemon. */
    pathfd = open (E, O_PATH | O_DIRECTORY | O_CLOEXEC);
    g_assert_no_errno (pathfd);
    g_assert_no_errno (stat (ef, &s));
    g_assert_no_errno (stat (ff, &s));
    /* Positive control: natively, fds and cwds follow the directory. */
    g_assert_no_errno (rename (hx, hy));
    g_assert_no_errno (chdir (F));
  }
  evict (v);
  got = try_read_at (dirfd, "f");
  got_e = try_read_at (pathfd, "f");
  err_e = got_e ? 0 : errno;
  got_f = try_read_at (AT_FDCWD, "f");
  err_f = got_f ? 0 : errno;
  g_assert_no_errno (chdir ("/")); /* out of the view before asserting */
  close (pathfd);
  close (dirfd);
  fsg_fs_get_stats (v->fs, &st);
  g_test_message ("O_PATH dirfd: %s; cwd: %s", got_e ? "followed" : g_strerror (err_e),
                  got_f ? "followed" : g_strerror (err_f));
  g_assert_cmpstr (got, ==, "moved on the host");
  if (handles)
    {
      g_assert_cmpstr (got_e, ==, "moved on the host too");
      g_assert_cmpstr (got_f, ==, "the cwd moved on the host");
    }
  else
    {
      g_assert_null (got_e);
      g_assert_cmpint (err_e, ==, ESTALE);
      g_assert_null (got_f);
      g_assert_cmpint (err_f, ==, ESTALE);
    }
  g_assert_cmpuint (st.fd_evictions, >, 0);
  g_assert_cmpuint (st.fd_reopens, >, 0);
  view_free (v);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  /* The scratch directory first: its own handlers are replaced by ours,
   * which unmount before removing it. */
  (void) fsg_test_scratch_dir ("fs-identity");
  signal (SIGABRT, on_abort);
  signal (SIGSEGV, on_abort);
  signal (SIGTERM, on_abort);
  signal (SIGINT, on_abort);
  g_test_add_data_func ("/fs-identity/hardlink-writes", GINT_TO_POINTER (FALSE), test_hardlink_writes);
  g_test_add_data_func ("/fs-identity/hardlink-writes/passthrough", GINT_TO_POINTER (TRUE),
                        test_hardlink_writes);
  g_test_add_func ("/fs-identity/hardlink-depths", test_hardlink_depths);
  g_test_add_data_func ("/fs-identity/ro-rw-names", GINT_TO_POINTER (FALSE), test_ro_rw_names);
  g_test_add_data_func ("/fs-identity/ro-rw-names/passthrough", GINT_TO_POINTER (TRUE), test_ro_rw_names);
  g_test_add_data_func ("/fs-identity/reopen/view-renames/handles", GINT_TO_POINTER (TRUE),
                        reopen_after_view_renames);
  g_test_add_data_func ("/fs-identity/reopen/view-renames/names", GINT_TO_POINTER (FALSE),
                        reopen_after_view_renames);
  g_test_add_data_func ("/fs-identity/reopen/host-mv/handles", GINT_TO_POINTER (TRUE),
                        reopen_after_host_mv);
  g_test_add_data_func ("/fs-identity/reopen/host-mv/names", GINT_TO_POINTER (FALSE),
                        reopen_after_host_mv);
  return g_test_run ();
}
