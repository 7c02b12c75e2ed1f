/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Kernel FUSE passthrough (Linux 6.9+) driven from libfuse 3.14, which has
 * no API for it: the session's /dev/fuse traffic goes through
 * fuse_session_custom_io(), where the INIT reply gets FUSE_PASSTHROUGH and
 * max_stack_depth, and OPEN/CREATE replies of files given a backing file
 * get FOPEN_PASSTHROUGH and the backing id. Reads, writes and mmap of such
 * files then go from the kernel to the host file without the daemon.
 *
 * Only for a daemon with CAP_SYS_ADMIN in the initial user namespace (the
 * kernel's condition for FUSE_DEV_IOC_BACKING_OPEN), a kernel that offers
 * FUSE_PASSTHROUGH in INIT, and never together with the writeback cache.
 * The policy is decided at open/create before a backing file is
 * registered; files with set-id bits keep the normal path, because backing
 * writes run with the daemon's credentials (CAP_FSETID) and would not clear
 * them.
 *
 * The same custom io patches the INIT reply of every daemon, root or not,
 * with what libfuse 3.14 asks for by default (in conn->want) but never puts
 * into the reply:
 *  - FUSE_PARALLEL_DIROPS, when the kernel offers it; else the kernel
 *    serializes every lookup and readdir in a directory (one mutex per
 *    directory inode). The daemon's lookups are safe in parallel (the
 *    inode table is taken under fs->lock, and the VFS never runs two
 *    lookups of one name at once).
 *  - FUSE_HANDLE_KILLPRIV, only when the host checks every call as the
 *    caller and the writeback cache is off (fsgate-run as root, with
 *    kernel passthrough): chown, truncate and writes of set-id files then
 *    run as the caller (ops.c), so the host clears set-id bits exactly as
 *    natively, and the kernel no longer sends a GETATTR before each chown
 *    to compute the bits itself (tar and cp -a as root: one round trip a
 *    file). With the writeback cache the kernel writes later as the
 *    daemon, so it keeps clearing them itself.
 *
 * Which reply to patch: the worker thread that read a request is the one
 * that handles and answers it (libfuse's loop, no splice with custom io),
 * so pt_read() notes the request's unique id in a thread-local, op_open /
 * op_create file the backing id under that unique in fs->pt_pending, and
 * pt_writev() patches the reply whose header carries that unique.
 */
#include "config.h"

#include "fsgate/fs-private.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

/* From <linux/fuse.h> 7.40+ (Debian 12's copy is 7.38). */
#define FSG_FUSE_INIT 26
#define FSG_FUSE_INIT_EXT (1u << 30)
#define FSG_FUSE_PARALLEL_DIROPS (1u << 18)
#define FSG_FUSE_HANDLE_KILLPRIV (1u << 19)
#define FSG_FUSE_WRITEBACK_CACHE (1u << 16)
#define FSG_FUSE_PASSTHROUGH_FLAGS2 (1u << 5) /* FUSE_PASSTHROUGH = 1ULL << 37 */
#define FSG_FOPEN_DIRECT_IO (1u << 0)
#define FSG_FOPEN_KEEP_CACHE (1u << 1)
#define FSG_FOPEN_PASSTHROUGH (1u << 7)

struct fsg_backing_map
{
  int32_t fd;
  uint32_t flags;
  uint64_t padding;
};
#define FSG_DEV_IOC_BACKING_OPEN _IOW (229, 1, struct fsg_backing_map)
#define FSG_DEV_IOC_BACKING_CLOSE _IOW (229, 2, uint32_t)

/* Offsets in the wire structs (fuse_kernel.h 7.40). */
#define IN_HDR_LEN 40      /* fuse_in_header */
#define OUT_HDR_LEN 16     /* fuse_out_header */
#define INIT_IN_FLAGS 12   /* fuse_init_in.flags */
#define INIT_IN_FLAGS2 16  /* fuse_init_in.flags2 */
#define INIT_OUT_FLAGS 12  /* fuse_init_out.flags */
#define INIT_OUT_FLAGS2 32 /* fuse_init_out.flags2 */
#define INIT_OUT_STACK 36  /* fuse_init_out.max_stack_depth (unused[0] in 7.38) */
#define OPEN_OUT_LEN 16    /* fuse_open_out: fh, open_flags, backing_id */
#define ENTRY_OUT_LEN 128  /* fuse_entry_out, before fuse_open_out in CREATE */

static __thread guint64 tls_unique;

static guint32
get32 (const void *p, size_t off)
{
  guint32 v;

  memcpy (&v, (const char *) p + off, sizeof v);
  return v;
}

static void
put32 (void *p, size_t off, guint32 v)
{
  memcpy ((char *) p + off, &v, sizeof v);
}

gboolean
fsg_fs_passthrough_supported (char **out_reason)
{
  g_autofree char *status = NULL;
  char ns[64];
  ssize_t n;
  const char *line;
  guint64 cap_eff = 0;
  struct fsg_backing_map map = { -1, 0, 0 };
  fsg_autofd int fd = -1;
  const char *reason = NULL;

  if (!g_file_get_contents ("/proc/self/status", &status, NULL, NULL) ||
      (line = strstr (status, "\nCapEff:")) == NULL)
    reason = "cannot read the daemon's capabilities";
  else if ((cap_eff = g_ascii_strtoull (line + 8, NULL, 16), !(cap_eff & (1ull << 21))))
    reason = "the daemon lacks CAP_SYS_ADMIN";
  else if ((n = readlink ("/proc/self/ns/user", ns, sizeof ns - 1)) < 0 ||
           (ns[n] = '\0', strcmp (ns, "user:[4026531837]") != 0))
    reason = "the daemon is not in the initial user namespace";
  else if ((fd = open ("/dev/fuse", O_RDWR | O_CLOEXEC)) < 0)
    reason = "cannot open /dev/fuse";
  else if (ioctl (fd, FSG_DEV_IOC_BACKING_OPEN, &map) == 0 || errno != EPERM)
    /* On an fd without a connection a kernel with passthrough says EPERM;
     * without it, ENOTTY or EOPNOTSUPP. */
    reason = "the kernel has no FUSE passthrough (CONFIG_FUSE_PASSTHROUGH, Linux 6.9+)";
  if (out_reason != NULL)
    *out_reason = reason ? g_strdup (reason) : NULL;
  return reason == NULL;
}

static ssize_t
pt_read (int fd, void *buf, size_t len, void *userdata)
{
  FsgFs *fs = userdata;
  ssize_t n = read (fd, buf, len);

  if (n >= IN_HDR_LEN)
    {
      guint64 unique;

      memcpy (&unique, (char *) buf + 8, sizeof unique);
      tls_unique = unique;
      if (get32 (buf, 4) == FSG_FUSE_INIT && n >= IN_HDR_LEN + INIT_IN_FLAGS2 + 4)
        {
          guint32 flags = get32 (buf, IN_HDR_LEN + INIT_IN_FLAGS);
          guint32 flags2 = get32 (buf, IN_HDR_LEN + INIT_IN_FLAGS2);

          fs->pt_init_unique = unique;
          fs->init_flags = flags;
          fs->pt_offered = (flags & FSG_FUSE_INIT_EXT) && (flags2 & FSG_FUSE_PASSTHROUGH_FLAGS2);
        }
    }
  return n;
}

static ssize_t
pt_writev (int fd, struct iovec *iov, int count, void *userdata)
{
  FsgFs *fs = userdata;
  guint64 unique;
  gpointer v = NULL;

  if (count < 2 || iov[0].iov_len < OUT_HDR_LEN || (gint32) get32 (iov[0].iov_base, 4) != 0)
    goto out;
  memcpy (&unique, (char *) iov[0].iov_base + 8, sizeof unique);

  if (unique == fs->pt_init_unique && fs->pt_init_unique != 0 && iov[1].iov_len > INIT_OUT_FLAGS + 4)
    {
      void *init = iov[1].iov_base;

      fs->pt_init_unique = 0;
      if (fs->init_flags & FSG_FUSE_PARALLEL_DIROPS)
        {
          put32 (init, INIT_OUT_FLAGS, get32 (init, INIT_OUT_FLAGS) | FSG_FUSE_PARALLEL_DIROPS);
          fs->parallel_dirops = TRUE;
        }
      if ((fs->init_flags & FSG_FUSE_HANDLE_KILLPRIV) && fs->host_checks && !fs->writeback)
        {
          put32 (init, INIT_OUT_FLAGS, get32 (init, INIT_OUT_FLAGS) | FSG_FUSE_HANDLE_KILLPRIV);
          fs->handle_killpriv = TRUE;
        }
      if (fs->passthrough && iov[1].iov_len >= INIT_OUT_STACK + 4)
        {
          put32 (init, INIT_OUT_FLAGS,
                 (get32 (init, INIT_OUT_FLAGS) | FSG_FUSE_INIT_EXT) & ~FSG_FUSE_WRITEBACK_CACHE);
          put32 (init, INIT_OUT_FLAGS2, get32 (init, INIT_OUT_FLAGS2) | FSG_FUSE_PASSTHROUGH_FLAGS2);
          put32 (init, INIT_OUT_STACK, 1);
        }
      goto out;
    }

  if (fs->pt_pending == NULL)
    goto out; /* no passthrough: only INIT is patched */
  g_mutex_lock (&fs->pt_lock);
  if (g_hash_table_size (fs->pt_pending) > 0 &&
      g_hash_table_lookup_extended (fs->pt_pending, &unique, NULL, &v))
    g_hash_table_remove (fs->pt_pending, &unique);
  g_mutex_unlock (&fs->pt_lock);
  if (v != NULL)
    {
      size_t off = iov[1].iov_len == OPEN_OUT_LEN ? 0 : ENTRY_OUT_LEN;

      if (iov[1].iov_len == off + OPEN_OUT_LEN)
        {
          void *o = iov[1].iov_base;
          guint32 flags = get32 (o, off + 8);

          flags &= ~(FSG_FOPEN_DIRECT_IO | FSG_FOPEN_KEEP_CACHE);
          put32 (o, off + 8, flags | FSG_FOPEN_PASSTHROUGH);
          put32 (o, off + 12, (guint32) GPOINTER_TO_INT (v));
        }
    }
out:
  return writev (fd, iov, count);
}

gboolean
fsg_passthrough_install (FsgFs *fs)
{
  static const struct fuse_custom_io io = {
    .read = pt_read,
    .writev = pt_writev,
  };

  if (fs->pt_want)
    fs->pt_pending = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  fs->pt_fuse_fd = fuse_session_fd (fs->se);
  if (fuse_session_custom_io (fs->se, &io, fs->pt_fuse_fd) != 0)
    {
      fs->pt_want = FALSE;
      return FALSE;
    }
  return TRUE;
}

int
fsg_passthrough_open (FsgFs *fs, FsgInode *inode, int fd)
{
  struct fsg_backing_map map = { fd, 0, 0 };
  struct stat st;
  guint64 *key;
  int id;

  if (!fs->passthrough)
    return -EOPNOTSUPP;
  /* Backing writes run with the daemon's CAP_FSETID: keep set-id files on
   * the path where the daemon writes them as the caller and the host
   * clears those bits (setid_write_enter, ops.c). */
  if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode) || (st.st_mode & (S_ISUID | S_ISGID)))
    return -EOPNOTSUPP;
  g_mutex_lock (&fs->pt_lock);
  if (inode->backing_refs == 0)
    {
      /* One backing file per inode: the kernel refuses a second one while
       * a file of the inode is open with the first. */
      id = ioctl (fs->pt_fuse_fd, FSG_DEV_IOC_BACKING_OPEN, &map);
      if (id <= 0)
        {
          int r = id < 0 ? -errno : -EIO;
          g_mutex_unlock (&fs->pt_lock);
          return r;
        }
      inode->backing_id = id;
    }
  inode->backing_refs++;
  id = inode->backing_id;
  key = g_new (guint64, 1);
  *key = tls_unique;
  g_hash_table_insert (fs->pt_pending, key, GINT_TO_POINTER (id));
  g_hash_table_add (fs->pt_fds, GINT_TO_POINTER (fd + 1));
  fs->pt_opens++;
  g_mutex_unlock (&fs->pt_lock);
  return id;
}

void
fsg_passthrough_release (FsgFs *fs, FsgInode *inode, int fd)
{
  guint64 unique = tls_unique;

  if (!fs->passthrough)
    return;
  g_mutex_lock (&fs->pt_lock);
  if (g_hash_table_remove (fs->pt_fds, GINT_TO_POINTER (fd + 1)))
    {
      g_hash_table_remove (fs->pt_pending, &unique); /* reply not sent */
      g_assert (inode->backing_refs > 0);
      if (--inode->backing_refs == 0)
        {
          guint32 id = (guint32) inode->backing_id;

          (void) ioctl (fs->pt_fuse_fd, FSG_DEV_IOC_BACKING_CLOSE, &id);
          inode->backing_id = 0;
        }
    }
  g_mutex_unlock (&fs->pt_lock);
}
