/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * FsgFs: the FUSE policy view. A passthrough filesystem (libfuse3 low-level
 * API) that shows every root of an FsgPolicy at its real absolute path below
 * a synthetic root, enforces the policy on every operation and reports
 * denials through the audit sink.
 *
 * Two ways to serve it:
 *  - fsg_fs_mount(): mount at a directory (fsgate mount);
 *  - fsg_fs_take_fuse_fd(): serve a /dev/fuse fd whose mount(2) was made by
 *    another process (fsgate-run mounts inside the sandbox's namespaces and
 *    passes the fd back), built from fsg_fs_mount_data().
 * Then fsg_fs_start() serves on background threads until fsg_fs_stop(), an
 * unmount, or fsg_fs_wait() returns.
 */
#pragma once

#include <glib.h>
#include <sys/types.h>

#include "fsgate/audit.h"
#include "policy/policy.h"

G_BEGIN_DECLS

typedef struct _FsgFs FsgFs;

typedef struct
{
  FsgAuditLevel audit_level;
  int audit_fd;               /* JSON Lines sink, -1 for none; not closed by FsgFs */
  FsgAuditFunc audit_func;    /* in-process sink, may be NULL */
  gpointer audit_data;
  /* View paths shown as empty read-only directories whatever the policy says
   * (the runner mounts /proc, /dev, /tmp over them). NULL-terminated, may be NULL. */
  const char *const *stub_dirs;
  gboolean debug;             /* log every request with g_debug */
  /* Support user.* extended attributes. Off by default: a filesystem that
   * answers getxattr costs one GETXATTR(security.capability) round trip per
   * write(2); with this off, the first getxattr gets ENOSYS and the kernel
   * stops asking. security.*, trusted.* and system.* are never writable. */
  gboolean user_xattrs;
  /* Most O_PATH fds to keep open for known inodes (0: the RLIMIT_NOFILE
   * hard limit minus a quarter kept for open files; the environment
   * variable FSGATE_FD_BUDGET overrides both). Beyond it, cold inodes
   * close their fd and reopen it on demand: by file handle when the daemon
   * has CAP_DAC_READ_SEARCH in the initial user namespace and the root's
   * filesystem gives handles (FSGATE_FILE_HANDLES=0 in the environment
   * turns that off), else by name. */
  guint fd_budget;
  /* Never use kernel FUSE passthrough (otherwise used when the daemon has
   * CAP_SYS_ADMIN in the initial user namespace and the kernel offers it;
   * FSGATE_PASSTHROUGH=0 in the environment also turns it off). */
  gboolean no_passthrough;
  /* Measure the daemon's CPU time per operation (FsgFsStats.op_ns). Costs
   * two clock system calls per request (~1 us here); counts are kept
   * either way. */
  gboolean op_timing;
  /* For fsg_fs_mount(): let the host decide permissions instead of the
   * kernel. Without it the mount has default_permissions (the kernel
   * checks every access against the attributes the view shows, as a
   * mount that serves several users must). With it, a root daemon runs
   * every host call that needs a permission with the caller's fsuid,
   * fsgid and supplementary groups (uid 0 keeps root's capabilities), so
   * the host's own checks decide; the kernel then sends FUSE_ACCESS, and
   * read-only places answer access(W_OK) with EROFS. A mount served with
   * fsg_fs_take_fuse_fd() always works this way. */
  gboolean host_checks;
  /* For fsg_fs_take_fuse_fd(): the id maps of the user namespace that
   * owns the mount, as written to /proc/PID/uid_map and gid_map (lines
   * "inside outside count", identity maps), or NULL when only the daemon's
   * own uid and gid are mapped. The kernel refuses any write to an inode
   * whose owner or group is unmapped there, whatever the permissions say;
   * such an inode the caller may write on the host is shown with the
   * caller's own uid (gid) in place of the unmapped one. */
  const char *uid_map;
  const char *gid_map;
  /* An inspection mount (`fsgate mount`), where the policy may ask for
   * host semantics for device nodes and set-id bits ([filesystem]
   * devices = allow, setid = keep). Without it (fsgate-run), such a policy
   * is refused by fsg_fs_new(): the command is not trusted with them. */
  gboolean inspection;
} FsgFsOptions;

/* @policy is borrowed and must outlive @fs. (transfer full) */
FsgFs *fsg_fs_new (const FsgPolicy *policy, const FsgFsOptions *options, GError **error);
void fsg_fs_free (FsgFs *fs);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (FsgFs, fsg_fs_free)

/* Git directories the command created through the view (paths as seen in
 * the view, in order), for fsgate-run's report. (transfer full) */
char **fsg_fs_git_dirs_created (FsgFs *fs);

/* Mount at @mountpoint (an empty directory) from this process. */
gboolean fsg_fs_mount (FsgFs *fs, const char *mountpoint, GError **error);

/* The data string for mount(2) of type "fuse" with @fuse_fd opened from
 * /dev/fuse: "fd=N,rootmode=40000,user_id=U,group_id=G,allow_other".
 * No default_permissions: the daemon serving it (fsg_fs_take_fuse_fd())
 * checks permissions on the host with the caller's credentials.
 * (transfer full) */
char *fsg_fs_mount_data (int fuse_fd, uid_t uid, gid_t gid);

/* Serve @fuse_fd (ownership taken) for a mount made elsewhere from
 * fsg_fs_mount_data() in a user namespace with one caller identity
 * (fsgate-run): callers are taken to have the daemon's own uid, gid and
 * supplementary groups and no capabilities, and permissions are checked
 * by the host with exactly those credentials (see host_checks). */
gboolean fsg_fs_take_fuse_fd (FsgFs *fs, int fuse_fd, GError **error);

/* Start serving on worker threads. */
gboolean fsg_fs_start (FsgFs *fs, GError **error);
/* Block until the session ends (unmount, fsg_fs_stop(), or the connection aborts). */
void fsg_fs_wait (FsgFs *fs);
/* An fd that becomes readable once the session has ended (for poll()
 * together with a signalfd). Owned by @fs. */
int fsg_fs_get_wait_fd (FsgFs *fs);
/* Ask the session to end and wait for the workers; unmounts what
 * fsg_fs_mount() mounted. Safe to call more than once. */
void fsg_fs_stop (FsgFs *fs);

/* The FUSE operations the view serves, for per-operation statistics. */
typedef enum
{
  FSG_FS_OP_LOOKUP,
  FSG_FS_OP_FORGET,       /* FORGET and BATCH_FORGET (no reply) */
  FSG_FS_OP_GETATTR,
  FSG_FS_OP_SETATTR,
  FSG_FS_OP_READLINK,
  FSG_FS_OP_MKNOD,
  FSG_FS_OP_MKDIR,
  FSG_FS_OP_UNLINK,
  FSG_FS_OP_RMDIR,
  FSG_FS_OP_SYMLINK,
  FSG_FS_OP_RENAME,
  FSG_FS_OP_LINK,
  FSG_FS_OP_OPEN,
  FSG_FS_OP_CREATE,
  FSG_FS_OP_READ,
  FSG_FS_OP_WRITE,
  FSG_FS_OP_FLUSH,
  FSG_FS_OP_RELEASE,
  FSG_FS_OP_FSYNC,
  FSG_FS_OP_OPENDIR,
  FSG_FS_OP_READDIR,
  FSG_FS_OP_READDIRPLUS,
  FSG_FS_OP_RELEASEDIR,
  FSG_FS_OP_FSYNCDIR,
  FSG_FS_OP_STATFS,
  FSG_FS_OP_GETXATTR,
  FSG_FS_OP_LISTXATTR,
  FSG_FS_OP_SETXATTR,
  FSG_FS_OP_REMOVEXATTR,
  FSG_FS_OP_ACCESS,
  FSG_FS_OP_FALLOCATE,
  FSG_FS_OP_LSEEK,
  FSG_FS_OP_COPY_FILE_RANGE,
  FSG_FS_OP_LOCK,         /* GETLK, SETLK, SETLKW and flock */
  FSG_FS_N_OPS
} FsgFsOp;

/* Counters for reports and benchmarks. */
typedef struct
{
  guint64 requests;
  guint64 denials;
  guint64 inodes;      /* inodes currently known */
  guint64 open_fds;    /* O_PATH fds currently held */
  guint64 fd_budget;
  guint64 fd_reopens;  /* evicted fds opened again */
  guint64 fd_handle_reopens; /* of fd_reopens, by file handle */
  guint64 fd_evictions;
  /* Requests served per operation, and with FsgFsOptions.op_timing the
   * CPU time (ns) of the daemon threads that served them, replies included;
   * the round trip through the kernel and the wait for a CPU are not.
   * READ and WRITE stay 0 under kernel passthrough. */
  guint64 op_requests[FSG_FS_N_OPS];
  guint64 op_ns[FSG_FS_N_OPS];
  guint64 passthrough_opens; /* opens handed to the kernel's passthrough */
  gboolean passthrough;      /* negotiated with the kernel */
  gboolean parallel_dirops;  /* lookups and readdirs in one directory run in parallel */
  gboolean handle_killpriv;  /* the host clears set-id bits (no GETATTR before a chown) */
  gboolean file_handles;     /* evicted inodes of some root's mount are
                              * reopened by file handle (else by name):
                              * CAP_DAC_READ_SEARCH and a filesystem that
                              * gives handles, FSGATE_FILE_HANDLES not 0 */
} FsgFsStats;
void fsg_fs_get_stats (FsgFs *fs, FsgFsStats *out_stats);
/* A table of @stats' per-operation counters, busiest first, for people:
 * one line per operation that was requested. (transfer full) */
char *fsg_fs_stats_format (const FsgFsStats *stats);

/* Whether close() of @fd can never report an error on its host file
 * system: true for the local ones, which have no flush method (ext4, xfs,
 * btrfs, tmpfs, ramfs), and for overlayfs, which forwards it to its upper
 * layer, a local file system under every container runtime's overlay (one
 * on NFS or virtiofs would lose its close-time errors). Files written
 * through kernel passthrough there get no FLUSH request at close. */
gboolean fsg_fs_close_is_silent (int fd);

/* Would a daemon in this process get kernel FUSE passthrough? (CAP_SYS_ADMIN
 * in the initial user namespace, and the kernel's ioctl.) If not, @out_reason
 * says why. (transfer full) */
gboolean fsg_fs_passthrough_supported (char **out_reason);

G_END_DECLS
