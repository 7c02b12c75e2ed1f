/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The mount steps for what fsgate-run adds to the view besides /proc and
 * /dev (policy/runview.c decides, `fsgate explain` reports the same):
 *
 *  - a private tmpfs at /tmp, always (unless the policy shows the host's
 *    /tmp itself). Roots below /tmp (a project in /tmp/x, the working
 *    directory) stay at their paths: I binds each one out of the view to
 *    the scratch tmpfs, mounts the tmpfs on /tmp, recreates the path and
 *    binds it back. The binds are of the FUSE view, so the policy still
 *    decides everything inside them.
 *  - /run and /sys, when the policy denies them, as empty read-only
 *    directories (a tmpfs), and with the network allowed the resolver file
 *    that /etc/resolv.conf points to when it is a known resolver file under
 *    the denied /run (/run/systemd/resolve on Ubuntu), as a read-only bind
 *    of the host file, opened by I with openat2(RESOLVE_NO_SYMLINKS) and
 *    bound from /proc/self/fd/N (never a path a link could redirect).
 */
#include "config.h"

#include "runner/run.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef struct
{
  GArray *steps;
  GPtrArray *strings;
  const char *view_dir;
} Plan;

static const char *
keep (Plan *p, char *s)
{
  g_ptr_array_add (p->strings, s);
  return s;
}

/* @target: absolute in the sandbox's mount namespace before pivot_root. */
static void
step (Plan *p, FsgStepKind kind, FsgStage stage, const char *source, const char *target,
      const char *fstype, unsigned long flags, const char *data)
{
  FsgMountStep s = { kind, stage, source, target, fstype, flags, data };

  g_array_append_val (p->steps, s);
}

static const char *
in_view (Plan *p, const char *path)
{
  return keep (p, g_build_filename (p->view_dir, path, NULL));
}

/* mkdir each component of @path (absolute, below @from) inside the view. */
static void
make_dirs (Plan *p, const char *from, const char *path, FsgStage stage)
{
  g_auto (GStrv) comps = g_strsplit (path + strlen (from), "/", -1);
  g_autoptr(GString) cur = g_string_new (from);

  for (guint i = 0; comps[i]; i++)
    {
      if (comps[i][0] == '\0')
        continue;
      g_string_append_c (cur, '/');
      g_string_append (cur, comps[i]);
      step (p, FSG_STEP_MKDIR, stage, NULL, in_view (p, cur->str), NULL, 0, NULL);
    }
}

void
fsg_plan_private_tmp (GArray *steps, GPtrArray *strings, const char *view_dir,
                      const char *scratch, const FsgPolicy *policy)
{
  Plan p = { steps, strings, view_dir };
  g_auto (GStrv) roots = fsg_policy_run_tmp_roots (policy);
  g_autoptr(GPtrArray) kept = g_ptr_array_new ();

  for (guint i = 0; roots[i]; i++)
    {
      const char *held = keep (&p, g_strdup_printf ("%s/fsgate-tmp-root-%u", scratch, i));
      struct stat st;
      gboolean dir = stat (roots[i], &st) < 0 || S_ISDIR (st.st_mode);

      step (&p, dir ? FSG_STEP_MKDIR : FSG_STEP_TOUCH, FSG_STAGE_MOUNT_TMP, NULL, held, NULL, 0,
            NULL);
      step (&p, FSG_STEP_MOUNT, FSG_STAGE_MOUNT_TMP, in_view (&p, roots[i]), held, NULL,
            MS_BIND | MS_REC, NULL);
      g_ptr_array_add (kept, (gpointer) held);
    }
  step (&p, FSG_STEP_MOUNT, FSG_STAGE_MOUNT_TMP, "fsgate-tmp", in_view (&p, "/tmp"), "tmpfs",
        MS_NOSUID | MS_NODEV, "mode=1777");
  for (guint i = 0; roots[i]; i++)
    {
      g_autofree char *parent = g_path_get_dirname (roots[i]);
      struct stat st;
      gboolean dir = stat (roots[i], &st) < 0 || S_ISDIR (st.st_mode);

      make_dirs (&p, "/tmp", parent, FSG_STAGE_MOUNT_TMP);
      step (&p, dir ? FSG_STEP_MKDIR : FSG_STEP_TOUCH, FSG_STAGE_MOUNT_TMP, NULL,
            in_view (&p, roots[i]), NULL, 0, NULL);
      step (&p, FSG_STEP_MOUNT, FSG_STAGE_MOUNT_TMP, kept->pdata[i], in_view (&p, roots[i]), NULL,
            MS_BIND | MS_REC, NULL);
    }
}

/* Can the resolver file @path be opened without following any symlink on
 * the way, and is it a regular file? I checks again when it binds it
 * (FSG_STEP_BIND_FILE), through the fd, never the path. */
static gboolean
resolver_openable (const char *path)
{
  struct open_how how = { 0 };
  struct stat st;
  gboolean ok;
  int fd;

  how.flags = O_PATH | O_CLOEXEC | O_NOFOLLOW;
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  fd = (int) syscall (SYS_openat2, AT_FDCWD, path, &how, sizeof how);
  if (fd < 0)
    return FALSE;
  ok = fstat (fd, &st) == 0 && S_ISREG (st.st_mode);
  close (fd);
  return ok;
}

/* Host runtime directories the policy denies (/run, /sys): fsgate-run shows
 * them as empty read-only directories, so that probes every program makes
 * (glibc's nscd socket, systemd's userdb, /sys/fs/selinux) find nothing
 * instead of counting as denials; nothing of the host is in them. With the
 * network allowed, the resolver file /etc/resolv.conf points to goes in
 * there (or in a directory of its own on the way), read-only. */
void
fsg_plan_runtime_dirs (GArray *steps, GPtrArray *strings, const char *view_dir,
                       const FsgPolicy *policy, GPtrArray *out_stubs)
{
  static const char *const dirs[] = { "/run", "/sys" };
  Plan p = { steps, strings, view_dir };
  g_autofree char *target = NULL, *top = NULL, *real = NULL;
  const unsigned long flags = MS_NOSUID | MS_NODEV | MS_NOEXEC;
  gboolean resolver = fsg_policy_run_resolver (policy, "/etc/resolv.conf", &target, &top, &real) &&
                      resolver_openable (real);
  gboolean resolver_placed = FALSE;

  for (guint i = 0; i < G_N_ELEMENTS (dirs); i++)
    {
      if (fsg_policy_walk (policy, dirs[i]).access != FSG_ACCESS_DENY)
        continue;
      g_ptr_array_add (out_stubs, g_strdup (dirs[i]));
      step (&p, FSG_STEP_MOUNT, FSG_STAGE_MOUNT_TMP, "fsgate-empty", in_view (&p, dirs[i]),
            "tmpfs", flags, "mode=0755");
      if (resolver && g_str_has_prefix (target, dirs[i]) && target[strlen (dirs[i])] == '/')
        {
          g_autofree char *parent = g_path_get_dirname (target);

          make_dirs (&p, dirs[i], parent, FSG_STAGE_MOUNT_TMP);
          step (&p, FSG_STEP_TOUCH, FSG_STAGE_MOUNT_TMP, NULL, in_view (&p, target), NULL, 0, NULL);
          step (&p, FSG_STEP_BIND_FILE, FSG_STAGE_MOUNT_TMP, keep (&p, g_strdup (real)),
                in_view (&p, target), NULL, 0, NULL);
          step (&p, FSG_STEP_READONLY, FSG_STAGE_MOUNT_TMP, NULL, in_view (&p, target), NULL,
                flags, NULL);
          resolver_placed = TRUE;
        }
      step (&p, FSG_STEP_MOUNT, FSG_STAGE_MOUNT_TMP, NULL, in_view (&p, dirs[i]), NULL,
            MS_REMOUNT | MS_RDONLY | flags, NULL);
    }
  if (resolver && !resolver_placed)
    {
      g_autofree char *parent = g_path_get_dirname (target);

      g_ptr_array_add (out_stubs, g_strdup (top));
      step (&p, FSG_STEP_MOUNT, FSG_STAGE_MOUNT_TMP, "fsgate-resolver", in_view (&p, top), "tmpfs",
            flags, "mode=0755");
      make_dirs (&p, top, parent, FSG_STAGE_MOUNT_TMP);
      step (&p, FSG_STEP_TOUCH, FSG_STAGE_MOUNT_TMP, NULL, in_view (&p, target), NULL, 0, NULL);
      step (&p, FSG_STEP_BIND_FILE, FSG_STAGE_MOUNT_TMP, keep (&p, g_strdup (real)),
            in_view (&p, target), NULL, 0, NULL);
      step (&p, FSG_STEP_READONLY, FSG_STAGE_MOUNT_TMP, NULL, in_view (&p, target), NULL, flags,
            NULL);
      step (&p, FSG_STEP_MOUNT, FSG_STAGE_MOUNT_TMP, NULL, in_view (&p, top), NULL,
            MS_REMOUNT | MS_RDONLY | flags, NULL);
    }
}
