/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The O_PATH fd cache of the policy view: every host inode may hold one
 * O_PATH|O_NOFOLLOW fd, at most fs->fd_budget of them are open (an LRU list
 * of the unpinned ones), and an evicted inode is reopened when it is next
 * pinned:
 *
 *  1. by file handle, when the daemon may use them (CAP_DAC_READ_SEARCH in
 *     the initial user namespace, probed at startup on each root's mount)
 *     and the host filesystem gives them: open_by_handle_at (mount_fd,
 *     handle, O_PATH) finds the object wherever it was renamed to, on the
 *     host or in the view, and resolves no path at all;
 *  2. else by name: from the nearest ancestor that still has its fd, top
 *     down, openat (parent_fd, name, O_PATH|O_NOFOLLOW) along the primary
 *     names (which renames made through the view keep up to date), then the
 *     inode's other names (other hard links seen through the view).
 *
 * Whatever was opened is checked against the inode's identity (dev, ino,
 * type, birth time): -ESTALE when no way leads to the same object.
 */
#include "config.h"

#include "fsgate/fs-private.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* ---- LRU (all under fs->lock) ------------------------------------------ */

static void
lru_unlink_locked (FsgFs *fs, FsgInode *inode)
{
  if (!inode->in_lru)
    return;
  if (inode->lru_prev != NULL)
    inode->lru_prev->lru_next = inode->lru_next;
  else
    fs->lru_head = inode->lru_next;
  if (inode->lru_next != NULL)
    inode->lru_next->lru_prev = inode->lru_prev;
  else
    fs->lru_tail = inode->lru_prev;
  inode->lru_prev = inode->lru_next = NULL;
  inode->in_lru = FALSE;
}

static void
lru_push_front_locked (FsgFs *fs, FsgInode *inode)
{
  inode->lru_prev = NULL;
  inode->lru_next = fs->lru_head;
  if (fs->lru_head != NULL)
    fs->lru_head->lru_prev = inode;
  fs->lru_head = inode;
  if (fs->lru_tail == NULL)
    fs->lru_tail = inode;
  inode->in_lru = TRUE;
}

void
fsg_fdcache_touch_locked (FsgFs *fs, FsgInode *inode)
{
  if (!inode->in_lru || fs->lru_head == inode)
    return;
  lru_unlink_locked (fs, inode);
  lru_push_front_locked (fs, inode);
}

/* Close unpinned fds from the cold end until at most @limit are open.
 * Pinned fds stay (the budget is exceeded for as long as they are used). */
static void
evict_to_locked (FsgFs *fs, guint64 limit)
{
  FsgInode *i = fs->lru_tail;

  while (fs->n_fds > limit && i != NULL)
    {
      FsgInode *prev = i->lru_prev;

      if (i->pins == 0)
        {
          lru_unlink_locked (fs, i);
          close (i->fd);
          i->fd = -1;
          fs->n_fds--;
          fs->n_evictions++;
        }
      i = prev;
    }
}

void
fsg_fdcache_set_fd_locked (FsgFs *fs, FsgInode *inode, int fd)
{
  inode->fd = fd;
  fs->n_fds++;
  if (!inode->fd_permanent)
    lru_push_front_locked (fs, inode);
  evict_to_locked (fs, fs->fd_budget);
}

void
fsg_fdcache_forget_locked (FsgFs *fs, FsgInode *inode)
{
  lru_unlink_locked (fs, inode);
  if (inode->fd >= 0)
    {
      close (inode->fd);
      inode->fd = -1;
      fs->n_fds--;
    }
}

void
fsg_fs_relieve_fd_pressure (FsgFs *fs)
{
  g_mutex_lock (&fs->lock);
  evict_to_locked (fs, fs->fd_budget / 2);
  g_mutex_unlock (&fs->lock);
}

/* ---- Identity ----------------------------------------------------------- */

guint64
fsg_statx_btime (const struct statx *stx)
{
  if (!(stx->stx_mask & STATX_BTIME))
    return 0;
  return (guint64) stx->stx_btime.tv_sec * G_GUINT64_CONSTANT (1000000000) + stx->stx_btime.tv_nsec;
}

/* (dev, ino) and type, plus the birth time where the filesystem has one:
 * an evicted inode holds no reference to the host object, so its number
 * may have been reused. */
gboolean
fsg_inode_identity_matches (const FsgInode *inode, const struct statx *stx)
{
  guint64 bt = fsg_statx_btime (stx);

  return makedev (stx->stx_dev_major, stx->stx_dev_minor) == inode->dev &&
         stx->stx_ino == inode->ino && (stx->stx_mode & S_IFMT) == inode->type &&
         (inode->btime == 0 || bt == 0 || bt == inode->btime);
}

/* 0 if @fd is the object @inode stands for, else -ESTALE or -errno. */
static int
check_identity (const FsgInode *inode, int fd)
{
  struct statx stx;

  /* AT_STATX_DONT_SYNC: never a request to ourselves (see lookup). */
  if (statx (fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC,
             STATX_BASIC_STATS | STATX_BTIME, &stx) < 0)
    return -errno;
  return fsg_inode_identity_matches (inode, &stx) ? 0 : -ESTALE;
}

/* ---- Opening ------------------------------------------------------------ */

int
fsg_fdcache_open_path (FsgFs *fs, int dirfd, const char *name)
{
  int fd = openat (dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);

  if (fd < 0 && (errno == EMFILE || errno == ENFILE))
    {
      fsg_fs_relieve_fd_pressure (fs);
      fd = openat (dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    }
  return fd;
}

/* Room for any handle: struct file_handle plus MAX_HANDLE_SZ bytes. */
typedef union
{
  struct file_handle fh;
  unsigned char bytes[sizeof (struct file_handle) + MAX_HANDLE_SZ];
} FsgHandleBuf;

struct file_handle *
fsg_fdcache_get_handle (FsgFs *fs, int fd, int *out_mount_id)
{
  FsgHandleBuf buf;
  int mount_id;

  *out_mount_id = -1;
  if (g_hash_table_size (fs->mount_fds) == 0)
    return NULL;
  buf.fh.handle_bytes = MAX_HANDLE_SZ;
  if (name_to_handle_at (fd, "", &buf.fh, &mount_id, AT_EMPTY_PATH) < 0)
    return NULL;
  if (!g_hash_table_contains (fs->mount_fds, GINT_TO_POINTER (mount_id)))
    return NULL; /* a mount below a root: reopened by name */
  *out_mount_id = mount_id;
  return g_memdup2 (&buf, sizeof (struct file_handle) + buf.fh.handle_bytes);
}

void
fsg_fdcache_probe_handles (FsgFs *fs)
{
  GHashTableIter it;
  gpointer v;

  if (g_strcmp0 (g_getenv ("FSGATE_FILE_HANDLES"), "0") == 0)
    return;
  g_hash_table_iter_init (&it, fs->root_fds);
  while (g_hash_table_iter_next (&it, NULL, &v))
    {
      int fd = GPOINTER_TO_INT (v) - 1;
      fsg_autofd int dfd = -1;
      FsgHandleBuf buf;
      int mount_id, t;

      buf.fh.handle_bytes = MAX_HANDLE_SZ;
      if (name_to_handle_at (fd, "", &buf.fh, &mount_id, AT_EMPTY_PATH) < 0)
        continue; /* this filesystem has no handles */
      if (g_hash_table_contains (fs->mount_fds, GINT_TO_POINTER (mount_id)))
        continue;
      /* open_by_handle_at() wants a real fd of the mount, not an O_PATH
       * one: the root directory itself, opened without following. */
      dfd = openat (fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (dfd < 0)
        continue; /* a file root */
      t = open_by_handle_at (dfd, &buf.fh, O_PATH | O_CLOEXEC);
      if (t < 0)
        {
          if (errno == EPERM)
            {
              /* no CAP_DAC_READ_SEARCH in the initial user namespace */
              g_hash_table_remove_all (fs->mount_fds);
              return;
            }
          continue;
        }
      close (t);
      g_hash_table_insert (fs->mount_fds, GINT_TO_POINTER (mount_id), GINT_TO_POINTER (dfd + 1));
      dfd = -1;
    }
}

/* Install @fd (checked) as @inode's fd, unless another thread was faster;
 * returns the fd now in use. */
static int
install_fd (FsgFs *fs, FsgInode *inode, int fd, gboolean by_handle)
{
  int extra = -1;

  g_mutex_lock (&fs->lock);
  if (inode->fd >= 0)
    {
      extra = fd; /* another thread reopened it first */
      fd = inode->fd;
      fsg_fdcache_touch_locked (fs, inode);
    }
  else
    {
      fs->n_reopens++;
      if (by_handle)
        fs->n_handle_reopens++;
      fsg_fdcache_set_fd_locked (fs, inode, fd);
    }
  g_mutex_unlock (&fs->lock);
  if (extra >= 0)
    close (extra);
  return fd;
}

/* Reopen @inode by its file handle: an fd, or -errno (-ENOTSUP: no handle). */
static int
reopen_by_handle (FsgFs *fs, FsgInode *inode)
{
  gpointer v;
  int fd, r;

  if (inode->handle == NULL ||
      (v = g_hash_table_lookup (fs->mount_fds, GINT_TO_POINTER (inode->mount_id))) == NULL)
    return -ENOTSUP;
  fd = open_by_handle_at (GPOINTER_TO_INT (v) - 1, inode->handle, O_PATH | O_CLOEXEC);
  if (fd < 0 && (errno == EMFILE || errno == ENFILE))
    {
      fsg_fs_relieve_fd_pressure (fs);
      fd = open_by_handle_at (GPOINTER_TO_INT (v) - 1, inode->handle, O_PATH | O_CLOEXEC);
    }
  if (fd < 0)
    return -errno;
  if ((r = check_identity (inode, fd)) < 0)
    {
      close (fd);
      return r;
    }
  return install_fd (fs, inode, fd, TRUE);
}

/* Reopen @inode from its parent's O_PATH fd @pfd by @name, without
 * following symlinks, and check that it is still the same object. */
static int
reopen_one (FsgFs *fs, FsgInode *inode, int pfd, const char *name)
{
  int fd, r;

  if ((fd = fsg_fdcache_open_path (fs, pfd, name)) < 0)
    return errno == ENOENT ? -ESTALE : -errno;
  if ((r = check_identity (inode, fd)) < 0)
    {
      close (fd);
      return r; /* the name now refers to another object */
    }
  return install_fd (fs, inode, fd, FALSE);
}

/* The O_PATH fd of @inode (pinned by the caller), reopened by handle, else
 * along primary names from the nearest ancestor that still has its fd or
 * reopens by handle,
 * top down and without recursion: a command decides how deep a chain of
 * evicted directories gets, and must not be able to overflow a worker's
 * stack. */
static int
reopen_by_primary_names (FsgFs *fs, FsgInode *inode)
{
  g_autoptr(GPtrArray) chain = g_ptr_array_new ();   /* to reopen, deepest first */
  g_autoptr(GPtrArray) parents = g_ptr_array_new (); /* the parent pinned for each */
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  FsgInode *cur = inode;
  int fd;

  g_mutex_lock (&fs->lock);
  for (;;)
    {
      FsgInode *parent;

      if (cur->fd >= 0)
        {
          fd = cur->fd;
          fsg_fdcache_touch_locked (fs, cur);
          break;
        }
      if (cur->handle != NULL)
        {
          /* By handle (@cur is pinned: by the caller, or as the parent of
           * the last chain element): no need to go further up. */
          g_mutex_unlock (&fs->lock);
          fd = reopen_by_handle (fs, cur);
          g_mutex_lock (&fs->lock);
          if (fd >= 0 || fd == -ESTALE)
            break;
        }
      parent = fsg_inode_parent_locked (cur);
      if (cur->fd_permanent || parent == NULL || parent->kind != FSG_INODE_HOST)
        {
          fd = -ESTALE;
          break;
        }
      /* Pinned under the lock: a concurrent rename may move @cur away from
       * @parent, which must stay alive, with its fd, until we are done. */
      parent->pins++;
      g_ptr_array_add (chain, cur);
      g_ptr_array_add (parents, parent);
      g_ptr_array_add (names, g_strdup (fsg_inode_name_locked (cur)));
      cur = parent;
    }
  g_mutex_unlock (&fs->lock);

  /* Each reopened directory is the base of the next; it stays pinned as
   * the next one's parent until that one is open. */
  for (guint i = chain->len; i-- > 0;)
    {
      if (fd >= 0)
        fd = reopen_one (fs, chain->pdata[i], fd, names->pdata[i]);
      fsg_inode_unpin (fs, parents->pdata[i]);
    }
  return fd;
}

/* Try the names of @inode after its primary one (other hard links). */
static int
reopen_by_other_names (FsgFs *fs, FsgInode *inode)
{
  g_autoptr(GPtrArray) parents = g_ptr_array_new ();
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  int fd = -ESTALE;

  g_mutex_lock (&fs->lock);
  for (FsgName *n = inode->names ? inode->names->next : NULL; n != NULL; n = n->next)
    if (n->parent->kind == FSG_INODE_HOST)
      {
        n->parent->pins++;
        g_ptr_array_add (parents, n->parent);
        g_ptr_array_add (names, g_strdup (n->name));
      }
  g_mutex_unlock (&fs->lock);

  for (guint i = 0; i < parents->len; i++)
    {
      if (fd < 0)
        {
          /* The parent's own primary names only: no recursion through
           * other names up the tree. */
          int pfd = reopen_by_primary_names (fs, parents->pdata[i]);

          if (pfd >= 0)
            fd = reopen_one (fs, inode, pfd, names->pdata[i]);
        }
      fsg_inode_unpin (fs, parents->pdata[i]);
    }
  return fd;
}

static int
pinned_fd (FsgFs *fs, FsgInode *inode)
{
  int fd;

  g_mutex_lock (&fs->lock);
  fd = inode->fd;
  if (fd >= 0)
    fsg_fdcache_touch_locked (fs, inode);
  g_mutex_unlock (&fs->lock);
  if (fd >= 0)
    return fd;
  fd = reopen_by_primary_names (fs, inode);
  if (fd == -ESTALE)
    fd = reopen_by_other_names (fs, inode);
  return fd;
}

int
fsg_inode_pin (FsgFs *fs, FsgInode *inode)
{
  int fd;

  if (inode->kind != FSG_INODE_HOST)
    return -EBADF;
  g_mutex_lock (&fs->lock);
  inode->pins++;
  g_mutex_unlock (&fs->lock);
  fd = pinned_fd (fs, inode);
  if (fd < 0)
    fsg_inode_unpin (fs, inode);
  return fd;
}

void
fsg_inode_unpin (FsgFs *fs, FsgInode *inode)
{
  g_mutex_lock (&fs->lock);
  g_assert (inode->pins > 0);
  inode->pins--;
  if (inode->pins == 0)
    {
      if (fs->n_fds > fs->fd_budget)
        evict_to_locked (fs, fs->fd_budget);
      fsg_inode_maybe_free_locked (fs, inode);
    }
  g_mutex_unlock (&fs->lock);
}
