/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The fuse_lowlevel_ops of the policy view. Every handler computes a
 * negative errno internally and replies exactly once; policy refusals are
 * audited where they are decided. Host access is relative to O_PATH fds
 * (*at() with one name component and O_NOFOLLOW / AT_SYMLINK_NOFOLLOW), or
 * through /proc/self/fd/N, which resolves to the inode itself and never
 * through a symlink planted by the sandbox.
 *
 * Policy is decided at lookup (visibility), at open/create (read/write) and
 * at every namespace operation (structural rules); data I/O on an open file
 * needs no further decision, which leaves room for kernel passthrough.
 *
 * xattrs: by default the view has none (ENOSYS, so the kernel stops asking
 * and a write() does not cost a GETXATTR(security.capability) round trip).
 * With FsgFsOptions.user_xattrs, user.* is read and written, listxattr shows
 * only user.*, other names read as absent and are never writable.
 */
#include "config.h"

#include "fsgate/fs-private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <sched.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

/* The open flag execve(2) opens with (include/linux/fs.h), passed on in
 * FUSE_OPEN. */
#define FSG_FMODE_EXEC 040

#ifndef RENAME_NOREPLACE
# define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
# define RENAME_EXCHANGE (1 << 1)
#endif

static inline FsgFs *
req_fs (fuse_req_t req)
{
  return fuse_req_userdata (req);
}

static inline void
proc_fd_path (char *buf, size_t len, int fd)
{
  snprintf (buf, len, "/proc/self/fd/%d", fd);
}

static void
reply_err (fuse_req_t req, int r)
{
  r = r < 0 ? -r : r;
  /* No request involves the caller's fd table: an EMFILE is the daemon's
   * own (after FD_RETRY or the fd cache's retry). Say so as ENFILE, or the
   * command would look for a leak of its own. */
  fuse_reply_err (req, r == EMFILE ? ENFILE : r);
}

/* Run @expr (a call that returns -1 and sets errno on failure) and, when the
 * daemon's own fd table is full (EMFILE/ENFILE), close cold O_PATH fds and
 * run it once more. An EMFILE that remains is the daemon's limit, not the
 * caller's: the caller sees ENFILE, never an EMFILE about its own table. */
#define FD_RETRY(fs, expr)                                      \
  ({                                                            \
    long _fr = (long) (expr);                                   \
    if (_fr < 0 && (errno == EMFILE || errno == ENFILE))        \
      {                                                         \
        fsg_fs_relieve_fd_pressure (fs);                        \
        _fr = (long) (expr);                                    \
      }                                                         \
    if (_fr < 0 && errno == EMFILE)                             \
      errno = ENFILE;                                           \
    _fr;                                                        \
  })

/* Mutating the inode itself (setattr, xattr writes, write opens). */
static int
writable_error (const FsgInode *inode, const FsgPathState *s)
{
  if (inode->kind != FSG_INODE_HOST || (s->flags & FSG_STATE_SYNTHETIC))
    return -EROFS;
  switch (s->access)
    {
    case FSG_ACCESS_RW:
      return 0;
    case FSG_ACCESS_DENY:
      return -EACCES;
    default:
      return -EROFS;
    }
}

static gboolean
is_stub_name (FsgFs *fs, FsgInode *parent, const char *name)
{
  g_autofree char *path = NULL;

  if (!parent->stub_anc)
    return FALSE;
  path = fsg_inode_path (fs, parent, name);
  return g_hash_table_contains (fs->stubs, path) || g_hash_table_contains (fs->stub_parents, path);
}

/* May the entry @name of @parent be created (@replacing FALSE) or removed /
 * replaced (@replacing TRUE)? Returns 0 or a negative errno (audited). */
static int
check_entry (FsgFs *fs, fuse_req_t req, const char *op, FsgInode *parent,
             const char *name, gboolean replacing, FsgPathState *out_state)
{
  FsgPathState ps = fsg_inode_get_state (fs, parent);
  FsgPathState cs;
  int r;

  if (name[0] == '\0' || strchr (name, '/') != NULL ||
      strcmp (name, ".") == 0 || strcmp (name, "..") == 0)
    return -EINVAL;
  if ((r = writable_error (parent, &ps)) < 0)
    return fsg_fs_deny (fs, req, op, parent, name, &ps, -r);
  if (is_stub_name (fs, parent, name))
    return fsg_fs_deny (fs, req, op, parent, name, &ps, EBUSY);
  cs = fsg_policy_child_state (fs->policy, &ps, name);
  if (cs.flags & (FSG_STATE_SYNTHETIC | FSG_STATE_ALIAS))
    return fsg_fs_deny (fs, req, op, parent, name, &cs, EROFS);
  switch (cs.access)
    {
    case FSG_ACCESS_RW:
      break;
    case FSG_ACCESS_DENY:
      return fsg_fs_deny (fs, req, op, parent, name, &cs, EACCES);
    default:
      return fsg_fs_deny (fs, req, op, parent, name, &cs, EROFS);
    }
  /* Roots, ancestors of roots and paths on the way to a rule may not be
   * removed or replaced: that would change what the rules match. */
  if (replacing && (cs.flags & (FSG_STATE_PROTECTED | FSG_STATE_ROOT)))
    return fsg_fs_deny (fs, req, op, parent, name, &cs, EPERM);
  if (out_state != NULL)
    *out_state = cs;
  return 0;
}

/* ---- Acting as the caller --------------------------------------------- */

/* Who checks permissions. With default_permissions (fsgate mount, which
 * may serve several users) the kernel checks every access against the
 * attributes the view shows, and a root daemon only takes the caller's
 * fsuid/fsgid to create objects with the right owner. With host_checks
 * (fsgate-run, fsgate mount --host-checks) there is no default_permissions:
 * the kernel checks nothing but the mount's own flags, and every host call
 * that needs a permission (lookup, open, create, unlink, rename, setattr,
 * xattrs, access) runs with the caller's credentials, so the host's
 * permissions decide for any owner and group, mapped into the sandbox or
 * not:
 *  - an unprivileged daemon is the caller (fsgate-run: the sandbox maps
 *    only the user's own ids and cannot change its groups), nothing to do;
 *  - a root daemon switches the worker thread to the caller's fsuid, fsgid
 *    and supplementary groups; under fsgate-run (single_caller) the caller
 *    is root without capabilities, so the thread drops its effective
 *    capabilities instead.
 * setfsuid/setfsgid, the raw setgroups and capset syscalls act on the
 * calling thread only. The policy is checked before any of this and is
 * never delegated to the host. */

typedef struct
{
  gboolean ids;
  gboolean groups;
  gboolean caps;
  struct __user_cap_data_struct saved[2];
} FsgCreds;

static int
caps_get (struct __user_cap_data_struct data[2])
{
  struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };

  return (int) syscall (SYS_capget, &hdr, data);
}

static int
caps_set (const struct __user_cap_data_struct data[2])
{
  struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };

  return (int) syscall (SYS_capset, &hdr, data);
}

/* Returns FALSE (nothing changed) when the caller's identity could not be
 * taken: the host call must then not be made. */
static gboolean
creds_enter (FsgFs *fs, fuse_req_t req, FsgCreds *c, gboolean with_groups)
{
  const struct fuse_ctx *ctx = fuse_req_ctx (req);

  c->ids = c->groups = c->caps = FALSE;
  if (!fs->is_root)
    return TRUE;
  if (fs->single_caller && ctx->uid == fs->own_uid && ctx->gid == fs->own_gid)
    {
      struct __user_cap_data_struct none[2];

      if (!fs->host_checks)
        return TRUE;
      /* The daemon's own ids and groups, without its capabilities. */
      if (caps_get (c->saved) < 0)
        return FALSE;
      memcpy (none, c->saved, sizeof none);
      none[0].effective = none[1].effective = 0;
      if (caps_set (none) < 0)
        return FALSE;
      c->caps = TRUE;
      return TRUE;
    }
  if (ctx->uid == 0 && ctx->gid == 0 && !fs->single_caller)
    return TRUE; /* root of the daemon's own namespace (fsgate mount) */
  if (with_groups || fs->host_checks)
    {
      gid_t list[256];
      int n = fuse_req_getgroups (req, G_N_ELEMENTS (list), list);

      /* Groups unknown (the caller is gone, or has too many): none rather
       * than the daemon's when the host decides. */
      if (n < 0 || n > (int) G_N_ELEMENTS (list))
        n = fs->host_checks ? 0 : -1;
      if (n >= 0)
        {
          if (syscall (SYS_setgroups, (size_t) n, list) < 0)
            {
              if (fs->host_checks)
                return FALSE;
            }
          else
            c->groups = TRUE;
        }
    }
  syscall (SYS_setfsgid, ctx->gid);
  syscall (SYS_setfsuid, ctx->uid);
  c->ids = TRUE;
  if (ctx->uid == 0 && fs->single_caller)
    {
      /* A root caller of a single-caller mount without its capabilities
       * (setfsuid(0) keeps them). */
      struct __user_cap_data_struct none[2];

      if (caps_get (c->saved) == 0)
        {
          memcpy (none, c->saved, sizeof none);
          none[0].effective = none[1].effective = 0;
          c->caps = caps_set (none) == 0;
        }
      if (!c->caps)
        {
          syscall (SYS_setfsuid, fs->own_uid);
          syscall (SYS_setfsgid, fs->own_gid);
          if (c->groups)
            syscall (SYS_setgroups, (size_t) fs->n_saved_groups, fs->saved_groups);
          return FALSE;
        }
    }
  return TRUE;
}

static void
creds_leave (FsgFs *fs, FsgCreds *c)
{
  int errsv = errno;

  if (c->caps)
    (void) caps_set (c->saved);
  if (c->ids)
    {
      /* The daemon's own ids (its euid and egid), not 0: a root daemon
       * may run with another group. */
      syscall (SYS_setfsuid, fs->own_uid);
      syscall (SYS_setfsgid, fs->own_gid);
    }
  if (c->groups)
    syscall (SYS_setgroups, (size_t) fs->n_saved_groups, fs->saved_groups);
  errno = errsv;
}

static gboolean
id_mapped (const GArray *ranges, guint32 id)
{
  if (ranges == NULL)
    return TRUE;
  for (guint i = 0; i < ranges->len; i++)
    {
      const FsgIdRange *r = &g_array_index (ranges, FsgIdRange, i);

      if (id >= r->first && id - r->first < r->count)
        return TRUE;
    }
  return FALSE;
}

/* The kernel refuses every write to an inode whose owner or group is not
 * mapped in the user namespace that owns the mount (HAS_UNMAPPED_ID in
 * inode_permission() and may_delete()), before the daemon is asked: in an
 * unprivileged sandbox, a directory of the user's with the group root could
 * not be written, nor a file of root's in the user's directory removed,
 * although the host allows both. The host decides instead: a file or
 * directory in a writable place, owned by the caller or by root, that the
 * caller may write on the host, or may remove (it may write the directory
 * holding it), is shown with the caller's own uid (gid) in place of an
 * unmapped one; the rest keeps its ids (shown as the overflow id). Another
 * user's objects never are: ownership checks would trust them. */
static gboolean
caller_may_write (FsgFs *fs, int fd)
{
  FsgCreds c = { 0 };
  int r;

  /* The single caller's credentials: the daemon's, without capabilities. */
  if (fs->is_root)
    {
      struct __user_cap_data_struct none[2];

      if (caps_get (c.saved) < 0)
        return FALSE;
      memcpy (none, c.saved, sizeof none);
      none[0].effective = none[1].effective = 0;
      if (caps_set (none) < 0)
        return FALSE;
      c.caps = TRUE;
    }
  r = (int) syscall (SYS_faccessat2, fd, "", W_OK, AT_EACCESS | AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW);
  creds_leave (fs, &c);
  return r == 0;
}

void
fsg_fs_shown_ids (FsgFs *fs, int fd, FsgInode *inode, FsgInode *parent,
                  const FsgPathState *state, struct stat *st)
{
  gboolean uid_ok, gid_ok, ok;
  int pfd;

  if (!fs->single_caller || state->access != FSG_ACCESS_RW ||
      (state->flags & (FSG_STATE_SYNTHETIC | FSG_STATE_ALIAS)) ||
      !(S_ISREG (st->st_mode) || S_ISDIR (st->st_mode)))
    return;
  uid_ok = id_mapped (fs->uid_ranges, st->st_uid);
  gid_ok = id_mapped (fs->gid_ranges, st->st_gid);
  if (uid_ok && gid_ok)
    return;
  /* Another (non-root) user's object is never shown as the caller's:
   * ownership checks (git's safe.directory, ssh, gpg) would trust it. */
  if (!uid_ok && st->st_uid != 0)
    return;
  ok = caller_may_write (fs, fd);
  if (!ok)
    {
      /* The parent: given (lookup), or the inode's, kept alive by a pin
       * taken under the lock (a rename may move the inode meanwhile). */
      g_mutex_lock (&fs->lock);
      if (parent == NULL && inode != NULL)
        parent = fsg_inode_parent_locked (inode);
      if (parent != NULL)
        parent->pins++;
      g_mutex_unlock (&fs->lock);
      if (parent != NULL)
        {
          if (parent->kind == FSG_INODE_HOST && (pfd = fsg_inode_pin (fs, parent)) >= 0)
            {
              ok = caller_may_write (fs, pfd);
              fsg_inode_unpin (fs, parent);
            }
          fsg_inode_unpin (fs, parent);
        }
    }
  if (!ok)
    return;
  if (!uid_ok)
    st->st_uid = fs->own_uid;
  if (!gid_ok)
    st->st_gid = fs->own_gid;
}

/* A name found by one caller must not be reused by another without a
 * LOOKUP: without default_permissions the kernel walks cached names without
 * any check, so search permission is checked only at LOOKUP. One caller
 * (fsgate-run) may keep its names; a host-checked mount that serves several
 * users (fsgate mount --host-checks as root) has every name looked up
 * again by each walk. */
static inline void
entry_for_caller (FsgFs *fs, struct fuse_entry_param *e)
{
  if (fs->host_checks && !fs->single_caller && fs->is_root)
    e->entry_timeout = 0;
}

/* Run @expr (a host call returning < 0 with errno on failure) with the
 * caller's credentials. With default_permissions the kernel has already
 * checked permissions with all of the caller's groups, so the groups are
 * only taken if the host refuses without them. */
#define AS_CALLER(fs, req, expr)                                     \
  ({                                                                 \
    FsgCreds _c;                                                     \
    long _r;                                                         \
    if (!creds_enter ((fs), (req), &_c, FALSE))                      \
      {                                                              \
        _r = -1;                                                     \
        errno = EACCES;                                              \
      }                                                              \
    else                                                             \
      {                                                              \
        _r = (long) (expr);                                          \
        if (_r < 0 && errno == EACCES && _c.ids && !_c.groups)       \
          {                                                          \
            creds_leave ((fs), &_c);                                 \
            if (creds_enter ((fs), (req), &_c, TRUE))                \
              _r = (long) (expr);                                    \
            else                                                     \
              errno = EACCES;                                        \
          }                                                          \
        creds_leave ((fs), &_c);                                     \
      }                                                              \
    _r;                                                              \
  })

/* A host call whose permission the kernel has checked already under
 * default_permissions: as the caller only when the host decides. */
#define CHECKED_AS_CALLER(fs, req, expr) \
  ((fs)->host_checks ? AS_CALLER ((fs), (req), (expr)) : (long) (expr))

/* Creation modes are the caller's: with FUSE_CAP_DONT_MASK the kernel
 * sends the unmasked mode and the caller's umask, which is applied here;
 * the daemon's own umask must not narrow it further. umask is shared by the
 * threads of a process (fs_struct), so each worker that creates files
 * unshares its fs_struct once and sets its own umask to 0; the process-wide
 * umask (and the cwd, "/") are left alone. If unshare fails, the thread
 * creates with the process umask (a narrower mode, never a wider one). */
static __thread gboolean thread_umask_cleared;

static mode_t
caller_mode (fuse_req_t req, mode_t mode)
{
  if (!thread_umask_cleared)
    {
      if (unshare (CLONE_FS) == 0)
        umask (0);
      thread_umask_cleared = TRUE;
    }
  return mode & ~fuse_req_ctx (req)->umask;
}

static mode_t
strip_mode (fuse_req_t req, mode_t mode, gboolean is_dir)
{
  /* A set-id bit made in the sandbox would be live on the host. Also for
   * uid 0: in fsgate-run a root caller has no capabilities, yet as the
   * owner it may set S_ISUID, which would leave a setuid-root binary on the
   * host. The daemon cannot tell a privileged caller apart, so never,
   * unless the policy of an inspection mount says `setid = keep` (refused
   * for fsgate-run by fsg_fs_new()). */
  if (fsg_policy_setid_kept (req_fs (req)->policy))
    return mode;
  mode &= ~S_ISUID;
  if (!is_dir)
    mode &= ~S_ISGID;
  return mode;
}

/* ---- Lookup, forget, attributes --------------------------------------- */

static void
op_init (void *userdata, struct fuse_conn_info *conn)
{
  FsgFs *fs = userdata;

  conn->want &= ~(FUSE_CAP_EXPORT_SUPPORT | FUSE_CAP_POSIX_ACL);
  /* The caller's umask comes with CREATE, MKDIR and MKNOD (caller_mode()). */
  if (conn->capable & FUSE_CAP_DONT_MASK)
    conn->want |= FUSE_CAP_DONT_MASK;
  if (conn->capable & FUSE_CAP_READDIRPLUS)
    conn->want |= FUSE_CAP_READDIRPLUS;
  if (conn->capable & FUSE_CAP_READDIRPLUS_AUTO)
    conn->want |= FUSE_CAP_READDIRPLUS_AUTO;
  if (conn->capable & FUSE_CAP_PARALLEL_DIROPS)
    conn->want |= FUSE_CAP_PARALLEL_DIROPS;
  if (conn->capable & FUSE_CAP_CACHE_SYMLINKS)
    conn->want |= FUSE_CAP_CACHE_SYMLINKS;
  if (conn->capable & FUSE_CAP_SPLICE_WRITE)
    conn->want |= FUSE_CAP_SPLICE_WRITE;
  if (conn->capable & FUSE_CAP_SPLICE_MOVE)
    conn->want |= FUSE_CAP_SPLICE_MOVE;
  if (conn->capable & FUSE_CAP_SPLICE_READ)
    conn->want |= FUSE_CAP_SPLICE_READ;
  if (conn->capable & FUSE_CAP_AUTO_INVAL_DATA)
    conn->want |= FUSE_CAP_AUTO_INVAL_DATA;
  /* File locks reach the host (locks.c). */
  if (fs->locks == NULL)
    fs->locks = fsg_locks_new ();
  if (conn->capable & FUSE_CAP_POSIX_LOCKS)
    conn->want |= FUSE_CAP_POSIX_LOCKS;
  if (conn->capable & FUSE_CAP_FLOCK_LOCKS)
    conn->want |= FUSE_CAP_FLOCK_LOCKS;
  if (fs->pt_want && fs->pt_offered)
    {
      /* Kernel passthrough (the INIT reply is patched in passthrough.c).
       * The kernel refuses it together with the writeback cache, and the
       * custom io that patches replies does not splice. */
      fs->passthrough = TRUE;
      fs->writeback = FALSE;
      conn->want &= ~(FUSE_CAP_SPLICE_WRITE | FUSE_CAP_SPLICE_MOVE | FUSE_CAP_SPLICE_READ);
    }
  if (fs->writeback && (conn->capable & FUSE_CAP_WRITEBACK_CACHE))
    conn->want |= FUSE_CAP_WRITEBACK_CACHE;
  else
    {
      conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
      fs->writeback = FALSE;
    }
  conn->time_gran = 1;
}

static void
op_destroy (void *userdata)
{
  FsgFs *fs = userdata;

  g_clear_pointer (&fs->locks, fsg_locks_free);
}

/* After a successful lookup of @name in @parent: refuse a host directory
 * that resolves names case-insensitively, or that cannot be checked
 * (casefold.c), dropping the lookup count. Returns 0 or -errno (EACCES
 * audited with op "case-insensitive"). */
static int
refuse_case_insensitive (FsgFs *fs, fuse_req_t req, FsgInode *parent, const char *name,
                         struct fuse_entry_param *e)
{
  FsgInode *inode;
  fsg_autopin FsgPin pin = { 0 };
  FsgPathState s;
  int fd;

  if (!S_ISDIR (e->attr.st_mode))
    return 0;
  inode = fsg_fs_inode (fs, e->ino);
  if (inode->kind != FSG_INODE_HOST)
    return 0;
  if ((fd = fsg_pin (&pin, fs, inode)) < 0)
    {
      fsg_inode_forget (fs, inode, 1);
      return fd;
    }
  if (fsg_fs_dir_folds_case (fd) == NULL)
    return 0;
  fsg_pin_clear (&pin);
  s = fsg_inode_get_state (fs, inode);
  fsg_fs_audit (fs, req, "case-insensitive", parent, name, NULL, NULL, &s, TRUE, EACCES, NULL);
  fsg_inode_forget (fs, inode, 1);
  return -EACCES;
}

static void
op_lookup (fuse_req_t req, fuse_ino_t parent, const char *name)
{
  FsgFs *fs = req_fs (req);
  FsgInode *p = fsg_fs_inode (fs, parent);
  fsg_autopin FsgPin pin = { 0 };
  struct fuse_entry_param e;
  fuse_ino_t notify = 0;
  FsgCreds c;
  int r;

  /* As the caller: opening @name relative to the parent needs search
   * permission on it, which without default_permissions nothing else
   * checks. The parent's fd is pinned first, with the daemon's own
   * credentials: reopening an evicted one by file handle needs them. */
  memset (&e, 0, sizeof e);
  if (fs->host_checks && p->kind == FSG_INODE_HOST && (r = fsg_pin (&pin, fs, p)) < 0)
    return reply_err (req, r);
  if (fs->host_checks && !creds_enter (fs, req, &c, FALSE))
    return reply_err (req, -EACCES);
  r = fsg_inode_lookup_notify_after (fs, req, p, name, &e, NULL, &notify);
  if (fs->host_checks)
    creds_leave (fs, &c);
  entry_for_caller (fs, &e);

  if (r == 0)
    r = refuse_case_insensitive (fs, req, fsg_fs_inode (fs, parent), name, &e);
  if (r == 0)
    {
      fuse_reply_entry (req, &e);
      if (notify != 0 && fs->se != NULL) /* see fsg_inode_lookup */
        (void) fuse_lowlevel_notify_inval_inode (fs->se, notify, -1, 0);
    }
  else if (r == -ENOENT && e.entry_timeout > 0)
    fuse_reply_entry (req, &e); /* negative entry, cached by the kernel */
  else
    reply_err (req, r);
}

static void
op_forget (fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
  FsgFs *fs = req_fs (req);

  fsg_inode_forget (fs, fsg_fs_inode (fs, ino), nlookup);
  fuse_reply_none (req);
}

static void
op_forget_multi (fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
  FsgFs *fs = req_fs (req);

  for (size_t i = 0; i < count; i++)
    fsg_inode_forget (fs, fsg_fs_inode (fs, forgets[i].ino), forgets[i].nlookup);
  fuse_reply_none (req);
}

static void
op_getattr (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  FsgFs *fs = req_fs (req);
  FsgInode *inode = fsg_fs_inode (fs, ino);
  FsgPathState s = fsg_inode_get_state (fs, inode);
  struct stat st;
  int r = fsg_inode_stat (fs, inode, &st);

  if (r < 0)
    return reply_err (req, r);
  fuse_reply_attr (req, &st, fsg_inode_attr_timeout (inode, &s));
}

/* Are the explicit times of @ts (UTIME_OMIT aside) within a second or two
 * of now, as the kernel's own utime(NOW) of a file under the writeback
 * cache sends them? */
static gboolean
times_are_now (const struct timespec ts[2])
{
  struct timespec now;
  gboolean any = FALSE;

  if (clock_gettime (CLOCK_REALTIME, &now) != 0)
    return FALSE;
  for (int k = 0; k < 2; k++)
    {
      if (ts[k].tv_nsec == UTIME_OMIT)
        continue;
      if (ts[k].tv_nsec == UTIME_NOW)
        {
          any = TRUE;
          continue;
        }
      if (ts[k].tv_sec > now.tv_sec + 1 || ts[k].tv_sec < now.tv_sec - 2)
        return FALSE;
      any = TRUE;
    }
  return any;
}

static int
do_utimens (int fd, FsgInode *inode, const struct timespec ts[2])
{
  char proc[64];

  if (utimensat (fd, "", ts, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == 0)
    return 0;
  if (errno != EINVAL || inode->type == S_IFLNK)
    return -errno;
  proc_fd_path (proc, sizeof proc, fd);
  return utimensat (AT_FDCWD, proc, ts, 0) == 0 ? 0 : -errno;
}

/* Does @mode only clear the set-id bits of the file at @fd? */
static gboolean
kills_setid_only (int fd, mode_t mode)
{
  struct stat st;

  if (fstatat (fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
    return FALSE;
  mode &= 07777;
  st.st_mode &= 07777;
  return mode != st.st_mode && (mode & ~st.st_mode) == 0 &&
         ((st.st_mode & ~mode) & ~(mode_t) (S_ISUID | S_ISGID)) == 0;
}

/* Clear the set-id bits that @mode (the kernel's, from a SETATTR found by
 * kills_setid_only) drops, from the file's mode as it is now: the owner
 * may have changed the mode since, which the kernel's stale mode would
 * undo. */
static int
kill_setid_now (int fd, const char *proc, mode_t mode)
{
  struct stat st;
  mode_t cur, kill;

  if (fstatat (fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
    return -1;
  cur = st.st_mode & 07777;
  kill = cur & ~(mode & 07777) & (S_ISUID | S_ISGID);
  if (kill == 0)
    return 0;
  return fchmodat (AT_FDCWD, proc, cur & ~kill, 0);
}

static int
do_chown (FsgFs *fs, fuse_req_t req, int fd, const struct stat *attr, int valid)
{
  uid_t uid = (valid & FUSE_SET_ATTR_UID) ? attr->st_uid : (uid_t) -1;
  gid_t gid = (valid & FUSE_SET_ATTR_GID) ? attr->st_gid : (gid_t) -1;

  if (!(valid & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)))
    return 0;
  if (CHECKED_AS_CALLER (fs, req, fchownat (fd, "", uid, gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW)) < 0)
    return -errno;
  return 0;
}

static void
op_setattr (fuse_req_t req, fuse_ino_t ino, struct stat *attr, int valid,
            struct fuse_file_info *fi)
{
  FsgFs *fs = req_fs (req);
  FsgInode *inode = fsg_fs_inode (fs, ino);
  FsgPathState s = fsg_inode_get_state (fs, inode);
  fsg_autopin FsgPin pin = { 0 };
  FsgInode *held;
  char proc[64];
  struct stat st;
  int r, fd;
  fsg_autogit FsgGitLock gl = fsg_git_lock (fs, NULL, NULL, NULL, NULL, (valid & FUSE_SET_ATTR_MODE) != 0);

  if ((r = writable_error (inode, &s)) < 0)
    return reply_err (req, fsg_fs_deny (fs, req, "setattr", inode, NULL, &s, -r));
  if ((valid & FUSE_SET_ATTR_SIZE) && (r = fsg_git_check_write (fs, req, "setattr", inode)) < 0)
    return reply_err (req, r);
  if ((valid & FUSE_SET_ATTR_MODE) && (r = fsg_git_check_chmod (fs, req, inode, attr->st_mode)) < 0)
    return reply_err (req, r);
  if ((fd = fsg_pin (&pin, fs, inode)) < 0)
    return reply_err (req, fd);
  if (fstat (fd, &st) < 0)
    return reply_err (req, -errno);
  if ((r = fsg_fs_check_linked_write (fs, req, "setattr", inode, &s, &st)) < 0)
    return reply_err (req, r);
  proc_fd_path (proc, sizeof proc, fd);

  if ((valid & FUSE_SET_ATTR_MODE) && inode->type == S_IFLNK)
    return reply_err (req, -EOPNOTSUPP);
  if (valid == 0 && fs->handle_killpriv && inode->type == S_IFREG)
    {
      /* Under FUSE_HANDLE_KILLPRIV the kernel leaves the set-id bits (and
       * security.capability) to us and sends a SETATTR without fields for
       * chown(f, -1, -1) and before a write to a set-id file alike. The
       * same chown on the host, as the caller, clears them as natively for
       * the owner. Another user is refused that chown; if they may write,
       * this is (most likely) their write, which runs as them on the host
       * and clears the bits there as natively: nothing to do now. (A
       * chown(-1, -1) by a non-owner who may write then succeeds without
       * effect, where the host says EPERM.) */
      if (CHECKED_AS_CALLER (fs, req, fchownat (fd, "", (uid_t) -1, (gid_t) -1,
                                                 AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW)) < 0)
        {
          int err = errno;

          if (err != EPERM || AS_CALLER (fs, req, faccessat (AT_FDCWD, proc, W_OK, AT_EACCESS)) < 0)
            return reply_err (req, -err);
        }
    }
  if ((valid & FUSE_SET_ATTR_MODE) && fs->host_checks && kills_setid_only (fd, attr->st_mode))
    {
      /* The kernel clearing set-id bits after a write, truncate or chown
       * by a caller that need not own the file: allowed if the caller may
       * write it or the ownership change (below, as the caller) succeeds,
       * as the host would clear them itself. */
      gboolean chown_too = (valid & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) != 0;

      if (!chown_too && AS_CALLER (fs, req, faccessat (AT_FDCWD, proc, W_OK, AT_EACCESS)) < 0 &&
          AS_CALLER (fs, req, fchmodat (AT_FDCWD, proc, attr->st_mode & 07777, 0)) < 0)
        return reply_err (req, -errno);
      if ((r = do_chown (fs, req, fd, attr, valid)) < 0)
        return reply_err (req, r);
      if (kill_setid_now (fd, proc, attr->st_mode) < 0 && errno != EPERM)
        return reply_err (req, -errno);
      valid &= ~(FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID);
    }
  if (valid & FUSE_SET_ATTR_MODE)
    {
      mode_t mode = strip_mode (req, attr->st_mode & 07777, inode->type == S_IFDIR);

      r = fi ? CHECKED_AS_CALLER (fs, req, fchmod (fi->fh, mode))
             : CHECKED_AS_CALLER (fs, req, fchmodat (AT_FDCWD, proc, mode, 0));
      if (r < 0)
        return reply_err (req, -errno);
    }
  if ((r = do_chown (fs, req, fd, attr, valid)) < 0)
    return reply_err (req, r);
  if (valid & FUSE_SET_ATTR_SIZE)
    {
      if (inode->type != S_IFREG)
        return reply_err (req, inode->type == S_IFDIR ? -EISDIR : -EINVAL);
      /* As the caller under host checks: the host then clears set-id bits
       * as it would for the caller, which FUSE_HANDLE_KILLPRIV leaves to
       * the daemon (passthrough.c). */
      if (fi)
        r = CHECKED_AS_CALLER (fs, req, ftruncate (fi->fh, attr->st_size)); /* opened for writing */
      else
        {
          fsg_autofd int wfd = FD_RETRY (fs, CHECKED_AS_CALLER (fs, req, open (proc, O_WRONLY | O_CLOEXEC)));
          r = wfd < 0 ? -1 : CHECKED_AS_CALLER (fs, req, ftruncate (wfd, attr->st_size));
        }
      if (r < 0)
        return reply_err (req, -errno);
    }
  if (valid & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME))
    {
      struct timespec ts[2] = { { 0, UTIME_OMIT }, { 0, UTIME_OMIT } };

      if (valid & FUSE_SET_ATTR_ATIME_NOW)
        ts[0].tv_nsec = UTIME_NOW;
      else if (valid & FUSE_SET_ATTR_ATIME)
        ts[0] = attr->st_atim;
      if (valid & FUSE_SET_ATTR_MTIME_NOW)
        ts[1].tv_nsec = UTIME_NOW;
      else if (valid & FUSE_SET_ATTR_MTIME)
        ts[1] = attr->st_mtim;
      /* With a file handle this is the kernel writing back the times it
       * keeps for a file open for writing (utimensat(2) never passes one). */
      if (fi)
        r = futimens (fi->fh, ts) == 0 ? 0 : -errno;
      else
        {
          FsgCreds c;

          if (fs->host_checks && !creds_enter (fs, req, &c, FALSE))
            return reply_err (req, -EACCES);
          r = do_utimens (fd, inode, ts);
          if (r == -EPERM && fs->writeback && inode->type == S_IFREG && times_are_now (ts))
            {
              /* With the writeback cache the kernel keeps a regular
               * file's times itself and sends utime(NOW) as explicit
               * times, which only the owner may set. A caller that may
               * write the file may set them to now: ask the host for
               * exactly that (it checks the write permission). */
              for (int k = 0; k < 2; k++)
                if (ts[k].tv_nsec != UTIME_OMIT)
                  ts[k].tv_nsec = UTIME_NOW;
              r = do_utimens (fd, inode, ts);
            }
          if (fs->host_checks)
            creds_leave (fs, &c);
        }
      if (r < 0)
        return reply_err (req, r);
    }
  if ((r = fsg_inode_stat (fs, inode, &st)) < 0)
    return reply_err (req, r);
  held = fsg_inode_hold_shared (fs, inode, (valid & FUSE_SET_ATTR_SIZE) != 0); /* alive after the reply */
  fuse_reply_attr (req, &st, fsg_inode_attr_timeout (inode, &s));
  fsg_inode_changed_unhold (fs, held);
}

static void
op_readlink (fuse_req_t req, fuse_ino_t ino)
{
  FsgFs *fs = req_fs (req);
  FsgInode *inode = fsg_fs_inode (fs, ino);
  fsg_autopin FsgPin pin = { 0 };
  char buf[PATH_MAX + 1];
  ssize_t n;
  int fd;

  if (inode->kind == FSG_INODE_ALIAS)
    {
      FsgPathState s = fsg_inode_get_state (fs, inode);
      const char *target = fsg_policy_alias_target (fs->policy, &s);

      if (target == NULL)
        return reply_err (req, -EINVAL);
      fuse_reply_readlink (req, target);
      return;
    }
  if (inode->kind != FSG_INODE_HOST || inode->type != S_IFLNK)
    return reply_err (req, -EINVAL);
  if ((fd = fsg_pin (&pin, fs, inode)) < 0)
    return reply_err (req, fd);
  n = readlinkat (fd, "", buf, sizeof buf - 1);
  if (n < 0)
    return reply_err (req, -errno);
  buf[n] = '\0';
  fuse_reply_readlink (req, buf);
}

/* ---- Creating and removing names --------------------------------------- */

/* After a successful creation: look the new entry up (through policy) and
 * reply with it. */
static void
reply_new_entry (FsgFs *fs, fuse_req_t req, FsgInode *parent, const char *name, const char *op)
{
  struct fuse_entry_param e;
  int r = fsg_inode_lookup (fs, req, parent, name, &e, op);

  if (r < 0)
    return reply_err (req, r);
  entry_for_caller (fs, &e);
  fuse_reply_entry (req, &e);
}

typedef enum
{
  MAKE_NODE,
  MAKE_DIR,
  MAKE_SYMLINK,
} MakeKind;

/* Create @name in @parent as the caller, after the policy checks: the
 * common part of mknod, mkdir and symlink. */
static void
make_entry (fuse_req_t req, fuse_ino_t parent, const char *name, const char *op,
            MakeKind kind, mode_t mode, dev_t rdev, const char *link)
{
  FsgFs *fs = req_fs (req);
  FsgInode *p = fsg_fs_inode (fs, parent);
  fsg_autopin FsgPin pin = { 0 };
  FsgPathState cs;
  long made = -1;
  int r, pfd;
  fsg_autogit FsgGitLock gl = fsg_git_lock (fs, p, name, NULL, NULL, FALSE);

  if ((r = check_entry (fs, req, op, p, name, FALSE, &cs)) < 0)
    return reply_err (req, r);
  if ((r = fsg_git_check_create (fs, req, op, p, name,
                                 kind == MAKE_DIR ? S_IFDIR : kind == MAKE_SYMLINK ? S_IFLNK : (mode & S_IFMT),
                                 &mode)) < 0)
    return reply_err (req, r);
  if ((pfd = fsg_pin (&pin, fs, p)) < 0)
    return reply_err (req, pfd);
  g_rw_lock_reader_lock (&fs->ns_lock);
  switch (kind)
    {
    case MAKE_NODE:
      made = AS_CALLER (fs, req, mknodat (pfd, name, mode, rdev));
      break;
    case MAKE_DIR:
      made = AS_CALLER (fs, req, mkdirat (pfd, name, mode));
      break;
    case MAKE_SYMLINK:
      made = AS_CALLER (fs, req, symlinkat (link, pfd, name));
      break;
    }
  r = made < 0 ? -errno : 0; /* before the unlock, which may touch errno */
  g_rw_lock_reader_unlock (&fs->ns_lock);
  if (r < 0)
    return reply_err (req, r);
  fsg_fs_audit (fs, req, op, p, name, NULL, NULL, &cs, FALSE, 0, NULL);
  reply_new_entry (fs, req, p, name, op);
}

static void
op_mknod (fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
  FsgFs *fs = req_fs (req);

  /* Device nodes made in the sandbox would be live on the host (nodev only
   * protects this mount). Regular files are what mknod(2) may also make.
   * An inspection mount whose policy says `devices = allow` makes them for
   * a root caller, as the host would (the daemon keeps CAP_MKNOD under the
   * caller's fsuid, so other callers are refused here, like on the host). */
  if (!S_ISFIFO (mode) && !S_ISSOCK (mode) && !S_ISREG (mode) &&
      !((S_ISCHR (mode) || S_ISBLK (mode)) && fsg_policy_devices_allowed (fs->policy) &&
        fuse_req_ctx (req)->uid == 0))
    return reply_err (req, fsg_fs_deny (fs, req, "mknod", fsg_fs_inode (fs, parent), name, NULL, EPERM));
  make_entry (req, parent, name, "mknod", MAKE_NODE,
              (mode & S_IFMT) | strip_mode (req, caller_mode (req, mode & 07777), FALSE),
              (S_ISCHR (mode) || S_ISBLK (mode)) ? rdev : 0, NULL);
}

static void
op_mkdir (fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
  make_entry (req, parent, name, "mkdir", MAKE_DIR, strip_mode (req, caller_mode (req, mode & 07777), TRUE), 0, NULL);
}

static void
op_symlink (fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
  /* The target is not checked: the kernel resolves it inside the view, so
   * it passes the policy again whatever it says. */
  make_entry (req, parent, name, "symlink", MAKE_SYMLINK, 0, 0, link);
}

/* fs.protected_hardlinks, as the host would apply it to the caller: a
 * caller that does not own the file may link it only if it is a regular
 * file without set-id bits that the caller can read and write. The kernel
 * checks this on the view too, and linkat() runs with the caller's fsuid;
 * this keeps the rule if either ever changes (the daemon itself has
 * CAP_FOWNER). Returns 0 or -EPERM. */
static int
check_protected_hardlink (fuse_req_t req, int fd)
{
  const struct fuse_ctx *ctx = fuse_req_ctx (req);
  char buf[8] = { 0 };
  fsg_autofd int sfd = -1;
  struct stat st;
  mode_t need;
  gid_t groups[256];
  int n;

  if (ctx->uid == 0)
    return 0;
  sfd = open ("/proc/sys/fs/protected_hardlinks", O_RDONLY | O_CLOEXEC);
  if (sfd < 0 || read (sfd, buf, sizeof buf - 1) <= 0 || buf[0] != '1')
    return 0;
  if (fstatat (fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
    return -errno;
  if (st.st_uid == ctx->uid)
    return 0;
  if (!S_ISREG (st.st_mode) || (st.st_mode & S_ISUID) ||
      (st.st_mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP))
    return -EPERM;
  need = S_IROTH | S_IWOTH;
  if (st.st_gid == ctx->gid)
    need = S_IRGRP | S_IWGRP;
  else if ((n = fuse_req_getgroups (req, G_N_ELEMENTS (groups), groups)) > 0)
    for (int i = 0; i < n && i < (int) G_N_ELEMENTS (groups); i++)
      if (groups[i] == st.st_gid)
        need = S_IRGRP | S_IWGRP;
  return (st.st_mode & need) == need ? 0 : -EPERM;
}

static void
op_link (fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
  FsgFs *fs = req_fs (req);
  FsgInode *inode = fsg_fs_inode (fs, ino);
  FsgInode *np = fsg_fs_inode (fs, newparent);
  FsgPathState s = fsg_inode_get_state (fs, inode);
  fsg_autopin FsgPin pin = { 0 };
  fsg_autopin FsgPin npin = { 0 };
  FsgPathState cs;
  char proc[64];
  int r, fd, npfd;
  fsg_autogit FsgGitLock gl = fsg_git_lock (fs, np, newname, NULL, NULL, TRUE);

  /* A new name must not give more rights than the source has: only files
   * that are writable and visible where they are may be linked. */
  if ((r = writable_error (inode, &s)) < 0)
    return reply_err (req, fsg_fs_deny (fs, req, "link", inode, NULL, &s, -r));
  if (fsg_fs_is_denied_id (fs, inode->dev, inode->ino))
    return reply_err (req, fsg_fs_deny (fs, req, "link", inode, NULL, &s, EACCES));
  if ((r = check_entry (fs, req, "link", np, newname, FALSE, &cs)) < 0)
    return reply_err (req, r);
  if ((r = fsg_git_check_link_source (fs, req, inode)) < 0 ||
      (r = fsg_git_check_create (fs, req, "link", np, newname, S_IFREG, NULL)) < 0)
    return reply_err (req, r);
  if ((fd = fsg_pin (&pin, fs, inode)) < 0)
    return reply_err (req, fd);
  if ((npfd = fsg_pin (&npin, fs, np)) < 0)
    return reply_err (req, npfd);
  if ((r = check_protected_hardlink (req, fd)) < 0)
    return reply_err (req, fsg_fs_deny (fs, req, "link", inode, NULL, &s, -r));
  g_rw_lock_reader_lock (&fs->ns_lock);
  proc_fd_path (proc, sizeof proc, fd);
  r = AS_CALLER (fs, req, linkat (AT_FDCWD, proc, npfd, newname, AT_SYMLINK_FOLLOW));
  if (r < 0)
    r = -errno;
  g_rw_lock_reader_unlock (&fs->ns_lock);
  if (r < 0)
    return reply_err (req, r);
  fsg_fs_audit (fs, req, "link", inode, NULL, np, newname, &cs, FALSE, 0, NULL);
  reply_new_entry (fs, req, np, newname, "link");
}

static void
do_remove (fuse_req_t req, fuse_ino_t parent, const char *name, gboolean dir)
{
  FsgFs *fs = req_fs (req);
  FsgInode *p = fsg_fs_inode (fs, parent);
  const char *op = dir ? "rmdir" : "unlink";
  fsg_autopin FsgPin pin = { 0 };
  FsgPathState cs;
  int r, pfd;

  if ((r = check_entry (fs, req, op, p, name, TRUE, &cs)) < 0)
    return reply_err (req, r);
  if ((pfd = fsg_pin (&pin, fs, p)) < 0)
    return reply_err (req, pfd);
  g_rw_lock_reader_lock (&fs->ns_lock);
  r = CHECKED_AS_CALLER (fs, req, unlinkat (pfd, name, dir ? AT_REMOVEDIR : 0)) == 0 ? 0 : -errno;
  if (r == 0)
    fsg_inode_unlinked (fs, p, name);
  g_rw_lock_reader_unlock (&fs->ns_lock);
  if (r < 0)
    return reply_err (req, r);
  fsg_fs_audit (fs, req, op, p, name, NULL, NULL, &cs, FALSE, 0, NULL);
  fuse_reply_err (req, 0);
}

static void
op_unlink (fuse_req_t req, fuse_ino_t parent, const char *name)
{
  do_remove (req, parent, name, FALSE);
}

static void
op_rmdir (fuse_req_t req, fuse_ino_t parent, const char *name)
{
  do_remove (req, parent, name, TRUE);
}

static void
op_rename (fuse_req_t req, fuse_ino_t parent, const char *name,
           fuse_ino_t newparent, const char *newname, unsigned int flags)
{
  FsgFs *fs = req_fs (req);
  FsgInode *p = fsg_fs_inode (fs, parent);
  FsgInode *np = fsg_fs_inode (fs, newparent);
  FsgPathState os, ns;
  struct stat ost, nst;
  gboolean have_new = FALSE;
  fsg_autopin FsgPin pin = { 0 };
  fsg_autopin FsgPin npin = { 0 };
  int r, pfd, npfd;
  fsg_autogit FsgGitLock gl = fsg_git_lock (fs, p, name, np, newname, FALSE);

  if (flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE))
    return reply_err (req, -EINVAL);
  if ((r = check_entry (fs, req, "rename", p, name, TRUE, &os)) < 0)
    return reply_err (req, r);
  if ((r = check_entry (fs, req, "rename", np, newname, TRUE, &ns)) < 0)
    return reply_err (req, r);
  if ((pfd = fsg_pin (&pin, fs, p)) < 0)
    return reply_err (req, pfd);
  if ((npfd = fsg_pin (&npin, fs, np)) < 0)
    return reply_err (req, npfd);

  /* The type check and the rename must not be separated by another
   * namespace change made through the view (a file swapped for a
   * directory in between): every other name operation holds the reader
   * side of ns_lock. */
  g_rw_lock_writer_lock (&fs->ns_lock);
  if (fstatat (pfd, name, &ost, AT_SYMLINK_NOFOLLOW) < 0)
    {
      r = -errno;
      goto out;
    }
  if (fstatat (npfd, newname, &nst, AT_SYMLINK_NOFOLLOW) == 0)
    have_new = TRUE;

  /* A directory carries its subtree: refuse moves that would carry a path
   * into or out of a rule (EXDEV: mv falls back to copy + delete, each of
   * which passes the policy file by file). */
  if ((S_ISDIR (ost.st_mode) && !fsg_path_state_same_scope (&os, &ns)) ||
      ((flags & RENAME_EXCHANGE) && have_new && S_ISDIR (nst.st_mode) &&
       !fsg_path_state_same_scope (&ns, &os)))
    {
      r = -EXDEV;
      g_rw_lock_writer_unlock (&fs->ns_lock);
      fsg_fs_audit (fs, req, "rename", p, name, np, newname, &os, TRUE, EXDEV, NULL);
      return reply_err (req, r);
    }
  /* Git protection may refuse, or install a checked copy itself. */
  r = fsg_git_rename (fs, req, p, pfd, name, np, npfd, newname, flags);
  if (r != 0)
    {
      /* the copy is in place and the source name gone: to the kernel and
       * the view, the source moved (its fd now holds the unlinked file) */
      if (r > 0)
        fsg_inode_renamed (fs, p, name, &ost, &os, np, newname, have_new ? &nst : NULL, &ns, flags);
      g_rw_lock_writer_unlock (&fs->ns_lock);
      if (r > 0)
        fsg_fs_audit (fs, req, "rename", p, name, np, newname, &os, FALSE, 0, NULL);
      return reply_err (req, r > 0 ? 0 : r);
    }
  if (CHECKED_AS_CALLER (fs, req, syscall (SYS_renameat2, pfd, name, npfd, newname, flags)) < 0)
    {
      r = -errno;
      goto out;
    }
  r = 0;
  fsg_inode_renamed (fs, p, name, &ost, &os, np, newname, have_new ? &nst : NULL, &ns, flags);

out:
  g_rw_lock_writer_unlock (&fs->ns_lock);
  if (r == 0)
    fsg_fs_audit (fs, req, "rename", p, name, np, newname, &os, FALSE, 0, NULL);
  reply_err (req, r);
}

/* ---- Files ------------------------------------------------------------- */

static const char *
mode_string (int flags)
{
  switch (flags & O_ACCMODE)
    {
    case O_RDONLY:
      return (flags & O_TRUNC) ? "w" : "r";
    case O_WRONLY:
      return "w";
    default:
      return "rw";
    }
}

/* Host open flags for the caller's @flags. The policy was decided on the
 * caller's flags; the writeback cache needs to read pages of files opened
 * write-only and handles O_APPEND itself. */
static int
host_open_flags (FsgFs *fs, int flags)
{
  flags &= ~(O_CREAT | O_EXCL | O_NOCTTY | O_NOFOLLOW);
  if (fs->writeback)
    {
      if ((flags & O_ACCMODE) == O_WRONLY)
        flags = (flags & ~O_ACCMODE) | O_RDWR;
      flags &= ~O_APPEND;
    }
  return flags | O_CLOEXEC;
}

/* Open (@dirfd, @name) with the host flags for the caller's @flags, as the
 * caller. The writeback cache asks for read access to files the caller
 * opened write-only; where the host refuses that (a mode 0200 file), the
 * file is opened write-only as asked and this open bypasses the page cache
 * (direct_io), so that the kernel never needs to read it. */
static int
open_as_caller (FsgFs *fs, fuse_req_t req, int dirfd, const char *name, int flags,
                int extra, mode_t mode, struct fuse_file_info *fi)
{
  int hflags = host_open_flags (fs, flags) | extra;
  /* A new file is always made as the caller, for its owner. */
  gboolean as_caller = fs->host_checks || (extra & O_CREAT);
  int fd = as_caller ? (int) AS_CALLER (fs, req, openat (dirfd, name, hflags, mode))
                     : openat (dirfd, name, hflags, mode);

  if (fd < 0 && errno == EACCES && (flags & O_ACCMODE) == O_WRONLY &&
      (hflags & O_ACCMODE) == O_RDWR)
    {
      hflags = (hflags & ~O_ACCMODE) | O_WRONLY;
      fd = as_caller ? (int) AS_CALLER (fs, req, openat (dirfd, name, hflags, mode))
                     : openat (dirfd, name, hflags, mode);
      if (fd >= 0)
        fi->direct_io = 1;
    }
  return fd;
}

gboolean
fsg_fs_close_is_silent (int fd)
{
  struct statfs sfs;

  if (fstatfs (fd, &sfs) != 0)
    return FALSE;
  switch ((unsigned long) sfs.f_type)
    {
    case EXT4_SUPER_MAGIC:
    case XFS_SUPER_MAGIC:
    case BTRFS_SUPER_MAGIC:
    case TMPFS_MAGIC:
    case RAMFS_MAGIC:
    case OVERLAYFS_SUPER_MAGIC:
      return TRUE;
    default:
      return FALSE;
    }
}

/* @passthrough: this open got a backing file (fsg_passthrough_open). */
static void
set_open_flags (FsgFs *fs, FsgInode *inode, int fd, gboolean passthrough, struct fuse_file_info *fi)
{
  /* Keep the page cache across opens. Read-only trees do not change
   * through the view; for writable ones FUSE_CAP_AUTO_INVAL_DATA drops
   * cached pages when the host's mtime or size changes. */
  fi->keep_cache = 1;
  /* No FLUSH round trip at close() when it could not report anything: the
   * file was opened read-only, or this open is served by kernel
   * passthrough (the FUSE inode has no dirty pages of its own) on a host
   * file system whose close cannot fail. Otherwise a FLUSH also writes back
   * mmap-dirtied pages and reports their errors, so it stays (set-id files
   * and failed backing opens included); the kernel ignores noflush with
   * the writeback cache anyway. A file with record locks gets its FLUSH:
   * the close of any of its fds releases the closing process's locks
   * (locks.c). */
  if (!fs->writeback && !fsg_locks_inode_has_locks (fs, inode) &&
      ((fi->flags & O_ACCMODE) == O_RDONLY || (passthrough && fsg_fs_close_is_silent (fd))))
    fi->noflush = 1;
}

static void
op_open (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  FsgFs *fs = req_fs (req);
  FsgInode *inode = fsg_fs_inode (fs, ino);
  FsgPathState s = fsg_inode_get_state (fs, inode);
  gboolean write = (fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & O_TRUNC);
  gboolean exec_open = FALSE;
  fsg_autopin FsgPin pin = { 0 };
  FsgInode *held;
  char proc[64];
  int fd, r, pathfd;

  if (inode->kind != FSG_INODE_HOST)
    return reply_err (req, inode->type == S_IFDIR ? -EISDIR : -EACCES);
  if (s.access == FSG_ACCESS_DENY || fsg_fs_is_denied_id (fs, inode->dev, inode->ino))
    return reply_err (req, fsg_fs_deny (fs, req, "open", inode, NULL, &s, EACCES));
  if (write && (r = writable_error (inode, &s)) < 0)
    {
      fsg_fs_audit (fs, req, "open", inode, NULL, NULL, NULL, &s, TRUE, -r, mode_string (fi->flags));
      return reply_err (req, r);
    }
  fsg_autogit FsgGitLock gl = fsg_git_lock_open (fs, inode, write);
  if (write && (r = fsg_git_check_write (fs, req, "open", inode)) < 0)
    return reply_err (req, r);
  if ((pathfd = fsg_pin (&pin, fs, inode)) < 0)
    return reply_err (req, pathfd);
  if (write)
    {
      struct stat lst;

      if (fstat (pathfd, &lst) < 0)
        return reply_err (req, -errno);
      if ((r = fsg_fs_check_linked_write (fs, req, "open", inode, &s, &lst)) < 0)
        return reply_err (req, r);
    }
  proc_fd_path (proc, sizeof proc, pathfd);
  if (fs->host_checks && (fi->flags & FSG_FMODE_EXEC) && (fi->flags & O_ACCMODE) == O_RDONLY)
    {
      /* execve(2) opens with FMODE_EXEC: check execute and read
       * permission as the caller, then open it as the daemon. Without
       * default_permissions the kernel checks nothing itself, so it would
       * not see that the caller cannot read the binary (a mode 0711 file of
       * another owner) and keep the process dumpable: its /proc/PID/mem
       * would give the binary away. Such a binary is refused (EACCES), as
       * in an unprivileged run. */
      if (AS_CALLER (fs, req, syscall (SYS_faccessat2, pathfd, "", X_OK | R_OK,
                                       AT_EACCESS | AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW)) < 0)
        return reply_err (req, errno == ENOSYS ? -EACCES : -errno);
      exec_open = TRUE;
    }
  fd = exec_open ? FD_RETRY (fs, open (proc, host_open_flags (fs, fi->flags)))
                 : FD_RETRY (fs, open_as_caller (fs, req, AT_FDCWD, proc, fi->flags, 0, 0, fi));
  if (fd < 0)
    return reply_err (req, -errno);
  fi->fh = fd;
  fsg_fs_audit (fs, req, "open", inode, NULL, NULL, NULL, &s, FALSE, 0, mode_string (fi->flags));
  /* Decided above; from here on the kernel may do the I/O itself. */
  set_open_flags (fs, inode, fd, fs->passthrough && fsg_passthrough_open (fs, inode, fd) > 0, fi);
  if (fsg_inode_reads_around_cache (fs, inode))
    {
      /* The host file can change through a writable sibling, which the
       * kernel's size and pages of this inode would not follow: read
       * around them. */
      fi->direct_io = 1;
      fi->keep_cache = 0;
    }
  /* The open file owns the pin taken above (given back in op_release):
   * fstat/fchmod of an open, unlinked file keep working. */
  pin.inode = NULL;
  /* Alive after the reply even if the file is released meanwhile. */
  held = (fi->flags & O_TRUNC) ? fsg_inode_hold_shared (fs, inode, TRUE) : NULL;
  if (fuse_reply_open (req, fi) == -ENOENT)
    {
      fsg_passthrough_release (fs, inode, fd);
      close (fd); /* interrupted: the kernel will not release it */
      fsg_inode_unpin (fs, inode);
    }
  fsg_inode_changed_unhold (fs, held);
}

static void
op_create (fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
           struct fuse_file_info *fi)
{
  FsgFs *fs = req_fs (req);
  FsgInode *p = fsg_fs_inode (fs, parent);
  FsgPathState cs;
  struct fuse_entry_param e;
  struct stat st;
  fsg_autopin FsgPin pin = { 0 };
  fsg_autopin FsgPin fpin = { 0 };
  FsgInode *inode;
  int fd, r, pfd;
  fsg_autogit FsgGitLock gl = fsg_git_lock (fs, p, name, NULL, NULL, FALSE);

  if ((r = check_entry (fs, req, "create", p, name, FALSE, &cs)) < 0)
    return reply_err (req, r);
  if ((pfd = fsg_pin (&pin, fs, p)) < 0)
    return reply_err (req, pfd);
  mode = strip_mode (req, caller_mode (req, mode & 07777), FALSE);
  if ((r = fsg_git_check_create (fs, req, "create", p, name, S_IFREG, &mode)) < 0)
    return reply_err (req, r);
  /* O_NOFOLLOW: a symlink planted at @name after the negative lookup is
   * never followed on the host. */
  g_rw_lock_reader_lock (&fs->ns_lock);
  /* without O_TRUNC: an existing file is truncated only after the checks */
  fd = FD_RETRY (fs, open_as_caller (fs, req, pfd, name, fi->flags & ~O_TRUNC,
                                     O_CREAT | O_NOFOLLOW | (fi->flags & O_EXCL), mode, fi));
  r = fd < 0 ? -errno : 0;
  g_rw_lock_reader_unlock (&fs->ns_lock);
  if (r < 0)
    return reply_err (req, r);
  /* Refuse a file whose identity cannot be checked: fail closed. */
  if (fstat (fd, &st) < 0 || fsg_fs_is_denied_id (fs, st.st_dev, st.st_ino))
    {
      close (fd);
      return reply_err (req, fsg_fs_deny (fs, req, "create", p, name, &cs, EACCES));
    }
  r = fsg_inode_lookup (fs, req, p, name, &e, "create");
  entry_for_caller (fs, &e);
  if (r < 0)
    {
      close (fd);
      return reply_err (req, r);
    }
  inode = fsg_fs_inode (fs, e.ino);
  /* an existing file with other links (issue 14 item 2): the same proof as
   * op_open (review L9), before any truncation */
  if (S_ISREG (st.st_mode) && st.st_nlink > 1
      && ((fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & O_TRUNC))
      && (r = fsg_fs_check_linked_write (fs, req, "create", inode, &cs, &st)) < 0)
    {
      close (fd);
      fsg_inode_forget (fs, inode, 1);
      return reply_err (req, r);
    }
  if ((fi->flags & O_TRUNC) && S_ISREG (st.st_mode) && st.st_size > 0 && ftruncate (fd, 0) < 0)
    {
      r = -errno;
      close (fd);
      fsg_inode_forget (fs, inode, 1);
      return reply_err (req, r);
    }
  /* The open file owns a pin of its inode (given back in op_release). An
   * unlink racing this create may leave an evicted inode that cannot be
   * reopened: then the create fails instead of answering an open file
   * without its pin. */
  if ((r = fsg_pin (&fpin, fs, inode)) < 0)
    {
      close (fd);
      fsg_inode_forget (fs, inode, 1);
      return reply_err (req, r);
    }
  fi->fh = fd;
  fsg_fs_audit (fs, req, "create", p, name, NULL, NULL, &cs, FALSE, 0, mode_string (fi->flags));
  set_open_flags (fs, inode, fd, fs->passthrough && fsg_passthrough_open (fs, inode, fd) > 0, fi);
  fpin.inode = NULL; /* owned by the open file from here on */
  if (fuse_reply_create (req, &e, fi) == -ENOENT)
    {
      fsg_passthrough_release (fs, inode, fd);
      close (fd);
      fsg_inode_unpin (fs, inode);
      fsg_inode_forget (fs, inode, 1);
    }
}

static void
op_read (fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
  struct fuse_bufvec buf = FUSE_BUFVEC_INIT (size);

  buf.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
  buf.buf[0].fd = fi->fh;
  buf.buf[0].pos = off;
  fuse_reply_data (req, &buf, FUSE_BUF_SPLICE_MOVE);
}

/* A root daemon writes with CAP_FSETID, so the host would keep the set-id
 * bits of a file written through it. The kernel clears them itself (a
 * SETATTR) for cached writes unless the daemon took FUSE_HANDLE_KILLPRIV,
 * and never for direct I/O (the 0200 fallback of open_as_caller,
 * O_DIRECT): a write to a file with a set-id bit is therefore made with
 * the caller's credentials (creds_enter drops CAP_FSETID unless the caller
 * is root of the daemon's own namespace), and the host clears the bits as
 * it would for the caller, by its own rules (set-gid without group
 * execute included). Returns TRUE with @c to leave. */
static gboolean
setid_write_enter (FsgFs *fs, fuse_req_t req, int fd, FsgCreds *c)
{
  struct stat st;

  if (!fs->is_root || fstat (fd, &st) < 0 || !S_ISREG (st.st_mode))
    return FALSE;
  if (!(st.st_mode & (S_ISUID | S_ISGID)))
    return FALSE;
  return creds_enter (fs, req, c, TRUE);
}

static void
op_write_buf (fuse_req_t req, fuse_ino_t ino, struct fuse_bufvec *in_buf, off_t off,
              struct fuse_file_info *fi)
{
  FsgFs *fs = req_fs (req); /* @req is freed by the reply */
  struct fuse_bufvec out = FUSE_BUFVEC_INIT (fuse_buf_size (in_buf));
  FsgInode *held;
  FsgCreds c;
  gboolean setid;
  ssize_t n;

  out.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
  out.buf[0].fd = fi->fh;
  out.buf[0].pos = off;
  setid = setid_write_enter (fs, req, fi->fh, &c);
  n = fuse_buf_copy (&out, in_buf, 0);
  if (setid)
    creds_leave (fs, &c);
  if (n < 0)
    return reply_err (req, (int) n);
  /* After the reply the file may be released and the inode forgotten. */
  held = fsg_inode_hold_shared (fs, fsg_fs_inode (fs, ino), FALSE);
  fuse_reply_write (req, (size_t) n);
  fsg_inode_changed_unhold (fs, held);
}

static void
op_flush (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  FsgFs *fs = req_fs (req);
  int fd;

  /* close(2) drops the closing process's record locks on the file. */
  fsg_locks_flush (fs, fsg_fs_inode (fs, ino), fi->lock_owner);
  /* Sent without the file's inode lock (unlike WRITE from fsync and
   * writeback): a sibling retired before this reply is retired when
   * close() returns. */
  fsg_inode_changed (fs, fsg_fs_inode (fs, ino), FALSE);
  /* close() of a dup reports delayed write errors (NFS) like close(2) would. */
  fd = FD_RETRY (fs, fcntl (fi->fh, F_DUPFD_CLOEXEC, 0));
  if (fd < 0)
    return reply_err (req, -errno);
  reply_err (req, close (fd) == 0 ? 0 : -errno);
}

static void
op_release (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  FsgFs *fs = req_fs (req);
  FsgInode *inode = fsg_fs_inode (fs, ino);

  fsg_locks_release (fs, inode, (int) fi->fh);
  fsg_passthrough_release (fs, inode, (int) fi->fh);
  close (fi->fh);
  if (inode->kind == FSG_INODE_HOST)
    fsg_inode_unpin (fs, inode); /* taken in op_open / op_create */
  fuse_reply_err (req, 0);
}

/* Locks need no policy decision: the kernel checked the caller's open file
 * (its access mode for the lock type), which the policy allowed at open. */
static void
op_getlk (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi, struct flock *lock)
{
  FsgFs *fs = req_fs (req);

  fsg_locks_getlk (fs, req, fsg_fs_inode (fs, ino), fi, lock);
}

static void
op_setlk (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi, struct flock *lock, int sleep)
{
  FsgFs *fs = req_fs (req);

  fsg_locks_setlk (fs, req, fsg_fs_inode (fs, ino), fi, lock, sleep);
}

static void
op_flock (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi, int op)
{
  FsgFs *fs = req_fs (req);

  fsg_locks_flock (fs, req, fsg_fs_inode (fs, ino), fi, op);
}

static void
op_fsync (fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
  FsgFs *fs = req_fs (req); /* @req is freed by the reply */
  FsgInode *held = fsg_inode_hold_shared (fs, fsg_fs_inode (fs, ino), FALSE);
  int r;

  r = datasync ? fdatasync (fi->fh) : fsync (fi->fh);
  reply_err (req, r == 0 ? 0 : -errno);
  fsg_inode_changed_unhold (fs, held);
}

static void
op_fallocate (fuse_req_t req, fuse_ino_t ino, int mode, off_t offset, off_t length,
              struct fuse_file_info *fi)
{
  FsgFs *fs = req_fs (req); /* @req is freed by the reply */
  FsgInode *held = fsg_inode_hold_shared (fs, fsg_fs_inode (fs, ino),
                                          (mode & ~FALLOC_FL_KEEP_SIZE) != 0);

  FsgCreds c;
  gboolean setid = setid_write_enter (fs, req, fi->fh, &c);
  int r = fallocate (fi->fh, mode, offset, length) == 0 ? 0 : -errno;

  if (setid)
    creds_leave (fs, &c);
  reply_err (req, r);
  fsg_inode_changed_unhold (fs, held);
}

static void
op_lseek (fuse_req_t req, fuse_ino_t ino, off_t off, int whence, struct fuse_file_info *fi)
{
  off_t r;

  r = lseek (fi->fh, off, whence);
  if (r < 0)
    return reply_err (req, -errno);
  fuse_reply_lseek (req, r);
}

static void
op_copy_file_range (fuse_req_t req, fuse_ino_t ino_in, off_t off_in, struct fuse_file_info *fi_in,
                    fuse_ino_t ino_out, off_t off_out, struct fuse_file_info *fi_out,
                    size_t len, int flags)
{
  FsgFs *fs = req_fs (req); /* @req is freed by the reply */
  FsgInode *held;
  FsgCreds c;
  gboolean setid;
  ssize_t n;

  /* fi_out was opened for writing, so the policy allowed it at open. */
  setid = setid_write_enter (fs, req, fi_out->fh, &c);
  n = copy_file_range (fi_in->fh, &off_in, fi_out->fh, &off_out, len, flags);
  if (setid)
    creds_leave (fs, &c);
  if (n < 0)
    return reply_err (req, -errno);
  held = fsg_inode_hold_shared (fs, fsg_fs_inode (fs, ino_out), FALSE);
  fuse_reply_write (req, (size_t) n);
  fsg_inode_changed_unhold (fs, held);
}

/* ---- Directories ------------------------------------------------------- */

typedef struct
{
  char *name;
  guint64 ino;
  unsigned char type; /* DT_* */
  gboolean opaque;    /* no lookup for readdirplus: ".", ".." or denied */
} FsgDirent;

typedef struct
{
  DIR *dp;            /* NULL for synthetic directories */
  FsgInode *pinned;   /* host directories stay pinned while open, so that
                       * *at() calls relative to an open directory reach it
                       * wherever it was moved, even without file handles */
  GArray *ents;       /* FsgDirent */
  gboolean loaded;
} FsgDir;

static void
dirent_clear (gpointer p)
{
  g_free (((FsgDirent *) p)->name);
}

static void
dir_add (FsgDir *d, const char *name, guint64 ino, unsigned char type, gboolean opaque)
{
  FsgDirent ent = { g_strdup (name), ino, type, opaque };

  g_array_append_val (d->ents, ent);
}

static gboolean
name_in (GPtrArray *names, const char *name)
{
  if (names == NULL)
    return FALSE;
  for (guint i = 0; i < names->len; i++)
    if (strcmp (names->pdata[i], name) == 0)
      return TRUE;
  return FALSE;
}

/* Snapshot the visible entries: what the policy lets the caller see. */
static int
dir_load (FsgFs *fs, FsgInode *inode, FsgDir *d)
{
  FsgPathState s = fsg_inode_get_state (fs, inode);
  GPtrArray *stubs = fsg_inode_stub_children (fs, inode);
  struct stat self;

  g_array_set_size (d->ents, 0);
  /* "." carries the view's inode number, also when the directory cannot
   * be stat'ed right now (the number does not need the host). */
  if (fsg_inode_stat (fs, inode, &self) < 0)
    self.st_ino = inode->kind == FSG_INODE_HOST ? fsg_fs_map_ino (fs, inode->dev, inode->ino)
                                                : inode->fake_ino;
  dir_add (d, ".", self.st_ino, DT_DIR, TRUE);
  dir_add (d, "..", 1, DT_DIR, TRUE);
  if (stubs != NULL)
    for (guint i = 0; i < stubs->len; i++)
      dir_add (d, stubs->pdata[i], 0, DT_DIR, FALSE);

  if (inode->kind == FSG_INODE_SYNTH)
    {
      g_autofree const char **names = fsg_policy_synthetic_children (fs->policy, &s);

      for (guint i = 0; names != NULL && names[i] != NULL; i++)
        {
          FsgPathState cs = fsg_policy_child_state (fs->policy, &s, names[i]);
          unsigned char type = DT_UNKNOWN;

          if (name_in (stubs, names[i]))
            continue;
          if (cs.flags & FSG_STATE_ALIAS)
            type = DT_LNK;
          else if (cs.flags & FSG_STATE_SYNTHETIC)
            type = DT_DIR;
          else if (cs.access == FSG_ACCESS_DENY)
            {
              if (!fsg_fs_hides (fs, inode, &cs))
                dir_add (d, names[i], 0, DT_UNKNOWN, TRUE);
              continue;
            }
          else if (cs.access == FSG_ACCESS_ABSENT)
            continue;
          else
            {
              /* A root: listed only if it exists (optional roots may not). */
              g_autofree char *path = fsg_inode_path (fs, inode, names[i]);
              if (!g_hash_table_contains (fs->root_fds, path))
                continue;
            }
          dir_add (d, names[i], 0, type, FALSE);
        }
      return 0;
    }
  if (inode->kind != FSG_INODE_HOST)
    return 0;

  rewinddir (d->dp);
  for (;;)
    {
      struct dirent *de;
      FsgPathState cs;

      errno = 0;
      de = readdir (d->dp);
      if (de == NULL)
        {
          if (errno != 0)
            return -errno;
          break;
        }
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      if (name_in (stubs, de->d_name))
        continue;
      cs = fsg_policy_child_state (fs->policy, &s, de->d_name);
      if (cs.access == FSG_ACCESS_ABSENT && !(cs.flags & (FSG_STATE_SYNTHETIC | FSG_STATE_ALIAS)))
        continue;
      if (cs.access == FSG_ACCESS_DENY || fsg_fs_is_denied_id (fs, inode->dev, de->d_ino))
        {
          if (!fsg_fs_hides (fs, inode, &cs))
            dir_add (d, de->d_name, fsg_fs_map_ino (fs, inode->dev, de->d_ino), de->d_type, TRUE);
          continue;
        }
      dir_add (d, de->d_name, fsg_fs_map_ino (fs, inode->dev, de->d_ino),
               (cs.flags & FSG_STATE_ALIAS) ? DT_LNK : de->d_type, FALSE);
    }
  return 0;
}

static void
op_opendir (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  FsgFs *fs = req_fs (req);
  FsgInode *inode = fsg_fs_inode (fs, ino);
  FsgPathState s = fsg_inode_get_state (fs, inode);
  FsgDir *d;

  if (inode->type != S_IFDIR || inode->kind == FSG_INODE_ALIAS)
    return reply_err (req, -ENOTDIR);
  if (s.access == FSG_ACCESS_DENY)
    return reply_err (req, fsg_fs_deny (fs, req, "opendir", inode, NULL, &s, EACCES));
  d = g_new0 (FsgDir, 1);
  d->ents = g_array_new (FALSE, FALSE, sizeof (FsgDirent));
  g_array_set_clear_func (d->ents, dirent_clear);
  if (inode->kind == FSG_INODE_HOST)
    {
      fsg_autopin FsgPin pin = { 0 };
      int pathfd = fsg_pin (&pin, fs, inode);
      int fd = pathfd < 0 ? (errno = -pathfd, -1)
                          : FD_RETRY (fs, CHECKED_AS_CALLER (fs, req, openat (pathfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)));

      if (fd < 0 || (d->dp = fdopendir (fd)) == NULL)
        {
          int r = -errno;
          if (fd >= 0)
            close (fd);
          g_array_unref (d->ents);
          g_free (d);
          return reply_err (req, r);
        }
      if (fsg_inode_pin (fs, inode) >= 0) /* cannot fail: pinned already */
        d->pinned = inode;
    }
  fi->fh = (uint64_t) (uintptr_t) d;
  /* Let the kernel keep listings, writable directories included: a change
   * through the view drops the cached listing at once, and a change on the
   * host does when the directory's mtime is next seen to differ
   * (FUSE_CAP_AUTO_INVAL_DATA checks it at the start of every listing,
   * within the attribute timeout). The listing is filtered by the policy,
   * which does not change while mounted. */
  fi->cache_readdir = 1;
  fi->keep_cache = 1;
  if (fuse_reply_open (req, fi) == -ENOENT)
    {
      if (d->dp)
        closedir (d->dp);
      if (d->pinned)
        fsg_inode_unpin (fs, d->pinned);
      g_array_unref (d->ents);
      g_free (d);
    }
}

static void
do_readdir (fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
            struct fuse_file_info *fi, gboolean plus)
{
  FsgFs *fs = req_fs (req);
  FsgInode *inode = fsg_fs_inode (fs, ino);
  FsgDir *d = (FsgDir *) (uintptr_t) fi->fh;
  g_autofree char *buf = NULL;
  g_autoptr(GArray) looked_up = NULL; /* fuse_ino_t given a lookup count */
  fsg_autopin FsgPin dpin = { 0 };
  size_t pos = 0;
  int r;

  if (off == 0 || !d->loaded)
    {
      if ((r = dir_load (fs, inode, d)) < 0)
        return reply_err (req, r);
      d->loaded = TRUE;
    }
  buf = g_malloc (size);
  if (plus)
    looked_up = g_array_new (FALSE, FALSE, sizeof (fuse_ino_t));
  /* The directory's fd, with the daemon's credentials (a reopen by file
   * handle needs them), before any lookup as the caller. */
  if (plus && fs->host_checks && inode->kind == FSG_INODE_HOST)
    (void) fsg_pin (&dpin, fs, inode);
  /* The offset is the index of the next entry, all 64 bits of it: an
   * lseek() beyond the listing ends it. */
  for (guint64 i = off < 0 ? G_MAXUINT64 : (guint64) off; i < d->ents->len; i++)
    {
      FsgDirent *ent = &g_array_index (d->ents, FsgDirent, i);
      size_t n;

      if (plus)
        {
          struct fuse_entry_param e;
          gboolean looked = FALSE;

          memset (&e, 0, sizeof e);
          if (!ent->opaque)
            {
              FsgCreds c;
              int lr = -EACCES;

              /* Only the host lookup as the caller (search permission);
               * pins and reopens by file handle keep the daemon's
               * credentials, as in op_lookup. */
              if (!fs->host_checks)
                lr = fsg_inode_lookup (fs, req, inode, ent->name, &e, "readdir");
              else if (creds_enter (fs, req, &c, FALSE))
                {
                  lr = fsg_inode_lookup (fs, req, inode, ent->name, &e, "readdir");
                  creds_leave (fs, &c);
                }
              if (lr == 0 && refuse_case_insensitive (fs, req, inode, ent->name, &e) == 0)
                looked = TRUE;
            }
          entry_for_caller (fs, &e);
          if (!looked)
            {
              memset (&e, 0, sizeof e);
              e.attr.st_ino = ent->ino;
              e.attr.st_mode = (mode_t) ent->type << 12;
            }
          n = fuse_add_direntry_plus (req, buf + pos, size - pos, ent->name, &e, (off_t) (i + 1));
          if (n > size - pos)
            {
              if (looked)
                fsg_inode_forget (fs, fsg_fs_inode (fs, e.ino), 1);
              break;
            }
          if (looked)
            g_array_append_val (looked_up, e.ino);
        }
      else
        {
          struct stat st;

          memset (&st, 0, sizeof st);
          st.st_ino = ent->ino;
          st.st_mode = (mode_t) ent->type << 12;
          n = fuse_add_direntry (req, buf + pos, size - pos, ent->name, &st, (off_t) (i + 1));
          if (n > size - pos)
            break;
        }
      pos += n;
    }
  /* Entries of a reply that never reached the kernel (interrupted) carry
   * no lookup count there: take them back. */
  if (fuse_reply_buf (req, buf, pos) != 0 && looked_up != NULL)
    for (guint k = 0; k < looked_up->len; k++)
      fsg_inode_forget (fs, fsg_fs_inode (fs, g_array_index (looked_up, fuse_ino_t, k)), 1);
}

static void
op_readdir (fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
  do_readdir (req, ino, size, off, fi, FALSE);
}

static void
op_readdirplus (fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
  /* The entries' lookups as the caller (do_readdir): without search
   * permission on the directory, names are listed but not their
   * attributes. */
  do_readdir (req, ino, size, off, fi, TRUE);
}

static void
op_releasedir (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
  FsgDir *d = (FsgDir *) (uintptr_t) fi->fh;

  if (d->dp)
    closedir (d->dp);
  if (d->pinned)
    fsg_inode_unpin (req_fs (req), d->pinned);
  g_array_unref (d->ents);
  g_free (d);
  fuse_reply_err (req, 0);
}

static void
op_fsyncdir (fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
  FsgDir *d = (FsgDir *) (uintptr_t) fi->fh;
  int r = 0;

  if (d->dp)
    r = (datasync ? fdatasync (dirfd (d->dp)) : fsync (dirfd (d->dp))) == 0 ? 0 : -errno;
  reply_err (req, r);
}

static void
op_statfs (fuse_req_t req, fuse_ino_t ino)
{
  FsgFs *fs = req_fs (req);
  FsgInode *inode = fsg_fs_inode (fs, ino);
  fsg_autopin FsgPin pin = { 0 };
  int fd = inode->kind == FSG_INODE_HOST ? fsg_pin (&pin, fs, inode) : -1;
  struct statvfs sv;
  struct statfs sf;

  memset (&sv, 0, sizeof sv);
  if (fd >= 0 && fstatfs (fd, &sf) == 0)
    {
      sv.f_bsize = sf.f_bsize;
      sv.f_frsize = sf.f_frsize ? sf.f_frsize : sf.f_bsize;
      sv.f_blocks = sf.f_blocks;
      sv.f_bfree = sf.f_bfree;
      sv.f_bavail = sf.f_bavail;
      sv.f_files = sf.f_files;
      sv.f_ffree = sf.f_ffree;
      sv.f_favail = sf.f_ffree;
      sv.f_namemax = sf.f_namelen;
    }
  else
    {
      sv.f_bsize = sv.f_frsize = 4096;
      sv.f_namemax = 255;
    }
  fuse_reply_statfs (req, &sv);
}

/* access(2) and chdir(2); sent only without default_permissions. The
 * host's answer with the caller's credentials (effective ids, as the
 * kernel has already put the real ids in the request for access(2)), then,
 * like a read-only bind mount: EROFS for W_OK on anything the policy keeps
 * read-only, except device, FIFO and socket nodes. Never ENOSYS: that would
 * make the kernel stop asking and allow everything. */
static void
op_access (fuse_req_t req, fuse_ino_t ino, int mask)
{
  FsgFs *fs = req_fs (req);
  FsgInode *inode = fsg_fs_inode (fs, ino);
  FsgPathState s = fsg_inode_get_state (fs, inode);
  fsg_autopin FsgPin pin = { 0 };
  int fd, r;

  if (s.access == FSG_ACCESS_DENY ||
      (inode->kind == FSG_INODE_HOST && fsg_fs_is_denied_id (fs, inode->dev, inode->ino)))
    return reply_err (req, fsg_fs_deny (fs, req, "access", inode, NULL, &s, EACCES));
  if (inode->kind == FSG_INODE_HOST)
    {
      if ((fd = fsg_pin (&pin, fs, inode)) < 0)
        return reply_err (req, fd);
      r = (int) AS_CALLER (fs, req, syscall (SYS_faccessat2, fd, "", mask,
                                             AT_EACCESS | AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW));
      if (r < 0 && errno == ENOSYS)
        {
          char proc[64];

          proc_fd_path (proc, sizeof proc, fd);
          r = (int) AS_CALLER (fs, req, faccessat (AT_FDCWD, proc, mask, AT_EACCESS));
        }
      if (r < 0)
        return reply_err (req, errno == ENOSYS ? -EACCES : -errno);
      if (inode->type != S_IFREG && inode->type != S_IFDIR && inode->type != S_IFLNK)
        return reply_err (req, 0);
    }
  if (mask & W_OK)
    return reply_err (req, writable_error (inode, &s));
  fuse_reply_err (req, 0);
}

/* ---- Extended attributes ----------------------------------------------- */

static gboolean
is_user_xattr (const char *name)
{
  return g_str_has_prefix (name, "user.");
}

static void
op_getxattr (fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
  FsgFs *fs = req_fs (req);
  FsgInode *inode = fsg_fs_inode (fs, ino);
  g_autofree char *buf = NULL;
  fsg_autopin FsgPin pin = { 0 };
  char proc[64];
  ssize_t n;
  int fd;

  if (!fs->user_xattrs)
    return reply_err (req, -ENOSYS); /* the kernel stops asking */
  if (!is_user_xattr (name) || inode->kind != FSG_INODE_HOST || inode->type == S_IFLNK)
    return reply_err (req, -ENODATA);
  if ((fd = fsg_pin (&pin, fs, inode)) < 0)
    return reply_err (req, fd);
  proc_fd_path (proc, sizeof proc, fd);
  if (size > 0)
    buf = g_malloc (size);
  n = CHECKED_AS_CALLER (fs, req, getxattr (proc, name, buf, size));
  if (n < 0)
    return reply_err (req, -errno);
  if (size == 0)
    fuse_reply_xattr (req, (size_t) n);
  else
    fuse_reply_buf (req, buf, (size_t) n);
}

static void
op_listxattr (fuse_req_t req, fuse_ino_t ino, size_t size)
{
  FsgFs *fs = req_fs (req);
  FsgInode *inode = fsg_fs_inode (fs, ino);
  g_autofree char *all = NULL;
  g_autoptr(GString) out = g_string_new (NULL);
  fsg_autopin FsgPin pin = { 0 };
  char proc[64];
  ssize_t n;
  int fd;

  if (!fs->user_xattrs)
    return reply_err (req, -ENOSYS);
  if (inode->kind == FSG_INODE_HOST && inode->type != S_IFLNK)
    {
      if ((fd = fsg_pin (&pin, fs, inode)) < 0)
        return reply_err (req, fd);
      proc_fd_path (proc, sizeof proc, fd);
      n = listxattr (proc, NULL, 0);
      if (n < 0)
        return reply_err (req, -errno);
      all = g_malloc (n + 1);
      n = listxattr (proc, all, n);
      if (n < 0)
        return reply_err (req, -errno);
      for (ssize_t k = 0; k < n; k += strlen (all + k) + 1)
        if (is_user_xattr (all + k))
          g_string_append_len (out, all + k, strlen (all + k) + 1);
    }
  if (size == 0)
    fuse_reply_xattr (req, out->len);
  else if (out->len > size)
    reply_err (req, -ERANGE);
  else
    fuse_reply_buf (req, out->str, out->len);
}

static int
check_xattr_write (FsgFs *fs, fuse_req_t req, FsgInode *inode, const char *name, const char *op)
{
  FsgPathState s = fsg_inode_get_state (fs, inode);
  int r;

  if ((r = writable_error (inode, &s)) < 0)
    return fsg_fs_deny (fs, req, op, inode, NULL, &s, -r);
  /* security.* (file capabilities), trusted.* and system.* are never
   * written on the caller's behalf: the daemon has privileges the caller
   * lacks. */
  if (!is_user_xattr (name))
    return fsg_fs_deny (fs, req, op, inode, NULL, &s, EPERM);
  if (inode->type == S_IFLNK)
    return -EPERM;
  /* review L9: an xattr of a file with other links is theirs too */
  if (inode->type == S_IFREG)
    {
      fsg_autopin FsgPin pin = { 0 };
      struct stat st;
      int fd = fsg_pin (&pin, fs, inode);

      if (fd < 0)
        return fd;
      if (fstat (fd, &st) < 0)
        return -errno;
      if ((r = fsg_fs_check_linked_write (fs, req, op, inode, &s, &st)) < 0)
        return r;
    }
  return 0;
}

static void
op_setxattr (fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
             size_t size, int flags)
{
  FsgFs *fs = req_fs (req);
  FsgInode *inode = fsg_fs_inode (fs, ino);
  fsg_autopin FsgPin pin = { 0 };
  char proc[64];
  int r, fd;

  if (!fs->user_xattrs)
    return reply_err (req, -ENOSYS);
  if ((r = check_xattr_write (fs, req, inode, name, "setxattr")) < 0)
    return reply_err (req, r);
  if ((fd = fsg_pin (&pin, fs, inode)) < 0)
    return reply_err (req, fd);
  proc_fd_path (proc, sizeof proc, fd);
  reply_err (req, CHECKED_AS_CALLER (fs, req, setxattr (proc, name, value, size, flags)) == 0 ? 0 : -errno);
}

static void
op_removexattr (fuse_req_t req, fuse_ino_t ino, const char *name)
{
  FsgFs *fs = req_fs (req);
  FsgInode *inode = fsg_fs_inode (fs, ino);
  fsg_autopin FsgPin pin = { 0 };
  char proc[64];
  int r, fd;

  if (!fs->user_xattrs)
    return reply_err (req, -ENOSYS);
  if ((r = check_xattr_write (fs, req, inode, name, "removexattr")) < 0)
    return reply_err (req, r);
  if ((fd = fsg_pin (&pin, fs, inode)) < 0)
    return reply_err (req, fd);
  proc_fd_path (proc, sizeof proc, fd);
  reply_err (req, CHECKED_AS_CALLER (fs, req, removexattr (proc, name)) == 0 ? 0 : -errno);
}

/* Every handler runs inside a wrapper that counts the request (before the
 * handler, so a caller woken by the reply never sees it uncounted), and
 * with FsgFsOptions.op_timing adds the CPU time of the thread that served
 * it (the handler and its reply; not the time spent preempted by the
 * caller the reply woke). The CPU clock is a system call (~0.5 us here),
 * so it is read only when asked for. @req is not touched after the
 * handler: the reply freed it. */
static inline guint64
op_clock (FsgFs *fs)
{
  struct timespec ts;

  if (!fs->op_timing)
    return 0;
  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return (guint64) ts.tv_sec * G_GUINT64_CONSTANT (1000000000) + (guint64) ts.tv_nsec;
}

static inline guint64
op_begin (FsgFs *fs, FsgFsOp op)
{
  __atomic_fetch_add (&fs->op_requests[op], 1, __ATOMIC_RELAXED);
  return op_clock (fs);
}

static inline void
op_end (FsgFs *fs, FsgFsOp op, guint64 start)
{
  if (fs->op_timing)
    __atomic_fetch_add (&fs->op_ns[op], op_clock (fs) - start, __ATOMIC_RELAXED);
}

#define FSG_COUNTED_OP(OP, handler, PARAMS, ARGS)                 \
  static void counted_##handler PARAMS                             \
  {                                                                \
    FsgFs *fs_ = fuse_req_userdata (req);                          \
    guint64 start_ = op_begin (fs_, OP);                           \
    handler ARGS;                                                  \
    op_end (fs_, OP, start_);                                      \
  }

typedef struct fuse_file_info FsgFileInfo;

FSG_COUNTED_OP (FSG_FS_OP_LOOKUP, op_lookup, (fuse_req_t req, fuse_ino_t p, const char *n), (req, p, n))
FSG_COUNTED_OP (FSG_FS_OP_FORGET, op_forget, (fuse_req_t req, fuse_ino_t i, uint64_t n), (req, i, n))
FSG_COUNTED_OP (FSG_FS_OP_FORGET, op_forget_multi, (fuse_req_t req, size_t c, struct fuse_forget_data *f), (req, c, f))
FSG_COUNTED_OP (FSG_FS_OP_GETATTR, op_getattr, (fuse_req_t req, fuse_ino_t i, FsgFileInfo *fi), (req, i, fi))
FSG_COUNTED_OP (FSG_FS_OP_SETATTR, op_setattr, (fuse_req_t req, fuse_ino_t i, struct stat *a, int v, FsgFileInfo *fi),
       (req, i, a, v, fi))
FSG_COUNTED_OP (FSG_FS_OP_READLINK, op_readlink, (fuse_req_t req, fuse_ino_t i), (req, i))
FSG_COUNTED_OP (FSG_FS_OP_MKNOD, op_mknod, (fuse_req_t req, fuse_ino_t p, const char *n, mode_t m, dev_t d),
       (req, p, n, m, d))
FSG_COUNTED_OP (FSG_FS_OP_MKDIR, op_mkdir, (fuse_req_t req, fuse_ino_t p, const char *n, mode_t m), (req, p, n, m))
FSG_COUNTED_OP (FSG_FS_OP_UNLINK, op_unlink, (fuse_req_t req, fuse_ino_t p, const char *n), (req, p, n))
FSG_COUNTED_OP (FSG_FS_OP_RMDIR, op_rmdir, (fuse_req_t req, fuse_ino_t p, const char *n), (req, p, n))
FSG_COUNTED_OP (FSG_FS_OP_SYMLINK, op_symlink, (fuse_req_t req, const char *l, fuse_ino_t p, const char *n),
       (req, l, p, n))
FSG_COUNTED_OP (FSG_FS_OP_RENAME, op_rename,
       (fuse_req_t req, fuse_ino_t p, const char *n, fuse_ino_t np, const char *nn, unsigned int f),
       (req, p, n, np, nn, f))
FSG_COUNTED_OP (FSG_FS_OP_LINK, op_link, (fuse_req_t req, fuse_ino_t i, fuse_ino_t np, const char *nn), (req, i, np, nn))
FSG_COUNTED_OP (FSG_FS_OP_OPEN, op_open, (fuse_req_t req, fuse_ino_t i, FsgFileInfo *fi), (req, i, fi))
FSG_COUNTED_OP (FSG_FS_OP_CREATE, op_create, (fuse_req_t req, fuse_ino_t p, const char *n, mode_t m, FsgFileInfo *fi),
       (req, p, n, m, fi))
FSG_COUNTED_OP (FSG_FS_OP_READ, op_read, (fuse_req_t req, fuse_ino_t i, size_t s, off_t o, FsgFileInfo *fi),
       (req, i, s, o, fi))
FSG_COUNTED_OP (FSG_FS_OP_WRITE, op_write_buf, (fuse_req_t req, fuse_ino_t i, struct fuse_bufvec *b, off_t o, FsgFileInfo *fi),
       (req, i, b, o, fi))
FSG_COUNTED_OP (FSG_FS_OP_FLUSH, op_flush, (fuse_req_t req, fuse_ino_t i, FsgFileInfo *fi), (req, i, fi))
FSG_COUNTED_OP (FSG_FS_OP_RELEASE, op_release, (fuse_req_t req, fuse_ino_t i, FsgFileInfo *fi), (req, i, fi))
FSG_COUNTED_OP (FSG_FS_OP_FSYNC, op_fsync, (fuse_req_t req, fuse_ino_t i, int d, FsgFileInfo *fi), (req, i, d, fi))
FSG_COUNTED_OP (FSG_FS_OP_OPENDIR, op_opendir, (fuse_req_t req, fuse_ino_t i, FsgFileInfo *fi), (req, i, fi))
FSG_COUNTED_OP (FSG_FS_OP_READDIR, op_readdir, (fuse_req_t req, fuse_ino_t i, size_t s, off_t o, FsgFileInfo *fi),
       (req, i, s, o, fi))
FSG_COUNTED_OP (FSG_FS_OP_READDIRPLUS, op_readdirplus, (fuse_req_t req, fuse_ino_t i, size_t s, off_t o, FsgFileInfo *fi),
       (req, i, s, o, fi))
FSG_COUNTED_OP (FSG_FS_OP_RELEASEDIR, op_releasedir, (fuse_req_t req, fuse_ino_t i, FsgFileInfo *fi), (req, i, fi))
FSG_COUNTED_OP (FSG_FS_OP_FSYNCDIR, op_fsyncdir, (fuse_req_t req, fuse_ino_t i, int d, FsgFileInfo *fi), (req, i, d, fi))
FSG_COUNTED_OP (FSG_FS_OP_STATFS, op_statfs, (fuse_req_t req, fuse_ino_t i), (req, i))
FSG_COUNTED_OP (FSG_FS_OP_GETXATTR, op_getxattr, (fuse_req_t req, fuse_ino_t i, const char *n, size_t s), (req, i, n, s))
FSG_COUNTED_OP (FSG_FS_OP_LISTXATTR, op_listxattr, (fuse_req_t req, fuse_ino_t i, size_t s), (req, i, s))
FSG_COUNTED_OP (FSG_FS_OP_SETXATTR, op_setxattr,
       (fuse_req_t req, fuse_ino_t i, const char *n, const char *v, size_t s, int f), (req, i, n, v, s, f))
FSG_COUNTED_OP (FSG_FS_OP_REMOVEXATTR, op_removexattr, (fuse_req_t req, fuse_ino_t i, const char *n), (req, i, n))
FSG_COUNTED_OP (FSG_FS_OP_ACCESS, op_access, (fuse_req_t req, fuse_ino_t i, int m), (req, i, m))
FSG_COUNTED_OP (FSG_FS_OP_FALLOCATE, op_fallocate, (fuse_req_t req, fuse_ino_t i, int m, off_t o, off_t l, FsgFileInfo *fi),
       (req, i, m, o, l, fi))
FSG_COUNTED_OP (FSG_FS_OP_LSEEK, op_lseek, (fuse_req_t req, fuse_ino_t i, off_t o, int w, FsgFileInfo *fi), (req, i, o, w, fi))
FSG_COUNTED_OP (FSG_FS_OP_COPY_FILE_RANGE, op_copy_file_range,
       (fuse_req_t req, fuse_ino_t ii, off_t oi, FsgFileInfo *fi_in, fuse_ino_t io, off_t oo, FsgFileInfo *fi_out,
        size_t l, int f),
       (req, ii, oi, fi_in, io, oo, fi_out, l, f))
FSG_COUNTED_OP (FSG_FS_OP_LOCK, op_getlk, (fuse_req_t req, fuse_ino_t i, FsgFileInfo *fi, struct flock *l), (req, i, fi, l))
FSG_COUNTED_OP (FSG_FS_OP_LOCK, op_setlk, (fuse_req_t req, fuse_ino_t i, FsgFileInfo *fi, struct flock *l, int s),
       (req, i, fi, l, s))
FSG_COUNTED_OP (FSG_FS_OP_LOCK, op_flock, (fuse_req_t req, fuse_ino_t i, FsgFileInfo *fi, int o), (req, i, fi, o))

const struct fuse_lowlevel_ops fsg_fs_ops = {
  .init = op_init,
  .destroy = op_destroy,
  .lookup = counted_op_lookup,
  .forget = counted_op_forget,
  .forget_multi = counted_op_forget_multi,
  .getattr = counted_op_getattr,
  .setattr = counted_op_setattr,
  .readlink = counted_op_readlink,
  .mknod = counted_op_mknod,
  .mkdir = counted_op_mkdir,
  .unlink = counted_op_unlink,
  .rmdir = counted_op_rmdir,
  .symlink = counted_op_symlink,
  .rename = counted_op_rename,
  .link = counted_op_link,
  .open = counted_op_open,
  .create = counted_op_create,
  .read = counted_op_read,
  .write_buf = counted_op_write_buf,
  .flush = counted_op_flush,
  .release = counted_op_release,
  .fsync = counted_op_fsync,
  .opendir = counted_op_opendir,
  .readdir = counted_op_readdir,
  .readdirplus = counted_op_readdirplus,
  .releasedir = counted_op_releasedir,
  .fsyncdir = counted_op_fsyncdir,
  .statfs = counted_op_statfs,
  .getxattr = counted_op_getxattr,
  .listxattr = counted_op_listxattr,
  .setxattr = counted_op_setxattr,
  .removexattr = counted_op_removexattr,
  .access = counted_op_access,
  .fallocate = counted_op_fallocate,
  .lseek = counted_op_lseek,
  .copy_file_range = counted_op_copy_file_range,
  .getlk = counted_op_getlk,
  .setlk = counted_op_setlk,
  .flock = counted_op_flock,
};
