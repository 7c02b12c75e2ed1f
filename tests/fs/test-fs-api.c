/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The FsgFs library API the way fsgate-run uses it: mount(2) with the data
 * string of fsg_fs_mount_data() on a /dev/fuse fd, then fsg_fs_take_fuse_fd
 * and fsg_fs_start in-process, stub directories, the in-process audit
 * callback, statistics and fsg_fs_stop() of a session it did not mount.
 *
 * Needs root and /dev/fuse (skips with a reason otherwise).
 */
#include "config.h"

#include "common/fsg-util.h"
#include "fsgate/fs.h"
#include "tests/lib/testlib.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct
{
  GMutex lock;
  GPtrArray *events; /* "op path decision errno" */
} Collected;

static void
collect (const FsgAuditEvent *ev, gpointer data)
{
  Collected *c = data;

  g_mutex_lock (&c->lock);
  g_ptr_array_add (c->events, g_strdup_printf ("%s %s %s %d", ev->op, ev->path,
                                               ev->denied ? "deny" : "allow", ev->err));
  g_mutex_unlock (&c->lock);
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
    return g_strdup_printf ("<%s>", g_strerror (errno));
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

static char cleanup_mnt[PATH_MAX];

static void
on_abort (int sig)
{
  if (cleanup_mnt[0] != '\0')
    umount2 (cleanup_mnt, MNT_DETACH);
  /* the test's directories live in the scratch directory */
  fsg_test_scratch_cleanup ();
  signal (sig, SIG_DFL);
  raise (sig);
}

/* A directory of this test inside the program's scratch directory, so that
 * an abort removes it too. (transfer full) */
static char *
scratch_subdir (const char *tag)
{
  g_autofree char *tmpl = g_strdup_printf ("%s/%s-XXXXXX", fsg_test_scratch_dir ("fs-api"), tag);
  char *dir = g_mkdtemp (tmpl);

  g_assert_nonnull (dir);
  return g_strdup (dir);
}

static void
test_take_fd (void)
{
  g_autofree char *tmp0 = NULL;
  g_autofree char *tmp = NULL, *rw = NULL, *mnt = NULL, *data = NULL;
  g_autoptr(FsgPolicyBuilder) b = NULL;
  g_autoptr(FsgPolicy) policy = NULL;
  g_autoptr(FsgFs) fs = NULL;
  g_autoptr(GError) error = NULL;
  /* "/tmp" is not a stub here: the test tree lives there, and a stub hides
   * whatever the policy would show below it. */
  const char *stubs[] = { "/proc", "/dev", "/run/user/0", NULL };
  FsgFsOptions opts = { 0 };
  Collected c;
  FsgFsStats stats;
  struct stat st;
  int fd;

  if (!fsg_test_require_root () || !fsg_test_require_fuse ())
    return;
  tmp0 = scratch_subdir ("api");
  tmp = realpath (tmp0, NULL);
  rw = g_build_filename (tmp, "rw", NULL);
  mnt = g_build_filename (tmp, "mnt", NULL);
  fsg_test_write_file (tmp, "rw/f.txt", "hello");
  fsg_test_write_file (tmp, "rw/secret.key", "TOPSECRET");
  fsg_test_mkdir (tmp, "mnt");

  b = fsg_policy_builder_new ("/", "/root", NULL);
  g_assert_true (fsg_policy_builder_set_profile (b, "none", &error));
  g_assert_true (fsg_policy_builder_add_rule (b, FSG_RULE_WRITABLE, rw, "--rw", &error));
  g_assert_true (fsg_policy_builder_add_rule (b, FSG_RULE_DENY_READ, "*.key", "--deny-read", &error));
  policy = fsg_policy_builder_finish (b, &error);
  g_assert_no_error (error);

  g_mutex_init (&c.lock);
  c.events = g_ptr_array_new_with_free_func (g_free);
  opts.audit_fd = -1;
  opts.audit_func = collect;
  opts.audit_data = &c;
  opts.stub_dirs = stubs;
  fs = fsg_fs_new (policy, &opts, &error);
  g_assert_no_error (error);

  fd = open ("/dev/fuse", O_RDWR | O_CLOEXEC);
  g_assert_cmpint (fd, >=, 0);
  data = fsg_fs_mount_data (fd, 0, 0);
  g_assert_null (strstr (data, "default_permissions")); /* the host checks */
  g_strlcpy (cleanup_mnt, mnt, sizeof cleanup_mnt);
  signal (SIGABRT, on_abort);
  g_assert_no_errno (mount ("fsgate", mnt, "fuse.fsgate", MS_NOSUID | MS_NODEV, data));
  g_assert_true (fsg_fs_take_fuse_fd (fs, fd, &error));
  g_assert_true (fsg_fs_start (fs, &error));

  {
    g_autofree char *root = listing (mnt);
    g_autofree char *first = g_strndup (tmp + 1, strcspn (tmp + 1, "/"));
    g_auto(GStrv) expect_v = g_strsplit ("dev proc run", " ", -1);
    g_autoptr(GPtrArray) expect = g_ptr_array_new_with_free_func (g_free);
    g_autoptr(GString) joined = g_string_new (NULL);

    for (guint i = 0; expect_v[i]; i++)
      if (strcmp (expect_v[i], first) != 0)
        g_ptr_array_add (expect, g_strdup (expect_v[i]));
    g_ptr_array_add (expect, g_strdup (first));
    g_ptr_array_sort (expect, cmp_str);
    for (guint i = 0; i < expect->len; i++)
      g_string_append_printf (joined, "%s%s", i ? " " : "", (char *) expect->pdata[i]);
    g_assert_cmpstr (root, ==, joined->str);
  }
  {
    g_autofree char *proc = g_build_filename (mnt, "proc", NULL);
    g_autofree char *procx = g_build_filename (mnt, "proc", "x", NULL);
    g_autofree char *deep = g_build_filename (mnt, "run", "user", "0", NULL);
    g_autofree char *l = listing (proc);
    g_autofree char *f = g_build_filename (mnt, rw, "f.txt", NULL);
    g_autofree char *s = g_build_filename (mnt, rw, "secret.key", NULL);
    g_autofree char *contents = NULL;

    g_assert_cmpstr (l, ==, "");
    g_assert_cmpint (mkdir (procx, 0755), ==, -1);
    g_assert_cmpint (errno, ==, EROFS);
    g_assert_no_errno (stat (deep, &st));
    g_assert_true (S_ISDIR (st.st_mode));
    g_assert_true (g_file_get_contents (f, &contents, NULL, NULL));
    g_assert_cmpstr (contents, ==, "hello");
    g_assert_cmpint (stat (s, &st), ==, -1);
    g_assert_cmpint (errno, ==, EACCES);
  }

  fsg_fs_get_stats (fs, &stats);
  g_assert_cmpuint (stats.requests, >, 0);
  g_assert_cmpuint (stats.denials, >=, 1);
  /* libfuse 3.14 never asks for it; the INIT reply is patched (every
   * kernel since 4.7 offers it) */
  g_assert_true (stats.parallel_dirops);
  /* the host checks as the caller, and without the writeback cache (kernel
   * passthrough) the host's own clearing of set-id bits is exact */
  if (stats.passthrough)
    g_assert_true (stats.handle_killpriv);
  g_assert_cmpuint (stats.inodes, >, 0);
  g_mutex_lock (&c.lock);
  {
    g_autofree char *want = g_strdup_printf ("lookup %s/secret.key deny %d", rw, EACCES);
    gboolean found = FALSE;
    for (guint i = 0; i < c.events->len; i++)
      if (strcmp (c.events->pdata[i], want) == 0)
        found = TRUE;
    g_assert_true (found);
  }
  g_mutex_unlock (&c.lock);

  /* Stop a session mounted elsewhere: the loop must end without an unmount. */
  fsg_fs_stop (fs);
  fsg_fs_stop (fs);
  g_clear_pointer (&fs, fsg_fs_free);
  g_assert_no_errno (umount2 (mnt, MNT_DETACH));
  cleanup_mnt[0] = '\0';
  g_ptr_array_unref (c.events);
  g_mutex_clear (&c.lock);
  fsg_test_rm_rf (tmp);
}

/* Kernel passthrough for a root daemon: data goes to the host without a
 * READ or WRITE request, and the policy still decides every open. */
static void
test_passthrough (void)
{
  fsg_autofd int rw_fd = -1;
  g_autofree char *tmp0 = NULL, *reason = NULL;
  g_autofree char *tmp = NULL, *rw = NULL, *ro = NULL, *mnt = NULL;
  g_autofree char *vdata = NULL, *hdata = NULL, *vro = NULL, *vkey = NULL, *vsuid = NULL, *hsuid = NULL;
  g_autofree char *back = NULL;
  g_autoptr(FsgPolicyBuilder) b = NULL;
  g_autoptr(FsgPolicy) policy = NULL;
  g_autoptr(FsgFs) fs = NULL;
  g_autoptr(GError) error = NULL;
  FsgFsOptions opts = { 0 };
  FsgFsStats stats;
  gsize len = 0;
  struct stat st;
  char *buf, *map;
  int fd;

  if (!fsg_test_require_root () || !fsg_test_require_fuse ())
    return;
  if (!fsg_fs_passthrough_supported (&reason))
    {
      if (g_getenv ("FSGATE_TESTS_MUST_RUN") != NULL)
        g_test_fail_printf ("no kernel passthrough (%s), and FSGATE_TESTS_MUST_RUN is set", reason);
      else
        g_test_skip (reason);
      return;
    }
  tmp0 = scratch_subdir ("passthrough");
  tmp = realpath (tmp0, NULL);
  rw = g_build_filename (tmp, "rw", NULL);
  ro = g_build_filename (tmp, "ro", NULL);
  mnt = g_build_filename (tmp, "mnt", NULL);
  fsg_test_write_file (tmp, "rw/secret.key", "TOPSECRET");
  fsg_test_write_file (tmp, "ro/r.txt", "readonly");
  fsg_test_mkdir (tmp, "mnt");

  b = fsg_policy_builder_new ("/", "/root", NULL);
  g_assert_true (fsg_policy_builder_set_profile (b, "none", &error));
  g_assert_true (fsg_policy_builder_add_rule (b, FSG_RULE_WRITABLE, rw, "--rw", &error));
  g_assert_true (fsg_policy_builder_add_rule (b, FSG_RULE_READONLY, ro, "--ro", &error));
  g_assert_true (fsg_policy_builder_add_rule (b, FSG_RULE_DENY_READ, "*.key", "--deny-read", &error));
  policy = fsg_policy_builder_finish (b, &error);
  g_assert_no_error (error);
  opts.audit_fd = -1;
  fs = fsg_fs_new (policy, &opts, &error);
  g_assert_no_error (error);
  g_strlcpy (cleanup_mnt, mnt, sizeof cleanup_mnt);
  signal (SIGABRT, on_abort);
  g_assert_true (fsg_fs_mount (fs, mnt, &error));
  g_assert_true (fsg_fs_start (fs, &error));

  vdata = g_build_filename (mnt, rw, "data.bin", NULL);
  hdata = g_build_filename (rw, "data.bin", NULL);
  buf = g_malloc (4 << 20);
  for (gsize i = 0; i < (4u << 20); i++)
    buf[i] = (char) (i * 7 + (i >> 12));
  /* written through a passthrough-open file: on the host at close */
  fd = open (vdata, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (write (fd, buf, 4 << 20), ==, 4 << 20);
  g_assert_no_errno (close (fd));
  g_assert_true (g_file_get_contents (hdata, &back, &len, NULL));
  g_assert_cmpmem (back, len, buf, 4 << 20);
  g_clear_pointer (&back, g_free);
  /* read back, and a shared mmap write */
  g_assert_true (g_file_get_contents (vdata, &back, &len, NULL));
  g_assert_cmpmem (back, len, buf, 4 << 20);
  fd = open (vdata, O_RDWR | O_CLOEXEC);
  g_assert_cmpint (fd, >=, 0);
  map = mmap (NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  g_assert_true (map != MAP_FAILED);
  memcpy (map, "MMAP", 4);
  g_assert_no_errno (msync (map, 4096, MS_SYNC));
  munmap (map, 4096);
  close (fd);
  g_clear_pointer (&back, g_free);
  g_assert_true (g_file_get_contents (hdata, &back, &len, NULL));
  g_assert_cmpmem (back, 4, "MMAP", 4);

  /* the policy still decides at open */
  vro = g_build_filename (mnt, ro, "r.txt", NULL);
  vkey = g_build_filename (mnt, rw, "secret.key", NULL);
  g_assert_cmpint (open (vro, O_WRONLY | O_CLOEXEC), ==, -1);
  g_assert_cmpint (errno, ==, EROFS);
  g_assert_cmpint (open (vkey, O_RDONLY | O_CLOEXEC), ==, -1);
  g_assert_cmpint (errno, ==, EACCES);
  g_clear_pointer (&back, g_free);
  g_assert_true (g_file_get_contents (vro, &back, NULL, NULL));
  g_assert_cmpstr (back, ==, "readonly");

  /* set-id bits are stripped at create and chmod (backing writes run with
   * the daemon's CAP_FSETID and would not clear them) */
  vsuid = g_build_filename (mnt, rw, "suid", NULL);
  hsuid = g_build_filename (rw, "suid", NULL);
  fd = open (vsuid, O_CREAT | O_WRONLY | O_CLOEXEC, 06755);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (write (fd, "x", 1), ==, 1);
  close (fd);
  g_assert_no_errno (stat (hsuid, &st));
  g_assert_cmpint (st.st_mode & (S_ISUID | S_ISGID), ==, 0);
  g_assert_no_errno (chmod (vsuid, 06755));
  g_assert_no_errno (stat (hsuid, &st));
  g_assert_cmpint (st.st_mode & (S_ISUID | S_ISGID), ==, 0);

  fsg_fs_get_stats (fs, &stats);
  g_assert_true (stats.passthrough);
  g_assert_cmpuint (stats.passthrough_opens, >=, 4);
  g_assert_cmpuint (stats.op_requests[FSG_FS_OP_READ], ==, 0);
  g_assert_cmpuint (stats.op_requests[FSG_FS_OP_WRITE], ==, 0);
  g_assert_cmpuint (stats.op_requests[FSG_FS_OP_OPEN], >=, 3);
  g_assert_cmpuint (stats.op_requests[FSG_FS_OP_CREATE], >=, 2);
  /* Written through passthrough, close() costs no FLUSH round trip on a
   * local host file system. */
  rw_fd = open (rw, O_PATH | O_DIRECTORY | O_CLOEXEC);
  g_assert_cmpint (rw_fd, >=, 0);
  if (fsg_fs_close_is_silent (rw_fd))
    g_assert_cmpuint (stats.op_requests[FSG_FS_OP_FLUSH], ==, 0);
  else
    g_test_message ("%s is not on a local file system: FLUSH requests are expected", rw);
  {
    g_autofree char *table = fsg_fs_stats_format (&stats);

    g_assert_true (g_str_has_prefix (table, "operation "));
    g_assert_nonnull (strstr (table, "\nCREATE "));
    g_assert_nonnull (strstr (table, "\ntotal "));
    g_assert_null (strstr (table, "\nREAD "));
  }

  fsg_fs_stop (fs);
  g_clear_pointer (&fs, fsg_fs_free);
  cleanup_mnt[0] = '\0';
  g_free (buf);
  fsg_test_rm_rf (tmp);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/fs-api/take-fuse-fd", test_take_fd);
  g_test_add_func ("/fs-api/passthrough", test_passthrough);
  return g_test_run ();
}
