/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Uniform subtrees and the hybrid view of fsgate-run.
 *
 * A directory is uniform when the policy gives every path below it, for
 * any names, including names created later, the directory's own access
 * and never a denial. On the automaton of decide.c: a path's state holds
 * the set of live nodes; below it, the live nodes are those reachable from
 * that set (plus the floating node, live everywhere) through literal, glob
 * and "**" edges. The directory is uniform when no reachable node ends a
 * deny-read rule, a root or an alias (a root anchored inside), and, for a
 * writable directory, none ends a deny-write rule either (for a read-only
 * one a deny-write rule changes nothing: the path stays read-only). The
 * test is on the automaton, not on names that exist, so it holds for every
 * name a command could create.
 *
 * fsgate-run bind-mounts the maximal uniform read-only directories of the
 * host's system trees straight into the view (runner/hybrid.c), where the
 * view would have answered every lookup below them the same way.
 * fsg_policy_hybrid_plan() finds them by walking each hybrid tree (the
 * system trees, fsg_policy_secret_pruned, and the policy's hybrid-trees)
 * through the directories that are not uniform, and keeps only those a
 * plain, non-recursive bind shows exactly as the view would:
 *  - inside a hybrid tree: trees that hold no host sockets or FIFOs
 *    (through the view a socket cannot be connected to and a FIFO is the
 *    view's own; through a bind they would be the host's); the
 *    administrator's /usr/local, where software built from source keeps
 *    its sockets, stays served inside a bind of /usr (a hole, below);
 *  - read-only (a writable bind would lose what the daemon adds to writes:
 *    denial records, git protection, set-id stripping, refusal of writes
 *    to multiply-linked files);
 *  - not a place fsgate-run mounts itself (/proc, /dev, /tmp, /sys);
 *  - no host mount point below (a bind is not recursive; a directory with
 *    one below is split into its children);
 *  - on a disk-like file system (never procfs, sysfs, devtmpfs, cgroup,
 *    FUSE, ...), told by the mount the directory is on (its statx mount
 *    id: at a point with stacked mounts the path names the one listed
 *    last, not the one on top);
 *  - no object the view denies by identity reachable below: another name
 *    of a literally denied file (a hard link, or the same directory seen
 *    through another mount of its file system), or of a multiply-linked
 *    file below a literally denied directory (policy/denied.c). File
 *    systems are told apart by their super block (the mountinfo device of
 *    the mount an object is on), not by st_dev, which differs between
 *    btrfs subvolumes and between the layers of an overlayfs: nothing is
 *    bound on the file system of a denied file with more than one link or
 *    of a denied directory holding one, and otherwise a denied object is
 *    reachable below a directory when its place inside the file system is
 *    below the directory's; when two objects share a device but not a
 *    super block, where the other names are cannot be told, and the
 *    directory is not bound.
 */
#include "config.h"

#include "policy/policy-private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* ---- The automaton test ------------------------------------------------ */

static gboolean
node_blocks (const FsgNode *node, FsgAccess access)
{
  if (node->deny_read != NULL || node->root != NULL || node->alias != NULL)
    return TRUE;
  return access == FSG_ACCESS_RW && node->deny_write != NULL;
}

static void
visit (const FsgNode *node, GHashTable *seen, GPtrArray *queue)
{
  if (node != NULL && g_hash_table_add (seen, (gpointer) node))
    g_ptr_array_add (queue, (gpointer) node);
}

gboolean
fsg_path_state_uniform (const FsgPolicy *policy, const FsgPathState *state)
{
  g_autoptr(GHashTable) seen = NULL;
  g_autoptr(GPtrArray) queue = NULL;
  FsgAccess access = state->access;

  if ((access != FSG_ACCESS_RO && access != FSG_ACCESS_RW) ||
      (state->flags & (FSG_STATE_SYNTHETIC | FSG_STATE_ALIAS)))
    return FALSE;

  seen = g_hash_table_new (NULL, NULL);
  queue = g_ptr_array_new ();
  /* Nodes live below: every successor of a live node; a "**" node also
   * stays live itself, so its own rule ends apply below too. */
  {
    const FsgNode *start[1] = { policy->floating };

    for (guint i = 0; i < 1 + (state->set ? state->set->n : 0); i++)
      {
        const FsgNode *node = i == 0 ? start[0] : state->set->nodes[i - 1];

        if (node->recursive)
          visit (node, seen, queue);
        else
          {
            /* a non-recursive live node decided this path; only its
             * successors matter below */
            GHashTableIter iter;
            gpointer key, value;

            if (node->lit)
              {
                g_hash_table_iter_init (&iter, node->lit);
                while (g_hash_table_iter_next (&iter, &key, &value))
                  visit (value, seen, queue);
              }
            for (guint g = 0; node->globs && g < node->globs->len; g++)
              visit (((FsgGlobEdge *) node->globs->pdata[g])->node, seen, queue);
            visit (node->star, seen, queue);
            visit (node->pkg_star, seen, queue);
          }
      }
  }
  for (guint q = 0; q < queue->len; q++)
    {
      const FsgNode *node = queue->pdata[q];
      GHashTableIter iter;
      gpointer key, value;

      if (node_blocks (node, access))
        return FALSE;
      if (node->lit)
        {
          g_hash_table_iter_init (&iter, node->lit);
          while (g_hash_table_iter_next (&iter, &key, &value))
            visit (value, seen, queue);
        }
      for (guint g = 0; node->globs && g < node->globs->len; g++)
        visit (((FsgGlobEdge *) node->globs->pdata[g])->node, seen, queue);
      visit (node->star, seen, queue);
      visit (node->pkg_star, seen, queue);
    }
  return TRUE;
}

/* ---- The plan ---------------------------------------------------------- */

/* Where an object lives: its st_dev, its mount's super block, and its place
 * inside that file system (the mount's root plus the path below the mount
 * point). */
typedef struct
{
  guint64 st_dev;
  guint64 sb_dev; /* 0: the mount is not in mountinfo */
  char *place;    /* NULL: unknown */
  guint mnt_id;   /* 0: unknown (no STATX_MNT_ID) */
} Ident;

typedef struct
{
  char *path;
  gboolean is_dir;
  guint64 nlink;
  Ident id;
} DenyTarget;

typedef struct
{
  char *path;
  guint n_linked;
  Ident id;
} LinkedDir;

/* A directory met on the walk. */
typedef struct
{
  guint64 ino, nlink;
  Ident id;
} DirInfo;

typedef struct
{
  const FsgPolicy *policy;
  GArray *mounts;  /* FsgMount */
  GArray *targets; /* DenyTarget */
  GArray *linked;  /* LinkedDir */
  GPtrArray *out;  /* FsgHybridTree* */
  const char *const *holes; /* the holes in effect strictly below the tree walked */
  guint dirs_read;
  GHashTable *uniform_sets[2]; /* ro, rw: interned set -> 1 uniform, 2 not */
} Plan;

static void
ident_clear (Ident *id)
{
  g_clear_pointer (&id->place, g_free);
}

/* The place of @path inside the file system of @m, or NULL. */
static char *
fs_place (const FsgMount *m, const char *path)
{
  const char *rest;

  if (m == NULL || !fsg_path_within (path, m->point))
    return NULL;
  rest = path + (strcmp (m->point, "/") == 0 ? 0 : strlen (m->point));
  if (*rest == '\0')
    return g_strdup (m->root);
  return strcmp (m->root, "/") == 0 ? g_strdup (rest) : g_strconcat (m->root, rest, NULL);
}

/* statx of @name in @dirfd (AT_SYMLINK_NOFOLLOW; "" with AT_EMPTY_PATH),
 * which is @path on the host, and its Ident. */
static gboolean
ident_at (Plan *plan, int dirfd, const char *name, int flags, const char *path,
          struct statx *stx, Ident *out)
{
  const FsgMount *m = NULL;

  memset (out, 0, sizeof *out);
  if (statx (dirfd, name, flags | AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT,
             STATX_TYPE | STATX_INO | STATX_NLINK | STATX_MNT_ID, stx) < 0)
    return FALSE;
  out->st_dev = makedev (stx->stx_dev_major, stx->stx_dev_minor);
  if (stx->stx_mask & STATX_MNT_ID)
    {
      out->mnt_id = (guint) stx->stx_mnt_id;
      m = fsg_mountinfo_find (plan->mounts, out->mnt_id);
    }
  if (m != NULL)
    {
      out->sb_dev = m->dev;
      out->place = fs_place (m, path);
    }
  return TRUE;
}

/* Whether @a and @b can be one file system (a hard link can join them), and
 * whether their places then compare (*out_placeable). */
static gboolean
same_fs (const Ident *a, const Ident *b, gboolean *out_placeable)
{
  *out_placeable = FALSE;
  if (a->sb_dev != 0 && a->sb_dev == b->sb_dev)
    {
      *out_placeable = a->place != NULL && b->place != NULL;
      return TRUE;
    }
  return a->st_dev == b->st_dev || (a->sb_dev != 0 && a->sb_dev == b->st_dev) ||
         (b->sb_dev != 0 && a->st_dev == b->sb_dev);
}

/* fsg_path_state_uniform(), once per interned set and access. */
static gboolean
plan_uniform (Plan *plan, const FsgPathState *state)
{
  GHashTable *cache;
  gpointer key = (gpointer) state->set;
  guint v;

  if ((state->access != FSG_ACCESS_RO && state->access != FSG_ACCESS_RW) ||
      (state->flags & (FSG_STATE_SYNTHETIC | FSG_STATE_ALIAS)))
    return FALSE;
  cache = plan->uniform_sets[state->access == FSG_ACCESS_RW];
  if (key == NULL)
    key = &plan->uniform_sets; /* the empty set */
  v = GPOINTER_TO_UINT (g_hash_table_lookup (cache, key));
  if (v == 0)
    {
      v = fsg_path_state_uniform (plan->policy, state) ? 1 : 2;
      g_hash_table_insert (cache, key, GUINT_TO_POINTER (v));
    }
  return v == 1;
}

#define MAX_DIRS_READ 256 /* directories listed on the way (ancestors of rules) */
#define MAX_DEPTH 24
#define MAX_SPLIT 64 /* children bound in place of one directory with a mount below */

void
fsg_hybrid_tree_free (FsgHybridTree *tree)
{
  if (tree == NULL)
    return;
  g_free (tree->path);
  g_free (tree->served_why);
  g_strfreev (tree->holes);
  g_free (tree);
}

static void
add_tree (Plan *plan, const char *path, const FsgPathState *state, const DirInfo *info,
          char *why)
{
  FsgHybridTree *t = g_new0 (FsgHybridTree, 1);

  t->path = g_strdup (path);
  t->access = state->access;
  t->rule = state->rule;
  t->dev = info->id.st_dev;
  t->ino = info->ino;
  t->nlink = info->nlink;
  t->served_why = why;
  g_ptr_array_add (plan->out, t);
}

static char *
join (const char *dir, const char *name)
{
  return strcmp (dir, "/") == 0 ? g_strconcat ("/", name, NULL) : g_strconcat (dir, "/", name, NULL);
}

/* The hole of the tree walked that holds @path, or NULL. */
static const char *
hole_holding (const Plan *plan, const char *path)
{
  for (guint i = 0; plan->holes[i] != NULL; i++)
    if (fsg_path_within (path, plan->holes[i]))
      return plan->holes[i];
  return NULL;
}

/* The holes of the tree walked strictly below @path (NULL when none). */
static char **
holes_below (const Plan *plan, const char *path)
{
  GPtrArray *out = NULL;

  for (guint i = 0; plan->holes[i] != NULL; i++)
    if (fsg_path_within (plan->holes[i], path) && strcmp (plan->holes[i], path) != 0)
      {
        if (out == NULL)
          out = g_ptr_array_new ();
        g_ptr_array_add (out, g_strdup (plan->holes[i]));
      }
  if (out == NULL)
    return NULL;
  g_ptr_array_add (out, NULL);
  return (char **) g_ptr_array_free (out, FALSE);
}

/* Why the view must serve uniform @path after all, or NULL. */
static char *
identity_conflict (Plan *plan, const DirInfo *info)
{
  gboolean placeable;

  for (guint i = 0; i < plan->targets->len; i++)
    {
      const DenyTarget *t = &g_array_index (plan->targets, DenyTarget, i);

      if (!same_fs (&t->id, &info->id, &placeable))
        continue;
      if (!t->is_dir && t->nlink > 1)
        return g_strdup_printf ("on the file system of denied '%s', which has %" G_GUINT64_FORMAT
                                " links (another could be below)", t->path, t->nlink);
      if (!placeable)
        return g_strdup_printf ("on the device of denied '%s' through another file system "
                                "(overlayfs or btrfs): where its other names are cannot be told",
                                t->path);
      if (fsg_path_within (t->id.place, info->id.place))
        return g_strdup_printf ("denied '%s' is reachable below it (the same file system "
                                "directory)", t->path);
    }
  for (guint i = 0; i < plan->linked->len; i++)
    {
      const LinkedDir *d = &g_array_index (plan->linked, LinkedDir, i);

      if (same_fs (&d->id, &info->id, &placeable))
        return g_strdup_printf ("on the file system of denied '%s', which holds %u file%s with "
                                "more than one link (another name could be below)",
                                d->path, d->n_linked, d->n_linked == 1 ? "" : "s");
    }
  return NULL;
}

/* statx of the subdirectory @name of @dfd (@path on the host); FALSE when
 * it is gone or no directory. */
static gboolean
dir_info_at (Plan *plan, int dfd, const char *name, int flags, const char *path, DirInfo *out)
{
  struct statx stx;

  if (!ident_at (plan, dfd, name, flags, path, &stx, &out->id))
    return FALSE;
  if (!S_ISDIR (stx.stx_mode))
    {
      ident_clear (&out->id);
      return FALSE;
    }
  out->ino = stx.stx_ino;
  out->nlink = stx.stx_nlink;
  return TRUE;
}

static gboolean
mount_below (GArray *mounts, const char *path)
{
  for (guint i = 0; i < mounts->len; i++)
    {
      const FsgMount *m = &g_array_index (mounts, FsgMount, i);

      if (fsg_path_within (m->point, path) && strcmp (m->point, path) != 0)
        return TRUE;
    }
  return FALSE;
}

/* File systems whose bind shows files and nothing else. */
static gboolean
disk_like (const char *fstype)
{
  static const char *const ok[] = { "ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "overlay",
                                    "squashfs", "erofs", "vfat", "exfat", "f2fs", "zfs",
                                    "iso9660", "ramfs", "ntfs3", "jfs", "reiserfs", NULL };

  for (guint i = 0; ok[i]; i++)
    if (strcmp (ok[i], fstype) == 0)
      return TRUE;
  return FALSE;
}

static void place_uniform (Plan *plan, int dfd, const char *path, const FsgPathState *state,
                           const DirInfo *info, guint depth);
static void walk (Plan *plan, int dfd, const char *path, const FsgPathState *state, guint depth);

/* Each subdirectory of @path (open as @dfd): placed when @uniform_parent
 * or uniform itself, else walked. */
static void
each_subdir (Plan *plan, int dfd, const char *path, const FsgPathState *state, guint depth,
             gboolean uniform_parent)
{
  DIR *dir;
  struct dirent *de;
  int fd;

  if (depth >= MAX_DEPTH || plan->dirs_read >= MAX_DIRS_READ)
    return;
  fd = openat (dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 || (dir = fdopendir (fd)) == NULL)
    {
      if (fd >= 0)
        close (fd);
      return;
    }
  plan->dirs_read++;
  while ((de = readdir (dir)) != NULL)
    {
      g_autofree char *child_path = NULL;
      FsgPathState child;
      gboolean uniform;
      DirInfo info;
      struct stat cst;
      int cfd;

      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
        continue;
      child = fsg_policy_child_state (plan->policy, state, de->d_name);
      if (child.access < FSG_ACCESS_RO)
        continue;
      child_path = join (path, de->d_name);
      if (!dir_info_at (plan, dfd, de->d_name, 0, child_path, &info))
        continue;
      uniform = uniform_parent || plan_uniform (plan, &child);
      if (uniform && !mount_below (plan->mounts, child_path))
        {
          /* the common case: nothing below to look at */
          place_uniform (plan, -1, child_path, &child, &info, depth + 1);
          ident_clear (&info.id);
          continue;
        }
      cfd = openat (dfd, de->d_name, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
      if (cfd >= 0 && fstat (cfd, &cst) == 0 && S_ISDIR (cst.st_mode) &&
          (guint64) cst.st_ino == info.ino)
        {
          if (uniform)
            place_uniform (plan, cfd, child_path, &child, &info, depth + 1);
          else
            walk (plan, cfd, child_path, &child, depth + 1);
        }
      if (cfd >= 0)
        close (cfd);
      ident_clear (&info.id);
    }
  closedir (dir);
}

static void
place_uniform (Plan *plan, int dfd, const char *path, const FsgPathState *state,
               const DirInfo *info, guint depth)
{
  const FsgMount *m;
  const char *hole;
  char *why;

  /* fsgate-run's own mounts (fsg_policy_run_place(); its resolver
   * directory is denied, so never inside a uniform tree) */
  if (fsg_path_within (path, "/tmp") || fsg_path_within (path, "/proc") ||
      fsg_path_within (path, "/sys") || fsg_path_within (path, "/dev"))
    return add_tree (plan, path, state, info, g_strdup ("fsgate-run mounts its own there"));
  if ((hole = hole_holding (plan, path)) != NULL)
    return add_tree (plan, path, state, info,
                     g_strdup_printf ("in %s, which the administrator fills (sockets of software "
                                      "built from source): name it in hybrid-trees to bind it",
                                      hole));
  if (state->access != FSG_ACCESS_RO)
    return add_tree (plan, path, state, info,
                     g_strdup ("writable (the view records, refuses or protects some writes)"));
  if (mount_below (plan->mounts, path))
    {
      guint before = plan->out->len;

      /* bind the children instead; the directory itself stays served */
      if (dfd >= 0)
        each_subdir (plan, dfd, path, state, depth, TRUE);
      if (plan->out->len - before > MAX_SPLIT)
        {
          while (plan->out->len > before)
            g_ptr_array_remove_index (plan->out, plan->out->len - 1);
          add_tree (plan, path, state, info,
                    g_strdup ("host mounts below, and too many directories beside them"));
        }
      return;
    }
  /* the mount the directory is on, by id: where mounts are stacked at one
   * point, the path would name the one listed last */
  m = info->id.mnt_id != 0 ? fsg_mountinfo_find (plan->mounts, info->id.mnt_id)
                           : fsg_mountinfo_containing (plan->mounts, path);
  if (m == NULL || !disk_like (m->fstype))
    return add_tree (plan, path, state, info,
                     g_strdup_printf ("on a %s mount (only disk file systems are bound)",
                                      m ? m->fstype : "unknown"));
  why = identity_conflict (plan, info);
  add_tree (plan, path, state, info, why);
  if (why == NULL)
    ((FsgHybridTree *) plan->out->pdata[plan->out->len - 1])->holes = holes_below (plan, path);
}

/* A directory that is not uniform: look at its subdirectories when a
 * rule can still end somewhere below one of them but not all of them. */
static void
walk (Plan *plan, int dfd, const char *path, const FsgPathState *state, guint depth)
{
  gboolean fresh = FALSE;

  if (state->access < FSG_ACCESS_RO || (state->flags & FSG_STATE_ALIAS))
    return;
  /* Only "**" nodes live (other than the floating one): every
   * subdirectory keeps them and stays non-uniform. */
  for (guint i = 0; state->set && i < state->set->n; i++)
    if (!state->set->nodes[i]->recursive)
      fresh = TRUE;
  if (!fresh)
    return;
  if (state->flags & FSG_STATE_SYNTHETIC)
    {
      g_autofree const char **names = fsg_policy_synthetic_children (plan->policy, state);

      for (guint i = 0; names[i]; i++)
        {
          FsgPathState child = fsg_policy_child_state (plan->policy, state, names[i]);
          g_autofree char *child_path = join (path, names[i]);
          DirInfo info;
          int cfd;

          if (depth >= MAX_DEPTH)
            return;
          cfd = openat (dfd, names[i], O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
          if (cfd < 0)
            continue;
          if (dir_info_at (plan, cfd, "", AT_EMPTY_PATH, child_path, &info))
            {
              if (plan_uniform (plan, &child))
                place_uniform (plan, cfd, child_path, &child, &info, depth + 1);
              else
                walk (plan, cfd, child_path, &child, depth + 1);
              ident_clear (&info.id);
            }
          close (cfd);
        }
      return;
    }
  each_subdir (plan, dfd, path, state, depth, FALSE);
}

static void
deny_target_clear (gpointer data)
{
  DenyTarget *t = data;

  g_free (t->path);
  ident_clear (&t->id);
}

static void
linked_dir_clear (gpointer data)
{
  LinkedDir *d = data;

  g_free (d->path);
  ident_clear (&d->id);
}

static guint
path_depth (const char *path)
{
  guint d = 0;

  for (const char *p = path; *p; p++)
    d += *p == '/';
  return strcmp (path, "/") == 0 ? 0 : d;
}

/* Binding first: shallow trees, then those with more subdirectories. */
static int
by_worth (gconstpointer a, gconstpointer b)
{
  const FsgHybridTree *x = *(FsgHybridTree *const *) a, *y = *(FsgHybridTree *const *) b;
  guint dx = path_depth (x->path), dy = path_depth (y->path);

  if (dx != dy)
    return dx < dy ? -1 : 1;
  if (x->nlink != y->nlink)
    return x->nlink > y->nlink ? -1 : 1;
  return strcmp (x->path, y->path);
}

guint
fsg_policy_hybrid_max_binds (void)
{
  const char *v = g_getenv ("FSGATE_HYBRID_MAX");
  guint64 n;

  if (v != NULL && g_ascii_string_to_unsigned (v, 10, 0, 100000, &n, NULL))
    return (guint) n;
  return FSG_HYBRID_DEFAULT_MAX;
}

static int
by_path (gconstpointer a, gconstpointer b)
{
  const FsgHybridTree *x = *(FsgHybridTree *const *) a, *y = *(FsgHybridTree *const *) b;

  return strcmp (x->path, y->path);
}

static int
by_string (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

/* FSGATE_HYBRID: 1 for on, 0 for off, -1 when unset, -2 when not a word we know. */
static int
hybrid_env (void)
{
  static const char *const on[] = { "1", "on", "true", "yes" };
  static const char *const off[] = { "0", "off", "false", "no" };
  const char *v = g_getenv ("FSGATE_HYBRID");

  if (v == NULL || v[0] == '\0')
    return -1;
  for (guint i = 0; i < G_N_ELEMENTS (on); i++)
    {
      if (g_ascii_strcasecmp (v, on[i]) == 0)
        return 1;
      if (g_ascii_strcasecmp (v, off[i]) == 0)
        return 0;
    }
  return -2;
}

gboolean
fsg_policy_hybrid_env_check (GError **error)
{
  if (hybrid_env () != -2)
    return TRUE;
  g_set_error (error, FSG_POLICY_ERROR, FSG_POLICY_ERROR_INVALID_VALUE,
               "FSGATE_HYBRID='%s' is not one of 0, off, false, no (the hybrid view off) or "
               "1, on, true, yes (on where the policy allows it)", g_getenv ("FSGATE_HYBRID"));
  return FALSE;
}

gboolean
fsg_policy_hybrid_enabled (const FsgPolicy *policy, const char **out_why_off)
{
  const char *why = NULL;
  int env = hybrid_env ();

  if (env == 0)
    why = "FSGATE_HYBRID=0";
  else if (env == -2)
    why = "FSGATE_HYBRID has a value that is neither on nor off";
  else if (!policy->hybrid)
    why = "the policy says hybrid = off";
  if (out_why_off != NULL)
    *out_why_off = why;
  return why == NULL;
}

const char *const fsg_policy_hybrid_holes[] = {
  "/usr/local",
  NULL,
};

static gboolean
is_system_tree (const char *path)
{
  for (guint i = 0; fsg_policy_secret_pruned[i] != NULL; i++)
    if (strcmp (fsg_policy_secret_pruned[i], path) == 0)
      return TRUE;
  return FALSE;
}

/* Both lists, under denied_lock. */
static void
ensure_hybrid_lists (FsgPolicy *p)
{
  GPtrArray *all, *out, *holes;

  if (p->hybrid_tree_list != NULL)
    return;
  holes = g_ptr_array_new ();
  for (guint h = 0; fsg_policy_hybrid_holes[h] != NULL; h++)
    {
      const char *hole = fsg_policy_hybrid_holes[h];
      gboolean named = FALSE;

      for (guint i = 0; i < p->hybrid_trees->len && !named; i++)
        {
          const char *t = p->hybrid_trees->pdata[i];

          named = strcmp (t, hole) == 0 || (fsg_path_within (hole, t) && !is_system_tree (t));
        }
      if (!named)
        g_ptr_array_add (holes, g_strdup (hole));
    }
  g_ptr_array_add (holes, NULL);
  p->hybrid_hole_list = (char **) g_ptr_array_free (holes, FALSE);

  all = g_ptr_array_new ();
  out = g_ptr_array_new ();
  for (guint i = 0; fsg_policy_secret_pruned[i] != NULL; i++)
    g_ptr_array_add (all, (gpointer) fsg_policy_secret_pruned[i]);
  for (guint i = 0; i < p->hybrid_trees->len; i++)
    g_ptr_array_add (all, p->hybrid_trees->pdata[i]);
  g_ptr_array_sort (all, by_string);
  /* a tree inside another one listed is walked with it, unless a hole
   * lies between them (/usr/local/cuda below /usr) */
  for (guint i = 0; i < all->len; i++)
    {
      const char *t = all->pdata[i];
      const char *last = out->len ? out->pdata[out->len - 1] : NULL;
      gboolean inside = last != NULL && fsg_path_within (t, last);

      for (guint h = 0; inside && p->hybrid_hole_list[h] != NULL; h++)
        if (fsg_path_within (t, p->hybrid_hole_list[h]) && !fsg_path_within (last, p->hybrid_hole_list[h]))
          inside = FALSE;
      if (!inside && (last == NULL || strcmp (t, last) != 0))
        g_ptr_array_add (out, g_strdup (t));
    }
  g_ptr_array_add (out, NULL);
  g_ptr_array_unref (all);
  p->hybrid_tree_list = (char **) g_ptr_array_free (out, FALSE);
}

/* @policy with both lists made (once; they never change after). */
static const FsgPolicy *
with_hybrid_lists (const FsgPolicy *policy)
{
  FsgPolicy *p = (FsgPolicy *) policy;

  g_mutex_lock (&p->denied_lock);
  ensure_hybrid_lists (p);
  g_mutex_unlock (&p->denied_lock);
  return p;
}

const char *const *
fsg_policy_hybrid_trees (const FsgPolicy *policy)
{
  return (const char *const *) with_hybrid_lists (policy)->hybrid_tree_list;
}

const char *const *
fsg_policy_hybrid_hole_list (const FsgPolicy *policy)
{
  return (const char *const *) with_hybrid_lists (policy)->hybrid_hole_list;
}

static int
open_no_symlinks (const char *path)
{
  struct open_how how = { 0 };

  how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  return (int) syscall (SYS_openat2, AT_FDCWD, path, &how, sizeof how);
}

static void
add_deny_targets (Plan *plan)
{
  const char *const *denied = fsg_policy_literal_deny_read (plan->policy);
  const FsgDeniedLinks *links = fsg_policy_denied_links (plan->policy);

  for (guint i = 0; denied != NULL && denied[i] != NULL; i++)
    {
      DenyTarget t = { 0 };
      struct statx stx;

      /* as the daemon does: the object at the path now, not followed */
      if (!ident_at (plan, AT_FDCWD, denied[i], 0, denied[i], &stx, &t.id))
        continue;
      t.path = g_strdup (denied[i]);
      t.is_dir = S_ISDIR (stx.stx_mode);
      t.nlink = stx.stx_nlink;
      g_array_append_val (plan->targets, t);
    }
  for (guint i = 0; i < links->dirs->len; i++)
    {
      const FsgLinkedDir *ld = &g_array_index (links->dirs, FsgLinkedDir, i);
      LinkedDir d = { 0 };
      struct statx stx;

      if (!ident_at (plan, AT_FDCWD, ld->path, 0, ld->path, &stx, &d.id))
        {
          /* gone since the scan: still keep its file system out */
          d.id.st_dev = ld->dev;
        }
      d.path = g_strdup (ld->path);
      d.n_linked = ld->n_linked;
      g_array_append_val (plan->linked, d);
    }
}

GPtrArray *
fsg_policy_hybrid_plan (const FsgPolicy *policy, const char *mountinfo)
{
  Plan plan = { 0 };
  const char *const *trees = fsg_policy_hybrid_trees (policy);
  const char *const *all_holes = fsg_policy_hybrid_hole_list (policy);

  plan.policy = policy;
  plan.uniform_sets[0] = g_hash_table_new (NULL, NULL);
  plan.uniform_sets[1] = g_hash_table_new (NULL, NULL);
  plan.out = g_ptr_array_new_with_free_func ((GDestroyNotify) fsg_hybrid_tree_free);
  plan.mounts = fsg_mountinfo_parse (mountinfo);
  plan.targets = g_array_new (FALSE, TRUE, sizeof (DenyTarget));
  g_array_set_clear_func (plan.targets, deny_target_clear);
  plan.linked = g_array_new (FALSE, TRUE, sizeof (LinkedDir));
  g_array_set_clear_func (plan.linked, linked_dir_clear);
  add_deny_targets (&plan);

  for (guint i = 0; trees[i] != NULL; i++)
    {
      FsgPathState state = fsg_policy_walk (policy, trees[i]);
      g_autoptr(GPtrArray) tree_holes = g_ptr_array_new ();
      DirInfo info;
      int fd;

      for (guint h = 0; all_holes[h] != NULL; h++)
        if (fsg_path_within (all_holes[h], trees[i]) && strcmp (all_holes[h], trees[i]) != 0)
          g_ptr_array_add (tree_holes, (gpointer) all_holes[h]);
      g_ptr_array_add (tree_holes, NULL);
      plan.holes = (const char *const *) tree_holes->pdata;

      if (state.access < FSG_ACCESS_RO || strcmp (trees[i], "/") == 0)
        continue;
      /* a symlink (/bin -> usr/bin) is served by the view, its target is
       * another tree */
      fd = open_no_symlinks (trees[i]);
      if (fd < 0)
        continue;
      if (dir_info_at (&plan, fd, "", AT_EMPTY_PATH, trees[i], &info))
        {
          if (plan_uniform (&plan, &state))
            place_uniform (&plan, fd, trees[i], &state, &info, path_depth (trees[i]));
          else
            walk (&plan, fd, trees[i], &state, path_depth (trees[i]));
          ident_clear (&info.id);
        }
      close (fd);
    }
  g_array_unref (plan.mounts);
  g_array_unref (plan.targets);
  g_array_unref (plan.linked);
  g_hash_table_unref (plan.uniform_sets[0]);
  g_hash_table_unref (plan.uniform_sets[1]);
  /* Each bind costs about as much as two or three lookups through the
   * daemon (a lookup of its place in the view, the mount, its share of the
   * namespace teardown), so only the trees likely to see more are bound. */
  {
    guint max = fsg_policy_hybrid_max_binds (), n = 0;

    g_ptr_array_sort (plan.out, by_worth);
    for (guint i = 0; i < plan.out->len; i++)
      {
        FsgHybridTree *t = plan.out->pdata[i];

        if (t->served_why == NULL && ++n > max)
          t->served_why = g_strdup_printf ("beyond the first %u binds (FSGATE_HYBRID_MAX)", max);
      }
  }
  g_ptr_array_sort (plan.out, by_path);
  return plan.out;
}

const FsgHybridTree *
fsg_hybrid_plan_find (GPtrArray *plan, const char *path)
{
  for (guint i = 0; plan != NULL && i < plan->len; i++)
    {
      const FsgHybridTree *t = plan->pdata[i];
      gboolean in_hole = FALSE;

      if (t->served_why != NULL || !fsg_path_within (path, t->path))
        continue;
      for (guint h = 0; t->holes != NULL && t->holes[h] != NULL; h++)
        in_hole |= fsg_path_within (path, t->holes[h]);
      if (!in_hole)
        return t;
    }
  return NULL;
}
