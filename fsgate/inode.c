/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The inode table of the policy view: lookup (the only place where a new
 * view inode is created), FORGET accounting, view paths rebuilt from parent
 * pointers, and audit records. Host inodes are keyed by (st_dev, st_ino,
 * policy state), so one host file reached under two different rules is two
 * view inodes and neither inherits the other's rights. Synthetic inodes
 * (ancestors of roots, stubs, alias symlinks) are keyed by (parent, name).
 *
 * Every host access here is openat(parent_fd, name, O_PATH|O_NOFOLLOW) or
 * statx(fd, "", AT_EMPTY_PATH|AT_SYMLINK_NOFOLLOW); roots below a synthetic
 * parent come from fds opened before mounting.
 */
#include "config.h"

#include "fsgate/fs-private.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* Read-only content is not changed through the view, so the kernel may keep
 * entries and attributes for long; writable trees use ~1 s so that host-side
 * changes show up quickly. */
#define FSG_TIMEOUT_RO 86400.0
#define FSG_TIMEOUT_RW 1.0

static guint
inode_hash (gconstpointer p)
{
  const FsgInode *i = p;
  guint64 h = (guint64) i->ino * 0x9E3779B97F4A7C15ull;

  h ^= (guint64) i->dev + 0x632BE59BD9B4E019ull + (h << 6) + (h >> 2);
  h ^= GPOINTER_TO_SIZE (i->state.rule) >> 3;
  h ^= (GPOINTER_TO_SIZE (i->state.set) >> 3) * 31;
  h ^= ((guint64) i->state.access << 8) | ((guint64) i->state.flags << 16) | ((guint64) i->state.depth << 24);
  return (guint) (h ^ (h >> 32));
}

static gboolean
inode_equal (gconstpointer a, gconstpointer b)
{
  const FsgInode *x = a, *y = b;

  return x->dev == y->dev && x->ino == y->ino &&
         x->state.access == y->state.access && x->state.flags == y->state.flags &&
         x->state.depth == y->state.depth && x->state.rule == y->state.rule &&
         x->state.set == y->state.set;
}

void
fsg_inode_tables_init (FsgFs *fs)
{
  fs->inodes = g_hash_table_new (inode_hash, inode_equal);
  fs->synth = g_hash_table_new (g_str_hash, g_str_equal);
  fs->next_generation = 1;
  fs->next_fake_ino = 1;
}

/* ---- The O_PATH fd cache (all under fs->lock) ---------------------------- */

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

static void
lru_touch_locked (FsgFs *fs, FsgInode *inode)
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

/* Give a fresh fd to @inode (whose fd is -1) and account for it. */
static void
inode_set_fd_locked (FsgFs *fs, FsgInode *inode, int fd)
{
  inode->fd = fd;
  fs->n_fds++;
  if (!inode->fd_permanent)
    lru_push_front_locked (fs, inode);
  evict_to_locked (fs, fs->fd_budget);
}

void
fsg_fs_relieve_fd_pressure (FsgFs *fs)
{
  g_mutex_lock (&fs->lock);
  evict_to_locked (fs, fs->fd_budget / 2);
  g_mutex_unlock (&fs->lock);
}

static guint64
statx_btime (const struct statx *stx)
{
  if (!(stx->stx_mask & STATX_BTIME))
    return 0;
  return (guint64) stx->stx_btime.tv_sec * G_GUINT64_CONSTANT (1000000000) + stx->stx_btime.tv_nsec;
}

/* Is @stx the object @inode stands for? (dev, ino) and type, plus the birth
 * time where the filesystem has one: an evicted inode holds no reference
 * to the host object, so its number may have been reused. */
static gboolean
identity_matches (const FsgInode *inode, const struct statx *stx)
{
  guint64 bt = statx_btime (stx);

  return makedev (stx->stx_dev_major, stx->stx_dev_minor) == inode->dev &&
         stx->stx_ino == inode->ino && (stx->stx_mode & S_IFMT) == inode->type &&
         (inode->btime == 0 || bt == 0 || bt == inode->btime);
}

/* openat() for the fd cache; on EMFILE/ENFILE, close cold fds and retry once. */
static int
openat_path (FsgFs *fs, int dirfd, const char *name)
{
  int fd = openat (dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);

  if (fd < 0 && (errno == EMFILE || errno == ENFILE))
    {
      fsg_fs_relieve_fd_pressure (fs);
      fd = openat (dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    }
  return fd;
}

/* Reopen @inode from its parent's O_PATH fd @pfd by @name, without
 * following symlinks, and check that it is still the same object. */
static int
reopen_one (FsgFs *fs, FsgInode *inode, int pfd, const char *name)
{
  struct statx stx;
  int fd, extra = -1, r = 0;

  if ((fd = openat_path (fs, pfd, name)) < 0)
    return errno == ENOENT ? -ESTALE : -errno;
  if (statx (fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC,
             STATX_BASIC_STATS | STATX_BTIME, &stx) < 0)
    r = -errno;
  else if (!identity_matches (inode, &stx))
    r = -ESTALE; /* the name now refers to another object */
  if (r < 0)
    {
      close (fd);
      return r;
    }

  g_mutex_lock (&fs->lock);
  if (inode->fd >= 0)
    {
      extra = fd; /* another thread reopened it first */
      fd = inode->fd;
      lru_touch_locked (fs, inode);
    }
  else
    {
      fs->n_reopens++;
      inode_set_fd_locked (fs, inode, fd);
    }
  g_mutex_unlock (&fs->lock);
  if (extra >= 0)
    close (extra);
  return fd;
}

/* The O_PATH fd of @inode (pinned by the caller). Evicted inodes are
 * reopened from the nearest ancestor that still has its fd, top down and
 * without recursion: a command decides how deep a chain of evicted
 * directories gets, and must not be able to overflow a worker's stack. */
static int
pinned_fd (FsgFs *fs, FsgInode *inode)
{
  g_autoptr(GPtrArray) chain = g_ptr_array_new ();   /* to reopen, deepest first */
  g_autoptr(GPtrArray) parents = g_ptr_array_new (); /* the parent pinned for each */
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  FsgInode *cur = inode;
  int fd;

  g_mutex_lock (&fs->lock);
  for (;;)
    {
      FsgInode *parent = cur->parent;

      if (cur->fd >= 0)
        {
          fd = cur->fd;
          lru_touch_locked (fs, cur);
          break;
        }
      if (cur->fd_permanent || parent == NULL || parent->kind != FSG_INODE_HOST || cur->name == NULL)
        {
          fd = -ESTALE;
          break;
        }
      /* Pinned under the lock: a concurrent rename may move @cur away from
       * @parent, which must stay alive, with its fd, until we are done. */
      parent->pins++;
      g_ptr_array_add (chain, cur);
      g_ptr_array_add (parents, parent);
      g_ptr_array_add (names, g_strdup (cur->name));
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

static void inode_maybe_free_locked (FsgFs *fs, FsgInode *inode);

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
      inode_maybe_free_locked (fs, inode);
    }
  g_mutex_unlock (&fs->lock);
}

static void
inode_free (FsgFs *fs, FsgInode *inode)
{
  lru_unlink_locked (fs, inode);
  if (inode->fd >= 0)
    {
      close (inode->fd);
      fs->n_fds--;
    }
  fs->n_inodes--;
  g_free (inode->name);
  g_free (inode->synth_key);
  g_free (inode);
}

void
fsg_inode_tables_clear (FsgFs *fs)
{
  GHashTableIter it;
  gpointer key;
  GPtrArray *all = g_ptr_array_new ();

  if (fs->inodes != NULL)
    {
      g_hash_table_iter_init (&it, fs->inodes);
      while (g_hash_table_iter_next (&it, &key, NULL))
        g_ptr_array_add (all, key);
    }
  if (fs->synth != NULL)
    {
      g_hash_table_iter_init (&it, fs->synth);
      while (g_hash_table_iter_next (&it, NULL, &key))
        g_ptr_array_add (all, key);
    }
  /* Unhashed inodes (renamed onto an existing key) are only reachable
   * through the kernel's references; they leak here only if the kernel
   * never sent FORGET, which ends with the process anyway. */
  for (guint i = 0; i < all->len; i++)
    inode_free (fs, all->pdata[i]);
  g_ptr_array_unref (all);
  g_clear_pointer (&fs->inodes, g_hash_table_unref);
  g_clear_pointer (&fs->synth, g_hash_table_unref);
  if (fs->root != NULL)
    {
      inode_free (fs, fs->root);
      fs->root = NULL;
    }
}

FsgInode *
fsg_inode_new_root (FsgFs *fs, int fd, const struct stat *st, FsgPathState state)
{
  FsgInode *root = g_new0 (FsgInode, 1);

  root->kind = fd >= 0 ? FSG_INODE_HOST : FSG_INODE_SYNTH;
  root->fd = fd;
  root->fd_permanent = TRUE;
  root->type = S_IFDIR;
  if (fd >= 0)
    {
      root->dev = st->st_dev;
      root->ino = st->st_ino;
      fs->n_fds++;
    }
  root->generation = 0;
  root->fake_ino = FUSE_ROOT_ID;
  root->state = state;
  root->nlookup = 1;
  root->stub_anc = g_hash_table_contains (fs->stub_parents, "/");
  fs->n_inodes++;
  return root;
}

FsgPathState
fsg_inode_get_state (FsgFs *fs, FsgInode *inode)
{
  FsgPathState s;

  g_mutex_lock (&fs->lock);
  s = inode->state;
  g_mutex_unlock (&fs->lock);
  return s;
}

static char *
inode_path_locked (FsgInode *inode, const char *name)
{
  GPtrArray *parts = g_ptr_array_new ();
  GString *out = g_string_new (NULL);

  if (name != NULL)
    g_ptr_array_add (parts, (gpointer) name);
  for (FsgInode *i = inode; i != NULL && i->name != NULL; i = i->parent)
    g_ptr_array_add (parts, i->name);
  for (guint k = parts->len; k > 0; k--)
    {
      g_string_append_c (out, '/');
      g_string_append (out, parts->pdata[k - 1]);
    }
  if (out->len == 0)
    g_string_append_c (out, '/');
  g_ptr_array_unref (parts);
  return g_string_free (out, FALSE);
}

char *
fsg_inode_path (FsgFs *fs, FsgInode *inode, const char *name)
{
  char *p;

  g_mutex_lock (&fs->lock);
  p = inode_path_locked (inode, name);
  g_mutex_unlock (&fs->lock);
  return p;
}

double
fsg_state_timeout (const FsgPathState *state)
{
  if (state->access == FSG_ACCESS_RW)
    return FSG_TIMEOUT_RW;
  return FSG_TIMEOUT_RO;
}

ino_t
fsg_fs_map_ino (FsgFs *fs, dev_t dev, ino_t ino)
{
  /* One FUSE mount spans several host filesystems: fold the device into the
   * high bits so that files of different filesystems do not look like hard
   * links of each other (tar, cp -a, du). Stable across lookups. */
  guint64 d = ((guint64) major (dev) << 20) ^ minor (dev);

  d = (d * 0x9E3779B97F4A7C15ull) >> 40; /* 24 bits */
  return (ino_t) ((guint64) ino ^ (d << 40));
}

gboolean
fsg_fs_is_denied_id (FsgFs *fs, dev_t dev, ino_t ino)
{
  FsgDevIno key = { dev, ino };

  return g_hash_table_size (fs->deny_ids) > 0 && g_hash_table_contains (fs->deny_ids, &key);
}

GPtrArray *
fsg_inode_stub_children (FsgFs *fs, FsgInode *inode)
{
  g_autofree char *path = NULL;

  if (!inode->stub_anc)
    return NULL;
  path = fsg_inode_path (fs, inode, NULL);
  return g_hash_table_lookup (fs->stub_parents, path);
}

static void
fill_synthetic_stat (FsgFs *fs, FsgInode *inode, struct stat *st)
{
  memset (st, 0, sizeof *st);
  st->st_ino = inode->fake_ino;
  st->st_uid = 0;
  st->st_gid = 0;
  st->st_blksize = 4096;
  st->st_atim.tv_sec = st->st_mtim.tv_sec = st->st_ctim.tv_sec = fs->start_time / G_USEC_PER_SEC;
  if (inode->kind == FSG_INODE_ALIAS)
    {
      const char *target = fsg_policy_alias_target (fs->policy, &inode->state);

      st->st_mode = S_IFLNK | 0777;
      st->st_nlink = 1;
      st->st_size = target ? strlen (target) : 0;
    }
  else
    {
      st->st_mode = S_IFDIR | 0555;
      st->st_nlink = 2;
      st->st_size = 0;
    }
}

int
fsg_inode_stat (FsgFs *fs, FsgInode *inode, struct stat *st)
{
  fsg_autopin FsgPin pin = { 0 };
  int fd;

  if (inode->kind != FSG_INODE_HOST)
    {
      fill_synthetic_stat (fs, inode, st);
      return 0;
    }
  if ((fd = fsg_pin (&pin, fs, inode)) < 0)
    return fd;
  if (fstatat (fd, "", st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
    return -errno;
  if (fs->single_caller)
    {
      FsgPathState state = fsg_inode_get_state (fs, inode);
      fsg_fs_shown_ids (fs, fd, inode, NULL, &state, st);
    }
  st->st_ino = fsg_fs_map_ino (fs, st->st_dev, st->st_ino);
  return 0;
}

/* A new synthetic inode (or the existing one) at (@parent, @name);
 * called with fs->lock held. */
static FsgInode *
synth_get_locked (FsgFs *fs, FsgInode *parent, const char *name, FsgInodeKind kind,
                  FsgPathState state, gboolean stub_anc)
{
  g_autofree char *key = g_strdup_printf ("%" G_GUINT64_FORMAT "/%s",
                                          (guint64) fsg_inode_nodeid (fs, parent), name);
  FsgInode *inode = g_hash_table_lookup (fs->synth, key);

  if (inode != NULL && inode->kind == kind)
    {
      inode->nlookup++;
      return inode;
    }
  if (inode != NULL)
    {
      /* Same name, other kind (cannot happen with an immutable policy). */
      g_hash_table_remove (fs->synth, key);
      g_clear_pointer (&inode->synth_key, g_free);
    }
  inode = g_new0 (FsgInode, 1);
  inode->kind = kind;
  inode->fd = -1;
  inode->type = kind == FSG_INODE_ALIAS ? S_IFLNK : S_IFDIR;
  inode->generation = fs->next_generation++;
  /* Synthetic inode numbers live in a range host filesystems do not use. */
  inode->fake_ino = G_GUINT64_CONSTANT (0xfff0000000000000) + fs->next_fake_ino++;
  inode->stub_anc = stub_anc;
  inode->state = state;
  inode->nlookup = 1;
  inode->parent = parent;
  parent->nchildren++;
  inode->name = g_strdup (name);
  inode->synth_key = g_steal_pointer (&key);
  g_hash_table_insert (fs->synth, inode->synth_key, inode);
  fs->n_inodes++;
  return inode;
}

static int
synth_entry (FsgFs *fs, FsgInode *parent, const char *name, FsgInodeKind kind,
             FsgPathState state, gboolean stub_anc, struct fuse_entry_param *e)
{
  FsgInode *inode;

  g_mutex_lock (&fs->lock);
  inode = synth_get_locked (fs, parent, name, kind, state, stub_anc);
  g_mutex_unlock (&fs->lock);
  fill_synthetic_stat (fs, inode, &e->attr);
  e->ino = fsg_inode_nodeid (fs, inode);
  e->generation = inode->generation;
  e->attr_timeout = e->entry_timeout = FSG_TIMEOUT_RO;
  return 0;
}

/* fd for a root reached from a synthetic parent: opened at startup, before
 * the mount existed, with RESOLVE_NO_SYMLINKS. Returns a new fd or -errno. */
static int
root_fd_for (FsgFs *fs, FsgInode *parent, const char *name)
{
  g_autofree char *path = fsg_inode_path (fs, parent, name);
  gpointer v = g_hash_table_lookup (fs->root_fds, path);
  int fd;

  if (v == NULL)
    return -ENOENT; /* an optional root that does not exist */
  fd = fcntl (GPOINTER_TO_INT (v) - 1, F_DUPFD_CLOEXEC, 3);
  return fd < 0 ? -errno : fd;
}

int
fsg_fs_deny (FsgFs *fs, fuse_req_t req, const char *op, FsgInode *parent,
             const char *name, const FsgPathState *state, int err)
{
  fsg_fs_audit (fs, req, op, parent, name, NULL, NULL, state, TRUE, err, NULL);
  return -err;
}

int
fsg_inode_lookup (FsgFs *fs, fuse_req_t req, FsgInode *parent, const char *name,
                  struct fuse_entry_param *e, const char *op)
{
  FsgPathState pstate, state;
  gboolean stub_anc = FALSE;
  fsg_autofd int fd = -1;
  struct statx stx;
  FsgInode key, *inode;

  memset (e, 0, sizeof *e);
  if (name[0] == '\0' || strchr (name, '/') != NULL)
    return -EINVAL;
  /* The kernel resolves "." and ".." itself (no export support); never
   * let a name step out of the tree. */
  if (strcmp (name, ".") == 0 || strcmp (name, "..") == 0)
    return -EINVAL;
  if (strlen (name) > 255)
    return -ENAMETOOLONG;
  if (parent->type != S_IFDIR || parent->kind == FSG_INODE_ALIAS)
    return -ENOTDIR;
  if (parent->kind == FSG_INODE_STUB)
    return -ENOENT;

  pstate = fsg_inode_get_state (fs, parent);
  state = fsg_policy_child_state (fs->policy, &pstate, name);

  if (parent->stub_anc)
    {
      g_autofree char *path = fsg_inode_path (fs, parent, name);

      if (g_hash_table_contains (fs->stubs, path))
        return synth_entry (fs, parent, name, FSG_INODE_STUB, state, FALSE, e);
      stub_anc = g_hash_table_contains (fs->stub_parents, path);
      if (stub_anc && (parent->kind != FSG_INODE_HOST || state.access <= FSG_ACCESS_DENY))
        {
          if (!(state.flags & FSG_STATE_SYNTHETIC))
            state.access = FSG_ACCESS_RO;
          return synth_entry (fs, parent, name, FSG_INODE_SYNTH, state, TRUE, e);
        }
    }

  if (state.flags & FSG_STATE_ALIAS)
    return synth_entry (fs, parent, name, FSG_INODE_ALIAS, state, FALSE, e);

  if (state.access == FSG_ACCESS_ABSENT && !(state.flags & FSG_STATE_SYNTHETIC))
    {
      /* Negative entry: the kernel caches "absent" for the timeout. */
      e->ino = 0;
      e->entry_timeout = parent->kind == FSG_INODE_HOST ? fsg_state_timeout (&pstate) : FSG_TIMEOUT_RO;
      return -ENOENT;
    }
  if (state.access == FSG_ACCESS_DENY)
    return fsg_fs_deny (fs, req, op ? op : "lookup", parent, name, &state,
                        fs->hide_denied ? ENOENT : EACCES);
  if (state.flags & FSG_STATE_SYNTHETIC)
    return synth_entry (fs, parent, name, FSG_INODE_SYNTH, state, stub_anc, e);

  if (parent->kind == FSG_INODE_HOST)
    {
      int pfd = fsg_inode_pin (fs, parent);
      int r;

      if (pfd < 0)
        return pfd;
      fd = openat_path (fs, pfd, name);
      /* read errno before unpinning: the unpin takes a mutex (a futex that
       * may leave EAGAIN in errno) and may close evicted fds */
      r = fd < 0 ? -errno : 0;
      fsg_inode_unpin (fs, parent);
      if (fd < 0)
        {
          if (r == -ENOENT && stub_anc)
            return synth_entry (fs, parent, name, FSG_INODE_SYNTH, state, TRUE, e);
          if (r == -ENOENT)
            e->entry_timeout = fsg_state_timeout (&pstate);
          return r;
        }
    }
  else
    {
      fd = root_fd_for (fs, parent, name);
      if (fd < 0)
        return fd;
    }

  /* AT_STATX_DONT_SYNC: if @fd is the root of our own mount (the view
   * contains its mount point), asking for fresh attributes would send a
   * request to ourselves. */
  if (statx (fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC,
             STATX_BASIC_STATS | STATX_BTIME, &stx) < 0)
    return -errno;
  if (fs->have_own_dev && makedev (stx.stx_dev_major, stx.stx_dev_minor) == fs->own_dev)
    {
      /* Never walk into our own mount: show the mount point as an empty
       * read-only directory. */
      state.access = FSG_ACCESS_RO;
      return synth_entry (fs, parent, name, FSG_INODE_STUB, state, FALSE, e);
    }

  if (fsg_fs_is_denied_id (fs, makedev (stx.stx_dev_major, stx.stx_dev_minor), stx.stx_ino))
    {
      FsgPathState ds = state;
      ds.access = FSG_ACCESS_DENY;
      return fsg_fs_deny (fs, req, op ? op : "lookup", parent, name, &ds,
                          fs->hide_denied ? ENOENT : EACCES);
    }

  memset (&e->attr, 0, sizeof e->attr);
  e->attr.st_dev = makedev (stx.stx_dev_major, stx.stx_dev_minor);
  e->attr.st_ino = stx.stx_ino;
  e->attr.st_mode = stx.stx_mode;
  e->attr.st_nlink = stx.stx_nlink;
  e->attr.st_uid = stx.stx_uid;
  e->attr.st_gid = stx.stx_gid;
  e->attr.st_rdev = makedev (stx.stx_rdev_major, stx.stx_rdev_minor);
  e->attr.st_size = stx.stx_size;
  e->attr.st_blksize = stx.stx_blksize;
  e->attr.st_blocks = stx.stx_blocks;
  e->attr.st_atim.tv_sec = stx.stx_atime.tv_sec;
  e->attr.st_atim.tv_nsec = stx.stx_atime.tv_nsec;
  e->attr.st_mtim.tv_sec = stx.stx_mtime.tv_sec;
  e->attr.st_mtim.tv_nsec = stx.stx_mtime.tv_nsec;
  e->attr.st_ctim.tv_sec = stx.stx_ctime.tv_sec;
  e->attr.st_ctim.tv_nsec = stx.stx_ctime.tv_nsec;
  fsg_fs_shown_ids (fs, fd, NULL, parent, &state, &e->attr);

  key.dev = e->attr.st_dev;
  key.ino = e->attr.st_ino;
  key.state = state;

  g_mutex_lock (&fs->lock);
  inode = g_hash_table_lookup (fs->inodes, &key);
  if (inode != NULL && !identity_matches (inode, &stx))
    {
      /* An evicted entry whose host inode number was reused: the old view
       * inode lives on for the kernel's references only. */
      g_hash_table_remove (fs->inodes, inode);
      inode->hashed = FALSE;
      inode = NULL;
    }
  if (inode != NULL)
    {
      inode->nlookup++;
      if (inode->fd < 0 && !inode->fd_permanent)
        inode_set_fd_locked (fs, inode, g_steal_fd (&fd)); /* a free reopen */
      else
        lru_touch_locked (fs, inode);
    }
  else
    {
      inode = g_new0 (FsgInode, 1);
      inode->kind = FSG_INODE_HOST;
      inode->fd = -1;
      inode->fd_permanent = parent->kind != FSG_INODE_HOST;
      inode->dev = key.dev;
      inode->ino = key.ino;
      inode->btime = statx_btime (&stx);
      inode->type = stx.stx_mode & S_IFMT;
      inode->generation = fs->next_generation++;
      inode->stub_anc = stub_anc;
      inode->state = state;
      inode->nlookup = 1;
      inode->parent = parent;
      parent->nchildren++;
      inode->name = g_strdup (name);
      inode->hashed = TRUE;
      g_hash_table_add (fs->inodes, inode);
      fs->n_inodes++;
      inode_set_fd_locked (fs, inode, g_steal_fd (&fd));
    }
  g_mutex_unlock (&fs->lock);

  e->attr.st_ino = fsg_fs_map_ino (fs, e->attr.st_dev, e->attr.st_ino);
  e->ino = fsg_inode_nodeid (fs, inode);
  e->generation = inode->generation;
  e->attr_timeout = e->entry_timeout = fsg_state_timeout (&state);
  return 0;
}

/* Drop @inode if nothing references it any more, then its parents;
 * called with fs->lock held. */
static void
inode_maybe_free_locked (FsgFs *fs, FsgInode *inode)
{
  while (inode != NULL && inode != fs->root && inode->nlookup == 0 && inode->nchildren == 0 &&
         inode->pins == 0)
    {
      FsgInode *parent = inode->parent;

      if (inode->hashed)
        g_hash_table_remove (fs->inodes, inode);
      if (inode->synth_key != NULL)
        g_hash_table_remove (fs->synth, inode->synth_key);
      inode_free (fs, inode);
      if (parent == NULL)
        break;
      parent->nchildren--;
      inode = parent;
    }
}

void
fsg_inode_forget (FsgFs *fs, FsgInode *inode, guint64 nlookup)
{
  g_mutex_lock (&fs->lock);
  if (inode->nlookup < nlookup)
    inode->nlookup = 0;
  else
    inode->nlookup -= nlookup;
  inode_maybe_free_locked (fs, inode);
  g_mutex_unlock (&fs->lock);
}

void
fsg_inode_renamed (FsgFs *fs, FsgInode *inode, FsgInode *newparent,
                   const char *newname, FsgPathState new_state)
{
  FsgInode *oldparent;

  g_mutex_lock (&fs->lock);
  if (inode->hashed)
    {
      g_hash_table_remove (fs->inodes, inode);
      inode->hashed = FALSE;
    }
  oldparent = inode->parent;
  newparent->nchildren++;
  inode->parent = newparent;
  g_free (inode->name);
  inode->name = g_strdup (newname);
  /* The moved inode is decided by its new place from now on. Inodes below
   * a moved directory keep their states: a directory only moves when
   * fsg_path_state_same_scope() holds, so every rule below it matches the
   * same way at the new place, and they are re-derived at their next
   * lookup after the kernel forgets them. */
  inode->state = new_state;
  if (!g_hash_table_contains (fs->inodes, inode))
    {
      g_hash_table_add (fs->inodes, inode);
      inode->hashed = TRUE;
    }
  if (oldparent != NULL)
    {
      oldparent->nchildren--;
      inode_maybe_free_locked (fs, oldparent);
    }
  g_mutex_unlock (&fs->lock);
}

static char *
read_comm (pid_t pid)
{
  char path[64];
  char buf[64];
  fsg_autofd int fd = -1;
  ssize_t n;

  if (pid <= 0)
    return NULL;
  snprintf (path, sizeof path, "/proc/%d/comm", (int) pid);
  fd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return NULL;
  n = FSG_RETRY (read (fd, buf, sizeof buf - 1));
  if (n <= 0)
    return NULL;
  buf[n] = '\0';
  if (n > 0 && buf[n - 1] == '\n')
    buf[n - 1] = '\0';
  return g_strdup (buf);
}

void
fsg_fs_audit (FsgFs *fs, fuse_req_t req, const char *op, FsgInode *parent,
              const char *name, FsgInode *parent2, const char *name2,
              const FsgPathState *state, gboolean denied, int err, const char *mode)
{
  FsgAuditEvent ev = { 0 };
  g_autofree char *path = NULL;
  g_autofree char *path2 = NULL;
  g_autofree char *rule = NULL;
  g_autofree char *comm = NULL;
  const struct fuse_ctx *ctx = req ? fuse_req_ctx (req) : NULL;

  if (denied)
    __atomic_fetch_add (&fs->denials, 1, __ATOMIC_RELAXED);
  if (!denied && fs->audit_level != FSG_AUDIT_ALL)
    return;
  if (fs->audit_fd < 0 && fs->audit_func == NULL)
    return;

  path = fsg_inode_path (fs, parent, name);
  if (parent2 != NULL)
    path2 = fsg_inode_path (fs, parent2, name2);
  if (state != NULL)
    rule = fsg_path_state_describe (fs->policy, state);
  if (ctx != NULL)
    comm = read_comm (ctx->pid);

  ev.time_us = g_get_real_time ();
  ev.op = op;
  ev.path = path;
  ev.path2 = path2;
  ev.denied = denied;
  ev.access = state ? state->access : FSG_ACCESS_ABSENT;
  ev.rule = rule;
  ev.err = err;
  ev.mode = mode;
  ev.pid = ctx ? ctx->pid : 0;
  ev.comm = comm;

  if (fs->audit_fd >= 0)
    {
      g_autofree char *json = fsg_audit_event_to_json (&ev);
      g_autofree char *line = g_strconcat (json, "\n", NULL);

      /* One write per record: O_APPEND keeps lines whole. */
      (void) fsg_write_all (fs->audit_fd, line, strlen (line));
    }
  if (fs->audit_func != NULL)
    fs->audit_func (&ev, fs->audit_data);
}
