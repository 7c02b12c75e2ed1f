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
 * host straight into the view (runner/hybrid.c), where the view would have
 * answered every lookup below them the same way. fsg_policy_hybrid_plan()
 * finds them by walking the host from "/" through the directories that are
 * not uniform (few: the ancestors of rules), and keeps only those a plain,
 * non-recursive bind shows exactly as the view would:
 *  - read-only (a writable bind would lose what the daemon adds to writes:
 *    denial records, git protection, refusal of writes to multiply-linked
 *    files);
 *  - not a place fsgate-run mounts itself (/proc, /dev, /tmp, /sys, the
 *    resolver directory);
 *  - no host mount point below (a bind is not recursive; a directory with
 *    one below is split into its children);
 *  - on a disk-like file system (never procfs, sysfs, devtmpfs, cgroup,
 *    FUSE, ...);
 *  - no literally denied file reachable by identity: the view also denies
 *    another name of a denied file (a hard link, or the same directory
 *    seen through another mount of its file system). A directory on the
 *    same file system as a denied non-directory with more than one link is
 *    not bound; otherwise the denied object is reachable below it only if
 *    its place inside the file system is below the directory's.
 */
#include "config.h"

#include "policy/policy-private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* ---- Host mounts ------------------------------------------------------- */

typedef struct
{
  char *point;  /* mount point */
  char *root;   /* the directory of its file system it shows */
  char *fstype;
} Mount;

static void
mount_clear (gpointer data)
{
  Mount *m = data;

  g_free (m->point);
  g_free (m->root);
  g_free (m->fstype);
}

static char *
unescape_octal (const char *s)
{
  GString *out = g_string_new (NULL);

  for (const char *p = s; *p; p++)
    {
      if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' &&
          p[3] >= '0' && p[3] <= '7')
        {
          g_string_append_c (out, (char) (((p[1] - '0') << 6) | ((p[2] - '0') << 3) | (p[3] - '0')));
          p += 3;
        }
      else
        g_string_append_c (out, *p);
    }
  return g_string_free (out, FALSE);
}

static GArray *
parse_mounts (const char *mountinfo)
{
  GArray *mounts = g_array_new (FALSE, TRUE, sizeof (Mount));
  g_auto (GStrv) lines = g_strsplit (mountinfo ? mountinfo : "", "\n", -1);

  g_array_set_clear_func (mounts, mount_clear);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_auto (GStrv) f = g_strsplit (lines[i], " ", -1);
      guint n = g_strv_length (f);
      guint dash = 0;
      Mount m;

      for (guint j = 6; j < n; j++)
        if (strcmp (f[j], "-") == 0)
          {
            dash = j;
            break;
          }
      if (n < 7 || dash == 0 || dash + 1 >= n || f[4][0] != '/')
        continue;
      m.point = unescape_octal (f[4]);
      m.root = unescape_octal (f[3]);
      m.fstype = g_strdup (f[dash + 1]);
      g_array_append_val (mounts, m);
    }
  return mounts;
}

static gboolean
within (const char *path, const char *dir)
{
  gsize n = strlen (dir);

  if (strcmp (dir, "/") == 0)
    return path[0] == '/';
  return strncmp (path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* The mount @path is on: the deepest mount point at or above it, the last
 * listed when several are stacked there. */
static const Mount *
containing (GArray *mounts, const char *path)
{
  const Mount *best = NULL;

  for (guint i = 0; i < mounts->len; i++)
    {
      const Mount *m = &g_array_index (mounts, Mount, i);

      if (within (path, m->point) && (best == NULL || strlen (m->point) >= strlen (best->point)))
        best = m;
    }
  return best;
}

static gboolean
mount_below (GArray *mounts, const char *path)
{
  for (guint i = 0; i < mounts->len; i++)
    {
      const Mount *m = &g_array_index (mounts, Mount, i);

      if (within (m->point, path) && strcmp (m->point, path) != 0)
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

/* Where @path lies inside its file system: the mount's root plus the rest. */
static char *
fs_place (GArray *mounts, const char *path)
{
  const Mount *m = containing (mounts, path);
  const char *rest;

  if (m == NULL)
    return g_strdup (path);
  rest = path + (strcmp (m->point, "/") == 0 ? 0 : strlen (m->point));
  if (*rest == '\0')
    return g_strdup (m->root);
  return strcmp (m->root, "/") == 0 ? g_strdup (rest) : g_strconcat (m->root, rest, NULL);
}

/* ---- The plan ---------------------------------------------------------- */

typedef struct
{
  char *path;
  struct stat st;
  char *place; /* inside its file system */
} DenyTarget;

typedef struct
{
  const FsgPolicy *policy;
  GArray *mounts;
  GArray *targets; /* DenyTarget */
  GPtrArray *out;  /* FsgHybridTree* */
  guint dirs_read;
  GHashTable *uniform_sets[2]; /* ro, rw: interned set -> 1 uniform, 2 not */
} Plan;

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
  g_free (tree);
}

static void
add_tree (Plan *plan, const char *path, const FsgPathState *state, const struct stat *st,
          char *why)
{
  FsgHybridTree *t = g_new0 (FsgHybridTree, 1);

  t->path = g_strdup (path);
  t->access = state->access;
  t->rule = state->rule;
  t->dev = st->st_dev;
  t->ino = st->st_ino;
  t->nlink = st->st_nlink;
  t->served_why = why;
  g_ptr_array_add (plan->out, t);
}

static char *
join (const char *dir, const char *name)
{
  return strcmp (dir, "/") == 0 ? g_strconcat ("/", name, NULL) : g_strconcat (dir, "/", name, NULL);
}

/* Why the view must serve uniform @path after all, or NULL. */
static char *
identity_conflict (Plan *plan, const char *path, const struct stat *st)
{
  g_autofree char *place = NULL;

  for (guint i = 0; i < plan->targets->len; i++)
    {
      const DenyTarget *t = &g_array_index (plan->targets, DenyTarget, i);

      if (t->st.st_dev != st->st_dev)
        continue;
      if (!S_ISDIR (t->st.st_mode) && t->st.st_nlink > 1)
        return g_strdup_printf ("on the file system of denied '%s', which has %lu links "
                                "(another could be below)",
                                t->path, (unsigned long) t->st.st_nlink);
      if (place == NULL)
        place = fs_place (plan->mounts, path);
      if (within (t->place, place))
        return g_strdup_printf ("denied '%s' is reachable below it (the same file system "
                                "directory)", t->path);
    }
  return NULL;
}

static void place_uniform (Plan *plan, int dfd, const char *path, const FsgPathState *state,
                           const struct stat *st, guint depth);
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
      struct stat cst;
      int cfd;

      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
        continue;
      child = fsg_policy_child_state (plan->policy, state, de->d_name);
      if (child.access < FSG_ACCESS_RO)
        continue;
      if (fstatat (dfd, de->d_name, &cst, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR (cst.st_mode))
        continue;
      child_path = join (path, de->d_name);
      uniform = uniform_parent || plan_uniform (plan, &child);
      if (uniform && !mount_below (plan->mounts, child_path))
        {
          /* the common case: nothing below to look at */
          place_uniform (plan, -1, child_path, &child, &cst, depth + 1);
          continue;
        }
      cfd = openat (dfd, de->d_name, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
      if (cfd < 0)
        continue;
      if (fstat (cfd, &cst) == 0 && S_ISDIR (cst.st_mode))
        {
          if (uniform)
            place_uniform (plan, cfd, child_path, &child, &cst, depth + 1);
          else
            walk (plan, cfd, child_path, &child, depth + 1);
        }
      close (cfd);
    }
  closedir (dir);
}

static void
place_uniform (Plan *plan, int dfd, const char *path, const FsgPathState *state,
               const struct stat *st, guint depth)
{
  const Mount *m;
  char *why;

  /* fsgate-run's own mounts (fsg_policy_run_place(); its resolver
   * directory is denied, so never inside a uniform tree) */
  if (within (path, "/tmp") || within (path, "/proc") || within (path, "/sys") ||
      within (path, "/dev"))
    return add_tree (plan, path, state, st, g_strdup ("fsgate-run mounts its own there"));
  if (state->access != FSG_ACCESS_RO)
    return add_tree (plan, path, state, st,
                     g_strdup ("writable (the view records, refuses or protects some writes)"));
  if (mount_below (plan->mounts, path))
    {
      guint before = plan->out->len;

      /* bind the children instead; the directory itself stays served */
      each_subdir (plan, dfd, path, state, depth, TRUE);
      if (plan->out->len - before > MAX_SPLIT)
        {
          while (plan->out->len > before)
            g_ptr_array_remove_index (plan->out, plan->out->len - 1);
          add_tree (plan, path, state, st,
                    g_strdup ("host mounts below, and too many directories beside them"));
        }
      return;
    }
  m = containing (plan->mounts, path);
  if (m == NULL || !disk_like (m->fstype))
    return add_tree (plan, path, state, st,
                     g_strdup_printf ("on a %s mount (only disk file systems are bound)",
                                      m ? m->fstype : "unknown"));
  why = identity_conflict (plan, path, st);
  add_tree (plan, path, state, st, why);
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
          struct stat cst;
          int cfd;

          if (depth >= MAX_DEPTH)
            return;
          cfd = openat (dfd, names[i], O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
          if (cfd < 0)
            continue;
          if (fstat (cfd, &cst) == 0)
            {
              if (plan_uniform (plan, &child))
                place_uniform (plan, cfd, child_path, &child, &cst, depth + 1);
              else
                walk (plan, cfd, child_path, &child, depth + 1);
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
  g_free (t->place);
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

gboolean
fsg_policy_hybrid_enabled (void)
{
  const char *v = g_getenv ("FSGATE_HYBRID");

  /* Opt-in: a bind exposes what the daemon would not (host sockets and
   * FIFOs, links into denied directories on some file systems) and records
   * no denials; docs/security.md, "Hybrid view". */
  return v != NULL && (strcmp (v, "1") == 0 || g_ascii_strcasecmp (v, "on") == 0 ||
                       g_ascii_strcasecmp (v, "true") == 0 || g_ascii_strcasecmp (v, "yes") == 0);
}

GPtrArray *
fsg_policy_hybrid_plan (const FsgPolicy *policy, const char *mountinfo)
{
  Plan plan = { 0 };
  const char *const *denied = fsg_policy_literal_deny_read (policy);
  FsgPathState root = fsg_policy_root_state (policy);
  int fd;

  plan.policy = policy;
  plan.uniform_sets[0] = g_hash_table_new (NULL, NULL);
  plan.uniform_sets[1] = g_hash_table_new (NULL, NULL);
  plan.out = g_ptr_array_new_with_free_func ((GDestroyNotify) fsg_hybrid_tree_free);
  plan.mounts = parse_mounts (mountinfo);
  plan.targets = g_array_new (FALSE, TRUE, sizeof (DenyTarget));
  g_array_set_clear_func (plan.targets, deny_target_clear);
  for (guint i = 0; denied != NULL && denied[i] != NULL; i++)
    {
      DenyTarget t = { 0 };

      /* as the daemon does: the object at the path now, not followed */
      if (fstatat (AT_FDCWD, denied[i], &t.st, AT_SYMLINK_NOFOLLOW) < 0)
        continue;
      t.path = g_strdup (denied[i]);
      t.place = fs_place (plan.mounts, denied[i]);
      g_array_append_val (plan.targets, t);
    }

  fd = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0)
    {
      struct stat st;

      if (fstat (fd, &st) == 0 && fsg_path_state_uniform (policy, &root))
        place_uniform (&plan, fd, "/", &root, &st, 0);
      else
        walk (&plan, fd, "/", &root, 0);
      close (fd);
    }
  g_array_unref (plan.mounts);
  g_array_unref (plan.targets);
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

      if (t->served_why == NULL && within (path, t->path))
        return t;
    }
  return NULL;
}
