/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Lifecycle of the FUSE policy view: open every root and record the
 * identities of literal deny-read paths before anything is mounted, mount
 * (or adopt a /dev/fuse fd mounted elsewhere), serve on libfuse's
 * multi-threaded loop in a background thread, stop and unmount.
 *
 * Nothing here resolves a path after the session is started: the roots are
 * opened with openat2(RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS) while the
 * mount does not exist yet, so a view that contains its own mount point
 * never walks into itself.
 */
#include "config.h"

#include "fsgate/fs-private.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* Sent to the loop thread to interrupt its sem_wait() after
 * fuse_session_exit(); the handler does nothing. */
#define FSG_WAKE_SIGNAL (SIGRTMIN + 6)

/* Raise the soft RLIMIT_NOFILE to the hard one and return the O_PATH fd
 * budget: @requested, FSGATE_FD_BUDGET, or the limit minus a reserve for
 * open files, directory streams, pipes and the runner. */
static guint64
raise_nofile_limit (guint requested)
{
  struct rlimit rl;
  const char *env = g_getenv ("FSGATE_FD_BUDGET");
  guint64 limit = 1024;

  if (getrlimit (RLIMIT_NOFILE, &rl) == 0)
    {
      if (rl.rlim_cur < rl.rlim_max)
        {
          rl.rlim_cur = rl.rlim_max;
          (void) setrlimit (RLIMIT_NOFILE, &rl);
          (void) getrlimit (RLIMIT_NOFILE, &rl);
        }
      limit = rl.rlim_cur == RLIM_INFINITY ? G_MAXINT : rl.rlim_cur;
    }
  if (env != NULL && g_ascii_strtoull (env, NULL, 10) > 0)
    return g_ascii_strtoull (env, NULL, 10);
  if (requested > 0)
    return requested;
  return MAX (limit - MAX (limit / 4, 64), 16);
}

static int
open_root (const char *path)
{
  struct open_how how = { 0 };

  how.flags = O_PATH | O_CLOEXEC;
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  return (int) syscall (SYS_openat2, AT_FDCWD, path, &how, sizeof how);
}

static void
close_fd_value (gpointer p)
{
  int fd = GPOINTER_TO_INT (p) - 1;

  if (fd >= 0)
    close (fd);
}

static guint
devino_hash (gconstpointer p)
{
  const FsgDevIno *k = p;

  return (guint) (k->ino ^ (k->ino >> 32) ^ (k->dev * 31));
}

static gboolean
devino_equal (gconstpointer a, gconstpointer b)
{
  const FsgDevIno *x = a, *y = b;

  return x->dev == y->dev && x->ino == y->ino;
}

/* "/a//b/" -> "/a/b"; NULL if not absolute or with "." / ".." components. */
static char *
normalise_view_path (const char *path)
{
  g_auto(GStrv) parts = NULL;
  GString *out;

  if (path == NULL || path[0] != '/')
    return NULL;
  parts = g_strsplit (path, "/", -1);
  out = g_string_new (NULL);
  for (guint i = 0; parts[i] != NULL; i++)
    {
      if (parts[i][0] == '\0')
        continue;
      if (strcmp (parts[i], ".") == 0 || strcmp (parts[i], "..") == 0)
        {
          g_string_free (out, TRUE);
          return NULL;
        }
      g_string_append_c (out, '/');
      g_string_append (out, parts[i]);
    }
  if (out->len == 0)
    {
      g_string_free (out, TRUE);
      return NULL;
    }
  return g_string_free (out, FALSE);
}

static gboolean
add_stub (FsgFs *fs, const char *stub, GError **error)
{
  g_autofree char *path = normalise_view_path (stub);
  char *child;

  if (path == NULL)
    return fsg_throw (error, "stub directory '%s' is not an absolute path below '/'", stub);
  g_hash_table_add (fs->stubs, g_strdup (path));
  /* Register @path's name in each ancestor, up to "/". */
  child = g_strdup (path);
  for (;;)
    {
      char *slash = strrchr (child, '/');
      g_autofree char *parent = slash == child ? g_strdup ("/") : g_strndup (child, slash - child);
      GPtrArray *names = g_hash_table_lookup (fs->stub_parents, parent);
      const char *name = slash + 1;
      gboolean found = FALSE;

      if (names == NULL)
        {
          names = g_ptr_array_new_with_free_func (g_free);
          g_hash_table_insert (fs->stub_parents, g_strdup (parent), names);
        }
      for (guint i = 0; i < names->len; i++)
        if (strcmp (names->pdata[i], name) == 0)
          found = TRUE;
      if (!found)
        g_ptr_array_add (names, g_strdup (name));
      g_free (child);
      child = g_steal_pointer (&parent);
      if (strcmp (child, "/") == 0)
        break;
    }
  g_free (child);
  return TRUE;
}

/* "inside outside count" lines (FsgFsOptions.uid_map) -> FsgIdRange of
 * inside ids; an empty array for NULL or nothing parsable. */
static GArray *
parse_id_map (const char *map)
{
  GArray *ranges = g_array_new (FALSE, FALSE, sizeof (FsgIdRange));
  g_auto(GStrv) lines = map ? g_strsplit (map, "\n", -1) : NULL;

  for (guint i = 0; lines != NULL && lines[i] != NULL; i++)
    {
      unsigned long inside, outside, count;

      if (sscanf (lines[i], "%lu %lu %lu", &inside, &outside, &count) == 3 && count > 0 &&
          inside <= G_MAXUINT32 && count <= G_MAXUINT32)
        g_array_append_val (ranges, ((FsgIdRange) { (guint32) inside, (guint32) count }));
    }
  return ranges;
}

FsgFs *
fsg_fs_new (const FsgPolicy *policy, const FsgFsOptions *options, GError **error)
{
  g_autoptr(FsgFs) fs = g_new0 (FsgFs, 1);
  const FsgRule *const *rules;
  const char *const *denied;
  FsgPathState rs;
  guint n_rules = 0;
  int n;

  g_mutex_init (&fs->lock);
  g_mutex_init (&fs->pt_lock);
  fs->pt_fds = g_hash_table_new (NULL, NULL);
  fs->pt_fuse_fd = -1;
  g_rw_lock_init (&fs->ns_lock);
  g_mutex_init (&fs->done_lock);
  g_cond_init (&fs->done_cond);
  fs->done_fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
  fs->root_fds = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, close_fd_value);
  fs->mount_fds = g_hash_table_new_full (NULL, NULL, NULL, close_fd_value);
  fs->deny_ids = g_hash_table_new_full (devino_hash, devino_equal, g_free, NULL);
  fs->stubs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  fs->stub_parents = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                            (GDestroyNotify) g_ptr_array_unref);
  fsg_inode_tables_init (fs);
  if (fs->done_fd < 0)
    return fsg_throw_errno (error, "eventfd"), NULL;

  fs->policy = policy;
  fs->audit_fd = -1;
  if (options != NULL)
    {
      fs->audit_level = options->audit_level;
      fs->audit_fd = options->audit_fd;
      fs->audit_func = options->audit_func;
      fs->audit_data = options->audit_data;
      fs->debug = options->debug;
      fs->user_xattrs = options->user_xattrs;
      fs->fd_budget = options->fd_budget;
      fs->op_timing = options->op_timing;
      fs->host_checks = options->host_checks;
      fs->uid_ranges = parse_id_map (options->uid_map);
      fs->gid_ranges = parse_id_map (options->gid_map);
      for (guint i = 0; options->stub_dirs != NULL && options->stub_dirs[i] != NULL; i++)
        if (!add_stub (fs, options->stub_dirs[i], error))
          return NULL;
    }
  fs->hide_denied = fsg_policy_hide_denied (policy);
  if ((fsg_policy_devices_allowed (policy) || fsg_policy_setid_kept (policy)) &&
      !(options != NULL && options->inspection))
    return fsg_throw (error, "the policy asks for %s, which only `fsgate mount` may give: a sandboxed "
                      "command could leave a device node or a set-id program on the host (remove the "
                      "key from [filesystem])",
                      fsg_policy_devices_allowed (policy) ? "'devices = allow'" : "'setid = keep'"), NULL;
  fsg_fs_git_init (fs);
  fs->is_root = geteuid () == 0;
  fs->own_uid = geteuid ();
  fs->own_gid = getegid ();
  fs->start_time = g_get_real_time ();
  fs->fd_budget = raise_nofile_limit ((guint) fs->fd_budget);
  fs->pt_want = fs->is_root && !(options != NULL && options->no_passthrough) &&
                g_strcmp0 (g_getenv ("FSGATE_PASSTHROUGH"), "0") != 0 &&
                fsg_fs_passthrough_supported (NULL);

  n = getgroups (0, NULL);
  if (n > 0)
    {
      fs->saved_groups = g_new0 (gid_t, n);
      fs->n_saved_groups = getgroups (n, fs->saved_groups);
      if (fs->n_saved_groups < 0)
        fs->n_saved_groups = 0;
    }

  /* Open every root now, before any mount exists (never walk into our own
   * mount), refusing symlinks anywhere in the canonical path. */
  rules = fsg_policy_rules (policy, &n_rules);
  for (guint i = 0; i < n_rules; i++)
    {
      const FsgRule *rule = rules[i];
      int fd;

      if (rule->kind != FSG_RULE_WRITABLE && rule->kind != FSG_RULE_READONLY)
        continue;
      if (rule->kind == FSG_RULE_WRITABLE)
        fs->writeback = TRUE;
      if (rule->path == NULL || g_hash_table_contains (fs->root_fds, rule->path))
        continue;
      fd = open_root (rule->path);
      if (fd < 0)
        {
          if (errno == ENOENT)
            continue; /* optional root; the policy reported required ones */
          return fsg_throw_errno (error, "open root '%s' (%s)", rule->path, rule->origin), NULL;
        }
      g_hash_table_insert (fs->root_fds, g_strdup (rule->path), GINT_TO_POINTER (fd + 1));
      /* review L9: a root that is itself a procfs/sysfs... mount would show
       * the host's processes (the lookup guard only sees mounts below roots) */
      if (fsg_pseudo_fs_name (fd) != NULL)
        return fsg_throw (error, "root '%s' (%s) is a %s mount, which describes the host's processes "
                          "and kernel; fsgate does not serve it (leave it out of the policy: the "
                          "sandbox has its own /proc)",
                          rule->path, rule->origin, fsg_pseudo_fs_name (fd)), NULL;
      if (fsg_fs_dir_folds_case (fd) != NULL)
        return fsg_throw (error, "root '%s' (%s) may resolve names case-insensitively (%s): names such as "
                          "'.ENV' would escape rules written for '.env'; fsgate does not serve it "
                          "(use a case-sensitive copy, or leave it out of the policy)",
                          rule->path, rule->origin, fsg_fs_dir_folds_case (fd)), NULL;
    }

  /* Reopen evicted inodes by file handle where the daemon may. */
  fsg_fdcache_probe_handles (fs);

  /* Literal deny-read paths are also denied by identity, wherever another
   * hard link or bind mount of the same file shows up in the view. */
  denied = fsg_policy_literal_deny_read (policy);
  for (guint i = 0; denied != NULL && denied[i] != NULL; i++)
    {
      struct stat st;
      FsgDevIno *id;

      if (fstatat (AT_FDCWD, denied[i], &st, AT_SYMLINK_NOFOLLOW) < 0)
        continue;
      id = g_new0 (FsgDevIno, 1);
      id->dev = st.st_dev;
      id->ino = st.st_ino;
      g_hash_table_add (fs->deny_ids, id);
    }
  /* ... and so is every other link of a file below a denied directory */
  {
    g_autofree char *stopped = NULL;

    /* fail closed: an unscanned denied directory could have a hard link
     * out of it that the view would serve */
    if (!fsg_fs_scan_denied_links (fs, &stopped))
      return fsg_throw (error, "the deny-read directory '%s' holds more than %" G_GUINT64_FORMAT
                        " entries, too many to find hard links out of it when the view starts. "
                        "Fix: deny narrower paths below it, or set FSGATE_DENIED_SCAN_MAX to a "
                        "larger number of entries (or to 'off' to skip the scan and accept that a "
                        "hard link of a file in a denied directory stays readable elsewhere)",
                        stopped, fsg_policy_denied_scan_max ()), NULL;
  }

  rs = fsg_policy_root_state (policy);
  if (rs.flags & FSG_STATE_SYNTHETIC)
    fs->root = fsg_inode_new_root (fs, -1, NULL, rs);
  else
    {
      gpointer v = g_hash_table_lookup (fs->root_fds, "/");
      struct stat st;
      int fd;

      if (v == NULL)
        return fsg_throw (error, "the view root '/' is a root but could not be opened"), NULL;
      fd = fcntl (GPOINTER_TO_INT (v) - 1, F_DUPFD_CLOEXEC, 3);
      if (fd < 0 || fstat (fd, &st) < 0)
        return fsg_throw_errno (error, "open '/'"), NULL;
      fs->root = fsg_inode_new_root (fs, fd, &st, rs);
    }

  return g_steal_pointer (&fs);
}

static struct fuse_session *
new_session (FsgFs *fs, gboolean mount_opts, GError **error)
{
  GPtrArray *argv = g_ptr_array_new_with_free_func (g_free);
  struct fuse_args args;
  struct fuse_session *se;

  g_ptr_array_add (argv, g_strdup ("fsgate"));
  if (mount_opts)
    {
      /* nosuid,nodev are libfuse's defaults and are never turned off. */
      g_ptr_array_add (argv, g_strdup ("-o"));
      g_ptr_array_add (argv, g_strdup_printf ("%sfsname=fsgate,subtype=fsgate%s",
                                              fs->host_checks ? "" : "default_permissions,",
                                              fs->is_root ? ",allow_other" : ""));
    }
  if (fs->debug)
    g_ptr_array_add (argv, g_strdup ("-d"));
  args.argc = argv->len;
  args.argv = (char **) argv->pdata;
  args.allocated = 0;
  se = fuse_session_new (&args, &fsg_fs_ops, sizeof fsg_fs_ops, fs);
  fuse_opt_free_args (&args);
  g_ptr_array_unref (argv);
  if (se == NULL)
    fsg_throw (error, "cannot create the FUSE session");
  return se;
}

gboolean
fsg_fs_mount (FsgFs *fs, const char *mountpoint, GError **error)
{
  struct statx stx;

  if (fs->se != NULL)
    return fsg_throw (error, "already mounted or serving a FUSE fd");
  fs->se = new_session (fs, TRUE, error);
  if (fs->se == NULL)
    return FALSE;
  if (fuse_session_mount (fs->se, mountpoint) != 0)
    {
      g_clear_pointer (&fs->se, fuse_session_destroy);
      return fsg_throw (error, "cannot mount the view at '%s'", mountpoint);
    }
  fs->mountpoint = g_strdup (mountpoint);
  (void) fsg_passthrough_install (fs); /* else the normal data path */
  /* Our own st_dev, so that lookups never walk into this mount. An empty
   * request mask with AT_STATX_DONT_SYNC never sends a request to the
   * (not yet serving) daemon. */
  if (statx (AT_FDCWD, mountpoint, AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC, 0, &stx) == 0)
    {
      fs->own_dev = makedev (stx.stx_dev_major, stx.stx_dev_minor);
      fs->have_own_dev = TRUE;
    }
  return TRUE;
}

char *
fsg_fs_mount_data (int fuse_fd, uid_t uid, gid_t gid)
{
  return g_strdup_printf ("fd=%d,rootmode=40000,user_id=%u,group_id=%u,allow_other",
                          fuse_fd, (unsigned) uid, (unsigned) gid);
}

gboolean
fsg_fs_take_fuse_fd (FsgFs *fs, int fuse_fd, GError **error)
{
  g_autofree char *path = NULL;

  if (fs->se != NULL)
    {
      close (fuse_fd);
      return fsg_throw (error, "already mounted or serving a FUSE fd");
    }
  /* fsg_fs_mount_data() has no default_permissions: nothing but the host
   * checks permissions, with the one identity the sandbox has. */
  fs->host_checks = TRUE;
  fs->single_caller = TRUE;
  if (fs->uid_ranges == NULL)
    fs->uid_ranges = parse_id_map (NULL);
  if (fs->gid_ranges == NULL)
    fs->gid_ranges = parse_id_map (NULL);
  if (fs->uid_ranges->len == 0)
    g_array_append_val (fs->uid_ranges, ((FsgIdRange) { fs->own_uid, 1 }));
  if (fs->gid_ranges->len == 0)
    g_array_append_val (fs->gid_ranges, ((FsgIdRange) { fs->own_gid, 1 }));
  fs->se = new_session (fs, FALSE, error);
  if (fs->se == NULL)
    {
      close (fuse_fd);
      return FALSE;
    }
  /* libfuse treats "/dev/fd/N" as an already mounted /dev/fuse fd and
   * takes ownership of it. */
  path = g_strdup_printf ("/dev/fd/%d", fuse_fd);
  if (fuse_session_mount (fs->se, path) != 0)
    {
      g_clear_pointer (&fs->se, fuse_session_destroy);
      close (fuse_fd);
      return fsg_throw (error, "cannot use FUSE fd %d", fuse_fd);
    }
  (void) fsg_passthrough_install (fs);
  return TRUE;
}

static void
wake_handler (int sig)
{
  (void) sig;
}

static void *
loop_thread (void *data)
{
  FsgFs *fs = data;
  struct fuse_loop_config *cfg = fuse_loop_cfg_create ();
  sigset_t set;
  guint64 one = 1;

  sigemptyset (&set);
  sigaddset (&set, FSG_WAKE_SIGNAL);
  pthread_sigmask (SIG_UNBLOCK, &set, NULL);

  fuse_loop_cfg_set_max_threads (cfg, 16);
  fuse_loop_cfg_set_clone_fd (cfg, 0);
  (void) fuse_session_loop_mt (fs->se, cfg);
  fuse_loop_cfg_destroy (cfg);

  g_mutex_lock (&fs->done_lock);
  fs->finished = TRUE;
  g_cond_broadcast (&fs->done_cond);
  g_mutex_unlock (&fs->done_lock);
  (void) !write (fs->done_fd, &one, sizeof one);
  return NULL;
}

gboolean
fsg_fs_start (FsgFs *fs, GError **error)
{
  struct sigaction sa = { 0 };
  int r;

  if (fs->se == NULL)
    return fsg_throw (error, "nothing to serve: mount or take a FUSE fd first");
  if (fs->started)
    return fsg_throw (error, "already started");
  /* Pitfall: a cwd inside the view would make the daemon call into itself. */
  if (chdir ("/") < 0)
    return fsg_throw_errno (error, "chdir '/'");
  sa.sa_handler = wake_handler;
  sigemptyset (&sa.sa_mask);
  sa.sa_flags = 0; /* no SA_RESTART: interrupt sem_wait() */
  if (sigaction (FSG_WAKE_SIGNAL, &sa, NULL) < 0)
    return fsg_throw_errno (error, "sigaction");
  r = pthread_create (&fs->loop_pthread, NULL, loop_thread, fs);
  if (r != 0)
    return fsg_throw_errno_value (error, r, "pthread_create");
  fs->started = TRUE;
  return TRUE;
}

int
fsg_fs_get_wait_fd (FsgFs *fs)
{
  return fs->done_fd;
}

void
fsg_fs_wait (FsgFs *fs)
{
  if (!fs->started)
    return;
  g_mutex_lock (&fs->done_lock);
  while (!fs->finished)
    g_cond_wait (&fs->done_cond, &fs->done_lock);
  g_mutex_unlock (&fs->done_lock);
}

void
fsg_fs_stop (FsgFs *fs)
{
  if (fs->stopped)
    return;
  fs->stopped = TRUE;
  if (fs->started)
    {
      fuse_session_exit (fs->se);
      for (;;)
        {
          gboolean done;
          gint64 deadline = g_get_monotonic_time () + 50 * G_TIME_SPAN_MILLISECOND;

          g_mutex_lock (&fs->done_lock);
          done = fs->finished;
          if (!done)
            {
              pthread_kill (fs->loop_pthread, FSG_WAKE_SIGNAL);
              g_cond_wait_until (&fs->done_cond, &fs->done_lock, deadline);
              done = fs->finished;
            }
          g_mutex_unlock (&fs->done_lock);
          if (done)
            break;
        }
      pthread_join (fs->loop_pthread, NULL);
    }
  if (fs->se != NULL && fs->mountpoint != NULL)
    fuse_session_unmount (fs->se);
}

void
fsg_fs_free (FsgFs *fs)
{
  if (fs == NULL)
    return;
  fsg_fs_stop (fs);
  g_clear_pointer (&fs->se, fuse_session_destroy);
  fsg_inode_tables_clear (fs);
  g_clear_pointer (&fs->mount_fds, g_hash_table_unref);
  g_clear_pointer (&fs->root_fds, g_hash_table_unref);
  g_clear_pointer (&fs->deny_ids, g_hash_table_unref);
  g_clear_pointer (&fs->stubs, g_hash_table_unref);
  g_clear_pointer (&fs->stub_parents, g_hash_table_unref);
  fsg_fs_git_clear (fs);
  if (fs->done_fd >= 0)
    close (fs->done_fd);
  g_free (fs->saved_groups);
  g_clear_pointer (&fs->uid_ranges, g_array_unref);
  g_clear_pointer (&fs->gid_ranges, g_array_unref);
  g_free (fs->mountpoint);
  g_clear_pointer (&fs->pt_pending, g_hash_table_unref);
  g_clear_pointer (&fs->pt_fds, g_hash_table_unref);
  g_mutex_clear (&fs->pt_lock);
  g_mutex_clear (&fs->lock);
  g_rw_lock_clear (&fs->ns_lock);
  g_mutex_clear (&fs->done_lock);
  g_cond_clear (&fs->done_cond);
  g_free (fs);
}

void
fsg_fs_get_stats (FsgFs *fs, FsgFsStats *out_stats)
{
  FsgFsStats st = { 0 };

  st.denials = __atomic_load_n (&fs->denials, __ATOMIC_RELAXED);
  for (guint i = 0; i < FSG_FS_N_OPS; i++)
    {
      st.op_requests[i] = __atomic_load_n (&fs->op_requests[i], __ATOMIC_RELAXED);
      st.op_ns[i] = __atomic_load_n (&fs->op_ns[i], __ATOMIC_RELAXED);
      st.requests += st.op_requests[i];
    }
  st.passthrough = fs->passthrough;
  st.parallel_dirops = fs->parallel_dirops;
  st.handle_killpriv = fs->handle_killpriv;
  st.file_handles = g_hash_table_size (fs->mount_fds) > 0; /* immutable */
  g_mutex_lock (&fs->pt_lock);
  st.passthrough_opens = fs->pt_opens;
  g_mutex_unlock (&fs->pt_lock);
  g_mutex_lock (&fs->lock);
  st.inodes = fs->n_inodes;
  st.open_fds = fs->n_fds;
  st.fd_budget = fs->fd_budget;
  st.fd_reopens = fs->n_reopens;
  st.fd_handle_reopens = fs->n_handle_reopens;
  st.fd_evictions = fs->n_evictions;
  g_mutex_unlock (&fs->lock);
  *out_stats = st;
}

static const char *const op_names[FSG_FS_N_OPS] = {
  [FSG_FS_OP_LOOKUP] = "LOOKUP",
  [FSG_FS_OP_FORGET] = "FORGET",
  [FSG_FS_OP_GETATTR] = "GETATTR",
  [FSG_FS_OP_SETATTR] = "SETATTR",
  [FSG_FS_OP_READLINK] = "READLINK",
  [FSG_FS_OP_MKNOD] = "MKNOD",
  [FSG_FS_OP_MKDIR] = "MKDIR",
  [FSG_FS_OP_UNLINK] = "UNLINK",
  [FSG_FS_OP_RMDIR] = "RMDIR",
  [FSG_FS_OP_SYMLINK] = "SYMLINK",
  [FSG_FS_OP_RENAME] = "RENAME",
  [FSG_FS_OP_LINK] = "LINK",
  [FSG_FS_OP_OPEN] = "OPEN",
  [FSG_FS_OP_CREATE] = "CREATE",
  [FSG_FS_OP_READ] = "READ",
  [FSG_FS_OP_WRITE] = "WRITE",
  [FSG_FS_OP_FLUSH] = "FLUSH",
  [FSG_FS_OP_RELEASE] = "RELEASE",
  [FSG_FS_OP_FSYNC] = "FSYNC",
  [FSG_FS_OP_OPENDIR] = "OPENDIR",
  [FSG_FS_OP_READDIR] = "READDIR",
  [FSG_FS_OP_READDIRPLUS] = "READDIRPLUS",
  [FSG_FS_OP_RELEASEDIR] = "RELEASEDIR",
  [FSG_FS_OP_FSYNCDIR] = "FSYNCDIR",
  [FSG_FS_OP_STATFS] = "STATFS",
  [FSG_FS_OP_GETXATTR] = "GETXATTR",
  [FSG_FS_OP_LISTXATTR] = "LISTXATTR",
  [FSG_FS_OP_SETXATTR] = "SETXATTR",
  [FSG_FS_OP_REMOVEXATTR] = "REMOVEXATTR",
  [FSG_FS_OP_ACCESS] = "ACCESS",
  [FSG_FS_OP_FALLOCATE] = "FALLOCATE",
  [FSG_FS_OP_LSEEK] = "LSEEK",
  [FSG_FS_OP_COPY_FILE_RANGE] = "COPY_FILE_RANGE",
  [FSG_FS_OP_LOCK] = "LOCK",
};

typedef struct
{
  guint op;
  guint64 requests;
} OpCount;

static int
cmp_busiest (const void *a, const void *b)
{
  const OpCount *x = a, *y = b;

  if (x->requests != y->requests)
    return x->requests > y->requests ? -1 : 1;
  return x->op < y->op ? -1 : x->op > y->op;
}

char *
fsg_fs_stats_format (const FsgFsStats *stats)
{
  GString *out = g_string_new (NULL);
  OpCount order[FSG_FS_N_OPS];
  guint n = 0;
  guint64 total = 0, total_ns = 0;

  for (guint i = 0; i < FSG_FS_N_OPS; i++)
    if (stats->op_requests[i] > 0)
      {
        order[n].op = i;
        order[n++].requests = stats->op_requests[i];
        total += stats->op_requests[i];
        total_ns += stats->op_ns[i];
      }
  qsort (order, n, sizeof order[0], cmp_busiest);
  /* Without FsgFsOptions.op_timing there are counts only. */
  g_string_append_printf (out, "%-16s %12s %14s %10s\n", "operation", "requests", "daemon CPU ms", "mean us");
  for (guint k = 0; k <= n; k++)
    {
      const char *name = k < n ? op_names[order[k].op] : "total";
      guint64 req = k < n ? stats->op_requests[order[k].op] : total;
      guint64 ns = k < n ? stats->op_ns[order[k].op] : total_ns;

      if (total_ns == 0)
        g_string_append_printf (out, "%-16s %12" G_GUINT64_FORMAT " %14s %10s\n", name, req, "-", "-");
      else
        g_string_append_printf (out, "%-16s %12" G_GUINT64_FORMAT " %14.1f %10.2f\n", name, req, ns / 1e6,
                                req > 0 ? ns / 1e3 / (double) req : 0.0);
    }
  return g_string_free (out, FALSE);
}
