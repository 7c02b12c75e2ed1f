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
 * left to the daemon (same decisions), and I tells R (FSG_MSG_BIND_SKIPPED,
 * so the report lists what was bound).
 *
 * A hole (fsg_policy_hybrid_holes: /usr/local) below a bound tree stays
 * the daemon's: before the bind covers it, the view's own directory there
 * is cloned (recursively, with the run's mounts below it), and after the
 * bind the clone is mounted over the host's directory inside it. Where the
 * host has no directory there (now), no hole is needed.
 * Any other failure stops the run (exit 125): never a bind without its
 * holes, nor with other flags. On by default; FSGATE_HYBRID=0 or the policy's
 * `hybrid = off` turns it off (docs/security.md, "Hybrid view", says what
 * a bind exposes).
 */
#include "config.h"

#include "runner/run.h"

#include <dirent.h>
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

/* Why the hybrid view is off for @policy here (static text), or NULL. */
static const char *
off_reason (const FsgPolicy *policy)
{
  const char *why = NULL;

  if (!fsg_policy_hybrid_enabled (policy, &why))
    return why;
  return mount_api_refused ();
}

/* The plan, or NULL with *out_off set. */
static GPtrArray *
plan_for (const FsgPolicy *policy, const char **out_off)
{
  g_autofree char *mountinfo = NULL;

  *out_off = off_reason (policy);
  if (*out_off != NULL)
    return NULL;
  if (!g_file_get_contents ("/proc/self/mountinfo", &mountinfo, NULL, NULL))
    {
      *out_off = "/proc/self/mountinfo is unreadable";
      return NULL;
    }
  return fsg_policy_hybrid_plan (policy, mountinfo);
}

static char *
describe (GPtrArray *plan, const char *off)
{
  g_autoptr(GString) bound = g_string_new (NULL);
  g_autoptr(GString) served = g_string_new (NULL);
  guint n = 0, beyond = 0;

  if (plan == NULL)
    return g_strdup_printf ("hybrid view off (%s): the daemon serves every path", off);
  for (guint i = 0; i < plan->len; i++)
    {
      const FsgHybridTree *t = plan->pdata[i];

      if (t->served_why == NULL)
        {
          g_string_append_printf (bound, "%s%s", n++ ? " " : "", t->path);
          for (guint h = 0; t->holes != NULL && t->holes[h] != NULL; h++)
            g_string_append_printf (bound, "%s%s", h ? ", " : " (less ", t->holes[h]);
          if (t->holes != NULL)
            g_string_append_c (bound, ')');
        }
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
  return g_strdup_printf ("hybrid view: %u host director%s bound read-only (%s); the daemon "
                          "serves the rest%s",
                          n, n == 1 ? "y" : "ies", n ? bound->str : "none", served->str);
}

char *
fsg_hybrid_summary (const FsgPolicy *policy)
{
  const char *off = NULL;
  g_autoptr(GPtrArray) plan = plan_for (policy, &off);

  return describe (plan, off);
}

/* ---- --doctor: sockets and FIFOs below the bound directories ------------ */

typedef struct
{
  guint64 entries, max;
  GPtrArray *found; /* "PATH (socket)" */
  char *const *holes; /* of the tree scanned: served, not scanned */
} Scan;

static void
scan_tree (Scan *sc, int dfd, const char *path, guint depth)
{
  DIR *dir;
  struct dirent *de;
  int fd = openat (dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

  if (fd < 0 || (dir = fdopendir (fd)) == NULL)
    {
      if (fd >= 0)
        close (fd);
      return;
    }
  while ((de = readdir (dir)) != NULL && sc->entries < sc->max && sc->found->len < 20)
    {
      unsigned char type = de->d_type;

      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      sc->entries++;
      if (type == DT_UNKNOWN)
        {
          struct stat st;

          if (fstatat (dirfd (dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            continue;
          type = S_ISDIR (st.st_mode) ? DT_DIR : S_ISSOCK (st.st_mode) ? DT_SOCK
                 : S_ISFIFO (st.st_mode) ? DT_FIFO : DT_REG;
        }
      if (type == DT_SOCK || type == DT_FIFO)
        g_ptr_array_add (sc->found, g_strdup_printf ("%s/%s (%s)", path, de->d_name,
                                                     type == DT_SOCK ? "socket" : "FIFO"));
      else if (type == DT_DIR && depth < 64)
        {
          g_autofree char *subpath = g_strconcat (path, "/", de->d_name, NULL);
          gboolean hole = FALSE;
          int sub;

          for (guint h = 0; sc->holes != NULL && sc->holes[h] != NULL; h++)
            hole |= strcmp (sc->holes[h], subpath) == 0;
          if (hole)
            continue;
          sub = openat (dirfd (dir), de->d_name, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
          if (sub >= 0)
            {
              scan_tree (sc, sub, subpath, depth + 1);
              close (sub);
            }
        }
    }
  closedir (dir);
}

#define DOCTOR_SCAN_MAX 5000000

char *
fsg_hybrid_doctor_check (const FsgPolicy *policy)
{
  const char *off = NULL;
  g_autoptr(GPtrArray) plan = plan_for (policy, &off);
  Scan sc = { 0, DOCTOR_SCAN_MAX, g_ptr_array_new_with_free_func (g_free) };
  g_autoptr(GPtrArray) found = sc.found;
  gint64 start = g_get_monotonic_time ();
  guint n_trees = 0;

  if (plan == NULL)
    return NULL;
  for (guint i = 0; i < plan->len; i++)
    {
      const FsgHybridTree *t = plan->pdata[i];
      int fd;

      if (t->served_why != NULL)
        continue;
      fd = open (t->path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0)
        continue;
      n_trees++;
      sc.holes = t->holes;
      scan_tree (&sc, fd, strcmp (t->path, "/") == 0 ? "" : t->path, 0);
      close (fd);
    }
  if (n_trees == 0)
    return NULL;
  if (found->len > 0)
    {
      g_ptr_array_add (found, NULL);
      g_autofree char *list = g_strjoinv (", ", (char **) found->pdata);
      return g_strdup_printf ("warn  hybrid view: below the bound directories there are host "
                              "sockets or FIFOs, which a bind makes reachable (through the view a "
                              "socket cannot be connected to and a FIFO is the view's own): %s. "
                              "Fix: move them out of the system trees, or set hybrid = off in the "
                              "policy (or FSGATE_HYBRID=0)", list);
    }
  return g_strdup_printf ("ok    hybrid view: no host socket or FIFO below the bound directories "
                          "(%" G_GUINT64_FORMAT " entries%s, %" G_GINT64_FORMAT " ms)",
                          sc.entries, sc.entries >= sc.max ? ", the first only" : "",
                          (g_get_monotonic_time () - start) / 1000);
}

const char *
fsg_hybrid_prepare (FsgSandboxSpec *spec, GPtrArray *strings, const FsgPolicy *policy,
                    gboolean verbose)
{
  const char *off = NULL;
  g_autoptr(GPtrArray) plan = plan_for (policy, &off);
  FsgHybridBind *binds;
  guint n = 0;

  spec->binds = NULL;
  spec->n_binds = 0;
  if (verbose)
    {
      g_autofree char *line = describe (plan, off);
      g_printerr ("fsgate-run: %s\n", line);
    }
  if (plan == NULL || plan->len == 0)
    return off;
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
      if (t->holes != NULL)
        {
          guint k = g_strv_length (t->holes);
          const char **rel = g_new0 (const char *, k + 1);

          g_ptr_array_add (strings, rel);
          for (guint h = 0; h < k; h++)
            {
              char *copy = g_strdup (t->holes[h] + strlen (t->path) + 1); /* strictly below */

              g_ptr_array_add (strings, copy);
              rel[h] = copy;
            }
          binds[n].holes_rel = rel;
          binds[n].n_holes = k;
        }
      n++;
    }
  spec->binds = binds;
  spec->n_binds = n;
  return NULL;
}

static int
open_beneath (int dirfd, const char *path, guint64 resolve)
{
  struct open_how how = { 0 };

  how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
  how.resolve = resolve | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  return (int) syscall (SYS_openat2, dirfd, path, &how, sizeof how);
}

#define MAX_HOLES 8

static void
close_all (int *fds, guint n)
{
  for (guint i = 0; i < n; i++)
    if (fds[i] >= 0)
      close (fds[i]);
}

/* Bind @b; 0 when made or left to the daemon (*out_skipped), else -errno. */
static int
bind_one (int view, const FsgHybridBind *b, gboolean *out_skipped)
{
  struct mount_attr attr = { 0 };
  struct stat st;
  int holes[MAX_HOLES];
  guint n_holes = b->n_holes < MAX_HOLES ? b->n_holes : MAX_HOLES;
  int src, dst, tree, err = 0;

  *out_skipped = TRUE;
  if (b->n_holes > MAX_HOLES)
    return -E2BIG;
  src = open_beneath (AT_FDCWD, b->source, 0);
  if (src < 0)
    {
      if (errno == ENOENT || errno == ELOOP || errno == ENOTDIR)
        return 0; /* changed since the plan: the daemon serves it */
      return -errno;
    }
  if (fstat (src, &st) < 0 || (guint64) st.st_dev != b->dev || (guint64) st.st_ino != b->ino)
    {
      close (src);
      return 0;
    }
  dst = open_beneath (view, b->target_rel, RESOLVE_BENEATH);
  if (dst < 0)
    {
      err = errno;
      close (src);
      if (err == ENOENT || err == ELOOP || err == ENOTDIR || err == EACCES)
        return 0; /* not a directory in the view (now) */
      return -err;
    }
  /* the view's own directories at the holes, before the bind covers them
   * (-1: the view shows none there) */
  for (guint h = 0; h < n_holes; h++)
    {
      int at = open_beneath (dst, b->holes_rel[h], RESOLVE_BENEATH);

      holes[h] = -1;
      if (at < 0 && errno != ENOENT && errno != ENOTDIR && errno != ELOOP)
        {
          /* the view could not say (EIO, EACCES, ENOMEM): fail as it is */
          err = errno;
          close_all (holes, h);
          close (src);
          close (dst);
          return -err;
        }
      if (at < 0)
        continue;
      holes[h] = (int) syscall (SYS_open_tree, at, "",
                                OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
      if (holes[h] < 0)
        {
          err = errno;
          close (at);
          close_all (holes, h);
          close (src);
          close (dst);
          return -err;
        }
      close (at);
    }
  tree = (int) syscall (SYS_open_tree, src, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
  if (tree < 0 && errno == EINVAL)
    {
      /* a host mount appeared below since the plan (a non-recursive
       * clone would hide what is under it): the daemon serves it */
      close_all (holes, n_holes);
      close (src);
      close (dst);
      return 0;
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
      close_all (holes, n_holes);
      return -err;
    }
  *out_skipped = FALSE;
  if (n_holes == 0)
    return 0;
  /* The holes, inside the bind now: opened again from the view, so the
   * walk crosses into the new mount. A failure here fails the run, which
   * has not started: a bind never stands without its holes. */
  dst = open_beneath (view, b->target_rel, RESOLVE_BENEATH);
  if (dst < 0)
    err = errno;
  for (guint h = 0; err == 0 && h < n_holes; h++)
    {
      int at = open_beneath (dst, b->holes_rel[h], RESOLVE_BENEATH);

      if (at < 0)
        {
          if (errno != ENOENT && errno != ENOTDIR && errno != ELOOP)
            err = errno;
          continue; /* no directory on the host there: nothing to cover */
        }
      if (holes[h] < 0)
        err = ENOENT; /* a host directory the view does not show */
      else if (syscall (SYS_move_mount, holes[h], "", at, "",
                        MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
        err = errno;
      close (at);
    }
  if (dst >= 0)
    close (dst);
  close_all (holes, n_holes);
  return -err;
}

/* Returns 0, or -errno with *out_index the bind that failed (n_binds when
 * the failure is no bind's: the view itself could not be opened). */
int
fsg_hybrid_bind_async_signal_safe (const FsgSandboxSpec *spec, guint *out_index)
{
  int view;

  *out_index = spec->n_binds; /* none: the failure is not one bind's */
  if (spec->n_binds == 0)
    return 0;
  view = open (spec->view_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (view < 0)
    return -errno;
  for (guint i = 0; i < spec->n_binds; i++)
    {
      gboolean skipped;
      int r;

      *out_index = i;
      r = bind_one (view, &spec->binds[i], &skipped);
      if (r < 0)
        {
          close (view);
          return r;
        }
      *out_index = spec->n_binds;
      if (skipped)
        {
          FsgCtlMsg msg = { FSG_MSG_BIND_SKIPPED, 0, 0, i };

          fsg_ctl_send (spec->ctl_fd, &msg, -1);
        }
    }
  close (view);
  return 0;
}
