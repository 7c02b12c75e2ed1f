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
 *   deny-read directory is scanned at start (policy/denied.c, shared with
 *   the hybrid plan) and every regular file with more than one link is
 *   denied by identity, wherever another of its names shows up in the
 *   view. A directory over the budget stops the run (fail closed).
 * - Kernel pseudo file systems mounted below a root (a chroot's /proc, a
 *   /host/proc or /host/sys): they describe the host's processes (cwd, fd
 *   targets, environ), so their mount points are denied at lookup.
 */
#include "config.h"

#include "fsgate/fs-private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
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

/* ---- Hard links into literally denied directories -------------------------- */

gboolean
fsg_fs_scan_denied_links (FsgFs *fs, char **out_truncated_at)
{
  const FsgDeniedLinks *links = fsg_policy_denied_links (fs->policy);

  *out_truncated_at = NULL;
  if (links->truncated_at != NULL)
    {
      *out_truncated_at = g_strdup (links->truncated_at);
      return FALSE;
    }
  for (guint i = 0; i < links->ids->len; i++)
    {
      const FsgFileId *f = &g_array_index (links->ids, FsgFileId, i);
      FsgDevIno *id = g_new0 (FsgDevIno, 1);

      id->dev = (dev_t) f->dev;
      id->ino = (ino_t) f->ino;
      g_hash_table_add (fs->deny_ids, id); /* a duplicate replaces (and frees) the old key */
    }
  return TRUE;
}
