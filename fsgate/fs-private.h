/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Internals of the FUSE policy view, shared by fs.c (lifecycle), inode.c
 * (inode table, lookup, view paths, audit) and ops.c (fuse_lowlevel_ops).
 *
 * Lock order: fs->lock is the only lock touching inodes; it protects the
 * inode tables, nlookup, nchildren, parent/name and the (mutable, because a
 * rename re-derives it) policy state of every inode. Never hold it across a
 * host syscall that can block for long, and never while replying (a reply
 * may trigger a FORGET of the same inode).
 */
#pragma once

#include <fuse_lowlevel.h>
#include <glib.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "common/fsg-util.h"
#include "fsgate/audit.h"
#include "fsgate/fs.h"
#include "policy/policy.h"

G_BEGIN_DECLS

typedef enum
{
  FSG_INODE_HOST,  /* backed by a host file through an O_PATH fd */
  FSG_INODE_SYNTH, /* synthetic directory: an ancestor of roots (or of stubs) */
  FSG_INODE_STUB,  /* synthetic empty read-only directory (runner mount point,
                    * or our own mount point seen from inside the view) */
  FSG_INODE_ALIAS, /* synthetic symlink standing for a root given through a symlink */
} FsgInodeKind;

typedef struct _FsgInode FsgInode;
struct _FsgInode
{
  /* Immutable after creation. */
  FsgInodeKind kind;
  int fd;             /* O_PATH|O_NOFOLLOW|O_CLOEXEC, -1 unless FSG_INODE_HOST */
  dev_t dev;          /* host identity; 0 for synthetic inodes */
  ino_t ino;
  mode_t type;        /* S_IFMT bits */
  guint64 generation;
  guint64 fake_ino;   /* st_ino shown for synthetic inodes */
  gboolean stub_anc;  /* the view path is "/" or an ancestor of a stub dir */

  /* Protected by fs->lock. */
  FsgPathState state;
  guint64 nlookup;    /* kernel references (LOOKUP minus FORGET) */
  guint nchildren;    /* inodes whose parent pointer is this inode */
  FsgInode *parent;   /* NULL for the view root */
  char *name;         /* last component, NULL for the view root */
  char *synth_key;    /* key in fs->synth, or NULL */
  gboolean hashed;    /* present in fs->inodes */
};

struct _FsgFs
{
  const FsgPolicy *policy;
  FsgAuditLevel audit_level;
  int audit_fd;
  FsgAuditFunc audit_func;
  gpointer audit_data;
  gboolean debug;
  gboolean user_xattrs;
  gboolean hide_denied;
  gboolean writeback;       /* some root is writable: ask for the writeback cache */
  gboolean is_root;         /* daemon runs with euid 0: create as the caller */
  gint64 start_time;

  /* Immutable after fsg_fs_new(). */
  GHashTable *root_fds;     /* canonical root path -> fd + 1, opened before mounting */
  GHashTable *deny_ids;     /* FsgDevIno of literal deny-read paths */
  GHashTable *stubs;        /* stub view paths */
  GHashTable *stub_parents; /* view path of a proper ancestor of a stub -> GPtrArray of names */
  gid_t *saved_groups;
  int n_saved_groups;
  dev_t own_dev;            /* st_dev of our own mount as seen by the daemon, if known */
  gboolean have_own_dev;

  /* Reader side: every operation that changes which object a name refers
   * to (create, mkdir, mknod, symlink, link, unlink, rmdir); writer side:
   * rename, whose type check must see the same object it renames. */
  GRWLock ns_lock;

  GMutex lock;
  /* Protected by lock. */
  GHashTable *inodes;       /* FsgInode -> FsgInode keyed by (dev, ino, state) */
  GHashTable *synth;        /* "parent-nodeid/name" -> FsgInode for synthetic inodes */
  guint64 next_generation;
  guint64 next_fake_ino;
  guint64 n_inodes;
  guint64 n_fds;

  FsgInode *root;

  /* Counters, updated atomically. */
  guint64 requests;
  guint64 denials;

  /* Session. */
  struct fuse_session *se;
  char *mountpoint;         /* set when fsg_fs_mount() mounted it */
  gboolean session_ready;
  GThread *loop_thread;
  pthread_t loop_pthread;
  int done_fd;              /* eventfd, readable once the loop has ended */
  GMutex done_lock;
  GCond done_cond;
  gboolean started;
  gboolean finished;
  gboolean stopped;
};

typedef struct
{
  dev_t dev;
  ino_t ino;
} FsgDevIno;

/* inode.c */
void fsg_inode_tables_init (FsgFs *fs);
void fsg_inode_tables_clear (FsgFs *fs);
FsgInode *fsg_inode_new_root (FsgFs *fs, int fd, const struct stat *st, FsgPathState state);

static inline FsgInode *
fsg_fs_inode (FsgFs *fs, fuse_ino_t ino)
{
  if (ino == FUSE_ROOT_ID)
    return fs->root;
  return (FsgInode *) (uintptr_t) ino;
}

static inline fuse_ino_t
fsg_inode_nodeid (FsgFs *fs, FsgInode *inode)
{
  if (inode == fs->root)
    return FUSE_ROOT_ID;
  return (fuse_ino_t) (uintptr_t) inode;
}

FsgPathState fsg_inode_get_state (FsgFs *fs, FsgInode *inode);
/* The view path of @inode, with "/@name" appended when @name is not NULL.
 * (transfer full) */
char *fsg_inode_path (FsgFs *fs, FsgInode *inode, const char *name);

/* Look @name up in @parent; on success the child's nlookup is incremented and
 * @e filled. Returns 0 or -errno; denials are audited (op "lookup" unless
 * @op is given). @out_state receives the child's policy state when known. */
int fsg_inode_lookup (FsgFs *fs,
                      fuse_req_t req,
                      FsgInode *parent,
                      const char *name,
                      struct fuse_entry_param *e,
                      const char *op);
void fsg_inode_forget (FsgFs *fs, FsgInode *inode, guint64 nlookup);

/* Attributes of an inode as shown in the view. Returns 0 or -errno. */
int fsg_inode_stat (FsgFs *fs, FsgInode *inode, struct stat *st);
/* Map a host (dev, ino) to the st_ino shown in the view. */
ino_t fsg_fs_map_ino (FsgFs *fs, dev_t dev, ino_t ino);
gboolean fsg_fs_is_denied_id (FsgFs *fs, dev_t dev, ino_t ino);
/* Timeouts for an entry with this state. */
double fsg_state_timeout (const FsgPathState *state);

/* After a successful host rename: move the inode that was at
 * (@parent, @name) to (@newparent, @newname) with @new_state. */
void fsg_inode_renamed (FsgFs *fs,
                        FsgInode *inode,
                        FsgInode *newparent,
                        const char *newname,
                        FsgPathState new_state);

/* Names of stub dirs directly below @inode (NULL when none). (transfer none) */
GPtrArray *fsg_inode_stub_children (FsgFs *fs, FsgInode *inode);

/* Audit: record an event for the entry @name of @parent (or @parent itself
 * when @name is NULL). @err is positive. */
void fsg_fs_audit (FsgFs *fs,
                   fuse_req_t req,
                   const char *op,
                   FsgInode *parent,
                   const char *name,
                   FsgInode *parent2,
                   const char *name2,
                   const FsgPathState *state,
                   gboolean denied,
                   int err,
                   const char *mode);

/* Refuse with audit: returns -@err. */
int fsg_fs_deny (FsgFs *fs,
                 fuse_req_t req,
                 const char *op,
                 FsgInode *parent,
                 const char *name,
                 const FsgPathState *state,
                 int err);

/* ops.c */
extern const struct fuse_lowlevel_ops fsg_fs_ops;

G_END_DECLS
