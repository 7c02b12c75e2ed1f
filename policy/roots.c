/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Planted symlinks in root paths (issue 14 item 1). Roots are canonicalised
 * with realpath(), so a symlink that an earlier run's command left in a
 * directory it could write (`rm -r build; ln -s / build`) would silently
 * widen the next run's root (`--rw ./build`). Before a root is resolved,
 * every symlink met on the way, in the path as written and in the targets,
 * is checked: one that sits in a directory the caller can write is refused.
 *
 * "The caller can write" is decided from the directory's owner and mode
 * bits, not from capabilities: for a user, a directory it owns with u+w, one
 * of its groups with g+w, or anyone's with o+w (with the sticky bit, only
 * when the symlink is the caller's own). For root, whose capabilities would
 * make every directory writable, the same bits count only under $HOME, the
 * working directory and world-writable directories, so the system's own
 * symlinks (/bin -> usr/bin, /lib64, /var/run -> /run) keep working.
 */
#include "config.h"

#include "policy/policy-private.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static gboolean
in_group (gid_t gid)
{
  gid_t groups[NGROUPS_MAX];
  int n;

  if (gid == getgid () || gid == getegid ())
    return TRUE;
  n = getgroups (G_N_ELEMENTS (groups), groups);
  for (int i = 0; i < n; i++)
    if (groups[i] == gid)
      return TRUE;
  return FALSE;
}

static gboolean
is_under (const char *path, const char *dir)
{
  gsize n;

  if (dir == NULL || dir[0] != '/')
    return FALSE;
  if (strcmp (dir, "/") == 0)
    return TRUE;
  n = strlen (dir);
  return strncmp (path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* Could the caller have created (or replaced) the symlink @link_st in the
 * directory @dir? */
static gboolean
caller_could_plant (const char *dir, const struct stat *link_st, const char *cwd,
                    const char *home)
{
  struct stat st;
  uid_t uid = getuid ();
  gboolean writable;

  if (stat (dir, &st) < 0)
    return FALSE;
  if ((st.st_mode & S_IWOTH) != 0)
    return (st.st_mode & S_ISVTX) == 0 || link_st->st_uid == uid;
  writable = (st.st_uid == uid && (st.st_mode & S_IWUSR) != 0)
             || ((st.st_mode & S_IWGRP) != 0 && in_group (st.st_gid));
  if (!writable)
    return FALSE;
  if (uid != 0)
    return TRUE;
  return is_under (dir, home) || is_under (dir, cwd);
}

gboolean
fsg_root_find_planted_symlink (const char *path, const char *cwd, const char *home,
                               char **out_link, char **out_target)
{
  g_autoptr(GPtrArray) todo = g_ptr_array_new_with_free_func (g_free); /* components, reversed */
  g_autoptr(GString) cur = g_string_new ("");
  g_auto (GStrv) comps = fsg_path_split (path);
  guint links = 0;
  guint n = g_strv_length (comps);

  for (guint i = n; i > 0; i--)
    g_ptr_array_add (todo, g_strdup (comps[i - 1]));
  while (todo->len > 0)
    {
      g_autofree char *comp = g_ptr_array_steal_index (todo, todo->len - 1);
      gsize save = cur->len;
      struct stat st;
      char buf[PATH_MAX];
      ssize_t len;

      if (strcmp (comp, ".") == 0 || comp[0] == '\0')
        continue;
      if (strcmp (comp, "..") == 0)
        {
          char *slash = strrchr (cur->str, '/');
          if (slash != NULL)
            g_string_truncate (cur, slash - cur->str);
          continue;
        }
      g_string_append_c (cur, '/');
      g_string_append (cur, comp);
      if (lstat (cur->str, &st) < 0)
        return FALSE; /* missing: realpath() reports it */
      if (!S_ISLNK (st.st_mode))
        continue;
      len = readlink (cur->str, buf, sizeof buf - 1);
      if (len <= 0 || ++links > 40)
        return FALSE; /* realpath() reports ELOOP and the like */
      buf[len] = '\0';
      {
        g_autofree char *dir = g_strndup (cur->str, save);

        if (caller_could_plant (save > 0 ? dir : "/", &st, cwd, home))
          {
            *out_link = g_strdup (cur->str);
            *out_target = g_strdup (buf);
            return TRUE;
          }
      }
      g_string_truncate (cur, save);
      if (buf[0] == '/')
        g_string_truncate (cur, 0);
      {
        g_auto (GStrv) tcomps = g_strsplit (buf, "/", -1);
        guint tn = g_strv_length (tcomps);

        for (guint i = tn; i > 0; i--)
          g_ptr_array_add (todo, g_strdup (tcomps[i - 1]));
      }
    }
  return FALSE;
}
