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
 *   renamed over it, unlink) stays allowed. The one proof the daemon gives
 *   is cheap: when every link is a writable name in the file's own
 *   directory (`ln a b`), the write is allowed; links elsewhere would need
 *   a scan of the whole file system.
 * - Hard links to files under a literally denied directory. Each literal
 *   deny-read directory is scanned at start (without following symlinks, at
 *   most FSG_DENIED_SCAN_MAX entries over all of them) and every regular
 *   file with more than one link is denied by identity, wherever another of
 *   its names shows up in the view.
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
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

/* ---- In-place writes through hard links ------------------------------------ */

#define LINK_PROOF_MAX_ENTRIES 10000

/* The proof the daemon can give cheaply: every link of @st is a name in
 * @inode's own directory that the policy makes writable (`ln a b` in a
 * project). The directory is read (at most LINK_PROOF_MAX_ENTRIES entries)
 * through its pinned fd; nothing else is searched. */
static gboolean
all_links_writable_here (FsgFs *fs, FsgInode *inode, const struct stat *st)
{
  FsgInode *parent;
  FsgPathState pstate;
  DIR *dir = NULL;
  struct dirent *de;
  guint64 found = 0, seen = 0;
  int pfd, dfd;

  g_mutex_lock (&fs->lock);
  parent = fsg_inode_parent_locked (inode);
  if (parent != NULL && parent->kind == FSG_INODE_HOST)
    parent->pins++; /* a pinned inode is never freed; dropped by fsg_inode_unpin() */
  else
    parent = NULL;
  g_mutex_unlock (&fs->lock);
  if (parent == NULL)
    return FALSE;
  pfd = fsg_inode_pin (fs, parent);
  if (pfd >= 0)
    {
      pstate = fsg_inode_get_state (fs, parent);
      dfd = openat (pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      dir = dfd >= 0 ? fdopendir (dfd) : NULL;
      if (dir == NULL && dfd >= 0)
        close (dfd);
      while (dir != NULL && (de = readdir (dir)) != NULL && ++seen <= LINK_PROOF_MAX_ENTRIES)
        {
          struct stat cst;
          FsgPathState cs;

          if (de->d_ino != st->st_ino || strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
            continue;
          if (fstatat (dfd, de->d_name, &cst, AT_SYMLINK_NOFOLLOW) < 0
              || cst.st_dev != st->st_dev || cst.st_ino != st->st_ino)
            continue;
          cs = fsg_policy_child_state (fs->policy, &pstate, de->d_name);
          if (cs.access != FSG_ACCESS_RW)
            {
              found = 0; /* a name the policy keeps read-only or denied */
              break;
            }
          found++;
        }
      if (dir != NULL)
        closedir (dir);
      fsg_inode_unpin (fs, parent);
    }
  fsg_inode_unpin (fs, parent);
  return seen <= LINK_PROOF_MAX_ENTRIES && found == (guint64) st->st_nlink;
}

int
fsg_fs_check_linked_write (FsgFs *fs, fuse_req_t req, const char *op, FsgInode *inode,
                           const FsgPathState *state, const struct stat *st)
{
  if (!S_ISREG (st->st_mode) || st->st_nlink <= 1)
    return 0;
  if (all_links_writable_here (fs, inode, st))
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
  guint64 entries;
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
      if (++ctx->entries > FSG_DENIED_SCAN_MAX)
        {
          ctx->truncated = TRUE;
          break;
        }
      if (fstatat (dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        continue;
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

gboolean
fsg_fs_scan_denied_links (FsgFs *fs, const char *const *denied, char **out_truncated_at)
{
  ScanCtx ctx = { fs, 0, 0, FALSE };

  *out_truncated_at = NULL;
  for (guint i = 0; denied != NULL && denied[i] != NULL && !ctx.truncated; i++)
    {
      int fd = open (denied[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);

      if (fd < 0)
        continue; /* missing, or not a directory: nothing below it */
      scan_dir (&ctx, fd, 0);
      if (ctx.truncated)
        *out_truncated_at = g_strdup (denied[i]);
    }
  return !ctx.truncated;
}
