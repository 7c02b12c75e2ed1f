/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * File locks of the view, forwarded to the host so that a process in the
 * view and one on the host (or in another view) exclude each other.
 *
 * flock(2): on the open file's own host fd (fi->fh). One FUSE open is one
 * kernel struct file, so this has flock's per-open-file-description
 * semantics exactly (dup and fork share, separate opens conflict).
 *
 * fcntl(2) record locks: the kernel sends them with a lock owner: the
 * process (its files_struct) for classic POSIX locks, the struct file for
 * OFD locks taken in the view. Each (inode, owner) gets a host fd of its
 * own, reopened from an open file of the owner, on which the locks are
 * taken as OFD locks (F_OFD_SETLK/F_OFD_SETLKW/F_OFD_GETLK). So the locks
 * of one owner never conflict with each other and merge and split as
 * POSIX says, while different owners conflict, as do host processes (OFD
 * and POSIX locks conflict with each other on the host). Putting them on
 * fi->fh instead would make two opens of one file by one process conflict.
 *
 * Release: POSIX locks go when the owner closes any fd of the file: the
 * kernel then sends FLUSH with the owner (fsg_locks_flush). An open
 * answered with noflush (read-only or passthrough opens) gets no FLUSH, so
 * opens of an inode that has record locks are answered without noflush
 * (fsg_locks_inode_has_locks()); an open made noflush before the first
 * lock drops, at its RELEASE, the locks of every owner that locked through
 * it (fsg_locks_release), i.e. when the last fd of that open is closed
 * rather than at the first close, and closing it does not release locks
 * taken through another open (a difference from POSIX that only a process
 * holding two opens of one locked file can see). OFD locks of the view go
 * at the RELEASE of their open, as on the host. flock locks are dropped explicitly at
 * RELEASE (the host struct file may live on as a passthrough backing file).
 *
 * Blocking requests (F_SETLKW, flock without LOCK_NB) first try without
 * blocking; when that fails they wait in a thread of their own, not in a
 * session worker, so any number of blocked lockers never stalls the view.
 * At most FSG_LOCK_MAX_WAITERS wait at a time (then ENOLCK). An INTERRUPT
 * from the kernel (the caller got a signal, or was killed) wakes the
 * waiter with a signal and the request ends with EINTR, unless the lock
 * was granted first.
 *
 * Cache coherence: a lock is how programs that share a file (sqlite, pip's
 * caches) agree on when its contents may be read, so without kernel
 * passthrough (whose page cache is the host file's) the view's cached
 * pages and attributes of the file are dropped when a lock is granted,
 * and dirty pages are written back (FUSE's launder) before an unlock is
 * answered: what the host wrote under its lock is read, and what the view
 * wrote is on the host when the lock is released. Known gap: with the
 * writeback cache the kernel keeps its own idea of the file's size, so a
 * file that the host grew or shrank while the view had it cached keeps
 * the old size in the view until the kernel forgets the inode.
 *
 * Limit: an owner's host fd has the access mode of the open it first
 * locked through; a later write lock through a writable open of the same
 * owner, after read locks through a read-only open, fails with ENOLCK
 * (the read locks cannot be carried over to a new host fd).
 */
#include "config.h"

#include "fsgate/fs-private.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#define FSG_LOCK_SIGNAL (SIGRTMIN + 7)
#define FSG_LOCK_MAX_WAITERS 512

typedef struct
{
  FsgInode *inode;     /* pinned by every open listed in fhs */
  guint64 owner;
  int fd;              /* host fd carrying this owner's OFD locks */
  GArray *fhs;         /* int: host fds of the opens it locked through */
} LockOwner;

struct _FsgLocks
{
  GMutex lock;
  GCond cond;
  GHashTable *owners;  /* LockOwner -> LockOwner, keyed by (inode, owner) */
  GHashTable *inodes;  /* FsgInode -> number of its LockOwners */
  GHashTable *waiters; /* LockWait set */
  gboolean stopping;
};

typedef struct
{
  FsgLocks *locks;
  FsgFs *fs;
  FsgInode *inode;     /* pinned by the open the request came through */
  fuse_req_t req;
  int fd;              /* a dup: shares the open file description */
  gboolean is_flock;
  int flock_op;
  struct flock fl;
  pthread_t thread;
  gboolean thread_set;
  int interrupted;     /* atomic */
  int done;            /* atomic */
} LockWait;

static guint
owner_hash (gconstpointer p)
{
  const LockOwner *o = p;

  return g_direct_hash (o->inode) ^ (guint) (o->owner ^ (o->owner >> 32));
}

static gboolean
owner_equal (gconstpointer a, gconstpointer b)
{
  const LockOwner *x = a, *y = b;

  return x->inode == y->inode && x->owner == y->owner;
}

static void
owner_free (gpointer p)
{
  LockOwner *o = p;

  if (o->fd >= 0)
    close (o->fd);
  g_array_unref (o->fhs);
  g_free (o);
}

static void
wake_handler (int sig)
{
  (void) sig;
}

FsgLocks *
fsg_locks_new (void)
{
  FsgLocks *locks = g_new0 (FsgLocks, 1);
  struct sigaction sa = { 0 };

  g_mutex_init (&locks->lock);
  g_cond_init (&locks->cond);
  locks->owners = g_hash_table_new_full (owner_hash, owner_equal, NULL, owner_free);
  locks->inodes = g_hash_table_new (NULL, NULL);
  locks->waiters = g_hash_table_new (NULL, NULL);
  /* No SA_RESTART: the signal ends a waiter's F_OFD_SETLKW / flock. */
  sa.sa_handler = wake_handler;
  sigemptyset (&sa.sa_mask);
  (void) sigaction (FSG_LOCK_SIGNAL, &sa, NULL);
  return locks;
}

void
fsg_locks_free (FsgLocks *locks)
{
  if (locks == NULL)
    return;
  /* Wake every waiter (they answer EINTR) and wait until they are gone. */
  g_mutex_lock (&locks->lock);
  locks->stopping = TRUE;
  while (g_hash_table_size (locks->waiters) > 0)
    {
      GHashTableIter it;
      gpointer w;

      g_hash_table_iter_init (&it, locks->waiters);
      while (g_hash_table_iter_next (&it, &w, NULL))
        if (((LockWait *) w)->thread_set)
          pthread_kill (((LockWait *) w)->thread, FSG_LOCK_SIGNAL);
      g_cond_wait_until (&locks->cond, &locks->lock, g_get_monotonic_time () + 10 * G_TIME_SPAN_MILLISECOND);
    }
  g_mutex_unlock (&locks->lock);
  g_hash_table_destroy (locks->owners);
  g_hash_table_destroy (locks->inodes);
  g_hash_table_destroy (locks->waiters);
  g_mutex_clear (&locks->lock);
  g_cond_clear (&locks->cond);
  g_free (locks);
}

/* Called by libfuse (another worker, holding the request's lock) when the
 * kernel interrupts a waiting request. Keep signalling until the waiter
 * has noticed: a signal that lands just before it enters the blocking call
 * would otherwise be lost. */
static void
lock_interrupted (fuse_req_t req, void *data)
{
  LockWait *w = data;

  (void) req;
  g_atomic_int_set (&w->interrupted, 1);
  if (pthread_equal (w->thread, pthread_self ()))
    return; /* registered after the interrupt: the waiter itself */
  while (!g_atomic_int_get (&w->done))
    {
      pthread_kill (w->thread, FSG_LOCK_SIGNAL);
      g_usleep (1000);
    }
}

/* See "Cache coherence" above: called when a lock was just granted (the
 * cached pages and attributes go) and before an unlock is answered (the
 * same invalidation writes dirty pages back first: FUSE's launder). */
static void
sync_cache (FsgFs *fs, FsgInode *inode)
{
  if (fs->passthrough || fs->se == NULL)
    return;
  (void) fuse_lowlevel_notify_inval_inode (fs->se, fsg_inode_nodeid (fs, inode), 0, 0);
}

static void *
wait_thread (void *data)
{
  LockWait *w = data;
  FsgLocks *locks = w->locks;
  sigset_t set;
  int r;

  sigemptyset (&set);
  sigaddset (&set, FSG_LOCK_SIGNAL);
  pthread_sigmask (SIG_UNBLOCK, &set, NULL);
  g_mutex_lock (&locks->lock);
  w->thread = pthread_self ();
  w->thread_set = TRUE;
  g_mutex_unlock (&locks->lock);
  fuse_req_interrupt_func (w->req, lock_interrupted, w);
  for (;;)
    {
      gboolean stopping;

      g_mutex_lock (&locks->lock);
      stopping = locks->stopping;
      g_mutex_unlock (&locks->lock);
      if (stopping || g_atomic_int_get (&w->interrupted))
        {
          r = -EINTR;
          break;
        }
      r = w->is_flock ? flock (w->fd, w->flock_op) : fcntl (w->fd, F_OFD_SETLKW, &w->fl);
      if (r == 0)
        break;
      if (errno != EINTR)
        {
          r = -errno;
          break;
        }
    }
  g_atomic_int_set (&w->done, 1);
  if (r == 0)
    sync_cache (w->fs, w->inode);
  /* Takes the request's lock: returns once a running lock_interrupted()
   * is over, and no new one can start. */
  fuse_req_interrupt_func (w->req, NULL, NULL);
  fuse_reply_err (w->req, -r);
  close (w->fd);
  g_mutex_lock (&locks->lock);
  g_hash_table_remove (locks->waiters, w);
  g_cond_broadcast (&locks->cond);
  g_mutex_unlock (&locks->lock);
  g_free (w);
  return NULL;
}

/* Wait for the lock in a thread of its own; the reply comes from there.
 * Takes a dup of @fd. Returns 0 or -errno (then nobody replied). */
static int
start_wait (FsgFs *fs, fuse_req_t req, FsgInode *inode, int fd, gboolean is_flock, int flock_op,
            const struct flock *fl)
{
  FsgLocks *locks = fs->locks;
  LockWait *w;
  pthread_attr_t attr;
  pthread_t th;
  int r;

  g_mutex_lock (&locks->lock);
  if (locks->stopping || g_hash_table_size (locks->waiters) >= FSG_LOCK_MAX_WAITERS)
    {
      g_mutex_unlock (&locks->lock);
      return -ENOLCK;
    }
  g_mutex_unlock (&locks->lock);
  w = g_new0 (LockWait, 1);
  w->locks = locks;
  w->fs = fs;
  w->inode = inode;
  w->req = req;
  w->is_flock = is_flock;
  w->flock_op = flock_op;
  if (fl != NULL)
    w->fl = *fl;
  w->fd = fcntl (fd, F_DUPFD_CLOEXEC, 0);
  if (w->fd < 0)
    {
      r = errno == EMFILE ? -ENOLCK : -errno;
      g_free (w);
      return r;
    }
  g_mutex_lock (&locks->lock);
  g_hash_table_add (locks->waiters, w);
  g_mutex_unlock (&locks->lock);
  pthread_attr_init (&attr);
  pthread_attr_setdetachstate (&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize (&attr, 128 * 1024);
  r = pthread_create (&th, &attr, wait_thread, w);
  pthread_attr_destroy (&attr);
  if (r != 0)
    {
      g_mutex_lock (&locks->lock);
      g_hash_table_remove (locks->waiters, w);
      g_cond_broadcast (&locks->cond);
      g_mutex_unlock (&locks->lock);
      close (w->fd);
      g_free (w);
      return -ENOLCK;
    }
  return 0;
}

static gboolean
array_has_fd (GArray *a, int fd)
{
  for (guint i = 0; i < a->len; i++)
    if (g_array_index (a, int, i) == fd)
      return TRUE;
  return FALSE;
}

/* fcntl(@cmd) on the host fd of (@inode, @owner), under the table's lock
 * (so a concurrent release cannot close it meanwhile); non-blocking
 * commands only. Returns 0, -errno, or -ENOENT when the owner has none. */
static int
owner_fcntl (FsgFs *fs, FsgInode *inode, guint64 owner, int cmd, struct flock *fl)
{
  FsgLocks *locks = fs->locks;
  LockOwner key = { inode, owner, -1, NULL };
  LockOwner *o;
  int r;

  g_mutex_lock (&locks->lock);
  o = g_hash_table_lookup (locks->owners, &key);
  r = o == NULL ? -ENOENT : fcntl (o->fd, cmd, fl) == 0 ? 0 : -errno;
  g_mutex_unlock (&locks->lock);
  return r;
}

/* The host fd of (@inode, @owner), created from the open @fh if it has
 * none, and @fh recorded as one of its opens. Returns the fd (owned by the
 * table; it stays open while @fh is open) or -errno. */
static int
owner_fd (FsgFs *fs, FsgInode *inode, guint64 owner, int fh)
{
  FsgLocks *locks = fs->locks;
  LockOwner key = { inode, owner, -1, NULL };
  LockOwner *o;
  char proc[64];
  int fd, flags;

  g_mutex_lock (&locks->lock);
  o = g_hash_table_lookup (locks->owners, &key);
  if (o != NULL)
    {
      if (!array_has_fd (o->fhs, fh))
        g_array_append_val (o->fhs, fh);
      fd = o->fd;
      g_mutex_unlock (&locks->lock);
      return fd;
    }
  g_mutex_unlock (&locks->lock);

  /* A new open file description of the same host file, with the access
   * mode of the open it comes from (the kernel has checked that mode
   * against the lock type). O_NONBLOCK: a FIFO must not block here. */
  flags = fcntl (fh, F_GETFL);
  if (flags < 0)
    return -errno;
  snprintf (proc, sizeof proc, "/proc/self/fd/%d", fh);
  fd = open (proc, (flags & O_ACCMODE) | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0 && (errno == EMFILE || errno == ENFILE))
    {
      fsg_fs_relieve_fd_pressure (fs);
      fd = open (proc, (flags & O_ACCMODE) | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    }
  if (fd < 0 && errno != EMFILE && errno != ENFILE)
    fd = fcntl (fh, F_DUPFD_CLOEXEC, 0); /* cannot reopen (a FIFO without peer): per open */
  if (fd < 0)
    return -ENOLCK;

  g_mutex_lock (&locks->lock);
  o = g_hash_table_lookup (locks->owners, &key);
  if (o != NULL)
    {
      /* Another request of the same owner was first. */
      if (!array_has_fd (o->fhs, fh))
        g_array_append_val (o->fhs, fh);
      g_mutex_unlock (&locks->lock);
      close (fd);
      return o->fd;
    }
  o = g_new0 (LockOwner, 1);
  o->inode = inode;
  o->owner = owner;
  o->fd = fd;
  o->fhs = g_array_new (FALSE, FALSE, sizeof (int));
  g_array_append_val (o->fhs, fh);
  g_hash_table_add (locks->owners, o);
  g_hash_table_insert (locks->inodes, inode,
                       GUINT_TO_POINTER (GPOINTER_TO_UINT (g_hash_table_lookup (locks->inodes, inode)) + 1));
  g_mutex_unlock (&locks->lock);
  return fd;
}

void
fsg_locks_getlk (FsgFs *fs, fuse_req_t req, FsgInode *inode, struct fuse_file_info *fi,
                 struct flock *lock)
{
  struct flock fl = *lock;
  int r;

  fl.l_pid = 0;
  /* Without locks of its own, ask through the open's fd: it carries no
   * OFD locks, so every conflicting lock shows. */
  r = owner_fcntl (fs, inode, fi->lock_owner, F_OFD_GETLK, &fl);
  if (r == -ENOENT)
    r = fcntl ((int) fi->fh, F_OFD_GETLK, &fl) == 0 ? 0 : -errno;
  if (r < 0)
    {
      fuse_reply_err (req, -r);
      return;
    }
  if (fl.l_pid < 0)
    fl.l_pid = 0; /* an OFD lock: no process to name */
  fuse_reply_lock (req, &fl);
}

void
fsg_locks_setlk (FsgFs *fs, fuse_req_t req, FsgInode *inode, struct fuse_file_info *fi,
                 struct flock *lock, int sleep)
{
  struct flock fl = *lock;
  int fd, r;

  fl.l_pid = 0;
  if (fl.l_type == F_UNLCK)
    {
      sync_cache (fs, inode);
      r = owner_fcntl (fs, inode, fi->lock_owner, F_OFD_SETLK, &fl);
      fuse_reply_err (req, r == -ENOENT ? 0 : -r);
      return;
    }
  fd = owner_fd (fs, inode, fi->lock_owner, (int) fi->fh);
  if (fd < 0)
    {
      fuse_reply_err (req, -fd);
      return;
    }
  if (fcntl (fd, F_OFD_SETLK, &fl) == 0)
    {
      sync_cache (fs, inode);
      fuse_reply_err (req, 0);
      return;
    }
  r = errno;
  if (r == EBADF)
    r = ENOLCK; /* the owner's host fd lacks the mode (see the top) */
  if (sleep && (r == EAGAIN || r == EACCES) && (r = -start_wait (fs, req, inode, fd, FALSE, 0, &fl)) == 0)
    return;
  fuse_reply_err (req, r);
}

void
fsg_locks_flock (FsgFs *fs, fuse_req_t req, FsgInode *inode, struct fuse_file_info *fi, int op)
{
  int r;

  if (op & LOCK_UN)
    sync_cache (fs, inode);
  if (flock ((int) fi->fh, op | LOCK_NB) == 0)
    {
      if (!(op & LOCK_UN))
        sync_cache (fs, inode);
      fuse_reply_err (req, 0);
      return;
    }
  r = errno;
  if (!(op & LOCK_NB) && r == EWOULDBLOCK && (r = -start_wait (fs, req, inode, (int) fi->fh, TRUE, op, NULL)) == 0)
    return;
  fuse_reply_err (req, r);
}

/* Drop every lock of (@inode, @owner). */
void
fsg_locks_flush (FsgFs *fs, FsgInode *inode, guint64 owner)
{
  struct flock fl = { .l_type = F_UNLCK, .l_whence = SEEK_SET };

  if (fs->locks != NULL)
    (void) owner_fcntl (fs, inode, owner, F_OFD_SETLK, &fl);
}

/* The open @fh of @inode is gone: drop its flock and the record locks of
 * the owners that locked through it; forget owners left without opens. */
void
fsg_locks_release (FsgFs *fs, FsgInode *inode, int fh)
{
  FsgLocks *locks = fs->locks;
  struct flock fl = { .l_type = F_UNLCK, .l_whence = SEEK_SET };
  GHashTableIter it;
  gpointer p;

  (void) flock (fh, LOCK_UN);
  if (locks == NULL)
    return;
  g_mutex_lock (&locks->lock);
  g_hash_table_iter_init (&it, locks->owners);
  while (g_hash_table_iter_next (&it, &p, NULL))
    {
      LockOwner *o = p;

      if (o->inode != inode)
        continue;
      for (guint i = 0; i < o->fhs->len; i++)
        if (g_array_index (o->fhs, int, i) == fh)
          {
            g_array_remove_index_fast (o->fhs, i);
            (void) fcntl (o->fd, F_OFD_SETLK, &fl);
            break;
          }
      if (o->fhs->len == 0)
        {
          guint n = GPOINTER_TO_UINT (g_hash_table_lookup (locks->inodes, inode));

          if (n <= 1)
            g_hash_table_remove (locks->inodes, inode);
          else
            g_hash_table_insert (locks->inodes, inode, GUINT_TO_POINTER (n - 1));
          g_hash_table_iter_remove (&it);
        }
    }
  g_mutex_unlock (&locks->lock);
}

gboolean
fsg_locks_inode_has_locks (FsgFs *fs, FsgInode *inode)
{
  FsgLocks *locks = fs->locks;
  gboolean r;

  if (locks == NULL)
    return FALSE;
  g_mutex_lock (&locks->lock);
  r = g_hash_table_contains (locks->inodes, inode);
  g_mutex_unlock (&locks->lock);
  return r;
}
