/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Hard links out of literally denied directories. A literal deny-read
 * directory denies every file below it by path; a regular file there with
 * more than one link has another name, which a path policy cannot see. At
 * the start of a run each such directory is scanned, the most specific
 * first (without following symlinks, without leaving its mount, at
 * most fsg_policy_denied_scan_max() entries each, /dev, /run, /proc and
 * /sys not at all), and the identities of the multiply-linked files are
 * kept: the FUSE view denies them wherever another name shows up
 * (fsgate/guards.c), and the hybrid view binds nothing on a file system
 * that holds one (uniform.c). The scan runs once per policy, on first use,
 * so that both see the same result.
 */
#include "config.h"

#include "policy/policy-private.h"
#include "common/fsg-util.h"

#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

guint64
fsg_policy_denied_scan_max (void)
{
  const char *v = g_getenv ("FSGATE_DENIED_SCAN_MAX");
  guint64 n;

  if (v == NULL || v[0] == '\0')
    return FSG_DENIED_SCAN_MAX;
  if (strcmp (v, "off") == 0)
    return 0;
  if (!g_ascii_string_to_unsigned (v, 10, 1, G_MAXUINT64, &n, NULL))
    return FSG_DENIED_SCAN_MAX;
  return n;
}

typedef struct
{
  FsgDeniedLinks *out;
  /* The denied directory's mount: the scan does not leave it (a hard link
   * cannot cross a file system, and another mount may stall). By mount id,
   * not st_dev: below one mount, a btrfs subvolume and the files of an
   * overlayfs (those of its layers) report other devices. st_dev where the
   * kernel has no STATX_MNT_ID (before 5.8). */
  guint64 mnt_id; /* 0: unknown, compare st_dev */
  dev_t dev;
  guint64 entries;
  guint64 max_entries;
  guint found;
  gboolean truncated;
} ScanCtx;

static void
scan_dir (ScanCtx *ctx, int dirfd, guint depth)
{
  DIR *dir;
  struct dirent *de;

  if (depth > 64 || fsg_pseudo_fs_name (dirfd) != NULL)
    {
      close (dirfd);
      return;
    }
  dir = fdopendir (dirfd);
  if (dir == NULL)
    {
      close (dirfd);
      return;
    }
  while ((de = readdir (dir)) != NULL)
    {
      struct statx stx;
      gboolean other_mount;

      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      if (++ctx->entries > ctx->max_entries)
        {
          ctx->truncated = TRUE;
          break;
        }
      if (statx (dirfd, de->d_name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT,
                 STATX_TYPE | STATX_INO | STATX_NLINK | STATX_MNT_ID, &stx) < 0)
        continue;
      if (ctx->mnt_id != 0 && (stx.stx_mask & STATX_MNT_ID))
        other_mount = stx.stx_mnt_id != ctx->mnt_id;
      else
        other_mount = makedev (stx.stx_dev_major, stx.stx_dev_minor) != ctx->dev;
      if (other_mount)
        continue; /* another mount (a gvfs FUSE, an NFS automount): a hard link
                   * cannot reach it from here, and it may stall */
      if (S_ISREG (stx.stx_mode) && stx.stx_nlink > 1)
        {
          FsgFileId id = { makedev (stx.stx_dev_major, stx.stx_dev_minor), stx.stx_ino };

          g_array_append_val (ctx->out->ids, id);
          ctx->found++;
        }
      else if (S_ISDIR (stx.stx_mode))
        {
          int fd = openat (dirfd, de->d_name,
                           O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);

          if (fd >= 0)
            scan_dir (ctx, fd, depth + 1);
          if (ctx->truncated)
            break;
        }
    }
  closedir (dir);
}

/* Virtual trees whose files are not the user's secrets: /dev, /run, /proc,
 * /sys and below. (The default profile denies parts of /dev and /run; their
 * entries are devices, sockets and runtime state, and scanning them cost
 * most of the start-up time.) */
static gboolean
is_virtual_tree (const char *path)
{
  static const char *const trees[] = { "/dev", "/run", "/proc", "/sys" };

  for (guint i = 0; i < G_N_ELEMENTS (trees); i++)
    {
      gsize n = strlen (trees[i]);
      if (strncmp (path, trees[i], n) == 0 && (path[n] == '\0' || path[n] == '/'))
        return TRUE;
    }
  return FALSE;
}

static gint
more_specific_first (gconstpointer a, gconstpointer b)
{
  const char *pa = *(const char *const *) a, *pb = *(const char *const *) b;
  guint da = 0, db = 0;

  for (const char *p = pa; *p; p++)
    da += *p == '/';
  for (const char *p = pb; *p; p++)
    db += *p == '/';
  return da != db ? (da > db ? -1 : 1) : strcmp (pa, pb);
}

static FsgDeniedLinks *
scan (const FsgPolicy *policy)
{
  FsgDeniedLinks *out = g_new0 (FsgDeniedLinks, 1);
  g_autoptr(GPtrArray) order = g_ptr_array_new ();
  const char *const *denied = fsg_policy_literal_deny_read (policy);

  out->ids = g_array_new (FALSE, FALSE, sizeof (FsgFileId));
  out->dirs = g_array_new (FALSE, TRUE, sizeof (FsgLinkedDir));
  out->max = fsg_policy_denied_scan_max ();
  if (out->max == 0)
    return out; /* FSGATE_DENIED_SCAN_MAX=off: the documented opt-out */
  for (guint i = 0; denied != NULL && denied[i] != NULL; i++)
    if (!is_virtual_tree (denied[i]))
      g_ptr_array_add (order, (gpointer) denied[i]);
  /* the most specific (deepest: ~/.ssh, a project's secrets/) first */
  g_ptr_array_sort (order, more_specific_first);
  for (guint i = 0; i < order->len; i++)
    {
      const char *path = order->pdata[i];
      /* each directory has its own budget: a big one cannot starve another */
      ScanCtx ctx = { out, 0, 0, 0, out->max, 0, FALSE };
      int fd = open (path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
      struct statx stx;
      struct stat st;

      if (fd < 0)
        continue; /* missing, or not a directory: nothing below it */
      if (fstat (fd, &st) < 0)
        {
          close (fd);
          continue;
        }
      ctx.dev = st.st_dev;
      if (statx (fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx) == 0 && (stx.stx_mask & STATX_MNT_ID))
        ctx.mnt_id = stx.stx_mnt_id;
      scan_dir (&ctx, fd, 0);
      if (ctx.truncated)
        {
          out->truncated_at = g_strdup (path);
          break;
        }
      if (ctx.found > 0)
        {
          FsgLinkedDir d = { g_strdup (path), st.st_dev, ctx.found };

          g_array_append_val (out->dirs, d);
        }
    }
  return out;
}

const FsgDeniedLinks *
fsg_policy_denied_links (const FsgPolicy *policy)
{
  /* The policy is immutable to its users; this cache is filled once, on
   * first use, under its own lock. */
  FsgPolicy *p = (FsgPolicy *) policy;

  g_mutex_lock (&p->denied_lock);
  if (p->denied_links == NULL)
    p->denied_links = scan (policy);
  g_mutex_unlock (&p->denied_lock);
  return p->denied_links;
}

void
fsg_denied_links_free (FsgDeniedLinks *links)
{
  if (links == NULL)
    return;
  g_array_unref (links->ids);
  for (guint i = 0; i < links->dirs->len; i++)
    g_free (g_array_index (links->dirs, FsgLinkedDir, i).path);
  g_array_unref (links->dirs);
  g_free (links->truncated_at);
  g_free (links);
}
