/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Guards of the view against what a path-based policy cannot see (issue 14):
 *
 * - In-place writes through hard links. A regular file in a writable root
 *   with more than one link may have another name outside every writable
 *   root (uv, pnpm and `git clone` of a local path make such links, and so
 *   can anyone who could write the root before the run): opening it for
 *   writing, truncating it or changing its attributes would change that
 *   other name too. Those are refused; replacing the name (a new file
 *   renamed over it, unlink) stays allowed. The proof the daemon gives: it
 *   finds as many names as the file has links, each checked on the host and
 *   writable by the policy, among the names the view knows (looked up or
 *   linked through it) and the file's own directory; links elsewhere would
 *   need a scan of the whole file system.
 * - Hard links to files under a literally denied directory. Each literal
 *   deny-read directory is scanned at start, the most specific first
 *   (without following symlinks, without leaving its file system, at most
 *   FSG_DENIED_SCAN_MAX entries for each, /dev, /run, /proc and /sys not at
 *   all) and every regular file with more than one link is denied by
 *   identity, wherever another of its names shows up in the view. A
 *   directory over the budget stops the run (fail closed).
 * - Kernel pseudo file systems mounted below a root (a chroot's /proc, a
 *   /host/proc or /host/sys): they describe the host's processes (cwd, fd
 *   targets, environ), so their mount points are denied at lookup.
 */
#include "config.h"

#include "fsgate/fs-private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

/* ---- In-place writes through hard links ------------------------------------ */

#define LINK_PROOF_MAX_ENTRIES 10000
#define LINK_PROOF_MAX_NAMES 64

typedef struct
{
  FsgInode *parent; /* pinned (pins++) while in the list */
  char *name;
} LinkName;

static void
link_name_clear (FsgFs *fs, LinkName *n)
{
  fsg_inode_unpin (fs, n->parent);
  g_free (n->name);
}

/* Add (@parent, @name) unless listed; with fs->lock held. */
static void
add_candidate_locked (GArray *names, FsgInode *parent, const char *name)
{
  LinkName n;

  if (parent == NULL || parent->kind != FSG_INODE_HOST || names->len >= LINK_PROOF_MAX_NAMES)
    return;
  for (guint i = 0; i < names->len; i++)
    {
      LinkName *o = &g_array_index (names, LinkName, i);
      if (o->parent == parent && strcmp (o->name, name) == 0)
        return;
    }
  parent->pins++; /* a pinned inode is never freed; dropped by fsg_inode_unpin() */
  n.parent = parent;
  n.name = g_strdup (name);
  g_array_append_val (names, n);
}

/* Names in the directory of @parent_fd that are links of @st. */
static void
scan_directory (FsgFs *fs, GArray *names, FsgInode *parent, int pfd, const struct stat *st)
{
  int dfd = openat (pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *dir = dfd >= 0 ? fdopendir (dfd) : NULL;
  struct dirent *de;
  guint64 seen = 0;

  if (dir == NULL)
    {
      if (dfd >= 0)
        close (dfd);
      return;
    }
  while ((de = readdir (dir)) != NULL && ++seen <= LINK_PROOF_MAX_ENTRIES)
    if (de->d_ino == st->st_ino && strcmp (de->d_name, ".") != 0 && strcmp (de->d_name, "..") != 0)
      {
        g_mutex_lock (&fs->lock);
        add_candidate_locked (names, parent, de->d_name);
        g_mutex_unlock (&fs->lock);
      }
  closedir (dir);
}

/* The proof the daemon can give without searching the file system: it
 * finds @st_nlink names of the file, each still a link of it on the host
 * and writable by the policy. The names come from what the view knows (the
 * names of @inode and of its siblings: every name looked up or linked
 * through the view) and from the file's own directory (at most
 * LINK_PROOF_MAX_ENTRIES entries read: `ln a b` made before the run). */
static gboolean
all_links_writable (FsgFs *fs, FsgInode *inode, const struct stat *st)
{
  g_autoptr(GArray) names = g_array_new (FALSE, FALSE, sizeof (LinkName));
  /* host names already counted, "DEV:INO/NAME" of the parent directory: a
   * directory reachable through two view inodes (a bind mount of it below
   * another root, `--rw ws --rw alias`) must not count one name twice */
  g_autoptr(GHashTable) counted = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  FsgInode *primary_parent;
  guint writable = 0;
  gboolean ok = TRUE;

  g_mutex_lock (&fs->lock);
  {
    FsgInode *s = inode;

    do
      {
        for (FsgName *n = s->names; n != NULL; n = n->next)
          if (n->indexed || n == s->names)
            add_candidate_locked (names, n->parent, n->name);
        s = s->sib_next;
      }
    while (s != NULL && s != inode);
  }
  primary_parent = fsg_inode_parent_locked (inode);
  if (primary_parent != NULL && primary_parent->kind == FSG_INODE_HOST)
    primary_parent->pins++;
  else
    primary_parent = NULL;
  g_mutex_unlock (&fs->lock);

  if (primary_parent != NULL)
    {
      int pfd = fsg_inode_pin (fs, primary_parent);

      if (pfd >= 0)
        {
          scan_directory (fs, names, primary_parent, pfd, st);
          fsg_inode_unpin (fs, primary_parent);
        }
      fsg_inode_unpin (fs, primary_parent);
    }

  for (guint i = 0; i < names->len; i++)
    {
      LinkName *n = &g_array_index (names, LinkName, i);
      int pfd = ok ? fsg_inode_pin (fs, n->parent) : -1;

      if (pfd >= 0)
        {
          struct stat cst, pst;
          char *key = NULL;

          if (fstat (pfd, &pst) == 0)
            key = g_strdup_printf ("%ju:%ju/%s", (uintmax_t) pst.st_dev, (uintmax_t) pst.st_ino,
                                   n->name);
          if (key == NULL)
            ok = FALSE; /* cannot tell whether this name was counted: no proof */
          else if (!g_hash_table_add (counted, key))
            ; /* the same host name through another view inode: counted once */
          else if (fstatat (pfd, n->name, &cst, AT_SYMLINK_NOFOLLOW) == 0 && cst.st_dev == st->st_dev
                   && cst.st_ino == st->st_ino)
            {
              FsgPathState ps = fsg_inode_get_state (fs, n->parent);
              FsgPathState cs = fsg_policy_child_state (fs->policy, &ps, n->name);

              if (cs.access == FSG_ACCESS_RW && !fsg_fs_is_denied_id (fs, cst.st_dev, cst.st_ino))
                writable++;
              else
                ok = FALSE; /* a name the policy keeps read-only or denied */
            }
          fsg_inode_unpin (fs, n->parent);
        }
      link_name_clear (fs, n);
    }
  return ok && writable == (guint) st->st_nlink;
}

int
fsg_fs_check_linked_write (FsgFs *fs, fuse_req_t req, const char *op, FsgInode *inode,
                           const FsgPathState *state, const struct stat *st)
{
  if (!S_ISREG (st->st_mode) || st->st_nlink <= 1)
    return 0;
  if (all_links_writable (fs, inode, st))
    return 0;
  return fsg_fs_deny (fs, req, op, inode, NULL, state, EACCES);
}

/* ---- Pseudo file systems below roots --------------------------------------- */

#ifndef TRACEFS_MAGIC
# define TRACEFS_MAGIC 0x74726163
#endif
#ifndef BPF_FS_MAGIC
# define BPF_FS_MAGIC 0xcafe4a11
#endif

const char *
fsg_fs_pseudo_fs_name (int fd)
{
  struct statfs sfs;

  if (fstatfs (fd, &sfs) < 0)
    return NULL;
  switch ((unsigned long) sfs.f_type)
    {
    case PROC_SUPER_MAGIC: return "procfs";
    case SYSFS_MAGIC: return "sysfs";
    case DEBUGFS_MAGIC: return "debugfs";
    case TRACEFS_MAGIC: return "tracefs";
    case SECURITYFS_MAGIC: return "securityfs";
    case BPF_FS_MAGIC: return "bpf";
    default: return NULL;
    }
}

/* ---- Hard links into literally denied directories -------------------------- */

typedef struct
{
  FsgFs *fs;
  dev_t dev; /* the denied directory's file system: links never cross it */
  guint64 entries;
  guint64 max_entries;
  guint64 added;
  gboolean truncated;
} ScanCtx;

static void
add_id (FsgFs *fs, dev_t dev, ino_t ino)
{
  FsgDevIno *id = g_new0 (FsgDevIno, 1);

  id->dev = dev;
  id->ino = ino;
  g_hash_table_add (fs->deny_ids, id); /* a duplicate replaces (and frees) the old key */
}

static void
scan_dir (ScanCtx *ctx, int dirfd, guint depth)
{
  DIR *dir;
  struct dirent *de;

  if (depth > 64 || fsg_fs_pseudo_fs_name (dirfd) != NULL)
    {
      close (dirfd);
      return;
    }
  dir = fdopendir (dirfd);
  if (dir == NULL)
    {
      close (dirfd);
      return;
    }
  while ((de = readdir (dir)) != NULL)
    {
      struct stat st;

      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      if (++ctx->entries > ctx->max_entries)
        {
          ctx->truncated = TRUE;
          break;
        }
      if (fstatat (dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        continue;
      if (st.st_dev != ctx->dev)
        continue; /* another mount (a gvfs FUSE, an NFS automount): a hard link
                   * cannot reach it from here, and it may stall */
      if (S_ISREG (st.st_mode) && st.st_nlink > 1)
        {
          add_id (ctx->fs, st.st_dev, st.st_ino);
          ctx->added++;
        }
      else if (S_ISDIR (st.st_mode))
        {
          int fd = openat (dirfd, de->d_name,
                           O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);

          if (fd >= 0)
            scan_dir (ctx, fd, depth + 1);
          if (ctx->truncated)
            break;
        }
    }
  closedir (dir);
}

/* Virtual trees whose files are not the user's secrets: /dev, /run, /proc,
 * /sys and below. (The default profile denies parts of /dev and /run; their
 * entries are devices, sockets and runtime state, and scanning them cost
 * most of the start-up time.) */
static gboolean
is_virtual_tree (const char *path)
{
  static const char *const trees[] = { "/dev", "/run", "/proc", "/sys" };

  for (guint i = 0; i < G_N_ELEMENTS (trees); i++)
    {
      gsize n = strlen (trees[i]);
      if (strncmp (path, trees[i], n) == 0 && (path[n] == '\0' || path[n] == '/'))
        return TRUE;
    }
  return FALSE;
}

static gint
more_specific_first (gconstpointer a, gconstpointer b)
{
  const char *pa = *(const char *const *) a, *pb = *(const char *const *) b;
  guint da = 0, db = 0;

  for (const char *p = pa; *p; p++)
    da += *p == '/';
  for (const char *p = pb; *p; p++)
    db += *p == '/';
  return da != db ? (da > db ? -1 : 1) : strcmp (pa, pb);
}

guint64
fsg_fs_denied_scan_max (void)
{
  const char *v = g_getenv ("FSGATE_DENIED_SCAN_MAX");
  guint64 n;

  if (v == NULL || v[0] == '\0')
    return FSG_DENIED_SCAN_MAX;
  if (strcmp (v, "off") == 0)
    return 0;
  if (!g_ascii_string_to_unsigned (v, 10, 1, G_MAXUINT64, &n, NULL))
    return FSG_DENIED_SCAN_MAX;
  return n;
}

gboolean
fsg_fs_scan_denied_links (FsgFs *fs, const char *const *denied, char **out_truncated_at)
{
  g_autoptr(GPtrArray) order = g_ptr_array_new ();
  guint64 max = fsg_fs_denied_scan_max ();

  *out_truncated_at = NULL;
  if (max == 0)
    return TRUE; /* FSGATE_DENIED_SCAN_MAX=off: the documented opt-out */
  for (guint i = 0; denied != NULL && denied[i] != NULL; i++)
    if (!is_virtual_tree (denied[i]))
      g_ptr_array_add (order, (gpointer) denied[i]);
  /* the most specific (deepest: ~/.ssh, a project's secrets/) first */
  g_ptr_array_sort (order, more_specific_first);
  for (guint i = 0; i < order->len; i++)
    {
      const char *path = order->pdata[i];
      /* each directory has its own budget: a big one cannot starve another */
      ScanCtx ctx = { fs, 0, 0, max, 0, FALSE };
      int fd = open (path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
      struct stat st;

      if (fd < 0)
        continue; /* missing, or not a directory: nothing below it */
      if (fstat (fd, &st) < 0)
        {
          close (fd);
          continue;
        }
      ctx.dev = st.st_dev;
      scan_dir (&ctx, fd, 0);
      if (ctx.truncated)
        {
          *out_truncated_at = g_strdup (path);
          return FALSE;
        }
    }
  return TRUE;
}
