/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The hybrid view: the host directories where the policy decides the same
 * for every path below (fsg_policy_hybrid_plan(), policy/uniform.c) are
 * bind-mounted read-only into the view, so lookups there never reach the
 * FUSE daemon. R plans (fsg_hybrid_prepare()); I mounts
 * (fsg_hybrid_bind_async_signal_safe(), between fork and pivot_root).
 *
 * Each bind is a non-recursive clone of the host directory's mount
 * (open_tree), made read-only, nosuid and nodev before it is attached
 * (mount_setattr), so it is never visible with other flags; it keeps the
 * host mount's noexec, nosymfollow and atime flags. The host directory is
 * opened without following symlinks and must still be the object planned
 * (st_dev, st_ino); the place in the view is opened beneath the view
 * without following symlinks. A directory that changed since the plan, that
 * the view no longer shows, or below which a host mount appeared since, is
 * left to the daemon (same decisions).
 * Any other failure stops the run (exit 125): the plan printed by -v must
 * be what the command gets. Off unless FSGATE_HYBRID=1 (opt-in: see
 * docs/security.md, "Hybrid view", for what a bind exposes).
 */
#include "config.h"

#include "runner/run.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_open_tree
# define SYS_open_tree 428
#endif
#ifndef SYS_move_mount
# define SYS_move_mount 429
#endif
#ifndef SYS_mount_setattr
# define SYS_mount_setattr 442
#endif

/* NULL when open_tree, mount_setattr and move_mount can be called here, else
 * why not. A seccomp filter (a container runtime's) or an old kernel refuses
 * them with ENOSYS or EPERM before it looks at the arguments; then the
 * daemon serves everything rather than the run failing in I. */
static const char *
mount_api_refused (void)
{
  int fd = (int) syscall (SYS_open_tree, AT_FDCWD, "/", OPEN_TREE_CLOEXEC);

  if (fd < 0)
    return "open_tree() is refused here (an old kernel or a seccomp filter)";
  close (fd);
  if (syscall (SYS_mount_setattr, -1, "", AT_EMPTY_PATH, NULL, 0) < 0
      && (errno == ENOSYS || errno == EPERM))
    return "mount_setattr() is refused here (an old kernel or a seccomp filter)";
  if (syscall (SYS_move_mount, -1, "", -1, "", 0) < 0 && (errno == ENOSYS || errno == EPERM))
    return "move_mount() is refused here (an old kernel or a seccomp filter)";
  return NULL;
}

static GPtrArray *
plan_for (const FsgPolicy *policy)
{
  g_autofree char *mountinfo = NULL;

  if (!fsg_policy_hybrid_enabled () || mount_api_refused () != NULL)
    return NULL;
  if (!g_file_get_contents ("/proc/self/mountinfo", &mountinfo, NULL, NULL))
    return NULL;
  return fsg_policy_hybrid_plan (policy, mountinfo);
}

static void
describe (GPtrArray *plan, GString *bound, GString *served)
{
  guint n = 0, beyond = 0;

  for (guint i = 0; i < plan->len; i++)
    {
      const FsgHybridTree *t = plan->pdata[i];

      if (t->served_why == NULL)
        g_string_append_printf (bound, "%s%s", n++ ? " " : "", t->path);
      else if (g_str_has_prefix (t->served_why, "beyond "))
        beyond++;
      else
        g_string_append_printf (served, "%s (%s); ", t->path, t->served_why);
    }
  if (served->len >= 2)
    {
      g_string_truncate (served, served->len - 2);
      g_string_prepend (served, "; uniform but served: ");
    }
  if (beyond > 0)
    g_string_append_printf (served, "; %u more uniform directories served beyond the first %u "
                            "binds (FSGATE_HYBRID_MAX)", beyond, fsg_policy_hybrid_max_binds ());
}

char *
fsg_hybrid_summary (const FsgPolicy *policy)
{
  g_autoptr(GPtrArray) plan = NULL;
  g_autoptr(GString) bound = g_string_new (NULL);
  g_autoptr(GString) served = g_string_new (NULL);
  guint n_bound = 0;

  if (!fsg_policy_hybrid_enabled ())
    return g_strdup ("hybrid view off (the default; FSGATE_HYBRID=1 turns it on): the daemon "
                     "serves every path");
  if (mount_api_refused () != NULL)
    return g_strdup_printf ("hybrid view off: %s; the daemon serves every path",
                            mount_api_refused ());
  plan = plan_for (policy);
  if (plan == NULL)
    return g_strdup ("hybrid view off: /proc/self/mountinfo is unreadable; the daemon serves "
                     "every path");
  describe (plan, bound, served);
  for (guint i = 0; i < plan->len; i++)
    n_bound += ((FsgHybridTree *) plan->pdata[i])->served_why == NULL;
  return g_strdup_printf ("hybrid view: %u host director%s bound read-only (%s); the daemon "
                          "serves the rest%s",
                          n_bound, n_bound == 1 ? "y" : "ies", n_bound ? bound->str : "none",
                          served->str);
}

void
fsg_hybrid_prepare (FsgSandboxSpec *spec, GPtrArray *strings, const FsgPolicy *policy,
                    gboolean verbose)
{
  g_autoptr(GPtrArray) plan = plan_for (policy);
  FsgHybridBind *binds;
  guint n = 0;

  spec->binds = NULL;
  spec->n_binds = 0;
  if (verbose)
    {
      g_autofree char *line = fsg_hybrid_summary (policy);
      g_printerr ("fsgate-run: %s\n", line);
    }
  if (plan == NULL || plan->len == 0)
    return;
  binds = g_new0 (FsgHybridBind, plan->len);
  g_ptr_array_add (strings, binds);
  for (guint i = 0; i < plan->len; i++)
    {
      const FsgHybridTree *t = plan->pdata[i];
      char *source;

      if (t->served_why != NULL || strcmp (t->path, "/") == 0)
        continue;
      source = g_strdup (t->path);
      g_ptr_array_add (strings, source);
      binds[n].source = source;
      binds[n].target_rel = source + 1; /* beneath the view */
      binds[n].dev = t->dev;
      binds[n].ino = t->ino;
      n++;
    }
  spec->binds = binds;
  spec->n_binds = n;
}

static int
open_beneath (int dirfd, const char *path, guint64 resolve)
{
  struct open_how how = { 0 };

  how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
  how.resolve = resolve | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  return (int) syscall (SYS_openat2, dirfd, path, &how, sizeof how);
}

/* Returns 0, or -errno with *out_index the bind that failed. */
int
fsg_hybrid_bind_async_signal_safe (const FsgSandboxSpec *spec, guint *out_index)
{
  int view;

  *out_index = 0;
  if (spec->n_binds == 0)
    return 0;
  view = open (spec->view_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (view < 0)
    return -errno;
  for (guint i = 0; i < spec->n_binds; i++)
    {
      const FsgHybridBind *b = &spec->binds[i];
      struct mount_attr attr = { 0 };
      struct stat st;
      int src, dst, tree, err = 0;

      *out_index = i;
      src = open_beneath (AT_FDCWD, b->source, 0);
      if (src < 0)
        {
          if (errno == ENOENT || errno == ELOOP || errno == ENOTDIR)
            continue; /* changed since the plan: the daemon serves it */
          err = errno;
          close (view);
          return -err;
        }
      if (fstat (src, &st) < 0 || (guint64) st.st_dev != b->dev || (guint64) st.st_ino != b->ino)
        {
          close (src);
          continue;
        }
      dst = open_beneath (view, b->target_rel, RESOLVE_BENEATH);
      if (dst < 0)
        {
          err = errno;
          close (src);
          if (err == ENOENT || err == ELOOP || err == ENOTDIR || err == EACCES)
            continue; /* not a directory in the view (now) */
          close (view);
          return -err;
        }
      tree = (int) syscall (SYS_open_tree, src, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
      if (tree < 0 && errno == EINVAL)
        {
          /* a host mount appeared below since the plan (a non-recursive
           * clone would hide what is under it): the daemon serves it */
          close (src);
          close (dst);
          continue;
        }
      if (tree < 0)
        err = errno;
      else
        {
          attr.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
          if (syscall (SYS_mount_setattr, tree, "", AT_EMPTY_PATH, &attr, sizeof attr) < 0
              || syscall (SYS_move_mount, tree, "", dst, "",
                          MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
            err = errno;
          close (tree);
        }
      close (src);
      close (dst);
      if (err != 0)
        {
          close (view);
          return -err;
        }
    }
  close (view);
  return 0;
}
