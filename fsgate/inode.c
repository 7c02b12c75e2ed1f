/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The inode table of the policy view: lookup (the only place where a new
 * view inode is created), the names each inode is known by, FORGET
 * accounting, renames and unlinks made through the view, view paths
 * rebuilt from primary names, and the coherence of siblings.
 *
 * Host inodes are keyed by identity and decision (fs-private.h): the names
 * of one file with the same access share one view inode; a file reached
 * read-only under one name and writable under another is two, and neither
 * inherits the other's rights. Synthetic inodes (ancestors of roots, stubs,
 * alias symlinks) are keyed by (parent, name).
 *
 * Siblings: when a host file written through one view inode also has other
 * view inodes (only ones with another decision, so read-only ones),
 * fsg_inode_changed() tells the kernel to drop their pages and attributes
 * and stores the host's last byte into them, which raises the kernel's
 * size (under the writeback cache the kernel trusts its own size of a
 * regular file and never lowers it); after a change that may shrink the
 * file it also retires them: they leave the table, so the next lookup of
 * their names makes a fresh view inode with the host's size, and their
 * dentries are dropped. Opens of a read-only sibling or a retired inode
 * bypass the page cache.
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

#ifndef RENAME_EXCHANGE
# define RENAME_EXCHANGE (1 << 1)
#endif

/* ---- Keys --------------------------------------------------------------- */

/* What besides identity tells two view inodes of one host object apart:
 * access for every inode; for directories also what their children's
 * decisions are derived from. Depth and the deciding rule never are. */
static guint
inode_hash (gconstpointer p)
{
  const FsgInode *i = p;
  guint64 h = (guint64) i->ino * 0x9E3779B97F4A7C15ull;

  h ^= (guint64) i->dev + 0x632BE59BD9B4E019ull + (h << 6) + (h >> 2);
  h ^= (guint64) i->state.access << 8;
  if (i->type == S_IFDIR)
    {
      h ^= (GPOINTER_TO_SIZE (i->state.set) >> 3) * 31;
      h ^= (guint64) i->state.flags << 16;
    }
  return (guint) (h ^ (h >> 32));
}

static gboolean
same_key (const FsgInode *x, const FsgPathState *xs, const FsgInode *y, const FsgPathState *ys)
{
  if (x->dev != y->dev || x->ino != y->ino || x->type != y->type || xs->access != ys->access)
    return FALSE;
  if (x->type != S_IFDIR)
    return TRUE;
  return xs->flags == ys->flags && xs->set == ys->set && x->stub_anc == y->stub_anc;
}

static gboolean
inode_equal (gconstpointer a, gconstpointer b)
{
  const FsgInode *x = a, *y = b;

  return same_key (x, &x->state, y, &y->state);
}

static guint
name_hash (gconstpointer p)
{
  const FsgName *n = p;

  return g_str_hash (n->name) ^ (guint) (GPOINTER_TO_SIZE (n->parent) >> 4);
}

static gboolean
name_equal (gconstpointer a, gconstpointer b)
{
  const FsgName *x = a, *y = b;

  return x->parent == y->parent && strcmp (x->name, y->name) == 0;
}

void
fsg_inode_tables_init (FsgFs *fs)
{
  fs->inodes = g_hash_table_new (inode_hash, inode_equal);
  fs->names = g_hash_table_new (name_hash, name_equal);
  fs->synth = g_hash_table_new (g_str_hash, g_str_equal);
  fs->next_generation = 1;
  fs->next_fake_ino = 1;
}

/* ---- Names (all under fs->lock) ------------------------------------------ */

static FsgName *
name_find_locked (FsgFs *fs, FsgInode *parent, const char *name)
{
  FsgName probe = { .parent = parent, .name = (char *) name };

  return g_hash_table_lookup (fs->names, &probe);
}

static void
name_unindex_locked (FsgFs *fs, FsgName *n)
{
  if (!n->indexed)
    return;
  g_hash_table_remove (fs->names, n);
  n->indexed = FALSE;
}

/* Index @n; whatever other name was at its place is displaced. */
static void name_displace_locked (FsgFs *fs, FsgName *n);

static void
name_index_locked (FsgFs *fs, FsgName *n)
{
  FsgName *old = g_hash_table_lookup (fs->names, n);

  if (old == n)
    return;
  if (old != NULL)
    name_displace_locked (fs, old);
  g_hash_table_add (fs->names, n);
  n->indexed = TRUE;
}

/* Add (@parent, @name) to @inode's names (last, or first for a new inode). */
static FsgName *
name_add_locked (FsgFs *fs, FsgInode *inode, FsgInode *parent, const char *name, gboolean index)
{
  FsgName *n = g_new0 (FsgName, 1);
  FsgName **tail = &inode->names;

  n->inode = inode;
  n->parent = parent;
  n->name = g_strdup (name);
  parent->nchildren++;
  while (*tail != NULL)
    tail = &(*tail)->next;
  *tail = n;
  inode->n_names++;
  if (index)
    name_index_locked (fs, n);
  return n;
}

/* The primary name of @inode changed: take the state of the new one if it
 * is the same decision (it is, for names looked up into this inode). */
static void
primary_changed_locked (FsgFs *fs, FsgInode *inode)
{
  FsgName *p = inode->names;
  FsgPathState ps, s;

  if (p == NULL || inode->kind != FSG_INODE_HOST)
    return;
  ps = p->parent->state;
  s = fsg_policy_child_state (fs->policy, &ps, p->name);
  if (same_key (inode, &inode->state, inode, &s))
    inode->state = s; /* same key: no rehash */
}

/* Remove @n from its inode and free it; returns its parent, whose
 * nchildren dropped (the caller frees it if unused). */
static FsgInode *
name_free_locked (FsgFs *fs, FsgName *n)
{
  FsgInode *inode = n->inode;
  FsgInode *parent = n->parent;
  gboolean primary = inode->names == n;

  name_unindex_locked (fs, n);
  for (FsgName **p = &inode->names; *p != NULL; p = &(*p)->next)
    if (*p == n)
      {
        *p = n->next;
        break;
      }
  inode->n_names--;
  parent->nchildren--;
  g_free (n->name);
  g_free (n);
  if (primary)
    primary_changed_locked (fs, inode);
  return parent;
}

/* @n no longer names its inode's object (replaced, unlinked, or another
 * inode was found there): it leaves the index, and the inode, unless it is
 * the inode's last name (kept for the view path of an open, unlinked file). */
static void
name_displace_locked (FsgFs *fs, FsgName *n)
{
  name_unindex_locked (fs, n);
  if (n->inode->n_names > 1)
    fsg_inode_maybe_free_locked (fs, name_free_locked (fs, n));
}

/* Make sure @inode, just looked up at (@parent, @name), knows that name. */
static void
name_ensure_locked (FsgFs *fs, FsgInode *inode, FsgInode *parent, const char *name)
{
  FsgName *n = name_find_locked (fs, parent, name);

  if (n != NULL && n->inode == inode)
    return;
  for (FsgName *k = inode->names; k != NULL; k = k->next)
    if (k->parent == parent && strcmp (k->name, name) == 0)
      {
        name_index_locked (fs, k); /* known but displaced: here again */
        return;
      }
  if (inode->n_names < FSG_INODE_MAX_NAMES)
    name_add_locked (fs, inode, parent, name, TRUE);
  else if (n != NULL)
    name_displace_locked (fs, n);
}

/* Move @n to (@newparent, @newname). */
static void
name_move_locked (FsgFs *fs, FsgName *n, FsgInode *newparent, const char *newname,
                  const FsgPathState *new_state)
{
  FsgInode *inode = n->inode;
  FsgInode *oldparent = n->parent;

  name_unindex_locked (fs, n);
  newparent->nchildren++;
  n->parent = newparent;
  g_free (n->name);
  n->name = g_strdup (newname);
  name_index_locked (fs, n);
  oldparent->nchildren--;
  if (inode->names == n)
    {
      /* The moved inode is decided by its new place from now on. Inodes
       * below a moved directory keep their states: a directory only moves
       * when fsg_path_state_same_scope() holds, so every rule below it
       * matches the same way at the new place, and their keys stay the
       * same (a fresh lookup finds them). */
      if (inode->hashed && !same_key (inode, &inode->state, inode, new_state))
        {
          g_hash_table_remove (fs->inodes, inode);
          inode->hashed = FALSE;
          inode->state = *new_state;
          if (!g_hash_table_contains (fs->inodes, inode))
            {
              g_hash_table_add (fs->inodes, inode);
              inode->hashed = TRUE;
            }
        }
      else
        inode->state = *new_state;
    }
  fsg_inode_maybe_free_locked (fs, oldparent);
}

/* ---- Siblings (all under fs->lock) -------------------------------------- */

/* A new host non-directory: join the ring of the view inode of the same
 * file with the other access, if there is one (all names with the same
 * access are one inode, so a sibling can only differ in access). Returns
 * the node id of an inode that was alone until now (its attributes were
 * given to the kernel with a long timeout), else 0. */
static fuse_ino_t
sib_add_locked (FsgFs *fs, FsgInode *inode)
{
  FsgInode probe = *inode;
  FsgInode *other;
  fuse_ino_t was_alone = 0;

  probe.state.access = inode->state.access == FSG_ACCESS_RW ? FSG_ACCESS_RO : FSG_ACCESS_RW;
  other = g_hash_table_lookup (fs->inodes, &probe);
  if (other == NULL || other == inode)
    return 0;
  /* The same (dev, ino) but another object (an evicted inode whose number
   * was reused): not a sibling. Only the birth time can tell here. */
  if (other->btime != 0 && inode->btime != 0 && other->btime != inode->btime)
    return 0;
  if (other->sib_next == NULL)
    {
      other->sib_next = other->sib_prev = other;
      was_alone = fsg_inode_nodeid (fs, other);
    }
  inode->sib_next = other->sib_next;
  inode->sib_prev = other;
  other->sib_next->sib_prev = inode;
  other->sib_next = inode;
  for (FsgInode *s = inode->sib_next; s != inode; s = s->sib_next)
    __atomic_store_n (&s->shared, TRUE, __ATOMIC_RELAXED);
  __atomic_store_n (&inode->shared, TRUE, __ATOMIC_RELAXED);
  return was_alone;
}

static void
sib_remove_locked (FsgInode *inode)
{
  FsgInode *rest = inode->sib_next;

  if (rest == NULL)
    return;
  rest->sib_prev = inode->sib_prev;
  inode->sib_prev->sib_next = rest;
  inode->sib_next = inode->sib_prev = NULL;
  if (rest->sib_next == rest)
    {
      rest->sib_next = rest->sib_prev = NULL;
      /* A retired inode stays `shared` (attributes never cached, opens
       * bypass the page cache): its kernel size and pages may be older
       * than the host file, and the writable inode of a later lookup
       * cannot find it (it is out of the table) to keep it up to date. */
      if (!__atomic_load_n (&rest->retired, __ATOMIC_RELAXED))
        __atomic_store_n (&rest->shared, FALSE, __ATOMIC_RELAXED);
    }
}

/* ---- Lifetime ------------------------------------------------------------ */

static void
inode_free (FsgFs *fs, FsgInode *inode)
{
  fsg_fdcache_forget_locked (fs, inode);
  fs->n_inodes--;
  g_free (inode->synth_key);
  g_free (inode->handle);
  g_free (inode);
}

/* Unlink @inode from every table and free it with its names; parents whose
 * last child it was are pushed on @todo. */
static void
inode_remove_locked (FsgFs *fs, FsgInode *inode, GPtrArray *todo)
{
  while (inode->names != NULL)
    g_ptr_array_add (todo, name_free_locked (fs, inode->names));
  if (inode->hashed)
    g_hash_table_remove (fs->inodes, inode);
  if (inode->synth_key != NULL)
    g_hash_table_remove (fs->synth, inode->synth_key);
  sib_remove_locked (inode);
  inode_free (fs, inode);
}

static gboolean
inode_unused (FsgFs *fs, FsgInode *inode)
{
  return inode != fs->root && inode->nlookup == 0 && inode->nchildren == 0 && inode->pins == 0;
}

void
fsg_inode_maybe_free_locked (FsgFs *fs, FsgInode *inode)
{
  g_autoptr(GPtrArray) todo = NULL;

  /* Iterative: freeing a leaf may free a long chain of parents. */
  while (inode != NULL && inode_unused (fs, inode))
    {
      FsgInode *next = NULL;

      if (inode->n_names <= 1)
        {
          /* the common case, without allocating */
          if (inode->names != NULL)
            next = name_free_locked (fs, inode->names);
          if (inode->hashed)
            g_hash_table_remove (fs->inodes, inode);
          if (inode->synth_key != NULL)
            g_hash_table_remove (fs->synth, inode->synth_key);
          sib_remove_locked (inode);
          inode_free (fs, inode);
        }
      else
        {
          if (todo == NULL)
            todo = g_ptr_array_new ();
          inode_remove_locked (fs, inode, todo);
        }
      if (todo != NULL)
        while (g_ptr_array_remove_fast (todo, inode))
          ; /* freed: a parent of two of its names may be listed twice */
      if (next == NULL && todo != NULL && todo->len > 0)
        next = g_ptr_array_steal_index_fast (todo, todo->len - 1);
      while (next != NULL && !inode_unused (fs, next) && todo != NULL && todo->len > 0)
        next = g_ptr_array_steal_index_fast (todo, todo->len - 1);
      inode = next;
    }
}

void
fsg_inode_tables_clear (FsgFs *fs)
{
  GHashTableIter it;
  gpointer key;
  g_autoptr(GPtrArray) all = g_ptr_array_new ();
  GHashTable *seen = g_hash_table_new (NULL, NULL);

  /* Every live inode but the root is reachable as the inode of a name or
   * the parent of one, or from the tables. Unhashed inodes without a name
   * the kernel knew are only reachable through the kernel's references;
   * they leak here only if the kernel never sent FORGET, which ends with
   * the process anyway. */
  if (fs->inodes != NULL)
    {
      g_hash_table_iter_init (&it, fs->inodes);
      while (g_hash_table_iter_next (&it, &key, NULL))
        if (g_hash_table_add (seen, key))
          g_ptr_array_add (all, key);
    }
  if (fs->names != NULL)
    {
      g_hash_table_iter_init (&it, fs->names);
      while (g_hash_table_iter_next (&it, &key, NULL))
        {
          FsgName *n = key;
          if (n->inode != fs->root && g_hash_table_add (seen, n->inode))
            g_ptr_array_add (all, n->inode);
          if (n->parent != fs->root && g_hash_table_add (seen, n->parent))
            g_ptr_array_add (all, n->parent);
        }
    }
  if (fs->synth != NULL)
    {
      g_hash_table_iter_init (&it, fs->synth);
      while (g_hash_table_iter_next (&it, NULL, &key))
        if (g_hash_table_add (seen, key))
          g_ptr_array_add (all, key);
    }
  for (guint i = 0; i < all->len; i++)
    {
      FsgInode *inode = all->pdata[i];

      while (inode->names != NULL)
        {
          FsgName *n = inode->names;
          inode->names = n->next;
          g_free (n->name);
          g_free (n);
        }
    }
  for (guint i = 0; i < all->len; i++)
    inode_free (fs, all->pdata[i]);
  g_hash_table_unref (seen);
  g_clear_pointer (&fs->inodes, g_hash_table_unref);
  g_clear_pointer (&fs->names, g_hash_table_unref);
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
  for (FsgInode *i = inode; i != NULL && i->names != NULL; i = i->names->parent)
    g_ptr_array_add (parts, i->names->name);
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

double
fsg_inode_attr_timeout (FsgInode *inode, const FsgPathState *s)
{
  if (inode->kind != FSG_INODE_HOST)
    return FSG_TIMEOUT_RO;
  /* A file with a read-only and a writable name: its attributes can
   * change through the other view inode, and under kernel passthrough no
   * write reaches the daemon to say so. Not cached (such files are rare). */
  if (__atomic_load_n (&inode->shared, __ATOMIC_RELAXED))
    return 0.0;
  return fsg_state_timeout (s);
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
  name_add_locked (fs, inode, parent, name, FALSE);
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
fsg_inode_lookup (FsgFs *fs, fuse_req_t req, FsgInode *parent, const char *name,
                  struct fuse_entry_param *e, const char *op)
{
  return fsg_inode_lookup_notify_after (fs, req, parent, name, e, op, NULL);
}

int
fsg_inode_lookup_notify_after (FsgFs *fs, fuse_req_t req, FsgInode *parent, const char *name,
                               struct fuse_entry_param *e, const char *op,
                               fuse_ino_t *out_notify)
{
  FsgPathState pstate, state;
  gboolean stub_anc = FALSE;
  fsg_autofd int fd = -1;
  struct statx stx;
  FsgInode key, *inode;
  struct file_handle *handle = NULL;
  int mount_id = -1;
  gboolean handle_done = FALSE;
  fuse_ino_t now_shared = 0;

  if (out_notify != NULL)
    *out_notify = 0;
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
                        fsg_fs_hides (fs, parent, &state) ? ENOENT : EACCES);
  if (state.flags & FSG_STATE_SYNTHETIC)
    return synth_entry (fs, parent, name, FSG_INODE_SYNTH, state, stub_anc, e);

  if (parent->kind == FSG_INODE_HOST)
    {
      int pfd = fsg_inode_pin (fs, parent);
      int r;

      if (pfd < 0)
        return pfd;
      fd = fsg_fdcache_open_path (fs, pfd, name);
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

  /* issue 14 item 6: a procfs or sysfs mounted below a root shows the host */
  if (S_ISDIR (stx.stx_mode) && makedev (stx.stx_dev_major, stx.stx_dev_minor) != parent->dev)
    {
      const char *pseudo = fsg_pseudo_fs_name (fd);

      if (pseudo != NULL)
        {
          g_autofree char *what = g_strdup_printf ("lookup (%s mount)", pseudo);
          FsgPathState ds = state;

          ds.access = FSG_ACCESS_DENY;
          return fsg_fs_deny (fs, req, what, parent, name, &ds, fs->hide_denied ? ENOENT : EACCES);
        }
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

  memset (&key, 0, sizeof key);
  key.dev = e->attr.st_dev;
  key.ino = e->attr.st_ino;
  key.type = stx.stx_mode & S_IFMT;
  key.stub_anc = stub_anc;
  key.state = state;
  g_mutex_lock (&fs->lock);
  for (;;)
    {
      inode = g_hash_table_lookup (fs->inodes, &key);
      if (inode != NULL && !fsg_inode_identity_matches (inode, &stx))
        {
          /* An evicted entry whose host inode number was reused: the old
           * view inode lives on for the kernel's references only. */
          g_hash_table_remove (fs->inodes, inode);
          inode->hashed = FALSE;
          inode = NULL;
        }
      if (inode != NULL || handle_done)
        break;
      /* A new inode needs its file handle: a syscall, made without the
       * lock and only on this path (cache hits need none); then look
       * again, another thread may have made the inode meanwhile. */
      g_mutex_unlock (&fs->lock);
      handle = fsg_fdcache_get_handle (fs, fd, &mount_id);
      handle_done = TRUE;
      g_mutex_lock (&fs->lock);
    }
  if (inode != NULL)
    {
      inode->nlookup++;
      name_ensure_locked (fs, inode, parent, name);
      if (inode->fd < 0 && !inode->fd_permanent)
        fsg_fdcache_set_fd_locked (fs, inode, g_steal_fd (&fd)); /* a free reopen */
      else
        fsg_fdcache_touch_locked (fs, inode);
    }
  else
    {
      inode = g_new0 (FsgInode, 1);
      inode->kind = FSG_INODE_HOST;
      inode->fd = -1;
      inode->fd_permanent = parent->kind != FSG_INODE_HOST;
      inode->dev = key.dev;
      inode->ino = key.ino;
      inode->btime = fsg_statx_btime (&stx);
      inode->type = key.type;
      inode->handle = g_steal_pointer (&handle);
      inode->mount_id = mount_id;
      inode->generation = fs->next_generation++;
      inode->stub_anc = stub_anc;
      inode->state = state;
      inode->nlookup = 1;
      name_add_locked (fs, inode, parent, name, TRUE);
      inode->hashed = TRUE;
      g_hash_table_add (fs->inodes, inode);
      if (inode->type != S_IFDIR)
        now_shared = sib_add_locked (fs, inode);
      fs->n_inodes++;
      fsg_fdcache_set_fd_locked (fs, inode, g_steal_fd (&fd));
    }
  g_mutex_unlock (&fs->lock);
  g_free (handle);
  /* The first sibling of a file: the kernel may hold the other inode's
   * attributes for a day. Attributes only (a negative offset): no page is
   * touched. op_lookup sends it after its reply (@out_notify): the kernel
   * may wait for an inode being freed meanwhile, and a LOOKUP holds the
   * parent directory's lock and a worker thread. Other callers (create,
   * readdirplus) make new files, which rarely have a sibling: sent here. */
  if (now_shared != 0 && out_notify != NULL)
    *out_notify = now_shared;
  else if (now_shared != 0 && fs->se != NULL)
    (void) fuse_lowlevel_notify_inval_inode (fs->se, now_shared, -1, 0);

  e->attr.st_ino = fsg_fs_map_ino (fs, e->attr.st_dev, e->attr.st_ino);
  e->ino = fsg_inode_nodeid (fs, inode);
  e->generation = inode->generation;
  /* A name of a file that can change through another view inode: short,
   * so that a name whose inode was retired (fsg_inode_changed) is looked
   * up again soon even where no invalidation reached it. */
  e->entry_timeout = MIN (fsg_state_timeout (&state),
                          __atomic_load_n (&inode->shared, __ATOMIC_RELAXED) ? FSG_TIMEOUT_RW : FSG_TIMEOUT_RO);
  e->attr_timeout = fsg_inode_attr_timeout (inode, &state);
  return 0;
}

void
fsg_inode_forget (FsgFs *fs, FsgInode *inode, guint64 nlookup)
{
  g_mutex_lock (&fs->lock);
  if (inode->nlookup < nlookup)
    inode->nlookup = 0;
  else
    inode->nlookup -= nlookup;
  fsg_inode_maybe_free_locked (fs, inode);
  g_mutex_unlock (&fs->lock);
}

/* The name at (@parent, @name) if it names the object @st. */
static FsgName *
name_of_object_locked (FsgFs *fs, FsgInode *parent, const char *name, const struct stat *st)
{
  FsgName *n = name_find_locked (fs, parent, name);

  if (n == NULL || n->inode->dev != st->st_dev || n->inode->ino != st->st_ino)
    return NULL;
  return n;
}

void
fsg_inode_renamed (FsgFs *fs, FsgInode *parent, const char *name, const struct stat *ost,
                   const FsgPathState *old_state, FsgInode *newparent, const char *newname,
                   const struct stat *nst, const FsgPathState *new_state, unsigned int flags)
{
  gboolean exchange = (flags & RENAME_EXCHANGE) && nst != NULL;
  FsgName *src, *dst;

  /* Two names of one file: rename(2) does nothing. */
  if (!exchange && nst != NULL && nst->st_dev == ost->st_dev && nst->st_ino == ost->st_ino)
    return;

  g_mutex_lock (&fs->lock);
  src = name_of_object_locked (fs, parent, name, ost);
  dst = name_find_locked (fs, newparent, newname);
  if (dst != NULL && (nst == NULL || dst->inode->dev != nst->st_dev || dst->inode->ino != nst->st_ino))
    {
      name_displace_locked (fs, dst); /* a stale entry */
      dst = NULL;
    }
  if (exchange)
    {
      if (src != NULL)
        name_unindex_locked (fs, src);
      if (dst != NULL)
        name_unindex_locked (fs, dst);
      if (src != NULL)
        name_move_locked (fs, src, newparent, newname, new_state);
      if (dst != NULL)
        name_move_locked (fs, dst, parent, name, old_state);
    }
  else
    {
      if (dst != NULL)
        name_displace_locked (fs, dst); /* the replaced object's name */
      if (src != NULL)
        name_move_locked (fs, src, newparent, newname, new_state);
    }
  g_mutex_unlock (&fs->lock);
}

void
fsg_inode_unlinked (FsgFs *fs, FsgInode *parent, const char *name)
{
  FsgName *n;

  g_mutex_lock (&fs->lock);
  if ((n = name_find_locked (fs, parent, name)) != NULL)
    name_displace_locked (fs, n);
  g_mutex_unlock (&fs->lock);
}

typedef struct
{
  fuse_ino_t parent;
  char *name;
} FsgStaleEntry;

static void
stale_entry_clear (gpointer p)
{
  g_free (((FsgStaleEntry *) p)->name);
}

/* The size of @inode's host file and its last byte (FALSE: unknown, or
 * not a non-empty regular file). */
static gboolean
host_last_byte (FsgFs *fs, FsgInode *inode, off_t *out_size, char *out_last)
{
  fsg_autopin FsgPin pin = { 0 };
  fsg_autofd int fd = -1;
  char proc[64];
  struct stat st;
  int pfd;

  if (inode->type != S_IFREG || (pfd = fsg_pin (&pin, fs, inode)) < 0)
    return FALSE;
  snprintf (proc, sizeof proc, "/proc/self/fd/%d", pfd);
  fd = open (proc, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0 || fstat (fd, &st) < 0 || !S_ISREG (st.st_mode) || st.st_size <= 0)
    return FALSE;
  if (pread (fd, out_last, 1, st.st_size - 1) != 1)
    return FALSE;
  *out_size = st.st_size;
  return TRUE;
}

void
fsg_inode_changed (FsgFs *fs, FsgInode *inode, gboolean may_shrink)
{
  g_autoptr(GArray) inodes = NULL;
  g_autoptr(GArray) entries = NULL;
  gboolean have_last;
  off_t size = 0;
  char last = 0;

  if (!__atomic_load_n (&inode->shared, __ATOMIC_RELAXED))
    return;
  if (fsg_inode_get_state (fs, inode).access != FSG_ACCESS_RW)
    return; /* nothing changes a file through a read-only inode */
  /* A shrink announced by fsg_inode_hold_shared(), here or in the FLUSH
   * that overtook its fsg_inode_changed_unhold(). */
  if (__atomic_exchange_n (&inode->shrunk, FALSE, __ATOMIC_RELAXED))
    may_shrink = TRUE;
  have_last = fs->writeback && host_last_byte (fs, inode, &size, &last);
  inodes = g_array_new (FALSE, FALSE, sizeof (fuse_ino_t));
  entries = g_array_new (FALSE, FALSE, sizeof (FsgStaleEntry));
  g_array_set_clear_func (entries, stale_entry_clear);

  g_mutex_lock (&fs->lock);
  for (FsgInode *s = inode->sib_next; s != NULL && s != inode; s = s->sib_next)
    {
      fuse_ino_t id = fsg_inode_nodeid (fs, s);

      g_array_append_val (inodes, id);
      if (!may_shrink)
        continue;
      /* The kernel never lowers its own size of a regular file under the
       * writeback cache: out of the table, so that the next lookup of its
       * names makes a new view inode with the host's size. Told again if
       * retired already: the caller may be a request whose caller must
       * not return before the kernel dropped the names. */
      if (s->hashed)
        {
          g_hash_table_remove (fs->inodes, s);
          s->hashed = FALSE;
        }
      __atomic_store_n (&s->retired, TRUE, __ATOMIC_RELAXED);
      for (FsgName *n = s->names; n != NULL; n = n->next)
        if (n->indexed)
          {
            FsgStaleEntry ent = { fsg_inode_nodeid (fs, n->parent), g_strdup (n->name) };
            g_array_append_val (entries, ent);
          }
    }
  g_mutex_unlock (&fs->lock);

  /* Node ids only go to the kernel, which looks them up itself: one freed
   * meanwhile is harmless. */
  if (fs->se == NULL)
    return;
  for (guint i = 0; i < inodes->len; i++)
    {
      fuse_ino_t id = g_array_index (inodes, fuse_ino_t, i);

      /* Pages and attributes (the size excepted, under the writeback
       * cache). */
      (void) fuse_lowlevel_notify_inval_inode (fs->se, id, 0, 0);
      if (have_last)
        {
          /* The host's last byte stored at its place: the kernel raises
           * its size of the inode to the host's (never lowers it; an empty
           * store would not move it). */
          struct fuse_bufvec one = FUSE_BUFVEC_INIT (1);

          one.buf[0].mem = &last;
          (void) fuse_lowlevel_notify_store (fs->se, id, size - 1, &one, 0);
        }
    }
  for (guint i = 0; i < entries->len; i++)
    {
      FsgStaleEntry *ent = &g_array_index (entries, FsgStaleEntry, i);

      (void) fuse_lowlevel_notify_inval_entry (fs->se, ent->parent, ent->name, strlen (ent->name));
    }
}

FsgInode *
fsg_inode_hold_shared (FsgFs *fs, FsgInode *inode, gboolean may_shrink)
{
  if (inode->kind != FSG_INODE_HOST || !__atomic_load_n (&inode->shared, __ATOMIC_RELAXED))
    return NULL;
  /* Set before the reply: a FLUSH may overtake fsg_inode_changed_unhold(). */
  if (may_shrink)
    __atomic_store_n (&inode->shrunk, TRUE, __ATOMIC_RELAXED);
  g_mutex_lock (&fs->lock);
  inode->pins++; /* keeps the inode, not necessarily an fd */
  g_mutex_unlock (&fs->lock);
  return inode;
}

void
fsg_inode_changed_unhold (FsgFs *fs, FsgInode *held)
{
  if (held == NULL)
    return;
  fsg_inode_changed (fs, held, FALSE);
  fsg_inode_unpin (fs, held);
}

gboolean
fsg_inode_reads_around_cache (FsgFs *fs, FsgInode *inode)
{
  (void) fs;
  if (__atomic_load_n (&inode->retired, __ATOMIC_RELAXED))
    return TRUE;
  return __atomic_load_n (&inode->shared, __ATOMIC_RELAXED) &&
         fsg_inode_get_state (fs, inode).access != FSG_ACCESS_RW;
}
