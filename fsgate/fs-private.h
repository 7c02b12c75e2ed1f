/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Internals of the FUSE policy view, shared by fs.c (lifecycle), inode.c
 * (the inode table: lookup, names, forget, rename, coherence of siblings),
 * fdcache.c (the O_PATH fd of each host inode: pin, LRU, reopen), audit.c
 * (audit records) and ops.c (fuse_lowlevel_ops).
 *
 * Identity: a view inode stands for one host object (dev, ino) under one
 * decision. Non-directories are keyed by (dev, ino, type, access): all the
 * names of a hard-linked file with the same access are one view inode, so
 * the kernel has one page cache and one set of attributes for them. Only
 * access decides what may be done with a file through its inode; a name's
 * structural flags (root, protected) are derived from its parent whenever
 * the name itself is created, removed or renamed, and the deciding rule is
 * explanation only (the audit records of such an inode name its primary
 * name's path and rule, which belong together). Directories also key the
 * parts their children are derived from (flags, the live rule set, stub
 * ancestry). A host file seen read-only under one name and writable under
 * another is two view inodes ("siblings", at most one of them writable);
 * inode.c keeps their caches coherent (fsg_inode_changed()).
 *
 * Rule for new code: a per-inode decision other than `access` that
 * changes what may be done with a non-directory must either go into the
 * inode key (same_key() and inode_hash() in inode.c; it then splits hard
 * links into more siblings, and the sibling code, which assumes two
 * accesses, must learn about it) or be derived from the parent and name at
 * the operation that needs it, as the structural flags are. Anything else
 * would be decided by whichever name was looked up first.
 *
 * Names: every host inode knows the (parent, name) pairs it was looked up
 * by (FsgName, primary first; the primary gives its view path), indexed in
 * fs->names so that renames and unlinks made through the view move or drop
 * exactly the entries they concern.
 *
 * Lock order: fs->ns_lock (reader or writer), then fs->lock. fs->lock is a
 * leaf: it protects the inode tables, nlookup, nchildren, the names, the
 * sibling rings, the (mutable, because a rename re-derives it) policy
 * state of every inode,
 * and the O_PATH fd cache (fd, pins, the LRU list, n_fds). Never hold it
 * across a host syscall that can block for long (only close() of an
 * O_PATH fd happens under it), never while replying (a reply may trigger a
 * FORGET of the same inode), and never while notifying the kernel.
 *
 * fd budget: at most fs->fd_budget O_PATH fds are open. Host inodes beyond
 * it keep their identity (dev, ino, type, btime), a file handle when the
 * daemon may use them, and their names; they are reopened on demand by
 * handle (open_by_handle_at), else by name (openat (parent_fd, name,
 * O_PATH|O_NOFOLLOW)), and checked against that identity (ESTALE when no
 * way finds the same object). Code that uses an inode's fd pins it first
 * (fsg_inode_pin(), or an fsg_autopin FsgPin): a pinned fd is never closed
 * by the LRU, and a pinned inode is never freed, so unpinning after the
 * reply is fine even if the reply triggered a FORGET. An open file and an
 * open directory keep their inode pinned until RELEASE / RELEASEDIR.
 */
#pragma once

#include <fcntl.h>
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

typedef enum /* stored in a guint8 */
{
  FSG_INODE_HOST,  /* backed by a host file through an O_PATH fd */
  FSG_INODE_SYNTH, /* synthetic directory: an ancestor of roots (or of stubs) */
  FSG_INODE_STUB,  /* synthetic empty read-only directory (runner mount point,
                    * or our own mount point seen from inside the view) */
  FSG_INODE_ALIAS, /* synthetic symlink standing for a root given through a symlink */
} FsgInodeKind;

typedef struct _FsgInode FsgInode;
typedef struct _FsgLocks FsgLocks; /* locks.c */
typedef struct _FsgName FsgName;

/* One (parent, name) under which the view knows an inode. */
struct _FsgName
{
  FsgName *next;      /* the inode's next name */
  FsgInode *inode;
  FsgInode *parent;   /* holds one nchildren reference */
  char *name;
  gboolean indexed;   /* in fs->names (a name replaced by another object
                       * through the view, or unlinked, is not) */
};

/* Most names kept per inode (a file with more hard links seen through the
 * view keeps its first ones). */
#define FSG_INODE_MAX_NAMES 8

struct _FsgInode
{
  /* Immutable after creation. */
  guint8 kind;        /* FsgInodeKind */
  guint8 fd_permanent; /* never evicted (the view root, roots below a
                        * synthetic parent: they cannot be reopened) */
  guint8 stub_anc;    /* the view path is "/" or an ancestor of a stub dir */
  /* Protected by fs->lock (shared and retired are also read without it). */
  guint8 hashed;      /* present in fs->inodes */
  guint8 in_lru;
  guint8 retired;     /* a sibling changed the host file: unhashed, so the
                       * next lookup makes a fresh view inode; opens of
                       * this one bypass the page cache */
  guint8 shared;      /* siblings exist */
  guint8 shrunk;      /* the host file may have shrunk through this inode
                       * since its siblings were last retired (atomic) */
  /* Immutable after creation (fields ordered to pack: ~170 bytes). */
  guint16 type;       /* S_IFMT bits */
  int mount_id;       /* of @handle: a key of fs->mount_fds */
  dev_t dev;          /* host identity; 0 for synthetic inodes */
  ino_t ino;
  guint64 btime;      /* host birth time in ns (0 if unknown): catches inode
                       * number reuse when an evicted fd is reopened */
  guint64 generation;
  guint64 fake_ino;   /* st_ino shown for synthetic inodes */
  struct file_handle *handle; /* for reopening, NULL when none */

  /* Protected by fs->lock. */
  FsgPathState state; /* the decision for the primary name */
  guint64 nlookup;    /* kernel references (LOOKUP minus FORGET) */
  guint nchildren;    /* names whose parent is this inode */
  guint n_names;
  FsgName *names;     /* primary first; NULL only for the view root */
  char *synth_key;    /* key in fs->synth, or NULL */
  FsgInode *sib_next; /* ring of the view inodes of one host non-directory */
  FsgInode *sib_prev; /* (NULL when alone) */
  /* The fd cache, also protected by fs->lock. */
  int fd;             /* O_PATH|O_NOFOLLOW|O_CLOEXEC, -1 if synthetic or evicted */
  guint pins;         /* users of fd right now (+1 per open file handle) */
  FsgInode *lru_prev; /* towards the most recently used */
  FsgInode *lru_next;
  /* Kernel passthrough, protected by fs->pt_lock. */
  int backing_id;     /* FUSE_DEV_IOC_BACKING_OPEN id, 0 for none */
  guint backing_refs; /* passthrough opens using it */
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
  gboolean git_protect;     /* [filesystem] git = protect (git.c) */
  gboolean writeback;       /* some root is writable: ask for the writeback cache */
  gboolean is_root;         /* daemon runs with euid 0: create as the caller */
  /* Who checks permissions (ops.c, "Acting as the caller"). host_checks:
   * no default_permissions, every host call that needs a permission runs
   * with the caller's credentials. single_caller: the only caller has the
   * daemon's own uid, gid and groups and no capabilities (fsgate-run). */
  gboolean host_checks;
  gboolean single_caller;
  uid_t own_uid;
  gid_t own_gid;
  GArray *uid_ranges;       /* FsgIdRange mapped in the mount's user namespace, */
  GArray *gid_ranges;       /* NULL: all (fsg_fs_mount) */
  gint64 start_time;

  /* Immutable after fsg_fs_new(). */
  GHashTable *root_fds;     /* canonical root path -> fd + 1, opened before mounting */
  GHashTable *mount_fds;    /* mount id -> fd + 1 of a root directory on it
                             * (O_RDONLY: open_by_handle_at() refuses O_PATH
                             * fds); empty when the daemon may not or cannot
                             * use file handles */
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
  GHashTable *inodes;       /* FsgInode -> FsgInode keyed by identity and decision */
  GHashTable *names;        /* FsgName -> FsgName keyed by (parent, name) */
  GHashTable *synth;        /* "parent-nodeid/name" -> FsgInode for synthetic inodes */
  guint64 next_generation;
  guint64 next_fake_ino;
  guint64 n_inodes;
  guint64 n_fds;            /* O_PATH fds open, permanent ones included */
  guint64 fd_budget;        /* evict beyond this many O_PATH fds */
  FsgInode *lru_head;       /* most recently used host inode with an fd */
  FsgInode *lru_tail;
  guint64 n_reopens;
  guint64 n_handle_reopens; /* of n_reopens, by file handle */
  guint64 n_evictions;

  FsgInode *root;

  /* Git protection (git.c), protected by git_lock (a leaf). */
  GMutex git_lock;
  GPtrArray *git_created;   /* view paths of git dirs the command made */
  GMutex git_op_lock;       /* held across the check and the change of a
                             * git-relevant operation; taken before ns_lock */

  /* Counters, updated atomically. */
  guint64 denials;
  guint64 op_requests[FSG_FS_N_OPS];
  guint64 op_ns[FSG_FS_N_OPS];
  gboolean op_timing;       /* FsgFsOptions.op_timing: fill op_ns */

  /* Kernel passthrough (passthrough.c). pt_want: allowed and supported,
   * decided before mounting; pt_offered: the kernel's INIT offered it;
   * passthrough: negotiated (set in op_init, read-only afterwards). */
  gboolean pt_want;
  gboolean pt_offered;
  gboolean passthrough;
  guint64 pt_init_unique;   /* the INIT request, whose reply the custom io patches */
  guint32 init_flags;       /* the flags the kernel offered in INIT */
  gboolean parallel_dirops; /* FUSE_PARALLEL_DIROPS given to the kernel (passthrough.c) */
  gboolean handle_killpriv; /* FUSE_HANDLE_KILLPRIV given: the host clears set-id bits */
  int pt_fuse_fd;
  GMutex pt_lock;           /* a leaf: never taken together with fs->lock */
  GHashTable *pt_pending;   /* request unique -> backing id, until the reply */
  GHashTable *pt_fds;       /* host fds (+1) of passthrough opens */
  guint64 pt_opens;

  FsgLocks *locks;          /* locks.c; created in op_init, freed in op_destroy */

  /* Session. */
  struct fuse_session *se;
  char *mountpoint;         /* set when fsg_fs_mount() mounted it */
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

typedef struct
{
  guint32 first;
  guint32 count;
} FsgIdRange;

/* ops.c: adjust the owner and group of the host inode at @fd (in a place
 * with @state) as shown to the kernel; see FsgFsOptions.uid_map. @parent is
 * its parent if known, else @inode's is used (either may be NULL). */
void fsg_fs_shown_ids (FsgFs *fs, int fd, FsgInode *inode, FsgInode *parent,
                       const FsgPathState *state, struct stat *st);

/* inode.c: the inode table */
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

/* The primary name's parent and last component (NULL for the view root);
 * with fs->lock held. */
static inline FsgInode *
fsg_inode_parent_locked (const FsgInode *inode)
{
  return inode->names ? inode->names->parent : NULL;
}

static inline const char *
fsg_inode_name_locked (const FsgInode *inode)
{
  return inode->names ? inode->names->name : NULL;
}

/* Free @inode and whatever parents it kept alive if nothing references it
 * any more (no nlookup, children or pins); with fs->lock held. */
void fsg_inode_maybe_free_locked (FsgFs *fs, FsgInode *inode);

FsgPathState fsg_inode_get_state (FsgFs *fs, FsgInode *inode);
/* The view path of @inode, with "/@name" appended when @name is not NULL.
 * (transfer full) */
char *fsg_inode_path (FsgFs *fs, FsgInode *inode, const char *name);

/* Look @name up in @parent; on success the child's nlookup is incremented and
 * @e filled. Returns 0 or -errno; denials are audited (op "lookup" unless
 * @op is given). On -ENOENT, @e->entry_timeout > 0 asks for a negative
 * entry to be cached. */
int fsg_inode_lookup (FsgFs *fs,
                      fuse_req_t req,
                      FsgInode *parent,
                      const char *name,
                      struct fuse_entry_param *e,
                      const char *op);
/* The same; a sibling whose attributes the kernel must drop because of this
 * lookup is returned in @out_notify (0: none) instead of being notified:
 * the caller sends fuse_lowlevel_notify_inval_inode (id, -1, 0) after its
 * reply. */
int fsg_inode_lookup_notify_after (FsgFs *fs,
                                   fuse_req_t req,
                                   FsgInode *parent,
                                   const char *name,
                                   struct fuse_entry_param *e,
                                   const char *op,
                                   fuse_ino_t *out_notify);
void fsg_inode_forget (FsgFs *fs, FsgInode *inode, guint64 nlookup);

/* Attributes of an inode as shown in the view. Returns 0 or -errno. */
int fsg_inode_stat (FsgFs *fs, FsgInode *inode, struct stat *st);
/* Attribute timeout for @inode with state @s: 0 when the host file can
 * change through another view inode. */
double fsg_inode_attr_timeout (FsgInode *inode, const FsgPathState *s);
/* Map a host (dev, ino) to the st_ino shown in the view. */
ino_t fsg_fs_map_ino (FsgFs *fs, dev_t dev, ino_t ino);
gboolean fsg_fs_is_denied_id (FsgFs *fs, dev_t dev, ino_t ino);
/* Timeouts for an entry with this state. */
double fsg_state_timeout (const FsgPathState *state);

/* After a successful host renameat2 (@flags) of (@parent, @name), the
 * object @ost, to (@newparent, @newname), where @nst was (NULL: nothing):
 * move the names the view knows; the moved inodes take the states of their
 * new places (@new_state; @old_state for the other side of an exchange). */
void fsg_inode_renamed (FsgFs *fs,
                        FsgInode *parent,
                        const char *name,
                        const struct stat *ost,
                        const FsgPathState *old_state,
                        FsgInode *newparent,
                        const char *newname,
                        const struct stat *nst,
                        const FsgPathState *new_state,
                        unsigned int flags);
/* After a successful unlink or rmdir of (@parent, @name). */
void fsg_inode_unlinked (FsgFs *fs, FsgInode *parent, const char *name);

/* The host file of @inode was changed through it (data, size, mode,
 * times). If other view inodes stand for the same file, tell the kernel to
 * drop their cached pages and attributes and raise their size to the
 * host's; when the size may have gone down (@may_shrink: truncate,
 * O_TRUNC, fallocate collapse), also retire them (out of the table: the
 * next lookup makes a fresh view inode) and drop their names. Call without
 * locks, with @inode alive (before the reply, or after it through
 * fsg_inode_hold_shared()): the kernel may need other requests answered
 * before it can drop a cache. Cheap when there are no siblings. */
void fsg_inode_changed (FsgFs *fs, FsgInode *inode, gboolean may_shrink);
/* Before replying to a request that changed @inode's host file: pin it (no
 * fd needed) if it has siblings, so that fsg_inode_changed_unhold() may
 * use it after the reply, when the kernel may already have released and
 * forgotten it. @may_shrink: the change may make the file shorter (also
 * seen by a FLUSH that overtakes the unhold, so that close() returns with
 * the siblings retired). Returns the held inode or NULL (nothing to do). */
FsgInode *fsg_inode_hold_shared (FsgFs *fs, FsgInode *inode, gboolean may_shrink);
/* fsg_inode_changed (@held, @may_shrink given to the hold), then drop the
 * hold; NULL: nothing. */
void fsg_inode_changed_unhold (FsgFs *fs, FsgInode *held);
/* Whether opens of @inode must bypass the page cache: the read-only
 * sibling of a file with a writable name (its kernel size and pages can
 * fall behind the host file), or a retired one. */
gboolean fsg_inode_reads_around_cache (FsgFs *fs, FsgInode *inode);

/* Names of stub dirs directly below @inode (NULL when none). (transfer none) */
GPtrArray *fsg_inode_stub_children (FsgFs *fs, FsgInode *inode);

/* fdcache.c: the O_PATH fd of each host inode */

/* Pin the O_PATH fd of a host inode, reopening it if it was evicted.
 * Returns the fd (valid until fsg_inode_unpin()) or -errno: -EBADF for a
 * synthetic inode, -ESTALE when neither its file handle nor any of its
 * names leads to the object this inode stands for any more. On failure
 * nothing stays pinned. */
int fsg_inode_pin (FsgFs *fs, FsgInode *inode);
void fsg_inode_unpin (FsgFs *fs, FsgInode *inode);

typedef struct
{
  FsgFs *fs;
  FsgInode *inode;
} FsgPin;

static inline void
fsg_pin_clear (FsgPin *pin)
{
  if (pin->inode != NULL)
    fsg_inode_unpin (pin->fs, pin->inode);
  pin->inode = NULL;
}
/* Scoped pin: `fsg_autopin FsgPin pin = { 0 }; fd = fsg_pin (&pin, fs, inode);` */
#define fsg_autopin __attribute__ ((cleanup (fsg_pin_clear)))

static inline int
fsg_pin (FsgPin *pin, FsgFs *fs, FsgInode *inode)
{
  int fd;

  fsg_pin_clear (pin);
  fd = fsg_inode_pin (fs, inode);
  if (fd >= 0)
    {
      pin->fs = fs;
      pin->inode = inode;
    }
  return fd;
}

/* Close cold O_PATH fds down to half the budget (after EMFILE/ENFILE). */
void fsg_fs_relieve_fd_pressure (FsgFs *fs);

/* openat (@dirfd, @name, O_PATH|O_NOFOLLOW|O_CLOEXEC), relieving fd
 * pressure and retrying once on EMFILE/ENFILE. */
int fsg_fdcache_open_path (FsgFs *fs, int dirfd, const char *name);
/* A file handle for reopening @fd (NULL when file handles are not used
 * for its mount); @out_mount_id receives its mount id. (transfer full) */
struct file_handle *fsg_fdcache_get_handle (FsgFs *fs, int fd, int *out_mount_id);
/* Decide whether the daemon can reopen files by handle: fills
 * fs->mount_fds from the roots opened in fs->root_fds. */
void fsg_fdcache_probe_handles (FsgFs *fs);
/* Birth time of @stx in ns, 0 when unknown. */
guint64 fsg_statx_btime (const struct statx *stx);
/* Is @stx the object @inode stands for? */
gboolean fsg_inode_identity_matches (const FsgInode *inode, const struct statx *stx);
/* Give a fresh fd to @inode (whose fd is -1) and account for it; with
 * fs->lock held. */
void fsg_fdcache_set_fd_locked (FsgFs *fs, FsgInode *inode, int fd);
/* Mark @inode's fd most recently used; with fs->lock held. */
void fsg_fdcache_touch_locked (FsgFs *fs, FsgInode *inode);
/* Drop @inode's fd and LRU place before freeing it; with fs->lock held. */
void fsg_fdcache_forget_locked (FsgFs *fs, FsgInode *inode);

/* audit.c: audit emission */

/* Record an event for the entry @name of @parent (or @parent itself when
 * @name is NULL). @err is positive. */
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

/* Same, with the rule text given (git protection, git.c). */
void fsg_fs_audit_rule (FsgFs *fs,
                        fuse_req_t req,
                        const char *op,
                        FsgInode *parent,
                        const char *name,
                        FsgInode *parent2,
                        const char *name2,
                        FsgAccess access,
                        const char *rule,
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

/* git.c: git protection (docs/security.md). Each check returns 0 or a
 * negative errno, audited with a "git-protect: ..." rule. */
void fsg_fs_git_init (FsgFs *fs);
void fsg_fs_git_clear (FsgFs *fs);
/* A denied entry of @parent with this state is hidden (ENOENT, not
 * listed): hide-denied, or a name pattern inside a git working tree. */
gboolean fsg_fs_hides (FsgFs *fs, FsgInode *parent, const FsgPathState *state);
/* Held from before the checks below to after the change they allow, so
 * that no other change of the same kind slips in between (making a
 * directory a git dir while a config is renamed into it). Taken only for
 * the names git protection looks at; always before ns_lock. Use
 * `fsg_autogit FsgGitLock l = fsg_git_lock (...)`. */
typedef struct
{
  FsgFs *fs;
  gboolean held;
} FsgGitLock;
FsgGitLock fsg_git_lock (FsgFs *fs, FsgInode *parent, const char *name,
                         FsgInode *parent2, const char *name2, gboolean always);
/* For an open for writing of @inode: held from the check to the open when
 * the name is one a git dir's checks look at (config, config.worktree,
 * commondir, gitdir), so that the directory cannot become a git dir in
 * between (the config would be installed again, but after this open). */
FsgGitLock fsg_git_lock_open (FsgFs *fs, FsgInode *inode, gboolean write);
void fsg_git_unlock (FsgGitLock *lock);
#define fsg_autogit __attribute__ ((cleanup (fsg_git_unlock)))
/* Before creating @name in @parent (create, mknod, mkdir, symlink, link):
 * @type is the S_IFMT of the new entry; @mode may lose its execute bits. */
int fsg_git_check_create (FsgFs *fs, fuse_req_t req, const char *op, FsgInode *parent,
                          const char *name, mode_t type, mode_t *mode);
/* Before writing to (open for writing, truncating) the file @inode. */
int fsg_git_check_write (FsgFs *fs, fuse_req_t req, const char *op, FsgInode *inode);
/* Before a chmod of @inode to @mode. */
int fsg_git_check_chmod (FsgFs *fs, fuse_req_t req, FsgInode *inode, mode_t mode);
/* Before link() of @inode to a new name. */
int fsg_git_check_link_source (FsgFs *fs, fuse_req_t req, FsgInode *inode);
/* Rename (under ns_lock, writer side). Returns 0 to let the caller rename,
 * 1 when it did the rename itself (a checked copy of a config file was
 * put in place), or a negative errno. */
int fsg_git_rename (FsgFs *fs, fuse_req_t req, FsgInode *p, int pfd, const char *name,
                    FsgInode *np, int npfd, const char *newname, unsigned int flags);

/* passthrough.c */
/* Route the session's /dev/fuse traffic through passthrough.c (always: the
 * INIT reply also gets what libfuse 3.14 cannot ask for). FALSE when
 * libfuse refuses; the daemon then runs without those. */
gboolean fsg_passthrough_install (FsgFs *fs);
/* Give the file @fd of @inode, about to be answered to an OPEN or CREATE,
 * a backing file: the reply is patched to open it in passthrough mode.
 * Returns the backing id or -errno (then the normal path is used). */
int fsg_passthrough_open (FsgFs *fs, FsgInode *inode, int fd);
/* The file @fd is released (or its open reply failed). */
void fsg_passthrough_release (FsgFs *fs, FsgInode *inode, int fd);

/* guards.c (issue 14): see there. */
/* 0, or -EACCES (audited as @op) when @st is a regular file with more than
 * one link: writing it in place could change a name outside the roots. */
int fsg_fs_check_linked_write (FsgFs *fs, fuse_req_t req, const char *op, FsgInode *inode,
                               const FsgPathState *state, const struct stat *st);
/* Add every multiply-linked regular file below the literal deny-read
 * directories (fsg_policy_denied_links(), the policy's scan) to
 * fs->deny_ids. FALSE when one directory holds more entries than the budget
 * (*out_truncated_at: that directory; fsg_policy_denied_scan_max()). */
gboolean fsg_fs_scan_denied_links (FsgFs *fs, char **out_truncated_at);

/* casefold.c: why the host directory @fd resolves names case-insensitively
 * ("vfat", "casefold", ...), or NULL when it does not. Such directories are
 * not served. */
const char *fsg_fs_dir_folds_case (int fd);

/* locks.c: flock and fcntl record locks forwarded to the host. */
FsgLocks *fsg_locks_new (void);
void fsg_locks_free (FsgLocks *locks);
void fsg_locks_getlk (FsgFs *fs, fuse_req_t req, FsgInode *inode, struct fuse_file_info *fi,
                      struct flock *lock);
void fsg_locks_setlk (FsgFs *fs, fuse_req_t req, FsgInode *inode, struct fuse_file_info *fi,
                      struct flock *lock, int sleep);
void fsg_locks_flock (FsgFs *fs, fuse_req_t req, FsgInode *inode, struct fuse_file_info *fi, int op);
void fsg_locks_flush (FsgFs *fs, FsgInode *inode, guint64 owner);
void fsg_locks_release (FsgFs *fs, FsgInode *inode, int fh);
/* Does some lock owner hold (or did it take) record locks on @inode
 * through an open that is still open? Opens of it then get a FLUSH. */
gboolean fsg_locks_inode_has_locks (FsgFs *fs, FsgInode *inode);

/* ops.c */
extern const struct fuse_lowlevel_ops fsg_fs_ops;

G_END_DECLS
