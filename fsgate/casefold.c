/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Case-insensitive host directories are not served. The policy matches
 * names byte for byte (globs such as .env, *.pem, ~/.ssh), while vfat,
 * exfat, ntfs, hfsplus, SMB shares and casefolded ext4/f2fs/tmpfs
 * directories resolve ".ENV" to the file named ".env": a deny-read rule
 * would be bypassed by a change of case. Matching case-insensitively under
 * such directories would need Unicode case folding identical to the
 * filesystem's (per-filesystem tables and versions); refusing is simple
 * and fail-closed. A root on such a filesystem is refused at startup
 * (fsg_fs_new(), exit 125); such a directory below a root (a mount point,
 * or a directory with the casefold attribute, chattr +F) is refused at
 * lookup with EACCES and an audit record with op "case-insensitive".
 * Fail closed: a directory whose case handling cannot be found out (its
 * casefold attribute unreadable, on a kernel that can casefold) is treated
 * the same way; on kernels without casefold support (no "casefold" in
 * /sys/fs/{ext4,f2fs,tmpfs}/features) no per-directory check is made.
 */
#include "config.h"

#include "fsgate/fs-private.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <sys/ioctl.h>
#include <sys/statfs.h>
#include <unistd.h>

#ifndef FS_CASEFOLD_FL
# define FS_CASEFOLD_FL 0x40000000
#endif
#ifndef EXFAT_SUPER_MAGIC
# define EXFAT_SUPER_MAGIC 0x2011BAB0
#endif
#ifndef NTFS3_SUPER_MAGIC
# define NTFS3_SUPER_MAGIC 0x7366746e
#endif
#ifndef NTFS_SB_MAGIC
# define NTFS_SB_MAGIC 0x5346544e
#endif
#ifndef HFSPLUS_SUPER_MAGIC
# define HFSPLUS_SUPER_MAGIC 0x482b
#endif
#ifndef CIFS_SUPER_MAGIC
# define CIFS_SUPER_MAGIC 0xFF534D42
#endif
#ifndef SMB2_SUPER_MAGIC
# define SMB2_SUPER_MAGIC 0xFE534D42
#endif
#ifndef F2FS_SUPER_MAGIC
# define F2FS_SUPER_MAGIC 0xF2F52010
#endif

/* Can this kernel casefold directories of this filesystem type at all?
 * (CONFIG_UNICODE; the filesystem lists "casefold" among its features.)
 * Asked once per type: when it cannot, no directory needs an ioctl. */
static gboolean
kernel_can_casefold (unsigned long type)
{
  static int ext4 = -1, f2fs = -1, tmpfs = -1;
  int *known;
  const char *path;

  switch (type)
    {
    case EXT4_SUPER_MAGIC:
      known = &ext4, path = "/sys/fs/ext4/features/casefold";
      break;
    case F2FS_SUPER_MAGIC:
      known = &f2fs, path = "/sys/fs/f2fs/features/casefold";
      break;
    default:
      known = &tmpfs, path = "/sys/fs/tmpfs/features/casefold";
      break;
    }
  if (g_atomic_int_get (known) < 0)
    g_atomic_int_set (known, access (path, F_OK) == 0 || errno != ENOENT);
  return g_atomic_int_get (known) != 0;
}

const char *
fsg_fs_dir_folds_case (int fd)
{
  struct statfs sf;
  unsigned int flags = 0;
  int dfd, r;

  /* Fail closed: a directory that cannot be checked is not served. */
  if (fstatfs (fd, &sf) < 0)
    return "unknown (statfs failed)";
  switch ((unsigned long) sf.f_type)
    {
    case MSDOS_SUPER_MAGIC:
      return "vfat";
    case EXFAT_SUPER_MAGIC:
      return "exfat";
    case NTFS3_SUPER_MAGIC:
    case NTFS_SB_MAGIC:
      return "ntfs";
    case HFSPLUS_SUPER_MAGIC:
      return "hfsplus";
    case CIFS_SUPER_MAGIC:
    case SMB2_SUPER_MAGIC:
      return "smb";
    case EXT4_SUPER_MAGIC:
    case F2FS_SUPER_MAGIC:
    case TMPFS_MAGIC:
      if (!kernel_can_casefold ((unsigned long) sf.f_type))
        return NULL;
      break; /* per directory: the casefold attribute */
    default:
      return NULL;
    }
  /* FS_IOC_GETFLAGS needs an open directory, not an O_PATH fd. */
  dfd = openat (fd, ".", O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
  if (dfd < 0)
    return "unknown (cannot read the casefold attribute)";
  r = ioctl (dfd, FS_IOC_GETFLAGS, &flags);
  close (dfd);
  if (r < 0)
    return "unknown (cannot read the casefold attribute)";
  return (flags & FS_CASEFOLD_FL) ? "casefold" : NULL;
}
